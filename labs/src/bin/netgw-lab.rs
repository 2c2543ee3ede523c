//! `netgw-lab up TOPOLOGY [--inventory-out FILE] [--base-port N] [--count N] [--fault NODE:KEY=VALUE]
//!  [--snmp-community C] [--snmp-inventory-version 2c|3] [--snmp-shared-port] [--no-snmp]
//!  [--clab [--lab-dir DIR] [--mgmt-loopback ADDR]]`
//!
//! Serves every node of a containerlab topology as a simulated device on 127.0.0.1 (and an SNMP agent
//! per device on UDP), writes the Nornir inventory netgw reads, prints one `READY` line, and runs until
//! SIGINT or SIGTERM, when it prints its device sessions (pairs of one device open together). On SIGUSR1
//! it prints one `STATS {json}` line: the round trips and commands the devices answered so far, and the
//! most sessions open at once since the previous line (docs/bench.md). With `--clab`, as containerlab would deploy it: each node on its own loopback
//! address (the management subnet mapped into 127/8) on its kind's real ports, and the lab directory
//! `clab-NAME/` with containerlab's files.

use clap::{Parser, Subcommand};
use netgw_labs::clab::ClabPlan;
use netgw_labs::lab::SnmpV3User;
use netgw_labs::{Lab, LabOptions};
use netgw_models::topology::Topology;
use std::io::IsTerminal;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
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
        /// Where to write netgw-lab's Nornir inventory (with lab-ca.pem and lab-known_hosts beside it;
        /// the directory is created). Default: netgw-lab-inventory.yml, or none with --clab.
        #[arg(long)]
        inventory_out: Option<PathBuf>,
        /// Deploy as containerlab would: every node on its own loopback address (172.20.20.N ->
        /// 127.20.20.N) on its kind's real ports (SSH 22, NETCONF 830, HTTPS 443, SNMP 161/udp; needs
        /// root), with containerlab's default credentials, and write the lab directory clab-NAME/
        /// (nornir-simple-inventory.yml, ansible-inventory.yml, topology-data.json, .tls/ca/ca.pem,
        /// known_hosts).
        #[arg(long)]
        clab: bool,
        /// With --clab: the lab directory (default: clab-NAME beside the topology file).
        #[arg(long, requires = "clab")]
        lab_dir: Option<PathBuf>,
        /// With --clab: the loopback network the management subnet maps to (default: the subnet with
        /// its first octet replaced by 127, e.g. 127.20.20.0 for 172.20.20.0/24).
        #[arg(long, requires = "clab")]
        mgmt_loopback: Option<Ipv4Addr>,
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
        /// reset-at-line, auth-fail, reject-commit, slow-commit-ms, reject-stage, slow-stage-ms,
        /// reject-confirm, slow-confirm-ms, snmp-no-answer; device settings on the same keys:
        /// archive-path, revert-minute-ms).
        #[arg(long = "fault")]
        faults: Vec<String>,
        /// The login every device accepts (with --clab: each kind's containerlab credentials instead).
        #[arg(long, default_value = "admin")]
        username: String,
        /// The password every device accepts (with --clab: each kind's containerlab credentials instead).
        #[arg(
            long,
            default_value = "admin",
            env = "NETGW_LAB_PASSWORD",
            hide_env_values = true
        )]
        password: String,
        /// No SNMP agents (and no `connection_options.snmp` in the inventory).
        #[arg(long)]
        no_snmp: bool,
        /// The agents' read-only SNMPv2c community.
        #[arg(long, default_value = netgw_labs::lab::DEFAULT_SNMP_COMMUNITY, env = "NETGW_LAB_SNMP_COMMUNITY", hide_env_values = true)]
        snmp_community: String,
        /// SNMPv3 user every agent accepts (authPriv, SHA or SHA-256 + AES-128).
        #[arg(long, default_value = "netgw-lab")]
        snmp_user: String,
        /// The SNMPv3 user's authentication protocol: SHA or SHA-256.
        #[arg(long, default_value = "SHA")]
        snmp_auth_proto: String,
        /// The SNMPv3 user's authentication password (at least 8 characters).
        #[arg(
            long,
            default_value = "netgw-lab-auth",
            env = "NETGW_LAB_SNMP_AUTH_KEY",
            hide_env_values = true
        )]
        snmp_auth_key: String,
        /// The SNMPv3 user's privacy (AES-128) password (at least 8 characters).
        #[arg(
            long,
            default_value = "netgw-lab-priv",
            env = "NETGW_LAB_SNMP_PRIV_KEY",
            hide_env_values = true
        )]
        snmp_priv_key: String,
        /// What the inventory's `connection_options.snmp` uses: `2c` (the community) or `3` (the user).
        #[arg(long, default_value = "2c", value_parser = ["2c", "3"])]
        snmp_inventory_version: String,
        /// One SNMP port for every device (community `COMMUNITY@NODE`, v3 context `NODE`). Default: a
        /// port per device, shared only when the open-file limit cannot hold a UDP socket per device.
        #[arg(long)]
        snmp_shared_port: bool,
    },
}

