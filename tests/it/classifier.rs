//! The external node classifier (Puppet ENC contract) with real executables: shell scripts.

use crate::common;

use common::mem_driver as mem;

use netgw::classify::{self, ClassifyError};
use netgw::engine::{self, EngineOptions};
use netgw::report::NodeStatus;
use netgw::store::local::LocalRepo;
use netgw_models::attributes::AttributeSet;
use netgw_models::{DesiredState, NodeName};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[tokio::test]
async fn array_classes_and_environment() {
    let d = tempfile::tempdir().unwrap();
    let enc = script(
        d.path(),
        "enc",
        r#"cat <<EOF
---
classes:
  - ntp
  - netdev::vlans
environment: lab
parameters:
  node_seen: "$1"
EOF
"#,
    );
    let c = classify::classify(&enc, "sw1", T).await.unwrap();
    let classes: Vec<&str> = c.classes.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(classes, ["ntp", "netdev::vlans"]);
    assert_eq!(c.environment.as_deref(), Some("lab"));
    assert_eq!(
        c.parameters["node_seen"], "sw1",
        "the node name is the argument"
    );

    let mut desired = DesiredState::new(NodeName::new("sw1").unwrap());
    let mut attrs = AttributeSet::new();
    classify::apply(&c, &mut desired, &mut attrs);
    let rl: Vec<String> = desired
        .run_list
        .items()
        .iter()
        .map(|i| i.to_string())
        .collect();
    assert_eq!(rl, ["recipe[ntp]", "recipe[netdev::vlans]"]);
    assert_eq!(desired.chef_environment, "lab");
    assert_eq!(attrs.merged()["node_seen"], "sw1");
}

#[tokio::test]
async fn hash_classes_with_parameters() {
    let d = tempfile::tempdir().unwrap();
    let enc = script(
        d.path(),
        "enc",
        r#"cat <<'EOF'
classes:
  netdev::vlans:
    vlans:
      "30": {name: ops}
  ntp:
parameters:
  site: par1
EOF
"#,
    );
    let c = classify::classify(&enc, "sw1", T).await.unwrap();
    assert_eq!(c.classes.len(), 2);
    let a = serde_json::Value::Object(classify::attributes(&c));
    assert_eq!(
        a,
        json!({"site": "par1", "netdev": {"vlans": {"30": {"name": "ops"}}}})
    );
}

#[tokio::test]
async fn unknown_nodes_and_bad_answers_fail_clearly() {
    let d = tempfile::tempdir().unwrap();
    let exit1 = script(d.path(), "exit1", "echo 'no such node' >&2\nexit 1\n");
    let e = classify::classify(&exit1, "sw1", T).await.unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, ClassifyError::NotFound { .. }), "{m}");
    assert!(m.contains("could not find node sw1"), "{m}");
    assert!(
        m.contains("exited with status 1") && m.contains("no such node"),
        "{m}"
    );

    let empty = script(d.path(), "empty", "exit 0\n");
    let m = classify::classify(&empty, "sw1", T)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("could not find node sw1") && m.contains("printed nothing"),
        "{m}"
    );

    let garbage = script(d.path(), "garbage", "echo 'classes: [ntp, {'\n");
    let e = classify::classify(&garbage, "sw1", T).await.unwrap_err();
    assert!(matches!(e, ClassifyError::Parse { .. }), "{e}");
    assert!(e.to_string().contains("invalid YAML"), "{e}");

    let wrong = script(d.path(), "wrong", "echo 'classes: 42'\n");
    let e = classify::classify(&wrong, "sw1", T).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("classes must be a list or a mapping"),
        "{e}"
    );

    let e = classify::classify(&d.path().join("missing"), "sw1", T)
        .await
        .unwrap_err();
    assert!(matches!(e, ClassifyError::Spawn { .. }), "{e}");

    let flood = script(d.path(), "flood", "yes classes:\n");
    let e = classify::classify(&flood, "sw1", T).await.unwrap_err();
    assert!(matches!(e, ClassifyError::TooMuchOutput { .. }), "{e}");
}

#[tokio::test]
async fn a_hang_hits_the_timeout() {
    let d = tempfile::tempdir().unwrap();
    // `exec`: the hanging process is the child itself, so the kill on timeout leaves nothing behind.
    let hang = script(d.path(), "hang", "exec sleep 30\n");
    let t0 = Instant::now();
    let e = classify::classify(&hang, "sw1", Duration::from_millis(500))
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e}");
    assert!(e.to_string().contains("no answer within 0.5s"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(5));
}

const SW1: &str = r#"{"name":"sw1","run_list":[],"normal":{"tags":["fabric"]}}"#;

fn repo() -> (tempfile::TempDir, LocalRepo) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("nodes")).unwrap();
    std::fs::create_dir_all(d.path().join("environments")).unwrap();
    std::fs::write(d.path().join("nodes/sw1.json"), SW1).unwrap();
    std::fs::write(d.path().join("nodes/sw2.json"), SW1.replace("sw1", "sw2")).unwrap();
    std::fs::write(
        d.path().join("environments/lab.json"),
        r#"{"name":"lab","default_attributes":{"netdev":{"vlans":{"31":{"name":"lab"}}}}}"#,
    )
    .unwrap();
    let r = LocalRepo::open(d.path()).unwrap();
    (d, r)
}

#[tokio::test]
async fn a_converge_uses_the_classification_and_never_saves_it() {
    let (d, repo) = repo();
    let before = std::fs::read(d.path().join("nodes/sw1.json")).unwrap();
    let encdir = tempfile::tempdir().unwrap();
    let enc = script(
        encdir.path(),
        "enc",
        r#"case "$1" in
sw1) cat <<'EOF'
classes:
  netdev::vlans:
    vlans:
      "30": {name: ops}
parameters:
  site: par1
environment: lab
EOF
;;
*) exit 1 ;;
esac
"#,
    );
    let (dev1, dev2) = (mem::device(), mem::device());
    let report = engine::converge(
        &engine::Infra::new(
            Arc::new(repo.clone()),
            repo.clone(),
            mem::connector(&[("sw1", dev1.clone()), ("sw2", dev2.clone())]),
        )
        .with_classifier(Some(enc)),
        vec![mem::job("sw1"), mem::job("sw2")],
        EngineOptions::default(),
    )
    .await;
    let (n1, n2) = (&report.nodes[0], &report.nodes[1]);
    assert_eq!(n1.status, NodeStatus::Success, "{:?}", n1.error);
    let ids: Vec<u16> = dev1
        .lock()
        .unwrap()
        .vlans
        .iter()
        .map(|v| v.id.get())
        .collect();
    assert_eq!(
        ids,
        [1, 30, 31],
        "class recipe + its parameters + the classifier's environment"
    );
    assert_eq!(n2.status, NodeStatus::Failed);
    assert!(
        n2.error
            .as_deref()
            .unwrap()
            .contains("could not find node sw2"),
        "{:?}",
        n2.error
    );
    assert_eq!(dev2.lock().unwrap().commits, 0);

    let after = std::fs::read(d.path().join("nodes/sw1.json")).unwrap();
    assert_eq!(after, before, "the desired file is byte-for-byte unchanged");
    let current: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("nodes/current/sw1.json")).unwrap(),
    )
    .unwrap();
    assert!(current.get("run_list").is_none() && current.get("normal").is_none());
    assert!(current.get("chef_environment").is_none());
}
