//! EOS links: parse `show interfaces` + `show interfaces switchport` (JSON), or the `interface` stanzas
//! of running-config text where the switchport JSON is missing; render `interface X` blocks.
//!
//! Observed switchports report all three VLAN settings the device keeps whatever the mode (access VLAN,
//! trunk allowed list, native VLAN), so switching modes never re-sends a value the port already has;
//! routed ports report none. [`as_desired`] keeps only what matters for the mode, for reusing an
//! observed link as a desired one (rollback). (`show interfaces switchport` JSON shape: arista-eosplus/goeapi
//! `module/showinterfacesswitchport.go`; no recorded sample exists, see fixtures SOURCES.md "Gaps".)

use netgw_models::plan::LinkChange;
use netgw_models::resource::{Link, LinkMode, VlanId, VlanSet};
use serde_json::Value;

use super::RenderError;

/// The largest MTU EOS accepts on an interface.
pub const MAX_MTU: u32 = 9214;
/// Longest VLAN list element run per command line (EOS has no hard limit; keep lines readable).
const MAX_LIST_CHARS: usize = 200;

/// Interfaces that can never be switchports.
fn always_routed(name: &str) -> bool {
    name.contains('.')
        || ["Loopback", "Vlan", "Management", "Tunnel"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// `show interfaces` (JSON) as links: description, enabled (`interfaceStatus` `disabled` is a shutdown),
/// mtu, and `routed` where `forwardingModel` says so. Switchport details come from
/// [`apply_switchports`] or [`apply_running_config`].
pub fn parse_show_interfaces(v: &Value) -> Vec<Link> {
    let mut out: Vec<Link> = v
        .get("interfaces")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, i)| {
            let mut l = Link::new(name.clone());
            l.description = i
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(str::to_owned);
            l.enabled = i
                .get("interfaceStatus")
                .and_then(Value::as_str)
                .map(|s| s != "disabled");
            l.mtu = i
                .get("mtu")
                .and_then(Value::as_u64)
                .and_then(|m| u32::try_from(m).ok());
            if i.get("forwardingModel").and_then(Value::as_str) == Some("routed") {
                l.mode = Some(LinkMode::Routed);
            }
            l
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// EOS `trunkAllowedVlans` / `switchport trunk allowed vlan` text: `ALL`, `NONE`, `1-4094`, `10,20-30`.
pub fn parse_allowed(s: &str) -> Option<VlanSet> {
    VlanSet::parse(s.trim()).ok()
}

fn set_mode_fields(
    l: &mut Link,
    mode: Option<LinkMode>,
    access: Option<VlanId>,
    trunk: Option<VlanSet>,
    native: Option<VlanId>,
) {
    l.mode = mode;
    if mode == Some(LinkMode::Routed) {
        l.access_vlan = None;
        l.trunk_vlans = None;
        l.native_vlan = None;
    } else {
        l.access_vlan = access;
        l.trunk_vlans = trunk;
        l.native_vlan = native;
    }
}

/// An observed link as a valid desired link: only the VLAN settings its mode uses.
pub fn as_desired(l: &Link) -> Link {
    l.as_desired()
}

/// Merge `show interfaces switchport` (JSON) into links: `switchports.NAME.{enabled, switchportInfo:
/// {mode, accessVlanId, trunkAllowedVlans, trunkingNativeVlanId}}`. `enabled: false` is a routed port.
/// Modes other than access and trunk (dot1qTunnel, tap, tool) are reported as unknown.
pub fn apply_switchports(links: &mut [Link], v: &Value) {
    let Some(ports) = v.get("switchports").and_then(Value::as_object) else {
        return;
    };
    for l in links.iter_mut() {
        let Some(p) = ports.get(&l.name) else {
            continue;
        };
        if p.get("enabled").and_then(Value::as_bool) == Some(false) {
            set_mode_fields(l, Some(LinkMode::Routed), None, None, None);
            continue;
        }
        let info = p.get("switchportInfo");
        let field = |k: &str| info.and_then(|i| i.get(k));
        let mode = match field("mode").and_then(Value::as_str) {
            Some("access") => Some(LinkMode::Access),
            Some("trunk") => Some(LinkMode::Trunk),
            _ => None,
        };
        let vid = |k: &str| {
            field(k)
                .and_then(Value::as_i64)
                .and_then(|n| VlanId::new(n).ok())
        };
        let trunk = field("trunkAllowedVlans")
            .and_then(Value::as_str)
            .and_then(parse_allowed);
        set_mode_fields(
            l,
            mode,
            vid("accessVlanId"),
            trunk,
            vid("trunkingNativeVlanId"),
        );
    }
}

/// The settings of one `interface` stanza of running-config text, with EOS defaults for what is not
/// written (plain running-config omits defaults; `running-config all` writes them out).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InterfaceConfig {
    pub description: Option<String>,
    pub shutdown: bool,
    pub mtu: Option<u32>,
    pub mode: Option<LinkMode>,
    pub access_vlan: Option<VlanId>,
    pub trunk_vlans: Option<VlanSet>,
    pub native_vlan: Option<VlanId>,
}

/// Parse the body lines of `interface NAME`.
pub fn parse_interface_stanza(name: &str, body: &[String]) -> InterfaceConfig {
    let mut c = InterfaceConfig::default();
    let mut switchport = !always_routed(name);
    let mut mode_word: Option<String> = None;
    let mut access = None;
    let mut trunk = None;
    let mut native = None;
    for line in body {
        let l = line.trim();
        if let Some(d) = l.strip_prefix("description ") {
            c.description = Some(d.to_owned());
        } else if l == "no description" {
            c.description = None;
        } else if l == "shutdown" {
            c.shutdown = true;
        } else if l == "no shutdown" {
            c.shutdown = false;
        } else if let Some(m) = l.strip_prefix("mtu ") {
            c.mtu = m.trim().parse().ok();
        } else if l == "no switchport" {
            switchport = false;
        } else if l == "switchport" {
            switchport = true;
        } else if let Some(m) = l.strip_prefix("switchport mode ") {
            mode_word = Some(m.trim().to_owned());
        } else if let Some(v) = l.strip_prefix("switchport access vlan ") {
            access = VlanId::parse(v).ok();
        } else if let Some(v) = l.strip_prefix("switchport trunk native vlan ") {
            native = VlanId::parse(v).ok();
        } else if let Some(v) = l.strip_prefix("switchport trunk allowed vlan ") {
            trunk = parse_allowed(v);
        }
    }
    if !switchport {
        c.mode = Some(LinkMode::Routed);
        return c;
    }
    c.mode = match mode_word.as_deref() {
        None | Some("access") => Some(LinkMode::Access),
        Some("trunk") => Some(LinkMode::Trunk),
        Some(_) => None,
    };
    // EOS defaults: access VLAN 1, all VLANs allowed, native VLAN 1.
    c.access_vlan = access.or(VlanId::new(1).ok());
    c.trunk_vlans = trunk.or(Some(VlanSet::all()));
    c.native_vlan = native.or(VlanId::new(1).ok());
    c
}

/// `interface` stanzas of running-config text, by interface name.
pub fn parse_running_config_interfaces(text: &str) -> Vec<(String, InterfaceConfig)> {
    super::vlan::config_sections(text)
        .into_iter()
        .filter_map(|(header, body)| {
            let name = header.strip_prefix("interface ")?.trim().to_owned();
            let cfg = parse_interface_stanza(&name, &body);
            Some((name, cfg))
        })
        .collect()
}

/// Links from running-config text alone.
pub fn parse_running_config_links(text: &str) -> Vec<Link> {
    let mut out: Vec<Link> = parse_running_config_interfaces(text)
        .into_iter()
        .map(|(name, c)| {
            let mut l = Link::new(name);
            l.description = c.description.clone();
            l.enabled = Some(!c.shutdown);
            l.mtu = c.mtu;
            set_mode_fields(&mut l, c.mode, c.access_vlan, c.trunk_vlans, c.native_vlan);
            l
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Merge switchport settings from running-config text into links read from `show interfaces` (the
/// fallback when `show interfaces switchport` is not available).
pub fn apply_running_config(links: &mut [Link], text: &str) {
    let cfgs = parse_running_config_interfaces(text);
    for l in links.iter_mut() {
        if let Some((_, c)) = cfgs.iter().find(|(n, _)| *n == l.name) {
            set_mode_fields(
                l,
                c.mode,
                c.access_vlan,
                c.trunk_vlans.clone(),
                c.native_vlan,
            );
        }
    }
}

/// EOS limits on desired links, beyond the models' common rules.
pub fn validate_link(l: &Link) -> Result<(), LinkUnfit> {
    if let Some(m) = l.mtu
        && m > MAX_MTU
    {
        return Err(LinkUnfit::Mtu(m));
    }
    if always_routed(&l.name) && matches!(l.mode, Some(LinkMode::Access | LinkMode::Trunk)) {
        return Err(LinkUnfit::AlwaysRouted(l.name.clone()));
    }
    // EOS' `mtu` is the IP MTU of a routed port; a switchport reports (and forwards) its Ethernet MTU,
    // 9214, whatever `mtu` says, so any other value would never read back (pyeapi's `show interfaces`
    // sample: routed ports 1500, bridged ports 9214).
    if let Some(m) = l.mtu
        && m != MAX_MTU
        && matches!(l.mode, Some(LinkMode::Access | LinkMode::Trunk))
    {
        return Err(LinkUnfit::SwitchportMtu(m));
    }
    Ok(())
}

/// A desired link EOS cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkUnfit {
    #[error("EOS interface MTU is at most {MAX_MTU} ({0} given)")]
    Mtu(u32),
    #[error("{0} cannot be a switchport on EOS")]
    AlwaysRouted(String),
    #[error(
        "EOS applies `mtu` to routed ports only; a switchport always carries {MAX_MTU} bytes ({0} given): drop mtu or make the link routed"
    )]
    SwitchportMtu(u32),
}

fn list_lines(prefix: &str, first_verb: &str, rest_verb: &str, set: &VlanSet) -> Vec<String> {
    set.to_range_chunks(MAX_LIST_CHARS)
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let verb = if i == 0 { first_verb } else { rest_verb };
            if verb.is_empty() {
                format!("{prefix} {chunk}")
            } else {
                format!("{prefix} {verb} {chunk}")
            }
        })
        .collect()
}

/// Lines for one link change: `interface X`, the changed properties, `exit`. With `trunk_replace` the
/// allowed list is set as a whole (`switchport trunk allowed vlan LIST`), otherwise VLANs are added and
/// removed (`... add LIST`, `... remove LIST`).
pub fn render_link_change(c: &LinkChange) -> Result<Vec<String>, RenderError> {
    let a = &c.after;
    let mut out = vec![format!("interface {}", a.name)];
    if c.changed("description") {
        out.push(match &a.description {
            Some(d) => format!("description {d}"),
            None => "no description".into(),
        });
    }
    if c.changed("enabled") {
        out.push(if a.enabled == Some(false) {
            "shutdown".into()
        } else {
            "no shutdown".into()
        });
    }
    if c.changed("mtu") {
        out.push(match a.mtu {
            Some(m) => format!("mtu {m}"),
            None => "no mtu".into(),
        });
    }
    if c.changed("mode") {
        let was_routed = c.before.mode == Some(LinkMode::Routed);
        match a.mode {
            Some(LinkMode::Routed) => out.push("no switchport".into()),
            Some(m) => {
                if was_routed {
                    out.push("switchport".into());
                }
                out.push(format!("switchport mode {m}"));
            }
            None => {}
        }
    }
    if a.mode != Some(LinkMode::Routed) {
        if c.changed("access_vlan") {
            out.push(match a.access_vlan {
                Some(v) => format!("switchport access vlan {v}"),
                None => "no switchport access vlan".into(),
            });
        }
        if c.changed("trunk_vlans") {
            const P: &str = "switchport trunk allowed vlan";
            if c.trunk_replace {
                match &a.trunk_vlans {
                    None => out.push(format!("no {P}")),
                    Some(s) if s.is_empty() => out.push(format!("{P} none")),
                    Some(s) if s.len() == VlanSet::all().len() => out.push(format!("{P} all")),
                    Some(s) => out.extend(list_lines(P, "", "add", s)),
                }
            } else {
                out.extend(list_lines(P, "add", "add", &c.trunk_add));
                out.extend(list_lines(P, "remove", "remove", &c.trunk_remove));
            }
        }
        if c.changed("native_vlan") {
            out.push(match a.native_vlan {
                Some(v) => format!("switchport trunk native vlan {v}"),
                None => "no switchport trunk native vlan".into(),
            });
        }
    }
    out.push("exit".into());
    super::check_lines(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netgw_models::plan::{PlanRules, Policy, plan};
    use serde_json::json;

    fn links(v: Value) -> Vec<Link> {
        serde_json::from_value(v).unwrap()
    }

    fn eos_rules() -> PlanRules {
        PlanRules {
            reserved_vlans: VlanSet::parse("1").unwrap(),
            default_native_vlan: VlanId::new(1).ok(),
        }
    }

    #[test]
    fn show_interfaces_gives_description_enabled_mtu_routed() {
        let v = json!({"interfaces": {
            "Ethernet1": {"description": "uplink", "interfaceStatus": "connected", "mtu": 9214, "forwardingModel": "bridged"},
            "Ethernet2": {"description": "", "interfaceStatus": "disabled", "mtu": 1500, "forwardingModel": "routed"}
        }});
        let l = parse_show_interfaces(&v);
        assert_eq!(l[0].description.as_deref(), Some("uplink"));
        assert_eq!(
            (l[0].enabled, l[0].mtu, l[0].mode),
            (Some(true), Some(9214), None)
        );
        assert_eq!(
            (l[1].enabled, l[1].description.clone(), l[1].mode),
            (Some(false), None, Some(LinkMode::Routed))
        );
    }

    #[test]
    fn switchport_json_sets_mode_and_vlans() {
        // The shape fake-switches and goeapi agree on.
        let mut l = vec![
            Link::new("Ethernet1"),
            Link::new("Ethernet2"),
            Link::new("Ethernet3"),
            Link::new("Ethernet4"),
        ];
        let v = json!({"switchports": {
            "Ethernet1": {"enabled": true, "switchportInfo": {"mode": "trunk", "accessVlanId": 1, "trunkAllowedVlans": "10,20-22", "trunkingNativeVlanId": 20}},
            "Ethernet2": {"enabled": true, "switchportInfo": {"mode": "access", "accessVlanId": 30, "trunkAllowedVlans": "ALL", "trunkingNativeVlanId": 1}},
            "Ethernet3": {"enabled": false, "switchportInfo": {}},
            "Ethernet4": {"enabled": true, "switchportInfo": {"mode": "trunk", "trunkAllowedVlans": "NONE", "trunkingNativeVlanId": 1}}
        }});
        apply_switchports(&mut l, &v);
        assert_eq!(l[0].mode, Some(LinkMode::Trunk));
        assert_eq!(
            l[0].trunk_vlans.as_ref().unwrap().to_range_string(),
            "10,20-22"
        );
        assert_eq!(
            (
                l[0].native_vlan.map(VlanId::get),
                l[0].access_vlan.map(VlanId::get)
            ),
            (Some(20), Some(1))
        );
        assert_eq!(
            (
                l[1].mode,
                l[1].access_vlan.map(VlanId::get),
                l[1].trunk_vlans.clone()
            ),
            (Some(LinkMode::Access), Some(30), Some(VlanSet::all()))
        );
        assert_eq!(l[2].mode, Some(LinkMode::Routed));
        assert!(l[3].trunk_vlans.as_ref().unwrap().is_empty());
        assert!(
            l[0].validate().is_err(),
            "device truth: a trunk still has an access VLAN"
        );
        for x in &l {
            as_desired(x)
                .validate()
                .expect("as_desired gives a valid desired link");
        }
    }

    #[test]
    fn running_config_defaults_and_explicit_values() {
        let text = "interface Ethernet1\n   description to spine1\n   shutdown\n   switchport trunk allowed vlan 10,20\n   switchport trunk native vlan 10\n   switchport mode trunk\n!\n\
                    interface Ethernet2\n!\ninterface Ethernet3\n   no switchport\n   mtu 9000\n!\ninterface Loopback0\n   ip address 1.1.1.1/32\n!\n\
                    interface Ethernet4\n   switchport access vlan 30\n!\n";
        let l = parse_running_config_links(text);
        let by = |n: &str| l.iter().find(|x| x.name == n).unwrap().clone();
        let e1 = by("Ethernet1");
        assert_eq!(
            (e1.enabled, e1.mode, e1.native_vlan.map(VlanId::get)),
            (Some(false), Some(LinkMode::Trunk), Some(10))
        );
        assert_eq!(e1.trunk_vlans.unwrap().to_range_string(), "10,20");
        assert_eq!(e1.description.as_deref(), Some("to spine1"));
        let e2 = by("Ethernet2");
        assert_eq!(
            (e2.mode, e2.access_vlan.map(VlanId::get), e2.enabled),
            (Some(LinkMode::Access), Some(1), Some(true))
        );
        let e3 = by("Ethernet3");
        assert_eq!((e3.mode, e3.mtu), (Some(LinkMode::Routed), Some(9000)));
        assert_eq!(by("Loopback0").mode, Some(LinkMode::Routed));
        assert_eq!(by("Ethernet4").access_vlan.map(VlanId::get), Some(30));
    }

    #[test]
    fn fake_switches_running_config_fallback() {
        // What fake-switches answers to `show running-config interfaces Ethernet1` after a trunk change.
        let mut l = vec![Link::new("Ethernet1")];
        apply_running_config(
            &mut l,
            "interface Ethernet1\n   switchport trunk allowed vlan 10,20\n   switchport mode trunk\n",
        );
        assert_eq!(l[0].mode, Some(LinkMode::Trunk));
        assert_eq!(
            l[0].trunk_vlans.as_ref().unwrap().to_range_string(),
            "10,20"
        );
        assert_eq!(l[0].native_vlan.map(VlanId::get), Some(1));
    }

    fn render_plan(desired: Value, observed: Value, policy: Policy) -> Vec<String> {
        let p = plan(
            &[],
            &[],
            Policy::Merge,
            &links(desired),
            &links(observed),
            policy,
            &eos_rules(),
        );
        assert!(p.failures().next().is_none(), "{:?}", p.resources);
        p.links
            .iter()
            .flat_map(|c| render_link_change(c).unwrap())
            .collect()
    }

    #[test]
    fn render_trunk_merge_adds_and_replace_sets() {
        let obs = json!([{"name": "Ethernet1", "enabled": true, "mode": "trunk", "trunk_vlans": "10,20", "native_vlan": 1}]);
        let merge = render_plan(
            json!([{"name": "Ethernet1", "trunk_vlans": "30-31"}]),
            obs.clone(),
            Policy::Merge,
        );
        assert_eq!(
            merge,
            [
                "interface Ethernet1",
                "switchport trunk allowed vlan add 30-31",
                "exit"
            ]
        );
        let replace = render_plan(
            json!([{"name": "Ethernet1", "mode": "trunk", "trunk_vlans": "20,30", "native_vlan": 20}]),
            obs.clone(),
            Policy::Replace,
        );
        assert_eq!(
            replace,
            [
                "interface Ethernet1",
                "switchport trunk allowed vlan 20,30",
                "switchport trunk native vlan 20",
                "exit"
            ]
        );
        let none = render_plan(
            json!([{"name": "Ethernet1", "mode": "trunk", "trunk_vlans": []}]),
            obs,
            Policy::Replace,
        );
        assert!(
            none.contains(&"switchport trunk allowed vlan none".to_owned()),
            "{none:?}"
        );
    }

    #[test]
    fn render_access_routed_and_basic_properties() {
        let obs = json!([{"name": "Ethernet2", "enabled": true, "mtu": 1500, "mode": "trunk", "trunk_vlans": "1-4094", "native_vlan": 1},
                         {"name": "Ethernet3", "enabled": true, "mode": "routed"}]);
        let got = render_plan(
            json!([{"name": "Ethernet2", "description": "server 1", "enabled": false, "mtu": 9000, "mode": "access", "access_vlan": 20},
                   {"name": "Ethernet3", "mode": "trunk", "trunk_vlans": "10"}]),
            obs,
            Policy::Merge,
        );
        assert_eq!(
            got,
            [
                "interface Ethernet2",
                "description server 1",
                "shutdown",
                "mtu 9000",
                "switchport mode access",
                "switchport access vlan 20",
                "exit",
                "interface Ethernet3",
                "switchport",
                "switchport mode trunk",
                // A port that becomes a trunk gets exactly the declared list (models::plan).
                "switchport trunk allowed vlan 10",
                "exit"
            ]
        );
        let got = render_plan(
            json!([{"name": "Ethernet2", "mode": "routed"}]),
            json!([{"name": "Ethernet2", "enabled": true, "mode": "access", "access_vlan": 1}]),
            Policy::Merge,
        );
        assert_eq!(got, ["interface Ethernet2", "no switchport", "exit"]);
    }

    #[test]
    fn long_lists_split_into_add_lines() {
        let many: Vec<u16> = (1..=600).step_by(2).collect();
        let desired = json!([{"name": "Ethernet1", "mode": "trunk", "trunk_vlans": many}]);
        let obs = json!([{"name": "Ethernet1", "enabled": true, "mode": "trunk", "trunk_vlans": "1-4094", "native_vlan": 1}]);
        let got = render_plan(desired, obs, Policy::Replace);
        assert!(got.len() > 4, "{got:?}");
        assert!(got[1].starts_with("switchport trunk allowed vlan 1,3,"));
        assert!(got[2].starts_with("switchport trunk allowed vlan add "));
        let mut set = VlanSet::new();
        for l in &got[1..got.len() - 1] {
            let list = l.rsplit(' ').next().unwrap();
            set = set.union(&VlanSet::parse(list).unwrap());
            assert!(l.len() < MAX_LIST_CHARS + 40);
        }
        assert_eq!(set.len(), 300);
    }

    #[test]
    fn eos_link_limits() {
        let mut l = Link::new("Ethernet1");
        l.mtu = Some(9215);
        assert!(validate_link(&l).unwrap_err().to_string().contains("9214"));
        let mut l = Link::new("Loopback0");
        l.mode = Some(LinkMode::Trunk);
        assert!(validate_link(&l).is_err());
        l.mode = Some(LinkMode::Routed);
        assert!(validate_link(&l).is_ok());
    }

    /// `mtu` on an EOS switchport never reads back (the Ethernet MTU, 9214, is reported): refused up
    /// front unless it says 9214; routed ports take any MTU up to 9214.
    #[test]
    fn switchport_mtu_is_refused() {
        let l = |mode: &str, mtu: u32| -> Link {
            serde_json::from_value(json!({"name": "Ethernet1", "mode": mode, "mtu": mtu})).unwrap()
        };
        assert!(
            validate_link(&l("access", 9000))
                .unwrap_err()
                .to_string()
                .contains("routed ports only")
        );
        assert!(validate_link(&l("trunk", 1500)).is_err());
        assert!(validate_link(&l("access", 9214)).is_ok());
        assert!(validate_link(&l("routed", 9000)).is_ok());
    }
}
