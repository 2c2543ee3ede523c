//! The node run lock: one device session per node at a time, across processes.
//!
//! ```text
//!   converge task ─▶ permit ─▶ NodeRunLock::acquire(dir/NAME.run.lock, lock_timeout)
//!                                 │ try_lock on spawn_blocking; busy ─▶ sleep (5 ms .. 200 ms, doubling)
//!                                 │ lock_timeout reached ─▶ LockError::Held (names the file and holder)
//!                                 └▶ held ─▶ load .. connect .. commit .. save .. close ─▶ drop: unlock
//! ```
//!
//! Two netgw processes (two CLI runs, a CLI run and `netgw serve`, two tasks of one process) converging
//! the same node would otherwise interleave their device transactions: both observe the device before
//! either commits, and the second commit is planned against a state that no longer exists. The lock is
//! an exclusive `flock(2)` (std `File::lock`) on `LOCK_DIR/NAME.run.lock`, by default the repo's
//! `locks/` in the gateway's state directory (`crate::state`, outside the repo, so dry runs leave the
//! repo untouched); the store's short per-write locks (`NAME.lock`) are other files, so holding the
//! run lock never blocks the store's own writes. `flock` locks belong to the open file description:
//! they conflict between two opens in one process too, and the kernel releases them when the process
//! dies, so a crashed run never leaves a stale lock. Lock files are never deleted (deleting a lock file
//! another process has open and is waiting on would let two holders in).
//!
//! The holder writes `pid=.. run=.. since_ms=.. format=2` into the file so the error of a process that gave up
//! can say who holds it. The lock only coordinates processes that use the same lock directory: gateways
//! on different machines sharing a Chef server need a shared `--lock-dir` (a local file system; `flock`
//! over NFS is not reliable).

use crate::rootdir::{FileOpen, RootDir};
use netgw_models::NodeName;
use std::fs::{File, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// The holder note's format (0.3's had no `format=`: version 1). Only people and the error of a
/// process that gave up read it; the lock is the `flock`, never the text.
pub const LOCK_NOTE_FORMAT: u32 = 2;

/// How long a node waits for another process's run by default.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(600);

/// First and longest pause between two attempts.
const POLL_MIN: Duration = Duration::from_millis(5);
const POLL_MAX: Duration = Duration::from_millis(200);

#[derive(Debug, Error)]
pub enum LockError {
    #[error(
        "node {node} is being converged by another process (lock {path}{holder}); gave up waiting after {waited:.1?}"
    )]
    Held {
        node: String,
        path: PathBuf,
        /// `, held by pid=.. run=..` when the holder wrote it.
        holder: String,
        waited: Duration,
    },

    #[error("node lock {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("node {node}: cancelled while waiting for the node lock {path}; nothing was changed")]
    Cancelled { node: String, path: PathBuf },

    #[error(
        "node {node} is being converged by another gateway or netgw run on the database (its advisory lock); gave up waiting after {waited:.1?}"
    )]
    HeldInDatabase { node: String, waited: Duration },

    #[error(
        "node {node}: its lock in the database was lost during the run ({why}); stopped before the commit, nothing was changed"
    )]
    Lost {
        node: String,
        why: crate::pg::lock::Lost,
    },

    #[error(
        "node {node}: its lock in the database was lost during the device session ({why}); the session was closed at once, before anything more reached the device ({then}); the next run converges the node"
    )]
    SessionCut {
        node: String,
        why: String,
        then: &'static str,
    },

    #[error("node {node}: its lock in the database: {source}")]
    Database {
        node: String,
        #[source]
        source: crate::pg::PgError,
    },
}

/// The lock file of a node in `dir`.
pub fn lock_path(dir: &Path, node: &NodeName) -> PathBuf {
    dir.join(format!("{node}.run.lock"))
}

