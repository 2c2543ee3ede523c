//! netgw-lab's SNMP agents, read by netgw's own SNMP client and fact collector (v2c and v3 authPriv)
//! and by net-snmp's `snmpwalk` / `snmpbulkwalk`: the facts must equal the simulator's state, changes
//! made through the simulators must show up, and the walks must come back complete and in order.
//!
//! The net-snmp tests need the `snmp` package (`scripts/peers/snmpd.sh install` installs it); they fail
//! with that command when it is missing.

use netgw_drivers::driver::{CommitOptions, Platform};
use netgw_drivers::target::DeviceTarget;
use netgw_labs::lab::{DEFAULT_SNMP_COMMUNITY, SnmpV3User};
use netgw_labs::sim::state::{DeviceState, Iface};
use netgw_labs::{Lab, LabOptions, Sim};
use netgw_models::facts::{AdminStatus, DeviceFacts, OperStatus};
use netgw_models::plan::{Policy, plan};
use netgw_models::resource::Link;
use netgw_models::secret::Secret;
use netgw_models::topology::Topology;
use netgw_transport::Timeouts;
use netgw_transport::snmp::{
    AuthProtocol, Oid, PrivProtocol, SnmpClient, SnmpConfig, SnmpError, SnmpSecurity, SnmpValue,
    V3Level, WalkLimits, collect_facts,
};
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

const FABRIC: &str = r#"
name: t
topology:
  nodes:
    spine1: {kind: arista_ceos}
    leaf2: {kind: juniper_vjunosswitch}
    acc1: {kind: cisco_iol, type: l2}
    nx1: {kind: cisco_n9kv}
    lb1: {kind: f5_bigip-ve}
  links:
    - endpoints: ["spine1:eth1", "leaf2:eth1"]
    - endpoints: ["spine1:eth3", "acc1:e0/1"]
    - endpoints: ["spine1:eth4", "nx1:eth2"]
"#;

async fn lab(opts: LabOptions) -> Lab {
    Lab::start(&Topology::parse(FABRIC).unwrap(), opts)
        .await
        .unwrap()
}

fn v2c(lab: &Lab, node: &str, community: &str) -> SnmpConfig {
    let n = lab.node(node).unwrap();
    SnmpConfig::new(
        node,
        "127.0.0.1",
        SnmpSecurity::V2c {
            community: Secret::new(community),
        },
    )
    .with_port(n.snmp_port.expect("the lab serves SNMP"))
    .with_timeout(Duration::from_secs(3), 1)
}

fn v3(lab: &Lab, node: &str, auth: AuthProtocol, auth_key: &str, priv_key: &str) -> SnmpConfig {
    let n = lab.node(node).unwrap();
    SnmpConfig::new(
        node,
        "127.0.0.1",
        SnmpSecurity::V3 {
            user: "netgw-lab".into(),
            level: V3Level::AuthPriv {
                auth,
                auth_key: Secret::new(auth_key),
                privacy: PrivProtocol::Aes128,
                priv_key: Secret::new(priv_key),
            },
            context: None,
        },
    )
    .with_port(n.snmp_port.unwrap())
    .with_timeout(Duration::from_secs(3), 1)
}

async fn facts(cfg: SnmpConfig) -> DeviceFacts {
    let mut c = SnmpClient::connect(cfg).await.expect("connect");
    let got = collect_facts(&mut c, WalkLimits::default())
        .await
        .expect("collect");
    assert!(got.skipped.is_empty(), "{:?}", got.skipped);
    got.facts
}

/// The state a node's agent serves (Junos: derived from the running configuration).
fn state_of(lab: &Lab, node: &str) -> DeviceState {
    let n = lab.node(node).unwrap();
    match &n.sim {
        Sim::Junos(j) => j.snmp_state(),
        _ => n.device.state().clone(),
    }
}

/// The collected interface with the simulator interface's MAC (unique per port in the lab).
fn by_mac<'a>(
    f: &'a DeviceFacts,
    iface: &Iface,
) -> (&'a String, &'a netgw_models::facts::InterfaceFacts) {
    f.interfaces
        .iter()
        .find(|(_, i)| i.mac.as_deref() == Some(iface.mac.as_str()))
        .unwrap_or_else(|| {
            panic!(
                "no SNMP interface with MAC {} in {:?}",
                iface.mac,
                f.interfaces.keys()
            )
        })
}

