#![no_main]
//! hello / rpc-reply parser (see `check_reply`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::check_reply(data));
