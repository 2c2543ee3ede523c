//! Cisco NX-OS over the SSH CLI (docs/design.md §4): `| json` (NX-API shapes) where the device answers it,
//! text parsers otherwise; changes inside a named checkpoint. Glue only: parsing and rendering live in
//! `facts.rs`, `vlan.rs`, `link.rs`, `config.rs` (and the IOS renderers, same syntax).
//!
//! ```text
//!   connect ─▶ SSH shell (nxos platform: paging off)
//!   read X   = `X | json` ─ parsed JSON? ─▶ NX-API parser
//!                          └ otherwise (older release, simulator) ─▶ `X` text ─▶ text parser
//!   stage    = render; diff = the rendered lines (nothing sent)
//!   commit   = checkpoint netgw-ID, configure terminal + lines (each checked), end
//!              └ failure: rollback running-config checkpoint netgw-ID, no checkpoint netgw-ID
//!   confirm  = [copy running-config startup-config unless save_config: false], no checkpoint netgw-ID
//!   rollback = rollback running-config checkpoint netgw-ID, no checkpoint netgw-ID
//!              └ session lost (NX-OS applies lines as they arrive; the checkpoint lives on the
//!                device): reconnect once and roll back over the new session
//! ```

pub mod answer;
pub mod config;
pub mod facts;
pub mod link;
pub mod vlan;

use async_trait::async_trait;
use netgw_models::facts::DeviceFacts;
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, Vlan, VlanId};
use serde_json::Value;

use crate::cli_conn::CliConn;
use crate::driver::{
    Capabilities, CommitOptions, Driver, DriverError, ErrorKind, LagL3, Observed, ObservedOnce,
    Platform, Staged, validate_with,
};
use crate::target::DeviceTarget;
use crate::transport::ssh::PlatformKind;
use facts::Answer;

/// An answer that is really a refusal: simulators and old releases print these without a `%`.
fn unanswered(t: &str) -> bool {
    let t = t.trim();
    t.is_empty()
        || t.starts_with("Unknown command")
        || t.starts_with("% ")
        || t.contains("% Invalid")
        || t.starts_with("Syntax error")
}

/// An owned answer.
#[derive(Debug, Clone)]
pub enum Reply {
    Json(Value),
    Text(String),
}

impl Reply {
    pub fn as_answer(&self) -> Answer<'_> {
        match self {
            Reply::Json(v) => Answer::Json(v),
            Reply::Text(t) => Answer::Text(t),
        }
    }
}

/// One SSH CLI session with one NX-OS device.
#[derive(Debug)]
pub struct NxosDriver {
    device: String,
    /// Kept to reconnect when the session dies mid-change, so the rollback can still be sent.
    target: DeviceTarget,
    conn: CliConn,
    save_config: bool,
    /// Cleared after the first `| json` the device does not answer, so later reads go straight to text.
    json: bool,
    staged: Option<(Plan, Vec<String>)>,
    /// The checkpoint of a commit not yet confirmed or rolled back.
    checkpoint: Option<String>,
    /// Set while `confirm` runs: a stop there may leave the checkpoint already deleted.
    confirming: bool,
    seq: u32,
    observed: ObservedOnce,
}

/// What [`NxosDriver::observe_inner`] reads when the device answers `| json`.
const OBSERVE_JSON: [&str; 3] = [
    "show vlan brief | json",
    "show interface | json",
    "show interface switchport | json",
];

/// What facts and the first observe read when the device answers `| json`, in one write.
const FACTS_JSON: [&str; 7] = [
    "show version | json",
    "show hostname",
    "show inventory | json",
    "show interface | json",
    "show vlan brief | json",
    "show lldp neighbors detail",
    "show interface switchport | json",
];

/// The user checkpoints, for the clean-up after a confirm.
const CHECKPOINTS: &str = "show checkpoint summary user";

impl NxosDriver {
    /// Connect and open the CLI. `confirm` copies running to startup unless option `save_config: false`.
    pub async fn connect(target: &DeviceTarget) -> Result<Self, DriverError> {
        let conn = CliConn::connect(target, PlatformKind::Nxos).await?;
        Self::on(target, conn)
    }

