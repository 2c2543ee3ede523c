//! Aggregates (`aeN`) and routed interfaces on Junos: read from the running configuration, and the
//! `<configuration>` children of a plan's aggregate and address steps.
//!
//! | | EX (legacy) | ELS (QFX) | MX |
//! |---|---|---|---|
//! | aggregates | `chassis aggregated-devices ethernet device-count`, `interfaces aeN aggregated-ether-options {lacp active\|passive; minimum-links}` | same | same |
//! | member | `ether-options 802.3ad aeN` | `gigether-options 802.3ad aeN` | `gigether-options 802.3ad aeN` |
//! | VLAN interface | `vlan unit N`, `vlans V l3-interface vlan.N` | `irb unit N`, `vlans V l3-interface irb.N` | `irb unit N`, `bridge-domains D routing-interface irb.N` |
//! | routed port | `unit 0 family inet\|inet6 address` | same | same |
//!
//! A VLAN interface is named `irb.N` in resources and facts on every style (the EX `vlan.N` is how it is
//! written there), so one node definition converges on any Junos switch. A static aggregate (`lacp on`)
//! has no `lacp` statement. The first IPv4 address is marked `primary`.

use super::config::{JunosConfig, Style};
use super::link::render_link;
use super::render::{El, text};
use super::vlan::generated_name;
use crate::transport::netconf::XmlElement;
use netgw_models::plan::l3::{IpCidr, L3Change, L3Interface, is_management};
use netgw_models::plan::lag::{LacpMode, Lag, LagChange};
use netgw_models::plan::{Plan, Step};
use netgw_models::resource::{Link, VlanId};
use std::collections::BTreeMap;

/// Why a plan's aggregate cannot be written on Junos.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("lag {name}: {reason}")]
pub struct LagRenderError {
    pub name: String,
    pub reason: &'static str,
}

/// Member options of a style: where `802.3ad aeN` goes.
fn member_options(style: Style) -> &'static str {
    match style {
        Style::Ex => "ether-options",
        Style::Els | Style::Mx => "gigether-options",
    }
}

/// The interface holding VLAN interfaces in a style (`irb`, EX `vlan`).
fn vlan_iface(style: Style) -> &'static str {
    match style {
        Style::Ex => "vlan",
        Style::Els | Style::Mx => "irb",
    }
}

fn ae_number(name: &str) -> Option<u32> {
    name.strip_prefix("ae")
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))?
        .parse()
        .ok()
}

/// The aggregate a member is bundled into, and the options element it is written under.
fn bundle_of(i: &XmlElement) -> Option<(String, &'static str)> {
    ["ether-options", "gigether-options"]
        .into_iter()
        .find_map(|o| {
            let b = i.child(o)?.child("ieee-802.3ad")?;
            Some((text(b, "bundle")?, o))
        })
}

fn interfaces(cfg: Option<&XmlElement>) -> Vec<&XmlElement> {
    cfg.and_then(|c| c.child("interfaces"))
        .map(|i| i.children_named("interface").collect())
        .unwrap_or_default()
}

