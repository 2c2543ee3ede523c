//! The EOS driver against a third-party eAPI peer (docs/peers.md): fake-switches `arista_generic` over plain
//! HTTP on 127.0.0.1, driven through the `Driver` trait the way the converge engine will:
//! observe -> netgw_models::plan::plan -> stage -> commit -> observe -> plan is empty -> confirm.
//! Every change is read back with the peer's own `show vlan`, `show interfaces X switchport` and
//! `show running-config interfaces X`, not with the driver's parsers.
//!
//! Peer quirks that shape these tests: no `show version` (HTTP 500, so no sessions are declared), no
//! auth, only Ethernet1-2, trunk mode only (`switchport mode access` is rejected), no `switchport trunk
//! native vlan` (rejected, "Incomplete command"), and `description`/`shutdown`/`mtu` accepted but ignored.
//!
//! Needs: scripts/peers/fake-switches.sh install   (python venv under .peers/). Fails loudly without it.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common;
use netgw_drivers::driver::{CommitOptions, Driver, ErrorKind, Platform};
use netgw_drivers::eos::EosDriver;
use netgw_drivers::target::{ConnectionOptions, DeviceTarget};
use netgw_models::plan::{Plan, Policy, plan};
use netgw_models::resource::{Link, Vlan};
use netgw_models::secret::Secret;
use serde_json::{Value, json};
use tempfile::TempDir;

/// fake-switches with one `arista_generic` switch on eAPI; stopped on drop.
struct FakeArista {
    _peer: netgw_drivers::testing::FakeSwitches,
    http_port: u16,
    _dir: TempDir,
}

impl FakeArista {
    fn start() -> FakeArista {
        let (peer, dir) = common::fake_switches(
            json!([{"name": "sw-eos", "model": "arista_generic", "ssh_port": 0, "http_port": 0}]),
        );
        FakeArista {
            http_port: peer.port("sw-eos", "http_port"),
            _peer: peer,
            _dir: dir,
        }
    }

    /// The inventory's view: eAPI over plain HTTP given as a connection option (NAPALM/Nornir style).
    fn target(&self) -> DeviceTarget {
        let mut t = DeviceTarget::new("sw-eos", Platform::Eos, "127.0.0.1");
        t.username = "admin".into();
        t.password = Some(Secret::new("admin"));
        let mut extras = serde_json::Map::new();
        extras.insert("transport".into(), json!("http"));
        t.connection_options.insert(
            "eapi".into(),
            Box::new(ConnectionOptions {
                port: Some(self.http_port),
                extras,
                ..Default::default()
            }),
        );
        t
    }
}

fn vlans(v: Value) -> Vec<Vlan> {
    serde_json::from_value(v).expect("vlans")
}

fn links(v: Value) -> Vec<Link> {
    serde_json::from_value(v).expect("links")
}

// ---- reading the peer back with its own commands (raw JSON / text, not the driver's parsers)

async fn peer_vlans(d: &EosDriver) -> BTreeMap<String, String> {
    let v = d.eapi().run_one_json("show vlan").await.expect("show vlan");
    v["vlans"]
        .as_object()
        .expect("vlans object")
        .iter()
        .map(|(id, b)| (id.clone(), b["name"].as_str().unwrap_or("").to_owned()))
        .collect()
}

/// (mode, trunkAllowedVlans) from `show interfaces X switchport`.
async fn peer_switchport(d: &EosDriver, name: &str) -> (String, String) {
    let v = d
        .eapi()
        .run_one_json(&format!("show interfaces {name} switchport"))
        .await
        .expect("switchport");
    let info = &v["switchports"][name]["switchportInfo"];
    (
        info["mode"].as_str().unwrap_or("").to_owned(),
        info["trunkAllowedVlans"].as_str().unwrap_or("").to_owned(),
    )
}

async fn peer_running_config(d: &EosDriver, name: &str) -> String {
    let out = d
        .eapi()
        .run_text(&[format!("show running-config interfaces {name}")])
        .await
        .expect("running-config");
    out.into_iter().next().unwrap_or_default()
}

/// Everything the peer can tell about what netgw manages, verbatim.
async fn snapshot(d: &EosDriver) -> Value {
    let e = d.eapi();
    let json_out = e
        .run_json(&[
            "show vlan".into(),
            "show interfaces switchport".into(),
            "show interfaces".into(),
        ])
        .await
        .expect("snapshot");
    let text = e
        .run_text(&[
            "show running-config interfaces Ethernet1".into(),
            "show running-config interfaces Ethernet2".into(),
        ])
        .await
        .expect("snapshot text");
    json!({"json": json_out, "text": text})
}

