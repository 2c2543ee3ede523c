//! Device facts from standard MIBs, by numeric OID (Debian ships no MIB files, and we need none).
//!
//! [`collect_facts`] walks a fixed set of columns; [`facts_from_varbinds`] turns whatever came back into
//! [`DeviceFacts`]. The parsing is a pure function over varbinds, tested on real snmpsim-data recordings
//! (NAPALM's pattern: the transport is replaced, the parsing runs for real).
//!
//! Sources:
//! - SNMPv2-MIB system group (RFC 3418): sysDescr, sysObjectID, sysUpTime, sysContact, sysName, sysLocation.
//! - IF-MIB (RFC 2863): ifTable (ifDescr, ifMtu, ifSpeed, ifPhysAddress, ifAdminStatus, ifOperStatus) and
//!   ifXTable (ifName, ifHighSpeed, ifAlias).
//! - ENTITY-MIB (RFC 6933) entPhysicalTable: model and serial of the chassis (entPhysicalClass 3).
//! - LLDP-MIB (IEEE 802.1AB-2005): lldpLocPortTable and lldpRemTable.
//! - BRIDGE-MIB dot1dBasePortIfIndex (RFC 4188), to map bridge ports to interfaces.
//! - Q-BRIDGE-MIB (RFC 4363) dot1qVlanStaticName; CISCO-VTP-MIB vtpVlanName on Cisco.
//! - JUNIPER-MIB jnxBoxSerialNo on Juniper (which has no ENTITY-MIB).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use netgw_models::facts::{
    AdminStatus, DeviceFacts, InterfaceFacts, LldpNeighbor, OperStatus, SnmpSystem, VlanFacts,
    format_mac, split_hostname,
};

use super::client::SnmpClient;
use super::error::SnmpError;
use super::oid::{Oid, SnmpValue, Varbind};
use super::walk::WalkLimits;

/// Numeric OIDs the collector reads.
pub mod oids {
    pub const SYSTEM: &str = "1.3.6.1.2.1.1";
    pub const SYS_DESCR: &str = "1.3.6.1.2.1.1.1.0";
    pub const SYS_OBJECT_ID: &str = "1.3.6.1.2.1.1.2.0";
    pub const SYS_UP_TIME: &str = "1.3.6.1.2.1.1.3.0";
    pub const SYS_CONTACT: &str = "1.3.6.1.2.1.1.4.0";
    pub const SYS_NAME: &str = "1.3.6.1.2.1.1.5.0";
    pub const SYS_LOCATION: &str = "1.3.6.1.2.1.1.6.0";

    pub const IF_DESCR: &str = "1.3.6.1.2.1.2.2.1.2";
    pub const IF_MTU: &str = "1.3.6.1.2.1.2.2.1.4";
    pub const IF_SPEED: &str = "1.3.6.1.2.1.2.2.1.5";
    pub const IF_PHYS_ADDRESS: &str = "1.3.6.1.2.1.2.2.1.6";
    pub const IF_ADMIN_STATUS: &str = "1.3.6.1.2.1.2.2.1.7";
    pub const IF_OPER_STATUS: &str = "1.3.6.1.2.1.2.2.1.8";
    pub const IF_NAME: &str = "1.3.6.1.2.1.31.1.1.1.1";
    pub const IF_HIGH_SPEED: &str = "1.3.6.1.2.1.31.1.1.1.15";
    pub const IF_ALIAS: &str = "1.3.6.1.2.1.31.1.1.1.18";

    pub const ENT_PHYSICAL_CONTAINED_IN: &str = "1.3.6.1.2.1.47.1.1.1.1.4";
    pub const ENT_PHYSICAL_CLASS: &str = "1.3.6.1.2.1.47.1.1.1.1.5";
    pub const ENT_PHYSICAL_SERIAL_NUM: &str = "1.3.6.1.2.1.47.1.1.1.1.11";
    pub const ENT_PHYSICAL_MODEL_NAME: &str = "1.3.6.1.2.1.47.1.1.1.1.13";

    pub const DOT1D_BASE_PORT_IF_INDEX: &str = "1.3.6.1.2.1.17.1.4.1.2";
    pub const DOT1Q_VLAN_STATIC_NAME: &str = "1.3.6.1.2.1.17.7.1.4.3.1.1";
    pub const VTP_VLAN_NAME: &str = "1.3.6.1.4.1.9.9.46.1.3.1.1.4";

    pub const LLDP_LOC_PORT_ID_SUBTYPE: &str = "1.0.8802.1.1.2.1.3.7.1.2";
    pub const LLDP_LOC_PORT_ID: &str = "1.0.8802.1.1.2.1.3.7.1.3";
    pub const LLDP_LOC_PORT_DESC: &str = "1.0.8802.1.1.2.1.3.7.1.4";
    pub const LLDP_REM_CHASSIS_ID_SUBTYPE: &str = "1.0.8802.1.1.2.1.4.1.1.4";
    pub const LLDP_REM_CHASSIS_ID: &str = "1.0.8802.1.1.2.1.4.1.1.5";
    pub const LLDP_REM_PORT_ID_SUBTYPE: &str = "1.0.8802.1.1.2.1.4.1.1.6";
    pub const LLDP_REM_PORT_ID: &str = "1.0.8802.1.1.2.1.4.1.1.7";
    pub const LLDP_REM_PORT_DESC: &str = "1.0.8802.1.1.2.1.4.1.1.8";
    pub const LLDP_REM_SYS_NAME: &str = "1.0.8802.1.1.2.1.4.1.1.9";
    pub const LLDP_REM_SYS_DESC: &str = "1.0.8802.1.1.2.1.4.1.1.10";

