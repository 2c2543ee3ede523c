//! EOS facts from eAPI JSON: `show version`, `show hostname`, `show interfaces`, `show lldp neighbors
//! [detail]`. Pure functions; each field the device does not report is left out (fake-switches answers
//! `show version` with nothing at all, and facts must still come back).

use std::collections::BTreeMap;

use netgw_models::facts::{
    AdminStatus, DeviceFacts, InterfaceFacts, LldpNeighbor, OperStatus, VlanFacts,
    normalize_mac_short_groups,
};
use serde_json::Value;

/// What `show version` says, as far as it says anything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VersionInfo {
    /// `version`, e.g. `4.15.5M` (NAPALM reports `internalVersion`; we keep the one operators read).
    pub version: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub system_mac: Option<String>,
    /// Seconds since boot: `uptime` where the device reports it, else `now - bootupTimestamp`.
    pub uptime: Option<u64>,
}

fn non_empty(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `show version` (JSON). `now` is the current Unix time, for devices that report only their boot
/// timestamp; `None` leaves such an uptime out (conformance runs are deterministic).
pub fn parse_show_version(v: &Value, now: Option<f64>) -> VersionInfo {
    let uptime = match v.get("uptime").and_then(Value::as_f64) {
        Some(u) if u >= 0.0 => Some(u as u64),
        _ => match (v.get("bootupTimestamp").and_then(Value::as_f64), now) {
            (Some(boot), Some(now)) if now >= boot && boot > 0.0 => Some((now - boot) as u64),
            _ => None,
        },
    };
    VersionInfo {
        version: non_empty(v.get("version")),
        model: non_empty(v.get("modelName")),
        serial: non_empty(v.get("serialNumber")),
        system_mac: non_empty(v.get("systemMacAddress"))
            .and_then(|m| normalize_mac_short_groups(&m)),
        uptime,
    }
}

/// A parsed EOS release: `4.20.5F` -> (4, 20, 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct EosRelease {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

/// Parse the leading `MAJOR.MINOR[.PATCH]` of an EOS version string (`4.14.1-2055159.x (engineering
/// build)`, `4.23.0F`, `4.16.6FX-7060X`). Anything else is unknown.
pub fn parse_release(version: &str) -> Option<EosRelease> {
    let mut nums = version.trim().split('.').map(|part| {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = nums.next()??;
    let minor = nums.next()??;
    let patch = nums.next().flatten().unwrap_or(0);
    Some(EosRelease {
        major,
        minor,
        patch,
    })
}

/// `show hostname` (JSON): (short hostname, fqdn).
pub fn parse_show_hostname(v: &Value) -> (Option<String>, Option<String>) {
    let fqdn = non_empty(v.get("fqdn"));
    let host = non_empty(v.get("hostname")).or_else(|| fqdn.clone());
    let short = host.map(|h| h.split('.').next().unwrap_or(&h).to_owned());
    (short, fqdn)
}

fn oper_status(s: &str) -> Option<OperStatus> {
    Some(match s {
        "up" => OperStatus::Up,
        "down" => OperStatus::Down,
        "testing" => OperStatus::Testing,
        "unknown" => OperStatus::Unknown,
        "dormant" => OperStatus::Dormant,
        "notPresent" => OperStatus::NotPresent,
        "lowerLayerDown" => OperStatus::LowerLayerDown,
        _ => return None,
    })
}

/// `show interfaces` (JSON) as interface facts. `interfaceStatus` `disabled` is an administrative
/// shutdown (NAPALM's `is_enabled`); `lineProtocolStatus` is the operational state; `bandwidth` is in
/// bits per second (0 = not reported); the MAC is `physicalAddress`.
pub fn parse_interfaces_facts(v: &Value) -> BTreeMap<String, InterfaceFacts> {
    let mut out = BTreeMap::new();
    let Some(ifaces) = v.get("interfaces").and_then(Value::as_object) else {
        return out;
    };
    for (name, i) in ifaces {
        let admin_status = i.get("interfaceStatus").and_then(Value::as_str).map(|s| {
            if s == "disabled" {
                AdminStatus::Down
            } else {
                AdminStatus::Up
            }
        });
        let f = InterfaceFacts {
            admin_status,
            oper_status: i
                .get("lineProtocolStatus")
                .and_then(Value::as_str)
                .and_then(oper_status),
            mtu: i
                .get("mtu")
                .and_then(Value::as_u64)
                .and_then(|m| u32::try_from(m).ok()),
            speed: i
                .get("bandwidth")
                .and_then(Value::as_u64)
                .filter(|b| *b > 0),
            mac: non_empty(i.get("physicalAddress")).and_then(|m| normalize_mac_short_groups(&m)),
            description: non_empty(i.get("description")),
            ifindex: None,
            switchport: None,
        };
        out.insert(name.clone(), f);
    }
    out
}

/// The neighbour's port id from `neighborInterfaceInfo`: `interfaceId_v2` where EOS gives it (the id as
/// advertised, the field Arista's own ANTA reads), else `interfaceId`, which older releases print quoted
/// (`"Ethernet1"`).
fn port_id(info: &Value) -> Option<String> {
    non_empty(info.get("interfaceId_v2"))
        .or_else(|| non_empty(info.get("interfaceId")).map(|s| s.trim_matches('"').to_owned()))
        .filter(|s| !s.is_empty())
}

/// LLDP-MIB subtype names from EOS's `chassisIdType` / `interfaceIdType`.
fn subtype(s: &str) -> Option<String> {
    Some(
        match s {
            "macAddress" => "mac_address",
            "interfaceName" => "interface_name",
            "interfaceAlias" => "interface_alias",
            "networkAddress" => "network_address",
            "chassisComponent" => "chassis_component",
            "portComponent" => "port_component",
            "agentCircuitId" => "agent_circuit_id",
            "local" => "local",
            _ => return None,
        }
        .to_owned(),
    )
}

/// `show lldp neighbors detail` (JSON): `lldpNeighbors.PORT.lldpNeighborInfo[]`. Ports with an empty
/// list are left out. MAC-typed chassis ids are normalised; EOS quotes interface-name port ids
/// (`"Ethernet1"`), the quotes are removed.
pub fn parse_lldp_neighbors_detail(v: &Value) -> BTreeMap<String, Vec<LldpNeighbor>> {
    let mut out = BTreeMap::new();
    let Some(ports) = v.get("lldpNeighbors").and_then(Value::as_object) else {
        return out;
    };
    for (port, p) in ports {
        let Some(infos) = p.get("lldpNeighborInfo").and_then(Value::as_array) else {
            continue;
        };
        let mut list = Vec::new();
        for n in infos {
            let chassis_type = n.get("chassisIdType").and_then(Value::as_str).unwrap_or("");
            let chassis = non_empty(n.get("chassisId")).map(|c| {
                if chassis_type == "macAddress" {
                    normalize_mac_short_groups(&c).unwrap_or(c)
                } else {
                    c
                }
            });
            let ii = n.get("neighborInterfaceInfo");
            let port_type = ii
                .and_then(|i| i.get("interfaceIdType"))
                .and_then(Value::as_str)
                .unwrap_or("");
            list.push(LldpNeighbor {
                remote_system_name: non_empty(n.get("systemName")),
                remote_port: ii.and_then(port_id),
                remote_port_description: non_empty(ii.and_then(|i| i.get("interfaceDescription"))),
                remote_chassis_id: chassis,
                remote_system_description: non_empty(n.get("systemDescription")),
                remote_chassis_id_subtype: subtype(chassis_type),
                remote_port_id_subtype: subtype(port_type),
            });
        }
        if !list.is_empty() {
            out.insert(port.clone(), list);
        }
    }
    out
}

/// `show lldp neighbors` (JSON): `lldpNeighbors[] {port, neighborDevice, neighborPort}`, the fallback
/// when the detail command is missing.
pub fn parse_lldp_neighbors(v: &Value) -> BTreeMap<String, Vec<LldpNeighbor>> {
    let mut out: BTreeMap<String, Vec<LldpNeighbor>> = BTreeMap::new();
    for n in v
        .get("lldpNeighbors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(port) = non_empty(n.get("port")) else {
            continue;
        };
        out.entry(port).or_default().push(LldpNeighbor {
            remote_system_name: non_empty(n.get("neighborDevice")),
            remote_port: non_empty(n.get("neighborPort")),
            ..Default::default()
        });
    }
    out
}

/// The outputs facts are built from; any may be missing.
#[derive(Debug, Default, Clone)]
pub struct FactsInputs<'a> {
    pub show_version: Option<&'a Value>,
    pub show_hostname: Option<&'a Value>,
    pub show_interfaces: Option<&'a Value>,
    pub show_vlan: Option<&'a Value>,
    pub show_lldp_neighbors_detail: Option<&'a Value>,
    pub show_lldp_neighbors: Option<&'a Value>,
}

/// Assemble DeviceFacts (vendor `arista`, platform `eos`) from whatever outputs are present.
pub fn build_facts(inputs: &FactsInputs<'_>, now: Option<f64>) -> DeviceFacts {
    let mut f = DeviceFacts {
        vendor: Some("arista".into()),
        platform: Some("eos".into()),
        ..Default::default()
    };
    if let Some(v) = inputs.show_version {
        let info = parse_show_version(v, now);
        f.platform_version = info.version;
        f.model = info.model;
        f.serial = info.serial;
        f.uptime = info.uptime;
    }
    if let Some(h) = inputs.show_hostname {
        let (host, fqdn) = parse_show_hostname(h);
        f.hostname = host;
        f.fqdn = fqdn;
    }
    if let Some(i) = inputs.show_interfaces {
        f.interfaces = parse_interfaces_facts(i);
    }
    if let Some(v) = inputs.show_vlan {
        f.vlans = super::vlan::parse_show_vlan(v)
            .into_iter()
            .filter_map(|v| v.name.map(|n| (v.id.get(), VlanFacts::named(n))))
            .collect();
    }
    if let Some(l) = inputs.show_lldp_neighbors_detail {
        f.lldp_neighbors = parse_lldp_neighbors_detail(l);
    } else if let Some(l) = inputs.show_lldp_neighbors {
        f.lldp_neighbors = parse_lldp_neighbors(l);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const REAL: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/conformance/eos"
    );

    fn load(rel: &str) -> Value {
        let text = std::fs::read_to_string(format!("{REAL}/{rel}"))
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        let v: Value = serde_json::from_str(&text).unwrap();
        // pyeapi keeps the whole runCmds result list; napalm keeps one command's object.
        match v {
            Value::Array(mut a) if a.len() == 1 => a.remove(0),
            other => other,
        }
    }

    #[test]
    fn facts_match_napalm_get_facts() {
        // napalm test/eos/mocked_data/test_get_facts/normal/expected_result.json
        let version = load("facts/napalm_get_facts/show_version.json");
        let hostname = load("facts/napalm_get_facts/show_hostname.json");
        let interfaces = load("facts/napalm_get_facts/show_interfaces.json");
        let f = build_facts(
            &FactsInputs {
                show_version: Some(&version),
                show_hostname: Some(&hostname),
                show_interfaces: Some(&interfaces),
                ..Default::default()
            },
            Some(1466586790.4 + 3600.0),
        );
        assert_eq!(f.hostname.as_deref(), Some("localhost"));
        assert_eq!(f.fqdn.as_deref(), Some("localhost"));
        assert_eq!(f.model.as_deref(), Some("vEOS"));
        assert_eq!(f.serial, None, "napalm: serial_number \"\" -> absent");
        assert_eq!(f.platform_version.as_deref(), Some("4.15.5M"));
        assert_eq!(f.uptime, Some(3600));
        assert_eq!(
            (f.vendor.as_deref(), f.platform.as_deref()),
            (Some("arista"), Some("eos"))
        );
        let names: Vec<&str> = f.interfaces.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "Ethernet1",
                "Ethernet2",
                "Ethernet3",
                "Ethernet4",
                "Management1"
            ]
        );
    }

    #[test]
    fn interfaces_match_napalm_get_interfaces() {
        // napalm test_get_interfaces/normal: is_enabled, description, mtu, mac_address, speed (Mb/s).
        let raw = load("links/napalm_get_interfaces/show_interfaces.json");
        let got = parse_interfaces_facts(&raw);
        let expected = [
            ("Ethernet1", true, 9214, "08:00:27:c6:00:f0", 0.0),
            ("Ethernet2", true, 9214, "08:00:27:10:c4:8f", 0.0),
            ("Ethernet3", true, 9214, "08:00:27:1f:60:43", 0.0),
            ("Ethernet4", true, 9214, "08:00:27:e0:12:d2", 0.0),
            ("Ethernet5", true, 9214, "08:00:27:c6:00:f0", 2.5),
            ("Management1", true, 1500, "08:00:27:20:b9:04", 1000.0),
        ];
        assert_eq!(got.len(), expected.len());
        for (name, enabled, mtu, mac, mbps) in expected {
            let i = &got[name];
            assert_eq!(i.admin_status == Some(AdminStatus::Up), enabled, "{name}");
            assert_eq!(i.mtu, Some(mtu), "{name}");
            assert_eq!(i.mac.as_deref(), Some(mac), "{name}");
            assert_eq!(i.speed.unwrap_or(0), (mbps * 1_000_000.0) as u64, "{name}");
            assert_eq!(i.description, None, "{name}: napalm description \"\"");
            assert_eq!(i.oper_status, Some(OperStatus::Up), "{name}");
        }
    }

    #[test]
    fn lldp_detail_matches_napalm() {
        // napalm test_get_lldp_neighbors_detail/{issue903,issue1153}/expected_result.json
        let raw = load("facts/napalm_lldp_issue903/show_lldp_neighbors__detail.json");
        let got = parse_lldp_neighbors_detail(&raw);
        let n = &got["Ethernet22"][0];
        assert_eq!(n.remote_system_name.as_deref(), Some("linux"));
        assert_eq!(n.remote_port.as_deref(), Some("000c.297b.d2a8"));
        assert_eq!(n.remote_port_description.as_deref(), Some("eth0"));
        assert_eq!(
            n.remote_chassis_id.as_deref(),
            Some("00:0c:29:7b:d2:a8"),
            "napalm: 00:0C:29:7B:D2:A8"
        );
        assert_eq!(n.remote_chassis_id_subtype.as_deref(), Some("mac_address"));
        assert_eq!(n.remote_port_id_subtype.as_deref(), Some("mac_address"));
        assert!(
            n.remote_system_description
                .as_deref()
                .unwrap()
                .starts_with("CentOS Linux 7")
        );

        let raw = load("facts/napalm_lldp_issue1153/show_lldp_neighbors__detail.json");
        let got = parse_lldp_neighbors_detail(&raw);
        let expected: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/conformance/eos/facts/napalm_lldp_issue1153/napalm_expected_result.json"
        ))
        .unwrap();
        let exp = expected.as_object().unwrap();
        assert_eq!(got.len(), exp.len(), "ports with neighbours");
        for (port, list) in exp {
            let mine = &got[port];
            let theirs = list.as_array().unwrap();
            assert_eq!(mine.len(), theirs.len(), "{port}");
            for (m, t) in mine.iter().zip(theirs) {
                assert_eq!(
                    m.remote_system_name.as_deref().unwrap_or(""),
                    t["remote_system_name"],
                    "{port}"
                );
                assert_eq!(
                    m.remote_port.as_deref().unwrap_or(""),
                    t["remote_port"],
                    "{port}"
                );
                assert_eq!(
                    m.remote_port_description.as_deref().unwrap_or(""),
                    t["remote_port_description"],
                    "{port}"
                );
                assert_eq!(
                    m.remote_chassis_id
                        .as_deref()
                        .unwrap_or("")
                        .to_ascii_uppercase(),
                    t["remote_chassis_id"]
                        .as_str()
                        .unwrap()
                        .to_ascii_uppercase(),
                    "{port}"
                );
            }
        }
    }

    #[test]
    fn lldp_summary_matches_napalm_get_lldp_neighbors() {
        // napalm test_get_lldp_neighbors/normal: {"Ethernet2": [{"hostname": "precise64", "port": "0800.27ca.c5be"}], ...}
        let raw = load("facts/napalm_lldp_summary/show_lldp_neighbors.json");
        let got = parse_lldp_neighbors(&raw);
        assert_eq!(
            got["Ethernet1"][0].remote_system_name.as_deref(),
            Some("precise64")
        );
        assert_eq!(
            got["Ethernet1"][0].remote_port.as_deref(),
            Some("0800.274f.332d")
        );
        assert_eq!(
            got["Ethernet2"][0].remote_port.as_deref(),
            Some("0800.27ca.c5be")
        );
    }

    #[test]
    fn empty_or_missing_outputs_degrade_to_absent_fields() {
        // fake-switches: `show version` fails, `show hostname` fails; only interfaces and VLANs come back.
        let f = build_facts(&FactsInputs::default(), Some(1.0));
        assert_eq!(f.vendor.as_deref(), Some("arista"));
        assert_eq!(
            (
                f.platform_version.clone(),
                f.model.clone(),
                f.hostname.clone()
            ),
            (None, None, None)
        );
        let f = build_facts(
            &FactsInputs {
                show_version: Some(&json!({})),
                ..Default::default()
            },
            Some(1.0),
        );
        assert_eq!(f.platform_version, None);
        assert_eq!(f.uptime, None);
        let v = parse_show_version(
            &json!({"version": 4, "modelName": null, "bootupTimestamp": "x"}),
            Some(5.0),
        );
        assert_eq!(v, VersionInfo::default());
    }

    #[test]
    fn releases_parse_or_are_unknown() {
        assert_eq!(
            parse_release("4.15.5M"),
            Some(EosRelease {
                major: 4,
                minor: 15,
                patch: 5
            })
        );
        assert_eq!(
            parse_release("4.14.1-2055159.fldaytonamplspush (engineering build)"),
            Some(EosRelease {
                major: 4,
                minor: 14,
                patch: 1
            })
        );
        assert_eq!(parse_release("4.16.6FX-7060X").map(|r| r.minor), Some(16));
        assert_eq!(
            parse_release("4.23"),
            Some(EosRelease {
                major: 4,
                minor: 23,
                patch: 0
            })
        );
        for bad in ["", "vEOS", "x.1", "4"] {
            assert_eq!(parse_release(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn hostname_short_and_fqdn() {
        let (h, f) =
            parse_show_hostname(&json!({"hostname": "sw1.lab.example", "fqdn": "sw1.lab.example"}));
        assert_eq!(
            (h.as_deref(), f.as_deref()),
            (Some("sw1"), Some("sw1.lab.example"))
        );
        assert_eq!(parse_show_hostname(&json!({})), (None, None));
    }

    /// ANTA's `external_lldp_neighbors` sample: `interfaceId` and `interfaceId_v2` differ (a server's
    /// `iLO` port); the v2 id is the one advertised. Without it, the quoted legacy id is unquoted.
    #[test]
    fn port_id_prefers_interface_id_v2() {
        let both = json!({"interfaceId": "Ethernet1", "interfaceId_v2": "iLO"});
        assert_eq!(port_id(&both).as_deref(), Some("iLO"));
        let legacy = json!({"interfaceId": "\"Ethernet49/1\""});
        assert_eq!(port_id(&legacy).as_deref(), Some("Ethernet49/1"));
        assert_eq!(port_id(&json!({"interfaceId": "\"\""})), None);
    }
}
