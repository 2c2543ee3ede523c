//! Routed interfaces: IPv4 and IPv6 addresses on a VLAN interface (`Vlan10`, Junos `irb.10`) or on a
//! port made routed, with the interface's enabled state, mtu and description; and how a change to one
//! is planned.
//!
//! The resource is `netdev_l3_interface` (attribute `netdev.l3_interfaces`): Chef's netdev cookbook has
//! `netdev_l2_interface` and no layer-3 resource, so its layer-3 twin is the name a Chef shop looks for
//! first, and the one the Ansible collections use (`*_l3_interfaces`, with `ipv4`/`ipv6` lists).
//! The first IPv4 address is the primary, the others secondaries; IPv6 has no primary.

use super::{Action, Plan, PropertyChange, ResourcePlan, ResourceRef};
use crate::error::ModelError;
use crate::resource::{
    Link, LinkMode, Presence, Vlan, VlanId, normalize_interface_name, same_interface,
    validate_description, validate_interface_name,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// An interface address with its prefix length, `10.0.0.1/24` or `2001:db8::1/64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IpCidr {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl fmt::Display for IpCidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl FromStr for IpCidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, p) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("{s:?} has no prefix length (write it as ADDRESS/LENGTH)"))?;
        let addr: IpAddr = a
            .parse()
            .map_err(|_| format!("{a:?} is not an IP address"))?;
        let prefix: u8 = p
            .parse()
            .map_err(|_| format!("{p:?} is not a prefix length"))?;
        let most = if addr.is_ipv4() { 32 } else { 128 };
        if prefix == 0 || prefix > most {
            return Err(format!(
                "prefix length {prefix} is out of range (1..{most})"
            ));
        }
        Ok(IpCidr { addr, prefix })
    }
}

impl IpCidr {
    /// The network this address is in, as a number with the host bits cleared (and the host bits).
    fn split(&self) -> (u128, u128) {
        let (bits, width) = match self.addr {
            IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
            IpAddr::V6(a) => (u128::from(a), 128),
        };
        let host_mask = if self.prefix >= width {
            0
        } else {
            (1u128 << (width - self.prefix)) - 1
        };
        (bits & !host_mask, bits & host_mask)
    }

    fn overlaps(&self, other: &IpCidr) -> bool {
        if self.addr.is_ipv4() != other.addr.is_ipv4() {
            return false;
        }
        let shorter = IpCidr {
            prefix: self.prefix.min(other.prefix),
            ..*self
        };
        let widened = IpCidr {
            prefix: shorter.prefix,
            ..*other
        };
        shorter.split().0 == widened.split().0
    }

    /// Why this address cannot be an interface's, if it cannot.
    fn unusable(&self) -> Option<&'static str> {
        if self.addr.is_unspecified() {
            return Some("is the unspecified address");
        }
        if self.addr.is_multicast() {
            return Some("is a multicast address");
        }
        if self.addr.is_loopback() {
            return Some("is a loopback address");
        }
        let (_, host) = self.split();
        let all_ones = match self.addr {
            IpAddr::V4(_) if self.prefix < 31 => (1u128 << (32 - self.prefix)) - 1,
            _ => u128::MAX,
        };
        match self.addr {
            IpAddr::V4(_) if self.prefix < 31 && host == 0 => Some("is the network address"),
            IpAddr::V4(_) if self.prefix < 31 && host == all_ones => {
                Some("is the broadcast address")
            }
            _ => None,
        }
    }
}

impl Serialize for IpCidr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for IpCidr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A routed interface resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L3Interface {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4: Option<Vec<IpCidr>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6: Option<Vec<IpCidr>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    #[serde(default)]
    pub state: Presence,
}

impl L3Interface {
    pub fn new(name: impl Into<String>) -> Self {
        L3Interface {
            name: name.into(),
            ipv4: None,
            ipv6: None,
            description: None,
            enabled: None,
            mtu: None,
            state: Presence::Present,
        }
    }

