//! Files netgw-lab writes (the lab directory's inventories and trust anchors, `--inventory-out` and
//! the files beside it): beneath their directory only, never through a symlink, private whatever the
//! umask. `netgw-lab --clab` runs as root (containerlab does): a symlink or a `..` planted where it
//! writes would otherwise truncate or replace a file of someone else's choice, and a `known_hosts` or
//! CA another user could rewrite would make netgw trust their devices.
//!
//! ```text
//!   private_dir(lab dir)          created 0700 with its parents; an existing one must be this user's
//!                                 (or root's) and writable by no one else
//!   write_beneath(dir, ".tls/ca/ca.pem", ..)
//!       each directory of the relative path: created 0700, or an existing real directory (lstat);
//!       a symlink is refused; the file: O_NOFOLLOW, regular, this user's, 0600
//! ```

use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Mode of the files netgw-lab writes (inventories hold passwords; trust anchors must not be
/// rewritten by anyone else).
pub const FILE_MODE: u32 = 0o600;
/// Mode of the directories it creates.
pub const DIR_MODE: u32 = 0o700;

fn refused(path: &Path, why: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{}: {why}; refused", path.display()),
    )
}

/// Whether `meta` is this user's (or root's) and writable by no one else: what another local user
/// could not have planted or could not change after.
fn check_owner(path: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    let uid = rustix::process::geteuid().as_raw();
    if meta.uid() != uid && meta.uid() != 0 {
        return Err(refused(
            path,
            format!(
                "owned by uid {}, not by uid {uid} (the user netgw-lab runs as); remove it or \
                 choose another directory",
                meta.uid()
            ),
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(refused(
            path,
            format!(
                "mode {:04o} lets group or others write into it; chmod go-w it or choose a private \
                 directory",
                meta.mode() & 0o7777
            ),
        ));
    }
    Ok(())
}

/// Create `dir` (0700, with its parents) when missing; an existing one must pass [`check_owner`].
/// The operator's path: symlinks in it are followed (it is configuration).
pub fn private_dir(dir: &Path) -> io::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => check_owner(dir, &m),
        Ok(_) => Err(refused(dir, "not a directory".into())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(dir),
        Err(e) => Err(e),
    }
}

/// Write `text` to `base/rel` (see the module's comment): `base` must exist ([`private_dir`]).
pub fn write_beneath(base: &Path, rel: &Path, text: &str) -> io::Result<()> {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::CurDir => {}
            _ => {
                return Err(refused(
                    &base.join(rel),
                    "leads outside its directory".into(),
                ));
            }
        }
    }
    let Some((file, dirs)) = parts.split_last() else {
        return Err(refused(&base.join(rel), "names no file".into()));
    };
    let mut at: PathBuf = base.to_owned();
    for d in dirs {
        at.push(d);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => check_owner(&at, &m)?,
            Ok(_) => return Err(refused(&at, "is not a directory (a symbolic link?)".into())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::DirBuilder::new().mode(DIR_MODE).create(&at)?
            }
            Err(e) => return Err(e),
        }
    }
    at.push(file);
    write_private(&at, text)
}

/// Write the file at `path`, never through a symlink at its name, 0600.
fn write_private(path: &Path, text: &str) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                refused(
                    path,
                    "is a symbolic link; netgw-lab does not follow links".into(),
                )
            } else {
                e
            }
        })?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(refused(path, "is not a regular file".into()));
    }
    check_owner(path, &meta)?;
    // Truncated only once known to be ours; an existing file keeps its mode on open: set it.
    f.set_len(0)?;
    f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    f.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o777
    }

    #[test]
    fn written_beneath_private_and_never_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let lab = d.path().join("a/clab-x");
        private_dir(&lab).unwrap();
        write_beneath(&lab, Path::new(".tls/ca/ca.pem"), "pem").unwrap();
        assert_eq!(mode(&lab), 0o700);
        assert_eq!(mode(&lab.join(".tls/ca")), 0o700);
        assert_eq!(mode(&lab.join(".tls/ca/ca.pem")), 0o600);
        // A symlink at the file or at a directory of the path: refused, the target untouched.
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        symlink(&victim, lab.join("known_hosts")).unwrap();
        let e = write_beneath(&lab, Path::new("known_hosts"), "x").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        std::fs::create_dir(d.path().join("elsewhere")).unwrap();
        symlink(d.path().join("elsewhere"), lab.join(".tls2")).unwrap();
        assert!(write_beneath(&lab, Path::new(".tls2/ca.pem"), "x").is_err());
        assert!(write_beneath(&lab, Path::new("../victim"), "x").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(
            std::fs::read_dir(d.path().join("elsewhere"))
                .unwrap()
                .count(),
            0
        );
        // A directory others can write into is refused; control: the same, private, is used.
        let shared = d.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(private_dir(&shared).is_err());
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&shared).unwrap();
        write_beneath(&shared, Path::new("f"), "x").unwrap();
    }
}
