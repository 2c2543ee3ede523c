//! Plan, approve, apply: `netgw converge --why-run --plan-out FILE` writes the plan, `netgw converge
//! --plan FILE` applies exactly that plan on netgw-lab devices, refusing a device whose planned-from
//! state moved in between (and only that one), and refusing a file it cannot read or that was made
//! for another inventory.

use crate::common;
use crate::common::ui_lab::{OPS, UiLab, VIEWER};
use crate::ui_http;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const NODES: [(&str, &str, &str); 3] = [
    ("eos1", "arista_ceos", "Ethernet1"),
    ("ios1", "cisco_iol, type: L2", "Ethernet0/1"),
    ("nx1", "cisco_n9kv", "Ethernet1/1"),
];

struct Site {
    rt: tokio::runtime::Runtime,
    lab: netgw_labs::lab::Lab,
    dir: tempfile::TempDir,
}

impl Site {
    /// Three lab devices, each declaring VLAN 401 `planned` and a port description.
    fn new(name: &str) -> Site {
        let mut topo = format!("name: {name}\ntopology:\n  nodes:\n");
        for (n, kind, _) in NODES {
            topo.push_str(&format!("    {n}: {{kind: {kind}}}\n"));
        }
        let (rt, lab, dir) = common::lab_with_inventory(&topo);
        let site = Site { rt, lab, dir };
        for (n, _, port) in NODES {
            site.declare(n, "planned", port);
        }
        site
    }

