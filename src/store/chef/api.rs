//! Signed requests to a Chef server, with server-API-version negotiation.
//!
//! Every request is signed (see [`super::auth`]) as the default client, or as a node's own client when
//! one was configured for it. The server API version (`X-Ops-Server-API-Version`, Chef Server API docs
//! "API versioning") starts at the highest netgw speaks; the server's answer (its
//! `X-Ops-Server-API-Version` response header, or a 406 body with `min_version`/`max_version`) settles
//! it for the rest of the run. goiardi offers 0..1.

use super::ChefError;
use super::auth::{self, ClientKey, SignRequest, SignVersion};
use netgw_transport::http::{BodyError, TlsTrust, build_client, read_body, redirect_reason};
use reqwest::{Method, Url};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tracing::debug;

/// Server API versions netgw speaks. Version 1 is the node, role, environment and search API netgw
/// uses; version 2 changed only client/user key handling, so it is not asked for.
pub const MIN_API_VERSION: u32 = 0;
pub const MAX_API_VERSION: u32 = 1;

/// Sent as `X-Chef-Version`: servers refuse clients older than they support; netgw speaks the API of
/// this chef-client release.
pub const CHEF_CLIENT_VERSION: &str = "18.0.0";

/// Largest response body read (a search page of big nodes stays well below this).
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// One identity requests are signed as.
#[derive(Debug, Clone)]
pub struct Client {
    pub name: String,
    pub key: ClientKey,
}

/// A server's answer (any status): callers decide what a 404 or 409 means.
#[derive(Debug)]
pub struct Response {
    pub method: Method,
    pub url: String,
    pub status: u16,
    pub body: Vec<u8>,
}

impl Response {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Fail unless 2xx, with the server's own message.
    pub fn ok(self) -> Result<Response, ChefError> {
        if self.is_success() {
            Ok(self)
        } else {
            Err(self.into_error())
        }
    }

    pub fn into_error(self) -> ChefError {
        ChefError::Status {
            method: self.method.to_string(),
            url: self.url.clone(),
            status: self.status,
            message: server_message(&self.body),
        }
    }

    pub fn json(&self) -> Result<Value, ChefError> {
        serde_json::from_slice(&self.body).map_err(|e| ChefError::Decode {
            url: self.url.clone(),
            message: e.to_string(),
        })
    }
}

/// The `error` of a Chef error body (`{"error": ["..."]}` or `{"error": "..."}`), bounded.
pub fn server_message(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => match (m.get("error"), m.get("message")) {
            (_, Some(Value::String(msg))) => msg.clone(),
            (Some(Value::Array(a)), _) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect::<Vec<_>>()
                .join("; "),
            (Some(Value::String(s)), _) => s.clone(),
            _ => Value::Object(m).to_string(),
        },
        _ => String::from_utf8_lossy(body).into_owned(),
    };
    let text = text.trim();
    match text.char_indices().nth(300) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}

/// Who signs a request.
#[derive(Debug, Clone, Copy)]
enum Signer<'a> {
    /// The node's own client if it has one, else the default client.
    As(Option<&'a str>),
    /// No one: the request leaves the server's origin.
    Nobody,
}

#[derive(Debug)]
pub struct Api {
    base: Url,
    http: reqwest::Client,
    sign_version: SignVersion,
    client: Client,
    node_clients: HashMap<String, Client>,
    api_version: AtomicU32,
    server_version: Mutex<Option<String>>,
}

