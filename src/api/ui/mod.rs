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

use super::auth::{AuthFailure, HeaderParts, Identity, Role};
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
use sha2::{Digest, Sha256};
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
    /// Keys the CSRF tokens: a session's token is `SHA-256(secret ‖ bearer token)`, so it needs no
    /// table and dies with the process.
    secret: [u8; 32],
    secure_cookie: bool,
    topology: tokio::sync::OnceCell<Result<Arc<Topology>, String>>,
}

/// A signed-in request: who, and the CSRF token its forms carry.
#[derive(Clone)]
pub(super) struct Session {
    identity: Identity,
    csrf: String,
}

impl Session {
    fn can_trigger(&self) -> bool {
        self.identity.roles.contains(&Role::Trigger)
    }
}

/// The `/ui` routes, merged into the API's router.
pub(super) fn router(state: S) -> Router<S> {
    let mut secret = [0u8; 32];
    if let Err(e) = getrandom::fill(&mut secret) {
        // Without randomness the key is still unknown to a client (it never leaves the process), but
        // predictable across restarts: say so.
        warn!(error = %e, "no system randomness for the status page's CSRF key");
    }
    let ui = Arc::new(Ui {
        secret,
        secure_cookie: state.settings["tls"].as_bool().unwrap_or(false),
        topology: tokio::sync::OnceCell::new(),
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
        .route("/ui/topology", get(pages::topology))
        .route("/ui/topology/links", post(check_links))
        .route("/ui/logout", post(logout))
        .route_layer(middleware::from_fn_with_state(state.clone(), ui_auth));
    Router::new()
        .route("/ui", get(|| async { see_other("/ui/runs") }))
        .route("/ui/", get(|| async { see_other("/ui/runs") }))
        .route("/ui/login", get(pages::login_form).post(login))
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

/// The bearer token a session cookie carries (base64url: any token survives the cookie syntax).
fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .and_then(|(_, v)| data_encoding::BASE64URL_NOPAD.decode(v.as_bytes()).ok())
        .and_then(|b| String::from_utf8(b).ok())
}

fn session_cookie(ui: &Ui, token: Option<&str>) -> HeaderValue {
    let secure = if ui.secure_cookie { "; Secure" } else { "" };
    let text = match token {
        Some(t) => format!(
            "{COOKIE}={}; Path=/ui; HttpOnly; SameSite=Strict{secure}",
            data_encoding::BASE64URL_NOPAD.encode(t.as_bytes())
        ),
        None => format!("{COOKIE}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    };
    // base64url and fixed text only: always a valid header value.
    HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("netgw_session=; Max-Age=0"))
}

fn csrf_token(ui: &Ui, token: &str) -> String {
    let mut h = Sha256::new();
    h.update(ui.secret);
    h.update(token.as_bytes());
    data_encoding::HEXLOWER.encode(&h.finalize())
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
    let Some(token) = cookie_token(req.headers()) else {
        return see_other("/ui/login");
    };
    let role = if req.method() == Method::GET || req.uri().path() == "/ui/logout" {
        Role::Read
    } else {
        Role::Trigger
    };
    let path = req.uri().path().to_owned();
    match check_token(&s, &token, req.method(), &path, role) {
        Ok(identity) => {
            let csrf = csrf_token(&ui, &token);
            req.extensions_mut().insert(Session { identity, csrf });
            pages::secure_headers(next.run(req).await)
        }
        Err(f @ AuthFailure::Forbidden { .. }) => {
            count_failure(&s, &f);
            pages::problem(StatusCode::FORBIDDEN, "Not allowed", &f.to_string())
        }
        Err(f) => {
            count_failure(&s, &f);
            let mut r = pages::login_page(
                StatusCode::UNAUTHORIZED,
                Some("The session's token is no longer accepted: sign in again."),
            );
            r.headers_mut()
                .insert(header::SET_COOKIE, session_cookie(&ui, None));
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

/// The form's CSRF token is the session's (compared in constant time).
fn csrf_ok(sess: &Session, form: &HashMap<String, String>) -> Result<(), Refused> {
    let given = form.get("csrf").map(String::as_bytes).unwrap_or_default();
    let want = sess.csrf.as_bytes();
    let same = given.len() == want.len()
        && given
            .iter()
            .zip(want)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if same {
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
    method: Method,
    body: Body,
) -> Response {
    let form = match read_form(&s, body).await {
        Ok(f) => f,
        Err(r) => return r.into_response(),
    };
    let token = form.get("token").map(|t| t.trim()).unwrap_or_default();
    if token.is_empty() {
        return pages::login_page(StatusCode::UNAUTHORIZED, Some("Enter a token."));
    }
    match check_token(&s, token, &method, "/ui/login", Role::Read) {
        Ok(_) => {
            let mut r = see_other("/ui/runs");
            r.headers_mut()
                .insert(header::SET_COOKIE, session_cookie(&ui, Some(token)));
            r
        }
        Err(f) => {
            count_failure(&s, &f);
            let msg = match f {
                AuthFailure::Forbidden { .. } => {
                    "That token lacks the read role the status page needs."
                }
                _ => "That token is not accepted.",
            };
            pages::login_page(StatusCode::UNAUTHORIZED, Some(msg))
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
    let mut r = see_other("/ui/login");
    r.headers_mut()
        .insert(header::SET_COOKIE, session_cookie(&ui, None));
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

/// The topology the page draws: `links_topology:` of the configuration, else the inventory when it
/// is a containerlab file (a `.clab.yml`, or the `topology-data.json` a deployed lab leaves).
async fn topology_of(s: &S, ui: &Ui) -> Result<Arc<Topology>, String> {
    ui.topology
        .get_or_init(|| async {
            if let Some(t) = s.sched.links_topology() {
                return Ok(t);
            }
            let source = s.sched.inventory().source.clone();
            let name = source.to_string_lossy().to_ascii_lowercase();
            // A JSON inventory is containerlab's topology-data.json (the inventory refuses others).
            if ![".clab.yml", ".clab.yaml", ".json"].iter().any(|x| name.ends_with(x)) {
                return Err(format!(
                    "no containerlab topology to draw: the inventory {} is neither a .clab.yml nor containerlab's topology-data.json, and the configuration sets no links_topology",
                    source.display()
                ));
            }
            tokio::task::spawn_blocking(move || crate::inventory::Inventory::topology(&source))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map(Arc::new).map_err(|e| e.to_string()))
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
        Err(e) => return pages::problem(StatusCode::BAD_REQUEST, "No topology", &e),
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
            secret: [7; 32],
            secure_cookie: secure,
            topology: tokio::sync::OnceCell::new(),
        }
    }

    #[test]
    fn the_cookie_carries_any_token_and_is_secure_over_tls() {
        let token = "tok;en =,\"with\" odd chars";
        let set = session_cookie(&ui(true), Some(token));
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
        assert_eq!(cookie_token(&h).as_deref(), Some(token));
        let plain = session_cookie(&ui(false), Some(token));
        assert!(!plain.to_str().unwrap().contains("Secure"));
        let cleared = session_cookie(&ui(false), None);
        assert!(cleared.to_str().unwrap().contains("Max-Age=0"));
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("netgw_session=***"),
        );
        assert_eq!(cookie_token(&h), None);
    }

    #[test]
    fn csrf_tokens_differ_per_session_and_per_process() {
        let a = csrf_token(&ui(false), "one");
        assert_ne!(a, csrf_token(&ui(false), "two"));
        let mut other = ui(false);
        other.secret = [8; 32];
        assert_ne!(a, csrf_token(&other, "one"));
        let sess = Session {
            identity: Identity {
                name: "ci".into(),
                method: "token",
                roles: vec![Role::Read],
            },
            csrf: a.clone(),
        };
        let form = |v: &str| HashMap::from([("csrf".to_owned(), v.to_owned())]);
        assert!(csrf_ok(&sess, &form(&a)).is_ok());
        assert!(csrf_ok(&sess, &form(&a[1..])).is_err());
        assert!(csrf_ok(&sess, &HashMap::new()).is_err());
    }
}
