//! IOS / IOS-XE facts: one parser per command (`show version`, `show inventory`, `show interfaces`,
//! `show lldp neighbors detail`, `show cdp neighbors detail`) and [`build_facts`], which combines what
//! the device answered. Every input may be empty (fake-switches answers nothing to `show interfaces`,
//! lldp and cdp): a missing input leaves its facts out.

use std::collections::BTreeMap;

use netgw_models::facts::{
    AdminStatus, DeviceFacts, InterfaceFacts, LldpNeighbor, OperStatus, VlanFacts, normalize_mac,
};
use netgw_models::resource::normalize_interface_name;

pub use crate::cisco_cli::{InventoryItem, ShowVersion, chassis_item, parse_show_inventory};
use crate::cisco_cli::{
    PortRecords, chassis_pid_and_serial, fill_from_inventory, interface_blocks, interface_detail,
    interface_header, neighbor_field, neighbor_value, uptime,
};

/// Parse `show version` (classic IOS and IOS-XE, including 16.x/17.x `Cisco IOS XE Software, Version`).
pub fn parse_show_version(text: &str) -> ShowVersion {
    let mut v = ShowVersion::default();
    let mut board_id: Option<String> = None;
    let mut system_serial: Option<String> = None;
    let mut xe_version = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.contains("IOS XE") || line.contains("IOS-XE") {
            v.xe = true;
        }
        // The `Cisco IOS Software, ... Version X,` line (as NAPALM and ntc-templates read it); the
        // IOS-XE 16+/17 `Cisco IOS XE Software, Version X` line only when there is no other.
        let xe_line =
            line.starts_with("Cisco IOS XE Software") || line.starts_with("Cisco IOS-XE Software");
        if (v.version.is_none() || (xe_version && !xe_line))
            && (line.starts_with("Cisco IOS") || line.starts_with("IOS (tm)"))
            && let Some(pos) = line.find("Version ")
        {
            let rest = &line[pos + "Version ".len()..];
            let ver = rest.split([',', ' ']).next().unwrap_or("").trim();
            if !ver.is_empty() {
                v.version = Some(ver.to_owned());
                xe_version = xe_line;
            }
        }
        if v.hostname.is_none()
            && let Some(pos) = line.find(" uptime is ")
        {
            let host = &line[..pos];
            if !host.contains(' ') && !host.is_empty() {
                v.hostname = Some(host.to_owned());
                v.uptime = parse_uptime(&line[pos + " uptime is ".len()..]);
            }
        }
        if v.model.is_none()
            && is_model_line(line)
            && let Some(m) = line.split_whitespace().nth(1)
        {
            v.model = Some(m.to_owned());
        }
        if let Some(id) = line.strip_prefix("Processor board ID ") {
            let id = id.split([',', ' ']).next().unwrap_or("").trim();
            if !id.is_empty() && board_id.is_none() {
                board_id = Some(id.to_owned());
            }
        }
        if let Some((k, val)) = line.split_once(':')
            && k.trim().eq_ignore_ascii_case("System serial number")
            && system_serial.is_none()
            && !val.trim().is_empty()
        {
            system_serial = Some(val.trim().to_owned());
        }
    }
    v.serial = system_serial.or(board_id);
    v
}

/// The hardware line, `VENDOR MODEL (CPU) processor ... with N bytes of memory.`: `cisco`/`Cisco`
/// on Cisco-branded boxes, the OEM elsewhere (`Allen-Bradley 1783-CMS20DN (ARM) processor`, the
/// Stratix IOS-XE switches). Other vendors only with `bytes of memory`, so `Uptime for this control
/// processor is` never matches. IOL/IOU (`Linux Unix (Intel-x86) processor`) names its Linux host, not a
/// model: no model from it (SNMP's ENTITY-MIB fills the gap where configured).
fn is_model_line(line: &str) -> bool {
    if line.starts_with("Linux Unix ") {
        return false;
    }
    let cisco = line.starts_with("cisco ") || line.starts_with("Cisco ");
    (cisco && line.contains(" processor"))
        || (line.contains("bytes of memory") && line.contains(" processor"))
        || (cisco && line.contains("bytes of memory"))
}