    /// A session with a recorded device (`transport::replay`), the target's options applied as in
    /// [`NxosDriver::connect`].
    #[cfg(feature = "replay")]
    pub fn replay(
        target: &DeviceTarget,
        rec: crate::transport::replay::Recording,
    ) -> Result<Self, DriverError> {
        Self::on(target, CliConn::replay(&target.name, rec))
    }

    fn on(target: &DeviceTarget, conn: CliConn) -> Result<Self, DriverError> {
        let save_config = target.save_config()?;
        Ok(NxosDriver {
            observed: ObservedOnce::default(),
            device: target.name.clone(),
            target: target.clone(),
            conn,
            save_config,
            json: true,
            staged: None,
            checkpoint: None,
            confirming: false,
            seq: 0,
        })
    }

    /// `cmd | json` when answered, else each text form in turn; `None` when nothing answered.
    pub async fn read(
        &mut self,
        cmd: &str,
        text_forms: &[&str],
    ) -> Result<Option<Reply>, DriverError> {
        if self.json {
            if let Some(t) = self.conn.optional(&format!("{cmd} | json")).await? {
                match answer::decode(cmd, t.trim()) {
                    Ok(v @ Value::Object(_)) => return Ok(Some(Reply::Json(v))),
                    _ => {
                        tracing::debug!(device = %self.device, command = cmd, "no `| json` answer; using text output");
                        self.json = false;
                    }
                }
            } else {
                self.json = false;
            }
        }
        for form in text_forms {
            if let Some(t) = self.conn.optional(form).await?
                && !unanswered(&t)
            {
                return Ok(Some(Reply::Text(t)));
            }
        }
        Ok(None)
    }

