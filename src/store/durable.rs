//! Durable writes of the files every node run rewrites (its current state, its intent journal entry),
//! done by one writer thread per process that commits whatever is queued as one group.
//!
//! ```text
//!   node task ── Job (root, file, bytes) ──▶ writer thread: take every job queued (up to 512),
//!       ▲                                     gathering for 2 ms when many nodes run at once
//!       │                                     1. write each to a temp file beside its target
//!       │                                        (the target's spare inode reused, `.NAME.spare`)
//!       │                                     2. one `syncfs` per file system of the group
//!       │                                     3. exchange (or rename) each temp with its target
//!       └─── oneshot: Ok once on disk ──────  4. one `fsync` per directory of the group
//! ```
//!
//! Why a thread of its own rather than a `spawn_blocking` per write sharing a sync (as before): the
//! shared sync hardly ever was shared. Measured on a first converge of 2,000 IOS devices (two writes per
//! device, 100 at once): 1.6 `syncfs` and 1.8 directory `fsync`s per device, because each write woke
//! its own blocking thread and found no other write in flight; and each of those hand-offs cost two
//! thread switches (43 per device in all). One thread that takes what queued while it was syncing the
//! last group makes the group as large as the load: the busier the gateway, the fewer syncs per file.
//!
//! Each file is as durable, when its job is answered, as `fsync` of the file, rename and `fsync` of its
//! directory made it: `syncfs` writes every dirty page and inode of the file system and flushes the
//! disk's cache. Writeback errors reach `syncfs` through the file system's error sequence, sampled
//! when its descriptor was opened: the descriptor is opened once per file system and kept, and a
//! failed `syncfs` fails every job of its group (the error cannot be attributed). A crash leaves a
//! target holding its old or its new content, never a mix; at worst a dot-file (a temp or a spare)
//! beside it, which no reader looks at.
//!
//! Reusing the spare inode matters on ext4 without a journal, where allocating an inode scans past
//! every inode freed in the last seconds (`recently_deleted`): a converge that creates thousands of
//! files spent a fifth of its CPU there (docs/bench.md). A reader may still hold the spare open from
//! when it was the current file, under a shared lock ([`super::local`]'s reads): the writer reuses it
//! only when it gets the exclusive lock at once, and otherwise writes a new file (it never waits).

use super::StoreError;
use crate::rootdir::{FileOpen, RootDir};
use std::collections::HashMap;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Largest group: bounds the memory of one group and the wait of its first job.
const MAX_GROUP: usize = 512;

/// How long the writer gathers jobs before syncing when many nodes run at once. Without it a group
/// was about two jobs on a busy converge: syncs are fast while little is dirty, so the writer was
/// seldom behind. With it, on a first converge of 2,000 IOS devices 100 at once, 0.1-0.3 `syncfs` a
/// device instead of 0.8, and a fifth fewer thread switches (docs/bench.md, "Change 25"). A node
/// waits at most this long a write: nothing when the cores are busy with other nodes, but with ten
/// at once first runs took 10% longer, hence [`GATHER_FROM`].
const GATHER: Duration = Duration::from_millis(2);
/// Node runs at once from which the writer gathers.
const GATHER_FROM: usize = 32;

/// Where a job's file lives.
pub enum Root {
    /// A root its owner opened once (the repo).
    Open(Arc<RootDir>),
    /// A directory the writer opens, created 0700 when missing (the journal's).
    Dir(PathBuf),
}

struct Job {
    root: Root,
    /// The file, relative to the root.
    rel: PathBuf,
    body: Vec<u8>,
    done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
}

impl Job {
    fn path(&self) -> PathBuf {
        match &self.root {
            Root::Open(r) => r.path().join(&self.rel),
            Root::Dir(d) => d.join(&self.rel),
        }
    }

    fn answer(self, r: std::io::Result<()>) {
        let path = self.path();
        // The caller may have stopped waiting (its node run was cancelled): nothing to tell.
        let _ = self
            .done
            .send(r.map_err(|source| StoreError::Io { path, source }));
    }
}

