//! SSH transport (russh): exec channels, subsystems (NETCONF) and interactive CLI shells.
//!
//! ```text
//!   SshTarget ──connect()──▶ SshSession ──exec(cmd)────────▶ ExecOutput { stdout, stderr, exit status }
//!   (host, auth, known        │            ──subsystem(name)──▶ SubsystemStream (AsyncRead + AsyncWrite)
//!    hosts, timeouts)         │            ──shell(platform)──▶ CliShell (prompts, paging off, enable,
//!                             │                                  config mode, failure strings)
//!                             └─ one russh connection task; every channel is a request on it
//! ```
//!
//! * Host keys are checked against an OpenSSH known-hosts file ([`known_hosts`]); an unknown key is
//!   refused unless `accept_new` (then it is appended), a changed key is always refused.
//! * Three timeouts ([`Timeouts`]): `connect` covers TCP + key exchange + authentication, `idle` ends a
//!   session with no traffic (russh's inactivity timer), `operation` bounds one exec / subsystem open /
//!   CLI command. Timeout errors name the operation, the device and the limit.
//! * Algorithms: modern first (curve25519, chacha20/AES-GCM/AES-CTR, SHA-2 MACs), then what older
//!   network gear needs (ECDH, diffie-hellman-group14-sha1, AES-CBC, hmac-sha1): fake-switches (Twisted
//!   conch) offers AES-CTR/CBC only, and many IOS images only group14-sha1.
//! * Secrets ([`Secret`]) are exposed only when handed to russh; errors and logs never contain them.

pub mod error;
pub mod known_hosts;
pub mod platform;
pub mod shell;

use std::borrow::Cow;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use netgw_models::secret::Secret;
use russh::client::{self, AuthResult, DisconnectReason, Handle};
use russh::keys::{Algorithm, PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate};
use russh::{ChannelMsg, Disconnect, Preferred, Sig, cipher, kex, mac};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, timeout, timeout_at};
use tracing::{debug, info, warn};

pub use error::{HostKeyChange, SshError};
pub use platform::{CliPlatform, PlatformKind};
pub use shell::{CliMode, CliShell};

use crate::Timeouts;
use known_hosts::{KnownHosts, Verdict};

/// Output of an exec channel above this size is refused (a runaway device must not exhaust memory).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct SshTarget {
    /// The node name, used in every error and log line.
    pub device: String,
    pub host: String,
    pub port: u16,
    pub username: String,
    pub auth: SshAuth,
    pub host_keys: HostKeyPolicy,
    pub timeouts: Timeouts,
}

/// How to authenticate. `Debug` shows no secret (they are [`Secret`]s).
#[derive(Debug, Clone)]
pub enum SshAuth {
    Password(Secret),
    /// An OpenSSH or PEM private key file (ed25519, RSA, ECDSA), optionally encrypted.
    PublicKey {
        path: PathBuf,
        passphrase: Option<Secret>,
    },
}

/// Host-key verification policy.
#[derive(Debug, Clone)]
pub struct HostKeyPolicy {
    /// OpenSSH-format known-hosts file. A missing file is an empty one.
    pub known_hosts: PathBuf,
    /// Accept and record a key for a host that has none recorded. Never accepts a changed key.
    pub accept_new: bool,
}

/// What an exec channel returned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecOutput {
    pub stdout: String,
    pub stderr: String,
    /// The exit status, when the server sent one.
    pub exit_status: Option<u32>,
    /// The signal name, when the command was killed by a signal.
    pub exit_signal: Option<String>,
}

impl ExecOutput {
    pub fn success(&self) -> bool {
        self.exit_status == Some(0)
    }
}

/// Why the connection task ended, recorded by the handler so later operations can say why they failed.
#[derive(Debug, Clone)]
enum Closed {
    Idle,
    Peer(String),
    Error(String),
}

type Shared<T> = Arc<Mutex<Option<T>>>;

fn put<T>(slot: &Shared<T>, value: T) {
    if let Ok(mut guard) = slot.lock() {
        *guard = Some(value);
    }
}

fn take<T>(slot: &Shared<T>) -> Option<T> {
    slot.lock().ok().and_then(|mut g| g.take())
}

