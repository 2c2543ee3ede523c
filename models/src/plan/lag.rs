//! Link aggregation (LAG): the aggregate, its member links, LACP, and how a change to it is planned.
//!
//! Field names follow Chef's netdev cookbook (`netdev_lag`: `links`, `minimum_links`, `lacp`), with
//! `disable` (netdev's spelling of a static bundle) read as `on`. The aggregate is a link too: its
//! description, enabled, mtu and access/trunk/native VLANs are declared on the LAG, and its members follow
//! them (a member's own switchport settings beside its aggregate's are a compile error naming both).

use super::{Action, Plan, PlanRules, Policy, PropertyChange, ResourcePlan, ResourceRef};
use crate::error::ModelError;
use crate::resource::{
    Link, LinkMode, Presence, VlanId, VlanSet, normalize_interface_name, same_interface,
    validate_interface_name,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fmt;

/// How the members negotiate: LACP active or passive, or a static bundle (`on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LacpMode {
    Active,
    Passive,
    #[serde(alias = "disable", alias = "static")]
    On,
}

impl fmt::Display for LacpMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LacpMode::Active => "active",
            LacpMode::Passive => "passive",
            LacpMode::On => "on",
        })
    }
}

/// Members one aggregate may have (the largest any platform netgw drives takes).
pub const MAX_MEMBERS: usize = 64;

/// A LAG resource. `links` are the members; the other link properties are the aggregate's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lag {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lacp: Option<LacpMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_links: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<LinkMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_vlan: Option<VlanId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trunk_vlans: Option<VlanSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_vlan: Option<VlanId>,
    #[serde(default)]
    pub state: Presence,
}

impl Lag {
    pub fn new(name: impl Into<String>) -> Self {
        Lag {
            name: name.into(),
            links: None,
            lacp: None,
            minimum_links: None,
            description: None,
            enabled: None,
            mtu: None,
            mode: None,
            access_vlan: None,
            trunk_vlans: None,
            native_vlan: None,
            state: Presence::Present,
        }
    }

    /// The aggregate's own settings, as a link (planned and rendered as one).
    pub fn settings(&self) -> Link {
        Link {
            name: self.name.clone(),
            description: self.description.clone(),
            enabled: self.enabled,
            mtu: self.mtu,
            mode: self.mode,
            access_vlan: self.access_vlan,
            trunk_vlans: self.trunk_vlans.clone(),
            native_vlan: self.native_vlan,
        }
    }

    /// Take the aggregate's own settings from `l`.
    pub fn set_settings(&mut self, l: Link) {
        self.description = l.description;
        self.enabled = l.enabled;
        self.mtu = l.mtu;
        self.mode = l.mode;
        self.access_vlan = l.access_vlan;
        self.trunk_vlans = l.trunk_vlans;
        self.native_vlan = l.native_vlan;
    }

    /// The members (none when not managed).
    pub fn members(&self) -> &[String] {
        self.links.as_deref().unwrap_or_default()
    }

    /// The number in the name (`Port-Channel10`, `po10`, `ae0`), which most platforms identify the
    /// aggregate by; `None` for names without one (F5 trunks are named freely).
    pub fn number(&self) -> Option<u32> {
        let digits = self.name.len()
            - self
                .name
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .len();
        if digits == 0 {
            return None;
        }
        self.name[self.name.len() - digits..].parse().ok()
    }

    /// Whether the aggregate declares any switchport setting its members take over.
    pub fn sets_switchport(&self) -> bool {
        self.mode.is_some()
            || self.access_vlan.is_some()
            || self.trunk_vlans.is_some()
            || self.native_vlan.is_some()
    }

    /// The name and member names in their long form, so `Et1` and `Ethernet1` are one member.
    pub fn normalize(&mut self) {
        self.name = normalize_interface_name(&self.name);
        if let Some(ls) = &mut self.links {
            for l in ls.iter_mut() {
                *l = normalize_interface_name(l);
            }
        }
    }

