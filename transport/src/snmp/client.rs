//! The SNMP client: v2c and v3 (USM, RFC 3414) sessions over snmp2's tokio `AsyncSession`, with per-attempt
//! timeouts, retries and bounded walks.
//!
//! snmp2 does not retry and does not skip stale replies: after a timed-out request, the late reply would be
//! read by the next request and rejected as a request-id mismatch. So every timeout, mismatch or
//! unreachable port drops the session (and its socket) and the next attempt opens a fresh one, re-running
//! SNMPv3 engine discovery; late replies then land on a closed port.
//!
//! Known cost: snmp2 localises SNMPv3 keys (RFC 3414 §A.2, 1 MiB of hashing per key) inside discovery, on
//! the runtime thread: a few milliseconds per session open.

use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use netgw_models::secret::Secret;
use snmp2::AsyncSession;
use snmp2::v3;

use super::error::{SnmpError, SnmpOp, WalkLimit};
use super::oid::{Oid, SnmpValue, Varbind};
use super::walk::{WalkLimits, WalkState, WalkStep};

/// An SNMPv3 protocol name netgw does not know, with the ones it does.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown SNMPv3 {what} protocol {given:?} ({known})")]
pub struct UnknownProtocol {
    /// `auth` or `privacy`.
    pub what: &'static str,
    pub given: String,
    pub known: &'static str,
}

/// A protocol name as net-snmp and inventories spell it, without `-`, `_` and case.
fn protocol_key(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// SNMPv3 authentication protocols (RFC 3414 MD5/SHA-1, RFC 7860 SHA-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthProtocol {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

impl FromStr for AuthProtocol {
    type Err = UnknownProtocol;

    /// Net-snmp and inventory spellings: `MD5`, `SHA`, `SHA1`, `SHA-224`, `SHA256`, `sha-512`, ...
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match protocol_key(s).as_str() {
            "md5" => AuthProtocol::Md5,
            "sha" | "sha1" => AuthProtocol::Sha1,
            "sha224" => AuthProtocol::Sha224,
            "sha256" => AuthProtocol::Sha256,
            "sha384" => AuthProtocol::Sha384,
            "sha512" => AuthProtocol::Sha512,
            _ => {
                return Err(UnknownProtocol {
                    what: "auth",
                    given: s.to_owned(),
                    known: "MD5, SHA, SHA-224, SHA-256, SHA-384, SHA-512",
                });
            }
        })
    }
}

impl AuthProtocol {
    fn to_snmp2(self) -> v3::AuthProtocol {
        match self {
            AuthProtocol::Md5 => v3::AuthProtocol::Md5,
            AuthProtocol::Sha1 => v3::AuthProtocol::Sha1,
            AuthProtocol::Sha224 => v3::AuthProtocol::Sha224,
            AuthProtocol::Sha256 => v3::AuthProtocol::Sha256,
            AuthProtocol::Sha384 => v3::AuthProtocol::Sha384,
            AuthProtocol::Sha512 => v3::AuthProtocol::Sha512,
        }
    }
}

/// SNMPv3 privacy protocols (RFC 3414 DES, RFC 3826 AES-128; AES-192/256 as in the Blumenthal draft).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrivProtocol {
    Des,
    Aes128,
    Aes192,
    Aes256,
}

impl FromStr for PrivProtocol {
    type Err = UnknownProtocol;

    /// `DES`, `AES` (= AES-128), `AES128`, `AES-192`, `aes256`, ...
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match protocol_key(s).as_str() {
            "des" => PrivProtocol::Des,
            "aes" | "aes128" => PrivProtocol::Aes128,
            "aes192" => PrivProtocol::Aes192,
            "aes256" => PrivProtocol::Aes256,
            _ => {
                return Err(UnknownProtocol {
                    what: "privacy",
                    given: s.to_owned(),
                    known: "DES, AES, AES-192, AES-256",
                });
            }
        })
    }
}

impl PrivProtocol {
    fn to_snmp2(self) -> v3::Cipher {
        match self {
            PrivProtocol::Des => v3::Cipher::Des,
            PrivProtocol::Aes128 => v3::Cipher::Aes128,
            PrivProtocol::Aes192 => v3::Cipher::Aes192,
            PrivProtocol::Aes256 => v3::Cipher::Aes256,
        }
    }
}

