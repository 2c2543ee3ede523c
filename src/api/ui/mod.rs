//! The status page of `netgw serve` (docs/serve.md, "Status page"): server-rendered HTML under
//! `/ui/`, assets compiled into the binary, no build step, no CDN.
//!
//! ```text
//!   GET /ui/login ── form ── POST /ui/login (token) ─▶ Auth::check_headers, as the API ─▶ cookie
//!   cookie (HttpOnly, SameSite=Strict, Secure over TLS) ─▶ ui_auth: the token checked again on every
//!       request, the role by method (GET read, POST trigger), as the API ─▶ pages / actions
//!   POST actions: the per-session CSRF token in the form ─▶ the API's own handler (converge)
//!   live updates: app.js ─▶ /ui/runs/{id}/events, the API's event stream behind the cookie
//!                 app.js ─▶ /ui/runs/events (runs created and ended: Scheduler::subscribe_runs)
//!                        ─▶ /ui/runs/{id}/row, the row rendered here, inserted or replaced
//! ```
//! Every value in a page goes through maud's escaping: a device's error text, a diff, a fact.

mod pages;
pub mod topology;

use super::auth::{AuthFailure, HeaderParts, Identity, Role, random_id};
use super::{HttpError, S};
use crate::history::{CheckOrigin, StoredLinkCheck};
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use netgw_models::topology::Topology;
use serde_json::json;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tracing::warn;

const COOKIE: &str = "netgw_session";
/// How long a link check from the topology page may take per device.
const LINK_CHECK_TIMEOUT: Duration = Duration::from_secs(30);
/// Devices a link check reads at once.
const LINK_CHECK_CONCURRENCY: usize = 8;

/// What the status page keeps beside the API's state.
pub(super) struct Ui {
    secure_cookie: bool,
    topology: tokio::sync::OnceCell<Result<Arc<Topology>, TopologyError>>,
    /// Signed-in sessions by their random id (the cookie's value): the token never leaves the
    /// process; signing out, the idle limit or the age limit ends a session for good.
    sessions: std::sync::Mutex<HashMap<String, SessionEntry>>,
    /// Failed sign-ins per client address, for the back-off.
    failures: std::sync::Mutex<HashMap<std::net::IpAddr, Failures>>,
}

/// A session ends after this long without a request...
const SESSION_IDLE: Duration = Duration::from_secs(30 * 60);
/// ...and this long after sign-in, whatever.
const SESSION_MAX: Duration = Duration::from_secs(12 * 3600);
/// Sessions (and addresses with failed sign-ins) kept at most: the oldest go first.
const MAX_ENTRIES: usize = 10_000;
/// Failed sign-ins from one address before each further attempt waits.
const FREE_FAILURES: u32 = 5;
/// The longest wait between sign-in attempts from one address.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// The cookie that ties a sign-in form to the browser that loaded it (login CSRF).
const LOGIN_COOKIE: &str = "netgw_login";

struct SessionEntry {
    token: String,
    csrf: String,
    created: std::time::Instant,
    used: std::time::Instant,
}

struct Failures {
    count: u32,
    /// No attempt is checked before this.
    until: std::time::Instant,
}

/// The client's address, set per connection by `limits::serve_conn`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientAddr(pub std::net::IpAddr);

/// A signed-in request: who, and the CSRF token its forms carry.
#[derive(Clone)]
pub(super) struct Session {
    identity: Identity,
    csrf: String,
    /// The session's id (what signing out ends).
    id: String,
}

impl Session {
    fn can_trigger(&self) -> bool {
        self.identity.roles.contains(&Role::Trigger)
    }
}

