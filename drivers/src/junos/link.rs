//! Links: read from the configuration (plus the interface list of `get-interface-information terse`,
//! since an interface with no configuration is absent from the configuration), rendered as
//! `<interfaces>` changes in the device's style.
//!
//! Changing the VLANs of a port deletes its member list and writes the new one, as two `<interface>`
//! elements of one edit (Junos applies them in order): `vlan members` is a list, so merging a new
//! access VLAN would add a second member instead of replacing the first.

use super::config::{ConfigInterface, JunosConfig, Style};
use super::render::{El, find, text};
use crate::transport::netconf::XmlElement;
use netgw_models::plan::LinkChange;
use netgw_models::resource::{Link, LinkMode, VlanId, VlanSet};

/// Physical interface names of a `get-interface-information` reply (terse or not).
pub fn parse_interface_names(root: &XmlElement) -> Vec<String> {
    let Some(info) = find(root, "interface-information") else {
        return Vec::new();
    };
    info.children_named("physical-interface")
        .filter_map(|p| text(p, "name"))
        .collect()
}

fn vlan_id(s: &str) -> Option<VlanId> {
    VlanId::parse(s).ok()
}

/// The link a configured interface describes.
pub fn link_from_config(i: &ConfigInterface, cfg: &JunosConfig) -> Link {
    let mut l = Link::new(&i.name);
    l.description = i.description.clone();
    l.enabled = Some(!i.disabled);
    l.mtu = i.mtu;
    match &i.l2 {
        Some(l2) => {
            let mode = l2.mode.as_deref().unwrap_or("access");
            // EX `tagged-access` carries tagged VLANs like a trunk.
            let trunk = matches!(mode, "trunk" | "tagged-access");
            let (set, _unknown) = cfg.resolve_members(&l2.members);
            if trunk {
                l.mode = Some(LinkMode::Trunk);
                l.trunk_vlans = Some(set);
                let native = i.native_vlan.as_deref().or(l2.native_vlan.as_deref());
                l.native_vlan = native.and_then(|n| {
                    vlan_id(n).or_else(|| {
                        cfg.ids_by_name()
                            .get(n)
                            .and_then(|&id| vlan_id(&id.to_string()))
                    })
                });
            } else {
                l.mode = Some(LinkMode::Access);
                l.access_vlan = match &l2.vlan_id {
                    Some(v) => vlan_id(v),
                    None => set.ids().next(),
                };
            }
        }
        None if i.routed => l.mode = Some(LinkMode::Routed),
        None => {}
    }
    l
}

/// Links of the device: every physical interface the device lists, and every configured interface
/// whose name is not a logical unit. An interface without configuration is enabled, with nothing else
/// set.
pub fn parse_links(cfg: &JunosConfig, interface_names: &[String]) -> Vec<Link> {
    let mut out: Vec<Link> = Vec::new();
    let push = |l: Link, out: &mut Vec<Link>| {
        if !out.iter().any(|o| o.name == l.name) {
            out.push(l);
        }
    };
    for i in &cfg.interfaces {
        if !i.name.contains('.') {
            push(link_from_config(i, cfg), &mut out);
        }
    }
    for n in interface_names {
        if n.contains('.') {
            continue;
        }
        let mut l = Link::new(n);
        l.enabled = Some(true);
        push(l, &mut out);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// VLAN ids as Junos list entries: single ids, and `a-b` for runs of three or more (fake-switches and
/// Junos both accept numeric ranges; names are never written).
pub fn member_strings(set: &VlanSet) -> Vec<String> {
    let mut out = Vec::new();
    for (a, b) in set.ranges() {
        if b - a >= 2 {
            out.push(format!("{a}-{b}"));
        } else {
            out.extend((a..=b).map(|v| v.to_string()));
        }
    }
    out
}

fn family_name(style: Style) -> &'static str {
    match style {
        Style::Mx => "bridge",
        Style::Ex | Style::Els => "ethernet-switching",
    }
}

fn mode_tag(style: Style) -> &'static str {
    match style {
        Style::Ex => "port-mode",
        Style::Els | Style::Mx => "interface-mode",
    }
}

fn unit0(family: El) -> El {
    El::new("unit")
        .child(El::leaf("name", "0"))
        .child(El::new("family").child(family))
}

