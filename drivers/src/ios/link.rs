//! IOS links: the interface stanzas of `show running-config` (what netgw configures, and what rollback
//! restores), `show interfaces switchport` (operational view, used by the conformance suite and
//! NX-OS' text fallback), and the rendering of link changes.
//!
//! The running configuration is the source of truth for observe: IOS prints only non-default lines,
//! so an absent `switchport trunk allowed vlan` means ALL, an absent native VLAN means 1, an absent
//! access VLAN means 1. [`IfConfig`] keeps exactly what the stanza says (`None` = the line is absent),
//! which is what the exact inverse of a change needs; [`IfConfig::to_link`] applies the defaults.

use std::collections::{BTreeMap, BTreeSet};

use netgw_models::plan::{LinkChange, Plan};
use netgw_models::resource::{Link, LinkMode, VlanId, VlanSet, normalize_interface_name};

use super::RenderError;

/// Longest VLAN list put on one `switchport trunk allowed vlan` line; the rest goes out as `add`
/// lines. IOS reads at most one terminal line per command, and NAPALM/Ansible keep lists far shorter.
pub const TRUNK_LIST_CHUNK: usize = 200;

/// The managed lines of one interface stanza, as configured (`None`: the line is absent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IfConfig {
    pub name: String,
    pub description: Option<String>,
    pub shutdown: bool,
    pub mtu: Option<u32>,
    /// `switchport mode access|trunk|...` as written; `no switchport` is [`IfConfig::routed`].
    pub mode: Option<String>,
    pub routed: bool,
    pub access_vlan: Option<VlanId>,
    /// `switchport trunk allowed vlan LIST` with its `add` continuation lines merged.
    pub allowed: Option<VlanSet>,
    pub native_vlan: Option<VlanId>,
    /// `switchport trunk encapsulation dot1q|isl|negotiate` as written (ISL-capable platforms only:
    /// Catalyst 3560/3750/4500/6500, IOL L2). Not part of the link model; kept so a rollback puts it back.
    pub encapsulation: Option<String>,
}

impl IfConfig {
    pub fn new(name: impl Into<String>) -> Self {
        IfConfig {
            name: name.into(),
            ..Default::default()
        }
    }

    /// The link as netgw models it, IOS defaults applied.
    pub fn to_link(&self) -> Link {
        let mut l = Link::new(self.name.clone());
        l.description = self.description.clone();
        l.enabled = Some(!self.shutdown);
        l.mtu = self.mtu;
        let one = VlanId::new(1).ok();
        l.mode = if self.routed {
            Some(LinkMode::Routed)
        } else {
            match self.mode.as_deref() {
                Some("access") => Some(LinkMode::Access),
                Some("trunk") => Some(LinkMode::Trunk),
                _ => None,
            }
        };
        match l.mode {
            Some(LinkMode::Access) => l.access_vlan = self.access_vlan.or(one),
            Some(LinkMode::Trunk) => {
                l.trunk_vlans = Some(self.allowed.clone().unwrap_or_else(VlanSet::all));
                l.native_vlan = self.native_vlan.or(one);
            }
            Some(LinkMode::Routed) => {}
            None => {
                l.access_vlan = self.access_vlan;
                l.trunk_vlans = self.allowed.clone();
                l.native_vlan = self.native_vlan;
            }
        }
        l
    }
}

/// Every `interface X` stanza of a running configuration (or of `show running-config interface X`).
/// Unknown lines are ignored; a malformed VLAN list leaves that property unknown rather than failing.
pub fn parse_running_config_interfaces(text: &str) -> Vec<IfConfig> {
    let mut out: Vec<IfConfig> = Vec::new();
    let mut cur: Option<IfConfig> = None;
    for raw in text.lines() {
        let line = raw.trim_end();
        if let Some(name) = line.strip_prefix("interface ") {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            cur = Some(IfConfig::new(name.trim()));
            continue;
        }
        let Some(c) = cur.as_mut() else { continue };
        if !line.starts_with(' ') {
            // `!`, `end` or the next top-level statement closes the stanza.
            out.push(cur.take().unwrap_or_default());
            continue;
        }
        apply_line(c, line.trim());
    }
    if let Some(c) = cur {
        out.push(c);
    }
    out
}

