//! Prometheus text exposition (format 0.0.4) of the gateway's counters: a handful of counters under
//! one mutex, rendered on demand, with the scheduler's gauges and (on a shared database) the
//! queue's figures read at scrape time.
//!
//! `prometheus-client` was weighed and not adopted. It encodes OpenMetrics 1.0 only: a counter's
//! family is announced without its `_total` (`# TYPE netgw_runs counter`), each HELP gets a full
//! stop, the text ends with `# EOF` and is served as `application/openmetrics-text`, so the
//! document scrapers and the tests read today would change, not just its producer. Half of what is
//! exposed is read at scrape time (the scheduler's queue, the shared database's queue, asked
//! asynchronously), which the library takes only through a hand-written `Collector`; what it would
//! replace is the counter bookkeeping below, about a hundred lines, for a new dependency.

use crate::history::SharedGauges;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// Histogram bucket bounds in seconds (node and run durations: devices take seconds to minutes).
const BUCKETS: [f64; 12] = [
    0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

#[derive(Debug, Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, v: f64) {
        for (i, b) in BUCKETS.iter().enumerate() {
            if v <= *b {
                self.counts[i] += 1;
            }
        }
        self.sum += v;
        self.count += 1;
    }

    fn render(&self, out: &mut String, name: &str) {
        for (i, b) in BUCKETS.iter().enumerate() {
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {}", self.counts[i]);
        }
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count);
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

#[derive(Debug, Default)]
struct Inner {
    triggers: BTreeMap<&'static str, u64>,
    runs: BTreeMap<String, u64>,
    runs_created: u64,
    node_results: BTreeMap<String, u64>,
    resource_changes: BTreeMap<String, u64>,
    device_errors: BTreeMap<String, u64>,
    node_errors: BTreeMap<String, u64>,
    recoveries: BTreeMap<String, u64>,
    auth_failures: BTreeMap<&'static str, u64>,
    node_duration: Histogram,
    run_duration: Histogram,
    /// Exponentially weighted mean node duration, for `Retry-After`.
    node_secs_ewma: f64,
}

#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

/// Gauges read from the scheduler at scrape time.
#[derive(Debug, Default, Clone, Copy)]
pub struct Gauges {
    pub queue_depth: usize,
    pub max_queue: usize,
    pub nodes_running: usize,
    pub concurrency: usize,
    pub runs_live: usize,
}

/// The families of [`SharedGauges`], appended to [`Metrics::render`]'s text.
pub fn render_shared(out: &mut String, g: &SharedGauges) {
    family(
        out,
        "netgw_gateway_info",
        "gauge",
        "This gateway's id in the shared database's registry (always 1).",
    );
    let _ = writeln!(out, "netgw_gateway_info{{id=\"{}\"}} 1", label(&g.gateway));
    family(
        out,
        "netgw_database_up",
        "gauge",
        "Whether the shared database answered this scrape.",
    );
    let _ = writeln!(out, "netgw_database_up {}", u8::from(g.waiting.is_some()));
    let gauges = [
        (
            "netgw_shared_queue_waiting",
            "Node runs waiting in the shared queue, all gateways.",
            g.waiting,
        ),
        (
            "netgw_shared_queue_running",
            "Node runs started and not finished, all gateways.",
            g.running,
        ),
        (
            "netgw_gateway_leases",
            "Shared queue rows this gateway holds under its heartbeat.",
            g.leases,
        ),
        (
            "netgw_gateways_alive",
            "Gateways whose heartbeat is within the lease.",
            g.gateways_alive,
        ),
    ];
    for (name, help, v) in gauges {
        if let Some(v) = v {
            family(out, name, "gauge", help);
            let _ = writeln!(out, "{name} {v}");
        }
    }
    for (name, help, v) in [
        (
            "netgw_gateway_claims_total",
            "Queue rows of dead or draining gateways claimed.",
            g.claims,
        ),
        (
            "netgw_gateway_takeovers_total",
            "Claimed node runs this gateway queued to run.",
            g.takeovers,
        ),
    ] {
        family(out, name, "counter", help);
        let _ = writeln!(out, "{name} {v}");
    }
    family(
        out,
        "netgw_events_listening",
        "gauge",
        "Whether other gateways' events arrive by LISTEN/NOTIFY (else streams poll).",
    );
    let _ = writeln!(out, "netgw_events_listening {}", u8::from(g.listening));
}

fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// `accepted`, `coalesced`, `queue_full`, `invalid`, `shutting_down`.
    pub fn trigger(&self, outcome: &'static str) {
        self.with(|m| *m.triggers.entry(outcome).or_default() += 1);
    }

    pub fn run_created(&self) {
        self.with(|m| m.runs_created += 1);
    }

    pub fn run_finished(&self, status: &str, secs: f64) {
        self.with(|m| {
            *m.runs.entry(status.to_owned()).or_default() += 1;
            m.run_duration.observe(secs);
        });
    }

    /// One node's result: its status, error kind, resource statuses and duration.
    pub fn node_result(&self, report: &serde_json::Value) {
        let status = report["status"].as_str().unwrap_or("unknown").to_owned();
        let kind = report["error_kind"].as_str().map(str::to_owned);
        let device_kind = report["device_error_kind"].as_str().map(str::to_owned);
        let recovered = report["recovered"]["found"].as_str().map(str::to_owned);
        let secs = report["duration_secs"].as_f64().unwrap_or(0.0);
        let changes: Vec<String> = report["resources"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .filter_map(|r| r["status"].as_str())
                    .filter(|s| *s != "up-to-date")
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        self.with(|m| {
            *m.node_results.entry(status).or_default() += 1;
            if let Some(k) = kind {
                *m.node_errors.entry(k).or_default() += 1;
            }
            if let Some(k) = device_kind {
                *m.device_errors.entry(k).or_default() += 1;
            }
            if let Some(f) = recovered {
                *m.recoveries.entry(f).or_default() += 1;
            }
            for c in changes {
                *m.resource_changes.entry(c).or_default() += 1;
            }
            m.node_duration.observe(secs);
            m.node_secs_ewma = if m.node_secs_ewma == 0.0 {
                secs
            } else {
                0.8 * m.node_secs_ewma + 0.2 * secs
            };
        });
    }

    /// `missing`, `invalid`, `forbidden`, `not_configured`.
    pub fn auth_failure(&self, reason: &'static str) {
        self.with(|m| *m.auth_failures.entry(reason).or_default() += 1);
    }

    /// Mean node duration lately (seconds; 0 before the first result).
    pub fn node_secs(&self) -> f64 {
        self.with(|m| m.node_secs_ewma)
    }

    pub fn render(&self, g: Gauges) -> String {
        let m = self.with(|m| {
            (
                m.triggers.clone(),
                m.runs.clone(),
                m.runs_created,
                m.node_results.clone(),
                m.resource_changes.clone(),
                m.device_errors.clone(),
                m.node_errors.clone(),
                m.recoveries.clone(),
                m.auth_failures.clone(),
                m.node_duration.clone(),
                m.run_duration.clone(),
            )
        });
        let (
            triggers,
            runs,
            created,
            nodes,
            changes,
            errors,
            node_errors,
            recoveries,
            auth,
            nd,
            rd,
        ) = m;
        let mut out = String::with_capacity(4096);
        family(
            &mut out,
            "netgw_triggers_total",
            "counter",
            "Trigger requests (POST /v1/converge) by outcome; a coalesced trigger joined a pending run.",
        );
        for (k, v) in &triggers {
            let _ = writeln!(out, "netgw_triggers_total{{outcome=\"{k}\"}} {v}");
        }
        family(
            &mut out,
            "netgw_runs_created_total",
            "counter",
            "Runs created (queued).",
        );
        let _ = writeln!(out, "netgw_runs_created_total {created}");
        family(
            &mut out,
            "netgw_runs_total",
            "counter",
            "Runs ended, by final status.",
        );
        for (k, v) in &runs {
            let _ = writeln!(out, "netgw_runs_total{{status=\"{}\"}} {v}", label(k));
        }
        family(
            &mut out,
            "netgw_node_results_total",
            "counter",
            "Node runs ended, by status.",
        );
        for (k, v) in &nodes {
            let _ = writeln!(
                out,
                "netgw_node_results_total{{status=\"{}\"}} {v}",
                label(k)
            );
        }
        family(
            &mut out,
            "netgw_resource_changes_total",
            "counter",
            "Resources that were not up to date, by status (updated, would-update, failed, skipped).",
        );
        for (k, v) in &changes {
            let _ = writeln!(
                out,
                "netgw_resource_changes_total{{status=\"{}\"}} {v}",
                label(k)
            );
        }
        render_error_counters(&mut out, &errors, &node_errors, &recoveries, &auth);
        family(
            &mut out,
            "netgw_node_duration_seconds",
            "histogram",
            "Duration of one node's converge.",
        );
        nd.render(&mut out, "netgw_node_duration_seconds");
        family(
            &mut out,
            "netgw_run_duration_seconds",
            "histogram",
            "Duration of a run, from creation to its end.",
        );
        rd.render(&mut out, "netgw_run_duration_seconds");
        render_gauges(&mut out, g);
        out
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// The failure counters: device and node errors, recoveries, refused API requests.
fn render_error_counters(
    out: &mut String,
    errors: &BTreeMap<String, u64>,
    node_errors: &BTreeMap<String, u64>,
    recoveries: &BTreeMap<String, u64>,
    auth: &BTreeMap<&'static str, u64>,
) {
    family(
        out,
        "netgw_device_errors_total",
        "counter",
        "Node runs failed in a device session, by the driver's error kind (connect, auth, timeout, transport, parse, rejected, verify, unsupported, config, cancelled).",
    );
    for (k, v) in errors {
        let _ = writeln!(
            out,
            "netgw_device_errors_total{{kind=\"{}\"}} {v}",
            label(k)
        );
    }
    family(
        out,
        "netgw_node_errors_total",
        "counter",
        "Failed node runs by what broke (device, transport, timeout, auth, store, server, lock, config, internal, cancelled).",
    );
    for (k, v) in node_errors {
        let _ = writeln!(out, "netgw_node_errors_total{{kind=\"{}\"}} {v}", label(k));
    }
    family(
        out,
        "netgw_recoveries_total",
        "counter",
        "Unfinished changes of dead runs found by a later run, by what the device held (new, old, partial: restored).",
    );
    for (k, v) in recoveries {
        let _ = writeln!(out, "netgw_recoveries_total{{found=\"{}\"}} {v}", label(k));
    }
    family(
        out,
        "netgw_auth_failures_total",
        "counter",
        "Refused API requests by reason.",
    );
    for (k, v) in auth {
        let _ = writeln!(out, "netgw_auth_failures_total{{reason=\"{k}\"}} {v}");
    }
}

/// The scheduler's gauges, read at scrape time, and the history write errors.
fn render_gauges(out: &mut String, g: Gauges) {
    family(
        out,
        "netgw_queue_depth",
        "gauge",
        "Node runs waiting to start.",
    );
    let _ = writeln!(out, "netgw_queue_depth {}", g.queue_depth);
    family(
        out,
        "netgw_queue_capacity",
        "gauge",
        "Most node runs that may wait (max_queue).",
    );
    let _ = writeln!(out, "netgw_queue_capacity {}", g.max_queue);
    family(
        out,
        "netgw_nodes_running",
        "gauge",
        "Node runs in progress.",
    );
    let _ = writeln!(out, "netgw_nodes_running {}", g.nodes_running);
    family(out, "netgw_concurrency", "gauge", "Most node runs at once.");
    let _ = writeln!(out, "netgw_concurrency {}", g.concurrency);
    family(out, "netgw_runs_live", "gauge", "Runs queued or running.");
    let _ = writeln!(out, "netgw_runs_live {}", g.runs_live);
    family(
        out,
        "netgw_history_write_errors_total",
        "counter",
        "History batches that could not be written.",
    );
    let _ = writeln!(
        out,
        "netgw_history_write_errors_total {}",
        crate::history::WRITE_ERRORS.load(std::sync::atomic::Ordering::Relaxed)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_families() {
        let m = Metrics::default();
        m.trigger("accepted");
        m.trigger("coalesced");
        m.node_result(
            &serde_json::json!({"status": "failed", "error_kind": "transport", "device_error_kind": "connect",
            "recovered": {"run_id": "r0", "found": "partial", "action": "restored", "restored": 2},
            "duration_secs": 0.2, "resources": [{"status": "updated"}, {"status": "up-to-date"}]}),
        );
        m.run_finished("finished", 0.3);
        let t = m.render(Gauges {
            queue_depth: 3,
            ..Default::default()
        });
        for want in [
            "netgw_triggers_total{outcome=\"coalesced\"} 1",
            "netgw_device_errors_total{kind=\"connect\"} 1",
            "netgw_node_errors_total{kind=\"transport\"} 1",
            "netgw_recoveries_total{found=\"partial\"} 1",
            "netgw_resource_changes_total{status=\"updated\"} 1",
            "netgw_node_results_total{status=\"failed\"} 1",
            "netgw_node_duration_seconds_bucket{le=\"0.25\"} 1",
            "netgw_node_duration_seconds_count 1",
            "netgw_runs_total{status=\"finished\"} 1",
            "netgw_queue_depth 3",
        ] {
            assert!(t.contains(want), "{want} in\n{t}");
        }
    }

    #[test]
    fn renders_the_shared_families() {
        let mut t = String::new();
        render_shared(
            &mut t,
            &SharedGauges {
                gateway: "h:1:\"x".into(),
                waiting: Some(4),
                claims: 2,
                ..Default::default()
            },
        );
        for want in [
            "netgw_gateway_info{id=\"h:1:\\\"x\"} 1",
            "netgw_database_up 1",
            "netgw_shared_queue_waiting 4",
            "netgw_gateway_claims_total 2",
            "netgw_events_listening 0",
        ] {
            assert!(t.contains(want), "{want} in\n{t}");
        }
        assert!(
            !t.contains("netgw_gateway_leases"),
            "unknown: left out\n{t}"
        );
    }
}