    pub fn validate(&self) -> Result<(), ModelError> {
        let context = format!("lag {}", self.name);
        let bad = |field: &str, reason: String| ModelError::InvalidField {
            context: context.clone(),
            field: field.into(),
            reason,
        };
        validate_interface_name(&self.name).map_err(|e| bad("name", e.to_string()))?;
        if self.state == Presence::Absent {
            let Lag { name, state, .. } = self;
            if *self
                != (Lag {
                    state: *state,
                    ..Lag::new(name.clone())
                })
            {
                return Err(bad(
                    "state",
                    "an absent lag takes no other properties (its members leave it and it is removed)"
                        .into(),
                ));
            }
            return Ok(());
        }
        self.validate_members(&bad)?;
        if let Some(m) = self.minimum_links {
            let most = self.links.as_ref().map_or(MAX_MEMBERS, Vec::len);
            if m == 0 || usize::from(m) > most {
                return Err(bad(
                    "minimum_links",
                    format!("{m} is out of range (1..{most}, the number of links)"),
                ));
            }
        }
        // The aggregate's own settings follow the rules of a link; errors name the lag.
        self.settings().validate().map_err(|e| match e {
            ModelError::InvalidField { field, reason, .. } => bad(&field, reason),
            other => other,
        })
    }

    fn validate_members(&self, bad: &dyn Fn(&str, String) -> ModelError) -> Result<(), ModelError> {
        let members = self.members();
        if members.len() > MAX_MEMBERS {
            return Err(bad(
                "links",
                format!("{} members, more than {MAX_MEMBERS}", members.len()),
            ));
        }
        for (i, m) in members.iter().enumerate() {
            let field = format!("links[{i}]");
            validate_interface_name(m).map_err(|e| bad(&field, e.to_string()))?;
            if same_interface(m, &self.name) {
                return Err(bad(&field, "an aggregate cannot be its own member".into()));
            }
            if let Some(j) = members[..i].iter().position(|o| same_interface(o, m)) {
                return Err(bad(
                    &field,
                    format!("{m} is listed twice (also links[{j}])"),
                ));
            }
            if is_logical(m) {
                return Err(bad(
                    &field,
                    format!("{m} is not a physical port (members are Ethernet ports)"),
                ));
            }
        }
        Ok(())
    }
}

/// Aggregates, VLAN interfaces and loopbacks, which cannot be members of an aggregate.
fn is_logical(name: &str) -> bool {
    let n = normalize_interface_name(name).to_ascii_lowercase();
    [
        "port-channel",
        "vlan",
        "loopback",
        "ae",
        "irb",
        "lo",
        "bond",
        "management",
        "mgmt",
    ]
    .iter()
    .any(|p| {
        n.strip_prefix(p)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    })
}

/// A LAG to create, update or delete. `after` is the full target state; `settings` the change of the
/// aggregate's own link settings (rendered on the aggregate interface).
#[derive(Debug, Clone, PartialEq)]
pub struct LagChange {
    /// The device's name when it has the aggregate, the declared one otherwise.
    pub name: String,
    pub action: Action,
    pub before: Option<Lag>,
    pub after: Option<Lag>,
    pub changes: Vec<PropertyChange>,
    /// Members to bundle into the aggregate, and to take out of it.
    pub links_add: Vec<String>,
    pub links_remove: Vec<String>,
    pub settings: Option<super::LinkChange>,
}

impl LagChange {
    pub fn changed(&self, property: &str) -> bool {
        self.changes.iter().any(|c| c.property == property)
    }
}

fn opt<T: Serialize>(v: &Option<T>) -> Value {
    v.as_ref()
        .map(|x| serde_json::to_value(x).unwrap_or(Value::Null))
        .unwrap_or(Value::Null)
}

