//! The Junos driver against peers written by others (docs/peers.md), over real SSH and NETCONF:
//!
//! * fake-switches `juniper_generic` (EX), `juniper_qfx_copper_generic` (ELS) and `juniper_mx_generic`
//!   (MX): the Driver trait end to end (observe -> plan -> stage -> commit -> observe -> empty plan ->
//!   confirm), every change read back by the peer's own get-config, a second plan empty, a rejected
//!   commit leaving the device unchanged with the device's error verbatim, and a rollback restoring
//!   the recorded state (fake-switches has no cancel-commit).
//! * netconfd (yuma123): the generic NETCONF transaction (`netconf_txn`) with a test-only
//!   ietf-interfaces renderer: a confirmed commit whose verification fails is not confirmed and the
//!   server reverts it by itself after the timeout; cancel-commit reverts at once.
//!
//! Each test starts its own peer in a temp dir on free 127.0.0.1 ports; a guard stops it by PID. A
//! missing peer fails the test with the install command, it is never skipped:
//!   scripts/peers/fake-switches.sh install
//!   scripts/peers/netconfd.sh install

use std::time::{Duration, Instant};

use netgw_drivers::driver::{CommitOptions, Driver, DriverError, Platform, Staged};
use netgw_drivers::netconf_txn::{Dialect, NetconfTxn};
use netgw_drivers::target::DeviceTarget;
use netgw_drivers::transport::Timeouts;
use netgw_drivers::transport::netconf::{Datastore, NetconfSsh, XmlElement, connect_ssh};
use netgw_drivers::transport::ssh::{HostKeyPolicy, SshAuth, SshTarget};
use netgw_models::plan::{Policy, plan};
use netgw_models::resource::{Link, Vlan};
use netgw_models::secret::Secret;
use serde_json::{Value, json};

use crate::common::{self, Peer, start_peer};

fn timeouts() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(15),
        idle: Duration::from_secs(60),
        operation: Duration::from_secs(20),
    }
}

// ---------------------------------------------------------------- fake-switches (Junos EX / ELS / MX)

fn start_fake(model: &str) -> (Peer, u16) {
    // The launcher takes the spec as JSON text, so parallel tests of one model share no file.
    let spec = format!(r#"[{{"name": "sw", "model": "{model}", "ssh_port": 0}}]"#);
    let peer = start_peer(
        "scripts/peers/fake-switches.sh",
        &[&spec],
        "fake-switches.env",
        "scripts/peers/fake-switches.sh install",
    );
    let ports: Value = serde_json::from_str(&peer.env["FAKE_SWITCHES_PORTS"]).expect("ports json");
    let port = ports["sw"]["ssh_port"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
        .expect("port");
    (peer, port)
}

fn fake_target(peer: &Peer, port: u16, style: &str) -> DeviceTarget {
    let mut t = DeviceTarget::new(format!("junos-{style}"), Platform::Junos, "127.0.0.1");
    t.port = Some(port);
    t.username = "admin".into();
    t.password = Some(Secret::new("admin"));
    t.known_hosts = peer.dir.path().join("known_hosts.client");
    t.accept_new_host_keys = true;
    t.timeouts = timeouts();
    t.options.insert("junos_style".into(), json!(style));
    // fake-switches' NETCONF server ends the session when a second request arrives before it
    // answered the first (RFC 6241 §4.5 allows it; Junos and netgw-lab answer in order).
    t.options.insert("netconf_pipelining".into(), json!(false));
    t
}

/// A second, independent session: the peer's own get-config, never the driver's parsers.
async fn raw_session(peer: &Peer, port: u16) -> NetconfSsh {
    let t = SshTarget {
        device: "reader".into(),
        host: "127.0.0.1".into(),
        port,
        username: "admin".into(),
        auth: SshAuth::Password(Secret::new("admin")),
        host_keys: HostKeyPolicy {
            known_hosts: peer.dir.path().join("known_hosts.client"),
            accept_new: true,
        },
        timeouts: timeouts(),
    };
    connect_ssh(&t)
        .await
        .unwrap_or_else(|e| panic!("reader session: {e}"))
}

async fn running(s: &mut NetconfSsh) -> (String, XmlElement) {
    let r = s
        .get_config(Datastore::Running, None)
        .await
        .expect("get-config running");
    let cfg = find(&r.root, "configuration")
        .cloned()
        .unwrap_or_else(|| panic!("no configuration: {}", r.raw()));
    // The data, not the whole reply: the message-id differs between reads.
    (r.data_xml().unwrap_or_default().to_string(), cfg)
}

fn find<'a>(el: &'a XmlElement, name: &str) -> Option<&'a XmlElement> {
    if el.name == name {
        return Some(el);
    }
    el.elements().find_map(|c| find(c, name))
}

