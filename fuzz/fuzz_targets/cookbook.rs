#![no_main]
//! Ruby cookbook files: parsed and evaluated statically as an attribute file, a recipe and a metadata.rb (see `netgw_netconf_fuzz::inputs::cookbook`).
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| netgw_netconf_fuzz::inputs::cookbook(data));
