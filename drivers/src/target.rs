//! Where a device is and how to reach it: what the inventory resolves a host into (docs/design.md §6).

use crate::driver::{DriverError, ErrorKind, Platform};
use crate::transport::Timeouts;
use crate::transport::http::TlsMode;
use crate::transport::ssh::{HostKeyPolicy, SshAuth, SshError, SshTarget};
use netgw_models::secret::Secret;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Per-transport overrides (Nornir `connection_options`: `netconf`, `eapi`, `ssh`, `rest`, `snmp`).
/// `Debug` shows no secret: extras named like credentials (`community`, `auth_key`, `priv_key`, ...)
/// print as `<redacted>`.
#[derive(Clone, Default, PartialEq)]
pub struct ConnectionOptions {
    pub hostname: Option<String>,
    pub port: Option<u16>,
    pub username: Option<String>,
    pub password: Option<Secret>,
    /// Transport-specific settings (`snmp`: version, community, user, auth_proto, ...).
    pub extras: serde_json::Map<String, Value>,
}

/// Extras keys whose values are credentials (docs/design.md §6 SNMP extras, and the usual names).
pub fn is_secret_extra(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    matches!(k.as_str(), "community" | "auth_key" | "priv_key")
        || ["password", "secret", "token", "passphrase"]
            .iter()
            .any(|w| k.contains(w))
}

/// Replace, at any depth, the value of every credential key ([`is_secret_extra`]) with
/// `"<redacted>"` (an unset one, null, stays null), for showing inventory data and transport extras.
pub fn redact_secrets(v: &mut Value) {
    match v {
        Value::Object(m) => m.iter_mut().for_each(|(k, x)| redact_entry(k, x)),
        Value::Array(a) => a.iter_mut().for_each(redact_secrets),
        _ => {}
    }
}

/// One entry of a map, as [`redact_secrets`] treats it: redacted when `key` names a credential,
/// else searched.
pub fn redact_entry(key: &str, v: &mut Value) {
    if !is_secret_extra(key) {
        redact_secrets(v);
    } else if !v.is_null() {
        *v = Value::String("<redacted>".into());
    }
}

impl std::fmt::Debug for ConnectionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut extras = Value::Object(self.extras.clone());
        redact_secrets(&mut extras);
        f.debug_struct("ConnectionOptions")
            .field("hostname", &self.hostname)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &self.password)
            .field("extras", &extras)
            .finish()
    }
}

/// TLS settings for HTTPS transports (eAPI, iControl REST).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    /// Verify the device's certificate (on by default).
    pub verify: bool,
    /// A CA bundle (PEM) to verify against instead of the system roots.
    pub ca_file: Option<PathBuf>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions {
            verify: true,
            ca_file: None,
        }
    }
}

/// One device, fully resolved. `Debug` shows no secret.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceTarget {
    /// The node name (used in every error and log line).
    pub name: String,
    pub platform: Platform,
    /// Management address.
    pub host: String,
    /// Port of the primary transport; `None` means the platform's default.
    pub port: Option<u16>,
    pub username: String,
    pub password: Option<Secret>,
    /// Private key for SSH public-key authentication.
    pub key_file: Option<PathBuf>,
    /// `data.netgw.transport` as written: it must name the platform's one transport
    /// ([`Platform::transport`]; `registry::check` refuses another).
    pub transport: Option<String>,
    /// Boxed: a map's node holds eleven values, and a target names one or two connections; unboxed,
    /// that was 2 KB a target, 20 MB of a 10,000-device run.
    pub connection_options: BTreeMap<String, Box<ConnectionOptions>>,
    pub known_hosts: PathBuf,
    pub accept_new_host_keys: bool,
    /// Cisco `enable` secret.
    pub enable_secret: Option<Secret>,
    pub tls: TlsOptions,
    pub timeouts: Timeouts,
    /// Other `data.netgw` settings, for drivers that take options (e.g. `junos_style: els`).
    pub options: serde_json::Map<String, Value>,
}

impl DeviceTarget {
    pub fn new(name: impl Into<String>, platform: Platform, host: impl Into<String>) -> Self {
        DeviceTarget {
            name: name.into(),
            platform,
            host: host.into(),
            port: None,
            username: String::new(),
            password: None,
            key_file: None,
            transport: None,
            connection_options: BTreeMap::new(),
            known_hosts: PathBuf::from("known_hosts"),
            accept_new_host_keys: false,
            enable_secret: None,
            tls: TlsOptions::default(),
            timeouts: Timeouts::default(),
            options: serde_json::Map::new(),
        }
    }

