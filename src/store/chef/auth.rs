//! Chef request signing: the mixlib-authentication protocol, versions 1.0, 1.1 and 1.3.
//!
//! Every request carries `X-Ops-Sign`, `X-Ops-Userid`, `X-Ops-Timestamp`, `X-Ops-Content-Hash` and the
//! Base64 signature split into 60-character `X-Ops-Authorization-N` headers. The signed string is the
//! "canonical request" (chef/mixlib-authentication `lib/mixlib/authentication/signedheaderauth.rb`):
//!
//! ```text
//! 1.0  Method:POST\nHashed Path:B64(SHA1(path))\nX-Ops-Content-Hash:B64(SHA1(body))\n
//!      X-Ops-Timestamp:TS\nX-Ops-UserId:USER                       RSA private-encrypt (PKCS#1 v1.5)
//! 1.1  as 1.0, but X-Ops-UserId:B64(SHA1(USER))                     RSA private-encrypt (PKCS#1 v1.5)
//! 1.3  Method:POST\nPath:path\nX-Ops-Content-Hash:B64(SHA256(body))\nX-Ops-Sign:version=1.3\n
//!      X-Ops-Timestamp:TS\nX-Ops-UserId:USER\nX-Ops-Server-API-Version:V     RSASSA-PKCS1-v1_5 SHA-256
//! ```
//!
//! The path is the URL path without the query string, with repeated slashes squeezed and a trailing
//! slash dropped. Verified against the golden vectors of mixlib-authentication's own spec
//! (`tests/fixtures/chef/mixlib-authentication/`).
//!
//! Keys never appear in errors or `Debug` output.

use data_encoding::BASE64;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::{Pkcs1v15Sign, RsaPrivateKey};
use sha1::{Digest, Sha1};
use sha2::Sha256;
use std::fmt;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// mixlib-authentication protocol versions netgw signs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignVersion {
    V1_0,
    V1_1,
    /// SHA-256; Chef Server 12.4+ and goiardi accept it.
    #[default]
    V1_3,
}

impl SignVersion {
    pub const ALL: [SignVersion; 3] = [SignVersion::V1_0, SignVersion::V1_1, SignVersion::V1_3];

    pub fn as_str(self) -> &'static str {
        match self {
            SignVersion::V1_0 => "1.0",
            SignVersion::V1_1 => "1.1",
            SignVersion::V1_3 => "1.3",
        }
    }

    /// The `X-Ops-Sign` header value (mixlib writes the algorithm too, with a trailing `;`).
    pub fn sign_header(self) -> &'static str {
        match self {
            SignVersion::V1_0 => "algorithm=sha1;version=1.0;",
            SignVersion::V1_1 => "algorithm=sha1;version=1.1;",
            SignVersion::V1_3 => "algorithm=sha256;version=1.3;",
        }
    }
}

impl fmt::Display for SignVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SignVersion {
    type Err = AuthError;
    fn from_str(s: &str) -> Result<Self, AuthError> {
        match s {
            "1.0" => Ok(SignVersion::V1_0),
            "1.1" => Ok(SignVersion::V1_1),
            "1.3" => Ok(SignVersion::V1_3),
            other => Err(AuthError::Version(other.to_owned())),
        }
    }
}

#[derive(Debug, Error)]
pub enum AuthError {
    #[error("client key {path}: {reason}")]
    Key { path: PathBuf, reason: String },

    #[error(
        "signing a request as {user:?} with protocol {version}: {reason} (protocol 1.0/1.1 can sign at most key-size minus 11 bytes of canonical request; use 1.3)"
    )]
    Sign {
        user: String,
        version: SignVersion,
        reason: String,
    },

    #[error(
        "unknown mixlib-authentication protocol version {0:?} (netgw signs with 1.0, 1.1 or 1.3)"
    )]
    Version(String),
}

