//! The harness the gateway's integration tests share: third-party peers, temp repos, netgw-lab and
//! the `netgw` binary.
#![allow(dead_code)]

pub mod cdp;
pub mod sim;
pub mod ui_lab;

pub use netgw::testing::mem_driver;

use netgw::store::chef::{ChefConfig, ChefServer};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The repository root, and fake-switches: written once for the workspace, in netgw-drivers.
pub use netgw_drivers::testing::{FakeSwitches, fake_switches, repo_root as root};

/// A device port that accepts connections and never answers (lives as long as the test process).
pub fn stalling_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().flatten() {
            held.push(s);
        }
    });
    port
}

/// A device port that refuses connections for as long as the test process runs. The socket stays
/// bound and never listens: a port only probed free and released was taken, now and then, by a server
/// another test started meanwhile, and the "dead" device answered HTTP 404.
pub fn refused_port() -> u16 {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    let port = s.local_addr().unwrap().as_socket().unwrap().port();
    // Held to the end of the process, like `stalling_port`'s listener.
    std::mem::forget(s);
    port
}

/// Run a `netgw ... --format json` command to its end: its exit code (-1 when killed), its stdout as
/// JSON (`Null` when it is not), and stdout and stderr as text for assertion messages.
pub fn run_json(cmd: &mut Command) -> (i32, Value, String) {
    let o = cmd.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    (
        o.status.code().unwrap_or(-1),
        serde_json::from_str(&out).unwrap_or(Value::Null),
        format!("{out}\n{err}"),
    )
}

pub fn write(dir: &Path, rel: &str, body: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

/// Data bag item `item` encrypted by Chef's own encryptor (vendored, run on Debian's ruby by
/// `scripts/peers/chef-attrs.sh encrypt`) in format `version` (1, 2 or 3) with the secret in
/// `secret_file`, as `knife data bag from file --secret-file` writes it.
pub fn chef_encrypt(version: u8, secret_file: &Path, item: &Value) -> Value {
    use std::io::Write;
    let mut child = Command::new("bash")
        .arg(root().join("scripts/peers/chef-attrs.sh"))
        .args(["encrypt", &version.to_string()])
        .arg(secret_file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running scripts/peers/chef-attrs.sh");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(item.to_string().as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "Chef's encryptor failed (run `scripts/peers/chef-attrs.sh install`): {stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = match version {
        1 => "aes-256-cbc",
        2 => "aes-256-cbc",
        _ => "aes-256-gcm",
    };
    for (k, x) in v.as_object().unwrap() {
        if k != "id" {
            assert_eq!(x["version"], version, "{k}: {x}");
            assert_eq!(x["cipher"], want, "{k}: {x}");
        }
    }
    v
}

/// Every file beneath `dir`.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

pub struct Goiardi {
    pub dir: tempfile::TempDir,
    pub url: String,
    pub admin_key: PathBuf,
}

/// A peer started by `scripts/peers/NAME.sh start DIR`, with the `KEY=VALUE` lines of the `NAME.env`
/// the script writes in DIR.
pub struct PeerEnv {
    pub dir: tempfile::TempDir,
    file: String,
    vars: String,
}

impl PeerEnv {
    /// A value of the env file; a missing key fails the test, naming the file.
    pub fn get(&self, k: &str) -> String {
        self.vars
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("{k} missing from {}", self.file))
            .to_owned()
    }
}

