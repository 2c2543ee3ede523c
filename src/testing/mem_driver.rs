//! The one in-memory device of the whole-converge tests: the engine's own tests (src/engine.rs,
//! src/atomic.rs), the store and classifier tests and the races (tests/it). The drivers are
//! tested on their own against real outputs and third-party peers; here the device only has to keep
//! VLANs and links, apply plans, count sessions and commits, and fail or slow down on request.

use crate::engine::{Connector, Job};
use async_trait::async_trait;
use netgw_drivers::driver::{
    Capabilities, CommitOptions, Driver, DriverError, ErrorKind, Observed, Platform, Staged,
};
use netgw_drivers::target::DeviceTarget;
use netgw_models::facts::DeviceFacts;
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, Vlan, VlanId, VlanSet};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The device's state, its faults and its counters. Share it as `Arc<Mutex<Device>>` ([`device`]).
#[derive(Default)]
pub struct Device {
    pub vlans: Vec<Vlan>,
    pub links: Vec<Link>,
    /// Commit is refused (`% Invalid input`).
    pub reject_commit: bool,
    /// Commit answers ok but leaves the last VLAN change out.
    pub drop_on_commit: bool,
    /// Commit applies this many VLAN changes, then never answers (a device or link gone silent
    /// mid-change).
    pub hang_in_commit: Option<usize>,
    /// The connection is refused as bad credentials.
    pub auth_fail: bool,
    /// Facts panic (a bug in a driver).
    pub panic_in_facts: bool,
    /// Stage is refused (`% Invalid input`).
    pub reject_stage: bool,
    /// What stage says it sent (`Staged::rendered`), and what `rendered_ahead` says it will send
    /// (`None`: it does not know ahead).
    pub rendered: Vec<String>,
    pub renders_ahead: Option<Vec<String>>,
    /// Stage waits for this before it answers.
    pub hold_stage: Option<Arc<tokio::sync::Notify>>,
    /// A delay in microseconds drawn before connect, facts, observe, stage, commit and confirm (the
    /// races' seeded latency). Without it connect only yields, and nothing else waits.
    pub latency: Option<Box<dyn FnMut() -> u64 + Send>>,
    pub rollbacks: usize,
    pub commits_started: usize,
    pub commits: usize,
    /// Open sessions now, and the most ever open at once.
    pub sessions: usize,
    pub max_sessions: usize,
    /// Every session as the device saw it: opened, and closed (`close`, or its connection dropped).
    pub session_log: Vec<(Instant, Option<Instant>)>,
    /// Every call that reached the device: the session (its index in `session_log`), what, when.
    pub calls: Vec<(usize, &'static str, Instant)>,
}

/// A device with VLAN 1 and no links.
pub fn device() -> Arc<Mutex<Device>> {
    Arc::new(Mutex::new(Device {
        vlans: vec![Vlan::new(VlanId::new(1).unwrap())],
        ..Default::default()
    }))
}

/// Apply a plan's VLAN and link changes to the device.
pub fn apply_plan(d: &mut Device, p: &Plan) {
    for c in &p.vlans {
        d.vlans.retain(|v| v.id != c.id);
        if let Some(a) = &c.after {
            d.vlans.push(a.clone());
        }
    }
    d.vlans.sort_by_key(|v| v.id);
    for c in &p.links {
        if let Some(l) = d.links.iter_mut().find(|l| l.name == c.after.name) {
            *l = c.after.clone();
        }
    }
}

/// The device's latency, if it has one: under 300 µs a yield, else a sleep.
async fn pause(dev: &Mutex<Device>, or_yield: bool) {
    let us = dev.lock().unwrap().latency.as_mut().map(|draw| draw());
    match us {
        Some(us) if us >= 300 => tokio::time::sleep(Duration::from_micros(us)).await,
        Some(_) => tokio::task::yield_now().await,
        None if or_yield => tokio::task::yield_now().await,
        None => {}
    }
}

/// One session of a [`Device`], an EOS-like driver with a candidate.
pub struct MemDriver {
    name: String,
    dev: Arc<Mutex<Device>>,
    staged: Option<Plan>,
    pre: Option<(Vec<Vlan>, Vec<Link>)>,
    /// This session's index in the device's `session_log`; `None` once closed.
    session: Option<usize>,
}

impl MemDriver {
    /// The device sees a call of this session.
    fn call(&self, what: &'static str) {
        let mut d = self.dev.lock().unwrap();
        if let Some(i) = self.session {
            d.calls.push((i, what, Instant::now()));
        }
    }

    /// The device sees this session end (once).
    fn end(&mut self) {
        if let Some(i) = self.session.take() {
            let mut d = self.dev.lock().unwrap();
            d.sessions = d.sessions.saturating_sub(1);
            d.session_log[i].1 = Some(Instant::now());
        }
    }

