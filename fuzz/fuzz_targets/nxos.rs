#![no_main]
//! Cisco NX-OS `| json` answers and CLI text (see `netgw_netconf_fuzz::devices::nxos`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::devices::nxos(data));