/// Render one link change as `<interface>` elements (one, or two when the VLAN list is rewritten).
pub fn render_link(ch: &LinkChange, running: &JunosConfig, style: Style) -> Vec<El> {
    let name = &ch.after.name;
    let configured = running.interface(name);
    let mut out = Vec::new();
    let mut main = El::new("interface").child(El::leaf("name", name));

    if ch.changed("description") {
        match &ch.after.description {
            Some(d) => main.push(El::leaf("description", d)),
            None if configured.is_some_and(|c| c.description.is_some()) => {
                main.push(El::delete("description"))
            }
            None => {}
        }
    }
    if ch.changed("enabled") {
        match ch.after.enabled {
            Some(false) => main.push(El::new("disable")),
            Some(true) if configured.is_some_and(|c| c.disabled) => {
                main.push(El::delete("disable"))
            }
            _ => {}
        }
    }
    if ch.changed("mtu")
        && let Some(m) = ch.after.mtu
    {
        main.push(El::leaf("mtu", m.to_string()));
    }

    let l2_changed = ["mode", "access_vlan", "trunk_vlans", "native_vlan"]
        .iter()
        .any(|p| ch.changed(p));
    if l2_changed {
        let fam = family_name(style);
        let after = &ch.after;
        match after.mode {
            Some(LinkMode::Routed) => {
                main.push(unit0(El::delete(fam)));
                if configured.is_some_and(|c| c.native_vlan.is_some()) {
                    main.push(El::delete("native-vlan-id"));
                }
            }
            mode => render_switching(ch, configured, style, mode, (&mut main, &mut out)),
        }
    }
    if main.children.len() > 1 {
        out.push(main);
    }
    out
}

/// A switched port's family: its mode, VLAN members and native VLAN, and (in `out`, first) the
/// removal of a member list that is to be replaced.
fn render_switching(
    ch: &LinkChange,
    configured: Option<&ConfigInterface>,
    style: Style,
    mode: Option<LinkMode>,
    (main, out): (&mut El, &mut Vec<El>),
) {
    let name = &ch.after.name;
    let fam = family_name(style);
    let l2 = configured.and_then(|c| c.l2.as_ref());
    let after = &ch.after;
    let mode = mode.unwrap_or(LinkMode::Access);
    let had_members = l2.is_some_and(|l| !l.members.is_empty() || l.vlan_id.is_some());
    // Only adding trunk members needs no rewrite; anything else replaces the list.
    let add_only = mode == LinkMode::Trunk
        && ch.before.mode == Some(LinkMode::Trunk)
        && ch.trunk_remove.is_empty()
        && !ch.changed("mode");
    if had_members && !add_only {
        let clear = match style {
            Style::Mx => {
                let mut b = El::new("bridge");
                if l2.is_some_and(|l| l.vlan_id.is_some()) {
                    b.push(El::delete("vlan-id"));
                }
                if l2.is_some_and(|l| !l.members.is_empty()) {
                    b.push(El::delete("vlan-id-list"));
                }
                b
            }
            Style::Ex | Style::Els => El::new("ethernet-switching").child(El::delete("vlan")),
        };
        out.push(
            El::new("interface")
                .child(El::leaf("name", name))
                .child(unit0(clear)),
        );
    }
    let members: Vec<String> = match mode {
        LinkMode::Trunk if add_only => member_strings(&ch.trunk_add),
        LinkMode::Trunk => after
            .trunk_vlans
            .as_ref()
            .map(member_strings)
            .unwrap_or_default(),
        _ => after
            .access_vlan
            .map(|v| vec![v.to_string()])
            .unwrap_or_default(),
    };
    let mut family = El::new(fam);
    if mode == LinkMode::Access && members.is_empty() {
        // An access port without a VLAN is the family as Junos defaults it (what an undo of a
        // port's first access VLAN puts back): no mode statement, removed if one was written.
        if l2.is_some_and(|l| l.mode.is_some()) {
            family.push(El::delete(mode_tag(style)));
        }
    } else {
        let m = if mode == LinkMode::Trunk {
            "trunk"
        } else {
            "access"
        };
        family.push(El::leaf(mode_tag(style), m));
    }
    match (style, mode) {
        (Style::Mx, LinkMode::Trunk) => family
            .children
            .extend(members.into_iter().map(|m| El::leaf("vlan-id-list", m))),
        (Style::Mx, _) => family
            .children
            .extend(members.into_iter().map(|m| El::leaf("vlan-id", m))),
        _ if !members.is_empty() => family
            .push(El::new("vlan").children(members.into_iter().map(|m| El::leaf("members", m)))),
        _ => {}
    }
    let native_before_ex = l2.is_some_and(|l| l.native_vlan.is_some());
    let native_before_iface = configured.is_some_and(|c| c.native_vlan.is_some());
    match (mode, after.native_vlan) {
        (LinkMode::Trunk, Some(n)) if ch.changed("native_vlan") || ch.changed("mode") => {
            match style {
                Style::Ex => family.push(El::leaf("native-vlan-id", n.to_string())),
                Style::Els | Style::Mx => main.push(El::leaf("native-vlan-id", n.to_string())),
            }
        }
        (LinkMode::Access, _) => {
            // An access port has no native VLAN.
            if native_before_ex && style == Style::Ex {
                family.push(El::delete("native-vlan-id"));
            }
            if native_before_iface && style != Style::Ex {
                main.push(El::delete("native-vlan-id"));
            }
        }
        _ => {}
    }
    main.push(unit0(family));
}