/// `chassis aggregated-devices ethernet device-count`, 0 when not set.
fn device_count(cfg: Option<&XmlElement>) -> u32 {
    cfg.and_then(|c| c.child("chassis"))
        .and_then(|c| c.child("aggregated-devices"))
        .and_then(|a| a.child("ethernet"))
        .and_then(|e| text(e, "device-count"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn lag_from(i: &XmlElement, name: &str, links: &[Link]) -> Lag {
    let mut lag = Lag::new(name);
    lag.links = Some(Vec::new());
    if let Some(l) = links.iter().find(|l| l.name == name) {
        lag.set_settings(Link {
            name: name.to_owned(),
            ..l.as_desired()
        });
    }
    let opts = i.child("aggregated-ether-options");
    let lacp = opts.and_then(|o| o.child("lacp"));
    lag.lacp = Some(match lacp {
        Some(l) if l.child("passive").is_some() => LacpMode::Passive,
        Some(_) => LacpMode::Active,
        None => LacpMode::On,
    });
    lag.minimum_links = opts
        .and_then(|o| text(o, "minimum-links"))
        .and_then(|m| m.parse().ok());
    lag
}

/// The addresses of one unit's `family inet` / `inet6`, the primary first; with its description,
/// `disable` and inet `mtu`.
fn unit_l3(unit: &XmlElement, name: String) -> Option<L3Interface> {
    let fam = unit.child("family")?;
    let addrs = |f: &str| -> Option<Vec<IpCidr>> {
        let f = fam.child(f)?;
        let mut v: Vec<(bool, IpCidr)> = f
            .children_named("address")
            .filter_map(|a| Some((a.child("primary").is_none(), text(a, "name")?.parse().ok()?)))
            .collect();
        v.sort_by_key(|(not_primary, _)| *not_primary);
        Some(v.into_iter().map(|(_, a)| a).collect())
    };
    let (v4, v6) = (addrs("inet"), addrs("inet6"));
    if v4.is_none() && v6.is_none() {
        return None;
    }
    let mut l = L3Interface::new(name);
    l.ipv4 = v4.filter(|v| !v.is_empty());
    l.ipv6 = v6.filter(|v| !v.is_empty());
    l.description = text(unit, "description");
    l.enabled = Some(unit.child("disable").is_none());
    l.mtu = fam
        .child("inet")
        .and_then(|f| text(f, "mtu"))
        .and_then(|m| m.parse().ok());
    Some(l)
}

/// The aggregates and routed interfaces of a running configuration (the reply's `<configuration>`).
/// `links` (the observed links) give an aggregate's own settings and a routed port's description,
/// enabled state and mtu. Management interfaces are left out.
pub fn parse_lag_l3(cfg: Option<&XmlElement>, links: &[Link]) -> (Vec<Lag>, Vec<L3Interface>) {
    let ifs = interfaces(cfg);
    let mut lags: BTreeMap<u32, Lag> = BTreeMap::new();
    for i in &ifs {
        if let Some(name) = text(i, "name")
            && let Some(n) = ae_number(&name)
        {
            lags.insert(n, lag_from(i, &name, links));
        }
    }
    for i in &ifs {
        let (Some(name), Some((ae, _))) = (text(i, "name"), bundle_of(i)) else {
            continue;
        };
        if let Some(lag) = ae_number(&ae).and_then(|n| lags.get_mut(&n)) {
            lag.links.get_or_insert_with(Vec::new).push(name);
        }
    }
    let mut l3 = Vec::new();
    for i in &ifs {
        let Some(name) = text(i, "name") else {
            continue;
        };
        if name == "irb" || name == "vlan" {
            for u in i.children_named("unit") {
                let unit = text(u, "name").and_then(|n| VlanId::parse(&n).ok());
                l3.extend(unit.and_then(|n| unit_l3(u, format!("irb.{n}"))));
            }
            continue;
        }
        if is_management(&name) {
            continue;
        }
        let unit0 = i
            .children_named("unit")
            .find(|u| text(u, "name").as_deref() == Some("0"));
        if let Some(mut l) = unit0.and_then(|u| unit_l3(u, name.clone())) {
            let own = links.iter().find(|l| l.name == name);
            l.description = own.and_then(|o| o.description.clone());
            l.enabled = own.and_then(|o| o.enabled).or(Some(true));
            l.mtu = own.and_then(|o| o.mtu);
            l3.push(l);
        }
    }
    (lags.into_values().collect(), l3)
}

/// What rendering reads from the running configuration besides the plan.
pub struct Running<'a> {
    pub cfg: Option<&'a XmlElement>,
    pub parsed: &'a JunosConfig,
    pub style: Style,
}

fn iface(name: &str) -> El {
    El::new("interface").child(El::leaf("name", name))
}

fn running_iface<'a>(r: &Running<'a>, name: &str) -> Option<&'a XmlElement> {
    interfaces(r.cfg)
        .into_iter()
        .find(|i| text(i, "name").as_deref() == Some(name))
}

fn lag_name(c: &LagChange) -> Result<String, LagRenderError> {
    if c.before.is_some() {
        return Ok(c.name.clone());
    }
    match c.after.as_ref().and_then(Lag::number) {
        Some(n) => Ok(format!("ae{n}")),
        None => Err(LagRenderError {
            name: c.name.clone(),
            reason: "an aggregate's name must end in its number on Junos (ae0, ae1, ...)",
        }),
    }
}

