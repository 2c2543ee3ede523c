//! The Chef server store: desired state, roles and environments from a Chef server, current state
//! saved back to it, over signed requests (docs/design.md §3 steps 2 and 10, §5).
//!
//! ```text
//!   load_desired ─▶ GET /nodes/N/desired ──200──▶ desired (RFC 45 server)
//!                        │404
//!                        └▶ GET /nodes/N ──200──▶ desired part; fallback mode for the rest of the run
//!                                        ──404──▶ node does not exist (create_node: POST /nodes)
//!   save_current ─▶ RFC 45:   PUT /nodes/N/current {default, override, automatic}
//!                  fallback:  GET /nodes/N (fresh) ─▶ replace default/override/automatic ─▶ PUT /nodes/N
//! ```
//!
//! RFC 45 ("Chef Node Desired and Current State") splits a node into what the operator imposes and what
//! a run computes; no Chef server implemented it, so the fallback is the common path. Re-reading the node
//! right before the save keeps an operator's run-list, environment, tag or normal-attribute change made
//! during the run (CHEF-4978: chef-client saved the whole node it loaded at the start, reverting them).
//! The window left is the GET-to-PUT round trip: Chef's node API has no conditional PUT.
//!
//! Desired state is written only when the run created the node. Bodies over [`MAX_NODE_BYTES`](super::size::MAX_NODE_BYTES) are
//! refused before sending, naming the largest automatic subtrees so the user can allowlist.

pub mod api;
pub mod auth;
pub mod constraint;
pub mod search;

use super::{NodeStore, StoreError};
use crate::kind::NodeErrorKind;
use api::{Api, Client};
use async_trait::async_trait;
use auth::{AuthError, ClientKey, SignVersion};
use netgw_models::node::DEFAULT_ENVIRONMENT;
use netgw_models::{CurrentState, DesiredState, Environment, Node, NodeName, Role};
use reqwest::Method;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use thiserror::Error;
use tracing::{debug, info};

/// Errors talking to a Chef server. None carries a key or a signature.
#[derive(Debug, Error)]
pub enum ChefError {
    #[error("chef server URL {url:?}: {reason}")]
    Url { url: String, reason: String },

    #[error(transparent)]
    Auth(#[from] AuthError),

    #[error("{method} {url}: {message}")]
    Http {
        method: String,
        url: String,
        message: String,
    },

    #[error(
        "{method} {url}: HTTP {status} as client {client:?} (signing protocol {sign_version}): {message} (check the client name and key, and its permissions)"
    )]
    Refused {
        method: String,
        url: String,
        status: u16,
        client: String,
        sign_version: SignVersion,
        message: String,
    },

    #[error("{method} {url}: HTTP {status}: {message}")]
    Status {
        method: String,
        url: String,
        status: u16,
        message: String,
    },

    #[error(
        "{url}: no common server API version: the server offers {min}..{max}, netgw speaks {}..{}",
        api::MIN_API_VERSION,
        api::MAX_API_VERSION
    )]
    ApiVersion { url: String, min: u32, max: u32 },

    #[error("{url}: unexpected answer: {message}")]
    Decode { url: String, message: String },

    #[error("{url}: response larger than {limit} bytes")]
    TooLargeResponse { url: String, limit: usize },

    #[error(
        "node {node}: body is {size} bytes, over the Chef server's {limit}-byte limit; not sent. Largest automatic subtrees: {largest} (limit them with an automatic-attribute allowlist)"
    )]
    TooLarge {
        node: String,
        size: usize,
        limit: usize,
        largest: String,
    },

    #[error(
        "node {node}: deleted from {url} during the run; current state not saved (recreating it would lose the deletion)"
    )]
    NodeVanished { node: String, url: String },
}

