//! The state of one simulated switch: hostname, VLANs, interfaces (description, enabled, mtu, layer-2
//! mode, access VLAN, allowed VLANs, native VLAN) and LLDP neighbours from the topology's links.
//!
//! One model for every vendor; each simulator renders it in its vendor's shapes. Configuration lines in
//! Cisco/Arista syntax (`vlan 10`, `interface X`, `switchport trunk allowed vlan add 10`) are applied by
//! [`ConfigSession`], shared by the EOS, IOS and NX-OS simulators. Junos keeps its configuration as an
//! XML tree (see `junos.rs`) and derives this model from it.
//!
//! Held behind a `std::sync::Mutex`: every critical section is short and never awaits (mini-redis
//! `db.rs` explains why a std mutex beats a tokio one here).

use netgw_models::resource::{VlanId, VlanSet};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Which vendor's syntax and naming a device uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    Eos,
    Junos,
    Ios,
    Nxos,
    F5,
}

impl Dialect {
    pub fn from_platform(p: &str) -> Option<Dialect> {
        Some(match p {
            "eos" => Dialect::Eos,
            "junos" => Dialect::Junos,
            "ios" => Dialect::Ios,
            "nxos" => Dialect::Nxos,
            "f5" => Dialect::F5,
            _ => return None,
        })
    }

    /// Name of front-panel port `i` (0-based).
    pub fn port_name(self, i: usize) -> String {
        match self {
            Dialect::Eos => format!("Ethernet{}", i + 1),
            Dialect::Junos => format!("ge-0/0/{i}"),
            // IOL L2: four ports per slot, Ethernet0/0..0/3, 1/0..
            Dialect::Ios => format!("Ethernet{}/{}", i / 4, i % 4),
            Dialect::Nxos => format!("Ethernet1/{}", i + 1),
            Dialect::F5 => format!("1.{}", i + 1),
        }
    }

    /// The port a containerlab interface name refers to (`eth1`, `e1-1`, `Ethernet0/1`, `ge-0/0/2`...).
    pub fn port_from_clab(self, ifname: &str) -> Option<String> {
        if let Some(native) = (0..256)
            .map(|i| self.port_name(i))
            .find(|p| p.eq_ignore_ascii_case(ifname))
        {
            return Some(native);
        }
        let lower = ifname.to_ascii_lowercase();
        if let Some(n) = lower
            .strip_prefix("eth")
            .and_then(|s| s.parse::<usize>().ok())
        {
            // containerlab's ethN is the N-th data port (eth0 is management).
            return n.checked_sub(1).map(|i| self.port_name(i));
        }
        match self {
            Dialect::Ios => {
                let rest = lower
                    .strip_prefix("ethernet")
                    .or_else(|| lower.strip_prefix('e'))?;
                let (s, p) = rest.split_once('/')?;
                Some(format!(
                    "Ethernet{}/{}",
                    s.parse::<u32>().ok()?,
                    p.parse::<u32>().ok()?
                ))
            }
            Dialect::Junos
                if lower.starts_with("ge-")
                    || lower.starts_with("xe-")
                    || lower.starts_with("et-") =>
            {
                Some(ifname.to_owned())
            }
            _ => None,
        }
    }
}

/// A set of VLAN ids as a 4096-bit map: 512 bytes, where a `BTreeSet` of all 4094 ids costs tens of
/// kilobytes per trunk (10,000 devices x 9 ports must stay small).
#[derive(Clone, PartialEq, Eq)]
pub struct VlanBits(Box<[u64; 64]>);

impl std::fmt::Debug for VlanBits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VlanBits({})", self.to_range_string())
    }
}

impl VlanBits {
    pub fn new() -> VlanBits {
        VlanBits(Box::new([0; 64]))
    }

    /// 1..=4094.
    pub fn all() -> VlanBits {
        let mut b = VlanBits(Box::new([u64::MAX; 64]));
        b.clear_raw(0);
        b.clear_raw(4095);
        b
    }

    fn clear_raw(&mut self, v: u16) {
        self.0[usize::from(v / 64)] &= !(1u64 << (v % 64));
    }

    fn has_raw(&self, v: u16) -> bool {
        self.0[usize::from(v / 64)] & (1u64 << (v % 64)) != 0
    }

    pub fn contains(&self, id: VlanId) -> bool {
        self.has_raw(id.get())
    }

    /// As a device prints an allowed-VLAN list: `all` for every VLAN, `none` for none, else ranges.
    pub fn text(&self, all: &str, none: &str) -> String {
        if self.is_all() {
            all.into()
        } else if self.is_empty() {
            none.into()
        } else {
            self.to_range_string()
        }
    }

    pub fn insert(&mut self, id: VlanId) {
        let v = id.get();
        self.0[usize::from(v / 64)] |= 1u64 << (v % 64);
    }

    pub fn union(&self, other: &VlanSet) -> VlanBits {
        let mut b = self.clone();
        for id in other.ids() {
            b.insert(id);
        }
        b
    }