    pub const JNX_BOX_DESCR: &str = "1.3.6.1.4.1.2636.3.1.2";
    pub const JNX_BOX_SERIAL_NO: &str = "1.3.6.1.4.1.2636.3.1.3";

    /// Columns walked for every device.
    pub const COMMON_COLUMNS: &[&str] = &[
        IF_DESCR,
        IF_MTU,
        IF_SPEED,
        IF_PHYS_ADDRESS,
        IF_ADMIN_STATUS,
        IF_OPER_STATUS,
        IF_NAME,
        IF_HIGH_SPEED,
        IF_ALIAS,
        ENT_PHYSICAL_CONTAINED_IN,
        ENT_PHYSICAL_CLASS,
        ENT_PHYSICAL_SERIAL_NUM,
        ENT_PHYSICAL_MODEL_NAME,
        DOT1D_BASE_PORT_IF_INDEX,
        DOT1Q_VLAN_STATIC_NAME,
        LLDP_LOC_PORT_ID_SUBTYPE,
        LLDP_LOC_PORT_ID,
        LLDP_LOC_PORT_DESC,
        LLDP_REM_CHASSIS_ID_SUBTYPE,
        LLDP_REM_CHASSIS_ID,
        LLDP_REM_PORT_ID_SUBTYPE,
        LLDP_REM_PORT_ID,
        LLDP_REM_PORT_DESC,
        LLDP_REM_SYS_NAME,
        LLDP_REM_SYS_DESC,
    ];
}

/// The SMI enterprise number (1.3.6.1.4.1.N) of a sysObjectID.
pub fn enterprise_number(sys_object_id: &Oid) -> Option<u32> {
    match sys_object_id.arcs() {
        [1, 3, 6, 1, 4, 1, n, ..] => Some(*n),
        _ => None,
    }
}

/// Vendor name from an IANA enterprise number (https://www.iana.org/assignments/enterprise-numbers).
pub fn vendor_from_enterprise(number: u32) -> Option<&'static str> {
    Some(match number {
        9 => "cisco",
        11 => "hpe",
        674 => "dell",
        1588 | 1991 => "brocade",
        2011 => "huawei",
        2636 => "juniper",
        3375 => "f5",
        4526 => "netgear",
        6027 => "dell",
        6486 => "alcatel-lucent",
        6527 => "nokia",
        8072 => "net-snmp",
        12356 => "fortinet",
        14988 => "mikrotik",
        25461 => "paloalto",
        25506 => "h3c",
        30065 => "arista",
        40310 => "cumulus",
        _ => return None,
    })
}

/// What a sysDescr says about the software (and sometimes the model).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SysDescrInfo {
    pub platform: Option<String>,
    pub version: Option<String>,
    pub model: Option<String>,
}

/// The text after `marker` up to the first comma or whitespace.
fn token_after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let start = text.find(marker)? + marker.len();
    let rest = text[start..].trim_start();
    let end = rest
        .find(|c: char| c == ',' || c.is_whitespace())
        .unwrap_or(rest.len());
    let tok = &rest[..end];
    (!tok.is_empty()).then_some(tok)
}

/// Platform (netgw's names: eos, junos, ios, iosxr, nxos, f5, linux), version and model from sysDescr.
pub fn parse_sys_descr(vendor: Option<&str>, descr: &str) -> SysDescrInfo {
    let mut info = SysDescrInfo::default();
    let set = |s: Option<&str>| s.map(str::to_owned);
    if descr.contains("Arista Networks EOS") {
        // "Arista Networks EOS version 4.20.5F running on an Arista Networks DCS-7150S-52-CL"
        info.platform = Some("eos".into());
        info.version = set(token_after(descr, "EOS version"));
        info.model = set(token_after(descr, "running on an Arista Networks"));
    } else if descr.contains("NX-OS") {
        // "Cisco NX-OS(tm) n5000, Software (n5000-uk9), Version 6.0(2)N2(3), RELEASE SOFTWARE ..."
        info.platform = Some("nxos".into());
        info.version = set(token_after(descr, "Version"));
    } else if descr.contains("IOS XR") {
        info.platform = Some("iosxr".into());
        info.version = set(token_after(descr, "Version"));
    } else if descr.contains("Cisco IOS") || descr.contains("IOS-XE") {
        // "Cisco IOS Software, C3560 Software (C3560-IPSERVICESK9-M), Version 12.2(55)SE3, RELEASE ..."
        info.platform = Some("ios".into());
        info.version = set(token_after(descr, "Version"));
    } else if descr.contains("JUNOS") || vendor == Some("juniper") {
        // "Juniper Networks, Inc. mx960 internet router, kernel JUNOS 13.3R9.13, Build date: ..."
        info.platform = Some("junos".into());
        info.version = set(token_after(descr, "JUNOS"));
        info.model = token_after(descr, "Juniper Networks, Inc.").map(str::to_ascii_uppercase);
    } else if vendor == Some("f5") {
        info.platform = Some("f5".into());
    } else if descr.starts_with("Linux") {
        // "Linux host 6.1.0-18-amd64 #1 SMP ..." (net-snmp's default): the kernel release.
        info.platform = Some("linux".into());
        info.version = descr.split_whitespace().nth(2).map(str::to_owned);
    }
    info
}

/// Varbinds indexed by OID, with column access.
struct Index<'a> {
    map: BTreeMap<&'a Oid, &'a SnmpValue>,
}

