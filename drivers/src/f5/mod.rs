//! F5 BIG-IP over iControl REST (docs/design.md §4): glue between the [`Driver`] trait and the session in
//! `rest.rs`, the pure parsers in `facts.rs`, `vlan.rs`, `link.rs` and the renderer in `config.rs`.
//!
//! ```text
//!   connect ─▶ POST /mgmt/shared/authn/login (token; refreshed before expiry and on 401)
//!   facts   ─▶ GET shared/identified-devices/config/device-info, net/interface,
//!              net/vlan?expandSubcollections=true (observe's read too), net/lldp-neighbors (404 or
//!              no items = no neighbours), net/trunk (`Rest::prefetch`: at once, each on a connection
//!              of its own, with option rest_parallel_reads); then sys/version, sys/hardware,
//!              sys/global-settings only for what device-info lacks, net/trunk/stats where there are
//!              trunks (their status)
//!   observe ─▶ GET net/vlan?expandSubcollections=true, net/interface, net/trunk (+ net/self for
//!              aggregates and routed interfaces, `lag.rs`; at once, + .../interfaces of each VLAN a
//!              committed change touched); then .../interfaces of the other VLANs not expanded
//!   stage   ─▶ observe (the pre-state) ─▶ config::render_plan ─▶ POST /mgmt/tm/transaction
//!              ─▶ every operation with X-F5-REST-Coordination-Id (queued, nothing applied)
//!              diff = the operations, one `METHOD path body` per line
//!   commit  ─▶ PATCH /mgmt/tm/transaction/ID {"state":"VALIDATING"} ─▶ COMPLETED, or FAILED and
//!              nothing changed (the device's message is reported verbatim)
//!   confirm ─▶ POST /mgmt/tm/sys/config {"command":"save"} (`save sys config`), or nothing with option
//!              save_config: false
//!   rollback ─▶ observe ─▶ config::render_restore(pre, now) in a new transaction ─▶ verify
//!   discard ─▶ DELETE /mgmt/tm/transaction/ID (or rollback after a commit)
//!   close   ─▶ discard what is staged, DELETE /mgmt/shared/authz/tokens/TOKEN
//! ```
//!
//! Capabilities: a candidate (the transaction), no confirmed commit, no device-side rollback (the
//! driver restores from the recorded pre-state), no device diff (the diff is the rendered operations).
//! Settings: `connection_options.rest` (hostname, port, username, password; extras `scheme: http` for
//! labs, `login_provider`), TLS per the target, option `save_config`. See `vlan.rs` and `link.rs` for
//! how BIG-IP VLANs, interfaces and trunks map onto netgw's model, and what that mapping cannot say.

pub mod answer;
pub mod config;
pub mod error;
pub mod facts;
pub mod lag;
pub mod link;
#[cfg(feature = "replay")]
pub mod replay;
pub mod rest;
pub mod vlan;

use async_trait::async_trait;
use netgw_models::facts::DeviceFacts;
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, Vlan, VlanSet};
use serde_json::{Value, json};

use crate::driver::{
    Capabilities, CommitOptions, Driver, DriverError, LagL3, Observed, ObservedOnce, Platform,
    Staged, validate_with,
};
use crate::target::DeviceTarget;
use config::{DeviceState, Rendered};
use rest::{ReqwestTransport, Rest, RestError, RestMethod, RestOp, RestSettings, RestTransport};

pub const VLANS_EXPANDED: &str = "/mgmt/tm/net/vlan?expandSubcollections=true";
pub const SAVE_CONFIG_PATH: &str = "/mgmt/tm/sys/config";
pub const DEVICE_INFO: &str = "/mgmt/shared/identified-devices/config/device-info";
pub const LLDP: &str = "/mgmt/tm/net/lldp-neighbors";

/// `device-info`, `sys/version`, `sys/hardware`, `sys/global-settings`, each when read.
type SystemDocs = (
    Option<std::sync::Arc<Value>>,
    Option<std::sync::Arc<Value>>,
    Option<std::sync::Arc<Value>>,
    Option<std::sync::Arc<Value>>,
);

/// The entries of an iControl REST collection (`items`; none when it has none).
pub(crate) fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A collection's `items`, or the answer itself when it is one object (F5's MOCK answers some
/// collections with a single one).
pub(crate) fn items_or_one(v: &Value) -> Vec<&Value> {
    match v.get("items").and_then(Value::as_array) {
        Some(a) => a.iter().collect(),
        None if v.get("name").is_some() => vec![v],
        None => vec![],
    }
}

