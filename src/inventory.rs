//! Inventories: Nornir's SimpleInventory format (docs/design.md §6), so existing Nornir inventories and the
//! `nornir-simple-inventory.yml` containerlab generates work unchanged.
//!
//! Forms accepted for `--inventory PATH`:
//! * one file with `hosts:`, `groups:`, `defaults:` sections;
//! * a hosts file (top-level keys are host names, as containerlab writes it), with Nornir's
//!   `groups.yaml`/`defaults.yaml` beside it when they exist;
//! * a directory holding `hosts.yaml` (+ `groups.yaml`, `defaults.yaml`).
//!
//! Resolution is Nornir 3's (`nornir.core.inventory`): host > its groups (in order, each group before
//! the groups it belongs to) > defaults, field by field, a field inherited only when it is null (`""`
//! is a value); `connection_options.NAME` as `_get_connection_options_recursively` (`extras` whole);
//! `data` key by key at the top level only, never deep-merged. netgw's own settings, `data.netgw`
//! (keys Nornir never reads), apply key by key from the first layer that sets each. A group a host names but nobody defines is an error, as in Nornir's SimpleInventory.
//! A host netgw does not drive ([`netgw_models::kinds`]) is kept and reported skipped.
//!
//! A host whose own settings are unusable (no address, an unsupported platform, a credential reference
//! that does not resolve) fails alone, at converge time; a malformed file fails the whole inventory.

use netgw_drivers::driver::Platform;
use netgw_drivers::target::{ConnectionOptions, DeviceTarget, TlsOptions};
use netgw_models::NodeName;
use netgw_transport::Timeouts;
use netgw_transport::credentials;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

mod clab;
pub mod nautobot;
pub mod select;

#[derive(Debug, Error)]
pub enum InventoryError {
    #[error("inventory {path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("inventory host {host}: {message}")]
    Host { host: String, message: String },
    /// A host netgw has no driver for (a Linux host, an IOS-XR router, ...): skipped, not failed.
    #[error("inventory host {host}: not driven by netgw: {reason}")]
    NotDriven { host: String, reason: String },
}

/// A scalar as text: YAML reads `password: 1234` as a number, and Nornir passes it on as written.
pub(crate) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `username`/`password` fields: a string, or a number or boolean taken as its text. The error names
/// what was found, never its value (it may be a secret).
fn de_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => scalar_text(&v).map(Some).ok_or_else(|| {
            let found = if v.is_array() { "a list" } else { "a mapping" };
            serde::de::Error::custom(format!("must be text, found {found}"))
        }),
    }
}

/// One inventory entry (host, group or defaults), as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    #[serde(default)]
    pub hostname: Option<String>,
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default, deserialize_with = "de_text")]
    pub username: Option<String>,
    #[serde(default, deserialize_with = "de_text")]
    pub password: Option<String>,
    #[serde(default)]
    pub platform: Option<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub data: serde_json::Map<String, Value>,
    /// Boxed: a map's node holds eleven values, and most hosts name one connection; unboxed, that
    /// was 2 KB a host, 20 MB of a 10,000-host inventory.
    #[serde(default)]
    pub connection_options: BTreeMap<String, Box<ConnEntry>>,
}

/// One `connection_options.NAME` block, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnEntry {
    #[serde(default)]
    pub hostname: Option<String>,
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default, deserialize_with = "de_text")]
    pub username: Option<String>,
    #[serde(default, deserialize_with = "de_text")]
    pub password: Option<String>,
    #[serde(default)]
    pub platform: Option<String>,
    #[serde(default)]
    pub extras: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SingleFile {
    #[serde(default)]
    hosts: BTreeMap<String, Option<Entry>>,
    #[serde(default)]
    groups: BTreeMap<String, Option<Entry>>,
    #[serde(default)]
    defaults: Option<Entry>,
}

/// Hosts, groups and defaults, as read.
type Sections = (BTreeMap<String, Entry>, BTreeMap<String, Entry>, Entry);

/// A loaded inventory.
#[derive(Debug, Clone)]
pub struct Inventory {
    pub source: PathBuf,
    pub hosts: BTreeMap<String, Entry>,
    pub groups: BTreeMap<String, Entry>,
    pub defaults: Entry,
    pub warnings: Vec<String>,
    /// Trust settings of the command line, for hosts whose inventory sets none.
    pub trust: Trust,
    /// Where a host's values came from when not from a file's layers (`nautobot device X field Y`),
    /// by host, then by field as `netgw inventory` names it (`hostname`, `data.K`, ...).
    pub origins: BTreeMap<String, BTreeMap<String, String>>,
    /// Hosts whose source holds them wrongly (a Nautobot device without a primary IP, say): each
    /// fails alone, with this error, when a run opens it.
    pub host_errors: BTreeMap<String, String>,
    /// Intended state the inventory's source holds (Nautobot's VLANs and interfaces), per host, as
    /// attributes: a `default`-level layer of each node's run (docs/nautobot.md).
    pub intent: BTreeMap<String, serde_json::Map<String, Value>>,
    /// Where run results go back to (a Nautobot inventory's server).
    pub results: Option<nautobot::Results>,
}

/// Host-key and TLS trust from the command line (`--known-hosts`, `--accept-new-host-keys`,
/// `--tls-ca`, `--no-tls-verify` or their `NETGW_*` variables). Each applies to a host whose
/// `data.netgw` (host, groups, defaults) does not set it: the inventory wins.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trust {
    pub known_hosts: Option<PathBuf>,
    pub accept_new_host_keys: bool,
    pub tls_ca: Option<PathBuf>,
    pub no_tls_verify: bool,
}

impl Trust {
    /// Fill what the host's `data.netgw` (`netgw`) leaves unset.
    fn apply(&self, t: &mut DeviceTarget, netgw: &serde_json::Map<String, Value>) {
        let set = |k: &str| netgw.contains_key(k);
        if let Some(kh) = &self.known_hosts
            && !set("known_hosts")
        {
            t.known_hosts = kh.clone();
        }
        if self.accept_new_host_keys && !set("accept_new_host_keys") {
            t.accept_new_host_keys = true;
        }
        let tls_set = set("tls_ca") || set("ca_file") || set("tls_verify");
        if let Some(ca) = &self.tls_ca
            && !tls_set
        {
            t.tls.ca_file = Some(ca.clone());
        } else if self.no_tls_verify && !tls_set {
            t.tls.verify = false;
        }
    }
}

fn file_err(path: &Path, message: impl Into<String>) -> InventoryError {
    InventoryError::File {
        path: path.to_owned(),
        message: message.into(),
    }
}

fn read(path: &Path) -> Result<String, InventoryError> {
    std::fs::read_to_string(path).map_err(|e| file_err(path, e.to_string()))
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, InventoryError> {
    from_doc(path, parse_doc(path, text)?)
}

/// YAML (or JSON, which is YAML) text as a document: syntax errors with their line and column.
fn parse_doc(path: &Path, text: &str) -> Result<Value, InventoryError> {
    netgw_models::yaml::to_json(text).map_err(|e| file_err(path, format!("invalid YAML: {e}")))
}

/// A parsed document in its typed shape, errors naming the path of the wrong field. The text is
/// parsed once ([`parse_doc`]) and the shape probes look at the document.
fn from_doc<T: serde::de::DeserializeOwned>(path: &Path, doc: Value) -> Result<T, InventoryError> {
    // The path is tracked only when the plain decode fails (it costs on every element).
    let doc = match T::deserialize(&doc) {
        Ok(v) => return Ok(v),
        Err(_) => doc,
    };
    serde_path_to_error::deserialize(doc).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        if field == "." || field.is_empty() {
            file_err(path, inner.to_string())
        } else {
            file_err(
                path,
                netgw_models::name::with_field_hint(format!("field `{field}`: {inner}")),
            )
        }
    })
}

