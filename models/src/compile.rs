//! Compile resources from the expanded run-list and the merged attributes (docs/design.md §3 step 7).
//!
//! Built-in, attribute-driven recipes:
//! * `netdev::vlans` declares one `vlan` per entry of `node['netdev']['vlans']`, keyed by VLAN id
//!   (`{"100": {"name": "web"}}`; `{"100": "web"}` is short for a name; `{"100": {"state": "absent"}}`).
//! * `netdev::links` declares one `link` per entry of `node['netdev']['links']`, keyed by interface name.
//!
//! Collection policies are attributes too: `node['netdev']['vlan_policy']` and
//! `node['netdev']['link_policy']` (`merge`, `replace`, `purge`; default `merge`).
//!
//! Repo recipes list resources declaratively (`resources: [{type: vlan, id: 10, name: web}, {type: link,
//! name: Ethernet1, mode: access, access_vlan: 10}]`). A resource declared twice is an error naming both
//! recipes, since which one should win would be a guess.

use crate::node::Attrs;
use crate::plan::Policy;
use crate::resource::{Link, Vlan, VlanId, normalize_interface_name};
use serde::Serialize;
use serde_json::Value;

/// Where a resource was declared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Declared<T> {
    pub recipe: String,
    pub resource: T,
}

/// The resources of one node, in declaration order, with their collection policies.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Compiled {
    pub vlans: Vec<Declared<Vlan>>,
    pub links: Vec<Declared<Link>>,
    pub vlan_policy: Policy,
    pub link_policy: Policy,
    /// Resources that could not be compiled: (recipe, resource name, reason).
    pub errors: Vec<CompileError>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompileError {
    pub recipe: String,
    pub resource: String,
    pub message: String,
}

impl Compiled {
    pub fn vlan_list(&self) -> Vec<Vlan> {
        self.vlans.iter().map(|d| d.resource.clone()).collect()
    }

    pub fn link_list(&self) -> Vec<Link> {
        self.links.iter().map(|d| d.resource.clone()).collect()
    }

    pub fn resource_count(&self) -> usize {
        self.vlans.len() + self.links.len()
    }
}

/// A recipe to compile: the built-ins by name, repo recipes with their `resources:` list.
#[derive(Debug, Clone, PartialEq)]
pub enum RecipeSource {
    BuiltinVlans,
    BuiltinLinks,
    Declarative(Vec<Value>),
}

/// Compile every recipe, in run-list order.
pub fn compile(merged: &Attrs, recipes: &[(String, RecipeSource)]) -> Compiled {
    let mut c = Compiled::default();
    let netdev = merged.get("netdev").and_then(Value::as_object);
    c.vlan_policy = policy(netdev, "vlan_policy", &mut c.errors);
    c.link_policy = policy(netdev, "link_policy", &mut c.errors);
    for (recipe, source) in recipes {
        match source {
            RecipeSource::BuiltinVlans => {
                if let Some(v) = netdev.and_then(|n| n.get("vlans")) {
                    builtin_vlans(&mut c, recipe, v);
                }
            }
            RecipeSource::BuiltinLinks => {
                if let Some(v) = netdev.and_then(|n| n.get("links")) {
                    builtin_links(&mut c, recipe, v);
                }
            }
            RecipeSource::Declarative(items) => {
                for (i, item) in items.iter().enumerate() {
                    declarative(&mut c, recipe, i, item);
                }
            }
        }
    }
    c
}

fn policy(netdev: Option<&Attrs>, key: &str, errors: &mut Vec<CompileError>) -> Policy {
    match netdev.and_then(|n| n.get(key)) {
        None | Some(Value::Null) => Policy::Merge,
        Some(Value::String(s)) => s.parse().unwrap_or_else(|e: String| {
            errors.push(CompileError {
                recipe: "attributes".into(),
                resource: format!("netdev.{key}"),
                message: e,
            });
            Policy::Merge
        }),
        Some(other) => {
            errors.push(CompileError {
                recipe: "attributes".into(),
                resource: format!("netdev.{key}"),
                message: format!("must be merge, replace or purge, found {other}"),
            });
            Policy::Merge
        }
    }
}

fn err(c: &mut Compiled, recipe: &str, resource: String, message: String) {
    c.errors.push(CompileError {
        recipe: recipe.into(),
        resource,
        message,
    });
}

fn add_vlan(c: &mut Compiled, recipe: &str, vlan: Vlan) {
    let name = format!("vlan[{}]", vlan.id);
    if let Some(prev) = c.vlans.iter().find(|d| d.resource.id == vlan.id) {
        let msg = format!("declared twice, in {} and {recipe}", prev.recipe);
        return err(c, recipe, name, msg);
    }
    if let Err(e) = vlan.validate() {
        return err(c, recipe, name, e.to_string());
    }
    c.vlans.push(Declared {
        recipe: recipe.into(),
        resource: vlan,
    });
}