fn apply_line(c: &mut IfConfig, l: &str) {
    let vid = |s: &str| {
        s.trim()
            .parse::<i64>()
            .ok()
            .and_then(|n| VlanId::new(n).ok())
    };
    if let Some(d) = l.strip_prefix("description ") {
        c.description = Some(d.trim().to_owned());
    } else if l == "shutdown" {
        c.shutdown = true;
    } else if l == "no shutdown" {
        c.shutdown = false;
    } else if let Some(m) = l.strip_prefix("mtu ") {
        c.mtu = m.trim().parse().ok();
    } else if l == "no switchport" {
        c.routed = true;
    } else if l == "switchport" {
        c.routed = false;
    } else if let Some(e) = l.strip_prefix("switchport trunk encapsulation ") {
        c.encapsulation = Some(e.trim().to_owned());
    } else if l == "no switchport trunk encapsulation" {
        c.encapsulation = None;
    } else if let Some(m) = l.strip_prefix("switchport mode ") {
        c.mode = Some(m.trim().to_owned());
    } else if let Some(v) = l.strip_prefix("switchport access vlan ") {
        c.access_vlan = vid(v);
    } else if let Some(v) = l.strip_prefix("switchport trunk native vlan ") {
        c.native_vlan = vid(v);
    } else if let Some(rest) = l.strip_prefix("switchport trunk allowed vlan ") {
        let rest = rest.trim();
        if let Some(more) = rest.strip_prefix("add ") {
            let base = c.allowed.clone().unwrap_or_default();
            c.allowed = VlanSet::parse(more).ok().map(|m| base.union(&m));
        } else if let Some(less) = rest.strip_prefix("remove ") {
            let base = c.allowed.clone().unwrap_or_else(VlanSet::all);
            c.allowed = VlanSet::parse(less).ok().map(|m| base.difference(&m));
        } else if rest.eq_ignore_ascii_case("all") {
            c.allowed = None;
        } else {
            c.allowed = VlanSet::parse(rest).ok();
        }
    }
}

/// One interface of `show interfaces switchport` (IOS) / `show interface switchport` (NX-OS text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Switchport {
    pub name: String,
    pub enabled: bool,
    pub admin_mode: Option<String>,
    pub oper_mode: Option<String>,
    pub access_vlan: Option<VlanId>,
    pub native_vlan: Option<VlanId>,
    pub trunk_vlans: Option<VlanSet>,
    /// `Administrative Trunking Encapsulation`: `negotiate` (the default on ISL-capable platforms, where
    /// `switchport mode trunk` is refused until it is set), `dot1q` or `isl`.
    pub admin_encapsulation: Option<String>,
}

impl Switchport {
    /// Fill a link's switching properties from the operational view.
    pub fn apply_to(&self, l: &mut Link) {
        if !self.enabled {
            l.mode = Some(LinkMode::Routed);
            return;
        }
        let classify = |m: &str| {
            if m.contains("trunk") {
                Some(LinkMode::Trunk)
            } else if m.contains("access") {
                Some(LinkMode::Access)
            } else {
                None
            }
        };
        // The administrative mode when it is static; for `dynamic auto|desirable`, what it operates as.
        let mode = classify(self.admin_mode.as_deref().unwrap_or(""))
            .or_else(|| classify(self.oper_mode.as_deref().unwrap_or("")));
        l.mode = mode;
        match mode {
            Some(LinkMode::Access) => l.access_vlan = self.access_vlan,
            Some(LinkMode::Trunk) => {
                l.trunk_vlans = self.trunk_vlans.clone();
                l.native_vlan = self.native_vlan;
            }
            _ => l.access_vlan = self.access_vlan,
        }
    }
}