/// A hosts file: top-level keys are host names.
fn parse_hosts(path: &Path, text: &str) -> Result<BTreeMap<String, Entry>, InventoryError> {
    hosts_from_doc(path, parse_doc(path, text)?)
}

fn hosts_from_doc(path: &Path, doc: Value) -> Result<BTreeMap<String, Entry>, InventoryError> {
    let hosts: Option<BTreeMap<String, Option<Entry>>> = from_doc(path, doc)?;
    Ok(flatten(hosts.unwrap_or_default()))
}

/// An inventory file read once: containerlab's own format already turned into an inventory, or the
/// parsed document of a Nornir one.
enum Parsed {
    Inventory(Box<Inventory>),
    Document(Value),
}

/// What one inventory file holds.
enum FileSections {
    /// The whole inventory.
    Single(Box<Sections>),
    /// Only hosts; groups and defaults may come from sibling files.
    Hosts(BTreeMap<String, Entry>),
}

fn flatten(m: BTreeMap<String, Option<Entry>>) -> BTreeMap<String, Entry> {
    m.into_iter()
        .map(|(k, v)| (k, v.unwrap_or_default()))
        .collect()
}

impl Inventory {
    /// Load an inventory from a file or a directory.
    pub fn load(path: &Path) -> Result<Inventory, InventoryError> {
        if let Some(spec) = nautobot::spec_from_url(&path.to_string_lossy())? {
            return Self::from_nautobot(path, &spec);
        }
        let sections = if path.is_dir() {
            let hosts_file = ["hosts.yaml", "hosts.yml"]
                .iter()
                .map(|f| path.join(f))
                .find(|p| p.exists());
            let Some(hosts_file) = hosts_file else {
                return Err(file_err(path, "is a directory without hosts.yaml"));
            };
            Self::split_files(&hosts_file)?
        } else {
            let text = read(path)?;
            let doc = match Self::containerlab_generated(path, &text, true)? {
                Parsed::Inventory(inv) => return Ok(*inv),
                Parsed::Document(doc) => doc,
            };
            if nautobot::is_source_doc(&doc) {
                return Self::from_nautobot(path, &nautobot::spec_from_doc(path, doc)?);
            }
            match Self::file_sections(path, doc)? {
                FileSections::Single(sections) => *sections,
                FileSections::Hosts(hosts) => {
                    let (groups, defaults) = Self::sibling_files(path)?;
                    (hosts, groups, defaults)
                }
            }
        };
        Self::from_sections(path, sections)
    }

    /// containerlab's generated `topology-data.json` and `ansible-inventory.yml`, recognised by their
    /// shape; for anything else the parsed document, for [`Inventory::file_sections`].
    /// `fs`: also read the files beside it (and the topology `topology-data.json` names); off for
    /// [`Inventory::from_text`].
    fn containerlab_generated(path: &Path, text: &str, fs: bool) -> Result<Parsed, InventoryError> {
        let is_json = path.extension().is_some_and(|e| e == "json");
        let read = if is_json {
            let v: Value = serde_json::from_str(text)
                .map_err(|e| file_err(path, format!("invalid JSON: {e}")))?;
            if v.get("nodes").is_some() && v.get("type").and_then(Value::as_str) == Some("clab") {
                clab::topology_data(path, &v, fs)?
            } else {
                return Err(file_err(
                    path,
                    "a JSON inventory must be containerlab's topology-data.json",
                ));
            }
        } else {
            let probe = parse_doc(path, text)?;
            match probe.as_object() {
                Some(m)
                    if m.len() == 1
                        && m.get("all").is_some_and(|a| {
                            a.get("children").is_some() || a.get("hosts").is_some()
                        }) =>
                {
                    clab::ansible(path, &probe)?
                }
                _ => return Ok(Parsed::Document(probe)),
            }
        };
        let inv = if fs {
            Self::from_generated(path, read)?
        } else {
            let (hosts, groups, warnings) = read;
            let mut inv = Self::from_sections(path, (hosts, groups, Entry::default()))?;
            inv.warnings.extend(warnings);
            inv
        };
        Ok(Parsed::Inventory(Box::new(inv)))
    }

    /// Parse one inventory file's text without touching the filesystem: containerlab's generated files
    /// (`.json` is read as `topology-data.json`), the single-file form, or a hosts file (then with no
    /// groups or defaults, as when it has no sibling `groups.yaml` / `defaults.yaml`). `source` names
    /// the input in errors and, by its extension, picks JSON. [`Inventory::load`] of a file is reading
    /// it plus this (plus the sibling files).
    pub fn from_text(source: &Path, text: &str) -> Result<Inventory, InventoryError> {
        let doc = match Self::containerlab_generated(source, text, false)? {
            Parsed::Inventory(inv) => return Ok(*inv),
            Parsed::Document(doc) => doc,
        };
        let sections = match Self::file_sections(source, doc)? {
            FileSections::Single(sections) => *sections,
            FileSections::Hosts(hosts) => (hosts, BTreeMap::new(), Entry::default()),
        };
        Self::from_sections(source, sections)
    }

    fn from_sections(source: &Path, sections: Sections) -> Result<Inventory, InventoryError> {
        let (hosts, groups, defaults) = sections;
        let mut inv = Inventory {
            source: source.to_owned(),
            hosts,
            groups,
            defaults,
            warnings: Vec::new(),
            trust: Trust::default(),
            origins: BTreeMap::new(),
            host_errors: BTreeMap::new(),
            intent: BTreeMap::new(),
            results: None,
        };
        inv.check()?;
        Ok(inv)
    }

    /// The devices a Nautobot source selects ([`nautobot`]); `source` names it in errors.
    fn from_nautobot(
        source: &Path,
        spec: &nautobot::SourceSpec,
    ) -> Result<Inventory, InventoryError> {
        let read = nautobot::read(spec, source)?;
        let results = nautobot::Results::new(spec.clone(), source, &read);
        let mut inv = Self::from_sections(source, (read.hosts, read.groups, Entry::default()))?;
        inv.origins = read.origins;
        inv.host_errors = read.host_errors;
        inv.results = Some(results);
        inv.intent = read.intent;
        inv.warnings = read.warnings;
        Ok(inv)
    }

