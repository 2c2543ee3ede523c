//! Cookbooks from the Chef server, synchronized as chef-client does it (chef's
//! `lib/chef/policy_builder/expand_node_object.rb` `sync_cookbooks` and
//! `lib/chef/cookbook/synchronizer.rb`), into a cache shared by every node of a run:
//!
//! ```text
//!   expanded run-list ─▶ POST /environments/ENV/cookbook_versions {"run_list": ["cb::r", "cb2@1.0.0"]}
//!                         the server solves it: the environment's cookbook_versions constraints, the
//!                         run-list's pins and every cookbook's metadata depends
//!                       ◀─ {NAME: cookbook version object, with its file manifest}
//!   each file ─▶ CACHE/files/MD5 kept when its content still has that MD5; otherwise GET its url
//!                (signed), MD5 verified, written atomically. Once per checksum per run, however many
//!                nodes use it.
//!   the set   ─▶ CACHE/sets/SET-HASH/cookbooks/NAME/PATH: a repo-shaped directory the cookbook
//!                loader (`LocalRepo`) reads, exactly as it reads `--repo` cookbooks
//! ```
//!
//! The cache (`crate::state::cookbook_cache_dir`) is safe for concurrent runs without locks: files are
//! named by their content's checksum and a set by the hash of everything in it, and both appear by an
//! atomic rename of a private temporary, so two writers can only write the same bytes. Nothing
//! downloaded is ever executed: files are only read by the cookbook loader.

pub mod data_bags;
pub mod prune;

use crate::kind::NodeErrorKind;
use crate::rootdir::{create_private_dir_all, create_private_file};
use crate::store::chef::constraint::{Constraint, Version};
use crate::store::chef::{ChefError, ChefServer};
use crate::store::local::LocalRepo;
use md5::{Digest, Md5};
use netgw_models::Environment;
use netgw_models::expand::Expansion;
use reqwest::Method;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use thiserror::Error;
use tokio::sync::{OnceCell, Semaphore};
use tracing::{debug, info, warn};

/// Bound of each request (the cookbook_versions POST, each file download).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Concurrent file downloads per run (chef-client's `cookbook_sync_threads` default is 10).
pub const DEFAULT_DOWNLOADS: usize = 8;

/// The manifest segments of server API versions 0 and 1 (version 2 has `all_files` instead).
const SEGMENTS: [&str; 9] = [
    "attributes",
    "definitions",
    "files",
    "libraries",
    "providers",
    "recipes",
    "resources",
    "root_files",
    "templates",
];

/// What went wrong synchronizing cookbooks; every variant names the cookbook, version and file it
/// can. Cloneable: one failed download is reported to every node that needed the file.
#[derive(Debug, Clone, Error)]
pub enum CookbookError {
    #[error(
        "POST {url}: HTTP {status}: this Chef server has no cookbook_versions endpoint, so netgw cannot resolve cookbooks from it (use --cookbooks repo)"
    )]
    NoEndpoint { url: String, status: u16 },

    #[error(
        "environment {environment}: no cookbook versions satisfy run-list {run_list:?}: {message}"
    )]
    Unsatisfiable {
        environment: String,
        run_list: Vec<String>,
        message: String,
    },

    #[error(
        "environment {environment}: the server chose cookbook {cookbook} {version}, which {rule}; not used (the server's solver ignored a constraint: see docs/cookbooks.md)"
    )]
    Violated {
        environment: String,
        cookbook: String,
        version: String,
        rule: String,
    },

    #[error("{message}")]
    Server {
        message: String,
        kind: NodeErrorKind,
    },

    #[error("cookbook {cookbook} {version}: bad manifest from the server: {what}")]
    Manifest {
        cookbook: String,
        version: String,
        what: String,
    },

    #[error("cookbook {cookbook} {version}, file {path}: {what}")]
    File {
        cookbook: String,
        version: String,
        path: String,
        what: String,
        kind: NodeErrorKind,
    },

    #[error("cookbook cache {path}: {message}")]
    Cache { path: PathBuf, message: String },
}

impl CookbookError {
    /// For reports and exit codes: an unsatisfiable run-list is the operator's input; the server or the
    /// cache failing is the gateway's side.
    pub fn kind(&self) -> NodeErrorKind {
        match self {
            CookbookError::Unsatisfiable { .. } | CookbookError::NoEndpoint { .. } => {
                NodeErrorKind::Config
            }
            CookbookError::Server { kind, .. } | CookbookError::File { kind, .. } => *kind,
            CookbookError::Manifest { .. } | CookbookError::Violated { .. } => {
                NodeErrorKind::Server
            }
            CookbookError::Cache { .. } => NodeErrorKind::Store,
        }
    }

    fn server(e: ChefError) -> Self {
        CookbookError::Server {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// One file of a cookbook version's manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestFile {
    /// Relative to the cookbook (`attributes/default.rb`), checked to stay inside it.
    pub path: String,
    /// MD5 of the content, lowercase hex.
    pub checksum: String,
    pub url: String,
}

/// A cookbook version as the server resolved it.
#[derive(Debug, Clone, PartialEq)]
pub struct CookbookVersion {
    pub name: String,
    pub version: String,
    pub files: Vec<ManifestFile>,
    /// The server's metadata (name, version, dependencies): written as `metadata.json` when the
    /// manifest has none, so the loader always finds one.
    pub metadata: Value,
}

/// A cookbook version a run used, for its report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsedCookbook {
    pub name: String,
    pub version: String,
    pub files: usize,
}

/// The `cookbooks` part of a run report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CookbooksReport {
    /// `server` (this module) or `repo`.
    pub source: &'static str,
    pub server: String,
    pub cache: PathBuf,
    /// Every cookbook version some node used, by name then version.
    pub versions: Vec<UsedCookbook>,
    /// Files fetched from the server in this run (each checksum at most once).
    pub files_downloaded: usize,
    /// Files found in the cache with the right checksum, so not fetched.
    pub files_cached: usize,
}

