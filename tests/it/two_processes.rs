//! Two `netgw converge` processes on the same node never interleave their device transactions
//! (issue 9): the node run lock (src/lock.rs) serialises them. The device is an Arista EOS simulated
//! by fake-switches over eAPI (a third-party peer), so what each process did is observable on it.
//!
//! Contention is made certain, not left to timing: the test holds the node's lock while it starts
//! both processes, waits until both report waiting for it, then releases it. Proof of no overlap:
//! each process logs (UTC, microseconds) when it took and released the lock, which brackets its whole
//! device session (connect .. close); the intervals must be disjoint, and exactly one process changed
//! the device: the other connected after the first one's commit and found everything up to date.
//! Also: with the lock held elsewhere and `--lock-timeout 1`, converge fails with a clear error
//! naming the lock file and its holder, and touches neither the device nor the store.

use crate::common;

use common::{FakeSwitches, eos_vlans, fake_switches, write};
use netgw::lock::NodeRunLock;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

struct Lab {
    _peer: FakeSwitches,
    dir: tempfile::TempDir,
    eapi_port: u16,
}

fn lab() -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let peer = fake_switches(
        json!([{"name": "eos1", "model": "arista_generic", "ssh_port": 0, "http_port": 0}]),
        &dir.path().join("fake-switches.log"),
    );
    let eapi_port = peer.ports["eos1"]["http_port"].as_u64().unwrap() as u16;
    let d = dir.path();
    write(
        d,
        "repo/nodes/eos1.json",
        r#"{"name":"eos1","run_list":["recipe[netdev::vlans]"],
            "normal":{"netdev":{"vlans":{"110":{"name":"lock_a"},"120":{"name":"lock_b"},"130":{"name":"lock_c"}}}}}"#,
    );
    write(
        d,
        "inventory.yml",
        &format!(
            r#"hosts:
  eos1:
    hostname: 127.0.0.1
    platform: arista_eos
    connection_options:
      eapi: {{port: {eapi_port}, extras: {{transport: http}}}}
defaults:
  username: admin
  password: admin
"#
        ),
    );
    Lab {
        _peer: peer,
        dir,
        eapi_port,
    }
}

