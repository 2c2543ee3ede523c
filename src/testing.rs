//! Test doubles: compiled into the unit tests, and into the integration tests through the `testing`
//! feature (the crate's dev-dependency on itself), so both share one copy.

pub mod mem_driver;
