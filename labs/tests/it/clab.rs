//! netgw-lab as a containerlab stand-in: every node on its own loopback address and its kind's real
//! management ports, containerlab's credentials, the lab directory, and what each kind refuses.
//! Addresses are in 127.93.0.0/16 (nothing else in the suite uses it).

use netgw_drivers::driver::{Driver, DriverError, Platform};
use netgw_drivers::junos::JunosDriver;
use netgw_drivers::target::DeviceTarget;
use netgw_labs::clab::ClabPlan;
use netgw_labs::{Lab, LabOptions};
use netgw_models::plan::{Policy, plan};
use netgw_models::resource::{Link, Vlan, VlanId};
use netgw_models::secret::Secret;
use netgw_models::topology::Topology;
use netgw_transport::Timeouts;
use netgw_transport::ssh::{
    CliPlatform, HostKeyPolicy, PlatformKind, SshAuth, SshSession, SshTarget,
};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const TOPO: &str = r#"
name: kinds
mgmt: {ipv4-subnet: 172.20.20.0/24}
topology:
  nodes:
    ceos1: {kind: arista_ceos}
    crpd1: {kind: juniper_crpd}
    r1: {kind: cisco_iol}
    sw1: {kind: cisco_iol, type: L2}
    vjs: {kind: juniper_vjunosswitch, mgmt-ipv4: 172.20.20.50}
    cvx: {kind: nvidia_cumulusvx}
    srl: {kind: nokia_srlinux}
    xr: {kind: cisco_c8000}
    h1: {kind: linux}
"#;

async fn start(dir: &Path, third_octet: u8) -> Lab {
    let topo = Topology::parse(TOPO).unwrap();
    let file = dir.join("kinds.clab.yml");
    std::fs::write(&file, TOPO).unwrap();
    let lo = format!("127.93.{third_octet}.0").parse().unwrap();
    let plan = ClabPlan::new(TOPO, &topo, &file, None, Some(lo)).unwrap();
    let opts = LabOptions {
        clab: Some(plan),
        snmp: true,
        ..LabOptions::default()
    };
    Lab::start(&topo, opts).await.unwrap()
}

fn timeouts() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(5),
        idle: Duration::from_secs(30),
        operation: Duration::from_secs(10),
    }
}

fn ssh(lab: &Lab, kh: &Path, node: &str, user: &str, pass: &str) -> SshTarget {
    let n = lab.node(node).unwrap();
    SshTarget {
        device: node.into(),
        host: n.addr.to_string(),
        port: n.port,
        username: user.into(),
        auth: SshAuth::Password(Secret::new(pass)),
        host_keys: HostKeyPolicy {
            known_hosts: kh.to_path_buf(),
            accept_new: false,
        },
        timeouts: timeouts(),
    }
}

