//! HttpClient against a local HTTPS server on 127.0.0.1 (tokio-rustls, a self-signed rcgen certificate):
//! TLS verification on, CA file, insecure, timeouts, status errors, bad JSON, size limits, auth headers.

use std::sync::Arc;
use std::time::Duration;

use netgw_drivers::transport::http::{HttpAuth, HttpClient, HttpConfig, HttpError, TlsMode};
use netgw_models::secret::Secret;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

const TOKEN: &str = "tok-9f8e7d6c5b4a";

struct Server {
    base_url: String,
    ca_file: tempfile::NamedTempFile,
}

/// Read one request head (and body, per Content-Length) from the stream.
async fn read_request<S: AsyncReadExt + Unpin>(s: &mut S) -> Option<(String, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    Some((path, head))
}

fn response(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn handle(path: &str, head: &str) -> Vec<u8> {
    let auth = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("authorization")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_default();
    match path {
        "/command-api" => response(
            "200 OK",
            r#"{"jsonrpc": "2.0", "id": "1", "result": [{"vlans": {"1": {"name": "default"}}}]}"#,
        ),
        "/echo-auth" => response("200 OK", &json!({ "authorization": auth }).to_string()),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            response("200 OK", "{}")
        }
        // An error page that quotes the credentials back, and is long.
        "/denied" => response(
            "401 Unauthorized",
            &format!(
                r#"{{"code": 401, "message": "Authorization failed for {auth}", "pad": "{}"}}"#,
                "x".repeat(4000)
            ),
        ),
        "/truncated-json" => response("200 OK", r#"{"jsonrpc": "2.0", "result": [{"vlans": {"1""#),
        "/wrong-shape" => response("200 OK", r#"{"result": [{"vlans": {"1": {"name": 7}}}]}"#),
        "/short-body" => {
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\nConnection: close\r\n\r\n{\"result\": ["
                .to_vec()
        }
        "/big" => response("200 OK", &format!("\"{}\"", "y".repeat(300_000))),
        "/empty" => response("204 No Content", ""),
        _ => response("404 Not Found", r#"{"error": "no such path"}"#),
    }
}

async fn start_server() -> Server {
    let key =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("self-signed cert");
    let cert_pem = key.cert.pem();
    let cert_der: CertificateDer<'static> = key.cert.der().clone();
    let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.signing_key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(vec![cert_der], key_der)
    .expect("server cert");
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // Clients that reject the certificate abort the handshake: nothing to serve.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                if let Some((path, head)) = read_request(&mut tls).await {
                    let resp = handle(&path, &head).await;
                    let _ = tls.write_all(&resp).await;
                    let _ = tls.shutdown().await;
                }
            });
        }
    });
    let mut ca_file = tempfile::NamedTempFile::new().expect("temp file");
    std::io::Write::write_all(&mut ca_file, cert_pem.as_bytes()).expect("write CA");
    Server {
        base_url: format!("https://127.0.0.1:{port}"),
        ca_file,
    }
}

fn config(server: &Server, tls: TlsMode) -> HttpConfig {
    let mut cfg = HttpConfig::new("eos-lab", &server.base_url);
    cfg.tls = tls;
    cfg.request_timeout = Duration::from_secs(5);
    cfg
}

