//! Cisco IOS / IOS-XE over the SSH CLI (docs/design.md §4): glue between the [`Driver`] trait and the pure
//! parsers and renderers in `facts.rs`, `vlan.rs`, `link.rs` and `config.rs`.
//!
//! ```text
//!   connect ─▶ SSH shell (ios platform: paging off, echo/CRLF handled) ─▶ enable (enable_secret)
//!
//!   observe  = show vlan brief + show running-config (+ show interfaces for MTU, when answered)
//!   stage    = record the pre-state (the same reads) + render; diff = the rendered lines
//!   commit   = configure terminal, each line checked for `% ` errors, leave config mode
//!              (`configure terminal revert timer N` when the device has an archive: archive.rs)
//!              └ any failure: restore (below)
//!   confirm  = `configure confirm` when the timer was armed; `write memory` unless the target
//!              option `save_config: false`
//!   rollback = restore: `configure revert now` when armed, then re-read, send
//!              config::render_revert (the exact inverse) for anything left, verify nothing is
//!   discard  = nothing was sent: forget the staged change
//! ```
//!
//! IOS has no candidate. Its confirmed commit is the archive's revert timer (Configuration Rollback
//! Confirmed Change), found per device at connect (`show archive`): with it a gateway that dies
//! mid-change leaves the device to put its configuration back by itself when the timer expires; a
//! confirmed change still pending at connect (left by a dead session) is settled by the recovery of
//! its journal (`settle_pending`: `configure confirm` when the device holds the whole change,
//! `configure revert now` otherwise), or reverted before anything is staged. Without an archive the exact inverse is the only way back. Quirks handled by the
//! shell and here: no `end` on fake-switches (the shell falls back to `exit`), echoed commands, CRLF,
//! `terminal length 0` only after enable, empty answers to `show interfaces` / lldp / cdp.
//! `show ip interface brief` is never sent (it kills fake-switches' session).

pub mod archive;
pub mod config;
pub mod facts;
pub mod link;
pub mod vlan;

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use netgw_models::facts::{DeviceFacts, InterfaceFacts};
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, LinkMode, Vlan, VlanId};

use crate::cli_conn::CliConn;
use crate::driver::{
    Capabilities, Change, CommitOptions, Driver, DriverError, ErrorKind, LagL3, Observed,
    ObservedOnce, Platform, Settled, Staged, restore_note, validate_with,
};
use crate::target::DeviceTarget;
use crate::transport::ssh::PlatformKind;
use config::DeviceState;

pub use crate::driver::RenderError;

/// A change in progress.
#[derive(Debug, Clone)]
struct Pending {
    plan: Plan,
    lines: Vec<String>,
    pre: DeviceState,
    /// The device's revert timer runs for this change (`configure terminal revert timer`).
    armed: bool,
}

type State = Change<Pending>;

/// One SSH CLI session with one IOS / IOS-XE device.
#[derive(Debug)]
pub struct IosDriver {
    device: String,
    /// Kept to reconnect when the session dies mid-change (IOS applies lines as they arrive).
    target: DeviceTarget,
    conn: CliConn,
    save_config: bool,
    /// The device has a configuration archive: changes go under its revert timer.
    archive: bool,
    /// A confirmed change a dead session left pending, found at connect and not yet settled.
    stale: bool,
    state: State,
    observed: ObservedOnce,
}

impl IosDriver {
    /// Connect, open the CLI, enter privileged mode. `confirm` runs `write memory` unless option
    /// `save_config: false`.
    pub async fn connect(target: &DeviceTarget) -> Result<Self, DriverError> {
        let save_config = target.save_config()?;
        let mut conn = CliConn::connect(target, PlatformKind::Ios).await?;
        let (archive, stale) = find_archive(&mut conn).await?;
        Ok(IosDriver {
            observed: ObservedOnce::default(),
            device: target.name.clone(),
            target: target.clone(),
            conn,
            save_config,
            archive,
            stale,
            state: State::Idle,
        })
    }

