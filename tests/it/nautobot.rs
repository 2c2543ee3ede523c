//! Nautobot as inventory and intended state (docs/nautobot.md), against a real Nautobot (PyPI, on
//! PostgreSQL and Redis: scripts/peers/nautobot.sh) holding a small campus loaded through its REST API
//! (scripts/peers/nautobot_campus.py) whose devices are netgw-lab's five vendors. One Nautobot and one
//! lab serve every test of this module (starting Nautobot costs half a minute).

use crate::common;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

const TOPOLOGY: &str = "name: nb\ntopology:\n  nodes:\n    eos1: {kind: arista_ceos}\n    \
    ios1: {kind: cisco_iol, type: L2}\n    nx1: {kind: cisco_n9kv}\n    \
    jx1: {kind: juniper_vjunosswitch}\n    f51: {kind: f5_bigip-ve}\n";

/// (device, network_driver, role, location, tags)
const DEVICES: &[(&str, &str, &str, &str, &[&str])] = &[
    ("eos1", "arista_eos", "access", "bldg-a", &["lab", "poe"]),
    ("ios1", "cisco_ios", "access", "bldg-b", &["lab"]),
    ("nx1", "cisco_nxos", "core", "bldg-a", &[]),
    ("jx1", "juniper_junos", "core", "bldg-b", &["lab"]),
    ("f51", "bigip_f5", "edge", "bldg-a", &[]),
];

/// Devices whose intent Nautobot holds wrongly (no lab node answers for them): a LAG member with
/// VLANs of its own that differ from its LAG's, and a VLAN group naming a VID of the location
/// otherwise. (device, location)
const BROKEN: &[(&str, &str)] = &[("bad-lag", "bldg-a"), ("bad-vlan", "bldg-a")];

/// The variables the campus' secrets group names (environment-variable provider); set only in the
/// environment of the processes that read them.
const SECRET_ENV: [(&str, &str); 3] = [
    ("NETGW_NB_USER", "admin"),
    ("NETGW_NB_PASS", LAB_PASSWORD),
    ("NETGW_NB_ENABLE", LAB_PASSWORD),
];

/// The login every lab device accepts (also its enable secret), found in no output.
const LAB_PASSWORD: &str = "nb-Lab-pass-7731";

struct Nautobot {
    dir: tempfile::TempDir,
    url: String,
    token: String,
}

fn script() -> PathBuf {
    common::root().join("scripts/peers/nautobot.sh")
}

fn client_python() -> PathBuf {
    let p = common::root().join(".peers/venv-nornir-nautobot/bin/python");
    assert!(
        p.exists(),
        "PEER MISSING: nornir_nautobot is not installed ({}): run scripts/peers/nautobot.sh install",
        p.display()
    );
    p
}

impl Nautobot {
    fn start() -> Nautobot {
        let peer = common::start_peer("nautobot", "Nautobot", true);
        Nautobot {
            url: peer.get("NAUTOBOT_URL"),
            token: peer.get("NAUTOBOT_TOKEN"),
            dir: peer.dir,
        }
    }

    /// A client-side Python (pynautobot, nornir_nautobot) with the server in its environment.
    fn python(&self) -> Command {
        let mut c = Command::new(client_python());
        c.env("NAUTOBOT_URL", &self.url)
            .env("NAUTOBOT_TOKEN", &self.token);
        c
    }
}

