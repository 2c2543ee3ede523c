//! The NX-OS driver's read path against fakenos' canned `cisco_nxos` outputs over SSH (docs/peers.md):
//! facts and observed VLANs / switchports, through the text fallback (fakenos has no `| json`).
//!
//! Needs `scripts/peers/fakenos.sh install` (a venv under .peers/); fails loudly without it.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::repo_root;
use netgw_drivers::driver::{Driver, Platform};
use netgw_drivers::nxos::NxosDriver;
use netgw_drivers::target::DeviceTarget;
use netgw_drivers::transport::Timeouts;
use netgw_models::resource::LinkMode;
use netgw_models::secret::Secret;
use tempfile::TempDir;

/// One fakenos process serving `nxos1` (cisco_nxos) on a free loopback port, killed on drop.
struct FakeNos {
    child: Child,
    port: u16,
    dir: TempDir,
}

impl FakeNos {
    fn start() -> FakeNos {
        let root = repo_root();
        let bin = root.join(".peers/venv-fakenos/bin/fakenos");
        let script = root.join("scripts/peers/fakenos.sh");
        assert!(
            bin.exists(),
            "PEER MISSING: fakenos is not installed ({} not found). Install it with `{} install`.",
            bin.display(),
            script.display()
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let dir = tempfile::Builder::new()
            .prefix("netgw-fakenos-")
            .tempdir()
            .expect("temp dir");
        let inv = dir.path().join("inventory.yaml");
        std::fs::write(
            &inv,
            format!(
                "default:\n  username: user\n  password: user\n  server:\n    plugin: ParamikoSshServer\n    configuration:\n      address: 127.0.0.1\n      timeout: 1\nhosts:\n  nxos1:\n    port: {port}\n    platform: cisco_nxos\n"
            ),
        )
        .expect("inventory");
        let log = std::fs::File::create(dir.path().join("fakenos.log")).expect("log");
        let child = Command::new(&bin)
            .arg("-i")
            .arg(&inv)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().expect("log")))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "PEER MISSING: cannot start fakenos ({e}); run `{} install`",
                    script.display()
                )
            });
        let mut f = FakeNos { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = f.child.try_wait() {
                let log =
                    std::fs::read_to_string(f.dir.path().join("fakenos.log")).unwrap_or_default();
                panic!("PEER BROKEN: fakenos exited ({status}).\nlog:\n{log}");
            }
            assert!(
                Instant::now() < deadline,
                "PEER BROKEN: fakenos not listening on {port} after 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        f
    }

    fn target(&self) -> DeviceTarget {
        let mut t = DeviceTarget::new("nxos1", Platform::Nxos, "127.0.0.1");
        t.port = Some(self.port);
        t.username = "user".into();
        t.password = Some(Secret::new("user"));
        t.known_hosts = self.dir.path().join("known_hosts");
        t.accept_new_host_keys = true;
        t.timeouts = Timeouts {
            connect: Duration::from_secs(15),
            idle: Duration::from_secs(60),
            operation: Duration::from_secs(15),
        };
        // fakenos loses the first characters of a line typed ahead while it still prints the
        // answer to the one before (seen on a loaded machine: `show interface switchport` arrived
        // as `how interface switchport`); a real NX-OS buffers them. Line by line, as for a console
        // server that drops typed-ahead input.
        t.options
            .insert("cli_batch".into(), serde_json::Value::Bool(false));
        t
    }
}

impl Drop for FakeNos {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn nxos_facts_and_observe_from_fakenos() {
    let peer = FakeNos::start();
    let mut d = NxosDriver::connect(&peer.target())
        .await
        .expect("connect to fakenos");
    assert!(d.capabilities().rollback, "checkpoints declared");

    let f = d.facts().await.expect("facts");
    assert_eq!(f.vendor.as_deref(), Some("cisco"));
    assert_eq!(f.platform.as_deref(), Some("nxos"));
    // fakenos' canned `show version` is an N5K (7.1(4)N1(1)); `show hostname` says n9k1.
    assert_eq!(f.platform_version.as_deref(), Some("7.1(4)N1(1)"));
    assert_eq!(f.serial.as_deref(), Some("FOC17153X08"));
    assert_eq!(f.hostname.as_deref(), Some("n9k1"));
    assert_eq!(f.uptime, Some(749 * 86400 + 15 * 3600 + 17 * 60 + 48));
    assert!(
        f.interfaces.contains_key("Ethernet106/1/1"),
        "{:?}",
        f.interfaces.keys()
    );
    assert_eq!(
        f.vlans.get(&1).and_then(|v| v.name.as_deref()),
        Some("default")
    );
    assert!(!f.lldp_neighbors.is_empty(), "lldp neighbours parsed");

    let obs = d.observe().await.expect("observe");
    assert_eq!(obs.vlans.len(), 1, "{:?}", obs.vlans);
    assert_eq!(obs.vlans[0].name.as_deref(), Some("default"));
    // `show interface` (text) has Vlan SVIs and Ethernet106/1/1; the switchport rows (Ethernet1/1-3)
    // apply only to links that exist, so nothing is made up.
    assert!(
        obs.links
            .iter()
            .any(|l| l.name == "Ethernet106/1/1" && l.enabled == Some(true) && l.mtu == Some(1500))
    );
    assert!(
        obs.links
            .iter()
            .any(|l| l.name == "Vlan1" && l.enabled == Some(false))
    );
    assert!(obs.links.iter().all(|l| l.mode != Some(LinkMode::Trunk)));
    d.close().await.unwrap();
}
