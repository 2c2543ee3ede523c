//! What the benchmark's floors (`ssh-floor`, `netconf-floor`, `http-floor`; docs/bench.md) share: the
//! hosts of a netgw-lab inventory, the same tokio multi-thread runtime and bounded concurrency as
//! `netgw converge`, a per-host time limit, and the one JSON line they print:
//! `{"hosts", "ok", "failed", "wall_secs", "concurrency", "calls_per_host", "errors"}`.

use russh::client::{self, Handle};
use russh::keys::{PublicKey, PublicKeyOrCertificate};
use serde_json::{Value, json};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Why a floor could not start or reach a host; each says where.
#[derive(Debug, thiserror::Error)]
pub enum FloorError {
    #[error("in {}: no host key (netgw-lab writes it beside the inventory: start the lab first)", .0.display())]
    NoHostKey(PathBuf),
    #[error("in connect to 127.0.0.1:{port}: {source}")]
    Connect { port: u16, source: russh::Error },
    #[error("in authentication as {user:?}: {source}")]
    Auth { user: String, source: russh::Error },
    #[error("in authentication as {user:?}: the password was refused")]
    Refused { user: String },
}

/// One device of the inventory, reached on 127.0.0.1.
#[derive(Debug, Clone)]
pub struct FloorHost {
    pub name: String,
    pub port: u16,
    pub username: String,
    pub password: String,
}

/// The common options of every floor.
#[derive(Debug, Clone, clap::Args)]
pub struct FloorArgs {
    /// netgw-lab inventory (Nornir SimpleInventory YAML).
    #[arg(long)]
    pub inventory: PathBuf,
    /// Sessions at once.
    #[arg(long, default_value_t = 100)]
    pub concurrency: usize,
    /// Per-host limit, seconds (connect + all calls).
    #[arg(long, default_value_t = 120)]
    pub host_timeout: u64,
}

impl FloorArgs {
    /// A file netgw-lab writes beside the inventory (`lab-ca.pem`, `lab-known_hosts`).
    pub fn beside(&self, name: &str) -> PathBuf {
        self.inventory.parent().unwrap_or(Path::new(".")).join(name)
    }
}

impl FloorArgs {
    /// The lab's one SSH host key, from the known-hosts file beside the inventory.
    pub fn lab_host_key(&self) -> Result<PublicKey, FloorError> {
        let kh = self.beside("lab-known_hosts");
        std::fs::read_to_string(&kh)
            .ok()
            .and_then(|t| {
                let line = t.lines().next()?;
                let (_, k) = line.split_once(' ')?;
                PublicKey::from_openssh(k.trim()).ok()
            })
            .ok_or(FloorError::NoHostKey(kh))
    }
}

/// Accepts exactly the lab's host key (netgw checks host keys; so does the floor).
pub struct KeyCheck {
    pub host_key: PublicKey,
}

impl client::Handler for KeyCheck {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        server_key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(matches!(server_key,
            PublicKeyOrCertificate::PublicKey { key, .. } if key.key_data() == self.host_key.key_data()))
    }
}

/// TCP connect, key exchange with the host key checked, password authentication.
pub async fn ssh_connect(
    h: &FloorHost,
    key: PublicKey,
    config: Arc<client::Config>,
) -> Result<Handle<KeyCheck>, FloorError> {
    let mut handle = client::connect(config, ("127.0.0.1", h.port), KeyCheck { host_key: key })
        .await
        .map_err(|source| FloorError::Connect {
            port: h.port,
            source,
        })?;
    let auth = handle
        .authenticate_password(h.username.clone(), h.password.clone())
        .await
        .map_err(|source| FloorError::Auth {
            user: h.username.clone(),
            source,
        })?;
    if !auth.success() {
        return Err(FloorError::Refused {
            user: h.username.clone(),
        });
    }
    Ok(handle)
}

