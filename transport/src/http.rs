//! HTTP JSON APIs (reqwest + rustls): eAPI, iControl REST, the Chef server.
//!
//! One [`HttpClient`] per device: a base URL, TLS verification on unless the device's settings say
//! otherwise (an explicit CA file, or `insecure`), basic or bearer authentication, a connect timeout and a
//! per-request timeout, and a cap on response size. Errors name the device, the request (`POST
//! /command-api`) and, for timeouts and size, the limit. Error bodies are quoted only as a bounded excerpt
//! with this client's secrets replaced by `<redacted>`.

use std::path::PathBuf;
use std::time::Duration;

use netgw_models::secret::Secret;
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// How the server's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TlsMode {
    /// The platform's trust store (webpki roots) and host name verification.
    #[default]
    Verify,
    /// Trust only the CA certificate(s) in this PEM file (a lab CA, a device's self-signed cert); host
    /// names are still verified.
    CaFile(PathBuf),
    /// No verification at all. Only for labs: anyone on the path can read the credentials.
    Insecure,
}

/// Credentials sent with every request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HttpAuth {
    #[default]
    None,
    Basic {
        username: String,
        password: Secret,
    },
    Bearer(Secret),
    /// A token in a named header (F5 iControl REST: `X-F5-Auth-Token`).
    Header {
        name: String,
        value: Secret,
    },
}

impl HttpAuth {
    /// The strings an error text must not show: the secret, and for basic auth also the encoded
    /// `user:password` a server may echo back from the Authorization header.
    fn secrets(&self) -> Vec<String> {
        match self {
            HttpAuth::None => vec![],
            HttpAuth::Basic { username, password } => vec![
                password.expose().to_owned(),
                data_encoding::BASE64
                    .encode(format!("{username}:{}", password.expose()).as_bytes()),
            ],
            HttpAuth::Bearer(t) => vec![t.expose().to_owned()],
            HttpAuth::Header { value, .. } => vec![value.expose().to_owned()],
        }
    }
}

/// Everything needed to talk HTTP(S) to one device.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The node name, used in every error.
    pub device: String,
    /// `https://host:port` (a path prefix is allowed: request paths are joined to it).
    pub base_url: String,
    pub tls: TlsMode,
    pub auth: HttpAuth,
    pub connect_timeout: Duration,
    /// Whole request, from sending to the last byte of the body.
    pub request_timeout: Duration,
    /// Responses larger than this fail instead of filling memory.
    pub max_response_bytes: usize,
}

impl HttpConfig {
    pub fn new(device: impl Into<String>, base_url: impl Into<String>) -> Self {
        HttpConfig {
            device: device.into(),
            base_url: base_url.into(),
            tls: TlsMode::Verify,
            auth: HttpAuth::None,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_response_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Longest body excerpt quoted in a status error.
pub const BODY_EXCERPT_CHARS: usize = 512;

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("invalid HTTP settings for {device}: {reason}")]
    Config { device: String, reason: String },

    #[error("{op} on {device}: cannot connect: {reason}")]
    Connect {
        device: String,
        op: String,
        reason: String,
    },

    #[error("{op} on {device}: TLS handshake failed: {reason}")]
    Tls {
        device: String,
        op: String,
        reason: String,
    },

    #[error("{op} on {device} timed out: {phase} limit {limit:?}")]
    Timeout {
        device: String,
        op: String,
        /// `connect` or `request`.
        phase: &'static str,
        limit: Duration,
    },

    #[error("{op} on {device}: HTTP {status}: {body_excerpt}")]
    Status {
        device: String,
        op: String,
        status: u16,
        /// At most [`BODY_EXCERPT_CHARS`] characters, secrets redacted.
        body_excerpt: String,
    },

    #[error("{op} on {device}: response larger than the {limit}-byte limit")]
    TooLarge {
        device: String,
        op: String,
        limit: usize,
    },

    #[error("{op} on {device}: invalid JSON at {path}: {reason}")]
    Decode {
        device: String,
        op: String,
        /// Where in the document decoding failed (`result[0].vlans`, or `.` for the root).
        path: String,
        reason: String,
    },

    #[error("{op} on {device}: {reason}")]
    Transport {
        device: String,
        op: String,
        reason: String,
    },
}

impl HttpError {
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// A response read within the limits.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: bytes::Bytes,
}

/// An HTTP(S) client for one device.
#[derive(Debug, Clone)]
pub struct HttpClient {
    config: HttpConfig,
    base: reqwest::Url,
    client: reqwest::Client,
}

/// The error chain as one line (reqwest's Display stops at the outermost layer).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = s.source();
    }
    parts.join(": ")
}

