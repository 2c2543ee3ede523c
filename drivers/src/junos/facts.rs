//! Facts from Junos RPC replies (`get-software-information`, `get-chassis-inventory`,
//! `get-interface-information`, `get-lldp-neighbors-information`, `get-vlan-information` /
//! `get-bridge-instance-information`, and for aggregate members `get-lacp-interface-information`), with the running configuration as the fall-back for what a
//! device does not answer (fake-switches answers none of these RPCs but `get-interface-information
//! terse`).

use super::config::JunosConfig;
use super::render::{find, text};
use super::vlan::{VlanInfo, parse_vlan_information};
use crate::lag_state::LagMembers;
use crate::transport::netconf::XmlElement;
use netgw_models::facts::{
    AdminStatus, DeviceFacts, InterfaceFacts, LldpNeighbor, MemberState, OperStatus, VlanFacts,
    normalize_mac, split_hostname,
};
use std::collections::BTreeMap;

/// What `get-software-information` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SoftwareInfo {
    pub host_name: Option<String>,
    pub model: Option<String>,
    pub version: Option<String>,
}

/// Parse `get-software-information`; on a multi-RE system the first routing engine's answer.
pub fn parse_software_information(root: &XmlElement) -> Option<SoftwareInfo> {
    let sw = find(root, "software-information")?;
    Some(SoftwareInfo {
        host_name: text(sw, "host-name"),
        model: text(sw, "product-model"),
        version: text(sw, "junos-version").or_else(|| package_version(sw)),
    })
}

/// The Junos version of a release without `<junos-version>` (before 15.1), in py-junos-eznc's order:
/// the `junos` package (`JUNOS Software Release [12.3X48-D40.5]`), `junos-version` (`Junos: 14.2R4`),
/// Node Slicing's `JUNOS version : 17.4-...`, NFX's MGD `version-information` release. Another
/// package's version (AI-Scripts, the host OS) is not the Junos version.
fn package_version(sw: &XmlElement) -> Option<String> {
    let packages: Vec<(String, String)> = sw
        .children_named("package-information")
        .filter_map(|p| Some((text(p, "name")?, text(p, "comment")?)))
        .collect();
    let from = |wanted: &str| {
        packages
            .iter()
            .find(|(n, _)| n == wanted)
            .map(|(_, c)| c.clone())
    };
    let last_word = |c: String| c.split_whitespace().last().map(str::to_owned);
    from("junos")
        .and_then(|c| bracketed(&c))
        .or_else(|| {
            from("junos-version").and_then(|c| c.rsplit(':').next().map(|v| v.trim().to_string()))
        })
        .or_else(|| from("JUNOS version").and_then(last_word))
        .or_else(|| {
            let mgd = sw
                .children_named("version-information")
                .find(|v| text(v, "component").as_deref() == Some("MGD"))?;
            let release = text(mgd, "release")?;
            // `15.1X53-D45.3.secure [dc-builder]`: the version ends at its last digit.
            let end = release.rfind(|c: char| c.is_ascii_digit())? + 1;
            Some(release[..end].to_owned())
        })
}

