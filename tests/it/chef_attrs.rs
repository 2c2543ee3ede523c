//! Issue 22: Chef itself as the oracle for attribute files. For every attribute file of the test
//! corpus (tests/fixtures/cookbooks), the attributes netgw computes by evaluating the Ruby statically
//! equal those Chef's own node-attribute code computes when it runs the same files in chef-client's
//! order. The oracle is scripts/peers/chef-attrs.sh (Chef's `Chef::Node::Attribute`, vendored from
//! chef/chef with its licence, on Debian's ruby); it must be installed (`scripts/peers/chef-attrs.sh
//! install`) and this test fails loudly when it is not. netgw itself never runs Ruby.

use crate::common;
use netgw::cookbook::run::{cookbook_order, load_run};
use netgw::cookbook::{CookbookError, Cookbooks, read_metadata};
use netgw_models::attributes::{AttributeSet, Component, Source};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn corpus() -> PathBuf {
    common::root().join("tests/fixtures/cookbooks")
}

/// One comparison: a cookbook root, a run-list, and the attributes the node has before any
/// attribute file loads (facts, roles, environment), as the oracle's request takes them.
struct Case {
    root: &'static str,
    run_list: &'static [&'static str],
    before: Value,
}

/// What Chef computes: the oracle's JSON. Panics (failing the test) when the peer is missing or
/// Chef raised.
fn chef(root: &Path, case: &Case) -> Value {
    let (ok, v) = chef_run(root, case);
    assert!(ok, "Chef refused {}: {v}", root.display());
    v
}

/// The oracle's JSON and whether Chef evaluated every file without raising.
fn chef_run(root: &Path, case: &Case) -> (bool, Value) {
    oracle(root, case.run_list, &case.before)
}

