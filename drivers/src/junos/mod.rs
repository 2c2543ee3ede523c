//! Juniper Junos over NETCONF (docs/design.md §4): glue between the [`Driver`] trait, the NETCONF session
//! and the pure parsers and renderers of this module.
//!
//! ```text
//!  facts    get-software-information, get-chassis-inventory, get-interface-information,
//!           get-lldp-neighbors-information, get-vlan-information | get-bridge-instance-information,
//!           get-config running (the fall-back for every RPC the device does not answer);
//!           get-lacp-interface-information for aggregate members' states (`netgw facts`, `links`)
//!  observe  get-config running + get-interface-information terse
//!  stage    lock (refused: discard-changes, unlock, lock again), get-config running (recorded
//!           pre-state), edit-config, get-configuration compare rollback 0 (or a diff computed from
//!           get-config candidate)
//!  commit   commit-configuration confirmed, log "<comment>"
//!  confirm  commit-configuration, unlock
//!  rollback cancel-commit (confirmed-commit:1.1) | edit-config of the recorded pre-state + commit
//!  discard  discard-changes, unlock
//! ```
//! Any failure discards and unlocks, and reports the device's `rpc-error`s verbatim.

pub mod config;
pub mod facts;
pub mod lag;
pub mod link;
pub mod render;
pub mod vlan;

use crate::driver::{
    Capabilities, CommitOptions, Driver, DriverError, ErrorKind, LagL3, Observed, ObservedOnce,
    Platform, Settled, Staged,
};
use crate::netconf_txn::{Dialect, NetconfTxn, TxnError};
use crate::target::DeviceTarget;
use crate::transport::netconf::ops::{CAP_CANDIDATE, CAP_CONFIRMED_COMMIT_11};
use crate::transport::netconf::{
    Datastore, NetconfError, NetconfSsh, Operation, XmlElement, connect_ssh,
};
use async_trait::async_trait;
use config::{JunosConfig, Style, detect_style_xml, parse_config, style_from_model};
use netgw_models::facts::DeviceFacts;
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, Vlan, VlanId, VlanSet};
use render::El;
use std::collections::BTreeMap;
use std::time::Duration;

/// Per-port LLDP reads one facts step may send (ports whose brief entry has no remote port id).
const MAX_LLDP_PORT_QUERIES: usize = 64;

/// NETCONF over SSH (RFC 6242 §2).
pub const DEFAULT_PORT: u16 = 830;
/// Junos' own capability, advertised by real devices (and fake-switches).
pub const CAP_JUNOS: &str = "http://xml.juniper.net/netconf/junos/1.0";

/// What `stage` recorded, for `commit`, `confirm` and `rollback`.
#[derive(Debug)]
struct StagedChange {
    plan: Plan,
    /// The running configuration before the change (the reply root).
    pre: XmlElement,
    style: Style,
    committed: bool,
    comment: String,
}

/// One NETCONF session with one Junos device.
pub struct JunosDriver {
    device: String,
    session: Option<NetconfSsh>,
    style_option: Option<Style>,
    style_seen: Option<Style>,
    txn: NetconfTxn,
    staged: Option<StagedChange>,
    observed: ObservedOnce,
}

impl std::fmt::Debug for JunosDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JunosDriver")
            .field("device", &self.device)
            .field("style", &self.style())
            .finish()
    }
}

/// Map a NETCONF failure: the device's `rpc-error`s verbatim as `Rejected`, anything else as transport.
fn netconf_err(device: &str, step: &'static str, e: NetconfError) -> DriverError {
    let errs = e.rpc_errors();
    if !errs.is_empty() {
        let message = errs
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        return DriverError::Rejected {
            device: device.into(),
            step,
            message,
        };
    }
    let kind = if e.is_timeout() {
        ErrorKind::Timeout
    } else {
        ErrorKind::Transport
    };
    DriverError::Transport {
        device: device.into(),
        step,
        kind,
        source: Box::new(e),
    }
}

/// Whether the device refused a lock because another session holds it.
fn lock_denied(e: &NetconfError) -> bool {
    e.rpc_errors()
        .iter()
        .any(|r| r.tag == Some(crate::transport::netconf::ErrorTag::LockDenied))
}

fn txn_err(device: &str, e: TxnError) -> DriverError {
    netconf_err(device, e.step, e.source)
}

