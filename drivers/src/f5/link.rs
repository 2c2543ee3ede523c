//! Links: `GET /mgmt/tm/net/interface` and `GET /mgmt/tm/net/trunk` parsed into netgw's model, with
//! each link's VLANs taken from VLAN membership, and the request bodies that change a link.
//!
//! Mapping (netgw `Link` <- BIG-IP):
//! * one link per `net interface` (`1.1`, `mgmt`) and per `net trunk` (`lag1`, BIG-IP's link
//!   aggregation); `description` = `description`; `enabled` = `enabled: true` / `disabled: true`
//!   (interfaces only: a trunk has no enabled flag); `mtu` = `mtu` where the interface reports it
//!   (read-only here: BIG-IP sets the MTU per VLAN, so [`validate_link`] refuses a desired `mtu`).
//! * VLANs: BIG-IP has no switchport mode; an interface or trunk is a *member* of VLANs, tagged or
//!   untagged. netgw reads it as: tagged in any VLAN -> `mode: trunk`, `trunk_vlans` = those tags and
//!   `native_vlan` = the VLAN it is untagged in (if any); untagged in exactly one VLAN and tagged in none
//!   -> `mode: access`, `access_vlan` = that tag; member of nothing -> no mode (`None`).
//!   Writing goes the other way: the target mode and VLANs of every changed link become the member
//!   lists of the VLANs concerned (see `config.rs`).
//! * Limits: `routed` does not exist (layer 3 lives on self IPs of VLANs) and is refused; an interface
//!   that is a trunk member is represented by its trunk in VLAN membership, so its own VLAN fields stay
//!   empty; untagged membership in several VLANs (possible on BIG-IP with different tag modes) reads as
//!   the lowest VLAN id, and is written back as one; VLANs without a tag are not seen.

use std::collections::{BTreeMap, BTreeSet};

use netgw_models::resource::{Link, LinkMode, VlanId, VlanSet};
use serde_json::{Map, Value, json};

use super::text;
use super::vlan::F5Vlan;

pub const INTERFACE_COLLECTION: &str = "/mgmt/tm/net/interface";
pub const TRUNK_COLLECTION: &str = "/mgmt/tm/net/trunk";

/// What kind of object a link is on BIG-IP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    Interface,
    Trunk,
}

/// One interface or trunk as the device reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct F5Link {
    pub kind: LinkKind,
    pub name: String,
    pub description: Option<String>,
    pub enabled: Option<bool>,
    pub mtu: Option<u32>,
    /// Trunk members (trunks only).
    pub members: Vec<String>,
}

impl F5Link {
    /// `/mgmt/tm/net/interface/1.1` or `/mgmt/tm/net/trunk/lag1`.
    pub fn path(&self) -> String {
        link_path(self.kind, &self.name)
    }
}

pub fn link_path(kind: LinkKind, name: &str) -> String {
    match kind {
        LinkKind::Interface => format!("{INTERFACE_COLLECTION}/{name}"),
        LinkKind::Trunk => format!("{TRUNK_COLLECTION}/{}", name.replace('/', "~")),
    }
}

fn enabled_of(item: &Value) -> Option<bool> {
    if item.get("disabled").and_then(Value::as_bool) == Some(true) {
        Some(false)
    } else if item.get("enabled").and_then(Value::as_bool) == Some(true) {
        Some(true)
    } else {
        None
    }
}

/// `GET /mgmt/tm/net/interface`.
pub fn parse_interfaces(v: &Value) -> Vec<F5Link> {
    super::items(v)
        .filter_map(|item| {
            Some(F5Link {
                kind: LinkKind::Interface,
                name: text(item, "name")?,
                description: text(item, "description"),
                enabled: enabled_of(item),
                mtu: item
                    .get("mtu")
                    .and_then(Value::as_u64)
                    .and_then(|m| u32::try_from(m).ok()),
                members: vec![],
            })
        })
        .collect()
}

/// `GET /mgmt/tm/net/trunk` (the real 14.1 answer is an empty `items`; a single trunk object, as in
/// F5's MOCK, is accepted too).
pub fn parse_trunks(v: &Value) -> Vec<F5Link> {
    let items = super::items_or_one(v);
    items
        .into_iter()
        .filter_map(|item| {
            Some(F5Link {
                kind: LinkKind::Trunk,
                name: text(item, "name")?,
                description: text(item, "description"),
                enabled: None,
                mtu: None,
                members: item
                    .get("interfaces")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i.as_str().map(str::to_owned).or_else(|| text(i, "name")))
                    .collect(),
            })
        })
        .collect()
}

