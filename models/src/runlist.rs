//! Run-lists: parsing of items and expansion through roles, exactly as chef-client does it
//! (chef/chef `lib/chef/run_list/run_list_item.rb` and `lib/chef/run_list/run_list_expansion.rb`).
//!
//! Expansion is depth-first in order. A recipe already in the list is not added again (string
//! equality: `foo` and `foo::default` are different entries). A role already seen is skipped, which is
//! also what stops loops. A role's `env_run_lists[env]` replaces its `run_list` whenever that key is
//! present with a list, even an empty one. Missing roles do not stop the expansion: they are all
//! collected and reported together at the end, each with the role that included it.

use crate::error::ModelError;
use crate::name::{validate_cookbook_name, validate_role_name};
use crate::node::{Attrs, Role};
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

/// A recipe in the expanded list, with the version pin if one was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExpandedRecipe {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A role that was referenced but does not exist, and who referenced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingRole {
    pub name: String,
    /// `top level` or the including role's name.
    pub included_by: String,
}

/// Attributes one role contributes, in the order chef-client applies them (a role's attributes are
/// applied after everything it includes, so the including role wins).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleLayer {
    pub role: String,
    pub default_attributes: Attrs,
    pub override_attributes: Attrs,
}

/// The result of expanding a run-list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expansion {
    pub environment: String,
    pub recipes: Vec<ExpandedRecipe>,
    /// Roles found, in the order first reached (Chef's `expansion.roles`, minus the missing ones).
    pub roles: Vec<String>,
    pub missing_roles: Vec<MissingRole>,
    /// Role attribute layers in application order.
    pub role_layers: Vec<RoleLayer>,
}

impl Expansion {
    pub fn recipe_names(&self) -> Vec<&str> {
        self.recipes.iter().map(|r| r.name.as_str()).collect()
    }

    /// An error naming every missing role, or Ok when there is none.
    pub fn ensure_complete(&self) -> Result<(), ExpandError> {
        if self.missing_roles.is_empty() {
            Ok(())
        } else {
            Err(ExpandError::MissingRoles(self.missing_roles.clone()))
        }
    }
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum ExpandError {
    #[error("{}", missing_roles_message(.0))]
    MissingRoles(Vec<MissingRole>),
    #[error(transparent)]
    Model(#[from] ModelError),
}

fn missing_roles_message(m: &[MissingRole]) -> String {
    let names: Vec<String> = m
        .iter()
        .map(|r| format!("{} (included by '{}')", r.name, r.included_by))
        .collect();
    format!(
        "{} missing role(s) in the run-list: {}",
        m.len(),
        names.join(", ")
    )
}

/// Expand `run_list` for `environment`. `fetch` returns a role by name, `Ok(None)` when it does not
/// exist, or an error (a malformed role file) that stops the expansion.
pub fn expand<E, F>(environment: &str, run_list: &RunList, mut fetch: F) -> Result<Expansion, E>
where
    F: FnMut(&str) -> Result<Option<Role>, E>,
    E: From<ModelError>,
{
    let mut st = State {
        environment,
        recipes: Vec::new(),
        versions: Vec::new(),
        applied: Vec::new(),
        found: Vec::new(),
        missing: Vec::new(),
        layers: Vec::new(),
    };
    st.expand_items(run_list.items(), "top level", &mut fetch)?;
    Ok(Expansion {
        environment: environment.to_owned(),
        recipes: st.recipes,
        roles: st.found,
        missing_roles: st.missing,
        role_layers: st.layers,
    })
}

struct State<'a> {
    environment: &'a str,
    recipes: Vec<ExpandedRecipe>,
    versions: Vec<(String, String)>,
    applied: Vec<String>,
    found: Vec<String>,
    missing: Vec<MissingRole>,
    layers: Vec<RoleLayer>,
}

impl State<'_> {
    fn expand_items<E, F>(
        &mut self,
        items: &[RunListItem],
        included_by: &str,
        fetch: &mut F,
    ) -> Result<(), E>
    where
        F: FnMut(&str) -> Result<Option<Role>, E>,
        E: From<ModelError>,
    {
        for entry in items {
            match entry.kind {
                ItemKind::Recipe => self.add_recipe(entry)?,
                ItemKind::Role => {
                    // inflate_role: a role already applied is skipped (loop guard).
                    if self.applied.iter().any(|r| r == &entry.name) {
                        continue;
                    }
                    self.applied.push(entry.name.clone());
                    match fetch(&entry.name)? {
                        None => self.missing.push(MissingRole {
                            name: entry.name.clone(),
                            included_by: included_by.to_owned(),
                        }),
                        Some(role) => {
                            self.found.push(entry.name.clone());
                            let sub = role.run_list_for(self.environment).clone();
                            self.expand_items(sub.items(), &entry.name, fetch)?;
                            self.layers.push(RoleLayer {
                                role: entry.name.clone(),
                                default_attributes: role.default_attributes.clone(),
                                override_attributes: role.override_attributes.clone(),
                            });
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Chef's `VersionedRecipeList#add_recipe`.
    fn add_recipe(&mut self, entry: &RunListItem) -> Result<(), ModelError> {
        if let Some(v) = &entry.version {
            if let Some((_, prev)) = self.versions.iter().find(|(n, _)| n == &entry.name) {
                if prev != v {
                    return Err(ModelError::CookbookVersionConflict {
                        cookbook: entry.name.clone(),
                        first: prev.clone(),
                        second: v.clone(),
                    });
                }
            } else {
                self.versions.push((entry.name.clone(), v.clone()));
            }
        }
        if let Some(existing) = self.recipes.iter_mut().find(|r| r.name == entry.name) {
            if existing.version.is_none() {
                existing.version = entry.version.clone();
            }
        } else {
            self.recipes.push(ExpandedRecipe {
                name: entry.name.clone(),
                version: entry.version.clone(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
                    included_by: "top level".into()
                },
                MissingRole {
                    name: "also_gone".into(),
                    included_by: "present".into()
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
