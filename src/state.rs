//! The gateway's own state, outside the repo: run locks (`crate::lock`), intent journals
//! (`crate::journal`), each node's current state (unless `--current-state repo`) and `netgw serve`'s
//! run history when no `--db` names one.
//!
//! ```text
//!   STATE_DIR/                       --state-dir, $NETGW_STATE_DIR, $XDG_STATE_HOME/netgw,
//!   │                                $HOME/.local/state/netgw, else /var/lib/netgw
//!   ├── repos/REPO-HASH/             one directory per repo (its canonical path, hashed)
//!   │   ├── locks/NAME.run.lock      node run locks (unless --lock-dir)
//!   │   ├── journal/NAME.json        unfinished device changes
//!   │   ├── current/NAME.json        what the node's last run observed (`crate::store::local`)
//!   │   └── history-ADDR-PORT.db     `netgw serve`'s SQLite run history (unless --db or --database)
//!   └── cookbooks/SERVER-HASH/       cookbooks synchronized from one Chef server (crate::cookbook::sync)
//!       ├── files/CHECKSUM           verified file contents, by MD5
//!       └── sets/SET-HASH/cookbooks/ one resolved cookbook set, laid out like a repo's cookbooks/
//! ```
//!
//! Gateway state is not desired state (docs/design.md §9): a dry run must leave the repo byte-for-byte as it
//! was, and a repo may be read-only or versioned. Keyed by repo so two repos' runs of a node called `sw1`
//! do not wait for each other, as before, when locks lived in each repo's `nodes/.locks`.

use std::path::{Path, PathBuf};

/// The state root when none is given: the XDG base directory spec's state home, which an unprivileged
/// user can write; `/var/lib/netgw` only when there is no home at all (a system service).
pub fn default_root() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("NETGW_STATE_DIR") {
        return d;
    }
    if let Some(d) = env("XDG_STATE_HOME").filter(|d| d.is_absolute()) {
        return d.join("netgw");
    }
    match env("HOME") {
        Some(h) => h.join(".local/state/netgw"),
        None => PathBuf::from("/var/lib/netgw"),
    }
}

/// The state directory of one repo under `root`: `root/repos/NAME-HASH`, NAME being the repo
/// directory's name (for people looking around) and HASH the FNV-1a of its canonical path.
pub fn repo_dir(root: &Path, repo: &Path) -> PathBuf {
    let canon = std::fs::canonicalize(repo).unwrap_or_else(|_| repo.to_owned());
    let h = fnv1a(canon.as_os_str().as_encoded_bytes());
    let name: String = canon
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(32)
        .collect();
    root.join("repos").join(format!("{name}-{h:016x}"))
}

/// FNV-1a, 64 bits: stable across releases and platforms (directory names must not change when the
/// standard library's hasher does).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The cookbook cache of one Chef server (its URL, organisation included, hashed): shared by every
/// node and every run that talks to that server.
pub fn cookbook_cache_dir(root: &Path, server_url: &str) -> PathBuf {
    let url = server_url.trim_end_matches('/');
    let host: String = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(32)
        .collect();
    root.join("cookbooks")
        .join(format!("{host}-{:016x}", fnv1a(url.as_bytes())))
}

/// `netgw serve`'s run history by default: one per repo and listening address, so two gateways on
/// one host never share a history (each marks the runs it finds unfinished at its start interrupted),
/// and a gateway restarted on the same address finds its own.
pub fn history_path(root: &Path, repo: &Path, listen: std::net::SocketAddr) -> PathBuf {
    // An address shows as digits, hex letters, dots and (IPv6) colons: only the colons are replaced.
    let ip = listen.ip().to_string().replace(':', "_");
    repo_dir(root, repo).join(format!("history-{ip}-{}.db", listen.port()))
}

/// Where a repo's run locks are by default.
pub fn lock_dir(root: &Path, repo: &Path) -> PathBuf {
    repo_dir(root, repo).join("locks")
}

/// Where a repo's intent journals are.
pub fn journal_dir(root: &Path, repo: &Path) -> PathBuf {
    repo_dir(root, repo).join("journal")
}

/// Where a repo's current state is kept by default (`crate::store::local::CurrentAt::State`).
pub fn current_dir(root: &Path, repo: &Path) -> PathBuf {
    repo_dir(root, repo).join("current")
}

/// Where transaction records live: beside the per-node entries, in a directory `unfinished` skips.
pub fn tx_dir(journal_dir: &Path) -> PathBuf {
    journal_dir.join("tx")
}

/// State that someone other than netgw's own user could have written: refused before it is read or
/// used, naming the path and the fix, as OpenSSH refuses a key or a config file with bad permissions.
/// An intent journal entry steers a device (recovery applies it, even in a why-run), a transaction
/// record decides which way recovery goes, and a cookbook cache holds the code and attributes a run
/// evaluates: whoever can write them can change the network.
#[derive(Debug, thiserror::Error)]
#[error(
    "{path}: {problem}; netgw refuses state that another user could have written or swapped. {fix}"
)]
pub struct UnsafeState {
    pub path: PathBuf,
    pub problem: String,
    /// What to do about it.
    pub fix: String,
}

