//! A gateway killed with SIGKILL between commit and confirm leaves a Junos (NETCONF) device rolled
//! back by the device's own confirmed-commit timer.
//!
//! The real `netgw converge` process drives a netgw-lab Junos device whose replies are slowed
//! (`latency-ms`). The verifying reads travel with the confirmed commit, so the confirming commit
//! follows it at once; the device drops the session when the confirming commit arrives (`reset-at:
//! confirm`, never applying it), and the test kills the process with SIGKILL once that reset fired,
//! while it would reconnect. It checks the change is live and pending, then waits past the timer
//! (`--confirm-timeout 10`: Junos counts minutes, so one minute) and reads the running configuration
//! back: exactly as before the run.

use crate::common;

use netgw_labs::lab::{LabOptions, Sim};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigkill_between_commit_and_confirm_is_rolled_back_by_the_device() {
    let (rt, lab, dir) = common::lab_with_options(
        "name: kill\ntopology:\n  nodes:\n    jx1: {kind: juniper_vjunosswitch}\n",
        LabOptions {
            faults: vec![
                ("jx1".into(), "latency-ms".into(), "700".into()),
                ("jx1".into(), "reset-at".into(), "confirm".into()),
            ],
            ..LabOptions::default()
        },
    );
    let junos = match &lab.node("jx1").unwrap().sim {
        Sim::Junos(j) => j.clone(),
        _ => unreachable!(),
    };
    let inv = dir.path().join("inventory.yml");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("nodes")).unwrap();
    std::fs::write(
        repo.join("nodes/jx1.json"),
        r#"{"name":"jx1","run_list":["recipe[netdev::vlans]"],
            "normal":{"netdev":{"vlans":{"3071":{"name":"killed_mid_run"}}}}}"#,
    )
    .unwrap();
    let before = junos.running_xml();
    assert!(!before.contains("killed_mid_run"));

    let mut child = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(&repo)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .args([
            "converge",
            "jx1",
            "--confirm-timeout",
            "10",
            "--format",
            "json",
        ])
        .arg("--inventory")
        .arg(&inv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("netgw.log")).unwrap(),
        ))
        .spawn()
        .unwrap();
    // Wait (bounded) for the confirmed commit and the refused confirm, then SIGKILL the gateway
    // before it reconnects (a round trip of 700 ms at least).
    let faults = &lab.node("jx1").unwrap().device.faults;
    let t = Instant::now();
    let mut killed = false;
    let started = Instant::now();
    let mut killed_at = Duration::ZERO;
    while t.elapsed() < Duration::from_secs(90) {
        if junos.pending_confirm() && faults.reset_fired() {
            child.kill().unwrap(); // SIGKILL
            killed_at = started.elapsed();
            killed = true;
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "netgw exited ({status}) before the commit was seen:\n{}",
                std::fs::read_to_string(dir.path().join("netgw.log")).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = child.wait().unwrap();
    assert!(killed, "no confirmed commit within 90 s");
    assert!(!status.success(), "{status}");
    let committed = junos.running_xml();
    assert!(
        committed.contains("killed_mid_run") && committed.contains("3071"),
        "the change was live when the gateway died:\n{committed}"
    );
    assert!(junos.pending_confirm(), "nobody confirmed it");
    assert!(
        !crate::common::current_file(&dir.path().join("state"), &repo, "jx1").exists(),
        "no current state saved for a run that never confirmed"
    );

    // The device's own timer (one minute) puts the previous configuration back.
    let t = Instant::now();
    while junos.pending_confirm() && t.elapsed() < Duration::from_secs(100) {
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(!junos.pending_confirm(), "timer did not fire within 100 s");
    let after = junos.running_xml();
    assert_eq!(
        after, before,
        "rolled back to exactly the configuration before the run"
    );
    eprintln!(
        "SIGKILL {:.1}s after start, with the confirmed commit pending; the device rolled back by its own timer {:.1}s later",
        killed_at.as_secs_f64(),
        t.elapsed().as_secs_f64()
    );
    drop(lab);
    rt.shutdown_timeout(Duration::from_secs(5));
}
