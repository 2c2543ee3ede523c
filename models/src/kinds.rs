//! containerlab node kinds: the one table of what netgw does with each.
//!
//! Source: containerlab's node registry (`nodes/*/*.go` at srl-labs/containerlab 39ff2b7, BSD-3-Clause):
//! each kind's names (`kindNames`), its `defaultCredentials`, and its `PlatformAttrs`
//! (`NapalmPlatformName`, `ScrapliPlatformName`), which containerlab writes as `platform:` into
//! `nornir-simple-inventory.yml` when `CLAB_NORNIR_PLATFORM_NAME_SCHEMA` is `napalm` or `scrapli`
//! (`core/inventory.go`; a kind without `PlatformAttrs` keeps its kind name in every schema, a kind
//! without the schema's name gets an empty `platform:`).
//!
//! A kind is either driven by one netgw driver or not driven, with the reason: a kind is never mapped
//! to a near neighbour (IOS-XR is not IOS, SR Linux is not Linux).

/// What netgw does with a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drive {
    /// Driven by the netgw driver of this platform (`eos`, `junos`, `ios`, `nxos`, `f5`).
    Driver(&'static str),
    /// Not driven; the reason, e.g. "IOS-XR: netgw has no IOS-XR driver".
    NotDriven(&'static str),
}

/// One containerlab kind (with all its names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// Every name containerlab accepts for it; the first is the one shown.
    pub names: &'static [&'static str],
    pub drive: Drive,
    /// containerlab's default credentials for the kind (`("", "")` when it has none).
    pub username: &'static str,
    pub password: &'static str,
    /// `platform:` under `CLAB_NORNIR_PLATFORM_NAME_SCHEMA=napalm` / `=scrapli` (`None`: the kind has
    /// no `PlatformAttrs`, the kind name is written; `Some("")`: an empty platform is written).
    pub napalm: Option<&'static str>,
    pub scrapli: Option<&'static str>,
    /// What containerlab's `ethN` (N >= 1, the N-th data port) is called on the device.
    pub ports: PortNaming,
}

/// How a kind names containerlab's data ports `eth1`, `eth2`, ... on the device (containerlab's kind
/// pages, "Interface naming"; `eth0` is always management).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortNaming {
    /// The name containerlab uses, `ethN` (a Linux container such as cRPD, or a kind whose mapping
    /// netgw does not know: a topology then writes the device's own names).
    Linux,
    /// `{prefix}{N - 1 + first}`: `Ethernet1` (cEOS), `Ethernet1/1` (N9Kv), `ge-0/0/0` (vMX),
    /// `GigabitEthernet2` (CSR1000v, whose Gi1 is management), `1.1` (BIG-IP VE).
    Numbered { prefix: &'static str, first: u32 },
    /// IOL: four ports a slot, `Ethernet0/0` is management, so `eth1` is `Ethernet0/1` and `eth4` is
    /// `Ethernet1/0`.
    IolSlots,
}

impl PortNaming {
    /// The device's name for containerlab interface `ifname`; `None` when `ifname` is not `ethN`
    /// (a topology may write the device's own names, which are kept as written).
    pub fn device_name(self, ifname: &str) -> Option<String> {
        let n: u32 = ifname.strip_prefix("eth")?.parse().ok()?;
        if n == 0 {
            return None;
        }
        Some(match self {
            PortNaming::Linux => ifname.to_owned(),
            PortNaming::Numbered { prefix, first } => format!("{prefix}{}", n - 1 + first),
            PortNaming::IolSlots => format!("Ethernet{}/{}", n / 4, n % 4),
        })
    }
}

/// The device's name for interface `ifname` of a node of kind `kind` (see [`PortNaming`]); names that
/// are not `ethN`, and nodes of unknown kinds, keep the name as written.
pub fn device_port_name(kind: Option<&str>, ifname: &str) -> String {
    kind.and_then(self::kind)
        .and_then(|k| k.ports.device_name(ifname))
        .unwrap_or_else(|| ifname.to_owned())
}

