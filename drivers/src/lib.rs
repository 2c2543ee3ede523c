//! Transports and vendor drivers. See DESIGN.md §4.
pub mod transport;