    /// The VLAN of a VLAN interface (`Vlan10`, `vlan10`, `irb.10`); `None` for a routed port.
    pub fn vlan(&self) -> Option<VlanId> {
        let lower = self.name.to_ascii_lowercase();
        let n = lower
            .strip_prefix("irb.")
            .or_else(|| lower.strip_prefix("vlan"))
            .or_else(|| lower.strip_prefix("vl"))?;
        VlanId::parse(n).ok()
    }

    pub fn primary(&self) -> Option<IpCidr> {
        self.ipv4.as_ref().and_then(|a| a.first().copied())
    }

    /// Every address, IPv4 first.
    pub fn addresses(&self) -> impl Iterator<Item = &IpCidr> {
        self.ipv4.iter().chain(self.ipv6.iter()).flatten()
    }

    pub fn validate(&self) -> Result<(), ModelError> {
        let context = format!("l3_interface {}", self.name);
        let bad = |field: &str, reason: String| ModelError::InvalidField {
            context: context.clone(),
            field: field.into(),
            reason,
        };
        validate_interface_name(&self.name).map_err(|e| bad("name", e.to_string()))?;
        if self.state == Presence::Absent {
            let bare = L3Interface {
                state: Presence::Absent,
                ..L3Interface::new(self.name.clone())
            };
            if *self != bare {
                return Err(bad(
                    "state",
                    "an absent l3_interface takes no other properties (its addresses are removed)"
                        .into(),
                ));
            }
            return Ok(());
        }
        validate_family(&bad, "ipv4", self.ipv4.as_deref(), true)?;
        validate_family(&bad, "ipv6", self.ipv6.as_deref(), false)?;
        if let Some(d) = &self.description {
            validate_description(&context, d)?;
        }
        if let Some(m) = self.mtu
            && !(68..=65535).contains(&m)
        {
            return Err(bad("mtu", format!("{m} is out of range (68..65535)")));
        }
        Ok(())
    }
}

fn validate_family(
    bad: &dyn Fn(&str, String) -> ModelError,
    family: &str,
    list: Option<&[IpCidr]>,
    v4: bool,
) -> Result<(), ModelError> {
    let list = list.unwrap_or_default();
    for (i, a) in list.iter().enumerate() {
        let field = format!("{family}[{i}]");
        if a.addr.is_ipv4() != v4 {
            return Err(bad(&field, format!("{a} is not an {family} address")));
        }
        if let Some(why) = a.unusable() {
            return Err(bad(&field, format!("{a} {why}")));
        }
        // Devices refuse a second address in a subnet the interface already has.
        if let Some(j) = list[..i].iter().position(|o| o.overlaps(a)) {
            return Err(bad(
                &field,
                format!("{a} overlaps {family}[{j}] {}", list[j]),
            ));
        }
    }
    Ok(())
}

/// A routed interface to create, update or delete.
#[derive(Debug, Clone, PartialEq)]
pub struct L3Change {
    /// The device's name when it has the interface, the declared one otherwise.
    pub name: String,
    pub action: Action,
    pub before: Option<L3Interface>,
    pub after: Option<L3Interface>,
    pub changes: Vec<PropertyChange>,
    pub ipv4_add: Vec<IpCidr>,
    pub ipv4_remove: Vec<IpCidr>,
    pub ipv6_add: Vec<IpCidr>,
    pub ipv6_remove: Vec<IpCidr>,
    /// The port is switched now and must be made routed (`no switchport`) first.
    pub make_routed: bool,
}

impl L3Change {
    pub fn changed(&self, property: &str) -> bool {
        self.changes.iter().any(|c| c.property == property)
    }
}

