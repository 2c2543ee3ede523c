//! `netgw serve`: the HTTP trigger API (docs/design.md §7).
//!
//! ```text
//!   SIGTERM/SIGINT ─▶ shutdown token ─┬─▶ axum: stop accepting, finish open requests
//!                                     └─▶ Scheduler::shutdown: grace, cancel, abort; history flushed
//!   request ─▶ /healthz (open)
//!           ─▶ auth layer: body read (max_body_bytes) ─▶ bearer token | Chef signature ─▶ role check
//!               ─▶ handlers ─▶ Scheduler (memory: queued/running runs)
//!                            ─▶ History (SQLite, off the runtime: writer thread + spawn_blocking reads)
//! ```
//! Every error body is `{"error": "...", "code": "..."}` and never repeats a credential.

pub mod auth;
pub mod config;
pub mod limits;
pub mod metrics;
pub mod openapi;
pub mod plans;
pub mod scheduler;
pub mod takeover;
pub mod ui;
pub mod webhook;

use crate::engine::{Connector, RegistryConnector};
use crate::gateway::ServeArgs;
use crate::history::{History, HistoryError, Retention, RunRow};
use crate::inventory::{Inventory, InventoryError};
use crate::store::local::LocalRepo;
use crate::store::{NodeStore, StoreError};
use auth::{Auth, AuthFailure, HeaderParts, Identity, Role};
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use config::{ConfigError, Settings};
use metrics::Metrics;
use netgw_models::NodeName;
use scheduler::{EngineCtx, RunStatus, RunView, Scheduler, Snapshot, SubmitError};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// Every route, for the OpenAPI test.
pub const ROUTES: &[&str] = &[
    "/healthz",
    "/v1/converge",
    "/v1/plans",
    "/v1/plans/{id}",
    "/v1/runs",
    "/v1/runs/{id}",
    "/v1/runs/{id}/events",
    "/v1/nodes/{name}",
    "/v1/gateway",
    "/metrics",
    "/v1/openapi.json",
    "/v1/webhooks/nautobot",
];

#[derive(Debug, Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error("listening on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("serve: {0}")]
    Runtime(String),
    #[error(transparent)]
    UnsafeState(#[from] crate::state::UnsafeState),
    #[error("serve: {0}")]
    Tls(#[from] limits::TlsSetupError),
}

/// An API error: status, a stable code, a message.
#[derive(Debug)]
pub struct HttpError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub retry_after: Option<u64>,
}

impl HttpError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        HttpError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    fn internal(e: impl std::fmt::Display) -> Self {
        warn!(error = %e, "request failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the gateway could not read its history (see its log)",
        )
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let mut r = (
            self.status,
            Json(json!({"error": self.message, "code": self.code})),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"netgw\""),
            );
        }
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

impl From<AuthFailure> for HttpError {
    fn from(f: AuthFailure) -> Self {
        let code = match &f {
            AuthFailure::Missing => "unauthenticated",
            AuthFailure::Invalid(_) => "invalid_credentials",
            AuthFailure::ChefNotConfigured => "not_configured",
            AuthFailure::Forbidden { .. } => "forbidden",
        };
        let status = match f {
            AuthFailure::Forbidden { .. } => StatusCode::FORBIDDEN,
            _ => StatusCode::UNAUTHORIZED,
        };
        HttpError::new(status, code, f.to_string())
    }
}

struct AppState {
    auth: Auth,
    sched: Scheduler,
    history: Arc<History>,
    metrics: Arc<Metrics>,
    store: Arc<dyn NodeStore>,
    max_body: usize,
    limits: limits::ServerLimits,
    /// Open event streams per identity (`token:ci`).
    streams: Arc<limits::Counter<String>>,
    started_at: String,
    settings: Value,
    /// Plans waiting for approval (`plans`).
    plans: plans::Plans,
    /// `POST /v1/webhooks/nautobot` (`webhook`), when configured.
    nautobot_webhook: Option<config::NautobotWebhook>,
}

type S = Arc<AppState>;