type Shared<T> = Arc<OnceCell<Result<T, CookbookError>>>;

/// Cookbook synchronization for one run: every node's resolution, file and set goes through here,
/// so each is done once per run.
pub struct CookbookSync {
    server: ChefServer,
    cache: PathBuf,
    timeout: Duration,
    downloads: Semaphore,
    solved: Mutex<HashMap<String, Shared<Arc<Vec<CookbookVersion>>>>>,
    files: Mutex<HashMap<String, Shared<()>>>,
    sets: Mutex<HashMap<String, Shared<LocalRepo>>>,
    used: Mutex<BTreeMap<(String, String), usize>>,
    /// The set directories this run read (kept by [`prune`]).
    sets_used: Mutex<Vec<PathBuf>>,
    downloaded: AtomicUsize,
    cached: AtomicUsize,
    limits: SyncLimits,
    /// The cache checked private once, before its first use (`crate::state::check_private`).
    checked: OnceCell<Result<(), CookbookError>>,
    /// Distinct files this sync needed (cached or fetched) and bytes it downloaded, against `limits`.
    files_needed: AtomicUsize,
    bytes_downloaded: AtomicU64,
    /// The server's data bags, read by the run's recipes ([`data_bags`]).
    data_bags: Arc<data_bags::ServerDataBags>,
}

/// What one sync (one run; one node run under `netgw serve`) may take from the server: a server that
/// lists a million files, or files of gigabytes, fails the run with an error instead of filling the
/// disk and the memory of the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncLimits {
    /// Distinct files (by checksum) the run's cookbook sets may hold.
    pub files: usize,
    /// Bytes downloaded in total (each file is also bounded by the API's response limit).
    pub bytes: u64,
}

impl Default for SyncLimits {
    fn default() -> Self {
        SyncLimits {
            files: 20_000,
            bytes: 512 * 1024 * 1024,
        }
    }
}

impl std::fmt::Debug for CookbookSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CookbookSync")
            .field("server", &self.server.api().base())
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

fn shared<T>(map: &Mutex<HashMap<String, Shared<T>>>, key: &str) -> Shared<T> {
    let mut m = map.lock().unwrap_or_else(|p| p.into_inner());
    m.entry(key.to_owned()).or_default().clone()
}

impl CookbookSync {
    /// `state_root` is the gateway's state directory; the cache is its `cookbooks/SERVER-HASH`.
    /// `timeout` bounds each request; `downloads` the files fetched at once.
    pub fn new(server: ChefServer, state_root: &Path, timeout: Duration, downloads: usize) -> Self {
        let cache = crate::state::cookbook_cache_dir(state_root, &server.api().base());
        let data_bags = Arc::new(data_bags::ServerDataBags::new(server.clone(), timeout));
        CookbookSync {
            server,
            data_bags,
            cache,
            timeout,
            downloads: Semaphore::new(downloads.max(1)),
            solved: Mutex::default(),
            files: Mutex::default(),
            sets: Mutex::default(),
            used: Mutex::default(),
            sets_used: Mutex::default(),
            downloaded: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
            limits: SyncLimits::default(),
            checked: OnceCell::new(),
            files_needed: AtomicUsize::new(0),
            bytes_downloaded: AtomicU64::new(0),
        }
    }

    /// The state directory, `cookbooks/`, this server's cache and its `files/` and `sets/`, each
    /// that exists: this user's and writable by no one else, or the sync is refused (whoever could
    /// write there could change the attributes and code every node's run loads).
    async fn check_private(&self) -> Result<(), CookbookError> {
        let cache = self.cache.clone();
        let dirs: Vec<PathBuf> = [cache.join("files"), cache.join("sets")]
            .into_iter()
            .chain(cache.ancestors().take(3).map(Path::to_path_buf))
            .collect();
        let checked = tokio::task::spawn_blocking(move || {
            dirs.iter()
                .try_for_each(|d| crate::state::check_private_dir(d))
        })
        .await;
        match checked {
            Ok(r) => r.map_err(|e| CookbookError::Cache {
                path: e.path.clone(),
                message: e.to_string(),
            }),
            Err(e) => Err(CookbookError::Cache {
                path: self.cache.clone(),
                message: e.to_string(),
            }),
        }
    }

    fn too_many(&self, n: usize) -> CookbookError {
        CookbookError::Server {
            message: format!(
                "the cookbooks of this run list {n} files, more than the {} one run may fetch \
                 from {}; not used (see docs/cookbooks.md)",
                self.limits.files,
                self.server.api().base()
            ),
            kind: NodeErrorKind::Server,
        }
    }

    /// The same sync with other limits than [`SyncLimits::default`].
    pub fn with_limits(mut self, limits: SyncLimits) -> Self {
        self.limits = limits;
        self
    }

    pub fn cache_dir(&self) -> &Path {
        &self.cache
    }

    /// The server's data bags, for the recipes of this run's nodes.
    pub fn data_bags(&self) -> Arc<data_bags::ServerDataBags> {
        self.data_bags.clone()
    }