/// SNMPv3 security level with its keys (RFC 3411 §3.4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum V3Level {
    NoAuthNoPriv,
    AuthNoPriv {
        auth: AuthProtocol,
        auth_key: Secret,
    },
    AuthPriv {
        auth: AuthProtocol,
        auth_key: Secret,
        privacy: PrivProtocol,
        priv_key: Secret,
    },
}

/// How to authenticate to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnmpSecurity {
    V2c {
        community: Secret,
    },
    V3 {
        user: String,
        level: V3Level,
        /// SNMPv3 context name (e.g. a VLAN context on Cisco, a recording on snmpsim).
        context: Option<String>,
    },
}

impl SnmpSecurity {
    fn user(&self) -> &str {
        match self {
            SnmpSecurity::V2c { .. } => "",
            SnmpSecurity::V3 { user, .. } => user,
        }
    }
}

/// `connection_options.snmp.extras` of the inventory (docs/design.md §6), before validation.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct SnmpExtras {
    /// `2c` or `3` (a string or a number).
    pub version: Option<serde_json::Value>,
    pub community: Option<Secret>,
    pub user: Option<String>,
    pub auth_proto: Option<String>,
    pub auth_key: Option<Secret>,
    pub priv_proto: Option<String>,
    pub priv_key: Option<Secret>,
    pub context: Option<String>,
}

impl SnmpExtras {
    /// Validate into a security setting; errors name the device and the field.
    pub fn to_security(&self, device: &str) -> Result<SnmpSecurity, SnmpError> {
        let cfg = |reason: String| SnmpError::Config {
            device: device.to_owned(),
            reason,
        };
        let version = match &self.version {
            None => "2c".to_owned(),
            Some(serde_json::Value::String(s)) => s.trim().to_ascii_lowercase(),
            Some(serde_json::Value::Number(n)) => n.to_string(),
            Some(other) => return Err(cfg(format!("version must be 2c or 3, got {other}"))),
        };
        match version.trim_start_matches('v') {
            "2c" | "2" => {
                let community = self
                    .community
                    .clone()
                    .ok_or_else(|| cfg("version 2c needs a community".into()))?;
                Ok(SnmpSecurity::V2c { community })
            }
            "3" => {
                let user = self
                    .user
                    .clone()
                    .filter(|u| !u.is_empty())
                    .ok_or_else(|| cfg("version 3 needs a user".into()))?;
                let level = match (&self.auth_key, &self.priv_key) {
                    (None, None) => V3Level::NoAuthNoPriv,
                    (None, Some(_)) => {
                        return Err(cfg(
                            "priv_key without auth_key: privacy needs authentication (RFC 3414)"
                                .into(),
                        ));
                    }
                    (Some(auth_key), priv_key) => {
                        let auth =
                            AuthProtocol::from_str(self.auth_proto.as_deref().unwrap_or("SHA"))
                                .map_err(|e| cfg(e.to_string()))?;
                        match priv_key {
                            None => V3Level::AuthNoPriv {
                                auth,
                                auth_key: auth_key.clone(),
                            },
                            Some(priv_key) => V3Level::AuthPriv {
                                auth,
                                auth_key: auth_key.clone(),
                                privacy: PrivProtocol::from_str(
                                    self.priv_proto.as_deref().unwrap_or("AES"),
                                )
                                .map_err(|e| cfg(e.to_string()))?,
                                priv_key: priv_key.clone(),
                            },
                        }
                    }
                };
                Ok(SnmpSecurity::V3 {
                    user,
                    level,
                    context: self.context.clone().filter(|c| !c.is_empty()),
                })
            }
            other => Err(cfg(format!("version must be 2c or 3, got {other:?}"))),
        }
    }
}

