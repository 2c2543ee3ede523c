//! Authentication of API requests: bearer tokens (stored as SHA-256 hex, compared in constant time) and
//! Chef-signed requests (mixlib-authentication 1.0, 1.1 and 1.3, verified with the client's configured
//! public key; the canonical request is built by the signer in `crate::store::chef::auth`, so both sides
//! of the protocol share one implementation).
//!
//! Errors say what is wrong without repeating what was presented: no token, signature or header value
//! ever appears in a response body or a log line.

use crate::store::chef::auth::{
    SignRequest, SignVersion, canonical_request_with_hash, content_hash,
};
use data_encoding::{BASE64, HEXLOWER_PERMISSIVE};
use http::HeaderMap;
use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::DecodePublicKey;
use rsa::{Pkcs1v15Sign, RsaPublicKey};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use axum::http;

/// What an identity may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `POST /v1/converge`.
    Trigger,
    /// Every `GET` but `/healthz` (which needs nothing).
    Read,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Trigger => "trigger",
            Role::Read => "read",
        })
    }
}

/// A token or Chef client of the configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("in token {name:?}: sha256 must be 64 hexadecimal digits")]
    TokenHash { name: String },
    #[error("in public key {}: {source}", path.display())]
    KeyRead {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("in public key {}: {reason}", path.display())]
    KeyParse {
        path: std::path::PathBuf,
        reason: &'static str,
    },
    #[error(
        "in public key {}: a {bits}-bit RSA key is too weak to trust; at least {MIN_RSA_BITS} bits are needed (`knife client key regenerate`)",
        path.display()
    )]
    KeyWeak {
        path: std::path::PathBuf,
        bits: usize,
    },
}

/// A configured bearer token: only its hash is kept.
pub struct Token {
    name: String,
    hash: [u8; 32],
    roles: Vec<Role>,
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token")
            .field("name", &self.name)
            .field("roles", &self.roles)
            .finish_non_exhaustive()
    }
}

impl Token {
    pub fn new(name: String, sha256_hex: &str, roles: Vec<Role>) -> Result<Token, CredentialError> {
        let hash: Option<[u8; 32]> = HEXLOWER_PERMISSIVE
            .decode(sha256_hex.trim().as_bytes())
            .ok()
            .and_then(|b| b.try_into().ok());
        match hash {
            Some(hash) => Ok(Token { name, hash, roles }),
            None => Err(CredentialError::TokenHash { name }),
        }
    }
}

/// The SHA-256 hex of a token, as the configuration file stores it.
pub fn token_hash_hex(token: &str) -> String {
    data_encoding::HEXLOWER.encode(&Sha256::digest(token.as_bytes())[..])
}

/// A Chef client allowed to sign requests.
pub struct ChefClient {
    name: String,
    key: RsaPublicKey,
    roles: Vec<Role>,
}

impl fmt::Debug for ChefClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChefClient")
            .field("name", &self.name)
            .field("roles", &self.roles)
            .finish_non_exhaustive()
    }
}

impl ChefClient {
    pub fn load(
        name: String,
        path: &Path,
        roles: Vec<Role>,
    ) -> Result<ChefClient, CredentialError> {
        let text = std::fs::read_to_string(path).map_err(|source| CredentialError::KeyRead {
            path: path.to_owned(),
            source,
        })?;
        let key = public_key_from_pem(&text).map_err(|reason| CredentialError::KeyParse {
            path: path.to_owned(),
            reason,
        })?;
        let bits = rsa::traits::PublicKeyParts::size(&key) * 8;
        if bits < MIN_RSA_BITS {
            return Err(CredentialError::KeyWeak {
                path: path.to_owned(),
                bits,
            });
        }
        Ok(ChefClient { name, key, roles })
    }

    pub fn from_key(name: String, key: RsaPublicKey, roles: Vec<Role>) -> ChefClient {
        ChefClient { name, key, roles }
    }
}

