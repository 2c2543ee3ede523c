//! OpenSSH known-hosts files (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"): host verification for the SSH
//! transport.
//!
//! Supported: comma-separated host patterns with `*`/`?` wildcards and `!` negation, `[host]:port` for
//! non-default ports, hashed entries (`|1|salt|hmac-sha1`, as written by `HashKnownHosts yes`), the
//! `@revoked` marker. `@cert-authority` lines are skipped (host certificates are not accepted).
//! Unparseable lines are skipped, as OpenSSH does.
//!
//! Policy (docs/design.md §4): a key that matches a recorded one is trusted; a host with no recorded key is
//! unknown (refused unless the caller explicitly accepts new keys); a host whose recorded keys all
//! differ from the presented one has a CHANGED key, which is always refused.
//!
//! Cost (scripts/bench.sh, docs/bench.md): a gateway checks thousands of hosts against one file, so a
//! file is parsed once per process and change ([`KnownHosts::load`] keeps the last parse per path, keyed
//! by size, modification time and inode), and a lookup visits only the entries whose literal patterns
//! name the host, plus the few with wildcards, negations or hashes. Re-parsing a 10,000-line file for
//! every connection was 30% of a 1,000-device converge's CPU and quadratic in the fleet size.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use data_encoding::BASE64;
use russh::keys::{Algorithm, HashAlg, PublicKey};

use super::error::SshError;

/// The parsed contents of one known-hosts file.
#[derive(Debug, Clone, Default)]
pub struct KnownHosts {
    path: PathBuf,
    /// Shared: a clone (one per connection) copies no entry.
    parsed: Arc<Parsed>,
}

#[derive(Debug, Default)]
struct Parsed {
    entries: Vec<Entry>,
    /// Lower-cased literal host pattern -> indices of the entries that list it (matching is
    /// case-insensitive, as OpenSSH's for host names).
    literal: HashMap<String, Vec<usize>>,
    /// Entries with a wildcard, a negation or a hashed host field: always tried.
    general: Vec<usize>,
}

impl Parsed {
    fn new(entries: Vec<Entry>) -> Parsed {
        let mut literal: HashMap<String, Vec<usize>> = HashMap::new();
        let mut general = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let plain = !e.hosts.starts_with('|')
                && !e
                    .hosts
                    .split(',')
                    .any(|p| p.starts_with('!') || p.contains(['*', '?']));
            if plain {
                for p in e.hosts.split(',') {
                    let ids = literal.entry(p.to_ascii_lowercase()).or_default();
                    if ids.last() != Some(&i) {
                        ids.push(i);
                    }
                }
            } else {
                general.push(i);
            }
        }
        Parsed {
            entries,
            literal,
            general,
        }
    }

    /// The entries whose host field matches `name`, in file order.
    fn matching<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a Entry> + 'a {
        let mut ids: Vec<usize> = self
            .literal
            .get(&name.to_ascii_lowercase())
            .map(|v| v.as_slice())
            .unwrap_or_default()
            .iter()
            .chain(&self.general)
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let name = name.to_owned();
        ids.into_iter()
            .map(|i| &self.entries[i])
            .filter(move |e| host_matches(&name, &e.hosts))
    }
}

/// The file's identity for the parse cache: size, modification time, inode. An append changes the
/// size; a rewrite changes the inode (atomic rename) or the time.
type Stamp = (u64, Option<std::time::SystemTime>, u64);

fn stamp(m: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt as _;
    (m.len(), m.modified().ok(), m.ino())
}

