//! The iControl REST session: token login, refresh and logout, request helpers and transactions.
//!
//! ```text
//!   Rest::call(method, path, body, txn?) ─▶ token fresh? ── no ──▶ POST /mgmt/shared/authn/login
//!        │                                                        {username, password, loginProviderName}
//!        ▼                                                        token = .token.token
//!   RestTransport::send  (X-F5-Auth-Token, X-F5-REST-Coordination-Id when in a transaction)
//!        │── 401 ─▶ forget the token, log in again, send once more
//!        │── 2xx ─▶ JSON (empty body = null)
//!        └── other ─▶ RestError::Device(F5Error, either error shape) or RestError::Status
//!
//!   transactions: POST /mgmt/tm/transaction {} ─▶ transId
//!                 each op with X-F5-REST-Coordination-Id: transId (queued, nothing applied)
//!                 PATCH /mgmt/tm/transaction/transId {"state":"VALIDATING"} ─▶ COMPLETED | FAILED
//!                 (polled with GET while VALIDATING); DELETE /mgmt/tm/transaction/transId discards
//!   close:        DELETE /mgmt/shared/authz/tokens/TOKEN
//!
//!   Rest::prefetch(paths) ─▶ GETs at once (READS_AT_ONCE), a connection each ─▶ the read cache;
//!        any 401 ─▶ log in again, send them once more
//! ```
//!
//! A token is refreshed before it expires: its lifetime is `expirationMicros - lastUpdateMicros` of the
//! login answer (both device clock, so clock skew does not matter), else `timeout` seconds, else 1200 s
//! (the BIG-IP default); the session logs in again when less than a tenth of it (at most 60 s) is left.
//!
//! [`HttpClient`](crate::transport::http::HttpClient) sends one authentication header and no other, and
//! a transaction needs two (`X-F5-Auth-Token` and `X-F5-REST-Coordination-Id`), so [`ReqwestTransport`]
//! builds its own reqwest client with the same TLS modes, timeouts, size cap, redaction and
//! [`HttpError`] values. Tokens and passwords never appear in errors, logs or `Debug`: request names use
//! `<token>` for the token in the logout path, and transport error texts have both secrets replaced.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt as _;
use netgw_models::secret::Secret;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::error::{F5Error, parse_error_body};
use crate::driver::{DriverError, ErrorKind};
use crate::target::{DeviceTarget, str_option};
use crate::transport::http::{
    BODY_EXCERPT_CHARS, BodyError, HttpError, TlsMode, build_client, chain, read_body,
    redirect_reason, send_error,
};

/// The header that carries the session token.
pub const AUTH_HEADER: &str = "X-F5-Auth-Token";
/// The header that puts a request into a transaction instead of applying it.
pub const COORDINATION_HEADER: &str = "X-F5-REST-Coordination-Id";
pub const LOGIN_PATH: &str = "/mgmt/shared/authn/login";
pub const TRANSACTION_PATH: &str = "/mgmt/tm/transaction";
/// Token lifetime when the login answer says nothing (BIG-IP's default `timeout`).
/// Reads sent at once to one device ([`Rest::prefetch`]), each on a connection of its own: BIG-IP's
/// REST server (restjavad) answers a handful of requests at a time, and every connection is a TLS
/// handshake the device's management plane pays.
pub const READS_AT_ONCE: usize = 5;
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(1200);

/// HTTP methods iControl REST uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum RestMethod {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl RestMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            RestMethod::Get => "GET",
            RestMethod::Post => "POST",
            RestMethod::Put => "PUT",
            RestMethod::Patch => "PATCH",
            RestMethod::Delete => "DELETE",
        }
    }

    fn reqwest(self) -> reqwest::Method {
        match self {
            RestMethod::Get => reqwest::Method::GET,
            RestMethod::Post => reqwest::Method::POST,
            RestMethod::Put => reqwest::Method::PUT,
            RestMethod::Patch => reqwest::Method::PATCH,
            RestMethod::Delete => reqwest::Method::DELETE,
        }
    }
}

impl fmt::Display for RestMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One configuration request (what a transaction queues).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RestOp {
    pub method: RestMethod,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
}

impl RestOp {
    pub fn new(method: RestMethod, path: impl Into<String>, body: Option<Value>) -> Self {
        RestOp {
            method,
            path: path.into(),
            body,
        }
    }

    /// `METHOD path body` on one line: the diff and the report show exactly what is sent.
    pub fn render(&self) -> String {
        match &self.body {
            Some(b) => format!("{} {} {}", self.method, self.path, b),
            None => format!("{} {}", self.method, self.path),
        }
    }
}

/// One request as the transport sees it.
#[derive(Debug, Clone, Copy)]
pub struct RestRequest<'a> {
    pub method: RestMethod,
    pub path: &'a str,
    /// The session token (`X-F5-Auth-Token`); `None` for the login itself.
    pub token: Option<&'a Secret>,
    /// `X-F5-REST-Coordination-Id`: queue into this transaction.
    pub transaction: Option<&'a str>,
    pub body: Option<&'a Value>,
}

/// A response read within the size limit; any status.
#[derive(Debug, Clone)]
pub struct RestResponse {
    pub status: u16,
    pub body: bytes::Bytes,
}

/// Moves one request to the device and its answer back (tests may pass their own).
#[async_trait]
pub trait RestTransport: Send + Sync + fmt::Debug {
    /// `op` names the request in errors (`GET /mgmt/tm/net/vlan`), already free of secrets;
    /// `secrets` are replaced by `<redacted>` in any transport error text.
    async fn send(
        &self,
        op: &str,
        req: RestRequest<'_>,
        secrets: &[&str],
    ) -> Result<RestResponse, HttpError>;
}

