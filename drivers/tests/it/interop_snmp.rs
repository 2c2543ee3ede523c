//! SNMP interop against agents written by others (docs/peers.md):
//! - snmpsim 1.2.2 serving real device recordings from snmpsim-data 1.0.1 (one instance shared by the tests
//!   of this binary: it is read-only and slow to index), v2c communities and v3 authPriv SHA/AES;
//! - net-snmp snmpd (Debian), v2c and v3 with several USM users.
//!
//! Peers are started by `scripts/peers/snmpsim.sh` and `scripts/peers/snmpd.sh` on 127.0.0.1 and stopped
//! when this process exits (NETGW_PEER_WATCH_PID). A missing peer FAILS the test with the install command.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use crate::common::repo_root;
use netgw_drivers::transport::snmp::{
    AuthProtocol, Oid, PrivProtocol, SnmpClient, SnmpConfig, SnmpError, SnmpSecurity, SnmpValue,
    V3Level, WalkLimit, WalkLimits, collect_facts, facts_from_varbinds, parse_snmprec,
};
use netgw_models::facts::DeviceFacts;
use netgw_models::secret::Secret;

const ARISTA: &str = "cloud/arista-dcs-7150s-52-cl";
const C3560: &str = "network/switch/cisco-c3560";
const MX960: &str = "network/router/juniper-mx960-13-3r9-13";

/// A started peer: its env file as a map.
struct Peer {
    env: BTreeMap<String, String>,
}

impl Peer {
    fn get(&self, key: &str) -> &str {
        self.env
            .get(key)
            .unwrap_or_else(|| panic!("peer env has no {key}: {:?}", self.env.keys()))
    }

    fn port(&self, key: &str) -> u16 {
        self.get(key).parse().expect("port number")
    }
}