/// Parse `show interfaces switchport`. Names are expanded to their long form (`Gi0/1` ->
/// `GigabitEthernet0/1`). VLAN lists may continue on following lines (`Trunking VLANs Enabled:
/// 1-10,20,` then `30-40`).
pub fn parse_show_interfaces_switchport(text: &str) -> Vec<Switchport> {
    let mut out: Vec<Switchport> = Vec::new();
    let mut list_open = false;
    let mut list_text = String::new();
    let finish_list = |sp: &mut Switchport, t: &mut String| {
        if !t.is_empty() {
            sp.trunk_vlans = parse_vlan_field(t);
            t.clear();
        }
    };
    for raw in text.lines() {
        let line = raw.trim();
        if list_open {
            // A continuation is a bare VLAN list.
            if !line.is_empty()
                && line
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ',' || c == '-')
            {
                list_text.push_str(line);
                continue;
            }
            list_open = false;
            if let Some(sp) = out.last_mut() {
                finish_list(sp, &mut list_text);
            }
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "Name" => out.push(Switchport {
                name: normalize_interface_name(value),
                ..Default::default()
            }),
            "Switchport" => {
                if let Some(sp) = out.last_mut() {
                    sp.enabled = value.eq_ignore_ascii_case("enabled");
                }
            }
            "Administrative Mode" => {
                if let Some(sp) = out.last_mut() {
                    sp.admin_mode = Some(value.to_owned());
                }
            }
            "Operational Mode" => {
                if let Some(sp) = out.last_mut() {
                    sp.oper_mode = Some(value.to_owned());
                }
            }
            "Administrative Trunking Encapsulation" => {
                if let Some(sp) = out.last_mut() {
                    sp.admin_encapsulation = Some(value.to_ascii_lowercase());
                }
            }
            "Access Mode VLAN" => {
                if let Some(sp) = out.last_mut() {
                    sp.access_vlan = first_vlan(value);
                }
            }
            "Trunking Native Mode VLAN" => {
                if let Some(sp) = out.last_mut() {
                    sp.native_vlan = first_vlan(value);
                }
            }
            "Trunking VLANs Enabled" | "Trunking VLANs Allowed" => {
                list_text = value.to_owned();
                list_open = value.ends_with(',');
                if !list_open && let Some(sp) = out.last_mut() {
                    finish_list(sp, &mut list_text);
                }
            }
            _ => {}
        }
    }
    if list_open && let Some(sp) = out.last_mut() {
        finish_list(sp, &mut list_text);
    }
    out
}

fn first_vlan(v: &str) -> Option<VlanId> {
    v.split_whitespace()
        .next()?
        .parse::<i64>()
        .ok()
        .and_then(|n| VlanId::new(n).ok())
}

fn parse_vlan_field(v: &str) -> Option<VlanSet> {
    let v = v.trim().trim_end_matches(',');
    if v.eq_ignore_ascii_case("all") {
        return Some(VlanSet::all());
    }
    if v.eq_ignore_ascii_case("none") {
        return Some(VlanSet::new());
    }
    VlanSet::parse(v).ok()
}

/// `switchport trunk allowed vlan` lines setting the list to exactly `set`: one line, then `add`
/// lines when the list is too long for one.
pub fn render_allowed_list(set: &VlanSet) -> Vec<String> {
    if set.is_empty() {
        return vec!["switchport trunk allowed vlan none".into()];
    }
    if *set == VlanSet::all() {
        return vec!["switchport trunk allowed vlan all".into()];
    }
    let mut out = Vec::new();
    for (i, chunk) in set
        .to_range_chunks(TRUNK_LIST_CHUNK)
        .into_iter()
        .enumerate()
    {
        if i == 0 {
            out.push(format!("switchport trunk allowed vlan {chunk}"));
        } else {
            out.push(format!("switchport trunk allowed vlan add {chunk}"));
        }
    }
    out
}

fn render_delta(verb: &str, set: &VlanSet) -> Vec<String> {
    set.to_range_chunks(TRUNK_LIST_CHUNK)
        .into_iter()
        .map(|c| format!("switchport trunk allowed vlan {verb} {c}"))
        .collect()
}

fn description_line(d: &Option<String>) -> Result<String, RenderError> {
    match d {
        None => Ok("no description".into()),
        Some(text) => {
            if text
                .chars()
                .any(|c| c.is_control() || matches!(c, ';' | '|' | '?'))
                || text.trim().is_empty()
            {
                return Err(RenderError {
                    line: format!("description {text}"),
                    reason: "unsafe description",
                });
            }
            Ok(format!("description {text}"))
        }
    }
}

