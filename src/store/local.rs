//! The local repo: a directory in the ChefFS layout RFC 45 describes.
//!
//! ```text
//! nodes/NAME.json             desired state (run_list, chef_environment, normal) — the operator's file
//! nodes/current/NAME.json     current state (default, override, automatic), only with
//!                             `--current-state repo`; by default runs save it in the state directory
//!                             (`STATE_DIR/repos/REPO-HASH/current/NAME.json`, [`CurrentAt`])
//! roles/NAME.json             roles
//! environments/NAME.json      environments (`_default` exists implicitly)
//! cookbooks/CB/attributes/*.yml   declarative attribute files
//! cookbooks/CB/recipes/R.yml      declarative recipes (attributes: and resources:)
//! ```
//!
//! Writes are atomic (temp file in the same directory, fsync, rename, fsync of the directory; concurrent
//! writers in one directory share the directory fsync, see [`sync_dir`]). Current-state files, rewritten
//! on every run, are written by the process's writer thread, which syncs whatever is queued as one
//! group and reuses the replaced file as a hidden spare (`.NAME.json.spare` beside it) instead of
//! allocating a new inode (`super::durable`). Every read-modify-write of a
//! node's desired file (create, update) happens under an exclusive lock on `nodes/.locks/NAME.lock`, so
//! two processes writing at once never lose each other's changes: a desired-state update re-reads the
//! file under the lock and changes only the fields it owns. The writer of current state never touches
//! the desired file at all and replaces the current file as a whole (a blind atomic write: the last
//! writer wins with or without a lock), so it takes no lock.
//!
//! These functions do blocking file I/O; async callers run them on `spawn_blocking` (the current state
//! goes to the writer thread instead).

use super::StoreError;
use crate::rootdir::{FileOpen, RootDir};
use netgw_models::name::{validate_environment_name, validate_role_name};
use netgw_models::node::DEFAULT_ENVIRONMENT;
use netgw_models::policy::{PolicyGroup, PolicyLock, validate_policy_name};
use netgw_models::{CurrentState, DesiredState, Environment, NodeName, Role};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest repo file netgw reads (a node or role bigger than this is surely a mistake).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Where a repo's current state (what the last run observed and saved) is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CurrentAt {
    /// `nodes/current/` inside the repo, as a Chef repo's `chef-client -z` keeps it: the repo must be
    /// writable, and a git checkout is dirty after every run (`--current-state repo`).
    Repo,
    /// A private directory of the gateway's state directory (`crate::state::current_dir`), so the repo
    /// can be read-only or a clean git checkout. A node with no file there yet is read from the repo's
    /// `nodes/current/` if it has one (state an older netgw or `--current-state repo` left), never
    /// written there.
    State(PathBuf),
}

#[derive(Debug, Clone)]
pub struct LocalRepo {
    root: PathBuf,
    current: CurrentAt,
    /// Every file below `root` is opened through this handle, never through a symlink that leads
    /// out of the repo or sits where a file belongs (src/rootdir.rs).
    dir: Arc<RootDir>,
    /// Reads of roles, environments and cookbooks kept for one run ([`LocalRepo::for_run`]).
    reads: Option<Arc<RunReads>>,
    /// The file holding the secret of encrypted data bag items (Chef's `encrypted_data_bag_secret`),
    /// for recipes evaluated with this repo's settings; the path only, never its contents.
    data_bag_secret: Option<PathBuf>,
}

/// What one run read of a repo's shared files (roles, environments, cookbook files and directory
/// listings), so a run of 1,000 nodes reads `environments/_default.json` or probes
/// `cookbooks/netdev/recipes/vlans.rb` once, not once per node and compile (that was 38 of the 43 file
/// opens per device). Scoped to a run, like chef-client's cookbook synchronisation: a
/// long-lived `netgw serve` starts every run with a fresh one, so an edit between runs is seen by the
/// next run, and every node of one run compiles against the same files. Node files (desired and
/// current state) are never kept: they are the operator's and the run's own. Failed reads are not kept
/// either; the next reader tries again and gets the error itself.
#[derive(Debug, Default)]
pub struct RunReads {
    files: std::sync::Mutex<std::collections::HashMap<PathBuf, Option<Arc<str>>>>,
    dirs: std::sync::Mutex<std::collections::HashMap<PathBuf, Option<Arc<[String]>>>>,
    is_dir: std::sync::Mutex<std::collections::HashMap<PathBuf, bool>>,
}

impl RunReads {
    /// The text of `rel` beneath `root`, read once per run.
    pub fn text(&self, root: &RootDir, rel: &Path) -> Result<Option<Arc<str>>, StoreError> {
        if let Some(hit) = lock(&self.files).get(rel) {
            return Ok(hit.clone());
        }
        let text: Option<Arc<str>> = read_text_in(root, rel)?.map(Arc::from);
        lock(&self.files).insert(rel.to_owned(), text.clone());
        Ok(text)
    }

    /// The text of `rel` beneath `root`: through `reads` when there is a run, else read now.
    pub fn text_in(
        reads: Option<&RunReads>,
        root: &RootDir,
        rel: &Path,
    ) -> Result<Option<Arc<str>>, StoreError> {
        match reads {
            Some(reads) => reads.text(root, rel),
            None => Ok(read_text_in(root, rel)?.map(Arc::from)),
        }
    }

    /// Whether `rel` beneath `root` is a directory, looked at once per run (every compile of every
    /// node asks for its cookbooks' directories).
    pub fn is_dir(&self, root: &RootDir, rel: &Path) -> bool {
        if let Some(hit) = lock(&self.is_dir).get(rel) {
            return *hit;
        }
        let is = match root.sub(rel) {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(_) => return false,
        };
        lock(&self.is_dir).insert(rel.to_owned(), is);
        is
    }

    /// The names in directory `rel` beneath `root` (`None`: no such directory), listed once per run.
    pub fn listing(
        &self,
        rel: &Path,
        list: impl FnOnce() -> Result<Option<Vec<String>>, StoreError>,
    ) -> Result<Option<Arc<[String]>>, StoreError> {
        if let Some(hit) = lock(&self.dirs).get(rel) {
            return Ok(hit.clone());
        }
        let names: Option<Arc<[String]>> = list()?.map(Arc::from);
        lock(&self.dirs).insert(rel.to_owned(), names.clone());
        Ok(names)
    }
}

