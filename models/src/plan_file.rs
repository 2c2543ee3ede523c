//! A plan as a file: what `netgw converge --why-run --plan-out FILE` writes and `netgw converge
//! --plan FILE` applies (docs/usage.md "Plan, approve, apply").
//!
//! Per node it holds the desired resources the plan was computed for, the observed state it was
//! computed from (every resource the planner read, their digest, and the observed value of each
//! resource the changes depend on) and the changes. Applying first reads the device and compares
//! the values the plan depends on ([`moved`]); when none moved, the plan is rebuilt from the recorded
//! desired and observed state ([`NodePlan::rebuild`]): the planner is pure, so that is the reviewed
//! plan, never a new one computed from the device as it is now.

use crate::compile::Compiled;
use crate::plan::l3::{L3Context, L3Interface, plan_l3};
use crate::plan::lag::{Lag, plan_lags};
use crate::plan::{Plan, PlanRules, Policy, ResourceRef, plan, refuse_used_deletes, vlan_users};
use crate::resource::{Link, Presence, Vlan};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The `format` every plan file names.
pub const FORMAT: &str = "netgw-plan";
/// The newest `format_version` this netgw reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;

/// What the planner reads of a device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub vlans: Vec<Vlan>,
    pub links: Vec<Link>,
    /// Read only for a node that declares aggregates or routed interfaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lags: Vec<Lag>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub l3: Vec<L3Interface>,
}

impl Snapshot {
    /// Every resource as JSON, by `kind[name]` (as [`ResourceRef`] displays it).
    fn by_key(&self) -> BTreeMap<String, Value> {
        fn put<T: Serialize>(out: &mut BTreeMap<String, Value>, r: ResourceRef, v: &T) {
            out.insert(
                r.to_string(),
                serde_json::to_value(v).unwrap_or(Value::Null),
            );
        }
        let mut out = BTreeMap::new();
        for v in &self.vlans {
            put(&mut out, ResourceRef::Vlan { id: v.id }, v);
        }
        for l in &self.links {
            let name = l.name.clone();
            put(&mut out, ResourceRef::Link { name }, l);
        }
        for l in &self.lags {
            let name = l.name.clone();
            put(&mut out, ResourceRef::Lag { name }, l);
        }
        for l in &self.l3 {
            let name = l.name.clone();
            put(&mut out, ResourceRef::L3 { name }, l);
        }
        out
    }
}

/// A node's whole plan: VLANs and links, then aggregates and routed interfaces where the node
/// declares some (only then does `observed` hold them).
pub fn plan_compiled(compiled: &Compiled, observed: &Snapshot, rules: &PlanRules) -> Plan {
    let vlans = compiled.vlan_list();
    let mut the_plan = plan(
        &vlans,
        &observed.vlans,
        compiled.vlan_policy,
        &compiled.link_list(),
        &observed.links,
        compiled.link_policy,
        rules,
    );
    if compiled.lags.is_empty() && compiled.l3.is_empty() {
        return the_plan;
    }
    plan_lags(
        &mut the_plan,
        &compiled.lag_list(),
        &observed.lags,
        compiled.lag_policy,
        rules,
    );
    let lags = compiled
        .lags
        .iter()
        .map(|d| &d.resource)
        .filter(|l| l.state == Presence::Present)
        .flat_map(|l| {
            let uses = [
                ("access_vlan", l.access_vlan),
                ("native_vlan", l.native_vlan),
            ];
            vlan_users("lag", &l.name, uses)
        });
    // A routed VLAN interface is its VLAN's user too: it would route a VLAN that no longer exists.
    let svis = compiled
        .l3
        .iter()
        .map(|d| &d.resource)
        .filter(|l| l.state == Presence::Present)
        .flat_map(|l| vlan_users("l3_interface", &l.name, [("the VLAN it routes", l.vlan())]));
    refuse_used_deletes(&mut the_plan, lags.chain(svis));
    let cx = L3Context {
        desired_vlans: &vlans,
        observed_vlans: &observed.vlans,
        observed_links: &observed.links,
    };
    plan_l3(
        &mut the_plan,
        &compiled.l3_list(),
        &observed.l3,
        compiled.l3_policy,
        &cx,
    );
    the_plan
}

