//! A netgw-lab fabric and a real `netgw serve` in front of it, for the status-page tests
//! (tests/it/ui_http.rs, tests/it/ui_browser.rs).
#![allow(dead_code)] // each test uses part of it

use netgw_labs::lab::{Lab, LabOptions};
use netgw_models::topology::Topology;
use std::process::Child;

/// Roles `trigger` and `read`.
pub const OPS: &str = "ui-ops-token-0123456789abcdef";
/// Role `read` only.
pub const VIEWER: &str = "ui-viewer-token-0123456789abcdef";

/// Two leaves under a spine; leaf2 also reaches an undriven Linux host.
pub const FABRIC: &str = "name: uilab\ntopology:\n  nodes:\n    spine1: {kind: arista_ceos}\n    leaf1: {kind: arista_ceos}\n    leaf2: {kind: arista_ceos}\n    host1: {kind: linux}\n  links:\n    - endpoints: [\"spine1:eth1\", \"leaf1:eth1\"]\n    - endpoints: [\"spine1:eth2\", \"leaf2:eth1\"]\n    - endpoints: [\"leaf2:eth3\", \"host1:eth1\"]\n";

pub struct UiLab {
    pub child: Child,
    pub base: String,
    pub lab: Lab,
    pub dir: tempfile::TempDir,
    /// Keep last: dropping it stops the devices.
    pub rt: tokio::runtime::Runtime,
}

impl Drop for UiLab {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl UiLab {
    /// The fabric with `faults` (`node`, `key`, `value`), each node wanting VLAN 720 (so a why-run
    /// finds drift), served with the two tokens and the fabric as `links_topology`.
    pub fn start(faults: Vec<(String, String, String)>) -> UiLab {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let topo = Topology::parse(FABRIC).unwrap();
        let lab = rt
            .block_on(Lab::start(
                &topo,
                LabOptions {
                    faults,
                    ..LabOptions::default()
                },
            ))
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        lab.write_inventory(&d.join("inventory.yml")).unwrap();
        crate::common::write(d, "fabric.clab.yml", FABRIC);
        for n in ["spine1", "leaf1", "leaf2"] {
            crate::common::write(
                d,
                &format!("repo/nodes/{n}.json"),
                &format!(
                    r#"{{"name":"{n}","run_list":["recipe[netdev::vlans]"],
                        "normal":{{"netdev":{{"vlans":{{"720":{{"name":"ui_page"}}}}}}}}}}"#
                ),
            );
        }
        write_config(
            d,
            "inventory: inventory.yml\nlinks_topology: fabric.clab.yml\n",
        );
        let (child, base) = spawn(d);
        UiLab {
            child,
            base,
            lab,
            dir,
            rt,
        }
    }

    /// Stop `netgw serve` and start it again on the same history, state and devices.
    pub fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let (child, base) = spawn(self.dir.path());
        self.child = child;
        self.base = base;
    }

    /// `POST /v1/converge` with `body` and the trigger token: the 202's JSON.
    pub fn trigger(&self, body: serde_json::Value) -> serde_json::Value {
        let url = format!("{}/v1/converge", self.base);
        self.rt.block_on(async {
            let r = reqwest::Client::new()
                .post(url)
                .bearer_auth(OPS)
                .json(&body)
                .timeout(std::time::Duration::from_secs(30))
                .send()
                .await
                .unwrap();
            let status = r.status();
            let answer: serde_json::Value = r.json().await.unwrap();
            assert_eq!(status, reqwest::StatusCode::ACCEPTED, "{answer}");
            answer
        })
    }

    /// `GET /v1/runs/{id}` until the run is no longer queued or running: its JSON.
    pub fn wait_run(&self, id: &str) -> serde_json::Value {
        let url = format!("{}/v1/runs/{id}", self.base);
        self.rt.block_on(async {
            let t = std::time::Instant::now();
            loop {
                let v: serde_json::Value = reqwest::Client::new()
                    .get(&url)
                    .bearer_auth(OPS)
                    .timeout(std::time::Duration::from_secs(30))
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                if !matches!(v["status"].as_str(), Some("queued" | "running")) {
                    return v;
                }
                assert!(t.elapsed() < std::time::Duration::from_secs(120), "{v}");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        })
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("serve.log")).unwrap_or_default()
    }
}

/// `netgw serve` alone (no devices) on `inventory`, with the two tokens and no `links_topology`: the
/// page draws the inventory's own lab.
pub struct UiServe {
    pub child: Child,
    pub base: String,
    pub dir: tempfile::TempDir,
}

impl Drop for UiServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl UiServe {
    /// `files`: (name in the gateway's directory, text); `inventory` names one of them.
    pub fn start(files: &[(&str, &str)], inventory: &str) -> UiServe {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for (name, text) in files {
            crate::common::write(d, name, text);
        }
        std::fs::create_dir_all(d.join("repo/nodes")).unwrap();
        write_config(d, &format!("inventory: {inventory}\n"));
        let (child, base) = spawn(d);
        UiServe { child, base, dir }
    }
}

/// serve.yml in `d`: `head` (the inventory and what goes with it), then the history, the repo and the
/// two tokens.
fn write_config(d: &std::path::Path, head: &str) {
    let hash = netgw::api::auth::token_hash_hex;
    crate::common::write(
        d,
        "serve.yml",
        &format!(
            "{head}db: history.db\nrepo: repo\ntokens:\n  - {{name: ops, sha256: {}, roles: [trigger, read]}}\n  - {{name: viewer, sha256: {}, roles: [read]}}\n",
            hash(OPS),
            hash(VIEWER)
        ),
    );
}

/// `netgw serve` on `d`'s serve.yml, its state and log in `d`.
fn spawn(d: &std::path::Path) -> (Child, String) {
    let state = d.join("state");
    crate::common::spawn_serve(
        &d.join("serve.yml"),
        &["--state-dir", state.to_str().unwrap()],
        &d.join("serve.log"),
    )
}
