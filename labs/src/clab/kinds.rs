//! What netgw-lab needs of containerlab's node registry: default credentials and the Nornir platform
//! names per schema. The registry itself is one table, `netgw_models::kinds` (shared with netgw's
//! inventory readers and the kind table of docs/usage.md); this module only reads it.

use netgw_models::kinds::{Kind, kind};

/// The registry entry of a kind that runs as a container with a login (bridges, hosts and other
/// containerlab infrastructure have none).
pub fn kind_info(name: &str) -> Option<&'static Kind> {
    kind(name).filter(|k| !k.username.is_empty() || k.names[0] == "linux")
}

/// What the Nornir file's `platform:` says for `kind` under a platform-name schema (`None` or any
/// other value: the kind name; `napalm`, `scrapli`: the registry's names, possibly empty).
pub fn nornir_platform(name: &str, schema: Option<&str>) -> String {
    let named = |pick: fn(&Kind) -> Option<&'static str>| kind(name).and_then(pick);
    let chosen = match schema {
        Some("napalm") => named(|k| k.napalm),
        Some("scrapli") => named(|k| k.scrapli),
        _ => None,
    };
    chosen.map_or_else(|| name.to_ascii_lowercase(), str::to_owned)
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
