//! PostgreSQL: the database several `netgw serve` gateways (and `netgw converge` runs) share
//! (docs/serve.md, "Several gateways on one PostgreSQL").
//!
//! ```text
//!   DatabaseUrl (password never shown) ─▶ connect (connect/keepalive timeouts, connection task spawned)
//!   migrate: one transaction, pg_advisory_xact_lock ─▶ netgw_schema_migrations ─▶ migrations/postgres/*.sql
//!   crate::history::postgres  the run history on this connection layer (writer task + reader connection)
//!   lock::PgNodeLock     pg_try_advisory_lock on a connection held for the device session
//!   gate::GatedDriver    that device session, cut the moment the lock is not held
//!   tls                  sslmode / sslrootcert as libpq reads them, rustls verifier of that strength
//! ```
//!
//! Client: `tokio-postgres` alone, no pool crate and not sqlx. sqlx (even with only its postgres
//! feature) compiles its own runtime layer, query macros and several dozen more crates; tokio-postgres
//! is the rust-postgres project's async driver (the one deadpool-postgres and bb8 wrap), and one of its
//! connections pipelines concurrent queries. The history needs just two connections (writer, reader);
//! an advisory lock needs a connection of its own for the whole device session, which is exactly what
//! a pool must not do (it would hand a connection still holding a session lock to someone else). TLS
//! with libpq's `sslmode`/`sslrootcert` (`tls`), on rustls through tokio-postgres-rustls.

pub mod gate;
pub mod lock;
pub mod tls;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;
use thiserror::Error;
use tokio_postgres::{Client, Config};
use tokio_util::sync::CancellationToken;
use tracing::warn;

/// Connecting, and every statement, give up after this long.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Advisory lock class of netgw (`pg_advisory_lock(int, int)`'s first key): "netg".
pub const LOCK_CLASS: i32 = 0x6e65_7467;
/// Second key of the lock serializing migrations.
const MIGRATION_LOCK: i32 = 0;

#[derive(Debug, Error)]
pub enum PgError {
    #[error("database URL {shown}: {message}")]
    Url { shown: String, message: String },
    #[error("in the TLS settings of database URL {shown}: {source}")]
    Tls {
        shown: String,
        #[source]
        source: Box<tls::TlsError>,
    },
    #[error("database {url}: {what}: {}", causes(source))]
    Sql {
        url: String,
        what: &'static str,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error("database {url}: {what}: no answer within {secs} s")]
    Timeout {
        url: String,
        what: &'static str,
        secs: u64,
    },
    #[error(
        "database {url}: schema version {found} (netgw_schema_migrations) is newer than this netgw knows \
         ({known}); a newer gateway migrated it: upgrade this netgw to that release (docs/reliability.md, \
         Upgrading)"
    )]
    SchemaNewer { url: String, found: i32, known: i32 },
}

/// An error with its causes: tokio-postgres's own text says only "error performing TLS handshake"
/// where rustls says which certificate check failed.
fn causes(e: &tokio_postgres::Error) -> String {
    let mut text = e.to_string();
    let mut next = std::error::Error::source(e);
    while let Some(c) = next {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        next = c.source();
    }
    text
}

/// A PostgreSQL connection string (URL or `key=value` form). Its password is never displayed: `Debug`
/// and `Display` show `postgres://USER@HOST:PORT/DB`, rebuilt from the parsed parts.
#[derive(Clone)]
pub struct DatabaseUrl {
    config: Config,
    shown: String,
    /// `sslmode`/`sslrootcert` made a rustls client (`tls`); also used, and answered without TLS,
    /// with `sslmode=disable`.
    tls: tokio_postgres_rustls::MakeRustlsConnect,
}

impl DatabaseUrl {
    pub fn parse(text: &str) -> Result<DatabaseUrl, PgError> {
        let bad = |message: String| PgError::Url {
            shown: redact(text),
            message,
        };
        if !(text.starts_with("postgres://") || text.starts_with("postgresql://")) {
            return Err(bad(
                "must start with postgres:// or postgresql://".to_owned()
            ));
        }
        let bad_tls = |source| PgError::Tls {
            shown: redact(text),
            source: Box::new(source),
        };
        let (rest, params) = tls::split(text).map_err(bad_tls)?;
        // tokio-postgres's parse errors name the option, never its value.
        let mut config = Config::from_str(&rest).map_err(|e| bad(e.to_string()))?;
        if config.get_hosts().is_empty() {
            return Err(bad("names no host".to_owned()));
        }
        if config.get_user().is_none() {
            return Err(bad("names no user".to_owned()));
        }
        config
            .connect_timeout(CONNECT_TIMEOUT)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(30))
            .application_name("netgw")
            .ssl_mode(params.mode.for_client());
        let tls = tls::client_config(&params).map_err(bad_tls)?;
        let shown = match params.mode {
            tls::SslMode::Prefer => shown(&config),
            m => format!("{}?sslmode={}", shown(&config), m.as_str()),
        };
        Ok(DatabaseUrl {
            config,
            shown,
            tls: tokio_postgres_rustls::MakeRustlsConnect::new(tls),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }
}

fn shown(c: &Config) -> String {
    let host = match c.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => String::new(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        c.get_user().unwrap_or(""),
        c.get_dbname().or(c.get_user()).unwrap_or("")
    )
}

/// What a connection string that did not parse may show: everything between `://` and the last `@`
/// (user and password) and any `password=` value replaced.
fn redact(text: &str) -> String {
    let mut out = match (text.find("://"), text.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}://***{}", &text[..s], &text[at..]),
        _ => text.to_owned(),
    };
    if let Some(p) = out.find("password=") {
        let end = out[p..].find(['&', ' ']).map_or(out.len(), |e| p + e);
        out.replace_range(p + "password=".len()..end, "***");
    }
    out
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({})", self.shown)
    }
}

