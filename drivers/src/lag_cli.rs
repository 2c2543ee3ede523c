//! Aggregates and routed interfaces in the CLI syntax EOS, IOS and NX-OS share: read from the
//! running configuration's `interface` stanzas (`channel-group N mode M`, `port-channel min-links N`,
//! `ip address ... [secondary]`, `ipv6 address ...`), and the lines of a plan's aggregate and address
//! steps ([`Plan::steps`]). What differs between the three is a [`Syntax`].

use netgw_models::plan::l3::{IpCidr, L3Change, L3Interface};
use netgw_models::plan::lag::{LacpMode, Lag, LagChange};
use netgw_models::plan::{LinkChange, Step};
use netgw_models::resource::{Link, same_interface};
use std::collections::BTreeMap;

use crate::driver::RenderError;

/// How one platform spells aggregates and addresses.
#[derive(Debug, Clone, Copy)]
pub struct Syntax {
    /// `Port-Channel` (EOS), `Port-channel` (IOS), `port-channel` (NX-OS).
    pub lag_prefix: &'static str,
    /// IOS writes IPv4 addresses with a dotted mask (`ip address A 255.255.255.0`).
    pub dotted_mask: bool,
    /// `port-channel min-links N` (EOS, IOS) or `lacp min-links N` (NX-OS).
    pub min_links: &'static str,
}

pub const EOS: Syntax = Syntax {
    lag_prefix: "Port-Channel",
    dotted_mask: false,
    min_links: "port-channel",
};

pub const IOS: Syntax = Syntax {
    lag_prefix: "Port-channel",
    dotted_mask: true,
    min_links: "port-channel",
};

pub const NXOS: Syntax = Syntax {
    lag_prefix: "port-channel",
    dotted_mask: false,
    min_links: "lacp",
};

/// NX-OS features a plan needs before its lines (`feature lacp` for LACP aggregates, `feature
/// interface-vlan` for SVIs); enabling one already on changes nothing.
pub fn nxos_features(p: &netgw_models::plan::Plan) -> Vec<String> {
    let mut out = Vec::new();
    let lacp = p.lags.iter().any(|c| {
        c.after
            .as_ref()
            .is_some_and(|a| matches!(a.lacp, Some(LacpMode::Active | LacpMode::Passive)))
    });
    if lacp {
        out.push("feature lacp".to_owned());
    }
    let svi =
        p.l3.iter()
            .any(|c| c.after.is_some() && c.after.as_ref().and_then(L3Interface::vlan).is_some());
    if svi {
        out.push("feature interface-vlan".to_owned());
    }
    out
}

#[derive(Default)]
struct Stanza {
    channel_group: Option<(u32, LacpMode)>,
    min_links: Option<u16>,
    ipv4: Vec<IpCidr>,
    ipv6: Vec<IpCidr>,
}

/// `ip address A/L`, `ip address A MASK`, with or without `secondary`.
fn parse_address(words: &[&str]) -> Option<IpCidr> {
    let words = match words {
        [a @ .., "secondary"] => a,
        a => a,
    };
    match words {
        [a] => a.parse().ok(),
        [a, mask] => {
            let m = u32::from(mask.parse::<std::net::Ipv4Addr>().ok()?);
            if m.leading_ones() != m.count_ones() {
                return None;
            }
            format!("{a}/{}", m.count_ones()).parse().ok()
        }
        _ => None,
    }
}