/// Whether `meta` (of `path`) is state only this user (or root) could have written: owned by the
/// effective user or by root, not writable by group or others. Root is trusted as OpenSSH trusts it:
/// it can write anything anyway.
pub fn check_private(path: &Path, meta: &std::fs::Metadata) -> Result<(), UnsafeState> {
    use std::os::unix::fs::MetadataExt;
    let uid = rustix::process::geteuid().as_raw();
    let mode = if meta.is_dir() {
        crate::rootdir::DIR_MODE
    } else {
        crate::rootdir::FILE_MODE
    };
    let fail = |problem: String| UnsafeState {
        path: path.to_owned(),
        problem,
        fix: format!(
            "If it is yours: chown {uid} {p} && chmod {mode:o} {p}; if you did not create it, remove it",
            p = path.display()
        ),
    };
    if meta.uid() != uid && meta.uid() != 0 {
        return Err(fail(format!(
            "owned by uid {}, not by uid {uid} (the user netgw runs as)",
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(fail(format!(
            "mode {:04o} lets group or others write it",
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

/// [`check_private`] on the directory at `path` (followed if a symlink: the operator may point the
/// state directory anywhere); a missing directory is fine (netgw creates it 0700).
pub fn check_private_dir(path: &Path) -> Result<(), UnsafeState> {
    match std::fs::metadata(path) {
        Ok(m) => check_private(path, &m),
        Err(_) => Ok(()),
    }
}

/// Every directory above the state root: owned by root or by the user netgw runs as, and writable by
/// no one else unless sticky (`/tmp`), as OpenSSH's `StrictModes` asks of a home directory. Whoever
/// may rename an ancestor can swap the whole state directory for one of their own, however private
/// the directory itself is. A root that does not exist yet is checked from its nearest existing
/// ancestor.
pub fn check_ancestors(root: &Path) -> Result<(), UnsafeState> {
    use std::os::unix::fs::MetadataExt;
    let mut existing = root.to_path_buf();
    while !existing.exists() {
        if !existing.pop() {
            return Ok(());
        }
    }
    let Ok(real) = std::fs::canonicalize(&existing) else {
        return Ok(());
    };
    let uid = rustix::process::geteuid().as_raw();
    // An existing root is checked by `check_private`: here only what is above it.
    let skip = usize::from(existing.as_path() == root);
    let above: Vec<&Path> = real.ancestors().skip(skip).collect();
    for dir in above {
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        let owner_ok = meta.uid() == 0 || meta.uid() == uid;
        let sticky = meta.mode() & 0o1000 != 0;
        let writable = meta.mode() & 0o022 != 0;
        if !owner_ok || (writable && !sticky) {
            let problem = if owner_ok {
                format!(
                    "its parent directory {} (mode {:04o}) lets group or others rename it",
                    dir.display(),
                    meta.mode() & 0o7777
                )
            } else {
                format!(
                    "its parent directory {} is owned by uid {}, neither root nor uid {uid} (the user netgw runs as)",
                    dir.display(),
                    meta.uid()
                )
            };
            return Err(UnsafeState {
                path: root.to_owned(),
                problem,
                fix: format!(
                    "Give --state-dir (NETGW_STATE_DIR) a directory whose parents only root and uid {uid} can write, or chmod go-w {}",
                    dir.display()
                ),
            });
        }
    }
    Ok(())
}

/// The state root and every directory netgw keeps beneath it for `repo` (the repo's directory, its
/// locks, current state, journal and transaction records) and, when a Chef server serves the cookbooks, that server's
/// cookbook cache (`cache`, from [`cookbook_cache_dir`]): each that exists must be private
/// ([`check_private`]). Checked at the start of every run and of `netgw serve`, before any journal
/// entry is read.
pub fn check_state(root: &Path, repo: &Path, cache: Option<&Path>) -> Result<(), UnsafeState> {
    let repo_dir = repo_dir(root, repo);
    let journal = journal_dir(root, repo);
    let mut dirs = vec![
        root.to_owned(),
        root.join("repos"),
        repo_dir.clone(),
        repo_dir.join("locks"),
        repo_dir.join("current"),
        tx_dir(&journal),
        journal,
    ];
    if let Some(cache) = cache {
        dirs.extend([root.join("cookbooks"), cache.to_owned()]);
    }
    check_ancestors(root)?;
    dirs.iter().try_for_each(|d| check_private_dir(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_dir_under_a_directory_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let shared = d.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        let root = shared.join("netgw");
        assert!(check_ancestors(&root).is_ok(), "under a private parent");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_ancestors(&root).unwrap_err().to_string();
        assert!(
            e.contains("lets group or others rename it") && e.contains("chmod go-w"),
            "{e}"
        );
        std::fs::create_dir(&root).unwrap();
        assert!(
            check_ancestors(&root.join("x")).is_err(),
            "a root below it too"
        );
        // Sticky, as /tmp: others cannot rename what is not theirs.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(check_ancestors(&root).is_ok());
    }

    #[test]
    fn repos_get_distinct_stable_directories_outside_themselves() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let root = Path::new("/state");
        assert_eq!(repo_dir(root, a.path()), repo_dir(root, a.path()));
        assert_ne!(repo_dir(root, a.path()), repo_dir(root, b.path()));
        // The same repo through a relative or dotted path is the same repo.
        let dotted = a.path().join(".");
        assert_eq!(repo_dir(root, &dotted), repo_dir(root, a.path()));
        assert!(lock_dir(root, a.path()).starts_with("/state/repos"));
        assert!(!lock_dir(root, a.path()).starts_with(a.path()));
    }
}
