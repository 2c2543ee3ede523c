//! The MIB view of one simulated device, generated from its live state at every request.
//!
//! Objects (scalars and table columns) are a static list in OID order; each computes its instances from
//! the device's [`DeviceState`] when a request reaches it, so a description or hostname changed through
//! any simulator shows up in the very next SNMP answer, and an idle device holds no MIB in memory
//! (10,000 devices). Instances of one column are computed at most once per request ([`View`] memoises).
//!
//! What is served, per vendor, in the vendor's own shapes (real recordings under
//! `transport/tests/fixtures/snmp` and the public-sample collection `snmpsim-data` (docs/fixture-sources.md)):
//! - SNMPv2-MIB system group (RFC 3418): sysDescr in the vendor's format (the one
//!   `collector::parse_sys_descr` reads), sysObjectID under the vendor's enterprise, sysUpTime since the
//!   device started, sysContact, sysName (the current hostname), sysLocation, sysServices;
//! - IF-MIB (RFC 2863) ifNumber, ifTable (ifIndex, ifDescr, ifType, ifMtu, ifSpeed, ifPhysAddress,
//!   ifAdminStatus, ifOperStatus, ifLastChange) and ifXTable (ifName, ifHighSpeed, ifAlias = the
//!   description); ifIndex numbering as each vendor numbers (NX-OS `Ethernet1/1` = 436207616, Junos
//!   the `snmp-index`, F5 `48 + 16n`), ifName short on Cisco (`Et0/1`, `Eth1/1`);
//! - ENTITY-MIB (RFC 6933) chassis row (EOS, IOS, NX-OS); JUNIPER-MIB jnxBoxDescr/jnxBoxSerialNo on Junos;
//! - BRIDGE-MIB dot1dBasePortIfIndex (RFC 4188); Q-BRIDGE-MIB dot1qVlanStaticName (RFC 4363) on EOS,
//!   Junos and F5, CISCO-VTP-MIB vtpVlanName on IOS and NX-OS;
//! - LLDP-MIB (IEEE 802.1AB-2005) local system, lldpLocPortTable and lldpRemTable from the topology's links,
//!   with each vendor's local-port numbering;
//! - SNMP-FRAMEWORK-MIB (RFC 3411) snmpEngineID, snmpEngineBoots, snmpEngineTime, snmpEngineMaxMessageSize.
//!
//! The product arcs of the sysObjectIDs are illustrative; the enterprise numbers (the part the collector
//! uses to name the vendor) are the vendors' IANA numbers.

use super::super::Device;
use super::super::junos::JunosStyle;
use super::super::state::{DeviceState, Dialect, Iface, Mode};
use netgw_transport::snmp::{Oid, SnmpValue, Varbind};
use std::cell::{OnceCell, RefCell};
use std::rc::Rc;
use std::sync::OnceLock;

/// Instances of one object: (index arcs, value), in index order.
type Rows = Vec<(Vec<u32>, SnmpValue)>;

/// What the view is built from: the device as it is now.
pub struct MibInput<'a> {
    pub dev: &'a Device,
    pub state: DeviceState,
    pub junos_style: Option<JunosStyle>,
    /// sysUpTime: hundredths of a second since the device started.
    pub uptime_ticks: u32,
    pub engine_id: &'a [u8],
    pub engine_boots: u32,
    pub engine_time: u32,
    pub max_message_size: u32,
}

/// One interface as IF-MIB shows it.
struct IfRow {
    ifindex: u32,
    /// ifDescr: the full name.
    descr: String,
    /// ifName: the vendor's short form.
    name: String,
    iface: Iface,
    /// A front-panel port (not management, loopback or SVI).
    physical: bool,
}

/// A request's view of the MIB.
pub struct View<'a> {
    input: MibInput<'a>,
    ifaces: OnceCell<Vec<IfRow>>,
    memo: RefCell<Vec<Option<Rc<Option<Rows>>>>>,
}

