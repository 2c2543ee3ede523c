//! Reading cookbooks: a directory laid out as `<root>/cookbooks/NAME/{metadata.rb, metadata.json,
//! attributes/*.rb|*.yml, recipes/*.rb|*.yml}` (a repo's, or a cache of files fetched from a Chef
//! server). Ruby files are parsed and evaluated statically ([`ruby`], [`eval`]); YAML files are netgw's
//! own declarative format. A cookbook may mix both.

pub mod dsl;
pub mod encrypted;
pub mod eval;
pub mod metadata;
pub mod netdev;
pub mod ruby;
pub mod run;
pub mod sync;

pub use metadata::{Metadata, read_metadata};

use crate::rootdir::RootDir;
use crate::store::StoreError;
use crate::store::local::{LocalRepo, RunReads, field_error, parse_yaml};
use netgw_models::ModelError;
use netgw_models::name::validate_cookbook_name;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use sync::data_bags::{self, ServerDataBags};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum CookbookError {
    /// A construct outside the subset netgw evaluates, or a value it cannot use.
    #[error("{path}:{line}: {construct}: {why}")]
    Ruby {
        path: PathBuf,
        line: usize,
        construct: String,
        why: String,
    },

    #[error("{path}:{line}: syntax error: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(transparent)]
    Store(#[from] StoreError),

    #[error("{context}: {source}")]
    Model {
        context: String,
        #[source]
        source: ModelError,
    },

    #[error("unknown recipe {recipe:?} (not built in, and no file {path}){hint}")]
    UnknownRecipe {
        recipe: String,
        path: String,
        /// `; did you mean cb::name?` or nothing.
        hint: String,
    },

    #[error("{path}: depends on cookbook {dependency:?}, which is not in {root}")]
    MissingDependency {
        path: PathBuf,
        dependency: String,
        root: PathBuf,
    },
}

impl CookbookError {
    /// This error about a construct, with `why` as its reason (a call's error made before the
    /// reason was known).
    pub fn because(&self, why: String) -> CookbookError {
        match self {
            CookbookError::Ruby {
                path,
                line,
                construct,
                ..
            } => CookbookError::Ruby {
                path: path.clone(),
                line: *line,
                construct: construct.clone(),
                why,
            },
            other => CookbookError::Ruby {
                path: PathBuf::new(),
                line: 0,
                construct: other.to_string(),
                why,
            },
        }
    }
}

/// A file's contents: netgw's YAML (parsed) or Ruby (parsed when evaluated, with the attributes of
/// that moment).
#[derive(Debug, Clone, PartialEq)]
pub enum FileBody {
    Yaml(Value),
    Ruby(String),
}

/// One attribute file of a cookbook.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeFile {
    pub cookbook: String,
    pub file: String,
    pub path: PathBuf,
    pub body: FileBody,
}

