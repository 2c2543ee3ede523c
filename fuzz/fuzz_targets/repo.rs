#![no_main]
//! local repo: node/role/environment JSON, attribute/recipe YAML, run-lists, VLAN lists (see `netgw_netconf_fuzz::inputs::repo`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::inputs::repo(data));