    /// Apply the first `n` VLAN changes (the links go last, as on a device that applies lines in
    /// order), keeping what was there for a rollback.
    fn apply_first(&mut self, n: usize) {
        let mut d = self.dev.lock().unwrap();
        self.pre = Some((d.vlans.clone(), d.links.clone()));
        let mut first = self.staged.clone().unwrap_or_default();
        if n < first.vlans.len() {
            first.links.clear();
        }
        first.vlans.truncate(n);
        apply_plan(&mut d, &first);
    }
}

#[async_trait]
impl Driver for MemDriver {
    fn platform(&self) -> Platform {
        Platform::Eos
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            candidate: true,
            ..Default::default()
        }
    }
    fn plan_rules(&self) -> PlanRules {
        PlanRules {
            reserved_vlans: VlanSet::parse("1").unwrap(),
            default_native_vlan: VlanId::new(1).ok(),
        }
    }
    fn validate(&self, vlans: &[Vlan], _links: &[Link]) -> Vec<(ResourceRef, String)> {
        vlans
            .iter()
            .filter(|v| v.name.as_ref().is_some_and(|n| n.len() > 32))
            .map(|v| {
                (
                    ResourceRef::Vlan { id: v.id },
                    "name longer than 32".to_string(),
                )
            })
            .collect()
    }
    async fn facts(&mut self) -> Result<DeviceFacts, DriverError> {
        self.call("facts");
        pause(&self.dev, false).await;
        if self.dev.lock().unwrap().panic_in_facts {
            panic!("facts parser bug");
        }
        Ok(DeviceFacts {
            hostname: Some(self.name.clone()),
            vendor: Some("arista".into()),
            ..Default::default()
        })
    }
    async fn observe(&mut self) -> Result<Observed, DriverError> {
        self.call("observe");
        pause(&self.dev, false).await;
        let d = self.dev.lock().unwrap();
        Ok(Observed {
            vlans: d.vlans.clone(),
            links: d.links.clone(),
        })
    }
    fn rendered_ahead(&self, _plan: &Plan) -> Option<Vec<String>> {
        self.dev.lock().unwrap().renders_ahead.clone()
    }
    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        self.call("stage");
        pause(&self.dev, false).await;
        let hold = self.dev.lock().unwrap().hold_stage.clone();
        if let Some(h) = hold {
            h.notified().await;
        }
        let (reject, rendered) = {
            let d = self.dev.lock().unwrap();
            (d.reject_stage, d.rendered.clone())
        };
        if reject {
            return Err(DriverError::Rejected {
                device: self.name.clone(),
                step: "stage",
                message: "% Invalid input".into(),
            });
        }
        self.staged = Some(plan.clone());
        Ok(Staged {
            diff: format!("+{} vlan change(s)", plan.vlans.len()),
            rendered,
        })
    }
    async fn discard(&mut self) -> Result<(), DriverError> {
        self.call("discard");
        self.staged = None;
        Ok(())
    }
    async fn commit(&mut self, _o: &CommitOptions) -> Result<(), DriverError> {
        self.call("commit");
        pause(&self.dev, false).await;
        let hang = {
            let mut d = self.dev.lock().unwrap();
            d.commits_started += 1;
            d.hang_in_commit
        };
        if let Some(n) = hang {
            self.apply_first(n);
            std::future::pending::<()>().await;
        }
        let mut d = self.dev.lock().unwrap();
        if d.reject_commit {
            return Err(DriverError::Rejected {
                device: self.name.clone(),
                step: "commit",
                message: "% Invalid input".into(),
            });
        }
        self.pre = Some((d.vlans.clone(), d.links.clone()));
        let mut p = self.staged.take().unwrap_or_default();
        if d.drop_on_commit {
            // The device answers ok but applies only part of it.
            p.vlans.truncate(p.vlans.len().saturating_sub(1));
        }
        apply_plan(&mut d, &p);
        d.commits += 1;
        Ok(())
    }
    fn persistence(&self) -> netgw_drivers::driver::Persistence {
        netgw_drivers::driver::Persistence::not_saved(
            "the in-memory test device has no startup configuration",
        )
    }
    async fn confirm(&mut self) -> Result<(), DriverError> {
        self.call("confirm");
        pause(&self.dev, false).await;
        self.pre = None;
        Ok(())
    }
    async fn rollback(&mut self) -> Result<(), DriverError> {
        self.call("rollback");
        if let Some((v, l)) = self.pre.take() {
            let mut d = self.dev.lock().unwrap();
            d.rollbacks += 1;
            d.vlans = v;
            d.links = l;
        }
        Ok(())
    }
    async fn close(&mut self) -> Result<(), DriverError> {
        self.end();
        Ok(())
    }
}

/// A session dropped without `close` is a connection cut: the device sees it end too.
impl Drop for MemDriver {
    fn drop(&mut self) {
        self.end();
    }
}

/// Devices by node name; an unknown name is refused as a connection would be.
pub struct MemConnector(pub HashMap<String, Arc<Mutex<Device>>>);

#[async_trait]
impl Connector for MemConnector {
    async fn connect(&self, t: &DeviceTarget) -> Result<Box<dyn Driver>, DriverError> {
        let Some(dev) = self.0.get(&t.name) else {
            return Err(DriverError::Transport {
                device: t.name.clone(),
                step: "connect",
                kind: ErrorKind::Connect,
                source: "connection refused".into(),
            });
        };
        let session = {
            let mut d = dev.lock().unwrap();
            if d.auth_fail {
                return Err(DriverError::Transport {
                    device: t.name.clone(),
                    step: "login",
                    kind: ErrorKind::Auth,
                    source: "permission denied".into(),
                });
            }
            d.sessions += 1;
            d.max_sessions = d.max_sessions.max(d.sessions);
            d.session_log.push((Instant::now(), None));
            d.session_log.len() - 1
        };
        let driver = MemDriver {
            name: t.name.clone(),
            dev: dev.clone(),
            staged: None,
            pre: None,
            session: Some(session),
        };
        // Let other tasks run inside the session, so overlaps would show.
        pause(dev, true).await;
        Ok(Box::new(driver))
    }
}

pub fn connector(devs: &[(&str, Arc<Mutex<Device>>)]) -> Arc<MemConnector> {
    Arc::new(MemConnector(
        devs.iter()
            .map(|(n, d)| (n.to_string(), d.clone()))
            .collect(),
    ))
}

/// A job for node `name`, an EOS target on 127.0.0.1 (the connector never dials it).
pub fn job(name: &str) -> Job {
    Job {
        name: name.into(),
        target: Ok(DeviceTarget::new(name, Platform::Eos, "127.0.0.1")),
    }
}
