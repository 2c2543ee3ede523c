//! NETCONF transport against servers written by others (docs/peers.md), over real SSH:
//!
//! * netconfd (yuma123 2.13) behind a private OpenSSH: base:1.1 chunked framing, candidate + commit,
//!   a confirmed commit really rolled back by the server, lock contention, discard-changes, typed errors.
//! * fake-switches `juniper_generic` (Junos EX over NETCONF): base:1.0 `]]>]]>` framing, lock,
//!   edit-config of a VLAN, commit, get-config read back.
//!
//! Each test starts its own peer in a temp dir on free 127.0.0.1 ports; a guard stops it by PID. A
//! missing peer fails the test with the install command, it is never skipped:
//!   scripts/peers/netconfd.sh install        (apt: netconfd netconfd-module-ietf-interfaces openssh-server)
//!   scripts/peers/fake-switches.sh install   (python venv under .peers/)

use std::time::{Duration, Instant};

use netgw_drivers::transport::Timeouts;
use netgw_drivers::transport::netconf::{
    Datastore, DefaultOperation, EditConfig, ErrorTag, Filter, Framing, NetconfError, NetconfSsh,
    Operation, connect_ssh,
};
use netgw_drivers::transport::ssh::{HostKeyPolicy, SshAuth, SshTarget};
use netgw_models::secret::Secret;

use crate::common::{self, Peer, start_peer};

/// Generous: every test starts its own netconfd, and on a loaded 2-core CI machine a fresh one's first
/// edit-config once took over 20 s. Nothing here measures speed.
fn timeouts() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(30),
        idle: Duration::from_secs(120),
        operation: Duration::from_secs(60),
    }
}

// ---------------------------------------------------------------- netconfd (yuma123)

const IF_NS: &str = "urn:ietf:params:xml:ns:yang:ietf-interfaces";

fn start_netconfd() -> Peer {
    start_peer(
        "scripts/peers/netconfd.sh",
        &[],
        "netconfd.env",
        "scripts/peers/netconfd.sh install",
    )
}

async fn netconfd_session(peer: &Peer) -> NetconfSsh {
    let s = connect_ssh(&common::netconfd_target(peer, timeouts()))
        .await
        .unwrap_or_else(|e| panic!("connect to netconfd: {e}"));
    tokio::time::sleep(common::NETCONFD_SETTLE).await;
    assert_eq!(
        s.framing(),
        Framing::Chunked,
        "netconfd and we both say base:1.1: chunked framing expected"
    );
    s
}

fn interface_xml(name: &str, description: &str) -> String {
    // Values go through the same escaping a driver would use.
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    format!(
        "<interfaces xmlns=\"{IF_NS}\"><interface><name>{}</name><description>{}</description><type xmlns:ianaift=\"urn:ietf:params:xml:ns:yang:iana-if-type\">ianaift:ethernetCsmacd</type></interface></interfaces>",
        esc(name),
        esc(description)
    )
}

fn interfaces_filter() -> Option<Filter> {
    Some(Filter::Subtree(format!("<interfaces xmlns=\"{IF_NS}\"/>")))
}