    /// The cookbooks a node's expanded run-list needs in its environment, synchronized: a repo-shaped
    /// directory holding exactly the versions the server chose, and those versions (`NAME VERSION`).
    pub async fn cookbooks_for(
        &self,
        env: &Environment,
        expansion: &Expansion,
    ) -> Result<(LocalRepo, Vec<String>), CookbookError> {
        self.checked
            .get_or_init(|| self.check_private())
            .await
            .clone()?;
        let environment = env.name.as_str();
        // netgw's built-in recipes need no cookbook: the server is not asked for one (a `netdev`
        // cookbook it has still comes with any other of its recipes in the run-list).
        let run_list: Vec<String> = expansion
            .recipes
            .iter()
            .filter(|r| {
                r.version.is_some() || !super::run::BUILTIN_RECIPES.contains(&r.name.as_str())
            })
            .map(|r| match &r.version {
                Some(v) => format!("{}@{v}", r.name),
                None => r.name.clone(),
            })
            .collect();
        let key = format!("{environment}\n{}", run_list.join("\n"));
        let cell = shared(&self.solved, &key);
        let versions = cell
            .get_or_init(|| async {
                let versions = self.solve(environment, &run_list).await?;
                check_solution(env, &run_list, &versions)?;
                Ok(versions)
            })
            .await
            .clone()?;
        let set_key = set_hash(&versions);
        let cell = shared(&self.sets, &set_key);
        let repo = cell
            .get_or_init(|| self.materialize(&set_key, &versions))
            .await
            .clone()?;
        let used = versions
            .iter()
            .map(|c| format!("{} {}", c.name, c.version))
            .collect();
        Ok((repo, used))
    }

    /// At the end of a run: prune the cache ([`prune`]; a failure is logged, the run is not failed
    /// for it), then [`CookbookSync::report`].
    pub async fn finish(&self) -> CookbooksReport {
        let cache = self.cache.clone();
        let in_use = self
            .sets_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let now = std::time::SystemTime::now();
        let pruned = tokio::task::spawn_blocking(move || {
            prune::prune(&cache, &in_use, prune::KEEP_SETS, prune::GRACE, now)
        })
        .await;
        match pruned {
            Ok(Ok(p)) if p != prune::Pruned::default() => info!(
                cache = %self.cache.display(),
                sets = p.sets,
                files = p.files,
                "cookbook cache pruned"
            ),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::warn!(cache = %self.cache.display(), "pruning the cookbook cache: {e}")
            }
            Err(e) => {
                tracing::warn!(cache = %self.cache.display(), "pruning the cookbook cache: {e}")
            }
        }
        self.report()
    }

    /// The run's report part: versions used and download counts.
    pub fn report(&self) -> CookbooksReport {
        let used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        CookbooksReport {
            source: "server",
            server: self.server.api().base(),
            cache: self.cache.clone(),
            versions: used
                .iter()
                .map(|((name, version), files)| UsedCookbook {
                    name: name.clone(),
                    version: version.clone(),
                    files: *files,
                })
                .collect(),
            files_downloaded: self.downloaded.load(Ordering::Relaxed),
            files_cached: self.cached.load(Ordering::Relaxed),
        }
    }

    /// `POST /environments/ENV/cookbook_versions`: the server's answer is authoritative.
    async fn solve(
        &self,
        environment: &str,
        run_list: &[String],
    ) -> Result<Arc<Vec<CookbookVersion>>, CookbookError> {
        let path = format!("/environments/{environment}/cookbook_versions");
        let body = json!({ "run_list": run_list });
        let api = self.server.api();
        let resp = tokio::time::timeout(
            self.timeout,
            api.request(Method::POST, &path, &[], Some(&body), None),
        )
        .await
        .map_err(|_| CookbookError::Server {
            message: format!(
                "POST {}{path}: no answer within {:?}",
                api.base(),
                self.timeout
            ),
            kind: NodeErrorKind::Timeout,
        })?
        .map_err(CookbookError::server)?;
        match resp.status {
            // 404/405: no such route (a 404 for a missing environment names it; say that instead).
            404 if !crate::store::chef::api::server_message(&resp.body).contains("environment") => {
                return Err(CookbookError::NoEndpoint {
                    url: resp.url,
                    status: resp.status,
                });
            }
            405 => {
                return Err(CookbookError::NoEndpoint {
                    url: resp.url,
                    status: resp.status,
                });
            }
            412 => {
                return Err(CookbookError::Unsatisfiable {
                    environment: environment.to_owned(),
                    run_list: run_list.to_vec(),
                    message: solver_message(&resp.body),
                });
            }
            _ => {}
        }
        let v = resp.ok().map_err(CookbookError::server)?.json();
        let v = v.map_err(CookbookError::server)?;
        let versions = parse_solution(&v)?;
        debug!(
            environment,
            cookbooks = versions.len(),
            "cookbook versions resolved by the server"
        );
        Ok(Arc::new(versions))
    }

    /// Every file of `versions` in the file cache, then the set directory built from them.
    async fn materialize(
        &self,
        set_key: &str,
        versions: &[CookbookVersion],
    ) -> Result<LocalRepo, CookbookError> {
        let listed: usize = versions.iter().map(|cb| cb.files.len()).sum();
        if listed > self.limits.files {
            return Err(self.too_many(listed));
        }
        let jobs = versions
            .iter()
            .flat_map(|cb| cb.files.iter().map(move |f| self.ensure_file(cb, f)));
        for r in futures::future::join_all(jobs).await {
            r?;
        }
        {
            let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
            for cb in versions {
                used.insert((cb.name.clone(), cb.version.clone()), cb.files.len());
            }
        }
        let (cache, key, versions) = (self.cache.clone(), set_key.to_owned(), versions.to_vec());
        let root = tokio::task::spawn_blocking(move || build_set(&cache, &key, &versions))
            .await
            .map_err(|e| CookbookError::Cache {
                path: self.cache.clone(),
                message: format!("building the cookbook set: {e}"),
            })??;
        self.sets_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(root.clone());
        LocalRepo::open(&root).map_err(|e| CookbookError::Cache {
            path: root.clone(),
            message: e.to_string(),
        })
    }

    /// One file in the cache, verified; fetched at most once per run per checksum.
    async fn ensure_file(
        &self,
        cb: &CookbookVersion,
        f: &ManifestFile,
    ) -> Result<(), CookbookError> {
        let cell = shared(&self.files, &f.checksum);
        cell.get_or_init(|| self.fetch_file(cb, f)).await.clone()
    }

    async fn fetch_file(
        &self,
        cb: &CookbookVersion,
        f: &ManifestFile,
    ) -> Result<(), CookbookError> {
        let needed = self.files_needed.fetch_add(1, Ordering::Relaxed) + 1;
        if needed > self.limits.files {
            return Err(self.too_many(needed));
        }
        let dest = self.cache.join("files").join(&f.checksum);
        let (d, sum) = (dest.clone(), f.checksum.clone());
        // A cached file is touched: pruning by a concurrent run spares what was used recently.
        let cached =
            tokio::task::spawn_blocking(move || has_checksum(&d, &sum) && prune::touch(&d).is_ok())
                .await
                .unwrap_or(false);
        if cached {
            self.cached.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let err = |what: String, kind| CookbookError::File {
            cookbook: cb.name.clone(),
            version: cb.version.clone(),
            path: f.path.clone(),
            what,
            kind,
        };
        let shown = without_query(&f.url);
        if let Some(why) = foreign_origin(&f.url, &self.server.api().base()) {
            return Err(err(
                format!(
                    "{why}; not fetched (netgw fetches cookbook files from the Chef server's own origin only)"
                ),
                NodeErrorKind::Server,
            ));
        }
        let _permit = self.downloads.acquire().await;
        let resp = tokio::time::timeout(self.timeout, self.server.api().get_url(&f.url))
            .await
            .map_err(|_| {
                err(
                    format!(
                        "download timed out: no complete answer within {:?} from {shown}",
                        self.timeout
                    ),
                    NodeErrorKind::Timeout,
                )
            })?
            .map_err(|e| err(format!("download failed: {e}"), e.kind()))?;
        if !resp.is_success() {
            let status = resp.status;
            return Err(err(
                format!(
                    "download failed: HTTP {status} from {shown}{}",
                    if status == 404 {
                        " (the server lists the file but does not have its content)"
                    } else {
                        ""
                    }
                ),
                NodeErrorKind::Server,
            ));
        }
        let total = self
            .bytes_downloaded
            .fetch_add(resp.body.len() as u64, Ordering::Relaxed)
            + resp.body.len() as u64;
        if total > self.limits.bytes {
            return Err(err(
                format!(
                    "the cookbook files of this run exceed {} bytes in total; not used (a server \
                     listing that much is refused: see docs/cookbooks.md)",
                    self.limits.bytes
                ),
                NodeErrorKind::Server,
            ));
        }
        // What was downloaded is not described (its length, its MD5): the error names the file only.
        if md5_hex(&resp.body) != f.checksum {
            return Err(err(
                format!(
                    "checksum mismatch: the content downloaded from {shown} does not have the \
                     manifest's MD5 {}; not used",
                    f.checksum
                ),
                NodeErrorKind::Server,
            ));
        }
        let body = resp.body;
        let d = dest.clone();
        tokio::task::spawn_blocking(move || write_atomic(&d, &body))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))
            .and_then(|r| r)
            .map_err(|e| CookbookError::Cache {
                path: dest.clone(),
                message: e.to_string(),
            })?;
        self.downloaded.fetch_add(1, Ordering::Relaxed);
        debug!(cookbook = %cb.name, version = %cb.version, path = %f.path, "cookbook file downloaded");
        Ok(())
    }
}