/// Everything needed to talk SNMP to one device.
#[derive(Debug, Clone)]
pub struct SnmpConfig {
    /// The node name, used in every error.
    pub device: String,
    /// Host name or address of the agent.
    pub host: String,
    pub port: u16,
    pub security: SnmpSecurity,
    /// How long one attempt waits for its response.
    pub timeout: Duration,
    /// Further attempts after the first one times out.
    pub retries: u32,
    /// GETBULK max-repetitions for walks (RFC 3416 §4.2.3).
    pub max_repetitions: u32,
    /// Walk with GETBULK (true) or GETNEXT (false, for agents with broken bulk support).
    pub use_bulk: bool,
}

impl SnmpConfig {
    pub fn new(device: impl Into<String>, host: impl Into<String>, security: SnmpSecurity) -> Self {
        SnmpConfig {
            device: device.into(),
            host: host.into(),
            port: 161,
            security,
            timeout: Duration::from_secs(2),
            retries: 2,
            max_repetitions: 25,
            use_bulk: true,
        }
    }

    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    pub fn with_timeout(mut self, timeout: Duration, retries: u32) -> Self {
        self.timeout = timeout;
        self.retries = retries;
        self
    }

    fn validate(&self) -> Result<(), SnmpError> {
        let cfg = |reason: &str| SnmpError::Config {
            device: self.device.clone(),
            reason: reason.to_owned(),
        };
        if self.timeout.is_zero() {
            return Err(cfg("timeout must be above zero"));
        }
        if self.max_repetitions == 0 {
            return Err(cfg("max_repetitions must be at least 1"));
        }
        if let SnmpSecurity::V3 { level, .. } = &self.security {
            // RFC 3414 §11.2: passwords shorter than 8 characters are not allowed (net-snmp rejects them).
            let short = |s: &Secret| s.expose().len() < 8;
            match level {
                V3Level::NoAuthNoPriv => {}
                V3Level::AuthNoPriv { auth_key, .. } if short(auth_key) => {
                    return Err(cfg(
                        "auth_key must be at least 8 characters (RFC 3414 §11.2)",
                    ));
                }
                V3Level::AuthPriv {
                    auth_key, priv_key, ..
                } if short(auth_key) || short(priv_key) => {
                    return Err(cfg(
                        "auth_key and priv_key must be at least 8 characters (RFC 3414 §11.2)",
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn snmp2_security(&self) -> Option<v3::Security> {
        let SnmpSecurity::V3 {
            user,
            level,
            context,
        } = &self.security
        else {
            return None;
        };
        let mut sec = match level {
            V3Level::NoAuthNoPriv => {
                v3::Security::new(user.as_bytes(), b"").with_auth(v3::Auth::NoAuthNoPriv)
            }
            V3Level::AuthNoPriv { auth, auth_key } => {
                v3::Security::new(user.as_bytes(), auth_key.expose().as_bytes())
                    .with_auth_protocol(auth.to_snmp2())
                    .with_auth(v3::Auth::AuthNoPriv)
            }
            V3Level::AuthPriv {
                auth,
                auth_key,
                privacy,
                priv_key,
            } => {
                let cipher = privacy.to_snmp2();
                let mut sec = v3::Security::new(user.as_bytes(), auth_key.expose().as_bytes())
                    .with_auth_protocol(auth.to_snmp2())
                    .with_auth(v3::Auth::AuthPriv {
                        cipher,
                        privacy_password: priv_key.expose().as_bytes().to_vec(),
                    });
                if cipher.priv_key_needs_extension(&auth.to_snmp2()) {
                    // AES-192/256 with a short digest: the Blumenthal draft's key extension, as net-snmp's
                    // "AES192"/"AES256" (Cisco's "AES192C" uses Reeder).
                    sec = sec.with_key_extension_method(v3::KeyExtension::Blumenthal);
                }
                sec
            }
        };
        if let Some(ctx) = context {
            sec = sec.with_context_name(ctx);
        }
        Some(sec)
    }
}

/// One request kind.
enum Request<'a> {
    Get(&'a [snmp2::Oid<'static>]),
    GetNext(&'a [snmp2::Oid<'static>]),
    GetBulk {
        oids: &'a [snmp2::Oid<'static>],
        non_repeaters: u32,
        max_repetitions: u32,
    },
}

/// An owned response.
struct Response {
    error_status: u32,
    error_index: u32,
    varbinds: Vec<Varbind>,
    /// A varbind had an OID or value we cannot represent.
    malformed: bool,
}

/// How one attempt ended, when it did not succeed.
enum AttemptFailure {
    TimedOut,
    Unreachable,
    Stale,
}

static SESSION_COUNTER: AtomicU32 = AtomicU32::new(0);

/// A request id start that differs between sessions and processes (RFC 3416 §4.1: ids match replies).
fn initial_request_id() -> i32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let n = SESSION_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mixed = nanos ^ std::process::id().rotate_left(13) ^ n.wrapping_mul(0x9e37_79b9);
    // Positive and far from i32::MAX, so the id does not wrap during a session.
    i32::try_from(mixed & 0x3fff_ffff).unwrap_or(1) + 1
}

/// An SNMP session with one device. Not shared between tasks: one request at a time (`&mut self`).
pub struct SnmpClient {
    config: SnmpConfig,
    addr: SocketAddr,
    session: Option<Box<AsyncSession>>,
}

impl std::fmt::Debug for SnmpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnmpClient")
            .field("device", &self.config.device)
            .field("addr", &self.addr)
            .field("connected", &self.session.is_some())
            .finish()
    }
}

