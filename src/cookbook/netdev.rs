//! Chef's netdev cookbook resources (and netgw's own `vlan` and `link`) as netgw's declarative
//! resources: the `{type: vlan|link, ...}` maps YAML recipes list, compiled by `netgw_models::compile`.
//!
//! Property by property (docs/cookbooks.md has the table), from the archived chef-cookbooks/netdev
//! `libraries/resource_*.rb`:
//! * `netdev_vlan NAME`: `vlan_id` (Integer, required: netgw keys VLANs by id), `vlan_name` (default
//!   NAME), `description` (only when set: the cookbook's default text is ignored by its own EOS
//!   provider); `:create` is present, `:delete` absent.
//! * `netdev_interface NAME`: `interface_name`, `description` (default `"Chef created interface:
//!   NAME"`), `enable` (default true), `mtu`; `speed`/`duplex` other than `auto` are refused.
//! * `netdev_l2_interface NAME`: `vlan_tagging true` is a trunk carrying `tagged_vlans` with
//!   `untagged_vlan` native; false is an access port in `untagged_vlan`. VLANs are named as the
//!   cookbook names them (a `netdev_vlan`'s `vlan_name` in the same run) or given by id.
//! * `netdev_lag NAME`: `links` (the members), `minimum_links`, `lacp` (`active`, `passive`, or
//!   `disable` for a static bundle); `:delete` is absent. The aggregate's own settings come from a
//!   `netdev_interface` / `netdev_l2_interface` of the same name, as netdev configures them.
//! * `netdev_l3_interface NAME` (netgw's: netdev has no layer-3 resource; named as its
//!   `netdev_l2_interface` twin): `ipv4` and `ipv6` (an address or a list; the first IPv4 is the
//!   primary), `description`, `enabled`, `mtu`; `:delete` removes the addresses.
//! * `netdev_lag_interface`, `netdev_group`: refused (no such netgw resource).
//!
//! One interface declared by both `netdev_interface` and `netdev_l2_interface` (the cookbook's usual
//! pattern) is one netgw link: an explicitly set property wins over the other resource's default, and
//! two different explicit values are an error.

mod vendor;

use super::CookbookError;
use super::eval::ResourceDecl;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The run's recipes' resources as declarative maps, per recipe, in order.
pub fn to_declarative(
    recipes: &[(String, Vec<ResourceDecl>)],
) -> Result<Vec<(String, Vec<Value>)>, CookbookError> {
    let names = vlan_names(recipes)?;
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    // Links merged across resources: (recipe index, item index) of the first declaration.
    let mut links: HashMap<String, (usize, usize, Explicit)> = HashMap::new();
    for (ri, (recipe, decls)) in recipes.iter().enumerate() {
        out.push((recipe.clone(), Vec::new()));
        for d in decls {
            let Some(item) = map_one(d, &names)? else {
                continue;
            };
            match item {
                Mapped::Vlan(v) => out[ri].1.push(v),
                Mapped::Link(fields, explicit) => {
                    let name = fields["name"].as_str().unwrap_or_default().to_owned();
                    match links.get_mut(&name) {
                        Some((r, i, seen)) => {
                            let target = &mut out[*r].1[*i];
                            merge_link(d, target, seen, fields, explicit)?;
                        }
                        None => {
                            out[ri].1.push(Value::Object(fields));
                            links.insert(name, (ri, out[ri].1.len() - 1, explicit));
                        }
                    }
                }
            }
        }
    }
    fold_lag_settings(&mut out);
    Ok(out)
}

/// Which link fields a resource set itself (not from its resource's defaults).
type Explicit = Vec<String>;

enum Mapped {
    Vlan(Value),
    Link(Map<String, Value>, Explicit),
}

