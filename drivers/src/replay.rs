//! The recorded-session adapters for the drivers' own transport traits (feature `replay`): eAPI for
//! EOS and iControl REST for F5. The recording itself and the NETCONF server are in
//! `netgw_transport::replay`.

mod eapi {
    use crate::eos::eapi::EapiTransport;
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
        async fn post(&self, request: &Value) -> Result<Value, HttpError> {
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
                    return Ok(json!({
                        "jsonrpc": "2.0", "id": request["id"],
                        "error": {"code": 1002, "data": results,
                                  "message": format!("CLI command {} of {} '{cmd}' failed: invalid command", i + 2, cmds.len() + 1)},
                    }));
                };
                results.push(v);
            }
            Ok(json!({"jsonrpc": "2.0", "id": request["id"], "result": results}))
        }
    }
}

mod rest {
    use crate::f5::rest::{LOGIN_PATH, RestMethod, RestRequest, RestResponse, RestTransport};
    use async_trait::async_trait;
    use netgw_transport::http::HttpError;
    use netgw_transport::replay::Recording;

    /// iControl REST answered from a recording: `GET /mgmt/tm/net/vlan?...` by `net/vlan`. The login is
    /// the session, not the device, so it is answered here; changes are noted and answered by the
    /// recording's answer to `METHOD /path` (a transaction's id, say), else accepted with `{}`.
    #[derive(Debug)]
    pub struct ReplayRest(pub Recording);

    fn path_key(path: &str) -> &str {
        let p = path.split('?').next().unwrap_or(path);
        let p = p.strip_prefix("/mgmt/").unwrap_or(p);
        p.strip_prefix("tm/").unwrap_or(p)
    }

    #[async_trait]
    impl RestTransport for ReplayRest {
        async fn send(
            &self,
            op: &str,
            req: RestRequest<'_>,
            _secrets: &[&str],
        ) -> Result<RestResponse, HttpError> {
            let (status, body) = match req.method {
                RestMethod::Post if req.path == LOGIN_PATH => (
                    200,
                    r#"{"token":{"token":"REPLAY","timeout":1200}}"#.to_owned(),
                ),
                RestMethod::Get => match self.0.answer(path_key(req.path)) {
                    Some(b) => (200, b),
                    None => (
                        404,
                        format!(
                            r#"{{"code":404,"message":"{} not in the recording"}}"#,
                            req.path
                        ),
                    ),
                },
                _ => {
                    self.0.note_sent(op);
                    (200, self.0.answer(op).unwrap_or_else(|| "{}".to_owned()))
                }
            };
            Ok(RestResponse {
                status,
                body: body.into(),
            })
        }
    }
}

pub use eapi::ReplayEapi;
pub use rest::ReplayRest;
