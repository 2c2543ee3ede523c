//! The durable intent journal: one file per node change in flight, so a change interrupted by a dead
//! gateway (SIGKILL, OOM killer, host reboot) is finished or undone by the next run that touches the
//! node, on every platform, IOS and NX-OS included (they have no device-side timer of their own).
//!
//! ```text
//!   apply: stage ─▶ Journal::write(intent) (fsync file + dir) ─▶ commit ─▶ verify ─▶ confirm ─▶ clear
//!                                                                └ failed ─▶ rollback ok ─▶ clear
//!   next run (converge, why-run, drift): connect ─▶ facts ─▶ [journal?] observe ─▶ classify:
//!        fully new ─▶ confirm a commit still under the device's timer (Driver::settle_pending) ─▶ clear
//!        fully old ─▶ clear
//!        otherwise ─▶ the device's own revert where it has one pending (EOS session abort, IOS
//!                     `configure revert now`), then the exact inverse for what is left ─▶ clear
//! ```
//!
//! The intent records, per touched resource, its state before the change (as observed by the dead run)
//! and after it (as planned), the run id, the platform and the rendered change. "Fully new" and "fully
//! old" are decided by the planner itself (`Policy::Replace` on the touched resources: nothing left to
//! change towards that state); restoring is a plan from what the device holds back to the old state,
//! applied through the driver like any change (stage, commit, verify, confirm): the exact inverse,
//! after the device's own revert of a change still pending where it has one. The files live in the state directory (`crate::state::journal_dir`), never in the
//! repo. `NETGW_JOURNAL=off` disables writing them (only to show, in the crash campaign, what the
//! journal prevents).