impl Drop for Nautobot {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

struct Campus {
    nb: Nautobot,
    rt: tokio::runtime::Runtime,
    lab: netgw_labs::lab::Lab,
    dir: tempfile::TempDir,
}

/// The campus description nautobot_campus.py loads: the lab's devices with their ports and trust
/// settings (the config context), VLANs per building and a few interfaces.
fn campus_json(lab_inventory: &Value) -> Value {
    let hosts = lab_inventory.get("hosts").unwrap_or(lab_inventory);
    let devices: Vec<Value> = DEVICES
        .iter()
        .map(|(name, driver, role, location, tags)| {
            let h = &hosts[*name];
            let mut netgw = h["data"]["netgw"].as_object().cloned().unwrap_or_default();
            // The enable secret comes from the secrets group.
            netgw.remove("enable_secret");
            let mut context = json!({"netgw": netgw, "rack": format!("{location}-r1")});
            if *name == "eos1" {
                context["netgw_vlan_groups"] = json!(["servers"]);
            }
            json!({"name": name, "network_driver": driver, "address": h["hostname"],
                   "port": h["port"], "role": role, "location": location, "tags": tags,
                   "context": context, "interfaces": interfaces(name)})
        })
        .chain(BROKEN.iter().map(|(name, location)| {
            let context = if *name == "bad-vlan" {
                json!({"netgw": {}, "netgw_vlan_groups": ["phones"]})
            } else {
                json!({"netgw": {}})
            };
            json!({"name": name, "network_driver": "arista_eos", "address": "127.0.0.1",
                   "port": 9, "role": "broken", "location": location, "tags": [],
                   "context": context, "interfaces": interfaces(name)})
        }))
        .collect();
    json!({
        "context": {"ntp": ["192.0.2.1", "192.0.2.2"], "site": {"name": "campus-1"}},
        "secrets": {"username": SECRET_ENV[0].0, "password": SECRET_ENV[1].0,
                    "secret": SECRET_ENV[2].0},
        "vlans": [{"vid": 110, "name": "users", "location": "bldg-a"},
                  {"vid": 120, "name": "voice", "location": "bldg-a"},
                  {"vid": 210, "name": "users-b", "location": "bldg-b"}],
        // Groups at the campus (bldg-a's parent): eos1's config context names `servers`.
        "vlan_groups": [{"name": "servers", "location": "campus-1",
                         "vlans": [{"vid": 310, "name": "app"}, {"vid": 320, "name": "db"}]},
                        {"name": "phones", "vlans": [{"vid": 120, "name": "phones"}]}],
        "devices": devices,
    })
}

/// The interfaces Nautobot holds for a device (its intent).
fn interfaces(name: &str) -> Value {
    match name {
        "eos1" => json!([
            {"name": "Ethernet1", "mode": "access", "untagged_vlan": 110, "description": "desk 1-01",
             "enabled": true},
            {"name": "Ethernet2", "mode": "tagged", "untagged_vlan": 110, "tagged_vlans": [120],
             "description": "phone+pc", "enabled": true},
            {"name": "Ethernet4", "description": "routed uplink", "enabled": true,
             "addresses": ["10.0.40.1/24", "2001:db8:40::1/64"]},
            {"name": "Port-Channel10", "type": "lag", "lacp": "passive", "mode": "tagged",
             "tagged_vlans": [310, 320], "description": "to dist1", "enabled": true},
            {"name": "Ethernet5", "lag": "Port-Channel10", "description": "dist1 a", "enabled": true},
            // A member whose VLANs are its LAG's, as many Nautobot users record them.
            {"name": "Ethernet6", "lag": "Port-Channel10", "mode": "tagged",
             "tagged_vlans": [310, 320], "enabled": true},
        ]),
        "bad-lag" => json!([
            {"name": "Port-Channel20", "type": "lag", "mode": "tagged", "tagged_vlans": [110, 120]},
            {"name": "Ethernet7", "lag": "Port-Channel20", "mode": "access", "untagged_vlan": 110},
        ]),
        "ios1" => json!([
            {"name": "Ethernet0/1", "mode": "access", "untagged_vlan": 210, "description": "desk b-01",
             "enabled": true},
        ]),
        "jx1" => json!([
            {"name": "ge-0/0/1", "description": "core uplink", "mtu": 9000, "enabled": true},
            {"name": "ge-0/0/2", "description": "spare", "enabled": false},
        ]),
        "nx1" => json!([
            {"name": "Ethernet1/1", "description": "core spare", "enabled": true},
        ]),
        _ => json!([]),
    }
}

fn campus() -> &'static Campus {
    static CAMPUS: OnceLock<Campus> = OnceLock::new();
    CAMPUS.get_or_init(|| {
        let nb = Nautobot::start();
        let opts = netgw_labs::lab::LabOptions {
            snmp: false,
            password: LAB_PASSWORD.into(),
            ..Default::default()
        };
        let (rt, lab, dir) = common::lab_with_options(TOPOLOGY, opts);
        let inv: Value = serde_norway::from_str(
            &std::fs::read_to_string(dir.path().join("inventory.yml")).unwrap(),
        )
        .unwrap();
        let spec = dir.path().join("campus.json");
        std::fs::write(&spec, campus_json(&inv).to_string()).unwrap();
        let out = nb
            .python()
            .arg(common::root().join("scripts/peers/nautobot_campus.py"))
            .arg(&spec)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "loading the campus into Nautobot: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Campus { nb, rt, lab, dir }
    })
}

/// `netgw ARGS --format json` with the campus' secrets variables and the token in its environment.
fn netgw(c: &Campus, args: &[&str]) -> (i32, Value, String) {
    let d = c.dir.path();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_netgw"));
    cmd.arg("--repo")
        .arg(d.join("repo"))
        .arg("--state-dir")
        .arg(d.join("state"))
        .args(args)
        .args(["--format", "json"])
        .env("NAUTOBOT_TOKEN", &c.nb.token)
        .env_remove("NETGW_INVENTORY");
    for (k, v) in SECRET_ENV {
        cmd.env(k, v);
    }
    common::run_json(&mut cmd)
}

fn url_source(c: &Campus, query: &str) -> String {
    format!("nautobot+{}/?{query}", c.nb.url)
}

