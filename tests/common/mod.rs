//! Helpers shared by the end-to-end tests: third-party peers and temp repos.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub struct FakeSwitches {
    pub child: Child,
    pub ports: Value,
}

impl Drop for FakeSwitches {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn fake_switches(spec: Value, log: &Path) -> FakeSwitches {
    let python = root().join(".peers/venv-fake-switches/bin/python");
    assert!(
        python.exists(),
        "PEER MISSING: fake-switches is not installed; run `scripts/peers/fake-switches.sh install`"
    );
    let mut child = Command::new(&python)
        .arg("-u")
        .arg(root().join("scripts/peers/fake_switches_launcher.py"))
        .arg(spec.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(log).unwrap()))
        .spawn()
        .expect("PEER MISSING: cannot start fake-switches");
    let stdout = child.stdout.take().unwrap();
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
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!(
                    "PEER BROKEN: fake-switches did not start:\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                )
            });
        if let Some(p) = line.strip_prefix("READY ") {
            peer.ports = serde_json::from_str(p).unwrap();
            return peer;
        }
    }
}

pub fn write(dir: &Path, rel: &str, body: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}