/// `netgw serve` from the command line: resolve settings, run until SIGTERM/SIGINT.
pub fn main_blocking(
    args: ServeArgs,
    store: Option<Arc<dyn NodeStore>>,
    cookbook_server: Option<crate::store::chef::ChefServer>,
) -> Result<(), ServeError> {
    let mut settings = Settings::resolve(&args)?;
    settings.cookbook_server = cookbook_server;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError::Runtime(format!("starting the async runtime: {e}")))?;
    rt.block_on(async move {
        let shutdown = CancellationToken::new();
        let sig = shutdown.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            sig.cancel();
        });
        serve(settings, store, Arc::new(RegistryConnector), shutdown)
            .await
            .map(|_| ())
    })
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => info!("SIGTERM: shutting down"),
                    _ = tokio::signal::ctrl_c() => info!("SIGINT: shutting down"),
                }
            }
            Err(e) => {
                warn!(error = %e, "cannot watch SIGTERM; only SIGINT stops the server gracefully");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Run the server until `shutdown` is cancelled; then drain as `Settings` say.
pub async fn serve(
    settings: Settings,
    store: Option<Arc<dyn NodeStore>>,
    connector: Arc<dyn Connector>,
    shutdown: CancellationToken,
) -> Result<scheduler::ShutdownReport, ServeError> {
    let cookbooks =
        LocalRepo::open(&settings.repo)?.with_data_bag_secret(settings.data_bag_secret.clone());
    let inventory = load_inventory(&settings).await?;
    let links_topology = match &settings.links_topology {
        Some(p) => {
            Some(Arc::new(Inventory::topology(p).map_err(|e| {
                ServeError::Config(ConfigError::Setting(e.to_string()))
            })?))
        }
        None => None,
    };
    let started_at = crate::clock::now_rfc3339();
    // Bound before the history is opened: the default history is named by the address bound.
    let (listener, local) = bind(settings.listen).await?;
    let coordination = crate::coordination::Settings {
        state_dir: settings.state_dir.clone(),
        lock_dir: None,
        database: settings.database.clone(),
    };
    let state_root = coordination.state_root();
    let cookbooks = match settings.current_in_repo {
        true => cookbooks,
        false => {
            let dir = crate::state::current_dir(&state_root, cookbooks.root());
            cookbooks.with_current(crate::store::local::CurrentAt::State(dir))
        }
    };
    if let Some(note) = cookbooks.repo_current_note() {
        tracing::warn!("{note}");
    }
    let cache = settings
        .cookbook_server
        .as_ref()
        .map(|c| crate::state::cookbook_cache_dir(&state_root, &c.api().base()));
    crate::state::check_state(&state_root, cookbooks.root(), cache.as_deref())?;
    let db = match &settings.db {
        Some(db) => db.clone(),
        None => crate::state::history_path(&state_root, cookbooks.root(), local),
    };
    let history = open_history(&settings, &db, &started_at).await?;
    let metrics = Arc::new(Metrics::default());
    let store: Arc<dyn NodeStore> = store.unwrap_or_else(|| Arc::new(cookbooks.clone()));
    let infra = crate::engine::Infra::open(store.clone(), cookbooks, connector, &coordination)
        .with_classifier(settings.classifier.clone())
        .with_intent(&inventory);
    let journal_dir = infra.coordination.journal().dir().to_owned();
    let sched = Scheduler::start(
        EngineCtx {
            infra,
            node_timeout: settings.node_timeout,
            state_root,
            cookbook_server: settings.cookbook_server.clone(),
            links_topology,
        },
        Arc::new(inventory),
        history.clone(),
        metrics.clone(),
        settings.concurrency,
        settings.max_queue,
    );
    let tls = settings.tls.as_ref();
    let tls = tls.map(|(c, k)| limits::tls_acceptor(c, k)).transpose()?;
    recover_at_start(&sched, &journal_dir).await;
    takeover::start(&sched, &history, &local.to_string(), &shutdown).await;
    let retention = Retention {
        runs: settings.retention,
        max_age: settings.retention_age,
    };
    start_retention(&history, retention, &shutdown).await;
    let hosts = sched.inventory().hosts.len();
    let state = Arc::new(AppState {
        settings: settings_json(&settings, &db, local, hosts, tls.is_some()),
        auth: settings.auth,
        sched: sched.clone(),
        history: history.clone(),
        metrics,
        store,
        max_body: settings.max_body_bytes,
        limits: settings.limits.clone(),
        streams: Arc::default(),
        started_at,
        plans: plans::Plans::default(),
        nautobot_webhook: settings.nautobot_webhook.clone(),
    });
    info!(
        listen = %local,
        tokens = state.auth.token_count(),
        chef_clients = state.auth.client_count(),
        hosts,
        "netgw serve started"
    );
    announce(local, tls.is_some());
    let server = tokio::spawn(limits::run(
        listener,
        router(state),
        settings.limits.clone(),
        tls,
        shutdown.clone(),
    ));
    shutdown.cancelled().await;
    let report = sched
        .shutdown(settings.shutdown_grace, settings.cancel_grace)
        .await;
    info!(?report, "runs drained");
    // Open requests (event streams of runs that just ended) get a moment to finish.
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(Err(e)) => warn!(error = %e, "the HTTP server task failed"),
        Ok(Ok(())) => {}
        Err(_) => warn!("open HTTP connections did not close within 5 s; dropping them"),
    }
    let h = history.clone();
    let _ = tokio::task::spawn_blocking(move || h.close()).await;
    Ok(report)
}

/// The listener on `addr`, and the address it got (the port, when `addr` asked for any).
async fn bind(
    addr: std::net::SocketAddr,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr), ServeError> {
    let bind_err = |source| ServeError::Bind { addr, source };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(bind_err)?;
    let local = listener.local_addr().map_err(bind_err)?;
    Ok((listener, local))
}

/// The line scripts wait for: where the gateway listens.
fn announce(local: std::net::SocketAddr, tls: bool) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let scheme = if tls { "https" } else { "http" };
    let _ = writeln!(out, "netgw serve: listening on {scheme}://{local}");
    let _ = out.flush();
}