/// Plan aggregates into `p`: declared ones created, updated or removed; with `purge`, undeclared ones
/// removed. A member bundled into one aggregate leaves the aggregate the device has it in.
pub fn plan_lags(
    p: &mut Plan,
    desired: &[Lag],
    observed: &[Lag],
    policy: Policy,
    rules: &PlanRules,
) {
    for d in desired {
        let resource = ResourceRef::Lag {
            name: d.name.clone(),
        };
        if let Err(e) = d.validate() {
            p.push_failed(resource, e.to_string());
            continue;
        }
        let mut d = d.clone();
        d.normalize();
        let before = observed.iter().find(|o| same_interface(&o.name, &d.name));
        let change = match (d.state, before) {
            (Presence::Absent, None) => None,
            (Presence::Absent, Some(b)) => Some(lag_delete(b)),
            (Presence::Present, None) => Some(lag_create(&d, rules)),
            (Presence::Present, Some(b)) => lag_update(&d, b, policy != Policy::Merge, rules),
        };
        push_lag_change(p, resource, change);
    }
    if policy == Policy::Purge {
        for b in observed {
            if !desired.iter().any(|d| same_interface(&d.name, &b.name)) {
                let resource = ResourceRef::Lag {
                    name: b.name.clone(),
                };
                push_lag_change(p, resource, Some(lag_delete(b)));
            }
        }
    }
    take_members_from_other_lags(p, observed);
}

fn push_lag_change(p: &mut Plan, resource: ResourceRef, change: Option<LagChange>) {
    p.resources.push(ResourcePlan {
        resource,
        action: change.as_ref().map(|c| c.action),
        changes: change
            .as_ref()
            .map(|c| c.changes.clone())
            .unwrap_or_default(),
        error: None,
    });
    p.lags.extend(change);
}

fn lag_delete(b: &Lag) -> LagChange {
    LagChange {
        name: b.name.clone(),
        action: Action::Delete,
        before: Some(b.clone()),
        after: None,
        changes: vec![PropertyChange {
            property: "state",
            before: json!("present"),
            after: json!("absent"),
        }],
        links_add: vec![],
        links_remove: b.members().to_vec(),
        settings: None,
    }
}

/// A new aggregate: members join with LACP active unless declared otherwise.
fn lag_create(d: &Lag, rules: &PlanRules) -> LagChange {
    let mut after = d.clone();
    after.lacp = Some(d.lacp.unwrap_or(LacpMode::Active));
    let mut changes = vec![PropertyChange {
        property: "state",
        before: json!("absent"),
        after: json!("present"),
    }];
    if !d.members().is_empty() {
        changes.push(PropertyChange {
            property: "links",
            before: json!([]),
            after: json!(d.members()),
        });
    }
    changes.push(PropertyChange {
        property: "lacp",
        before: Value::Null,
        after: json!(after.lacp),
    });
    if d.minimum_links.is_some() {
        changes.push(PropertyChange {
            property: "minimum_links",
            before: Value::Null,
            after: opt(&d.minimum_links),
        });
    }
    let settings = super::link_change(&d.settings(), &Link::new(&d.name), false, rules);
    changes.extend(settings.changes.iter().cloned());
    after.set_settings(settings.after.clone());
    LagChange {
        name: d.name.clone(),
        action: Action::Create,
        before: None,
        after: Some(after),
        changes,
        links_add: d.members().to_vec(),
        links_remove: vec![],
        settings: (!settings.changes.is_empty()).then_some(settings),
    }
}

