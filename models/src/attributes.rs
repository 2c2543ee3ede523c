//! Attribute precedence and merge: the one place netgw resolves attributes.
//!
//! Chef keeps ten attribute components and merges them in this order, low to high
//! (chef/chef `lib/chef/node/attribute.rb`, "About Attributes" precedence table):
//!
//! ```text
//!  default group:   default < env_default < role_default < force_default
//!  then:            normal
//!  override group:  override < role_override < env_override < force_override
//!  then:            automatic
//! ```
//!
//! Note the reversal: for defaults a role beats the environment, for overrides the environment beats a
//! role. With the sources that feed each component this gives the documented 15 positions (attribute
//! file < recipe inside each of default, force_default, normal, override and force_override).
//!
//! Merge rules, exactly as `attribute.rb` does them:
//! * inside the default group and inside the override group (`merge_defaults`/`merge_overrides`, which
//!   use `deep_merge!`): hashes merge recursively, arrays are unioned (`|`, duplicates dropped, order
//!   kept), anything else is replaced; a `null` never replaces a value;
//! * between default group, normal, override group and automatic (`hash_only_merge!`): hashes merge
//!   recursively, arrays and everything else are replaced by the higher level; `null` never replaces.
//!
//! Inside one component, sources combine the way Chef builds them:
//! * attribute files, recipes, the node's own normal attributes and classifier parameters are
//!   successive assignments: a later source merges hashes into an earlier one and replaces its arrays
//!   and scalars;
//! * roles combine with `Chef::Mixin::DeepMerge.merge` (`run_list_expansion.rb` `apply_role_attributes`):
//!   hashes merge, arrays union, a later role wins on scalars. Because a role's attributes are applied
//!   after the roles it includes, a parent role beats its children and a later role an earlier one.

use crate::error::ModelError;
use crate::node::Attrs;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// The ten attribute components, in precedence order (low to high).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    Default,
    EnvDefault,
    RoleDefault,
    ForceDefault,
    Normal,
    Override,
    RoleOverride,
    EnvOverride,
    ForceOverride,
    Automatic,
}

impl Component {
    pub const ALL: [Component; 10] = [
        Component::Default,
        Component::EnvDefault,
        Component::RoleDefault,
        Component::ForceDefault,
        Component::Normal,
        Component::Override,
        Component::RoleOverride,
        Component::EnvOverride,
        Component::ForceOverride,
        Component::Automatic,
    ];
    const DEFAULTS: [Component; 4] = [
        Component::Default,
        Component::EnvDefault,
        Component::RoleDefault,
        Component::ForceDefault,
    ];
    const OVERRIDES: [Component; 4] = [
        Component::Override,
        Component::RoleOverride,
        Component::EnvOverride,
        Component::ForceOverride,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Component::Default => "default",
            Component::EnvDefault => "env_default",
            Component::RoleDefault => "role_default",
            Component::ForceDefault => "force_default",
            Component::Normal => "normal",
            Component::Override => "override",
            Component::RoleOverride => "role_override",
            Component::EnvOverride => "env_override",
            Component::ForceOverride => "force_override",
            Component::Automatic => "automatic",
        }
    }

    /// The component an attribute-file or recipe key (`default:`, `force_default:` ...) writes to.
    pub fn from_file_key(key: &str) -> Option<Component> {
        Some(match key {
            "default" => Component::Default,
            "force_default" => Component::ForceDefault,
            "normal" => Component::Normal,
            "override" => Component::Override,
            "force_override" => Component::ForceOverride,
            _ => return None,
        })
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a layer of attributes came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// The node object's own attributes (normal from desired state).
    Node,
    /// Node-level parameters from an external node classifier (this run only).
    Classifier,
    /// Intended state the inventory's source holds (Nautobot: VLANs, interfaces), this run only.
    Inventory {
        source: String,
    },
    /// A cookbook attribute file, `cookbooks/CB/attributes/FILE`.
    AttributeFile {
        cookbook: String,
        file: String,
    },
    /// A recipe's `attributes:` block.
    Recipe {
        recipe: String,
    },
    Role {
        role: String,
    },
    /// A Policyfile node's policy (its attributes sit where roles' would).
    Policy {
        policy: String,
        revision: String,
    },
    Environment {
        environment: String,
    },
    /// Facts gathered from the device.
    Automatic,
}

impl Source {
    /// Order of sources inside one component: the node's stored normal attributes come first, then the
    /// classifier's, then attribute files, then recipes (which run after all attribute files load).
    fn rank(&self) -> u8 {
        match self {
            Source::Node => 0,
            Source::Classifier | Source::Inventory { .. } => 1,
            Source::AttributeFile { .. } => 2,
            Source::Recipe { .. } => 3,
            Source::Role { .. }
            | Source::Policy { .. }
            | Source::Environment { .. }
            | Source::Automatic => 4,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Node => f.write_str("node"),
            Source::Classifier => f.write_str("classifier"),
            Source::Inventory { source } => write!(f, "inventory {source}"),
            Source::AttributeFile { cookbook, file } => {
                write!(f, "attribute file {cookbook}/attributes/{file}")
            }
            Source::Recipe { recipe } => write!(f, "recipe {recipe}"),
            Source::Role { role } => write!(f, "role {role}"),
            Source::Policy { policy, revision } => {
                let short: String = revision.chars().take(10).collect();
                write!(f, "policy {policy} (revision {short})")
            }
            Source::Environment { environment } => write!(f, "environment {environment}"),
            Source::Automatic => f.write_str("automatic (device facts)"),
        }
    }
}

