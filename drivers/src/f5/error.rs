//! iControl REST error bodies, parsed into data (docs/style.md habit 4: a device's error is data).
//!
//! BIG-IP answers a failed request with one of two JSON shapes (see
//! `docs/fixture-sources.md (F5 section)`, "Error-body shapes seen"):
//!
//! 1. **mcpd / configuration errors** (most `/mgmt/tm/...` failures):
//!    `{"code":404,"message":"01020036:3: The requested Pool (/Common/my-pool) was not found.","errorStack":[],"apiError":3}`
//! 2. **restjavad framework errors** (authentication, unregistered URIs):
//!    `{"code":401,"message":"Authentication failed.","originalRequestBody":"...","referer":"192.168.200.20",
//!    "restOperationId":36136900,"kind":":resterrorresponse"}`
//!
//! The device's `message` is kept verbatim; [`F5Error::mcpd_id`] splits off the mcpd message id
//! (`01020036`) and severity where the message starts with one. `originalRequestBody` is never kept: it
//! echoes the request, which for a login holds the user name (and could hold a password).

use std::fmt;

/// Which of the two error shapes a body had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorShape {
    /// `{"code","message","errorStack","apiError"}` (mcpd and the iControl REST tm worker).
    Mcpd {
        api_error: Option<i64>,
        error_stack: Vec<String>,
    },
    /// `{"code","message","referer","restOperationId","kind":"...resterrorresponse"}` (restjavad).
    Framework {
        kind: String,
        rest_operation_id: Option<i64>,
        referer: Option<String>,
    },
}

/// One error reported by the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct F5Error {
    /// HTTP status of the response.
    pub status: u16,
    /// The body's own `code` (normally equal to the status).
    pub code: Option<i64>,
    /// The device's message, verbatim.
    pub message: String,
    pub shape: ErrorShape,
}

impl F5Error {
    /// The mcpd message id and severity (`01020036:3: ...` -> `("01020036", 3)`), if the message has one.
    pub fn mcpd_id(&self) -> Option<(&str, u8)> {
        mcpd_id(&self.message)
    }

    /// A restjavad authentication/authorisation failure (the token expired or was revoked).
    pub fn is_auth_failure(&self) -> bool {
        self.status == 401
    }

    /// An object or URI that does not exist.
    pub fn is_not_found(&self) -> bool {
        self.status == 404
    }
}

impl fmt::Display for F5Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The message first and unchanged, then where it came from.
        write!(f, "{} (HTTP {}", self.message, self.status)?;
        match &self.shape {
            ErrorShape::Mcpd {
                api_error: Some(a), ..
            } => write!(f, ", apiError {a}")?,
            ErrorShape::Mcpd {
                api_error: None, ..
            } => {}
            ErrorShape::Framework {
                rest_operation_id, ..
            } => {
                if let Some(id) = rest_operation_id {
                    write!(f, ", restOperationId {id}")?;
                }
            }
        }
        f.write_str(")")
    }
}

/// `01020036:3: text` -> (`01020036`, 3). Also finds the id after a `transaction failed:` prefix.
pub fn mcpd_id(message: &str) -> Option<(&str, u8)> {
    let m = message
        .strip_prefix("transaction failed:")
        .unwrap_or(message)
        .trim_start();
    let (id, rest) = m.split_once(':')?;
    if id.len() != 8 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let (sev, _) = rest.split_once(':')?;
    Some((id, sev.trim().parse().ok()?))
}

/// Parse an error body of either shape. `None` when the body is not a JSON object with a string
/// `message` (an HTML error page from a proxy, an empty body): callers then report the status alone.
pub fn parse_error_body(status: u16, body: &[u8]) -> Option<F5Error> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    parse_error_value(status, &v)
}