/// The oracle's answer for `run_list` on a node seeded with `before`.
fn oracle(root: &Path, run_list: &[&str], before: &Value) -> (bool, Value) {
    let script = common::root().join("scripts/peers/chef-attrs.sh");
    let mut request = json!({"root": root, "run_list": run_list});
    for (k, v) in before.as_object().unwrap() {
        request[k] = v.clone();
    }
    let mut child = Command::new("bash")
        .arg(&script)
        .arg("run")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running scripts/peers/chef-attrs.sh");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("PEER MISSING"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "chef-attrs oracle gave no JSON ({e}); run `scripts/peers/chef-attrs.sh install`\nstdout: {}\nstderr: {stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (out.status.success(), v)
}

/// The components a request's key seeds, with the source netgw gives them.
fn seed(attrs: &mut AttributeSet, before: &Value) {
    for (k, v) in before.as_object().unwrap() {
        let (c, source) = match k.as_str() {
            "automatic" => (Component::Automatic, Source::Automatic),
            "normal" => (Component::Normal, Source::Node),
            "role_default" => (Component::RoleDefault, role()),
            "role_override" => (Component::RoleOverride, role()),
            "env_default" => (Component::EnvDefault, env()),
            "env_override" => (Component::EnvOverride, env()),
            other => panic!("unknown level {other}"),
        };
        attrs.push(c, source, v.as_object().unwrap().clone());
    }
}

fn role() -> Source {
    Source::Role { role: "r".into() }
}

fn env() -> Source {
    Source::Environment {
        environment: "e".into(),
    }
}

/// What netgw computes, in the oracle's shape. The run-list's recipes are replaced by ones that do
/// not exist: attribute files all load before the first recipe, which then stops the run.
fn netgw(root: &Path, case: &Case) -> Value {
    netgw_run(root, case.run_list, &case.before)
        .unwrap_or_else(|e| panic!("{}: {e:?}", root.display()))
}

/// What netgw computes for `run_list` on a node seeded with `before`, or the error it refuses with.
fn netgw_run(root: &Path, run_list: &[&str], before: &Value) -> Result<Value, CookbookError> {
    let cookbooks = Cookbooks::open(root).unwrap();
    let mut attrs = AttributeSet::new();
    seed(&mut attrs, before);
    let list: Vec<String> = run_list
        .iter()
        .map(|r| format!("{}::no_such_recipe", r.split("::").next().unwrap()))
        .collect();
    match load_run(&cookbooks, &list, &mut attrs) {
        Err(CookbookError::UnknownRecipe { .. }) => {}
        Err(e) => return Err(e),
        Ok(_) => panic!("{}: the recipe does not exist", root.display()),
    }
    let files: Vec<Value> = cookbook_order(&cookbooks, &list)
        .unwrap()
        .iter()
        .flat_map(|cb| cookbooks.attribute_files(cb).unwrap())
        .filter(|f| f.file.ends_with(".rb"))
        .map(|f| json!(format!("cookbooks/{}/attributes/{}", f.cookbook, f.file)))
        .collect();
    let empty = |v: Value| if v.is_null() { json!({}) } else { v };
    Ok(json!({
        "cookbook_order": cookbook_order(&cookbooks, &list).unwrap(),
        "files": files,
        "merged": Value::Object(attrs.merged()),
        "default": empty(attrs.combined_default()),
        "normal": empty(attrs.component(Component::Normal)),
        "override": empty(attrs.combined_override()),
        "automatic": empty(attrs.component(Component::Automatic)),
    }))
}

fn cases() -> Vec<Case> {
    let eos = json!({
        "automatic": {"platform": "eos", "platform_version": "4.28.1F"},
        "role_default": {"role_attr": "r", "net": {"role_array": ["role"], "mtu": 100}},
        "env_default": {"env_attr": "e"},
        "role_override": {"net": {"ovr": {"c": 3}}},
        "normal": {"net": {"normal_only": "stored"}}
    });
    let junos = json!({
        "automatic": {"platform": "junos", "platform_version": "23.2R1"},
        "env_override": {"net": {"mtu": 1400}, "site": {"os": "env"}}
    });
    vec![
        // The public cookbooks (docs/fixture-sources.md): netdev's test cookbooks, all in one run.
        Case {
            root: "chef-netdev",
            run_list: &["vlan", "interface", "l2_interface", "lag", "group"],
            before: json!({}),
        },
        Case {
            root: "netdev_cumulus",
            run_list: &["netdev_cumulus"],
            before: json!({}),
        },
        Case {
            root: "netdev_eos",
            run_list: &["netdev_eos"],
            before: json!({}),
        },
        // Written for this test: every level, literal, loop and conditional of the subset, several
        // files per cookbook and cookbooks replacing each other's hashes and arrays.
        Case {
            root: "attr-oracle",
            run_list: &["later"],
            before: eos.clone(),
        },
        Case {
            root: "attr-oracle",
            run_list: &["later"],
            before: junos,
        },
        Case {
            root: "attr-oracle",
            run_list: &["site"],
            before: eos,
        },
        Case {
            root: "attr-oracle",
            run_list: &["base"],
            before: json!({}),
        },
        // Platform helpers with versions Chef's `Chef::Version::Platform` parses (x.y.z, FreeBSD's
        // x.y-RELEASE-pN) and with the facts netgw reports for an EOS switch.
        Case {
            root: "attr-oracle",
            run_list: &["site"],
            before: json!({"automatic": {"platform": "arista_eos", "platform_family": "fedora", "platform_version": "4.28.1"}}),
        },
        Case {
            root: "attr-oracle",
            run_list: &["site"],
            before: json!({"automatic": {"platform": "freebsd", "platform_family": "freebsd", "platform_version": "12.1-RELEASE-p3"}}),
        },
        Case {
            root: "attr-oracle",
            run_list: &["site"],
            before: json!({"automatic": {"platform": "eos", "platform_family": "fedora", "platform_version": "4.19"}}),
        },
        Case {
            root: "attr-oracle",
            run_list: &["site"],
            before: json!({"automatic": {"platform": "eos", "platform_version": "4.28.1"}}),
        },
    ]
}

fn ruby_attribute_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            ruby_attribute_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rb")
            && p.parent().unwrap().ends_with("attributes")
        {
            out.push(p);
        }
    }
}

