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
//! Aggregates (trunks) and self IPs go around these (`lag.rs`): self IPs removed and trunks losing
//! members or created before step 1, trunks completed or deleted after step 4, self IPs added last.
//!
//! A link's VLANs are written as the member lists of the VLANs concerned (`interfaces: [{name,
//! tagged|untagged}]`, which replaces the list), computed from the recorded member lists; a link change
//! that does not touch mode/access/trunk/native leaves membership alone. A VLAN created without a name
//! is named `vlan<ID>`.

use std::collections::{BTreeMap, BTreeSet};

use netgw_models::plan::{Action, Plan};
use netgw_models::resource::{Link, Vlan, VlanId};
use serde_json::{Map, Value, json};

use super::lag::{self, F5Self, F5Trunk};
use super::link::{self, F5Link};
use super::rest::{RestMethod, RestOp};
use super::vlan::{self, F5Vlan, VlanMember};
use crate::driver::{LagL3, Observed};

/// What `observe` read, raw enough to render and restore from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceState {
    pub vlans: Vec<F5Vlan>,
    pub links: Vec<F5Link>,
    pub trunks: Vec<F5Trunk>,
    /// Self IPs; `None` when not read (only plans and restores with addresses need them).
    pub selfs: Option<Vec<F5Self>>,
}

impl DeviceState {
    pub fn observed(&self) -> Observed {
        Observed {
            vlans: vlan::to_model(&self.vlans),
            links: link::to_model(&self.links, &self.vlans),
        }
    }

    /// Aggregates and routed interfaces in netgw's model.
    pub fn lag_l3(&self) -> LagL3 {
        let links = link::to_model(&self.links, &self.vlans);
        LagL3 {
            lags: lag::lags_to_model(&self.trunks, &links),
            l3: lag::l3_to_model(self.selfs.as_deref().unwrap_or_default(), &self.vlans),
        }
    }

    fn trunk(&self, name: &str) -> Option<&F5Trunk> {
        self.trunks.iter().find(|t| t.name == name)
    }