/// From `database:` in serve.yml; a bad value's error is redacted like the rest.
impl<'de> serde::Deserialize<'de> for DatabaseUrl {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        DatabaseUrl::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl FromStr for DatabaseUrl {
    type Err = PgError;
    fn from_str(s: &str) -> Result<Self, PgError> {
        DatabaseUrl::parse(s)
    }
}

/// Bound one database call in time.
pub async fn timed<T>(
    url: &DatabaseUrl,
    what: &'static str,
    limit: Duration,
    fut: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, PgError> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r.map_err(|source| PgError::Sql {
            url: url.to_string(),
            what,
            source,
        }),
        Err(_) => Err(PgError::Timeout {
            url: url.to_string(),
            what,
            secs: limit.as_secs(),
        }),
    }
}

/// A new connection; its connection task runs until the client is dropped or the server goes away.
pub async fn connect(url: &DatabaseUrl) -> Result<Client, PgError> {
    connect_watched(url).await.map(|(client, _)| client)
}

/// [`connect`], and a token cancelled the moment the connection is gone (its task ended: the server
/// closed it, a restart, or the client was dropped): a session lock held on it is gone with it.
pub async fn connect_watched(url: &DatabaseUrl) -> Result<(Client, CancellationToken), PgError> {
    let (client, conn) = timed(
        url,
        "connecting",
        CONNECT_TIMEOUT + Duration::from_secs(1),
        url.config.connect(url.tls.clone()),
    )
    .await?;
    let shown = url.to_string();
    let closed = CancellationToken::new();
    let gone = closed.clone();
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            warn!(database = %shown, error = %e, "database connection closed");
        }
        gone.cancel();
    });
    Ok((client, closed))
}

/// The schema migrations, in order (version, file name, SQL).
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "0001_history.sql",
        include_str!("../../migrations/postgres/0001_history.sql"),
    ),
    (
        2,
        "0002_queue.sql",
        include_str!("../../migrations/postgres/0002_queue.sql"),
    ),
    (
        3,
        "0003_shared_queue.sql",
        include_str!("../../migrations/postgres/0003_shared_queue.sql"),
    ),
    (
        4,
        "0004_gateway_serial.sql",
        include_str!("../../migrations/postgres/0004_gateway_serial.sql"),
    ),
    (
        5,
        "0005_link_checks.sql",
        include_str!("../../migrations/postgres/0005_link_checks.sql"),
    ),
    (
        6,
        "0006_run_status.sql",
        include_str!("../../migrations/postgres/0006_run_status.sql"),
    ),
    (
        7,
        "0007_retention.sql",
        include_str!("../../migrations/postgres/0007_retention.sql"),
    ),
    (
        8,
        "0008_signatures.sql",
        include_str!("../../migrations/postgres/0008_signatures.sql"),
    ),
];

/// Apply the migrations not applied yet, all in one transaction; gateways starting together serialize
/// on an advisory transaction lock. Returns the versions applied now.
pub async fn migrate(client: &mut Client, url: &DatabaseUrl) -> Result<Vec<i32>, PgError> {
    let t = STATEMENT_TIMEOUT;
    let tx = timed(url, "starting the migration", t, client.transaction()).await?;
    timed(
        url,
        "locking the schema",
        t,
        tx.execute(
            "SELECT pg_advisory_xact_lock($1, $2)",
            &[&LOCK_CLASS, &MIGRATION_LOCK],
        ),
    )
    .await?;
    timed(
        url,
        "creating netgw_schema_migrations",
        t,
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS netgw_schema_migrations (version INTEGER PRIMARY KEY, \
             name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        ),
    )
    .await?;
    let rows = timed(
        url,
        "reading netgw_schema_migrations",
        t,
        tx.query("SELECT version FROM netgw_schema_migrations", &[]),
    )
    .await?;
    let done: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
    let known = MIGRATIONS.last().map_or(0, |m| m.0);
    if let Some(found) = done.iter().copied().filter(|v| *v > known).max() {
        return Err(PgError::SchemaNewer {
            url: url.to_string(),
            found,
            known,
        });
    }
    let mut applied = Vec::new();
    for (version, name, sql) in MIGRATIONS {
        if done.contains(version) {
            continue;
        }
        timed(url, "applying a migration", t, tx.batch_execute(sql)).await?;
        timed(
            url,
            "recording a migration",
            t,
            tx.execute(
                "INSERT INTO netgw_schema_migrations (version, name) VALUES ($1, $2)",
                &[version, name],
            ),
        )
        .await?;
        applied.push(*version);
    }
    timed(url, "committing the migration", t, tx.commit()).await?;
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_never_shown() {
        let u = DatabaseUrl::parse("postgres://netgw:s3cret-pw@db.example:5433/history").unwrap();
        for text in [u.to_string(), format!("{u:?}")] {
            assert_eq!(
                text.replace("DatabaseUrl(", "").trim_end_matches(')'),
                "postgres://netgw@db.example:5433/history"
            );
        }
        let e = DatabaseUrl::parse("postgres://netgw:s3cret-pw@db.example:5433/h?bogus=1")
            .err()
            .unwrap();
        let text = format!("{e} {e:?}");
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("bogus"), "{text}");
        let e = DatabaseUrl::parse("mysql://netgw:s3cret-pw@db/h")
            .err()
            .unwrap();
        assert!(!format!("{e} {e:?}").contains("s3cret"));
        assert!(e.to_string().contains("must start with postgres://"), "{e}");
        let e = DatabaseUrl::parse("postgres://db.example/h?password=s3cret-pw&x=1")
            .err()
            .unwrap();
        assert!(!format!("{e} {e:?}").contains("s3cret"), "{e}");
    }
}
