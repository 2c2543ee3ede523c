//! Each aggregate member's bundling state as the platform reports it: the `NAME(FLAGS)` tables of IOS
//! `show etherchannel summary`, NX-OS and EOS `show port-channel summary` (one shape: a bundle per
//! `PoN(FLAGS)` token, its members after it and on the continuation lines below). The flags' meaning
//! is each platform's legend: `P` / `bndl` bundled, `s` / `susp` suspended, `H` / `hot-sby` hot
//! standby, `D` / `down` down; any other (`I` stand-alone or individual, `w` waiting, `u`
//! unsuitable, `M`/`m` minimum links not met) is not bundled.

use netgw_models::facts::MemberState;
use netgw_models::resource::normalize_interface_name;

/// One aggregate's members and their states, names as the device printed them expanded
/// (`Po10` -> `Port-channel10`, `Te0/0/2` -> `TenGigabitEthernet0/0/2`), in the table's order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LagMembers {
    pub name: String,
    pub members: Vec<(String, MemberState)>,
}

/// A member's state from its flags.
pub fn member_state(flags: &str) -> MemberState {
    match flags {
        "bndl" => return MemberState::Bundled,
        "susp" => return MemberState::Suspended,
        "hot-sby" => return MemberState::Standby,
        "down" => return MemberState::Down,
        _ => {}
    }
    // Letter flags: a member can carry several (`PSG+` on EOS, bundled with a short timeout).
    if flags.len() > 5 {
        MemberState::NotBundled
    } else if flags.contains('P') {
        MemberState::Bundled
    } else if flags.contains('s') {
        MemberState::Suspended
    } else if flags.contains('H') {
        MemberState::Standby
    } else if flags.contains('D') {
        MemberState::Down
    } else {
        MemberState::NotBundled
    }
}

/// `NAME(FLAGS)` where NAME is an interface name (a letter first, a digit last): the name and flags.
fn entry(token: &str) -> Option<(&str, &str)> {
    let (name, rest) = token.split_once('(')?;
    let flags = rest.strip_suffix(')')?;
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.ends_with(|c: char| c.is_ascii_digit());
    ok.then_some((name, flags))
}

/// Whether `name` names an aggregate (`Po10`, `Port-channel10`).
fn is_aggregate(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("po")
        && lower
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse::<u32>()
            .is_ok()
}

/// The summary table's aggregates with their members, in order; the legend, counters and headers
/// hold no `NAME(FLAGS)` token and are passed over. An aggregate with no member (`--`) is listed empty.
pub fn parse_bundle_summary(text: &str) -> Vec<LagMembers> {
    let mut out: Vec<LagMembers> = Vec::new();
    for line in text.lines() {
        for token in line.split_whitespace() {
            let Some((name, flags)) = entry(token) else {
                continue;
            };
            if is_aggregate(name) {
                out.push(LagMembers {
                    name: normalize_interface_name(name),
                    members: Vec::new(),
                });
            } else if let Some(lag) = out.last_mut() {
                lag.members
                    .push((normalize_interface_name(name), member_state(flags)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemberState::*;

    #[test]
    fn flags_of_each_legend() {
        for (flags, want) in [
            ("P", Bundled),
            ("bndl", Bundled),
            ("PSG+", Bundled),
            ("s", Suspended),
            ("susp", Suspended),
            ("H", Standby),
            ("D", Down),
            ("G-", NotBundled),
            ("I", NotBundled),
            ("w", NotBundled),
        ] {
            assert_eq!(member_state(flags), want, "{flags}");
        }
    }

    #[test]
    fn continuation_lines_and_empty_aggregates() {
        let text = "Group  Port-channel  Protocol    Ports\n\
                    ------+-------------+-----------+------\n\
                    1      Po1(SU)         LACP      Gi0/1(P)       Gi0/2(s)\n\
                    \x20                                Gi0/3(D)\n\
                    2      Po2(SD)         -         \n\
                    135   Po135(SD)   Eth      NONE      --\n";
        let got = parse_bundle_summary(text);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].name, "Port-channel1");
        assert_eq!(
            got[0].members,
            [
                ("GigabitEthernet0/1".to_owned(), Bundled),
                ("GigabitEthernet0/2".to_owned(), Suspended),
                ("GigabitEthernet0/3".to_owned(), Down)
            ]
        );
        assert!(got[1].members.is_empty() && got[2].members.is_empty());
    }
}
