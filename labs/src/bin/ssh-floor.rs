//! `ssh-floor --inventory FILE [--concurrency N] [--commands FILE] [--json]`
//!
//! The benchmark's floor (issue 7): the least any tool must do to drive the IOS simulator over SSH.
//! For every `ssh` host of a netgw-lab inventory: TCP connect, key exchange, host key checked against
//! the lab's known-hosts key (loaded once), password authentication, PTY + shell, then each command
//! of the list sent in turn, waiting only for the next prompt (`host#`, `host(config...)#`). No
//! parsing, no planning, no state saved. Same tokio multi-thread runtime and the same bounded
//! concurrency (a semaphore) as `netgw converge`.
//!
//! Prints one JSON object: `{"hosts", "ok", "failed", "wall_secs", "commands_per_host", "errors"}`.

use clap::Parser;
use russh::client::{self, Handle};
use russh::keys::{PublicKey, PublicKeyOrCertificate};
use russh::{ChannelMsg, Disconnect};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

#[derive(Parser)]
#[command(
    name = "ssh-floor",
    about = "Bare russh client: connect, auth, commands (bench floor)"
)]
struct Cli {
    /// netgw-lab inventory (Nornir SimpleInventory YAML); hosts with an `ssh` connection are used.
    #[arg(long)]
    inventory: PathBuf,
    /// Sessions at once.
    #[arg(long, default_value_t = 50)]
    concurrency: usize,
    /// Commands, one per line (`#` comments and blank lines skipped); default: the IOS sequence of
    /// one changing `netgw converge` (facts, observe, config, verify read).
    #[arg(long)]
    commands: Option<PathBuf>,
    /// Per-host limit, seconds (connect + all commands).
    #[arg(long, default_value_t = 120)]
    host_timeout: u64,
}

struct Floor {
    host_key: PublicKey,
}

impl client::Handler for Floor {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        server_key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(
            matches!(server_key, PublicKeyOrCertificate::PublicKey { key, .. } if key.key_data() == self.host_key.key_data()),
        )
    }
}

struct Host {
    name: String,
    port: u16,
    username: String,
    password: String,
}

/// The prompt ends the buffer: last line `NAME#` or `NAME(config...)#`, no spaces.
fn at_prompt(buf: &[u8]) -> bool {
    let last = buf.rsplit(|&b| b == b'\n').next().unwrap_or(buf);
    let last = last.strip_prefix(b"\r").unwrap_or(last);
    last.len() > 1
        && last.ends_with(b"#")
        && last
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"_.-()/:#".contains(&b))
}

async fn read_prompt(ch: &mut russh::Channel<client::Msg>) -> Result<usize, String> {
    let mut buf = Vec::new();
    loop {
        match ch.wait().await {
            Some(ChannelMsg::Data { data }) => {
                buf.extend_from_slice(&data);
                if at_prompt(&buf) {
                    return Ok(buf.len());
                }
            }
            Some(ChannelMsg::Eof | ChannelMsg::Close) | None => {
                return Err("channel closed before the prompt".into());
            }
            Some(_) => {}
        }
    }
}

async fn run_host(
    h: &Host,
    key: PublicKey,
    config: Arc<client::Config>,
    cmds: &[String],
) -> Result<usize, String> {
    let mut handle: Handle<Floor> =
        client::connect(config, ("127.0.0.1", h.port), Floor { host_key: key })
            .await
            .map_err(|e| format!("connect: {e}"))?;
    let auth = handle
        .authenticate_password(h.username.clone(), h.password.clone())
        .await
        .map_err(|e| format!("auth: {e}"))?;
    if !auth.success() {
        return Err("authentication refused".into());
    }
    let mut ch = handle
        .channel_open_session()
        .await
        .map_err(|e| format!("open channel: {e}"))?;
    ch.request_pty(true, "vt100", 511, 200, 0, 0, &[])
        .await
        .map_err(|e| format!("pty: {e}"))?;
    ch.request_shell(true)
        .await
        .map_err(|e| format!("shell: {e}"))?;
    let mut bytes = read_prompt(&mut ch).await?;
    for c in cmds {
        ch.data(format!("{c}\n").as_bytes())
            .await
            .map_err(|e| format!("send {c:?}: {e}"))?;
        bytes += read_prompt(&mut ch)
            .await
            .map_err(|e| format!("{c:?}: {e}"))?;
    }
    let _ = ch.data(&b"exit\n"[..]).await;
    let _ = ch.eof().await;
    let _ = handle
        .disconnect(Disconnect::ByApplication, "bye", "en")
        .await;
    Ok(bytes)
}

fn hosts(inv: &Value) -> Vec<Host> {
    let mut out = Vec::new();
    if let Some(m) = inv.get("hosts").and_then(Value::as_object) {
        for (name, h) in m {
            if h.pointer("/connection_options/ssh").is_none() {
                continue;
            }
            let port = h.get("port").and_then(Value::as_u64).unwrap_or(22) as u16;
            let s = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            out.push(Host {
                name: name.clone(),
                port,
                username: s("username"),
                password: s("password"),
            });
        }
    }
    out
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let text = match std::fs::read_to_string(&cli.inventory) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ssh-floor: {}: {e}", cli.inventory.display());
            return ExitCode::from(2);
        }
    };
    let inv: Value = match serde_norway::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("ssh-floor: {}: {e}", cli.inventory.display());
            return ExitCode::from(2);
        }
    };
    // The lab's one host key, from the known-hosts file beside the inventory.
    let kh = cli
        .inventory
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join("lab-known_hosts");
    let key = std::fs::read_to_string(&kh).ok().and_then(|t| {
        let line = t.lines().next()?;
        let (_, k) = line.split_once(' ')?;
        PublicKey::from_openssh(k.trim()).ok()
    });
    let Some(key) = key else {
        eprintln!("ssh-floor: no host key in {}", kh.display());
        return ExitCode::from(2);
    };
    let cmd_text = match &cli.commands {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("ssh-floor: {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
        None => netgw_labs::bench::NETGW_IOS_CHANGE.to_owned(),
    };
    let cmds: Arc<Vec<String>> = Arc::new(
        cmd_text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect(),
    );
    let hosts = hosts(&inv);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ssh-floor: runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let n = hosts.len();
    let conc = cli.concurrency.max(1);
    let limit = Duration::from_secs(cli.host_timeout);
    let (ok, errors, wall) = rt.block_on(async move {
        let config = Arc::new(client::Config {
            nodelay: true,
            ..Default::default()
        });
        let sem = Arc::new(Semaphore::new(conc));
        let t0 = Instant::now();
        let mut set = JoinSet::new();
        for h in hosts {
            let (sem, config, cmds, key) = (sem.clone(), config.clone(), cmds.clone(), key.clone());
            set.spawn(async move {
                let _p = sem.acquire_owned().await;
                let r = tokio::time::timeout(limit, run_host(&h, key, config, &cmds))
                    .await
                    .unwrap_or_else(|_| Err(format!("timed out after {limit:?}")));
                (h.name, r)
            });
        }
        let (mut ok, mut errors) = (0usize, Vec::new());
        while let Some(r) = set.join_next().await {
            match r {
                Ok((_, Ok(_))) => ok += 1,
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
        "commands_per_host": cmds_len(&cmd_text),
        "errors": errors.iter().take(10).collect::<Vec<_>>(),
    });
    println!("{out}");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn cmds_len(t: &str) -> usize {
    t.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .count()
}
