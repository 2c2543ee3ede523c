//! Issue 22 (part A): Chef cookbooks as Chef shops have them. Ruby attribute files, Ruby recipes with
//! the netdev cookbook's resources, and `metadata.rb`, read by netgw without running any Ruby.
//!
//! The corpus (tests/fixtures/cookbooks, provenance in docs/fixture-sources.md) is real public code:
//! the archived chef-cookbooks/netdev test cookbooks (vlan, interface, l2_interface, lag, group), and
//! the two public network cookbooks built on netdev's resources that the search index holds:
//! iij/netdev_cumulus and Arista's netdev_eos (Wikia/chef-eos).

use crate::common;

use netgw::cookbook::run::{cookbook_order, load_run};
use netgw::cookbook::{CookbookError, Cookbooks, read_metadata};
use netgw_models::attributes::{AttributeSet, Component, Source};
use netgw_models::compile::{Compiled, RecipeSource, compile};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn corpus(source: &str) -> PathBuf {
    common::root().join("tests/fixtures/cookbooks").join(source)
}

fn run(root: &Path, recipes: &[&str]) -> Result<(Value, Compiled), CookbookError> {
    let cookbooks = Cookbooks::open(root)?;
    let list: Vec<String> = recipes.iter().map(|s| s.to_string()).collect();
    let mut attrs = AttributeSet::new();
    let compiled_recipes = load_run(&cookbooks, &list, &mut attrs)?;
    let merged = attrs.merged();
    let compiled = compile(&merged, &compiled_recipes);
    Ok((Value::Object(merged), compiled))
}

fn run_err(root: &Path, recipes: &[&str]) -> String {
    match run(root, recipes) {
        Ok((_, c)) => panic!("{recipes:?} should be refused, compiled {c:?}"),
        Err(e) => e.to_string(),
    }
}

// (a) netdev's own example recipes.

/// The resources as netgw compiled them, before its own validation (declarative maps, per recipe).
fn declared(root: &Path, recipes: &[&str]) -> Vec<(String, Vec<Value>)> {
    let cookbooks = Cookbooks::open(root).unwrap();
    let list: Vec<String> = recipes.iter().map(|s| s.to_string()).collect();
    let mut attrs = AttributeSet::new();
    load_run(&cookbooks, &list, &mut attrs)
        .unwrap()
        .into_iter()
        .map(|(name, src)| match src {
            RecipeSource::Declarative(items) => (name, items),
            other => panic!("{name}: {other:?}"),
        })
        .collect()
}

#[test]
fn netdev_vlan_example_maps_property_by_property_and_meets_netgws_description_rule() {
    // Expected from the cookbook's kitchen test test/integration/vlan/serverspec/vlan_create_spec.rb:
    // the device shows VLAN `chef-test` with this description; the id is the recipe's vlan_id 2.
    let d = declared(&corpus("chef-netdev"), &["vlan::create"]);
    assert_eq!(
        d,
        [(
            "vlan::create".to_string(),
            vec![json!({"type": "vlan", "id": 2, "name": "chef-test",
                        "description": "Ain't no party like a vlan party! YO YO YO"})]
        )]
    );
    // netgw refuses quote characters in descriptions (a device CLI would interpret them): the example
    // fails there, at compile time, before any device is contacted, naming the recipe and VLAN.
    let (_, c) = run(&corpus("chef-netdev"), &["vlan::create"]).unwrap();
    assert_eq!(c.errors.len(), 1, "{:?}", c.errors);
    assert_eq!(
        (c.errors[0].recipe.as_str(), c.errors[0].resource.as_str()),
        ("vlan::create", "vlan[2]")
    );
    assert!(
        c.errors[0].message.contains("contains '\\''"),
        "{:?}",
        c.errors
    );
}

#[test]
fn netdev_l2_interface_example_is_a_trunk_carrying_the_named_vlan() {
    let (_, c) = run(&corpus("chef-netdev"), &["l2_interface::create"]).unwrap();
    // Expected from test/integration/l2_interface/serverspec/l2_interface_create_spec.rb: ge-0/0/0 is
    // `interface-mode trunk`, `members chef-test` (VLAN 2, declared by the included vlan::create),
    // description "Chef created layer 2 interface: ge-0/0/0" (the resource's default). The kitchen
    // suite's run-list is l2_interface::create alone; vlan is not a dependency in its metadata.rb, so
    // Chef warns (MissingCookbookDependency) and loads vlan::create anyway, as netgw does.
    let l = &c.links[0].resource;
    assert_eq!(c.links[0].recipe, "l2_interface::create");
    assert_eq!(l.name, "ge-0/0/0");
    assert_eq!(l.mode.map(|m| m.to_string()).as_deref(), Some("trunk"));
    assert_eq!(l.trunk_vlans.as_ref().unwrap().to_string(), "2");
    assert_eq!(
        l.description.as_deref(),
        Some("Chef created layer 2 interface: ge-0/0/0")
    );
    let names: Vec<&str> = c.errors.iter().map(|e| e.resource.as_str()).collect();
    assert_eq!(
        names,
        ["vlan[2]"],
        "only the VLAN's quoted description is refused"
    );
}

#[test]
fn netdev_examples_netgw_cannot_honour_are_refused_naming_file_line_and_why() {
    let root = corpus("chef-netdev");
    let cases: [(&str, &str, &str); 5] = [
        (
            "interface::create",
            "cookbooks/interface/recipes/create.rb:17: netdev_interface property `speed \"1g\"`",
            "netgw does not manage speed",
        ),
        (
            "interface::delete",
            "cookbooks/interface/recipes/delete.rb:17: netdev_interface action delete",
            "does not delete interfaces",
        ),
        (
            "vlan::delete",
            "cookbooks/vlan/recipes/delete.rb:17: netdev_vlan without `vlan_id`",
            "by id",
        ),
        (
            "lag::create",
            "cookbooks/lag/recipes/create.rb:19: netdev_l2_interface action delete",
            "does not delete interfaces",
        ),
        (
            "group::service_create",
            "cookbooks/group/recipes/service_create.rb:1: resource `netdev_group`",
            "Junos configuration groups are not managed by netgw",
        ),
    ];
    for (recipe, at, why) in cases {
        let e = run_err(&root, &[recipe]);
        let want = root.join(at).display().to_string();
        assert!(e.starts_with(&want), "{recipe}: {e}\nwant {want}");
        assert!(e.contains(why), "{recipe}: {e}");
    }
}