impl SnmpClient {
    /// Resolve the agent and open the session; for v3 this runs engine discovery (RFC 3414 §4), so wrong
    /// credentials for an unknown user surface here.
    pub async fn connect(config: SnmpConfig) -> Result<Self, SnmpError> {
        config.validate()?;
        let address = format!("{}:{}", config.host, config.port);
        let lookup = tokio::time::timeout(config.timeout, tokio::net::lookup_host(address.clone()));
        let addr = match lookup.await {
            Err(_) => {
                return Err(SnmpError::Timeout {
                    device: config.device.clone(),
                    op: SnmpOp::Connect,
                    per_attempt: config.timeout,
                    attempts: 1,
                    hint: " (resolving the address)",
                });
            }
            Ok(Err(source)) => {
                return Err(SnmpError::Connect {
                    device: config.device.clone(),
                    address,
                    op: SnmpOp::Connect,
                    source,
                });
            }
            Ok(Ok(mut addrs)) => addrs.next().ok_or_else(|| SnmpError::Connect {
                device: config.device.clone(),
                address: address.clone(),
                op: SnmpOp::Connect,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address found"),
            })?,
        };
        let mut client = SnmpClient {
            config,
            addr,
            session: None,
        };
        client.open_with_retries().await?;
        Ok(client)
    }

    pub fn config(&self) -> &SnmpConfig {
        &self.config
    }

    pub fn device(&self) -> &str {
        &self.config.device
    }

    /// GET of one or more instances. Missing instances come back as noSuchObject/noSuchInstance values.
    pub async fn get(&mut self, oids: &[Oid]) -> Result<Vec<Varbind>, SnmpError> {
        let encoded = self.encode(SnmpOp::Get, oids)?;
        self.request(SnmpOp::Get, &Request::Get(&encoded)).await
    }

    /// GETNEXT: the instance after each of `oids`.
    pub async fn get_next(&mut self, oids: &[Oid]) -> Result<Vec<Varbind>, SnmpError> {
        let encoded = self.encode(SnmpOp::GetNext, oids)?;
        self.request(SnmpOp::GetNext, &Request::GetNext(&encoded))
            .await
    }

    /// GETBULK (RFC 3416 §4.2.3).
    pub async fn get_bulk(
        &mut self,
        oids: &[Oid],
        non_repeaters: u32,
        max_repetitions: u32,
    ) -> Result<Vec<Varbind>, SnmpError> {
        let encoded = self.encode(SnmpOp::GetBulk, oids)?;
        self.request(
            SnmpOp::GetBulk,
            &Request::GetBulk {
                oids: &encoded,
                non_repeaters,
                max_repetitions,
            },
        )
        .await
    }

