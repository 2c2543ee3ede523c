//! Chef's node, role and environment objects, read and written in Chef's JSON, and the RFC 45 split of
//! a node into desired state (what the operator imposes) and current state (what a run found).
//!
//! Unknown top-level fields are kept (`extra`) so that a node read from a server and written back loses
//! nothing netgw does not model.

use crate::name::{NodeName, validate_environment_name, validate_role_name};
use crate::runlist::RunList;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An attribute tree: a JSON object, key order preserved.
pub type Attrs = serde_json::Map<String, Value>;

pub const DEFAULT_ENVIRONMENT: &str = "_default";

fn default_env() -> String {
    DEFAULT_ENVIRONMENT.to_owned()
}
fn node_class() -> String {
    "Chef::Node".to_owned()
}
fn node_type() -> String {
    "node".to_owned()
}
fn role_class() -> String {
    "Chef::Role".to_owned()
}
fn role_type() -> String {
    "role".to_owned()
}
fn env_class() -> String {
    "Chef::Environment".to_owned()
}
fn env_type() -> String {
    "environment".to_owned()
}

/// A Chef node object (`GET /nodes/NAME`, `nodes/NAME.json` in a repo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub name: NodeName,
    #[serde(default = "default_env")]
    pub chef_environment: String,
    #[serde(default = "node_class")]
    pub json_class: String,
    #[serde(default = "node_type")]
    pub chef_type: String,
    #[serde(default)]
    pub run_list: RunList,
    #[serde(default)]
    pub normal: Attrs,
    #[serde(default)]
    pub default: Attrs,
    #[serde(default, rename = "override")]
    pub override_: Attrs,
    #[serde(default)]
    pub automatic: Attrs,
    #[serde(flatten)]
    pub extra: Attrs,
}

/// RFC 45 desired state: what the operator imposes. Tags live in `normal.tags`. A Policyfile node
/// names its policy and group instead of a run-list (`crate::policy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesiredState {
    pub name: NodeName,
    #[serde(default = "default_env")]
    pub chef_environment: String,
    #[serde(default)]
    pub run_list: RunList,
    #[serde(default)]
    pub normal: Attrs,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_group: Option<String>,
}

/// RFC 45 current state: what a run found and computed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurrentState {
    pub name: NodeName,
    #[serde(default)]
    pub default: Attrs,
    #[serde(default, rename = "override")]
    pub override_: Attrs,
    #[serde(default)]
    pub automatic: Attrs,
}

impl Node {
    pub fn new(name: NodeName) -> Self {
        Node {
            name,
            chef_environment: default_env(),
            json_class: node_class(),
            chef_type: node_type(),
            run_list: RunList::new(),
            normal: Attrs::new(),
            default: Attrs::new(),
            override_: Attrs::new(),
            automatic: Attrs::new(),
            extra: Attrs::new(),
        }
    }

    /// Parse a node from Chef JSON, validating its name, environment and run-list.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let node: Node = serde_json::from_str(text)?;
        validate_environment_name(&node.chef_environment).map_err(serde::de::Error::custom)?;
        Ok(node)
    }

    pub fn from_parts(desired: DesiredState, current: Option<CurrentState>) -> Self {
        let mut node = Node::new(desired.name);
        node.chef_environment = desired.chef_environment;
        node.run_list = desired.run_list;
        node.normal = desired.normal;
        for (key, value) in [
            ("policy_name", desired.policy_name),
            ("policy_group", desired.policy_group),
        ] {
            if let Some(v) = value {
                node.extra.insert(key.to_owned(), Value::String(v));
            }
        }
        if let Some(c) = current {
            node.default = c.default;
            node.override_ = c.override_;
            node.automatic = c.automatic;
        }
        node
    }

    pub fn desired(&self) -> DesiredState {
        DesiredState {
            name: self.name.clone(),
            chef_environment: self.chef_environment.clone(),
            run_list: self.run_list.clone(),
            normal: self.normal.clone(),
            policy_name: self.extra_str("policy_name"),
            policy_group: self.extra_str("policy_group"),
        }
    }

    /// A top-level string field netgw keeps unmodelled (`policy_name` is `null` on most servers' nodes).
    fn extra_str(&self, key: &str) -> Option<String> {
        self.extra
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    pub fn current(&self) -> CurrentState {
        CurrentState {
            name: self.name.clone(),
            default: self.default.clone(),
            override_: self.override_.clone(),
            automatic: self.automatic.clone(),
        }
    }

    /// Replace the current-state part, keeping the desired part (and unknown fields) as they are.
    pub fn set_current(&mut self, current: CurrentState) {
        self.default = current.default;
        self.override_ = current.override_;
        self.automatic = current.automatic;
    }

    /// Tags (`normal.tags`), as Chef keeps them.
    pub fn tags(&self) -> Vec<String> {
        tags_of(&self.normal)
    }
}