fn bracketed(s: &str) -> Option<String> {
    let start = s.find('[')? + 1;
    let end = s[start..].find(']')? + start;
    let v = s[start..end].trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// `(serial, description)` of the chassis in `get-chassis-inventory`.
pub fn parse_chassis_inventory(root: &XmlElement) -> Option<(Option<String>, Option<String>)> {
    let chassis = find(root, "chassis")?;
    // A chassis without a serial of its own (some SRX and virtual platforms) is known by its
    // backplane's or midplane's, as py-junos-eznc reads it.
    let module_serial = |name: &str| {
        chassis
            .children_named("chassis-module")
            .find(|m| text(m, "name").as_deref() == Some(name))
            .and_then(|m| text(m, "serial-number"))
    };
    let serial = text(chassis, "serial-number")
        .or_else(|| module_serial("Backplane"))
        .or_else(|| module_serial("Midplane"));
    Some((serial, text(chassis, "description")))
}

fn admin(s: &str) -> Option<AdminStatus> {
    match s.trim().to_ascii_lowercase().as_str() {
        "up" => Some(AdminStatus::Up),
        "down" => Some(AdminStatus::Down),
        _ => None,
    }
}

fn oper(s: &str) -> Option<OperStatus> {
    match s.trim().to_ascii_lowercase().as_str() {
        "up" => Some(OperStatus::Up),
        "down" => Some(OperStatus::Down),
        "testing" => Some(OperStatus::Testing),
        "dormant" => Some(OperStatus::Dormant),
        "notpresent" | "not-present" => Some(OperStatus::NotPresent),
        "lowerlayerdown" => Some(OperStatus::LowerLayerDown),
        _ => None,
    }
}

/// `1000mbps`, `10Gbps`, `100Kbps` -> bits per second; `Auto`, `Unlimited` and unknown -> `None`.
pub fn parse_speed(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_lowercase();
    let digits: String = t
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let unit = t[digits.len()..].trim();
    let n: f64 = digits.parse().ok()?;
    let mult = match unit {
        "gbps" | "g" => 1e9,
        "mbps" | "m" => 1e6,
        "kbps" | "k" => 1e3,
        "bps" => 1.0,
        _ => return None,
    };
    Some((n * mult).round() as u64)
}

/// Physical interfaces of `get-interface-information` (terse or detailed).
pub fn parse_interface_information(root: &XmlElement) -> BTreeMap<String, InterfaceFacts> {
    let mut out = BTreeMap::new();
    let Some(info) = find(root, "interface-information") else {
        return out;
    };
    for p in info.children_named("physical-interface") {
        let Some(name) = text(p, "name") else {
            continue;
        };
        let f = InterfaceFacts {
            admin_status: text(p, "admin-status").and_then(|s| admin(&s)),
            oper_status: text(p, "oper-status").and_then(|s| oper(&s)),
            mtu: text(p, "mtu").and_then(|s| s.parse().ok()),
            speed: text(p, "speed").and_then(|s| parse_speed(&s)),
            mac: text(p, "current-physical-address")
                .or_else(|| text(p, "hardware-physical-address"))
                .and_then(|s| normalize_mac(&s)),
            description: text(p, "description"),
            ifindex: text(p, "snmp-index").and_then(|s| s.parse().ok()),
            switchport: None,
        };
        out.insert(name, f);
    }
    out
}

fn subtype(s: &str) -> String {
    // "Mac address" -> "mac_address", "Interface name" -> "interface_name", "Locally assigned" -> "local".
    let t = s.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    match t.as_str() {
        "locally_assigned" => "local".into(),
        _ => t,
    }
}

/// `get-lldp-neighbors-information`: local port -> neighbours.
pub fn parse_lldp_neighbors(root: &XmlElement) -> BTreeMap<String, Vec<LldpNeighbor>> {
    let mut out: BTreeMap<String, Vec<LldpNeighbor>> = BTreeMap::new();
    let Some(info) = find(root, "lldp-neighbors-information") else {
        return out;
    };
    for n in info.children_named("lldp-neighbor-information") {
        let Some(local) = text(n, "lldp-local-port-id").or_else(|| text(n, "lldp-local-interface"))
        else {
            continue;
        };
        let nb = LldpNeighbor {
            remote_system_name: text(n, "lldp-remote-system-name"),
            remote_port: text(n, "lldp-remote-port-id")
                .or_else(|| text(n, "lldp-remote-port-description")),
            remote_port_description: text(n, "lldp-remote-port-description"),
            remote_chassis_id: text(n, "lldp-remote-chassis-id"),
            remote_system_description: text(n, "lldp-remote-system-description"),
            remote_chassis_id_subtype: text(n, "lldp-remote-chassis-id-subtype")
                .map(|s| subtype(&s)),
            remote_port_id_subtype: text(n, "lldp-remote-port-id-subtype").map(|s| subtype(&s)),
        };
        out.entry(local).or_default().push(nb);
    }
    out
}

/// A member's state from its `lag-lacp-protocol` entry, by Junos' `show lacp interfaces` field
/// descriptions: `Collecting distributing` is the bundled state. `Attached`, `Waiting`, and
/// `Collecting` or `Distributing` alone (independent control) are on the way in or held there until
/// the partner is in sync, so the member carries nothing: not bundled. Junos' standby is no mux state
/// (link protection prints it beside the name). `Detached` is down when the receive machine says the
/// port is inoperable (`Port disabled`) or says nothing; with any other receive state (`Defaulted`:
/// no LACPDU from the far end, `Expired`, `Current`) the port is up and LACP runs, but the far end
/// does not bundle it: not bundled, as IOS flags a stand-alone port `I`.
pub fn lacp_member_state(mux: &str, receive: Option<&str>) -> MemberState {
    let norm = |s: &str| s.trim().to_ascii_lowercase().replace(['_', '-'], " ");
    match norm(mux).as_str() {
        "collecting distributing" => MemberState::Bundled,
        "detached" => match receive.map(norm).as_deref() {
            None | Some("port disabled") => MemberState::Down,
            Some(_) => MemberState::NotBundled,
        },
        _ => MemberState::NotBundled,
    }
}

/// `get-lacp-interface-information`: per `lacp-interface-information`, the aggregate
/// (`lag-lacp-header/aggregate-name`) and its members' states from `lag-lacp-protocol` (`name`,
/// `lacp-mux-state`, `lacp-receive-state`), the paths of PyEZ's `LacpPortTable`, in the reply's
/// order. Static aggregates (no LACP) are not in the reply, so their members have no state.
pub fn parse_lacp_members(root: &XmlElement) -> Vec<LagMembers> {
    let mut out: Vec<LagMembers> = Vec::new();
    let mut infos = Vec::new();
    collect_named(root, "lacp-interface-information", &mut infos);
    for info in infos {
        let Some(name) = info
            .child("lag-lacp-header")
            .and_then(|h| text(h, "aggregate-name"))
        else {
            continue;
        };
        let members = info
            .children_named("lag-lacp-protocol")
            .filter_map(|p| {
                let m = text(p, "name")?;
                let mux = text(p, "lacp-mux-state")?;
                let rx = text(p, "lacp-receive-state");
                Some((m, lacp_member_state(&mux, rx.as_deref())))
            })
            .collect();
        out.push(LagMembers { name, members });
    }
    out
}

/// Every element named `name` under `el` (itself included), in document order, not looking inside
/// a match.
fn collect_named<'a>(el: &'a XmlElement, name: &str, out: &mut Vec<&'a XmlElement>) {
    if el.name == name {
        out.push(el);
        return;
    }
    for c in el.elements() {
        collect_named(c, name, out);
    }
}