/// netdev's own `lag::delete` example (`netdev_lag 'ae0' do action :delete end`) is an absent
/// aggregate, and its `lag::create` aggregate, once its members' `:delete` (which netgw refuses) is
/// taken out, compiles as written: static (`lacp 'disable'`), two members, minimum one.
#[test]
fn netdev_lag_examples_compile_to_netgws_lag() {
    let root = corpus("chef-netdev");
    let (_, c) = run(&root, &["lag::delete"]).unwrap();
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let lag = &c.lags[0].resource;
    assert_eq!(
        (lag.name.as_str(), lag.state),
        ("ae0", netgw_models::resource::Presence::Absent)
    );
    let dir = tempfile::tempdir().unwrap();
    let cb = dir.path().join("cookbooks/lag");
    std::fs::create_dir_all(cb.join("recipes")).unwrap();
    std::fs::copy(
        root.join("cookbooks/lag/metadata.rb"),
        cb.join("metadata.rb"),
    )
    .unwrap();
    let create = std::fs::read_to_string(root.join("cookbooks/lag/recipes/create.rb")).unwrap();
    let start = create.find("netdev_lag").unwrap();
    std::fs::write(cb.join("recipes/create.rb"), &create[start..]).unwrap();
    let (_, c) = run(dir.path(), &["lag::create"]).unwrap();
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let lag = &c.lags[0].resource;
    assert_eq!(lag.members(), ["ge-0/0/1", "ge-0/0/2"]);
    assert_eq!(
        (lag.lacp, lag.minimum_links),
        (Some(netgw_models::plan::lag::LacpMode::On), Some(1))
    );
}

// (a) public network cookbooks built on netdev: their recipes read data bags, which netgw refuses
// with the file and line; their attribute files and metadata load.

/// A copy of a corpus repo with `data_bags/netdev_config/sw1.json`, the item both public netdev
/// cookbooks read for a device whose hostname is sw1.
fn with_data_bag(source: &str, item: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let copy = Command::new("cp")
        .arg("-r")
        .arg(corpus(source).join("cookbooks"))
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(copy.success());
    write(
        dir.path(),
        "data_bags/netdev_config/sw1.json",
        &item.to_string(),
    );
    dir
}

/// A recipe run with the device's hostname as a fact (the public netdev cookbooks key their data
/// bag items by it).
fn run_on_sw1(root: &Path, recipe: &str) -> Result<Compiled, CookbookError> {
    let cookbooks = Cookbooks::open(root)?;
    let mut attrs = AttributeSet::new();
    let facts = json!({"hostname": "sw1"}).as_object().unwrap().clone();
    attrs.push(Component::Automatic, Source::Automatic, facts);
    let recipes = load_run(&cookbooks, &[recipe.to_owned()], &mut attrs)?;
    Ok(compile(&attrs.merged(), &recipes))
}

#[test]
fn public_netdev_cookbooks_read_their_vlans_from_a_data_bag() {
    let item = json!({"id": "sw1", "netdev_vlan": {
        "web": {"vlan_id": "110"},
        "old": {"vlan_id": "120", "state": "absent"}
    }});
    for (source, cb) in [
        ("netdev_cumulus", "netdev_cumulus"),
        ("netdev_eos", "netdev_eos"),
    ] {
        let dir = with_data_bag(source, &item);
        let c = run_on_sw1(dir.path(), &format!("{cb}::vlan"))
            .unwrap_or_else(|e| panic!("{source}: {e}"));
        assert!(c.errors.is_empty(), "{source}: {:?}", c.errors);
        let vlans: Vec<(u16, Option<String>)> = c
            .vlans
            .iter()
            .map(|d| (d.resource.id.get(), d.resource.name.clone()))
            .collect();
        assert!(
            vlans.contains(&(110, Some("web".into()))),
            "{source}: {vlans:?}"
        );
        // Without the item: refused naming the recipe's line and the file it looked for.
        std::fs::remove_file(dir.path().join("data_bags/netdev_config/sw1.json")).unwrap();
        let e = run_on_sw1(dir.path(), &format!("{cb}::vlan"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("recipes/vlan.rb:26: `data_bag_item`: no data bag item netdev_config/sw1"),
            "{source}: {e}"
        );
    }
}

#[test]
fn data_bag_names_never_leave_the_data_bags_directory_and_encrypted_items_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "cookbooks/t/recipes/a.rb",
        "x = data_bag_item('../cookbooks', 'secret')\n",
    );
    write(
        root,
        "cookbooks/t/recipes/b.rb",
        "x = data_bag_item('creds', 'sw1')\n",
    );
    write(
        root,
        "cookbooks/t/recipes/c.rb",
        "names = data_bag('creds')\nnetdev_vlan 'v' do\n  vlan_id names.length + 100\nend\n",
    );
    write(
        root,
        "data_bags/creds/sw1.json",
        r#"{"id":"sw1","password":{"encrypted_data":"abc","iv":"x","version":1,"cipher":"aes-256-cbc"}}"#,
    );
    write(root, "data_bags/creds/sw2.json", r#"{"id":"sw2"}"#);
    let e = run_err(root, &["t::a"]);
    assert!(
        e.contains("a.rb:1") && e.contains("is not a data bag or item name"),
        "{e}"
    );
    let e = run_err(root, &["t::b"]);
    assert!(
        e.contains("b.rb:1") && e.contains("encrypted data bag item"),
        "{e}"
    );
    let (_, c) = run(root, &["t::c"]).unwrap();
    assert_eq!(
        c.vlans[0].resource.id.get(),
        102,
        "data_bag lists both items"
    );
}