/// Write `body` to `rel` beneath `root` durably and atomically (readers see the old file or the new
/// one); returns once it is on disk.
pub async fn write(root: Root, rel: PathBuf, body: Vec<u8>) -> Result<(), StoreError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job = Job {
        root,
        rel,
        body,
        done: tx,
    };
    let path = job.path();
    submit(job).map_err(|source| StoreError::Io {
        path: path.clone(),
        source,
    })?;
    rx.await.unwrap_or_else(|_| {
        Err(StoreError::Io {
            path,
            source: std::io::Error::other("the state writer thread stopped"),
        })
    })
}

/// [`write`] for callers outside the async runtime (tests, blocking threads).
pub fn write_blocking(root: Root, rel: PathBuf, body: Vec<u8>) -> Result<(), StoreError> {
    futures::executor::block_on(write(root, rel, body))
}

fn submit(job: Job) -> std::io::Result<()> {
    use std::sync::{LazyLock, Mutex, PoisonError};
    static WRITER: LazyLock<Mutex<Option<mpsc::Sender<Job>>>> = LazyLock::new(Default::default);
    let mut w = WRITER.lock().unwrap_or_else(PoisonError::into_inner);
    // Never started, or stopped (it does not, short of a panic): start one.
    let job = match w.as_ref() {
        Some(tx) => match tx.send(job) {
            Ok(()) => return Ok(()),
            Err(mpsc::SendError(job)) => job,
        },
        None => job,
    };
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("netgw-writer".into())
        .spawn(move || writer(rx))?;
    tx.send(job)
        .map_err(|_| std::io::Error::other("the state writer thread stopped"))?;
    *w = Some(tx);
    Ok(())
}

fn writer(rx: mpsc::Receiver<Job>) {
    let mut syncers = Syncers::default();
    while let Ok(first) = rx.recv() {
        let gather = if RUNNING.load(Ordering::Relaxed) >= GATHER_FROM {
            GATHER
        } else {
            Duration::ZERO
        };
        let group = take_group(&rx, first, Instant::now() + gather);
        commit_group(group, &mut syncers);
    }
}

/// Nodes the converges of this process run at once, as they declared with [`busy`].
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Declares `nodes` node runs at once until the guard is dropped: the writer gathers jobs before
/// syncing while at least [`GATHER_FROM`] are declared.
pub fn busy(nodes: usize) -> Busy {
    RUNNING.fetch_add(nodes, Ordering::Relaxed);
    Busy(nodes)
}

/// A converge's declaration of its nodes at once ([`busy`]), withdrawn when dropped.
pub struct Busy(usize);

impl Drop for Busy {
    fn drop(&mut self) {
        RUNNING.fetch_sub(self.0, Ordering::Relaxed);
    }
}

/// `first` and the jobs that come until `until` (none are waited for after it), up to [`MAX_GROUP`].
fn take_group(rx: &mpsc::Receiver<Job>, first: Job, until: Instant) -> Vec<Job> {
    let mut group = vec![first];
    while group.len() < MAX_GROUP {
        let left = until.saturating_duration_since(Instant::now());
        let next = if left.is_zero() {
            rx.try_recv().ok()
        } else {
            rx.recv_timeout(left).ok()
        };
        match next {
            Some(j) => group.push(j),
            None => break,
        }
    }
    group
}

/// A job's file written to its temp, not yet published.
struct Staged {
    job: Job,
    file: StagedFile,
}

/// A temp file written beside its target, in the target's directory.
pub(super) struct StagedFile {
    pub(super) dir: RootDir,
    file_name: String,
    tmp: String,
    /// The file system, for one `syncfs` per file system of a group.
    dev: u64,
    /// Whether the target's spare may be claimed and the old target kept as the next spare.
    recycle: bool,
}