/// The inventory `serve` runs on, read off the runtime, with the gateway's trust settings.
async fn load_inventory(settings: &Settings) -> Result<Inventory, ServeError> {
    let inv_path = settings.inventory.clone();
    let mut inventory = tokio::task::spawn_blocking(move || Inventory::load_any(&inv_path))
        .await
        .map_err(|e| ServeError::Runtime(e.to_string()))??;
    inventory.trust = settings.trust.clone();
    for w in &inventory.warnings {
        warn!(inventory = %settings.inventory.display(), "{w}");
    }
    if settings.nautobot_webhook.is_some() && inventory.results.is_none() {
        return Err(ServeError::Config(ConfigError::Setting(format!(
            "nautobot_webhook: the inventory {} is not a Nautobot one (nautobot+https://... or a \
             `nautobot:` file), so no webhook change could be mapped to its devices",
            settings.inventory.display()
        ))));
    }
    Ok(inventory)
}

/// SQLite (on a blocking thread) or PostgreSQL, as configured; runs left in flight are reported.
/// `db` is the SQLite file; when it is the default one in the state directory (no `--db`), its
/// directory is created (0700).
async fn open_history(
    settings: &Settings,
    db: &std::path::Path,
    started_at: &str,
) -> Result<Arc<History>, ServeError> {
    let (history, recovered) = match &settings.database {
        Some(url) => {
            let listen = settings.listen.to_string();
            History::open_postgres(
                url.clone(),
                settings.retention,
                started_at,
                &listen,
                settings.events_poll,
            )
            .await?
        }
        None => {
            let (db, retention, at) = (db.to_owned(), settings.retention, started_at.to_owned());
            let default = settings.db.is_none();
            tokio::task::spawn_blocking(move || {
                if let Some(dir) = db.parent().filter(|_| default) {
                    crate::rootdir::RootDir::open_or_create(dir).map_err(|e| {
                        ServeError::Runtime(format!(
                            "the state directory {} for the run history: {e} (set --state-dir or --db)",
                            dir.display()
                        ))
                    })?;
                }
                Ok::<_, ServeError>(History::open(&db, retention, &at)?)
            })
            .await
            .map_err(|e| ServeError::Runtime(e.to_string()))??
        }
    };
    if !recovered.interrupted.is_empty() {
        warn!(runs = ?recovered.interrupted, "runs in flight when the gateway last stopped are marked interrupted");
    }
    Ok(Arc::new(history))
}

/// How often serve applies retention by age after the start: hourly, or at a tenth of the age
/// kept when that is shorter (a test's seconds), never more than once a second.
fn retention_every(max_age: Duration) -> Duration {
    (max_age / 10).clamp(Duration::from_secs(1), Duration::from_secs(3600))
}

/// Retention ([`History::prune`]) at start, before the first request is served, then every
/// [`retention_every`] until shutdown. A failed prune (database down) is logged and tried again at the
/// next interval: nothing is lost by waiting.
async fn start_retention(history: &Arc<History>, r: Retention, shutdown: &CancellationToken) {
    async fn prune(h: &History, r: &Retention, every: Duration) {
        match h.prune(r, std::time::SystemTime::now()).await {
            Ok(()) => {
                tracing::debug!(runs = r.runs, max_age = ?r.max_age, "history retention applied")
            }
            Err(e) => {
                warn!(error = %e, "applying history retention failed; tried again in {every:?}")
            }
        }
    }
    let every = retention_every(r.max_age);
    prune(history, &r, every).await;
    let (h, stop) = (history.clone(), shutdown.clone());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                () = tokio::time::sleep(every) => prune(&h, &r, every).await,
            }
        }
    });
}

/// The effective settings `GET /v1/gateway` reports.
fn settings_json(
    settings: &Settings,
    db: &std::path::Path,
    local: std::net::SocketAddr,
    hosts: usize,
    tls: bool,
) -> Value {
    json!({
        "listen": local.to_string(),
        "db": settings.database.as_ref().map_or_else(|| db.display().to_string(), |u| u.to_string()),
        "repo": settings.repo.display().to_string(),
        "cookbooks": if settings.cookbook_server.is_some() { "server" } else { "repo" },
        "inventory": settings.inventory.display().to_string(),
        "inventory_hosts": hosts,
        "max_queue": settings.max_queue,
        "concurrency": settings.concurrency,
        "retention": settings.retention,
        "retention_days": settings.retention_age.as_secs_f64() / 86_400.0,
        "shutdown_grace_secs": settings.shutdown_grace.as_secs_f64(),
        "cancel_grace_secs": settings.cancel_grace.as_secs_f64(),
        "node_timeout_secs": settings.node_timeout.as_secs_f64(),
        "max_body_bytes": settings.max_body_bytes,
        "max_connections": settings.limits.max_connections,
        "max_connections_per_peer": settings.limits.max_connections_per_peer,
        "header_timeout_secs": settings.limits.header_timeout.as_secs_f64(),
        "body_timeout_secs": settings.limits.body_timeout.as_secs_f64(),
        "max_streams_per_identity": settings.limits.max_streams_per_identity,
        "tls": tls,
        "nautobot_webhook": settings.nautobot_webhook.is_some(),
    })
}