impl ChefError {
    /// The server refusing the key is `auth`, a request it calls bad is the operator's
    /// configuration, anything else is the server's failure.
    pub fn kind(&self) -> NodeErrorKind {
        match self {
            _ if self.is_auth() => NodeErrorKind::Auth,
            ChefError::Url { .. } | ChefError::TooLarge { .. } => NodeErrorKind::Config,
            ChefError::Status { status, .. } if *status < 500 => NodeErrorKind::Config,
            _ => NodeErrorKind::Server,
        }
    }

    /// True when the server refused the client (HTTP 401/403).
    pub fn is_auth(&self) -> bool {
        matches!(self, ChefError::Refused { .. } | ChefError::Auth(_))
    }
}

/// How to reach a Chef server and who to be there.
#[derive(Debug, Clone)]
pub struct ChefConfig {
    /// `https://chef.example/organizations/ORG` (organisation path optional).
    pub url: String,
    /// The gateway's client (admin-capable, or with ACLs on the device nodes).
    pub client_name: String,
    pub client_key: PathBuf,
    pub sign_version: SignVersion,
    /// Per-node identities: node name -> (client name, key path). That node's requests are signed
    /// as its own client.
    pub node_keys: HashMap<String, (String, PathBuf)>,
    /// Whole-request timeout.
    pub timeout: Duration,
}

impl ChefConfig {
    pub fn new(
        url: impl Into<String>,
        client_name: impl Into<String>,
        client_key: impl Into<PathBuf>,
    ) -> Self {
        ChefConfig {
            url: url.into(),
            client_name: client_name.into(),
            client_key: client_key.into(),
            sign_version: SignVersion::default(),
            node_keys: HashMap::new(),
            timeout: Duration::from_secs(60),
        }
    }

    pub fn sign_version(mut self, v: SignVersion) -> Self {
        self.sign_version = v;
        self
    }

    /// Sign `node`'s requests as `client` with the key at `key`.
    pub fn node_key(
        mut self,
        node: impl Into<String>,
        client: impl Into<String>,
        key: impl Into<PathBuf>,
    ) -> Self {
        self.node_keys
            .insert(node.into(), (client.into(), key.into()));
        self
    }
}

/// A Chef server as a [`NodeStore`]. Cheap to clone; one per run (it remembers fallback mode).
#[derive(Debug, Clone)]
pub struct ChefServer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    api: Api,
    /// The server has no `/nodes/N/desired` (RFC 45 backwards compatibility mode).
    fallback: AtomicBool,
}

impl From<ChefError> for StoreError {
    fn from(e: ChefError) -> Self {
        StoreError::Chef(Box::new(e))
    }
}

fn node_path(name: &str) -> String {
    format!("/nodes/{name}")
}

impl ChefServer {
    /// Load the keys and check the URL; no request is sent yet.
    pub fn new(config: ChefConfig) -> Result<Self, ChefError> {
        let client = Client {
            name: config.client_name.clone(),
            key: ClientKey::load(&config.client_key)?,
        };
        let mut node_clients = HashMap::new();
        for (node, (name, key)) in &config.node_keys {
            node_clients.insert(
                node.clone(),
                Client {
                    name: name.clone(),
                    key: ClientKey::load(key)?,
                },
            );
        }
        let api = Api::new(
            &config.url,
            config.sign_version,
            client,
            node_clients,
            config.timeout,
        )?;
        Ok(ChefServer {
            inner: Arc::new(Inner {
                api,
                fallback: AtomicBool::new(false),
            }),
        })
    }

    pub fn api(&self) -> &Api {
        &self.inner.api
    }

    /// True once the server turned out to have no RFC 45 endpoints.
    pub fn fallback_mode(&self) -> bool {
        self.inner.fallback.load(Ordering::Relaxed)
    }

    fn set_fallback(&self) {
        if !self.inner.fallback.swap(true, Ordering::Relaxed) {
            info!(server = %self.inner.api.base(), "no /nodes/NAME/desired on this server: RFC 45 backwards compatibility mode");
        }
    }