/// Memberships of one link: VLAN id -> tagged.
pub type Membership = BTreeMap<u16, bool>;

/// Every link's memberships, from the VLANs' member lists (VLANs without a tag are skipped).
pub fn memberships(vlans: &[F5Vlan]) -> BTreeMap<String, Membership> {
    let mut out: BTreeMap<String, Membership> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for v in vlans {
        let Some(tag) = v.tag.filter(|t| (1..=4094).contains(t)) else {
            continue;
        };
        if !seen.insert(tag) {
            continue;
        }
        for m in v.members.iter().flatten() {
            out.entry(m.name.clone()).or_default().insert(tag, m.tagged);
        }
    }
    out
}

/// Read a membership as netgw's mode and VLAN fields (see the module docs).
pub fn apply_membership(link: &mut Link, m: &Membership) {
    let tagged: Vec<u16> = m.iter().filter(|(_, t)| **t).map(|(id, _)| *id).collect();
    let untagged = m.iter().find(|(_, t)| !**t).map(|(id, _)| *id);
    let vid = |n: u16| VlanId::new(i64::from(n)).ok();
    if !tagged.is_empty() {
        link.mode = Some(LinkMode::Trunk);
        link.trunk_vlans = Some(VlanSet::from_ids(tagged.into_iter().filter_map(vid)));
        link.native_vlan = untagged.and_then(vid);
    } else if let Some(u) = untagged {
        link.mode = Some(LinkMode::Access);
        link.access_vlan = vid(u);
    }
}

/// The target membership of a link in netgw's terms (the inverse of [`apply_membership`]).
pub fn target_membership(link: &Link) -> Membership {
    let mut m = Membership::new();
    let mode = link.mode.or(if link.trunk_vlans.is_some() {
        Some(LinkMode::Trunk)
    } else if link.access_vlan.is_some() {
        Some(LinkMode::Access)
    } else {
        None
    });
    match mode {
        Some(LinkMode::Access) => {
            if let Some(a) = link.access_vlan {
                m.insert(a.get(), false);
            }
        }
        Some(LinkMode::Trunk) => {
            for id in link.trunk_vlans.iter().flat_map(|s| s.ids()) {
                m.insert(id.get(), true);
            }
            if let Some(n) = link.native_vlan {
                m.insert(n.get(), false);
            }
        }
        Some(LinkMode::Routed) | None => {}
    }
    m
}