fn peek<T: Clone>(slot: &Shared<T>) -> Option<T> {
    slot.lock().ok().and_then(|g| g.clone())
}

/// Errors from the russh handler: protocol errors, or our host-key verdict.
#[derive(Debug)]
enum HandlerError {
    Russh(russh::Error),
    HostKey(Box<SshError>),
}

impl From<russh::Error> for HandlerError {
    fn from(e: russh::Error) -> Self {
        HandlerError::Russh(e)
    }
}

struct ClientHandler {
    device: String,
    host: String,
    port: u16,
    known: KnownHosts,
    accept_new: bool,
    /// A new key accepted under `accept_new`, to be appended once the key exchange completed.
    accepted: Shared<PublicKey>,
    closed: Shared<Closed>,
}

impl client::Handler for ClientHandler {
    type Error = HandlerError;

    async fn check_server_key(
        &mut self,
        server_key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let key = match server_key {
            PublicKeyOrCertificate::PublicKey { key, .. } => key,
            PublicKeyOrCertificate::Certificate(_) => {
                return Err(HandlerError::HostKey(Box::new(SshError::HostCertificate {
                    device: self.device.clone(),
                    host: self.host.clone(),
                    port: self.port,
                })));
            }
        };
        let presented = known_hosts::fingerprint(key);
        let refuse = |e: SshError| Err(HandlerError::HostKey(Box::new(e)));
        match self.known.check(&self.host, self.port, key) {
            Verdict::Trusted => {
                debug!(device = %self.device, key = %presented, "host key matches known_hosts");
                Ok(true)
            }
            Verdict::Unknown if self.accept_new => {
                info!(device = %self.device, host = %self.host, port = self.port, key = %presented,
                    "accepting new host key (accept_new)");
                put(&self.accepted, key.clone());
                Ok(true)
            }
            Verdict::Unknown => refuse(SshError::HostKeyUnknown {
                device: self.device.clone(),
                host: self.host.clone(),
                port: self.port,
                fingerprint: presented,
                known_hosts: self.known.path().to_owned(),
            }),
            Verdict::Changed { line, expected } => {
                refuse(SshError::HostKeyChanged(Box::new(HostKeyChange {
                    device: self.device.clone(),
                    host: self.host.clone(),
                    port: self.port,
                    expected: known_hosts::fingerprint(&expected),
                    presented,
                    known_hosts: self.known.path().to_owned(),
                    line,
                })))
            }
            Verdict::Revoked => refuse(SshError::HostKeyRevoked {
                device: self.device.clone(),
                host: self.host.clone(),
                port: self.port,
                fingerprint: presented,
                known_hosts: self.known.path().to_owned(),
            }),
        }
    }

    async fn disconnected(
        &mut self,
        reason: DisconnectReason<Self::Error>,
    ) -> Result<(), Self::Error> {
        match reason {
            DisconnectReason::ReceivedDisconnect(info) => {
                put(
                    &self.closed,
                    Closed::Peer(format!("{:?}: {}", info.reason_code, info.message)),
                );
                Ok(())
            }
            DisconnectReason::Error(HandlerError::Russh(russh::Error::InactivityTimeout)) => {
                put(&self.closed, Closed::Idle);
                Err(HandlerError::Russh(russh::Error::InactivityTimeout))
            }
            DisconnectReason::Error(e) => {
                let text = match &e {
                    HandlerError::Russh(r) => r.to_string(),
                    HandlerError::HostKey(h) => h.to_string(),
                };
                put(&self.closed, Closed::Error(text));
                Err(e)
            }
        }
    }
}

// Algorithm preferences: russh's defaults first, then legacy algorithms network devices still need.
const KEX_ORDER: &[kex::Name] = &[
    kex::MLKEM768X25519_SHA256,
    kex::CURVE25519,
    kex::CURVE25519_PRE_RFC_8731,
    kex::ECDH_SHA2_NISTP256,
    kex::ECDH_SHA2_NISTP384,
    kex::ECDH_SHA2_NISTP521,
    kex::DH_GEX_SHA256,
    kex::DH_G18_SHA512,
    kex::DH_G17_SHA512,
    kex::DH_G16_SHA512,
    kex::DH_G15_SHA512,
    kex::DH_G14_SHA256,
    // Legacy: IOS 12.x/15.x, Twisted conch.
    kex::DH_G14_SHA1,
    kex::DH_GEX_SHA1,
    kex::EXTENSION_SUPPORT_AS_CLIENT,
    kex::EXTENSION_OPENSSH_STRICT_KEX_AS_CLIENT,
];