/// Local ports whose neighbour in `get-lldp-neighbors-information` has no remote port id: the brief
/// table leaves it out for some neighbours (a locally assigned id), the per-port
/// `get-lldp-interface-neighbors` has it, as NAPALM reads it.
pub fn ports_missing_remote_port_id(root: &XmlElement) -> Vec<String> {
    let Some(info) = find(root, "lldp-neighbors-information") else {
        return Vec::new();
    };
    info.children_named("lldp-neighbor-information")
        .filter(|n| text(n, "lldp-remote-port-id").is_none())
        .filter_map(|n| text(n, "lldp-local-port-id").or_else(|| text(n, "lldp-local-interface")))
        .collect()
}

/// A remote port id read port by port: the id, its subtype, and the neighbour it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePortId {
    pub id: String,
    pub subtype: Option<String>,
    pub system_name: Option<String>,
}

/// `get-lldp-interface-neighbors` for `port`: the remote port id, from the entry whose local interface
/// is `port` (a reply about another port is not this port's answer).
pub fn parse_lldp_interface_port_id(root: &XmlElement, port: &str) -> Option<RemotePortId> {
    let info = find(root, "lldp-neighbors-information")?;
    info.children_named("lldp-neighbor-information")
        .filter(|n| {
            text(n, "lldp-local-interface").as_deref() == Some(port)
                || text(n, "lldp-local-port-id").as_deref() == Some(port)
        })
        .find_map(|n| {
            Some(RemotePortId {
                id: text(n, "lldp-remote-port-id")?,
                subtype: text(n, "lldp-remote-port-id-subtype").map(|s| subtype(&s)),
                system_name: text(n, "lldp-remote-system-name"),
            })
        })
}

