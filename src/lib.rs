//! netgw: a network-device management gateway. It plays the part chef-client plays on a server, once
//! per device, for a whole inventory at a time. See docs/design.md for the architecture.

pub mod api;
pub mod atomic;
pub mod classify;
pub mod cli;
pub mod clock;
pub mod collector;
pub mod cookbook;
pub mod coordination;
pub mod engine;
pub mod error;
pub mod facts;
pub mod gateway;
pub mod history;
pub mod inventory;
pub mod journal;
pub mod kind;
pub mod links;
pub mod lock;
pub mod pg;
pub mod report;
pub mod resolve;
pub mod rootdir;
pub mod session;
pub mod state;
pub mod store;
pub mod terminal;
pub mod validate;

/// Test doubles shared by the unit tests and the integration tests (`testing` feature); never in a
/// product build.
#[cfg(any(test, feature = "testing"))]
pub mod testing;