#[test]
fn every_corpus_attribute_file_gives_what_chef_computes() {
    let mut compared: Vec<PathBuf> = Vec::new();
    let mut disagreements = Vec::new();
    for case in cases() {
        let root = corpus().join(case.root);
        let want = chef(&root, &case);
        let got = netgw(&root, &case);
        for key in [
            "cookbook_order",
            "files",
            "default",
            "normal",
            "override",
            "automatic",
            "merged",
        ] {
            if want[key] != got[key] {
                disagreements.push(format!(
                    "{} {:?} {key}:\n  Chef:  {}\n  netgw: {}",
                    case.root, case.run_list, want[key], got[key]
                ));
            }
        }
        for f in want["files"].as_array().unwrap() {
            compared.push(root.join(f.as_str().unwrap()));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    // Every Ruby attribute file of the corpus took part, so a new fixture cannot escape the oracle.
    let mut all = Vec::new();
    ruby_attribute_files(&corpus(), &mut all);
    // corpus2's files are each classified by `public_cookbooks_never_give_a_wrong_value`.
    all.retain(|p| !p.starts_with(corpus().join("corpus2")));
    let missed: Vec<&PathBuf> = all.iter().filter(|p| !compared.contains(p)).collect();
    assert!(missed.is_empty(), "not compared with Chef: {missed:?}");
    assert!(all.len() >= 8, "{all:?}");
}

#[test]
fn the_oracle_is_chef_not_netgw() {
    // A guard against comparing netgw with itself: Chef's auto-vivification makes the read half of
    // `||=` create an empty hash, so `default['x'] ||= 5` on a missing key leaves `{}` (a known Chef
    // gotcha that a reimplementation would not invent).
    let case = Case {
        root: "attr-oracle",
        run_list: &["base"],
        before: json!({}),
    };
    let want = chef(&corpus().join(case.root), &case);
    assert_eq!(want["default"]["net"]["counter"], json!({}));
    assert_eq!(want["merged"]["net"]["mtu_plus"], 1501);
}

#[test]
fn platform_helpers_fail_where_chefs_raise() {
    // Chef's `value_for_platform` raises when two version constraints match the node's version, and
    // `platform_family?` on a hash argument is false; netgw must stop at the same file and line.
    let dir = tempfile::tempdir().unwrap();
    let cb = dir.path().join("cookbooks/p");
    std::fs::create_dir_all(cb.join("attributes")).unwrap();
    std::fs::write(cb.join("metadata.rb"), "name 'p'\nversion '1.0.0'\n").unwrap();
    std::fs::write(
        cb.join("attributes/default.rb"),
        "default['ok'] = 1\ndefault['x'] = value_for_platform('eos' => { '>= 4.0' => 1, '~> 4.28' => 2 })\n",
    )
    .unwrap();
    let case = Case {
        root: "",
        run_list: &["p"],
        before: json!({"automatic": {"platform": "eos", "platform_version": "4.28.1"}}),
    };
    let (ok, v) = chef_run(dir.path(), &case);
    assert!(!ok && v["line"] == 2, "Chef: {v}");
    assert!(
        v["message"].as_str().unwrap().contains("Multiple matches"),
        "{v}"
    );
    let cookbooks = Cookbooks::open(dir.path()).unwrap();
    let mut attrs = AttributeSet::new();
    seed(&mut attrs, &case.before);
    let e = load_run(&cookbooks, &["p::default".into()], &mut attrs).unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("attributes/default.rb:2") && e.contains("several version keys"),
        "{e}"
    );
}

/// Ohai-like facts of two Linux nodes: the public cookbooks of corpus2 branch on them.
fn linux_facts() -> Vec<(&'static str, Value)> {
    let common = |platform: &str, family: &str, version: &str| {
        json!({
            "platform": platform, "platform_family": family, "platform_version": version,
            "os": "linux", "os_version": "5.15.0-91-generic", "hostname": "node1",
            "fqdn": "node1.example.com", "domain": "example.com", "ipaddress": "192.0.2.10",
            "macaddress": "52:54:00:12:34:56", "init_package": "systemd",
            "kernel": {"name": "Linux", "release": "5.15.0-91-generic", "machine": "x86_64",
                       "modules": {}},
            "cpu": {"total": 2, "real": 1}, "memory": {"total": "4030056kB"},
            "virtualization": {"systems": {}}, "languages": {"ruby": {"version": "3.1.2"}},
        })
    };
    let mut ubuntu = common("ubuntu", "debian", "22.04");
    ubuntu["lsb"] = json!({"id": "Ubuntu", "release": "22.04", "codename": "jammy"});
    let rocky = common("rocky", "rhel", "9.3");
    vec![("ubuntu 22.04", ubuntu), ("rocky 9.3", rocky)]
}

/// How one attribute file of corpus2 came out under one fact set.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Equal,
    /// netgw refused, naming this file and a line: the construct.
    Refused(String),
    /// A wrong value, a value where Chef raises, or a refusal that does not name file and line.
    Wrong(String),
}

