//! Fault injection, per device.
//!
//! Faults come from the topology (node `labels` with the `netgw-lab.` prefix) or from the command line
//! (`--fault NODE:KEY=VALUE`); the keys are the same:
//!
//! | key | value | effect |
//! |---|---|---|
//! | `latency-ms` | ms | every reply is delayed |
//! | `reset-after-bytes` | n | the connection is reset once the device has sent n bytes on it |
//! | `reset-at` | `stage` \| `before-commit` \| `after-commit` \| `verify` \| `confirm` | the connection is reset at that step (once per lab run): instead of staging; instead of committing; after a commit was applied, before its reply; at the first read after a commit; instead of confirming |
//! | `reset-at-line` | n | IOS / NX-OS CLI: the connection is reset right after the device applied its n-th configuration-mode line (counted per device, from 1; once per lab run): a session lost in the middle of a commit, at a command boundary whatever was read before |
//! | `auth-fail` | `true` | every login is refused (SSH auth failure, HTTP 401) |
//! | `reject-commit` | message | every commit fails with this message (the candidate / session is kept) |
//! | `slow-commit-ms` | ms | commits take this long |
//! | `reject-stage` | message | every stage fails with this message (nothing is staged) |
//! | `slow-stage-ms` | ms | stages take this long |
//! | `reject-confirm` | message | the first confirm fails with this message (once per lab run: a transient refusal, so a later run can finish the change); the commit stays pending |
//! | `slow-confirm-ms` | ms | confirms take this long |
//! | `lldp-system-name` | text | every LLDP neighbour the device reports carries this system name, as whatever is plugged into its ports sets it |
//! | `snmp-no-answer` | `true` | the device's SNMP agent answers nothing (a manager sees a timeout) |
//! | `archive-path` | path | IOS: `archive` / `path PATH` is configured, so `configure terminal revert timer` works (`sim/archive.rs`) |
//! | `revert-minute-ms` | ms | IOS and Junos: how long one minute of a revert timer or of a `commit confirmed` timeout lasts (default 60000) |
//!
//! *Stage* and *confirm* are what the drivers send at those steps (docs/faults.md): Junos
//! `edit-config` / `load-configuration` and, with a confirmed commit pending, a plain commit; EOS
//! `configure session NAME` and, under a session's commit timer, `configure session NAME commit`; F5
//! the creation of a REST transaction and `save sys config`; IOS `configure confirm` or `write memory`
//! and NX-OS `no checkpoint NAME` or `copy running-config startup-config` at confirm. IOS and NX-OS
//! stage nothing on the device (the driver reads and renders; the lines go at commit).
//!
//! `archive-path` and `revert-minute-ms` are device configuration rather than faults; they ride on the same keys so a topology
//! label or `--fault` sets them per device.
//!
//! A reset is done below the protocol: [`FaultStream`] wraps the TCP stream and fails every read and
//! write once its [`ConnCtl`] is killed, so the peer sees the TCP connection close mid-conversation, as
//! when a device reboots or a firewall drops the flow.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Named steps of a change where a connection can be reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The change is put on the device without activating it (candidate, session, transaction).
    Stage,
    BeforeCommit,
    AfterCommit,
    Verify,
    /// A committed change is made permanent (confirmed commit confirmed, checkpoint dropped, saved).
    Confirm,
}

/// What a device does at a stage or confirm step with a fault on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepFault {
    /// The connection is reset instead of the step.
    Reset,
    /// The step is refused with this message.
    Reject(String),
}

impl Step {
    pub fn parse(s: &str) -> Option<Step> {
        Some(
            match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
                "stage" => Step::Stage,
                "confirm" => Step::Confirm,
                "before-commit" => Step::BeforeCommit,
                "after-commit" | "after-commit-before-confirm" => Step::AfterCommit,
                "verify" | "during-verify" => Step::Verify,
                _ => return None,
            },
        )
    }
}

/// `netgw-lab.` labels that set up the node rather than inject a fault (read in `lab.rs`).
pub const NODE_SETTINGS: &[&str] = &["junos-style", "ports"];

/// The faults of one device.
#[derive(Debug, Default)]
pub struct Faults {
    pub latency: Option<Duration>,
    pub reset_after_bytes: Option<u64>,
    pub reset_at: Option<Step>,
    /// Reset after this many configuration-mode lines were applied.
    pub reset_at_line: Option<u64>,
    pub auth_fail: bool,
    pub reject_commit: Option<String>,
    pub slow_commit: Option<Duration>,
    pub reject_stage: Option<String>,
    pub slow_stage: Option<Duration>,
    /// Refuses the first confirm only.
    pub reject_confirm: Option<String>,
    pub slow_confirm: Option<Duration>,
    /// The system name every LLDP neighbour of the device reports.
    pub lldp_system_name: Option<String>,
    /// The SNMP agent drops every request.
    pub snmp_no_answer: bool,
    /// IOS `archive` `path` (Configuration Rollback Confirmed Change needs it).
    pub archive_path: Option<String>,
    /// The length of one revert-timer minute.
    pub revert_minute: Option<Duration>,
    /// The named-step reset has fired.
    fired: AtomicBool,
    /// A commit happened and the next read is the verification.
    pub(crate) verify_armed: AtomicBool,
    /// Configuration-mode lines applied so far (for `reset-at-line`).
    lines_applied: AtomicU64,
    /// `reject-confirm` has fired.
    confirm_rejected: AtomicBool,
}

