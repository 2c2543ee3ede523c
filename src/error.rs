//! The engine's one error type: what made a node run fail, kept typed up to the report, the exit code
//! and the metrics so an operator can tell a device's refusal from a dead Chef server or a full disk.
//!
//! ```text
//!   DriverError ─┐
//!   StoreError ──┤
//!   ResolveError ┼─▶ EngineError ─▶ kind(): device | transport | timeout | auth | store | server |
//!   ClassifyError┤                          lock | config | internal | cancelled
//!   LockError ───┘                  device_kind(): the driver's finer kind (connect, rejected, ...)
//! ```

use crate::classify::ClassifyError;
use crate::lock::LockError;
use crate::resolve::ResolveError;
use crate::store::StoreError;
use crate::store::chef::ChefError;
use netgw_drivers::driver::{DriverError, ErrorKind};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use thiserror::Error;

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

/// Why a node run failed.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error(transparent)]
    Driver(#[from] DriverError),

    #[error(transparent)]
    Store(#[from] StoreError),

    #[error(transparent)]
    Resolve(#[from] ResolveError),

    #[error(transparent)]
    Classify(#[from] ClassifyError),

    #[error(transparent)]
    Lock(#[from] LockError),

    #[error(transparent)]
    Journal(#[from] crate::journal::JournalError),

    /// The node run was stopped at its time limit; `restore` says what the restore step did.
    #[error("node run exceeded {limit:?}; restore: {restore}")]
    NodeTimeout { limit: Duration, restore: String },

    /// The node run was stopped from outside (serve's last resort after its grace periods).
    #[error("aborted before reaching a safe point (gateway shutdown); restore: {restore}")]
    Aborted { restore: String },

    /// The operator's input: desired state, inventory, resource limits.
    #[error("{0}")]
    Config(String),

    #[error("{0}")]
    Cancelled(String),

    /// Another node of an atomic converge failed (`crate::atomic`).
    #[error("{0}")]
    Transaction(String),

    #[error("{0}")]
    Internal(String),
}

impl EngineError {
    pub fn kind(&self) -> NodeErrorKind {
        match self {
            EngineError::Driver(e) => NodeErrorKind::of_driver(e.kind()),
            EngineError::Store(e) => store_kind(e),
            EngineError::Resolve(e) => resolve_kind(e),
            EngineError::Classify(ClassifyError::Resolve(e)) => resolve_kind(e),
            EngineError::Classify(e) if e.is_timeout() => NodeErrorKind::Timeout,
            EngineError::Classify(_) => NodeErrorKind::Config,
            EngineError::Lock(LockError::Cancelled { .. }) => NodeErrorKind::Cancelled,
            EngineError::Lock(_) => NodeErrorKind::Lock,
            EngineError::Journal(_) => NodeErrorKind::Store,
            EngineError::NodeTimeout { .. } => NodeErrorKind::Timeout,
            EngineError::Aborted { .. } => NodeErrorKind::Cancelled,
            EngineError::Config(_) => NodeErrorKind::Config,
            EngineError::Cancelled(_) => NodeErrorKind::Cancelled,
            EngineError::Transaction(_) => NodeErrorKind::Transaction,
            EngineError::Internal(_) => NodeErrorKind::Internal,
        }
    }

    /// The driver's own kind (connect, rejected, verify, ...) when a device session failed.
    pub fn device_kind(&self) -> Option<ErrorKind> {
        match self {
            EngineError::Driver(e) => Some(e.kind()),
            _ => None,
        }
    }
}

fn resolve_kind(e: &ResolveError) -> NodeErrorKind {
    match e {
        ResolveError::Store(e) => store_kind(e),
        ResolveError::Cookbooks(e) => e.kind(),
        _ => NodeErrorKind::Config,
    }
}

fn store_kind(e: &StoreError) -> NodeErrorKind {
    match e {
        // Bad files and missing objects are the operator's input; the file system failing is not.
        StoreError::Parse { .. } | StoreError::Model { .. } | StoreError::NotFound { .. } => {
            NodeErrorKind::Config
        }
        StoreError::Io { .. } | StoreError::Repo { .. } => NodeErrorKind::Store,
        StoreError::Chef(c) => chef_kind(c),
    }
}

pub(crate) fn chef_kind(e: &ChefError) -> NodeErrorKind {
    match e {
        _ if e.is_auth() => NodeErrorKind::Auth,
        ChefError::Url { .. } | ChefError::TooLarge { .. } => NodeErrorKind::Config,
        ChefError::Status { status, .. } if *status < 500 => NodeErrorKind::Config,
        _ => NodeErrorKind::Server,
    }
}