    /// The reads [`NxosDriver::observe_inner`] sends (in JSON), for one write.
    fn observe_reads(&self) -> &'static [&'static str] {
        if self.json { &OBSERVE_JSON } else { &[] }
    }

    async fn observe_inner(&mut self) -> Result<Observed, DriverError> {
        self.conn.prefetch("observe", self.observe_reads()).await?;
        let vlans = self
            .read("show vlan brief", &["show vlan brief", "show vlan"])
            .await?;
        let interfaces = self.read("show interface", &["show interface"]).await?;
        self.observe_with(vlans.as_ref(), interfaces.as_ref()).await
    }

    /// The planner's view from `show vlan brief` and `show interface` as already read (the facts step
    /// has them), plus `show interface switchport`.
    async fn observe_with(
        &mut self,
        vlans: Option<&Reply>,
        interfaces: Option<&Reply>,
    ) -> Result<Observed, DriverError> {
        let vlans = match vlans {
            Some(Reply::Json(v)) => vlan::parse_show_vlan_brief_json(v),
            Some(Reply::Text(t)) => {
                crate::ios::vlan::vlans_from_rows(&crate::ios::vlan::parse_show_vlan_brief(t))
            }
            None => Vec::new(),
        };
        let mut links = match interfaces {
            Some(Reply::Json(v)) => link::parse_show_interface_json(v),
            Some(Reply::Text(t)) => link::links_from_interface_text(t),
            None => Vec::new(),
        };
        let sps = match self
            .read(
                "show interface switchport",
                &["show interface switchport", "show interfaces switchport"],
            )
            .await?
        {
            Some(Reply::Json(v)) => link::parse_show_interface_switchport_json(&v),
            Some(Reply::Text(t)) => crate::ios::link::parse_show_interfaces_switchport(&t),
            None => Vec::new(),
        };
        link::apply_switchports(&mut links, &sps);
        Ok(Observed { vlans, links })
    }

    fn new_checkpoint(&mut self) -> Result<String, DriverError> {
        self.seq += 1;
        let stamped = crate::stamp::name(self.seq);
        config::checkpoint_name(stamped.trim_start_matches("netgw-")).ok_or_else(|| {
            DriverError::Config {
                device: self.device.clone(),
                message: "bad checkpoint name".into(),
            }
        })
    }

    /// Housekeeping after a confirmed change: delete the `netgw-` checkpoints a killed gateway left
    /// behind ([`config::abandoned_checkpoints`]). The change is already in place, so a failure here is
    /// a warning, never the run's result.
    async fn delete_abandoned_checkpoints(&mut self) {
        let summary = match self.conn.optional(CHECKPOINTS).await {
            Ok(Some(t)) => t,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(device = %self.device, error = %e, "could not list checkpoints to delete abandoned ones");
                return;
            }
        };
        let names = config::parse_checkpoint_names(&summary);
        for name in config::abandoned_checkpoints(&names, crate::stamp::unix_now()) {
            match self
                .conn
                .run("confirm", &config::checkpoint_delete(&name))
                .await
            {
                Ok(_) => {
                    tracing::info!(device = %self.device, checkpoint = %name, "deleted a checkpoint an interrupted run left behind")
                }
                Err(e) => {
                    tracing::warn!(device = %self.device, error = %e, checkpoint = %name, "could not delete an abandoned checkpoint");
                    return;
                }
            }
        }
    }

    /// Whether the device no longer lists checkpoint `name` (false when it cannot be read: then
    /// nothing is assumed).
    async fn checkpoint_gone(&mut self, name: &str) -> bool {
        match self.conn.optional(CHECKPOINTS).await {
            Ok(Some(summary)) => !config::parse_checkpoint_names(&summary)
                .iter()
                .any(|n| n == name),
            Ok(None) | Err(_) => false,
        }
    }

    /// Roll the running configuration back to `name` and delete it. NX-OS applies configuration lines
    /// as they arrive, so a session lost in the middle of a change leaves part of it active; the
    /// checkpoint is kept by the device, not the session: reconnect once and roll back from there.
    async fn rollback_to(&mut self, name: &str) -> Result<(), DriverError> {
        let cmd = config::checkpoint_rollback(name);
        let answer = match self.conn.run("rollback", &cmd).await {
            Ok(t) => t,
            Err(e) if matches!(e.kind(), ErrorKind::Transport | ErrorKind::Timeout) => {
                tracing::warn!(device = %self.device, error = %e, checkpoint = name, "session lost during the change: reconnecting to roll back");
                // The old session is dropped, not closed: closing a dead one could wait on it.
                self.conn = CliConn::connect(&self.target, PlatformKind::Nxos).await?;
                self.conn.run("rollback", &cmd).await?
            }
            Err(e) => return Err(e),
        };
        if let Some(message) = config::rollback_failure(&answer) {
            return Err(DriverError::Rejected {
                device: self.device.clone(),
                step: "rollback",
                message: format!("`{cmd}`: {message}"),
            });
        }
        // The configuration is back; a checkpoint left behind is only clutter (NX-OS keeps ten).
        if let Err(e) = self
            .conn
            .run("rollback", &config::checkpoint_delete(name))
            .await
        {
            tracing::warn!(device = %self.device, error = %e, checkpoint = name, "rolled back, but the checkpoint could not be deleted");
        }
        Ok(())
    }
}

/// NX-OS plan rules: VLAN 1 and 3968-4094 reserved; native VLAN 1.
pub fn nxos_plan_rules() -> PlanRules {
    PlanRules {
        reserved_vlans: vlan::reserved_vlans(),
        default_native_vlan: VlanId::new(1).ok(),
    }
}