impl Clone for Faults {
    fn clone(&self) -> Self {
        Faults {
            latency: self.latency,
            reset_after_bytes: self.reset_after_bytes,
            reset_at: self.reset_at,
            reset_at_line: self.reset_at_line,
            auth_fail: self.auth_fail,
            reject_commit: self.reject_commit.clone(),
            slow_commit: self.slow_commit,
            reject_stage: self.reject_stage.clone(),
            slow_stage: self.slow_stage,
            reject_confirm: self.reject_confirm.clone(),
            slow_confirm: self.slow_confirm,
            lldp_system_name: self.lldp_system_name.clone(),
            snmp_no_answer: self.snmp_no_answer,
            archive_path: self.archive_path.clone(),
            revert_minute: self.revert_minute,
            fired: AtomicBool::new(false),
            verify_armed: AtomicBool::new(false),
            lines_applied: AtomicU64::new(0),
            confirm_rejected: AtomicBool::new(false),
        }
    }
}

impl Faults {
    /// What the faults are set to, leaving out what they have done so far (`fired`, ...).
    fn settings(&self) -> impl PartialEq + '_ {
        (
            self.latency,
            self.reset_after_bytes,
            self.reset_at,
            self.reset_at_line,
            self.auth_fail,
            &self.reject_commit,
            self.slow_commit,
            (&self.reject_stage, self.slow_stage),
            (&self.reject_confirm, self.slow_confirm),
            (self.snmp_no_answer, &self.lldp_system_name),
            &self.archive_path,
            self.revert_minute,
        )
    }
}

impl PartialEq for Faults {
    fn eq(&self, o: &Self) -> bool {
        self.settings() == o.settings()
    }
}

