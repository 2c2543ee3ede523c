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

/// The README's first-site quick start, run as written: its `sh` blocks and the `$ ` commands of its
/// `console` blocks, in a fresh directory, against the netgw-lab it starts. Every output line the README
/// shows must be in what the commands print (run ids, timings and the lab's port aside).
#[test]
fn the_readme_quick_start_runs_as_written() {
    let bin = Path::new(env!("CARGO_BIN_EXE_netgw")).parent().unwrap();
    assert!(
        bin.join("netgw-lab").exists(),
        "netgw-lab is not built next to netgw; run `cargo build -p netgw-labs`"
    );
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let (script, shown) = quick_start(&readme);
    assert!(
        script.contains("netgw-lab up") && script.contains("netgw drift"),
        "{script}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .arg("-c")
        // No `set -e`: the README's drift step exits 1 on purpose; what each step prints is checked
        // below. The trap stops the lab whatever happens, so it never outlives the test.
        .arg(format!("trap 'kill $(jobs -p) 2>/dev/null' EXIT\n{script}"))
        .current_dir(dir.path())
        .env("PATH", path)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env_remove("NETGW_STATE_DIR")
        .env_remove("NETGW_REPO")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    let missing: Vec<&String> = shown.iter().filter(|l| !out.contains(l.as_str())).collect();
    assert!(
        missing.is_empty(),
        "README shows lines the quick start does not print: {missing:#?}\n--- printed:\n{out}\n{err}"
    );
}

/// The quick start section's commands as one bash script, and the output lines it shows. The lab is
/// waited for (a person reads its READY line), and the `curl` goes to the port the lab chose.
fn quick_start(readme: &str) -> (String, Vec<String>) {
    let start = readme
        .find("## First site")
        .expect("README has the quick start");
    let end = readme[start + 3..]
        .find("\n## ")
        .map_or(readme.len(), |e| start + 3 + e);
    let (mut script, mut shown) = (String::new(), Vec::new());
    let mut block: Option<&str> = None;
    let mut continued = false;
    for line in readme[start..end].lines() {
        if let Some(kind) = line.strip_prefix("```") {
            block = if block.is_some() { None } else { Some(kind) };
            continue;
        }
        let command = match block {
            Some("sh") => Some(line),
            Some("console") if continued => Some(line),
            Some("console") => line.strip_prefix("$ "),
            _ => None,
        };
        match command {
            Some(c) => {
                continued = c.ends_with('\\');
                script.push_str(
                    &c.replace("37785", "$(awk '/port:/{print $2; exit}' inventory.yml)"),
                );
                script.push('\n');
                if c.contains("netgw-lab up") {
                    script.push_str(
                        "for _ in $(seq 300); do grep -qs '^  sw1:' inventory.yml && break; sleep 0.1; done\n",
                    );
                }
            }
            None if block == Some("console") && !skipped_output(line) => {
                shown.push(line.trim().to_owned())
            }
            None => {}
        }
    }
    (script, shown)
}

/// Output lines that differ from run to run (run ids, timings), or that stand for lines left out.
fn skipped_output(line: &str) -> bool {
    let l = line.trim();
    l.is_empty() || l == "..." || l.starts_with("Run ")
}