/// VLAN name to id, from every `netdev_vlan` and `vlan` of the run.
fn vlan_names(
    recipes: &[(String, Vec<ResourceDecl>)],
) -> Result<HashMap<String, i64>, CookbookError> {
    let mut names = HashMap::new();
    for d in recipes.iter().flat_map(|(_, ds)| ds) {
        let (name, id) = match d.kind.as_str() {
            "netdev_vlan" => (
                d.property("vlan_name")
                    .and_then(Value::as_str)
                    .unwrap_or(&d.name)
                    .to_owned(),
                d.property("vlan_id").and_then(Value::as_i64),
            ),
            "vlan" => (
                d.property("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                d.name.parse::<i64>().ok(),
            ),
            _ => continue,
        };
        if let Some(id) = id
            && !name.is_empty()
        {
            names.insert(name, id);
        }
    }
    Ok(names)
}

const VLAN_PROPS: [&str; 3] = ["vlan_name", "vlan_id", "description"];
const INTERFACE_PROPS: [&str; 6] = [
    "interface_name",
    "description",
    "enable",
    "mtu",
    "speed",
    "duplex",
];
const L2_PROPS: [&str; 5] = [
    "l2_interface_name",
    "description",
    "untagged_vlan",
    "tagged_vlans",
    "vlan_tagging",
];
const LAG_PROPS: [&str; 3] = ["links", "minimum_links", "lacp"];
const L3_PROPS: [&str; 5] = ["ipv4", "ipv6", "description", "enabled", "mtu"];
const NETGW_VLAN_PROPS: [&str; 2] = ["name", "description"];
const NETGW_LINK_PROPS: [&str; 7] = [
    "description",
    "enabled",
    "mtu",
    "mode",
    "access_vlan",
    "trunk_vlans",
    "native_vlan",
];

fn map_one(
    d: &ResourceDecl,
    names: &HashMap<String, i64>,
) -> Result<Option<Mapped>, CookbookError> {
    let (props, actions): (&[&str], &[&str]) = match d.kind.as_str() {
        "netdev_vlan" => (&VLAN_PROPS, &["create", "delete"]),
        "netdev_interface" => (&INTERFACE_PROPS, &["create"]),
        "netdev_l2_interface" => (&L2_PROPS, &["create"]),
        "vlan" => (&NETGW_VLAN_PROPS, &["create", "delete"]),
        "link" => (&NETGW_LINK_PROPS, &["create"]),
        "netdev_lag" => (&LAG_PROPS, &["create", "delete"]),
        "netdev_l3_interface" => (&L3_PROPS, &["create", "delete"]),
        "eos_vlan" => (&vendor::EOS_VLAN_PROPS, &["create", "delete"]),
        "cisco_vlan" => (&vendor::CISCO_VLAN_PROPS, &["create", "destroy"]),
        "cisco_interface" => (&vendor::CISCO_INTERFACE_PROPS, &["create"]),
        "netdev_lag_interface" => {
            return Err(d.error(
                "resource `netdev_lag_interface`",
                "not a netdev resource netgw knows; declare members in netdev_lag `links`",
            ));
        }
        "netdev_group" => {
            return Err(d.error(
                "resource `netdev_group`",
                "Junos configuration groups are not managed by netgw",
            ));
        }
        other => return Err(d.error(format!("resource `{other}`"), "not a resource netgw knows")),
    };
    for (k, _) in &d.properties {
        if !props.contains(&k.as_str()) {
            return Err(d.error(
                format!("{} property `{k}`", d.kind),
                format!("not supported (supported: {})", props.join(", ")),
            ));
        }
    }
    let action = match d.actions.as_slice() {
        [] => "create",
        [a] if a == "nothing" => return Ok(None),
        [a] if actions.contains(&a.as_str()) => a.as_str(),
        other => {
            let why = if d.kind.starts_with("netdev_") && other.iter().any(|a| a == "delete") {
                "netgw does not delete interfaces; set the port's properties instead".to_owned()
            } else {
                format!("supported actions: {}, nothing", actions.join(", "))
            };
            return Err(d.error(format!("{} action {}", d.kind, other.join(", ")), why));
        }
    };
    let resolver = Resolver { d, names };
    Ok(Some(match d.kind.as_str() {
        "netdev_vlan" => Mapped::Vlan(netdev_vlan(d, action)?),
        "vlan" => Mapped::Vlan(netgw_vlan(d, action)?),
        "netdev_interface" => netdev_interface(d)?,
        "netdev_l2_interface" => netdev_l2(d, &resolver)?,
        "netdev_lag" => Mapped::Vlan(netdev_lag(d, action)?),
        "netdev_l3_interface" => Mapped::Vlan(netdev_l3(d, action)?),
        "eos_vlan" => Mapped::Vlan(vendor::eos_vlan(d, action)?),
        "cisco_vlan" => Mapped::Vlan(vendor::cisco_vlan(d, action)?),
        "cisco_interface" => vendor::cisco_interface(d)?,
        _ => netgw_link(d, &resolver)?,
    }))
}

fn string(d: &ResourceDecl, prop: &str) -> Result<Option<String>, CookbookError> {
    match d.property(prop) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(d.error(
            format!("{} property `{prop}`", d.kind),
            format!("must be a String, found {other}"),
        )),
    }
}

