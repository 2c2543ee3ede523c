//! `netgw trigger`, the CI client of `netgw serve`: a selection posted with a token, `--wait`
//! following the run's events to its end, and the exit status a converge would give.

use crate::common::ui_lab::{OPS, UiLab, VIEWER};
use std::process::Command;

fn trigger(base: &str, args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .args(["trigger", "--url", base])
        .args(args)
        .env_remove("NETGW_TOKEN")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), text)
}

#[test]
fn trigger_waits_for_the_run_and_exits_with_its_outcome() {
    // leaf2 refuses every commit: a converge over it fails that node.
    let lab = UiLab::start(vec![(
        "leaf2".into(),
        "reject-commit".into(),
        "% Invalid input".into(),
    )]);
    let base = lab.base.clone();

    let (code, text) = trigger(
        &base,
        &["--token", OPS, "--wait", "--why-run", "leaf*:!leaf2"],
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("leaf1: success (1/1 resources updated)"),
        "{text}"
    );
    assert!(
        !text.contains("spine1") && !text.contains("leaf2:"),
        "{text}"
    );
    assert!(text.contains("1 node(s), 1 succeeded, 0 failed"), "{text}");

    let (code, text) = trigger(&base, &["--token", OPS, "--wait", "leaf*"]);
    assert_eq!(code, 1, "a failed node fails the job: {text}");
    assert!(text.contains("leaf2: failed:"), "{text}");
    assert!(text.contains("leaf1: success"), "{text}");

    let (code, text) = trigger(
        &base,
        &["--token", OPS, "--wait", "--format", "json", "spine1"],
    );
    assert_eq!(code, 0, "{text}");
    let run: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(run["report"]["nodes"][0]["name"], "spine1", "{text}");

    // Refusals are usage errors naming the reason: a read-only token, a typo in the selection.
    let (code, text) = trigger(&base, &["--token", VIEWER, "spine1"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("403"), "{text}");
    let (code, text) = trigger(&base, &["--token", OPS, "all:!spine"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("did you mean host spine1?"), "{text}");
    assert!(!text.contains(OPS), "the token is never shown: {text}");
    // Without --wait: queued, exit 0 at once.
    let (code, text) = trigger(&base, &["--token", OPS, "--why-run", "spine1"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.starts_with("queued: run "), "{text}");
}
