//! Transports: bytes in and out of devices. Vendor code renders and parses; transports move bytes.
//!
//! Every transport has three timeouts (docs/style.md habit 6): connect, idle (no bytes from the peer for this
//! long ends the session), and per operation (one command, one RPC, one request). Errors that come from a
//! timeout name the operation, the device and the limit.

use std::time::Duration;

/// The three timeouts every transport honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    pub idle: Duration,
    pub operation: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            operation: Duration::from_secs(30),
        }
    }
}

pub mod credentials;
pub mod http;
pub mod netconf;
#[cfg(feature = "replay")]
pub mod replay;
pub mod snmp;
pub mod ssh;