struct Object {
    oid: Oid,
    /// `None`: the device does not implement this object (noSuchObject).
    rows: fn(&View<'_>) -> Option<Rows>,
}

fn text(s: &str) -> SnmpValue {
    SnmpValue::OctetString(s.as_bytes().to_vec())
}

fn int(v: i64) -> SnmpValue {
    SnmpValue::Integer(v)
}

fn oidv(s: &str) -> SnmpValue {
    SnmpValue::ObjectId(s.parse().unwrap_or_default())
}

fn scalar(v: SnmpValue) -> Option<Rows> {
    Some(vec![(vec![0], v)])
}

/// `02:00:00:01:00:01` as six octets (empty when malformed).
fn mac_bytes(mac: &str) -> Vec<u8> {
    let b: Vec<u8> = mac
        .split([':', '.', '-'])
        .flat_map(|p| {
            (0..p.len())
                .step_by(2)
                .map(move |i| p.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        })
        .collect::<Option<Vec<u8>>>()
        .unwrap_or_default();
    if b.len() == 6 { b } else { Vec::new() }
}

/// The digits after a name's prefix: `Ethernet1/7` -> `1/7`.
fn numbering(name: &str) -> &str {
    let i = name
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(name.len());
    &name[i..]
}

/// The SNMP ifIndex a vendor gives an interface.
fn snmp_ifindex(dialect: Dialect, name: &str, f: &Iface) -> u32 {
    match dialect {
        // `show interfaces` <snmp-index> (junos.rs).
        Dialect::Junos => f.ifindex + 500,
        // iControl REST `ifIndex` (f5.rs).
        Dialect::F5 => 48 + f.ifindex * 16,
        Dialect::Nxos => {
            let num = numbering(name);
            let lower = name.to_ascii_lowercase();
            if lower == "mgmt0" {
                0x0500_0000
            } else if lower.starts_with("ethernet") {
                let mut it = num.split('/').map(|p| p.parse::<u32>().ok());
                match (it.next().flatten(), it.next().flatten()) {
                    // Ethernet1/1 = 0x1a000000, +0x1000 per port, +0x80000 per slot.
                    (Some(slot), Some(port)) if slot >= 1 && port >= 1 => {
                        0x1a00_0000 + (slot - 1) * 0x8_0000 + (port - 1) * 0x1000
                    }
                    _ => f.ifindex,
                }
            } else if lower.starts_with("vlan") {
                num.parse::<u32>().map_or(f.ifindex, |v| 0x0901_0000 + v)
            } else if lower.starts_with("loopback") {
                num.parse::<u32>().map_or(f.ifindex, |v| 0x1400_0000 + v)
            } else {
                f.ifindex
            }
        }
        Dialect::Eos | Dialect::Ios => f.ifindex,
    }
}

/// ifName: IOS and NX-OS use short names (`Et0/1`, `Eth1/1`); the others their full names.
fn short_name(dialect: Dialect, name: &str) -> String {
    let table: &[(&str, &str)] = match dialect {
        Dialect::Ios => &[
            ("GigabitEthernet", "Gi"),
            ("FastEthernet", "Fa"),
            ("Ethernet", "Et"),
            ("Loopback", "Lo"),
            ("Vlan", "Vl"),
            ("Port-channel", "Po"),
        ],
        Dialect::Nxos => &[("Ethernet", "Eth"), ("Loopback", "Lo"), ("loopback", "Lo")],
        _ => &[],
    };
    for (long, short) in table {
        if let Some(rest) = name.strip_prefix(long)
            && rest.starts_with(|c: char| c.is_ascii_digit())
        {
            return format!("{short}{rest}");
        }
    }
    name.to_owned()
}

/// sysDescr, sysObjectID, chassis model and description, as the vendor reports them.
pub struct Identity {
    pub sys_descr: String,
    pub sys_object_id: &'static str,
    pub model: &'static str,
    pub chassis_descr: &'static str,
    pub sys_services: i64,
}

pub fn identity(dialect: Dialect, style: Option<JunosStyle>) -> Identity {
    match dialect {
        Dialect::Eos => Identity {
            // "Arista Networks EOS version 4.20.5F running on an Arista Networks DCS-7150S-52-CL"
            sys_descr: format!(
                "Arista Networks EOS version {} running on an Arista Networks cEOSLab",
                super::super::eos::VERSION
            ),
            sys_object_id: "1.3.6.1.4.1.30065.1.3011.7010.427.48",
            model: "cEOSLab",
            chassis_descr: "cEOSLab Chassis",
            sys_services: 14,
        },
        Dialect::Ios => Identity {
            // IOS puts its `show version` banner, CRLF-separated, in sysDescr.
            sys_descr: "Cisco IOS Software [Cupertino], Linux Software (X86_64BI_LINUX_L2-ADVENTERPRISEK9-M), \
                        Version 17.12.1, RELEASE SOFTWARE (fc5)\r\nTechnical Support: http://www.cisco.com/techsupport\r\n\
                        Copyright (c) 1986-2023 by Cisco Systems, Inc.\r\nCompiled Thu 27-Jul-23 22:33 by mcpre"
                .to_owned(),
            sys_object_id: "1.3.6.1.4.1.9.1.1208",
            model: "IOL-L2",
            chassis_descr: "IOU Linux L2 Chassis",
            sys_services: 6,
        },
        Dialect::Nxos => Identity {
            sys_descr: "Cisco NX-OS(tm) nxos.10.3.3.bin, Software (nxos), Version 10.3(3), RELEASE SOFTWARE \
                        Copyright (c) 2002-2023 by Cisco Systems, Inc. Compiled 7/25/2023 12:00:00"
                .to_owned(),
            sys_object_id: "1.3.6.1.4.1.9.12.3.1.3.1812",
            model: "N9K-C9300v",
            chassis_descr: "Nexus9000 C9300v Chassis",
            sys_services: 70,
        },
        Dialect::Junos => {
            let (model, kind, product, box_descr) = match style.unwrap_or(JunosStyle::Els) {
                JunosStyle::Mx => (
                    "mx480",
                    "internet router",
                    "1.3.6.1.4.1.2636.1.1.1.2.25",
                    "Juniper MX480 Internet Backbone Router",
                ),
                JunosStyle::Ex => (
                    "ex4200-48t",
                    "Ethernet Switch",
                    "1.3.6.1.4.1.2636.1.1.1.2.31",
                    "Juniper EX4200-48T Switch",
                ),
                JunosStyle::Els => (
                    "ex9214",
                    "Ethernet Switch",
                    "1.3.6.1.4.1.2636.1.1.1.2.144",
                    "Juniper EX9214 Switch",
                ),
            };
            Identity {
                // "Juniper Networks, Inc. mx960 internet router, kernel JUNOS 13.3R9.13, Build date: ..."
                sys_descr: format!(
                    "Juniper Networks, Inc. {model} {kind}, kernel JUNOS {}, Build date: 2023-06-22 14:29:59 UTC \
                     Copyright (c) 1996-2023 Juniper Networks, Inc.",
                    super::super::junos::JUNOS_VERSION
                ),
                sys_object_id: product,
                model,
                chassis_descr: box_descr,
                sys_services: 4,
            }
        }
        Dialect::F5 => Identity {
            sys_descr: format!(
                "BIG-IP Virtual Edition : Linux 3.10.0-1160.el7.x86_64 : BIG-IP software release {}, build 0.0.6",
                super::super::f5::VERSION
            ),
            sys_object_id: "1.3.6.1.4.1.3375.2.1.3.4.43",
            model: "BIG-IP Virtual Edition",
            chassis_descr: "BIG-IP Virtual Edition",
            sys_services: 78,
        },
    }
}

impl<'a> View<'a> {
    pub fn new(input: MibInput<'a>) -> Self {
        View {
            input,
            ifaces: OnceCell::new(),
            memo: RefCell::new(vec![None; objects().len()]),
        }
    }

    fn dialect(&self) -> Dialect {
        self.input.dev.dialect
    }

    fn identity(&self) -> Identity {
        identity(self.dialect(), self.input.junos_style)
    }

    fn ifaces(&self) -> &[IfRow] {
        self.ifaces.get_or_init(|| {
            let d = self.dialect();
            let mut rows: Vec<IfRow> = Vec::with_capacity(self.input.state.interfaces.len());
            for (name, f) in &self.input.state.interfaces {
                let ifindex = snmp_ifindex(d, name, f);
                if rows.iter().any(|r| r.ifindex == ifindex) {
                    continue;
                }
                rows.push(IfRow {
                    ifindex,
                    descr: name.clone(),
                    name: short_name(d, name),
                    iface: f.clone(),
                    physical: f.ifindex < 500_000
                        && Some(name) != self.input.state.mgmt_interface.as_ref(),
                });
            }
            rows.sort_by_key(|r| r.ifindex);
            rows
        })
    }

    /// LLDP local port number of a front-panel port: sequential on IOS, the ifIndex elsewhere.
    fn lldp_port_num(&self, r: &IfRow) -> u32 {
        if self.dialect() == Dialect::Ios {
            r.iface.ifindex
        } else {
            r.ifindex
        }
    }

    fn rows(&self, i: usize) -> Rc<Option<Rows>> {
        if let Some(Some(r)) = self.memo.borrow().get(i) {
            return r.clone();
        }
        let mut rows = objects().get(i).and_then(|o| (o.rows)(self));
        if let Some(r) = &mut rows {
            r.sort_by(|a, b| a.0.cmp(&b.0));
            r.dedup_by(|a, b| a.0 == b.0);
        }
        let rc = Rc::new(rows);
        if let Some(slot) = self.memo.borrow_mut().get_mut(i) {
            *slot = Some(rc.clone());
        }
        rc
    }

    /// GET (RFC 3416 §4.2.1): the value, or noSuchObject / noSuchInstance.
    pub fn get(&self, oid: &Oid) -> SnmpValue {
        let objs = objects();
        let Some(i) = objs.iter().position(|o| oid.starts_with(&o.oid)) else {
            return SnmpValue::NoSuchObject;
        };
        let rows = self.rows(i);
        let Some(rows) = rows.as_ref() else {
            return SnmpValue::NoSuchObject;
        };
        let suffix = oid.suffix_after(&objs[i].oid).unwrap_or(&[]);
        match rows.binary_search_by(|(idx, _)| idx.as_slice().cmp(suffix)) {
            Ok(k) => rows[k].1.clone(),
            Err(_) => SnmpValue::NoSuchInstance,
        }
    }

    /// GETNEXT (RFC 3416 §4.2.2): the first instance after `oid` in lexicographic order; `None` at the
    /// end of the MIB view.
    pub fn get_next(&self, oid: &Oid) -> Option<Varbind> {
        let objs = objects();
        // Objects are sorted and none lies under another, so those that can hold a successor start at
        // the first object whose OID is >= `oid` or that contains `oid`.
        let start = objs.partition_point(|o| o.oid < *oid && !oid.starts_with(&o.oid));
        for (i, o) in objs.iter().enumerate().skip(start) {
            let rows = self.rows(i);
            let Some(rows) = rows.as_ref() else {
                continue;
            };
            let next = match oid.suffix_after(&o.oid) {
                Some(suffix) => rows.iter().find(|(idx, _)| idx.as_slice() > suffix),
                None => rows.first(),
            };
            if let Some((idx, v)) = next {
                return Some(Varbind::new(o.oid.child(idx), v.clone()));
            }
        }
        None
    }
}

// ---------------------------------------------------------------------------------------------------
// The objects

fn system(v: &View<'_>, arc: u32) -> Option<Rows> {
    let st = &v.input.state;
    let id = v.identity();
    scalar(match arc {
        1 => text(&id.sys_descr),
        2 => oidv(id.sys_object_id),
        3 => SnmpValue::TimeTicks(v.input.uptime_ticks),
        4 => text(&st.contact),
        5 => text(&st.hostname),
        6 => text(&st.location),
        _ => int(id.sys_services),
    })
}

fn if_column(v: &View<'_>, f: fn(&View<'_>, &IfRow) -> Option<SnmpValue>) -> Option<Rows> {
    Some(
        v.ifaces()
            .iter()
            .filter_map(|r| Some((vec![r.ifindex], f(v, r)?)))
            .collect(),
    )
}

fn if_type(r: &IfRow) -> i64 {
    let l = r.descr.to_ascii_lowercase();
    if l.starts_with("loopback") {
        24 // softwareLoopback
    } else if l.starts_with("vlan") {
        53 // propVirtual
    } else {
        6 // ethernetCsmacd
    }
}

fn status(up: bool) -> SnmpValue {
    int(if up { 1 } else { 2 })
}

fn entity(v: &View<'_>, column: u32) -> Option<Rows> {
    if !matches!(v.dialect(), Dialect::Eos | Dialect::Ios | Dialect::Nxos) {
        return None;
    }
    let id = v.identity();
    let value = match column {
        2 => text(id.chassis_descr),
        4 => int(0),
        5 => int(3), // chassis
        7 => text("Chassis"),
        11 => text(&v.input.dev.serial()),
        _ => text(id.model),
    };
    Some(vec![(vec![1], value)])
}

fn vlan_names(v: &View<'_>) -> Rows {
    v.input
        .state
        .vlans
        .iter()
        .map(|(id, name)| (vec![u32::from(*id)], text(name)))
        .collect()
}

/// lldpLocPortTable (IEEE 802.1AB-2005 §12.2) in each vendor's style (see the collector's
/// `local_port_name`).
fn lldp_loc(v: &View<'_>, column: u32) -> Option<Rows> {
    let d = v.dialect();
    Some(
        v.ifaces()
            .iter()
            .filter(|r| r.physical)
            .map(|r| {
                let num = v.lldp_port_num(r);
                let value = match (d, column) {
                    // LldpPortIdSubtype: 3 macAddress, 5 interfaceName, 7 local.
                    (Dialect::Junos, 2) => int(7),
                    (Dialect::Nxos, 2) => int(3),
                    (_, 2) => int(5),
                    (Dialect::Junos, 3) => text(&r.ifindex.to_string()),
                    (Dialect::Nxos, 3) => text(&r.iface.mac),
                    (Dialect::Ios, 3) => text(&r.name),
                    (_, 3) => text(&r.descr),
                    (Dialect::Junos, _) => text("-"),
                    (Dialect::Eos | Dialect::F5, _) => text(&r.iface.description),
                    (_, _) => text(&r.descr),
                };
                (vec![num], value)
            })
            .collect(),
    )
}

/// lldpRemTable, INDEX { lldpRemTimeMark, lldpRemLocalPortNum, lldpRemIndex }.
fn lldp_rem(v: &View<'_>, column: u32) -> Option<Rows> {
    let mut out = Vec::new();
    let mut per_port: std::collections::BTreeMap<u32, u32> = Default::default();
    for n in v.input.state.lldp_neighbors() {
        let Some(r) = v.ifaces().iter().find(|r| r.descr == n.local_port) else {
            continue;
        };
        let port = v.lldp_port_num(r);
        let k = per_port.entry(port).or_insert(0);
        *k += 1;
        let value = match column {
            4 => int(4), // chassis id subtype macAddress
            5 => SnmpValue::OctetString(mac_bytes(&n.chassis_id)),
            6 => int(5), // port id subtype interfaceName
            7 | 8 => text(&n.port),
            _ => text(&n.system_name),
        };
        out.push((vec![0, port, *k], value));
    }
    Some(out)
}

macro_rules! obj {
    ($oid:expr, $f:expr) => {
        Object {
            oid: $oid.parse().unwrap_or_default(),
            rows: $f,
        }
    };
}

/// Every object served, sorted by OID.
fn objects() -> &'static [Object] {
    static OBJECTS: OnceLock<Vec<Object>> = OnceLock::new();
    OBJECTS.get_or_init(|| {
        let mut v = system_objects();
        v.extend(interface_objects());
        v.extend(entity_and_engine_objects());
        v.sort_by(|a, b| a.oid.cmp(&b.oid));
        v
    })
}

