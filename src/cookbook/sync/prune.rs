//! Pruning the cookbook cache (`STATE_DIR/cookbooks/SERVER-HASH`): what the last runs used stays,
//! the rest goes, so the cache is bounded by the sets in use rather than by every version ever
//! synchronized.
//!
//! A set is kept when this run used it, when it is among the [`KEEP_SETS`] most recently used, or
//! when any run used it within [`GRACE`]; a file is kept when a kept set holds it or it was written
//! within [`GRACE`]. "Used" is the modification time of the set's `.used` file, touched whenever a
//! run builds or reuses the set. Safe with concurrent runs: a run marks its set before reading it,
//! and anything another run could be reading or about to link (used or written within [`GRACE`], far
//! longer than a run) is never removed. A removed set is first renamed to a temporary, so no reader
//! ever sees half of one; a later run that needs a removed version downloads it again.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Sets kept however old, the most recently used first.
pub const KEEP_SETS: usize = 16;
/// Sets used and files written this recently are never removed.
pub const GRACE: Duration = Duration::from_secs(24 * 3600);
/// A set's marker of its last use.
pub(super) const USED: &str = ".used";
/// A set's list of its files' checksums, one per line, written when it is built.
pub(super) const CHECKSUMS: &str = ".checksums";

/// What one pruning removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    pub sets: usize,
    pub files: usize,
}

/// Mark a set as used now.
pub(super) fn mark_used(set: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(crate::rootdir::FILE_MODE)
        .open(set.join(USED))?;
    f.set_modified(SystemTime::now())
}

/// Mark a cached file as used now (its modification time).
pub(super) fn touch(file: &Path) -> std::io::Result<()> {
    std::fs::File::options()
        .write(true)
        .open(file)?
        .set_modified(SystemTime::now())
}

fn last_used(set: &Path) -> SystemTime {
    let at = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    at(&set.join(USED))
        .or_else(|| at(set))
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn older_than(t: SystemTime, now: SystemTime, grace: Duration) -> bool {
    now.duration_since(t).is_ok_and(|age| age > grace)
}

/// Prune `cache` (one server's cache directory). `in_use`: the sets this run used.
pub fn prune(
    cache: &Path,
    in_use: &[PathBuf],
    keep: usize,
    grace: Duration,
    now: SystemTime,
) -> std::io::Result<Pruned> {
    let mut pruned = Pruned::default();
    let sets_dir = cache.join("sets");
    let mut sets: Vec<(SystemTime, PathBuf)> = Vec::new();
    for entry in read_dir_or_empty(&sets_dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with(".tmp-") {
            // A crashed run's half-built set (or one being removed): gone once nobody can be using it.
            if older_than(last_used(&path), now, grace) {
                let _ = std::fs::remove_dir_all(&path);
            }
            continue;
        }
        if path.is_dir() {
            sets.push((last_used(&path), path));
        }
    }
    sets.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut kept = Vec::new();
    for (i, (used, path)) in sets.into_iter().enumerate() {
        if i < keep || in_use.contains(&path) || !older_than(used, now, grace) {
            kept.push(path);
            continue;
        }
        // Looked at again just before: a run that marked it since keeps it.
        if !older_than(last_used(&path), now, grace) {
            kept.push(path);
            continue;
        }
        let doomed = sets_dir.join(format!(".tmp-prune-{}-{}", std::process::id(), pruned.sets));
        if std::fs::rename(&path, &doomed).is_ok() {
            std::fs::remove_dir_all(&doomed)?;
            pruned.sets += 1;
        }
    }
    let mut needed = HashSet::new();
    for set in &kept {
        checksums_of(set, &mut needed)?;
    }
    let files_dir = cache.join("files");
    for entry in read_dir_or_empty(&files_dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let written = entry.metadata().and_then(|m| m.modified()).unwrap_or(now);
        if !needed.contains(&name) && older_than(written, now, grace) {
            std::fs::remove_file(entry.path())?;
            pruned.files += 1;
        }
    }
    Ok(pruned)
}

fn read_dir_or_empty(dir: &Path) -> std::io::Result<Vec<std::io::Result<std::fs::DirEntry>>> {
    match std::fs::read_dir(dir) {
        Ok(rd) => Ok(rd.collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The checksums of a set's files: its list, or (a set built before lists were written) the MD5 of
/// every file under its `cookbooks/`.
fn checksums_of(set: &Path, out: &mut HashSet<String>) -> std::io::Result<()> {
    match std::fs::read_to_string(set.join(CHECKSUMS)) {
        Ok(text) => {
            out.extend(text.lines().map(str::to_owned));
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            hash_tree(&set.join("cookbooks"), out)
        }
        Err(e) => Err(e),
    }
}

fn hash_tree(dir: &Path, out: &mut HashSet<String>) -> std::io::Result<()> {
    for entry in read_dir_or_empty(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            hash_tree(&path, out)?;
        } else {
            let mut bytes = Vec::new();
            std::fs::File::open(&path)?.read_to_end(&mut bytes)?;
            out.insert(super::md5_hex(&bytes));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(cache: &Path, name: &str, sums: &[&str], used: SystemTime) -> PathBuf {
        let s = cache.join("sets").join(name);
        std::fs::create_dir_all(s.join("cookbooks")).unwrap();
        std::fs::write(s.join(CHECKSUMS), sums.join("\n")).unwrap();
        mark_used(&s).unwrap();
        std::fs::File::options()
            .write(true)
            .open(s.join(USED))
            .unwrap()
            .set_modified(used)
            .unwrap();
        s
    }

    fn file(cache: &Path, sum: &str, written: SystemTime) {
        let p = cache.join("files").join(sum);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let f = std::fs::File::create(&p).unwrap();
        f.set_modified(written).unwrap();
    }

    #[test]
    fn keeps_recent_and_in_use_sets_and_their_files_removes_the_rest() {
        let d = tempfile::tempdir().unwrap();
        let c = d.path();
        let now = SystemTime::now();
        let days = |n: u64| now - Duration::from_secs(n * 24 * 3600);
        let recent = set(c, "recent", &["a"], now);
        let old_in_use = set(c, "old-in-use", &["b"], days(10));
        let newest_old = set(c, "newest-old", &["c"], days(3));
        let oldest = set(c, "oldest", &["d"], days(5));
        for (sum, t) in [
            ("a", days(9)),
            ("b", days(9)),
            ("c", days(9)),
            ("d", days(9)),
        ] {
            file(c, sum, t);
        }
        file(c, "fresh-orphan", now);
        file(c, "old-orphan", days(2));
        // Keep 2 by recency: `recent` and `newest-old`; `old-in-use` is this run's.
        let p = prune(c, std::slice::from_ref(&old_in_use), 2, GRACE, now).unwrap();
        assert_eq!(p, Pruned { sets: 1, files: 2 });
        for s in [&recent, &old_in_use, &newest_old] {
            assert!(s.is_dir(), "{}", s.display());
        }
        assert!(!oldest.exists());
        let left: Vec<String> = {
            let mut v: Vec<String> = std::fs::read_dir(c.join("files"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        assert_eq!(left, ["a", "b", "c", "fresh-orphan"]);
        // Nothing left to prune; an empty cache is fine too.
        assert_eq!(
            prune(c, &[], 2, GRACE, now).unwrap().sets,
            1,
            "old-in-use goes once unused"
        );
        assert_eq!(
            prune(&c.join("none"), &[], 2, GRACE, now).unwrap(),
            Pruned::default()
        );
    }
}