/// Parse a PEM RSA public key (SPKI `PUBLIC KEY`, as `knife client key` writes, or PKCS#1).
pub fn public_key_from_pem(text: &str) -> Result<RsaPublicKey, &'static str> {
    let mut lines = text.lines().map(str::trim);
    let label = lines
        .find_map(|l| {
            l.strip_prefix("-----BEGIN ")
                .and_then(|r| r.strip_suffix("-----"))
        })
        .ok_or("no PEM block found")?;
    let end = format!("-----END {label}-----");
    let mut b64 = String::new();
    let mut closed = false;
    for l in lines {
        if l == end {
            closed = true;
            break;
        }
        b64.push_str(l);
    }
    if !closed {
        return Err("unterminated PEM block");
    }
    let der = BASE64
        .decode(b64.as_bytes())
        .map_err(|_| "PEM block is not valid base64")?;
    match label {
        "PUBLIC KEY" => {
            RsaPublicKey::from_public_key_der(&der).map_err(|_| "not an RSA public key (SPKI)")
        }
        "RSA PUBLIC KEY" => {
            RsaPublicKey::from_pkcs1_der(&der).map_err(|_| "not an RSA public key (PKCS#1)")
        }
        _ => Err("expected a PUBLIC KEY or RSA PUBLIC KEY PEM block"),
    }
}

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    /// `token` or `chef`.
    pub method: &'static str,
    pub roles: Vec<Role>,
}

impl Identity {
    /// `token:ci` or `chef:chef-server`, for the history's `requested_by`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.method, self.name)
    }
}

/// Why a request was refused. Messages never contain what the client presented.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    #[error(
        "authentication required: send `Authorization: Bearer TOKEN` or a Chef-signed request (X-Ops-* headers)"
    )]
    Missing,
    #[error("invalid credentials: {0}")]
    Invalid(&'static str),
    #[error("Chef-signed requests are not configured on this gateway (no chef_clients)")]
    ChefNotConfigured,
    #[error("{who} lacks the `{role}` role this request needs")]
    Forbidden { who: String, role: Role },
}

/// 32 random bytes, base64url: status-page session ids, CSRF tokens, replay claimants.
pub fn random_id() -> String {
    let mut b = [0u8; 32];
    if let Err(e) = getrandom::fill(&mut b) {
        tracing::warn!(error = %e, "no system randomness for a random id");
    }
    data_encoding::BASE64URL_NOPAD.encode(&b)
}

/// Smallest RSA modulus accepted for a Chef client (512- and 1024-bit keys are factorable).
pub const MIN_RSA_BITS: usize = 2048;

/// Signed requests remembered against replay: beyond this many inside the clock-skew window, signed
/// requests are refused until older ones expire (each entry took a valid signature to make).
const MAX_REPLAY_ENTRIES: usize = 100_000;

/// Mixlib's allowed clock skew (`Mixlib::Authentication::SignatureVerification`, 15 minutes).
pub const MAX_CLOCK_SKEW_SECS: i64 = 15 * 60;

#[derive(Debug, Default)]
pub struct Auth {
    tokens: Vec<Token>,
    clients: Vec<ChefClient>,
    /// SHA-256 of each accepted signature -> its timestamp: one signed request is accepted once.
    seen: Mutex<HashMap<[u8; 32], i64>>,
}

/// What remains to check of a request once its body is read ([`Auth::check_headers`]).
#[derive(Debug)]
pub enum BodyCheck {
    Nothing,
    /// A Chef-signed request: the body must hash to what the client signed; then the signature is
    /// remembered (replay cache).
    Signed {
        version: SignVersion,
        hash: String,
        signature: [u8; 32],
        timestamp: i64,
    },
}

impl BodyCheck {
    /// For a signed request: what identifies it against replays in the shared history (hex of the
    /// signature's SHA-256) and when a replay could no longer verify anyway (seconds since the epoch).
    pub fn replay_key(&self) -> Option<(String, i64)> {
        match self {
            BodyCheck::Nothing => None,
            BodyCheck::Signed {
                signature,
                timestamp,
                ..
            } => Some((
                data_encoding::HEXLOWER.encode(signature),
                timestamp + MAX_CLOCK_SKEW_SECS,
            )),
        }
    }
}

/// The headers of a request, all that [`Auth::check_headers`] looks at.
pub struct HeaderParts<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub headers: &'a HeaderMap,
    /// Seconds since the epoch, now.
    pub now: i64,
}

/// The parts of a request that authentication looks at.
pub struct RequestParts<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    /// Seconds since the epoch, now.
    pub now: i64,
}