    /// Every instance under `root`, in OID order, within `limits`.
    pub async fn walk(
        &mut self,
        root: &Oid,
        limits: WalkLimits,
    ) -> Result<Vec<Varbind>, SnmpError> {
        let mut state = WalkState::new(self.config.device.clone(), root.clone(), limits.max_oids);
        let outcome = tokio::time::timeout(limits.max_time, self.walk_steps(&mut state)).await;
        match outcome {
            Ok(Ok(())) => Ok(state.finish()),
            Ok(Err(e @ (SnmpError::NonIncreasing { .. } | SnmpError::WalkLimit { .. }))) => Err(e),
            Ok(Err(e)) => Err(SnmpError::InWalk {
                device: self.config.device.clone(),
                root: root.clone(),
                source: Box::new(e),
            }),
            Err(_) => {
                // A request may be in flight: its late reply must not meet the next request.
                self.session = None;
                Err(SnmpError::WalkLimit {
                    device: self.config.device.clone(),
                    root: root.clone(),
                    limit: WalkLimit::MaxTime(limits.max_time),
                    collected: state.collected(),
                })
            }
        }
    }

    async fn walk_steps(&mut self, state: &mut WalkState) -> Result<(), SnmpError> {
        let mut max_rep = self.config.max_repetitions;
        loop {
            let cursor = [state.cursor().clone()];
            let batch = if self.config.use_bulk {
                match self.get_bulk(&cursor, 0, max_rep).await {
                    // tooBig: the response did not fit the agent's message size; ask for fewer rows.
                    Err(SnmpError::Agent { status: 1, .. }) if max_rep > 1 => {
                        max_rep = (max_rep / 2).max(1);
                        continue;
                    }
                    other => other?,
                }
            } else {
                self.get_next(&cursor).await?
            };
            match state.accept(batch)? {
                WalkStep::Continue(_) => {}
                WalkStep::Done => return Ok(()),
            }
        }
    }

