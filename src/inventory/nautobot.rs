//! Nautobot as the inventory (docs/nautobot.md): the devices a filter selects, read through Nautobot's
//! REST API, each made the host Nornir's `nornir_nautobot` makes of it (name, the primary IP's address
//! as hostname, the platform's `network_driver` as platform), plus what netgw needs that
//! `nornir_nautobot` leaves to other plugins: groups from location, role, tags and platform (so a
//! selection names them), `data` from the rendered config context, the port from the custom field
//! `netgw_port`, and credentials from the device's secrets group, kept as references
//! (`${VAR}`, `file:PATH`) that are resolved on the gateway when a run opens the device.
//!
//! Two ways to name the source, both for `--inventory`:
//! * a YAML file whose only key is `nautobot:` ([`SourceSpec`]);
//! * `nautobot+http(s)://HOST[:PORT][/PATH]?location=..&role=..` (filters as query parameters, the
//!   token in `NAUTOBOT_TOKEN`).

use super::{Entry, InventoryError};
use netgw_models::secret::Secret;
use netgw_transport::credentials;
use netgw_transport::http::{HttpAuth, HttpClient, HttpConfig, TlsMode};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The variable the URL form reads the token from (the one `nornir_nautobot` reads too).
pub const TOKEN_ENV: &str = "NAUTOBOT_TOKEN";
/// Devices per page asked of the API; `next` is followed until the last page.
const PAGE: usize = 200;
/// Most pages read of one listing (a bound on a server that keeps answering `next`).
const MAX_PAGES: usize = 1000;
/// The custom field (on `dcim.device`) holding the port netgw connects to.
pub const PORT_FIELD: &str = "netgw_port";

/// The filters Nautobot's device list takes, each a list of names (any of them matches).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    #[serde(default, deserialize_with = "one_or_many")]
    pub location: Vec<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub role: Vec<String>,
    /// Tag names (Nautobot's filter is `tags`; `tag` is taken too).
    #[serde(default, alias = "tag", deserialize_with = "one_or_many")]
    pub tags: Vec<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub platform: Vec<String>,
    #[serde(default, deserialize_with = "one_or_many")]
    pub status: Vec<String>,
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Om {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<Om>::deserialize(d)? {
        None => Vec::new(),
        Some(Om::One(s)) => vec![s],
        Some(Om::Many(v)) => v,
    })
}

impl Filter {
    /// The query parameters of the device list, in a fixed order.
    fn params(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for (k, vs) in [
            ("location", &self.location),
            ("role", &self.role),
            ("tags", &self.tags),
            ("platform", &self.platform),
            ("status", &self.status),
        ] {
            out.extend(vs.iter().map(|v| (k, v.clone())));
        }
        out
    }
}

/// The `nautobot:` block of an inventory file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// `http(s)://HOST[:PORT][/PATH]`, the API under `/api/`.
    pub url: String,
    /// The variable holding the API token (default `NAUTOBOT_TOKEN`).
    #[serde(default)]
    pub token_env: Option<String>,
    /// A file holding the API token (instead of `token_env`).
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    #[serde(default)]
    pub filter: Filter,
    /// A CA file (PEM) to check Nautobot's certificate with.
    #[serde(default)]
    pub tls_ca: Option<PathBuf>,
    /// `false`: no certificate check (labs only).
    #[serde(default = "yes")]
    pub tls_verify: bool,
    /// Seconds one request may take (default 30).
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Whether the VLANs Nautobot does not list for a device are left alone or removed.
    #[serde(default)]
    pub vlan_policy: VlanPolicy,
}

/// What a run does with a device's VLANs that Nautobot does not list for it.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum VlanPolicy {
    /// Left as they are.
    #[default]
    Merge,
    /// Removed (netdev's `vlan_policy: purge`; reserved VLANs never are).
    Purge,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourceFile {
    nautobot: SourceSpec,
}

/// Whether a parsed inventory document is a Nautobot source file (its only key is `nautobot` and
/// that holds a `url`; a hosts file with a host named `nautobot` has no `url` there).
pub(super) fn is_source_doc(doc: &Value) -> bool {
    doc.as_object()
        .is_some_and(|m| m.len() == 1 && m.get("nautobot").is_some_and(|n| n.get("url").is_some()))
}

