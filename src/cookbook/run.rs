//! A node's cookbooks loaded as chef-client's compile phase loads them
//! (`Chef::RunContext::CookbookCompiler`): every cookbook of the run-list with its `metadata.rb`
//! dependencies first, attribute files of each in that order, then the run-list's recipes in order,
//! each once, `include_recipe` evaluating the included recipe at that point.

use super::eval::{self, Host, ResourceDecl};
use super::{AttributeFile, CookbookError, Cookbooks, FileBody, RecipeBody, netdev, ruby};
use netgw_models::attributes::{AttributeSet, Source, layers_from_document};
use netgw_models::compile::RecipeSource;
use serde_json::Value;

/// Cookbooks netgw provides itself: a dependency on them needs no directory.
pub const PROVIDED: [&str; 1] = ["netdev"];

/// Recipes netgw has built in, used when no cookbook provides a file for them.
pub const BUILTIN_RECIPES: [&str; 4] = [
    "netdev::vlans",
    "netdev::links",
    "netdev::lags",
    "netdev::l3_interfaces",
];

/// Chef's `cookbook_order`: for each run-list cookbook, its dependencies (depth first, sorted by
/// name as `CookbookCompiler#each_cookbook_dep` does: `metadata.dependencies.keys.sort`) then itself,
/// each cookbook once.
pub fn cookbook_order(
    cookbooks: &Cookbooks,
    run_list_recipes: &[String],
) -> Result<Vec<String>, CookbookError> {
    let mut order = Vec::new();
    let mut seen = Vec::new();
    for r in run_list_recipes {
        add_with_deps(cookbooks, cookbook_of(r), &mut seen, &mut order)?;
    }
    Ok(order)
}

fn add_with_deps(
    cookbooks: &Cookbooks,
    cb: &str,
    seen: &mut Vec<String>,
    order: &mut Vec<String>,
) -> Result<(), CookbookError> {
    if seen.iter().any(|s| s == cb) {
        return Ok(());
    }
    seen.push(cb.to_owned());
    let md = cookbooks.metadata(cb)?;
    let mut deps: Vec<&String> = md.depends.iter().map(|(d, _)| d).collect();
    deps.sort();
    deps.dedup();
    for dep in deps {
        if !PROVIDED.contains(&dep.as_str()) && !cookbooks.exists(dep) {
            return Err(CookbookError::MissingDependency {
                path: cookbooks
                    .root()
                    .join("cookbooks")
                    .join(cb)
                    .join("metadata.rb"),
                dependency: dep.clone(),
                root: cookbooks.root().join("cookbooks"),
            });
        }
        add_with_deps(cookbooks, dep, seen, order)?;
    }
    order.push(cb.to_owned());
    Ok(())
}

fn cookbook_of(recipe: &str) -> &str {
    recipe.split_once("::").map(|(c, _)| c).unwrap_or(recipe)
}

/// `cb` is `cb::default`.
pub fn full_recipe_name(recipe: &str) -> String {
    let (cb, rec) = recipe.split_once("::").unwrap_or((recipe, "default"));
    format!("{cb}::{rec}")
}

/// Load every attribute file and recipe of a run into `attrs`; the recipes to compile, in order.
pub fn load_run(
    cookbooks: &Cookbooks,
    run_list_recipes: &[String],
    attrs: &mut AttributeSet,
) -> Result<Vec<(String, RecipeSource)>, CookbookError> {
    let order = cookbook_order(cookbooks, run_list_recipes)?;
    let mut loader = AttributeLoader {
        cookbooks,
        loaded: Vec::new(),
    };
    for cb in &order {
        loader.load_cookbook(cb, attrs)?;
    }
    let mut runner = Runner {
        cookbooks,
        order,
        loaded: Vec::new(),
        items: Vec::new(),
    };
    for r in run_list_recipes {
        runner.load(r, attrs)?;
    }
    runner.finish()
}