    fn encode(&self, op: SnmpOp, oids: &[Oid]) -> Result<Vec<snmp2::Oid<'static>>, SnmpError> {
        if oids.is_empty() {
            return Err(SnmpError::Config {
                device: self.config.device.clone(),
                reason: format!("{op} needs at least one OID"),
            });
        }
        oids.iter()
            .map(|o| {
                o.to_snmp2().map_err(|e| SnmpError::Config {
                    device: self.config.device.clone(),
                    reason: e.to_string(),
                })
            })
            .collect()
    }

    fn protocol(&self, op: SnmpOp, reason: impl Into<String>) -> SnmpError {
        SnmpError::Protocol {
            device: self.config.device.clone(),
            op,
            reason: reason.into(),
        }
    }

    fn auth_error(&self, op: SnmpOp, reason: impl Into<String>) -> SnmpError {
        SnmpError::Auth {
            device: self.config.device.clone(),
            op,
            user: self.config.security.user().to_owned(),
            reason: reason.into(),
        }
    }

    /// Map an snmp2 error that is final (not a timeout, not stale) to ours.
    fn final_error(&self, op: SnmpOp, e: snmp2::Error) -> SnmpError {
        match e {
            snmp2::Error::AuthFailure(kind) => {
                let hint = match kind {
                    v3::AuthErrorKind::NotAuthenticated => {
                        " (the agent answered with an unauthenticated report: unknown user, wrong auth key or wrong security level)"
                    }
                    v3::AuthErrorKind::SignatureMismatch => " (wrong auth key or protocol)",
                    v3::AuthErrorKind::ReplyNotEncrypted => {
                        " (the agent did not encrypt its reply: wrong privacy key or protocol?)"
                    }
                    _ => "",
                };
                self.auth_error(op, format!("{kind}{hint}"))
            }
            snmp2::Error::Crypto(msg) => self.auth_error(op, format!("decryption failed: {msg}")),
            snmp2::Error::CommunityMismatch => {
                self.protocol(op, "reply carries a different community")
            }
            other => self.protocol(op, other.to_string()),
        }
    }

    /// Open a socket and, for v3, run discovery. Call sites box this future: snmp2's session is large.
    async fn open_session(&self) -> Result<Box<AsyncSession>, snmp2::Error> {
        let req_id = initial_request_id();
        let session = match (&self.config.security, self.config.snmp2_security()) {
            (SnmpSecurity::V2c { community }, _) => {
                AsyncSession::new_v2c(self.addr, community.expose().as_bytes(), req_id).await
            }
            (SnmpSecurity::V3 { .. }, Some(sec)) => {
                AsyncSession::new_v3(self.addr, req_id, sec).await
            }
            (SnmpSecurity::V3 { .. }, None) => return Err(snmp2::Error::UnsupportedVersion),
        };
        let mut session = Box::new(session.map_err(|_| snmp2::Error::Send)?);
        // v3 engine discovery; a no-op for v2c.
        let mut tries = 0;
        loop {
            match session.init().await {
                Ok(()) => break,
                Err(snmp2::Error::AuthUpdated) if tries < 2 => tries += 1,
                Err(e) => return Err(e),
            }
        }
        Ok(session)
    }

    async fn open_with_retries(&mut self) -> Result<(), SnmpError> {
        let op = SnmpOp::Connect;
        let mut last = AttemptFailure::TimedOut;
        for _ in 0..=self.config.retries {
            match tokio::time::timeout(self.config.timeout, Box::pin(self.open_session())).await {
                Ok(Ok(session)) => {
                    self.session = Some(session);
                    return Ok(());
                }
                Ok(Err(snmp2::Error::Receive)) => {
                    last = AttemptFailure::Unreachable;
                    tokio::time::sleep(self.config.timeout.min(Duration::from_millis(200))).await;
                }
                Ok(Err(snmp2::Error::Send)) => {
                    return Err(SnmpError::Connect {
                        device: self.config.device.clone(),
                        address: self.addr.to_string(),
                        op,
                        source: std::io::Error::other("cannot open or send on the UDP socket"),
                    });
                }
                Ok(Err(snmp2::Error::RequestIdMismatch)) => last = AttemptFailure::Stale,
                Ok(Err(e)) => return Err(self.final_error(op, e)),
                Err(_) => last = AttemptFailure::TimedOut,
            }
        }
        Err(self.exhausted(op, last))
    }

    fn exhausted(&self, op: SnmpOp, last: AttemptFailure) -> SnmpError {
        let attempts = self.config.retries + 1;
        match last {
            AttemptFailure::Unreachable => SnmpError::Unreachable {
                device: self.config.device.clone(),
                op,
                address: self.addr.to_string(),
                attempts,
            },
            AttemptFailure::TimedOut | AttemptFailure::Stale => SnmpError::Timeout {
                device: self.config.device.clone(),
                op,
                per_attempt: self.config.timeout,
                attempts,
                hint: match self.config.security {
                    SnmpSecurity::V2c { .. } => " (wrong community? v2c agents drop such requests)",
                    SnmpSecurity::V3 { .. } => "",
                },
            },
        }
    }

    async fn request(&mut self, op: SnmpOp, req: &Request<'_>) -> Result<Vec<Varbind>, SnmpError> {
        let mut last = AttemptFailure::TimedOut;
        let mut attempt = 0;
        // Discovery updates (engine boots/time re-synchronised, RFC 3414 §3.2 step 7) repeat the request
        // without counting as a failed attempt, a bounded number of times.
        let mut resyncs = 0;
        while attempt <= self.config.retries {
            if self.session.is_none() {
                match tokio::time::timeout(self.config.timeout, Box::pin(self.open_session())).await
                {
                    Ok(Ok(s)) => self.session = Some(s),
                    Ok(Err(snmp2::Error::Receive)) => {
                        last = AttemptFailure::Unreachable;
                        attempt += 1;
                        tokio::time::sleep(self.config.timeout.min(Duration::from_millis(200)))
                            .await;
                        continue;
                    }
                    Ok(Err(snmp2::Error::RequestIdMismatch)) | Err(_) => {
                        last = AttemptFailure::TimedOut;
                        attempt += 1;
                        continue;
                    }
                    Ok(Err(e)) => return Err(self.final_error(SnmpOp::Connect, e)),
                }
            }
            let Some(session) = self.session.as_mut() else {
                continue;
            };
            let outcome = tokio::time::timeout(self.config.timeout, exchange(session, req)).await;
            match outcome {
                Ok(Ok(resp)) => {
                    if resp.malformed {
                        return Err(self.protocol(
                            op,
                            "a varbind has an OID or value type SNMP does not allow in a response",
                        ));
                    }
                    if resp.error_status != 0 {
                        return Err(SnmpError::Agent {
                            device: self.config.device.clone(),
                            op,
                            status: resp.error_status,
                            index: resp.error_index,
                        });
                    }
                    return Ok(resp.varbinds);
                }
                Ok(Err(snmp2::Error::AuthUpdated)) if resyncs < 3 => resyncs += 1,
                Ok(Err(snmp2::Error::RequestIdMismatch)) => {
                    self.session = None;
                    last = AttemptFailure::Stale;
                    attempt += 1;
                }
                Ok(Err(snmp2::Error::Receive)) => {
                    self.session = None;
                    last = AttemptFailure::Unreachable;
                    attempt += 1;
                    tokio::time::sleep(self.config.timeout.min(Duration::from_millis(200))).await;
                }
                Ok(Err(e)) => {
                    self.session = None;
                    return Err(self.final_error(op, e));
                }
                Err(_) => {
                    self.session = None;
                    last = AttemptFailure::TimedOut;
                    attempt += 1;
                }
            }
        }
        Err(self.exhausted(op, last))
    }
}