use crate::rootdir::{FileOpen, RootDir};
use crate::store::durable;
use crate::store::local::{sync_dir, write_json_atomic};
use crate::store::versioned::{self, Format, FormatError, Versioned};
use netgw_models::NodeName;
use netgw_models::plan::l3::{L3Context, L3Interface, plan_l3};
use netgw_models::plan::lag::{Lag, plan_lags};
use netgw_models::plan::{Plan, PlanRules, Policy, clear_access_vlan, plan};
use netgw_models::resource::{Link, Presence, Vlan, VlanId};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum JournalError {
    #[error("intent journal {path}: {reason}")]
    Io { path: PathBuf, reason: String },
    /// An entry, record or directory another user could have written (`crate::state::check_private`).
    #[error("intent journal: {0}")]
    Unsafe(#[from] crate::state::UnsafeState),
    /// An entry or record of a format this netgw does not read (a newer netgw's), or a broken one.
    #[error("intent journal: {0}")]
    Format(#[from] FormatError),
}

/// An entry's format ([`crate::store::versioned`]): 1 is netgw 0.3's, which had no `format` field.
pub const INTENT_FORMAT: Format = Format {
    what: "intent journal entry",
    current: 2,
    migrate: versioned::only_the_field_added,
};

/// A transaction record's format; 1 as for [`INTENT_FORMAT`].
pub const TX_FORMAT: Format = Format {
    what: "transaction record",
    current: 2,
    migrate: versioned::only_the_field_added,
};

/// What an unfinished change needs to be finished or undone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Intent {
    pub run_id: String,
    pub node: String,
    pub platform: String,
    pub written_at: String,
    /// Touched VLANs: (id, before, after); `None` = absent.
    pub vlans: Vec<(VlanId, Option<Vlan>, Option<Vlan>)>,
    /// Touched links: (before, after).
    pub links: Vec<(Link, Link)>,
    /// Touched aggregates and routed interfaces: (before, after); `None` = absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lags: Vec<(Option<Lag>, Option<Lag>)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub l3: Vec<(Option<L3Interface>, Option<L3Interface>)>,
    /// What the dead run sent or was about to send (configuration lines, XML, REST calls).
    pub rendered: Vec<String>,
    /// The atomic transaction (`crate::atomic`) this change belongs to: its record
    /// ([`TxRecord`]), not the device alone, decides whether recovery finishes or undoes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx: Option<String>,
}

impl Intent {
    pub fn new(run_id: &str, node: &str, platform: &str, p: &Plan, rendered: Vec<String>) -> Self {
        Intent {
            run_id: run_id.into(),
            node: node.into(),
            platform: platform.into(),
            written_at: crate::clock::now_rfc3339(),
            vlans: p
                .vlans
                .iter()
                .map(|c| (c.id, c.before.clone(), c.after.clone()))
                .collect(),
            links: p
                .links
                .iter()
                .map(|c| (c.before.clone(), c.after.clone()))
                .collect(),
            lags: p
                .lags
                .iter()
                .map(|c| (c.before.clone(), c.after.clone()))
                .collect(),
            l3: p
                .l3
                .iter()
                .map(|c| (c.before.clone(), c.after.clone()))
                .collect(),
            rendered,
            tx: None,
        }
    }

    /// Whether the change touched aggregates or routed interfaces (reading it back needs them).
    pub fn touches_lag_l3(&self) -> bool {
        !self.lags.is_empty() || !self.l3.is_empty()
    }

    /// [`Intent::plan_to`] with the aggregates and routed interfaces the device has now: each touched
    /// one is put back exactly as recorded (members, LACP, settings, addresses), or removed where the
    /// target state had none.
    pub fn plan_to_all(
        &self,
        old: bool,
        observed: (&[Vlan], &[Link]),
        more: (&[Lag], &[L3Interface]),
        rules: &PlanRules,
    ) -> Plan {
        let mut p = self.plan_to(old, observed.0, observed.1, rules);
        let lags: Vec<Lag> = self
            .lags
            .iter()
            .filter_map(|(b, a)| {
                let name = a.as_ref().or(b.as_ref())?.name.clone();
                let want = if old { b } else { a };
                Some(want.clone().unwrap_or(Lag {
                    state: Presence::Absent,
                    ..Lag::new(name)
                }))
            })
            .collect();
        plan_lags(&mut p, &lags, more.0, Policy::Replace, rules);
        let l3: Vec<L3Interface> = self
            .l3
            .iter()
            .filter_map(|(b, a)| {
                let name = a.as_ref().or(b.as_ref())?.name.clone();
                let want = if old { b } else { a };
                Some(want.clone().unwrap_or(L3Interface {
                    state: Presence::Absent,
                    ..L3Interface::new(name)
                }))
            })
            .collect();
        let cx = L3Context {
            desired_vlans: &[],
            observed_vlans: observed.0,
            observed_links: observed.1,
        };
        plan_l3(&mut p, &l3, more.1, Policy::Replace, &cx);
        p
    }

    /// A plan from `observed` to the old (`old = true`) or new state of the touched resources;
    /// empty when the device already holds it.
    pub fn plan_to(
        &self,
        old: bool,
        observed_vlans: &[Vlan],
        observed_links: &[Link],
        rules: &PlanRules,
    ) -> Plan {
        let pick = |b: &Option<Vlan>, a: &Option<Vlan>| if old { b.clone() } else { a.clone() };
        let gone: Vec<VlanId> = self
            .vlans
            .iter()
            .filter(|(_, b, a)| pick(b, a).is_none())
            .map(|(id, _, _)| *id)
            .collect();
        // Every VLAN the device has except those the target state lacks, plus the target's own:
        // under `Purge` only the touched VLANs that must be absent are removed.
        let mut vlans: Vec<Vlan> = observed_vlans
            .iter()
            .filter(|v| !gone.contains(&v.id) && !self.vlans.iter().any(|(id, _, _)| *id == v.id))
            .cloned()
            .collect();
        vlans.extend(self.vlans.iter().filter_map(|(_, b, a)| pick(b, a)));
        // Recorded as observed: an EOS access port carries its trunk settings too, which a desired
        // access port may not (the plan would fail it).
        let links: Vec<Link> = self
            .links
            .iter()
            .map(|(b, a)| if old { b.as_desired() } else { a.as_desired() })
            .collect();
        let mut p = plan(
            &vlans,
            observed_vlans,
            Policy::Purge,
            &links,
            observed_links,
            Policy::Replace,
            rules,
        );
        // A port the change gave its first access VLAN: its "before" (the observed port) records
        // none, which the planner reads as "unmanaged"; going back, none is the value to restore,
        // or the port would keep a VLAN this same plan deletes (Junos refuses the commit).
        for (b, a) in self.links.iter().filter(|_| old) {
            if b.access_vlan.is_none()
                && a.access_vlan.is_some()
                && let Some(o) = observed_links.iter().find(|o| o.name == b.name)
            {
                clear_access_vlan(&mut p, o);
            }
        }
        p
    }
}

/// The journal of one repo's nodes.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
    enabled: bool,
    /// `NETGW_TX_RECORD=off` (test-only: the control of the transaction kill campaign) writes
    /// no transaction record, so recovery falls back to deciding device by device.
    tx_records: bool,
}