#[test]
fn metadata_of_every_corpus_cookbook() {
    let cases = [
        ("chef-netdev/cookbooks/netdev", "netdev", "2.1.0", vec![]),
        (
            "chef-netdev/cookbooks/vlan",
            "vlan",
            "0.0.0",
            vec![("netdev", ">= 0.0.0")],
        ),
        (
            "chef-netdev/cookbooks/group",
            "group",
            "0.0.0",
            vec![("netdev", ">= 0.0.0")],
        ),
        (
            "netdev_cumulus/cookbooks/netdev_cumulus",
            "netdev_cumulus",
            "1.0.0",
            vec![("netdev", ">= 0.0.0")],
        ),
        (
            "netdev_eos/cookbooks/netdev_eos",
            "netdev_eos",
            "0.1.1",
            vec![("netdev", ">= 0.0.0")],
        ),
    ];
    for (dir, name, version, deps) in cases {
        let md = read_metadata(&corpus("").join(dir)).unwrap();
        assert_eq!(md.name, name, "{dir}");
        assert_eq!(md.version, version, "{dir}");
        let got: Vec<(&str, &str)> = md
            .depends
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(got, deps, "{dir}");
    }
}

// (c) Held-out-style comparison: for every attribute file of the corpus, the attributes netgw computes
// equal those Chef computes. Ruby is not run here; each expected value says where it comes from. The
// same files are also compared with Chef's own attribute code run by Ruby in tests/it/chef_attrs.rs.

#[test]
fn every_corpus_attribute_file_gives_chefs_values() {
    // netdev_cumulus/attributes/default.rb: expected values are the cookbook's own documentation of its
    // attributes, the `attribute '...', :default => '...'` declarations of its metadata.rb (lines 25-73).
    // The metadata documents `netdev_config/providers/netdev_cumulus_l3_interface` too; the attribute
    // file sets the same five keys.
    let cumulus = attributes_only(&corpus("netdev_cumulus"), "netdev_cumulus");
    assert_eq!(
        cumulus,
        json!({"netdev_config": {
            "databag_name": "netdev_config",
            "providers": {
                "netdev_interface": "netdev_cumulus_interface",
                "netdev_l2_interface": "netdev_cumulus_l2_interface",
                "netdev_cumulus_l3_interface": "netdev_cumulus_l3_interface",
                "netdev_vlan": "netdev_cumulus_vlan",
                "netdev_lag": "netdev_cumulus_lag"
            }
        }})
    );
    // netdev_eos/attributes/default.rb: expected from its metadata.rb `attribute ... :default =>`
    // declarations (lines 23-61), the cookbook's documentation of these defaults.
    let eos = attributes_only(&corpus("netdev_eos"), "netdev_eos");
    assert_eq!(
        eos,
        json!({"netdev_config": {
            "databag_name": "netdev_config",
            "providers": {
                "netdev_interface": "netdev_eos_interface",
                "netdev_l2_interface": "netdev_eos_l2_interface",
                "netdev_vlan": "netdev_eos_vlan",
                "netdev_lag": "netdev_eos_lag"
            }
        }})
    );
    // chef-netdev group/attributes/default.rb: Chef stores each literal as assigned, symbol keys as
    // strings (Chef::Node::VividMash#convert_key). Cross-checked against the cookbook's templates
    // (templates/junos/bgp.xml.erb iterates `bgp.each` over `type`, `neighbor` arrays, `local-address`,
    // `peer-as`; services.set.erb joins each `services` entry) and its kitchen test
    // (group_create_spec.rb: the rendered `service_group` contains `system`).
    let group = attributes_only(&corpus("chef-netdev"), "group");
    assert_eq!(
        group,
        json!({"netdev": {
            "services": [["ftp"], ["ssh"], ["netconf", "ssh"]],
            "bgp": {
                "internal": {"type": "internal", "neighbor": ["10.10.10.10", "10.10.10.11"], "local-address": "20.20.20.20", "peer-as": "100"},
                "external": {"type": "external", "neighbor": ["30.30.10.10", "30.30.10.11"], "local-address": "20.20.20.20", "peer-as": "200"}
            },
            "syslog": {
                "messages": [{"facility": "any", "level": "critical"}, {"facility": "authorization", "level": "info"}],
                "interactive-commands": [{"facility": "interactive-commands", "level": "error"}]
            }
        }})
    );
}

/// The attributes a cookbook's attribute files compute (its run-list entry names a recipe that does
/// not exist; attribute files load before recipes, so they are complete when the recipe is missed).
fn attributes_only(root: &Path, cb: &str) -> Value {
    let cookbooks = Cookbooks::open(root).unwrap();
    let mut attrs = AttributeSet::new();
    let e = load_run(&cookbooks, &[format!("{cb}::no_such_recipe")], &mut attrs).unwrap_err();
    assert!(matches!(e, CookbookError::UnknownRecipe { .. }), "{e}");
    Value::Object(attrs.merged())
}

// (b) Attribute-file order and cookbook order.

fn write(dir: &Path, rel: &str, body: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

#[test]
fn attribute_files_load_default_rb_first_then_lexically_mixing_rb_and_yml() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    // Each file appends its name to `order`, reading what earlier files set (Chef's merged view).
    write(
        r,
        "cookbooks/site/attributes/zeta.rb",
        "default['order'] = \"#{node['order']},zeta.rb\"\n",
    );
    write(
        r,
        "cookbooks/site/attributes/beta.yml",
        "default: {beta: true}\n",
    );
    write(
        r,
        "cookbooks/site/attributes/alpha.rb",
        "default['order'] = \"#{node['order']},alpha.rb\"\ndefault['saw_beta'] = node['beta']\n",
    );
    write(
        r,
        "cookbooks/site/attributes/default.rb",
        "default['order'] = 'default.rb'\n",
    );
    write(
        r,
        "cookbooks/site/attributes/gamma.rb",
        "default['order'] = \"#{node['order']},gamma.rb\"\ndefault['saw_beta'] = node['beta']\n",
    );
    write(r, "cookbooks/site/recipes/default.rb", "");
    let (v, c) = run(r, &["site"]).unwrap();
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    assert_eq!(v["order"], "default.rb,alpha.rb,gamma.rb,zeta.rb");
    assert_eq!(v["saw_beta"], true, "gamma.rb (after beta.yml) sees beta");
    let cookbooks = Cookbooks::open(r).unwrap();
    let names: Vec<String> = cookbooks
        .attribute_files("site")
        .unwrap()
        .into_iter()
        .map(|f| f.file)
        .collect();
    assert_eq!(
        names,
        ["default.rb", "alpha.rb", "beta.yml", "gamma.rb", "zeta.rb"]
    );
}