/// One set of attributes from one source at one component.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub component: Component,
    pub source: Source,
    pub value: Attrs,
    /// Paths this layer assigned a whole hash to: what earlier layers of the component hold there is
    /// replaced, not merged. Chef keeps one mutable hash per precedence level that successive Ruby
    /// attribute files write into, so `default['a'] = {...}` in a later file drops the earlier keys.
    pub replaces: Vec<Vec<String>>,
}

/// The position (1..=15) of a component/source pair in the documented precedence table; 0 for the
/// node's and classifier's normal attributes, which the table does not list separately (they sit just
/// below the attribute files' normal).
pub fn table_position(component: Component, source: &Source) -> u8 {
    let recipe = matches!(source, Source::Recipe { .. });
    match component {
        Component::Default => 1 + recipe as u8,
        Component::EnvDefault => 3,
        Component::RoleDefault => 4,
        Component::ForceDefault => 5 + recipe as u8,
        Component::Normal => match source {
            Source::Node | Source::Classifier => 0,
            _ => 7 + recipe as u8,
        },
        Component::Override => 9 + recipe as u8,
        Component::RoleOverride => 11,
        Component::EnvOverride => 12,
        Component::ForceOverride => 13 + recipe as u8,
        Component::Automatic => 15,
    }
}

/// All the layers of one node, and the merged view.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AttributeSet {
    layers: Vec<Layer>,
}

/// A resolved attribute: its merged value, and which component and source won.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolution {
    pub path: String,
    pub value: Value,
    pub level: Component,
    /// The source that set the winning value (for a hash, the highest-precedence contributor).
    pub source: String,
    /// Every source with a value at this path, from highest to lowest precedence.
    pub contributors: Vec<Contributor>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contributor {
    pub level: Component,
    pub source: String,
    pub value: Value,
}

impl AttributeSet {
    pub fn new() -> Self {
        AttributeSet::default()
    }

    /// Add a layer. Layers of one component are kept in source order (node, classifier, attribute
    /// files, recipes), and in insertion order within the same kind of source.
    pub fn push(&mut self, component: Component, source: Source, value: Attrs) {
        self.push_replacing(component, source, value, Vec::new());
    }

    /// [`AttributeSet::push`] a layer that replaces earlier layers' values at `replaces` (see
    /// [`Layer::replaces`]).
    pub fn push_replacing(
        &mut self,
        component: Component,
        source: Source,
        value: Attrs,
        replaces: Vec<Vec<String>>,
    ) {
        let layer = Layer {
            component,
            source,
            value,
            replaces,
        };
        let key = (layer.component, layer.source.rank());
        let at = self
            .layers
            .iter()
            .rposition(|l| (l.component, l.source.rank()) <= key)
            .map(|i| i + 1)
            .unwrap_or(0);
        self.layers.insert(at, layer);
    }

    /// Replace every layer of one component with a single new one (a run's fresh facts replace the
    /// automatic attributes saved by the last run).
    pub fn replace(&mut self, component: Component, source: Source, value: Attrs) {
        self.layers.retain(|l| l.component != component);
        self.push(component, source, value);
    }

    /// Keep only the layers `keep` accepts (a recompile drops the cookbooks' layers and evaluates
    /// them again).
    pub fn retain(&mut self, keep: impl FnMut(&Layer) -> bool) {
        self.layers.retain(keep);
    }

    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The value of one component, its sources combined (assignment semantics, or DeepMerge for roles).
    pub fn component(&self, component: Component) -> Value {
        let mut layers = self
            .layers
            .iter()
            .filter(|l| l.component == component)
            .peekable();
        if layers.peek().is_none() {
            return Value::Null;
        }
        let mut acc = Attrs::new();
        for l in layers {
            let rule = match l.source {
                Source::Role { .. } => Rule::Role,
                _ => {
                    for path in &l.replaces {
                        remove_path_in(&mut acc, path);
                    }
                    Rule::Assign
                }
            };
            merge_map(&mut acc, Cow::Borrowed(&l.value), rule);
        }
        Value::Object(acc)
    }

