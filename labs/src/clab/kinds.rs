//! What containerlab's node registry says about each kind (its `nodes/*/*.go` at srl-labs/containerlab
//! commit 39ff2b7, BSD-3-Clause): the kind names, the default credentials, and the platform names the
//! Nornir inventory uses under `CLAB_NORNIR_PLATFORM_NAME_SCHEMA=napalm|scrapli`.

/// One registry entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindInfo {
    /// Every name the kind registers (the first is the canonical one).
    pub names: &'static [&'static str],
    /// Default credentials (empty: the kind has none, e.g. `linux`).
    pub username: &'static str,
    pub password: &'static str,
    /// `None`: the kind has no platform attributes, so every schema writes the kind name itself.
    /// `Some((napalm, scrapli))`: an empty name is written as an empty `platform:`, as containerlab does.
    pub platform_names: Option<(&'static str, &'static str)>,
}

const fn k(
    names: &'static [&'static str],
    username: &'static str,
    password: &'static str,
    platform_names: Option<(&'static str, &'static str)>,
) -> KindInfo {
    KindInfo {
        names,
        username,
        password,
        platform_names,
    }
}

const JUNOS: Option<(&str, &str)> = Some(("junos", "juniper_junos"));
const IOSXE: Option<(&str, &str)> = Some(("", "cisco_iosxe"));
const IOSXR: Option<(&str, &str)> = Some(("iosxr", "cisco_iosxr"));

/// The registry (the kinds netgw drives, and the common ones it does not).
pub const KINDS: &[KindInfo] = &[
    k(
        &["arista_ceos", "ceos"],
        "admin",
        "admin",
        Some(("eos", "arista_eos")),
    ),
    k(
        &["arista_veos", "vr-veos", "vr-arista_veos"],
        "admin",
        "admin",
        Some(("eos", "arista_eos")),
    ),
    k(&["juniper_crpd", "crpd"], "root", "clab123", JUNOS),
    k(&["juniper_csrx"], "root", "clab123", JUNOS),
    k(
        &["juniper_vjunosswitch", "juniper_vjunosrouter"],
        "admin",
        "admin@123",
        JUNOS,
    ),
    k(&["juniper_vjunosevolved"], "admin", "admin@123", JUNOS),
    k(
        &["juniper_cjunosevolved", "cjunosevolved"],
        "admin",
        "admin@123",
        JUNOS,
    ),
    k(
        &["juniper_vmx", "vr-vmx", "vr-juniper_vmx"],
        "admin",
        "admin@123",
        JUNOS,
    ),
    k(
        &["juniper_vqfx", "vr-vqfx", "vr-juniper_vqfx"],
        "admin",
        "admin@123",
        JUNOS,
    ),
    k(
        &["juniper_vsrx", "vr-vsrx", "vr-juniper_vsrx"],
        "admin",
        "admin@123",
        JUNOS,
    ),
    k(&["cisco_iol"], "admin", "admin", Some(("ios", "cisco_ios"))),
    k(&["cisco_vios"], "admin", "admin", Some(("", "cisco_ios"))),
    k(
        &["cisco_csr1000v", "vr-csr", "vr-cisco_csr1000v"],
        "admin",
        "admin",
        IOSXE,
    ),
    k(&["cisco_c8000v"], "admin", "admin", IOSXE),
    k(&["cisco_cat9kv"], "admin", "admin", IOSXE),
    k(
        &["cisco_n9kv", "vr-n9kv", "vr-cisco_n9kv"],
        "admin",
        "admin",
        Some(("nxos", "cisco_nxos")),
    ),
    k(&["f5_bigip-ve"], "admin", "Labl@b!234", None),
    k(&["cisco_c8000", "c8000"], "cisco", "cisco123", IOSXR),
    k(&["cisco_xrd", "xrd"], "clab", "clab@123", IOSXR),
    k(
        &["cisco_xrv9k", "vr-xrv9k", "vr-cisco_xrv9k"],
        "clab",
        "clab@123",
        IOSXR,
    ),
    k(
        &["cisco_xrv", "vr-xrv", "vr-cisco_xrv"],
        "clab",
        "clab@123",
        IOSXR,
    ),
    k(
        &["nokia_srlinux", "srl"],
        "admin",
        "NokiaSrl1!",
        Some(("", "nokia_srlinux")),
    ),
    k(
        &["nokia_sros", "vr-sros", "vr-nokia_sros"],
        "admin",
        "admin",
        Some(("", "nokia_sros")),
    ),
    k(
        &["nokia_srsim"],
        "admin",
        "NokiaSros1!",
        Some(("", "nokia_sros")),
    ),
    k(&["nvidia_cumulusvx"], "cumulus", "Clab123!", None),
    k(&["sonic-vm"], "admin", "admin", Some(("", "sonic"))),
    k(
        &["cisco_asav"],
        "admin",
        "CiscoAsa1!",
        Some(("", "cisco_asa")),
    ),
    k(&["generic_vm"], "clab", "clab@123", None),
    k(&["linux"], "", "", None),
];

/// The registry entry of `kind` (case-insensitive, as containerlab lower-cases kinds).
pub fn kind_info(kind: &str) -> Option<&'static KindInfo> {
    let kind = kind.to_ascii_lowercase();
    KINDS.iter().find(|k| k.names.contains(&kind.as_str()))
}

/// What the Nornir file's `platform:` says for `kind` under a platform-name schema (`None` or any
/// other value: the kind name; `napalm`, `scrapli`: the registry's names).
pub fn nornir_platform(kind: &str, schema: Option<&str>) -> String {
    let names = kind_info(kind).and_then(|k| k.platform_names);
    match (schema, names) {
        (Some("napalm"), Some((napalm, _))) => napalm.to_owned(),
        (Some("scrapli"), Some((_, scrapli))) => scrapli.to_owned(),
        _ => kind.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_facts() {
        assert_eq!(kind_info("CRPD").map(|k| k.password), Some("clab123"));
        assert_eq!(
            kind_info("f5_bigip-ve").map(|k| k.password),
            Some("Labl@b!234")
        );
        assert_eq!(nornir_platform("ceos", Some("napalm")), "eos");
        assert_eq!(nornir_platform("cisco_c8000v", Some("napalm")), "");
        assert_eq!(
            nornir_platform("f5_bigip-ve", Some("scrapli")),
            "f5_bigip-ve"
        );
        assert_eq!(nornir_platform("cisco_n9kv", None), "cisco_n9kv");
        assert_eq!(nornir_platform("linux", Some("scrapli")), "linux");
        assert!(kind_info("bridge").is_none());
    }
}