/// The server's choice against every constraint it was given: the environment's `cookbook_versions`,
/// the run-list's `@version` pins and each chosen cookbook's metadata `depends`. Chef Server's solver
/// honours them all; goiardi's does not always, and a wrong version must not reach a device.
pub fn check_solution(
    env: &Environment,
    run_list: &[String],
    versions: &[CookbookVersion],
) -> Result<(), CookbookError> {
    let chosen = |name: &str| versions.iter().find(|c| c.name == name);
    let violated = |cb: &CookbookVersion, rule: String| CookbookError::Violated {
        environment: env.name.clone(),
        cookbook: cb.name.clone(),
        version: cb.version.clone(),
        rule,
    };
    let allows = |constraint: &str, cb: &CookbookVersion| match (
        Constraint::parse(constraint),
        Version::parse(&cb.version),
    ) {
        (Some(c), Some((v, _))) => c.allows(v),
        // Text the server accepted that netgw does not read: the server's word stands.
        _ => true,
    };
    for (name, constraint) in &env.cookbook_versions {
        let (Some(cb), Some(c)) = (chosen(name), constraint.as_str()) else {
            continue;
        };
        if !allows(c, cb) {
            return Err(violated(
                cb,
                format!("the environment's cookbook_versions constraint {c:?} excludes"),
            ));
        }
    }
    for item in run_list {
        let Some((recipe, pin)) = item.split_once('@') else {
            continue;
        };
        let name = recipe.split_once("::").map(|(c, _)| c).unwrap_or(recipe);
        if let Some(cb) = chosen(name)
            && !allows(&format!("= {pin}"), cb)
        {
            return Err(violated(
                cb,
                format!("the run-list's pin {item:?} excludes"),
            ));
        }
    }
    for cb in versions {
        let Some(deps) = cb.metadata.get("dependencies").and_then(Value::as_object) else {
            continue;
        };
        for (dep, constraint) in deps {
            let c = constraint.as_str().unwrap_or_default();
            match chosen(dep) {
                None => {
                    return Err(violated(
                        cb,
                        format!("depends on {dep} ({c}), which the server did not return"),
                    ));
                }
                Some(d) if !allows(c, d) => {
                    return Err(violated(
                        d,
                        format!(
                            "cookbook {} {}'s depends {c:?} excludes",
                            cb.name, cb.version
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// A 412's explanation: Chef Server and goiardi put the solver's `message` inside objects of the
/// `error` array; anything else is shown as the server sent it.
fn solver_message(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let from_objects: Vec<&str> = v
        .get("error")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|e| e.get("message").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if from_objects.is_empty() {
        crate::store::chef::api::server_message(body)
    } else {
        from_objects.join("; ")
    }
}

/// The server's answer: `{NAME: cookbook version}`, sorted by name.
pub fn parse_solution(v: &Value) -> Result<Vec<CookbookVersion>, CookbookError> {
    let Some(map) = v.as_object() else {
        return Err(CookbookError::Server {
            message: "cookbook_versions: the answer is not a JSON object".into(),
            kind: NodeErrorKind::Server,
        });
    };
    let mut out = Vec::new();
    for (name, obj) in map {
        out.push(parse_version(name, obj)?);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn parse_version(name: &str, obj: &Value) -> Result<CookbookVersion, CookbookError> {
    let version = obj
        .get("version")
        .or_else(|| obj.pointer("/metadata/version"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let bad = |what: String| CookbookError::Manifest {
        cookbook: name.to_owned(),
        version: version.clone(),
        what,
    };
    netgw_models::name::validate_cookbook_name("cookbook", name).map_err(|e| bad(e.to_string()))?;
    if version.is_empty() {
        return Err(bad("no version".into()));
    }
    // API v2 lists every file once in `all_files`; v0/v1 split them into segments.
    let lists: Vec<&Value> = match obj.get("all_files") {
        Some(all) => vec![all],
        None => SEGMENTS.iter().filter_map(|s| obj.get(*s)).collect(),
    };
    let mut files: Vec<ManifestFile> = Vec::new();
    for list in lists {
        let Some(items) = list.as_array() else {
            return Err(bad("a file list is not an array".into()));
        };
        for item in items {
            let f = parse_file(item).map_err(|e| bad(e.to_string()))?;
            if files.iter().any(|g| g.path == f.path) {
                return Err(bad(format!("file {} is listed twice", f.path)));
            }
            files.push(f);
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let metadata = obj.get("metadata").cloned().unwrap_or(Value::Null);
    Ok(CookbookVersion {
        name: name.to_owned(),
        version,
        files,
        metadata,
    })
}

/// What makes a manifest's file entry unusable (the caller names the cookbook and version).
#[derive(Debug, thiserror::Error)]
enum FileEntryError {
    #[error("a file entry has no {key}: {item}")]
    Missing { key: &'static str, item: String },
    #[error("file path {0:?} leaves the cookbook or is not a plain relative path")]
    UnsafePath(String),
    #[error("file {path}: checksum {checksum:?} is not an MD5 in hex")]
    Checksum { path: String, checksum: String },
}

fn parse_file(item: &Value) -> Result<ManifestFile, FileEntryError> {
    let field = |key: &'static str| {
        item.get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| FileEntryError::Missing {
                key,
                item: item.to_string(),
            })
    };
    let path = field("path")?;
    let checksum = field("checksum")?.to_ascii_lowercase();
    let url = field("url")?;
    if !safe_path(path) {
        return Err(FileEntryError::UnsafePath(path.to_owned()));
    }
    if checksum.len() != 32 || !checksum.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(FileEntryError::Checksum {
            path: path.to_owned(),
            checksum,
        });
    }
    Ok(ManifestFile {
        path: path.to_owned(),
        checksum,
        url: url.to_owned(),
    })
}

/// A relative path of plain, non-hidden-parent components: nothing a server says can write outside the
/// cookbook's directory.
fn safe_path(p: &str) -> bool {
    let path = Path::new(p);
    !p.is_empty()
        && !p.contains('\0')
        && !p.contains('\\')
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(s) if !s.to_string_lossy().starts_with(".tmp-")))
}

fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why `url` is not on the origin (scheme, host, port) of the server at `base`; `None` when it is.
fn foreign_origin(url: &str, base: &str) -> Option<String> {
    let origin = |u: &str| reqwest::Url::parse(u).ok().map(|u| u.origin());
    match (origin(url), origin(base)) {
        (Some(o), Some(b)) if o == b && o.is_tuple() => None,
        (Some(o), Some(b)) => Some(format!(
            "file URL origin {} is not the Chef server's ({})",
            o.ascii_serialization(),
            b.ascii_serialization()
        )),
        _ => Some("file URL is not a URL".into()),
    }
}

fn without_query(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.to_string()
        }
        Err(_) => "(unparsable URL)".into(),
    }
}

/// True when `path` exists and its content has MD5 `sum` (a damaged cache file is fetched again).
fn has_checksum(path: &Path, sum: &str) -> bool {
    match std::fs::read(path) {
        Ok(bytes) if md5_hex(&bytes) == sum => true,
        Ok(_) => {
            warn!(path = %path.display(), "cached cookbook file does not match its checksum; fetching it again");
            false
        }
        Err(_) => false,
    }
}

/// The name of a set: a hash of every cookbook, version, file path and checksum in it, and the
/// metadata, so equal sets share a directory and different ones never do.
fn set_hash(versions: &[CookbookVersion]) -> String {
    let mut text = String::new();
    for cb in versions {
        text.push_str(&format!("{} {} {}\n", cb.name, cb.version, cb.metadata));
        for f in &cb.files {
            text.push_str(&format!("  {} {}\n", f.path, f.checksum));
        }
    }
    format!("{:016x}", crate::state::fnv1a(text.as_bytes()))
}

fn unique_tmp(dir: &Path) -> PathBuf {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let nanos = crate::clock::since_epoch().subsec_nanos();
    dir.join(format!(
        ".tmp-{}-{}-{nanos}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Write a whole file by rename of a private temporary: a reader (or a concurrent run) sees the old
/// file, no file, or the new one, never a part.
fn write_atomic(dest: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = dest.parent().unwrap_or(Path::new("."));
    create_private_dir_all(dir)?;
    let tmp = unique_tmp(dir);
    let result = (|| {
        let mut f = create_private_file(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, dest)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The set directory for `key`: reused when a complete one exists and every file in it still has its
/// checksum, else built in a temporary and renamed into place.
fn build_set(
    cache: &Path,
    key: &str,
    versions: &[CookbookVersion],
) -> Result<PathBuf, CookbookError> {
    let sets = cache.join("sets");
    let target = sets.join(key);
    if set_intact(&target, versions) {
        return used(target);
    }
    let io = |path: &Path, e: std::io::Error| CookbookError::Cache {
        path: path.to_owned(),
        message: e.to_string(),
    };
    create_private_dir_all(&sets).map_err(|e| io(&sets, e))?;
    let tmp = unique_tmp(&sets);
    let filled = fill_set(cache, &tmp, versions);
    if let Err(e) = filled {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    // A damaged set another run may still read is left alone: the fresh one gets its own name.
    let dest = if target.exists() {
        sets.join(format!("{key}-{}", std::process::id()))
    } else {
        target
    };
    match std::fs::rename(&tmp, &dest) {
        Ok(()) => {
            info!(set = %dest.display(), "cookbook set ready");
            used(dest)
        }
        // Another run finished the same set first: same content, use theirs.
        Err(_) if set_intact(&dest, versions) => {
            let _ = std::fs::remove_dir_all(&tmp);
            used(dest)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(io(&dest, e))
        }
    }
}

/// A set about to be read, marked as used now (what [`prune`] keeps).
fn used(set: PathBuf) -> Result<PathBuf, CookbookError> {
    prune::mark_used(&set).map_err(|e| CookbookError::Cache {
        path: set.clone(),
        message: e.to_string(),
    })?;
    Ok(set)
}

fn fill_set(cache: &Path, root: &Path, versions: &[CookbookVersion]) -> Result<(), CookbookError> {
    let io = |path: &Path, e: std::io::Error| CookbookError::Cache {
        path: path.to_owned(),
        message: e.to_string(),
    };
    // `nodes/` makes it a repo the loader opens; it stays empty.
    create_private_dir_all(&root.join("nodes")).map_err(|e| io(root, e))?;
    let sums: Vec<&str> = versions
        .iter()
        .flat_map(|cb| cb.files.iter().map(|f| f.checksum.as_str()))
        .collect();
    let list = root.join(prune::CHECKSUMS);
    write_private(&list, sums.join("\n").as_bytes()).map_err(|e| io(&list, e))?;
    for cb in versions {
        let base = root.join("cookbooks").join(&cb.name);
        create_private_dir_all(&base).map_err(|e| io(&base, e))?;
        for f in &cb.files {
            let dst = base.join(&f.path);
            if let Some(parent) = dst.parent() {
                create_private_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            let src = cache.join("files").join(&f.checksum);
            copy_private(&src, &dst).map_err(|e| io(&dst, e))?;
        }
        if !cb.files.iter().any(|f| f.path == "metadata.json") {
            let meta = base.join("metadata.json");
            let text = serde_json::to_vec_pretty(&cb.metadata).unwrap_or_default();
            write_private(&meta, &text).map_err(|e| io(&meta, e))?;
        }
    }
    Ok(())
}

/// A new file of a set being built (its directory is this run's own temporary), 0600.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    create_private_file(path)?.write_all(bytes)
}

/// A cached file copied into a set being built, 0600 (`std::fs::copy` would copy the source's mode).
fn copy_private(src: &Path, dst: &Path) -> std::io::Result<()> {
    let mut from = std::fs::File::open(src)?;
    std::io::copy(&mut from, &mut create_private_file(dst)?).map(|_| ())
}

/// Every file of the set present with its checksum (read again: the set is what the loader reads).
fn set_intact(root: &Path, versions: &[CookbookVersion]) -> bool {
    root.join("nodes").is_dir()
        && versions.iter().all(|cb| {
            let base = root.join("cookbooks").join(&cb.name);
            cb.files
                .iter()
                .all(|f| has_checksum(&base.join(&f.path), &f.checksum))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, sum: &str) -> Value {
        json!({"name": path.rsplit('/').next().unwrap(), "path": path, "checksum": sum,
               "specificity": "default", "url": format!("http://127.0.0.1:1/file_store/{sum}")})
    }

    #[test]
    fn manifests_of_both_api_versions_parse_and_bad_paths_are_refused() {
        let sum = md5_hex(b"x");
        let v1 = json!({"net": {"version": "1.2.0", "metadata": {"dependencies": {}},
            "attributes": [file("attributes/default.rb", &sum)],
            "recipes": [file("recipes/default.rb", &sum)],
            "root_files": [file("metadata.rb", &sum)]}});
        let got = parse_solution(&v1).unwrap();
        assert_eq!(got[0].version, "1.2.0");
        let paths: Vec<&str> = got[0].files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["attributes/default.rb", "metadata.rb", "recipes/default.rb"]
        );
        let v2 = json!({"net": {"version": "2.0.0", "all_files": [file("recipes/a.rb", &sum)]}});
        assert_eq!(parse_solution(&v2).unwrap()[0].files.len(), 1);
        for bad in ["../x", "/etc/passwd", "recipes/../../x", "", "a\\b"] {
            let v = json!({"net": {"version": "1.0.0", "recipes": [file(bad, &sum)]}});
            let e = parse_solution(&v).unwrap_err().to_string();
            assert!(e.contains("cookbook net 1.0.0"), "{e}");
        }
        let v = json!({"net": {"version": "1.0.0", "recipes": [file("recipes/a.rb", "zz")]}});
        assert!(parse_solution(&v).unwrap_err().to_string().contains("MD5"));
    }

    /// A one-connection HTTP peer on 127.0.0.1: answers `reply` to each request, or never answers
    /// when it is `None`. Serves at most `n` connections.
    async fn peer(reply: Option<&'static str>, n: usize) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        tokio::spawn(async move {
            let mut held = Vec::new();
            for _ in 0..n {
                let Ok((mut c, _)) = l.accept().await else {
                    return;
                };
                let mut buf = [0u8; 8192];
                let _ = c.read(&mut buf).await;
                match reply {
                    Some(r) => {
                        let _ = c.write_all(r.as_bytes()).await;
                    }
                    None => held.push(c),
                }
            }
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        url
    }

    fn sync_for(url: &str, state: &Path, timeout: Duration) -> CookbookSync {
        let key = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/chef/mixlib-authentication/spec_private_key.pem"
        );
        let server =
            ChefServer::new(crate::store::chef::ChefConfig::new(url, "admin", key)).unwrap();
        CookbookSync::new(server, state, timeout, 2)
    }

    #[tokio::test]
    async fn a_server_without_the_endpoint_and_a_silent_file_server_are_named() {
        let state = tempfile::tempdir().unwrap();
        let not_found = "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 23\r\nconnection: close\r\n\r\n{\"error\":[\"not found\"]}";
        let url = peer(Some(not_found), 2).await;
        let sync = sync_for(&url, state.path(), Duration::from_secs(5));
        let e = sync.solve("prod", &["net".into()]).await.unwrap_err();
        assert!(matches!(e, CookbookError::NoEndpoint { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("/environments/prod/cookbook_versions"),
            "{msg}"
        );
        assert!(msg.contains("--cookbooks repo"), "{msg}");

        let silent = peer(None, 1).await;
        let sync = sync_for(&silent, state.path(), Duration::from_millis(500));
        let cb = CookbookVersion {
            name: "net".into(),
            version: "1.0.0".into(),
            files: Vec::new(),
            metadata: Value::Null,
        };
        let f = ManifestFile {
            path: "recipes/default.rb".into(),
            checksum: md5_hex(b"x"),
            url: format!("{silent}/file_store/x?X-Amz-Signature=secret"),
        };
        let e = sync.fetch_file(&cb, &f).await.unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("cookbook net 1.0.0, file recipes/default.rb"),
            "{msg}"
        );
        assert!(msg.contains("timed out"), "{msg}");
        assert!(
            !msg.contains("secret"),
            "a pre-signed URL's query is never shown: {msg}"
        );
        assert_eq!(e.kind(), NodeErrorKind::Timeout);
    }

    #[test]
    fn a_solution_breaking_any_constraint_is_refused() {
        let cb = |name: &str, version: &str, deps: Value| CookbookVersion {
            name: name.into(),
            version: version.into(),
            files: Vec::new(),
            metadata: json!({ "dependencies": deps }),
        };
        let env = |c: Value| {
            Environment::from_json(&json!({"name": "prod", "cookbook_versions": c}).to_string())
                .unwrap()
        };
        let good = [
            cb("base", "0.1.0", json!({})),
            cb("net", "1.5.0", json!({"base": "~> 0.1"})),
        ];
        let rl = ["net".to_owned()];
        assert!(check_solution(&env(json!({"net": "< 2.0.0"})), &rl, &good).is_ok());
        let e = check_solution(&env(json!({"base": "< 0.1.0"})), &rl, &good).unwrap_err();
        assert!(
            e.to_string().contains(
                "base 0.1.0, which the environment's cookbook_versions constraint \"< 0.1.0\""
            ),
            "{e}"
        );
        let pinned = ["net@1.0.0".to_owned()];
        let e = check_solution(&env(json!({})), &pinned, &good).unwrap_err();
        assert!(e.to_string().contains("pin \"net@1.0.0\""), "{e}");
        let bad_dep = [
            cb("base", "1.0.0", json!({})),
            cb("net", "1.5.0", json!({"base": "~> 0.1"})),
        ];
        let e = check_solution(&env(json!({})), &rl, &bad_dep).unwrap_err();
        assert!(
            e.to_string().contains("net 1.5.0's depends \"~> 0.1\""),
            "{e}"
        );
        let missing = [cb("net", "1.5.0", json!({"base": ">= 0.0.1"}))];
        assert!(check_solution(&env(json!({})), &rl, &missing).is_err());
    }

    /// A peer that answers 200 "x" once and hands back the request it got.
    async fn recording_peer() -> (String, tokio::sync::oneshot::Receiver<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let Ok((mut c, _)) = l.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 16384];
            let n = c.read(&mut buf).await.unwrap_or(0);
            let _ = c
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\nx")
                .await;
            let _ = tx.send(String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase());
        });
        (url, rx)
    }

    #[tokio::test]
    async fn files_come_from_the_servers_own_origin_only() {
        let (server, seen_by_server) = recording_peer().await;
        let (elsewhere, mut seen_elsewhere) = recording_peer().await;
        let cb = CookbookVersion {
            name: "net".into(),
            version: "1.0.0".into(),
            files: Vec::new(),
            metadata: Value::Null,
        };
        let file = |base: &str| ManifestFile {
            path: "a.rb".into(),
            checksum: md5_hex(b"x"),
            url: format!("{base}/file_store/a?sig=secret"),
        };
        // Another port, another host name for the same address, another scheme: refused, not asked.
        let state = tempfile::tempdir().unwrap();
        let sync = sync_for(&server, state.path(), Duration::from_secs(5));
        let port = server.rsplit(':').next().unwrap();
        for foreign in [
            elsewhere.clone(),
            format!("http://localhost:{port}"),
            format!("https://127.0.0.1:{port}"),
        ] {
            let e = sync.fetch_file(&cb, &file(&foreign)).await.unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains("is not the Chef server's") && msg.contains("not fetched"),
                "{msg}"
            );
            assert!(!msg.contains("secret") && !msg.contains("bytes"), "{msg}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            seen_elsewhere.try_recv().is_err(),
            "the foreign URL was requested"
        );
        // Control: the server's own origin is fetched, signed.
        sync.fetch_file(&cb, &file(&server)).await.unwrap();
        assert_eq!(sync.report().files_downloaded, 1);
        let wait = |rx| tokio::time::timeout(Duration::from_secs(5), rx);
        let by_server = wait(seen_by_server).await.unwrap().unwrap();
        assert!(by_server.contains("x-ops-authorization-1:"), "{by_server}");
    }

    #[tokio::test]
    async fn a_sync_takes_at_most_its_files_and_bytes() {
        let cb = CookbookVersion {
            name: "net".into(),
            version: "1.0.0".into(),
            files: Vec::new(),
            metadata: Value::Null,
        };
        let ok = "HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\nx";
        let file = |base: &str, n: usize| ManifestFile {
            path: format!("f{n}.rb"),
            checksum: md5_hex(b"x"),
            url: format!("{base}/file_store/{n}"),
        };
        // Bytes: 1 allowed, the second byte is over.
        let url = peer(Some(ok), 2).await;
        let state = tempfile::tempdir().unwrap();
        let limits = SyncLimits {
            files: 10,
            bytes: 1,
        };
        let sync = sync_for(&url, state.path(), Duration::from_secs(5)).with_limits(limits);
        sync.fetch_file(&cb, &file(&url, 1)).await.unwrap();
        std::fs::remove_file(sync.cache_dir().join("files").join(md5_hex(b"x"))).unwrap();
        let e = sync.fetch_file(&cb, &file(&url, 2)).await.unwrap_err();
        assert!(e.to_string().contains("exceed 1 bytes in total"), "{e}");
        // Files: a manifest listing more than the limit is refused before any download.
        let limits = SyncLimits {
            files: 2,
            bytes: 1 << 20,
        };
        let sync = sync_for(&url, state.path(), Duration::from_secs(5)).with_limits(limits);
        let mut big = cb.clone();
        big.files = (0..3).map(|n| file(&url, n)).collect();
        let e = sync.materialize("k", &[big.clone()]).await.unwrap_err();
        assert!(
            e.to_string().contains("list 3 files, more than the 2"),
            "{e}"
        );
        // Control: at the limit, the set is built.
        big.files.truncate(2);
        big.files[1].checksum = md5_hex(b"x");
        let url = peer(Some(ok), 2).await;
        let sync = sync_for(&url, state.path(), Duration::from_secs(5)).with_limits(limits);
        big.files.iter_mut().for_each(|f| {
            f.url = f
                .url
                .replacen(&f.url[..f.url.find("/file_store").unwrap()], &url, 1)
        });
        sync.materialize("k", &[big]).await.unwrap();
    }

    #[test]
    fn solver_messages_come_out_of_their_objects() {
        let goiardi = br#"{"error":[{"message":"Run list contains invalid items: no such cookbook x.","non_existent_cookbooks":["x"]}]}"#;
        assert_eq!(
            solver_message(goiardi),
            "Run list contains invalid items: no such cookbook x."
        );
        assert_eq!(solver_message(br#"{"error":["plain"]}"#), "plain");
    }

    #[test]
    fn sets_are_built_once_and_a_damaged_one_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let body = b"x: 1\n";
        let sum = md5_hex(body);
        write_atomic(&d.path().join("files").join(&sum), body).unwrap();
        let cb = CookbookVersion {
            name: "net".into(),
            version: "1.0.0".into(),
            files: vec![ManifestFile {
                path: "attributes/default.yml".into(),
                checksum: sum.clone(),
                url: String::new(),
            }],
            metadata: json!({"name": "net"}),
        };
        let key = set_hash(std::slice::from_ref(&cb));
        let a = build_set(d.path(), &key, std::slice::from_ref(&cb)).unwrap();
        let f = a.join("cookbooks/net/attributes/default.yml");
        assert_eq!(std::fs::read(&f).unwrap(), body);
        assert!(a.join("cookbooks/net/metadata.json").is_file());
        assert_eq!(
            build_set(d.path(), &key, std::slice::from_ref(&cb)).unwrap(),
            a
        );
        std::fs::write(&f, "x: 2\n").unwrap();
        let b = build_set(d.path(), &key, std::slice::from_ref(&cb)).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            std::fs::read(b.join("cookbooks/net/attributes/default.yml")).unwrap(),
            body
        );
    }
}
