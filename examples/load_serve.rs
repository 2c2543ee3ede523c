//! Load test of `netgw serve` (loopback only, bounded in count and time): fires N triggers (default
//! 10,000) across a set of nodes from several concurrent clients, within at most a time limit
//! (default 60 s), while sampling the server's resident memory from /proc. Prints a summary.
//!
//! Devices: half the nodes point at a port nobody listens on (they fail at once), half at listeners
//! this program owns that accept and never answer (each run then lasts the inventory's operation
//! timeout, 1 s), so triggers keep arriving for nodes that are queued or running and coalesce.
//!
//! ```text
//! cargo build --release -p netgw --bin netgw --example load_serve
//! target/release/examples/load_serve --netgw target/release/netgw [--requests 10000] [--nodes 100]
//!     [--clients 32] [--seconds 60] [--spread 55]
//! ```
//! `scripts/load-serve.sh` does both.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const TOKEN: &str = "load-test-token";

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_owned())
}

fn rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let netgw = arg(&args, "--netgw", "target/release/netgw");
    let requests: usize = arg(&args, "--requests", "10000").parse()?;
    let nodes: usize = arg(&args, "--nodes", "100").parse()?;
    let clients: usize = arg(&args, "--clients", "32").parse()?;
    let seconds: u64 = arg(&args, "--seconds", "60").parse()?;
    // Paced: triggers spread evenly over `--spread` seconds (default 55: 10,000 a minute);
    // `--spread 0` sends them as fast as the clients can.
    let spread: f64 = arg(&args, "--spread", "55").parse()?;

    let dir = tempfile::tempdir()?;
    let d = dir.path();
    std::fs::create_dir_all(d.join("repo/nodes"))?;
    let closed = {
        let l = TcpListener::bind("127.0.0.1:0")?;
        l.local_addr()?.port()
    };
    let stall = TcpListener::bind("127.0.0.1:0")?;
    let stall_port = stall.local_addr()?.port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in stall.incoming().flatten() {
            held.push(s);
            // Bounded: drop the oldest (their runs have timed out long ago).
            if held.len() > 4096 {
                held.drain(..2048);
            }
        }
    });
    let mut inv = String::from("hosts:\n");
    let names: Vec<String> = (0..nodes).map(|i| format!("sw{i:04}")).collect();
    for (i, n) in names.iter().enumerate() {
        let port = if i % 2 == 0 { closed } else { stall_port };
        inv += &format!("  {n}:\n    connection_options: {{eapi: {{port: {port}}}}}\n");
    }
    inv += "defaults:\n  hostname: 127.0.0.1\n  platform: arista_eos\n  username: admin\n  password: admin\n  connection_options:\n    eapi: {extras: {transport: http}}\n  data:\n    netgw: {connect_timeout: 1, operation_timeout: 1}\n";
    std::fs::write(d.join("inventory.yml"), inv)?;
    std::fs::write(
        d.join("serve.yml"),
        format!(
            "inventory: inventory.yml\ndb: history.db\nrepo: repo\nretention: 1000\nshutdown_grace_secs: 5\ncancel_grace_secs: 2\ntokens:\n  - {{name: load, sha256: {}, roles: [trigger, read]}}\n",
            netgw::api::auth::token_hash_hex(TOKEN)
        ),
    )?;
    let mut child = Command::new(&netgw)
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(d.join("serve.yml"))
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(d.join("serve.log"))?))
        .spawn()?;
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut line)?;
    let base = line
        .trim()
        .strip_prefix("netgw serve: listening on ")
        .ok_or("netgw serve did not start")?
        .to_owned();

    // RSS sampler.
    let stop = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(std::sync::Mutex::new(Vec::<(f64, u64)>::new()));
    let t0 = Instant::now();
    let sampler = {
        let (stop, samples) = (stop.clone(), samples.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(kib) = rss_kib(pid) {
                    samples
                        .lock()
                        .unwrap()
                        .push((t0.elapsed().as_secs_f64(), kib));
                }
                std::thread::sleep(Duration::from_millis(250));
            }
        })
    };

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let next = Arc::new(AtomicUsize::new(0));
    let names = Arc::new(names);
    let start = Instant::now();
    let deadline = start + Duration::from_secs(seconds);
    let results = rt.block_on(async {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(clients)
            .build()
            .expect("http client");
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let (http, next, names, base) =
                (http.clone(), next.clone(), names.clone(), base.clone());
            tasks.push(tokio::spawn(async move {
                let mut codes: BTreeMap<u16, usize> = BTreeMap::new();
                let mut coalesced = 0usize;
                let mut runs = std::collections::HashSet::new();
                let mut lat = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= requests || Instant::now() >= deadline {
                        break;
                    }
                    let due = start + Duration::from_secs_f64(spread * i as f64 / requests as f64);
                    tokio::time::sleep_until(due.into()).await;
                    // Skewed: a few hot nodes get most triggers (as webhooks would).
                    let n = if i % 4 == 0 {
                        &names[i % names.len()]
                    } else {
                        &names[i % 8]
                    };
                    let t = Instant::now();
                    let r = http
                        .post(format!("{base}/v1/converge"))
                        .bearer_auth(TOKEN)
                        .json(&json!({"nodes": [n]}))
                        .send()
                        .await;
                    lat.push(t.elapsed().as_secs_f64());
                    match r {
                        Ok(r) => {
                            let code = r.status().as_u16();
                            *codes.entry(code).or_default() += 1;
                            if let Ok(v) = r.json::<Value>().await {
                                if v["nodes"].as_array().is_some_and(|a| !a.is_empty()) {
                                    runs.insert(
                                        v["run_id"].as_str().unwrap_or_default().to_owned(),
                                    );
                                }
                                coalesced += v["coalesced"].as_array().map_or(0, |a| a.len());
                            }
                        }
                        Err(_) => *codes.entry(0).or_default() += 1,
                    }
                }
                (codes, coalesced, runs.len(), lat)
            }));
        }
        let mut codes: BTreeMap<u16, usize> = BTreeMap::new();
        let (mut coalesced, mut runs, mut lat) = (0, 0, Vec::new());
        for t in tasks {
            if let Ok((c, co, r, l)) = t.await {
                for (k, v) in c {
                    *codes.entry(k).or_default() += v;
                }
                coalesced += co;
                runs += r;
                lat.extend(l);
            }
        }
        let m = http
            .get(format!("{base}/metrics"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .ok();
        let metrics = match m {
            Some(r) => r.text().await.unwrap_or_default(),
            None => String::new(),
        };
        (codes, coalesced, runs, lat, metrics)
    });
    let elapsed = t0.elapsed().as_secs_f64();
    let (codes, coalesced, runs, mut lat, metrics) = results;
    // Keep sampling while the last runs drain, then stop the server gracefully.
    std::thread::sleep(Duration::from_secs(3));
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let _ = child.wait();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();

    lat.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
            * 1000.0
    };
    let sent: usize = codes.values().sum();
    let s = samples.lock().unwrap();
    let kib: Vec<u64> = s.iter().map(|x| x.1).collect();
    println!(
        "triggers sent:      {sent} in {elapsed:.1} s ({:.0}/s)",
        sent as f64 / elapsed
    );
    println!("status codes:       {codes:?}");
    println!("runs created:       {runs} (nodes: {nodes}; coalesced node-triggers: {coalesced})");
    println!(
        "latency ms:         p50 {:.1}  p99 {:.1}  max {:.1}",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    if let (Some(first), Some(max), Some(last)) = (kib.first(), kib.iter().max(), kib.last()) {
        let q = |f: f64| s.get(((s.len() as f64) * f) as usize).map_or(0, |x| x.1);
        println!(
            "server RSS MiB:     start {:.1}  25% {:.1}  50% {:.1}  75% {:.1}  end {:.1}  max {:.1}  ({} samples)",
            *first as f64 / 1024.0,
            q(0.25) as f64 / 1024.0,
            q(0.5) as f64 / 1024.0,
            q(0.75) as f64 / 1024.0,
            *last as f64 / 1024.0,
            *max as f64 / 1024.0,
            s.len()
        );
    }
    for l in metrics.lines().filter(|l| {
        l.starts_with("netgw_triggers_total")
            || l.starts_with("netgw_runs_total")
            || l.starts_with("netgw_node_results_total")
            || l.starts_with("netgw_device_errors_total")
    }) {
        println!("  {l}");
    }
    Ok(())
}