/// A poisoned map only means another reader panicked between two statements that cannot leave it
/// inconsistent (one insert); its contents are still whole.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LocalRepo {
    /// Open a repo directory. It must exist and contain a `nodes/` directory.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let root = root.into();
        let Ok(dir) = RootDir::open(&root) else {
            return Err(StoreError::Repo {
                path: root,
                reason: "is not a directory (set --repo or NETGW_REPO to a repo with nodes/, roles/, environments/, cookbooks/)"
                    .into(),
            });
        };
        if !dir.handle().is_dir("nodes") {
            return Err(StoreError::Repo {
                path: root,
                reason: "has no nodes/ directory (or it leads outside the repo)".into(),
            });
        }
        Ok(LocalRepo {
            root,
            current: CurrentAt::Repo,
            dir: Arc::new(dir),
            reads: None,
            data_bag_secret: None,
        })
    }

    /// This repo with its current state kept `at`.
    pub fn with_current(self, at: CurrentAt) -> LocalRepo {
        LocalRepo {
            current: at,
            ..self
        }
    }

    pub fn current_at(&self) -> &CurrentAt {
        &self.current
    }

    /// When current state is kept in the state directory but the repo still has current-state files
    /// in `nodes/current/`: a sentence saying which are read and how to stop it (`None` otherwise).
    pub fn repo_current_note(&self) -> Option<String> {
        let CurrentAt::State(dir) = &self.current else {
            return None;
        };
        let rel = Path::new("nodes").join("current");
        let any = self.dir.handle().read_dir(&rel).ok()?.any(|e| {
            e.ok().is_some_and(|e| {
                let f = e.file_name();
                let f = f.to_string_lossy();
                !f.starts_with('.') && f.ends_with(".json")
            })
        });
        any.then(|| {
            format!(
                "{} holds current state: netgw now saves current state in {} and reads a node's \
                 file in {} only until a run saves it there (it never writes the repo's copy); \
                 remove {} once every node has run, or pass --current-state repo to keep \
                 current state in the repo",
                self.root.join(&rel).display(),
                dir.display(),
                rel.display(),
                self.root.join(&rel).display(),
            )
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// This repo, with recipes' encrypted data bag items decrypted with the secret in `path`.
    pub fn with_data_bag_secret(mut self, path: Option<PathBuf>) -> LocalRepo {
        self.data_bag_secret = path;
        self
    }

    /// The secret file of [`LocalRepo::with_data_bag_secret`].
    pub fn data_bag_secret(&self) -> Option<&Path> {
        self.data_bag_secret.as_deref()
    }

    /// The opened root and this run's reads, which the cookbooks beneath the repo share
    /// (`crate::cookbook::Cookbooks::of_repo`).
    pub fn shared_reads(&self) -> (Arc<RootDir>, Option<Arc<RunReads>>) {
        (self.dir.clone(), self.reads.clone())
    }

    /// This repo for one run: roles, environments and cookbook files are read once and kept until the
    /// returned value (and its clones) is dropped ([`RunReads`]).
    pub fn for_run(&self) -> LocalRepo {
        LocalRepo {
            reads: Some(Arc::default()),
            ..self.clone()
        }
    }

    /// `path` (one of this repo's, built from [`LocalRepo::root`]) relative to the repo.
    fn rel<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(&self.root).unwrap_or(path)
    }

    pub fn desired_path(&self, name: &NodeName) -> PathBuf {
        self.root.join("nodes").join(format!("{name}.json"))
    }

    /// Where runs save a node's current state.
    pub fn current_path(&self, name: &NodeName) -> PathBuf {
        match &self.current {
            CurrentAt::Repo => self.repo_current_path(name),
            CurrentAt::State(dir) => dir.join(format!("{name}.json")),
        }
    }

    /// `nodes/current/NAME.json` in the repo.
    fn repo_current_path(&self, name: &NodeName) -> PathBuf {
        self.root
            .join("nodes")
            .join("current")
            .join(format!("{name}.json"))
    }

    /// The file a node's current state is read from: [`LocalRepo::current_path`], or the repo's copy
    /// while the state directory has none yet ([`CurrentAt::State`]).
    pub fn current_read_path(&self, name: &NodeName) -> PathBuf {
        let path = self.current_path(name);
        match &self.current {
            CurrentAt::State(_) if !path.exists() && self.repo_current_path(name).exists() => {
                self.repo_current_path(name)
            }
            _ => path,
        }
    }

    /// The roles the repo has (`roles/NAME.json`, or `.rb` in Chef's Ruby DSL, which
    /// `crate::resolve::repo_role` reads), sorted; none when it has no `roles/`.
    pub fn role_names(&self) -> Result<Vec<String>, StoreError> {
        self.document_names("roles")
    }

    /// The environments the repo has (`environments/NAME.json` or `.rb`), sorted.
    pub fn environment_names(&self) -> Result<Vec<String>, StoreError> {
        self.document_names("environments")
    }

    fn document_names(&self, dir: &str) -> Result<Vec<String>, StoreError> {
        let mut names = Vec::new();
        let Ok(entries) = self.dir.handle().read_dir(dir) else {
            return Ok(names);
        };
        for entry in entries {
            let entry = entry.map_err(|source| StoreError::Io {
                path: self.root.join(dir),
                source,
            })?;
            let file_name = entry.file_name();
            let stem = file_name
                .to_str()
                .and_then(|f| f.strip_suffix(".json").or_else(|| f.strip_suffix(".rb")));
            if let Some(stem) = stem {
                names.push(stem.to_owned());
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// The node of the repo whose name is nearest `name`, for "did you mean" (none when none is near).
    pub fn nearest_node(&self, name: &str) -> Option<NodeName> {
        let existing = self.node_names().ok()?;
        let names: Vec<&str> = existing.iter().map(NodeName::as_str).collect();
        let near = netgw_models::name::nearest(name, &names)?;
        NodeName::new(near).ok()
    }

    /// Names of all nodes with a desired-state file, sorted.
    pub fn node_names(&self) -> Result<Vec<NodeName>, StoreError> {
        let dir = self.root.join("nodes");
        let mut names = Vec::new();
        for entry in self
            .dir
            .handle()
            .read_dir("nodes")
            .map_err(|source| StoreError::Io {
                path: dir.clone(),
                source,
            })?
        {
            let entry = entry.map_err(|source| StoreError::Io {
                path: dir.clone(),
                source,
            })?;
            let file_name = entry.file_name();
            let Some(stem) = file_name.to_str().and_then(|f| f.strip_suffix(".json")) else {
                continue;
            };
            // A symlink is listed: loading it is then an error naming it, not a silent skip.
            let kind = entry.file_type().map_err(|source| StoreError::Io {
                path: dir.join(&file_name),
                source,
            })?;
            if stem.starts_with('.') || !(kind.is_file() || kind.is_symlink()) {
                continue;
            }
            let name = NodeName::new(stem).map_err(|source| StoreError::Model {
                path: dir.join(&file_name),
                source,
            })?;
            names.push(name);
        }
        names.sort();
        Ok(names)
    }

    /// The desired state of a node. A full Chef node file is accepted: its desired part is used.
    pub fn load_desired(&self, name: &NodeName) -> Result<DesiredState, StoreError> {
        let path = self.desired_path(name);
        let Some(text) = self.read_optional(&path)? else {
            return Err(StoreError::NotFound {
                kind: "node",
                name: name.to_string(),
                path,
            });
        };
        check_keys(&path, &text, FileKind::Node)?;
        let d: DesiredState = parse_json(&path, &text)?;
        check_policy_node(&path, &d)?;
        validate_environment_name(&d.chef_environment)
            .map_err(|e| field_error(&path, "chef_environment", &e.to_string()))?;
        if &d.name != name {
            return Err(field_error(
                &path,
                "name",
                &format!(
                    "is {:?} but the file is named for {:?}",
                    d.name.as_str(),
                    name.as_str()
                ),
            ));
        }
        Ok(d)
    }

    /// Whether the repo's `nodes/current/` may hold a node's state. In a run that keeps state in the
    /// state directory, netgw never writes there, so one look per run answers for every node.
    fn may_have_repo_current(&self) -> bool {
        match (&self.current, &self.reads) {
            (CurrentAt::State(_), Some(reads)) => {
                reads.is_dir(&self.dir, Path::new("nodes/current"))
            }
            _ => true,
        }
    }

    /// The current state last saved for a node, if any.
    pub fn load_current(&self, name: &NodeName) -> Result<Option<CurrentState>, StoreError> {
        let mut path = self.current_path(name);
        let mut text = match &self.current {
            CurrentAt::Repo => None,
            CurrentAt::State(dir) => read_private_in(dir, Path::new(&format!("{name}.json")))?,
        };
        if text.is_none() && self.may_have_repo_current() {
            path = self.repo_current_path(name);
            text = self.read_optional_shared(&path)?;
        }
        let Some(text) = text else {
            return Ok(None);
        };
        let c: CurrentState = super::versioned::parse(&path, text.as_bytes(), &CURRENT_FORMAT)
            .map_err(|e| match e {
                // The field and line of a broken file, as for the operator's own files.
                super::versioned::FormatError::Parse { .. } => {
                    parse_json::<CurrentState>(&path, &text)
                        .err()
                        .unwrap_or_else(|| parse_err(&path, e.to_string()))
                }
                e => parse_err(&path, e.to_string()),
            })?;
        if &c.name != name {
            return Err(field_error(
                &path,
                "name",
                &format!(
                    "is {:?} but the file is named for {:?}",
                    c.name.as_str(),
                    name.as_str()
                ),
            ));
        }
        Ok(Some(c))
    }

    /// Save current state atomically. The desired file is never read or written here, so an
    /// operator's edit of `nodes/NAME.json` made during a run survives it.
    pub fn save_current(&self, current: &CurrentState) -> Result<(), StoreError> {
        self.save_current_body(&current.name, &current_body(current)?)
    }

    /// [`LocalRepo::save_current`] of a state already serialised by [`current_body`] (the async store
    /// serialises before it moves to a blocking thread, so the state is neither copied nor serialised
    /// twice).
    pub fn save_current_body(&self, name: &NodeName, body: &[u8]) -> Result<(), StoreError> {
        let (root, rel) = self.current_target(name);
        super::durable::write_blocking(root, rel, body.to_vec())
    }

    /// Where the writer thread saves a node's current state. No node lock: see the module
    /// documentation.
    pub(super) fn current_target(&self, name: &NodeName) -> (super::durable::Root, PathBuf) {
        match &self.current {
            CurrentAt::Repo => {
                let path = self.repo_current_path(name);
                (
                    super::durable::Root::Open(self.dir.clone()),
                    self.rel(&path).to_owned(),
                )
            }
            CurrentAt::State(dir) => (
                super::durable::Root::Dir(dir.clone()),
                PathBuf::from(format!("{name}.json")),
            ),
        }
    }

    /// Create a node's desired-state file if there is none (`POST /nodes` on a server). Returns true when
    /// it was created, false when one already existed (which is then left untouched).
    pub fn create_node(&self, desired: &DesiredState) -> Result<bool, StoreError> {
        let _lock = self.lock_node(&desired.name)?;
        let path = self.desired_path(&desired.name);
        // A dangling symlink counts as a file: it is never written through.
        if self.dir.handle().symlink_metadata(self.rel(&path)).is_ok() {
            return Ok(false);
        }
        write_json_atomic(
            &self.dir,
            self.rel(&path),
            &serde_json::to_value(desired).map_err(|e| parse_err(&path, e.to_string()))?,
        )?;
        Ok(true)
    }

    /// Update desired state under the node lock: re-read the file, let `f` change the desired fields,
    /// and write back only if they changed. Fields of the file that are not desired state (a full Chef
    /// node's `automatic`, unknown keys) are kept as they are. Returns whether the file was written.
    pub fn update_desired<F>(&self, name: &NodeName, f: F) -> Result<bool, StoreError>
    where
        F: FnOnce(&mut DesiredState),
    {
        let _lock = self.lock_node(name)?;
        let path = self.desired_path(name);
        let Some(text) = self.read_optional(&path)? else {
            return Err(StoreError::NotFound {
                kind: "node",
                name: name.to_string(),
                path,
            });
        };
        let mut raw: serde_json::Map<String, Value> = parse_json(&path, &text)?;
        let before: DesiredState = parse_json(&path, &text)?;
        let mut after = before.clone();
        f(&mut after);
        if after == before {
            return Ok(false);
        }
        if after.name != before.name {
            return Err(field_error(
                &path,
                "name",
                "a desired-state update cannot rename a node",
            ));
        }
        let v = serde_json::to_value(&after).map_err(|e| parse_err(&path, e.to_string()))?;
        if let Value::Object(m) = v {
            for (k, v) in m {
                raw.insert(k, v);
            }
        }
        write_json_atomic(&self.dir, self.rel(&path), &Value::Object(raw))?;
        Ok(true)
    }

    pub fn load_role(&self, name: &str) -> Result<Option<Role>, StoreError> {
        let path = self.root.join("roles").join(format!("{name}.json"));
        validate_role_name(name).map_err(|source| StoreError::Model {
            path: path.clone(),
            source,
        })?;
        let Some(text) = self.read_shared_file(&path)? else {
            return Ok(None);
        };
        check_keys(&path, &text, FileKind::Role)?;
        let role: Role = parse_json(&path, &text)?;
        if role.name != name {
            return Err(field_error(
                &path,
                "name",
                &format!("is {:?} but the file is named for {name:?}", role.name),
            ));
        }
        Ok(Some(role))
    }

    /// An environment; `_default` exists even without a file.
    pub fn load_environment(&self, name: &str) -> Result<Environment, StoreError> {
        let path = self.root.join("environments").join(format!("{name}.json"));
        validate_environment_name(name).map_err(|source| StoreError::Model {
            path: path.clone(),
            source,
        })?;
        match self.read_shared_file(&path)? {
            Some(text) => {
                check_keys(&path, &text, FileKind::Environment)?;
                let env: Environment = parse_json(&path, &text)?;
                if env.name != name {
                    return Err(field_error(
                        &path,
                        "name",
                        &format!("is {:?} but the file is named for {name:?}", env.name),
                    ));
                }
                Ok(env)
            }
            None if name == DEFAULT_ENVIRONMENT => Ok(Environment::default_environment()),
            None => Err(StoreError::NotFound {
                kind: "environment",
                name: name.into(),
                path,
            }),
        }
    }

    fn lock_node(&self, name: &NodeName) -> Result<NodeLock, StoreError> {
        let rel = Path::new("nodes").join(".locks");
        let dir = self
            .dir
            .sub_or_create(&rel)
            .map_err(|source| StoreError::Io {
                path: self.root.join(&rel),
                source,
            })?;
        let file_name = format!("{name}.lock");
        let path = dir.path().join(&file_name);
        let file = dir
            .open_file(Path::new(&file_name), &FileOpen::LOCK)
            .map_err(|source| StoreError::Io {
                path: path.clone(),
                source,
            })?;
        file.lock()
            .map_err(|source| StoreError::Io { path, source })?;
        Ok(NodeLock(file))
    }
}

/// An exclusive advisory lock on one node's files; released on drop (closing the file).
struct NodeLock(std::fs::File);

impl Drop for NodeLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl LocalRepo {
    /// A repo file's text, `None` when it does not exist; never through a symlink (an error naming it).
    fn read_optional(&self, path: &Path) -> Result<Option<String>, StoreError> {
        self.read_text(path, false)
    }

    /// [`LocalRepo::read_optional`] under a shared `flock` on the opened file: current-state files
    /// recycle their inode (`super::durable`), and a writer empties a recycled inode only under
    /// an exclusive lock, so what is read is always one complete save.
    fn read_optional_shared(&self, path: &Path) -> Result<Option<String>, StoreError> {
        self.read_text(path, true)
    }

    fn read_text(&self, path: &Path, shared: bool) -> Result<Option<String>, StoreError> {
        read_file_in(&self.dir, self.rel(path), shared)
    }

    /// A role or environment file: read once per run when this repo is [`LocalRepo::for_run`]'s.
    fn read_shared_file(&self, path: &Path) -> Result<Option<Arc<str>>, StoreError> {
        RunReads::text_in(self.reads.as_deref(), &self.dir, self.rel(path))
    }

    /// The revision of policy `name` that group `group` runs, as chef-zero keeps them in a repo:
    /// `policy_groups/GROUP.json` names the revision, `policies/NAME-REVISION.json` is its lock.
    pub fn load_policy(&self, name: &str, group: &str) -> Result<PolicyLock, StoreError> {
        let group_rel = PathBuf::from("policy_groups").join(format!("{group}.json"));
        let group_path = self.root.join(&group_rel);
        let model = |path: &Path| {
            let path = path.to_owned();
            move |source| StoreError::Model { path, source }
        };
        validate_policy_name("policy group", group).map_err(model(&group_path))?;
        validate_policy_name("policy", name).map_err(model(&group_path))?;
        let Some(text) = self.read_repo_file(&group_rel)? else {
            return Err(StoreError::NotFound {
                kind: "policy group",
                name: group.into(),
                path: group_path,
            });
        };
        let g: PolicyGroup = parse_json(&group_path, &text)?;
        let Some(rev) = g.policies.get(name) else {
            let known: Vec<&str> = g.policies.keys().map(String::as_str).collect();
            let reason = format!(
                "no revision of policy {name:?} in this group (it has: {}); `chef push {group}` \
                 or `knife upload policy_groups policies` puts one there",
                known.join(", ")
            );
            return Err(field_error(&group_path, "policies", &reason));
        };
        validate_policy_name("policy revision", &rev.revision_id).map_err(model(&group_path))?;
        let lock_rel = PathBuf::from("policies").join(format!("{name}-{}.json", rev.revision_id));
        let lock_path = self.root.join(&lock_rel);
        let Some(text) = self.read_repo_file(&lock_rel)? else {
            return Err(StoreError::NotFound {
                kind: "policy revision",
                name: format!("{name} {}", rev.revision_id),
                path: lock_path,
            });
        };
        let lock = PolicyLock::from_json(&lock_path.display().to_string(), &text)
            .map_err(model(&lock_path))?;
        if lock.name != name || lock.revision_id != rev.revision_id {
            let reason = format!(
                "is policy {:?} revision {:?}, but {} names {name:?} revision {:?}",
                lock.name,
                lock.revision_id,
                group_path.display(),
                rev.revision_id
            );
            return Err(field_error(&lock_path, "revision_id", &reason));
        }
        Ok(lock)
    }

    /// A repo file's text (`rel` beneath the repo; `None` when it does not exist), read once per run
    /// as roles and environments are, never through a symlink.
    pub fn read_repo_file(&self, rel: &Path) -> Result<Option<Arc<str>>, StoreError> {
        RunReads::text_in(self.reads.as_deref(), &self.dir, rel)
    }
}

/// A file's text beneath `root` (`rel` relative to it), `None` when it does not exist; never through a
/// symlink, never more than [`MAX_FILE_BYTES`].
pub fn read_text_in(root: &RootDir, rel: &Path) -> Result<Option<String>, StoreError> {
    read_file_in(root, rel, false)
}

fn read_file_in(root: &RootDir, rel: &Path, shared: bool) -> Result<Option<String>, StoreError> {
    let path = root.path().join(rel);
    let f = match root.open_file(rel, &FileOpen::READ) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(StoreError::Io { path, source }),
    };
    read_opened(f, &path, shared).map(Some)
}

/// A current-state file `rel` of the state directory `dir` (`None` when either is missing), read
/// only when it and the directory are this user's and private (`crate::state::check_private`), as
/// journal entries are: what it says is what drift and the next run compare against.
fn read_private_in(dir: &Path, rel: &Path) -> Result<Option<String>, StoreError> {
    let path = dir.join(rel);
    let io = |source| StoreError::Io {
        path: path.clone(),
        source,
    };
    let opened = RootDir::open(dir).and_then(|root| root.open_file(rel, &FileOpen::READ));
    let f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    crate::state::check_private_dir(dir)?;
    crate::state::check_private(&path, &f.metadata().map_err(io)?)?;
    read_opened(f, &path, true).map(Some)
}

/// The text of an opened file (under a shared lock when `shared`), at most [`MAX_FILE_BYTES`].
fn read_opened(f: std::fs::File, path: &Path, shared: bool) -> Result<String, StoreError> {
    use std::io::Read;
    let io = |source| StoreError::Io {
        path: path.to_owned(),
        source,
    };
    if shared {
        f.lock_shared().map_err(io)?;
    }
    let len = f.metadata().map_err(io)?.len();
    if len > MAX_FILE_BYTES {
        return Err(parse_err(
            path,
            format!("file is {len} bytes, larger than the {MAX_FILE_BYTES}-byte limit"),
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    (&f).take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    String::from_utf8(bytes).map_err(|e| parse_err(path, format!("not UTF-8: {e}")))
}

fn parse_err(path: &Path, message: String) -> StoreError {
    StoreError::Parse {
        path: path.to_owned(),
        message,
    }
}

/// The Chef objects a repo holds as JSON files.
#[derive(Debug, Clone, Copy)]
enum FileKind {
    Node,
    Role,
    Environment,
}

impl FileKind {
    /// The top-level keys Chef defines for the object (chef/chef `lib/chef/node.rb`, `role.rb`,
    /// `environment.rb`, their `to_h`): anything else in a repo file is a typo that would otherwise
    /// leave the node with less than the operator wrote.
    fn keys(self) -> &'static [&'static str] {
        match self {
            FileKind::Node => &[
                "name",
                "json_class",
                "chef_type",
                "chef_environment",
                "run_list",
                "normal",
                "default",
                "override",
                "automatic",
                "policy_name",
                "policy_group",
            ],
            FileKind::Role => &[
                "name",
                "json_class",
                "chef_type",
                "description",
                "default_attributes",
                "override_attributes",
                "run_list",
                "env_run_lists",
            ],
            FileKind::Environment => &[
                "name",
                "json_class",
                "chef_type",
                "description",
                "default_attributes",
                "override_attributes",
                "cookbook_versions",
            ],
        }
    }

    fn name(self) -> &'static str {
        match self {
            FileKind::Node => "node",
            FileKind::Role => "role",
            FileKind::Environment => "environment",
        }
    }
}

/// Every top-level key of a node, role or environment file is one Chef defines, the nearest named
/// for a typo; a Policyfile node is refused rather than run with nothing.
fn check_keys(path: &Path, text: &str, kind: FileKind) -> Result<(), StoreError> {
    let Ok(map) = serde_json::from_str::<BTreeMap<String, serde::de::IgnoredAny>>(text) else {
        return Ok(()); // not an object: parse_json names the error
    };
    let known = kind.keys();
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            let hint = crate::inventory::nearest(key, known)
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            let reason = format!(
                "unknown key in a {} file{hint} (Chef's keys: {})",
                kind.name(),
                known.join(", ")
            );
            return Err(field_error(path, key, &reason));
        }
    }
    Ok(())
}

/// A Policyfile node names both its policy and its group and takes its run-list from the policy:
/// Chef ignores a node's own run-list and environment then, which netgw refuses to do silently.
fn check_policy_node(path: &Path, d: &DesiredState) -> Result<(), StoreError> {
    match (&d.policy_name, &d.policy_group) {
        (None, None) => Ok(()),
        (Some(_), None) | (None, Some(_)) => Err(field_error(
            path,
            if d.policy_name.is_none() {
                "policy_name"
            } else {
                "policy_group"
            },
            "a Policyfile node needs both policy_name and policy_group",
        )),
        (Some(_), Some(_)) if !d.run_list.is_empty() => Err(field_error(
            path,
            "run_list",
            "a Policyfile node takes its run-list from its policy: remove run_list (or \
             policy_name and policy_group)",
        )),
        (Some(_), Some(_)) if d.chef_environment != DEFAULT_ENVIRONMENT => Err(field_error(
            path,
            "chef_environment",
            "a Policyfile node takes no environment (Chef ignores it for policy nodes): \
             remove chef_environment",
        )),
        (Some(_), Some(_)) => Ok(()),
    }
}

pub(crate) fn field_error(path: &Path, field: &str, reason: &str) -> StoreError {
    parse_err(path, format!("field `{field}`: {reason}"))
}

/// Parse JSON, naming the field that was wrong (`run_list[2]`) and the line and column.
pub fn parse_json<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, StoreError> {
    // The path of an error is tracked only for a file that fails to parse (tracking costs on every
    // element; the second pass gives the same error, now with its field).
    if let Ok(v) = serde_json::from_str(text) {
        return Ok(v);
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            parse_err(path, format!("invalid JSON: {inner}"))
        } else if field == "." || field.is_empty() {
            parse_err(path, inner.to_string())
        } else {
            parse_err(path, format!("field `{field}`: {inner}"))
        }
    })?;
    // One document per file: `{...} {...}` or text after the closing brace is an error, not ignored.
    de.end()
        .map_err(|e| parse_err(path, format!("invalid JSON: {e}")))?;
    Ok(value)
}