/// The hosts nornir_nautobot 5 loads for `filter` (its `filter_parameters`), with what they are
/// compared on: name, hostname, platform, groups, and the device's own record.
fn nornir_hosts(c: &Campus, filter: &Value) -> Value {
    const DUMP: &str = r#"
import json, sys
from nornir_nautobot.plugins.inventory.nautobot import NautobotInventory
f = json.loads(sys.argv[1])
inv = NautobotInventory(nautobot_url=None, nautobot_token=None, filter_parameters=f).load()
out = {}
for n, h in inv.hosts.items():
    out[n] = {"hostname": h.hostname, "platform": h.platform, "port": h.port,
              "groups": [g.name for g in h.groups], "device": h.data["pynautobot_dictionary"]}
print(json.dumps(out, default=str))
"#;
    let o =
        c.nb.python()
            .args(["-c", DUMP])
            .arg(filter.to_string())
            .output()
            .unwrap();
    assert!(
        o.status.success(),
        "nornir_nautobot: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The groups netgw gives a Nautobot device, from the device record nornir_nautobot holds.
fn groups_from_record(d: &Value) -> Vec<String> {
    use netgw::inventory::nautobot::group_name;
    let mut g = vec![
        group_name("location", d["location"]["name"].as_str().unwrap()),
        group_name("role", d["role"]["name"].as_str().unwrap()),
    ];
    for t in d["tags"].as_array().unwrap() {
        g.push(group_name("tag", t["name"].as_str().unwrap()));
    }
    g.push(group_name(
        "platform",
        d["platform"]["name"].as_str().unwrap(),
    ));
    g
}

fn by_name(hosts: &Value) -> std::collections::BTreeMap<String, Value> {
    hosts
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["name"].as_str().unwrap().to_owned(), h.clone()))
        .collect()
}

/// For the same server and filter, netgw's hosts are nornir_nautobot's, host by host: the same
/// names, hostname (the primary IP), platform (the network_driver); groups and data are what the
/// device's record in nornir_nautobot says (its location, role, tags, platform; its config context).
#[test]
fn hosts_equal_nornir_nautobots_for_the_same_filter() {
    let c = campus();
    for (query, filter, want) in [
        (
            "",
            json!({}),
            vec!["bad-lag", "bad-vlan", "eos1", "f51", "ios1", "jx1", "nx1"],
        ),
        (
            "location=bldg-a&role=access",
            json!({"location": ["bldg-a"], "role": ["access"]}),
            vec!["eos1"],
        ),
        (
            "tags=lab",
            json!({"tags": ["lab"]}),
            vec!["eos1", "ios1", "jx1"],
        ),
        (
            "platform=cisco_ios&platform=cisco_nxos",
            json!({"platform": ["cisco_ios", "cisco_nxos"]}),
            vec!["ios1", "nx1"],
        ),
    ] {
        let mut nfilter = filter.clone();
        nfilter["include"] = json!("config_context");
        let nornir = nornir_hosts(c, &nfilter);
        let src = url_source(c, query);
        let (code, out, text) = netgw(c, &["inventory", "--inventory", &src]);
        // Every host is listed; the unfiltered campus' broken devices make the exit status 1.
        assert_eq!(code, i32::from(query.is_empty()), "{text}");
        let ours = by_name(&out);
        let names: Vec<&str> = ours.keys().map(String::as_str).collect();
        assert_eq!(names, want, "netgw's hosts for {query:?}: {text}");
        let theirs: Vec<&String> = nornir.as_object().unwrap().keys().collect();
        assert_eq!(names, theirs, "nornir_nautobot's hosts for {filter}");
        for (name, h) in &ours {
            let n = &nornir[name];
            assert_eq!(h["hostname"], n["hostname"], "{name}.hostname");
            assert_eq!(h["platform"], n["platform"], "{name}.platform");
            if !BROKEN.iter().any(|(b, _)| b == name) {
                assert_eq!(h["error"], Value::Null, "{name}: {h}");
            }
            let record = &n["device"];
            assert_eq!(
                h["groups"],
                json!(groups_from_record(record)),
                "{name}.groups"
            );
            assert_eq!(
                h["port"], record["custom_fields"]["netgw_port"],
                "{name}.port"
            );
            // data is the config context, plus the enable secret's reference (shown redacted).
            let mut data = h["data"].clone();
            assert_eq!(data["netgw"]["enable_secret"], "<redacted>", "{name}");
            data["netgw"]
                .as_object_mut()
                .unwrap()
                .remove("enable_secret");
            assert_eq!(data, record["config_context"], "{name}.data");
        }
    }
}

/// `netgw inventory` says where each value came from in Nautobot, shows no secret, and the groups
/// Nautobot gives select hosts.
#[test]
fn inventory_shows_nautobot_provenance_and_no_secret() {
    let c = campus();
    let src = url_source(c, "");
    let (code, out, text) = netgw(c, &["inventory", "--inventory", &src, "role_core:&tag_lab"]);
    assert_eq!(code, 0, "{text}");
    let hosts = by_name(&out);
    assert_eq!(hosts.keys().collect::<Vec<_>>(), ["jx1"], "{text}");
    let jx1 = &hosts["jx1"];
    assert_eq!(jx1["driver"], "junos");
    assert_eq!(jx1["username"], "admin");
    assert_eq!(jx1["password"], "<redacted>");
    let s = &jx1["sources"];
    assert_eq!(s["hostname"], "nautobot device jx1 field primary_ip4");
    assert_eq!(s["port"], "nautobot device jx1 custom field netgw_port");
    assert_eq!(
        s["platform"],
        "nautobot device jx1 field platform (juniper_junos).network_driver"
    );
    assert_eq!(
        s["password"],
        "nautobot device jx1 secrets group lab-credentials secret lab-password"
    );
    assert_eq!(s["data.ntp"], "nautobot device jx1 field config_context");
    // The token and the device password appear nowhere in what netgw printed.
    assert!(!text.contains(&c.nb.token), "token in the output");
    assert!(!text.contains(LAB_PASSWORD), "password in the output");
    let (code, _, text) = netgw(c, &["inventory", "--inventory", &src, "location_bldg-c"]);
    assert_ne!(code, 0, "{text}");
}