/// The settings [`JunosDriver::connect`] refuses, checked without a connection.
pub(crate) fn check(target: &DeviceTarget) -> Result<(), DriverError> {
    target.ssh_target("netconf", DEFAULT_PORT)?;
    style_option(target)?;
    pipelining_option(target)?;
    target.save_config().map(drop)
}

/// The target option `junos_style` (`ex`, `els`, `mx`), checked.
/// `netconf_pipelining` (default true): RPCs the driver knows come next written with the one before.
fn pipelining_option(target: &DeviceTarget) -> Result<bool, DriverError> {
    Ok(target.bool_option("netconf_pipelining")?.unwrap_or(true))
}

fn style_option(target: &DeviceTarget) -> Result<Option<Style>, DriverError> {
    let Some(v) = target.options.get("junos_style") else {
        return Ok(None);
    };
    v.as_str()
        .and_then(Style::parse)
        .map(Some)
        .ok_or_else(|| DriverError::Config {
            device: target.name.clone(),
            message: format!("junos_style must be ex, els or mx, not {v}"),
        })
}

/// The open session, borrowed apart from the rest of the driver.
fn sess<'a>(
    session: &'a mut Option<NetconfSsh>,
    device: &str,
) -> Result<&'a mut NetconfSsh, DriverError> {
    session.as_mut().ok_or_else(|| DriverError::Config {
        device: device.into(),
        message: "the session is closed".into(),
    })
}

/// `get-interface-information terse`: the interface names observe reads beside the configuration.
const TERSE: &str = "<get-interface-information><terse/></get-interface-information>";

fn running_config() -> Operation {
    Operation::GetConfig {
        source: Datastore::Running,
        filter: None,
    }
}

/// What `observe` reads, in its order.
fn observe_reads() -> [Operation; 2] {
    [running_config(), Operation::Raw(TERSE.into())]
}

/// What `facts` reads when the device answers each (no fallbacks, no per-port LLDP), in its order:
/// written at once, one round trip ([`NetconfClient::send_ahead`]).
fn facts_reads() -> Vec<Operation> {
    let mut reads: Vec<Operation> = [
        "<get-software-information/>",
        "<get-chassis-inventory/>",
        "<get-interface-information/>",
        "<get-lldp-neighbors-information/>",
        "<get-vlan-information/>",
    ]
    .into_iter()
    .map(|x| Operation::Raw(x.into()))
    .collect();
    reads.extend(observe_reads());
    reads
}

impl JunosDriver {
    /// Connect over SSH and NETCONF. The target option `junos_style` (`ex`, `els`, `mx`) overrides the
    /// style read from the configuration.
    pub async fn connect(target: &DeviceTarget) -> Result<JunosDriver, DriverError> {
        let device = target.name.clone();
        let style_option = style_option(target)?;
        let ssh = target.ssh_target("netconf", DEFAULT_PORT)?;
        let session = connect_ssh(&ssh).await.map_err(|e| {
            // A refused login is `auth` on every vendor; the SSH layer says which failure it was.
            let kind = match e.ssh() {
                _ if e.is_timeout() => ErrorKind::Timeout,
                Some(ssh) => crate::target::ssh_error_kind(ssh),
                None => ErrorKind::Connect,
            };
            DriverError::Transport {
                device: device.clone(),
                step: "netconf connect",
                kind,
                source: Box::new(e),
            }
        })?;
        let mut d = JunosDriver::from_session(device, session, style_option);
        d.set_pipelining(pipelining_option(target)?);
        Ok(d)
    }

    /// A session with a recorded device served in process (`transport::replay`), the target's
    /// options applied as in [`JunosDriver::connect`].
    #[cfg(feature = "replay")]
    pub async fn replay(
        target: &DeviceTarget,
        rec: crate::transport::replay::Recording,
    ) -> Result<JunosDriver, DriverError> {
        let session = crate::transport::replay::netconf_session(&target.name, rec)
            .await
            .map_err(|e| netconf_err(&target.name, "netconf connect", e))?;
        let mut d = JunosDriver::from_session(target.name.clone(), session, style_option(target)?);
        d.set_pipelining(pipelining_option(target)?);
        Ok(d)
    }