/// Every fact the collector reads equals the simulator's state.
fn check_equal(lab: &Lab, node: &str, f: &DeviceFacts) {
    let n = lab.node(node).unwrap();
    let st = state_of(lab, node);
    let (vendor, platform, version) = match n.platform {
        "eos" => ("arista", "eos", Some("4.32.0F")),
        "junos" => ("juniper", "junos", Some("23.2R1.14")),
        "ios" => ("cisco", "ios", Some("17.12.1")),
        "nxos" => ("cisco", "nxos", Some("10.3(3)")),
        "f5" => ("f5", "f5", None),
        p => panic!("{p}"),
    };
    assert_eq!(f.vendor.as_deref(), Some(vendor), "{node}");
    assert_eq!(f.platform.as_deref(), Some(platform), "{node}");
    assert_eq!(f.platform_version.as_deref(), version, "{node}");
    assert_eq!(f.hostname.as_deref(), Some(st.hostname.as_str()), "{node}");
    let snmp = f.snmp.as_ref().expect("system group");
    assert_eq!(snmp.sys_name.as_deref(), Some(st.hostname.as_str()));
    assert_eq!(snmp.sys_location.as_deref(), Some(st.location.as_str()));
    assert_eq!(snmp.sys_contact.as_deref(), Some(st.contact.as_str()));
    let up = snmp.sys_up_time.unwrap();
    assert!(
        up < 100 * 600,
        "{node}: sysUpTime {up} ticks since the lab started"
    );
    if n.platform == "f5" {
        assert_eq!(f.serial, None, "BIG-IP has no ENTITY-MIB");
    } else {
        assert_eq!(
            f.serial.as_deref(),
            Some(n.device.serial().as_str()),
            "{node}"
        );
        assert!(f.model.is_some(), "{node}");
    }
    assert_eq!(
        f.interfaces.len(),
        st.interfaces.len(),
        "{node}: {:?}",
        f.interfaces.keys()
    );
    for (name, iface) in &st.interfaces {
        let (_, got) = by_mac(f, iface);
        let want_desc = (!iface.description.is_empty()).then(|| iface.description.clone());
        assert_eq!(got.description, want_desc, "{node} {name}");
        assert_eq!(got.mtu, Some(iface.mtu), "{node} {name}");
        assert_eq!(
            got.speed,
            Some(iface.speed_mbps * 1_000_000),
            "{node} {name}"
        );
        assert_eq!(
            got.admin_status,
            Some(if iface.enabled {
                AdminStatus::Up
            } else {
                AdminStatus::Down
            }),
            "{node} {name}"
        );
        assert_eq!(
            got.oper_status,
            Some(if iface.status_up() {
                OperStatus::Up
            } else {
                OperStatus::Down
            }),
            "{node} {name}"
        );
    }
    let names: BTreeMap<u16, String> = f
        .vlans
        .iter()
        .map(|(id, v)| (*id, v.name.clone().unwrap_or_default()))
        .collect();
    assert_eq!(names, st.vlans, "{node}");
    let mut want_lldp = 0;
    for nb in &st.neighbors {
        let (local, _) = by_mac(f, st.iface(&nb.local_port).unwrap());
        let got = f
            .lldp_neighbors
            .get(local)
            .unwrap_or_else(|| panic!("{node}: no LLDP on {local}: {:?}", f.lldp_neighbors));
        assert!(
            got.iter().any(
                |g| g.remote_system_name.as_deref() == Some(nb.system_name.as_str())
                    && g.remote_port.as_deref() == Some(nb.port.as_str())
                    && g.remote_chassis_id.as_deref() == Some(nb.chassis_id.as_str())
            ),
            "{node} {local}: {got:?} vs {nb:?}"
        );
        want_lldp += 1;
    }
    assert_eq!(
        f.lldp_neighbors.values().map(Vec::len).sum::<usize>(),
        want_lldp,
        "{node}"
    );
}

