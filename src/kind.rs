//! What broke, as one word: the taxonomy every layer tags its failures with, for reports
//! (`error_kind`), exit codes and `netgw_node_errors_total{kind}`. Below every module that fails, so
//! the store, the resolver and the report name a kind without knowing the engine's error type.

use netgw_drivers::driver::ErrorKind;
use serde::{Deserialize, Serialize};

/// What broke, for reports (`error_kind`), exit codes and `netgw_node_errors_total{kind}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeErrorKind {
    /// The device refused or could not take the change, or answered what netgw cannot read.
    Device,
    /// The connection to the device (refused, reset, lost).
    Transport,
    /// A device operation, the classifier or the whole node run took too long.
    Timeout,
    /// The device or the Chef server refused the credentials.
    Auth,
    /// The local repo could not be read or written (I/O).
    Store,
    /// The Chef server failed (unreachable, 5xx, unreadable answer).
    Server,
    /// The node's run lock: held by another process, or its file unusable.
    Lock,
    /// Desired state, inventory or resource errors: the operator's input.
    Config,
    /// A bug or a crashed task in netgw itself.
    Internal,
    /// Stopped on purpose (gateway shutdown) before any change.
    Cancelled,
    /// An atomic converge (`crate::atomic`) did not make this node's change because another node of
    /// the transaction failed.
    Transaction,
}

impl NodeErrorKind {
    pub const ALL: [NodeErrorKind; 11] = [
        NodeErrorKind::Device,
        NodeErrorKind::Transport,
        NodeErrorKind::Timeout,
        NodeErrorKind::Auth,
        NodeErrorKind::Store,
        NodeErrorKind::Server,
        NodeErrorKind::Lock,
        NodeErrorKind::Config,
        NodeErrorKind::Internal,
        NodeErrorKind::Cancelled,
        NodeErrorKind::Transaction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NodeErrorKind::Device => "device",
            NodeErrorKind::Transport => "transport",
            NodeErrorKind::Timeout => "timeout",
            NodeErrorKind::Auth => "auth",
            NodeErrorKind::Store => "store",
            NodeErrorKind::Server => "server",
            NodeErrorKind::Lock => "lock",
            NodeErrorKind::Config => "config",
            NodeErrorKind::Internal => "internal",
            NodeErrorKind::Cancelled => "cancelled",
            NodeErrorKind::Transaction => "transaction",
        }
    }

    /// The gateway's own side failed (not the device, not the operator's input): exit code 3.
    pub fn is_gateway(self) -> bool {
        matches!(
            self,
            NodeErrorKind::Store
                | NodeErrorKind::Server
                | NodeErrorKind::Lock
                | NodeErrorKind::Internal
        )
    }

    /// The coarse kind of a driver's error kind.
    pub fn of_driver(k: ErrorKind) -> NodeErrorKind {
        match k {
            ErrorKind::Connect | ErrorKind::Transport => NodeErrorKind::Transport,
            ErrorKind::Auth => NodeErrorKind::Auth,
            ErrorKind::Timeout => NodeErrorKind::Timeout,
            ErrorKind::Parse | ErrorKind::Rejected | ErrorKind::Verify => NodeErrorKind::Device,
            ErrorKind::Unsupported | ErrorKind::Config => NodeErrorKind::Config,
            ErrorKind::Cancelled => NodeErrorKind::Cancelled,
        }
    }
}

impl std::fmt::Display for NodeErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
