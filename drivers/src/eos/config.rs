//! Pure pieces of applying a plan on EOS: the configuration lines of a plan, the command lists of a
//! configuration session (stage / diff / commit / confirm / abort), and the plan that takes a device back
//! to a recorded pre-state.
//!
//! With sessions (`configure session NAME`, EOS 4.x):
//! ```text
//!   stage:   configure session NAME, <lines>, show session-config diffs, end      (nothing active yet)
//!   commit:  configure session NAME commit timer HH:MM:SS      (confirmed: EOS reverts by itself)
//!            configure session NAME commit                     (without a commit timer)
//!   confirm: configure session NAME commit                     (ends the timer)
//!   abort:   configure session NAME abort                      (discard, or roll back a timed commit)
//! ```
//! Without sessions the lines go out plainly (`configure`, lines, `end`) and rollback re-reads the
//! device and applies [`revert_plan`]: the pre-state of every resource the plan touched.

use std::time::Duration;

use netgw_models::plan::{Plan, PlanRules, Policy, Step, plan};
use netgw_models::resource::{Presence, Vlan};

use super::RenderError;
use crate::driver::Observed;

/// Every configuration line of a plan, in the order of [`Plan::steps`]: VLANs created or renamed
/// first (links may refer to them), aggregates before their members join, links, addresses, then
/// VLANs deleted.
pub fn render_plan(p: &Plan) -> Result<Vec<String>, RenderError> {
    let mut out = Vec::new();
    for step in p.steps() {
        match step {
            Step::VlanUpsert(c) | Step::VlanDelete(c) => {
                out.extend(super::vlan::render_vlan_change(c)?)
            }
            Step::Link(c) => out.extend(super::link::render_link_change(c)?),
            other => {
                let link = super::link::render_link_change;
                if let Some(lines) =
                    crate::lag_cli::render_step(&crate::lag_cli::EOS, &other, &link)
                {
                    out.extend(lines?);
                }
            }
        }
    }
    Ok(out)
}

