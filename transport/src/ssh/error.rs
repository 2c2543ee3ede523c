//! The SSH transport's error type: one enum for the layer (docs/style.md habit 4). Every variant names the
//! device; none carries a password or passphrase.

use std::path::PathBuf;
use std::time::Duration;

use crate::credentials::CredentialError;

#[derive(Debug, thiserror::Error)]
pub enum SshError {
    /// TCP connect failed (refused, unreachable, DNS).
    #[error("{device}: cannot connect to {host}:{port}: {source}")]
    Connect {
        device: String,
        host: String,
        port: u16,
        #[source]
        source: std::io::Error,
    },

    /// A connect, idle or operation limit was hit.
    #[error("{device}: {operation} timed out after {}", humantime(*limit))]
    Timeout {
        device: String,
        operation: String,
        limit: Duration,
    },

    /// The server's host key is not in the known-hosts file and `accept_new` was not asked for.
    #[error(
        "{device}: host key for {host}:{port} is unknown ({fingerprint}); refusing to connect. \
         known_hosts file used: {} (set by the inventory's data.netgw.known_hosts, else \
         --known-hosts / NETGW_KNOWN_HOSTS). Add the key there, point known_hosts at a file that has \
         it, or accept new keys explicitly (data.netgw.accept_new_host_keys: true, or \
         --accept-new-host-keys / NETGW_ACCEPT_NEW_HOST_KEYS=1)",
        known_hosts.display()
    )]
    HostKeyUnknown {
        device: String,
        host: String,
        port: u16,
        fingerprint: String,
        known_hosts: PathBuf,
    },

    /// The server presented a key that differs from the recorded one. Always refused: this is what a
    /// man-in-the-middle looks like. Boxed: the details are large and this error is rare.
    #[error("{0}")]
    HostKeyChanged(Box<HostKeyChange>),

    /// The presented key is marked `@revoked` in the known-hosts file.
    #[error("{device}: host key {fingerprint} of {host}:{port} is marked @revoked in {}", known_hosts.display())]
    HostKeyRevoked {
        device: String,
        host: String,
        port: u16,
        fingerprint: String,
        known_hosts: PathBuf,
    },

    /// The server presented a host certificate; only plain host keys are supported.
    #[error(
        "{device}: {host}:{port} presented a host certificate; only known-hosts keys are supported"
    )]
    HostCertificate {
        device: String,
        host: String,
        port: u16,
    },

    /// Reading or appending to the known-hosts file failed.
    #[error("known-hosts file {}: {source}", path.display())]
    KnownHostsIo {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The server refused the credentials.
    #[error("{device}: authentication as {username} with {method} refused by the server{}",
        if remaining.is_empty() { String::new() } else { format!(" (it accepts: {remaining})") })]
    AuthRejected {
        device: String,
        username: String,
        method: &'static str,
        remaining: String,
    },

    /// The private key file could not be read or decrypted (wrong passphrase included).
    #[error("{device}: private key {}: {reason}", path.display())]
    PrivateKey {
        device: String,
        path: PathBuf,
        reason: String,
    },

    #[error("{device}: credential: {source}")]
    Credential {
        device: String,
        #[source]
        source: CredentialError,
    },

    /// The SSH protocol layer failed (negotiation, disconnect, I/O).
    #[error("{device}: in {operation}: {source}")]
    Protocol {
        device: String,
        operation: String,
        #[source]
        source: Box<russh::Error>,
    },

    /// The session is gone (peer disconnected, idle timeout, earlier failure).
    #[error("{device}: session closed during {operation}{}", reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Disconnected {
        device: String,
        operation: String,
        reason: Option<String>,
    },

    /// The server refused a channel request (exec, subsystem, pty, shell).
    #[error("{device}: server refused {request}")]
    ChannelRefused { device: String, request: String },

    /// The device answered a CLI command with one of its failure strings. `output` is the device's text
    /// (prompt and echo removed), e.g. `% Invalid input detected at '^' marker.`
    #[error("{device}: command `{command}` failed: {output}")]
    Cli {
        device: String,
        command: String,
        output: String,
    },

    /// A command we refused to send (it would desynchronise prompt detection).
    #[error("{device}: refusing to send command `{command}`: {reason}")]
    InvalidCommand {
        device: String,
        command: String,
        reason: &'static str,
    },

    /// Entering privileged (enable) mode failed.
    #[error("{device}: enable failed: {reason}")]
    Enable { device: String, reason: String },

    /// The CLI did not reach the expected mode (e.g. config mode was not entered).
    #[error("{device}: {operation}: expected {expected} mode, device prompt is {prompt:?}")]
    Mode {
        device: String,
        operation: String,
        expected: &'static str,
        prompt: String,
    },
}

/// Details of a changed host key ([`SshError::HostKeyChanged`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostKeyChange {
    pub device: String,
    pub host: String,
    pub port: u16,
    /// Fingerprint of the recorded key (`ALGO SHA256:...`).
    pub expected: String,
    /// Fingerprint of the presented key.
    pub presented: String,
    pub known_hosts: PathBuf,
    /// 1-based line of the recorded entry.
    pub line: usize,
}

impl std::fmt::Display for HostKeyChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: HOST KEY CHANGED for {}:{}: known_hosts {} line {} has {}, the server presented {}; \
             refusing to connect (possible man-in-the-middle). If the change is legitimate, remove the \
             old entry",
            self.device,
            self.host,
            self.port,
            self.known_hosts.display(),
            self.line,
            self.expected,
            self.presented
        )
    }
}

impl SshError {
    /// True for errors that leave the SSH session unusable.
    pub fn is_fatal(&self) -> bool {
        !matches!(
            self,
            SshError::Cli { .. }
                | SshError::ChannelRefused { .. }
                | SshError::Mode { .. }
                | SshError::InvalidCommand { .. }
                | SshError::Enable { .. }
        )
    }
}

/// `30s`, `1.5s`, `250ms`: limits as an operator wrote them.
fn humantime(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else if d.as_secs() == 0 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.3}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_stays_small() {
        // clippy::result_large_err threshold is 128 bytes.
        assert!(
            std::mem::size_of::<SshError>() <= 120,
            "{}",
            std::mem::size_of::<SshError>()
        );
    }

    #[test]
    fn timeout_names_operation_device_and_limit() {
        let e = SshError::Timeout {
            device: "sw1".into(),
            operation: "exec `sleep 5`".into(),
            limit: Duration::from_millis(1500),
        };
        assert_eq!(e.to_string(), "sw1: exec `sleep 5` timed out after 1.500s");
        let e = SshError::Timeout {
            device: "sw1".into(),
            operation: "connect".into(),
            limit: Duration::from_secs(10),
        };
        assert_eq!(e.to_string(), "sw1: connect timed out after 10s");
    }
}