/// The `/ui` routes, merged into the API's router.
pub(super) fn router(state: S) -> Router<S> {
    let ui = Arc::new(Ui {
        secure_cookie: state.settings["tls"].as_bool().unwrap_or(false),
        topology: tokio::sync::OnceCell::new(),
        sessions: std::sync::Mutex::default(),
        failures: std::sync::Mutex::default(),
    });
    let signed_in = Router::new()
        .route("/ui/runs", get(pages::runs))
        .route("/ui/runs/events", get(runs_events))
        .route("/ui/runs/{id}", get(pages::run))
        .route("/ui/runs/{id}/row", get(pages::run_row_fragment))
        .route("/ui/runs/{id}/report", get(pages::run_report))
        .route("/ui/runs/{id}/events", get(run_events))
        .route("/ui/nodes", get(pages::nodes))
        .route("/ui/nodes/{name}", get(pages::node))
        .route("/ui/nodes/{name}/converge", post(trigger))
        .route("/ui/plans", get(pages::plans))
        .route("/ui/plans/{id}", get(pages::plan))
        .route("/ui/plans/{id}/apply", post(apply_plan))
        .route("/ui/topology", get(pages::topology))
        .route("/ui/topology/links", post(check_links))
        .route("/ui/logout", post(logout))
        .route_layer(middleware::from_fn_with_state(state.clone(), ui_auth));
    Router::new()
        .route("/ui", get(|| async { see_other("/ui/runs") }))
        .route("/ui/", get(|| async { see_other("/ui/runs") }))
        .route("/ui/login", get(login_form).post(login))
        .route("/ui/assets/app.css", get(css))
        .route("/ui/assets/app.js", get(js))
        .merge(signed_in)
        .layer(Extension(ui))
}

fn see_other(to: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(
            header::LOCATION,
            HeaderValue::from_str(to).unwrap_or(HeaderValue::from_static("/ui/runs")),
        )],
    )
        .into_response()
}

async fn css() -> Response {
    asset("text/css; charset=utf-8", include_str!("assets/app.css"))
}

async fn js() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        include_str!("assets/app.js"),
    )
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(kind)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=300"),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        body,
    )
        .into_response()
}

/// The value of cookie `name`.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

/// `Set-Cookie` for `name` (HttpOnly, SameSite=Strict, under /ui, Secure over TLS); `None` clears it.
fn set_cookie(ui: &Ui, name: &str, value: Option<&str>) -> HeaderValue {
    let secure = if ui.secure_cookie { "; Secure" } else { "" };
    let text = match value {
        Some(v) => format!("{name}={v}; Path=/ui; HttpOnly; SameSite=Strict{secure}"),
        None => format!("{name}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    };
    HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static(""))
}

impl Ui {
    /// A new session for `token`: its id (the cookie's value).
    fn open_session(&self, token: &str) -> String {
        let id = random_id();
        let now = std::time::Instant::now();
        let mut m = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|_, e| live(e, now));
        if m.len() >= MAX_ENTRIES
            && let Some(oldest) = m.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone())
        {
            m.remove(&oldest);
        }
        let entry = SessionEntry {
            token: token.to_owned(),
            csrf: random_id(),
            created: now,
            used: now,
        };
        m.insert(id.clone(), entry);
        id
    }

    /// The token and CSRF token of a live session, its idle clock restarted; an ended one is removed.
    fn session(&self, id: &str) -> Option<(String, String)> {
        let now = std::time::Instant::now();
        let mut m = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        match m.get_mut(id) {
            Some(e) if live(e, now) => {
                e.used = now;
                Some((e.token.clone(), e.csrf.clone()))
            }
            Some(_) => {
                m.remove(id);
                None
            }
            None => None,
        }
    }

    fn close_session(&self, id: &str) {
        let mut m = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        m.remove(id);
    }

    /// How long `addr` must still wait before its next sign-in attempt is checked.
    fn backoff(&self, addr: std::net::IpAddr) -> Option<Duration> {
        let m = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let wait = m
            .get(&addr)?
            .until
            .checked_duration_since(std::time::Instant::now())?;
        (!wait.is_zero()).then_some(wait)
    }

    /// A failed sign-in from `addr`: after [`FREE_FAILURES`], each next one waits twice as long
    /// (1 s, 2 s, 4 s, ... up to [`MAX_BACKOFF`]).
    fn failed(&self, addr: std::net::IpAddr) {
        let now = std::time::Instant::now();
        let mut m = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() >= MAX_ENTRIES && !m.contains_key(&addr) {
            m.retain(|_, f| f.until > now);
        }
        if m.len() >= MAX_ENTRIES {
            return;
        }
        let f = m.entry(addr).or_insert(Failures {
            count: 0,
            until: now,
        });
        f.count += 1;
        if f.count >= FREE_FAILURES {
            let exp = (f.count - FREE_FAILURES).min(16);
            f.until = now + Duration::from_secs(1u64 << exp).min(MAX_BACKOFF);
        }
    }

    fn succeeded(&self, addr: std::net::IpAddr) {
        let mut m = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        m.remove(&addr);
    }
}

fn live(e: &SessionEntry, now: std::time::Instant) -> bool {
    now.duration_since(e.used) < SESSION_IDLE && now.duration_since(e.created) < SESSION_MAX
}

