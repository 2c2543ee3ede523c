//! Plan -> iControl REST operations (queued in one transaction), and the operations that restore a
//! recorded pre-state. Pure functions over [`DeviceState`] (what `observe` read, with the raw objects).
//!
//! Order of the operations in the transaction (BIG-IP executes them in order at commit, and the
//! whole transaction fails or succeeds as one):
//!
//! ```text
//!   1. DELETE  VLANs the plan removes, and the old name of each renamed VLAN
//!   2. PATCH   VLANs that lose members (so an interface is free before it joins another VLAN)
//!   3. POST    new VLANs and the new name of each renamed VLAN (same tag, settings, final members)
//!   4. PATCH   the other changed VLANs (description, members)
//!   5. PATCH   interfaces and trunks (description, enabled/disabled)
//! ```
//!
//! A link's VLANs are written as the member lists of the VLANs concerned (`interfaces: [{name,
//! tagged|untagged}]`, which replaces the list), computed from the recorded member lists; a link change
//! that does not touch mode/access/trunk/native leaves membership alone. A VLAN created without a name
//! is named `vlan<ID>`.

use std::collections::{BTreeMap, BTreeSet};

use netgw_models::plan::{Action, Plan};
use netgw_models::resource::{Link, Vlan, VlanId};
use serde_json::{Map, Value, json};

use super::link::{self, F5Link};
use super::rest::{RestMethod, RestOp};
use super::vlan::{self, F5Vlan, VlanMember};
use crate::driver::Observed;

/// What `observe` read, raw enough to render and restore from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceState {
    pub vlans: Vec<F5Vlan>,
    pub links: Vec<F5Link>,
}

impl DeviceState {
    pub fn observed(&self) -> Observed {
        Observed {
            vlans: vlan::to_model(&self.vlans),
            links: link::to_model(&self.links, &self.vlans),
        }
    }

    fn vlan_by_path(&self, full_path: &str) -> Option<&F5Vlan> {
        self.vlans.iter().find(|v| v.full_path == full_path)
    }

    fn link(&self, name: &str) -> Option<&F5Link> {
        self.links.iter().find(|l| l.name == name)
    }
}

/// The operations of a plan and the objects they touch (what a rollback restores).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    pub ops: Vec<RestOp>,
    /// Full paths (`/Common/web`) of VLANs created, changed or deleted.
    pub vlans: BTreeSet<String>,
    /// Names of interfaces and trunks changed.
    pub links: BTreeSet<String>,
}

/// The name a VLAN gets on the device.
pub fn vlan_name(v: &Vlan) -> String {
    v.name
        .as_deref()
        .map(vlan::local_name)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("vlan{}", v.id))
}

fn common_path(name: &str) -> String {
    format!("/{}/{}", vlan::PARTITION, vlan::local_name(name))
}

/// Why a plan cannot be rendered against the state it was made from (or a restore against the
/// recorded pre-state): each names the VLAN or link.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("in VLAN {0}: the member list was not read")]
    MembersNotRead(String),
    #[error("in VLAN {0}: the member list was not recorded")]
    MembersNotRecorded(String),
    #[error("in VLAN {0}: a create without a target")]
    CreateWithoutTarget(u16),
    #[error("in VLAN {0}: to be created but the device has it")]
    CreateExisting(u16),
    #[error("in VLAN {0}: an update without a target")]
    UpdateWithoutTarget(u16),
    #[error("in VLAN {0}: to be updated but the device has no VLAN with this tag")]
    UpdateMissing(u16),
    #[error("in link {0}: no such interface or trunk on the device")]
    NoSuchLink(String),
    #[error(
        "in link {link}: VLAN {vlan} does not exist on the device and this plan does not create it"
    )]
    VlanMissing { link: String, vlan: u16 },
    #[error("in VLAN {tag}: {source}")]
    Tag {
        tag: u16,
        source: netgw_models::error::ModelError,
    },
}

type Members = BTreeMap<String, bool>;