/// Start the peer `name` (`what` in messages) in a new directory; `watch`: the script also stops it
/// when this test process exits (`NETGW_PEER_WATCH_PID`).
pub fn start_peer(name: &str, what: &str, watch: bool) -> PeerEnv {
    let dir = tempfile::tempdir().unwrap();
    let script = root().join(format!("scripts/peers/{name}.sh"));
    let mut cmd = Command::new("bash");
    cmd.arg(&script).arg("start").arg(dir.path());
    if watch {
        cmd.env("NETGW_PEER_WATCH_PID", std::process::id().to_string());
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "PEER FAILED: {what} did not start (scripts/peers/{name}.sh install installs it): {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let file = format!("{name}.env");
    let vars = std::fs::read_to_string(dir.path().join(&file)).unwrap();
    PeerEnv { dir, file, vars }
}

fn goiardi_script() -> PathBuf {
    root().join("scripts/peers/goiardi.sh")
}

impl Goiardi {
    pub fn start() -> Goiardi {
        assert!(
            Path::new("/usr/bin/goiardi").exists(),
            "PEER MISSING: goiardi is not installed; run `scripts/peers/goiardi.sh install`"
        );
        let peer = start_peer("goiardi", "goiardi", false);
        Goiardi {
            url: peer.get("GOIARDI_URL"),
            admin_key: PathBuf::from(peer.get("GOIARDI_ADMIN_KEY")),
            dir: peer.dir,
        }
    }

    pub fn config(&self) -> ChefConfig {
        ChefConfig::new(&self.url, "admin", &self.admin_key)
    }

    pub fn server(&self) -> ChefServer {
        ChefServer::new(self.config()).unwrap()
    }
}

impl Drop for Goiardi {
    fn drop(&mut self) {
        let _ = Command::new(goiardi_script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

/// The peer's own answer (raw eAPI), not netgw's parsers.
pub fn eos_vlans(eapi_port: u16) -> Vec<String> {
    let body = serde_json::json!({"jsonrpc": "2.0", "method": "runCmds", "id": 1,
                      "params": {"version": 1, "cmds": ["show vlan"], "format": "json"}});
    let rt = tokio::runtime::Runtime::new().unwrap();
    let v: Value = rt.block_on(async {
        reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/command-api", eapi_port))
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    let mut out: Vec<String> = v["result"][0]["vlans"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, x)| format!("{id}:{}", x["name"].as_str().unwrap_or("")))
        .collect();
    out.sort();
    out
}

/// Start `netgw --log info serve --listen 127.0.0.1:0 --config CONFIG ARGS...` with stderr in `log`;
/// returns the process and the base URL its first line announces (`http://...` or `https://...`).
pub fn spawn_serve(config: &Path, args: &[&str], log: &Path) -> (Child, String) {
    spawn_serve_env(config, args, log, &[])
}

/// [`spawn_serve`] with `envs` added to serve's environment.
pub fn spawn_serve_env(
    config: &Path,
    args: &[&str],
    log: &Path,
    envs: &[(&str, &str)],
) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .envs(envs.iter().copied())
        .args([
            "--log",
            "info",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config",
        ])
        .arg(config)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(log).unwrap()))
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| {
            panic!(
                "netgw serve did not start:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            )
        });
    let base = line
        .strip_prefix("netgw serve: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (child, base)
}

/// The runtime of the lab tests: multi-threaded, two workers (the machine's two cores).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Where `netgw` run with the state directory `state` saves `node`'s current state for the repo at
/// `repo` (the default `--current-state state`).
pub fn current_file(state: &Path, repo: &Path, node: &str) -> PathBuf {
    netgw::state::current_dir(state, repo).join(format!("{node}.json"))
}

/// A netgw-lab of `topology` (YAML) with `opts`, and a temp dir holding the lab's `inventory.yml`.
pub async fn start_lab(
    topology: &str,
    opts: netgw_labs::lab::LabOptions,
) -> (netgw_labs::lab::Lab, tempfile::TempDir) {
    let topo = netgw_models::topology::Topology::parse(topology).unwrap();
    let lab = netgw_labs::lab::Lab::start(&topo, opts).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    lab.write_inventory(&dir.path().join("inventory.yml"))
        .unwrap();
    (lab, dir)
}

/// [`start_lab`] on a [`runtime`] of its own, for tests that run the `netgw` binary against the lab:
/// the runtime (keep it: dropping it stops the devices), the lab and the temp dir.
pub fn lab_with_options(
    topology: &str,
    opts: netgw_labs::lab::LabOptions,
) -> (
    tokio::runtime::Runtime,
    netgw_labs::lab::Lab,
    tempfile::TempDir,
) {
    let rt = runtime();
    let (lab, dir) = rt.block_on(start_lab(topology, opts));
    (rt, lab, dir)
}

/// [`lab_with_options`] with the default options.
pub fn lab_with_inventory(
    topology: &str,
) -> (
    tokio::runtime::Runtime,
    netgw_labs::lab::Lab,
    tempfile::TempDir,
) {
    lab_with_options(topology, netgw_labs::lab::LabOptions::default())
}

/// A throwaway PostgreSQL cluster on 127.0.0.1 (scripts/peers/postgres.sh), stopped when dropped.
pub struct Postgres {
    pub dir: tempfile::TempDir,
    /// `postgres://netgw:PASSWORD@127.0.0.1:PORT/netgw`
    pub url: String,
    pub password: String,
}

fn postgres_script() -> PathBuf {
    root().join("scripts/peers/postgres.sh")
}

impl Postgres {
    pub fn start() -> Postgres {
        let installed = std::fs::read_dir("/usr/lib/postgresql")
            .map(|d| d.flatten().any(|v| v.path().join("bin/initdb").exists()))
            .unwrap_or(false);
        assert!(
            installed,
            "PEER MISSING: PostgreSQL is not installed; run `scripts/peers/postgres.sh install`"
        );
        let peer = start_peer("postgres", "PostgreSQL", true);
        Postgres {
            url: peer.get("PG_URL"),
            password: peer.get("PG_PASSWORD"),
            dir: peer.dir,
        }
    }

    /// Stop the server (fast shutdown: every connection is cut) and start it again on the same port.
    /// Turns TLS on (the server's certificate chain and key as PEM files; the URL is unchanged: its
    /// default `sslmode=prefer` then uses TLS).
    pub fn enable_tls(&self, cert: &Path, key: &Path) {
        let out = Command::new("bash")
            .arg(postgres_script())
            .arg("tls")
            .arg(self.dir.path())
            .arg(cert)
            .arg(key)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "PostgreSQL did not take TLS: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn restart(&self) {
        let out = Command::new("bash")
            .arg(postgres_script())
            .arg("restart")
            .arg(self.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "PostgreSQL did not restart: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(postgres_script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

/// A CA and a certificate for 127.0.0.1 signed by it, as PEM: (CA, certificate chain, key).
pub fn test_pki() -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    (ca_cert.pem(), leaf.pem(), key.serialize_pem())
}