impl<'a> Index<'a> {
    fn new(varbinds: &'a [Varbind]) -> Self {
        let map = varbinds
            .iter()
            .filter(|vb| !vb.value.is_exception())
            .map(|vb| (&vb.oid, &vb.value))
            .collect();
        Index { map }
    }

    fn get(&self, oid: &str) -> Option<&'a SnmpValue> {
        let oid: Oid = oid.parse().ok()?;
        self.map.get(&oid).copied()
    }

    /// (index arcs, value) of every instance under `column`.
    fn column(&self, column: &str) -> Vec<(Vec<u32>, &'a SnmpValue)> {
        let Ok(col) = column.parse::<Oid>() else {
            return Vec::new();
        };
        self.map
            .range::<Oid, _>((Bound::Excluded(&col), Bound::Unbounded))
            .take_while(|(oid, _)| oid.starts_with(&col))
            .filter_map(|(oid, v)| Some((oid.suffix_after(&col)?.to_vec(), *v)))
            .collect()
    }

    /// Column instances with a single-arc index.
    fn column_by_u32(&self, column: &str) -> BTreeMap<u32, &'a SnmpValue> {
        self.column(column)
            .into_iter()
            .filter_map(|(idx, v)| match idx.as_slice() {
                [i] => Some((*i, v)),
                _ => None,
            })
            .collect()
    }

    fn text(&self, oid: &str) -> Option<String> {
        self.get(oid).and_then(SnmpValue::as_text)
    }
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

/// Text of an octet string when it is printable UTF-8, else colon-separated hex (binary ids).
fn printable_or_hex(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.is_empty() && s.chars().all(|c| !c.is_control()) => s.trim().to_owned(),
        _ => format_mac(bytes).unwrap_or_default(),
    }
}

/// LldpChassisIdSubtype (IEEE 802.1AB-2005 §9.5.2.2) names.
fn chassis_subtype_name(n: i64) -> Option<&'static str> {
    Some(match n {
        1 => "chassis_component",
        2 => "interface_alias",
        3 => "port_component",
        4 => "mac_address",
        5 => "network_address",
        6 => "interface_name",
        7 => "local",
        _ => return None,
    })
}

/// LldpPortIdSubtype (IEEE 802.1AB-2005 §9.5.3.2) names.
fn port_subtype_name(n: i64) -> Option<&'static str> {
    Some(match n {
        1 => "interface_alias",
        2 => "port_component",
        3 => "mac_address",
        4 => "network_address",
        5 => "interface_name",
        6 => "agent_circuit_id",
        7 => "local",
        _ => return None,
    })
}

/// An LLDP id as text: MAC subtypes as MAC, network addresses (IANA family + address) as addresses.
fn format_lldp_id(subtype: Option<&str>, bytes: &[u8]) -> String {
    match subtype {
        Some("mac_address") if bytes.len() == 6 => format_mac(bytes).unwrap_or_default(),
        Some("network_address") => match bytes {
            [1, a, b, c, d] => std::net::Ipv4Addr::new(*a, *b, *c, *d).to_string(),
            [2, rest @ ..] if rest.len() == 16 => {
                let mut octets = [0u8; 16];
                octets.copy_from_slice(rest);
                std::net::Ipv6Addr::from(octets).to_string()
            }
            _ => printable_or_hex(bytes),
        },
        _ => printable_or_hex(bytes),
    }
}

/// Turn the varbinds of a fact walk (any subset, any order) into facts. Pure; never fails: missing or
/// malformed data leaves the corresponding fact out.
pub fn facts_from_varbinds(varbinds: &[Varbind]) -> DeviceFacts {
    let idx = Index::new(varbinds);
    let mut facts = DeviceFacts::default();

    // System group.
    let sys_object_id = idx
        .get(oids::SYS_OBJECT_ID)
        .and_then(SnmpValue::as_oid)
        .cloned();
    let sys_descr = idx.text(oids::SYS_DESCR);
    let sys_name = idx.text(oids::SYS_NAME);
    let sys_up_time = idx.get(oids::SYS_UP_TIME).and_then(SnmpValue::as_u64);
    let snmp = SnmpSystem {
        sys_descr: sys_descr.clone(),
        sys_object_id: sys_object_id.as_ref().map(Oid::to_string),
        sys_name: sys_name.clone(),
        sys_location: idx.text(oids::SYS_LOCATION),
        sys_contact: idx.text(oids::SYS_CONTACT),
        sys_up_time,
    };
    if snmp != SnmpSystem::default() {
        facts.snmp = Some(snmp);
    }
    if let Some((short, fqdn)) = sys_name.as_deref().and_then(split_hostname) {
        facts.hostname = Some(short);
        facts.fqdn = Some(fqdn);
    }
    facts.uptime = sys_up_time.map(|t| t / 100);
    let vendor = sys_object_id
        .as_ref()
        .and_then(enterprise_number)
        .and_then(vendor_from_enterprise);
    facts.vendor = vendor.map(str::to_owned);
    let descr_info = parse_sys_descr(vendor, sys_descr.as_deref().unwrap_or(""));
    facts.platform = descr_info.platform;
    facts.platform_version = descr_info.version;

    // Chassis model and serial: the lowest-indexed chassis (class 3) that has either.
    let classes = idx.column_by_u32(oids::ENT_PHYSICAL_CLASS);
    let models = idx.column_by_u32(oids::ENT_PHYSICAL_MODEL_NAME);
    let serials = idx.column_by_u32(oids::ENT_PHYSICAL_SERIAL_NUM);
    let text_of =
        |m: &BTreeMap<u32, &SnmpValue>, i: u32| non_empty(m.get(&i).and_then(|v| v.as_text()));
    let chassis = classes
        .iter()
        .filter(|(_, class)| class.as_i64() == Some(3))
        .map(|(i, _)| *i)
        .find(|i| text_of(&models, *i).is_some() || text_of(&serials, *i).is_some());
    if let Some(i) = chassis {
        facts.model = text_of(&models, i);
        facts.serial = text_of(&serials, i);
    }
    if facts.model.is_none() {
        facts.model = descr_info.model;
    }
    if facts.serial.is_none() {
        facts.serial = non_empty(idx.text(&format!("{}.0", oids::JNX_BOX_SERIAL_NO)));
    }

    // Interfaces.
    let descrs = idx.column_by_u32(oids::IF_DESCR);
    let name_of_ifindex = interfaces(&idx, &descrs, &mut facts);

    facts.lldp_neighbors = lldp_neighbors(&idx, &name_of_ifindex, &descrs);
    facts.vlans = vlans(&idx);
    facts
}