/// `2 years, 31 weeks, 6 days, 9 hours, 55 minutes` -> seconds (a year is 365 days, as NAPALM counts).
pub fn parse_uptime(s: &str) -> Option<u64> {
    let units = [
        ("year", 365 * 86400),
        ("week", 7 * 86400),
        ("day", 86400),
        ("hour", 3600),
        ("minute", 60),
        ("second", 1),
    ];
    uptime(s, "s", &units)
}

/// Parse `show interfaces`: admin/oper status, MTU, bandwidth, MAC, description per interface.
pub fn parse_show_interfaces(text: &str) -> BTreeMap<String, InterfaceFacts> {
    // Headers and detail lines are told apart by content, not indentation: pasted outputs (and
    // some releases) indent the headers or start the detail lines at column 0.
    interface_blocks(text, interface_start, |raw, f| {
        let line = raw.trim();
        if !interface_detail(line, f)
            && line.starts_with("Hardware is ")
            && let Some(pos) = line.find("address is ")
        {
            // `2c33.11ff.fbc7(bia ...)` on some IOS-XE BDIs: no space before the bia.
            let mac = line[pos + "address is ".len()..]
                .split([' ', '('])
                .find(|w| !w.is_empty())
                .unwrap_or("");
            f.mac = normalize_mac(mac);
        }
    })
}

/// An interface header (`Gi0/1 is up, line protocol is down`): its name and admin/oper status.
fn interface_start(raw: &str) -> Option<(String, InterfaceFacts)> {
    let (name, status) = interface_header(raw)?;
    let (admin, oper) = if status.starts_with("administratively down") {
        (AdminStatus::Down, OperStatus::Down)
    } else if status.starts_with("up") {
        // `pseudowire100006 is up` has no line protocol: the header's state is the one.
        let proto_up = raw
            .split("line protocol is ")
            .nth(1)
            .is_none_or(|p| p.trim_start().starts_with("up"));
        (
            AdminStatus::Up,
            if proto_up {
                OperStatus::Up
            } else {
                OperStatus::Down
            },
        )
    } else {
        // `down`, `reset`, `deleted`: enabled but not forwarding.
        (AdminStatus::Up, OperStatus::Down)
    };
    Some((
        name.to_owned(),
        InterfaceFacts {
            admin_status: Some(admin),
            oper_status: Some(oper),
            ..Default::default()
        },
    ))
}

/// Parse `show lldp neighbors detail` into neighbours by (long) local interface name. Older releases
/// print no `Local Intf:` line: their records start at `Chassis id:` and take the local port from
/// `summary` (`show lldp neighbors`), row i for record i, as NAPALM pairs them; without a summary (or
/// when the counts differ) such records are left out.
pub fn parse_show_lldp_neighbors_detail(
    text: &str,
    summary: Option<&str>,
) -> BTreeMap<String, Vec<LldpNeighbor>> {
    let records = lldp_detail_records(text);
    let local = summary.map(parse_show_lldp_neighbors_local_ports);
    let paired = local.filter(|l| l.len() == records.len());
    let mut out: BTreeMap<String, Vec<LldpNeighbor>> = BTreeMap::new();
    for (i, (port, n)) in records.into_iter().enumerate() {
        let port = port.or_else(|| paired.as_ref().map(|l| l[i].clone()));
        if let Some(p) = port {
            out.entry(normalize_interface_name(&p)).or_default().push(n);
        }
    }
    out
}