#[tokio::test]
async fn each_node_on_its_own_address_and_real_ports_with_the_lab_directory() {
    let dir = tempfile::tempdir().unwrap();
    let lab = start(dir.path(), 1).await;
    let at = |n: &str| {
        let n = lab.node(n).unwrap();
        (n.addr.to_string(), n.port, n.snmp_port)
    };
    // Static address kept (host part), dynamic ones from .2 in name order, skipping it.
    assert_eq!(at("vjs"), ("127.93.1.50".into(), 830, Some(161)));
    assert_eq!(at("ceos1"), ("127.93.1.2".into(), 443, Some(161)));
    assert_eq!(at("crpd1"), ("127.93.1.3".into(), 830, Some(161)));
    assert_eq!(at("r1").1, 22);
    assert_eq!(lab.nodes.len(), 5, "{:?}", lab.skipped);
    for kind in [
        "kind nvidia_cumulusvx is not simulated",
        "kind nokia_srlinux is not simulated",
        "kind cisco_c8000 is not simulated",
        "kind linux is not simulated",
    ] {
        assert!(
            lab.skipped.iter().any(|s| s.contains(kind)),
            "{kind}: {:?}",
            lab.skipped
        );
    }
    assert!(!lab.skipped.iter().any(|s| s.contains("platform")));
    let lab_dir = lab.write_clab(None).unwrap().to_path_buf();
    assert_eq!(lab_dir, dir.path().join("clab-kinds"));
    let mode = |f: &str| {
        std::fs::metadata(lab_dir.join(f))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("nornir-simple-inventory.yml"), 0o600);
    assert_eq!(mode("ansible-inventory.yml"), 0o600);
    assert_eq!(mode("topology-data.json"), 0o600);
    let ca = std::fs::read_to_string(lab_dir.join(".tls/ca/ca.pem")).unwrap();
    assert_eq!(ca, lab.tls.ca_pem);
    let kh = std::fs::read_to_string(lab_dir.join("known_hosts")).unwrap();
    assert!(
        kh.contains(&format!("127.93.1.50]:830 {}", lab.host_key))
            && kh
                .lines()
                .any(|l| l == format!("{} {}", lab.node("r1").unwrap().addr, lab.host_key)),
        "{kh}"
    );
    // The kind's containerlab credentials, verified host key: cRPD is root/clab123, not admin/admin.
    let khp = lab_dir.join("known_hosts");
    let s = SshSession::connect(&ssh(&lab, &khp, "r1", "admin", "admin")).await;
    assert!(s.is_ok(), "{:?}", s.err());
    let mut t = DeviceTarget::new("crpd1", Platform::Junos, "127.93.1.3");
    t.port = Some(830);
    t.username = "admin".into();
    t.password = Some(Secret::new("admin"));
    t.known_hosts = khp.clone();
    t.timeouts = timeouts();
    assert!(JunosDriver::connect(&t).await.is_err());
    t.username = "root".into();
    t.password = Some(Secret::new("clab123"));
    assert!(JunosDriver::connect(&t).await.is_ok());
}

#[tokio::test]
async fn crpd_refuses_vlans_with_junos_words() {
    let dir = tempfile::tempdir().unwrap();
    let lab = start(dir.path(), 2).await;
    let lab_dir = lab.write_clab(None).unwrap().to_path_buf();
    let mut t = DeviceTarget::new("crpd1", Platform::Junos, "127.93.2.3");
    t.port = Some(830);
    t.username = "root".into();
    t.password = Some(Secret::new("clab123"));
    t.known_hosts = lab_dir.join("known_hosts");
    t.timeouts = timeouts();
    let mut d = JunosDriver::connect(&t).await.unwrap();
    let before = d.observe().await.unwrap();
    let mut v = Vlan::new(VlanId::new(10).unwrap());
    v.name = Some("web".into());
    let p = plan(
        &[v],
        &before.vlans,
        Policy::Merge,
        &[],
        &before.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    let e: DriverError = d.stage(&p).await.unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("syntax error"), "{msg}");
    // A description alone is routing-daemon configuration it takes.
    let port = before.links.first().map(|l| l.name.clone()).unwrap();
    let mut l = Link::new(&port);
    l.description = Some("to r1".into());
    let p = plan(
        &[],
        &before.vlans,
        Policy::Merge,
        &[l],
        &before.links,
        Policy::Merge,
        &d.plan_rules(),
    );
    d.discard().await.ok();
    assert!(d.stage(&p).await.is_ok());
}

#[tokio::test]
async fn an_iol_router_refuses_switch_configuration_and_an_l2_iol_takes_it() {
    let dir = tempfile::tempdir().unwrap();
    let lab = start(dir.path(), 3).await;
    let kh = lab.write_clab(None).unwrap().join("known_hosts");
    for (node, refused) in [("r1", true), ("sw1", false)] {
        let s = SshSession::connect(&ssh(&lab, &kh, node, "admin", "admin"))
            .await
            .unwrap();
        let mut sh = s.shell(CliPlatform::get(PlatformKind::Ios)).await.unwrap();
        for line in ["vlan 10", "interface Ethernet0/1\nswitchport mode access"] {
            let out = sh.config(&line.split('\n').collect::<Vec<_>>()).await;
            let text = format!("{out:?}");
            assert_eq!(
                text.contains("% Invalid input detected at '^' marker."),
                refused,
                "{node} {line}: {text}"
            );
        }
    }
}