#[test]
fn dependencies_load_first_as_chefs_cookbook_compiler_orders_them() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "cookbooks/app/metadata.rb",
        "name 'app'\nversion '1.0.0'\ndepends 'base', '~> 2.1'\ndepends 'netdev'\n",
    );
    write(
        r,
        "cookbooks/app/attributes/default.rb",
        "default['who'] = \"app after #{node['who']}\"\n",
    );
    write(
        r,
        "cookbooks/app/recipes/default.rb",
        "include_recipe 'base::vlans'\n",
    );
    write(
        r,
        "cookbooks/base/metadata.rb",
        "name 'base'\nversion '2.1.3'\ndepends 'common'\n",
    );
    write(
        r,
        "cookbooks/base/attributes/default.rb",
        "default['who'] = \"base after #{node['who']}\"\n",
    );
    write(
        r,
        "cookbooks/base/recipes/vlans.rb",
        "netdev_vlan 'web' do\n  vlan_id 10\nend\n",
    );
    write(
        r,
        "cookbooks/common/attributes/default.yml",
        "default: {who: common}\n",
    );
    let cookbooks = Cookbooks::open(r).unwrap();
    // `netdev` (provided by netgw, no directory here) takes its place in the order as Chef puts it.
    assert_eq!(
        cookbook_order(&cookbooks, &["app".into()]).unwrap(),
        ["common", "base", "netdev", "app"]
    );
    let (v, c) = run(r, &["app"]).unwrap();
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    assert_eq!(v["who"], "app after base after common");
    assert_eq!(c.vlans[0].recipe, "base::vlans");
    // A dependency that is not there is an error naming the metadata file.
    write(
        r,
        "cookbooks/app/metadata.rb",
        "name 'app'\ndepends 'missing'\n",
    );
    let e = run_err(r, &["app"]);
    assert!(
        e.contains("cookbooks/app/metadata.rb: depends on cookbook \"missing\""),
        "{e}"
    );
    // include_recipe of a cookbook outside the run-list and the dependencies: Chef warns
    // (MissingCookbookDependency) and loads the recipe when the cookbook is there, without its
    // attribute files; a cookbook that is not there is an unknown recipe.
    write(r, "cookbooks/app/metadata.rb", "name 'app'\n");
    let (v, c) = run(r, &["app"]).unwrap();
    assert_eq!(
        v["who"], "app after ",
        "base's attribute files are not loaded"
    );
    assert_eq!(c.vlans.len(), 1);
    write(
        r,
        "cookbooks/app/recipes/default.rb",
        "include_recipe 'nosuch::vlans'\n",
    );
    let e = run_err(r, &["app"]);
    assert!(e.contains("unknown recipe \"nosuch::vlans\""), "{e}");
}

#[test]
fn ruby_and_yaml_paths_give_the_same_precedence() {
    // The same attributes written once in Ruby and once in netgw's YAML merge identically with the
    // other layers (a role default beats a cookbook default; a cookbook override beats a role default).
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    write(
        r,
        "cookbooks/rb/attributes/default.rb",
        "default['a']['x'] = 1\ndefault['a']['y'] = [1, 2]\noverride['a']['z'] = 'o'\nforce_default['f'] = 1\nnormal['n'] = 1\nforce_override['fo'] = 1\n",
    );
    write(r, "cookbooks/rb/recipes/default.rb", "");
    write(
        r,
        "cookbooks/yml/attributes/default.yml",
        "default: {a: {x: 1, y: [1, 2]}}\noverride: {a: {z: o}}\nforce_default: {f: 1}\nnormal: {n: 1}\nforce_override: {fo: 1}\n",
    );
    write(r, "cookbooks/yml/recipes/default.yml", "resources: []\n");
    let views: Vec<Value> = ["rb", "yml"]
        .iter()
        .map(|cb| {
            let cookbooks = Cookbooks::open(r).unwrap();
            let mut attrs = AttributeSet::new();
            attrs.push(
                Component::RoleDefault,
                Source::Role { role: "r".into() },
                json!({"a": {"x": 2, "y": [3]}, "f": 2, "z": "role"})
                    .as_object()
                    .unwrap()
                    .clone(),
            );
            load_run(&cookbooks, &[cb.to_string()], &mut attrs).unwrap();
            let mut out = serde_json::Map::new();
            for c in Component::ALL {
                out.insert(c.as_str().into(), attrs.component(c));
            }
            out.insert("merged".into(), Value::Object(attrs.merged()));
            Value::Object(out)
        })
        .collect();
    assert_eq!(views[0], views[1]);
    assert_eq!(
        views[0]["merged"]["a"],
        json!({"x": 2, "y": [1, 2, 3], "z": "o"})
    );
    assert_eq!(views[0]["merged"]["f"], 1);
}

// (e) End to end: `netgw converge` against a netgw-lab EOS switch, from a Ruby cookbook whose recipe
// loops over node attributes declaring netdev resources.

/// A netgw-lab with one EOS switch `sw1`, its inventory written in a temporary directory (the lab
/// lives as long as the runtime).
fn eos_lab(
    name: &str,
) -> (
    tokio::runtime::Runtime,
    netgw_labs::lab::Lab,
    tempfile::TempDir,
    PathBuf,
) {
    let (rt, lab, dir) = common::lab_with_inventory(&format!(
        "name: {name}\ntopology:\n  nodes:\n    sw1: {{kind: arista_ceos}}\n"
    ));
    let inv = dir.path().join("inventory.yml");
    (rt, lab, dir, inv)
}