fn looks_like_tls(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    [
        "certificate",
        "tls",
        "handshake",
        "unknownissuer",
        "peer sent",
    ]
    .iter()
    .any(|k| t.contains(k))
}

/// The one mapping of a failed send to an [`HttpError`] (eAPI, iControl REST): a timeout names its
/// phase and limit (`limits`: connect, request), a TLS failure gets `tls_hint` (what verified the
/// certificate), then refused connections, then the rest. `text` is the error chain with secrets
/// already redacted.
pub fn send_error(
    e: &reqwest::Error,
    (device, op): (&str, &str),
    text: String,
    (connect_timeout, request_timeout): (Duration, Duration),
    tls_hint: impl FnOnce() -> String,
) -> HttpError {
    let (device, op) = (device.to_owned(), op.to_owned());
    if e.is_timeout() {
        let connect = e.is_connect();
        return HttpError::Timeout {
            device,
            op,
            phase: if connect { "connect" } else { "request" },
            limit: if connect {
                connect_timeout
            } else {
                request_timeout
            },
        };
    }
    if e.is_connect() {
        if looks_like_tls(&text) {
            let hint = tls_hint();
            return HttpError::Tls {
                device,
                op,
                reason: if hint.is_empty() {
                    text
                } else {
                    format!("{text}; {hint}")
                },
            };
        }
        return HttpError::Connect {
            device,
            op,
            reason: text,
        };
    }
    HttpError::Transport {
        device,
        op,
        reason: text,
    }
}

/// Why the HTTP client could not be built ([`build_client`]); the caller names the device or service.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("in CA file {}: {source}", path.display())]
    CaRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("in CA file {}: {source}", path.display())]
    CaPem {
        path: PathBuf,
        #[source]
        source: reqwest::Error,
    },
    #[error("in CA file {}: it holds no PEM certificate", path.display())]
    CaEmpty { path: PathBuf },
    /// The causes' text ([`chain`]): reqwest's own says only "builder error".
    #[error("in building the HTTP client: {0}")]
    Build(String),
}

/// What a client trusts: a [`TlsMode`] with its CA file read ([`TlsMode::trust`]).
#[derive(Debug, Clone)]
pub enum TlsTrust {
    /// The platform's trust store (webpki roots).
    Platform,
    /// Only these certificates.
    Only(Vec<reqwest::Certificate>),
    /// Nothing is checked.
    Insecure,
}

impl TlsMode {
    /// The trust this mode names, its CA file read without blocking the runtime: a client is built
    /// inside a device's async connect, thousands at once.
    pub async fn trust(&self) -> Result<TlsTrust, ClientError> {
        let path = match self {
            TlsMode::Verify => return Ok(TlsTrust::Platform),
            TlsMode::Insecure => return Ok(TlsTrust::Insecure),
            TlsMode::CaFile(path) => path,
        };
        let pem = tokio::fs::read(path)
            .await
            .map_err(|source| ClientError::CaRead {
                path: path.clone(),
                source,
            })?;
        let certs =
            reqwest::Certificate::from_pem_bundle(&pem).map_err(|source| ClientError::CaPem {
                path: path.clone(),
                source,
            })?;
        if certs.is_empty() {
            return Err(ClientError::CaEmpty { path: path.clone() });
        }
        Ok(TlsTrust::Only(certs))
    }
}

