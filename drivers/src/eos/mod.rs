//! Arista EOS over eAPI (docs/design.md §4): glue between the [`Driver`] trait and the pure parsers and
//! renderers in `facts.rs`, `vlan.rs`, `link.rs` and `config.rs`.
//!
//! ```text
//!   connect ─▶ show version ─▶ Capabilities (declared once: EOS 4.x has configuration sessions,
//!                               4.18+ a commit timer; an unknown version, e.g. fake-switches, has neither)
//!
//!   sessions:     stage = configure session netgw-ID + lines + show session-config diffs
//!                 commit = ... commit timer HH:MM:SS │ confirm = ... commit │ rollback/discard = ... abort
//!   no sessions:  stage = record the pre-state (observe) + render; diff = the rendered lines
//!                 commit = configure + lines + end; on any failure the pre-state is restored at once
//!                 rollback = re-observe, apply config::revert_plan, verify nothing is left to revert
//! ```
//!
//! Connection settings: `connection_options.eapi` (hostname, port, username, password, extras
//! `transport: http|https`, or NAPALM-style `optional_args.transport`); `data.netgw` options
//! `eapi_transport` (same values), `eos_sessions` (bool, overrides the version rule) and
//! `eos_write_memory` (bool, default `save_config`'s, itself default true: `write memory` on confirm). Default port 443 (80 over http).

mod answer;
pub mod config;
pub mod eapi;
pub mod facts;
pub mod link;
#[cfg(feature = "replay")]
pub mod replay;
pub mod vlan;

use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use netgw_models::facts::DeviceFacts;
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, Vlan, VlanId, VlanSet};
use serde_json::Value;

use crate::driver::{
    Capabilities, Change, CommitOptions, Driver, DriverError, LagL3, Observed, ObservedOnce,
    Platform, Settled, Staged, restore_note, validate_with,
};
use crate::target::{DeviceTarget, str_option};
use crate::transport::http::{HttpAuth, HttpClient, HttpConfig};
use eapi::{Eapi, EapiError, HttpEapi};

pub use crate::driver::RenderError;

/// The last guard before sending: one command per line.
pub(crate) fn check_lines(lines: &[String]) -> Result<(), RenderError> {
    crate::driver::check_lines(lines, &[])
}

/// How to reach eAPI, resolved from the target.
#[derive(Debug, Clone)]
pub struct EapiSettings {
    pub base_url: String,
    pub http: HttpConfig,
    /// `eos_sessions` option: force configuration sessions on or off.
    pub sessions_override: Option<bool>,
    pub write_memory: bool,
}

impl EapiSettings {
    pub fn from_target(t: &DeviceTarget) -> Result<Self, DriverError> {
        let co = t.connection_options.get("eapi");
        let scheme = co
            .and_then(|c| {
                str_option(&c.extras, "transport").or_else(|| {
                    c.extras
                        .get("optional_args")
                        .and_then(Value::as_object)
                        .and_then(|o| str_option(o, "transport"))
                })
            })
            .or_else(|| str_option(&t.options, "eapi_transport"))
            .unwrap_or("https")
            .to_ascii_lowercase();
        let (base_url, ep) = t.http_base("eapi", &scheme, "eAPI transport")?;
        // Checked even where the connection's own `transport` wins: a bad value is never passed over.
        if let Some(v) = t.options.get("eapi_transport").filter(|v| !v.is_null())
            && !v
                .as_str()
                .is_some_and(|s| matches!(s.to_ascii_lowercase().as_str(), "http" | "https"))
        {
            return Err(DriverError::Config {
                device: t.name.clone(),
                message: format!("option eapi_transport must be http or https, not {v}"),
            });
        }
        // Off the box eAPI answers nothing without credentials; on it (or through a tunnel to it),
        // `protocol http localhost` may take requests without.
        if ep.username.is_empty() && !is_loopback(&ep.host) {
            return Err(DriverError::Config {
                device: t.name.clone(),
                message: "eAPI needs a username: set the host's username or \
                          connection_options.eapi.username"
                    .into(),
            });
        }
        let mut http = HttpConfig::new(t.name.clone(), base_url.clone());
        http.tls = t.tls_mode();
        if !ep.username.is_empty() {
            http.auth = HttpAuth::Basic {
                username: ep.username.clone(),
                password: ep.password.clone().unwrap_or_default(),
            };
        }
        http.connect_timeout = t.timeouts.connect;
        http.request_timeout = t.timeouts.operation;
        Ok(EapiSettings {
            base_url,
            http,
            sessions_override: t.bool_option("eos_sessions")?,
            write_memory: match t.bool_option("eos_write_memory")? {
                Some(w) => w,
                None => t.save_config()?,
            },
        })
    }
}