    /// A session with a recorded device (`transport::replay`), the target's options applied as in
    /// [`IosDriver::connect`].
    #[cfg(feature = "replay")]
    pub fn replay(
        target: &DeviceTarget,
        rec: crate::transport::replay::Recording,
    ) -> Result<Self, DriverError> {
        Ok(IosDriver {
            observed: ObservedOnce::default(),
            device: target.name.clone(),
            target: target.clone(),
            conn: CliConn::replay(&target.name, rec),
            save_config: target.save_config()?,
            // No recording holds an archive session (`settle_archive` at connect): the exact-inverse
            // path, as on a device without one.
            archive: false,
            stale: false,
            state: State::Idle,
        })
    }

    /// Run a read-only `show` command (tests read the device back with it).
    pub async fn show(&mut self, cmd: &str) -> Result<String, DriverError> {
        if !cmd.starts_with("show ") || config::check_lines(&[cmd.to_owned()]).is_err() {
            return Err(DriverError::Config {
                device: self.device.clone(),
                message: format!("not a plain show command: {cmd:?}"),
            });
        }
        self.conn.run("show", cmd).await
    }

    fn render_err(&self, e: RenderError) -> DriverError {
        DriverError::Config {
            device: self.device.clone(),
            message: e.to_string(),
        }
    }

    /// The device as configured, and as the planner sees it.
    async fn read(&mut self) -> Result<(DeviceState, Observed), DriverError> {
        self.conn.prefetch("observe", &READ).await?;
        let vlans = self.conn.run("observe", "show vlan brief").await?;
        let run = self.conn.run("observe", "show running-config").await?;
        let interfaces = self.conn.optional("show interfaces").await?;
        let interfaces = interfaces.as_deref().map(facts::parse_show_interfaces);
        Ok(observed_from(&vlans, &run, &mtus(interfaces.as_ref())))
    }

    /// Take what `p.plan` touched back to `p.pre`; verify by reading back. Returns the lines sent.
    /// A session lost mid-change (lines already sent are active) is reopened once to restore.
    /// With the revert timer armed the device's own `configure revert now` goes first; the exact
    /// inverse then covers whatever the archive did not hold.
    async fn restore(&mut self, p: &Pending) -> Result<usize, DriverError> {
        let (mut now, _) = match self.read().await {
            Ok(r) => r,
            Err(e) if matches!(e.kind(), ErrorKind::Transport | ErrorKind::Timeout) => {
                tracing::warn!(device = %self.device, error = %e, "session lost during the change: reconnecting to restore the state before it");
                self.conn = CliConn::connect(&self.target, PlatformKind::Ios).await?;
                self.read().await?
            }
            Err(e) => return Err(e),
        };
        let mut sent = 0;
        if p.armed {
            let out = self.conn.run("rollback", "configure revert now").await?;
            tracing::info!(device = %self.device, answer = %out.trim(), "configure revert now");
            now = self.read().await?.0;
            sent = 1;
        }
        let lines = config::render_revert(&p.plan, &p.pre, &now).map_err(|e| self.render_err(e))?;
        if lines.is_empty() {
            return Ok(sent);
        }
        self.conn.config("rollback", &lines).await?;
        let (after, _) = self.read().await?;
        let left =
            config::render_revert(&p.plan, &p.pre, &after).map_err(|e| self.render_err(e))?;
        if !left.is_empty() {
            return Err(DriverError::Verify {
                device: self.device.clone(),
                remaining: left,
            });
        }
        Ok(sent + lines.len())
    }
}

/// Whether the device has a configuration archive (so changes can go under its revert timer), and
/// whether a confirmed change is already waiting (a dead session armed it; the node lock keeps other
/// netgw runs out). That one is settled before this session changes anything (`settle_pending`):
/// left alone, its timer would expire in the middle of this run's change and take that back too.
/// What [`IosDriver::read`] asks (the state a plan, a pre-state and a verification need).
const READ: [&str; 3] = ["show vlan brief", "show running-config", "show interfaces"];

/// What facts and the first observe ask, in one write: the facts' reads (`show lldp neighbors`
/// follows only when the detail lacks the local port) and [`READ`].
const FACTS: [&str; 7] = [
    "show version",
    "show inventory",
    "show interfaces",
    "show vlan brief",
    "show lldp neighbors detail",
    "show cdp neighbors detail",
    "show running-config",
];