/// The sign-in form, tied to this browser by a fresh random value in a cookie and in the form: a
/// form posted from another site carries the field but not the cookie (SameSite=Strict), so it is
/// refused (login CSRF: signing a victim in under the attacker's token).
fn login_response(ui: &Ui, status: StatusCode, error: Option<&str>) -> Response {
    let nonce = random_id();
    let mut r = pages::login_page(status, error, &nonce);
    let h = r.headers_mut();
    h.append(
        header::SET_COOKIE,
        set_cookie(ui, LOGIN_COOKIE, Some(&nonce)),
    );
    r
}

async fn login_form(Extension(ui): Extension<Arc<Ui>>) -> Response {
    login_response(&ui, StatusCode::OK, None)
}

/// The token checked exactly as the API checks a bearer token, for `role`.
fn check_token(
    s: &S,
    token: &str,
    method: &Method,
    path: &str,
    role: Role,
) -> Result<Identity, AuthFailure> {
    let mut headers = HeaderMap::new();
    let value = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| AuthFailure::Invalid("the token has characters no header can carry"))?;
    headers.insert(header::AUTHORIZATION, value);
    let head = HeaderParts {
        method: method.as_str(),
        path,
        headers: &headers,
        now: super::auth::now_secs(),
    };
    s.auth.check_headers(&head, role).map(|(id, _)| id)
}

fn count_failure(s: &S, f: &AuthFailure) {
    s.metrics.auth_failure(match f {
        AuthFailure::Missing => "missing",
        AuthFailure::Invalid(_) => "invalid",
        AuthFailure::ChefNotConfigured => "not_configured",
        AuthFailure::Forbidden { .. } => "forbidden",
    });
}

/// Every signed-in route: the cookie's token is checked on each request with the role the method
/// needs (GET: read; POST: trigger, but signing out needs only a session).
async fn ui_auth(
    State(s): State<S>,
    Extension(ui): Extension<Arc<Ui>>,
    mut req: Request,
    next: Next,
) -> Response {
    let Some(id) = cookie(req.headers(), COOKIE) else {
        return see_other("/ui/login");
    };
    let Some((token, csrf)) = ui.session(&id) else {
        let mut r = login_response(
            &ui,
            StatusCode::UNAUTHORIZED,
            Some("The session has ended (signed out, or idle or old too long): sign in again."),
        );
        r.headers_mut()
            .append(header::SET_COOKIE, set_cookie(&ui, COOKIE, None));
        return r;
    };
    let role = if req.method() == Method::GET || req.uri().path() == "/ui/logout" {
        Role::Read
    } else {
        Role::Trigger
    };
    let path = req.uri().path().to_owned();
    match check_token(&s, &token, req.method(), &path, role) {
        Ok(identity) => {
            if let Some(conn) = req.extensions().get::<super::limits::ConnAuth>() {
                conn.mark();
            }
            req.extensions_mut().insert(Session { identity, csrf, id });
            pages::secure_headers(next.run(req).await)
        }
        Err(f @ AuthFailure::Forbidden { .. }) => {
            count_failure(&s, &f);
            pages::problem(StatusCode::FORBIDDEN, "Not allowed", &f.to_string())
        }
        Err(f) => {
            count_failure(&s, &f);
            ui.close_session(&id);
            let mut r = login_response(
                &ui,
                StatusCode::UNAUTHORIZED,
                Some("The session's token is no longer accepted: sign in again."),
            );
            r.headers_mut()
                .append(header::SET_COOKIE, set_cookie(&ui, COOKIE, None));
            r
        }
    }
}

/// A refused form: the page saying why.
struct Refused(StatusCode, &'static str, String);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        pages::problem(self.0, self.1, &self.2)
    }
}

/// A form body, bounded in size and time as the API bounds its bodies.
async fn read_form(s: &S, body: Body) -> Result<HashMap<String, String>, Refused> {
    let bytes = match tokio::time::timeout(
        s.limits.body_timeout,
        axum::body::to_bytes(body, s.max_body),
    )
    .await
    {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => {
            return Err(Refused(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Form too large",
                format!("a form is at most {} bytes", s.max_body),
            ));
        }
        Err(_) => {
            return Err(Refused(
                StatusCode::REQUEST_TIMEOUT,
                "Form too slow",
                "the form did not arrive in time".into(),
            ));
        }
    };
    Ok(form_urlencoded::parse(&bytes).into_owned().collect())
}

