//! The harness the workspace's integration tests share (the `testing` feature; never in a product
//! build): where the repository is, and the fake-switches peer (`scripts/peers/fake-switches.sh`).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The workspace root: peers (`.peers/`), scripts and fixtures are found from here.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("drivers/ sits in the workspace root")
        .to_owned()
}

/// A fake-switches launcher process (scripts/peers/fake_switches_launcher.py), killed and reaped on
/// drop.
pub struct FakeSwitches {
    pub child: Child,
    /// The launcher's `READY` line: `{"<name>": {"ssh_port": N, "http_port": N}, ...}`.
    pub ports: Value,
}

impl Drop for FakeSwitches {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl FakeSwitches {
    /// The port `kind` (`ssh_port`, `http_port`) of switch `name`.
    pub fn port(&self, name: &str, kind: &str) -> u16 {
        let port = self.ports[name][kind].as_u64().unwrap_or_else(|| {
            panic!(
                "PEER BROKEN: the fake-switches launcher gave no {kind} for {name}: {}",
                self.ports
            )
        });
        u16::try_from(port).expect("a TCP port")
    }
}

/// Start fake-switches with `spec` (a JSON array of `{"name", "model", "ssh_port": 0, ...}`), its
/// stderr in `log`, and wait for the ports it listens on. Panics with the install command when the
/// peer is missing, and with the log when it does not come up within a minute.
pub fn fake_switches(spec: Value, log: &Path) -> FakeSwitches {
    let root = repo_root();
    let python = root.join(".peers/venv-fake-switches/bin/python");
    let install = root.join("scripts/peers/fake-switches.sh");
    assert!(
        python.exists(),
        "PEER MISSING: fake-switches is not installed ({} not found); run `{} install`",
        python.display(),
        install.display()
    );
    let mut child = Command::new(&python)
        .arg("-u")
        .arg(root.join("scripts/peers/fake_switches_launcher.py"))
        .arg(spec.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(log).expect("fake-switches log file"),
        ))
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "PEER MISSING: cannot start fake-switches ({e}); run `{} install`",
                install.display()
            )
        });
    let stdout = child.stdout.take().expect("piped stdout");
    // Owned by the guard from here on, so the process is killed and reaped on every path.
    let mut peer = FakeSwitches {
        child,
        ports: Value::Null,
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    loop {
        let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| {
            panic!(
                "PEER BROKEN: fake-switches did not print READY; reinstall with `{} install`.\nlog:\n{}",
                install.display(),
                std::fs::read_to_string(log).unwrap_or_default()
            )
        });
        if let Some(ports) = line.strip_prefix("READY ") {
            peer.ports = serde_json::from_str(ports).expect("the READY line is JSON");
            return peer;
        }
    }
}
