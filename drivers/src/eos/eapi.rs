//! Arista eAPI: JSON-RPC 2.0 `runCmds` over HTTP(S) `POST /command-api`, as pyeapi, NAPALM and Ansible
//! use it.
//!
//! ```text
//!   Eapi::run_json / run_text ──▶ request {"jsonrpc": "2.0", "method": "runCmds",
//!        │                                "params": {"version": 1, "cmds": ["enable", ...], "format": ...}}
//!        ▼
//!   dyn EapiTransport::post ──▶ HttpEapi (HttpClient: TLS, basic auth, timeouts)   — or a test double
//!        │
//!        ▼
//!   {"result": [...]} ─▶ one Value per command      {"error": {code, message, data}} ─▶ EapiError::Command
//!        (each decoded from its own text by answer::decode)
//! ```
//!
//! Every request starts with `enable` (pyeapi does the same), so configuration and `show running-config`
//! work whatever privilege level the HTTP session starts at; its result is dropped and error indexes are
//! reported against the caller's own command list. A command that fails stops the request there: the
//! commands before it have run (outside a configuration session nothing is transactional).

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use netgw_models::secret::Secret;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::driver::{DriverError, ErrorKind};
use crate::transport::http::{HttpClient, HttpError};

/// Output encoding asked of the device. `Json` answers are decoded into what the driver reads
/// (`super::answer`); `JsonWhole` asks the same of the device and decodes every answer whole, for
/// what wants a device's full output (the lab's shape tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    JsonWhole,
    Text,
}

impl Format {
    fn as_str(self) -> &'static str {
        match self {
            Format::Json | Format::JsonWhole => "json",
            Format::Text => "text",
        }
    }
}

/// Where a `runCmds` request goes. The real one is [`HttpEapi`]; tests substitute a recorder that answers
/// from fixtures, so everything above the bytes runs for real.
#[async_trait]
pub trait EapiTransport: Send + Sync {
    /// POST one JSON-RPC request to `/command-api` and return its reply.
    async fn post(&self, request: &Value) -> Result<Reply, HttpError>;
}

/// A `runCmds` reply, each command's answer left as its JSON text until [`parse_reply`] decodes it
/// for the command it answers (`super::answer`).
#[derive(Debug, Deserialize)]
pub struct Reply {
    #[serde(default)]
    id: Value,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    result: Option<Vec<Box<RawValue>>>,
}

impl Reply {
    /// The reply a JSON value spells (test doubles, recordings); an error when it is no JSON-RPC
    /// reply object.
    pub fn from_value(v: &Value) -> Result<Reply, serde_json::Error> {
        serde_json::from_str(&v.to_string())
    }
}

/// eAPI over the shared HTTP client.
#[derive(Debug)]
pub struct HttpEapi {
    client: HttpClient,
}

impl HttpEapi {
    pub fn new(client: HttpClient) -> Self {
        HttpEapi { client }
    }
}

#[async_trait]
impl EapiTransport for HttpEapi {
    async fn post(&self, request: &Value) -> Result<Reply, HttpError> {
        self.client.post_json("/command-api", request).await
    }
}

/// Errors of one `runCmds` request.
#[derive(Debug, thiserror::Error)]
pub enum EapiError {
    #[error(transparent)]
    Http(#[from] HttpError),

    /// The device answered with a JSON-RPC error object: a command was rejected (or could not run).
    #[error("{device}: {}", command_error_text(.code, .message, .command, .errors))]
    Command {
        device: String,
        /// eAPI error code (1002 invalid command, 1000 could not run, 1003 not permitted, ...).
        code: i64,
        /// The device's message, verbatim.
        message: String,
        /// Index of the failed command in the caller's list (the implicit `enable` is not counted), and
        /// the command; `None` when the device did not say which one failed, or `enable` itself failed.
        failed_index: Option<usize>,
        command: Option<String>,
        /// The failed command's own `errors` (e.g. `["Invalid input"]`).
        errors: Vec<String>,
    },

    /// A reply that is not a valid `runCmds` answer.
    #[error("{device}: malformed eAPI reply: {reason}")]
    Protocol { device: String, reason: String },
}

fn command_error_text(
    code: &i64,
    message: &str,
    command: &Option<String>,
    errors: &[String],
) -> String {
    let mut s = match command {
        Some(c) => format!("command {c:?} failed (eAPI error {code}: {message})"),
        None => format!("eAPI error {code}: {message}"),
    };
    if !errors.is_empty() {
        s.push_str(": ");
        s.push_str(&errors.join("; "));
    }
    s
}

impl EapiError {
    /// The command was refused by the device, as opposed to a transport or protocol failure.
    pub fn is_command_error(&self) -> bool {
        matches!(self, EapiError::Command { .. })
    }