/// (name, description) of every configured interface in a get-config reply's data XML.
async fn configured_interfaces(s: &mut NetconfSsh, ds: Datastore) -> Vec<(String, String)> {
    let reply = s
        .get_config(ds, interfaces_filter())
        .await
        .expect("get-config");
    let Some(data) = reply.data() else {
        panic!("get-config without <data>: {}", reply.raw())
    };
    data.child("interfaces")
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
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netconfd_candidate_edit_commit_read_back() {
    let peer = start_netconfd();
    let mut s = netconfd_session(&peer).await;
    assert!(s.session_id().is_some());
    assert!(s.has_capability(netgw_drivers::transport::netconf::ops::CAP_CANDIDATE));
    assert!(s.has_capability(netgw_drivers::transport::netconf::ops::CAP_CONFIRMED_COMMIT_11));

    // Characters that must be escaped survive the round trip unchanged.
    let description = "uplink <to> core & \"spine\"";
    s.lock(Datastore::Candidate).await.expect("lock candidate");
    s.edit_config(
        EditConfig::new(
            Datastore::Candidate,
            interface_xml("eth-netgw0", description),
        )
        .default_operation(DefaultOperation::Merge),
    )
    .await
    .expect("edit-config");
    assert_eq!(
        configured_interfaces(&mut s, Datastore::Running).await,
        vec![],
        "not committed yet"
    );
    s.commit().await.expect("commit");
    s.unlock(Datastore::Candidate).await.expect("unlock");

    // Never trust <ok/> alone: read running back.
    let running = configured_interfaces(&mut s, Datastore::Running).await;
    assert_eq!(
        running,
        vec![("eth-netgw0".to_string(), description.to_string())]
    );
    let xml = s
        .running_config(interfaces_filter())
        .await
        .expect("running_config");
    assert!(
        xml.contains("eth-netgw0") && xml.contains("&lt;to&gt;"),
        "{xml}"
    );
    // <get> (config + state) with a subtree filter.
    let state = s.get(interfaces_filter()).await.expect("get");
    assert!(
        state.data_xml().is_some_and(|x| x.contains("eth-netgw0")),
        "{}",
        state.raw()
    );
    s.close().await.expect("close-session");
}

/// RFC 6241 §4.5 pipelining against a server nobody here wrote: the lock, an edit and two reads
/// written at once before any reply, each reply taken by the call that asks for it, in order; the
/// edit really landed in the candidate (read back by the pipelined read), and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netconfd_answers_requests_sent_ahead_in_order() {
    let peer = start_netconfd();
    let mut s = netconfd_session(&peer).await;
    let edit = EditConfig::new(
        Datastore::Candidate,
        interface_xml("eth-ahead0", "sent ahead"),
    )
    .default_operation(DefaultOperation::Merge);
    let read = |ds| Operation::GetConfig {
        source: ds,
        filter: interfaces_filter(),
    };
    s.send_ahead(&[
        Operation::Lock(Datastore::Candidate),
        Operation::EditConfig(edit.clone()),
        read(Datastore::Candidate),
        read(Datastore::Running),
    ])
    .await
    .expect("send ahead");
    s.lock(Datastore::Candidate)
        .await
        .expect("lock, sent ahead");
    s.edit_config(edit).await.expect("edit-config, sent ahead");
    let candidate = configured_interfaces(&mut s, Datastore::Candidate).await;
    assert_eq!(
        candidate,
        vec![("eth-ahead0".to_string(), "sent ahead".to_string())]
    );
    assert_eq!(
        configured_interfaces(&mut s, Datastore::Running).await,
        vec![]
    );
    // Nothing more was sent ahead: the next request goes on the wire and is answered.
    s.discard_changes().await.expect("discard-changes");
    s.unlock(Datastore::Candidate).await.expect("unlock");
    assert_eq!(
        configured_interfaces(&mut s, Datastore::Candidate).await,
        vec![]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netconfd_unconfirmed_commit_is_rolled_back_by_the_server() {
    let peer = start_netconfd();
    let mut s = netconfd_session(&peer).await;
    s.edit_config(EditConfig::new(
        Datastore::Candidate,
        interface_xml("eth-confirm0", "pending"),
    ))
    .await
    .expect("edit-config");
    let started = Instant::now();
    s.confirmed_commit(Some(3), None)
        .await
        .expect("confirmed commit");
    let names: Vec<String> = configured_interfaces(&mut s, Datastore::Running)
        .await
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        vec!["eth-confirm0"],
        "a confirmed commit is applied at once"
    );

    // Do not confirm. The server must revert running when the 3 s elapse (RFC 6241 §8.4.1). netconfd
    // runs its timers only when its session loop is idle for a while, so stay quiet, then check.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mut reverted = false;
    while started.elapsed() < Duration::from_secs(25) {
        if configured_interfaces(&mut s, Datastore::Running)
            .await
            .is_empty()
        {
            reverted = true;
            break;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    assert!(
        reverted,
        "running still holds the change 25 s after a 3 s confirmed commit"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "reverted before the timeout"
    );
    s.close().await.expect("close-session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netconfd_persisted_confirmed_commit_confirmed_from_another_session() {
    let peer = start_netconfd();
    let mut a = netconfd_session(&peer).await;
    a.edit_config(EditConfig::new(
        Datastore::Candidate,
        interface_xml("eth-persist0", "kept"),
    ))
    .await
    .expect("edit-config");
    a.confirmed_commit(Some(3), Some("netgw-run-1"))
        .await
        .expect("confirmed commit with persist");
    // With persist, the commit survives the session that made it (RFC 6241 §8.4.1); confirm elsewhere.
    a.close().await.expect("close");
    let mut b = netconfd_session(&peer).await;
    let err = b
        .confirming_commit(Some("wrong-token"))
        .await
        .expect_err("wrong persist-id accepted");
    assert!(!err.rpc_errors().is_empty(), "{err}");
    b.confirming_commit(Some("netgw-run-1"))
        .await
        .expect("confirming commit");
    tokio::time::sleep(Duration::from_secs(5)).await;
    let names: Vec<String> = configured_interfaces(&mut b, Datastore::Running)
        .await
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        vec!["eth-persist0"],
        "a confirmed change must stay after the timeout"
    );

    // cancel-commit reverts a pending persisted commit at once.
    b.edit_config(EditConfig::new(
        Datastore::Candidate,
        interface_xml("eth-persist1", "cancelled"),
    ))
    .await
    .expect("edit-config");
    b.confirmed_commit(Some(60), Some("netgw-run-2"))
        .await
        .expect("confirmed commit");
    b.cancel_commit(Some("netgw-run-2"))
        .await
        .expect("cancel-commit");
    let names: Vec<String> = configured_interfaces(&mut b, Datastore::Running)
        .await
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, vec!["eth-persist0"]);
    b.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netconfd_lock_contention_is_a_typed_lock_denied() {
    let peer = start_netconfd();
    let mut a = netconfd_session(&peer).await;
    let mut b = netconfd_session(&peer).await;
    a.lock(Datastore::Candidate).await.expect("first lock");
    let err = b
        .lock(Datastore::Candidate)
        .await
        .expect_err("second lock must fail");
    assert!(err.has_tag(&ErrorTag::LockDenied), "{err}");
    let holder = err.rpc_errors()[0]
        .info_value("session-id")
        .map(str::to_string);
    assert_eq!(
        holder,
        a.session_id().map(|id| id.to_string()),
        "error-info names the holder: {err}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("in lock on netconfd: device returned error lock-denied"),
        "{msg}"
    );

    a.unlock(Datastore::Candidate).await.expect("unlock");
    b.lock(Datastore::Candidate)
        .await
        .expect("lock after release");

    // kill-session releases the locks of the killed session (RFC 6241 §7.9).
    let b_id = b.session_id().expect("session-id");
    a.kill_session(b_id).await.expect("kill-session");
    a.lock(Datastore::Candidate)
        .await
        .expect("lock after kill-session");
    a.unlock(Datastore::Candidate).await.expect("unlock");
    assert!(
        b.discard_changes().await.is_err(),
        "killed session still answers"
    );
    drop(b);
    a.close().await.expect("close a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netconfd_discard_changes_and_typed_validation_error() {
    let peer = start_netconfd();
    let mut s = netconfd_session(&peer).await;
    s.edit_config(EditConfig::new(
        Datastore::Candidate,
        interface_xml("eth-discard0", "x"),
    ))
    .await
    .expect("edit-config");
    assert_eq!(
        configured_interfaces(&mut s, Datastore::Candidate)
            .await
            .len(),
        1
    );
    s.validate(Datastore::Candidate).await.expect("validate");
    s.discard_changes().await.expect("discard-changes");
    assert!(
        configured_interfaces(&mut s, Datastore::Candidate)
            .await
            .is_empty(),
        "candidate not reset"
    );
    assert!(
        configured_interfaces(&mut s, Datastore::Running)
            .await
            .is_empty()
    );

    // An element the YANG model does not know: a typed rpc-error from a real server.
    let bad = format!(
        "<interfaces xmlns=\"{IF_NS}\"><interface><name>e1</name><no-such-leaf>1</no-such-leaf></interface></interfaces>"
    );
    let err = s
        .edit_config(EditConfig::new(Datastore::Candidate, bad))
        .await
        .expect_err("bad element accepted");
    let e = err
        .rpc_errors()
        .first()
        .unwrap_or_else(|| panic!("not an rpc error: {err}"));
    assert!(e.tag.is_some() && e.error_type.is_some(), "{e:?}");
    assert!(
        err.to_string()
            .starts_with("in edit-config on netconfd: device returned error"),
        "{err}"
    );
    // The session is still usable after an rpc-error.
    s.discard_changes()
        .await
        .expect("discard-changes after error");
    s.close().await.expect("close");
}

// ---------------------------------------------------------------- fake-switches (Junos)

fn start_fake_junos() -> (Peer, u16) {
    // The launcher takes the spec as JSON text, so parallel tests share no file.
    let spec = r#"[{"name": "junos1", "model": "juniper_generic", "ssh_port": 0}]"#;
    let peer = start_peer(
        "scripts/peers/fake-switches.sh",
        &[spec],
        "fake-switches.env",
        "scripts/peers/fake-switches.sh install",
    );
    let ports: serde_json::Value =
        serde_json::from_str(&peer.env["FAKE_SWITCHES_PORTS"]).expect("ports json");
    let port = ports["junos1"]["ssh_port"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
        .expect("junos1 port");
    (peer, port)
}

fn fake_junos_target(peer: &Peer, port: u16) -> SshTarget {
    SshTarget {
        device: "junos1".into(),
        host: "127.0.0.1".into(),
        port,
        username: "admin".into(),
        auth: SshAuth::Password(Secret::new("admin")),
        // A fresh known_hosts: the simulator's fixed key is recorded on first contact.
        host_keys: HostKeyPolicy {
            known_hosts: peer.dir.path().join("known_hosts.client"),
            accept_new: true,
        },
        timeouts: timeouts(),
    }
}

fn vlan_names(reply_data: &netgw_drivers::transport::netconf::XmlElement) -> Vec<(String, String)> {
    reply_data
        .path(&["configuration", "vlans"])
        .map(|v| {
            v.children_named("vlan")
                .map(|v| {
                    (
                        v.child_text("name").unwrap_or_default(),
                        v.child_text("vlan-id").unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_junos_eom_lock_edit_commit_read_back() {
    let (peer, port) = start_fake_junos();
    let mut s = connect_ssh(&fake_junos_target(&peer, port))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    assert_eq!(
        s.framing(),
        Framing::EndOfMessage,
        "fake-switches only speaks base:1.0"
    );

    // docs/peers.md: a dead session can leave the global lock held with a dirty candidate.
    let _ = s.discard_changes().await;
    let _ = s.unlock(Datastore::Candidate).await;

    s.lock(Datastore::Candidate).await.expect("lock");
    let vlan = "<configuration><vlans><vlan><name>NETGW_100</name><vlan-id>100</vlan-id></vlan></vlans></configuration>";
    s.edit_config(EditConfig::new(Datastore::Candidate, vlan))
        .await
        .expect("edit-config");
    s.commit().await.expect("commit");
    s.unlock(Datastore::Candidate).await.expect("unlock");

    let reply = s
        .get_config(
            Datastore::Running,
            Some(Filter::Subtree(
                "<configuration><vlans/></configuration>".into(),
            )),
        )
        .await
        .expect("get-config");
    let data = reply
        .data()
        .unwrap_or_else(|| panic!("no <data>: {}", reply.raw()));
    assert!(
        vlan_names(data).contains(&("NETGW_100".into(), "100".into())),
        "{}",
        reply.raw()
    );
    assert!(reply.data_xml().is_some_and(|x| x.contains("NETGW_100")));
    s.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_junos_errors_are_typed_and_session_survives() {
    let (peer, port) = start_fake_junos();
    let mut s = connect_ssh(&fake_junos_target(&peer, port))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let _ = s.discard_changes().await;
    let _ = s.unlock(Datastore::Candidate).await;
    s.lock(Datastore::Candidate).await.expect("lock");
    // A second session cannot take the (global) lock.
    let mut other = connect_ssh(&fake_junos_target(&peer, port))
        .await
        .expect("second session");
    let err = other
        .lock(Datastore::Candidate)
        .await
        .expect_err("second lock must fail");
    assert!(matches!(err.root(), NetconfError::Rpc { .. }), "{err}");
    // Vendor escape hatch: an RPC the simulator does not know gives an rpc-error, not a hang.
    let r = s.rpc_raw("<get-software-information/>").await;
    assert!(
        r.is_err(),
        "fake-switches does not implement get-software-information: {r:?}"
    );
    s.unlock(Datastore::Candidate)
        .await
        .expect("unlock after errors");
    drop(other);
    s.close().await.expect("close");
}
