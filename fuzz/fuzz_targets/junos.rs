#![no_main]
//! Junos XML replies and configuration (every junos parser) (see `netgw_netconf_fuzz::devices::junos_xml`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::devices::junos_xml(data));