/// One request/response on an open session, converted to owned data before the buffer is reused.
async fn exchange(session: &mut AsyncSession, req: &Request<'_>) -> Result<Response, snmp2::Error> {
    let pdu = match req {
        Request::Get(oids) => {
            let refs: Vec<&snmp2::Oid<'_>> = oids.iter().collect();
            session.get_many(&refs).await?
        }
        Request::GetNext(oids) => {
            if let [one] = oids {
                session.getnext(one).await?
            } else {
                // snmp2 has no multi-OID GETNEXT; a GETBULK with every OID a non-repeater is the same
                // request (RFC 3416 §4.2.3).
                let refs: Vec<&snmp2::Oid<'_>> = oids.iter().collect();
                let n = u32::try_from(refs.len()).unwrap_or(u32::MAX);
                session.getbulk(&refs, n, 0).await?
            }
        }
        Request::GetBulk {
            oids,
            non_repeaters,
            max_repetitions,
        } => {
            let refs: Vec<&snmp2::Oid<'_>> = oids.iter().collect();
            session
                .getbulk(&refs, *non_repeaters, *max_repetitions)
                .await?
        }
    };
    let mut varbinds = Vec::new();
    let mut malformed = false;
    for (oid, value) in pdu.varbinds.clone() {
        match (Oid::from_snmp2(&oid), SnmpValue::from_snmp2(&value)) {
            (Some(oid), Some(value)) => varbinds.push(Varbind { oid, value }),
            _ => malformed = true,
        }
    }
    Ok(Response {
        error_status: pdu.error_status,
        error_index: pdu.error_index,
        varbinds,
        malformed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snmp_protocol_names_parse() {
        assert_eq!("SHA".parse::<AuthProtocol>().unwrap(), AuthProtocol::Sha1);
        assert_eq!(
            "sha-256".parse::<AuthProtocol>().unwrap(),
            AuthProtocol::Sha256
        );
        assert_eq!("MD5".parse::<AuthProtocol>().unwrap(), AuthProtocol::Md5);
        assert!("sha3".parse::<AuthProtocol>().is_err());
        assert_eq!("AES".parse::<PrivProtocol>().unwrap(), PrivProtocol::Aes128);
        assert_eq!(
            "aes-256".parse::<PrivProtocol>().unwrap(),
            PrivProtocol::Aes256
        );
        assert!("3des".parse::<PrivProtocol>().is_err());
    }

    #[test]
    fn snmp_extras_validate() {
        let e: SnmpExtras =
            serde_json::from_value(json!({"version": "2c", "community": "public"})).unwrap();
        assert!(matches!(
            e.to_security("sw1").unwrap(),
            SnmpSecurity::V2c { .. }
        ));
        let e: SnmpExtras = serde_json::from_value(json!({
            "version": 3, "user": "u", "auth_proto": "SHA", "auth_key": "authpass1",
            "priv_proto": "AES", "priv_key": "privpass1", "context": "vlan-10"
        }))
        .unwrap();
        match e.to_security("sw1").unwrap() {
            SnmpSecurity::V3 {
                user,
                level: V3Level::AuthPriv { auth, privacy, .. },
                context,
            } => {
                assert_eq!(user, "u");
                assert_eq!(auth, AuthProtocol::Sha1);
                assert_eq!(privacy, PrivProtocol::Aes128);
                assert_eq!(context.as_deref(), Some("vlan-10"));
            }
            other => panic!("unexpected {other:?}"),
        }
        let e: SnmpExtras =
            serde_json::from_value(json!({"version": "3", "priv_key": "x"})).unwrap();
        let err = e.to_security("sw9").unwrap_err().to_string();
        assert!(err.contains("sw9") && err.contains("user"), "{err}");
        let e: SnmpExtras =
            serde_json::from_value(json!({"version": "1", "community": "c"})).unwrap();
        assert!(e.to_security("sw1").is_err());
        let e: SnmpExtras = serde_json::from_value(json!({"version": "2c"})).unwrap();
        assert!(
            e.to_security("sw1")
                .unwrap_err()
                .to_string()
                .contains("community")
        );
    }

    #[test]
    fn snmp_config_debug_redacts_secrets() {
        let cfg = SnmpConfig::new(
            "sw1",
            "127.0.0.1",
            SnmpSecurity::V3 {
                user: "u".into(),
                level: V3Level::AuthPriv {
                    auth: AuthProtocol::Sha1,
                    auth_key: Secret::new("topsecret-auth"),
                    privacy: PrivProtocol::Aes128,
                    priv_key: Secret::new("topsecret-priv"),
                },
                context: None,
            },
        );
        let dbg = format!("{cfg:?}");
        assert!(!dbg.contains("topsecret"), "{dbg}");
    }

    #[test]
    fn snmp_config_rejects_short_v3_keys() {
        let cfg = SnmpConfig::new(
            "sw1",
            "127.0.0.1",
            SnmpSecurity::V3 {
                user: "u".into(),
                level: V3Level::AuthNoPriv {
                    auth: AuthProtocol::Sha1,
                    auth_key: Secret::new("short"),
                },
                context: None,
            },
        );
        let err = cfg.validate().unwrap_err().to_string();
        assert!(err.contains("8 characters"), "{err}");
    }

    #[test]
    fn snmp_request_ids_differ() {
        let a = initial_request_id();
        let b = initial_request_id();
        assert_ne!(a, b);
        assert!(a > 0 && b > 0);
    }

    /// A silent agent: every attempt times out, the error names device, operation and limit.
    #[tokio::test]
    async fn snmp_timeout_names_device_op_and_limit() {
        let agent = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let port = agent.local_addr().unwrap().port();
        let cfg = SnmpConfig::new(
            "quiet-sw",
            "127.0.0.1",
            SnmpSecurity::V2c {
                community: Secret::new("public"),
            },
        )
        .with_port(port)
        .with_timeout(Duration::from_millis(100), 1);
        // v2c opens without a round trip, so connect succeeds and the GET times out.
        let mut client = SnmpClient::connect(cfg).await.unwrap();
        let err = client
            .get(&["1.3.6.1.2.1.1.5.0".parse().unwrap()])
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("quiet-sw")
                && msg.contains("get")
                && msg.contains("100ms")
                && msg.contains("2 attempt"),
            "{msg}"
        );
        drop(agent);
    }

    /// A closed port: the connected UDP socket sees ICMP port unreachable.
    #[tokio::test]
    async fn snmp_closed_port_is_unreachable() {
        let port = {
            let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            s.local_addr().unwrap().port()
        };
        let cfg = SnmpConfig::new(
            "gone-sw",
            "127.0.0.1",
            SnmpSecurity::V2c {
                community: Secret::new("public"),
            },
        )
        .with_port(port)
        .with_timeout(Duration::from_millis(300), 1);
        let mut client = SnmpClient::connect(cfg).await.unwrap();
        let err = client
            .get(&["1.3.6.1.2.1.1.5.0".parse().unwrap()])
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                SnmpError::Unreachable { .. } | SnmpError::Timeout { .. }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("gone-sw"));
    }
}
