//! The vendor cookbooks' resources that say what netdev's say: Arista's chef-eos `eos_vlan`
//! (`resources/vlan.rb`) and Cisco's cisco-network-chef-cookbook `cisco_vlan` and `cisco_interface`
//! (`libraries/resource_cisco_*.rb`), read as netgw's vlan, link and l3_interface. Every property
//! those resources define is either mapped or refused by name: a shop moving its recipes over learns
//! at load time what netgw will not do, never at the device.
//!
//! * `eos_vlan ID`: `vlan` (default: the name), `vlan_name`; `enable false` (suspend) and
//!   `trunk_groups` are refused (not modelled); `switch_name` picks rbeapi's connection and is
//!   ignored with a note (the node is the device).
//! * `cisco_vlan ID`: `vlan_name`; `state 'suspend'` and `shutdown true` are refused; `:destroy` is
//!   absent.
//! * `cisco_interface NAME`: `description`, `shutdown` (enabled = not shutdown), `mtu`,
//!   `switchport_mode` `access`/`trunk` with `access_vlan`, `switchport_trunk_allowed_vlan`,
//!   `switchport_trunk_native_vlan`; `ipv4_address` with `ipv4_netmask_length` makes it a routed
//!   interface (`switchport_mode 'disabled'` or unset). Everything else the resource defines is
//!   refused naming the property.

use super::{Mapped, boolean, integer, string};
use crate::cookbook::CookbookError;
use crate::cookbook::eval::ResourceDecl;
use serde_json::{Map, Value, json};

pub(super) const EOS_VLAN_PROPS: [&str; 5] =
    ["vlan", "vlan_name", "switch_name", "enable", "trunk_groups"];
pub(super) const CISCO_VLAN_PROPS: [&str; 3] = ["vlan_name", "state", "shutdown"];
pub(super) const CISCO_INTERFACE_PROPS: [&str; 18] = [
    "description",
    "shutdown",
    "mtu",
    "switchport_mode",
    "access_vlan",
    "switchport_trunk_allowed_vlan",
    "switchport_trunk_native_vlan",
    "ipv4_address",
    "ipv4_netmask_length",
    // Defined by the resource, not managed by netgw: refused by name below.
    "encapsulation_dot1q",
    "ipv4_proxy_arp",
    "ipv4_redirects",
    "negotiate_auto",
    "switchport_autostate_exclude",
    "switchport_vtp",
    "svi_autostate",
    "svi_management",
    "vrf",
];

fn refuse(d: &ResourceDecl, prop: &str, why: &str) -> CookbookError {
    d.error(format!("{} property `{prop}`", d.kind), why)
}

/// A VLAN id given as the resource's name or a property: an Integer, or a String of one.
fn vlan_id(d: &ResourceDecl, what: &str, v: Option<&Value>) -> Result<i64, CookbookError> {
    let parsed = match v {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        None => d.name.trim().parse().ok(),
        _ => None,
    };
    parsed.ok_or_else(|| {
        d.error(
            format!("{} {what}", d.kind),
            "must be a VLAN id (an Integer, or the resource's name)",
        )
    })
}

pub(super) fn eos_vlan(d: &ResourceDecl, action: &str) -> Result<Value, CookbookError> {
    let id = vlan_id(d, "`vlan`", d.property("vlan"))?;
    if boolean(d, "enable")? == Some(false) {
        return Err(refuse(
            d,
            "enable",
            "a suspended VLAN (enable false) is not managed by netgw",
        ));
    }
    if d.property("trunk_groups").is_some_and(|g| g != &json!([])) {
        return Err(refuse(
            d,
            "trunk_groups",
            "VLAN trunk groups are not managed by netgw",
        ));
    }
    if string(d, "switch_name")?.is_some() {
        tracing::warn!(
            "{}accepted and ignored: it picks rbeapi's connection, and netgw's node is the device",
            d.error("eos_vlan property `switch_name`", "")
        );
    }
    vlan_item(id, string(d, "vlan_name")?, action == "delete")
}

pub(super) fn cisco_vlan(d: &ResourceDecl, action: &str) -> Result<Value, CookbookError> {
    let id = vlan_id(d, "name", None)?;
    if string(d, "state")?.is_some_and(|s| s != "active") {
        return Err(refuse(
            d,
            "state",
            "only `active` is managed by netgw (no suspended VLANs)",
        ));
    }
    if boolean(d, "shutdown")? == Some(true) {
        return Err(refuse(
            d,
            "shutdown",
            "a shut-down VLAN is not managed by netgw",
        ));
    }
    vlan_item(id, string(d, "vlan_name")?, action == "destroy")
}

fn vlan_item(id: i64, name: Option<String>, absent: bool) -> Result<Value, CookbookError> {
    let mut v = json!({"type": "vlan", "id": id});
    if absent {
        v["state"] = json!("absent");
    } else if let Some(n) = name {
        v["name"] = json!(n);
    }
    Ok(v)
}

