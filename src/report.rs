//! Run reports: per node, per resource, in the JSON shape the API and `--format json` share, and the
//! human form modelled on chef-client's doc formatter.

use crate::error::NodeErrorKind;
use netgw_drivers::driver::ErrorKind;
use netgw_models::plan::{PropertyChange, ResourceRef};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;

/// Text from a device, a Chef server or a repo made safe for a terminal: every control character but
/// newline and tab is shown escaped (`\x1b`, `\x07`, `\r`, `\u{9b}`), as are the Unicode
/// direction overrides that reorder what is shown. The one function for all human output: the
/// report, the progress bar, the error line and the log (`cli::init_tracing`). JSON needs none:
/// its encoder escapes control characters.
///
/// A device error carrying `ESC ] 0 ; title BEL`, `ESC [ 2 J` or a carriage return could otherwise
/// retitle the terminal, clear it, or print a fake "converged OK" over the real line (issue 23).
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if unsafe_char(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

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
    match r {
        ResourceRef::Vlan { id } => ("vlan", id.to_string()),
        ResourceRef::Link { name } => ("link", name.clone()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    Success,
    Failed,
    /// netgw does not drive the host (a Linux host, an IOS-XR router, ...): never a failure.
    Skipped,
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
            duration_secs: 0.0,
            steps: Vec::new(),
            warnings: Vec::new(),
            cookbooks: Vec::new(),
        }
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
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub nodes: usize,
    pub succeeded: usize,
    pub failed: usize,
    /// Hosts netgw does not drive.
    pub skipped: usize,
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
    pub cookbooks: Option<crate::store::chef::cookbooks::CookbooksReport>,
    /// The transaction of an atomic converge (`crate::atomic`); absent for a node-by-node run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction: Option<crate::atomic::Transaction>,
}

impl RunReport {
    pub fn any_failed(&self) -> bool {
        self.nodes.iter().any(NodeReport::failed)
    }
}

pub fn summarize(nodes: &[NodeReport]) -> RunSummary {
    let count = |s: NodeStatus| nodes.iter().filter(|n| n.status == s).count();
    RunSummary {
        nodes: nodes.len(),
        succeeded: count(NodeStatus::Success),
        failed: count(NodeStatus::Failed),
        skipped: count(NodeStatus::Skipped),
        missing_nodes: nodes.iter().filter(|n| n.created).count(),
        resources: nodes.iter().map(|n| n.total).sum(),
        updated: nodes.iter().map(|n| n.updated).sum(),
    }
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
    let mut out = String::new();
    if n.status == NodeStatus::Skipped {
        for w in &n.warnings {
            let _ = writeln!(out, "netgw run for {} {w}", n.name);
        }
        return out;
    }
    let _ = writeln!(
        out,
        "Starting netgw run for {}{}",
        n.name,
        if n.why_run { " (why-run)" } else { "" }
    );
    let mut recipe = "";
    for r in &n.resources {
        if r.recipe != recipe {
            recipe = &r.recipe;
            let _ = writeln!(out, "Recipe: {recipe}");
        }
        let suffix = match r.status {
            ResourceStatus::UpToDate => " (up to date)",
            ResourceStatus::Skipped => " (skipped)",
            _ => "",
        };
        let _ = writeln!(out, "  * {} action {}{suffix}", r.display_name(), r.action);
        let verb = if r.status == ResourceStatus::WouldUpdate {
            "Would "
        } else {
            ""
        };
        if matches!(
            r.status,
            ResourceStatus::Updated | ResourceStatus::WouldUpdate
        ) {
            if matches!(r.action.as_str(), "create" | "delete") {
                let _ = writeln!(out, "    - {verb}{} {}", r.action, r.display_name());
            }
            for c in &r.changes {
                if c.property == "state" {
                    continue;
                }
                let _ = if r.action == "create" {
                    writeln!(out, "    - {verb}set {} to {}", c.property, show(&c.after))
                } else {
                    writeln!(
                        out,
                        "    - {verb}update {} from {} to {}",
                        c.property,
                        show(&c.before),
                        show(&c.after)
                    )
                };
            }
        }
        if let Some(e) = &r.error {
            let _ = writeln!(out, "    ! {e}");
        }
    }
    if let Some(diff) = &n.device_diff
        && !diff.trim().is_empty()
    {
        let _ = writeln!(out, "Device diff:");
        for line in diff.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    if let Some(r) = &n.recovered {
        let _ = writeln!(out, "RECOVERED: {r}");
    }
    for w in &n.warnings {
        let _ = writeln!(out, "WARNING: {w}");
    }
    if let Some(e) = &n.error {
        let kind = n
            .error_kind
            .map(|k| format!(" ({k} error)"))
            .unwrap_or_default();
        let _ = writeln!(out, "\nnetgw run FAILED for {}{kind}: {e}", n.name);
    }
    let verb = if n.why_run {
        "would be updated"
    } else {
        "updated"
    };
    let _ = writeln!(
        out,
        "\nnetgw run for {} finished, {}/{} resources {verb} in {:.2} seconds",
        n.name, n.updated, n.total, n.duration_secs
    );
    terminal_safe(&out).into_owned()
}

pub fn human_summary(r: &RunReport) -> String {
    let s = &r.summary;
    let cookbooks = match &r.cookbooks {
        Some(c) => format!(
            "\nCookbooks from {}: {}; {} file(s) downloaded, {} from the cache ({})",
            c.server,
            if c.versions.is_empty() {
                "(none)".to_owned()
            } else {
                c.versions
                    .iter()
                    .map(|v| format!("{} {}", v.name, v.version))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            c.files_downloaded,
            c.files_cached,
            c.cache.display()
        ),
        None => String::new(),
    };
    cookbooks
        + &format!(
            "\nRun {}: {} node(s), {} succeeded, {} failed{}; {}/{} resources {} in {:.2} seconds\n",
            r.run_id,
            s.nodes,
            s.succeeded,
            s.failed,
            [
                (s.skipped, "skipped (not driven by netgw)"),
                (s.missing_nodes, "not in the store (see warnings)")
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!(", {n} {what}"))
            .collect::<String>(),
            s.updated,
            s.resources,
            if r.why_run {
                "would be updated"
            } else {
                "updated"
            },
            r.duration_secs
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
            Cow::Borrowed(_)
        ));
        assert_eq!(terminal_safe("a\x00b\x7f"), "a\\x00b\\x7f");
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
        let json = serde_json::to_value(&n).unwrap();
        assert_eq!(json["error"], "commit failed: \x1b[2J\x1b]0;owned\x07");
    }
}