impl DesiredState {
    pub fn new(name: NodeName) -> Self {
        DesiredState {
            name,
            chef_environment: default_env(),
            run_list: RunList::new(),
            normal: Attrs::new(),
            policy_name: None,
            policy_group: None,
        }
    }

    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let d: DesiredState = serde_json::from_str(text)?;
        validate_environment_name(&d.chef_environment).map_err(serde::de::Error::custom)?;
        Ok(d)
    }

    pub fn tags(&self) -> Vec<String> {
        tags_of(&self.normal)
    }
}

impl CurrentState {
    pub fn new(name: NodeName) -> Self {
        CurrentState {
            name,
            default: Attrs::new(),
            override_: Attrs::new(),
            automatic: Attrs::new(),
        }
    }
}

fn tags_of(normal: &Attrs) -> Vec<String> {
    match normal.get("tags") {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// A Chef role (`roles/NAME.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Role {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "role_class")]
    pub json_class: String,
    #[serde(default = "role_type")]
    pub chef_type: String,
    #[serde(default)]
    pub default_attributes: Attrs,
    #[serde(default)]
    pub override_attributes: Attrs,
    #[serde(default)]
    pub run_list: RunList,
    #[serde(default)]
    pub env_run_lists: EnvRunLists,
    #[serde(flatten)]
    pub extra: Attrs,
}

/// A role's per-environment run-lists, in file order. A key whose value is `null` counts as absent
/// (Chef's `env_run_lists[env].nil?` check); a key with an empty list is present.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvRunLists(pub Vec<(String, Option<RunList>)>);

impl Serialize for EnvRunLists {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for EnvRunLists {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::<String, Value>::deserialize(d)?;
        let mut out = Vec::with_capacity(map.len());
        for (env, v) in map {
            let rl = match v {
                Value::Null => None,
                Value::Array(items) => {
                    let mut strs = Vec::with_capacity(items.len());
                    for i in &items {
                        match i.as_str() {
                            Some(s) => strs.push(s),
                            None => {
                                return Err(serde::de::Error::custom(format!(
                                    "env_run_lists.{env}: every item must be a string, found {i}"
                                )));
                            }
                        }
                    }
                    Some(RunList::parse(&strs).map_err(|e| {
                        serde::de::Error::custom(format!("env_run_lists.{env}: {e}"))
                    })?)
                }
                other => {
                    return Err(serde::de::Error::custom(format!(
                        "env_run_lists.{env}: must be a list of run-list items, found {other}"
                    )));
                }
            };
            out.push((env, rl));
        }
        Ok(EnvRunLists(out))
    }
}

impl Role {
    /// Parse a role from JSON, validating its name and every run-list (including `env_run_lists`).
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let role: Role = serde_json::from_str(text)?;
        validate_role_name(&role.name).map_err(serde::de::Error::custom)?;
        Ok(role)
    }

    /// Chef's `Role#run_list_for(environment)`: the environment's run-list when the key is present
    /// with a list (even an empty one), the role's `run_list` otherwise.
    pub fn run_list_for(&self, environment: &str) -> &RunList {
        self.env_run_lists
            .0
            .iter()
            .find_map(|(env, rl)| {
                if env == environment {
                    rl.as_ref()
                } else {
                    None
                }
            })
            .unwrap_or(&self.run_list)
    }
}

/// A Chef environment (`environments/NAME.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "env_class")]
    pub json_class: String,
    #[serde(default = "env_type")]
    pub chef_type: String,
    #[serde(default)]
    pub default_attributes: Attrs,
    #[serde(default)]
    pub override_attributes: Attrs,
    #[serde(default)]
    pub cookbook_versions: serde_json::Map<String, Value>,
    #[serde(flatten)]
    pub extra: Attrs,
}