/// What bringing the observed aggregate `b` to `d` changes; `owned` (replace, purge): the member list
/// is exactly the declared one and undeclared settings go back to their defaults.
fn lag_update(d: &Lag, b: &Lag, owned: bool, rules: &PlanRules) -> Option<LagChange> {
    let mut after = b.clone();
    let mut changes = Vec::new();
    let (mut links_add, mut links_remove) = (Vec::new(), Vec::new());
    if let Some(want) = &d.links {
        links_add = want
            .iter()
            .filter(|m| !b.members().iter().any(|o| same_interface(o, m)))
            .cloned()
            .collect();
        if owned {
            links_remove = b
                .members()
                .iter()
                .filter(|o| !want.iter().any(|m| same_interface(o, m)))
                .cloned()
                .collect();
        }
        let mut target: Vec<String> = b
            .members()
            .iter()
            .filter(|o| !links_remove.contains(o))
            .cloned()
            .collect();
        target.extend(links_add.iter().cloned());
        if !links_add.is_empty() || !links_remove.is_empty() {
            changes.push(PropertyChange {
                property: "links",
                before: json!(b.members()),
                after: json!(target),
            });
        }
        after.links = Some(target);
    }
    if let Some(m) = d.lacp
        && b.lacp != Some(m)
    {
        changes.push(PropertyChange {
            property: "lacp",
            before: opt(&b.lacp),
            after: json!(m),
        });
        after.lacp = Some(m);
    }
    let want_min = d.minimum_links.map(Some).or(owned.then_some(None));
    if let Some(w) = want_min
        && w != b.minimum_links
    {
        changes.push(PropertyChange {
            property: "minimum_links",
            before: opt(&b.minimum_links),
            after: opt(&w),
        });
        after.minimum_links = w;
    }
    let settings = super::link_change(&d.settings(), &b.settings(), owned, rules);
    changes.extend(settings.changes.iter().cloned());
    after.set_settings(settings.after.clone());
    (!changes.is_empty()).then(|| LagChange {
        name: b.name.clone(),
        action: Action::Update,
        before: Some(b.clone()),
        after: Some(after),
        changes,
        links_add,
        links_remove,
        settings: (!settings.changes.is_empty()).then_some(settings),
    })
}

