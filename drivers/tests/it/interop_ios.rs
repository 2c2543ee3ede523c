//! The IOS driver against fake-switches (docs/peers.md), models `cisco_generic` and `cisco_6500`, driving the
//! `Driver` trait directly: observe -> plan -> stage -> commit -> observe -> plan is empty -> confirm,
//! and on error rollback. Every change is read back with the peer's own `show vlan` /
//! `show running-config interface X`.
//!
//! Needs `scripts/peers/fake-switches.sh install` (a venv under .peers/); fails loudly without it.

use std::time::Duration;

use crate::common;
use netgw_drivers::driver::{CommitOptions, Driver, DriverError, Platform};
use netgw_drivers::ios::IosDriver;
use netgw_drivers::target::DeviceTarget;
use netgw_drivers::transport::Timeouts;
use netgw_models::plan::{Plan, Policy, plan};
use netgw_models::resource::{Link, Vlan};
use netgw_models::secret::Secret;
use serde_json::{Value, json};
use tempfile::TempDir;

/// fake-switches with the given (name, model) switches on SSH; stopped on drop.
struct FakeSwitches {
    peer: netgw_drivers::testing::FakeSwitches,
    dir: TempDir,
}

impl FakeSwitches {
    fn start(switches: &[(&str, &str)]) -> FakeSwitches {
        let (peer, dir) = common::fake_switches(common::ssh_switches(switches));
        FakeSwitches { peer, dir }
    }

    fn target(&self, name: &str) -> DeviceTarget {
        let mut t = DeviceTarget::new(name, Platform::Ios, "127.0.0.1");
        t.port = Some(self.peer.port(name, "ssh_port"));
        t.username = "admin".into();
        t.password = Some(Secret::new("admin"));
        t.enable_secret = Some(Secret::new("enable"));
        t.known_hosts = self.dir.path().join("known_hosts");
        t.accept_new_host_keys = true;
        t.timeouts = Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            operation: Duration::from_secs(10),
        };
        t
    }
}

fn vlans(v: Value) -> Vec<Vlan> {
    serde_json::from_value(v).unwrap()
}
fn links(v: Value) -> Vec<Link> {
    serde_json::from_value(v).unwrap()
}

/// observe -> plan -> stage -> commit -> observe -> verify -> confirm, as the engine does.
async fn converge(
    d: &mut IosDriver,
    dv: &[Vlan],
    vp: Policy,
    dl: &[Link],
    lp: Policy,
) -> Result<(Plan, Vec<String>), DriverError> {
    let rules = d.plan_rules();
    assert!(d.validate(dv, dl).is_empty(), "{:?}", d.validate(dv, dl));
    let obs = d.observe().await?;
    let p = plan(dv, &obs.vlans, vp, dl, &obs.links, lp, &rules);
    assert_eq!(p.failures().count(), 0, "{:?}", p.resources);
    let staged = d.stage(&p).await?;
    d.commit(&CommitOptions::default()).await?;
    let after = d.observe().await?;
    let again = plan(dv, &after.vlans, vp, dl, &after.links, lp, &rules);
    if !again.is_empty() {
        d.rollback().await?;
        panic!("verification failed; still pending: {:?}", again.resources);
    }
    d.confirm().await?;
    Ok((p, staged.rendered))
}

fn vlan_line(show_vlan: &str, id: u16) -> Option<&str> {
    show_vlan
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&id.to_string()))
}

