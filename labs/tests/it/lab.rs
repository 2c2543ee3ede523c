//! netgw-labs integration tests: topologies, and every simulator driven by netgw's own transports and
//! drivers on 127.0.0.1 (nothing else is contacted).

use netgw_drivers::driver::{CommitOptions, Driver, DriverError, Platform};
use netgw_drivers::eos::EosDriver;
use netgw_drivers::ios::IosDriver;
use netgw_drivers::junos::JunosDriver;
use netgw_drivers::nxos::NxosDriver;
use netgw_drivers::target::DeviceTarget;
use netgw_labs::{Lab, LabOptions};
use netgw_models::facts::SwitchportFacts;
use netgw_models::plan::{PlanRules, Policy, plan};
use netgw_models::resource::{Link, LinkMode, Vlan, VlanId, VlanSet};
use netgw_models::secret::Secret;
use netgw_models::topology::Topology;
use netgw_transport::Timeouts;
use netgw_transport::http::{HttpAuth, HttpClient, HttpConfig, TlsMode};
use netgw_transport::netconf::reply::parse_document;
use netgw_transport::netconf::{ClientOptions, Datastore, Framing, XmlElement, connect_ssh_with};
use netgw_transport::ssh::{
    CliMode, CliPlatform, CliShell, HostKeyPolicy, PlatformKind, SshAuth, SshSession, SshTarget,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "yml" || x == "yaml") {
            out.push(p);
        }
    }
}