/// `localhost`, or an address of 127.0.0.0/8 or `::1` (brackets allowed).
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// What a release can do. Sessions exist on every EOS 4.x; the commit timer (confirmed commit) is
/// assumed from 4.18 on. An unknown version declares neither.
pub fn capabilities_for(version: Option<&str>, sessions_override: Option<bool>) -> Capabilities {
    let release = version.and_then(facts::parse_release);
    // Configuration sessions arrived in EOS 4.15.0F; earlier releases refuse `configure session`.
    let sessions =
        sessions_override.unwrap_or(release.is_some_and(|r| (r.major, r.minor) >= (4, 15)));
    let timer = sessions && release.is_some_and(|r| (r.major, r.minor) >= (4, 18));
    Capabilities {
        candidate: sessions,
        confirmed_commit: timer,
        sessions,
        rollback: false,
        device_diff: sessions,
        // A failed rollback forgets the committed state; the session's commit timer reverts it.
        rollback_retry: false,
    }
}

/// A change in progress.
#[derive(Debug, Clone)]
struct Pending {
    plan: Plan,
    lines: Vec<String>,
    /// The configuration session holding the change (sessions only).
    session: Option<String>,
    /// The device before the change, where rollback has to rebuild it.
    pre: Option<Observed>,
    /// Committed with a commit timer: EOS rolls back by itself unless confirmed.
    timed: bool,
}

type State = Change<Pending>;

/// One eAPI session with one EOS device.
#[derive(Debug)]
pub struct EosDriver {
    device: String,
    eapi: Eapi,
    show_version: Option<Value>,
    caps: Capabilities,
    write_memory: bool,
    state: State,
    seq: u32,
    observed: ObservedOnce,
    /// JSON answers to reads asked in the same request as something else (the connect's batch, a
    /// commit's verifying reads), each taken once by the step that needs it. Nothing changes on the
    /// device in between (the node lock keeps other netgw runs out); a change empties it.
    prefetched: std::collections::HashMap<&'static str, Value>,
}

/// What the connect asks with `show version`, in one request: the facts' reads, the planner's
/// (`show interfaces switchport`) and the sessions a dead run may have left under a commit timer.
const CONNECT_READS: [&str; 7] = [
    "show version",
    "show configuration sessions detail",
    "show hostname",
    "show interfaces",
    "show vlan",
    "show lldp neighbors detail",
    "show interfaces switchport",
];

