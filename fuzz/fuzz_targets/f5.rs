#![no_main]
//! F5 BIG-IP iControl REST JSON (facts, VLANs, links, errors, login, transactions) (see `netgw_netconf_fuzz::devices::f5`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::devices::f5(data));