/// Equal, compared in constant time.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The form's CSRF token is the session's (compared in constant time).
fn csrf_ok(sess: &Session, form: &HashMap<String, String>) -> Result<(), Refused> {
    let given = form.get("csrf").map(String::as_bytes).unwrap_or_default();
    if same_bytes(given, sess.csrf.as_bytes()) {
        Ok(())
    } else {
        Err(Refused(
            StatusCode::FORBIDDEN,
            "Form refused",
            "the form's CSRF token is missing or not this session's: reload the page and try again"
                .into(),
        ))
    }
}

/// A signed-in form: read, and its CSRF token checked.
async fn session_form(
    s: &S,
    sess: &Session,
    body: Body,
) -> Result<HashMap<String, String>, Refused> {
    let form = read_form(s, body).await?;
    csrf_ok(sess, &form)?;
    Ok(form)
}

async fn login(
    State(s): State<S>,
    Extension(ui): Extension<Arc<Ui>>,
    addr: Option<Extension<ClientAddr>>,
    method: Method,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let addr = addr.map_or(std::net::IpAddr::from([0, 0, 0, 0]), |a| a.0.0);
    if let Some(wait) = ui.backoff(addr) {
        let secs = wait.as_secs().max(1);
        let mut r = login_response(
            &ui,
            StatusCode::TOO_MANY_REQUESTS,
            Some(&format!(
                "Too many failed sign-ins from this address: try again in {secs} s."
            )),
        );
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return r;
    }
    let form = match read_form(&s, body).await {
        Ok(f) => f,
        Err(r) => return r.into_response(),
    };
    let nonce = cookie(&headers, LOGIN_COOKIE).unwrap_or_default();
    let given = form.get("login").map(String::as_str).unwrap_or_default();
    if nonce.is_empty() || !same_bytes(nonce.as_bytes(), given.as_bytes()) {
        return login_response(
            &ui,
            StatusCode::FORBIDDEN,
            Some("This sign-in form did not come from this page: sign in here."),
        );
    }
    let token = form.get("token").map(|t| t.trim()).unwrap_or_default();
    if token.is_empty() {
        return login_response(&ui, StatusCode::UNAUTHORIZED, Some("Enter a token."));
    }
    match check_token(&s, token, &method, "/ui/login", Role::Read) {
        Ok(_) => {
            ui.succeeded(addr);
            let id = ui.open_session(token);
            let mut r = see_other("/ui/runs");
            let h = r.headers_mut();
            h.append(header::SET_COOKIE, set_cookie(&ui, COOKIE, Some(&id)));
            h.append(header::SET_COOKIE, set_cookie(&ui, LOGIN_COOKIE, None));
            r
        }
        Err(f) => {
            count_failure(&s, &f);
            ui.failed(addr);
            let msg = match f {
                AuthFailure::Forbidden { .. } => {
                    "That token lacks the read role the status page needs."
                }
                _ => "That token is not accepted.",
            };
            login_response(&ui, StatusCode::UNAUTHORIZED, Some(msg))
        }
    }
}

async fn logout(
    State(s): State<S>,
    Extension(ui): Extension<Arc<Ui>>,
    Extension(sess): Extension<Session>,
    body: Body,
) -> Response {
    if let Err(r) = session_form(&s, &sess, body).await {
        return r.into_response();
    }
    ui.close_session(&sess.id);
    let mut r = see_other("/ui/login");
    r.headers_mut()
        .insert(header::SET_COOKIE, set_cookie(&ui, COOKIE, None));
    r
}

/// The node page's buttons: the body `POST /v1/converge` takes, through the API's own handler.
async fn trigger(
    State(s): State<S>,
    Extension(sess): Extension<Session>,
    Path(name): Path<String>,
    body: Body,
) -> Response {
    let form = match session_form(&s, &sess, body).await {
        Ok(f) => f,
        Err(r) => return r.into_response(),
    };
    let why_run = form.get("mode").map(String::as_str) != Some("converge");
    let request = json!({"nodes": [name], "why_run": why_run}).to_string();
    match super::converge(State(s), Extension(sess.identity), Bytes::from(request)).await {
        Ok((_, accepted)) => see_other(&format!("/ui/runs/{}", accepted.0.run_id)),
        Err(e) => api_problem(e),
    }
}