    /// One file's sections: the whole inventory (`hosts:` with optional `groups:`/`defaults:` and no
    /// other top-level key), or else a hosts file.
    fn file_sections(path: &Path, doc: Value) -> Result<FileSections, InventoryError> {
        let is_single = doc.as_object().is_some_and(|m| {
            m.contains_key("hosts")
                && m.keys()
                    .all(|k| ["hosts", "groups", "defaults"].contains(&k.as_str()))
        });
        if is_single {
            let f: SingleFile = from_doc(path, doc)?;
            Ok(FileSections::Single(Box::new((
                flatten(f.hosts),
                flatten(f.groups),
                f.defaults.unwrap_or_default(),
            ))))
        } else {
            let sections = ["hosts", "groups", "defaults"];
            // `host:` for `hosts:` makes the file a hosts file with a host named `host`: say so.
            let misspelt = doc.as_object().and_then(|m| {
                m.keys()
                    .filter(|k| !sections.contains(&k.as_str()))
                    .find_map(|k| nearest(k, &sections).map(|s| (k.clone(), s)))
            });
            match (hosts_from_doc(path, doc), misspelt) {
                (Ok(hosts), _) => Ok(FileSections::Hosts(hosts)),
                (Err(InventoryError::File { path, message }), Some((key, section)))
                    if message.contains(&format!("`{key}.")) =>
                {
                    Err(InventoryError::File {
                        path,
                        message: format!(
                            "{message} (a file without `hosts:` is read as a hosts file, each \
                             top-level key a host; is `{key}:` meant to be `{section}:`?)"
                        ),
                    })
                }
                (Err(e), _) => Err(e),
            }
        }
    }

    fn split_files(hosts_file: &Path) -> Result<Sections, InventoryError> {
        let text = read(hosts_file)?;
        let hosts = parse_hosts(hosts_file, &text)?;
        let (groups, defaults) = Self::sibling_files(hosts_file)?;
        Ok((hosts, groups, defaults))
    }

    /// Nornir's `groups.yaml` / `defaults.yaml` beside a hosts file, when they exist.
    fn sibling_files(
        hosts_file: &Path,
    ) -> Result<(BTreeMap<String, Entry>, Entry), InventoryError> {
        let dir = hosts_file.parent().unwrap_or(Path::new("."));
        let sibling = |names: &[&str]| names.iter().map(|n| dir.join(n)).find(|p| p.exists());
        let groups = match sibling(&["groups.yaml", "groups.yml"]) {
            Some(p) => parse::<Option<BTreeMap<String, Option<Entry>>>>(&p, &read(&p)?)?
                .unwrap_or_default(),
            None => BTreeMap::new(),
        };
        let defaults = match sibling(&["defaults.yaml", "defaults.yml"]) {
            Some(p) => parse::<Option<Entry>>(&p, &read(&p)?)?.unwrap_or_default(),
            None => Entry::default(),
        };
        Ok((flatten(groups), defaults))
    }

