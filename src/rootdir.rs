//! File access that cannot leave its root: the repo, the lock directory and the history database's
//! directory are opened once as a directory handle, and every file below is opened relative to it.
//!
//! ```text
//!   RootDir::open(repo)  ── the operator's path, symlinks in it followed (it is configuration)
//!     └─ open("nodes/current/sw1.json")  ── resolved beneath the handle: `..` or a symlink that leads
//!                                           out is refused; the last component is never followed
//! ```
//!
//! Whoever can write into the repo must not become the account netgw runs as (often root or a service
//! account): a symlink at `nodes/.locks/sw1.run.lock` or `nodes/current` would otherwise make netgw
//! truncate or write a file of the attacker's choice. Symlinks inside the root that stay inside are
//! followed for directories (the writer could have written there anyway); a symlink where a *file* is
//! expected is an `io::Error` naming the path (`... is a symbolic link; netgw does not follow links
//! where it expects a file`), and a path that leads out says so (`... leads outside its root`).
//!
//! Why cap-std (with cap-fs-ext) rather than calling `openat2(RESOLVE_BENEATH)` through rustix: it
//! uses `openat2` where the kernel has it and resolves component by component where it does not
//! (kernels before 5.6, seccomp filters that refuse `openat2`, other Unixes), a fallback that is easy
//! to get subtly wrong and that the Bytecode Alliance maintains and fuzzes for wasmtime's sandbox.
//!
//! Files netgw creates are 0600 and directories 0700, whatever the umask (a umask only takes bits
//! away): current state, lock files and the history database may hold device facts and secrets.

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, DirBuilder, DirBuilderExt, OpenOptions, OpenOptionsExt};
use std::io;
use std::path::{Path, PathBuf};

/// Mode of files netgw creates.
pub const FILE_MODE: u32 = 0o600;
/// Mode of directories netgw creates.
pub const DIR_MODE: u32 = 0o700;

/// A directory handle and the path it was opened from (for messages).
#[derive(Debug)]
pub struct RootDir {
    dir: Dir,
    path: PathBuf,
}

impl RootDir {
    /// Open an existing directory given by the operator.
    pub fn open(path: &Path) -> io::Result<RootDir> {
        let dir = Dir::open_ambient_dir(path, cap_std::ambient_authority())?;
        Ok(RootDir {
            dir,
            path: path.to_owned(),
        })
    }

    /// Open a directory given by the operator, creating it (and its parents, 0700) when missing.
    pub fn open_or_create(path: &Path) -> io::Result<RootDir> {
        match RootDir::open(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode_0700()
                    .create(path)?;
                RootDir::open(path)
            }
            other => other,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn handle(&self) -> &Dir {
        &self.dir
    }

    /// A subdirectory, resolved beneath this root.
    pub fn sub(&self, rel: &Path) -> io::Result<RootDir> {
        let dir = self.dir.open_dir(rel).map_err(|e| escape_error(e, rel))?;
        Ok(RootDir {
            dir,
            path: self.path.join(rel),
        })
    }

    /// A subdirectory, created (0700, with its parents) when missing.
    pub fn sub_or_create(&self, rel: &Path) -> io::Result<RootDir> {
        match self.sub(rel) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let mut b = DirBuilder::new();
                b.recursive(true).mode(DIR_MODE);
                self.dir
                    .create_dir_with(rel, &b)
                    .map_err(|e| escape_error(e, rel))?;
                self.sub(rel)
            }
            other => other,
        }
    }

    /// Open a file beneath the root, never through a symlink at its own name.
    pub fn open_file(&self, rel: &Path, opts: &FileOpen) -> io::Result<std::fs::File> {
        let mut o = OpenOptions::new();
        o.read(opts.read)
            .write(opts.write)
            .create(opts.create)
            .create_new(opts.create_new)
            .truncate(false)
            .mode(FILE_MODE)
            .follow(FollowSymlinks::No);
        let f = self
            .dir
            .open_with(rel, &o)
            .map_err(|e| self.symlink_error(e, rel))?;
        let f = f.into_std();
        // O_NOFOLLOW refuses a symlink; a FIFO or device where a file belongs would block or worse.
        if !f.metadata()?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", self.path.join(rel).display()),
            ));
        }
        Ok(f)
    }

    /// `ELOOP` from `O_NOFOLLOW` says "a symlink": say so, naming the path.
    fn symlink_error(&self, e: io::Error, rel: &Path) -> io::Error {
        if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
            || self
                .dir
                .symlink_metadata(rel)
                .is_ok_and(|m| m.file_type().is_symlink())
        {
            return io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link; netgw does not follow links where it expects a file",
                    self.path.join(rel).display()
                ),
            );
        }
        escape_error(e, rel)
    }
}

