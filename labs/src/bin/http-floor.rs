//! `http-floor --inventory FILE --platform eos|f5 [--concurrency N]`
//!
//! The benchmark's HTTPS floor (docs/bench.md): the least any tool must do to drive the eAPI (EOS) or
//! iControl REST (F5) simulator. For every `eapi` / `rest` host of a netgw-lab inventory: a TCP
//! connection, a TLS handshake checked against the lab CA (`lab-ca.pem` beside the inventory; a
//! device's further connections resume its session, never another device's), then each request of `labs/bench/floors/eos.txt`
//! or `f5.txt` (what one changing `netgw converge` sends, checked by tests/it/bench_floor.rs) in turn on
//! that HTTP/1.1 keep-alive connection, each response read whole and its status checked; the requests
//! the file sends at once (`%% +`) go at once with `--parallel`, one on each connection, more opened
//! as needed (netgw's F5 session with `rest_parallel_reads: true`), else one at a time. EOS requests
//! carry basic authentication; F5's first request is the login, whose token the others carry, and the
//! transaction id of `POST /mgmt/tm/transaction` goes where the file says `TXN`. No JSON decoding
//! beyond the token and the transaction id, no planning, no state saved.

use bytes::Bytes;
use clap::Parser;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use netgw_labs::bench::{self, FloorCall};
use netgw_labs::floor::{self, FloorArgs, FloorHost};
use std::process::ExitCode;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{self, pki_types::CertificateDer, pki_types::ServerName};

#[derive(Parser)]
#[command(
    name = "http-floor",
    about = "Bare HTTPS client: TLS, the EOS or F5 converge's requests (bench floor)"
)]
struct Cli {
    #[command(flatten)]
    floor: FloorArgs,
    /// Whose converge to replay: `eos` (eAPI) or `f5` (iControl REST).
    #[arg(long)]
    platform: String,
    /// Send the requests the file sends at once at once, as netgw's F5 session does with
    /// `rest_parallel_reads: true`; without it, one at a time on one connection.
    #[arg(long)]
    parallel: bool,
}

struct Call {
    method: hyper::Method,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// F5's login body, as netgw sends it (drivers/src/f5/rest.rs).
fn login_body(h: &FloorHost) -> String {
    serde_json::json!({"username": h.username, "password": h.password, "loginProviderName": "tmos"})
        .to_string()
}

/// One HTTP/1.1 keep-alive connection to the device: TCP, TLS checked against the lab CA.
type Conn = (
    http1::SendRequest<Full<Bytes>>,
    tokio::task::JoinHandle<Result<(), hyper::Error>>,
);

async fn open(h: &FloorHost, tls: &TlsConnector) -> Result<Conn, String> {
    let tcp = TcpStream::connect(("127.0.0.1", h.port))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let name = ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
    let stream = tls
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS: {e}"))?;
    let (send, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP: {e}"))?;
    Ok((send, tokio::spawn(conn)))
}

/// What a request's placeholders stand for on this device, so far.
struct Session {
    run_id: String,
    token: Option<String>,
    txn: String,
    basic: String,
}

impl Session {
    fn fill(&self, s: &str) -> String {
        s.replace(bench::RUN_ID, &self.run_id)
            .replace(bench::TXN, &self.txn)
            .replace(bench::TOKEN, self.token.as_deref().unwrap_or(""))
    }

    fn request(
        &self,
        h: &FloorHost,
        c: &Call,
        f5: bool,
    ) -> Result<hyper::Request<Full<Bytes>>, String> {
        let body = if c.body == bench::LOGIN {
            login_body(h)
        } else {
            self.fill(&c.body)
        };
        let mut req = hyper::Request::builder()
            .method(c.method.clone())
            .uri(self.fill(&c.path))
            .header("host", format!("127.0.0.1:{}", h.port));
        for (k, v) in &c.headers {
            req = req.header(k.as_str(), self.fill(v));
        }
        if !body.is_empty() {
            req = req.header("content-type", "application/json");
        }
        req = match (&self.token, f5) {
            (Some(t), _) => req.header("x-f5-auth-token", t.as_str()),
            (None, false) => req.header("authorization", self.basic.as_str()),
            (None, true) => req,
        };
        req.body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())
    }
}

/// Send `req` on `send`, read the answer whole; a success, or a 404 to a GET or DELETE (netgw reads
/// some resources a device may lack, F5 `net/lldp-neighbors` on the simulator, and takes the 404 as
/// "not there").
async fn exchange(
    send: &mut http1::SendRequest<Full<Bytes>>,
    c: &Call,
    req: hyper::Request<Full<Bytes>>,
) -> Result<Bytes, String> {
    let what = |e: &dyn std::fmt::Display| format!("{} {}: {e}", c.method, c.path);
    send.ready().await.map_err(|e| format!("HTTP: {e}"))?;
    let resp = send.send_request(req).await.map_err(|e| what(&e))?;
    let status = resp.status();
    let data = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| what(&e))?
        .to_bytes();
    let absent = status == 404 && matches!(c.method, hyper::Method::GET | hyper::Method::DELETE);
    if !(status.is_success() || absent) {
        return Err(format!("{} {}: HTTP {status}", c.method, c.path));
    }
    Ok(data)
}