fn router(state: S) -> Router {
    let authed = Router::new()
        .route("/v1/converge", post(converge))
        .route("/v1/plans", get(plans::list_plans).post(plans::post_plan))
        .route("/v1/plans/{id}", get(plans::get_plan))
        .route("/v1/runs", get(list_runs))
        .route("/v1/runs/{id}", get(get_run))
        .route("/v1/runs/{id}/events", get(run_events))
        .route("/v1/nodes/{name}", get(get_node))
        .route("/v1/gateway", get(gateway))
        .route("/metrics", get(metrics_text))
        .route("/v1/openapi.json", get(openapi_doc))
        .route_layer(middleware::from_fn_with_state(state.clone(), authenticate));
    Router::new()
        .route("/healthz", get(healthz))
        // Signed by Nautobot, not by a token: checked by the handler itself.
        .route("/v1/webhooks/nautobot", post(webhook::nautobot))
        .merge(authed)
        .merge(ui::router(state.clone()))
        .fallback(|| async { HttpError::not_found("no such endpoint (see /v1/openapi.json)") })
        .with_state(state)
}

/// Authenticate from the headers and check the role the method needs; only then read the body
/// (bounded in size and time) and check what the signature says of it. An unauthenticated client
/// never gets a body byte read: the connection closes after the refusal.
async fn authenticate(State(s): State<S>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let too_large = || {
        HttpError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("request body larger than {} bytes", s.max_body),
        )
        .into_response()
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > s.max_body as u64) {
        return too_large();
    }
    let role = if parts.method == Method::GET || parts.method == Method::HEAD {
        Role::Read
    } else {
        Role::Trigger
    };
    let head = HeaderParts {
        method: parts.method.as_str(),
        path: parts.uri.path(),
        headers: &parts.headers,
        now: auth::now_secs(),
    };
    let (id, body_check) = match s.auth.check_headers(&head, role) {
        Ok(v) => v,
        Err(f) => return refused(&s, f, true),
    };
    let bytes = match tokio::time::timeout(
        s.limits.body_timeout,
        axum::body::to_bytes(body, s.max_body),
    )
    .await
    {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => return too_large(),
        Err(_) => {
            let mut r = HttpError::new(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                format!(
                    "the request body did not arrive within {} s",
                    s.limits.body_timeout.as_secs_f64()
                ),
            )
            .into_response();
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
    };
    if let Err(f) = s.auth.check_body(&body_check, &bytes) {
        return refused(&s, f, false);
    }
    if let Err(r) = claim_once(&s, &body_check).await {
        return r;
    }
    if let Some(conn) = parts.extensions.get::<limits::ConnAuth>() {
        conn.mark();
    }
    parts.extensions.insert(id);
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// A signed request is accepted once by every gateway on the history database, across restarts: the
/// in-process cache stops a replay to this process cheaply, the history stops the rest. When the
/// history cannot say, the request is refused (503): a signature is never accepted unchecked.
async fn claim_once(s: &AppState, check: &auth::BodyCheck) -> Result<(), Response> {
    let Some((digest, expires)) = check.replay_key() else {
        return Ok(());
    };
    let claimant = auth::random_id();
    match s
        .history
        .claim_signature(&digest, expires, &claimant, auth::now_secs())
        .await
    {
        Ok(true) => Ok(()),
        Ok(false) => Err(refused(s, AuthFailure::Invalid(auth::REPLAYED), false)),
        Err(e) => {
            warn!(error = %e, "cannot check a signed request against replays");
            Err(HttpError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "history_unavailable",
                "the run history cannot be reached to check this signed request against replays; retry later",
            )
            .into_response())
        }
    }
}

/// The answer to a refused request, counted. `close`: the body was not read, so the connection
/// cannot carry another request (and a client that sent one is not owed a read of it).
fn refused(s: &AppState, f: AuthFailure, close: bool) -> Response {
    s.metrics.auth_failure(match f {
        AuthFailure::Missing => "missing",
        AuthFailure::Invalid(_) => "invalid",
        AuthFailure::ChefNotConfigured => "not_configured",
        AuthFailure::Forbidden { .. } => "forbidden",
    });
    let mut r = HttpError::from(f).into_response();
    if close {
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    r
}

async fn healthz(State(s): State<S>) -> Json<Value> {
    let status = if s.sched.is_stopping() {
        "stopping"
    } else {
        "ok"
    };
    Json(json!({"status": status}))
}

/// `POST /v1/converge` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConvergeRequest {
    nodes: Option<Vec<String>>,
    group: Option<String>,
    /// A selection in Ansible's --limit language (`crate::inventory::select`), as AWX's `limit`.
    limit: Option<String>,
    topology: Option<String>,
    search: Option<String>,
    #[serde(default)]
    why_run: bool,
    /// One all-or-nothing transaction over the selected nodes (`crate::atomic`).
    #[serde(default)]
    atomic: bool,
    /// With `atomic`: compare LLDP with the configured `links_topology` between verify and confirm.
    #[serde(default)]
    check_links: bool,
    /// Apply exactly this plan kept by `POST /v1/plans` (`plans`), instead of a selection.
    plan_id: Option<String>,
    /// Apply exactly this plan (a plan file's JSON), instead of a selection.
    plan: Option<Value>,
}