/// Loads attribute files as chef-client's compiler does: every file through `include_attribute`,
/// so a file an earlier one included is not loaded again.
struct AttributeLoader<'a> {
    cookbooks: &'a Cookbooks,
    /// The Ruby files loaded (`cb::file`), each marked before it is evaluated, as Chef marks it.
    loaded: Vec<String>,
}

impl AttributeLoader<'_> {
    fn load_cookbook(&mut self, cb: &str, attrs: &mut AttributeSet) -> Result<(), CookbookError> {
        for file in self.cookbooks.attribute_files(cb)? {
            self.load_file(file, attrs)?;
        }
        Ok(())
    }

    fn load_file(
        &mut self,
        file: AttributeFile,
        attrs: &mut AttributeSet,
    ) -> Result<(), CookbookError> {
        let source = Source::AttributeFile {
            cookbook: file.cookbook.clone(),
            file: file.file.clone(),
        };
        match &file.body {
            FileBody::Yaml(doc) => {
                let context = file.path.display().to_string();
                let layers = layers_from_document(&context, doc)
                    .map_err(|source| CookbookError::Model { context, source })?;
                for (component, value) in layers {
                    attrs.push(component, source.clone(), value);
                }
            }
            FileBody::Ruby(text) => {
                let short = file.file.strip_suffix(".rb").unwrap_or(&file.file);
                let full = format!("{}::{short}", file.cookbook);
                if self.loaded.contains(&full) {
                    return Ok(());
                }
                self.loaded.push(full);
                ruby::on_ruby_stack(&file.path, || {
                    let program = ruby::parse(&file.path, text)?;
                    eval::attribute_file(&program, attrs, source, Some(self))
                })?;
            }
        }
        Ok(())
    }
}

impl eval::AttributeLoader for AttributeLoader<'_> {
    fn node_name(&self) -> Option<String> {
        self.cookbooks.node_name().map(str::to_owned)
    }

    fn include_attribute(
        &mut self,
        full: &str,
        attrs: &mut AttributeSet,
        at: CookbookError,
    ) -> Result<(), CookbookError> {
        if self.loaded.iter().any(|l| l == full) {
            return Ok(());
        }
        let (cb, short) = full.split_once("::").unwrap_or((full, "default"));
        let want = format!("{short}.rb");
        let files = match self.cookbooks.attribute_files(cb) {
            Ok(files) => files,
            Err(e) => return Err(at.because(format!("cookbook {cb:?}: {e}"))),
        };
        let Some(file) = files.into_iter().find(|f| f.file == want) else {
            return Err(at.because(format!(
                "no file attributes/{want} in cookbook {cb:?} (Chef raises AttributeNotFound)"
            )));
        };
        self.load_file(file, attrs)
    }
}

enum Item {
    Compiled(RecipeSource),
    Ruby(Vec<ResourceDecl>),
}

struct Runner<'a> {
    cookbooks: &'a Cookbooks,
    order: Vec<String>,
    loaded: Vec<String>,
    items: Vec<(String, Item)>,
}

