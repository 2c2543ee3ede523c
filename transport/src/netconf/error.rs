//! Errors of the NETCONF transport (one thiserror enum for this layer, docs/style.md habit 4).
//!
//! This file, `codec.rs` and `reply.rs` only depend on std, bytes, tokio-util, quick-xml and thiserror,
//! so the fuzz crate (`fuzz/`) can compile them on their own with `#[path]` modules.

use std::fmt;
use std::time::Duration;

/// Errors of the RFC 6242 framing layer. Any of them leaves the byte stream unusable: the session must be
/// closed (there is no way to resynchronise on a framing error, RFC 6242 §4.2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("chunk header must start with \"\\n#\", got byte 0x{0:02x}")]
    BadChunkStart(u8),
    #[error("invalid chunk size: {0}")]
    BadChunkSize(String),
    #[error("end-of-chunks marker before any chunk (RFC 6242 §4.2 needs at least one chunk)")]
    EmptyChunkedMessage,
    #[error("message exceeds the configured maximum of {limit} bytes")]
    MessageTooLarge { limit: usize },
    #[error("connection closed in the middle of a message ({0} bytes pending)")]
    TruncatedMessage(usize),
    #[error("{0}")]
    Io(String),
}

impl From<std::io::Error> for FramingError {
    fn from(e: std::io::Error) -> Self {
        FramingError::Io(e.to_string())
    }
}

/// `error-type` of an `rpc-error` (RFC 6241 §4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorType {
    Transport,
    Rpc,
    Protocol,
    Application,
    Other(String),
}

impl ErrorType {
    pub fn parse(s: &str) -> Self {
        match s {
            "transport" => ErrorType::Transport,
            "rpc" => ErrorType::Rpc,
            "protocol" => ErrorType::Protocol,
            "application" => ErrorType::Application,
            other => ErrorType::Other(other.to_string()),
        }
    }
    pub fn as_str(&self) -> &str {
        match self {
            ErrorType::Transport => "transport",
            ErrorType::Rpc => "rpc",
            ErrorType::Protocol => "protocol",
            ErrorType::Application => "application",
            ErrorType::Other(s) => s,
        }
    }
}

/// `error-tag` of an `rpc-error` (RFC 6241 Appendix A), with an escape for tags from later RFCs or vendors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorTag {
    InUse,
    InvalidValue,
    TooBig,
    MissingAttribute,
    BadAttribute,
    UnknownAttribute,
    MissingElement,
    BadElement,
    UnknownElement,
    UnknownNamespace,
    AccessDenied,
    LockDenied,
    ResourceDenied,
    RollbackFailed,
    DataExists,
    DataMissing,
    OperationNotSupported,
    OperationFailed,
    PartialOperation,
    MalformedMessage,
    Other(String),
}

impl ErrorTag {
    pub fn parse(s: &str) -> Self {
        match s {
            "in-use" => ErrorTag::InUse,
            "invalid-value" => ErrorTag::InvalidValue,
            "too-big" => ErrorTag::TooBig,
            "missing-attribute" => ErrorTag::MissingAttribute,
            "bad-attribute" => ErrorTag::BadAttribute,
            "unknown-attribute" => ErrorTag::UnknownAttribute,
            "missing-element" => ErrorTag::MissingElement,
            "bad-element" => ErrorTag::BadElement,
            "unknown-element" => ErrorTag::UnknownElement,
            "unknown-namespace" => ErrorTag::UnknownNamespace,
            "access-denied" => ErrorTag::AccessDenied,
            "lock-denied" => ErrorTag::LockDenied,
            "resource-denied" => ErrorTag::ResourceDenied,
            "rollback-failed" => ErrorTag::RollbackFailed,
            "data-exists" => ErrorTag::DataExists,
            "data-missing" => ErrorTag::DataMissing,
            "operation-not-supported" => ErrorTag::OperationNotSupported,
            "operation-failed" => ErrorTag::OperationFailed,
            "partial-operation" => ErrorTag::PartialOperation,
            "malformed-message" => ErrorTag::MalformedMessage,
            other => ErrorTag::Other(other.to_string()),
        }
    }
    pub fn as_str(&self) -> &str {
        match self {
            ErrorTag::InUse => "in-use",
            ErrorTag::InvalidValue => "invalid-value",
            ErrorTag::TooBig => "too-big",
            ErrorTag::MissingAttribute => "missing-attribute",
            ErrorTag::BadAttribute => "bad-attribute",
            ErrorTag::UnknownAttribute => "unknown-attribute",
            ErrorTag::MissingElement => "missing-element",
            ErrorTag::BadElement => "bad-element",
            ErrorTag::UnknownElement => "unknown-element",
            ErrorTag::UnknownNamespace => "unknown-namespace",
            ErrorTag::AccessDenied => "access-denied",
            ErrorTag::LockDenied => "lock-denied",
            ErrorTag::ResourceDenied => "resource-denied",
            ErrorTag::RollbackFailed => "rollback-failed",
            ErrorTag::DataExists => "data-exists",
            ErrorTag::DataMissing => "data-missing",
            ErrorTag::OperationNotSupported => "operation-not-supported",
            ErrorTag::OperationFailed => "operation-failed",
            ErrorTag::PartialOperation => "partial-operation",
            ErrorTag::MalformedMessage => "malformed-message",
            ErrorTag::Other(s) => s,
        }
    }
}