/// A non-empty string field.
pub(crate) fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// What the driver declares (see the module docs).
pub const CAPABILITIES: Capabilities = Capabilities {
    candidate: true,
    confirmed_commit: false,
    sessions: false,
    rollback: false,
    device_diff: false,
    rollback_retry: true,
};

#[derive(Debug, Default)]
enum State {
    #[default]
    Idle,
    Staged {
        trans_id: Option<String>,
        rendered: Rendered,
        pre: DeviceState,
    },
    Committed {
        rendered: Rendered,
        pre: DeviceState,
    },
}

/// One iControl REST session with one BIG-IP.
#[derive(Debug)]
pub struct F5Driver {
    device: String,
    rest: Rest,
    save_config: bool,
    state: State,
    observed: ObservedOnce,
}

/// A VLAN's member interfaces and trunks (`/mgmt/tm/net/vlan/~Common~web/interfaces`).
fn members_path(vlan_path: &str) -> String {
    format!("{vlan_path}/interfaces")
}

fn rendered_lines(ops: &[RestOp]) -> Vec<String> {
    ops.iter().map(RestOp::render).collect()
}

impl F5Driver {
    /// Connect as the target says and log in.
    pub async fn connect(target: &DeviceTarget) -> Result<Self, DriverError> {
        let s = RestSettings::from_target(target)?;
        let transport = ReqwestTransport::new(&s)
            .await
            .map_err(|e| RestError::Http(e).into_driver(&target.name, "connect"))?;
        Self::with_transport(&s, Box::new(transport)).await
    }

    /// A session with a recorded device (`transport::replay`), the target's options applied as in
    /// [`F5Driver::connect`].
    #[cfg(feature = "replay")]
    pub async fn replay(
        target: &DeviceTarget,
        rec: crate::transport::replay::Recording,
    ) -> Result<Self, DriverError> {
        let s = RestSettings::from_target(target)?;
        Self::with_transport(&s, Box::new(replay::ReplayRest(rec))).await
    }

    /// Start a session over a given transport (tests) and log in.
    pub async fn with_transport(
        s: &RestSettings,
        transport: Box<dyn RestTransport>,
    ) -> Result<Self, DriverError> {
        let mut rest = Rest::new(s, transport);
        rest.login()
            .await
            .map_err(|e| e.into_driver(&s.device, "login"))?;
        tracing::debug!(device = %s.device, "f5 connected");
        Ok(F5Driver {
            observed: ObservedOnce::default(),
            device: s.device.clone(),
            rest,
            save_config: s.save_config,
            state: State::Idle,
        })
    }

    /// The REST session (tests count logins through it).
    pub fn rest(&self) -> &Rest {
        &self.rest
    }

    /// The REST session, to send requests of one's own (tests: a request past the read cache).
    pub fn rest_mut(&mut self) -> &mut Rest {
        &mut self.rest
    }