fn parse_request(body: &[u8]) -> Result<ConvergeRequest, HttpError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let req: ConvergeRequest = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." || path.is_empty() {
            HttpError::bad_request(format!("invalid request body: {inner}"))
        } else {
            HttpError::bad_request(format!("invalid request body: field `{path}`: {inner}"))
        }
    })?;
    de.end()
        .map_err(|e| HttpError::bad_request(format!("invalid request body: {e}")))?;
    Ok(req)
}

/// How long a Chef search for a trigger may take before the trigger is refused.
const SEARCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The nodes a request selects: validated, in the inventory, each once, in request order; and, for a
/// search, the nodes it found that the inventory cannot reach (reported, not run).
async fn select_nodes(
    inv: &Inventory,
    store: &dyn NodeStore,
    req: &ConvergeRequest,
) -> Result<(Vec<String>, Vec<String>), HttpError> {
    let given = [
        req.nodes.is_some(),
        req.group.is_some(),
        req.limit.is_some(),
        req.topology.is_some(),
        req.search.is_some(),
    ]
    .iter()
    .filter(|b| **b)
    .count();
    if given != 1 {
        return Err(HttpError::bad_request(format!(
            "give exactly one selection of `nodes`, `group`, `limit`, `topology`, `search` (found {given})"
        )));
    }
    let mut out: Vec<String> = Vec::new();
    let mut unreachable: Vec<String> = Vec::new();
    if let Some(nodes) = &req.nodes {
        if nodes.is_empty() {
            return Err(HttpError::bad_request("`nodes` must not be empty"));
        }
        for (i, n) in nodes.iter().enumerate() {
            NodeName::new(n).map_err(|e| HttpError::bad_request(format!("nodes[{i}]: {e}")))?;
            if !inv.hosts.contains_key(n) {
                return Err(HttpError::bad_request(format!(
                    "nodes[{i}]: node {n:?} is not in the inventory"
                )));
            }
            if !out.contains(n) {
                out.push(n.clone());
            }
        }
    }
    if let Some(g) = &req.group {
        out = inv.in_group(g);
        if out.is_empty() {
            return Err(HttpError::bad_request(if inv.groups.contains_key(g) {
                format!("group {g:?} has no hosts")
            } else {
                format!("group {g:?} is not defined in the inventory")
            }));
        }
    }
    if let Some(limit) = &req.limit {
        out = crate::inventory::select::select(inv, std::slice::from_ref(limit))
            .map_err(|e| HttpError::bad_request(format!("limit: {e}")))?;
    }
    if let Some(t) = &req.topology {
        out = inv.in_topology(t);
        if out.is_empty() {
            let known = inv.topologies();
            return Err(if known.is_empty() {
                HttpError::new(
                    StatusCode::BAD_REQUEST,
                    "not_configured",
                    format!(
                        "selection by containerlab topology: the inventory {} names no containerlab lab (serve a .clab.yml, containerlab's topology-data.json or a netgw-lab inventory, or set data.containerlab.topology); use `nodes` or `group`",
                        inv.source.display()
                    ),
                )
            } else {
                HttpError::bad_request(format!(
                    "topology {t:?} has no node in the inventory (its labs: {})",
                    known.join(", ")
                ))
            });
        }
    }
    if let Some(q) = &req.search {
        let found = search(store, q).await?;
        for n in found {
            if inv.hosts.contains_key(&n) {
                if !out.contains(&n) {
                    out.push(n);
                }
            } else if !unreachable.contains(&n) {
                unreachable.push(n);
            }
        }
        if out.is_empty() {
            return Err(HttpError::bad_request(if unreachable.is_empty() {
                format!("search {q:?} found no node")
            } else {
                format!(
                    "search {q:?} found {} node(s), none in the inventory: {}",
                    unreachable.len(),
                    unreachable.join(", ")
                )
            }));
        }
    }
    Ok((out, unreachable))
}

