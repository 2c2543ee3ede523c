//! NX-OS facts: `show version`, `show hostname`, `show inventory`, `show interface` (each as NX-API
//! `| json` or as text, one parser per form) and `show lldp neighbors detail` (text), combined by
//! [`build_facts`]. A missing or empty answer leaves its facts out.

use std::collections::BTreeMap;

use netgw_models::facts::{
    AdminStatus, DeviceFacts, InterfaceFacts, LldpNeighbor, OperStatus, VlanFacts, normalize_mac,
    split_hostname,
};
use netgw_models::resource::normalize_interface_name;
use serde_json::Value;

pub use crate::cisco_cli::ShowVersion;
use crate::cisco_cli::{
    PortRecords, chassis_pid_and_serial, fill_from_inventory, interface_blocks, interface_detail,
    interface_header, neighbor_field, neighbor_value, uptime,
};

/// NX-API rows: `TABLE_x.ROW_x` is an object for one row and a list for several.
pub fn rows<'a>(v: &'a Value, table: &str, row: &str) -> Vec<&'a Value> {
    match v.get(table).and_then(|t| t.get(row)) {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(o @ Value::Object(_)) => vec![o],
        _ => Vec::new(),
    }
}

/// A string or number field as text.
pub fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn num(v: &Value, key: &str) -> Option<u64> {
    match v.get(key)? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `7.3(1)D1(1) [build 7.3(1)D1(0.10)]` -> `7.3(1)D1(1)`.
fn first_word(s: &str) -> String {
    s.split_whitespace().next().unwrap_or("").to_owned()
}

/// `cisco Nexus9000 93180YC-EX chassis` / `Nexus 6001 Chassis` -> the model words.
fn chassis_model(s: &str) -> Option<String> {
    let s = s.trim();
    let s = s.strip_prefix("cisco ").unwrap_or(s);
    let s = s.split(" (").next().unwrap_or(s);
    let lower = s.to_ascii_lowercase();
    let s = match lower.rfind(" chassis") {
        Some(pos) => &s[..pos],
        None => s,
    };
    (!s.trim().is_empty()).then(|| s.trim().to_owned())
}

/// `show version | json` (NX-API shape).
pub fn parse_show_version_json(v: &Value) -> ShowVersion {
    let days = num(v, "kern_uptm_days");
    let uptime = days.map(|d| {
        d * 86400
            + num(v, "kern_uptm_hrs").unwrap_or(0) * 3600
            + num(v, "kern_uptm_mins").unwrap_or(0) * 60
            + num(v, "kern_uptm_secs").unwrap_or(0)
    });
    ShowVersion {
        hostname: text(v, "host_name"),
        version: text(v, "nxos_ver_str")
            .or_else(|| text(v, "sys_ver_str"))
            .or_else(|| text(v, "kickstart_ver_str"))
            .map(|s| first_word(&s)),
        model: text(v, "chassis_id").and_then(|c| chassis_model(&c)),
        serial: text(v, "proc_board_id"),
        uptime,
        xe: false,
    }
}

/// `show version` as text.
pub fn parse_show_version_text(t: &str) -> ShowVersion {
    let mut v = ShowVersion::default();
    let mut system: Option<String> = None;
    let mut nxos: Option<String> = None;
    for raw in t.lines() {
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("NXOS: version ") {
            nxos = Some(first_word(rest));
        } else if let Some(rest) = line.strip_prefix("system:") {
            system = rest.trim().strip_prefix("version ").map(first_word);
        } else if let Some(rest) = line.strip_prefix("Device name:") {
            let h = rest.trim();
            if !h.is_empty() {
                v.hostname = Some(h.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("Processor Board ID ") {
            v.serial = Some(rest.trim().to_owned());
        } else if line.starts_with("cisco ")
            && line.to_ascii_lowercase().contains("chassis")
            && v.model.is_none()
        {
            v.model = chassis_model(line);
        } else if let Some(rest) = line.strip_prefix("Kernel uptime is ") {
            v.uptime = parse_nxos_uptime(rest);
        }
    }
    v.version = nxos.or(system);
    v
}

/// `749 day(s), 15 hour(s), 17 minute(s), 48 second(s)` -> seconds.
pub fn parse_nxos_uptime(s: &str) -> Option<u64> {
    let units = [
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
        ("second", 1),
    ];
    uptime(s, "(s)", &units)
}

/// `show interface | json`: per interface admin/oper status, MTU, bandwidth, MAC, description.
pub fn parse_show_interface_json(v: &Value) -> BTreeMap<String, InterfaceFacts> {
    let mut out = BTreeMap::new();
    for r in rows(v, "TABLE_interface", "ROW_interface") {
        let Some(name) = text(r, "interface") else {
            continue;
        };
        let admin = text(r, "admin_state").map(|s| s.eq_ignore_ascii_case("up"));
        let admin =
            admin.or_else(|| text(r, "svi_admin_state").map(|s| s.eq_ignore_ascii_case("up")));
        let oper = text(r, "state")
            .or_else(|| text(r, "svi_line_proto"))
            .map(|s| s.eq_ignore_ascii_case("up"));
        // An admin-down interface reports `state: down` with `state_rsn_desc: Administratively down`.
        let admin = admin.or_else(|| {
            text(r, "state_rsn_desc")
                .map(|s| !s.to_ascii_lowercase().contains("administratively down"))
        });
        let f = InterfaceFacts {
            admin_status: admin.map(|up| {
                if up {
                    AdminStatus::Up
                } else {
                    AdminStatus::Down
                }
            }),
            oper_status: oper.map(|up| if up { OperStatus::Up } else { OperStatus::Down }),
            mtu: num(r, "eth_mtu")
                .or_else(|| num(r, "svi_mtu"))
                .and_then(|m| u32::try_from(m).ok()),
            speed: num(r, "eth_bw")
                .or_else(|| num(r, "svi_bw"))
                .map(|kbit| kbit.saturating_mul(1000)),
            mac: text(r, "eth_hw_addr")
                .or_else(|| text(r, "svi_mac"))
                .and_then(|m| normalize_mac(&m)),
            description: text(r, "desc").or_else(|| text(r, "svi_desc")),
            ifindex: None,
            switchport: None,
        };
        out.insert(name, f);
    }
    out
}

/// `show interface` as text (`Ethernet1/1 is down (Administratively down)`, `Hardware: ..., address:
/// 0000.d200.0000`, `MTU 1500 bytes, BW 1000000 Kbit`).
pub fn parse_show_interface_text(t: &str) -> BTreeMap<String, InterfaceFacts> {
    interface_blocks(t, interface_start, |raw, f| {
        // Detail lines are indented, but for `admin state is ...` (see `interface_start`).
        if !raw.starts_with(' ') && !raw.starts_with("admin state is ") {
            return;
        }
        let line = raw.trim();
        if interface_detail(line, f) {
            return;
        }
        // FC and vFC ports say `Port description is X` (Ethernet ports `Description: X`).
        if let Some(d) = line.strip_prefix("Port description is ") {
            f.description = Some(d.trim_end().to_owned());
        } else if line.starts_with("Hardware")
            && let Some(pos) = line.find("address")
        {
            let rest = line[pos + "address".len()..]
                .trim_start_matches([':', ' '])
                .trim_start_matches("is ");
            f.mac = rest.split_whitespace().next().and_then(normalize_mac);
        } else if let Some(rest) = line.strip_prefix("admin state is ") {
            // N9K: `admin state is up, Dedicated Interface`.
            f.admin_status = Some(if rest.starts_with("up") {
                AdminStatus::Up
            } else {
                AdminStatus::Down
            });
        }
    })
}

/// An interface header (`Ethernet1/1 is down (Administratively down)`): its name, admin and oper status.
fn interface_start(raw: &str) -> Option<(String, InterfaceFacts)> {
    // NX-OS prints `admin state is down, Dedicated Interface` at column 0 under the header line on
    // most releases (indented on some): it belongs to the interface above, never starts one.
    // Headers are known by content (pasted outputs indent them) or, as before, by column 0.
    let column0 = (!raw.starts_with(' ') && !raw.starts_with("admin state is "))
        .then(|| raw.split_once(" is "))
        .flatten()
        .map(|(n, _)| n.trim())
        .filter(|n| !n.is_empty() && !n.contains(' '));
    let name = interface_header(raw).map(|(n, _)| n).or(column0)?;
    let rest = raw.trim()[name.len()..].to_ascii_lowercase();
    let rest = rest.trim_start().strip_prefix("is ").unwrap_or(&rest);
    let admin_down = rest.contains("administratively down");
    let up = rest.starts_with("up");
    Some((
        name.to_owned(),
        InterfaceFacts {
            admin_status: Some(if admin_down {
                AdminStatus::Down
            } else {
                AdminStatus::Up
            }),
            oper_status: Some(if up { OperStatus::Up } else { OperStatus::Down }),
            ..Default::default()
        },
    ))
}

/// The fields NX-OS prints after `System Description:`; any of them ends the description.
const SYSDESC_END: &[&str] = &[
    "Time remaining:",
    "System Capabilities:",
    "Enabled Capabilities:",
    "Management Address",
    "Vlan ID:",
    "Chassis id:",
    "Port id:",
    "Local Port id:",
];

/// `show lldp neighbors detail` (text): records start at `Chassis id:`; the local port is `Local Port
/// id:`. Records without a local port are left out (NX-OS prints it on every release netgw knows).
pub fn parse_show_lldp_neighbors_detail(t: &str) -> BTreeMap<String, Vec<LldpNeighbor>> {
    let mut records = PortRecords::default();
    let mut in_sysdesc = false;
    for raw in t.lines() {
        let line = raw.trim();
        let value = |key: &str| {
            neighbor_value(line, key)
                .filter(|v| *v != "null")
                .map(str::to_owned)
        };
        // A multi-line System Description (NX-OS: version, `TAC support: ...`, copyright) runs up to
        // the next field NX-OS prints after it; its lines are joined with a space, as on IOS.
        if in_sysdesc {
            if line.is_empty() || SYSDESC_END.iter().any(|k| line.starts_with(k)) {
                in_sysdesc = false;
            } else if let Some((_, n)) = records.open()
                && let Some(d) = n.remote_system_description.as_mut()
            {
                d.push(' ');
                d.push_str(line);
                continue;
            }
        }
        if line.starts_with("Chassis id:") {
            records.start(LldpNeighbor {
                remote_chassis_id: value("Chassis id:"),
                ..Default::default()
            });
            continue;
        }
        let Some((port, n)) = records.open() else {
            continue;
        };
        if let Some(v) = value("Local Port id:") {
            *port = Some(normalize_interface_name(&v));
        } else if !neighbor_field(n, value)
            && let Some(v) = value("System Description:")
        {
            n.remote_system_description = Some(v);
            in_sysdesc = true;
        }
    }
    records.finish()
}

/// `show inventory | json` chassis (model, serial).
pub fn parse_show_inventory_json(v: &Value) -> (Option<String>, Option<String>) {
    let rs = rows(v, "TABLE_inv", "ROW_inv");
    let chassis = rs
        .iter()
        .find(|r| text(r, "name").is_some_and(|n| n.eq_ignore_ascii_case("chassis")))
        .or(rs.first());
    match chassis {
        Some(c) => (text(c, "productid"), text(c, "serialnum")),
        None => (None, None),
    }
}

/// One answer, as NX-API JSON when the device gave it, else as text.
#[derive(Debug, Clone, Copy)]
pub enum Answer<'a> {
    Json(&'a Value),
    Text(&'a str),
}

/// The answers of one facts run.
#[derive(Debug, Clone, Copy, Default)]
pub struct FactsInputs<'a> {
    pub show_version: Option<Answer<'a>>,
    pub show_hostname: Option<&'a str>,
    pub show_inventory: Option<Answer<'a>>,
    pub show_interface: Option<Answer<'a>>,
    pub show_vlan_brief: Option<Answer<'a>>,
    pub show_lldp_neighbors_detail: Option<&'a str>,
}

pub fn build_facts(i: &FactsInputs<'_>) -> DeviceFacts {
    let mut f = DeviceFacts {
        vendor: Some("cisco".into()),
        platform: Some("nxos".into()),
        ..Default::default()
    };
    if let Some(a) = i.show_version {
        let v = match a {
            Answer::Json(j) => parse_show_version_json(j),
            Answer::Text(t) => parse_show_version_text(t),
        };
        v.fill(&mut f);
    }
    // `show hostname` carries the domain (`nxos-spine1.domain.com`); prefer it for fqdn.
    if let Some(t) = i.show_hostname {
        let name = serde_json::from_str::<Value>(t.trim())
            .ok()
            .and_then(|j| text(&j, "hostname"))
            .unwrap_or_else(|| t.trim().to_owned());
        if let Some((h, fq)) = split_hostname(&name) {
            f.hostname = Some(h);
            f.fqdn = Some(fq);
        }
    }
    if let Some(a) = i.show_inventory {
        let (pid, sn) = match a {
            Answer::Json(j) => parse_show_inventory_json(j),
            Answer::Text(t) => chassis_pid_and_serial(t),
        };
        fill_from_inventory(&mut f, pid, sn);
    }
    if let Some(a) = i.show_interface {
        f.interfaces = match a {
            Answer::Json(j) => parse_show_interface_json(j),
            Answer::Text(t) => parse_show_interface_text(t),
        };
    }
    if let Some(a) = i.show_vlan_brief {
        let vlans = match a {
            Answer::Json(j) => super::vlan::parse_show_vlan_brief_json(j),
            Answer::Text(t) => {
                crate::ios::vlan::vlans_from_rows(&crate::ios::vlan::parse_show_vlan_brief(t))
            }
        };
        for v in vlans {
            f.vlans.insert(
                v.id.get(),
                VlanFacts {
                    name: v.name,
                    ports: Vec::new(),
                },
            );
        }
    }
    if let Some(t) = i.show_lldp_neighbors_detail {
        f.lldp_neighbors = parse_show_lldp_neighbors_detail(t);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn version_json_and_text() {
        let v = parse_show_version_json(
            &json!({"sys_ver_str": "7.3(1)D1(1) [build 7.3(1)D1(0.10)]", "chassis_id": "NX-OSv Chassis",
            "proc_board_id": "TM6017D760B", "host_name": "nxos-spine1", "kern_uptm_days": 47, "kern_uptm_hrs": 1, "kern_uptm_mins": 37, "kern_uptm_secs": 11}),
        );
        assert_eq!(v.version.as_deref(), Some("7.3(1)D1(1)"));
        assert_eq!(v.model.as_deref(), Some("NX-OSv"));
        assert_eq!(v.uptime, Some(47 * 86400 + 3600 + 37 * 60 + 11));
        let t = "Software\n  NXOS: version 7.0(3)I7(2)\nHardware\n  cisco Nexus9000 93180YC-EX chassis \n  Processor Board ID FDO21270U84\n  Device name: SWITCHNAME\nKernel uptime is 2 day(s), 23 hour(s), 4 minute(s), 51 second(s)\n";
        let v = parse_show_version_text(t);
        assert_eq!(
            (
                v.version.as_deref(),
                v.model.as_deref(),
                v.serial.as_deref(),
                v.hostname.as_deref()
            ),
            (
                Some("7.0(3)I7(2)"),
                Some("Nexus9000 93180YC-EX"),
                Some("FDO21270U84"),
                Some("SWITCHNAME")
            )
        );
        assert_eq!(v.uptime, Some(2 * 86400 + 23 * 3600 + 4 * 60 + 51));
    }

    #[test]
    fn interface_text_and_json() {
        let t = "Vlan1 is down (Administratively down), line protocol is down\n  Hardware is EtherSVI, address is  00de.fb01.c9bc\n  MTU 1500 bytes, BW 1000000 Kbit, DLY 10 usec\n\nEthernet106/1/1 is down (Link not connected)\n  Hardware: 10/100/1000 Ethernet, address: 0000.d200.0000 (bia 0000.d200.0000)\n  MTU 9216 bytes, BW 23 Kbit, DLY 10 usec\n";
        let m = parse_show_interface_text(t);
        assert_eq!(m["Vlan1"].admin_status, Some(AdminStatus::Down));
        assert_eq!(m["Vlan1"].mac.as_deref(), Some("00:de:fb:01:c9:bc"));
        let e = &m["Ethernet106/1/1"];
        assert_eq!(
            (e.admin_status, e.oper_status, e.mtu),
            (Some(AdminStatus::Up), Some(OperStatus::Down), Some(9216))
        );
        assert_eq!(e.mac.as_deref(), Some("00:00:d2:00:00:00"));
        let j = json!({"TABLE_interface": {"ROW_interface": {"interface": "Ethernet1/2", "state": "down", "admin_state": "down", "eth_mtu": "1500", "eth_bw": 1000000, "eth_hw_addr": "2cc2.604f.feb3"}}});
        let m = parse_show_interface_json(&j);
        assert_eq!(m["Ethernet1/2"].admin_status, Some(AdminStatus::Down));
        assert_eq!(m["Ethernet1/2"].speed, Some(1_000_000_000));
    }

    #[test]
    fn lldp_detail_text() {
        let t = "Device ID            Local Intf      Hold-time  Capability  Port ID\n\nChassis id: 2cc2.6054.dc2c\nPort id: Eth2/1\nLocal Port id: Eth2/1\nPort Description: Ethernet2/1\nSystem Name: nxos2\nSystem Description: Cisco NX-OS(tm)\nVlan ID: not advertised\n\nChassis id: 2cc2.6064.e15f\nPort id: Eth2/2\nLocal Port id: Eth2/2\nSystem Name: nxos2\n";
        let m = parse_show_lldp_neighbors_detail(t);
        assert_eq!(m.len(), 2);
        assert_eq!(m["Ethernet2/1"][0].remote_port.as_deref(), Some("Eth2/1"));
        assert_eq!(
            m["Ethernet2/1"][0].remote_chassis_id.as_deref(),
            Some("2cc2.6054.dc2c")
        );
        assert!(parse_show_lldp_neighbors_detail("").is_empty());
    }

    fn fixture(case: &str, file: &str) -> String {
        crate::cisco_cli::facts_fixture("nxos", case, file)
    }

    #[test]
    fn admin_state_at_column_zero_belongs_to_the_port_above() {
        // ntc-templates cisco_nxos_show_interface4.raw: `Ethernet1/54 is down (XCVR not inserted)`
        // then `admin state is down, Dedicated Interface` at column 0.
        let m = parse_show_interface_text(&fixture("ntc_show_interface4", "show_interface.txt"));
        let e = &m["Ethernet1/54"];
        assert_eq!(
            (e.admin_status, e.oper_status),
            (Some(AdminStatus::Down), Some(OperStatus::Down))
        );
        assert_eq!(e.mtu, Some(1500), "the lines after it are still read");
        assert_eq!(m["Ethernet1/1"].admin_status, Some(AdminStatus::Up));
        assert!(!m.contains_key("admin state"));
    }

    #[test]
    fn fc_and_vfc_port_description() {
        // ntc-templates cisco_nxos_show_interface10.raw: `vfc248 is down`, `Port description is PILLAR_A1`.
        let m = parse_show_interface_text(&fixture("ntc_show_interface10", "show_interface.txt"));
        assert_eq!(m["vfc248"].description.as_deref(), Some("PILLAR_A1"));
        assert_eq!(m["vfc248"].admin_status, Some(AdminStatus::Up));
    }

    #[test]
    fn lldp_system_description_keeps_its_continuation_lines() {
        // ntc-templates cisco_nxos_show_lldp_neighbors_detail.raw: three-line NX-OS description.
        let m = parse_show_lldp_neighbors_detail(&fixture(
            "ntc_lldp_detail",
            "show_lldp_neighbors_detail.txt",
        ));
        let n = &m["Ethernet1/1"][0];
        assert_eq!(
            n.remote_system_description.as_deref(),
            Some(
                "Cisco Nexus Operating System (NX-OS) Software 7.0(3)I4(1) TAC support: http://www.cisco.com/tac Copyright (c) 2002-2016, Cisco Systems, Inc. All rights reserved."
            )
        );
        assert_eq!(
            n.remote_system_name.as_deref(),
            Some("n9k2.company.com"),
            "the fields after it still read"
        );
        let ios = &m["mgmt0"][0];
        assert_eq!(
            ios.remote_system_description.as_deref(),
            Some(
                "Cisco IOS Software, C3750 Software (C3750-IPBASEK9-M), Version 12.2(44)SE2, RELEASE SOFTWARE (fc2) Copyright (c) 1986-2008 by Cisco Systems, Inc. Compiled Thu 01-May-08 15:42 by antonino"
            )
        );
    }

    #[test]
    fn indented_interface_headers_start_interfaces() {
        // genieparser nxos ShowInterface golden1: every header after the first is indented.
        let m = parse_show_interface_text(&fixture(
            "genie_nxos_interfaces_golden1",
            "show_interface.txt",
        ));
        let e = &m["Ethernet2/1"];
        assert_eq!(
            (e.description.as_deref(), e.mtu),
            (Some("desc-1"), Some(1600))
        );
        assert_eq!(
            m["mgmt0"].mac.as_deref(),
            Some("52:54:00:ff:9c:38"),
            "not overwritten by the next port"
        );
    }
}