    pub fn difference(&self, other: &VlanSet) -> VlanBits {
        let mut b = self.clone();
        for id in other.ids() {
            b.clear_raw(id.get());
        }
        b
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    pub fn is_all(&self) -> bool {
        *self == VlanBits::all()
    }

    pub fn to_set(&self) -> VlanSet {
        VlanSet::from_ids(
            (1..=4094u16)
                .filter(|v| self.has_raw(*v))
                .filter_map(|v| VlanId::new(i64::from(v)).ok()),
        )
    }

    /// `1-10,20` (`none` when empty).
    pub fn to_range_string(&self) -> String {
        self.to_set().to_range_string()
    }
}

impl Default for VlanBits {
    fn default() -> Self {
        VlanBits::new()
    }
}

impl From<VlanSet> for VlanBits {
    fn from(s: VlanSet) -> VlanBits {
        VlanBits::new().union(&s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Access,
    Trunk,
    Routed,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Iface {
    pub description: String,
    pub enabled: bool,
    pub mtu: u32,
    pub mode: Mode,
    pub access_vlan: u16,
    pub trunk_allowed: VlanBits,
    pub native_vlan: u16,
    /// `switchport trunk encapsulation dot1q|isl` (IOS: the simulated IOL L2 is ISL-capable, so a port
    /// starts at `negotiate` = `None` and refuses `switchport mode trunk` until this is set).
    pub trunk_encapsulation: Option<String>,
    pub mac: String,
    pub ifindex: u32,
    /// Link up (a connected topology link, or the management port).
    pub oper_up: bool,
    pub speed_mbps: u64,
    /// `channel-group N mode M`: the aggregate number and the LACP mode (`active`, `passive`, `on`).
    pub channel_group: Option<(u32, String)>,
    /// An aggregate's `port-channel min-links N` (NX-OS `lacp min-links N`); 0 when not set.
    pub min_links: u16,
    /// `ADDRESS/LENGTH`, the primary first.
    pub ipv4: Vec<String>,
    pub ipv6: Vec<String>,
}

impl Iface {
    pub fn new(ifindex: u32, mac: String, default_mtu: u32, oper_up: bool) -> Iface {
        Iface {
            description: String::new(),
            enabled: true,
            mtu: default_mtu,
            mode: Mode::Access,
            access_vlan: 1,
            trunk_allowed: VlanBits::all(),
            native_vlan: 1,
            trunk_encapsulation: None,
            mac,
            ifindex,
            oper_up,
            speed_mbps: 1000,
            channel_group: None,
            min_links: 0,
            ipv4: Vec::new(),
            ipv6: Vec::new(),
        }
    }

    pub fn status_up(&self) -> bool {
        self.enabled && self.oper_up
    }
}

/// Whether one end of a link is administratively up, shared by both devices of the link: a shut port
/// on either end takes the neighbour away on both ends, as LLDP does once the hold time runs out (the
/// lab skips the wait).
#[derive(Debug, Clone)]
pub struct PortFlag(Arc<AtomicBool>, Arc<AtomicU8>);

impl Default for PortFlag {
    fn default() -> PortFlag {
        PortFlag(Arc::new(AtomicBool::new(true)), Arc::default())
    }
}

impl PartialEq for PortFlag {
    /// The same link end (its state is not configuration, so snapshots compare equal across it).
    fn eq(&self, other: &PortFlag) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl PortFlag {
    pub fn up(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    pub fn set(&self, up: bool) {
        self.0.store(up, Ordering::Relaxed);
    }

    /// How this end bundles its port: the `channel-group` mode, if any.
    pub fn bundle(&self) -> Option<&'static str> {
        match self.1.load(Ordering::Relaxed) {
            1 => Some("active"),
            2 => Some("passive"),
            3 => Some("on"),
            _ => None,
        }
    }

    pub fn set_bundle(&self, mode: Option<&str>) {
        let v = match mode {
            Some("active") => 1,
            Some("passive") => 2,
            Some("on") => 3,
            _ => 0,
        };
        self.1.store(v, Ordering::Relaxed);
    }
}

/// Whether two ends' `channel-group` modes bundle: LACP with one active end at least, or static on
/// both ends.
pub(crate) fn modes_bundle(a: &str, b: &str) -> bool {
    matches!(
        (a, b),
        ("active", "active" | "passive") | ("passive", "active") | ("on", "on")
    )
}

/// One LLDP neighbour as the simulated device sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbor {
    pub local_port: String,
    pub system_name: String,
    pub port: String,
    pub chassis_id: String,
    /// This device's end of the link and the peer's.
    pub local_up: PortFlag,
    pub peer_up: PortFlag,
}

impl Neighbor {
    /// Advertised right now: both ends of the link are up.
    pub fn seen(&self) -> bool {
        self.local_up.up() && self.peer_up.up()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DeviceState {
    pub hostname: String,
    pub vlans: BTreeMap<u16, String>,
    /// Interfaces in port order (`Vec` keeps the natural order `Ethernet2` before `Ethernet10`).
    pub interfaces: Vec<(String, Iface)>,
    pub neighbors: Vec<Neighbor>,
    pub mgmt_interface: Option<String>,
    /// SNMPv2-MIB sysContact and sysLocation (`snmp-server contact|location ...`); empty by default, as on
    /// the devices.
    pub contact: String,
    pub location: String,
    /// IOS only: `vtp mode transparent` (or `off`) was configured. A Catalyst / IOL switch starts as a
    /// VTP server (version 1), which refuses extended VLANs (1006-4094) when the VLAN sub-mode is left.
    pub vtp_transparent: bool,
    /// A router, not a switch (containerlab's `juniper_crpd`, a `cisco_iol` without `type: l2`): VLAN and
    /// switchport configuration is refused with the device's words.
    pub routed_only: bool,
    /// BIG-IP `net trunk`s by name. A trunk is also an interface of the same name in `interfaces`
    /// (its VLAN membership, description and status); its members carry `channel_group` with the
    /// trunk's `id` and their bundling mode (`on` when LACP is disabled).
    pub trunks: BTreeMap<String, Trunk>,
    /// BIG-IP `net self` objects by name.
    pub self_ips: BTreeMap<String, SelfIp>,
}

/// One BIG-IP trunk's own settings (members: the interfaces whose `channel_group` names its `id`).
#[derive(Debug, Clone, PartialEq)]
pub struct Trunk {
    pub id: u32,
    pub lacp: bool,
    /// `active` or `passive` (kept while LACP is disabled, as the device does).
    pub lacp_mode: String,
}

impl Trunk {
    /// How the trunk's members bundle, as the far end sees it.
    pub fn bundle_mode(&self) -> &str {
        if self.lacp { &self.lacp_mode } else { "on" }
    }
}

/// One BIG-IP self IP: an address with its prefix length on a VLAN (by name).
#[derive(Debug, Clone, PartialEq)]
pub struct SelfIp {
    pub address: String,
    pub vlan: String,
    pub traffic_group: String,
    pub allow_service: String,
}

/// An interface's aggregate and address lines, as each dialect prints them (IOS: a dotted mask).
fn render_l3_lag(s: &mut String, dialect: Dialect, ind: &str, f: &Iface) {
    if let Some((n, mode)) = &f.channel_group {
        s.push_str(&format!("{ind}channel-group {n} mode {mode}\n"));
    }
    if f.min_links > 0 {
        let cmd = if dialect == Dialect::Nxos {
            "lacp"
        } else {
            "port-channel"
        };
        s.push_str(&format!("{ind}{cmd} min-links {}\n", f.min_links));
    }
    for (i, a) in f.ipv4.iter().enumerate() {
        let shown = match (dialect, a.split_once('/')) {
            (Dialect::Ios, Some((addr, len))) => format!("{addr} {}", mask_of(len)),
            _ => a.clone(),
        };
        let secondary = if i > 0 { " secondary" } else { "" };
        s.push_str(&format!("{ind}ip address {shown}{secondary}\n"));
    }
    for a in &f.ipv6 {
        s.push_str(&format!("{ind}ipv6 address {a}\n"));
    }
}

/// `24` as `255.255.255.0`.
fn mask_of(len: &str) -> String {
    let n: u32 = len.parse().unwrap_or(32).min(32);
    let m = if n == 0 { 0 } else { u32::MAX << (32 - n) };
    std::net::Ipv4Addr::from(m).to_string()
}

/// `A MASK` or `A/L` as `A/L`; `None` when neither.
fn address_of(words: &[&str]) -> Option<String> {
    match words {
        [a] if a.contains('/') => {
            let (addr, len) = a.split_once('/')?;
            let len: u8 = len.parse().ok()?;
            addr.parse::<std::net::IpAddr>().ok()?;
            Some(format!("{addr}/{len}"))
        }
        [a, mask] => {
            a.parse::<std::net::Ipv4Addr>().ok()?;
            let m = u32::from(mask.parse::<std::net::Ipv4Addr>().ok()?);
            (m.leading_ones() == m.count_ones()).then(|| format!("{a}/{}", m.count_ones()))
        }
        _ => None,
    }
}

/// A MAC derived from the device index and port, locally administered.
pub fn mac_for(device_index: u32, port: u32) -> String {
    let b = device_index.to_be_bytes();
    format!(
        "02:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[1],
        b[2],
        b[3],
        (port >> 8) as u8,
        port as u8
    )
}

impl DeviceState {
    /// A switch with `ports` front-panel ports, VLAN 1 and, for EOS/NX-OS, a management port.
    pub fn new(dialect: Dialect, hostname: &str, device_index: u32, ports: usize) -> DeviceState {
        let mut interfaces = Vec::with_capacity(ports + 1);
        let mtu = match dialect {
            Dialect::Eos => 9214,
            Dialect::Junos => 1514,
            _ => 1500,
        };
        for i in 0..ports {
            let mut f = Iface::new(
                i as u32 + 1,
                mac_for(device_index, i as u32 + 1),
                mtu,
                false,
            );
            // NX-OS 9300v ports and BIG-IP VE interfaces (`mediaActive 10000T-FD`) are 10G.
            if matches!(dialect, Dialect::Nxos | Dialect::F5) {
                f.speed_mbps = 10_000;
            }
            interfaces.push((dialect.port_name(i), f));
        }
        let mgmt = match dialect {
            Dialect::Eos => Some("Management1"),
            Dialect::Nxos => Some("mgmt0"),
            _ => None,
        };
        if let Some(m) = mgmt {
            let mut f = Iface::new(999_001, mac_for(device_index, 0), 1500, true);
            f.mode = Mode::Routed;
            interfaces.push((m.to_owned(), f));
        }
        let mut vlans = BTreeMap::new();
        vlans.insert(1, "default".to_owned());
        DeviceState {
            hostname: hostname.to_owned(),
            vlans,
            interfaces,
            neighbors: Vec::new(),
            mgmt_interface: mgmt.map(str::to_owned),
            contact: String::new(),
            location: String::new(),
            vtp_transparent: false,
            routed_only: false,
            trunks: BTreeMap::new(),
            self_ips: BTreeMap::new(),
        }
    }

    /// Boot from `startup`: its configuration (hostname, VLANs, interface settings, SNMP contact and
    /// location, VTP mode) replaces the running one; what is not configuration (MACs, ifindexes,
    /// links up, LLDP neighbors, the kind of device) stays.
    pub fn boot_from(&mut self, startup: &DeviceState) {
        self.hostname = startup.hostname.clone();
        self.vlans = startup.vlans.clone();
        self.contact = startup.contact.clone();
        self.location = startup.location.clone();
        self.vtp_transparent = startup.vtp_transparent;
        self.boot_trunks(startup);
        for (name, f) in &mut self.interfaces {
            let Some(s) = startup.iface(name) else {
                continue;
            };
            f.description = s.description.clone();
            f.enabled = s.enabled;
            f.mtu = s.mtu;
            f.mode = s.mode;
            f.access_vlan = s.access_vlan;
            f.trunk_allowed = s.trunk_allowed.clone();
            f.native_vlan = s.native_vlan;
            f.trunk_encapsulation = s.trunk_encapsulation.clone();
        }
    }

    /// BIG-IP trunks and self IPs from `startup`: trunk interfaces it lacks go, those it has come
    /// (down until refreshed), members bundle as it says.
    fn boot_trunks(&mut self, startup: &DeviceState) {
        let gone: Vec<String> = self
            .trunks
            .keys()
            .filter(|t| !startup.trunks.contains_key(*t))
            .cloned()
            .collect();
        self.interfaces.retain(|(n, _)| !gone.contains(n));
        for t in startup.trunks.keys() {
            if self.iface(t).is_none()
                && let Some(f) = startup.iface(t)
            {
                let mut f = f.clone();
                f.oper_up = false;
                self.interfaces.push((t.clone(), f));
            }
        }
        self.trunks = startup.trunks.clone();
        self.self_ips = startup.self_ips.clone();
        if !self.trunks.is_empty() || !gone.is_empty() {
            for (name, f) in &mut self.interfaces {
                f.channel_group = startup.iface(name).and_then(|s| s.channel_group.clone());
            }
        }
    }

    pub fn iface(&self, name: &str) -> Option<&Iface> {
        self.interfaces
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f)
    }

    /// The LLDP neighbours advertised now (both ends of their links up).
    pub fn lldp_neighbors(&self) -> impl Iterator<Item = &Neighbor> {
        self.neighbors.iter().filter(|n| n.seen())
    }

    pub fn iface_mut(&mut self, name: &str) -> Option<&mut Iface> {
        self.interfaces
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f)
    }

    /// Ports whose VLAN membership includes `vid` (access in it, or trunk allowing it).
    pub fn members(&self, vid: u16) -> Vec<&str> {
        let Ok(id) = VlanId::new(i64::from(vid)) else {
            return Vec::new();
        };
        self.interfaces
            .iter()
            .filter(|(_, f)| match f.mode {
                Mode::Access => f.access_vlan == vid,
                Mode::Trunk => f.trunk_allowed.contains(id),
                Mode::Routed => false,
            })
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// Canonical interface name for what a user typed (`Et1`, `eth1`, `ethernet 1`, `Gi0/1`), if the
    /// device has it.
    pub fn resolve_iface(&self, typed: &str) -> Option<String> {
        let t: String = typed.chars().filter(|c| !c.is_whitespace()).collect();
        if let Some((n, _)) = self
            .interfaces
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&t))
        {
            return Some(n.clone());
        }
        let split = t.find(|c: char| c.is_ascii_digit())?;
        let (prefix, num) = t.split_at(split);
        let prefix = prefix.to_ascii_lowercase();
        if prefix.is_empty() {
            return None;
        }
        self.interfaces
            .iter()
            .find(|(n, _)| {
                let s = n.find(|c: char| c.is_ascii_digit()).unwrap_or(n.len());
                let (np, nn) = n.split_at(s);
                nn == num && np.to_ascii_lowercase().starts_with(&prefix)
            })
            .map(|(n, _)| n.clone())
    }

    /// `interface` stanzas in Cisco/Arista running-config syntax (what `show running-config interfaces X`
    /// prints). Defaults are omitted, as the devices do.
    pub fn render_interface(&self, dialect: Dialect, name: &str) -> Option<String> {
        let f = self.iface(name)?;
        let mut s = format!("interface {name}\n");
        let ind = if dialect == Dialect::Eos { "   " } else { " " };
        if !f.description.is_empty() {
            s.push_str(&format!("{ind}description {}\n", f.description));
        }
        let default_mtu = if dialect == Dialect::Eos { 9214 } else { 1500 };
        if f.mtu != default_mtu {
            s.push_str(&format!("{ind}mtu {}\n", f.mtu));
        }
        match f.mode {
            Mode::Routed => {
                if Some(name) != self.mgmt_interface.as_deref() {
                    s.push_str(&format!("{ind}no switchport\n"));
                }
            }
            Mode::Access => {
                if dialect == Dialect::Ios {
                    s.push_str(&format!("{ind}switchport mode access\n"));
                }
                if f.access_vlan != 1 {
                    s.push_str(&format!("{ind}switchport access vlan {}\n", f.access_vlan));
                }
                if dialect == Dialect::Ios
                    && let Some(e) = &f.trunk_encapsulation
                {
                    s.push_str(&format!("{ind}switchport trunk encapsulation {e}\n"));
                }
            }
            Mode::Trunk => {
                if dialect == Dialect::Ios
                    && let Some(e) = &f.trunk_encapsulation
                {
                    s.push_str(&format!("{ind}switchport trunk encapsulation {e}\n"));
                }
                if f.native_vlan != 1 {
                    s.push_str(&format!(
                        "{ind}switchport trunk native vlan {}\n",
                        f.native_vlan
                    ));
                }
                if !f.trunk_allowed.is_all() {
                    s.push_str(&format!(
                        "{ind}switchport trunk allowed vlan {}\n",
                        f.trunk_allowed.to_range_string()
                    ));
                }
                s.push_str(&format!("{ind}switchport mode trunk\n"));
            }
        }
        render_l3_lag(&mut s, dialect, ind, f);
        if !f.enabled {
            s.push_str(&format!("{ind}shutdown\n"));
        } else if dialect == Dialect::Nxos && f.mode != Mode::Routed {
            s.push_str(&format!("{ind}no shutdown\n"));
        }
        Some(s)
    }

    /// The whole running configuration (hostname, VLANs, interfaces), Cisco/Arista syntax.
    pub fn running_config(&self, dialect: Dialect) -> String {
        let mut s = String::new();
        s.push_str(&format!("hostname {}\n!\n", self.hostname));
        for (key, value) in [("contact", &self.contact), ("location", &self.location)] {
            if !value.is_empty() {
                s.push_str(&format!("snmp-server {key} {value}\n"));
            }
        }
        for (id, name) in &self.vlans {
            if *id == 1 {
                continue;
            }
            s.push_str(&format!("vlan {id}\n"));
            if *name != default_vlan_name(*id) {
                let ind = if dialect == Dialect::Eos { "   " } else { " " };
                s.push_str(&format!("{ind}name {name}\n"));
            }
            s.push_str("!\n");
        }
        for (n, _) in &self.interfaces {
            if let Some(i) = self.render_interface(dialect, n) {
                s.push_str(&i);
                s.push_str("!\n");
            }
        }
        s.push_str("end\n");
        s
    }
}

impl DeviceState {
    /// EOS `show running-config all`: the configuration with every default spelled out (what pyeapi's
    /// configuration parsers read: `switchport mode`, `switchport access vlan`, `no shutdown`, ...).
    pub fn running_config_all_eos(&self) -> String {
        let mut s = format!("hostname {}\n!\n", self.hostname);
        for (id, name) in &self.vlans {
            s.push_str(&format!("vlan {id}\n   name {name}\n   state active\n!\n"));
        }
        for (n, f) in &self.interfaces {
            s.push_str(&format!("interface {n}\n"));
            match f.description.as_str() {
                "" => s.push_str("   no description\n"),
                d => s.push_str(&format!("   description {d}\n")),
            }
            s.push_str(&format!("   mtu {}\n", f.mtu));
            if f.mode == Mode::Routed {
                s.push_str("   no switchport\n");
            } else {
                let allowed = f.trunk_allowed.text("1-4094", "none");
                let mode = if f.mode == Mode::Trunk {
                    "trunk"
                } else {
                    "access"
                };
                s.push_str(&format!(
                    "   switchport access vlan {}\n   switchport trunk native vlan {}\n   switchport trunk allowed vlan {allowed}\n   switchport mode {mode}\n",
                    f.access_vlan, f.native_vlan
                ));
            }
            s.push_str(if f.enabled {
                "   no shutdown\n"
            } else {
                "   shutdown\n"
            });
            s.push_str("!\n");
        }
        s.push_str("end\n");
        s
    }
}

/// `VLAN0010`, the name every vendor gives a VLAN created without one.
pub fn default_vlan_name(id: u16) -> String {
    format!("VLAN{id:04}")
}

/// A rejected configuration line, with the vendor's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// The vendor message (`Invalid input`, `% Invalid input detected at '^' marker.`).
    pub message: String,
}

/// Where in the configuration tree a session is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Context {
    #[default]
    Top,
    Vlan(Vec<u16>),
    Interface(Vec<String>),
}

/// Applies configuration lines to a [`DeviceState`], tracking the sub-mode.
#[derive(Debug, Clone)]
pub struct ConfigSession {
    pub dialect: Dialect,
    pub context: Context,
}

fn invalid(dialect: Dialect, line: &str, token: usize) -> LineError {
    let tok = line.split_whitespace().nth(token).unwrap_or("");
    let message = match dialect {
        Dialect::Eos => format!("Invalid input (at token {token}: '{tok}')"),
        Dialect::Nxos => "% Invalid command at '^' marker.".to_owned(),
        _ => "% Invalid input detected at '^' marker.".to_owned(),
    };
    LineError { message }
}

fn parse_vlan_list(s: &str) -> Option<Vec<u16>> {
    let set = VlanSet::parse(s).ok()?;
    if set.is_empty() {
        return None;
    }
    Some(set.ids().map(|v| v.get()).collect())
}

/// The SNMP system text a `snmp-server contact|location` line sets.
fn snmp_text<'a>(st: &'a mut DeviceState, key: &str) -> &'a mut String {
    if key == "contact" {
        &mut st.contact
    } else {
        &mut st.location
    }
}

