//! Chef data-collector messages (`run_start`, `run_converge`), posted to a configured URL as
//! chef-client does for Chef Automate, so existing dashboards see gateway runs.
//!
//! Messages are built from the engine's run events and posted by one background task (bounded
//! channel, per-request timeout); a collector that is down never slows or fails a converge — errors
//! are logged once per message.

use crate::report::{EventSink, RunEvent};
use crate::report::{NodeStatus, ResourceReport};
use netgw_models::secret::Secret;
use netgw_transport::http::{ClientError, TlsTrust, build_client, redirect_reason};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tracing::warn;

#[derive(Debug, Clone)]
pub struct CollectorConfig {
    pub url: String,
    /// Sent as `x-data-collector-token` (Automate's header).
    pub token: Option<Secret>,
    pub organization: String,
    pub server_fqdn: String,
    pub timeout: Duration,
}

/// Why the data collector's poster could not start.
#[derive(Debug, thiserror::Error)]
pub enum CollectorError {
    #[error("in the data collector's HTTP client for {url}: {source}")]
    Client {
        url: String,
        #[source]
        source: ClientError,
    },
}

/// The message as text, for a front-end that reports text (the CLI's `Failure::usage`).
/// Start the poster; returns the event sink to give the engine and the task to await at the end.
pub fn start(
    cfg: CollectorConfig,
) -> Result<(EventSink, tokio::task::JoinHandle<()>), CollectorError> {
    // The one HTTP client builder: the token is for the URL the user named, so no redirect is followed.
    let client = build_client(cfg.timeout, cfg.timeout, TlsTrust::Platform).map_err(|source| {
        CollectorError::Client {
            url: cfg.url.clone(),
            source,
        }
    })?;
    let (tx, rx) = mpsc::channel::<RunEvent>(4096);
    let handle = tokio::spawn(poster(cfg, client, rx));
    let sink: EventSink = Arc::new(move |e| {
        if tx.try_send(e).is_err() {
            warn!("data collector queue full; a message was dropped");
        }
    });
    Ok((sink, handle))
}

struct NodeRun {
    start: String,
    resources: Vec<ResourceReport>,
}

async fn poster(cfg: CollectorConfig, client: reqwest::Client, mut rx: mpsc::Receiver<RunEvent>) {
    let mut runs: HashMap<String, NodeRun> = HashMap::new();
    while let Some(ev) = rx.recv().await {
        let msg = match ev {
            RunEvent::NodeStarted { run_id, node } => {
                let start = now();
                runs.insert(
                    node.clone(),
                    NodeRun {
                        start: start.clone(),
                        resources: Vec::new(),
                    },
                );
                run_start(&cfg, &run_id, &node, &start)
            }
            RunEvent::Resource { node, resource, .. } => {
                if let Some(r) = runs.get_mut(&node) {
                    r.resources.push(*resource);
                }
                continue;
            }
            RunEvent::NodeFinished {
                run_id,
                node,
                status,
                updated,
                total,
                error,
            } => {
                let run = runs.remove(&node).unwrap_or(NodeRun {
                    start: now(),
                    resources: Vec::new(),
                });
                run_converge(
                    &cfg,
                    &run_id,
                    &node,
                    &run,
                    status,
                    updated,
                    total,
                    error.as_deref(),
                )
            }
        };
        let mut req = client.post(&cfg.url).json(&msg);
        if let Some(t) = &cfg.token {
            req = req.header("x-data-collector-token", t.expose());
        }
        match req.send().await {
            Ok(resp) if resp.status().is_success() => {}
            Ok(resp) => match redirect_reason(resp.status().as_u16(), resp.headers()) {
                Some(reason) => warn!(url = %cfg.url, "data collector {reason}"),
                None => {
                    warn!(status = %resp.status(), url = %cfg.url, "data collector refused a message")
                }
            },
            Err(e) => warn!(error = %e, url = %cfg.url, "data collector unreachable"),
        }
    }
}

fn now() -> String {
    crate::clock::now_rfc3339()
}

/// A stable UUID-shaped id for a node (Automate keys nodes by `entity_uuid`).
fn entity_uuid(node: &str) -> String {
    // FNV-1a over the name, spread into UUID layout; stable across runs and gateways.
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for b in node.bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    let x = format!("{h:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &x[0..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..32]
    )
}

