//! netgw-lab's integration tests, one binary with a module per feature: `cargo test -p netgw-labs
//! --test it snmp::` runs one of them (a filter matches anywhere in a test's path: `lab::`
//! also runs `clab::`).

mod clab;
mod lab;
mod snmp;