impl Runner<'_> {
    fn load(&mut self, recipe: &str, attrs: &mut AttributeSet) -> Result<(), CookbookError> {
        let full = full_recipe_name(recipe);
        if self.loaded.contains(&full) {
            return Ok(());
        }
        // Marked before evaluation, as Chef does, so recipes including each other end.
        self.loaded.push(full.clone());
        let (cb, rec) = full.split_once("::").unwrap_or((&full, "default"));
        let source = Source::Recipe {
            recipe: full.clone(),
        };
        let item = match self.cookbooks.load_recipe(cb, rec)? {
            Some(file) => match file.body {
                RecipeBody::Yaml {
                    attributes,
                    resources,
                } => {
                    let context = file.path.display().to_string();
                    let layers = layers_from_document(&context, &attributes)
                        .map_err(|source| CookbookError::Model { context, source })?;
                    for (component, value) in layers {
                        attrs.push(component, source.clone(), value);
                    }
                    Item::Compiled(RecipeSource::Declarative(resources))
                }
                RecipeBody::Ruby(text) => Item::Ruby(ruby::on_ruby_stack(&file.path, || {
                    let program = ruby::parse(&file.path, &text)?;
                    eval::recipe(&program, attrs, source, self)
                })?),
            },
            None if full == BUILTIN_RECIPES[0] => Item::Compiled(RecipeSource::BuiltinVlans),
            None if full == BUILTIN_RECIPES[1] => Item::Compiled(RecipeSource::BuiltinLinks),
            None if full == BUILTIN_RECIPES[2] => Item::Compiled(RecipeSource::BuiltinLags),
            None if full == BUILTIN_RECIPES[3] => Item::Compiled(RecipeSource::BuiltinL3),
            None => {
                let mut known = self.cookbooks.recipe_names(cb);
                known.extend(BUILTIN_RECIPES.iter().map(|r| r.to_string()));
                let known: Vec<&str> = known.iter().map(String::as_str).collect();
                let hint = crate::inventory::nearest(&full, &known)
                    .map(|n| format!("; did you mean {n}?"))
                    .unwrap_or_default();
                return Err(CookbookError::UnknownRecipe {
                    recipe: recipe.to_owned(),
                    path: format!("cookbooks/{cb}/recipes/{rec}.yml or .rb"),
                    hint,
                });
            }
        };
        self.items.push((full, item));
        Ok(())
    }

    /// Ruby recipes' resources mapped together (VLAN names resolve across the whole run).
    fn finish(self) -> Result<Vec<(String, RecipeSource)>, CookbookError> {
        let ruby: Vec<(String, Vec<ResourceDecl>)> = self
            .items
            .iter()
            .filter_map(|(name, item)| match item {
                Item::Ruby(d) => Some((name.clone(), d.clone())),
                Item::Compiled(_) => None,
            })
            .collect();
        let mut mapped = netdev::to_declarative(&ruby)?.into_iter();
        let mut out = Vec::with_capacity(self.items.len());
        for (name, item) in self.items {
            let source = match item {
                Item::Compiled(s) => s,
                Item::Ruby(_) => {
                    let items: Vec<Value> = mapped.next().map(|(_, v)| v).unwrap_or_default();
                    RecipeSource::Declarative(items)
                }
            };
            out.push((name, source));
        }
        Ok(out)
    }
}

impl Host for Runner<'_> {
    fn node_name(&self) -> Option<String> {
        self.cookbooks.node_name().map(str::to_owned)
    }

    fn include_recipe(
        &mut self,
        name: &str,
        attrs: &mut AttributeSet,
        at: CookbookError,
    ) -> Result<(), CookbookError> {
        let cb = cookbook_of(name);
        if !self.order.iter().any(|c| c == cb) {
            // Chef's `RunContext#load_recipe` (CHEF-4367) warns and loads the recipe when the cookbook
            // is there; its attribute files stay unloaded. From a Chef server the cookbook would not
            // have been synchronised, and the load fails as an unknown recipe.
            tracing::warn!(
                "{at}MissingCookbookDependency: recipe `{name}` is not in the run-list, and cookbook {cb:?} is not a dependency of any cookbook in it (add `depends {cb:?}` to the including cookbook's metadata.rb)"
            );
        }
        self.load(name, attrs)
    }

    fn data_bag(
        &mut self,
        bag: &str,
        item: Option<&str>,
        at: &CookbookError,
    ) -> Result<Value, CookbookError> {
        self.cookbooks.data_bag(bag, item, at)
    }

    fn encrypted_data_bag_item(
        &mut self,
        bag: &str,
        item: &str,
        at: &CookbookError,
    ) -> Result<Value, CookbookError> {
        self.cookbooks.encrypted_data_bag_item(bag, item, at)
    }
}