async fn scenario(model: &str) {
    let name = format!("sw-{}", model.replace('_', "-"));
    let peers = FakeSwitches::start(&[(&name, model)]);
    let mut d = IosDriver::connect(&peers.target(&name))
        .await
        .expect("connect + enable");

    // Facts degrade gracefully (fake-switches answers nothing to show interfaces / lldp / cdp).
    let f = d.facts().await.expect("facts");
    assert_eq!(f.hostname.as_deref(), Some(name.as_str()));
    assert_eq!(f.platform_version.as_deref(), Some("12.2(58)SE2"));
    assert!(
        f.interfaces.contains_key("FastEthernet0/1"),
        "{:?}",
        f.interfaces.keys()
    );
    assert_eq!(
        f.vlans.get(&1).and_then(|v| v.name.as_deref()),
        Some("default")
    );

    // 1. Create VLANs, an access port and a trunk with a native VLAN.
    let dv = vlans(
        json!([{"id": 10, "name": "web"}, {"id": 20, "name": "db"}, {"id": 30, "name": "tmp"}]),
    );
    let dl = links(json!([
        {"name": "FastEthernet0/1", "mode": "access", "access_vlan": 10, "description": "server-1"},
        {"name": "FastEthernet0/2", "mode": "trunk", "trunk_vlans": "10,20", "native_vlan": 20},
        {"name": "FastEthernet0/3", "enabled": false}
    ]));
    let (p, rendered) = converge(&mut d, &dv, Policy::Merge, &dl, Policy::Merge)
        .await
        .expect("first converge");
    assert_eq!(p.vlans.len(), 3);
    assert!(
        rendered.contains(&"switchport trunk allowed vlan 10,20".to_owned()),
        "{rendered:?}"
    );
    let sv = d.show("show vlan").await.unwrap();
    assert!(vlan_line(&sv, 10).unwrap().contains("web"), "{sv}");
    assert!(vlan_line(&sv, 20).unwrap().contains("db"), "{sv}");
    assert!(vlan_line(&sv, 10).unwrap().contains("Fa0/1"), "{sv}");
    let r1 = d
        .show("show running-config interface FastEthernet0/1")
        .await
        .unwrap();
    assert!(
        r1.contains(" switchport access vlan 10") && r1.contains(" switchport mode access"),
        "{r1}"
    );
    assert!(r1.contains(" description server-1"), "{r1}");
    let r2 = d
        .show("show running-config interface FastEthernet0/2")
        .await
        .unwrap();
    assert!(
        r2.contains(" switchport trunk allowed vlan 10,20\n")
            || r2.ends_with(" switchport trunk allowed vlan 10,20"),
        "{r2}"
    );
    assert!(
        r2.contains(" switchport trunk native vlan 20") && r2.contains(" switchport mode trunk"),
        "{r2}"
    );
    let r3 = d
        .show("show running-config interface FastEthernet0/3")
        .await
        .unwrap();
    assert!(r3.contains(" shutdown"), "{r3}");

    // 2. The same desired state again: an empty plan, nothing sent.
    let obs = d.observe().await.unwrap();
    let again = plan(
        &dv,
        &obs.vlans,
        Policy::Merge,
        &dl,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    assert!(again.is_empty(), "{:?}", again.resources);
    let staged = d.stage(&again).await.unwrap();
    assert!(staged.rendered.is_empty());
    d.commit(&CommitOptions::default()).await.unwrap();

    // 3. Trunk list merge (add) vs replace (whole list).
    let merge = links(json!([{"name": "FastEthernet0/2", "mode": "trunk", "trunk_vlans": "30"}]));
    let (_, rendered) = converge(&mut d, &[], Policy::Merge, &merge, Policy::Merge)
        .await
        .expect("merge");
    assert_eq!(
        rendered,
        [
            "interface FastEthernet0/2",
            "switchport trunk allowed vlan add 30",
            "exit"
        ]
    );
    let r2 = d
        .show("show running-config interface FastEthernet0/2")
        .await
        .unwrap();
    assert!(
        r2.contains("switchport trunk allowed vlan 10,20,30"),
        "{r2}"
    );
    let replace = links(
        json!([{"name": "FastEthernet0/2", "mode": "trunk", "trunk_vlans": "20", "native_vlan": 20}]),
    );
    let (_, rendered) = converge(&mut d, &[], Policy::Merge, &replace, Policy::Replace)
        .await
        .expect("replace");
    assert!(
        rendered.contains(&"switchport trunk allowed vlan 20".to_owned()),
        "{rendered:?}"
    );
    let r2 = d
        .show("show running-config interface FastEthernet0/2")
        .await
        .unwrap();
    assert!(
        r2.contains("switchport trunk allowed vlan 20") && !r2.contains("10,20"),
        "{r2}"
    );

    // 4. Rename a VLAN, purge the undeclared one (30); reserved VLAN 1 untouched.
    let dv2 = vlans(json!([{"id": 10, "name": "web"}, {"id": 20, "name": "database"}]));
    let (p, _) = converge(&mut d, &dv2, Policy::Purge, &[], Policy::Merge)
        .await
        .expect("rename + purge");
    assert_eq!(p.vlans.len(), 2, "{:?}", p.resources);
    let sv = d.show("show vlan brief").await.unwrap();
    assert!(vlan_line(&sv, 20).unwrap().contains("database"), "{sv}");
    assert!(
        vlan_line(&sv, 30).is_none() && vlan_line(&sv, 1).is_some(),
        "{sv}"
    );

    // 5. A failure in the middle of a change: the running configuration ends exactly as before.
    let before = d.show("show running-config").await.unwrap();
    let bad_v = vlans(json!([{"id": 40, "name": "new"}, {"id": 20, "name": "renamed"}]));
    let bad_l = links(json!([
        {"name": "FastEthernet0/4", "mode": "trunk", "trunk_vlans": "40", "description": "half-done"},
        // fake-switches rejects `mtu` on an interface (`No such command`): the fourth block fails.
        {"name": "FastEthernet0/5", "mtu": 9000},
        {"name": "FastEthernet0/6", "description": "never-sent"}
    ]));
    let err = converge(&mut d, &bad_v, Policy::Merge, &bad_l, Policy::Merge)
        .await
        .expect_err("rejected");
    let msg = err.to_string();
    assert!(matches!(err, DriverError::Rejected { .. }), "{msg}");
    assert!(
        msg.contains("mtu 9000") && msg.contains("restored"),
        "{msg}"
    );
    let after = d.show("show running-config").await.unwrap();
    assert_eq!(before, after, "running-config changed by a failed run");
    // And the driver is usable again.
    let obs = d.observe().await.unwrap();
    assert!(obs.vlans.iter().all(|v| v.id.get() != 40));

    // 6. Explicit rollback after a commit (as the engine does when verification fails).
    let before = d.show("show running-config").await.unwrap();
    let rb_l = links(json!([{"name": "FastEthernet0/1", "mode": "trunk", "trunk_vlans": "10,20"}]));
    let obs = d.observe().await.unwrap();
    let p = plan(
        &vlans(json!([{"id": 50, "name": "x"}])),
        &obs.vlans,
        Policy::Merge,
        &rb_l,
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    assert_ne!(d.show("show running-config").await.unwrap(), before);
    d.rollback().await.expect("rollback");
    assert_eq!(d.show("show running-config").await.unwrap(), before);

    // 7. Stage + discard sends nothing.
    let obs = d.observe().await.unwrap();
    let p = plan(
        &vlans(json!([{"id": 60, "name": "y"}])),
        &obs.vlans,
        Policy::Merge,
        &[],
        &obs.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap();
    d.discard().await.unwrap();
    assert_eq!(d.show("show running-config").await.unwrap(), before);

    d.close().await.unwrap();
}

#[tokio::test]
async fn ios_cisco_generic_converge_verify_and_rollback() {
    scenario("cisco_generic").await;
}

#[tokio::test]
async fn ios_cisco_6500_converge_verify_and_rollback() {
    scenario("cisco_6500").await;
}

#[tokio::test]
async fn ios_save_config_on_confirm_and_wrong_enable_secret() {
    let peers = FakeSwitches::start(&[("sw-save", "cisco_generic")]);
    let mut t = peers.target("sw-save");
    t.options.insert("save_config".into(), json!(true));
    let mut d = IosDriver::connect(&t).await.expect("connect");
    let dv = vlans(json!([{"id": 77, "name": "saved"}]));
    converge(&mut d, &dv, Policy::Merge, &[], Policy::Merge)
        .await
        .expect("converge with write memory");
    d.close().await.unwrap();

    let mut bad = peers.target("sw-save");
    bad.enable_secret = Some(Secret::new("wrong-secret"));
    let e = IosDriver::connect(&bad).await.expect_err("enable refused");
    let msg = e.to_string();
    assert!(
        msg.contains("enable") && !msg.contains("wrong-secret"),
        "{msg}"
    );
}
