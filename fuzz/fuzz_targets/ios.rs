#![no_main]
//! Cisco IOS / IOS-XE CLI text after the SSH shell's clean(), and prompt matching (see `netgw_netconf_fuzz::devices::ios`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::devices::ios(data));