/// `error-severity`. A missing severity (some Junos replies) is treated as `Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One child of `error-info`: its local name and its text (or, for structured content, its raw inner XML).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    pub name: String,
    pub value: String,
}

/// One `rpc-error` element (RFC 6241 §4.3). Junos omits `error-type` and `error-tag` in some replies, so
/// they are optional; they are never invented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub error_type: Option<ErrorType>,
    pub tag: Option<ErrorTag>,
    pub severity: Severity,
    pub app_tag: Option<String>,
    pub path: Option<String>,
    pub message: Option<String>,
    pub info: Vec<ErrorInfo>,
}

impl RpcError {
    /// The text of the first `error-info` child named `name` (e.g. `session-id` for `lock-denied`,
    /// `bad-element`).
    pub fn info_value(&self, name: &str) -> Option<&str> {
        self.info
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.value.as_str())
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}")?;
        if let Some(t) = &self.tag {
            write!(f, " {}", t.as_str())?;
        }
        if let Some(t) = &self.error_type {
            write!(f, " ({})", t.as_str())?;
        }
        if let Some(m) = &self.message {
            write!(f, ": {}", m.trim())?;
        }
        if let Some(p) = &self.path {
            write!(f, " at {}", p.trim())?;
        }
        for i in &self.info {
            write!(f, " [{}={}]", i.name, i.value.trim())?;
        }
        Ok(())
    }
}

fn join_errors(errors: &[RpcError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Errors of the NETCONF layer.
#[derive(Debug, thiserror::Error)]
pub enum NetconfError {
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("framing: {0}")]
    Framing(#[from] FramingError),
    #[error("malformed XML from peer: {0}")]
    Xml(String),
    /// DTDs / entity declarations are refused outright: they are never legitimate in NETCONF and are the
    /// vehicle of entity-expansion ("billion laughs") and external-entity attacks.
    #[error(
        "rejected a DOCTYPE/entity declaration in a message from the peer (entity-expansion protection)"
    )]
    DtdRejected,
    #[error("protocol violation: {0}")]
    Protocol(String),
    #[error("reply message-id {got:?} does not match the request's {expected:?}")]
    MessageIdMismatch { expected: String, got: String },
    #[error("{operation} on {device} timed out after {limit:?}")]
    Timeout {
        operation: String,
        device: String,
        limit: Duration,
    },
    /// The device answered with at least one `rpc-error` of severity `error`. The device's errors are data.
    #[error("device returned {}", join_errors(errors))]
    Rpc {
        errors: Vec<RpcError>,
        warnings: Vec<RpcError>,
    },
    #[error("session closed by the peer")]
    Closed,
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("server does not advertise capability {0}")]
    MissingCapability(String),
    #[error("ssh: {0}")]
    Ssh(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("in {context}: {source}")]
    Context {
        context: String,
        #[source]
        source: Box<NetconfError>,
    },
}

impl NetconfError {
    /// Wrap with the name of the operation (and device) that failed: `in get-config on sw1: ...`.
    pub fn context(self, context: impl Into<String>) -> Self {
        NetconfError::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// The innermost error, looking through `Context` layers.
    pub fn root(&self) -> &NetconfError {
        match self {
            NetconfError::Context { source, .. } => source.root(),
            other => other,
        }
    }

    /// The device's `rpc-error`s (severity error), if this is (or wraps) an RPC error.
    pub fn rpc_errors(&self) -> &[RpcError] {
        match self.root() {
            NetconfError::Rpc { errors, .. } => errors,
            _ => &[],
        }
    }

    /// True when the device reported an `rpc-error` with this tag.
    pub fn has_tag(&self, tag: &ErrorTag) -> bool {
        self.rpc_errors()
            .iter()
            .any(|e| e.tag.as_ref() == Some(tag))
    }

    pub fn is_timeout(&self) -> bool {
        matches!(self.root(), NetconfError::Timeout { .. })
    }

    /// The SSH error beneath, when the SSH layer failed (login refused, host key, connect).
    pub fn ssh(&self) -> Option<&crate::ssh::SshError> {
        match self.root() {
            NetconfError::Ssh(e) => e.downcast_ref(),
            _ => None,
        }
    }
}

pub type Result<T, E = NetconfError> = std::result::Result<T, E>;
