//! Rollout controls of a run, as Ansible users know them: batches (`--serial`, Ansible's `serial`,
//! including its list form `1,5,25%` for a canary first), a failure budget (`--max-fail`, a count or
//! Ansible's `max_fail_percentage`), and a stop after a batch that failed whole (Ansible's default).
//! Beyond Ansible: once a device rejects a login, nodes with the same credentials are not tried (a
//! wrong password across 500 devices is then at most `concurrency` failed logins, not 500 and an AAA
//! lockout). A node kept from starting is reported `not_started` with the reason; in-flight nodes
//! always finish.

use crate::kind::NodeErrorKind;
use crate::report::NodeReport;
use netgw_drivers::target::DeviceTarget;
use std::hash::{BuildHasher, Hash, Hasher};
use std::str::FromStr;
use std::sync::Mutex;

/// How many nodes: a count, or a percentage of the selected nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Count(usize),
    Percent(u32),
}

impl FromStr for Amount {
    type Err = String;

    fn from_str(s: &str) -> Result<Amount, String> {
        let s = s.trim();
        match s.strip_suffix('%') {
            Some(p) => match p.parse::<u32>() {
                Ok(p) if p <= 100 => Ok(Amount::Percent(p)),
                _ => Err(format!("{s:?}: a percentage is 0% to 100%")),
            },
            None => match s.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(Amount::Count(n)),
                _ => Err(format!(
                    "{s:?}: give a number of nodes (1 or more) or a percentage such as 25%"
                )),
            },
        }
    }
}

/// `--serial`: batch sizes, the last one repeated (`1,5,25%`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Serial(pub Vec<Amount>);

impl FromStr for Serial {
    type Err = String;

    fn from_str(s: &str) -> Result<Serial, String> {
        s.split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map(Serial)
    }
}

/// The run's rollout controls (`EngineOptions::rollout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rollout {
    /// Empty: one batch of every node.
    pub serial: Serial,
    pub max_fail: Option<Amount>,
    /// Do not try credentials a device rejected on the other nodes that use them.
    pub stop_on_rejected_login: bool,
}

impl Default for Rollout {
    fn default() -> Self {
        Rollout {
            serial: Serial::default(),
            max_fail: None,
            stop_on_rejected_login: true,
        }
    }
}

/// Ansible's `pct_to_int`: a percentage of `total`, rounded down, at least 1.
fn share(a: Amount, total: usize) -> usize {
    match a {
        Amount::Count(n) => n,
        Amount::Percent(p) => (total * p as usize / 100).max(1),
    }
}

/// The batch sizes for `total` nodes (Ansible's `_get_serialized_batches`).
pub fn batches(serial: &Serial, total: usize) -> Vec<usize> {
    if serial.0.is_empty() {
        return vec![total];
    }
    let mut out = Vec::new();
    let mut left = total;
    let mut i = 0;
    while left > 0 {
        let n = share(serial.0[i], total).min(left);
        out.push(n);
        left -= n;
        i = (i + 1).min(serial.0.len() - 1);
    }
    out
}

/// What a run decided so far: shared by its node tasks, across batches.
pub struct Gate {
    /// Stop once this many nodes failed.
    stop_at: Option<usize>,
    limit: Option<Amount>,
    stop_on_rejected_login: bool,
    keys: std::collections::hash_map::RandomState,
    state: Mutex<GateState>,
}

#[derive(Default)]
struct GateState {
    failed: usize,
    stopped: Option<String>,
    /// Credential fingerprints a device rejected, with the first node that rejected them.
    rejected: Vec<(u64, String)>,
}

impl Gate {
    pub fn new(rollout: &Rollout, total: usize) -> Gate {
        // A count stops at that many failures; a percentage when more than that share failed
        // (Ansible's max_fail_percentage: 0% stops at the first failure).
        let stop_at = rollout.max_fail.map(|a| match a {
            Amount::Count(n) => n,
            Amount::Percent(p) => total * p as usize / 100 + 1,
        });
        Gate {
            stop_at,
            limit: rollout.max_fail,
            stop_on_rejected_login: rollout.stop_on_rejected_login,
            keys: Default::default(),
            state: Mutex::new(GateState::default()),
        }
    }

    /// A fingerprint of the target's login credentials: a keyed hash that never leaves the process.
    pub fn credentials(&self, target: &DeviceTarget) -> u64 {
        let mut h = self.keys.build_hasher();
        target.username.hash(&mut h);
        target.password.as_ref().map(|p| p.expose()).hash(&mut h);
        target.key_file.hash(&mut h);
        for (name, c) in &target.connection_options {
            name.hash(&mut h);
            c.username.hash(&mut h);
            c.password.as_ref().map(|p| p.expose()).hash(&mut h);
        }
        h.finish()
    }

