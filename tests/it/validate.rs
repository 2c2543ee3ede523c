//! `netgw validate`: a broken repo fails with every problem named by file, line and path (also as
//! GitHub annotations), the shipped example repo passes, and no device is contacted and no file
//! written.

use crate::common;
use std::path::Path;
use std::process::Command;

fn validate(repo: &Path, args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(repo)
        .arg("validate")
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), text)
}

#[test]
fn the_example_repo_is_valid() {
    let (code, text) = validate(&common::root().join("examples/repo"), &[]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("6 node(s) checked: 0 error(s), 0 warning(s)"),
        "{text}"
    );
}

#[test]
fn a_broken_repo_is_reported_by_file_line_and_path_without_touching_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let role = "{\n  \"name\": \"base\",\n  \"default_attributes\": {\n    \"netdev\": {\n      \"vlans\": {\n        \"5000\": {\"name\": \"big\"}\n      }\n    }\n  }\n}\n";
    common::write(&repo, "roles/base.json", role);
    common::write(
        &repo,
        "roles/core.json",
        r#"{"name":"core","defaults_attributes":{}}"#,
    );
    common::write(
        &repo,
        "nodes/sw1.json",
        r#"{"name":"sw1","run_list":["role[base]","recipe[netdev::vlans]"]}"#,
    );
    common::write(
        &repo,
        "nodes/sw2.json",
        r#"{"name":"sw2","runlist":["role[base]"]}"#,
    );
    common::write(
        &repo,
        "nodes/sw3.json",
        r#"{"name":"sw3","run_list":["role[bse]"]}"#,
    );
    // One interface in two spellings, from a role and from the node: both named, each where written.
    common::write(
        &repo,
        "roles/acc.json",
        r#"{"name":"acc","default_attributes":{"netdev":{"links":{"Ethernet1":{"description":"x"}}}}}"#,
    );
    common::write(
        &repo,
        "nodes/sw5.json",
        r#"{"name":"sw5","run_list":["role[acc]","recipe[netdev::links]"],"normal":{"netdev":{"links":{"Et1":{"acess_vlan":5}}}}}"#,
    );
    common::write(
        &repo,
        "nodes/sw6.json",
        r#"{"name":"sw6","run_list":["recipe[netdev::link]"]}"#,
    );
    // A device that accepts connections and never answers: a validate that dialled it would hang.
    let port = common::stalling_port();
    let inv = dir.path().join("inventory.yml");
    let mut hosts = String::new();
    for n in ["sw1", "sw2", "sw3", "sw4", "sw5", "sw6"] {
        hosts.push_str(&format!(
            "{n}: {{hostname: 127.0.0.1, port: {port}, platform: eos, username: u, password: p}}\n"
        ));
    }
    std::fs::write(&inv, hosts).unwrap();
    let before = snapshot(dir.path());

    let (code, text) = validate(&repo, &["--inventory", inv.to_str().unwrap(), "sw*:!sw4"]);
    assert_eq!(code, 1, "{text}");
    let expect = [
        // The role that set the out-of-range VLAN, its line, and the path inside it.
        "roles/base.json:6 (default_attributes.netdev.vlans.5000): error: node sw1: netdev::vlans vlan[5000]",
        // An unknown key: the line and the key, where it is written.
        "roles/core.json:1 (defaults_attributes): error:",
        "did you mean",
        "nodes/sw2.json:1 (runlist): error: node sw2",
        "missing role(s) in the run-list: bse",
        "did you mean role base?",
        "nodes/sw5.json:1 (normal.netdev.links.Et1): error: node sw5: netdev::links link[Et1]: the same interface is also declared as Ethernet1",
        "roles/acc.json:1 (default_attributes.netdev.links.Ethernet1): error: node sw5: netdev::links link[Ethernet1]: the same interface is also declared as Et1",
        "unknown recipe \"netdev::link\"",
        "did you mean netdev::links?",
        "5 node(s) checked: 7 error(s)",
    ];
    for e in expect {
        assert!(text.contains(e), "lacks {e:?}:\n{text}");
    }
    assert!(!text.contains("sw4"), "sw4 was excluded: {text}");

    let (code, text) = validate(&repo, &["--format", "github", "sw1"]);
    assert_eq!(code, 1, "{text}");
    let annotation = format!(
        "::error file={},line=6,title=netgw validate%3A node sw1::netdev::vlans vlan[5000]",
        repo.join("roles/base.json").display()
    );
    assert!(text.contains(&annotation), "lacks {annotation}:\n{text}");

    let (code, text) = validate(&repo, &["--format", "json", "sw1"]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(code, 1);
    assert_eq!(
        v["problems"][1]["path"], "default_attributes.netdev.vlans.5000",
        "{text}"
    );

    assert_eq!(snapshot(dir.path()), before, "validate wrote something");
}