#[test]
fn a_ruby_netdev_cookbook_converges_a_lab_switch_then_is_up_to_date() {
    let (_rt, lab, dir, inv) = eos_lab("rb");
    let d = dir.path();
    let repo = d.join("repo");
    write(
        &repo,
        "nodes/sw1.json",
        r#"{"name":"sw1","run_list":["recipe[site]"],"normal":{"site":{"name":"lon2"}}}"#,
    );
    write(
        &repo,
        "cookbooks/site/metadata.rb",
        "name 'site'\nversion '1.0.0'\ndepends 'netdev'\n",
    );
    write(
        &repo,
        "cookbooks/site/attributes/default.rb",
        "default['site']['name'] = 'par1'\n\
         default['site']['vlans'] = { '110' => 'web', '120' => 'db' }\n\
         default['site']['uplinks'] = %w(Ethernet1 Ethernet2)\n",
    );
    write(
        &repo,
        "cookbooks/site/attributes/override.rb",
        "override['site']['vlans']['120'] = \"db_#{node['site']['name']}\"\n",
    );
    write(
        &repo,
        "cookbooks/site/recipes/default.rb",
        "node['site']['vlans'].each do |id, name|\n  netdev_vlan name do\n    vlan_id id.to_i\n    action :create\n  end\nend\n\n\
         node['site']['uplinks'].each_with_index do |port, i|\n  netdev_l2_interface port do\n    description \"uplink #{i + 1} #{node['site']['name']}#{value_for_platform_family('fedora' => '', 'default' => ' before facts')}#{platform?('eos') ? '' : ' not eos'}\"\n    tagged_vlans node['site']['vlans'].values\n    vlan_tagging true\n  end\nend\n",
    );
    let state = d.join("state");
    let converge = || {
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .args(["converge", "--format", "json", "--inventory"])
            .arg(&inv)
            .env("NETGW_STATE_DIR", &state)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let first = converge();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(first.status.success(), "{text}");
    {
        let node = lab.node("sw1").unwrap();
        let st = node.device.state();
        // normal['site']['name'] (lon2) beats the cookbook default, and the override file read it.
        assert_eq!(
            st.vlans.get(&110).map(String::as_str),
            Some("web"),
            "{text}"
        );
        assert_eq!(
            st.vlans.get(&120).map(String::as_str),
            Some("db_lon2"),
            "{text}"
        );
        // The recipe's platform helpers saw this run's facts (platform eos, platform_family fedora).
        for (i, port) in ["Ethernet1", "Ethernet2"].iter().enumerate() {
            let (_, f) = st.interfaces.iter().find(|(n, _)| n == port).unwrap();
            assert_eq!(f.description, format!("uplink {} lon2", i + 1));
            assert_eq!(format!("{:?}", f.mode).to_lowercase(), "trunk");
        }
    }
    let first_report: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(
        first_report["nodes"][0]["updated"], 4,
        "2 VLANs and 2 links: {text}"
    );
    let second = converge();
    let report: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(
        report["summary"]["updated"], 0,
        "second run changes nothing: {report}"
    );
    // A cookbook error is reported before the device is contacted, naming the file and line.
    write(
        &repo,
        "cookbooks/site/recipes/default.rb",
        "netdev_vlan 'x' do\n  vlan_id 5\n  notifies :run, 'execute[x]'\nend\n",
    );
    let bad = converge();
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&bad.stdout),
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(!bad.status.success(), "{err}");
    assert!(
        err.contains("recipes/default.rb:1: netdev_vlan property `notifies`"),
        "{err}"
    );
}

// Robustness: every prefix of every corpus Ruby file (cut every 5 bytes) is parsed and evaluated as
// an attribute file and as a recipe; each gives a value or an error with a line, never a panic.

struct NoInclude;

impl netgw::cookbook::eval::Host for NoInclude {
    fn include_recipe(
        &mut self,
        _: &str,
        _: &mut AttributeSet,
        at: CookbookError,
    ) -> Result<(), CookbookError> {
        Err(at)
    }
}

fn ruby_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            ruby_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rb") {
            out.push(p);
        }
    }
}

#[test]
fn every_prefix_of_every_corpus_file_evaluates_or_fails_cleanly() {
    use netgw::cookbook::{eval, ruby};
    let mut files = Vec::new();
    ruby_files(&corpus(""), &mut files);
    assert!(files.len() >= 30, "{files:?}");
    let mut evaluated = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let cuts = (0..=text.len()).step_by(5).chain([text.len()]);
        for cut in cuts.filter(|c| text.is_char_boundary(*c)) {
            let Ok(program) = ruby::parse(f, &text[..cut]) else {
                continue;
            };
            let src = Source::Recipe {
                recipe: "x::y".into(),
            };
            let mut attrs = AttributeSet::new();
            let a = eval::attribute_file(&program, &mut attrs, src.clone(), None);
            let r = eval::recipe(&program, &mut AttributeSet::new(), src, &mut NoInclude);
            for e in [a.err(), r.err()].into_iter().flatten() {
                let text = e.to_string();
                assert!(text.starts_with(&f.display().to_string()), "{text}");
            }
            evaluated += 1;
        }
    }
    assert!(evaluated > 1000, "{evaluated}");
}

#[test]
fn attribute_files_and_recipes_see_this_runs_facts_not_the_saved_ones() {
    // chef-client compiles cookbooks after Ohai: a fact that changed since the last run is seen at
    // its new value. The saved facts are made stale by hand between two runs; a recipe evaluated with
    // them would create VLAN 300.
    let (_rt, lab, dir, inv) = eos_lab("facts");
    let d = dir.path();
    let repo = d.join("repo");
    write(
        &repo,
        "nodes/sw1.json",
        r#"{"name":"sw1","run_list":["recipe[site]"]}"#,
    );
    write(
        &repo,
        "cookbooks/site/attributes/default.rb",
        "default['site']['seen'] = node['platform_version'].to_s\n",
    );
    write(
        &repo,
        "cookbooks/site/recipes/default.rb",
        "if node['site']['seen'] == 'stale-1.0'\n  netdev_vlan 'stale' do\n    vlan_id 300\n  end\n\
         else\n  netdev_vlan \"seen_#{node['platform']}\" do\n    vlan_id 301\n  end\nend\n",
    );
    let state = d.join("state");
    let converge = || {
        let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .args(["converge", "--format", "json", "--inventory"])
            .arg(&inv)
            .env("NETGW_STATE_DIR", &state)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{text}");
        (serde_json::from_slice::<Value>(&out.stdout).unwrap(), text)
    };
    let (_, text) = converge();
    let saved_path = crate::common::current_file(&state, &repo, "sw1");
    let mut saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&saved_path).unwrap()).unwrap();
    let fresh = saved["automatic"]["platform_version"].clone();
    assert!(fresh.is_string() && fresh != "stale-1.0", "{saved}\n{text}");
    saved["automatic"]["platform_version"] = json!("stale-1.0");
    std::fs::write(&saved_path, saved.to_string()).unwrap();
    let (second, text) = converge();
    let st = lab.node("sw1").unwrap().device.state();
    assert!(
        !st.vlans.contains_key(&300),
        "stale facts were used: {text}"
    );
    let name = st.vlans.get(&301).cloned().unwrap_or_default();
    assert!(
        name.starts_with("seen_") && name.len() > 5,
        "{name}: {text}"
    );
    assert_eq!(second["summary"]["updated"], 0, "{text}");
    // The run saved the fresh facts again.
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&saved_path).unwrap()).unwrap();
    assert_eq!(saved["automatic"]["platform_version"], fresh);
}