/// The observed resources of the kinds `compiled` purges: any of them, there or not, decides what a
/// purge deletes.
fn purged<'a>(compiled: &Compiled, all: &'a BTreeMap<String, Value>) -> Vec<&'a String> {
    let kinds = [
        ("vlan[", compiled.vlan_policy),
        ("lag[", compiled.lag_policy),
        ("l3_interface[", compiled.l3_policy),
    ];
    all.keys()
        .filter(|k| {
            kinds
                .iter()
                .any(|(prefix, p)| *p == Policy::Purge && k.starts_with(prefix))
        })
        .collect()
}

/// The observed value (`null`: absent) of each resource `p` depends on: every resource it plans,
/// the port under each routed interface, and every resource of a purged kind.
pub fn depends_on(compiled: &Compiled, p: &Plan, observed: &Snapshot) -> BTreeMap<String, Value> {
    let all = observed.by_key();
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for r in &p.resources {
        keys.insert(r.resource.to_string());
        if let ResourceRef::L3 { name } = &r.resource {
            let name = name.clone();
            keys.insert(ResourceRef::Link { name }.to_string());
        }
    }
    keys.extend(purged(compiled, &all).into_iter().cloned());
    keys.into_iter()
        .map(|k| {
            let v = all.get(&k).cloned().unwrap_or(Value::Null);
            (k, v)
        })
        .collect()
}

/// One observed value a plan depends on that is not what it was when the plan was computed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    /// `kind[name]`.
    pub resource: String,
    /// The property, or `exists` when the resource appeared or went.
    pub field: String,
    pub planned_from: Value,
    pub now: Value,
}

impl fmt::Display for Moved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |v: &Value| match v {
            Value::Null => "unset".to_owned(),
            v => v.to_string(),
        };
        if self.field == "exists" {
            let word = |v: &Value| {
                if v == &json!(true) {
                    "present"
                } else {
                    "absent"
                }
            };
            return write!(
                f,
                "{}: planned from {}, now {}",
                self.resource,
                word(&self.planned_from),
                word(&self.now)
            );
        }
        write!(
            f,
            "{} {}: planned from {}, now {}",
            self.resource,
            self.field,
            shown(&self.planned_from),
            shown(&self.now)
        )
    }
}

/// What moved between the values a plan depends on (`recorded`) and the device's state `now`:
/// every property of every depended-on resource, and any resource of a purged kind that appeared.
pub fn moved(
    recorded: &BTreeMap<String, Value>,
    compiled: &Compiled,
    now: &Snapshot,
) -> Vec<Moved> {
    let all = now.by_key();
    let mut keys: BTreeSet<&String> = recorded.keys().collect();
    keys.extend(purged(compiled, &all));
    let mut out = Vec::new();
    for k in keys {
        let then = recorded.get(k).unwrap_or(&Value::Null);
        let now = all.get(k).unwrap_or(&Value::Null);
        field_diff(k, then, now, &mut out);
    }
    out
}

fn field_diff(resource: &str, then: &Value, now: &Value, out: &mut Vec<Moved>) {
    let moved = |field: &str, a: Value, b: Value| Moved {
        resource: resource.to_owned(),
        field: field.to_owned(),
        planned_from: a,
        now: b,
    };
    match (then, now) {
        (Value::Object(a), Value::Object(b)) => {
            let fields: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in fields {
                let (x, y) = (a.get(k), b.get(k));
                if x != y {
                    let v = |o: Option<&Value>| o.cloned().unwrap_or(Value::Null);
                    out.push(moved(k, v(x), v(y)));
                }
            }
        }
        _ if then == now => {}
        _ => out.push(moved(
            "exists",
            json!(!then.is_null()),
            json!(!now.is_null()),
        )),
    }
}

