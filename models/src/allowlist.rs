//! Attribute allowlists ("whitelists" in older Chef documentation): which attributes of each type are
//! saved with the node (chef/chef `lib/chef/attribute_allowlist.rb`).
//!
//! An entry is a `/`-separated path (`network/interfaces/eth0`; a leading or trailing `/` is ignored),
//! or an array of keys for keys that contain `/` (`["filesystem", "/dev/diskos2"]`). No list saves
//! everything of that type; an empty list saves nothing. Entries naming attributes that do not exist
//! are skipped.

use crate::error::ModelError;
use crate::node::Attrs;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One allowlist entry, as a path of keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowEntry(pub Vec<String>);

impl AllowEntry {
    /// Parse the string form: `a/b/c`. Empty segments between slashes are kept as Chef keeps them,
    /// except a leading one (`/a/b`) and trailing ones (`a/b/`), which Ruby's `split` drops.
    pub fn parse(s: &str) -> Result<Self, ModelError> {
        let mut parts: Vec<String> = s.split('/').map(str::to_owned).collect();
        while parts.last().is_some_and(String::is_empty) {
            parts.pop();
        }
        if parts.first().is_some_and(String::is_empty) {
            parts.remove(0);
        }
        if parts.is_empty() {
            return Err(ModelError::InvalidAllowlist {
                entry: s.into(),
                reason: "names no attribute",
            });
        }
        Ok(AllowEntry(parts))
    }

    pub fn from_value(v: &Value) -> Result<Self, ModelError> {
        match v {
            Value::String(s) => AllowEntry::parse(s),
            Value::Array(items) => {
                let keys: Option<Vec<String>> = items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect();
                match keys {
                    Some(k) if !k.is_empty() => Ok(AllowEntry(k)),
                    _ => Err(ModelError::InvalidAllowlist {
                        entry: v.to_string(),
                        reason: "an array entry must be a non-empty list of strings",
                    }),
                }
            }
            _ => Err(ModelError::InvalidAllowlist {
                entry: v.to_string(),
                reason: "must be a string or an array",
            }),
        }
    }
}

impl<'de> Deserialize<'de> for AllowEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        AllowEntry::from_value(&v).map_err(serde::de::Error::custom)
    }
}

impl Serialize for AllowEntry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.iter().any(|k| k.contains('/') || k.is_empty()) {
            self.0.serialize(s)
        } else {
            s.serialize_str(&self.0.join("/"))
        }
    }
}

/// Keep only the allowlisted attributes of `data`. `None` keeps everything.
pub fn filter(data: &Attrs, allowlist: Option<&[AllowEntry]>) -> Attrs {
    let Some(list) = allowlist else {
        return data.clone();
    };
    let mut out = Attrs::new();
    for entry in list {
        add(data, &mut out, &entry.0);
    }
    out
}

/// [`filter`] of a map the caller is done with: with no allowlist it is kept as it is, not copied
/// (a node's automatic attributes, saved once per run).
pub fn filter_owned(data: Attrs, allowlist: Option<&[AllowEntry]>) -> Attrs {
    match allowlist {
        None => data,
        Some(_) => filter(&data, allowlist),
    }
}

fn add(data: &Attrs, out: &mut Attrs, path: &[String]) {
    // Find the value first, so a missing path leaves no empty hashes behind.
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = data;
    for p in parents {
        match cur.get(p) {
            Some(Value::Object(m)) => cur = m,
            _ => return,
        }
    }
    let Some(value) = cur.get(last) else {
        return;
    };
    let mut dst = out;
    for p in parents {
        let slot = dst
            .entry(p.clone())
            .or_insert_with(|| Value::Object(Attrs::new()));
        if !slot.is_object() {
            *slot = Value::Object(Attrs::new());
        }
        dst = match slot {
            Value::Object(m) => m,
            _ => return,
        };
    }
    dst.insert(last.clone(), value.clone());
}

/// The four per-type allowlists Chef has (`automatic_attribute_allowlist` and friends).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowlists {
    #[serde(default)]
    pub automatic: Option<Vec<AllowEntry>>,
    #[serde(default)]
    pub default: Option<Vec<AllowEntry>>,
    #[serde(default)]
    pub normal: Option<Vec<AllowEntry>>,
    #[serde(default, rename = "override")]
    pub override_: Option<Vec<AllowEntry>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Attrs {
        v.as_object().cloned().unwrap()
    }

    fn entries(v: Value) -> Vec<AllowEntry> {
        serde_json::from_value(v).unwrap()
    }

    fn ohai() -> Attrs {
        obj(json!({
            "network": {"interfaces": {"eth0": {"mtu": 1500}, "lo": {"mtu": 65536}}, "default_gateway": "10.0.0.1"},
            "filesystem": {"/dev/diskos2": {"size": "10G"}, "/dev/sda1": {"size": "1G"}},
            "hostname": "sw1",
            "enabled": false
        }))
    }

    #[test]
    fn no_list_saves_all_and_empty_list_saves_nothing() {
        assert_eq!(filter(&ohai(), None), ohai());
        assert_eq!(filter(&ohai(), Some(&[])), Attrs::new());
    }

    #[test]
    fn network_interfaces_with_trailing_slash() {
        let f = filter(&ohai(), Some(&entries(json!(["network/interfaces/"]))));
        assert_eq!(
            Value::Object(f),
            json!({"network": {"interfaces": {"eth0": {"mtu": 1500}, "lo": {"mtu": 65536}}}})
        );
    }

    #[test]
    fn array_entry_for_keys_with_slashes() {
        let f = filter(
            &ohai(),
            Some(&entries(json!([["filesystem", "/dev/diskos2"]]))),
        );
        assert_eq!(
            Value::Object(f),
            json!({"filesystem": {"/dev/diskos2": {"size": "10G"}}})
        );
    }

    #[test]
    fn several_entries_false_values_and_missing_paths() {
        let f = filter(
            &ohai(),
            Some(&entries(json!([
                "network/interfaces/eth0",
                "hostname",
                "enabled",
                "nope/deeper",
                "/network/default_gateway"
            ]))),
        );
        assert_eq!(
            Value::Object(f),
            json!({"network": {"interfaces": {"eth0": {"mtu": 1500}}, "default_gateway": "10.0.0.1"},
                   "hostname": "sw1", "enabled": false})
        );
    }

    #[test]
    fn bad_entries_are_errors() {
        assert!(AllowEntry::parse("/").is_err());
        assert!(serde_json::from_value::<Vec<AllowEntry>>(json!([1])).is_err());
        assert!(serde_json::from_value::<Vec<AllowEntry>>(json!([[]])).is_err());
        assert!(serde_json::from_value::<Allowlists>(json!({"automatc": []})).is_err());
        let a: Allowlists =
            serde_json::from_value(json!({"automatic": ["a/b"], "normal": []})).unwrap();
        assert_eq!(
            a.automatic.unwrap()[0],
            AllowEntry(vec!["a".into(), "b".into()])
        );
        assert_eq!(a.normal, Some(vec![]));
        assert_eq!(a.default, None);
    }
}