/// The one HTTP client of netgw, for eAPI ([`HttpClient`]), iControl REST (`drivers/src/f5/rest.rs`) and
/// the Chef server (`src/store/chef/api.rs`): rustls, `trust` checking the server, both timeouts, and
/// redirects never followed. A request carries credentials or a signature made for the URL the user
/// named; following a redirect would send them to another address, so a 3xx answer is an error naming
/// its Location instead ([`redirect_reason`]). Errors are the reason only; the caller names the device.
pub fn build_client(
    connect: Duration,
    request: Duration,
    trust: TlsTrust,
) -> Result<reqwest::Client, ClientError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(connect)
        .timeout(request)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("netgw/", env!("CARGO_PKG_VERSION")));
    match trust {
        TlsTrust::Platform => {}
        TlsTrust::Only(certs) => {
            builder = builder.tls_built_in_root_certs(false);
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        TlsTrust::Insecure => builder = builder.danger_accept_invalid_certs(true),
    }
    builder.build().map_err(|e| ClientError::Build(chain(&e)))
}

/// Why a response body could not be read whole.
#[derive(Debug)]
pub enum BodyError {
    /// Larger than the limit: said by its Content-Length, or reached while reading.
    TooLarge,
    /// The connection failed after `read` bytes.
    Read { read: usize, error: reqwest::Error },
}