/// The `<configuration>` children of a plan's aggregate and address steps, in the plan's order
/// (Junos applies one edit whole at commit, so the order only keeps the rendering readable).
pub fn render_lag_l3(plan: &Plan, r: &Running<'_>) -> Result<Vec<El>, LagRenderError> {
    let mut ifs = El::new("interfaces");
    let mut vlans: Vec<El> = Vec::new();
    let mut upserted: Vec<&String> = Vec::new();
    for step in plan.steps() {
        match step {
            Step::MembersLeave(c) => ifs.children.extend(leave(c, r)),
            Step::LagDelete(c) => {
                let n = lag_name(c)?;
                ifs.push(El::delete("interface").child(El::leaf("name", &n)));
            }
            Step::LagUpsert(c) => {
                upserted.push(&c.name);
                ifs.children.extend(upsert_lag(c, r)?);
            }
            Step::MembersJoin(c) => {
                // LACP is the aggregate's on Junos, not its members': a changed mode alone is
                // written on the aggregate.
                if c.changed("lacp") && !upserted.contains(&&c.name) {
                    ifs.children.extend(upsert_lag(c, r)?);
                }
                ifs.children.extend(join(c, r)?);
            }
            Step::L3Delete(c) => {
                let (i, v) = delete_l3(c, r);
                ifs.children.extend(i);
                vlans.extend(v);
            }
            Step::L3Upsert(c) => {
                let (i, v) = upsert_l3(c, plan, r);
                ifs.children.extend(i);
                vlans.extend(v);
            }
            Step::VlanUpsert(_) | Step::VlanDelete(_) | Step::Link(_) => {}
        }
    }
    let mut out = Vec::new();
    if let Some(ch) = chassis(plan, r)? {
        out.push(ch);
    }
    if !vlans.is_empty() {
        let outer = match r.style {
            Style::Mx => "bridge-domains",
            Style::Ex | Style::Els => "vlans",
        };
        out.push(El::new(outer).children(vlans));
    }
    if !ifs.children.is_empty() {
        out.push(ifs);
    }
    Ok(out)
}

/// `device-count` raised to cover every aggregate the plan creates (never lowered).
fn chassis(plan: &Plan, r: &Running<'_>) -> Result<Option<El>, LagRenderError> {
    let have = device_count(r.cfg);
    let mut need = have;
    for c in plan.lags.iter().filter(|c| c.after.is_some()) {
        let n = lag_name(c)?;
        need = need.max(ae_number(&n).map_or(0, |n| n + 1));
    }
    Ok((need > have).then(|| {
        El::new("chassis").child(
            El::new("aggregated-devices")
                .child(El::new("ethernet").child(El::leaf("device-count", need.to_string()))),
        )
    }))
}

fn leave(c: &LagChange, r: &Running<'_>) -> Vec<El> {
    c.links_remove
        .iter()
        .map(|m| {
            let opt = running_iface(r, m)
                .and_then(bundle_of)
                .map_or(member_options(r.style), |(_, o)| o);
            iface(m).child(El::new(opt).child(El::delete("ieee-802.3ad")))
        })
        .collect()
}

fn upsert_lag(c: &LagChange, r: &Running<'_>) -> Result<Vec<El>, LagRenderError> {
    let name = lag_name(c)?;
    let Some(after) = &c.after else {
        return Ok(vec![]);
    };
    let fresh = c.before.is_none();
    let mut opts = El::new("aggregated-ether-options");
    if fresh || c.changed("lacp") {
        let had = c
            .before
            .as_ref()
            .is_some_and(|b| matches!(b.lacp, Some(LacpMode::Active | LacpMode::Passive)));
        match after.lacp.unwrap_or(LacpMode::Active) {
            LacpMode::On if had => opts.push(El::delete("lacp")),
            LacpMode::On => {}
            m => {
                let mode = if m == LacpMode::Passive {
                    "passive"
                } else {
                    "active"
                };
                let mut l = El::new("lacp").child(El::new(mode));
                if had {
                    // `active` and `passive` are one choice; replacing keeps only the new one.
                    l = l.attr("operation", "replace");
                }
                opts.push(l);
            }
        }
    }
    if c.changed("minimum_links") {
        let had = c.before.as_ref().and_then(|b| b.minimum_links).is_some();
        match after.minimum_links {
            Some(m) => opts.push(El::leaf("minimum-links", m.to_string())),
            None if had => opts.push(El::delete("minimum-links")),
            None => {}
        }
    }
    let mut out = Vec::new();
    if fresh || !opts.children.is_empty() {
        out.push(iface(&name).child(opts));
    }
    if let Some(s) = &c.settings {
        let mut s = s.clone();
        s.after.name = name;
        out.extend(render_link(&s, r.parsed, r.style));
    }
    Ok(out)
}