/// Parse YAML into a JSON value ([`netgw_models::yaml::to_json`]: mapping keys become strings, as in
/// Chef's attribute hashes).
pub fn parse_yaml(path: &Path, text: &str) -> Result<Value, StoreError> {
    netgw_models::yaml::to_json(text).map_err(|e| parse_err(path, format!("invalid YAML: {e}")))
}

/// Write JSON atomically to `rel` beneath `root`: a temp file in the same directory, fsync, rename
/// over the target, fsync the directory. Readers see the old file or the new one, never a part.
pub fn write_json_atomic(root: &RootDir, rel: &Path, value: &Value) -> Result<(), StoreError> {
    let path = root.path().join(rel);
    write_file(root, rel, &json_body(&path, value)?)
}

/// A current-state file's format ([`super::versioned`]): 1 is netgw 0.3's, which had no `format`
/// field.
pub const CURRENT_FORMAT: super::versioned::Format = super::versioned::Format {
    what: "current state",
    current: 2,
    migrate: super::versioned::only_the_field_added,
};

/// A current state as its file holds it: pretty JSON and a newline, serialised straight from the
/// state (no `serde_json::Value` copy in between), its format version first.
pub fn current_body(current: &CurrentState) -> Result<Vec<u8>, StoreError> {
    let doc = super::versioned::Versioned::new(&CURRENT_FORMAT, current);
    json_body(Path::new(current.name.as_str()), &doc)
}