/// The file's stamp, `None` when there is no file.
async fn file_stamp(path: &Path) -> Result<Option<Stamp>, SshError> {
    match tokio::fs::metadata(path).await {
        Ok(m) => Ok(Some(stamp(&m))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(SshError::KnownHostsIo {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Path -> its stamp when parsed, and the parse.
type ParseCache = HashMap<PathBuf, (Stamp, Arc<Parsed>)>;

/// Last parse of each file this process read.
static CACHE: Mutex<Option<ParseCache>> = Mutex::new(None);

/// Held while a file is read and parsed, so that one load parses and the others wait for its parse.
/// A converge opens its first sessions all at once, and each found the cache empty: with 100 at once
/// and a 10,000-line file, 100 parses of about 4.5 MB each (what that cost: docs/bench.md). Only a
/// miss takes it; a file that changed is parsed again under it.
static PARSING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[derive(Debug, Clone)]
struct Entry {
    /// 1-based line number, for error messages.
    line: usize,
    revoked: bool,
    hosts: String,
    key: PublicKey,
}

/// The outcome of checking a presented host key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A recorded entry for this host has this key.
    Trusted,
    /// No entry for this host.
    Unknown,
    /// Entries exist for this host, none with this key. `expected` is the first recorded key (one of the
    /// same algorithm when there is one) and its line.
    Changed { line: usize, expected: PublicKey },
    /// The key is marked `@revoked`.
    Revoked,
}

impl KnownHosts {
    /// Parse a known-hosts text. Lines that do not parse are skipped.
    pub fn parse(path: impl Into<PathBuf>, text: &str) -> KnownHosts {
        let entries = text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| parse_line(i + 1, line))
            .collect();
        KnownHosts {
            path: path.into(),
            parsed: Arc::new(Parsed::new(entries)),
        }
    }

    /// Read a known-hosts file without blocking the runtime. A missing file is an empty one (the first
    /// accepted key creates it). The parse is reused while the file's size, modification time and
    /// inode are unchanged (one `stat` per call), so thousands of sessions share one parse; sessions
    /// that load it at once wait for one parse ([`PARSING`]).
    pub async fn load(path: &Path) -> Result<KnownHosts, SshError> {
        let Some(before) = file_stamp(path).await? else {
            return Ok(Self::empty(path));
        };
        if let Some(kh) = Self::cached(path, &before) {
            return Ok(kh);
        }
        let _parsing = PARSING.lock().await;
        // Stamped again under the lock: the wait may have been for a parse of this very file.
        let Some(before) = file_stamp(path).await? else {
            return Ok(Self::empty(path));
        };
        if let Some(kh) = Self::cached(path, &before) {
            return Ok(kh);
        }
        Self::read_and_cache(path, before).await
    }

    fn empty(path: &Path) -> KnownHosts {
        KnownHosts {
            path: path.to_owned(),
            parsed: Arc::default(),
        }
    }

    /// The cached parse of `path` when it was made of the file as `stamp` describes it.
    fn cached(path: &Path, stamp: &Stamp) -> Option<KnownHosts> {
        let (_, parsed) = CACHE
            .lock()
            .ok()
            .and_then(|c| c.as_ref()?.get(path).cloned())
            .filter(|(s, _)| s == stamp)?;
        Some(KnownHosts {
            path: path.to_owned(),
            parsed,
        })
    }

    /// Read and parse the file (the parse off the runtime: milliseconds for a fleet's file), and cache
    /// the parse when the file did not change while it was read.
    async fn read_and_cache(path: &Path, before: Stamp) -> Result<KnownHosts, SshError> {
        let io = |source| SshError::KnownHostsIo {
            path: path.to_owned(),
            source,
        };
        let bytes = match tokio::fs::read(path).await {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::empty(path)),
            Err(e) => return Err(io(e)),
        };
        let len = bytes.len() as u64;
        let owned = path.to_owned();
        let kh = tokio::task::spawn_blocking(move || {
            KnownHosts::parse(owned, &String::from_utf8_lossy(&bytes))
        })
        .await
        .map_err(|e| io(std::io::Error::other(e)))?;
        // Cache only a parse known to match the stamp: the file must not have changed while read.
        if let Ok(m) = tokio::fs::metadata(path).await
            && stamp(&m) == before
            && m.len() == len
            && let Ok(mut c) = CACHE.lock()
        {
            c.get_or_insert_with(HashMap::new)
                .insert(path.to_owned(), (before, kh.parsed.clone()));
        }
        Ok(kh)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Check `key` presented by `host:port`.
    pub fn check(&self, host: &str, port: u16, key: &PublicKey) -> Verdict {
        let name = host_pattern(host, port);
        // @revoked applies whatever else is recorded.
        let matching: Vec<&Entry> = self.parsed.matching(&name).collect();
        if matching
            .iter()
            .any(|e| e.revoked && e.key.key_data() == key.key_data())
        {
            return Verdict::Revoked;
        }
        let recorded: Vec<&Entry> = matching.into_iter().filter(|e| !e.revoked).collect();
        if recorded.iter().any(|e| e.key.key_data() == key.key_data()) {
            return Verdict::Trusted;
        }
        let same_algo = recorded
            .iter()
            .find(|e| same_family(&e.key.algorithm(), &key.algorithm()));
        match same_algo.or(recorded.first()) {
            Some(e) => Verdict::Changed {
                line: e.line,
                expected: e.key.clone(),
            },
            None => Verdict::Unknown,
        }
    }

    /// Algorithms of the keys recorded for `host:port`, to ask the server for those first (as OpenSSH
    /// orders HostKeyAlgorithms), so a server with several host keys presents the one we know.
    pub fn recorded_algorithms(&self, host: &str, port: u16) -> Vec<Algorithm> {
        let name = host_pattern(host, port);
        let mut algos = Vec::new();
        for e in self.parsed.matching(&name).filter(|e| !e.revoked) {
            let a = e.key.algorithm();
            let expanded = if is_rsa(&a) {
                // An RSA key is offered under three signature algorithms; prefer the SHA-2 ones.
                vec![
                    Algorithm::Rsa {
                        hash: Some(HashAlg::Sha512),
                    },
                    Algorithm::Rsa {
                        hash: Some(HashAlg::Sha256),
                    },
                    Algorithm::Rsa { hash: None },
                ]
            } else {
                vec![a]
            };
            for a in expanded {
                if !algos.contains(&a) {
                    algos.push(a);
                }
            }
        }
        algos
    }
}

/// The name known-hosts files use for a host: `host` on port 22, `[host]:port` otherwise.
pub fn host_pattern(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_owned()
    } else {
        format!("[{host}]:{port}")
    }
}

/// `ssh-ed25519 SHA256:...`: how OpenSSH shows a key to an operator.
pub fn fingerprint(key: &PublicKey) -> String {
    format!(
        "{} {}",
        key.algorithm().as_str(),
        key.fingerprint(HashAlg::Sha256)
    )
}

/// The line recorded for an accepted key (plain host name, no comment).
pub fn entry_line(host: &str, port: u16, key: &PublicKey) -> Result<String, SshError> {
    let mut k = key.clone();
    k.set_comment("");
    let openssh = k.to_openssh().map_err(|e| SshError::KnownHostsIo {
        path: PathBuf::new(),
        source: std::io::Error::other(e.to_string()),
    })?;
    Ok(format!(
        "{} {}",
        host_pattern(host, port),
        openssh.trim_end()
    ))
}

/// Append an accepted key to the file (created with its directory if missing), on the blocking pool.
/// One `write` per line with O_APPEND, so concurrent sessions do not interleave lines.
pub async fn append(path: &Path, host: &str, port: u16, key: &PublicKey) -> Result<(), SshError> {
    let line = entry_line(host, port, key)?;
    let path_buf = path.to_owned();
    let io = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        if let Some(parent) = path_buf.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let needs_newline = match std::fs::read(&path_buf) {
            Ok(b) => !b.is_empty() && !b.ends_with(b"\n"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path_buf)?;
        let text = format!("{}{line}\n", if needs_newline { "\n" } else { "" });
        f.write_all(text.as_bytes())?;
        f.sync_data()
    })
    .await
    .unwrap_or_else(|join| Err(std::io::Error::other(join.to_string())));
    io.map_err(|source| SshError::KnownHostsIo {
        path: path.to_owned(),
        source,
    })
}

fn parse_line(line_no: usize, line: &str) -> Option<Entry> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let mut fields = line.split_whitespace();
    let mut first = fields.next()?;
    let mut revoked = false;
    if first.starts_with('@') {
        match first {
            "@revoked" => revoked = true,
            // @cert-authority and unknown markers: not a plain host key.
            _ => return None,
        }
        first = fields.next()?;
    }
    let algo = fields.next()?;
    let blob = fields.next()?;
    let key = PublicKey::from_openssh(&format!("{algo} {blob}")).ok()?;
    Some(Entry {
        line: line_no,
        revoked,
        hosts: first.to_owned(),
        key,
    })
}