async fn find_archive(conn: &mut CliConn) -> Result<(bool, bool), DriverError> {
    let Some(show) = conn.optional("show archive").await? else {
        return Ok((false, false));
    };
    if !archive::archive_configured(&show) {
        return Ok((false, false));
    }
    let timer = conn
        .optional("show archive config rollback timer")
        .await?
        .unwrap_or_default();
    let stale = archive::rollback_pending(&timer);
    if stale {
        tracing::warn!(device = %conn.device, "an unconfirmed change (revert timer running) was left by an earlier session");
    }
    Ok((true, stale))
}

/// The device as configured and as the planner sees it, from `show vlan brief`, `show running-config`
/// and the MTUs `show interfaces` gave ([`mtus`]).
fn observed_from(vlans: &str, run: &str, mtu: &BTreeMap<String, u32>) -> (DeviceState, Observed) {
    let rows = vlan::parse_show_vlan_brief(vlans);
    let state = DeviceState::new(&rows, link::parse_running_config_interfaces(run));
    let observed = state.observed(&rows, mtu);
    (state, observed)
}

/// Each interface's MTU from parsed `show interfaces` (none without it).
fn mtus(interfaces: Option<&BTreeMap<String, InterfaceFacts>>) -> BTreeMap<String, u32> {
    interfaces
        .into_iter()
        .flatten()
        .filter_map(|(n, f)| f.mtu.map(|m| (n.clone(), m)))
        .collect()
}

/// IOS plan rules: VLAN 1 and 1002-1005 are reserved; a trunk's native VLAN defaults to 1.
pub fn ios_plan_rules() -> PlanRules {
    PlanRules {
        reserved_vlans: vlan::reserved_vlans(),
        default_native_vlan: VlanId::new(1).ok(),
    }
}

