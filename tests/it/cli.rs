//! End-to-end tests of the `netgw` binary on the repo in tests/repo (see its README for what each node
//! exercises) and on the shipped example repo.

use crate::common::root;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

fn netgw_in(repo: &Path, args: &[&str]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(repo)
        .args(args)
        .env_remove("NETGW_REPO")
        .output()
        .expect("run netgw");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn netgw(args: &[&str]) -> Out {
    netgw_in(&root().join("tests/repo"), args)
}

fn attr(node: &str, path: &str) -> Value {
    let o = netgw(&[
        "node",
        "show",
        node,
        "--attribute",
        path,
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 0, "{path}: {}", o.stderr);
    o.json()
}

#[test]
fn deep_merge_example_baseline_and_web() {
    let v = attr("web1", "apache.prefork");
    assert_eq!(
        v["value"],
        json!({"startservers": 30, "minspareservers": 20, "maxspareservers": 40,
               "serverlimit": 400, "maxclients": 400, "maxrequestsperchild": 10000})
    );
    let s = attr("web1", "apache.prefork.startservers");
    assert_eq!(
        (s["level"].as_str(), s["source"].as_str()),
        (Some("role_override"), Some("role web"))
    );
    let l = attr("web1", "apache.listen_ports");
    assert_eq!(
        l["value"],
        json!([80]),
        "arrays are replaced between default and override groups"
    );
    assert_eq!(l["source"], "role baseline");
    let sl = attr("web1", "apache.prefork.serverlimit");
    assert_eq!(
        sl["source"],
        "attribute file apache2/attributes/default.yml"
    );
}

#[test]
fn precedence_table_and_role_environment_reversal() {
    assert_eq!(
        attr("rev1", "d")["value"],
        "role",
        "role_default beats env_default"
    );
    assert_eq!(
        attr("rev1", "o")["value"],
        "env",
        "env_override beats role_override"
    );
    let expected = [
        ("p1", "default_file_extra", "default"),
        ("p2", "default_recipe", "default"),
        ("p3", "role_default", "role_default"),
        ("p4", "role_default", "role_default"),
        ("p5", "force_default_file", "force_default"),
        ("p6", "force_default_recipe", "force_default"),
        ("p7", "normal_file", "normal"),
        ("p8", "normal_recipe", "normal"),
        ("p9", "override_file", "override"),
        ("p10", "override_recipe", "override"),
        ("p11", "role_override", "role_override"),
        ("p12", "env_override", "env_override"),
        ("p13", "force_override_file", "force_override"),
        ("p14", "force_override_recipe", "force_override"),
    ];
    for (key, value, level) in expected {
        let v = attr("rev1", &format!("p.{key}"));
        assert_eq!(
            (v["value"].as_str(), v["level"].as_str()),
            (Some(value), Some(level)),
            "{key}"
        );
    }
    let h = attr("rev1", "hostname");
    assert_eq!(
        (h["value"].as_str(), h["level"].as_str()),
        (Some("rev1-device"), Some("automatic"))
    );
    assert_eq!(attr("rev1", "n")["source"], "node");
    assert_eq!(attr("rev1", "p.p10")["source"], "recipe site::pos");
}

#[test]
fn node_show_json_has_desired_current_merged() {
    let o = netgw(&["node", "show", "rev1", "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = o.json();
    assert_eq!(v["name"], "rev1");
    assert_eq!(
        v["desired"]["run_list"],
        json!(["role[r1]", "recipe[site::pos]"])
    );
    assert_eq!(v["desired"]["chef_environment"], "prod");
    assert_eq!(v["current"]["automatic"]["platform"], "eos");
    assert_eq!(v["merged"]["extra_loaded_after_default_yml"], true);
    assert_eq!(v["merged"]["p"]["p12"], "env_override");
    let human = netgw(&["node", "show", "rev1"]);
    assert_eq!(human.code, 0);
    assert!(
        human.stdout.contains("Environment: prod"),
        "{}",
        human.stdout
    );
}

#[test]
fn expand_loops_duplicates_and_recipe_spellings() {
    let o = netgw(&["expand", "loopy", "--format", "json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = o.json();
    assert_eq!(v["recipes"], json!(["x", "z", "y", "x::default"]));
    assert_eq!(v["roles"], json!(["a", "b"]));
    assert_eq!(v["missing_roles"], json!([]));
    assert_eq!(v["environment"], "_default");
    assert_eq!(
        v["run_list"],
        json!(["role[a]", "recipe[x]", "role[b]", "recipe[x::default]"])
    );
    // b's attributes are applied before a's (a includes b), so a wins; arrays union.
    assert_eq!(attr("loopy", "who")["value"], "a");
    assert_eq!(attr("loopy", "list")["value"], json!(["b", "a"]));
}

#[test]
fn expand_uses_empty_env_run_list() {
    let v = netgw(&["expand", "lab1", "--format", "json"]).json();
    assert_eq!(
        v["recipes"],
        json!(["x"]),
        "gated's env_run_lists.lab is empty and is used"
    );
    assert_eq!(v["roles"], json!(["gated"]));
}

#[test]
fn missing_roles_are_reported_together_with_exit_1() {
    let o = netgw(&["expand", "orphan", "--format", "json"]);
    assert_eq!(o.code, 1);
    let v = o.json();
    assert_eq!(
        v["missing_roles"],
        json!([{"name": "ghost", "included_by": "top level"}, {"name": "phantom", "included_by": "holder"}])
    );
    assert_eq!(v["recipes"], json!(["x", "y"]));
    assert!(
        o.stderr.contains("ghost") && o.stderr.contains("phantom"),
        "{}",
        o.stderr
    );
    let s = netgw(&["node", "show", "orphan"]);
    assert_eq!(s.code, 1);
    assert!(
        s.stderr.contains("ghost (included by 'top level')"),
        "{}",
        s.stderr
    );
}

#[test]
fn errors_name_the_input_and_map_to_exit_codes() {
    let o = netgw(&["node", "show", "typo"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("netdev::vlanz")
            && o.stderr.contains("cookbooks/netdev/recipes/vlanz.yml"),
        "{}",
        o.stderr
    );

    let o = netgw(&["node", "show", "broken"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("broken.json") && o.stderr.contains("invalid JSON"),
        "{}",
        o.stderr
    );

    let o = netgw(&["node", "show", "bad name"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("invalid node name \"bad name\""),
        "{}",
        o.stderr
    );

    let o = netgw(&["node", "show", "ghost"]);
    assert_eq!(
        o.code, 2,
        "a node that does not exist is a configuration error"
    );
    assert!(
        o.stderr.contains("node \"ghost\" not found"),
        "{}",
        o.stderr
    );

    let o = netgw(&["node", "show", "web1", "--attribute", "apache..x"]);
    assert_eq!(o.code, 2);
    let o = netgw(&["node", "show", "web1", "--attribute", "apache.nothing"]);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("apache.nothing is not set"),
        "{}",
        o.stderr
    );

    let o = netgw_in(
        &root().join("tests/no-such-repo"),
        &["node", "show", "web1"],
    );
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("no-such-repo"), "{}", o.stderr);

    let o = netgw(&["frobnicate"]);
    assert_eq!(o.code, 2);
}

#[test]
fn repo_defaults_to_env_var() {
    let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .args(["expand", "lab1", "--format", "json"])
        .env("NETGW_REPO", root().join("tests/repo"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn shipped_example_repo_resolves() {
    let repo = root().join("examples/repo");
    for node in ["spine1", "leaf1", "leaf2"] {
        let o = netgw_in(&repo, &["node", "show", node, "--format", "json"]);
        assert_eq!(o.code, 0, "{node}: {}", o.stderr);
    }
    let o = netgw_in(
        &repo,
        &[
            "node",
            "show",
            "leaf1",
            "--attribute",
            "netdev.vlans.100.name",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.json()["value"], "servers-leaf");
    let o = netgw_in(
        &repo,
        &[
            "node",
            "show",
            "leaf2",
            "--attribute",
            "netdev.vlan_policy",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.json()["value"], "purge");
    assert_eq!(o.json()["level"], "env_override");
}

/// `netgw completions bash` is a script bash itself loads and completes commands and options with
/// (read from the clap definition: `--plan-out` is there as soon as converge takes it); `netgw man
/// --out-dir` writes pages `man` renders and groff finds nothing to warn about.
#[test]
fn completions_and_man_pages_come_from_the_cli_definition() {
    let dir = tempfile::tempdir().unwrap();
    let o = netgw(&["completions", "bash"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let script = dir.path().join("netgw.bash");
    std::fs::write(&script, &o.stdout).unwrap();
    let complete = |words: &str, cword: usize| {
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source {}; complete -p netgw; COMP_WORDS=({words}); COMP_CWORD={cword}; \
                 _netgw netgw \"${{COMP_WORDS[{cword}]}}\" \"${{COMP_WORDS[{}]}}\"; echo \"${{COMPREPLY[@]}}\"",
                script.display(),
                cword - 1
            ))
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let out = complete("netgw conv", 1);
    assert!(
        out.contains("-F _netgw netgw") && out.contains("converge"),
        "{out}"
    );
    let out = complete("netgw converge --plan-o", 2);
    assert!(out.lines().last().unwrap().contains("--plan-out"), "{out}");

    let pages = dir.path().join("man1");
    let o = netgw(&["man", "--out-dir", pages.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    for page in [
        "netgw.1",
        "netgw-converge.1",
        "netgw-drift.1",
        "netgw-serve.1",
    ] {
        let path = pages.join(page);
        assert!(
            o.stdout.contains(&path.display().to_string()),
            "{}",
            o.stdout
        );
        let g = Command::new("groff")
            .args(["-man", "-ww", "-z"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(g.status.success() && g.stderr.is_empty(), "{page}: {g:?}");
    }
    let m = Command::new("man")
        .arg("-l")
        .arg(pages.join("netgw-converge.1"))
        .env("MANPAGER", "cat")
        .env("LC_ALL", "C")
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&m.stdout);
    assert!(m.status.success(), "{m:?}");
    assert!(
        text.contains("--plan-out") && text.contains("--changes-only"),
        "{text}"
    );
    let o = netgw(&["man"]);
    assert!(
        o.code == 0 && o.stdout.contains(".TH netgw 1"),
        "{}",
        o.stdout
    );
}

/// A reader that stops early (`netgw inventory | head -3`) ends the command without a word, with the
/// status a shell gives a command a closed pipe ended (141), not with an error about the pipe.
#[test]
fn a_reader_that_stops_early_ends_the_output_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inventory.yml");
    let hosts: String = (0..3000)
        .map(|i| {
            format!(
                "  sw{i}: {{hostname: 10.0.{}.{}, platform: eos}}\n",
                i / 250,
                i % 250
            )
        })
        .collect();
    std::fs::write(&inv, format!("hosts:\n{hosts}")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .args(["inventory", "--format", "json", "--inventory"])
        .arg(&inv)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read a little, then go away, as `head` does.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(141), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}