fn commit_group(group: Vec<Job>, syncers: &mut Syncers) {
    // 1. Each file written to its temp.
    let mut staged = Vec::with_capacity(group.len());
    for job in group {
        // The file system's descriptor is open before the file is written (see [`Syncers`]).
        let file = match &job.root {
            Root::Open(r) => syncers
                .watch(r)
                .and_then(|()| stage(r, &job.rel, &job.body, true)),
            Root::Dir(d) => RootDir::open_or_create(d).and_then(|r| {
                syncers.watch(&r)?;
                stage(&r, &job.rel, &job.body, true)
            }),
        };
        match file {
            Ok(file) => staged.push(Staged { job, file }),
            Err(e) => job.answer(Err(e)),
        }
    }
    // 2. The data of every file on disk before any name points at it: one sync per file system.
    let mut synced: HashMap<u64, Result<(), (std::io::ErrorKind, String)>> = HashMap::new();
    for s in &staged {
        synced
            .entry(s.file.dev)
            .or_insert_with(|| syncers.sync(&s.file).map_err(|e| (e.kind(), e.to_string())));
    }
    // 3. Each published; 4. one sync per directory, and the jobs answered after it.
    let mut dirs: HashMap<PathBuf, Vec<Staged>> = HashMap::new();
    for s in staged {
        let r = match &synced[&s.file.dev] {
            Ok(()) => s.file.publish(),
            Err((kind, msg)) => Err(std::io::Error::new(
                *kind,
                format!("a sync of this file system failed after the file was written: {msg}"),
            )),
        };
        match r {
            Ok(()) => dirs
                .entry(s.file.dir.path().to_owned())
                .or_default()
                .push(s),
            Err(e) => {
                s.file.discard();
                s.job.answer(Err(e));
            }
        }
    }
    for jobs in dirs.into_values() {
        let d = &jobs[0].file.dir;
        let r = super::local::sync_dir(d.path(), d.handle()).map_err(|e| (e.kind(), e.to_string()));
        for s in jobs {
            s.job.answer(
                r.clone()
                    .map_err(|(kind, msg)| std::io::Error::new(kind, msg)),
            );
        }
    }
}

/// The descriptors `syncfs` is called on, one per file system, opened once and kept, and opened
/// before the first file on that file system is written: a writeback error is reported to the
/// descriptors open when it happened, so one opened late could miss it. (A target directory on
/// another file system than its root, a mount point inside the repo, gets its descriptor at its
/// first sync instead.)
#[derive(Default)]
struct Syncers {
    fds: HashMap<u64, OwnedFd>,
    /// `syncfs` calls made (for the tests, and for anyone reading a core dump).
    syncs: u64,
}

impl Syncers {
    fn watch(&mut self, root: &RootDir) -> std::io::Result<()> {
        let dev = rustix::fs::fstat(root.handle())?.st_dev;
        if let std::collections::hash_map::Entry::Vacant(e) = self.fds.entry(dev) {
            e.insert(open_dot(root.handle())?);
        }
        Ok(())
    }

    fn sync(&mut self, f: &StagedFile) -> std::io::Result<()> {
        self.syncs += 1;
        let fd = match self.fds.entry(f.dev) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(open_dot(f.dir.handle())?),
        };
        rustix::fs::syncfs(&*fd).map_err(std::io::Error::from)
    }
}

