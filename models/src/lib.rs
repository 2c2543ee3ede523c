//! netgw-models: pure data and logic, no I/O, no tokio.
//!
//! Chef's node object (RFC 45 desired/current split), run-lists and their expansion, attribute
//! precedence and deep merge, allowlists, and secrets that never print.

pub mod secret;
pub mod facts;