/// The source a `nautobot+http(s)://...` argument names.
pub(super) fn spec_from_url(arg: &str) -> Result<Option<SourceSpec>, InventoryError> {
    let Some(rest) = arg.strip_prefix("nautobot+") else {
        return Ok(None);
    };
    let err = |m: String| super::file_err(Path::new(arg), m);
    let url = reqwest::Url::parse(rest).map_err(|e| err(format!("not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(err("must be nautobot+http:// or nautobot+https://".into()));
    }
    let mut filter = Filter::default();
    for (k, v) in url.query_pairs() {
        let list = match k.as_ref() {
            "location" => &mut filter.location,
            "role" => &mut filter.role,
            "tag" | "tags" => &mut filter.tags,
            "platform" => &mut filter.platform,
            "status" => &mut filter.status,
            other => {
                return Err(err(format!(
                    "unknown filter `{other}` (location, role, tags, platform, status)"
                )));
            }
        };
        list.push(v.into_owned());
    }
    let mut base = url.clone();
    base.set_query(None);
    Ok(Some(SourceSpec {
        url: base.to_string(),
        token_env: None,
        token_file: None,
        filter,
        tls_ca: None,
        tls_verify: true,
        timeout: None,
        vlan_policy: VlanPolicy::Merge,
    }))
}

/// The source of an inventory file's parsed document.
pub(super) fn spec_from_doc(path: &Path, doc: Value) -> Result<SourceSpec, InventoryError> {
    let f: SourceFile = super::from_doc(path, doc)?;
    Ok(f.nautobot)
}

/// Read the token (never shown: errors name where it was looked for).
fn token(spec: &SourceSpec, at: &Path) -> Result<Secret, InventoryError> {
    let err = |m: String| super::file_err(at, m);
    let reference = match (&spec.token_env, &spec.token_file) {
        (Some(_), Some(_)) => {
            return Err(err(
                "nautobot: give token_env or token_file, not both".into()
            ));
        }
        (None, Some(f)) => format!("file:{}", f.display()),
        (Some(v), None) => format!("${{{v}}}"),
        (None, None) => format!("${{{TOKEN_ENV}}}"),
    };
    let t = credentials::resolve(&reference).map_err(|e| err(format!("nautobot token: {e}")))?;
    if t.is_empty() {
        return Err(err("nautobot token is empty".into()));
    }
    Ok(t)
}

/// The client's settings: its token resolved, its timeout checked.
fn client_config(spec: &SourceSpec, at: &Path) -> Result<HttpConfig, InventoryError> {
    let token = token(spec, at)?;
    let mut cfg = HttpConfig::new(format!("nautobot {}", spec.url), spec.url.clone());
    cfg.auth = HttpAuth::Header {
        name: "Authorization".into(),
        value: Secret::new(format!("Token {}", token.expose())),
    };
    cfg.tls = match (&spec.tls_ca, spec.tls_verify) {
        (Some(ca), _) => TlsMode::CaFile(ca.clone()),
        (None, false) => TlsMode::Insecure,
        (None, true) => TlsMode::Verify,
    };
    if let Some(t) = spec.timeout {
        if !(t > 0.0 && t <= 3600.0) {
            return Err(super::file_err(
                at,
                "nautobot.timeout: seconds, 0 < s <= 3600",
            ));
        }
        cfg.request_timeout = Duration::from_secs_f64(t);
    }
    Ok(cfg)
}

/// The client of `cfg`, built on the runtime that uses it (its CA file read there).
async fn client(cfg: HttpConfig) -> Result<HttpClient, String> {
    HttpClient::new(cfg).await.map_err(|e| e.to_string())
}

/// Every object of a paginated listing: `path` (relative to the server's URL, with its query), then
/// each `next` the server gives, as long as it stays on the same server and base path.
async fn list(client: &HttpClient, base: &str, path: String) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut next = Some(path);
    for _ in 0..MAX_PAGES {
        let Some(path) = next.take() else {
            return Ok(out);
        };
        let page: Value = client.get_json(&path).await.map_err(|e| e.to_string())?;
        let results = page["results"]
            .as_array()
            .ok_or_else(|| format!("GET /{path}: no `results` list in the answer"))?;
        out.extend(results.iter().cloned());
        next = match page.get("next") {
            Some(Value::String(url)) => Some(
                url.strip_prefix(base)
                    .map(|p| p.trim_start_matches('/').to_owned())
                    .ok_or_else(|| format!("GET /{path}: `next` leads off the server: {url}"))?,
            ),
            _ => None,
        };
    }
    Err(format!("more than {MAX_PAGES} pages of {PAGE}"))
}

/// What Nautobot holds for the selected devices.
struct Fetched {
    devices: Vec<Value>,
    /// Secrets group id -> its associations (depth 1: each with its secret).
    secrets: BTreeMap<String, Vec<Value>>,
    intent: IntentObjects,
    /// Whether the intent owns the device's VLANs (`vlan_policy: purge`).
    purge_vlans: bool,
}

async fn fetch(spec: &SourceSpec, client: &HttpClient) -> Result<Fetched, String> {
    let base = spec.url.trim_end_matches('/').to_owned();
    let mut q = form_urlencoded::Serializer::new(String::new());
    q.append_pair("depth", "1");
    q.append_pair("include", "config_context");
    q.append_pair("limit", &PAGE.to_string());
    for (k, v) in spec.filter.params() {
        q.append_pair(k, &v);
    }
    let devices = list(client, &base, format!("api/dcim/devices/?{}", q.finish())).await?;
    let mut secrets = BTreeMap::new();
    for d in &devices {
        if let Some(id) = d["secrets_group"]["id"].as_str()
            && !secrets.contains_key(id)
        {
            let path = format!(
                "api/extras/secrets-groups-associations/?depth=1&limit={PAGE}&secrets_group={id}"
            );
            secrets.insert(id.to_owned(), list(client, &base, path).await?);
        }
    }
    let intent = fetch_intent(client, &base, &devices).await?;
    Ok(Fetched {
        devices,
        secrets,
        intent,
        purge_vlans: spec.vlan_policy == VlanPolicy::Purge,
    })
}

type Objects = BTreeMap<String, Vec<Value>>;

/// What Nautobot holds for the devices' intent.
#[derive(Default)]
struct IntentObjects {
    /// Device id -> its interfaces (depth 1: VLANs with their `vid`, the LAG with its id).
    interfaces: Objects,
    /// Location name -> the VLANs assigned to it.
    vlans: Objects,
    /// Device id -> the IP addresses on its interfaces (depth 1: with their interfaces).
    addresses: Objects,
    /// VLAN group name (as the devices' config contexts name it) -> the group (depth 1) and its
    /// VLANs; `None`: Nautobot has no group of that name.
    vlan_groups: BTreeMap<String, Option<(Value, Vec<Value>)>>,
    /// Location id -> its parent's id: the ancestry of the devices' locations, read when one of
    /// their VLAN groups has a location.
    parents: BTreeMap<String, Option<String>>,
}

/// The config-context key naming the VLAN groups whose VLANs a device carries.
pub const VLAN_GROUPS_KEY: &str = "netgw_vlan_groups";
/// Deepest location tree walked up from a device's location.
const MAX_LOCATION_DEPTH: usize = 32;

/// The VLAN group names a device's config context lists (strings only; the intent reports others).
fn group_names(d: &Value) -> Vec<&str> {
    d["config_context"][VLAN_GROUPS_KEY]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Each device's interfaces and addresses (one listing each per device), each of their locations'
/// VLANs, and the VLAN groups their config contexts name.
async fn fetch_intent(
    client: &HttpClient,
    base: &str,
    devices: &[Value],
) -> Result<IntentObjects, String> {
    let mut o = IntentObjects::default();
    for d in devices {
        if let Some(id) = d["id"].as_str() {
            let path = format!("api/dcim/interfaces/?depth=1&limit={PAGE}&device_id={id}");
            o.interfaces
                .insert(id.to_owned(), list(client, base, path).await?);
            let path = format!("api/ipam/ip-addresses/?depth=1&limit={PAGE}&device_id={id}");
            o.addresses
                .insert(id.to_owned(), list(client, base, path).await?);
        }
        if let Some(loc) = d["location"]["name"].as_str()
            && !o.vlans.contains_key(loc)
        {
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("location", loc);
            let path = format!("api/ipam/vlans/?depth=0&limit={PAGE}&{}", q.finish());
            o.vlans
                .insert(loc.to_owned(), list(client, base, path).await?);
        }
        fetch_groups(client, base, d, &mut o).await?;
    }
    Ok(o)
}

/// The VLAN groups `d`'s config context names (each once), and, when one has a location, the
/// ancestry of `d`'s location.
async fn fetch_groups(
    client: &HttpClient,
    base: &str,
    d: &Value,
    o: &mut IntentObjects,
) -> Result<(), String> {
    let mut located = false;
    for g in group_names(d) {
        if !o.vlan_groups.contains_key(g) {
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("name", g);
            let path = format!("api/ipam/vlan-groups/?depth=1&limit={PAGE}&{}", q.finish());
            let group = list(client, base, path).await?.into_iter().next();
            let found = match group {
                Some(group) => {
                    let id = group["id"].as_str().unwrap_or_default();
                    let path = format!("api/ipam/vlans/?depth=0&limit={PAGE}&vlan_group={id}");
                    Some((group.clone(), list(client, base, path).await?))
                }
                None => None,
            };
            o.vlan_groups.insert(g.to_owned(), found);
        }
        located |= o.vlan_groups[g]
            .as_ref()
            .is_some_and(|(group, _)| !group["location"].is_null());
    }
    let mut at = d["location"]["id"].as_str().map(str::to_owned);
    for _ in 0..MAX_LOCATION_DEPTH {
        let Some(id) = at
            .take()
            .filter(|id| located && !o.parents.contains_key(id))
        else {
            return Ok(());
        };
        let loc: Value = client
            .get_json(&format!("api/dcim/locations/{id}/?depth=0"))
            .await
            .map_err(|e| e.to_string())?;
        let parent = loc["parent"]["id"].as_str().map(str::to_owned);
        o.parents.insert(id, parent.clone());
        at = parent;
    }
    Ok(())
}

/// The hosts (with their groups) and, per host, where each value came from and what is wrong with it.
pub(super) struct Read {
    /// Host name -> Nautobot device id (where results are recorded).
    pub device_ids: BTreeMap<String, String>,
    /// Host name -> the id of its device's location (which VLAN changes affect it).
    pub location_ids: BTreeMap<String, String>,
    /// Host name -> the ids of the VLAN groups its config context names (which VLAN changes
    /// affect it).
    pub vlan_group_ids: BTreeMap<String, Vec<String>>,
    pub hosts: BTreeMap<String, Entry>,
    pub groups: BTreeMap<String, Entry>,
    pub origins: BTreeMap<String, BTreeMap<String, String>>,
    pub host_errors: BTreeMap<String, String>,
    /// Per host, Nautobot's intent as attributes (`netdev.vlans`, `netdev.links`, `netdev.lags`,
    /// `netdev.l3_interfaces`).
    pub intent: BTreeMap<String, Map<String, Value>>,
    pub warnings: Vec<String>,
}

/// The Nautobot an inventory came from: to read a host's current intent from, to tell which hosts a
/// change in it affects, and to record run results in.
#[derive(Debug, Clone)]
pub struct Results {
    spec: SourceSpec,
    at: PathBuf,
    device_ids: BTreeMap<String, String>,
    location_ids: BTreeMap<String, String>,
    vlan_group_ids: BTreeMap<String, Vec<String>>,
}

impl Results {
    pub(super) fn new(spec: SourceSpec, at: &Path, read: &Read) -> Results {
        Results {
            spec,
            at: at.to_owned(),
            device_ids: read.device_ids.clone(),
            location_ids: read.location_ids.clone(),
            vlan_group_ids: read.vlan_group_ids.clone(),
        }
    }

    /// Where the inventory came from, as errors and layers name it.
    pub fn source(&self) -> String {
        self.at.display().to_string()
    }

    /// `host`'s intent as Nautobot holds it now (its device, interfaces, location's VLANs and VLAN
    /// groups read again), with the warnings reading it gave. Errors name the device and Nautobot's field.
    pub fn intent_of(
        &self,
        host: &str,
    ) -> Result<(Map<String, Value>, Vec<String>), InventoryError> {
        let err = |m: String| super::file_err(&self.at, m);
        let id = self
            .device_ids
            .get(host)
            .ok_or_else(|| err(format!("{host} is no Nautobot device of this inventory")))?;
        let cfg = client_config(&self.spec, &self.at)?;
        let base = self.spec.url.trim_end_matches('/').to_owned();
        let fetched = on_own_runtime(|| async {
            let client = client(cfg).await?;
            let path = format!("api/dcim/devices/{id}/?depth=1&include=config_context");
            let device: Value = client.get_json(&path).await.map_err(|e| e.to_string())?;
            let devices = vec![device];
            let intent = fetch_intent(&client, &base, &devices).await?;
            Ok(Fetched {
                devices,
                secrets: BTreeMap::new(),
                intent,
                purge_vlans: self.spec.vlan_policy == VlanPolicy::Purge,
            })
        })
        .map_err(err)?;
        let mut warnings = Vec::new();
        let attrs = intent(&fetched.devices[0], host, &fetched, &mut warnings).map_err(err)?;
        Ok((attrs, warnings))
    }

    /// The hosts a change Nautobot's webhook describes (its JSON body) affects, and the change in
    /// words. A device: that device; an interface: its device; a VLAN: the devices of its locations
    /// and of its VLAN group (before and after the change) and those whose interfaces carry it
    /// (asked of Nautobot).
    pub fn affected(&self, event: &Value) -> Result<(Vec<String>, String), ChangeError> {
        let change = Change::of(event).map_err(ChangeError::Body)?;
        let mut hosts = self.hosts_of(&change.devices, &change.locations, &change.vlan_groups);
        if let Some(vlan) = &change.vlan {
            let carried = self.devices_carrying(vlan).map_err(ChangeError::Nautobot)?;
            for h in self.hosts_of(&carried, &[], &[]) {
                if !hosts.contains(&h) {
                    hosts.push(h);
                }
            }
        }
        Ok((hosts, change.what))
    }

    /// The hosts whose device is one of `devices`, whose location is one of `locations`, or whose
    /// config context names one of `groups`, in inventory order.
    fn hosts_of(&self, devices: &[String], locations: &[String], groups: &[String]) -> Vec<String> {
        self.device_ids
            .iter()
            .filter(|(host, id)| {
                devices.contains(id)
                    || self
                        .location_ids
                        .get(*host)
                        .is_some_and(|l| locations.contains(l))
                    || self
                        .vlan_group_ids
                        .get(*host)
                        .is_some_and(|gs| gs.iter().any(|g| groups.contains(g)))
            })
            .map(|(host, _)| host.clone())
            .collect()
    }

    /// The ids of the devices whose interfaces carry VLAN `id` (tagged or untagged).
    fn devices_carrying(&self, id: &str) -> Result<Vec<String>, String> {
        let cfg = client_config(&self.spec, &self.at).map_err(|e| e.to_string())?;
        let base = self.spec.url.trim_end_matches('/').to_owned();
        let mut q = form_urlencoded::Serializer::new(String::new());
        q.append_pair("vlan_id", id);
        let path = format!("api/dcim/interfaces/?depth=0&limit={PAGE}&{}", q.finish());
        let ifaces = on_own_runtime(|| async { list(&client(cfg).await?, &base, path).await })?;
        Ok(ifaces
            .iter()
            .filter_map(|i| i["device"]["id"].as_str().map(str::to_owned))
            .collect())
    }

    /// Record one note per host (`(host, text)`) on its Nautobot device: a Nautobot note (the
    /// device's Notes tab, kept with its time and the token's user), so the intent fields and their
    /// change log stay the operators'. Hosts without a device are skipped. Returns the first error.
    pub fn record(&self, notes: &[(String, String)]) -> Result<usize, InventoryError> {
        let cfg = client_config(&self.spec, &self.at)?;
        let bodies: Vec<Value> = notes
            .iter()
            .filter_map(|(host, text)| {
                let id = self.device_ids.get(host)?;
                Some(
                    json!({"assigned_object_type": "dcim.device", "assigned_object_id": id,
                            "note": text}),
                )
            })
            .collect();
        on_own_runtime(|| async {
            let client = client(cfg).await?;
            for b in &bodies {
                client
                    .post_json::<_, Value>("api/extras/notes/", b)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Ok(bodies.len())
        })
        .map_err(|m| super::file_err(&self.at, m))
    }
}

/// Why the hosts a webhook's change affects are not known.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// The body is not a change netgw maps to devices.
    #[error("the webhook body: {0}")]
    Body(String),
    /// Nautobot did not say which devices carry the changed VLAN.
    #[error("asking Nautobot which devices carry the VLAN: {0}")]
    Nautobot(String),
}

/// What a Nautobot webhook body says changed: the devices and locations it names, the VLAN (whose
/// carrying interfaces are asked of Nautobot), and the change in words.
#[derive(Debug, PartialEq)]
struct Change {
    devices: Vec<String>,
    locations: Vec<String>,
    vlan_groups: Vec<String>,
    vlan: Option<String>,
    what: String,
}

impl Change {
    /// Read a webhook body (Nautobot's default: `event`, `model`, `username`, `data`, `snapshots`).
    fn of(event: &Value) -> Result<Change, String> {
        let data = &event["data"];
        let id = |v: &Value| v["id"].as_str().map(str::to_owned);
        let object_type = data["object_type"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| event["model"].as_str().map(|m| format!("?.{m}")))
            .ok_or("no `data.object_type` nor `model`: not a Nautobot webhook body")?;
        let object_id = id(data).ok_or("no `data.id`: not a Nautobot webhook body")?;
        let mut c = Change {
            devices: Vec::new(),
            locations: Vec::new(),
            vlan_groups: Vec::new(),
            vlan: None,
            what: format!(
                "{object_type} {} {} by {}",
                data["display"]
                    .as_str()
                    .or(data["name"].as_str())
                    .unwrap_or(&object_id),
                event["event"].as_str().unwrap_or("changed"),
                event["username"].as_str().unwrap_or("?")
            ),
        };
        match object_type.rsplit('.').next() {
            Some("device") => c.devices.push(object_id),
            Some("interface") => {
                // The device before the change too: an interface moved to another device.
                for snap in [data, &event["snapshots"]["prechange"]] {
                    if let Some(d) = id(&snap["device"]).filter(|d| !c.devices.contains(d)) {
                        c.devices.push(d);
                    }
                }
            }
            // An address: the devices of its interfaces.
            Some("ipaddress") => {
                for snap in [data, &event["snapshots"]["prechange"]] {
                    for i in snap["interfaces"].as_array().into_iter().flatten() {
                        if let Some(d) = id(&i["device"]).filter(|d| !c.devices.contains(d)) {
                            c.devices.push(d);
                        }
                    }
                }
            }
            Some("vlan") => {
                for snap in [data, &event["snapshots"]["prechange"]] {
                    for l in snap["locations"].as_array().into_iter().flatten() {
                        if let Some(l) = id(l).filter(|l| !c.locations.contains(l)) {
                            c.locations.push(l);
                        }
                    }
                    if let Some(g) = id(&snap["vlan_group"]).filter(|g| !c.vlan_groups.contains(g))
                    {
                        c.vlan_groups.push(g);
                    }
                }
                c.vlan = Some(object_id);
            }
            _ => {
                return Err(format!(
                    "{object_type}: netgw maps dcim.device, dcim.interface, ipam.vlan and ipam.ipaddress \
                     changes to devices (select only those in the webhook)"
                ));
            }
        }
        Ok(c)
    }
}

/// Run `fut` on a runtime of its own, on a thread of its own: callable from sync code and from a
/// blocking task of an async one.
fn on_own_runtime<T: Send, F: std::future::Future<Output = Result<T, String>>>(
    make: impl FnOnce() -> F + Send,
) -> Result<T, String> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("starting a runtime: {e}"))?;
            rt.block_on(make())
        })
        .join()
        .unwrap_or_else(|_| Err("the Nautobot client panicked".into()))
    })
}