    /// Wrap an open session (tests, or a caller that connects itself).
    pub fn from_session(
        device: String,
        session: NetconfSsh,
        style_option: Option<Style>,
    ) -> JunosDriver {
        JunosDriver {
            device,
            session: Some(session),
            style_option,
            style_seen: None,
            txn: NetconfTxn::new(Dialect::Junos, true),
            staged: None,
            observed: ObservedOnce::default(),
        }
    }

    /// The style in use: the option, else what the configuration or the model showed, else ELS (the
    /// syntax of every current EX and QFX).
    pub fn style(&self) -> Style {
        self.style_option.or(self.style_seen).unwrap_or(Style::Els)
    }

    fn session(&mut self) -> Result<&mut NetconfSsh, DriverError> {
        sess(&mut self.session, &self.device)
    }

    /// Whether RPCs that come next are written together (`netconf_pipelining`, default true): off
    /// for a server that cannot take a second request before it answered the first.
    pub fn set_pipelining(&mut self, on: bool) {
        self.txn.pipelined = on;
    }

    /// Write `ops` at once; the calls that follow read their replies (a fallback taken on the way
    /// drops the rest, which are then asked one by one).
    async fn send_ahead(&mut self, ops: &[Operation]) -> Result<(), DriverError> {
        if !self.txn.pipelined {
            return Ok(());
        }
        let device = self.device.clone();
        self.session()?
            .send_ahead(ops)
            .await
            .map_err(|e| netconf_err(&device, "netconf send", e))
    }

    /// A read-only vendor RPC the device may not implement: `Ok(None)` when it answers with an
    /// `rpc-error`. A multi-RE answer with errors only for members that did not answer (an RE that is
    /// off) gives the answered members' data.
    async fn optional_rpc(
        &mut self,
        xml: &str,
        step: &'static str,
    ) -> Result<Option<XmlElement>, DriverError> {
        let device = self.device.clone();
        match self.session()?.rpc_read(xml).await {
            Ok(r) => {
                for e in &r.member_errors {
                    tracing::warn!(device = %device, rpc = step, error = %e, "a member did not answer; using the others' answers");
                }
                Ok(Some(r.root))
            }
            Err(e) if !e.rpc_errors().is_empty() => {
                tracing::debug!(device = %device, rpc = step, error = %e, "RPC not answered; using the configuration");
                Ok(None)
            }
            Err(e) => Err(netconf_err(&device, step, e)),
        }
    }

    /// The remote port ids the brief LLDP table left out, asked port by port (at most
    /// `MAX_LLDP_PORT_QUERIES`, so a large switch costs a bounded number of RPCs).
    async fn lldp_port_ids(
        &mut self,
        brief: &XmlElement,
    ) -> Result<BTreeMap<String, facts::RemotePortId>, DriverError> {
        let mut out = BTreeMap::new();
        for port in facts::ports_missing_remote_port_id(brief)
            .into_iter()
            .take(MAX_LLDP_PORT_QUERIES)
        {
            let rpc = format!(
                "<get-lldp-interface-neighbors><interface-device>{}</interface-device></get-lldp-interface-neighbors>",
                crate::netconf_txn::escape(&port)
            );
            let Some(reply) = self
                .optional_rpc(&rpc, "get-lldp-interface-neighbors")
                .await?
            else {
                // A device without the per-port RPC refuses it for every port alike.
                break;
            };
            if let Some(id) = facts::parse_lldp_interface_port_id(&reply, &port) {
                out.insert(port, id);
            }
        }
        Ok(out)
    }

    async fn config(&mut self, source: Datastore) -> Result<XmlElement, DriverError> {
        let device = self.device.clone();
        let reply = self
            .session()?
            .get_config(source, None)
            .await
            .map_err(|e| netconf_err(&device, "get-config", e))?;
        Ok(reply.root)
    }

    fn note_style(&mut self, root: &XmlElement) {
        if let Some(s) = detect_style_xml(root) {
            self.style_seen = Some(s);
        }
    }

    async fn observe_with(
        &mut self,
        root: &XmlElement,
    ) -> Result<(JunosConfig, Observed), DriverError> {
        let cfg = parse_config(root);
        let terse = self
            .optional_rpc(TERSE, "get-interface-information")
            .await?;
        let names = terse
            .as_ref()
            .map(link::parse_interface_names)
            .unwrap_or_default();
        let observed = Observed {
            vlans: vlan::parse_vlans(&cfg),
            links: link::parse_links(&cfg, &names),
        };
        Ok((cfg, observed))
    }

