//! `netgw serve` under hostile clients: the accept loop with its connection caps and timeouts, and the
//! per-identity cap on event streams.
//!
//! ```text
//!   accept ─▶ over max_connections_per_peer for its address?  yes: `503` with the reason, closed
//!          ─▶ all max_connections places taken?  the oldest connection that has not authenticated a
//!              request is closed for it; none such: `503`, closed
//!          ─▶ [TLS handshake, within header_timeout] ─▶ hyper http1 (header_timeout: a request head,
//!              and the next one on an idle keep-alive connection, must arrive within it)
//!          ─▶ auth layer (credentials from the headers, then the body within body_timeout)
//! ```
//! Without these, half-sent requests held a file descriptor and a task each until the process ran out
//! of both, and idle sockets from a few local addresses locked operators out. The caps count open
//! connections; a refused connection costs one `accept` and a short write. Waiting on a slow body is
//! bounded by `body_timeout` and only after authentication.

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::pem::Error as PemError;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

/// Connection limits and timeouts of the server.
#[derive(Debug, Clone)]
pub struct ServerLimits {
    pub max_connections: usize,
    pub max_connections_per_peer: usize,
    /// A request head (and the next one on a keep-alive connection, and a TLS handshake) within this.
    pub header_timeout: Duration,
    /// The whole body of an authenticated request within this.
    pub body_timeout: Duration,
    pub max_streams_per_identity: usize,
}

pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 128;
pub const DEFAULT_HEADER_TIMEOUT_SECS: f64 = 10.0;
pub const DEFAULT_BODY_TIMEOUT_SECS: f64 = 10.0;
pub const DEFAULT_MAX_STREAMS_PER_IDENTITY: usize = 8;

/// Open counts by key; a [`Slot`] gives its place back when dropped.
#[derive(Debug)]
pub struct Counter<K: std::hash::Hash + Eq + Clone> {
    open: Mutex<HashMap<K, usize>>,
}

impl<K: std::hash::Hash + Eq + Clone> Default for Counter<K> {
    fn default() -> Self {
        Counter {
            open: Mutex::new(HashMap::new()),
        }
    }
}

pub struct Slot<K: std::hash::Hash + Eq + Clone> {
    counter: Arc<Counter<K>>,
    key: K,
}

impl<K: std::hash::Hash + Eq + Clone> Counter<K> {
    /// A slot for `key` when fewer than `max` are open.
    pub fn take(self: &Arc<Self>, key: K, max: usize) -> Option<Slot<K>> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let n = open.entry(key.clone()).or_default();
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(Slot {
            counter: self.clone(),
            key,
        })
    }
}