#[test]
fn every_fixture_topology_parses() {
    let mut files = Vec::new();
    files_under(&fixtures().join("containerlab"), &mut files);
    assert!(files.len() >= 35, "{} topology files", files.len());
    let mut kinds = BTreeSet::new();
    for f in &files {
        let t = Topology::parse(&std::fs::read_to_string(f).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for n in t.nodes.values() {
            kinds.insert((n.kind.clone().unwrap_or_default(), n.platform));
        }
    }
    for (k, p) in [
        ("arista_ceos", Some("eos")),
        ("ceos", Some("eos")),
        ("juniper_vjunosswitch", Some("junos")),
        ("cisco_iol", Some("ios")),
        ("f5_bigip-ve", Some("f5")),
        ("linux", None), // not driven: models::kinds
        ("nokia_srlinux", None),
    ] {
        assert!(
            kinds.contains(&(k.to_owned(), p)),
            "{k} -> {p:?} in {kinds:?}"
        );
    }
    let avd = Topology::parse(
        &std::fs::read_to_string(
            fixtures().join("containerlab/avd-cEOS-Lab/avd_sym_irb/topology.yaml"),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(
        avd.nodes
            .values()
            .filter(|n| n.platform == Some("eos"))
            .count()
            >= 4
    );
    assert!(!avd.links.is_empty());
}

#[test]
fn shipped_containerlab_topology_parses() {
    let p = netgw_drivers::testing::repo_root().join("containerlab/netgw-fabric.clab.yml");
    let t = Topology::parse(&std::fs::read_to_string(p).unwrap()).unwrap();
    let platforms: BTreeSet<&str> = t.nodes.values().filter_map(|n| n.platform).collect();
    for p in ["eos", "junos", "ios", "f5"] {
        assert!(platforms.contains(p), "{p}");
    }
}

const FABRIC: &str = r#"
name: t
topology:
  nodes:
    spine1: {kind: arista_ceos}
    leaf1: {kind: arista_ceos}
    leaf2: {kind: juniper_vjunosswitch}
    acc1: {kind: cisco_iol, type: l2}
    nx1: {kind: cisco_n9kv}
    lb1: {kind: f5_bigip-ve}
    srv: {kind: linux}
  links:
    - endpoints: ["spine1:eth1", "leaf1:eth1"]
    - endpoints: ["spine1:eth2", "leaf2:eth1"]
    - endpoints: ["leaf1:eth3", "acc1:e0/1"]
    - endpoints: ["leaf1:eth4", "nx1:eth1"]
"#;

struct Env {
    lab: Lab,
    dir: tempfile::TempDir,
}

async fn start(yaml: &str, faults: &[(&str, &str, &str)]) -> Env {
    let topo = Topology::parse(yaml).unwrap();
    let opts = LabOptions {
        faults: faults
            .iter()
            .map(|(n, k, v)| ((*n).into(), (*k).into(), (*v).into()))
            .collect(),
        ..LabOptions::default()
    };
    let lab = Lab::start(&topo, opts).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    lab.write_inventory(&dir.path().join("inventory.yml"))
        .unwrap();
    Env { lab, dir }
}

impl Env {
    fn target(&self, name: &str) -> DeviceTarget {
        let n = self.lab.node(name).unwrap();
        let platform = Platform::parse(n.platform).unwrap();
        let mut t = DeviceTarget::new(name, platform, "127.0.0.1");
        t.port = Some(n.port);
        t.username = "admin".into();
        t.password = Some(Secret::new("admin"));
        t.known_hosts = self.dir.path().join("lab-known_hosts");
        t.tls.ca_file = Some(self.dir.path().join("lab-ca.pem"));
        t.enable_secret = Some(Secret::new("admin"));
        t.timeouts = Timeouts {
            connect: Duration::from_secs(5),
            idle: Duration::from_secs(30),
            operation: Duration::from_secs(10),
        };
        t
    }

    fn ssh_target(&self, name: &str) -> SshTarget {
        let n = self.lab.node(name).unwrap();
        SshTarget {
            device: name.into(),
            host: "127.0.0.1".into(),
            port: n.port,
            username: "admin".into(),
            auth: SshAuth::Password(Secret::new("admin")),
            host_keys: HostKeyPolicy {
                known_hosts: self.dir.path().join("lab-known_hosts"),
                accept_new: false,
            },
            timeouts: Timeouts {
                connect: Duration::from_secs(5),
                idle: Duration::from_secs(30),
                operation: Duration::from_secs(10),
            },
        }
    }

    async fn http(&self, name: &str, auth: HttpAuth) -> HttpClient {
        let n = self.lab.node(name).unwrap();
        let mut c = HttpConfig::new(name, format!("https://127.0.0.1:{}", n.port));
        c.tls = TlsMode::CaFile(self.dir.path().join("lab-ca.pem"));
        c.auth = auth;
        HttpClient::new(c).await.unwrap()
    }

    /// An iControl REST login to F5 node `name` (its answer) and a client carrying its token.
    async fn f5_login(&self, name: &str) -> (Value, HttpClient) {
        let login: Value = self
            .http(name, HttpAuth::None)
            .await
            .post_json(
                "/mgmt/shared/authn/login",
                &json!({"username": "admin", "password": "admin", "loginProviderName": "tmos"}),
            )
            .await
            .unwrap();
        let token = login["token"]["token"].as_str().unwrap().to_owned();
        let auth = HttpAuth::Header {
            name: "X-F5-Auth-Token".into(),
            value: Secret::new(token),
        };
        (login, self.http(name, auth).await)
    }
}

fn basic() -> HttpAuth {
    HttpAuth::Basic {
        username: "admin".into(),
        password: Secret::new("admin"),
    }
}

fn vid(n: i64) -> VlanId {
    VlanId::new(n).unwrap()
}

/// The plan: VLAN 10 `web`, `port` a trunk of 10 (or an access port of 10) with a description.
fn change_as(
    rules: &PlanRules,
    port: &str,
    observed: &netgw_drivers::driver::Observed,
    trunk: bool,
) -> netgw_models::plan::Plan {
    let mut v = Vlan::new(vid(10));
    v.name = Some("web".into());
    let mut l = Link::new(port);
    l.description = Some("uplink to spine".into());
    if trunk {
        l.mode = Some(LinkMode::Trunk);
        l.trunk_vlans = Some(VlanSet::from_ids([vid(10)]));
    } else {
        l.mode = Some(LinkMode::Access);
        l.access_vlan = Some(vid(10));
    }
    plan(
        &[v],
        &observed.vlans,
        Policy::Merge,
        &[l],
        &observed.links,
        Policy::Merge,
        rules,
    )
}

/// After the change of [`change_as`], a facts run carries it as automatic attributes
/// (`interfaces.PORT.switchport`, `vlans.10.ports`), exactly as the next `observe()` (the planner's
/// read, taken once) sees it.
async fn assert_layer2_facts(d: &mut dyn Driver, port: &str, mode: LinkMode) {
    let f = d.facts().await.unwrap();
    let sp = f.interfaces.get(port).and_then(|i| i.switchport.clone());
    let sp = sp.unwrap_or_else(|| panic!("{port}: no switchport facts in {:?}", f.interfaces));
    assert_eq!(sp.mode, Some(mode), "{sp:?}");
    match mode {
        LinkMode::Trunk => assert!(
            sp.trunk_vlans.as_ref().is_some_and(|t| t.contains(vid(10))),
            "{sp:?}"
        ),
        _ => assert_eq!(sp.access_vlan, Some(vid(10)), "{sp:?}"),
    }
    let v10 = &f.vlans[&10];
    assert_eq!(v10.name.as_deref(), Some("web"));
    assert!(v10.ports.iter().any(|p| p == port), "{v10:?}");
    let automatic = f.to_automatic();
    assert!(
        automatic["vlans"]["10"]["ports"]
            .as_array()
            .is_some_and(|a| a.contains(&json!(port)))
    );
    let obs = d.observe().await.unwrap();
    let l = obs.links.iter().find(|l| l.name == port).unwrap();
    assert_eq!(
        SwitchportFacts::from_link(l),
        Some(sp),
        "facts and plan agree"
    );
}

fn change(
    rules: &PlanRules,
    port: &str,
    observed: &netgw_drivers::driver::Observed,
) -> netgw_models::plan::Plan {
    change_as(rules, port, observed, true)
}

/// Structural comparison: the simulator's reply has the real sample's keys (recursively, looking at
/// the first entry of maps keyed by names) and the same JSON types.
fn same_shape(real: &Value, sim: &Value, path: &str, keyed_maps: &[&str]) {
    match (real, sim) {
        (Value::Object(r), Value::Object(s)) => {
            let last = path.rsplit('.').next().unwrap_or("");
            if keyed_maps.contains(&last) {
                if let (Some(rv), Some(sv)) = (r.values().next(), s.values().next()) {
                    same_shape(rv, sv, &format!("{path}.*"), keyed_maps);
                }
                return;
            }
            for (k, rv) in r {
                let sv = s
                    .get(k)
                    .unwrap_or_else(|| panic!("{path}.{k} missing in the simulator's reply"));
                same_shape(rv, sv, &format!("{path}.{k}"), keyed_maps);
            }
        }
        (Value::Array(r), Value::Array(s)) => {
            if let (Some(rv), Some(sv)) = (r.first(), s.first()) {
                same_shape(rv, sv, &format!("{path}[0]"), keyed_maps);
            }
        }
        (Value::Number(_), Value::Number(_))
        | (Value::String(_), Value::String(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, _) => {}
        (r, s) => panic!("{path}: real {r} vs simulated {s}"),
    }
}

fn real_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join("real").join(name)).unwrap())
        .unwrap()
}

#[tokio::test]
async fn eos_shapes_match_real_samples() {
    let env = start(FABRIC, &[]).await;
    let t = env.target("leaf1");
    let d = EosDriver::connect(&t).await.unwrap();
    let eapi = d.eapi();
    use netgw_drivers::eos::eapi::Format;
    let keyed = ["interfaces", "vlans", "lldpNeighbors", "switchports"];
    for (cmd, file) in [
        ("show version", "eos/show_version.json"),
        ("show hostname", "eos/show_hostname.json"),
        ("show vlan", "eos/show_vlan.json"),
        ("show interfaces", "eos/show_interfaces.json"),
        (
            "show lldp neighbors detail",
            "eos/show_lldp_neighbors__detail.json",
        ),
    ] {
        let whole = eapi.run(&[cmd.to_owned()], Format::JsonWhole).await;
        let sim = whole.unwrap().remove(0);
        let real = real_json(file);
        same_shape(&real, &sim, cmd, &keyed);
    }
    // The driver's own parsers, over the real sample and over the simulator's answer.
    use netgw_drivers::eos::facts;
    let sim_if =
        facts::parse_interfaces_facts(&eapi.run_one_json("show interfaces").await.unwrap());
    let real_if = facts::parse_interfaces_facts(&real_json("eos/show_interfaces.json"));
    assert!(!real_if.is_empty() && sim_if.contains_key("Ethernet1"));
    let sim_lldp = facts::parse_lldp_neighbors_detail(
        &eapi
            .run_one_json("show lldp neighbors detail")
            .await
            .unwrap(),
    );
    assert!(
        !facts::parse_lldp_neighbors_detail(&real_json("eos/show_lldp_neighbors__detail.json"))
            .is_empty()
    );
    let n = &sim_lldp["Ethernet1"][0];
    assert_eq!(
        (n.remote_system_name.as_deref(), n.remote_port.as_deref()),
        (Some("spine1"), Some("Ethernet1"))
    );
    let v = facts::parse_show_version(&eapi.run_one_json("show version").await.unwrap(), None);
    let r = facts::parse_show_version(&real_json("eos/show_version.json"), None);
    assert_eq!(format!("{:?}", v).is_empty(), format!("{:?}", r).is_empty());
}

#[tokio::test]
async fn eos_driver_converges_statefully() {
    let env = start(FABRIC, &[]).await;
    let t = env.target("leaf1");
    let mut d = EosDriver::connect(&t).await.unwrap();
    let caps = d.capabilities();
    assert!(caps.sessions && caps.confirmed_commit, "{caps:?}");
    let f = d.facts().await.unwrap();
    assert_eq!(f.hostname.as_deref(), Some("leaf1"));
    assert_eq!(f.vendor.as_deref(), Some("arista"));
    assert!(f.vlans.contains_key(&1));
    let before = d.observe().await.unwrap();
    // Access mode: an access -> trunk change with `add` lines keeps EOS' default allowed list (ALL),
    // on the simulator as on a real switch (reported to the driver's owners).
    let p = change_as(&d.plan_rules(), "Ethernet2", &before, false);
    assert!(!p.is_empty());
    let staged = d.stage(&p).await.unwrap();
    assert!(
        staged.diff.contains("+vlan 10") && staged.diff.contains("+   description uplink to spine"),
        "{}",
        staged.diff
    );
    // Staged only: nothing visible yet.
    assert!(
        !d.observe()
            .await
            .unwrap()
            .vlans
            .iter()
            .any(|v| v.id == vid(10))
    );
    d.commit(&CommitOptions {
        comment: "test".into(),
        confirm_timeout: Duration::from_secs(60),
    })
    .await
    .unwrap();
    d.confirm().await.unwrap();
    assert_layer2_facts(&mut d, "Ethernet2", LinkMode::Access).await;
    let after = d.observe().await.unwrap();
    let v10 = after.vlans.iter().find(|v| v.id == vid(10)).unwrap();
    assert_eq!(v10.name.as_deref(), Some("web"));
    let e2 = after.links.iter().find(|l| l.name == "Ethernet2").unwrap();
    assert_eq!(
        (e2.mode, e2.description.as_deref(), e2.access_vlan),
        (
            Some(LinkMode::Access),
            Some("uplink to spine"),
            Some(vid(10))
        )
    );
    // Converged: planning again changes nothing.
    assert!(change_as(&d.plan_rules(), "Ethernet2", &after, false).is_empty());
    let Some(netgw_labs::Sim::Eos(sim)) = env.lab.node("leaf1").map(|n| n.sim.clone()) else {
        panic!()
    };
    assert!(!sim.pending_timer(), "confirmed");
}

/// Two nodes of one kind joined by two links (`ports`: containerlab names on both ends).
fn pair(kind: &str, ports: [&str; 2]) -> String {
    format!(
        "name: lag\ntopology:\n  nodes:\n    dist1: {{kind: {kind}, type: l2}}\n    acc1: {{kind: {kind}, type: l2}}\n  links:\n    - endpoints: [\"dist1:{0}\", \"acc1:{0}\"]\n    - endpoints: [\"dist1:{1}\", \"acc1:{1}\"]\n",
        ports[0], ports[1]
    )
}

/// The whole plan of VLANs 10 and 20, a two-member LACP aggregate trunking them and an SVI with IPv4
/// and IPv6, against what `d` has now (the engine's `plan_node`, on the driver alone).
async fn lag_svi_plan(
    d: &mut dyn Driver,
    lag: &str,
    members: [&str; 2],
    address: &str,
) -> netgw_models::plan::Plan {
    use netgw_models::plan::l3::{L3Context, L3Interface, plan_l3};
    use netgw_models::plan::lag::{Lag, plan_lags};
    let vlans: Vec<Vlan> =
        serde_json::from_value(json!([{"id": 10, "name": "users"}, {"id": 20, "name": "voice"}]))
            .unwrap();
    let lags: Vec<Lag> = serde_json::from_value(json!([{"name": lag, "links": members,
        "lacp": "active", "mode": "trunk", "trunk_vlans": "10,20", "description": "uplink"}]))
    .unwrap();
    let l3: Vec<L3Interface> = serde_json::from_value(json!([{"name": "Vlan10",
        "ipv4": [format!("10.0.10.{address}/24")], "ipv6": [format!("2001:db8:10::{address}/64")]}])).unwrap();
    let observed = d.observe().await.unwrap();
    let rules = d.plan_rules();
    let mut p = plan(
        &vlans,
        &observed.vlans,
        Policy::Merge,
        &[],
        &observed.links,
        Policy::Merge,
        &rules,
    );
    let more = d.observe_lag_l3().await.unwrap();
    plan_lags(&mut p, &lags, &more.lags, Policy::Merge, &rules);
    let cx = L3Context {
        desired_vlans: &vlans,
        observed_vlans: &observed.vlans,
        observed_links: &observed.links,
    };
    plan_l3(&mut p, &l3, &more.l3, Policy::Merge, &cx);
    p
}

/// Converge [`lag_svi_plan`] on `d` and check it reads back equal, the second plan is empty and the
/// aggregate is up.
async fn converge_lag_svi(
    d: &mut dyn Driver,
    node: &str,
    lag: &str,
    members: [&str; 2],
    address: &str,
) {
    assert!(d.applies_lag_l3(), "{node}");
    let p = lag_svi_plan(d, lag, members, address).await;
    assert!(p.failures().next().is_none(), "{node}: {:?}", p.resources);
    let staged = d.stage(&p).await.unwrap();
    assert!(
        staged.diff.contains("channel-group 10 mode active"),
        "{}",
        staged.diff
    );
    d.commit(&CommitOptions {
        comment: "lag".into(),
        confirm_timeout: Duration::from_secs(60),
    })
    .await
    .unwrap();
    d.confirm().await.unwrap();
    let again = lag_svi_plan(d, lag, members, address).await;
    let left: Vec<_> = again
        .resources
        .iter()
        .filter(|r| r.action.is_some())
        .collect();
    assert!(again.is_empty(), "{node}: second run up to date: {left:?}");
    let more = d.observe_lag_l3().await.unwrap();
    let po = &more.lags[0];
    assert_eq!(
        (
            po.name.as_str(),
            po.members().len(),
            po.trunk_vlans.as_ref().map(|t| t.to_range_string())
        ),
        (lag, 2, Some("10,20".to_owned())),
        "{node}"
    );
    let svi = more.l3.iter().find(|i| i.name == "Vlan10").unwrap();
    assert_eq!(json!(svi.ipv4), json!([format!("10.0.10.{address}/24")]));
    assert_eq!(
        json!(svi.ipv6),
        json!([format!("2001:db8:10::{address}/64")])
    );
    let po_link = d
        .observe()
        .await
        .unwrap()
        .links
        .into_iter()
        .find(|l| l.name == lag);
    assert!(
        po_link.is_some_and(|l| l.description.as_deref() == Some("uplink")),
        "{node}"
    );
}

/// The aggregate's status as `d`'s facts give it.
async fn lag_status(d: &mut dyn Driver, lag: &str) -> Option<netgw_models::facts::OperStatus> {
    let f = d.facts().await.unwrap();
    f.interfaces.get(lag).and_then(|i| i.oper_status)
}

/// [`converge_lag_svi`] on both ends of a pair: the first end's aggregate stays down until the second
/// bundles too. (Read back over fresh sessions in [`both_up`]: the CLI drivers cache their reads.)
async fn converge_pair(drivers: [&mut dyn Driver; 2], lag: &str, members: [&str; 2]) {
    use netgw_models::facts::OperStatus;
    let [a, b] = drivers;
    converge_lag_svi(a, "dist1", lag, members, "1").await;
    assert_eq!(
        lag_status(a, lag).await,
        Some(OperStatus::Down),
        "the far end bundles nothing yet"
    );
    converge_lag_svi(b, "acc1", lag, members, "2").await;
}

/// Both ends' aggregates are up.
async fn both_up(drivers: [&mut dyn Driver; 2], lag: &str) {
    for (n, d) in ["dist1", "acc1"].into_iter().zip(drivers) {
        let status = lag_status(d, lag).await;
        assert_eq!(status, Some(netgw_models::facts::OperStatus::Up), "{n}");
    }
}

/// Both ends of a two-link pair bundle their links into aggregate 10 with LACP and route VLAN 10, on
/// EOS (sessions), IOS (archive revert timer) and NX-OS (checkpoints); the aggregate comes up once both
/// ends bundle.
#[tokio::test]
async fn eos_ios_nxos_converge_an_lacp_aggregate_and_an_svi() {
    let env = start(&pair("arista_ceos", ["eth1", "eth2"]), &[]).await;
    let mut a = EosDriver::connect(&env.target("dist1")).await.unwrap();
    let mut b = EosDriver::connect(&env.target("acc1")).await.unwrap();
    converge_pair(
        [&mut a, &mut b],
        "Port-Channel10",
        ["Ethernet1", "Ethernet2"],
    )
    .await;
    let mut a = EosDriver::connect(&env.target("dist1")).await.unwrap();
    let mut b = EosDriver::connect(&env.target("acc1")).await.unwrap();
    both_up([&mut a, &mut b], "Port-Channel10").await;
    let faults = [
        ("dist1", "archive-path", "flash:netgw"),
        ("acc1", "archive-path", "flash:netgw"),
    ];
    let env = start(&pair("cisco_iol", ["Ethernet0/1", "Ethernet0/2"]), &faults).await;
    let mut a = IosDriver::connect(&env.target("dist1")).await.unwrap();
    let mut b = IosDriver::connect(&env.target("acc1")).await.unwrap();
    converge_pair(
        [&mut a, &mut b],
        "Port-channel10",
        ["Ethernet0/1", "Ethernet0/2"],
    )
    .await;
    let mut a = IosDriver::connect(&env.target("dist1")).await.unwrap();
    let mut b = IosDriver::connect(&env.target("acc1")).await.unwrap();
    both_up([&mut a, &mut b], "Port-channel10").await;
    let env = start(&pair("cisco_n9kv", ["eth1", "eth2"]), &[]).await;
    let mut a = NxosDriver::connect(&env.target("dist1")).await.unwrap();
    let mut b = NxosDriver::connect(&env.target("acc1")).await.unwrap();
    converge_pair(
        [&mut a, &mut b],
        "port-channel10",
        ["Ethernet1/1", "Ethernet1/2"],
    )
    .await;
    let mut a = NxosDriver::connect(&env.target("dist1")).await.unwrap();
    let mut b = NxosDriver::connect(&env.target("acc1")).await.unwrap();
    both_up([&mut a, &mut b], "port-channel10").await;
}

/// A confirmed EOS change aborts the `netgw-` configuration sessions a killed gateway left pending
/// (stamped over an hour ago); an operator's session and a recent netgw one stay.
#[tokio::test]
async fn eos_confirm_aborts_abandoned_netgw_sessions() {
    let env = start(FABRIC, &[]).await;
    let sim = match env.lab.node("leaf1").map(|n| n.sim.clone()) {
        Some(netgw_labs::Sim::Eos(s)) => s,
        other => panic!("leaf1: not an EOS device: {other:?}"),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let recent = format!("netgw-{:x}-99-1", now - 60);
    let c = env.http("leaf1", basic()).await;
    for name in ["jeremy1", "netgw-5f5e0ff-1a2b-1", recent.as_str()] {
        let r: Value = c
            .post_json(
                "/command-api",
                &json!({"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"version": 1,
                        "cmds": [format!("configure session {name}"), "vlan 5"], "format": "json"}}),
            )
            .await
            .unwrap();
        assert!(r.get("result").is_some(), "{r}");
    }
    let mut d = EosDriver::connect(&env.target("leaf1")).await.unwrap();
    let before = d.observe().await.unwrap();
    let p = change_as(&d.plan_rules(), "Ethernet2", &before, false);
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions {
        comment: "test".into(),
        confirm_timeout: Duration::from_secs(60),
    })
    .await
    .unwrap();
    d.confirm().await.unwrap();
    assert_eq!(sim.pending_sessions(), ["jeremy1".to_owned(), recent]);
}