const CIPHER_ORDER: &[cipher::Name] = &[
    cipher::CHACHA20_POLY1305,
    cipher::AES_256_GCM,
    cipher::AES_128_GCM,
    cipher::AES_256_CTR,
    cipher::AES_192_CTR,
    cipher::AES_128_CTR,
    // Legacy: older IOS/NX-OS and Twisted conch builds.
    cipher::AES_256_CBC,
    cipher::AES_192_CBC,
    cipher::AES_128_CBC,
];

const MAC_ORDER: &[mac::Name] = &[
    mac::HMAC_SHA512_ETM,
    mac::HMAC_SHA256_ETM,
    mac::HMAC_SHA512,
    mac::HMAC_SHA256,
    // Legacy.
    mac::HMAC_SHA1_ETM,
    mac::HMAC_SHA1,
];

/// russh's preference lists with legacy fallbacks appended, host-key algorithms recorded for this host
/// moved first (so a multi-key server shows the key we know, as OpenSSH does).
fn preferred(recorded: &[Algorithm]) -> Preferred {
    let mut keys: Vec<Algorithm> = recorded.to_vec();
    for a in Preferred::DEFAULT.key.iter() {
        if !keys.contains(a) {
            keys.push(a.clone());
        }
    }
    Preferred {
        kex: Cow::Borrowed(KEX_ORDER),
        key: Cow::Owned(keys),
        cipher: Cow::Borrowed(CIPHER_ORDER),
        mac: Cow::Borrowed(MAC_ORDER),
        ..Preferred::DEFAULT
    }
}

/// An authenticated SSH connection to one device. Channels (exec, subsystem, shell) are opened on it;
/// several may be open at once.
pub struct SshSession {
    device: String,
    handle: Handle<ClientHandler>,
    timeouts: Timeouts,
    closed: Shared<Closed>,
}

impl std::fmt::Debug for SshSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshSession")
            .field("device", &self.device)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

impl SshSession {
    /// Connect, verify the host key, authenticate. The whole sequence is bounded by `timeouts.connect`.
    pub async fn connect(target: &SshTarget) -> Result<SshSession, SshError> {
        let limit = target.timeouts.connect;
        match timeout(limit, Self::connect_inner(target)).await {
            Ok(r) => r,
            Err(_) => Err(SshError::Timeout {
                device: target.device.clone(),
                operation: format!(
                    "connect to {}:{} (TCP, key exchange, authentication)",
                    target.host, target.port
                ),
                limit,
            }),
        }
    }