/// Settings resolved from a [`DeviceTarget`].
#[derive(Debug, Clone)]
pub struct RestSettings {
    pub device: String,
    /// `https://host:443` (or `http://...` for labs).
    pub base_url: String,
    pub tls: TlsMode,
    pub username: String,
    pub password: Secret,
    /// `loginProviderName` (`tmos` unless the target's `rest` extras say `login_provider`).
    pub login_provider: String,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub max_response_bytes: usize,
    /// `save_config` in the target's options (default true): `save sys config` on confirm.
    pub save_config: bool,
    /// `rest_parallel_reads` in the target's options (default false): reads that do not depend on one
    /// another at once ([`Rest::prefetch`]), or one at a time on one connection. At once, a converge
    /// waits for the device's answers 9 times instead of 16, and opens up to five TLS connections
    /// instead of one: worth it where answers are slow (BIG-IP's REST server takes tens to hundreds
    /// of milliseconds), not where CPU is the bound (docs/bench.md, "Round trips").
    pub parallel_reads: bool,
}

impl RestSettings {
    /// `connection_options.rest` (hostname, port, username, password, extras `scheme: http|https`,
    /// `login_provider`) over the host's settings; default port 443 (80 for `http`).
    pub fn from_target(t: &DeviceTarget) -> Result<Self, DriverError> {
        let cfg_err = |message: String| DriverError::Config {
            device: t.name.clone(),
            message,
        };
        let extras = t.connection_options.get("rest").map(|c| &c.extras);
        let scheme = extras
            .and_then(|e| str_option(e, "scheme").or_else(|| str_option(e, "transport")))
            .unwrap_or("https")
            .to_ascii_lowercase();
        let (base_url, ep) = t.http_base("rest", &scheme, "iControl REST scheme")?;
        let login_provider = extras
            .and_then(|e| {
                str_option(e, "login_provider").or_else(|| str_option(e, "loginProviderName"))
            })
            .unwrap_or("tmos")
            .to_owned();
        if ep.username.is_empty() {
            return Err(cfg_err("iControl REST needs a username".into()));
        }
        let save_config = t.save_config()?;
        let parallel_reads = t.bool_option("rest_parallel_reads")?.unwrap_or(false);
        Ok(RestSettings {
            device: t.name.clone(),
            base_url,
            tls: t.tls_mode(),
            username: ep.username,
            password: ep.password.unwrap_or_default(),
            login_provider,
            connect_timeout: t.timeouts.connect,
            request_timeout: t.timeouts.operation,
            max_response_bytes: 16 * 1024 * 1024,
            save_config,
            parallel_reads,
        })
    }
}

fn redact(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_owned();
    for s in secrets {
        if !s.is_empty() {
            out = out.replace(s, "<redacted>");
        }
    }
    out
}

/// reqwest + rustls, TLS per [`TlsMode`].
#[derive(Debug)]
pub struct ReqwestTransport {
    device: String,
    base: reqwest::Url,
    client: reqwest::Client,
    connect_timeout: Duration,
    request_timeout: Duration,
    max_response_bytes: usize,
}

impl ReqwestTransport {
    pub async fn new(s: &RestSettings) -> Result<Self, HttpError> {
        let cfg_err = |reason: String| HttpError::Config {
            device: s.device.clone(),
            reason,
        };
        let base = reqwest::Url::parse(&s.base_url)
            .map_err(|e| cfg_err(format!("base URL {:?}: {e}", s.base_url)))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(cfg_err(format!("base URL {:?} is not http(s)", s.base_url)));
        }
        if s.connect_timeout.is_zero() || s.request_timeout.is_zero() {
            return Err(cfg_err("timeouts must be above zero".into()));
        }
        let trust = s.tls.trust().await.map_err(|e| cfg_err(e.to_string()))?;
        let client = build_client(s.connect_timeout, s.request_timeout, trust)
            .map_err(|e| cfg_err(e.to_string()))?;
        Ok(ReqwestTransport {
            device: s.device.clone(),
            base,
            client,
            connect_timeout: s.connect_timeout,
            request_timeout: s.request_timeout,
            max_response_bytes: s.max_response_bytes,
        })
    }

    fn map_send_error(&self, op: &str, e: reqwest::Error, secrets: &[&str]) -> HttpError {
        let limits = (self.connect_timeout, self.request_timeout);
        let text = redact(&chain(&e), secrets);
        send_error(&e, (&self.device, op), text, limits, String::new)
    }
}

#[async_trait]
impl RestTransport for ReqwestTransport {
    async fn send(
        &self,
        op: &str,
        req: RestRequest<'_>,
        secrets: &[&str],
    ) -> Result<RestResponse, HttpError> {
        let url = self
            .base
            .join(req.path.trim_start_matches('/'))
            .map_err(|e| HttpError::Config {
                device: self.device.clone(),
                reason: format!("{op}: bad path: {e}"),
            })?;
        let mut r = self
            .client
            .request(req.method.reqwest(), url)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(t) = req.token {
            r = r.header(AUTH_HEADER, t.expose());
        }
        if let Some(id) = req.transaction {
            r = r.header(COORDINATION_HEADER, id);
        }
        if let Some(b) = req.body {
            r = r.json(b);
        }
        let mut resp = r
            .send()
            .await
            .map_err(|e| self.map_send_error(op, e, secrets))?;
        let status = resp.status().as_u16();
        if let Some(reason) = redirect_reason(status, resp.headers()) {
            return Err(HttpError::Status {
                device: self.device.clone(),
                op: op.to_owned(),
                status,
                body_excerpt: reason,
            });
        }
        let limit = self.max_response_bytes;
        let too_large = || HttpError::TooLarge {
            device: self.device.clone(),
            op: op.to_owned(),
            limit,
        };
        let body = read_body(&mut resp, limit).await.map_err(|e| match e {
            BodyError::TooLarge => too_large(),
            BodyError::Read { error, .. } => self.map_send_error(op, error, secrets),
        })?;
        Ok(RestResponse { status, body })
    }
}