/// Members bundled into the aggregate: their own unit 0 goes (Junos refuses a member with a
/// logical unit), and `802.3ad aeN` is written under the style's options.
fn join(c: &LagChange, r: &Running<'_>) -> Result<Vec<El>, LagRenderError> {
    if c.after.is_none() {
        return Ok(vec![]);
    }
    let name = lag_name(c)?;
    let mut out = Vec::new();
    for m in &c.links_add {
        let mut el = iface(m);
        let old = running_iface(r, m);
        for u in old.into_iter().flat_map(|i| i.children_named("unit")) {
            if let Some(n) = text(u, "name") {
                el.push(El::delete("unit").child(El::leaf("name", n)));
            }
        }
        if let Some((_, o)) = old.and_then(bundle_of)
            && o != member_options(r.style)
        {
            el.push(El::new(o).child(El::delete("ieee-802.3ad")));
        }
        el.push(
            El::new(member_options(r.style))
                .child(El::new("ieee-802.3ad").child(El::leaf("bundle", &name))),
        );
        out.push(el);
    }
    Ok(out)
}

/// The interface and unit an L3 resource is written on: (`irb`|`vlan`, N) or (port, 0).
fn l3_target(name: &str, vlan: Option<VlanId>, style: Style) -> (String, String) {
    match vlan {
        Some(v) => (vlan_iface(style).to_owned(), v.to_string()),
        None => (name.to_owned(), "0".to_owned()),
    }
}

fn l3_vlan(c: &L3Change) -> Option<VlanId> {
    c.after
        .as_ref()
        .or(c.before.as_ref())
        .and_then(L3Interface::vlan)
}

/// The name the VLAN has (or is given by this plan), as the VLAN renderer names it.
fn vlan_name(id: VlanId, plan: &Plan, r: &Running<'_>) -> String {
    let planned = plan
        .vlans
        .iter()
        .find(|v| v.id == id)
        .and_then(|v| v.after.as_ref())
        .and_then(|a| a.name.clone());
    planned
        .or_else(|| r.parsed.vlan_by_id(id.get()).map(|v| v.name.clone()))
        .unwrap_or_else(|| generated_name(id))
}

fn bind_tag(style: Style) -> (&'static str, &'static str) {
    match style {
        Style::Mx => ("domain", "routing-interface"),
        Style::Ex | Style::Els => ("vlan", "l3-interface"),
    }
}

/// Whether the running VLAN (bridge domain) `name` has a layer-3 interface bound: deleting one that
/// is not there is refused by some NETCONF servers.
fn is_bound(r: &Running<'_>, name: &str) -> bool {
    let (outer, (entry, tag)) = match r.style {
        Style::Mx => ("bridge-domains", bind_tag(r.style)),
        Style::Ex | Style::Els => ("vlans", bind_tag(r.style)),
    };
    r.cfg
        .and_then(|c| c.child(outer))
        .into_iter()
        .flat_map(|v| v.children_named(entry))
        .find(|v| text(v, "name").as_deref() == Some(name))
        .is_some_and(|v| v.child(tag).is_some())
}

fn delete_l3(c: &L3Change, r: &Running<'_>) -> (Vec<El>, Vec<El>) {
    let vlan = l3_vlan(c);
    let (ifname, unit) = l3_target(&c.name, vlan, r.style);
    if let Some(v) = vlan {
        let (entry, tag) = bind_tag(r.style);
        let bound = r
            .parsed
            .vlan_by_id(v.get())
            .filter(|x| is_bound(r, &x.name))
            .map(|x| {
                El::new(entry)
                    .child(El::leaf("name", &x.name))
                    .child(El::delete(tag))
            });
        let u = El::delete("unit").child(El::leaf("name", unit));
        return (vec![iface(&ifname).child(u)], bound.into_iter().collect());
    }
    let mut fam = El::new("family");
    if !c.ipv4_remove.is_empty() {
        fam.push(El::delete("inet"));
    }
    if !c.ipv6_remove.is_empty() {
        fam.push(El::delete("inet6"));
    }
    let u = El::new("unit").child(El::leaf("name", unit)).child(fam);
    (vec![iface(&ifname).child(u)], vec![])
}