/// The settings a run's drivers would refuse are errors of `validate` too, each naming the inventory,
/// the host and the setting, whichever setting wins: a boolean written `"no"`, a transport the
/// platform is not driven over, an eAPI scheme, an EOS host without a username, an SSH host without a
/// password or key. The good host passes.
#[test]
fn inventory_settings_a_run_would_refuse_fail_validate() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let hosts = [
        ("good", "platform: eos, username: u, password: p"),
        (
            "save",
            "platform: eos, username: u, password: p, data: {netgw: {save_config: \"no\"}}",
        ),
        (
            "sess",
            "platform: eos, username: u, password: p, data: {netgw: {eos_sessions: maybe}}",
        ),
        (
            "wmem",
            "platform: eos, username: u, password: p, data: {netgw: {eos_write_memory: 3}}",
        ),
        (
            "tport",
            "platform: eos, username: u, password: p, data: {netgw: {transport: ssh}}",
        ),
        // The connection's own `transport` wins over `eapi_transport`, whose bad value is still named.
        (
            "shadow",
            "platform: eos, username: u, password: p, data: {netgw: {eapi_transport: htps}}, connection_options: {eapi: {extras: {transport: https}}}",
        ),
        (
            "scheme",
            "platform: eos, username: u, password: p, connection_options: {eapi: {extras: {transport: htps}}}",
        ),
        (
            "nouser",
            "platform: eos, password: p, connection_options: {eapi: {hostname: 192.0.2.7}}",
        ),
        ("nopass", "platform: ios, username: u"),
        (
            "batch",
            "platform: nxos, username: u, password: p, data: {netgw: {cli_batch: 1}}",
        ),
        (
            "style",
            "platform: junos, username: u, password: p, data: {netgw: {junos_style: srx}}",
        ),
        (
            "reads",
            "platform: f5, username: u, password: p, data: {netgw: {rest_parallel_reads: yes please}}",
        ),
    ];
    let mut inv_text = String::from("hosts:\n");
    for (n, settings) in hosts {
        common::write(
            &repo,
            &format!("nodes/{n}.json"),
            &format!(r#"{{"name":"{n}"}}"#),
        );
        inv_text.push_str(&format!("  {n}: {{hostname: 127.0.0.1, {settings}}}\n"));
    }
    let inv = dir.path().join("inventory.yml");
    std::fs::write(&inv, inv_text).unwrap();
    let (code, text) = validate(&repo, &["--inventory", inv.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    let expect = [
        "inventory host save: option save_config must be true or false, not \"no\"",
        "inventory host sess: option eos_sessions must be true or false, not \"maybe\"",
        "inventory host wmem: option eos_write_memory must be true or false, not 3",
        "inventory host tport: data.netgw.transport: eos devices are driven over eapi only, not \"ssh\"",
        "inventory host shadow: option eapi_transport must be http or https, not \"htps\"",
        "inventory host scheme: eAPI transport \"htps\" is not http or https",
        "inventory host nouser: eAPI needs a username",
        "inventory host nopass: no password or key file for the ssh connection",
        "inventory host batch: option cli_batch must be true or false, not 1",
        "inventory host style: junos_style must be ex, els or mx, not \"srx\"",
        "inventory host reads: option rest_parallel_reads must be true or false",
        "12 node(s) checked: 11 error(s)",
    ];
    for e in expect {
        assert!(text.contains(e), "lacks {e:?}:\n{text}");
    }
    assert!(
        text.contains(&format!("{}: error: node save:", inv.display())),
        "{text}"
    );
    assert!(!text.contains("host good"), "{text}");
    // `netgw inventory` says the same of each host, and fails as a CI check of the inventory.
    let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .args(["inventory", "--format", "json", "--inventory"])
        .arg(&inv)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let hosts: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let error = |n: &str| {
        hosts
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == n)
            .unwrap()["error"]
            .clone()
    };
    assert_eq!(
        error("save"),
        "inventory host save: option save_config must be true or false, not \"no\""
    );
    assert!(error("good").is_null());
}

/// A misspelt environment is the node file's error, at its `chef_environment` line, with the
/// environment meant (a GitHub annotation on a file that does not exist shows nowhere); a node file
/// that does not exist and a selection of none name the node meant.
#[test]
fn misspelt_names_are_reported_where_written_with_the_name_meant() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    common::write(&repo, "environments/prod.json", r#"{"name":"prod"}"#);
    common::write(
        &repo,
        "nodes/sw1.json",
        "{\n  \"name\": \"sw1\",\n  \"chef_environment\": \"prodd\"\n}\n",
    );
    let (code, text) = validate(&repo, &["--format", "github"]);
    assert_eq!(code, 1, "{text}");
    let want = format!(
        "::error file={},line=3,title=netgw validate%3A node sw1::environment \"prodd\" not found",
        repo.join("nodes/sw1.json").display()
    );
    assert!(text.contains(&want), "lacks {want}:\n{text}");
    assert!(text.contains("did you mean prod?"), "{text}");

    let inv = dir.path().join("inventory.yml");
    std::fs::write(
        &inv,
        "hosts:\n  sw2: {hostname: h, platform: ios, username: u, password: p}\n",
    )
    .unwrap();
    common::write(&repo, "nodes/sw1.json", r#"{"name":"sw1"}"#);
    let (code, text) = validate(&repo, &["--inventory", inv.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("no node file") && text.contains("did you mean node sw1?"),
        "{text}"
    );
    let (code, text) = validate(&repo, &["--inventory", "inventry.yml"]);
    assert_eq!(
        code, 2,
        "a path that names nothing is a usage error: {text}"
    );
    assert!(
        text.contains("inventory inventry.yml: No such file"),
        "{text}"
    );
    let (code, text) = validate(&repo, &["sw9"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("term \"sw9\" matches no node file of")
            && text.contains("did you mean node sw1?"),
        "{text}"
    );
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}