#[tokio::test]
async fn eos_commit_timer_rolls_back_when_not_confirmed() {
    let env = start(FABRIC, &[]).await;
    let mut d = EosDriver::connect(&env.target("leaf1")).await.unwrap();
    let before = d.observe().await.unwrap();
    d.stage(&change(&d.plan_rules(), "Ethernet2", &before))
        .await
        .unwrap();
    d.commit(&CommitOptions {
        comment: "t".into(),
        confirm_timeout: Duration::from_secs(1),
    })
    .await
    .unwrap();
    assert!(
        d.observe()
            .await
            .unwrap()
            .vlans
            .iter()
            .any(|v| v.id == vid(10)),
        "active during the timer"
    );
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let after = d.observe().await.unwrap();
    assert_eq!(
        after, before,
        "the commit timer expired: back to the pre-state"
    );
}

#[tokio::test]
async fn eos_errors_and_faults() {
    let env = start(
        FABRIC,
        &[
            ("spine1", "auth-fail", "true"),
            ("leaf1", "reset-at", "before-commit"),
        ],
    )
    .await;
    // Bad command: an eAPI command error naming the command.
    let d = EosDriver::connect(&env.target("leaf1")).await.unwrap();
    let e = d
        .eapi()
        .run_json(&["show vlan".into(), "show frobnication".into()])
        .await
        .unwrap_err();
    assert!(e.is_command_error(), "{e}");
    assert!(e.to_string().contains("show frobnication"), "{e}");
    // Authentication failure.
    let e = EosDriver::connect(&env.target("spine1"))
        .await
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("401") || e.to_string().to_lowercase().contains("auth"),
        "{e}"
    );
    // Connection reset instead of the commit; the device keeps its state.
    let mut d = EosDriver::connect(&env.target("leaf1")).await.unwrap();
    let before = d.observe().await.unwrap();
    d.stage(&change(&d.plan_rules(), "Ethernet2", &before))
        .await
        .unwrap();
    let e = d.commit(&CommitOptions::default()).await.unwrap_err();
    assert!(matches!(e, DriverError::Transport { .. }), "{e:?}");
    let d2 = EosDriver::connect(&env.target("leaf1")).await.unwrap();
    assert!(
        !d2.eapi().run_one_json("show vlan").await.unwrap()["vlans"]
            .as_object()
            .unwrap()
            .contains_key("10")
    );
}

#[tokio::test]
async fn eos_latency_fault_delays_replies() {
    let env = start(FABRIC, &[("leaf1", "latency-ms", "150")]).await;
    let d = EosDriver::connect(&env.target("leaf1")).await.unwrap();
    let t0 = std::time::Instant::now();
    d.eapi().run_one_json("show hostname").await.unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(150));
}

fn doc(path: &str) -> XmlElement {
    parse_document(&std::fs::read_to_string(fixtures().join("real").join(path)).unwrap()).unwrap()
}

/// Element names along the first-child path of each element, as a set (structure, not values).
fn element_names(el: &XmlElement, out: &mut BTreeSet<String>) {
    for c in el.elements() {
        out.insert(c.name.clone());
        element_names(c, out);
    }
}

#[tokio::test]
async fn junos_shapes_match_real_samples() {
    let env = start(FABRIC, &[]).await;
    let mut s = connect_ssh_with(&env.ssh_target("leaf2"), ClientOptions::default())
        .await
        .unwrap();
    assert_eq!(s.framing(), Framing::Chunked, "both sides said base:1.1");
    use netgw_drivers::junos::{facts, link, vlan};
    let sw = s.rpc_raw("<get-software-information/>").await.unwrap().root;
    let real_sw =
        facts::parse_software_information(&doc("junos/get-software-information.xml")).unwrap();
    let sim_sw = facts::parse_software_information(&sw).unwrap();
    assert!(real_sw.version.is_some() && sim_sw.version.as_deref() == Some("23.2R1.14"));
    assert_eq!(sim_sw.host_name.as_deref(), Some("leaf2"));
    let ch = s.rpc_raw("<get-chassis-inventory/>").await.unwrap().root;
    assert!(
        facts::parse_chassis_inventory(&doc("junos/get-chassis-inventory.xml"))
            .unwrap()
            .0
            .is_some()
    );
    assert!(facts::parse_chassis_inventory(&ch).unwrap().0.is_some());
    let ifs = s
        .rpc_raw("<get-interface-information/>")
        .await
        .unwrap()
        .root;
    let real_ifs = facts::parse_interface_information(&doc("junos/get-interface-information.xml"));
    let sim_ifs = facts::parse_interface_information(&ifs);
    assert!(!real_ifs.is_empty());
    let ge0 = &sim_ifs["ge-0/0/0"];
    assert!(
        ge0.mtu.is_some() && ge0.mac.is_some() && ge0.speed.is_some(),
        "{ge0:?}"
    );
    // Every element name the real reply uses for a physical interface's basics is there too.
    let (mut real_names, mut sim_names) = (BTreeSet::new(), BTreeSet::new());
    element_names(&doc("junos/get-interface-information.xml"), &mut real_names);
    element_names(&ifs, &mut sim_names);
    for n in [
        "physical-interface",
        "name",
        "admin-status",
        "oper-status",
        "mtu",
        "speed",
        "snmp-index",
        "current-physical-address",
        "logical-interface",
    ] {
        assert!(real_names.contains(n) && sim_names.contains(n), "{n}");
    }
    let lldp = s
        .rpc_raw("<get-lldp-neighbors-information/>")
        .await
        .unwrap()
        .root;
    assert!(
        !facts::parse_lldp_neighbors(&doc("junos/get-lldp-neighbors-information.xml")).is_empty()
    );
    let n = &facts::parse_lldp_neighbors(&lldp)["ge-0/0/0"][0];
    assert_eq!(n.remote_system_name.as_deref(), Some("spine1"));
    let vl = s.rpc_raw("<get-vlan-information/>").await.unwrap().root;
    assert!(!vlan::parse_vlan_information(&doc("junos/get-vlan-information.xml")).is_empty());
    assert_eq!(vlan::parse_vlan_information(&vl).len(), 1, "default VLAN");
    let terse = s
        .rpc_raw("<get-interface-information><terse/></get-interface-information>")
        .await
        .unwrap()
        .root;
    assert!(link::parse_interface_names(&terse).contains(&"ge-0/0/0".to_string()));
    // rpc-error on nonsense.
    let e = s.rpc_raw("<get-frobnication/>").await.unwrap_err();
    assert!(!e.rpc_errors().is_empty(), "{e}");
    s.close().await.unwrap();
}

#[tokio::test]
async fn junos_base10_framing_works() {
    let env = start(FABRIC, &[]).await;
    let opts = ClientOptions {
        base11: false,
        ..ClientOptions::default()
    };
    let mut s = connect_ssh_with(&env.ssh_target("leaf2"), opts)
        .await
        .unwrap();
    assert_eq!(s.framing(), Framing::EndOfMessage);
    let cfg = s.running_config(None).await.unwrap();
    assert!(cfg.contains("<host-name>leaf2</host-name>"), "{cfg}");
}