    /// Discard and unlock after a failure; the original error is what the caller reports.
    async fn abort(&mut self) {
        let device = self.device.clone();
        if let Some(s) = self.session.as_mut()
            && let Err(e) = self.txn.discard(s).await
        {
            tracing::warn!(device = %device, error = %e, "discard after a failure failed");
        }
        self.staged = None;
    }

    /// Put the touched resources back as recorded before the change, and commit.
    async fn restore(&mut self) -> Result<(), DriverError> {
        let Some(st) = self.staged.take() else {
            return Ok(());
        };
        let r = self.restore_from(&st).await;
        if r.is_err() {
            // Kept for the next rollback: without it a second call answers Ok having done nothing.
            self.staged = Some(st);
        }
        r
    }

    async fn restore_from(&mut self, st: &StagedChange) -> Result<(), DriverError> {
        let device = self.device.clone();
        let now_root = self.config(Datastore::Running).await?;
        let now = parse_config(&now_root);
        let s = sess(&mut self.session, &device)?;
        let Some(xml) = render::render_restore(&st.pre, &now, &st.plan, st.style) else {
            return self.txn.unlock(s).await.map_err(|e| txn_err(&device, e));
        };
        let _ = s.discard_changes().await;
        let comment = format!("{} (rollback)", st.comment);
        let mut r = self.txn.edit(s, &xml.to_xml()).await;
        if r.is_ok() {
            r = self.txn.commit(s, &comment).await;
        }
        if r.is_ok() {
            r = self.txn.unlock(s).await;
        }
        if let Err(e) = r {
            let err = txn_err(&device, e);
            self.abort().await;
            return Err(err);
        }
        Ok(())
    }
}

#[async_trait]
impl Driver for JunosDriver {
    fn platform(&self) -> Platform {
        Platform::Junos
    }

    fn capabilities(&self) -> Capabilities {
        // The candidate and the reconnect outlive a lost session: a failed rollback can be retried.
        let Some(s) = self.session.as_ref() else {
            return Capabilities {
                rollback_retry: true,
                ..Capabilities::default()
            };
        };
        let cancel = s.has_capability(CAP_CONFIRMED_COMMIT_11);
        Capabilities {
            candidate: s.has_capability(CAP_CANDIDATE),
            confirmed_commit: NetconfTxn::has_confirmed_commit(s),
            sessions: false,
            rollback: cancel,
            device_diff: s.has_capability(CAP_JUNOS),
            rollback_retry: true,
        }
    }

    fn plan_rules(&self) -> PlanRules {
        // VLAN 1 is the `default` VLAN of ELS switches; Junos has no native VLAN unless configured.
        PlanRules {
            reserved_vlans: VlanSet::from_ids(VlanId::new(1).ok()),
            default_native_vlan: None,
        }
    }

    fn validate(&self, vlans: &[Vlan], links: &[Link]) -> Vec<(ResourceRef, String)> {
        let mut out = Vec::new();
        let mut names: BTreeMap<String, VlanId> = BTreeMap::new();
        for v in vlans {
            let r = ResourceRef::Vlan { id: v.id };
            let name = v.name.clone().unwrap_or_else(|| vlan::generated_name(v.id));
            if let Some(why) = vlan::validate_vlan_name(&name) {
                out.push((r.clone(), why));
            }
            if v.state == netgw_models::resource::Presence::Present
                && let Some(other) = names.insert(name.clone(), v.id)
            {
                out.push((r, format!("VLAN name {name:?} is also given to VLAN {other}; Junos names VLANs uniquely")));
            }
        }
        let max_mtu = self.style().max_mtu();
        for l in links {
            let r = ResourceRef::Link {
                name: l.name.clone(),
            };
            if let Some(why) = link::validate_interface_name(&l.name) {
                out.push((r.clone(), why));
            }
            if let Some(m) = l.mtu
                && !(256..=max_mtu).contains(&m)
            {
                out.push((
                    r,
                    format!(
                        "mtu {m} is outside 256..{max_mtu} on Junos ({})",
                        self.style().as_str()
                    ),
                ));
            }
        }
        out
    }