/// The planner's reads ([`EosDriver::read`]), also sent after a commit to verify it.
const READ: [&str; 3] = ["show vlan", "show interfaces", "show interfaces switchport"];

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl EosDriver {
    /// Connect over HTTP(S) as the target says and read `show version`.
    pub async fn connect(target: &DeviceTarget) -> Result<Self, DriverError> {
        let s = EapiSettings::from_target(target)?;
        let client = HttpClient::new(s.http.clone())
            .await
            .map_err(|e| EapiError::Http(e).into_driver(&target.name, "connect"))?;
        let eapi = Eapi::new(
            target.name.clone(),
            Box::new(HttpEapi::new(client)),
            target.enable_secret.clone(),
        );
        Self::with_eapi(eapi, s.sessions_override, s.write_memory).await
    }

    /// A session with a recorded device (`transport::replay`), the target's options applied as in
    /// [`EosDriver::connect`].
    #[cfg(feature = "replay")]
    pub async fn replay(
        target: &DeviceTarget,
        rec: crate::transport::replay::Recording,
    ) -> Result<Self, DriverError> {
        let s = EapiSettings::from_target(target)?;
        let transport = replay::ReplayEapi(rec);
        let eapi = Eapi::new(target.name.clone(), Box::new(transport), None);
        Self::with_eapi(eapi, s.sessions_override, s.write_memory).await
    }

    /// Start a session on an existing eAPI client (tests pass one over a recording transport).
    pub async fn with_eapi(
        eapi: Eapi,
        sessions_override: Option<bool>,
        write_memory: bool,
    ) -> Result<Self, DriverError> {
        let device = eapi.device().to_owned();
        let mut prefetched = std::collections::HashMap::new();
        let all: Vec<String> = CONNECT_READS.map(str::to_owned).to_vec();
        let first = match eapi.run_json(&all).await {
            Ok(values) => {
                prefetched.extend(CONNECT_READS.into_iter().zip(values));
                prefetched.remove("show version").map(Ok)
            }
            // One of them unavailable (no sessions, an old or partial eAPI): each alone.
            Err(e) if e.is_unavailable() => None,
            Err(e) => Some(Err(e)),
        };
        let first = match first {
            Some(r) => r,
            None => eapi.run_one_json("show version").await,
        };
        let show_version = match first {
            Ok(v) => Some(v),
            Err(e) if e.is_unavailable() => {
                tracing::info!(device = %device, error = %e, "show version unavailable: version unknown, no configuration sessions");
                None
            }
            Err(e) => return Err(e.into_driver(&device, "connect (show version)")),
        };
        let version = show_version
            .as_ref()
            .and_then(|v| facts::parse_show_version(v, None).version);
        let caps = capabilities_for(version.as_deref(), sessions_override);
        tracing::debug!(device = %device, version = ?version, sessions = caps.sessions, confirmed_commit = caps.confirmed_commit, "eos connected");
        Ok(EosDriver {
            observed: ObservedOnce::default(),
            device,
            eapi,
            show_version,
            caps,
            write_memory,
            state: State::Idle,
            seq: 0,
            prefetched,
        })
    }

    /// The eAPI client (tests read the device back through it).
    pub fn eapi(&self) -> &Eapi {
        &self.eapi
    }

    fn err(&self, step: &'static str) -> impl Fn(EapiError) -> DriverError + '_ {
        move |e| e.into_driver(&self.device, step)
    }

    /// The prefetched answers of all of `cmds`, taken; `None` (and nothing taken) when one is missing.
    fn take_prefetched<const N: usize>(&mut self, cmds: [&str; N]) -> Option<[Value; N]> {
        if !cmds.iter().all(|c| self.prefetched.contains_key(c)) {
            return None;
        }
        Some(cmds.map(|c| self.prefetched.remove(c).unwrap_or_default()))
    }

    /// Several optional reads in one request (one HTTP round trip instead of one each). eAPI stops a
    /// request at its first failing command, so when one of them is unavailable each is asked alone.
    async fn optional_batch<const N: usize>(
        &self,
        cmds: [&str; N],
    ) -> Result<[Option<Value>; N], DriverError> {
        let all: Vec<String> = cmds.iter().map(|c| (*c).to_owned()).collect();
        match self.eapi.run_json(&all).await {
            Ok(values) => {
                let mut it = values.into_iter();
                return Ok(std::array::from_fn(|_| it.next()));
            }
            Err(e) if e.is_unavailable() => {
                tracing::debug!(device = %self.device, error = %e, "batched reads refused; asking each alone");
            }
            Err(e) => return Err(e.into_driver(&self.device, "facts")),
        }
        let mut out: [Option<Value>; N] = std::array::from_fn(|_| None);
        for (slot, cmd) in out.iter_mut().zip(cmds) {
            *slot = self.optional(cmd).await?;
        }
        Ok(out)
    }

    async fn optional(&self, cmd: &str) -> Result<Option<Value>, DriverError> {
        match self.eapi.run_one_json(cmd).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_unavailable() => {
                tracing::debug!(device = %self.device, command = cmd, error = %e, "optional command unavailable");
                Ok(None)
            }
            Err(e) => Err(e.into_driver(&self.device, "facts")),
        }
    }

    /// Housekeeping after a confirmed change: abort the `netgw-` configuration sessions a killed gateway
    /// left pending ([`config::abandoned_sessions`]) in `sessions` (`show configuration sessions`,
    /// asked with the confirmation). The change is in place; failures are warnings.
    async fn abort_abandoned_sessions(&mut self, sessions: &Value) {
        for name in config::abandoned_sessions(sessions, crate::stamp::unix_now()) {
            match self
                .eapi
                .run_json(&[config::session_abort_command(&name)])
                .await
            {
                Ok(_) => {
                    tracing::info!(device = %self.device, session = %name, "aborted a configuration session an interrupted run left pending")
                }
                Err(e) => {
                    tracing::warn!(device = %self.device, error = %e, session = %name, "could not abort an abandoned configuration session");
                    return;
                }
            }
        }
    }

    fn session_name(&mut self) -> String {
        self.seq += 1;
        crate::stamp::name(self.seq)
    }

    fn render(&self, plan: &Plan) -> Result<Vec<String>, DriverError> {
        config::render_plan(plan).map_err(|e| DriverError::Config {
            device: self.device.clone(),
            message: e.to_string(),
        })
    }

    /// Take the device back to `p.pre` for what `p.plan` touched; verify by reading back.
    async fn restore(&self, p: &Pending) -> Result<usize, DriverError> {
        let Some(pre) = &p.pre else {
            return Err(DriverError::Config {
                device: self.device.clone(),
                message: "no recorded pre-state to roll back to".into(),
            });
        };
        let now = self.read().await?;
        let revert = config::revert_plan(&p.plan, pre, &now);
        let failed: Vec<String> = revert
            .failures()
            .map(|r| format!("{}: {}", r.resource, r.error.as_deref().unwrap_or("")))
            .collect();
        if revert.is_empty() && failed.is_empty() {
            return Ok(0);
        }
        let lines = self.render(&revert)?;
        if !lines.is_empty() {
            self.eapi
                .run_json(&config::plain_apply_commands(&lines))
                .await
                .map_err(self.err("rollback"))?;
        }
        let after = self.read().await?;
        let left = config::revert_plan(&p.plan, pre, &after);
        if !left.is_empty() || !failed.is_empty() {
            let mut remaining: Vec<String> = left
                .resources
                .iter()
                .filter(|r| r.action.is_some())
                .map(|r| r.resource.to_string())
                .collect();
            remaining.extend(failed);
            return Err(DriverError::Verify {
                device: self.device.clone(),
                remaining,
            });
        }
        Ok(lines.len())
    }

    /// `show vlan` + `show interfaces` + `show interfaces switchport`, in one request (or, where the
    /// switchport JSON is unavailable, the first two and running-config text).
    async fn read(&self) -> Result<Observed, DriverError> {
        let cmds = READ.map(str::to_owned);
        match self.eapi.run_json(&cmds).await {
            Ok(mut r) if r.len() == 3 => {
                let switchport = r.pop();
                return self.read_from(&r[0], &r[1], switchport).await;
            }
            Ok(_) => {}
            Err(e) if e.is_unavailable() => {}
            Err(e) => return Err(e.into_driver(&self.device, "observe")),
        }
        let r = self
            .eapi
            .run_json(&cmds[..2])
            .await
            .map_err(self.err("observe"))?;
        self.read_from(&r[0], &r[1], None).await
    }

    /// The planner's view from `show vlan` and `show interfaces` as already read (the facts step has
    /// them), plus the switchport state (`switchport`: already read; else asked here).
    async fn read_from(
        &self,
        show_vlan: &Value,
        show_interfaces: &Value,
        switchport: Option<Value>,
    ) -> Result<Observed, DriverError> {
        let vlans = vlan::parse_show_vlan(show_vlan);
        let mut links = link::parse_show_interfaces(show_interfaces);
        let switchport = match switchport {
            Some(v) => Ok(v),
            None => self.eapi.run_one_json("show interfaces switchport").await,
        };
        match switchport {
            Ok(v) => link::apply_switchports(&mut links, &v),
            Err(e) if e.is_unavailable() => {
                tracing::debug!(device = %self.device, error = %e, "no switchport JSON; reading running-config");
                let cmds: Vec<String> = links
                    .iter()
                    .map(|l| format!("show running-config interfaces {}", l.name))
                    .collect();
                if !cmds.is_empty() {
                    let texts = self
                        .eapi
                        .run_text(&cmds)
                        .await
                        .map_err(self.err("observe"))?;
                    link::apply_running_config(&mut links, &texts.join("\n"));
                }
            }
            Err(e) => return Err(e.into_driver(&self.device, "observe")),
        }
        Ok(Observed { vlans, links })
    }
}

