//! Expansion of a run-list through roles, exactly as chef-client does it (chef/chef
//! `lib/chef/run_list/run_list_expansion.rb`).
//!
//! Expansion is depth-first in order. A recipe already in the list is not added again (string
//! equality: `foo` and `foo::default` are different entries). A role already seen is skipped, which is
//! also what stops loops. A role's `env_run_lists[env]` replaces its `run_list` whenever that key is
//! present with a list, even an empty one. Missing roles do not stop the expansion: they are all
//! collected and reported together at the end, each with the role that included it.

use crate::error::ModelError;
use crate::node::{Attrs, Role};
use crate::runlist::{ItemKind, RunList, RunListItem};
use serde::Serialize;

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
    /// The existing role whose name is nearest, where the store could list its roles (a typo).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearest: Option<String>,
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
        .map(|r| match &r.nearest {
            Some(n) => format!(
                "{} (included by '{}'; did you mean role {n}?)",
                r.name, r.included_by
            ),
            None => format!("{} (included by '{}')", r.name, r.included_by),
        })
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
                            nearest: None,
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