#[tokio::test]
async fn collector_facts_equal_the_simulated_state_for_every_vendor() {
    let lab = lab(LabOptions::default()).await;
    for node in ["spine1", "leaf2", "acc1", "nx1", "lb1"] {
        let f = facts(v2c(&lab, node, DEFAULT_SNMP_COMMUNITY)).await;
        check_equal(&lab, node, &f);
    }
    // Vendor naming: IOS and NX-OS ifName are short, Junos/F5 keep their names; NX-OS and Junos number
    // interfaces their own way.
    let ios = facts(v2c(&lab, "acc1", DEFAULT_SNMP_COMMUNITY)).await;
    assert_eq!(ios.interfaces["Et0/1"].description, None);
    assert!(
        ios.lldp_neighbors.contains_key("Et0/1"),
        "{:?}",
        ios.lldp_neighbors
    );
    let nx = facts(v2c(&lab, "nx1", DEFAULT_SNMP_COMMUNITY)).await;
    assert_eq!(nx.interfaces["Eth1/1"].ifindex, Some(436_207_616));
    assert_eq!(nx.interfaces["mgmt0"].ifindex, Some(83_886_080));
    let j = facts(v2c(&lab, "leaf2", DEFAULT_SNMP_COMMUNITY)).await;
    assert_eq!(j.interfaces["ge-0/0/0"].ifindex, Some(501));
    assert_eq!(j.model.as_deref(), Some("EX9214"));
    assert!(j.lldp_neighbors.contains_key("ge-0/0/0"));
    let lb = facts(v2c(&lab, "lb1", DEFAULT_SNMP_COMMUNITY)).await;
    assert!(
        lb.interfaces.contains_key("1.1"),
        "{:?}",
        lb.interfaces.keys()
    );
}

fn target(lab: &Lab, dir: &std::path::Path, name: &str) -> DeviceTarget {
    let n = lab.node(name).unwrap();
    let mut t = DeviceTarget::new(name, Platform::parse(n.platform).unwrap(), "127.0.0.1");
    t.port = Some(n.port);
    t.username = "admin".into();
    t.password = Some(Secret::new("admin"));
    t.known_hosts = dir.join("lab-known_hosts");
    t.tls.ca_file = Some(dir.join("lab-ca.pem"));
    t.enable_secret = Some(Secret::new("admin"));
    t.timeouts = Timeouts {
        connect: Duration::from_secs(5),
        idle: Duration::from_secs(30),
        operation: Duration::from_secs(10),
    };
    t
}

async fn get_text(cfg: SnmpConfig, oid: &str) -> String {
    let mut c = SnmpClient::connect(cfg).await.unwrap();
    let o: Oid = oid.parse().unwrap();
    c.get(&[o]).await.unwrap()[0].value.as_text().unwrap()
}