#[async_trait]
impl Driver for EosDriver {
    fn platform(&self) -> Platform {
        Platform::Eos
    }

    fn capabilities(&self) -> Capabilities {
        self.caps
    }

    fn plan_rules(&self) -> PlanRules {
        // VLAN 1 cannot be deleted on EOS; a trunk's native VLAN defaults to 1.
        PlanRules {
            reserved_vlans: VlanSet::from_ids(VlanId::new(1).ok()),
            default_native_vlan: VlanId::new(1).ok(),
        }
    }

    fn validate(&self, vlans: &[Vlan], links: &[Link]) -> Vec<(ResourceRef, String)> {
        validate_with(vlans, links, vlan::validate_vlan, link::validate_link)
    }

    async fn facts(&mut self) -> Result<DeviceFacts, DriverError> {
        let cmds = [
            "show hostname",
            "show interfaces",
            "show vlan",
            "show lldp neighbors detail",
            "show interfaces switchport",
        ];
        let [hostname, interfaces, vlans, detail, switchport] = match self.take_prefetched(cmds) {
            Some(values) => values.map(Some),
            None => self.optional_batch(cmds).await?,
        };
        let summary = if detail.is_none() {
            self.optional("show lldp neighbors").await?
        } else {
            None
        };
        let inputs = facts::FactsInputs {
            show_version: self.show_version.as_ref(),
            show_hostname: hostname.as_ref(),
            show_interfaces: interfaces.as_ref(),
            show_vlan: vlans.as_ref(),
            show_lldp_neighbors_detail: detail.as_ref(),
            show_lldp_neighbors: summary.as_ref(),
        };
        let mut f = facts::build_facts(&inputs, Some(now_secs()));
        let read = match (&vlans, &interfaces) {
            (Some(v), Some(i)) => self.read_from(v, i, switchport).await,
            _ => self.read().await,
        };
        self.observed.record(&mut f, read)?;
        Ok(f)
    }