/// A recipe: declarative YAML (`attributes:` and `resources:`) or Ruby.
#[derive(Debug, Clone, PartialEq)]
pub enum RecipeBody {
    Yaml {
        attributes: Value,
        resources: Vec<Value>,
    },
    Ruby(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecipeFile {
    pub path: PathBuf,
    pub body: RecipeBody,
}

fn is_ruby(f: &str) -> bool {
    f.ends_with(".rb")
}

fn is_yaml(f: &str) -> bool {
    f.ends_with(".yml") || f.ends_with(".yaml")
}

/// Chef's attribute-file order (`Chef::RunContext::CookbookCompiler#load_attributes_from_cookbook`):
/// `default.rb` first, then the rest sorted by name; netgw's `default.yml` counts as a default too.
pub fn attribute_order(files: &mut [String]) {
    let is_default = |f: &str| {
        f.rsplit_once('.')
            .is_some_and(|(stem, _)| stem == "default")
    };
    files.sort_by(|a, b| is_default(b).cmp(&is_default(a)).then_with(|| a.cmp(b)));
}

/// The cookbooks beneath one root directory.
#[derive(Debug, Clone)]
pub struct Cookbooks {
    dir: Arc<RootDir>,
    /// The run's reads ([`crate::store::local::LocalRepo::for_run`]); `None`: every call reads the files.
    reads: Option<Arc<RunReads>>,
    /// Directories whose metadata names another cookbook than the directory (metadata name ->
    /// directory), read once when a cookbook is not found under its own name.
    renamed: Arc<OnceLock<BTreeMap<String, String>>>,
    /// The Chef server's data bags, when the cookbooks are the server's, and the runtime their
    /// requests are sent on; `None`: the root's `data_bags/`.
    server_bags: Option<(Arc<ServerDataBags>, tokio::runtime::Handle)>,
    /// The secret of encrypted data bag items; `None`: encrypted items are refused.
    secret: Option<encrypted::DataBagSecret>,
    /// The node the cookbooks are evaluated for (`node.name`); `None`: no node, `node.name` refused.
    node_name: Option<String>,
}

impl Cookbooks {
    /// Cookbooks beneath `root` (which holds `cookbooks/`).
    pub fn open(root: &Path) -> Result<Cookbooks, CookbookError> {
        let dir = RootDir::open(root).map_err(|source| CookbookError::Io {
            path: root.to_owned(),
            source,
        })?;
        Ok(Cookbooks {
            dir: Arc::new(dir),
            reads: None,
            renamed: Arc::default(),
            server_bags: None,
            secret: None,
            node_name: None,
        })
    }

    /// The local repo's cookbooks (`cookbooks/NAME/...`), read through the repo's root handle and
    /// its run's reads, when it is [`LocalRepo::for_run`]'s.
    pub fn of_repo(repo: &LocalRepo) -> Cookbooks {
        let (dir, reads) = repo.shared_reads();
        Cookbooks {
            dir,
            reads,
            renamed: Arc::default(),
            server_bags: None,
            secret: repo.data_bag_secret().map(encrypted::DataBagSecret::new),
            node_name: None,
        }
    }

    /// These cookbooks evaluated for node `name`: what `node.name` is in their files.
    pub fn with_node_name(mut self, name: &str) -> Cookbooks {
        self.node_name = Some(name.to_owned());
        self
    }

    /// The node of [`Cookbooks::with_node_name`].
    pub fn node_name(&self) -> Option<&str> {
        self.node_name.as_deref()
    }

    /// These cookbooks, with recipes' encrypted data bag items decrypted with the secret in `path`
    /// (Chef's `encrypted_data_bag_secret`); `None`: refused.
    pub fn with_data_bag_secret(mut self, path: Option<&Path>) -> Cookbooks {
        self.secret = path.map(encrypted::DataBagSecret::new);
        self
    }

    /// These cookbooks, with recipes' data bags read from the Chef server instead of `data_bags/`,
    /// each request sent on `runtime` (recipes are evaluated outside it).
    pub fn with_server_bags(
        mut self,
        bags: Arc<ServerDataBags>,
        runtime: tokio::runtime::Handle,
    ) -> Cookbooks {
        self.server_bags = Some((bags, runtime));
        self
    }

    /// A file's text beneath the root, once per run when there is a run.
    fn read(&self, rel: &Path) -> Result<Option<Arc<str>>, StoreError> {
        RunReads::text_in(self.reads.as_deref(), &self.dir, rel)
    }

    /// The recipe, attribute and data bag file names (YAML, Ruby, JSON) in directory `rel`, `None`
    /// when there is no such directory.
    fn listing(&self, rel: &Path) -> Result<Option<Arc<[String]>>, StoreError> {
        let list = || {
            let dir = self.root().join(rel);
            let entries = match self.dir.handle().read_dir(rel) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(source) => return Err(StoreError::Io { path: dir, source }),
            };
            let mut files: Vec<String> = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|source| StoreError::Io {
                    path: dir.clone(),
                    source,
                })?;
                if let Some(f) = entry.file_name().to_str()
                    && (is_yaml(f) || is_ruby(f) || f.ends_with(".json"))
                    && !f.starts_with('.')
                {
                    files.push(f.to_owned());
                }
            }
            Ok(Some(files))
        };
        match &self.reads {
            Some(reads) => reads.listing(rel, list),
            None => Ok(list()?.map(Arc::from)),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `cookbooks/DIR` of the cookbook Chef calls `cookbook`: the directory of that name, else the
    /// one whose metadata gives that name (a checkout named after its repository, `chef-eos` for
    /// `eos`), as knife and chef-client name a cookbook by its metadata.
    fn rel(&self, cookbook: &str) -> PathBuf {
        let own = Path::new("cookbooks").join(cookbook);
        let is_dir = match &self.reads {
            Some(reads) => reads.is_dir(&self.dir, &own),
            None => self.dir.sub(&own).is_ok(),
        };
        if is_dir {
            return own;
        }
        let renamed = self.renamed.get_or_init(|| self.scan_renamed());
        match renamed.get(cookbook) {
            Some(dir) => Path::new("cookbooks").join(dir),
            None => own,
        }
    }

    /// Every directory of `cookbooks/` whose metadata names another cookbook. A directory whose
    /// metadata cannot be read is left out here: using it by its own name reports the error.
    fn scan_renamed(&self) -> BTreeMap<String, String> {
        let Ok(entries) = self.dir.handle().read_dir("cookbooks") else {
            return BTreeMap::new();
        };
        let mut renamed = BTreeMap::new();
        for entry in entries.flatten() {
            let Some(dir) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let rel = Path::new("cookbooks").join(&dir);
            if let Ok(md) = metadata_with(self.root(), &rel, &dir, |p| self.read(p))
                && md.name != dir
            {
                renamed.entry(md.name).or_insert(dir);
            }
        }
        renamed
    }

    /// A cookbook's metadata; a cookbook without a metadata file (or without a directory) is named
    /// after itself, version 0.0.0, no dependencies.
    pub fn metadata(&self, cookbook: &str) -> Result<Metadata, CookbookError> {
        let rel = self.rel(cookbook);
        metadata_with(self.root(), &rel, cookbook, |p| self.read(p))
    }

    /// A cookbook's attribute files, `.rb` and `.yml` alike, in [`attribute_order`].
    pub fn attribute_files(&self, cookbook: &str) -> Result<Vec<AttributeFile>, StoreError> {
        let rel = self.rel(cookbook).join("attributes");
        let dir = self.root().join(&rel);
        validate_cookbook_name("cookbook", cookbook).map_err(|source| StoreError::Model {
            path: dir.clone(),
            source,
        })?;
        let Some(listed) = self.listing(&rel)? else {
            return Ok(Vec::new());
        };
        let mut files: Vec<String> = listed
            .iter()
            .filter(|f| is_yaml(f) || is_ruby(f))
            .cloned()
            .collect();
        attribute_order(&mut files);
        let mut out = Vec::new();
        for f in files {
            let text = self.read(&rel.join(&f))?.unwrap_or_default();
            let path = dir.join(&f);
            let body = if is_ruby(&f) {
                FileBody::Ruby(text.to_string())
            } else {
                FileBody::Yaml(parse_yaml(&path, &text)?)
            };
            out.push(AttributeFile {
                cookbook: cookbook.into(),
                file: f,
                path,
                body,
            });
        }
        Ok(out)
    }

    /// A recipe file (`recipes/NAME.rb`, `.yml` or `.yaml`), if the cookbook has one; two of them
    /// for one recipe is an error (which one Chef would run is not the question netgw should guess).
    pub fn load_recipe(
        &self,
        cookbook: &str,
        recipe: &str,
    ) -> Result<Option<RecipeFile>, StoreError> {
        let rel = self.rel(cookbook).join("recipes");
        let dir = self.root().join(&rel);
        for (what, name) in [("cookbook", cookbook), ("recipe", recipe)] {
            validate_cookbook_name(what, name).map_err(|source| StoreError::Model {
                path: dir.clone(),
                source,
            })?;
        }
        let mut found: Option<RecipeFile> = None;
        for ext in ["rb", "yml", "yaml"] {
            let file = format!("{recipe}.{ext}");
            let Some(text) = self.read(&rel.join(&file))? else {
                continue;
            };
            let path = dir.join(&file);
            if let Some(first) = &found {
                return Err(StoreError::Parse {
                    path,
                    message: format!(
                        "a second file for recipe {cookbook}::{recipe} (beside {})",
                        first.path.display()
                    ),
                });
            }
            found = Some(if ext == "rb" {
                RecipeFile {
                    path,
                    body: RecipeBody::Ruby(text.to_string()),
                }
            } else {
                let doc = parse_yaml(&path, &text)?;
                recipe_from_document(&path, doc)?
            });
        }
        Ok(found)
    }

    /// A data bag of the repo (`data_bags/BAG/`), or of the Chef server with
    /// [`Cookbooks::with_server_bags`]: its item names, sorted (`data_bag`), or one item's
    /// hash (`data_bag_item`), as Chef gives them. An encrypted item (every value but `id` as
    /// `knife data bag create --secret-file` writes it) is decrypted with the secret of
    /// [`Cookbooks::with_data_bag_secret`], as Chef's `data_bag_item` does, or refused without one;
    /// never handed on as ciphertext. `at` is the call's error, given the reason.
    pub fn data_bag(
        &self,
        bag: &str,
        item: Option<&str>,
        at: &CookbookError,
    ) -> Result<Value, CookbookError> {
        self.read_bag(bag, item, ItemRead::Auto, at)
    }

    /// `Chef::EncryptedDataBagItem.load(BAG, ITEM)`: the item, every value but `id` decrypted
    /// (refused when one is not encrypted, as Chef fails to decrypt it).
    pub fn encrypted_data_bag_item(
        &self,
        bag: &str,
        item: &str,
        at: &CookbookError,
    ) -> Result<Value, CookbookError> {
        self.read_bag(bag, Some(item), ItemRead::Encrypted, at)
    }

    fn read_bag(
        &self,
        bag: &str,
        item: Option<&str>,
        mode: ItemRead,
        at: &CookbookError,
    ) -> Result<Value, CookbookError> {
        let fail = |why: String| at.because(why);
        // Chef's `Chef::DataBag::VALID_NAME` and `DataBagItem::VALID_ID`: never a path.
        let valid = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        };
        for name in std::iter::once(bag).chain(item) {
            if !valid(name) {
                return Err(fail(format!(
                    "{name:?} is not a data bag or item name (letters, digits, - _ .)"
                )));
            }
        }
        let (v, from) = match &self.server_bags {
            Some((server, runtime)) => server_bag(server, runtime, bag, item, &fail)?,
            None => self.local_bag(bag, item, &fail)?,
        };
        match item {
            Some(item) => self.item_value(v, bag, item, &from, mode).map_err(fail),
            None => Ok(v),
        }
    }

