#![no_main]
//! SNMP: snmprec recordings -> varbinds -> facts, sysDescr (see `netgw_netconf_fuzz::devices::snmp`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::devices::snmp(data));