fn integer(d: &ResourceDecl, prop: &str) -> Result<Option<i64>, CookbookError> {
    match d.property(prop) {
        None => Ok(None),
        Some(Value::Number(n)) if n.is_i64() => Ok(n.as_i64()),
        Some(other) => Err(d.error(
            format!("{} property `{prop}`", d.kind),
            format!("must be an Integer, found {other} (Chef's resource refuses it too)"),
        )),
    }
}

fn boolean(d: &ResourceDecl, prop: &str) -> Result<Option<bool>, CookbookError> {
    match d.property(prop) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(d.error(
            format!("{} property `{prop}`", d.kind),
            format!("must be true or false, found {other}"),
        )),
    }
}

fn netdev_vlan(d: &ResourceDecl, action: &str) -> Result<Value, CookbookError> {
    let Some(id) = integer(d, "vlan_id")? else {
        return Err(d.error(
            "netdev_vlan without `vlan_id`",
            "netgw manages VLANs by id; give vlan_id",
        ));
    };
    if action == "delete" {
        return Ok(json!({"type": "vlan", "id": id, "state": "absent"}));
    }
    let name = string(d, "vlan_name")?.unwrap_or_else(|| d.name.clone());
    let mut v = json!({"type": "vlan", "id": id, "name": name});
    // The resource's default description ("Chef created vlan: NAME") is platform-dependent in netdev
    // (its EOS provider ignores descriptions, and EOS VLANs have none): only an explicit one is kept.
    if let Some(desc) = string(d, "description")? {
        v["description"] = json!(desc);
    }
    Ok(v)
}

fn netdev_lag(d: &ResourceDecl, action: &str) -> Result<Value, CookbookError> {
    if action == "delete" {
        return Ok(json!({"type": "lag", "name": d.name, "state": "absent"}));
    }
    let mut m = Map::new();
    m.insert("type".into(), json!("lag"));
    m.insert("name".into(), json!(d.name));
    if let Some(v) = d.property("links") {
        m.insert("links".into(), v.clone());
    }
    if let Some(n) = integer(d, "minimum_links")? {
        m.insert("minimum_links".into(), json!(n));
    }
    if let Some(l) = string(d, "lacp")? {
        m.insert("lacp".into(), json!(l));
    }
    Ok(Value::Object(m))
}

fn netdev_l3(d: &ResourceDecl, action: &str) -> Result<Value, CookbookError> {
    if action == "delete" {
        return Ok(json!({"type": "l3_interface", "name": d.name, "state": "absent"}));
    }
    let mut m = Map::new();
    m.insert("type".into(), json!("l3_interface"));
    m.insert("name".into(), json!(d.name));
    for family in ["ipv4", "ipv6"] {
        match d.property(family) {
            None => {}
            Some(Value::String(a)) => {
                m.insert(family.into(), json!([a]));
            }
            Some(v) => {
                m.insert(family.into(), v.clone());
            }
        }
    }
    if let Some(s) = string(d, "description")? {
        m.insert("description".into(), json!(s));
    }
    if let Some(b) = boolean(d, "enabled")? {
        m.insert("enabled".into(), json!(b));
    }
    if let Some(n) = integer(d, "mtu")? {
        m.insert("mtu".into(), json!(n));
    }
    Ok(Value::Object(m))
}

/// A link declared under an aggregate's name (netdev configures a LAG's switchport with
/// `netdev_l2_interface` on it) is the aggregate's own settings.
fn fold_lag_settings(out: &mut [(String, Vec<Value>)]) {
    let lags: Vec<String> = out
        .iter()
        .flat_map(|(_, items)| items.iter())
        .filter(|v| v["type"] == "lag")
        .filter_map(|v| v["name"].as_str().map(str::to_owned))
        .collect();
    let same = |a: &str, b: &str| netgw_models::resource::same_interface(a, b);
    let mut settings: Vec<(String, Map<String, Value>)> = Vec::new();
    for (_, items) in out.iter_mut() {
        items.retain(|v| {
            let name = v["name"].as_str().unwrap_or_default();
            match lags.iter().find(|l| v["type"] == "link" && same(l, name)) {
                Some(l) => {
                    let mut m = v.as_object().cloned().unwrap_or_default();
                    m.remove("type");
                    m.remove("name");
                    settings.push((l.clone(), m));
                    false
                }
                None => true,
            }
        });
    }
    for (_, items) in out.iter_mut() {
        for v in items.iter_mut().filter(|v| v["type"] == "lag") {
            let name = v["name"].as_str().unwrap_or_default().to_owned();
            for (_, m) in settings.iter().filter(|(l, _)| same(l, &name)) {
                if let Some(obj) = v.as_object_mut() {
                    obj.extend(m.clone());
                }
            }
        }
    }
}