/// Close an SSH session politely; the floor's answer is in by then, so a failure is not one.
pub async fn ssh_bye(handle: Handle<KeyCheck>) {
    let _ = handle
        .disconnect(russh::Disconnect::ByApplication, "bye", "en")
        .await;
}

/// [`run`] for an SSH floor: `one(host, key, config, calls)` for every `conn` host, with the lab's
/// host key and the client configuration every session shares. Exit code 2 when the host key
/// cannot be read.
pub fn run_ssh<T, F, Fut>(
    name: &str,
    args: &FloorArgs,
    conn: &str,
    calls: Vec<T>,
    one: F,
) -> ExitCode
where
    T: Send + Sync + 'static,
    F: Fn(FloorHost, PublicKey, Arc<client::Config>, Arc<Vec<T>>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let key = match args.lab_host_key() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    let calls = Arc::new(calls);
    let config = Arc::new(client::Config {
        nodelay: true,
        ..Default::default()
    });
    run(name, args, conn, calls.len(), move |h| {
        one(h, key.clone(), config.clone(), calls.clone())
    })
}

/// The hosts whose `connection_options` has `conn` (`ssh`, `netconf`, `eapi`, `rest`).
pub fn hosts(inv: &Value, conn: &str) -> Vec<FloorHost> {
    let Some(m) = inv.get("hosts").and_then(Value::as_object) else {
        return Vec::new();
    };
    m.iter()
        .filter(|(_, h)| h.pointer(&format!("/connection_options/{conn}")).is_some())
        .map(|(name, h)| {
            let s = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let port = h
                .pointer(&format!("/connection_options/{conn}/port"))
                .or_else(|| h.get("port"))
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or(22);
            FloorHost {
                name: name.clone(),
                port,
                username: s("username"),
                password: s("password"),
            }
        })
        .collect()
}

/// Run `one` for every `conn` host of the inventory, `concurrency` at once, and print the JSON line.
/// `calls` is what each host is sent (for the report). Exit code 0 when every host succeeded.
pub fn run<F, Fut>(name: &str, args: &FloorArgs, conn: &str, calls: usize, one: F) -> ExitCode
where
    F: Fn(FloorHost) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let inv: Value = match std::fs::read_to_string(&args.inventory)
        .map_err(|e| e.to_string())
        .and_then(|t| netgw_models::yaml::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{name}: {}: {e}", args.inventory.display());
            return ExitCode::from(2);
        }
    };
    let hosts = hosts(&inv, conn);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{name}: runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let n = hosts.len();
    let conc = args.concurrency.max(1);
    let limit = Duration::from_secs(args.host_timeout);
    let one = Arc::new(one);
    let (ok, errors, wall) = rt.block_on(async move {
        let sem = Arc::new(Semaphore::new(conc));
        let t0 = Instant::now();
        let mut set = JoinSet::new();
        for h in hosts {
            let (sem, one) = (sem.clone(), one.clone());
            set.spawn(async move {
                let _p = sem.acquire_owned().await;
                let name = h.name.clone();
                let r = tokio::time::timeout(limit, one(h))
                    .await
                    .unwrap_or_else(|_| Err(format!("timed out after {limit:?}")));
                (name, r)
            });
        }
        let (mut ok, mut errors) = (0usize, Vec::new());
        while let Some(r) = set.join_next().await {
            match r {
                Ok((_, Ok(()))) => ok += 1,
                Ok((name, Err(e))) => errors.push(format!("{name}: {e}")),
                Err(e) => errors.push(format!("task: {e}")),
            }
        }
        (ok, errors, t0.elapsed().as_secs_f64())
    });
    let failed = errors.len();
    let out = json!({
        "hosts": n,
        "ok": ok,
        "failed": failed,
        "wall_secs": wall,
        "concurrency": conc,
        "calls_per_host": calls,
        "errors": errors.iter().take(10).collect::<Vec<_>>(),
    });
    println!("{out}");
    if failed == 0 && n > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
