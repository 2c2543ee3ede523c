//! Run reports: per node, per resource, in the JSON shape the API and `--format json` share, and the
//! human form modelled on chef-client's doc formatter.

mod events;
mod transaction;

pub use events::{EventSink, RunEvent};
pub use transaction::{Outcome, Transaction, TxDevice, TxFailure};

use crate::kind::NodeErrorKind;
use crate::terminal::terminal_safe;
use netgw_drivers::driver::ErrorKind;
use netgw_models::plan::{PropertyChange, ResourceRef};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceStatus {
    UpToDate,
    Updated,
    WouldUpdate,
    Failed,
    Skipped,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceReport {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: String,
    pub recipe: String,
    /// Chef-style action: `create`, `update`, `delete`, or `nothing` when up to date.
    pub action: String,
    pub status: ResourceStatus,
    pub changes: Vec<PropertyChange>,
    pub before: Value,
    pub after: Value,
    /// The time of the device transaction that applied this resource (the drivers apply all of a
    /// node's changes in one), so every changed resource of a node shows the same figure; 0 when
    /// nothing was applied.
    pub duration_secs: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ResourceReport {
    pub fn display_name(&self) -> String {
        format!("{}[{}]", self.kind, self.name)
    }
}

pub fn resource_ident(r: &ResourceRef) -> (&'static str, String) {
    r.ident()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    Success,
    Failed,
    /// netgw does not drive the host (a Linux host, an IOS-XR router, ...): never a failure.
    Skipped,
    /// A rollout control stopped the run before this node started (`--max-fail`, a rejected
    /// login with the same credentials, an earlier batch that failed whole): the device was not
    /// contacted; the warning says why.
    #[serde(rename = "not_started")]
    NotStarted,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepTiming {
    pub step: &'static str,
    pub duration_secs: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeReport {
    pub name: String,
    pub status: NodeStatus,
    pub why_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    pub resources: Vec<ResourceReport>,
    pub updated: usize,
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_diff: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<NodeErrorKind>,
    /// The driver's finer kind (connect, auth, timeout, transport, parse, rejected, verify, ...) when
    /// the device session failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_error_kind: Option<ErrorKind>,
    /// Whether this run created the node's desired state (it did not exist).
    pub created: bool,
    /// Set when the run changed the device: whether the change is in the configuration the device
    /// boots from, and how (`saved to startup (write memory)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_to_startup: Option<bool>,
    pub duration_secs: f64,
    pub steps: Vec<StepTiming>,
    /// An earlier run's unfinished change this run found and finished or undid (`crate::journal`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<crate::journal::Recovery>,
    /// Problems that did not fail the node (an SNMP agent that did not answer, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The cookbook versions this node used (`NAME VERSION`), when they came from the Chef server.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cookbooks: Vec<String>,
    /// The node's plan as a plan file records it (a why-run asked to record plans).
    #[serde(skip)]
    pub plan: Option<netgw_models::plan_file::NodePlan>,
}

impl NodeReport {
    pub fn new(name: &str, why_run: bool) -> Self {
        NodeReport {
            name: name.into(),
            status: NodeStatus::Success,
            why_run,
            platform: None,
            resources: Vec::new(),
            updated: 0,
            total: 0,
            device_diff: None,
            error: None,
            error_kind: None,
            device_error_kind: None,
            recovered: None,
            created: false,
            startup: None,
            saved_to_startup: None,
            duration_secs: 0.0,
            steps: Vec::new(),
            warnings: Vec::new(),
            cookbooks: Vec::new(),
            plan: None,
        }
    }

    /// Record that the device took a change, and whether it survives a reload.
    pub fn set_persistence(&mut self, p: &netgw_drivers::driver::Persistence) {
        self.startup = Some(p.to_string());
        self.saved_to_startup = Some(p.saved);
    }

    pub fn failed(&self) -> bool {
        self.status == NodeStatus::Failed
    }

    /// Count `updated` (updated or would-update) and `total` from the resources.
    pub fn tally(&mut self) {
        self.updated = self
            .resources
            .iter()
            .filter(|r| {
                matches!(
                    r.status,
                    ResourceStatus::Updated | ResourceStatus::WouldUpdate
                )
            })
            .count();
        self.total = self.resources.len();
    }

    /// The report of a host netgw does not drive: status `skipped`, the reason as its warning.
    pub fn skipped(name: &str, why_run: bool, reason: &str) -> Self {
        let mut r = NodeReport::new(name, why_run);
        r.status = NodeStatus::Skipped;
        r.warnings.push(format!("skipped: {reason}"));
        r
    }

    /// The report of a node a rollout control kept from starting: status `not_started`, the reason
    /// as its warning.
    pub fn not_started(name: &str, why_run: bool, reason: &str) -> Self {
        let mut r = NodeReport::new(name, why_run);
        r.status = NodeStatus::NotStarted;
        r.warnings.push(format!("not started: {reason}"));
        r
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub nodes: usize,
    pub succeeded: usize,
    pub failed: usize,
    /// Hosts netgw does not drive.
    pub skipped: usize,
    /// Nodes a rollout control kept from starting (`--max-fail`, ...).
    #[serde(skip_serializing_if = "is_zero")]
    pub not_started: usize,
    /// Nodes the store did not have (each with a warning).
    pub missing_nodes: usize,
    pub resources: usize,
    pub updated: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub run_id: String,
    pub why_run: bool,
    pub started_at: String,
    pub duration_secs: f64,
    pub nodes: Vec<NodeReport>,
    pub summary: RunSummary,
    /// Cookbooks synchronized from the Chef server (`--cookbooks server`): the versions used and
    /// what was downloaded; absent when cookbooks came from the repo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cookbooks: Option<crate::cookbook::sync::CookbooksReport>,
    /// The transaction of an atomic converge (`crate::atomic`); absent for a node-by-node run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction: Option<Transaction>,
}

impl RunReport {
    pub fn any_failed(&self) -> bool {
        self.nodes.iter().any(NodeReport::failed)
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

pub fn summarize(nodes: &[NodeReport]) -> RunSummary {
    let count = |s: NodeStatus| nodes.iter().filter(|n| n.status == s).count();
    RunSummary {
        nodes: nodes.len(),
        succeeded: count(NodeStatus::Success),
        failed: count(NodeStatus::Failed),
        skipped: count(NodeStatus::Skipped),
        not_started: count(NodeStatus::NotStarted),
        missing_nodes: nodes.iter().filter(|n| n.created).count(),
        resources: nodes.iter().map(|n| n.total).sum(),
        updated: nodes.iter().map(|n| n.updated).sum(),
    }
}

/// Whether a node belongs in a `--changes-only` report: it changed (or would, or drifted), failed,
/// or was kept from starting.
/// A node's outcome as one line for the inventory's source of truth (a Nautobot note): `converged`,
/// `up to date`, `drifted` (naming what differs: resources and properties, never their values),
/// `in sync`, `failed`, with the run id and start time. None for a node that did not run.
pub fn outcome_note(
    n: &NodeReport,
    run_id: &str,
    started_at: &str,
    compare_only: bool,
) -> Option<String> {
    if matches!(n.status, NodeStatus::Skipped | NodeStatus::NotStarted) {
        return None;
    }
    let outcome = match (&n.status, compare_only, n.updated) {
        (NodeStatus::Success, false, 0) => "up to date".to_owned(),
        (NodeStatus::Success, false, u) => {
            format!("converged ({u} of {} resources changed)", n.total)
        }
        (NodeStatus::Success, true, 0) => "in sync (drift check)".to_owned(),
        (NodeStatus::Success, true, u) => {
            let differ: Vec<String> = n
                .resources
                .iter()
                .filter(|r| r.status != ResourceStatus::UpToDate)
                .map(|r| {
                    let props: Vec<&str> = r.changes.iter().map(|c| c.property).collect();
                    format!("{} ({})", r.display_name(), props.join(", "))
                })
                .collect();
            format!(
                "drifted ({u} of {} resources differ: {})",
                n.total,
                differ.join("; ")
            )
        }
        _ => format!(
            "failed: {}",
            n.error.as_deref().unwrap_or("see the run report")
        ),
    };
    let text = format!("netgw run {run_id} at {started_at}: {outcome}");
    Some(crate::terminal::terminal_safe(&text).into_owned())
}

pub fn has_news(n: &NodeReport) -> bool {
    n.updated > 0 || matches!(n.status, NodeStatus::Failed | NodeStatus::NotStarted)
}

/// A node's state in one word or two; `drift`: as `netgw drift` reads a why-run's changes.
fn node_state(n: &NodeReport, drift: bool) -> &'static str {
    match (n.status, n.updated > 0) {
        (NodeStatus::Failed, _) => "FAILED",
        (NodeStatus::Skipped, _) => "skipped",
        (NodeStatus::NotStarted, _) => "not started",
        (NodeStatus::Success, true) if drift => "drifted",
        (NodeStatus::Success, true) if n.why_run => "would change",
        (NodeStatus::Success, true) => "changed",
        (NodeStatus::Success, false) if drift => "in sync",
        (NodeStatus::Success, false) => "up to date",
    }
}

/// What a node's line says after its state: the resources that changed (with the properties), or
/// why it failed or was skipped (the first line of it).
fn node_what(n: &NodeReport) -> String {
    let first_line = |s: &str| s.lines().next().unwrap_or_default().to_owned();
    if let Some(e) = &n.error {
        return first_line(e);
    }
    if n.status != NodeStatus::Success {
        return n
            .warnings
            .first()
            .map(|w| first_line(w))
            .unwrap_or_default();
    }
    let changed: Vec<String> = n
        .resources
        .iter()
        .filter(|r| {
            matches!(
                r.status,
                ResourceStatus::Updated | ResourceStatus::WouldUpdate
            )
        })
        .map(|r| {
            let props: Vec<&str> = r
                .changes
                .iter()
                .map(|c| c.property)
                .filter(|p| *p != "state")
                .collect();
            match (r.action.as_str(), props.is_empty()) {
                ("update", false) => format!("{} ({})", r.display_name(), props.join(", ")),
                (action, _) => format!("{} {action}", r.display_name()),
            }
        })
        .collect();
    changed.join(", ")
}

/// One line a node (name, state, what changed, drifted or failed), names aligned: the compact
/// summary of a run. `drift`: words of `netgw drift`.
pub fn node_lines(nodes: &[NodeReport], drift: bool) -> String {
    let width = nodes.iter().map(|n| n.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for n in nodes {
        let line = format!(
            "  {:<width$}  {:<12}  {}",
            n.name,
            node_state(n, drift),
            node_what(n)
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    terminal_safe(&out).into_owned()
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "(none)".into(),
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// One node in chef-client's doc-formatter style.
pub fn human_node(n: &NodeReport) -> String {
    human_node_json(&serde_json::to_value(n).unwrap_or(Value::Null))
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

/// [`human_node`] from the node report's JSON shape (the API's and `--format json`'s): what the
/// history keeps and `netgw serve`'s status page shows (src/api/ui), the same text either way.
pub fn human_node_json(n: &Value) -> String {
    let mut out = String::new();
    let name = text(n, "name");
    let why_run = n["why_run"].as_bool().unwrap_or(false);
    let warnings: Vec<&str> = n["warnings"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if matches!(text(n, "status"), "skipped" | "not_started") {
        for w in &warnings {
            let _ = writeln!(out, "netgw run for {name} {w}");
        }
        return terminal_safe(&out).into_owned();
    }
    let _ = writeln!(
        out,
        "Starting netgw run for {name}{}",
        if why_run { " (why-run)" } else { "" }
    );
    human_resources(
        &mut out,
        n["resources"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default(),
    );
    if let Some(diff) = n["device_diff"].as_str()
        && !diff.trim().is_empty()
    {
        let _ = writeln!(out, "Device diff:");
        for line in diff.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    if let Some(s) = n["startup"].as_str() {
        let _ = writeln!(out, "Startup configuration: {s}");
    }
    if let Some(r) = recovery_from_json(&n["recovered"]) {
        let _ = writeln!(out, "RECOVERED: {r}");
    }
    for w in &warnings {
        let _ = writeln!(out, "WARNING: {w}");
    }
    if let Some(e) = n["error"].as_str() {
        let kind = n["error_kind"]
            .as_str()
            .map(|k| format!(" ({k} error)"))
            .unwrap_or_default();
        let _ = writeln!(out, "\nnetgw run FAILED for {name}{kind}: {e}");
    }
    let verb = if why_run {
        "would be updated"
    } else {
        "updated"
    };
    // As chef-client ends a failed run ("Chef Client failed. N resources updated"): not "finished"
    // under a FAILED line.
    let ended = if n["error"].is_string() {
        "failed"
    } else {
        "finished"
    };
    let _ = writeln!(
        out,
        "\nnetgw run for {name} {ended}, {}/{} resources {verb} in {:.2} seconds",
        n["updated"].as_u64().unwrap_or(0),
        n["total"].as_u64().unwrap_or(0),
        n["duration_secs"].as_f64().unwrap_or(0.0)
    );
    terminal_safe(&out).into_owned()
}

/// The resources of a node report (JSON shape), grouped by recipe.
fn human_resources(out: &mut String, resources: &[Value]) {
    let mut recipe = "";
    for r in resources {
        if text(r, "recipe") != recipe {
            recipe = text(r, "recipe");
            let _ = writeln!(out, "Recipe: {recipe}");
        }
        let (status, action) = (text(r, "status"), text(r, "action"));
        let display = format!("{}[{}]", text(r, "type"), text(r, "name"));
        let suffix = match status {
            "up-to-date" => " (up to date)",
            "skipped" => " (skipped)",
            _ => "",
        };
        let _ = writeln!(out, "  * {display} action {action}{suffix}");
        let verb = if status == "would-update" {
            "Would "
        } else {
            ""
        };
        if matches!(status, "updated" | "would-update") {
            if matches!(action, "create" | "delete") {
                let _ = writeln!(out, "    - {verb}{action} {display}");
            }
            for c in r["changes"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let property = text(c, "property");
                if property == "state" {
                    continue;
                }
                let _ = if action == "create" {
                    writeln!(out, "    - {verb}set {property} to {}", show(&c["after"]))
                } else {
                    writeln!(
                        out,
                        "    - {verb}update {property} from {} to {}",
                        show(&c["before"]),
                        show(&c["after"])
                    )
                };
            }
        }
        if let Some(e) = r["error"].as_str() {
            let _ = writeln!(out, "    ! {e}");
        }
    }
}

/// The journal's recovery from its JSON shape, for its `Display` (the words the journal chose).
fn recovery_from_json(v: &Value) -> Option<crate::journal::Recovery> {
    let pick = |s: &str, known: &[&'static str]| known.iter().copied().find(|k| *k == s);
    Some(crate::journal::Recovery {
        run_id: v["run_id"].as_str()?.to_owned(),
        found: pick(text(v, "found"), &["new", "old", "partial"]).unwrap_or("unknown"),
        action: pick(
            text(v, "action"),
            &["cleared", "confirmed", "reapplied", "reverted", "restored"],
        )
        .unwrap_or("unknown"),
        restored: v["restored"].as_u64().unwrap_or(0) as usize,
        via: v["via"].as_str().map(str::to_owned),
        transaction: v.get("transaction").and_then(|t| {
            Some(crate::journal::TxRecovery {
                id: t["id"].as_str()?.to_owned(),
                phase: serde_json::from_value(t["phase"].clone()).ok(),
                direction: pick(text(t, "direction"), &["forward", "back"]).unwrap_or("back"),
            })
        }),
    })
}

pub fn human_summary(r: &RunReport) -> String {
    human_summary_json(&serde_json::to_value(r).unwrap_or(Value::Null))
}

/// [`human_summary`] from the run report's JSON shape (`netgw serve`'s status page shows it).
/// Terminal-safe: cookbook names and versions, the server's URL and the run id come from outside.
pub fn human_summary_json(r: &Value) -> String {
    terminal_safe(&summary_text(r)).into_owned()
}

fn summary_text(r: &Value) -> String {
    let s = &r["summary"];
    let count = |k: &str| s[k].as_u64().unwrap_or(0);
    let cookbooks = match r["cookbooks"].as_object() {
        Some(c) => {
            let versions: Vec<String> = c
                .get("versions")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|v| format!("{} {}", text(v, "name"), text(v, "version")))
                .collect();
            let field = |k: &str| c.get(k).cloned().unwrap_or(Value::Null);
            format!(
                "\nCookbooks from {}: {}; {} file(s) downloaded, {} from the cache ({})",
                field("server").as_str().unwrap_or_default(),
                if versions.is_empty() {
                    "(none)".to_owned()
                } else {
                    versions.join(", ")
                },
                field("files_downloaded").as_u64().unwrap_or(0),
                field("files_cached").as_u64().unwrap_or(0),
                field("cache").as_str().unwrap_or_default()
            )
        }
        None => String::new(),
    };
    cookbooks
        + &format!(
            "\nRun {}: {} node(s), {} succeeded, {} failed{}; {}/{} resources {} in {:.2} seconds\n",
            text(r, "run_id"),
            count("nodes"),
            count("succeeded"),
            count("failed"),
            [
                (count("skipped"), "skipped (not driven by netgw)"),
                (count("not_started"), "not started (each says why above)"),
                (count("missing_nodes"), "not in the store (see warnings)")
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!(", {n} {what}"))
            .collect::<String>(),
            count("updated"),
            count("resources"),
            if r["why_run"].as_bool().unwrap_or(false) {
                "would be updated"
            } else {
                "updated"
            },
            r["duration_secs"].as_f64().unwrap_or(0.0)
        )
}

#[cfg(test)]
mod terminal_tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped_and_plain_text_is_borrowed() {
        let hostile =
            "% Invalid\x1b]0;pwned\x07\x1b[2J\rall devices converged OK\u{9b}31m\u{202e}x";
        assert_eq!(
            terminal_safe(hostile),
            "% Invalid\\x1b]0;pwned\\x07\\x1b[2J\\rall devices converged OK\\u{9b}31m\\u{202e}x"
        );
        assert!(matches!(
            terminal_safe("vlan 10\n\tname x"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(terminal_safe("a\x00b\x7f"), "a\\x00b\\x7f");
    }

    #[test]
    fn the_summary_escapes_the_chef_servers_strings() {
        let r = serde_json::json!({
            "run_id": "r1", "summary": {},
            "cookbooks": {"server": "https://chef\x1b]0;t\x07", "cache": "/c",
                "versions": [{"name": "net\r", "version": "1.0.0\x1b[2J"}]}
        });
        let text = human_summary_json(&r);
        assert!(!text.contains(['\x1b', '\x07', '\r']), "{text:?}");
        assert!(text.contains("net\\r 1.0.0\\x1b[2J"), "{text}");
    }

    #[test]
    fn nodes_not_started_are_counted_with_where_their_reason_is() {
        let n = NodeReport::not_started("leaf3", true, "--max-fail 1 reached");
        assert_eq!(
            human_node(&n),
            "netgw run for leaf3 not started: --max-fail 1 reached\n"
        );
        let r = serde_json::json!({"run_id": "r1", "summary": {"nodes": 3, "not_started": 2}});
        let text = human_summary_json(&r);
        assert!(
            text.contains("3 node(s), 0 succeeded, 0 failed, 2 not started (each says why above);"),
            "{text}"
        );
    }

    #[test]
    fn the_human_report_escapes_device_errors_and_json_keeps_them() {
        let mut n = NodeReport::new("sw1", false);
        n.status = NodeStatus::Failed;
        n.error = Some("commit failed: \x1b[2J\x1b]0;owned\x07".into());
        n.warnings.push("agent said \rOK".into());
        let text = human_node(&n);
        assert!(
            !text.contains('\x1b') && !text.contains('\x07') && !text.contains('\r'),
            "{text:?}"
        );
        assert!(
            text.contains("commit failed: \\x1b[2J\\x1b]0;owned\\x07"),
            "{text}"
        );
        assert!(text.contains("agent said \\rOK"), "{text}");
        // A failed node's last line says so, not "finished".
        assert!(
            text.contains("netgw run for sw1 failed, 0/0 resources updated")
                && !text.contains("finished"),
            "{text}"
        );
        let json = serde_json::to_value(&n).unwrap();
        assert_eq!(json["error"], "commit failed: \x1b[2J\x1b]0;owned\x07");
    }
}
