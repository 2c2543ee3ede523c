//! The one `Driver` trait every vendor implements (docs/design.md §4), and the types around it.
//!
//! A driver value is one session with one device. The converge engine calls, in order:
//!
//! ```text
//!   facts() ─▶ observe() ─▶ [pure plan] ─▶ stage(plan) ─▶ why-run: discard()
//!                                                      └▶ commit(opts) ─▶ observe() + verify ─▶ confirm()
//!                                                                                    └ failed ─▶ rollback()
//! ```
//!
//! Two-phase change in the manner of holo's `CommitPhase` (Prepare / Abort / Apply): `stage` prepares the
//! change on the device where it has a candidate or a session and returns the device's own diff;
//! `discard` aborts it; `commit` applies it (a confirmed commit where the platform has one, so the device
//! itself rolls back if the gateway dies); `confirm` makes it permanent; `rollback` undoes a commit that
//! was not confirmed (from the recorded pre-state where the device has no rollback of its own).
//! Capabilities are declared, never discovered by a runtime "not implemented".

use async_trait::async_trait;
use netgw_models::facts::DeviceFacts;
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, Vlan};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;
use thiserror::Error;

/// The platforms netgw drives: one closed list, one registration point ([`crate::registry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Junos,
    Eos,
    Ios,
    Nxos,
    F5,
    Linux,
}

impl Platform {
    pub const ALL: [Platform; 6] = [
        Platform::Junos,
        Platform::Eos,
        Platform::Ios,
        Platform::Nxos,
        Platform::F5,
        Platform::Linux,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Junos => "junos",
            Platform::Eos => "eos",
            Platform::Ios => "ios",
            Platform::Nxos => "nxos",
            Platform::F5 => "f5",
            Platform::Linux => "linux",
        }
    }

    /// The one transport netgw drives the platform over: the `connection_options` block it reads,
    /// and the only value `data.netgw.transport` may take.
    pub fn transport(self) -> &'static str {
        match self {
            Platform::Junos => "netconf",
            Platform::Eos => "eapi",
            Platform::Ios | Platform::Nxos | Platform::Linux => "ssh",
            Platform::F5 => "rest",
        }
    }

    /// netgw's names and the Nornir / NAPALM / Netmiko / scrapli spellings.
    pub fn parse(name: &str) -> Option<Platform> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "junos" | "juniper_junos" | "juniper" | "junos_netconf" => Platform::Junos,
            "eos" | "arista_eos" | "arista" => Platform::Eos,
            "ios" | "cisco_ios" | "iosxe" | "ios-xe" | "ios_xe" | "cisco_xe" | "cisco_iosxe" => {
                Platform::Ios
            }
            "nxos" | "nx-os" | "cisco_nxos" | "nxos_ssh" | "cisco_nxos_ssh" => Platform::Nxos,
            "f5" | "bigip" | "big-ip" | "bigip_f5" | "f5_tmsh" | "f5_ltm" | "f5_linux" => {
                Platform::F5
            }
            "linux" | "cumulus" | "sonic" | "linux_ssh" => Platform::Linux,
            _ => return None,
        })
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a platform can do, declared by its driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Capabilities {
    /// A candidate configuration (Junos) or configuration session (EOS) to stage changes in.
    pub candidate: bool,
    /// A commit the device rolls back by itself unless confirmed.
    pub confirmed_commit: bool,
    /// Named configuration sessions (EOS `configure session`).
    pub sessions: bool,
    /// A device-side rollback (Junos `rollback`, NX-OS checkpoints); without it the driver rolls back
    /// from the recorded pre-state.
    pub rollback: bool,
    /// The device can show its own diff of a staged change.
    pub device_diff: bool,
    /// `rollback` may be called again after it failed: the driver keeps what a rollback needs
    /// (pre-state, checkpoint, candidate) and reconnects where the session was lost. A driver that
    /// forgets its committed state on a failed rollback (a second call would answer `Ok` having done
    /// nothing) declares `false`.
    pub rollback_retry: bool,
}

/// A rendered line that must not be sent (a newline, `;` or control character would let a value run
/// a second command; on a CLI also `|` or `?`). The models already reject such values; this is the
/// last guard.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("refusing to send {line:?}: {reason}")]
pub struct RenderError {
    pub line: String,
    pub reason: &'static str,
}

