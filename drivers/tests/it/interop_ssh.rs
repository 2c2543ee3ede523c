//! SSH transport against real third-party peers (docs/peers.md): OpenSSH's sshd and fake-switches.
//!
//! Every test starts its own peer (temp dir, free port) and a guard stops it on drop, so tests run in
//! parallel and leave nothing behind. A missing peer FAILS the test with the command that installs it:
//!
//!   scripts/peers/sshd.sh install            (openssh-server + the netgwtest user; needs root)
//!   scripts/peers/fake-switches.sh install   (python venv under .peers/)

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::{self, repo_root};
use netgw_drivers::transport::Timeouts;
use netgw_drivers::transport::ssh::{
    CliMode, CliPlatform, HostKeyPolicy, PlatformKind, SshAuth, SshError, SshSession, SshTarget,
};
use netgw_models::secret::Secret;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn timeouts(operation: Duration) -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(15),
        idle: Duration::from_secs(60),
        operation,
    }
}

// ---------------------------------------------------------------------------------------------------
// Peers

/// A private sshd (scripts/peers/sshd.sh), stopped by PID on drop.
struct Sshd {
    dir: TempDir,
    port: u16,
    user: String,
    password: String,
}

impl Sshd {
    fn start() -> Sshd {
        let script = repo_root().join("scripts/peers/sshd.sh");
        let dir = tempfile::Builder::new()
            .prefix("netgw-sshd-")
            .tempdir()
            .expect("temp dir");
        let out = Command::new("bash")
            .arg(&script)
            .arg("start")
            .arg(dir.path())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        if !out.status.success() {
            panic!(
                "PEER MISSING: private sshd did not start. Install it with `{} install` (as root).\n\
                 stdout: {}\nstderr: {}",
                script.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let env = std::fs::read_to_string(dir.path().join("sshd.env")).expect("sshd.env");
        let vars: HashMap<&str, &str> = env.lines().filter_map(|l| l.split_once('=')).collect();
        Sshd {
            port: vars["SSHD_PORT"].parse().expect("port"),
            user: vars["SSHD_USER"].to_owned(),
            password: vars["SSHD_PASSWORD"].to_owned(),
            dir,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn target(
        &self,
        device: &str,
        auth: SshAuth,
        known_hosts: &Path,
        accept_new: bool,
    ) -> SshTarget {
        SshTarget {
            device: device.into(),
            host: "127.0.0.1".into(),
            port: self.port,
            username: self.user.clone(),
            auth,
            host_keys: HostKeyPolicy {
                known_hosts: known_hosts.to_owned(),
                accept_new,
            },
            timeouts: timeouts(Duration::from_secs(10)),
        }
    }

    fn password(&self) -> SshAuth {
        SshAuth::Password(Secret::new(self.password.clone()))
    }

    /// A known_hosts file that already trusts this server's ed25519 key.
    fn trusted_known_hosts(&self) -> PathBuf {
        let public =
            std::fs::read_to_string(self.path("ssh_host_ed25519_key.pub")).expect("host key");
        let fields: Vec<&str> = public.split_whitespace().collect();
        let kh = self.path("known_hosts");
        std::fs::write(
            &kh,
            format!("[127.0.0.1]:{} {} {}\n", self.port, fields[0], fields[1]),
        )
        .expect("write known_hosts");
        kh
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(repo_root().join("scripts/peers/sshd.sh"))
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

/// fake-switches with the given (name, model) switches on SSH; stopped on drop.
struct FakeSwitches {
    peer: netgw_drivers::testing::FakeSwitches,
    _dir: TempDir,
}

impl FakeSwitches {
    fn start(switches: &[(&str, &str)]) -> FakeSwitches {
        let (peer, dir) = common::fake_switches(common::ssh_switches(switches));
        FakeSwitches { peer, _dir: dir }
    }

    fn ssh_port(&self, name: &str) -> u16 {
        self.peer.port(name, "ssh_port")
    }

    fn target(&self, name: &str, known_hosts: &Path) -> SshTarget {
        SshTarget {
            device: name.into(),
            host: "127.0.0.1".into(),
            port: self.ssh_port(name),
            username: "admin".into(),
            auth: SshAuth::Password(Secret::new("admin")),
            host_keys: HostKeyPolicy {
                known_hosts: known_hosts.to_owned(),
                accept_new: true,
            },
            timeouts: timeouts(Duration::from_secs(10)),
        }
    }
}

fn keygen(path: &Path, kind: &str, passphrase: &str) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", kind, "-N", passphrase, "-C", "t", "-f"])
        .arg(path)
        .status()
        .expect("PEER MISSING: ssh-keygen (scripts/peers/sshd.sh install)");
    assert!(status.success());
}

// ---------------------------------------------------------------------------------------------------
// OpenSSH

#[tokio::test]
async fn sshd_password_auth_exec_and_accept_new_records_key() {
    let sshd = Sshd::start();
    let kh = sshd.path("kh/known_hosts"); // directory does not exist yet
    let session = SshSession::connect(&sshd.target("srv1", sshd.password(), &kh, true))
        .await
        .expect("connect with accept_new");
    let out = session
        .exec("echo hello; echo oops >&2; exit 3")
        .await
        .expect("exec");
    assert_eq!(out.stdout, "hello\n");
    assert_eq!(out.stderr, "oops\n");
    assert_eq!(out.exit_status, Some(3));
    assert!(!out.success());
    session.close().await.expect("close");

    let recorded = std::fs::read_to_string(&kh).expect("known_hosts written");
    assert!(
        recorded.starts_with(&format!("[127.0.0.1]:{} ", sshd.port)),
        "{recorded}"
    );
    // Now trusted without accept_new.
    let again = SshSession::connect(&sshd.target("srv1", sshd.password(), &kh, false))
        .await
        .expect("recorded key is trusted");
    assert!(again.exec("true").await.expect("exec").success());
    again.close().await.expect("close");
}

#[tokio::test]
async fn sshd_ed25519_key_auth() {
    let sshd = Sshd::start();
    let kh = sshd.trusted_known_hosts();
    let auth = SshAuth::PublicKey {
        path: sshd.path("id_ed25519"),
        passphrase: None,
    };
    let s = SshSession::connect(&sshd.target("srv-ed", auth, &kh, false))
        .await
        .expect("ed25519 auth");
    assert_eq!(s.exec("whoami").await.unwrap().stdout.trim(), sshd.user);
    s.close().await.unwrap();
}

#[tokio::test]
async fn sshd_rsa_key_auth() {
    let sshd = Sshd::start();
    let kh = sshd.trusted_known_hosts();
    let auth = SshAuth::PublicKey {
        path: sshd.path("id_rsa"),
        passphrase: None,
    };
    let s = SshSession::connect(&sshd.target("srv-rsa", auth, &kh, false))
        .await
        .expect("rsa auth");
    assert!(s.exec("true").await.unwrap().success());
    s.close().await.unwrap();
}

#[tokio::test]
async fn sshd_encrypted_key_right_and_wrong_passphrase() {
    let sshd = Sshd::start();
    let kh = sshd.trusted_known_hosts();
    let key = sshd.path("id_enc");
    keygen(&key, "ed25519", "pass-phrase-1");
    let public = std::fs::read_to_string(sshd.path("id_enc.pub")).unwrap();
    let mut ak = std::fs::read_to_string(sshd.path("authorized_keys")).unwrap();
    ak.push_str(&public);
    std::fs::write(sshd.path("authorized_keys"), ak).unwrap();

    let good = SshAuth::PublicKey {
        path: key.clone(),
        passphrase: Some(Secret::new("pass-phrase-1")),
    };
    let s = SshSession::connect(&sshd.target("srv-enc", good, &kh, false))
        .await
        .expect("encrypted key with passphrase");
    s.close().await.unwrap();

    let bad = SshAuth::PublicKey {
        path: key,
        passphrase: Some(Secret::new("WRONG-secret-9")),
    };
    let err = SshSession::connect(&sshd.target("srv-enc", bad, &kh, false))
        .await
        .expect_err("wrong passphrase");
    assert!(matches!(err, SshError::PrivateKey { .. }), "{err:?}");
    let text = format!("{err} {err:?}");
    assert!(!text.contains("WRONG-secret-9"), "{text}");
}

#[tokio::test]
async fn sshd_wrong_password_is_a_typed_auth_error() {
    let sshd = Sshd::start();
    let kh = sshd.trusted_known_hosts();
    let auth = SshAuth::Password(Secret::new("not-the-Password-7"));
    let err = SshSession::connect(&sshd.target("srv-badpw", auth, &kh, false))
        .await
        .expect_err("wrong password");
    match &err {
        SshError::AuthRejected {
            device,
            username,
            method,
            ..
        } => {
            assert_eq!(device, "srv-badpw");
            assert_eq!(username, &sshd.user);
            assert_eq!(*method, "password");
        }
        other => panic!("expected AuthRejected, got {other:?}"),
    }
    assert!(!format!("{err} {err:?}").contains("not-the-Password-7"));
}

#[tokio::test]
async fn sshd_unknown_host_key_is_refused_without_accept_new() {
    let sshd = Sshd::start();
    let kh = sshd.path("empty_known_hosts");
    let err = SshSession::connect(&sshd.target("srv-unknown", sshd.password(), &kh, false))
        .await
        .expect_err("unknown key refused");
    match &err {
        SshError::HostKeyUnknown {
            host,
            port,
            fingerprint,
            ..
        } => {
            assert_eq!(host, "127.0.0.1");
            assert_eq!(*port, sshd.port);
            assert!(fingerprint.contains("SHA256:"), "{fingerprint}");
        }
        other => panic!("expected HostKeyUnknown, got {other:?}"),
    }
    assert!(!kh.exists(), "nothing recorded without accept_new");
}

#[tokio::test]
async fn sshd_changed_host_key_is_always_refused() {
    let sshd = Sshd::start();
    // Record a different ed25519 key for this host:port.
    let other = sshd.path("other_host_key");
    keygen(&other, "ed25519", "");
    let other_pub = std::fs::read_to_string(sshd.path("other_host_key.pub")).unwrap();
    let fields: Vec<&str> = other_pub.split_whitespace().collect();
    let kh = sshd.path("known_hosts");
    std::fs::write(
        &kh,
        format!(
            "# test\n[127.0.0.1]:{} {} {}\n",
            sshd.port, fields[0], fields[1]
        ),
    )
    .unwrap();
    let real_fp = String::from_utf8(
        Command::new("ssh-keygen")
            .arg("-lf")
            .arg(sshd.path("ssh_host_ed25519_key.pub"))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let real_fp = real_fp.split_whitespace().nth(1).unwrap().to_owned();

    for accept_new in [false, true] {
        let err = SshSession::connect(&sshd.target("srv-mitm", sshd.password(), &kh, accept_new))
            .await
            .expect_err("changed key refused");
        let msg = err.to_string();
        match &err {
            SshError::HostKeyChanged(change) => {
                assert_eq!(change.host, "127.0.0.1");
                assert_eq!(change.port, sshd.port);
                assert_eq!(change.line, 2);
                assert!(
                    change.presented.ends_with(&real_fp),
                    "{} vs {real_fp}",
                    change.presented
                );
                assert_ne!(change.expected, change.presented);
                assert_eq!(change.known_hosts, kh);
            }
            other => panic!("expected HostKeyChanged, got {other:?}"),
        }
        assert!(
            msg.contains("127.0.0.1") && msg.contains(&sshd.port.to_string()),
            "{msg}"
        );
        assert!(msg.contains(&real_fp), "{msg}");
    }
    // The file was not touched.
    assert_eq!(std::fs::read_to_string(&kh).unwrap().lines().count(), 2);
}

#[tokio::test]
async fn sshd_rsa_recorded_key_is_preferred_over_ed25519() {
    // The server has ed25519 and RSA host keys; only RSA is recorded: we must ask for RSA first
    // (as OpenSSH does), not report a changed key.
    let sshd = Sshd::start();
    let public = std::fs::read_to_string(sshd.path("ssh_host_rsa_key.pub")).unwrap();
    let fields: Vec<&str> = public.split_whitespace().collect();
    let kh = sshd.path("known_hosts_rsa");
    std::fs::write(
        &kh,
        format!("[127.0.0.1]:{} {} {}\n", sshd.port, fields[0], fields[1]),
    )
    .unwrap();
    let s = SshSession::connect(&sshd.target("srv-rsahost", sshd.password(), &kh, false))
        .await
        .expect("recorded RSA host key accepted");
    s.close().await.unwrap();
}

#[tokio::test]
async fn sshd_exec_operation_timeout_names_op_device_and_limit() {
    let sshd = Sshd::start();
    let kh = sshd.trusted_known_hosts();
    let mut target = sshd.target("srv-slow", sshd.password(), &kh, false);
    target.timeouts.operation = Duration::from_millis(1500);
    let s = SshSession::connect(&target).await.expect("connect");
    let started = std::time::Instant::now();
    let err = s.exec("sleep 30").await.expect_err("times out");
    assert!(started.elapsed() < Duration::from_secs(10));
    match &err {
        SshError::Timeout {
            device,
            operation,
            limit,
        } => {
            assert_eq!(device, "srv-slow");
            assert!(operation.contains("sleep 30"), "{operation}");
            assert_eq!(*limit, Duration::from_millis(1500));
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("srv-slow") && msg.contains("sleep 30") && msg.contains("1.500s"),
        "{msg}"
    );
    // The session survives a timed-out channel.
    assert_eq!(
        s.exec("echo still-here").await.unwrap().stdout,
        "still-here\n"
    );
    s.close().await.unwrap();
}

#[tokio::test]
async fn sshd_idle_timeout_ends_the_session_and_says_so() {
    let sshd = Sshd::start();
    let kh = sshd.trusted_known_hosts();
    let mut target = sshd.target("srv-idle", sshd.password(), &kh, false);
    target.timeouts.idle = Duration::from_secs(1);
    let s = SshSession::connect(&target).await.expect("connect");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(s.is_closed(), "idle session closed");
    let err = s.exec("true").await.expect_err("session is gone");
    let msg = err.to_string();
    assert!(
        matches!(err, SshError::Timeout { limit, .. } if limit == Duration::from_secs(1)),
        "{err:?}"
    );
    assert!(msg.contains("srv-idle") && msg.contains("idle"), "{msg}");
}

#[tokio::test]
async fn sshd_subsystem_is_a_byte_stream() {
    let sshd = Sshd::start();
    let kh = sshd.trusted_known_hosts();
    let s = SshSession::connect(&sshd.target("srv-sub", sshd.password(), &kh, false))
        .await
        .expect("connect");
    // `netgw-echo` is /bin/cat (scripts/peers/sshd.sh).
    let mut stream = s.subsystem("netgw-echo").await.expect("subsystem");
    stream.write_all(b"<hello/>]]>]]>").await.unwrap();
    stream.flush().await.unwrap();
    let mut buf = vec![0u8; 14];
    tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut buf))
        .await
        .expect("echo in time")
        .unwrap();
    assert_eq!(&buf, b"<hello/>]]>]]>");
    drop(stream);

    let err = s.subsystem("no-such-subsystem").await.expect_err("refused");
    assert!(matches!(err, SshError::ChannelRefused { .. }), "{err:?}");
    s.close().await.unwrap();
}

#[tokio::test]
async fn sshd_linux_shell() {
    let sshd = Sshd::start();
    let kh = sshd.trusted_known_hosts();
    let s = SshSession::connect(&sshd.target("srv-shell", sshd.password(), &kh, false))
        .await
        .expect("connect");
    let mut shell = s
        .shell(CliPlatform::get(PlatformKind::Linux))
        .await
        .expect("linux shell");
    assert_eq!(shell.mode(), CliMode::User);
    assert_eq!(shell.command("echo hi there").await.unwrap(), "hi there");
    let err = shell
        .command("no-such-command-xyz")
        .await
        .expect_err("fails");
    assert!(err.to_string().contains("command not found"), "{err}");
    shell.close().await.unwrap();
    s.close().await.unwrap();
}

#[tokio::test]
async fn connection_refused_is_a_connect_error() {
    // Bind then drop to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let target = SshTarget {
        device: "nowhere".into(),
        host: "127.0.0.1".into(),
        port,
        username: "x".into(),
        auth: SshAuth::Password(Secret::new("x")),
        host_keys: HostKeyPolicy {
            known_hosts: dir.path().join("kh"),
            accept_new: false,
        },
        timeouts: timeouts(Duration::from_secs(5)),
    };
    let err = SshSession::connect(&target).await.expect_err("refused");
    assert!(matches!(err, SshError::Connect { .. }), "{err:?}");
}

// ---------------------------------------------------------------------------------------------------
// fake-switches (Twisted conch: RSA host key, AES-CTR/CBC only, no exec channel, CRLF, echo)

#[tokio::test]
async fn fake_cisco_shell_enable_config_vlan_roundtrip() {
    let peers = FakeSwitches::start(&[("sw-cisco1", "cisco_generic")]);
    let dir = tempfile::tempdir().unwrap();
    let kh = dir.path().join("known_hosts");
    let session = SshSession::connect(&peers.target("sw-cisco1", &kh))
        .await
        .expect("connect to fake-switches (legacy algorithms)");
    assert!(
        std::fs::read_to_string(&kh).unwrap().contains(" ssh-rsa "),
        "RSA host key recorded"
    );

    let mut shell = session
        .shell(CliPlatform::get(PlatformKind::Ios))
        .await
        .expect("ios shell");
    assert_eq!(shell.mode(), CliMode::User);
    assert_eq!(shell.prompt(), "sw-cisco1>");

    shell
        .enable(Some(&Secret::new("enable")))
        .await
        .expect("enable");
    assert_eq!(shell.mode(), CliMode::Privileged);
    assert_eq!(shell.prompt(), "sw-cisco1#");
    // on-open commands (terminal length 0) ran again in privileged mode; run it explicitly too.
    assert_eq!(shell.command("terminal length 0").await.unwrap(), "");

    let before = shell.command("show vlan").await.expect("show vlan");
    assert!(before.contains("default"), "{before}");
    assert!(
        !before.contains("VLAN0123") && !before.contains("NETGW_X"),
        "{before}"
    );

    shell
        .config(&["vlan 123", "name NETGW_X"])
        .await
        .expect("config vlan");
    assert_eq!(
        shell.mode(),
        CliMode::Privileged,
        "left config mode (no `end` here)"
    );

    let after = shell.command("show vlan").await.expect("show vlan");
    let line = after
        .lines()
        .find(|l| l.starts_with("123 "))
        .unwrap_or_else(|| panic!("vlan 123 not listed:\n{after}"));
    assert!(line.contains("NETGW_X"), "{line}");
    // CRLF and echo handled: no CR, no echoed command.
    assert!(
        !after.contains('\r') && !after.starts_with("show vlan"),
        "{after:?}"
    );

    shell.close().await.unwrap();
    session.close().await.unwrap();
}

#[tokio::test]
async fn fake_cisco_invalid_command_is_a_typed_cli_error() {
    let peers = FakeSwitches::start(&[("sw-cisco2", "cisco_generic")]);
    let dir = tempfile::tempdir().unwrap();
    let kh = dir.path().join("known_hosts");
    let session = SshSession::connect(&peers.target("sw-cisco2", &kh))
        .await
        .expect("connect");
    let mut shell = session
        .shell(CliPlatform::get(PlatformKind::Ios))
        .await
        .expect("shell");
    shell
        .enable(Some(&Secret::new("enable")))
        .await
        .expect("enable");

    let err = shell
        .command("show running-config interface FastEthernet9/99")
        .await
        .expect_err("invalid interface");
    match &err {
        SshError::Cli {
            device,
            command,
            output,
        } => {
            assert_eq!(device, "sw-cisco2");
            assert_eq!(command, "show running-config interface FastEthernet9/99");
            assert!(output.contains("% Invalid input"), "{output}");
        }
        other => panic!("expected Cli error, got {other:?}"),
    }
    // The shell is still usable after a CLI error.
    assert!(!err.is_fatal());
    assert!(
        shell
            .command("show vlan")
            .await
            .unwrap()
            .contains("default")
    );

    // In config mode too; the error leaves config mode behind it.
    let err = shell
        .config(&["interface NoSuchInterface7"])
        .await
        .expect_err("invalid interface in config");
    assert!(err.to_string().contains("% Invalid input"), "{err}");
    assert_eq!(shell.mode(), CliMode::Privileged);

    // Multi-line input is refused before it reaches the device.
    assert!(matches!(
        shell.command("show vlan\nreload").await,
        Err(SshError::InvalidCommand { .. })
    ));
    session.close().await.unwrap();
}

#[tokio::test]
async fn fake_cisco_wrong_enable_secret_and_no_exec() {
    let peers = FakeSwitches::start(&[("sw-cisco3", "cisco_generic")]);
    let dir = tempfile::tempdir().unwrap();
    let kh = dir.path().join("known_hosts");
    let session = SshSession::connect(&peers.target("sw-cisco3", &kh))
        .await
        .expect("connect");
    let mut shell = session
        .shell(CliPlatform::get(PlatformKind::Ios))
        .await
        .expect("shell");
    let err = shell
        .enable(Some(&Secret::new("bad-Enable-3")))
        .await
        .expect_err("wrong secret");
    let msg = err.to_string();
    assert!(matches!(err, SshError::Enable { .. }), "{err:?}");
    assert!(msg.contains("% Access denied"), "{msg}");
    assert!(!msg.contains("bad-Enable-3"), "{msg}");
    assert_eq!(shell.mode(), CliMode::User);

    // fake-switches has no exec channel: a typed refusal, not a hang.
    let err = session.exec("show version").await.expect_err("no exec");
    assert!(
        matches!(
            err,
            SshError::ChannelRefused { .. } | SshError::Disconnected { .. }
        ),
        "{err:?}"
    );
    session.close().await.unwrap();
}