fn add_link(c: &mut Compiled, recipe: &str, mut link: Link) {
    // Errors name the interface as the user wrote it; the plan uses the normalised name.
    if let Err(e) = link.validate() {
        return err(c, recipe, format!("link[{}]", link.name), e.to_string());
    }
    link.name = normalize_interface_name(&link.name);
    let name = format!("link[{}]", link.name);
    if let Some(prev) = c.links.iter().find(|d| d.resource.name == link.name) {
        let msg = format!("declared twice, in {} and {recipe}", prev.recipe);
        return err(c, recipe, name, msg);
    }
    c.links.push(Declared {
        recipe: recipe.into(),
        resource: link,
    });
}

fn builtin_vlans(c: &mut Compiled, recipe: &str, v: &Value) {
    let Some(map) = v.as_object() else {
        return err(
            c,
            recipe,
            "netdev.vlans".into(),
            format!("must be a map of VLAN id to properties, found {v}"),
        );
    };
    // In VLAN-id order, whatever order the attribute layers merged them in (reports read better).
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by_key(|(k, _)| (k.trim().parse::<u32>().unwrap_or(u32::MAX), k.to_string()));
    for (key, props) in entries {
        let id = match VlanId::parse(key) {
            Ok(id) => id,
            Err(e) => {
                err(c, recipe, format!("vlan[{key}]"), e.to_string());
                continue;
            }
        };
        let mut obj = match props {
            Value::Object(m) => m.clone(),
            Value::String(s) => {
                let mut m = serde_json::Map::new();
                m.insert("name".into(), Value::String(s.clone()));
                m
            }
            Value::Null => serde_json::Map::new(),
            other => {
                err(
                    c,
                    recipe,
                    format!("vlan[{key}]"),
                    format!("properties must be a map or a name, found {other}"),
                );
                continue;
            }
        };
        if let Some(given) = obj.get("id")
            && given.as_i64() != Some(i64::from(id.get()))
            && given.as_str() != Some(key.as_str())
        {
            err(
                c,
                recipe,
                format!("vlan[{key}]"),
                format!("id {given} does not match its key {key}"),
            );
            continue;
        }
        obj.insert("id".into(), Value::from(id.get()));
        match serde_json::from_value::<Vlan>(Value::Object(obj)) {
            Ok(vlan) => add_vlan(c, recipe, vlan),
            Err(e) => err(c, recipe, format!("vlan[{key}]"), with_hint(e)),
        }
    }
}

fn builtin_links(c: &mut Compiled, recipe: &str, v: &Value) {
    let Some(map) = v.as_object() else {
        return err(
            c,
            recipe,
            "netdev.links".into(),
            format!("must be a map of interface name to properties, found {v}"),
        );
    };
    let spellings = interface_spellings(map.keys());
    for (key, props) in map {
        if let Some(others) = spellings.get(key) {
            let msg = format!(
                "the same interface is also declared as {}: keep one spelling",
                others.join(", ")
            );
            err(c, recipe, format!("link[{key}]"), msg);
            continue;
        }
        let mut obj = match props {
            Value::Object(m) => m.clone(),
            Value::Null => serde_json::Map::new(),
            other => {
                err(
                    c,
                    recipe,
                    format!("link[{key}]"),
                    format!("properties must be a map, found {other}"),
                );
                continue;
            }
        };
        obj.insert("name".into(), Value::String(key.clone()));
        match serde_json::from_value::<Link>(Value::Object(obj)) {
            Ok(link) => add_link(c, recipe, link),
            Err(e) => err(c, recipe, format!("link[{key}]"), with_hint(e)),
        }
    }
}

/// Keys of `netdev.links` that name one interface in two spellings (`Et1`, `Ethernet1`): for each,
/// the other spellings. Both come from different layers (a role's and a node's), so each is reported
/// where it was written.
fn interface_spellings<'a>(
    keys: impl Iterator<Item = &'a String>,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut by_name: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for k in keys {
        by_name
            .entry(normalize_interface_name(k))
            .or_default()
            .push(k.clone());
    }
    let mut out = std::collections::BTreeMap::new();
    for group in by_name.into_values().filter(|g| g.len() > 1) {
        for k in &group {
            let others = group.iter().filter(|o| *o != k).cloned().collect();
            out.insert(k.clone(), others);
        }
    }
    out
}

/// serde's error with the nearest field named when it is an unknown one.
fn with_hint(e: serde_json::Error) -> String {
    crate::name::with_field_hint(e.to_string())
}