/// Read the devices `spec` selects. `at` names the source in errors. Runs its own runtime on a thread
/// of its own, so it is callable from sync code and from a blocking task of an async one.
pub(super) fn read(spec: &SourceSpec, at: &Path) -> Result<Read, InventoryError> {
    let cfg = client_config(spec, at)?;
    let fetched = on_own_runtime(|| async { fetch(spec, &client(cfg).await?).await })
        .map_err(|m| super::file_err(at, m))?;
    Ok(build(&fetched))
}

fn build(f: &Fetched) -> Read {
    let mut r = Read {
        device_ids: BTreeMap::new(),
        location_ids: BTreeMap::new(),
        vlan_group_ids: BTreeMap::new(),
        hosts: BTreeMap::new(),
        groups: BTreeMap::new(),
        origins: BTreeMap::new(),
        host_errors: BTreeMap::new(),
        intent: BTreeMap::new(),
        warnings: Vec::new(),
    };
    for d in &f.devices {
        let name = d["name"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| d["id"].as_str().unwrap_or_default().to_owned());
        let mut origins = BTreeMap::new();
        if let Some(id) = d["id"].as_str() {
            r.device_ids.insert(name.clone(), id.to_owned());
        }
        if let Some(id) = d["location"]["id"].as_str() {
            r.location_ids.insert(name.clone(), id.to_owned());
        }
        let group_ids: Vec<String> = group_names(d)
            .into_iter()
            .filter_map(|g| f.intent.vlan_groups.get(g)?.as_ref())
            .filter_map(|(group, _)| group["id"].as_str().map(str::to_owned))
            .collect();
        r.vlan_group_ids.insert(name.clone(), group_ids);
        let (entry, problem) = host(d, &name, f, &mut origins);
        if let Some(message) = problem {
            r.host_errors.insert(name.clone(), message);
        }
        match intent(d, &name, f, &mut r.warnings) {
            Ok(attrs) => {
                r.intent.insert(name.clone(), attrs);
            }
            Err(m) => {
                let e = r.host_errors.entry(name.clone()).or_default();
                *e = if e.is_empty() { m } else { format!("{e}; {m}") };
            }
        }
        for g in &entry.groups {
            r.groups.entry(g.clone()).or_default();
        }
        r.origins.insert(name.clone(), origins);
        r.hosts.insert(name, entry);
    }
    r
}