    fn err(&self, step: &'static str) -> impl Fn(RestError) -> DriverError + '_ {
        move |e| e.into_driver(&self.device, step)
    }

    fn config_err(&self, message: impl Into<String>) -> DriverError {
        DriverError::Config {
            device: self.device.clone(),
            message: message.into(),
        }
    }

    async fn optional(
        &mut self,
        path: &str,
        step: &'static str,
    ) -> Result<Option<std::sync::Arc<Value>>, DriverError> {
        match self.rest.get_optional_cached(path).await {
            Ok(v) => Ok(v),
            Err(e) => Err(e.into_driver(&self.device, step)),
        }
    }

    /// The system's identity: the REST framework's `device-info` answers hostname, version, model and
    /// serial in one request (F5's own f5-conx-core reads a device's identity there at connect); the
    /// `sys/*` documents are read only for what it did not answer (a release or a user without it).
    async fn system_facts(&mut self) -> Result<SystemDocs, DriverError> {
        let di = self.optional(DEVICE_INFO, "facts").await?;
        let known = di
            .as_deref()
            .map(facts::parse_device_info)
            .unwrap_or_default();
        let version = match known.platform_version {
            Some(_) => None,
            None => self.optional("/mgmt/tm/sys/version", "facts").await?,
        };
        let hardware = match (&known.model, &known.serial) {
            (Some(_), Some(_)) => None,
            _ => self.optional("/mgmt/tm/sys/hardware", "facts").await?,
        };
        let global = match known.hostname {
            Some(_) => None,
            None => {
                self.optional("/mgmt/tm/sys/global-settings", "facts")
                    .await?
            }
        };
        Ok((di, version, hardware, global))
    }

    /// VLANs with members, interfaces and trunks, raw enough to render and restore from. Read through
    /// the session's read cache: the pre-state is what facts and observe read when nothing was sent
    /// since; after a commit every read goes to the device again.
    async fn read_state(&mut self) -> Result<DeviceState, DriverError> {
        self.read_state_with(false).await
    }

    /// [`F5Driver::read_state`], with the self IPs when `selfs`. The collections are read first
    /// ([`Rest::prefetch`]); read at once, with them the members of every VLAN a committed change
    /// touched (the expanded listing may show them without an `items` list); then the members of any
    /// other VLAN shown so.
    async fn read_state_with(&mut self, selfs: bool) -> Result<DeviceState, DriverError> {
        let touched = match &self.state {
            State::Committed { rendered, .. } => rendered.vlans.iter().cloned().collect(),
            _ => Vec::new(),
        };
        self.read_state_touched(selfs, &touched).await
    }

    /// [`F5Driver::read_state_with`] after a change that touched the VLANs `touched` (full paths).
    async fn read_state_touched(
        &mut self,
        selfs: bool,
        touched: &[String],
    ) -> Result<DeviceState, DriverError> {
        // One at a time, a touched VLAN's members are read only if the listing does not show them.
        let ahead = if self.rest.parallel_reads() {
            touched
        } else {
            &[]
        };
        let members: Vec<String> = ahead
            .iter()
            .map(|v| members_path(&vlan::vlan_path(v)))
            .collect();
        let mut batch = vec![
            VLANS_EXPANDED,
            link::INTERFACE_COLLECTION,
            link::TRUNK_COLLECTION,
        ];
        if selfs {
            batch.push(lag::SELF_COLLECTION);
        }
        batch.extend(members.iter().map(String::as_str));
        self.rest
            .prefetch(&batch)
            .await
            .map_err(self.err("observe"))?;
        let v = self
            .rest
            .get_cached(VLANS_EXPANDED)
            .await
            .map_err(self.err("observe"))?;
        let mut vlans = vlan::parse_vlans(&v);
        let unexpanded: Vec<String> = vlans
            .iter()
            .filter(|v| v.members.is_none())
            .map(|v| members_path(&v.path()))
            .collect();
        let paths: Vec<&str> = unexpanded.iter().map(String::as_str).collect();
        self.rest
            .prefetch(&paths)
            .await
            .map_err(self.err("observe"))?;
        for v in vlans.iter_mut().filter(|v| v.members.is_none()) {
            let path = members_path(&v.path());
            let m = self
                .rest
                .get_optional_cached(&path)
                .await
                .map_err(|e| e.into_driver(&self.device, "observe"))?;
            v.members = Some(
                m.as_deref()
                    .map(vlan::parse_vlan_interfaces)
                    .unwrap_or_default(),
            );
        }
        let ifs = self
            .rest
            .get_cached(link::INTERFACE_COLLECTION)
            .await
            .map_err(self.err("observe"))?;
        let mut links = link::parse_interfaces(&ifs);
        let mut trunks = Vec::new();
        if let Some(t) = self.optional(link::TRUNK_COLLECTION, "observe").await? {
            links.extend(link::parse_trunks(&t));
            trunks = lag::parse_trunks(&t);
        }
        let selfs = if selfs {
            let v = self.optional(lag::SELF_COLLECTION, "observe").await?;
            Some(v.as_deref().map(lag::parse_selfs).unwrap_or_default())
        } else {
            None
        };
        Ok(DeviceState {
            vlans,
            links,
            trunks,
            selfs,
        })
    }

    /// Create a transaction, queue `ops` into it; on any failure the transaction is deleted.
    async fn open_transaction(
        &mut self,
        ops: &[RestOp],
        step: &'static str,
    ) -> Result<String, DriverError> {
        let t = self
            .rest
            .begin_transaction()
            .await
            .map_err(self.err(step))?;
        for op in ops {
            if let Err(e) = self.rest.queue(&t.trans_id, op).await {
                if let Err(d) = self.rest.delete_transaction(&t.trans_id).await {
                    tracing::warn!(device = %self.device, trans_id = %t.trans_id, error = %d, "deleting a half-queued transaction failed");
                }
                return Err(e.into_driver(&self.device, step));
            }
        }
        Ok(t.trans_id)
    }

    /// Commit a transaction; a failed one is deleted (it changed nothing).
    async fn commit_transaction(
        &mut self,
        trans_id: &str,
        step: &'static str,
    ) -> Result<(), DriverError> {
        match self.rest.commit_transaction(trans_id).await {
            Ok(_) => Ok(()),
            Err(e) => {
                if let Err(d) = self.rest.delete_transaction(trans_id).await {
                    tracing::debug!(device = %self.device, trans_id, error = %d, "deleting a failed transaction failed");
                }
                Err(e.into_driver(&self.device, step))
            }
        }
    }

    /// Take the touched objects back to `pre` in one transaction and verify by reading back.
    async fn restore(&mut self, pre: &DeviceState, touched: &Rendered) -> Result<(), DriverError> {
        let selfs = !touched.selfs.is_empty();
        let vlans: Vec<String> = touched.vlans.iter().cloned().collect();
        let now = self.read_state_touched(selfs, &vlans).await?;
        let ops = config::render_restore(pre, &now, touched)
            .map_err(|e| self.config_err(e.to_string()))?;
        if ops.is_empty() {
            return Ok(());
        }
        tracing::info!(device = %self.device, operations = ops.len(), "restoring the pre-change state");
        let id = self.open_transaction(&ops, "rollback").await?;
        self.commit_transaction(&id, "rollback").await?;
        let after = self.read_state_touched(selfs, &vlans).await?;
        let left = config::render_restore(pre, &after, touched)
            .map_err(|e| self.config_err(e.to_string()))?;
        if !left.is_empty() {
            return Err(DriverError::Verify {
                device: self.device.clone(),
                remaining: rendered_lines(&left),
            });
        }
        Ok(())
    }
}

#[async_trait]
impl Driver for F5Driver {
    fn platform(&self) -> Platform {
        Platform::F5
    }