    /// Merge one component into `acc` by `rule`. A component of one layer (the usual case) is merged
    /// straight from its layer, cloning only what it adds or replaces; several are combined first.
    fn component_into(&self, acc: &mut Attrs, component: Component, rule: Rule) {
        let mut layers = self.layers.iter().filter(|l| l.component == component);
        match (layers.next(), layers.next()) {
            (None, _) => {}
            (Some(only), None) => merge_map(acc, Cow::Borrowed(&only.value), rule),
            _ => {
                if let Value::Object(m) = self.component(component) {
                    merge_map(acc, Cow::Owned(m), rule);
                }
            }
        }
    }

    /// The combined default group (`node.default` as Chef saves it: default, env, role and force
    /// defaults merged).
    pub fn combined_default(&self) -> Value {
        self.group(&Component::DEFAULTS)
    }

    /// The combined override group (`node.override` as Chef saves it).
    pub fn combined_override(&self) -> Value {
        self.group(&Component::OVERRIDES)
    }

    fn group(&self, components: &[Component]) -> Value {
        if !self
            .layers
            .iter()
            .any(|l| components.contains(&l.component))
        {
            return Value::Null;
        }
        let mut acc = Attrs::new();
        self.group_into(&mut acc, components);
        Value::Object(acc)
    }

    /// `merge_defaults`/`merge_overrides`: the group's components deep-merged into `acc`, low to high.
    fn group_into(&self, acc: &mut Attrs, components: &[Component]) {
        for c in components {
            self.component_into(acc, *c, Rule::Deep);
        }
    }

    /// The merged attributes the node sees (`node[...]` in a recipe).
    ///
    /// One accumulator, merged into in place: the default group is built straight into it (the first
    /// `hash_only_merge!` onto nothing is the group itself), then normal, the override group (built
    /// apart: inside it arrays union, against the defaults they replace) and automatic. Layers are
    /// read by reference, so what the result holds is copied once and nothing else is.
    pub fn merged(&self) -> Attrs {
        let mut acc = Attrs::new();
        self.group_into(&mut acc, &Component::DEFAULTS);
        self.component_into(&mut acc, Component::Normal, Rule::HashOnly);
        let mut overrides = Attrs::new();
        self.group_into(&mut overrides, &Component::OVERRIDES);
        merge_map(&mut acc, Cow::Owned(overrides), Rule::HashOnly);
        self.component_into(&mut acc, Component::Automatic, Rule::HashOnly);
        acc
    }

    /// The layers with a value at `path`, each with that value, highest precedence first: components
    /// from high to low, and within a component the later source first (it is the one whose
    /// assignment or merge won). The first is the layer that set what a run sees there.
    pub fn contributing(&self, path: &[String]) -> Vec<(&Layer, Value)> {
        let mut out = Vec::new();
        for c in Component::ALL.iter().rev() {
            for l in self.layers.iter().rev().filter(|l| l.component == *c) {
                let obj = Value::Object(l.value.clone());
                if let Some(v) = get_path(&obj, path).filter(|v| !v.is_null()) {
                    out.push((l, v.clone()));
                }
            }
        }
        out
    }

    /// Resolve one attribute path: its merged value, the winning level and source, and every
    /// contributor. `None` when the merged attributes have nothing at that path.
    pub fn resolve(&self, path: &[String]) -> Option<Resolution> {
        let merged = Value::Object(self.merged());
        let value = get_path(&merged, path)?.clone();
        if value.is_null() {
            return None;
        }
        let contributors: Vec<Contributor> = self
            .contributing(path)
            .into_iter()
            .map(|(l, value)| Contributor {
                level: l.component,
                source: l.source.to_string(),
                value,
            })
            .collect();
        let top = contributors.first()?;
        Some(Resolution {
            path: path.join("."),
            value,
            level: top.level,
            source: top.source.clone(),
            contributors,
        })
    }
}

/// Split `a.b.c` into a path. Empty segments are an error.
pub fn parse_dotted_path(path: &str) -> Result<Vec<String>, ModelError> {
    if path.is_empty() {
        return Err(ModelError::InvalidAttributePath {
            path: path.into(),
            reason: "is empty",
        });
    }
    let parts: Vec<String> = path.split('.').map(str::to_owned).collect();
    if parts.iter().any(String::is_empty) {
        return Err(ModelError::InvalidAttributePath {
            path: path.into(),
            reason: "has an empty segment",
        });
    }
    Ok(parts)
}

