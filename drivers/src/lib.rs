//! Vendor drivers. See docs/design.md §4 and docs/architecture.md.
//!
//! The `netgw-transport` crate moves bytes (SSH, NETCONF, SNMP, HTTP), re-exported here as
//! [`transport`] so that `crate::transport::...` reads as before; each vendor module (`junos/`, `eos/`, ...)
//! renders and parses with pure functions (`facts.rs`, `vlan.rs`, `link.rs`) and implements
//! [`driver::Driver`] in its `mod.rs` as glue only. [`registry`] is the one place that maps a platform
//! to its driver.

pub mod cisco_cli;
mod cli_conn;
#[cfg(feature = "replay")]
pub mod conformance;
pub mod driver;
pub mod eos;
pub mod f5;
pub mod ios;
pub mod junos;
pub mod lag_cli;
pub mod lag_state;
pub mod netconf_txn;
pub mod nxos;
pub mod registry;
pub mod stamp;
pub mod target;
#[cfg(feature = "testing")]
pub mod testing;

pub use netgw_transport as transport;
