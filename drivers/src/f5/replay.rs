//! iControl REST answered from a recorded session (feature `replay`); the recording itself is
//! `netgw_transport::replay`.

use super::rest::{LOGIN_PATH, RestMethod, RestRequest, RestResponse, RestTransport};
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
