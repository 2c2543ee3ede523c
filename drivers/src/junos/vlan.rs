//! VLANs: read from the configuration (`vlans` or `bridge-domains`) and from the operational
//! `get-vlan-information` / `get-bridge-instance-information`, rendered as configuration changes.
//!
//! Junos keys VLANs by name; netgw keys them by id. A rename is therefore delete-old-name plus
//! create-new-name with the same `vlan-id`, in the same edit; a VLAN created without a name is called
//! `vlan<ID>`.

use super::config::{JunosConfig, Style};
use super::render::{El, find, text};
use crate::transport::netconf::XmlElement;
use netgw_models::plan::{Action, Plan};
use netgw_models::resource::{Vlan, VlanId};
use std::collections::{BTreeMap, BTreeSet};

/// The VLANs of a configuration that carry a `vlan-id` (netgw's identity), in configuration order.
pub fn parse_vlans(cfg: &JunosConfig) -> Vec<Vlan> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for v in &cfg.vlans {
        let Some(id) = v.id.and_then(|id| VlanId::new(i64::from(id)).ok()) else {
            continue;
        };
        if !seen.insert(id) {
            continue;
        }
        out.push(Vlan {
            id,
            name: Some(v.name.clone()),
            description: v.description.clone(),
            ..Vlan::new(id)
        });
    }
    out
}

/// One VLAN of the operational VLAN table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlanInfo {
    pub name: String,
    /// Member interfaces (`ge-0/0/1.0`), without the `*` that marks active ones.
    pub interfaces: Vec<String>,
}

/// Parse `get-vlan-information` (EX `vlan-information/vlan`, ELS `l2ng-l2ald-vlan-instance-group`) or
/// `get-bridge-instance-information` (MX `l2ald-bridge-instance-group`): tag -> VLAN. The EX default
/// VLAN is untagged and reported with tag 0.
pub fn parse_vlan_information(root: &XmlElement) -> BTreeMap<u16, VlanInfo> {
    let mut out = BTreeMap::new();
    if let Some(info) = find(root, "vlan-information") {
        for v in info.children_named("vlan") {
            let members = |v: &XmlElement| -> Vec<String> {
                v.path(&["vlan-detail", "vlan-member-list"])
                    .map(|l| member_names(l, "vlan-member", Some("vlan-member-interface")))
                    .unwrap_or_default()
            };
            insert_vlan(&mut out, v, ("vlan-name", "vlan-tag"), members);
        }
        for g in info.children_named("l2ng-l2ald-vlan-instance-group") {
            let members = |g: &XmlElement| {
                member_names(
                    g,
                    "l2ng-l2rtb-vlan-member",
                    Some("l2ng-l2rtb-vlan-member-interface"),
                )
            };
            let keys = ("l2ng-l2rtb-vlan-name", "l2ng-l2rtb-vlan-tag");
            insert_vlan(&mut out, g, keys, members);
        }
    }
    if let Some(info) = find(root, "l2ald-bridge-instance-information") {
        for g in info.children_named("l2ald-bridge-instance-group") {
            let members = |g: &XmlElement| member_names(g, "l2rtb-interface-name", None);
            let keys = ("l2rtb-bridging-domain", "l2rtb-bridge-vlan");
            insert_vlan(&mut out, g, keys, members);
        }
    }
    out
}

/// One VLAN of the table: its name and tag under `keys` (passed over when either is missing or
/// the tag is not a number), its members read by `members`.
fn insert_vlan(
    out: &mut BTreeMap<u16, VlanInfo>,
    v: &XmlElement,
    (name_key, tag_key): (&str, &str),
    members: impl Fn(&XmlElement) -> Vec<String>,
) {
    let (Some(name), Some(tag)) = (text(v, name_key), text(v, tag_key)) else {
        return;
    };
    let Ok(tag) = tag.parse::<u16>() else {
        return;
    };
    let interfaces = members(v);
    out.insert(tag, VlanInfo { name, interfaces });
}

/// The interface names of the `member` children of `list` (the text of each one's `inner` child,
/// or its own text), without the `*` that marks active ones; `None` reads as no name.
fn member_names(list: &XmlElement, member: &str, inner: Option<&str>) -> Vec<String> {
    list.children_named(member)
        .filter_map(|m| match inner {
            Some(i) => m.child(i).map(XmlElement::text),
            None => Some(m.text()),
        })
        .filter_map(|s| {
            let t = s.trim().trim_end_matches('*').trim();
            (!t.is_empty() && t != "None").then(|| t.to_string())
        })
        .collect()
}

/// The VLANs of the operational table as resources (tag 0, the untagged default VLAN, has no id).
pub fn vlans_from_information(info: &BTreeMap<u16, VlanInfo>) -> Vec<Vlan> {
    info.iter()
        .filter_map(|(&tag, v)| {
            let id = VlanId::new(i64::from(tag)).ok()?;
            Some(Vlan {
                name: Some(v.name.clone()),
                ..Vlan::new(id)
            })
        })
        .collect()
}