const BAD_SIGNATURE: &str = "the request signature does not verify";
pub const REPLAYED: &str =
    "this signed request was already accepted once (replay); sign every request anew";

impl RequestParts<'_> {
    fn head(&self) -> HeaderParts<'_> {
        HeaderParts {
            method: self.method,
            path: self.path,
            headers: self.headers,
            now: self.now,
        }
    }
}

fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

impl Auth {
    pub fn new(tokens: Vec<Token>, clients: Vec<ChefClient>) -> Auth {
        Auth {
            tokens,
            clients,
            seen: Mutex::default(),
        }
    }

    pub fn token_count(&self) -> usize {
        self.tokens.len()
    }

    pub fn client_count(&self) -> usize {
        self.clients.len()
    }

    /// Authenticate a request and check it carries `role`.
    pub fn check(&self, req: &RequestParts<'_>, role: Role) -> Result<Identity, AuthFailure> {
        let (id, body) = self.check_headers(&req.head(), role)?;
        self.check_body(&body, req.body)?;
        Ok(id)
    }

    /// Everything that can be checked before the body is read: the credentials (a Chef signature is
    /// verified against the content hash the client declared) and the role. Then
    /// [`Auth::check_body`].
    pub fn check_headers(
        &self,
        req: &HeaderParts<'_>,
        role: Role,
    ) -> Result<(Identity, BodyCheck), AuthFailure> {
        let (id, body) = self.authenticate_headers(req)?;
        if id.roles.contains(&role) {
            Ok((id, body))
        } else {
            Err(AuthFailure::Forbidden {
                who: id.label(),
                role,
            })
        }
    }

    /// The body of a request that passed [`Auth::check_headers`].
    pub fn check_body(&self, check: &BodyCheck, body: &[u8]) -> Result<(), AuthFailure> {
        let BodyCheck::Signed {
            version,
            hash,
            signature,
            timestamp,
        } = check
        else {
            return Ok(());
        };
        if *hash != content_hash(*version, body) {
            return Err(AuthFailure::Invalid(
                "X-Ops-Content-Hash does not match the body",
            ));
        }
        self.remember(*signature, *timestamp)
    }

    /// Record a signature; refuse one seen before. Entries older than the skew window on both sides
    /// cannot verify again (their timestamp is refused), so they are dropped.
    fn remember(&self, signature: [u8; 32], timestamp: i64) -> Result<(), AuthFailure> {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.contains_key(&signature) {
            return Err(AuthFailure::Invalid(REPLAYED));
        }
        if seen.len() >= MAX_REPLAY_ENTRIES {
            let oldest_valid = now_secs() - MAX_CLOCK_SKEW_SECS;
            seen.retain(|_, ts| *ts >= oldest_valid);
            if seen.len() >= MAX_REPLAY_ENTRIES {
                return Err(AuthFailure::Invalid(
                    "too many signed requests within the clock-skew window; retry later",
                ));
            }
        }
        seen.insert(signature, timestamp);
        Ok(())
    }

    pub fn authenticate(&self, req: &RequestParts<'_>) -> Result<Identity, AuthFailure> {
        let (id, body) = self.authenticate_headers(&req.head())?;
        self.check_body(&body, req.body)?;
        Ok(id)
    }

    fn authenticate_headers(
        &self,
        req: &HeaderParts<'_>,
    ) -> Result<(Identity, BodyCheck), AuthFailure> {
        if let Some(value) = header(req.headers, "authorization") {
            return self.bearer(value).map(|id| (id, BodyCheck::Nothing));
        }
        if req.headers.contains_key("authorization") {
            return Err(AuthFailure::Invalid(
                "the Authorization header is not valid text",
            ));
        }
        if req.headers.contains_key("x-ops-userid") || req.headers.contains_key("x-ops-sign") {
            return self.chef(req);
        }
        Err(AuthFailure::Missing)
    }