fn members_of(v: &F5Vlan) -> Result<Members, PlanError> {
    v.members
        .as_ref()
        .map(|m| m.iter().map(|m| (m.name.clone(), m.tagged)).collect())
        .ok_or_else(|| PlanError::MembersNotRead(v.full_path.clone()))
}

fn member_list(m: &Members) -> Vec<VlanMember> {
    m.iter()
        .map(|(name, tagged)| VlanMember {
            name: name.clone(),
            tagged: *tagged,
        })
        .collect()
}

const VLAN_FIELDS: [&str; 4] = ["mode", "access_vlan", "trunk_vlans", "native_vlan"];

/// What happens to a VLAN the device has, or to a new one.
#[derive(Clone, Copy)]
enum Fate<'a> {
    Keep(&'a F5Vlan),
    Rename(&'a F5Vlan),
    Create,
}

/// Target state per VLAN tag: (name, description, members), plus what happens to it.
struct Target<'a> {
    fate: Fate<'a>,
    name: String,
    description: Option<String>,
    members: Members,
    original: Members,
}

/// Render a plan against the state it was made from.
pub fn render_plan(plan: &Plan, pre: &DeviceState) -> Result<Rendered, PlanError> {
    let mut out = Rendered::default();
    let mut targets = vlan_targets(pre)?;
    let mut deletes: Vec<&F5Vlan> = Vec::new();
    let mut changed: BTreeSet<u16> = BTreeSet::new();
    plan_vlans(plan, &mut targets, &mut deletes, &mut changed, &mut out)?;
    let link_ops = plan_links(plan, pre, &mut targets, &mut changed, &mut out)?;
    order_vlan_ops(&targets, &deletes, &changed, &mut out)?;
    out.ops.extend(link_ops);
    Ok(out)
}

/// Every VLAN the device has, kept as it is until the plan says otherwise.
fn vlan_targets(pre: &DeviceState) -> Result<BTreeMap<u16, Target<'_>>, PlanError> {
    let mut targets: BTreeMap<u16, Target<'_>> = BTreeMap::new();
    for v in &pre.vlans {
        let Some(tag) = v.tag else { continue };
        if targets.contains_key(&tag) {
            continue;
        }
        // Member lists are needed only where something changes; read them lazily below.
        let m = v
            .members
            .as_ref()
            .map(|_| members_of(v))
            .transpose()?
            .unwrap_or_default();
        targets.insert(
            tag,
            Target {
                fate: Fate::Keep(v),
                name: v.name.clone(),
                description: v.description.clone(),
                members: m.clone(),
                original: m,
            },
        );
    }
    Ok(targets)
}

/// The plan's VLAN changes applied to the targets: deleted, created, renamed or updated.
fn plan_vlans<'a>(
    plan: &Plan,
    targets: &mut BTreeMap<u16, Target<'a>>,
    deletes: &mut Vec<&'a F5Vlan>,
    changed: &mut BTreeSet<u16>,
    out: &mut Rendered,
) -> Result<(), PlanError> {
    for c in &plan.vlans {
        let tag = c.id.get();
        match c.action {
            Action::Delete => {
                if let Some(Target {
                    fate: Fate::Keep(v),
                    ..
                }) = targets.remove(&tag)
                {
                    deletes.push(v);
                    out.vlans.insert(v.full_path.clone());
                }
            }
            Action::Create => {
                let after = c
                    .after
                    .as_ref()
                    .ok_or(PlanError::CreateWithoutTarget(tag))?;
                if targets.contains_key(&tag) {
                    return Err(PlanError::CreateExisting(tag));
                }
                let name = vlan_name(after);
                out.vlans.insert(common_path(&name));
                targets.insert(
                    tag,
                    Target {
                        fate: Fate::Create,
                        name,
                        description: after.description.clone(),
                        members: Members::new(),
                        original: Members::new(),
                    },
                );
                changed.insert(tag);
            }
            Action::Update => {
                let after = c
                    .after
                    .as_ref()
                    .ok_or(PlanError::UpdateWithoutTarget(tag))?;
                let t = targets.get_mut(&tag).ok_or(PlanError::UpdateMissing(tag))?;
                let Fate::Keep(v) = t.fate else { continue };
                out.vlans.insert(v.full_path.clone());
                let new_name = vlan_name(after);
                if new_name != v.name {
                    members_of(v)?;
                    t.fate = Fate::Rename(v);
                    out.vlans.insert(common_path(&new_name));
                }
                t.name = new_name;
                t.description = after.description.clone();
                changed.insert(tag);
            }
        }
    }
    Ok(())
}