    fn declare(&self, node: &str, vlan_name: &str, port: &str) {
        let nodes = self.dir.path().join("repo/nodes");
        std::fs::create_dir_all(&nodes).unwrap();
        std::fs::write(
            nodes.join(format!("{node}.json")),
            format!(
                r#"{{"name":"{node}","run_list":["recipe[netdev::vlans]","recipe[netdev::links]"],
                    "normal":{{"netdev":{{"vlans":{{"401":{{"name":"{vlan_name}"}}}},
                    "links":{{"{port}":{{"description":"to-core"}}}}}}}}}}"#
            ),
        )
        .unwrap();
    }

    fn path(&self, f: &str) -> PathBuf {
        self.dir.path().join(f)
    }

    /// `program` in the site's environment: its state directory, no lock or current-state override.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("NETGW_STATE_DIR", self.path("state"))
            .env_remove("NETGW_LOCK_DIR")
            .env_remove("NETGW_CURRENT_STATE")
            .stdin(Stdio::null());
        c
    }

    /// `netgw ARGS`: exit code, stdout, and both streams for messages.
    fn netgw(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = self
            .command(env!("CARGO_BIN_EXE_netgw"))
            .arg("--repo")
            .arg(self.path("repo"))
            .args(args)
            .arg("--inventory")
            .arg(self.path("inventory.yml"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let text = format!(
            "{args:?}\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), stdout, text)
    }

    fn vlan(&self, node: &str) -> Option<String> {
        let dev = &self.lab.node(node).unwrap().device;
        dev.state().vlans.get(&401).cloned()
    }

    fn set_vlan(&self, node: &str, name: &str) {
        let dev = &self.lab.node(node).unwrap().device;
        dev.state().vlans.insert(401, name.into());
    }

    fn end(self) {
        drop(self.lab);
        self.rt.shutdown_timeout(std::time::Duration::from_secs(5));
    }
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn write_json(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// What `converge --plan` says about a file it refuses: exit 2, the file and the field named.
fn refused(site: &Site, file: &Path, field: &str) -> String {
    let f = file.to_str().unwrap();
    let (code, _, text) = site.netgw(&["converge", "--plan", f]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains(f) && text.contains(field), "{field}: {text}");
    text
}

#[test]
fn a_plan_written_by_why_run_is_applied_exactly() {
    let site = Site::new("planapply");
    let plan = site.path("site.plan.json");
    let p = plan.to_str().unwrap();
    let (code, out, text) = site.netgw(&["converge", "--why-run", "--plan-out", p]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        out.contains(&format!("Plan written to {p} (3 node(s), 3 with changes)")),
        "{text}"
    );
    assert!(out.contains("Would create vlan[401]"), "{text}");
    for (n, _, _) in NODES {
        assert_eq!(site.vlan(n), None, "why-run changed {n}");
    }
    let file = read_json(&plan);
    assert_eq!(file["format"], "netgw-plan");
    assert_eq!(file["format_version"], 1);
    let eos = &file["nodes"]["eos1"];
    assert_eq!(eos["platform"], "eos");
    assert!(
        eos["observed"]["digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // VLAN 401 was absent when planned: its planned-from value is null.
    assert_eq!(eos["observed"]["depends_on"]["vlan[401]"], Value::Null);
    assert!(
        eos["observed"]["depends_on"]["link[Ethernet1]"].is_object(),
        "{eos}"
    );
    assert_eq!(eos["changes"][0]["action"], "create");

    // Files it must not apply, each refused before any device is touched.
    let bad = site.path("bad.plan.json");
    let mut newer = file.clone();
    newer["format_version"] = 99.into();
    write_json(&bad, &newer);
    let text = refused(&site, &bad, "format_version");
    assert!(text.contains("newer"), "{text}");
    let mut broken = file.clone();
    broken["nodes"]["ios1"]["observed"]
        .as_object_mut()
        .unwrap()
        .remove("digest");
    write_json(&bad, &broken);
    let text = refused(&site, &bad, "nodes.ios1.observed");
    assert!(text.contains("digest"), "{text}");
    std::fs::write(&bad, "{\"format\": \"netgw-plan\", \"format_version\": 1,").unwrap();
    refused(&site, &bad, "not JSON");
    let mut elsewhere = file.clone();
    elsewhere["nodes"]["nx1"]["address"] = "192.0.2.1:22".into();
    write_json(&bad, &elsewhere);
    let text = refused(&site, &bad, "nodes.nx1.address");
    assert!(text.contains("another inventory"), "{text}");
    let mut stranger = file.clone();
    stranger["nodes"]["core9"] = file["nodes"]["nx1"].clone();
    write_json(&bad, &stranger);
    refused(&site, &bad, "nodes.core9");
    for (n, _, _) in NODES {
        assert_eq!(site.vlan(n), None, "a refused plan changed {n}");
    }

    // The command the why-run printed applies the plan, run as printed (same repo and inventory).
    let apply = out
        .lines()
        .find_map(|l| l.split_once("apply it with: ").map(|(_, c)| c.to_owned()))
        .unwrap_or_else(|| panic!("no apply command in the why-run's output:\n{out}"));
    assert!(
        apply.starts_with("netgw --repo ") && apply.contains(&format!("converge --plan {p}")),
        "{apply}"
    );
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_netgw")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = site
        .command("sh")
        .args(["-c", &apply])
        .env("PATH", path)
        .output()
        .unwrap();
    let text = format!(
        "{apply}\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{text}");
    for (n, _, _) in NODES {
        assert_eq!(site.vlan(n).as_deref(), Some("planned"), "{n}: {text}");
    }
    let (code, out, text) = site.netgw(&["converge", "--why-run", "--format", "json"]);
    assert_eq!(code, Some(0), "{text}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["summary"]["updated"], 0, "up to date: {text}");
    assert_eq!(report["summary"]["failed"], 0, "{text}");
    site.end();
}

#[test]
fn a_device_changed_since_the_plan_is_refused_and_the_others_applied() {
    let site = Site::new("planmoved");
    for (n, _, _) in NODES {
        site.set_vlan(n, "old");
    }
    let plan = site.path("site.plan.json");
    let p = plan.to_str().unwrap();
    let (code, _, text) = site.netgw(&["converge", "--why-run", "--plan-out", p]);
    assert_eq!(code, Some(0), "{text}");

    // Between approval and apply: someone renames the VLAN on eos1, and the repo moves on for
    // ios1; the plan, not the repo, is what gets applied.
    site.set_vlan("eos1", "sneaky");
    site.declare("ios1", "not-reviewed", "Ethernet0/1");
    let (code, out, text) = site.netgw(&["converge", "--plan", p, "--format", "json"]);
    assert_eq!(code, Some(1), "a refused device fails the run: {text}");
    assert_eq!(
        site.vlan("eos1").as_deref(),
        Some("sneaky"),
        "eos1 untouched"
    );
    assert_eq!(site.vlan("ios1").as_deref(), Some("planned"), "{text}");
    assert_eq!(site.vlan("nx1").as_deref(), Some("planned"), "{text}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let node = |n: &str| {
        report["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == n)
            .unwrap_or_else(|| panic!("{n}: {text}"))
            .clone()
    };
    let eos = node("eos1");
    assert_eq!(eos["status"], "failed", "{text}");
    let error = eos["error"].as_str().unwrap();
    assert!(
        error.contains(r#"vlan[401] name: planned from "old", now "sneaky""#),
        "{error}"
    );
    let skipped: Vec<_> = eos["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "skipped")
        .map(|r| {
            format!(
                "{}[{}]",
                r["type"].as_str().unwrap(),
                r["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        skipped,
        ["vlan[401]", "link[Ethernet1]"],
        "what was not applied: {text}"
    );
    assert_eq!(node("nx1")["status"], "success", "{text}");
    let warnings = node("ios1")["warnings"].to_string();
    assert!(
        warnings.contains("no longer the one the plan was made for"),
        "{text}"
    );
    site.end();
}

/// `POST path` on the API with `token` and a JSON body: the status and the answer.
fn api_post(lab: &UiLab, token: &str, path: &str, body: &Value) -> (u16, Value) {
    let url = format!("{}{path}", lab.base);
    lab.rt.block_on(async {
        let r = reqwest::Client::new()
            .post(url)
            .bearer_auth(token)
            .json(body)
            .timeout(std::time::Duration::from_secs(30))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    })
}

/// serve keeps a plan a why-run wrote, shows it with its diff on the status page, and applies it
/// only for a trigger-role session whose form carries its CSRF token; a plan applies once.
#[test]
fn serve_shows_a_posted_plan_for_approval_and_applies_it() {
    let lab = UiLab::start(Vec::new());
    let d = lab.dir.path();
    let plan = d.join("fabric.plan.json");
    let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(d.join("repo"))
        .args([
            "converge",
            "--why-run",
            "--plan-out",
            plan.to_str().unwrap(),
        ])
        .arg("--inventory")
        .arg(d.join("inventory.yml"))
        .env("NETGW_STATE_DIR", d.join("cli-state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let file = read_json(&plan);

    let (status, answer) = api_post(&lab, VIEWER, "/v1/plans", &file);
    assert_eq!(
        status, 403,
        "posting a plan needs the trigger role: {answer}"
    );
    let (status, answer) = api_post(&lab, OPS, "/v1/plans", &file);
    assert_eq!(status, 201, "{answer}");
    let id = answer["plan_id"].as_str().unwrap().to_owned();
    assert_eq!(answer["status"], "pending");
    assert_eq!(
        answer["changing"],
        serde_json::json!(["leaf1", "leaf2", "spine1"])
    );
    let mut newer = file.clone();
    newer["format_version"] = 7.into();
    let (status, answer) = api_post(
        &lab,
        OPS,
        "/v1/converge",
        &serde_json::json!({"plan": newer}),
    );
    assert_eq!(status, 400, "{answer}");
    assert!(answer.to_string().contains("format_version"), "{answer}");
    for n in ["spine1", "leaf1", "leaf2"] {
        let dev = &lab.lab.node(n).unwrap().device;
        assert_eq!(
            dev.state().vlans.get(&720),
            None,
            "{n} changed before approval"
        );
    }

    let base = lab.base.clone();
    let page = format!("/ui/plans/{id}");
    let apply = format!("/ui/plans/{id}/apply");
    let applied = lab.rt.block_on(async {
        let (viewer, _) = ui_http::sign_in(&base, VIEWER).await;
        let (status, text) = ui_http::get(&base, &viewer, &page).await;
        assert_eq!(status.as_u16(), 200, "{text}");
        assert!(text.contains("vlan[720]: create"), "the diff: {text}");
        assert!(
            !text.contains("apply-plan") && text.contains("trigger role"),
            "{text}"
        );
        let token = ui_http::csrf(&text);
        let r = ui_http::post(&base, &viewer, &apply, &[("csrf", &token)]).await;
        assert_eq!(r.status().as_u16(), 403, "a read-only session cannot apply");

        let (ops, _) = ui_http::sign_in(&base, OPS).await;
        let (_, list) = ui_http::get(&base, &ops, "/ui/plans").await;
        assert!(list.contains(&format!("data-plan=\"{id}\"")), "{list}");
        let (_, text) = ui_http::get(&base, &ops, &page).await;
        assert!(text.contains("apply-plan"), "{text}");
        let r = ui_http::post(&base, &ops, &apply, &[("csrf", "not-the-token")]).await;
        assert_eq!(r.status().as_u16(), 403, "CSRF");
        let token = ui_http::csrf(&text);
        let r = ui_http::post(&base, &ops, &apply, &[("csrf", &token)]).await;
        assert_eq!(r.status().as_u16(), 303);
        let to = r.headers()["location"].to_str().unwrap().to_owned();
        assert!(to.starts_with("/ui/runs/"), "{to}");
        to["/ui/runs/".len()..].to_owned()
    });
    let runs = lab.rt.block_on(async {
        let (ops, _) = ui_http::sign_in(&base, OPS).await;
        ui_http::get(&base, &ops, &page).await.1
    });
    let run = runs
        .split("/ui/runs/")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("the plan page links its run")
        .to_owned();
    assert_eq!(run, applied);
    let ended = lab.wait_run(&run);
    assert_eq!(ended["status"], "finished", "{ended}");
    for n in ["spine1", "leaf1", "leaf2"] {
        let dev = &lab.lab.node(n).unwrap().device;
        assert_eq!(
            dev.state().vlans.get(&720).map(String::as_str),
            Some("ui_page"),
            "{n}"
        );
    }
    let (status, answer) = api_post(
        &lab,
        OPS,
        "/v1/converge",
        &serde_json::json!({"plan_id": id}),
    );
    assert_eq!(status, 409, "a plan applies once: {answer}");

    // The CI client applies a plan file the same way, and follows the run to its end.
    let out = Command::new(env!("CARGO_BIN_EXE_netgw"))
        .arg("--repo")
        .arg(d.join("repo"))
        .args([
            "converge",
            "--why-run",
            "--plan-out",
            plan.to_str().unwrap(),
        ])
        .arg("--inventory")
        .arg(d.join("inventory.yml"))
        .env("NETGW_STATE_DIR", d.join("cli-state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let trigger = |file: &Path| {
        Command::new(env!("CARGO_BIN_EXE_netgw"))
            .args([
                "trigger", "--url", &lab.base, "--token", OPS, "--wait", "--plan",
            ])
            .arg(file)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = trigger(&plan);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("0/3 resources updated"),
        "nothing left to change: {text}"
    );
    let bad = d.join("bad.plan.json");
    std::fs::write(&bad, "[]").unwrap();
    let o = trigger(&bad);
    let text = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{text}");
    assert!(text.contains(bad.to_str().unwrap()), "{text}");
}