fn parse_stanzas(text: &str) -> Vec<(String, Stanza)> {
    let mut out: Vec<(String, Stanza)> = Vec::new();
    let mut current: Option<(String, Stanza)> = None;
    for line in text.lines() {
        let indented = line.starts_with(' ');
        let words: Vec<&str> = line.split_whitespace().collect();
        if !indented {
            out.extend(current.take());
            if let ["interface", name] = words.as_slice() {
                current = Some(((*name).to_owned(), Stanza::default()));
            }
            continue;
        }
        let Some((_, s)) = current.as_mut() else {
            continue;
        };
        match words.as_slice() {
            ["channel-group", n, "mode", m] => {
                let mode = match *m {
                    "active" => LacpMode::Active,
                    "passive" => LacpMode::Passive,
                    _ => LacpMode::On,
                };
                s.channel_group = n.parse().ok().map(|n| (n, mode));
            }
            ["port-channel" | "lacp", "min-links", n] => s.min_links = n.parse().ok(),
            ["ip", "address", rest @ ..] => s.ipv4.extend(parse_address(rest)),
            ["ipv6", "address", a] => s.ipv6.extend(a.parse::<IpCidr>().ok()),
            _ => {}
        }
    }
    out.extend(current);
    out
}

fn lag_number(syn: &Syntax, name: &str) -> Option<u32> {
    let n = name.to_ascii_lowercase();
    n.strip_prefix(&syn.lag_prefix.to_ascii_lowercase())?
        .parse()
        .ok()
}

/// The aggregates and routed interfaces of a running configuration. `links` (the device's observed
/// links) give an aggregate's and an interface's own settings. Management interfaces are left out.
pub fn parse_running_config(
    text: &str,
    links: &[Link],
    syn: &Syntax,
    mgmt: &[&str],
) -> (Vec<Lag>, Vec<L3Interface>) {
    let stanzas = parse_stanzas(text);
    let mut lags: BTreeMap<u32, Lag> = BTreeMap::new();
    let own = |name: &str| links.iter().find(|l| same_interface(&l.name, name));
    let new_lag = |n: u32| {
        let name = format!("{}{n}", syn.lag_prefix);
        let mut lag = Lag::new(name.clone());
        lag.links = Some(Vec::new());
        if let Some(l) = own(&name) {
            lag.set_settings(Link {
                name: name.clone(),
                ..l.as_desired()
            });
        }
        lag
    };
    for (name, s) in &stanzas {
        if let Some(n) = lag_number(syn, name) {
            let lag = lags.entry(n).or_insert_with(|| new_lag(n));
            lag.minimum_links = s.min_links.filter(|m| *m > 0);
        }
        if let Some((n, mode)) = s.channel_group {
            let lag = lags.entry(n).or_insert_with(|| new_lag(n));
            lag.lacp.get_or_insert(mode);
            lag.links.get_or_insert_with(Vec::new).push(name.clone());
        }
    }
    let mut l3 = Vec::new();
    for (name, s) in &stanzas {
        let svi = name.to_ascii_lowercase().starts_with("vlan");
        if mgmt.iter().any(|m| m.eq_ignore_ascii_case(name))
            || !(svi || !s.ipv4.is_empty() || !s.ipv6.is_empty())
        {
            continue;
        }
        let mut i = L3Interface::new(name.clone());
        i.ipv4 = (!s.ipv4.is_empty()).then(|| s.ipv4.clone());
        i.ipv6 = (!s.ipv6.is_empty()).then(|| s.ipv6.clone());
        if let Some(l) = own(name) {
            i.description = l.description.clone();
            i.enabled = l.enabled;
            i.mtu = l.mtu;
        }
        l3.push(i);
    }
    (lags.into_values().collect(), l3)
}

/// The device's name for a planned aggregate: its own when it has it, else the prefix and number.
fn lag_name(syn: &Syntax, c: &LagChange) -> Result<String, RenderError> {
    if c.before.is_some() {
        return Ok(c.name.clone());
    }
    let lag = c.after.as_ref().or(c.before.as_ref());
    match lag.and_then(Lag::number) {
        Some(n) => Ok(format!("{}{n}", syn.lag_prefix)),
        None => Err(RenderError {
            line: c.name.clone(),
            reason: "an aggregate's name must end in its number on this platform",
        }),
    }
}

