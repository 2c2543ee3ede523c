#![no_main]
//! external node classifier (ENC) YAML answers (see `netgw_netconf_fuzz::inputs::enc`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::inputs::enc(data));
