//! NX-OS links: `show interface | json` (description, admin state, MTU) plus `show interface switchport
//! | json` (mode, access VLAN, native VLAN, allowed list), or the text forms of both (switchport text is
//! the IOS shape, parsed by `crate::ios::link`). Rendering is IOS' (`interface X`, `switchport ...`,
//! `description`, `shutdown`, `mtu`): the NX-OS syntax is the same for what netgw manages.

use netgw_models::resource::{Link, LinkMode, VlanId, VlanSet};
use serde_json::Value;

use super::facts::{rows, text};
use crate::ios::link::Switchport;

/// Links from `show interface | json`: Ethernet, port-channel and SVI rows.
pub fn parse_show_interface_json(v: &Value) -> Vec<Link> {
    rows(v, "TABLE_interface", "ROW_interface")
        .into_iter()
        .filter_map(|r| {
            let name = text(r, "interface")?;
            let mut l = Link::new(name);
            l.description = text(r, "desc").or_else(|| text(r, "svi_desc"));
            l.enabled = text(r, "admin_state")
                .or_else(|| text(r, "svi_admin_state"))
                .map(|s| s.eq_ignore_ascii_case("up"));
            l.mtu = text(r, "eth_mtu")
                .or_else(|| text(r, "svi_mtu"))
                .and_then(|m| m.parse().ok());
            if text(r, "eth_mode").as_deref() == Some("routed") {
                l.mode = Some(LinkMode::Routed);
            }
            Some(l)
        })
        .collect()
}

/// Links from `show interface` text (facts parser), for devices without `| json`.
pub fn links_from_interface_text(t: &str) -> Vec<Link> {
    super::facts::parse_show_interface_text(t)
        .into_iter()
        .map(|(name, f)| {
            let mut l = Link::new(name);
            l.description = f.description;
            l.enabled = f
                .admin_status
                .map(|a| a == netgw_models::facts::AdminStatus::Up);
            l.mtu = f.mtu;
            l
        })
        .collect()
}

/// `show interface switchport | json`: `TABLE_interface.ROW_interface[]` with `interface`,
/// `switchport` (`Enabled`), `oper_mode` / `admin_mode`, `access_vlan`, `native_vlan`, `trunk_vlans`.
pub fn parse_show_interface_switchport_json(v: &Value) -> Vec<Switchport> {
    let vid = |r: &Value, k: &str| {
        text(r, k).and_then(|s| VlanId::parse(s.split_whitespace().next().unwrap_or("")).ok())
    };
    rows(v, "TABLE_interface", "ROW_interface")
        .into_iter()
        .filter_map(|r| {
            Some(Switchport {
                name: text(r, "interface")?,
                enabled: text(r, "switchport").is_some_and(|s| s.eq_ignore_ascii_case("enabled")),
                admin_mode: text(r, "admin_mode"),
                oper_mode: text(r, "oper_mode"),
                access_vlan: vid(r, "access_vlan"),
                native_vlan: vid(r, "native_vlan"),
                trunk_vlans: text(r, "trunk_vlans").and_then(|s| {
                    if s.eq_ignore_ascii_case("all") {
                        Some(VlanSet::all())
                    } else {
                        VlanSet::parse(&s).ok()
                    }
                }),
                // NX-OS trunks are 802.1Q only; the JSON has no encapsulation field.
                admin_encapsulation: None,
            })
        })
        .collect()
}

/// Put the switchport view onto the links (by name); links without a switchport row keep theirs.
pub fn apply_switchports(links: &mut [Link], sps: &[Switchport]) {
    for l in links.iter_mut() {
        if let Some(sp) = sps.iter().find(|s| s.name == l.name) {
            sp.apply_to(l);
        }
    }
}

/// NX-OS limits on a desired link.
pub fn validate_link(l: &Link) -> Result<(), LinkUnfit> {
    l.validate()?;
    if let Some(m) = l.mtu
        && !(576..=9216).contains(&m)
    {
        return Err(LinkUnfit::Mtu(m));
    }
    // `ERROR: Ethernet3/9: MTU on L2 interfaces can only be set to default or system-jumboMTU`.
    if let Some(m) = l.mtu
        && matches!(l.mode, Some(LinkMode::Access | LinkMode::Trunk))
        && m != 1500
        && m != 9216
    {
        return Err(LinkUnfit::SwitchportMtu(m));
    }
    Ok(())
}

/// A desired link NX-OS cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkUnfit {
    #[error(transparent)]
    Model(#[from] netgw_models::error::ModelError),
    #[error("MTU {0} is outside what NX-OS accepts (576..9216)")]
    Mtu(u32),
    #[error(
        "NX-OS sets the MTU of an L2 port to 1500 or the system jumbo MTU (9216 by default) only ({0} given)"
    )]
    SwitchportMtu(u32),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn interface_and_switchport_json() {
        let i = json!({"TABLE_interface": {"ROW_interface": [
            {"interface": "Ethernet1/1", "admin_state": "up", "eth_mtu": "9216", "desc": "uplink", "eth_mode": "trunk"},
            {"interface": "Ethernet1/2", "admin_state": "down", "eth_mtu": "1500", "eth_mode": "access"}]}});
        let mut links = parse_show_interface_json(&i);
        let s = json!({"TABLE_interface": {"ROW_interface": [
            {"interface": "Ethernet1/1", "switchport": "Enabled", "oper_mode": "trunk", "access_vlan": "1", "native_vlan": "1", "trunk_vlans": "1-10,20"},
            {"interface": "Ethernet1/2", "switchport": "Enabled", "oper_mode": "access", "access_vlan": "30", "native_vlan": "1", "trunk_vlans": "1-4094"}]}});
        apply_switchports(&mut links, &parse_show_interface_switchport_json(&s));
        assert_eq!(
            serde_json::to_value(&links).unwrap(),
            json!([{"name": "Ethernet1/1", "description": "uplink", "enabled": true, "mtu": 9216, "mode": "trunk", "trunk_vlans": "1-10,20", "native_vlan": 1},
                   {"name": "Ethernet1/2", "enabled": false, "mtu": 1500, "mode": "access", "access_vlan": 30}])
        );
    }

    /// NX-OS L2 ports take 1500 or the system jumbo MTU only.
    #[test]
    fn l2_mtu_is_default_or_jumbo() {
        let l = |mode: &str, mtu: u32| -> Link {
            serde_json::from_value(json!({"name": "Ethernet1/1", "mode": mode, "mtu": mtu}))
                .unwrap()
        };
        assert!(
            validate_link(&l("access", 9000))
                .unwrap_err()
                .to_string()
                .contains("system jumbo MTU")
        );
        assert!(validate_link(&l("trunk", 1500)).is_ok());
        assert!(validate_link(&l("trunk", 9216)).is_ok());
        assert!(validate_link(&l("routed", 9000)).is_ok());
    }
}