/// The cookbook's attribute files in chef-client's order: default.rb, then the rest sorted.
fn chef_file_order(cookbook: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(cookbook.join("attributes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".rb"))
        .collect();
    files.sort_by_key(|f| (f != "default.rb", f.clone()));
    files
}

/// A cookbook root holding `name` with only `files` (copied from `src`), and a metadata.rb naming
/// it without dependencies (the dependencies are not in the corpus, and have no say on one
/// cookbook's attribute values).
fn cookbook_with(dir: &Path, src: &Path, name: &str, files: &[String]) {
    let cb = dir.join("cookbooks").join(name);
    let _ = std::fs::remove_dir_all(&cb);
    std::fs::create_dir_all(cb.join("attributes")).unwrap();
    std::fs::write(cb.join("metadata.rb"), format!("name '{name}'\n")).unwrap();
    for f in files {
        std::fs::copy(
            src.join("attributes").join(f),
            cb.join("attributes").join(f),
        )
        .unwrap();
    }
}

/// The later files of the cookbook that `file` names in `include_attribute 'NAME::x'` (Chef loads
/// them at that point), so the comparison has them.
fn included_later(src: &Path, name: &str, file: &str, have: &[String]) -> Vec<String> {
    let text = std::fs::read_to_string(src.join("attributes").join(file)).unwrap();
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| l.trim_start().starts_with("include_attribute"))
    {
        for quoted in line.split(['\'', '"']).skip(1).step_by(2) {
            let short = match quoted.split_once("::") {
                Some((cb, short)) if cb == name => short,
                _ => continue,
            };
            let f = format!("{short}.rb");
            if src.join("attributes").join(&f).is_file() && !have.contains(&f) && !out.contains(&f)
            {
                out.push(f);
            }
        }
    }
    out
}

/// The construct of a refusal, for counting: netgw's name for it, without the source text of long
/// expressions.
fn construct_of(construct: &str) -> String {
    construct
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(40)
        .collect()
}

/// Classifies `file`, loaded after `before_files` (the cookbook's earlier files netgw evaluated).
fn classify(root: &Path, name: &str, file: &str, facts: &Value) -> Outcome {
    let before = json!({ "automatic": facts });
    let (chef_ok, want) = oracle(root, &[name], &before);
    let got = netgw_run(root, &[name], &before);
    match got {
        Ok(_) if !chef_ok => Outcome::Wrong(format!("netgw evaluated, Chef raised {want}")),
        Ok(got) => {
            for key in ["default", "normal", "override", "automatic", "merged"] {
                if want[key] != got[key] {
                    return Outcome::Wrong(format!(
                        "{key}:\n  Chef:  {}\n  netgw: {}",
                        want[key], got[key]
                    ));
                }
            }
            Outcome::Equal
        }
        Err(CookbookError::Ruby {
            path,
            line,
            construct,
            why,
        }) if path.ends_with(format!("attributes/{file}")) && line > 0 => {
            if std::env::var_os("NETGW_CORPUS_SHOW").is_some() {
                eprintln!("{file}:{line}: {construct}: {why}");
            }
            Outcome::Refused(construct_of(&construct))
        }
        Err(CookbookError::Syntax { path, line, .. })
            if path.ends_with(format!("attributes/{file}")) && line > 0 =>
        {
            Outcome::Refused("syntax".into())
        }
        Err(e) => Outcome::Wrong(format!(
            "a refusal that does not name this file and a line: {e}"
        )),
    }
}

#[test]
fn public_cookbooks_never_give_a_wrong_value() {
    let corpus2 = corpus().join("corpus2/cookbooks");
    let mut names: Vec<String> = std::fs::read_dir(&corpus2)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let facts = linux_facts();
    let dir = tempfile::tempdir().unwrap();
    // (file, outcome per fact set)
    let mut table: Vec<(String, Vec<Outcome>)> = Vec::new();
    for name in &names {
        let src = corpus2.join(name);
        // The real metadata.rb is read (the run below gets one reduced to the name).
        let md = read_metadata(&src).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&md.name, name);
        let order = chef_file_order(&src);
        let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::new(); order.len()];
        for (_, f) in &facts {
            let mut evaluated: Vec<String> = Vec::new();
            for (i, file) in order.iter().enumerate() {
                let mut files = evaluated.clone();
                files.push(file.clone());
                files.extend(included_later(&src, name, file, &files));
                cookbook_with(dir.path(), &src, name, &files);
                let o = classify(dir.path(), name, file, f);
                if o == Outcome::Equal {
                    evaluated.push(file.clone());
                }
                outcomes[i].push(o);
            }
        }
        for (file, o) in order.iter().zip(outcomes) {
            table.push((format!("{name}/attributes/{file}"), o));
        }
    }
    let mut wrong = Vec::new();
    let mut refused: std::collections::BTreeMap<String, usize> = Default::default();
    let mut equal = 0;
    println!(
        "{:<45} {}",
        "file",
        facts
            .iter()
            .map(|(n, _)| format!("{n:<44}"))
            .collect::<String>()
    );
    for (file, outcomes) in &table {
        let cells: String = outcomes
            .iter()
            .map(|o| match o {
                Outcome::Equal => format!("{:<44}", "equal"),
                Outcome::Refused(c) => format!("{:<44}", format!("refused: {c}")),
                Outcome::Wrong(_) => format!("{:<44}", "WRONG"),
            })
            .collect();
        println!("{file:<45} {cells}");
        for (o, (fname, _)) in outcomes.iter().zip(&facts) {
            if let Outcome::Wrong(w) = o {
                wrong.push(format!("{file} ({fname}): {w}"));
            }
        }
        if outcomes.iter().all(|o| *o == Outcome::Equal) {
            equal += 1;
        } else if let Some(Outcome::Refused(c)) =
            outcomes.iter().find(|o| matches!(o, Outcome::Refused(_)))
        {
            *refused.entry(c.clone()).or_default() += 1;
        }
    }
    let total = table.len();
    println!(
        "{total} files, {equal} equal under every fact set, refused by first construct: {refused:?}, {} wrong",
        wrong.len()
    );
    assert!(wrong.is_empty(), "WRONG:\n{}", wrong.join("\n"));
    assert!(total >= 60, "{total} files");
    assert!(
        equal * 100 >= total * 85,
        "{equal} of {total} equal, under 85%"
    );
}