/// The whole body of `resp`, refused as soon as it is known to exceed `limit` bytes so that a device
/// or server cannot fill memory. The one body reader of eAPI, iControl REST and the Chef server.
pub async fn read_body(
    resp: &mut reqwest::Response,
    limit: usize,
) -> Result<bytes::Bytes, BodyError> {
    if resp
        .content_length()
        .is_some_and(|n| n > u64::try_from(limit).unwrap_or(u64::MAX))
    {
        return Err(BodyError::TooLarge);
    }
    let mut buf = bytes::BytesMut::new();
    while let Some(chunk) = resp.chunk().await.map_err(|error| BodyError::Read {
        read: buf.len(),
        error,
    })? {
        if buf.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// For a redirect (3xx) answer, the error text naming where it pointed; `None` for any other status.
pub fn redirect_reason(status: u16, headers: &reqwest::header::HeaderMap) -> Option<String> {
    if !(300..400).contains(&status) {
        return None;
    }
    let location = headers
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("(no Location header)");
    Some(format!(
        "redirected to {location}; netgw follows no redirects: configure the final URL"
    ))
}

impl HttpClient {
    pub async fn new(config: HttpConfig) -> Result<Self, HttpError> {
        let cfg_err = |reason: String| HttpError::Config {
            device: config.device.clone(),
            reason,
        };
        let mut base = reqwest::Url::parse(&config.base_url)
            .map_err(|e| cfg_err(format!("base URL {:?}: {e}", config.base_url)))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(cfg_err(format!(
                "base URL {:?} is not http(s)",
                config.base_url
            )));
        }
        if !base.path().ends_with('/') {
            // Url::join replaces the last segment otherwise.
            let p = format!("{}/", base.path());
            base.set_path(&p);
        }
        if config.request_timeout.is_zero() || config.connect_timeout.is_zero() {
            return Err(cfg_err("timeouts must be above zero".into()));
        }
        let trust = config
            .tls
            .trust()
            .await
            .map_err(|e| cfg_err(e.to_string()))?;
        let client = build_client(config.connect_timeout, config.request_timeout, trust)
            .map_err(|e| cfg_err(e.to_string()))?;
        Ok(HttpClient {
            config,
            base,
            client,
        })
    }

    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// Replace the credentials (e.g. with the token an F5 login returned).
    pub fn set_auth(&mut self, auth: HttpAuth) {
        self.config.auth = auth;
    }

    fn url(&self, op: &str, path: &str) -> Result<reqwest::Url, HttpError> {
        self.base
            .join(path.trim_start_matches('/'))
            .map_err(|e| HttpError::Config {
                device: self.config.device.clone(),
                reason: format!("{op}: bad path: {e}"),
            })
    }

    fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for s in self.config.auth.secrets() {
            if !s.is_empty() {
                out = out.replace(&s, "<redacted>");
            }
        }
        out
    }

    /// What verified the certificate and which settings change it, for TLS errors.
    fn trust_hint(&self) -> String {
        let used = match &self.config.tls {
            TlsMode::Verify => "the system's trusted CAs".to_owned(),
            TlsMode::CaFile(p) => format!("the CA file {}", p.display()),
            TlsMode::Insecure => "nothing (verification off)".to_owned(),
        };
        format!(
            "certificate checked against {used} (set by the inventory's data.netgw.tls_ca / \
             tls_verify, else --tls-ca / NETGW_TLS_CA or --no-tls-verify / NETGW_NO_TLS_VERIFY=1)"
        )
    }

    fn map_send_error(&self, op: &str, e: reqwest::Error) -> HttpError {
        let limits = (self.config.connect_timeout, self.config.request_timeout);
        let text = self.redact(&chain(&e));
        send_error(&e, (&self.config.device, op), text, limits, || {
            self.trust_hint()
        })
    }

    /// Send a request and read the whole response within the size limit; any status is returned.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<HttpResponse, HttpError> {
        let op = format!("{method} /{}", path.trim_start_matches('/'));
        let url = self.url(&op, path)?;
        let mut req = self
            .client
            .request(method, url)
            .header(reqwest::header::ACCEPT, "application/json");
        req = match &self.config.auth {
            HttpAuth::None => req,
            HttpAuth::Basic { username, password } => {
                req.basic_auth(username, Some(password.expose()))
            }
            HttpAuth::Bearer(token) => req.bearer_auth(token.expose()),
            HttpAuth::Header { name, value } => req.header(name.as_str(), value.expose()),
        };
        if let Some(b) = body {
            req = req.json(b);
        }
        let mut resp = req.send().await.map_err(|e| self.map_send_error(&op, e))?;
        let status = resp.status();
        if let Some(reason) = redirect_reason(status.as_u16(), resp.headers()) {
            return Err(HttpError::Status {
                device: self.config.device.clone(),
                op,
                status: status.as_u16(),
                body_excerpt: reason,
            });
        }
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let limit = self.config.max_response_bytes;
        let too_large = || HttpError::TooLarge {
            device: self.config.device.clone(),
            op: op.clone(),
            limit,
        };
        let body = match read_body(&mut resp, limit).await {
            Ok(b) => b,
            Err(BodyError::TooLarge) => return Err(too_large()),
            Err(BodyError::Read { error, .. }) if error.is_timeout() => {
                return Err(HttpError::Timeout {
                    device: self.config.device.clone(),
                    op,
                    phase: "request",
                    limit: self.config.request_timeout,
                });
            }
            Err(BodyError::Read { read, error }) => {
                return Err(HttpError::Transport {
                    device: self.config.device.clone(),
                    op,
                    reason: format!(
                        "reading the body after {read} bytes: {}",
                        self.redact(&chain(&error))
                    ),
                });
            }
        };
        // The body is read: the connection goes back to the pool from hyper's connection task. Let it
        // run before the caller's next request, which would otherwise race a new connection (a TLS
        // handshake on both sides) against the one about to come back (hyperium/hyper#4134).
        drop(resp);
        tokio::task::yield_now().await;
        Ok(HttpResponse {
            status: status.as_u16(),
            content_type,
            body,
        })
    }

    fn status_error(&self, op: &str, status: StatusCode, body: &[u8]) -> HttpError {
        let text = String::from_utf8_lossy(body);
        let redacted = self.redact(&text);
        let mut excerpt: String = redacted.chars().take(BODY_EXCERPT_CHARS).collect();
        if redacted.chars().count() > BODY_EXCERPT_CHARS {
            excerpt.push_str("...");
        }
        HttpError::Status {
            device: self.config.device.clone(),
            op: op.to_owned(),
            status: status.as_u16(),
            body_excerpt: excerpt.trim().to_owned(),
        }
    }

    /// Send, require a 2xx status, decode the JSON body into `T` (errors carry the JSON path).
    pub async fn request_json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<T, HttpError> {
        let op = format!("{method} /{}", path.trim_start_matches('/'));
        let resp = self.send(method, path, body).await?;
        let status = StatusCode::from_u16(resp.status).unwrap_or(StatusCode::BAD_GATEWAY);
        if !status.is_success() {
            return Err(self.status_error(&op, status, &resp.body));
        }
        decode_json(&resp.body).map_err(|(path, reason)| HttpError::Decode {
            device: self.config.device.clone(),
            op,
            path,
            reason,
        })
    }

    pub async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, HttpError> {
        self.request_json(Method::GET, path, None).await
    }

    pub async fn post_json<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, HttpError> {
        let value = self.to_value(path, body)?;
        self.request_json(Method::POST, path, Some(&value)).await
    }

    pub async fn put_json<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, HttpError> {
        let value = self.to_value(path, body)?;
        self.request_json(Method::PUT, path, Some(&value)).await
    }

    pub async fn patch_json<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, HttpError> {
        let value = self.to_value(path, body)?;
        self.request_json(Method::PATCH, path, Some(&value)).await
    }

    /// DELETE; the body (often empty) is returned as JSON `null` when empty.
    pub async fn delete(&self, path: &str) -> Result<serde_json::Value, HttpError> {
        let op = format!("DELETE /{}", path.trim_start_matches('/'));
        let resp = self.send(Method::DELETE, path, None).await?;
        let status = StatusCode::from_u16(resp.status).unwrap_or(StatusCode::BAD_GATEWAY);
        if !status.is_success() {
            return Err(self.status_error(&op, status, &resp.body));
        }
        if resp.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(serde_json::Value::Null);
        }
        decode_json(&resp.body).map_err(|(path, reason)| HttpError::Decode {
            device: self.config.device.clone(),
            op,
            path,
            reason,
        })
    }

    fn to_value<B: Serialize>(&self, path: &str, body: &B) -> Result<serde_json::Value, HttpError> {
        serde_json::to_value(body).map_err(|e| HttpError::Config {
            device: self.config.device.clone(),
            reason: format!("request body for {path}: {e}"),
        })
    }
}