/// The records of `show lldp neighbors detail`, each with its `Local Intf:` when printed.
fn lldp_detail_records(text: &str) -> Vec<(Option<String>, LldpNeighbor)> {
    let mut out: Vec<(Option<String>, LldpNeighbor)> = Vec::new();
    let mut in_sysdesc = false;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(p) = line.strip_prefix("Local Intf:") {
            out.push((Some(p.trim().to_owned()), LldpNeighbor::default()));
            in_sysdesc = false;
            continue;
        }
        // Without `Local Intf:` lines, a second `Chassis id:` starts the next record.
        if line.starts_with("Chassis id:")
            && out
                .last()
                .is_none_or(|(_, n)| n.remote_chassis_id.is_some())
        {
            out.push((None, LldpNeighbor::default()));
            in_sysdesc = false;
        }
        let Some((_, n)) = out.last_mut() else {
            continue;
        };
        if in_sysdesc {
            if line.is_empty() {
                if n.remote_system_description.is_some() {
                    in_sysdesc = false;
                }
                continue;
            }
            if line.starts_with("Time remaining") || line.starts_with("System Capabilities") {
                in_sysdesc = false;
            } else {
                let d = n.remote_system_description.get_or_insert_with(String::new);
                if !d.is_empty() {
                    d.push(' ');
                }
                d.push_str(line);
                continue;
            }
        }
        let value = |key: &str| neighbor_value(line, key).map(str::to_owned);
        if !neighbor_field(n, value) && line.starts_with("System Description:") {
            match value("System Description:") {
                Some(v) => n.remote_system_description = Some(v),
                None if !line.contains("not advertised") => in_sysdesc = true,
                None => {}
            }
        }
    }
    out
}

/// The `Local Intf` column of `show lldp neighbors`, one entry per neighbour row. The Device ID column
/// is cut at 20 characters and may run into it (`ABCD-U-DSW1.wan.acmeGi1`), so columns are taken at
/// the header's positions.
pub fn parse_show_lldp_neighbors_local_ports(text: &str) -> Vec<String> {
    let mut cols: Option<(usize, usize)> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        if let (Some(a), Some(b)) = (line.find("Local Intf"), line.find("Hold-time")) {
            cols = Some((a, b));
            continue;
        }
        let Some((a, b)) = cols else { continue };
        if line.trim().is_empty() || line.starts_with("Total entries") {
            if line.starts_with("Total entries") {
                break;
            }
            continue;
        }
        if let Some(port) = line.get(a..b.min(line.len())).map(str::trim)
            && !port.is_empty()
        {
            out.push(port.to_owned());
        }
    }
    out
}

/// Parse `show cdp neighbors detail`: CDP neighbours in the LLDP neighbour shape (system name =
/// Device ID, port = `Port ID (outgoing port)`, description = the first line of `Version :`).
pub fn parse_show_cdp_neighbors_detail(text: &str) -> BTreeMap<String, Vec<LldpNeighbor>> {
    let mut records = PortRecords::default();
    let mut want_version = false;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(id) = line.strip_prefix("Device ID:") {
            let id = id.trim();
            records.start(LldpNeighbor {
                remote_system_name: (!id.is_empty()).then(|| id.to_owned()),
                ..Default::default()
            });
            want_version = false;
            continue;
        }
        let Some((port, n)) = records.open() else {
            continue;
        };
        if want_version {
            if !line.is_empty() {
                n.remote_system_description = Some(line.to_owned());
                want_version = false;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("Interface:") {
            let mut parts = rest.splitn(2, ',');
            let local = parts.next().unwrap_or("").trim();
            if !local.is_empty() {
                *port = Some(normalize_interface_name(local));
            }
            if let Some(remote) = parts
                .next()
                .and_then(|r| r.split_once(':'))
                .map(|(_, p)| p.trim())
                && !remote.is_empty()
            {
                n.remote_port = Some(remote.to_owned());
                n.remote_port_id_subtype = Some("interface_name".into());
            }
        } else if line.starts_with("Version :") || line.starts_with("Version:") {
            want_version = true;
        }
    }
    records.finish()
}

/// The answers of one facts run; `None` (or empty text) means the command was not answered.
#[derive(Debug, Clone, Copy, Default)]
pub struct FactsInputs<'a> {
    pub show_version: Option<&'a str>,
    pub show_inventory: Option<&'a str>,
    pub show_interfaces: Option<&'a str>,
    pub show_vlan_brief: Option<&'a str>,
    pub show_lldp_neighbors_detail: Option<&'a str>,
    /// `show lldp neighbors`: the local ports of a detail without `Local Intf:` lines (older IOS).
    pub show_lldp_neighbors: Option<&'a str>,
    pub show_cdp_neighbors_detail: Option<&'a str>,
    /// `show running-config` (interface descriptions/shutdown when `show interfaces` is empty).
    pub show_running_config: Option<&'a str>,
}

