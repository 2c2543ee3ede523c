//! The session and no-session apply paths, driven through the real driver over a recording eAPI double
//! (NAPALM's pattern: only the transport is fake). The double keeps a VLAN table and understands just
//! enough EOS (`configure [session NAME [commit [timer T]|abort]]`, `vlan`, `name`, `no vlan`, `exit`,
//! `end`, `show ...`) to tell whether a change is active, staged, rolled back or never sent. `show
//! version` answers come from the recorded napalm fixture; fake-switches has no sessions, so this is
//! where `configure session` / `show session-config diffs` / commit timer / abort are tested.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use netgw_models::plan::{Policy, plan};
use netgw_models::resource::{Link, Vlan};
use serde_json::{Value, json};

use super::eapi::{Eapi, EapiTransport, Reply};
use super::*;
use crate::driver::ErrorKind;
use crate::transport::http::HttpError;
use crate::transport::http::TlsMode;

const NAPALM_SHOW_VERSION: &str =
    include_str!("../../tests/fixtures/conformance/eos/facts/napalm_get_facts/show_version.json");

#[derive(Default)]
struct Device {
    /// `show version` answer; `None` answers HTTP 500 like fake-switches.
    version: Option<Value>,
    running: BTreeMap<u16, String>,
    /// Session name -> its candidate VLAN table.
    sessions: BTreeMap<String, BTreeMap<u16, String>>,
    /// Running config before a timed commit, restored by abort.
    timer_backup: Option<(String, BTreeMap<u16, String>)>,
    /// Commands the device rejects.
    reject: Vec<String>,
    /// Every request: (format, commands without the leading enable).
    log: Vec<(String, Vec<String>)>,
    writes: usize,
}

impl Device {
    fn show_vlan(table: &BTreeMap<u16, String>) -> Value {
        let vlans: serde_json::Map<String, Value> = table
            .iter()
            .map(|(id, n)| {
                (
                    id.to_string(),
                    json!({"name": n, "status": "active", "interfaces": {}}),
                )
            })
            .collect();
        json!({ "vlans": vlans })
    }

    fn diff(before: &BTreeMap<u16, String>, after: &BTreeMap<u16, String>, name: &str) -> String {
        let mut out = format!("--- system:/running-config\n+++ session:/{name}-session-config\n");
        for (id, n) in after {
            match before.get(id) {
                None => out.push_str(&format!("+vlan {id}\n+   name {n}\n")),
                Some(old) if old != n => {
                    out.push_str(&format!(" vlan {id}\n-   name {old}\n+   name {n}\n"))
                }
                _ => {}
            }
        }
        for (id, n) in before {
            if !after.contains_key(id) {
                out.push_str(&format!("-vlan {id}\n-   name {n}\n"));
            }
        }
        out
    }

    fn table(&mut self, target: &Option<Option<String>>) -> Option<&mut BTreeMap<u16, String>> {
        match target {
            Some(None) => Some(&mut self.running),
            Some(Some(s)) => self.sessions.get_mut(s),
            None => None,
        }
    }

