//! Against a running netgw-lab (real eAPI over HTTPS and NETCONF over SSH on 127.0.0.1):
//! * the global trust options apply to hosts whose inventory sets nothing, and an inventory setting
//!   wins; the unknown-host-key and unknown-issuer errors name the file or CA used and the settings
//!   that change it;
//! * a host netgw does not drive is skipped (one warning line, status `skipped`), and the run exits 0.

use netgw_labs::lab::{Lab, LabOptions};
use netgw_models::topology::Topology;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TOPO: &str = r#"
name: trust
topology:
  nodes:
    leaf1: {kind: arista_ceos}
    j1: {kind: juniper_vjunosswitch}
"#;

struct Fixture {
    _rt: tokio::runtime::Runtime,
    _lab: Lab,
    dir: tempfile::TempDir,
}

impl Fixture {
    /// The lab, and its inventory with every trust setting taken out (as containerlab's files have
    /// none) plus a Linux host.
    fn start() -> Fixture {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let topo = Topology::parse(TOPO).unwrap();
        let opts = LabOptions {
            snmp: false,
            ..LabOptions::default()
        };
        let lab = rt.block_on(Lab::start(&topo, opts)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        lab.write_inventory(&dir.path().join("lab.yml")).unwrap();
        let text = std::fs::read_to_string(dir.path().join("lab.yml")).unwrap();
        let mut inv: Value = serde_norway::from_str(&text).unwrap();
        for h in inv["hosts"].as_object_mut().unwrap().values_mut() {
            let netgw = h["data"]["netgw"].as_object_mut().unwrap();
            for k in ["tls_ca", "known_hosts", "accept_new_host_keys"] {
                netgw.remove(k);
            }
        }
        inv["hosts"]["h1"] = serde_json::json!({"hostname": "127.0.0.1", "platform": "linux", "data": {"kind": "linux"}});
        let f = Fixture {
            _rt: rt,
            _lab: lab,
            dir,
        };
        f.write_inventory(&inv);
        std::fs::create_dir_all(f.path("repo/nodes")).unwrap();
        f
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write_inventory(&self, inv: &Value) {
        std::fs::write(self.path("inv.yml"), serde_json::to_string(inv).unwrap()).unwrap();
    }

    fn inventory(&self) -> Value {
        serde_norway::from_str(&std::fs::read_to_string(self.path("inv.yml")).unwrap()).unwrap()
    }

    /// netgw in the fixture directory (its default `./known_hosts` is there), without any NETGW_*
    /// variable of the environment.
    fn netgw(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_netgw"));
        c.current_dir(self.dir.path())
            .args(["--repo", "repo"])
            .args(args)
            .args(["--inventory", "inv.yml"]);
        for (k, _) in std::env::vars() {
            if k.starts_with("NETGW_") {
                c.env_remove(k);
            }
        }
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn tls_trust_from_the_command_line_and_the_inventory_wins() {
    let f = Fixture::start();
    let ca = f.path("lab-ca.pem");
    let o = f.netgw(&["facts", "leaf1"], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("system's trusted CAs")
            && t.contains("--tls-ca")
            && t.contains("data.netgw.tls_ca"),
        "{t}"
    );
    let ca_arg = ca.to_str().unwrap();
    let o = f.netgw(&["--tls-ca", ca_arg, "facts", "leaf1"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let o = f.netgw(&["facts", "leaf1"], &[("NETGW_TLS_CA", &ca)]);
    assert!(o.status.success(), "{}", text(&o));
    let o = f.netgw(&["--no-tls-verify", "facts", "leaf1"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    // The inventory's own setting wins over the option: a CA file that is not the lab's.
    let mut inv = f.inventory();
    inv["hosts"]["leaf1"]["data"]["netgw"]["tls_ca"] = Value::String("other-ca.pem".into());
    f.write_inventory(&inv);
    let o = f.netgw(&["--tls-ca", ca_arg, "facts", "leaf1"], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("other-ca.pem"), "{t}");
}

#[test]
fn host_key_trust_from_the_command_line_and_the_inventory_wins() {
    let f = Fixture::start();
    let kh = f.path("lab-known_hosts");
    let o = f.netgw(&["facts", "j1"], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("is unknown")
            && t.contains("known_hosts file used: known_hosts")
            && t.contains("--known-hosts")
            && t.contains("--accept-new-host-keys"),
        "{t}"
    );
    let o = f.netgw(&["--known-hosts", kh.to_str().unwrap(), "facts", "j1"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    // Trust on first use: the key is recorded in the file the option names.
    let fresh = f.path("fresh_known_hosts");
    let o = f.netgw(
        &["facts", "j1"],
        &[
            ("NETGW_KNOWN_HOSTS", &fresh),
            ("NETGW_ACCEPT_NEW_HOST_KEYS", Path::new("1")),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::read_to_string(&fresh)
            .unwrap()
            .contains("127.0.0.1")
    );
    // The inventory's own known_hosts wins over the option.
    let mut inv = f.inventory();
    inv["hosts"]["j1"]["data"]["netgw"]["known_hosts"] = Value::String("inv_known_hosts".into());
    f.write_inventory(&inv);
    let o = f.netgw(&["--known-hosts", kh.to_str().unwrap(), "facts", "j1"], &[]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("known_hosts file used: inv_known_hosts"), "{t}");
}

#[test]
fn a_host_netgw_does_not_drive_is_skipped_and_the_run_succeeds() {
    let f = Fixture::start();
    let ca = f.path("lab-ca.pem");
    let kh = f.path("lab-known_hosts");
    let args = [
        "--tls-ca",
        ca.to_str().unwrap(),
        "--known-hosts",
        kh.to_str().unwrap(),
        "converge",
    ];
    // A node file under a near name: the store has no node leaf1.
    std::fs::write(
        f.path("repo/nodes/leaf-1.json"),
        r#"{"name": "leaf-1", "chef_environment": "_default", "run_list": []}"#,
    )
    .unwrap();
    let o = f.netgw(&[&args[..], &["--format", "json"]].concat(), &[]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let status = |n: &str| {
        report["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .map(|x| x["status"].clone())
    };
    assert_eq!(status("h1"), Some("skipped".into()), "{t}");
    assert_eq!(status("leaf1"), Some("success".into()), "{t}");
    assert_eq!(status("j1"), Some("success".into()), "{t}");
    assert_eq!(report["summary"]["skipped"], 1, "{t}");
    assert_eq!(report["summary"]["failed"], 0, "{t}");
    assert_eq!(report["summary"]["missing_nodes"], 2, "{t}");
    let leaf1 = report["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "leaf1")
        .unwrap();
    let w = leaf1["warnings"][0].as_str().unwrap_or_default();
    assert!(
        w.contains("node leaf1 is not in the store")
            && w.contains("nodes/leaf1.json")
            && w.contains("did you mean node leaf-1?"),
        "{t}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("h1: skipped"))
        .collect();
    assert_eq!(lines.len(), 1, "one warning line: {t}");
    assert!(lines[0].contains("Linux"), "{t}");
    let o = f.netgw(&args, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        out.contains("netgw run for h1 skipped: platform \"linux\"")
            && out.contains("2 succeeded, 0 failed, 1 skipped"),
        "{out}"
    );
}