/// Every key [`Faults::set`] takes (its aliases aside), as the module table lists them.
pub const FAULT_KEYS: &[&str] = &[
    "latency-ms",
    "reset-after-bytes",
    "reset-at",
    "reset-at-line",
    "auth-fail",
    "reject-commit",
    "slow-commit-ms",
    "reject-stage",
    "slow-stage-ms",
    "reject-confirm",
    "slow-confirm-ms",
    "lldp-system-name",
    "snmp-no-answer",
    "archive-path",
    "revert-minute-ms",
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fault {key}={value}: {reason}")]
pub struct FaultError {
    pub key: String,
    pub value: String,
    pub reason: String,
}

impl Faults {
    pub fn is_empty(&self) -> bool {
        *self == Faults::default()
    }

    /// Set one fault by key (see the module table).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), FaultError> {
        let err = |reason: &str| FaultError {
            key: key.into(),
            value: value.into(),
            reason: reason.into(),
        };
        let ms = || {
            value
                .trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| err("not a number of milliseconds"))
        };
        match key.trim() {
            "latency-ms" | "latency" => self.latency = Some(ms()?),
            "reset-after-bytes" => {
                self.reset_after_bytes =
                    Some(value.trim().parse().map_err(|_| err("not a number"))?)
            }
            "reset-at" => {
                self.reset_at = Some(Step::parse(value).ok_or_else(|| {
                    err("not stage, before-commit, after-commit, verify or confirm")
                })?)
            }
            "reset-at-line" => {
                self.reset_at_line = Some(
                    value
                        .trim()
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or_else(|| err("not a line number (1 or more)"))?,
                )
            }
            "auth-fail" => self.auth_fail = matches!(value.trim(), "true" | "yes" | "1" | ""),
            "reject-commit" => self.reject_commit = Some(message(value, "commit rejected")),
            "slow-commit-ms" | "slow-commit" => self.slow_commit = Some(ms()?),
            "reject-stage" => self.reject_stage = Some(message(value, "stage rejected")),
            "slow-stage-ms" => self.slow_stage = Some(ms()?),
            "reject-confirm" => self.reject_confirm = Some(message(value, "confirm rejected")),
            "slow-confirm-ms" => self.slow_confirm = Some(ms()?),
            "lldp-system-name" => self.lldp_system_name = Some(value.to_owned()),
            "snmp-no-answer" | "snmp-timeout" => {
                self.snmp_no_answer = matches!(value.trim(), "true" | "yes" | "1" | "")
            }
            "archive-path" => {
                let p = value.trim();
                if p.is_empty() || p.contains(char::is_whitespace) {
                    return Err(err("not an archive path (one word, e.g. flash:netgw)"));
                }
                self.archive_path = Some(p.to_owned());
            }
            "revert-minute-ms" => self.revert_minute = Some(ms()?),
            _ => {
                return Err(err(&format!(
                    "unknown fault; the keys are {}",
                    FAULT_KEYS.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Faults from a node's labels (`netgw-lab.KEY: VALUE`); the node settings the lab reads itself
    /// ([`NODE_SETTINGS`]) are not faults.
    pub fn from_labels<'a>(
        labels: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Result<Faults, FaultError> {
        let mut f = Faults::default();
        for (k, v) in labels {
            if let Some(key) = k.strip_prefix("netgw-lab.")
                && !NODE_SETTINGS.contains(&key)
            {
                f.set(key, v)?;
            }
        }
        Ok(f)
    }

    /// Whether the connection must be reset at `step` now (fires once).
    /// Whether the named-step reset (`reset-at`) has fired: tests kill a client once the device dropped
    /// its session at that step.
    pub fn reset_fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    pub fn reset_now(&self, step: Step) -> bool {
        self.reset_at == Some(step) && !self.fired.swap(true, Ordering::SeqCst)
    }

    /// At a stage or confirm step: waits out its slow fault, then says which fault to inject (a reset
    /// and `reject-confirm` fire once per lab run, `reject-stage` every time).
    pub async fn at_step(&self, step: Step) -> Option<StepFault> {
        let (slow, reject) = match step {
            Step::Stage => (self.slow_stage, self.reject_stage.as_ref()),
            Step::Confirm => (
                self.slow_confirm,
                self.reject_confirm
                    .as_ref()
                    .filter(|_| !self.confirm_rejected.swap(true, Ordering::SeqCst)),
            ),
            _ => (None, None),
        };
        if let Some(d) = slow {
            tokio::time::sleep(d).await;
        }
        if self.reset_now(step) {
            return Some(StepFault::Reset);
        }
        reject.map(|m| StepFault::Reject(m.clone()))
    }

    /// Called after a commit was applied: arms the verify fault, and says whether to reset now
    /// (after-commit).
    pub fn after_commit(&self) -> bool {
        self.verify_armed.store(true, Ordering::SeqCst);
        self.reset_now(Step::AfterCommit)
    }

    /// Called after a configuration-mode line was applied: whether to reset now (`reset-at-line`).
    /// Configuration-mode lines applied so far (where a `reset-at-line` would land).
    pub fn lines_applied(&self) -> u64 {
        self.lines_applied.load(Ordering::SeqCst)
    }

    pub fn line_applied(&self) -> bool {
        let n = self.lines_applied.fetch_add(1, Ordering::SeqCst) + 1;
        self.reset_at_line == Some(n)
    }

    /// Called on every read: resets at the first read after a commit when `reset-at: verify`.
    pub fn on_read(&self) -> bool {
        self.verify_armed.swap(false, Ordering::SeqCst) && self.reset_now(Step::Verify)
    }

    pub async fn delay(&self) {
        if let Some(d) = self.latency {
            tokio::time::sleep(d).await;
        }
    }
}

fn message(value: &str, default: &str) -> String {
    if value.is_empty() {
        default.into()
    } else {
        value.into()
    }
}

/// Per-connection control: killed, and bytes written so far.
#[derive(Debug, Default)]
pub struct ConnCtl {
    killed: AtomicBool,
    written: AtomicU64,
    limit: Option<u64>,
    /// The connection's pending read, woken by [`ConnCtl::kill`]: a kill from another task (a named
    /// step in the simulator) must end a read that is waiting for the client, or the connection would
    /// hang instead of resetting and the client would only notice at its own timeout.
    reader: futures::task::AtomicWaker,
}

impl ConnCtl {
    pub fn new(limit: Option<u64>) -> Arc<ConnCtl> {
        Arc::new(ConnCtl {
            killed: AtomicBool::new(false),
            written: AtomicU64::new(0),
            limit,
            reader: futures::task::AtomicWaker::new(),
        })
    }

    pub fn kill(&self) {
        self.killed.store(true, Ordering::SeqCst);
        self.reader.wake();
    }

    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::SeqCst)
    }
}

/// A stream that fails once its connection is killed or has written its byte budget.
pub struct FaultStream<S> {
    inner: S,
    ctl: Arc<ConnCtl>,
}

impl<S> FaultStream<S> {
    pub fn new(inner: S, ctl: Arc<ConnCtl>) -> Self {
        FaultStream { inner, ctl }
    }
}

fn reset() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "netgw-lab: injected connection reset",
    )
}

impl<S: AsyncRead + Unpin> AsyncRead for FaultStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        // Register before checking, so a kill between the check and the read still wakes this task.
        self.ctl.reader.register(cx.waker());
        if self.ctl.is_killed() {
            return Poll::Ready(Err(reset()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for FaultStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.ctl.is_killed() {
            return Poll::Ready(Err(reset()));
        }
        let mut allowed = buf.len();
        if let Some(limit) = self.ctl.limit {
            let done = self.ctl.written.load(Ordering::SeqCst);
            if done >= limit {
                self.ctl.kill();
                return Poll::Ready(Err(reset()));
            }
            allowed = allowed.min(usize::try_from(limit - done).unwrap_or(usize::MAX));
        }
        match Pin::new(&mut self.inner).poll_write(cx, &buf[..allowed]) {
            Poll::Ready(Ok(n)) => {
                self.ctl.written.fetch_add(n as u64, Ordering::SeqCst);
                Poll::Ready(Ok(n))
            }
            other => other,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[tokio::test]
    async fn a_kill_ends_a_pending_read_at_once() {
        use tokio::io::AsyncReadExt;
        let (_client, server) = tokio::io::duplex(64);
        let ctl = ConnCtl::new(None);
        let mut stream = FaultStream::new(server, ctl.clone());
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 8];
            stream.read(&mut buf).await
        });
        // The read is parked waiting for the client, which sends nothing.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        ctl.kill();
        let r = tokio::time::timeout(std::time::Duration::from_secs(5), reader)
            .await
            .expect("the pending read must end when the connection is killed")
            .unwrap();
        assert_eq!(r.unwrap_err().kind(), std::io::ErrorKind::ConnectionReset);
    }

    #[test]
    fn every_listed_key_is_taken_and_an_unknown_one_is_told_the_list() {
        for key in FAULT_KEYS {
            let value = match *key {
                "reset-at" => "stage",
                "archive-path" => "flash:netgw",
                "auth-fail" | "snmp-no-answer" => "true",
                k if k.starts_with("reject-") => "no",
                _ => "5",
            };
            let mut f = Faults::default();
            f.set(key, value).unwrap_or_else(|e| panic!("{e}"));
            assert!(!f.is_empty(), "{key}={value} set nothing");
        }
        let e = Faults::default().set("bogus", "1").unwrap_err().to_string();
        assert!(
            e.contains("unknown fault") && e.contains("archive-path, revert-minute-ms"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_confirm_is_refused_once_a_stage_every_time() {
        let mut f = Faults::default();
        f.set("reject-confirm", "busy").unwrap();
        f.set("reject-stage", "no").unwrap();
        let busy = Some(StepFault::Reject("busy".into()));
        assert_eq!(f.at_step(Step::Confirm).await, busy);
        assert_eq!(f.at_step(Step::Confirm).await, None);
        for _ in 0..2 {
            assert_eq!(
                f.at_step(Step::Stage).await,
                Some(StepFault::Reject("no".into()))
            );
        }
        let mut r = Faults::default();
        r.set("reset-at", "stage").unwrap();
        assert_eq!(r.at_step(Step::Confirm).await, None);
        assert_eq!(r.at_step(Step::Stage).await, Some(StepFault::Reset));
        assert_eq!(r.at_step(Step::Stage).await, None, "fires once");
    }

    #[test]
    fn labels_parse() {
        let mut l = BTreeMap::new();
        l.insert("netgw-lab.latency-ms".to_owned(), "20".to_owned());
        l.insert("netgw-lab.reset-at".to_owned(), "after-commit".to_owned());
        l.insert("netgw-lab.reject-commit".to_owned(), "no way".to_owned());
        l.insert("role".to_owned(), "leaf".to_owned());
        let f = Faults::from_labels(&l).unwrap();
        assert_eq!(f.latency, Some(Duration::from_millis(20)));
        assert_eq!(f.reset_at, Some(Step::AfterCommit));
        assert!(f.reset_now(Step::AfterCommit));
        assert!(!f.reset_now(Step::AfterCommit), "fires once");
        assert!(Faults::default().set("nope", "1").is_err());
        let mut s = Faults::default();
        s.set("snmp-no-answer", "true").unwrap();
        assert!(s.snmp_no_answer && !s.is_empty());
        assert!(Faults::default().set("latency-ms", "x").is_err());
        let mut c = Faults::default();
        c.set("reject-confirm", "busy").unwrap();
        c.set("reject-stage", "").unwrap();
        assert_eq!(c.reject_stage.as_deref(), Some("stage rejected"));
        assert!(Faults::default().set("reset-at", "confirm").is_ok());
        assert!(Faults::default().set("reset-at", "sometime").is_err());
    }
}