    fn capabilities(&self) -> Capabilities {
        CAPABILITIES
    }

    fn plan_rules(&self) -> PlanRules {
        // BIG-IP has no built-in VLAN (no VLAN 1 to protect) and no native VLAN by default.
        PlanRules {
            reserved_vlans: VlanSet::new(),
            default_native_vlan: None,
        }
    }

    fn validate(&self, vlans: &[Vlan], links: &[Link]) -> Vec<(ResourceRef, String)> {
        validate_with(vlans, links, vlan::validate_vlan, link::validate_link)
    }

    async fn facts(&mut self) -> Result<DeviceFacts, DriverError> {
        self.rest
            .prefetch(&[
                DEVICE_INFO,
                link::INTERFACE_COLLECTION,
                VLANS_EXPANDED,
                LLDP,
                link::TRUNK_COLLECTION,
            ])
            .await
            .map_err(self.err("facts"))?;
        let (device_info, version, hardware, global) = self.system_facts().await?;
        let interfaces = self.optional(link::INTERFACE_COLLECTION, "facts").await?;
        // The expanded listing is a superset of the plain one and is what observe reads next.
        let vlans = self.optional(VLANS_EXPANDED, "facts").await?;
        let lldp = self.optional(LLDP, "facts").await?;
        let mut f = facts::build_facts(&facts::FactsInputs {
            sys_version: version.as_deref(),
            sys_hardware: hardware.as_deref(),
            global_settings: global.as_deref(),
            device_info: device_info.as_deref(),
            interfaces: interfaces.as_deref(),
            vlans: vlans.as_deref(),
            lldp_neighbors: lldp.as_deref(),
        });
        let state = self.read_state().await;
        if let Ok(st) = &state
            && !st.trunks.is_empty()
            && let Some(v) = self.optional(lag::TRUNK_STATS, "facts").await?
        {
            // Trunks are interfaces too (as in BIG-IP's IF-MIB): their status is their stats'.
            for (name, up) in lag::parse_trunk_stats(&v) {
                f.interfaces.entry(name).or_default().oper_status = Some(if up {
                    netgw_models::facts::OperStatus::Up
                } else {
                    netgw_models::facts::OperStatus::Down
                });
            }
        }
        let read = state.map(|s| s.observed());
        self.observed.record(&mut f, read)?;
        Ok(f)
    }

    async fn observe(&mut self) -> Result<Observed, DriverError> {
        if let Some(o) = self.observed.take() {
            return Ok(o);
        }
        Ok(self.read_state().await?.observed())
    }

