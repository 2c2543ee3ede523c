//! The containerlab workflow rehearsed on 21 public topologies (tests/fixtures/clab-e2e, SOURCES.md):
//! each deployed with `netgw-lab up --clab` (every node on its own 127.x address and real ports) and
//! converged by the `netgw` binary through each file containerlab leaves: nornir-simple-inventory.yml
//! (the default kind schema), ansible-inventory.yml, topology-data.json, and `--topology`.
//!
//! The test renders containerlab's files itself, from containerlab's templates
//! (`core/assets/inventory_*.go.tpl`, `core/export_templates/auto.tmpl`), and checks that netgw-lab
//! wrote exactly that. Desired state: a VLAN and an interface description per vendor node (a description
//! only on routers: cRPD, IOL without `type: l2`), named after the file it goes through so every
//! source changes the devices once; the second run finds everything up to date.
//!
//! Loopback ranges: 127.100-105.0.0/16 (one /24 per topology and source; nothing else uses them).

use crate::common::{self, root};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn netgw_lab_bin() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_netgw"))
        .parent()
        .unwrap()
        .join("netgw-lab");
    assert!(
        bin.exists(),
        "netgw-lab is not built next to netgw ({}); run `cargo build -p netgw-labs`",
        bin.display()
    );
    bin
}

/// The 21 public topologies.
fn topologies() -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "yml" || x == "yaml") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(&root().join("tests/fixtures/clab-e2e"), &mut v);
    v.sort();
    assert!(v.len() >= 20, "{v:?}");
    v
}

/// One node as containerlab deploys it (what the test expects, computed here).
#[derive(Debug, Clone)]
struct Expected {
    name: String,
    long: String,
    kind: String,
    addr: String,
    user: &'static str,
    pass: &'static str,
    /// The netgw desired-state port, `None` for kinds netgw does not drive.
    port: Option<&'static str>,
    routed: bool,
}

/// containerlab's registry defaults (nodes/*/*.go) and the port each simulated kind's desired state
/// uses; kinds netgw does not drive have no port.
fn kind_facts(kind: &str) -> (&'static str, &'static str, Option<&'static str>) {
    match kind {
        "ceos" | "arista_ceos" => ("admin", "admin", Some("Ethernet2")),
        "juniper_crpd" | "crpd" => ("root", "clab123", Some("ge-0/0/1")),
        "juniper_vjunosswitch"
        | "juniper_vjunosevolved"
        | "juniper_cjunosevolved"
        | "juniper_vmx"
        | "juniper_vsrx" => ("admin", "admin@123", Some("ge-0/0/1")),
        "cisco_iol" => ("admin", "admin", Some("Ethernet0/1")),
        "f5_bigip-ve" => ("admin", "Labl@b!234", Some("1.2")),
        "nokia_srlinux" => ("admin", "NokiaSrl1!", None),
        _ => ("", "", None),
    }
}

/// Management addresses as containerlab + docker give them, mapped: the static `mgmt-ipv4` kept, the
/// others the lowest free after the gateway in name order; first three octets from `loopback`.
fn expected(topo: &Value, loopback: [u8; 3]) -> (String, Vec<Expected>) {
    let lab = topo["name"].as_str().unwrap().to_owned();
    let nodes = topo["topology"]["nodes"].as_object().unwrap();
    let sorted: BTreeMap<&String, &Value> = nodes.iter().collect();
    let mut used: Vec<u8> = vec![0, 1, 255];
    for n in sorted.values() {
        if let Some(a) = n["mgmt-ipv4"].as_str() {
            used.push(a.rsplit('.').next().unwrap().parse().unwrap());
        }
    }
    let mut next = 2u8;
    let mut out = Vec::new();
    for (name, n) in sorted {
        let kind = n["kind"]
            .as_str()
            .or(topo["topology"]["defaults"]["kind"].as_str())
            .unwrap()
            .to_ascii_lowercase();
        let last = match n["mgmt-ipv4"].as_str() {
            Some(a) => a.rsplit('.').next().unwrap().parse().unwrap(),
            None => {
                while used.contains(&next) {
                    next += 1;
                }
                used.push(next);
                next
            }
        };
        let (user, pass, port) = kind_facts(&kind);
        let routed = kind == "juniper_crpd"
            || (kind == "cisco_iol"
                && n["type"].as_str().map(str::to_lowercase) != Some("l2".into()));
        out.push(Expected {
            name: name.clone(),
            long: format!("clab-{lab}-{name}"),
            addr: format!("{}.{}.{}.{last}", loopback[0], loopback[1], loopback[2]),
            kind,
            user,
            pass,
            port,
            routed,
        });
    }
    (lab, out)
}