/// Below this, two sessions of one device open together are a client's close on its way to the device
/// after the next session started, not two sessions (the report at exit).
const SESSION_SLACK: std::time::Duration = std::time::Duration::from_millis(100);

/// Raise the open-file limit: every device holds a TCP listener and a UDP socket (its SNMP agent), plus
/// connections. With the privilege to (root), up to the kernel's `fs.nr_open`; otherwise to the hard
/// limit.
fn raise_nofile() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(1 << 20);
    let want = nr_open.min(1 << 20);
    let l = getrlimit(Resource::Nofile);
    if l.maximum.is_some_and(|m| m < want) {
        // Fails without CAP_SYS_RESOURCE; the hard limit below is the fallback.
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(want),
                maximum: Some(want),
            },
        );
    }
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
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let Cmd::Up {
        topology,
        inventory_out,
        clab,
        lab_dir,
        mgmt_loopback,
        base_port,
        count,
        eapi_http,
        faults,
        username,
        password,
        no_snmp,
        snmp_community,
        snmp_user,
        snmp_auth_proto,
        snmp_auth_key,
        snmp_priv_key,
        snmp_inventory_version,
        snmp_shared_port,
    } = Cli::parse().cmd;
    let (topo, plan) = match read_topology(&topology, clab, count, lab_dir, mgmt_loopback) {
        Ok(t) => t,
        Err(code) => return code,
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
        snmp: !no_snmp,
        snmp_community,
        snmp_v3: Some(SnmpV3User {
            user: snmp_user,
            auth_proto: snmp_auth_proto,
            auth_key: snmp_auth_key,
            priv_key: snmp_priv_key,
        }),
        snmp_inventory_v3: snmp_inventory_version == "3",
        snmp_shared: snmp_shared_port.then_some(true),
        clab: plan,
        ..LabOptions::default()
    };
    let lab = match Lab::start(&topo, opts).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("netgw-lab: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(code) = announce(
        &lab,
        &topology,
        topo.nodes.len(),
        inventory_out,
        clab,
        nofile,
    ) {
        return code;
    }
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("netgw-lab: SIGTERM handler: {e}");
            return ExitCode::from(1);
        }
    };
    let mut usr1 =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("netgw-lab: SIGUSR1 handler: {e}");
                return ExitCode::from(1);
            }
        };
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = usr1.recv() => print_counts(&lab),
        }
    }
    let (opened, max_open, overlaps) = lab.session_totals(SESSION_SLACK);
    eprintln!(
        "netgw-lab: {opened} device sessions, at most {max_open} open at once on one device, \
         {overlaps} pairs of sessions of one device open together longer than {} ms",
        SESSION_SLACK.as_millis()
    );
    drop(lab);
    ExitCode::SUCCESS
}

/// One `STATS {json}` line on stdout ([`netgw_labs::lab::LabCounts`]): what the devices answered so
/// far, and the most sessions open at once since the previous line. The benchmark sends SIGUSR1 before
/// and after each run and takes the difference.
fn print_counts(lab: &Lab) {
    match serde_json::to_string(&lab.counts()) {
        Ok(j) => println!("STATS {j}"),
        Err(e) => eprintln!("netgw-lab: counts: {e}"),
    }
}