#[tokio::test]
async fn changes_made_through_the_simulators_show_up_in_snmp() {
    let lab = lab(LabOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    lab.write_inventory(&dir.path().join("inventory.yml"))
        .unwrap();
    // Through each vendor's own management protocol (eAPI, NETCONF commit, CLI): a description.
    for (node, port) in [
        ("spine1", "Ethernet2"),
        ("leaf2", "ge-0/0/1"),
        ("acc1", "Ethernet0/2"),
    ] {
        let mut d = netgw_drivers::registry::connect(&target(&lab, dir.path(), node))
            .await
            .unwrap();
        let observed = d.observe().await.unwrap();
        let mut l = Link::new(port);
        l.description = Some(format!("to-db-{node}"));
        let p = plan(
            &[],
            &observed.vlans,
            Policy::Merge,
            &[l],
            &observed.links,
            Policy::Merge,
            &d.plan_rules(),
        );
        d.stage(&p).await.unwrap();
        d.commit(&CommitOptions::default()).await.unwrap();
        d.confirm().await.unwrap();
        d.close().await.unwrap();
        let f = facts(v2c(&lab, node, DEFAULT_SNMP_COMMUNITY)).await;
        let want = format!("to-db-{node}");
        assert!(
            f.interfaces
                .values()
                .any(|i| i.description.as_deref() == Some(want.as_str())),
            "{node}: {:?}",
            f.interfaces
        );
        check_equal(&lab, node, &f);
    }
    // The hostname, changed in the shared state (as `hostname X` does), is the next sysName.
    lab.node("nx1").unwrap().device.state().hostname = "nx1-renamed.example.net".into();
    let cfg = v2c(&lab, "nx1", DEFAULT_SNMP_COMMUNITY);
    assert_eq!(
        get_text(cfg.clone(), "1.3.6.1.2.1.1.5.0").await,
        "nx1-renamed.example.net"
    );
    let f = facts(cfg).await;
    assert_eq!(f.hostname.as_deref(), Some("nx1-renamed"));
    assert_eq!(f.fqdn.as_deref(), Some("nx1-renamed.example.net"));
    // A VLAN and sysLocation configured through the CLI session model.
    {
        let mut st = lab.node("acc1").unwrap().device.state();
        let mut s =
            netgw_labs::sim::state::ConfigSession::new(netgw_labs::sim::state::Dialect::Ios);
        for line in [
            "vlan 30",
            "name voice",
            "exit",
            "snmp-server location rack 4, row B",
        ] {
            s.apply(&mut st, line).unwrap();
        }
    }
    let f = facts(v2c(&lab, "acc1", DEFAULT_SNMP_COMMUNITY)).await;
    assert_eq!(
        f.vlans.get(&30).and_then(|v| v.name.as_deref()),
        Some("voice"),
        "CISCO-VTP-MIB"
    );
    assert_eq!(
        f.snmp.unwrap().sys_location.as_deref(),
        Some("rack 4, row B")
    );
}

#[tokio::test]
async fn v3_auth_priv_with_the_workspace_client() {
    let lab = lab(LabOptions::default()).await;
    let u = SnmpV3User::default();
    let f3 = facts(v3(
        &lab,
        "spine1",
        AuthProtocol::Sha1,
        &u.auth_key,
        &u.priv_key,
    ))
    .await;
    check_equal(&lab, "spine1", &f3);
    let mut f2 = facts(v2c(&lab, "spine1", DEFAULT_SNMP_COMMUNITY)).await;
    let mut f3 = f3;
    for f in [&mut f2, &mut f3] {
        f.uptime = None;
        if let Some(s) = &mut f.snmp {
            s.sys_up_time = None;
        }
    }
    assert_eq!(f2, f3, "v2c and v3 serve the same view");
    // Wrong keys: the engine says so (wrong digest) or the reply cannot be decrypted.
    let wrong_auth = SnmpClient::connect(v3(
        &lab,
        "spine1",
        AuthProtocol::Sha1,
        "not-the-key",
        &u.priv_key,
    ))
    .await;
    let err = match wrong_auth {
        Ok(mut c) => c
            .get(&["1.3.6.1.2.1.1.5.0".parse().unwrap()])
            .await
            .unwrap_err(),
        Err(e) => e,
    };
    assert!(err.is_auth() || err.is_timeout(), "{err}");
    // SHA-256 (RFC 7860) on a lab configured for it.
    let lab256 = lab_with_sha256().await;
    let cfg = v3(
        &lab256,
        "leaf2",
        AuthProtocol::Sha256,
        "auth-key-256",
        "priv-key-256",
    );
    assert_eq!(get_text(cfg, "1.3.6.1.2.1.1.5.0").await, "leaf2");
}

async fn lab_with_sha256() -> Lab {
    lab(LabOptions {
        snmp_v3: Some(SnmpV3User {
            user: "netgw-lab".into(),
            auth_proto: "SHA-256".into(),
            auth_key: "auth-key-256".into(),
            priv_key: "priv-key-256".into(),
        }),
        ..LabOptions::default()
    })
    .await
}

#[tokio::test]
async fn bad_community_and_no_answer_fault_time_out() {
    let lab = lab(LabOptions {
        faults: vec![("nx1".into(), "snmp-no-answer".into(), "true".into())],
        ..LabOptions::default()
    })
    .await;
    let quick = |cfg: SnmpConfig| cfg.with_timeout(Duration::from_millis(300), 0);
    let get = |cfg: SnmpConfig| async move {
        let mut c = SnmpClient::connect(cfg).await?;
        c.get(&["1.3.6.1.2.1.1.5.0".parse().unwrap()]).await
    };
    let e: SnmpError = get(quick(v2c(&lab, "spine1", "wrong-community")))
        .await
        .unwrap_err();
    assert!(
        e.is_timeout(),
        "a wrong community is ignored, as agents do: {e}"
    );
    assert!(!e.to_string().contains("wrong-community"), "{e}");
    let e = get(quick(v2c(&lab, "nx1", DEFAULT_SNMP_COMMUNITY)))
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e}");
    // The other nodes still answer.
    assert_eq!(
        get(v2c(&lab, "acc1", DEFAULT_SNMP_COMMUNITY))
            .await
            .unwrap()[0]
            .value,
        SnmpValue::OctetString(b"acc1".to_vec())
    );
}