#[tokio::test]
async fn junos_driver_converges_statefully() {
    let env = start(FABRIC, &[]).await;
    let mut d = JunosDriver::connect(&env.target("leaf2")).await.unwrap();
    let caps = d.capabilities();
    assert!(
        caps.candidate && caps.confirmed_commit && caps.rollback && caps.device_diff,
        "{caps:?}"
    );
    let f = d.facts().await.unwrap();
    assert_eq!(f.hostname.as_deref(), Some("leaf2"));
    let before = d.observe().await.unwrap();
    let p = change(&d.plan_rules(), "ge-0/0/1", &before);
    let staged = d.stage(&p).await.unwrap();
    assert!(
        staged.diff.contains("[edit vlans]") && staged.diff.contains("vlan-id 10"),
        "{}",
        staged.diff
    );
    d.commit(&CommitOptions {
        comment: "netgw test".into(),
        confirm_timeout: Duration::from_secs(60),
    })
    .await
    .unwrap();
    d.confirm().await.unwrap();
    assert_layer2_facts(&mut d, "ge-0/0/1", LinkMode::Trunk).await;
    let after = d.observe().await.unwrap();
    assert!(
        after
            .vlans
            .iter()
            .any(|v| v.id == vid(10) && v.name.as_deref() == Some("web")),
        "{:?}",
        after.vlans
    );
    let l = after.links.iter().find(|l| l.name == "ge-0/0/1").unwrap();
    assert_eq!(
        (l.mode, l.description.as_deref()),
        (Some(LinkMode::Trunk), Some("uplink to spine")),
        "{l:?}"
    );
    assert!(
        change(&d.plan_rules(), "ge-0/0/1", &after).is_empty(),
        "converged"
    );
    let Some(netgw_labs::Sim::Junos(sim)) = env.lab.node("leaf2").map(|n| n.sim.clone()) else {
        panic!()
    };
    assert!(!sim.pending_confirm());
    // The driver's rollback of an unconfirmed commit (cancel-commit).
    let mut v = Vlan::new(vid(20));
    v.name = Some("db".into());
    let p = plan(
        &[v],
        &after.vlans,
        Policy::Merge,
        &[],
        &after.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    assert!(sim.pending_confirm());
    d.rollback().await.unwrap();
    assert!(
        !d.observe()
            .await
            .unwrap()
            .vlans
            .iter()
            .any(|v| v.id == vid(20))
    );
    d.close().await.unwrap();
}

#[tokio::test]
async fn junos_confirmed_commit_rolls_back_after_its_timeout() {
    let env = start(FABRIC, &[]).await;
    let mut s = connect_ssh_with(&env.ssh_target("leaf2"), ClientOptions::default())
        .await
        .unwrap();
    let before = s.running_config(None).await.unwrap();
    s.lock(Datastore::Candidate).await.unwrap();
    s.rpc_raw("<edit-config><target><candidate/></target><config><configuration><vlans><vlan><name>tmp</name><vlan-id>30</vlan-id></vlan></vlans></configuration></config></edit-config>")
        .await
        .unwrap();
    s.confirmed_commit(Some(1), None).await.unwrap();
    assert!(
        s.running_config(None)
            .await
            .unwrap()
            .contains("<name>tmp</name>")
    );
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(
        s.running_config(None).await.unwrap(),
        before,
        "rolled back by the timer"
    );
    // Invalid input is an rpc-error, and commit validation speaks Junos.
    s.rpc_raw("<edit-config><target><candidate/></target><config><configuration><interfaces><interface><name>ge-0/0/2</name><unit><name>0</name><family><ethernet-switching><vlan><members>99</members></vlan></ethernet-switching></family></unit></interface></interfaces></configuration></config></edit-config>")
        .await
        .unwrap();
    let e = s.commit().await.unwrap_err();
    assert!(
        e.to_string()
            .contains("No vlan matches vlan tag 99 for interface ge-0/0/2.0"),
        "{e}"
    );
    let e = s.rpc_raw("<edit-config><target><running/></target><config><configuration/></config></edit-config>").await.unwrap_err();
    assert!(!e.rpc_errors().is_empty());
    s.discard_changes().await.unwrap();
    s.unlock(Datastore::Candidate).await.unwrap();
}

#[tokio::test]
async fn junos_faults() {
    let env = start(
        FABRIC,
        &[
            ("leaf2", "reject-commit", "commit blocked by policy"),
            ("spine1", "latency-ms", "0"),
        ],
    )
    .await;
    let mut d = JunosDriver::connect(&env.target("leaf2")).await.unwrap();
    let before = d.observe().await.unwrap();
    d.stage(&change(&d.plan_rules(), "ge-0/0/1", &before))
        .await
        .unwrap();
    let e = d.commit(&CommitOptions::default()).await.unwrap_err();
    assert!(
        matches!(e, DriverError::Rejected { .. })
            && e.to_string().contains("commit blocked by policy"),
        "{e:?}"
    );
    // Auth failure and reset at the verify step.
    let env = start(FABRIC, &[("leaf2", "auth-fail", "true")]).await;
    assert!(JunosDriver::connect(&env.target("leaf2")).await.is_err());
    let env = start(FABRIC, &[("leaf2", "reset-at", "verify")]).await;
    let mut d = JunosDriver::connect(&env.target("leaf2")).await.unwrap();
    let before = d.observe().await.unwrap();
    d.stage(&change(&d.plan_rules(), "ge-0/0/1", &before))
        .await
        .unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    assert!(
        d.observe().await.is_err(),
        "the session is reset at the first read after the commit"
    );
}

#[tokio::test]
async fn ios_cli_is_stateful_and_shaped_like_ios() {
    let env = start(FABRIC, &[]).await;
    let ssh = SshSession::connect(&env.ssh_target("acc1")).await.unwrap();
    let mut sh = ssh
        .shell(CliPlatform::get(PlatformKind::Ios))
        .await
        .unwrap();
    sh.command("disable").await.unwrap();
    sh.enable(Some(&Secret::new("admin"))).await.unwrap();
    let v = sh.command("show version").await.unwrap();
    assert!(
        v.contains("Cisco IOS Software") && v.contains("acc1 uptime is"),
        "{v}"
    );
    sh.config(&[
        "vlan 10",
        "name web",
        "exit",
        "interface Ethernet0/2",
        "description to leaf",
        "switchport mode access",
        "switchport access vlan 10",
    ])
    .await
    .unwrap();
    let vb = sh.command("show vlan brief").await.unwrap();
    let real =
        std::fs::read_to_string(fixtures().join("real/ios/cisco_ios_show_vlan.raw")).unwrap();
    assert_eq!(
        vb.lines()
            .find(|l| l.starts_with("VLAN"))
            .unwrap()
            .trim_end(),
        real.lines().next().unwrap().trim_end(),
        "same header"
    );
    assert!(
        vb.lines()
            .any(|l| l.starts_with("10   web") && l.contains("Et0/2")),
        "{vb}"
    );
    let sp = sh.command("show interfaces switchport").await.unwrap();
    assert!(
        sp.contains("Name: Et0/2\nSwitchport: Enabled\nAdministrative Mode: static access")
            && sp.contains("Access Mode VLAN: 10 (web)"),
        "{sp}"
    );
    let real_sp = std::fs::read_to_string(
        fixtures().join("real/ios/cisco_ios_show_interfaces_switchport.raw"),
    )
    .unwrap();
    for key in [
        "Name:",
        "Switchport:",
        "Administrative Mode:",
        "Operational Mode:",
        "Administrative Trunking Encapsulation:",
        "Access Mode VLAN:",
        "Trunking Native Mode VLAN:",
        "Trunking VLANs Enabled:",
    ] {
        assert!(real_sp.contains(key) && sp.contains(key), "{key}");
    }
    // IOL L2 is ISL-capable: a port is `negotiate` and refuses trunk mode until dot1q is set.
    assert!(
        sp.contains("Administrative Trunking Encapsulation: negotiate"),
        "{sp}"
    );
    let e = sh
        .config(&["interface Ethernet0/3", "switchport mode trunk"])
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("Command rejected: An interface whose trunk encapsulation is \"Auto\" can not be configured to \"trunk\" mode."),
        "{e}"
    );
    let rc = sh
        .command("show running-config interface Ethernet0/2")
        .await
        .unwrap();
    assert!(rc.contains("interface Ethernet0/2\n description to leaf\n switchport mode access\n switchport access vlan 10"), "{rc}");
    let e = sh.command("show frobnication").await.unwrap_err();
    assert!(
        e.to_string()
            .contains("% Invalid input detected at '^' marker."),
        "{e}"
    );
    sh.close().await.unwrap();
}

/// IOS write path through the real driver on the ISL-capable IOL L2 simulator: an access port becomes a
/// trunk with `switchport trunk encapsulation dot1q` first (learnt from `show interfaces switchport`), and
/// a rollback takes the encapsulation away again after the port has left trunk mode: exactly the
/// state before.
#[tokio::test]
async fn ios_driver_sets_trunk_encapsulation_and_rolls_it_back() {
    let env = start(FABRIC, &[]).await;
    let mut d = IosDriver::connect(&env.target("acc1")).await.unwrap();
    let pristine = nx_state(&env, "acc1");
    let before = d.observe().await.unwrap();
    let p = change_as(&d.plan_rules(), "Ethernet0/2", &before, true);
    let staged = d.stage(&p).await.unwrap();
    let at = |l: &str| staged.rendered.iter().position(|r| r == l);
    assert!(
        at("switchport trunk encapsulation dot1q").unwrap() < at("switchport mode trunk").unwrap(),
        "{:?}",
        staged.rendered
    );
    d.commit(&nx_commit_options()).await.unwrap();
    d.confirm().await.unwrap();
    assert_layer2_facts(&mut d, "Ethernet0/2", LinkMode::Trunk).await;
    let st = nx_state(&env, "acc1");
    let port = st.iface("Ethernet0/2").unwrap();
    assert_eq!(
        (port.mode, port.trunk_encapsulation.as_deref()),
        (netgw_labs::sim::state::Mode::Trunk, Some("dot1q"))
    );
    let after = d.observe().await.unwrap();
    assert!(
        change_as(&d.plan_rules(), "Ethernet0/2", &after, true).is_empty(),
        "converged"
    );
    // A rollback of a new trunk (access -> trunk on another port) restores the port exactly,
    // encapsulation included.
    let converged = nx_state(&env, "acc1");
    let p = change_as(&d.plan_rules(), "Ethernet0/3", &after, true);
    let staged = d.stage(&p).await.unwrap();
    assert!(
        staged
            .rendered
            .contains(&"switchport trunk encapsulation dot1q".to_owned())
    );
    d.commit(&nx_commit_options()).await.unwrap();
    assert_ne!(nx_state(&env, "acc1"), converged);
    d.rollback().await.unwrap();
    assert_eq!(nx_state(&env, "acc1"), converged, "rolled back exactly");
    assert_ne!(converged, pristine);
    d.close().await.unwrap();
}

/// A VTP server (how the simulated IOL starts) refuses an extended VLAN: the commit fails naming
/// VTP's refusal, not a later verification, and the device is left as it was.
#[tokio::test]
async fn ios_vtp_refusal_fails_the_commit_clearly() {
    let env = start(FABRIC, &[]).await;
    let mut d = IosDriver::connect(&env.target("acc1")).await.unwrap();
    let pristine = nx_state(&env, "acc1");
    let before = d.observe().await.unwrap();
    let mut v = Vlan::new(vid(3000));
    v.name = Some("big".into());
    let p = plan(
        &[v],
        &before.vlans,
        Policy::Merge,
        &[],
        &before.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap();
    let e = d
        .commit(&nx_commit_options())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Extended VLAN(s) not allowed in current VTP mode"),
        "{e}"
    );
    assert_eq!(nx_state(&env, "acc1"), pristine);
    d.close().await.unwrap();
}

#[tokio::test]
async fn nxos_json_outputs() {
    let env = start(FABRIC, &[]).await;
    let ssh = SshSession::connect(&env.ssh_target("nx1")).await.unwrap();
    let mut sh = ssh
        .shell(CliPlatform::get(PlatformKind::Nxos))
        .await
        .unwrap();
    sh.config(&["vlan 20", "name app"]).await.unwrap();
    let v: Value =
        serde_json::from_str(&sh.command("show vlan brief | json").await.unwrap()).unwrap();
    let rows = v["TABLE_vlanbriefxbrief"]["ROW_vlanbriefxbrief"]
        .as_array()
        .unwrap();
    assert!(
        rows.iter()
            .any(|r| r["vlanshowbr-vlanid"] == "20" && r["vlanshowbr-vlanname"] == "app")
    );
    let i: Value =
        serde_json::from_str(&sh.command("show interface | json").await.unwrap()).unwrap();
    assert_eq!(
        i["TABLE_interface"]["ROW_interface"][0]["interface"],
        "Ethernet1/1"
    );
    // Answered as NX-OS does, so the driver stays on `| json` (one inventory read, not two).
    let inv: Value =
        serde_json::from_str(&sh.command("show inventory | json").await.unwrap()).unwrap();
    assert_eq!(
        inv["TABLE_inv"]["ROW_inv"][0]["productid"], "N9K-C9300v",
        "{inv}"
    );
}

/// The NX-OS simulator behind `name`, and what it holds (read from the simulator, not the driver):
/// VLANs and every interface's configuration.
fn nx_sim(env: &Env, name: &str) -> std::sync::Arc<netgw_labs::sim::cli::CliSim> {
    match env.lab.node(name).map(|n| n.sim.clone()) {
        Some(netgw_labs::Sim::Cli(c)) => c,
        other => panic!("{name}: not a CLI device: {other:?}"),
    }
}

fn nx_state(env: &Env, name: &str) -> netgw_labs::sim::state::DeviceState {
    env.lab.node(name).unwrap().device.state().clone()
}

fn nx_commit_options() -> CommitOptions {
    CommitOptions {
        comment: "test".into(),
        confirm_timeout: Duration::from_secs(60),
    }
}