/// The file form: a `nautobot:` block with the filter and the token in a file (no variable set).
#[test]
fn a_nautobot_file_names_the_server_the_filter_and_the_token_file() {
    let c = campus();
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{}\n", c.nb.token)).unwrap();
    let file = dir.path().join("campus.yml");
    std::fs::write(
        &file,
        format!(
            "nautobot:\n  url: {}\n  token_file: {}\n  filter:\n    role: [core, edge]\n    location: bldg-a\n",
            c.nb.url,
            token.display()
        ),
    )
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_netgw"));
    cmd.args(["inventory", "--format", "json", "--inventory"])
        .arg(&file)
        .env_remove("NAUTOBOT_TOKEN")
        .env_remove("NETGW_INVENTORY");
    for (k, v) in SECRET_ENV {
        cmd.env(k, v);
    }
    let (code, out, text) = common::run_json(&mut cmd);
    assert_eq!(code, 0, "{text}");
    let hosts = by_name(&out);
    assert_eq!(hosts.keys().collect::<Vec<_>>(), ["f51", "nx1"], "{text}");
    assert_eq!(hosts["f51"]["driver"], "f5", "bigip_f5 drives F5");
    assert_eq!(hosts["nx1"]["inventory"], json!(file.display().to_string()));
    assert!(!text.contains(&c.nb.token), "token in the output");
}

/// Without a token, and with a filter Nautobot does not know, the inventory fails naming why.
#[test]
fn a_missing_token_and_a_bad_filter_are_errors() {
    let c = campus();
    let src = url_source(c, "");
    let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .args(["inventory", "--inventory", &src])
        .env_remove("NAUTOBOT_TOKEN")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("nautobot token") && err.contains("NAUTOBOT_TOKEN"),
        "{err}"
    );
    let (code, _, text) = netgw(
        c,
        &["inventory", "--inventory", &url_source(c, "colour=red")],
    );
    assert_ne!(code, 0);
    assert!(text.contains("unknown filter `colour`"), "{text}");
    let (code, _, text) = netgw(
        c,
        &[
            "inventory",
            "--inventory",
            &url_source(c, "location=nowhere"),
        ],
    );
    assert_ne!(code, 0);
    assert!(
        text.contains("HTTP 400") && text.contains("nowhere"),
        "{text}"
    );
}