/// The interfaces among `to_trunk` (ports a change turns into trunks) that need `switchport trunk
/// encapsulation dot1q` before `switchport mode trunk`.
///
/// ISL-capable platforms (Catalyst 3560/3750/4500/6500, IOL L2) default a port to `negotiate` and refuse
/// `switchport mode trunk` with `Command rejected: An interface whose trunk encapsulation is "Auto" can
/// not be configured to "trunk" mode.`; dot1q-only platforms (Catalyst 2960/9000) have no such command
/// and report `dot1q`. Decided per port from `show interfaces switchport` (`sps`): `negotiate` needs it,
/// `dot1q` or `isl` (an operator's explicit choice) does not. A port with no encapsulation field (routed,
/// or missing from the output) needs it when the device shows it is ISL-capable: another port reports
/// `negotiate`, or the running configuration has an encapsulation line (`encap_lines`).
pub fn needs_dot1q_encapsulation(
    to_trunk: &[&str],
    sps: &[Switchport],
    encap_lines: bool,
) -> BTreeSet<String> {
    let isl_capable = encap_lines
        || sps
            .iter()
            .any(|s| s.admin_encapsulation.as_deref() == Some("negotiate"));
    to_trunk
        .iter()
        .filter(|name| {
            let want = normalize_interface_name(name);
            match sps
                .iter()
                .find(|s| s.name == want)
                .and_then(|s| s.admin_encapsulation.as_deref())
            {
                Some(e) => e == "negotiate",
                None => isl_capable,
            }
        })
        .map(|n| (*n).to_owned())
        .collect()
}

/// The lines of one link change: `interface X`, the changed properties, `exit`. Trunk lists: the whole
/// list on `replace` (or when the port had no explicit list: IOS' implicit ALL cannot be added to),
/// `add`/`remove` lines on `merge`. `dot1q`: the port needs `switchport trunk encapsulation dot1q`
/// before it can become a trunk ([`needs_dot1q_encapsulation`]).
pub fn render_link_change(c: &LinkChange, dot1q: bool) -> Result<Vec<String>, RenderError> {
    let a = &c.after;
    let mut body: Vec<String> = Vec::new();
    if c.changed("description") {
        body.push(description_line(&a.description)?);
    }
    if c.changed("enabled") {
        body.push(if a.enabled == Some(false) {
            "shutdown".into()
        } else {
            "no shutdown".into()
        });
    }
    if c.changed("mtu")
        && let Some(m) = a.mtu
    {
        body.push(format!("mtu {m}"));
    }
    if c.changed("mode") {
        match a.mode {
            Some(LinkMode::Access) => {
                if c.before.mode == Some(LinkMode::Routed) {
                    body.push("switchport".into());
                }
                body.push("switchport mode access".into());
            }
            Some(LinkMode::Trunk) => {
                if c.before.mode == Some(LinkMode::Routed) {
                    body.push("switchport".into());
                }
                if dot1q {
                    body.push("switchport trunk encapsulation dot1q".into());
                }
                body.push("switchport mode trunk".into());
            }
            Some(LinkMode::Routed) => body.push("no switchport".into()),
            None => {}
        }
    }
    if c.changed("access_vlan")
        && let Some(v) = a.access_vlan
    {
        body.push(format!("switchport access vlan {v}"));
    }
    if c.changed("trunk_vlans")
        && let Some(target) = &a.trunk_vlans
    {
        let explicit_before = c.before.mode == Some(LinkMode::Trunk)
            && c.before
                .trunk_vlans
                .as_ref()
                .is_some_and(|s| *s != VlanSet::all());
        if c.trunk_replace || !explicit_before {
            body.extend(render_allowed_list(target));
        } else {
            body.extend(render_delta("add", &c.trunk_add));
            body.extend(render_delta("remove", &c.trunk_remove));
        }
    }
    if c.changed("native_vlan")
        && let Some(v) = a.native_vlan
    {
        body.push(format!("switchport trunk native vlan {v}"));
    }
    if body.is_empty() {
        return Ok(body);
    }
    let mut out = vec![format!("interface {}", a.name)];
    out.extend(body);
    out.push("exit".into());
    Ok(out)
}

/// The interfaces that `rendered` (a change's lines) gave `switchport trunk encapsulation dot1q`.
/// Staging renders that line only for a port with no encapsulation line, so each of them had none
/// before the change: this is the record of their state before it.
pub fn encapsulation_added(rendered: &[String]) -> BTreeSet<String> {
    let mut cur: Option<&str> = None;
    let mut out = BTreeSet::new();
    for l in rendered.iter().map(|l| l.trim()) {
        if let Some(name) = l.strip_prefix("interface ") {
            cur = Some(name.trim());
        } else if l == "exit" {
            cur = None;
        } else if l == "switchport trunk encapsulation dot1q"
            && let Some(name) = cur
        {
            out.insert(name.to_owned());
        }
    }
    out
}