/// The node names a Chef search finds, bounded by `SEARCH_TIMEOUT`.
async fn search(store: &dyn NodeStore, q: &str) -> Result<Vec<String>, HttpError> {
    if q.trim().is_empty() || q.len() > 4096 || q.chars().any(char::is_control) {
        return Err(HttpError::bad_request(
            "`search` must be a Chef search query of at most 4096 characters without control characters",
        ));
    }
    match tokio::time::timeout(SEARCH_TIMEOUT, store.search_nodes(q)).await {
        Err(_) => Err(HttpError::new(
            StatusCode::BAD_GATEWAY,
            "search_failed",
            format!(
                "search {q:?}: no answer from the Chef server within {} s",
                SEARCH_TIMEOUT.as_secs()
            ),
        )),
        Ok(Err(e)) => Err(HttpError::new(
            StatusCode::BAD_GATEWAY,
            "search_failed",
            format!("search {q:?}: {e}"),
        )),
        Ok(Ok(None)) => Err(HttpError::new(
            StatusCode::BAD_REQUEST,
            "not_configured",
            "selection by Chef search needs a Chef server (`netgw --server URL ... serve`); this gateway reads a local repo, which has no search index; use `nodes` or `group`",
        )),
        Ok(Ok(Some(names))) => Ok(names),
    }
}

async fn converge(
    State(s): State<S>,
    Extension(id): Extension<Identity>,
    body: Bytes,
) -> Result<(StatusCode, Json<scheduler::Accepted>), HttpError> {
    let parsed = match parse_request(&body) {
        Ok(req) if req.plan.is_some() || req.plan_id.is_some() => {
            let r = plans::converge_plan(&s, &id, req).await;
            if r.is_err() {
                s.metrics.trigger("invalid");
            }
            return r;
        }
        Ok(req) => select_nodes(s.sched.inventory(), s.sched.store().as_ref(), &req)
            .await
            .map(|(nodes, skipped)| (nodes, skipped, req.why_run, req.atomic, req.check_links)),
        Err(e) => Err(e),
    };
    let parsed = parsed.and_then(|p| match p {
        (_, _, _, false, true) => Err(HttpError::bad_request(
            "`check_links` needs `atomic`: true (the check runs inside the transaction)",
        )),
        (_, _, _, _, true) if !s.sched.can_check_links() => Err(HttpError::bad_request(
            "`check_links`: no `links_topology` in the serve configuration to compare with",
        )),
        p => Ok(p),
    });
    let (nodes, not_in_inventory, why_run, atomic, check_links) = match parsed {
        Ok(v) => v,
        Err(e) => {
            s.metrics.trigger("invalid");
            return Err(e);
        }
    };
    let submitted = if atomic {
        s.sched
            .submit_atomic(&nodes, why_run, check_links, &id.label())
    } else {
        s.sched.trigger(&nodes, why_run, &id.label()).await
    };
    if submitted.is_ok() && s.history.is_shared() {
        // The 202 promises the trigger survives this gateway: its queue rows are committed first.
        s.history.flush().await;
    }
    match submitted {
        Ok(a) => Ok((
            StatusCode::ACCEPTED,
            Json(scheduler::Accepted {
                not_in_inventory,
                ..a
            }),
        )),
        Err(e) => Err(submit_problem(e)),
    }
}

/// A trigger the scheduler did not take, as the API answers it.
fn submit_problem(e: SubmitError) -> HttpError {
    match e {
        e @ SubmitError::QueueFull {
            retry_after_secs, ..
        } => HttpError {
            retry_after: Some(retry_after_secs),
            ..HttpError::new(StatusCode::TOO_MANY_REQUESTS, "queue_full", e.to_string())
        },
        e @ SubmitError::ShuttingDown => HttpError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            e.to_string(),
        ),
        e @ SubmitError::Database(_) => HttpError {
            retry_after: Some(5),
            ..HttpError::new(StatusCode::SERVICE_UNAVAILABLE, "database", e.to_string())
        },
        e @ SubmitError::Busy { .. } => HttpError::new(StatusCode::CONFLICT, "busy", e.to_string()),
    }
}

fn check_run_id(id: &str) -> Result<(), HttpError> {
    if id.is_empty()
        || id.len() > 128
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(HttpError::bad_request(
            "invalid run id: expected up to 128 characters of [A-Za-z0-9_-]",
        ));
    }
    Ok(())
}