    fn bearer(&self, value: &str) -> Result<Identity, AuthFailure> {
        let mut parts = value.trim().splitn(2, ' ');
        let scheme = parts.next().unwrap_or_default();
        let token = parts.next().unwrap_or_default().trim();
        if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
            return Err(AuthFailure::Invalid(
                "the Authorization header must be `Bearer TOKEN`",
            ));
        }
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Compare with every token, without stopping early, so timing says nothing about which matched.
        let mut found: Option<&Token> = None;
        for t in &self.tokens {
            if ct_eq(&presented, &t.hash) && found.is_none() {
                found = Some(t);
            }
        }
        match found {
            Some(t) => Ok(Identity {
                name: t.name.clone(),
                method: "token",
                roles: t.roles.clone(),
            }),
            None => Err(AuthFailure::Invalid("unknown bearer token")),
        }
    }

    fn chef(&self, req: &HeaderParts<'_>) -> Result<(Identity, BodyCheck), AuthFailure> {
        if self.clients.is_empty() {
            return Err(AuthFailure::ChefNotConfigured);
        }
        let h = req.headers;
        let sign = header(h, "x-ops-sign").ok_or(AuthFailure::Invalid("X-Ops-Sign is missing"))?;
        let version = sign
            .split(';')
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| k.trim() == "version")
            .and_then(|(_, v)| v.trim().parse::<SignVersion>().ok())
            .ok_or(AuthFailure::Invalid(
                "X-Ops-Sign names no supported protocol version (1.0, 1.1, 1.3)",
            ))?;
        let user =
            header(h, "x-ops-userid").ok_or(AuthFailure::Invalid("X-Ops-Userid is missing"))?;
        let ts = header(h, "x-ops-timestamp")
            .ok_or(AuthFailure::Invalid("X-Ops-Timestamp is missing"))?;
        let hash = header(h, "x-ops-content-hash")
            .ok_or(AuthFailure::Invalid("X-Ops-Content-Hash is missing"))?;
        let mut sig_b64 = String::new();
        for i in 1.. {
            match header(h, &format!("x-ops-authorization-{i}")) {
                Some(part) => sig_b64.push_str(part.trim()),
                None => break,
            }
            if i > 64 {
                return Err(AuthFailure::Invalid("too many X-Ops-Authorization headers"));
            }
        }
        if sig_b64.is_empty() {
            return Err(AuthFailure::Invalid("X-Ops-Authorization-1 is missing"));
        }
        let then = parse_timestamp(ts).ok_or(AuthFailure::Invalid(
            "X-Ops-Timestamp is not ISO 8601 UTC (2009-01-01T12:00:00Z)",
        ))?;
        if (req.now - then).abs() > MAX_CLOCK_SKEW_SECS {
            return Err(AuthFailure::Invalid(
                "X-Ops-Timestamp is more than 15 minutes from the gateway's clock",
            ));
        }
        // Every check on what the client sent comes before the client is looked up, and an unknown
        // client gets the bad signature's answer: which client names exist is nobody's business.
        let sig = BASE64
            .decode(sig_b64.as_bytes())
            .map_err(|_| AuthFailure::Invalid("X-Ops-Authorization-N is not valid base64"))?;
        // An unknown name is verified against a configured key all the same (and then refused), so
        // the time taken does not tell a configured name either.
        let known = self.clients.iter().find(|c| c.name == user);
        let Some(client) = known.or(self.clients.first()) else {
            return Err(AuthFailure::Invalid(BAD_SIGNATURE));
        };
        let api_version = header(h, "x-ops-server-api-version").unwrap_or("0");
        let canonical = canonical_request_with_hash(
            version,
            &SignRequest {
                method: req.method,
                path: req.path,
                body: b"",
                user_id: user,
                timestamp: ts,
                server_api_version: api_version,
            },
            hash,
        );
        let ok = match version {
            // Chef's "private encrypt" of the canonical request itself (PKCS#1 v1.5, no DigestInfo).
            SignVersion::V1_0 | SignVersion::V1_1 => client
                .key
                .verify(Pkcs1v15Sign::new_unprefixed(), canonical.as_bytes(), &sig)
                .is_ok(),
            SignVersion::V1_3 => {
                let digest = Sha256::digest(canonical.as_bytes());
                client
                    .key
                    .verify(Pkcs1v15Sign::new::<Sha256>(), &digest[..], &sig)
                    .is_ok()
            }
        };
        if !ok || known.is_none() {
            return Err(AuthFailure::Invalid(BAD_SIGNATURE));
        }
        // A replay is refused before its body is read too; it is recorded once the body checks out.
        let signature: [u8; 32] = Sha256::digest(&sig).into();
        if self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&signature)
        {
            return Err(AuthFailure::Invalid(REPLAYED));
        }
        Ok((
            Identity {
                name: client.name.clone(),
                method: "chef",
                roles: client.roles.clone(),
            },
            BodyCheck::Signed {
                version,
                hash: hash.to_owned(),
                signature,
                timestamp: then,
            },
        ))
    }
}

