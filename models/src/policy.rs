//! Chef Policyfiles: the lock document `chef install` writes (`Policyfile.lock.json`; chef-cli's
//! `PolicyfileLock#to_lock`) and the policy group that names which revision of each policy its nodes
//! run (chef-zero's `policy_groups/GROUP.json`).
//!
//! A Policyfile node takes its run-list and cookbook versions from its policy, never from roles or
//! its environment, and the policy's attributes at role precedence (chef/chef
//! `lib/chef/policy_builder/policyfile.rb`: `apply_policyfile_attributes`, which also hoists the
//! policy group's own sub-hash, `hoist_policyfile_attributes`).

use crate::attributes::hash_only_merge;
use crate::error::ModelError;
use crate::node::Attrs;
use crate::runlist::{ItemKind, RunList};
use serde::Deserialize;
use std::collections::BTreeMap;

/// One locked cookbook: the version the policy was solved with.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CookbookLock {
    pub version: String,
    /// Content hash chef-cli computed; kept to name it in errors.
    #[serde(default)]
    pub identifier: Option<String>,
}

/// A policy revision, as locked.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyLock {
    pub name: String,
    pub revision_id: String,
    pub run_list: RunList,
    pub cookbook_locks: BTreeMap<String, CookbookLock>,
    pub default_attributes: Attrs,
    pub override_attributes: Attrs,
}

/// The lock file's keys, as chef-cli writes them (`to_lock`), plus what a server adds. Named run-lists
/// are chosen by chef-client's `--named-run-list`, which a gateway run has no equivalent of; included
/// policies are already merged into the lock by chef-cli; the solution is chef-cli's record of how
/// it solved. They are read so a typo in any key is refused, and not used.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct LockFile {
    name: String,
    revision_id: String,
    run_list: Vec<String>,
    #[serde(default)]
    named_run_lists: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    included_policy_locks: Vec<serde_json::Value>,
    cookbook_locks: BTreeMap<String, CookbookLock>,
    #[serde(default)]
    default_attributes: Attrs,
    #[serde(default)]
    override_attributes: Attrs,
    #[serde(default)]
    solution_dependencies: serde_json::Value,
    #[serde(default)]
    policy_group_list: Vec<String>,
}

fn invalid(context: &str, field: &str, reason: impl Into<String>) -> ModelError {
    ModelError::InvalidField {
        context: context.to_owned(),
        field: field.to_owned(),
        reason: reason.into(),
    }
}

impl PolicyLock {
    /// Parse a lock document; `context` names it in errors (its file or URL). As Chef's
    /// `validate_policyfile`: a run-list of recipes only, each from a locked cookbook.
    pub fn from_json(context: &str, text: &str) -> Result<PolicyLock, ModelError> {
        let f: LockFile = serde_json::from_str(text)
            .map_err(|e| invalid(context, "(document)", e.to_string()))?;
        let run_list =
            RunList::parse(&f.run_list).map_err(|e| invalid(context, "run_list", e.to_string()))?;
        for item in run_list.items() {
            if item.kind == ItemKind::Role {
                return Err(invalid(
                    context,
                    "run_list",
                    format!(
                        "role[{}]: a policy's run-list holds recipes only",
                        item.name
                    ),
                ));
            }
            let cookbook = item.name.split("::").next().unwrap_or_default();
            if !f.cookbook_locks.contains_key(cookbook) {
                return Err(invalid(
                    context,
                    "run_list",
                    format!(
                        "recipe[{}]: cookbook {cookbook:?} is not in cookbook_locks (run `chef update` to lock it)",
                        item.name
                    ),
                ));
            }
        }
        Ok(PolicyLock {
            name: f.name,
            revision_id: f.revision_id,
            run_list,
            cookbook_locks: f.cookbook_locks,
            default_attributes: f.default_attributes,
            override_attributes: f.override_attributes,
        })
    }

    /// The policy's (default, override) attributes as Chef applies them to a node of `group`: the
    /// group's own sub-hash (`default_attributes[GROUP]`) merged over the top level, hash into hash.
    pub fn attributes_for(&self, group: &str) -> (Attrs, Attrs) {
        let hoist = |attrs: &Attrs| match attrs.get(group) {
            Some(sub @ serde_json::Value::Object(_)) => {
                match hash_only_merge(serde_json::Value::Object(attrs.clone()), sub.clone()) {
                    serde_json::Value::Object(out) => out,
                    _ => attrs.clone(),
                }
            }
            _ => attrs.clone(),
        };
        (
            hoist(&self.default_attributes),
            hoist(&self.override_attributes),
        )
    }
}

/// `policy_groups/GROUP.json`: the revision of each policy the group's nodes run.
#[derive(Debug, Deserialize)]
pub struct PolicyGroup {
    #[serde(default)]
    pub policies: BTreeMap<String, PolicyRevision>,
}

#[derive(Debug, Deserialize)]
pub struct PolicyRevision {
    pub revision_id: String,
}

/// A policy or policy group name, as the Chef server accepts it (`^[\-[:alnum:]_\.\:]+$`).
pub fn validate_policy_name(kind: &'static str, name: &str) -> Result<(), ModelError> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
        && name != "."
        && name != "..";
    if ok {
        Ok(())
    } else {
        Err(ModelError::InvalidObjectName {
            kind,
            name: name.to_owned(),
            reason: "letters, digits, '-', '_', '.', ':' only",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lock(run_list: serde_json::Value) -> String {
        json!({
            "revision_id": "ab12",
            "name": "access",
            "run_list": run_list,
            "included_policy_locks": [],
            "cookbook_locks": {"netdev": {"version": "2.0.0", "identifier": "f00"}},
            "default_attributes": {"netdev": {"vlans": {"10": {"name": "all"}}}, "prod": {"netdev": {"vlans": {"10": {"name": "prod"}}}}},
            "override_attributes": {},
            "solution_dependencies": {"Policyfile": [], "dependencies": {}}
        })
        .to_string()
    }

    #[test]
    fn a_chef_cli_lock_reads_and_its_group_attributes_are_hoisted() {
        let l = PolicyLock::from_json("p.json", &lock(json!(["recipe[netdev::vlans]"]))).unwrap();
        assert_eq!(l.name, "access");
        assert_eq!(l.cookbook_locks["netdev"].version, "2.0.0");
        let (prod, _) = l.attributes_for("prod");
        assert_eq!(prod["netdev"]["vlans"]["10"]["name"], "prod");
        let (dev, _) = l.attributes_for("dev");
        assert_eq!(dev["netdev"]["vlans"]["10"]["name"], "all");
    }

    #[test]
    fn roles_unlocked_cookbooks_and_unknown_keys_are_refused() {
        let e = PolicyLock::from_json("p.json", &lock(json!(["role[base]"]))).unwrap_err();
        assert!(e.to_string().contains("recipes only"), "{e}");
        let e = PolicyLock::from_json("p.json", &lock(json!(["recipe[other]"]))).unwrap_err();
        assert!(e.to_string().contains("not in cookbook_locks"), "{e}");
        let mut v: serde_json::Value = serde_json::from_str(&lock(json!([]))).unwrap();
        v["runlist"] = json!([]);
        let e = PolicyLock::from_json("p.json", &v.to_string()).unwrap_err();
        assert!(e.to_string().contains("unknown field `runlist`"), "{e}");
    }

    #[test]
    fn names_as_the_server_takes_them() {
        assert!(validate_policy_name("policy", "access-v2.1:x").is_ok());
        assert!(validate_policy_name("policy", "../x").is_err());
        assert!(validate_policy_name("policy", "").is_err());
    }
}