/// A client's private key. `Debug` shows only where it came from.
#[derive(Clone)]
pub struct ClientKey {
    source: PathBuf,
    key: RsaPrivateKey,
}

impl fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientKey")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl ClientKey {
    /// Read a PEM key (PKCS#1 `RSA PRIVATE KEY`, as Chef servers issue, or PKCS#8 `PRIVATE KEY`).
    pub fn load(path: &Path) -> Result<Self, AuthError> {
        let text = std::fs::read_to_string(path).map_err(|e| AuthError::Key {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
        Self::from_pem(path, &text)
    }

    /// Parse a PEM key; `source` names it in errors.
    pub fn from_pem(source: &Path, pem: &str) -> Result<Self, AuthError> {
        let err = |reason: &str| AuthError::Key {
            path: source.to_owned(),
            reason: reason.to_owned(),
        };
        let (label, der) = pem_block(pem).ok_or_else(|| err("no PEM block found"))?;
        let key = match label.as_str() {
            "RSA PRIVATE KEY" => RsaPrivateKey::from_pkcs1_der(&der)
                .map_err(|_| err("not a valid PKCS#1 RSA private key"))?,
            "PRIVATE KEY" => RsaPrivateKey::from_pkcs8_der(&der)
                .map_err(|_| err("not a valid PKCS#8 RSA private key"))?,
            "ENCRYPTED PRIVATE KEY" => {
                return Err(err("encrypted keys are not supported; decrypt it first"));
            }
            other => return Err(err(&format!("unexpected PEM block {other:?}"))),
        };
        Ok(ClientKey {
            source: source.to_owned(),
            key,
        })
    }

    pub fn source(&self) -> &Path {
        &self.source
    }
}

/// The first PEM block: its label and decoded bytes. Nothing of the content goes into errors.
fn pem_block(text: &str) -> Option<(String, Vec<u8>)> {
    let mut lines = text.lines().map(str::trim);
    let label = lines.find_map(|l| {
        l.strip_prefix("-----BEGIN ")
            .and_then(|r| r.strip_suffix("-----"))
    })?;
    let end = format!("-----END {label}-----");
    let mut b64 = String::new();
    for l in lines {
        if l == end {
            return BASE64
                .decode(b64.as_bytes())
                .ok()
                .map(|d| (label.to_owned(), d));
        }
        if l.contains(':') {
            // RFC 1421 headers (Proc-Type, DEK-Info) mean an encrypted legacy key.
            return Some(("ENCRYPTED PRIVATE KEY".to_owned(), Vec::new()));
        }
        b64.push_str(l);
    }
    None
}

/// What is signed for one request.
#[derive(Debug, Clone)]
pub struct SignRequest<'a> {
    pub method: &'a str,
    /// URL path, without the query string.
    pub path: &'a str,
    pub body: &'a [u8],
    pub user_id: &'a str,
    /// ISO 8601 UTC, `2009-01-01T12:00:00Z`.
    pub timestamp: &'a str,
    /// `X-Ops-Server-API-Version` (part of the 1.3 canonical request).
    pub server_api_version: &'a str,
}

fn b64_sha1(data: &[u8]) -> String {
    BASE64.encode(&Sha1::digest(data)[..])
}

fn b64_sha256(data: &[u8]) -> String {
    BASE64.encode(&Sha256::digest(data)[..])
}

/// mixlib's `canonical_path`: squeeze repeated slashes, drop a trailing slash (but keep `/`).
pub fn canonical_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut last_slash = false;
    for c in path.chars() {
        if c == '/' {
            if !last_slash {
                out.push(c);
            }
            last_slash = true;
        } else {
            out.push(c);
            last_slash = false;
        }
    }
    if out.len() > 1 && out.ends_with('/') {
        out.pop();
    }
    out
}

/// The body hash for `X-Ops-Content-Hash`.
pub fn content_hash(version: SignVersion, body: &[u8]) -> String {
    match version {
        SignVersion::V1_0 | SignVersion::V1_1 => b64_sha1(body),
        SignVersion::V1_3 => b64_sha256(body),
    }
}