    async fn observe(&mut self) -> Result<Observed, DriverError> {
        if let Some(o) = self.observed.take() {
            return Ok(o);
        }
        if let Some([vlans, interfaces, switchport]) = self.take_prefetched(READ) {
            return self.read_from(&vlans, &interfaces, Some(switchport)).await;
        }
        self.read().await
    }

    /// Configuration sessions abort a failed change whole; without them the restore covers VLANs
    /// and links only, so aggregates and addresses wait for it.
    fn applies_lag_l3(&self) -> bool {
        self.capabilities().sessions
    }

    /// The running configuration's aggregates and addresses; their own settings from the links.
    async fn observe_lag_l3(&mut self) -> Result<LagL3, DriverError> {
        let links = self.read().await?.links;
        let text = self
            .eapi
            .run_text(&["show running-config".to_owned()])
            .await
            .map_err(self.err("observe"))?;
        let text = text.concat();
        let (lags, l3) = crate::lag_cli::parse_running_config(
            &text,
            &links,
            &crate::lag_cli::EOS,
            &["Management0", "Management1"],
        );
        Ok(LagL3 { lags, l3 })
    }

    /// `show port-channel summary` as text: its flag table is the one IOS and NX-OS print. A device
    /// that does not answer it (an eAPI without the command) reports no member states.
    async fn lag_members(&mut self) -> Result<Vec<crate::lag_state::LagMembers>, DriverError> {
        match self
            .eapi
            .run_text(&["show port-channel summary".to_owned()])
            .await
        {
            Ok(text) => Ok(crate::lag_state::parse_bundle_summary(&text.concat())),
            Err(e) if e.is_unavailable() => {
                tracing::debug!(device = %self.device, error = %e, "show port-channel summary unavailable: no member states");
                Ok(Vec::new())
            }
            Err(e) => Err(e.into_driver(&self.device, "facts")),
        }
    }