/// Junos VLAN and bridge-domain name rules, on top of the model's common ones: a letter first (a
/// numeric name would read as a VLAN id in `vlan members`), at most 255 characters, and not one of the
/// words `vlan members` gives a meaning to.
pub fn validate_vlan_name(name: &str) -> Option<String> {
    if name.len() > 255 {
        return Some(format!(
            "VLAN name {name:?} is longer than 255 characters (Junos limit)"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Some(format!(
            "VLAN name {name:?} must start with a letter on Junos"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Some(format!(
            "VLAN name {name:?} contains {c:?}; Junos allows letters, digits, '-', '_', '.'"
        ));
    }
    let lower = name.to_ascii_lowercase();
    if matches!(lower.as_str(), "default" | "all" | "none") {
        return Some(format!("VLAN name {name:?} is reserved on Junos"));
    }
    None
}

/// The name netgw gives a VLAN declared without one.
pub fn generated_name(id: VlanId) -> String {
    format!("vlan{id}")
}

fn container(style: Style) -> (&'static str, &'static str) {
    match style {
        Style::Mx => ("bridge-domains", "domain"),
        Style::Ex | Style::Els => ("vlans", "vlan"),
    }
}

/// Two VLANs the rendered configuration would give one name (Junos names VLANs uniquely).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameClash {
    #[error("in VLAN {id}: VLAN {other} would be named {name:?} too")]
    InPlan { name: String, id: u16, other: u16 },
    #[error("in VLAN {id}: the name {name:?} is already used by VLAN {other} on the device")]
    OnDevice {
        name: String,
        id: u16,
        other: String,
    },
}

/// Render the plan's VLAN changes as the `<vlans>` / `<bridge-domains>` element, deletions (including
/// the old names of renamed VLANs) first. `running` supplies the names the device uses now. `None`
/// when there is nothing to change; `Err` when the result would give two VLANs one name.
pub fn render_vlans(
    plan: &Plan,
    running: &JunosConfig,
    style: Style,
) -> Result<Option<El>, NameClash> {
    let (outer, inner) = container(style);
    let mut deletes: Vec<El> = Vec::new();
    let mut upserts: Vec<El> = Vec::new();
    let mut deleted_names: BTreeSet<String> = BTreeSet::new();
    let mut new_names: BTreeMap<String, u16> = BTreeMap::new();
    let mut delete = |name: &str, deletes: &mut Vec<El>| {
        if deleted_names.insert(name.to_string()) {
            deletes.push(
                El::new(inner)
                    .attr("operation", "delete")
                    .child(El::leaf("name", name)),
            );
        }
    };
    for ch in &plan.vlans {
        let id = ch.id.get();
        // The name the device has now: from the configuration, else from the plan's observation.
        let current: Option<String> = running
            .vlan_by_id(id)
            .map(|v| v.name.clone())
            .or_else(|| ch.before.as_ref().and_then(|b| b.name.clone()));
        match ch.action {
            Action::Delete => {
                if let Some(n) = &current {
                    delete(n, &mut deletes);
                }
            }
            Action::Create | Action::Update => {
                let Some(after) = &ch.after else { continue };
                let name = after
                    .name
                    .clone()
                    .or_else(|| current.clone())
                    .unwrap_or_else(|| generated_name(ch.id));
                let renamed = current.as_ref().is_some_and(|c| *c != name);
                if renamed && let Some(c) = &current {
                    delete(c, &mut deletes);
                }
                let mut el = El::new(inner).child(El::leaf("name", &name));
                let fresh = current.is_none() || renamed;
                if fresh || ch.action == Action::Create {
                    el.push(El::leaf("vlan-id", id.to_string()));
                    if let Some(d) = &after.description {
                        el.push(El::leaf("description", d));
                    }
                } else {
                    let had = running.vlan_by_id(id).and_then(|v| v.description.clone());
                    match (&after.description, had) {
                        (Some(d), _) => el.push(El::leaf("description", d)),
                        (None, Some(_)) => el.push(El::delete("description")),
                        (None, None) => {}
                    }
                }
                if let Some(other) = new_names.insert(name.clone(), id) {
                    return Err(NameClash::InPlan { name, id, other });
                }
                upserts.push(el);
            }
        }
    }
    if deletes.is_empty() && upserts.is_empty() {
        return Ok(None);
    }
    // A name the plan gives must not be held by another VLAN the plan leaves in place.
    for (name, id) in &new_names {
        if let Some(v) = running.vlan_by_name(name)
            && v.id != Some(*id)
            && !deleted_names.contains(name)
        {
            let other =
                v.id.map(|i| i.to_string())
                    .unwrap_or_else(|| "without an id".into());
            return Err(NameClash::OnDevice {
                name: name.clone(),
                id: *id,
                other,
            });
        }
    }
    Ok(Some(El::new(outer).children(deletes).children(upserts)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::junos::config::parse_config;
    use crate::transport::netconf::reply::parse_document;
    use netgw_models::plan::{PlanRules, Policy, plan};
    use serde_json::{Value, json};
    use std::path::Path;

    fn real(path: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/conformance/junos")
            .join(path);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// Cross-check with NAPALM's own expected result for the same recorded reply.
    #[test]
    fn operational_vlans_match_napalm_expected_results() {
        for case in ["vlan", "vlan_l2ng", "bridge_domain"] {
            let dir = format!("facts/napalm_{case}");
            let file = if case == "bridge_domain" {
                "get-bridge-instance-information.xml"
            } else {
                "get-vlan-information.xml"
            };
            let doc = parse_document(&real(&format!("{dir}/{file}"))).unwrap();
            let got = parse_vlan_information(&doc);
            let napalm: Value =
                serde_json::from_str(&real(&format!("{dir}/napalm_expected_result.json"))).unwrap();
            let napalm = napalm.as_object().unwrap();
            assert_eq!(got.len(), napalm.len(), "{case}");
            for (tag, v) in napalm {
                let ours = &got[&tag.parse::<u16>().unwrap()];
                assert_eq!(json!(ours.name), v["name"], "{case} {tag}");
                assert_eq!(json!(ours.interfaces), v["interfaces"], "{case} {tag}");
            }
        }
    }

    fn cfg(xml: &str) -> JunosConfig {
        parse_config(&parse_document(xml).unwrap())
    }

    /// Desired VLANs against `observed` under `policy`, no links.
    fn vlan_plan(desired: &[Vlan], observed: &[Vlan], policy: Policy) -> netgw_models::plan::Plan {
        plan(
            desired,
            observed,
            policy,
            &[],
            &[],
            Policy::Merge,
            &PlanRules::default(),
        )
    }

    fn vlans(v: Value) -> Vec<Vlan> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn rename_is_delete_plus_create_and_unnamed_vlans_get_a_name() {
        let running = cfg(
            "<configuration><vlans><vlan><name>old</name><vlan-id>20</vlan-id><description>d</description></vlan><vlan><name>gone</name><vlan-id>30</vlan-id></vlan></vlans></configuration>",
        );
        let observed = parse_vlans(&running);
        let desired = vlans(json!([{"id": 10}, {"id": 20, "name": "new"}]));
        let p = vlan_plan(&desired, &observed, Policy::Purge);
        let el = render_vlans(&p, &running, Style::Els).unwrap().unwrap();
        assert_eq!(
            el.to_xml(),
            "<vlans><vlan operation=\"delete\"><name>old</name></vlan><vlan operation=\"delete\"><name>gone</name></vlan>\
             <vlan><name>vlan10</name><vlan-id>10</vlan-id></vlan>\
             <vlan><name>new</name><vlan-id>20</vlan-id><description>d</description></vlan></vlans>"
        );
        let mx = render_vlans(&p, &running, Style::Mx)
            .unwrap()
            .unwrap()
            .to_xml();
        assert!(
            mx.starts_with(
                "<bridge-domains><domain operation=\"delete\"><name>old</name></domain>"
            ),
            "{mx}"
        );
    }

    #[test]
    fn description_changes_and_name_conflicts() {
        let running = cfg(
            "<configuration><vlans><vlan><name>web</name><vlan-id>10</vlan-id><description>x</description></vlan><vlan><name>db</name><vlan-id>20</vlan-id></vlan></vlans></configuration>",
        );
        let observed = parse_vlans(&running);
        let p = vlan_plan(&vlans(json!([{"id": 10}])), &observed, Policy::Replace);
        let el = render_vlans(&p, &running, Style::Ex).unwrap().unwrap();
        assert_eq!(
            el.to_xml(),
            "<vlans><vlan><name>web</name><description operation=\"delete\"/></vlan></vlans>"
        );
        let p = vlan_plan(
            &vlans(json!([{"id": 10, "name": "db"}])),
            &observed,
            Policy::Merge,
        );
        let e = render_vlans(&p, &running, Style::Ex).unwrap_err();
        assert!(e.to_string().contains("already used by VLAN 20"), "{e}");
        let empty = plan(
            &vlans(json!([{"id": 10, "name": "web"}])),
            &observed,
            Policy::Merge,
            &[],
            &[],
            Policy::Merge,
            &PlanRules::default(),
        );
        assert_eq!(render_vlans(&empty, &running, Style::Ex).unwrap(), None);
    }

    #[test]
    fn junos_name_rules() {
        assert_eq!(validate_vlan_name("web-1.a_b"), None);
        for bad in ["default", "ALL", "none", "1abc", "a b", "a/b"] {
            assert!(validate_vlan_name(bad).is_some(), "{bad}");
        }
        assert!(validate_vlan_name(&"a".repeat(256)).is_some());
    }
}