    /// Names of the nodes a search query matches (`name:sw-*`, `role:leaf`, `vendor:arista`).
    pub async fn search_nodes(&self, query: &str) -> Result<Vec<String>, StoreError> {
        Ok(search::search_nodes(&self.inner.api, query).await?)
    }

    /// A whole node object as the server has it, `None` when it does not exist.
    pub async fn get_node(&self, name: &str) -> Result<Option<Value>, ChefError> {
        let resp = self
            .inner
            .api
            .request(Method::GET, &node_path(name), &[], None, Some(name))
            .await?;
        if resp.status == 404 {
            return Ok(None);
        }
        let v = resp.ok()?.json()?;
        if !v.is_object() {
            return Err(ChefError::Decode {
                url: self.describe_str(name),
                message: "a node must be a JSON object".into(),
            });
        }
        Ok(Some(v))
    }

    /// Create or replace a whole node (uploads; the converge run never calls this).
    pub async fn upload_node(&self, node: &Node) -> Result<(), ChefError> {
        let body = serde_json::to_value(node).map_err(|e| self.decode_err("/nodes", e))?;
        check_size(node.name.as_str(), &body)?;
        self.upsert(
            "/nodes",
            &node_path(node.name.as_str()),
            &body,
            Some(node.name.as_str()),
        )
        .await
    }

    /// Create or replace a role.
    pub async fn upload_role(&self, role: &Role) -> Result<(), ChefError> {
        let body = serde_json::to_value(role).map_err(|e| self.decode_err("/roles", e))?;
        self.upsert("/roles", &format!("/roles/{}", role.name), &body, None)
            .await
    }

    /// Create or replace an environment.
    pub async fn upload_environment(&self, env: &Environment) -> Result<(), ChefError> {
        let body = serde_json::to_value(env).map_err(|e| self.decode_err("/environments", e))?;
        self.upsert(
            "/environments",
            &format!("/environments/{}", env.name),
            &body,
            None,
        )
        .await
    }

    /// POST to the collection; on 409 (exists) PUT to the object.
    async fn upsert(
        &self,
        collection: &str,
        object: &str,
        body: &Value,
        node: Option<&str>,
    ) -> Result<(), ChefError> {
        let api = &self.inner.api;
        let resp = api
            .request(Method::POST, collection, &[], Some(body), node)
            .await?;
        if resp.status == 409 {
            api.request(Method::PUT, object, &[], Some(body), node)
                .await?
                .ok()?;
            return Ok(());
        }
        resp.ok()?;
        Ok(())
    }

    fn describe_str(&self, name: &str) -> String {
        format!("{}{}", self.inner.api.base(), node_path(name))
    }

    fn decode_err(&self, path: &str, e: impl std::fmt::Display) -> ChefError {
        ChefError::Decode {
            url: format!("{}{path}", self.inner.api.base()),
            message: e.to_string(),
        }
    }

    /// A node object from the server, validated (name, environment, run-list).
    fn parse_node(&self, name: &NodeName, v: &Value) -> Result<Node, ChefError> {
        let node = Node::from_json(&v.to_string())
            .map_err(|e| self.decode_err(&node_path(name.as_str()), e))?;
        if &node.name != name {
            return Err(self.decode_err(
                &node_path(name.as_str()),
                format!("the server answered with node {:?}", node.name.as_str()),
            ));
        }
        Ok(node)
    }

    /// GET `/nodes/N/desired` (RFC 45). `Ok(None)` on 404 (caller decides what that means).
    async fn get_rfc45(&self, name: &NodeName, part: &str) -> Result<Option<Value>, ChefError> {
        let path = format!("{}/{part}", node_path(name.as_str()));
        let resp = self
            .inner
            .api
            .request(Method::GET, &path, &[], None, Some(name.as_str()))
            .await?;
        if resp.status == 404 {
            return Ok(None);
        }
        Ok(Some(resp.ok()?.json()?))
    }

