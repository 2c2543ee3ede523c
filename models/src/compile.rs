//! Compile resources from the expanded run-list and the merged attributes (docs/design.md §3 step 7).
//!
//! Built-in, attribute-driven recipes:
//! * `netdev::vlans` declares one `vlan` per entry of `node['netdev']['vlans']`, keyed by VLAN id
//!   (`{"100": {"name": "web"}}`; `{"100": "web"}` is short for a name; `{"100": {"state": "absent"}}`).
//! * `netdev::links` declares one `link` per entry of `node['netdev']['links']`, keyed by interface name.
//!
//! * `netdev::lags` declares one `lag` per entry of `node['netdev']['lags']`, keyed by aggregate name.
//! * `netdev::l3_interfaces` declares one `l3_interface` per entry of `node['netdev']['l3_interfaces']`,
//!   keyed by interface name.
//!
//! Collection policies are attributes too: `node['netdev']['vlan_policy']`, `link_policy`, `lag_policy`
//! and `l3_interface_policy` (`merge`, `replace`, `purge`; default `merge`).
//!
//! A member of a declared aggregate takes its switchport settings from the aggregate: a link declaring
//! its own beside them, a port in two aggregates, or addresses on a member are errors naming both
//! declarations.
//!
//! Repo recipes list resources declaratively (`resources: [{type: vlan, id: 10, name: web}, {type: link,
//! name: Ethernet1, mode: access, access_vlan: 10}]`). A resource declared twice is an error naming both
//! recipes, since which one should win would be a guess.

use crate::node::Attrs;
use crate::plan::Policy;
use crate::plan::l3::L3Interface;
use crate::plan::lag::Lag;
use crate::resource::{Link, Presence, Vlan, VlanId, normalize_interface_name, same_interface};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a resource was declared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Declared<T> {
    pub recipe: String,
    pub resource: T,
}

/// The resources of one node, in declaration order, with their collection policies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Compiled {
    pub vlans: Vec<Declared<Vlan>>,
    pub links: Vec<Declared<Link>>,
    pub lags: Vec<Declared<Lag>>,
    pub l3: Vec<Declared<L3Interface>>,
    pub vlan_policy: Policy,
    pub link_policy: Policy,
    pub lag_policy: Policy,
    pub l3_policy: Policy,
    /// Resources that could not be compiled: (recipe, resource name, reason).
    pub errors: Vec<CompileError>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

    pub fn lag_list(&self) -> Vec<Lag> {
        self.lags.iter().map(|d| d.resource.clone()).collect()
    }

    pub fn l3_list(&self) -> Vec<L3Interface> {
        self.l3.iter().map(|d| d.resource.clone()).collect()
    }

    pub fn resource_count(&self) -> usize {
        self.vlans.len() + self.links.len() + self.lags.len() + self.l3.len()
    }
}

/// A recipe to compile: the built-ins by name, repo recipes with their `resources:` list.
#[derive(Debug, Clone, PartialEq)]
pub enum RecipeSource {
    BuiltinVlans,
    BuiltinLinks,
    BuiltinLags,
    BuiltinL3,
    Declarative(Vec<Value>),
}

/// Compile every recipe, in run-list order.
pub fn compile(merged: &Attrs, recipes: &[(String, RecipeSource)]) -> Compiled {
    let mut c = Compiled::default();
    let netdev = merged.get("netdev").and_then(Value::as_object);
    c.vlan_policy = policy(netdev, "vlan_policy", &mut c.errors);
    c.link_policy = policy(netdev, "link_policy", &mut c.errors);
    c.lag_policy = policy(netdev, "lag_policy", &mut c.errors);
    c.l3_policy = policy(netdev, "l3_interface_policy", &mut c.errors);
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
            RecipeSource::BuiltinLags => {
                if let Some(v) = netdev.and_then(|n| n.get("lags")) {
                    builtin_keyed(&mut c, recipe, v, "lags", add_lag);
                }
            }
            RecipeSource::BuiltinL3 => {
                if let Some(v) = netdev.and_then(|n| n.get("l3_interfaces")) {
                    builtin_keyed(&mut c, recipe, v, "l3_interfaces", add_l3);
                }
            }
            RecipeSource::Declarative(items) => {
                for (i, item) in items.iter().enumerate() {
                    declarative(&mut c, recipe, i, item);
                }
            }
        }
    }
    check_members(&mut c);
    c
}

/// A resource kind keyed by name in `netdev.<attr>`: each entry's properties, with the key as `name`.
trait Keyed: serde::de::DeserializeOwned {
    const KIND: &'static str;
}

impl Keyed for Lag {
    const KIND: &'static str = "lag";
}

impl Keyed for L3Interface {
    const KIND: &'static str = "l3_interface";
}