/// A directory's own descriptor: cap-std may hold directories as `O_PATH` handles, which neither
/// `fsync` nor `syncfs` take.
pub(super) fn open_dot(handle: &cap_std::fs::Dir) -> std::io::Result<OwnedFd> {
    rustix::fs::openat(
        handle,
        ".",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(std::io::Error::from)
}

/// Write `body` to a temp file in `rel`'s directory beneath `root` (made 0700 when missing). With
/// `recycle`, the target's spare inode is claimed when there is one and no reader holds it. Every
/// name is resolved in a handle of the target's directory opened beneath `root`, so neither a
/// symlinked directory nor a link at a temp or spare name leads out of it. Without `recycle` the
/// file's data is synced here ([`super::local::write_json_atomic`]: files written now and then);
/// with it, by the group's `syncfs`. The file is closed on return (a claimed spare's lock with it).
pub(super) fn stage(
    root: &RootDir,
    rel: &Path,
    body: &[u8],
    recycle: bool,
) -> std::io::Result<StagedFile> {
    let (Some(parent), Some(file_name)) = (rel.parent(), rel.file_name().and_then(|f| f.to_str()))
    else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "has no parent directory",
        ));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let dir = root.sub_or_create(parent)?;
    let dev = rustix::fs::fstat(dir.handle())?.st_dev;
    let tmp = format!(".{file_name}.tmp-{}-{}", std::process::id(), unique());
    let mut file = match recycle
        .then(|| claim_spare(&dir, file_name, &tmp))
        .flatten()
    {
        Some(f) => f,
        None => dir.open_file(Path::new(&tmp), &FileOpen::CREATE_NEW)?,
    };
    let staged = StagedFile {
        dir,
        file_name: file_name.to_owned(),
        tmp,
        dev,
        recycle,
    };
    let written = file.write_all(body).and_then(|()| {
        // Overwritten from the start, then cut to the new length: no blocks freed and reallocated
        // when the size stays about the same, as a node's state does.
        file.set_len(body.len() as u64)?;
        if recycle { Ok(()) } else { file.sync_all() }
    });
    drop(file);
    match written {
        Ok(()) => Ok(staged),
        Err(e) => {
            staged.discard();
            Err(e)
        }
    }
}

/// The target's spare, renamed to `tmp` and opened for writing, when there is one that is a plain
/// file no reader holds; `None` otherwise (a new temp file is written instead).
fn claim_spare(dir: &RootDir, file_name: &str, tmp: &str) -> Option<std::fs::File> {
    let d = dir.handle();
    let spare = format!(".{file_name}.spare");
    d.rename(&spare, d, tmp).ok()?;
    let keep = |f: Option<std::fs::File>| {
        if f.is_none() {
            // Put back for a later write (or, if that fails, leave it under the temp name: a
            // dot-file no reader looks at).
            let _ = d.rename(tmp, d, &spare);
        }
        f
    };
    if !d
        .symlink_metadata(tmp)
        .is_ok_and(|m| m.file_type().is_file())
    {
        return keep(None);
    }
    let Ok(f) = dir.open_file(Path::new(tmp), &FileOpen::WRITE) else {
        return keep(None);
    };
    // A reader may still hold this inode open from when it was the current file: it reads under a
    // shared lock, so write into it only under an exclusive one, taken at once or not at all.
    if f.try_lock().is_err() {
        return keep(None);
    }
    // The spare may be an inode saved before files were made private: it becomes the current file,
    // so it gets the mode a new one would have.
    let mode = std::os::unix::fs::PermissionsExt::from_mode(crate::rootdir::FILE_MODE);
    keep(f.set_permissions(mode).ok().map(|()| f))
}

impl StagedFile {
    /// Give the temp file its target's name: exchanged with the target when recycling (both names
    /// stay complete files at every instant; the old content becomes the spare), else renamed over it.
    pub(super) fn publish(&self) -> std::io::Result<()> {
        let d = self.dir.handle();
        let name = self.file_name.as_str();
        // Exchange only with a regular file; anything else (no target yet, a directory or a symlink
        // in the way) takes the plain rename, which replaces a symlink itself, never its target.
        let exchanged = self.recycle
            && d.symlink_metadata(name)
                .is_ok_and(|m| m.file_type().is_file())
            && rustix::fs::renameat_with(d, &self.tmp, d, name, rustix::fs::RenameFlags::EXCHANGE)
                .is_ok();
        if !exchanged {
            // No exchange on this file system or kernel, or no file to exchange with.
            return d.rename(&self.tmp, d, name);
        }
        // The old content is now under the temp name: keep its inode for the next write.
        if d.rename(&self.tmp, d, format!(".{name}.spare")).is_err() {
            let _ = d.remove_file(&self.tmp);
        }
        Ok(())
    }

