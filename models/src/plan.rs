//! The planner: a pure diff of desired against observed resources, per resource and property.
//!
//! Collection policies (docs/design.md §3 step 8):
//! * `merge` (default): only declared properties change; a trunk's allowed VLANs are added to.
//! * `replace`: declared resources are fully owned: undeclared `description` is cleared, `enabled`
//!   defaults to true (where the device has an admin state for the link), `native_vlan` to the
//!   platform default, and a trunk's allowed list is replaced as a whole.
//!
//! Under every policy a declared link without `enabled` is read as `enabled: true` (netdev's
//! `netdev_interface` default) wherever the device reports the link's admin state.
//! * `purge`: as `merge` for declared VLANs, and VLANs on the device that are not declared are removed,
//!   except the reserved ones the driver names (1, and 1002-1005 on Cisco), which are never touched.

pub mod l3;
pub mod lag;

use crate::resource::{Link, LinkMode, Presence, Vlan, VlanId, VlanSet};
use l3::L3Change;
use lag::LagChange;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    #[default]
    Merge,
    Replace,
    Purge,
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "merge" => Ok(Policy::Merge),
            "replace" => Ok(Policy::Replace),
            "purge" => Ok(Policy::Purge),
            other => Err(format!(
                "unknown policy {other:?} (expected merge, replace or purge)"
            )),
        }
    }
}

/// Which resource a plan entry is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ResourceRef {
    Vlan {
        id: VlanId,
    },
    Link {
        name: String,
    },
    Lag {
        name: String,
    },
    #[serde(rename = "l3_interface")]
    L3 {
        name: String,
    },
}

impl ResourceRef {
    /// Every kind's name, as [`ResourceRef::ident`] gives it.
    pub const KINDS: [&'static str; 4] = ["vlan", "link", "lag", "l3_interface"];

    /// The kind as reports name it, and the resource's name within its kind.
    pub fn ident(&self) -> (&'static str, String) {
        match self {
            ResourceRef::Vlan { id } => ("vlan", id.to_string()),
            ResourceRef::Link { name } => ("link", name.clone()),
            ResourceRef::Lag { name } => ("lag", name.clone()),
            ResourceRef::L3 { name } => ("l3_interface", name.clone()),
        }
    }
}

impl fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, name) = self.ident();
        write!(f, "{kind}[{name}]")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Create,
    Update,
    Delete,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Delete => "delete",
        })
    }
}

/// One property that changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PropertyChange {
    pub property: &'static str,
    pub before: Value,
    pub after: Value,
}

/// A VLAN to create, update or delete. `after` is the full target state.
#[derive(Debug, Clone, PartialEq)]
pub struct VlanChange {
    pub id: VlanId,
    pub action: Action,
    pub before: Option<Vlan>,
    pub after: Option<Vlan>,
    pub changes: Vec<PropertyChange>,
}

/// A link to update. `after` is the full target state of the managed properties.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkChange {
    pub before: Link,
    pub after: Link,
    pub changes: Vec<PropertyChange>,
    /// VLANs to add to and remove from the trunk's allowed list.
    pub trunk_add: VlanSet,
    pub trunk_remove: VlanSet,
    /// True when the policy asks to replace the trunk list as a whole.
    pub trunk_replace: bool,
}

impl LinkChange {
    pub fn changed(&self, property: &str) -> bool {
        self.changes.iter().any(|c| c.property == property)
    }
}

/// The outcome of planning one declared (or purged) resource.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourcePlan {
    pub resource: ResourceRef,
    /// `create`, `update` or `delete` when something changes; `None` when up to date.
    pub action: Option<Action>,
    pub changes: Vec<PropertyChange>,
    /// Why this resource cannot be planned (it then fails, and the rest goes on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The plan for one device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    pub vlans: Vec<VlanChange>,
    pub links: Vec<LinkChange>,
    pub lags: Vec<LagChange>,
    pub l3: Vec<L3Change>,
    /// One entry per declared resource (and per purged one), in order, for reporting.
    pub resources: Vec<ResourcePlan>,
}