/// Put the per-port remote port ids into the neighbours read from the brief table: into the neighbour
/// without an id that has the same system name (an answer naming another neighbour is not its).
pub fn apply_remote_port_ids(
    neighbors: &mut BTreeMap<String, Vec<LldpNeighbor>>,
    ids: BTreeMap<String, RemotePortId>,
) {
    for (port, r) in ids {
        let Some(n) = neighbors.get_mut(&port).and_then(|v| {
            v.iter_mut().find(|n| {
                n.remote_port_id_subtype.is_none() && n.remote_system_name == r.system_name
            })
        }) else {
            continue;
        };
        n.remote_port = Some(r.id);
        n.remote_port_id_subtype = r.subtype;
    }
}

/// The replies facts are built from; `None` for an RPC the device did not answer.
#[derive(Debug, Default)]
pub struct FactsInputs<'a> {
    pub software: Option<&'a XmlElement>,
    pub chassis: Option<&'a XmlElement>,
    /// `get-interface-information` (detailed), or terse when that is all the device answers.
    pub interfaces: Option<&'a XmlElement>,
    pub lldp: Option<&'a XmlElement>,
    /// `get-vlan-information` or `get-bridge-instance-information`.
    pub vlans: Option<&'a XmlElement>,
    pub config: Option<&'a JunosConfig>,
}