    /// The device does not have this (show) command: an eAPI command error, or a server error status
    /// (some eAPI implementations, e.g. fake-switches, answer HTTP 500 to a command they lack). Used only
    /// for optional fact-gathering commands, never to discover capabilities.
    pub fn is_unavailable(&self) -> bool {
        match self {
            EapiError::Command { .. } => true,
            EapiError::Http(e) => e.status().is_some_and(|s| s >= 500),
            EapiError::Protocol { .. } => false,
        }
    }

    /// Map to the driver's error, naming the step that failed.
    pub fn into_driver(self, device: &str, step: &'static str) -> DriverError {
        match self {
            EapiError::Http(e) => {
                let kind = match &e {
                    HttpError::Connect { .. } | HttpError::Tls { .. } => ErrorKind::Connect,
                    HttpError::Timeout { .. } => ErrorKind::Timeout,
                    HttpError::Status {
                        status: 401 | 403, ..
                    } => ErrorKind::Auth,
                    HttpError::Config { .. } => ErrorKind::Config,
                    HttpError::Decode { .. } => ErrorKind::Parse,
                    _ => ErrorKind::Transport,
                };
                DriverError::Transport {
                    device: device.to_owned(),
                    step,
                    kind,
                    source: Box::new(e),
                }
            }
            EapiError::Command {
                code,
                message,
                command,
                errors,
                ..
            } => DriverError::Rejected {
                device: device.to_owned(),
                step,
                message: command_error_text(&code, &message, &command, &errors),
            },
            EapiError::Protocol { reason, .. } => DriverError::Parse {
                device: device.to_owned(),
                command: "runCmds".into(),
                reason,
            },
        }
    }
}

/// A `runCmds` client for one device.
pub struct Eapi {
    device: String,
    transport: Box<dyn EapiTransport>,
    enable_secret: Option<Secret>,
    next_id: AtomicU64,
    requests: AtomicU64,
}

impl std::fmt::Debug for Eapi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Eapi")
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

impl Eapi {
    pub fn new(
        device: impl Into<String>,
        transport: Box<dyn EapiTransport>,
        enable_secret: Option<Secret>,
    ) -> Self {
        Eapi {
            device: device.into(),
            transport,
            enable_secret,
            next_id: AtomicU64::new(1),
            requests: AtomicU64::new(0),
        }
    }

    pub fn device(&self) -> &str {
        &self.device
    }

    /// How many requests this client has sent (tests prove an empty plan sends nothing).
    pub fn requests_sent(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Run commands with JSON output: one value per command.
    pub async fn run_json(&self, cmds: &[String]) -> Result<Vec<Value>, EapiError> {
        self.run(cmds, Format::Json).await
    }

    /// Run commands with text output: the `output` string of each command.
    pub async fn run_text(&self, cmds: &[String]) -> Result<Vec<String>, EapiError> {
        let values = self.run(cmds, Format::Text).await?;
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| match v.get("output") {
                Some(Value::String(s)) => Ok(s.clone()),
                None | Some(Value::Null) => Ok(String::new()),
                Some(other) => Err(EapiError::Protocol {
                    device: self.device.clone(),
                    reason: format!("result[{i}].output is {other}, not text"),
                }),
            })
            .collect()
    }

    /// Run one command with JSON output.
    pub async fn run_one_json(&self, cmd: &str) -> Result<Value, EapiError> {
        let mut v = self.run_json(&[cmd.to_owned()]).await?;
        v.pop().ok_or_else(|| EapiError::Protocol {
            device: self.device.clone(),
            reason: "empty result".into(),
        })
    }

    /// Build the JSON-RPC request (with the leading `enable`).
    pub fn request(&self, id: &str, cmds: &[String], format: Format) -> Value {
        let enable = match &self.enable_secret {
            Some(s) if !s.is_empty() => json!({"cmd": "enable", "input": s.expose()}),
            _ => json!("enable"),
        };
        let mut all = Vec::with_capacity(cmds.len() + 1);
        all.push(enable);
        all.extend(cmds.iter().map(|c| Value::String(c.clone())));
        json!({
            "jsonrpc": "2.0",
            "method": "runCmds",
            "params": {"version": 1, "cmds": all, "format": format.as_str()},
            "id": id,
        })
    }

