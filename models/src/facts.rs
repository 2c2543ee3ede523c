//! Device facts: the automatic-attribute shape every driver and the SNMP collector produce (docs/design.md §3 step 4).
//!
//! Facts play the part Ohai plays on a server: they are gathered at the start of every run and become the
//! node's `automatic` attributes, the highest precedence level (docs/design.md §3 step 6). The shape follows
//! NAPALM's getters (`get_facts`, `get_interfaces`, `get_vlans`, `get_lldp_neighbors_detail`) so every vendor
//! driver fills the same fields, and the SNMP collector can fill the gaps a driver leaves
//! ([`DeviceFacts::fill_missing_from`]).
//!
//! Every field is optional or a possibly-empty map: a device that does not report something leaves it out,
//! it never gets a made-up default. Serialised keys are snake_case; absent fields are omitted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::resource::{Link, LinkMode, VlanId, VlanSet};

/// Everything a run knows about a device before it changes anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceFacts {
    /// Short host name (the first label of `fqdn` when the device reports a dotted name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Fully-qualified name as the device reports it (sysName, `show hostname`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fqdn: Option<String>,
    /// Lower-case vendor name: `cisco`, `juniper`, `arista`, `f5`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// Operating system family: `eos`, `junos`, `ios`, `nxos`, `tmos`, `linux`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Software version as the device prints it (`4.20.5F`, `13.3R9.13`, `12.2(55)SE3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_version: Option<String>,
    /// Hardware model (`DCS-7150S-52-CL`, `WS-C3560G-48TS-E`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Chassis serial number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Seconds since the device (or its management agent) started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uptime: Option<u64>,
    /// Interfaces by name (the name the device's CLI uses, e.g. IF-MIB ifName).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub interfaces: BTreeMap<String, InterfaceFacts>,
    /// VLANs by id (JSON object keys are the decimal ids): name and the ports that carry each.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub vlans: BTreeMap<u16, VlanFacts>,
    /// LLDP neighbours by local interface name; a port can see several neighbours (a hub, a VM host).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub lldp_neighbors: BTreeMap<String, Vec<LldpNeighbor>>,
    /// The SNMP system group (RFC 3418), when the facts came over SNMP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snmp: Option<SnmpSystem>,
    /// Aggregates by name: members, LACP mode, status (where the driver reads aggregates).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub lags: BTreeMap<String, LagFacts>,
    /// Addresses per interface, in the shape of NAPALM's `get_interfaces_ip`:
    /// `{"Vlan10": {"ipv4": {"10.0.0.1": {"prefix_length": 24}}, "ipv6": {...}}}`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub interfaces_ip: BTreeMap<String, InterfaceIpFacts>,
    /// Why the LLDP neighbour table could not be read at all; `None` when it was read (empty or not).
    /// Not an attribute: it tells "could not read" from "no neighbour" (`netgw links`).
    #[serde(skip)]
    pub lldp_unreadable: Option<String>,
}

/// One aggregate: its members, how they negotiate, whether it is up (its interface's
/// `oper_status`, where the device reports one), and each member's bundling state (`netgw facts` and
/// `netgw links`, where the platform reports one).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LagFacts {
    pub members: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lacp: Option<crate::plan::lag::LacpMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oper_status: Option<OperStatus>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub member_state: BTreeMap<String, MemberState>,
}

/// How one member of an aggregate stands, as the platform's summary reports it (IOS `show
/// etherchannel summary`, NX-OS and EOS `show port-channel summary`, Junos LACP mux state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberState {
    /// Carrying the aggregate's traffic (`P`, `bndl`; Junos `Collecting distributing`).
    Bundled,
    /// Held out by the aggregate (`s`, `susp`: LACP not answered where individual ports are
    /// suspended).
    Suspended,
    /// LACP hot standby (`H`).
    Standby,
    /// The link is down (`D`).
    Down,
    /// Up and not in the bundle (`I` stand-alone / individual, `w` waiting, `u` unsuitable).
    NotBundled,
}