/// One step of applying a plan, in the order devices need ([`Plan::steps`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step<'a> {
    VlanUpsert(&'a VlanChange),
    /// Members leaving an aggregate (all of them when it goes).
    MembersLeave(&'a LagChange),
    LagDelete(&'a LagChange),
    L3Delete(&'a L3Change),
    /// The aggregate created or its own settings changed.
    LagUpsert(&'a LagChange),
    /// Members joining an aggregate, or taking its changed LACP mode.
    MembersJoin(&'a LagChange),
    Link(&'a LinkChange),
    L3Upsert(&'a L3Change),
    VlanDelete(&'a VlanChange),
}

impl fmt::Display for Step<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::VlanUpsert(c) => write!(f, "vlan[{}]", c.id),
            Step::MembersLeave(c) => write!(f, "members leave lag[{}]", c.name),
            Step::LagDelete(c) => write!(f, "delete lag[{}]", c.name),
            Step::L3Delete(c) => write!(f, "delete l3_interface[{}]", c.name),
            Step::LagUpsert(c) => write!(f, "lag[{}]", c.name),
            Step::MembersJoin(c) => write!(f, "members join lag[{}]", c.name),
            Step::Link(c) => write!(f, "link[{}]", c.after.name),
            Step::L3Upsert(c) => write!(f, "l3_interface[{}]", c.name),
            Step::VlanDelete(c) => write!(f, "delete vlan[{}]", c.id),
        }
    }
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.vlans.is_empty() && self.links.is_empty() && self.lags.is_empty() && self.l3.is_empty()
    }

    /// A resource that cannot be planned: it fails, and the rest goes on.
    pub fn push_failed(&mut self, resource: ResourceRef, error: String) {
        self.resources.push(ResourcePlan {
            resource,
            action: None,
            changes: vec![],
            error: Some(error),
        });
    }

    /// Every change in the order devices accept it: a VLAN before its SVI and before the ports and
    /// aggregates that carry it; members out of an aggregate before it goes (and before they join
    /// another); an aggregate before its members join; addresses off an interface before a port
    /// changes mode; an SVI removed before its VLAN.
    pub fn steps(&self) -> Vec<Step<'_>> {
        let mut out: Vec<Step<'_>> = self.vlan_upserts().map(Step::VlanUpsert).collect();
        let leaving = |c: &&LagChange| !c.links_remove.is_empty();
        out.extend(self.lags.iter().filter(leaving).map(Step::MembersLeave));
        let deleted = |c: &&LagChange| c.action == Action::Delete;
        out.extend(self.lags.iter().filter(deleted).map(Step::LagDelete));
        let l3_deleted = |c: &&L3Change| c.action == Action::Delete;
        out.extend(self.l3.iter().filter(l3_deleted).map(Step::L3Delete));
        for c in self.lags.iter().filter(|c| c.action != Action::Delete) {
            if c.action == Action::Create || c.settings.is_some() || c.changed("minimum_links") {
                out.push(Step::LagUpsert(c));
            }
            if !c.links_add.is_empty() || c.changed("lacp") {
                out.push(Step::MembersJoin(c));
            }
        }
        out.extend(self.links.iter().map(Step::Link));
        out.extend(
            self.l3
                .iter()
                .filter(|c| !l3_deleted(c))
                .map(Step::L3Upsert),
        );
        out.extend(self.vlan_deletes().map(Step::VlanDelete));
        out
    }

    pub fn failures(&self) -> impl Iterator<Item = &ResourcePlan> {
        self.resources.iter().filter(|r| r.error.is_some())
    }

    /// VLANs created or updated (render before links), and VLANs deleted (render after links).
    pub fn vlan_upserts(&self) -> impl Iterator<Item = &VlanChange> {
        self.vlans.iter().filter(|v| v.action != Action::Delete)
    }

    pub fn vlan_deletes(&self) -> impl Iterator<Item = &VlanChange> {
        self.vlans.iter().filter(|v| v.action == Action::Delete)
    }
}

/// What the driver says about the platform that the planner must respect.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanRules {
    /// VLANs purge never removes and that cannot be declared absent.
    pub reserved_vlans: VlanSet,
    /// Native VLAN of a trunk when none is configured (1 on every vendor netgw drives).
    pub default_native_vlan: Option<VlanId>,
}

fn opt<T: Serialize>(v: &Option<T>) -> Value {
    v.as_ref()
        .map(|x| serde_json::to_value(x).unwrap_or(Value::Null))
        .unwrap_or(Value::Null)
}

/// Plan VLANs and links together. Declared resources are validated first; an invalid one is reported
/// as a failed resource and left out of the plan.
pub fn plan(
    desired_vlans: &[Vlan],
    observed_vlans: &[Vlan],
    vlan_policy: Policy,
    desired_links: &[Link],
    observed_links: &[Link],
    link_policy: Policy,
    rules: &PlanRules,
) -> Plan {
    let mut p = Plan::default();
    plan_vlans(&mut p, desired_vlans, observed_vlans, vlan_policy, rules);
    plan_links(&mut p, desired_links, observed_links, link_policy, rules);
    let users = desired_links.iter().flat_map(|l| {
        let uses = [
            ("access_vlan", l.access_vlan),
            ("native_vlan", l.native_vlan),
        ];
        vlan_users("link", &l.name, uses)
    });
    refuse_used_deletes(&mut p, users);
    p
}

/// What a declared resource uses a VLAN as: `(resource, property, VLAN)` for each of `uses` set.
pub(crate) fn vlan_users<const N: usize>(
    kind: &'static str,
    name: &str,
    uses: [(&'static str, Option<VlanId>); N],
) -> impl Iterator<Item = (String, &'static str, VlanId)> {
    let resource = format!("{kind}[{name}]");
    uses.into_iter()
        .filter_map(move |(property, id)| Some((resource.clone(), property, id?)))
}

/// A VLAN the plan removes (declared absent, or undeclared under `purge`) while a declared port uses
/// it is an error instead: the port would be left in a VLAN that no longer exists and forward
/// nothing, most often because a `vlans` key was misspelt and its VLANs were never declared.
pub(crate) fn refuse_used_deletes(
    p: &mut Plan,
    users: impl Iterator<Item = (String, &'static str, VlanId)>,
) {
    for (user, property, id) in users {
        let deleted = |c: &VlanChange| c.id == id && c.action == Action::Delete;
        if !p.vlans.iter().any(deleted) {
            continue;
        }
        p.vlans.retain(|c| !deleted(c));
        let error = format!(
            "VLAN {id} would be removed from the device (declared absent, or not declared under \
             vlan_policy purge), but {user} uses it as {property}; declare vlan[{id}] (is a `vlans` \
             key misspelt?) or change the port"
        );
        if let Some(r) = p
            .resources
            .iter_mut()
            .find(|r| r.resource == ResourceRef::Vlan { id })
        {
            r.action = None;
            r.changes.clear();
            r.error = Some(error);
        }
    }
}

fn plan_vlans(
    p: &mut Plan,
    desired: &[Vlan],
    observed: &[Vlan],
    policy: Policy,
    rules: &PlanRules,
) {
    let obs: BTreeMap<VlanId, &Vlan> = observed.iter().map(|v| (v.id, v)).collect();
    let mut declared: Vec<VlanId> = Vec::new();
    for d in desired {
        let resource = ResourceRef::Vlan { id: d.id };
        declared.push(d.id);
        if let Err(e) = d.validate() {
            p.resources.push(ResourcePlan {
                resource,
                action: None,
                changes: vec![],
                error: Some(e.to_string()),
            });
            continue;
        }
        let before = obs.get(&d.id).copied();
        match (d.state, before) {
            (Presence::Absent, _) if rules.reserved_vlans.contains(d.id) => {
                p.resources.push(ResourcePlan {
                    resource,
                    action: None,
                    changes: vec![],
                    error: Some(format!(
                        "VLAN {} is reserved on this platform and cannot be removed",
                        d.id
                    )),
                });
            }
            (Presence::Absent, None) => p.resources.push(ResourcePlan {
                resource,
                action: None,
                changes: vec![],
                error: None,
            }),
            (Presence::Absent, Some(b)) => push_vlan_change(p, resource, vlan_delete(b)),
            (Presence::Present, None) => push_vlan_change(p, resource, vlan_create(d)),
            (Presence::Present, Some(b)) => match vlan_update(d, b, policy) {
                Some(change) => push_vlan_change(p, resource, change),
                None => p.resources.push(ResourcePlan {
                    resource,
                    action: None,
                    changes: vec![],
                    error: None,
                }),
            },
        }
    }
    if policy == Policy::Purge {
        for (id, b) in &obs {
            if declared.contains(id) || rules.reserved_vlans.contains(*id) {
                continue;
            }
            push_vlan_change(p, ResourceRef::Vlan { id: *id }, vlan_delete(b));
        }
    }
}

fn plan_links(
    p: &mut Plan,
    desired: &[Link],
    observed: &[Link],
    policy: Policy,
    rules: &PlanRules,
) {
    for d in desired {
        let resource = ResourceRef::Link {
            name: d.name.clone(),
        };
        if let Err(e) = d.validate() {
            p.resources.push(ResourcePlan {
                resource,
                action: None,
                changes: vec![],
                error: Some(e.to_string()),
            });
            continue;
        }
        let Some(b) = observed.iter().find(|o| o.name == d.name) else {
            p.resources.push(ResourcePlan {
                resource,
                action: None,
                changes: vec![],
                error: Some(format!("interface {} does not exist on the device", d.name)),
            });
            continue;
        };
        let change = link_change(d, b, policy == Policy::Replace, rules);
        if change.changes.is_empty() {
            p.resources.push(ResourcePlan {
                resource,
                action: None,
                changes: change.changes,
                error: None,
            });
            continue;
        }
        p.resources.push(ResourcePlan {
            resource,
            action: Some(Action::Update),
            changes: change.changes.clone(),
            error: None,
        });
        p.links.push(change);
    }
}

/// What bringing the observed link `b` to the declared `d` changes (`replace`: undeclared
/// properties go back to their defaults).
pub(crate) fn link_change(d: &Link, b: &Link, replace: bool, rules: &PlanRules) -> LinkChange {
    let mut after = b.clone();
    let mut changes = Vec::new();
    let mut set = |property: &'static str, before: Value, after_v: Value| {
        if before != after_v {
            changes.push(PropertyChange {
                property,
                before,
                after: after_v,
            });
        }
    };

    let want_desc = match (&d.description, replace) {
        (Some(x), _) => Some(Some(x.clone())),
        (None, true) => Some(None),
        (None, false) => None,
    };
    if let Some(w) = want_desc {
        set("description", opt(&b.description), opt(&w));
        after.description = w;
    }
    // A declared link is in use: without `enabled` it is read as enabled, as Chef's
    // `netdev_interface` defaults `enable` to true, so a port shut behind netgw's back is drift
    // under every policy. A link the device reports no admin state for (a BIG-IP trunk has none)
    // has no default to go back to, under `replace` either: only a declaration compares it.
    let want_enabled = d.enabled.or(b.enabled.is_some().then_some(true));
    if let Some(w) = want_enabled {
        set("enabled", opt(&b.enabled), json!(w));
        after.enabled = Some(w);
    }
    if let Some(m) = d.mtu {
        set("mtu", opt(&b.mtu), json!(m));
        after.mtu = Some(m);
    }
    if let Some(m) = d.mode {
        set("mode", opt(&b.mode), json!(m));
        after.mode = Some(m);
    }
    let mode = after.mode;
    if let Some(v) = d.access_vlan {
        set("access_vlan", opt(&b.access_vlan), json!(v));
        after.access_vlan = Some(v);
    }
    let mut trunk_add = VlanSet::new();
    let mut trunk_remove = VlanSet::new();
    // A port that becomes a trunk gets exactly the declared list: whatever allowed list it had
    // while not a trunk (on EOS and IOS, implicitly all VLANs) is not something to add to.
    let becomes_trunk = mode == Some(LinkMode::Trunk) && b.mode != Some(LinkMode::Trunk);
    let replace_trunk = replace || becomes_trunk;
    if mode == Some(LinkMode::Trunk) || d.trunk_vlans.is_some() {
        let before_set = b.trunk_vlans.clone().unwrap_or_default();
        if let Some(want) = &d.trunk_vlans {
            let target = if replace_trunk {
                want.clone()
            } else {
                before_set.union(want)
            };
            trunk_add = target.difference(&before_set);
            trunk_remove = before_set.difference(&target);
            set(
                "trunk_vlans",
                opt(&b.trunk_vlans),
                json!(target.to_range_string()),
            );
            after.trunk_vlans = Some(target);
        }
        let want_native = d.native_vlan.or(if replace {
            rules.default_native_vlan
        } else {
            None
        });
        if let Some(n) = want_native {
            set("native_vlan", opt(&b.native_vlan), json!(n));
            after.native_vlan = Some(n);
        }
    }
    LinkChange {
        before: b.clone(),
        after,
        changes,
        trunk_add,
        trunk_remove,
        trunk_replace: replace_trunk,
    }
}

/// Take the access VLAN off the observed port `o`, for a restore to a state in which the port had
/// none: there, "no access VLAN" is a value to put back, where a declared link without one leaves
/// the port's VLAN unmanaged (undoing a change that gave the port its first access VLAN, whose
/// VLAN the same restore deletes: the port must leave it in the same commit). Nothing when the port
/// has no access VLAN or is (or becomes) a trunk or routed port.
pub fn clear_access_vlan(p: &mut Plan, o: &Link) {
    let Some(v) = o.access_vlan else { return };
    let switched = |m: Option<LinkMode>| !matches!(m, Some(LinkMode::Trunk | LinkMode::Routed));
    let change = PropertyChange {
        property: "access_vlan",
        before: json!(v),
        after: Value::Null,
    };
    match p.links.iter_mut().find(|c| c.after.name == o.name) {
        Some(c) if !switched(c.after.mode) => return,
        Some(c) => {
            c.after.access_vlan = None;
            c.changes.retain(|x| x.property != "access_vlan");
            c.changes.push(change.clone());
        }
        None if !switched(o.mode) => return,
        None => {
            let mut after = o.clone();
            after.access_vlan = None;
            p.links.push(LinkChange {
                before: o.clone(),
                after,
                changes: vec![change.clone()],
                trunk_add: VlanSet::new(),
                trunk_remove: VlanSet::new(),
                trunk_replace: false,
            });
        }
    }
    let resource = ResourceRef::Link {
        name: o.name.clone(),
    };
    match p.resources.iter_mut().find(|r| r.resource == resource) {
        Some(r) => {
            r.action = Some(Action::Update);
            r.changes.retain(|x| x.property != "access_vlan");
            r.changes.push(change);
        }
        None => p.resources.push(ResourcePlan {
            resource,
            action: Some(Action::Update),
            changes: vec![change],
            error: None,
        }),
    }
}

/// A VLAN change and its resource's plan.
fn push_vlan_change(p: &mut Plan, resource: ResourceRef, change: VlanChange) {
    p.resources.push(ResourcePlan {
        resource,
        action: Some(change.action),
        changes: change.changes.clone(),
        error: None,
    });
    p.vlans.push(change);
}

/// Removing the observed VLAN `b`.
fn vlan_delete(b: &Vlan) -> VlanChange {
    VlanChange {
        id: b.id,
        action: Action::Delete,
        before: Some(b.clone()),
        after: None,
        changes: vec![PropertyChange {
            property: "state",
            before: json!("present"),
            after: json!("absent"),
        }],
    }
}

/// Creating the declared VLAN `d`, which the device does not have.
fn vlan_create(d: &Vlan) -> VlanChange {
    let mut changes = vec![PropertyChange {
        property: "state",
        before: json!("absent"),
        after: json!("present"),
    }];
    if d.name.is_some() {
        changes.push(PropertyChange {
            property: "name",
            before: Value::Null,
            after: opt(&d.name),
        });
    }
    if d.description.is_some() {
        changes.push(PropertyChange {
            property: "description",
            before: Value::Null,
            after: opt(&d.description),
        });
    }
    VlanChange {
        id: d.id,
        action: Action::Create,
        before: None,
        after: Some(d.clone()),
        changes,
    }
}

/// Bringing the observed VLAN `b` to the declared `d`: its name, and its description as `policy`
/// says; `None` when nothing differs.
fn vlan_update(d: &Vlan, b: &Vlan, policy: Policy) -> Option<VlanChange> {
    let mut after = b.clone();
    let mut changes = Vec::new();
    if d.name.is_some() && d.name != b.name {
        changes.push(PropertyChange {
            property: "name",
            before: opt(&b.name),
            after: opt(&d.name),
        });
        after.name = d.name.clone();
    }
    let want_desc = match (policy, &d.description) {
        (_, Some(x)) => Some(Some(x.clone())),
        (Policy::Replace, None) => Some(None),
        _ => None,
    };
    if let Some(want) = want_desc
        && want != b.description
    {
        changes.push(PropertyChange {
            property: "description",
            before: opt(&b.description),
            after: opt(&want),
        });
        after.description = want;
    }
    (!changes.is_empty()).then(|| VlanChange {
        id: d.id,
        action: Action::Update,
        before: Some(b.clone()),
        after: Some(after),
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vlans(v: Value) -> Vec<Vlan> {
        serde_json::from_value(v).unwrap()
    }
    fn links(v: Value) -> Vec<Link> {
        serde_json::from_value(v).unwrap()
    }
    fn cisco() -> PlanRules {
        PlanRules {
            reserved_vlans: VlanSet::parse("1,1002-1005").unwrap(),
            default_native_vlan: VlanId::new(1).ok(),
        }
    }

    #[test]
    fn vlan_create_rename_delete_and_up_to_date() {
        let d = vlans(json!([
            {"id": 10, "name": "web"},
            {"id": 20, "name": "db"},
            {"id": 30, "state": "absent"},
            {"id": 40, "name": "same"},
            {"id": 50, "state": "absent"}
        ]));
        let o = vlans(
            json!([{"id": 1, "name": "default"}, {"id": 20, "name": "old"}, {"id": 30, "name": "x"}, {"id": 40, "name": "same"}, {"id": 99}]),
        );
        let p = plan(&d, &o, Policy::Merge, &[], &[], Policy::Merge, &cisco());
        let actions: Vec<(String, Option<Action>)> = p
            .resources
            .iter()
            .map(|r| (r.resource.to_string(), r.action))
            .collect();
        assert_eq!(
            actions,
            vec![
                ("vlan[10]".into(), Some(Action::Create)),
                ("vlan[20]".into(), Some(Action::Update)),
                ("vlan[30]".into(), Some(Action::Delete)),
                ("vlan[40]".into(), None),
                ("vlan[50]".into(), None),
            ]
        );
        assert_eq!(
            p.resources[1].changes,
            vec![PropertyChange {
                property: "name",
                before: json!("old"),
                after: json!("db")
            }]
        );
        assert_eq!(p.vlans.len(), 3, "merge leaves undeclared VLAN 99 alone");
    }

    #[test]
    fn purge_removes_undeclared_but_never_reserved() {
        let d = vlans(json!([{"id": 10, "name": "web"}]));
        let o = vlans(
            json!([{"id": 1}, {"id": 10, "name": "web"}, {"id": 99}, {"id": 1002}, {"id": 1005}]),
        );
        let p = plan(&d, &o, Policy::Purge, &[], &[], Policy::Merge, &cisco());
        let deleted: Vec<u16> = p.vlan_deletes().map(|v| v.id.get()).collect();
        assert_eq!(deleted, [99]);
        let d = vlans(json!([{"id": 1, "state": "absent"}]));
        let p = plan(&d, &o, Policy::Merge, &[], &[], Policy::Merge, &cisco());
        assert!(
            p.resources[0]
                .error
                .as_deref()
                .unwrap()
                .contains("reserved")
        );
        assert!(p.is_empty());
    }

    #[test]
    fn a_vlan_a_declared_port_uses_is_never_removed() {
        let o = vlans(json!([{"id": 1}, {"id": 99}, {"id": 100, "name": "servers"}]));
        let ports = links(json!([
            {"name": "Gi0/1", "mode": "access", "access_vlan": 100},
            {"name": "Gi0/2", "mode": "trunk", "trunk_vlans": "1-4094", "native_vlan": 99}
        ]));
        let port_o = links(json!([
            {"name": "Gi0/1", "mode": "access", "access_vlan": 100, "enabled": true},
            {"name": "Gi0/2", "mode": "trunk", "trunk_vlans": "1-4094", "native_vlan": 99, "enabled": true}
        ]));
        let with_ports = |d: &[Vlan], o: &[Vlan], policy, ports: &[Link]| {
            plan(d, o, policy, ports, &port_o, Policy::Merge, &cisco())
        };
        // A misspelt `vlans` key declares nothing: purge would remove both VLANs the ports use.
        let p = with_ports(&[], &o, Policy::Purge, &ports);
        assert_eq!(p.vlan_deletes().count(), 0, "{:?}", p.vlans);
        let errors: Vec<&str> = p.failures().filter_map(|r| r.error.as_deref()).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("VLAN 100 would be removed")
                    && e.contains("link[Gi0/1] uses it as access_vlan")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("link[Gi0/2] uses it as native_vlan")),
            "{errors:?}"
        );
        // Declared absent while a port uses it: the same refusal.
        let d = vlans(json!([{"id": 100, "state": "absent"}]));
        let p = with_ports(&d, &o, Policy::Merge, &ports[..1]);
        assert!(p.is_empty(), "{:?}", p.vlans);
        assert!(p.failures().any(|r| r.resource
            == ResourceRef::Vlan {
                id: VlanId::new(100).unwrap()
            }));
        // A VLAN no declared port uses is still purged; the declared ones stay.
        let d = vlans(json!([{"id": 100, "name": "servers"}, {"id": 99}]));
        let p = with_ports(&d, &o, Policy::Purge, &ports);
        assert_eq!(p.failures().count(), 0);
        let o = vlans(json!([{"id": 1}, {"id": 99}, {"id": 100, "name": "servers"}, {"id": 300}]));
        let p = with_ports(&d, &o, Policy::Purge, &ports);
        let deleted: Vec<u16> = p.vlan_deletes().map(|v| v.id.get()).collect();
        assert_eq!(deleted, [300]);
    }

    #[test]
    fn invalid_resources_fail_alone() {
        let d = vlans(json!([{"id": 10, "name": "bad name"}, {"id": 11, "name": "ok"}]));
        let p = plan(&d, &[], Policy::Merge, &[], &[], Policy::Merge, &cisco());
        assert!(p.resources[0].error.is_some());
        assert_eq!(p.vlans.len(), 1);
    }

    #[test]
    fn replace_clears_undeclared_description_merge_keeps_it() {
        let d = vlans(json!([{"id": 10, "name": "web"}]));
        let o = vlans(json!([{"id": 10, "name": "web", "description": "legacy"}]));
        assert!(plan(&d, &o, Policy::Merge, &[], &[], Policy::Merge, &cisco()).is_empty());
        let p = plan(&d, &o, Policy::Replace, &[], &[], Policy::Merge, &cisco());
        assert_eq!(p.vlans[0].after.as_ref().unwrap().description, None);
    }

    #[test]
    fn trunk_lists_add_on_merge_and_replace_on_replace() {
        let d = links(
            json!([{"name": "Gi0/1", "mode": "trunk", "trunk_vlans": "10,20", "native_vlan": 10}]),
        );
        let o = links(
            json!([{"name": "Gi0/1", "mode": "trunk", "trunk_vlans": "10,30", "native_vlan": 1, "enabled": true}]),
        );
        let m = plan(&[], &[], Policy::Merge, &d, &o, Policy::Merge, &cisco());
        let c = &m.links[0];
        assert_eq!(
            c.after.trunk_vlans.as_ref().unwrap().to_range_string(),
            "10,20,30"
        );
        assert_eq!(
            (
                c.trunk_add.to_range_string(),
                c.trunk_remove.to_range_string()
            ),
            ("20".into(), "none".into())
        );
        assert!(c.changed("native_vlan") && !c.trunk_replace);
        let r = plan(&[], &[], Policy::Merge, &d, &o, Policy::Replace, &cisco());
        let c = &r.links[0];
        assert_eq!(
            c.after.trunk_vlans.as_ref().unwrap().to_range_string(),
            "10,20"
        );
        assert_eq!(c.trunk_remove.to_range_string(), "30");
        assert!(c.trunk_replace);
    }

    #[test]
    fn a_port_becoming_a_trunk_gets_exactly_the_declared_list() {
        let d = links(json!([{"name": "Et1", "mode": "trunk", "trunk_vlans": "10"}]));
        let o = links(
            json!([{"name": "Et1", "mode": "access", "access_vlan": 5, "trunk_vlans": "1-4094", "enabled": true}]),
        );
        let p = plan(&[], &[], Policy::Merge, &d, &o, Policy::Merge, &cisco());
        let c = &p.links[0];
        assert!(
            c.trunk_replace,
            "merge still replaces when the mode changes to trunk"
        );
        assert_eq!(
            c.after.trunk_vlans.as_ref().unwrap().to_range_string(),
            "10"
        );
    }

    #[test]
    fn ranges_compare_equal_to_their_expansion() {
        let d = links(json!([{"name": "Et1", "mode": "trunk", "trunk_vlans": "1-10,21-30"}]));
        let o = links(
            json!([{"name": "Et1", "mode": "trunk", "trunk_vlans": [1,2,3,4,5,6,7,8,9,10,21,22,23,24,25,26,27,28,29,30], "enabled": true}]),
        );
        let p = plan(
            &[],
            &[],
            Policy::Merge,
            &d,
            &o,
            Policy::Replace,
            &PlanRules::default(),
        );
        assert!(p.is_empty(), "{:?}", p.resources);
        assert_eq!(p.resources[0].action, None);
    }

    #[test]
    fn access_port_and_missing_interface() {
        let d = links(
            json!([{"name": "Gi0/2", "mode": "access", "access_vlan": 20, "description": "server"}, {"name": "Gi9/9", "enabled": false}]),
        );
        let o = links(
            json!([{"name": "Gi0/2", "mode": "trunk", "trunk_vlans": "1-4094", "enabled": true}]),
        );
        let p = plan(&[], &[], Policy::Merge, &d, &o, Policy::Merge, &cisco());
        let props: Vec<&str> = p.links[0].changes.iter().map(|c| c.property).collect();
        assert_eq!(props, ["description", "mode", "access_vlan"]);
        assert!(
            p.resources[1]
                .error
                .as_deref()
                .unwrap()
                .contains("does not exist")
        );
    }

    /// A declared link says nothing of `enabled`: read as enabled (netdev_interface's default), so a
    /// port shut on the device is a change under merge too; a device that reports no admin state
    /// for it leaves it uncompared, and `enabled: false` is kept as declared.
    #[test]
    fn a_declared_link_is_enabled_unless_it_says_otherwise() {
        let d = links(json!([{"name": "Et1", "description": "uplink"}]));
        let changes = |observed: Value, policy: Policy| {
            let o = links(observed);
            let p = plan(&[], &[], policy, &d, &o, policy, &PlanRules::default());
            p.links
                .iter()
                .flat_map(|l| l.changes.iter())
                .map(|c| format!("{} {} -> {}", c.property, c.before, c.after))
                .collect::<Vec<_>>()
        };
        for policy in [Policy::Merge, Policy::Replace, Policy::Purge] {
            assert_eq!(
                changes(
                    json!([{"name": "Et1", "description": "uplink", "enabled": false}]),
                    policy
                ),
                ["enabled false -> true"],
                "{policy:?}"
            );
            assert!(
                changes(
                    json!([{"name": "Et1", "description": "uplink", "enabled": true}]),
                    policy
                )
                .is_empty()
            );
        }
        assert!(
            changes(
                json!([{"name": "Et1", "description": "uplink"}]),
                Policy::Merge
            )
            .is_empty(),
            "no admin state reported: nothing to compare"
        );
        let down = links(json!([{"name": "Et1", "enabled": false}]));
        let up = links(json!([{"name": "Et1", "enabled": true}]));
        let p = plan(
            &[],
            &[],
            Policy::Merge,
            &down,
            &up,
            Policy::Merge,
            &PlanRules::default(),
        );
        assert_eq!(
            p.links[0].after.enabled,
            Some(false),
            "declared down stays down"
        );
    }

    #[test]
    fn second_plan_after_apply_is_empty() {
        let d = links(json!([{"name": "Et1", "description": "x", "enabled": false, "mtu": 9000}]));
        let o = links(json!([{"name": "Et1", "enabled": true, "mtu": 1500}]));
        let p = plan(
            &[],
            &[],
            Policy::Merge,
            &d,
            &o,
            Policy::Merge,
            &PlanRules::default(),
        );
        let applied = vec![p.links[0].after.clone()];
        assert!(
            plan(
                &[],
                &[],
                Policy::Merge,
                &d,
                &applied,
                Policy::Merge,
                &PlanRules::default()
            )
            .is_empty()
        );
    }
}