/// `no switchport trunk encapsulation` for each port of `added` ([`encapsulation_added`]) that holds
/// `dot1q` in `now` and is no trunk once `back` is applied (IOS refuses it on a trunk, so these
/// stanzas go after `back`'s own lines).
pub fn render_encapsulation_undo(
    added: &BTreeSet<String>,
    back: &Plan,
    now: &BTreeMap<String, IfConfig>,
) -> Vec<String> {
    let same = |a: &str, b: &str| normalize_interface_name(a) == normalize_interface_name(b);
    let mut out = Vec::new();
    for name in added {
        let Some(i) = now.values().find(|i| same(&i.name, name)) else {
            continue;
        };
        let trunk_after = back
            .links
            .iter()
            .chain(back.lags.iter().filter_map(|c| c.settings.as_ref()))
            .find(|c| same(&c.after.name, name))
            .and_then(|c| c.after.mode)
            .map_or(i.mode.as_deref() == Some("trunk"), |m| m == LinkMode::Trunk);
        if i.encapsulation.as_deref() == Some("dot1q") && !trunk_after && !i.routed {
            out.push(format!("interface {}", i.name));
            out.push("no switchport trunk encapsulation".into());
            out.push("exit".into());
        }
    }
    out
}

/// The lines that take interface `now` back to `pre`, property by property, using the `no` form where
/// `pre` had no line: the exact inverse of whatever was applied. Empty when nothing differs.
pub fn render_restore(pre: &IfConfig, now: &IfConfig) -> Result<Vec<String>, RenderError> {
    let mut body = Vec::new();
    if pre.routed != now.routed {
        body.push(if pre.routed {
            "no switchport".into()
        } else {
            "switchport".into()
        });
    }
    if pre.description != now.description {
        body.push(description_line(&pre.description)?);
    }
    if pre.shutdown != now.shutdown {
        body.push(if pre.shutdown {
            "shutdown".into()
        } else {
            "no shutdown".into()
        });
    }
    if pre.mtu != now.mtu {
        body.push(match pre.mtu {
            Some(m) => format!("mtu {m}"),
            None => "no mtu".into(),
        });
    }
    // An encapsulation comes back before the mode that needs it (a trunk is refused while it is
    // `negotiate`), and goes away only after the port has left trunk mode.
    let encap_changed = pre.encapsulation != now.encapsulation;
    if encap_changed && let Some(e) = &pre.encapsulation {
        if !matches!(e.as_str(), "dot1q" | "isl" | "negotiate") {
            return Err(RenderError {
                line: format!("switchport trunk encapsulation {e}"),
                reason: "unexpected encapsulation",
            });
        }
        body.push(format!("switchport trunk encapsulation {e}"));
    }
    if pre.mode != now.mode {
        body.push(match &pre.mode {
            Some(m) => {
                if !m
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-')
                {
                    return Err(RenderError {
                        line: format!("switchport mode {m}"),
                        reason: "unexpected mode",
                    });
                }
                format!("switchport mode {m}")
            }
            None => "no switchport mode".into(),
        });
    }
    if encap_changed && pre.encapsulation.is_none() {
        body.push("no switchport trunk encapsulation".into());
    }
    if pre.access_vlan != now.access_vlan {
        body.push(match pre.access_vlan {
            Some(v) => format!("switchport access vlan {v}"),
            None => "no switchport access vlan".into(),
        });
    }
    if pre.allowed != now.allowed {
        match &pre.allowed {
            Some(s) => body.extend(render_allowed_list(s)),
            None => body.push("no switchport trunk allowed vlan".into()),
        }
    }
    if pre.native_vlan != now.native_vlan {
        body.push(match pre.native_vlan {
            Some(v) => format!("switchport trunk native vlan {v}"),
            None => "no switchport trunk native vlan".into(),
        });
    }
    if body.is_empty() {
        return Ok(body);
    }
    let mut out = vec![format!("interface {}", pre.name)];
    out.extend(body);
    out.push("exit".into());
    Ok(out)
}

/// IOS limits on a desired link.
pub fn validate_link(l: &Link) -> Result<(), LinkUnfit> {
    l.validate()?;
    if let Some(m) = l.mtu
        && !(64..=9216).contains(&m)
    {
        return Err(LinkUnfit::Mtu(m));
    }
    Ok(())
}