#[async_trait]
impl Driver for NxosDriver {
    fn platform(&self) -> Platform {
        Platform::Nxos
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            candidate: false,
            confirmed_commit: false,
            sessions: false,
            rollback: true,
            device_diff: false,
            rollback_retry: true,
        }
    }

    fn plan_rules(&self) -> PlanRules {
        nxos_plan_rules()
    }

    fn validate(&self, vlans: &[Vlan], links: &[Link]) -> Vec<(ResourceRef, String)> {
        validate_with(vlans, links, vlan::validate_vlan, link::validate_link)
    }

    async fn facts(&mut self) -> Result<DeviceFacts, DriverError> {
        if self.json {
            self.conn.prefetch("facts", &FACTS_JSON).await?;
        }
        let version = self.read("show version", &["show version"]).await?;
        let hostname = self
            .conn
            .optional("show hostname")
            .await?
            .filter(|t| !unanswered(t));
        let inventory = self.read("show inventory", &["show inventory"]).await?;
        let interfaces = self.read("show interface", &["show interface"]).await?;
        let vlans = self
            .read("show vlan brief", &["show vlan brief", "show vlan"])
            .await?;
        let lldp = self
            .conn
            .optional("show lldp neighbors detail")
            .await?
            .filter(|t| !unanswered(t));
        let inputs = facts::FactsInputs {
            show_version: version.as_ref().map(Reply::as_answer),
            show_hostname: hostname.as_deref(),
            show_inventory: inventory.as_ref().map(Reply::as_answer),
            show_interface: interfaces.as_ref().map(Reply::as_answer),
            show_vlan_brief: vlans.as_ref().map(Reply::as_answer),
            show_lldp_neighbors_detail: lldp.as_deref(),
        };
        let mut f = facts::build_facts(&inputs);
        let read = self.observe_with(vlans.as_ref(), interfaces.as_ref()).await;
        self.observed.record(&mut f, read)?;
        Ok(f)
    }

    fn applies_lag_l3(&self) -> bool {
        true
    }

    /// The running configuration's aggregates and addresses; their own settings from the links.
    async fn observe_lag_l3(&mut self) -> Result<LagL3, DriverError> {
        let links = self.observe_inner().await?.links;
        let text = self.conn.run("observe", "show running-config").await?;
        let syn = &crate::lag_cli::NXOS;
        let (lags, l3) = crate::lag_cli::parse_running_config(&text, &links, syn, &["mgmt0"]);
        Ok(LagL3 { lags, l3 })
    }

    async fn lag_members(&mut self) -> Result<Vec<crate::lag_state::LagMembers>, DriverError> {
        let text = self.conn.run("facts", "show port-channel summary").await?;
        Ok(crate::lag_state::parse_bundle_summary(&text))
    }

    async fn observe(&mut self) -> Result<Observed, DriverError> {
        if let Some(o) = self.observed.take() {
            return Ok(o);
        }
        self.observe_inner().await
    }

    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        self.observed.forget();
        if self.staged.is_some() || self.checkpoint.is_some() {
            return Err(DriverError::Config {
                device: self.device.clone(),
                message: "a change is already staged or committed; discard, confirm or roll it back first".into(),
            });
        }
        if plan.is_empty() {
            return Ok(Staged::default());
        }
        let syn = &crate::lag_cli::NXOS;
        let rendered = crate::ios::config::render_plan_with(plan, &Default::default(), syn);
        let mut lines = crate::lag_cli::nxos_features(plan);
        lines.extend(rendered.map_err(|e| DriverError::Config {
            device: self.device.clone(),
            message: e.to_string(),
        })?);
        self.staged = Some((plan.clone(), lines.clone()));
        Ok(Staged {
            diff: lines.join("\n"),
            rendered: lines,
        })
    }

    async fn discard(&mut self) -> Result<(), DriverError> {
        self.staged = None;
        if self.checkpoint.is_some() {
            return self.rollback().await;
        }
        Ok(())
    }

    async fn commit(&mut self, options: &CommitOptions) -> Result<(), DriverError> {
        let Some((_, lines)) = self.staged.take() else {
            return Ok(());
        };
        let name = self.new_checkpoint()?;
        tracing::info!(device = %self.device, comment = %options.comment, checkpoint = %name, lines = lines.len(), "nxos commit");
        self.conn
            .run("checkpoint", &config::checkpoint_create(&name))
            .await?;
        // Recorded before the first line goes: a commit stopped mid-way (node timeout, abort)
        // leaves the driver knowing which checkpoint its rollback returns to.
        self.checkpoint = Some(name.clone());
        let reads = self.observe_reads();
        match self.conn.config_then_read("commit", &lines, reads).await {
            Ok(()) => Ok(()),
            Err(e) => {
                self.checkpoint = None;
                let note = match self.rollback_to(&name).await {
                    Ok(()) => {
                        format!("the running configuration was rolled back to checkpoint {name}")
                    }
                    Err(r) => {
                        tracing::error!(device = %self.device, error = %r, checkpoint = %name, "rollback after a failed commit failed");
                        format!(
                            "rolling back to checkpoint {name} FAILED ({r}): the device may hold part of the change"
                        )
                    }
                };
                Err(e.with_note(note))
            }
        }
    }

    fn persistence(&self) -> crate::driver::Persistence {
        if self.save_config {
            crate::driver::Persistence::saved("copy running-config startup-config")
        } else {
            crate::driver::Persistence::not_saved("save_config: false")
        }
    }

    async fn confirm(&mut self) -> Result<(), DriverError> {
        let Some(name) = self.checkpoint.clone() else {
            return Ok(());
        };
        self.confirming = true;
        if self.save_config {
            self.conn
                .run("confirm", "copy running-config startup-config")
                .await?;
        }
        // The checkpoint list the clean-up below reads goes in the same write as the deletion.
        self.conn
            .run_then_read("confirm", &config::checkpoint_delete(&name), &[CHECKPOINTS])
            .await?;
        self.checkpoint = None;
        self.confirming = false;
        self.delete_abandoned_checkpoints().await;
        Ok(())
    }

    async fn rollback(&mut self) -> Result<(), DriverError> {
        self.staged = None;
        let Some(name) = self.checkpoint.clone() else {
            return Ok(());
        };
        let rolled = self.rollback_to(&name).await;
        if rolled.is_err() && self.confirming && self.checkpoint_gone(&name).await {
            self.checkpoint = None;
            self.confirming = false;
            return Err(DriverError::AlreadyConfirmed {
                device: self.device.clone(),
                message: format!(
                    "checkpoint {name} was already deleted by the confirmation the stop interrupted: \
                     the verified change is whole on the device and stays"
                ),
            });
        }
        rolled?;
        self.checkpoint = None;
        Ok(())
    }

    async fn close(&mut self) -> Result<(), DriverError> {
        self.staged = None;
        self.conn.close().await
    }
}

