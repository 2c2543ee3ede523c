//! The aggregate summary tables, as the devices print them: IOS `show etherchannel summary`, NX-OS
//! and EOS `show port-channel summary`; each member's flags from whether it is bundled (up, and its
//! far end bundling in a mode that bundles with its own), down, or neither (stand-alone /
//! individual).

use super::cli::short_name;
use super::state::{DeviceState, Dialect};

/// An aggregate's number and members (name, `channel-group` mode), in port order.
fn groups(st: &DeviceState) -> Vec<(u32, Vec<(&str, &str)>)> {
    let mut out: Vec<(u32, Vec<(&str, &str)>)> = Vec::new();
    for (name, f) in &st.interfaces {
        let lower = name.to_ascii_lowercase();
        if let Some(n) = lower
            .strip_prefix("port-channel")
            .and_then(|r| r.parse::<u32>().ok())
            && !out.iter().any(|(g, _)| *g == n)
        {
            out.push((n, Vec::new()));
        }
        if let Some((n, mode)) = &f.channel_group {
            match out.iter_mut().find(|(g, _)| g == n) {
                Some((_, m)) => m.push((name.as_str(), mode.as_str())),
                None => out.push((*n, vec![(name.as_str(), mode.as_str())])),
            }
        }
    }
    out.sort_by_key(|(n, _)| *n);
    out
}

/// A member's flag: `P` bundled, `D` down, else `I` (stand-alone, individual).
fn member_flag(st: &DeviceState, name: &str) -> &'static str {
    match st.iface(name) {
        Some(f) if !f.status_up() => "D",
        Some(_) if st.member_bundled(name) => "P",
        _ => "I",
    }
}

/// The aggregate's own status: up while a member is bundled.
fn aggregate_up(st: &DeviceState, members: &[(&str, &str)]) -> bool {
    members.iter().any(|(n, _)| member_flag(st, n) == "P")
}

/// The aggregate's layer: `R` routed (`no switchport` on it), else `S`.
fn layer(st: &DeviceState, d: Dialect, n: u32) -> &'static str {
    let name = st.resolve_iface(&format!("port-channel{n}"));
    let routed = name
        .and_then(|p| st.iface(&p))
        .is_some_and(|f| f.mode == super::state::Mode::Routed);
    match (routed, d) {
        (true, _) => "R",
        _ => "S",
    }
}

const IOS_LEGEND: &str = "Flags:  D - down        P - bundled in port-channel
        I - stand-alone s - suspended
        H - Hot-standby (LACP only)
        R - Layer3      S - Layer2
        U - in use      N - not in use, no aggregation
        f - failed to allocate aggregator

        M - not in use, no aggregation due to minimum links not met
        m - not in use, port not aggregated due to minimum links not met
        u - unsuitable for bundling
        d - default port

        w - waiting to be aggregated
";

const NXOS_LEGEND: &str = "Flags:  D - Down        P - Up in port-channel (members)
        I - Individual  H - Hot-standby (LACP only)
        s - Suspended   r - Module-removed
        b - BFD Session Wait
        S - Switched    R - Routed
        U - Up (port-channel)
        p - Up in delay-lacp mode (member)
        M - Not in use. Min-links not met
--------------------------------------------------------------------------------
Group Port-       Type     Protocol  Member Ports
      Channel
--------------------------------------------------------------------------------
";

const EOS_LEGEND: &str = "Flags
-------------------------- ----------------------------- -------------------------
   a - LACP Active            p - LACP Passive           * - static fallback
   F - Fallback enabled       f - Fallback configured    ^ - individual fallback
   U - In Use                 D - Down
   + - In-Sync                - - Out-of-Sync            i - incompatible with agg
   P - bundled in Po          s - suspended              G - Aggregable
   I - Individual             S - ShortTimeout           w - wait for agg
";

/// IOS `show etherchannel summary`, NX-OS / EOS `show port-channel summary`.
pub fn show_summary(st: &DeviceState, d: Dialect) -> String {
    let all = groups(st);
    let mut s = String::new();
    match d {
        Dialect::Ios => {
            s.push_str(IOS_LEGEND);
            s.push_str(&format!(
                "Number of channel-groups in use: {}\nNumber of aggregators:           {}\n\n",
                all.len(),
                all.len()
            ));
            s.push_str("Group  Port-channel  Protocol    Ports\n");
            s.push_str("------+-------------+-----------+-----------------------------------------------\n");
        }
        Dialect::Nxos => s.push_str(NXOS_LEGEND),
        _ => {
            s.push_str(EOS_LEGEND);
            s.push_str(&format!(
                "\nNumber of channels in use: {}\nNumber of aggregators: {}\n\n",
                all.len(),
                all.len()
            ));
            s.push_str("   Port-Channel       Protocol     Ports\n");
            s.push_str("------------------ --------------- --------------------------------\n");
        }
    }
    for (n, members) in &all {
        s.push_str(&row(st, d, *n, members));
    }
    s
}

/// One aggregate's row (its members on one line).
fn row(st: &DeviceState, d: Dialect, n: u32, members: &[(&str, &str)]) -> String {
    let up = aggregate_up(st, members);
    let lacp = members.iter().find(|(_, m)| *m != "on").map(|(_, m)| *m);
    let ports: Vec<String> = members
        .iter()
        .map(|(name, _)| {
            let flag = member_flag(st, name);
            let flag = match (d, flag) {
                (Dialect::Eos, "P") => "PG+",
                (Dialect::Eos, "I") => "G-",
                _ => flag,
            };
            format!("{}({flag})", short_name(d, name))
        })
        .collect();
    let po = format!("Po{n}");
    match d {
        Dialect::Ios => {
            let flags = format!("{}{}", layer(st, d, n), if up { "U" } else { "D" });
            let proto = if lacp.is_some() { "LACP" } else { "-" };
            format!(
                "{n:<7}{:<16}{proto:<10}{}\n",
                format!("{po}({flags})"),
                ports.join("       ")
            )
        }
        Dialect::Nxos => {
            let flags = format!("{}{}", layer(st, d, n), if up { "U" } else { "D" });
            let proto = if lacp.is_some() { "LACP" } else { "NONE" };
            let ports = if ports.is_empty() {
                "--".to_owned()
            } else {
                ports.join("    ")
            };
            format!(
                "{n:<6}{:<12}Eth      {proto:<10}{ports}\n",
                format!("{po}({flags})")
            )
        }
        _ => {
            let proto = match lacp {
                Some("passive") => "LACP(p)",
                Some(_) => "LACP(a)",
                None => "Static",
            };
            format!(
                "   {:<19}{proto:<13}{}\n",
                format!("{po}({})", if up { "U" } else { "D" }),
                ports.join(" ")
            )
        }
    }
}