    /// Run commands; Err((index, message)) stops at the failed one, like eAPI.
    fn run(&mut self, cmds: &[String], format: &str) -> Result<Vec<Value>, (usize, String)> {
        self.log.push((format.to_owned(), cmds.to_vec()));
        let text = |s: String| {
            if format == "text" {
                json!({"output": s})
            } else {
                json!({})
            }
        };
        let mut out = Vec::new();
        // Where config commands go: None = exec mode, Some(None) = running, Some(Some(name)) = a session.
        let mut target: Option<Option<String>> = None;
        let mut vlan_ctx: Option<u16> = None;
        for (i, c) in cmds.iter().enumerate() {
            if self.reject.contains(c) {
                return Err((i, "Invalid input".into()));
            }
            let words: Vec<&str> = c.split_whitespace().collect();
            match words.as_slice() {
                ["show", "version"] => match &self.version {
                    Some(v) => out.push(v.clone()),
                    None => return Err((usize::MAX, "500".into())),
                },
                ["show", "vlan"] => out.push(Self::show_vlan(&self.running)),
                ["show", "interfaces"] => out.push(json!({"interfaces": {"Ethernet1": {"description": "", "interfaceStatus": "connected", "mtu": 9214, "forwardingModel": "bridged"}}})),
                ["show", "interfaces", "switchport"] => out.push(json!({"switchports": {"Ethernet1": {"enabled": true, "switchportInfo": {"mode": "trunk", "accessVlanId": 1, "trunkAllowedVlans": "ALL", "trunkingNativeVlanId": 1}}}})),
                ["show", "session-config", "diffs"] => {
                    let Some(Some(s)) = &target else { return Err((i, "not in a session".into())) };
                    let d = Self::diff(&self.running, &self.sessions[s], s);
                    out.push(text(d));
                }
                ["configure", "session", name] => {
                    let snapshot = self.running.clone();
                    self.sessions.entry(name.to_string()).or_insert(snapshot);
                    target = Some(Some(name.to_string()));
                    out.push(text(String::new()));
                }
                ["configure", "session", name, "commit", rest @ ..] => {
                    let Some(cand) = self.sessions.remove(*name) else {
                        // Confirming a timed commit: the session is already active.
                        if matches!(&self.timer_backup, Some((n, _)) if n == name) && rest.is_empty() {
                            self.timer_backup = None;
                            out.push(text(String::new()));
                            continue;
                        }
                        return Err((i, format!("no session {name}")));
                    };
                    if let ["timer", _] = rest {
                        self.timer_backup = Some((name.to_string(), self.running.clone()));
                    }
                    self.running = cand;
                    out.push(text(String::new()));
                }
                ["configure", "session", name, "abort"] => {
                    self.sessions.remove(*name);
                    if let Some((n, backup)) = self.timer_backup.take() {
                        if n == *name {
                            self.running = backup;
                        } else {
                            self.timer_backup = Some((n, backup));
                        }
                    }
                    out.push(text(String::new()));
                }
                ["configure"] => {
                    target = Some(None);
                    out.push(text(String::new()));
                }
                ["end"] => {
                    target = None;
                    out.push(text(String::new()));
                }
                ["exit"] => {
                    vlan_ctx = None;
                    out.push(text(String::new()));
                }
                ["write", "memory"] => {
                    self.writes += 1;
                    out.push(text(String::new()));
                }
                ["vlan", id] => {
                    let id: u16 = id.parse().map_err(|_| (i, "Invalid input".to_owned()))?;
                    let t = self.table(&target).ok_or((i, "not in config mode".to_owned()))?;
                    t.entry(id).or_insert_with(|| format!("VLAN{id:04}"));
                    vlan_ctx = Some(id);
                    out.push(text(String::new()));
                }
                ["name", n] => {
                    let id = vlan_ctx.ok_or((i, "Invalid input".to_owned()))?;
                    let t = self.table(&target).ok_or((i, "not in config mode".to_owned()))?;
                    t.insert(id, n.to_string());
                    out.push(text(String::new()));
                }
                ["no", "vlan", id] => {
                    let id: u16 = id.parse().map_err(|_| (i, "Invalid input".to_owned()))?;
                    let t = self.table(&target).ok_or((i, "not in config mode".to_owned()))?;
                    t.remove(&id);
                    out.push(text(String::new()));
                }
                _ => return Err((i, "Invalid input".into())),
            }
        }
        Ok(out)
    }
}

#[derive(Clone)]
struct Fake(Arc<Mutex<Device>>);

#[async_trait]
impl EapiTransport for Fake {
    async fn post(&self, request: &Value) -> Result<Reply, HttpError> {
        self.answer(request)
            .map(|v| Reply::from_value(&v).expect("the fake answers JSON-RPC"))
    }
}