fn address_text(syn: &Syntax, a: &IpCidr) -> String {
    if syn.dotted_mask && a.addr.is_ipv4() {
        let m = if a.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(a.prefix))
        };
        format!("{} {}", a.addr, std::net::Ipv4Addr::from(m))
    } else {
        a.to_string()
    }
}

/// The lines of one step of a plan that is about aggregates or addresses (`None` for the steps of
/// VLANs and links, which the vendor renders itself). `link` renders a link change the vendor's way
/// (an aggregate's own settings are one).
pub fn render_step(
    syn: &Syntax,
    step: &Step<'_>,
    link: &dyn Fn(&LinkChange) -> Result<Vec<String>, RenderError>,
) -> Option<Result<Vec<String>, RenderError>> {
    Some(match step {
        Step::MembersLeave(c) => Ok(c
            .links_remove
            .iter()
            .flat_map(|m| [format!("interface {m}"), "no channel-group".into()])
            .collect()),
        Step::LagDelete(c) => lag_name(syn, c).map(|n| vec![format!("no interface {n}")]),
        Step::LagUpsert(c) => render_lag(syn, c, link),
        Step::MembersJoin(c) => render_join(syn, c),
        Step::L3Delete(c) => Ok(render_l3_delete(syn, c)),
        Step::L3Upsert(c) => Ok(render_l3(syn, c)),
        Step::VlanUpsert(_) | Step::VlanDelete(_) | Step::Link(_) => return None,
    })
}

fn render_lag(
    syn: &Syntax,
    c: &LagChange,
    link: &dyn Fn(&LinkChange) -> Result<Vec<String>, RenderError>,
) -> Result<Vec<String>, RenderError> {
    let name = lag_name(syn, c)?;
    let mut out = vec![format!("interface {name}")];
    if c.changed("minimum_links") {
        let m = c.after.as_ref().and_then(|a| a.minimum_links);
        out.push(match m {
            Some(m) => format!("{} min-links {m}", syn.min_links),
            None => format!("no {} min-links", syn.min_links),
        });
    }
    if let Some(s) = &c.settings {
        let mut s = s.clone();
        s.after.name = name;
        // The vendor's link lines open with the `interface` line already written.
        let lines = link(&s)?;
        let skip = usize::from(lines.first().is_some_and(|l| l.starts_with("interface ")));
        out.extend(lines.into_iter().skip(skip));
    }
    Ok(out)
}

fn render_join(syn: &Syntax, c: &LagChange) -> Result<Vec<String>, RenderError> {
    let Some(after) = &c.after else {
        return Ok(vec![]);
    };
    let n = lag_name(syn, c)?;
    let n = lag_number(syn, &n).unwrap_or_default();
    let mode = after.lacp.unwrap_or(LacpMode::Active);
    let members: &[String] = if c.changed("lacp") {
        after.members()
    } else {
        &c.links_add
    };
    Ok(members
        .iter()
        .flat_map(|m| {
            [
                format!("interface {m}"),
                format!("channel-group {n} mode {mode}"),
            ]
        })
        .collect())
}

fn render_l3_delete(syn: &Syntax, c: &L3Change) -> Vec<String> {
    let before = c.before.as_ref();
    if before.and_then(L3Interface::vlan).is_some() {
        return vec![format!("no interface {}", c.name)];
    }
    let mut out = vec![format!("interface {}", c.name)];
    out.extend(
        c.ipv6_remove
            .iter()
            .map(|a| format!("no ipv6 address {}", address_text(syn, a))),
    );
    if !c.ipv4_remove.is_empty() {
        out.push("no ip address".into());
    }
    out
}