fn is_rsa(a: &Algorithm) -> bool {
    matches!(a, Algorithm::Rsa { .. })
}

fn same_family(a: &Algorithm, b: &Algorithm) -> bool {
    (is_rsa(a) && is_rsa(b)) || a == b
}

/// sshd(8): a host field is a comma-separated list of patterns; a negated pattern that matches makes the
/// whole line not match; a hashed entry matches the HMAC-SHA1 of the name.
fn host_matches(name: &str, hosts: &str) -> bool {
    if let Some(hashed) = hosts.strip_prefix("|1|") {
        return hashed_matches(name, hashed);
    }
    let mut matched = false;
    for pattern in hosts.split(',') {
        if let Some(negated) = pattern.strip_prefix('!') {
            if glob_match(negated.as_bytes(), name.as_bytes()) {
                return false;
            }
        } else if glob_match(pattern.as_bytes(), name.as_bytes()) {
            matched = true;
        }
    }
    matched
}

fn hashed_matches(name: &str, salt_and_hash: &str) -> bool {
    let Some((salt, hash)) = salt_and_hash.split_once('|') else {
        return false;
    };
    let (Ok(salt), Ok(hash)) = (
        BASE64.decode(salt.as_bytes()),
        BASE64.decode(hash.as_bytes()),
    ) else {
        return false;
    };
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, &salt);
    ring::hmac::verify(&key, name.as_bytes(), &hash).is_ok()
}