impl<K: std::hash::Hash + Eq + Clone> Drop for Slot<K> {
    fn drop(&mut self) {
        let mut open = self
            .counter
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// Marks a connection that carried an authenticated request: it is never evicted for a newcomer.
/// The auth layer finds it in the request's extensions.
#[derive(Debug, Clone, Default)]
pub struct ConnAuth(Arc<AtomicBool>);

impl ConnAuth {
    pub fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_marked(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Every open connection, oldest first. When all places are taken, a newcomer takes the place of the
/// oldest connection that has not yet authenticated a request: idle sockets from many addresses can
/// fill the total cap, but never lock out an operator, whose request authenticates within
/// milliseconds of connecting while the flood would have to cycle through every place first.
#[derive(Default)]
struct OpenConns {
    conns: Mutex<BTreeMap<u64, (ConnAuth, CancellationToken)>>,
    next: AtomicU64,
}

/// A connection's place among all; given back when dropped (unless it was evicted already).
struct Place {
    open: Arc<OpenConns>,
    id: u64,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut conns = self
            .open
            .conns
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        conns.remove(&self.id);
    }
}

impl OpenConns {
    /// A place, evicting the oldest unauthenticated connection when all `max` are taken.
    fn take(
        self: &Arc<Self>,
        max: usize,
        auth: &ConnAuth,
        evict: &CancellationToken,
    ) -> Option<Place> {
        let mut conns = self.conns.lock().unwrap_or_else(PoisonError::into_inner);
        if conns.len() >= max {
            let oldest = conns
                .iter()
                .find(|(_, (a, _))| !a.is_marked())
                .map(|(id, _)| *id)?;
            if let Some((_, token)) = conns.remove(&oldest) {
                token.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        conns.insert(id, (auth.clone(), evict.clone()));
        Some(Place {
            open: self.clone(),
            id,
        })
    }
}

/// What one connection holds: a place among all, one of its address's, and what can evict it.
struct ConnSlots {
    _all: Place,
    _peer: Slot<IpAddr>,
    auth: ConnAuth,
    evicted: CancellationToken,
}

/// Why a connection is refused (the client is told).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum Refusal {
    #[error("too many connections from {peer} (limit {limit} per address)")]
    PerPeer { peer: IpAddr, limit: usize },
    #[error("too many authenticated connections (limit {limit} in total)")]
    Total { limit: usize },
}

/// Why a connection is refused, or its slots.
fn admit(
    all: &Arc<OpenConns>,
    peers: &Arc<Counter<IpAddr>>,
    peer: IpAddr,
    limits: &ServerLimits,
) -> Result<ConnSlots, Refusal> {
    let p = peers
        .take(peer, limits.max_connections_per_peer)
        .ok_or(Refusal::PerPeer {
            peer,
            limit: limits.max_connections_per_peer,
        })?;
    let (auth, evicted) = (ConnAuth::default(), CancellationToken::new());
    let a = all
        .take(limits.max_connections, &auth, &evicted)
        .ok_or(Refusal::Total {
            limit: limits.max_connections,
        })?;
    Ok(ConnSlots {
        _all: a,
        _peer: p,
        auth,
        evicted,
    })
}

/// Serve `app` on `listener` until `stop`; then finish open requests (graceful) and return.
pub async fn run(
    listener: TcpListener,
    app: Router,
    limits: ServerLimits,
    tls: Option<TlsAcceptor>,
    stop: CancellationToken,
) {
    let all = Arc::new(OpenConns::default());
    let peers = Arc::new(Counter::<IpAddr>::default());
    let mut conns = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(v) => v,
            Err(e) => {
                // EMFILE and the like: pause instead of spinning; open connections go on.
                warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        match admit(&all, &peers, peer.ip(), &limits) {
            Ok(slots) => {
                let (app, limits, tls, stop) =
                    (app.clone(), limits.clone(), tls.clone(), stop.clone());
                let app = app.layer(axum::Extension(slots.auth.clone()));
                conns.spawn(async move {
                    tokio::select! {
                        _ = serve_conn(stream, peer, app, &limits, tls, stop) => {}
                        _ = slots.evicted.cancelled() => debug!(%peer, "connection evicted for a newcomer"),
                    }
                    drop(slots);
                });
            }
            Err(reason) => {
                debug!(%peer, %reason, "connection refused");
                refuse(stream, &reason.to_string(), tls.is_some());
            }
        }
    }
    while conns.join_next().await.is_some() {}
}

/// A `503` naming the limit, written without waiting (a client that does not read gets nothing) and
/// the connection closed. Over TLS there is no way to say it before a handshake: just close.
fn refuse(stream: TcpStream, reason: &str, tls: bool) {
    if !tls {
        let body =
            format!("{{\"error\":\"{reason}; retry later\",\"code\":\"too_many_connections\"}}\n");
        let msg = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.try_write(msg.as_bytes());
    }
}

async fn serve_conn(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: &ServerLimits,
    tls: Option<TlsAcceptor>,
    stop: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    // The status page's sign-in back-off is per client address.
    let app = app.layer(axum::Extension(super::ui::ClientAddr(peer.ip())));
    match tls {
        None => http1(stream, app, limits, stop).await,
        Some(acceptor) => {
            match tokio::time::timeout(limits.header_timeout, acceptor.accept(stream)).await {
                Ok(Ok(s)) => http1(s, app, limits, stop).await,
                Ok(Err(e)) => debug!(%peer, error = %e, "TLS handshake failed"),
                Err(_) => debug!(%peer, "TLS handshake timed out"),
            }
        }
    }
}

async fn http1<I>(io: I, app: Router, limits: &ServerLimits, stop: CancellationToken)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(app));
    tokio::pin!(conn);
    tokio::select! {
        r = conn.as_mut() => {
            if let Err(e) = r {
                debug!(error = %e, "connection ended with an error");
            }
        }
        _ = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Why `serve`'s TLS certificate or key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error("in tls_cert {}: {source}", path.display())]
    Cert {
        path: PathBuf,
        #[source]
        source: PemError,
    },
    #[error("in tls_cert {}: no CERTIFICATE block", path.display())]
    NoCert { path: PathBuf },
    #[error("in tls_key {}: no usable private key ({source})", path.display())]
    Key {
        path: PathBuf,
        #[source]
        source: PemError,
    },
    #[error("in tls_cert/tls_key: {0}")]
    Config(#[source] tokio_rustls::rustls::Error),
}

/// Load the TLS certificate chain and key (PEM) for `serve`.
pub fn tls_acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsSetupError> {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad_cert = |source| TlsSetupError::Cert {
        path: cert.to_owned(),
        source,
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(bad_cert)?
        .collect::<Result<_, _>>()
        .map_err(bad_cert)?;
    if certs.is_empty() {
        return Err(TlsSetupError::NoCert {
            path: cert.to_owned(),
        });
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|source| TlsSetupError::Key {
        path: key.to_owned(),
        source,
    })?;
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(TlsSetupError::Config)?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(TlsSetupError::Config)?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_capped_per_key_and_given_back_on_drop() {
        let c = Arc::new(Counter::<u8>::default());
        let a = c.take(1, 2).unwrap();
        let _b = c.take(1, 2).unwrap();
        assert!(c.take(1, 2).is_none());
        assert!(c.take(2, 2).is_some(), "another key has its own count");
        drop(a);
        assert!(c.take(1, 2).is_some());
    }

    #[test]
    fn a_refusal_names_the_limit() {
        let limits = ServerLimits {
            max_connections: 3,
            max_connections_per_peer: 1,
            header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            max_streams_per_identity: 1,
        };
        let (all, peers) = (Arc::default(), Arc::default());
        let ip: IpAddr = "127.0.0.2".parse().unwrap();
        let _s = admit(&all, &peers, ip, &limits).unwrap();
        let e = admit(&all, &peers, ip, &limits).err().unwrap();
        assert_eq!(
            e.to_string(),
            "too many connections from 127.0.0.2 (limit 1 per address)"
        );
        let t = admit(&all, &peers, "127.0.0.3".parse().unwrap(), &limits).unwrap();
        let u = admit(&all, &peers, "127.0.0.4".parse().unwrap(), &limits).unwrap();
        t.auth.mark();
        u.auth.mark();
        // All places taken: the newcomer takes the oldest unauthenticated one's.
        let v = admit(&all, &peers, "127.0.0.5".parse().unwrap(), &limits).unwrap();
        assert!(
            _s.evicted.is_cancelled(),
            "the oldest idle connection is evicted"
        );
        assert!(!t.evicted.is_cancelled() && !u.evicted.is_cancelled());
        v.auth.mark();
        // Only authenticated connections left: refused.
        let e = admit(&all, &peers, "127.0.0.6".parse().unwrap(), &limits)
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "too many authenticated connections (limit 3 in total)"
        );
    }
}