const IOSXR: Drive = Drive::NotDriven("IOS-XR: netgw has no IOS-XR driver");
const SRL: Drive = Drive::NotDriven("Nokia SR Linux: netgw has no SR Linux driver");
const SROS: Drive = Drive::NotDriven("Nokia SR OS: netgw has no SR OS driver");
const LINUX: Drive = Drive::NotDriven("a Linux host: netgw has no Linux driver");
const CUMULUS: Drive = Drive::NotDriven("Cumulus Linux: netgw has no Cumulus driver");
const SONIC: Drive = Drive::NotDriven("SONiC: netgw has no SONiC driver");
const NOT_DEVICE: Drive =
    Drive::NotDriven("not a network device (containerlab infrastructure or a host)");
const OTHER_OS: Drive = Drive::NotDriven("an operating system netgw has no driver for");

const fn k(
    names: &'static [&'static str],
    drive: Drive,
    (username, password): (&'static str, &'static str),
    napalm: Option<&'static str>,
    scrapli: Option<&'static str>,
) -> Kind {
    Kind {
        names,
        drive,
        username,
        password,
        napalm,
        scrapli,
        ports: PortNaming::Linux,
    }
}

impl Kind {
    const fn ports(self, ports: PortNaming) -> Kind {
        Kind { ports, ..self }
    }
}

const fn numbered(prefix: &'static str, first: u32) -> PortNaming {
    PortNaming::Numbered { prefix, first }
}

const ADMIN: (&str, &str) = ("admin", "admin");
const JUNIPER_VR: (&str, &str) = ("admin", "admin@123");
const CLAB: (&str, &str) = ("clab", "clab@123");
const NONE: (&str, &str) = ("", "");