impl Fake {
    fn answer(&self, request: &Value) -> Result<Value, HttpError> {
        let cmds: Vec<String> = request["params"]["cmds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                c.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| c["cmd"].as_str().unwrap().to_owned())
            })
            .collect();
        assert_eq!(cmds[0], "enable", "every request starts with enable");
        let format = request["params"]["format"].as_str().unwrap().to_owned();
        let mut d = self.0.lock().unwrap();
        match d.run(&cmds[1..], &format) {
            Ok(mut results) => {
                results.insert(0, json!({}));
                Ok(json!({"jsonrpc": "2.0", "id": request["id"], "result": results}))
            }
            Err((usize::MAX, _)) => Err(HttpError::Status {
                device: "sw1".into(),
                op: "POST /command-api".into(),
                status: 500,
                body_excerpt: "Processing Failed".into(),
            }),
            Err((i, msg)) => {
                let mut data: Vec<Value> = (0..=i).map(|_| json!({})).collect();
                data.push(json!({"errors": [msg]}));
                Ok(json!({"jsonrpc": "2.0", "id": request["id"], "error": {
                    "code": 1002,
                    "message": format!("CLI command {} of {} '{}' failed: invalid command", i + 2, cmds.len(), cmds[i + 1]),
                    "data": data}}))
            }
        }
    }
}

fn version(v: &str) -> Value {
    let mut recorded: Value = serde_json::from_str(NAPALM_SHOW_VERSION).unwrap();
    recorded["version"] = json!(v);
    recorded
}

async fn driver(version: Option<Value>) -> (EosDriver, Arc<Mutex<Device>>) {
    let dev = Arc::new(Mutex::new(Device {
        version,
        running: BTreeMap::from([
            (1, "default".to_owned()),
            (20, "db".to_owned()),
            (30, "tmp".to_owned()),
        ]),
        ..Default::default()
    }));
    let eapi = Eapi::new("sw1", Box::new(Fake(dev.clone())), None);
    let d = EosDriver::with_eapi(eapi, None, true)
        .await
        .expect("connect");
    dev.lock().unwrap().log.clear();
    (d, dev)
}

fn vlans(v: Value) -> Vec<Vlan> {
    serde_json::from_value(v).unwrap()
}

/// Create 10 "web", rename 20 to "database", purge 30.
async fn sample_plan(d: &mut EosDriver) -> Plan {
    let obs = d.observe().await.unwrap();
    let desired = vlans(json!([{"id": 10, "name": "web"}, {"id": 20, "name": "database"}]));
    let no_links: Vec<Link> = vec![];
    plan(
        &desired,
        &obs.vlans,
        Policy::Purge,
        &no_links,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    )
}

fn running(dev: &Arc<Mutex<Device>>) -> Vec<(u16, String)> {
    dev.lock()
        .unwrap()
        .running
        .iter()
        .map(|(k, v)| (*k, v.clone()))
        .collect()
}

fn original() -> Vec<(u16, String)> {
    vec![(1, "default".into()), (20, "db".into()), (30, "tmp".into())]
}

/// The VLANs after the change the session tests stage.
fn changed() -> Vec<(u16, String)> {
    vec![
        (1, "default".into()),
        (10, "web".into()),
        (20, "database".into()),
    ]
}

fn log(dev: &Arc<Mutex<Device>>) -> Vec<(String, Vec<String>)> {
    std::mem::take(&mut dev.lock().unwrap().log)
}

#[test]
fn capabilities_follow_the_version() {
    let c = capabilities_for(Some("4.23.0F"), None);
    assert!(c.sessions && c.confirmed_commit && c.device_diff && c.candidate);
    let c = capabilities_for(Some("4.15.5M"), None);
    assert!(c.sessions && !c.confirmed_commit);
    // Configuration sessions arrived in 4.15.0F: 4.14 applies plainly.
    let c = capabilities_for(Some("4.14.5F"), None);
    assert!(!c.sessions && !c.candidate && !c.confirmed_commit);
    assert!(capabilities_for(Some("4.15.0F"), None).sessions);
    assert_eq!(capabilities_for(None, None), Capabilities::default());
    assert_eq!(capabilities_for(Some(""), None), Capabilities::default());
    assert!(!capabilities_for(Some("4.23.0F"), Some(false)).sessions);
}