#[async_trait]
impl Driver for IosDriver {
    fn platform(&self) -> Platform {
        Platform::Ios
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            candidate: false,
            confirmed_commit: self.archive,
            sessions: false,
            rollback: false,
            device_diff: false,
            rollback_retry: true,
        }
    }

    fn plan_rules(&self) -> PlanRules {
        ios_plan_rules()
    }

    fn validate(&self, vlans: &[Vlan], links: &[Link]) -> Vec<(ResourceRef, String)> {
        validate_with(vlans, links, vlan::validate_vlan, link::validate_link)
    }

    async fn facts(&mut self) -> Result<DeviceFacts, DriverError> {
        self.conn.prefetch("facts", &FACTS).await?;
        let version = self.conn.optional("show version").await?;
        let inventory = self.conn.optional("show inventory").await?;
        let interfaces = self.conn.optional("show interfaces").await?;
        let running = if interfaces.is_none() {
            self.conn.optional("show running-config").await?
        } else {
            None
        };
        let vlans = self.conn.optional("show vlan brief").await?;
        let lldp = self.conn.optional("show lldp neighbors detail").await?;
        // Older releases print no `Local Intf:` in the detail; the summary gives the local ports.
        let lldp_summary = match &lldp {
            Some(t) if t.contains("Chassis id:") && !t.contains("Local Intf:") => {
                self.conn.optional("show lldp neighbors").await?
            }
            _ => None,
        };
        let cdp = self.conn.optional("show cdp neighbors detail").await?;
        let inputs = facts::FactsInputs {
            show_version: version.as_deref(),
            show_inventory: inventory.as_deref(),
            show_interfaces: interfaces.as_deref(),
            show_vlan_brief: vlans.as_deref(),
            show_lldp_neighbors_detail: lldp.as_deref(),
            show_lldp_neighbors: lldp_summary.as_deref(),
            show_cdp_neighbors_detail: cdp.as_deref(),
            show_running_config: running.as_deref(),
        };
        let mut f = facts::build_facts(&inputs);
        // The planner's read, from the answers the facts step already has (`show interfaces` parsed
        // once: the facts' interfaces are its parse whenever it was answered).
        let mtu = mtus(interfaces.is_some().then_some(&f.interfaces));
        let read = match (&vlans, running) {
            (Some(v), Some(run)) => Ok(observed_from(v, &run, &mtu).1),
            (Some(v), None) => self
                .conn
                .run("observe", "show running-config")
                .await
                .map(|run| observed_from(v, &run, &mtu).1),
            (None, _) => self.read().await.map(|(_, o)| o),
        };
        self.observed.record(&mut f, read)?;
        Ok(f)
    }

    /// With the archive's revert timer the device takes a failed change back whole; without it the
    /// exact inverse covers VLANs and links only, so aggregates and addresses wait for it.
    fn applies_lag_l3(&self) -> bool {
        self.archive
    }

    /// The running configuration's aggregates and addresses; their own settings from the links.
    async fn observe_lag_l3(&mut self) -> Result<LagL3, DriverError> {
        let links = self.read().await?.1.links;
        let text = self.conn.run("observe", "show running-config").await?;
        let syn = &crate::lag_cli::IOS;
        let (lags, l3) = crate::lag_cli::parse_running_config(&text, &links, syn, &[]);
        Ok(LagL3 { lags, l3 })
    }

    async fn lag_members(&mut self) -> Result<Vec<crate::lag_state::LagMembers>, DriverError> {
        let text = self.conn.run("facts", "show etherchannel summary").await?;
        Ok(crate::lag_state::parse_bundle_summary(&text))
    }

    async fn observe(&mut self) -> Result<Observed, DriverError> {
        if let Some(o) = self.observed.take() {
            return Ok(o);
        }
        Ok(self.read().await?.1)
    }

    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        if self.stale {
            // Nobody settled the dead session's change: its timer must not take this one back.
            self.settle_pending(false).await?;
        }
        self.observed.forget();
        self.state.ensure_idle(&self.device)?;
        if plan.is_empty() {
            return Ok(Staged::default());
        }
        // Rendered once before reading anything, so a plan IOS cannot take fails without a session.
        let mut lines =
            config::render_plan(plan, &BTreeSet::new()).map_err(|e| self.render_err(e))?;
        let (pre, _) = self.read().await?;
        let aggregates = plan.lags.iter().filter_map(|c| c.settings.as_ref());
        let to_trunk: Vec<&str> = plan
            .links
            .iter()
            .chain(aggregates)
            .filter(|c| {
                c.changed("mode")
                    && c.after.mode == Some(LinkMode::Trunk)
                    && pre
                        .interfaces
                        .get(&c.after.name)
                        .is_none_or(|i| i.encapsulation.is_none())
            })
            .map(|c| c.after.name.as_str())
            .collect();
        if !to_trunk.is_empty() {
            let sps = match self.conn.optional("show interfaces switchport").await? {
                Some(t) => link::parse_show_interfaces_switchport(&t),
                None => Vec::new(),
            };
            let encap_lines = pre.interfaces.values().any(|i| i.encapsulation.is_some());
            let dot1q = link::needs_dot1q_encapsulation(&to_trunk, &sps, encap_lines);
            if !dot1q.is_empty() {
                lines = config::render_plan(plan, &dot1q).map_err(|e| self.render_err(e))?;
            }
        }
        self.state = State::Staged(Pending {
            plan: plan.clone(),
            lines: lines.clone(),
            pre,
            armed: false,
        });
        Ok(Staged {
            diff: lines.join("\n"),
            rendered: lines,
        })
    }

    fn undoes_beyond_plan(&self, rendered: &[String]) -> bool {
        !link::encapsulation_added(rendered).is_empty()
    }

    /// `back`, then the encapsulation the undone change gave a port that is no trunk any more:
    /// its inverse from the model alone would leave `switchport trunk encapsulation dot1q` behind.
    async fn stage_undo(
        &mut self,
        back: &Plan,
        rendered: &[String],
    ) -> Result<Staged, DriverError> {
        let mut staged = self.stage(back).await?;
        let added = link::encapsulation_added(rendered);
        if added.is_empty() {
            return Ok(staged);
        }
        let now = match &self.state {
            State::Staged(p) => p.pre.clone(),
            _ => self.read().await?.0,
        };
        let extra = link::render_encapsulation_undo(&added, back, &now.interfaces);
        if extra.is_empty() {
            return Ok(staged);
        }
        staged.rendered.extend(extra.iter().cloned());
        staged.diff = staged.rendered.join("\n");
        match &mut self.state {
            State::Staged(p) => p.lines.extend(extra),
            _ => {
                self.state = State::Staged(Pending {
                    plan: back.clone(),
                    lines: extra,
                    pre: now,
                    armed: false,
                })
            }
        }
        Ok(staged)
    }

    async fn discard(&mut self) -> Result<(), DriverError> {
        match std::mem::take(&mut self.state) {
            State::Idle | State::Staged(_) => Ok(()),
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
        tracing::info!(device = %self.device, comment = %options.comment, lines = p.lines.len(), archive = self.archive, "ios commit");
        // Committed before the first line goes: a commit stopped mid-way (node timeout, abort)
        // leaves the driver knowing what its rollback must undo.
        p.armed = self.archive;
        self.state = State::Committed(p.clone());
        let sent = if self.archive {
            let minutes = archive::revert_minutes(options.confirm_timeout);
            let enter = archive::enter_with_timer(minutes);
            let (armed, r) = self
                .conn
                .config_entered_with("commit", &enter, &p.lines, &READ)
                .await;
            p.armed = armed;
            self.state = State::Committed(p.clone());
            r
        } else {
            self.conn.config_then_read("commit", &p.lines, &READ).await
        };
        match sent {
            Ok(()) => Ok(()),
            Err(e) => {
                // Lines before the failed one are active: put the device back now.
                let restored = self.restore(&p).await;
                self.state = State::Idle;
                if !matches!(e, DriverError::Rejected { .. }) {
                    tracing::error!(device = %self.device, restored = ?restored.as_ref().map_err(|e| e.to_string()), "ios commit failed");
                }
                // The report must say whether the device was put back (the lines sent before
                // the failure are active on IOS).
                let note = match (&e, &restored) {
                    (DriverError::Transport { .. }, Err(r)) => format!(
                        "restoring the state before the change FAILED ({r}): the device may hold part of the change"
                    ),
                    _ => restore_note(&restored, "line(s)"),
                };
                Err(e.with_note(note))
            }
        }
    }

    fn persistence(&self) -> crate::driver::Persistence {
        if self.save_config {
            crate::driver::Persistence::saved("write memory")
        } else {
            crate::driver::Persistence::not_saved("save_config: false")
        }
    }

    async fn confirm(&mut self) -> Result<(), DriverError> {
        let Some(p) = self.state.take_committed(&self.device)? else {
            return Ok(());
        };
        if p.armed {
            let out = match self.conn.run("confirm", "configure confirm").await {
                Ok(o) => o,
                Err(e) => {
                    self.state = State::Committed(p);
                    return Err(e);
                }
            };
            if out.contains(archive::NOT_PENDING) {
                // The timer ran out first: the device holds the configuration from before.
                return Err(DriverError::Rejected {
                    device: self.device.clone(),
                    step: "confirm",
                    message: format!(
                        "`configure confirm`: {}: the revert timer expired before the confirmation and the device put the configuration from before the change back",
                        out.trim()
                    ),
                });
            }
        }
        if self.save_config
            && let Err(e) = self.conn.run("confirm", "write memory").await
        {
            self.state = State::Committed(p);
            return Err(e);
        }
        Ok(())
    }

    async fn rollback(&mut self) -> Result<(), DriverError> {
        match std::mem::take(&mut self.state) {
            State::Idle | State::Staged(_) => Ok(()),
            State::Committed(p) => match self.restore(&p).await {
                Ok(n) => {
                    tracing::info!(device = %self.device, lines = n, "ios rolled back from the recorded pre-state");
                    Ok(())
                }
                Err(e) => {
                    self.state = State::Committed(p);
                    Err(e)
                }
            },
        }
    }

    async fn close(&mut self) -> Result<(), DriverError> {
        if let State::Staged(_) = self.state {
            self.state = State::Idle;
        }
        self.conn.close().await
    }

    async fn settle_pending(&mut self, keep: bool) -> Result<Settled, DriverError> {
        if !self.stale {
            return Ok(Settled::Nothing);
        }
        self.observed.forget();
        let cmd = if keep {
            "configure confirm"
        } else {
            "configure revert now"
        };
        let out = self.conn.run("recover", cmd).await?;
        self.stale = false;
        tracing::info!(device = %self.device, answer = %out.trim(), "{cmd}");
        if out.contains(archive::NOT_PENDING) {
            // The timer ran out between connect and now: the device already put the old state back.
            return Ok(Settled::Nothing);
        }
        if keep && self.save_config {
            self.conn.run("recover", "write memory").await?;
        }
        Ok(if keep {
            Settled::Confirmed(cmd.into())
        } else {
            Settled::Reverted(cmd.into())
        })
    }
}