/// NX-OS write path through the real driver: checkpoint, lines, confirm deletes the checkpoint; a
/// rollback puts the checkpoint's configuration back exactly.
#[tokio::test]
async fn nxos_driver_converges_and_rolls_back_with_checkpoints() {
    let env = start(FABRIC, &[]).await;
    let sim = nx_sim(&env, "nx1");
    let mut d = NxosDriver::connect(&env.target("nx1")).await.unwrap();
    assert!(d.capabilities().rollback);
    let f = d.facts().await.unwrap();
    assert_eq!(f.hostname.as_deref(), Some("nx1"));
    let pristine = nx_state(&env, "nx1");
    let before = d.observe().await.unwrap();
    let p = change_as(&d.plan_rules(), "Ethernet1/2", &before, false);
    let staged = d.stage(&p).await.unwrap();
    assert!(staged.diff.contains("vlan 10"), "{}", staged.diff);
    assert_eq!(nx_state(&env, "nx1"), pristine, "staging sends nothing");
    d.commit(&nx_commit_options()).await.unwrap();
    let cps = sim.checkpoints();
    assert!(
        cps.len() == 1 && cps[0].starts_with("netgw-"),
        "a commit holds its checkpoint until confirmed: {cps:?}"
    );
    d.confirm().await.unwrap();
    assert_layer2_facts(&mut d, "Ethernet1/2", LinkMode::Access).await;
    assert!(
        sim.checkpoints().is_empty(),
        "confirm deletes the checkpoint"
    );
    // Read back from the simulator itself.
    let st = nx_state(&env, "nx1");
    assert_eq!(st.vlans.get(&10).map(String::as_str), Some("web"));
    let e2 = st.iface("Ethernet1/2").unwrap();
    assert_eq!(
        (e2.description.as_str(), e2.mode, e2.access_vlan),
        ("uplink to spine", netgw_labs::sim::state::Mode::Access, 10)
    );
    let after = d.observe().await.unwrap();
    assert!(
        change_as(&d.plan_rules(), "Ethernet1/2", &after, false).is_empty(),
        "converged"
    );

    // A second change, committed then rolled back: exactly the state after the first one.
    let converged = nx_state(&env, "nx1");
    let mut v = Vlan::new(vid(20));
    v.name = Some("db".into());
    let mut l = Link::new("Ethernet1/3");
    l.mode = Some(LinkMode::Trunk);
    l.trunk_vlans = Some(VlanSet::from_ids([vid(10), vid(20)]));
    l.enabled = Some(false);
    let p = plan(
        &[v],
        &after.vlans,
        Policy::Merge,
        &[l],
        &after.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap();
    d.commit(&nx_commit_options()).await.unwrap();
    assert_ne!(nx_state(&env, "nx1"), converged);
    d.rollback().await.unwrap();
    assert_eq!(nx_state(&env, "nx1"), converged, "rolled back exactly");
    assert!(sim.checkpoints().is_empty());
    d.close().await.unwrap();
}

/// A confirmed NX-OS change also deletes the `netgw-` checkpoints a killed gateway left behind (older
/// than an hour by the time in their name); an operator's checkpoint and a recent netgw one stay.
#[tokio::test]
async fn nxos_confirm_deletes_abandoned_netgw_checkpoints() {
    let env = start(FABRIC, &[]).await;
    let sim = nx_sim(&env, "nx1");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let recent = format!("netgw-{:x}-99-1", now - 60);
    let ssh = SshSession::connect(&env.ssh_target("nx1")).await.unwrap();
    let mut sh = ssh
        .shell(CliPlatform::get(PlatformKind::Nxos))
        .await
        .unwrap();
    for name in ["before-upgrade", "netgw-5f5e0ff-1a2b-1", recent.as_str()] {
        sh.command(&format!("checkpoint {name}")).await.unwrap();
    }
    sh.close().await.unwrap();
    let mut d = NxosDriver::connect(&env.target("nx1")).await.unwrap();
    let before = d.observe().await.unwrap();
    let p = change_as(&d.plan_rules(), "Ethernet1/2", &before, false);
    d.stage(&p).await.unwrap();
    d.commit(&nx_commit_options()).await.unwrap();
    assert_eq!(sim.checkpoints().len(), 4, "{:?}", sim.checkpoints());
    d.confirm().await.unwrap();
    assert_eq!(sim.checkpoints(), ["before-upgrade".to_owned(), recent]);
    d.close().await.unwrap();
}

/// A refused line and a session lost at each step of the NX-OS commit: the device is put back to the
/// checkpoint (over a new session when the old one died) and the error says so.
#[tokio::test]
async fn nxos_failed_commits_roll_back_to_the_checkpoint() {
    for (fault, value, want) in [
        (
            "reject-commit",
            "change window closed",
            "change window closed",
        ),
        ("reset-at", "before-commit", "rolled back to checkpoint"),
        ("reset-at", "after-commit", "rolled back to checkpoint"),
    ] {
        let env = start(FABRIC, &[("nx1", fault, value)]).await;
        let sim = nx_sim(&env, "nx1");
        let mut d = NxosDriver::connect(&env.target("nx1")).await.unwrap();
        let pristine = nx_state(&env, "nx1");
        let before = d.observe().await.unwrap();
        let p = change_as(&d.plan_rules(), "Ethernet1/2", &before, true);
        d.stage(&p).await.unwrap();
        let e = d.commit(&nx_commit_options()).await.unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(want) && text.contains("rolled back to checkpoint netgw-"),
            "{fault}={value}: {text}"
        );
        assert_eq!(
            nx_state(&env, "nx1"),
            pristine,
            "{fault}={value}: not restored"
        );
        assert!(
            sim.checkpoints().is_empty(),
            "{fault}={value}: {:?}",
            sim.checkpoints()
        );
        // Nothing left pending: the engine's rollback after a failed commit is a no-op.
        d.rollback().await.unwrap();
    }
}

#[tokio::test]
async fn f5_rest_tokens_vlans_transactions() {
    let env = start(FABRIC, &[]).await;
    let (login, c) = env.f5_login("lb1").await;
    same_shape(&real_json("f5/authn_login.json"), &login, "login", &[]);
    let v: Value = c.get_json("/mgmt/tm/sys/version").await.unwrap();
    same_shape(
        &real_json("f5/sys_version.json"),
        &v,
        "version",
        &["entries"],
    );
    let ifs: Value = c.get_json("/mgmt/tm/net/interface").await.unwrap();
    same_shape(&real_json("f5/net_interface.json"), &ifs, "interfaces", &[]);
    let di: Value = c
        .get_json("/mgmt/shared/identified-devices/config/device-info")
        .await
        .unwrap();
    same_shape(&real_json("f5/device_info.json"), &di, "device-info", &[]);
    assert_eq!(di["hostname"], "lb1");
    // A transaction: queued, then applied at once.
    let tx: Value = c
        .post_json("/mgmt/tm/transaction", &json!({}))
        .await
        .unwrap();
    let id = tx["transId"].as_u64().unwrap();
    let r = post_in_transaction(&env, &login["token"]["token"], id).await;
    assert_eq!(r["evalOrder"], 1);
    let before: Value = c.get_json("/mgmt/tm/net/vlan").await.unwrap();
    assert_eq!(
        before["items"].as_array().unwrap().len(),
        0,
        "nothing applied before VALIDATING"
    );
    let done: Value = c
        .patch_json(
            &format!("/mgmt/tm/transaction/{id}"),
            &json!({"state": "VALIDATING"}),
        )
        .await
        .unwrap();
    assert_eq!(done["state"], "COMPLETED");
    let after: Value = c.get_json("/mgmt/tm/net/vlan").await.unwrap();
    same_shape(&real_json("f5/net_vlan.json"), &after, "vlans", &[]);
    assert_eq!(after["items"][0]["tag"], 10);
    let members: Value = c
        .get_json("/mgmt/tm/net/vlan/~Common~web/interfaces")
        .await
        .unwrap();
    assert_eq!(members["items"][0]["name"], "1.1");
    let e = c
        .get_json::<Value>("/mgmt/tm/net/vlan/~Common~nope")
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(404));
    let e = env
        .http("lb1", HttpAuth::None)
        .await
        .get_json::<Value>("/mgmt/tm/net/vlan")
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401));
}