fn netgw_vlan(d: &ResourceDecl, action: &str) -> Result<Value, CookbookError> {
    let id: i64 = d.name.trim().parse().map_err(|_| {
        d.error(
            format!("vlan {:?}", d.name),
            "a vlan resource is named by its VLAN id (vlan '100' do ... end)",
        )
    })?;
    let mut m = Map::new();
    m.insert("type".into(), json!("vlan"));
    m.insert("id".into(), json!(id));
    if let Some(n) = string(d, "name")? {
        m.insert("name".into(), json!(n));
    }
    if let Some(n) = string(d, "description")? {
        m.insert("description".into(), json!(n));
    }
    if action == "delete" {
        m.insert("state".into(), json!("absent"));
    }
    Ok(Value::Object(m))
}

fn netdev_interface(d: &ResourceDecl) -> Result<Mapped, CookbookError> {
    for prop in ["speed", "duplex"] {
        if let Some(v) = string(d, prop)?
            && v != "auto"
        {
            return Err(d.error(
                format!("netdev_interface property `{prop} {v:?}`"),
                format!("netgw does not manage {prop} (only `auto`, the default, is accepted)"),
            ));
        }
    }
    let (mut m, mut explicit) = link_head(d, "interface_name", "interface")?;
    if boolean(d, "enable")?.is_some() {
        explicit.push("enabled".into());
    }
    m.insert(
        "enabled".into(),
        json!(boolean(d, "enable")?.unwrap_or(true)),
    );
    if let Some(mtu) = integer(d, "mtu")? {
        m.insert("mtu".into(), json!(mtu));
        explicit.push("mtu".into());
    }
    Ok(Mapped::Link(m, explicit))
}

/// A netdev interface resource's link: its name property (default: the resource name) and its
/// description, defaulting to the text the netdev resource sets (`Chef created WHAT: NAME`).
fn link_head(
    d: &ResourceDecl,
    name_prop: &str,
    what: &str,
) -> Result<(Map<String, Value>, Explicit), CookbookError> {
    let name = string(d, name_prop)?.unwrap_or_else(|| d.name.clone());
    let mut explicit = vec!["name".to_owned()];
    let mut m = Map::new();
    m.insert("type".into(), json!("link"));
    m.insert("name".into(), json!(name));
    let description = match string(d, "description")? {
        Some(s) => {
            explicit.push("description".into());
            s
        }
        None => format!("Chef created {what}: {}", d.name),
    };
    m.insert("description".into(), json!(description));
    Ok((m, explicit))
}

/// VLAN references by name (a `netdev_vlan`'s `vlan_name` in this run) or id.
struct Resolver<'a> {
    d: &'a ResourceDecl,
    names: &'a HashMap<String, i64>,
}

impl Resolver<'_> {
    fn id(&self, prop: &str, v: &Value) -> Result<i64, CookbookError> {
        match v {
            Value::Number(n) if n.is_i64() => Ok(n.as_i64().unwrap_or_default()),
            Value::String(s) => match self.names.get(s) {
                Some(id) => Ok(*id),
                None => s.trim().parse::<i64>().map_err(|_| {
                    self.d.error(
                        format!("{} property `{prop}` {s:?}", self.d.kind),
                        "no netdev_vlan with this vlan_name in the run, and not a VLAN id",
                    )
                }),
            },
            other => Err(self.d.error(
                format!("{} property `{prop}`", self.d.kind),
                format!("must name a VLAN, found {other}"),
            )),
        }
    }

    fn ids(&self, prop: &str, v: &Value) -> Result<Vec<i64>, CookbookError> {
        match v {
            Value::Array(a) => a.iter().map(|x| self.id(prop, x)).collect(),
            other => Ok(vec![self.id(prop, other)?]),
        }
    }
}