#[tokio::test]
async fn session_with_commit_timer_stage_commit_confirm() {
    let (mut d, dev) = driver(Some(version("4.23.0F"))).await;
    assert!(d.capabilities().sessions && d.capabilities().confirmed_commit);
    let p = sample_plan(&mut d).await;
    log(&dev);

    let ahead = d.rendered_ahead(&p);
    let staged = d.stage(&p).await.unwrap();
    // What the engine wrote to the journal during the stage is what the stage sent.
    assert_eq!(ahead.as_ref(), Some(&staged.rendered));
    let sent = log(&dev);
    assert_eq!(
        sent.len(),
        1,
        "no pre-state read when the device rolls back by itself: {sent:?}"
    );
    let (format, cmds) = &sent[0];
    assert_eq!(format, "text");
    let session = cmds[0]
        .strip_prefix("configure session ")
        .expect("enters a session")
        .to_owned();
    assert!(session.starts_with("netgw-"), "{session}");
    assert_eq!(
        &cmds[1..],
        [
            "vlan 10",
            "name web",
            "exit",
            "vlan 20",
            "name database",
            "exit",
            "no vlan 30",
            "show session-config diffs",
            "end"
        ]
    );
    assert!(
        staged.diff.contains("+vlan 10") && staged.diff.contains("-vlan 30"),
        "device diff: {}",
        staged.diff
    );
    assert_eq!(
        staged.rendered,
        [
            "vlan 10",
            "name web",
            "exit",
            "vlan 20",
            "name database",
            "exit",
            "no vlan 30"
        ]
    );
    assert_eq!(running(&dev), original(), "staging changes nothing");

    d.commit(&CommitOptions {
        comment: "netgw run 1".into(),
        confirm_timeout: Duration::from_secs(90),
    })
    .await
    .unwrap();
    // The verifying reads in the same request, answered to the next observe.
    assert_eq!(
        log(&dev),
        [(
            "json".to_owned(),
            vec![
                format!("configure session {session} commit timer 00:01:30"),
                "show vlan".to_owned(),
                "show interfaces".to_owned(),
                "show interfaces switchport".to_owned()
            ]
        )]
    );
    assert_eq!(running(&dev), changed());
    let verified = d.observe().await.unwrap();
    assert!(log(&dev).is_empty(), "the verification asks nothing more");
    assert!(
        verified.vlans.iter().any(|v| v.id.get() == 10),
        "{verified:?}"
    );

    d.confirm().await.unwrap();
    // With the housekeeping read of pending sessions (nothing abandoned here, nothing aborted).
    assert_eq!(
        log(&dev),
        [(
            "json".to_owned(),
            vec![
                format!("configure session {session} commit"),
                "write memory".to_owned(),
                "show configuration sessions".to_owned()
            ]
        )]
    );
    assert!(dev.lock().unwrap().timer_backup.is_none(), "timer ended");
    assert_eq!(dev.lock().unwrap().writes, 1);
}

#[tokio::test]
async fn session_timed_commit_rolls_back_with_abort() {
    let (mut d, dev) = driver(Some(version("4.23.0F"))).await;
    let p = sample_plan(&mut d).await;
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    assert_ne!(running(&dev), original());
    log(&dev);
    d.rollback().await.unwrap();
    let sent = log(&dev);
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].1[0].starts_with("configure session netgw-") && sent[0].1[0].ends_with(" abort"),
        "{sent:?}"
    );
    assert_eq!(running(&dev), original());
    // Nothing left to do.
    d.rollback().await.unwrap();
    d.confirm().await.unwrap();
    assert!(log(&dev).is_empty());
}

#[tokio::test]
async fn session_discard_aborts_and_why_run_changes_nothing() {
    let (mut d, dev) = driver(Some(version("4.23.0F"))).await;
    let p = sample_plan(&mut d).await;
    let staged = d.stage(&p).await.unwrap();
    assert!(!staged.diff.is_empty());
    log(&dev);
    d.discard().await.unwrap();
    let sent = log(&dev);
    assert_eq!(sent.len(), 1);
    assert!(sent[0].1[0].ends_with(" abort"));
    assert!(dev.lock().unwrap().sessions.is_empty(), "session removed");
    assert_eq!(running(&dev), original());
}