fn by_kind(nodes: &[Expected]) -> BTreeMap<&str, Vec<&Expected>> {
    let mut m: BTreeMap<&str, Vec<&Expected>> = BTreeMap::new();
    for n in nodes {
        m.entry(n.kind.as_str()).or_default().push(n);
    }
    m
}

/// `inventory_nornir_simple.go.tpl` with the default platform schema (the kind name).
fn render_nornir(nodes: &[Expected]) -> String {
    let mut s = String::from("---");
    for (kind, ns) in by_kind(nodes) {
        for n in ns {
            s += &format!(
                "\n{}:\n    username: {}\n    password: {}\n    platform: {kind}\n    hostname: {}",
                n.name, n.user, n.pass, n.addr
            );
        }
    }
    s + "\n"
}

/// `inventory_ansible.go.tpl` (no topology credentials, no ansible-group labels in these labs).
fn render_ansible(nodes: &[Expected]) -> String {
    let mut s = String::from(
        "all:\n  vars:\n    # The generated inventory is assumed to be used from the clab host.\n    # Hence no http proxy should be used. Therefore we make sure the http\n    # module does not attempt using any global http proxy.\n    ansible_httpapi_use_proxy: false\n  children:",
    );
    for (kind, ns) in by_kind(nodes) {
        s += &format!("\n    {kind}:");
        let (user, pass) = (ns[0].user, ns[0].pass);
        let srl = kind == "nokia_srlinux";
        if srl || !user.is_empty() || !pass.is_empty() {
            s += "\n      vars:";
            if srl {
                s += "\n        ansible_network_os: nokia.srlinux.srlinux\n        # default connection type for nodes of this kind\n        # feel free to override this in your inventory\n        ansible_connection: ansible.netcommon.httpapi";
            } else {
                s += "\n        # ansible_connection: set ansible_connection variable if required";
            }
            if !user.is_empty() {
                s += &format!("\n        ansible_user: {user}");
            }
            if !pass.is_empty() {
                s += &format!("\n        ansible_password: {pass}");
            }
        }
        s += "\n      hosts:";
        for n in ns {
            s += &format!("\n        {}:\n          ansible_host: {}", n.long, n.addr);
        }
    }
    s + "\n"
}

