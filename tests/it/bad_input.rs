//! The bad-input catalogue: every case feeds netgw one malformed input and asserts (1) a clear error
//! that names the input and what was wrong, (2) the documented exit code, and (3) that nothing stored
//! changed (the repo directory is byte-for-byte the same afterwards).
//!
//! Parser-level cases for device replies (NETCONF/XML, eAPI and iControl JSON, CLI text) live beside
//! each parser; this file covers what a user hands the CLI: repo files, node names, run-lists,
//! attributes, resources and inventories.

use crate::common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()) {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".locks") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().filter_map(|e| e.ok()) {
        let p = e.path();
        let dst = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dst);
        } else {
            std::fs::copy(&p, &dst).unwrap();
        }
    }
}

/// A fresh copy of tests/repo plus extra files.
fn repo(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&common::root().join("tests/repo"), d.path());
    for (path, body) in extra {
        let p = d.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    d
}

struct Case {
    name: &'static str,
    files: Vec<(&'static str, String)>,
    args: Vec<String>,
    code: i32,
    /// Every string must appear in stderr (or stdout for JSON reports).
    expect: Vec<&'static str>,
}

fn case(
    name: &'static str,
    files: &[(&'static str, &str)],
    args: &[&str],
    code: i32,
    expect: &[&'static str],
) -> Case {
    Case {
        name,
        files: files.iter().map(|(p, b)| (*p, b.to_string())).collect(),
        args: args.iter().map(|s| s.to_string()).collect(),
        code,
        expect: expect.to_vec(),
    }
}

fn node(name: &str, run_list: &str, normal: &str) -> String {
    format!(r#"{{"name":"{name}","run_list":{run_list},"normal":{normal}}}"#)
}

fn vlans_node(name: &str, vlans: &str) -> String {
    node(
        name,
        r#"["recipe[netdev::vlans]"]"#,
        &format!(r#"{{"netdev":{{"vlans":{vlans}}}}}"#),
    )
}

fn links_node(name: &str, links: &str) -> String {
    node(
        name,
        r#"["recipe[netdev::links]"]"#,
        &format!(r#"{{"netdev":{{"links":{links}}}}}"#),
    )
}

/// An inventory whose devices are unreachable: resource errors are found before any connection for
/// repo-level problems, and the device layer is never reached for them.
const INV: &str = "hosts:\n  n1: {hostname: 127.0.0.1, port: 1, platform: eos}\n";

fn catalogue() -> Vec<Case> {
    let big = format!(
        r#"{{"name":"big","normal":{{"blob":"{}"}}}}"#,
        "x".repeat(20)
    );
    let _ = big;
    vec![
        // --- node names (6)
        case(
            "name with space",
            &[],
            &["node", "show", "sw 1"],
            2,
            &["invalid node name \"sw 1\"", "whitespace"],
        ),
        case(
            "name with slash",
            &[],
            &["node", "show", "../etc/passwd"],
            2,
            &["invalid node name", "path separator"],
        ),
        case(
            "name with semicolon",
            &[],
            &["node", "show", "sw1;reboot"],
            2,
            &["invalid node name \"sw1;reboot\""],
        ),
        case(
            "name with pipe",
            &[],
            &["expand", "sw1|x"],
            2,
            &["invalid node name \"sw1|x\""],
        ),
        case(
            "name with newline",
            &[],
            &["node", "show", "sw1\nx"],
            2,
            &["invalid node name", "control character"],
        ),
        case(
            "empty name",
            &[],
            &["node", "show", ""],
            2,
            &["invalid node name \"\"", "empty"],
        ),
        // --- repo JSON (11)
        case(
            "a node the repo has no file for",
            &[],
            &["expand", "web2"],
            2,
            &["node \"web2\" not found", "did you mean node web1?"],
        ),
        case(
            "node file named for another node",
            &[("nodes/j0.json", "{\"name\": \"other\"}")],
            &["node", "show", "j0"],
            2,
            &[
                "nodes/j0.json",
                "field `name`: is \"other\" but the file is named for \"j0\"",
            ],
        ),
        case(
            "node JSON syntax",
            &[("nodes/j1.json", "{\"name\": \"j1\", ")],
            &["node", "show", "j1"],
            2,
            &["nodes/j1.json", "invalid JSON", "line 1"],
        ),
        case(
            "node JSON trailing comma",
            &[("nodes/j2.json", "{\"name\":\"j2\",}")],
            &["node", "show", "j2"],
            2,
            &["nodes/j2.json", "invalid JSON"],
        ),
        case(
            "node JSON with a second document after it",
            &[(
                "nodes/j2b.json",
                "{\"name\":\"j2b\"}\n{\"name\":\"j2b\",\"run_list\":[]}\n",
            )],
            &["node", "show", "j2b"],
            2,
            &[
                "nodes/j2b.json",
                "invalid JSON",
                "trailing characters",
                "line 2",
            ],
        ),
        case(
            "node name mismatch",
            &[("nodes/j3.json", "{\"name\":\"other\"}")],
            &["node", "show", "j3"],
            2,
            &["nodes/j3.json", "field `name`"],
        ),
        case(
            "normal not a map",
            &[("nodes/j4.json", "{\"name\":\"j4\",\"normal\":[1]}")],
            &["node", "show", "j4"],
            2,
            &["nodes/j4.json", "field `normal`"],
        ),
        case(
            "run_list not a list",
            &[(
                "nodes/j5.json",
                "{\"name\":\"j5\",\"run_list\":\"recipe[x]\"}",
            )],
            &["node", "show", "j5"],
            2,
            &["nodes/j5.json", "run_list"],
        ),
        case(
            "bad environment name",
            &[(
                "nodes/j6.json",
                "{\"name\":\"j6\",\"chef_environment\":\"pr od\"}",
            )],
            &["node", "show", "j6"],
            2,
            &["nodes/j6.json", "pr od"],
        ),
        case(
            "node key typo",
            &[(
                "nodes/k1.json",
                r#"{"name":"k1","runlist":["recipe[netdev::vlans]"]}"#,
            )],
            &["node", "show", "k1"],
            2,
            &["nodes/k1.json", "`runlist`", "did you mean `run_list`"],
        ),
        case(
            "role key typo",
            &[
                ("nodes/k2.json", &node("k2", r#"["role[base]"]"#, "{}")),
                (
                    "roles/base.json",
                    r#"{"name":"base","defaults_attributes":{}}"#,
                ),
            ],
            &["node", "show", "k2"],
            2,
            &["roles/base.json", "did you mean `default_attributes`"],
        ),
        case(
            "role JSON syntax",
            &[
                ("nodes/j7.json", &node("j7", r#"["role[broken]"]"#, "{}")),
                ("roles/broken.json", "{\"name\":"),
            ],
            &["node", "show", "j7"],
            2,
            &["roles/broken.json", "invalid JSON"],
        ),
        case(
            "environment JSON wrong type",
            &[
                (
                    "nodes/j8.json",
                    "{\"name\":\"j8\",\"chef_environment\":\"weird\"}",
                ),
                (
                    "environments/weird.json",
                    "{\"name\":\"weird\",\"default_attributes\":5}",
                ),
            ],
            &["node", "show", "j8"],
            2,
            &["environments/weird.json", "default_attributes"],
        ),
        // --- run-list items (8)
        case(
            "unclosed role",
            &[("nodes/r1.json", &node("r1", r#"["role[leaf"]"#, "{}"))],
            &["node", "show", "r1"],
            2,
            &["nodes/r1.json", "role[leaf"],
        ),
        case(
            "empty recipe",
            &[("nodes/r2.json", &node("r2", r#"["recipe[]"]"#, "{}"))],
            &["node", "show", "r2"],
            2,
            &["recipe[]", "empty"],
        ),
        case(
            "bad version",
            &[("nodes/r3.json", &node("r3", r#"["recipe[x@1]"]"#, "{}"))],
            &["node", "show", "r3"],
            2,
            &["recipe[x@1]", "version"],
        ),
        case(
            "unknown item type",
            &[("nodes/r4.json", &node("r4", r#"["rol[x]"]"#, "{}"))],
            &["node", "show", "r4"],
            2,
            &["rol[x]", "recipe[NAME] or role[NAME]"],
        ),
        case(
            "recipe path traversal",
            &[(
                "nodes/r5.json",
                &node("r5", r#"["recipe[../../etc]"]"#, "{}"),
            )],
            &["node", "show", "r5"],
            2,
            &["recipe[../../etc]"],
        ),
        case(
            "empty comma item",
            &[(
                "nodes/r6.json",
                &node("r6", r#"["recipe[x],,role[a]"]"#, "{}"),
            )],
            &["node", "show", "r6"],
            2,
            &["empty"],
        ),
        case(
            "unknown recipe",
            &[(
                "nodes/r7.json",
                &node("r7", r#"["recipe[nosuch::thing]"]"#, "{}"),
            )],
            &["node", "show", "r7"],
            1,
            &[
                "unknown recipe \"nosuch::thing\"",
                "cookbooks/nosuch/recipes/thing.yml",
            ],
        ),
        case(
            "missing roles named",
            &[(
                "nodes/r8.json",
                &node("r8", r#"["role[ghost1]","role[ghost2]"]"#, "{}"),
            )],
            &["expand", "r8"],
            1,
            &["ghost1", "ghost2", "missing role"],
        ),
        case(
            "missing role typo names the nearest",
            &[
                ("nodes/r9.json", &node("r9", r#"["role[acess]"]"#, "{}")),
                ("roles/access.json", r#"{"name":"access"}"#),
            ],
            &["node", "show", "r9"],
            1,
            &["acess", "did you mean role access?"],
        ),
        // --- cookbook YAML (4)
        case(
            "attribute file YAML syntax",
            &[
                ("nodes/c1.json", &node("c1", r#"["recipe[badcb]"]"#, "{}")),
                ("cookbooks/badcb/recipes/default.yml", "resources: []\n"),
                (
                    "cookbooks/badcb/attributes/default.yml",
                    "default: [unclosed\n",
                ),
            ],
            &["node", "show", "c1"],
            2,
            &["cookbooks/badcb/attributes/default.yml", "invalid YAML"],
        ),
        case(
            "attribute file unknown level",
            &[
                ("nodes/c2.json", &node("c2", r#"["recipe[lvl]"]"#, "{}")),
                ("cookbooks/lvl/recipes/default.yml", "resources: []\n"),
                ("cookbooks/lvl/attributes/default.yml", "defualt: {a: 1}\n"),
            ],
            &["node", "show", "c2"],
            2,
            &[
                "cookbooks/lvl/attributes/default.yml",
                "defualt",
                "unknown precedence level",
            ],
        ),
        case(
            "recipe unknown key",
            &[
                ("nodes/c3.json", &node("c3", r#"["recipe[rk]"]"#, "{}")),
                ("cookbooks/rk/recipes/default.yml", "resorces: []\n"),
            ],
            &["node", "show", "c3"],
            2,
            &["cookbooks/rk/recipes/default.yml", "resorces"],
        ),
        case(
            "recipe YAML tag",
            &[
                ("nodes/c4.json", &node("c4", r#"["recipe[tg]"]"#, "{}")),
                (
                    "cookbooks/tg/recipes/default.yml",
                    "resources: !!binary aGVsbG8=\n",
                ),
            ],
            &["node", "show", "c4"],
            2,
            &["cookbooks/tg/recipes/default.yml"],
        ),
        // --- Ruby cookbooks (3): evaluated statically, refused with file, line and construct
        case(
            "ruby attribute file outside the subset",
            &[
                ("nodes/c5.json", &node("c5", r#"["recipe[rbattr]"]"#, "{}")),
                ("cookbooks/rbattr/recipes/default.rb", "\n"),
                (
                    "cookbooks/rbattr/attributes/default.rb",
                    "default['a'] = 1\ndefault['b'] = `hostname`\n",
                ),
            ],
            &["node", "show", "c5"],
            2,
            &[
                "cookbooks/rbattr/attributes/default.rb:2: shell command (backticks)",
                "nothing is run",
            ],
        ),
        case(
            "ruby recipe syntax error",
            &[
                ("nodes/c6.json", &node("c6", r#"["recipe[rbsyn]"]"#, "{}")),
                (
                    "cookbooks/rbsyn/recipes/default.rb",
                    "netdev_vlan 'web' do\n  vlan_id 10\n",
                ),
            ],
            &["node", "show", "c6"],
            2,
            &["cookbooks/rbsyn/recipes/default.rb:3: syntax error"],
        ),
        // A hostile cookbook: one expression nested 100,000 deep (the parser and the drop of its
        // tree recurse on every `+`) and metadata nested 20,000 `if`s deep; the process survives.
        case(
            "ruby nested deep enough to overflow a stack",
            &[
                ("nodes/c8.json", &node("c8", r#"["recipe[rbdeep]"]"#, "{}")),
                ("cookbooks/rbdeep/recipes/default.rb", "\n"),
                (
                    "cookbooks/rbdeep/attributes/default.rb",
                    Box::leak(
                        format!("x = 1\ndefault['a'] = 1{}\n", "+1".repeat(100_000))
                            .into_boxed_str(),
                    ),
                ),
            ],
            &["node", "show", "c8"],
            2,
            &[
                "cookbooks/rbdeep/attributes/default.rb:2:",
                "nested more than 200 levels deep",
            ],
        ),
        case(
            "ruby brackets nested 30,000 deep",
            &[
                ("nodes/c9.json", &node("c9", r#"["recipe[rbbr]"]"#, "{}")),
                ("cookbooks/rbbr/recipes/default.rb", "\n"),
                (
                    "cookbooks/rbbr/metadata.rb",
                    Box::leak(
                        format!(
                            "name 'rbbr'\n{}1\n{}",
                            "if true\n".repeat(20_000),
                            "end\n".repeat(20_000)
                        )
                        .into_boxed_str(),
                    ),
                ),
                (
                    "cookbooks/rbbr/attributes/default.rb",
                    Box::leak(format!("default['a'] = {}\n", "[".repeat(30_000)).into_boxed_str()),
                ),
            ],
            &["node", "show", "c9"],
            2,
            &["cookbooks/rbbr/attributes/default.rb:1: brackets nested too deep"],
        ),
        case(
            "metadata.rb bad constraint",
            &[
                ("nodes/c7.json", &node("c7", r#"["recipe[rbmd]"]"#, "{}")),
                ("cookbooks/rbmd/recipes/default.rb", "\n"),
                (
                    "cookbooks/rbmd/metadata.rb",
                    "name 'rbmd'\ndepends 'netdev', 'newest'\n",
                ),
            ],
            &["node", "show", "c7"],
            2,
            &[
                "cookbooks/rbmd/metadata.rb:2: `depends`",
                "not a version constraint",
            ],
        ),
        // --- attribute path (2)
        case(
            "attribute path empty segment",
            &[],
            &["node", "show", "web1", "--attribute", "apache..x"],
            2,
            &["apache..x", "empty segment"],
        ),
        case(
            "attribute not set",
            &[],
            &["node", "show", "web1", "--attribute", "nope.nothing"],
            1,
            &["nope.nothing is not set"],
        ),
        // --- resources via converge (compile errors are found before any device is touched) (14)
        case(
            "vlan id 0",
            &[(
                "nodes/n1.json",
                &vlans_node("n1", r#"{"0":{"name":"zero"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["vlan[0]", "out of range"],
        ),
        case(
            "vlan id 4095",
            &[("nodes/n1.json", &vlans_node("n1", r#"{"4095":{}}"#))],
            &["converge", "n1"],
            1,
            &["vlan[4095]", "4095 is out of range"],
        ),
        case(
            "vlan id 5000",
            &[("nodes/n1.json", &vlans_node("n1", r#"{"5000":{}}"#))],
            &["converge", "n1"],
            1,
            &["vlan[5000]", "out of range"],
        ),
        case(
            "vlan id not a number",
            &[("nodes/n1.json", &vlans_node("n1", r#"{"ten":{}}"#))],
            &["converge", "n1"],
            1,
            &["vlan[ten]", "not a number"],
        ),
        case(
            "vlan name newline",
            &[(
                "nodes/n1.json",
                &vlans_node("n1", r#"{"10":{"name":"a\nvlan 20"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["vlan[10]", "control character"],
        ),
        case(
            "vlan name semicolon",
            &[(
                "nodes/n1.json",
                &vlans_node("n1", r#"{"10":{"name":"a;reload"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["vlan[10]", "';'"],
        ),
        case(
            "vlan name pipe",
            &[(
                "nodes/n1.json",
                &vlans_node("n1", r#"{"10":{"name":"a|b"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["vlan[10]", "'|'"],
        ),
        case(
            "vlan name non-ascii",
            &[(
                "nodes/n1.json",
                &vlans_node("n1", r#"{"10":{"name":"caf\u00e9"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["vlan[10]", "non-ASCII"],
        ),
        case(
            "vlan name escape char",
            &[(
                "nodes/n1.json",
                &vlans_node("n1", r#"{"10":{"name":"a\u001b[2J"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["vlan[10]", "control character"],
        ),
        case(
            "vlan unknown property",
            &[("nodes/n1.json", &vlans_node("n1", r#"{"10":{"nmae":"x"}}"#))],
            &["converge", "n1"],
            1,
            &["vlan[10]", "nmae"],
        ),
        case(
            "interface name injection",
            &[("nodes/n1.json", &links_node("n1", r#"{"Et1\nreload":{}}"#))],
            &["converge", "n1"],
            1,
            &["link[Et1\nreload]", "control character"],
        ),
        case(
            "interface description pipe",
            &[(
                "nodes/n1.json",
                &links_node("n1", r#"{"Et1":{"description":"x | include y"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["link[Et1]", "'|'"],
        ),
        case(
            "trunk list backwards",
            &[(
                "nodes/n1.json",
                &links_node("n1", r#"{"Et1":{"mode":"trunk","trunk_vlans":"20-10"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["link[Et1]", "backwards"],
        ),
        case(
            "access with trunk list",
            &[(
                "nodes/n1.json",
                &links_node("n1", r#"{"Et1":{"mode":"access","trunk_vlans":"10"}}"#),
            )],
            &["converge", "n1"],
            1,
            &["link[Et1]", "access port cannot have trunk_vlans"],
        ),
        case(
            "bad policy",
            &[(
                "nodes/n1.json",
                &node(
                    "n1",
                    r#"["recipe[netdev::vlans]"]"#,
                    r#"{"netdev":{"vlan_policy":"wipe","vlans":{}}}"#,
                ),
            )],
            &["converge", "n1"],
            1,
            &["netdev.vlan_policy", "wipe"],
        ),
        case(
            "mtu out of range",
            &[("nodes/n1.json", &links_node("n1", r#"{"Et1":{"mtu":20}}"#))],
            &["converge", "n1"],
            1,
            &["link[Et1]", "mtu", "out of range"],
        ),
        // --- inventories (7)
        case(
            "inventory with host: for hosts:",
            &[(
                "inv.yml",
                "host:\n  n1: {hostname: x, platform: eos}\ndefaults: {username: u}\n",
            )],
            &["converge", "--inventory", "{repo}/inv.yml"],
            2,
            &["inv.yml", "is `host:` meant to be `hosts:`?"],
        ),
        case(
            "inventory YAML syntax",
            &[("inv.yml", "hosts: [unclosed\n")],
            &["converge", "--inventory", "{repo}/inv.yml"],
            2,
            &["inv.yml", "invalid YAML"],
        ),
        case(
            "inventory unknown field",
            &[("inv.yml", "hosts:\n  n1: {hostnme: x}\n")],
            &["converge", "--inventory", "{repo}/inv.yml"],
            2,
            &["inv.yml", "hostnme"],
        ),
        case(
            "inventory bad host name",
            &[("inv.yml", "hosts:\n  'n 1': {hostname: x}\n")],
            &["converge", "--inventory", "{repo}/inv.yml"],
            2,
            &["inv.yml", "invalid node name"],
        ),
        case(
            "inventory unknown node requested",
            &[("inv.yml", INV)],
            &["converge", "nope", "--inventory", "{repo}/inv.yml"],
            2,
            &["term \"nope\" matches no host or group of inventory"],
        ),
        case(
            "inventory unknown platform",
            &[(
                "inv.yml",
                "hosts:\n  n1: {hostname: 127.0.0.1, platform: arista_eoss}\n",
            )],
            &["converge", "--inventory", "{repo}/inv.yml"],
            1,
            &[
                "n1",
                "arista_eoss",
                "not known",
                "did you mean \"arista_eos\"",
            ],
        ),
        // A platform netgw does not drive is skipped, not failed (issue 14).
        case(
            "inventory platform not driven",
            &[(
                "inv.yml",
                "hosts:\n  n1: {hostname: 127.0.0.1, platform: nokia_srlinux}\n",
            )],
            &["converge", "--inventory", "{repo}/inv.yml"],
            0,
            &["n1", "nokia_srlinux", "skipped", "SR Linux"],
        ),
        case(
            "inventory missing credential",
            &[(
                "inv.yml",
                "hosts:\n  n1: {hostname: 127.0.0.1, platform: eos, password: '${NETGW_SURELY_UNSET_1234}'}\n",
            )],
            &["converge", "--inventory", "{repo}/inv.yml"],
            1,
            &["NETGW_SURELY_UNSET_1234"],
        ),
        case("no inventory", &[], &["converge"], 2, &["--inventory"]),
        case(
            "concurrency zero",
            &[("inv.yml", INV)],
            &[
                "converge",
                "--concurrency",
                "0",
                "--inventory",
                "{repo}/inv.yml",
            ],
            2,
            &["concurrency"],
        ),
    ]
}

#[test]
fn every_bad_input_is_refused_clearly_and_changes_nothing() {
    let cases = catalogue();
    assert!(cases.len() >= 50, "the catalogue has {} cases", cases.len());
    // docs/reliability.md states the size of this catalogue: keep the claim true.
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reliability.md"))
        .unwrap();
    let claim = format!(
        "`tests/it/bad_input.rs` is a catalogue of {} cases",
        cases.len()
    );
    assert!(
        doc.contains(&claim),
        "docs/reliability.md must say: {claim}"
    );
    let mut failures = Vec::new();
    for c in cases {
        let files: Vec<(&str, &str)> = c.files.iter().map(|(p, b)| (*p, b.as_str())).collect();
        let d = repo(&files);
        let inv_default = d.path().join("default-inv.yml");
        std::fs::write(&inv_default, INV).unwrap();
        let before = snapshot(d.path());
        let mut args: Vec<String> = c
            .args
            .iter()
            .map(|a| a.replace("{repo}", &d.path().display().to_string()))
            .collect();
        if args[0] == "converge"
            && !args.iter().any(|a| a == "--inventory")
            && c.name != "no inventory"
        {
            args.push("--inventory".into());
            args.push(inv_default.display().to_string());
        }
        let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(d.path())
            .args(&args)
            .env_remove("NETGW_REPO")
            .env_remove("NETGW_INVENTORY")
            .output()
            .unwrap();
        let code = o.status.code().unwrap_or(-1);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&o.stdout)
        );
        if code != c.code {
            failures.push(format!(
                "{}: exit {code}, expected {}\n{text}",
                c.name, c.code
            ));
            continue;
        }
        for e in &c.expect {
            if !text.contains(e) {
                failures.push(format!("{}: output lacks {e:?}\n{text}", c.name));
            }
        }
        let after = snapshot(d.path());
        let changed: Vec<String> = after
            .iter()
            .filter(|(p, b)| before.get(*p) != Some(b))
            .map(|(p, _)| p.display().to_string())
            .chain(
                before
                    .keys()
                    .filter(|p| !after.contains_key(*p))
                    .map(|p| p.display().to_string()),
            )
            .collect();
        if !changed.is_empty() {
            failures.push(format!("{}: stored files changed: {changed:?}", c.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