/// `2009-01-01T12:00:00Z` -> seconds since the epoch.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    crate::clock::parse_rfc3339(s)
}

/// Seconds since the epoch, now.
pub fn now_secs() -> i64 {
    crate::clock::since_epoch().as_secs() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::RsaPrivateKey;
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use serde_json::Value;

    fn spec_key() -> RsaPrivateKey {
        let pem = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/chef/mixlib-authentication/spec_private_key.pem"
        ))
        .unwrap();
        let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        RsaPrivateKey::from_pkcs1_der(&BASE64.decode(b64.as_bytes()).unwrap()).unwrap()
    }

    fn vectors() -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/chef/mixlib-authentication/vectors.json"
            ))
            .unwrap(),
        )
        .unwrap()
    }

    fn auth_with_spec_client(roles: Vec<Role>) -> Auth {
        let key = RsaPublicKey::from(&spec_key());
        Auth::new(
            vec![],
            vec![ChefClient::from_key("spec-user".into(), key, roles)],
        )
    }

    #[test]
    fn mixlib_golden_vectors_verify() {
        let v = vectors();
        let auth = auth_with_spec_client(vec![Role::Read]);
        let now = parse_timestamp("2009-01-01T12:05:00Z").unwrap();
        let mut checked = 0;
        for ver in ["v1_0", "v1_1", "v1_3"] {
            let Some(case) = v.get(ver) else { continue };
            let mut h = HeaderMap::new();
            for (k, val) in case["headers"].as_object().unwrap() {
                h.insert(
                    http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    val.as_str().unwrap().parse().unwrap(),
                );
            }
            if let Some(api) = case["server_api_version"].as_str() {
                h.insert("x-ops-server-api-version", api.parse().unwrap());
            }
            let req = RequestParts {
                method: v["method"].as_str().unwrap(),
                path: v["path"].as_str().unwrap(),
                headers: &h,
                body: v["body"].as_str().unwrap().as_bytes(),
                now,
            };
            assert_eq!(
                auth.check(&req, Role::Trigger),
                Err(AuthFailure::Forbidden {
                    who: "chef:spec-user".into(),
                    role: Role::Trigger
                })
            );
            let id = auth
                .check(&req, Role::Read)
                .unwrap_or_else(|e| panic!("{ver}: {e}"));
            assert_eq!(id.label(), "chef:spec-user");
            // The same request again is a replay.
            assert_eq!(
                auth.check(&req, Role::Read),
                Err(AuthFailure::Invalid(REPLAYED))
            );
            let tampered = RequestParts {
                body: b"Spec Body!",
                ..req
            };
            let auth = auth_with_spec_client(vec![Role::Read]);
            assert_eq!(
                auth.authenticate(&tampered),
                Err(AuthFailure::Invalid(
                    "X-Ops-Content-Hash does not match the body"
                ))
            );
            let late = RequestParts {
                now: now + 3600,
                ..tampered
            };
            assert!(matches!(
                auth.authenticate(&late),
                Err(AuthFailure::Invalid(m)) if m.contains("15 minutes")
            ));
            checked += 1;
        }
        assert!(checked >= 2, "golden vectors present");
    }

    #[test]
    fn signed_by_our_signer_and_path_bound() {
        use crate::store::chef::auth::{ClientKey, sign};
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/chef/mixlib-authentication/spec_private_key.pem"
        ));
        let key = ClientKey::load(path).unwrap();
        let auth = auth_with_spec_client(vec![Role::Trigger]);
        let now = now_secs();
        let ts = crate::store::chef::auth::timestamp(std::time::SystemTime::now());
        for version in SignVersion::ALL {
            let body = br#"{"nodes":["sw1"]}"#;
            let r = SignRequest {
                method: "POST",
                path: "/v1/converge",
                body,
                user_id: "spec-user",
                timestamp: &ts,
                server_api_version: "0",
            };
            let mut h = HeaderMap::new();
            for (k, v) in sign(&key, version, &r).unwrap() {
                h.insert(
                    http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    v.parse().unwrap(),
                );
            }
            let ok = RequestParts {
                method: "POST",
                path: "/v1/converge",
                headers: &h,
                body,
                now,
            };
            auth.check(&ok, Role::Trigger).unwrap();
            let other_path = RequestParts {
                path: "/v1/runs",
                ..ok
            };
            assert_eq!(
                auth.authenticate(&other_path),
                Err(AuthFailure::Invalid(
                    "the request signature does not verify"
                )),
                "{version}"
            );
        }
    }

    #[test]
    fn an_unknown_client_gets_the_bad_signature_answer_whatever_else_is_wrong() {
        let v = vectors();
        let case = &v["v1_3"];
        let now = parse_timestamp("2009-01-01T12:05:00Z").unwrap();
        let auth = auth_with_spec_client(vec![Role::Read]);
        let answer = |user: &str, sig: Option<&str>| {
            let mut h = HeaderMap::new();
            for (k, val) in case["headers"].as_object().unwrap() {
                h.insert(
                    http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    val.as_str().unwrap().parse().unwrap(),
                );
            }
            if let Some(api) = case["server_api_version"].as_str() {
                h.insert("x-ops-server-api-version", api.parse().unwrap());
            }
            h.insert("x-ops-userid", user.parse().unwrap());
            if let Some(sig) = sig {
                h.insert("x-ops-authorization-1", sig.parse().unwrap());
                h.remove("x-ops-authorization-2");
            }
            let head = HeaderParts {
                method: v["method"].as_str().unwrap(),
                path: v["path"].as_str().unwrap(),
                headers: &h,
                now,
            };
            auth.check_headers(&head, Role::Read).map(|(id, _)| id)
        };
        let bad = Err(AuthFailure::Invalid(BAD_SIGNATURE));
        assert_eq!(answer("nobody", None), bad);
        assert_eq!(answer("spec-user", Some("AAAA")), bad);
        assert_eq!(answer("nobody", Some("AAAA")), bad);
        // Undecodable base64 is refused the same way for a known and an unknown name.
        assert_eq!(
            answer("nobody", Some("!!")),
            answer("spec-user", Some("!!"))
        );
        // Control: the real client with its real signature passes.
        assert!(answer("spec-user", None).is_ok());
    }

    #[test]
    fn weak_rsa_keys_are_refused_at_load() {
        let weak = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/weak-keys/rsa1024.pub.pem"
        ));
        let e = ChefClient::load("old".into(), weak, vec![Role::Read])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a 1024-bit RSA key is too weak") && e.contains("rsa1024.pub.pem"),
            "{e}"
        );
    }

    #[test]
    fn bearer_tokens() {
        let t = Token::new("ci".into(), &token_hash_hex("s3cret"), vec![Role::Read]).unwrap();
        let auth = Auth::new(vec![t], vec![]);
        let mut h = HeaderMap::new();
        let parts = |h: &HeaderMap| {
            auth.authenticate(&RequestParts {
                method: "GET",
                path: "/v1/runs",
                headers: h,
                body: b"",
                now: 0,
            })
        };
        assert_eq!(parts(&h), Err(AuthFailure::Missing));
        h.insert("authorization", "Bearer s3cret".parse().unwrap());
        assert_eq!(parts(&h).unwrap().label(), "token:ci");
        h.insert("authorization", "Bearer s3cre".parse().unwrap());
        let e = parts(&h).unwrap_err();
        assert!(!e.to_string().contains("s3cre"), "{e}");
        h.insert("authorization", "Basic czNjcmV0".parse().unwrap());
        assert!(matches!(parts(&h), Err(AuthFailure::Invalid(_))));
        h.remove("authorization");
        h.insert("x-ops-userid", "x".parse().unwrap());
        assert_eq!(parts(&h), Err(AuthFailure::ChefNotConfigured));
        assert!(Token::new("bad".into(), "abc", vec![]).is_err());
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_timestamp("2009-01-01T12:00:00Z"), Some(1_230_811_200));
        assert_eq!(parse_timestamp("2009-01-01 12:00:00Z"), None);
        assert_eq!(parse_timestamp("2009-13-01T12:00:00Z"), None);
    }
}