    async fn connect_inner(target: &SshTarget) -> Result<SshSession, SshError> {
        let device = target.device.clone();
        let known = KnownHosts::load(&target.host_keys.known_hosts).await?;
        let config = client::Config {
            inactivity_timeout: Some(target.timeouts.idle),
            preferred: preferred(&known.recorded_algorithms(&target.host, target.port)),
            ..Default::default()
        };
        let accepted: Shared<PublicKey> = Arc::default();
        let closed: Shared<Closed> = Arc::default();
        let handler = ClientHandler {
            device: device.clone(),
            host: target.host.clone(),
            port: target.port,
            known,
            accept_new: target.host_keys.accept_new,
            accepted: accepted.clone(),
            closed: closed.clone(),
        };

        // Load (and decrypt: bcrypt KDF is CPU-heavy) the private key off the runtime, before dialling.
        let key = match &target.auth {
            SshAuth::PublicKey { path, passphrase } => {
                Some(load_private_key(&device, path, passphrase.clone()).await?)
            }
            SshAuth::Password(_) => None,
        };

        let socket = dial(&target.host, target.port)
            .await
            .map_err(|source| SshError::Connect {
                device: device.clone(),
                host: target.host.clone(),
                port: target.port,
                source,
            })?;
        let mut handle = client::connect_stream(Arc::new(config), socket, handler)
            .await
            .map_err(|e| match e {
                HandlerError::HostKey(e) => *e,
                HandlerError::Russh(source) => match take(&closed) {
                    Some(Closed::Peer(reason)) => SshError::Disconnected {
                        device: device.clone(),
                        operation: "key exchange".into(),
                        reason: Some(reason),
                    },
                    _ => SshError::Protocol {
                        device: device.clone(),
                        operation: "key exchange".into(),
                        source: Box::new(source),
                    },
                },
            })?;

        if let Some(new_key) = take(&accepted) {
            known_hosts::append(
                &target.host_keys.known_hosts,
                &target.host,
                target.port,
                &new_key,
            )
            .await?;
            warn!(device = %device, host = %target.host, port = target.port,
                key = %known_hosts::fingerprint(&new_key), known_hosts = %target.host_keys.known_hosts.display(),
                "recorded new host key");
        }

        let method = authenticate(&mut handle, target, key, &device).await?;
        info!(device = %device, host = %target.host, port = target.port, user = %target.username,
            method, "ssh session established");
        Ok(SshSession {
            device,
            handle,
            timeouts: target.timeouts,
            closed,
        })
    }

    /// The device name this session was opened for.
    pub fn device(&self) -> &str {
        &self.device
    }

    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// Run `command` on an exec channel; bounded by `timeouts.operation`. A non-zero exit status is
    /// not an error (see [`ExecOutput::success`]). On timeout the remote command is signalled and the
    /// channel closed.
    pub async fn exec(&self, command: &str) -> Result<ExecOutput, SshError> {
        let operation = format!("exec `{}`", abbreviate(command));
        let limit = self.timeouts.operation;
        let deadline = Instant::now() + limit;
        let mut channel = self.open_channel(&operation, deadline).await?;
        let run = async {
            channel
                .exec(true, command)
                .await
                .map_err(|e| self.russh_error(&operation, e))?;
            let mut out = ExecOutput::default();
            let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
            while let Some(msg) = channel.wait().await {
                match msg {
                    ChannelMsg::Data { data } => stdout.extend_from_slice(&data),
                    ChannelMsg::ExtendedData { data, ext: 1 } => stderr.extend_from_slice(&data),
                    ChannelMsg::ExitStatus { exit_status } => out.exit_status = Some(exit_status),
                    ChannelMsg::ExitSignal { signal_name, .. } => {
                        out.exit_signal = Some(format!("{signal_name:?}"))
                    }
                    ChannelMsg::Failure => {
                        return Err(SshError::ChannelRefused {
                            device: self.device.clone(),
                            request: operation.clone(),
                        });
                    }
                    ChannelMsg::Close => break,
                    _ => {}
                }
                if stdout.len() + stderr.len() > MAX_OUTPUT_BYTES {
                    return Err(self.too_large(&operation));
                }
            }
            out.stdout = String::from_utf8_lossy(&stdout).into_owned();
            out.stderr = String::from_utf8_lossy(&stderr).into_owned();
            Ok(out)
        };
        match timeout_at(deadline, run).await {
            Ok(r) => r,
            Err(_) => {
                // Best effort: stop the remote command, then close the channel.
                let _ = timeout(Duration::from_secs(1), async {
                    let _ = channel.signal(Sig::KILL).await;
                    let _ = channel.close().await;
                })
                .await;
                Err(SshError::Timeout {
                    device: self.device.clone(),
                    operation,
                    limit,
                })
            }
        }
    }

