//! The Junos configuration as netgw reads it: VLANs (or bridge domains), interfaces, and which of the
//! three layer-2 configuration styles the device uses.
//!
//! | style | VLANs | access/trunk | members | native VLAN |
//! |---|---|---|---|---|
//! | EX (legacy) | `vlans/vlan{name,vlan-id}` | `unit 0 family ethernet-switching port-mode` | `vlan members` | `family ethernet-switching native-vlan-id` |
//! | ELS (QFX, EX2300/3400/4300...) | `vlans/vlan{name,vlan-id}` | `... ethernet-switching interface-mode` | `vlan members` | interface-level `native-vlan-id` |
//! | MX | `bridge-domains/domain{name,vlan-id}` | `unit 0 family bridge interface-mode` | `vlan-id` / `vlan-id-list` | interface-level `native-vlan-id` |
//!
//! Parsing accepts all three at once (a device shows one); rendering needs to know which (see
//! [`detect_style`]).

use super::render::{find, text};
use crate::transport::netconf::XmlElement;
use netgw_models::resource::{VlanId, VlanSet};
use std::collections::BTreeMap;

/// The layer-2 configuration style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Style {
    Ex,
    Els,
    Mx,
}

impl Style {
    /// The target option spelling (`junos_style: ex|els|mx`).
    pub fn parse(s: &str) -> Option<Style> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ex" | "legacy" => Some(Style::Ex),
            "els" | "qfx" | "l2ng" => Some(Style::Els),
            "mx" | "bridge-domains" | "bridge_domains" => Some(Style::Mx),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Style::Ex => "ex",
            Style::Els => "els",
            Style::Mx => "mx",
        }
    }

    /// Upper bound of `mtu` (EX/QFX 9216, MX 16360).
    pub fn max_mtu(self) -> u32 {
        match self {
            Style::Mx => 16360,
            Style::Ex | Style::Els => 9216,
        }
    }
}

/// One VLAN (or bridge domain) as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigVlan {
    pub name: String,
    pub id: Option<u16>,
    pub description: Option<String>,
}

/// The layer-2 family of `unit 0`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct L2Config {
    /// `bridge` (MX) rather than `ethernet-switching`.
    pub bridge: bool,
    /// `port-mode` (EX) or `interface-mode` (ELS, MX), as written.
    pub mode: Option<String>,
    /// `vlan members` (EX/ELS) or `vlan-id-list` (MX), as written (ids, ranges, names or `all`).
    pub members: Vec<String>,
    /// MX access `vlan-id`.
    pub vlan_id: Option<String>,
    /// EX `native-vlan-id` inside the family.
    pub native_vlan: Option<String>,
}

/// One interface as configured.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConfigInterface {
    pub name: String,
    pub description: Option<String>,
    pub disabled: bool,
    pub mtu: Option<u32>,
    /// Interface-level `native-vlan-id` (ELS, MX).
    pub native_vlan: Option<String>,
    pub l2: Option<L2Config>,
    /// Some unit has `family inet` or `inet6`.
    pub routed: bool,
}

/// The parts of a Junos configuration netgw reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JunosConfig {
    pub host_name: Option<String>,
    pub domain_name: Option<String>,
    pub vlans: Vec<ConfigVlan>,
    pub interfaces: Vec<ConfigInterface>,
    pub has_vlans: bool,
    pub has_bridge_domains: bool,
}

/// The `<configuration>` element of a get-config / get-configuration reply (anywhere under `root`).
pub fn configuration(root: &XmlElement) -> Option<&XmlElement> {
    find(root, "configuration")
}

/// Parse a `<configuration>` element (or a reply holding one; an empty configuration without one).
pub fn parse_config(root: &XmlElement) -> JunosConfig {
    let Some(cfg) = configuration(root) else {
        return JunosConfig::default();
    };
    let mut out = JunosConfig::default();
    if let Some(sys) = cfg.child("system") {
        out.host_name = text(sys, "host-name");
        out.domain_name = text(sys, "domain-name");
    }
    if let Some(v) = cfg.child("vlans") {
        out.has_vlans = true;
        out.vlans
            .extend(v.children_named("vlan").filter_map(parse_vlan));
    }
    if let Some(v) = cfg.child("bridge-domains") {
        out.has_bridge_domains = true;
        out.vlans
            .extend(v.children_named("domain").filter_map(parse_vlan));
    }
    if let Some(ifs) = cfg.child("interfaces") {
        out.interfaces
            .extend(ifs.children_named("interface").filter_map(parse_interface));
    }
    out
}

