//! Harnesses for netgw's input formats: the local repo (node / role / environment JSON, attribute and
//! recipe YAML, run-lists, VLAN and link resources), inventories and external-node-classifier answers.
//! Oracles: no panic, no overflow, no hang; plus round trips where the format has a printer (a run-list
//! item and a VLAN list print back to what they parse from).

use std::hint::black_box;
use std::path::Path;

use netgw::classify;
use netgw::inventory::Inventory;
use netgw::store::local::{parse_json, parse_yaml};
use netgw_models::attributes::{AttributeSet, Component, Source, layers_from_document};
use netgw_models::compile::{RecipeSource, compile};
use netgw_models::resource::{VlanId, VlanSet};
use netgw_models::expand::expand;
use netgw_models::runlist::{RunList, RunListItem};
use netgw_models::{
    Attrs, CurrentState, DesiredState, Environment, ModelError, Node, NodeName, Role, allowlist,
    attributes,
};
use serde_json::Value;

/// Strings that must round-trip through their printer.
fn strings(s: &str) {
    for line in s.lines().take(64) {
        if let Ok(item) = RunListItem::parse(line) {
            let again = RunListItem::parse(&item.to_string())
                .unwrap_or_else(|e| panic!("{item} (from {line:?}) does not parse again: {e}"));
            assert_eq!(
                again, item,
                "run-list item {line:?} changed in a round trip"
            );
            black_box(item.cookbook_and_recipe());
        }
        if let Ok(set) = VlanSet::parse(line) {
            let printed = set.to_range_string();
            let again = VlanSet::parse(&printed).unwrap_or_else(|e| {
                panic!("{printed:?} (from {line:?}) does not parse again: {e}")
            });
            assert_eq!(again, set, "vlan list {line:?} changed in a round trip");
            black_box(set.to_range_chunks(64));
        }
        black_box(VlanId::parse(line).is_ok());
        black_box(NodeName::new(line).is_ok());
        black_box(allowlist::AllowEntry::parse(line).is_ok());
        black_box(attributes::parse_dotted_path(line).is_ok());
    }
    black_box(RunList::parse_str(s).is_ok());
}

/// Expand a run-list where every role is the role under test (exercises the loop guard and dedup).
fn expand_with(role: &Role, env: &str, run_list: &RunList) {
    let r = expand::<ModelError, _>(env, run_list, |_| Ok(Some(role.clone())));
    if let Ok(x) = r {
        black_box(x.recipe_names());
        black_box(x.ensure_complete().is_ok());
    }
}

