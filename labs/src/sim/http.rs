//! The HTTP(S) server under the eAPI and iControl REST simulators (hyper, HTTP/1.1).
//!
//! ```text
//!   TcpListener (one per device) ── accept ── task per connection:
//!       FaultStream (reset faults) ── [TLS: the lab's certificate] ── hyper http1 ── handler(request, ctl)
//! ```
//! One certificate for the whole lab, issued by a lab CA that is written next to the inventory, so
//! clients can verify it (`data.netgw.tls_ca`) instead of turning verification off.

use super::fault::{ConnCtl, FaultStream};
use super::sessions::Sessions;
use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

/// Largest request body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// A request as the simulators see it.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub method: String,
    /// Path without the query.
    pub path: String,
    pub query: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// It came while another request to this device was being answered (a client reading on
    /// several connections at once): part of that request's round trip ([`super::Device`]).
    pub joined: bool,
}

impl HttpRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `Authorization: Basic` user and password.
    pub fn basic_auth(&self) -> Option<(String, String)> {
        let v = self.header("authorization")?;
        let b64 = v
            .strip_prefix("Basic ")
            .or_else(|| v.strip_prefix("basic "))?;
        let raw = data_encoding::BASE64.decode(b64.trim().as_bytes()).ok()?;
        let s = String::from_utf8(raw).ok()?;
        let (u, p) = s.split_once(':')?;
        Some((u.to_owned(), p.to_owned()))
    }
}

/// A reply.
#[derive(Debug, Clone)]
pub struct HttpReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpReply {
    pub fn json(status: u16, v: &serde_json::Value) -> HttpReply {
        HttpReply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::to_vec(v).unwrap_or_default(),
        }
    }

    pub fn text(status: u16, s: &str) -> HttpReply {
        HttpReply {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: s.as_bytes().to_vec(),
        }
    }
}

/// What serves one device's requests.
pub type Handler =
    Arc<dyn Fn(HttpRequest, Arc<ConnCtl>) -> BoxFuture<'static, HttpReply> + Send + Sync>;

/// The lab's TLS material: a CA and one server certificate for `127.0.0.1` / `localhost`.
#[derive(Clone)]
pub struct LabTls {
    pub acceptor: TlsAcceptor,
    /// The CA certificate (PEM), for clients to trust.
    pub ca_pem: String,
}

#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error("generating the lab certificate: {0}")]
    Cert(#[from] rcgen::Error),
    #[error("TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
}

impl LabTls {
    pub fn generate() -> Result<LabTls, TlsSetupError> {
        Self::generate_for(&[])
    }

    /// A CA and one device certificate valid for localhost, 127.0.0.1 and `names` (addresses or DNS
    /// names: in containerlab mode every node's address, name and long name).
    pub fn generate_for(names: &[String]) -> Result<LabTls, TlsSetupError> {
        let ca_key = rcgen::KeyPair::generate()?;
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "netgw-lab CA");
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let leaf_key = rcgen::KeyPair::generate()?;
        let mut sans = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        sans.extend(names.iter().cloned());
        let mut leaf_params = rcgen::CertificateParams::new(sans)?;
        leaf_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "netgw-lab device");
        let leaf = leaf_params.signed_by(&leaf_key, &issuer)?;
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca_cert.der().clone()], key)?;
        // Session tickets a device can take back whatever the number of devices (a session cache
        // shared by the lab's devices would hold a few hundred): a client's further connections to
        // a device resume its session, as with a real device's web server.
        config.ticketer = rustls::crypto::ring::Ticketer::new()?;
        Ok(LabTls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            ca_pem: ca_cert.pem(),
        })
    }
}

/// Serve `handler` on `listener` until the task is dropped (aborted).
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    reset_after_bytes: Option<u64>,
    handler: Handler,
    sessions: Arc<Sessions>,
) {
    let answering = Arc::new(AtomicUsize::new(0));
    loop {
        let (tcp, _) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // EMFILE and friends: back off instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let ctl = ConnCtl::new(reset_after_bytes);
        let stream = FaultStream::new(tcp, ctl.clone());
        let handler = handler.clone();
        let tls = tls.clone();
        let session = sessions.open();
        let answering = answering.clone();
        tokio::spawn(async move {
            let _session = session;
            match tls {
                Some(acc) => match acc.accept(stream).await {
                    Ok(s) => serve_conn(TokioIo::new(s), ctl, handler, answering).await,
                    Err(e) => tracing::debug!(error = %e, "TLS handshake failed"),
                },
                None => serve_conn(TokioIo::new(stream), ctl, handler, answering).await,
            }
        });
    }
}

/// One request fewer being answered, when dropped.
struct Answered(Arc<AtomicUsize>);

impl Drop for Answered {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Requests of this device being answered (`answering`), over all its connections.
async fn serve_conn<I>(io: I, ctl: Arc<ConnCtl>, handler: Handler, answering: Arc<AtomicUsize>)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
        let handler = handler.clone();
        let ctl = ctl.clone();
        let answering = answering.clone();
        async move {
            let (parts, body) = req.into_parts();
            let body = match Limited::new(body, MAX_BODY).collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => {
                    let r = Response::builder()
                        .status(413)
                        .body(Full::new(Bytes::from_static(b"request body too large")));
                    return r.map_err(|e| std::io::Error::other(e.to_string()));
                }
            };
            let request = HttpRequest {
                method: parts.method.as_str().to_owned(),
                path: parts.uri.path().to_owned(),
                query: parts.uri.query().map(str::to_owned),
                headers: parts
                    .headers
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.as_str().to_owned(),
                            String::from_utf8_lossy(v.as_bytes()).into_owned(),
                        )
                    })
                    .collect(),
                body,
                joined: answering.fetch_add(1, Ordering::SeqCst) > 0,
            };
            // Counted down however the answer ends (a fault may drop it).
            let _answered = Answered(answering);
            // What tests/it/bench_floor.rs compares with the benchmark's HTTP floor. A login body holds
            // the password: only its length is traced.
            if tracing::enabled!(tracing::Level::TRACE) {
                let body = if request.path.contains("/authn/") {
                    format!("<{} bytes>", request.body.len())
                } else {
                    String::from_utf8_lossy(&request.body).into_owned()
                };
                let txn = request.header("x-f5-rest-coordination-id").unwrap_or("");
                tracing::trace!(method = %request.method, path = %request.path, query = ?request.query,
                    txn, body = %body, joined = request.joined, "http request");
            }
            let reply = handler(request, ctl).await;
            let mut b = Response::builder().status(reply.status);
            for (k, v) in &reply.headers {
                b = b.header(k.as_str(), v.as_str());
            }
            b.body(Full::new(Bytes::from(reply.body)))
                .map_err(|e| std::io::Error::other(e.to_string()))
        }
    });
    if let Err(e) = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, svc)
        .await
    {
        tracing::debug!(error = %e, "HTTP connection ended");
    }
}