    /// Remove the temp file of a write that will not be published.
    pub(super) fn discard(&self) {
        let _ = self.dir.handle().remove_file(&self.tmp);
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = crate::clock::since_epoch().as_nanos() as u64;
    t ^ N.fetch_add(1, Ordering::Relaxed).rotate_left(40)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn job(
        root: &Arc<RootDir>,
        rel: &str,
        body: &str,
    ) -> (Job, tokio::sync::oneshot::Receiver<Result<(), StoreError>>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let j = Job {
            root: Root::Open(root.clone()),
            rel: rel.into(),
            body: body.as_bytes().to_vec(),
            done: tx,
        };
        (j, rx)
    }

    #[test]
    fn a_group_is_synced_once_and_a_bad_job_fails_alone() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("out")).unwrap();
        let root = Arc::new(RootDir::open(d.path()).unwrap());
        let (a, ra) = job(&root, "nodes/current/a.json", "A");
        let (bad, rbad) = job(&root, "out/b.json", "B");
        let (c, rc) = job(&root, "journal/c.json", "C");
        let mut syncers = Syncers::default();
        commit_group(vec![a, bad, c], &mut syncers);
        assert!(ra.blocking_recv().unwrap().is_ok());
        assert!(rc.blocking_recv().unwrap().is_ok());
        let e = rbad.blocking_recv().unwrap().unwrap_err().to_string();
        assert!(e.contains("out/b.json") && e.contains("outside"), "{e}");
        assert!(fs::read_dir(outside.path()).unwrap().next().is_none());
        assert_eq!(
            fs::read_to_string(d.path().join("nodes/current/a.json")).unwrap(),
            "A"
        );
        assert_eq!(
            fs::read_to_string(d.path().join("journal/c.json")).unwrap(),
            "C"
        );
        assert_eq!(syncers.syncs, 1, "one syncfs for the group's file system");
    }

    #[test]
    fn a_gathering_writer_takes_the_jobs_that_come_in_its_window() {
        let d = tempfile::tempdir().unwrap();
        let root = Arc::new(RootDir::open(d.path()).unwrap());
        let (tx, rx) = mpsc::channel();
        let (first, _r0) = job(&root, "a.json", "A");
        let (queued, _r1) = job(&root, "b.json", "B");
        tx.send(queued).unwrap();
        // No window: what is queued, nothing waited for.
        assert_eq!(take_group(&rx, first, Instant::now()).len(), 2);
        // A window: the jobs sent while it lasts join the group; the sender leaving ends the wait.
        let (first, _r2) = job(&root, "c.json", "C");
        let late: Vec<_> = (0..3)
            .map(|i| job(&root, &format!("d{i}.json"), "D"))
            .collect();
        let sender = std::thread::spawn(move || {
            let mut answers = Vec::new();
            for (j, r) in late {
                std::thread::sleep(Duration::from_millis(5));
                tx.send(j).unwrap();
                answers.push(r);
            }
            answers
        });
        let group = take_group(&rx, first, Instant::now() + Duration::from_secs(60));
        assert_eq!(group.len(), 4);
        drop(sender.join().unwrap());
    }

    #[test]
    fn a_spare_a_reader_still_holds_is_left_to_it() {
        let d = tempfile::tempdir().unwrap();
        let root = Arc::new(RootDir::open(d.path()).unwrap());
        let save =
            |body: &str| write_blocking(Root::Open(root.clone()), "s.json".into(), body.into());
        save("one").unwrap();
        save("two").unwrap();
        // A reader opened the file when it held "one" (now the spare) and reads it under a shared lock.
        let spare = d.path().join(".s.json.spare");
        let held = fs::File::open(&spare).unwrap();
        held.lock_shared().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let r = root.clone();
        std::thread::spawn(move || {
            tx.send(write_blocking(
                Root::Open(r),
                "s.json".into(),
                b"three".to_vec(),
            ))
        });
        // The writer does not wait for the reader: it writes a new file.
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the save waited for the reader");
        r.unwrap();
        assert_eq!(
            fs::read_to_string(d.path().join("s.json")).unwrap(),
            "three"
        );
        let mut old = String::new();
        std::io::Read::read_to_string(&mut &held, &mut old).unwrap();
        assert_eq!(old, "one", "what the reader holds is untouched");
    }
}