/// Navigate a value by keys; array elements by decimal index.
pub fn get_path<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut cur = v;
    for k in path {
        cur = match cur {
            Value::Object(m) => m.get(k)?,
            Value::Array(a) => a.get(k.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Ruby's `a | b`: elements of `a` then of `b`, each once, order kept.
fn array_union(a: Vec<Value>, b: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(a.len() + b.len());
    for v in a.into_iter().chain(b) {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// How one precedence level or source merges onto another (the four merges Chef uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// `deep_merge!` inside the default and override groups: arrays union, `null` never replaces.
    Deep,
    /// `hash_only_merge!` between levels: arrays replaced, `null` never replaces.
    HashOnly,
    /// `Chef::Mixin::DeepMerge.merge` between roles: arrays union, `null` replaces.
    Role,
    /// Successive assignments in one component: arrays and `null` replace.
    Assign,
}

/// Merge `with` into `onto` in place by `rule`. Hashes merge key by key, keeping each existing key
/// where it is (as Ruby's in-place merge does); what `with` adds or replaces is moved when `with` is
/// owned and cloned when it is borrowed, so merging a layer by reference copies only what it
/// contributes.
fn merge_in(onto: &mut Value, with: Cow<'_, Value>, rule: Rule) {
    match (onto, with) {
        (Value::Object(a), Cow::Borrowed(Value::Object(b))) => merge_map(a, Cow::Borrowed(b), rule),
        (Value::Object(a), Cow::Owned(Value::Object(b))) => merge_map(a, Cow::Owned(b), rule),
        (Value::Array(a), with) if matches!(rule, Rule::Deep | Rule::Role) && with.is_array() => {
            if let Value::Array(b) = with.into_owned() {
                *a = array_union(std::mem::take(a), b);
            }
        }
        (_, with) if with.is_null() && matches!(rule, Rule::Deep | Rule::HashOnly) => {}
        (onto, with) => *onto = with.into_owned(),
    }
}

/// [`merge_in`] of two hashes.
fn merge_map(onto: &mut Attrs, with: Cow<'_, Attrs>, rule: Rule) {
    match with {
        Cow::Borrowed(b) => {
            for (k, v) in b {
                match onto.get_mut(k) {
                    Some(old) => merge_in(old, Cow::Borrowed(v), rule),
                    None => {
                        onto.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        Cow::Owned(b) => {
            for (k, v) in b {
                match onto.get_mut(&k) {
                    Some(old) => merge_in(old, Cow::Owned(v), rule),
                    None => {
                        onto.insert(k, v);
                    }
                }
            }
        }
    }
}

fn merged_by(mut onto: Value, with: Value, rule: Rule) -> Value {
    merge_in(&mut onto, Cow::Owned(with), rule);
    onto
}

/// `attribute.rb` `deep_merge!(merge_onto, merge_with)`: used inside the default and override groups.
pub fn deep_merge(onto: Value, with: Value) -> Value {
    merged_by(onto, with, Rule::Deep)
}

/// `attribute.rb` `hash_only_merge!(merge_onto, merge_with)`: used between precedence levels.
pub fn hash_only_merge(onto: Value, with: Value) -> Value {
    merged_by(onto, with, Rule::HashOnly)
}

/// `Chef::Mixin::DeepMerge.merge(first, second)` (`deep_merge!(second, first)`): how role attributes
/// accumulate. Hashes merge, arrays union (earlier first), anything else is replaced by `second`.
pub fn role_merge(first: Value, second: Value) -> Value {
    merged_by(first, second, Rule::Role)
}

/// Successive assignments in one component (`default['a']['b'] = x` in one file, then another):
/// hashes merge, arrays and scalars are replaced.
pub fn assign_merge(earlier: Value, later: Value) -> Value {
    merged_by(earlier, later, Rule::Assign)
}

/// [`assign_merge`] after removing from `earlier` every path in `replaces` (whole-hash assignments of
/// the later source: Chef's `level['a'] = {...}` replaces the hash an earlier file built).
pub fn assign_replacing(earlier: Value, later: Value, replaces: &[Vec<String>]) -> Value {
    let mut earlier = earlier;
    if let Value::Object(m) = &mut earlier {
        for path in replaces {
            remove_path_in(m, path);
        }
    }
    assign_merge(earlier, later)
}

fn remove_path_in(m: &mut Attrs, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = m;
    for k in parents {
        match cur.get_mut(k) {
            Some(Value::Object(next)) => cur = next,
            _ => return,
        }
    }
    cur.remove(last);
}

/// Split an attribute-file or recipe `attributes:` document into component layers. Top-level keys must
/// be `default`, `force_default`, `normal`, `override` or `force_override`, each a mapping.
pub fn layers_from_document(
    context: &str,
    doc: &Value,
) -> Result<Vec<(Component, Attrs)>, ModelError> {
    let map = match doc {
        Value::Null => return Ok(Vec::new()),
        Value::Object(m) => m,
        _ => {
            return Err(ModelError::InvalidField {
                context: context.into(),
                field: "(document)".into(),
                reason: "must be a mapping with keys default, force_default, normal, override, force_override"
                    .into(),
            });
        }
    };
    let mut out = Vec::new();
    for (k, v) in map {
        let comp = Component::from_file_key(k).ok_or_else(|| ModelError::InvalidField {
            context: context.into(),
            field: k.clone(),
            reason: "unknown precedence level (expected default, force_default, normal, override, force_override)"
                .into(),
        })?;
        match v {
            Value::Object(m) => out.push((comp, m.clone())),
            Value::Null => {}
            _ => {
                return Err(ModelError::InvalidField {
                    context: context.into(),
                    field: k.clone(),
                    reason: "must be a mapping of attributes".into(),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_whole_hash_assignment_replaces_an_earlier_files_hash() {
        let file = |f: &str| Source::AttributeFile {
            cookbook: "cb".into(),
            file: f.into(),
        };
        let obj = |v: Value| v.as_object().cloned().unwrap();
        let mut a = AttributeSet::new();
        a.push(
            Component::Default,
            file("default.rb"),
            obj(serde_json::json!({"v": {"10": "x", "20": "y"}, "keep": 1})),
        );
        a.push_replacing(
            Component::Default,
            file("later.rb"),
            obj(serde_json::json!({"v": {"30": "z"}})),
            vec![vec!["v".into()]],
        );
        a.push(
            Component::Default,
            file("zz.rb"),
            obj(serde_json::json!({"v": {"40": "w"}})),
        );
        assert_eq!(
            a.component(Component::Default),
            serde_json::json!({"v": {"30": "z", "40": "w"}, "keep": 1})
        );
    }
    use serde_json::json;

    fn obj(v: Value) -> Attrs {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    fn role(name: &str) -> Source {
        Source::Role { role: name.into() }
    }
    fn file(cb: &str) -> Source {
        Source::AttributeFile {
            cookbook: cb.into(),
            file: "default.yml".into(),
        }
    }
    fn recipe(r: &str) -> Source {
        Source::Recipe { recipe: r.into() }
    }
    fn env(e: &str) -> Source {
        Source::Environment {
            environment: e.into(),
        }
    }
    fn path(p: &str) -> Vec<String> {
        parse_dotted_path(p).unwrap()
    }

    // ---- The "Attribute Arrays" deep-merge worked examples (role_or_environment 1 + 2) ----
    // Both operands are at the same level (two roles), so role_merge applies.

    #[test]
    fn deep_merge_substitution_of_a_string() {
        assert_eq!(
            role_merge(json!({"x":"1","y":"2"}), json!({"y":"3"})),
            json!({"x":"1","y":"3"})
        );
    }

    #[test]
    fn deep_merge_substitution_of_a_boolean() {
        assert_eq!(
            role_merge(json!({"x":true,"y":false}), json!({"y":true})),
            json!({"x":true,"y":true})
        );
    }

    #[test]
    fn deep_merge_substitution_of_an_array_by_a_hash() {
        assert_eq!(
            role_merge(json!(["1", "2", "3"]), json!({"x":"1","y":"2"})),
            json!({"x":"1","y":"2"})
        );
    }

    #[test]
    fn deep_merge_addition_of_a_string_in_a_hash() {
        assert_eq!(
            role_merge(json!({"x":"1","y":"2"}), json!({"z":"3"})),
            json!({"x":"1","y":"2","z":"3"})
        );
    }

    #[test]
    fn deep_merge_addition_of_a_string_in_an_array() {
        assert_eq!(
            role_merge(json!(["1", "2"]), json!(["3"])),
            json!(["1", "2", "3"])
        );
    }

    #[test]
    fn deep_merge_addition_in_a_multi_level_hash() {
        assert_eq!(
            role_merge(json!({"x":{"y":"2"}}), json!({"x":{"z":"3"}})),
            json!({"x":{"y":"2","z":"3"}})
        );
    }

    #[test]
    fn deep_merge_addition_in_a_multi_level_array() {
        assert_eq!(
            role_merge(json!([[1, 2]]), json!([[3]])),
            json!([[1, 2], [3]])
        );
    }

    #[test]
    fn deep_merge_baseline_and_web_roles_give_startservers_30() {
        // roles/baseline: override apache listen_ports [80], prefork 20/20/40.
        // roles/web: run_list role[baseline]; override apache.prefork.startservers 30.
        // The apache2 cookbook's attribute file supplies the rest as defaults.
        let mut set = AttributeSet::new();
        set.push(
            Component::Default,
            file("apache2"),
            obj(json!({"apache": {"listen_ports": [80, 443], "prefork": {
                "startservers": 16, "minspareservers": 16, "maxspareservers": 32,
                "serverlimit": 400, "maxclients": 400, "maxrequestsperchild": 10000}}})),
        );
        // Expansion order: baseline (included by web) is applied first, then web.
        set.push(
            Component::RoleOverride,
            role("baseline"),
            obj(json!({"apache": {"listen_ports": [80], "prefork": {
                "startservers": 20, "minspareservers": 20, "maxspareservers": 40}}})),
        );
        set.push(
            Component::RoleOverride,
            role("web"),
            obj(json!({"apache": {"prefork": {"startservers": 30}}})),
        );
        let merged = Value::Object(set.merged());
        assert_eq!(
            merged["apache"]["prefork"],
            json!({"startservers": 30, "minspareservers": 20, "maxspareservers": 40,
                   "serverlimit": 400, "maxclients": 400, "maxrequestsperchild": 10000})
        );
        // Arrays are replaced between the default and override groups.
        assert_eq!(merged["apache"]["listen_ports"], json!([80]));
        let r = set.resolve(&path("apache.prefork.startservers")).unwrap();
        assert_eq!(
            (r.level, r.source.as_str()),
            (Component::RoleOverride, "role web")
        );
        let r = set.resolve(&path("apache.prefork.serverlimit")).unwrap();
        assert_eq!(
            (r.level, r.source.as_str()),
            (
                Component::Default,
                "attribute file apache2/attributes/default.yml"
            )
        );
    }

    // ---- The 15-position precedence table ----

    /// The sources of the documented table, low to high.
    fn table() -> Vec<(Component, Source)> {
        vec![
            (Component::Default, file("cb")),
            (Component::Default, recipe("cb::r")),
            (Component::EnvDefault, env("prod")),
            (Component::RoleDefault, role("leaf")),
            (Component::ForceDefault, file("cb")),
            (Component::ForceDefault, recipe("cb::r")),
            (Component::Normal, file("cb")),
            (Component::Normal, recipe("cb::r")),
            (Component::Override, file("cb")),
            (Component::Override, recipe("cb::r")),
            (Component::RoleOverride, role("leaf")),
            (Component::EnvOverride, env("prod")),
            (Component::ForceOverride, file("cb")),
            (Component::ForceOverride, recipe("cb::r")),
            (Component::Automatic, Source::Automatic),
        ]
    }

    #[test]
    fn fifteen_positions_each_beats_all_below() {
        let t = table();
        for (i, (c, s)) in t.iter().enumerate() {
            assert_eq!(table_position(*c, s) as usize, i + 1, "{c} {s}");
        }
        // For every position k, with positions 1..=k all setting `x`, position k wins;
        // inserted in reverse order to prove ordering does not depend on insertion.
        for k in 0..t.len() {
            let mut set = AttributeSet::new();
            for (i, (c, s)) in t.iter().enumerate().take(k + 1).rev() {
                set.push(*c, s.clone(), obj(json!({"x": i + 1})));
            }
            let r = set.resolve(&path("x")).unwrap();
            assert_eq!(r.value, json!(k + 1), "position {} must win", k + 1);
            assert_eq!(r.level, t[k].0);
        }
    }

    #[test]
    fn role_beats_environment_for_default_but_not_for_override() {
        let mut set = AttributeSet::new();
        set.push(Component::EnvDefault, env("prod"), obj(json!({"d": "env"})));
        set.push(
            Component::RoleDefault,
            role("leaf"),
            obj(json!({"d": "role"})),
        );
        set.push(
            Component::RoleOverride,
            role("leaf"),
            obj(json!({"o": "role"})),
        );
        set.push(
            Component::EnvOverride,
            env("prod"),
            obj(json!({"o": "env"})),
        );
        let m = set.merged();
        assert_eq!(m["d"], "role");
        assert_eq!(m["o"], "env");
    }

    #[test]
    fn normal_beats_force_default_and_loses_to_override() {
        let mut set = AttributeSet::new();
        set.push(
            Component::ForceDefault,
            recipe("a"),
            obj(json!({"x": 1, "y": 1})),
        );
        set.push(
            Component::Normal,
            Source::Node,
            obj(json!({"x": 2, "y": 2})),
        );
        set.push(Component::Override, file("a"), obj(json!({"y": 3})));
        let m = set.merged();
        assert_eq!((m["x"].clone(), m["y"].clone()), (json!(2), json!(3)));
    }

    // ---- Array rules ----

    #[test]
    fn arrays_union_within_the_default_group() {
        let mut set = AttributeSet::new();
        set.push(
            Component::Default,
            file("a"),
            obj(json!({"ntp": ["a", "b"]})),
        );
        set.push(
            Component::EnvDefault,
            env("prod"),
            obj(json!({"ntp": ["b", "c"]})),
        );
        set.push(
            Component::RoleDefault,
            role("r"),
            obj(json!({"ntp": ["d"]})),
        );
        set.push(
            Component::ForceDefault,
            recipe("a"),
            obj(json!({"ntp": ["a", "e"]})),
        );
        assert_eq!(set.merged()["ntp"], json!(["a", "b", "c", "d", "e"]));
    }

    #[test]
    fn arrays_union_within_the_override_group() {
        let mut set = AttributeSet::new();
        set.push(Component::Override, recipe("a"), obj(json!({"v": [1]})));
        set.push(
            Component::RoleOverride,
            role("r"),
            obj(json!({"v": [2, 1]})),
        );
        set.push(Component::EnvOverride, env("e"), obj(json!({"v": [3]})));
        set.push(Component::ForceOverride, file("a"), obj(json!({"v": [4]})));
        assert_eq!(set.merged()["v"], json!([1, 2, 3, 4]));
    }

    #[test]
    fn arrays_are_replaced_between_groups() {
        let mut set = AttributeSet::new();
        set.push(Component::Default, file("a"), obj(json!({"v": [1, 2]})));
        set.push(Component::Normal, Source::Node, obj(json!({"v": [3]})));
        assert_eq!(set.merged()["v"], json!([3]));
        set.push(Component::Override, file("a"), obj(json!({"v": [4]})));
        assert_eq!(set.merged()["v"], json!([4]));
        set.push(
            Component::Automatic,
            Source::Automatic,
            obj(json!({"v": [5]})),
        );
        assert_eq!(set.merged()["v"], json!([5]));
    }

    #[test]
    fn arrays_replaced_by_successive_assignments_in_one_component() {
        // Two attribute files assigning the same default: the later replaces (the gist case in Chef).
        let mut set = AttributeSet::new();
        set.push(
            Component::Default,
            file("one"),
            obj(json!({"exclude": ["one", "two", "three"]})),
        );
        set.push(
            Component::Default,
            file("two"),
            obj(json!({"exclude": ["three", "four", "five"]})),
        );
        assert_eq!(set.merged()["exclude"], json!(["three", "four", "five"]));
    }

    #[test]
    fn arrays_union_across_roles_at_one_level() {
        let mut set = AttributeSet::new();
        set.push(Component::RoleDefault, role("a"), obj(json!({"v": [1, 2]})));
        set.push(Component::RoleDefault, role("b"), obj(json!({"v": [2, 3]})));
        assert_eq!(set.merged()["v"], json!([1, 2, 3]));
    }

    #[test]
    fn later_role_beats_earlier_and_parent_beats_included() {
        // Layers arrive in application order: included role first, then its parent, then a later role.
        let mut set = AttributeSet::new();
        set.push(
            Component::RoleDefault,
            role("child"),
            obj(json!({"a": "child", "b": "child", "c": "child"})),
        );
        set.push(
            Component::RoleDefault,
            role("parent"),
            obj(json!({"a": "parent", "b": "parent"})),
        );
        set.push(
            Component::RoleDefault,
            role("later"),
            obj(json!({"a": "later"})),
        );
        let m = set.merged();
        assert_eq!(
            (m["a"].as_str(), m["b"].as_str(), m["c"].as_str()),
            (Some("later"), Some("parent"), Some("child"))
        );
        assert_eq!(set.resolve(&path("b")).unwrap().source, "role parent");
    }

    #[test]
    fn null_never_replaces_between_levels() {
        let mut set = AttributeSet::new();
        set.push(Component::Default, file("a"), obj(json!({"x": 1})));
        set.push(Component::Override, file("a"), obj(json!({"x": null})));
        assert_eq!(set.merged()["x"], json!(1));
    }

    #[test]
    fn hashes_deep_merge_across_levels_and_resolution_reports_contributors() {
        let mut set = AttributeSet::new();
        set.push(
            Component::Default,
            file("netdev"),
            obj(json!({"netdev": {"vlans": {"10": {"name": "a"}}}})),
        );
        set.push(
            Component::Normal,
            Source::Node,
            obj(json!({"netdev": {"vlans": {"20": {"name": "b"}}}})),
        );
        set.push(
            Component::Automatic,
            Source::Automatic,
            obj(json!({"hostname": "sw1"})),
        );
        let m = set.merged();
        assert_eq!(
            m["netdev"]["vlans"],
            json!({"10": {"name": "a"}, "20": {"name": "b"}})
        );
        let r = set.resolve(&path("netdev.vlans")).unwrap();
        assert_eq!(r.level, Component::Normal);
        assert_eq!(r.contributors.len(), 2);
        assert!(set.resolve(&path("netdev.nothing")).is_none());
        assert_eq!(
            set.resolve(&path("hostname")).unwrap().source,
            "automatic (device facts)"
        );
        assert!(parse_dotted_path("a..b").is_err());
    }

    #[test]
    fn combined_groups_are_what_chef_saves() {
        let mut set = AttributeSet::new();
        set.push(Component::Default, file("a"), obj(json!({"x": 1})));
        set.push(Component::RoleDefault, role("r"), obj(json!({"y": 2})));
        set.push(Component::Override, recipe("a"), obj(json!({"z": 3})));
        assert_eq!(set.combined_default(), json!({"x": 1, "y": 2}));
        assert_eq!(set.combined_override(), json!({"z": 3}));
    }

    #[test]
    fn attribute_documents_split_into_layers() {
        let doc = json!({"default": {"a": 1}, "override": {"b": 2}, "force_default": null});
        let l = layers_from_document("cookbooks/x/attributes/default.yml", &doc).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].0, Component::Default);
        let e = layers_from_document("f.yml", &json!({"defualt": {}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.yml") && e.contains("defualt"), "{e}");
        assert!(layers_from_document("f.yml", &json!({"default": [1]})).is_err());
        assert!(layers_from_document("f.yml", &json!([1])).is_err());
    }

    /// The merges as the by-value folds they replaced (chef/chef `attribute.rb`), kept as the oracle for
    /// the in-place merge: values compared, key order aside.
    mod reference {
        use serde_json::Value;

        fn union(a: Vec<Value>, b: Vec<Value>) -> Vec<Value> {
            let mut out = Vec::new();
            for v in a.into_iter().chain(b) {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            out
        }

        /// `union_arrays`: Deep and Role; `null_keeps`: Deep and HashOnly.
        pub fn merge(onto: Value, with: Value, union_arrays: bool, null_keeps: bool) -> Value {
            match (onto, with) {
                (Value::Object(mut a), Value::Object(b)) => {
                    for (k, v) in b {
                        let m = match a.remove(&k) {
                            Some(old) => merge(old, v, union_arrays, null_keeps),
                            None => v,
                        };
                        a.insert(k, m);
                    }
                    Value::Object(a)
                }
                (Value::Array(a), Value::Array(b)) if union_arrays => Value::Array(union(a, b)),
                (onto, Value::Null) if null_keeps => onto,
                (_, with) => with,
            }
        }
    }

    /// A small deterministic generator of nested attribute hashes with shared keys, arrays and nulls.
    fn generated(seed: &mut u64, depth: u32) -> Value {
        fn next(seed: &mut u64, n: u64) -> u64 {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) % n
        }
        match next(seed, if depth == 0 { 4 } else { 6 }) {
            0 => Value::Null,
            1 => json!(next(seed, 3)),
            2 => json!(["a", "b", "c"][next(seed, 3) as usize]),
            3 => json!([next(seed, 3), next(seed, 3)]),
            _ => {
                let mut m = Attrs::new();
                for _ in 0..next(seed, 4) {
                    let k = ["a", "b", "c", "d"][next(seed, 4) as usize].to_string();
                    let v = generated(seed, depth - 1);
                    m.insert(k, v);
                }
                Value::Object(m)
            }
        }
    }

    #[test]
    fn merged_in_place_matches_the_by_value_folds_of_attribute_rb() {
        let sources = [
            file("cb"),
            recipe("cb::r"),
            role("r1"),
            role("r2"),
            env("e"),
            Source::Node,
        ];
        let mut seed = 7u64;
        for case in 0..400 {
            let mut set = AttributeSet::new();
            let mut pushed = Vec::new();
            for i in 0..(3 + case % 9) {
                let c = Component::ALL[(generated(&mut seed, 0).to_string().len() + i) % 10];
                let src = sources[(case + i) % sources.len()].clone();
                let mut top = Attrs::new();
                top.insert("k".into(), generated(&mut seed, 3));
                top.insert(["a", "b"][i % 2].into(), generated(&mut seed, 2));
                let replaces = if i % 5 == 4 {
                    vec![vec!["k".to_string()]]
                } else {
                    Vec::new()
                };
                set.push_replacing(c, src.clone(), top.clone(), replaces.clone());
                pushed.push((c, src, top, replaces));
            }
            // The reference: each component folded from its layers (in the set's order), then the groups.
            let component = |c: Component| {
                let mut acc: Option<Value> = None;
                for l in set.layers().iter().filter(|l| l.component == c) {
                    let v = Value::Object(l.value.clone());
                    acc = Some(match acc {
                        None => v,
                        Some(mut prev) => match l.source {
                            Source::Role { .. } => reference::merge(prev, v, true, false),
                            _ => {
                                if let Value::Object(m) = &mut prev {
                                    for p in &l.replaces {
                                        m.remove(&p[0]);
                                    }
                                }
                                reference::merge(prev, v, false, false)
                            }
                        },
                    });
                }
                acc.unwrap_or(Value::Null)
            };
            let group = |cs: &[Component]| {
                cs.iter().fold(Value::Null, |acc, c| {
                    reference::merge(acc, component(*c), true, true)
                })
            };
            let want = [
                group(&Component::DEFAULTS),
                component(Component::Normal),
                group(&Component::OVERRIDES),
                component(Component::Automatic),
            ]
            .into_iter()
            .fold(Value::Null, |acc, v| reference::merge(acc, v, false, true));
            let want = match want {
                Value::Object(m) => m,
                _ => Attrs::new(),
            };
            assert_eq!(set.merged(), want, "case {case}: {pushed:?}");
            assert_eq!(
                set.combined_default(),
                group(&Component::DEFAULTS),
                "case {case}"
            );
            assert_eq!(
                set.combined_override(),
                group(&Component::OVERRIDES),
                "case {case}"
            );
            for c in Component::ALL {
                assert_eq!(set.component(c), component(c), "case {case} {c:?}");
            }
        }
    }

    #[test]
    fn a_merged_key_keeps_its_place() {
        let mut set = AttributeSet::new();
        set.push(
            Component::Default,
            file("a"),
            obj(json!({"x": 1, "y": 2, "z": 3})),
        );
        set.push(Component::Override, recipe("a"), obj(json!({"x": 9})));
        // Ruby's in-place merge keeps a key where it was; the by-value fold moved it to the end.
        assert_eq!(
            serde_json::to_string(&set.merged()).unwrap(),
            r#"{"x":9,"y":2,"z":3}"#
        );
    }
}