fn address(a: &IpCidr) -> El {
    El::new("address").child(El::leaf("name", a.to_string()))
}

/// `family inet` / `inet6` changes: removed addresses, the primary flag moved, added addresses.
fn families(c: &L3Change, a: &L3Interface) -> El {
    let mut inet = El::new("inet");
    let mut inet6 = El::new("inet6");
    for x in &c.ipv4_remove {
        inet.push(El::delete("address").child(El::leaf("name", x.to_string())));
    }
    for x in &c.ipv6_remove {
        inet6.push(El::delete("address").child(El::leaf("name", x.to_string())));
    }
    let old_primary = c.before.as_ref().and_then(L3Interface::primary);
    let new_primary = a.primary();
    if let Some(o) = old_primary
        && old_primary != new_primary
        && !c.ipv4_remove.contains(&o)
    {
        inet.push(address(&o).child(El::delete("primary")));
    }
    for x in &c.ipv4_add {
        let mut el = address(x);
        if Some(*x) == new_primary {
            el.push(El::new("primary"));
        }
        inet.push(el);
    }
    if let Some(p) = new_primary
        && old_primary != new_primary
        && !c.ipv4_add.contains(&p)
    {
        inet.push(address(&p).child(El::new("primary")));
    }
    if c.changed("mtu")
        && let Some(m) = a.mtu
    {
        inet.push(El::leaf("mtu", m.to_string()));
    }
    for x in &c.ipv6_add {
        inet6.push(address(x));
    }
    let mut fam = El::new("family");
    if !inet.children.is_empty() {
        fam.push(inet);
    }
    if !inet6.children.is_empty() {
        fam.push(inet6);
    }
    fam
}

fn upsert_l3(c: &L3Change, plan: &Plan, r: &Running<'_>) -> (Vec<El>, Vec<El>) {
    let Some(a) = &c.after else {
        return (vec![], vec![]);
    };
    let vlan = l3_vlan(c);
    let (ifname, unit) = l3_target(&c.name, vlan, r.style);
    let mut out = Vec::new();
    let mut u = El::new("unit").child(El::leaf("name", &unit));
    // A VLAN interface's description and state are its unit's; a routed port's the port's.
    let mut own = if vlan.is_some() {
        None
    } else {
        Some(iface(&ifname))
    };
    let holder = own.as_mut().unwrap_or(&mut u);
    let configured = running_iface(r, &ifname);
    let written = match vlan {
        Some(_) => configured
            .into_iter()
            .flat_map(|i| i.children_named("unit"))
            .find(|x| text(x, "name").as_deref() == Some(unit.as_str())),
        None => configured,
    };
    // Deleting a statement that is not there is refused by some NETCONF servers.
    let has = |tag: &str| written.is_some_and(|w| w.child(tag).is_some());
    if c.changed("description") {
        match &a.description {
            Some(d) => holder.push(El::leaf("description", d)),
            None if has("description") => holder.push(El::delete("description")),
            None => {}
        }
    }
    if c.changed("enabled") {
        match a.enabled {
            Some(false) => holder.push(El::new("disable")),
            _ if has("disable") => holder.push(El::delete("disable")),
            _ => {}
        }
    }
    if c.make_routed {
        let sw = configured
            .into_iter()
            .flat_map(|i| i.children_named("unit"))
            .filter(|x| text(x, "name").as_deref() == Some("0"))
            .filter_map(|x| x.child("family"))
            .flat_map(|f| f.elements())
            .find(|f| f.name == "ethernet-switching" || f.name == "bridge")
            .map(|f| f.name.clone());
        if let Some(f) = sw {
            out.push(
                iface(&ifname).child(
                    El::new("unit")
                        .child(El::leaf("name", "0"))
                        .child(El::new("family").child(El::delete(&f))),
                ),
            );
        }
    }
    if let Some(o) = own
        && o.children.len() > 1
    {
        out.push(o);
    }
    let fam = families(c, a);
    if !fam.children.is_empty() {
        u.push(fam);
    }
    if u.children.len() > 1 {
        out.push(iface(&ifname).child(u));
    }
    let mut bind = Vec::new();
    if let Some(v) = vlan
        && c.before.is_none()
    {
        let (entry, tag) = bind_tag(r.style);
        bind.push(
            El::new(entry)
                .child(El::leaf("name", vlan_name(v, plan, r)))
                .child(El::leaf(tag, format!("{}.{unit}", vlan_iface(r.style)))),
        );
    }
    (out, bind)
}