    /// `data_bags/BAG/`'s item names, or `data_bags/BAG/ITEM.json` and where it was read.
    fn local_bag(
        &self,
        bag: &str,
        item: Option<&str>,
        fail: &dyn Fn(String) -> CookbookError,
    ) -> Result<(Value, String), CookbookError> {
        let dir = Path::new("data_bags").join(bag);
        let Some(item) = item else {
            let Some(listed) = self.listing(&dir)? else {
                return Err(fail(format!(
                    "no data bag {bag:?} (no directory {})",
                    self.root().join(&dir).display()
                )));
            };
            let mut names: Vec<Value> = listed
                .iter()
                .filter_map(|f| f.strip_suffix(".json"))
                .map(Value::from)
                .collect();
            names.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            return Ok((Value::Array(names), dir.display().to_string()));
        };
        let rel = dir.join(format!("{item}.json"));
        let path = self.root().join(&rel);
        let Some(text) = self.read(&rel)? else {
            return Err(fail(format!(
                "no data bag item {bag}/{item} (no file {})",
                path.display()
            )));
        };
        let v: Value = crate::store::local::parse_json(&path, &text)?;
        Ok((v, path.display().to_string()))
    }

    /// Item `item` of `bag` read from `from`: its `id` is the item's name; plain, or decrypted
    /// ([`encrypted`]).
    fn item_value(
        &self,
        v: Value,
        bag: &str,
        item: &str,
        from: &str,
        mode: ItemRead,
    ) -> Result<Value, String> {
        if v.get("id").and_then(Value::as_str) != Some(item) {
            return Err(format!("{from}: `id` must be {item:?}, the item's name"));
        }
        match (encrypted::shape(&v), mode) {
            (encrypted::Shape::Plain, ItemRead::Auto) => return Ok(v),
            (encrypted::Shape::Mixed, ItemRead::Auto) => {
                return Err(format!(
                    "{from}: some values of data bag item {bag}/{item} look encrypted \
                     (`encrypted_data`) and others do not, so Chef would hand the ciphertext on as \
                     plain data; encrypt every value but `id` with one secret (`knife data bag \
                     from file BAG FILE --secret-file SECRET`)"
                ));
            }
            _ => {}
        }
        let Some(secret) = &self.secret else {
            return Err(format!(
                "{from} is an encrypted data bag item and no secret is configured: give \
                 --encrypted-data-bag-secret FILE (or NETGW_ENCRYPTED_DATA_BAG_SECRET), the secret \
                 file knife encrypted it with"
            ));
        };
        encrypted::decrypt_item(v, secret, &format!("{bag}/{item}"), from)
    }