/// The string that is signed.
pub fn canonical_request(version: SignVersion, r: &SignRequest<'_>) -> String {
    canonical_request_with_hash(version, r, &content_hash(version, r.body))
}

/// [`canonical_request`] with the body's content hash given (a server verifies the signature from the
/// headers, with the hash the client declared, before it reads the body; `r.body` is not used).
pub fn canonical_request_with_hash(
    version: SignVersion,
    r: &SignRequest<'_>,
    hash: &str,
) -> String {
    let method = r.method.to_ascii_uppercase();
    let path = canonical_path(r.path);
    match version {
        SignVersion::V1_0 | SignVersion::V1_1 => {
            let user = if version == SignVersion::V1_0 {
                r.user_id.to_owned()
            } else {
                b64_sha1(r.user_id.as_bytes())
            };
            format!(
                "Method:{method}\nHashed Path:{}\nX-Ops-Content-Hash:{hash}\nX-Ops-Timestamp:{}\nX-Ops-UserId:{user}",
                b64_sha1(path.as_bytes()),
                r.timestamp
            )
        }
        SignVersion::V1_3 => format!(
            "Method:{method}\nPath:{path}\nX-Ops-Content-Hash:{hash}\nX-Ops-Sign:version=1.3\nX-Ops-Timestamp:{}\nX-Ops-UserId:{}\nX-Ops-Server-API-Version:{}",
            r.timestamp, r.user_id, r.server_api_version
        ),
    }
}

/// Sign a request: the authentication headers, in mixlib's order of meaning (the server reads them by
/// name). The server-API-version header itself is sent by the caller.
pub fn sign(
    key: &ClientKey,
    version: SignVersion,
    r: &SignRequest<'_>,
) -> Result<Vec<(String, String)>, AuthError> {
    let canonical = canonical_request(version, r);
    let signature = match version {
        // Chef's "private encrypt": PKCS#1 v1.5 type-1 padding of the canonical request itself.
        SignVersion::V1_0 | SignVersion::V1_1 => key
            .key
            .sign(Pkcs1v15Sign::new_unprefixed(), canonical.as_bytes()),
        SignVersion::V1_3 => {
            let digest = Sha256::digest(canonical.as_bytes());
            key.key.sign(Pkcs1v15Sign::new::<Sha256>(), &digest[..])
        }
    }
    .map_err(|e| AuthError::Sign {
        user: r.user_id.to_owned(),
        version,
        reason: e.to_string(),
    })?;
    let b64 = BASE64.encode(&signature);
    let mut headers = vec![
        ("X-Ops-Sign".to_owned(), version.sign_header().to_owned()),
        ("X-Ops-Userid".to_owned(), r.user_id.to_owned()),
        ("X-Ops-Timestamp".to_owned(), r.timestamp.to_owned()),
        (
            "X-Ops-Content-Hash".to_owned(),
            content_hash(version, r.body),
        ),
    ];
    // Base64 is ASCII, so splitting bytes at 60 never splits a character.
    for (i, chunk) in b64.as_bytes().chunks(60).enumerate() {
        headers.push((
            format!("X-Ops-Authorization-{}", i + 1),
            String::from_utf8_lossy(chunk).into_owned(),
        ));
    }
    Ok(headers)
}

