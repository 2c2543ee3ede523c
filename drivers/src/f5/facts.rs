//! Facts from iControl REST: pure parsers of `sys/version`, `sys/hardware`, `sys/global-settings`,
//! `shared/identified-devices/config/device-info`, `net/interface` and `net/lldp-neighbors`.
//!
//! `sys/version` and `sys/hardware` are *stats* documents: values sit under
//! `entries.<url>.nestedStats.entries.<name>.description` (or `.value` for numbers), nested once more per
//! section. Sections are found by the last segment of their URL key (`.../hardware/platform`), so the
//! `https://localhost` prefix and the `?ver=` suffix do not matter.
//!
//! Mapping: vendor `f5`, platform `tmos`, platform_version = `Version` (`14.1.2.1`), model =
//! `platform/0.marketingName` (`BIG-IP Virtual Edition`; the platform id such as `Z100` when no marketing
//! name is given), serial = `system-info/0.bigipChassisSerialNum`, hostname from global-settings (or
//! device-info). Interfaces from `net/interface`: admin status from `enabled`/`disabled`, mtu, MAC,
//! ifIndex, description, speed from `mediaActive` (`10000T-FD` = 10 000 Mb/s). The configuration
//! collection reports no operational status, so `oper_status` stays empty. None of these endpoints
//! reports uptime.
//!
//! LLDP: the only real sample is the empty collection (a `...lldp-neighborscollectionstats` without an
//! `items` key), which yields no neighbours. A populated answer has never been seen under a usable
//! licence; [`parse_lldp_neighbors`] reads a stats-shaped or items-shaped answer with the field names
//! tmsh prints (`localInterface`, `chassisId`, `portId`, `systemName`, ...), which is **unverified**.

use std::collections::BTreeMap;

use netgw_models::facts::{
    AdminStatus, DeviceFacts, InterfaceFacts, LldpNeighbor, VlanFacts, split_hostname,
};
use serde_json::{Map, Value};

/// The inputs of [`build_facts`]; any may be missing.
#[derive(Debug, Clone, Copy, Default)]
pub struct FactsInputs<'a> {
    pub sys_version: Option<&'a Value>,
    pub sys_hardware: Option<&'a Value>,
    pub global_settings: Option<&'a Value>,
    pub device_info: Option<&'a Value>,
    pub interfaces: Option<&'a Value>,
    pub vlans: Option<&'a Value>,
    pub lldp_neighbors: Option<&'a Value>,
}

/// `sys/version`: what runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionInfo {
    pub product: Option<String>,
    pub version: Option<String>,
    pub build: Option<String>,
    pub edition: Option<String>,
}

/// `sys/hardware`: what it runs on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HardwareInfo {
    pub marketing_name: Option<String>,
    /// `system-info/0.platform` (`Z100` for VE, `C123` for an i-series ...).
    pub platform_id: Option<String>,
    pub serial: Option<String>,
    pub base_mac: Option<String>,
}

/// The nested `entries` object of a stats document (or of one nested stats level).
fn nested_entries(v: &Value) -> Option<&Map<String, Value>> {
    v.get("nestedStats")?.get("entries")?.as_object()
}

/// The entry whose URL key ends with `/section` (query string ignored).
fn section<'a>(entries: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    entries.iter().find_map(|(k, v)| {
        let path = k.split('?').next().unwrap_or(k);
        (path.rsplit('/').next() == Some(name)).then_some(v)
    })
}

/// The first instance (`.../platform/0`) of a section's nested stats.
fn first_instance<'a>(
    entries: &'a Map<String, Value>,
    name: &str,
) -> Option<&'a Map<String, Value>> {
    let sec = nested_entries(section(entries, name)?)?;
    sec.values().find_map(nested_entries)
}

/// A stats field: `description` (text), or `value` (number). Blank texts (`" "`, `"-"`) are absent.
fn stat(entries: &Map<String, Value>, name: &str) -> Option<String> {
    let f = entries.get(name)?;
    let s = match (f.get("description"), f.get("value")) {
        (Some(Value::String(s)), _) => s.trim().to_owned(),
        (_, Some(Value::Number(n))) => n.to_string(),
        _ => return None,
    };
    (!s.is_empty() && s != "-").then_some(s)
}

pub fn parse_sys_version(v: &Value) -> VersionInfo {
    let Some(entries) = v.get("entries").and_then(Value::as_object) else {
        return VersionInfo::default();
    };
    // One instance, `.../sys/version/0`.
    let Some(e) = entries.values().find_map(nested_entries) else {
        return VersionInfo::default();
    };
    VersionInfo {
        product: stat(e, "Product"),
        version: stat(e, "Version"),
        build: stat(e, "Build"),
        edition: stat(e, "Edition"),
    }
}