/// One interface's addresses, as NAPALM's `get_interfaces_ip` gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct InterfaceIpFacts {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ipv4: BTreeMap<String, PrefixLength>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ipv6: BTreeMap<String, PrefixLength>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrefixLength {
    pub prefix_length: u8,
}

/// IF-MIB ifAdminStatus (RFC 2863): what the operator asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdminStatus {
    Up,
    Down,
    Testing,
}

impl AdminStatus {
    /// From the IF-MIB integer (1 up, 2 down, 3 testing); anything else is not a status.
    pub fn from_if_mib(value: i64) -> Option<Self> {
        match value {
            1 => Some(AdminStatus::Up),
            2 => Some(AdminStatus::Down),
            3 => Some(AdminStatus::Testing),
            _ => None,
        }
    }
}

/// IF-MIB ifOperStatus (RFC 2863 §3.1.12): what the interface is actually doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperStatus {
    Up,
    Down,
    Testing,
    Unknown,
    Dormant,
    NotPresent,
    LowerLayerDown,
}

impl OperStatus {
    /// From the IF-MIB integer (1 up .. 7 lowerLayerDown); anything else is not a status.
    pub fn from_if_mib(value: i64) -> Option<Self> {
        match value {
            1 => Some(OperStatus::Up),
            2 => Some(OperStatus::Down),
            3 => Some(OperStatus::Testing),
            4 => Some(OperStatus::Unknown),
            5 => Some(OperStatus::Dormant),
            6 => Some(OperStatus::NotPresent),
            7 => Some(OperStatus::LowerLayerDown),
            _ => None,
        }
    }
}

/// One interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct InterfaceFacts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admin_status: Option<AdminStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oper_status: Option<OperStatus>,
    /// Largest IP datagram / frame payload in bytes (ifMtu).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Bits per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<u64>,
    /// Lower-case colon-separated hardware address (`00:1c:73:aa:bb:cc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// Operator-set description (ifAlias, `description ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// SNMP ifIndex, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ifindex: Option<u32>,
    /// Layer-2 state of a switch port, as the planner observed it ([`DeviceFacts::apply_layer2`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switchport: Option<SwitchportFacts>,
}

/// A port's switchport state, with the platform's defaults applied as the planner sees them (an IOS
/// trunk without an allowed list carries `1-4094`, native VLAN 1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SwitchportFacts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<LinkMode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_vlan: Option<VlanId>,
    /// The allowed list as a range string (`1-99,200`), as in desired state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trunk_vlans: Option<VlanSet>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_vlan: Option<VlanId>,
}

impl SwitchportFacts {
    /// The layer-2 part of an observed link; `None` when it says nothing about layer 2.
    pub fn from_link(l: &Link) -> Option<Self> {
        let sp = SwitchportFacts {
            mode: l.mode,
            access_vlan: l.access_vlan,
            trunk_vlans: l.trunk_vlans.clone(),
            native_vlan: l.native_vlan,
        };
        (sp != SwitchportFacts::default()).then_some(sp)
    }

    /// Whether frames of VLAN `id` cross this port: an access port's VLAN, a trunk's allowed or
    /// native VLANs. A routed port carries none.
    pub fn carries(&self, id: VlanId) -> bool {
        match self.mode {
            Some(LinkMode::Routed) => false,
            Some(LinkMode::Access) => self.access_vlan == Some(id),
            Some(LinkMode::Trunk) | None => {
                self.trunk_vlans.as_ref().is_some_and(|s| s.contains(id))
                    || self.native_vlan == Some(id)
                    || (self.mode.is_none() && self.access_vlan == Some(id))
            }
        }
    }
}

/// One VLAN of the device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VlanFacts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The ports that carry the VLAN ([`SwitchportFacts::carries`]), sorted by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<String>,
}

impl VlanFacts {
    pub fn named(name: impl Into<String>) -> Self {
        VlanFacts {
            name: Some(name.into()),
            ports: Vec::new(),
        }
    }
}

