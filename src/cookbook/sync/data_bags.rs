//! Data bags from the Chef server, for recipes' `data_bag` and `data_bag_item` when the run's
//! cookbooks come from the server: read as chef-client reads them (`Chef::DataBag.load`,
//! `Chef::DataBagItem.load`), on demand when a recipe calls, with signed `GET /data/BAG` (the item
//! names) and `GET /data/BAG/ITEM` (the item).
//!
//! On demand rather than a copy made before evaluation: a bag or item name is often computed
//! (`data_bag_item('vlans', node.name)`), so the names written literally in recipes do not say what
//! a run reads, and copying every bag the server lists would fetch, and put on disk, secrets no
//! recipe of the run reads. The evaluator is synchronous and runs on a blocking thread
//! (`spawn_blocking` in `crate::resolve`), so it waits there for each request, sent on the runtime.
//! Answers stay in memory for the run only (each listing or item fetched once per run, however many
//! nodes read it), bounded in count and size; values are never written to disk or logged.

use crate::store::chef::ChefServer;
use crate::store::local::MAX_FILE_BYTES;
use reqwest::Method;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::runtime::Handle;

/// Distinct listings and items one run may fetch.
pub const MAX_FETCHES: usize = 10_000;

/// One answer: the bag's listing or the item (`None`: the server has no such bag or item), or why it
/// could not be read.
type Answer = Result<Option<Value>, String>;

/// The data bags of one run's Chef server.
pub struct ServerDataBags {
    server: ChefServer,
    timeout: Duration,
    answers: Mutex<HashMap<String, Answer>>,
}

impl std::fmt::Debug for ServerDataBags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerDataBags")
            .field("server", &self.server.api().base())
            .finish_non_exhaustive()
    }
}

impl ServerDataBags {
    pub fn new(server: ChefServer, timeout: Duration) -> Self {
        ServerDataBags {
            server,
            timeout,
            answers: Mutex::default(),
        }
    }

    /// Where a bag or item is read from, for messages.
    pub fn url(&self, bag: &str, item: Option<&str>) -> String {
        format!("{}{}", self.server.api().base(), path(bag, item))
    }

    /// The bag's listing (`{ITEM: URL}`) or the item as the server stores it; `Ok(None)` when the
    /// server has no such bag or item. Names must already be Chef's data bag names (never a path).
    /// The request is sent on `runtime`, which this call waits for: never call it from async code
    /// (recipes are evaluated on threads of their own).
    pub fn get(&self, runtime: &Handle, bag: &str, item: Option<&str>) -> Answer {
        let key = path(bag, item);
        {
            let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(a) = answers.get(&key) {
                return a.clone();
            }
            if answers.len() >= MAX_FETCHES {
                return Err(format!(
                    "this run already read {MAX_FETCHES} data bags and items from {}, the most one \
                     run may read; not read",
                    self.server.api().base()
                ));
            }
        }
        let answer = self.fetch(runtime, &key);
        self.answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, answer.clone());
        answer
    }

    fn fetch(&self, runtime: &Handle, key: &str) -> Answer {
        let api = self.server.api();
        let url = format!("{}{key}", api.base());
        let resp = runtime
            .block_on(async {
                let get = api.request(Method::GET, key, &[], None, None);
                tokio::time::timeout(self.timeout, get).await
            })
            .map_err(|_| format!("GET {url}: no answer within {:?}", self.timeout))?
            .map_err(|e| e.to_string())?;
        if resp.status == 404 {
            return Ok(None);
        }
        let resp = resp.ok().map_err(|e| e.to_string())?;
        if resp.body.len() as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "GET {url}: {} bytes, larger than the {MAX_FILE_BYTES}-byte limit of a data bag \
                 item",
                resp.body.len()
            ));
        }
        resp.json().map(Some).map_err(|e| e.to_string())
    }
}

/// The API path of a bag (`/data/BAG`) or an item (`/data/BAG/ITEM`).
fn path(bag: &str, item: Option<&str>) -> String {
    match item {
        Some(item) => format!("/data/{bag}/{item}"),
        None => format!("/data/{bag}"),
    }
}

/// An item as the server returned it, as `Chef::DataBagItem.from_hash` reads it: its `raw_data`
/// when wrapped, without the `chef_type`, `json_class` and `data_bag` the server may add.
pub fn item_data(stored: Value) -> Value {
    let Value::Object(mut m) = stored else {
        return stored;
    };
    for k in ["chef_type", "json_class", "data_bag"] {
        m.remove(k);
    }
    match m.remove("raw_data") {
        Some(raw) => raw,
        None => Value::Object(m),
    }
}

/// The item names of a bag listing (`{ITEM: URL}`), sorted; `None` when it is not such a listing.
pub fn item_names(listing: &Value) -> Option<Vec<Value>> {
    let m = listing.as_object()?;
    let mut names: Vec<&String> = m.keys().collect();
    names.sort();
    Some(names.into_iter().map(|k| Value::from(k.as_str())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_are_read_as_chef_reads_them() {
        let wrapped = json!({"name": "data_bag_item_vlans_sw1", "json_class": "Chef::DataBagItem",
            "chef_type": "data_bag_item", "data_bag": "vlans", "raw_data": {"id": "sw1", "v": [10]}});
        assert_eq!(item_data(wrapped), json!({"id": "sw1", "v": [10]}));
        let plain = json!({"id": "sw1", "chef_type": "data_bag_item", "data_bag": "vlans", "v": 1});
        assert_eq!(item_data(plain), json!({"id": "sw1", "v": 1}));
        let listing = json!({"b": "http://x/data/v/b", "a": "http://x/data/v/a"});
        assert_eq!(item_names(&listing), Some(vec![json!("a"), json!("b")]));
        assert_eq!(item_names(&json!([1])), None);
    }
}
