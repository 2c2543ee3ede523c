//! `netgw trigger`: the CI client of `netgw serve`. It posts a converge (a selection, why-run,
//! atomic) as a token holder or a signed Chef client, and with `--wait` follows the run's events
//! (`GET /v1/runs/ID/events`, server-sent events) to its end and exits with its outcome, as `netgw
//! converge` would: 0 every node succeeded, 1 a node failed (or with `--why-run`, nothing: a
//! why-run that ran is a success), 3 a failure on the gateway's side or a run interrupted or
//! cancelled, 2 a trigger refused or a usage error.

use super::*;
use crate::store::chef::auth::{ClientKey, SignRequest, SignVersion, sign, timestamp};
use std::time::Duration;

/// `netgw trigger`'s options.
#[derive(Debug, clap::Args)]
pub struct TriggerArgs {
    /// The gateway (`http://127.0.0.1:8080` or `https://...`), as `netgw serve` printed it.
    #[arg(long, env = "NETGW_URL")]
    pub url: String,
    /// A bearer token with the trigger role: a literal, `${ENV_VAR}` or `file:PATH`. Without it the
    /// request is signed as the Chef client --client-name with --client-key.
    #[arg(long, env = "NETGW_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Nodes to converge, in the selection language of `netgw converge` (`'access:!sw3'`); the
    /// gateway resolves it against its inventory.
    #[arg(value_name = "SELECTION", conflicts_with_all = ["group", "topology", "search"])]
    pub limit: Option<String>,
    /// An inventory group of the gateway's inventory.
    #[arg(long)]
    pub group: Option<String>,
    /// Every node of a containerlab lab the gateway's inventory knows.
    #[arg(long)]
    pub topology: Option<String>,
    /// A Chef search query (the gateway must read a Chef server).
    #[arg(long)]
    pub search: Option<String>,
    /// Apply exactly this plan (`netgw converge --why-run --plan-out FILE`) on the nodes it names,
    /// as `netgw converge --plan` does (docs/serve.md "Plans approved, then applied").
    #[arg(long, value_name = "FILE", conflicts_with_all = ["limit", "group", "topology", "search", "why_run", "atomic", "plan_id"])]
    pub plan: Option<PathBuf>,
    /// Apply the plan the gateway keeps under this id (`POST /v1/plans`).
    #[arg(long, value_name = "ID", conflicts_with_all = ["limit", "group", "topology", "search", "why_run", "atomic"])]
    pub plan_id: Option<String>,
    /// Stage and show the diff on each device, discard; change nothing.
    #[arg(long)]
    pub why_run: bool,
    /// One all-or-nothing transaction over the selected nodes.
    #[arg(long)]
    pub atomic: bool,
    /// With --atomic: LLDP compared with the gateway's `links_topology` before confirming.
    #[arg(long, requires = "atomic")]
    pub check_links: bool,
    /// Follow the run to its end and exit with its outcome.
    #[arg(long)]
    pub wait: bool,
    /// With --wait: seconds to wait for the run before giving up (exit 3; the run goes on).
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=604800))]
    pub timeout: u64,
    /// CA certificate (PEM) that verifies an HTTPS gateway.
    #[arg(long)]
    pub ca: Option<PathBuf>,
    /// Output: `human` (each node as it finishes, then the summary) or `json` (the trigger's answer;
    /// with --wait, each run's final state).
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
}

/// How requests prove who sends them.
enum Credentials {
    Token(netgw_models::secret::Secret),
    Chef { client: String, key: ClientKey },
}

struct Gateway {
    http: reqwest::Client,
    base: String,
    credentials: Credentials,
}