/// LLDP-MIB local and remote systems, SNMPv2-MIB system group.
fn system_objects() -> Vec<Object> {
    vec![
        // LLDP-MIB lldpLocalSystemData.
        obj!("1.0.8802.1.1.2.1.3.1", |_v| scalar(int(4))),
        obj!("1.0.8802.1.1.2.1.3.2", |v| {
            let mac = v.ifaces().first().map(|r| r.iface.mac.clone());
            scalar(SnmpValue::OctetString(mac_bytes(&mac.unwrap_or_default())))
        }),
        obj!("1.0.8802.1.1.2.1.3.3", |v| scalar(text(
            &v.input.state.hostname
        ))),
        obj!("1.0.8802.1.1.2.1.3.4", |v| scalar(text(
            &v.identity().sys_descr
        ))),
        obj!("1.0.8802.1.1.2.1.3.7.1.2", |v| lldp_loc(v, 2)),
        obj!("1.0.8802.1.1.2.1.3.7.1.3", |v| lldp_loc(v, 3)),
        obj!("1.0.8802.1.1.2.1.3.7.1.4", |v| lldp_loc(v, 4)),
        obj!("1.0.8802.1.1.2.1.4.1.1.4", |v| lldp_rem(v, 4)),
        obj!("1.0.8802.1.1.2.1.4.1.1.5", |v| lldp_rem(v, 5)),
        obj!("1.0.8802.1.1.2.1.4.1.1.6", |v| lldp_rem(v, 6)),
        obj!("1.0.8802.1.1.2.1.4.1.1.7", |v| lldp_rem(v, 7)),
        obj!("1.0.8802.1.1.2.1.4.1.1.8", |v| lldp_rem(v, 8)),
        obj!("1.0.8802.1.1.2.1.4.1.1.9", |v| lldp_rem(v, 9)),
        // SNMPv2-MIB system group.
        obj!("1.3.6.1.2.1.1.1", |v| system(v, 1)),
        obj!("1.3.6.1.2.1.1.2", |v| system(v, 2)),
        obj!("1.3.6.1.2.1.1.3", |v| system(v, 3)),
        obj!("1.3.6.1.2.1.1.4", |v| system(v, 4)),
        obj!("1.3.6.1.2.1.1.5", |v| system(v, 5)),
        obj!("1.3.6.1.2.1.1.6", |v| system(v, 6)),
        obj!("1.3.6.1.2.1.1.7", |v| system(v, 7)),
    ]
}