/// The interfaces a plan's aggregate and address steps write (`aeN`, members, `irb`/`vlan`, routed
/// ports), and the VLANs whose binding they change: what a restore puts back.
pub fn touched(plan: &Plan, style: Style) -> (Vec<String>, Vec<VlanId>) {
    let mut ifs: Vec<String> = Vec::new();
    let mut vlans = Vec::new();
    for c in &plan.lags {
        ifs.extend(lag_name(c).ok());
        ifs.extend(c.links_add.iter().chain(&c.links_remove).cloned());
    }
    for c in &plan.l3 {
        let v = l3_vlan(c);
        ifs.push(l3_target(&c.name, v, style).0);
        vlans.extend(v);
    }
    ifs.sort();
    ifs.dedup();
    (ifs, vlans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::junos::config::{configuration, parse_config};
    use crate::junos::link::parse_links;
    use crate::transport::netconf::reply::parse_document;
    use netgw_models::plan::l3::{L3Context, plan_l3};
    use netgw_models::plan::lag::plan_lags;
    use netgw_models::plan::{PlanRules, Policy, plan};
    use netgw_models::resource::Vlan;
    use serde_json::{Value, json};

    const ELS: &str = "<rpc-reply><configuration><vlans><vlan><name>servers</name><vlan-id>100</vlan-id></vlan></vlans><interfaces>\
        <interface><name>ge-0/0/1</name><unit><name>0</name><family><ethernet-switching/></family></unit></interface>\
        <interface><name>ge-0/0/2</name><unit><name>0</name><family><ethernet-switching/></family></unit></interface>\
        <interface><name>ge-0/0/3</name><unit><name>0</name><family><ethernet-switching/></family></unit></interface>\
        </interfaces></configuration></rpc-reply>";

    fn doc(xml: &str) -> XmlElement {
        parse_document(xml).unwrap()
    }

    /// The plan of `lags` and `l3` against the configuration `xml`, merged.
    fn planned(xml: &str, lags: Value, l3: Value) -> Plan {
        let root = doc(xml);
        let parsed = parse_config(&root);
        let links = parse_links(&parsed, &[]);
        let (ol, o3) = parse_lag_l3(configuration(&root), &links);
        let vlans = vec![Vlan::new(VlanId::new(100).unwrap())];
        let rules = PlanRules::default();
        let mut p = plan(
            &[],
            &vlans,
            Policy::Merge,
            &[],
            &links,
            Policy::Merge,
            &rules,
        );
        let d: Vec<Lag> = serde_json::from_value(lags).unwrap();
        plan_lags(&mut p, &d, &ol, Policy::Merge, &rules);
        let d3: Vec<L3Interface> = serde_json::from_value(l3).unwrap();
        let cx = L3Context {
            desired_vlans: &[],
            observed_vlans: &vlans,
            observed_links: &links,
        };
        plan_l3(&mut p, &d3, &o3, Policy::Merge, &cx);
        p
    }

    fn rendered(xml: &str, p: &Plan, style: Style) -> String {
        let root = doc(xml);
        let parsed = parse_config(&root);
        let r = Running {
            cfg: configuration(&root),
            parsed: &parsed,
            style,
        };
        El::new("configuration")
            .children(render_lag_l3(p, &r).unwrap())
            .to_xml()
    }

    fn lag_and_irb() -> Plan {
        planned(
            ELS,
            json!([{"name": "ae0", "links": ["ge-0/0/1", "ge-0/0/2"], "lacp": "active", "minimum_links": 1}]),
            json!([{"name": "irb.100", "ipv4": ["10.1.100.1/24", "10.9.0.1/24"], "ipv6": ["2001:db8:100::1/64"]}]),
        )
    }

    #[test]
    fn els_renders_the_aggregate_members_and_irb() {
        let x = rendered(ELS, &lag_and_irb(), Style::Els);
        assert_eq!(
            x,
            "<configuration>\
             <chassis><aggregated-devices><ethernet><device-count>1</device-count></ethernet></aggregated-devices></chassis>\
             <vlans><vlan><name>servers</name><l3-interface>irb.100</l3-interface></vlan></vlans>\
             <interfaces>\
             <interface><name>ae0</name><aggregated-ether-options><lacp><active/></lacp><minimum-links>1</minimum-links></aggregated-ether-options></interface>\
             <interface><name>ge-0/0/1</name><unit operation=\"delete\"><name>0</name></unit><gigether-options><ieee-802.3ad><bundle>ae0</bundle></ieee-802.3ad></gigether-options></interface>\
             <interface><name>ge-0/0/2</name><unit operation=\"delete\"><name>0</name></unit><gigether-options><ieee-802.3ad><bundle>ae0</bundle></ieee-802.3ad></gigether-options></interface>\
             <interface><name>irb</name><unit><name>100</name><family>\
             <inet><address><name>10.1.100.1/24</name><primary/></address><address><name>10.9.0.1/24</name></address></inet>\
             <inet6><address><name>2001:db8:100::1/64</name></address></inet6></family></unit></interface>\
             </interfaces></configuration>"
        );
    }

    #[test]
    fn ex_and_mx_write_their_own_hierarchy() {
        let p = lag_and_irb();
        let ex = rendered(ELS, &p, Style::Ex);
        assert!(
            ex.contains("<ether-options><ieee-802.3ad><bundle>ae0</bundle>"),
            "{ex}"
        );
        assert!(
            ex.contains("<vlan><name>servers</name><l3-interface>vlan.100</l3-interface></vlan>"),
            "{ex}"
        );
        assert!(
            ex.contains("<interface><name>vlan</name><unit><name>100</name>"),
            "{ex}"
        );
        let mx = rendered(ELS, &p, Style::Mx);
        assert!(
            mx.contains("<bridge-domains><domain><name>servers</name><routing-interface>irb.100</routing-interface></domain></bridge-domains>"),
            "{mx}"
        );
        assert!(mx.contains("<gigether-options><ieee-802.3ad>"), "{mx}");
    }

    #[test]
    fn static_aggregate_has_no_lacp_and_routed_port_drops_switching() {
        let p = planned(
            ELS,
            json!([{"name": "ae3", "links": ["ge-0/0/1"], "lacp": "on"}]),
            json!([{"name": "ge-0/0/3", "ipv4": ["192.0.2.1/31"]}]),
        );
        let x = rendered(ELS, &p, Style::Els);
        assert!(x.contains("<device-count>4</device-count>"), "{x}");
        assert!(
            x.contains("<interface><name>ae3</name><aggregated-ether-options/></interface>"),
            "{x}"
        );
        assert!(!x.contains("lacp"), "{x}");
        assert!(
            x.contains("<interface><name>ge-0/0/3</name><unit><name>0</name><family><ethernet-switching operation=\"delete\"/></family></unit></interface>"),
            "{x}"
        );
        assert!(
            x.contains("<interface><name>ge-0/0/3</name><unit><name>0</name><family><inet><address><name>192.0.2.1/31</name><primary/></address></inet></family></unit></interface>"),
            "{x}"
        );
    }

    /// What the ELS rendering leaves on a device (as netgw-lab and Junos store it).
    const APPLIED: &str = "<rpc-reply><configuration>\
        <chassis><aggregated-devices><ethernet><device-count>1</device-count></ethernet></aggregated-devices></chassis>\
        <vlans><vlan><name>servers</name><vlan-id>100</vlan-id><l3-interface>irb.100</l3-interface></vlan></vlans><interfaces>\
        <interface><name>ge-0/0/1</name><gigether-options><ieee-802.3ad><bundle>ae0</bundle></ieee-802.3ad></gigether-options></interface>\
        <interface><name>ge-0/0/2</name><gigether-options><ieee-802.3ad><bundle>ae0</bundle></ieee-802.3ad></gigether-options></interface>\
        <interface><name>ge-0/0/3</name><unit><name>0</name><family><inet><address><name>192.0.2.1/31</name><primary/></address></inet></family></unit></interface>\
        <interface><name>ae0</name><aggregated-ether-options><lacp><active/></lacp><minimum-links>1</minimum-links></aggregated-ether-options></interface>\
        <interface><name>irb</name><unit><name>100</name><family>\
        <inet><address><name>10.9.0.1/24</name></address><address><name>10.1.100.1/24</name><primary/></address></inet>\
        <inet6><address><name>2001:db8:100::1/64</name></address></inet6></family></unit></interface>\
        <interface><name>em0</name><unit><name>0</name><family><inet><address><name>10.0.0.5/24</name></address></inet></family></unit></interface>\
        </interfaces></configuration></rpc-reply>";

    #[test]
    fn the_running_configuration_reads_back_and_plans_nothing() {
        let root = doc(APPLIED);
        let links = parse_links(&parse_config(&root), &[]);
        let (lags, l3) = parse_lag_l3(configuration(&root), &links);
        assert_eq!(
            serde_json::to_value(&lags).unwrap(),
            json!([{"name": "ae0", "links": ["ge-0/0/1", "ge-0/0/2"], "lacp": "active",
                "minimum_links": 1, "enabled": true, "state": "present"}])
        );
        assert_eq!(
            serde_json::to_value(&l3).unwrap(),
            json!([
                {"name": "ge-0/0/3", "ipv4": ["192.0.2.1/31"], "enabled": true, "state": "present"},
                {"name": "irb.100", "ipv4": ["10.1.100.1/24", "10.9.0.1/24"],
                 "ipv6": ["2001:db8:100::1/64"], "enabled": true, "state": "present"}
            ])
        );
        let p = planned(
            APPLIED,
            json!([{"name": "ae0", "links": ["ge-0/0/1", "ge-0/0/2"], "lacp": "active", "minimum_links": 1}]),
            json!([{"name": "irb.100", "ipv4": ["10.1.100.1/24", "10.9.0.1/24"], "ipv6": ["2001:db8:100::1/64"]},
                   {"name": "ge-0/0/3", "ipv4": ["192.0.2.1/31"]}]),
        );
        assert!(p.lags.is_empty() && p.l3.is_empty(), "{p:?}");
    }

    #[test]
    fn changes_move_the_primary_swap_lacp_and_take_members_out() {
        let p = planned(
            APPLIED,
            json!([{"name": "ae0", "links": ["ge-0/0/1"], "lacp": "passive"}]),
            json!([{"name": "irb.100", "ipv4": ["10.9.0.1/24"]}]),
        );
        let x = rendered(APPLIED, &p, Style::Els);
        assert!(
            x.contains("<lacp operation=\"replace\"><passive/></lacp>"),
            "{x}"
        );
        assert!(!x.contains("ieee-802.3ad"), "merge keeps the members: {x}");
        assert!(
            x.contains("<address><name>10.9.0.1/24</name><primary/></address>"),
            "{x}"
        );
        assert!(!x.contains("device-count"), "{x}");
        let gone = planned(
            APPLIED,
            json!([{"name": "ae0", "state": "absent"}]),
            json!([{"name": "irb.100", "state": "absent"}]),
        );
        let x = rendered(APPLIED, &gone, Style::Els);
        assert_eq!(
            x,
            "<configuration><vlans><vlan><name>servers</name><l3-interface operation=\"delete\"/></vlan></vlans><interfaces>\
             <interface><name>ge-0/0/1</name><gigether-options><ieee-802.3ad operation=\"delete\"/></gigether-options></interface>\
             <interface><name>ge-0/0/2</name><gigether-options><ieee-802.3ad operation=\"delete\"/></gigether-options></interface>\
             <interface operation=\"delete\"><name>ae0</name></interface>\
             <interface><name>irb</name><unit operation=\"delete\"><name>100</name></unit></interface>\
             </interfaces></configuration>"
        );
    }

    #[test]
    fn a_restore_puts_back_the_members_and_drops_the_aggregate_and_irb() {
        let p = lag_and_irb();
        let now = parse_config(&doc(APPLIED));
        let x = crate::junos::render::render_restore(&doc(ELS), &now, &p, Style::Els)
            .unwrap()
            .to_xml();
        for want in [
            "<vlan><name>servers</name><vlan-id>100</vlan-id></vlan>",
            "<interface operation=\"delete\"><name>ae0</name></interface>",
            "<interface operation=\"replace\"><name>ge-0/0/1</name><unit><name>0</name><family><ethernet-switching/></family></unit></interface>",
            "<interface operation=\"delete\"><name>irb</name></interface>",
        ] {
            assert!(x.contains(want), "{want} in {x}");
        }
    }
}