pub(super) fn trigger_cmd(
    cli: &Cli,
    args: &TriggerArgs,
    out: &mut dyn Write,
) -> Result<Status, Failure> {
    let gw = Gateway::new(cli, args)?;
    let body = request_body(args)?;
    runtime()?.block_on(async {
        let accepted = gw.trigger(&body).await?;
        let mut runs: Vec<String> = accepted["run_id"]
            .as_str()
            .map(str::to_owned)
            .into_iter()
            .collect();
        for c in accepted["coalesced"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            if let Some(id) = c["run_id"]
                .as_str()
                .filter(|id| !runs.iter().any(|r| r == id))
            {
                runs.push(id.to_owned());
            }
        }
        if !args.wait {
            match args.format {
                Format::Json => writeln!(out, "{}", pretty(&accepted))?,
                Format::Human => writeln!(out, "queued: run {}", runs.join(", run "))?,
            }
            return Ok(Status::Ok);
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(args.timeout);
        let mut status = Status::Ok;
        for id in &runs {
            let run = gw.follow(id, deadline, args.format, out).await?;
            status = worse(status, run_status(&run));
            match args.format {
                Format::Json => writeln!(out, "{}", pretty(&run))?,
                Format::Human => {
                    write!(out, "{}", crate::report::human_summary_json(&run["report"]))?
                }
            }
        }
        Ok(status)
    })
}

fn request_body(args: &TriggerArgs) -> Result<Value, Failure> {
    if let Some(path) = &args.plan {
        // Read and checked here first: a file the gateway would refuse is named as a file.
        let plan = super::load_plan(path)?;
        return Ok(json!({"plan": plan}));
    }
    if let Some(id) = &args.plan_id {
        return Ok(json!({"plan_id": id}));
    }
    let mut body = serde_json::Map::new();
    let selection = [
        ("limit", &args.limit),
        ("group", &args.group),
        ("topology", &args.topology),
        ("search", &args.search),
    ];
    for (key, value) in selection {
        if let Some(v) = value {
            body.insert(key.into(), json!(v));
        }
    }
    if !body.contains_key("group") && !body.contains_key("topology") && !body.contains_key("search")
    {
        body.entry("limit").or_insert(json!("all"));
    }
    for (key, on) in [
        ("why_run", args.why_run),
        ("atomic", args.atomic),
        ("check_links", args.check_links),
    ] {
        if on {
            body.insert(key.into(), json!(true));
        }
    }
    Ok(Value::Object(body))
}

/// The exit status a finished run maps to, as `netgw converge`'s.
fn run_status(run: &Value) -> Status {
    if matches!(run["status"].as_str(), Some("interrupted" | "cancelled")) {
        return Status::GatewayFailed;
    }
    let nodes = run["report"]["nodes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let kind = |n: &Value| {
        serde_json::from_value::<crate::kind::NodeErrorKind>(n["error_kind"].clone()).ok()
    };
    if nodes.iter().filter_map(kind).any(|k| k.is_gateway()) {
        Status::GatewayFailed
    } else if nodes
        .iter()
        .any(|n| matches!(n["status"].as_str(), Some("failed" | "not_started")))
    {
        Status::NodeFailed
    } else {
        Status::Ok
    }
}

/// The more serious of two outcomes (the exit codes are ordered by seriousness).
fn worse(a: Status, b: Status) -> Status {
    if b as u8 > a as u8 { b } else { a }
}

fn gateway_failure(message: String) -> Failure {
    Failure {
        status: Status::GatewayFailed,
        message,
    }
}

impl Gateway {
    fn new(cli: &Cli, args: &TriggerArgs) -> Result<Gateway, Failure> {
        let credentials = match (&args.token, &cli.client_name, &cli.client_key) {
            (Some(r), _, _) => Credentials::Token(
                netgw_transport::credentials::resolve(r)
                    .map_err(|e| Failure::usage(format!("--token: {e}")))?,
            ),
            (None, Some(client), Some(key)) => Credentials::Chef {
                client: client.clone(),
                key: ClientKey::load(key).map_err(|e| Failure::usage(e.to_string()))?,
            },
            _ => {
                return Err(Failure::usage(
                    "trigger needs --token (or NETGW_TOKEN), or --client-name and --client-key to sign as a Chef client",
                ));
            }
        };
        let mut builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .use_rustls_tls();
        if let Some(ca) = &args.ca {
            let pem = std::fs::read(ca)
                .map_err(|e| Failure::usage(format!("--ca {}: {e}", ca.display())))?;
            let cert = reqwest::Certificate::from_pem(&pem)
                .map_err(|e| Failure::usage(format!("--ca {}: {e}", ca.display())))?;
            builder = builder.add_root_certificate(cert);
        }
        let http = builder
            .build()
            .map_err(|e| Failure::usage(format!("--url {}: {e}", args.url)))?;
        Ok(Gateway {
            http,
            base: args.url.trim_end_matches('/').to_owned(),
            credentials,
        })
    }

    /// A request with its credentials (a Chef signature covers the method, path and body).
    fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &[u8],
    ) -> Result<reqwest::RequestBuilder, Failure> {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        match &self.credentials {
            Credentials::Token(t) => req = req.bearer_auth(t.expose()),
            Credentials::Chef { client, key } => {
                let ts = timestamp(std::time::SystemTime::now());
                let signed = SignRequest {
                    method: method.as_str(),
                    path: path.split('?').next().unwrap_or(path),
                    body,
                    user_id: client,
                    timestamp: &ts,
                    server_api_version: "0",
                };
                for (k, v) in sign(key, SignVersion::V1_3, &signed)
                    .map_err(|e| Failure::usage(e.to_string()))?
                {
                    req = req.header(k, v);
                }
            }
        }
        Ok(req)
    }

    async fn trigger(&self, body: &Value) -> Result<Value, Failure> {
        let bytes = serde_json::to_vec(body).map_err(|e| Failure::usage(e.to_string()))?;
        let req = self
            .request(reqwest::Method::POST, "/v1/converge", &bytes)?
            .header("Content-Type", "application/json")
            .timeout(Duration::from_secs(60))
            .body(bytes);
        let resp = req
            .send()
            .await
            .map_err(|e| gateway_failure(format!("{}: {e}", self.base)))?;
        let status = resp.status();
        let answer: Value = resp.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(answer);
        }
        let message = format!(
            "{} refused the trigger ({status}): {}",
            self.base,
            answer["error"].as_str().unwrap_or("no explanation")
        );
        Err(if status.is_server_error() {
            gateway_failure(message)
        } else {
            Failure::usage(message)
        })
    }

    /// Follow a run's events to its end, printing each node as it finishes; then its final state.
    async fn follow(
        &self,
        id: &str,
        deadline: tokio::time::Instant,
        format: Format,
        out: &mut dyn Write,
    ) -> Result<Value, Failure> {
        let path = format!("/v1/runs/{id}/events");
        let mut resp = self
            .request(reqwest::Method::GET, &path, b"")?
            .header("Accept", "text/event-stream")
            .send()
            .await
            .map_err(|e| gateway_failure(format!("{}{path}: {e}", self.base)))?;
        if !resp.status().is_success() {
            return Err(gateway_failure(format!(
                "{}{path}: {}",
                self.base,
                resp.status()
            )));
        }
        let mut sse = SseLines::default();
        loop {
            let chunk = tokio::time::timeout_at(deadline, resp.chunk())
                .await
                .map_err(|_| {
                    gateway_failure(format!(
                        "run {id}: not finished within --timeout (it goes on)"
                    ))
                })?
                .map_err(|e| gateway_failure(format!("{}{path}: {e}", self.base)))?;
            let Some(chunk) = chunk else { break };
            for event in sse.feed(&chunk) {
                if format == Format::Human && event["event"] == "node_finished" {
                    writeln!(out, "{}", node_line(&event))?;
                }
            }
        }
        let resp = self
            .request(reqwest::Method::GET, &format!("/v1/runs/{id}"), b"")?
            .timeout(Duration::from_secs(60))
            .send()
            .await
            .map_err(|e| gateway_failure(format!("{}/v1/runs/{id}: {e}", self.base)))?;
        resp.json()
            .await
            .map_err(|e| gateway_failure(format!("{}/v1/runs/{id}: {e}", self.base)))
    }
}