fn builtin_keyed<T: Keyed>(
    c: &mut Compiled,
    recipe: &str,
    v: &Value,
    attr: &str,
    add: fn(&mut Compiled, &str, T),
) {
    let Some(map) = v.as_object() else {
        return err(
            c,
            recipe,
            format!("netdev.{attr}"),
            format!("must be a map of interface name to properties, found {v}"),
        );
    };
    for (key, props) in map {
        let name = format!("{}[{key}]", T::KIND);
        let mut obj = match props {
            Value::Object(m) => m.clone(),
            Value::Null => serde_json::Map::new(),
            other => {
                err(
                    c,
                    recipe,
                    name,
                    format!("properties must be a map, found {other}"),
                );
                continue;
            }
        };
        obj.insert("name".into(), Value::String(key.clone()));
        match serde_json::from_value::<T>(Value::Object(obj)) {
            Ok(r) => add(c, recipe, r),
            Err(e) => err(c, recipe, name, with_hint(e)),
        }
    }
}

fn add_lag(c: &mut Compiled, recipe: &str, mut lag: Lag) {
    if let Err(e) = lag.validate() {
        return err(c, recipe, format!("lag[{}]", lag.name), e.to_string());
    }
    lag.normalize();
    let name = format!("lag[{}]", lag.name);
    if let Some(prev) = c
        .lags
        .iter()
        .find(|d| same_interface(&d.resource.name, &lag.name))
    {
        let msg = format!("declared twice, in {} and {recipe}", prev.recipe);
        return err(c, recipe, name, msg);
    }
    c.lags.push(Declared {
        recipe: recipe.into(),
        resource: lag,
    });
}

fn add_l3(c: &mut Compiled, recipe: &str, mut l3: L3Interface) {
    if let Err(e) = l3.validate() {
        return err(
            c,
            recipe,
            format!("l3_interface[{}]", l3.name),
            e.to_string(),
        );
    }
    crate::plan::l3::normalize(&mut l3);
    let name = format!("l3_interface[{}]", l3.name);
    if let Some(prev) = c.l3.iter().find(|d| d.resource.name == l3.name) {
        let msg = format!("declared twice, in {} and {recipe}", prev.recipe);
        return err(c, recipe, name, msg);
    }
    c.l3.push(Declared {
        recipe: recipe.into(),
        resource: l3,
    });
}

