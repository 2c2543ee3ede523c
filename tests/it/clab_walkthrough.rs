//! containerlab/README.md's walk-through, run as written: netgw-lab deploys the example fabric with
//! `--clab` (its nodes on 127.20.40.N, real ports), then netgw converges it through each file the lab
//! directory holds and through the topology. The first run changes the devices, every later one finds
//! them up to date.

use crate::common::root;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The shell block between `<!-- walkthrough -->` and `<!-- /walkthrough -->`, fences removed.
fn walkthrough() -> String {
    let readme = std::fs::read_to_string(root().join("containerlab/README.md")).unwrap();
    let start = readme
        .find("<!-- walkthrough -->")
        .expect("walk-through marker");
    let end = readme
        .find("<!-- /walkthrough -->")
        .expect("walk-through end marker");
    readme[start..end]
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// Kills the script's process group (netgw-lab runs in the background) on every path.
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.0 as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

#[test]
fn the_containerlab_walkthrough_works_as_written() {
    let bin = Path::new(env!("CARGO_BIN_EXE_netgw")).parent().unwrap();
    assert!(
        bin.join("netgw-lab").exists(),
        "netgw-lab is not built next to netgw; run `cargo build -p netgw-labs`"
    );
    // The repository layout the commands expect, in a scratch directory (the lab directory is
    // written beside the topology).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("containerlab")).unwrap();
    std::fs::copy(
        root().join("containerlab/netgw-fabric.clab.yml"),
        dir.path().join("containerlab/netgw-fabric.clab.yml"),
    )
    .unwrap();
    copy_dir(
        &root().join("examples/repo"),
        &dir.path().join("examples/repo"),
    );
    let _ = std::fs::remove_dir_all(dir.path().join("examples/repo/nodes/current"));
    let script = walkthrough();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = {
        use std::os::unix::process::CommandExt;
        Command::new("bash")
            .args(["-e", "-c", &script])
            .current_dir(dir.path())
            .env("PATH", path)
            .env_remove("CLAB_NORNIR_PLATFORM_NAME_SCHEMA")
            .stdin(Stdio::null())
            // Files, not pipes: the background netgw-lab would hold a pipe open after bash exits.
            .stdout(std::fs::File::create(dir.path().join("stdout")).unwrap())
            .stderr(std::fs::File::create(dir.path().join("stderr")).unwrap())
            .process_group(0)
            .spawn()
            .unwrap()
    };
    let group = Group(child.id());
    // A hang guard, not a timing assertion: a stuck script is killed and reported.
    let deadline = Instant::now() + Duration::from_secs(300);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(group);
    let status = child.wait().unwrap();
    let out = std::fs::read_to_string(dir.path().join("stdout")).unwrap();
    let err = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert!(
        status.success(),
        "walk-through failed:\n{script}\n{out}\n{err}"
    );
    let runs: Vec<&str> = out.lines().filter(|l| l.starts_with("Run ")).collect();
    assert_eq!(runs.len(), 4, "{out}\n{err}");
    assert!(
        runs.iter().all(|r| r.contains("6 succeeded, 0 failed")),
        "{out}"
    );
    assert!(
        !runs[0].contains("; 0/"),
        "the first run changes the devices: {out}"
    );
    assert!(
        runs[1..].iter().all(|r| r.contains("; 0/")),
        "then up to date: {out}"
    );
    let lab = dir.path().join("containerlab/clab-netgw-fabric");
    for f in [
        "nornir-simple-inventory.yml",
        "ansible-inventory.yml",
        "topology-data.json",
        ".tls/ca/ca.pem",
        "known_hosts",
    ] {
        assert!(lab.join(f).exists(), "{f}");
    }
}
