//! Aggregates and routed interfaces end to end: the real `netgw converge` binary against netgw-lab. Two
//! EOS switches joined by two links, one converged from attributes (the example repo's `distribution`
//! role: `netdev::lags`, `netdev::l3_interfaces`), the other from a Ruby recipe (`netdev_lag`, `netdev_l2_interface` on the
//! aggregate, `netdev_l3_interface`): a two-member LACP aggregate trunking VLANs 10 and 20 and an SVI
//! with IPv4 and IPv6 converge, the devices hold them, the aggregate is up, and the second run is up to
//! date. A Junos node declaring an aggregate fails before anything is sent, naming the platform.

use crate::common;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const TOPO: &str = r#"
name: lag
topology:
  nodes:
    dist1: {kind: arista_ceos}
    acc1: {kind: arista_ceos}
    leaf2: {kind: juniper_vjunosswitch}
  links:
    - endpoints: ["dist1:eth1", "acc1:eth1"]
    - endpoints: ["dist1:eth2", "acc1:eth2"]
"#;

const RECIPE: &str = r#"
netdev_vlan 'servers' do
  vlan_id 100
end

netdev_vlan 'storage' do
  vlan_id 110
end

netdev_lag 'Port-Channel10' do
  links ['Ethernet1', 'Ethernet2']
  lacp 'active'
  minimum_links 1
end

netdev_l2_interface 'Port-Channel10' do
  description 'to dist1'
  vlan_tagging true
  tagged_vlans ['servers', 'storage']
end

netdev_l3_interface 'Vlan100' do
  ipv4 '10.1.100.2/24'
  ipv6 ['2001:db8:100::2/64']
end
"#;

fn repo(d: &Path) {
    for role in ["base", "distribution"] {
        let body = std::fs::read_to_string(
            common::root().join(format!("examples/repo/roles/{role}.json")),
        )
        .unwrap();
        common::write(d, &format!("repo/roles/{role}.json"), &body);
    }
    let dist1 = json!({"name": "dist1", "run_list": ["role[distribution]"]});
    common::write(d, "repo/nodes/dist1.json", &dist1.to_string());
    let acc1 = json!({"name": "acc1", "run_list": ["recipe[access]"]});
    common::write(d, "repo/nodes/acc1.json", &acc1.to_string());
    common::write(
        d,
        "repo/cookbooks/access/metadata.rb",
        "name 'access'\nversion '1.0.0'\n",
    );
    common::write(d, "repo/cookbooks/access/recipes/default.rb", RECIPE);
    let leaf2 = json!({"name": "leaf2", "run_list": ["recipe[netdev::lags]"],
        "normal": {"netdev": {"lags": {"ae0": {"links": ["ge-0/0/1"]}}}}});
    common::write(d, "repo/nodes/leaf2.json", &leaf2.to_string());
}

fn converge(d: &Path) -> Value {
    let (_, report, err) = common::run_json(
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(d.join("repo"))
            .args(["converge", "--format", "json", "--inventory"])
            .arg(d.join("inventory.yml")),
    );
    assert!(report["nodes"].is_array(), "{report}\n{err}");
    report
}

fn node<'a>(report: &'a Value, name: &str) -> &'a Value {
    let nodes = report["nodes"].as_array().unwrap();
    nodes.iter().find(|n| n["name"] == name).unwrap()
}

#[test]
fn an_lacp_aggregate_and_an_svi_converge_from_attributes_and_ruby() {
    let (_rt, lab, dir) = common::lab_with_inventory(TOPO);
    let d = dir.path();
    repo(d);
    let first = converge(d);
    for (n, address) in [("dist1", "10.1.100.1/24"), ("acc1", "10.1.100.2/24")] {
        let r = node(&first, n);
        assert_eq!(r["status"], "success", "{r}");
        let kinds: Vec<String> = r["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                format!(
                    "{}[{}] {}",
                    x["type"].as_str().or(x["kind"].as_str()).unwrap_or(""),
                    x["name"].as_str().unwrap_or(""),
                    x["status"].as_str().unwrap_or("")
                )
            })
            .collect();
        assert!(
            kinds
                .iter()
                .any(|k| k.starts_with("lag[") && k.ends_with("updated")),
            "{n}: {kinds:?}"
        );
        assert!(
            kinds
                .iter()
                .any(|k| k.starts_with("l3_interface[Vlan100]") && k.ends_with("updated")),
            "{n}: {kinds:?}"
        );
        let st = lab.node(n).unwrap().device.state().clone();
        let po = st
            .iface("Port-Channel10")
            .unwrap_or_else(|| panic!("{n}: no Port-Channel10"));
        assert!(po.oper_up, "{n}: the aggregate is up");
        let members: Vec<&str> = st
            .interfaces
            .iter()
            .filter(|(_, f)| {
                f.channel_group
                    .as_ref()
                    .is_some_and(|(g, m)| *g == 10 && m == "active")
            })
            .map(|(name, _)| name.as_str())
            .collect();
        assert_eq!(members, ["Ethernet1", "Ethernet2"], "{n}");
        assert_eq!(po.trunk_allowed.to_range_string(), "100,110", "{n}");
        let svi = st.iface("Vlan100").unwrap();
        assert_eq!(svi.ipv4, [address], "{n}");
        assert_eq!(svi.ipv6.len(), 1, "{n}");
    }
    let leaf2 = node(&first, "leaf2");
    assert_eq!(leaf2["status"], "failed", "{leaf2}");
    assert!(
        leaf2
            .to_string()
            .contains("the junos driver does not apply aggregates"),
        "{leaf2}"
    );

    let second = converge(d);
    for n in ["dist1", "acc1"] {
        let r = node(&second, n);
        assert_eq!(r["status"], "success", "{r}");
        assert_eq!(r["updated"], 0, "{n}: the second run is up to date: {r}");
    }
}