#[cfg(all(test, feature = "replay"))]
mod stop_in_confirm_tests {
    use super::*;
    use crate::transport::replay::Recording;

    /// A driver whose commit made checkpoint `cp` and whose device answers as `rec` says.
    fn committed(rec: &Recording, cp: &str, confirming: bool) -> NxosDriver {
        let t = DeviceTarget::new("nx1", Platform::Nxos, "127.0.0.1");
        let mut d = NxosDriver::replay(&t, rec.clone()).unwrap();
        d.checkpoint = Some(cp.into());
        d.confirming = confirming;
        d
    }

    const CP: &str = "netgw-6745f0a1-10-1";

    /// A device without the checkpoint: the rollback to it is refused (a replayed device refuses
    /// what its recording lacks), and its summary does not list it.
    fn gone() -> Recording {
        let rec = Recording::new();
        rec.add(
            "show checkpoint summary user",
            "User Checkpoint Summary\n--------------------------------------------------------------------------------\n",
        );
        rec
    }

    #[tokio::test]
    async fn a_rollback_after_the_confirmation_landed_says_the_change_is_whole() {
        let mut d = committed(&gone(), CP, true);
        let e = d.rollback().await.unwrap_err();
        assert!(matches!(e, DriverError::AlreadyConfirmed { .. }), "{e}");
        assert!(e.to_string().contains(CP), "{e}");
        // Nothing left to undo afterwards.
        d.rollback().await.unwrap();
    }

    #[tokio::test]
    async fn outside_the_confirmation_a_missing_checkpoint_is_a_failed_rollback() {
        let mut d = committed(&gone(), CP, false);
        let e = d.rollback().await.unwrap_err();
        assert!(!matches!(e, DriverError::AlreadyConfirmed { .. }), "{e}");
    }

    #[tokio::test]
    async fn while_the_checkpoint_is_listed_the_failure_stays_a_failure() {
        // The rollback refused for another reason: the checkpoint is still there.
        let rec = Recording::new();
        rec.add(
            "show checkpoint summary user",
            format!("User Checkpoint Summary\n----\n1) {CP}:\nCreated by admin\n"),
        );
        let mut d = committed(&rec, CP, true);
        let e = d.rollback().await.unwrap_err();
        assert!(!matches!(e, DriverError::AlreadyConfirmed { .. }), "{e}");
    }
}