/// A plan file: its format, the run that wrote it, and each planned node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    pub format: String,
    pub format_version: u32,
    /// The why-run that computed the plan.
    pub run_id: String,
    pub created_at: String,
    pub nodes: BTreeMap<String, NodePlan>,
}

impl PlanFile {
    pub fn new(run_id: &str, created_at: &str, nodes: BTreeMap<String, NodePlan>) -> PlanFile {
        PlanFile {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            run_id: run_id.into(),
            created_at: created_at.into(),
            nodes,
        }
    }
}

/// The observed state a node's plan was computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObservedState {
    /// `sha256:HEX` of `resources` as JSON.
    pub digest: String,
    /// The observed value of each resource the changes depend on (`null`: absent), by `kind[name]`.
    pub depends_on: BTreeMap<String, Value>,
    /// Everything the planner read.
    pub resources: Snapshot,
}

/// One node's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodePlan {
    /// The platform and address (`host` or `host:port`) the inventory gave the node.
    pub platform: String,
    pub address: String,
    pub observed: ObservedState,
    /// The resources the node declared, with their recipes and collection policies.
    pub desired: Compiled,
    /// Each planned resource with its action and property changes (`null` action: up to date).
    pub changes: Value,
    /// The device's own diff of the staged change, where the platform shows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_diff: Option<String>,
}

impl NodePlan {
    /// The record of `p`, computed for `desired` from `observed` (whose digest is `digest`).
    pub fn new(
        (platform, address): (&str, &str),
        desired: &Compiled,
        p: &Plan,
        observed: Snapshot,
        digest: String,
    ) -> NodePlan {
        NodePlan {
            platform: platform.into(),
            address: address.into(),
            observed: ObservedState {
                digest,
                depends_on: depends_on(desired, p, &observed),
                resources: observed,
            },
            desired: desired.clone(),
            changes: serde_json::to_value(&p.resources).unwrap_or(Value::Null),
            device_diff: None,
        }
    }

    /// The recorded plan, rebuilt from the recorded desired and observed state; an error when it
    /// does not say exactly the recorded `changes` (a file edited by hand, or written by a netgw
    /// that plans differently).
    pub fn rebuild(&self, rules: &PlanRules) -> Result<Plan, String> {
        let p = plan_compiled(&self.desired, &self.observed.resources, rules);
        let changes = serde_json::to_value(&p.resources).unwrap_or(Value::Null);
        if changes != self.changes {
            return Err(
                "its changes are not what its recorded desired and observed state plan \
                 (edited by hand, or written by a netgw that plans differently); plan again"
                    .into(),
            );
        }
        Ok(p)
    }