/// The number of `Port-Channel10`, `port-channel 10`, `po10`.
fn port_channel_number(lower: &str) -> Option<u32> {
    let rest = lower
        .strip_prefix("port-channel")
        .or_else(|| lower.strip_prefix("po"))?;
    rest.trim().parse().ok()
}

impl DeviceState {
    /// The aggregate `n`, created (a switchport, up while a member is) on first mention, as the
    /// devices do for `interface Port-Channel N` and `channel-group N`.
    pub fn ensure_port_channel(&mut self, dialect: Dialect, n: u32) -> String {
        let name = match dialect {
            Dialect::Eos => format!("Port-Channel{n}"),
            Dialect::Nxos => format!("port-channel{n}"),
            _ => format!("Port-channel{n}"),
        };
        if self.iface(&name).is_none() {
            let idx = 100_000 + n;
            let mtu = match dialect {
                Dialect::Eos => 9214,
                _ => 1500,
            };
            self.interfaces
                .push((name.clone(), Iface::new(idx, mac_for(0, idx), mtu, false)));
        }
        self.refresh_port_channels();
        name
    }

    /// An aggregate is up while one of its members is: up, and bundled by the far end in a mode that
    /// bundles with its own (LACP with an active end, or static on both ends).
    pub fn refresh_port_channels(&mut self) {
        let up: Vec<u32> = self
            .interfaces
            .iter()
            .filter(|(_, f)| f.status_up())
            .filter_map(|(name, f)| f.channel_group.as_ref().map(|(n, m)| (name, *n, m)))
            .filter(|(name, _, m)| self.member_bundled(name, m))
            .map(|(_, n, _)| n)
            .collect();
        let trunks = &self.trunks;
        for (name, f) in &mut self.interfaces {
            let number = match trunks.get(name) {
                Some(t) => Some(t.id),
                None => port_channel_number(&name.to_ascii_lowercase()),
            };
            if let Some(n) = number {
                f.oper_up = up.contains(&n);
            }
        }
    }