    /// The plan's lines: rendered from the plan alone, whatever the device holds.
    fn rendered_ahead(&self, plan: &Plan) -> Option<Vec<String>> {
        match plan.is_empty() {
            true => Some(Vec::new()),
            false => self.render(plan).ok(),
        }
    }

    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        self.observed.forget();
        self.prefetched.clear();
        self.state.ensure_idle(&self.device)?;
        if plan.is_empty() {
            // Nothing to change: nothing is sent, nothing is opened.
            return Ok(Staged::default());
        }
        let lines = self.render(plan)?;
        let needs_pre = !(self.caps.sessions && self.caps.confirmed_commit);
        let pre = if needs_pre {
            Some(self.read().await?)
        } else {
            None
        };
        if self.caps.sessions {
            let name = self.session_name();
            let cmds = config::session_stage_commands(&name, &lines);
            let out = match self.eapi.run_text(&cmds).await {
                Ok(out) => out,
                Err(e) => {
                    // Nothing in a session is active; throw the session away.
                    if let Err(abort) = self
                        .eapi
                        .run_json(&[config::session_abort_command(&name)])
                        .await
                    {
                        tracing::warn!(device = %self.device, session = %name, error = %abort, "session abort after a failed stage failed");
                    }
                    return Err(e.into_driver(&self.device, "stage"));
                }
            };
            let diff = out.get(lines.len() + 1).cloned().unwrap_or_default();
            self.state = State::Staged(Pending {
                plan: plan.clone(),
                lines: lines.clone(),
                session: Some(name),
                pre,
                timed: false,
            });
            Ok(Staged {
                diff,
                rendered: lines,
            })
        } else {
            let diff = lines.join("\n");
            self.state = State::Staged(Pending {
                plan: plan.clone(),
                lines: lines.clone(),
                session: None,
                pre,
                timed: false,
            });
            Ok(Staged {
                diff,
                rendered: lines,
            })
        }
    }

    async fn discard(&mut self) -> Result<(), DriverError> {
        match std::mem::take(&mut self.state) {
            State::Idle => Ok(()),
            State::Staged(p) => match &p.session {
                Some(name) => {
                    self.eapi
                        .run_json(&[config::session_abort_command(name)])
                        .await
                        .map_err(self.err("discard"))?;
                    Ok(())
                }
                None => Ok(()),
            },
            committed @ State::Committed(_) => {
                self.state = committed;
                self.rollback().await
            }
        }
    }

    async fn commit(&mut self, options: &CommitOptions) -> Result<(), DriverError> {
        let Some(mut p) = self.state.take_staged(&self.device)? else {
            return Ok(());
        };
        tracing::info!(device = %self.device, comment = %options.comment, lines = p.lines.len(), "eos commit");
        if let Some(name) = p.session.clone() {
            let timer = self
                .caps
                .confirmed_commit
                .then_some(options.confirm_timeout);
            // The verifying reads go in the same request, after the commit.
            let mut cmds = vec![config::session_commit_command(&name, timer)];
            cmds.extend(READ.map(str::to_owned));
            match self.eapi.run_json(&cmds).await {
                Ok(values) => {
                    let reads = values.into_iter().skip(1);
                    self.prefetched.extend(READ.into_iter().zip(reads));
                }
                // A read refused after the commit took: the verification asks again.
                Err(EapiError::Command {
                    failed_index: Some(i),
                    ..
                }) if i > 0 => {}
                Err(e) => {
                    // A session commit is atomic: nothing was applied. Abort the session.
                    if let Err(abort) = self
                        .eapi
                        .run_json(&[config::session_abort_command(&name)])
                        .await
                    {
                        tracing::warn!(device = %self.device, session = %name, error = %abort, "session abort after a failed commit failed");
                    }
                    return Err(e.into_driver(&self.device, "commit"));
                }
            }
            p.timed = timer.is_some();
            self.state = State::Committed(p);
            return Ok(());
        }
        match self
            .eapi
            .run_json(&config::plain_apply_commands(&p.lines))
            .await
        {
            Ok(_) => {
                self.state = State::Committed(p);
                Ok(())
            }
            Err(e) => {
                // Commands before the failed one are active: put the device back now.
                let restored = self.restore(&p).await;
                let err = e.into_driver(&self.device, "commit");
                if !matches!(err, DriverError::Rejected { .. }) {
                    tracing::error!(device = %self.device, restored = ?restored.as_ref().map_err(|e| e.to_string()), "commit failed");
                    return Err(err);
                }
                Err(err.with_note(restore_note(&restored, "command(s)")))
            }
        }
    }

    fn persistence(&self) -> crate::driver::Persistence {
        if self.write_memory {
            crate::driver::Persistence::saved("write memory")
        } else {
            crate::driver::Persistence::not_saved("eos_write_memory or save_config: false")
        }
    }

    async fn confirm(&mut self) -> Result<(), DriverError> {
        let Some(p) = self.state.take_committed(&self.device)? else {
            return Ok(());
        };
        let mut cmds = Vec::new();
        if let (true, Some(name)) = (p.timed, &p.session) {
            cmds.push(config::session_commit_command(name, None));
        }
        if self.write_memory {
            cmds.push("write memory".to_owned());
        }
        // With sessions, the listing for the clean-up of abandoned ones goes in the same request.
        let listed = p.session.is_some().then_some(cmds.len());
        if listed.is_some() {
            cmds.push("show configuration sessions".to_owned());
        }
        if cmds.is_empty() {
            return Ok(());
        }
        match self.eapi.run_json(&cmds).await {
            Ok(mut values) => {
                if let Some(sessions) = listed.and_then(|i| values.get_mut(i)).map(std::mem::take) {
                    self.abort_abandoned_sessions(&sessions).await;
                }
                Ok(())
            }
            Err(EapiError::Command {
                failed_index: Some(i),
                ..
            }) if Some(i) == listed => {
                tracing::warn!(device = %self.device, "could not list configuration sessions to abort abandoned ones");
                Ok(())
            }
            Err(e) => {
                self.state = State::Committed(p);
                Err(e.into_driver(&self.device, "confirm"))
            }
        }
    }

    async fn rollback(&mut self) -> Result<(), DriverError> {
        match std::mem::take(&mut self.state) {
            State::Idle => Ok(()),
            staged @ State::Staged(_) => {
                self.state = staged;
                self.discard().await
            }
            State::Committed(p) => {
                if let (true, Some(name)) = (p.timed, &p.session) {
                    // Aborting a session under a commit timer restores the configuration before it.
                    self.eapi
                        .run_json(&[config::session_abort_command(name)])
                        .await
                        .map_err(self.err("rollback"))?;
                    return Ok(());
                }
                let n = self.restore(&p).await?;
                tracing::info!(device = %self.device, commands = n, "eos rolled back from the recorded pre-state");
                Ok(())
            }
        }
    }

    async fn close(&mut self) -> Result<(), DriverError> {
        if let State::Staged(_) = self.state {
            self.discard().await?;
        }
        Ok(())
    }

    async fn settle_pending(&mut self, keep: bool) -> Result<Settled, DriverError> {
        if !self.caps.confirmed_commit {
            return Ok(Settled::Nothing);
        }
        let sessions = match self.prefetched.remove("show configuration sessions detail") {
            Some(v) => v,
            None => self
                .eapi
                .run_one_json("show configuration sessions detail")
                .await
                .map_err(self.err("recover"))?,
        };
        // One at a time: the node lock leaves at most the one a dead run committed.
        let Some(name) = config::timed_sessions(&sessions).into_iter().next() else {
            return Ok(Settled::Nothing);
        };
        self.observed.forget();
        self.prefetched.clear();
        let cmd = if keep {
            config::session_commit_command(&name, None)
        } else {
            config::session_abort_command(&name)
        };
        let mut cmds = vec![cmd.clone()];
        if keep && self.write_memory {
            cmds.push("write memory".to_owned());
        }
        self.eapi
            .run_json(&cmds)
            .await
            .map_err(self.err("recover"))?;
        tracing::info!(device = %self.device, session = %name, "{cmd}");
        Ok(if keep {
            Settled::Confirmed(cmd)
        } else {
            Settled::Reverted(cmd)
        })
    }
}

#[cfg(test)]
mod tests;