/// `auto.tmpl`: the fields, in the template's order, and their values for these labs.
fn check_topology_data(text: &str, lab: &str, topo: &Value, nodes: &[Expected], lab_dir: &Path) {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(
        (v["name"].as_str(), v["type"].as_str()),
        (Some(lab), Some("clab"))
    );
    assert_eq!(v["clab"]["config"]["prefix"], "clab");
    assert_eq!(v["ssh-pub-keys"], json!([]));
    let order = [
        "index",
        "shortname",
        "longname",
        "fqdn",
        "group",
        "labdir",
        "kind",
        "image",
        "mgmt-net",
        "mgmt-intf",
        "mgmt-ipv4-address",
        "mgmt-ipv4-prefix-length",
        "mgmt-ipv6-address",
        "mgmt-ipv6-prefix-length",
        "mac-address",
        "labels",
        "port-bindings",
    ];
    let got = v["nodes"].as_object().unwrap();
    assert_eq!(got.len(), nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        let g = &got[&n.name];
        let keys: Vec<&str> = g.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, order, "{}", n.name);
        let dir = lab_dir.join(&n.name).display().to_string();
        assert_eq!(g["index"], i.to_string());
        assert_eq!(g["shortname"], n.name.as_str());
        assert_eq!(g["longname"], n.long.as_str());
        assert_eq!(g["fqdn"], format!("{}.{lab}.io", n.name));
        assert_eq!(g["labdir"], dir.as_str());
        assert_eq!(g["kind"], n.kind.as_str());
        assert_eq!(g["mgmt-ipv4-address"], n.addr.as_str());
        assert_eq!(g["mgmt-ipv4-prefix-length"], 24);
        assert_eq!(g["labels"]["containerlab"], lab);
        assert_eq!(g["labels"]["clab-node-name"], n.name.as_str());
        assert_eq!(g["labels"]["clab-node-longname"], n.long.as_str());
        assert_eq!(g["labels"]["clab-node-kind"], n.kind.as_str());
        assert_eq!(g["labels"]["clab-node-lab-dir"], dir.as_str());
        assert_eq!(g["port-bindings"], json!([]));
    }
    let links = topo["topology"]["links"].as_array().map_or(0, Vec::len);
    assert_eq!(v["links"].as_array().unwrap().len(), links);
    for l in v["links"].as_array().unwrap() {
        let a = &l["endpoints"]["a"];
        assert!(a["mac"].as_str().unwrap().starts_with("aa:c1:ab:"), "{l}");
        assert_eq!(a["peer"], "z", "{l}");
    }
}

/// A running `netgw-lab up --clab`; killed on drop.
struct Deployed {
    child: Child,
    topo: PathBuf,
    lab_dir: PathBuf,
    lab: String,
    nodes: Vec<Expected>,
    topo_value: Value,
}

impl Drop for Deployed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copy `src` into `dir` (containerlab writes the lab directory beside the topology) and deploy it
/// with the management subnet mapped to `loopback`.
fn deploy(src: &Path, dir: &Path, loopback: [u8; 3], extra: &[&str]) -> Deployed {
    let text = std::fs::read_to_string(src).unwrap();
    let topo = dir.join(src.file_name().unwrap());
    std::fs::write(&topo, &text).unwrap();
    let yaml: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let topo_value: Value = serde_json::to_value(yaml).unwrap();
    let (lab, nodes) = expected(&topo_value, loopback);
    let lo = format!("{}.{}.{}.0", loopback[0], loopback[1], loopback[2]);
    let err = std::fs::File::create(dir.join("netgw-lab.log")).unwrap();
    let mut child = Command::new(netgw_lab_bin())
        .args(["up"])
        .arg(&topo)
        .args(["--clab", "--mgmt-loopback", &lo])
        .args(extra)
        .env_remove("CLAB_NORNIR_PLATFORM_NAME_SCHEMA")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(err))
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let lab_dir = dir.join(format!("clab-{lab}"));
    let d = Deployed {
        child,
        topo,
        lab_dir,
        lab,
        nodes,
        topo_value,
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| {
            panic!(
                "netgw-lab did not start for {}:\n{}",
                src.display(),
                std::fs::read_to_string(dir.join("netgw-lab.log")).unwrap_or_default()
            )
        });
    assert!(line.starts_with("READY "), "{line}");
    d
}

