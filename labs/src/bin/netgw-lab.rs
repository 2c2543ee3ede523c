//! `netgw-lab up TOPOLOGY [--inventory-out FILE] [--base-port N] [--count N] [--fault NODE:KEY=VALUE]`
//!
//! Serves every node of a containerlab topology as a simulated device on 127.0.0.1, writes the Nornir
//! inventory netgw reads, prints one `READY` line, and runs until SIGINT or SIGTERM.

use clap::{Parser, Subcommand};
use netgw_labs::{Lab, LabOptions};
use netgw_models::topology::Topology;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "netgw-lab", about = "Simulated network devices for netgw")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Start simulated devices for a topology on loopback.
    Up {
        /// A containerlab topology (`*.clab.yml`).
        topology: PathBuf,
        /// Where to write the Nornir inventory (with lab-ca.pem and lab-known_hosts beside it).
        #[arg(long, default_value = "netgw-lab-inventory.yml")]
        inventory_out: PathBuf,
        /// First TCP port (consecutive per node); default: ports chosen by the OS.
        #[arg(long)]
        base_port: Option<u16>,
        /// Replicate the topology N times (benchmarks).
        #[arg(long, default_value_t = 1)]
        count: usize,
        /// Serve eAPI over plain HTTP instead of HTTPS.
        #[arg(long)]
        eapi_http: bool,
        /// Fault injection: NODE:KEY=VALUE (keys: latency-ms, reset-after-bytes, reset-at,
        /// auth-fail, reject-commit, slow-commit-ms).
        #[arg(long = "fault")]
        faults: Vec<String>,
        #[arg(long, default_value = "admin")]
        username: String,
        #[arg(long, default_value = "admin", env = "NETGW_LAB_PASSWORD")]
        password: String,
    },
}

/// Raise the open-file limit to its hard maximum: one listener per device, plus connections.
fn raise_nofile() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut l = getrlimit(Resource::Nofile);
    if let Some(max) = l.maximum {
        l.current = Some(max);
        setrlimit(Resource::Nofile, l).ok()?;
    }
    getrlimit(Resource::Nofile).current
}

fn parse_fault(s: &str) -> Option<(String, String, String)> {
    let (node, kv) = s.split_once(':')?;
    let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
    Some((node.to_owned(), k.to_owned(), v.to_owned()))
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let Cmd::Up {
        topology,
        inventory_out,
        base_port,
        count,
        eapi_http,
        faults,
        username,
        password,
    } = Cli::parse().cmd;
    let text = match std::fs::read_to_string(&topology) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("netgw-lab: {}: {e}", topology.display());
            return ExitCode::from(2);
        }
    };
    let topo = match Topology::parse(&text) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("netgw-lab: {}: {e}", topology.display());
            return ExitCode::from(2);
        }
    };
    let mut fault_list = Vec::new();
    for f in &faults {
        match parse_fault(f) {
            Some(x) => fault_list.push(x),
            None => {
                eprintln!("netgw-lab: --fault {f:?}: expected NODE:KEY=VALUE");
                return ExitCode::from(2);
            }
        }
    }
    let nofile = raise_nofile();
    let opts = LabOptions {
        base_port,
        count,
        eapi_https: !eapi_http,
        username,
        password,
        faults: fault_list,
    };
    let lab = match Lab::start(&topo, opts).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("netgw-lab: {e}");
            return ExitCode::from(1);
        }
    };
    for s in &lab.skipped {
        tracing::warn!("{s}");
    }
    if let Err(e) = lab.write_inventory(&inventory_out) {
        eprintln!("netgw-lab: {e}");
        return ExitCode::from(1);
    }
    let (lo, hi) = (
        lab.nodes.iter().map(|n| n.port).min().unwrap_or(0),
        lab.nodes.iter().map(|n| n.port).max().unwrap_or(0),
    );
    println!(
        "READY nodes={} inventory={} ports={lo}-{hi} nofile={}",
        lab.nodes.len(),
        inventory_out.display(),
        nofile.map_or("?".into(), |n| n.to_string())
    );
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("netgw-lab: SIGTERM handler: {e}");
            return ExitCode::from(1);
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    drop(lab);
    ExitCode::SUCCESS
}