fn t(el: &XmlElement, name: &str) -> Option<String> {
    el.child_text(name)
}

/// (name, vlan-id, description) of every VLAN / bridge domain.
fn vlan_entries(cfg: &XmlElement, mx: bool) -> Vec<(String, String, Option<String>)> {
    let (outer, inner) = if mx {
        ("bridge-domains", "domain")
    } else {
        ("vlans", "vlan")
    };
    cfg.child(outer)
        .map(|v| {
            v.children_named(inner)
                .map(|v| {
                    (
                        t(v, "name").unwrap_or_default(),
                        t(v, "vlan-id").unwrap_or_default(),
                        t(v, "description"),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn interface<'a>(cfg: &'a XmlElement, name: &str) -> &'a XmlElement {
    cfg.child("interfaces")
        .and_then(|i| {
            i.children_named("interface")
                .find(|i| t(i, "name").as_deref() == Some(name))
        })
        .unwrap_or_else(|| panic!("interface {name} not configured"))
}

/// The L2 family of unit 0, its mode, its VLAN list and the native VLAN, as the peer shows them.
fn l2(cfg: &XmlElement, name: &str, mx: bool) -> (Option<String>, Vec<String>, Option<String>) {
    let i = interface(cfg, name);
    let fam = i
        .path(&[
            "unit",
            "family",
            if mx { "bridge" } else { "ethernet-switching" },
        ])
        .unwrap_or_else(|| panic!("{name}: no L2 family"));
    let mode = t(fam, "interface-mode").or_else(|| t(fam, "port-mode"));
    let mut members: Vec<String> = if mx {
        fam.children_named("vlan-id-list")
            .chain(fam.children_named("vlan-id"))
            .map(|m| m.text().trim().to_string())
            .collect()
    } else {
        fam.child("vlan")
            .map(|v| {
                v.children_named("members")
                    .map(|m| m.text().trim().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    members.sort();
    let native = t(i, "native-vlan-id").or_else(|| t(fam, "native-vlan-id"));
    (mode, members, native)
}

async fn apply(
    d: &mut Box<dyn Driver>,
    vlans: Value,
    vp: Policy,
    links: Value,
    lp: Policy,
    comment: &str,
) -> Staged {
    let desired_vlans: Vec<Vlan> = serde_json::from_value(vlans).expect("vlans");
    let desired_links: Vec<Link> = serde_json::from_value(links).expect("links");
    assert_eq!(
        d.validate(&desired_vlans, &desired_links),
        vec![],
        "vendor validation"
    );
    let obs = d.observe().await.expect("observe");
    let rules = d.plan_rules();
    let p = plan(
        &desired_vlans,
        &obs.vlans,
        vp,
        &desired_links,
        &obs.links,
        lp,
        &rules,
    );
    assert!(
        p.failures().next().is_none(),
        "plan failures: {:?}",
        p.resources
    );
    assert!(!p.is_empty(), "expected changes");
    let staged = d.stage(&p).await.unwrap_or_else(|e| panic!("stage: {e}"));
    assert!(
        !staged.diff.trim().is_empty() && !staged.rendered.is_empty(),
        "{staged:?}"
    );
    d.commit(&CommitOptions {
        comment: comment.into(),
        confirm_timeout: Duration::from_secs(60),
    })
    .await
    .unwrap_or_else(|e| panic!("commit: {e}"));
    // What the engine does: re-observe and verify the plan is now empty, then confirm.
    let after = d.observe().await.expect("observe after commit");
    let verify = plan(
        &desired_vlans,
        &after.vlans,
        vp,
        &desired_links,
        &after.links,
        lp,
        &rules,
    );
    assert!(
        verify.is_empty(),
        "still pending after commit: {:?}\ndiff was:\n{}",
        verify.resources,
        staged.diff
    );
    d.confirm().await.unwrap_or_else(|e| panic!("confirm: {e}"));
    staged
}

async fn scenario(model: &str, style: &str, ifs: [&str; 3], reject: Value, reject_text: &str) {
    let mx = style == "mx";
    let (peer, port) = start_fake(model);
    let mut d = netgw_drivers::registry::connect(&fake_target(&peer, port, style))
        .await
        .unwrap_or_else(|e| panic!("connect {model}: {e}"));
    let caps = d.capabilities();
    assert!(caps.candidate && caps.confirmed_commit, "{caps:?}");
    assert!(
        !caps.rollback,
        "fake-switches has no confirmed-commit:1.1 (no cancel-commit)"
    );
    let mut reader = raw_session(&peer, port).await;

    let facts = d.facts().await.unwrap_or_else(|e| panic!("facts: {e}"));
    assert_eq!(
        (facts.vendor.as_deref(), facts.platform.as_deref()),
        (Some("juniper"), Some("junos"))
    );
    for i in ifs {
        assert!(
            facts.interfaces.contains_key(i),
            "{i} missing from facts: {:?}",
            facts.interfaces.keys()
        );
    }

    // 1. Create VLANs (one without a name), an access port, a trunk with a native VLAN, a disabled port.
    let desc = "server <1> & co";
    let staged = apply(
        &mut d,
        json!([{"id": 10, "name": "web", "description": "Web servers"}, {"id": 20, "name": "db"}, {"id": 30}]),
        Policy::Merge,
        json!([
            {"name": ifs[0], "description": desc, "mode": "access", "access_vlan": 10},
            {"name": ifs[1], "mode": "trunk", "trunk_vlans": "10,20", "native_vlan": 20, "mtu": 9000},
            {"name": ifs[2], "enabled": false}
        ]),
        Policy::Merge,
        "netgw run test-1",
    )
    .await;
    assert!(
        staged.diff.contains("computed by netgw"),
        "fake-switches gives no real diff: {}",
        staged.diff
    );
    assert!(
        staged.diff.contains("+ vlan 10 name web"),
        "{}",
        staged.diff
    );
    let (_, cfg) = running(&mut reader).await;
    let mut v = vlan_entries(&cfg, mx);
    v.sort();
    assert_eq!(
        v,
        vec![
            ("db".into(), "20".into(), None),
            ("vlan30".into(), "30".into(), None),
            ("web".into(), "10".into(), Some("Web servers".into()))
        ]
    );
    assert_eq!(
        t(interface(&cfg, ifs[0]), "description").as_deref(),
        Some(desc)
    );
    assert_eq!(
        l2(&cfg, ifs[0], mx),
        (Some("access".into()), vec!["10".into()], None)
    );
    assert_eq!(
        l2(&cfg, ifs[1], mx),
        (
            Some("trunk".into()),
            vec!["10".into(), "20".into()],
            Some("20".into())
        )
    );
    assert_eq!(t(interface(&cfg, ifs[1]), "mtu").as_deref(), Some("9000"));
    assert!(interface(&cfg, ifs[2]).child("disable").is_some());
    let facts = d.facts().await.expect("facts");
    assert_eq!(
        facts.vlans.get(&10).and_then(|v| v.name.as_deref()),
        Some("web"),
        "VLANs from the configuration"
    );

    // 2. Rename VLAN 20, add 40, purge 30; move the access port, replace the trunk list and native VLAN.
    apply(
        &mut d,
        json!([{"id": 10, "name": "web", "description": "Web servers"}, {"id": 20, "name": "database"}, {"id": 40, "name": "voice"}]),
        Policy::Purge,
        json!([
            {"name": ifs[0], "description": desc, "mode": "access", "access_vlan": 40},
            {"name": ifs[1], "mode": "trunk", "trunk_vlans": "10,40", "native_vlan": 10, "mtu": 9000},
            {"name": ifs[2], "enabled": false}
        ]),
        Policy::Replace,
        "netgw run test-2",
    )
    .await;
    let (before_reject, cfg) = running(&mut reader).await;
    let mut v = vlan_entries(&cfg, mx);
    v.sort();
    assert_eq!(
        v,
        vec![
            ("database".into(), "20".into(), None),
            ("voice".into(), "40".into(), None),
            ("web".into(), "10".into(), Some("Web servers".into()))
        ],
        "rename = delete db + create database with id 20; vlan30 purged"
    );
    assert_eq!(
        l2(&cfg, ifs[0], mx),
        (Some("access".into()), vec!["40".into()], None)
    );
    assert_eq!(
        l2(&cfg, ifs[1], mx),
        (
            Some("trunk".into()),
            vec!["10".into(), "40".into()],
            Some("10".into())
        )
    );

    // 3. The same desired state again: an empty plan, and nothing sent.
    let obs = d.observe().await.expect("observe");
    let desired_vlans: Vec<Vlan> = serde_json::from_value(json!([{"id": 10, "name": "web", "description": "Web servers"}, {"id": 20, "name": "database"}, {"id": 40, "name": "voice"}])).unwrap();
    let p = plan(
        &desired_vlans,
        &obs.vlans,
        Policy::Purge,
        &[],
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    assert!(p.is_empty(), "second plan not empty: {:?}", p.resources);
    let staged = d.stage(&p).await.expect("stage of an empty plan");
    assert!(
        staged.rendered.is_empty() && staged.diff.is_empty(),
        "{staged:?}"
    );
    d.commit(&CommitOptions::default())
        .await
        .expect("commit of nothing");
    d.confirm().await.expect("confirm of nothing");
    // Nothing was locked: another session takes the lock.
    reader
        .lock(Datastore::Candidate)
        .await
        .expect("lock free after an empty plan");
    reader.unlock(Datastore::Candidate).await.expect("unlock");
    assert_eq!(running(&mut reader).await.0, before_reject);

    // 4. A change the device refuses at commit: the device is unchanged and its error reported verbatim.
    let desired_links: Vec<Link> = serde_json::from_value(reject).unwrap();
    let obs = d.observe().await.expect("observe");
    let p = plan(
        &[],
        &obs.vlans,
        Policy::Merge,
        &desired_links,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    assert!(!p.is_empty());
    let err = match d.stage(&p).await {
        Err(e) => e,
        Ok(_) => d
            .commit(&CommitOptions {
                comment: "netgw run test-reject".into(),
                confirm_timeout: Duration::from_secs(60),
            })
            .await
            .expect_err("the device must refuse this commit"),
    };
    match &err {
        DriverError::Rejected { message, .. } => {
            assert!(message.contains(reject_text), "{message}")
        }
        other => panic!("expected Rejected, got {other:?}"),
    }
    assert_eq!(
        running(&mut reader).await.0,
        before_reject,
        "a refused commit must leave running unchanged"
    );
    reader
        .lock(Datastore::Candidate)
        .await
        .expect("the driver released the lock after the failure");
    let cand = reader
        .get_config(Datastore::Candidate, None)
        .await
        .expect("candidate");
    assert!(!cand.raw().contains("990"), "the candidate was discarded");
    reader.unlock(Datastore::Candidate).await.expect("unlock");

    // 5. Commit, then roll back (no cancel-commit here: the recorded pre-state is restored).
    let obs = d.observe().await.expect("observe");
    let dv: Vec<Vlan> =
        serde_json::from_value(json!([{"id": 50, "name": "temp"}, {"id": 20, "name": "renamed"}]))
            .unwrap();
    let dl: Vec<Link> = serde_json::from_value(json!([{"name": ifs[0], "description": "temporary", "access_vlan": 50}, {"name": ifs[2], "enabled": true, "mtu": 1600}])).unwrap();
    let p = plan(
        &dv,
        &obs.vlans,
        Policy::Merge,
        &dl,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap_or_else(|e| panic!("stage: {e}"));
    d.commit(&CommitOptions {
        comment: "netgw run test-rollback".into(),
        confirm_timeout: Duration::from_secs(60),
    })
    .await
    .unwrap_or_else(|e| panic!("commit: {e}"));
    let (changed, _) = running(&mut reader).await;
    assert!(
        changed.contains("temporary") && changed.contains("renamed"),
        "{changed}"
    );
    d.rollback()
        .await
        .unwrap_or_else(|e| panic!("rollback: {e}"));
    let (restored, cfg) = running(&mut reader).await;
    let mut v = vlan_entries(&cfg, mx);
    v.sort();
    assert_eq!(
        v.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
        ["database", "voice", "web"],
        "{restored}"
    );
    assert_eq!(
        l2(&cfg, ifs[0], mx),
        (Some("access".into()), vec!["40".into()], None)
    );
    assert_eq!(
        t(interface(&cfg, ifs[0]), "description").as_deref(),
        Some(desc)
    );
    assert!(
        interface(&cfg, ifs[2]).child("disable").is_some()
            && t(interface(&cfg, ifs[2]), "mtu").is_none(),
        "{restored}"
    );
    reader
        .lock(Datastore::Candidate)
        .await
        .expect("lock free after rollback");
    reader.unlock(Datastore::Candidate).await.expect("unlock");

    d.close().await.expect("close");
    reader.close().await.expect("close reader");
}

/// fake-switches keeps the lock of a session that died holding it (docs/peers.md). The driver locks
/// first and clears a dead session's leftovers only when refused, so a change still goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_junos_lock_left_by_a_dead_session_is_cleared() {
    let (peer, port) = start_fake("juniper_generic");
    {
        let mut dead = raw_session(&peer, port).await;
        let _ = dead.discard_changes().await;
        let _ = dead.unlock(Datastore::Candidate).await;
        dead.lock(Datastore::Candidate).await.expect("lock");
        // Dropped without unlock or close-session.
    }
    let mut d = netgw_drivers::registry::connect(&fake_target(&peer, port, "ex"))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    apply(
        &mut d,
        json!([{"id": 40, "name": "left"}]),
        Policy::Merge,
        json!([]),
        Policy::Merge,
        "after a dead session",
    )
    .await;
    let mut reader = raw_session(&peer, port).await;
    let (_, cfg) = running(&mut reader).await;
    assert!(
        vlan_entries(&cfg, false)
            .iter()
            .any(|(_, id, _)| id == "40"),
        "{:?}",
        vlan_entries(&cfg, false)
    );
    d.close().await.expect("close");
    reader.close().await.expect("close reader");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_junos_ex() {
    scenario(
        "juniper_generic",
        "ex",
        ["ge-0/0/1", "ge-0/0/2", "ge-0/0/3"],
        json!([{"name": "ge-0/0/3", "mode": "access", "access_vlan": 990}]),
        "No vlan matches vlan tag 990 for interface ge-0/0/3.0",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_junos_els_qfx() {
    scenario(
        "juniper_qfx_copper_generic",
        "els",
        ["ge-0/0/1", "ge-0/0/2", "ge-0/0/3"],
        json!([{"name": "ge-0/0/4", "mode": "trunk"}]),
        "For trunk interface, please ensure either vlan members is configured or inner-vlan-id-list is configured",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_junos_mx() {
    scenario(
        "juniper_mx_generic",
        "mx",
        ["xe-0/0/1", "xe-0/0/2", "xe-0/0/3"],
        json!([{"name": "xe-0/0/4", "mode": "trunk"}]),
        "'interface-mode trunk' must be defined with either 'vlan-id-list'",
    )
    .await;
}

// ---------------------------------------------------------------- netconfd: confirmed commit via netconf_txn

const IF_NS: &str = "urn:ietf:params:xml:ns:yang:ietf-interfaces";

/// Test-only renderer: one ietf-interfaces interface with a description (values escaped).
fn render_description(name: &str, description: &str) -> String {
    let esc = netgw_drivers::netconf_txn::escape;
    format!(
        "<interfaces xmlns=\"{IF_NS}\"><interface><name>{}</name><description>{}</description><type xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">ianaift:ethernetCsmacd</type></interface></interfaces>",
        esc(name),
        esc(description)
    )
}

async fn descriptions(s: &mut NetconfSsh) -> Vec<(String, String)> {
    let filter = Some(netgw_drivers::transport::netconf::Filter::Subtree(format!(
        "<interfaces xmlns=\"{IF_NS}\"/>"
    )));
    let r = s
        .get_config(Datastore::Running, filter)
        .await
        .expect("get-config");
    let Some(data) = r.data() else {
        panic!("no <data>: {}", r.raw())
    };
    data.child("interfaces")
        .map(|i| {
            i.children_named("interface")
                .map(|i| {
                    (
                        t(i, "name").unwrap_or_default(),
                        i.child("description").map(|d| d.text()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netconfd_unverified_confirmed_commit_is_reverted_by_the_server() {
    let peer = start_peer(
        "scripts/peers/netconfd.sh",
        &[],
        "netconfd.env",
        "scripts/peers/netconfd.sh install",
    );
    let mut s = connect_ssh(&common::netconfd_target(&peer, timeouts()))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    tokio::time::sleep(common::NETCONFD_SETTLE).await;
    assert!(NetconfTxn::has_confirmed_commit(&s));
    let mut txn = NetconfTxn::new(Dialect::Rfc6241, true);

    txn.begin(&mut s, &[])
        .await
        .unwrap_or_else(|e| panic!("begin: {e}"));
    txn.edit(&mut s, &render_description("eth-verify0", "wanted <desc>"))
        .await
        .expect("edit");
    assert_eq!(
        txn.device_diff(&mut s).await.expect("diff"),
        None,
        "RFC 6241 has no device diff"
    );
    let started = Instant::now();
    txn.commit_confirmed(&mut s, Duration::from_secs(3), "netgw run verify-fail", &[])
        .await
        .expect("commit confirmed");
    let now = descriptions(&mut s).await;
    assert_eq!(
        now,
        vec![("eth-verify0".to_string(), "wanted <desc>".to_string())],
        "applied at once"
    );

    // Verification: the engine expected another description, so it does NOT confirm.
    let expected = vec![("eth-verify0".to_string(), "something else".to_string())];
    assert_ne!(now, expected, "verification must fail for this test");

    // The server reverts by itself after the timeout (RFC 6241 §8.4.1). netconfd runs its timers when
    // its session loop is idle, so stay quiet, then read running back.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mut reverted = false;
    while started.elapsed() < Duration::from_secs(30) {
        if descriptions(&mut s).await.is_empty() {
            reverted = true;
            break;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    assert!(
        reverted,
        "running still holds the unconfirmed change 30 s after a 3 s confirmed commit"
    );
    txn.discard(&mut s)
        .await
        .expect("discard + unlock after the revert");

    // cancel-commit (confirmed-commit:1.1) reverts at once.
    txn.begin(&mut s, &[]).await.expect("begin again");
    txn.edit(&mut s, &render_description("eth-cancel0", "x"))
        .await
        .expect("edit");
    txn.commit_confirmed(&mut s, Duration::from_secs(120), "netgw run cancel", &[])
        .await
        .expect("commit confirmed");
    assert_eq!(descriptions(&mut s).await.len(), 1);
    assert!(
        txn.cancel(&mut s).await.expect("cancel-commit"),
        "netconfd has confirmed-commit:1.1"
    );
    assert!(
        descriptions(&mut s).await.is_empty(),
        "cancel-commit reverts at once"
    );

    // A confirmed change stays after its timeout.
    txn.begin(&mut s, &[]).await.expect("begin 3");
    txn.edit(&mut s, &render_description("eth-keep0", "kept"))
        .await
        .expect("edit");
    txn.commit_confirmed(&mut s, Duration::from_secs(3), "netgw run keep", &[])
        .await
        .expect("commit confirmed");
    txn.confirm(&mut s, "netgw run keep")
        .await
        .expect("confirm");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(
        descriptions(&mut s).await,
        vec![("eth-keep0".to_string(), "kept".to_string())]
    );
    s.close().await.expect("close");
}
