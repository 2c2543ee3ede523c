//! Aggregates and routed interfaces end to end: the real `netgw converge` binary against netgw-lab. Two
//! EOS switches joined by two links, one converged from attributes (the example repo's `distribution`
//! role: `netdev::lags`, `netdev::l3_interfaces`), the other from a Ruby recipe (`netdev_lag`, `netdev_l2_interface` on the
//! aggregate, `netdev_l3_interface`): a two-member LACP aggregate trunking VLANs 10 and 20 and an SVI
//! with IPv4 and IPv6 converge, the devices hold them, the aggregate is up, and the second run is up to
//! date. Two Junos switches (ELS and EX style) joined by two links converge an LACP aggregate and an
//! `irb` with IPv4 and IPv6 from attributes; the aggregate is up once both ends bundle. Two BIG-IPs
//! joined by two links converge an LACP trunk carrying two VLANs and self IPs (IPv4 and IPv6) on one
//! of them, in one iControl REST transaction each; the trunk is up once both ends bundle, the facts
//! report it and the addresses, and `netgw links` finds it bundled. Three EOS switches where one
//! aggregate's members go to two devices and another is bundled on one end only: `netgw links`
//! reports both. Then per vendor (EOS, IOS with an archive, NX-OS, Junos, F5), two switches where one
//! converges the example repo's `distribution` role in the vendor's names and the other a Ruby recipe:
//! facts, a second run up to date, and what a third-party client reads back (NAPALM, bigrest) equal to
//! the declaration.

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
    leaf3: {kind: juniper_vjunosswitch, labels: {netgw-lab.junos-style: ex}}
  links:
    - endpoints: ["dist1:eth1", "acc1:eth1"]
    - endpoints: ["dist1:eth2", "acc1:eth2"]
    - endpoints: ["leaf2:eth1", "leaf3:eth1"]
    - endpoints: ["leaf2:eth2", "leaf3:eth2"]
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
    for (n, lacp, host) in [("leaf2", "active", 2), ("leaf3", "passive", 3)] {
        let node = json!({"name": n,
            "run_list": ["recipe[netdev::vlans]", "recipe[netdev::lags]", "recipe[netdev::l3_interfaces]"],
            "normal": {"netdev": {
                "vlans": {"100": {"name": "servers"}},
                "lags": {"ae0": {"links": ["ge-0/0/0", "ge-0/0/1"], "lacp": lacp, "minimum_links": 1,
                    "mode": "trunk", "trunk_vlans": "100"}},
                "l3_interfaces": {"irb.100": {"ipv4": [format!("10.2.100.{host}/24")],
                    "ipv6": [format!("2001:db8:200::{host}/64")]}}}}});
        common::write(d, &format!("repo/nodes/{n}.json"), &node.to_string());
    }
}

fn junos(lab: &netgw_labs::lab::Lab, n: &str) -> std::sync::Arc<netgw_labs::sim::junos::JunosSim> {
    match &lab.node(n).unwrap().sim {
        netgw_labs::lab::Sim::Junos(j) => j.clone(),
        _ => panic!("{n} is not a Junos node"),
    }
}

fn converge(d: &Path) -> Value {
    let (_, report, err) = common::run_json(
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(d.join("repo"))
            .arg("--state-dir")
            .arg(d.join("state"))
            .args(["converge", "--format", "json", "--inventory"])
            .arg(d.join("inventory.yml")),
    );
    assert!(report["nodes"].is_array(), "{report}\n{err}");
    report
}

