//! netgw-lab's integration tests, one binary with a module per feature: `cargo test -p netgw-labs
//! --test it lab::` runs one of them.

mod clab;
mod lab;
mod snmp;