    /// Whether port `name`, bundling in `mode`, has a far end seen over LLDP that bundles its end in
    /// a mode that bundles with `mode`.
    pub fn member_bundled(&self, name: &str, mode: &str) -> bool {
        self.neighbors.iter().any(|n| {
            n.local_port == name
                && n.seen()
                && n.peer_up.bundle().is_some_and(|m| modes_bundle(mode, m))
        })
    }

    /// Whether the device has an aggregate or a port in one (its status then follows the far ends).
    pub fn has_aggregates(&self) -> bool {
        !self.trunks.is_empty()
            || self.interfaces.iter().any(|(n, f)| {
                f.channel_group.is_some() || port_channel_number(&n.to_ascii_lowercase()).is_some()
            })
    }

    /// `no interface X` for an aggregate, SVI or loopback: gone, and an aggregate's members leave it.
    fn remove_logical(
        &mut self,
        dialect: Dialect,
        typed: &str,
        line: &str,
    ) -> Result<(), LineError> {
        let lower = typed.to_ascii_lowercase();
        let Some(name) = self.resolve_iface(typed) else {
            return Err(invalid(dialect, line, 2));
        };
        if let Some(n) = port_channel_number(&lower) {
            for (_, f) in &mut self.interfaces {
                if f.channel_group.as_ref().is_some_and(|(g, _)| *g == n) {
                    f.channel_group = None;
                }
            }
        } else if !(lower.starts_with("vlan") || lower.starts_with("loopback")) {
            return Err(invalid(dialect, line, 2));
        }
        self.interfaces.retain(|(n, _)| *n != name);
        Ok(())
    }
}

