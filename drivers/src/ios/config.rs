//! Pure pieces of applying a plan on IOS: the configuration lines of a plan, and the exact inverse
//! that takes the device back to a recorded pre-state.
//!
//! IOS has no candidate configuration: lines take effect one by one. So `stage` records the pre-state
//! ([`DeviceState`]: `show vlan brief` + the interface stanzas of `show running-config`), and any
//! failure (or `rollback`) re-reads the device and sends [`render_revert`]: for every VLAN and interface
//! the plan touched, the lines that put back what the pre-state had, `no` forms where it had nothing.
//! Comparing with what the device has *now* makes the inverse exact for a half-applied change and
//! empty for a device that never changed.

use std::collections::{BTreeMap, BTreeSet};

use netgw_models::plan::{LinkChange, Plan, Step};
use netgw_models::resource::{Link, Vlan, VlanId};

use super::RenderError;
use super::link::{IfConfig, render_link_change, render_restore};
use super::vlan::{VlanRow, render_vlan_change, render_vlan_restore, vlans_from_rows};
use crate::driver::Observed;

/// What the device has, as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceState {
    /// VLAN id -> name (`show vlan brief`).
    pub vlans: BTreeMap<VlanId, String>,
    /// Interface stanzas of the running configuration, by name.
    pub interfaces: BTreeMap<String, IfConfig>,
}

impl DeviceState {
    pub fn new(rows: &[VlanRow], ifs: Vec<IfConfig>) -> Self {
        DeviceState {
            vlans: rows.iter().map(|r| (r.id, r.name.clone())).collect(),
            interfaces: ifs.into_iter().map(|c| (c.name.clone(), c)).collect(),
        }
    }

    /// VLANs and links as the planner sees them; `mtu` filled from `show interfaces` where the
    /// running configuration leaves it at the default.
    pub fn observed(&self, rows: &[VlanRow], mtu: &BTreeMap<String, u32>) -> Observed {
        let vlans: Vec<Vlan> = vlans_from_rows(rows);
        let links: Vec<Link> = self
            .interfaces
            .values()
            .map(|c| {
                let mut l = c.to_link();
                if l.mtu.is_none() {
                    l.mtu = mtu.get(&c.name).copied();
                }
                l
            })
            .collect();
        Observed { vlans, links }
    }
}

/// Every configuration line of a plan: VLANs created or renamed first (links may refer to them), then
/// links, then VLANs deleted. `dot1q`: ports that need `switchport trunk encapsulation dot1q` before
/// becoming trunks (IOS on ISL-capable platforms; empty elsewhere).
pub fn render_plan(p: &Plan, dot1q: &BTreeSet<String>) -> Result<Vec<String>, RenderError> {
    render_plan_with(p, dot1q, &crate::lag_cli::IOS)
}

/// [`render_plan`] in the given aggregate and address syntax (NX-OS shares the rest of IOS').
pub fn render_plan_with(
    p: &Plan,
    dot1q: &BTreeSet<String>,
    syn: &crate::lag_cli::Syntax,
) -> Result<Vec<String>, RenderError> {
    let link = |c: &LinkChange| render_link_change(c, dot1q.contains(&c.after.name));
    let mut out = Vec::new();
    for step in p.steps() {
        match step {
            Step::VlanUpsert(c) | Step::VlanDelete(c) => out.extend(render_vlan_change(c)?),
            Step::Link(c) => out.extend(link(c)?),
            other => {
                if let Some(lines) = crate::lag_cli::render_step(syn, &other, &link) {
                    out.extend(lines?);
                }
            }
        }
    }
    check_lines(&out)?;
    Ok(out)
}

/// The lines that take what `applied` touched from `now` back to `pre`: VLANs restored (recreated or
/// renamed back) first, then interfaces, then VLANs the change created removed.
pub fn render_revert(
    applied: &Plan,
    pre: &DeviceState,
    now: &DeviceState,
) -> Result<Vec<String>, RenderError> {
    let mut head = Vec::new();
    let mut tail = Vec::new();
    for c in &applied.vlans {
        match (pre.vlans.get(&c.id), now.vlans.get(&c.id)) {
            (Some(before), Some(current)) if before == current => {}
            (Some(before), _) => head.extend(render_vlan_restore(c.id, Some(before))?),
            (None, Some(_)) => tail.push(format!("no vlan {}", c.id)),
            (None, None) => {}
        }
    }
    let mut body = Vec::new();
    for c in &applied.links {
        let name = &c.after.name;
        if let (Some(p), Some(n)) = (pre.interfaces.get(name), now.interfaces.get(name)) {
            body.extend(render_restore(p, n)?);
        }
    }
    let mut out = head;
    out.extend(body);
    out.extend(tail);
    check_lines(&out)?;
    Ok(out)
}