/// Assemble facts: RPC answers first, the configuration for what they leave out.
pub fn build_facts(inputs: &FactsInputs<'_>) -> DeviceFacts {
    let mut f = DeviceFacts {
        vendor: Some("juniper".into()),
        platform: Some("junos".into()),
        ..Default::default()
    };
    let sw = inputs
        .software
        .and_then(parse_software_information)
        .unwrap_or_default();
    let mut host = sw.host_name.clone();
    if let Some(cfg) = inputs.config
        && host.is_none()
    {
        host = cfg.host_name.as_ref().map(|h| match &cfg.domain_name {
            Some(d) if !h.contains('.') => format!("{h}.{d}"),
            _ => h.clone(),
        });
    }
    if let Some((short, fqdn)) = host.as_deref().and_then(split_hostname) {
        f.hostname = Some(short);
        f.fqdn = Some(fqdn);
    }
    f.platform_version = sw.version;
    f.model = sw.model.map(|m| m.to_ascii_uppercase());
    if let Some((serial, descr)) = inputs.chassis.and_then(parse_chassis_inventory) {
        f.serial = serial;
        if f.model.is_none() {
            f.model = descr;
        }
    }
    if let Some(i) = inputs.interfaces {
        f.interfaces = parse_interface_information(i);
    }
    if let Some(cfg) = inputs.config {
        for i in &cfg.interfaces {
            if i.name.contains('.') {
                continue;
            }
            let e = f.interfaces.entry(i.name.clone()).or_default();
            if e.description.is_none() {
                e.description = i.description.clone();
            }
            if e.mtu.is_none() {
                e.mtu = i.mtu;
            }
            if e.admin_status.is_none() {
                e.admin_status = Some(if i.disabled {
                    AdminStatus::Down
                } else {
                    AdminStatus::Up
                });
            }
        }
    }
    if let Some(l) = inputs.lldp {
        f.lldp_neighbors = parse_lldp_neighbors(l);
    }
    let oper: BTreeMap<u16, VlanInfo> =
        inputs.vlans.map(parse_vlan_information).unwrap_or_default();
    if !oper.is_empty() {
        f.vlans = oper
            .into_iter()
            .map(|(id, v)| (id, VlanFacts::named(v.name)))
            .collect();
    } else if let Some(cfg) = inputs.config {
        f.vlans = cfg
            .vlans
            .iter()
            .filter_map(|v| Some((v.id?, VlanFacts::named(v.name.clone()))))
            .collect();
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::netconf::reply::parse_document;
    use serde_json::Value;
    use std::path::Path;

    /// The mux states Junos documents for `show lacp interfaces`, each with the receive state a
    /// member shows beside it, as member states; the aggregates and members in the reply's order.
    #[test]
    fn lacp_mux_states_as_member_states() {
        use MemberState::*;
        for (mux, rx, want) in [
            ("Collecting distributing", Some("Current"), Bundled),
            ("Attached", Some("Current"), NotBundled),
            ("Waiting", Some("Current"), NotBundled),
            ("Collecting", Some("Current"), NotBundled),
            ("Detached", Some("Defaulted"), NotBundled),
            ("Detached", Some("Port disabled"), Down),
            ("Detached", None, Down),
        ] {
            assert_eq!(lacp_member_state(mux, rx), want, "{mux} {rx:?}");
        }
        let root = parse_document(
            "<rpc-reply><lacp-interface-information-list>\
             <lacp-interface-information><lag-lacp-header><aggregate-name>ae2</aggregate-name></lag-lacp-header>\
             <lag-lacp-protocol><name>ge-0/0/3</name><lacp-receive-state>Current</lacp-receive-state>\
             <lacp-mux-state>Collecting distributing</lacp-mux-state></lag-lacp-protocol>\
             <lag-lacp-protocol><name>ge-0/0/1</name><lacp-receive-state>Port disabled</lacp-receive-state>\
             <lacp-mux-state>Detached</lacp-mux-state></lag-lacp-protocol></lacp-interface-information>\
             <lacp-interface-information><lag-lacp-header><aggregate-name>ae0</aggregate-name></lag-lacp-header>\
             <lag-lacp-protocol><name>xe-0/0/0:1</name><lacp-receive-state>Defaulted</lacp-receive-state>\
             <lacp-mux-state>Detached</lacp-mux-state></lag-lacp-protocol></lacp-interface-information>\
             </lacp-interface-information-list></rpc-reply>",
        )
        .unwrap();
        let got = parse_lacp_members(&root);
        let flat: Vec<(String, Vec<(String, MemberState)>)> =
            got.into_iter().map(|l| (l.name, l.members)).collect();
        assert_eq!(
            flat,
            [
                (
                    "ae2".to_owned(),
                    vec![
                        ("ge-0/0/3".to_owned(), Bundled),
                        ("ge-0/0/1".to_owned(), Down)
                    ]
                ),
                (
                    "ae0".to_owned(),
                    vec![("xe-0/0/0:1".to_owned(), NotBundled)]
                ),
            ]
        );
    }

    fn real(path: &str) -> XmlElement {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/conformance/junos")
            .join(path);
        let s = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        parse_document(&s).unwrap()
    }

    #[test]
    fn software_information_shapes() {
        let s =
            parse_software_information(&real("facts/srx3600_simple/get-software-information.xml"))
                .unwrap();
        assert_eq!(
            s,
            SoftwareInfo {
                host_name: Some("lsys500".into()),
                model: Some("srx3600".into()),
                version: Some("12.3X48-D40.5".into())
            }
        );
        let m = parse_software_information(&real("facts/multi_re/get-software-information.xml"))
            .unwrap();
        assert_eq!(
            (m.host_name.as_deref(), m.version.as_deref()),
            (Some("pyez"), Some("14.2R4"))
        );
        assert_eq!(parse_speed("1000mbps"), Some(1_000_000_000));
        assert_eq!(parse_speed("10Gbps"), Some(10_000_000_000));
        assert_eq!(parse_speed("Unlimited"), None);
        assert_eq!(parse_speed("Auto"), None);
    }

    /// Cross-check with NAPALM's expected get_interfaces / get_lldp_neighbors for the same replies.
    #[test]
    fn interfaces_and_lldp_match_napalm_expected_results() {
        let dir = "facts/mx_iffdown";
        let ifs =
            parse_interface_information(&real(&format!("{dir}/get-interface-information.xml")));
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/conformance/junos")
            .join(dir)
            .join("napalm_expected_result.json");
        let napalm: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let mut compared = 0;
        for (name, v) in napalm.as_object().unwrap() {
            if name.contains('.') {
                continue; // napalm lists logical units too; netgw's facts are per physical port
            }
            let ours = ifs.get(name).unwrap_or_else(|| panic!("{name} missing"));
            assert_eq!(
                ours.admin_status == Some(AdminStatus::Up),
                v["is_enabled"].as_bool().unwrap(),
                "{name}"
            );
            assert_eq!(
                ours.oper_status == Some(OperStatus::Up),
                v["is_up"].as_bool().unwrap(),
                "{name}"
            );
            let speed_mbps = ours.speed.map(|s| (s / 1_000_000) as i64).unwrap_or(-1);
            assert_eq!(speed_mbps, v["speed"].as_f64().unwrap() as i64, "{name}");
            let napalm_mac = v["mac_address"].as_str().unwrap().to_ascii_lowercase();
            assert_eq!(
                ours.mac.clone().unwrap_or_else(|| "none".into()),
                napalm_mac,
                "{name}"
            );
            assert_eq!(
                ours.description.clone().unwrap_or_default(),
                v["description"].as_str().unwrap(),
                "{name}"
            );
            compared += 1;
        }
        assert!(compared > 10, "{compared}");

        for case in ["normal", "old_without_remote_port_id"] {
            let dir = format!("facts/lldp_{case}");
            let got =
                parse_lldp_neighbors(&real(&format!("{dir}/get-lldp-neighbors-information.xml")));
            let p = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/conformance/junos")
                .join(&dir)
                .join("napalm_expected_result.json");
            let napalm: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            let napalm = napalm.as_object().unwrap();
            assert_eq!(got.len(), napalm.len(), "{case}");
            for (port, list) in napalm {
                let ours = &got[port];
                for (o, n) in ours.iter().zip(list.as_array().unwrap()) {
                    assert_eq!(
                        o.remote_system_name.as_deref(),
                        n["hostname"].as_str(),
                        "{case} {port}"
                    );
                    assert_eq!(
                        o.remote_port.as_deref(),
                        n["port"].as_str(),
                        "{case} {port}"
                    );
                }
            }
        }
    }

    #[test]
    fn remote_port_ids_missing_from_the_brief_table_come_from_the_per_port_reply() {
        let dir = "facts/napalm_netconf_lldp_neighbors_detail_qfx5110";
        let brief = real(&format!("{dir}/get-lldp-neighbors-information.xml"));
        assert_eq!(ports_missing_remote_port_id(&brief), vec!["ge-2/0/0"]);
        let per_port = real(&format!("{dir}/get-lldp-interface-neighbors.xml"));
        let id = parse_lldp_interface_port_id(&per_port, "ge-2/0/0").unwrap();
        assert_eq!(id.id, "549");
        assert_eq!(id.system_name.as_deref(), Some("EX9208"));
        // The answer about another port is not this port's.
        assert_eq!(parse_lldp_interface_port_id(&per_port, "ge-0/0/1"), None);
        let mut n = parse_lldp_neighbors(&brief);
        assert_eq!(n["ge-2/0/0"][0].remote_port.as_deref(), Some("ge-3/3/1"));
        // An answer naming another neighbour is not this one's.
        let other = RemotePortId {
            system_name: Some("core05".into()),
            ..id.clone()
        };
        apply_remote_port_ids(&mut n, BTreeMap::from([("ge-2/0/0".to_owned(), other)]));
        assert_eq!(n["ge-2/0/0"][0].remote_port.as_deref(), Some("ge-3/3/1"));
        apply_remote_port_ids(&mut n, BTreeMap::from([("ge-2/0/0".to_owned(), id)]));
        assert_eq!(n["ge-2/0/0"][0].remote_port.as_deref(), Some("549"));
        assert!(n["ge-2/0/0"][0].remote_port_id_subtype.is_some());
        assert_eq!(
            n["ge-2/0/0"][0].remote_port_description.as_deref(),
            Some("ge-3/3/1")
        );
        // A brief table with every id asks nothing.
        let full = real("facts/lldp_normal/get-lldp-neighbors-information.xml");
        assert!(ports_missing_remote_port_id(&full).is_empty());
    }
}