impl Api {
    pub fn new(
        url: &str,
        sign_version: SignVersion,
        client: Client,
        node_clients: HashMap<String, Client>,
        timeout: Duration,
    ) -> Result<Self, ChefError> {
        let bad = |reason: &str| ChefError::Url {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let mut base = Url::parse(url).map_err(|e| bad(&e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(bad("must be an http:// or https:// URL"));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(bad("must not have a query or fragment"));
        }
        // `https://chef/organizations/ORG/` and `https://chef/organizations/ORG` are one base.
        let path = base.path().trim_end_matches('/').to_owned();
        base.set_path(&path);
        let http = build_client(
            Duration::from_secs(10).min(timeout),
            timeout,
            TlsTrust::Platform,
        )
        .map_err(|e| bad(&e.to_string()))?;
        Ok(Api {
            base,
            http,
            sign_version,
            client,
            node_clients,
            api_version: AtomicU32::new(MAX_API_VERSION),
            server_version: Mutex::new(None),
        })
    }

    /// The server URL (with its organisation path, if any), for messages.
    pub fn base(&self) -> String {
        self.base.as_str().trim_end_matches('/').to_owned()
    }

    /// The server API version in use (negotiated after the first answer).
    pub fn api_version(&self) -> u32 {
        self.api_version.load(Ordering::Relaxed)
    }

    /// Ask for this server API version next (the server answers 406 with its range when it cannot).
    pub fn set_api_version(&self, version: u32) {
        self.api_version.store(version, Ordering::Relaxed);
    }

    /// The server's `X-Chef-Version`, once it answered.
    pub fn server_version(&self) -> Option<String> {
        self.server_version.lock().ok().and_then(|g| g.clone())
    }

    pub fn sign_version(&self) -> SignVersion {
        self.sign_version
    }

    /// The client a node's requests are signed as.
    pub fn client_for(&self, node: Option<&str>) -> &Client {
        node.and_then(|n| self.node_clients.get(n))
            .unwrap_or(&self.client)
    }

    fn url(&self, path: &str, query: &[(&str, &str)]) -> Url {
        let mut url = self.base.clone();
        url.set_path(&format!("{}{path}", self.base.path().trim_end_matches('/')));
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    /// Send one signed request; `path` is relative to the base (`/nodes/sw1`). Renegotiates the server
    /// API version once on a 406.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
        node: Option<&str>,
    ) -> Result<Response, ChefError> {
        let body = match body {
            Some(v) => Some(serde_json::to_vec(v).map_err(|e| ChefError::Decode {
                url: self.url(path, &[]).to_string(),
                message: e.to_string(),
            })?),
            None => None,
        };
        let mut retried = false;
        loop {
            let version = self.api_version();
            let resp = self
                .send_once(method.clone(), path, query, body.as_deref(), node, version)
                .await?;
            if resp.status == 406
                && !retried
                && let Some(v) = self.renegotiate(&resp, version)?
            {
                debug!(from = version, to = v, "server API version renegotiated");
                retried = true;
                continue;
            }
            return Ok(resp);
        }
    }

    /// From a 406 answer: the version to retry with, `None` when the 406 was about something else.
    fn renegotiate(&self, resp: &Response, asked: u32) -> Result<Option<u32>, ChefError> {
        let Ok(v) = serde_json::from_slice::<Value>(&resp.body) else {
            return Ok(None);
        };
        let (Some(min), Some(max)) = (number(v.get("min_version")), number(v.get("max_version")))
        else {
            return Ok(None);
        };
        let pick = max.min(MAX_API_VERSION);
        if pick < min || pick == asked {
            return Err(ChefError::ApiVersion {
                url: self.base(),
                min,
                max,
            });
        }
        self.api_version.store(pick, Ordering::Relaxed);
        Ok(Some(pick))
    }

    /// A GET of an absolute URL the server handed out (a cookbook file's `url`): signed as chef-client
    /// signs it, with that URL's path, when it is on the server itself; sent unsigned elsewhere (an
    /// object store's pre-signed URL carries its own credentials).
    pub async fn get_url(&self, url: &str) -> Result<Response, ChefError> {
        let parsed = Url::parse(url).map_err(|e| ChefError::Url {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ChefError::Url {
                url: url.to_owned(),
                reason: "must be an http:// or https:// URL".into(),
            });
        }
        // A pre-signed URL's query is a credential: messages show the URL without it.
        let mut shown = parsed.clone();
        shown.set_query(None);
        let shown = shown.to_string();
        // Signed only for the server itself: a signature sent elsewhere could be replayed against
        // the server, for that path, until it expires.
        let signer = if parsed.origin() == self.base.origin() {
            Signer::As(None)
        } else {
            Signer::Nobody
        };
        self.send_to(Method::GET, parsed, shown, None, signer, self.api_version())
            .await
    }

    async fn send_once(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&[u8]>,
        node: Option<&str>,
        api_version: u32,
    ) -> Result<Response, ChefError> {
        let url = self.url(path, query);
        let shown = url.to_string();
        self.send_to(method, url, shown, body, Signer::As(node), api_version)
            .await
    }

    async fn send_to(
        &self,
        method: Method,
        url: Url,
        shown: String,
        body: Option<&[u8]>,
        signer: Signer<'_>,
        api_version: u32,
    ) -> Result<Response, ChefError> {
        let client = match signer {
            Signer::As(node) => self.client_for(node),
            Signer::Nobody => &self.client,
        };
        let ts = auth::timestamp(std::time::SystemTime::now());
        let api_version_s = api_version.to_string();
        // The signed path is the URL's path (organisation prefix included), never the query.
        let headers = match signer {
            Signer::Nobody => Vec::new(),
            Signer::As(_) => auth::sign(
                &client.key,
                self.sign_version,
                &SignRequest {
                    method: method.as_str(),
                    path: url.path(),
                    body: body.unwrap_or_default(),
                    user_id: &client.name,
                    timestamp: &ts,
                    server_api_version: &api_version_s,
                },
            )?,
        };
        let mut req = self
            .http
            .request(method.clone(), url)
            .header("Accept", "application/json")
            .header("X-Chef-Version", CHEF_CLIENT_VERSION)
            .header("X-Ops-Server-API-Version", &api_version_s);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        if let Some(b) = body {
            req = req
                .header("Content-Type", "application/json")
                .body(b.to_vec());
        }
        let http_err = |e: reqwest::Error| ChefError::Http {
            method: method.to_string(),
            url: shown.clone(),
            // reqwest's message names the URL and the cause, never request headers.
            message: e.without_url().to_string(),
        };
        let mut resp = req.send().await.map_err(http_err)?;
        let status = resp.status().as_u16();
        self.note_versions(resp.headers(), api_version);
        if let Some(message) = redirect_reason(status, resp.headers()) {
            return Err(ChefError::Status {
                method: method.to_string(),
                url: shown,
                status,
                message,
            });
        }
        let out = match read_body(&mut resp, MAX_RESPONSE_BYTES).await {
            Ok(b) => b.to_vec(),
            Err(BodyError::TooLarge) => {
                return Err(ChefError::TooLargeResponse {
                    url: shown,
                    limit: MAX_RESPONSE_BYTES,
                });
            }
            Err(BodyError::Read { error, .. }) => return Err(http_err(error)),
        };
        if status == 401 || status == 403 {
            return Err(ChefError::Refused {
                method: method.to_string(),
                url: shown,
                status,
                client: client.name.clone(),
                sign_version: self.sign_version,
                message: server_message(&out),
            });
        }
        Ok(Response {
            method,
            url: shown,
            status,
            body: out,
        })
    }

    /// Remember what the server says about itself: its `X-Chef-Version`, and the API version it
    /// answered with (`X-Ops-Server-API-Version: {"min_version":"0","max_version":"1",...}`).
    fn note_versions(&self, headers: &reqwest::header::HeaderMap, asked: u32) {
        if let Some(v) = headers.get("X-Chef-Version").and_then(|v| v.to_str().ok())
            && let Ok(mut g) = self.server_version.lock()
            && g.is_none()
        {
            *g = Some(v.to_owned());
        }
        let Some(info) = headers
            .get("X-Ops-Server-API-Version")
            .and_then(|v| v.to_str().ok())
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
        else {
            return;
        };
        if let Some(max) = number(info.get("max_version")) {
            let want = max.min(MAX_API_VERSION);
            let min = number(info.get("min_version")).unwrap_or(0);
            if want < asked && want >= min {
                self.api_version.store(want, Ordering::Relaxed);
            }
        }
    }
}

/// Chef servers write versions as numbers or strings.
fn number(v: Option<&Value>) -> Option<u32> {
    match v? {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_messages() {
        assert_eq!(server_message(br#"{"error":["a","b"]}"#), "a; b");
        assert_eq!(server_message(br#"{"error":"x"}"#), "x");
        assert_eq!(
            server_message(br#"{"error":"invalid-x-ops-server-api-version","message":"m"}"#),
            "m"
        );
        assert_eq!(server_message(b"plain"), "plain");
        assert!(server_message("é".repeat(1000).as_bytes()).ends_with("..."));
    }

    #[test]
    fn versions_as_numbers_or_strings() {
        assert_eq!(number(Some(&Value::from(1))), Some(1));
        assert_eq!(number(Some(&Value::from("2"))), Some(2));
        assert_eq!(number(Some(&Value::from(-1))), None);
        assert_eq!(number(None), None);
    }
}