impl Journal {
    pub fn new(dir: PathBuf) -> Self {
        let on = |k: &str| std::env::var(k).map_or(true, |v| v != "off");
        let enabled = on("NETGW_JOURNAL");
        Journal {
            dir,
            enabled,
            tx_records: enabled && on("NETGW_TX_RECORD"),
        }
    }

    /// The journal's directory in the state directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether transaction records are written (and so whether intents name their transaction).
    pub fn records_tx(&self) -> bool {
        self.tx_records
    }

    fn tx_path(&self, id: &str) -> PathBuf {
        crate::state::tx_dir(&self.dir).join(format!("{id}.json"))
    }

    /// Record the transaction's phase durably (file and directory fsynced) before the step that
    /// phase allows begins.
    pub async fn write_tx(&self, rec: &TxRecord) -> Result<(), JournalError> {
        if !self.tx_records {
            return Ok(());
        }
        let path = self.tx_path(&rec.id);
        let value =
            serde_json::to_value(Versioned::new(&TX_FORMAT, rec)).map_err(|e| io(&path, e))?;
        blocking(path, move |p| {
            let (root, file) = root_and_file(p).map_err(|e| io(p, e))?;
            write_json_atomic(&root, Path::new(&file), &value).map_err(|e| io(p, e))
        })
        .await
    }

    /// A transaction's record; `None` when it was closed (or never written).
    pub async fn read_tx(&self, id: &str) -> Result<Option<TxRecord>, JournalError> {
        blocking(self.tx_path(id), |p| read_private(p, &TX_FORMAT)).await
    }

    /// Close the transaction once no member has an unfinished change left: until then its record
    /// is what tells the remaining members' recovery which way to go.
    pub async fn close_tx_if_settled(&self, rec: &TxRecord) -> Result<bool, JournalError> {
        for m in &rec.members {
            let Ok(n) = NodeName::new(m) else { continue };
            if self
                .read(&n)
                .await?
                .is_some_and(|i| i.tx.as_deref() == Some(&rec.id))
            {
                return Ok(false);
            }
        }
        // The members' entries were removed without a sync ([`Journal::clear`]): a record gone from
        // the disk while an entry is still there would send that member's recovery back.
        let entries = self.dir.clone();
        blocking(self.tx_path(&rec.id), move |p| {
            let root = RootDir::open(&entries).map_err(|e| io(&entries, e))?;
            sync_dir(root.path(), root.handle()).map_err(|e| io(&entries, e))?;
            remove_synced(p)
        })
        .await?;
        Ok(true)
    }

    pub fn path(&self, node: &NodeName) -> PathBuf {
        self.dir.join(format!("{node}.json"))
    }

    /// Record the intent durably (file and directory fsynced) before the change reaches the device.
    pub async fn write(&self, intent: &Intent) -> Result<(), JournalError> {
        if !self.enabled {
            return Ok(());
        }
        let file = PathBuf::from(format!("{}.json", intent.node));
        let path = self.dir.join(&file);
        let body = serde_json::to_vec(&Versioned::new(&INTENT_FORMAT, intent))
            .map_err(|e| io(&path, e))?;
        // Beneath the journal directory, never through a symlink (crate::rootdir), by the writer
        // thread that syncs the saves and entries queued at that moment as one group: a converge
        // stages hundreds of nodes at once. `clear` removed the last entry, so there is no spare to
        // reuse: the file is new.
        durable::write(durable::Root::Dir(self.dir.clone()), file, body)
            .await
            .map_err(|e| match e {
                crate::store::StoreError::Io { path, source } => io(&path, source),
                e => io(&path, e),
            })
    }

    /// The unfinished intent of a node, if any. An unreadable file is an error: it must not be
    /// silently forgotten.
    pub async fn read(&self, node: &NodeName) -> Result<Option<Intent>, JournalError> {
        blocking(self.path(node), read_entry).await
    }

