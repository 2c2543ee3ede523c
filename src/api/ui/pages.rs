//! The status page's views. maud escapes every value it interpolates, so text from a device (an
//! error, a diff, a fact) is shown as text, never run as markup.

use super::{Session, Ui};
use crate::api::scheduler::RunView;
use crate::api::{HttpError, ListQuery, S};
use crate::history::{CheckOrigin, StoredLinkCheck};
use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};
use netgw_models::NodeName;
use serde_json::Value;
use std::sync::Arc;

/// Runs listed on the runs page (each read whole for its per-node status).
const RUNS_SHOWN: usize = 20;
/// Nodes listed on the nodes page, each with its last result.
const NODES_SHOWN: usize = 500;

#[derive(Clone, Copy, PartialEq)]
enum Nav {
    Runs,
    Nodes,
    Plans,
    Topology,
    None,
}

/// Headers every page carries: nothing but this origin's own script and style, no framing, no
/// caching of pages that show a session's view.
pub(super) fn secure_headers(mut r: Response) -> Response {
    let h = r.headers_mut();
    for (k, v) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
    ] {
        h.insert(k, HeaderValue::from_static(v));
    }
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    r
}

fn html_response(status: StatusCode, m: Markup) -> Response {
    secure_headers(
        (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            )],
            m.into_string(),
        )
            .into_response(),
    )
}

fn page(title: &str, nav: Nav, sess: Option<&Session>, main: Markup) -> Markup {
    let item = |n: Nav, href: &str, label: &str| {
        html! { li { a href=(href) aria-current=[(nav == n).then_some("page")] { (label) } } }
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · netgw" }
                link rel="stylesheet" href="/ui/assets/app.css";
                script src="/ui/assets/app.js" defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    span.brand { "netgw" }
                    @if let Some(sess) = sess {
                        nav aria-label="Main" {
                            ul {
                                (item(Nav::Runs, "/ui/runs", "Runs"))
                                (item(Nav::Nodes, "/ui/nodes", "Nodes"))
                                (item(Nav::Plans, "/ui/plans", "Plans"))
                                (item(Nav::Topology, "/ui/topology", "Topology"))
                            }
                        }
                        form.signout method="post" action="/ui/logout" {
                            input type="hidden" name="csrf" value=(sess.csrf);
                            button type="submit" { "Sign out " span.who { (sess.identity.label()) } }
                        }
                    }
                }
                main #main { (main) }
            }
        }
    }
}

/// An error page (a refused form, a missing run).
pub(super) fn problem(status: StatusCode, title: &str, message: &str) -> Response {
    html_response(
        status,
        page(
            title,
            Nav::None,
            None,
            html! {
                h1 { (title) }
                p.error role="alert" { (message) }
                p { a href="/ui/runs" { "Back to the runs" } }
            },
        ),
    )
}

fn api_error(e: HttpError) -> Response {
    problem(e.status, "Cannot show this", &e.message)
}

/// `login`: the value tying the form to the browser that loaded it (`netgw_login` cookie).
pub(super) fn login_page(status: StatusCode, error: Option<&str>, login: &str) -> Response {
    html_response(
        status,
        page(
            "Sign in",
            Nav::None,
            None,
            html! {
                h1 { "Sign in" }
                @if let Some(e) = error {
                    p.error #login-error role="alert" { (e) }
                }
                form.login method="post" action="/ui/login" {
                    input type="hidden" name="login" value=(login);
                    label for="token" { "API token" }
                    input #token type="password" name="token" autocomplete="current-password" required
                        aria-describedby="token-help" aria-invalid=[error.map(|_| "true")];
                    p #token-help .help { "A bearer token of this gateway's configuration (role read; trigger to start runs). It stays on the gateway: the browser keeps only a random session id." }
                    button type="submit" { "Sign in" }
                }
            },
        ),
    )
}

/// A node report's state in a word (CSS class) and a phrase.
fn result_state(report: &Value) -> (&'static str, String) {
    let updated = report["updated"].as_u64().unwrap_or(0);
    match (report["status"].as_str(), report["why_run"].as_bool()) {
        (Some("failed"), _) => ("failed", "failed".into()),
        (Some("skipped"), _) => ("skipped", "not driven by netgw".into()),
        (Some("not_started"), _) => ("skipped", "not started".into()),
        (Some(_), Some(true)) if updated > 0 => (
            "drift",
            format!("drift: {updated} resource(s) would change"),
        ),
        (Some(_), Some(false)) if updated > 0 => {
            ("ok", format!("converged: {updated} resource(s) updated"))
        }
        (Some(_), _) => ("ok", "in sync".into()),
        _ => ("unknown", "no result yet".into()),
    }
}