/// The last guard before sending configuration lines: one command per line, and none of the
/// characters in `also` (with the reason each is refused).
pub(crate) fn check_lines(
    lines: &[String],
    also: &[(char, &'static str)],
) -> Result<(), RenderError> {
    for l in lines {
        let reason = if l.trim().is_empty() {
            "empty command"
        } else if l.chars().any(char::is_control) {
            "contains a newline or control character"
        } else if l.contains(';') {
            "contains ';'"
        } else if let Some((_, why)) = also.iter().find(|(c, _)| l.contains(*c)) {
            why
        } else {
            continue;
        };
        return Err(RenderError {
            line: l.clone(),
            reason,
        });
    }
    Ok(())
}

/// What putting the device back after a failed commit did (`restored`: how many `unit`s the
/// restore sent), for [`DriverError::with_note`].
pub(crate) fn restore_note(restored: &Result<usize, DriverError>, unit: &str) -> String {
    match restored {
        Ok(n) => {
            format!("the device was restored to its state before the change ({n} {unit} sent)")
        }
        Err(r) => format!("restoring the state before the change FAILED: {r}"),
    }
}

/// Where a change is on a driver that holds it itself (no device-side transaction to ask).
#[derive(Debug, Default)]
pub(crate) enum Change<P> {
    #[default]
    Idle,
    Staged(P),
    Committed(P),
}

impl<P> Change<P> {
    /// For `stage`: refused while a change is staged or committed.
    pub(crate) fn ensure_idle(&self, device: &str) -> Result<(), DriverError> {
        match self {
            Change::Idle => Ok(()),
            _ => Err(DriverError::Config {
                device: device.to_owned(),
                message: "a change is already staged or committed; discard, confirm or roll it back first".into(),
            }),
        }
    }

    /// For `commit`: the staged change, taken (`None` when nothing is staged). A change committed
    /// already stays and the commit is refused.
    pub(crate) fn take_staged(&mut self, device: &str) -> Result<Option<P>, DriverError> {
        match std::mem::take(self) {
            Change::Idle => Ok(None),
            Change::Staged(p) => Ok(Some(p)),
            committed @ Change::Committed(_) => {
                *self = committed;
                Err(DriverError::Config {
                    device: device.to_owned(),
                    message: "already committed".into(),
                })
            }
        }
    }

    /// For `confirm`: the committed change, taken (`None` when nothing is committed). A change only
    /// staged stays and the confirmation is refused.
    pub(crate) fn take_committed(&mut self, device: &str) -> Result<Option<P>, DriverError> {
        match std::mem::take(self) {
            Change::Idle => Ok(None),
            Change::Committed(p) => Ok(Some(p)),
            staged @ Change::Staged(_) => {
                *self = staged;
                Err(DriverError::Config {
                    device: device.to_owned(),
                    message: "confirm before commit".into(),
                })
            }
        }
    }
}

/// What [`Driver::validate`] answers for drivers that check each VLAN and each link on its own.
pub(crate) fn validate_with<V: fmt::Display, L: fmt::Display>(
    vlans: &[Vlan],
    links: &[Link],
    vf: impl Fn(&Vlan) -> Result<(), V>,
    lf: impl Fn(&Link) -> Result<(), L>,
) -> Vec<(ResourceRef, String)> {
    let mut out = Vec::new();
    for v in vlans {
        if let Err(e) = vf(v) {
            out.push((ResourceRef::Vlan { id: v.id }, e.to_string()));
        }
    }
    for l in links {
        if let Err(e) = lf(l) {
            out.push((
                ResourceRef::Link {
                    name: l.name.clone(),
                },
                e.to_string(),
            ));
        }
    }
    out
}

/// VLANs and links as the device has them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Observed {
    pub vlans: Vec<Vlan>,
    pub links: Vec<Link>,
}

/// A device's aggregates and routed interfaces, as [`Driver::observe_lag_l3`] reads them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LagL3 {
    pub lags: Vec<netgw_models::plan::lag::Lag>,
    pub l3: Vec<netgw_models::plan::l3::L3Interface>,
}

/// The planner's read taken during the facts step, handed to the next `observe()` so the run reads the
/// device's layer-2 state once (facts and plan see the same answer). `stage` forgets it: anything
/// after a change reads afresh.
#[derive(Debug, Default)]
pub(crate) struct ObservedOnce(Option<Observed>);