    /// The recipes a cookbook's `recipes/` holds (`cb::name`), for "did you mean".
    pub fn recipe_names(&self, cookbook: &str) -> Vec<String> {
        let rel = self.rel(cookbook).join("recipes");
        let Ok(Some(listed)) = self.listing(&rel) else {
            return Vec::new();
        };
        listed
            .iter()
            .filter_map(|f| {
                let (stem, ext) = f.rsplit_once('.')?;
                ["rb", "yml", "yaml"]
                    .contains(&ext)
                    .then(|| format!("{cookbook}::{stem}"))
            })
            .collect()
    }

    /// Whether `cookbooks/NAME` exists.
    pub fn exists(&self, cookbook: &str) -> bool {
        self.dir.sub(&self.rel(cookbook)).is_ok()
    }
}

/// How a recipe reads a data bag item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemRead {
    /// `data_bag_item`: decrypted when it looks encrypted (Chef 12 and later).
    Auto,
    /// `Chef::EncryptedDataBagItem.load`: always decrypted.
    Encrypted,
}

/// A data bag's item names, or an item as the Chef server stores it ([`ServerDataBags`]), and the
/// URL it was read from.
fn server_bag(
    server: &ServerDataBags,
    runtime: &tokio::runtime::Handle,
    bag: &str,
    item: Option<&str>,
    fail: &dyn Fn(String) -> CookbookError,
) -> Result<(Value, String), CookbookError> {
    let url = server.url(bag, item);
    let got = server.get(runtime, bag, item).map_err(fail)?;
    let Some(got) = got else {
        return Err(fail(match item {
            Some(item) => format!("no data bag item {bag}/{item} on the Chef server ({url})"),
            None => format!("no data bag {bag:?} on the Chef server ({url})"),
        }));
    };
    if item.is_none() {
        return match data_bags::item_names(&got) {
            Some(names) => Ok((Value::Array(names), url)),
            None => Err(fail(format!("{url}: not a data bag listing"))),
        };
    }
    Ok((data_bags::item_data(got), url))
}

