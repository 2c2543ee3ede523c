//! Assemble a node's view from a store: desired and current state, the environment, the expanded
//! run-list, and every attribute layer in Chef's order (docs/design.md §3 steps 2, 5 and 6).

use crate::cookbook::run::load_run;
use crate::cookbook::sync::{CookbookError as SyncError, CookbookSync};
use crate::cookbook::{CookbookError, Cookbooks};
use crate::kind::NodeErrorKind;
use crate::store::NodeStore;
use crate::store::StoreError;
use crate::store::local::LocalRepo;
use netgw_models::attributes::{AttributeSet, Component, Source};
use netgw_models::compile::RecipeSource;
use netgw_models::expand::{ExpandError, Expansion, expand};
use netgw_models::policy::PolicyLock;
use netgw_models::{Attrs, CurrentState, DesiredState, Environment, ModelError, NodeName, Role};
use serde_json::Value;
use std::path::Path;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ResolveError {
    #[error(transparent)]
    Store(#[from] StoreError),

    #[error("node {node}: {source}")]
    Expand {
        node: String,
        #[source]
        source: ExpandError,
    },

    #[error("node {node}: unknown recipe {recipe:?} (not built in, and no file {path}){hint}")]
    UnknownRecipe {
        node: String,
        recipe: String,
        path: String,
        hint: String,
    },

    /// A cookbook file netgw cannot read or evaluate (names the file and line).
    #[error("node {node}: {source}")]
    Cookbook {
        node: String,
        #[source]
        source: Box<CookbookError>,
    },

    /// A role or environment in Chef's Ruby DSL netgw cannot read (names the file and line).
    #[error(transparent)]
    RubyFile(Box<CookbookError>),

    /// Cookbooks from the Chef server could not be synchronized (`--cookbooks server`).
    #[error(transparent)]
    Cookbooks(#[from] SyncError),

    #[error("{context}: {source}")]
    Model {
        context: String,
        #[source]
        source: ModelError,
    },

    /// A Policyfile node netgw cannot run as its policy says.
    #[error("node {node}: {message}")]
    Policy { node: String, message: String },
}

impl ResolveError {
    /// What broke: the store's or the server's kind where they failed, the operator's input otherwise.
    pub fn kind(&self) -> NodeErrorKind {
        match self {
            ResolveError::Store(e) => e.kind(),
            ResolveError::Cookbooks(e) => e.kind(),
            _ => NodeErrorKind::Config,
        }
    }

    /// The store has no node `name` (as opposed to a role, environment or cookbook it lacks).
    pub fn is_missing_node(&self, name: &NodeName) -> bool {
        matches!(self, ResolveError::Store(crate::store::StoreError::NotFound { kind: "node", name: n, .. }) if n == name.as_str())
    }

    /// Node-level failures (exit 1) as opposed to configuration errors (exit 2).
    pub fn is_node_failure(&self) -> bool {
        match self {
            // A node that does not exist was named by the user: a configuration error (README).
            ResolveError::Store(crate::store::StoreError::NotFound { kind: "node", .. }) => false,
            ResolveError::Store(e) => e.is_not_found(),
            ResolveError::Expand { .. } | ResolveError::UnknownRecipe { .. } => true,
            // A cookbook netgw cannot read or evaluate is bad configuration, like a bad repo file.
            ResolveError::Cookbook { source, .. } => {
                matches!(&**source, CookbookError::Store(e) if e.is_not_found())
            }
            ResolveError::Model { .. }
            | ResolveError::RubyFile(_)
            | ResolveError::Policy { .. } => false,
            ResolveError::Cookbooks(e) => !matches!(e.kind(), NodeErrorKind::Config),
        }
    }
}

/// Everything known about a node before touching its device.
#[derive(Debug, Clone)]
pub struct NodeView {
    pub name: NodeName,
    pub desired: DesiredState,
    pub current: Option<CurrentState>,
    pub environment: Environment,
    pub expansion: Expansion,
    pub attributes: AttributeSet,
    /// Every recipe to compile, in run-list order (`cb` and `cb::default` once, as `cb::default`).
    pub recipes: Vec<(String, RecipeSource)>,
    /// The cookbook versions used (`NAME VERSION`) when they came from the Chef server; empty for
    /// repo cookbooks.
    pub cookbooks: Vec<String>,
    /// Where the cookbooks were read from (the repo's, or the synchronized set), for
    /// [`recompile_with_facts`].
    pub cookbook_source: Cookbooks,
    /// The policy of a Policyfile node.
    pub policy: Option<NodePolicy>,
}

pub use crate::cookbook::run::BUILTIN_RECIPES;

/// A Policyfile node's policy: the lock its group runs.
#[derive(Debug, Clone)]
pub struct NodePolicy {
    pub lock: PolicyLock,
    pub group: String,
}

/// The policy of a Policyfile node of the local repo (`None` for a run-list node), its locked
/// cookbook versions checked against the repo's cookbooks.
pub fn node_policy(
    repo: &LocalRepo,
    desired: &DesiredState,
) -> Result<Option<NodePolicy>, ResolveError> {
    let (Some(name), Some(group)) = (&desired.policy_name, &desired.policy_group) else {
        return Ok(None);
    };
    let lock = repo.load_policy(name, group)?;
    let cookbooks = Cookbooks::of_repo(repo);
    for (cookbook, locked) in &lock.cookbook_locks {
        if !cookbooks.exists(cookbook) {
            continue; // a built-in (netdev) or a dependency netgw never evaluates
        }
        let found = cookbooks
            .metadata(cookbook)
            .map_err(|e| ResolveError::Cookbook {
                node: desired.name.to_string(),
                source: Box::new(e),
            })?
            .version;
        if found != locked.version {
            return Err(ResolveError::Policy {
                node: desired.name.to_string(),
                message: format!(
                    "policy {name} (group {group}) locks cookbook {cookbook} at {}, but the repo's \
                     cookbooks/{cookbook} is {found}: run `chef update` and push the policy again, \
                     or check out the cookbook the lock names",
                    locked.version
                ),
            });
        }
    }
    Ok(Some(NodePolicy {
        lock,
        group: group.clone(),
    }))
}

/// Expand a node's run-list against the repo. Missing roles are reported in the expansion (not as an
/// error) so callers can show them; [`resolve`] turns them into an error.
pub fn expand_node(
    repo: &LocalRepo,
    desired: &DesiredState,
) -> Result<(Environment, Expansion), ResolveError> {
    let policy = node_policy(repo, desired)?;
    expand_in(repo, desired, policy.as_ref())
}

/// [`expand_node`] with the node's policy read already. A Policyfile node's run-list is its policy's
/// (recipes only) and it has no environment, as in Chef's `PolicyBuilder::Policyfile`.
fn expand_in(
    repo: &LocalRepo,
    desired: &DesiredState,
    policy: Option<&NodePolicy>,
) -> Result<(Environment, Expansion), ResolveError> {
    if let Some(p) = policy {
        let env = Environment::default_environment();
        let expansion = expand::<ResolveError, _>(&env.name, &p.lock.run_list, |_| Ok(None))?;
        return Ok((env, expansion));
    }
    let environment = repo_environment(repo, &desired.chef_environment)?;
    let expansion =
        expand::<ResolveError, _>(&desired.chef_environment, &desired.run_list, |role| {
            repo_role(repo, role)
        })?;
    Ok((environment, expansion))
}

/// A role of the local repo: `roles/NAME.json`, or `roles/NAME.rb` in Chef's Ruby DSL
/// (`crate::cookbook::dsl`). Both at once is an error: which one knife would upload is not netgw's
/// to guess.
pub fn repo_role(repo: &LocalRepo, name: &str) -> Result<Option<Role>, ResolveError> {
    let json = repo.load_role(name)?;
    let Some(doc) = ruby_document(
        repo,
        "roles",
        name,
        json.is_some(),
        crate::cookbook::dsl::role,
    )?
    else {
        return Ok(json);
    };
    named(repo, "roles", name, doc).map(Some)
}

/// An environment of the local repo: `environments/NAME.json`, or `.rb` in Chef's Ruby DSL.
pub fn repo_environment(repo: &LocalRepo, name: &str) -> Result<Environment, ResolveError> {
    let json = repo.load_environment(name);
    let has_json = repo
        .read_repo_file(&Path::new("environments").join(format!("{name}.json")))?
        .is_some();
    let dsl = crate::cookbook::dsl::environment;
    match ruby_document(repo, "environments", name, has_json, dsl)? {
        Some(doc) => named(repo, "environments", name, doc),
        None => Ok(json?),
    }
}

/// `DIR/NAME.rb` evaluated by `parse`, when the repo has it; an error beside a `.json` of the name.
fn ruby_document(
    repo: &LocalRepo,
    dir: &str,
    name: &str,
    has_json: bool,
    parse: fn(&Path, &str) -> Result<Value, CookbookError>,
) -> Result<Option<Value>, ResolveError> {
    let rel = Path::new(dir).join(format!("{name}.rb"));
    let Some(text) = repo.read_repo_file(&rel)? else {
        return Ok(None);
    };
    let path = repo.root().join(&rel);
    if has_json {
        return Err(StoreError::Parse {
            path,
            message: format!("{dir}/{name}.json exists too: keep one of the two"),
        }
        .into());
    }
    parse(&path, &text)
        .map(Some)
        .map_err(|e| ResolveError::RubyFile(Box::new(e)))
}

/// The DSL's document as the `.json` file would be read, its `name` the file's.
fn named<T: serde::de::DeserializeOwned>(
    repo: &LocalRepo,
    dir: &str,
    name: &str,
    doc: Value,
) -> Result<T, ResolveError> {
    let path = repo.root().join(dir).join(format!("{name}.rb"));
    if doc["name"].as_str() != Some(name) {
        let message = format!(
            "`name` is {} but the file is named for {name:?}",
            doc["name"]
        );
        return Err(StoreError::Parse { path, message }.into());
    }
    serde_json::from_value(doc).map_err(|e| {
        let message = e.to_string();
        StoreError::Parse { path, message }.into()
    })
}

impl From<ModelError> for ResolveError {
    fn from(source: ModelError) -> Self {
        ResolveError::Model {
            context: "run-list".into(),
            source,
        }
    }
}

/// Load and resolve a node from the local repo: desired, current, environment, expansion and
/// attribute layers.
pub fn resolve(repo: &LocalRepo, name: &NodeName) -> Result<NodeView, ResolveError> {
    let desired = repo.load_desired(name)?;
    let current = repo.load_current(name)?;
    let policy = node_policy(repo, &desired)?;
    let (environment, expansion) = expand_in(repo, &desired, policy.as_ref())?;
    complete_in(repo, &expansion, name)?;
    let mut view = assemble(
        &Cookbooks::of_repo(repo),
        name,
        desired,
        current,
        environment,
        expansion,
        policy.as_ref(),
    )?;
    view.policy = policy;
    Ok(view)
}

/// Resolve a node whose desired state, roles and environments come from any store (a Chef server or
/// the local repo), with cookbooks from the local repo. Roles are fetched as the expansion reaches them.
pub async fn resolve_from(
    store: &dyn NodeStore,
    cookbooks: &LocalRepo,
    name: &NodeName,
) -> Result<NodeView, ResolveError> {
    resolve_with(store, cookbooks, None, name).await
}

/// [`resolve_from`], with the cookbooks synchronized from the Chef server through `sync` when it is
/// given (`--cookbooks server`): after expansion, as chef-client does, so the server resolves exactly
/// the expanded run-list.
pub async fn resolve_with(
    store: &dyn NodeStore,
    cookbooks: &LocalRepo,
    sync: Option<&CookbookSync>,
    name: &NodeName,
) -> Result<NodeView, ResolveError> {
    // The local repo that is also the cookbook repo: the same reads, in one blocking task, through
    // `cookbooks` (the same files, with the run's reads of roles, environments and cookbooks).
    if sync.is_none()
        && let Some(repo) = store.as_local()
        && repo.root() == cookbooks.root()
    {
        let (repo, n) = (cookbooks.clone(), name.clone());
        return tokio::task::spawn_blocking(move || resolve(&repo, &n))
            .await
            .map_err(join_error)?;
    }
    let Some(desired) = store.load_desired(name).await? else {
        return Err(ResolveError::Store(StoreError::NotFound {
            kind: "node",
            name: name.to_string(),
            path: store.describe(name).into(),
        }));
    };
    if let (Some(policy), Some(group)) = (&desired.policy_name, &desired.policy_group) {
        return Err(ResolveError::Policy {
            node: name.to_string(),
            message: format!(
                "a Policyfile node (policy {policy}, group {group}): netgw reads policies from a local \
                 repo only (policy_groups/, policies/ as `knife download` writes them), not from a \
                 Chef server's policy endpoints; converge it with --repo, or give it a run_list"
            ),
        });
    }
    let current = store.load_current(name).await?;
    let environment = match store.roles_repo() {
        Some(repo) => {
            let (repo, env) = (repo.clone(), desired.chef_environment.clone());
            tokio::task::spawn_blocking(move || repo_environment(&repo, &env))
                .await
                .map_err(join_error)??
        }
        None => store.load_environment(&desired.chef_environment).await?,
    };
    // Expand with what is fetched so far; fetch the roles it asked for; repeat until nothing new is
    // asked for. Each round fetches at least one role, so this ends.
    let mut cache: std::collections::HashMap<String, Option<Role>> =
        std::collections::HashMap::new();
    let expansion = loop {
        let mut needed: Vec<String> = Vec::new();
        let exp =
            expand::<ResolveError, _>(&desired.chef_environment, &desired.run_list, |role| {
                match cache.get(role) {
                    Some(r) => Ok(r.clone()),
                    None => {
                        needed.push(role.to_owned());
                        Ok(None)
                    }
                }
            })?;
        if needed.is_empty() {
            break exp;
        }
        for r in needed {
            let role = match store.roles_repo() {
                Some(repo) => {
                    let (repo, r) = (repo.clone(), r.clone());
                    tokio::task::spawn_blocking(move || repo_role(&repo, &r))
                        .await
                        .map_err(join_error)??
                }
                None => store.load_role(&r).await?,
            };
            cache.insert(r, role);
        }
    };
    let (repo, used) = match sync {
        Some(sync) => {
            // A missing role is reported as such, not as whatever the server makes of the rest.
            complete(&expansion, name)?;
            sync.cookbooks_for(&environment, &expansion).await?
        }
        None => (cookbooks.clone(), Vec::new()),
    };
    let mut cb = Cookbooks::of_repo(&repo).with_data_bag_secret(cookbooks.data_bag_secret());
    if let Some(sync) = sync {
        cb = cb.with_server_bags(sync.data_bags(), tokio::runtime::Handle::current());
    }
    let n = name.clone();
    let mut view = tokio::task::spawn_blocking(move || {
        assemble(&cb, &n, desired, current, environment, expansion, None)
    })
    .await
    .map_err(join_error)??;
    view.cookbooks = used;
    Ok(view)
}

/// Every role of the expansion exists: a missing one is reported as such, naming who included it.
fn complete(expansion: &Expansion, name: &NodeName) -> Result<(), ResolveError> {
    expansion
        .ensure_complete()
        .map_err(|source| ResolveError::Expand {
            node: name.to_string(),
            source,
        })
}

/// [`complete`] in the local repo: a missing role is most often a typo of one the repo has, named.
fn complete_in(
    repo: &LocalRepo,
    expansion: &Expansion,
    name: &NodeName,
) -> Result<(), ResolveError> {
    if expansion.missing_roles.is_empty() {
        return Ok(());
    }
    let known = repo.role_names().unwrap_or_default();
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    let mut missing = expansion.missing_roles.clone();
    for m in &mut missing {
        m.nearest = crate::inventory::nearest(&m.name, &known).map(str::to_owned);
    }
    Err(ResolveError::Expand {
        node: name.to_string(),
        source: ExpandError::MissingRoles(missing),
    })
}

/// A resolve task that panicked or was cancelled (the blocking file reads run on their own thread).
fn join_error(e: tokio::task::JoinError) -> ResolveError {
    ResolveError::Model {
        context: "resolve".into(),
        source: ModelError::InvalidField {
            context: "task".into(),
            field: "join".into(),
            reason: e.to_string(),
        },
    }
}

/// Everything after expansion: attribute layers from the environment, roles, cookbook attribute files
/// and recipes, and the recipes to compile.
fn assemble(
    cookbooks: &Cookbooks,
    name: &NodeName,
    desired: DesiredState,
    current: Option<CurrentState>,
    environment: Environment,
    expansion: Expansion,
    policy: Option<&NodePolicy>,
) -> Result<NodeView, ResolveError> {
    complete(&expansion, name)?;

    let mut attrs = AttributeSet::new();
    attrs.push(Component::Normal, Source::Node, desired.normal.clone());
    let env_src = Source::Environment {
        environment: environment.name.clone(),
    };
    let env_layers = (Component::EnvDefault, Component::EnvOverride);
    let env_attrs = (
        &environment.default_attributes,
        &environment.override_attributes,
    );
    push_pair(&mut attrs, env_layers, env_src, env_attrs);
    if let Some(p) = policy {
        let src = Source::Policy {
            policy: p.lock.name.clone(),
            revision: p.lock.revision_id.clone(),
        };
        let (default, over) = p.lock.attributes_for(&p.group);
        let layers = (Component::RoleDefault, Component::RoleOverride);
        push_pair(&mut attrs, layers, src, (&default, &over));
    }
    for layer in &expansion.role_layers {
        let src = Source::Role {
            role: layer.role.clone(),
        };
        let layers = (Component::RoleDefault, Component::RoleOverride);
        let pair = (&layer.default_attributes, &layer.override_attributes);
        push_pair(&mut attrs, layers, src, pair);
    }

    // Automatic attributes (the facts the last run saved) first, so attribute files and recipes that
    // read node[...] see them, as Chef's compile phase sees Ohai's.
    if let Some(c) = &current {
        attrs.push(Component::Automatic, Source::Automatic, c.automatic.clone());
    }
    let recipes = load_cookbooks(cookbooks, name, &expansion, &mut attrs)?;

    Ok(NodeView {
        name: name.clone(),
        desired,
        current,
        environment,
        expansion,
        attributes: attrs,
        recipes,
        cookbooks: Vec::new(),
        cookbook_source: cookbooks.clone(),
        policy: None,
    })
}

/// Cookbooks in Chef's order (dependencies first), attribute files, then recipes in run-list order.
fn load_cookbooks(
    cookbooks: &Cookbooks,
    name: &NodeName,
    expansion: &Expansion,
    attrs: &mut AttributeSet,
) -> Result<Vec<(String, RecipeSource)>, ResolveError> {
    let run_list: Vec<String> = expansion.recipes.iter().map(|r| r.name.clone()).collect();
    let cookbooks = cookbooks.clone().with_node_name(name.as_str());
    load_run(&cookbooks, &run_list, attrs).map_err(|e| match e {
        CookbookError::UnknownRecipe { recipe, path, hint } => ResolveError::UnknownRecipe {
            node: name.to_string(),
            recipe,
            path,
            hint,
        },
        other => ResolveError::Cookbook {
            node: name.to_string(),
            source: Box::new(other),
        },
    })
}

/// Evaluate the node's cookbooks again over its attributes as they are now: this run's facts (the
/// automatic level the caller just replaced) and every other non-cookbook layer, the classifier's
/// included. chef-client compiles cookbooks after Ohai, so attribute files and recipes see the facts
/// of this run; [`resolve`] evaluated them earlier with the last run's saved facts, which refuses a
/// bad cookbook before any device is contacted. Reads the cookbook files again: run it off the async
/// threads. On an error the view is left without its cookbook layers (the engine drops it then).
pub fn recompile_with_facts(view: &mut NodeView) -> Result<(), ResolveError> {
    // Taken, not cloned: on an error the caller drops the view.
    let mut attrs = std::mem::take(&mut view.attributes);
    attrs.retain(|l| {
        !matches!(
            l.source,
            Source::AttributeFile { .. } | Source::Recipe { .. }
        )
    });
    view.recipes = load_cookbooks(
        &view.cookbook_source,
        &view.name,
        &view.expansion,
        &mut attrs,
    )?;
    view.attributes = attrs;
    Ok(())
}
/// A default and an override layer from one source (an environment, a role).
fn push_pair(
    attrs: &mut AttributeSet,
    (default, over): (Component, Component),
    src: Source,
    (default_attrs, override_attrs): (&Attrs, &Attrs),
) {
    attrs.push(default, src.clone(), default_attrs.clone());
    attrs.push(over, src, override_attrs.clone());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Through a store that is not the cookbook repo (a Chef server's path), a Policyfile node is
    /// refused naming its policy, never resolved with an empty run-list.
    #[tokio::test]
    async fn a_policyfile_node_from_another_store_is_refused_not_run_empty() {
        let (nodes, cookbooks) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for d in [nodes.path(), cookbooks.path()] {
            std::fs::create_dir_all(d.join("nodes")).unwrap();
        }
        std::fs::write(
            nodes.path().join("nodes/sw1.json"),
            r#"{"name":"sw1","policy_name":"access","policy_group":"prod"}"#,
        )
        .unwrap();
        let store = LocalRepo::open(nodes.path()).unwrap();
        let repo = LocalRepo::open(cookbooks.path()).unwrap();
        let name = NodeName::new("sw1").unwrap();
        let e = resolve_from(&store, &repo, &name).await.unwrap_err();
        assert!(
            matches!(&e, ResolveError::Policy { message, .. }
                if message.contains("policy access, group prod") && message.contains("local repo only")),
            "{e}"
        );
    }
}
