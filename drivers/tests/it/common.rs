//! The harness the drivers' peer tests share, over the workspace's (`netgw_drivers::testing`).

use netgw_drivers::testing::FakeSwitches;
use netgw_drivers::transport::Timeouts;
use netgw_drivers::transport::ssh::{HostKeyPolicy, SshAuth, SshTarget};
use netgw_models::secret::Secret;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

pub use netgw_drivers::testing::repo_root;

/// fake-switches running `spec`, with its log in a temp dir of its own (returned: tests keep their
/// known_hosts there too).
pub fn fake_switches(spec: Value) -> (FakeSwitches, TempDir) {
    let dir = tempfile::Builder::new()
        .prefix("netgw-fakesw-")
        .tempdir()
        .expect("temp dir");
    let peer = netgw_drivers::testing::fake_switches(spec, &dir.path().join("fake-switches.log"));
    (peer, dir)
}

/// The fake-switches spec of `switches` (name, model), each on SSH on a free port.
pub fn ssh_switches(switches: &[(&str, &str)]) -> Value {
    switches
        .iter()
        .map(|(name, model)| json!({"name": name, "model": model, "ssh_port": 0}))
        .collect()
}

/// A peer started by `scripts/peers/<name>.sh start DIR`; dropping it runs `SCRIPT stop DIR`.
pub struct Peer {
    pub script: PathBuf,
    pub dir: TempDir,
    /// The `KEY=value` lines the script wrote for the test.
    pub env: HashMap<String, String>,
}

impl Drop for Peer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.print_logs();
        }
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

impl Peer {
    /// The last lines of the peer's own logs, for a test that failed: a third-party server's side of
    /// a hang or refusal is in them, and the temp dir is gone after the test.
    fn print_logs(&self) {
        let Ok(entries) = std::fs::read_dir(self.dir.path()) else {
            return;
        };
        let mut logs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("log" | "out")))
            .collect();
        logs.sort();
        for log in logs {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(40)..];
            eprintln!("--- {} (last {} lines)", log.display(), tail.len());
            for line in tail {
                eprintln!("{line}");
            }
        }
    }
}

fn read_env(path: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect()
}

/// Run `SCRIPT start DIR EXTRA_ARGS...` (SCRIPT relative to the repository) and read `DIR/ENV_FILE`;
/// a peer that does not start fails the test with `install_hint`.
pub fn start_peer(script: &str, extra_args: &[&str], env_file: &str, install_hint: &str) -> Peer {
    let script = repo_root().join(script);
    let dir = tempfile::Builder::new()
        .prefix("netgw-peer-")
        .tempdir()
        .expect("temp dir");
    let out = Command::new(&script)
        .arg("start")
        .arg(dir.path())
        .args(extra_args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e}\nInstall the peer with: {install_hint}",
                script.display()
            )
        });
    // Build the guard first so a half-started peer is stopped too.
    let mut peer = Peer {
        script,
        dir,
        env: HashMap::new(),
    };
    assert!(
        out.status.success(),
        "peer failed to start: {}\nstdout: {}\nstderr: {}\nInstall the peer with: {install_hint}",
        peer.script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    peer.env = read_env(&peer.dir.path().join(env_file));
    peer
}

/// How long a test waits after the hello exchange before its first RPC to netconfd. yuma123's netconfd
/// never answers an RPC that reaches it in the same read as the client's hello (sent by hand:
/// `printf HELLO; printf RPC | ssh -s netconf` in one write gets the server's hello and nothing
/// more; with a pause between them the reply comes). netgw writes its hello alone, but under load the
/// relay (`netconf-subsystem`) can still deliver both in one read; the pause keeps them apart.
pub const NETCONFD_SETTLE: std::time::Duration = std::time::Duration::from_millis(300);

/// known_hosts with the private sshd's host keys: the connection verifies them for real.
pub fn netconfd_target(peer: &Peer, timeouts: Timeouts) -> SshTarget {
    let port: u16 = peer.env["NETCONFD_SSH_PORT"].parse().expect("port");
    let dir = peer.dir.path();
    let mut kh = String::new();
    for key in ["ssh_host_ed25519_key.pub", "ssh_host_rsa_key.pub"] {
        let pubkey = std::fs::read_to_string(dir.join(key)).expect("host key");
        let mut parts = pubkey.split_whitespace();
        let (alg, b64) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        kh.push_str(&format!("[127.0.0.1]:{port} {alg} {b64}\n"));
    }
    let known_hosts = dir.join("known_hosts.client");
    std::fs::write(&known_hosts, kh).expect("write known_hosts");
    SshTarget {
        device: "netconfd".into(),
        host: "127.0.0.1".into(),
        port,
        username: peer.env["NETCONFD_USER"].clone(),
        auth: SshAuth::Password(Secret::new(peer.env["NETCONFD_PASSWORD"].clone())),
        host_keys: HostKeyPolicy {
            known_hosts,
            accept_new: false,
        },
        timeouts,
    }
}