/// Members follow their aggregate: a member's own switchport settings, a port bundled twice, or
/// addresses on a member (or on a port declared switched) are errors naming both declarations, and
/// the later declaration is left out.
fn check_members(c: &mut Compiled) {
    let present: Vec<(String, String, String)> = c
        .lags
        .iter()
        .filter(|d| d.resource.state == Presence::Present)
        .flat_map(|d| {
            d.resource
                .members()
                .iter()
                .map(|m| (m.clone(), d.resource.name.clone(), d.recipe.clone()))
        })
        .collect();
    let owner = |port: &str| present.iter().find(|(m, _, _)| same_interface(m, port));
    let mut errors = Vec::new();
    for (i, (m, lag, recipe)) in present.iter().enumerate() {
        if let Some((_, other, other_recipe)) = present[..i]
            .iter()
            .find(|(o, l, _)| same_interface(o, m) && l != lag)
        {
            errors.push(CompileError {
                recipe: recipe.clone(),
                resource: format!("lag[{lag}]"),
                message: format!("bundles {m}, which lag[{other}] (in {other_recipe}) bundles already; a port is in one aggregate"),
            });
        }
    }
    let lags = &c.lags;
    c.links.retain(|d| {
        let l = &d.resource;
        // The aggregate's own settings belong to its lag declaration alone.
        if let Some(lag) = lags.iter().find(|g| same_interface(&g.resource.name, &l.name)) {
            errors.push(CompileError {
                recipe: d.recipe.clone(),
                resource: format!("link[{}]", l.name),
                message: format!(
                    "is lag[{}] (in {}); declare the aggregate's settings on the lag",
                    lag.resource.name, lag.recipe
                ),
            });
            return false;
        }
        let switched = l.mode.is_some() || l.access_vlan.is_some() || l.trunk_vlans.is_some() || l.native_vlan.is_some();
        match owner(&l.name) {
            Some((_, lag, lag_recipe)) if switched => {
                errors.push(CompileError {
                    recipe: d.recipe.clone(),
                    resource: format!("link[{}]", l.name),
                    message: format!("sets switchport settings (mode/access_vlan/trunk_vlans/native_vlan) on a member of lag[{lag}] (in {lag_recipe}); a member follows its aggregate: declare them on the lag"),
                });
                false
            }
            _ => true,
        }
    });
    let links = &c.links;
    c.l3.retain(|d| {
        let name = &d.resource.name;
        let why = if let Some((_, lag, lag_recipe)) = owner(name) {
            Some(format!("is a member of lag[{lag}] (in {lag_recipe}); put the addresses on the aggregate"))
        } else {
            links.iter().find(|l| same_interface(&l.resource.name, name) && matches!(l.resource.mode, Some(crate::resource::LinkMode::Access | crate::resource::LinkMode::Trunk))).map(|l| format!("is declared a switched port by link[{}] (in {}); a port with addresses is routed", l.resource.name, l.recipe))
        };
        match why {
            Some(message) if d.resource.state == Presence::Present => {
                errors.push(CompileError {
                    recipe: d.recipe.clone(),
                    resource: format!("l3_interface[{name}]"),
                    message,
                });
                false
            }
            _ => true,
        }
    });
    c.errors.extend(errors);
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

const KINDS: &str = "vlan, link, lag or l3_interface";

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
        Some("lag") => match serde_json::from_value::<Lag>(Value::Object(obj)) {
            Ok(l) => add_lag(c, recipe, l),
            Err(e) => err(c, recipe, format!("resources[{index}] (lag)"), with_hint(e)),
        },
        Some("l3_interface") => match serde_json::from_value::<L3Interface>(Value::Object(obj)) {
            Ok(l) => add_l3(c, recipe, l),
            Err(e) => err(
                c,
                recipe,
                format!("resources[{index}] (l3_interface)"),
                with_hint(e),
            ),
        },
        Some(other) => err(
            c,
            recipe,
            format!("resources[{index}]"),
            format!("unknown resource type {other:?} ({KINDS})"),
        ),
        None => err(
            c,
            recipe,
            format!("resources[{index}]"),
            format!("has no `type` ({KINDS})"),
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
    fn lags_and_l3_interfaces_from_attributes_and_member_conflicts_name_both() {
        let m = attrs(json!({"netdev": {
            "lag_policy": "replace",
            "lags": {"Po10": {"links": ["Et1", "Et2"], "lacp": "active", "mode": "trunk", "trunk_vlans": "10,20"},
                     "Po11": {"links": ["Et2"]},
                     "Po12": {"linkz": ["Et5"]}},
            "l3_interfaces": {"vl10": {"ipv4": ["10.0.10.1/24"], "ipv6": ["2001:db8:10::1/64"]},
                              "Et1": {"ipv4": ["10.1.0.1/31"]},
                              "Et7": {"ipv4": ["10.2.0.1/31"]}}
        }}));
        let c = compile(
            &m,
            &[
                ("netdev::lags".into(), RecipeSource::BuiltinLags),
                ("netdev::l3_interfaces".into(), RecipeSource::BuiltinL3),
                (
                    "site::access".into(),
                    RecipeSource::Declarative(vec![
                        json!({"type": "link", "name": "Ethernet2", "mode": "access", "access_vlan": 10}),
                        json!({"type": "link", "name": "Et1", "description": "ok"}),
                        json!({"type": "link", "name": "Et7", "mode": "access"}),
                        json!({"type": "lag", "name": "Port-channel10"}),
                        json!({"type": "link", "name": "Po11", "description": "x"}),
                        json!({"type": "router"}),
                    ]),
                ),
            ],
        );
        assert_eq!(c.lag_policy, Policy::Replace);
        let lags: Vec<&str> = c.lags.iter().map(|d| d.resource.name.as_str()).collect();
        assert_eq!(lags, ["Port-channel10", "Port-channel11"]);
        assert_eq!(c.lags[0].resource.members(), ["Ethernet1", "Ethernet2"]);
        let l3: Vec<&str> = c.l3.iter().map(|d| d.resource.name.as_str()).collect();
        assert_eq!(l3, ["Vlan10"], "Et1 is a member, Et7 a switched port");
        let errs: Vec<String> = c
            .errors
            .iter()
            .map(|e| format!("{} {}: {}", e.recipe, e.resource, e.message))
            .collect();
        let has = |needle: &[&str]| errs.iter().any(|e| needle.iter().all(|n| e.contains(n)));
        assert!(has(&["lag[Po12]", "linkz"]), "{errs:#?}");
        assert!(
            has(&[
                "site::access lag[Port-channel10]",
                "declared twice, in netdev::lags"
            ]),
            "{errs:#?}"
        );
        assert!(
            has(&["unknown resource type \"router\" (vlan, link, lag or l3_interface)"]),
            "{errs:#?}"
        );
        assert!(
            has(&[
                "netdev::lags lag[Port-channel11]",
                "bundles Ethernet2",
                "lag[Port-channel10] (in netdev::lags)"
            ]),
            "{errs:#?}"
        );
        assert!(
            has(&[
                "site::access link[Ethernet2]",
                "member of lag[Port-channel10] (in netdev::lags)"
            ]),
            "{errs:#?}"
        );
        assert!(
            has(&["l3_interface[Ethernet1]", "member of lag[Port-channel10]"]),
            "{errs:#?}"
        );
        assert!(
            has(&[
                "l3_interface[Ethernet7]",
                "switched port by link[Ethernet7] (in site::access)"
            ]),
            "{errs:#?}"
        );
        let links: Vec<&str> = c.links.iter().map(|d| d.resource.name.as_str()).collect();
        assert_eq!(
            links,
            ["Ethernet1", "Ethernet7"],
            "a member's description alone is fine"
        );
        assert!(
            has(&[
                "site::access link[Port-channel11]",
                "is lag[Port-channel11] (in netdev::lags)"
            ]),
            "{errs:#?}"
        );
        assert_eq!(errs.len(), 8, "{errs:#?}");
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