    /// Open a subsystem channel (RFC 4254 §6.5), e.g. `netconf` (RFC 6242 §3), and return it as a byte
    /// stream. Opening is bounded by `timeouts.operation`; reads and writes on the stream are not (the
    /// caller bounds its RPCs).
    pub async fn subsystem(&self, name: &str) -> Result<SubsystemStream, SshError> {
        let operation = format!("subsystem `{name}`");
        let limit = self.timeouts.operation;
        let deadline = Instant::now() + limit;
        let mut channel = self.open_channel(&operation, deadline).await?;
        let confirm = async {
            channel
                .request_subsystem(true, name)
                .await
                .map_err(|e| self.russh_error(&operation, e))?;
            let mut early = Vec::new();
            loop {
                match channel.wait().await {
                    Some(ChannelMsg::Success) => return Ok(early),
                    Some(ChannelMsg::Failure) => {
                        return Err(SshError::ChannelRefused {
                            device: self.device.clone(),
                            request: operation.clone(),
                        });
                    }
                    // A server that starts talking before confirming: keep the bytes for the reader.
                    Some(ChannelMsg::Data { data }) => {
                        early.extend_from_slice(&data);
                        if early.len() > MAX_OUTPUT_BYTES {
                            return Err(self.too_large(&operation));
                        }
                    }
                    Some(ChannelMsg::Eof | ChannelMsg::Close) | None => {
                        return Err(self.disconnected(&operation));
                    }
                    Some(_) => {}
                }
            }
        };
        let early = match timeout_at(deadline, confirm).await {
            Ok(r) => r?,
            Err(_) => {
                let _ = timeout(Duration::from_secs(1), channel.close()).await;
                return Err(SshError::Timeout {
                    device: self.device.clone(),
                    operation,
                    limit,
                });
            }
        };
        debug!(device = %self.device, subsystem = name, "subsystem channel open");
        Ok(SubsystemStream {
            pending: Bytes::from(early),
            inner: channel.into_stream(),
        })
    }

    /// Open an interactive shell for a network CLI: PTY, login prompt; the on-open commands (paging
    /// off) go ahead of the first command, in its write.
    pub async fn shell(&self, platform: &CliPlatform) -> Result<CliShell, SshError> {
        CliShell::open(self, platform).await
    }

    /// Disconnect politely and wait (briefly) for the connection task to finish.
    pub async fn close(mut self) -> Result<(), SshError> {
        if self.handle.is_closed() {
            return Ok(());
        }
        self.handle
            .disconnect(Disconnect::ByApplication, "bye", "en")
            .await
            .map_err(|e| self.russh_error("disconnect", e))?;
        // The task ends once the disconnect is flushed; do not wait forever on a stuck peer.
        let _ = timeout(Duration::from_secs(2), &mut self.handle).await;
        Ok(())
    }

    /// Is the underlying connection gone (peer disconnect, idle timeout, error)?
    pub fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    pub(crate) async fn open_channel(
        &self,
        operation: &str,
        deadline: Instant,
    ) -> Result<russh::Channel<client::Msg>, SshError> {
        match timeout_at(deadline, self.handle.channel_open_session()).await {
            Ok(Ok(ch)) => Ok(ch),
            Ok(Err(e)) => Err(self.russh_error(operation, e)),
            Err(_) => Err(SshError::Timeout {
                device: self.device.clone(),
                operation: format!("{operation} (opening channel)"),
                limit: self.timeouts.operation,
            }),
        }
    }

    /// Map a russh error, preferring the recorded reason the connection ended.
    pub(crate) fn russh_error(&self, operation: &str, e: russh::Error) -> SshError {
        if self.handle.is_closed()
            || matches!(
                e,
                russh::Error::SendError | russh::Error::Disconnect | russh::Error::HUP
            )
        {
            return self.disconnected(operation);
        }
        SshError::Protocol {
            device: self.device.clone(),
            operation: operation.to_owned(),
            source: Box::new(e),
        }
    }

    pub(crate) fn disconnected(&self, operation: &str) -> SshError {
        match peek(&self.closed) {
            Some(Closed::Idle) => SshError::Timeout {
                device: self.device.clone(),
                operation: format!("idle session (no traffic) before {operation}"),
                limit: self.timeouts.idle,
            },
            Some(Closed::Peer(reason)) | Some(Closed::Error(reason)) => SshError::Disconnected {
                device: self.device.clone(),
                operation: operation.to_owned(),
                reason: Some(reason),
            },
            None => SshError::Disconnected {
                device: self.device.clone(),
                operation: operation.to_owned(),
                reason: None,
            },
        }
    }