    /// Effective host, port, username and password for one transport: its connection options over the
    /// host's own settings, and `default_port` when neither gives one.
    pub fn endpoint(&self, transport: &str, default_port: u16) -> Endpoint {
        let co = self.connection_options.get(transport);
        Endpoint {
            host: co
                .and_then(|c| c.hostname.clone())
                .unwrap_or_else(|| self.host.clone()),
            port: co
                .and_then(|c| c.port)
                .or(self.port)
                .unwrap_or(default_port),
            username: co
                .and_then(|c| c.username.clone())
                .unwrap_or_else(|| self.username.clone()),
            password: co
                .and_then(|c| c.password.clone())
                .or_else(|| self.password.clone()),
        }
    }
}

impl DeviceTarget {
    /// The SSH connection of one transport (`ssh` for a CLI, `netconf`): its [`endpoint`], the key
    /// file before a password, the host-key policy and timeouts.
    ///
    /// [`endpoint`]: DeviceTarget::endpoint
    pub(crate) fn ssh_target(
        &self,
        transport: &str,
        default_port: u16,
    ) -> Result<SshTarget, DriverError> {
        let ep = self.endpoint(transport, default_port);
        let auth = match (&self.key_file, ep.password) {
            (Some(path), _) => SshAuth::PublicKey {
                path: path.clone(),
                passphrase: None,
            },
            (None, Some(p)) => SshAuth::Password(p),
            (None, None) => {
                return Err(DriverError::Config {
                    device: self.name.clone(),
                    message: format!(
                        "no password or key file for the {transport} connection: set the host's \
                         password or key_file, or connection_options.{transport}.password"
                    ),
                });
            }
        };
        Ok(SshTarget {
            device: self.name.clone(),
            host: ep.host,
            port: ep.port,
            username: ep.username,
            auth,
            host_keys: HostKeyPolicy {
                known_hosts: self.known_hosts.clone(),
                accept_new: self.accept_new_host_keys,
            },
            timeouts: self.timeouts,
        })
    }

    /// The base URL of an HTTP transport (`eapi`, `rest`) and its endpoint: `scheme` is `http` or
    /// `https` (port 80 or 443 unless the endpoint gives one), an IPv6 address goes in brackets.
    /// `what` names the setting the scheme came from, for the error.
    pub(crate) fn http_base(
        &self,
        transport: &str,
        scheme: &str,
        what: &str,
    ) -> Result<(String, Endpoint), DriverError> {
        let default_port = match scheme {
            "https" => 443,
            "http" => 80,
            other => {
                return Err(DriverError::Config {
                    device: self.name.clone(),
                    message: format!("{what} {other:?} is not http or https"),
                });
            }
        };
        let ep = self.endpoint(transport, default_port);
        let host = if ep.host.contains(':') && !ep.host.starts_with('[') {
            format!("[{}]", ep.host)
        } else {
            ep.host.clone()
        };
        Ok((format!("{scheme}://{host}:{}", ep.port), ep))
    }

    /// How an HTTPS transport checks the device's certificate.
    pub(crate) fn tls_mode(&self) -> TlsMode {
        if !self.tls.verify {
            TlsMode::Insecure
        } else if let Some(ca) = &self.tls.ca_file {
            TlsMode::CaFile(ca.clone())
        } else {
            TlsMode::Verify
        }
    }

    /// `save_config` (default true): whether a confirmed change is also written to the configuration
    /// the device boots from (`write memory`, `copy running-config startup-config`, `save sys config`),
    /// so it survives a reload.
    pub(crate) fn save_config(&self) -> Result<bool, DriverError> {
        Ok(self.bool_option("save_config")?.unwrap_or(true))
    }

    /// A true/false option of `data.netgw` (`save_config`, `eos_sessions`, ...); `None` when unset.
    pub(crate) fn bool_option(&self, key: &str) -> Result<Option<bool>, DriverError> {
        match self.options.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(DriverError::Config {
                device: self.name.clone(),
                message: format!("option {key} must be true or false, not {other}"),
            }),
        }
    }
}

/// A string value of an options or extras map.
pub(crate) fn str_option<'a>(m: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a str> {
    m.get(key).and_then(Value::as_str)
}

/// Where one transport connects.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub username: String,
    pub password: Option<Secret>,
}