/// IF-MIB (ifTable, ifXTable), BRIDGE-MIB and Q-BRIDGE-MIB.
fn interface_objects() -> Vec<Object> {
    vec![
        // IF-MIB interfaces group.
        obj!("1.3.6.1.2.1.2.1", |v| scalar(int(v.ifaces().len() as i64))),
        obj!("1.3.6.1.2.1.2.2.1.1", |v| if_column(v, |_, r| Some(int(
            i64::from(r.ifindex)
        )))),
        obj!("1.3.6.1.2.1.2.2.1.2", |v| if_column(v, |_, r| Some(text(
            &r.descr
        )))),
        obj!("1.3.6.1.2.1.2.2.1.3", |v| if_column(v, |_, r| Some(int(
            if_type(r)
        )))),
        obj!("1.3.6.1.2.1.2.2.1.4", |v| if_column(v, |_, r| Some(int(
            i64::from(r.iface.mtu)
        )))),
        obj!("1.3.6.1.2.1.2.2.1.5", |v| if_column(v, |_, r| Some(
            SnmpValue::Gauge32(
                u32::try_from(r.iface.speed_mbps.saturating_mul(1_000_000)).unwrap_or(u32::MAX)
            )
        ))),
        obj!("1.3.6.1.2.1.2.2.1.6", |v| if_column(v, |_, r| Some(
            SnmpValue::OctetString(mac_bytes(&r.iface.mac))
        ))),
        obj!("1.3.6.1.2.1.2.2.1.7", |v| if_column(v, |_, r| Some(
            status(r.iface.enabled)
        ))),
        obj!("1.3.6.1.2.1.2.2.1.8", |v| if_column(v, |_, r| Some(
            status(r.iface.status_up())
        ))),
        obj!("1.3.6.1.2.1.2.2.1.9", |v| if_column(v, |_, _| Some(
            SnmpValue::TimeTicks(0)
        ))),
        // BRIDGE-MIB dot1dBasePortIfIndex: switchports, numbered by front-panel position.
        obj!("1.3.6.1.2.1.17.1.4.1.2", |v| Some(
            v.ifaces()
                .iter()
                .filter(|r| r.physical && r.iface.mode != Mode::Routed)
                .map(|r| (vec![r.iface.ifindex], int(i64::from(r.ifindex))))
                .collect()
        )),
        // Q-BRIDGE-MIB dot1qVlanStaticName.
        obj!("1.3.6.1.2.1.17.7.1.4.3.1.1", |v| match v.dialect() {
            Dialect::Ios | Dialect::Nxos => None,
            _ => Some(vlan_names(v)),
        }),
        // IF-MIB ifXTable.
        obj!("1.3.6.1.2.1.31.1.1.1.1", |v| if_column(v, |_, r| Some(
            text(&r.name)
        ))),
        obj!("1.3.6.1.2.1.31.1.1.1.15", |v| if_column(v, |_, r| Some(
            SnmpValue::Gauge32(u32::try_from(r.iface.speed_mbps).unwrap_or(u32::MAX))
        ))),
        obj!("1.3.6.1.2.1.31.1.1.1.18", |v| if_column(v, |_, r| Some(
            text(&r.iface.description)
        ))),
    ]
}