impl ObservedOnce {
    /// Add the layer-2 facts (`interfaces.NAME.switchport`, `vlans.ID.ports`) from the planner's read
    /// and keep the read for the next `observe()`. A lost session or a timeout fails the facts step
    /// like any other read; a command the device refuses only leaves the layer-2 facts out.
    pub(crate) fn record(
        &mut self,
        facts: &mut DeviceFacts,
        read: Result<Observed, DriverError>,
    ) -> Result<(), DriverError> {
        self.0 = None;
        match read {
            Ok(o) => {
                facts.apply_layer2(&o.links);
                self.0 = Some(o);
                Ok(())
            }
            Err(e) if matches!(e.kind(), ErrorKind::Transport | ErrorKind::Timeout) => Err(e),
            Err(e) => {
                tracing::warn!(error = %e, "layer-2 facts not gathered");
                Ok(())
            }
        }
    }

    /// The read kept by the facts step, once.
    pub(crate) fn take(&mut self) -> Option<Observed> {
        self.0.take()
    }

    pub(crate) fn forget(&mut self) {
        self.0 = None;
    }
}

/// A change staged on the device.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Staged {
    /// The device's own diff (Junos `show | compare`, EOS `show session-config diffs`), or the rendered
    /// commands where the platform cannot show one.
    pub diff: String,
    /// What will be sent (configuration lines, XML or REST calls), for reports and debugging.
    pub rendered: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitOptions {
    /// Commit comment, naming the run (`netgw run RUN-ID`).
    pub comment: String,
    /// How long the device waits for `confirm` before rolling back by itself.
    pub confirm_timeout: Duration,
}

impl Default for CommitOptions {
    fn default() -> Self {
        CommitOptions {
            comment: "netgw".into(),
            confirm_timeout: Duration::from_secs(120),
        }
    }
}

/// Whether a confirmed change is in the configuration the device boots from: shown in every report
/// of a change, so an operator knows whether it survives a reload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Persistence {
    /// The change survives a reload.
    pub saved: bool,
    /// How it was saved (`write memory`), or why not (`save_config: false`).
    pub how: String,
}

impl Persistence {
    pub fn saved(how: impl Into<String>) -> Self {
        Persistence {
            saved: true,
            how: how.into(),
        }
    }

    pub fn not_saved(why: impl Into<String>) -> Self {
        Persistence {
            saved: false,
            how: why.into(),
        }
    }
}

impl fmt::Display for Persistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.saved {
            write!(f, "saved to startup ({})", self.how)
        } else {
            write!(
                f,
                "NOT saved to startup ({}): a reload of the device loses the change",
                self.how
            )
        }
    }
}

/// What [`Driver::settle_pending`] found and did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Settled {
    /// No confirmed commit of an earlier session was waiting.
    Nothing,
    /// It was made permanent with this command (Junos `commit`, EOS `configure session NAME
    /// commit`, IOS `configure confirm`).
    Confirmed(String),
    /// It was undone at once with the device's own mechanism (EOS `configure session NAME abort`,
    /// IOS `configure revert now`).
    Reverted(String),
}

/// Kinds of failure, for reports and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Connect,
    Auth,
    Timeout,
    Transport,
    Parse,
    Rejected,
    Verify,
    Unsupported,
    Config,
    Cancelled,
}