    async fn facts(&mut self) -> Result<DeviceFacts, DriverError> {
        self.send_ahead(&facts_reads()).await?;
        let software = self
            .optional_rpc("<get-software-information/>", "get-software-information")
            .await?;
        let chassis = self
            .optional_rpc("<get-chassis-inventory/>", "get-chassis-inventory")
            .await?;
        let mut interfaces = self
            .optional_rpc("<get-interface-information/>", "get-interface-information")
            .await?;
        if interfaces.is_none() {
            interfaces = self
                .optional_rpc(TERSE, "get-interface-information")
                .await?;
        }
        let lldp = self
            .optional_rpc(
                "<get-lldp-neighbors-information/>",
                "get-lldp-neighbors-information",
            )
            .await?;
        let port_ids = match &lldp {
            Some(l) => self.lldp_port_ids(l).await?,
            None => BTreeMap::new(),
        };
        let mut vlans = self
            .optional_rpc("<get-vlan-information/>", "get-vlan-information")
            .await?;
        if vlans.is_none() {
            vlans = self
                .optional_rpc(
                    "<get-bridge-instance-information/>",
                    "get-bridge-instance-information",
                )
                .await?;
        }
        // A configuration the account may not read leaves its facts (and the layer-2 facts) out, as
        // any other refused read does.
        let root = match self.config(Datastore::Running).await {
            Ok(root) => Some(root),
            Err(e) if e.kind() == ErrorKind::Rejected => {
                tracing::warn!(device = %self.device, error = %e, "configuration not readable: facts without it");
                None
            }
            Err(e) => return Err(e),
        };
        if let Some(root) = &root {
            self.note_style(root);
        }
        let cfg = root.as_ref().map(parse_config);
        let mut f = facts::build_facts(&facts::FactsInputs {
            software: software.as_ref(),
            chassis: chassis.as_ref(),
            interfaces: interfaces.as_ref(),
            lldp: lldp.as_ref(),
            vlans: vlans.as_ref(),
            config: cfg.as_ref(),
        });
        facts::apply_remote_port_ids(&mut f.lldp_neighbors, port_ids);
        if self.style_seen.is_none()
            && let Some(s) = f.model.as_deref().and_then(style_from_model)
        {
            self.style_seen = Some(s);
        }
        let read = match &root {
            Some(root) => self.observe_with(root).await.map(|(_, o)| o),
            None => Err(DriverError::Rejected {
                device: self.device.clone(),
                step: "observe",
                message: "the configuration was not readable".into(),
            }),
        };
        self.observed.record(&mut f, read)?;
        Ok(f)
    }

    /// `get-lacp-interface-information`: the members of LACP aggregates. A device without LACP
    /// running refuses it ("lacp subsystem not running"): no member states.
    async fn lag_members(&mut self) -> Result<Vec<crate::lag_state::LagMembers>, DriverError> {
        let reply = self
            .optional_rpc(
                "<get-lacp-interface-information/>",
                "get-lacp-interface-information",
            )
            .await?;
        Ok(reply
            .as_ref()
            .map(facts::parse_lacp_members)
            .unwrap_or_default())
    }

    async fn observe(&mut self) -> Result<Observed, DriverError> {
        if let Some(o) = self.observed.take() {
            return Ok(o);
        }
        self.send_ahead(&observe_reads()).await?;
        let root = self.config(Datastore::Running).await?;
        self.note_style(&root);
        Ok(self.observe_with(&root).await?.1)
    }

    /// The whole change is one candidate committed (or discarded) at once, and a restore puts back
    /// every interface and VLAN binding it touched.
    fn applies_lag_l3(&self) -> bool {
        true
    }