/// `cisco_interface`: a switch port (link) or, with an IPv4 address, a routed interface.
pub(super) fn cisco_interface(d: &ResourceDecl) -> Result<Mapped, CookbookError> {
    for (k, _) in &d.properties {
        if CISCO_INTERFACE_PROPS[9..].contains(&k.as_str()) {
            return Err(refuse(d, k, "not managed by netgw"));
        }
    }
    let mut m = Map::new();
    let mut explicit = vec!["name".to_owned()];
    m.insert("name".into(), json!(d.name));
    if let Some(s) = string(d, "description")? {
        m.insert("description".into(), json!(s));
        explicit.push("description".into());
    }
    if let Some(shut) = boolean(d, "shutdown")? {
        m.insert("enabled".into(), json!(!shut));
        explicit.push("enabled".into());
    }
    if let Some(mtu) = number(d, "mtu")? {
        m.insert("mtu".into(), json!(mtu));
        explicit.push("mtu".into());
    }
    let mode = string(d, "switchport_mode")?;
    if d.property("ipv4_address").is_some() {
        return routed(d, m, mode.as_deref());
    }
    m.insert("type".into(), json!("link"));
    switchport(d, &mut m, &mut explicit, mode.as_deref())?;
    Ok(Mapped::Link(m, explicit))
}

/// An Integer property the resource also takes as a String of digits (`mtu`, VLAN ids).
fn number(d: &ResourceDecl, prop: &str) -> Result<Option<i64>, CookbookError> {
    match d.property(prop) {
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| refuse(d, prop, "must be a number")),
        _ => integer(d, prop),
    }
}

fn switchport(
    d: &ResourceDecl,
    m: &mut Map<String, Value>,
    explicit: &mut Vec<String>,
    mode: Option<&str>,
) -> Result<(), CookbookError> {
    let trunk_only = [
        "switchport_trunk_allowed_vlan",
        "switchport_trunk_native_vlan",
    ];
    match mode {
        None if d.property("access_vlan").is_none()
            && trunk_only.iter().all(|p| d.property(p).is_none()) =>
        {
            return Ok(());
        }
        Some("access") | None => {
            if let Some(p) = trunk_only.iter().find(|p| d.property(p).is_some()) {
                return Err(refuse(
                    d,
                    p,
                    "a trunk setting on a port not in `switchport_mode 'trunk'`",
                ));
            }
            m.insert("mode".into(), json!("access"));
            if let Some(v) = number(d, "access_vlan")? {
                m.insert("access_vlan".into(), json!(v));
                explicit.push("access_vlan".into());
            }
        }
        Some("trunk") => {
            if d.property("access_vlan").is_some() {
                return Err(refuse(d, "access_vlan", "an access VLAN on a trunk port"));
            }
            m.insert("mode".into(), json!("trunk"));
            if let Some(v) = d.property("switchport_trunk_allowed_vlan") {
                let list = match v {
                    Value::Number(n) => n.to_string(),
                    Value::String(s) => s.clone(),
                    _ => {
                        return Err(refuse(
                            d,
                            "switchport_trunk_allowed_vlan",
                            "must be a VLAN list",
                        ));
                    }
                };
                m.insert("trunk_vlans".into(), json!(list));
                explicit.push("trunk_vlans".into());
            }
            if let Some(v) = number(d, "switchport_trunk_native_vlan")? {
                m.insert("native_vlan".into(), json!(v));
                explicit.push("native_vlan".into());
            }
        }
        Some(other) => {
            return Err(refuse(
                d,
                "switchport_mode",
                &format!(
                    "{other:?} is not managed by netgw (access, trunk, or disabled with an ipv4_address)"
                ),
            ));
        }
    }
    explicit.push("mode".into());
    Ok(())
}

fn routed(
    d: &ResourceDecl,
    mut m: Map<String, Value>,
    mode: Option<&str>,
) -> Result<Mapped, CookbookError> {
    if !matches!(mode, None | Some("disabled")) {
        return Err(refuse(
            d,
            "ipv4_address",
            "an address on a switch port: give `switchport_mode 'disabled'`",
        ));
    }
    for p in [
        "access_vlan",
        "switchport_trunk_allowed_vlan",
        "switchport_trunk_native_vlan",
    ] {
        if d.property(p).is_some() {
            return Err(refuse(d, p, "a switchport setting on a routed interface"));
        }
    }
    let addr = string(d, "ipv4_address")?.unwrap_or_default();
    let Some(len) = integer(d, "ipv4_netmask_length")? else {
        return Err(refuse(d, "ipv4_address", "needs `ipv4_netmask_length`"));
    };
    m.insert("type".into(), json!("l3_interface"));
    m.insert("ipv4".into(), json!([format!("{addr}/{len}")]));
    Ok(Mapped::Vlan(Value::Object(m)))
}