/// Desired state for each vendor node, under the host names `names` gives; tagged with `tag`.
fn write_repo(repo: &Path, nodes: &[Expected], tag: &str, host: impl Fn(&Expected) -> String) {
    std::fs::create_dir_all(repo.join("nodes")).unwrap();
    for n in nodes {
        let Some(port) = n.port else { continue };
        let name = host(n);
        let mut link = serde_json::Map::new();
        link.insert(
            port.to_owned(),
            json!({"description": format!("{tag} {}", n.name)}),
        );
        let body = if n.routed {
            json!({"name": name, "run_list": ["recipe[netdev::links]"],
                   "normal": {"netdev": {"links": link}}})
        } else {
            json!({"name": name, "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
                   "normal": {"netdev": {"vlans": {"100": {"name": format!("{tag}-{}", n.name)}},
                                         "links": link}}})
        };
        std::fs::write(
            repo.join(format!("nodes/{name}.json")),
            serde_json::to_string_pretty(&body).unwrap(),
        )
        .unwrap();
    }
}

fn converge(repo: &Path, source: &[&str], lab_dir: &Path) -> (i32, Value, String) {
    common::run_json(
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("converge")
            .arg("--repo")
            .arg(repo)
            .args(source)
            .arg("--known-hosts")
            .arg(lab_dir.join("known_hosts"))
            .arg("--tls-ca")
            .arg(lab_dir.join(".tls/ca/ca.pem"))
            .args(["--format", "json"]),
    )
}

/// Converge twice through one source and check the outcome; returns a failure description.
fn converge_twice(d: &Deployed, src: &str, work: &Path) -> Result<(), String> {
    let ansible = src == "ansible";
    let host = |n: &Expected| {
        if ansible {
            n.long.clone()
        } else {
            n.name.clone()
        }
    };
    let repo = work.join(format!("repo-{src}"));
    write_repo(&repo, &d.nodes, src, host);
    let topo = d.topo.display().to_string();
    let file = |f: &str| d.lab_dir.join(f).display().to_string();
    let args: Vec<String> = match src {
        "nornir" => vec!["--inventory".into(), file("nornir-simple-inventory.yml")],
        "ansible" => vec!["--inventory".into(), file("ansible-inventory.yml")],
        "topology-data" => vec!["--inventory".into(), file("topology-data.json")],
        _ => vec!["--topology".into(), topo],
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let ctx = format!("{} via {src}", d.lab);
    let (code, report, text) = converge(&repo, &args, &d.lab_dir);
    if code != 0 {
        return Err(format!("{ctx}: first run exit {code}:\n{text}"));
    }
    let status = |name: &str| {
        report["nodes"]
            .as_array()
            .and_then(|a| a.iter().find(|n| n["name"] == name))
            .cloned()
            .unwrap_or(Value::Null)
    };
    for n in &d.nodes {
        let r = status(&host(n));
        match n.port {
            Some(_) if r["status"] != "success" || r["updated"].as_u64().unwrap_or(0) == 0 => {
                return Err(format!("{ctx}: {} not changed: {r}\n{text}", n.name));
            }
            None if r["status"] != "skipped" => {
                return Err(format!(
                    "{ctx}: {} ({}) not skipped: {r}\n{text}",
                    n.name, n.kind
                ));
            }
            _ => {}
        }
    }
    let (code, report, text) = converge(&repo, &args, &d.lab_dir);
    if code != 0 || report["summary"]["updated"] != 0 {
        return Err(format!(
            "{ctx}: second run not up to date (exit {code}):\n{text}"
        ));
    }
    Ok(())
}

/// Run `f` over every topology, at most 3 at once (2 cores shared), each with its own loopback /24
/// (127.`second`.INDEX.0); panics with every failure.
fn each_topology(second: u8, f: impl Fn(usize, &Path, [u8; 3]) -> Result<(), String> + Sync) {
    let topos = topologies();
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(t) = topos.get(i) else { break };
                    let lo = [127, second, u8::try_from(i + 1).unwrap()];
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(i, t, lo)));
                    let msg = match r {
                        Ok(Ok(())) => continue,
                        Ok(Err(m)) => m,
                        Err(p) => p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                            .unwrap_or_default(),
                    };
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{}: {msg}", t.display()));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} topologies failed:\n{}",
        failures.len(),
        topos.len(),
        failures.join("\n\n")
    );
}