/// Errors of a driver session. A device's own error (an `rpc-error`, a CLI `% Invalid input`, an
/// iControl error body) is kept verbatim in `Rejected`.
#[derive(Debug, Error)]
pub enum DriverError {
    #[error("{device}: {step}: {source}")]
    Transport {
        device: String,
        step: &'static str,
        kind: ErrorKind,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    #[error("{device}: cannot parse the reply to {command}: {reason}")]
    Parse {
        device: String,
        command: String,
        reason: String,
    },

    #[error("{device}: the device rejected {step}: {message}")]
    Rejected {
        device: String,
        step: &'static str,
        message: String,
    },

    #[error("{device}: verification after commit found {} change(s) still pending: {}", .remaining.len(), .remaining.join("; "))]
    Verify {
        device: String,
        remaining: Vec<String>,
    },

    #[error("{device}: {what} is not supported on {platform}")]
    Unsupported {
        device: String,
        platform: Platform,
        what: String,
    },

    #[error("{device}: {message}")]
    Config { device: String, message: String },

    /// A rollback asked after the change's confirmation had reached the device (a stop inside
    /// `confirm`): the change was committed and verified, it is whole, and nothing is left to roll
    /// back to. Not a half-applied device.
    #[error("{device}: {message}")]
    AlreadyConfirmed { device: String, message: String },
}

impl DriverError {
    /// This error with `note` (what was done about it, e.g. [`restore_note`]) after a refusal's
    /// message or a transport failure's cause, so the report says whether the device was put back.
    /// Other errors are returned as they are.
    pub(crate) fn with_note(self, note: impl fmt::Display) -> DriverError {
        match self {
            DriverError::Rejected {
                device,
                step,
                message,
            } => DriverError::Rejected {
                device,
                step,
                message: format!("{message}; {note}"),
            },
            DriverError::Transport {
                device,
                step,
                kind,
                source,
            } => DriverError::Transport {
                device,
                step,
                kind,
                source: format!("{source}; {note}").into(),
            },
            other => other,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            DriverError::Transport { kind, .. } => *kind,
            DriverError::Parse { .. } => ErrorKind::Parse,
            DriverError::Rejected { .. } => ErrorKind::Rejected,
            DriverError::Verify { .. } => ErrorKind::Verify,
            DriverError::Unsupported { .. } => ErrorKind::Unsupported,
            DriverError::Config { .. } => ErrorKind::Config,
            DriverError::AlreadyConfirmed { .. } => ErrorKind::Rejected,
        }
    }

    pub fn parse(device: &str, command: &str, reason: impl Into<String>) -> Self {
        DriverError::Parse {
            device: device.into(),
            command: command.into(),
            reason: reason.into(),
        }
    }
}

/// One session with one device.
#[async_trait]
pub trait Driver: Send {
    fn platform(&self) -> Platform;
    fn capabilities(&self) -> Capabilities;
    /// Reserved VLANs and defaults the planner must respect on this platform.
    fn plan_rules(&self) -> PlanRules;
    /// Vendor limits on desired resources (name length, reserved names), checked before anything is
    /// sent. Each entry names a resource that cannot be applied and why.
    fn validate(&self, vlans: &[Vlan], links: &[Link]) -> Vec<(ResourceRef, String)>;

