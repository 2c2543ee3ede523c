//! The drivers' integration tests, one binary with a module per feature: `cargo test -p netgw-drivers
//! --test it conformance::` runs one of them. `common` is the harness they share.

mod common;

mod conformance;
mod conformance_sources;
mod interop_eos;
mod interop_f5;
mod interop_http;
mod interop_ios;
mod interop_junos;
mod interop_netconf;
mod interop_nxos;
mod interop_snmp;
mod interop_ssh;
mod replay;