pub fn parse_sys_hardware(v: &Value) -> HardwareInfo {
    let Some(entries) = v.get("entries").and_then(Value::as_object) else {
        return HardwareInfo::default();
    };
    let platform = first_instance(entries, "platform");
    let system = first_instance(entries, "system-info");
    HardwareInfo {
        marketing_name: platform.and_then(|p| stat(p, "marketingName")),
        platform_id: system.and_then(|s| stat(s, "platform")),
        serial: system.and_then(|s| stat(s, "bigipChassisSerialNum")),
        base_mac: platform
            .and_then(|p| stat(p, "baseMac"))
            .map(|m| m.to_ascii_lowercase()),
    }
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `sys/global-settings` -> the configured host name.
pub fn parse_global_settings(v: &Value) -> Option<String> {
    text(v, "hostname")
}

/// `shared/identified-devices/config/device-info`: the one-call alternative (hostname, version,
/// marketing name, serial) as a partial [`DeviceFacts`].
pub fn parse_device_info(v: &Value) -> DeviceFacts {
    let mut f = DeviceFacts::default();
    if let Some((short, fqdn)) = text(v, "hostname").as_deref().and_then(split_hostname) {
        f.hostname = Some(short);
        f.fqdn = Some(fqdn);
    }
    f.platform_version = text(v, "version");
    f.model = text(v, "platformMarketingName").or_else(|| text(v, "platform"));
    f.serial = text(v, "chassisSerialNumber");
    f
}

/// `mediaActive` (`10000T-FD`, `100TX-FD`, `40000SR4-FD`) -> bits per second. `none`/`auto` -> None.
pub fn media_speed(media: &str) -> Option<u64> {
    let digits: String = media.chars().take_while(char::is_ascii_digit).collect();
    let mbps: u64 = digits.parse().ok()?;
    // checked: the digits come from the device; a value past u64 bits/s is not a speed (found by
    // fuzzing: `18446744073710T-FD` overflowed, a panic in debug builds and a wrong speed in release).
    if mbps == 0 {
        return None;
    }
    mbps.checked_mul(1_000_000)
}

/// `net/interface` -> interface facts by name.
pub fn parse_interface_facts(v: &Value) -> BTreeMap<String, InterfaceFacts> {
    let mut out = BTreeMap::new();
    for item in super::items(v) {
        let Some(name) = text(item, "name") else {
            continue;
        };
        let admin = if item.get("disabled").and_then(Value::as_bool) == Some(true) {
            Some(AdminStatus::Down)
        } else if item.get("enabled").and_then(Value::as_bool) == Some(true) {
            Some(AdminStatus::Up)
        } else {
            None
        };
        let f = InterfaceFacts {
            admin_status: admin,
            oper_status: None,
            mtu: item
                .get("mtu")
                .and_then(Value::as_u64)
                .and_then(|m| u32::try_from(m).ok()),
            speed: item
                .get("mediaActive")
                .and_then(Value::as_str)
                .and_then(media_speed),
            mac: text(item, "macAddress")
                .map(|m| m.to_ascii_lowercase())
                .filter(|m| m != "none"),
            description: text(item, "description"),
            ifindex: item
                .get("ifIndex")
                .and_then(Value::as_u64)
                .and_then(|i| u32::try_from(i).ok()),
            switchport: None,
        };
        out.insert(name, f);
    }
    out
}

/// `net/lldp-neighbors` -> neighbours by local interface (see the module docs: unverified shape for a
/// populated answer; the real empty answer has no `items` at all).
pub fn parse_lldp_neighbors(v: &Value) -> BTreeMap<String, Vec<LldpNeighbor>> {
    let mut out: BTreeMap<String, Vec<LldpNeighbor>> = BTreeMap::new();
    // Flatten both shapes into field maps of plain strings.
    let mut records: Vec<BTreeMap<String, String>> = Vec::new();
    for item in super::items(v) {
        if let Some(o) = item.as_object() {
            records.push(
                o.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                    .collect(),
            );
        }
    }
    for e in v
        .get("entries")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.values())
    {
        if let Some(n) = nested_entries(e) {
            records.push(
                n.keys()
                    .filter_map(|k| stat(n, k).map(|s| (k.clone(), s)))
                    .collect(),
            );
        }
    }
    for r in records {
        let get = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| r.get(*k))
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
        };
        let Some(local) = get(&["localInterface", "localPort", "interface", "name"]) else {
            continue;
        };
        let n = LldpNeighbor {
            remote_system_name: get(&["systemName", "sysName"]),
            remote_port: get(&["portId"]),
            remote_port_description: get(&["portDescription"]),
            remote_chassis_id: get(&["chassisId"]),
            remote_system_description: get(&["systemDescription", "sysDesc"]),
            remote_chassis_id_subtype: None,
            remote_port_id_subtype: None,
        };
        if n.remote_system_name.is_none()
            && n.remote_port.is_none()
            && n.remote_chassis_id.is_none()
        {
            continue;
        }
        out.entry(local).or_default().push(n);
    }
    out
}