    /// Gather facts (automatic attributes).
    async fn facts(&mut self) -> Result<DeviceFacts, DriverError>;
    /// Read the VLANs and links the device has now.
    async fn observe(&mut self) -> Result<Observed, DriverError>;
    /// Whether this driver observes and applies aggregates and routed interfaces (`observe_lag_l3`,
    /// and their steps in `stage`). A node declaring them on a driver that does not fails before
    /// anything is sent.
    fn applies_lag_l3(&self) -> bool {
        false
    }
    /// Read the aggregates and routed interfaces the device has now (asked only when the node
    /// declares some).
    async fn observe_lag_l3(&mut self) -> Result<LagL3, DriverError> {
        Ok(LagL3::default())
    }
    /// Each aggregate member's bundling state as the platform reports it (`netgw facts`, `netgw
    /// links`; never a converge, whose round trips are its plan's). Empty where the driver reads
    /// none.
    async fn lag_members(&mut self) -> Result<Vec<crate::lag_state::LagMembers>, DriverError> {
        Ok(Vec::new())
    }
    /// Stage a plan on the device and return its diff. Nothing is active yet.
    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError>;
    /// What `stage` will send for `plan` (its `Staged::rendered`), where the driver knows it before
    /// sending anything; `None` where it depends on what `stage` reads first. With it, the engine
    /// makes the change's intent durable during the staging round trip instead of after it.
    fn rendered_ahead(&self, plan: &Plan) -> Option<Vec<String>> {
        let _ = plan;
        None
    }
    /// Whether undoing a change that sent `rendered` takes back more than its plan's resources show
    /// (IOS: the trunk encapsulation a port was given so it could become a trunk), so an undo is
    /// due even when the resources already hold their state from before.
    fn undoes_beyond_plan(&self, rendered: &[String]) -> bool {
        let _ = rendered;
        false
    }
    /// Stage the undo of a change that sent `rendered`: `back` (the plan to the resources' state
    /// before it) and whatever [`Driver::undoes_beyond_plan`] says the lines did besides.
    async fn stage_undo(
        &mut self,
        back: &Plan,
        rendered: &[String],
    ) -> Result<Staged, DriverError> {
        let _ = rendered;
        self.stage(back).await
    }
    /// Throw away what `stage` prepared.
    async fn discard(&mut self) -> Result<(), DriverError>;
    /// Apply what `stage` prepared (confirmed where the platform has it).
    async fn commit(&mut self, options: &CommitOptions) -> Result<(), DriverError>;
    /// Make a commit permanent (and, where [`Driver::persistence`] says so, save it to the
    /// configuration the device boots from).
    async fn confirm(&mut self) -> Result<(), DriverError>;
    /// Whether `confirm` leaves the change in the configuration the device boots from.
    fn persistence(&self) -> Persistence;
    /// Undo a commit that was not confirmed; the device ends as it was before `stage`.
    async fn rollback(&mut self) -> Result<(), DriverError>;
    /// End the session cleanly.
    async fn close(&mut self) -> Result<(), DriverError>;
    /// Wait, at most `limit`, until no other session holds the device's configuration lock: a dead
    /// session's commit may still be landing under it, and a recovery that read the device before
    /// would judge a change that is about to arrive. `Err` when the lock stays held for `limit`.
    /// Platforms without a configuration lock have nothing to wait for.
    async fn await_config_unlocked(&mut self, limit: Duration) -> Result<(), DriverError> {
        let _ = limit;
        Ok(())
    }
    /// Settle a confirmed commit an earlier, dead session left waiting for its confirmation (the
    /// node lock keeps live netgw runs out): `keep` makes it permanent (the device holds the whole
    /// change), otherwise it is undone now where the device can, else its own timer does it later.
    /// Platforms without a device-side timer have nothing to settle.
    async fn settle_pending(&mut self, keep: bool) -> Result<Settled, DriverError> {
        let _ = keep;
        Ok(Settled::Nothing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_spellings() {
        for (s, p) in [
            ("juniper_junos", Platform::Junos),
            ("arista_eos", Platform::Eos),
            ("cisco_xe", Platform::Ios),
            ("cisco_ios", Platform::Ios),
            ("cisco_nxos", Platform::Nxos),
            ("f5_tmsh", Platform::F5),
            ("bigip_f5", Platform::F5),
            ("EOS", Platform::Eos),
            ("linux", Platform::Linux),
        ] {
            assert_eq!(Platform::parse(s), Some(p), "{s}");
        }
        assert_eq!(Platform::parse("nokia_srlinux"), None);
        for p in Platform::ALL {
            assert_eq!(Platform::parse(p.as_str()), Some(p));
        }
    }

    #[test]
    fn the_facts_read_is_handed_to_one_observe_only() {
        let mut link = Link::new("Et1");
        link.mode = Some(netgw_models::resource::LinkMode::Access);
        link.access_vlan = netgw_models::resource::VlanId::new(10).ok();
        let read = Observed {
            vlans: vec![],
            links: vec![link],
        };
        let mut once = ObservedOnce::default();
        let mut f = DeviceFacts::default();
        once.record(&mut f, Ok(read.clone())).unwrap();
        assert!(
            f.interfaces["Et1"].switchport.is_some(),
            "layer-2 facts added"
        );
        assert_eq!(once.take(), Some(read.clone()));
        assert_eq!(once.take(), None, "a second observe reads the device");
        once.record(&mut DeviceFacts::default(), Ok(read)).unwrap();
        once.forget();
        assert_eq!(once.take(), None, "stage forgets it");
        // A refused command leaves the layer-2 facts out; a lost session fails the facts step.
        let refused = DriverError::Rejected {
            device: "d".into(),
            step: "observe",
            message: "% Invalid input".into(),
        };
        let mut f = DeviceFacts::default();
        once.record(&mut f, Err(refused)).unwrap();
        assert!(f.interfaces.is_empty() && once.take().is_none());
        let lost = DriverError::Transport {
            device: "d".into(),
            step: "observe",
            kind: ErrorKind::Transport,
            source: "reset".into(),
        };
        assert!(once.record(&mut f, Err(lost)).is_err());
    }
}