/// A group name from a Nautobot name: characters a selection term treats specially become `_`.
pub fn group_name(prefix: &str, name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .collect();
    format!("{prefix}_{clean}")
}

/// The groups of a device: `location_L`, `role_R`, `tag_T` (each tag), `platform_P` (the platform's
/// name).
fn groups_of(d: &Value) -> Vec<String> {
    let mut g = Vec::new();
    for (prefix, field) in [("location", "location"), ("role", "role")] {
        if let Some(n) = d[field]["name"].as_str() {
            g.push(group_name(prefix, n));
        }
    }
    for t in d["tags"].as_array().into_iter().flatten() {
        if let Some(n) = t["name"].as_str() {
            g.push(group_name("tag", n));
        }
    }
    if let Some(n) = d["platform"]["name"].as_str() {
        g.push(group_name("platform", n));
    }
    g
}

/// A host, and what is wrong with it when something is.
type HostResult = (Entry, Option<String>);

/// One device as a host. A device whose own fields are unusable still becomes a host (it fails alone
/// when a run opens it), with the error naming the device and Nautobot's field.
fn host(d: &Value, name: &str, f: &Fetched, origins: &mut BTreeMap<String, String>) -> HostResult {
    let at = |field: &str| format!("nautobot device {name} field {field}");
    let mut e = Entry {
        groups: groups_of(d),
        ..Entry::default()
    };
    let mut problems = Vec::new();
    match primary_address(d) {
        Some((addr, field)) => {
            e.hostname = Some(addr);
            origins.insert("hostname".into(), at(field));
        }
        None => problems.push(format!(
            "{} is empty: netgw needs a management address",
            at("primary_ip4")
        )),
    }
    match d["platform"]["network_driver"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        Some(driver) => {
            e.platform = Some(driver.to_owned());
            let p = d["platform"]["name"].as_str().unwrap_or_default();
            origins.insert(
                "platform".into(),
                format!("{} ({p}).network_driver", at("platform")),
            );
            if let Some(m) = unmapped(driver) {
                problems.push(format!(
                    "{} ({p}).network_driver {driver:?}: {m}",
                    at("platform")
                ));
            }
        }
        None if d["platform"].is_null() => problems.push(format!("{} is empty", at("platform"))),
        None => problems.push(format!(
            "{} ({}) has no network_driver",
            at("platform"),
            d["platform"]["name"].as_str().unwrap_or_default()
        )),
    }
    match &d["custom_fields"][PORT_FIELD] {
        Value::Null => {}
        v => match v
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .filter(|p| *p > 0)
        {
            Some(p) => {
                e.port = Some(p);
                origins.insert(
                    "port".into(),
                    format!("nautobot device {name} custom field {PORT_FIELD}"),
                );
            }
            None => problems.push(format!(
                "nautobot device {name} custom field {PORT_FIELD}: {v} is not a port"
            )),
        },
    }
    if let Some(ctx) = d["config_context"].as_object() {
        e.data = ctx.clone();
        for k in ctx.keys() {
            origins.insert(format!("data.{k}"), at("config_context"));
        }
    }
    if let Err(m) = credentials_of(d, name, f, &mut e, origins) {
        problems.push(m);
    }
    let problem = (!problems.is_empty()).then(|| problems.join("; "));
    (e, problem)
}

/// The primary IP's address without its prefix length, IPv4 first (as `nornir_nautobot`).
fn primary_address(d: &Value) -> Option<(String, &'static str)> {
    for field in ["primary_ip4", "primary_ip6"] {
        if let Some(a) = d[field]["address"].as_str() {
            return Some((a.split('/').next().unwrap_or(a).to_owned(), field));
        }
    }
    None
}

/// Why netgw cannot drive a `network_driver`, if it cannot.
fn unmapped(driver: &str) -> Option<String> {
    use netgw_drivers::driver::Platform;
    match Platform::parse(driver) {
        Some(p) if netgw_drivers::registry::has_driver(p) => None,
        Some(p) => Some(format!("netgw has no {p} driver")),
        None => Some(
            "no netgw driver for it (netgw drives cisco_ios, cisco_xe, cisco_nxos, arista_eos, \
             juniper_junos, bigip_f5 / f5_tmsh)"
                .into(),
        ),
    }
}

/// The device's secrets group: username (resolved now: it is no secret), password and enable secret
/// (kept as references, resolved when a run opens the device). Per secret type, the `Generic`
/// access type's secret, else the first by access type.
fn credentials_of(
    d: &Value,
    name: &str,
    f: &Fetched,
    e: &mut Entry,
    origins: &mut BTreeMap<String, String>,
) -> Result<(), String> {
    let Some(id) = d["secrets_group"]["id"].as_str() else {
        return Ok(());
    };
    let group = d["secrets_group"]["name"].as_str().unwrap_or(id);
    let assoc = f.secrets.get(id).map(Vec::as_slice).unwrap_or_default();
    let pick = |secret_type: &str| {
        let mut of_type: Vec<&Value> = assoc
            .iter()
            .filter(|a| a["secret_type"] == secret_type)
            .collect();
        of_type.sort_by_key(|a| (a["access_type"] != "Generic", a["access_type"].to_string()));
        of_type.first().map(|a| &a["secret"])
    };
    let mut netgw = Map::new();
    for secret_type in ["username", "password", "secret"] {
        let Some(secret) = pick(secret_type) else {
            continue;
        };
        let sname = secret["name"].as_str().unwrap_or_default();
        let where_ = format!("nautobot device {name} secrets group {group} secret {sname}");
        let reference = reference(secret).map_err(|m| format!("{where_}: {m}"))?;
        match secret_type {
            "username" => {
                let u = credentials::resolve(&reference).map_err(|e| format!("{where_}: {e}"))?;
                e.username = Some(u.expose().to_owned());
                origins.insert("username".into(), where_);
            }
            "password" => {
                e.password = Some(reference);
                origins.insert("password".into(), where_);
            }
            _ => {
                netgw.insert("enable_secret".into(), Value::String(reference));
                origins.insert("data.netgw.enable_secret".into(), where_);
            }
        }
    }
    if !netgw.is_empty() {
        let slot = e.data.entry("netgw").or_insert_with(|| json!({}));
        match slot.as_object_mut() {
            Some(m) => m.extend(netgw),
            None => {
                return Err(format!(
                    "nautobot device {name} field config_context: `netgw` must be a mapping"
                ));
            }
        }
    }
    Ok(())
}