/// Roles and environments in Chef's Ruby DSL (`roles/*.rb`, `environments/*.rb`) are read from the
/// local repo as knife reads them: the node's expansion, attributes and precedence come out as from
/// the `.json` files knife would upload, and what is not the DSL is refused with file and line.
#[test]
fn ruby_roles_and_environments_in_the_local_repo() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    write(
        repo,
        "roles/access.rb",
        "name \"access\"\ndescription \"access switches\"\nrun_list \"recipe[netdev::vlans]\", \"role[base]\"\ndefault_attributes \"netdev\" => { \"vlans\" => { \"100\" => { \"name\" => \"servers\" } } }\n",
    );
    write(
        repo,
        "roles/base.rb",
        "name 'base'\noverride_attributes('netdev' => { 'vlans' => { '100' => { 'name' => 'from_base' } } })\n",
    );
    write(
        repo,
        "environments/prod.rb",
        "name 'prod'\ncookbook 'netdev', '~> 1.0'\noverride_attributes 'site' => 'prod'\n",
    );
    write(
        repo,
        "nodes/sw1.json",
        r#"{"name":"sw1","chef_environment":"prod","run_list":["role[access]"]}"#,
    );
    let netgw = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(repo)
            .args(args)
            .output()
            .unwrap();
        let text =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        (o.status.code(), text)
    };
    let (code, text) = netgw(&["expand", "sw1"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("Roles:       access, base"), "{text}");
    let (code, text) = netgw(&[
        "node",
        "show",
        "sw1",
        "--attribute",
        "netdev.vlans.100.name",
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("from_base") && text.contains("role base"),
        "{text}"
    );
    let (_, text) = netgw(&["node", "show", "sw1", "--attribute", "site"]);
    assert!(
        text.contains("\"prod\"") && text.contains("environment prod"),
        "{text}"
    );
    let (code, text) = netgw(&["validate"]);
    assert_eq!(code, Some(0), "{text}");

    // Not the DSL, and a role in both forms: refused naming the file (and the line).
    write(repo, "roles/base.rb", "name 'base'\nrun_lst 'recipe[x]'\n");
    let (code, text) = netgw(&["validate"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("roles/base.rb:2: error:") && text.contains("`run_lst`"),
        "{text}"
    );
    write(repo, "roles/base.rb", "name 'base'\n");
    write(repo, "roles/base.json", r#"{"name":"base"}"#);
    let (code, text) = netgw(&["validate"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("roles/base.json exists too"), "{text}");
}

/// A Policyfile node as chef-zero keeps it in a repo (`knife download policies policy_groups`): the
/// group names the revision, the lock (chef-cli's `to_lock` keys) gives the run-list, the cookbook
/// versions and the attributes at role precedence, the group's own sub-hash hoisted over them.
#[test]
fn a_policyfile_node_converges_from_its_lock_and_names_the_policy() {
    let (_rt, lab, dir, inv) = eos_lab("pf");
    let d = dir.path();
    let repo = d.join("repo");
    let rev = "4f0ac3e1b2d9a8c7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3";
    write(
        &repo,
        "nodes/sw1.json",
        r#"{"name":"sw1","chef_environment":"_default","policy_name":"access","policy_group":"prod","normal":{}}"#,
    );
    write(
        &repo,
        "policy_groups/prod.json",
        &json!({"policies": {"access": {"revision_id": rev}}}).to_string(),
    );
    let lock = |site_version: &str| {
        json!({
            "revision_id": rev,
            "name": "access",
            "run_list": ["recipe[site::default]"],
            "included_policy_locks": [],
            "cookbook_locks": {
                "site": {"version": site_version, "identifier": "0a1b2c", "dotted_decimal_identifier": "1.2.3",
                         "source": "cookbooks/site", "cache_key": null, "scm_info": null,
                         "source_options": {"path": "cookbooks/site"}},
                "netdev": {"version": "2.0.0", "identifier": "9f8e", "cache_key": "netdev-2.0.0-supermarket.chef.io",
                           "origin": "https://supermarket.chef.io:443/api/v1/cookbooks/netdev/versions/2.0.0/download",
                           "source_options": {"artifactserver": "https://supermarket.chef.io:443/api/v1/cookbooks/netdev/versions/2.0.0/download", "version": "2.0.0"}}
            },
            "default_attributes": {"site": {"vlans": {"110": "web", "120": "db"}},
                                   "prod": {"site": {"vlans": {"120": "db_prod"}}}},
            "override_attributes": {},
            "solution_dependencies": {"Policyfile": [["site", ">= 0.0.0"]], "dependencies": {"site (1.0.0)": [["netdev", ">= 0.0.0"]], "netdev (2.0.0)": []}}
        })
        .to_string()
    };
    write(
        &repo,
        &format!("policies/access-{rev}.json"),
        &lock("1.0.0"),
    );
    write(
        &repo,
        "cookbooks/site/metadata.rb",
        "name 'site'\nversion '1.0.0'\ndepends 'netdev'\n",
    );
    write(
        &repo,
        "cookbooks/site/recipes/default.rb",
        "node['site']['vlans'].each do |id, name|\n  netdev_vlan name do\n    vlan_id id.to_i\n  end\nend\n",
    );
    let netgw = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .args(args)
            .env("NETGW_STATE_DIR", d.join("state"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let inv = inv.to_str().unwrap();
    let out = netgw(&["converge", "--inventory", inv]);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    {
        let st = lab.node("sw1").unwrap().device.state();
        assert_eq!(
            st.vlans.get(&110).map(String::as_str),
            Some("web"),
            "{text}"
        );
        assert_eq!(
            st.vlans.get(&120).map(String::as_str),
            Some("db_prod"),
            "group hoisted: {text}"
        );
    }
    let show = netgw(&["node", "show", "sw1", "--attribute", "site.vlans.120"]);
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("policy access (revision 4f0ac3e1b2)"),
        "{shown}"
    );
    let again = netgw(&["converge", "--inventory", inv, "--format", "json"]);
    let v: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["summary"]["updated"], 0, "{v}");

    let ok = netgw(&["validate"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );

    // A lock the repo's cookbook no longer matches: refused naming both versions.
    write(
        &repo,
        &format!("policies/access-{rev}.json"),
        &lock("1.1.0"),
    );
    let out = netgw(&["validate"]);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("locks cookbook site at 1.1.0") && text.contains("cookbooks/site is 1.0.0"),
        "{text}"
    );
}

/// Arista's and Cisco's own recipes: their VLAN and interface resources read as netgw's, and every
/// property netgw does not manage refused by name, with file and line.
#[test]
fn vendor_cookbook_resources_map_or_are_refused_by_property() {
    let root = corpus("vendor");
    let refused = [
        (
            "eos::vlan",
            "eos/recipes/vlan.rb:8:",
            "eos_vlan property `trunk_groups`",
        ),
        (
            "cisco::routed",
            "cisco/recipes/routed.rb:1:",
            "cisco_interface property `vrf`",
        ),
        (
            "cisco::subinterface",
            "cisco/recipes/subinterface.rb:1:",
            "property `encapsulation_dot1q`",
        ),
        (
            "cisco::svi",
            "cisco/recipes/svi.rb:1:",
            "property `svi_autostate`",
        ),
        (
            "cisco::vlan",
            "cisco/recipes/vlan.rb:1:",
            "cisco_vlan property `shutdown`",
        ),
    ];
    for (recipe, at, what) in refused {
        let e = run_err(&root, &[recipe]);
        assert!(e.contains(at) && e.contains(what), "{recipe}: {e}");
    }
    let (_, c) = run(&root, &["cisco::trunk"]).unwrap();
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let port = &c.links[0].resource;
    assert_eq!(port.name, "Ethernet1/3");
    assert_eq!(format!("{:?}", port.mode).to_lowercase(), "some(trunk)");
    assert_eq!(
        port.trunk_vlans.as_ref().map(|v| v.to_string()),
        Some("20,30".into())
    );
    assert_eq!(port.native_vlan.map(|v| v.get()), Some(40));

    // The same resources with what netgw manages only: a VLAN each, a routed port.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "cookbooks/site/metadata.rb",
        "name 'site'\nversion '1.0.0'\n",
    );
    write(
        d,
        "cookbooks/site/recipes/default.rb",
        "eos_vlan '5' do\n  vlan_name 'Test_VLAN_5'\n  enable true\nend\n\
         cisco_vlan '220' do\n  vlan_name 'newtest'\n  state 'active'\nend\n\
         cisco_vlan '230' do\n  action :destroy\nend\n\
         cisco_interface 'Ethernet1/1' do\n  shutdown false\n  ipv4_address '192.0.2.43'\n  ipv4_netmask_length 24\n  mtu 1600\nend\n",
    );
    let (_, c) = run(d, &["site"]).unwrap();
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let vlans: Vec<String> = c
        .vlans
        .iter()
        .map(|v| format!("{:?}", v.resource))
        .collect();
    assert!(
        vlans[0].contains("5") && vlans[0].contains("Test_VLAN_5"),
        "{vlans:?}"
    );
    assert!(
        vlans[1].contains("220") && vlans[1].contains("newtest"),
        "{vlans:?}"
    );
    assert!(
        vlans[2].contains("230") && vlans[2].to_lowercase().contains("absent"),
        "{vlans:?}"
    );
    let l3 = format!("{:?}", c.l3);
    assert!(
        l3.contains("Ethernet1/1")
            && l3.contains("addr: 192.0.2.43, prefix: 24")
            && l3.contains("1600"),
        "{l3}"
    );
}

/// A cookbook checked out under its repository's name (`chef-site/`) is found by the name its
/// metadata gives, as knife and chef-client name it, for the run-list and for `depends`.
#[test]
fn cookbooks_are_found_by_their_metadata_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "cookbooks/chef-site/metadata.rb",
        "name 'site'\nversion '1.0.0'\n",
    );
    write(
        d,
        "cookbooks/chef-site/attributes/default.rb",
        "default['site']['vlan'] = 310\n",
    );
    write(
        d,
        "cookbooks/chef-site/recipes/default.rb",
        "vlan node['site']['vlan'].to_s do\n  name 'from_site'\nend\n",
    );
    write(
        d,
        "cookbooks/access/metadata.rb",
        "name 'access'\nversion '1.0.0'\ndepends 'site'\n",
    );
    write(
        d,
        "cookbooks/access/recipes/default.rb",
        "include_recipe 'site'\n",
    );
    let (_, c) = run(d, &["access"]).unwrap();
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    assert_eq!(c.vlans.len(), 1, "{:?}", c.vlans);
    assert_eq!(c.vlans[0].resource.id.get(), 310);
    // Control: a name no directory or metadata gives is still unknown.
    let e = run_err(d, &["chef"]);
    assert!(e.contains("chef"), "{e}");
}

// Encrypted data bag items, made by Chef's own encryptor in each of its three formats.

/// The recipe reading one item of each format, by both forms cookbooks use (and naming a VLAN
/// after the node, `node.name`, as a run sees it).
const ENCRYPTED_RECIPE: &str = "items = [data_bag_item('vlans', 'v1'), data_bag_item('vlans', 'v2'),\n\
     Chef::EncryptedDataBagItem.load('vlans', 'v3')]\n\
     items.each do |item|\n  item['vlans'].each do |v|\n    netdev_vlan v['name'] do\n      vlan_id v['id']\n    end\n  end\nend\n\
     netdev_vlan \"node_#{node.name}\" do\n  vlan_id 199\nend\n";

/// A repo whose `data_bags/vlans/v{1,2,3}.json` are encrypted by Chef in format 1, 2 and 3 with
/// the secret in `secret` (written with surrounding whitespace, which Chef strips).
fn encrypted_repo(repo: &Path, secret: &Path) {
    std::fs::create_dir_all(repo).unwrap();
    std::fs::write(secret, "  s3cret-Of-the-Shop \n\n").unwrap();
    for v in 1..=3u8 {
        let item = json!({"id": format!("v{v}"), "vlans": [{"id": 100 + u16::from(v), "name": format!("enc_{v}")}],
            "note": "only the vlans key is read"});
        let enc = common::chef_encrypt(v, secret, &item);
        assert!(!enc.to_string().contains("enc_"), "encrypted: {enc}");
        write(
            repo,
            &format!("data_bags/vlans/v{v}.json"),
            &enc.to_string(),
        );
    }
    write(
        repo,
        "cookbooks/site/metadata.rb",
        "name 'site'\nversion '1.0.0'\ndepends 'netdev'\n",
    );
    write(repo, "cookbooks/site/recipes/default.rb", ENCRYPTED_RECIPE);
    write(
        repo,
        "nodes/sw1.json",
        r#"{"name":"sw1","run_list":["recipe[site]"]}"#,
    );
}

/// The recipe's error with the data bag secret `secret` (none: not configured).
fn encrypted_err(repo: &Path, secret: Option<&Path>) -> String {
    let cookbooks = Cookbooks::open(repo).unwrap().with_data_bag_secret(secret);
    let mut attrs = AttributeSet::new();
    match load_run(&cookbooks, &["site".to_owned()], &mut attrs) {
        Ok(_) => panic!("evaluated"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn encrypted_data_bag_items_of_each_chef_format_converge_a_lab_switch() {
    let (_rt, lab, dir, inv) = eos_lab("enc");
    let d = dir.path();
    let (repo, secret) = (d.join("repo"), d.join("secret"));
    encrypted_repo(&repo, &secret);
    let state = d.join("state");
    let converge = |secret: &Path| {
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(&repo)
            .arg("--encrypted-data-bag-secret")
            .arg(secret)
            .args(["converge", "--format", "json", "--inventory"])
            .arg(&inv)
            .env("NETGW_STATE_DIR", &state)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = converge(&secret);
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    let vlans = lab.node("sw1").unwrap().device.state().vlans.clone();
    for v in 1..=3u16 {
        let want = format!("enc_{v}");
        assert_eq!(vlans.get(&(100 + v)), Some(&want), "{vlans:?}\n{text}");
    }
    assert_eq!(vlans.get(&199).map(String::as_str), Some("node_sw1"));
    assert!(!text.contains("s3cret"), "{text}");
    for p in common::walk(&state) {
        let body = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        assert!(!body.contains("s3cret"), "{}", p.display());
    }
    // A wrong secret: the converge fails before the device, naming the item and key, not the secret.
    let wrong = d.join("wrong");
    std::fs::write(&wrong, "not-the-secret\n").unwrap();
    let out = converge(&wrong);
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("default.rb:1")
            && text.contains("data bag item vlans/v1, key ")
            && text.contains("cannot decrypt"),
        "{text}"
    );
    assert!(
        !text.contains("not-the-secret") && !text.contains("s3cret"),
        "{text}"
    );
}

#[test]
fn a_wrong_secret_a_forged_item_or_none_is_refused_for_each_format() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, secret) = (dir.path().join("repo"), dir.path().join("secret"));
    encrypted_repo(&repo, &secret);
    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, "s3cret-Of-the-Shop!").unwrap();
    // Each format alone, first with the wrong secret, then forged (one byte of its ciphertext or
    // tag changed), then with no secret at all.
    let formats = [
        ("v1", "data_bag_item('vlans', 'v1')", "bad decrypt"),
        ("v2", "data_bag_item('vlans', 'v2')", "invalid hmac"),
        (
            "v3",
            "Chef::EncryptedDataBagItem.load('vlans', 'v3')",
            "authentication failed",
        ),
    ];
    for (item, call, why) in formats {
        let recipe =
            format!("x = {call}\nnetdev_vlan 'a' do\n  vlan_id x['vlans'][0]['id']\nend\n");
        write(&repo, "cookbooks/site/recipes/default.rb", &recipe);
        let e = encrypted_err(&repo, Some(&wrong));
        let named = format!("data bag item vlans/{item}, key \"vlans\": cannot decrypt:");
        assert!(
            e.contains("default.rb:1") && e.contains(&named),
            "{item}: {e}"
        );
        assert!(item == "v1" || e.contains(why), "{item}: {e}");
        assert!(!e.contains("s3cret"), "{e}");
        // The right secret reads it.
        let cookbooks = Cookbooks::open(&repo)
            .unwrap()
            .with_data_bag_secret(Some(&secret));
        let mut attrs = AttributeSet::new();
        load_run(&cookbooks, &["site".to_owned()], &mut attrs)
            .unwrap_or_else(|e| panic!("{item}: {e}"));
        // Forged: the last character of a base64 field before its padding changed.
        let path = repo.join(format!("data_bags/vlans/{item}.json"));
        let good = std::fs::read_to_string(&path).unwrap();
        let mut v: Value = serde_json::from_str(&good).unwrap();
        let field = if item == "v3" {
            "auth_tag"
        } else {
            "encrypted_data"
        };
        let text = v["vlans"][field].as_str().unwrap().to_owned();
        let at = text.trim_end().trim_end_matches('=').len() - 2;
        let flip = if &text[at..=at] == "A" { "B" } else { "A" };
        v["vlans"][field] = Value::from(format!("{}{flip}{}", &text[..at], &text[at + 1..]));
        std::fs::write(&path, v.to_string()).unwrap();
        let e = encrypted_err(&repo, Some(&secret));
        assert!(e.contains(&named), "{item} forged: {e}");
        if item != "v1" {
            assert!(e.contains(why), "{item} forged: {e}");
        }
        std::fs::write(&path, good).unwrap();
        let e = encrypted_err(&repo, None);
        assert!(
            e.contains("is an encrypted data bag item and no secret is configured")
                && e.contains("--encrypted-data-bag-secret"),
            "{item}: {e}"
        );
    }
    // A secret of the recipe's own names a file on the Chef node: refused by name.
    for call in [
        "data_bag_item('vlans', 'v1', 'x')",
        "Chef::EncryptedDataBagItem.load('vlans', 'v1', s)",
        "Chef::EncryptedDataBagItem.load_secret('/etc/chef/encrypted_data_bag_secret')",
    ] {
        write(
            &repo,
            "cookbooks/site/recipes/default.rb",
            &format!("s = 1\nx = {call}\n"),
        );
        let e = encrypted_err(&repo, Some(&secret));
        assert!(
            e.contains("default.rb:2") && e.contains("with a secret of its own"),
            "{call}: {e}"
        );
    }
}
