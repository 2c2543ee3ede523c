//! IOS and NX-OS show commands for routed interfaces, in the devices' text shapes: IOS `show ip
//! interface` / `show ipv6 interface` and NX-OS `show ip interface vrf all` / `show ipv6 interface vrf
//! all` (the lines NAPALM's `ios` and `nxos_ssh` `get_interfaces_ip` read, as its docstrings quote
//! them). The aggregate summaries are `bundles.rs`'.

use super::state::{DeviceState, Iface};
use std::fmt::Write as _;

/// `fe80::...` from a MAC (modified EUI-64), the link-local address an interface takes.
fn link_local(mac: &str) -> String {
    let h: Vec<u8> = mac
        .chars()
        .filter(char::is_ascii_hexdigit)
        .collect::<String>()
        .as_bytes()
        .chunks(2)
        .filter_map(|c| u8::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok())
        .collect();
    let [a, b, c, d, e, f] = h[..] else {
        return "fe80::1".into();
    };
    let addr = std::net::Ipv6Addr::new(
        0xfe80,
        0,
        0,
        0,
        u16::from_be_bytes([a ^ 2, b]),
        u16::from_be_bytes([c, 0xff]),
        u16::from_be_bytes([0xfe, d]),
        u16::from_be_bytes([e, f]),
    );
    addr.to_string()
}

/// `2001:db8:100::/64` for `2001:db8:100::1/64`.
fn network(address: &str) -> String {
    let (ip, len) = address.split_once('/').unwrap_or((address, "128"));
    let (Ok(a), Ok(n)) = (ip.parse::<std::net::Ipv6Addr>(), len.parse::<u32>()) else {
        return address.to_owned();
    };
    let mask = u128::MAX.checked_shl(128 - n.min(128)).unwrap_or(0);
    format!("{}/{n}", std::net::Ipv6Addr::from(u128::from(a) & mask))
}

/// `10.1.100.0/24` for `10.1.100.1/24`.
fn network4(address: &str) -> String {
    let (ip, len) = address.split_once('/').unwrap_or((address, "32"));
    let (Ok(a), Ok(n)) = (ip.parse::<std::net::Ipv4Addr>(), len.parse::<u32>()) else {
        return address.to_owned();
    };
    let mask = u32::MAX.checked_shl(32 - n.min(32)).unwrap_or(0);
    format!("{}/{n}", std::net::Ipv4Addr::from(u32::from(a) & mask))
}

fn ios_status(f: &Iface) -> &'static str {
    match (f.enabled, f.status_up()) {
        (false, _) => "administratively down, line protocol is down",
        (true, true) => "up, line protocol is up",
        (true, false) => "down, line protocol is down",
    }
}

/// IOS `show ip interface`: every interface; the routed ones with their addresses.
pub fn ios_show_ip_interface(st: &DeviceState) -> String {
    let mut s = String::new();
    for (name, f) in &st.interfaces {
        let _ = writeln!(s, "{name} is {}", ios_status(f));
        let Some((primary, secondaries)) = f.ipv4.split_first() else {
            s.push_str("  Internet protocol processing disabled\n");
            continue;
        };
        let _ = writeln!(s, "  Internet address is {primary}");
        s.push_str(
            "  Broadcast address is 255.255.255.255\n  Address determined by non-volatile memory\n",
        );
        let _ = writeln!(
            s,
            "  MTU is {} bytes\n  Helper address is not set\n  Directed broadcast forwarding is disabled",
            f.mtu
        );
        for a in secondaries {
            let _ = writeln!(s, "  Secondary address {a}");
        }
        s.push_str(
            "  Outgoing access list is not set\n  Inbound  access list is not set\n  Proxy ARP is enabled\n",
        );
    }
    s
}