/// One LLDP neighbour seen on a local port (LLDP-MIB lldpRemTable, IEEE 802.1AB).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LldpNeighbor {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_system_name: Option<String>,
    /// The neighbour's port id (an interface name, a MAC address or a local number, see `remote_port_id_subtype`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_port: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_port_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_chassis_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_system_description: Option<String>,
    /// LldpChassisIdSubtype name: `chassis_component`, `interface_alias`, `port_component`, `mac_address`,
    /// `network_address`, `interface_name`, `local`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_chassis_id_subtype: Option<String>,
    /// LldpPortIdSubtype name: `interface_alias`, `port_component`, `mac_address`, `network_address`,
    /// `interface_name`, `agent_circuit_id`, `local`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_port_id_subtype: Option<String>,
}

/// The SNMP system group (SNMPv2-MIB, RFC 3418 §2).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SnmpSystem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_descr: Option<String>,
    /// Dotted numeric OID (`1.3.6.1.4.1.30065.1.3011.7150.3282.52.2745`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_object_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_location: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_contact: Option<String>,
    /// sysUpTime in hundredths of a second (TimeTicks), as the agent reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sys_up_time: Option<u64>,
}

impl DeviceFacts {
    /// The facts as the `automatic` attribute object: snake_case keys, absent facts left out.
    pub fn to_automatic(&self) -> serde_json::Value {
        // The derive only produces strings, integers, maps and arrays, so this cannot fail; an empty object
        // is still the right answer if it ever did.
        serde_json::to_value(self).unwrap_or_else(|_| serde_json::Value::Object(Default::default()))
    }

    /// Read facts back from an `automatic` attribute object (the inverse of [`DeviceFacts::to_automatic`]).
    pub fn from_automatic(value: &serde_json::Value) -> Result<Self, serde_json::Error> {
        DeviceFacts::deserialize(value)
    }

    /// Layer-2 facts from the links the planner observed (the driver's own reads, so the facts and the
    /// plan never disagree): `interfaces.NAME.switchport` for every port with layer-2 state, and each
    /// known VLAN's `ports`. VLANs the device did not list get no entry.
    pub fn apply_layer2(&mut self, links: &[Link]) {
        for l in links {
            let Some(sp) = SwitchportFacts::from_link(l) else {
                continue;
            };
            for (id, v) in self.vlans.iter_mut() {
                if VlanId::new(i64::from(*id)).is_ok_and(|id| sp.carries(id)) {
                    v.ports.push(l.name.clone());
                }
            }
            self.interfaces
                .entry(l.name.clone())
                .or_default()
                .switchport = Some(sp);
        }
        for v in self.vlans.values_mut() {
            v.ports.sort();
            v.ports.dedup();
        }
    }

    /// Aggregate and address facts from what the driver read of them (`lags`, `interfaces_ip`); an
    /// aggregate's status is its interface's `oper_status`.
    pub fn apply_lag_l3(
        &mut self,
        lags: &[crate::plan::lag::Lag],
        l3: &[crate::plan::l3::L3Interface],
    ) {
        for l in lags {
            let oper_status = self.interfaces.get(&l.name).and_then(|i| i.oper_status);
            self.lags.insert(
                l.name.clone(),
                LagFacts {
                    members: l.members().to_vec(),
                    lacp: l.lacp,
                    oper_status,
                    member_state: BTreeMap::new(),
                },
            );
        }
        for i in l3 {
            let mut ip = InterfaceIpFacts::default();
            for a in i.addresses() {
                let list = if a.addr.is_ipv4() {
                    &mut ip.ipv4
                } else {
                    &mut ip.ipv6
                };
                list.insert(
                    a.addr.to_string(),
                    PrefixLength {
                        prefix_length: a.prefix,
                    },
                );
            }
            if !(ip.ipv4.is_empty() && ip.ipv6.is_empty()) {
                self.interfaces_ip.insert(i.name.clone(), ip);
            }
        }
    }