/// The last guard before sending: one command per line, nothing a CLI would read as a second command,
/// help or a pipe.
pub fn check_lines(lines: &[String]) -> Result<(), RenderError> {
    crate::driver::check_lines(lines, &[('|', "contains '|'"), ('?', "contains '?'")])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ios::link::parse_running_config_interfaces;
    use crate::ios::vlan::{parse_show_vlan_brief, reserved_vlans};
    use netgw_models::plan::{PlanRules, Policy, plan};
    use serde_json::{Value, json};

    const VLANS: &str = "VLAN Name                             Status    Ports\n---- -------------------------------- --------- -------------------------------\n1    default                          active    Fa0/1\n20   db                               active\n30   tmp                              active\n";
    const RUN: &str = "interface FastEthernet0/1\n switchport trunk allowed vlan 20,30\n switchport mode trunk\n!\ninterface FastEthernet0/2\n!\nend\n";

    fn state(vlans: &str, run: &str) -> (DeviceState, Observed) {
        let rows = parse_show_vlan_brief(vlans);
        let st = DeviceState::new(&rows, parse_running_config_interfaces(run));
        let obs = st.observed(&rows, &BTreeMap::new());
        (st, obs)
    }

    fn rules() -> PlanRules {
        PlanRules {
            reserved_vlans: reserved_vlans(),
            default_native_vlan: VlanId::new(1).ok(),
        }
    }

    fn v<T: serde::de::DeserializeOwned>(j: Value) -> T {
        serde_json::from_value(j).unwrap()
    }

    #[test]
    fn order_and_revert() {
        let (pre, obs) = state(VLANS, RUN);
        let p = plan(
            &v::<Vec<Vlan>>(json!([{"id": 10, "name": "web"}, {"id": 20, "name": "database"}])),
            &obs.vlans,
            Policy::Purge,
            &v::<Vec<Link>>(json!([{"name": "FastEthernet0/1", "trunk_vlans": "10"},
                                    {"name": "FastEthernet0/2", "mode": "access", "access_vlan": 10, "description": "srv"}])),
            &obs.links,
            Policy::Replace,
            &rules(),
        );
        let lines = render_plan(&p, &BTreeSet::new()).unwrap();
        assert_eq!(
            lines,
            [
                "vlan 10",
                "name web",
                "exit",
                "vlan 20",
                "name database",
                "exit",
                "interface FastEthernet0/1",
                "switchport trunk allowed vlan 10",
                "exit",
                "interface FastEthernet0/2",
                "description srv",
                "switchport mode access",
                "switchport access vlan 10",
                "exit",
                "no vlan 30"
            ]
        );
        // Fully applied: everything comes back, exactly.
        let now_vlans = "VLAN Name                             Status    Ports\n---- -------------------------------- --------- ----\n1    default                          active\n10   web                              active\n20   database                         active\n";
        let now_run = "interface FastEthernet0/1\n switchport trunk allowed vlan 10\n switchport mode trunk\n!\ninterface FastEthernet0/2\n description srv\n switchport access vlan 10\n switchport mode access\n!\n";
        let (now, _) = state(now_vlans, now_run);
        assert_eq!(
            render_revert(&p, &pre, &now).unwrap(),
            [
                "vlan 20",
                "name db",
                "exit",
                "vlan 30",
                "name tmp",
                "exit",
                "interface FastEthernet0/1",
                "switchport trunk allowed vlan 20,30",
                "exit",
                "interface FastEthernet0/2",
                "no description",
                "no switchport mode",
                "no switchport access vlan",
                "exit",
                "no vlan 10"
            ]
        );
        // Nothing applied: nothing to send.
        assert!(render_revert(&p, &pre, &pre).unwrap().is_empty());
    }

    #[test]
    fn guard_refuses_pipes_and_newlines() {
        assert!(check_lines(&["show run | include x".into()]).is_err());
        assert!(check_lines(&["a\nb".into()]).is_err());
        assert!(check_lines(&["x?".into()]).is_err());
        assert!(check_lines(&["vlan 10".into()]).is_ok());
    }
}