/// Metadata of the cookbook at `rel` beneath `root`.
pub(crate) fn metadata_in(
    root: &RootDir,
    rel: &Path,
    dir_name: &str,
) -> Result<Metadata, CookbookError> {
    metadata_with(root.path(), rel, dir_name, |p| {
        RunReads::text_in(None, root, p)
    })
}

/// `metadata.rb`, else `metadata.json`, else none, of the cookbook at `rel`, read through `read`.
fn metadata_with(
    root: &Path,
    rel: &Path,
    dir_name: &str,
    read: impl Fn(&Path) -> Result<Option<Arc<str>>, StoreError>,
) -> Result<Metadata, CookbookError> {
    let rb = rel.join("metadata.rb");
    if let Some(text) = read(&rb)? {
        return metadata::parse_metadata_rb(&root.join(&rb), &text, dir_name);
    }
    let json = rel.join("metadata.json");
    if let Some(text) = read(&json)? {
        return metadata::parse_metadata_json(&root.join(&json), &text, dir_name);
    }
    Ok(Metadata::unnamed(dir_name))
}
/// A YAML recipe: its attributes and resources, nothing else.
fn recipe_from_document(path: &Path, doc: Value) -> Result<RecipeFile, StoreError> {
    let map = match doc {
        Value::Null => serde_json::Map::new(),
        Value::Object(m) => m,
        _ => {
            return Err(field_error(
                path,
                "(document)",
                "must be a mapping with keys attributes and resources",
            ));
        }
    };
    let mut attributes = Value::Null;
    let mut resources = Vec::new();
    for (k, v) in map {
        match k.as_str() {
            "attributes" => attributes = v,
            "resources" => match v {
                Value::Array(a) => resources = a,
                Value::Null => {}
                _ => return Err(field_error(path, "resources", "must be a list")),
            },
            "description" => {}
            other => {
                return Err(field_error(
                    path,
                    other,
                    "unknown key (expected attributes, resources, description)",
                ));
            }
        }
    }
    Ok(RecipeFile {
        path: path.to_owned(),
        body: RecipeBody::Yaml {
            attributes,
            resources,
        },
    })
}