/// The engine's apply sequence. Returns the plan and the staged change; panics on any failure.
async fn converge(
    d: &mut EosDriver,
    dv: &[Vlan],
    vp: Policy,
    dl: &[Link],
    lp: Policy,
) -> (Plan, Vec<String>) {
    let before = d.observe().await.expect("observe");
    let p = plan(
        dv,
        &before.vlans,
        vp,
        dl,
        &before.links,
        lp,
        &d.plan_rules(),
    );
    assert!(
        p.failures().next().is_none(),
        "plan failures: {:?}",
        p.resources
    );
    assert!(d.validate(dv, dl).is_empty());
    let staged = d.stage(&p).await.expect("stage");
    d.commit(&CommitOptions::default()).await.expect("commit");
    let after = d.observe().await.expect("re-observe");
    let again = plan(dv, &after.vlans, vp, dl, &after.links, lp, &d.plan_rules());
    assert!(
        again.is_empty(),
        "verification after commit found changes left: {:?}",
        again.resources
    );
    d.confirm().await.expect("confirm");
    (p, staged.rendered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eos_facts_and_declared_capabilities_over_eapi() {
    let peer = FakeArista::start();
    // Through the one registration point, as the engine connects.
    let mut d = netgw_drivers::registry::connect(&peer.target())
        .await
        .expect("connect");
    assert_eq!(d.platform(), Platform::Eos);
    let caps = d.capabilities();
    assert!(
        !caps.sessions && !caps.confirmed_commit && !caps.device_diff,
        "fake-switches has no `show version`: unknown version means no sessions: {caps:?}"
    );
    let f = d
        .facts()
        .await
        .expect("facts degrade gracefully without show version / show hostname");
    assert_eq!(
        (f.vendor.as_deref(), f.platform.as_deref()),
        (Some("arista"), Some("eos"))
    );
    assert_eq!(
        (
            f.platform_version.as_deref(),
            f.model.as_deref(),
            f.hostname.as_deref()
        ),
        (None, None, None)
    );
    assert_eq!(
        f.interfaces.keys().collect::<Vec<_>>(),
        ["Ethernet1", "Ethernet2"]
    );
    assert_eq!(f.interfaces["Ethernet1"].mtu, Some(9214));
    assert_eq!(
        f.vlans.get(&1).and_then(|v| v.name.as_deref()),
        Some("default")
    );
    let obs = d.observe().await.expect("observe");
    assert_eq!(obs.links.len(), 2);
    assert!(
        obs.links.iter().all(|l| l.mode.is_some()),
        "{:?}",
        obs.links
    );
    d.close().await.expect("close");

    // Same device through the data.netgw option instead of connection_options; wrong port fails typed.
    let mut t = DeviceTarget::new("sw-eos", Platform::Eos, "127.0.0.1");
    t.username = "admin".into();
    t.password = Some(Secret::new("admin"));
    t.port = Some(peer.http_port);
    t.options.insert("eapi_transport".into(), json!("http"));
    EosDriver::connect(&t)
        .await
        .expect("connect via eapi_transport option");
    let mut closed = t.clone();
    closed.port = Some(1);
    let err = EosDriver::connect(&closed)
        .await
        .expect_err("nothing listens on port 1");
    assert_eq!(err.kind(), ErrorKind::Connect, "{err}");
    // HTTPS (the default) against a plain-HTTP server fails at the TLS layer, never silently downgrades.
    // (The plain HTTP server waits for a request line that never comes: a connect-phase timeout.)
    let mut tls = DeviceTarget::new("sw-eos", Platform::Eos, "127.0.0.1");
    tls.username = "admin".into();
    tls.port = Some(peer.http_port);
    tls.timeouts.connect = Duration::from_secs(2);
    let err = EosDriver::connect(&tls)
        .await
        .expect_err("TLS to a plain HTTP port");
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Connect | ErrorKind::Timeout | ErrorKind::Transport
        ),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eos_converges_vlans_and_trunks_and_reads_them_back() {
    let peer = FakeArista::start();
    let mut d = EosDriver::connect(&peer.target()).await.expect("connect");

    // 1. Create VLANs and make Ethernet1 a trunk with an allowed list (replace sets it as a whole).
    let dv = vlans(
        json!([{"id": 10, "name": "web"}, {"id": 20, "name": "db"}, {"id": 30, "name": "tmp"}]),
    );
    let dl = links(json!([{"name": "Ethernet1", "mode": "trunk", "trunk_vlans": "10,20"}]));
    let (p, rendered) = converge(&mut d, &dv, Policy::Merge, &dl, Policy::Replace).await;
    assert_eq!(p.vlans.len(), 3);
    assert!(
        rendered.contains(&"switchport trunk allowed vlan 10,20".to_owned()),
        "{rendered:?}"
    );
    let v = peer_vlans(&d).await;
    assert_eq!(
        (v["10"].as_str(), v["20"].as_str(), v["30"].as_str()),
        ("web", "db", "tmp")
    );
    assert_eq!(
        peer_switchport(&d, "Ethernet1").await,
        ("trunk".into(), "10,20".into())
    );
    let rc = peer_running_config(&d, "Ethernet1").await;
    assert!(
        rc.contains("switchport mode trunk") && rc.contains("switchport trunk allowed vlan 10,20"),
        "{rc}"
    );
    assert_eq!(
        peer_switchport(&d, "Ethernet2").await.0,
        "access",
        "Ethernet2 untouched"
    );

    // 2. The same desired state again: empty plan, and stage/commit/confirm send nothing.
    let obs = d.observe().await.unwrap();
    let p = plan(
        &dv,
        &obs.vlans,
        Policy::Merge,
        &dl,
        &obs.links,
        Policy::Replace,
        &d.plan_rules(),
    );
    assert!(p.is_empty(), "{:?}", p.resources);
    let sent = d.eapi().requests_sent();
    let staged = d.stage(&p).await.unwrap();
    assert!(staged.rendered.is_empty() && staged.diff.is_empty());
    d.commit(&CommitOptions::default()).await.unwrap();
    d.confirm().await.unwrap();
    assert_eq!(
        d.eapi().requests_sent(),
        sent,
        "an empty plan sends nothing"
    );

    // 3. Rename one VLAN.
    let (_, rendered) = converge(
        &mut d,
        &vlans(json!([{"id": 20, "name": "database"}])),
        Policy::Merge,
        &[],
        Policy::Merge,
    )
    .await;
    assert_eq!(rendered, ["vlan 20", "name database", "exit"]);
    assert_eq!(peer_vlans(&d).await["20"], "database");

    // 4. Merge adds to the trunk list ...
    let (_, rendered) = converge(
        &mut d,
        &[],
        Policy::Merge,
        &links(json!([{"name": "Ethernet1", "trunk_vlans": "30"}])),
        Policy::Merge,
    )
    .await;
    assert_eq!(
        rendered,
        [
            "interface Ethernet1",
            "switchport trunk allowed vlan add 30",
            "exit"
        ]
    );
    assert_eq!(peer_switchport(&d, "Ethernet1").await.1, "10,20,30");
    // ... replace sets it as a whole.
    let (_, rendered) = converge(
        &mut d,
        &[],
        Policy::Merge,
        &links(json!([{"name": "Ethernet1", "mode": "trunk", "trunk_vlans": "20-30"}])),
        Policy::Replace,
    )
    .await;
    assert!(
        rendered.contains(&"switchport trunk allowed vlan 20-30".to_owned()),
        "{rendered:?}"
    );
    assert_eq!(peer_switchport(&d, "Ethernet1").await.1, "20-30");
    assert!(
        peer_running_config(&d, "Ethernet1")
            .await
            .contains("switchport trunk allowed vlan 20-30")
    );

    // 5. Ethernet2 becomes a trunk too (merge from the default "all VLANs" adds nothing to the list).
    converge(
        &mut d,
        &[],
        Policy::Merge,
        &links(json!([{"name": "Ethernet2", "mode": "trunk"}])),
        Policy::Merge,
    )
    .await;
    assert_eq!(
        peer_switchport(&d, "Ethernet2").await,
        ("trunk".into(), "ALL".into())
    );

    // 6. Purge removes the undeclared VLAN 30 and never VLAN 1.
    let keep = vlans(json!([{"id": 10, "name": "web"}, {"id": 20, "name": "database"}]));
    let (p, rendered) = converge(&mut d, &keep, Policy::Purge, &[], Policy::Merge).await;
    assert_eq!(rendered, ["no vlan 30"], "{:?}", p.resources);
    let v = peer_vlans(&d).await;
    assert_eq!(v.keys().collect::<Vec<_>>(), ["1", "10", "20"]);
    assert_eq!(v["1"], "default");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eos_rejected_or_ignored_changes_leave_the_device_as_it_was() {
    let peer = FakeArista::start();
    let mut d = EosDriver::connect(&peer.target()).await.expect("connect");
    converge(
        &mut d,
        &vlans(json!([{"id": 20, "name": "db"}, {"id": 30, "name": "tmp"}])),
        Policy::Merge,
        &links(json!([{"name": "Ethernet1", "mode": "trunk", "trunk_vlans": "20,30"}])),
        Policy::Replace,
    )
    .await;
    let before = snapshot(&d).await;

    // A plan whose later command the peer rejects (`switchport mode access`): VLAN 40 is created first
    // (eAPI outside a session is not transactional), then the driver must take it away again.
    let obs = d.observe().await.unwrap();
    let dv = vlans(json!([{"id": 40, "name": "new"}]));
    let dl = links(json!([{"name": "Ethernet1", "mode": "access", "access_vlan": 20}]));
    let p = plan(
        &dv,
        &obs.vlans,
        Policy::Merge,
        &dl,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    let staged = d
        .stage(&p)
        .await
        .expect("stage (no session: nothing sent yet)");
    assert!(
        staged.diff.contains("switchport mode access"),
        "{}",
        staged.diff
    );
    assert_eq!(
        snapshot(&d).await,
        before,
        "staging without sessions changes nothing"
    );
    let err = d
        .commit(&CommitOptions::default())
        .await
        .expect_err("the peer rejects switchport mode access");
    assert_eq!(err.kind(), ErrorKind::Rejected, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("switchport mode access") && msg.contains("Invalid input"),
        "{msg}"
    );
    assert!(msg.contains("restored"), "{msg}");
    assert_eq!(
        snapshot(&d).await,
        before,
        "device exactly as before (VLAN 40 removed again)"
    );
    assert!(!peer_vlans(&d).await.contains_key("40"));
    // Rollback after the failed commit has nothing left to do.
    d.rollback().await.expect("rollback is a no-op");
    assert_eq!(snapshot(&d).await, before);

    // The peer has no `switchport trunk native vlan`: a native-VLAN change is rejected the same way.
    let obs = d.observe().await.unwrap();
    let dv = vlans(json!([{"id": 50, "name": "fifty"}]));
    let dl = links(json!([{"name": "Ethernet1", "native_vlan": 20}]));
    let p = plan(
        &dv,
        &obs.vlans,
        Policy::Merge,
        &dl,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    assert!(p.links[0].changed("native_vlan"));
    d.stage(&p).await.unwrap();
    let err = d
        .commit(&CommitOptions::default())
        .await
        .expect_err("native vlan is not implemented by the peer");
    assert_eq!(err.kind(), ErrorKind::Rejected, "{err}");
    assert!(
        err.to_string().contains("switchport trunk native vlan 20"),
        "{err}"
    );
    assert_eq!(snapshot(&d).await, before);

    // A property the peer accepts but ignores (description): the commit "succeeds", the engine's
    // verification (re-observe + plan) still sees the change pending, and rollback leaves nothing behind.
    let obs = d.observe().await.unwrap();
    let dv = vlans(json!([{"id": 60, "name": "sixty"}]));
    let dl = links(json!([{"name": "Ethernet2", "description": "uplink"}]));
    let p = plan(
        &dv,
        &obs.vlans,
        Policy::Merge,
        &dl,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.expect("commit");
    assert!(
        peer_vlans(&d).await.contains_key("60"),
        "VLAN 60 is active before verification"
    );
    let after = d.observe().await.unwrap();
    let left = plan(
        &dv,
        &after.vlans,
        Policy::Merge,
        &dl,
        &after.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    assert!(
        !left.is_empty() && left.links[0].changed("description"),
        "{:?}",
        left.resources
    );
    d.rollback()
        .await
        .expect("rollback from the recorded pre-state");
    assert_eq!(
        snapshot(&d).await,
        before,
        "VLAN 60 gone, nothing else touched"
    );

    // Still usable afterwards.
    converge(
        &mut d,
        &vlans(json!([{"id": 70, "name": "ok"}])),
        Policy::Merge,
        &[],
        Policy::Merge,
    )
    .await;
    assert_eq!(peer_vlans(&d).await["70"], "ok");
}
