//! Run-lists and their items, parsed exactly as chef-client does it (chef/chef
//! `lib/chef/run_list/run_list_item.rb`); their expansion through roles is `crate::expand`.

use crate::error::ModelError;
use crate::name::{validate_cookbook_name, validate_role_name};
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    Recipe,
    Role,
}

/// One run-list entry: `recipe[cb::r@1.2.3]` or `role[name]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunListItem {
    pub kind: ItemKind,
    pub name: String,
    pub version: Option<String>,
}

fn is_version(v: &str) -> bool {
    // Chef: [0-9]+(\.[0-9]+){1,2}
    let parts: Vec<&str> = v.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn invalid(item: &str, reason: impl Into<String>) -> ModelError {
    ModelError::InvalidRunListItem {
        item: item.to_owned(),
        reason: reason.into(),
    }
}

impl RunListItem {
    pub fn recipe(name: &str) -> Result<Self, ModelError> {
        Self::parse(name)
    }

    pub fn role(name: &str) -> Result<Self, ModelError> {
        validate_role_name(name).map_err(|e| invalid(&format!("role[{name}]"), e.to_string()))?;
        Ok(RunListItem {
            kind: ItemKind::Role,
            name: name.to_owned(),
            version: None,
        })
    }

    /// Parse one item as Chef does: `recipe[NAME]`, `recipe[NAME@X.Y(.Z)]`, `role[NAME]`, `NAME@X.Y.Z`, or a
    /// bare `NAME` (a recipe). Anything else containing `[` or `]` is an error, as in Chef.
    pub fn parse(item: &str) -> Result<Self, ModelError> {
        let s = item.trim();
        if s.is_empty() {
            return Err(invalid(item, "is empty"));
        }
        if let Some(inner) = s.strip_prefix("recipe[").and_then(|r| r.strip_suffix(']')) {
            return Self::parse_recipe(item, inner);
        }
        if let Some(inner) = s.strip_prefix("role[").and_then(|r| r.strip_suffix(']')) {
            if inner.contains(']') || inner.contains('[') {
                return Err(invalid(item, "a role name cannot contain brackets"));
            }
            validate_role_name(inner).map_err(|e| invalid(item, e.to_string()))?;
            return Ok(RunListItem {
                kind: ItemKind::Role,
                name: inner.to_owned(),
                version: None,
            });
        }
        if s.contains('[') || s.contains(']') {
            return Err(invalid(item, "must be recipe[NAME] or role[NAME]"));
        }
        Self::parse_recipe(item, s)
    }

    fn parse_recipe(item: &str, inner: &str) -> Result<Self, ModelError> {
        if inner.contains('[') || inner.contains(']') {
            return Err(invalid(item, "a recipe name cannot contain brackets"));
        }
        let (name, version) = match inner.split_once('@') {
            Some((n, v)) => {
                if !is_version(v) {
                    return Err(invalid(item, format!("version {v:?} is not X.Y or X.Y.Z")));
                }
                (n, Some(v.to_owned()))
            }
            None => (inner, None),
        };
        let (cookbook, recipe) = match name.split_once("::") {
            Some((c, r)) => (c, Some(r)),
            None => (name, None),
        };
        validate_cookbook_name("cookbook", cookbook).map_err(|e| invalid(item, e.to_string()))?;
        if let Some(r) = recipe {
            validate_cookbook_name("recipe", r).map_err(|e| invalid(item, e.to_string()))?;
        }
        Ok(RunListItem {
            kind: ItemKind::Recipe,
            name: name.to_owned(),
            version,
        })
    }

    /// Cookbook and recipe a recipe item names (`cb` means `cb::default`).
    pub fn cookbook_and_recipe(&self) -> (&str, &str) {
        match self.name.split_once("::") {
            Some((c, r)) => (c, r),
            None => (&self.name, "default"),
        }
    }
}

impl fmt::Display for RunListItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ItemKind::Recipe => "recipe",
            ItemKind::Role => "role",
        };
        match &self.version {
            Some(v) => write!(f, "{kind}[{}@{v}]", self.name),
            None => write!(f, "{kind}[{}]", self.name),
        }
    }
}

impl std::str::FromStr for RunListItem {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RunListItem::parse(s)
    }
}

impl Serialize for RunListItem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RunListItem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        RunListItem::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// An ordered run-list without duplicate items (Chef's `RunList#<<` drops an item already present).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RunList(Vec<RunListItem>);

impl RunList {
    pub fn new() -> Self {
        RunList(Vec::new())
    }