/// A desired link IOS cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkUnfit {
    #[error(transparent)]
    Model(#[from] netgw_models::error::ModelError),
    #[error("MTU {0} is outside what IOS switches accept (64..9216)")]
    Mtu(u32),
}

#[cfg(test)]
mod tests {
    use super::*;
    use netgw_models::plan::{PlanRules, Policy, plan};
    use serde_json::json;

    const RUN: &str = "Building configuration...\n\nCurrent configuration : 172 bytes\n!\ninterface FastEthernet0/1\n description hello world\n switchport trunk native vlan 10\n switchport trunk allowed vlan 10,20-30\n switchport trunk allowed vlan add 100-110\n switchport mode trunk\n shutdown\n!\ninterface FastEthernet0/2\n switchport access vlan 10\n switchport mode access\n!\ninterface FastEthernet0/3\n!\ninterface Vlan1\n no switchport\n mtu 9000\nend\n";

    fn rules() -> PlanRules {
        PlanRules {
            reserved_vlans: super::super::vlan::reserved_vlans(),
            default_native_vlan: VlanId::new(1).ok(),
        }
    }

    #[test]
    fn stanzas_with_add_continuations_and_defaults() {
        let ifs = parse_running_config_interfaces(RUN);
        assert_eq!(ifs.len(), 4);
        let l1 = ifs[0].to_link();
        assert_eq!(
            serde_json::to_value(&l1).unwrap(),
            json!({"name": "FastEthernet0/1", "description": "hello world", "enabled": false, "mode": "trunk",
                   "trunk_vlans": "10,20-30,100-110", "native_vlan": 10})
        );
        assert_eq!(
            serde_json::to_value(ifs[1].to_link()).unwrap(),
            json!({"name": "FastEthernet0/2", "enabled": true, "mode": "access", "access_vlan": 10})
        );
        assert_eq!(
            serde_json::to_value(ifs[2].to_link()).unwrap(),
            json!({"name": "FastEthernet0/3", "enabled": true})
        );
        assert_eq!(ifs[3].to_link().mode, Some(LinkMode::Routed));
        assert_eq!(ifs[3].mtu, Some(9000));
    }

    #[test]
    fn trunk_merge_adds_replace_sets_whole_list() {
        let pre = parse_running_config_interfaces(RUN);
        let obs: Vec<Link> = pre.iter().map(IfConfig::to_link).collect();
        // The port is shut and declared so (undeclared, it would be brought up too).
        let d: Vec<Link> = serde_json::from_value(
            json!([{"name": "FastEthernet0/1", "trunk_vlans": "10,40", "enabled": false}]),
        )
        .unwrap();
        let p = plan(&[], &[], Policy::Merge, &d, &obs, Policy::Merge, &rules());
        let lines = render_link_change(&p.links[0], false).unwrap();
        assert_eq!(
            lines,
            [
                "interface FastEthernet0/1",
                "switchport trunk allowed vlan add 40",
                "exit"
            ]
        );
        let d: Vec<Link> =
            serde_json::from_value(json!([{"name": "FastEthernet0/1", "trunk_vlans": "10,40"}]))
                .unwrap();
        let p = plan(&[], &[], Policy::Merge, &d, &obs, Policy::Replace, &rules());
        let lines = render_link_change(&p.links[0], false).unwrap();
        assert_eq!(
            lines,
            [
                "interface FastEthernet0/1",
                "no description",
                "no shutdown",
                "switchport trunk allowed vlan 10,40",
                "switchport trunk native vlan 1",
                "exit"
            ]
        );
    }

    #[test]
    fn access_to_trunk_sets_the_whole_list() {
        let obs: Vec<Link> = parse_running_config_interfaces(RUN)
            .iter()
            .map(IfConfig::to_link)
            .collect();
        let d: Vec<Link> =
            serde_json::from_value(json!([{"name": "FastEthernet0/2", "mode": "trunk", "trunk_vlans": "10,20", "native_vlan": 20}]))
                .unwrap();
        let p = plan(&[], &[], Policy::Merge, &d, &obs, Policy::Merge, &rules());
        assert_eq!(
            render_link_change(&p.links[0], false).unwrap(),
            [
                "interface FastEthernet0/2",
                "switchport mode trunk",
                "switchport trunk allowed vlan 10,20",
                "switchport trunk native vlan 20",
                "exit"
            ]
        );
    }