    /// Each member's bundling state (`lags`: aggregate name, then member and state, names as the
    /// device printed them): onto the aggregate and member of the same interface already in the
    /// facts (`Po10` is `Port-Channel10`), else as new entries.
    pub fn apply_lag_members(&mut self, lags: &[(String, Vec<(String, MemberState)>)]) {
        use crate::resource::same_interface;
        for (name, members) in lags {
            let key = self
                .lags
                .keys()
                .find(|k| same_interface(k, name))
                .cloned()
                .unwrap_or_else(|| name.clone());
            let lag = self.lags.entry(key).or_default();
            for (member, state) in members {
                let m = match lag.members.iter().find(|m| same_interface(m, member)) {
                    Some(m) => m.clone(),
                    None => {
                        lag.members.push(member.clone());
                        member.clone()
                    }
                };
                lag.member_state.insert(m, *state);
            }
        }
    }

    /// Fill every fact `self` lacks from `other` (a driver's own facts first, SNMP's for the rest).
    /// Interfaces present in both are completed field by field; maps gain the entries they lack.
    pub fn fill_missing_from(&mut self, other: &DeviceFacts) {
        fn fill<T: Clone>(mine: &mut Option<T>, theirs: &Option<T>) {
            if mine.is_none() {
                mine.clone_from(theirs);
            }
        }
        fill(&mut self.hostname, &other.hostname);
        fill(&mut self.fqdn, &other.fqdn);
        fill(&mut self.vendor, &other.vendor);
        fill(&mut self.platform, &other.platform);
        fill(&mut self.platform_version, &other.platform_version);
        fill(&mut self.model, &other.model);
        fill(&mut self.serial, &other.serial);
        fill(&mut self.uptime, &other.uptime);
        for (name, theirs) in &other.interfaces {
            let mine = self.interfaces.entry(name.clone()).or_default();
            fill(&mut mine.admin_status, &theirs.admin_status);
            fill(&mut mine.oper_status, &theirs.oper_status);
            fill(&mut mine.mtu, &theirs.mtu);
            fill(&mut mine.speed, &theirs.speed);
            fill(&mut mine.mac, &theirs.mac);
            fill(&mut mine.description, &theirs.description);
            fill(&mut mine.ifindex, &theirs.ifindex);
            fill(&mut mine.switchport, &theirs.switchport);
        }
        for (id, v) in &other.vlans {
            self.vlans.entry(*id).or_insert_with(|| v.clone());
        }
        for (port, neighbors) in &other.lldp_neighbors {
            self.lldp_neighbors
                .entry(port.clone())
                .or_insert_with(|| neighbors.clone());
        }
        fill(&mut self.snmp, &other.snmp);
    }
}

/// Split a reported host name into (hostname, fqdn): `sw1.example.net` -> (`sw1`, `sw1.example.net`);
/// a name without a dot is both. Empty or blank names give `None`.
pub fn split_hostname(name: &str) -> Option<(String, String)> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let short = name.split('.').next().unwrap_or(name);
    let short = if short.is_empty() { name } else { short };
    Some((short.to_owned(), name.to_owned()))
}

/// The one MAC normaliser of every vendor's facts: lower-case colon-separated MAC from the forms devices
/// print (`08:00:27:c6:00:f0`, `08-00-27-c6-00-f0`, `080027c600f0`, Cisco's and Arista's
/// `2c60.0cad.30de`). `None` when the text is not a MAC address, a group short of digits included.
pub fn normalize_mac(s: &str) -> Option<String> {
    mac_from(s, false)
}

/// [`normalize_mac`] that also reads groups whose leading zeros were dropped, as EOS prints them in
/// the field (`00c.297b.d2a8`, NAPALM issue 903).
pub fn normalize_mac_short_groups(s: &str) -> Option<String> {
    mac_from(s, true)
}