#[test]
fn netgw_lab_writes_containerlab_files_as_containerlab_renders_them() {
    each_topology(100, |_, t, lo| {
        let dir = tempfile::tempdir().unwrap();
        let d = deploy(t, dir.path(), lo, &["--no-snmp"]);
        let read = |f: &str| std::fs::read_to_string(d.lab_dir.join(f)).unwrap();
        assert_eq!(read("nornir-simple-inventory.yml"), render_nornir(&d.nodes));
        assert_eq!(read("ansible-inventory.yml"), render_ansible(&d.nodes));
        check_topology_data(
            &read("topology-data.json"),
            &d.lab,
            &d.topo_value,
            &d.nodes,
            &d.lab_dir,
        );
        assert!(read(".tls/ca/ca.pem").starts_with("-----BEGIN CERTIFICATE-----"));
        let kh = read("known_hosts");
        for n in d.nodes.iter().filter(|n| n.port.is_some()) {
            let ssh = !matches!(n.kind.as_str(), "ceos" | "arista_ceos" | "f5_bigip-ve");
            let entry = if n.kind == "cisco_iol" {
                format!("{} ssh-ed25519 ", n.addr)
            } else {
                format!("[{}]:830 ssh-ed25519 ", n.addr)
            };
            assert_eq!(kh.contains(&entry), ssh, "{}: {kh}", n.name);
        }
        Ok(())
    });
}

/// The simulated kinds on their real addresses, ports and containerlab credentials, reached through
/// netgw-lab's own inventory (which carries the trust settings netgw reads today).
#[test]
fn clab_mode_converges_through_netgw_labs_own_inventory() {
    each_topology(101, |_, t, lo| {
        let dir = tempfile::tempdir().unwrap();
        let inv = dir.path().join("out/netgw-lab.yml");
        let inv_s = inv.display().to_string();
        let d = deploy(t, dir.path(), lo, &["--inventory-out", &inv_s]);
        let repo = dir.path().join("repo");
        write_repo(&repo, &d.nodes, "own", |n| n.name.clone());
        for run in 0..2 {
            let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
                .args(["converge", "--repo"])
                .arg(&repo)
                .args(["--inventory", &inv_s, "--format", "json"])
                .output()
                .unwrap();
            let text = format!(
                "{}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            let r: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
            if o.status.code() != Some(0) {
                return Err(format!("run {run}: {text}"));
            }
            let updated = r["summary"]["updated"].as_u64().unwrap_or(0);
            if (run == 0) == (updated == 0) {
                return Err(format!("run {run}: {updated} updated: {text}"));
            }
        }
        Ok(())
    });
}

#[test]
fn converges_through_nornir_simple_inventory() {
    each_topology(102, |_, t, lo| {
        let dir = tempfile::tempdir().unwrap();
        let d = deploy(t, dir.path(), lo, &[]);
        converge_twice(&d, "nornir", dir.path())
    });
}

#[test]
fn converges_through_ansible_inventory() {
    each_topology(103, |_, t, lo| {
        let dir = tempfile::tempdir().unwrap();
        let d = deploy(t, dir.path(), lo, &[]);
        converge_twice(&d, "ansible", dir.path())
    });
}

#[test]
fn converges_through_topology_data() {
    each_topology(104, |_, t, lo| {
        let dir = tempfile::tempdir().unwrap();
        let d = deploy(t, dir.path(), lo, &[]);
        converge_twice(&d, "topology-data", dir.path())
    });
}

#[test]
fn converges_through_the_topology_file() {
    each_topology(105, |_, t, lo| {
        let dir = tempfile::tempdir().unwrap();
        let d = deploy(t, dir.path(), lo, &[]);
        converge_twice(&d, "topology", dir.path())
    });
}