/// `X-Ops-Timestamp` for a moment: ISO 8601 in UTC, whole seconds.
pub fn timestamp(t: std::time::SystemTime) -> String {
    crate::clock::rfc3339(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    const DIR: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/chef/mixlib-authentication"
    );

    fn fixture() -> (ClientKey, Value) {
        let key = ClientKey::load(&Path::new(DIR).join("spec_private_key.pem")).unwrap();
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/vectors.json")).unwrap())
                .unwrap();
        (key, v)
    }

    fn check(version: SignVersion, section: &str) {
        let (key, v) = fixture();
        let api = v[section]["server_api_version"].as_str().unwrap_or("0");
        let req = SignRequest {
            method: v["method"].as_str().unwrap(),
            path: v["path"].as_str().unwrap(),
            body: v["body"].as_str().unwrap().as_bytes(),
            user_id: v["user_id"].as_str().unwrap(),
            timestamp: v["timestamp"].as_str().unwrap(),
            server_api_version: api,
        };
        assert_eq!(
            canonical_request(version, &req),
            v[section]["canonical"].as_str().unwrap(),
            "canonical request {version}"
        );
        let got = sign(&key, version, &req).unwrap();
        let want = v[section]["headers"].as_object().unwrap();
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (k, val) in &got {
            assert_eq!(
                Some(val.as_str()),
                want[k].as_str(),
                "header {k} of protocol {version}"
            );
        }
    }

    #[test]
    fn golden_v1_0() {
        check(SignVersion::V1_0, "v1_0");
    }

    #[test]
    fn golden_v1_1() {
        check(SignVersion::V1_1, "v1_1");
    }

    #[test]
    fn golden_v1_3_sha256() {
        check(SignVersion::V1_3, "v1_3");
    }

    #[test]
    fn long_user_fails_with_1_0_but_not_1_1() {
        // mixlib's LONG_PATH_LONG_USER_ARGS: 1.0 cannot fit the canonical request in the key.
        let (key, v) = fixture();
        let user = "A".repeat(200);
        let path = format!("{}/nodes/{}", v["path"].as_str().unwrap(), "A".repeat(250));
        let req = SignRequest {
            method: "PUT",
            path: &path,
            body: b"Spec Body",
            user_id: &user,
            timestamp: "2009-01-01T12:00:00Z",
            server_api_version: "0",
        };
        let e = sign(&key, SignVersion::V1_0, &req).unwrap_err().to_string();
        assert!(e.contains("protocol 1.0"), "{e}");
        assert!(!e.contains("MIIE"), "no key material in errors: {e}");
        assert!(sign(&key, SignVersion::V1_1, &req).is_ok());
        assert!(sign(&key, SignVersion::V1_3, &req).is_ok());
    }

    #[test]
    fn paths_are_canonicalised() {
        assert_eq!(canonical_path("//nodes///sw1/"), "/nodes/sw1");
        assert_eq!(canonical_path("/"), "/");
        assert_eq!(
            canonical_path("/organizations/o/nodes"),
            "/organizations/o/nodes"
        );
    }

    #[test]
    fn keys_never_show() {
        let (key, _) = fixture();
        let dbg = format!("{key:?}");
        assert!(
            dbg.contains("spec_private_key.pem") && !dbg.contains("MIIE"),
            "{dbg}"
        );
        let e = ClientKey::from_pem(
            Path::new("k.pem"),
            "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("k.pem") && !e.contains("AAAA"), "{e}");
        assert!(ClientKey::from_pem(Path::new("k.pem"), "junk").is_err());
        let enc = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        let e = ClientKey::from_pem(Path::new("k.pem"), enc)
            .unwrap_err()
            .to_string();
        assert!(e.contains("encrypted"), "{e}");
    }

    #[test]
    fn timestamps_are_iso8601_utc() {
        use std::time::{Duration, UNIX_EPOCH};
        assert_eq!(timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            timestamp(UNIX_EPOCH + Duration::from_secs(1_230_811_200)),
            "2009-01-01T12:00:00Z"
        );
        assert_eq!(
            timestamp(UNIX_EPOCH + Duration::from_secs(951_825_599)),
            "2000-02-29T11:59:59Z"
        );
        assert_eq!("1.3".parse::<SignVersion>().unwrap(), SignVersion::V1_3);
        assert!("1.2".parse::<SignVersion>().is_err());
    }
}