fn parse_vlan(el: &XmlElement) -> Option<ConfigVlan> {
    let name = text(el, "name")?;
    Some(ConfigVlan {
        name,
        id: text(el, "vlan-id").and_then(|s| s.parse::<u16>().ok()),
        description: text(el, "description"),
    })
}

fn parse_interface(el: &XmlElement) -> Option<ConfigInterface> {
    let mut i = ConfigInterface {
        name: text(el, "name")?,
        description: text(el, "description"),
        disabled: el.child("disable").is_some(),
        mtu: text(el, "mtu").and_then(|s| s.parse().ok()),
        native_vlan: text(el, "native-vlan-id"),
        ..Default::default()
    };
    for unit in el.children_named("unit") {
        let Some(family) = unit.child("family") else {
            continue;
        };
        if family.child("inet").is_some() || family.child("inet6").is_some() {
            i.routed = true;
        }
        if text(unit, "name").as_deref() != Some("0") {
            continue;
        }
        let (fam, bridge) = match (family.child("ethernet-switching"), family.child("bridge")) {
            (Some(f), _) => (f, false),
            (None, Some(f)) => (f, true),
            (None, None) => continue,
        };
        let mut members: Vec<String> = fam
            .child("vlan")
            .map(|v| {
                v.children_named("members")
                    .filter_map(|m| non_empty(m.text()))
                    .collect()
            })
            .unwrap_or_default();
        members.extend(
            fam.children_named("vlan-id-list")
                .filter_map(|m| non_empty(m.text())),
        );
        i.l2 = Some(L2Config {
            bridge,
            mode: text(fam, "interface-mode").or_else(|| text(fam, "port-mode")),
            members,
            vlan_id: text(fam, "vlan-id"),
            native_vlan: text(fam, "native-vlan-id"),
        });
    }
    Some(i)
}