/// A plan page's button: `POST /v1/converge` with the plan's id, through the API's own handler.
async fn apply_plan(
    State(s): State<S>,
    Extension(sess): Extension<Session>,
    Path(id): Path<String>,
    body: Body,
) -> Response {
    if let Err(r) = session_form(&s, &sess, body).await {
        return r.into_response();
    }
    let request = json!({"plan_id": id}).to_string();
    match super::converge(State(s), Extension(sess.identity), Bytes::from(request)).await {
        Ok((_, accepted)) => see_other(&format!("/ui/runs/{}", accepted.0.run_id)),
        Err(e) => api_problem(e),
    }
}

fn api_problem(e: HttpError) -> Response {
    let title = match e.status {
        StatusCode::TOO_MANY_REQUESTS => "Queue full",
        StatusCode::CONFLICT => "Busy",
        StatusCode::NOT_FOUND => "Not found",
        s if s.is_server_error() => "Gateway error",
        _ => "Refused",
    };
    pages::problem(e.status, title, &e.message)
}

/// The API's event stream of a run, behind the session cookie (an `EventSource` sends no header).
async fn run_events(
    State(s): State<S>,
    Extension(sess): Extension<Session>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match super::run_events(State(s), Extension(sess.identity), Path(id), headers).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// The runs list's live feed: `run_created` and `run_finished` (data `{"event", "run_id",
/// "status"}`) as this gateway's scheduler announces them; `resync` when this reader fell behind and
/// missed some. Behind the session cookie (an `EventSource` sends no header), counted in
/// `max_streams_per_identity`; it ends when the gateway stops.
async fn runs_events(State(s): State<S>, Extension(sess): Extension<Session>) -> Response {
    use tokio::sync::broadcast::error::RecvError;
    let slot = match super::stream_slot(&s, &sess.identity) {
        Ok(slot) => slot,
        Err(e) => return e.into_response(),
    };
    let rx = s.sched.subscribe_runs();
    let stream = futures::stream::unfold((rx, s, slot), |(mut rx, s, slot)| async move {
        // Bounded waits, so a stopping gateway ends the stream within a second.
        while !s.sched.is_stopping() {
            let event = match tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
                Err(_) => continue,
                Ok(Err(RecvError::Closed)) => return None,
                Ok(Err(RecvError::Lagged(_))) => Event::default().event("resync").data("{}"),
                Ok(Ok(n)) => Event::default()
                    .event(n.event)
                    .data(serde_json::to_string(&n).unwrap_or_default()),
            };
            return Some((Ok::<Event, Infallible>(event), (rx, s, slot)));
        }
        None
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// Why the page has no topology to draw (kept with the page's state: cloned to every request).
#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum TopologyError {
    #[error(
        "no containerlab topology to draw: the inventory {} is neither a .clab.yml nor containerlab's topology-data.json, and the configuration sets no links_topology",
        .0.display()
    )]
    NotContainerlab(std::path::PathBuf),
    #[error(transparent)]
    Inventory(Arc<crate::inventory::InventoryError>),
    #[error("in reading the topology: the reader task failed: {0}")]
    Task(String),
}

/// The topology the page draws: `links_topology:` of the configuration, else the inventory when it
/// is a containerlab file (a `.clab.yml`, or the `topology-data.json` a deployed lab leaves).
async fn topology_of(s: &S, ui: &Ui) -> Result<Arc<Topology>, TopologyError> {
    ui.topology
        .get_or_init(|| async {
            if let Some(t) = s.sched.links_topology() {
                return Ok(t);
            }
            let source = s.sched.inventory().source.clone();
            let name = source.to_string_lossy().to_ascii_lowercase();
            // A JSON inventory is containerlab's topology-data.json (the inventory refuses others).
            if ![".clab.yml", ".clab.yaml", ".json"]
                .iter()
                .any(|x| name.ends_with(x))
            {
                return Err(TopologyError::NotContainerlab(source));
            }
            tokio::task::spawn_blocking(move || crate::inventory::Inventory::topology(&source))
                .await
                .map_err(|e| TopologyError::Task(e.to_string()))
                .and_then(|r| {
                    r.map(Arc::new)
                        .map_err(|e| TopologyError::Inventory(Arc::new(e)))
                })
        })
        .await
        .clone()
}