#[tokio::test]
async fn session_stage_rejected_is_aborted_and_reported() {
    let (mut d, dev) = driver(Some(version("4.23.0F"))).await;
    dev.lock().unwrap().reject.push("name database".into());
    let p = sample_plan(&mut d).await;
    log(&dev);
    let err = d.stage(&p).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected);
    assert!(
        err.to_string().contains("name database") && err.to_string().contains("Invalid input"),
        "{err}"
    );
    let sent = log(&dev);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(
        sent[1].1[0].ends_with(" abort"),
        "the half-filled session is aborted: {sent:?}"
    );
    assert!(dev.lock().unwrap().sessions.is_empty());
    assert_eq!(running(&dev), original());
    // The driver is idle again: a new stage is allowed.
    dev.lock().unwrap().reject.clear();
    d.stage(&p).await.unwrap();
}

#[tokio::test]
async fn session_without_timer_rolls_back_from_pre_state() {
    // The recorded napalm `show version` (4.15.5M): sessions, but no commit timer.
    let (mut d, dev) = driver(Some(serde_json::from_str(NAPALM_SHOW_VERSION).unwrap())).await;
    assert!(d.capabilities().sessions && !d.capabilities().confirmed_commit);
    let p = sample_plan(&mut d).await;
    log(&dev);
    d.stage(&p).await.unwrap();
    let sent = log(&dev);
    assert_eq!(
        sent.len(),
        2,
        "pre-state read (vlan, interfaces and switchport in one request), then the session: {sent:?}"
    );
    assert_eq!(
        sent[0].1,
        ["show vlan", "show interfaces", "show interfaces switchport"]
    );
    d.commit(&CommitOptions::default()).await.unwrap();
    let sent = log(&dev);
    assert!(
        sent[0].1[0].ends_with(" commit"),
        "plain session commit: {sent:?}"
    );
    d.rollback().await.unwrap();
    let sent = log(&dev);
    let applied: Vec<&Vec<String>> = sent
        .iter()
        .map(|(_, c)| c)
        .filter(|c| c[0] == "configure")
        .collect();
    assert_eq!(applied.len(), 1, "{sent:?}");
    assert_eq!(
        applied[0][1..],
        [
            "vlan 20",
            "name db",
            "exit",
            "vlan 30",
            "name tmp",
            "exit",
            "no vlan 10",
            "end"
        ]
    );
    assert_eq!(running(&dev), original());
}

#[tokio::test]
async fn no_sessions_without_version_commit_applies_plainly() {
    // fake-switches: `show version` answers HTTP 500 -> unknown version -> no sessions.
    let (mut d, dev) = driver(None).await;
    assert_eq!(d.capabilities(), Capabilities::default());
    let facts = d.facts().await.unwrap();
    assert_eq!(
        (facts.platform_version, facts.vendor.as_deref()),
        (None, Some("arista"))
    );
    let p = sample_plan(&mut d).await;
    log(&dev);
    let ahead = d.rendered_ahead(&p);
    let staged = d.stage(&p).await.unwrap();
    assert_eq!(ahead.as_ref(), Some(&staged.rendered));
    assert_eq!(staged.diff, staged.rendered.join("\n"));
    assert!(
        log(&dev)
            .iter()
            .all(|(_, c)| c.iter().all(|c| c.starts_with("show "))),
        "stage only reads"
    );
    assert_eq!(running(&dev), original());
    d.commit(&CommitOptions::default()).await.unwrap();
    let sent = log(&dev);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].1.first().map(String::as_str), Some("configure"));
    assert_eq!(sent[0].1.last().map(String::as_str), Some("end"));
    assert_eq!(running(&dev), changed());
    d.confirm().await.unwrap();
    assert_eq!(
        log(&dev),
        [("json".to_owned(), vec!["write memory".to_owned()])]
    );
}