    pub fn push(&mut self, item: RunListItem) {
        if !self.0.contains(&item) {
            self.0.push(item);
        }
    }

    /// Parse a list of items, each of which may itself be the comma-separated form
    /// (`"recipe[a],role[b], c::d"`, as `knife node run_list add` accepts).
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Self, ModelError> {
        let mut rl = RunList::new();
        for item in items {
            for part in item.as_ref().split(',') {
                rl.push(RunListItem::parse(part)?);
            }
        }
        Ok(rl)
    }

    pub fn parse_str(s: &str) -> Result<Self, ModelError> {
        Self::parse(&[s])
    }

    pub fn items(&self) -> &[RunListItem] {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl<'de> Deserialize<'de> for RunList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<String>::deserialize(d)?;
        RunList::parse(&items).map_err(serde::de::Error::custom)
    }
}

impl FromIterator<RunListItem> for RunList {
    fn from_iter<T: IntoIterator<Item = RunListItem>>(iter: T) -> Self {
        let mut rl = RunList::new();
        for i in iter {
            rl.push(i);
        }
        rl
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::{ExpandedRecipe, Expansion, MissingRole, expand};
    use crate::node::Role;
    use serde_json::json;
    use std::collections::HashMap;

    fn item(s: &str) -> RunListItem {
        RunListItem::parse(s).unwrap()
    }

    #[test]
    fn parses_every_item_form() {
        assert_eq!(
            item("recipe[cb::r]"),
            RunListItem {
                kind: ItemKind::Recipe,
                name: "cb::r".into(),
                version: None
            }
        );
        assert_eq!(item("recipe[cb]").name, "cb");
        let v = item("recipe[cb@1.2.3]");
        assert_eq!(
            (v.name.as_str(), v.version.as_deref()),
            ("cb", Some("1.2.3"))
        );
        assert_eq!(item("recipe[cb::r@1.2]").version.as_deref(), Some("1.2"));
        assert_eq!(item("role[leaf]").kind, ItemKind::Role);
        assert_eq!(item("cb::r"), item("recipe[cb::r]"));
        assert_eq!(item("cb@1.0.0").version.as_deref(), Some("1.0.0"));
        assert_eq!(item(" role[leaf] ").to_string(), "role[leaf]");
        assert_eq!(item("cb").to_string(), "recipe[cb]");
        assert_eq!(item("cb@1.0.0").to_string(), "recipe[cb@1.0.0]");
    }

    #[test]
    fn rejects_malformed_items_naming_them() {
        for bad in [
            "",
            "recipe[]",
            "role[]",
            "role[a",
            "recipe[a",
            "rol[a]",
            "[a]",
            "recipe[a@1]",
            "recipe[a@1.2.3.4]",
            "recipe[a@x.y]",
            "role[a.b]",
            "recipe[a b]",
            "recipe[../x]",
            "recipe[a::]",
            "recipe[a;reboot]",
        ] {
            let e = RunListItem::parse(bad).expect_err(bad).to_string();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn comma_separated_form_and_dedup() {
        let rl = RunList::parse(&["recipe[a],role[b], c::d", "recipe[a]"]).unwrap();
        let s: Vec<String> = rl.items().iter().map(|i| i.to_string()).collect();
        assert_eq!(s, ["recipe[a]", "role[b]", "recipe[c::d]"]);
        // `foo` and `foo::default` are different strings and both stay.
        assert_eq!(RunList::parse_str("foo,foo::default").unwrap().len(), 2);
        assert!(RunList::parse_str("a,,b").is_err());
        // Serialized form is Chef's.
        assert_eq!(
            serde_json::to_value(&rl).unwrap(),
            json!(["recipe[a]", "role[b]", "recipe[c::d]"])
        );
    }

    fn role(
        name: &str,
        run_list: &[&str],
        env_run_lists: serde_json::Value,
        d: serde_json::Value,
    ) -> Role {
        serde_json::from_value(json!({
            "name": name, "run_list": run_list, "env_run_lists": env_run_lists,
            "default_attributes": d, "override_attributes": {}
        }))
        .unwrap()
    }

    fn expand_with(env: &str, rl: &str, roles: Vec<Role>) -> Expansion {
        let map: HashMap<String, Role> = roles.into_iter().map(|r| (r.name.clone(), r)).collect();
        expand::<ModelError, _>(env, &RunList::parse_str(rl).unwrap(), |n| {
            Ok(map.get(n).cloned())
        })
        .unwrap()
    }

    #[test]
    fn depth_first_in_order_with_nesting() {
        let e = expand_with(
            "_default",
            "recipe[first],role[outer],recipe[last]",
            vec![
                role(
                    "outer",
                    &["recipe[o1]", "role[inner]", "recipe[o2]"],
                    json!({}),
                    json!({}),
                ),
                role("inner", &["recipe[i1]"], json!({}), json!({})),
            ],
        );
        assert_eq!(e.recipe_names(), ["first", "o1", "i1", "o2", "last"]);
        assert_eq!(e.roles, ["outer", "inner"]);
        // Attributes are applied after a role's children: inner first, then outer.
        let order: Vec<&str> = e.role_layers.iter().map(|l| l.role.as_str()).collect();
        assert_eq!(order, ["inner", "outer"]);
    }

    #[test]
    fn duplicates_are_dropped_but_foo_and_foo_default_differ() {
        let e = expand_with(
            "_default",
            "recipe[a],role[r],recipe[a::default]",
            vec![role(
                "r",
                &["recipe[a]", "recipe[b]", "recipe[a]"],
                json!({}),
                json!({}),
            )],
        );
        assert_eq!(e.recipe_names(), ["a", "b", "a::default"]);
    }

    #[test]
    fn loops_and_repeated_roles_are_skipped() {
        let e = expand_with(
            "_default",
            "role[a],role[b],role[a]",
            vec![
                role("a", &["recipe[x]", "role[b]"], json!({}), json!({})),
                role("b", &["recipe[y]", "role[a]"], json!({}), json!({})),
            ],
        );
        assert_eq!(e.recipe_names(), ["x", "y"]);
        assert_eq!(e.roles, ["a", "b"]);
        assert_eq!(
            e.role_layers.len(),
            2,
            "each role's attributes applied once"
        );
    }

    #[test]
    fn env_run_lists_used_when_key_present_even_if_empty() {
        let roles = vec![role(
            "leaf",
            &["recipe[netdev::vlans]"],
            json!({"prod": ["recipe[netdev::links]"], "lab": [], "dev": null}),
            json!({}),
        )];
        assert_eq!(
            expand_with("prod", "role[leaf]", roles.clone()).recipe_names(),
            ["netdev::links"]
        );
        assert!(
            expand_with("lab", "role[leaf]", roles.clone())
                .recipes
                .is_empty()
        );
        assert_eq!(
            expand_with("dev", "role[leaf]", roles.clone()).recipe_names(),
            ["netdev::vlans"]
        );
        assert_eq!(
            expand_with("_default", "role[leaf]", roles).recipe_names(),
            ["netdev::vlans"]
        );
    }

    #[test]
    fn missing_roles_are_all_collected_and_named() {
        let e = expand_with(
            "_default",
            "role[gone],recipe[a],role[present]",
            vec![role(
                "present",
                &["role[also_gone]", "recipe[b]"],
                json!({}),
                json!({}),
            )],
        );
        assert_eq!(
            e.recipe_names(),
            ["a", "b"],
            "expansion continues past missing roles"
        );
        assert_eq!(
            e.missing_roles,
            vec![
                MissingRole {
                    name: "gone".into(),
                    included_by: "top level".into(),
                    nearest: None,
                },
                MissingRole {
                    name: "also_gone".into(),
                    included_by: "present".into(),
                    nearest: None,
                },
            ]
        );
        let msg = e.ensure_complete().unwrap_err().to_string();
        assert!(
            msg.contains("gone (included by 'top level')")
                && msg.contains("also_gone (included by 'present')"),
            "{msg}"
        );
    }

    #[test]
    fn version_conflicts_are_errors() {
        let rl = RunList::parse_str("recipe[a@1.0.0],recipe[a@2.0.0]").unwrap();
        let r = expand::<ModelError, _>("_default", &rl, |_| Ok(None));
        assert!(matches!(r, Err(ModelError::CookbookVersionConflict { .. })));
        let rl = RunList::parse_str("recipe[a@1.0.0],recipe[a]").unwrap();
        let e = expand::<ModelError, _>("_default", &rl, |_| Ok(None)).unwrap();
        assert_eq!(
            e.recipes,
            vec![ExpandedRecipe {
                name: "a".into(),
                version: Some("1.0.0".into())
            }]
        );
    }

    #[test]
    fn fetch_errors_stop_expansion() {
        let rl = RunList::parse_str("role[bad]").unwrap();
        let r = expand::<ModelError, _>("_default", &rl, |n| {
            Err(ModelError::InvalidObjectName {
                kind: "role",
                name: n.into(),
                reason: "broken file",
            })
        });
        assert!(r.is_err());
    }
}