    async fn save_fallback(
        &self,
        loaded: &DesiredState,
        current: &CurrentState,
    ) -> Result<(), ChefError> {
        let name = current.name.as_str();
        // Re-read immediately before writing: the desired part (and every field netgw does not model)
        // is the server's fresh copy, never the one loaded at the start of the run (CHEF-4978).
        let Some(mut fresh) = self.get_node(name).await? else {
            return Err(ChefError::NodeVanished {
                node: name.to_owned(),
                url: self.describe_str(name),
            });
        };
        if let Ok(node) = self.parse_node(&current.name, &fresh)
            && node.desired() != *loaded
        {
            info!(
                node = name,
                "the node's desired state changed during the run; keeping the change (CHEF-4978)"
            );
        }
        if let Value::Object(m) = &mut fresh {
            m.insert("default".into(), Value::Object(current.default.clone()));
            m.insert("override".into(), Value::Object(current.override_.clone()));
            m.insert("automatic".into(), Value::Object(current.automatic.clone()));
        }
        check_size(name, &fresh)?;
        self.inner
            .api
            .request(Method::PUT, &node_path(name), &[], Some(&fresh), Some(name))
            .await?
            .ok()?;
        Ok(())
    }
}

/// Refuse a body over [`MAX_NODE_BYTES`](super::size::MAX_NODE_BYTES), naming the largest
/// automatic subtrees.
pub fn check_size(node: &str, body: &Value) -> Result<(), ChefError> {
    let automatic = body.get("automatic").and_then(Value::as_object);
    super::size::check_node_size(body, automatic).map_err(|e| ChefError::TooLarge {
        node: node.to_owned(),
        size: e.size,
        limit: super::size::MAX_NODE_BYTES,
        largest: e.largest,
    })
}

impl ChefServer {
    /// A node's RFC 45 `part` (`desired`, `current`), decoded; `None` in fallback mode or where the
    /// server answers 404.
    async fn rfc45<T: serde::de::DeserializeOwned>(
        &self,
        name: &NodeName,
        part: &str,
    ) -> Result<Option<T>, StoreError> {
        if self.fallback_mode() {
            return Ok(None);
        }
        let Some(v) = self.get_rfc45(name, part).await? else {
            return Ok(None);
        };
        let path = format!("{}/{part}", node_path(name.as_str()));
        let decoded = serde_json::from_value(v).map_err(|e| self.decode_err(&path, e))?;
        Ok(Some(decoded))
    }
}

#[async_trait]
impl NodeStore for ChefServer {
    fn describe(&self, name: &NodeName) -> String {
        self.describe_str(name.as_str())
    }

    async fn search_nodes(&self, query: &str) -> Result<Option<Vec<String>>, StoreError> {
        Ok(Some(ChefServer::search_nodes(self, query).await?))
    }

    async fn load_desired(&self, name: &NodeName) -> Result<Option<DesiredState>, StoreError> {
        if let Some(d) = self.rfc45(name, "desired").await? {
            return Ok(Some(d));
        }
        match self.get_node(name.as_str()).await? {
            Some(v) => {
                // /desired answered 404 but the node exists: the server has no RFC 45 endpoints.
                self.set_fallback();
                Ok(Some(self.parse_node(name, &v)?.desired()))
            }
            None => Ok(None),
        }
    }

    async fn load_current(&self, name: &NodeName) -> Result<Option<CurrentState>, StoreError> {
        if let Some(c) = self.rfc45(name, "current").await? {
            return Ok(Some(c));
        }
        let Some(v) = self.get_node(name.as_str()).await? else {
            return Ok(None);
        };
        let c = self.parse_node(name, &v)?.current();
        if c.default.is_empty() && c.override_.is_empty() && c.automatic.is_empty() {
            return Ok(None);
        }
        Ok(Some(c))
    }