/// Links: own properties, and their VLANs as member lists (which change the VLAN targets).
fn plan_links(
    plan: &Plan,
    pre: &DeviceState,
    targets: &mut BTreeMap<u16, Target<'_>>,
    changed: &mut BTreeSet<u16>,
    out: &mut Rendered,
) -> Result<Vec<RestOp>, PlanError> {
    let mut link_ops = Vec::new();
    for lc in &plan.links {
        let name = &lc.after.name;
        let l = pre
            .link(name)
            .ok_or_else(|| PlanError::NoSuchLink(name.clone()))?;
        out.links.insert(name.clone());
        if let Some(body) = link::render_link_patch(l.kind, &lc.before, &lc.after) {
            link_ops.push(RestOp::new(RestMethod::Patch, l.path(), Some(body)));
        }
        if !lc.changes.iter().any(|c| VLAN_FIELDS.contains(&c.property)) {
            continue;
        }
        let want = link::target_membership(&lc.after);
        for id in want.keys() {
            if !targets.contains_key(id) {
                return Err(PlanError::VlanMissing {
                    link: name.clone(),
                    vlan: *id,
                });
            }
        }
        for (tag, t) in targets.iter_mut() {
            let before = t.members.get(name).copied();
            let after = want.get(tag).copied();
            if before == after {
                continue;
            }
            if let Fate::Keep(v) = t.fate {
                members_of(v)?;
                out.vlans.insert(v.full_path.clone());
            }
            match after {
                Some(tagged) => t.members.insert(name.clone(), tagged),
                None => t.members.remove(name),
            };
            changed.insert(*tag);
        }
    }
    Ok(link_ops)
}

/// The VLAN requests in the order the device accepts them.
fn order_vlan_ops(
    targets: &BTreeMap<u16, Target<'_>>,
    deletes: &[&F5Vlan],
    changed: &BTreeSet<u16>,
    out: &mut Rendered,
) -> Result<(), PlanError> {
    // 1. deletes (plan deletes, then the old names of renames)
    for v in deletes {
        out.ops
            .push(RestOp::new(RestMethod::Delete, v.path(), None));
    }
    for tag in changed {
        if let Some(Target {
            fate: Fate::Rename(v),
            ..
        }) = targets.get(tag)
        {
            out.ops
                .push(RestOp::new(RestMethod::Delete, v.path(), None));
        }
    }
    // 2.-4. patches that remove members, creates, other patches
    let mut patches_first = Vec::new();
    let mut creates = Vec::new();
    let mut patches_later = Vec::new();
    for tag in changed {
        let Some(t) = targets.get(tag) else { continue };
        let id =
            VlanId::new(i64::from(*tag)).map_err(|source| PlanError::Tag { tag: *tag, source })?;
        let members = member_list(&t.members);
        match t.fate {
            Fate::Create => creates.push(RestOp::new(
                RestMethod::Post,
                vlan::VLAN_COLLECTION,
                Some(vlan::render_create(
                    &t.name,
                    id,
                    t.description.as_deref(),
                    &members,
                )),
            )),
            Fate::Rename(v) => creates.push(RestOp::new(
                RestMethod::Post,
                vlan::VLAN_COLLECTION,
                Some(vlan::render_recreate(
                    v,
                    &t.name,
                    t.description.as_deref(),
                    &members,
                )),
            )),
            Fate::Keep(v) => {
                let mut body = Map::new();
                if t.description != v.description {
                    body.insert(
                        "description".into(),
                        json!(t.description.as_deref().unwrap_or("")),
                    );
                }
                if t.members != t.original {
                    body.insert("interfaces".into(), vlan::render_members(&members));
                }
                if body.is_empty() {
                    continue;
                }
                let op = RestOp::new(RestMethod::Patch, v.path(), Some(Value::Object(body)));
                if t.original.keys().any(|k| !t.members.contains_key(k)) {
                    patches_first.push(op);
                } else {
                    patches_later.push(op);
                }
            }
        }
    }
    out.ops.extend(patches_first);
    out.ops.extend(creates);
    out.ops.extend(patches_later);
    Ok(())
}