/// IF-MIB ifTable and ifXTable into `facts.interfaces`, named by ifName (else ifDescr); returns
/// each ifIndex's name.
fn interfaces(
    idx: &Index<'_>,
    descrs: &BTreeMap<u32, &SnmpValue>,
    facts: &mut DeviceFacts,
) -> BTreeMap<u32, String> {
    let names = idx.column_by_u32(oids::IF_NAME);
    let mtus = idx.column_by_u32(oids::IF_MTU);
    let speeds = idx.column_by_u32(oids::IF_SPEED);
    let high_speeds = idx.column_by_u32(oids::IF_HIGH_SPEED);
    let macs = idx.column_by_u32(oids::IF_PHYS_ADDRESS);
    let admins = idx.column_by_u32(oids::IF_ADMIN_STATUS);
    let opers = idx.column_by_u32(oids::IF_OPER_STATUS);
    let aliases = idx.column_by_u32(oids::IF_ALIAS);
    let if_indexes: BTreeSet<u32> = descrs
        .keys()
        .chain(names.keys())
        .chain(admins.keys())
        .chain(opers.keys())
        .copied()
        .collect();
    let mut name_of_ifindex: BTreeMap<u32, String> = BTreeMap::new();
    for ifindex in if_indexes {
        let base = non_empty(names.get(&ifindex).and_then(|v| v.as_text()))
            .or_else(|| non_empty(descrs.get(&ifindex).and_then(|v| v.as_text())))
            .unwrap_or_else(|| format!("ifIndex{ifindex}"));
        // Names should be unique; if an agent repeats one, keep both entries apart.
        let name = if facts.interfaces.contains_key(&base) {
            format!("{base} (ifIndex {ifindex})")
        } else {
            base
        };
        let speed = match (
            speeds.get(&ifindex).and_then(|v| v.as_u64()),
            high_speeds.get(&ifindex).and_then(|v| v.as_u64()),
        ) {
            // RFC 2863: ifSpeed saturates at 4294967295; ifHighSpeed (Mb/s) carries faster links.
            (Some(s), Some(h)) if s >= u64::from(u32::MAX) => Some(h.saturating_mul(1_000_000)),
            (Some(s), _) => Some(s),
            (None, Some(h)) => Some(h.saturating_mul(1_000_000)),
            (None, None) => None,
        };
        let iface = InterfaceFacts {
            admin_status: admins
                .get(&ifindex)
                .and_then(|v| v.as_i64())
                .and_then(AdminStatus::from_if_mib),
            oper_status: opers
                .get(&ifindex)
                .and_then(|v| v.as_i64())
                .and_then(OperStatus::from_if_mib),
            mtu: mtus
                .get(&ifindex)
                .and_then(|v| v.as_i64())
                .and_then(|m| u32::try_from(m).ok()),
            speed,
            mac: macs
                .get(&ifindex)
                .and_then(|v| v.as_bytes())
                .filter(|b| b.iter().any(|x| *x != 0))
                .and_then(format_mac),
            description: non_empty(aliases.get(&ifindex).and_then(|v| v.as_text())),
            ifindex: Some(ifindex),
            switchport: None,
        };
        name_of_ifindex.insert(ifindex, name.clone());
        facts.interfaces.insert(name, iface);
    }
    name_of_ifindex
}

/// The local interface name of an LLDP port number (LldpPortNumber, IEEE 802.1AB-2005 §12.2).
///
/// Agents differ: Arista and Cisco put the interface name in lldpLocPortId (subtype interfaceName or
/// local), Junos puts the ifIndex there as text (subtype local), others number ports like BRIDGE-MIB base
/// ports. Try, in order: a port id or description naming an interface; a numeric local id that is an
/// ifIndex; the bridge port's ifIndex; the port number as an ifIndex; finally the port id itself.
fn local_port_name(
    idx: &Index<'_>,
    port: u32,
    name_of_ifindex: &BTreeMap<u32, String>,
    descrs: &BTreeMap<u32, &SnmpValue>,
    base_port_ifindex: &BTreeMap<u32, &SnmpValue>,
) -> String {
    let loc_id = idx
        .get(&format!("{}.{port}", oids::LLDP_LOC_PORT_ID))
        .and_then(SnmpValue::as_bytes)
        .map(printable_or_hex);
    let loc_desc = non_empty(idx.text(&format!("{}.{port}", oids::LLDP_LOC_PORT_DESC)));
    let by_name = |candidate: &str| -> Option<String> {
        if name_of_ifindex.values().any(|n| n == candidate) {
            return Some(candidate.to_owned());
        }
        // An ifDescr (long name) of an interface keyed by its ifName.
        descrs
            .iter()
            .find(|(_, d)| d.as_text().as_deref() == Some(candidate))
            .and_then(|(i, _)| name_of_ifindex.get(i).cloned())
    };
    for candidate in [loc_id.as_deref(), loc_desc.as_deref()]
        .into_iter()
        .flatten()
    {
        if let Some(name) = by_name(candidate) {
            return name;
        }
    }
    if let Some(name) = loc_id
        .as_deref()
        .and_then(|s| s.parse::<u32>().ok())
        .and_then(|i| name_of_ifindex.get(&i))
    {
        return name.clone();
    }
    if let Some(name) = base_port_ifindex
        .get(&port)
        .and_then(|v| v.as_i64())
        .and_then(|i| u32::try_from(i).ok())
        .and_then(|i| name_of_ifindex.get(&i))
    {
        return name.clone();
    }
    if let Some(name) = name_of_ifindex.get(&port) {
        return name.clone();
    }
    non_empty(loc_id).unwrap_or_else(|| format!("port{port}"))
}