fn json_body(path: &Path, value: &impl serde::Serialize) -> Result<Vec<u8>, StoreError> {
    let mut body = serde_json::to_vec_pretty(value).map_err(|e| parse_err(path, e.to_string()))?;
    body.push(b'\n');
    Ok(body)
}

/// Both writers of files by temp and rename: a temp file in the target's directory, its data synced,
/// renamed over the target, then the directory synced ([`super::durable::stage`] resolves every name
/// beneath `root`).
fn write_file(root: &RootDir, rel: &Path, body: &[u8]) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: root.path().join(rel),
        source,
    };
    let staged = super::durable::stage(root, rel, body, false).map_err(io)?;
    if let Err(e) = staged.publish() {
        staged.discard();
        return Err(io(e));
    }
    sync_dir(staged.dir.path(), staged.dir.handle()).map_err(io)
}

/// `fsync` a directory (`handle`, opened from `dir`) after a rename into it, sharing one `fsync` among concurrent callers (group
/// commit): a caller returns once an `fsync` of `dir` that *started after its call* has succeeded, so
/// its rename is durable; callers that arrive while one runs wait for the next, which covers all of
/// them. A failed `fsync` is returned to the caller that ran it; the others retry.
pub fn sync_dir(dir: &Path, handle: &cap_std::fs::Dir) -> std::io::Result<()> {
    use std::collections::HashMap;
    use std::sync::{Arc, Condvar, LazyLock, Mutex, PoisonError};

    #[derive(Default)]
    struct Gate {
        /// (tickets handed out, tickets covered by a finished fsync, an fsync is running)
        state: Mutex<(u64, u64, bool)>,
        done: Condvar,
    }
    static GATES: LazyLock<Mutex<HashMap<PathBuf, Arc<Gate>>>> = LazyLock::new(Default::default);

    let gate = GATES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(dir.to_owned())
        .or_default()
        .clone();
    let mut st = gate.state.lock().unwrap_or_else(PoisonError::into_inner);
    st.0 += 1;
    let ticket = st.0;
    loop {
        if st.1 >= ticket {
            return Ok(());
        }
        if st.2 {
            st = gate.done.wait(st).unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        // Lead: this fsync covers every ticket handed out so far.
        let upto = st.0;
        st.2 = true;
        drop(st);
        let result = super::durable::open_dot(handle)
            .and_then(|fd| rustix::fs::fsync(&fd).map_err(std::io::Error::from));
        st = gate.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.2 = false;
        if result.is_ok() {
            st.1 = st.1.max(upto);
        }
        gate.done.notify_all();
        result?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

    fn repo() -> (tempfile::TempDir, LocalRepo) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("nodes")).unwrap();
        let repo = LocalRepo::open(dir.path()).unwrap();
        (dir, repo)
    }

    #[test]
    fn concurrent_current_saves_share_directory_syncs_and_all_land() {
        let (_d, repo) = repo();
        std::thread::scope(|s| {
            for t in 0..8 {
                let repo = &repo;
                s.spawn(move || {
                    for i in 0..25 {
                        let mut cur = CurrentState::new(name(&format!("sw{t}-{i}")));
                        cur.automatic.insert("n".into(), json!(i));
                        repo.save_current(&cur).unwrap();
                    }
                });
            }
        });
        for t in 0..8 {
            for i in 0..25 {
                let cur = repo
                    .load_current(&name(&format!("sw{t}-{i}")))
                    .unwrap()
                    .unwrap();
                assert_eq!(cur.automatic["n"], json!(i));
            }
        }
        // No temp file is left behind, and a directory that is not there is an error, not a hang.
        let leftovers = fs::read_dir(repo.root.join("nodes/current"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('.')
            })
            .count();
        assert_eq!(leftovers, 0);
        sync_dir(repo.root(), repo.dir.handle()).unwrap();
    }

    #[test]
    fn a_run_reads_shared_files_once_and_the_next_run_sees_edits() {
        let (d, repo) = repo();
        let write = |rel: &str, text: &str| {
            let p = d.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        };
        let env = |desc: &str| format!(r#"{{"name": "prod", "description": "{desc}"}}"#);
        write("environments/prod.json", &env("one"));
        write("cookbooks/cb/recipes/r.yml", "resources: []\n");
        write("cookbooks/cb/attributes/default.yml", "default: {a: 1}\n");
        write(
            "nodes/sw1.json",
            r#"{"name": "sw1", "chef_environment": "prod", "normal": {"v": 1}}"#,
        );

        let run = repo.for_run();
        assert_eq!(run.load_environment("prod").unwrap().description, "one");
        assert!(
            crate::cookbook::Cookbooks::of_repo(&run)
                .load_recipe("cb", "r")
                .unwrap()
                .is_some()
        );
        assert_eq!(
            crate::cookbook::Cookbooks::of_repo(&run)
                .attribute_files("cb")
                .unwrap()
                .len(),
            1
        );
        // Edited (and a file added, one removed) while the run goes on: the run keeps what it read,
        write("environments/prod.json", &env("two"));
        write("cookbooks/cb/attributes/extra.yml", "default: {b: 2}\n");
        fs::remove_file(d.path().join("cookbooks/cb/recipes/r.yml")).unwrap();
        assert_eq!(run.load_environment("prod").unwrap().description, "one");
        assert!(
            crate::cookbook::Cookbooks::of_repo(&run)
                .load_recipe("cb", "r")
                .unwrap()
                .is_some()
        );
        assert_eq!(
            crate::cookbook::Cookbooks::of_repo(&run)
                .attribute_files("cb")
                .unwrap()
                .len(),
            1
        );
        // but never the node files, which are the operator's,
        write(
            "nodes/sw1.json",
            r#"{"name": "sw1", "chef_environment": "prod", "normal": {"v": 2}}"#,
        );
        assert_eq!(
            run.load_desired(&name("sw1")).unwrap().normal["v"],
            json!(2)
        );
        // and the next run (a repo not for a run, as `serve` holds it, too) sees every edit.
        for next in [repo.for_run(), repo.clone()] {
            assert_eq!(next.load_environment("prod").unwrap().description, "two");
            assert!(
                crate::cookbook::Cookbooks::of_repo(&next)
                    .load_recipe("cb", "r")
                    .unwrap()
                    .is_none()
            );
            assert_eq!(
                crate::cookbook::Cookbooks::of_repo(&next)
                    .attribute_files("cb")
                    .unwrap()
                    .len(),
                2
            );
        }
    }

    fn name(n: &str) -> NodeName {
        NodeName::new(n).unwrap()
    }

    #[test]
    fn symlinked_node_current_and_lock_files_are_refused_naming_the_path() {
        use std::os::unix::fs::symlink;
        let (d, repo) = repo();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let n = name("sw1");
        // A desired-state file that is a link: an error naming it, the target never read.
        symlink(&victim, repo.desired_path(&n)).unwrap();
        let e = repo.load_desired(&n).unwrap_err().to_string();
        assert!(e.contains("nodes/sw1.json is a symbolic link"), "{e}");
        assert_eq!(
            repo.node_names().unwrap(),
            vec![n.clone()],
            "listed, not skipped"
        );
        // nodes/current leading out of the repo: nothing lands outside.
        symlink(outside.path(), d.path().join("nodes/current")).unwrap();
        let cur = CurrentState::new(n.clone());
        let e = repo.save_current(&cur).unwrap_err().to_string();
        assert!(e.contains("leads outside"), "{e}");
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
        // The store's node lock file as a link: refused, the target unchanged.
        fs::create_dir_all(d.path().join("nodes/.locks")).unwrap();
        symlink(&victim, d.path().join("nodes/.locks/sw1.lock")).unwrap();
        let e = repo.update_desired(&n, |_| {}).unwrap_err().to_string();
        assert!(e.contains("sw1.lock is a symbolic link"), "{e}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        // Control: with the links gone the same calls work.
        fs::remove_file(d.path().join("nodes/current")).unwrap();
        repo.save_current(&cur).unwrap();
        assert!(repo.load_current(&n).unwrap().is_some());
    }

    #[test]
    fn state_files_are_0600_in_0700_directories() {
        use std::os::unix::fs::PermissionsExt;
        let (d, repo) = repo();
        repo.save_current(&CurrentState::new(name("sw1"))).unwrap();
        let mode = |p: &str| fs::metadata(d.path().join(p)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode("nodes/current"), 0o700);
        assert_eq!(mode("nodes/current/sw1.json"), 0o600);
        // A state file from before (0644): once its inode comes back as the recycled spare and is
        // current again, it is 0600 too.
        let old = d.path().join("nodes/current/sw2.json");
        fs::write(&old, r#"{"name":"sw2"}"#).unwrap();
        fs::set_permissions(&old, fs::Permissions::from_mode(0o644)).unwrap();
        for _ in 0..2 {
            repo.save_current(&CurrentState::new(name("sw2"))).unwrap();
            assert_eq!(mode("nodes/current/sw2.json"), 0o600);
        }
    }

    /// With current state in the state directory a save leaves the repo as it was, lands private
    /// there, and wins over the repo's older copy, which is read until then and never written.
    #[test]
    fn current_state_in_the_state_directory_leaves_the_repo_alone() {
        use std::os::unix::fs::PermissionsExt;
        let (d, repo) = repo();
        let state = tempfile::tempdir().unwrap();
        let dir = crate::state::current_dir(state.path(), d.path());
        let repo = repo.with_current(CurrentAt::State(dir.clone()));
        let n = name("sw1");
        assert_eq!(repo.repo_current_note(), None);
        // An older run's copy in the repo: read (and warned about) until the state directory has one.
        fs::create_dir_all(d.path().join("nodes/current")).unwrap();
        let mut old = CurrentState::new(n.clone());
        old.automatic.insert("run".into(), json!("old"));
        fs::write(
            d.path().join("nodes/current/sw1.json"),
            serde_json::to_vec(&old).unwrap(),
        )
        .unwrap();
        assert_eq!(repo.load_current(&n).unwrap().unwrap(), old);
        assert_eq!(
            repo.current_read_path(&n),
            d.path().join("nodes/current/sw1.json")
        );
        let note = repo.repo_current_note().unwrap();
        assert!(
            note.contains("nodes/current") && note.contains("--current-state repo"),
            "{note}"
        );
        let mut new = CurrentState::new(n.clone());
        new.automatic.insert("run".into(), json!("new"));
        repo.save_current(&new).unwrap();
        assert_eq!(repo.load_current(&n).unwrap().unwrap(), new);
        assert_eq!(repo.current_read_path(&n), dir.join("sw1.json"));
        let repo_copy: CurrentState =
            serde_json::from_slice(&fs::read(d.path().join("nodes/current/sw1.json")).unwrap())
                .unwrap();
        assert_eq!(repo_copy, old, "the repo's copy is never written");
        assert_eq!(
            fs::read_dir(d.path().join("nodes/current"))
                .unwrap()
                .count(),
            1,
            "no spare or temp file in the repo"
        );
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("sw1.json")), 0o600);
        // A file another user could have written is refused, naming it, not read.
        fs::set_permissions(dir.join("sw1.json"), fs::Permissions::from_mode(0o666)).unwrap();
        let e = repo.load_current(&n).unwrap_err().to_string();
        assert!(
            e.contains("sw1.json") && e.contains("group or others"),
            "{e}"
        );
        // A symlink where the file belongs is refused too.
        fs::remove_file(dir.join("sw1.json")).unwrap();
        std::os::unix::fs::symlink(
            d.path().join("nodes/current/sw1.json"),
            dir.join("sw1.json"),
        )
        .unwrap();
        let e = repo.load_current(&n).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
    }

    #[test]
    fn open_requires_a_repo() {
        let dir = tempfile::tempdir().unwrap();
        let e = LocalRepo::open(dir.path()).unwrap_err().to_string();
        assert!(e.contains("nodes/"), "{e}");
        assert!(LocalRepo::open(dir.path().join("missing")).is_err());
    }

    /// Current-state saves reuse the replaced file's inode (no inode allocated or freed once a spare
    /// exists), readers never see a partial file, concurrent writers of one node stay safe (the last
    /// exchange wins, each file complete), and nothing but one spare is left beside the file.
    #[test]
    fn current_saves_recycle_the_replaced_inode() {
        use std::os::unix::fs::MetadataExt;
        let (_d, repo) = repo();
        let n = name("sw1");
        let path = repo.current_path(&n);
        let save = |i: usize| {
            let mut c = CurrentState::new(n.clone());
            c.automatic.insert("i".into(), json!(i));
            c.automatic
                .insert("pad".into(), json!("x".repeat(i % 7 * 300)));
            repo.save_current(&c).unwrap();
        };
        let ino = || fs::metadata(&path).unwrap().ino();
        save(0);
        let first = ino();
        save(1);
        let second = ino();
        save(2);
        assert_eq!(ino(), first, "the third save reuses the first file's inode");
        save(3);
        assert_eq!(ino(), second);
        assert_eq!(
            repo.load_current(&n).unwrap().unwrap().automatic["i"],
            json!(3)
        );
        // A shorter state written into a longer file's inode leaves nothing of the old one behind.
        for i in [6, 7, 8] {
            save(i);
        }
        assert_eq!(
            repo.load_current(&n).unwrap().unwrap().automatic["i"],
            json!(8)
        );
        let dots = |dir: &Path| -> Vec<String> {
            let mut v: Vec<String> = fs::read_dir(dir)
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|f| f.starts_with('.'))
                .collect();
            v.sort();
            v
        };
        let dir = path.parent().unwrap().to_owned();
        assert_eq!(dots(&dir), [".sw1.json.spare"]);

        // Eight writers and a reader on the same node at once.
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut reads = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let c = repo.load_current(&n).expect("a complete file").unwrap();
                    assert!(c.automatic["i"].is_u64());
                    reads += 1;
                }
                reads
            });
            let writers: Vec<_> = (0..8)
                .map(|t| {
                    let save = &save;
                    s.spawn(move || {
                        for i in 0..25 {
                            save(1000 + t * 100 + i);
                        }
                    })
                })
                .collect();
            for w in writers {
                w.join().unwrap();
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            assert!(reader.join().unwrap() > 0);
        });
        let last = repo.load_current(&n).unwrap().unwrap().automatic["i"].clone();
        assert!(
            last.as_u64().is_some_and(|i| (1000..1800).contains(&i)),
            "{last}"
        );
        assert_eq!(dots(&dir), [".sw1.json.spare"], "no temp file left");
    }

    #[test]
    fn save_current_never_touches_desired() {
        let (_d, repo) = repo();
        let n = name("sw1");
        let desired_text =
            "{\"name\": \"sw1\", \"run_list\": [\"role[leaf]\"], \"normal\": {\"x\": 1}}\n";
        fs::write(repo.desired_path(&n), desired_text).unwrap();
        let mut cur = CurrentState::new(n.clone());
        cur.automatic.insert("hostname".into(), json!("sw1"));
        repo.save_current(&cur).unwrap();
        assert_eq!(
            fs::read_to_string(repo.desired_path(&n)).unwrap(),
            desired_text,
            "byte for byte"
        );
        assert_eq!(repo.load_current(&n).unwrap().unwrap(), cur);
    }

    #[test]
    fn update_desired_keeps_other_fields_and_skips_noop() {
        let (_d, repo) = repo();
        let n = name("sw1");
        fs::write(
            repo.desired_path(&n),
            r#"{"name":"sw1","run_list":[],"normal":{},"automatic":{"keep":true},"custom":"x"}"#,
        )
        .unwrap();
        assert!(
            !repo.update_desired(&n, |_| {}).unwrap(),
            "no change, no write"
        );
        assert!(
            repo.update_desired(&n, |d| {
                d.normal.insert("tags".into(), json!(["a"]));
            })
            .unwrap()
        );
        let v: Value =
            serde_json::from_str(&fs::read_to_string(repo.desired_path(&n)).unwrap()).unwrap();
        assert_eq!(v["automatic"], json!({"keep": true}));
        assert_eq!(v["custom"], "x");
        assert_eq!(v["normal"]["tags"], json!(["a"]));
    }

    #[test]
    fn create_node_does_not_clobber() {
        let (_d, repo) = repo();
        let n = name("new1");
        assert!(repo.create_node(&DesiredState::new(n.clone())).unwrap());
        repo.update_desired(&n, |d| d.chef_environment = "prod".into())
            .unwrap();
        assert!(!repo.create_node(&DesiredState::new(n.clone())).unwrap());
        assert_eq!(repo.load_desired(&n).unwrap().chef_environment, "prod");
    }

    #[test]
    fn parse_errors_name_file_and_field() {
        let (_d, repo) = repo();
        let n = name("sw1");
        fs::write(
            repo.desired_path(&n),
            r#"{"name":"sw1","run_list":["recipe[a]","role[b"]}"#,
        )
        .unwrap();
        let e = repo.load_desired(&n).unwrap_err().to_string();
        assert!(
            e.contains("sw1.json") && e.contains("run_list") && e.contains("role[b"),
            "{e}"
        );
        fs::write(repo.desired_path(&n), r#"{"name":"sw1","normal":[]}"#).unwrap();
        let e = repo.load_desired(&n).unwrap_err().to_string();
        assert!(e.contains("field `normal`"), "{e}");
        fs::write(repo.desired_path(&n), r#"{"name":"sw2"}"#).unwrap();
        let e = repo.load_desired(&n).unwrap_err().to_string();
        assert!(e.contains("field `name`"), "{e}");
        fs::write(repo.desired_path(&n), "{\"name\":").unwrap();
        let e = repo.load_desired(&n).unwrap_err().to_string();
        assert!(e.contains("invalid JSON") && e.contains("line 1"), "{e}");
        let e = repo.load_desired(&name("ghost")).unwrap_err();
        assert!(e.is_not_found());
    }

    #[test]
    fn a_typo_in_a_repo_file_is_an_error_naming_the_file_the_key_and_the_nearest() {
        let (d, repo) = repo();
        let n = name("sw1");
        let write = |rel: &str, body: &str| {
            let p = d.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, body).unwrap();
        };
        write(
            "nodes/sw1.json",
            r#"{"name":"sw1","runlist":["role[base]"]}"#,
        );
        let e = repo.load_desired(&n).unwrap_err().to_string();
        assert!(
            e.contains("sw1.json")
                && e.contains("`runlist`")
                && e.contains("did you mean `run_list`"),
            "{e}"
        );
        write(
            "roles/base.json",
            r#"{"name":"base","defaults_attributes":{}}"#,
        );
        let e = repo.load_role("base").unwrap_err().to_string();
        assert!(
            e.contains("roles/base.json") && e.contains("did you mean `default_attributes`"),
            "{e}"
        );
        write(
            "environments/prod.json",
            r#"{"name":"prod","cookbook_version":{}}"#,
        );
        let e = repo.load_environment("prod").unwrap_err().to_string();
        assert!(e.contains("did you mean `cookbook_versions`"), "{e}");
        // Chef's own keys are all accepted, the ones netgw does not use included.
        let full = r#"{"name":"sw1","json_class":"Chef::Node","chef_type":"node","chef_environment":"_default","run_list":[],"normal":{},"default":{},"override":{},"automatic":{}}"#;
        write("nodes/sw1.json", full);
        assert!(repo.load_desired(&n).is_ok());
    }

    #[test]
    fn a_policyfile_node_names_both_and_takes_its_run_list_from_the_policy() {
        let (d, repo) = repo();
        let node = |body: &str| {
            fs::write(d.path().join("nodes/sw1.json"), body).unwrap();
            repo.load_desired(&name("sw1"))
        };
        let e = node(r#"{"name":"sw1","policy_name":"access"}"#).unwrap_err();
        assert!(
            e.to_string()
                .contains("needs both policy_name and policy_group"),
            "{e}"
        );
        let e = node(r#"{"name":"sw1","policy_name":"access","policy_group":"prod","run_list":["recipe[x]"]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("field `run_list`"), "{e}");
        let ok = node(r#"{"name":"sw1","policy_name":"access","policy_group":"prod"}"#).unwrap();
        assert_eq!(
            (ok.policy_name.as_deref(), ok.policy_group.as_deref()),
            (Some("access"), Some("prod"))
        );
    }

    #[test]
    fn a_policy_is_read_through_its_group_as_chef_zero_keeps_it() {
        let (d, repo) = repo();
        let e = repo.load_policy("access", "prod").unwrap_err().to_string();
        assert!(
            e.contains("policy group \"prod\" not found") && e.contains("policy_groups/prod.json"),
            "{e}"
        );
        fs::create_dir_all(d.path().join("policy_groups")).unwrap();
        fs::create_dir_all(d.path().join("policies")).unwrap();
        fs::write(
            d.path().join("policy_groups/prod.json"),
            r#"{"policies":{"core":{"revision_id":"c0"},"access":{"revision_id":"a1"}}}"#,
        )
        .unwrap();
        let e = repo.load_policy("acess", "prod").unwrap_err().to_string();
        assert!(
            e.contains("no revision of policy \"acess\"") && e.contains("access, core"),
            "{e}"
        );
        let e = repo.load_policy("access", "prod").unwrap_err().to_string();
        assert!(e.contains("policies/access-a1.json"), "{e}");
        let lock = |rev: &str| {
            format!(
                r#"{{"revision_id":"{rev}","name":"access","run_list":["recipe[netdev::vlans]"],
                    "cookbook_locks":{{"netdev":{{"version":"1.0.0"}}}}}}"#
            )
        };
        fs::write(d.path().join("policies/access-a1.json"), lock("zz")).unwrap();
        let e = repo.load_policy("access", "prod").unwrap_err().to_string();
        assert!(e.contains("field `revision_id`"), "{e}");
        fs::write(d.path().join("policies/access-a1.json"), lock("a1")).unwrap();
        let p = repo.load_policy("access", "prod").unwrap();
        assert_eq!(p.run_list.items()[0].name, "netdev::vlans");
    }

    #[test]
    fn default_environment_is_implicit() {
        let (_d, repo) = repo();
        assert_eq!(repo.load_environment("_default").unwrap().name, "_default");
        assert!(repo.load_environment("prod").unwrap_err().is_not_found());
        assert!(repo.load_environment("../x").is_err());
    }

    #[test]
    fn attribute_files_default_first_then_lexical_and_yaml_int_keys() {
        let (d, repo) = repo();
        let dir = d.path().join("cookbooks/netdev/attributes");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("zeta.yml"), "default: {z: 1}\n").unwrap();
        fs::write(dir.join("alpha.yml"), "default: {a: 1}\n").unwrap();
        fs::write(
            dir.join("default.yml"),
            "default:\n  netdev:\n    vlans:\n      100: {name: web}\n",
        )
        .unwrap();
        let files = crate::cookbook::Cookbooks::of_repo(&repo)
            .attribute_files("netdev")
            .unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(names, ["default.yml", "alpha.yml", "zeta.yml"]);
        let crate::cookbook::FileBody::Yaml(doc) = &files[0].body else {
            panic!("not YAML")
        };
        assert_eq!(doc["default"]["netdev"]["vlans"]["100"]["name"], "web");
        fs::write(dir.join("bad.yml"), "default: [unclosed\n").unwrap();
        let e = crate::cookbook::Cookbooks::of_repo(&repo)
            .attribute_files("netdev")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.yml") && e.contains("invalid YAML"), "{e}");
    }

    #[test]
    fn recipes_are_read_and_validated() {
        let (d, repo) = repo();
        let dir = d.path().join("cookbooks/site/recipes");
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("default.yml"),
            "attributes:\n  default: {a: 1}\nresources:\n  - {type: vlan, id: 10}\n",
        )
        .unwrap();
        let r = crate::cookbook::Cookbooks::of_repo(&repo)
            .load_recipe("site", "default")
            .unwrap()
            .unwrap();
        let crate::cookbook::RecipeBody::Yaml { resources, .. } = &r.body else {
            panic!("not YAML")
        };
        assert_eq!(resources.len(), 1);
        assert!(
            crate::cookbook::Cookbooks::of_repo(&repo)
                .load_recipe("site", "none")
                .unwrap()
                .is_none()
        );
        fs::write(dir.join("typo.yml"), "resorces: []\n").unwrap();
        let e = crate::cookbook::Cookbooks::of_repo(&repo)
            .load_recipe("site", "typo")
            .unwrap_err()
            .to_string();
        assert!(e.contains("resorces"), "{e}");
        assert!(
            crate::cookbook::Cookbooks::of_repo(&repo)
                .load_recipe("..", "x")
                .is_err()
        );
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        // Threads updating different normal keys of the same node under the lock: every key survives.
        let (_d, repo) = repo();
        let n = name("sw1");
        repo.create_node(&DesiredState::new(n.clone())).unwrap();
        std::thread::scope(|s| {
            for t in 0..8 {
                let repo = repo.clone();
                let n = n.clone();
                s.spawn(move || {
                    for i in 0..25 {
                        repo.update_desired(&n, |d| {
                            d.normal.insert(format!("k{t}_{i}"), json!(i));
                        })
                        .unwrap();
                        let mut c = CurrentState::new(n.clone());
                        c.automatic.insert("t".into(), json!(t));
                        repo.save_current(&c).unwrap();
                    }
                });
            }
        });
        assert_eq!(repo.load_desired(&n).unwrap().normal.len(), 200);
        assert!(repo.load_current(&n).unwrap().is_some());
        let leftovers: Vec<_> = fs::read_dir(repo.root().join("nodes"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "no temp files left behind");
    }
}