/// Links in netgw's model: interfaces and trunks with their VLAN memberships.
pub fn to_model(links: &[F5Link], vlans: &[F5Vlan]) -> Vec<Link> {
    let ms = memberships(vlans);
    let mut out: Vec<Link> = links
        .iter()
        .map(|l| {
            let mut link = Link::new(l.name.clone());
            link.description = l.description.clone();
            link.enabled = l.enabled;
            link.mtu = l.mtu;
            if let Some(m) = ms.get(&l.name) {
                apply_membership(&mut link, m);
            }
            link
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Vendor limits on a desired link.
pub fn validate_link(l: &Link) -> Result<(), LinkUnfit> {
    if l.mode == Some(LinkMode::Routed) {
        return Err(LinkUnfit::Routed);
    }
    if l.mtu.is_some() {
        return Err(LinkUnfit::Mtu);
    }
    if l.name.contains('~') || l.name.contains('?') {
        return Err(LinkUnfit::Name(l.name.clone()));
    }
    Ok(())
}

/// A desired link BIG-IP cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkUnfit {
    #[error("BIG-IP interfaces have no routed mode (layer 3 lives on VLAN self IPs)")]
    Routed,
    #[error("BIG-IP sets the MTU per VLAN, not per interface; netgw does not manage it here")]
    Mtu,
    #[error("{0:?} is not a BIG-IP interface or trunk name")]
    Name(String),
}

/// The `PATCH` body for a link's own properties (description, enabled), or `None` when neither
/// changes. A cleared description is sent as an empty string.
pub fn render_link_patch(kind: LinkKind, before: &Link, after: &Link) -> Option<Value> {
    let mut o = Map::new();
    if after.description != before.description {
        o.insert(
            "description".into(),
            json!(after.description.as_deref().unwrap_or("")),
        );
    }
    if kind == LinkKind::Interface
        && let Some(e) = after.enabled
        && Some(e) != before.enabled
    {
        o.insert(if e { "enabled" } else { "disabled" }.into(), json!(true));
    }
    (!o.is_empty()).then_some(Value::Object(o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::f5::vlan::parse_vlans;

    fn vid(n: i64) -> VlanId {
        VlanId::new(n).unwrap()
    }

    fn vlans() -> Vec<F5Vlan> {
        parse_vlans(&json!({"items": [
            {"name": "web", "tag": 10, "interfacesReference": {"items": [{"name": "1.1", "untagged": true}, {"name": "lag1", "tagged": true}]}},
            {"name": "db", "tag": 20, "interfacesReference": {"items": [{"name": "lag1", "tagged": true}, {"name": "1.2", "tagged": true}]}},
            {"name": "native", "tag": 30, "interfacesReference": {"items": [{"name": "1.2", "untagged": true}]}},
            {"name": "notag", "interfacesReference": {"items": [{"name": "1.3", "untagged": true}]}}
        ]}))
    }

    #[test]
    fn f5_link_interfaces_trunks_and_membership() {
        let ifs = parse_interfaces(&json!({"items": [
            {"name": "1.1", "enabled": true, "mtu": 1500, "description": "uplink"},
            {"name": "1.2", "disabled": true},
            {"name": "1.3", "enabled": true}
        ]}));
        let trunks =
            parse_trunks(&json!({"items": [{"name": "lag1", "interfaces": ["1.4", "1.5"]}]}));
        assert_eq!(trunks[0].members, ["1.4", "1.5"]);
        let all: Vec<F5Link> = ifs.into_iter().chain(trunks).collect();
        let links = to_model(&all, &vlans());
        let by = |n: &str| links.iter().find(|l| l.name == n).unwrap().clone();
        let l11 = by("1.1");
        assert_eq!(
            (l11.mode, l11.access_vlan, l11.mtu, l11.enabled),
            (
                Some(LinkMode::Access),
                Some(vid(10)),
                Some(1500),
                Some(true)
            )
        );
        let l12 = by("1.2");
        assert_eq!(l12.mode, Some(LinkMode::Trunk));
        assert_eq!(l12.trunk_vlans.as_ref().unwrap().to_range_string(), "20");
        assert_eq!((l12.native_vlan, l12.enabled), (Some(vid(30)), Some(false)));
        assert_eq!(by("lag1").trunk_vlans.unwrap().to_range_string(), "10,20");
        assert_eq!(
            by("1.3").mode,
            None,
            "a VLAN without a tag gives no membership"
        );
        // Round trip: the target membership of what was read is what was read.
        assert_eq!(target_membership(&l12), memberships(&vlans())["1.2"]);
        assert_eq!(target_membership(&l11), memberships(&vlans())["1.1"]);
    }

    #[test]
    fn f5_link_trunk_mock_and_empty() {
        assert!(
            parse_trunks(&json!({"kind": "tm:net:trunk:trunkcollectionstate", "items": []}))
                .is_empty()
        );
        let t = parse_trunks(
            &json!({"name": "lag1", "fullPath": "lag1", "interfaces": ["1.1", "1.2"], "lacp": "enabled"}),
        );
        assert_eq!((t[0].name.as_str(), t[0].members.len()), ("lag1", 2));
        assert_eq!(t[0].path(), "/mgmt/tm/net/trunk/lag1");
    }

    #[test]
    fn f5_link_validate_and_patch() {
        let mut l = Link::new("1.1");
        assert!(validate_link(&l).is_ok());
        l.mode = Some(LinkMode::Routed);
        assert!(validate_link(&l).is_err());
        l.mode = None;
        l.mtu = Some(9000);
        assert_eq!(validate_link(&l), Err(LinkUnfit::Mtu));
        let before = Link {
            description: Some("a".into()),
            enabled: Some(true),
            ..Link::new("1.1")
        };
        let mut after = before.clone();
        assert_eq!(
            render_link_patch(LinkKind::Interface, &before, &after),
            None
        );
        after.enabled = Some(false);
        after.description = None;
        assert_eq!(
            render_link_patch(LinkKind::Interface, &before, &after),
            Some(json!({"description": "", "disabled": true}))
        );
        assert_eq!(
            render_link_patch(LinkKind::Trunk, &before, &after),
            Some(json!({"description": ""}))
        );
        after.enabled = Some(true);
        after.description = Some("b".into());
        assert_eq!(
            render_link_patch(LinkKind::Interface, &before, &after),
            Some(json!({"description": "b"}))
        );
        let off = Link {
            enabled: Some(false),
            ..Link::new("1.1")
        };
        assert_eq!(
            render_link_patch(LinkKind::Interface, &off, &before),
            Some(json!({"description": "a", "enabled": true}))
        );
    }
}