/// IOS `show ipv6 interface`: the interfaces with IPv6 enabled (an address).
pub fn ios_show_ipv6_interface(st: &DeviceState) -> String {
    let mut s = String::new();
    for (name, f) in st.interfaces.iter().filter(|(_, f)| !f.ipv6.is_empty()) {
        let _ = writeln!(s, "{name} is {}", ios_status(f));
        let _ = writeln!(
            s,
            "  IPv6 is enabled, link-local address is {} \n  No Virtual link-local address(es):\n  \
             Global unicast address(es):",
            link_local(&f.mac).to_ascii_uppercase()
        );
        for a in &f.ipv6 {
            let ip = a.split('/').next().unwrap_or(a);
            let _ = writeln!(
                s,
                "    {}, subnet is {} ",
                ip.to_ascii_uppercase(),
                network(a).to_ascii_uppercase()
            );
        }
        let _ = writeln!(
            s,
            "  Joined group address(es):\n    FF02::1\n    FF02::2\n  MTU is {} bytes\n  \
             ICMP error messages limited to one every 100 milliseconds\n  ICMP redirects are enabled\n  \
             ND DAD is enabled, number of DAD attempts: 1",
            f.mtu
        );
    }
    s
}

fn nx_status(f: &Iface) -> String {
    let up = |b: bool| if b { "up" } else { "down" };
    format!(
        "protocol-{}/link-{}/admin-{}",
        up(f.status_up()),
        up(f.oper_up),
        up(f.enabled)
    )
}

/// NX-OS `show ip interface vrf all`: the default VRF's interfaces with an IPv4 address.
pub fn nx_show_ip_interface(st: &DeviceState) -> String {
    let mut s = String::from("IP Interface Status for VRF \"default\"(1)\n");
    let routed = st
        .interfaces
        .iter()
        .filter(|(n, f)| !f.ipv4.is_empty() && Some(n.as_str()) != st.mgmt_interface.as_deref());
    for (name, f) in routed {
        let _ = writeln!(
            s,
            "{name}, Interface status: {}, iod: {},",
            nx_status(f),
            f.ifindex
        );
        for (i, a) in f.ipv4.iter().enumerate() {
            let ip = a.split('/').next().unwrap_or(a);
            let secondary = if i == 0 { "" } else { " secondary" };
            let _ = writeln!(
                s,
                "  IP address: {ip}, IP subnet: {}{secondary} route-preference: 0, tag: 0 ",
                network4(a)
            );
        }
        let _ = writeln!(
            s,
            "  IP broadcast address: 255.255.255.255\n  IP multicast groups locally joined: none\n  \
             IP MTU: {} bytes (using link MTU)",
            f.mtu
        );
    }
    s
}

/// NX-OS `show ipv6 interface vrf all`: the default VRF's interfaces with an IPv6 address.
pub fn nx_show_ipv6_interface(st: &DeviceState) -> String {
    let mut s = String::from("IPv6 Interface Status for VRF \"default\"(1)\n");
    for (name, f) in st.interfaces.iter().filter(|(_, f)| !f.ipv6.is_empty()) {
        let _ = writeln!(
            s,
            "{name}, Interface status: {}, iod: {}",
            nx_status(f),
            f.ifindex
        );
        s.push_str("  IPv6 address: \n");
        for a in &f.ipv6 {
            let _ = writeln!(s, "    {a} [VALID]");
        }
        let first = f.ipv6.first().map(|a| network(a)).unwrap_or_default();
        let _ = writeln!(
            s,
            "  IPv6 subnet:  {first}\n  IPv6 link-local address: {} (default) [VALID]\n  \
             IPv6 virtual addresses configured: none\n  IPv6 multicast routing: disabled",
            link_local(&f.mac)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks() {
        assert_eq!(network("2001:db8:100::1/64"), "2001:db8:100::/64");
        assert_eq!(network4("10.1.100.1/24"), "10.1.100.0/24");
        assert_eq!(link_local("02:00:00:00:01:02"), "fe80::ff:fe00:102");
    }
}