fn secs(v: &Value) -> String {
    v.as_f64().map(|s| format!("{s:.2} s")).unwrap_or_default()
}

/// Each node of a run with its state: a result, running now, or waiting.
fn run_nodes(s: &S, run: &RunView) -> Vec<(String, &'static str, String, String)> {
    let results = run.report.as_ref().and_then(|r| r["nodes"].as_array());
    run.nodes
        .iter()
        .map(|n| {
            let result = results.and_then(|rs| rs.iter().find(|r| r["name"] == n.as_str()));
            match result {
                Some(r) => {
                    let (class, label) = result_state(r);
                    (n.clone(), class, label, secs(&r["duration_secs"]))
                }
                None if s.sched.node_state(n).0.as_deref() == Some(&run.run_id) => {
                    (n.clone(), "running", "running".into(), String::new())
                }
                None if run.pending.contains(n) && is_active(&run.status) => {
                    (n.clone(), "pending", "waiting".into(), String::new())
                }
                None => (n.clone(), "unknown", "no result".into(), String::new()),
            }
        })
        .collect()
}

fn is_active(status: &str) -> bool {
    matches!(status, "queued" | "running")
}

fn run_kind(why_run: bool) -> &'static str {
    if why_run { "why-run" } else { "converge" }
}

fn run_duration(run: &RunView) -> String {
    run.report
        .as_ref()
        .map(|r| &r["duration_secs"])
        .filter(|d| d.as_f64().is_some_and(|x| x > 0.0))
        .map(secs)
        .unwrap_or_default()
}

fn progress(run: &RunView) -> Markup {
    let total = run.nodes.len();
    let done = total - run.pending.len().min(total);
    html! {
        span.progress data-progress {
            progress max=(total) value=(done) aria-label="nodes done" {}
            " " span.count { (done) "/" (total) }
        }
    }
}