/// Every containerlab kind, from its node registry. The napalm/scrapli names are `Some("")` where the
/// kind has `PlatformAttrs` but no name for that schema.
#[rustfmt::skip]
pub const KINDS: &[Kind] = &[
    // Driven.
    k(&["arista_ceos", "ceos"], Drive::Driver("eos"), ADMIN, Some("eos"), Some("arista_eos")).ports(numbered("Ethernet", 1)),
    k(&["arista_veos", "vr-veos", "vr-arista_veos"], Drive::Driver("eos"), ADMIN, Some("eos"), Some("arista_eos")).ports(numbered("Ethernet", 1)),
    k(&["juniper_crpd", "crpd"], Drive::Driver("junos"), ("root", "clab123"), Some("junos"), Some("juniper_junos")),
    k(&["juniper_csrx"], Drive::Driver("junos"), ("root", "clab123"), Some("junos"), Some("juniper_junos")),
    k(&["juniper_vmx", "vr-vmx", "vr-juniper_vmx"], Drive::Driver("junos"), JUNIPER_VR, Some("junos"), Some("juniper_junos")).ports(numbered("ge-0/0/", 0)),
    k(&["juniper_vqfx", "vr-vqfx", "vr-juniper_vqfx"], Drive::Driver("junos"), JUNIPER_VR, Some("junos"), Some("juniper_junos")).ports(numbered("xe-0/0/", 0)),
    k(&["juniper_vsrx", "vr-vsrx", "vr-juniper_vsrx"], Drive::Driver("junos"), JUNIPER_VR, Some("junos"), Some("juniper_junos")).ports(numbered("ge-0/0/", 0)),
    k(&["juniper_vjunosswitch"], Drive::Driver("junos"), JUNIPER_VR, Some("junos"), Some("juniper_junos")).ports(numbered("ge-0/0/", 0)),
    k(&["juniper_vjunosrouter"], Drive::Driver("junos"), JUNIPER_VR, Some("junos"), Some("juniper_junos")).ports(numbered("ge-0/0/", 0)),
    k(&["juniper_vjunosevolved"], Drive::Driver("junos"), JUNIPER_VR, Some("junos"), Some("juniper_junos")).ports(numbered("et-0/0/", 0)),
    k(&["juniper_cjunosevolved", "cjunosevolved"], Drive::Driver("junos"), JUNIPER_VR, Some("junos"), Some("juniper_junos")),
    k(&["cisco_iol"], Drive::Driver("ios"), ADMIN, Some("ios"), Some("cisco_ios")).ports(PortNaming::IolSlots),
    k(&["cisco_vios"], Drive::Driver("ios"), ADMIN, Some(""), Some("cisco_ios")),
    k(&["cisco_csr1000v", "vr-csr", "vr-cisco_csr1000v"], Drive::Driver("ios"), ADMIN, Some(""), Some("cisco_iosxe")).ports(numbered("GigabitEthernet", 2)),
    k(&["cisco_c8000v"], Drive::Driver("ios"), ADMIN, Some(""), Some("cisco_iosxe")).ports(numbered("GigabitEthernet", 2)),
    k(&["cisco_cat9kv"], Drive::Driver("ios"), ADMIN, Some(""), Some("cisco_iosxe")),
    k(&["cisco_n9kv", "vr-n9kv", "vr-cisco_n9kv"], Drive::Driver("nxos"), ADMIN, Some("nxos"), Some("cisco_nxos")).ports(numbered("Ethernet1/", 1)),
    k(&["f5_bigip-ve"], Drive::Driver("f5"), ("admin", "Labl@b!234"), None, None).ports(numbered("1.", 1)),
    // Not driven.
    k(&["cisco_c8000", "c8000"], IOSXR, ("cisco", "cisco123"), Some("iosxr"), Some("cisco_iosxr")),
    k(&["cisco_xrd", "xrd"], IOSXR, CLAB, Some("iosxr"), Some("cisco_iosxr")),
    k(&["cisco_xrd_vrouter"], IOSXR, CLAB, Some("iosxr"), Some("cisco_iosxr")),
    k(&["cisco_xrv", "vr-xrv", "vr-cisco_xrv"], IOSXR, CLAB, Some("iosxr"), Some("cisco_iosxr")),
    k(&["cisco_xrv9k", "vr-xrv9k", "vr-cisco_xrv9k"], IOSXR, CLAB, Some("iosxr"), Some("cisco_iosxr")),
    k(&["nokia_srlinux", "srl"], SRL, ("admin", "NokiaSrl1!"), Some(""), Some("nokia_srlinux")),
    k(&["nokia_srsim"], SROS, ("admin", "NokiaSros1!"), Some(""), Some("nokia_sros")),
    k(&["nokia_sros", "vr-sros", "vr-nokia_sros"], SROS, ADMIN, Some(""), Some("nokia_sros")),
    k(&["linux"], LINUX, NONE, None, None),
    k(&["cumulus_cvx", "cvx"], CUMULUS, NONE, None, None),
    k(&["nvidia_cumulusvx"], CUMULUS, ("cumulus", "Clab123!"), None, None),
    k(&["sonic-vs"], SONIC, NONE, Some(""), Some("sonic")),
    k(&["sonic-vm"], SONIC, ADMIN, Some(""), Some("sonic")),
    k(&["dell_sonic"], SONIC, ADMIN, Some(""), Some("sonic")),
    k(&["plvision_sonic"], SONIC, ADMIN, Some(""), Some("sonic")),
    k(&["cisco_asav"], Drive::NotDriven("Cisco ASA: netgw has no ASA driver"), ("admin", "CiscoAsa1!"), Some(""), Some("cisco_asa")),
    k(&["cisco_ftdv"], Drive::NotDriven("Cisco FTD: netgw has no FTD driver"), ("admin", "Admin@123"), Some(""), Some("cisco_ftd")),
    k(&["cisco_sdwan"], Drive::NotDriven("Cisco SD-WAN: netgw has no SD-WAN driver"), ADMIN, Some(""), Some("cisco_iosxe")),
    k(&["aruba_aoscx", "vr-aoscx", "vr-aruba_aoscx"], Drive::NotDriven("Aruba AOS-CX: netgw has no AOS-CX driver"), ADMIN, Some(""), Some("aruba_aoscx")),
    k(&["dell_ftosv", "vr-ftosv", "vr-dell_ftosv"], Drive::NotDriven("Dell OS10: netgw has no OS10 driver"), ADMIN, Some(""), Some("dell_emc")),
    k(&["mikrotik_ros", "vr-ros", "vr-mikrotik_ros"], Drive::NotDriven("MikroTik RouterOS: netgw has no RouterOS driver"), ADMIN, Some(""), Some("mikrotik_routeros")),
    k(&["paloalto_panos", "vr-pan", "vr-paloalto_panos"], Drive::NotDriven("PAN-OS: netgw has no PAN-OS driver"), ("admin", "Admin@123"), Some(""), Some("paloalto_panos")),
    k(&["fortinet_fortigate"], Drive::NotDriven("FortiOS: netgw has no FortiOS driver"), ADMIN, Some(""), Some("fortinet_fortios")),
    k(&["huawei_vrp"], Drive::NotDriven("Huawei VRP: netgw has no VRP driver"), ADMIN, Some(""), Some("huawei_vrp")),
    k(&["ipinfusion_ocnos"], Drive::NotDriven("OcNOS: netgw has no OcNOS driver"), JUNIPER_VR, Some(""), Some("ipinfusion_ocnos")),
    k(&["vyosnetworks_vyos"], Drive::NotDriven("VyOS: netgw has no VyOS driver"), ADMIN, Some("vyos"), Some("vyatta_vyos")),
    k(&["checkpoint_cloudguard"], Drive::NotDriven("Check Point: netgw has no Check Point driver"), ADMIN, Some(""), Some("notsupported")),
    k(&["6wind_vsr"], OTHER_OS, ADMIN, None, None),
    k(&["arrcus_arcos"], OTHER_OS, CLAB, None, None),
    k(&["ciena_saos", "vr-ciena_saos"], OTHER_OS, ("diag", "ciena123"), None, None),
    k(&["fdio_vpp"], OTHER_OS, ("root", "vpp"), None, None),
    k(&["generic_vm"], OTHER_OS, CLAB, None, None),
    k(&["freebsd"], OTHER_OS, ADMIN, None, None),
    k(&["openbsd"], OTHER_OS, ADMIN, None, None),
    k(&["openwrt"], OTHER_OS, NONE, None, None),
    k(&["rare"], OTHER_OS, NONE, None, None),
    k(&["veesix_osvbng"], OTHER_OS, NONE, None, None),
    k(&["keysight_ixia-c-one"], Drive::NotDriven("a traffic generator"), NONE, None, None),
    k(&["spirent_stc"], Drive::NotDriven("a traffic generator"), NONE, None, None),
    k(&["bridge"], NOT_DEVICE, NONE, None, None),
    k(&["ovs-bridge"], NOT_DEVICE, NONE, None, None),
    k(&["host"], NOT_DEVICE, NONE, None, None),
    k(&["ext-container"], NOT_DEVICE, NONE, None, None),
    k(&["k8s-kind"], NOT_DEVICE, NONE, None, None),
];