    /// [`Journal::read`] on the calling thread (a blocking one).
    pub fn read_blocking(&self, node: &NodeName) -> Result<Option<Intent>, JournalError> {
        read_entry(&self.path(node))
    }

    /// Forget a finished change (confirmed, rolled back, or recovered).
    ///
    /// The removal is not synced here: an entry that outlives a finished change costs nothing but a
    /// read of the device (the next run finds it wholly new or wholly old and clears it again),
    /// while an entry lost before its change is finished would be harm; so only the write is
    /// synced before the device is touched. The removal reaches the disk with the next sync of the
    /// file system (the node's save right after, when the repo shares the file system; the kernel's
    /// writeback within seconds otherwise), and only a host crash, not a killed gateway, can lose it.
    /// A transaction's record is removed only after the journal directory is synced
    /// ([`Journal::close_tx_if_settled`]).
    pub async fn clear(&self, node: &NodeName) -> Result<(), JournalError> {
        blocking(self.path(node), |p| match std::fs::remove_file(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(p, e)),
            _ => Ok(()),
        })
        .await
    }
}

/// A node's entry at `p`; `None` when there is none. An unreadable file is an error: it must not be
/// silently forgotten.
fn read_entry(p: &Path) -> Result<Option<Intent>, JournalError> {
    read_private(p, &INTENT_FORMAT)
}

/// The JSON file at `p` (`None` when there is none), read only when it and its directory are this
/// user's and private (`crate::state::check_private`): an entry or a record steers recovery, which
/// changes devices even in a why-run, so one planted by another user is refused, naming it. Owner
/// and mode are those of the file opened (never through a symlink), not of a name checked earlier.
/// Its format is `format`'s, or an older one (migrated); a newer one is refused.
fn read_private<T: serde::de::DeserializeOwned>(
    p: &Path,
    format: &Format,
) -> Result<Option<T>, JournalError> {
    use std::io::Read;
    let dir = p.parent().unwrap_or(Path::new("."));
    let opened = RootDir::open(dir).and_then(|root| {
        root.open_file(
            Path::new(p.file_name().unwrap_or_default()),
            &FileOpen::READ,
        )
    });
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(p, e)),
    };
    crate::state::check_private_dir(dir)?;
    crate::state::check_private(p, &f.metadata().map_err(|e| io(p, e))?)?;
    let mut b = Vec::new();
    f.read_to_end(&mut b).map_err(|e| io(p, e))?;
    Ok(Some(versioned::parse(p, &b, format)?))
}

/// Remove a transaction record and sync its directory (absent already is fine).
fn remove_synced(p: &Path) -> Result<(), JournalError> {
    match std::fs::remove_file(p) {
        Ok(()) => {
            let (root, _) = root_and_file(p).map_err(|e| io(p, e))?;
            sync_dir(root.path(), root.handle()).map_err(|e| io(p, e))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io(p, e)),
    }
}

/// The journal directory (created 0700 when missing) and the file's name in it.
fn root_and_file(p: &Path) -> std::io::Result<(RootDir, std::ffi::OsString)> {
    let dir = p.parent().unwrap_or(Path::new("."));
    let name = p.file_name().unwrap_or_default().to_owned();
    Ok((RootDir::open_or_create(dir)?, name))
}

/// Nodes with an unfinished change in `dir` (blocking; none when the directory does not exist).
pub fn unfinished(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let node = name.strip_suffix(".json")?;
            NodeName::new(node).ok().map(|n| n.to_string())
        })
        .collect();
    names.sort();
    names
}