/// An attribute or recipe document (already JSON values), as the store and the compiler use it.
fn document(v: &Value) {
    if let Ok(layers) = layers_from_document("fuzz", v) {
        let mut set = AttributeSet::new();
        for (component, attrs) in layers {
            set.push(
                component,
                Source::AttributeFile {
                    cookbook: "fuzz".into(),
                    file: "default.yml".into(),
                },
                attrs,
            );
        }
        let merged = set.merged();
        black_box(set.resolve(&["netdev".into(), "vlans".into()]));
        black_box(compile(
            &merged,
            &[("fuzz::vlans".into(), RecipeSource::BuiltinVlans)],
        ));
    }
    if let Value::Object(attrs) = v {
        let items = match attrs.get("resources") {
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        let c = compile(
            attrs,
            &[
                ("fuzz::vlans".into(), RecipeSource::BuiltinVlans),
                ("fuzz::links".into(), RecipeSource::BuiltinLinks),
                ("fuzz::default".into(), RecipeSource::Declarative(items)),
            ],
        );
        black_box(c.vlan_list());
        black_box(c.link_list());
        black_box(allowlist::filter(attrs, None));
    }
    black_box(attributes::deep_merge(v.clone(), v.clone()));
}

/// The local repo: node, role and environment JSON (what `parse_json` is used for), attribute and
/// recipe YAML (`parse_yaml`), run-list strings and VLAN lists.
pub fn repo(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    strings(s);
    let p = Path::new("fuzz.json");
    black_box(Node::from_json(s).is_ok());
    if let Ok(d) = parse_json::<DesiredState>(p, s) {
        black_box(serde_json::to_string(&d).is_ok());
        black_box(d.tags());
    }
    if let Ok(c) = parse_json::<CurrentState>(p, s) {
        black_box(serde_json::to_string(&c).is_ok());
    }
    if let Ok(e) = parse_json::<Environment>(p, s) {
        black_box(serde_json::to_string(&e).is_ok());
    }
    if let Ok(r) = parse_json::<Role>(p, s) {
        black_box(serde_json::to_string(&r).is_ok());
        for env in ["_default", "production"] {
            expand_with(&r, env, r.run_list_for(env));
        }
    }
    if let Ok(v) = parse_json::<Value>(p, s) {
        document(&v);
    }
    if let Ok(v) = parse_yaml(Path::new("fuzz.yml"), s) {
        document(&v);
    }
}

/// An inventory file (Nornir SimpleInventory single-file or hosts-file form, containerlab's
/// `ansible-inventory.yml` or `topology-data.json`), then every host resolved into a device target. Credential references that read files (`file:PATH`) are skipped: resolving them
/// reads the filesystem (`file:/dev/zero` never ends), which is the operator's choice, not parsing.
pub fn inventory(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    // `.json` is read as containerlab's topology-data.json; anything else as YAML (Nornir, or
    // containerlab's ansible-inventory.yml).
    let json = Inventory::from_text(Path::new("topology-data.json"), s);
    if let Ok(inv) = &json {
        hosts(inv, s);
    }
    if let Ok(inv) = Inventory::from_text(Path::new("hosts.yaml"), s) {
        hosts(&inv, s);
    }
}

/// Resolve every host into a device target, and every group's members.
fn hosts(inv: &Inventory, s: &str) {
    let reads_files = s.contains("file:");
    for name in inv.names() {
        if !reads_files {
            black_box(inv.target(&name).map_err(|e| e.to_string()).err());
        }
    }
    for g in inv.groups.keys() {
        black_box(inv.in_group(g));
    }
}

/// An external node classifier's answer (Puppet ENC YAML), applied to a node as netgw does.
pub fn enc(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(c) = classify::parse(s) else {
        return;
    };
    #[allow(clippy::unwrap_used)]
    let mut desired = DesiredState::new(NodeName::new("fuzz").unwrap());
    let mut attrs = AttributeSet::new();
    attrs.push(
        Component::Normal,
        Source::Node,
        Attrs::from_iter([("k".to_owned(), Value::from(1))]),
    );
    classify::apply(&c, &mut desired, &mut attrs);
    black_box(classify::attributes(&c));
    black_box(attrs.merged());
    black_box(serde_json::to_string(&desired).is_ok());
}

/// A recipe's `include_recipe` that includes nothing (the fuzzer feeds one file at a time).
struct NoInclude;

impl netgw::cookbook::eval::Host for NoInclude {
    fn include_recipe(
        &mut self,
        _: &str,
        _: &mut AttributeSet,
        at: netgw::cookbook::CookbookError,
    ) -> Result<(), netgw::cookbook::CookbookError> {
        Err(at)
    }
}

/// A Ruby cookbook file (`.rb`): parsed by lib-ruby-parser, then evaluated statically by netgw's
/// evaluator as an attribute file over a node with facts, as a recipe (resources mapped onto netgw's
/// VLANs and links), and read as a `metadata.rb`. Every bound (steps, depth, range size) must hold: an
/// input either evaluates or is refused with an error naming the file, never a panic or a hang.
pub fn cookbook(data: &[u8]) {
    use netgw::cookbook::{eval, metadata, netdev, ruby};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("cookbooks/fuzz/recipes/default.rb");
    black_box(metadata::parse_metadata_rb(path, text, "fuzz").is_ok());
    let Ok(program) = ruby::parse(path, text) else {
        return;
    };
    let facts = Attrs::from_iter([
        ("platform".to_owned(), Value::from("eos")),
        ("platform_version".to_owned(), Value::from("4.28.1F")),
    ]);
    let mut attrs = AttributeSet::new();
    attrs.push(Component::Automatic, Source::Automatic, facts);
    let file = Source::AttributeFile {
        cookbook: "fuzz".into(),
        file: "default.rb".into(),
    };
    if eval::attribute_file(&program, &mut attrs, file, None).is_ok() {
        black_box(attrs.merged());
    }
    let recipe = Source::Recipe {
        recipe: "fuzz::default".into(),
    };
    if let Ok(decls) = eval::recipe(&program, &mut attrs, recipe, &mut NoInclude) {
        black_box(netdev::to_declarative(&[("fuzz::default".to_owned(), decls)]).is_ok());
    }
}