/// "Check links": `netgw links` from the gateway, kept with the run history (the drawing shows the
/// newest check, this one or an atomic run's).
async fn check_links(
    State(s): State<S>,
    Extension(ui): Extension<Arc<Ui>>,
    Extension(sess): Extension<Session>,
    body: Body,
) -> Response {
    if let Err(r) = session_form(&s, &sess, body).await {
        return r.into_response();
    }
    let topo = match topology_of(&s, &ui).await {
        Ok(t) => t,
        Err(e) => return pages::problem(StatusCode::BAD_REQUEST, "No topology", &e.to_string()),
    };
    let check = crate::links::LinkCheck::new(
        &topo,
        s.sched.shared_inventory(),
        LINK_CHECK_CONCURRENCY,
        LINK_CHECK_TIMEOUT,
    );
    let report = check.run().await;
    let stored = StoredLinkCheck {
        at: crate::clock::now_rfc3339(),
        origin: CheckOrigin::Page {
            by: sess.identity.label(),
        },
        report,
    };
    if let Err(e) = s.history.save_link_check(stored).await {
        warn!(error = %e, "keeping a link check");
        return pages::problem(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Link check not kept",
            &format!("the links were checked but the result could not be kept: {e}"),
        );
    }
    see_other("/ui/topology")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ui(secure: bool) -> Ui {
        Ui {
            secure_cookie: secure,
            topology: tokio::sync::OnceCell::new(),
            sessions: std::sync::Mutex::default(),
            failures: std::sync::Mutex::default(),
        }
    }

    #[test]
    fn the_cookie_is_a_random_id_never_the_token_and_secure_over_tls() {
        let u = ui(true);
        let token = "tok;en =,\"with\" odd chars";
        let id = u.open_session(token);
        assert_ne!(id, u.open_session(token), "ids are random");
        let set = set_cookie(&u, COOKIE, Some(&id));
        let set = set.to_str().unwrap();
        assert!(
            set.ends_with("; Path=/ui; HttpOnly; SameSite=Strict; Secure"),
            "{set}"
        );
        assert!(!set.contains("tok"), "{set}");
        let mut h = HeaderMap::new();
        let pair = set.split(';').next().unwrap();
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("a=b; {pair}; c=d")).unwrap(),
        );
        let got = cookie(&h, COOKIE).unwrap();
        assert_eq!(u.session(&got).map(|(t, _)| t).as_deref(), Some(token));
        let cleared = set_cookie(&ui(false), COOKIE, None);
        assert!(cleared.to_str().unwrap().contains("Max-Age=0"));
        // Signed out: the id is no longer a session; an unknown id never was.
        u.close_session(&got);
        assert!(u.session(&got).is_none());
        assert!(u.session("made-up").is_none());
    }

    #[test]
    fn sessions_end_when_idle_or_old() {
        let u = ui(false);
        let id = u.open_session("t");
        let (_, csrf) = u.session(&id).unwrap();
        assert_ne!(
            csrf,
            u.session(&u.open_session("t")).unwrap().1,
            "CSRF per session"
        );
        let past = |d: Duration| std::time::Instant::now().checked_sub(d).unwrap();
        u.sessions.lock().unwrap().get_mut(&id).unwrap().used = past(SESSION_IDLE);
        assert!(u.session(&id).is_none(), "idle too long");
        let id = u.open_session("t");
        let mut m = u.sessions.lock().unwrap();
        m.get_mut(&id).unwrap().created = past(SESSION_MAX);
        drop(m);
        assert!(u.session(&id).is_none(), "too old, however busy");
    }

    #[test]
    fn failed_sign_ins_back_off_per_address() {
        let u = ui(false);
        let (a, b) = ([127, 0, 0, 2].into(), [127, 0, 0, 3].into());
        for _ in 0..FREE_FAILURES - 1 {
            u.failed(a);
        }
        assert!(u.backoff(a).is_none());
        u.failed(a);
        assert!(u.backoff(a).is_some_and(|w| w <= Duration::from_secs(1)));
        for _ in 0..20 {
            u.failed(a);
        }
        assert!(
            u.backoff(a)
                .is_some_and(|w| w <= MAX_BACKOFF && w > Duration::from_secs(30))
        );
        assert!(u.backoff(b).is_none(), "another address is not slowed");
        u.succeeded(a);
        assert!(u.backoff(a).is_none());
    }

    #[test]
    fn the_forms_csrf_token_is_the_sessions() {
        let sess = Session {
            identity: Identity {
                name: "ci".into(),
                method: "token",
                roles: vec![Role::Read],
            },
            csrf: "abc".into(),
            id: "id".into(),
        };
        let form = |v: &str| HashMap::from([("csrf".to_owned(), v.to_owned())]);
        assert!(csrf_ok(&sess, &form("abc")).is_ok());
        assert!(csrf_ok(&sess, &form("ab")).is_err());
        assert!(csrf_ok(&sess, &HashMap::new()).is_err());
    }
}