/// The notes Nautobot holds for a device, oldest first.
fn notes(c: &Campus, device: &str) -> Vec<String> {
    const NOTES: &str = "import json, os, sys, pynautobot
nb = pynautobot.api(os.environ['NAUTOBOT_URL'], token=os.environ['NAUTOBOT_TOKEN'])
d = nb.dcim.devices.get(name=sys.argv[1])
ns = sorted(nb.extras.notes.filter(assigned_object_id=d.id), key=lambda n: str(n.created))
print(json.dumps([n.note for n in ns]))
";
    let out = c.nb.python().args(["-c", NOTES, device]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What Nautobot holds that netgw writes to or reads from, as text: every note, the change log,
/// the devices (custom fields included) and the config contexts.
fn nautobot_objects(c: &Campus) -> String {
    const DUMP: &str = "import json, os, pynautobot
nb = pynautobot.api(os.environ['NAUTOBOT_URL'], token=os.environ['NAUTOBOT_TOKEN'])
out = []
for ep in (nb.extras.notes, nb.extras.object_changes, nb.dcim.devices, nb.extras.config_contexts):
    out.extend(dict(o) for o in ep.all())
print(json.dumps(out, default=str))
";
    let out = c.nb.python().args(["-c", DUMP]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// An interface of a lab device as (description, enabled, mtu, mode, access, native, trunk).
fn iface(c: &Campus, node: &str, name: &str) -> (String, bool, u32, String, u16, u16, String) {
    let dev = &c.lab.node(node).unwrap().device;
    let st = dev.state();
    let (_, i) = st
        .interfaces
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{node} has no {name}"));
    (
        i.description.clone(),
        i.enabled,
        i.mtu,
        format!("{:?}", i.mode),
        i.access_vlan,
        i.native_vlan,
        i.trunk_allowed.text("all", "none"),
    )
}

fn vlans(c: &Campus, node: &str) -> Vec<(u16, String)> {
    let dev = &c.lab.node(node).unwrap().device;
    dev.state()
        .vlans
        .iter()
        .map(|(k, v)| (*k, v.clone()))
        .collect()
}

/// `netgw converge` over a Nautobot filter brings the devices to Nautobot's VLANs and interfaces (a
/// node file of the repo overriding one value: Nautobot's intent is a `default` layer), leaves the
/// interfaces Nautobot does not mention alone, and the second run finds nothing to do.
#[test]
fn converge_brings_devices_to_nautobots_intent_and_then_nothing_is_left() {
    let c = campus();
    let d = c.dir.path();
    common::write(
        &d.join("repo"),
        "nodes/eos1.json",
        r#"{"name":"eos1","normal":{"netdev":{"links":{"Ethernet2":{"description":"from the repo"}}}}}"#,
    );
    let untouched = iface(c, "eos1", "Ethernet3");
    let src = url_source(c, "tags=lab");
    let (code, out, text) = netgw(c, &["converge", "--inventory", &src]);
    assert_eq!(code, 0, "{text}");
    let nodes = out["nodes"].as_array().unwrap();
    let names: Vec<&str> = nodes.iter().map(|n| n["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["eos1", "ios1", "jx1"], "{text}");
    for n in nodes {
        assert_eq!(n["status"], "success", "{n}");
        assert!(n["updated"].as_u64().unwrap() > 0, "{n}");
    }
    assert!(
        vlans(c, "eos1").contains(&(110, "users".into())),
        "{:?}",
        vlans(c, "eos1")
    );
    assert!(vlans(c, "eos1").contains(&(120, "voice".into())));
    assert!(
        vlans(c, "ios1").contains(&(210, "users-b".into())),
        "{:?}",
        vlans(c, "ios1")
    );
    let e1 = iface(c, "eos1", "Ethernet1");
    assert_eq!(
        (e1.0.as_str(), e1.1, e1.3.as_str(), e1.4),
        ("desk 1-01", true, "Access", 110)
    );
    let e2 = iface(c, "eos1", "Ethernet2");
    assert_eq!(
        (e2.0.as_str(), e2.3.as_str(), e2.5, e2.6.as_str()),
        ("from the repo", "Trunk", 110, "120")
    );
    // An interface without a mode whose addresses Nautobot holds: a routed port with them.
    let e4 = {
        let dev = &c.lab.node("eos1").unwrap().device;
        let st = dev.state();
        let (_, i) = st
            .interfaces
            .iter()
            .find(|(n, _)| n == "Ethernet4")
            .unwrap();
        (
            i.description.clone(),
            format!("{:?}", i.mode),
            i.ipv4.clone(),
            i.ipv6.clone(),
        )
    };
    assert_eq!(
        e4,
        (
            "routed uplink".to_owned(),
            "Routed".to_owned(),
            vec!["10.0.40.1/24".to_owned()],
            vec!["2001:db8:40::1/64".to_owned()]
        )
    );
    assert_eq!(
        iface(c, "eos1", "Ethernet3"),
        untouched,
        "an interface Nautobot does not hold"
    );
    let i1 = iface(c, "ios1", "Ethernet0/1");
    assert_eq!(
        (i1.0.as_str(), i1.3.as_str(), i1.4),
        ("desk b-01", "Access", 210)
    );
    // The LAG: its members bundled with the LACP mode of its custom field, the aggregate trunking
    // the VLANs of the VLAN group eos1's config context names.
    for v in [(310, "app".to_owned()), (320, "db".to_owned())] {
        assert!(
            vlans(c, "eos1").contains(&v),
            "{v:?}: {:?}",
            vlans(c, "eos1")
        );
    }
    let po = iface(c, "eos1", "Port-Channel10");
    assert_eq!(
        (po.0.as_str(), po.3.as_str(), po.6.as_str()),
        ("to dist1", "Trunk", "310,320")
    );
    for m in ["Ethernet5", "Ethernet6"] {
        assert_eq!(
            channel_group(c, "eos1", m),
            Some((10, "passive".to_owned())),
            "{m}"
        );
    }
    assert_eq!(iface(c, "eos1", "Ethernet5").0, "dist1 a");
    // Junos keeps its configuration in a tree of its own: what was committed, from the report (the
    // second run re-reads the device and finds it there).
    let jx1 = &nodes[2];
    let changed = |r: &str| -> Vec<String> {
        let res = jx1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == r);
        let res = res.unwrap_or_else(|| panic!("jx1 {r}: {jx1}"));
        assert_eq!(res["status"], "updated", "{res}");
        res["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{}={}", c["property"].as_str().unwrap(), c["after"]))
            .collect()
    };
    assert_eq!(
        changed("ge-0/0/1"),
        ["description=\"core uplink\"", "mtu=9000"]
    );
    assert_eq!(
        changed("ge-0/0/2"),
        ["description=\"spare\"", "enabled=false"]
    );
    assert_eq!(changed("210"), ["state=\"present\"", "name=\"users-b\""]);
    let (code, again, text) = netgw(c, &["converge", "--inventory", &src]);
    assert_eq!(code, 0, "{text}");
    for n in again["nodes"].as_array().unwrap() {
        assert_eq!(n["updated"], 0, "second run: {n}");
        assert_eq!(n["status"], "success", "{n}");
    }
    assert!(
        !text.contains(LAB_PASSWORD) && !text.contains(&c.nb.token),
        "a secret in the report"
    );
    // Each run's outcome is a note on the device in Nautobot.
    let (first, second) = (
        out["run_id"].as_str().unwrap(),
        again["run_id"].as_str().unwrap(),
    );
    for n in ["eos1", "ios1", "jx1"] {
        let notes = notes(c, n);
        assert_eq!(notes.len(), 2, "{n}: {notes:?}");
        assert!(
            notes[0].starts_with(&format!("netgw run {first} at ")),
            "{notes:?}"
        );
        assert!(notes[0].contains(": converged ("), "{notes:?}");
        assert!(
            notes[1].starts_with(&format!("netgw run {second} at ")),
            "{notes:?}"
        );
        assert!(notes[1].ends_with(": up to date"), "{notes:?}");
        assert!(notes.iter().all(|t| !t.contains(LAB_PASSWORD)));
    }
    assert!(
        notes(c, "f51").is_empty(),
        "a device the run did not select"
    );
    a_change_behind_nautobots_back_drifts_and_one_in_nautobot_converges(c, &src);
    vlan_policy_purge_removes_the_vlans_nautobot_does_not_list(c);
}

/// A port's `channel-group` (aggregate number, LACP mode) on a lab device.
fn channel_group(c: &Campus, node: &str, name: &str) -> Option<(u32, String)> {
    let dev = &c.lab.node(node).unwrap().device;
    let st = dev.state();
    let (_, i) = st.interfaces.iter().find(|(n, _)| n == name)?;
    i.channel_group.clone()
}

/// The file form's `vlan_policy: purge`: a VLAN on the device that Nautobot does not list for it is
/// removed, the ones it lists stay, and the second run is up to date.
fn vlan_policy_purge_removes_the_vlans_nautobot_does_not_list(c: &Campus) {
    c.lab
        .node("ios1")
        .unwrap()
        .device
        .state()
        .vlans
        .insert(999, "stray".into());
    let file = c.dir.path().join("purge.yml");
    std::fs::write(
        &file,
        format!(
            "nautobot:\n  url: {}\n  filter: {{platform: cisco_ios}}\n  vlan_policy: purge\n",
            c.nb.url
        ),
    )
    .unwrap();
    let src = file.to_str().unwrap();
    let (code, out, text) = netgw(c, &["converge", "--inventory", src]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(out["nodes"][0]["name"], "ios1", "{text}");
    let held = vlans(c, "ios1");
    assert!(!held.iter().any(|(v, _)| *v == 999), "{held:?}");
    assert!(held.contains(&(210, "users-b".into())), "{held:?}");
    let (code, again, text) = netgw(c, &["converge", "--inventory", src]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(again["nodes"][0]["updated"], 0, "{text}");
}

/// A LAG member whose VLANs differ from its LAG's, and a VLAN group giving a VID of the device's
/// location another name: each device fails alone, its error naming both, and a converge sends
/// nothing to it.
#[test]
fn a_member_against_its_lag_and_a_vid_named_twice_fail_naming_both() {
    let c = campus();
    let src = url_source(c, "role=broken");
    let (code, out, text) = netgw(c, &["inventory", "--inventory", &src]);
    assert_eq!(code, 1, "{text}");
    let hosts = by_name(&out);
    let lag = hosts["bad-lag"]["error"].as_str().unwrap_or_default();
    for want in [
        "nautobot device bad-lag interface Ethernet7 field mode: a member of LAG Port-Channel20",
        "(mode access, access_vlan 110)",
        "interface Port-Channel20's (mode trunk, trunk_vlans 110,120)",
    ] {
        assert!(lag.contains(want), "{want:?} in {text}");
    }
    let vlan = hosts["bad-vlan"]["error"].as_str().unwrap_or_default();
    assert!(
        vlan.contains(
            "nautobot device bad-vlan: VLAN 120 is \"voice\" in location bldg-a and \"phones\" in VLAN group phones"
        ),
        "{text}"
    );
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("repo/nodes")).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_netgw"));
    cmd.arg("--repo")
        .arg(d.path().join("repo"))
        .arg("--state-dir")
        .arg(d.path().join("state"))
        .args(["converge", "--inventory", &src, "--format", "json"])
        .env("NAUTOBOT_TOKEN", &c.nb.token)
        .env_remove("NETGW_INVENTORY");
    for (k, v) in SECRET_ENV {
        cmd.env(k, v);
    }
    let (code, out, text) = common::run_json(&mut cmd);
    assert_ne!(code, 0, "{text}");
    let nodes = out["nodes"].as_array().unwrap_or_else(|| panic!("{text}"));
    assert_eq!(nodes.len(), 2, "{text}");
    for (n, want) in nodes
        .iter()
        .zip(["member of LAG Port-Channel20", "VLAN 120 is"])
    {
        assert_eq!(n["status"], "failed", "{n}");
        assert!(n.to_string().contains(want), "{want:?} in {n}");
    }
}

/// A change behind Nautobot's back: drift names it, against Nautobot's intent; an interface changed
/// in Nautobot's API reaches the device with the next run, which also undoes the hand change.
fn a_change_behind_nautobots_back_drifts_and_one_in_nautobot_converges(c: &Campus, src: &str) {
    {
        let dev = &c.lab.node("eos1").unwrap().device;
        let mut st = dev.state();
        let e1 = st
            .interfaces
            .iter_mut()
            .find(|(n, _)| n == "Ethernet1")
            .unwrap();
        e1.1.description = "changed by hand".into();
    }
    let (code, drift, text) = netgw(c, &["drift", "--inventory", src, "eos1"]);
    assert_eq!(code, 1, "drift found: {text}");
    let res = drift["nodes"][0]["resources"].as_array().unwrap();
    let changed: Vec<&Value> = res.iter().filter(|r| r["status"] != "up-to-date").collect();
    assert_eq!(changed.len(), 1, "{text}");
    assert_eq!(changed[0]["name"], "Ethernet1");
    assert_eq!(changed[0]["changes"][0]["after"], "desk 1-01", "{text}");
    let recorded = notes(c, "eos1");
    // In Nautobot: the device's note names what differs (never the values).
    let total = drift["nodes"][0]["total"].as_u64().unwrap();
    let want = format!(": drifted (1 of {total} resources differ: link[Ethernet1] (description))");
    assert!(recorded.last().unwrap().ends_with(&want), "{recorded:?}");
    let held = nautobot_objects(c);
    assert!(held.contains(&want), "the dump reads the notes");
    assert!(
        !held.contains(LAB_PASSWORD) && !held.contains(&c.nb.token),
        "a secret in Nautobot's notes, change log, devices or config contexts"
    );

    const RENAME: &str = "import os, pynautobot
nb = pynautobot.api(os.environ['NAUTOBOT_URL'], token=os.environ['NAUTOBOT_TOKEN'])
i = nb.dcim.interfaces.get(device='ios1', name='Ethernet0/1')
i.update({'description': 'moved to desk b-02'})
";
    let out = c.nb.python().args(["-c", RENAME]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, _, text) = netgw(c, &["converge", "--inventory", src]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(iface(c, "ios1", "Ethernet0/1").0, "moved to desk b-02");
    assert_eq!(
        iface(c, "eos1", "Ethernet1").0,
        "desk 1-01",
        "the hand change undone"
    );
}

/// The secret the test's Nautobot webhook signs with (found in no output).
const WEBHOOK_SECRET: &str = "nb-hook-5ecret-0931";
/// The token the test reads serve's runs with.
const SERVE_TOKEN: &str = "nb-serve-token-2214";

/// `netgw serve` over the core devices of bldg-a (nx1) with the Nautobot webhook configured.
fn serve_for_webhooks(c: &Campus) -> (std::process::Child, String, PathBuf) {
    let d = c.dir.path().join("serve");
    std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
    std::fs::write(
        d.join("serve.yml"),
        format!(
            "db: history.db\ntokens:\n  - {{name: ops, sha256: {}, roles: [trigger, read]}}\n\
             nautobot_webhook:\n  secret_env: NETGW_NB_WEBHOOK_SECRET\n",
            netgw::api::auth::token_hash_hex(SERVE_TOKEN)
        ),
    )
    .unwrap();
    let log = d.join("serve.log");
    let src = url_source(c, "role=core&location=bldg-a");
    let (repo, state) = (d.join("repo"), d.join("state"));
    let mut envs = vec![
        ("NAUTOBOT_TOKEN", c.nb.token.as_str()),
        ("NETGW_NB_WEBHOOK_SECRET", WEBHOOK_SECRET),
    ];
    envs.extend(SECRET_ENV);
    let (child, base) = common::spawn_serve_env(
        &d.join("serve.yml"),
        &[
            "--inventory",
            &src,
            "--repo",
            repo.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
        ],
        &log,
        &envs,
    );
    (child, base, log)
}

/// A webhook body to serve, signed with `secret` (or unsigned).
fn post_hook(c: &Campus, base: &str, body: &Value, secret: Option<&str>) -> (u16, Value) {
    let bytes = body.to_string().into_bytes();
    let mut req = reqwest::Client::new()
        .post(format!("{base}/v1/webhooks/nautobot"))
        .header("content-type", "application/json")
        .timeout(std::time::Duration::from_secs(30));
    if let Some(s) = secret {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA512, s.as_bytes());
        let tag = ring::hmac::sign(&key, &bytes);
        req = req.header(
            "X-Hook-Signature",
            data_encoding::HEXLOWER.encode(tag.as_ref()),
        );
    }
    c.rt.block_on(async {
        let r = req.body(bytes).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    })
}

/// An interface changed in Nautobot's API reaches the device through Nautobot's own webhook (its
/// Celery worker signs and sends it) and `netgw serve`, with nobody running netgw; the run is the
/// webhook's, its outcome a note in Nautobot. A request without Nautobot's signature, or signed with
/// another secret, is refused before anything is queued.
#[test]
fn an_interface_changed_in_nautobot_reaches_the_device_through_the_webhook() {
    let c = campus();
    let (mut child, base, log) = serve_for_webhooks(c);
    const HOOK: &str = "import os, sys, pynautobot
nb = pynautobot.api(os.environ['NAUTOBOT_URL'], token=os.environ['NAUTOBOT_TOKEN'])
nb.extras.webhooks.create(name='netgw', content_types=['dcim.device', 'dcim.interface', 'ipam.vlan', 'ipam.ipaddress'],
    type_create=True, type_update=True, type_delete=True, payload_url=sys.argv[1] + '/v1/webhooks/nautobot',
    http_method='POST', http_content_type='application/json', secret=sys.argv[2], enabled=True)
i = nb.dcim.interfaces.get(device='nx1', name='Ethernet1/1')
vlan = nb.ipam.vlans.get(vid=110)
i.update({'description': 'desk 1-99 via webhook', 'enabled': False, 'mode': 'access',
          'untagged_vlan': vlan.id})
print(nb.dcim.devices.get(name='nx1').id)
";
    let out =
        c.nb.python()
            .args(["-c", HOOK, &base, WEBHOOK_SECRET])
            .output()
            .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nx1_id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let want = (
        "desk 1-99 via webhook".to_owned(),
        false,
        "Access".to_owned(),
        110,
    );
    loop {
        let i = iface(c, "nx1", "Ethernet1/1");
        if (i.0.clone(), i.1, i.3.clone(), i.4) == want {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nx1 Ethernet1/1 is {i:?} after 120 s; serve's log:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    // The run that did it was the webhook's, and its outcome is a note on the device.
    let runs: Value = c.rt.block_on(async {
        reqwest::Client::new()
            .get(format!("{base}/v1/runs?node=nx1"))
            .bearer_auth(SERVE_TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    let by = runs["runs"][0]["requested_by"].as_str().unwrap_or_default();
    assert!(
        by.starts_with("nautobot webhook: dcim.interface Ethernet1/1 updated by netgw"),
        "{runs}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !notes(c, "nx1").iter().any(|n| n.contains(": converged (")) {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            notes(c, "nx1")
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    }

    // Unsigned, or signed with another secret: 401, nothing queued.
    let change = json!({"event": "updated", "model": "device", "username": "mallory",
                        "data": {"id": nx1_id, "object_type": "dcim.device", "name": "nx1"}});
    let (code, body) = post_hook(c, &base, &change, None);
    assert_eq!(
        (code, body["code"].as_str()),
        (401, Some("invalid_signature")),
        "{body}"
    );
    let (code, body) = post_hook(c, &base, &change, Some("another secret"));
    assert_eq!(
        (code, body["code"].as_str()),
        (401, Some("invalid_signature")),
        "{body}"
    );
    // Signed: a device of the inventory is queued; one outside it and other objects are not.
    let (code, body) = post_hook(c, &base, &change, Some(WEBHOOK_SECRET));
    assert_eq!(code, 202, "{body}");
    assert!(body["run_id"].is_string(), "{body}");
    let mut other = change.clone();
    other["data"]["id"] = json!("00000000-0000-0000-0000-000000000000");
    let (code, body) = post_hook(c, &base, &other, Some(WEBHOOK_SECRET));
    assert_eq!((code, body["nodes"].clone()), (200, json!([])), "{body}");
    let mut circuit = change.clone();
    circuit["data"]["object_type"] = json!("circuits.circuit");
    let (code, body) = post_hook(c, &base, &circuit, Some(WEBHOOK_SECRET));
    assert_eq!(code, 400, "{body}");
    let runs: Value = c.rt.block_on(async {
        reqwest::Client::new()
            .get(format!("{base}/v1/runs?node=nx1"))
            .bearer_auth(SERVE_TOKEN)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    let by_mallory = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["requested_by"].as_str().unwrap().contains("by mallory"))
        .count();
    assert_eq!(by_mallory, 1, "only the signed change queued a run: {runs}");
    let _ = child.kill();
    let _ = child.wait();
    // Later changes in Nautobot are not sent to a port serve no longer holds.
    const UNHOOK: &str = "import os, pynautobot
nb = pynautobot.api(os.environ['NAUTOBOT_URL'], token=os.environ['NAUTOBOT_TOKEN'])
nb.extras.webhooks.get(name='netgw').delete()
";
    let out = c.nb.python().args(["-c", UNHOOK]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    for secret in [
        WEBHOOK_SECRET,
        LAB_PASSWORD,
        SERVE_TOKEN,
        c.nb.token.as_str(),
    ] {
        assert!(!text.contains(secret), "a secret in serve's log");
    }
}
