//! Faults by killing third-party peers (issue 9, "Faults"): the device process itself dies with
//! SIGKILL in the middle of a device transaction, rather than a simulator of ours pretending to.
//!
//! * fake-switches (Cisco IOS, `cisco_generic`) is killed after the first configuration line of a
//!   converge reached it. Timing: the converge runs in-process through the real engine, transports
//!   and IOS driver; a `Connector` wrapper marks the start of the driver's commit; from then on a TCP
//!   proxy between netgw and the peer delays every peer-to-netgw chunk by [`THROTTLE`], so the
//!   configuration lines go one every few hundred milliseconds; an observer session of its own polls
//!   the peer's running configuration and, once the first VLAN line is in it and its answer has been
//!   forwarded to netgw, SIGKILLs the peer. netgw must report the node failed with the connection
//!   loss as the cause, leave every file of the local repo as it was (no current state claiming the
//!   change), and converge normally once the peer is restarted on the same port.
//! * netconfd (yuma123) is killed between a confirmed commit and its confirm (netgw's NETCONF
//!   client: there is no netgw driver for a bare ietf-interfaces server) and restarted with the same
//!   startup file: its running configuration must be the one from before the commit.
//!
//! Peers missing make the tests fail with the install command, never skip:
//!   scripts/peers/fake-switches.sh install
//!   scripts/peers/netconfd.sh install

use crate::common;

use async_trait::async_trait;
use common::{FakeSwitches, fake_switches, root, write};
use netgw::engine::{self, Connector, EngineOptions, Job, RegistryConnector};
use netgw::inventory::Inventory;
use netgw::report::NodeStatus;
use netgw::store::local::LocalRepo;
use netgw_drivers::driver::{
    Capabilities, CommitOptions, Driver, DriverError, Observed, Platform, Staged,
};
use netgw_drivers::target::DeviceTarget;
use netgw_models::facts::DeviceFacts;
use netgw_models::plan::{Plan, PlanRules, ResourceRef};
use netgw_models::resource::{Link, Vlan};
use netgw_models::secret::Secret;
use netgw_transport::Timeouts;
use netgw_transport::netconf::{
    Datastore, DefaultOperation, EditConfig, Filter, NetconfSsh, connect_ssh,
};
use netgw_transport::ssh::{
    CliPlatform, CliShell, HostKeyPolicy, PlatformKind, SshAuth, SshSession, SshTarget,
};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Delay of every peer-to-netgw chunk once the commit started: long enough that the observer sees
/// the first line land before the last one is sent.
const THROTTLE: Duration = Duration::from_millis(300);

/// SIGKILL a process this test started, by its PID.
fn sigkill(pid: u32) {
    let st = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("running kill");
    assert!(st.success(), "kill -KILL {pid} failed");
}

// ------------------------------------------------------------------ TCP proxy