/// Decode JSON, reporting where it failed: (path, reason).
pub fn decode_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, (String, String)> {
    // Tracking the path costs on every element (a fifth of an EOS converge's instructions when the
    // target is mostly `Value`): decode plainly, and only a body that fails is decoded again for the
    // path of its error.
    if let Ok(v) = serde_json::from_slice(body) {
        return Ok(v);
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        (path, e.into_inner().to_string())
    })?;
    de.end().map_err(|e| (".".to_owned(), e.to_string()))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Reply {
        result: Vec<Item>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Item {
        vlans: std::collections::BTreeMap<String, u32>,
    }

    #[test]
    fn http_decode_json_reports_the_path() {
        let (path, reason) =
            decode_json::<Reply>(br#"{"result": [{"vlans": {"1": 1}}, {"vlans": {"2": "x"}}]}"#)
                .unwrap_err();
        assert_eq!(path, "result[1].vlans.2");
        assert!(reason.contains("invalid type"), "{reason}");
        let (_, reason) = decode_json::<Reply>(br#"{"result": [{"vlans": {"#).unwrap_err();
        assert!(reason.contains("EOF"), "{reason}");
        assert!(decode_json::<serde_json::Value>(b"{} trailing").is_err());
    }

    #[tokio::test]
    async fn http_config_rejects_bad_urls() {
        let err = HttpClient::new(HttpConfig::new("sw1", "ftp://x"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("sw1"));
        assert!(
            HttpClient::new(HttpConfig::new("sw1", "not a url"))
                .await
                .is_err()
        );
        let mut cfg = HttpConfig::new("sw1", "https://127.0.0.1:1");
        cfg.tls = TlsMode::CaFile("/nonexistent/ca.pem".into());
        assert!(
            HttpClient::new(cfg)
                .await
                .unwrap_err()
                .to_string()
                .contains("/nonexistent/ca.pem")
        );
    }

    #[tokio::test]
    async fn http_urls_join_under_the_base_path() {
        let c = HttpClient::new(HttpConfig::new("f5", "https://127.0.0.1:8443/mgmt"))
            .await
            .unwrap();
        assert_eq!(
            c.url("GET", "/tm/net/vlan").unwrap().as_str(),
            "https://127.0.0.1:8443/mgmt/tm/net/vlan"
        );
        assert_eq!(
            c.url("GET", "command-api").unwrap().as_str(),
            "https://127.0.0.1:8443/mgmt/command-api"
        );
    }

    #[tokio::test]
    async fn http_redacts_secrets_in_excerpts_and_debug() {
        let mut cfg = HttpConfig::new("f5", "https://127.0.0.1:8443");
        cfg.auth = HttpAuth::Basic {
            username: "admin".into(),
            password: Secret::new("s3cr3t-pw"),
        };
        let c = HttpClient::new(cfg).await.unwrap();
        let err = c.status_error(
            "POST /mgmt/shared/authn/login",
            StatusCode::UNAUTHORIZED,
            format!(
                "{{\"message\": \"bad password s3cr3t-pw\", \"pad\": \"{}\"}}",
                "x".repeat(2000)
            )
            .as_bytes(),
        );
        let msg = err.to_string();
        assert!(!msg.contains("s3cr3t-pw"), "{msg}");
        assert!(msg.contains("<redacted>") && msg.contains("401"), "{msg}");
        assert!(msg.len() < BODY_EXCERPT_CHARS + 200, "{}", msg.len());
        assert!(!format!("{c:?}").contains("s3cr3t-pw"));
    }

    /// One HTTP server on 127.0.0.1 that answers every connection with `answer`, and what it was sent
    /// on the first connection.
    async fn answering(answer: &'static str) -> (String, tokio::task::JoinHandle<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let n = sock.read(&mut buf).await.unwrap();
            sock.write_all(answer.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        (base, task)
    }

    #[tokio::test]
    async fn http_redirect_is_an_error_naming_the_location_and_is_not_followed() {
        let (base, server) = answering(
            "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:9/elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )
        .await;
        let mut cfg = HttpConfig::new("sw1", base);
        cfg.connect_timeout = Duration::from_secs(5);
        cfg.request_timeout = Duration::from_secs(5);
        let c = HttpClient::new(cfg).await.unwrap();
        let err = c
            .get_json::<serde_json::Value>("command-api")
            .await
            .unwrap_err();
        assert_eq!(err.status(), Some(302), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("redirected to http://127.0.0.1:9/elsewhere") && msg.contains("sw1"),
            "{msg}"
        );
        assert!(server.await.unwrap().starts_with("GET /command-api "));
    }

    #[test]
    fn http_redirect_reason_only_for_3xx() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(reqwest::header::LOCATION, "/login".parse().unwrap());
        assert!(redirect_reason(301, &h).unwrap().contains("/login"));
        assert!(redirect_reason(200, &h).is_none());
        assert!(redirect_reason(404, &h).is_none());
        assert!(
            redirect_reason(307, &reqwest::header::HeaderMap::new())
                .unwrap()
                .contains("no Location")
        );
    }
}