// Ruby roles and environments: netgw's reading (src/cookbook/dsl.rs, then the role or environment
// model a run uses) against Chef's own `Chef::Role#from_file` / `Chef::Environment#from_file` and
// `#to_h` (vendored, scripts/peers/chef-attrs/chef_roles.rb). Corpus: tests/fixtures/chef-roles
// (rcbops' public roles, Apache-2.0, and files written for this test; docs/fixture-sources.md).

/// Chef's `to_h` of each file (`{"error": ...}` where Chef raised), by path.
fn chef_objects(kind: &str, files: &[PathBuf]) -> Value {
    let out = Command::new("bash")
        .arg(common::root().join("scripts/peers/chef-attrs.sh"))
        .args(["roles", kind])
        .args(files)
        .output()
        .expect("running scripts/peers/chef-attrs.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "chef-attrs roles: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

fn dsl_files(dir: &str) -> Vec<PathBuf> {
    let root = common::root().join("tests/fixtures/chef-roles");
    let mut out = Vec::new();
    for source in std::fs::read_dir(&root).unwrap() {
        let d = source.unwrap().path().join(dir);
        for f in std::fs::read_dir(&d).into_iter().flatten() {
            out.push(f.unwrap().path());
        }
    }
    out.sort();
    out
}

/// What a run takes from a role: its run-list in each environment (`Role#run_list_for`), which
/// environments have their own, its description and attributes.
fn role_view(role: &netgw_models::node::Role, envs: &[String]) -> Value {
    let lists: serde_json::Map<String, Value> = envs
        .iter()
        .map(|e| (e.clone(), json!(role.run_list_for(e))))
        .collect();
    let own: Vec<&String> = role.env_run_lists.0.iter().map(|(e, _)| e).collect();
    json!({"name": role.name, "description": role.description, "run_list_for": lists,
        "env_run_lists": own, "default_attributes": role.default_attributes,
        "override_attributes": role.override_attributes})
}

/// The same of Chef's `to_h`.
fn chef_role_view(h: &Value, envs: &[String]) -> Value {
    let lists: serde_json::Map<String, Value> = envs
        .iter()
        .map(|e| {
            let l = h["env_run_lists"].get(e).unwrap_or(&h["run_list"]);
            (e.clone(), l.clone())
        })
        .collect();
    let own: Vec<&String> = h["env_run_lists"].as_object().unwrap().keys().collect();
    json!({"name": h["name"], "description": h["description"], "run_list_for": lists,
        "env_run_lists": own, "default_attributes": h["default_attributes"],
        "override_attributes": h["override_attributes"]})
}

#[test]
fn ruby_roles_and_environments_read_as_chefs_from_file_reads_them() {
    let roles = dsl_files("roles");
    let chef = chef_objects("role", &roles);
    let mut equal = 0;
    for f in &roles {
        let want = &chef[f.to_str().unwrap()];
        assert!(
            want.get("error").is_none(),
            "Chef refused {}: {want}",
            f.display()
        );
        let text = std::fs::read_to_string(f).unwrap();
        let doc = netgw::cookbook::dsl::role(f, &text).unwrap_or_else(|e| panic!("{e}"));
        let role: netgw_models::node::Role =
            serde_json::from_value(doc).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut envs = vec!["_default".to_owned(), "never_named".to_owned()];
        envs.extend(want["env_run_lists"].as_object().unwrap().keys().cloned());
        assert_eq!(
            role_view(&role, &envs),
            chef_role_view(want, &envs),
            "{}",
            f.display()
        );
        equal += 1;
    }
    let envs = dsl_files("environments");
    let chef = chef_objects("environment", &envs);
    for f in &envs {
        let want = &chef[f.to_str().unwrap()];
        assert!(
            want.get("error").is_none(),
            "Chef refused {}: {want}",
            f.display()
        );
        let text = std::fs::read_to_string(f).unwrap();
        let doc = netgw::cookbook::dsl::environment(f, &text).unwrap_or_else(|e| panic!("{e}"));
        let env: netgw_models::node::Environment =
            serde_json::from_value(doc).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let got = json!({"name": env.name, "description": env.description,
            "cookbook_versions": env.cookbook_versions,
            "default_attributes": env.default_attributes,
            "override_attributes": env.override_attributes});
        let keys = [
            "name",
            "description",
            "cookbook_versions",
            "default_attributes",
            "override_attributes",
        ];
        let want: serde_json::Map<String, Value> = keys
            .iter()
            .map(|k| ((*k).to_owned(), want[*k].clone()))
            .collect();
        assert_eq!(got, Value::Object(want), "{}", f.display());
        equal += 1;
    }
    assert!(roles.len() >= 12 && envs.len() >= 2, "{roles:?} {envs:?}");
    assert_eq!(equal, roles.len() + envs.len());
}

/// Where Chef's `from_file` raises, netgw's repo refuses the file too (naming it), never reads a
/// value from it.
#[test]
fn role_and_environment_files_chef_refuses_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("nodes")).unwrap();
    let cases = [
        (
            "roles",
            "no_default",
            "env_run_lists 'prod' => ['recipe[a]']",
        ),
        ("environments", "one_arg", "cookbook 'netdev'"),
        ("roles", "not_a_hash", "default_attributes 'a'"),
        (
            "environments",
            "bad_constraint",
            "cookbook 'netdev', 'soon'",
        ),
    ];
    let repo = netgw::store::local::LocalRepo::open(dir.path()).unwrap();
    for (kind, name, line) in cases {
        let path = dir.path().join(kind).join(format!("{name}.rb"));
        common::write(
            dir.path(),
            &format!("{kind}/{name}.rb"),
            &format!("name '{name}'\n{line}\n"),
        );
        let chef = chef_objects(&kind[..kind.len() - 1], std::slice::from_ref(&path));
        let chef = &chef[path.to_str().unwrap()];
        assert!(
            chef.get("error").is_some(),
            "Chef accepted {}: {chef}",
            path.display()
        );
        let e = match kind {
            "roles" => netgw::resolve::repo_role(&repo, name).map(|_| ()),
            _ => netgw::resolve::repo_environment(&repo, name).map(|_| ()),
        }
        .expect_err(&format!("netgw accepted {} (Chef: {chef})", path.display()))
        .to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
}

/// `node.name` is the node's name (Chef's `Node#name`), not an attribute nor a fact: attribute files
/// computing from it give what Chef gives; recipes see it too; without a node it is refused.
#[test]
fn node_name_is_the_nodes_name_as_chef_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    common::write(
        root,
        "cookbooks/site/attributes/default.rb",
        "default['site']['me'] = node.name\n\
         default['site']['vlan'] = \"v_#{node.name.upcase}\"\n\
         default['site']['pod'] = node.name.split('-').first\n\
         default['site']['is_me'] = node.name == node['hostname']\n",
    );
    common::write(
        root,
        "cookbooks/site/recipes/default.rb",
        "netdev_vlan \"for_#{node.name}\" do\n  vlan_id node.name.length + 100\nend\n",
    );
    let before = json!({"name": "lon2-sw1", "automatic": {"hostname": "device7"}});
    let (ok, chef) = oracle(root, &["site"], &before);
    assert!(ok, "{chef}");
    let cookbooks = Cookbooks::open(root).unwrap().with_node_name("lon2-sw1");
    let mut attrs = AttributeSet::new();
    seed(&mut attrs, &json!({"automatic": before["automatic"]}));
    let recipes = load_run(&cookbooks, &["site".to_owned()], &mut attrs).unwrap();
    assert_eq!(Value::Object(attrs.merged()), chef["merged"]);
    assert_eq!(chef["merged"]["site"]["vlan"], "v_LON2-SW1");
    let compiled = netgw_models::compile::compile(&attrs.merged(), &recipes);
    assert!(compiled.errors.is_empty(), "{:?}", compiled.errors);
    let vlan = &compiled.vlans[0].resource;
    assert_eq!(
        (vlan.id.get(), vlan.name.as_deref()),
        (108, Some("for_lon2-sw1"))
    );
    // No node (a cookbook evaluated on its own): refused, naming file and line.
    let e = load_run(
        &Cookbooks::open(root).unwrap(),
        &["site".to_owned()],
        &mut AttributeSet::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("attributes/default.rb:1") && e.contains("`node.name`"),
        "{e}"
    );
}
