//! `POST /v1/webhooks/nautobot`: a change in Nautobot (a device, interface, VLAN or IP address), as
//! its webhook sends it, becomes a converge of the devices it affects (docs/nautobot.md). Nautobot
//! signs the body with the webhook's secret (`X-Hook-Signature`: HMAC-SHA512, hex); the signature is
//! checked, in constant time, before any byte of the body is used, and a request without one is
//! refused before its body is read. The nodes go through the scheduler's trigger, so a change
//! coalesces with others like any trigger; each node's run reads its intent from Nautobot again when
//! it starts.

use super::{AppState, HttpError, S};
use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use netgw_models::secret::Secret;
use serde_json::{Value, json};
use tracing::{info, warn};

/// The header Nautobot puts its signature in.
pub const SIGNATURE_HEADER: &str = "x-hook-signature";

/// Whether `signature` (hex) is the HMAC-SHA512 of `body` under `secret`, compared in constant time.
pub fn verify(secret: &Secret, body: &[u8], signature: &str) -> bool {
    let Ok(tag) = data_encoding::HEXLOWER_PERMISSIVE.decode(signature.trim().as_bytes()) else {
        return false;
    };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA512, secret.expose().as_bytes());
    ring::hmac::verify(&key, body, &tag).is_ok()
}

fn unauthorized(s: &AppState, message: &'static str, close: bool) -> Response {
    s.metrics
        .auth_failure(if close { "missing" } else { "invalid" });
    warn!("nautobot webhook refused: {message}");
    let mut r =
        HttpError::new(StatusCode::UNAUTHORIZED, "invalid_signature", message).into_response();
    if close {
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    r
}

fn signature(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.trim().is_empty())
        .map(str::to_owned)
}

/// The body, at most `max` bytes, within the body timeout.
async fn read_body(s: &AppState, body: Body, max: usize) -> Result<axum::body::Bytes, Response> {
    match tokio::time::timeout(s.limits.body_timeout, axum::body::to_bytes(body, max)).await {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(_)) => Err(HttpError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("webhook body larger than {max} bytes (nautobot_webhook.max_body_bytes)"),
        )
        .into_response()),
        Err(_) => Err(HttpError::new(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            "the webhook body did not arrive in time",
        )
        .into_response()),
    }
}

pub(super) async fn nautobot(State(s): State<S>, req: Request) -> Response {
    let (Some(hook), Some(source)) = (&s.nautobot_webhook, &s.sched.inventory().results) else {
        return HttpError::new(
            StatusCode::NOT_FOUND,
            "not_configured",
            "no `nautobot_webhook` in this gateway's configuration (and a Nautobot inventory)",
        )
        .into_response();
    };
    let (parts, body) = req.into_parts();
    let Some(sig) = signature(&parts.headers) else {
        return unauthorized(
            &s,
            "no X-Hook-Signature: set the webhook's secret in Nautobot",
            true,
        );
    };
    let bytes = match read_body(&s, body, hook.max_body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    if !verify(&hook.secret, &bytes, &sig) {
        return unauthorized(
            &s,
            "X-Hook-Signature is not the HMAC-SHA512 of the body under the configured secret",
            false,
        );
    }
    let event: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            s.metrics.trigger("invalid");
            return HttpError::bad_request(format!("the webhook body is not JSON: {e}"))
                .into_response();
        }
    };
    let source = source.clone();
    let mapped = tokio::task::spawn_blocking(move || source.affected(&event)).await;
    let (nodes, what) = match mapped {
        Ok(Ok(v)) => v,
        Ok(Err(e @ crate::inventory::nautobot::ChangeError::Body(_))) => {
            s.metrics.trigger("invalid");
            return HttpError::bad_request(e.to_string()).into_response();
        }
        Ok(Err(e)) => {
            return HttpError::new(StatusCode::BAD_GATEWAY, "nautobot_failed", e.to_string())
                .into_response();
        }
        Err(e) => return HttpError::internal(e).into_response(),
    };
    let what = crate::terminal::terminal_safe(&what).into_owned();
    if nodes.is_empty() {
        info!(change = %what, "nautobot webhook: no device of the inventory affected");
        return (
            StatusCode::OK,
            Json(json!({"change": what, "nodes": [],
                        "note": "no device of this gateway's inventory is affected"})),
        )
            .into_response();
    }
    info!(change = %what, nodes = ?nodes, "nautobot webhook: converging");
    let submitted = s
        .sched
        .trigger(&nodes, false, &format!("nautobot webhook: {what}"))
        .await;
    if submitted.is_ok() && s.history.is_shared() {
        s.history.flush().await;
    }
    match submitted {
        Ok(a) => (StatusCode::ACCEPTED, Json(a)).into_response(),
        Err(e) => super::submit_problem(e).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha512_hex_of_the_body() {
        // RFC 4231, test case 2.
        let secret = Secret::new("Jefe");
        let body = b"what do ya want for nothing?";
        let tag = "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737";
        assert!(verify(&secret, body, tag));
        assert!(verify(&secret, body, &tag.to_uppercase()));
        assert!(!verify(&secret, b"what do ya want for nothing!", tag));
        assert!(!verify(&Secret::new("jefe"), body, tag));
        assert!(!verify(&secret, body, &tag[..64]));
        assert!(!verify(&secret, body, "not hex"));
    }
}
