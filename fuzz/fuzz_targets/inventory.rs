#![no_main]
//! Nornir SimpleInventory YAML -> device targets (see `netgw_netconf_fuzz::inputs::inventory`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::inputs::inventory(data));