    /// `None` when the node may start, else why not.
    pub fn admit(&self, credentials: Option<u64>) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(reason) = &state.stopped {
            return Some(reason.clone());
        }
        let rejected = state
            .rejected
            .iter()
            .find(|(c, _)| Some(*c) == credentials)?;
        Some(format!(
            "{} rejected the same login (authentication failed): not tried here, to keep clear of an AAA lockout (--continue-on-rejected-login tries every device)",
            rejected.1
        ))
    }

    /// Count a finished node.
    pub fn record(&self, credentials: Option<u64>, report: &NodeReport) {
        if !report.failed() {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.failed += 1;
        if let (Some(at), Some(limit)) = (self.stop_at, self.limit)
            && state.failed >= at
            && state.stopped.is_none()
        {
            let limit = match limit {
                Amount::Count(n) => n.to_string(),
                Amount::Percent(p) => format!("{p}%"),
            };
            state.stopped = Some(format!(
                "{} node(s) failed, the limit of --max-fail {limit}",
                state.failed
            ));
        }
        if self.stop_on_rejected_login
            && report.error_kind == Some(NodeErrorKind::Auth)
            && let Some(c) = credentials
            && !state.rejected.iter().any(|(r, _)| *r == c)
        {
            state.rejected.push((c, report.name.clone()));
        }
    }

    /// After a batch: one whose every started node failed stops the rollout (Ansible's rule).
    pub fn end_batch(&self, batch: &[NodeReport], more_batches: bool) {
        let started: Vec<&NodeReport> = batch
            .iter()
            .filter(|n| n.status != crate::report::NodeStatus::NotStarted)
            .collect();
        if more_batches && !started.is_empty() && started.iter().all(|n| n.failed()) {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.stopped.get_or_insert_with(|| {
                format!(
                    "every node of the previous batch failed ({} of {})",
                    started.len(),
                    batch.len()
                )
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::NodeStatus;

    fn serial(s: &str) -> Serial {
        s.parse().unwrap()
    }

    #[test]
    fn batches_follow_ansible_serial() {
        assert_eq!(batches(&Serial::default(), 7), [7]);
        assert_eq!(batches(&serial("3"), 7), [3, 3, 1]);
        assert_eq!(batches(&serial("1,2,50%"), 10), [1, 2, 5, 2]);
        assert_eq!(batches(&serial("30%"), 10), [3, 3, 3, 1]);
        assert_eq!(batches(&serial("1%"), 10), [1; 10], "at least one a batch");
        assert_eq!(batches(&serial("5"), 0), Vec::<usize>::new());
        for bad in ["0", "x", "101%", "-1", "1,,2"] {
            assert!(bad.parse::<Serial>().is_err(), "{bad}");
        }
    }

    fn failed(name: &str, kind: NodeErrorKind) -> NodeReport {
        let mut r = NodeReport::new(name, false);
        r.status = NodeStatus::Failed;
        r.error_kind = Some(kind);
        r
    }

    #[test]
    fn max_fail_counts_and_percentages() {
        let gate = |m: &str| {
            let rollout = Rollout {
                max_fail: Some(m.parse().unwrap()),
                stop_on_rejected_login: false,
                ..Default::default()
            };
            Gate::new(&rollout, 10)
        };
        let g = gate("2");
        g.record(None, &failed("a", NodeErrorKind::Device));
        assert_eq!(g.admit(None), None);
        g.record(None, &NodeReport::new("ok", false));
        g.record(None, &failed("b", NodeErrorKind::Device));
        let why = g.admit(None).expect("stopped");
        assert!(
            why.contains("2 node(s) failed") && why.contains("--max-fail 2"),
            "{why}"
        );
        // 20% of 10: stops when more than 2 failed.
        let g = gate("20%");
        for n in ["a", "b"] {
            g.record(None, &failed(n, NodeErrorKind::Device));
        }
        assert_eq!(g.admit(None), None);
        g.record(None, &failed("c", NodeErrorKind::Device));
        assert!(g.admit(None).is_some());
        let g = gate("0%");
        g.record(None, &failed("a", NodeErrorKind::Timeout));
        assert!(g.admit(None).is_some(), "0% stops at the first failure");
    }

    #[test]
    fn a_rejected_login_stops_only_its_credentials() {
        let g = Gate::new(&Rollout::default(), 10);
        let mut t = DeviceTarget::new("a", netgw_drivers::driver::Platform::Eos, "h");
        t.username = "admin".into();
        t.password = Some(netgw_models::secret::Secret::new("wrong"));
        let wrong = g.credentials(&t);
        t.password = Some(netgw_models::secret::Secret::new("right"));
        let right = g.credentials(&t);
        assert_ne!(wrong, right);
        g.record(Some(wrong), &failed("a", NodeErrorKind::Device));
        assert_eq!(g.admit(Some(wrong)), None, "not an authentication failure");
        g.record(Some(wrong), &failed("b", NodeErrorKind::Auth));
        let why = g.admit(Some(wrong)).expect("same login stopped");
        assert!(why.starts_with("b rejected the same login"), "{why}");
        assert_eq!(g.admit(Some(right)), None);
        let off = Rollout {
            stop_on_rejected_login: false,
            ..Default::default()
        };
        let g = Gate::new(&off, 10);
        g.record(Some(wrong), &failed("b", NodeErrorKind::Auth));
        assert_eq!(g.admit(Some(wrong)), None);
    }

    #[test]
    fn a_batch_that_failed_whole_stops_the_rollout() {
        let g = Gate::new(&Rollout::default(), 4);
        let ok = NodeReport::new("ok", false);
        g.end_batch(&[failed("a", NodeErrorKind::Device), ok], true);
        assert_eq!(g.admit(None), None);
        g.end_batch(&[failed("b", NodeErrorKind::Device)], false);
        assert_eq!(g.admit(None), None, "no batch after the last");
        g.end_batch(&[failed("c", NodeErrorKind::Device)], true);
        assert!(
            g.admit(None)
                .unwrap()
                .contains("every node of the previous batch failed")
        );
    }
}