/// Put the facts together (a driver's own facts; SNMP may fill the rest).
pub fn build_facts(i: &FactsInputs<'_>) -> DeviceFacts {
    let mut f = i.device_info.map(parse_device_info).unwrap_or_default();
    f.vendor = Some("f5".into());
    f.platform = Some("tmos".into());
    if let Some(v) = i.sys_version.map(parse_sys_version)
        && v.version.is_some()
    {
        f.platform_version = v.version;
    }
    if let Some(h) = i.sys_hardware.map(parse_sys_hardware) {
        if let Some(m) = h.marketing_name.or(h.platform_id) {
            f.model = Some(m);
        }
        if h.serial.is_some() {
            f.serial = h.serial;
        }
    }
    if let Some((short, fqdn)) = i
        .global_settings
        .and_then(parse_global_settings)
        .as_deref()
        .and_then(split_hostname)
    {
        f.hostname = Some(short);
        f.fqdn = Some(fqdn);
    }
    if let Some(ifs) = i.interfaces {
        f.interfaces = parse_interface_facts(ifs);
    }
    if let Some(vl) = i.vlans {
        for v in super::vlan::parse_vlans(vl) {
            if let Some(tag) = v.tag {
                f.vlans.entry(tag).or_insert(VlanFacts::named(v.name));
            }
        }
    }
    if let Some(l) = i.lldp_neighbors {
        f.lldp_neighbors = parse_lldp_neighbors(l);
    }
    if f.lldp_neighbors.is_empty() {
        // The only answer BIG-IP's REST API has been seen to give is an empty collection, neighbours
        // or not (module docs): no neighbour read there is no answer.
        f.lldp_unreadable = Some(
            "iControl REST's net/lldp-neighbors gave no neighbour table; BIG-IP's LLDP neighbours \
             are read over SNMP (LLDP-MIB): give the host connection_options.snmp"
                .into(),
        );
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn version(v: &str, build: &str) -> Value {
        json!({"kind": "tm:sys:version:versionstats", "entries": {
            "https://localhost/mgmt/tm/sys/version/0": {"nestedStats": {"entries": {
                "Build": {"description": build}, "Product": {"description": "BIG-IP"},
                "Version": {"description": v}, "Edition": {"description": "Final"}}}}}})
    }

    #[test]
    fn f5_facts_sys_version() {
        let v = parse_sys_version(&version("17.5.1", "0.0.7"));
        assert_eq!(v.version.as_deref(), Some("17.5.1"));
        assert_eq!(v.build.as_deref(), Some("0.0.7"));
        assert_eq!(v.product.as_deref(), Some("BIG-IP"));
        assert_eq!(
            parse_sys_version(&json!({"kind": "x"})),
            VersionInfo::default()
        );
        assert_eq!(parse_sys_version(&json!([1, 2])), VersionInfo::default());
    }

    #[test]
    fn f5_facts_hardware_sections_by_url_suffix() {
        let h = json!({"entries": {
            "https://localhost/mgmt/tm/sys/hardware/platform?ver=13.1.1": {"nestedStats": {"entries": {
                "https://localhost/mgmt/tm/sys/hardware/platform/0": {"nestedStats": {"entries": {
                    "marketingName": {"description": "BIG-IP i5800"}, "baseMac": {"description": "00:94:A1:00:00:01"}}}}}}},
            "https://localhost/mgmt/tm/sys/hardware/system-info": {"nestedStats": {"entries": {
                "https://localhost/mgmt/tm/sys/hardware/system-info/0": {"nestedStats": {"entries": {
                    "bigipChassisSerialNum": {"description": "f5-abcd-1234"}, "platform": {"description": "C119"}}}}}}}}});
        let hw = parse_sys_hardware(&h);
        assert_eq!(hw.marketing_name.as_deref(), Some("BIG-IP i5800"));
        assert_eq!(hw.serial.as_deref(), Some("f5-abcd-1234"));
        assert_eq!(hw.platform_id.as_deref(), Some("C119"));
        assert_eq!(hw.base_mac.as_deref(), Some("00:94:a1:00:00:01"));
        let f = build_facts(&FactsInputs {
            sys_hardware: Some(&h),
            ..Default::default()
        });
        assert_eq!(f.model.as_deref(), Some("BIG-IP i5800"));
        assert_eq!(f.vendor.as_deref(), Some("f5"));
        assert_eq!(f.platform.as_deref(), Some("tmos"));
    }

    #[test]
    fn f5_facts_interfaces_and_speed() {
        assert_eq!(media_speed("10000T-FD"), Some(10_000_000_000));
        assert_eq!(media_speed("100TX-FD"), Some(100_000_000));
        assert_eq!(media_speed("none"), None);
        assert_eq!(media_speed("auto"), None);
        // Regression (fuzz target f5): more megabits than u64 bits/s can hold.
        assert_eq!(media_speed("18446744073710T-FD"), None);
        assert_eq!(
            media_speed("18446744073709T-FD"),
            Some(18_446_744_073_709_000_000)
        );
        let ifs = parse_interface_facts(&json!({"items": [
            {"name": "1.1", "enabled": true, "mtu": 9198, "macAddress": "00:0C:29:35:0D:C7", "ifIndex": 48, "mediaActive": "1000T-FD"},
            {"name": "1.2", "disabled": true, "description": "spare", "macAddress": "none"},
            {"mtu": 1500}
        ]}));
        assert_eq!(ifs.len(), 2);
        assert_eq!(ifs["1.1"].admin_status, Some(AdminStatus::Up));
        assert_eq!(ifs["1.1"].mac.as_deref(), Some("00:0c:29:35:0d:c7"));
        assert_eq!(ifs["1.1"].speed, Some(1_000_000_000));
        assert_eq!(ifs["1.2"].admin_status, Some(AdminStatus::Down));
        assert_eq!(ifs["1.2"].description.as_deref(), Some("spare"));
        assert_eq!(ifs["1.2"].mac, None);
    }

    #[test]
    fn f5_facts_lldp_empty_and_unverified_shapes() {
        let empty = json!({"kind": "tm:net:lldp-neighbors:lldp-neighborscollectionstats",
            "selfLink": "https://localhost/mgmt/tm/net/lldp-neighbors?ver=14.1.2.1"});
        assert!(parse_lldp_neighbors(&empty).is_empty());
        let stats = json!({"entries": {"https://localhost/mgmt/tm/net/lldp-neighbors/1.1": {"nestedStats": {"entries": {
            "localInterface": {"description": "1.1"}, "systemName": {"description": "sw1"},
            "portId": {"description": "Ethernet1"}, "chassisId": {"description": "00:1c:73:00:00:01"}}}}}});
        let n = parse_lldp_neighbors(&stats);
        assert_eq!(n["1.1"][0].remote_system_name.as_deref(), Some("sw1"));
        assert_eq!(n["1.1"][0].remote_port.as_deref(), Some("Ethernet1"));
        let items = json!({"items": [{"localInterface": "1.2", "systemName": "sw2"}, {"localInterface": "1.3"}]});
        let n = parse_lldp_neighbors(&items);
        assert_eq!(n.len(), 1);
        assert_eq!(n["1.2"][0].remote_system_name.as_deref(), Some("sw2"));
        // The empty answer (or none) is no reading of the table; a neighbour read is one.
        for lldp in [Some(&empty), None] {
            let f = build_facts(&FactsInputs {
                lldp_neighbors: lldp,
                ..Default::default()
            });
            assert!(
                f.lldp_unreadable
                    .as_deref()
                    .is_some_and(|w| w.contains("SNMP"))
            );
        }
        let f = build_facts(&FactsInputs {
            lldp_neighbors: Some(&items),
            ..Default::default()
        });
        assert_eq!(f.lldp_unreadable, None);
    }

    #[test]
    fn f5_facts_device_info_then_specific_endpoints_win() {
        let di = json!({"hostname": "testHost1.lab.net", "version": "15.1.0.4", "platformMarketingName": "BIG-IP Virtual Edition",
            "platform": "Z100", "chassisSerialNumber": "4216-x"});
        let f = build_facts(&FactsInputs {
            device_info: Some(&di),
            ..Default::default()
        });
        assert_eq!(f.hostname.as_deref(), Some("testHost1"));
        assert_eq!(f.fqdn.as_deref(), Some("testHost1.lab.net"));
        assert_eq!(f.platform_version.as_deref(), Some("15.1.0.4"));
        assert_eq!(f.serial.as_deref(), Some("4216-x"));
        let gs = json!({"hostname": "bigip01.lab.local"});
        let v = version("14.1.2.1", "0.0.4");
        let f = build_facts(&FactsInputs {
            device_info: Some(&di),
            global_settings: Some(&gs),
            sys_version: Some(&v),
            ..Default::default()
        });
        assert_eq!(f.hostname.as_deref(), Some("bigip01"));
        assert_eq!(f.platform_version.as_deref(), Some("14.1.2.1"));
    }
}
