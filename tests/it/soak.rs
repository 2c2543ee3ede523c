//! A short seeded sample of the soak (scripts/soak.sh, figures in docs/reliability.md): `netgw
//! serve` over a netgw-lab fabric of all five vendors, a converge a second with alternating VLAN
//! names and drift runs, sampled every 2 s. The sample passes when no figure grows beyond its
//! bound; its control, the same load on a history that keeps a million runs (pruning in effect
//! off), must fail on the history's rows, so the sample would see retention broken.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn bin_dir() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_netgw"))
        .parent()
        .unwrap()
        .to_path_buf();
    assert!(
        bin.join("netgw-lab").exists(),
        "netgw-lab is not built next to netgw ({}); run `cargo build -p netgw-labs`",
        bin.display()
    );
    bin
}

/// The soak script, `serve_retention` runs kept by serve, writing to `out`.
fn soak(out: &Path, serve_retention: &str) -> Child {
    Command::new("bash")
        .arg(common::root().join("scripts/soak.sh"))
        .env("SOAK_BIN_DIR", bin_dir())
        .env("SOAK_OUT", out)
        .env("SOAK_SECONDS", "75")
        .env("SOAK_SAMPLE", "2")
        .env("SOAK_INTERVAL", "1")
        .env("SOAK_PER_VENDOR", "2")
        .env("SOAK_BATCH", "4")
        .env("SOAK_RETENTION", "5")
        .env("SOAK_SERVE_RETENTION", serve_retention)
        .env("SOAK_DRIFT_EVERY", "10")
        .env("SOAK_SEED", "40")
        .env_remove("NETGW_STATE_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The summary's line for `metric`.
fn line<'a>(summary: &'a str, metric: &str) -> &'a str {
    summary
        .lines()
        .find(|l| l.split_whitespace().next() == Some(metric))
        .unwrap_or_else(|| panic!("no {metric} in the summary:\n{summary}"))
}

#[test]
fn a_short_soak_stays_within_its_bounds_and_the_count_catches_unpruned_history() {
    let dir = tempfile::tempdir().unwrap();
    let (ok_out, control_out) = (dir.path().join("ok"), dir.path().join("control"));
    // Both at once: each is mostly waiting, and the suite's time is what is short.
    let ok = soak(&ok_out, "5");
    let control = soak(&control_out, "1000000");
    let (ok, control) = (
        ok.wait_with_output().unwrap(),
        control.wait_with_output().unwrap(),
    );

    let text = |o: &std::process::Output| {
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    assert!(
        ok.status.success(),
        "the soak sample failed:\n{}",
        text(&ok)
    );
    let summary = std::fs::read_to_string(ok_out.join("summary.txt")).unwrap();
    for m in [
        "serve_rss_kib",
        "serve_fds",
        "serve_threads",
        "db_bytes",
        "history_runs",
        "history_rows",
        "state_bytes",
        "latency_ms",
        "serve_cpu_ms_per_run",
        "lab_rss_kib",
    ] {
        assert!(line(&summary, m).ends_with(" ok"), "{summary}");
    }
    assert!(summary.contains("failed 0"), "{summary}");
    let csv = std::fs::read_to_string(ok_out.join("soak.csv")).unwrap();
    assert!(csv.lines().count() > 25, "too few samples:\n{csv}");

    // The control: the same load, the history unpruned; the runs and rows outgrow their bounds.
    assert_eq!(control.status.code(), Some(1), "{}", text(&control));
    let summary = std::fs::read_to_string(control_out.join("summary.txt")).unwrap();
    assert!(
        line(&summary, "history_runs").ends_with("EXCEEDED"),
        "{summary}"
    );
    assert!(
        line(&summary, "history_rows").ends_with("EXCEEDED"),
        "{summary}"
    );
}