fn converge(lab: &Lab, extra: &[&str]) -> Command {
    let d = lab.dir.path();
    let mut c = Command::new(env!("CARGO_BIN_EXE_netgw"));
    c.arg("--repo")
        .arg(d.join("repo"))
        .args(["--log", "netgw=info"])
        .args(["converge", "eos1", "--inventory"])
        .arg(d.join("inventory.yml"))
        .args(["--format", "json"])
        .args(extra)
        .env("NETGW_STATE_DIR", d.join("state"))
        .env_remove("NETGW_LOCK_DIR")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Drop ANSI escape sequences (in case the log is coloured anyway).
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A running process whose stderr lines arrive on a channel (and are kept for the end).
struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Proc {
    fn spawn(mut cmd: Command) -> Proc {
        let mut child = cmd.spawn().expect("starting netgw");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(plain(&line)).is_err() {
                    break;
                }
            }
        });
        Proc {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Wait (bounded) until a stderr line contains `needle`.
    fn wait_for(&mut self, needle: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        if self.seen.iter().any(|l| l.contains(needle)) {
            return true;
        }
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let hit = l.contains(needle);
                    self.seen.push(l);
                    if hit {
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
        false
    }

    /// Wait (bounded) for the exit; the report from stdout and every stderr line.
    fn finish(mut self, limit: Duration) -> (i32, Value, Vec<String>) {
        let deadline = Instant::now() + limit;
        let code = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st.code().unwrap_or(-1);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("netgw did not finish within {limit:?}: {:#?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        // The reader thread ends at EOF; collect what it still holds.
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(l);
        }
        let report = serde_json::from_str(&out).unwrap_or(Value::Null);
        (code, report, std::mem::take(&mut self.seen))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The log's RFC 3339 timestamp (fixed width, UTC) of the first line containing `needle`.
fn stamp(lines: &[String], needle: &str) -> String {
    let line = lines
        .iter()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no log line {needle:?} in {lines:#?}"));
    let ts = line.split_whitespace().next().unwrap().to_owned();
    assert!(
        ts.len() >= 20 && ts.ends_with('Z') && ts.as_bytes()[4] == b'-',
        "not a UTC timestamp: {line}"
    );
    ts
}

fn lock_file(dir: &Path) -> PathBuf {
    dir.join("eos1.run.lock")
}

#[test]
fn two_processes_take_turns_on_one_device() {
    let lab = lab();
    let before = eos_vlans(lab.eapi_port);
    assert!(!before.iter().any(|v| v.starts_with("110:")), "{before:?}");
    let locks = lab.dir.path().join("shared-locks");

    // Hold the node's lock so both processes are certain to contend for it.
    let held = NodeRunLock::try_acquire(&lock_file(&locks), "test-gate")
        .unwrap()
        .expect("lock free at start");
    let lock_dir = locks.display().to_string();
    let mut a = Proc::spawn(converge(&lab, &["--lock-dir", &lock_dir]));
    let mut b = Proc::spawn(converge(&lab, &["--lock-dir", &lock_dir]));
    let waiting = "waiting for its lock";
    assert!(
        a.wait_for(waiting, Duration::from_secs(60)),
        "process A never waited: {:#?}",
        a.seen
    );
    assert!(
        b.wait_for(waiting, Duration::from_secs(60)),
        "process B never waited: {:#?}",
        b.seen
    );
    drop(held);

    let (code_a, rep_a, log_a) = a.finish(Duration::from_secs(120));
    let (code_b, rep_b, log_b) = b.finish(Duration::from_secs(120));
    let text = format!("A: {rep_a:#}\n{log_a:#?}\nB: {rep_b:#}\n{log_b:#?}");
    assert_eq!((code_a, code_b), (0, 0), "{text}");
    for r in [&rep_a, &rep_b] {
        let n = &r["nodes"][0];
        assert_eq!(n["status"], "success", "{text}");
        assert_eq!(n["steps"][0]["step"], "lock", "{text}");
    }

    // Each process's [lock taken, lock released] brackets its device session; they are disjoint.
    let (a0, a1) = (
        stamp(&log_a, "node lock acquired"),
        stamp(&log_a, "node lock released"),
    );
    let (b0, b1) = (
        stamp(&log_b, "node lock acquired"),
        stamp(&log_b, "node lock released"),
    );
    assert!(a0 < a1 && b0 < b1, "{text}");
    assert!(
        a1 <= b0 || b1 <= a0,
        "device sessions overlapped: A [{a0}, {a1}], B [{b0}, {b1}]\n{text}"
    );
    println!("TWO-PROCESSES A holds [{a0}, {a1}], B holds [{b0}, {b1}]: disjoint");

    // The device shows it too: the first process made the three changes, the second connected after
    // that commit and found nothing to do. Interleaved sessions would both have planned them.
    let (first, second) = if a0 < b0 {
        (&rep_a, &rep_b)
    } else {
        (&rep_b, &rep_a)
    };
    assert_eq!(first["nodes"][0]["updated"], 3, "{text}");
    assert_eq!(second["nodes"][0]["updated"], 0, "{text}");
    assert!(
        second["nodes"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] == "up-to-date"),
        "{text}"
    );
    let after = eos_vlans(lab.eapi_port);
    for v in ["110:lock_a", "120:lock_b", "130:lock_c"] {
        assert!(after.contains(&v.to_string()), "{after:?}");
    }
}

#[test]
fn a_node_locked_by_another_process_fails_clearly() {
    let lab = lab();
    let before = eos_vlans(lab.eapi_port);
    // The default lock directory: the repo's, in the state directory (never in the repo).
    let d = lab.dir.path();
    let file = lock_file(&netgw::state::lock_dir(&d.join("state"), &d.join("repo")));
    let held = NodeRunLock::try_acquire(&file, "other-gateway")
        .unwrap()
        .expect("lock free at start");

    let (code, report, log) =
        Proc::spawn(converge(&lab, &["--lock-timeout", "1"])).finish(Duration::from_secs(60));
    let text = format!("{report:#}\n{log:#?}");
    assert_eq!(
        code, 3,
        "a node failed on the gateway's side: exit 3\n{text}"
    );
    let n = &report["nodes"][0];
    assert_eq!(n["status"], "failed", "{text}");
    assert_eq!(n["error_kind"], "lock", "{text}");
    let e = n["error"].as_str().unwrap();
    assert!(
        e.contains("node eos1 is being converged by another process")
            && e.contains(&file.display().to_string())
            && e.contains(&format!("pid={}", std::process::id()))
            && e.contains("run=other-gateway"),
        "{e}"
    );
    assert_eq!(
        eos_vlans(lab.eapi_port),
        before,
        "the device was not touched"
    );
    assert!(
        !common::current_file(&d.join("state"), &d.join("repo"), "eos1").exists(),
        "no current state saved"
    );

    // `--lock-timeout 0` gives up at once; once released, the same command converges.
    let (code, report, _) =
        Proc::spawn(converge(&lab, &["--lock-timeout", "0"])).finish(Duration::from_secs(60));
    assert_eq!(code, 3);
    assert!(
        report["nodes"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("being converged by another process")),
        "{report:#}"
    );
    drop(held);
    let (code, report, log) =
        Proc::spawn(converge(&lab, &["--lock-timeout", "0"])).finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{report:#}\n{log:#?}");
    assert_eq!(report["nodes"][0]["updated"], 3, "{report:#}");
}