/// The kind named `name` (any of its names, case-insensitive).
pub fn kind(name: &str) -> Option<&'static Kind> {
    let n = name.trim();
    KINDS
        .iter()
        .find(|k| k.names.iter().any(|x| x.eq_ignore_ascii_case(n)))
}

/// What a Nornir `platform:` containerlab may have written means: a kind name (default schema), or a
/// napalm or scrapli name (a name several kinds share, such as `cisco_iosxe`, means the driven one).
/// `None` for a name no containerlab kind produces.
pub fn platform_name(name: &str) -> Option<Drive> {
    if let Some(k) = kind(name) {
        return Some(k.drive);
    }
    let n = name.trim();
    let named = |k: &&Kind| {
        [k.napalm, k.scrapli]
            .into_iter()
            .flatten()
            .any(|x| !x.is_empty() && x.eq_ignore_ascii_case(n))
    };
    let mut matches: Vec<&Kind> = KINDS.iter().filter(named).collect();
    matches.sort_by_key(|k| matches!(k.drive, Drive::NotDriven(_)));
    matches.first().map(|k| k.drive)
}

/// The kind table of docs/usage.md (a test in tests/containerlab_files.rs keeps the doc equal to it).
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| containerlab kind (aliases) | netgw | default credentials |\n|---|---|---|\n",
    );
    for k in KINDS {
        let drive = match k.drive {
            Drive::Driver(p) => format!("driven: `{p}`"),
            Drive::NotDriven(why) => format!("not driven: {why}"),
        };
        let creds = if k.username.is_empty() {
            "none".to_owned()
        } else {
            format!("`{}` / `{}`", k.username, k.password)
        };
        let names: Vec<String> = k.names.iter().map(|n| format!("`{n}`")).collect();
        out.push_str(&format!("| {} | {drive} | {creds} |\n", names.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containerlab_data_ports_are_named_as_on_the_device() {
        let name = |k: &str, i: &str| device_port_name(Some(k), i);
        assert_eq!(name("ceos", "eth1"), "Ethernet1");
        assert_eq!(name("cisco_iol", "eth1"), "Ethernet0/1");
        assert_eq!(name("cisco_iol", "eth4"), "Ethernet1/0");
        assert_eq!(name("vr-csr", "eth1"), "GigabitEthernet2");
        assert_eq!(name("cisco_n9kv", "eth3"), "Ethernet1/3");
        assert_eq!(name("juniper_vjunosswitch", "eth1"), "ge-0/0/0");
        assert_eq!(name("f5_bigip-ve", "eth2"), "1.2");
        assert_eq!(name("crpd", "eth1"), "eth1");
        // Names written the device's way, eth0 (management) and unknown kinds are kept.
        assert_eq!(name("ceos", "Ethernet7"), "Ethernet7");
        assert_eq!(name("ceos", "eth0"), "eth0");
        assert_eq!(device_port_name(Some("no_such_kind"), "eth1"), "eth1");
    }

    #[test]
    fn every_name_is_listed_once() {
        let mut seen = std::collections::BTreeSet::new();
        for k in KINDS {
            for n in k.names {
                assert!(seen.insert(n.to_ascii_lowercase()), "{n} listed twice");
            }
        }
    }

    #[test]
    fn near_neighbours_are_not_driven() {
        for n in [
            "cisco_c8000",
            "c8000",
            "cisco_xrd",
            "xrd",
            "vr-xrv9k",
            "srl",
            "nokia_srlinux",
            "nokia_srsim",
            "vr-sros",
            "linux",
            "cvx",
            "sonic-vs",
        ] {
            assert!(
                matches!(kind(n).unwrap().drive, Drive::NotDriven(_)),
                "{n} must not be driven"
            );
        }
        assert!(
            matches!(kind("cisco_c8000").unwrap().drive, Drive::NotDriven(r) if r.contains("IOS-XR"))
        );
        assert_eq!(kind("cisco_c8000v").unwrap().drive, Drive::Driver("ios"));
    }

    #[test]
    fn containerlab_default_credentials() {
        let creds = |n: &str| {
            let k = kind(n).unwrap();
            (k.username, k.password)
        };
        assert_eq!(creds("juniper_crpd"), ("root", "clab123"));
        assert_eq!(creds("crpd"), ("root", "clab123"));
        assert_eq!(creds("juniper_csrx"), ("root", "clab123"));
        assert_eq!(creds("f5_bigip-ve"), ("admin", "Labl@b!234"));
        assert_eq!(creds("vr-veos"), ("admin", "admin"));
        assert_eq!(creds("vr-csr"), ("admin", "admin"));
        assert_eq!(creds("vr-n9kv"), ("admin", "admin"));
        assert_eq!(creds("juniper_vjunosswitch"), ("admin", "admin@123"));
        assert_eq!(creds("CEOS"), ("admin", "admin"));
    }

    #[test]
    fn schema_names_of_undriven_kinds_are_recognised() {
        assert_eq!(platform_name("cisco_iosxr"), Some(IOSXR));
        assert_eq!(platform_name("iosxr"), Some(IOSXR));
        assert_eq!(platform_name("nokia_srlinux"), Some(SRL));
        assert_eq!(
            platform_name("juniper_vjunosswitch"),
            Some(Drive::Driver("junos"))
        );
        assert_eq!(platform_name("no_such_os"), None);
        // cisco_sdwan shares scrapli's cisco_iosxe with the driven IOS-XE kinds.
        assert_eq!(platform_name("cisco_iosxe"), Some(Drive::Driver("ios")));
        assert_eq!(platform_name("eos"), Some(Drive::Driver("eos")));
    }
}