    pub async fn run(&self, cmds: &[String], format: Format) -> Result<Vec<Value>, EapiError> {
        let id = format!("netgw-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let request = self.request(&id, cmds, format);
        self.requests.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(device = %self.device, commands = cmds.len(), format = format.as_str(), "eAPI runCmds");
        let reply = self.transport.post(&request).await?;
        parse_reply(&self.device, &id, cmds, format, reply)
    }
}

/// Decode a `runCmds` reply for `cmds` (sent after the implicit `enable`) asked in `format`: one
/// value per command. Pure, for tests.
pub fn parse_reply(
    device: &str,
    id: &str,
    cmds: &[String],
    format: Format,
    reply: Reply,
) -> Result<Vec<Value>, EapiError> {
    let proto = |reason: String| EapiError::Protocol {
        device: device.to_owned(),
        reason,
    };
    if !reply.id.is_null() && reply.id.as_str() != Some(id) {
        return Err(proto(format!(
            "reply id {} does not match request id {id:?}",
            reply.id
        )));
    }
    if let Some(err) = reply.error.as_ref().filter(|e| !e.is_null()) {
        return Err(parse_error_object(device, cmds, err));
    }
    let Some(result) = reply.result else {
        return Err(proto(
            "neither `result` (array) nor `error` in the reply".into(),
        ));
    };
    if result.len() != cmds.len() + 1 {
        return Err(proto(format!(
            "{} results for {} commands (plus enable)",
            result.len(),
            cmds.len()
        )));
    }
    // After the implicit `enable`'s result, one per command.
    let decoded = cmds.iter().zip(&result[1..]).map(|(cmd, raw)| {
        let answer = match format {
            Format::Json => super::answer::decode(cmd, raw),
            Format::JsonWhole | Format::Text => serde_json::from_str(raw.get()),
        };
        answer.map_err(|e| {
            proto(format!(
                "the answer to {cmd:?}: {e}: {}",
                excerpt(raw.get())
            ))
        })
    });
    decoded.collect()
}

/// The JSON-RPC error object: `{"code": 1002, "message": "CLI command 3 of 4 'x' failed: invalid command",
/// "data": [{}, {}, {"errors": ["Invalid input"]}]}`. `data` holds one entry per command that ran, the
/// failed one last with its `errors`.
fn parse_error_object(device: &str, cmds: &[String], err: &Value) -> EapiError {
    let code = err.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let data = err.get("data").and_then(Value::as_array);
    let mut failed_at: Option<usize> = None;
    let mut errors = Vec::new();
    if let Some(data) = data {
        for (i, entry) in data.iter().enumerate() {
            if let Some(list) = entry.get("errors").and_then(Value::as_array) {
                failed_at = Some(i);
                errors = list
                    .iter()
                    .map(|e| {
                        e.as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| e.to_string())
                    })
                    .collect();
                break;
            }
        }
    }
    // Index 0 is our `enable`.
    let (failed_index, command) = match failed_at {
        Some(0) => (None, Some("enable".to_owned())),
        Some(i) => (Some(i - 1), cmds.get(i - 1).cloned()),
        None => (None, None),
    };
    EapiError::Command {
        device: device.to_owned(),
        code,
        message,
        failed_index,
        command,
        errors,
    }
}

fn excerpt(s: &str) -> String {
    if s.len() > 200 {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(c: &[&str]) -> Vec<String> {
        c.iter().map(|s| s.to_string()).collect()
    }

    fn reply(v: Value) -> Reply {
        Reply::from_value(&v).unwrap()
    }

    #[test]
    fn eapi_request_shape_and_enable_secret() {
        let e = Eapi::new("sw1", Box::new(Never), Some(Secret::new("en-pw")));
        let r = e.request("netgw-1", &cmds(&["show vlan"]), Format::Json);
        assert_eq!(r["method"], "runCmds");
        assert_eq!(r["params"]["version"], 1);
        assert_eq!(r["params"]["format"], "json");
        assert_eq!(
            r["params"]["cmds"][0],
            json!({"cmd": "enable", "input": "en-pw"})
        );
        assert_eq!(r["params"]["cmds"][1], "show vlan");
        assert!(!format!("{e:?}").contains("en-pw"));
        let e = Eapi::new("sw1", Box::new(Never), None);
        assert_eq!(
            e.request("x", &[], Format::Text)["params"]["cmds"],
            json!(["enable"])
        );
    }

    #[test]
    fn eapi_results_drop_enable_and_check_counts() {
        let c = cmds(&["show vlan", "show hostname"]);
        let ok =
            json!({"jsonrpc": "2.0", "id": "i", "result": [{}, {"vlans": {}}, {"hostname": "a"}]});
        let r = parse_reply("sw1", "i", &c, Format::Json, reply(ok)).unwrap();
        assert_eq!(r, vec![json!({"vlans": {}}), json!({"hostname": "a"})]);
        let short = json!({"jsonrpc": "2.0", "id": "i", "result": [{}, {}]});
        assert!(matches!(
            parse_reply("sw1", "i", &c, Format::Json, reply(short)),
            Err(EapiError::Protocol { .. })
        ));
        let wrong_id = json!({"jsonrpc": "2.0", "id": "other", "result": [{}, {}, {}]});
        assert!(
            parse_reply("sw1", "i", &c, Format::Json, reply(wrong_id))
                .unwrap_err()
                .to_string()
                .contains("does not match")
        );
        for not_a_reply in [json!([1]), json!("x"), json!({"result": {}})] {
            let parsed = Reply::from_value(&not_a_reply)
                .map(|r| parse_reply("sw1", "i", &c, Format::Json, r));
            assert!(!matches!(parsed, Ok(Ok(_))), "{not_a_reply}");
        }
    }

    #[test]
    fn eapi_error_object_names_the_failed_command() {
        // The exact reply fake-switches (arista_generic) gives to a rejected `switchport mode access`.
        let c = cmds(&[
            "configure",
            "vlan 11",
            "interface Ethernet2",
            "switchport mode access",
        ]);
        let reply = json!({"jsonrpc": "2.0", "id": "1", "error": {"data": [{"sourceDetail": ""}, {"sourceDetail": ""}, {"sourceDetail": ""}, {"sourceDetail": ""}, {"sourceDetail": "", "errors": ["Invalid input"]}], "message": "CLI command 5 of 5 'switchport mode access' failed: invalid command", "code": 1002}});
        let e = parse_reply("sw1", "1", &c, Format::Json, self::reply(reply)).unwrap_err();
        match &e {
            EapiError::Command {
                code,
                failed_index,
                command,
                errors,
                ..
            } => {
                assert_eq!(*code, 1002);
                assert_eq!(*failed_index, Some(3));
                assert_eq!(command.as_deref(), Some("switchport mode access"));
                assert_eq!(errors, &vec!["Invalid input".to_owned()]);
            }
            other => panic!("{other:?}"),
        }
        assert!(e.is_command_error() && e.is_unavailable());
        let d = e.into_driver("sw1", "commit");
        assert_eq!(d.kind(), ErrorKind::Rejected);
        let text = d.to_string();
        assert!(
            text.contains("switchport mode access")
                && text.contains("Invalid input")
                && text.contains("1002"),
            "{text}"
        );

        // A failing `enable` (wrong enable secret) is reported as such.
        let reply = json!({"id": "1", "error": {"code": 1002, "message": "CLI command 1 of 2 'enable' failed", "data": [{"errors": ["Bad secret"]}]}});
        match parse_reply(
            "sw1",
            "1",
            &cmds(&["show vlan"]),
            Format::Json,
            self::reply(reply),
        )
        .unwrap_err()
        {
            EapiError::Command {
                command,
                failed_index,
                ..
            } => {
                assert_eq!((command.as_deref(), failed_index), (Some("enable"), None))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn eapi_http_errors_keep_their_kind() {
        let e = EapiError::Http(HttpError::Status {
            device: "sw1".into(),
            op: "POST /command-api".into(),
            status: 401,
            body_excerpt: "Unauthorized".into(),
        });
        assert!(!e.is_unavailable());
        assert_eq!(e.into_driver("sw1", "facts").kind(), ErrorKind::Auth);
        let e = EapiError::Http(HttpError::Status {
            device: "sw1".into(),
            op: "POST /command-api".into(),
            status: 500,
            body_excerpt: "Processing Failed".into(),
        });
        assert!(e.is_unavailable());
        let e = EapiError::Http(HttpError::Timeout {
            device: "sw1".into(),
            op: "POST /command-api".into(),
            phase: "request",
            limit: std::time::Duration::from_secs(1),
        });
        assert!(!e.is_unavailable());
        assert_eq!(e.into_driver("sw1", "observe").kind(), ErrorKind::Timeout);
    }

    struct Never;
    #[async_trait]
    impl EapiTransport for Never {
        async fn post(&self, _: &Value) -> Result<Reply, HttpError> {
            Err(HttpError::Transport {
                device: "x".into(),
                op: "POST /command-api".into(),
                reason: "test".into(),
            })
        }
    }
}