/// Render every link change of a plan; `None` when there are none.
pub fn render_links(changes: &[LinkChange], running: &JunosConfig, style: Style) -> Option<El> {
    let els: Vec<El> = changes
        .iter()
        .flat_map(|c| render_link(c, running, style))
        .collect();
    (!els.is_empty()).then(|| El::new("interfaces").children(els))
}

/// Junos interface names netgw manages: physical (`ge-0/0/1`, `xe-1/0/0:2`) and aggregated (`ae0`)
/// ports; `None` when acceptable, else why not.
pub fn validate_interface_name(name: &str) -> Option<String> {
    if name.contains('.') {
        return Some(format!(
            "{name:?} is a logical unit; netgw manages the physical interface (unit 0 is implied)"
        ));
    }
    let physical = name.split_once('-').is_some_and(|(media, rest)| {
        media.len() >= 2
            && media.chars().all(|c| c.is_ascii_lowercase())
            && rest.split(['/', ':']).count() >= 3
            && rest
                .split(['/', ':'])
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    });
    let aggregated = name
        .strip_prefix("ae")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    if physical || aggregated {
        None
    } else {
        Some(format!(
            "{name:?} is not a Junos physical or aggregated interface name (ge-0/0/1, xe-0/0/0:1, ae0)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::junos::config::parse_config;
    use crate::transport::netconf::reply::parse_document;
    use netgw_models::plan::{PlanRules, Policy, plan};
    use serde_json::{Value, json};

    fn cfg(xml: &str) -> JunosConfig {
        parse_config(&parse_document(xml).unwrap())
    }

    /// Desired links `d` merged into `observed`, no VLANs.
    fn link_plan(d: &[Link], observed: &[Link]) -> netgw_models::plan::Plan {
        plan(
            &[],
            &[],
            Policy::Merge,
            d,
            observed,
            Policy::Merge,
            &PlanRules::default(),
        )
    }

    fn links(v: Value) -> Vec<Link> {
        serde_json::from_value(v).unwrap()
    }

    const EX: &str = "<configuration><vlans><vlan><name>web</name><vlan-id>10</vlan-id></vlan></vlans><interfaces>\
        <interface><name>ge-0/0/1</name><unit><name>0</name><family><ethernet-switching><port-mode>access</port-mode><vlan><members>web</members></vlan></ethernet-switching></family></unit></interface>\
        <interface><name>ge-0/0/2</name><disable/><unit><name>0</name><family><ethernet-switching><port-mode>trunk</port-mode><vlan><members>10</members><members>20-22</members></vlan><native-vlan-id>10</native-vlan-id></ethernet-switching></family></unit></interface>\
        </interfaces></configuration>";

    #[test]
    fn parses_links_with_unconfigured_interfaces() {
        let c = cfg(EX);
        let names = vec![
            "ge-0/0/1".to_string(),
            "ge-0/0/3".into(),
            "ge-0/0/3.0".into(),
        ];
        let l = parse_links(&c, &names);
        assert_eq!(
            serde_json::to_value(&l).unwrap(),
            json!([
                {"name": "ge-0/0/1", "enabled": true, "mode": "access", "access_vlan": 10},
                {"name": "ge-0/0/2", "enabled": false, "mode": "trunk", "trunk_vlans": "10,20-22", "native_vlan": 10},
                {"name": "ge-0/0/3", "enabled": true}
            ])
        );
    }

    #[test]
    fn access_vlan_change_rewrites_the_member_list() {
        let c = cfg(EX);
        let observed = parse_links(&c, &[]);
        let d = links(
            json!([{"name": "ge-0/0/1", "access_vlan": 20, "description": "a<b", "mtu": 9000}]),
        );
        let p = link_plan(&d, &observed);
        let xml: Vec<String> = render_link(&p.links[0], &c, Style::Ex)
            .iter()
            .map(El::to_xml)
            .collect();
        assert_eq!(
            xml,
            vec![
                "<interface><name>ge-0/0/1</name><unit><name>0</name><family><ethernet-switching><vlan operation=\"delete\"/></ethernet-switching></family></unit></interface>".to_string(),
                "<interface><name>ge-0/0/1</name><description>a&lt;b</description><mtu>9000</mtu><unit><name>0</name><family><ethernet-switching><port-mode>access</port-mode><vlan><members>20</members></vlan></ethernet-switching></family></unit></interface>".to_string(),
            ]
        );
    }

    #[test]
    fn trunk_rendering_per_style() {
        let empty = JunosConfig::default();
        let observed = links(json!([{"name": "xe-0/0/1", "enabled": false}]));
        let d = links(
            json!([{"name": "xe-0/0/1", "enabled": true, "mode": "trunk", "trunk_vlans": "10,11,12,20", "native_vlan": 10}]),
        );
        let p = link_plan(&d, &observed);
        let one = |s| {
            render_link(&p.links[0], &empty, s)
                .iter()
                .map(El::to_xml)
                .collect::<Vec<_>>()
                .join("")
        };
        assert_eq!(
            one(Style::Mx),
            "<interface><name>xe-0/0/1</name><native-vlan-id>10</native-vlan-id><unit><name>0</name><family><bridge><interface-mode>trunk</interface-mode><vlan-id-list>10-12</vlan-id-list><vlan-id-list>20</vlan-id-list></bridge></family></unit></interface>"
        );
        assert_eq!(
            one(Style::Els),
            "<interface><name>xe-0/0/1</name><native-vlan-id>10</native-vlan-id><unit><name>0</name><family><ethernet-switching><interface-mode>trunk</interface-mode><vlan><members>10-12</members><members>20</members></vlan></ethernet-switching></family></unit></interface>"
        );
        assert!(one(Style::Ex).contains("<port-mode>trunk</port-mode><vlan><members>10-12</members><members>20</members></vlan><native-vlan-id>10</native-vlan-id></ethernet-switching>"));

        // Adding to a trunk under merge only adds; disabling renders <disable/>.
        let c = cfg(EX);
        let observed = parse_links(&c, &[]);
        let d = links(
            json!([{"name": "ge-0/0/2", "trunk_vlans": "30", "enabled": false}, {"name": "ge-0/0/1", "enabled": false}]),
        );
        let p = link_plan(&d, &observed);
        let xml = render_links(&p.links, &c, Style::Ex).unwrap().to_xml();
        assert!(!xml.contains("operation=\"delete\""), "{xml}");
        assert!(
            xml.contains("<members>30</members>") && !xml.contains("<members>10</members>"),
            "{xml}"
        );
        assert!(xml.contains("<name>ge-0/0/1</name><disable/>"), "{xml}");
    }

    #[test]
    fn interface_names() {
        for ok in ["ge-0/0/1", "xe-0/0/0:2", "et-1/0/48", "ae0"] {
            assert_eq!(validate_interface_name(ok), None, "{ok}");
        }
        for bad in ["ge-0/0/1.0", "Ethernet1", "ge0/0/1", "irb"] {
            assert!(validate_interface_name(bad).is_some(), "{bad}");
        }
    }
}
