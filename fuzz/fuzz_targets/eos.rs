#![no_main]
//! Arista EOS eAPI JSON and running-config text (see `netgw_netconf_fuzz::devices::eos`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::devices::eos(data));