fn view_from_row(r: RunRow, with_report: bool) -> RunView {
    let done: Vec<&str> = r
        .results
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    let pending = if with_report {
        r.nodes
            .iter()
            .filter(|n| !done.contains(&n.as_str()))
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    let summary = r
        .summary
        .clone()
        .unwrap_or_else(|| scheduler::summarize_values(&r.results));
    RunView {
        report: with_report.then(|| {
            scheduler::report_json(
                &r.id,
                r.why_run,
                r.started_at.as_deref(),
                r.duration_secs.unwrap_or(0.0),
                r.results.clone(),
            )
        }),
        run_id: r.id,
        status: r.status,
        why_run: r.why_run,
        requested_by: r.requested_by,
        created_at: r.created_at,
        started_at: r.started_at,
        finished_at: r.finished_at,
        nodes: r.nodes,
        pending,
        triggers: r.triggers,
        note: r.note,
        summary,
    }
}

async fn find_run(s: &AppState, id: &str) -> Result<RunView, HttpError> {
    check_run_id(id)?;
    if let Some(v) = s.sched.live_view(id, true) {
        return Ok(v);
    }
    match s.history.run(id.to_owned()).await {
        Ok(Some(r)) => Ok(view_from_row(r, true)),
        Ok(None) => Err(HttpError::not_found(format!(
            "run {id:?} not found (runs beyond the retention limit are forgotten)"
        ))),
        Err(e) => Err(HttpError::internal(e)),
    }
}

async fn get_run(State(s): State<S>, Path(id): Path<String>) -> Result<Json<RunView>, HttpError> {
    find_run(&s, &id).await.map(Json)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    node: Option<String>,
    status: Option<String>,
    limit: Option<usize>,
}

async fn list_runs(
    State(s): State<S>,
    q: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, HttpError> {
    let Query(q) = q.map_err(|e| HttpError::bad_request(e.body_text()))?;
    if let Some(n) = &q.node {
        NodeName::new(n).map_err(|e| HttpError::bad_request(format!("node: {e}")))?;
    }
    if let Some(st) = &q.status
        && !RunStatus::ALL.iter().any(|s| s.as_str() == st)
    {
        let names: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
        return Err(HttpError::bad_request(format!(
            "status must be one of {}",
            names.join(", ")
        )));
    }
    let limit = q.limit.unwrap_or(50);
    if !(1..=1000).contains(&limit) {
        return Err(HttpError::bad_request("limit must be between 1 and 1000"));
    }
    let mut runs: Vec<RunView> = s
        .sched
        .live_runs(q.node.as_deref())
        .into_iter()
        .filter(|r| q.status.as_ref().is_none_or(|st| &r.status == st))
        .collect();
    let rows = s
        .history
        .list(q.node.clone(), q.status.clone(), limit)
        .await
        .map_err(HttpError::internal)?;
    for r in rows {
        if !runs.iter().any(|l| l.run_id == r.id) {
            runs.push(view_from_row(r, false));
        }
    }
    runs.truncate(limit);
    Ok(Json(json!({ "runs": runs })))
}

/// Facts worth showing from a node's automatic attributes.
fn facts_summary(automatic: &serde_json::Map<String, Value>) -> Value {
    let mut out = serde_json::Map::new();
    for k in [
        "hostname",
        "fqdn",
        "vendor",
        "platform",
        "platform_version",
        "model",
        "serial",
        "uptime",
        "ohai_time",
    ] {
        if let Some(v) = automatic.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    for k in ["interfaces", "vlans", "lldp"] {
        let n = match automatic.get(k) {
            Some(Value::Object(m)) => m.len(),
            Some(Value::Array(a)) => a.len(),
            _ => continue,
        };
        out.insert(format!("{k}_count"), n.into());
    }
    Value::Object(out)
}

async fn get_node(State(s): State<S>, Path(name): Path<String>) -> Result<Json<Value>, HttpError> {
    let node = NodeName::new(&name).map_err(|e| HttpError::bad_request(e.to_string()))?;
    let in_inventory = s.sched.inventory().hosts.contains_key(&name);
    let (running, queued) = s.sched.node_state(&name);
    // A run in memory may hold this node's result before the history has committed it (a run is
    // forgotten only once its writes are): wait for the queued writes, so the node is never shown
    // behind the run that already reads as ended.
    let unwritten = s
        .sched
        .live_runs(Some(&name))
        .iter()
        .any(|r| !r.pending.contains(&name));
    if unwritten {
        s.history.flush().await;
    }
    let last = s
        .history
        .last_result(name.clone())
        .await
        .map_err(HttpError::internal)?;
    if !in_inventory && last.is_none() {
        return Err(HttpError::not_found(format!(
            "node {name:?} is not in the inventory and has no history"
        )));
    }
    let facts = match s.store.load_current(&node).await {
        Ok(Some(c)) => facts_summary(&c.automatic),
        Ok(None) => Value::Null,
        Err(e) => {
            warn!(node = %name, error = %e, "reading current state");
            Value::Null
        }
    };
    // Where the inventory says the device is, known before any run has saved facts.
    let device = s
        .sched
        .inventory()
        .target(&name)
        .ok()
        .map(|t| json!({"platform": t.platform.as_str(), "host": t.host, "port": t.port}));
    Ok(Json(json!({
        "name": name,
        "in_inventory": in_inventory,
        "device": device,
        "running_run": running,
        "queued_runs": queued,
        "last_result": last.map(|(run_id, finished_at, report)| json!({
            "run_id": run_id, "finished_at": finished_at, "report": report
        })),
        "facts": facts,
    })))
}

async fn gateway(State(s): State<S>) -> Result<Json<Value>, HttpError> {
    let log = s
        .history
        .gateway_log(50)
        .await
        .map_err(HttpError::internal)?;
    let gateways = s.history.gateways().await.map_err(HttpError::internal)?;
    let mut body = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "started_at": s.started_at,
        "settings": s.settings,
        "log": log,
    });
    if let Some(g) = gateways {
        body["gateways"] = g.into();
    }
    Ok(Json(body))
}

async fn metrics_text(State(s): State<S>) -> Response {
    let mut text = s.metrics.render(s.sched.gauges());
    if let Some(g) = s.history.shared_gauges().await {
        metrics::render_shared(&mut text, &g);
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        text,
    )
        .into_response()
}

async fn openapi_doc() -> Json<Value> {
    Json(openapi::document())
}

/// An event stream subscriber's position.
struct Sub {
    state: S,
    id: String,
    next: u64,
    buf: VecDeque<(u64, Arc<str>)>,
    done: bool,
    /// This stream's place among its identity's (`max_streams_per_identity`); freed with the stream.
    _slot: limits::Slot<String>,
}

fn sse_event(seq: u64, text: &str) -> Event {
    let name = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v["event"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "message".into());
    Event::default().id(seq.to_string()).event(name).data(text)
}

/// A place among `who`'s open event streams (`max_streams_per_identity`), freed with the stream.
fn stream_slot(s: &AppState, who: &Identity) -> Result<limits::Slot<String>, HttpError> {
    let max = s.limits.max_streams_per_identity;
    s.streams.take(who.label(), max).ok_or_else(|| HttpError {
        retry_after: Some(1),
        ..HttpError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_streams",
            format!(
                "{} has {max} event streams open already (max_streams_per_identity); close one first",
                who.label()
            ),
        )
    })
}