#[tokio::test]
async fn http_verification_on_rejects_a_self_signed_certificate() {
    let server = start_server().await;
    let client = HttpClient::new(config(&server, TlsMode::Verify))
        .await
        .unwrap();
    let err = client.get_json::<Value>("/command-api").await.unwrap_err();
    assert!(matches!(err, HttpError::Tls { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("eos-lab") && msg.contains("GET /command-api"),
        "{msg}"
    );
}

#[tokio::test]
async fn http_ca_file_accepts_the_device_certificate() {
    let server = start_server().await;
    let ca = TlsMode::CaFile(server.ca_file.path().to_path_buf());
    let client = HttpClient::new(config(&server, ca)).await.unwrap();
    let reply: Value = client
        .post_json(
            "/command-api",
            &json!({"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1, "cmds": ["show vlan"]}, "id": "1"}),
        )
        .await
        .unwrap();
    assert_eq!(reply["result"][0]["vlans"]["1"]["name"], "default");
}

#[tokio::test]
async fn http_insecure_accepts_any_certificate() {
    let server = start_server().await;
    let client = HttpClient::new(config(&server, TlsMode::Insecure))
        .await
        .unwrap();
    let reply: Value = client.get_json("/command-api").await.unwrap();
    assert_eq!(reply["jsonrpc"], "2.0");
}

#[tokio::test]
async fn http_request_timeout_names_op_device_and_limit() {
    let server = start_server().await;
    let mut cfg = config(&server, TlsMode::Insecure);
    cfg.request_timeout = Duration::from_millis(400);
    let client = HttpClient::new(cfg).await.unwrap();
    let err = client.get_json::<Value>("/slow").await.unwrap_err();
    match &err {
        HttpError::Timeout { phase, limit, .. } => {
            assert_eq!(*phase, "request");
            assert_eq!(*limit, Duration::from_millis(400));
        }
        other => panic!("expected a timeout, got {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("GET /slow") && msg.contains("eos-lab") && msg.contains("400ms"),
        "{msg}"
    );
}

#[tokio::test]
async fn http_status_error_has_a_bounded_redacted_excerpt() {
    let server = start_server().await;
    let mut cfg = config(&server, TlsMode::Insecure);
    cfg.auth = HttpAuth::Bearer(Secret::new(TOKEN));
    let client = HttpClient::new(cfg).await.unwrap();
    let err = client.get_json::<Value>("/denied").await.unwrap_err();
    assert_eq!(err.status(), Some(401));
    let HttpError::Status { body_excerpt, .. } = &err else {
        panic!("expected a status error, got {err}");
    };
    assert!(
        body_excerpt.contains("Authorization failed"),
        "{body_excerpt}"
    );
    assert!(
        body_excerpt.chars().count() <= 515,
        "{}",
        body_excerpt.len()
    );
    let msg = err.to_string();
    assert!(!msg.contains(TOKEN), "token leaked: {msg}");
    assert!(msg.contains("<redacted>"), "{msg}");
    let err = client.get_json::<Value>("/nowhere").await.unwrap_err();
    assert_eq!(err.status(), Some(404));
}

#[tokio::test]
async fn http_truncated_and_mistyped_json_are_decode_errors_with_a_path() {
    let server = start_server().await;
    let client = HttpClient::new(config(&server, TlsMode::Insecure))
        .await
        .unwrap();
    let err = client
        .get_json::<Value>("/truncated-json")
        .await
        .unwrap_err();
    match &err {
        HttpError::Decode { reason, .. } => assert!(reason.contains("EOF"), "{reason}"),
        other => panic!("expected a decode error, got {other}"),
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Vlan {
        name: String,
    }
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct ShowVlan {
        vlans: std::collections::BTreeMap<String, Vlan>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Reply {
        result: Vec<ShowVlan>,
    }
    let err = client.get_json::<Reply>("/wrong-shape").await.unwrap_err();
    match &err {
        HttpError::Decode { path, .. } => assert_eq!(path, "result[0].vlans.1.name"),
        other => panic!("expected a decode error, got {other}"),
    }
    assert!(err.to_string().contains("GET /wrong-shape"));

    // The connection closes before Content-Length bytes arrived.
    let err = client.get_json::<Value>("/short-body").await.unwrap_err();
    assert!(
        matches!(err, HttpError::Transport { .. } | HttpError::Decode { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn http_response_size_limit() {
    let server = start_server().await;
    let mut cfg = config(&server, TlsMode::Insecure);
    cfg.max_response_bytes = 100_000;
    let client = HttpClient::new(cfg).await.unwrap();
    let err = client.get_json::<Value>("/big").await.unwrap_err();
    assert!(
        matches!(err, HttpError::TooLarge { limit: 100_000, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("100000-byte limit"));
}

#[tokio::test]
async fn http_sends_basic_and_bearer_auth() {
    let server = start_server().await;
    let mut cfg = config(&server, TlsMode::Insecure);
    cfg.auth = HttpAuth::Basic {
        username: "admin".into(),
        password: Secret::new("admin-pw"),
    };
    let mut client = HttpClient::new(cfg).await.unwrap();
    let reply: Value = client.get_json("/echo-auth").await.unwrap();
    // base64("admin:admin-pw")
    assert_eq!(reply["authorization"], "Basic YWRtaW46YWRtaW4tcHc=");
    client.set_auth(HttpAuth::Bearer(Secret::new(TOKEN)));
    let reply: Value = client.get_json("/echo-auth").await.unwrap();
    assert_eq!(reply["authorization"], format!("Bearer {TOKEN}"));
    assert_eq!(client.delete("/empty").await.unwrap(), Value::Null);
}

#[tokio::test]
async fn http_closed_port_is_a_connect_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let client = HttpClient::new(HttpConfig::new("gone", format!("https://127.0.0.1:{port}")))
        .await
        .unwrap();
    let err = client.get_json::<Value>("/command-api").await.unwrap_err();
    assert!(matches!(err, HttpError::Connect { .. }), "{err}");
    assert!(err.to_string().contains("gone"));
}