/// Management interfaces, which purge never touches (their address is the gateway's way in).
pub fn is_management(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["management", "mgmt", "ma", "fxp", "em", "me", "vme"]
        .iter()
        .any(|p| {
            n.strip_prefix(p)
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
}

/// What the L3 planner reads beside the interfaces: the VLANs an SVI needs (declared or on the device)
/// and the device's links (a routed port must exist, and a switched one is made routed).
pub struct L3Context<'a> {
    pub desired_vlans: &'a [Vlan],
    pub observed_vlans: &'a [Vlan],
    pub observed_links: &'a [Link],
}

/// Plan routed interfaces into `p`. `merge`: declared addresses are added (a declared first IPv4 address
/// becomes the primary); `replace`: the declared lists are the interface's; `purge`: as replace, and
/// addresses on undeclared interfaces (never management ones) are removed.
pub fn plan_l3(
    p: &mut Plan,
    desired: &[L3Interface],
    observed: &[L3Interface],
    policy: super::Policy,
    cx: &L3Context<'_>,
) {
    use super::Policy;
    for d in desired {
        let resource = ResourceRef::L3 {
            name: d.name.clone(),
        };
        if let Err(e) = d.validate() {
            p.push_failed(resource, e.to_string());
            continue;
        }
        let before = observed.iter().find(|o| same_interface(&o.name, &d.name));
        if let Err(e) = check_target(d, before.is_some(), cx) {
            p.push_failed(resource, e);
            continue;
        }
        let change = match (d.state, before) {
            (Presence::Absent, None) => None,
            (Presence::Absent, Some(b)) => Some(l3_delete(b)),
            (Presence::Present, b) => l3_update(d, b, policy != Policy::Merge, cx),
        };
        push_l3_change(p, resource, change);
    }
    if policy == Policy::Purge {
        for b in observed {
            if is_management(&b.name) || desired.iter().any(|d| same_interface(&d.name, &b.name)) {
                continue;
            }
            let resource = ResourceRef::L3 {
                name: b.name.clone(),
            };
            push_l3_change(p, resource, Some(l3_delete(b)));
        }
    }
}

/// An SVI needs its VLAN; a routed port must exist on the device.
fn check_target(d: &L3Interface, exists: bool, cx: &L3Context<'_>) -> Result<(), String> {
    if d.state == Presence::Absent || exists {
        return Ok(());
    }
    match d.vlan() {
        Some(id) => {
            let declared = cx.desired_vlans.iter().find(|v| v.id == id);
            match declared.map(|v| v.state) {
                Some(Presence::Present) => Ok(()),
                Some(Presence::Absent) => Err(format!(
                    "VLAN {id} is declared absent, so {} has no VLAN to route",
                    d.name
                )),
                None if cx.observed_vlans.iter().any(|v| v.id == id) => Ok(()),
                None => Err(format!(
                    "VLAN {id} is neither declared nor on the device; declare vlan {id} for {}",
                    d.name
                )),
            }
        }
        None if cx
            .observed_links
            .iter()
            .any(|l| same_interface(&l.name, &d.name)) =>
        {
            Ok(())
        }
        None => Err(format!("interface {} does not exist on the device", d.name)),
    }
}

fn push_l3_change(p: &mut Plan, resource: ResourceRef, change: Option<L3Change>) {
    p.resources.push(ResourcePlan {
        resource,
        action: change.as_ref().map(|c| c.action),
        changes: change
            .as_ref()
            .map(|c| c.changes.clone())
            .unwrap_or_default(),
        error: None,
    });
    p.l3.extend(change);
}

fn l3_delete(b: &L3Interface) -> L3Change {
    L3Change {
        name: b.name.clone(),
        action: Action::Delete,
        before: Some(b.clone()),
        after: None,
        changes: vec![PropertyChange {
            property: "state",
            before: json!("present"),
            after: json!("absent"),
        }],
        ipv4_add: vec![],
        ipv4_remove: b.ipv4.clone().unwrap_or_default(),
        ipv6_add: vec![],
        ipv6_remove: b.ipv6.clone().unwrap_or_default(),
        make_routed: false,
    }
}

fn opt<T: Serialize>(v: &Option<T>) -> Value {
    v.as_ref()
        .map(|x| serde_json::to_value(x).unwrap_or(Value::Null))
        .unwrap_or(Value::Null)
}

/// The target address list of one family and what is added and removed to reach it. `primary_first`:
/// the declared first address is the primary (IPv4), so it leads the list and an old primary goes.
fn target_list(
    want: Option<&Vec<IpCidr>>,
    have: &[IpCidr],
    owned: bool,
    primary_first: bool,
) -> (Vec<IpCidr>, Vec<IpCidr>, Vec<IpCidr>) {
    let Some(want) = want else {
        return (have.to_vec(), vec![], vec![]);
    };
    let mut target = want.clone();
    if !owned {
        let old_primary = if primary_first { have.first() } else { None };
        let demoted = old_primary.is_some_and(|p| want.first() != Some(p));
        let kept = have.iter().skip(usize::from(demoted));
        for a in kept {
            if !target.contains(a) {
                target.push(*a);
            }
        }
    }
    let add = target
        .iter()
        .filter(|a| !have.contains(a))
        .copied()
        .collect();
    let remove = have
        .iter()
        .filter(|a| !target.contains(a))
        .copied()
        .collect();
    (target, add, remove)
}

fn l3_update(
    d: &L3Interface,
    b: Option<&L3Interface>,
    owned: bool,
    cx: &L3Context<'_>,
) -> Option<L3Change> {
    let empty = L3Interface::new(d.name.clone());
    let have = b.unwrap_or(&empty);
    let mut after = have.clone();
    after.state = Presence::Present;
    let mut changes = Vec::new();
    if b.is_none() {
        changes.push(PropertyChange {
            property: "state",
            before: json!("absent"),
            after: json!("present"),
        });
    }
    let have4 = have.ipv4.clone().unwrap_or_default();
    let have6 = have.ipv6.clone().unwrap_or_default();
    let (t4, ipv4_add, ipv4_remove) = target_list(d.ipv4.as_ref(), &have4, owned, true);
    let (t6, ipv6_add, ipv6_remove) = target_list(d.ipv6.as_ref(), &have6, owned, false);
    // Order matters for IPv4 (the first is the primary), not for IPv6.
    if t4 != have4 {
        changes.push(PropertyChange {
            property: "ipv4",
            before: json!(have4),
            after: json!(t4),
        });
    }
    if !ipv6_add.is_empty() || !ipv6_remove.is_empty() {
        changes.push(PropertyChange {
            property: "ipv6",
            before: json!(have6),
            after: json!(t6),
        });
    }
    after.ipv4 = (!t4.is_empty()).then_some(t4);
    after.ipv6 = (!t6.is_empty()).then_some(t6);
    let want_desc = match (&d.description, owned) {
        (Some(x), _) => Some(Some(x.clone())),
        (None, true) => Some(None),
        (None, false) => None,
    };
    if let Some(w) = want_desc
        && w != have.description
    {
        changes.push(PropertyChange {
            property: "description",
            before: opt(&have.description),
            after: opt(&w),
        });
        after.description = w;
    }
    let want_enabled = d.enabled.or(owned.then_some(true));
    if let Some(w) = want_enabled
        && have.enabled != Some(w)
    {
        changes.push(PropertyChange {
            property: "enabled",
            before: opt(&have.enabled),
            after: json!(w),
        });
        after.enabled = Some(w);
    }
    if let Some(m) = d.mtu
        && have.mtu != Some(m)
    {
        changes.push(PropertyChange {
            property: "mtu",
            before: opt(&have.mtu),
            after: json!(m),
        });
        after.mtu = Some(m);
    }
    let make_routed = d.vlan().is_none()
        && cx
            .observed_links
            .iter()
            .find(|l| same_interface(&l.name, &d.name))
            .is_some_and(|l| l.mode != Some(LinkMode::Routed));
    if make_routed {
        changes.push(PropertyChange {
            property: "routed",
            before: json!(false),
            after: json!(true),
        });
    }
    (!changes.is_empty()).then(|| L3Change {
        name: have.name.clone(),
        action: if b.is_some() {
            Action::Update
        } else {
            Action::Create
        },
        before: b.cloned(),
        after: Some(after),
        changes,
        ipv4_add,
        ipv4_remove,
        ipv6_add,
        ipv6_remove,
        make_routed,
    })
}

/// The normalised name an L3 interface is declared under (`vl10` and `Vlan10` are one).
pub fn normalize(l: &mut L3Interface) {
    l.name = normalize_interface_name(&l.name);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{PlanRules, Policy, Step, plan};

    fn l3s(v: Value) -> Vec<L3Interface> {
        serde_json::from_value(v).unwrap()
    }
    fn vlans(v: Value) -> Vec<Vlan> {
        serde_json::from_value(v).unwrap()
    }
    fn links(v: Value) -> Vec<Link> {
        serde_json::from_value(v).unwrap()
    }
    fn run(
        dv: &[Vlan],
        ov: &[Vlan],
        d: &[L3Interface],
        o: &[L3Interface],
        ol: &[Link],
        policy: Policy,
    ) -> Plan {
        let mut p = plan(
            dv,
            ov,
            Policy::Merge,
            &[],
            ol,
            Policy::Merge,
            &PlanRules::default(),
        );
        let cx = L3Context {
            desired_vlans: dv,
            observed_vlans: ov,
            observed_links: ol,
        };
        plan_l3(&mut p, d, o, policy, &cx);
        p
    }

    #[test]
    fn addresses_parse_and_bad_ones_name_their_field() {
        let l: L3Interface = serde_json::from_value(json!({"name": "Vlan10",
            "ipv4": ["10.0.10.1/24", "10.9.0.1/24"], "ipv6": ["2001:db8:10::1/64"]}))
        .unwrap();
        assert!(l.validate().is_ok());
        assert_eq!(l.vlan(), VlanId::new(10).ok());
        assert_eq!(l.primary().unwrap().to_string(), "10.0.10.1/24");
        assert_eq!(
            serde_json::to_value(&l).unwrap()["ipv6"],
            json!(["2001:db8:10::1/64"])
        );
        let cases = [
            (
                json!({"name": "Vlan10", "ipv4": ["10.0.10.0/24"]}),
                "ipv4[0]",
                "network",
            ),
            (
                json!({"name": "Vlan10", "ipv4": ["10.0.10.255/24"]}),
                "ipv4[0]",
                "broadcast",
            ),
            (
                json!({"name": "Vlan10", "ipv4": ["10.0.10.1/24", "10.0.10.2/25"]}),
                "ipv4[1]",
                "overlaps ipv4[0]",
            ),
            (
                json!({"name": "Vlan10", "ipv4": ["2001:db8::1/64"]}),
                "ipv4[0]",
                "not an ipv4",
            ),
            (
                json!({"name": "Vlan10", "ipv6": ["ff02::1/64"]}),
                "ipv6[0]",
                "multicast",
            ),
            (json!({"name": "Vlan10", "mtu": 10}), "mtu", "out of range"),
            (
                json!({"name": "Vlan10", "state": "absent", "ipv4": ["10.0.0.1/24"]}),
                "state",
                "absent",
            ),
        ];
        for (v, field, why) in cases {
            let e = serde_json::from_value::<L3Interface>(v.clone())
                .unwrap()
                .validate()
                .unwrap_err();
            let t = e.to_string();
            assert!(
                t.contains("l3_interface Vlan10")
                    && t.contains(&format!("{field:?}"))
                    && t.contains(why),
                "{v}: {t}"
            );
        }
        for bad in [
            "10.0.0.1",
            "10.0.0.1/33",
            "10.0.0.1/0",
            "x/24",
            "2001:db8::1/129",
        ] {
            assert!(bad.parse::<IpCidr>().is_err(), "{bad}");
        }
        assert!(
            "10.0.0.0/31"
                .parse::<IpCidr>()
                .unwrap()
                .unusable()
                .is_none(),
            "/31 point-to-point"
        );
    }

    #[test]
    fn svi_needs_its_vlan_and_a_routed_port_its_interface() {
        let d = l3s(json!([{"name": "Vlan10", "ipv4": ["10.0.10.1/24"]},
            {"name": "Vlan20", "ipv4": ["10.0.20.1/24"]},
            {"name": "Vlan30", "ipv4": ["10.0.30.1/24"]},
            {"name": "Ethernet9", "ipv4": ["10.1.0.1/31"]}]));
        let dv = vlans(json!([{"id": 10}]));
        let ov = vlans(json!([{"id": 20}]));
        let p = run(&dv, &ov, &d, &[], &[], Policy::Merge);
        let errs: Vec<Option<&str>> = p
            .resources
            .iter()
            .skip(1)
            .map(|r| r.error.as_deref())
            .collect();
        assert_eq!(errs[0], None, "VLAN 10 declared");
        assert_eq!(errs[1], None, "VLAN 20 on the device");
        assert!(errs[2].unwrap().contains("declare vlan 30"), "{errs:?}");
        assert!(errs[3].unwrap().contains("does not exist"), "{errs:?}");
        let order: Vec<String> = p.steps().iter().map(Step::to_string).collect();
        assert_eq!(
            order,
            ["vlan[10]", "l3_interface[Vlan10]", "l3_interface[Vlan20]"]
        );
    }

    #[test]
    fn merge_adds_replace_owns_and_the_declared_first_is_primary() {
        let o = l3s(
            json!([{"name": "Vlan10", "ipv4": ["10.0.10.1/24", "10.8.0.1/24"],
            "ipv6": ["2001:db8::1/64"], "enabled": true}]),
        );
        let ov = vlans(json!([{"id": 10}]));
        let d = l3s(
            json!([{"name": "Vlan10", "ipv4": ["10.0.10.2/24"], "ipv6": ["2001:db8:1::1/64"]}]),
        );
        let m = run(&[], &ov, &d, &o, &[], Policy::Merge);
        let c = &m.l3[0];
        let after = c.after.as_ref().unwrap();
        assert_eq!(
            json!(after.ipv4),
            json!(["10.0.10.2/24", "10.8.0.1/24"]),
            "old primary goes"
        );
        assert_eq!(
            json!(after.ipv6),
            json!(["2001:db8:1::1/64", "2001:db8::1/64"])
        );
        assert_eq!(json!(c.ipv4_remove), json!(["10.0.10.1/24"]));
        let r = run(&[], &ov, &d, &o, &[], Policy::Replace);
        let c = &r.l3[0];
        assert_eq!(json!(c.ipv4_remove), json!(["10.0.10.1/24", "10.8.0.1/24"]));
        assert_eq!(json!(c.ipv6_remove), json!(["2001:db8::1/64"]));
        let applied = vec![c.after.clone().unwrap()];
        assert!(
            run(&[], &ov, &d, &applied, &[], Policy::Replace).is_empty(),
            "second run"
        );
        assert!(
            run(&[], &ov, &d, &applied, &[], Policy::Merge).is_empty(),
            "second run"
        );
    }

    #[test]
    fn a_switched_port_is_made_routed_and_purge_spares_management() {
        let ol = links(json!([{"name": "Ethernet3", "mode": "access", "access_vlan": 1}]));
        let o = l3s(json!([{"name": "Management1", "ipv4": ["192.0.2.10/24"]},
            {"name": "Vlan99", "ipv4": ["10.99.0.1/24"]}]));
        let d = l3s(
            json!([{"name": "Ethernet3", "ipv4": ["10.1.0.0/31"], "ipv6": ["2001:db8:ff::/127"]}]),
        );
        let p = run(&[], &[], &d, &o, &ol, Policy::Purge);
        assert!(p.l3[0].make_routed && p.l3[0].action == Action::Create);
        let deleted: Vec<&str> =
            p.l3.iter()
                .filter(|c| c.action == Action::Delete)
                .map(|c| c.name.as_str())
                .collect();
        assert_eq!(deleted, ["Vlan99"]);
        let order: Vec<String> = p.steps().iter().map(Step::to_string).collect();
        assert_eq!(
            order,
            ["delete l3_interface[Vlan99]", "l3_interface[Ethernet3]"]
        );
    }
}