/// A port joining one aggregate leaves the one the device has it in first (no platform bundles a
/// port twice): that aggregate gets an update taking the port out, or its planned change does.
fn take_members_from_other_lags(p: &mut Plan, observed: &[Lag]) {
    let joins: Vec<(String, String)> = p
        .lags
        .iter()
        .flat_map(|c| c.links_add.iter().map(|m| (c.name.clone(), m.clone())))
        .collect();
    for (into, member) in joins {
        let Some(from) = observed.iter().find(|o| {
            !same_interface(&o.name, &into)
                && o.members().iter().any(|m| same_interface(m, &member))
        }) else {
            continue;
        };
        let leaving = |c: &LagChange| c.links_remove.iter().any(|m| same_interface(m, &member));
        match p
            .lags
            .iter_mut()
            .find(|c| same_interface(&c.name, &from.name))
        {
            Some(c) if leaving(c) => {}
            Some(c) => c.links_remove.push(member.clone()),
            None => {
                let mut after = from.clone();
                after.links = Some(
                    from.members()
                        .iter()
                        .filter(|m| !same_interface(m, &member))
                        .cloned()
                        .collect(),
                );
                let change = LagChange {
                    name: from.name.clone(),
                    action: Action::Update,
                    before: Some(from.clone()),
                    changes: vec![PropertyChange {
                        property: "links",
                        before: json!(from.members()),
                        after: json!(after.members()),
                    }],
                    after: Some(after),
                    links_add: vec![],
                    links_remove: vec![member.clone()],
                    settings: None,
                };
                let resource = ResourceRef::Lag {
                    name: from.name.clone(),
                };
                push_lag_change(p, resource, Some(change));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Step, plan};

    fn lags(v: Value) -> Vec<Lag> {
        serde_json::from_value(v).unwrap()
    }
    fn rules() -> PlanRules {
        PlanRules {
            reserved_vlans: VlanSet::parse("1").unwrap(),
            default_native_vlan: VlanId::new(1).ok(),
        }
    }
    fn planned(d: &[Lag], o: &[Lag], policy: Policy) -> Plan {
        let mut p = plan(&[], &[], Policy::Merge, &[], &[], Policy::Merge, &rules());
        plan_lags(&mut p, d, o, policy, &rules());
        p
    }

    #[test]
    fn chef_netdev_fields_and_validation_errors_name_the_field() {
        let l: Lag = serde_json::from_value(json!({
            "name": "Port-Channel10", "links": ["Et1", "Ethernet2"], "lacp": "disable", "minimum_links": 2
        }))
        .unwrap();
        assert_eq!(
            l.lacp,
            Some(LacpMode::On),
            "netdev's `disable` is a static bundle"
        );
        assert_eq!(l.number(), Some(10));
        assert!(l.validate().is_ok());
        let cases = [
            (json!({"name": "Po1", "links": ["Et1", "et1"]}), "links[1]"),
            (
                json!({"name": "Po1", "links": ["Et1"], "minimum_links": 2}),
                "minimum_links",
            ),
            (json!({"name": "Po1", "links": ["Po1"]}), "links[0]"),
            (json!({"name": "Po1", "links": ["Vlan10"]}), "links[0]"),
            (json!({"name": "Po1", "links": ["Et1;reload"]}), "links[0]"),
            (
                json!({"name": "Po1", "mode": "access", "trunk_vlans": "10"}),
                "mode",
            ),
            (json!({"name": "Po1", "mtu": 20}), "mtu"),
            (
                json!({"name": "Po1", "state": "absent", "links": ["Et1"]}),
                "state",
            ),
        ];
        for (v, field) in cases {
            let e = serde_json::from_value::<Lag>(v.clone())
                .unwrap()
                .validate()
                .unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains("lag Po1") && text.contains(&format!("field {field:?}")),
                "{v}: {text}"
            );
        }
        assert!(serde_json::from_value::<Lag>(json!({"name": "Po1", "lacp": "fast"})).is_err());
        assert!(serde_json::from_value::<Lag>(json!({"name": "Po1", "members": []})).is_err());
    }

    #[test]
    fn create_bundles_members_with_lacp_active_and_the_aggregate_settings() {
        let d = lags(
            json!([{"name": "Port-Channel10", "links": ["Et1", "Et2"], "mode": "trunk",
            "trunk_vlans": "10,20", "description": "to dist1"}]),
        );
        let p = planned(&d, &[], Policy::Merge);
        let c = &p.lags[0];
        assert_eq!(c.action, Action::Create);
        assert_eq!(c.links_add, ["Ethernet1", "Ethernet2"]);
        assert_eq!(c.after.as_ref().unwrap().lacp, Some(LacpMode::Active));
        let s = c.settings.as_ref().unwrap();
        assert_eq!(
            s.after.trunk_vlans.as_ref().unwrap().to_range_string(),
            "10,20"
        );
        assert!(
            s.trunk_replace,
            "a new aggregate's allowed list is exactly the declared one"
        );
        assert_eq!(p.resources[0].action, Some(Action::Create));
    }

    #[test]
    fn merge_adds_members_replace_owns_them_purge_removes_undeclared() {
        let o = lags(json!([
            {"name": "Port-Channel10", "links": ["Ethernet1", "Ethernet3"], "lacp": "active", "enabled": true},
            {"name": "Port-Channel20", "links": ["Ethernet5"], "lacp": "on", "enabled": true}
        ]));
        let d = lags(json!([{"name": "Po10", "links": ["Et1", "Et2"]}]));
        let m = planned(&d, &o, Policy::Merge);
        assert_eq!(
            (m.lags[0].links_add.clone(), m.lags[0].links_remove.clone()),
            (vec!["Ethernet2".to_owned()], vec![])
        );
        assert_eq!(
            m.lags[0].name, "Port-Channel10",
            "the device's name for the aggregate"
        );
        assert_eq!(m.lags.len(), 1, "merge leaves Port-Channel20 alone");
        let r = planned(&d, &o, Policy::Replace);
        assert_eq!(r.lags[0].links_remove, ["Ethernet3"]);
        assert_eq!(r.lags.len(), 1);
        let pg = planned(&d, &o, Policy::Purge);
        let del = pg.lags.iter().find(|c| c.name == "Port-Channel20").unwrap();
        assert_eq!(
            (del.action, del.links_remove.clone()),
            (Action::Delete, vec!["Ethernet5".into()])
        );
        let applied: Vec<Lag> = pg.lags.iter().filter_map(|c| c.after.clone()).collect();
        assert!(
            planned(&d, &applied, Policy::Purge).is_empty(),
            "second run up to date"
        );
    }

    #[test]
    fn lacp_and_min_links_change_and_second_run_is_empty() {
        let o = lags(
            json!([{"name": "Port-Channel10", "links": ["Ethernet1"], "lacp": "passive",
            "minimum_links": 1, "enabled": true}]),
        );
        let d = lags(json!([{"name": "Port-Channel10", "lacp": "active", "mtu": 9000}]));
        let p = planned(&d, &o, Policy::Merge);
        let props: Vec<&str> = p.lags[0].changes.iter().map(|c| c.property).collect();
        assert_eq!(props, ["lacp", "mtu"]);
        let p = planned(&d, &o, Policy::Replace);
        assert!(
            p.lags[0].changed("minimum_links"),
            "replace takes min links back to the default"
        );
        let applied = vec![p.lags[0].after.clone().unwrap()];
        assert!(planned(&d, &applied, Policy::Replace).is_empty());
    }

    /// An aggregate the device reports no admin state for (a BIG-IP trunk: `net trunk` has no
    /// enabled/disabled) is up to date under `replace` too when it is as declared: `replace` has no
    /// default to take a missing setting back to, and the journal's exact inverse plans with it. A
    /// declared `enabled` is still compared, and a trunk with an admin state still defaults to true.
    #[test]
    fn replace_leaves_the_admin_state_of_an_aggregate_without_one_alone() {
        let trunk = json!({"name": "lag3", "links": ["1.5", "1.6"], "lacp": "on",
            "mode": "trunk", "trunk_vlans": "13"});
        let o = lags(json!([trunk]));
        let d = lags(json!([trunk]));
        // BIG-IP's rules: no built-in VLAN, no default native VLAN.
        let f5 = PlanRules::default();
        let planned = |d: &[Lag], policy| {
            let mut p = plan(&[], &[], Policy::Merge, &[], &[], Policy::Merge, &f5);
            plan_lags(&mut p, d, &o, policy, &f5);
            p
        };
        for policy in [Policy::Merge, Policy::Replace, Policy::Purge] {
            let p = planned(&d, policy);
            assert!(p.is_empty(), "{policy:?}: {:?}", p.lags);
        }
        let declared = lags(json!([{"name": "lag3", "enabled": true}]));
        assert!(planned(&declared, Policy::Replace).lags[0].changed("enabled"));
        let shut =
            lags(json!([{"name": "Port-Channel1", "links": ["Ethernet1"], "enabled": false}]));
        let p = self::planned(
            &lags(json!([{"name": "Port-Channel1", "links": ["Ethernet1"]}])),
            &shut,
            Policy::Replace,
        );
        assert!(
            p.lags[0].changed("enabled"),
            "an admin state reported: enabled by default"
        );
    }

    #[test]
    fn a_port_moving_between_aggregates_leaves_the_old_one_first() {
        let o = lags(
            json!([{"name": "Port-Channel1", "links": ["Ethernet1", "Ethernet2"], "lacp": "active"}]),
        );
        let d = lags(json!([{"name": "Port-Channel2", "links": ["Ethernet2"]}]));
        let p = planned(&d, &o, Policy::Merge);
        let old = p.lags.iter().find(|c| c.name == "Port-Channel1").unwrap();
        assert_eq!(old.links_remove, ["Ethernet2"]);
        assert_eq!(old.after.as_ref().unwrap().members(), ["Ethernet1"]);
        let order: Vec<String> = p.steps().iter().map(Step::to_string).collect();
        assert_eq!(
            order,
            [
                "members leave lag[Port-Channel1]",
                "lag[Port-channel2]",
                "members join lag[Port-channel2]",
            ]
        );
    }

    #[test]
    fn absent_aggregates_lose_their_members_before_they_go() {
        let o = lags(json!([{"name": "Port-Channel1", "links": ["Ethernet1"], "lacp": "on"}]));
        let d = lags(
            json!([{"name": "Port-Channel1", "state": "absent"}, {"name": "Po9", "state": "absent"}]),
        );
        let p = planned(&d, &o, Policy::Merge);
        let order: Vec<String> = p.steps().iter().map(Step::to_string).collect();
        assert_eq!(
            order,
            [
                "members leave lag[Port-Channel1]",
                "delete lag[Port-Channel1]"
            ]
        );
        assert_eq!(
            p.resources[1].action, None,
            "an absent aggregate the device lacks is up to date"
        );
    }
}