/// ENTITY-MIB, the vendors' VLAN and chassis objects, SNMP-FRAMEWORK-MIB snmpEngine.
fn entity_and_engine_objects() -> Vec<Object> {
    vec![
        // ENTITY-MIB entPhysicalTable, the chassis.
        obj!("1.3.6.1.2.1.47.1.1.1.1.2", |v| entity(v, 2)),
        obj!("1.3.6.1.2.1.47.1.1.1.1.4", |v| entity(v, 4)),
        obj!("1.3.6.1.2.1.47.1.1.1.1.5", |v| entity(v, 5)),
        obj!("1.3.6.1.2.1.47.1.1.1.1.7", |v| entity(v, 7)),
        obj!("1.3.6.1.2.1.47.1.1.1.1.11", |v| entity(v, 11)),
        obj!("1.3.6.1.2.1.47.1.1.1.1.13", |v| entity(v, 13)),
        // CISCO-VTP-MIB vtpVlanName, INDEX { managementDomainIndex, vtpVlanIndex }.
        obj!("1.3.6.1.4.1.9.9.46.1.3.1.1.4", |v| match v.dialect() {
            Dialect::Ios | Dialect::Nxos => Some(
                vlan_names(v)
                    .into_iter()
                    .map(|(mut idx, val)| {
                        idx.insert(0, 1);
                        (idx, val)
                    })
                    .collect()
            ),
            _ => None,
        }),
        // JUNIPER-MIB jnxBoxDescr, jnxBoxSerialNo.
        obj!("1.3.6.1.4.1.2636.3.1.2", |v| match v.dialect() {
            Dialect::Junos => scalar(text(v.identity().chassis_descr)),
            _ => None,
        }),
        obj!("1.3.6.1.4.1.2636.3.1.3", |v| match v.dialect() {
            Dialect::Junos => scalar(text(&v.input.dev.serial())),
            _ => None,
        }),
        // SNMP-FRAMEWORK-MIB snmpEngine group.
        obj!("1.3.6.1.6.3.10.2.1.1", |v| scalar(SnmpValue::OctetString(
            v.input.engine_id.to_vec()
        ))),
        obj!("1.3.6.1.6.3.10.2.1.2", |v| scalar(int(i64::from(
            v.input.engine_boots
        )))),
        obj!("1.3.6.1.6.3.10.2.1.3", |v| scalar(int(i64::from(
            v.input.engine_time
        )))),
        obj!("1.3.6.1.6.3.10.2.1.4", |v| scalar(int(i64::from(
            v.input.max_message_size
        )))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fault::Faults;

    #[test]
    fn objects_are_sorted_and_disjoint() {
        let objs = objects();
        for w in objs.windows(2) {
            assert!(w[0].oid < w[1].oid, "{} {}", w[0].oid, w[1].oid);
            assert!(
                !w[1].oid.starts_with(&w[0].oid),
                "{} under {}",
                w[1].oid,
                w[0].oid
            );
        }
        assert!(objs.iter().all(|o| o.oid.len() > 4));
    }

    #[test]
    fn vendor_ifindex_and_names() {
        let f = Iface::new(1, "02:00:00:01:00:01".into(), 1500, false);
        assert_eq!(snmp_ifindex(Dialect::Nxos, "Ethernet1/1", &f), 436_207_616);
        assert_eq!(snmp_ifindex(Dialect::Nxos, "Ethernet1/2", &f), 436_211_712);
        assert_eq!(snmp_ifindex(Dialect::Nxos, "mgmt0", &f), 83_886_080);
        assert_eq!(snmp_ifindex(Dialect::Nxos, "Vlan50", &f), 151_060_530);
        assert_eq!(snmp_ifindex(Dialect::Junos, "ge-0/0/0", &f), 501);
        assert_eq!(short_name(Dialect::Ios, "Ethernet0/1"), "Et0/1");
        assert_eq!(short_name(Dialect::Nxos, "Ethernet1/1"), "Eth1/1");
        assert_eq!(short_name(Dialect::Eos, "Ethernet1"), "Ethernet1");
        assert_eq!(mac_bytes("02:00:00:01:00:0a"), [2, 0, 0, 1, 0, 10]);
        assert!(mac_bytes("zz").is_empty());
    }

    #[test]
    fn get_and_get_next_follow_lexicographic_order() {
        let dev = Device::new("sw1", Dialect::Eos, 1, 4, "a", "b", Faults::default());
        let input = MibInput {
            dev: &dev,
            state: dev.state().clone(),
            junos_style: None,
            uptime_ticks: 42,
            engine_id: b"\x80\x00\x75\xf1\x04x",
            engine_boots: 1,
            engine_time: 5,
            max_message_size: 1472,
        };
        let v = View::new(input);
        let o = |s: &str| s.parse::<Oid>().unwrap();
        assert_eq!(v.get(&o("1.3.6.1.2.1.1.5.0")), text("sw1"));
        assert_eq!(v.get(&o("1.3.6.1.2.1.1.5.1")), SnmpValue::NoSuchInstance);
        assert_eq!(v.get(&o("1.3.6.1.2.1.1.5")), SnmpValue::NoSuchInstance);
        assert_eq!(v.get(&o("1.3.6.1.2.1.1.99.0")), SnmpValue::NoSuchObject);
        assert_eq!(
            v.get(&o("1.3.6.1.4.1.9.9.46.1.3.1.1.4.1.1")),
            SnmpValue::NoSuchObject,
            "no CISCO-VTP-MIB on EOS"
        );
        // Walk everything: strictly increasing, ends with endOfMibView.
        let mut cur = o("0.0");
        let mut n = 0;
        while let Some(vb) = v.get_next(&cur) {
            assert!(vb.oid > cur, "{} after {}", vb.oid, cur);
            cur = vb.oid;
            n += 1;
            assert!(n < 10_000);
        }
        assert!(n > 60, "{n} instances");
        // Next of a column OID is its first row; past a column, the next column.
        let first = v.get_next(&o("1.3.6.1.2.1.2.2.1.2")).unwrap();
        assert_eq!(first.oid, o("1.3.6.1.2.1.2.2.1.2.1"));
        assert_eq!(first.value, text("Ethernet1"));
        let after = v.get_next(&o("1.3.6.1.2.1.2.2.1.2.999999")).unwrap();
        assert_eq!(after.oid, o("1.3.6.1.2.1.2.2.1.3.1"));
        // An OID inside the gap between objects.
        let sys = v.get_next(&o("1.3.6.1.2.1.1.1.0.5")).unwrap();
        assert_eq!(sys.oid, o("1.3.6.1.2.1.1.2.0"));
        assert!(v.get_next(&o("1.3.6.1.6.3.10.2.1.4.0")).is_none());
        assert!(v.get_next(&o("2.0")).is_none());
    }
}