/// Combine the parsed answers into facts.
pub fn build_facts(i: &FactsInputs<'_>) -> DeviceFacts {
    let mut f = DeviceFacts {
        vendor: Some("cisco".into()),
        platform: Some("ios".into()),
        ..Default::default()
    };
    if let Some(t) = i.show_version {
        let v = parse_show_version(t);
        if v.xe {
            f.platform = Some("iosxe".into());
        }
        v.fill(&mut f);
    }
    if let Some(t) = i.show_inventory {
        let (pid, serial) = chassis_pid_and_serial(t);
        fill_from_inventory(&mut f, pid, serial);
    }
    if let Some(t) = i.show_interfaces {
        f.interfaces = parse_show_interfaces(t);
    }
    if f.interfaces.is_empty()
        && let Some(t) = i.show_running_config
    {
        // No `show interfaces` (fake-switches): at least the names, admin status and descriptions.
        for c in super::link::parse_running_config_interfaces(t) {
            f.interfaces.insert(
                c.name.clone(),
                InterfaceFacts {
                    admin_status: Some(if c.shutdown {
                        AdminStatus::Down
                    } else {
                        AdminStatus::Up
                    }),
                    description: c.description.clone(),
                    mtu: c.mtu,
                    ..Default::default()
                },
            );
        }
    }
    if let Some(t) = i.show_vlan_brief {
        for r in super::vlan::parse_show_vlan_brief(t) {
            f.vlans.insert(r.id.get(), VlanFacts::named(r.name));
        }
    }
    if let Some(t) = i.show_lldp_neighbors_detail {
        f.lldp_neighbors = parse_show_lldp_neighbors_detail(t, i.show_lldp_neighbors);
    }
    if let Some(t) = i.show_cdp_neighbors_detail {
        for (port, ns) in parse_show_cdp_neighbors_detail(t) {
            f.lldp_neighbors.entry(port).or_insert(ns);
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAKE_VERSION: &str = "Cisco IOS Software, C3750 Software (C3750-IPSERVICESK9-M), Version 12.2(58)SE2, RELEASE SOFTWARE (fc1)\nTechnical Support: http://www.cisco.com/techsupport\n\nsw uptime is 1 year, 18 weeks, 5 days, 1 hour, 11 minutes\n\ncisco WS-C3750G-24TS-1U (PowerPC405) processor (revision H0) with 131072K bytes of memory.\nProcessor board ID FOC1530X2F7\nModel number                    : WS-C3750G-24TS-S1U\nSystem serial number            : FOC1530X2F7\n";

    #[test]
    fn version_of_fake_switches() {
        let v = parse_show_version(FAKE_VERSION);
        assert_eq!(v.hostname.as_deref(), Some("sw"));
        assert_eq!(v.version.as_deref(), Some("12.2(58)SE2"));
        assert_eq!(v.model.as_deref(), Some("WS-C3750G-24TS-1U"));
        assert_eq!(v.serial.as_deref(), Some("FOC1530X2F7"));
        assert_eq!(
            v.uptime,
            Some(365 * 86400 + 18 * 7 * 86400 + 5 * 86400 + 3600 + 660)
        );
        assert!(!v.xe);
    }

    #[test]
    fn xe_17_version_line() {
        let v = parse_show_version(
            "Cisco IOS XE Software, Version 17.03.04a\nCisco IOS Software [Amsterdam], Catalyst L3 Switch Software (CAT9K_IOSXE), Version 17.3.4a, RELEASE SOFTWARE (fc3)\nsw9k uptime is 2 minutes\n",
        );
        assert_eq!(v.version.as_deref(), Some("17.3.4a"));
        assert!(v.xe);
        assert_eq!(v.uptime, Some(120));
    }

    #[test]
    fn inventory() {
        let t = "NAME: \"1\", DESCR: \"WS-C3750G-24TS-1U\"\nPID: WS-C3750G-24TS-1U , VID: V05  , SN: FOC1530X2F7\n\nNAME: \"GigabitEthernet1/0/25\", DESCR: \"1000BaseSX SFP\"\nPID: Unspecified       , VID:      , SN: FNS0\n";
        let items = parse_show_inventory(t);
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].pid.as_deref(), Some("WS-C3750G-24TS-1U"));
        assert_eq!(items[0].sn.as_deref(), Some("FOC1530X2F7"));
        assert_eq!(items[1].vid, None);
        let f = build_facts(&FactsInputs {
            show_inventory: Some(t),
            ..Default::default()
        });
        assert_eq!(f.serial.as_deref(), Some("FOC1530X2F7"));
    }

    #[test]
    fn interfaces_status_mtu_speed_mac() {
        let t = "GigabitEthernet0/0 is reset, line protocol is down (notconnect)\n  Hardware is iGbE, address is fa16.3e57.336f (bia fa16.3e57.336f)\n  MTU 1500 bytes, BW 1000000 Kbit/sec, DLY 10 usec,\nGigabitEthernet0/1 is up, line protocol is up (connected)\n  Description: to iosvl2-2\n  MTU 9000 bytes, BW 100000 Kbit/sec, DLY 10 usec,\nLoopback0 is administratively down, line protocol is down \n";
        let m = parse_show_interfaces(t);
        assert_eq!(m.len(), 3);
        let g0 = &m["GigabitEthernet0/0"];
        assert_eq!(
            (g0.admin_status, g0.oper_status),
            (Some(AdminStatus::Up), Some(OperStatus::Down))
        );
        assert_eq!(g0.mac.as_deref(), Some("fa:16:3e:57:33:6f"));
        assert_eq!(g0.speed, Some(1_000_000_000));
        let g1 = &m["GigabitEthernet0/1"];
        assert_eq!(
            (g1.mtu, g1.description.as_deref()),
            (Some(9000), Some("to iosvl2-2"))
        );
        assert_eq!(m["Loopback0"].admin_status, Some(AdminStatus::Down));
        assert!(parse_show_interfaces("").is_empty());
    }

    #[test]
    fn empty_inputs_degrade() {
        let f = build_facts(&FactsInputs {
            show_version: Some(""),
            show_interfaces: Some(""),
            show_lldp_neighbors_detail: Some(""),
            show_cdp_neighbors_detail: Some(""),
            show_running_config: Some("interface FastEthernet0/1\n shutdown\n!\n"),
            ..Default::default()
        });
        assert_eq!(f.vendor.as_deref(), Some("cisco"));
        assert_eq!(
            f.interfaces["FastEthernet0/1"].admin_status,
            Some(AdminStatus::Down)
        );
        assert!(f.lldp_neighbors.is_empty());
    }

    fn fixture(case: &str, file: &str) -> String {
        crate::cisco_cli::facts_fixture("ios", case, file)
    }

    #[test]
    fn catalyst_6500_chassis_is_not_the_slot_1_supervisor() {
        // genieparser ios/cat6k ShowInventory golden_output: `NAME: "1"` is the WS-SUP720-3BXL.
        let f = build_facts(&FactsInputs {
            show_inventory: Some(&fixture("genie_ios_cat6k_inventory", "show_inventory.txt")),
            ..Default::default()
        });
        assert_eq!(
            (f.model.as_deref(), f.serial.as_deref()),
            (Some("WS-C6503-E"), Some("FXS1821Q2H9"))
        );
    }

    #[test]
    fn stratix_model_line_without_cisco() {
        // genieparser iosxe ShowVersion golden_output_1783: `Allen-Bradley 1783-CMS20DN (ARM) processor`.
        let v = parse_show_version(&fixture("genie_xe_1783", "show_version.txt"));
        assert_eq!(v.model.as_deref(), Some("1783-CMS20DN"));
        assert_eq!(v.serial.as_deref(), Some("FDO2607J4SK"));
        assert!(v.xe);
        // IOL's hardware line names its Linux host, not a model.
        assert_eq!(
            parse_show_version("Linux Unix (Intel-x86) processor with 727227K bytes of memory.\n")
                .model,
            None
        );
        // The control-processor uptime line is not a model line.
        assert_eq!(
            parse_show_version("Uptime for this control processor is 3 weeks\n").model,
            None
        );
    }

    #[test]
    fn interface_without_line_protocol_takes_the_header_state() {
        // NAPALM test_get_interfaces/pseudowire: `pseudowire100006 is up` and nothing else on the line.
        let m = parse_show_interfaces(&fixture(
            "napalm_ssh_interfaces_pseudowire",
            "show_interfaces.txt",
        ));
        let p = &m["pseudowire100006"];
        assert_eq!(
            (p.admin_status, p.oper_status),
            (Some(AdminStatus::Up), Some(OperStatus::Up))
        );
        let m = parse_show_interfaces("Gi0/1 is up, line protocol is down \n");
        assert_eq!(m["Gi0/1"].oper_status, Some(OperStatus::Down));
    }

    #[test]
    fn lldp_detail_without_local_intf_pairs_with_the_summary() {
        // NAPALM test_get_lldp_neighbors_detail/device_id_20chars: no `Local Intf:` in the detail; the
        // summary's Device ID runs into the Local Intf column (`ABCD-U-DSW1.wan.acmeGi1`).
        let case = "napalm_ssh_lldp_neighbors_detail_device_id_20chars";
        let summary = fixture(case, "show_lldp_neighbors.txt");
        assert_eq!(
            parse_show_lldp_neighbors_local_ports(&summary),
            vec!["Gi1"; 8]
        );
        let detail = fixture(case, "show_lldp_neighbors_detail.txt");
        let m = parse_show_lldp_neighbors_detail(&detail, Some(&summary));
        let ns = &m["GigabitEthernet1"];
        assert_eq!(ns.len(), 8);
        assert_eq!(
            ns[0].remote_system_name.as_deref(),
            Some("ABCD-U-DSW1.wan.acme.com")
        );
        assert_eq!(ns[0].remote_port.as_deref(), Some("Te2/1/14"));
        assert!(
            parse_show_lldp_neighbors_detail(&detail, None).is_empty(),
            "no summary, no port"
        );
    }

    #[test]
    fn interface_headers_by_content_not_indentation() {
        // genieparser iosxe ShowInterfaces golden_interface_output: detail lines at column 0.
        let m = parse_show_interfaces(&fixture(
            "genie_iosxe_interfaces_golden_interface_output",
            "show_interfaces.txt",
        ));
        let g = &m["GigabitEthernet1"];
        assert_eq!(
            (g.mtu, g.mac.as_deref()),
            (Some(1500), Some("5e:00:00:ff:01:01"))
        );
        // An indented header starts an interface; `Hardware is ...` never does.
        let m = parse_show_interfaces(
            "  Gi0/1 is up, line protocol is up\nHardware is X, address is 0011.2233.4455\n",
        );
        assert_eq!(m.len(), 1);
        assert_eq!(m["Gi0/1"].mac.as_deref(), Some("00:11:22:33:44:55"));
        // genieparser golden_output_1: `address is 2c33.11ff.fbc7(bia 2c33.11ff.fbc7)`.
        let m = parse_show_interfaces(&fixture(
            "genie_iosxe_interfaces_golden_output_1",
            "show_interfaces.txt",
        ));
        assert_eq!(m["BDI105"].mac.as_deref(), Some("2c:33:11:ff:fb:c7"));
    }
}