    async fn create_node(&self, desired: &DesiredState) -> Result<bool, StoreError> {
        let name = desired.name.as_str();
        let body = serde_json::to_value(Node::from_parts(desired.clone(), None))
            .map_err(|e| self.decode_err("/nodes", e))?;
        check_size(name, &body)?;
        let resp = self
            .inner
            .api
            .request(Method::POST, "/nodes", &[], Some(&body), Some(name))
            .await?;
        if resp.status == 409 {
            return Ok(false);
        }
        resp.ok()?;
        info!(node = name, "node created on the server");
        Ok(true)
    }

    async fn load_role(&self, name: &str) -> Result<Option<Role>, StoreError> {
        let path = format!("/roles/{name}");
        let resp = self
            .inner
            .api
            .request(Method::GET, &path, &[], None, None)
            .await?;
        if resp.status == 404 {
            return Ok(None);
        }
        let resp = resp.ok()?;
        let role = Role::from_json(&String::from_utf8_lossy(&resp.body))
            .map_err(|e| self.decode_err(&path, e))?;
        Ok(Some(role))
    }

    async fn load_environment(&self, name: &str) -> Result<Environment, StoreError> {
        let path = format!("/environments/{name}");
        let resp = self
            .inner
            .api
            .request(Method::GET, &path, &[], None, None)
            .await?;
        if resp.status == 404 {
            if name == DEFAULT_ENVIRONMENT {
                return Ok(Environment::default_environment());
            }
            return Err(StoreError::NotFound {
                kind: "environment",
                name: name.to_owned(),
                path: format!("{}{path}", self.inner.api.base()).into(),
            });
        }
        let resp = resp.ok()?;
        Ok(Environment::from_json(&String::from_utf8_lossy(&resp.body))
            .map_err(|e| self.decode_err(&path, e))?)
    }

    async fn save_current(
        &self,
        loaded: &DesiredState,
        current: &CurrentState,
    ) -> Result<(), StoreError> {
        let name = current.name.as_str();
        if !self.fallback_mode() {
            let body =
                serde_json::to_value(current).map_err(|e| self.decode_err(&node_path(name), e))?;
            check_size(name, &body)?;
            let path = format!("{}/current", node_path(name));
            let resp = self
                .inner
                .api
                .request(Method::PUT, &path, &[], Some(&body), Some(name))
                .await?;
            if resp.status != 404 {
                resp.ok()?;
                return Ok(());
            }
            debug!(node = name, "no /current endpoint");
            self.set_fallback();
        }
        Ok(self.save_fallback(loaded, current).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn size_refusal_names_largest_subtrees() {
        let big = "x".repeat(600_000);
        let body = json!({"name": "sw1", "automatic": {
            "interfaces": {"Et1": {"description": big.clone()}, "Et2": {"description": "y"}},
            "lldp": big,
            "hostname": "sw1"
        }});
        let e = check_size("sw1", &body).unwrap_err().to_string();
        assert!(e.contains("node sw1"), "{e}");
        assert!(e.contains("1000000-byte limit"), "{e}");
        assert!(e.contains("automatic.interfaces ("), "{e}");
        assert!(e.contains("automatic.lldp ("), "{e}");
        assert!(e.contains("automatic.interfaces.Et1 ("), "{e}");
        assert!(check_size("sw1", &json!({"automatic": {"a": 1}})).is_ok());
    }

    #[test]
    fn config_errors_are_clear_and_keyless() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/chef/mixlib-authentication/spec_private_key.pem"
        );
        let e = ChefServer::new(ChefConfig::new("ftp://x", "admin", dir))
            .unwrap_err()
            .to_string();
        assert!(e.contains("http://"), "{e}");
        let e = ChefServer::new(ChefConfig::new("http://x", "admin", "/nonexistent.pem"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent.pem"), "{e}");
        let s = ChefServer::new(ChefConfig::new(
            "http://127.0.0.1:1/organizations/o/",
            "admin",
            dir,
        ))
        .unwrap();
        assert_eq!(
            s.describe(&NodeName::new("sw1").unwrap()),
            "http://127.0.0.1:1/organizations/o/nodes/sw1"
        );
        assert!(!format!("{s:?}").contains("MIIE"));
    }
}