fn mac_from(s: &str, pad: bool) -> Option<String> {
    let t = s.trim();
    let grouped = |sep: &[char], count: usize, width: usize| -> Option<String> {
        let groups: Vec<&str> = t.split(sep).collect();
        let bad = |g: &&str| g.is_empty() || g.len() > width || (!pad && g.len() < width);
        if groups.len() != count || groups.iter().any(bad) {
            return None;
        }
        Some(groups.iter().map(|g| format!("{g:0>width$}")).collect())
    };
    let hex = if t.contains('.') {
        grouped(&['.'], 3, 4)?
    } else if t.contains(':') || t.contains('-') {
        grouped(&[':', '-'], 6, 2)?
    } else {
        t.to_owned()
    };
    if hex.len() != 12 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let lower = hex.to_ascii_lowercase();
    let pairs: Vec<&str> = (0..6).map(|i| &lower[i * 2..i * 2 + 2]).collect();
    Some(pairs.join(":"))
}

/// Format a hardware address as lower-case colon-separated hex; `None` for an empty one.
pub fn format_mac(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() {
        return None;
    }
    let parts: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Some(parts.join(":"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn member_states_join_the_configured_aggregate_and_members() {
        let mut f = DeviceFacts::default();
        f.lags.insert(
            "port-channel10".into(),
            LagFacts {
                members: vec!["Ethernet1/1".into(), "Ethernet1/2".into()],
                ..Default::default()
            },
        );
        f.apply_lag_members(&[
            (
                "Port-channel10".into(),
                vec![
                    ("Ethernet1/1".into(), MemberState::Bundled),
                    ("Ethernet1/2".into(), MemberState::Suspended),
                ],
            ),
            (
                "Port-channel20".into(),
                vec![("Ethernet1/3".into(), MemberState::Down)],
            ),
        ]);
        let a = serde_json::to_value(&f.lags).unwrap();
        assert_eq!(
            a,
            json!({
                "port-channel10": {"members": ["Ethernet1/1", "Ethernet1/2"],
                    "member_state": {"Ethernet1/1": "bundled", "Ethernet1/2": "suspended"}},
                "Port-channel20": {"members": ["Ethernet1/3"], "member_state": {"Ethernet1/3": "down"}}
            })
        );
    }

    #[test]
    fn macs_normalise() {
        assert_eq!(
            normalize_mac("2c60.0cad.30de").as_deref(),
            Some("2c:60:0c:ad:30:de")
        );
        assert_eq!(
            normalize_mac_short_groups("00c.297b.d2a8").as_deref(),
            Some("00:0c:29:7b:d2:a8")
        );
        assert_eq!(normalize_mac("00c.297b.d2a8"), None);
        assert_eq!(normalize_mac("00de.333.111"), None);
        assert_eq!(
            normalize_mac("0800.27C6.00F0").as_deref(),
            normalize_mac_short_groups("08-00-27-c6-00-f0").as_deref()
        );
        assert_eq!(
            normalize_mac("080027c600f0").as_deref(),
            Some("08:00:27:c6:00:f0")
        );
        assert_eq!(
            normalize_mac("08:00:27:C6:00:F0").as_deref(),
            Some("08:00:27:c6:00:f0")
        );
        assert_eq!(normalize_mac("Ethernet1"), None);
        assert_eq!(normalize_mac(""), None);
    }

    fn sample() -> DeviceFacts {
        let mut f = DeviceFacts {
            hostname: Some("sw1".into()),
            fqdn: Some("sw1.example.net".into()),
            vendor: Some("arista".into()),
            platform: Some("eos".into()),
            platform_version: Some("4.20.5F".into()),
            model: Some("DCS-7150S-52-CL".into()),
            serial: Some("JPE15151458".into()),
            uptime: Some(16_921_773),
            snmp: Some(SnmpSystem {
                sys_name: Some("sw1.example.net".into()),
                sys_up_time: Some(1_692_177_370),
                ..Default::default()
            }),
            ..Default::default()
        };
        f.interfaces.insert(
            "Ethernet1".into(),
            InterfaceFacts {
                admin_status: Some(AdminStatus::Up),
                oper_status: Some(OperStatus::LowerLayerDown),
                mtu: Some(9214),
                speed: Some(10_000_000_000),
                mac: format_mac(&[0x00, 0x1c, 0x73, 0x2a, 0xbb, 0x01]),
                description: Some("uplink".into()),
                ifindex: Some(1),
                switchport: None,
            },
        );
        f.vlans.insert(1, VlanFacts::named("default"));
        f.vlans.insert(40, VlanFacts::named("Baopan-Zhilian"));
        f.lldp_neighbors.insert(
            "Ethernet47".into(),
            vec![LldpNeighbor {
                remote_system_name: Some("ZJ-BP-Bak-Arista".into()),
                remote_port: Some("Ethernet23".into()),
                remote_port_id_subtype: Some("interface_name".into()),
                ..Default::default()
            }],
        );
        f
    }

    #[test]
    fn facts_to_automatic_has_snake_case_keys_and_omits_absent_facts() {
        let v = sample().to_automatic();
        assert_eq!(v["hostname"], "sw1");
        assert_eq!(v["platform_version"], "4.20.5F");
        assert_eq!(v["uptime"], 16_921_773);
        assert_eq!(
            v["interfaces"]["Ethernet1"],
            json!({"admin_status": "up", "oper_status": "lower_layer_down", "mtu": 9214,
                   "speed": 10_000_000_000u64, "mac": "00:1c:73:2a:bb:01", "description": "uplink",
                   "ifindex": 1})
        );
        assert_eq!(
            v["vlans"],
            json!({"1": {"name": "default"}, "40": {"name": "Baopan-Zhilian"}})
        );
        assert_eq!(
            v["lldp_neighbors"]["Ethernet47"][0]["remote_port"],
            "Ethernet23"
        );
        assert_eq!(
            v["snmp"],
            json!({"sys_name": "sw1.example.net", "sys_up_time": 1_692_177_370u64})
        );
        assert!(v.get("snmp").unwrap().get("sys_descr").is_none());
        assert!(
            DeviceFacts::default()
                .to_automatic()
                .as_object()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn facts_round_trip_through_automatic() {
        let f = sample();
        assert_eq!(DeviceFacts::from_automatic(&f.to_automatic()).unwrap(), f);
    }

    #[test]
    fn facts_fill_missing_keeps_own_values() {
        let mut driver = DeviceFacts {
            hostname: Some("from-driver".into()),
            ..Default::default()
        };
        driver.interfaces.insert(
            "Ethernet1".into(),
            InterfaceFacts {
                description: Some("driver says".into()),
                ..Default::default()
            },
        );
        driver.fill_missing_from(&sample());
        assert_eq!(driver.hostname.as_deref(), Some("from-driver"));
        assert_eq!(driver.serial.as_deref(), Some("JPE15151458"));
        let e1 = &driver.interfaces["Ethernet1"];
        assert_eq!(e1.description.as_deref(), Some("driver says"));
        assert_eq!(e1.mtu, Some(9214));
        assert_eq!(driver.vlans.len(), 2);
    }

    #[test]
    fn facts_split_hostname_and_mac() {
        assert_eq!(
            split_hostname("sw1.example.net"),
            Some(("sw1".into(), "sw1.example.net".into()))
        );
        assert_eq!(
            split_hostname("DUMSYS-87"),
            Some(("DUMSYS-87".into(), "DUMSYS-87".into()))
        );
        assert_eq!(split_hostname("  "), None);
        assert_eq!(format_mac(&[]), None);
        assert_eq!(format_mac(&[0xe8, 0x04, 0x62]).as_deref(), Some("e8:04:62"));
    }

    #[test]
    fn facts_statuses_from_if_mib() {
        assert_eq!(AdminStatus::from_if_mib(2), Some(AdminStatus::Down));
        assert_eq!(AdminStatus::from_if_mib(9), None);
        assert_eq!(OperStatus::from_if_mib(6), Some(OperStatus::NotPresent));
        assert_eq!(OperStatus::from_if_mib(0), None);
    }

    fn link(
        name: &str,
        mode: LinkMode,
        access: Option<u16>,
        trunk: Option<&str>,
        native: Option<u16>,
    ) -> Link {
        let mut l = Link::new(name);
        l.mode = Some(mode);
        l.access_vlan = access.map(|v| VlanId::new(v.into()).unwrap());
        l.trunk_vlans = trunk.map(|t| VlanSet::parse(t).unwrap());
        l.native_vlan = native.map(|v| VlanId::new(v.into()).unwrap());
        l
    }

    #[test]
    fn layer2_facts_from_observed_links() {
        let mut f = DeviceFacts::default();
        for (id, n) in [(1, "default"), (10, "users"), (20, "voice"), (30, "unused")] {
            f.vlans.insert(id, VlanFacts::named(n));
        }
        f.interfaces.insert(
            "Gi0/1".into(),
            InterfaceFacts {
                mtu: Some(1500),
                ..Default::default()
            },
        );
        let links = vec![
            link("Gi0/1", LinkMode::Access, Some(10), None, None),
            link("Gi0/2", LinkMode::Trunk, None, Some("10-20"), Some(1)),
            link("Gi0/3", LinkMode::Routed, None, None, None),
            Link::new("Gi0/4"),
        ];
        f.apply_layer2(&links);
        let v = f.to_automatic();
        assert_eq!(
            v["vlans"]["10"],
            json!({"name": "users", "ports": ["Gi0/1", "Gi0/2"]})
        );
        assert_eq!(v["vlans"]["20"]["ports"], json!(["Gi0/2"]));
        assert_eq!(
            v["vlans"]["1"]["ports"],
            json!(["Gi0/2"]),
            "a trunk's native VLAN"
        );
        assert!(v["vlans"]["30"].get("ports").is_none());
        assert_eq!(
            v["interfaces"]["Gi0/1"],
            json!({"mtu": 1500, "switchport": {"mode": "access", "access_vlan": 10}})
        );
        assert_eq!(
            v["interfaces"]["Gi0/2"]["switchport"],
            json!({"mode": "trunk", "trunk_vlans": "10-20", "native_vlan": 1})
        );
        assert_eq!(
            v["interfaces"]["Gi0/3"]["switchport"],
            json!({"mode": "routed"})
        );
        assert!(
            v["interfaces"].get("Gi0/4").is_none(),
            "no layer-2 state, no entry"
        );
        assert_eq!(DeviceFacts::from_automatic(&v).unwrap(), f);
    }

    /// NAPALM's `get_interfaces_ip` shape, from its NX-OS mock's expected result
    /// (`test/nxos/mocked_data/test_get_interfaces_ip/ipv6_n9k/expected_result.json`).
    #[test]
    fn addresses_in_napalm_get_interfaces_ip_shape_and_aggregates() {
        let l3: Vec<crate::plan::l3::L3Interface> = serde_json::from_value(serde_json::json!([
            {"name": "Ethernet1/1", "ipv4": ["172.16.100.1/24"]},
            {"name": "Ethernet1/128", "ipv6": ["2001:dead:beef::1/128", "2001:c0ff:ee::1/128"]},
            {"name": "Vlan5"}
        ]))
        .unwrap();
        let mut lag = crate::plan::lag::Lag::new("Port-Channel10");
        lag.links = Some(vec!["Ethernet1".into(), "Ethernet2".into()]);
        lag.lacp = Some(crate::plan::lag::LacpMode::Passive);
        let mut f = DeviceFacts::default();
        f.interfaces.insert(
            "Port-Channel10".into(),
            InterfaceFacts {
                oper_status: Some(OperStatus::Up),
                ..Default::default()
            },
        );
        f.apply_lag_l3(&[lag], &l3);
        let a = f.to_automatic();
        assert_eq!(
            a["interfaces_ip"],
            serde_json::json!({
                "Ethernet1/1": {"ipv4": {"172.16.100.1": {"prefix_length": 24}}},
                "Ethernet1/128": {"ipv6": {"2001:dead:beef::1": {"prefix_length": 128},
                    "2001:c0ff:ee::1": {"prefix_length": 128}}}
            })
        );
        assert_eq!(
            a["lags"],
            serde_json::json!({"Port-Channel10": {"members": ["Ethernet1", "Ethernet2"],
                "lacp": "passive", "oper_status": "up"}})
        );
        assert_eq!(DeviceFacts::from_automatic(&a).unwrap(), f);
    }
}