    fn selfs(&self) -> &[F5Self] {
        self.selfs.as_deref().unwrap_or_default()
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
    /// Trunks created, changed or deleted as aggregates.
    pub trunks: BTreeSet<String>,
    /// Full paths of self IPs created or deleted.
    pub selfs: BTreeSet<String>,
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
    #[error(transparent)]
    Unfit(#[from] lag::Unfit),
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
    let trunk_ops = plan_trunks(plan, pre, &mut targets, &mut changed, &mut out)?;
    let (self_deletes, self_creates) = plan_selfs(plan, pre, &targets, &mut out)?;
    out.ops.extend(self_deletes);
    out.ops.extend(trunk_ops.free);
    out.ops.extend(trunk_ops.create);
    order_vlan_ops(&targets, &deletes, &changed, &mut out)?;
    out.ops.extend(trunk_ops.finish);
    out.ops.extend(link_ops);
    out.ops.extend(self_creates);
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
        set_membership(name, &want, targets, changed, out)?;
    }
    Ok(link_ops)
}

/// Make `name` (an interface or trunk) a member of exactly the VLANs of `want`.
fn set_membership(
    name: &str,
    want: &link::Membership,
    targets: &mut BTreeMap<u16, Target<'_>>,
    changed: &mut BTreeSet<u16>,
    out: &mut Rendered,
) -> Result<(), PlanError> {
    for id in want.keys() {
        if !targets.contains_key(id) {
            return Err(PlanError::VlanMissing {
                link: name.to_owned(),
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
            Some(tagged) => t.members.insert(name.to_owned(), tagged),
            None => t.members.remove(name),
        };
        changed.insert(*tag);
    }
    Ok(())
}

/// Aggregates: the trunk requests, and the VLAN memberships they change (a removed trunk leaves its
/// VLANs, a joining member leaves its own, the trunk's declared VLANs are its memberships).
fn plan_trunks(
    plan: &Plan,
    pre: &DeviceState,
    targets: &mut BTreeMap<u16, Target<'_>>,
    changed: &mut BTreeSet<u16>,
    out: &mut Rendered,
) -> Result<lag::TrunkOps, PlanError> {
    let mut ops = lag::TrunkOps::default();
    for c in &plan.lags {
        let before = pre.trunk(&c.name);
        out.trunks.insert(c.name.clone());
        let Some(after) = &c.after else {
            let b = before.ok_or_else(|| lag::Unfit::NoSuchTrunk(c.name.clone()))?;
            if !b.members.is_empty() {
                ops.free.push(RestOp::new(
                    RestMethod::Patch,
                    b.path(),
                    Some(json!({"interfaces": []})),
                ));
            }
            set_membership(&c.name, &link::Membership::new(), targets, changed, out)?;
            ops.finish
                .push(RestOp::new(RestMethod::Delete, b.path(), None));
            continue;
        };
        lag::check_lag(after)?;
        match (c.action, before) {
            (Action::Create, Some(_)) => return Err(lag::Unfit::TrunkExists(c.name.clone()).into()),
            (Action::Create, None) => ops.create.push(lag::trunk_create(after)),
            (_, None) => return Err(lag::Unfit::NoSuchTrunk(c.name.clone()).into()),
            (_, Some(b)) if !c.links_remove.is_empty() => {
                let keep: Vec<&String> = b
                    .members
                    .iter()
                    .filter(|m| !c.links_remove.contains(m))
                    .collect();
                ops.free.push(RestOp::new(
                    RestMethod::Patch,
                    b.path(),
                    Some(json!({"interfaces": keep})),
                ));
            }
            _ => {}
        }
        for m in &c.links_add {
            set_membership(m, &link::Membership::new(), targets, changed, out)?;
        }
        if let Some(s) = &c.settings
            && s.changes.iter().any(|x| VLAN_FIELDS.contains(&x.property))
        {
            set_membership(
                &c.name,
                &link::target_membership(&s.after),
                targets,
                changed,
                out,
            )?;
        }
        let mut from = before.cloned();
        if let Some(f) = &mut from {
            f.members.retain(|m| !c.links_remove.contains(m));
        }
        ops.finish.extend(lag::trunk_patch(from.as_ref(), after));
    }
    Ok(ops)
}

/// Routed interfaces: the self IPs to delete and to create, each on its VLAN.
fn plan_selfs(
    plan: &Plan,
    pre: &DeviceState,
    targets: &BTreeMap<u16, Target<'_>>,
    out: &mut Rendered,
) -> Result<(Vec<RestOp>, Vec<RestOp>), PlanError> {
    let (mut deletes, mut creates) = (Vec::new(), Vec::new());
    for c in &plan.l3 {
        let n = || c.name.clone();
        let tag = c
            .after
            .as_ref()
            .or(c.before.as_ref())
            .and_then(|l| l.vlan())
            .ok_or_else(|| lag::Unfit::NotAVlan(n()))?;
        if let Some(a) = &c.after {
            check_l3(a)?;
        }
        for r in c.ipv4_remove.iter().chain(&c.ipv6_remove) {
            let s = pre
                .selfs()
                .iter()
                .find(|s| s.address == *r && pre_tag(pre, &s.vlan) == Some(tag.get()))
                .ok_or_else(|| lag::Unfit::NoSelf(n(), *r))?;
            out.selfs.insert(s.full_path.clone());
            deletes.push(RestOp::new(RestMethod::Delete, s.path(), None));
        }
        let adds: Vec<&netgw_models::plan::l3::IpCidr> =
            c.ipv4_add.iter().chain(&c.ipv6_add).collect();
        if adds.is_empty() {
            continue;
        }
        let vlan = targets
            .get(&tag.get())
            .map(|t| t.name.clone())
            .ok_or_else(|| lag::Unfit::NoVlan(n(), tag.get()))?;
        for a in adds {
            let name = lag::self_name(tag, a);
            out.selfs.insert(common_path(&name));
            creates.push(lag::self_create(&name, a, &vlan));
        }
    }
    Ok((deletes, creates))
}

/// The tag of the VLAN named `name` on the device.
fn pre_tag(pre: &DeviceState, name: &str) -> Option<u16> {
    pre.vlans
        .iter()
        .find(|v| v.name == name && v.full_path == common_path(name))
        .and_then(|v| v.tag)
}

/// Vendor limits on a routed interface's target state.
fn check_l3(a: &netgw_models::plan::l3::L3Interface) -> Result<(), lag::Unfit> {
    let n = || a.name.clone();
    if a.enabled == Some(false) {
        return Err(lag::Unfit::Unsupported(n(), "enabled: false"));
    }
    if a.mtu.is_some() {
        return Err(lag::Unfit::Unsupported(n(), "mtu"));
    }
    if a.description.is_some() {
        return Err(lag::Unfit::Unsupported(n(), "description"));
    }
    let v4 = a.ipv4.as_deref().unwrap_or_default();
    if v4.windows(2).any(|w| w[0] > w[1]) {
        let mut sorted = v4.to_vec();
        sorted.sort();
        let shown: Vec<String> = sorted.iter().map(ToString::to_string).collect();
        return Err(lag::Unfit::Order(n(), shown.join(", ")));
    }
    Ok(())
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
    let r = lag::render_restore(
        (&pre.trunks, pre.selfs()),
        (&now.trunks, now.selfs()),
        (&touched.trunks, &touched.selfs),
    );
    let mut ops = r.self_deletes;
    // Trunk members freed before VLANs take them back; trunks back before VLANs hold them.
    ops.extend(r.trunks.free);
    ops.extend(r.trunks.create);
    ops.extend(deletes);
    // Patches that free members before creates that may take them.
    ops.extend(patches);
    ops.extend(creates);
    ops.extend(r.trunks.finish);
    ops.extend(link_ops);
    ops.extend(r.self_creates);
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
            trunks: vec![],
            selfs: Some(vec![]),
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
            trunks: vec![],
            selfs: Some(vec![]),
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

    #[test]
    fn f5_config_trunk_and_self_ips_in_one_transaction_and_restore() {
        use netgw_models::plan::l3::{L3Context, L3Interface, plan_l3};
        use netgw_models::plan::lag::{Lag, plan_lags};
        let pre = state();
        let o = pre.observed();
        let mut p = make_plan(&pre, json!([]), json!([]), Policy::Merge);
        let lags: Vec<Lag> =
            serde_json::from_value(json!([{"name": "lag1", "links": ["1.1", "1.2"],
            "lacp": "passive", "mode": "trunk", "trunk_vlans": "10,20"}]))
            .unwrap();
        let rules = PlanRules::default();
        plan_lags(&mut p, &lags, &[], Policy::Merge, &rules);
        let l3: Vec<L3Interface> = serde_json::from_value(
            json!([{"name": "Vlan10", "ipv4": ["10.0.10.1/24"], "ipv6": ["2001:db8:10::1/64"]}]),
        )
        .unwrap();
        let cx = L3Context {
            desired_vlans: &[],
            observed_vlans: &o.vlans,
            observed_links: &o.links,
        };
        plan_l3(&mut p, &l3, &[], Policy::Merge, &cx);
        let r = render_plan(&p, &pre).unwrap();
        assert_eq!(
            lines(&r),
            [
                r#"POST /mgmt/tm/net/trunk {"name":"lag1","lacp":"enabled","lacpMode":"passive"}"#,
                r#"PATCH /mgmt/tm/net/vlan/~Common~web {"interfaces":[{"name":"1.3","tagged":true},{"name":"lag1","tagged":true}]}"#,
                r#"PATCH /mgmt/tm/net/vlan/~Common~db {"interfaces":[{"name":"1.3","tagged":true},{"name":"lag1","tagged":true}]}"#,
                r#"PATCH /mgmt/tm/net/trunk/lag1 {"interfaces":["1.1","1.2"]}"#,
                r#"POST /mgmt/tm/net/self {"name":"self-10-10.0.10.1","partition":"Common","address":"10.0.10.1/24","vlan":"/Common/web","trafficGroup":"/Common/traffic-group-local-only","allowService":"none"}"#,
                r#"POST /mgmt/tm/net/self {"name":"self-10-2001_db8_10__1","partition":"Common","address":"2001:db8:10::1/64","vlan":"/Common/web","trafficGroup":"/Common/traffic-group-local-only","allowService":"none"}"#,
            ],
            "1.1 leaves VLAN web before it joins the trunk"
        );
        // The device after the commit, and the restore that takes it back.
        let mut now = pre.clone();
        now.vlans = vlan::parse_vlans(&json!({"items": [
            {"name": "web", "fullPath": "/Common/web", "tag": 10, "interfacesReference": {"items": [
                {"name": "1.3", "tagged": true}, {"name": "lag1", "tagged": true}]}},
            {"name": "db", "fullPath": "/Common/db", "tag": 20, "interfacesReference": {"items": [
                {"name": "1.3", "tagged": true}, {"name": "lag1", "tagged": true}]}},
            {"name": "old", "fullPath": "/Common/old", "tag": 30, "description": "x", "interfacesReference": {"items": []}}
        ]}));
        now.trunks = lag::parse_trunks(
            &json!({"items": [{"name": "lag1", "interfaces": ["1.1", "1.2"],
            "lacp": "enabled", "lacpMode": "passive"}]}),
        );
        now.selfs = Some(lag::parse_selfs(&json!({"items": [
            {"name": "self-10-10.0.10.1", "fullPath": "/Common/self-10-10.0.10.1", "address": "10.0.10.1/24", "vlan": "/Common/web"},
            {"name": "self-10-2001_db8_10__1", "fullPath": "/Common/self-10-2001_db8_10__1", "address": "2001:db8:10::1/64", "vlan": "/Common/web"}
        ]})));
        let back: Vec<String> = render_restore(&pre, &now, &r)
            .unwrap()
            .iter()
            .map(RestOp::render)
            .collect();
        assert_eq!(
            back,
            [
                "DELETE /mgmt/tm/net/self/~Common~self-10-10.0.10.1",
                "DELETE /mgmt/tm/net/self/~Common~self-10-2001_db8_10__1",
                r#"PATCH /mgmt/tm/net/trunk/lag1 {"interfaces":[]}"#,
                r#"PATCH /mgmt/tm/net/vlan/~Common~db {"interfaces":[{"name":"1.3","tagged":true}]}"#,
                r#"PATCH /mgmt/tm/net/vlan/~Common~web {"interfaces":[{"name":"1.1","untagged":true},{"name":"1.3","tagged":true}]}"#,
                "DELETE /mgmt/tm/net/trunk/lag1",
            ]
        );
        // Limits are refused before anything is sent.
        let mut bad = p.clone();
        bad.lags[0].after.as_mut().unwrap().minimum_links = Some(1);
        assert!(
            render_plan(&bad, &pre)
                .unwrap_err()
                .to_string()
                .contains("in lag lag1")
        );
        let mut bad = p.clone();
        bad.l3[0].after.as_mut().unwrap().ipv4 = Some(vec![
            "10.0.10.9/24".parse().unwrap(),
            "10.0.11.1/24".parse().unwrap(),
        ]);
        assert!(render_plan(&bad, &pre).is_ok());
        bad.l3[0].after.as_mut().unwrap().ipv4 = Some(vec![
            "10.0.11.1/24".parse().unwrap(),
            "10.0.10.9/24".parse().unwrap(),
        ]);
        assert!(
            render_plan(&bad, &pre)
                .unwrap_err()
                .to_string()
                .contains("ascending")
        );
    }
}