fn netdev_l2(d: &ResourceDecl, r: &Resolver) -> Result<Mapped, CookbookError> {
    let (mut m, mut explicit) = link_head(d, "l2_interface_name", "layer 2 interface")?;
    explicit.push("mode".into());
    let untagged = d
        .property("untagged_vlan")
        .map(|v| r.id("untagged_vlan", v))
        .transpose()?;
    let tagged = d
        .property("tagged_vlans")
        .map(|v| r.ids("tagged_vlans", v))
        .transpose()?;
    if boolean(d, "vlan_tagging")?.unwrap_or(false) {
        m.insert("mode".into(), json!("trunk"));
        if let Some(t) = tagged {
            m.insert("trunk_vlans".into(), json!(t));
            explicit.push("trunk_vlans".into());
        }
        if let Some(u) = untagged {
            m.insert("native_vlan".into(), json!(u));
            explicit.push("native_vlan".into());
        }
    } else {
        if tagged.is_some_and(|t| !t.is_empty()) {
            return Err(d.error(
                "netdev_l2_interface `tagged_vlans` without `vlan_tagging true`",
                "an access port carries only its untagged_vlan",
            ));
        }
        m.insert("mode".into(), json!("access"));
        if let Some(u) = untagged {
            m.insert("access_vlan".into(), json!(u));
            explicit.push("access_vlan".into());
        }
    }
    Ok(Mapped::Link(m, explicit))
}

fn netgw_link(d: &ResourceDecl, r: &Resolver) -> Result<Mapped, CookbookError> {
    let mut m = Map::new();
    m.insert("type".into(), json!("link"));
    m.insert("name".into(), json!(d.name));
    let mut explicit = vec!["name".to_owned()];
    for (k, v) in &d.properties {
        let v = match k.as_str() {
            "access_vlan" | "native_vlan" => json!(r.id(k, v)?),
            "trunk_vlans" if v.is_array() => json!(r.ids(k, v)?),
            _ => v.clone(),
        };
        m.insert(k.clone(), v);
        explicit.push(k.clone());
    }
    Ok(Mapped::Link(m, explicit))
}