/// `netgw links` over the lab's topology: exit code and JSON report.
pub(crate) fn links(d: &Path, topology: &str) -> (i32, Value) {
    let file = d.join("topo.clab.yml");
    std::fs::write(&file, topology).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--state-dir")
        .arg(d.join("state"))
        .args(["links", "--format", "json", "--timeout", "60", "--topology"])
        .arg(&file)
        .arg("--inventory")
        .arg(d.join("inventory.yml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), report)
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
    for (n, member_options, irb) in [
        ("leaf2", "gigether-options", "irb"),
        ("leaf3", "ether-options", "vlan"),
    ] {
        let r = node(&first, n);
        assert_eq!(r["status"], "success", "{r}");
        let x = junos(&lab, n).running_xml();
        for want in [
            "<device-count>1</device-count>".to_owned(),
            format!("<{member_options}><ieee-802.3ad><bundle>ae0</bundle>"),
            format!("<l3-interface>{irb}.100</l3-interface>"),
            format!("<name>{irb}</name><unit><name>100</name>"),
            "<primary".to_owned(),
        ] {
            assert!(x.contains(&want), "{n}: {want} in {x}");
        }
    }
    assert!(
        junos(&lab, "leaf2").aggregate_up("ae0"),
        "active with passive bundles"
    );
    assert!(junos(&lab, "leaf3").aggregate_up("ae0"));

    let second = converge(d);
    for n in ["dist1", "acc1", "leaf2", "leaf3"] {
        let r = node(&second, n);
        assert_eq!(r["status"], "success", "{r}");
        assert_eq!(r["updated"], 0, "{n}: the second run is up to date: {r}");
    }
}

const F5_TOPO: &str = r#"
name: lagf5
topology:
  nodes:
    bigip1: {kind: f5_bigip-ve}
    bigip2: {kind: f5_bigip-ve}
  links:
    - endpoints: ["bigip1:eth1", "bigip2:eth1"]
    - endpoints: ["bigip1:eth2", "bigip2:eth2"]
"#;

fn f5_repo(d: &Path) {
    for (n, lacp, host) in [("bigip1", "active", 1), ("bigip2", "passive", 2)] {
        let node = json!({"name": n,
            "run_list": ["recipe[netdev::vlans]", "recipe[netdev::lags]", "recipe[netdev::l3_interfaces]"],
            "normal": {"netdev": {
                "vlans": {"100": {"name": "servers"}, "110": {"name": "storage"}},
                "lags": {"lag1": {"links": ["1.1", "1.2"], "lacp": lacp, "description": "to the other BIG-IP",
                    "mode": "trunk", "trunk_vlans": "100,110"}},
                "l3_interfaces": {"Vlan100": {"ipv4": [format!("10.3.100.{host}/24")],
                    "ipv6": [format!("2001:db8:300::{host}/64")]}}}}});
        common::write(d, &format!("repo/nodes/{n}.json"), &node.to_string());
    }
}

#[test]
fn an_lacp_trunk_and_self_ips_converge_between_two_big_ips() {
    let (_rt, lab, dir) = common::lab_with_inventory(F5_TOPO);
    let d = dir.path();
    f5_repo(d);
    let first = converge(d);
    for (n, host, lacp) in [("bigip1", 1, "active"), ("bigip2", 2, "passive")] {
        let r = node(&first, n);
        assert_eq!(r["status"], "success", "{r}");
        let st = lab.node(n).unwrap().device.state().clone();
        let trunk = st
            .trunks
            .get("lag1")
            .unwrap_or_else(|| panic!("{n}: no trunk"));
        assert!(trunk.lacp, "{n}: LACP enabled");
        assert_eq!(trunk.lacp_mode, lacp, "{n}");
        let members: Vec<&str> = st
            .interfaces
            .iter()
            .filter(|(_, f)| {
                f.channel_group
                    .as_ref()
                    .is_some_and(|(g, _)| *g == trunk.id)
            })
            .map(|(name, _)| name.as_str())
            .collect();
        assert_eq!(members, ["1.1", "1.2"], "{n}");
        let t = st.iface("lag1").unwrap();
        assert!(t.oper_up, "{n}: active with passive bundles");
        assert_eq!(t.trunk_allowed.to_range_string(), "100,110", "{n}");
        assert_eq!(t.description, "to the other BIG-IP", "{n}");
        for m in ["1.1", "1.2"] {
            assert!(
                st.members(100).iter().all(|x| *x != m),
                "{n}: {m} is in VLANs through its trunk only"
            );
        }
        let mut addresses: Vec<(&str, &str)> = st
            .self_ips
            .values()
            .map(|s| (s.address.as_str(), s.vlan.as_str()))
            .collect();
        addresses.sort();
        let (v4, v6) = (
            format!("10.3.100.{host}/24"),
            format!("2001:db8:300::{host}/64"),
        );
        assert_eq!(
            addresses,
            [(v4.as_str(), "servers"), (v6.as_str(), "servers")],
            "{n}"
        );
    }
    let second = converge(d);
    // The second run's facts report the trunk and the addresses as automatic attributes.
    for (n, host, lacp) in [("bigip1", 1, "active"), ("bigip2", 2, "passive")] {
        let saved = common::current_file(&d.join("state"), &d.join("repo"), n);
        let current: Value =
            serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
        let a = &current["automatic"];
        assert_eq!(
            a["lags"]["lag1"],
            json!({"members": ["1.1", "1.2"], "lacp": lacp, "oper_status": "up"}),
            "{n}: {a}"
        );
        assert_eq!(
            a["interfaces_ip"]["Vlan100"],
            json!({"ipv4": {format!("10.3.100.{host}"): {"prefix_length": 24}},
                "ipv6": {format!("2001:db8:300::{host}"): {"prefix_length": 64}}}),
            "{n}: {a}"
        );
    }
    let (code, r) = links(d, F5_TOPO);
    assert_eq!(code, 0, "both ends bundle, every link seen: {r}");
    assert_eq!(r["unbundled"], json!([]), "{r}");
    for n in ["bigip1", "bigip2"] {
        let r = node(&second, n);
        assert_eq!(r["status"], "success", "{r}");
        assert_eq!(r["updated"], 0, "{n}: the second run is up to date: {r}");
    }
}

const SPLIT_TOPO: &str = r#"
name: lagsplit
topology:
  nodes:
    sw1: {kind: arista_ceos}
    sw2: {kind: arista_ceos}
    sw3: {kind: arista_ceos}
  links:
    - endpoints: ["sw1:eth1", "sw2:eth1"]
    - endpoints: ["sw1:eth2", "sw3:eth1"]
    - endpoints: ["sw2:eth2", "sw3:eth2"]
"#;

#[test]
fn netgw_links_reports_aggregates_their_far_end_does_not_bundle() {
    let (_rt, _lab, dir) = common::lab_with_inventory(SPLIT_TOPO);
    let d = dir.path();
    let lags = [
        (
            "sw1",
            json!({"Port-Channel10": {"links": ["Ethernet1", "Ethernet2"], "lacp": "active"}}),
        ),
        (
            "sw2",
            json!({"Port-Channel20": {"links": ["Ethernet2"], "lacp": "active"}}),
        ),
        ("sw3", json!({})),
    ];
    for (n, l) in &lags {
        let node = json!({"name": n, "run_list": ["recipe[netdev::lags]"],
            "normal": {"netdev": {"lags": l}}});
        common::write(d, &format!("repo/nodes/{n}.json"), &node.to_string());
    }
    let report = converge(d);
    for (n, _) in &lags {
        assert_eq!(node(&report, n)["status"], "success", "{report}");
    }
    let (code, r) = links(d, SPLIT_TOPO);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["missing"], json!([]), "every cable is seen: {r}");
    let unbundled = r["unbundled"].as_array().unwrap();
    let by = |n: &str, lag: &str| {
        unbundled
            .iter()
            .find(|u| u["node"] == n && u["lag"] == lag)
            .unwrap_or_else(|| panic!("{n}:{lag} not reported: {r}"))["reasons"]
            .to_string()
    };
    let split = by("sw1", "Port-Channel10");
    assert!(split.contains("its members go to 2 devices"), "{split}");
    let one_side = by("sw2", "Port-Channel20");
    assert!(
        one_side.contains("Ethernet2 reaches sw3:Ethernet2, which is in no aggregate"),
        "{one_side}"
    );
    assert_eq!(unbundled.len(), 2, "{r}");
}

const F5_FAULT_TOPO: &str = r#"
name: lagf5faults
topology:
  nodes:
    refused: {kind: f5_bigip-ve, labels: {netgw-lab.reject-commit: "change freeze"}}
    # The simulator applies the transaction, then drops the session: the run must undo it.
    lost: {kind: f5_bigip-ve, labels: {netgw-lab.reset-at: after-commit}}
  links:
    - endpoints: ["refused:eth1", "lost:eth1"]
    - endpoints: ["refused:eth2", "lost:eth2"]
"#;

#[test]
fn a_refused_or_interrupted_f5_trunk_change_leaves_nothing_half_applied() {
    let (_rt, lab, dir) = common::lab_with_inventory(F5_FAULT_TOPO);
    let d = dir.path();
    for (n, host) in [("refused", 1), ("lost", 2)] {
        let node = json!({"name": n,
            "run_list": ["recipe[netdev::vlans]", "recipe[netdev::lags]", "recipe[netdev::l3_interfaces]"],
            "normal": {"netdev": {
                "vlans": {"100": {"name": "servers"}, "110": {"name": "storage"}},
                "lags": {"lag1": {"links": ["1.1", "1.2"], "mode": "trunk", "trunk_vlans": "100,110"}},
                "l3_interfaces": {"Vlan100": {"ipv4": [format!("10.4.100.{host}/24")],
                    "ipv6": [format!("2001:db8:400::{host}/64")]}}}}});
        common::write(d, &format!("repo/nodes/{n}.json"), &node.to_string());
    }
    let before: Vec<_> = ["refused", "lost"]
        .iter()
        .map(|n| lab.node(n).unwrap().device.state().clone())
        .collect();
    let report = converge(d);
    for (i, n) in ["refused", "lost"].into_iter().enumerate() {
        let r = node(&report, n);
        assert_eq!(r["status"], "failed", "{n}: {r}");
        let st = lab.node(n).unwrap().device.state().clone();
        assert!(st.trunks.is_empty(), "{n}: no trunk left: {:?}", st.trunks);
        assert!(
            st.self_ips.is_empty(),
            "{n}: no self IP left: {:?}",
            st.self_ips
        );
        assert_eq!(st.vlans, before[i].vlans, "{n}: VLANs as before");
        assert!(
            st.interfaces.iter().all(|(_, f)| f.channel_group.is_none()),
            "{n}: no port left in a trunk"
        );
    }
}

/// One vendor's pair of switches joined by two links, for the same aggregate and SVIs on each: `a` is
/// converged from the example repo's `distribution` role with this vendor's interface names, `b` from
/// a Ruby recipe with `netdev_lag`, `netdev_l2_interface` on the aggregate and `netdev_l3_interface`.
struct Vendor {
    /// The containerlab node's kind and labels, as written after `kind: `.
    kind: &'static str,
    /// The two links' endpoint names on both nodes.
    ports: [&'static str; 2],
    lag: &'static str,
    members: [&'static str; 2],
    /// The VLAN interfaces of VLANs 100 and 110.
    svis: [&'static str; 2],
    /// What the platform lacks, left out of both declarations: BIG-IP trunks have no minimum links
    /// and its self IPs no description (both refused, docs/usage.md).
    minimum_links: bool,
    svi_description: bool,
    /// The third-party client that reads the result back.
    peer: Peer,
}

/// A third-party client, run from its venv under `.peers` (installed by `scripts/peers/NAME.sh
/// install`, which scripts/test.sh runs).
#[derive(Clone, Copy)]
enum Peer {
    /// NAPALM with this driver: scripts/peers/napalm_read.py.
    Napalm(&'static str),
    /// bigrest over iControl REST, the certificate checked against the lab CA:
    /// scripts/peers/bigrest_read.py.
    Bigrest,
}

const EOS: Vendor = Vendor {
    kind: "arista_ceos",
    ports: ["eth1", "eth2"],
    lag: "Port-Channel10",
    members: ["Ethernet1", "Ethernet2"],
    svis: ["Vlan100", "Vlan110"],
    minimum_links: true,
    svi_description: true,
    peer: Peer::Napalm("eos"),
};

const IOS: Vendor = Vendor {
    kind: "cisco_iol, type: L2, labels: {netgw-lab.archive-path: \"flash:netgw\"}",
    ports: ["Ethernet0/1", "Ethernet0/2"],
    lag: "Port-channel10",
    members: ["Ethernet0/1", "Ethernet0/2"],
    svis: ["Vlan100", "Vlan110"],
    minimum_links: true,
    svi_description: true,
    peer: Peer::Napalm("ios"),
};

const NXOS: Vendor = Vendor {
    kind: "cisco_n9kv",
    ports: ["eth1", "eth2"],
    lag: "port-channel10",
    members: ["Ethernet1/1", "Ethernet1/2"],
    svis: ["Vlan100", "Vlan110"],
    minimum_links: true,
    svi_description: true,
    peer: Peer::Napalm("nxos_ssh"),
};

const JUNOS: Vendor = Vendor {
    kind: "juniper_vjunosswitch",
    ports: ["eth1", "eth2"],
    lag: "ae0",
    members: ["ge-0/0/0", "ge-0/0/1"],
    svis: ["irb.100", "irb.110"],
    minimum_links: true,
    svi_description: true,
    peer: Peer::Napalm("junos"),
};

const F5: Vendor = Vendor {
    kind: "f5_bigip-ve",
    ports: ["eth1", "eth2"],
    lag: "lag1",
    members: ["1.1", "1.2"],
    svis: ["Vlan100", "Vlan110"],
    minimum_links: false,
    svi_description: false,
    peer: Peer::Bigrest,
};

impl Vendor {
    fn topology(&self) -> String {
        let [p, q] = self.ports;
        format!(
            "name: lagv\ntopology:\n  nodes:\n    dist1: {{kind: {k}}}\n    acc1: {{kind: {k}}}\n  links:\n    \
             - endpoints: [\"dist1:{p}\", \"acc1:{p}\"]\n    - endpoints: [\"dist1:{q}\", \"acc1:{q}\"]\n",
            k = self.kind
        )
    }

    /// The example repo's name for this vendor's name.
    fn rename(&self, name: &str) -> String {
        let pairs = [
            ("Port-Channel10", self.lag),
            ("Ethernet1", self.members[0]),
            ("Ethernet2", self.members[1]),
            ("Vlan100", self.svis[0]),
            ("Vlan110", self.svis[1]),
        ];
        let found = pairs.iter().find(|(from, _)| *from == name);
        found.map_or(name, |(_, to)| to).to_owned()
    }

    /// The `distribution` role's attributes with this vendor's names, less what it lacks.
    fn role(&self) -> Value {
        let path = common::root().join("examples/repo/roles/distribution.json");
        let role: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut netdev = role["default_attributes"]["netdev"].clone();
        for key in ["lags", "l3_interfaces"] {
            let renamed = netdev[key].as_object().unwrap().iter().map(|(name, v)| {
                let mut v = v.clone();
                if let Some(links) = v.get_mut("links").and_then(Value::as_array_mut) {
                    for l in links {
                        *l = json!(self.rename(l.as_str().unwrap()));
                    }
                }
                let obj = v.as_object_mut().unwrap();
                if !self.minimum_links {
                    obj.remove("minimum_links");
                }
                if key == "l3_interfaces" && !self.svi_description {
                    obj.remove("description");
                }
                (self.rename(name), v)
            });
            netdev[key] = Value::Object(renamed.collect());
        }
        netdev
    }

    /// The same aggregate (LACP passive, the far end's partner) and VLAN 100's SVI in Ruby.
    fn recipe(&self) -> String {
        let minimum = if self.minimum_links {
            "  minimum_links 1\n"
        } else {
            ""
        };
        format!(
            "netdev_vlan 'servers' do\n  vlan_id 100\nend\n\nnetdev_vlan 'storage' do\n  vlan_id 110\nend\n\n\
             netdev_lag '{lag}' do\n  links ['{m0}', '{m1}']\n  lacp 'passive'\n{minimum}end\n\n\
             netdev_l2_interface '{lag}' do\n  description 'to dist1'\n  vlan_tagging true\n  \
             tagged_vlans ['servers', 'storage']\nend\n\n\
             netdev_l3_interface '{svi}' do\n  ipv4 '10.1.100.2/24'\n  ipv6 ['2001:db8:100::2/64']\nend\n",
            lag = self.lag,
            m0 = self.members[0],
            m1 = self.members[1],
            svi = self.svis[0],
        )
    }

    fn repo(&self, d: &Path) {
        let dist1 = json!({"name": "dist1",
            "run_list": ["recipe[netdev::vlans]", "recipe[netdev::lags]", "recipe[netdev::l3_interfaces]"],
            "normal": {"netdev": self.role()}});
        common::write(d, "repo/nodes/dist1.json", &dist1.to_string());
        let acc1 = json!({"name": "acc1", "run_list": ["recipe[access]"]});
        common::write(d, "repo/nodes/acc1.json", &acc1.to_string());
        common::write(
            d,
            "repo/cookbooks/access/metadata.rb",
            "name 'access'\nversion '1.0.0'\n",
        );
        common::write(
            d,
            "repo/cookbooks/access/recipes/default.rb",
            &self.recipe(),
        );
    }

    /// What each node declared: (node, LACP mode, SVI addresses by interface).
    fn declared(&self) -> [(&'static str, &'static str, Value); 2] {
        let ip = |v4: &str, v6: Option<&str>| {
            let mut a = json!({"ipv4": {v4: {"prefix_length": 24}}});
            if let Some(v6) = v6 {
                a["ipv6"] = json!({v6: {"prefix_length": 64}});
            }
            a
        };
        let dist1 = json!({self.svis[0]: ip("10.1.100.1", Some("2001:db8:100::1")),
            self.svis[1]: ip("10.1.110.1", None)});
        let acc1 = json!({self.svis[0]: ip("10.1.100.2", Some("2001:db8:100::2"))});
        [("dist1", "active", dist1), ("acc1", "passive", acc1)]
    }
}

/// What `scripts/peers/SCRIPT ARGS` prints as JSON, run in `.peers/venv-VENV` (a missing venv fails
/// with the install command).
pub(crate) fn run_peer(venv: &str, install: &str, script: &str, args: &[String]) -> Value {
    let python = common::root().join(format!(".peers/venv-{venv}/bin/python"));
    assert!(
        python.exists(),
        "{} is missing: run scripts/peers/{install}.sh install (scripts/test.sh does)",
        python.display()
    );
    let out = Command::new(python)
        .arg(common::root().join("scripts/peers").join(script))
        .args(args)
        // requests prefers these to a session's own `verify` (the lab CA bigrest is given).
        .env_remove("REQUESTS_CA_BUNDLE")
        .env_remove("CURL_CA_BUNDLE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// NAPALM's `get_interfaces_ip` shape without link-local addresses (the interface's own, never
/// declared) or empty families.
fn declared_shape(ip: &Value) -> Value {
    let mut out = json!({});
    for family in ["ipv4", "ipv6"] {
        let Some(addresses) = ip[family].as_object() else {
            continue;
        };
        let kept: serde_json::Map<String, Value> = addresses
            .iter()
            .filter(|(a, _)| !a.to_ascii_lowercase().starts_with("fe80:"))
            .map(|(a, v)| (a.clone(), v.clone()))
            .collect();
        if !kept.is_empty() {
            out[family] = Value::Object(kept);
        }
    }
    out
}

/// What the vendor's third-party client reads of node `n`: the aggregate's (bundled) members, the
/// VLANs it carries and the addresses per interface in NAPALM's `get_interfaces_ip` shape.
fn read_back(
    v: &Vendor,
    lab: &netgw_labs::lab::Lab,
    d: &Path,
    n: &str,
    lacp: &str,
) -> (Vec<String>, Vec<u16>, Value) {
    let port = lab.node(n).unwrap().port.to_string();
    let creds = ["127.0.0.1".to_owned(), port, "admin".into(), "admin".into()];
    match v.peer {
        Peer::Napalm(driver) => {
            let mut args = vec![driver.to_owned()];
            args.extend(creds);
            let got = run_peer("napalm", "napalm", "napalm_read.py", &args);
            let members: Vec<String> = got["lag_members"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, lag)| lag.as_str().is_some_and(|l| l.eq_ignore_ascii_case(v.lag)))
                .map(|(m, _)| m.clone())
                .collect();
            let trunks = got["trunk_vlans"].as_object().unwrap();
            let (_, t) = trunks
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(v.lag))
                .unwrap_or_else(|| panic!("{n}: no trunk {} read back: {got}", v.lag));
            let set = netgw_models::resource::VlanSet::parse(t.as_str().unwrap()).unwrap();
            let vlans = set.ids().map(|id| id.get()).collect();
            (members, vlans, got["interfaces_ip"].clone())
        }
        Peer::Bigrest => {
            let mut args = creds.to_vec();
            args.push(d.join("lab-ca.pem").display().to_string());
            let got = run_peer("bigrest", "bigrest", "bigrest_read.py", &args);
            let trunk = &got["trunks"][v.lag];
            assert_eq!(trunk["lacp"], "enabled", "{n}: {got}");
            assert_eq!(trunk["lacpMode"], lacp, "{n}: {got}");
            let members = trunk["interfaces"].as_array().unwrap();
            let members = members.iter().map(|m| m.as_str().unwrap().to_owned());
            let vlans = got["vlans"].as_object().unwrap().values();
            let carried = vlans
                .filter(|x| x["tagged"].as_array().unwrap().iter().any(|t| t == v.lag))
                .map(|x| x["tag"].as_u64().unwrap() as u16);
            let mut ip = json!({});
            for s in got["selfips"].as_object().unwrap().values() {
                let vlan = s["vlan"].as_str().unwrap().rsplit('/').next().unwrap();
                let tag = &got["vlans"][vlan]["tag"];
                let (addr, len) = s["address"].as_str().unwrap().split_once('/').unwrap();
                let family = if addr.contains(':') { "ipv6" } else { "ipv4" };
                let len: u64 = len.parse().unwrap();
                ip[format!("Vlan{tag}")][family][addr] = json!({"prefix_length": len});
            }
            (members.collect(), carried.collect(), ip)
        }
    }
}

/// The vendor's third-party client finds what node `n` declared: the aggregate's members, the
/// VLANs it carries, the SVIs' addresses.
fn assert_read_back(
    v: &Vendor,
    lab: &netgw_labs::lab::Lab,
    d: &Path,
    n: &str,
    lacp: &str,
    addresses: &Value,
) {
    let (mut members, mut vlans, ip) = read_back(v, lab, d, n, lacp);
    members.sort();
    assert_eq!(members, v.members, "{n}: members read back");
    vlans.sort();
    assert_eq!(vlans, [100, 110], "{n}: VLANs on {} read back", v.lag);
    for (svi, want) in addresses.as_object().unwrap() {
        assert_eq!(
            &declared_shape(&ip[svi]),
            want,
            "{n}: {svi} read back: {ip}"
        );
    }
}

/// Both nodes converge, their facts report the aggregate (up, both members, its LACP mode) and the
/// SVIs' addresses as declared, and the second run is up to date.
fn converge_vendor(v: &Vendor) {
    let (_rt, lab, dir) = common::lab_with_inventory(&v.topology());
    let d = dir.path();
    v.repo(d);
    let first = converge(d);
    for (n, _, _) in v.declared() {
        let r = node(&first, n);
        assert_eq!(r["status"], "success", "{n}: {r}");
    }
    let second = converge(d);
    for (n, lacp, addresses) in v.declared() {
        let r = node(&second, n);
        assert_eq!(r["status"], "success", "{n}: {r}");
        assert_eq!(r["updated"], 0, "{n}: the second run is up to date: {r}");
        let saved = common::current_file(&d.join("state"), &d.join("repo"), n);
        let current: Value =
            serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
        let a = &current["automatic"];
        assert_eq!(
            a["lags"][v.lag],
            json!({"members": v.members, "lacp": lacp, "oper_status": "up"}),
            "{n}: {a}"
        );
        let sp = &a["interfaces"][v.lag]["switchport"];
        assert_eq!(sp["mode"], "trunk", "{n}: {a}");
        assert_eq!(sp["trunk_vlans"], "100,110", "{n}: {a}");
        for (svi, want) in addresses.as_object().unwrap() {
            assert_eq!(&a["interfaces_ip"][svi], want, "{n}: {svi}: {a}");
        }
        assert_read_back(v, &lab, d, n, lacp, &addresses);
    }
}

#[test]
fn eos_converges_an_aggregate_and_svis_from_attributes_and_ruby() {
    converge_vendor(&EOS);
}

#[test]
fn ios_converges_an_aggregate_and_svis_from_attributes_and_ruby() {
    converge_vendor(&IOS);
}

#[test]
fn nxos_converges_an_aggregate_and_svis_from_attributes_and_ruby() {
    converge_vendor(&NXOS);
}

#[test]
fn junos_converges_an_aggregate_and_svis_from_attributes_and_ruby() {
    converge_vendor(&JUNOS);
}

#[test]
fn f5_converges_a_trunk_and_self_ips_from_attributes_and_ruby() {
    converge_vendor(&F5);
}