    #[test]
    fn long_lists_split_into_add_lines() {
        let set = VlanSet::parse(
            &(1..=400)
                .step_by(2)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(","),
        )
        .unwrap();
        let lines = render_allowed_list(&set);
        assert!(lines.len() > 1);
        assert!(lines[0].starts_with("switchport trunk allowed vlan 1,"));
        assert!(
            lines[1..]
                .iter()
                .all(|l| l.starts_with("switchport trunk allowed vlan add "))
        );
        assert!(lines.iter().all(|l| l.len() <= TRUNK_LIST_CHUNK + 34));
        let mut back = IfConfig::new("x");
        for l in &lines {
            apply_line(&mut back, l);
        }
        assert_eq!(back.allowed, Some(set));
    }

    #[test]
    fn restore_is_the_exact_inverse() {
        let pre = parse_running_config_interfaces(RUN);
        let mut now = pre[1].clone();
        now.mode = Some("trunk".into());
        now.access_vlan = None;
        now.allowed = VlanSet::parse("10,20").ok();
        now.description = Some("x".into());
        assert_eq!(
            render_restore(&pre[1], &now).unwrap(),
            [
                "interface FastEthernet0/2",
                "no description",
                "switchport mode access",
                "switchport access vlan 10",
                "no switchport trunk allowed vlan",
                "exit"
            ]
        );
        assert!(render_restore(&pre[0], &pre[0]).unwrap().is_empty());
    }

    #[test]
    fn switchport_text() {
        let t = "Name: Gi0/1\nSwitchport: Enabled\nAdministrative Mode: trunk\nOperational Mode: trunk\nAccess Mode VLAN: 1 (default)\nTrunking Native Mode VLAN: 5 (x)\nTrunking VLANs Enabled: 1-10,20,\n     30-40\nPruning VLANs Enabled: 2-1001\n\nName: Gi0/2\nSwitchport: Enabled\nAdministrative Mode: dynamic auto\nOperational Mode: static access\nAccess Mode VLAN: 100 (PLC1)\nTrunking VLANs Enabled: ALL\n";
        let sps = parse_show_interfaces_switchport(t);
        assert_eq!(sps[0].name, "GigabitEthernet0/1");
        assert_eq!(
            sps[0].trunk_vlans.as_ref().unwrap().to_range_string(),
            "1-10,20,30-40"
        );
        assert_eq!(sps[0].native_vlan.map(VlanId::get), Some(5));
        let mut l = Link::new("GigabitEthernet0/2");
        sps[1].apply_to(&mut l);
        assert_eq!(
            (l.mode, l.access_vlan.map(VlanId::get)),
            (Some(LinkMode::Access), Some(100))
        );
    }