/// Errors of the REST layer.
#[derive(Debug, thiserror::Error)]
pub enum RestError {
    #[error(transparent)]
    Http(#[from] HttpError),
    /// The device answered with an error body (either shape), kept verbatim.
    #[error("{op}: {error}")]
    Device { op: String, error: Box<F5Error> },
    /// An error status without a parsable body.
    #[error("{op}: HTTP {status}: {excerpt}")]
    Status {
        op: String,
        status: u16,
        excerpt: String,
    },
    #[error("{op}: cannot parse the answer: {reason}")]
    Decode { op: String, reason: String },
    /// The transaction ended in another state than COMPLETED.
    #[error("transaction {trans_id} ended {state}: {reason}")]
    Transaction {
        trans_id: String,
        state: String,
        reason: String,
    },
}

impl RestError {
    /// The device says the object or URI does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            RestError::Device { error, .. } => error.is_not_found(),
            RestError::Status { status, .. } => *status == 404,
            _ => false,
        }
    }

    pub fn into_driver(self, device: &str, step: &'static str) -> DriverError {
        let transport = |kind: ErrorKind, source: Box<dyn std::error::Error + Send + Sync>| {
            DriverError::Transport {
                device: device.to_owned(),
                step,
                kind,
                source,
            }
        };
        match self {
            RestError::Http(e) => {
                let kind = match &e {
                    HttpError::Config { .. } => ErrorKind::Config,
                    HttpError::Connect { .. } | HttpError::Tls { .. } => ErrorKind::Connect,
                    HttpError::Timeout { .. } => ErrorKind::Timeout,
                    HttpError::Decode { .. } => ErrorKind::Parse,
                    _ => ErrorKind::Transport,
                };
                transport(kind, Box::new(e))
            }
            RestError::Device { error, op } if error.is_auth_failure() => {
                transport(ErrorKind::Auth, Box::new(RestError::Device { error, op }))
            }
            RestError::Device { error, op } => DriverError::Rejected {
                device: device.to_owned(),
                step,
                message: format!("{error} [{op}]"),
            },
            e @ RestError::Status { .. } => transport(ErrorKind::Transport, Box::new(e)),
            RestError::Decode { op, reason } => DriverError::parse(device, &op, reason),
            RestError::Transaction {
                trans_id,
                state,
                reason,
            } => DriverError::Rejected {
                device: device.to_owned(),
                step,
                message: format!("{reason} (transaction {trans_id} {state})"),
            },
        }
    }
}

/// What a login answer says about the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginToken {
    pub token: Secret,
    /// How long the token lives from now.
    pub lifetime: Duration,
}

/// What an iControl REST answer lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("in the login answer: no \"token\" object")]
    NoLogin,
    #[error("in the token item: no token string at token.token")]
    NoToken,
    #[error("in the transaction answer: no transId")]
    NoTransId,
    #[error("in the transaction answer: transId {0:?} is not an identifier")]
    TransId(String),
}

/// The login request body. It holds the password: never log it.
pub fn render_login(username: &str, password: &Secret, provider: &str) -> Value {
    json!({"username": username, "password": password.expose(), "loginProviderName": provider})
}

/// Parse `POST /mgmt/shared/authn/login`'s answer: token from `.token.token`; lifetime from
/// `expirationMicros - lastUpdateMicros` (device clock), else `.token.timeout`, else 1200 s.
pub fn parse_login(v: &Value) -> Result<LoginToken, AnswerError> {
    let t = v.get("token").ok_or(AnswerError::NoLogin)?;
    parse_token_item(t)
}

/// Parse a token item (`shared:authz:tokens:authtokenitemstate`: the login's `.token`, or the answer to
/// `PATCH /mgmt/shared/authz/tokens/TOKEN`).
pub fn parse_token_item(t: &Value) -> Result<LoginToken, AnswerError> {
    let token = t
        .get("token")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or(AnswerError::NoToken)?;
    let micros = |k: &str| t.get(k).and_then(Value::as_u64);
    let timeout = t.get("timeout").and_then(|v| {
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
    });
    let lifetime = match (micros("expirationMicros"), micros("lastUpdateMicros")) {
        (Some(exp), Some(last)) if exp > last => Duration::from_micros(exp - last),
        _ => timeout
            .filter(|&s| s > 0)
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_TOKEN_LIFETIME),
    };
    Ok(LoginToken {
        token: Secret::new(token),
        lifetime,
    })
}

/// When to log in again: a tenth of the lifetime (at most 60 s) before it ends.
pub fn refresh_at(obtained: Instant, lifetime: Duration) -> Instant {
    let margin = (lifetime / 10).min(Duration::from_secs(60));
    obtained + lifetime.saturating_sub(margin)
}

/// A transaction's state as `POST`/`PATCH`/`GET /mgmt/tm/transaction[/ID]` report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionState {
    pub trans_id: String,
    /// `STARTED`, `VALIDATING`, `COMPLETED`, `FAILED`, ...
    pub state: String,
    pub failure_reason: Option<String>,
}