/// The open transactions' records in `journal_dir` (blocking; unreadable ones, and ones another user
/// could have written, are skipped with a warning: their members' intents still name them, and their
/// recovery fails loudly).
pub fn open_transactions(journal_dir: &Path) -> Vec<TxRecord> {
    let Ok(entries) = std::fs::read_dir(crate::state::tx_dir(journal_dir)) else {
        return Vec::new();
    };
    let mut out: Vec<TxRecord> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| {
            read_private(&e.path(), &TX_FORMAT)
                .inspect_err(|err| tracing::warn!(path = %e.path().display(), error = %err, "unreadable transaction record"))
                .ok()
                .flatten()
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// Where an atomic transaction (`crate::atomic`) stood: written before the step each phase allows,
/// so a gateway that dies leaves the phase its recovery must honour (docs/atomic.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TxPhase {
    /// Every member staged; commits may be under way.
    Staged,
    /// Every member committed (confirmed commit where the device has one); verify may be under way.
    Committed,
    /// Every member verified; the links check may be under way.
    Verified,
    /// Every member verified and checked, and confirms may be under way: the one point after which
    /// recovery finishes the transaction rather than undoing it.
    Confirming,
    /// Every member confirmed.
    Done,
    /// The transaction failed and its members were being rolled back.
    RolledBack,
}

impl TxPhase {
    /// Recovery of a member finishes the change (confirm it, or apply it again where a device's
    /// timer undid it) rather than undoing it.
    pub fn rolls_forward(self) -> bool {
        matches!(self, TxPhase::Confirming | TxPhase::Done)
    }
}

/// The durable record of one atomic transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TxRecord {
    /// The run id of the transaction.
    pub id: String,
    /// The nodes with a change in the transaction (nodes with nothing to change are not members).
    pub members: Vec<String>,
    pub phase: TxPhase,
    pub written_at: String,
}

impl TxRecord {
    pub fn new(id: &str, members: Vec<String>) -> Self {
        TxRecord {
            id: id.into(),
            members,
            phase: TxPhase::Staged,
            written_at: crate::clock::now_rfc3339(),
        }
    }

    pub fn at(&self, phase: TxPhase) -> Self {
        TxRecord {
            phase,
            written_at: crate::clock::now_rfc3339(),
            ..self.clone()
        }
    }
}

fn io(path: &Path, e: impl std::fmt::Display) -> JournalError {
    JournalError::Io {
        path: path.to_owned(),
        reason: e.to_string(),
    }
}

async fn blocking<T: Send + 'static>(
    path: PathBuf,
    f: impl FnOnce(&Path) -> Result<T, JournalError> + Send + 'static,
) -> Result<T, JournalError> {
    let p = path.clone();
    tokio::task::spawn_blocking(move || f(&p))
        .await
        .map_err(|e| io(&path, e))?
}

/// What a run found of an earlier run's unfinished change, and what it did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recovery {
    /// The run that died mid-change.
    pub run_id: String,
    /// `new` (the change had landed whole), `old` (none of it had) or `partial`.
    pub found: &'static str,
    /// `cleared` (nothing to do on the device), `confirmed` (a change found whole but still under
    /// the device's confirm timer made permanent), `reverted` (the device's own mechanism put the
    /// old state back) or `restored` (the exact inverse put the old state back, after a revert
    /// where one left something).
    pub action: &'static str,
    /// Resources the restore changed back.
    pub restored: usize,
    /// How: the device command (`configure session NAME commit`, `configure confirm`, `commit`,
    /// `configure session NAME abort`, `configure revert now`) and/or `exact inverse`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The atomic transaction the change belonged to and which way its record sent recovery:
    /// `forward` (every member had verified and confirms had begun: finish the change; `action`
    /// `reapplied` where a device's timer had undone it) or `back` (undo it, even when found whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction: Option<TxRecovery>,
}