    /// A real Catalyst (ntc-templates recording): Gi0/1 is a dot1q trunk, the `dynamic auto` ports
    /// report `negotiate`, so on this ISL-capable switch a port becoming a trunk needs the encapsulation
    /// line first; a routed or unlisted port follows the device.
    #[test]
    fn encapsulation_needed_on_isl_capable_ports_only() {
        let real = include_str!(
            "../../tests/fixtures/conformance/ios/links/ntc_switchport/show_interfaces_switchport.txt"
        );
        let sps = parse_show_interfaces_switchport(real);
        assert_eq!(sps[0].admin_encapsulation.as_deref(), Some("dot1q"));
        assert_eq!(sps[1].admin_encapsulation.as_deref(), Some("negotiate"));
        let got = needs_dot1q_encapsulation(
            &["Gi0/2", "GigabitEthernet0/1", "GigabitEthernet9/9"],
            &sps,
            false,
        );
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            ["Gi0/2", "GigabitEthernet9/9"]
        );
        // A dot1q-only platform (every port says dot1q, no encapsulation lines): nothing to add.
        let dot1q_only = "Name: Gi1/0/1\nSwitchport: Enabled\nAdministrative Mode: static access\nAdministrative Trunking Encapsulation: dot1q\n";
        let sps = parse_show_interfaces_switchport(dot1q_only);
        assert!(needs_dot1q_encapsulation(&["Gi1/0/1", "Gi1/0/2"], &sps, false).is_empty());
        // ...unless the running configuration shows the platform has the command.
        assert_eq!(needs_dot1q_encapsulation(&["Gi1/0/2"], &sps, true).len(), 1);
        // No `show interfaces switchport` answer at all: only the running configuration decides.
        assert!(needs_dot1q_encapsulation(&["Gi1/0/2"], &[], false).is_empty());
    }

    #[test]
    fn encapsulation_rendered_before_trunk_and_undone_after_it() {
        let access =
            "interface Ethernet0/1\n switchport access vlan 10\n switchport mode access\n!\n";
        let obs: Vec<Link> = parse_running_config_interfaces(access)
            .iter()
            .map(IfConfig::to_link)
            .collect();
        let d: Vec<Link> = serde_json::from_value(
            json!([{"name": "Ethernet0/1", "mode": "trunk", "trunk_vlans": "10,20"}]),
        )
        .unwrap();
        let p = plan(&[], &[], Policy::Merge, &d, &obs, Policy::Merge, &rules());
        assert_eq!(
            render_link_change(&p.links[0], true).unwrap(),
            [
                "interface Ethernet0/1",
                "switchport trunk encapsulation dot1q",
                "switchport mode trunk",
                "switchport trunk allowed vlan 10,20",
                "exit"
            ]
        );
        assert!(
            !render_link_change(&p.links[0], false)
                .unwrap()
                .iter()
                .any(|l| l.contains("encapsulation"))
        );
        let pre = &parse_running_config_interfaces(access)[0];
        let now = &parse_running_config_interfaces(
            "interface Ethernet0/1\n switchport trunk encapsulation dot1q\n switchport trunk allowed vlan 10,20\n switchport mode trunk\n!\n",
        )[0];
        assert_eq!(now.encapsulation.as_deref(), Some("dot1q"));
        // Back to access first: IOS refuses to drop the encapsulation of a trunk.
        assert_eq!(
            render_restore(pre, now).unwrap(),
            [
                "interface Ethernet0/1",
                "switchport mode access",
                "no switchport trunk encapsulation",
                "switchport access vlan 10",
                "no switchport trunk allowed vlan",
                "exit"
            ]
        );
        // And the other way: the encapsulation comes back before the trunk mode that needs it.
        let back = render_restore(now, pre).unwrap();
        let enc = back
            .iter()
            .position(|l| l == "switchport trunk encapsulation dot1q");
        let mode = back.iter().position(|l| l == "switchport mode trunk");
        assert!(enc.unwrap() < mode.unwrap(), "{back:?}");
        let mut odd = now.clone();
        odd.encapsulation = Some("dot1q; reload".into());
        assert!(render_restore(&odd, pre).is_err());
    }

    /// The undo of a recorded change takes off the encapsulation it added, and only that: not on a
    /// port the undo leaves a trunk, nor on one the change did not give it.
    #[test]
    fn the_undo_takes_off_only_the_encapsulation_the_change_added() {
        let rendered: Vec<String> = [
            "interface Ethernet0/1",
            "switchport trunk encapsulation dot1q",
            "switchport mode trunk",
            "exit",
            "interface Ethernet0/2",
            "description x",
            "exit",
        ]
        .map(String::from)
        .to_vec();
        let added = encapsulation_added(&rendered);
        assert_eq!(added, BTreeSet::from(["Ethernet0/1".to_owned()]));
        let now: BTreeMap<String, IfConfig> = parse_running_config_interfaces(
            "interface Ethernet0/1\n switchport trunk encapsulation dot1q\n switchport mode trunk\n!\n\
             interface Ethernet0/2\n switchport trunk encapsulation dot1q\n!\n",
        )
        .into_iter()
        .map(|i| (i.name.clone(), i))
        .collect();
        // Still a trunk after the undo: IOS would refuse the line, and the port needs it.
        assert!(render_encapsulation_undo(&added, &Plan::default(), &now).is_empty());
        let obs: Vec<Link> = now.values().map(IfConfig::to_link).collect();
        let d: Vec<Link> =
            serde_json::from_value(json!([{"name": "Ethernet0/1", "mode": "access"}])).unwrap();
        let back = plan(&[], &[], Policy::Merge, &d, &obs, Policy::Merge, &rules());
        assert_eq!(
            render_encapsulation_undo(&added, &back, &now),
            [
                "interface Ethernet0/1",
                "no switchport trunk encapsulation",
                "exit"
            ]
        );
        let mut access = now.clone();
        access.get_mut("Ethernet0/1").unwrap().mode = Some("access".into());
        assert_eq!(
            render_encapsulation_undo(&added, &Plan::default(), &access).len(),
            3
        );
    }
}
