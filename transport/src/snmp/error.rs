//! SNMP transport errors. Every variant names the device and the operation; timeouts and walk limits also
//! name the limit (docs/style.md habit 6).

use std::fmt;
use std::time::Duration;

use super::oid::Oid;

/// The SNMP operation an error happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnmpOp {
    /// Opening the session (address resolution, socket, SNMPv3 engine discovery).
    Connect,
    Get,
    GetNext,
    GetBulk,
    Walk,
}

impl fmt::Display for SnmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SnmpOp::Connect => "connect",
            SnmpOp::Get => "get",
            SnmpOp::GetNext => "get-next",
            SnmpOp::GetBulk => "get-bulk",
            SnmpOp::Walk => "walk",
        })
    }
}

/// Which bound stopped a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkLimit {
    /// More than this many varbinds under the root.
    MaxOids(usize),
    /// The walk took longer than this.
    MaxTime(Duration),
}

impl fmt::Display for WalkLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WalkLimit::MaxOids(n) => write!(f, "more than {n} OIDs (max_oids)"),
            WalkLimit::MaxTime(d) => write!(f, "longer than {d:?} (max_time)"),
        }
    }
}

/// RFC 3416 §3 error-status names, for messages.
pub fn error_status_name(status: u32) -> &'static str {
    match status {
        0 => "noError",
        1 => "tooBig",
        2 => "noSuchName",
        3 => "badValue",
        4 => "readOnly",
        5 => "genErr",
        6 => "noAccess",
        7 => "wrongType",
        8 => "wrongLength",
        9 => "wrongEncoding",
        10 => "wrongValue",
        11 => "noCreation",
        12 => "inconsistentValue",
        13 => "resourceUnavailable",
        14 => "commitFailed",
        15 => "undoFailed",
        16 => "authorizationError",
        17 => "notWritable",
        18 => "inconsistentName",
        _ => "unknown",
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SnmpError {
    #[error("invalid SNMP settings for {device}: {reason}")]
    Config { device: String, reason: String },

    #[error("SNMP {op} to {device} ({address}): cannot open the session: {source}")]
    Connect {
        device: String,
        address: String,
        op: SnmpOp,
        #[source]
        source: std::io::Error,
    },

    /// No answer within the per-attempt timeout, on every attempt. With v2c a wrong community looks like
    /// this too: agents drop such requests silently (RFC 3584 §5.2.1's snmpInBadCommunityNames).
    #[error(
        "SNMP {op} on {device} timed out: no response after {attempts} attempt(s) of {per_attempt:?} each{hint}"
    )]
    Timeout {
        device: String,
        op: SnmpOp,
        per_attempt: Duration,
        attempts: u32,
        hint: &'static str,
    },

    /// The agent's port is closed (ICMP port unreachable on the connected socket).
    #[error(
        "SNMP {op} on {device}: agent unreachable at {address} (port closed?) after {attempts} attempt(s)"
    )]
    Unreachable {
        device: String,
        op: SnmpOp,
        address: String,
        attempts: u32,
    },

    /// SNMPv3 USM rejected us or we rejected the agent (RFC 3414 §3.2: unknown user, wrong digest, wrong
    /// key, not in time window, unencrypted reply to an authPriv request).
    #[error("SNMPv3 authentication with {device} failed during {op} for user {user:?}: {reason}")]
    Auth {
        device: String,
        op: SnmpOp,
        user: String,
        reason: String,
    },

    /// The agent answered with a non-zero error-status (RFC 3416 §4.2).
    #[error("SNMP {op} on {device}: agent returned error-status {status} ({}) at varbind {index}", error_status_name(*status))]
    Agent {
        device: String,
        op: SnmpOp,
        status: u32,
        index: u32,
    },

    /// The response could not be decoded or does not belong to our request.
    #[error("SNMP {op} on {device}: bad response: {reason}")]
    Protocol {
        device: String,
        op: SnmpOp,
        reason: String,
    },

    #[error("SNMP walk of {root} on {device} stopped after {collected} OIDs: {limit}")]
    WalkLimit {
        device: String,
        root: Oid,
        limit: WalkLimit,
        collected: usize,
    },

    /// RFC 3416 §4.2.2: GETNEXT must return a larger OID; an agent that does not would loop forever.
    #[error(
        "SNMP walk of {root} on {device}: agent returned non-increasing OID {got} after {previous}"
    )]
    NonIncreasing {
        device: String,
        root: Oid,
        previous: Oid,
        got: Oid,
    },

    /// A walk step failed; the inner error names the request.
    #[error("in walk of {root} on {device}: {source}")]
    InWalk {
        device: String,
        root: Oid,
        #[source]
        source: Box<SnmpError>,
    },
}

impl SnmpError {
    /// True for authentication failures (also when wrapped in a walk).
    pub fn is_auth(&self) -> bool {
        match self {
            SnmpError::Auth { .. } => true,
            SnmpError::InWalk { source, .. } => source.is_auth(),
            _ => false,
        }
    }

    /// True for timeouts (also when wrapped in a walk).
    pub fn is_timeout(&self) -> bool {
        match self {
            SnmpError::Timeout { .. } => true,
            SnmpError::InWalk { source, .. } => source.is_timeout(),
            _ => false,
        }
    }
}