    fn too_large(&self, operation: &str) -> SshError {
        SshError::Disconnected {
            device: self.device.clone(),
            operation: operation.to_owned(),
            reason: Some(format!(
                "output exceeds {MAX_OUTPUT_BYTES} bytes; channel abandoned"
            )),
        }
    }
}

/// The TCP connection of a session, with Nagle's algorithm off. russh's `Config::nodelay` is applied
/// only by `client::connect`, which dials for itself; a session dialled here (for its errors) sets it
/// here. With Nagle on, a small packet written while the previous one is unacknowledged (the key
/// exchange's `NEWKEYS` and service request, a shell's requests) waits for the device's delayed ACK:
/// 40 ms on Linux, up to 200 ms on IOS, on each exchange it hits. Measured under 50 ms of device
/// latency, 25 IOS sessions at once, the `connect` step took 127 ms a device with Nagle on (two round
/// trips: 100) and 106 ms off (docs/bench.md, "Under device latency").
async fn dial(host: &str, port: u16) -> std::io::Result<tokio::net::TcpStream> {
    let socket = tokio::net::TcpStream::connect((host, port)).await?;
    socket.set_nodelay(true)?;
    Ok(socket)
}

/// Password or public-key authentication (RFC 4252) on a fresh connection; the method used.
async fn authenticate(
    handle: &mut Handle<ClientHandler>,
    target: &SshTarget,
    key: Option<russh::keys::PrivateKey>,
    device: &str,
) -> Result<&'static str, SshError> {
    let device = device.to_owned();
    let proto = |operation: &str| {
        let device = device.clone();
        let operation = operation.to_owned();
        // A connection lost while authenticating surfaces as russh's channel send error
        // (found by tests/it/faults.rs): that is a closed session, not a protocol fault.
        move |source| match source {
            russh::Error::SendError | russh::Error::Disconnect | russh::Error::HUP => {
                SshError::Disconnected {
                    device,
                    operation,
                    reason: Some(format!("the connection was lost ({source})")),
                }
            }
            source => SshError::Protocol {
                device,
                operation,
                source: Box::new(source),
            },
        }
    };
    let (method, result) = match (&target.auth, key) {
        (SshAuth::Password(password), _) => (
            "password",
            handle
                .authenticate_password(target.username.clone(), password.expose())
                .await
                .map_err(proto("password authentication"))?,
        ),
        (SshAuth::PublicKey { .. }, Some(key)) => {
            // RSA keys sign with SHA-2 when the server says it can (RFC 8332 via RFC 8308
            // server-sig-algs); otherwise with the SHA-1 `ssh-rsa` older servers expect.
            let hash = if key.algorithm().is_rsa() {
                handle
                    .best_supported_rsa_hash()
                    .await
                    .map_err(proto("public key authentication"))?
                    .flatten()
            } else {
                None
            };
            (
                "publickey",
                handle
                    .authenticate_publickey(
                        target.username.clone(),
                        PrivateKeyWithHashAlg::new(Arc::new(key), hash),
                    )
                    .await
                    .map_err(proto("public key authentication"))?,
            )
        }
        (SshAuth::PublicKey { path, .. }, None) => {
            return Err(SshError::PrivateKey {
                device,
                path: path.clone(),
                reason: "not loaded".into(),
            });
        }
    };
    match result {
        AuthResult::Success => {}
        // russh reports a connection lost during authentication as a failure with no methods
        // left: that is a reset, not refused credentials (found by tests/it/faults.rs).
        AuthResult::Failure {
            remaining_methods, ..
        } if remaining_methods.iter().next().is_none() && handle.is_closed() => {
            return Err(SshError::Disconnected {
                device,
                operation: format!("{method} authentication"),
                reason: Some("the connection was closed before the server answered".into()),
            });
        }
        AuthResult::Failure {
            remaining_methods, ..
        } => {
            let remaining: Vec<&str> = remaining_methods.iter().map(<&str>::from).collect();
            return Err(SshError::AuthRejected {
                device,
                username: target.username.clone(),
                method,
                remaining: remaining.join(","),
            });
        }
    }
    Ok(method)
}

