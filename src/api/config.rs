//! The `netgw serve` configuration file (YAML) and the settings resolved from it and the command line.
//!
//! ```yaml
//! listen: 127.0.0.1:8080          # --listen wins
//! db: /var/lib/netgw/history.db   # --db wins
//! database: postgres://netgw:PASSWORD@db:5432/netgw  # --database wins; instead of db: shared history
//! repo: /srv/netgw/repo           # else the global --repo
//! inventory: /srv/netgw/hosts.yml # --inventory wins
//! links_topology: fabric.clab.yml # links `"check_links": true` compares with LLDP (docs/atomic.md)
//! max_queue: 1000                 # node runs waiting (not running); --max-queue wins
//! concurrency: 20                 # node runs at once; --concurrency wins
//! retention: 1000                 # runs kept in the history at most
//! retention_days: 90              # and only runs that ended within this many days (log lines, link
//!                                 #   checks too); applied at start and hourly (docs/serve.md)
//! shutdown_grace_secs: 30         # running nodes may finish for this long on SIGTERM
//! cancel_grace_secs: 10           # then they are cancelled and get this long to reach a safe point
//! node_timeout_secs: 600
//! max_body_bytes: 65536
//! max_connections: 512            # open connections in total; beyond: the oldest unauthenticated one closed
//! max_connections_per_peer: 128   # open connections from one address (behind a proxy: = max_connections)
//! header_timeout_secs: 10         # a request head (and an idle keep-alive's next one, a TLS handshake)
//! body_timeout_secs: 10           # the body of an authenticated request
//! max_streams_per_identity: 8     # event streams (GET /v1/runs/ID/events) open per token or client
//! events_poll_secs: 10            # database: a stream of another gateway's run is woken by NOTIFY,
//!                                 #   and re-reads this often besides (0.1-300; 1 s while unlistened)
//! tls_cert: tls/cert.pem          # both or neither: HTTPS (rustls) instead of plain HTTP
//! tls_key: tls/key.pem
//! tokens:                         # bearer tokens, stored as SHA-256 hex of the token
//!   - {name: ci, sha256: 9f86d0..., roles: [trigger, read]}
//! chef_clients:                   # Chef-signed requests (mixlib-authentication), by client name
//!   - {name: chef-server, public_key: keys/chef-server.pub.pem, roles: [trigger, read]}
//! nautobot_webhook:               # POST /v1/webhooks/nautobot (docs/nautobot.md); needs a Nautobot
//!   secret_env: NB_WEBHOOK_SECRET #   inventory. The webhook's secret: secret_env or secret_file
//!   max_body_bytes: 1048576       #   a webhook body at most (Nautobot sends the whole object)
//! ```
//! Relative paths are relative to the configuration file's directory. Token values never appear here
//! or in logs: only their hashes.

use super::auth::{Auth, ChefClient, Role, Token};
use super::limits::{self, ServerLimits};
use crate::gateway::ServeArgs;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("serve config {path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("serve: {0}")]
    Setting(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub listen: Option<SocketAddr>,
    pub db: Option<PathBuf>,
    /// PostgreSQL shared by several gateways, instead of the SQLite `db`.
    pub database: Option<crate::pg::DatabaseUrl>,
    pub repo: Option<PathBuf>,
    pub inventory: Option<PathBuf>,
    /// containerlab topology whose links `"check_links": true` compares with LLDP.
    pub links_topology: Option<PathBuf>,
    pub max_queue: Option<usize>,
    pub concurrency: Option<usize>,
    pub retention: Option<usize>,
    pub retention_days: Option<f64>,
    pub shutdown_grace_secs: Option<f64>,
    pub cancel_grace_secs: Option<f64>,
    pub node_timeout_secs: Option<f64>,
    pub max_body_bytes: Option<usize>,
    pub max_connections: Option<usize>,
    pub max_connections_per_peer: Option<usize>,
    pub header_timeout_secs: Option<f64>,
    pub body_timeout_secs: Option<f64>,
    pub max_streams_per_identity: Option<usize>,
    pub events_poll_secs: Option<f64>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    #[serde(default)]
    pub tokens: Vec<TokenEntry>,
    #[serde(default)]
    pub chef_clients: Vec<ChefClientEntry>,
    pub nautobot_webhook: Option<NautobotWebhookEntry>,
}

/// `nautobot_webhook:`: where the secret Nautobot signs its webhooks with is read from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NautobotWebhookEntry {
    /// The variable holding the webhook's secret.
    pub secret_env: Option<String>,
    /// A file holding the webhook's secret (instead of `secret_env`).
    pub secret_file: Option<PathBuf>,
    /// The largest webhook body read (default 1 MiB).
    pub max_body_bytes: Option<usize>,
}