#[tokio::test]
async fn inventory_lists_snmp_for_every_node() {
    let lab = lab(LabOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inventory.yml");
    lab.write_inventory(&path).unwrap();
    let inv: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let hosts = inv["hosts"].as_object().unwrap();
    assert_eq!(hosts.len(), 5);
    for (name, h) in hosts {
        let s = &h["connection_options"]["snmp"];
        assert_eq!(s["hostname"], "127.0.0.1", "{name}");
        assert_eq!(
            s["port"],
            lab.node(name).unwrap().snmp_port.unwrap(),
            "{name}"
        );
        assert_eq!(s["extras"]["version"], "2c");
        assert_eq!(s["extras"]["community"], DEFAULT_SNMP_COMMUNITY);
    }
    // SNMPv3 inventories carry the user; without SNMP, nothing.
    let v3lab = Lab::start(
        &Topology::parse("name: s\ntopology: {nodes: {sw: {kind: arista_ceos}}}").unwrap(),
        LabOptions {
            snmp_inventory_v3: true,
            ..LabOptions::default()
        },
    )
    .await
    .unwrap();
    let x = &v3lab.inventory(&path, &path)["hosts"]["sw"]["connection_options"]["snmp"]["extras"];
    assert_eq!(
        (
            x["version"].as_str(),
            x["auth_proto"].as_str(),
            x["priv_proto"].as_str()
        ),
        (Some("3"), Some("SHA"), Some("AES"))
    );
    let off = Lab::start(
        &Topology::parse("name: s\ntopology: {nodes: {sw: {kind: arista_ceos}}}").unwrap(),
        LabOptions {
            snmp: false,
            ..LabOptions::default()
        },
    )
    .await
    .unwrap();
    assert!(off.node("sw").unwrap().snmp_port.is_none());
    assert!(
        off.inventory(&path, &path)["hosts"]["sw"]["connection_options"]
            .get("snmp")
            .is_none()
    );
}

// ---------------------------------------------------------------------------------------------------
// net-snmp

fn net_snmp(tool: &str) -> std::path::PathBuf {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .unwrap();
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if path.is_empty() {
        panic!(
            "\n\n*** {tool} (net-snmp) is not installed. Install it first:\n***     scripts/peers/snmpd.sh install\n\
             *** (it installs the Debian packages snmpd and snmp; see docs/peers.md)\n"
        );
    }
    path.into()
}

/// `.1.3.6... = TYPE: value` lines of `-On` output, as (OID, rest); multi-line strings are folded.
/// Walking from `.1`, net-snmp prints the final endOfMibView too ("No more variables left in this MIB
/// View"): it is the end marker, not an instance, and is left out.
fn parse_walk(out: &str) -> Vec<(Oid, String)> {
    let mut v: Vec<(Oid, String)> = Vec::new();
    for line in out.lines() {
        match line.split_once(" = ") {
            Some((o, rest)) if o.starts_with('.') && o.parse::<Oid>().is_ok() => {
                v.push((o.parse().unwrap(), rest.to_owned()));
            }
            _ => {
                let last = v
                    .last_mut()
                    .unwrap_or_else(|| panic!("unparsable walk line {line:?}"));
                last.1.push('\n');
                last.1.push_str(line);
            }
        }
    }
    v.retain(|(_, rest)| !rest.starts_with("No more variables left"));
    v
}

async fn run(cmd: std::path::PathBuf, args: Vec<String>) -> String {
    let shown = args.join(" ");
    let o = tokio::task::spawn_blocking(move || Command::new(&cmd).args(&args).output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{shown}: {err}");
    assert!(!err.contains("OID not increasing"), "{err}");
    String::from_utf8(o.stdout).unwrap()
}

#[tokio::test]
async fn net_snmp_walks_every_agent_in_order() {
    let walk = net_snmp("snmpwalk");
    let bulk = net_snmp("snmpbulkwalk");
    let lab = lab(LabOptions::default()).await;
    for node in ["spine1", "leaf2", "acc1", "nx1", "lb1"] {
        let target = format!("127.0.0.1:{}", lab.node(node).unwrap().snmp_port.unwrap());
        let common = |extra: &[&str]| -> Vec<String> {
            let mut a: Vec<String> = ["-On", "-t", "3", "-r", "1"].map(String::from).to_vec();
            a.extend(extra.iter().map(|s| s.to_string()));
            a.push(target.clone());
            a.push(".1".into());
            a
        };
        let next = parse_walk(
            &run(
                walk.clone(),
                common(&["-v2c", "-c", DEFAULT_SNMP_COMMUNITY]),
            )
            .await,
        );
        // Max-repetitions 200: every answer is cut at 1472 octets, the walk must still be complete.
        let bulked = parse_walk(
            &run(
                bulk.clone(),
                common(&["-v2c", "-c", DEFAULT_SNMP_COMMUNITY, "-Cr200"]),
            )
            .await,
        );
        let u = SnmpV3User::default();
        let v3 = parse_walk(
            &run(
                bulk.clone(),
                common(&[
                    "-v3",
                    "-l",
                    "authPriv",
                    "-u",
                    &u.user,
                    "-a",
                    "SHA",
                    "-A",
                    &u.auth_key,
                    "-x",
                    "AES",
                    "-X",
                    &u.priv_key,
                ]),
            )
            .await,
        );
        assert!(next.len() > 100, "{node}: {} instances", next.len());
        for w in next.windows(2) {
            assert!(w[0].0 < w[1].0, "{node}: {} then {}", w[0].0, w[1].0);
        }
        let oids = |v: &[(Oid, String)]| v.iter().map(|(o, _)| o.clone()).collect::<Vec<_>>();
        assert_eq!(
            oids(&next),
            oids(&bulked),
            "{node}: GETNEXT and GETBULK walks differ"
        );
        assert_eq!(oids(&next), oids(&v3), "{node}: v2c and v3 walks differ");
        let st = state_of(&lab, node);
        let find = |o: &str| {
            let o: Oid = o.parse().unwrap();
            next.iter()
                .find(|(x, _)| *x == o)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            find(".1.3.6.1.2.1.1.5.0"),
            format!("STRING: \"{}\"", st.hostname),
            "{node}"
        );
        assert_eq!(
            find(".1.3.6.1.2.1.2.1.0"),
            format!("INTEGER: {}", st.interfaces.len()),
            "{node}"
        );
        assert!(
            find(".1.3.6.1.2.1.1.2.0").starts_with("OID: .1.3.6.1.4.1."),
            "{node}"
        );
        assert!(
            find(".1.3.6.1.2.1.1.3.0").starts_with("Timeticks: "),
            "{node}"
        );
    }
}

#[tokio::test]
async fn shared_port_selects_devices_by_community_and_context() {
    // What a lab does when the open-file limit cannot hold a UDP socket per device (10,000 devices on a
    // 20,000-descriptor limit): one port, `COMMUNITY@NODE` (v2c) or context `NODE` (v3).
    let lab = lab(LabOptions {
        snmp_shared: Some(true),
        ..LabOptions::default()
    })
    .await;
    let port = lab.node("spine1").unwrap().snmp_port.unwrap();
    assert!(lab.nodes.iter().all(|n| n.snmp_port == Some(port)));
    for node in ["spine1", "leaf2", "acc1", "nx1", "lb1"] {
        let f = facts(v2c(&lab, node, &format!("{DEFAULT_SNMP_COMMUNITY}@{node}"))).await;
        check_equal(&lab, node, &f);
    }
    let u = SnmpV3User::default();
    let mut cfg = v3(&lab, "leaf2", AuthProtocol::Sha1, &u.auth_key, &u.priv_key);
    if let SnmpSecurity::V3 { context, .. } = &mut cfg.security {
        *context = Some("leaf2".into());
    }
    assert_eq!(get_text(cfg, "1.3.6.1.2.1.1.5.0").await, "leaf2");
    // The bare community or an unknown node selects nothing: no answer, as for a wrong community.
    for community in [
        DEFAULT_SNMP_COMMUNITY.to_owned(),
        format!("{DEFAULT_SNMP_COMMUNITY}@nope"),
    ] {
        let mut c = SnmpClient::connect(
            v2c(&lab, "acc1", &community).with_timeout(Duration::from_millis(300), 0),
        )
        .await
        .unwrap();
        let e = c
            .get(&["1.3.6.1.2.1.1.5.0".parse().unwrap()])
            .await
            .unwrap_err();
        assert!(e.is_timeout(), "{community}: {e}");
    }
    // The inventory carries each node's community.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("inv.yml");
    let inv = lab.inventory(&p, &p);
    assert_eq!(
        inv["hosts"]["nx1"]["connection_options"]["snmp"]["extras"]["community"],
        "netgw-lab@nx1"
    );
    assert_eq!(
        inv["hosts"]["nx1"]["connection_options"]["snmp"]["port"],
        port
    );
}