    /// The running configuration's aggregates and addresses; their own settings from its links.
    async fn observe_lag_l3(&mut self) -> Result<LagL3, DriverError> {
        self.send_ahead(&observe_reads()).await?;
        let root = self.config(Datastore::Running).await?;
        self.note_style(&root);
        let (_, observed) = self.observe_with(&root).await?;
        let (lags, l3) = lag::parse_lag_l3(config::configuration(&root), &observed.links);
        Ok(LagL3 { lags, l3 })
    }

    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        self.observed.forget();
        let device = self.device.clone();
        if self.staged.is_some() {
            return Err(DriverError::Config {
                device,
                message: "a change is already staged".into(),
            });
        }
        if plan.is_empty() {
            return Ok(Staged::default());
        }
        let s = sess(&mut self.session, &device)?;
        // The pre-state read of `stage_locked`, under the lock.
        let pre_state = [running_config()];
        if let Err(e) = self.txn.begin(s, &pre_state).await {
            let err = txn_err(&device, e);
            self.abort().await;
            return Err(err);
        }
        let r = self.stage_locked(plan).await;
        if r.is_err() {
            self.abort().await;
        }
        r
    }

    async fn discard(&mut self) -> Result<(), DriverError> {
        let device = self.device.clone();
        self.staged = None;
        let s = sess(&mut self.session, &device)?;
        self.txn.discard(s).await.map_err(|e| txn_err(&device, e))
    }

    async fn commit(&mut self, options: &CommitOptions) -> Result<(), DriverError> {
        let device = self.device.clone();
        let Some(st) = self.staged.as_mut() else {
            return Ok(());
        };
        st.comment = options.comment.clone();
        let s = sess(&mut self.session, &device)?;
        match self
            .txn
            .commit_confirmed(
                s,
                options.confirm_timeout,
                &options.comment,
                &observe_reads(),
            )
            .await
        {
            Ok(()) => {
                if let Some(st) = self.staged.as_mut() {
                    st.committed = true;
                }
                Ok(())
            }
            Err(e) => {
                let err = txn_err(&device, e);
                if matches!(err, DriverError::Rejected { .. }) {
                    self.abort().await;
                } else if let Some(st) = self.staged.as_mut() {
                    // The session failed, not the device: the commit may have landed before its
                    // reply was lost, so a rollback must not answer Ok having done nothing.
                    st.committed = true;
                }
                Err(err)
            }
        }
    }

    fn persistence(&self) -> crate::driver::Persistence {
        // A Junos commit writes the configuration the device boots from: nothing else to save.
        crate::driver::Persistence::saved("commit: Junos boots from its committed configuration")
    }

    async fn confirm(&mut self) -> Result<(), DriverError> {
        let device = self.device.clone();
        let Some(st) = self.staged.take() else {
            return Ok(());
        };
        if !st.committed {
            self.staged = Some(st);
            return Err(DriverError::Config {
                device,
                message: "confirm before commit".into(),
            });
        }
        let s = match sess(&mut self.session, &device) {
            Ok(s) => s,
            Err(e) => {
                self.staged = Some(st);
                return Err(e);
            }
        };
        let r = self.txn.confirm(s, &st.comment).await;
        if r.is_err() {
            // Still committed (pending its timer): a rollback after a failed confirm must know it.
            self.staged = Some(st);
        }
        r.map_err(|e| txn_err(&device, e))
    }

    async fn rollback(&mut self) -> Result<(), DriverError> {
        let device = self.device.clone();
        match self.staged.as_ref() {
            None => return Ok(()),
            Some(st) if !st.committed => return self.discard().await,
            Some(_) => {}
        }
        let s = sess(&mut self.session, &device)?;
        match self.txn.cancel(s).await {
            Ok(true) => {
                self.staged = None;
                Ok(())
            }
            Ok(false) => self.restore().await,
            Err(e) => {
                tracing::warn!(device = %device, error = %e, "cancel-commit failed; restoring the recorded state");
                self.restore().await
            }
        }
    }

    async fn close(&mut self) -> Result<(), DriverError> {
        let device = self.device.clone();
        match self.session.take() {
            Some(s) => s
                .close()
                .await
                .map_err(|e| netconf_err(&device, "close-session", e)),
            None => Ok(()),
        }
    }

    /// Takes the candidate lock (and gives it back) to learn it is free: `lock-denied` means another
    /// session holds it, perhaps a dead gateway's whose commit is still in progress.
    async fn await_config_unlocked(&mut self, limit: Duration) -> Result<(), DriverError> {
        let device = self.device.clone();
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let s = sess(&mut self.session, &device)?;
            match s.lock(Datastore::Candidate).await {
                Ok(_) => {
                    s.unlock(Datastore::Candidate)
                        .await
                        .map_err(|e| netconf_err(&device, "unlock candidate", e))?;
                    // What facts read before the wait is not what the device holds now.
                    self.observed.forget();
                    return Ok(());
                }
                Err(e) if lock_denied(&e) && started.elapsed() < limit => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                Err(e) if lock_denied(&e) => {
                    return Err(DriverError::Rejected {
                        device,
                        step: "lock candidate",
                        message: format!(
                            "the candidate configuration stayed locked by another session for {limit:?} (a dead run's commit still in progress, or an operator's `configure exclusive`); the device was not read: retry once that session has ended, or end it (`request system logout session ID`)"
                        ),
                    });
                }
                Err(e) => return Err(netconf_err(&device, "lock candidate", e)),
            }
        }
    }

    /// Only confirming: a pending commit that must not stay is rolled back by Junos' own timer, and
    /// the restore's own commit (a confirmed commit keeps the original rollback point) replaces it.
    async fn settle_pending(&mut self, keep: bool) -> Result<Settled, DriverError> {
        if !keep || self.staged.is_some() {
            return Ok(Settled::Nothing);
        }
        let Some(info) = self
            .optional_rpc("<get-commit-information/>", "get-commit-information")
            .await?
        else {
            return Ok(Settled::Nothing);
        };
        if !config::confirmed_commit_pending(&info) {
            return Ok(Settled::Nothing);
        }
        self.observed.forget();
        let device = self.device.clone();
        let s = sess(&mut self.session, &device)?;
        // Locked, so nobody's candidate is committed with it; a plain commit confirms (RFC 6241
        // §8.4.1, Junos `commit` after `commit confirmed`).
        self.txn
            .begin(s, &[])
            .await
            .map_err(|e| txn_err(&device, e))?;
        if let Err(e) = self
            .txn
            .confirm(s, "netgw: confirms the change of an interrupted run")
            .await
        {
            let _ = self.txn.discard(s).await;
            return Err(txn_err(&device, e));
        }
        tracing::info!(device = %device, "commit: confirmed the pending commit of an interrupted run");
        Ok(Settled::Confirmed("commit".into()))
    }
}