/// Run `scripts/peers/NAME.sh start DIR` and read DIR/NAME.env; panic with the install hint on failure.
fn start_peer(name: &str) -> Peer {
    let script = repo_root().join(format!("scripts/peers/{name}.sh"));
    let dir =
        std::env::temp_dir().join(format!("netgw-interop-snmp-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create peer dir");
    let out = Command::new("bash")
        .arg(&script)
        .arg("start")
        .arg(&dir)
        .env("NETGW_PEER_WATCH_PID", std::process::id().to_string())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    if !out.status.success() {
        panic!(
            "\n\n*** SNMP peer {name} did not start. Install it first:\n***     {} install\n\
             *** (see docs/peers.md)\n--- stdout:\n{}\n--- stderr:\n{}\n",
            script.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let env_file = dir.join(format!("{name}.env"));
    let text = std::fs::read_to_string(&env_file)
        .unwrap_or_else(|e| panic!("{} missing after start: {e}", env_file.display()));
    let env = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    Peer { env }
}

static SNMPSIM: OnceLock<Peer> = OnceLock::new();
static SNMPD: OnceLock<Peer> = OnceLock::new();

/// The shared snmpsim (started on first use; the index build may take a while, off the runtime thread).
async fn snmpsim() -> &'static Peer {
    tokio::task::spawn_blocking(|| SNMPSIM.get_or_init(|| start_peer("snmpsim")))
        .await
        .expect("snmpsim start task")
}

async fn snmpd() -> &'static Peer {
    tokio::task::spawn_blocking(|| SNMPD.get_or_init(|| start_peer("snmpd")))
        .await
        .expect("snmpd start task")
}

fn oid(s: &str) -> Oid {
    s.parse().expect("valid OID")
}

fn v2c(device: &str, port: u16, community: &str) -> SnmpConfig {
    SnmpConfig::new(
        device,
        "127.0.0.1",
        SnmpSecurity::V2c {
            community: Secret::new(community),
        },
    )
    .with_port(port)
    .with_timeout(Duration::from_secs(5), 1)
}

fn v3(device: &str, port: u16, user: &str, level: V3Level, context: Option<&str>) -> SnmpConfig {
    SnmpConfig::new(
        device,
        "127.0.0.1",
        SnmpSecurity::V3 {
            user: user.to_owned(),
            level,
            context: context.map(str::to_owned),
        },
    )
    .with_port(port)
    .with_timeout(Duration::from_secs(5), 1)
}

fn auth_priv(auth: AuthProtocol, auth_key: &str, privacy: PrivProtocol, priv_key: &str) -> V3Level {
    V3Level::AuthPriv {
        auth,
        auth_key: Secret::new(auth_key),
        privacy,
        priv_key: Secret::new(priv_key),
    }
}

/// The recording snmpsim serves for `community`, parsed: the ground truth of what the agent should say.
fn recording(peer: &Peer, community: &str) -> Vec<netgw_drivers::transport::snmp::Varbind> {
    let path = Path::new(peer.get("SNMPSIM_DATA_DIR")).join(format!("{community}.snmprec"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read recording {}: {e}", path.display()));
    parse_snmprec(&text).expect("recording parses")
}

fn recorded_text(vbs: &[netgw_drivers::transport::snmp::Varbind], o: &str) -> String {
    let o = oid(o);
    vbs.iter()
        .find(|vb| vb.oid == o)
        .and_then(|vb| vb.value.as_text())
        .unwrap_or_else(|| panic!("recording has no text at {o}"))
}

/// Interface names as the recording defines them: ifName, else ifDescr, per ifIndex.
fn recorded_interface_names(vbs: &[netgw_drivers::transport::snmp::Varbind]) -> BTreeSet<String> {
    let col = |c: &str| -> BTreeMap<u32, String> {
        let c = oid(c);
        vbs.iter()
            .filter_map(|vb| match vb.oid.suffix_after(&c) {
                Some([i]) => Some((*i, vb.value.as_text()?)),
                _ => None,
            })
            .collect()
    };
    let names = col("1.3.6.1.2.1.31.1.1.1.1");
    let descrs = col("1.3.6.1.2.1.2.2.1.2");
    descrs
        .keys()
        .chain(names.keys())
        .map(|i| {
            names
                .get(i)
                .filter(|n| !n.is_empty())
                .or(descrs.get(i))
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

async fn collect(cfg: SnmpConfig) -> DeviceFacts {
    let mut client = SnmpClient::connect(cfg).await.expect("connect");
    let collected = collect_facts(&mut client, WalkLimits::default())
        .await
        .expect("collect facts");
    assert!(
        collected.skipped.is_empty(),
        "skipped tables: {:?}",
        collected.skipped
    );
    collected.facts
}

async fn check_system_and_interfaces(community: &str, device: &str) {
    let sim = snmpsim().await;
    let rec = recording(sim, community);
    let facts = collect(v2c(device, sim.port("SNMPSIM_PORT"), community)).await;
    let snmp = facts.snmp.as_ref().expect("system group");
    assert_eq!(
        snmp.sys_descr.as_deref(),
        Some(recorded_text(&rec, "1.3.6.1.2.1.1.1.0").as_str())
    );
    assert_eq!(
        snmp.sys_name.as_deref(),
        Some(recorded_text(&rec, "1.3.6.1.2.1.1.5.0").as_str())
    );
    let got: BTreeSet<String> = facts.interfaces.keys().cloned().collect();
    let want = recorded_interface_names(&rec);
    assert!(!want.is_empty());
    assert_eq!(got, want);
    // The whole fact set over the wire equals the pure parse of the recording it came from.
    let offline = facts_from_varbinds(&rec);
    assert_eq!(facts.interfaces, offline.interfaces);
    assert_eq!(facts.model, offline.model);
    assert_eq!(facts.serial, offline.serial);
    assert_eq!(facts.platform_version, offline.platform_version);
}

#[tokio::test]
async fn snmpsim_arista_system_group_and_interfaces() {
    check_system_and_interfaces(ARISTA, "arista-7150s").await;
}

#[tokio::test]
async fn snmpsim_cisco_c3560_system_group_and_interfaces() {
    check_system_and_interfaces(C3560, "cisco-c3560").await;
}

async fn check_lldp_and_vlans(community: &str, device: &str) -> DeviceFacts {
    let sim = snmpsim().await;
    let rec = recording(sim, community);
    let facts = collect(v2c(device, sim.port("SNMPSIM_PORT"), community)).await;
    let offline = facts_from_varbinds(&rec);
    assert!(!offline.lldp_neighbors.is_empty());
    assert!(!offline.vlans.is_empty());
    assert_eq!(facts.lldp_neighbors, offline.lldp_neighbors);
    assert_eq!(facts.vlans, offline.vlans);
    facts
}

#[tokio::test]
async fn snmpsim_arista_lldp_neighbors_and_vlans() {
    let facts = check_lldp_and_vlans(ARISTA, "arista-7150s").await;
    let n = &facts.lldp_neighbors["Ethernet47"][0];
    assert_eq!(n.remote_system_name.as_deref(), Some("ZJ-BP-Bak-Arista"));
    assert_eq!(n.remote_port.as_deref(), Some("Ethernet23"));
    assert_eq!(
        facts.vlans.get(&40).and_then(|v| v.name.as_deref()),
        Some("Baopan-Zhilian")
    );
}

#[tokio::test]
async fn snmpsim_juniper_mx960_lldp_neighbors_and_vlans() {
    let facts = check_lldp_and_vlans(MX960, "juniper-mx960").await;
    let n = &facts.lldp_neighbors["ge-1/1/4"][0];
    assert_eq!(
        n.remote_system_name.as_deref(),
        Some("SNNU-CA-Core-JSQ-B10")
    );
    assert_eq!(facts.serial.as_deref(), Some("JN12002C1AFA"));
    assert_eq!(facts.vlans.len(), 29);
}

#[tokio::test]
async fn snmpsim_v3_auth_priv_sha_aes_with_context() {
    let sim = snmpsim().await;
    let rec = recording(sim, ARISTA);
    let cfg = v3(
        "arista-7150s-v3",
        sim.port("SNMPSIM_PORT"),
        sim.get("SNMPSIM_V3_USER"),
        auth_priv(
            AuthProtocol::Sha1,
            sim.get("SNMPSIM_V3_AUTH_KEY"),
            PrivProtocol::Aes128,
            sim.get("SNMPSIM_V3_PRIV_KEY"),
        ),
        Some(ARISTA),
    );
    let mut client = SnmpClient::connect(cfg).await.expect("v3 connect");
    let got = client
        .get(&[oid("1.3.6.1.2.1.1.5.0"), oid("1.3.6.1.2.1.1.1.0")])
        .await
        .expect("v3 get");
    assert_eq!(
        got[0].value.as_text().unwrap(),
        recorded_text(&rec, "1.3.6.1.2.1.1.5.0")
    );
    assert_eq!(
        got[1].value.as_text().unwrap(),
        recorded_text(&rec, "1.3.6.1.2.1.1.1.0")
    );
    // A walk over v3 (GETBULK, encrypted) of the interface names.
    let names = client
        .walk(&oid("1.3.6.1.2.1.31.1.1.1.1"), WalkLimits::default())
        .await
        .expect("v3 walk");
    assert_eq!(names.len(), recorded_interface_names(&rec).len());
}

#[tokio::test]
async fn snmpsim_get_next_bulk_and_walk_limits() {
    let sim = snmpsim().await;
    let mut client = SnmpClient::connect(v2c("c3560", sim.port("SNMPSIM_PORT"), C3560))
        .await
        .unwrap();
    let next = client.get_next(&[oid("1.3.6.1.2.1.1.4")]).await.unwrap();
    assert_eq!(next[0].oid, oid("1.3.6.1.2.1.1.4.0"));
    let bulk = client
        .get_bulk(&[oid("1.3.6.1.2.1.2.2.1.2")], 0, 5)
        .await
        .unwrap();
    assert_eq!(bulk.len(), 5);
    assert!(bulk.windows(2).all(|w| w[0].oid < w[1].oid));
    let missing = client.get(&[oid("1.3.6.1.2.1.1.5.1")]).await.unwrap();
    assert!(missing[0].value.is_exception(), "{:?}", missing[0].value);

    let err = client
        .walk(
            &oid("1.3.6.1.2.1.2.2.1.2"),
            WalkLimits {
                max_oids: 10,
                max_time: Duration::from_secs(30),
            },
        )
        .await
        .unwrap_err();
    match &err {
        SnmpError::WalkLimit { limit, device, .. } => {
            assert_eq!(*limit, WalkLimit::MaxOids(10));
            assert_eq!(device, "c3560");
        }
        other => panic!("expected a walk limit, got {other}"),
    }
    assert!(err.to_string().contains("max_oids"), "{err}");
    // The client stays usable after a failed walk.
    let again = client.get(&[oid("1.3.6.1.2.1.1.5.0")]).await.unwrap();
    assert!(matches!(again[0].value, SnmpValue::OctetString(_)));
}

#[tokio::test]
async fn snmpd_v2c_get_and_walk_system_group() {
    let agent = snmpd().await;
    let mut client = SnmpClient::connect(v2c(
        "snmpd",
        agent.port("SNMPD_PORT"),
        agent.get("SNMPD_COMMUNITY"),
    ))
    .await
    .unwrap();
    let got = client.get(&[oid("1.3.6.1.2.1.1.5.0")]).await.unwrap();
    assert_eq!(
        got[0].value.as_text().as_deref(),
        Some(agent.get("SNMPD_SYSNAME"))
    );
    let system = client
        .walk(&oid("1.3.6.1.2.1.1"), WalkLimits::default())
        .await
        .unwrap();
    assert!(
        system
            .iter()
            .all(|vb| vb.oid.starts_with(&oid("1.3.6.1.2.1.1")))
    );
    assert!(system.windows(2).all(|w| w[0].oid < w[1].oid));
    let facts = facts_from_varbinds(&system);
    let snmp = facts.snmp.unwrap();
    assert_eq!(
        snmp.sys_location.as_deref(),
        Some(agent.get("SNMPD_SYSLOCATION"))
    );
    assert_eq!(
        snmp.sys_contact.as_deref(),
        Some(agent.get("SNMPD_SYSCONTACT"))
    );
    assert_eq!(facts.vendor.as_deref(), Some("net-snmp"));
    assert_eq!(facts.platform.as_deref(), Some("linux"));
    assert!(snmp.sys_descr.unwrap().starts_with("Linux"));
    // The same walk with GETNEXT only.
    let mut cfg = v2c(
        "snmpd",
        agent.port("SNMPD_PORT"),
        agent.get("SNMPD_COMMUNITY"),
    );
    cfg.use_bulk = false;
    let mut client = SnmpClient::connect(cfg).await.unwrap();
    let by_next = client
        .walk(&oid("1.3.6.1.2.1.1"), WalkLimits::default())
        .await
        .unwrap();
    assert_eq!(by_next.len(), system.len());
}

async fn snmpd_v3_sysname(user_key: &str, level: V3Level) -> Result<String, SnmpError> {
    let agent = snmpd().await;
    let cfg = v3(
        "snmpd-v3",
        agent.port("SNMPD_PORT"),
        agent.get(user_key),
        level,
        None,
    );
    let mut client = SnmpClient::connect(cfg).await?;
    let got = client.get(&[oid("1.3.6.1.2.1.1.5.0")]).await?;
    Ok(got[0].value.as_text().unwrap_or_default())
}

#[tokio::test]
async fn snmpd_v3_auth_priv_sha_aes() {
    let agent = snmpd().await;
    let level = auth_priv(
        AuthProtocol::Sha1,
        agent.get("SNMPD_V3_AUTH_KEY"),
        PrivProtocol::Aes128,
        agent.get("SNMPD_V3_PRIV_KEY"),
    );
    assert_eq!(
        snmpd_v3_sysname("SNMPD_V3_USER", level).await.unwrap(),
        "netgw-snmpd"
    );
}

#[tokio::test]
async fn snmpd_v3_auth_priv_sha256_and_md5_and_auth_no_priv() {
    let agent = snmpd().await;
    let (a, p) = (
        agent.get("SNMPD_V3_AUTH_KEY"),
        agent.get("SNMPD_V3_PRIV_KEY"),
    );
    let sha256 = auth_priv(AuthProtocol::Sha256, a, PrivProtocol::Aes128, p);
    assert_eq!(
        snmpd_v3_sysname("SNMPD_V3_SHA256_USER", sha256)
            .await
            .unwrap(),
        "netgw-snmpd"
    );
    let md5 = auth_priv(AuthProtocol::Md5, a, PrivProtocol::Aes128, p);
    assert_eq!(
        snmpd_v3_sysname("SNMPD_V3_MD5_USER", md5).await.unwrap(),
        "netgw-snmpd"
    );
    let auth_only = V3Level::AuthNoPriv {
        auth: AuthProtocol::Sha1,
        auth_key: Secret::new(a),
    };
    assert_eq!(
        snmpd_v3_sysname("SNMPD_V3_AUTH_ONLY_USER", auth_only)
            .await
            .unwrap(),
        "netgw-snmpd"
    );
}

#[tokio::test]
async fn snmpd_v3_wrong_auth_key_is_a_typed_auth_error() {
    let agent = snmpd().await;
    let level = auth_priv(
        AuthProtocol::Sha1,
        "definitely-wrong-key",
        PrivProtocol::Aes128,
        agent.get("SNMPD_V3_PRIV_KEY"),
    );
    let err = snmpd_v3_sysname("SNMPD_V3_USER", level).await.unwrap_err();
    assert!(err.is_auth(), "expected an auth error, got: {err}");
    let msg = err.to_string();
    assert!(
        msg.contains("snmpd-v3") && msg.contains("netgw-sha"),
        "{msg}"
    );
    assert!(
        !msg.contains("definitely-wrong-key"),
        "secret leaked: {msg}"
    );
}

#[tokio::test]
async fn snmpd_v3_wrong_priv_key_and_unknown_user_fail_typed() {
    let agent = snmpd().await;
    let level = auth_priv(
        AuthProtocol::Sha1,
        agent.get("SNMPD_V3_AUTH_KEY"),
        PrivProtocol::Aes128,
        "definitely-wrong-priv",
    );
    let err = snmpd_v3_sysname("SNMPD_V3_USER", level).await.unwrap_err();
    assert!(err.is_auth() || err.is_timeout(), "wrong priv key: {err}");
    assert!(!err.to_string().contains("definitely-wrong-priv"));

    let cfg = v3(
        "snmpd-v3",
        agent.port("SNMPD_PORT"),
        "no-such-user",
        auth_priv(
            AuthProtocol::Sha1,
            "whatever-123",
            PrivProtocol::Aes128,
            "whatever-456",
        ),
        None,
    );
    let err = match SnmpClient::connect(cfg).await {
        Err(e) => e,
        Ok(mut c) => c.get(&[oid("1.3.6.1.2.1.1.5.0")]).await.unwrap_err(),
    };
    assert!(err.is_auth(), "unknown user: {err}");
}

#[tokio::test]
async fn snmpd_v2c_wrong_community_times_out_with_a_hint() {
    let agent = snmpd().await;
    let cfg = v2c("snmpd", agent.port("SNMPD_PORT"), "not-the-community")
        .with_timeout(Duration::from_millis(300), 1);
    let mut client = SnmpClient::connect(cfg).await.unwrap();
    let err = client.get(&[oid("1.3.6.1.2.1.1.5.0")]).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("community") && msg.contains("300ms") && msg.contains("snmpd"),
        "{msg}"
    );
    assert!(!msg.contains("not-the-community"));
}