fn lldp_neighbors(
    idx: &Index<'_>,
    name_of_ifindex: &BTreeMap<u32, String>,
    descrs: &BTreeMap<u32, &SnmpValue>,
) -> BTreeMap<String, Vec<LldpNeighbor>> {
    let base_port_ifindex = idx.column_by_u32(oids::DOT1D_BASE_PORT_IF_INDEX);
    // lldpRemTable INDEX { lldpRemTimeMark, lldpRemLocalPortNum, lldpRemIndex }.
    let column = |col: &str| -> BTreeMap<(u32, u32, u32), &SnmpValue> {
        idx.column(col)
            .into_iter()
            .filter_map(|(i, v)| match i.as_slice() {
                [t, p, n] => Some(((*t, *p, *n), v)),
                _ => None,
            })
            .collect()
    };
    let chassis_sub = column(oids::LLDP_REM_CHASSIS_ID_SUBTYPE);
    let chassis_id = column(oids::LLDP_REM_CHASSIS_ID);
    let port_sub = column(oids::LLDP_REM_PORT_ID_SUBTYPE);
    let port_id = column(oids::LLDP_REM_PORT_ID);
    let port_desc = column(oids::LLDP_REM_PORT_DESC);
    let sys_name = column(oids::LLDP_REM_SYS_NAME);
    let sys_desc = column(oids::LLDP_REM_SYS_DESC);
    let keys: BTreeSet<(u32, u32, u32)> = chassis_id
        .keys()
        .chain(port_id.keys())
        .chain(sys_name.keys())
        .copied()
        .collect();

    let mut out: BTreeMap<String, Vec<LldpNeighbor>> = BTreeMap::new();
    let mut port_names: BTreeMap<u32, String> = BTreeMap::new();
    for key in keys {
        let (_, local_port, _) = key;
        let local = port_names
            .entry(local_port)
            .or_insert_with(|| {
                local_port_name(idx, local_port, name_of_ifindex, descrs, &base_port_ifindex)
            })
            .clone();
        let text = |m: &BTreeMap<(u32, u32, u32), &SnmpValue>| {
            non_empty(m.get(&key).and_then(|v| v.as_text()))
        };
        let c_sub = chassis_sub
            .get(&key)
            .and_then(|v| v.as_i64())
            .and_then(chassis_subtype_name);
        let p_sub = port_sub
            .get(&key)
            .and_then(|v| v.as_i64())
            .and_then(port_subtype_name);
        let neighbor = LldpNeighbor {
            remote_system_name: text(&sys_name),
            remote_port: port_id
                .get(&key)
                .and_then(|v| v.as_bytes())
                .map(|b| format_lldp_id(p_sub, b))
                .filter(|s| !s.is_empty()),
            remote_port_description: text(&port_desc),
            remote_chassis_id: chassis_id
                .get(&key)
                .and_then(|v| v.as_bytes())
                .map(|b| format_lldp_id(c_sub, b))
                .filter(|s| !s.is_empty()),
            remote_system_description: text(&sys_desc),
            remote_chassis_id_subtype: c_sub.map(str::to_owned),
            remote_port_id_subtype: p_sub.map(str::to_owned),
        };
        out.entry(local).or_default().push(neighbor);
    }
    out
}

fn vlans(idx: &Index<'_>) -> BTreeMap<u16, VlanFacts> {
    let mut out = BTreeMap::new();
    let valid = |id: u32| u16::try_from(id).ok().filter(|v| (1..=4094).contains(v));
    // Q-BRIDGE-MIB dot1qVlanStaticTable INDEX { dot1qVlanIndex }.
    for (id, v) in idx.column_by_u32(oids::DOT1Q_VLAN_STATIC_NAME) {
        if let (Some(id), Some(name)) = (valid(id), v.as_text()) {
            out.insert(id, VlanFacts::named(name));
        }
    }
    // CISCO-VTP-MIB vtpVlanTable INDEX { managementDomainIndex, vtpVlanIndex }.
    for (index, v) in idx.column(oids::VTP_VLAN_NAME) {
        if let ([_, id], Some(name)) = (index.as_slice(), v.as_text())
            && let Some(id) = valid(*id)
        {
            out.entry(id).or_insert(VlanFacts::named(name));
        }
    }
    out
}

/// Facts gathered over SNMP, with the parts that could not be read.
#[derive(Debug)]
pub struct CollectedFacts {
    pub facts: DeviceFacts,
    /// Tables that failed for reasons that do not condemn the others (an agent bug in one table, a walk
    /// limit); timeouts and authentication failures end the collection instead.
    pub skipped: Vec<SnmpError>,
}