/// As [`parse_error_body`], on a decoded value.
pub fn parse_error_value(status: u16, v: &serde_json::Value) -> Option<F5Error> {
    let o = v.as_object()?;
    let message = o.get("message")?.as_str()?.to_owned();
    let code = o.get("code").and_then(serde_json::Value::as_i64);
    let kind = o.get("kind").and_then(serde_json::Value::as_str);
    let shape = if kind.is_some_and(|k| k.ends_with("resterrorresponse"))
        || o.contains_key("restOperationId")
    {
        ErrorShape::Framework {
            kind: kind.unwrap_or_default().to_owned(),
            rest_operation_id: o.get("restOperationId").and_then(serde_json::Value::as_i64),
            referer: o
                .get("referer")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned),
        }
    } else {
        ErrorShape::Mcpd {
            api_error: o.get("apiError").and_then(serde_json::Value::as_i64),
            error_stack: o
                .get("errorStack")
                .and_then(serde_json::Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|e| {
                            e.as_str()
                                .map(str::to_owned)
                                .unwrap_or_else(|| e.to_string())
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    };
    Some(F5Error {
        status,
        code,
        message,
        shape,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Bodies copied from the public-sample collection (docs/fixture-sources.md), `f5` (real device answers).
    const POOL_404: &str = r#"{"code":404,"message":"01020036:3: The requested Pool (/Common/my-pool) was not found.","errorStack":[],"apiError":3}"#;
    const NO_TOKEN_401: &str = r#"{"code":401,"message":"Authorization failed: no user authentication header or token detected. Uri:http://localhost:8100/mgmt/tm/ltm/virtual Referrer:10.145.74.44 Sender:10.145.74.44","referer":"10.145.74.44","restOperationId":7945916,"kind":":resterrorresponse"}"#;
    const LOGIN_FAILED_401: &str = r#"{
        "code": 401,
        "message": "Authentication failed.",
        "originalRequestBody": "{\"username\":\"admin\",\"loginProviderName\":\"local\",\"generation\":0,\"lastUpdateMicros\":0}",
        "referer": "192.168.200.20",
        "restOperationId": 36136900,
        "kind": ":resterrorresponse"
    }"#;
    const URI_404: &str = r#"{"code":404,"message":"URI path /mgmt/tm/ltm/pool/?Common?my-pool not registered.  Please verify URI is supported and wait for /available suffix to be responsive.","restOperationId":41,"kind":":resterrorresponse"}"#;
    const MCPD_500: &str = r#"{"code":500,"message":"The connection to mcpd has been lost, try again.","errorStack":[],"apiError":32768001}"#;
    const EXISTS_409: &str = r#"{"code":409,"message":"01020066:3: The requested value list (/Common/my-datagroup) already exists in partition Common.","errorStack":[],"apiError":3}"#;

    #[test]
    fn f5_error_mcpd_shape() {
        let e = parse_error_body(404, POOL_404.as_bytes()).unwrap();
        assert_eq!(
            e.message,
            "01020036:3: The requested Pool (/Common/my-pool) was not found."
        );
        assert_eq!(e.code, Some(404));
        assert_eq!(
            e.shape,
            ErrorShape::Mcpd {
                api_error: Some(3),
                error_stack: vec![]
            }
        );
        assert_eq!(e.mcpd_id(), Some(("01020036", 3)));
        assert!(e.is_not_found() && !e.is_auth_failure());
        assert_eq!(
            e.to_string(),
            "01020036:3: The requested Pool (/Common/my-pool) was not found. (HTTP 404, apiError 3)"
        );
        let e = parse_error_body(500, MCPD_500.as_bytes()).unwrap();
        assert_eq!(
            e.shape,
            ErrorShape::Mcpd {
                api_error: Some(32_768_001),
                error_stack: vec![]
            }
        );
        assert_eq!(e.mcpd_id(), None);
        let e = parse_error_body(409, EXISTS_409.as_bytes()).unwrap();
        assert_eq!(e.mcpd_id(), Some(("01020066", 3)));
    }

    #[test]
    fn f5_error_framework_shape() {
        let e = parse_error_body(401, NO_TOKEN_401.as_bytes()).unwrap();
        assert!(e.is_auth_failure());
        assert!(
            e.message
                .starts_with("Authorization failed: no user authentication header")
        );
        assert_eq!(
            e.shape,
            ErrorShape::Framework {
                kind: ":resterrorresponse".into(),
                rest_operation_id: Some(7_945_916),
                referer: Some("10.145.74.44".into())
            }
        );
        let e = parse_error_body(401, LOGIN_FAILED_401.as_bytes()).unwrap();
        assert_eq!(e.message, "Authentication failed.");
        assert!(
            !e.to_string().contains("username"),
            "originalRequestBody is not kept: {e}"
        );
        assert_eq!(
            e.to_string(),
            "Authentication failed. (HTTP 401, restOperationId 36136900)"
        );
        let e = parse_error_body(404, URI_404.as_bytes()).unwrap();
        assert!(matches!(
            e.shape,
            ErrorShape::Framework { referer: None, .. }
        ));
    }

    #[test]
    fn f5_error_non_json_and_prefixed_ids() {
        assert_eq!(parse_error_body(502, b"<html>Bad gateway</html>"), None);
        assert_eq!(parse_error_body(400, b""), None);
        assert_eq!(parse_error_body(400, br#"{"code":400}"#), None);
        assert_eq!(
            mcpd_id("transaction failed:01070712:3: Values (10) specified for vlan"),
            Some(("01070712", 3))
        );
        assert_eq!(mcpd_id("Found invalid JSON body in the request."), None);
    }
}