/// Parse a `tm:transactionstate` (`transId` is a number on the device; accept a string too).
pub fn parse_transaction(v: &Value) -> Result<TransactionState, AnswerError> {
    let id = match v.get("transId") {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(AnswerError::NoTransId),
    };
    if !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(AnswerError::TransId(id));
    }
    Ok(TransactionState {
        trans_id: id,
        state: v
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        failure_reason: v
            .get("failureReason")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    })
}

/// The body that commits a transaction.
pub fn render_commit() -> Value {
    json!({"state": "VALIDATING"})
}

pub fn transaction_path(id: &str) -> String {
    format!("{TRANSACTION_PATH}/{id}")
}

/// One logged-in iControl REST session.
pub struct Rest {
    device: String,
    transport: Box<dyn RestTransport>,
    username: String,
    password: Secret,
    login_provider: String,
    token: Option<(Secret, Instant)>,
    logins: u32,
    poll_limit: Duration,
    /// Answers of [`Rest::get_cached`] since the last request that was not a GET: one converge reads
    /// the same collections for facts, the planner's view and the pre-state, and nothing this session
    /// sent can have changed them in between. Any other request empties it, so a read after a change
    /// (verify, restore) always goes to the device. Shared, not copied, with each reader: a collection
    /// reply's tree is most of what a converge allocates.
    read_cache: HashMap<String, Option<Arc<Value>>>,
    /// Whether [`Rest::prefetch`] reads at once ([`RestSettings::parallel_reads`]).
    parallel_reads: bool,
}

impl fmt::Debug for Rest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rest")
            .field("device", &self.device)
            .field("username", &self.username)
            .field("logged_in", &self.token.is_some())
            .field("logins", &self.logins)
            .finish_non_exhaustive()
    }
}

fn excerpt(body: &[u8], secrets: &[&str]) -> String {
    let text = redact(&String::from_utf8_lossy(body), secrets);
    let mut out: String = text.chars().take(BODY_EXCERPT_CHARS).collect();
    if text.chars().count() > BODY_EXCERPT_CHARS {
        out.push_str("...");
    }
    out.trim().to_owned()
}

impl Rest {
    pub fn new(settings: &RestSettings, transport: Box<dyn RestTransport>) -> Self {
        Rest {
            device: settings.device.clone(),
            transport,
            username: settings.username.clone(),
            password: settings.password.clone(),
            login_provider: settings.login_provider.clone(),
            token: None,
            logins: 0,
            poll_limit: settings.request_timeout,
            read_cache: HashMap::new(),
            parallel_reads: settings.parallel_reads,
        }
    }

    pub fn device(&self) -> &str {
        &self.device
    }

    /// How many times this session logged in (tests check re-login on expiry).
    pub fn logins(&self) -> u32 {
        self.logins
    }

    pub fn logged_in(&self) -> bool {
        self.token.is_some()
    }

    fn secrets(&self) -> Vec<&str> {
        let mut s = vec![self.password.expose()];
        if let Some((t, _)) = &self.token {
            s.push(t.expose());
        }
        s
    }

    /// Log in (again) and keep the token.
    pub async fn login(&mut self) -> Result<(), RestError> {
        self.token = None;
        let op = format!("POST {LOGIN_PATH}");
        let body = render_login(&self.username, &self.password, &self.login_provider);
        let req = RestRequest {
            method: RestMethod::Post,
            path: LOGIN_PATH,
            token: None,
            transaction: None,
            body: Some(&body),
        };
        let secrets = self.secrets();
        let resp = self.transport.send(&op, req, &secrets).await?;
        let v = self.decode(&op, resp)?;
        let t = parse_login(&v).map_err(|e| RestError::Decode {
            op: op.clone(),
            reason: e.to_string(),
        })?;
        self.logins += 1;
        tracing::debug!(device = %self.device, lifetime_s = t.lifetime.as_secs(), "iControl REST login");
        self.token = Some((t.token, refresh_at(Instant::now(), t.lifetime)));
        Ok(())
    }

    /// Drop the token on the device (`DELETE /mgmt/shared/authz/tokens/TOKEN`). A token that already
    /// expired (401/404) is fine.
    pub async fn logout(&mut self) -> Result<(), RestError> {
        let Some((token, _)) = self.token.take() else {
            return Ok(());
        };
        let path = format!("/mgmt/shared/authz/tokens/{}", token.expose());
        let op = "DELETE /mgmt/shared/authz/tokens/<token>";
        let req = RestRequest {
            method: RestMethod::Delete,
            path: &path,
            token: Some(&token),
            transaction: None,
            body: None,
        };
        let secrets = [self.password.expose(), token.expose()];
        let resp = self.transport.send(op, req, &secrets).await?;
        if matches!(resp.status, 401 | 404) || (200..300).contains(&resp.status) {
            return Ok(());
        }
        self.decode(op, resp).map(|_| ())
    }

    fn decode(&self, op: &str, resp: RestResponse) -> Result<Value, RestError> {
        if (200..300).contains(&resp.status) {
            if resp.body.iter().all(u8::is_ascii_whitespace) {
                return Ok(Value::Null);
            }
            return super::answer::decode(op, &resp.body).map_err(|e| RestError::Decode {
                op: op.to_owned(),
                reason: e.to_string(),
            });
        }
        match parse_error_body(resp.status, &resp.body) {
            Some(mut error) => {
                error.message = redact(&error.message, &self.secrets());
                Err(RestError::Device {
                    op: op.to_owned(),
                    error: Box::new(error),
                })
            }
            None => Err(RestError::Status {
                op: op.to_owned(),
                status: resp.status,
                excerpt: excerpt(&resp.body, &self.secrets()),
            }),
        }
    }