fn declarative(c: &mut Compiled, recipe: &str, index: usize, item: &Value) {
    let Some(obj) = item.as_object() else {
        return err(
            c,
            recipe,
            format!("resources[{index}]"),
            format!("must be a map, found {item}"),
        );
    };
    let mut obj = obj.clone();
    let kind = obj.remove("type");
    match kind.as_ref().and_then(Value::as_str) {
        Some("vlan") => match serde_json::from_value::<Vlan>(Value::Object(obj)) {
            Ok(v) => add_vlan(c, recipe, v),
            Err(e) => err(
                c,
                recipe,
                format!("resources[{index}] (vlan)"),
                with_hint(e),
            ),
        },
        Some("link") => match serde_json::from_value::<Link>(Value::Object(obj)) {
            Ok(l) => add_link(c, recipe, l),
            Err(e) => err(
                c,
                recipe,
                format!("resources[{index}] (link)"),
                with_hint(e),
            ),
        },
        Some(other) => err(
            c,
            recipe,
            format!("resources[{index}]"),
            format!("unknown resource type {other:?} (vlan or link)"),
        ),
        None => err(
            c,
            recipe,
            format!("resources[{index}]"),
            "has no `type` (vlan or link)".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attrs(v: Value) -> Attrs {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn builtins_read_netdev_attributes() {
        let m = attrs(json!({"netdev": {
            "vlan_policy": "purge",
            "vlans": {"100": {"name": "web"}, "200": "db", "300": {"state": "absent"}},
            "links": {"Et1": {"description": "srv", "mode": "access", "access_vlan": 100}}
        }}));
        let c = compile(
            &m,
            &[
                ("netdev::vlans".into(), RecipeSource::BuiltinVlans),
                ("netdev::links".into(), RecipeSource::BuiltinLinks),
            ],
        );
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        assert_eq!(c.vlan_policy, Policy::Purge);
        assert_eq!(c.link_policy, Policy::Merge);
        assert_eq!(c.vlans.len(), 3);
        assert_eq!(c.vlans[1].resource.name.as_deref(), Some("db"));
        assert_eq!(
            c.links[0].resource.name, "Ethernet1",
            "names are normalised"
        );
        assert_eq!(c.links[0].recipe, "netdev::links");
    }

    #[test]
    fn bad_entries_fail_alone_with_names() {
        let m = attrs(json!({"netdev": {
            "vlan_policy": "wipe",
            "vlans": {"0": {"name": "zero"}, "4095": {}, "10": {"name": "bad\nname"}, "11": {"nmae": "typo"}, "12": {"name": "ok"}},
            "links": {"Et1;reload": {}, "Et2": {"mode": "access", "trunk_vlans": "1-2"}}
        }}));
        let c = compile(
            &m,
            &[
                ("netdev::vlans".into(), RecipeSource::BuiltinVlans),
                ("netdev::links".into(), RecipeSource::BuiltinLinks),
            ],
        );
        assert_eq!(c.vlans.len(), 1);
        let names: Vec<&str> = c.errors.iter().map(|e| e.resource.as_str()).collect();
        assert_eq!(
            names,
            [
                "netdev.vlan_policy",
                "vlan[0]",
                "vlan[10]",
                "vlan[11]",
                "vlan[4095]",
                "link[Et1;reload]",
                "link[Et2]"
            ]
        );
        assert!(c.errors[3].message.contains("nmae"), "{:?}", c.errors[3]);
    }

    #[test]
    fn declarative_recipes_and_duplicates() {
        let m = attrs(json!({"netdev": {"vlans": {"10": "web"}}}));
        let c = compile(
            &m,
            &[
                ("netdev::vlans".into(), RecipeSource::BuiltinVlans),
                (
                    "site::default".into(),
                    RecipeSource::Declarative(vec![
                        json!({"type": "vlan", "id": 10, "name": "other"}),
                        json!({"type": "link", "name": "Gi0/1", "mode": "trunk", "trunk_vlans": "10-12"}),
                        json!({"type": "router", "name": "x"}),
                        json!({"id": 3}),
                    ]),
                ),
            ],
        );
        assert_eq!(c.vlans.len(), 1);
        assert_eq!(c.links[0].resource.name, "GigabitEthernet0/1");
        assert_eq!(c.errors.len(), 3);
        assert!(
            c.errors[0]
                .message
                .contains("declared twice, in netdev::vlans and site::default")
        );
    }

    #[test]
    fn a_misspelt_property_and_two_spellings_of_one_interface_are_named() {
        let merged: Attrs = serde_json::from_value(serde_json::json!({"netdev": {"links": {
            "Et1": {"description": "a"},
            "Ethernet1": {"description": "b"},
            "Ethernet2": {"acess_vlan": 10},
        }}}))
        .unwrap();
        let c = compile(
            &merged,
            &[("netdev::links".into(), RecipeSource::BuiltinLinks)],
        );
        let msgs: Vec<String> = c
            .errors
            .iter()
            .map(|e| format!("{}: {}", e.resource, e.message))
            .collect();
        assert!(
            msgs.iter()
                .any(|m| m
                    .starts_with("link[Et1]: the same interface is also declared as Ethernet1")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m
                    .starts_with("link[Ethernet1]: the same interface is also declared as Et1")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(
                |m| m.starts_with("link[Ethernet2]: unknown field `acess_vlan`")
                    && m.ends_with("did you mean access_vlan?")
            ),
            "{msgs:?}"
        );
        assert!(c.links.is_empty());
    }
}