/// What an SSH failure means for the operator, the same for every vendor over SSH (CLI or NETCONF):
/// a refused login or key is `auth`, a host key or an unreachable port `connect`.
pub(crate) fn ssh_error_kind(e: &SshError) -> ErrorKind {
    match e {
        SshError::Timeout { .. } => ErrorKind::Timeout,
        SshError::AuthRejected { .. } | SshError::Enable { .. } | SshError::PrivateKey { .. } => {
            ErrorKind::Auth
        }
        SshError::Connect { .. }
        | SshError::HostKeyUnknown { .. }
        | SshError::HostKeyChanged(_)
        | SshError::HostKeyRevoked { .. }
        | SshError::HostCertificate { .. } => ErrorKind::Connect,
        _ => ErrorKind::Transport,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_prefers_connection_options() {
        let mut t = DeviceTarget::new("sw1", Platform::Junos, "10.0.0.1");
        t.username = "admin".into();
        t.password = Some(Secret::new("pw"));
        t.connection_options.insert(
            "netconf".into(),
            Box::new(ConnectionOptions {
                port: Some(830),
                username: Some("nc".into()),
                ..Default::default()
            }),
        );
        let e = t.endpoint("netconf", 22);
        assert_eq!(
            (e.host.as_str(), e.port, e.username.as_str()),
            ("10.0.0.1", 830, "nc")
        );
        assert_eq!(e.password.unwrap().expose(), "pw");
        assert_eq!(t.endpoint("ssh", 22).port, 22);
        assert!(!format!("{t:?}").contains("\"pw\""));
    }

    #[test]
    fn the_ssh_target_takes_the_key_file_before_the_password() {
        let mut t = DeviceTarget::new("sw1", Platform::Ios, "10.0.0.1");
        let e = t.ssh_target("ssh", 22).unwrap_err();
        assert!(
            e.to_string().contains("connection_options.ssh.password"),
            "{e}"
        );
        t.password = Some(Secret::new("pw"));
        let s = t.ssh_target("netconf", 830).unwrap();
        assert!(matches!(s.auth, SshAuth::Password(_)));
        assert_eq!((s.host.as_str(), s.port), ("10.0.0.1", 830));
        t.key_file = Some(PathBuf::from("id_ed25519"));
        let s = t.ssh_target("ssh", 22).unwrap();
        assert!(matches!(s.auth, SshAuth::PublicKey { .. }));
    }

    #[test]
    fn an_http_base_url_has_the_scheme_port_and_a_bracketed_ipv6_host() {
        let t = DeviceTarget::new("sw1", Platform::Eos, "fd00::1");
        assert_eq!(
            t.http_base("eapi", "https", "x").unwrap().0,
            "https://[fd00::1]:443"
        );
        assert_eq!(
            t.http_base("eapi", "http", "x").unwrap().0,
            "http://[fd00::1]:80"
        );
        let e = t.http_base("eapi", "ftp", "eAPI transport").unwrap_err();
        assert!(
            e.to_string()
                .contains("eAPI transport \"ftp\" is not http or https"),
            "{e}"
        );
    }

    #[test]
    fn bool_options_are_true_false_or_unset() {
        let mut t = DeviceTarget::new("sw1", Platform::Ios, "h");
        assert_eq!(t.bool_option("save_config").unwrap(), None);
        t.options.insert("save_config".into(), Value::Bool(true));
        assert_eq!(t.bool_option("save_config").unwrap(), Some(true));
        t.options.insert("save_config".into(), Value::from("yes"));
        assert!(t.bool_option("save_config").is_err());
    }

    #[test]
    fn debug_redacts_snmp_credentials() {
        let mut t = DeviceTarget::new("sw1", Platform::Eos, "10.0.0.1");
        let extras = serde_json::json!({"version": "3", "user": "mon", "community": "C0mmunity-x",
            "auth_key": "Auth-key-x", "priv_key": "Priv-key-x"});
        t.connection_options.insert(
            "snmp".into(),
            Box::new(ConnectionOptions {
                extras: extras.as_object().cloned().unwrap(),
                ..Default::default()
            }),
        );
        let shown = format!("{t:?} {t:#?}");
        for s in ["C0mmunity-x", "Auth-key-x", "Priv-key-x"] {
            assert!(!shown.contains(s), "{shown}");
        }
        assert!(
            shown.contains("\"mon\"") && shown.contains("<redacted>"),
            "{shown}"
        );
    }
}