/// A secret as a credential reference: the environment-variable and text-file providers, as a
/// Nautobot worker would read them.
fn reference(secret: &Value) -> Result<String, String> {
    let provider = secret["provider"].as_str().unwrap_or_default();
    let param = |k: &str| {
        secret["parameters"][k]
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("provider {provider} without parameter `{k}`"))
    };
    match provider {
        "environment-variable" => Ok(format!("${{{}}}", param("variable")?)),
        "text-file" => Ok(format!("file:{}", param("path")?)),
        other => Err(format!(
            "provider {other:?} is not read by netgw (environment-variable and text-file are)"
        )),
    }
}

/// A device's intent from Nautobot as netgw attributes: `netdev.vlans` (the VLANs of its location,
/// of the VLAN groups its config context names, and any its interfaces carry), `netdev.links`
/// (every interface but management-only ones and LAGs), `netdev.lags` (each LAG with its members)
/// and `netdev.l3_interfaces`. Errors name the device, the interface and the field Nautobot holds
/// wrongly.
fn intent(
    d: &Value,
    name: &str,
    f: &Fetched,
    warnings: &mut Vec<String>,
) -> Result<Map<String, Value>, String> {
    let mut vlans = device_vlans(d, name, f)?;
    let ifaces: Vec<&Value> = d["id"]
        .as_str()
        .and_then(|id| f.intent.interfaces.get(id))
        .into_iter()
        .flatten()
        .filter(|i| i["mgmt_only"] != true)
        .collect();
    let mut links = Map::new();
    let mut lags = Map::new();
    for i in &ifaces {
        let iname = i["name"].as_str().unwrap_or_default();
        let at = |m: String| format!("nautobot device {name} interface {iname} {m}");
        for (field, v) in std::iter::once(("untagged_vlan", &i["untagged_vlan"])).chain(
            i["tagged_vlans"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| ("tagged_vlans", v)),
        ) {
            if !v.is_null() {
                vlans.add(v, &format!("interface {iname} field {field}"), name)?;
            }
        }
        let mut link = link(i).map_err(at)?;
        if i["type"]["value"] == "lag" {
            let lag = lag(i, link, &ifaces).map_err(at)?;
            if lag["links"].as_array().is_some_and(Vec::is_empty) {
                warnings.push(format!(
                    "nautobot device {name} interface {iname}: a LAG without members (no interface \
                     names it as its lag); netgw declares it with none"
                ));
            }
            lags.insert(iname.to_owned(), Value::Object(lag));
            continue;
        }
        if !i["lag"].is_null() {
            follow_lag(i, &mut link, &ifaces).map_err(at)?;
        }
        links.insert(iname.to_owned(), Value::Object(link));
    }
    let mut routable = links.clone();
    routable.extend(lags.clone());
    let l3 = l3_interfaces(d, name, f, &routable)?;
    let mut netdev = Map::new();
    let vlans = vlans.into_map();
    if f.purge_vlans || !vlans.is_empty() {
        netdev.insert("vlans".into(), Value::Object(vlans));
    }
    if f.purge_vlans {
        netdev.insert("vlan_policy".into(), Value::from("purge"));
    }
    for (key, map) in [("links", links), ("lags", lags), ("l3_interfaces", l3)] {
        if !map.is_empty() {
            netdev.insert(key.into(), Value::Object(map));
        }
    }
    let mut out = Map::new();
    if !netdev.is_empty() {
        out.insert("netdev".into(), Value::Object(netdev));
    }
    Ok(out)
}

/// The VLANs a device's location and the VLAN groups its config context names hold. A named group
/// Nautobot lacks, or one whose location is neither the device's nor one of its ancestors, is an
/// error naming the device, the group and the field.
fn device_vlans(d: &Value, name: &str, f: &Fetched) -> Result<VlanIntent, String> {
    let mut vlans = VlanIntent::default();
    let loc = d["location"]["name"].as_str().unwrap_or_default();
    for v in f.intent.vlans.get(loc).into_iter().flatten() {
        vlans.add(v, &format!("location {loc}"), name)?;
    }
    let field = format!("nautobot device {name} field config_context.{VLAN_GROUPS_KEY}");
    let named = &d["config_context"][VLAN_GROUPS_KEY];
    let all_strings = named
        .as_array()
        .is_some_and(|a| a.iter().all(Value::is_string));
    if !named.is_null() && !all_strings {
        return Err(format!(
            "{field}: {named} is not a list of VLAN group names"
        ));
    }
    for g in group_names(d) {
        let Some(Some((group, members))) = f.intent.vlan_groups.get(g) else {
            return Err(format!("{field}: Nautobot has no VLAN group named {g:?}"));
        };
        if let Some(gloc) = group["location"]["id"].as_str()
            && !location_line(d, f).contains(&gloc)
        {
            return Err(format!(
                "{field}: VLAN group {g} belongs to location {}, which is not the device's \
                 location {loc} nor one of its parents",
                group["location"]["name"].as_str().unwrap_or(gloc)
            ));
        }
        for v in members {
            vlans.add(v, &format!("VLAN group {g}"), name)?;
        }
    }
    Ok(vlans)
}

/// The device's location and its ancestors' ids (as far as they were read).
fn location_line<'a>(d: &'a Value, f: &'a Fetched) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = d["location"]["id"].as_str();
    while let Some(id) = at.filter(|id| !out.contains(id) && out.len() <= MAX_LOCATION_DEPTH) {
        out.push(id);
        at = f.intent.parents.get(id).and_then(Option::as_deref);
    }
    out
}

/// The VLANs of a device's intent, each with its name and where it came from, so that two sources
/// naming one VID differently are an error naming both.
#[derive(Default)]
struct VlanIntent(BTreeMap<u64, (String, String)>);

impl VlanIntent {
    fn add(&mut self, v: &Value, source: &str, device: &str) -> Result<(), String> {
        let Some(vid) = v["vid"].as_u64() else {
            return Ok(());
        };
        let vname = v["name"].as_str().unwrap_or_default();
        match self.0.get(&vid) {
            Some((n, first)) if n != vname => Err(format!(
                "nautobot device {device}: VLAN {vid} is {n:?} in {first} and {vname:?} in \
                 {source}; a VID has one name on a device: rename one of them or take it out \
                 of one source"
            )),
            Some(_) => Ok(()),
            None => {
                self.0.insert(vid, (vname.to_owned(), source.to_owned()));
                Ok(())
            }
        }
    }

    /// As `netdev.vlans`: `VID: {name: NAME}`.
    fn into_map(self) -> Map<String, Value> {
        self.0
            .into_iter()
            .map(|(vid, (n, _))| {
                let mut props = Map::new();
                if !n.is_empty() {
                    props.insert("name".into(), Value::from(n));
                }
                (vid.to_string(), Value::Object(props))
            })
            .collect()
    }
}

/// The interface custom field holding a LAG's LACP mode (`active`, `passive`, `on`).
pub const LACP_FIELD: &str = "netgw_lacp";
/// The switchport settings a LAG's members take from it.
const SWITCHPORT: [&str; 4] = ["mode", "access_vlan", "trunk_vlans", "native_vlan"];