/// Which way a member of an atomic transaction was recovered, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TxRecovery {
    pub id: String,
    /// The phase its record held (`None`: the record was gone, so the change was undone).
    pub phase: Option<TxPhase>,
    /// `forward` or `back`.
    pub direction: &'static str,
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let via = self.via.as_deref().unwrap_or("exact inverse");
        if let Some(t) = &self.transaction {
            let what = match (t.direction, self.action) {
                (_, "cleared") => format!("the device held the {} state whole", self.found),
                ("forward", "confirmed") => format!("confirmed it ({via})"),
                ("forward", _) => format!("applied its change again ({via})"),
                _ => format!("put the state before it back ({via})"),
            };
            return write!(
                f,
                "run {} (atomic transaction {}, recovered {}: its record said {}) left this node's change {}: {what}",
                self.run_id,
                t.id,
                t.direction,
                t.phase
                    .map_or("nothing (record gone)".into(), |p| format!("{p:?}")
                        .to_lowercase()),
                self.found
            );
        }
        match (self.found, self.action) {
            ("partial", _) => write!(
                f,
                "run {} left its change half-applied: restored {} resource(s) to the state before it ({via})",
                self.run_id, self.restored
            ),
            (_, "confirmed") => write!(
                f,
                "run {} left its change unconfirmed; the device held the new state whole: confirmed it ({via})",
                self.run_id
            ),
            (found, _) => write!(
                f,
                "run {} left an unfinished change; the device held the {} state whole: journal cleared",
                self.run_id, found
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netgw_models::resource::VlanSet;

    fn vlan(id: u16, name: &str) -> Vlan {
        Vlan {
            name: Some(name.into()),
            ..Vlan::new(VlanId::new(i64::from(id)).unwrap())
        }
    }

    fn rules() -> PlanRules {
        PlanRules {
            reserved_vlans: VlanSet::parse("1").unwrap(),
            default_native_vlan: VlanId::new(1).ok(),
        }
    }

    /// A run that created `v10` and changed one port from `before` to `after`.
    fn port_intent(platform: &str, v10: &Vlan, before: &Link, after: &Link) -> Intent {
        Intent {
            run_id: "r1".into(),
            node: "sw1".into(),
            platform: platform.into(),
            written_at: String::new(),
            vlans: vec![(v10.id, None, Some(v10.clone()))],
            links: vec![(before.clone(), after.clone())],
            lags: vec![],
            l3: vec![],
            rendered: vec![],
            tx: None,
        }
    }

    /// A change that made an aggregate and an SVI: found half-applied (the aggregate only), going back
    /// takes the members out and removes it, going forward adds the SVI; each end state is whole.
    #[test]
    fn aggregates_and_routed_interfaces_go_back_and_forward_exactly() {
        let lag: Lag = serde_json::from_value(serde_json::json!({"name": "Port-Channel10",
            "links": ["Ethernet1", "Ethernet2"], "lacp": "active", "enabled": true}))
        .unwrap();
        let svi: L3Interface = serde_json::from_value(serde_json::json!({"name": "Vlan10",
            "ipv4": ["10.0.10.1/24"], "enabled": true}))
        .unwrap();
        let i = Intent {
            lags: vec![(None, Some(lag.clone()))],
            l3: vec![(None, Some(svi.clone()))],
            links: vec![],
            ..port_intent(
                "eos",
                &vlan(10, "ten"),
                &Link::new("Ethernet9"),
                &Link::new("Ethernet9"),
            )
        };
        assert!(i.touches_lag_l3());
        let v = [vlan(10, "ten")];
        let links = [Link::new("Ethernet9")];
        let r = rules();
        let back = i.plan_to_all(true, (&v, &links), (std::slice::from_ref(&lag), &[]), &r);
        let steps: Vec<String> = back.steps().iter().map(ToString::to_string).collect();
        assert_eq!(
            steps,
            [
                "members leave lag[Port-Channel10]",
                "delete lag[Port-Channel10]",
                "delete vlan[10]"
            ]
        );
        let forward = i.plan_to_all(false, (&v, &links), (std::slice::from_ref(&lag), &[]), &r);
        let steps: Vec<String> = forward.steps().iter().map(ToString::to_string).collect();
        assert_eq!(steps, ["l3_interface[Vlan10]"]);
        let new = (std::slice::from_ref(&lag), std::slice::from_ref(&svi));
        assert!(i.plan_to_all(false, (&v, &links), new, &r).is_empty());
        assert!(
            i.plan_to_all(true, (&[], &links), (&[], &[]), &r)
                .is_empty()
        );
    }

    #[test]
    fn old_new_and_partial_states_are_told_apart() {
        let v10 = vlan(10, "ten");
        let v20_old = vlan(20, "old");
        let v20_new = vlan(20, "new");
        let i = Intent {
            run_id: "r1".into(),
            node: "sw1".into(),
            platform: "ios".into(),
            written_at: String::new(),
            vlans: vec![
                (v10.id, None, Some(v10.clone())),
                (v20_old.id, Some(v20_old.clone()), Some(v20_new.clone())),
            ],
            links: vec![],
            lags: vec![],
            l3: vec![],
            rendered: vec![],
            tx: None,
        };
        let other = vlan(30, "untouched");
        let old = [other.clone(), v20_old.clone()];
        let new = [other.clone(), v10.clone(), v20_new.clone()];
        let half = [other.clone(), v10.clone(), v20_old.clone()];
        let r = rules();
        assert!(i.plan_to(true, &old, &[], &r).is_empty());
        assert!(!i.plan_to(false, &old, &[], &r).is_empty());
        assert!(i.plan_to(false, &new, &[], &r).is_empty());
        assert!(!i.plan_to(true, &new, &[], &r).is_empty());
        let back = i.plan_to(true, &half, &[], &r);
        assert!(!i.plan_to(false, &half, &[], &r).is_empty());
        // Back to old: VLAN 10 removed, nothing else touched (30 stays).
        let ids: Vec<u16> = back.vlans.iter().map(|c| c.id.get()).collect();
        assert_eq!(ids, [10]);
        assert!(back.vlans[0].after.is_none());
    }

    #[test]
    fn undoing_a_first_access_vlan_takes_it_off_the_port() {
        let v10 = vlan(10, "ten");
        let mut before = Link::new("ge-0/0/1");
        before.mode = Some(netgw_models::resource::LinkMode::Access);
        before.enabled = Some(true);
        let mut after = before.clone();
        after.access_vlan = Some(v10.id);
        after.description = Some("tx".into());
        let i = port_intent("junos", &v10, &before, &after);
        let r = rules();
        let back = i.plan_to(
            true,
            std::slice::from_ref(&v10),
            std::slice::from_ref(&after),
            &r,
        );
        // The port leaves VLAN 10 in the same plan that deletes it.
        assert_eq!(back.vlans.len(), 1);
        assert_eq!(back.links.len(), 1);
        assert_eq!(back.links[0].after, before);
        assert!(back.links[0].changed("access_vlan"));
        // Back at the old state, nothing is left; finishing is untouched by it.
        assert!(i.plan_to(true, &[], &[before.clone()], &r).is_empty());
        assert!(i.plan_to(false, &[v10], &[after], &r).is_empty());
        // Without the VLAN on the port the undo only deletes the VLAN.
        let mut described = before.clone();
        described.description = Some("tx".into());
        let only_vlan = i.plan_to(true, &[vlan(10, "ten")], &[described], &r);
        assert!(only_vlan.links.iter().all(|c| !c.changed("access_vlan")));
    }

    #[test]
    fn an_access_port_observed_with_trunk_settings_plans_both_ways() {
        use netgw_models::resource::LinkMode;
        let v10 = vlan(10, "ten");
        // As EOS reports an access port: its trunk allowed list and native VLAN as well.
        let mut before = Link::new("Ethernet2");
        before.mode = Some(LinkMode::Access);
        before.enabled = Some(true);
        before.access_vlan = VlanId::new(1).ok();
        before.trunk_vlans = VlanSet::parse("1-4094").ok();
        before.native_vlan = VlanId::new(1).ok();
        let mut after = before.clone();
        after.access_vlan = Some(v10.id);
        after.description = Some("tx".into());
        let i = port_intent("eos", &v10, &before, &after);
        let r = rules();
        let forward = i.plan_to(false, &[], std::slice::from_ref(&before), &r);
        let back = i.plan_to(
            true,
            std::slice::from_ref(&v10),
            std::slice::from_ref(&after),
            &r,
        );
        for p in [&forward, &back] {
            let failed: Vec<String> = p.failures().map(|f| f.resource.to_string()).collect();
            assert!(failed.is_empty(), "{failed:?}");
            assert_eq!(p.links.len(), 1);
        }
        assert!(forward.links[0].changed("access_vlan"));
        // Reached: nothing left either way.
        assert!(i.plan_to(false, &[v10], &[after], &r).is_empty());
        assert!(i.plan_to(true, &[], &[before], &r).is_empty());
    }

    #[tokio::test]
    async fn write_read_clear() {
        let d = tempfile::tempdir().unwrap();
        let j = Journal {
            dir: d.path().join("journal"),
            enabled: true,
            tx_records: true,
        };
        let n = NodeName::new("sw1").unwrap();
        assert_eq!(j.read(&n).await.unwrap(), None);
        let v = vlan(10, "ten");
        let i = Intent {
            run_id: "r1".into(),
            node: "sw1".into(),
            platform: "ios".into(),
            written_at: "t".into(),
            vlans: vec![(v.id, None, Some(v))],
            links: vec![],
            lags: vec![],
            l3: vec![],
            rendered: vec!["vlan 10".into()],
            tx: Some("t1".into()),
        };
        j.write(&i).await.unwrap();
        assert_eq!(j.read(&n).await.unwrap(), Some(i.clone()));
        assert_eq!(unfinished(&j.dir), ["sw1"]);
        j.clear(&n).await.unwrap();
        assert_eq!(j.read(&n).await.unwrap(), None);
        assert!(unfinished(&j.dir).is_empty());
        std::fs::write(j.path(&n), "{").unwrap();
        let e = j.read(&n).await.unwrap_err().to_string();
        assert!(e.contains("sw1.json"), "{e}");
        // Written with its format first; netgw 0.3's entry (no `format`) reads the same; a newer
        // netgw's is refused naming the file and both versions.
        j.write(&i).await.unwrap();
        let written: serde_json::Value =
            serde_json::from_slice(&std::fs::read(j.path(&n)).unwrap()).unwrap();
        assert_eq!(written["format"], INTENT_FORMAT.current);
        let mut old = written.clone();
        old.as_object_mut().unwrap().remove("format");
        std::fs::write(j.path(&n), old.to_string()).unwrap();
        assert_eq!(j.read(&n).await.unwrap(), Some(i.clone()));
        old["format"] = (INTENT_FORMAT.current + 1).into();
        std::fs::write(j.path(&n), old.to_string()).unwrap();
        let e = j.read(&n).await.unwrap_err().to_string();
        assert!(
            e.contains("sw1.json") && e.contains("format 3") && e.contains("upgrade netgw"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn records_and_entries_another_user_could_write_are_refused() {
        use std::os::unix::fs::{PermissionsExt, chown};
        let d = tempfile::tempdir().unwrap();
        let j = Journal {
            dir: d.path().join("journal"),
            enabled: true,
            tx_records: true,
        };
        let rec = TxRecord::new("t1", vec!["sw1".into()]);
        j.write_tx(&rec).await.unwrap();
        let path = j.tx_path("t1");
        // Owned by another user (uid 65534 stands for one): refused naming it; not listed as open.
        chown(&path, Some(65534), Some(65534)).unwrap();
        let e = j.read_tx("t1").await.unwrap_err().to_string();
        assert!(
            e.contains(path.to_str().unwrap()) && e.contains("owned by uid 65534"),
            "{e}"
        );
        assert!(open_transactions(&j.dir).is_empty());
        // Ours but writable by others: the same.
        chown(&path, Some(0), Some(0)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o622)).unwrap();
        let e = j.read_tx("t1").await.unwrap_err().to_string();
        assert!(e.contains("lets group or others write it"), "{e}");
        // Control: ours and private, it is read.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(j.read_tx("t1").await.unwrap().unwrap().id, "t1");
        assert_eq!(open_transactions(&j.dir).len(), 1);
    }

    #[tokio::test]
    async fn a_transaction_record_stays_open_while_a_member_has_an_unfinished_change() {
        let d = tempfile::tempdir().unwrap();
        let j = Journal {
            dir: d.path().join("journal"),
            enabled: true,
            tx_records: true,
        };
        let rec = TxRecord::new("t1", vec!["sw1".into(), "sw2".into()]);
        j.write_tx(&rec).await.unwrap();
        j.write_tx(&rec.at(TxPhase::Confirming)).await.unwrap();
        let read = j.read_tx("t1").await.unwrap().unwrap();
        assert_eq!(read.phase, TxPhase::Confirming);
        assert!(read.phase.rolls_forward() && !TxPhase::Verified.rolls_forward());
        assert_eq!(open_transactions(&j.dir), std::slice::from_ref(&read));
        let intent = |node: &str, tx: Option<&str>| Intent {
            run_id: "t1".into(),
            node: node.into(),
            platform: "eos".into(),
            written_at: String::new(),
            vlans: vec![],
            links: vec![],
            lags: vec![],
            l3: vec![],
            rendered: vec![],
            tx: tx.map(str::to_owned),
        };
        j.write(&intent("sw2", Some("t1"))).await.unwrap();
        // The record's directory is not taken for a node.
        assert_eq!(unfinished(&j.dir), ["sw2"]);
        assert!(!j.close_tx_if_settled(&read).await.unwrap());
        // An entry of another run (no transaction) does not hold it open.
        j.write(&intent("sw2", None)).await.unwrap();
        assert!(j.close_tx_if_settled(&read).await.unwrap());
        assert_eq!(j.read_tx("t1").await.unwrap(), None);
        assert!(open_transactions(&j.dir).is_empty());
    }
}