    fn check(&mut self) -> Result<(), InventoryError> {
        for name in self.hosts.keys() {
            NodeName::new(name)
                .map_err(|e| file_err(&self.source, format!("host {name:?}: {e}")))?;
        }
        let entries = self
            .hosts
            .iter()
            .map(|(n, e)| (format!("hosts.{n}"), e))
            .chain(self.groups.iter().map(|(n, e)| (format!("groups.{n}"), e)))
            .chain(std::iter::once(("defaults".to_owned(), &self.defaults)));
        for (at, e) in entries {
            check_names(&self.source, &at, e)?;
        }
        // As Nornir's SimpleInventory: a group named but not defined is an error (a KeyError there).
        let all: Vec<(&String, &Entry)> = self.hosts.iter().chain(self.groups.iter()).collect();
        for (name, e) in all {
            for g in &e.groups {
                if !self.groups.contains_key(g) {
                    return Err(file_err(
                        &self.source,
                        format!("{name}: group {g:?} is not defined (add it to the groups)"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// [`Inventory::from_topology`] for a containerlab topology file (`*.clab.yml` / `*.clab.yaml`),
    /// [`Inventory::load`] for anything else (what `netgw serve` reads).
    pub fn load_any(path: &Path) -> Result<Inventory, InventoryError> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".clab.yml") || name.ends_with(".clab.yaml") {
            Self::from_topology(path)
        } else {
            Self::load(path)
        }
    }

    /// An inventory from a containerlab topology (`--topology FILE.clab.yml`), rendered as
    /// containerlab renders it: every node, addressed by its `mgmt-ipv4` (or containerlab's DNS name
    /// `PREFIX-LAB-NODE`), its kind as platform, credentials as [`clab`] says. Groups and defaults
    /// (trust settings, say) come from Nornir's `groups.yaml` / `defaults.yaml` beside it.
    pub fn from_topology(path: &Path) -> Result<Inventory, InventoryError> {
        let read = clab::topology(path)?;
        Self::from_generated(path, read)
    }

    /// An inventory made from one of containerlab's files, with the sibling `groups.yaml` /
    /// `defaults.yaml` when they exist (a group entry there fills the empty one containerlab's file
    /// names).
    fn from_generated(path: &Path, read: clab::Read) -> Result<Inventory, InventoryError> {
        let (mut hosts, mut groups, warnings) = read;
        let (sibling_groups, defaults) = Self::sibling_files(path)?;
        groups.extend(sibling_groups);
        // The user's own defaults.yaml / groups.yaml win over fallbacks (the kind's default, the
        // NETGW_* variables), not over the topology's credentials.
        for e in hosts.values_mut() {
            clab::yield_fallback_credentials(e, &groups, &defaults);
        }
        let mut inv = Self::from_sections(path, (hosts, groups, defaults))?;
        inv.warnings.extend(warnings);
        Ok(inv)
    }

    /// The containerlab topology at `path` (`${VAR}` expanded as containerlab does), or the lab a
    /// containerlab `topology-data.json` (any `.json`) describes: its nodes and links.
    pub fn topology(path: &Path) -> Result<netgw_models::topology::Topology, InventoryError> {
        if path.extension().is_some_and(|e| e == "json") {
            let v: Value = serde_json::from_str(&read(path)?)
                .map_err(|e| file_err(path, format!("invalid JSON: {e}")))?;
            return clab::topology_from_data(path, &v);
        }
        clab::parse_topology(path)
    }

    pub fn names(&self) -> Vec<String> {
        self.hosts.keys().cloned().collect()
    }

    /// Hosts of the containerlab lab `name`: `data.containerlab.topology` (set for inventories made
    /// from a `.clab.yml`, containerlab's `topology-data.json`, and netgw-lab's written inventory; a
    /// hand-written inventory may set it in defaults, groups or hosts).
    pub fn in_topology(&self, name: &str) -> Vec<String> {
        self.hosts
            .iter()
            .filter(|(_, e)| self.topology_of(e).as_deref() == Some(name))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Every containerlab lab name the inventory's hosts belong to.
    pub fn topologies(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .hosts
            .values()
            .filter_map(|e| self.topology_of(e))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn topology_of(&self, host: &Entry) -> Option<String> {
        self.layers(host).iter().find_map(|e| {
            e.data
                .get("containerlab")
                .and_then(|c| c.get("topology"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    }

    /// Hosts in the named group (directly or through a parent group).
    pub fn in_group(&self, group: &str) -> Vec<String> {
        self.hosts
            .iter()
            .filter(|(_, e)| self.chain(e).iter().any(|g| g == group))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// The host's groups in resolution order: each group, then the groups it belongs to, depth first;
    /// each once.
    fn chain(&self, entry: &Entry) -> Vec<String> {
        let mut out = Vec::new();
        fn walk(inv: &Inventory, groups: &[String], out: &mut Vec<String>, depth: usize) {
            for g in groups {
                if out.contains(g) || depth > 32 {
                    continue;
                }
                out.push(g.clone());
                if let Some(e) = inv.groups.get(g) {
                    walk(inv, &e.groups, out, depth + 1);
                }
            }
        }
        walk(self, &entry.groups, &mut out, 0);
        out
    }

    /// `connection_options.NAME` of an entry as Nornir 3 resolves it
    /// (`Host._get_connection_options_recursively`): the entry's block, then each of its groups
    /// resolved the same way (a group's resolution already includes the defaults), then the defaults;
    /// each field the first non-null, `extras` whole (never merged).
    fn connection_block(&self, entry: &Entry, cname: &str, depth: usize) -> ConnEntry {
        let mut p = entry
            .connection_options
            .get(cname)
            .map(|c| ConnEntry::clone(c))
            .unwrap_or_default();
        let fill = |p: &mut ConnEntry, sp: &ConnEntry| {
            p.hostname = p.hostname.take().or_else(|| sp.hostname.clone());
            p.port = p.port.or(sp.port);
            p.username = p.username.take().or_else(|| sp.username.clone());
            p.password = p.password.take().or_else(|| sp.password.clone());
            p.platform = p.platform.take().or_else(|| sp.platform.clone());
            p.extras = p.extras.take().or_else(|| sp.extras.clone());
        };
        if depth < 32 {
            for g in &entry.groups {
                if let Some(ge) = self.groups.get(g) {
                    let sp = self.connection_block(ge, cname, depth + 1);
                    fill(&mut p, &sp);
                }
            }
        }
        if let Some(sp) = self.defaults.connection_options.get(cname) {
            fill(&mut p, sp);
        }
        p
    }

    /// Entries that apply to a host, highest priority first.
    fn layers<'a>(&'a self, host: &'a Entry) -> Vec<&'a Entry> {
        let mut v = vec![host];
        for g in self.chain(host) {
            if let Some(e) = self.groups.get(&g) {
                v.push(e);
            }
        }
        v.push(&self.defaults);
        v
    }

    /// Names of [`Inventory::layers`], in the same order (`hosts.NAME`, `groups.G`, `defaults`).
    fn layer_names(&self, name: &str, host: &Entry) -> Vec<String> {
        let mut v = vec![format!("hosts.{name}")];
        v.extend(
            self.chain(host)
                .into_iter()
                .filter(|g| self.groups.contains_key(g))
                .map(|g| format!("groups.{g}")),
        );
        v.push("defaults".into());
        v
    }

    /// A host as it resolves, for `netgw inventory`: every field with the layer it came from,
    /// passwords and every other credential (an enable secret, an SNMP community, any key
    /// `is_secret_extra` names, at any depth of `data` and of a connection's extras) redacted
    /// (`"<redacted>"`, or null when unset). Errors only for an unknown host.
    pub fn resolved(&self, name: &str) -> Result<Value, InventoryError> {
        let host = self.hosts.get(name).ok_or_else(|| InventoryError::Host {
            host: name.to_owned(),
            message: "is not in the inventory".into(),
        })?;
        let layers = self.layers(host);
        let names = self.layer_names(name, host);
        let mut sources = serde_json::Map::new();
        let mut field = |key: &str, f: &dyn Fn(&Entry) -> Option<Value>| {
            let found = layers
                .iter()
                .zip(&names)
                .find_map(|(e, n)| f(e).map(|v| (v, n)));
            match found {
                Some((v, n)) => {
                    sources.insert(key.into(), Value::String(n.clone()));
                    v
                }
                None => Value::Null,
            }
        };
        let redact = |p: &Option<String>| p.as_ref().map(|_| Value::from("<redacted>"));
        let hostname = field("hostname", &|e| e.hostname.clone().map(Value::from));
        let port = field("port", &|e| e.port.map(Value::from));
        let username = field("username", &|e| e.username.clone().map(Value::from));
        let password = field("password", &|e| redact(&e.password));
        let platform = field("platform", &|e| e.platform.clone().map(Value::from));
        for (k, n) in layers
            .iter()
            .zip(&names)
            .flat_map(|(e, n)| e.data.keys().map(move |k| (k, n)))
        {
            sources
                .entry(format!("data.{k}"))
                .or_insert_with(|| Value::String(n.clone()));
        }
        let mut conn_names: Vec<&String> = layers
            .iter()
            .flat_map(|e| e.connection_options.keys())
            .collect();
        conn_names.sort();
        conn_names.dedup();
        let mut conns = serde_json::Map::new();
        for c in conn_names {
            let b = self.connection_block(host, c, 0);
            // Null when unset, as before.
            let mut extras = b.extras.map_or(Value::Null, Value::Object);
            netgw_drivers::target::redact_secrets(&mut extras);
            conns.insert(
                c.clone(),
                serde_json::json!({"hostname": b.hostname, "port": b.port, "username": b.username,
                    "password": redact(&b.password), "platform": b.platform, "extras": extras}),
            );
        }
        let (driver, not_driven, error) = match self.platform_of(name, &layers) {
            Ok(p) => (Some(p.to_string()), None, None),
            Err(InventoryError::NotDriven { reason, .. }) => (None, Some(reason), None),
            Err(e) => (None, None, Some(e.to_string())),
        };
        // The layer that set a netgw setting (key by key, see `netgw_settings`).
        let setting_src = |k: &str| {
            layers.iter().zip(&names).find_map(|(e, n)| {
                e.data
                    .get("netgw")
                    .and_then(|m| m.get(k))
                    .map(|_| format!("data.netgw of {n}"))
            })
        };
        let trust_src =
            |keys: &[&str], cli: bool| match (keys.iter().find_map(|k| setting_src(k)), cli) {
                (Some(src), _) => src,
                (None, true) => "command line".to_owned(),
                (None, false) => "default".to_owned(),
            };
        let tr = &self.trust;
        let (trust, target_error) = match self.target(name) {
            Ok(t) => (
                serde_json::json!({
                    "known_hosts": t.known_hosts, "accept_new_host_keys": t.accept_new_host_keys,
                    "tls_ca": t.tls.ca_file, "tls_verify": t.tls.verify,
                    "sources": {
                        "known_hosts": trust_src(&["known_hosts"], tr.known_hosts.is_some()),
                        "accept_new_host_keys":
                            trust_src(&["accept_new_host_keys"], tr.accept_new_host_keys),
                        "tls": trust_src(&["tls_ca", "ca_file", "tls_verify"],
                            tr.tls_ca.is_some() || tr.no_tls_verify),
                    },
                }),
                driver_check(&t).err(),
            ),
            Err(InventoryError::NotDriven { .. }) => (Value::Null, None),
            // Why a converge of this host would fail (an unset password variable, ...).
            Err(e) => (Value::Null, Some(e.to_string())),
        };
        let error = error.or(target_error);
        for (k, v) in self.origins.get(name).into_iter().flatten() {
            sources.insert(k.clone(), Value::String(v.clone()));
        }
        // Credentials under data (`data.netgw.enable_secret`, a driver's or another tool's) too, but
        // not netgw's record of where a containerlab host's credentials came from: it holds
        // descriptions ("containerlab default for the kind"), never the values.
        let mut data = extended_data(&layers);
        data.iter_mut()
            .filter(|(k, _)| k.as_str() != "containerlab_credentials")
            .for_each(|(k, v)| netgw_drivers::target::redact_entry(k, v));
        Ok(serde_json::json!({
            "name": name, "hostname": hostname, "port": port, "platform": platform,
            "driver": driver, "not_driven": not_driven, "error": error,
            "username": username, "password": password, "groups": self.chain(host),
            "data": data, "connection_options": conns, "trust": trust,
            "sources": sources, "inventory": self.source,
        }))
    }

    /// Why netgw does not drive the host, if it does not (a Linux host, an IOS-XR router, ...).
    pub fn not_driven(&self, name: &str) -> Option<String> {
        let host = self.hosts.get(name)?;
        match self.platform_of(name, &self.layers(host)) {
            Err(InventoryError::NotDriven { reason, .. }) => Some(reason),
            _ => None,
        }
    }

    /// The host's driver platform: its `platform` (a netgw, napalm or scrapli name, or a containerlab
    /// kind) through the kind table; [`InventoryError::NotDriven`] for a platform netgw has no driver
    /// for, an error naming the nearest valid name for one nobody knows.
    fn platform_of(&self, name: &str, layers: &[&Entry]) -> Result<Platform, InventoryError> {
        use netgw_models::kinds::{self, Drive};
        let host_err = |message: String| InventoryError::Host {
            host: name.to_owned(),
            message,
        };
        let raw = layers
            .iter()
            .find_map(|e| e.platform.clone().filter(|s| !s.is_empty()))
            .ok_or_else(|| {
                host_err(
                    "has no platform (containerlab writes an empty one for some kinds under \
                     CLAB_NORNIR_PLATFORM_NAME_SCHEMA=napalm: use the default or scrapli schema)"
                        .into(),
                )
            })?;
        let not_driven = |reason: String| InventoryError::NotDriven {
            host: name.to_owned(),
            reason: format!("platform {raw:?}: {reason}"),
        };
        let platform = match kinds::platform_name(&raw) {
            Some(Drive::Driver(p)) => Platform::parse(p),
            Some(Drive::NotDriven(why)) => return Err(not_driven(why.into())),
            None => Platform::parse(&raw),
        };
        match platform {
            Some(p) if netgw_drivers::registry::has_driver(p) => Ok(p),
            Some(p) => Err(not_driven(format!("netgw has no {p} driver"))),
            None => Err(host_err(format!(
                "platform {raw:?} is not known (a netgw, napalm or scrapli platform name, or a \
                 containerlab kind{})",
                nearest(&raw, &known_platform_names())
                    .map(|n| format!("; did you mean {n:?}?"))
                    .unwrap_or_default()
            ))),
        }
    }

    /// Resolve a host into a device target (credentials resolved; errors name the host).
    pub fn target(&self, name: &str) -> Result<DeviceTarget, InventoryError> {
        let host_err = |message: String| InventoryError::Host {
            host: name.to_owned(),
            message,
        };
        let host = self
            .hosts
            .get(name)
            .ok_or_else(|| host_err("is not in the inventory".into()))?;
        if let Some(e) = self.host_errors.get(name) {
            return Err(host_err(e.clone()));
        }
        let layers = self.layers(host);
        let first = |f: &dyn Fn(&Entry) -> Option<String>| {
            layers.iter().find_map(|e| f(e).filter(|s| !s.is_empty()))
        };

        let platform = self.platform_of(name, &layers)?;
        let hostname = first(&|e| e.hostname.clone())
            .ok_or_else(|| host_err("has no hostname (management address)".into()))?;

        let netgw = netgw_settings(&layers);

        let mut t = DeviceTarget::new(name, platform, hostname);
        t.port = layers.iter().find_map(|e| e.port);
        // Nornir: a field is inherited only when it is null; "" is a value.
        let set = |f: &dyn Fn(&Entry) -> Option<String>| layers.iter().find_map(|e| f(e));
        t.username = set(&|e| e.username.clone()).unwrap_or_default();
        if let Some(p) = set(&|e| e.password.clone()) {
            t.password =
                Some(credentials::resolve(&p).map_err(|e| host_err(format!("password: {e}")))?);
        }

        let mut conn_names: Vec<&String> = layers
            .iter()
            .flat_map(|e| e.connection_options.keys())
            .collect();
        conn_names.sort();
        conn_names.dedup();
        for cname in conn_names {
            let c = self.connection_block(host, cname, 0);
            let password =
                match c.password.clone() {
                    Some(p) => Some(credentials::resolve(&p).map_err(|e| {
                        host_err(format!("connection_options.{cname}.password: {e}"))
                    })?),
                    None => None,
                };
            t.connection_options.insert(
                cname.clone(),
                Box::new(ConnectionOptions {
                    hostname: c.hostname,
                    port: c.port,
                    username: c.username,
                    password,
                    extras: c.extras.unwrap_or_default(),
                }),
            );
        }

        apply_netgw_settings(&mut t, &netgw).map_err(host_err)?;
        self.trust.apply(&mut t, &netgw);
        Ok(t)
    }
}

/// What the host's driver would refuse before dialling (`netgw_drivers::registry::check`), in the
/// inventory's words: `inventory host sw1: option save_config must be true or false, not "no"`.
pub fn driver_check(t: &DeviceTarget) -> Result<(), String> {
    netgw_drivers::registry::check(t).map_err(|e| {
        let why = match e {
            netgw_drivers::driver::DriverError::Config { message, .. } => message,
            other => other.to_string(),
        };
        format!("inventory host {}: {why}", t.name)
    })
}

/// Every `data.netgw` key netgw reads (the general ones, then the drivers' options).
const NETGW_KEYS: &[&str] = &[
    "transport",
    "known_hosts",
    "accept_new_host_keys",
    "key_file",
    "enable_secret",
    "tls_verify",
    "tls_ca",
    "ca_file",
    "connect_timeout",
    "idle_timeout",
    "operation_timeout",
    "junos_style",
    "save_config",
    "eapi_transport",
    "eos_sessions",
    "eos_write_memory",
    "cli_batch",
    "netconf_pipelining",
    "rest_parallel_reads",
];

/// `connection_options` names: netgw's transports, then Nornir plugins' blocks netgw leaves alone
/// (an inventory shared with Nornir keeps them).
const CONNECTION_NAMES: &[&str] = &[
    "netconf",
    "ssh",
    "eapi",
    "rest",
    "snmp",
    "netmiko",
    "napalm",
    "scrapli",
    "scrapli_netconf",
    "paramiko",
    "ncclient",
];

/// Unknown `data.netgw` keys and `connection_options` names in one entry: an error naming the entry,
/// the key and the nearest valid one (a typo is otherwise silently ignored).
fn check_names(source: &Path, at: &str, e: &Entry) -> Result<(), InventoryError> {
    let unknown = |field: String, key: &str, valid: &[&str]| {
        let hint = nearest(key, valid)
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_else(|| format!("; valid: {}", valid.join(", ")));
        file_err(source, format!("{at}.{field}: unknown key `{key}`{hint}"))
    };
    if let Some(netgw) = e.data.get("netgw").and_then(Value::as_object) {
        for k in netgw.keys() {
            if !NETGW_KEYS.contains(&k.as_str()) {
                return Err(unknown("data.netgw".into(), k, NETGW_KEYS));
            }
        }
    }
    for k in e.connection_options.keys() {
        if !CONNECTION_NAMES.contains(&k.as_str()) {
            return Err(unknown("connection_options".into(), k, CONNECTION_NAMES));
        }
    }
    Ok(())
}

/// Every platform name netgw resolves: its own and every containerlab kind's names.
fn known_platform_names() -> Vec<&'static str> {
    let mut v = vec![
        "junos",
        "eos",
        "ios",
        "nxos",
        "f5",
        "arista_eos",
        "juniper_junos",
        "cisco_ios",
        "cisco_iosxe",
        "cisco_nxos",
    ];
    for k in netgw_models::kinds::KINDS {
        v.extend(k.names.iter().copied());
    }
    v
}

pub(crate) use netgw_models::name::nearest;

/// netgw's own settings, `data.netgw`, key by key from the first layer that sets each (host, groups,
/// defaults): `known_hosts` in the defaults and `junos_style` on a host both apply. Nornir does not
/// read these keys; everything else in `data` resolves exactly as Nornir's [`extended_data`].
fn netgw_settings(layers: &[&Entry]) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for e in layers {
        if let Some(m) = e.data.get("netgw").and_then(Value::as_object) {
            for (k, v) in m {
                if !out.contains_key(k) {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}

/// Nornir's `Host.extended_data()`: each top-level key from the first layer that has it (host,
/// groups in order, defaults); nothing is merged below the top level.
fn extended_data(layers: &[&Entry]) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for e in layers {
        for (k, v) in &e.data {
            if !out.contains_key(k) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

fn apply_netgw_settings(
    t: &mut DeviceTarget,
    s: &serde_json::Map<String, Value>,
) -> Result<(), String> {
    let mut timeouts = Timeouts::default();
    let mut tls = TlsOptions::default();
    for (k, v) in s {
        let bad = |what: &str| format!("data.netgw.{k}: must be {what}, found {v}");
        match k.as_str() {
            "transport" => {
                t.transport = Some(v.as_str().ok_or_else(|| bad("a string"))?.to_owned())
            }
            "known_hosts" => {
                t.known_hosts = PathBuf::from(v.as_str().ok_or_else(|| bad("a path"))?)
            }
            "accept_new_host_keys" => {
                t.accept_new_host_keys = v.as_bool().ok_or_else(|| bad("true or false"))?
            }
            "key_file" => {
                t.key_file = Some(PathBuf::from(v.as_str().ok_or_else(|| bad("a path"))?))
            }
            "enable_secret" => {
                // A secret: a number is its text, and the error never shows the value.
                let r = scalar_text(v).ok_or_else(|| {
                    "data.netgw.enable_secret: must be text or a credential reference, found a \
                     list or a mapping"
                        .to_owned()
                })?;
                t.enable_secret = Some(
                    credentials::resolve(&r)
                        .map_err(|e| format!("data.netgw.enable_secret: {e}"))?,
                );
            }
            "tls_verify" => tls.verify = v.as_bool().ok_or_else(|| bad("true or false"))?,
            "tls_ca" | "ca_file" => {
                tls.ca_file = Some(PathBuf::from(v.as_str().ok_or_else(|| bad("a path"))?))
            }
            "connect_timeout" | "idle_timeout" | "operation_timeout" => {
                let secs = v
                    .as_f64()
                    .filter(|s| *s > 0.0 && *s <= 86_400.0)
                    .ok_or_else(|| bad("seconds (0 < s <= 86400)"))?;
                let d = Duration::from_secs_f64(secs);
                match k.as_str() {
                    "connect_timeout" => timeouts.connect = d,
                    "idle_timeout" => timeouts.idle = d,
                    _ => timeouts.operation = d,
                }
            }
            _ => {
                t.options.insert(k.clone(), v.clone());
            }
        }
    }
    t.timeouts = timeouts;
    t.tls = tls;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn from_text_is_load_without_the_filesystem() {
        let text = "hosts:\n  leaf1: {hostname: 10.0.0.1, platform: eos, groups: [g]}\ngroups:\n  g: {username: u}\n";
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "inv.yml", text);
        let loaded = Inventory::load(&p).unwrap();
        let parsed = Inventory::from_text(&p, text).unwrap();
        assert_eq!(format!("{loaded:?}"), format!("{parsed:?}"));
        // A hosts file alone: no groups, no defaults (no sibling files to read).
        let hosts = Inventory::from_text(
            Path::new("hosts.yaml"),
            "sw1: {hostname: h, platform: ios}\n",
        )
        .unwrap();
        assert_eq!(hosts.names(), ["sw1"]);
        assert!(hosts.groups.is_empty());
        let e = Inventory::from_text(Path::new("bad.yaml"), "hosts: [")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.yaml") && e.contains("invalid YAML"), "{e}");
        // VLAN ids as keys of host data are YAML integers: kept as their text, as Ansible does.
        let inv = Inventory::from_text(
            Path::new("hosts.yaml"),
            "sw1:\n  hostname: h\n  platform: ios\n  data:\n    vlans: {100: {name: users}}\n",
        )
        .unwrap();
        assert_eq!(
            inv.hosts["sw1"].data["vlans"],
            serde_json::json!({"100": {"name": "users"}})
        );
        // A merge key, as Nornir's loader (ruamel.yaml) merges it: the host's own keys win.
        let inv = Inventory::from_text(
            Path::new("hosts.yaml"),
            "sw1: &base\n  hostname: h1\n  platform: ios\nsw2:\n  <<: *base\n  hostname: h2\n",
        )
        .unwrap();
        let sw2 = &inv.hosts["sw2"];
        assert_eq!(
            (sw2.hostname.as_deref(), sw2.platform.as_deref()),
            (Some("h2"), Some("ios"))
        );
        let e = Inventory::from_text(
            Path::new("hosts.yaml"),
            "sw1:\n  hostname: h\n  data:\n    mtu: .inf\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("hosts.yaml") && e.contains("sw1.data.mtu: number .inf is not finite"),
            "{e}"
        );
    }

    #[test]
    fn single_file_with_groups_and_defaults() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "inv.yml",
            r#"
hosts:
  leaf1:
    hostname: 127.0.0.1
    groups: [leaves]
    connection_options:
      eapi: {port: 8443}
  spine1:
    hostname: 127.0.0.2
    platform: juniper_junos
    password: override
groups:
  leaves:
    platform: arista_eos
    groups: [fabric]
    data: {netgw: {transport: eapi, tls_verify: false}}
    connection_options:
      eapi: {username: api}
  fabric:
    username: fabric-admin
    data: {netgw: {known_hosts: /etc/netgw/known_hosts, operation_timeout: 5}, site: dc1}
defaults:
  username: admin
  password: admin
"#,
        );
        let inv = Inventory::load(&p).unwrap();
        assert!(inv.warnings.is_empty());
        let t = inv.target("leaf1").unwrap();
        assert_eq!(t.platform, Platform::Eos);
        assert_eq!(t.username, "fabric-admin", "group beats defaults");
        assert_eq!(t.password.as_ref().unwrap().expose(), "admin");
        assert_eq!(t.transport.as_deref(), Some("eapi"));
        assert!(!t.tls.verify);
        assert_eq!(
            t.known_hosts,
            PathBuf::from("/etc/netgw/known_hosts"),
            "data.netgw settings apply key by key across groups"
        );
        assert_eq!(t.timeouts.operation, Duration::from_secs(5));
        let e = t.endpoint("eapi", 443);
        assert_eq!((e.port, e.username.as_str()), (8443, "api"));
        let s = inv.target("spine1").unwrap();
        assert_eq!(
            (
                s.platform,
                s.username.as_str(),
                s.password.unwrap().expose()
            ),
            (Platform::Junos, "admin", "override")
        );
        assert_eq!(inv.in_group("fabric"), ["leaf1"]);
    }

    #[test]
    fn containerlab_generated_inventories_load() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/containerlab/nornir");
        let inv = Inventory::load(&root.join("case2-scrapli-platform/nornir-simple-inventory.yml"))
            .unwrap();
        let e = inv.target("node1").unwrap_err().to_string();
        assert!(e.contains("node1") && e.contains("hostname"), "{e}");
        // containerlab names the `nornir-group` label groups without defining them: Nornir refuses
        // the file (KeyError) until a groups.yaml beside it defines them, and so does netgw.
        let case4 = root.join("case4-default-groups-platform/nornir-simple-inventory.yml");
        let e = Inventory::load(&case4).unwrap_err().to_string();
        assert!(e.contains("is not defined"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let copy = d.path().join("nornir-simple-inventory.yml");
        std::fs::copy(&case4, &copy).unwrap();
        write(
            d.path(),
            "groups.yaml",
            "spine: {}\nextra_group: {}\nsecond_extra_group: {}\n",
        );
        let inv = Inventory::load(&copy).unwrap();
        let e = inv.target("node1").unwrap_err();
        assert!(matches!(e, InventoryError::NotDriven { .. }), "{e}");
        assert!(e.to_string().contains("nokia_srlinux"), "{e}");
        assert!(inv.not_driven("node4").unwrap().contains("Linux"));
        assert!(inv.not_driven("node2").unwrap().contains("SR Linux"));
    }

    #[test]
    fn containerlab_topologies_become_inventories() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("containerlab/netgw-fabric.clab.yml");
        let inv = Inventory::from_topology(&p).unwrap();
        assert_eq!(
            inv.names(),
            [
                "access1", "host1", "host2", "lb1", "leaf1", "leaf2", "spine1", "spine2"
            ]
        );
        assert!(inv.not_driven("host1").unwrap().contains("Linux"));
        let t = inv.target("spine2").unwrap();
        assert_eq!(
            (t.platform, t.host.as_str()),
            (Platform::Junos, "172.20.40.12")
        );
        assert_eq!(t.password.unwrap().expose(), "admin@123");
        assert_eq!(inv.target("access1").unwrap().platform, Platform::Ios);
    }

    #[test]
    fn every_real_containerlab_topology_becomes_an_inventory() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/tests/fixtures/containerlab");
        let mut stack = vec![root];
        let mut n = 0;
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()) {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_string_lossy().ends_with(".yml")
                    || p.to_string_lossy().ends_with(".yaml")
                {
                    let text = std::fs::read_to_string(&p).unwrap();
                    if !text.contains("topology:") {
                        continue; // generated inventories live beside some topologies
                    }
                    let inv = Inventory::from_topology(&p)
                        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                    for h in inv.names() {
                        match inv.target(&h) {
                            Ok(_) => assert_eq!(inv.not_driven(&h), None),
                            Err(InventoryError::NotDriven { .. }) => {
                                assert!(inv.not_driven(&h).is_some())
                            }
                            Err(e) => panic!("{}: {e}", p.display()),
                        }
                    }
                    n += 1;
                }
            }
        }
        assert!(n >= 30, "only {n} topologies found");
    }

    /// The lab a node belongs to, for `serve`'s `{"topology": NAME}`: from a .clab.yml, from
    /// containerlab's topology-data.json, from data set in a group of a hand-written inventory.
    #[test]
    fn nodes_by_containerlab_lab() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let fabric = Inventory::load_any(&root.join("containerlab/netgw-fabric.clab.yml")).unwrap();
        assert_eq!(fabric.topologies(), ["netgw-fabric"]);
        assert_eq!(fabric.in_topology("netgw-fabric"), fabric.names());
        assert!(fabric.in_topology("other").is_empty());
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("topology-data.json");
        std::fs::write(
            &data,
            r#"{"name": "dc2", "type": "clab", "nodes": {"leaf1": {"kind": "ceos", "mgmt-ipv4-address": "172.20.20.2"}}}"#,
        )
        .unwrap();
        let inv = Inventory::load_any(&data).unwrap();
        assert_eq!(inv.in_topology("dc2"), ["leaf1"]);
        let hand = dir.path().join("hosts.yml");
        std::fs::write(
            &hand,
            "hosts:\n  a: {hostname: h, platform: eos, groups: [lab]}\n  b: {hostname: h, platform: eos}\ngroups:\n  lab: {data: {containerlab: {topology: dc3}}}\n",
        )
        .unwrap();
        let inv = Inventory::load_any(&hand).unwrap();
        assert_eq!(
            (inv.in_topology("dc3"), inv.topologies()),
            (vec!["a".to_owned()], vec!["dc3".to_owned()])
        );
        std::fs::write(&hand, "hosts:\n  a: {hostname: h, platform: eos}\n").unwrap();
        assert!(Inventory::load_any(&hand).unwrap().topologies().is_empty());
    }

    #[test]
    fn containerlab_generated_topology_data_and_ansible_inventories() {
        let d = tempfile::tempdir().unwrap();
        let td = write(
            d.path(),
            "topology-data.json",
            r#"{"name":"lab","type":"clab","nodes":{
                "sw1":{"kind":"arista_ceos","mgmt-ipv4-address":"172.20.20.2","longname":"clab-lab-sw1","group":"leaves"},
                "j1":{"kind":"juniper_vjunosswitch","mgmt-ipv4-address":"172.20.20.3"},
                "srl":{"kind":"srl","mgmt-ipv4-address":"172.20.20.4"}}}"#,
        );
        let inv = Inventory::load(&td).unwrap();
        assert_eq!(inv.names(), ["j1", "srl", "sw1"]);
        assert!(inv.not_driven("srl").unwrap().contains("SR Linux"));
        assert_eq!(inv.target("sw1").unwrap().host, "172.20.20.2");
        assert_eq!(
            inv.target("j1").unwrap().password.unwrap().expose(),
            "admin@123"
        );
        assert_eq!(inv.in_group("leaves"), ["sw1"]);

        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/containerlab");
        let mut found = 0;
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()) {
                let p = e.path();
                let n = p.file_name().unwrap().to_string_lossy().to_string();
                if p.is_dir() {
                    stack.push(p);
                } else if n == "ansible-inventory.yml"
                    || n.ends_with("topology-data.json")
                    || n == "topology-data.json"
                {
                    Inventory::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                    found += 1;
                }
            }
        }
        assert!(found >= 3, "containerlab's generated files: {found}");

        let a = write(
            d.path(),
            "ansible-inventory.yml",
            "all:\n  vars: {ansible_httpapi_use_proxy: false}\n  children:\n    arista_ceos:\n      vars: {ansible_network_os: arista.eos.eos, ansible_user: admin, ansible_password: pw1}\n      hosts:\n        clab-x-sw1: {ansible_host: 172.20.20.5}\n    spine:\n      hosts:\n        clab-x-sw1: {ansible_host: 172.20.20.5}\n    linux:\n      hosts:\n        clab-x-h1:\n",
        );
        let inv = Inventory::load(&a).unwrap();
        assert_eq!(inv.names(), ["clab-x-h1", "clab-x-sw1"]);
        assert!(inv.not_driven("clab-x-h1").unwrap().contains("Linux"));
        let t = inv.target("clab-x-sw1").unwrap();
        assert_eq!(
            (t.platform, t.host.as_str(), t.password.unwrap().expose()),
            (Platform::Eos, "172.20.20.5", "pw1")
        );
        assert_eq!(inv.in_group("spine"), ["clab-x-sw1"]);
    }

    /// Issue 23 item 5: YAML reads `password: 1234` as a number; it is the text, as Nornir passes it.
    /// Errors about secret fields name the field and the problem, never the value.
    #[test]
    fn numeric_secrets_are_their_text_and_errors_never_show_secrets() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "inv.yml",
            "hosts:\n  sw1:\n    hostname: h\n    platform: ios\n    username: 1000\n    password: 1234\n    data: {netgw: {enable_secret: 4242}}\n    connection_options:\n      ssh: {password: 5678}\n      snmp: {extras: {version: 2c, community: 31337}}\n",
        );
        let t = Inventory::load(&p).unwrap().target("sw1").unwrap();
        assert_eq!(t.username, "1000");
        assert_eq!(t.password.as_ref().unwrap().expose(), "1234");
        assert_eq!(t.enable_secret.as_ref().unwrap().expose(), "4242");
        assert_eq!(t.endpoint("ssh", 22).password.unwrap().expose(), "5678");
        let snmp = crate::facts::snmp_config(&t).unwrap().unwrap();
        assert!(format!("{snmp:?}").contains("V2c"), "{snmp:?}");
        // `netgw inventory` shows every layer of the host, and none of its secrets.
        let shown = Inventory::load(&p).unwrap().resolved("sw1").unwrap();
        let text = shown.to_string();
        for secret in ["1234", "4242", "5678", "31337"] {
            assert!(!text.contains(secret), "{secret} shown: {text}");
        }
        assert_eq!(shown["data"]["netgw"]["enable_secret"], "<redacted>");
        assert_eq!(
            shown["connection_options"]["snmp"]["extras"]["community"],
            "<redacted>"
        );
        assert_eq!(
            shown["connection_options"]["snmp"]["extras"]["version"],
            "2c"
        );
        for (body, field) in [
            ("password: [98765, 1]", "password"),
            (
                "connection_options: {ssh: {password: {x: 98765}}}",
                "password",
            ),
        ] {
            let p = write(
                d.path(),
                "bad.yml",
                &format!("hosts:\n  sw1: {{hostname: h, platform: ios, {body}}}\n"),
            );
            let e = Inventory::load(&p).unwrap_err().to_string();
            assert!(e.contains(field) && e.contains("must be text"), "{e}");
            assert!(!e.contains("98765"), "the secret is in the error: {e}");
        }
        let p = write(
            d.path(),
            "bad.yml",
            "hosts:\n  sw1: {hostname: h, platform: ios, data: {netgw: {enable_secret: [98765]}}}\n",
        );
        let e = Inventory::load(&p)
            .unwrap()
            .target("sw1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("enable_secret") && !e.contains("98765"), "{e}");
    }

    #[test]
    fn unknown_netgw_keys_and_connection_names_are_errors_with_the_nearest() {
        let d = tempfile::tempdir().unwrap();
        for (body, want) in [
            (
                "data: {netgw: {tls_verfy: false}}",
                "hosts.sw1.data.netgw: unknown key `tls_verfy`; did you mean `tls_verify`?",
            ),
            (
                "connection_options: {eapii: {port: 1}}",
                "hosts.sw1.connection_options: unknown key `eapii`; did you mean `eapi`?",
            ),
        ] {
            let p = write(
                d.path(),
                "inv.yml",
                &format!("hosts:\n  sw1: {{hostname: h, platform: eos, {body}}}\n"),
            );
            let e = Inventory::load(&p).unwrap_err().to_string();
            assert!(e.contains("inv.yml") && e.contains(want), "{e}");
        }
        let p = write(
            d.path(),
            "inv.yml",
            "hosts:\n  sw1: {hostname: h, platform: eos}\ndefaults:\n  connection_options: {netmiko: {extras: {fast_cli: true}}}\n",
        );
        assert!(
            Inventory::load(&p).is_ok(),
            "Nornir plugins' blocks are kept"
        );
    }

    #[test]
    fn split_files_and_directories() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "hosts.yaml",
            "sw1:\n  hostname: 10.0.0.1\n  groups: [ios]\n",
        );
        write(d.path(), "groups.yaml", "ios:\n  platform: cisco_ios\n");
        write(d.path(), "defaults.yaml", "username: u\n");
        let inv = Inventory::load(d.path()).unwrap();
        assert_eq!(inv.target("sw1").unwrap().platform, Platform::Ios);
        let inv = Inventory::load(&d.path().join("hosts.yaml")).unwrap();
        assert_eq!(inv.target("sw1").unwrap().username, "u");
    }

    #[test]
    fn errors_name_file_host_and_field() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "bad.yml", "hosts:\n  sw1:\n    hostnme: x\n");
        let e = Inventory::load(&p).unwrap_err().to_string();
        assert!(e.contains("bad.yml") && e.contains("hostnme"), "{e}");
        let p = write(d.path(), "bad2.yml", "hosts: [unclosed\n");
        assert!(
            Inventory::load(&p)
                .unwrap_err()
                .to_string()
                .contains("invalid YAML")
        );
        let p = write(d.path(), "bad3.yml", "hosts:\n  'sw 1': {}\n");
        assert!(
            Inventory::load(&p)
                .unwrap_err()
                .to_string()
                .contains("invalid node name")
        );
        let p = write(
            d.path(),
            "bad4.yml",
            "hosts:\n  sw1: {hostname: h, platform: eos, password: '${NETGW_TEST_SURELY_UNSET_VAR}'}\n",
        );
        let e = Inventory::load(&p)
            .unwrap()
            .target("sw1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("NETGW_TEST_SURELY_UNSET_VAR"), "{e}");
        let p = write(
            d.path(),
            "bad5.yml",
            "hosts:\n  sw1: {hostname: h, platform: eos, data: {netgw: {tls_verify: maybe}}}\n",
        );
        let e = Inventory::load(&p)
            .unwrap()
            .target("sw1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tls_verify"), "{e}");
    }

    #[test]
    fn an_unset_password_variable_is_shown_as_the_hosts_error() {
        let text = "sw1: {hostname: h, platform: eos, password: '${NETGW_TEST_NEVER_SET_PW}'}\n";
        let inv = Inventory::from_text(Path::new("hosts.yaml"), text).unwrap();
        let h = inv.resolved("sw1").unwrap();
        assert_eq!(h["driver"], "eos");
        let e = h["error"].as_str().unwrap_or_default();
        assert!(e.contains("NETGW_TEST_NEVER_SET_PW is not set"), "{h}");
        assert_eq!(h["password"], "<redacted>");
    }

    #[test]
    fn an_error_in_defaults_yaml_names_that_file_and_the_nearest_key() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("hosts.yaml"),
            "sw1: {hostname: h, platform: eos}\n",
        )
        .unwrap();
        std::fs::write(d.path().join("defaults.yaml"), "usernme: admin\n").unwrap();
        let e = Inventory::load(&d.path().join("hosts.yaml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("defaults.yaml") && !e.contains("hosts.yaml"),
            "{e}"
        );
        assert!(e.contains("did you mean username?"), "{e}");
    }
}