fn non_empty(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Which style the configuration is written in, from the stanzas it has; `None` when it shows none
/// (an empty configuration).
pub fn detect_style(cfg: &JunosConfig) -> Option<Style> {
    if cfg.has_bridge_domains
        || cfg
            .interfaces
            .iter()
            .any(|i| i.l2.as_ref().is_some_and(|l| l.bridge))
    {
        return Some(Style::Mx);
    }
    // ELS moved the native VLAN to the interface and renamed port-mode to interface-mode.
    let mut saw_ex = false;
    let mut saw_els = false;
    for i in &cfg.interfaces {
        if let Some(l2) = &i.l2 {
            if l2.native_vlan.is_some() {
                saw_ex = true;
            }
            if i.native_vlan.is_some() {
                saw_els = true;
            }
        }
    }
    // port-mode vs interface-mode is recorded only as `mode`; look at the raw stanzas again.
    if saw_els {
        return Some(Style::Els);
    }
    if saw_ex {
        return Some(Style::Ex);
    }
    None
}

/// [`detect_style`] with the element names (`port-mode` is EX, `interface-mode` under
/// `ethernet-switching` is ELS), looking at the raw configuration.
pub fn detect_style_xml(root: &XmlElement) -> Option<Style> {
    let cfg = configuration(root)?;
    if cfg.child("bridge-domains").is_some() {
        return Some(Style::Mx);
    }
    let mut style = None;
    if let Some(ifs) = cfg.child("interfaces") {
        for i in ifs.children_named("interface") {
            for unit in i.children_named("unit") {
                let Some(family) = unit.child("family") else {
                    continue;
                };
                if family.child("bridge").is_some() {
                    return Some(Style::Mx);
                }
                if let Some(es) = family.child("ethernet-switching") {
                    if es.child("interface-mode").is_some() {
                        style = Some(Style::Els);
                    } else if es.child("port-mode").is_some() && style.is_none() {
                        style = Some(Style::Ex);
                    }
                }
            }
        }
    }
    style.or_else(|| detect_style(&parse_config(root)))
}

/// A style from the hardware model (`mx480` -> MX, `qfx5100`/`ex4300` -> ELS, other `ex` -> EX).
pub fn style_from_model(model: &str) -> Option<Style> {
    let m = model.trim().to_ascii_lowercase();
    if m.starts_with("mx") || m.starts_with("vmx") {
        return Some(Style::Mx);
    }
    if m.starts_with("qfx") || m.starts_with("vqfx") {
        return Some(Style::Els);
    }
    if let Some(rest) = m.strip_prefix("ex") {
        // ELS came with the EX2300, EX3400, EX4300, EX4600, EX4650, EX9200 families.
        let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
        // The EX9200 family is the EX9204, EX9208, EX9214 and EX9251/9253.
        if n.starts_with("92") {
            return Some(Style::Els);
        }
        return Some(match n.as_str() {
            "2300" | "3400" | "4100" | "4300" | "4400" | "4600" | "4650" => Style::Els,
            _ => Style::Ex,
        });
    }
    None
}

impl JunosConfig {
    /// VLAN name -> id.
    pub fn ids_by_name(&self) -> BTreeMap<&str, u16> {
        self.vlans
            .iter()
            .filter_map(|v| v.id.map(|id| (v.name.as_str(), id)))
            .collect()
    }

    /// The configured VLAN carrying `id` (the first, if several do).
    pub fn vlan_by_id(&self, id: u16) -> Option<&ConfigVlan> {
        self.vlans.iter().find(|v| v.id == Some(id))
    }

    pub fn vlan_by_name(&self, name: &str) -> Option<&ConfigVlan> {
        self.vlans.iter().find(|v| v.name == name)
    }

    pub fn interface(&self, name: &str) -> Option<&ConfigInterface> {
        self.interfaces.iter().find(|i| i.name == name)
    }

    /// Resolve VLAN references as written (`10`, `10-20`, `all`, a VLAN name) into ids. References
    /// that name no VLAN with an id are returned separately.
    pub fn resolve_members(&self, members: &[String]) -> (VlanSet, Vec<String>) {
        let names = self.ids_by_name();
        let mut set = VlanSet::new();
        let mut unknown = Vec::new();
        for m in members {
            if let Ok(s) = VlanSet::parse(m) {
                set = set.union(&s);
            } else if let Some(id) = names
                .get(m.as_str())
                .and_then(|&id| VlanId::new(i64::from(id)).ok())
            {
                set.insert(id);
            } else {
                unknown.push(m.clone());
            }
        }
        (set, unknown)
    }
}

/// Whether `<get-commit-information/>` (`show system commit`) shows the newest commit as a
/// `commit confirmed` still waiting for its confirmation: Junos writes `commit confirmed, rollback
/// in Nmins` on that entry until a plain commit confirms it or the timer rolls it back.
pub fn confirmed_commit_pending(commit_information: &XmlElement) -> bool {
    fn all_text(el: &XmlElement, out: &mut String) {
        out.push_str(&el.text());
        out.push(' ');
        for c in el.elements() {
            all_text(c, out);
        }
    }
    let Some(newest) = find(commit_information, "commit-information")
        .and_then(|i| i.elements().find(|e| e.name == "commit-history"))
    else {
        return false;
    };
    let mut t = String::new();
    all_text(newest, &mut t);
    t.contains("commit confirmed, rollback in")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::netconf::reply::parse_document;

    #[test]
    fn a_pending_confirmed_commit_is_read_from_the_newest_commit() {
        let doc = |entries: &str| {
            parse_document(&format!(
                "<rpc-reply><commit-information>{entries}</commit-information></rpc-reply>"
            ))
            .unwrap()
        };
        let pending = "<commit-history><sequence-number>0</sequence-number><user>netgw</user><client>netconf</client><date-time>2026-01-01 00:00:00 UTC</date-time><comment>commit confirmed, rollback in 2mins</comment></commit-history>";
        let plain = "<commit-history><sequence-number>0</sequence-number><user>netgw</user><client>netconf</client><date-time>2026-01-01 00:01:00 UTC</date-time><log>netgw run r2</log></commit-history>";
        assert!(confirmed_commit_pending(&doc(pending)));
        // Confirmed by a later plain commit: the pending entry is no longer the newest.
        assert!(!confirmed_commit_pending(&doc(&format!(
            "{plain}{pending}"
        ))));
        assert!(!confirmed_commit_pending(&doc("")));
    }

    const ELS: &str = r#"<rpc-reply><data><configuration><system><host-name>leaf1</host-name></system>
      <interfaces>
        <interface><name>ge-0/0/1</name><description>srv</description><disable/><mtu>9000</mtu>
          <unit><name>0</name><family><ethernet-switching><interface-mode>access</interface-mode>
          <vlan><members>web</members></vlan></ethernet-switching></family></unit></interface>
        <interface><name>ge-0/0/2</name><native-vlan-id>10</native-vlan-id>
          <unit><name>0</name><family><ethernet-switching><interface-mode>trunk</interface-mode>
          <vlan><members>10-12</members><members>all</members></vlan></ethernet-switching></family></unit></interface>
        <interface><name>ge-0/0/3</name><unit><name>0</name><family><inet><address><name>10.0.0.1/24</name></address></inet></family></unit></interface>
      </interfaces>
      <vlans><vlan><name>web</name><vlan-id>10</vlan-id><description>Web &amp; co</description></vlan><vlan><name>noid</name></vlan></vlans>
    </configuration></data></rpc-reply>"#;

    #[test]
    fn parses_els_configuration() {
        let doc = parse_document(ELS).unwrap();
        let c = parse_config(&doc);
        assert_eq!(c.host_name.as_deref(), Some("leaf1"));
        assert_eq!(
            c.vlans,
            vec![
                ConfigVlan {
                    name: "web".into(),
                    id: Some(10),
                    description: Some("Web & co".into())
                },
                ConfigVlan {
                    name: "noid".into(),
                    id: None,
                    description: None
                }
            ]
        );
        let g1 = c.interface("ge-0/0/1").unwrap();
        assert!(g1.disabled);
        assert_eq!(g1.mtu, Some(9000));
        let l2 = g1.l2.as_ref().unwrap();
        assert_eq!(
            (l2.mode.as_deref(), l2.members.as_slice()),
            (Some("access"), &["web".to_string()][..])
        );
        let g2 = c.interface("ge-0/0/2").unwrap();
        assert_eq!(g2.native_vlan.as_deref(), Some("10"));
        assert!(c.interface("ge-0/0/3").unwrap().routed);
        let (set, unknown) = c.resolve_members(&["web".into(), "11-12".into(), "nope".into()]);
        assert_eq!(
            (set.to_range_string(), unknown),
            ("10-12".to_string(), vec!["nope".to_string()])
        );
        assert_eq!(detect_style_xml(&doc), Some(Style::Els));
    }

    #[test]
    fn detects_ex_and_mx_and_nothing() {
        let ex = parse_document("<configuration><interfaces><interface><name>ge-0/0/1</name><unit><name>0</name><family><ethernet-switching><port-mode>trunk</port-mode></ethernet-switching></family></unit></interface></interfaces></configuration>").unwrap();
        assert_eq!(detect_style_xml(&ex), Some(Style::Ex));
        let mx = parse_document("<configuration><bridge-domains><domain><name>v10</name><vlan-id>10</vlan-id></domain></bridge-domains></configuration>").unwrap();
        assert_eq!(detect_style_xml(&mx), Some(Style::Mx));
        assert_eq!(parse_config(&mx).vlans[0].id, Some(10));
        let empty = parse_document("<data><configuration/></data>").unwrap();
        assert_eq!(detect_style_xml(&empty), None);
        assert_eq!(style_from_model("mx960"), Some(Style::Mx));
        assert_eq!(style_from_model("qfx5110-48s-4c"), Some(Style::Els));
        assert_eq!(style_from_model("ex4300-48t"), Some(Style::Els));
        assert_eq!(style_from_model("ex9214"), Some(Style::Els));
        assert_eq!(style_from_model("ex4200-24t"), Some(Style::Ex));
        assert_eq!(style_from_model("srx3600"), None);
        assert_eq!(Style::parse("ELS"), Some(Style::Els));
    }
}