impl JunosDriver {
    async fn stage_locked(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        let device = self.device.clone();
        // The pre-state is read under the lock, so nobody changes it between reading and editing.
        let pre = self.config(Datastore::Running).await?;
        self.note_style(&pre);
        let style = self.style();
        let running = parse_config(&pre);
        let mut cfg = El::new("configuration");
        if let Some(v) =
            vlan::render_vlans(plan, &running, style).map_err(|e| DriverError::Config {
                device: device.clone(),
                message: e.to_string(),
            })?
        {
            cfg.push(v);
        }
        if let Some(l) = link::render_links(&plan.links, &running, style) {
            cfg.push(l);
        }
        let r = lag::Running {
            cfg: config::configuration(&pre),
            parsed: &running,
            style,
        };
        let more = lag::render_lag_l3(plan, &r).map_err(|e| DriverError::Config {
            device: device.clone(),
            message: e.to_string(),
        })?;
        for el in more {
            // One element per hierarchy: the VLAN binding joins the VLANs rendered above.
            cfg.entry(&el.name).children.extend(el.children);
        }
        let xml = cfg.to_xml();
        let s = sess(&mut self.session, &device)?;
        self.txn
            .edit(s, &xml)
            .await
            .map_err(|e| txn_err(&device, e))?;

        let diff = match self.txn.device_diff(s).await {
            Ok(Some(d)) if d.contains("[edit") => d,
            other => {
                let why = match other {
                    Ok(Some(_)) => {
                        "the device answered get-configuration compare without a diff".to_string()
                    }
                    Ok(None) => "the device has no diff".to_string(),
                    Err(e) => e.to_string(),
                };
                let cand_root = self.config(Datastore::Candidate).await?;
                let (_, cand) = self.observe_with(&cand_root).await?;
                let (_, run) = self.observe_with(&pre).await?;
                format!(
                    "# diff computed by netgw from get-config candidate vs running ({why})\n{}",
                    render::computed_diff((&run.vlans, &run.links), (&cand.vlans, &cand.links))
                )
            }
        };
        self.staged = Some(StagedChange {
            plan: plan.clone(),
            pre,
            style,
            committed: false,
            comment: String::new(),
        });
        Ok(Staged {
            diff,
            rendered: vec![xml],
        })
    }
}