/// `HH:MM:SS` for `commit timer`, at least one second and at most 23:59:59.
pub fn commit_timer(d: Duration) -> String {
    let s = d.as_secs().clamp(1, 24 * 3600 - 1);
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// Commands that load `lines` into session `name` and show the device's diff (last but one result).
pub fn session_stage_commands(name: &str, lines: &[String]) -> Vec<String> {
    let mut cmds = vec![format!("configure session {name}")];
    cmds.extend(lines.iter().cloned());
    cmds.push("show session-config diffs".into());
    cmds.push("end".into());
    cmds
}

pub fn session_commit_command(name: &str, timer: Option<Duration>) -> String {
    match timer {
        Some(t) => format!("configure session {name} commit timer {}", commit_timer(t)),
        None => format!("configure session {name} commit"),
    }
}

pub fn session_abort_command(name: &str) -> String {
    format!("configure session {name} abort")
}

/// Commands that apply `lines` directly to the running configuration.
pub fn plain_apply_commands(lines: &[String]) -> Vec<String> {
    let mut cmds = vec!["configure".to_owned()];
    cmds.extend(lines.iter().cloned());
    cmds.push("end".into());
    cmds
}

/// The plan that takes the resources `applied` touched from their state `now` back to `pre`. VLANs that
/// did not exist before are removed, VLANs that did are restored with their name; links get every
/// property back (replace semantics, so a trunk's allowed list is set as a whole). Properties already
/// back at their pre-state produce nothing, so a half-applied change is undone exactly and a device
/// that never changed receives no command.
pub fn revert_plan(applied: &Plan, pre: &Observed, now: &Observed) -> Plan {
    let mut vlans: Vec<Vlan> = Vec::new();
    for c in &applied.vlans {
        match pre.vlans.iter().find(|v| v.id == c.id) {
            Some(v) => vlans.push(Vlan {
                id: v.id,
                name: v.name.clone(),
                description: None,
                state: Presence::Present,
            }),
            None => vlans.push(Vlan {
                id: c.id,
                name: None,
                description: None,
                state: Presence::Absent,
            }),
        }
    }
    let links: Vec<_> = applied
        .links
        .iter()
        .filter_map(|c| {
            pre.links
                .iter()
                .find(|l| l.name == c.after.name)
                .map(super::link::as_desired)
        })
        .collect();
    // No reserved VLANs here: the revert only touches what the plan touched, which already respected them.
    let rules = PlanRules {
        reserved_vlans: Default::default(),
        default_native_vlan: netgw_models::resource::VlanId::new(1).ok(),
    };
    plan(
        &vlans,
        &now.vlans,
        Policy::Merge,
        &links,
        &now.links,
        Policy::Replace,
        &rules,
    )
}

/// The `netgw-` configuration sessions in `show configuration sessions detail` committed under a
/// commit timer and not confirmed yet (state `pendingCommitTimer`): a gateway died between its
/// commit and `configure session NAME commit`. Other names are an operator's and never touched.
pub fn timed_sessions(show_sessions: &serde_json::Value) -> Vec<String> {
    sessions_where(show_sessions, |name, state| {
        name.starts_with("netgw-")
            && matches!(state, Some("pendingCommitTimer" | "pending-commit-timer"))
    })
}

/// The names of the sessions in a `show configuration sessions` answer whose name and state
/// (`state`) pass `keep`.
fn sessions_where(
    show_sessions: &serde_json::Value,
    keep: impl Fn(&str, Option<&str>) -> bool,
) -> Vec<String> {
    let Some(map) = show_sessions
        .get("sessions")
        .and_then(serde_json::Value::as_object)
    else {
        return Vec::new();
    };
    map.iter()
        .filter(|(name, s)| keep(name, s.get("state").and_then(serde_json::Value::as_str)))
        .map(|(name, _)| name.clone())
        .collect()
}

/// The pending `netgw-` configuration sessions in `show configuration sessions` that a killed
/// gateway left behind (stamped over an hour before `now`, as NX-OS checkpoints are judged:
/// [`crate::stamp::abandoned`]). EOS keeps a session pending for up to a day and only five open
/// at once (`maxOpenSessions`), so leftovers would block later runs. Operators' sessions, completed
/// ones and names netgw would not make are never touched.
pub fn abandoned_sessions(show_sessions: &serde_json::Value, now: u64) -> Vec<String> {
    sessions_where(show_sessions, |name, state| {
        state == Some("pending") && crate::stamp::abandoned(name, now)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netgw_models::resource::{Link, VlanSet};
    use serde_json::{Value, json};

    fn vlans(v: Value) -> Vec<Vlan> {
        serde_json::from_value(v).unwrap()
    }
    fn links(v: Value) -> Vec<Link> {
        serde_json::from_value(v).unwrap()
    }
    fn eos_rules() -> PlanRules {
        PlanRules {
            reserved_vlans: VlanSet::parse("1").unwrap(),
            default_native_vlan: netgw_models::resource::VlanId::new(1).ok(),
        }
    }

    #[test]
    fn timer_format() {
        assert_eq!(commit_timer(Duration::from_secs(120)), "00:02:00");
        assert_eq!(commit_timer(Duration::from_secs(3725)), "01:02:05");
        assert_eq!(commit_timer(Duration::ZERO), "00:00:01");
        assert_eq!(commit_timer(Duration::from_secs(10 * 86400)), "23:59:59");
    }

    #[test]
    fn plan_order_vlans_links_deletes() {
        let pre = Observed {
            vlans: vlans(json!([{"id": 1, "name": "default"}, {"id": 30, "name": "old"}])),
            links: links(
                json!([{"name": "Ethernet1", "enabled": true, "mode": "access", "access_vlan": 30}]),
            ),
        };
        let p = plan(
            &vlans(json!([{"id": 10, "name": "web"}])),
            &pre.vlans,
            Policy::Purge,
            &links(json!([{"name": "Ethernet1", "mode": "access", "access_vlan": 10}])),
            &pre.links,
            Policy::Merge,
            &eos_rules(),
        );
        let lines = render_plan(&p).unwrap();
        assert_eq!(
            lines,
            [
                "vlan 10",
                "name web",
                "exit",
                "interface Ethernet1",
                "switchport access vlan 10",
                "exit",
                "no vlan 30"
            ]
        );
    }

    #[test]
    fn revert_undoes_exactly_what_changed() {
        let pre = Observed {
            vlans: vlans(
                json!([{"id": 1, "name": "default"}, {"id": 20, "name": "db"}, {"id": 30, "name": "tmp"}]),
            ),
            links: links(
                json!([{"name": "Ethernet1", "enabled": true, "mtu": 9214, "mode": "trunk", "trunk_vlans": "20,30", "native_vlan": 1}]),
            ),
        };
        let desired_v = vlans(json!([{"id": 10, "name": "web"}, {"id": 20, "name": "database"}]));
        let desired_l = links(json!([{"name": "Ethernet1", "mode": "trunk", "trunk_vlans": "10"}]));
        let p = plan(
            &desired_v,
            &pre.vlans,
            Policy::Purge,
            &desired_l,
            &pre.links,
            Policy::Replace,
            &eos_rules(),
        );
        assert_eq!(p.vlans.len(), 3, "create 10, rename 20, delete 30");

        // Fully applied: everything comes back.
        let mut now = pre.clone();
        now.vlans = vlans(
            json!([{"id": 1, "name": "default"}, {"id": 10, "name": "web"}, {"id": 20, "name": "database"}]),
        );
        now.links[0].trunk_vlans = Some(VlanSet::parse("10").unwrap());
        let r = revert_plan(&p, &pre, &now);
        let lines = render_plan(&r).unwrap();
        assert_eq!(
            lines,
            [
                "vlan 20",
                "name db",
                "exit",
                "vlan 30",
                "name tmp",
                "exit",
                "interface Ethernet1",
                "switchport trunk allowed vlan 20,30",
                "exit",
                "no vlan 10"
            ]
        );

        // Half applied (VLAN 10 created, then the device rejected something): only VLAN 10 goes.
        let mut half = pre.clone();
        half.vlans
            .push(vlans(json!([{"id": 10, "name": "web"}])).remove(0));
        assert_eq!(
            render_plan(&revert_plan(&p, &pre, &half)).unwrap(),
            ["no vlan 10"]
        );

        // Nothing applied: nothing to send.
        assert!(revert_plan(&p, &pre, &pre).is_empty());
    }

    #[test]
    fn session_commands() {
        let lines = vec!["vlan 10".to_owned(), "exit".to_owned()];
        assert_eq!(
            session_stage_commands("netgw-1", &lines),
            [
                "configure session netgw-1",
                "vlan 10",
                "exit",
                "show session-config diffs",
                "end"
            ]
        );
        assert_eq!(
            session_commit_command("netgw-1", Some(Duration::from_secs(90))),
            "configure session netgw-1 commit timer 00:01:30"
        );
        assert_eq!(
            session_commit_command("netgw-1", None),
            "configure session netgw-1 commit"
        );
        assert_eq!(
            session_abort_command("netgw-1"),
            "configure session netgw-1 abort"
        );
        assert_eq!(
            plain_apply_commands(&lines),
            ["configure", "vlan 10", "exit", "end"]
        );
    }

    /// The JSON shape of `show configuration sessions` (pyeapi / aio-eapi samples): only pending
    /// `netgw-` sessions stamped over an hour ago are abandoned.
    #[test]
    fn abandoned_pending_netgw_sessions_only() {
        let v = serde_json::json!({"maxSavedSessions": 1, "maxOpenSessions": 5, "sessions": {
            "jeremy1": {"instances": {}, "state": "pending", "commitUser": "", "description": ""},
            "netgw-5f5e0ff-1a2b-1": {"instances": {}, "state": "pending", "commitUser": "", "description": ""},
            "netgw-5f5e0fe-1a2b-1": {"instances": {}, "state": "completed", "commitUser": "admin", "description": "", "completedTime": 1.0},
            "netgw-5f5e1ff-1a2b-2": {"instances": {}, "state": "pending", "commitUser": "", "description": ""}}});
        let now = 0x5f5e100 + crate::nxos::config::ABANDONED_AFTER_SECS;
        assert_eq!(abandoned_sessions(&v, now), ["netgw-5f5e0ff-1a2b-1"]);
        assert!(abandoned_sessions(&serde_json::json!({}), now).is_empty());
        // A timed commit waiting for its confirmation is not abandoned: recovery settles it.
        let t = serde_json::json!({"sessions": {
            "netgw-5f5e0ff-1a2b-2": {"state": "pendingCommitTimer"},
            "ops-change": {"state": "pendingCommitTimer"},
            "netgw-5f5e0ff-1a2b-3": {"state": "pending"}
        }});
        assert_eq!(timed_sessions(&t), ["netgw-5f5e0ff-1a2b-2"]);
        assert!(
            abandoned_sessions(&t, now)
                .iter()
                .all(|n| !n.ends_with("-2"))
        );
    }
}