#[tokio::test]
async fn no_sessions_rejected_commit_restores_pre_state() {
    let (mut d, dev) = driver(None).await;
    dev.lock().unwrap().reject.push("no vlan 30".into());
    let p = sample_plan(&mut d).await;
    d.stage(&p).await.unwrap();
    log(&dev);
    let err = d.commit(&CommitOptions::default()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected);
    let text = err.to_string();
    assert!(
        text.contains("no vlan 30") && text.contains("restored"),
        "{text}"
    );
    assert_eq!(
        running(&dev),
        original(),
        "VLAN 10 and the rename were undone"
    );
    let sent = log(&dev);
    let fix: Vec<&Vec<String>> = sent
        .iter()
        .skip(1)
        .map(|(_, c)| c)
        .filter(|c| c[0] == "configure")
        .collect();
    assert_eq!(fix.len(), 1);
    assert_eq!(
        fix[0][1..],
        ["vlan 20", "name db", "exit", "no vlan 10", "end"],
        "only what had changed"
    );
    // Idle again; rollback and discard are no-ops that send nothing.
    d.rollback().await.unwrap();
    d.discard().await.unwrap();
    assert!(log(&dev).is_empty());
}

#[tokio::test]
async fn no_sessions_rollback_after_commit() {
    let (mut d, dev) = driver(None).await;
    let p = sample_plan(&mut d).await;
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    d.rollback().await.unwrap();
    assert_eq!(running(&dev), original());
}

#[tokio::test]
async fn empty_plan_sends_nothing() {
    for v in [None, Some(version("4.23.0F"))] {
        let (mut d, dev) = driver(v).await;
        let obs = d.observe().await.unwrap();
        let desired: Vec<Link> = obs.links.iter().map(link::as_desired).collect();
        let p = plan(
            &obs.vlans,
            &obs.vlans,
            Policy::Merge,
            &desired,
            &obs.links,
            Policy::Replace,
            &d.plan_rules(),
        );
        assert!(
            p.is_empty(),
            "an observed state is a valid desired state: {:?}",
            p.resources
        );
        log(&dev);
        let before = d.eapi().requests_sent();
        let staged = d.stage(&p).await.unwrap();
        assert_eq!(staged, Staged::default());
        d.commit(&CommitOptions::default()).await.unwrap();
        d.confirm().await.unwrap();
        d.close().await.unwrap();
        assert_eq!(d.eapi().requests_sent(), before);
        assert!(log(&dev).is_empty());
    }
}

#[tokio::test]
async fn double_stage_and_early_confirm_are_refused() {
    let (mut d, _dev) = driver(None).await;
    let p = sample_plan(&mut d).await;
    d.stage(&p).await.unwrap();
    assert_eq!(d.stage(&p).await.unwrap_err().kind(), ErrorKind::Config);
    assert_eq!(d.confirm().await.unwrap_err().kind(), ErrorKind::Config);
}

#[test]
fn validate_reports_eos_limits() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (d, _) = rt.block_on(driver(None));
    let v = vlans(json!([{"id": 10, "name": "a".repeat(33)}, {"id": 11, "name": "ok"}]));
    let l: Vec<Link> = serde_json::from_value(
        json!([{"name": "Ethernet1", "mtu": 9600}, {"name": "Ethernet2", "mtu": 9000}]),
    )
    .unwrap();
    let errs = d.validate(&v, &l);
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert_eq!(errs[0].0.to_string(), "vlan[10]");
    assert_eq!(errs[1].0.to_string(), "link[Ethernet1]");
}