pub(super) async fn runs(State(s): State<S>, Extension(sess): Extension<Session>) -> Response {
    let listed = crate::api::list_runs(
        State(s.clone()),
        Ok(Query(ListQuery {
            node: None,
            status: None,
            limit: Some(RUNS_SHOWN),
        })),
    )
    .await;
    let ids: Vec<String> = match listed {
        Ok(v) => v.0["runs"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|r| r["run_id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        Err(e) => return api_error(e),
    };
    let mut runs = Vec::with_capacity(ids.len());
    for id in ids {
        match crate::api::find_run(&s, &id).await {
            Ok(r) => runs.push(r),
            // Gone beyond the retention limit between the listing and now.
            Err(e) if e.status == StatusCode::NOT_FOUND => {}
            Err(e) => return api_error(e),
        }
    }
    // The table is there even when empty: the live list (app.js) adds rows to it.
    let main = html! {
        h1 { "Runs" }
        p.help { "Newest first; new runs appear and runs in progress update live." }
        @if runs.is_empty() {
            p #no-runs { "No run yet. Start one from a " a href="/ui/nodes" { "node's page" } "." }
        }
        div.scroll hidden[runs.is_empty()] {
            table.runs #runs data-live-list data-max-rows=(RUNS_SHOWN) {
                caption.visually-hidden { "Recent runs" }
                thead { tr {
                    th scope="col" { "Run" } th scope="col" { "Status" } th scope="col" { "Kind" }
                    th scope="col" { "Requested by" } th scope="col" { "Created" }
                    th scope="col" { "Duration" } th scope="col" { "Progress" } th scope="col" { "Nodes" }
                } }
                tbody {
                    @for r in &runs { (run_row(&s, r)) }
                }
            }
        }
    };
    html_response(StatusCode::OK, page("Runs", Nav::Runs, Some(&sess), main))
}

fn run_row(s: &S, r: &RunView) -> Markup {
    html! {
        tr data-run-id=(r.run_id) data-why-run=(r.why_run) data-live=[is_active(&r.status).then_some("true")] {
            td { a href={ "/ui/runs/" (r.run_id) } { code { (r.run_id) } } }
            td { span.status.{"st-" (r.status)} data-run-status { (r.status) } }
            td { (run_kind(r.why_run)) }
            td { (r.requested_by) }
            td { time datetime=(r.created_at) { (r.created_at) } }
            td { (run_duration(r)) }
            td { (progress(r)) }
            td { ul.chips {
                @for (n, class, label, took) in run_nodes(s, r) {
                    li.chip.{"st-" (class)} data-node=(n) data-node-status=(class) {
                        (n) span.visually-hidden { ": " (label) }
                        @if !took.is_empty() { " " small { (took) } }
                    }
                }
            } }
        }
    }
}

/// The run's report as `netgw converge` prints it, line by line, diff lines marked.
fn report_block(run: &RunView) -> Markup {
    let Some(report) = &run.report else {
        return html! {};
    };
    let mut text = String::new();
    for n in report["nodes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        text.push_str(&crate::report::human_node_json(n));
        text.push('\n');
    }
    if !is_active(&run.status) {
        text.push_str(&crate::report::human_summary_json(report));
    }
    highlighted(&text)
}

#[derive(Clone, Copy)]
enum Line {
    Add,
    Del,
    Plain(&'static str),
}

/// Each line of a report with what it is: a device diff's `+`/`-` lines, the planned changes,
/// errors, warnings.
fn classify(text: &str) -> Vec<(Line, &str)> {
    let mut in_diff = false;
    text.lines()
        .map(|line| {
            if line == "Device diff:" {
                in_diff = true;
                return (Line::Plain("l-head"), line);
            }
            if let Some(body) = line.strip_prefix("    ").filter(|_| in_diff) {
                let kind = if body.starts_with("+++") || body.starts_with("---") {
                    Line::Plain("l-head")
                } else if body.starts_with('+') {
                    Line::Add
                } else if body.starts_with('-') {
                    Line::Del
                } else {
                    Line::Plain("l-ctx")
                };
                return (kind, line);
            }
            in_diff = false;
            (Line::Plain(line_class(line)), line)
        })
        .collect()
}

/// Report text with its lines marked (the words are the report's; only the markup is added): diff
/// lines as insertions and deletions, so the highlight is not colour alone.
fn highlighted(text: &str) -> Markup {
    html! {
        pre.report data-report {
            @for (kind, line) in classify(text) {
                @match kind {
                    Line::Add => { ins.l-add { (line) } }
                    Line::Del => { del.l-del { (line) } }
                    Line::Plain(class) => { span class=(class) { (line) } }
                }
                "\n"
            }
        }
    }
}

fn line_class(line: &str) -> &'static str {
    let t = line.trim_start();
    if t.starts_with("netgw run FAILED") || t.starts_with("! ") {
        "l-error"
    } else if t.starts_with("WARNING:") || t.starts_with("RECOVERED:") {
        "l-warn"
    } else if t.starts_with("- Would ") || (t.starts_with("- ") && line.starts_with("    ")) {
        "l-change"
    } else if t.starts_with("Starting netgw run") || t.starts_with("Run ") {
        "l-head"
    } else {
        "l-text"
    }
}

fn run_details(s: &S, run: &RunView) -> Markup {
    html! {
        dl.facts {
            dt { "Status" } dd { span #run-status .status.{"st-" (run.status)} { (run.status) } }
            dt { "Kind" } dd { (run_kind(run.why_run)) }
            dt { "Requested by" } dd { (run.requested_by) }
            dt { "Created" } dd { (run.created_at) }
            dt { "Started" } dd { (run.started_at.as_deref().unwrap_or("—")) }
            dt { "Finished" } dd #run-finished { (run.finished_at.as_deref().unwrap_or("—")) }
            dt { "Duration" } dd { (run_duration(run)) }
            dt { "Triggers" } dd { (run.triggers) }
            @if let Some(n) = &run.note { dt { "Note" } dd { (n) } }
            dt { "Progress" } dd { (progress(run)) }
        }
        h2 { "Nodes" }
        div.scroll { table.nodes {
            thead { tr { th scope="col" { "Node" } th scope="col" { "State" } th scope="col" { "Duration" } } }
            tbody {
                @for (n, class, label, took) in run_nodes(s, run) {
                    tr data-node=(n) {
                        th scope="row" { a href={ "/ui/nodes/" (n) } { (n) } }
                        td { span.status.{"st-" (class)} data-node-status=(class) { (label) } }
                        td data-node-duration { (took) }
                    }
                }
            }
        } }
    }
}

fn report_section(run: &RunView) -> Markup {
    html! {
        section #report aria-labelledby="report-title" aria-live="polite" {
            h2 #report-title { "Report" }
            @if run.report.as_ref().and_then(|r| r["nodes"].as_array()).is_none_or(Vec::is_empty) {
                p.help { "No node has finished yet." }
            }
            (report_block(run))
        }
    }
}

pub(super) async fn run(
    State(s): State<S>,
    Extension(sess): Extension<Session>,
    Path(id): Path<String>,
) -> Response {
    let run = match crate::api::find_run(&s, &id).await {
        Ok(r) => r,
        Err(e) => return api_error(e),
    };
    let main = html! {
        div #run data-run-id=(run.run_id) data-why-run=(run.why_run) data-live=(is_active(&run.status)) {
            h1 { "Run " code { (run.run_id) } }
            (run_details(&s, &run))
            (report_section(&run))
        }
    };
    html_response(StatusCode::OK, page("Run", Nav::Runs, Some(&sess), main))
}

