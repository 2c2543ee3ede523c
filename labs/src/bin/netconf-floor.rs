//! `netconf-floor --inventory FILE [--concurrency N]`
//!
//! The benchmark's NETCONF floor (docs/bench.md): the least any tool must do to drive the Junos
//! simulator. For every `netconf` host of a netgw-lab inventory: TCP connect, key exchange, host key
//! checked against the lab's key, password authentication, the `netconf` subsystem, the server's hello
//! read, then each write of `labs/bench/floors/junos.txt` (what one changing `netgw converge` sends,
//! checked by tests/it/bench_floor.rs) in turn: the client hello in end-of-message framing, chunked
//! framing after it when both hellos say base:1.1 (RFC 6242), then the RPCs of each write sent at once
//! and one reply read per RPC. No XML parsing, no planning, no state saved.

use clap::Parser;
use futures::{SinkExt, StreamExt};
use netgw_labs::bench::{self, FloorCall};
use netgw_labs::floor::{self, FloorArgs, FloorHost};
use netgw_transport::netconf::{Framing, NetconfCodec};
use russh::client;
use russh::keys::PublicKey;
use std::process::ExitCode;
use std::sync::Arc;
use tokio_util::codec::Framed;

#[derive(Parser)]
#[command(
    name = "netconf-floor",
    about = "Bare NETCONF client: connect, auth, the Junos converge's RPCs (bench floor)"
)]
struct Cli {
    #[command(flatten)]
    floor: FloorArgs,
}

const BASE11: &str = "urn:ietf:params:netconf:base:1.1";

async fn run_host(
    h: FloorHost,
    key: PublicKey,
    config: Arc<client::Config>,
    writes: Arc<Vec<Vec<String>>>,
) -> Result<(), String> {
    let handle = floor::ssh_connect(&h, key, config)
        .await
        .map_err(|e| e.to_string())?;
    let ch = handle
        .channel_open_session()
        .await
        .map_err(|e| format!("open channel: {e}"))?;
    ch.request_subsystem(true, "netconf")
        .await
        .map_err(|e| format!("subsystem: {e}"))?;
    let mut framed = Framed::new(ch.into_stream(), NetconfCodec::default());
    let server_hello = framed
        .next()
        .await
        .ok_or("closed before the hello")?
        .map_err(|e| format!("hello: {e}"))?;
    let chunked = String::from_utf8_lossy(&server_hello).contains(BASE11);
    let run_id = bench::fresh_run_id();
    let mut locked = false;
    for (i, write) in writes.iter().enumerate() {
        let write: Vec<String> = write
            .iter()
            .map(|m| m.replace(bench::RUN_ID, &run_id))
            .collect();
        for m in &write {
            framed
                .feed(m.as_str())
                .await
                .map_err(|e| format!("send write {i}: {e}"))?;
        }
        SinkExt::<&str>::flush(&mut framed)
            .await
            .map_err(|e| format!("send write {i}: {e}"))?;
        if i == 0 {
            // The client hello has no reply; the framing changes after it.
            if chunked && write.iter().any(|m| m.contains(BASE11)) {
                framed.codec_mut().set_framing(Framing::Chunked);
            }
            continue;
        }
        for m in &write {
            let reply = framed
                .next()
                .await
                .ok_or_else(|| format!("closed before a reply to write {i}"))?
                .map_err(|e| format!("reply to write {i}: {e}"))?;
            // netgw unlocks before it locks (a lock its session may hold) and expects the refusal.
            let expected_refusal = !locked && m.contains("<unlock>");
            locked |= m.contains("<lock>");
            if !expected_refusal && reply.windows(11).any(|w| w == b"<rpc-error>") {
                return Err(format!(
                    "write {i}: rpc-error: {}",
                    String::from_utf8_lossy(&reply)
                ));
            }
        }
    }
    floor::ssh_bye(handle).await;
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let writes: Vec<Vec<String>> = bench::junos()
        .calls
        .into_iter()
        .filter_map(|c| match c {
            FloorCall::Netconf(m) => Some(m),
            _ => None,
        })
        .collect();
    floor::run_ssh("netconf-floor", &cli.floor, "netconf", writes, run_host)
}