impl ConfigSession {
    pub fn new(dialect: Dialect) -> Self {
        ConfigSession {
            dialect,
            context: Context::Top,
        }
    }

    /// `exit` at top level leaves configuration mode: `Ok(true)`.
    pub fn apply(&mut self, st: &mut DeviceState, raw: &str) -> Result<bool, LineError> {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('!') {
            return Ok(false);
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let dialect = self.dialect;
        let bad = |token: usize| invalid(dialect, line, token);
        // Leaving the VLAN sub-mode (by `exit`, `end` or any top-level command) commits the VLANs, which
        // an IOS VTP server refuses for extended ids, with the device's words.
        if let Context::Vlan(ids) = &self.context
            && !matches!(
                words.as_slice(),
                ["name", ..] | ["no", "name", ..] | ["state", ..]
            )
        {
            let ids = ids.clone();
            self.context = Context::Top;
            self.leave_vlan_mode(st, &ids)?;
            // `exit` from the sub-mode goes back to global configuration, not out of it.
            if words.as_slice() == ["exit"] {
                return Ok(false);
            }
        }
        // An IOS router has no `vlan` or `switchport` commands: the parser stops at the first word.
        if st.routed_only
            && matches!(
                words.as_slice(),
                ["vlan" | "switchport", ..] | ["no", "vlan" | "switchport", ..]
            )
        {
            return Err(bad(usize::from(words[0] == "no")));
        }
        if let Some(done) = self.apply_logical(st, &words, line) {
            return done;
        }
        match words.as_slice() {
            ["exit"] => {
                if self.context == Context::Top {
                    return Ok(true);
                }
                self.context = Context::Top;
                return Ok(false);
            }
            ["end"] => {
                self.context = Context::Top;
                return Ok(true);
            }
            ["vtp", "mode", mode] if self.dialect == Dialect::Ios => {
                match *mode {
                    "transparent" | "off" => st.vtp_transparent = true,
                    "server" | "client" => {
                        if st.vlans.keys().any(|&v| v >= 1006) {
                            return Err(LineError {
                                message: "Cannot set VTP mode to server or client: extended VLANs are configured.".into(),
                            });
                        }
                        st.vtp_transparent = false
                    }
                    _ => return Err(bad(2)),
                }
                self.context = Context::Top;
                return Ok(false);
            }
            ["hostname", h] => {
                st.hostname = (*h).to_owned();
                self.context = Context::Top;
                return Ok(false);
            }
            ["snmp-server", key @ ("contact" | "location"), rest @ ..] if !rest.is_empty() => {
                // `line` starts with the two words matched above; the value is the rest, spaces kept.
                let value = line["snmp-server".len()..].trim_start()[key.len()..]
                    .trim()
                    .to_owned();
                *snmp_text(st, key) = value;
                self.context = Context::Top;
                return Ok(false);
            }
            ["no", "snmp-server", key @ ("contact" | "location"), ..] => {
                snmp_text(st, key).clear();
                self.context = Context::Top;
                return Ok(false);
            }
            ["vlan", list] => {
                let ids = parse_vlan_list(list).ok_or_else(|| bad(1))?;
                for id in &ids {
                    st.vlans
                        .entry(*id)
                        .or_insert_with(|| default_vlan_name(*id));
                }
                self.context = Context::Vlan(ids);
                return Ok(false);
            }
            ["no", "vlan", list] => {
                let ids = parse_vlan_list(list).ok_or_else(|| bad(2))?;
                for id in ids {
                    if id == 1 {
                        return Err(LineError {
                            message: match self.dialect {
                                Dialect::Eos => "Default VLAN cannot be removed".into(),
                                _ => "%Default VLAN 1 may not be deleted.".into(),
                            },
                        });
                    }
                    st.vlans.remove(&id);
                }
                self.context = Context::Top;
                return Ok(false);
            }
            ["interface", rest @ ..] if !rest.is_empty() => {
                let names = self.interface_names(st, rest, line)?;
                self.context = Context::Interface(names);
                return Ok(false);
            }
            _ => {}
        }
        self.apply_in_context(st, &words, line)
    }

    /// Top-level lines about logical interfaces and the features they need: `no interface` of an
    /// aggregate, SVI or loopback, and NX-OS `feature` (what the simulator models is always on).
    fn apply_logical(
        &mut self,
        st: &mut DeviceState,
        words: &[&str],
        line: &str,
    ) -> Option<Result<bool, LineError>> {
        match words {
            ["feature", "lacp" | "interface-vlan"] if self.dialect == Dialect::Nxos => {}
            ["no", "interface", rest @ ..] if !rest.is_empty() => {
                if let Err(e) = st.remove_logical(self.dialect, &rest.join(""), line) {
                    return Some(Err(e));
                }
            }
            _ => return None,
        }
        self.context = Context::Top;
        Some(Ok(false))
    }

    /// The interfaces an `interface` line names (a comma-separated list).
    fn interface_names(
        &self,
        st: &mut DeviceState,
        rest: &[&str],
        line: &str,
    ) -> Result<Vec<String>, LineError> {
        let joined = rest.join(" ");
        let mut names = Vec::new();
        for part in joined.split(',') {
            let part = part.trim();
            match st.resolve_iface(part) {
                Some(n) => names.push(n),
                None => {
                    // Loopbacks and SVIs are created on first mention, as on the devices.
                    let lower = part.to_ascii_lowercase();
                    if lower.starts_with("loopback") || lower.starts_with("vlan") {
                        let idx = 500_000 + st.interfaces.len() as u32;
                        let mut f = Iface::new(idx, mac_for(0, idx), 1500, true);
                        f.mode = Mode::Routed;
                        let canon = if lower.starts_with("loopback") {
                            format!("Loopback{}", part[8..].trim())
                        } else {
                            format!("Vlan{}", part[4..].trim())
                        };
                        st.interfaces.push((canon.clone(), f));
                        names.push(canon);
                    } else if let Some(n) = port_channel_number(&lower) {
                        names.push(st.ensure_port_channel(self.dialect, n));
                    } else {
                        return Err(invalid(self.dialect, line, 1));
                    }
                }
            }
        }
        Ok(names)
    }

    /// A line inside a `vlan` or `interface` sub-mode.
    fn apply_in_context(
        &mut self,
        st: &mut DeviceState,
        words: &[&str],
        line: &str,
    ) -> Result<bool, LineError> {
        match self.context.clone() {
            Context::Vlan(ids) => match words {
                ["name", name @ ..] if !name.is_empty() => {
                    let n = name.join(" ");
                    for id in ids {
                        st.vlans.insert(id, n.clone());
                    }
                    Ok(false)
                }
                ["no", "name", ..] => {
                    for id in ids {
                        st.vlans.insert(id, default_vlan_name(id));
                    }
                    Ok(false)
                }
                ["state", "active" | "suspend"] => Ok(false),
                _ => Err(invalid(self.dialect, line, 0)),
            },
            Context::Interface(names) => {
                if let ["channel-group", n, "mode", m] = words {
                    let n: u32 = n.parse().map_err(|_| invalid(self.dialect, line, 1))?;
                    if !matches!(*m, "active" | "passive" | "on") {
                        return Err(invalid(self.dialect, line, 3));
                    }
                    st.ensure_port_channel(self.dialect, n);
                    for name in &names {
                        if let Some(f) = st.iface_mut(name) {
                            f.channel_group = Some((n, (*m).to_owned()));
                        }
                    }
                    st.refresh_port_channels();
                    return Ok(false);
                }
                for n in &names {
                    let vlans = st.vlans.clone();
                    let Some(f) = st.iface_mut(n) else {
                        return Err(invalid(self.dialect, line, 1));
                    };
                    self.apply_interface(f, words, line, &vlans)?;
                }
                Ok(false)
            }
            Context::Top => Err(invalid(self.dialect, line, 0)),
        }
    }

    /// IOS VTP server (version 1): extended VLANs made in this sub-mode are refused and removed again.
    fn leave_vlan_mode(&self, st: &mut DeviceState, ids: &[u16]) -> Result<(), LineError> {
        if self.dialect != Dialect::Ios || st.vtp_transparent {
            return Ok(());
        }
        let extended: Vec<u16> = ids.iter().copied().filter(|&v| v >= 1006).collect();
        if extended.is_empty() {
            return Ok(());
        }
        for v in &extended {
            st.vlans.remove(v);
        }
        let list = extended
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(",");
        Err(LineError {
            message: format!(
                "% Failed to create VLANs {list}\nExtended VLAN(s) not allowed in current VTP mode.\n%Failed to commit extended VLAN(s) changes."
            ),
        })
    }

    fn apply_interface(
        &self,
        f: &mut Iface,
        words: &[&str],
        line: &str,
        vlans: &BTreeMap<u16, String>,
    ) -> Result<(), LineError> {
        let bad = |token: usize| invalid(self.dialect, line, token);
        let _ = vlans;
        match words {
            ["description", d @ ..] if !d.is_empty() => {
                f.description = line.trim_start()["description".len()..].trim().to_owned();
            }
            ["no", "description", ..] | ["default", "description", ..] => f.description.clear(),
            ["shutdown"] => f.enabled = false,
            ["no", "shutdown"] => f.enabled = true,
            ["mtu", m] => {
                let v: u32 = m.parse().map_err(|_| bad(1))?;
                let max = if self.dialect == Dialect::Eos {
                    9214
                } else {
                    9216
                };
                if !(68..=max).contains(&v) {
                    return Err(bad(1));
                }
                if self.dialect == Dialect::Nxos && f.mode != Mode::Routed && v != 1500 && v != 9216
                {
                    return Err(LineError {
                        message: "ERROR: MTU on L2 interfaces can only be set to default or system-jumboMTU".into(),
                    });
                }
                f.mtu = v;
            }
            ["no", "mtu", ..] | ["default", "mtu", ..] => {
                f.mtu = if self.dialect == Dialect::Eos {
                    9214
                } else {
                    1500
                }
            }
            ["switchport", ..] | ["no", "switchport", ..] => {
                self.apply_switchport(f, words, line)?
            }
            ["no", "channel-group", ..] => f.channel_group = None,
            ["port-channel" | "lacp", "min-links", n] => {
                f.min_links = n.parse().map_err(|_| bad(2))?;
            }
            ["no", "port-channel" | "lacp", "min-links", ..] => f.min_links = 0,
            ["ip" | "ipv6", "address", ..] | ["no", "ip" | "ipv6", "address", ..] => {
                self.apply_address(f, words, line)?
            }
            ["speed", ..]
            | ["negotiation", ..]
            | ["spanning-tree", ..]
            | ["no", "spanning-tree", ..] => {}
            _ => return Err(bad(0)),
        }
        Ok(())
    }

    /// `[no] ip address A/L|A MASK [secondary]`, `[no] ipv6 address A/L`: on a routed interface only.
    fn apply_address(&self, f: &mut Iface, words: &[&str], line: &str) -> Result<(), LineError> {
        let bad = |token: usize| invalid(self.dialect, line, token);
        let (no, rest) = match words {
            ["no", rest @ ..] => (true, rest),
            rest => (false, rest),
        };
        let at = usize::from(no) + 2;
        if f.mode != Mode::Routed && !no {
            return Err(LineError {
                message: match self.dialect {
                    Dialect::Eos => "! IP address cannot be configured on a switchport".into(),
                    _ => "% IP addresses may not be configured on L2 links.".into(),
                },
            });
        }
        let (v6, args) = (rest[0] == "ipv6", &rest[2..]);
        let (secondary, args) = match args {
            [a @ .., "secondary"] if !v6 => (true, a),
            a => (false, a),
        };
        let list = if v6 { &mut f.ipv6 } else { &mut f.ipv4 };
        if args.is_empty() {
            if !no {
                return Err(bad(at));
            }
            list.clear();
            return Ok(());
        }
        let a = address_of(args).ok_or_else(|| bad(at))?;
        match (no, v6, secondary) {
            (false, true, _) => {
                if !list.contains(&a) {
                    list.push(a);
                }
            }
            (true, _, _) => {
                if !v6 && !secondary && list.first() == Some(&a) && list.len() > 1 {
                    return Err(LineError {
                        message: "% Must delete secondary before deleting primary".into(),
                    });
                }
                list.retain(|x| *x != a);
            }
            (false, false, false) => match list.first_mut() {
                Some(p) => *p = a,
                None => list.push(a),
            },
            (false, false, true) if list.is_empty() => {
                return Err(LineError {
                    message: "% A primary address must be configured first".into(),
                });
            }
            (false, false, true) => {
                if !list.contains(&a) {
                    list.push(a);
                }
            }
        }
        Ok(())
    }

    /// A `switchport` line: mode, trunk encapsulation, access and native VLANs, allowed list.
    fn apply_switchport(&self, f: &mut Iface, words: &[&str], line: &str) -> Result<(), LineError> {
        let bad = |token: usize| invalid(self.dialect, line, token);
        let vid = |s: &str, token: usize| -> Result<u16, LineError> {
            s.parse::<u16>()
                .ok()
                .filter(|v| (1..=4094).contains(v))
                .ok_or_else(|| bad(token))
        };
        let routed_guard = |f: &Iface| -> Result<(), LineError> {
            if f.mode == Mode::Routed {
                Err(LineError {
                    message: match self.dialect {
                        Dialect::Eos => "Interface is not a switchport".into(),
                        _ => "% Interface is not a switchport.".into(),
                    },
                })
            } else {
                Ok(())
            }
        };
        // IOL L2 / Catalyst 3560-class: a trunk needs an explicit encapsulation (the device's words).
        let auto_encapsulation = || {
            LineError {
            message: "Command rejected: An interface whose trunk encapsulation is \"Auto\" can not be configured to \"trunk\" mode.".into(),
        }
        };
        match words {
            ["switchport"] => {
                if f.mode == Mode::Routed {
                    f.mode = Mode::Access;
                    f.ipv4.clear();
                    f.ipv6.clear();
                }
            }
            ["no", "switchport"] => f.mode = Mode::Routed,
            ["switchport", "mode", m] => {
                routed_guard(f)?;
                f.mode = match *m {
                    "access" => Mode::Access,
                    "trunk" => {
                        if self.dialect == Dialect::Ios && f.trunk_encapsulation.is_none() {
                            return Err(auto_encapsulation());
                        }
                        Mode::Trunk
                    }
                    _ => return Err(bad(2)),
                }
            }
            ["no", "switchport", "mode", ..] => {
                routed_guard(f)?;
                f.mode = Mode::Access;
            }
            ["switchport", "trunk", "encapsulation", e] if self.dialect == Dialect::Ios => {
                routed_guard(f)?;
                match *e {
                    "dot1q" | "isl" => f.trunk_encapsulation = Some((*e).to_owned()),
                    "negotiate" if f.mode == Mode::Trunk => return Err(auto_encapsulation()),
                    "negotiate" => f.trunk_encapsulation = None,
                    _ => return Err(bad(3)),
                }
            }
            ["no", "switchport", "trunk", "encapsulation", ..] if self.dialect == Dialect::Ios => {
                routed_guard(f)?;
                if f.mode == Mode::Trunk {
                    return Err(auto_encapsulation());
                }
                f.trunk_encapsulation = None;
            }
            ["switchport", "access", "vlan", v] => {
                routed_guard(f)?;
                f.access_vlan = vid(v, 3)?;
            }
            ["no", "switchport", "access", "vlan", ..] => f.access_vlan = 1,
            ["switchport", "trunk", "native", "vlan", v] => {
                routed_guard(f)?;
                f.native_vlan = vid(v, 4)?;
            }
            ["no", "switchport", "trunk", "native", "vlan", ..] => f.native_vlan = 1,
            ["switchport", "trunk", "allowed", "vlan", rest @ ..] => {
                routed_guard(f)?;
                let parse = |s: &str, token: usize| VlanSet::parse(s).map_err(|_| bad(token));
                match rest {
                    ["add", l] => f.trunk_allowed = f.trunk_allowed.union(&parse(l, 5)?),
                    ["remove", l] => f.trunk_allowed = f.trunk_allowed.difference(&parse(l, 5)?),
                    ["except", l] => f.trunk_allowed = VlanBits::all().difference(&parse(l, 5)?),
                    [l] => f.trunk_allowed = parse(l, 4)?.into(),
                    _ => return Err(bad(4)),
                }
            }
            ["no", "switchport", "trunk", "allowed", "vlan", ..] => {
                f.trunk_allowed = VlanBits::all()
            }
            _ => return Err(bad(0)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregates_and_addresses_follow_the_devices_rules() {
        for d in [Dialect::Eos, Dialect::Ios, Dialect::Nxos] {
            let mut st = DeviceState::new(d, "sw1", 1, 4);
            st.interfaces[0].1.oper_up = true;
            let mut c = ConfigSession::new(d);
            let p1 = d.port_name(0);
            let p2 = d.port_name(1);
            let lines = [
                format!("interface {p1}, {p2}"),
                "channel-group 10 mode active".into(),
                "interface Po10".into(),
                "port-channel min-links 1".into(),
                "interface Vlan10".into(),
                "ip address 10.0.10.1/24".into(),
                "ip address 10.9.0.1 255.255.255.0 secondary".into(),
                "ipv6 address 2001:db8::1/64".into(),
                "end".into(),
            ];
            for l in &lines {
                c.apply(&mut st, l)
                    .unwrap_or_else(|e| panic!("{d:?} {l}: {}", e.message));
            }
            let pc = st.ensure_port_channel(d, 10);
            assert!(!st.iface(&pc).unwrap().oper_up, "{d:?}: no far end bundles");
            let v = st.iface("Vlan10").unwrap();
            assert_eq!(v.ipv4, ["10.0.10.1/24", "10.9.0.1/24"]);
            let text = st.running_config(d);
            assert!(text.contains("channel-group 10 mode active"), "{text}");
            let primary = if d == Dialect::Ios {
                "ip address 10.0.10.1 255.255.255.0\n"
            } else {
                "ip address 10.0.10.1/24\n"
            };
            assert!(
                text.contains(primary) && text.contains("secondary"),
                "{text}"
            );
            let e = c
                .apply(&mut st, &format!("interface {p1}"))
                .and_then(|_| c.apply(&mut st, "ip address 10.1.0.1/31"));
            assert!(e.is_err(), "{d:?}: no address on a switchport");
            c.apply(&mut st, "interface Vlan10").unwrap();
            assert!(
                c.apply(&mut st, "no ip address 10.0.10.1/24").is_err(),
                "secondaries first"
            );
            c.apply(&mut st, "exit").unwrap();
            c.apply(&mut st, "no interface Po10").unwrap();
            assert!(st.iface(&pc).is_none() && st.iface(&p1).unwrap().channel_group.is_none());
        }
    }

    /// Two switches joined on their first port: the aggregate comes up on LACP active with active or
    /// passive, and on static with static; never passive with passive, nor static with LACP.
    #[test]
    fn an_aggregate_is_up_when_the_far_end_bundles_compatibly() {
        let modes = ["active", "passive", "on"];
        for a in modes {
            for b in modes {
                let (ea, eb) = (PortFlag::default(), PortFlag::default());
                let mut st = DeviceState::new(Dialect::Eos, "a", 1, 2);
                st.interfaces[0].1.oper_up = true;
                st.neighbors.push(Neighbor {
                    local_port: "Ethernet1".into(),
                    system_name: "b".into(),
                    port: "Ethernet1".into(),
                    chassis_id: String::new(),
                    local_up: ea.clone(),
                    peer_up: eb.clone(),
                });
                let mut c = ConfigSession::new(Dialect::Eos);
                for l in [
                    "interface Ethernet1".to_owned(),
                    format!("channel-group 1 mode {a}"),
                ] {
                    c.apply(&mut st, &l).unwrap();
                }
                ea.set_bundle(Some(a));
                eb.set_bundle(Some(b));
                st.refresh_port_channels();
                let up = st.iface("Port-Channel1").unwrap().oper_up;
                let want = matches!(
                    (a, b),
                    ("active", "active" | "passive") | ("passive", "active") | ("on", "on")
                );
                assert_eq!(up, want, "{a} with {b}");
                eb.set(false);
                st.refresh_port_channels();
                assert!(
                    !st.iface("Port-Channel1").unwrap().oper_up,
                    "{a} with {b}: far end shut"
                );
            }
        }
    }

    #[test]
    fn lines_change_state() {
        let mut st = DeviceState::new(Dialect::Eos, "sw1", 1, 4);
        let mut c = ConfigSession::new(Dialect::Eos);
        for l in [
            "vlan 10",
            "name web",
            "exit",
            "interface Et2",
            "description up link",
            "switchport mode trunk",
            "switchport trunk allowed vlan 10,20",
            "switchport trunk allowed vlan add 30",
            "switchport trunk native vlan 10",
            "shutdown",
            "mtu 1500",
            "exit",
            "interface Ethernet3",
            "switchport access vlan 10",
            "no switchport",
            "end",
        ] {
            c.apply(&mut st, l).unwrap();
        }
        assert_eq!(st.vlans[&10], "web");
        let e2 = st.iface("Ethernet2").unwrap();
        assert_eq!(e2.description, "up link");
        assert_eq!(
            (e2.mode, e2.native_vlan, e2.enabled, e2.mtu),
            (Mode::Trunk, 10, false, 1500)
        );
        assert_eq!(e2.trunk_allowed.to_range_string(), "10,20,30");
        assert_eq!(st.iface("Ethernet3").unwrap().mode, Mode::Routed);
        let e = c.apply(&mut st, "frobnicate").unwrap_err();
        assert!(e.message.contains("Invalid input"));
        let mut c = ConfigSession::new(Dialect::Ios);
        assert!(c.apply(&mut st, "no vlan 1").is_err());
        assert!(c.apply(&mut st, "interface Ethernet9").is_err());
        assert!(
            st.running_config(Dialect::Eos)
                .contains("   switchport trunk allowed vlan 10,20,30")
        );
    }

    /// An IOS VTP server (the default) refuses extended VLANs when the VLAN sub-mode is left, with the
    /// device's three lines, and keeps none of them; `vtp mode transparent` allows them.
    #[test]
    fn ios_vtp_server_refuses_extended_vlans() {
        let mut st = DeviceState::new(Dialect::Ios, "sw1", 1, 4);
        let pristine = st.clone();
        let mut c = ConfigSession::new(Dialect::Ios);
        c.apply(&mut st, "vlan 3000").unwrap();
        c.apply(&mut st, "name big").unwrap();
        let e = c.apply(&mut st, "exit").unwrap_err();
        assert!(
            e.message.starts_with(
                "% Failed to create VLANs 3000\nExtended VLAN(s) not allowed in current VTP mode."
            ),
            "{e:?}"
        );
        assert_eq!(st, pristine);
        c.apply(&mut st, "vlan 1005").unwrap();
        c.apply(&mut st, "exit").unwrap();
        assert!(st.vlans.contains_key(&1005));
        c.apply(&mut st, "vtp mode transparent").unwrap();
        c.apply(&mut st, "vlan 3000").unwrap();
        c.apply(&mut st, "exit").unwrap();
        assert!(st.vlans.contains_key(&3000));
        assert!(c.apply(&mut st, "vtp mode server").is_err());
        // EOS has no VTP.
        let mut st = DeviceState::new(Dialect::Eos, "sw1", 1, 4);
        let mut c = ConfigSession::new(Dialect::Eos);
        c.apply(&mut st, "vlan 3000").unwrap();
        c.apply(&mut st, "exit").unwrap();
        assert!(st.vlans.contains_key(&3000));
    }

    /// IOS (IOL L2) refuses a trunk while the encapsulation is `negotiate`, in both directions, with the
    /// device's words; NX-OS has no encapsulation command.
    #[test]
    fn ios_trunk_needs_an_encapsulation() {
        let mut st = DeviceState::new(Dialect::Ios, "sw1", 1, 4);
        let mut c = ConfigSession::new(Dialect::Ios);
        c.apply(&mut st, "interface Ethernet0/1").unwrap();
        let e = c.apply(&mut st, "switchport mode trunk").unwrap_err();
        assert!(
            e.message.starts_with(
                "Command rejected: An interface whose trunk encapsulation is \"Auto\""
            ),
            "{e:?}"
        );
        assert_eq!(st.iface("Ethernet0/1").unwrap().mode, Mode::Access);
        c.apply(&mut st, "switchport trunk encapsulation dot1q")
            .unwrap();
        c.apply(&mut st, "switchport mode trunk").unwrap();
        assert!(
            c.apply(&mut st, "no switchport trunk encapsulation")
                .is_err()
        );
        assert!(
            c.apply(&mut st, "switchport trunk encapsulation negotiate")
                .is_err()
        );
        let rc = st.running_config(Dialect::Ios);
        assert!(
            rc.contains("interface Ethernet0/1\n switchport trunk encapsulation dot1q\n switchport mode trunk\n"),
            "{rc}"
        );
        c.apply(&mut st, "switchport mode access").unwrap();
        assert!(
            st.running_config(Dialect::Ios)
                .contains(" switchport trunk encapsulation dot1q\n")
        );
        c.apply(&mut st, "no switchport trunk encapsulation")
            .unwrap();
        assert!(!st.running_config(Dialect::Ios).contains("encapsulation"));
        assert_eq!(st, DeviceState::new(Dialect::Ios, "sw1", 1, 4));
        let mut st = DeviceState::new(Dialect::Nxos, "n1", 1, 4);
        let mut c = ConfigSession::new(Dialect::Nxos);
        c.apply(&mut st, "interface Ethernet1/1").unwrap();
        c.apply(&mut st, "switchport mode trunk").unwrap();
        assert!(
            c.apply(&mut st, "switchport trunk encapsulation dot1q")
                .is_err()
        );
    }

    #[test]
    fn clab_interface_names() {
        assert_eq!(
            Dialect::Eos.port_from_clab("eth1").as_deref(),
            Some("Ethernet1")
        );
        assert_eq!(
            Dialect::Junos.port_from_clab("eth1").as_deref(),
            Some("ge-0/0/0")
        );
        assert_eq!(
            Dialect::Ios.port_from_clab("e0/2").as_deref(),
            Some("Ethernet0/2")
        );
        assert_eq!(
            Dialect::Ios.port_from_clab("Ethernet1/1").as_deref(),
            Some("Ethernet1/1")
        );
        assert_eq!(
            Dialect::Nxos.port_from_clab("eth3").as_deref(),
            Some("Ethernet1/3")
        );
    }
}