/// `*` any run, `?` one character; case-insensitive like OpenSSH's match_pattern for host names.
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c.eq_ignore_ascii_case(&text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    // Generated with ssh-keygen (ed25519), then `ssh-keygen -H` for the hashed lines:
    // line 1 = [127.0.0.1]:2222, line 2 = sw1.example.net.
    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJp4qHGnL0L9fRt89C9Hv99M5jN3pS3PKg5JYKeT2L6i";
    const HASHED: &str = "\
|1|mLmbxrKboI1F+OzlybW+Jmgy+TA=|aqZwfTES6iHUeEJjik99aDae8GI= ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJp4qHGnL0L9fRt89C9Hv99M5jN3pS3PKg5JYKeT2L6i
|1|rwm3Si4cSJLB8/sPusEjUGpoPf0=|AM+Rzkyhm0vBcs0bXzzu/Mmtu/w= ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJp4qHGnL0L9fRt89C9Hv99M5jN3pS3PKg5JYKeT2L6i
";
    // fake-switches' fixed RSA host key (fake_switches/transports/ssh_service.py).
    const RSA: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC53ANLkvrZmufQsXuIZch7zrzWbevrqQpNT+/YUBffi3wX+I4lfJibL4lFwqgwR3Hshy7hqX4tgQiU6nWSz5QD/dcCuoaMvhVxVH0WyCtzc69xL9GBfHzyDvWYV/SU1bMiWwzWsFXSrnASeok1/zuDK4z5F0+U5gOtN009988/sw5DYBNer8gYq04Lt4r1WlCEPdyemLNkwHqNLMI7zgZw65djAEK7m+t8DhjtpV7ODxKi/ZB5TegoIbdMciMOTR+alX4bdw85d9tkVot7wLFX627/+DIbO0DokFfIDgJAt/jBVZf+MFhzjta/ZicxIWsTxK1yyOpmDlGFTHDR0Zwp";

    fn key(s: &str) -> PublicKey {
        PublicKey::from_openssh(s).unwrap()
    }

    #[test]
    fn plain_entries_with_ports() {
        let kh = KnownHosts::parse(
            "kh",
            &format!("# comment\n\n[127.0.0.1]:2222 {ED} c\nsw1,sw1.lab\t{RSA}\ngarbage line\n"),
        );
        assert_eq!(kh.check("127.0.0.1", 2222, &key(ED)), Verdict::Trusted);
        // Same host, other port: not the same entry.
        assert_eq!(kh.check("127.0.0.1", 22, &key(ED)), Verdict::Unknown);
        assert_eq!(kh.check("sw1.lab", 22, &key(RSA)), Verdict::Trusted);
        assert_eq!(
            kh.check("sw1", 22, &key(ED)),
            Verdict::Changed {
                line: 4,
                expected: key(RSA)
            }
        );
        assert_eq!(
            kh.recorded_algorithms("sw1", 22).first(),
            Some(&Algorithm::Rsa {
                hash: Some(HashAlg::Sha512)
            })
        );
    }

    #[test]
    fn hashed_entries() {
        let kh = KnownHosts::parse("kh", HASHED);
        assert_eq!(kh.check("127.0.0.1", 2222, &key(ED)), Verdict::Trusted);
        assert_eq!(kh.check("sw1.example.net", 22, &key(ED)), Verdict::Trusted);
        assert_eq!(kh.check("sw2.example.net", 22, &key(ED)), Verdict::Unknown);
        assert!(matches!(
            kh.check("sw1.example.net", 22, &key(RSA)),
            Verdict::Changed { line: 2, .. }
        ));
    }

    #[test]
    fn wildcards_negation_and_revoked() {
        let kh = KnownHosts::parse(
            "kh",
            &format!("sw*.lab,!sw9.lab {ED}\n@revoked * {RSA}\n@cert-authority *.lab {ED}\n"),
        );
        assert_eq!(kh.check("sw1.lab", 22, &key(ED)), Verdict::Trusted);
        assert_eq!(kh.check("SW1.LAB", 22, &key(ED)), Verdict::Trusted);
        assert_eq!(kh.check("sw9.lab", 22, &key(ED)), Verdict::Unknown);
        assert_eq!(kh.check("anything", 22, &key(RSA)), Verdict::Revoked);
    }

    #[test]
    fn glob() {
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"a*c", b"abbbc"));
        assert!(glob_match(b"[10.0.0.?]:22*", b"[10.0.0.1]:2222"));
        assert!(!glob_match(b"a?c", b"ac"));
        assert!(!glob_match(b"abc", b"abcd"));
    }

    #[tokio::test]
    async fn append_then_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/known_hosts");
        assert_eq!(
            KnownHosts::load(&path)
                .await
                .unwrap()
                .check("h", 2200, &key(ED)),
            Verdict::Unknown
        );
        append(&path, "h", 2200, &key(ED)).await.unwrap();
        append(&path, "h", 22, &key(RSA)).await.unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("[h]:2200 ssh-ed25519 "), "{text}");
        let kh = KnownHosts::load(&path).await.unwrap();
        assert_eq!(kh.check("h", 2200, &key(ED)), Verdict::Trusted);
        assert_eq!(kh.check("h", 22, &key(RSA)), Verdict::Trusted);
    }

    #[test]
    fn literal_index_keeps_file_order_and_case() {
        // A wildcard line before a literal one: the first recorded key (file order) is the expected one.
        let kh = KnownHosts::parse(
            "kh",
            &format!("[10.0.0.*]:2200 {RSA}\nA.lab,[10.0.0.1]:2200 {RSA}\nb.lab {ED}\n"),
        );
        assert_eq!(
            kh.check("10.0.0.1", 2200, &key(ED)),
            Verdict::Changed {
                line: 1,
                expected: key(RSA)
            }
        );
        assert_eq!(kh.check("a.LAB", 22, &key(RSA)), Verdict::Trusted);
        assert_eq!(kh.check("b.lab", 22, &key(ED)), Verdict::Trusted);
        assert_eq!(kh.check("c.lab", 22, &key(ED)), Verdict::Unknown);
    }

    #[tokio::test]
    async fn load_sees_every_change_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        std::fs::write(&path, format!("[h]:1 {ED}\n")).unwrap();
        let first = KnownHosts::load(&path).await.unwrap();
        assert_eq!(first.check("h", 1, &key(ED)), Verdict::Trusted);
        // Unchanged file: the same parse is shared.
        let again = KnownHosts::load(&path).await.unwrap();
        assert!(Arc::ptr_eq(&first.parsed, &again.parsed));
        // Appended: re-read.
        append(&path, "h", 2, &key(ED)).await.unwrap();
        assert_eq!(
            KnownHosts::load(&path)
                .await
                .unwrap()
                .check("h", 2, &key(ED)),
            Verdict::Trusted
        );
        // Replaced (atomic rename, same size): re-read, the old key is gone.
        let tmp = dir.path().join("kh.new");
        std::fs::write(&tmp, format!("[h]:1 {ED}\n[h]:3 {ED}\n")).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        let kh = KnownHosts::load(&path).await.unwrap();
        assert_eq!(kh.check("h", 2, &key(ED)), Verdict::Unknown);
        assert_eq!(kh.check("h", 3, &key(ED)), Verdict::Trusted);
        // Removed: empty.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            KnownHosts::load(&path)
                .await
                .unwrap()
                .check("h", 1, &key(ED)),
            Verdict::Unknown
        );
    }

    /// The sessions a converge opens at once load the file together: one parse, shared by all.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sessions_loading_at_once_share_one_parse() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        let text: String = (1..=3000).map(|p| format!("[h]:{p} {ED}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let loads: Vec<_> = (0..32)
            .map(|_| {
                let path = path.clone();
                tokio::spawn(async move { KnownHosts::load(&path).await.unwrap() })
            })
            .collect();
        let mut parsed = Vec::new();
        for l in loads {
            parsed.push(l.await.unwrap().parsed);
        }
        assert!(parsed.iter().all(|p| Arc::ptr_eq(p, &parsed[0])));
        assert_eq!(parsed[0].entries.len(), 3000);
    }

    #[test]
    fn fingerprint_format() {
        let f = fingerprint(&key(ED));
        assert!(f.starts_with("ssh-ed25519 SHA256:"), "{f}");
    }
}