/// The Nautobot webhook endpoint's settings: the secret (never shown) and the body bound.
#[derive(Debug, Clone)]
pub struct NautobotWebhook {
    pub secret: netgw_models::secret::Secret,
    pub max_body: usize,
}

pub const DEFAULT_WEBHOOK_MAX_BODY: usize = 1024 * 1024;

impl NautobotWebhookEntry {
    /// Read the secret; errors say where it was looked for, never what it is.
    fn resolve(self) -> Result<NautobotWebhook, ConfigError> {
        let err = |m: String| ConfigError::Setting(format!("nautobot_webhook: {m}"));
        let reference = match (&self.secret_env, &self.secret_file) {
            (Some(v), None) => format!("${{{v}}}"),
            (None, Some(f)) => format!("file:{}", f.display()),
            _ => return Err(err("give exactly one of secret_env, secret_file".into())),
        };
        let secret = netgw_transport::credentials::resolve(&reference)
            .map_err(|e| err(format!("the webhook's secret: {e}")))?;
        if secret.is_empty() {
            return Err(err(
                "the webhook's secret is empty (Nautobot does not sign without one)".into(),
            ));
        }
        Ok(NautobotWebhook {
            secret,
            max_body: positive(
                "nautobot_webhook.max_body_bytes",
                self.max_body_bytes.unwrap_or(DEFAULT_WEBHOOK_MAX_BODY),
            )?,
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    pub name: String,
    /// SHA-256 of the token, lower- or upper-case hex.
    pub sha256: String,
    pub roles: Vec<Role>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChefClientEntry {
    pub name: String,
    /// The client's RSA public key (PEM: `PUBLIC KEY` or `RSA PUBLIC KEY`).
    pub public_key: PathBuf,
    pub roles: Vec<Role>,
}

/// Everything `serve` runs with.
#[derive(Debug)]
pub struct Settings {
    pub listen: SocketAddr,
    /// `--db` or the file's `db:`; none: `crate::state::history_path` for the address bound.
    pub db: Option<PathBuf>,
    /// The history in PostgreSQL (shared with other gateways) instead of the SQLite `db`.
    pub database: Option<crate::pg::DatabaseUrl>,
    pub repo: PathBuf,
    pub inventory: PathBuf,
    /// `links_topology:` (see [`ConfigFile`]).
    pub links_topology: Option<PathBuf>,
    pub max_queue: usize,
    pub concurrency: usize,
    pub retention: usize,
    /// `retention_days:`: runs that ended earlier are deleted (`crate::history::History::prune`).
    pub retention_age: Duration,
    pub shutdown_grace: Duration,
    pub cancel_grace: Duration,
    pub node_timeout: Duration,
    pub max_body_bytes: usize,
    /// `events_poll_secs:` (see [`ConfigFile`]).
    pub events_poll: Duration,
    pub limits: ServerLimits,
    /// Certificate chain and key (PEM) when `serve` speaks TLS itself.
    pub tls: Option<(PathBuf, PathBuf)>,
    pub classifier: Option<PathBuf>,
    /// The secret file of encrypted data bag items (`--encrypted-data-bag-secret`).
    pub data_bag_secret: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    /// `--current-state repo` (see `crate::store::local::CurrentAt`).
    pub current_in_repo: bool,
    pub auth: Auth,
    pub trust: crate::inventory::Trust,
    /// Cookbooks synchronized from this Chef server for every run (`--cookbooks server`); `None`: from
    /// `repo`.
    pub cookbook_server: Option<crate::store::chef::ChefServer>,
    /// `POST /v1/webhooks/nautobot`, when configured.
    pub nautobot_webhook: Option<NautobotWebhook>,
}

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
pub const DEFAULT_MAX_QUEUE: usize = 1000;
pub const DEFAULT_CONCURRENCY: usize = 20;
pub const DEFAULT_RETENTION: usize = 1000;
pub const DEFAULT_RETENTION_DAYS: f64 = 90.0;
/// A hundred years: more is surely a typo (and would overflow the cutoff's arithmetic).
const MAX_RETENTION_DAYS: f64 = 36_500.0;
pub const DEFAULT_MAX_BODY: usize = 64 * 1024;

fn file_err(path: &Path, message: impl Into<String>) -> ConfigError {
    ConfigError::File {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// Parse a configuration file's text (`path` names it in errors and anchors relative paths).
pub fn parse_file(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    let value: serde_norway::Value = netgw_models::yaml::from_str(text)
        .map_err(|e| file_err(path, format!("invalid YAML: {e}")))?;
    if value.is_null() {
        return Ok(ConfigFile::default());
    }
    let mut cfg: ConfigFile = serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        if field == "." || field.is_empty() {
            file_err(path, inner.to_string())
        } else {
            file_err(path, format!("field `{field}`: {inner}"))
        }
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let anchor = |p: &mut Option<PathBuf>| {
        if let Some(v) = p
            && v.is_relative()
        {
            *v = base.join(&*v);
        }
    };
    anchor(&mut cfg.db);
    anchor(&mut cfg.repo);
    anchor(&mut cfg.inventory);
    anchor(&mut cfg.links_topology);
    anchor(&mut cfg.tls_cert);
    anchor(&mut cfg.tls_key);
    if let Some(w) = &mut cfg.nautobot_webhook {
        anchor(&mut w.secret_file);
    }
    for c in &mut cfg.chef_clients {
        if c.public_key.is_relative() {
            c.public_key = base.join(&c.public_key);
        }
    }
    Ok(cfg)
}

fn secs(name: &str, v: Option<f64>, default: f64) -> Result<Duration, ConfigError> {
    let s = v.unwrap_or(default);
    if !(0.0..=86_400.0).contains(&s) {
        return Err(ConfigError::Setting(format!(
            "{name} must be between 0 and 86400 seconds, found {s}"
        )));
    }
    Ok(Duration::from_secs_f64(s))
}

/// A timeout: like [`secs`], but zero would refuse every request.
fn timeout(name: &str, v: Option<f64>, default: f64) -> Result<Duration, ConfigError> {
    let d = secs(name, v, default)?;
    if d < Duration::from_millis(100) {
        return Err(ConfigError::Setting(format!(
            "{name} must be at least 0.1 seconds, found {}",
            d.as_secs_f64()
        )));
    }
    Ok(d)
}

/// `events_poll_secs`: bounded both ways (a stream must not spin, nor wait forever on a lost NOTIFY).
fn events_poll(v: Option<f64>) -> Result<Duration, ConfigError> {
    let d = timeout("events_poll_secs", v, 10.0)?;
    if d > Duration::from_secs(300) {
        return Err(ConfigError::Setting(format!(
            "events_poll_secs must be at most 300 seconds, found {}",
            d.as_secs_f64()
        )));
    }
    Ok(d)
}

/// `retention_days`: more than nothing (zero would delete every run as it ends), at most a century.
fn retention_days(v: Option<f64>) -> Result<Duration, ConfigError> {
    let d = v.unwrap_or(DEFAULT_RETENTION_DAYS);
    if !(d > 0.0 && d <= MAX_RETENTION_DAYS) {
        return Err(ConfigError::Setting(format!(
            "retention_days must be more than 0 and at most {MAX_RETENTION_DAYS} (days; 0.5 is 12 hours), found {d}"
        )));
    }
    Ok(Duration::from_secs_f64(d * 86_400.0))
}

fn positive(name: &str, v: usize) -> Result<usize, ConfigError> {
    if v == 0 {
        return Err(ConfigError::Setting(format!("{name} must be at least 1")));
    }
    Ok(v)
}

impl Settings {
    /// Merge the command line over the configuration file.
    pub fn resolve(args: &ServeArgs) -> Result<Settings, ConfigError> {
        let file = match &args.config {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| file_err(p, e.to_string()))?;
                parse_file(p, &text)?
            }
            None => ConfigFile::default(),
        };
        let listen = match args.listen.or(file.listen) {
            Some(l) => l,
            None => DEFAULT_LISTEN
                .parse()
                .map_err(|_| ConfigError::Setting("bad default listen address".into()))?,
        };
        let inventory = args.inventory.clone().or(file.inventory).ok_or_else(|| {
            ConfigError::Setting(
                "no inventory: give --inventory FILE or `inventory:` in the config file".into(),
            )
        })?;
        let mut tokens = Vec::new();
        for (i, t) in file.tokens.into_iter().enumerate() {
            tokens.push(
                Token::new(t.name, &t.sha256, t.roles)
                    .map_err(|e| ConfigError::Setting(format!("tokens[{i}]: {e}")))?,
            );
        }
        let mut clients = Vec::new();
        for (i, c) in file.chef_clients.into_iter().enumerate() {
            clients.push(
                ChefClient::load(c.name, &c.public_key, c.roles)
                    .map_err(|e| ConfigError::Setting(format!("chef_clients[{i}]: {e}")))?,
            );
        }
        if tokens.is_empty() && clients.is_empty() {
            return Err(ConfigError::Setting(
                "no credentials configured: add `tokens` or `chef_clients` to the config file \
                 (--config FILE); every endpoint but /healthz requires authentication"
                    .into(),
            ));
        }
        Ok(Settings {
            listen,
            db: args.db.clone().or(file.db),
            database: args.database.clone().or(file.database),
            repo: file.repo.unwrap_or_else(|| args.repo.clone()),
            inventory,
            links_topology: file.links_topology,
            max_queue: positive(
                "max_queue",
                args.max_queue
                    .or(file.max_queue)
                    .unwrap_or(DEFAULT_MAX_QUEUE),
            )?,
            concurrency: positive(
                "concurrency",
                args.concurrency
                    .or(file.concurrency)
                    .unwrap_or(DEFAULT_CONCURRENCY),
            )?,
            retention: positive("retention", file.retention.unwrap_or(DEFAULT_RETENTION))?,
            retention_age: retention_days(file.retention_days)?,
            shutdown_grace: secs("shutdown_grace_secs", file.shutdown_grace_secs, 30.0)?,
            cancel_grace: secs("cancel_grace_secs", file.cancel_grace_secs, 10.0)?,
            node_timeout: secs("node_timeout_secs", file.node_timeout_secs, 600.0)?,
            max_body_bytes: positive(
                "max_body_bytes",
                file.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY),
            )?,
            events_poll: events_poll(file.events_poll_secs)?,
            limits: ServerLimits {
                max_connections: positive(
                    "max_connections",
                    file.max_connections
                        .unwrap_or(limits::DEFAULT_MAX_CONNECTIONS),
                )?,
                max_connections_per_peer: positive(
                    "max_connections_per_peer",
                    file.max_connections_per_peer
                        .unwrap_or(limits::DEFAULT_MAX_CONNECTIONS_PER_PEER),
                )?,
                header_timeout: timeout(
                    "header_timeout_secs",
                    file.header_timeout_secs,
                    limits::DEFAULT_HEADER_TIMEOUT_SECS,
                )?,
                body_timeout: timeout(
                    "body_timeout_secs",
                    file.body_timeout_secs,
                    limits::DEFAULT_BODY_TIMEOUT_SECS,
                )?,
                max_streams_per_identity: positive(
                    "max_streams_per_identity",
                    file.max_streams_per_identity
                        .unwrap_or(limits::DEFAULT_MAX_STREAMS_PER_IDENTITY),
                )?,
            },
            tls: match (file.tls_cert, file.tls_key) {
                (Some(c), Some(k)) => Some((c, k)),
                (None, None) => None,
                _ => {
                    return Err(ConfigError::Setting(
                        "tls_cert and tls_key go together: give both or neither".into(),
                    ));
                }
            },
            classifier: args.classifier.clone(),
            data_bag_secret: args.data_bag_secret.clone(),
            state_dir: args.state_dir.clone(),
            current_in_repo: args.current_in_repo,
            auth: Auth::new(tokens, clients),
            trust: args.trust.clone(),
            cookbook_server: None,
            nautobot_webhook: file
                .nautobot_webhook
                .map(NautobotWebhookEntry::resolve)
                .transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_paths_are_anchored_and_unknown_fields_named() {
        let p = Path::new("/etc/netgw/serve.yml");
        let c = parse_file(p, "db: h.db\ninventory: /abs/inv.yml\nretention: 5\n").unwrap();
        assert_eq!(c.db.unwrap(), PathBuf::from("/etc/netgw/h.db"));
        assert_eq!(c.inventory.unwrap(), PathBuf::from("/abs/inv.yml"));
        let e = parse_file(p, "tokens:\n  - {name: a, sha256: x, roles: [admin]}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tokens[0].roles[0]"), "{e}");
        let e = parse_file(p, "lisen: 1\n").unwrap_err().to_string();
        assert!(e.contains("unknown field `lisen`"), "{e}");
    }

    #[test]
    fn retention_days_default_to_90_and_are_bounded() {
        let day = Duration::from_secs(86_400);
        assert_eq!(retention_days(None).unwrap(), day * 90);
        assert_eq!(retention_days(Some(0.5)).unwrap(), day / 2);
        for bad in [0.0, -1.0, 36_501.0, f64::NAN, f64::INFINITY] {
            let e = retention_days(Some(bad)).unwrap_err().to_string();
            assert!(
                e.contains("retention_days must be more than 0"),
                "{bad}: {e}"
            );
        }
        let p = Path::new("/etc/netgw/serve.yml");
        let c = parse_file(p, "retention: 5\nretention_days: 7\n").unwrap();
        assert_eq!((c.retention, c.retention_days), (Some(5), Some(7.0)));
    }

    #[test]
    fn the_nautobot_webhook_secret_is_read_from_one_place_and_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("hook"), "s3cret-hook\n").unwrap();
        let p = dir.path().join("serve.yml");
        let c = parse_file(&p, "nautobot_webhook:\n  secret_file: hook\n").unwrap();
        let hook = c.nautobot_webhook.unwrap().resolve().unwrap();
        assert_eq!(hook.secret.expose(), "s3cret-hook");
        assert_eq!(hook.max_body, DEFAULT_WEBHOOK_MAX_BODY);
        assert!(!format!("{hook:?}").contains("s3cret"));
        let both = "nautobot_webhook: {secret_file: hook, secret_env: X}\n";
        let e = parse_file(&p, both)
            .unwrap()
            .nautobot_webhook
            .unwrap()
            .resolve();
        assert!(e.unwrap_err().to_string().contains("exactly one"));
        std::fs::write(dir.path().join("empty"), "").unwrap();
        let empty = "nautobot_webhook: {secret_file: empty}\n";
        let e = parse_file(&p, empty)
            .unwrap()
            .nautobot_webhook
            .unwrap()
            .resolve();
        assert!(e.is_err());
        let e = parse_file(&p, "nautobot_webhook: {secret: x}\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `secret`"), "{e}");
    }

    #[test]
    fn no_credentials_is_refused() {
        let args = ServeArgs {
            inventory: Some("inv.yml".into()),
            ..Default::default()
        };
        let e = Settings::resolve(&args).unwrap_err().to_string();
        assert!(e.contains("no credentials"), "{e}");
    }
}
