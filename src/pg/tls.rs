//! TLS to PostgreSQL, with libpq's `sslmode` and `sslrootcert` URL parameters, so the URL an operator
//! already gives `psql` works here and means the same:
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | - |
//! | `prefer` (default) | when the server offers it | not checked (encrypts, does not authenticate) |
//! | `require` | always | not checked; checked against `sslrootcert` when given (libpq's rule) |
//! | `verify-ca` | always | signed by `sslrootcert` |
//! | `verify-full` | always | signed by `sslrootcert` and naming the URL's host |
//!
//! tokio-postgres parses neither `verify-*` nor `sslrootcert`, so both are taken out of the URL here
//! and the connection is made `require` with a rustls verifier of that strength. Client certificates
//! (`sslcert`, `sslkey`) are refused with a clear error rather than ignored.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres::config::SslMode as PgSslMode;
use tokio_rustls::rustls::client::WebPkiServerVerifier;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::crypto::{
    CryptoProvider, verify_tls12_signature, verify_tls13_signature,
};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme,
};

/// What in a database URL's TLS parameters cannot be honoured, or which CA file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("sslmode=allow is not supported: use prefer or require")]
    Allow,
    #[error("sslmode {0:?} is not one of disable, prefer, require, verify-ca, verify-full")]
    UnknownMode(String),
    #[error("sslrootcert=system is not supported: give the CA certificate file")]
    SystemRoots,
    #[error("{0}: client certificates are not supported; authenticate with a password")]
    ClientCertificate(String),
    #[error("sslmode=verify-ca and verify-full need sslrootcert=FILE (the CA certificate, PEM)")]
    NoRoot,
    #[error(
        "sslrootcert is given but sslmode does not check certificates: use require, verify-ca or verify-full"
    )]
    RootUnused,
    #[error("in sslrootcert {}: {source}", path.display())]
    RootRead {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("in sslrootcert {}: not PEM certificates: {source}", path.display())]
    RootPem {
        path: PathBuf,
        #[source]
        source: tokio_rustls::rustls::pki_types::pem::Error,
    },
    #[error("in sslrootcert {}: {source}", path.display())]
    RootCertificate {
        path: PathBuf,
        #[source]
        source: Error,
    },
    #[error("in sslrootcert {}: it holds no certificate", path.display())]
    RootEmpty { path: PathBuf },
    #[error("in sslrootcert {}: {source}", path.display())]
    Verifier {
        path: PathBuf,
        #[source]
        source: tokio_rustls::rustls::client::VerifierBuilderError,
    },
    #[error("in the TLS client's protocol versions: {0}")]
    Protocols(#[source] Error),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(v: &str) -> Result<SslMode, TlsError> {
        Ok(match v {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => return Err(TlsError::Allow),
            other => return Err(TlsError::UnknownMode(other.to_owned())),
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// What tokio-postgres is told: it only knows whether TLS is tried or required.
    pub fn for_client(self) -> PgSslMode {
        match self {
            SslMode::Disable => PgSslMode::Disable,
            SslMode::Prefer => PgSslMode::Prefer,
            _ => PgSslMode::Require,
        }
    }
}

/// The URL's TLS parameters, taken out of it.
#[derive(Debug)]
pub struct TlsParams {
    pub mode: SslMode,
    pub root: Option<PathBuf>,
}

/// Splits `sslmode` and `sslrootcert` off a `postgres://` URL: the URL tokio-postgres can parse, and
/// the parameters. Other query parameters are kept as written.
pub fn split(text: &str) -> Result<(String, TlsParams), TlsError> {
    let mut params = TlsParams {
        mode: SslMode::Prefer,
        root: None,
    };
    let Some((base, query)) = text.split_once('?') else {
        return Ok((text.to_owned(), params));
    };
    let mut kept = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = form_urlencoded::parse(part.as_bytes())
            .next()
            .unwrap_or_default();
        match &*key {
            "sslmode" => params.mode = SslMode::parse(&value)?,
            "sslrootcert" if value == "system" => return Err(TlsError::SystemRoots),
            "sslrootcert" => params.root = Some(PathBuf::from(&*value)),
            "sslcert" | "sslkey" | "sslpassword" => {
                return Err(TlsError::ClientCertificate(key.into_owned()));
            }
            _ => kept.push(part),
        }
    }
    let (needs_root, has_root) = (
        matches!(params.mode, SslMode::VerifyCa | SslMode::VerifyFull),
        params.root.is_some(),
    );
    if needs_root && !has_root {
        return Err(TlsError::NoRoot);
    }
    if has_root && matches!(params.mode, SslMode::Disable | SslMode::Prefer) {
        return Err(TlsError::RootUnused);
    }
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, params))
}