/// POST a VLAN inside transaction `id` (the coordination header is per request, which netgw's
/// HttpClient does not send; reqwest does it here).
async fn post_in_transaction(env: &Env, token: &Value, id: u64) -> Value {
    let ca = reqwest::Certificate::from_pem(env.lab.tls.ca_pem.as_bytes()).unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(ca)
        .build()
        .unwrap();
    let body = json!({"name": "web", "tag": 10, "interfaces": [{"name": "1.1", "tagged": false}]});
    client
        .post(format!(
            "https://127.0.0.1:{}/mgmt/tm/net/vlan",
            env.lab.node("lb1").unwrap().port
        ))
        .header("X-F5-Auth-Token", token.as_str().unwrap())
        .header("X-F5-REST-Coordination-Id", id.to_string())
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn many_devices_start_and_answer() {
    let topo = Topology::parse(
        "name: s\ntopology: {nodes: {sw: {kind: arista_ceos}, j: {kind: juniper_vjunosswitch}}}",
    )
    .unwrap();
    let lab = Lab::start(
        &topo,
        LabOptions {
            count: 300,
            eapi_https: false,
            ..LabOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(lab.nodes.len(), 600);
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inv.yml");
    lab.write_inventory(&inv).unwrap();
    let v: Value = serde_norway::from_str(&std::fs::read_to_string(&inv).unwrap()).unwrap();
    assert_eq!(v["hosts"].as_object().unwrap().len(), 600);
    assert_eq!(v["hosts"]["sw-300"]["platform"], "eos");
    assert_eq!(
        v["hosts"]["j-1"]["connection_options"]["netconf"]["port"],
        lab.node("j-1").unwrap().port
    );
    let n = lab.node("sw-150").unwrap();
    let mut c = HttpConfig::new("sw-150", format!("http://127.0.0.1:{}", n.port));
    c.auth = basic();
    let client = HttpClient::new(c).await.unwrap();
    let r: Value = client.post_json("/command-api", &json!({"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1, "cmds": ["show hostname"]}, "id": "1"})).await.unwrap();
    assert_eq!(r["result"][0]["hostname"], "sw-150");
}

/// A real PTY echoes each character as it is typed; scrapli waits for the echo of a command before it
/// sends the return (found by scripts/bench.sh: scrapli timed out on every device).
#[tokio::test]
async fn ios_cli_echoes_input_before_the_return() {
    use russh::ChannelMsg;
    use russh::client;
    struct AnyKey;
    impl client::Handler for AnyKey {
        type Error = russh::Error;
        async fn check_server_key(
            &mut self,
            _key: &russh::keys::PublicKeyOrCertificate,
        ) -> Result<bool, Self::Error> {
            Ok(true)
        }
    }
    async fn until(ch: &mut russh::Channel<client::Msg>, want: &str) -> String {
        let mut got = String::new();
        let read = async {
            while !got.contains(want) {
                match ch.wait().await {
                    Some(ChannelMsg::Data { data }) => {
                        got.push_str(&String::from_utf8_lossy(&data))
                    }
                    Some(ChannelMsg::Eof | ChannelMsg::Close) | None => break,
                    _ => {}
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(5), read)
            .await
            .unwrap_or_else(|_| panic!("no {want:?} within 5 s; got {got:?}"));
        got
    }
    let env = start(FABRIC, &[]).await;
    let port = env.lab.node("acc1").unwrap().port;
    let mut h = client::connect(Default::default(), ("127.0.0.1", port), AnyKey)
        .await
        .unwrap();
    assert!(
        h.authenticate_password("admin", "admin")
            .await
            .unwrap()
            .success()
    );
    let mut ch = h.channel_open_session().await.unwrap();
    ch.request_pty(true, "vt100", 511, 200, 0, 0, &[])
        .await
        .unwrap();
    ch.request_shell(true).await.unwrap();
    until(&mut ch, "acc1#").await;
    ch.data(&b"show ver"[..]).await.unwrap();
    assert_eq!(until(&mut ch, "show ver").await, "show ver");
    ch.data(&b"sion"[..]).await.unwrap();
    assert_eq!(until(&mut ch, "sion").await, "sion");
    ch.data(&b"\n"[..]).await.unwrap();
    let out = until(&mut ch, "\r\nacc1#").await;
    // The echoed part is not repeated: the reply starts with the line end, then the output.
    assert!(out.starts_with("\r\nCisco IOS Software"), "{out:?}");
    // Typed secrets are never echoed.
    ch.data(&b"disable\nenable\n"[..]).await.unwrap();
    until(&mut ch, "Password: ").await;
    ch.data(&b"adm"[..]).await.unwrap();
    ch.data(&b"in\n"[..]).await.unwrap();
    let out = until(&mut ch, "acc1#").await;
    assert!(!out.contains("adm"), "{out:?}");
}

/// ntc-templates (TextFSM) on `text`, as Netmiko's `use_textfsm` parses it: the rows as JSON. The
/// peer is installed by scripts/peers/textfsm.sh; without it the test fails and says so.
fn ntc_parse(platform: &str, command: &str, text: &str) -> Vec<Value> {
    use std::io::Write;
    let root = netgw_drivers::testing::repo_root();
    let python = root.join(".peers/venv-textfsm/bin/python");
    assert!(
        python.exists(),
        "TextFSM/ntc-templates are not installed ({}): run scripts/peers/textfsm.sh install (scripts/test.sh does)",
        python.display()
    );
    let mut child = std::process::Command::new(python)
        .arg(root.join("scripts/peers/textfsm_parse.py"))
        .args([platform, command])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "ntc-templates could not parse `{command}` ({platform}): {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn field(row: &Value, names: &[&str]) -> String {
    names
        .iter()
        .find_map(|n| match &row[*n] {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Array(a) if !a.is_empty() => Some(
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

/// `Et0/1` / `Eth1/1` / `Ethernet0/1` name the same port (a template that has no local interface
/// column matches any).
fn same_port(got: &str, long: &str) -> bool {
    let digits = |s: &str| {
        s.trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .to_owned()
    };
    got.is_empty()
        || (long.starts_with(&got[..got.find(|c: char| c.is_ascii_digit()).unwrap_or(0)])
            && digits(got) == digits(long))
}

/// What ntc-templates read from one simulated output disagrees with the simulated device: the list.
fn ntc_disagreements(
    cmd: &str,
    rows: &[Value],
    st: &netgw_labs::sim::state::DeviceState,
    port: &str,
    short: &str,
) -> Vec<String> {
    let mut bad = Vec::new();
    if rows.is_empty() {
        return vec![format!("`{cmd}`: no rows")];
    }
    let mut want = |what: &str, ok: bool| {
        if !ok {
            bad.push(format!("`{cmd}`: {what}: {rows:?}"));
        }
    };
    let row_of = |names: &[&str], key: &str| {
        rows.iter()
            .find(|r| {
                let n = field(r, names);
                n == key || n == short
            })
            .cloned()
            .unwrap_or(Value::Null)
    };
    match cmd {
        "show version" => want("hostname", field(&rows[0], &["hostname"]) == st.hostname),
        "show vlan brief" | "show vlan" => {
            // IOS prints its four reserved 1002-1005 VLANs, which the simulated state leaves implicit.
            let got: BTreeSet<(String, String)> = rows
                .iter()
                .map(|r| (field(r, &["vlan_id"]), field(r, &["vlan_name", "name"])))
                .filter(|(id, _)| !matches!(id.as_str(), "1002" | "1003" | "1004" | "1005"))
                .collect();
            let sim: BTreeSet<(String, String)> = st
                .vlans
                .iter()
                .map(|(i, n)| (i.to_string(), n.clone()))
                .collect();
            want("the VLANs (id, name)", got == sim);
            let ten = rows.iter().find(|r| field(r, &["vlan_id"]) == "10");
            want(
                "VLAN 10's ports",
                ten.is_some_and(|r| field(r, &["interfaces"]).split(',').any(|p| p == short)),
            );
        }
        "show interfaces" | "show interface" => {
            for (name, i) in &st.interfaces {
                let r = row_of(&["interface"], name);
                want(&format!("{name} listed"), !r.is_null());
                want(
                    &format!("{name} description"),
                    field(&r, &["description"]) == i.description,
                );
            }
        }
        "show interfaces switchport" | "show interface switchport" => {
            let r = row_of(&["interface"], port);
            want(
                &format!("{port} access mode"),
                field(&r, &["admin_mode", "mode"]).contains("access"),
            );
            want(
                &format!("{port} access VLAN"),
                field(&r, &["access_vlan"]) == "10",
            );
        }
        "show lldp neighbors detail" | "show cdp neighbors detail" => {
            for n in &st.neighbors {
                want(
                    &format!("neighbour {} on {}", n.system_name, n.local_port),
                    rows.iter().any(|r| {
                        field(r, &["neighbor_name", "neighbor", "destination_host"])
                            .starts_with(&n.system_name)
                            && same_port(&field(r, &["local_interface"]), &n.local_port)
                    }),
                );
            }
        }
        _ => {}
    }
    bad
}

/// The simulator's IOS and NX-OS text, for every command the drivers send that ntc-templates has a
/// template for, parsed by TextFSM + ntc-templates (the public parsers Netmiko, NAPALM and Nornir use)
/// must give the simulated device's state: hostname, VLANs and their ports, interfaces and
/// descriptions, the switchport of a configured port, LLDP/CDP neighbours.
#[tokio::test]
async fn ios_and_nxos_text_parses_with_ntc_templates_to_the_simulated_state() {
    let env = start(FABRIC, &[]).await;
    let mut bad = Vec::new();
    for (node, platform, kind, port, short, cmds) in [
        (
            "acc1",
            "cisco_ios",
            PlatformKind::Ios,
            "Ethernet0/2",
            "Et0/2",
            &[
                "show version",
                "show vlan brief",
                "show interfaces",
                "show interfaces switchport",
                "show lldp neighbors detail",
                "show cdp neighbors detail",
            ][..],
        ),
        (
            "nx1",
            "cisco_nxos",
            PlatformKind::Nxos,
            "Ethernet1/2",
            "Eth1/2",
            &[
                "show version",
                "show vlan brief",
                "show interface",
                "show interface switchport",
                "show lldp neighbors detail",
            ][..],
        ),
    ] {
        let (_ssh, mut sh) = enabled_shell(&env, node, kind).await;
        let iface = format!("interface {port}");
        sh.config(&[
            "vlan 10",
            "name web",
            "exit",
            iface.as_str(),
            "description to leaf",
            "switchport mode access",
            "switchport access vlan 10",
        ])
        .await
        .unwrap();
        let st = env.lab.node(node).unwrap().device.state().clone();
        for cmd in cmds {
            let out = match sh.command(cmd).await {
                Ok(out) => out,
                // The simulator prints no CDP (IOL, like an IOS device with CDP off, refuses the
                // table; the drivers read it as optional). Its LLDP table must parse.
                Err(e) if cmd.starts_with("show cdp") => {
                    eprintln!("{node}: {e}");
                    continue;
                }
                Err(e) => panic!("{node}: {e}"),
            };
            let rows = ntc_parse(platform, cmd, &out);
            bad.extend(
                ntc_disagreements(cmd, &rows, &st, port, short)
                    .into_iter()
                    .map(|b| format!("{node}: {b}")),
            );
        }
        sh.close().await.unwrap();
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// An enabled CLI shell on `node`, with the SSH session that carries it.
async fn enabled_shell(env: &Env, node: &str, kind: PlatformKind) -> (SshSession, CliShell) {
    let ssh = SshSession::connect(&env.ssh_target(node)).await.unwrap();
    let mut sh = ssh.shell(CliPlatform::get(kind)).await.unwrap();
    sh.enable(Some(&Secret::new("admin"))).await.unwrap();
    (ssh, sh)
}

/// The LLDP neighbours ntc-templates reads from `node`'s `show lldp neighbors detail` (as Netmiko's
/// `use_textfsm` would), as (local port as printed, neighbour name, neighbour port id).
async fn ntc_lldp(env: &Env, node: &str, kind: PlatformKind) -> Vec<(String, String, String)> {
    let (_ssh, mut sh) = enabled_shell(env, node, kind).await;
    let out = sh.command("show lldp neighbors detail").await.unwrap();
    sh.close().await.unwrap();
    let platform = match kind {
        PlatformKind::Nxos => "cisco_nxos",
        _ => "cisco_ios",
    };
    ntc_parse(platform, "show lldp neighbors detail", &out)
        .iter()
        .map(|r| {
            (
                field(r, &["local_interface"]),
                field(r, &["neighbor_name"]),
                field(r, &["neighbor_port_id", "neighbor_interface"]),
            )
        })
        .collect()
}

/// Whether ntc-templates' rows are exactly the adjacencies `want` (local port in the device's long
/// spelling, neighbour, neighbour port): one row each, no more.
fn ntc_lldp_is(rows: &[(String, String, String)], want: &[(String, String, String)]) -> bool {
    rows.len() == want.len()
        && want.iter().all(|(local, peer, port)| {
            rows.iter()
                .any(|(l, n, p)| same_port(l, local) && !l.is_empty() && n == peer && p == port)
        })
}

/// The simulator's IOS and NX-OS `show lldp neighbors detail`, parsed by ntc-templates, lists exactly
/// the topology's links of that node (containerlab's names mapped as each kind names its ports): the
/// text is shaped as the real devices print it. A shut port takes its neighbour out of the text.
#[tokio::test]
async fn ios_and_nxos_lldp_text_read_by_ntc_templates_is_the_topology_links() {
    let env = start(FABRIC, &[]).await;
    let acc1 = [adj("Ethernet0/1", "leaf1", "Ethernet3")];
    let nx1 = [adj("Ethernet1/1", "leaf1", "Ethernet4")];
    let got = ntc_lldp(&env, "acc1", PlatformKind::Ios).await;
    assert!(ntc_lldp_is(&got, &acc1), "acc1: {got:?}, topology {acc1:?}");
    let got = ntc_lldp(&env, "nx1", PlatformKind::Nxos).await;
    assert!(ntc_lldp_is(&got, &nx1), "nx1: {got:?}, topology {nx1:?}");
    let (_ssh, mut sh) = enabled_shell(&env, "acc1", PlatformKind::Ios).await;
    sh.config(&["interface Ethernet0/1", "shutdown"])
        .await
        .unwrap();
    sh.close().await.unwrap();
    let got = ntc_lldp(&env, "acc1", PlatformKind::Ios).await;
    assert!(ntc_lldp_is(&got, &[]), "acc1 after shutdown: {got:?}");
}

/// What `scripts/peers/SCRIPT` (run in the venv `scripts/peers/PEER.sh install` makes) prints as JSON
/// after reading `node` over the network. A missing venv fails with the install command.
async fn read_with_peer(env: &Env, node: &str, peer: &str, script: &str) -> Value {
    let root = netgw_drivers::testing::repo_root();
    let python = root.join(format!(".peers/venv-{peer}/bin/python"));
    assert!(
        python.exists(),
        "{peer} is not installed ({}): run scripts/peers/{peer}.sh install (scripts/test.sh does)",
        python.display()
    );
    let port = env.lab.node(node).unwrap().port.to_string();
    let script = root.join("scripts/peers").join(script);
    // Off the runtime's thread: the simulator answering the peer runs on it.
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(python)
            .arg(script)
            .args(["127.0.0.1", port.as_str(), "admin", "admin"])
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    assert!(
        out.status.success(),
        "{peer} could not read {node}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The EOS simulator read by pyeapi's own configuration parsers (`api.vlans`, `api.switchports`,
/// `api.interfaces`, which read `show running-config all` over eAPI), installed by
/// scripts/peers/pyeapi.sh: after a change through the driver they find the simulated state.
#[tokio::test]
async fn eos_configuration_reads_with_pyeapi_as_the_simulated_state() {
    let env = start(FABRIC, &[]).await;
    let mut d = EosDriver::connect(&env.target("leaf1")).await.unwrap();
    let before = d.observe().await.unwrap();
    let p = change_as(&d.plan_rules(), "Ethernet2", &before, false);
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    d.confirm().await.unwrap();
    let got = read_with_peer(&env, "leaf1", "pyeapi", "pyeapi_read.py").await;
    let st = env.lab.node("leaf1").unwrap().device.state().clone();
    let vlans: BTreeSet<(String, String)> = got["vlans"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, v)| (id.clone(), v["name"].as_str().unwrap_or("").to_owned()))
        .collect();
    let sim: BTreeSet<(String, String)> = st
        .vlans
        .iter()
        .map(|(i, n)| (i.to_string(), n.clone()))
        .collect();
    assert_eq!(vlans, sim, "{got}");
    let sp = &got["switchports"]["Ethernet2"];
    assert_eq!(sp["mode"], "access", "{got}");
    assert_eq!(sp["access_vlan"], "10", "{got}");
    for (name, i) in &st.interfaces {
        let desc = got["interfaces"][name.as_str()]["description"]
            .as_str()
            .unwrap_or("");
        assert_eq!(desc, i.description, "{name}: {got}");
    }
}

/// The Junos simulator read by Juniper's own PyEZ (junos-eznc) over NETCONF, installed by
/// scripts/peers/pyez.sh: its facts, PhyPortTable (which asks for the ports by the pattern
/// `[efgx][et]-*`) and LLDPNeighborTable find the simulated device's state after a change through the
/// driver.
#[tokio::test]
async fn junos_replies_read_with_pyez_as_the_simulated_state() {
    let env = start(FABRIC, &[]).await;
    let mut d = JunosDriver::connect(&env.target("leaf2")).await.unwrap();
    let before = d.observe().await.unwrap();
    let p = change(&d.plan_rules(), "ge-0/0/1", &before);
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    d.confirm().await.unwrap();
    let facts = d.facts().await.unwrap();
    let got = read_with_peer(&env, "leaf2", "pyez", "pyez_read.py").await;
    let node = env.lab.node("leaf2").unwrap();
    let dev = &node.device;
    // Junos keeps descriptions, `disable` and MTUs in its configuration: the state it serves.
    let st = match &node.sim {
        netgw_labs::Sim::Junos(j) => j.snmp_state(),
        other => panic!("leaf2: not a Junos device: {other:?}"),
    };
    let f = &got["facts"];
    assert_eq!(f["hostname"], st.hostname.as_str(), "{got}");
    assert_eq!(f["version"], netgw_labs::sim::junos::JUNOS_VERSION, "{got}");
    assert_eq!(f["serialnumber"], dev.serial().as_str(), "{got}");
    let model = facts.model.unwrap().to_ascii_uppercase();
    assert_eq!(
        f["model"],
        model.as_str(),
        "PyEZ upper-cases product-model: {got}"
    );
    let ports = got["ports"].as_object().unwrap();
    let mut physical = 0;
    for (name, i) in &st.interfaces {
        let Some(p) = ports.get(name) else {
            assert!(
                !name.contains('-'),
                "{name} missing from PhyPortTable: {got}"
            );
            continue;
        };
        physical += 1;
        assert_eq!(
            p["description"].as_str().unwrap_or(""),
            i.description,
            "{name}: {got}"
        );
        assert_eq!(p["mtu"], i.mtu, "{name}: {got}");
        assert_eq!(
            p["admin"],
            if i.enabled { "up" } else { "down" },
            "{name}: {got}"
        );
        let oper = if i.enabled && i.oper_up { "up" } else { "down" };
        assert_eq!(p["oper"], oper, "{name}: {got}");
        assert_eq!(p["macaddr"], i.mac.as_str(), "{name}: {got}");
    }
    assert_eq!(
        physical,
        ports.len(),
        "PhyPortTable lists only the ports: {got}"
    );
    assert!(
        ports["ge-0/0/1"]["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty()),
        "{got}"
    );
    let lldp = got["lldp"].as_object().unwrap();
    assert_eq!(lldp.len(), st.neighbors.len(), "{got}");
    for n in &st.neighbors {
        let l = &lldp[n.local_port.as_str()];
        assert_eq!(l["remote_sysname"], n.system_name.as_str(), "{got}");
        assert_eq!(l["remote_port_id"], n.port.as_str(), "{got}");
        assert_eq!(l["remote_chassis_id"], n.chassis_id.as_str(), "{got}");
    }
}

/// The LLDP neighbours every driver reads from the lab, as (local port, peer, peer port).
async fn lldp_of(env: &Env, node: &str) -> BTreeSet<(String, String, String)> {
    let t = env.target(node);
    let mut d: Box<dyn Driver> = match t.platform {
        Platform::Eos => Box::new(EosDriver::connect(&t).await.unwrap()),
        Platform::Junos => Box::new(JunosDriver::connect(&t).await.unwrap()),
        Platform::Ios => Box::new(IosDriver::connect(&t).await.unwrap()),
        Platform::Nxos => Box::new(NxosDriver::connect(&t).await.unwrap()),
        p => panic!("{p:?}"),
    };
    let f = d.facts().await.unwrap();
    d.close().await.unwrap();
    f.lldp_neighbors
        .iter()
        .flat_map(|(port, ns)| {
            ns.iter().map(move |n| {
                (
                    port.clone(),
                    n.remote_system_name.clone().unwrap_or_default(),
                    n.remote_port.clone().unwrap_or_default(),
                )
            })
        })
        .collect()
}

fn adj(local: &str, peer: &str, port: &str) -> (String, String, String) {
    (local.into(), peer.into(), port.into())
}

/// LLDP from the topology's links, read through each vendor's driver (EOS eAPI JSON, Junos
/// `get-lldp-neighbors-information`, IOS and NX-OS `show lldp neighbors detail` text), with
/// containerlab's interface names mapped as each kind names them; a shut port on either end of a link
/// takes the neighbour away on both ends, and `no shutdown` brings it back.
#[tokio::test]
async fn lldp_follows_the_links_and_a_shut_port_on_either_end() {
    let env = start(FABRIC, &[]).await;
    let want = [
        (
            "spine1",
            vec![
                adj("Ethernet1", "leaf1", "Ethernet1"),
                adj("Ethernet2", "leaf2", "ge-0/0/0"),
            ],
        ),
        (
            "leaf1",
            vec![
                adj("Ethernet1", "spine1", "Ethernet1"),
                adj("Ethernet3", "acc1", "Ethernet0/1"),
                adj("Ethernet4", "nx1", "Ethernet1/1"),
            ],
        ),
        ("leaf2", vec![adj("ge-0/0/0", "spine1", "Ethernet2")]),
        ("acc1", vec![adj("Ethernet0/1", "leaf1", "Ethernet3")]),
        ("nx1", vec![adj("Ethernet1/1", "leaf1", "Ethernet4")]),
    ];
    for (node, adjs) in &want {
        let got = lldp_of(&env, node).await;
        assert_eq!(got, adjs.iter().cloned().collect(), "{node}");
    }
    // Shut on the IOS end: both acc1 and leaf1 lose the adjacency.
    let (_ssh, mut sh) = enabled_shell(&env, "acc1", PlatformKind::Ios).await;
    sh.config(&["interface Ethernet0/1", "shutdown"])
        .await
        .unwrap();
    assert!(lldp_of(&env, "acc1").await.is_empty());
    assert!(!lldp_of(&env, "leaf1").await.iter().any(|a| a.1 == "acc1"));
    sh.config(&["interface Ethernet0/1", "no shutdown"])
        .await
        .unwrap();
    sh.close().await.unwrap();
    assert!(
        lldp_of(&env, "leaf1")
            .await
            .contains(&adj("Ethernet3", "acc1", "Ethernet0/1"))
    );
    // Disable on the Junos end, through the driver's commit: spine1 loses leaf2.
    let mut d = JunosDriver::connect(&env.target("leaf2")).await.unwrap();
    let before = d.observe().await.unwrap();
    let mut l = Link::new("ge-0/0/0");
    l.enabled = Some(false);
    let p = plan(
        &[],
        &before.vlans,
        Policy::Merge,
        &[l],
        &before.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.stage(&p).await.unwrap();
    d.commit(&CommitOptions::default()).await.unwrap();
    d.close().await.unwrap();
    assert!(lldp_of(&env, "leaf2").await.is_empty());
    assert_eq!(
        lldp_of(&env, "spine1").await,
        [adj("Ethernet1", "leaf1", "Ethernet1")].into()
    );
}

/// What each device counts (the benchmark's round trips and commands per device) is exact for known
/// sessions of each protocol, and the lab's gauge sees the sessions open together.
#[tokio::test]
async fn devices_count_round_trips_and_commands_exactly() {
    let env = start(FABRIC, &[]).await;
    let counts = |name: &str| env.lab.node(name).unwrap().device.exchanges.get();
    // IOS: the shell's two on-open lines wait for the first command and go in its write; then each
    // command written with its return: one round trip each.
    let ssh = SshSession::connect(&env.ssh_target("acc1")).await.unwrap();
    let ios = CliPlatform::get(PlatformKind::Ios);
    let mut sh = ssh.shell(ios).await.unwrap();
    assert_eq!(ios.on_open.len(), 2);
    assert_eq!(counts("acc1"), (0, 0));
    sh.command("show version").await.unwrap();
    assert_eq!(counts("acc1"), (1, 3));
    // `configure terminal`, two lines, `end`.
    sh.config(&["vlan 10", "name web"]).await.unwrap();
    assert_eq!(counts("acc1"), (5, 7));
    // The same in one write, with a read after it: one round trip; the device answers every line with
    // its prompt and the shell splits the answers.
    let reads = sh
        .config_batch(&["vlan 20", "name db", "exit"], &["show vlan brief"])
        .await
        .unwrap();
    assert_eq!(counts("acc1"), (6, 7 + 6));
    assert!(
        reads[0].output.lines().any(|l| l.starts_with("20   db ")),
        "{reads:?}"
    );
    assert_eq!(sh.mode(), CliMode::Privileged);
    // A refused line in a write is the error, named; the device went on with the lines typed after
    // it, as IOS does, and the shell is back in privileged mode.
    let e = sh
        .config_batch(
            &[
                "interface Ethernet0/3",
                "frobnicate now",
                "description later",
            ],
            &[],
        )
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("`frobnicate now`")
            && e.to_string().contains("% Invalid input detected"),
        "{e}"
    );
    assert_eq!(sh.mode(), CliMode::Privileged);
    assert_eq!(counts("acc1"), (7, 13 + 5));
    let rc = sh
        .command("show running-config interface Ethernet0/3")
        .await
        .unwrap();
    assert!(rc.contains(" description later"), "{rc}");
    // NETCONF: the client's hello is not answered; every RPC is, `close-session` included.
    let mut nc = connect_ssh_with(&env.ssh_target("leaf2"), ClientOptions::default())
        .await
        .unwrap();
    assert_eq!(env.lab.counts().peak_open, 2, "the shell and NETCONF open");
    nc.running_config(None).await.unwrap();
    nc.close().await.unwrap();
    assert_eq!(counts("leaf2"), (2, 2));
    // eAPI: one POST is one round trip, whatever number of commands it carries.
    let eapi = env.http("leaf1", basic()).await;
    for _ in 0..3 {
        let _: Value = eapi
            .post_json(
                "/command-api",
                &json!({"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1,
                    "cmds": ["show version", "show vlan"]}, "id": "1"}),
            )
            .await
            .unwrap();
    }
    assert_eq!(counts("leaf1"), (3, 3));
    let all = env.lab.counts();
    assert_eq!(all.round_trips, 8 + 2 + 3);
    assert_eq!(all.commands, 19 + 2 + 3);
    assert_eq!((all.round_trips_min, all.round_trips_max), (0, 8));
    sh.close().await.unwrap();
}

/// HTTP requests that reach a device while another of its requests is being answered (a client
/// reading on several connections at once) are commands of that round trip, each still answered
/// after the device's latency; a request after them all is a round trip of its own.
#[tokio::test]
async fn http_requests_answered_at_once_are_one_round_trip() {
    let env = start(FABRIC, &[("lb1", "latency-ms", "300")]).await;
    let counts = || env.lab.node("lb1").unwrap().device.exchanges.get();
    let (_, c) = env.f5_login("lb1").await;
    assert_eq!(counts(), (1, 1));
    let paths = [
        "/mgmt/tm/net/interface",
        "/mgmt/tm/net/vlan",
        "/mgmt/tm/net/trunk",
    ];
    let started = std::time::Instant::now();
    let answers = futures::future::join_all(paths.iter().map(|p| c.get_json::<Value>(p))).await;
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "each waited the latency"
    );
    assert_eq!(counts(), (2, 4));
    let _: Value = c.get_json("/mgmt/tm/net/vlan").await.unwrap();
    assert_eq!(counts(), (3, 5));
}

/// The aggregate and address tables of IOS (`show etherchannel summary`, `show ip interface`) and
/// NX-OS (`show port-channel summary`, `show ip interface vrf all`), read by ntc-templates as
/// Netmiko's `use_textfsm` does: one end of a two-link pair bundles (its members individual until the
/// far end does, bundled after), and an SVI's primary and secondary addresses.
#[tokio::test]
async fn ios_and_nxos_aggregate_and_address_text_parses_with_ntc_templates() {
    for (kind, ports, platform, members, summary, ip) in [
        (
            PlatformKind::Ios,
            ["Ethernet0/1", "Ethernet0/2"],
            "cisco_ios",
            ["Et0/1", "Et0/2"],
            "show etherchannel summary",
            "show ip interface",
        ),
        (
            PlatformKind::Nxos,
            ["eth1", "eth2"],
            "cisco_nxos",
            ["Eth1/1", "Eth1/2"],
            "show port-channel summary",
            "show ip interface vrf all",
        ),
    ] {
        let topo = match kind {
            PlatformKind::Nxos => pair("cisco_n9kv", ports),
            _ => pair("cisco_iol", ports),
        };
        let env = start(&topo, &[]).await;
        let port_names = match kind {
            PlatformKind::Nxos => ["Ethernet1/1", "Ethernet1/2"],
            _ => ports,
        };
        let mut flags = Vec::new();
        for node in ["dist1", "acc1"] {
            let (_ssh, mut sh) = enabled_shell(&env, node, kind).await;
            let mut lines: Vec<String> = Vec::new();
            if kind == PlatformKind::Nxos {
                lines.extend(["feature lacp".into(), "feature interface-vlan".into()]);
            }
            for l in [
                "vlan 100",
                "interface Vlan100",
                "ip address 10.1.100.1 255.255.255.0",
                "ip address 10.1.101.1 255.255.255.0 secondary",
            ] {
                lines.push(l.into());
            }
            for p in port_names {
                lines.extend([
                    format!("interface {p}"),
                    "channel-group 10 mode active".into(),
                ]);
            }
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            sh.config(&lines).await.unwrap();
            let rows = ntc_parse(platform, summary, &sh.command(summary).await.unwrap());
            let addresses = ntc_parse(platform, ip, &sh.command(ip).await.unwrap());
            let svi = addresses
                .iter()
                .find(|r| field(r, &["interface"]) == "Vlan100")
                .unwrap_or_else(|| panic!("{node}: no Vlan100 in {addresses:?}"));
            let v4 = svi["ip_address"].to_string();
            assert!(v4.contains("10.1.100.1"), "{node}: {svi}");
            if kind == PlatformKind::Ios {
                assert!(v4.contains("10.1.101.1"), "{node}: the secondary: {svi}");
            }
            assert_eq!(rows.len(), 1, "{node}: {rows:?}");
            assert_eq!(rows[0]["bundle_name"], "Po10", "{rows:?}");
            assert_eq!(rows[0]["member_interface"], json!(members), "{rows:?}");
            flags.push(rows[0]["member_interface_status"].clone());
            sh.close().await.unwrap();
        }
        // dist1 bundled alone (stand-alone / individual), then acc1 bundled with it.
        assert_eq!(flags, [json!(["I", "I"]), json!(["P", "P"])], "{kind:?}");
    }
}

/// The aggregate summaries the drivers read for members' states (IOS `show etherchannel summary`,
/// NX-OS and EOS `show port-channel summary`), parsed by ntc-templates and by netgw's parser, agree
/// with each other and with the simulated links: a member whose far end bundles in a compatible mode
/// is bundled, one whose far end does not is not, a port without a link is down.
#[tokio::test]
async fn aggregate_summaries_parse_with_ntc_templates_to_the_members_states() {
    use netgw_labs::sim::state::{ConfigSession, Dialect};
    use netgw_models::facts::MemberState;
    let env = start(FABRIC, &[]).await;
    // leaf1: Ethernet3 (to acc1 Et0/1) in Port-Channel9, LACP active.
    {
        let mut st = env.lab.node("leaf1").unwrap().device.state();
        let mut cfg = ConfigSession::new(Dialect::Eos);
        for line in ["interface Ethernet3", "channel-group 9 mode active", "exit"] {
            cfg.apply(&mut st, line).unwrap();
        }
    }
    let cases = [
        // acc1 Et0/1 bundles with leaf1 (active/passive); Et0/2 has no link.
        (
            "acc1",
            "cisco_ios",
            PlatformKind::Ios,
            "show etherchannel summary",
            &[
                "interface Ethernet0/1",
                "channel-group 5 mode passive",
                "interface Ethernet0/2",
                "channel-group 5 mode passive",
            ][..],
            vec![(
                "Port-channel5",
                vec![
                    ("Ethernet0/1", MemberState::Bundled),
                    ("Ethernet0/2", MemberState::Down),
                ],
            )],
        ),
        // nx1 Eth1/1's far end (leaf1 Ethernet4) bundles nothing.
        (
            "nx1",
            "cisco_nxos",
            PlatformKind::Nxos,
            "show port-channel summary",
            &[
                "feature lacp",
                "interface Ethernet1/1",
                "channel-group 7 mode active",
            ][..],
            vec![(
                "Port-channel7",
                vec![("Ethernet1/1", MemberState::NotBundled)],
            )],
        ),
    ];
    for (node, platform, kind, cmd, lines, want) in cases {
        let (_ssh, mut sh) = enabled_shell(&env, node, kind).await;
        sh.config(lines).await.unwrap();
        let out = sh.command(cmd).await.unwrap();
        sh.close().await.unwrap();
        check_summary(node, platform, cmd, &out, &want);
    }
    let mut d = EosDriver::connect(&env.target("leaf1")).await.unwrap();
    let got = d.lag_members().await.unwrap();
    let want = vec![("Port-channel9", vec![("Ethernet3", MemberState::Bundled)])];
    let text = {
        let st = env.lab.node("leaf1").unwrap().device.state().clone();
        netgw_labs::sim::bundles::show_summary(&st, Dialect::Eos)
    };
    check_summary(
        "leaf1",
        "arista_eos",
        "show port-channel summary",
        &text,
        &want,
    );
    let got: Vec<(String, Vec<(String, MemberState)>)> =
        got.into_iter().map(|l| (l.name, l.members)).collect();
    assert_eq!(got, owned(&want), "leaf1 over eAPI");
}

type Summary<'a> = Vec<(&'a str, Vec<(&'a str, netgw_models::facts::MemberState)>)>;

fn owned(s: &Summary) -> Vec<(String, Vec<(String, netgw_models::facts::MemberState)>)> {
    s.iter()
        .map(|(n, m)| {
            (
                n.to_string(),
                m.iter().map(|(a, b)| (a.to_string(), *b)).collect(),
            )
        })
        .collect()
}

/// `text` read by netgw's parser is `want`, and by ntc-templates the same aggregates and members.
fn check_summary(node: &str, platform: &str, cmd: &str, text: &str, want: &Summary) {
    let got: Vec<_> = netgw_drivers::lag_state::parse_bundle_summary(text)
        .into_iter()
        .map(|l| (l.name, l.members))
        .collect();
    assert_eq!(got, owned(want), "{node}: {text}");
    let rows = ntc_parse(platform, cmd, text);
    let ntc: Vec<(String, Vec<String>)> = rows
        .iter()
        .map(|r| {
            let po = netgw_models::resource::normalize_interface_name(
                r["bundle_name"].as_str().unwrap_or(""),
            );
            let members = r["member_interface"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(netgw_models::resource::normalize_interface_name)
                .collect();
            (po, members)
        })
        .collect();
    let mine: Vec<(String, Vec<String>)> = got
        .iter()
        .map(|(n, m)| (n.clone(), m.iter().map(|x| x.0.clone()).collect()))
        .collect();
    assert_eq!(ntc, mine, "{node}: ntc-templates rows {rows:?}\n{text}");
}

#[tokio::test]
async fn the_ports_label_sizes_a_device_and_a_bad_label_names_the_node() {
    let env = start(
        "name: p\ntopology: {nodes: {sw: {kind: arista_ceos, labels: {netgw-lab.ports: \"48\"}}}}",
        &[],
    )
    .await;
    let mut d = EosDriver::connect(&env.target("sw")).await.unwrap();
    let f = d.facts().await.unwrap();
    let ethernet = f.interfaces.keys().filter(|n| n.starts_with("Ethernet"));
    assert_eq!(ethernet.count(), 48, "{:?}", f.interfaces.keys());

    for (label, bad) in [
        ("ports", "forty"),
        ("ports", "0"),
        ("ports", "100000"),
        ("junos-style", "srx"),
    ] {
        let yaml = format!(
            "name: p\ntopology: {{nodes: {{sw: {{kind: juniper_vjunosswitch, labels: {{netgw-lab.{label}: \"{bad}\"}}}}}}}}"
        );
        let topo = Topology::parse(&yaml).unwrap();
        let e = Lab::start(&topo, LabOptions::default())
            .await
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(
            msg.contains("node sw")
                && msg.contains(&format!("netgw-lab.{label}"))
                && msg.contains(bad),
            "{msg}"
        );
    }
}
