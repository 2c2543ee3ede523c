//! The README's first command: scripts/demo.sh simulates the example fabric with netgw-lab and
//! converges it twice. The first run changes every node; the second finds everything up to date; nothing
//! is left behind in the user's state directory.

use crate::common;
use std::path::Path;
use std::process::Command;

#[test]
fn the_quick_start_converges_then_finds_everything_up_to_date() {
    let bin = Path::new(env!("CARGO_BIN_EXE_netgw"))
        .parent()
        .unwrap()
        .to_path_buf();
    assert!(
        bin.join("netgw-lab").exists(),
        "netgw-lab is not built next to netgw ({}); run `cargo build -p netgw-labs` (the workspace test command builds it)",
        bin.display()
    );
    let root = common::root();
    // Where the gateway's state would go by default: the demo must leave nothing there.
    let state_home = tempfile::tempdir().unwrap();
    let o = Command::new("bash")
        .arg(root.join("scripts/demo.sh"))
        .env("NETGW_BIN_DIR", &bin)
        .env("XDG_STATE_HOME", state_home.path())
        .env_remove("NETGW_STATE_DIR")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "demo failed:\n{out}\n{err}");
    let summaries: Vec<&str> = out.lines().filter(|l| l.starts_with("Run ")).collect();
    assert_eq!(summaries.len(), 2, "{out}");
    assert!(
        summaries[0].contains("6 node(s), 6 succeeded, 0 failed"),
        "{out}"
    );
    assert!(
        !summaries[0].contains(" 0/"),
        "the first run changes the devices: {out}"
    );
    assert!(
        summaries[1].contains("6 succeeded, 0 failed; 0/"),
        "the second run is up to date: {out}"
    );
    assert!(
        out.contains("Recipe: netdev::vlans") && out.contains("action create"),
        "{out}"
    );
    assert!(
        out.contains("netdev.vlans.100.name = \"servers-leaf\""),
        "{out}"
    );
    let left: Vec<_> = std::fs::read_dir(state_home.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "the demo left state behind: {left:?}");
}