/// One row of the runs list, for the live list to insert or replace (in a table: a parser drops a
/// row outside one).
pub(super) async fn run_row_fragment(State(s): State<S>, Path(id): Path<String>) -> Response {
    match crate::api::find_run(&s, &id).await {
        Ok(run) => html_response(
            StatusCode::OK,
            html! { table { tbody #row-fragment { (run_row(&s, &run)) } } },
        ),
        Err(e) => api_error(e),
    }
}

/// The run's details and report alone, for the live update when a run ends.
pub(super) async fn run_report(State(s): State<S>, Path(id): Path<String>) -> Response {
    match crate::api::find_run(&s, &id).await {
        Ok(run) => html_response(
            StatusCode::OK,
            html! { div #run-fragment { (run_details(&s, &run)) (report_section(&run)) } },
        ),
        Err(e) => api_error(e),
    }
}

pub(super) async fn nodes(State(s): State<S>, Extension(sess): Extension<Session>) -> Response {
    let names: Vec<String> = s
        .sched
        .inventory()
        .hosts
        .keys()
        .take(NODES_SHOWN)
        .cloned()
        .collect();
    let mut rows = Vec::with_capacity(names.len());
    for n in names {
        match s.history.last_result(n.clone()).await {
            Ok(last) => rows.push((n, last)),
            Err(e) => return api_error(HttpError::internal(e)),
        }
    }
    let main = html! {
        h1 { "Nodes" }
        div.scroll { table.nodes {
            caption.visually-hidden { "Inventory nodes and their last result" }
            thead { tr {
                th scope="col" { "Node" } th scope="col" { "Last result" }
                th scope="col" { "Run" } th scope="col" { "Finished" }
            } }
            tbody {
                @for (n, last) in &rows {
                    @let (class, label) = last.as_ref().map(|l| result_state(&l.2)).unwrap_or(("unknown", "no result yet".into()));
                    tr data-node=(n) {
                        th scope="row" { a href={ "/ui/nodes/" (n) } { (n) } }
                        td { span.status.{"st-" (class)} data-node-status=(class) { (label) } }
                        td { @if let Some(l) = last { a href={ "/ui/runs/" (l.0) } { code { (l.0) } } } }
                        td { @if let Some(l) = last { (l.1) } }
                    }
                }
            }
        } }
    };
    html_response(StatusCode::OK, page("Nodes", Nav::Nodes, Some(&sess), main))
}

/// Plans waiting for approval (`POST /v1/plans`), newest first.
pub(super) async fn plans(State(s): State<S>, Extension(sess): Extension<Session>) -> Response {
    let list = s.plans.list();
    let main = html! {
        h1 { "Plans" }
        @if list.is_empty() {
            p.help { "No plan yet: post one with `POST /v1/plans` (a file `netgw converge --why-run --plan-out FILE` wrote)." }
        } @else {
            div.scroll { table.plans {
                caption.visually-hidden { "Plans posted for approval" }
                thead { tr {
                    th scope="col" { "Plan" } th scope="col" { "Status" } th scope="col" { "Nodes" }
                    th scope="col" { "With changes" } th scope="col" { "Posted by" } th scope="col" { "Posted" }
                } }
                tbody {
                    @for p in &list {
                        tr data-plan=(p.plan_id) {
                            th scope="row" { a href={ "/ui/plans/" (p.plan_id) } { code { (p.plan_id) } } }
                            td { span.status.{"st-" (p.status)} data-plan-status=(p.status) { (p.status) } }
                            td { (p.nodes.len()) }
                            td { (p.changing.join(", ")) }
                            td { (p.submitted_by) }
                            td { (p.submitted_at) }
                        }
                    }
                }
            } }
        }
    };
    html_response(StatusCode::OK, page("Plans", Nav::Plans, Some(&sess), main))
}

/// One change of a plan file's `changes` as the why-run report words it.
fn plan_change_lines(r: &Value) -> Vec<String> {
    let resource = &r["resource"];
    let name = resource["id"]
        .as_u64()
        .map(|i| i.to_string())
        .or_else(|| resource["name"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let display = format!("{}[{name}]", resource["type"].as_str().unwrap_or("?"));
    let Some(action) = r["action"].as_str() else {
        return vec![format!("{display}: up to date")];
    };
    let mut out = vec![format!("{display}: {action}")];
    for c in r["changes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        out.push(format!(
            "    {}: {} -> {}",
            c["property"].as_str().unwrap_or("?"),
            c["before"],
            c["after"]
        ));
    }
    out
}

/// A plan with its diff per node, and (trigger role, still pending) the button that applies it.
pub(super) async fn plan(
    State(s): State<S>,
    Extension(sess): Extension<Session>,
    Path(id): Path<String>,
) -> Response {
    let Some(p) = s.plans.get(&id) else {
        return api_error(HttpError::not_found(format!("no plan {id:?}")));
    };
    let main = html! {
        h1 { "Plan " code { (p.plan_id) } }
        p { "Posted by " (p.submitted_by) " at " (p.submitted_at) "; planned by run "
            code { (p.plan.run_id) } " at " (p.plan.created_at) "." }
        @for (name, node) in &p.plan.nodes {
            section.plan-node data-node=(name) {
                h2 { (name) " " small { (node.platform) " at " (node.address) } }
                pre.diff { @for r in node.changes.as_array().map(Vec::as_slice).unwrap_or_default() {
                    @for line in plan_change_lines(r) { (line) "\n" }
                } }
                @if let Some(d) = node.device_diff.as_deref().filter(|d| !d.trim().is_empty()) {
                    h3 { "Device diff" }
                    pre.diff { (d) }
                }
                p.help { "Planned from observed state " code { (node.observed.digest) } "." }
            }
        }
        @match (&p.run_id, sess.can_trigger()) {
            (Some(run), _) => { p { "Applied by run " a href={ "/ui/runs/" (run) } { code { (run) } } "." } }
            (None, true) => {
                form method="post" action={ "/ui/plans/" (p.plan_id) "/apply" } {
                    input type="hidden" name="csrf" value=(sess.csrf);
                    button #apply-plan .danger type="submit" { "Approve and apply this plan" }
                }
                p.help { "Each device is read again first; one whose state moved since the plan is refused and left unchanged." }
            }
            (None, false) => { p.help { "Applying a plan needs a token with the trigger role." } }
        }
    };
    html_response(StatusCode::OK, page("Plan", Nav::Plans, Some(&sess), main))
}

fn facts_table(facts: &Value) -> Markup {
    html! {
        @match facts.as_object() {
            Some(m) if !m.is_empty() => {
                dl.facts #facts {
                    @for (k, v) in m {
                        dt { (k) }
                        dd { (fact_text(k, v)) }
                    }
                }
            }
            _ => { p.help { "No facts saved yet (a converge saves them; a why-run does not)." } }
        }
    }
}

/// A fact as an operator reads it: `ohai_time` (Ohai's seconds since the epoch) as a time.
fn fact_text(key: &str, v: &Value) -> String {
    match (key, v.as_f64()) {
        ("ohai_time", Some(secs)) if secs >= 0.0 => {
            crate::clock::rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(secs))
        }
        _ => v.as_str().map_or_else(|| v.to_string(), str::to_owned),
    }
}

fn trigger_buttons(name: &str, sess: &Session) -> Markup {
    html! {
        @if sess.can_trigger() {
            div.actions {
                form method="post" action={ "/ui/nodes/" (name) "/converge" } {
                    input type="hidden" name="csrf" value=(sess.csrf);
                    input type="hidden" name="mode" value="why-run";
                    button #why-run type="submit" { "Why-run (show what would change)" }
                }
                form method="post" action={ "/ui/nodes/" (name) "/converge" } {
                    input type="hidden" name="csrf" value=(sess.csrf);
                    input type="hidden" name="mode" value="converge";
                    button #converge .danger type="submit" { "Converge (apply)" }
                }
            }
        } @else {
            p.help { "Starting a run needs a token with the trigger role." }
        }
    }
}

pub(super) async fn node(
    State(s): State<S>,
    Extension(sess): Extension<Session>,
    Path(name): Path<String>,
) -> Response {
    let node = match crate::api::get_node(State(s.clone()), Path(name.clone())).await {
        Ok(v) => v.0,
        Err(e) => return api_error(e),
    };
    if let Err(e) = NodeName::new(&name) {
        return problem(StatusCode::BAD_REQUEST, "Bad node name", &e.to_string());
    }
    let history = crate::api::list_runs(
        State(s.clone()),
        Ok(Query(ListQuery {
            node: Some(name.clone()),
            status: None,
            limit: Some(RUNS_SHOWN),
        })),
    )
    .await
    .map(|j| j.0["runs"].as_array().cloned().unwrap_or_default());
    let history = match history {
        Ok(h) => h,
        Err(e) => return api_error(e),
    };
    let last = &node["last_result"];
    let (class, label) = match last.is_null() {
        true => ("unknown", "no result yet".to_owned()),
        false => result_state(&last["report"]),
    };
    let main = html! {
        h1 { "Node " (name) }
        dl.facts {
            @if let Some(d) = node["device"].as_object() {
                dt { "Device" } dd #node-device {
                    (d["platform"].as_str().unwrap_or_default()) " at " (d["host"].as_str().unwrap_or_default())
                    @if let Some(p) = d["port"].as_u64() { ":" (p) }
                }
            }
            dt { "Last result" } dd { span #node-state .status.{"st-" (class)} data-node-status=(class) { (label) } }
            @if let Some(r) = last["run_id"].as_str() {
                dt { "Last run" } dd { a href={ "/ui/runs/" (r) } { code { (r) } } " at " (last["finished_at"].as_str().unwrap_or_default()) }
            }
            @if let Some(r) = node["running_run"].as_str() {
                dt { "Running now" } dd { a href={ "/ui/runs/" (r) } { code { (r) } } }
            }
            dt { "In the inventory" } dd { (if node["in_inventory"] == true { "yes" } else { "no" }) }
        }
        (trigger_buttons(&name, &sess))
        h2 { "Facts" }
        (facts_table(&node["facts"]))
        h2 { "Last report" }
        @if last.is_null() { p.help { "None yet." } } @else {
            (highlighted(&crate::report::human_node_json(&last["report"])))
        }
        h2 { "History" }
        (node_history(&history))
    };
    html_response(StatusCode::OK, page(&name, Nav::Nodes, Some(&sess), main))
}

fn node_history(runs: &[Value]) -> Markup {
    html! {
        @if runs.is_empty() { p.help { "No run has included this node yet." } } @else {
            div.scroll { table.history {
                thead { tr { th scope="col" { "Run" } th scope="col" { "Status" } th scope="col" { "Kind" } th scope="col" { "Created" } th scope="col" { "Requested by" } } }
                tbody {
                    @for r in runs {
                        @let id = r["run_id"].as_str().unwrap_or_default();
                        @let status = r["status"].as_str().unwrap_or_default();
                        tr {
                            td { a href={ "/ui/runs/" (id) } { code { (id) } } }
                            td { span.status.{"st-" (status)} { (status) } }
                            td { (run_kind(r["why_run"] == true)) }
                            td { (r["created_at"].as_str().unwrap_or_default()) }
                            td { (r["requested_by"].as_str().unwrap_or_default()) }
                        }
                    }
                }
            } }
        }
    }
}

pub(super) async fn topology(
    State(s): State<S>,
    Extension(ui): Extension<Arc<Ui>>,
    Extension(sess): Extension<Session>,
) -> Response {
    let topo = match super::topology_of(&s, &ui).await {
        Ok(t) => t,
        Err(e) => {
            let main = html! { h1 { "Topology" } p.help #no-topology { (e.to_string()) } };
            return html_response(
                StatusCode::OK,
                page("Topology", Nav::Topology, Some(&sess), main),
            );
        }
    };
    let mut states = std::collections::BTreeMap::new();
    for n in topo.nodes.keys() {
        let state = if s.sched.node_state(n).0.is_some() {
            ("running", "running now".to_owned())
        } else {
            match s.history.last_result(n.clone()).await {
                Ok(Some(l)) => result_state(&l.2),
                Ok(None) => ("unknown", "no result yet".to_owned()),
                Err(e) => return api_error(HttpError::internal(e)),
            }
        };
        states.insert(n.clone(), state);
    }
    let links = match s.history.last_link_check().await {
        Ok(l) => l,
        Err(e) => return api_error(HttpError::internal(e)),
    };
    let report = links.as_ref().map(|l| &l.report);
    let drawing = super::topology::draw(&topo, &states, report);
    let main = html! {
        h1 { "Topology " code { (topo.name) } }
        (drawing)
        (super::topology::legend())
        (links_checked(links.as_ref()))
        @if sess.can_trigger() {
            form method="post" action="/ui/topology/links" {
                input type="hidden" name="csrf" value=(sess.csrf);
                button #check-links type="submit" { "Check links (LLDP against the topology)" }
            }
        }
        (super::topology::link_table(&topo, report))
    };
    html_response(
        StatusCode::OK,
        page("Topology", Nav::Topology, Some(&sess), main),
    )
}

/// When the links were last checked, by whom or by which atomic run, and what it found.
fn links_checked(check: Option<&StoredLinkCheck>) -> Markup {
    let Some(c) = check else {
        return html! { p.help #links-checked { "Links not checked yet: their colour is unknown until a link check runs (the button below, or an atomic run with check_links)." } };
    };
    let r = &c.report;
    html! {
        p.help #links-checked data-origin=(match c.origin { CheckOrigin::Page { .. } => "page", CheckOrigin::Atomic { .. } => "atomic" }) {
            "Links as LLDP saw them at " time datetime=(c.at) { (c.at) } " ("
            @match &c.origin {
                CheckOrigin::Page { by } => { "Check links, by " (by) }
                CheckOrigin::Atomic { run_id } => { "atomic run " a href={ "/ui/runs/" (run_id) } { code { (run_id) } } }
            }
            "): " (r.up.len()) " up, " (r.missing.len()) " missing, " (r.undeclared.len()) " undeclared."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ohai_time_reads_as_a_time_and_other_facts_as_written() {
        assert_eq!(
            fact_text("ohai_time", &serde_json::json!(1764340000.25)),
            "2025-11-28T14:26:40Z"
        );
        assert_eq!(fact_text("hostname", &serde_json::json!("sw1")), "sw1");
        assert_eq!(fact_text("uptime", &serde_json::json!(42)), "42");
    }

    #[test]
    fn diff_lines_are_marked_and_everything_is_escaped() {
        let text = "Starting netgw run for sw1\n  * vlan[10] action create\n    - Would create vlan[10]\nDevice diff:\n    --- running\n    +vlan 10\n    -vlan 20 <b>\n     name x\nWARNING: <script>x</script>\n";
        let html = highlighted(text).into_string();
        assert!(
            html.contains(r#"<ins class="l-add">    +vlan 10</ins>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<del class="l-del">    -vlan 20 &lt;b&gt;</del>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<span class="l-change">    - Would create vlan[10]</span>"#),
            "{html}"
        );
        assert!(
            html.contains(r#"<span class="l-warn">WARNING: &lt;script&gt;x&lt;/script&gt;</span>"#),
            "{html}"
        );
        assert!(!html.contains("<script>"), "{html}");
    }

    #[test]
    fn result_states_read_the_report() {
        let r = |v: Value| result_state(&v).0;
        assert_eq!(
            r(serde_json::json!({"status": "failed", "why_run": true})),
            "failed"
        );
        assert_eq!(
            r(serde_json::json!({"status": "success", "why_run": true, "updated": 2})),
            "drift"
        );
        assert_eq!(
            r(serde_json::json!({"status": "success", "why_run": false, "updated": 2})),
            "ok"
        );
        assert_eq!(
            r(serde_json::json!({"status": "success", "why_run": true, "updated": 0})),
            "ok"
        );
        assert_eq!(r(Value::Null), "unknown");
    }
}