fn base(
    cfg: &CollectorConfig,
    kind: &str,
    run_id: &str,
    node: &str,
) -> serde_json::Map<String, Value> {
    let v = json!({
        "chef_server_fqdn": cfg.server_fqdn,
        "entity_uuid": entity_uuid(node),
        "id": run_id,
        "message_version": "1.1.0",
        "message_type": kind,
        "node_name": node,
        "organization_name": cfg.organization,
        "run_id": run_id,
        "source": "chef_client",
    });
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

fn run_start(cfg: &CollectorConfig, run_id: &str, node: &str, start: &str) -> Value {
    let mut m = base(cfg, "run_start", run_id, node);
    m.insert("start_time".into(), json!(start));
    Value::Object(m)
}

#[allow(clippy::too_many_arguments)]
fn run_converge(
    cfg: &CollectorConfig,
    run_id: &str,
    node: &str,
    run: &NodeRun,
    status: NodeStatus,
    updated: usize,
    total: usize,
    error: Option<&str>,
) -> Value {
    let mut m = base(cfg, "run_converge", run_id, node);
    m.insert("start_time".into(), json!(run.start));
    m.insert("end_time".into(), json!(now()));
    m.insert(
        "status".into(),
        json!(if status == NodeStatus::Success {
            "success"
        } else {
            "failure"
        }),
    );
    m.insert("total_resource_count".into(), json!(total));
    m.insert("updated_resource_count".into(), json!(updated));
    let resources: Vec<Value> = run
        .resources
        .iter()
        .map(|r| {
            json!({
                "type": r.kind,
                "name": r.name,
                "id": r.name,
                "cookbook_name": r.recipe.split("::").next().unwrap_or(""),
                "recipe_name": r.recipe.split("::").nth(1).unwrap_or("default"),
                "action": r.action,
                "result": r.action,
                "status": r.status,
                "before": r.before,
                "after": r.after,
                "duration": format!("{}", (r.duration_secs * 1000.0).round() as u64),
                "error": r.error,
            })
        })
        .collect();
    m.insert("resources".into(), Value::Array(resources));
    if let Some(e) = error {
        m.insert(
            "error".into(),
            json!({"class": "netgw::NodeFailed", "message": e}),
        );
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A minimal HTTP server that records request bodies and headers.
    async fn capture() -> (String, tokio::sync::mpsc::Receiver<(String, Value)>) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/data-collector/v0/", l.local_addr().unwrap());
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let n = s.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            break;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf).to_string();
                        if let Some(i) = text.find("\r\n\r\n") {
                            let len = text[..i]
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase()
                                        .strip_prefix("content-length:")
                                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                                })
                                .unwrap_or(0);
                            if buf.len() >= i + 4 + len {
                                let body: Value = serde_json::from_slice(&buf[i + 4..i + 4 + len])
                                    .unwrap_or(Value::Null);
                                let _ = tx.send((text[..i].to_string(), body)).await;
                                let _ = s
                                    .write_all(
                                        b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n",
                                    )
                                    .await;
                                buf.clear();
                            }
                        }
                    }
                });
            }
        });
        (url, rx)
    }

    #[tokio::test]
    async fn posts_run_start_and_run_converge() {
        let (url, mut rx) = capture().await;
        let cfg = CollectorConfig {
            url,
            token: Some(Secret::new("tok-123")),
            organization: "netops".into(),
            server_fqdn: "gw1".into(),
            timeout: Duration::from_secs(5),
        };
        let (sink, handle) = start(cfg).unwrap();
        sink(RunEvent::NodeStarted {
            run_id: "r1".into(),
            node: "sw1".into(),
        });
        sink(RunEvent::NodeFinished {
            run_id: "r1".into(),
            node: "sw1".into(),
            status: NodeStatus::Failed,
            updated: 0,
            total: 2,
            error: Some("boom".into()),
        });
        drop(sink);
        let (h1, start_msg) = rx.recv().await.unwrap();
        assert!(
            h1.to_ascii_lowercase()
                .contains("x-data-collector-token: tok-123")
        );
        assert_eq!(start_msg["message_type"], "run_start");
        assert_eq!(start_msg["node_name"], "sw1");
        let (_, conv) = rx.recv().await.unwrap();
        assert_eq!(conv["message_type"], "run_converge");
        assert_eq!(conv["status"], "failure");
        assert_eq!(conv["total_resource_count"], 2);
        assert_eq!(conv["error"]["message"], "boom");
        assert_eq!(conv["entity_uuid"], start_msg["entity_uuid"]);
        handle.await.unwrap();
    }
}