async fn run_events(
    State(s): State<S>,
    Extension(who): Extension<Identity>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    find_run(&s, &id).await?;
    let slot = stream_slot(&s, &who)?;
    let next = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|n| n + 1)
        .unwrap_or(0);
    let sub = Sub {
        state: s,
        id,
        next,
        buf: VecDeque::new(),
        done: false,
        _slot: slot,
    };
    let stream = futures::stream::unfold(sub, |mut sub| async move {
        loop {
            if let Some((seq, text)) = sub.buf.pop_front() {
                sub.next = seq + 1;
                return Some((Ok::<Event, Infallible>(sse_event(seq, &text)), sub));
            }
            if sub.done {
                return None;
            }
            match sub.state.sched.events_since(&sub.id, sub.next) {
                Snapshot::Live {
                    events,
                    ended,
                    mut rx,
                } => {
                    if !events.is_empty() {
                        sub.buf.extend(events);
                        sub.done = ended;
                        continue;
                    }
                    if ended {
                        return None;
                    }
                    // Err: the run left memory; the next turn reads the rest from the history.
                    let _ = rx.changed().await;
                }
                Snapshot::Gone => {
                    // Subscribed before reading: an event committed after the read wakes us.
                    let mut follow = sub.state.history.follow();
                    // Status before events: a run seen final has all its events committed already.
                    let in_flight = sub.state.history.is_shared()
                        && remote_run_in_flight(&sub.state, &sub.id).await;
                    let after = sub.next.checked_sub(1);
                    let rest = sub
                        .state
                        .history
                        .events(sub.id.clone(), after)
                        .await
                        .unwrap_or_default();
                    if in_flight && rest.is_empty() {
                        // Another gateway runs it: its writer's NOTIFY wakes us; a poll is the
                        // fallback (`events_poll_secs`, 1 s while the listener is down).
                        match follow.as_mut() {
                            Some(f) => f.wait(&sub.id).await,
                            None => tokio::time::sleep(Duration::from_millis(500)).await,
                        }
                    }
                    sub.buf
                        .extend(rest.into_iter().map(|(s, t)| (s, Arc::<str>::from(t))));
                    sub.done = !in_flight;
                }
            }
        }
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
}

/// A run not in this gateway's memory, in a shared history: whether another gateway still runs it
/// (a run whose gateway dies is marked interrupted by the others' sweep, so a follower's stream ends).
async fn remote_run_in_flight(s: &AppState, id: &str) -> bool {
    match s.history.run(id.to_owned()).await {
        Ok(Some(r)) => matches!(r.status.as_str(), "queued" | "running"),
        Ok(None) => false,
        Err(e) => {
            warn!(run = %id, error = %e, "following a run of another gateway");
            true
        }
    }
}

/// Nodes a dead gateway left with an unfinished change (`crate::journal`) get a why-run at once: its
/// first step recovers them (restores a half-applied device), before any trigger arrives.
async fn recover_at_start(sched: &Scheduler, journal_dir: &std::path::Path) {
    let dir = journal_dir.to_owned();
    let found = tokio::task::spawn_blocking(move || crate::journal::unfinished(&dir))
        .await
        .unwrap_or_default();
    let (known, unknown): (Vec<String>, Vec<String>) = found
        .into_iter()
        .partition(|n| sched.inventory().hosts.contains_key(n));
    if !unknown.is_empty() {
        warn!(nodes = ?unknown, "unfinished changes of nodes the inventory lacks; not recovered");
    }
    if known.is_empty() {
        return;
    }
    match sched
        .trigger(&known, true, "netgw (recovery at start)")
        .await
    {
        Ok(a) => {
            info!(nodes = ?known, run = %a.run_id, "recovering unfinished changes left by a dead gateway")
        }
        Err(e) => warn!(error = %e, "could not queue the recovery of unfinished changes"),
    }
}