#[test]
fn settings_from_target() {
    use crate::target::ConnectionOptions;
    use netgw_models::secret::Secret;
    let mut t = DeviceTarget::new("sw1", Platform::Eos, "10.0.0.1");
    t.username = "admin".into();
    t.password = Some(Secret::new("pw"));
    let s = EapiSettings::from_target(&t).unwrap();
    assert_eq!(s.base_url, "https://10.0.0.1:443");
    assert_eq!(s.http.tls, TlsMode::Verify);
    assert!(matches!(&s.http.auth, HttpAuth::Basic { username, .. } if username == "admin"));
    assert!(s.write_memory && s.sessions_override.is_none());

    let mut extras = serde_json::Map::new();
    extras.insert("transport".into(), json!("http"));
    t.connection_options.insert(
        "eapi".into(),
        Box::new(ConnectionOptions {
            hostname: Some("127.0.0.1".into()),
            port: Some(8080),
            extras,
            ..Default::default()
        }),
    );
    t.tls.verify = false;
    let s = EapiSettings::from_target(&t).unwrap();
    assert_eq!(s.base_url, "http://127.0.0.1:8080");
    assert_eq!(s.http.tls, TlsMode::Insecure);

    // NAPALM-style optional_args, default http port, IPv6 literal.
    let mut t = DeviceTarget::new("sw2", Platform::Eos, "::1");
    let mut extras = serde_json::Map::new();
    extras.insert("optional_args".into(), json!({"transport": "http"}));
    t.connection_options.insert(
        "eapi".into(),
        Box::new(ConnectionOptions {
            extras,
            ..Default::default()
        }),
    );
    t.tls.ca_file = Some("/etc/ca.pem".into());
    // On the box (or a tunnel to it) eAPI may take requests without credentials; off it, no
    // username is an error before any connection.
    let s = EapiSettings::from_target(&t).unwrap();
    assert_eq!(s.base_url, "http://[::1]:80");
    assert_eq!(s.http.auth, HttpAuth::None);
    let mut off_box = t.clone();
    off_box.host = "192.0.2.7".into();
    let e = EapiSettings::from_target(&off_box).unwrap_err().to_string();
    assert!(e.contains("eAPI needs a username"), "{e}");
    off_box.username = "admin".into();
    let s = EapiSettings::from_target(&off_box).unwrap();
    assert!(matches!(&s.http.auth, HttpAuth::Basic { username, .. } if username == "admin"));
    t.options
        .insert("eapi_transport".into(), serde_json::Value::Null);
    assert!(
        EapiSettings::from_target(&t).is_ok(),
        "an empty value is unset"
    );

    let mut t = DeviceTarget::new("sw3", Platform::Eos, "h");
    t.username = "admin".into();
    t.options.insert("eapi_transport".into(), json!("telnet"));
    assert_eq!(
        EapiSettings::from_target(&t).unwrap_err().kind(),
        ErrorKind::Config
    );
    let mut t = DeviceTarget::new("sw3", Platform::Eos, "h");
    t.username = "admin".into();
    t.options.insert("eos_sessions".into(), json!("yes"));
    assert!(EapiSettings::from_target(&t).is_err());
    t.options.insert("eos_sessions".into(), json!(false));
    t.options.insert("eos_write_memory".into(), json!(false));
    let s = EapiSettings::from_target(&t).unwrap();
    assert_eq!((s.sessions_override, s.write_memory), (Some(false), false));
    assert!(!format!("{s:?}").contains("\"pw\""));
}

#[test]
fn lines_with_separators_never_pass() {
    for bad in ["vlan 10\nno vlan 1", "name a;b", "", "   ", "x\u{7}"] {
        assert!(check_lines(&[bad.to_owned()]).is_err(), "{bad:?}");
    }
    assert!(check_lines(&["switchport trunk allowed vlan 1-10,20".to_owned()]).is_ok());
}

#[tokio::test]
async fn facts_reads_go_in_one_request_and_alone_when_one_is_refused() {
    let (mut d, dev) = driver(Some(serde_json::from_str(NAPALM_SHOW_VERSION).unwrap())).await;
    log(&dev);
    // This fake device has no `show hostname` nor LLDP: the batch is refused at its first command.
    let facts = d.facts().await.unwrap();
    assert_eq!(facts.vendor.as_deref(), Some("arista"));
    let sent = log(&dev);
    assert_eq!(
        sent[0].1.len(),
        5,
        "one request for the five reads first: {sent:?}"
    );
    assert!(
        sent[1..].iter().all(|(_, c)| c.len() == 1),
        "then each read alone: {sent:?}"
    );
    assert!(
        sent[1..]
            .iter()
            .any(|(_, c)| c[0] == "show interfaces switchport"),
        "the switchport read is still made: {sent:?}"
    );
}