    /// Trunks, VLAN memberships and self IPs go in the one transaction a plan's VLANs go in, and
    /// a restore puts back every trunk and self IP it touched.
    fn applies_lag_l3(&self) -> bool {
        true
    }

    async fn observe_lag_l3(&mut self) -> Result<LagL3, DriverError> {
        Ok(self.read_state_with(true).await?.lag_l3())
    }

    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        self.observed.forget();
        if !matches!(self.state, State::Idle) {
            return Err(self.config_err(
                "a change is already staged or committed; discard, confirm or roll it back first",
            ));
        }
        if plan.is_empty() {
            return Ok(Staged::default());
        }
        let pre = self.read_state_with(!plan.l3.is_empty()).await?;
        let rendered =
            config::render_plan(plan, &pre).map_err(|e| self.config_err(e.to_string()))?;
        let lines = rendered_lines(&rendered.ops);
        let trans_id = if rendered.ops.is_empty() {
            None
        } else {
            Some(self.open_transaction(&rendered.ops, "stage").await?)
        };
        tracing::debug!(device = %self.device, trans_id = ?trans_id, operations = lines.len(), "staged");
        self.state = State::Staged {
            trans_id,
            rendered,
            pre,
        };
        Ok(Staged {
            diff: lines.join("\n"),
            rendered: lines,
        })
    }

    async fn discard(&mut self) -> Result<(), DriverError> {
        match std::mem::take(&mut self.state) {
            State::Idle | State::Staged { trans_id: None, .. } => Ok(()),
            State::Staged {
                trans_id: Some(id), ..
            } => self
                .rest
                .delete_transaction(&id)
                .await
                .map_err(self.err("discard")),
            committed @ State::Committed { .. } => {
                self.state = committed;
                self.rollback().await
            }
        }
    }

    async fn commit(&mut self, options: &CommitOptions) -> Result<(), DriverError> {
        match std::mem::take(&mut self.state) {
            State::Idle => Ok(()),
            State::Staged {
                trans_id,
                rendered,
                pre,
            } => {
                if let Some(id) = trans_id {
                    // iControl REST transactions carry no comment; the run is named in the log.
                    tracing::info!(device = %self.device, trans_id = %id, comment = %options.comment, "committing transaction");
                    self.commit_transaction(&id, "commit").await?;
                }
                self.state = State::Committed { rendered, pre };
                Ok(())
            }
            committed @ State::Committed { .. } => {
                self.state = committed;
                Err(self.config_err("already committed"))
            }
        }
    }

    fn persistence(&self) -> crate::driver::Persistence {
        if self.save_config {
            crate::driver::Persistence::saved("save sys config")
        } else {
            crate::driver::Persistence::not_saved("save_config: false")
        }
    }

    async fn confirm(&mut self) -> Result<(), DriverError> {
        match std::mem::take(&mut self.state) {
            committed @ State::Committed { .. } if self.save_config => {
                let r = self
                    .rest
                    .call(
                        RestMethod::Post,
                        SAVE_CONFIG_PATH,
                        Some(&json!({"command": "save"})),
                        None,
                    )
                    .await;
                if r.is_err() {
                    // The change is running: a rollback after a failed confirm must still undo it.
                    self.state = committed;
                }
                r.map(|_| ()).map_err(self.err("confirm (save sys config)"))
            }
            State::Committed { .. } | State::Idle => Ok(()),
            staged @ State::Staged { .. } => {
                self.state = staged;
                Err(self.config_err(
                    "nothing committed to confirm; commit or discard the staged change",
                ))
            }
        }
    }

    async fn rollback(&mut self) -> Result<(), DriverError> {
        match std::mem::take(&mut self.state) {
            State::Idle => Ok(()),
            staged @ State::Staged { .. } => {
                self.state = staged;
                self.discard().await
            }
            State::Committed { rendered, pre } => {
                let r = self.restore(&pre, &rendered).await;
                if r.is_err() {
                    // Keep what is needed to try again.
                    self.state = State::Committed { rendered, pre };
                }
                r
            }
        }
    }

    async fn close(&mut self) -> Result<(), DriverError> {
        if matches!(self.state, State::Staged { .. })
            && let Err(e) = self.discard().await
        {
            tracing::warn!(device = %self.device, error = %e, "discarding the staged transaction on close failed");
        }
        self.rest.logout().await.map_err(self.err("logout"))
    }
}