async fn load_private_key(
    device: &str,
    path: &std::path::Path,
    passphrase: Option<Secret>,
) -> Result<russh::keys::PrivateKey, SshError> {
    let p = path.to_owned();
    let loaded = tokio::task::spawn_blocking(move || {
        russh::keys::load_secret_key(&p, passphrase.as_ref().map(Secret::expose))
    })
    .await;
    let err = |reason: String| SshError::PrivateKey {
        device: device.to_owned(),
        path: path.to_owned(),
        reason,
    };
    match loaded {
        Ok(Ok(key)) => Ok(key),
        Ok(Err(russh::keys::Error::KeyIsEncrypted)) => Err(err(
            "the key is encrypted: a passphrase is needed (or it is wrong)".into(),
        )),
        // russh's key errors describe the format problem, never the passphrase.
        Ok(Err(e)) => Err(err(e.to_string())),
        Err(join) => Err(err(format!("loading task failed: {join}"))),
    }
}

/// Commands appear in errors and logs; keep them short and on one line.
pub(crate) fn abbreviate(command: &str) -> String {
    let one_line: String = command
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = one_line.trim();
    if trimmed.chars().count() > 80 {
        let head: String = trimmed.chars().take(77).collect();
        format!("{head}...")
    } else {
        trimmed.to_owned()
    }
}

/// A subsystem channel as a byte stream (`AsyncRead + AsyncWrite + Unpin + Send + 'static`). Dropping
/// it closes the channel. `shutdown()` sends EOF.
pub struct SubsystemStream {
    /// Bytes the server sent before confirming the request.
    pending: Bytes,
    inner: russh::ChannelStream<client::Msg>,
}

impl std::fmt::Debug for SubsystemStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubsystemStream").finish_non_exhaustive()
    }
}

impl AsyncRead for SubsystemStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if !self.pending.is_empty() {
            let n = self.pending.len().min(buf.remaining());
            let chunk = self.pending.split_to(n);
            buf.put_slice(&chunk);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for SubsystemStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use russh::keys::HashAlg;

    fn assert_stream<T: AsyncRead + AsyncWrite + Unpin + Send + 'static>() {}

    #[test]
    fn subsystem_stream_is_a_byte_stream() {
        assert_stream::<SubsystemStream>();
    }

    #[tokio::test]
    async fn a_session_is_dialled_with_nagle_off() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let socket = dial("127.0.0.1", port).await.unwrap();
        assert!(socket.nodelay().unwrap(), "TCP_NODELAY is not set");
    }

    #[test]
    fn preferences_keep_modern_first_and_legacy_last() {
        let p = preferred(&[]);
        assert_eq!(p.kex.first(), Some(&kex::MLKEM768X25519_SHA256));
        assert!(p.kex.contains(&kex::DH_G14_SHA1));
        assert_eq!(p.cipher.first(), Some(&cipher::CHACHA20_POLY1305));
        assert_eq!(p.cipher.last(), Some(&cipher::AES_128_CBC));
        assert_eq!(p.key.first(), Some(&Algorithm::Ed25519));
        let rsa_first = preferred(&[Algorithm::Rsa {
            hash: Some(HashAlg::Sha512),
        }]);
        assert!(
            rsa_first
                .key
                .first()
                .is_some_and(|a| matches!(a, Algorithm::Rsa { .. }))
        );
        assert_eq!(rsa_first.key.len(), p.key.len());
    }

    #[test]
    fn secrets_do_not_print() {
        let t = SshTarget {
            device: "sw1".into(),
            host: "127.0.0.1".into(),
            port: 22,
            username: "admin".into(),
            auth: SshAuth::Password(Secret::new("hunter2")),
            host_keys: HostKeyPolicy {
                known_hosts: "kh".into(),
                accept_new: false,
            },
            timeouts: Timeouts::default(),
        };
        assert!(!format!("{t:?}").contains("hunter2"));
        let k = SshAuth::PublicKey {
            path: "id".into(),
            passphrase: Some(Secret::new("s3cret")),
        };
        assert!(!format!("{k:?}").contains("s3cret"));
    }

    #[test]
    fn abbreviate_commands() {
        assert_eq!(abbreviate("show  vlan\r\n"), "show  vlan");
        assert!(abbreviate(&"x".repeat(200)).ends_with("..."));
    }
}