/// A LAG interface as a `netdev.lags` entry: its members (the interfaces whose `lag` is it), the
/// LACP mode from the custom field `netgw_lacp` (`active` when empty), and its own link settings.
fn lag(
    i: &Value,
    mut l: Map<String, Value>,
    ifaces: &[&Value],
) -> Result<Map<String, Value>, String> {
    let members: Vec<Value> = ifaces
        .iter()
        .filter(|m| !i["id"].is_null() && m["lag"]["id"] == i["id"])
        .filter_map(|m| m["name"].as_str().map(Value::from))
        .collect();
    let lacp = match &i["custom_fields"][LACP_FIELD] {
        Value::Null => "active",
        Value::String(s) if matches!(s.as_str(), "active" | "passive" | "on") => s.as_str(),
        v => {
            return Err(format!(
                "custom field {LACP_FIELD}: {v} is not active, passive or on"
            ));
        }
    };
    l.insert("links".into(), Value::Array(members));
    l.insert("lacp".into(), Value::from(lacp));
    Ok(l)
}

/// A LAG member's link: its switchport settings are its LAG's. The same as the LAG's are dropped
/// (the aggregate carries them); others are an error naming the member, its LAG and both settings.
fn follow_lag(i: &Value, member: &mut Map<String, Value>, ifaces: &[&Value]) -> Result<(), String> {
    let lag_id = &i["lag"]["id"];
    let Some(parent) = ifaces.iter().find(|p| p["id"] == *lag_id) else {
        return Err(format!(
            "field lag: LAG {} is no interface of this device",
            i["lag"]["name"].as_str().or(lag_id.as_str()).unwrap_or("?")
        ));
    };
    let pname = parent["name"].as_str().unwrap_or_default();
    let own: Map<String, Value> = SWITCHPORT
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), member.get(*k)?.clone())))
        .collect();
    if own.is_empty() {
        return Ok(());
    }
    let theirs: Map<String, Value> = match link(parent) {
        Ok(l) => SWITCHPORT
            .iter()
            .filter_map(|k| Some(((*k).to_owned(), l.get(*k)?.clone())))
            .collect(),
        Err(_) => Map::new(),
    };
    if own != theirs {
        let show = |m: &Map<String, Value>| {
            if m.is_empty() {
                "none".to_owned()
            } else {
                m.iter()
                    .map(|(k, v)| {
                        format!("{k} {}", v.as_str().map_or(v.to_string(), str::to_owned))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        return Err(format!(
            "field mode: a member of LAG {pname} with VLAN settings of its own ({}) that differ \
             from interface {pname}'s ({}); a member follows its LAG: clear the member's mode and \
             VLANs or make them the LAG's",
            show(&own),
            show(&theirs)
        ));
    }
    for k in SWITCHPORT {
        member.remove(k);
    }
    Ok(())
}

/// The IP addresses Nautobot assigns to the device's interfaces, as `netdev.l3_interfaces`
/// (`NAME: {ipv4: [..], ipv6: [..]}`: the port becomes routed). Only interfaces among `links` carry
/// theirs (management-only and LAG interfaces are left alone); an address on a switched interface
/// (`access`, `tagged`) is an error naming the interface, the field and the address.
fn l3_interfaces(
    d: &Value,
    name: &str,
    f: &Fetched,
    links: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let dev = d["id"].as_str().unwrap_or_default();
    let mut l3 = Map::new();
    for ip in f.intent.addresses.get(dev).into_iter().flatten() {
        let Some(addr) = ip["address"].as_str() else {
            continue;
        };
        let on_device = ip["interfaces"].as_array().into_iter().flatten();
        for i in on_device.filter(|i| i["device"]["id"] == dev) {
            let iname = i["name"].as_str().unwrap_or_default();
            let Some(link) = links.get(iname) else {
                continue;
            };
            if let Some(mode) = link.get("mode") {
                return Err(format!(
                    "nautobot device {name} interface {iname} field mode: a switched interface \
                     ({mode}) carries IP address {addr}; clear the mode to route the port"
                ));
            }
            let family = if addr.contains(':') { "ipv6" } else { "ipv4" };
            let entry = l3.entry(iname.to_owned()).or_insert_with(|| json!({}));
            let list = entry[family].as_array_mut();
            match list {
                Some(list) => list.push(Value::from(addr)),
                None => entry[family] = json!([addr]),
            }
        }
    }
    Ok(l3)
}

/// One interface as a `netdev.links` entry: description (when set), enabled, mtu (when set), and the
/// 802.1Q mode: `access` with its untagged VLAN, `tagged` as a trunk of its tagged VLANs with the
/// untagged one native, `tagged-all` as a trunk of every VLAN.
fn link(i: &Value) -> Result<Map<String, Value>, String> {
    let mut l = Map::new();
    if let Some(desc) = i["description"].as_str().filter(|s| !s.is_empty()) {
        l.insert("description".into(), Value::from(desc));
    }
    if let Some(en) = i["enabled"].as_bool() {
        l.insert("enabled".into(), Value::from(en));
    }
    if let Some(mtu) = i["mtu"].as_u64() {
        l.insert("mtu".into(), Value::from(mtu));
    }
    let untagged = i["untagged_vlan"]["vid"].as_u64();
    let tagged: Vec<String> = i["tagged_vlans"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["vid"].as_u64())
        .map(|v| v.to_string())
        .collect();
    match i["mode"]["value"].as_str() {
        None | Some("") => {
            if untagged.is_some() || !tagged.is_empty() {
                return Err("field mode: empty, yet it carries VLANs (untagged_vlan / tagged_vlans need a mode)".into());
            }
        }
        Some("access") => {
            if !tagged.is_empty() {
                return Err(
                    "field tagged_vlans: an access interface carries no tagged VLANs".into(),
                );
            }
            l.insert("mode".into(), Value::from("access"));
            if let Some(u) = untagged {
                l.insert("access_vlan".into(), Value::from(u));
            }
        }
        Some(m @ ("tagged" | "tagged-all")) => {
            l.insert("mode".into(), Value::from("trunk"));
            let trunk = if m == "tagged-all" {
                "1-4094".to_owned()
            } else {
                tagged.join(",")
            };
            if !trunk.is_empty() {
                l.insert("trunk_vlans".into(), Value::from(trunk));
            }
            if let Some(u) = untagged {
                l.insert("native_vlan".into(), Value::from(u));
            }
        }
        Some(other) => {
            return Err(format!(
                "field mode: {other:?} is not access, tagged or tagged-all"
            ));
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_form_takes_nautobots_filters_and_refuses_others() {
        let s = spec_from_url(
            "nautobot+https://nb.example:8443/x/?location=a&tag=t&tags=u&platform=p&platform=q",
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.url, "https://nb.example:8443/x/");
        assert_eq!(s.filter.location, ["a"]);
        assert_eq!(s.filter.tags, ["t", "u"]);
        assert_eq!(
            s.filter.params(),
            [
                ("location", "a".to_owned()),
                ("tags", "t".to_owned()),
                ("tags", "u".to_owned()),
                ("platform", "p".to_owned()),
                ("platform", "q".to_owned())
            ]
        );
        assert!(spec_from_url("inventory.yml").unwrap().is_none());
        let e = spec_from_url("nautobot+https://h/?colour=red")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown filter `colour`"), "{e}");
        let e = spec_from_url("nautobot+ftp://h/").unwrap_err().to_string();
        assert!(e.contains("nautobot+https://"), "{e}");
    }

    fn results(hosts: &[(&str, &str, &str)]) -> Results {
        let mut read = build(&fetched(device(json!(null)), vec![]));
        read.device_ids.clear();
        read.location_ids.clear();
        for (host, id, loc) in hosts {
            read.device_ids.insert((*host).into(), (*id).into());
            read.location_ids.insert((*host).into(), (*loc).into());
        }
        let spec = spec_from_url("nautobot+http://127.0.0.1:9/")
            .unwrap()
            .unwrap();
        Results::new(spec, Path::new("nb"), &read)
    }

    #[test]
    fn a_webhook_change_names_the_devices_and_locations_it_affects() {
        let iface = json!({"event": "updated", "model": "interface", "username": "alice",
            "data": {"id": "i1", "object_type": "dcim.interface", "display": "Ethernet1",
                     "device": {"id": "d2"}},
            "snapshots": {"prechange": {"device": {"id": "d1"}}}});
        let c = Change::of(&iface).unwrap();
        assert_eq!(c.devices, ["d2", "d1"], "the device before a move too");
        assert_eq!(c.what, "dcim.interface Ethernet1 updated by alice");
        let vlan = json!({"event": "deleted", "model": "vlan",
            "data": {"id": "v1", "object_type": "ipam.vlan", "locations": [{"id": "l2"}]},
            "snapshots": {"prechange": {"locations": [{"id": "l1"}, {"id": "l2"}]}}});
        let c = Change::of(&vlan).unwrap();
        assert_eq!(
            (c.locations, c.vlan),
            (vec!["l2".into(), "l1".into()], Some("v1".into()))
        );
        let ip = json!({"model": "ipaddress", "data": {"id": "a1", "object_type": "ipam.ipaddress",
            "interfaces": [{"device": {"id": "d4"}}, {"device": {"id": "d5"}}]}});
        assert_eq!(Change::of(&ip).unwrap().devices, ["d4", "d5"]);
        let device = json!({"model": "device", "data": {"id": "d3", "object_type": "dcim.device"}});
        assert_eq!(Change::of(&device).unwrap().devices, ["d3"]);
        let other =
            json!({"model": "circuit", "data": {"id": "c1", "object_type": "circuits.circuit"}});
        assert!(Change::of(&other).unwrap_err().contains("circuits.circuit"));
        assert!(Change::of(&json!({"data": {}})).is_err());

        let r = results(&[
            ("sw1", "d1", "l1"),
            ("sw2", "d2", "l2"),
            ("sw3", "d3", "l3"),
        ]);
        assert_eq!(
            r.hosts_of(&["d3".into()], &["l1".into()], &[]),
            ["sw1", "sw3"]
        );
        assert!(r.hosts_of(&["d9".into()], &[], &[]).is_empty());
        let grouped = json!({"model": "vlan", "data": {"id": "v2", "object_type": "ipam.vlan",
            "locations": [], "vlan_group": {"id": "g2"}},
            "snapshots": {"prechange": {"vlan_group": null}}});
        let c = Change::of(&grouped).unwrap();
        assert_eq!(c.vlan_groups, ["g2"]);
        let mut r = r;
        r.vlan_group_ids.insert("sw2".into(), vec!["g2".into()]);
        assert_eq!(r.hosts_of(&[], &[], &c.vlan_groups), ["sw2"]);
    }

    #[test]
    fn addresses_on_an_interface_route_it_and_a_switched_one_with_addresses_is_an_error() {
        let mut f = fetched(device(json!(null)), vec![]);
        let on = |iface: &str, dev: &str| json!({"name": iface, "device": {"id": dev}});
        f.intent.addresses.insert(
            "d1".into(),
            vec![
                json!({"address": "10.0.4.1/24", "interfaces": [on("Ethernet4", "d1"), on("Ethernet9", "d2")]}),
                json!({"address": "2001:db8::1/64", "interfaces": [on("Ethernet4", "d1")]}),
                json!({"address": "127.0.0.1/32", "interfaces": [on("mgmt0", "d1")]}),
            ],
        );
        let mut links = Map::new();
        links.insert("Ethernet4".into(), json!({"enabled": true}));
        let l3 = l3_interfaces(&f.devices[0], "sw1", &f, &links).unwrap();
        assert_eq!(
            Value::Object(l3),
            json!({"Ethernet4": {"ipv4": ["10.0.4.1/24"], "ipv6": ["2001:db8::1/64"]}}),
            "management-only and other devices' interfaces carry none"
        );
        links.insert("Ethernet4".into(), json!({"mode": "access"}));
        let e = l3_interfaces(&f.devices[0], "sw1", &f, &links).unwrap_err();
        assert!(
            e.contains("nautobot device sw1 interface Ethernet4 field mode")
                && e.contains("10.0.4.1/24"),
            "{e}"
        );
    }

    #[test]
    fn interfaces_become_links_by_mode() {
        let vlan = |v: u64| json!({"vid": v, "name": format!("v{v}")});
        let access = json!({"description": "desk", "enabled": true, "mtu": 1500,
            "mode": {"value": "access"}, "untagged_vlan": vlan(10), "tagged_vlans": []});
        assert_eq!(
            Value::Object(link(&access).unwrap()),
            json!({"description": "desk", "enabled": true, "mtu": 1500, "mode": "access", "access_vlan": 10})
        );
        let tagged = json!({"description": "", "enabled": false, "mtu": null,
            "mode": {"value": "tagged"}, "untagged_vlan": vlan(10), "tagged_vlans": [vlan(20), vlan(30)]});
        assert_eq!(
            Value::Object(link(&tagged).unwrap()),
            json!({"enabled": false, "mode": "trunk", "trunk_vlans": "20,30", "native_vlan": 10})
        );
        let all = json!({"enabled": true, "mode": {"value": "tagged-all"}, "untagged_vlan": null, "tagged_vlans": []});
        assert_eq!(link(&all).unwrap()["trunk_vlans"], "1-4094");
        let no_mode =
            json!({"enabled": true, "mode": null, "untagged_vlan": vlan(10), "tagged_vlans": []});
        assert!(link(&no_mode).unwrap_err().contains("field mode"));
        let access_tagged = json!({"enabled": true, "mode": {"value": "access"}, "untagged_vlan": null,
            "tagged_vlans": [vlan(20)]});
        assert!(
            link(&access_tagged)
                .unwrap_err()
                .contains("field tagged_vlans")
        );
    }

    fn fetched(device: Value, assoc: Vec<Value>) -> Fetched {
        let mut secrets = BTreeMap::new();
        secrets.insert("g1".to_owned(), assoc);
        Fetched {
            devices: vec![device],
            secrets,
            intent: IntentObjects::default(),
            purge_vlans: false,
        }
    }

    fn device(platform: Value) -> Value {
        json!({"id": "d1", "name": "sw1", "location": {"name": "bldg a"}, "role": {"name": "access"},
               "tags": [{"name": "lab"}], "platform": platform,
               "primary_ip4": {"address": "192.0.2.7/24"}, "custom_fields": {"netgw_port": 2222},
               "secrets_group": {"id": "g1", "name": "creds"},
               "config_context": {"ntp": ["192.0.2.1"]}})
    }

    fn secret(secret_type: &str, access: &str, provider: &str, params: Value) -> Value {
        json!({"secret_type": secret_type, "access_type": access,
               "secret": {"name": format!("s-{secret_type}"), "provider": provider, "parameters": params}})
    }

    #[test]
    fn a_device_becomes_a_host_with_references_for_its_secrets() {
        let f = fetched(
            device(json!({"name": "eos", "network_driver": "arista_eos"})),
            vec![
                secret("password", "SSH", "text-file", json!({"path": "/ignored"})),
                secret(
                    "password",
                    "Generic",
                    "environment-variable",
                    json!({"variable": "SW_PASS"}),
                ),
                secret(
                    "secret",
                    "Generic",
                    "text-file",
                    json!({"path": "/run/enable"}),
                ),
            ],
        );
        let r = build(&f);
        assert!(r.host_errors.is_empty(), "{:?}", r.host_errors);
        let h = &r.hosts["sw1"];
        assert_eq!(h.hostname.as_deref(), Some("192.0.2.7"));
        assert_eq!(h.port, Some(2222));
        assert_eq!(h.platform.as_deref(), Some("arista_eos"));
        assert_eq!(h.password.as_deref(), Some("${SW_PASS}"));
        assert_eq!(h.data["netgw"]["enable_secret"], "file:/run/enable");
        assert_eq!(
            h.groups,
            ["location_bldg_a", "role_access", "tag_lab", "platform_eos"]
        );
        assert_eq!(
            r.origins["sw1"]["password"],
            "nautobot device sw1 secrets group creds secret s-password"
        );
        assert!(r.groups.contains_key("location_bldg_a"));
    }

    #[test]
    fn wrong_fields_fail_the_device_naming_the_field() {
        let mut d = device(json!({"name": "xr", "network_driver": "cisco_xr"}));
        d["primary_ip4"] = Value::Null;
        d["custom_fields"]["netgw_port"] = json!(70000);
        let f = fetched(
            d,
            vec![secret(
                "password",
                "Generic",
                "hashicorp-vault",
                json!({"path": "x"}),
            )],
        );
        let e = &build(&f).host_errors["sw1"];
        for want in [
            "nautobot device sw1 field primary_ip4 is empty",
            "field platform (xr).network_driver \"cisco_xr\": no netgw driver",
            "custom field netgw_port: 70000 is not a port",
            "secrets group creds secret s-password: provider \"hashicorp-vault\" is not read",
        ] {
            assert!(e.contains(want), "{want:?} in {e}");
        }
        let f = fetched(device(json!({"name": "bare"})), vec![]);
        assert!(build(&f).host_errors["sw1"].contains("platform (bare) has no network_driver"));
    }

    fn iface(id: &str, name: &str, extra: Value) -> Value {
        let mut i = json!({"id": id, "name": name, "enabled": true, "type": {"value": "1000base-t"},
            "mode": null, "untagged_vlan": null, "tagged_vlans": [], "lag": null});
        for (k, v) in extra.as_object().unwrap() {
            i[k] = v.clone();
        }
        i
    }

    fn with_ifaces(ifaces: Vec<Value>) -> Fetched {
        let mut f = fetched(device(json!(null)), vec![]);
        f.intent.interfaces.insert("d1".into(), ifaces);
        f
    }

    #[test]
    fn a_lag_takes_its_members_and_lacp_mode_and_members_follow_it() {
        let v = |vid: u64| json!({"vid": vid, "name": format!("v{vid}")});
        let po = iface(
            "i10",
            "Port-Channel10",
            json!({"type": {"value": "lag"}, "description": "to dist", "mode": {"value": "tagged"},
                   "tagged_vlans": [v(310), v(320)], "custom_fields": {"netgw_lacp": "passive"}}),
        );
        let member = |id: &str, name: &str, extra: Value| {
            let mut m = iface(id, name, extra);
            m["lag"] = json!({"id": "i10", "name": "Port-Channel10"});
            m
        };
        let agreeing = json!({"mode": {"value": "tagged"}, "tagged_vlans": [v(310), v(320)]});
        let f = with_ifaces(vec![
            po.clone(),
            member("i5", "Ethernet5", json!({"description": "m1"})),
            member("i6", "Ethernet6", agreeing),
        ]);
        let mut warnings = Vec::new();
        let got = intent(&f.devices[0], "sw1", &f, &mut warnings).unwrap();
        assert_eq!(
            got["netdev"]["lags"],
            json!({"Port-Channel10": {"description": "to dist", "enabled": true, "mode": "trunk",
                   "trunk_vlans": "310,320", "links": ["Ethernet5", "Ethernet6"], "lacp": "passive"}})
        );
        assert_eq!(
            got["netdev"]["links"],
            json!({"Ethernet5": {"description": "m1", "enabled": true},
                   "Ethernet6": {"enabled": true}}),
            "members carry no switchport settings of their own"
        );
        assert_eq!(
            got["netdev"]["vlans"],
            json!({"310": {"name": "v310"}, "320": {"name": "v320"}})
        );
        assert!(warnings.is_empty(), "{warnings:?}");

        let f = with_ifaces(vec![
            po.clone(),
            member(
                "i5",
                "Ethernet5",
                json!({"mode": {"value": "access"}, "untagged_vlan": v(310)}),
            ),
        ]);
        let e = intent(&f.devices[0], "sw1", &f, &mut warnings).unwrap_err();
        for want in [
            "nautobot device sw1 interface Ethernet5 field mode",
            "member of LAG Port-Channel10",
            "(mode access, access_vlan 310)",
            "interface Port-Channel10's (mode trunk, trunk_vlans 310,320)",
        ] {
            assert!(e.contains(want), "{want:?} in {e}");
        }
        let mut bad = po.clone();
        bad["custom_fields"]["netgw_lacp"] = json!("fast");
        let f = with_ifaces(vec![bad]);
        let e = intent(&f.devices[0], "sw1", &f, &mut warnings).unwrap_err();
        assert!(e.contains("custom field netgw_lacp: \"fast\""), "{e}");
        let mut default = po;
        default["custom_fields"] = json!({});
        let f = with_ifaces(vec![default]);
        let got = intent(&f.devices[0], "sw1", &f, &mut warnings).unwrap();
        assert_eq!(got["netdev"]["lags"]["Port-Channel10"]["lacp"], "active");
        assert!(
            warnings[0].contains("a LAG without members"),
            "{warnings:?}"
        );
    }

    #[test]
    fn vlan_groups_named_in_the_config_context_add_their_vlans_and_conflicts_name_both() {
        let mut d = device(json!(null));
        d["location"] = json!({"id": "l-a", "name": "bldg a"});
        d["config_context"][VLAN_GROUPS_KEY] = json!(["servers"]);
        let mut f = fetched(d, vec![]);
        f.intent
            .vlans
            .insert("bldg a".into(), vec![json!({"vid": 110, "name": "users"})]);
        f.intent.parents.insert("l-a".into(), Some("campus".into()));
        f.intent.parents.insert("campus".into(), None);
        let group = json!({"id": "g1", "name": "servers", "location": {"id": "campus", "name": "campus-1"}});
        f.intent.vlan_groups.insert(
            "servers".into(),
            Some((group.clone(), vec![json!({"vid": 310, "name": "app"})])),
        );
        let got = intent(&f.devices[0], "sw1", &f, &mut Vec::new()).unwrap();
        assert_eq!(
            got["netdev"]["vlans"],
            json!({"110": {"name": "users"}, "310": {"name": "app"}}),
            "a group at an ancestor of the device's location"
        );
        assert_eq!(build(&f).vlan_group_ids["sw1"], ["g1"]);

        let clash = vec![json!({"vid": 110, "name": "staff"})];
        f.intent
            .vlan_groups
            .insert("servers".into(), Some((group, clash)));
        let e = intent(&f.devices[0], "sw1", &f, &mut Vec::new()).unwrap_err();
        assert!(
            e.contains(
                "nautobot device sw1: VLAN 110 is \"users\" in location bldg a and \"staff\" in VLAN group servers"
            ),
            "{e}"
        );
        let elsewhere =
            json!({"id": "g1", "name": "servers", "location": {"id": "l-b", "name": "bldg b"}});
        f.intent
            .vlan_groups
            .insert("servers".into(), Some((elsewhere, vec![])));
        let e = intent(&f.devices[0], "sw1", &f, &mut Vec::new()).unwrap_err();
        assert!(
            e.contains(
                "config_context.netgw_vlan_groups: VLAN group servers belongs to location bldg b"
            ),
            "{e}"
        );
        f.intent.vlan_groups.insert("servers".into(), None);
        let e = intent(&f.devices[0], "sw1", &f, &mut Vec::new()).unwrap_err();
        assert!(e.contains("no VLAN group named \"servers\""), "{e}");
        f.devices[0]["config_context"][VLAN_GROUPS_KEY] = json!("servers");
        let e = intent(&f.devices[0], "sw1", &f, &mut Vec::new()).unwrap_err();
        assert!(e.contains("is not a list of VLAN group names"), "{e}");
    }

    #[test]
    fn purge_owns_the_vlans_even_when_nautobot_lists_none() {
        let mut f = fetched(device(json!(null)), vec![]);
        f.purge_vlans = true;
        let got = intent(&f.devices[0], "sw1", &f, &mut Vec::new()).unwrap();
        assert_eq!(got["netdev"], json!({"vlans": {}, "vlan_policy": "purge"}));
    }
}