    /// Whether [`Rest::prefetch`] reads at once.
    pub fn parallel_reads(&self) -> bool {
        self.parallel_reads
    }

    /// Log in when there is no token or it is about to expire.
    async fn fresh_token(&mut self) -> Result<(), RestError> {
        if self
            .token
            .as_ref()
            .is_none_or(|(_, at)| Instant::now() >= *at)
        {
            self.login().await?;
        }
        Ok(())
    }

    /// Read `paths` into the read cache at once ([`READS_AT_ONCE`] at a time). HTTP/1.1 answers one
    /// request at a time on a connection, so each read goes on a connection of its own (the client
    /// opens them as needed and keeps them for the session): reads that do not depend on one another
    /// cost the device's answer time once, not once each. Answers are kept, and 404 as `None`; a read
    /// that failed is left out, for the caller's own request to make again and report. Where reads
    /// go one at a time ([`RestSettings::parallel_reads`]), they are made in turn up to the first that
    /// fails, which is left with the rest for the callers (a caller that can do without the read,
    /// as the facts without trunks, still can).
    pub async fn prefetch(&mut self, paths: &[&str]) -> Result<(), RestError> {
        let todo: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| !self.read_cache.contains_key(*p))
            .collect();
        if todo.len() < 2 || !self.parallel_reads {
            for path in todo {
                if self.get_optional_cached(path).await.is_err() {
                    break;
                }
            }
            return Ok(());
        }
        for attempt in 0..2 {
            self.fresh_token().await?;
            let answers = self.send_gets(&todo).await;
            if attempt == 0
                && answers
                    .iter()
                    .any(|(_, a)| matches!(a, Ok(r) if r.status == 401))
            {
                tracing::info!(device = %self.device, "token refused (expired?); logging in again");
                self.token = None;
                continue;
            }
            for (path, (op, answer)) in todo.iter().zip(answers) {
                let Ok(resp) = answer else { continue };
                match self.decode(&op, resp) {
                    Ok(v) => self
                        .read_cache
                        .insert((*path).to_owned(), Some(Arc::new(v))),
                    Err(e) if e.is_not_found() => self.read_cache.insert((*path).to_owned(), None),
                    Err(_) => continue,
                };
            }
            break;
        }
        Ok(())
    }

    /// GET each of `paths` at once with the session's token: each answer with its request's name.
    async fn send_gets(&self, paths: &[&str]) -> Vec<(String, Result<RestResponse, HttpError>)> {
        let Some((token, _)) = &self.token else {
            return Vec::new();
        };
        let secrets = self.secrets();
        // Boxed first: a lazy iterator of futures borrowing `self` is not `Send` for the compiler.
        let sends: Vec<futures::future::BoxFuture<'_, (String, Result<RestResponse, HttpError>)>> =
            paths
                .iter()
                .map(|path| {
                    let op = format!("GET {}", path.split('?').next().unwrap_or(path));
                    let req = RestRequest {
                        method: RestMethod::Get,
                        path,
                        token: Some(token),
                        transaction: None,
                        body: None,
                    };
                    let secrets = &secrets;
                    Box::pin(async move {
                        let answer = self.transport.send(&op, req, secrets).await;
                        (op, answer)
                    }) as futures::future::BoxFuture<'_, _>
                })
                .collect();
        futures::stream::iter(sends)
            .buffered(READS_AT_ONCE)
            .collect()
            .await
    }

    /// One request with the session token; logs in first when the token is missing or about to expire,
    /// and once more when the device answers 401 (expired or revoked token).
    pub async fn call(
        &mut self,
        method: RestMethod,
        path: &str,
        body: Option<&Value>,
        transaction: Option<&str>,
    ) -> Result<Value, RestError> {
        let op = format!("{method} {}", path.split('?').next().unwrap_or(path));
        if method != RestMethod::Get {
            self.read_cache.clear();
        }
        for attempt in 0..2 {
            self.fresh_token().await?;
            let Some((token, _)) = &self.token else {
                continue;
            };
            let req = RestRequest {
                method,
                path,
                token: Some(token),
                transaction,
                body,
            };
            let secrets = self.secrets();
            let resp = self.transport.send(&op, req, &secrets).await?;
            if resp.status == 401 && attempt == 0 {
                tracing::info!(device = %self.device, op = %op, "token refused (expired?); logging in again");
                self.token = None;
                continue;
            }
            return self.decode(&op, resp);
        }
        Err(RestError::Status {
            op,
            status: 401,
            excerpt: "refused after a fresh login".into(),
        })
    }

    pub async fn get(&mut self, path: &str) -> Result<Value, RestError> {
        self.call(RestMethod::Get, path, None, None).await
    }

    /// GET that treats 404 (an endpoint this release lacks) as `None`.
    pub async fn get_optional(&mut self, path: &str) -> Result<Option<Value>, RestError> {
        match self.get(path).await {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// GET, answered from the session's read cache when nothing but GETs went since the same read.
    /// Errors are not kept (asked again), except 404 through [`Rest::get_optional_cached`].
    pub async fn get_cached(&mut self, path: &str) -> Result<Arc<Value>, RestError> {
        if let Some(Some(v)) = self.read_cache.get(path) {
            return Ok(v.clone());
        }
        let v = Arc::new(self.get(path).await?);
        self.read_cache.insert(path.to_owned(), Some(v.clone()));
        Ok(v)
    }

    /// [`Rest::get_cached`] that treats 404 as `None` (kept too: an endpoint this release lacks), as
    /// [`Rest::get_optional`].
    pub async fn get_optional_cached(
        &mut self,
        path: &str,
    ) -> Result<Option<Arc<Value>>, RestError> {
        if let Some(v) = self.read_cache.get(path) {
            return Ok(v.clone());
        }
        let v = self.get_optional(path).await?.map(Arc::new);
        self.read_cache.insert(path.to_owned(), v.clone());
        Ok(v)
    }

    /// `POST /mgmt/tm/transaction {}`: a new, empty transaction.
    pub async fn begin_transaction(&mut self) -> Result<TransactionState, RestError> {
        let v = self
            .call(RestMethod::Post, TRANSACTION_PATH, Some(&json!({})), None)
            .await?;
        parse_transaction(&v).map_err(|e| RestError::Decode {
            op: format!("POST {TRANSACTION_PATH}"),
            reason: e.to_string(),
        })
    }

    /// Queue one operation into a transaction (the device validates it only at commit).
    pub async fn queue(&mut self, trans_id: &str, op: &RestOp) -> Result<Value, RestError> {
        self.call(op.method, &op.path, op.body.as_ref(), Some(trans_id))
            .await
    }

    /// `PATCH /mgmt/tm/transaction/ID {"state":"VALIDATING"}`, then poll while the device is still
    /// validating. Ok only for `COMPLETED`; a `FAILED` transaction changed nothing.
    pub async fn commit_transaction(
        &mut self,
        trans_id: &str,
    ) -> Result<TransactionState, RestError> {
        let path = transaction_path(trans_id);
        let op = format!("PATCH {path}");
        let v = self
            .call(RestMethod::Patch, &path, Some(&render_commit()), None)
            .await?;
        let mut st = parse_transaction(&v).map_err(|e| RestError::Decode {
            op: op.clone(),
            reason: e.to_string(),
        })?;
        let deadline = Instant::now() + self.poll_limit;
        loop {
            match st.state.as_str() {
                "COMPLETED" => return Ok(st),
                "VALIDATING" | "STARTED" | "EXECUTING" if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    let v = self.get(&path).await?;
                    st = parse_transaction(&v).map_err(|e| RestError::Decode {
                        op: op.clone(),
                        reason: e.to_string(),
                    })?;
                }
                other => {
                    return Err(RestError::Transaction {
                        trans_id: st.trans_id.clone(),
                        state: if other.is_empty() {
                            "without a state".into()
                        } else {
                            other.to_owned()
                        },
                        reason: st.failure_reason.clone().unwrap_or_else(|| {
                            if Instant::now() >= deadline {
                                format!("still {other} after {:?}", self.poll_limit)
                            } else {
                                "no failureReason given".into()
                            }
                        }),
                    });
                }
            }
        }
    }

    /// `DELETE /mgmt/tm/transaction/ID`: throw a transaction away (nothing in it was applied).
    pub async fn delete_transaction(&mut self, trans_id: &str) -> Result<(), RestError> {
        match self
            .call(RestMethod::Delete, &transaction_path(trans_id), None, None)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Platform;
    use crate::target::ConnectionOptions;

    // the public-sample collection (docs/fixture-sources.md), `f5/f5-automation-labs/authn_login/authn_login_tmos_admin_13.1.0.8.json`
    const LOGIN_13: &str = r#"{"username":"admin","loginReference":{"link":"https://localhost/mgmt/cm/system/authn/providers/tmos/1f44a60e-11a7-3c51-a49f-82983026b41b/login"},"loginProviderName":"tmos","token":{"token":"TCJMWPGBQGPZPJYUCY57J2IITA","name":"TCJMWPGBQGPZPJYUCY57J2IITA","userName":"admin","authProviderName":"tmos","user":{"link":"https://localhost/mgmt/shared/authz/users/admin"},"timeout":1200,"startTime":"2018-08-01T08:05:37.679-0700","address":"10.1.1.250","partition":"[All]","generation":1,"lastUpdateMicros":1533135937678293,"expirationMicros":1533137137679000,"kind":"shared:authz:tokens:authtokenitemstate","selfLink":"https://localhost/mgmt/shared/authz/tokens/TCJMWPGBQGPZPJYUCY57J2IITA"},"generation":0,"lastUpdateMicros":0}"#;
    // .../authz_tokens/patch_token_timeout_36000.json (a bare token item)
    const PATCHED_TOKEN: &str = r#"{"token":"X54G4KAQUEGFZX2J7MUMFBKBC5","timeout":36000,"lastUpdateMicros":1533137298286141,"expirationMicros":1533173278961000}"#;

    #[test]
    fn f5_rest_login_token_and_lifetime() {
        let t = parse_login(&serde_json::from_str(LOGIN_13).unwrap()).unwrap();
        assert_eq!(t.token.expose(), "TCJMWPGBQGPZPJYUCY57J2IITA");
        // 1533137137679000 - 1533135937678293 µs = 1200.000707 s
        assert_eq!(t.lifetime.as_secs(), 1200);
        assert!(
            !format!("{t:?}").contains("TCJMWPGB"),
            "token must not show in Debug"
        );
        let t = parse_token_item(&serde_json::from_str(PATCHED_TOKEN).unwrap()).unwrap();
        assert_eq!(t.lifetime.as_secs(), 35_980);
        // No micros: timeout; nothing: the default.
        let t = parse_login(&json!({"token": {"token": "A", "timeout": "300"}})).unwrap();
        assert_eq!(t.lifetime, Duration::from_secs(300));
        let t = parse_login(&json!({"token": {"token": "A"}})).unwrap();
        assert_eq!(t.lifetime, DEFAULT_TOKEN_LIFETIME);
        assert!(parse_login(&json!({"username": "admin"})).is_err());
        assert!(parse_login(&json!({"token": {"token": ""}})).is_err());
    }

    #[test]
    fn f5_rest_refresh_before_expiry() {
        let now = Instant::now();
        assert_eq!(
            refresh_at(now, Duration::from_secs(1200)),
            now + Duration::from_secs(1140)
        );
        assert_eq!(
            refresh_at(now, Duration::from_secs(100)),
            now + Duration::from_secs(90)
        );
    }

    #[test]
    fn f5_rest_login_body_and_settings() {
        let b = render_login("admin", &Secret::new("pw"), "tmos");
        assert_eq!(
            b,
            json!({"username": "admin", "password": "pw", "loginProviderName": "tmos"})
        );
        let mut t = DeviceTarget::new("bigip1", Platform::F5, "10.0.0.5");
        t.username = "admin".into();
        t.password = Some(Secret::new("pw"));
        let s = RestSettings::from_target(&t).unwrap();
        assert_eq!(s.base_url, "https://10.0.0.5:443");
        assert_eq!(s.login_provider, "tmos");
        assert!(s.save_config, "saved to startup unless told otherwise");
        assert_eq!(s.tls, TlsMode::Verify);
        let mut extras = serde_json::Map::new();
        extras.insert("scheme".into(), json!("http"));
        t.connection_options.insert(
            "rest".into(),
            Box::new(ConnectionOptions {
                port: Some(8080),
                extras,
                ..Default::default()
            }),
        );
        t.options.insert("save_config".into(), json!(false));
        t.tls.verify = false;
        let s = RestSettings::from_target(&t).unwrap();
        assert_eq!(s.base_url, "http://10.0.0.5:8080");
        assert!(!s.save_config && s.tls == TlsMode::Insecure);
        assert!(!format!("{s:?}").contains("\"pw\""));
        t.options.insert("save_config".into(), json!("yes"));
        assert!(RestSettings::from_target(&t).is_err());
    }

    /// Answers after a pause, counting the requests it is answering at once: `.../missing` is a 404,
    /// `.../broken` a 500, anything else `{}`; the next `refuse` reads with 401.
    #[derive(Debug, Default)]
    struct Slow {
        refuse: std::sync::atomic::AtomicUsize,
        at_once: std::sync::atomic::AtomicUsize,
        peak: std::sync::atomic::AtomicUsize,
        gets: std::sync::Mutex<Vec<String>>,
    }

    #[async_trait]
    impl RestTransport for Arc<Slow> {
        async fn send(
            &self,
            _op: &str,
            req: RestRequest<'_>,
            _secrets: &[&str],
        ) -> Result<RestResponse, HttpError> {
            use std::sync::atomic::Ordering::SeqCst;
            let answer = |status, body: &str| {
                Ok(RestResponse {
                    status,
                    body: body.to_owned().into(),
                })
            };
            if req.path == LOGIN_PATH {
                return answer(200, r#"{"token":{"token":"T","timeout":1200}}"#);
            }
            self.gets.lock().unwrap().push(req.path.to_owned());
            let now = self.at_once.fetch_add(1, SeqCst) + 1;
            self.peak.fetch_max(now, SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            self.at_once.fetch_sub(1, SeqCst);
            if self
                .refuse
                .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return answer(401, r#"{"code":401,"message":"token expired"}"#);
            }
            match req.path.rsplit('/').next() {
                Some("missing") => answer(404, r#"{"code":404,"message":"not found"}"#),
                Some("broken") => answer(500, r#"{"code":500,"message":"restjavad is down"}"#),
                _ => answer(200, "{}"),
            }
        }
    }

    /// A logged-in session on `slow`, with `rest_parallel_reads` as given.
    async fn session(slow: &Arc<Slow>, parallel: Option<bool>) -> Rest {
        let mut t = DeviceTarget::new("bigip1", Platform::F5, "10.0.0.5");
        t.username = "admin".into();
        t.password = Some(Secret::new("pw"));
        if let Some(p) = parallel {
            t.options.insert("rest_parallel_reads".into(), json!(p));
        }
        let settings = RestSettings::from_target(&t).unwrap();
        let mut rest = Rest::new(&settings, Box::new(slow.clone()));
        rest.login().await.unwrap();
        rest
    }

    fn gets(slow: &Slow) -> usize {
        slow.gets.lock().unwrap().len()
    }

    #[tokio::test]
    async fn f5_rest_prefetch_reads_at_once_within_the_bound_and_leaves_failures_to_the_caller() {
        let paths: Vec<String> = (0..8).map(|i| format!("/mgmt/tm/net/vlan/v{i}")).collect();
        let mut batch: Vec<&str> = paths.iter().map(String::as_str).collect();
        batch.extend(["/mgmt/tm/x/missing", "/mgmt/tm/x/broken"]);
        // Told to: reads at once, never more than the bound.
        let slow = Arc::new(Slow::default());
        let mut rest = session(&slow, Some(true)).await;
        rest.prefetch(&batch).await.unwrap();
        let peak = slow.peak.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(peak, READS_AT_ONCE, "at once, within the bound");
        assert_eq!(gets(&slow), 10);
        // Answers and the 404 come from the cache; the failed read is asked again and reported.
        rest.get_cached(&paths[3]).await.unwrap();
        let missing = rest.get_optional_cached("/mgmt/tm/x/missing").await;
        assert_eq!(missing.unwrap(), None);
        assert_eq!(gets(&slow), 10);
        let e = rest.get_cached("/mgmt/tm/x/broken").await.unwrap_err();
        assert!(e.to_string().contains("restjavad is down"), "{e}");
        assert_eq!(gets(&slow), 11);
        // What is cached is not asked again; one read left is made alone.
        let again = [paths[0].as_str(), paths[1].as_str(), "/mgmt/tm/y"];
        rest.prefetch(&again).await.unwrap();
        assert_eq!(gets(&slow), 12);
        // Not told (or told not to): one at a time, in order, up to the first failure, which is
        // left with the rest for the callers.
        let in_turn = [paths[0].as_str(), "/mgmt/tm/x/broken", paths[1].as_str()];
        for told in [None, Some(false)] {
            let one = Arc::new(Slow::default());
            let mut rest = session(&one, told).await;
            rest.prefetch(&in_turn).await.unwrap();
            assert_eq!(
                *one.gets.lock().unwrap(),
                in_turn[..2],
                "in order, to the failure"
            );
            assert_eq!(one.peak.load(std::sync::atomic::Ordering::SeqCst), 1);
            rest.get_cached(&paths[0]).await.unwrap();
            assert_eq!(gets(&one), 2, "what was read is cached");
            rest.get_cached(&paths[1]).await.unwrap();
            let e = rest.get_cached("/mgmt/tm/x/broken").await.unwrap_err();
            assert!(e.to_string().contains("restjavad is down"), "{e}");
            assert_eq!(gets(&one), 4);
        }
    }

    #[tokio::test]
    async fn f5_rest_prefetch_logs_in_again_on_401() {
        let quick = Arc::new(Slow::default());
        let batch = [
            "/mgmt/tm/net/vlan",
            "/mgmt/tm/net/interface",
            "/mgmt/tm/net/trunk",
        ];
        // The token expired: every read refused, one login, all sent again.
        quick.refuse.store(3, std::sync::atomic::Ordering::SeqCst);
        let mut rest = session(&quick, Some(true)).await;
        rest.prefetch(&batch).await.unwrap();
        assert_eq!((gets(&quick), rest.logins()), (6, 2));
        rest.get_cached("/mgmt/tm/net/trunk").await.unwrap();
        assert_eq!(gets(&quick), 6, "from the cache");
        let mut t = DeviceTarget::new("bigip1", Platform::F5, "10.0.0.5");
        t.username = "admin".into();
        t.options.insert("rest_parallel_reads".into(), json!("no"));
        let e = RestSettings::from_target(&t).unwrap_err().to_string();
        assert!(
            e.contains("rest_parallel_reads must be true or false"),
            "{e}"
        );
    }

    #[test]
    fn f5_rest_transaction_flow_rendering() {
        let st = parse_transaction(
            &json!({"transId": 1389812351, "state": "STARTED", "timeoutSeconds": 30,
            "kind": "tm:transactionstate"}),
        )
        .unwrap();
        assert_eq!(
            (st.trans_id.as_str(), st.state.as_str(), st.failure_reason),
            ("1389812351", "STARTED", None)
        );
        assert_eq!(
            transaction_path(&st.trans_id),
            "/mgmt/tm/transaction/1389812351"
        );
        assert_eq!(render_commit(), json!({"state": "VALIDATING"}));
        let failed = parse_transaction(
            &json!({"transId": "42", "state": "FAILED", "failureReason": "boom"}),
        )
        .unwrap();
        assert_eq!(failed.failure_reason.as_deref(), Some("boom"));
        assert!(parse_transaction(&json!({"state": "STARTED"})).is_err());
        assert!(parse_transaction(&json!({"transId": "1/../x"})).is_err());
        let op = RestOp::new(
            RestMethod::Patch,
            "/mgmt/tm/net/vlan/~Common~web",
            Some(json!({"description": "x"})),
        );
        assert_eq!(
            op.render(),
            r#"PATCH /mgmt/tm/net/vlan/~Common~web {"description":"x"}"#
        );
        assert_eq!(
            RestOp::new(RestMethod::Delete, "/mgmt/tm/net/vlan/~Common~db", None).render(),
            "DELETE /mgmt/tm/net/vlan/~Common~db"
        );
    }

    #[test]
    fn f5_rest_errors_map_to_driver_kinds() {
        let dev = |status: u16, body: &str| RestError::Device {
            op: "POST /mgmt/tm/net/vlan".into(),
            error: Box::new(parse_error_body(status, body.as_bytes()).unwrap()),
        };
        let e = dev(409, r#"{"code":409,"message":"01020066:3: The requested VLAN (/Common/web) already exists in partition Common.","errorStack":[],"apiError":3}"#)
            .into_driver("bigip1", "commit");
        assert_eq!(e.kind(), ErrorKind::Rejected);
        assert!(
            e.to_string().contains(
                "01020066:3: The requested VLAN (/Common/web) already exists in partition Common."
            ),
            "{e}"
        );
        let e = dev(401, r#"{"code":401,"message":"Authentication failed.","referer":"x","restOperationId":1,"kind":":resterrorresponse"}"#)
            .into_driver("bigip1", "login");
        assert_eq!(e.kind(), ErrorKind::Auth);
        let e = RestError::Transaction {
            trans_id: "7".into(),
            state: "FAILED".into(),
            reason: "nope".into(),
        }
        .into_driver("bigip1", "commit");
        assert_eq!(e.kind(), ErrorKind::Rejected);
        assert!(
            redact("token ABC in url /tokens/ABC", &["ABC", ""])
                .matches("<redacted>")
                .count()
                == 2
        );
    }
}
