//! `ssh-floor --inventory FILE [--platform ios|nxos] [--concurrency N] [--commands FILE]`
//!
//! The benchmark's CLI floor (docs/bench.md): the least any tool must do to drive the IOS or NX-OS
//! simulator over SSH. For every `ssh` host of a netgw-lab inventory: TCP connect, key exchange, host key
//! checked against the lab's known-hosts key (loaded once), password authentication, PTY + shell, then
//! each write of the list sent in turn (one command, or several written at once), waiting only for
//! each command's prompt (`host#`, `host(config...)#`). No parsing, no planning, no state saved. The default list is what one changing
//! `netgw converge` sends to a device of the platform (`labs/bench/floors/`, checked by
//! tests/it/bench_floor.rs). Runtime, concurrency and output: `netgw_labs::floor`.

use clap::Parser;
use netgw_labs::bench::{self, FloorCall};
use netgw_labs::floor::{self, FloorArgs, FloorHost};
use russh::ChannelMsg;
use russh::client;
use russh::keys::PublicKey;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "ssh-floor",
    about = "Bare russh client: connect, auth, commands (bench floor)"
)]
struct Cli {
    #[command(flatten)]
    floor: FloorArgs,
    /// Whose converge to replay: `ios` or `nxos`.
    #[arg(long, default_value = "ios")]
    platform: String,
    /// Commands, one per line (`#` comments and blank lines skipped) instead of the platform's list.
    #[arg(long)]
    commands: Option<PathBuf>,
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

/// Waits for `n` prompts: the simulator answers each line of a write in a message of its own that
/// ends in the next prompt.
async fn read_prompts(ch: &mut russh::Channel<client::Msg>, n: usize) -> Result<usize, String> {
    let mut buf = Vec::new();
    let mut seen = 0;
    loop {
        match ch.wait().await {
            Some(ChannelMsg::Data { data }) => {
                buf.extend_from_slice(&data);
                if at_prompt(&buf) {
                    seen += 1;
                    if seen >= n {
                        return Ok(buf.len());
                    }
                    buf.clear();
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
    h: FloorHost,
    key: PublicKey,
    config: Arc<client::Config>,
    cmds: Arc<Vec<Vec<String>>>,
) -> Result<(), String> {
    let handle = floor::ssh_connect(&h, key, config)
        .await
        .map_err(|e| e.to_string())?;
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
    read_prompts(&mut ch, 1).await?;
    for write in cmds.iter() {
        let mut bytes = String::new();
        for c in write {
            bytes.push_str(c);
            bytes.push('\n');
        }
        ch.data(bytes.as_bytes())
            .await
            .map_err(|e| format!("send {write:?}: {e}"))?;
        read_prompts(&mut ch, write.len())
            .await
            .map_err(|e| format!("{write:?}: {e}"))?;
    }
    let _ = ch.data(&b"exit\n"[..]).await;
    let _ = ch.eof().await;
    floor::ssh_bye(handle).await;
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let floor = match &cli.commands {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => bench::parse_lines(&t),
            Err(e) => {
                eprintln!("ssh-floor: {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
        None => match cli.platform.as_str() {
            "ios" => bench::ios(),
            "nxos" => bench::nxos(),
            other => {
                eprintln!("ssh-floor: --platform {other}: ios or nxos");
                return ExitCode::from(2);
            }
        },
    };
    let cmds: Vec<Vec<String>> = floor
        .calls
        .into_iter()
        .filter_map(|c| match c {
            FloorCall::Lines(l) => Some(l),
            _ => None,
        })
        .collect();
    floor::run_ssh("ssh-floor", &cli.floor, "ssh", cmds, run_host)
}