/// Walk one root into `varbinds`; errors that only affect this table go to `skipped`.
async fn walk_into(
    client: &mut SnmpClient,
    root: &str,
    limits: WalkLimits,
    varbinds: &mut Vec<Varbind>,
    skipped: &mut Vec<SnmpError>,
) -> Result<(), SnmpError> {
    let Ok(root) = root.parse::<Oid>() else {
        return Ok(());
    };
    match client.walk(&root, limits).await {
        Ok(mut v) => {
            varbinds.append(&mut v);
            Ok(())
        }
        Err(e) if e.is_timeout() || e.is_auth() || matches!(e, SnmpError::Unreachable { .. }) => {
            Err(e)
        }
        Err(SnmpError::InWalk { source, .. })
            if matches!(*source, SnmpError::Unreachable { .. }) =>
        {
            Err(*source)
        }
        Err(e) => {
            skipped.push(e);
            Ok(())
        }
    }
}

/// Walk the fact columns on `client` and parse them. Each column is bounded by `limits`.
pub async fn collect_facts(
    client: &mut SnmpClient,
    limits: WalkLimits,
) -> Result<CollectedFacts, SnmpError> {
    let mut varbinds = Vec::new();
    let mut skipped = Vec::new();
    walk_into(client, oids::SYSTEM, limits, &mut varbinds, &mut skipped).await?;
    let vendor = varbinds
        .iter()
        .find(|vb| vb.oid.to_string() == oids::SYS_OBJECT_ID)
        .and_then(|vb| vb.value.as_oid())
        .and_then(enterprise_number)
        .and_then(vendor_from_enterprise);
    let mut roots: Vec<&str> = oids::COMMON_COLUMNS.to_vec();
    match vendor {
        Some("cisco") => roots.push(oids::VTP_VLAN_NAME),
        Some("juniper") => roots.extend([oids::JNX_BOX_DESCR, oids::JNX_BOX_SERIAL_NO]),
        _ => {}
    }
    for root in roots {
        walk_into(client, root, limits, &mut varbinds, &mut skipped).await?;
    }
    Ok(CollectedFacts {
        facts: facts_from_varbinds(&varbinds),
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sys_descr_platforms() {
        let a = parse_sys_descr(
            Some("arista"),
            "Arista Networks EOS version 4.20.5F running on an Arista Networks DCS-7150S-52-CL",
        );
        assert_eq!(a.platform.as_deref(), Some("eos"));
        assert_eq!(a.version.as_deref(), Some("4.20.5F"));
        assert_eq!(a.model.as_deref(), Some("DCS-7150S-52-CL"));
        let c = parse_sys_descr(
            Some("cisco"),
            "Cisco IOS Software, C3560 Software (C3560-IPSERVICESK9-M), Version 12.2(55)SE3, RELEASE SOFTWARE (fc1)",
        );
        assert_eq!(c.platform.as_deref(), Some("ios"));
        assert_eq!(c.version.as_deref(), Some("12.2(55)SE3"));
        let n = parse_sys_descr(
            Some("cisco"),
            "Cisco NX-OS(tm) n5000, Software (n5000-uk9), Version 6.0(2)N2(3), RELEASE SOFTWARE",
        );
        assert_eq!(n.platform.as_deref(), Some("nxos"));
        assert_eq!(n.version.as_deref(), Some("6.0(2)N2(3)"));
        let j = parse_sys_descr(
            Some("juniper"),
            "Juniper Networks, Inc. mx960 internet router, kernel JUNOS 13.3R9.13, Build date: 2016-03-01",
        );
        assert_eq!(j.platform.as_deref(), Some("junos"));
        assert_eq!(j.version.as_deref(), Some("13.3R9.13"));
        assert_eq!(j.model.as_deref(), Some("MX960"));
        let l = parse_sys_descr(Some("net-snmp"), "Linux box 6.1.0-18-amd64 #1 SMP");
        assert_eq!(l.platform.as_deref(), Some("linux"));
        assert_eq!(l.version.as_deref(), Some("6.1.0-18-amd64"));
        assert_eq!(parse_sys_descr(None, ""), SysDescrInfo::default());
    }

    #[test]
    fn vendors_from_sys_object_id() {
        let oid: Oid = "1.3.6.1.4.1.30065.1.3011.7150.3282.52.2745"
            .parse()
            .unwrap();
        assert_eq!(enterprise_number(&oid), Some(30065));
        assert_eq!(vendor_from_enterprise(30065), Some("arista"));
        assert_eq!(vendor_from_enterprise(9), Some("cisco"));
        assert_eq!(vendor_from_enterprise(2636), Some("juniper"));
        assert_eq!(vendor_from_enterprise(3375), Some("f5"));
        assert_eq!(vendor_from_enterprise(99_999_999), None);
        assert_eq!(enterprise_number(&"1.3.6.1.2.1".parse().unwrap()), None);
    }

    #[test]
    fn lldp_ids_format() {
        assert_eq!(
            format_lldp_id(Some("mac_address"), &[0x44, 0x4c, 0xa8, 0x31, 0x3e, 0xdf]),
            "44:4c:a8:31:3e:df"
        );
        assert_eq!(
            format_lldp_id(Some("network_address"), &[1, 10, 0, 0, 1]),
            "10.0.0.1"
        );
        assert_eq!(
            format_lldp_id(Some("interface_name"), b"Ethernet23"),
            "Ethernet23"
        );
        assert_eq!(format_lldp_id(Some("local"), &[0x00, 0x01]), "00:01");
    }

    fn fixture(path: &str) -> DeviceFacts {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/snmp/");
        let text = std::fs::read_to_string(format!("{dir}{path}")).unwrap();
        facts_from_varbinds(&crate::snmp::parse_snmprec(&text).unwrap())
    }

    #[test]
    fn facts_arista_dcs_7150s_recording() {
        let f = fixture("arista_eos/arista-dcs-7150s-52-cl.facts.snmprec");
        assert_eq!(f.hostname.as_deref(), Some("DUMSYS-87"));
        assert_eq!(f.vendor.as_deref(), Some("arista"));
        assert_eq!(f.platform.as_deref(), Some("eos"));
        assert_eq!(f.platform_version.as_deref(), Some("4.20.5F"));
        assert_eq!(f.model.as_deref(), Some("DCS-7150S-52-CL"));
        assert_eq!(f.serial.as_deref(), Some("JPE15151458"));
        assert_eq!(f.uptime, Some(16_921_773));
        let snmp = f.snmp.as_ref().unwrap();
        assert_eq!(
            snmp.sys_object_id.as_deref(),
            Some("1.3.6.1.4.1.30065.1.3011.7150.3282.52.2745")
        );
        assert_eq!(snmp.sys_up_time, Some(1_692_177_370));
        assert_eq!(snmp.sys_location.as_deref(), Some(""));
        assert_eq!(f.interfaces.len(), 59);
        let e47 = &f.interfaces["Ethernet47"];
        assert_eq!(e47.ifindex, Some(47));
        assert_eq!(e47.speed, Some(10_000_000_000));
        assert_eq!(e47.mac.as_deref(), Some("00:1c:73:b4:fd:98"));
        assert_eq!(e47.admin_status, Some(AdminStatus::Up));
        assert_eq!(e47.oper_status, Some(OperStatus::Up));
        assert_eq!(e47.description, None);
        let n = &f.lldp_neighbors["Ethernet47"];
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].remote_system_name.as_deref(), Some("ZJ-BP-Bak-Arista"));
        assert_eq!(n[0].remote_port.as_deref(), Some("Ethernet23"));
        assert_eq!(
            n[0].remote_port_id_subtype.as_deref(),
            Some("interface_name")
        );
        assert_eq!(n[0].remote_chassis_id.as_deref(), Some("44:4c:a8:31:3e:df"));
        assert_eq!(
            n[0].remote_chassis_id_subtype.as_deref(),
            Some("mac_address")
        );
        assert_eq!(
            f.lldp_neighbors["Ethernet48"][0].remote_port.as_deref(),
            Some("Ethernet24")
        );
        assert_eq!(f.lldp_neighbors.len(), 2);
        let vlans: Vec<(u16, &str)> = f
            .vlans
            .iter()
            .map(|(k, v)| (*k, v.name.as_deref().unwrap_or_default()))
            .collect();
        assert_eq!(
            vlans,
            vec![
                (1, "default"),
                (40, "Baopan-Zhilian"),
                (41, "baopan_sfit"),
                (80, "VLAN0080"),
                (90, "VLAN0090")
            ]
        );
    }

    #[test]
    fn facts_cisco_c3560_recording() {
        let f = fixture("cisco_ios/cisco-c3560.facts.snmprec");
        assert_eq!(f.hostname.as_deref(), Some("DUMSYS-04"));
        assert_eq!(f.vendor.as_deref(), Some("cisco"));
        assert_eq!(f.platform.as_deref(), Some("ios"));
        assert_eq!(f.platform_version.as_deref(), Some("12.2(55)SE3"));
        assert_eq!(f.model.as_deref(), Some("WS-C3560G-48TS-E"));
        assert_eq!(f.serial.as_deref(), Some("FOC1408Z61U"));
        assert_eq!(f.interfaces.len(), 57);
        let gi = &f.interfaces["Gi0/1"];
        assert_eq!(gi.ifindex, Some(10101));
        assert_eq!(gi.mtu, Some(1500));
        assert_eq!(gi.speed, Some(10_000_000));
        assert_eq!(gi.mac.as_deref(), Some("e8:04:62:78:f2:01"));
        assert_eq!(gi.admin_status, Some(AdminStatus::Up));
        assert_eq!(gi.oper_status, Some(OperStatus::Down));
        assert!(f.interfaces.contains_key("Vl999"));
        assert!(f.lldp_neighbors.is_empty());
        // No Q-BRIDGE on this IOS: VLANs come from CISCO-VTP-MIB, reserved ones included.
        assert_eq!(
            f.vlans.get(&2).and_then(|v| v.name.as_deref()),
            Some("xiaodanwei2-hulian")
        );
        assert_eq!(
            f.vlans.get(&1002).and_then(|v| v.name.as_deref()),
            Some("fddi-default")
        );
        assert_eq!(
            f.vlans.get(&1119).and_then(|v| v.name.as_deref()),
            Some("ShiTang")
        );
        assert_eq!(f.vlans.len(), 8);
    }

    #[test]
    fn facts_cisco_c3750_stack_recording() {
        let f = fixture("cisco_ios/cisco-c3750.facts.snmprec");
        // Entity 1 is the stack (class 11), 1001 the chassis.
        assert_eq!(f.model.as_deref(), Some("WS-C3750G-12S-S"));
        assert_eq!(f.serial.as_deref(), Some("FDO1622Y10H"));
        assert_eq!(f.platform_version.as_deref(), Some("12.2(50)SE5"));
        assert_eq!(f.vlans.len(), 278);
    }

    #[test]
    fn facts_cisco_n5000_recording() {
        let f = fixture("cisco_nxos/cisco-n5000.facts.snmprec");
        assert_eq!(f.platform.as_deref(), Some("nxos"));
        assert_eq!(f.platform_version.as_deref(), Some("6.0(2)N2(3)"));
        assert_eq!(f.model.as_deref(), Some("N5K-C5548UP"));
        assert_eq!(f.serial.as_deref(), Some("SSI183706KP"));
        let snmp = f.snmp.as_ref().unwrap();
        assert_eq!(snmp.sys_contact.as_deref(), Some("who@where"));
        assert_eq!(snmp.sys_location.as_deref(), Some("snmplocation"));
        // lldpLocPortId is a MAC here; the port description names the interface.
        let mgmt = &f.lldp_neighbors["mgmt0"];
        assert_eq!(
            mgmt[0].remote_system_name.as_deref(),
            Some("NWPU-CA-5548-02")
        );
        let e11 = &f.lldp_neighbors["Ethernet1/1"];
        assert_eq!(e11[0].remote_system_name.as_deref(), Some("H3C-1"));
        assert_eq!(f.lldp_neighbors.values().map(Vec::len).sum::<usize>(), 9);
        assert_eq!(
            f.vlans.get(&50).and_then(|v| v.name.as_deref()),
            Some("DMZ")
        );
    }

    #[test]
    fn facts_juniper_mx960_recording() {
        let f = fixture("juniper_junos/juniper-mx960-13-3r9-13.facts.snmprec");
        assert_eq!(f.hostname.as_deref(), Some("DUMSYS-19"));
        assert_eq!(f.vendor.as_deref(), Some("juniper"));
        assert_eq!(f.platform.as_deref(), Some("junos"));
        assert_eq!(f.platform_version.as_deref(), Some("13.3R9.13"));
        assert_eq!(f.model.as_deref(), Some("MX960"));
        // No ENTITY-MIB on Junos: JUNIPER-MIB jnxBoxSerialNo.
        assert_eq!(f.serial.as_deref(), Some("JN12002C1AFA"));
        assert_eq!(
            f.snmp.as_ref().unwrap().sys_location.as_deref(),
            Some("CA-IDC")
        );
        // lldpLocPortId is the ifIndex as text (subtype local).
        let names: Vec<&str> = f.lldp_neighbors.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            vec![
                "ge-0/1/0", "ge-0/1/1", "ge-1/0/3", "ge-1/1/4", "xe-0/2/0", "xe-1/2/0"
            ]
        );
        let n = &f.lldp_neighbors["ge-1/1/4"][0];
        assert_eq!(
            n.remote_system_name.as_deref(),
            Some("SNNU-CA-Core-JSQ-B10")
        );
        assert_eq!(n.remote_port.as_deref(), Some("GigabitEthernet2/0/48"));
        assert_eq!(n.remote_chassis_id.as_deref(), Some("00:0f:e2:b3:71:94"));
        let local = &f.lldp_neighbors["xe-1/2/0"][0];
        assert_eq!(local.remote_port.as_deref(), Some("611"));
        assert_eq!(local.remote_port_id_subtype.as_deref(), Some("local"));
        assert_eq!(f.vlans.len(), 29);
        assert_eq!(
            f.vlans.get(&2).and_then(|v| v.name.as_deref()),
            Some("TiYuGuan+2")
        );
    }

    #[allow(dead_code)]
    fn collect_facts_future_is_send(client: &mut SnmpClient) {
        fn is_send<T: Send>(_: &T) {}
        let fut = collect_facts(client, WalkLimits::default());
        is_send(&fut);
    }

    #[test]
    fn garbage_varbinds_do_not_panic() {
        let vbs = vec![
            Varbind::new(oids::SYS_NAME.parse().unwrap(), SnmpValue::Integer(5)),
            Varbind::new(
                oids::SYS_OBJECT_ID.parse().unwrap(),
                SnmpValue::OctetString(vec![0xff]),
            ),
            Varbind::new(
                format!("{}.1.2.3", oids::IF_NAME).parse().unwrap(),
                SnmpValue::OctetString(vec![0xff, 0xfe]),
            ),
            Varbind::new(
                format!("{}.7", oids::IF_MTU).parse().unwrap(),
                SnmpValue::Integer(-5),
            ),
            Varbind::new(
                format!("{}.7", oids::IF_ADMIN_STATUS).parse().unwrap(),
                SnmpValue::Integer(42),
            ),
            Varbind::new(
                format!("{}.0.1", oids::LLDP_REM_SYS_NAME).parse().unwrap(),
                SnmpValue::OctetString(b"x".to_vec()),
            ),
            Varbind::new(
                format!("{}.99999", oids::DOT1Q_VLAN_STATIC_NAME)
                    .parse()
                    .unwrap(),
                SnmpValue::OctetString(b"bad".to_vec()),
            ),
            Varbind::new(
                format!("{}.7", oids::IF_OPER_STATUS).parse().unwrap(),
                SnmpValue::NoSuchInstance,
            ),
        ];
        let f = facts_from_varbinds(&vbs);
        assert_eq!(f.hostname, None);
        assert_eq!(f.vendor, None);
        let ifc = &f.interfaces["ifIndex7"];
        assert_eq!(ifc.mtu, None);
        assert_eq!(ifc.admin_status, None);
        assert_eq!(ifc.oper_status, None);
        assert!(f.lldp_neighbors.is_empty());
        assert!(f.vlans.is_empty());
    }
}