/// Send `group` at once, a request on each connection, more opened as needed.
async fn send_at_once(
    h: &FloorHost,
    tls: &TlsConnector,
    conns: &mut Vec<Conn>,
    group: &[Call],
    reqs: Vec<hyper::Request<Full<Bytes>>>,
) -> Result<Vec<Result<Bytes, String>>, String> {
    let more = group.len().saturating_sub(conns.len());
    let opened = futures::future::join_all((0..more).map(|_| open(h, tls))).await;
    for c in opened {
        conns.push(c?);
    }
    let sends = conns
        .iter_mut()
        .zip(group.iter().zip(reqs))
        .map(|((send, _), (c, req))| exchange(send, c, req));
    Ok(futures::future::join_all(sends).await)
}

async fn run_host(
    h: FloorHost,
    tls: TlsConnector,
    f5: bool,
    groups: Arc<Vec<Vec<Call>>>,
    at_once: bool,
) -> Result<(), String> {
    let mut conns = vec![open(&h, &tls).await?];
    let mut s = Session {
        run_id: bench::fresh_run_id(),
        token: None,
        txn: String::new(),
        basic: format!(
            "Basic {}",
            data_encoding::BASE64.encode(format!("{}:{}", h.username, h.password).as_bytes())
        ),
    };
    for group in groups.iter() {
        let reqs = group
            .iter()
            .map(|c| s.request(&h, c, f5))
            .collect::<Result<Vec<_>, _>>()?;
        let answers = if at_once {
            send_at_once(&h, &tls, &mut conns, group, reqs).await?
        } else {
            let mut answers = Vec::new();
            for (c, req) in group.iter().zip(reqs) {
                answers.push(exchange(&mut conns[0].0, c, req).await);
            }
            answers
        };
        for (c, data) in group.iter().zip(answers) {
            let data = data?;
            if f5 && s.token.is_none() {
                s.token =
                    Some(json_str(&data, "/token/token").ok_or("login: no token in the reply")?);
            } else if f5 && c.path == "/mgmt/tm/transaction" && c.method == hyper::Method::POST {
                s.txn =
                    json_str(&data, "/transId").ok_or("transaction: no transId in the reply")?;
            }
        }
    }
    for (send, conn) in conns {
        drop(send);
        let _ = conn.await;
    }
    Ok(())
}

/// A string or number at `pointer` in a JSON reply, as text.
fn json_str(data: &[u8], pointer: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(data).ok()?;
    match v.pointer(pointer)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The TLS client configuration every device starts from: the lab CA, nothing else.
fn tls_config(args: &FloorArgs) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::pem::PemObject;
    let ca = args.beside("lab-ca.pem");
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&ca).map_err(|e| format!("{}: {e}", ca.display()))? {
        let cert = cert.map_err(|e| format!("{}: {e}", ca.display()))?;
        roots
            .add(cert)
            .map_err(|e| format!("{}: {e}", ca.display()))?;
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(config)
}

/// A device's own connector: its connections resume its own TLS sessions, as netgw's client of that
/// device does. Every lab device listens on 127.0.0.1 behind one lab certificate, so one session cache
/// for all would resume one device's session on another, which real devices (each its own key) never
/// allow.
fn device_connector(base: &rustls::ClientConfig) -> TlsConnector {
    let mut config = base.clone();
    config.resumption = rustls::client::Resumption::in_memory_sessions(8);
    TlsConnector::from(Arc::new(config))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (floor_calls, conn, f5) = match cli.platform.as_str() {
        "eos" => (bench::eos(), "eapi", false),
        "f5" => (bench::f5(), "rest", true),
        other => {
            eprintln!("http-floor: --platform {other}: eos or f5");
            return ExitCode::from(2);
        }
    };
    let tls = match tls_config(&cli.floor) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("http-floor: {e}");
            return ExitCode::from(2);
        }
    };
    let groups: Arc<Vec<Vec<Call>>> = Arc::new(
        floor_calls
            .calls
            .into_iter()
            .filter_map(|c| match c {
                FloorCall::Http(group) => group
                    .into_iter()
                    .map(|r| {
                        Some(Call {
                            method: r.method.parse().ok()?,
                            path: r.path,
                            headers: r.headers,
                            body: r.body,
                        })
                    })
                    .collect(),
                _ => None,
            })
            .collect(),
    );
    let requests = groups.iter().map(Vec::len).sum();
    let parallel = cli.parallel;
    floor::run("http-floor", &cli.floor, conn, requests, move |h| {
        run_host(h, device_connector(&tls), f5, groups.clone(), parallel)
    })
}