fn netgw_lab(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_netgw-lab"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

#[test]
fn nothing_to_simulate_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hosts.clab.yml"),
        "name: hosts\ntopology:\n  nodes:\n    a: {kind: linux}\n    b: {kind: nokia_srlinux}\n",
    )
    .unwrap();
    let o = netgw_lab(&["up", "hosts.clab.yml", "--no-snmp"], dir.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("hosts.clab.yml: no node to simulate")
            && err.contains("kind nokia_srlinux is not simulated"),
        "{err}"
    );
    // Not a terminal: no ANSI colour codes in the warnings.
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(o.stdout.is_empty(), "no READY line");
}

#[test]
fn every_argument_has_help_text() {
    let o = Command::new(env!("CARGO_BIN_EXE_netgw-lab"))
        .args(["up", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    let mut args = 0;
    for line in help.lines() {
        let t = line.trim_start();
        if t.starts_with("--") || (t.starts_with('-') && t.len() > 2 && &t[2..3] == ",") {
            args += 1;
            // `--name <VALUE>  text` on one line, or the text on the next lines (long help).
            let rest = t.split("  ").skip(1).collect::<String>();
            let idx = help.find(line).unwrap() + line.len();
            let next = help[idx..].lines().nth(1).unwrap_or("").trim();
            assert!(
                !rest.trim().is_empty() || (!next.is_empty() && !next.starts_with('-')),
                "no help text: {line}"
            );
        }
    }
    assert!(args >= 19, "{help}");
}

#[tokio::test]
async fn inventory_out_creates_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let topo = Topology::parse("name: x\ntopology: {nodes: {sw1: {kind: arista_ceos}}}").unwrap();
    let lab = Lab::start(
        &topo,
        LabOptions {
            snmp: false,
            ..LabOptions::default()
        },
    )
    .await
    .unwrap();
    let inv = dir.path().join("lab/deeper/inventory.yml");
    lab.write_inventory(&inv).unwrap();
    let mode = std::fs::metadata(&inv).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the inventory holds the password");
    assert!(dir.path().join("lab/deeper/lab-ca.pem").exists());
}

/// containerlab's own expected outputs (core/inventory_test.go cases, tests/fixtures/containerlab,
/// SOURCES.md there): netgw-lab's rendering of the same topologies equals them, addresses mapped back.
#[test]
fn renders_containerlabs_own_inventory_test_cases() {
    let fixtures = netgw_drivers::testing::repo_root().join("tests/fixtures/containerlab");
    for (topo, expected, ansible) in [
        (
            "nornir/case1-default-platform/topo1.yml",
            "nornir/case1-default-platform/nornir-simple-inventory.yml",
            false,
        ),
        (
            "nornir/case4-default-groups-platform/topo8_nornir_groups.yml",
            "nornir/case4-default-groups-platform/nornir-simple-inventory.yml",
            false,
        ),
        (
            "ansible/core-inventory_test/case1/topo1.yml",
            "ansible/core-inventory_test/case1/ansible-inventory.yml",
            true,
        ),
        (
            "ansible/core-inventory_test/case2/topo8_ansible_groups.yml",
            "ansible/core-inventory_test/case2/ansible-inventory.yml",
            true,
        ),
    ] {
        // The cases give no subnet: their addresses are in 172.100.100.0/24.
        let text = format!(
            "mgmt: {{ipv4-subnet: 172.100.100.0/24}}\n{}",
            std::fs::read_to_string(fixtures.join(topo)).unwrap()
        );
        let t = Topology::parse(&text).unwrap();
        let plan = ClabPlan::new(&text, &t, Path::new("/x/t.clab.yml"), None, None).unwrap();
        let got = if ansible {
            netgw_labs::clab::ansible_inventory(&plan)
        } else {
            netgw_labs::clab::nornir_simple_inventory(&plan, None)
        };
        let got = got.replace("127.100.100.", "172.100.100.");
        let want = std::fs::read_to_string(fixtures.join(expected)).unwrap();
        // The fixtures drop the template's trailing space after an empty value.
        let trim = |s: &str| s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n");
        assert_eq!(trim(&got), trim(&want), "{topo}");
    }
}

/// `netgw-lab up TOPO --clab` under `umask 000` (mapped to 127.93.9.0/24): `Ok(child)` once READY,
/// else `Err(stderr)` when it exited.
fn clab_up(topo: &Path) -> Result<std::process::Child, String> {
    use std::io::BufRead;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("umask 000; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_netgw-lab"))
        .arg("up")
        .arg(topo)
        .args(["--clab", "--mgmt-loopback", "127.93.9.0", "--no-snmp"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    if out
        .lines()
        .map_while(Result::ok)
        .any(|l| l.starts_with("READY"))
    {
        return Ok(child);
    }
    let o = child.wait_with_output().unwrap();
    Err(String::from_utf8_lossy(&o.stderr).into_owned())
}

fn stop(mut c: std::process::Child) {
    let _ = c.kill();
    let _ = c.wait();
}

/// netgw-lab runs as root with `--clab`: a topology's `name:` must not lead its writes out of the
/// lab directory, a symlink or a directory another user planted there must not be written through,
/// and what it writes is private under `umask 000`.
#[test]
fn the_lab_directory_is_the_only_place_written_and_it_is_private() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let topo = d.join("t.clab.yml");
    let body = |name: &str| {
        format!(
            "name: {name:?}\nmgmt: {{ipv4-subnet: 172.20.9.0/24}}\ntopology:\n  nodes:\n    ceos1: {{kind: arista_ceos}}\n"
        )
    };
    // `..` through the name: `clab-..` then `..` lands beside the topology, in victim/.
    let victim = d.join("victim/pwn/known_hosts");
    std::fs::create_dir_all(victim.parent().unwrap()).unwrap();
    std::fs::write(&victim, "keep\n").unwrap();
    std::fs::write(&topo, body("../victim/pwn")).unwrap();
    let err = clab_up(&topo).map(stop).unwrap_err();
    assert!(
        err.contains("field `name`") && err.contains("containerlab's rule"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    assert!(!d.join("clab-..").exists());

    // A symlink planted in the lab directory: refused naming it, its target untouched.
    std::fs::write(&topo, body("lab1")).unwrap();
    let lab = d.join("clab-lab1");
    std::fs::create_dir(&lab).unwrap();
    std::fs::set_permissions(&lab, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&victim, lab.join("known_hosts")).unwrap();
    let err = clab_up(&topo).map(stop).unwrap_err();
    assert!(err.contains("known_hosts: is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    std::fs::remove_file(lab.join("known_hosts")).unwrap();
    // A lab directory another user owns (uid 65534 stands for them), or one others can write into.
    std::os::unix::fs::chown(&lab, Some(65534), Some(65534)).unwrap();
    let err = clab_up(&topo).map(stop).unwrap_err();
    assert!(err.contains("owned by uid 65534"), "{err}");
    std::os::unix::fs::chown(&lab, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&lab, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = clab_up(&topo).map(stop).unwrap_err();
    assert!(err.contains("lets group or others write"), "{err}");
    std::fs::remove_dir_all(&lab).unwrap();

    // Control: the same lab, nothing planted, comes up; under umask 000 its directories are 0700 and
    // its files (inventories with passwords, trust anchors) 0600.
    let child = clab_up(&topo).unwrap();
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().mode() & 0o777;
    for p in ["", ".tls", ".tls/ca"] {
        assert_eq!(mode(&lab.join(p)), 0o700, "{p}");
    }
    for f in [
        "known_hosts",
        ".tls/ca/ca.pem",
        "topology-data.json",
        "ansible-inventory.yml",
        "nornir-simple-inventory.yml",
    ] {
        assert_eq!(mode(&lab.join(f)), 0o600, "{f}");
    }
    stop(child);
}
