#![no_main]
//! RFC 6242 framing decoder, EndOfMessage mode (see `check_framing`).
use libfuzzer_sys::fuzz_target;
use netgw_netconf_fuzz::{check_framing, codec::Framing};

fuzz_target!(|data: &[u8]| check_framing(Framing::EndOfMessage, data));