    /// Whether applying this plan changes anything (every resource up to date otherwise).
    pub fn changes_anything(&self) -> bool {
        self.changes
            .as_array()
            .is_some_and(|a| a.iter().any(|r| !r["action"].is_null()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::Declared;
    use crate::resource::VlanId;

    fn vlan(id: i64, name: &str) -> Vlan {
        Vlan {
            name: Some(name.into()),
            ..Vlan::new(VlanId::new(id).unwrap())
        }
    }

    fn compiled(vlans: &[Vlan], policy: Policy) -> Compiled {
        Compiled {
            vlans: vlans
                .iter()
                .map(|v| Declared {
                    recipe: "netdev::vlans".into(),
                    resource: v.clone(),
                })
                .collect(),
            vlan_policy: policy,
            ..Compiled::default()
        }
    }

    fn node_plan(c: &Compiled, observed: &Snapshot) -> NodePlan {
        let p = plan_compiled(c, observed, &PlanRules::default());
        NodePlan::new(("eos", "h"), c, &p, observed.clone(), "sha256:x".into())
    }

    #[test]
    fn a_plan_depends_on_what_it_plans_and_is_rebuilt_exactly() {
        let c = compiled(&[vlan(10, "web")], Policy::Merge);
        let observed = Snapshot {
            vlans: vec![vlan(10, "old"), vlan(20, "other")],
            ..Snapshot::default()
        };
        let np = node_plan(&c, &observed);
        assert_eq!(
            np.observed.depends_on.keys().collect::<Vec<_>>(),
            ["vlan[10]"]
        );
        assert!(np.changes_anything());
        let text = serde_json::to_string(&np).unwrap();
        let back: NodePlan = serde_json::from_str(&text).unwrap();
        let rebuilt = back.rebuild(&PlanRules::default()).unwrap();
        assert_eq!(rebuilt, plan_compiled(&c, &observed, &PlanRules::default()));

        // A VLAN the plan does not touch moves: nothing it depends on did.
        let mut now = observed.clone();
        now.vlans[1].name = Some("renamed".into());
        assert!(moved(&np.observed.depends_on, &c, &now).is_empty());
        // The planned VLAN moves: named with its field, both values.
        now.vlans[0].name = Some("changed".into());
        let m = moved(&np.observed.depends_on, &c, &now);
        assert_eq!(
            m.iter().map(ToString::to_string).collect::<Vec<_>>(),
            [r#"vlan[10] name: planned from "old", now "changed""#]
        );
    }

    #[test]
    fn purge_keeps_the_vlans_a_declared_lag_or_routed_vlan_interface_uses() {
        let mut c = compiled(&[vlan(10, "web")], Policy::Purge);
        c.lags.push(Declared {
            recipe: "netdev::lags".into(),
            resource: serde_json::from_value(
                serde_json::json!({"name": "Port-Channel1", "mode": "access", "access_vlan": 20}),
            )
            .unwrap(),
        });
        c.l3.push(Declared {
            recipe: "netdev::l3_interfaces".into(),
            resource: serde_json::from_value(
                serde_json::json!({"name": "Vlan30", "ipv4": ["10.0.30.1/24"]}),
            )
            .unwrap(),
        });
        let observed = Snapshot {
            vlans: vec![
                vlan(10, "web"),
                vlan(20, "users"),
                vlan(30, "mgmt"),
                vlan(40, "old"),
            ],
            ..Snapshot::default()
        };
        let p = plan_compiled(&c, &observed, &PlanRules::default());
        let deleted: Vec<u16> = p.vlan_deletes().map(|v| v.id.get()).collect();
        assert_eq!(deleted, [40]);
        let errors: Vec<String> = p.failures().filter_map(|r| r.error.clone()).collect();
        assert!(
            errors
                .iter()
                .any(|e| e.contains("lag[Port-Channel1] uses it as access_vlan")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("l3_interface[Vlan30] uses it as the VLAN it routes")),
            "{errors:?}"
        );
    }

    #[test]
    fn under_purge_a_vlan_that_appeared_has_moved() {
        let c = compiled(&[vlan(10, "web")], Policy::Purge);
        let observed = Snapshot {
            vlans: vec![vlan(10, "web")],
            ..Snapshot::default()
        };
        let np = node_plan(&c, &observed);
        let mut now = observed.clone();
        now.vlans.push(vlan(30, "new"));
        let m = moved(&np.observed.depends_on, &c, &now);
        assert_eq!(
            m.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["vlan[30]: planned from absent, now present"]
        );
    }

    #[test]
    fn edited_changes_are_refused() {
        let c = compiled(&[vlan(10, "web")], Policy::Merge);
        let observed = Snapshot::default();
        let mut np = node_plan(&c, &observed);
        np.changes[0]["changes"][0]["after"] = json!("evil");
        let e = np.rebuild(&PlanRules::default()).unwrap_err();
        assert!(e.contains("plan again"), "{e}");
    }
}