impl Environment {
    /// The implicit `_default` environment every Chef server has.
    pub fn default_environment() -> Self {
        Environment {
            name: DEFAULT_ENVIRONMENT.to_owned(),
            description: "The default Chef environment".to_owned(),
            json_class: env_class(),
            chef_type: env_type(),
            default_attributes: Attrs::new(),
            override_attributes: Attrs::new(),
            cookbook_versions: Default::default(),
            extra: Attrs::new(),
        }
    }

    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let env: Environment = serde_json::from_str(text)?;
        validate_environment_name(&env.name).map_err(serde::de::Error::custom)?;
        Ok(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CHEF_NODE: &str = r#"{
      "name": "leaf1",
      "chef_environment": "prod",
      "json_class": "Chef::Node",
      "automatic": {"hostname": "leaf1"},
      "normal": {"tags": ["fabric", "leaf"], "netdev": {"vlans": {"100": {"name": "web"}}}},
      "chef_type": "node",
      "default": {"a": 1},
      "override": {"b": 2},
      "run_list": ["role[leaf]", "recipe[netdev::vlans]"],
      "policy_name": null
    }"#;

    #[test]
    fn node_round_trips_chef_json_exactly() {
        let node = Node::from_json(CHEF_NODE).unwrap();
        assert_eq!(node.name.as_str(), "leaf1");
        assert_eq!(node.tags(), ["fabric", "leaf"]);
        let back = serde_json::to_value(&node).unwrap();
        let orig: Value = serde_json::from_str(CHEF_NODE).unwrap();
        assert_eq!(back, orig, "every field survives, unknown ones included");
    }

    #[test]
    fn node_defaults_match_chef() {
        let node = Node::from_json(r#"{"name":"sw1"}"#).unwrap();
        let v = serde_json::to_value(&node).unwrap();
        assert_eq!(v["chef_environment"], "_default");
        assert_eq!(v["json_class"], "Chef::Node");
        assert_eq!(v["chef_type"], "node");
        assert_eq!(v["run_list"], json!([]));
        assert_eq!(v["override"], json!({}));
    }

    #[test]
    fn bad_nodes_are_clear_errors() {
        let e = Node::from_json(r#"{"name":"sw 1"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid node name \"sw 1\""), "{e}");
        let e = Node::from_json(r#"{"name":"sw1","run_list":["role[a"]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("role[a"), "{e}");
        let e = Node::from_json(r#"{"name":"sw1","chef_environment":"pr/od"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("pr/od"), "{e}");
        assert!(Node::from_json(r#"{"name":"sw1","normal":[]}"#).is_err());
    }

    #[test]
    fn rfc45_split_and_join() {
        let node = Node::from_json(CHEF_NODE).unwrap();
        let d = serde_json::to_value(node.desired()).unwrap();
        assert_eq!(
            d,
            json!({"name":"leaf1","chef_environment":"prod","run_list":["role[leaf]","recipe[netdev::vlans]"],
                   "normal":{"tags":["fabric","leaf"],"netdev":{"vlans":{"100":{"name":"web"}}}}})
        );
        let c = serde_json::to_value(node.current()).unwrap();
        assert_eq!(
            c,
            json!({"name":"leaf1","default":{"a":1},"override":{"b":2},"automatic":{"hostname":"leaf1"}})
        );
        let joined = Node::from_parts(node.desired(), Some(node.current()));
        assert_eq!(joined.desired(), node.desired());
        assert_eq!(joined.current(), node.current());
    }

    #[test]
    fn role_and_environment_json() {
        let r = Role::from_json(
            r#"{"name":"leaf","description":"d","json_class":"Chef::Role","chef_type":"role",
                "default_attributes":{"x":1},"override_attributes":{},
                "run_list":["recipe[a]"],"env_run_lists":{"prod":["recipe[b]"],"lab":[]}}"#,
        )
        .unwrap();
        assert_eq!(r.run_list_for("prod").items()[0].name, "b");
        assert!(r.run_list_for("lab").is_empty());
        assert_eq!(r.run_list_for("other").items()[0].name, "a");
        let e = Role::from_json(r#"{"name":"leaf","env_run_lists":{"prod":["role[x"]}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("env_run_lists.prod"), "{e}");
        assert!(Role::from_json(r#"{"name":"le af"}"#).is_err());

        let env = Environment::from_json(
            r#"{"name":"prod","default_attributes":{"a":1},"override_attributes":{},"cookbook_versions":{"netdev":"= 1.0.0"}}"#,
        )
        .unwrap();
        let v = serde_json::to_value(&env).unwrap();
        assert_eq!(v["json_class"], "Chef::Environment");
        assert_eq!(v["cookbook_versions"]["netdev"], "= 1.0.0");
    }
}