fn render_l3(syn: &Syntax, c: &L3Change) -> Vec<String> {
    let Some(a) = &c.after else { return vec![] };
    let mut out = vec![format!("interface {}", c.name)];
    if c.make_routed {
        out.push("no switchport".into());
    }
    if c.changed("description") {
        out.push(match &a.description {
            Some(d) => format!("description {d}"),
            None => "no description".into(),
        });
    }
    if c.changed("mtu")
        && let Some(m) = a.mtu
    {
        out.push(format!("mtu {m}"));
    }
    out.extend(ipv4_lines(syn, c, a));
    for x in &c.ipv6_remove {
        out.push(format!("no ipv6 address {}", address_text(syn, x)));
    }
    for x in &c.ipv6_add {
        out.push(format!("ipv6 address {}", address_text(syn, x)));
    }
    if c.changed("enabled") {
        out.push(if a.enabled == Some(false) {
            "shutdown".into()
        } else {
            "no shutdown".into()
        });
    }
    out
}

/// Secondaries that go first (a device refuses a primary that is a secondary still), then the
/// primary (`ip address A` replaces the one there), then the new secondaries.
fn ipv4_lines(syn: &Syntax, c: &L3Change, a: &L3Interface) -> Vec<String> {
    let before = c
        .before
        .as_ref()
        .and_then(|b| b.ipv4.clone())
        .unwrap_or_default();
    let after = a.ipv4.clone().unwrap_or_default();
    let mut out = Vec::new();
    if after.is_empty() {
        if !before.is_empty() {
            out.push("no ip address".into());
        }
        return out;
    }
    let primary_changes = before.first() != after.first();
    for x in before.iter().skip(1) {
        if !after[1..].contains(x) {
            out.push(format!("no ip address {} secondary", address_text(syn, x)));
        }
    }
    if primary_changes {
        out.push(format!("ip address {}", address_text(syn, &after[0])));
    }
    for x in &after[1..] {
        if !before.iter().skip(1).any(|b| b == x) {
            out.push(format!("ip address {} secondary", address_text(syn, x)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use netgw_models::plan::l3::{L3Context, plan_l3};
    use netgw_models::plan::lag::plan_lags;
    use netgw_models::plan::{PlanRules, Policy, plan};
    use netgw_models::resource::{Vlan, VlanId};
    use serde_json::{Value, json};

    fn lines(syn: &Syntax, p: &netgw_models::plan::Plan) -> Vec<String> {
        let link = |c: &LinkChange| Ok(vec![format!("interface {}", c.after.name), "LINK".into()]);
        p.steps()
            .iter()
            .filter_map(|s| render_step(syn, s, &link))
            .flat_map(|r| r.unwrap())
            .collect()
    }

    fn planned(
        lags: Value,
        l3: Value,
        ol: &[Lag],
        o3: &[L3Interface],
        policy: Policy,
    ) -> netgw_models::plan::Plan {
        let rules = PlanRules {
            reserved_vlans: Default::default(),
            default_native_vlan: VlanId::new(1).ok(),
        };
        let vlans = vec![Vlan::new(VlanId::new(10).unwrap())];
        let mut p = plan(&[], &vlans, Policy::Merge, &[], &[], Policy::Merge, &rules);
        let d: Vec<Lag> = serde_json::from_value(lags).unwrap();
        plan_lags(&mut p, &d, ol, policy, &rules);
        let d3: Vec<L3Interface> = serde_json::from_value(l3).unwrap();
        let cx = L3Context {
            desired_vlans: &[],
            observed_vlans: &vlans,
            observed_links: &[],
        };
        plan_l3(&mut p, &d3, o3, policy, &cx);
        p
    }

    #[test]
    fn running_config_gives_aggregates_and_addresses() {
        let text = "interface Ethernet1\n   channel-group 10 mode active\n!\ninterface Ethernet2\n   channel-group 10 mode active\n!\ninterface Port-Channel10\n   port-channel min-links 2\n   switchport mode trunk\n!\ninterface Vlan10\n   ip address 10.0.10.1/24\n   ip address 10.9.0.1/24 secondary\n   ipv6 address 2001:db8::1/64\n!\ninterface Management1\n   ip address 192.0.2.1/24\n!\ninterface Vlan20\n!\n";
        let links: Vec<Link> = serde_json::from_value(json!([{"name": "Port-Channel10", "mode": "trunk",
            "trunk_vlans": "1-4094", "native_vlan": 1, "enabled": true}, {"name": "Vlan10", "enabled": true, "mtu": 1500}]))
        .unwrap();
        let (lags, l3) = parse_running_config(text, &links, &EOS, &["Management1"]);
        assert_eq!(lags.len(), 1);
        let l = &lags[0];
        assert_eq!(
            (l.name.as_str(), l.members(), l.lacp, l.minimum_links),
            (
                "Port-Channel10",
                &["Ethernet1".to_owned(), "Ethernet2".to_owned()][..],
                Some(LacpMode::Active),
                Some(2)
            )
        );
        assert_eq!(l.trunk_vlans.as_ref().unwrap().to_range_string(), "1-4094");
        let names: Vec<&str> = l3.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["Vlan10", "Vlan20"]);
        assert_eq!(json!(l3[0].ipv4), json!(["10.0.10.1/24", "10.9.0.1/24"]));
        assert_eq!((l3[0].enabled, l3[0].mtu), (Some(true), Some(1500)));
        let ios = "interface Vlan10\n ip address 10.0.10.1 255.255.255.0\n ip address 10.9.0.1 255.255.0.0 secondary\n!\n";
        let (_, l3) = parse_running_config(ios, &[], &IOS, &[]);
        assert_eq!(json!(l3[0].ipv4), json!(["10.0.10.1/24", "10.9.0.1/16"]));
    }

    #[test]
    fn lines_follow_the_plan_order_and_each_dialect() {
        let p = planned(
            json!([{"name": "Po10", "links": ["Et1", "Et2"], "lacp": "active", "minimum_links": 1, "mode": "trunk"}]),
            json!([{"name": "Vlan10", "ipv4": ["10.0.10.1/24", "10.9.0.1/24"], "ipv6": ["2001:db8::1/64"]}]),
            &[],
            &[],
            Policy::Merge,
        );
        assert_eq!(
            lines(&EOS, &p),
            [
                "interface Port-Channel10",
                "port-channel min-links 1",
                "LINK",
                "interface Ethernet1",
                "channel-group 10 mode active",
                "interface Ethernet2",
                "channel-group 10 mode active",
                "interface Vlan10",
                "ip address 10.0.10.1/24",
                "ip address 10.9.0.1/24 secondary",
                "ipv6 address 2001:db8::1/64",
            ]
        );
        let ios = lines(&IOS, &p);
        assert!(
            ios.contains(&"ip address 10.0.10.1 255.255.255.0".to_owned()),
            "{ios:?}"
        );
        assert!(
            ios.contains(&"interface Port-channel10".to_owned()),
            "{ios:?}"
        );
    }

    #[test]
    fn removal_takes_members_out_first_and_secondaries_before_the_primary() {
        let ol: Vec<Lag> = serde_json::from_value(
            json!([{"name": "Port-Channel10", "links": ["Ethernet1"], "lacp": "on"}]),
        )
        .unwrap();
        let o3: Vec<L3Interface> = serde_json::from_value(
            json!([{"name": "Vlan10", "ipv4": ["10.0.10.1/24", "10.9.0.1/24"]}]),
        )
        .unwrap();
        let p = planned(
            json!([{"name": "Po10", "state": "absent"}]),
            json!([{"name": "Vlan10", "ipv4": ["10.9.0.1/24"]}]),
            &ol,
            &o3,
            Policy::Replace,
        );
        assert_eq!(
            lines(&EOS, &p),
            [
                "interface Ethernet1",
                "no channel-group",
                "no interface Port-Channel10",
                "interface Vlan10",
                "no ip address 10.9.0.1/24 secondary",
                "ip address 10.9.0.1/24",
                "no shutdown",
            ]
        );
    }
}