/// An exclusive lock on one node's runs; released when dropped.
#[derive(Debug)]
pub struct NodeRunLock {
    file: File,
    path: PathBuf,
    acquired: Instant,
    /// With a database: the node's advisory lock there too (`crate::pg::lock`), released first.
    db: Option<crate::pg::lock::PgNodeLock>,
}

impl NodeRunLock {
    /// Take the lock without waiting: `Ok(None)` when another holder has it. Blocking file I/O: async
    /// callers use [`NodeRunLock::acquire`].
    pub fn try_acquire(path: &Path, run_id: &str) -> Result<Option<NodeRunLock>, LockError> {
        let io = |source| LockError::Io {
            path: path.to_owned(),
            source,
        };
        // The lock directory is the operator's (its path may hold symlinks); the file in it is opened
        // beneath it and never through a symlink: a link planted at NAME.run.lock would otherwise
        // have the holder note written over any file this process can write (src/rootdir.rs).
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a lock path needs a directory and a file name",
            )));
        };
        let dir = RootDir::open_or_create(dir).map_err(io)?;
        let mut file = dir
            .open_file(Path::new(name), &FileOpen::LOCK)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        // Who holds it, for the error of a process that gives up waiting. Best effort: the lock is
        // the flock, not this text.
        let since_ms = crate::clock::since_epoch().as_millis();
        let note = format!(
            "pid={} run={run_id} since_ms={since_ms} format={LOCK_NOTE_FORMAT}\n",
            std::process::id()
        );
        // Overwritten from the start (a fresh open is at offset 0), then cut to length: truncating to
        // zero first would free the file's block only to allocate it again.
        let written = file
            .write_all(note.as_bytes())
            .and_then(|()| file.set_len(note.len() as u64));
        if let Err(e) = written {
            warn!(path = %path.display(), error = %e, "could not record the lock holder");
        }
        Ok(Some(NodeRunLock {
            file,
            path: path.to_owned(),
            acquired: Instant::now(),
            db: None,
        }))
    }

    /// Take the lock, waiting at most `timeout` for another holder to release it (polling, so a
    /// cancelled or timed-out node stops waiting at once; each attempt runs on `spawn_blocking`).
    pub async fn acquire(
        path: PathBuf,
        node: &str,
        run_id: &str,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<NodeRunLock, LockError> {
        let started = Instant::now();
        let mut pause = POLL_MIN;
        let mut logged = false;
        loop {
            let (p, r) = (path.clone(), run_id.to_owned());
            let attempt = tokio::task::spawn_blocking(move || NodeRunLock::try_acquire(&p, &r))
                .await
                .map_err(|e| LockError::Io {
                    path: path.clone(),
                    source: std::io::Error::other(format!("lock task failed: {e}")),
                })??;
            if let Some(lock) = attempt {
                info!(
                    lock = %path.display(),
                    waited_ms = started.elapsed().as_millis() as u64,
                    "node lock acquired"
                );
                return Ok(lock);
            }
            let waited = started.elapsed();
            if waited >= timeout {
                let p = path.clone();
                let holder = tokio::task::spawn_blocking(move || holder_of(&p))
                    .await
                    .unwrap_or_default();
                return Err(LockError::Held {
                    node: node.to_owned(),
                    path,
                    holder,
                    waited,
                });
            }
            if !logged {
                info!(lock = %path.display(), "another process is converging this node; waiting for its lock");
                logged = true;
            }
            let nap = pause.min(timeout - waited);
            pause = (pause * 2).min(POLL_MAX);
            match cancel {
                Some(c) => {
                    tokio::select! {
                        _ = c.cancelled() => {
                            return Err(LockError::Cancelled { node: node.to_owned(), path });
                        }
                        _ = tokio::time::sleep(nap) => {}
                    }
                }
                None => tokio::time::sleep(nap).await,
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Also take the node's advisory lock in the database `url` (after the file lock, always in that
    /// order, so two holders never wait on each other), waiting at most `timeout`.
    pub async fn and_database(
        mut self,
        url: &crate::pg::DatabaseUrl,
        node: &str,
        timeout: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Result<NodeRunLock, LockError> {
        use crate::pg::lock::{PgNodeLock, Refused};
        match PgNodeLock::acquire(url, node, timeout, cancel).await {
            Ok(l) => {
                self.db = Some(l);
                Ok(self)
            }
            Err(Refused::Held(waited)) => Err(LockError::HeldInDatabase {
                node: node.to_owned(),
                waited,
            }),
            Err(Refused::Cancelled) => Err(LockError::Cancelled {
                node: node.to_owned(),
                path: self.path.clone(),
            }),
            Err(Refused::Db(source)) => Err(LockError::Database {
                node: node.to_owned(),
                source,
            }),
        }
    }
}

impl NodeRunLock {
    /// The fence before a change reaches the device: with the database, its lock must still be held
    /// (`crate::pg::lock`); the file lock cannot be lost while the process lives.
    pub async fn fence(&self, node: &str) -> Result<(), LockError> {
        match &self.db {
            Some(db) => db.fence().await.map_err(|why| LockError::Lost {
                node: node.to_owned(),
                why,
            }),
            None => Ok(()),
        }
    }
}

impl NodeRunLock {
    /// The device session of this run, cut the moment the database lock is not held
    /// (`crate::pg::gate`, which then sets `was_cut`); without a database, `driver` as it is.
    pub fn gate(
        &self,
        node: &str,
        driver: Box<dyn netgw_drivers::driver::Driver>,
        was_cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> Box<dyn netgw_drivers::driver::Driver> {
        match &self.db {
            Some(db) => Box::new(crate::pg::gate::GatedDriver::new(
                node,
                driver,
                db.watch(),
                was_cut,
            )),
            None => driver,
        }
    }

    /// `f` (opening the device session) while the database lock is held: `None`, `f` dropped,
    /// when it is not held or stops being held before `f` ends.
    pub async fn while_held<F: std::future::Future>(&self, f: F) -> Option<F::Output> {
        match &self.db {
            Some(db) => crate::pg::gate::while_held(&db.watch(), f).await,
            None => Some(f.await),
        }
    }

    /// The error of a run whose device session the gate cut and which cannot go on; `committing`:
    /// whether the cut came while a commit was unconfirmed.
    pub fn cut(&self, node: &str, committing: bool) -> LockError {
        let why = match self.db.as_ref().map(|db| db.state()) {
            Some(crate::pg::lock::LockState::Lost(why)) => why.to_string(),
            _ => "its database connection dropped".to_owned(),
        };
        LockError::SessionCut {
            node: node.to_owned(),
            why,
            then: if committing {
                "a commit was unconfirmed: the next run of the node finishes or undoes it"
            } else {
                "nothing had been committed"
            },
        }
    }
}

impl Drop for NodeRunLock {
    fn drop(&mut self) {
        if let Some(db) = self.db.take() {
            if db.was_interrupted() {
                warn!(lock = %self.path.display(), state = ?db.state(), "the database connection holding this node's lock was lost during the run");
            }
            drop(db);
        }
        // Closing the file releases the lock too; unlocking first makes the order explicit.
        if let Err(e) = self.file.unlock() {
            warn!(lock = %self.path.display(), error = %e, "unlocking the node lock failed (closing releases it)");
        }
        info!(
            lock = %self.path.display(),
            held_ms = self.acquired.elapsed().as_millis() as u64,
            "node lock released"
        );
    }
}

/// `, held by pid=.. run=.. since_ms=..` from the lock file, or nothing.
fn holder_of(path: &Path) -> String {
    let mut text = String::new();
    // Never through a symlink: the first line of whatever it points at would end up in an error.
    let read = match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => RootDir::open(dir)
            .and_then(|d| d.open_file(Path::new(name), &FileOpen::READ))
            .and_then(|f| f.take(256).read_to_string(&mut text)),
        _ => Ok(0),
    };
    match (read, text.lines().next()) {
        (Ok(_), Some(line)) if !line.trim().is_empty() => {
            let clean: String = line
                .chars()
                .filter(|c| c.is_ascii_graphic() || *c == ' ')
                .collect();
            format!(", held by {clean}")
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> NodeName {
        NodeName::new(n).unwrap()
    }

    #[test]
    fn exclusive_within_a_process_and_released_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let p = lock_path(&d.path().join("locks"), &name("sw1"));
        assert!(p.ends_with("locks/sw1.run.lock"));
        let a = NodeRunLock::try_acquire(&p, "r1").unwrap().expect("free");
        assert!(NodeRunLock::try_acquire(&p, "r2").unwrap().is_none());
        assert!(holder_of(&p).contains("run=r1"), "{}", holder_of(&p));
        drop(a);
        assert!(NodeRunLock::try_acquire(&p, "r2").unwrap().is_some());
        assert!(p.exists(), "lock files are kept");
    }

    #[tokio::test]
    async fn waits_then_gives_up_naming_the_file_and_holder() {
        let d = tempfile::tempdir().unwrap();
        let p = lock_path(d.path(), &name("sw1"));
        let held = NodeRunLock::try_acquire(&p, "run-a").unwrap().unwrap();
        let t = Instant::now();
        let e = NodeRunLock::acquire(p.clone(), "sw1", "run-b", Duration::from_millis(150), None)
            .await
            .unwrap_err();
        assert!(t.elapsed() >= Duration::from_millis(150));
        let msg = e.to_string();
        assert!(
            msg.contains("node sw1 is being converged by another process")
                && msg.contains(&p.display().to_string())
                && msg.contains("run=run-a"),
            "{msg}"
        );
        // Released while waiting: the waiter gets it.
        let p2 = p.clone();
        let waiter = tokio::spawn(async move {
            NodeRunLock::acquire(p2, "sw1", "run-c", Duration::from_secs(30), None).await
        });
        tokio::time::sleep(Duration::from_millis(30)).await;
        drop(held);
        let got = waiter.await.unwrap().unwrap();
        assert!(holder_of(got.path()).contains("run=run-c"));
    }

    #[tokio::test]
    async fn cancel_stops_the_wait() {
        let d = tempfile::tempdir().unwrap();
        let p = lock_path(d.path(), &name("sw1"));
        let _held = NodeRunLock::try_acquire(&p, "a").unwrap().unwrap();
        let token = CancellationToken::new();
        let t2 = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            t2.cancel();
        });
        let e = NodeRunLock::acquire(p, "sw1", "b", Duration::from_secs(30), Some(&token))
            .await
            .unwrap_err();
        assert!(matches!(e, LockError::Cancelled { .. }), "{e}");
    }

    #[test]
    fn a_symlinked_lock_file_is_refused_and_its_target_untouched() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim.conf");
        std::fs::write(&victim, "secret first line\n").unwrap();
        let locks = d.path().join("locks");
        std::fs::create_dir(&locks).unwrap();
        let p = lock_path(&locks, &name("sw1"));
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        let e = NodeRunLock::try_acquire(&p, "r").unwrap_err();
        assert!(
            e.to_string().contains("sw1.run.lock is a symbolic link"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "secret first line\n"
        );
        assert_eq!(holder_of(&p), "", "the link's target is not read either");
        // Control: the same node in a fresh directory locks, 0600 in a 0700 directory.
        let fresh = lock_path(&d.path().join("new/locks"), &name("sw1"));
        let _l = NodeRunLock::try_acquire(&fresh, "r").unwrap().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&fresh), 0o600);
        assert_eq!(mode(fresh.parent().unwrap()), 0o700);
    }

    #[test]
    fn an_unwritable_directory_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let e = NodeRunLock::try_acquire(&file.join("sw1.run.lock"), "r").unwrap_err();
        assert!(e.to_string().starts_with("node lock "), "{e}");
        assert!(e.to_string().contains("not-a-dir"), "{e}");
    }
}