/// Fold a second declaration of one interface into the first.
fn merge_link(
    d: &ResourceDecl,
    target: &mut Value,
    seen: &mut Explicit,
    fields: Map<String, Value>,
    explicit: Explicit,
) -> Result<(), CookbookError> {
    let Value::Object(t) = target else {
        return Ok(());
    };
    for (k, v) in fields {
        let mine = explicit.contains(&k);
        let theirs = seen.contains(&k);
        match (mine, theirs) {
            (true, true) if t.get(&k) != Some(&v) && k != "name" => {
                return Err(d.error(
                    format!("{} {:?} property `{k}`", d.kind, d.name),
                    format!(
                        "the interface is declared again with a different {k} ({} and {v})",
                        t.get(&k).cloned().unwrap_or(Value::Null)
                    ),
                ));
            }
            (true, _) | (false, false) if !t.contains_key(&k) || mine => {
                t.insert(k.clone(), v);
            }
            _ => {}
        }
        if mine && !seen.contains(&k) {
            seen.push(k);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn decl(kind: &str, name: &str, props: Value, actions: &[&str]) -> ResourceDecl {
        ResourceDecl {
            kind: kind.into(),
            name: name.into(),
            path: PathBuf::from("recipes/default.rb"),
            line: 7,
            properties: props.as_object().unwrap().clone().into_iter().collect(),
            actions: actions.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn one_port_from_interface_and_l2_interface_is_one_link() {
        let r = vec![(
            "cb::default".to_string(),
            vec![
                decl("netdev_vlan", "web", json!({"vlan_id": 10}), &[]),
                decl(
                    "netdev_interface",
                    "Ethernet1",
                    json!({"mtu": 9000, "enable": false}),
                    &[],
                ),
                decl(
                    "netdev_l2_interface",
                    "Ethernet1",
                    json!({"untagged_vlan": "web", "description": "srv"}),
                    &["create"],
                ),
                decl("vlan", "20", json!({"name": "db"}), &["delete"]),
                decl(
                    "link",
                    "Ethernet2",
                    json!({"mode": "trunk", "trunk_vlans": ["web", 20], "native_vlan": "db"}),
                    &[],
                ),
                decl("netdev_vlan", "skip", json!({"vlan_id": 30}), &["nothing"]),
            ],
        )];
        let out = to_declarative(&r).unwrap();
        assert_eq!(
            out[0].1,
            vec![
                json!({"type": "vlan", "id": 10, "name": "web"}),
                json!({"type": "link", "name": "Ethernet1", "description": "srv", "enabled": false, "mtu": 9000, "mode": "access", "access_vlan": 10}),
                json!({"type": "vlan", "id": 20, "name": "db", "state": "absent"}),
                json!({"type": "link", "name": "Ethernet2", "mode": "trunk", "trunk_vlans": [10, 20], "native_vlan": 20}),
            ]
        );
    }

    #[test]
    fn netdev_lag_takes_its_l2_interface_and_l3_interfaces_map() {
        let r = vec![(
            "dist::default".to_string(),
            vec![
                decl("netdev_vlan", "users", json!({"vlan_id": 10}), &[]),
                decl(
                    "netdev_lag",
                    "Port-Channel10",
                    json!({"links": ["Ethernet1", "Ethernet2"], "minimum_links": 1, "lacp": "active"}),
                    &[],
                ),
                decl(
                    "netdev_l2_interface",
                    "Port-Channel10",
                    json!({"vlan_tagging": true, "tagged_vlans": ["users"], "description": "to acc1"}),
                    &[],
                ),
                decl(
                    "netdev_l3_interface",
                    "Vlan10",
                    json!({"ipv4": "10.0.10.1/24", "ipv6": ["2001:db8:10::1/64"]}),
                    &[],
                ),
                decl("netdev_lag", "Port-Channel20", json!({}), &["delete"]),
            ],
        )];
        let out = to_declarative(&r).unwrap();
        assert_eq!(
            out[0].1,
            vec![
                json!({"type": "vlan", "id": 10, "name": "users"}),
                json!({"type": "lag", "name": "Port-Channel10", "links": ["Ethernet1", "Ethernet2"],
                    "minimum_links": 1, "lacp": "active", "description": "to acc1", "mode": "trunk", "trunk_vlans": [10]}),
                json!({"type": "l3_interface", "name": "Vlan10", "ipv4": ["10.0.10.1/24"], "ipv6": ["2001:db8:10::1/64"]}),
                json!({"type": "lag", "name": "Port-Channel20", "state": "absent"}),
            ]
        );
        let bad = vec![(
            "r".to_string(),
            vec![decl(
                "netdev_lag",
                "Po1",
                json!({"lacp_mode": "active"}),
                &[],
            )],
        )];
        let e = to_declarative(&bad).unwrap_err().to_string();
        assert!(
            e.contains("netdev_lag property `lacp_mode`")
                && e.contains("links, minimum_links, lacp"),
            "{e}"
        );
    }

    #[test]
    fn conflicts_and_refusals_name_the_resource_line() {
        let cases = [
            (
                vec![
                    decl("netdev_interface", "Et1", json!({"description": "a"}), &[]),
                    decl(
                        "netdev_l2_interface",
                        "Et1",
                        json!({"description": "b"}),
                        &[],
                    ),
                ],
                "recipes/default.rb:7: netdev_l2_interface \"Et1\" property `description`",
            ),
            (
                vec![decl("netdev_vlan", "web", json!({"vlan_id": "10"}), &[])],
                "recipes/default.rb:7: netdev_vlan property `vlan_id`: must be an Integer",
            ),
            (
                vec![decl(
                    "netdev_l2_interface",
                    "Et1",
                    json!({"untagged_vlan": "nope"}),
                    &[],
                )],
                "no netdev_vlan with this vlan_name",
            ),
            (
                vec![decl(
                    "netdev_l2_interface",
                    "Et1",
                    json!({"tagged_vlans": [1]}),
                    &[],
                )],
                "without `vlan_tagging true`",
            ),
            (
                vec![decl(
                    "netdev_vlan",
                    "web",
                    json!({"vlan_id": 1, "provider": "x"}),
                    &[],
                )],
                "netdev_vlan property `provider`: not supported",
            ),
            (
                vec![decl(
                    "netdev_vlan",
                    "web",
                    json!({"vlan_id": 1}),
                    &["create", "delete"],
                )],
                "netdev_vlan action create, delete",
            ),
        ];
        for (decls, want) in cases {
            let e = to_declarative(&[("cb::default".into(), decls)])
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e}\nwant {want}");
        }
    }
}