fn node_line(e: &Value) -> String {
    let node = e["node"].as_str().unwrap_or_default();
    match e["error"].as_str() {
        Some(err) => format!(
            "{node}: {}: {err}",
            e["status"].as_str().unwrap_or("failed")
        ),
        None => format!(
            "{node}: {} ({}/{} resources updated)",
            e["status"].as_str().unwrap_or_default(),
            e["updated"].as_u64().unwrap_or(0),
            e["total"].as_u64().unwrap_or(0)
        ),
    }
}

/// Server-sent events' `data:` lines, as JSON values, from chunks split anywhere.
#[derive(Default)]
struct SseLines {
    pending: Vec<u8>,
    data: String,
}

impl SseLines {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Value> {
        self.pending.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if let Ok(v) = serde_json::from_str(&self.data) {
                    out.push(v);
                }
                self.data.clear();
            } else if let Some(d) = line.strip_prefix("data:") {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(d.strip_prefix(' ').unwrap_or(d));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_are_read_whole() {
        let text = b"id: 0\nevent: node_finished\ndata: {\"event\":\"node_finished\",\"node\":\"sw1\"}\n\n: keep-alive\n\nid: 1\ndata: {\"event\":\"run_finished\"}\n\n";
        for split in 1..text.len() {
            let mut sse = SseLines::default();
            let mut got = sse.feed(&text[..split]);
            got.extend(sse.feed(&text[split..]));
            assert_eq!(got.len(), 2, "split at {split}");
            assert_eq!(got[0]["node"], "sw1");
            assert_eq!(got[1]["event"], "run_finished");
        }
    }

    #[test]
    fn a_run_maps_to_the_exit_status_converge_would_give() {
        let run =
            |status: &str, nodes: Value| json!({"status": status, "report": {"nodes": nodes}});
        let ok = json!({"status": "success"});
        let failed = json!({"status": "failed", "error_kind": "device"});
        let gateway = json!({"status": "failed", "error_kind": "lock"});
        assert_eq!(run_status(&run("finished", json!([ok]))), Status::Ok);
        assert_eq!(
            run_status(&run("finished", json!([ok, failed]))),
            Status::NodeFailed
        );
        assert_eq!(
            run_status(&run("finished", json!([failed, gateway]))),
            Status::GatewayFailed
        );
        assert_eq!(
            run_status(&run("interrupted", json!([ok]))),
            Status::GatewayFailed
        );
        assert_eq!(worse(Status::NodeFailed, Status::Ok), Status::NodeFailed);
    }
}