/// The rustls client of `params` (reads the CA file).
pub fn client_config(params: &TlsParams) -> Result<ClientConfig, TlsError> {
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let inner = match &params.root {
        Some(root) => {
            let roots = Arc::new(read_roots(root)?);
            let v = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|source| TlsError::Verifier {
                    path: root.clone(),
                    source,
                })?;
            Some(v)
        }
        None => None,
    };
    let verifier = Verifier {
        inner,
        check_name: params.mode == SslMode::VerifyFull,
        provider: provider.clone(),
    };
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Protocols)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

fn read_roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let path_buf = || path.to_owned();
    let bytes = std::fs::read(path).map_err(|source| TlsError::RootRead {
        path: path_buf(),
        source,
    })?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&bytes) {
        let cert = cert.map_err(|source| TlsError::RootPem {
            path: path_buf(),
            source,
        })?;
        roots
            .add(cert)
            .map_err(|source| TlsError::RootCertificate {
                path: path_buf(),
                source,
            })?;
    }
    if roots.is_empty() {
        return Err(TlsError::RootEmpty { path: path_buf() });
    }
    Ok(roots)
}

/// No check (`prefer`, `require` alone), the chain only (`verify-ca`, `require` with a root), or the
/// chain and the host name (`verify-full`). Handshake signatures are always verified.
#[derive(Debug)]
struct Verifier {
    inner: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(v) = &self.inner else {
            return Ok(ServerCertVerified::assertion());
        };
        match v.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_parameters_are_taken_out_and_the_rest_kept() {
        let (url, p) =
            split("postgres://u:p@h/db?application_name=x&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&connect_timeout=3")
                .unwrap();
        assert_eq!(
            url,
            "postgres://u:p@h/db?application_name=x&connect_timeout=3"
        );
        assert_eq!(p.mode, SslMode::VerifyFull);
        assert_eq!(p.root.unwrap(), PathBuf::from("/etc/ca.pem"));
        let (url, p) = split("postgres://u@h/db").unwrap();
        assert_eq!(
            (url.as_str(), p.mode),
            ("postgres://u@h/db", SslMode::Prefer)
        );
        assert_eq!(
            split("postgres://u@h/db?sslmode=disable").unwrap().0,
            "postgres://u@h/db"
        );
    }

    #[test]
    fn what_cannot_be_honoured_is_refused_by_name() {
        for (q, says) in [
            ("sslmode=verify-full", "need sslrootcert"),
            ("sslmode=verify-ca", "need sslrootcert"),
            ("sslmode=bogus", "\"bogus\" is not one of"),
            ("sslmode=allow", "sslmode=allow is not supported"),
            (
                "sslmode=require&sslcert=/c.pem",
                "sslcert: client certificates",
            ),
            ("sslrootcert=/ca.pem", "sslmode does not check certificates"),
            (
                "sslmode=verify-full&sslrootcert=system",
                "sslrootcert=system",
            ),
        ] {
            let e = split(&format!("postgres://u@h/db?{q}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{q}: {e}");
        }
        let e = client_config(&TlsParams {
            mode: SslMode::VerifyFull,
            root: Some("/nonexistent/ca.pem".into()),
        })
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("in sslrootcert /nonexistent/ca.pem: "), "{e}");
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("ca.pem");
        std::fs::write(&f, "not a certificate\n").unwrap();
        let e = client_config(&TlsParams {
            mode: SslMode::VerifyCa,
            root: Some(f),
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("holds no certificate"), "{e}");
    }
}