fn link_model(l: &F5Link) -> Link {
    Link {
        description: l.description.clone(),
        enabled: l.enabled,
        ..Link::new(l.name.clone())
    }
}

/// The operations that take the touched objects from `now` back to `pre` (empty when they match).
pub fn render_restore(
    pre: &DeviceState,
    now: &DeviceState,
    touched: &Rendered,
) -> Result<Vec<RestOp>, PlanError> {
    let mut deletes = Vec::new();
    let mut patches = Vec::new();
    let mut creates = Vec::new();
    for path in &touched.vlans {
        match (pre.vlan_by_path(path), now.vlan_by_path(path)) {
            (None, None) => {}
            (None, Some(n)) => deletes.push(RestOp::new(RestMethod::Delete, n.path(), None)),
            (Some(p), None) => {
                let members = p
                    .members
                    .clone()
                    .ok_or_else(|| PlanError::MembersNotRecorded(path.clone()))?;
                creates.push(RestOp::new(
                    RestMethod::Post,
                    vlan::VLAN_COLLECTION,
                    Some(vlan::render_recreate(
                        p,
                        &p.name,
                        p.description.as_deref(),
                        &members,
                    )),
                ));
            }
            (Some(p), Some(n)) => {
                let mut body = Map::new();
                if p.tag != n.tag
                    && let Some(t) = p.tag
                {
                    body.insert("tag".into(), json!(t));
                }
                if p.description != n.description {
                    body.insert(
                        "description".into(),
                        json!(p.description.as_deref().unwrap_or("")),
                    );
                }
                let pm = members_of(p)?;
                if Some(&pm)
                    != n.members
                        .as_ref()
                        .map(|_| members_of(n))
                        .transpose()?
                        .as_ref()
                {
                    body.insert("interfaces".into(), vlan::render_members(&member_list(&pm)));
                }
                if !body.is_empty() {
                    patches.push(RestOp::new(
                        RestMethod::Patch,
                        p.path(),
                        Some(Value::Object(body)),
                    ));
                }
            }
        }
    }
    let mut link_ops = Vec::new();
    for name in &touched.links {
        let (Some(p), Some(n)) = (pre.link(name), now.link(name)) else {
            continue;
        };
        let mut want = link_model(p);
        // An enabled flag the device did not report before cannot be restored.
        if want.enabled.is_none() {
            want.enabled = n.enabled;
        }
        if let Some(body) = link::render_link_patch(p.kind, &link_model(n), &want) {
            link_ops.push(RestOp::new(
                RestMethod::Patch,
                link::link_path(p.kind, name),
                Some(body),
            ));
        }
    }
    let mut ops = deletes;
    // Patches that free members before creates that may take them.
    ops.extend(patches);
    ops.extend(creates);
    ops.extend(link_ops);
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netgw_models::plan::{PlanRules, Policy, plan};
    use netgw_models::resource::VlanSet;
    use serde_json::json;

    fn state() -> DeviceState {
        DeviceState {
            vlans: vlan::parse_vlans(&json!({"items": [
                {"name": "web", "partition": "Common", "fullPath": "/Common/web", "tag": 10, "mtu": 1500,
                 "interfacesReference": {"items": [{"name": "1.1", "untagged": true}, {"name": "1.3", "tagged": true}]}},
                {"name": "db", "partition": "Common", "fullPath": "/Common/db", "tag": 20,
                 "interfacesReference": {"items": [{"name": "1.3", "tagged": true}]}},
                {"name": "old", "partition": "Common", "fullPath": "/Common/old", "tag": 30, "description": "x",
                 "interfacesReference": {"items": []}}
            ]})),
            links: link::parse_interfaces(&json!({"items": [
                {"name": "1.1", "enabled": true}, {"name": "1.2", "enabled": true}, {"name": "1.3", "enabled": true}]})),
        }
    }

    fn make_plan(s: &DeviceState, vlans: Value, links: Value, link_policy: Policy) -> Plan {
        let o = s.observed();
        let rules = PlanRules {
            reserved_vlans: VlanSet::new(),
            default_native_vlan: None,
        };
        plan(
            &serde_json::from_value::<Vec<Vlan>>(vlans).unwrap(),
            &o.vlans,
            Policy::Merge,
            &serde_json::from_value::<Vec<Link>>(links).unwrap(),
            &o.links,
            link_policy,
            &rules,
        )
    }

    fn lines(r: &Rendered) -> Vec<String> {
        r.ops.iter().map(RestOp::render).collect()
    }

    #[test]
    fn f5_config_vlan_create_rename_delete_in_order() {
        let s = state();
        let p = make_plan(
            &s,
            json!([{"id": 40, "name": "app", "description": "new"}, {"id": 20, "name": "database"}, {"id": 30, "state": "absent"}]),
            json!([]),
            Policy::Merge,
        );
        let r = render_plan(&p, &s).unwrap();
        assert_eq!(
            lines(&r),
            [
                "DELETE /mgmt/tm/net/vlan/~Common~old",
                "DELETE /mgmt/tm/net/vlan/~Common~db",
                r#"POST /mgmt/tm/net/vlan {"tag":20,"name":"database","partition":"Common","interfaces":[{"name":"1.3","tagged":true}]}"#,
                r#"POST /mgmt/tm/net/vlan {"name":"app","partition":"Common","tag":40,"description":"new","interfaces":[]}"#,
            ]
        );
        let touched: Vec<&str> = r.vlans.iter().map(String::as_str).collect();
        assert_eq!(
            touched,
            [
                "/Common/app",
                "/Common/database",
                "/Common/db",
                "/Common/old"
            ]
        );
    }

    #[test]
    fn f5_config_membership_moves_and_link_properties() {
        let s = state();
        // 1.1 moves from access 10 to access 20; 1.2 becomes a trunk for 10,20 with a description.
        let p = make_plan(
            &s,
            json!([]),
            json!([{"name": "1.1", "mode": "access", "access_vlan": 20},
                   {"name": "1.2", "mode": "trunk", "trunk_vlans": "10,20", "description": "to sw1", "enabled": false}]),
            Policy::Merge,
        );
        let r = render_plan(&p, &s).unwrap();
        assert_eq!(
            lines(&r),
            [
                r#"PATCH /mgmt/tm/net/vlan/~Common~web {"interfaces":[{"name":"1.2","tagged":true},{"name":"1.3","tagged":true}]}"#,
                r#"PATCH /mgmt/tm/net/vlan/~Common~db {"interfaces":[{"name":"1.1","untagged":true},{"name":"1.2","tagged":true},{"name":"1.3","tagged":true}]}"#,
                r#"PATCH /mgmt/tm/net/interface/1.2 {"description":"to sw1","disabled":true}"#,
            ]
        );
        assert_eq!(r.links.iter().collect::<Vec<_>>(), ["1.1", "1.2"]);
    }

    #[test]
    fn f5_config_refuses_unknown_vlans_links_and_unread_members() {
        let s = state();
        let p = make_plan(
            &s,
            json!([]),
            json!([{"name": "1.2", "mode": "access", "access_vlan": 99}]),
            Policy::Merge,
        );
        assert!(
            render_plan(&p, &s)
                .unwrap_err()
                .to_string()
                .contains("VLAN 99 does not exist")
        );
        let mut s2 = state();
        s2.vlans[0].members = None;
        let p = make_plan(
            &s2,
            json!([]),
            json!([{"name": "1.2", "mode": "access", "access_vlan": 10}]),
            Policy::Merge,
        );
        assert!(matches!(
            render_plan(&p, &s2),
            Err(PlanError::MembersNotRead(_))
        ));
        // A link the planner knows but the raw state lacks.
        let mut s3 = state();
        let p = make_plan(
            &s3,
            json!([]),
            json!([{"name": "1.2", "description": "x"}]),
            Policy::Merge,
        );
        s3.links.retain(|l| l.name != "1.2");
        assert!(
            render_plan(&p, &s3)
                .unwrap_err()
                .to_string()
                .contains("in link 1.2: no such interface")
        );
    }

    #[test]
    fn f5_config_description_only_link_change_keeps_membership() {
        let s = state();
        let p = make_plan(
            &s,
            json!([]),
            json!([{"name": "1.3", "description": "trunk to sw2"}]),
            Policy::Merge,
        );
        let r = render_plan(&p, &s).unwrap();
        assert_eq!(
            lines(&r),
            [r#"PATCH /mgmt/tm/net/interface/1.3 {"description":"trunk to sw2"}"#]
        );
        assert!(render_plan(&Plan::default(), &s).unwrap().ops.is_empty());
    }

    #[test]
    fn f5_config_restore_reverses_a_plan() {
        let pre = state();
        let p = make_plan(
            &pre,
            json!([{"id": 40, "name": "app"}, {"id": 20, "name": "database"}, {"id": 30, "state": "absent"}]),
            json!([{"name": "1.1", "mode": "access", "access_vlan": 20, "description": "moved", "enabled": false}]),
            Policy::Merge,
        );
        let r = render_plan(&p, &pre).unwrap();
        // What the device would look like after the commit.
        let now = DeviceState {
            vlans: vlan::parse_vlans(&json!({"items": [
                {"name": "web", "fullPath": "/Common/web", "tag": 10, "interfacesReference": {"items": [{"name": "1.3", "tagged": true}]}},
                {"name": "database", "fullPath": "/Common/database", "tag": 20,
                 "interfacesReference": {"items": [{"name": "1.1", "untagged": true}, {"name": "1.3", "tagged": true}]}},
                {"name": "app", "fullPath": "/Common/app", "tag": 40, "interfacesReference": {"items": []}}
            ]})),
            links: link::parse_interfaces(&json!({"items": [
                {"name": "1.1", "disabled": true, "description": "moved"}, {"name": "1.2", "enabled": true}, {"name": "1.3", "enabled": true}]})),
        };
        let ops: Vec<String> = render_restore(&pre, &now, &r)
            .unwrap()
            .iter()
            .map(RestOp::render)
            .collect();
        assert_eq!(
            ops,
            [
                "DELETE /mgmt/tm/net/vlan/~Common~app",
                "DELETE /mgmt/tm/net/vlan/~Common~database",
                r#"PATCH /mgmt/tm/net/vlan/~Common~web {"interfaces":[{"name":"1.1","untagged":true},{"name":"1.3","tagged":true}]}"#,
                r#"POST /mgmt/tm/net/vlan {"tag":20,"name":"db","partition":"Common","interfaces":[{"name":"1.3","tagged":true}]}"#,
                r#"POST /mgmt/tm/net/vlan {"tag":30,"name":"old","partition":"Common","description":"x","interfaces":[]}"#,
                r#"PATCH /mgmt/tm/net/interface/1.1 {"description":"","enabled":true}"#,
            ]
        );
        assert!(render_restore(&pre, &pre, &r).unwrap().is_empty());
    }
}