/// How to open a file with [`RootDir::open_file`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FileOpen {
    pub read: bool,
    pub write: bool,
    pub create: bool,
    pub create_new: bool,
}

impl FileOpen {
    pub const READ: FileOpen = FileOpen {
        read: true,
        write: false,
        create: false,
        create_new: false,
    };
    /// Read and write, created when missing (lock files).
    pub const LOCK: FileOpen = FileOpen {
        read: true,
        write: true,
        create: true,
        create_new: false,
    };
    pub const WRITE: FileOpen = FileOpen {
        read: false,
        write: true,
        create: false,
        create_new: false,
    };
    pub const CREATE_NEW: FileOpen = FileOpen {
        read: false,
        write: true,
        create: false,
        create_new: true,
    };
}

/// cap-std's "a path led outside of the filesystem" names no path: name it and say why.
fn escape_error(e: io::Error, rel: &Path) -> io::Error {
    if e.kind() == io::ErrorKind::PermissionDenied && e.to_string().contains("outside") {
        return io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} leads outside its root directory (through `..` or a symbolic link); refused",
                rel.display()
            ),
        );
    }
    e
}

/// Create `path` and its missing parents 0700, whatever the umask (for trees netgw owns whole, such
/// as a cookbook cache, whose paths it builds itself).
pub fn create_private_dir_all(path: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode_0700()
        .create(path)
}

/// Create a new file at `path`, 0600 whatever the umask; an existing file or a symlink there is an
/// error (`AlreadyExists`), never followed or truncated.
pub fn create_private_file(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
}

/// `std::fs::DirBuilder` with 0700.
trait Mode0700 {
    fn mode_0700(&mut self) -> &mut Self;
}

impl Mode0700 for std::fs::DirBuilder {
    fn mode_0700(&mut self) -> &mut Self {
        std::os::unix::fs::DirBuilderExt::mode(self, DIR_MODE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn a_symlinked_file_is_an_error_naming_it_and_the_target_is_untouched() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let root = d.path().join("root");
        std::fs::create_dir(&root).unwrap();
        symlink(&victim, root.join("f")).unwrap();
        let r = RootDir::open(&root).unwrap();
        let e = r.open_file(Path::new("f"), &FileOpen::LOCK).unwrap_err();
        assert!(e.to_string().contains("root/f is a symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        // Control: a plain file opens.
        std::fs::write(root.join("g"), "x").unwrap();
        r.open_file(Path::new("g"), &FileOpen::READ).unwrap();
    }

    #[test]
    fn a_directory_symlink_out_of_the_root_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let root = d.path().join("root");
        std::fs::create_dir(&root).unwrap();
        symlink(&outside, root.join("current")).unwrap();
        let r = RootDir::open(&root).unwrap();
        let e = r
            .open_file(Path::new("current/x"), &FileOpen::CREATE_NEW)
            .unwrap_err();
        assert!(e.to_string().contains("leads outside"), "{e}");
        assert!(r.sub_or_create(Path::new("current/deeper")).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        // Control: a symlink that stays inside is followed.
        std::fs::create_dir(root.join("real")).unwrap();
        symlink("real", root.join("inside")).unwrap();
        r.open_file(Path::new("inside/x"), &FileOpen::CREATE_NEW)
            .unwrap();
        assert!(root.join("real/x").is_file());
    }

    #[test]
    fn created_files_and_directories_are_private() {
        let d = tempfile::tempdir().unwrap();
        let r = RootDir::open_or_create(&d.path().join("a/b")).unwrap();
        let sub = r.sub_or_create(Path::new("c/d")).unwrap();
        sub.open_file(Path::new("f"), &FileOpen::CREATE_NEW)
            .unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&d.path().join("a/b")), 0o700);
        assert_eq!(mode(&d.path().join("a/b/c/d")), 0o700);
        assert_eq!(mode(&d.path().join("a/b/c/d/f")), 0o600);
    }
}
