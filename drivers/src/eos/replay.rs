//! eAPI answered from a recorded session (feature `replay`); the recording itself is
//! `netgw_transport::replay`.

use super::eapi::{EapiTransport, Reply};
use async_trait::async_trait;
use netgw_transport::http::HttpError;
use netgw_transport::replay::Recording;
use serde_json::{Value, json};

/// eAPI `runCmds` answered from a recording: JSON answers for `format: json`, text (`output`) for
/// `format: text`; the first command not recorded fails the request as EOS does (error 1002).
#[derive(Debug)]
pub struct ReplayEapi(pub Recording);

#[async_trait]
impl EapiTransport for ReplayEapi {
    async fn post(&self, request: &Value) -> Result<Reply, HttpError> {
        let reply = self.answer(request);
        Reply::from_value(&reply).map_err(|e| HttpError::Transport {
            device: "replay".into(),
            op: "POST /command-api".into(),
            reason: e.to_string(),
        })
    }
}

impl ReplayEapi {
    /// The reply the recording gives to `request`.
    fn answer(&self, request: &Value) -> Value {
        let params = &request["params"];
        let text = params["format"] == "text";
        let cmds: Vec<&str> = params["cmds"]
            .as_array()
            .map(|a| a.iter().skip(1).filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut results = vec![json!({})];
        for (i, cmd) in cmds.iter().enumerate() {
            let answer = if cmd.starts_with("show ") {
                self.0.answer(cmd)
            } else {
                self.0.note_sent(*cmd);
                Some(if text { String::new() } else { "{}".to_owned() })
            };
            let parsed = match answer {
                Some(a) if text => Some(json!({ "output": a })),
                Some(a) => serde_json::from_str::<Value>(&a).ok(),
                None => None,
            };
            let Some(v) = parsed else {
                results.push(json!({"errors": ["Invalid input (not in the recording)"]}));
                return json!({
                    "jsonrpc": "2.0", "id": request["id"],
                    "error": {"code": 1002, "data": results,
                              "message": format!("CLI command {} of {} '{cmd}' failed: invalid command", i + 2, cmds.len() + 1)},
                });
            };
            results.push(v);
        }
        json!({"jsonrpc": "2.0", "id": request["id"], "result": results})
    }
}