/// The topology file, parsed, and with `--clab` containerlab's plan for it; usage errors exit 2.
fn read_topology(
    topology: &Path,
    clab: bool,
    count: usize,
    lab_dir: Option<PathBuf>,
    mgmt_loopback: Option<Ipv4Addr>,
) -> Result<(Topology, Option<ClabPlan>), ExitCode> {
    let text = match std::fs::read_to_string(topology) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("netgw-lab: {}: {e}", topology.display());
            return Err(ExitCode::from(2));
        }
    };
    let topo = match Topology::parse(&text) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("netgw-lab: {}: {e}", topology.display());
            return Err(ExitCode::from(2));
        }
    };
    if clab && count > 1 {
        eprintln!("netgw-lab: --count {count}: containerlab mode serves one copy of the topology");
        return Err(ExitCode::from(2));
    }
    if !clab {
        return Ok((topo, None));
    }
    // containerlab resolves paths against the topology file's absolute location.
    let abs = std::path::absolute(topology).unwrap_or_else(|_| topology.to_path_buf());
    let lab_dir = lab_dir.map(|d| std::path::absolute(&d).unwrap_or(d));
    match ClabPlan::new(&text, &topo, &abs, lab_dir.as_deref(), mgmt_loopback) {
        Ok(p) => Ok((topo, Some(p))),
        Err(e) => {
            eprintln!("netgw-lab: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// Writes the inventory (and with `--clab` the lab directory), then prints the `READY` line the
/// scripts wait for.
fn announce(
    lab: &Lab,
    topology: &Path,
    nodes: usize,
    inventory_out: Option<PathBuf>,
    clab: bool,
    nofile: Option<u64>,
) -> Result<(), ExitCode> {
    for s in &lab.skipped {
        tracing::warn!("{s}");
    }
    if lab.nodes.is_empty() {
        eprintln!(
            "netgw-lab: {}: no node to simulate ({} node(s), none of a kind netgw drives: {})",
            topology.display(),
            nodes,
            if lab.skipped.is_empty() {
                "the topology has no nodes".to_owned()
            } else {
                lab.skipped.join("; ")
            }
        );
        return Err(ExitCode::from(2));
    }
    let inventory_out = match inventory_out {
        Some(p) => Some(p),
        None if clab => None,
        None => Some(PathBuf::from("netgw-lab-inventory.yml")),
    };
    if let Some(path) = &inventory_out
        && let Err(e) = lab.write_inventory(path)
    {
        eprintln!("netgw-lab: {e}");
        return Err(ExitCode::from(1));
    }
    let schema = std::env::var("CLAB_NORNIR_PLATFORM_NAME_SCHEMA").ok();
    let lab_dir = if clab {
        match lab.write_clab(schema.as_deref()) {
            Ok(d) => format!(" lab-dir={}", d.display()),
            Err(e) => {
                eprintln!("netgw-lab: {e}");
                return Err(ExitCode::from(1));
            }
        }
    } else {
        String::new()
    };
    let (lo, hi) = (
        lab.nodes.iter().map(|n| n.port).min().unwrap_or(0),
        lab.nodes.iter().map(|n| n.port).max().unwrap_or(0),
    );
    let snmp_ports: Vec<u16> = lab.nodes.iter().filter_map(|n| n.snmp_port).collect();
    let shared = lab.nodes.iter().any(|n| n.snmp_key.is_some());
    let snmp = match (snmp_ports.iter().min(), snmp_ports.iter().max()) {
        (Some(a), _) if shared => format!(" snmp=udp:{a}(shared)"),
        (Some(a), Some(b)) => format!(" snmp=udp:{a}-{b}"),
        _ => String::new(),
    };
    println!(
        "READY nodes={}{lab_dir} inventory={} ports={lo}-{hi}{snmp} nofile={}",
        lab.nodes.len(),
        inventory_out.map_or("-".into(), |p| p.display().to_string()),
        nofile.map_or("?".into(), |n| n.to_string())
    );
    Ok(())
}