/// A TCP proxy on 127.0.0.1 to `upstream`: netgw connects here. When `throttle` is set, every chunk
/// from the peer is delayed by [`THROTTLE`]; `delivered` counts chunks handed to netgw while throttled.
struct Proxy {
    port: u16,
    throttle: Arc<AtomicBool>,
    delivered: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn proxy(upstream: u16) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let throttle = Arc::new(AtomicBool::new(false));
    let delivered = Arc::new(AtomicUsize::new(0));
    let (t, d) = (throttle.clone(), delivered.clone());
    let task = tokio::spawn(async move {
        let mut conns = tokio::task::JoinSet::new();
        while let Ok((client, _)) = listener.accept().await {
            let (t, d) = (t.clone(), d.clone());
            conns.spawn(async move {
                // Peer down: drop the client, as a refused connection would.
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                    return;
                };
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = cr.read(&mut buf).await {
                        if n == 0 || sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = sw.shutdown().await;
                };
                let down = async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = sr.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let throttled = t.load(Ordering::SeqCst);
                        if throttled {
                            tokio::time::sleep(THROTTLE).await;
                        }
                        if cw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        if throttled {
                            d.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    let _ = cw.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    Proxy {
        port,
        throttle,
        delivered,
        task,
    }
}

// ------------------------------------------------------------------ commit tap

/// Opens real drivers and wraps them so the test learns when a commit starts.
struct Tap {
    commit_started: Arc<tokio::sync::Notify>,
    throttle: Arc<AtomicBool>,
}

#[async_trait]
impl Connector for Tap {
    async fn connect(&self, target: &DeviceTarget) -> Result<Box<dyn Driver>, DriverError> {
        let inner = RegistryConnector.connect(target).await?;
        Ok(Box::new(TapDriver {
            inner,
            commit_started: self.commit_started.clone(),
            throttle: self.throttle.clone(),
        }))
    }
}

struct TapDriver {
    inner: Box<dyn Driver>,
    commit_started: Arc<tokio::sync::Notify>,
    throttle: Arc<AtomicBool>,
}

#[async_trait]
impl Driver for TapDriver {
    fn platform(&self) -> Platform {
        self.inner.platform()
    }
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    fn plan_rules(&self) -> PlanRules {
        self.inner.plan_rules()
    }
    fn validate(&self, vlans: &[Vlan], links: &[Link]) -> Vec<(ResourceRef, String)> {
        self.inner.validate(vlans, links)
    }
    async fn facts(&mut self) -> Result<DeviceFacts, DriverError> {
        self.inner.facts().await
    }
    async fn observe(&mut self) -> Result<Observed, DriverError> {
        self.inner.observe().await
    }
    async fn stage(&mut self, plan: &Plan) -> Result<Staged, DriverError> {
        self.inner.stage(plan).await
    }
    async fn discard(&mut self) -> Result<(), DriverError> {
        self.inner.discard().await
    }
    async fn commit(&mut self, options: &CommitOptions) -> Result<(), DriverError> {
        self.throttle.store(true, Ordering::SeqCst);
        self.commit_started.notify_one();
        self.inner.commit(options).await
    }
    async fn confirm(&mut self) -> Result<(), DriverError> {
        self.inner.confirm().await
    }
    fn persistence(&self) -> netgw_drivers::driver::Persistence {
        self.inner.persistence()
    }
    async fn rollback(&mut self) -> Result<(), DriverError> {
        self.inner.rollback().await
    }
    async fn close(&mut self) -> Result<(), DriverError> {
        self.inner.close().await
    }
}

// ------------------------------------------------------------------ fake-switches

fn start_fake_ios(dir: &Path, ssh_port: u16) -> FakeSwitches {
    fake_switches(
        json!([{"name": "ios1", "model": "cisco_generic", "ssh_port": ssh_port}]),
        &dir.join(format!("fake-switches-{ssh_port}.log")),
    )
}

fn observer_target(port: u16, dir: &Path) -> SshTarget {
    SshTarget {
        device: "ios1-observer".into(),
        host: "127.0.0.1".into(),
        port,
        username: "admin".into(),
        auth: SshAuth::Password(Secret::new("admin")),
        host_keys: HostKeyPolicy {
            known_hosts: dir.join("observer_known_hosts"),
            accept_new: true,
        },
        timeouts: Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            operation: Duration::from_secs(10),
        },
    }
}

/// A privileged IOS shell straight to the peer (not through the proxy, not through netgw's drivers).
async fn observer(port: u16, dir: &Path) -> (SshSession, CliShell) {
    let s = SshSession::connect(&observer_target(port, dir))
        .await
        .expect("observer session to fake-switches");
    let mut sh = s
        .shell(CliPlatform::get(PlatformKind::Ios))
        .await
        .expect("observer shell");
    sh.enable(Some(&Secret::new("enable")))
        .await
        .expect("observer enable");
    (s, sh)
}

/// Every file of the local repo and its bytes, except the run locks (`nodes/.locks`, runtime
/// coordination, not state).
fn repo_files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_owned();
            if rel == Path::new("nodes/.locks") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn converge_job(inventory: &Inventory, name: &str) -> Job {
    let mut t = inventory.target(name).unwrap();
    t.timeouts = Timeouts {
        connect: Duration::from_secs(10),
        idle: Duration::from_secs(60),
        operation: Duration::from_secs(10),
    };
    Job {
        name: name.into(),
        target: Ok(t),
    }
}

#[test]
fn fake_switches_killed_mid_commit_fails_the_node_and_saves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut peer = start_fake_ios(d, 0);
    let peer_port = peer.ports["ios1"]["ssh_port"].as_u64().unwrap() as u16;
    let rt = common::runtime();
    let proxy = rt.block_on(proxy(peer_port));
    write(
        d,
        "repo/nodes/ios1.json",
        &json!({
            "name": "ios1",
            "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
            "normal": {"netdev": {
                "vlans": {"110": {"name": "web"}, "120": {"name": "db"}},
                "links": {"FastEthernet0/1": {"description": "to-web", "mode": "access", "access_vlan": 110}}
            }}
        })
        .to_string(),
    );
    write(
        d,
        "inventory.yml",
        &format!(
            "hosts:\n  ios1:\n    hostname: 127.0.0.1\n    port: {}\n    platform: cisco_ios\n\
             defaults:\n  username: admin\n  password: admin\n  data:\n    netgw:\n      enable_secret: enable\n      known_hosts: {}\n      accept_new_host_keys: true\n      cli_batch: false\n",
            proxy.port,
            d.join("known_hosts").display()
        ),
    );
    // `cli_batch: false`: a line at a time, so the peer can be killed between two of them (typed
    // ahead in one write, fake-switches applies them all before anything outside can look).
    let repo_root = d.join("repo");
    let repo = LocalRepo::open(&repo_root).unwrap();
    let inventory = Inventory::load(&d.join("inventory.yml")).unwrap();
    let files_before = repo_files(&repo_root);

    let commit_started = Arc::new(tokio::sync::Notify::new());
    let tap = Tap {
        commit_started: commit_started.clone(),
        throttle: proxy.throttle.clone(),
    };
    let pid = peer.child.id();
    let delivered = proxy.delivered.clone();
    let (report, at_kill) = rt.block_on(async {
        let (_obs_session, mut obs) = observer(peer_port, d).await;
        let killer = async move {
            commit_started.notified().await;
            let t0 = Instant::now();
            loop {
                let run = obs
                    .command("show running-config")
                    .await
                    .expect("observer read");
                if run.contains("vlan 110") {
                    // The line reached the peer; let its answer reach netgw, then kill the peer.
                    let seen = delivered.load(Ordering::SeqCst);
                    while delivered.load(Ordering::SeqCst) == seen
                        && t0.elapsed() < Duration::from_secs(20)
                    {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    sigkill(pid);
                    return run;
                }
                assert!(
                    t0.elapsed() < Duration::from_secs(30),
                    "the first configuration line never reached the peer"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let infra = engine::Infra::new(Arc::new(repo.clone()), repo.clone(), Arc::new(tap));
        let run = engine::converge(
            &infra,
            vec![converge_job(&inventory, "ios1")],
            EngineOptions {
                lock_timeout: Duration::from_secs(5),
                ..EngineOptions::default()
            },
        );
        let (report, at_kill) = tokio::join!(run, killer);
        (report, at_kill)
    });
    let _ = peer.child.wait();
    eprintln!("running-config when the peer was killed:\n{at_kill}");
    // Killed in the middle: the first VLAN was on the device, the link not yet.
    assert!(
        at_kill.contains("vlan 110")
            && !at_kill.contains("vlan 120")
            && !at_kill.contains("to-web"),
        "not killed mid-transaction; running-config at the kill:\n{at_kill}"
    );
    let node = &report.nodes[0];
    let err = node.error.clone().unwrap_or_default();
    eprintln!("reported: {err}");
    assert_eq!(node.status, NodeStatus::Failed, "{node:?}");
    let lower = err.to_lowercase();
    // The IOS driver tried to restore the pre-change state over a new session: the peer was dead.
    assert!(
        err.contains("restoring the state before the change FAILED"),
        "the report must say the device was not put back: {err}"
    );
    assert!(
        err.contains("ios1")
            && [
                "closed",
                "reset",
                "eof",
                "disconnect",
                "connection",
                "broken pipe"
            ]
            .iter()
            .any(|w| lower.contains(w)),
        "the cause must name the connection loss: {err}"
    );
    assert_eq!(
        repo_files(&repo_root),
        files_before,
        "the local repo changed (a current state claiming the change?)"
    );
    assert!(!repo_root.join("nodes/current/ios1.json").exists());

    // Restart the peer on the same port: a converge through the same inventory succeeds.
    drop(peer);
    let peer = start_fake_ios(d, peer_port);
    let report = rt.block_on(engine::converge(
        &engine::Infra::new(
            Arc::new(repo.clone()),
            repo.clone(),
            Arc::new(RegistryConnector),
        ),
        vec![converge_job(&inventory, "ios1")],
        EngineOptions::default(),
    ));
    let node = &report.nodes[0];
    assert_eq!(node.status, NodeStatus::Success, "{:?}", node.error);
    assert!(repo_root.join("nodes/current/ios1.json").is_file());
    let run = rt.block_on(async {
        let (_s, mut sh) = observer(peer_port, d).await;
        sh.command("show running-config").await.unwrap()
    });
    for want in [
        "vlan 110",
        "name web",
        "vlan 120",
        "name db",
        "description to-web",
    ] {
        assert!(
            run.contains(want),
            "{want} missing after the restart converge:\n{run}"
        );
    }
    drop(proxy);
    drop(peer);
    rt.shutdown_timeout(Duration::from_secs(5));
}

// ------------------------------------------------------------------ netconfd

const IF_NS: &str = "urn:ietf:params:xml:ns:yang:ietf-interfaces";

/// netconfd + its private sshd in a temp dir; stopped by PID on drop.
struct Netconfd {
    dir: tempfile::TempDir,
    env: HashMap<String, String>,
}

fn netconfd_script() -> PathBuf {
    root().join("scripts/peers/netconfd.sh")
}

impl Netconfd {
    fn start() -> Netconfd {
        assert!(
            Path::new("/usr/sbin/netconfd").exists(),
            "PEER MISSING: netconfd is not installed; run `scripts/peers/netconfd.sh install`"
        );
        let dir = tempfile::Builder::new()
            .prefix("netgw-peer-kill-")
            .tempdir()
            .unwrap();
        let out = Command::new(netconfd_script())
            .arg("start")
            .arg(dir.path())
            .output()
            .expect("running scripts/peers/netconfd.sh");
        let mut n = Netconfd {
            dir,
            env: HashMap::new(),
        };
        assert!(
            out.status.success(),
            "PEER FAILED: netconfd did not start (run `scripts/peers/netconfd.sh install`): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        n.read_env();
        n
    }

    fn read_env(&mut self) {
        let text = std::fs::read_to_string(self.dir.path().join("netconfd.env")).unwrap();
        self.env = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.trim_matches('\'').to_owned()))
            .collect();
    }

    fn pid(&self) -> u32 {
        self.env["NETCONFD_PID"].parse().unwrap()
    }

    /// Start netconfd again after it died, with the startup file it left.
    fn respawn(&mut self) {
        let out = Command::new(netconfd_script())
            .arg("respawn")
            .arg(self.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "netconfd did not come back: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.read_env();
    }

    fn target(&self) -> SshTarget {
        let port: u16 = self.env["NETCONFD_SSH_PORT"].parse().unwrap();
        let dir = self.dir.path();
        let mut kh = String::new();
        for key in ["ssh_host_ed25519_key.pub", "ssh_host_rsa_key.pub"] {
            let pubkey = std::fs::read_to_string(dir.join(key)).unwrap();
            let mut parts = pubkey.split_whitespace();
            let (alg, b64) = (parts.next().unwrap(), parts.next().unwrap());
            kh.push_str(&format!("[127.0.0.1]:{port} {alg} {b64}\n"));
        }
        let known_hosts = dir.join("known_hosts.client");
        std::fs::write(&known_hosts, kh).unwrap();
        SshTarget {
            device: "netconfd".into(),
            host: "127.0.0.1".into(),
            port,
            username: self.env["NETCONFD_USER"].clone(),
            auth: SshAuth::Password(Secret::new(self.env["NETCONFD_PASSWORD"].clone())),
            host_keys: HostKeyPolicy {
                known_hosts,
                accept_new: false,
            },
            timeouts: Timeouts {
                connect: Duration::from_secs(15),
                idle: Duration::from_secs(60),
                operation: Duration::from_secs(20),
            },
        }
    }

    /// A session, and a pause before its first RPC: yuma123's netconfd never answers an RPC that
    /// reaches it in the same read as the hello (drivers/tests/it/common.rs, `NETCONFD_SETTLE`).
    async fn session(&self) -> NetconfSsh {
        let s = connect_ssh(&self.target())
            .await
            .unwrap_or_else(|e| panic!("connect to netconfd: {e}"));
        tokio::time::sleep(Duration::from_millis(300)).await;
        s
    }
}

impl Drop for Netconfd {
    fn drop(&mut self) {
        let _ = Command::new(netconfd_script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

fn interface_xml(name: &str, description: &str) -> String {
    format!(
        "<interfaces xmlns=\"{IF_NS}\"><interface><name>{name}</name><description>{description}</description><type xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">ianaift:ethernetCsmacd</type></interface></interfaces>"
    )
}

/// The running configuration's interfaces, as (name, description), sorted.
async fn running_interfaces(s: &mut NetconfSsh) -> Vec<(String, String)> {
    let reply = s
        .get_config(
            Datastore::Running,
            Some(Filter::Subtree(format!("<interfaces xmlns=\"{IF_NS}\"/>"))),
        )
        .await
        .expect("get-config running");
    let data = reply.data().expect("get-config data");
    let mut out: Vec<(String, String)> = data
        .child("interfaces")
        .map(|ifs| {
            ifs.children_named("interface")
                .map(|i| {
                    (
                        i.child_text("name").unwrap_or_default(),
                        i.child("description").map(|d| d.text()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

async fn edit_candidate(s: &mut NetconfSsh, xml: String) {
    s.edit_config(
        EditConfig::new(Datastore::Candidate, xml).default_operation(DefaultOperation::Merge),
    )
    .await
    .expect("edit-config candidate");
}

#[test]
fn netconfd_killed_between_commit_and_confirm_comes_back_with_the_config_from_before() {
    let mut peer = Netconfd::start();
    let rt = common::runtime();
    let startup = PathBuf::from(&peer.env["NETCONFD_STARTUP"]);
    let before = rt.block_on(async {
        // A confirmed baseline: one interface, committed and saved.
        let mut s = peer.session().await;
        s.lock(Datastore::Candidate).await.unwrap();
        edit_candidate(&mut s, interface_xml("eth-base0", "baseline")).await;
        s.commit().await.expect("commit baseline");
        s.unlock(Datastore::Candidate).await.unwrap();
        let before = running_interfaces(&mut s).await;
        assert_eq!(before, [("eth-base0".to_owned(), "baseline".to_owned())]);
        // The change: a new interface and a new description, committed with confirm-timeout 120 s.
        s.lock(Datastore::Candidate).await.unwrap();
        edit_candidate(&mut s, interface_xml("eth-base0", "changed")).await;
        edit_candidate(&mut s, interface_xml("eth-kill0", "pending")).await;
        s.confirmed_commit(Some(120), None)
            .await
            .expect("confirmed commit");
        let live = running_interfaces(&mut s).await;
        assert_eq!(
            live,
            [
                ("eth-base0".to_owned(), "changed".to_owned()),
                ("eth-kill0".to_owned(), "pending".to_owned())
            ],
            "a confirmed commit is live at once"
        );
        // No confirm: the server dies here.
        sigkill(peer.pid());
        drop(s);
        before
    });
    let startup_after_kill = std::fs::read_to_string(&startup).unwrap_or_default();
    // netconfd saves running to its startup file on a plain commit, but not an unconfirmed one.
    assert!(
        startup_after_kill.contains("eth-base0")
            && startup_after_kill.contains("baseline")
            && !startup_after_kill.contains("eth-kill0")
            && !startup_after_kill.contains("changed"),
        "startup file after the kill:\n{startup_after_kill}"
    );
    peer.respawn();
    let after = rt.block_on(async {
        let mut s = peer.session().await;
        running_interfaces(&mut s).await
    });
    assert_eq!(
        after, before,
        "netconfd restarted after dying between commit and confirm must run the configuration from before the commit"
    );
    drop(peer);
    rt.shutdown_timeout(Duration::from_secs(5));
}
