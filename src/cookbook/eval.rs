//! Static evaluation of the Ruby that network cookbooks are written in: attribute files and recipes
//! are walked as an AST ([`super::ruby`]) and nothing is ever executed.
//!
//! The subset: attribute assignments at every precedence level (`default`, `force_default`, `normal`,
//! `override`, `force_override`, also `node.default[...]`, and `..._unless` and `||=`), with Chef's
//! auto-vivification of intermediate hashes; literals (strings with `#{}` interpolation, symbols,
//! numbers, true/false/nil, arrays, `%w()`, hashes in both styles, ranges); reads of `node[...]`
//! (`node.attribute?`, `node.dig`); local variables; `if`/`unless`/`elsif`/ternary/`case`; `each`,
//! `each_with_index`, `each_pair`, `map`, `select`, `reject`, `times` over arrays, hashes and ranges
//! with block variables; common value methods (`nil?`, `empty?`, `include?`, `key?`, `keys`, `to_s`,
//! ...); `include_attribute` in attribute files ([`AttributeLoader`]); `include_recipe`; and resource blocks (`netdev_vlan 'web' do vlan_id 100 end`) with their
//! properties and actions. Anything else is an error naming the file, line and construct.
//!
//! Reads of `node[...]` see Chef's merged view at that moment: every layer loaded so far plus this
//! file's own assignments up to the read (Chef's `VividMash` writes through to the merged cache).

use super::CookbookError;
use super::ruby::{Program, body_statements, describe};
use lib_ruby_parser::{Loc, Node};
use netgw_models::attributes::{AttributeSet, Component, Source, assign_replacing};
use refusal::Refusal;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Most loop iterations one file may run (all its loops together): a bound, not a budget anyone
/// should reach.
pub const MAX_STEPS: u64 = 100_000;
/// Deepest nesting of expressions netgw evaluates (a bound on recursion, far above real cookbooks).
pub const MAX_DEPTH: usize = 200;
/// Largest range netgw expands (`(1..4094).each` is the largest a VLAN loop needs).
pub const MAX_RANGE: i64 = 65_536;
/// Largest value one expression may build, in bytes as `value::measure` counts them (about the
/// memory it takes; a bound against hostile cookbooks: `a = a + a` doubles).
pub const MAX_VALUE_BYTES: usize = 8 << 20;
/// Most bytes all the values one file builds and assigns may add up to.
pub const MAX_BUILT_BYTES: usize = 64 << 20;
/// Deepest nesting of arrays and hashes in a value (netgw's state files are JSON, read back with a
/// nesting limit of 128).
pub const MAX_VALUE_DEPTH: usize = 64;
/// Longest one file's evaluation may take.
pub const MAX_EVAL_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// A resource declared by a recipe, before it is mapped to netgw's resources ([`super::netdev`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDecl {
    pub kind: String,
    pub name: String,
    pub path: PathBuf,
    pub line: usize,
    /// Properties in the order they were set (a later setting replaces an earlier one).
    pub properties: Vec<(String, Value)>,
    /// The actions given with `action`, none when the resource's default applies.
    pub actions: Vec<String>,
}

impl ResourceDecl {
    pub fn property(&self, name: &str) -> Option<&Value> {
        self.properties
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    pub fn error(&self, construct: impl Into<String>, why: impl Into<String>) -> CookbookError {
        CookbookError::Ruby {
            path: self.path.clone(),
            line: self.line,
            construct: construct.into(),
            why: why.into(),
        }
    }
}

/// What a recipe's `include_recipe` calls back into: loading and evaluating another recipe now.
pub trait Host {
    fn include_recipe(
        &mut self,
        name: &str,
        attrs: &mut AttributeSet,
        at: CookbookError,
    ) -> Result<(), CookbookError>;

    /// `data_bag(BAG)`: the names of the bag's items; `data_bag_item(BAG, ITEM)`: the item's hash
    /// (`crate::cookbook::Cookbooks::data_bag`). `at` names the call for errors.
    fn data_bag(
        &mut self,
        _bag: &str,
        _item: Option<&str>,
        at: &CookbookError,
    ) -> Result<Value, CookbookError> {
        Err(at.because("this evaluation has no data bags".into()))
    }

    /// `Chef::EncryptedDataBagItem.load(BAG, ITEM)`: the item decrypted
    /// (`crate::cookbook::Cookbooks::encrypted_data_bag_item`).
    fn encrypted_data_bag_item(
        &mut self,
        _bag: &str,
        _item: &str,
        at: &CookbookError,
    ) -> Result<Value, CookbookError> {
        Err(at.because("this evaluation has no data bags".into()))
    }

    /// The name of the node evaluated for (`node.name`), when there is one.
    fn node_name(&self) -> Option<String> {
        None
    }
}

/// The resource names a recipe may declare: Chef's netdev cookbook's, netgw's own, and the vendor
/// cookbooks' that say the same (`cookbook::netdev` maps each).
pub const RESOURCE_KINDS: [&str; 12] = [
    "netdev_vlan",
    "netdev_interface",
    "netdev_l2_interface",
    "netdev_l3_interface",
    "netdev_lag",
    "netdev_lag_interface",
    "netdev_group",
    "vlan",
    "link",
    "eos_vlan",
    "cisco_vlan",
    "cisco_interface",
];

/// What an attribute file's `include_attribute` reaches: the run's attribute-file loader.
pub trait AttributeLoader {
    /// Loads the Ruby attribute file `cb::file` now unless the run has loaded it already, as
    /// Chef's `include_attribute` does. `at` names the call for errors.
    fn include_attribute(
        &mut self,
        full: &str,
        attrs: &mut AttributeSet,
        at: CookbookError,
    ) -> Result<(), CookbookError>;

    /// The name of the node evaluated for (`node.name`), when there is one.
    fn node_name(&self) -> Option<String> {
        None
    }
}

/// Evaluate an attribute file: its assignments become layers of `attrs` from `source`. Without a
/// `loader`, `include_attribute` is refused.
pub fn attribute_file<'a>(
    program: &'a Program,
    attrs: &'a mut AttributeSet,
    source: Source,
    loader: Option<&'a mut dyn AttributeLoader>,
) -> Result<(), CookbookError> {
    let mut e = Eval::new(program, attrs, source, None);
    e.loader = loader;
    e.run()?;
    Ok(())
}

/// Evaluate a recipe: its attribute assignments become layers of `attrs`, its resources are returned.
pub fn recipe(
    program: &Program,
    attrs: &mut AttributeSet,
    source: Source,
    host: &mut dyn Host,
) -> Result<Vec<ResourceDecl>, CookbookError> {
    let mut e = Eval::new(program, attrs, source, Some(host));
    e.run()?;
    Ok(e.resources)
}

/// The value of one expression of `program` with no node in scope (the arguments of a Ruby role's or
/// environment's DSL calls), bounded as every evaluation is, as its JSON document holds it: Symbols
/// as their Strings (what `to_json` writes); a value JSON cannot hold (a Range) is refused.
pub fn expression(program: &Program, n: &Node) -> Result<Value, CookbookError> {
    let mut attrs = AttributeSet::new();
    let mut e = Eval::new(program, &mut attrs, Source::Node, None);
    let v = e.eval(n)?;
    value::chef_value(&v).map_err(|what| {
        program.error(
            n.expression(),
            describe(n),
            format!("holds {what}, which a JSON document cannot"),
        )
    })
}

const PRECEDENCES: [(&str, Component); 5] = [
    ("default", Component::Default),
    ("force_default", Component::ForceDefault),
    ("normal", Component::Normal),
    ("override", Component::Override),
    ("force_override", Component::ForceOverride),
];

fn precedence(name: &str) -> Option<Component> {
    PRECEDENCES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| *c)
}

/// The keys of an attribute path, each with its node (for error lines).
type Keys<'n> = Vec<(String, &'n Node)>;
/// The keys of an `x[k1][k2]` chain as Ruby values.
type RawKeys<'n> = Vec<(Value, &'n Node)>;

/// Where an `x[...]` chain starts.
enum Root {
    Node,
    /// A precedence level, or a path in one (a block parameter of `default['a'].tap`).
    Level(Component, Vec<String>),
    Value(Value),
}

struct Eval<'a> {
    p: &'a Program,
    attrs: &'a mut AttributeSet,
    source: Source,
    /// This file's assignments not yet pushed as layers, per component.
    pending: BTreeMap<Component, Value>,
    /// The paths this file assigned whole hashes to, per component (see `Layer::replaces`).
    replaced: BTreeMap<Component, Vec<Vec<String>>>,
    merged: Option<Value>,
    scopes: Vec<HashMap<String, Value>>,
    /// Block parameters that name a path in a level (`default['a'].tap do |a|`): reads and writes
    /// through them reach the level, as Chef's mutable `VividMash` does.
    aliases: HashMap<String, (Component, Vec<String>)>,
    /// Facts this evaluation read but does not have (it runs before the device is contacted).
    absent_facts: Vec<&'static str>,
    host: Option<&'a mut dyn Host>,
    /// In an attribute file: loads what `include_attribute` names.
    loader: Option<&'a mut dyn AttributeLoader>,
    resources: Vec<ResourceDecl>,
    current: Option<ResourceDecl>,
    steps: u64,
    depth: usize,
    /// Bytes of the values built and assigned so far (see [`MAX_BUILT_BYTES`]).
    built: usize,
    started: std::time::Instant,
    time_limit: std::time::Duration,
    evals: u64,
}

impl<'a> Eval<'a> {
    fn new(
        p: &'a Program,
        attrs: &'a mut AttributeSet,
        source: Source,
        host: Option<&'a mut dyn Host>,
    ) -> Self {
        Eval {
            p,
            attrs,
            source,
            pending: BTreeMap::new(),
            replaced: BTreeMap::new(),
            merged: None,
            scopes: vec![HashMap::new()],
            aliases: HashMap::new(),
            absent_facts: Vec::new(),
            host,
            loader: None,
            resources: Vec::new(),
            current: None,
            steps: 0,
            depth: 0,
            built: 0,
            started: std::time::Instant::now(),
            time_limit: MAX_EVAL_TIME,
            evals: 0,
        }
    }

    /// Every statement of the file, then its assignments as layers.
    fn run(&mut self) -> Result<(), CookbookError> {
        for s in &self.p.statements {
            if let Err(e) = self.eval(s) {
                return Err(self.with_absent_facts(e));
            }
        }
        self.flush();
        Ok(())
    }

    /// An error after reads of facts this evaluation lacks says so: the node's first evaluation
    /// runs before its device is contacted.
    fn with_absent_facts(&self, e: CookbookError) -> CookbookError {
        let CookbookError::Ruby {
            path,
            line,
            construct,
            why,
        } = e
        else {
            return e;
        };
        if self.absent_facts.is_empty() {
            return CookbookError::Ruby {
                path,
                line,
                construct,
                why,
            };
        }
        let facts = self
            .absent_facts
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>();
        let why = format!(
            "{why}; this evaluation read the fact(s) {} before they exist (netgw evaluates cookbooks first before contacting the device, over the facts the last run saved; the run's second evaluation, after the facts are gathered, sees them): make the branch work without them, e.g. `if node['platform']`",
            facts.join(", ")
        );
        CookbookError::Ruby {
            path,
            line,
            construct,
            why,
        }
    }

    fn err(
        &self,
        loc: &Loc,
        construct: impl Into<String>,
        why: impl Into<String>,
    ) -> CookbookError {
        self.p.error(loc, construct, why)
    }

    fn unsupported(&self, n: &Node) -> CookbookError {
        self.err(
            n.expression(),
            describe(n),
            "outside the Ruby subset netgw evaluates statically (see docs/cookbooks.md); nothing is run",
        )
    }

    /// Push this file's pending assignments as layers (before an included recipe runs, and at the end).
    fn flush(&mut self) {
        let mut replaced = std::mem::take(&mut self.replaced);
        for (c, v) in std::mem::take(&mut self.pending) {
            if let Value::Object(m) = v {
                let replaces = replaced.remove(&c).unwrap_or_default();
                self.attrs
                    .push_replacing(c, self.source.clone(), m, replaces);
            }
        }
    }

    fn merged(&mut self) -> &Value {
        if self.merged.is_none() {
            let mut view = self.attrs.clone();
            for (c, v) in &self.pending {
                if let Value::Object(m) = v {
                    let replaces = self.replaced.get(c).cloned().unwrap_or_default();
                    view.push_replacing(*c, self.source.clone(), m.clone(), replaces);
                }
            }
            self.merged = Some(Value::Object(view.merged()));
        }
        self.merged.get_or_insert(Value::Null)
    }

    /// One precedence level as this file sees it (earlier layers and its own assignments).
    fn level(&self, c: Component) -> Value {
        let base = self.attrs.component(c);
        match self.pending.get(&c) {
            Some(v) => {
                let replaces = self.replaced.get(&c).map(Vec::as_slice).unwrap_or_default();
                assign_replacing(base, v.clone(), replaces)
            }
            None => base,
        }
    }

    fn step(&mut self, loc: &Loc) -> Result<(), CookbookError> {
        self.check_time(loc)?;
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.err(
                loc,
                "loop",
                format!("more than {MAX_STEPS} iterations in one file"),
            ));
        }
        Ok(())
    }

    fn eval_body(&mut self, body: Option<&Node>) -> Result<Value, CookbookError> {
        let mut last = Value::Null;
        for s in body_statements(body) {
            last = self.eval(s)?;
        }
        Ok(last)
    }

    fn eval(&mut self, n: &Node) -> Result<Value, CookbookError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err(
                n.expression(),
                describe(n),
                format!("nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        self.evals += 1;
        if self.evals.is_multiple_of(1024) {
            self.check_time(n.expression())?;
        }
        self.depth += 1;
        let v = self.eval_node(n);
        self.depth -= 1;
        let v = v?;
        if builds(n) {
            self.charge(n.expression(), &v)?;
        }
        Ok(v)
    }

    fn check_time(&self, loc: &Loc) -> Result<(), CookbookError> {
        if self.started.elapsed() > self.time_limit {
            return Err(self.err(
                loc,
                "evaluation",
                format!(
                    "took longer than {:?} (a bound against hostile cookbooks)",
                    self.time_limit
                ),
            ));
        }
        Ok(())
    }

    /// A value being built has not outgrown [`MAX_VALUE_BYTES`] (checked as it grows, element by
    /// element, so a hostile loop cannot allocate far past the bound first).
    fn within_value_bound(&self, n: &Node, bytes: usize) -> Result<(), CookbookError> {
        if bytes > MAX_VALUE_BYTES {
            return Err(self.err(
                n.expression(),
                "value too large",
                format!("more than {MAX_VALUE_BYTES} bytes in one value (a bound against hostile cookbooks)"),
            ));
        }
        Ok(())
    }

    /// Count a value built (or assigned) against the bounds on one value and on the file's total.
    fn charge(&mut self, loc: &Loc, v: &Value) -> Result<(), CookbookError> {
        let (bytes, depth) = value::measure(v, MAX_VALUE_DEPTH);
        let refuse = |what: String| {
            self.err(
                loc,
                "value too large",
                format!("{what} (a bound against hostile cookbooks)"),
            )
        };
        if depth > MAX_VALUE_DEPTH {
            return Err(refuse(format!(
                "arrays and hashes nested more than {MAX_VALUE_DEPTH} deep"
            )));
        }
        if bytes > MAX_VALUE_BYTES {
            return Err(refuse(format!(
                "{bytes} bytes, more than {MAX_VALUE_BYTES} in one value"
            )));
        }
        let built = self.built.saturating_add(bytes);
        if built > MAX_BUILT_BYTES {
            return Err(refuse(format!(
                "the values this file built add up to more than {MAX_BUILT_BYTES} bytes"
            )));
        }
        self.built = built;
        Ok(())
    }

    fn eval_node(&mut self, n: &Node) -> Result<Value, CookbookError> {
        match n {
            Node::Nil(_) => Ok(Value::Null),
            Node::True(_) => Ok(Value::Bool(true)),
            Node::False(_) => Ok(Value::Bool(false)),
            Node::Int(i) => self.int(&i.value, &i.expression_l),
            Node::Float(f) => f
                .value
                .replace('_', "")
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| self.err(&f.expression_l, "float", "not a finite number")),
            Node::Str(s) => self.utf8(&s.value, n).map(Value::String),
            Node::Sym(s) => self.utf8(&s.name, n).map(value::sym),
            Node::Dstr(d) => self.interpolate(&d.parts).map(Value::String),
            Node::Dsym(d) => self.interpolate(&d.parts).map(value::sym),
            Node::Heredoc(h) => self.interpolate(&h.parts).map(Value::String),
            Node::Array(a) => self.array(&a.elements),
            Node::Hash(h) => self.hash(&h.pairs),
            Node::Kwargs(h) => self.hash(&h.pairs),
            Node::Irange(r) => self.range(r.left.as_deref(), r.right.as_deref(), true, n),
            Node::Erange(r) => self.range(r.left.as_deref(), r.right.as_deref(), false, n),
            Node::Lvar(v) => self.read_local(&v.name, n),
            Node::Lvasgn(a) => {
                let v = match &a.value {
                    Some(v) => self.eval(v)?,
                    None => return Err(self.unsupported(n)),
                };
                self.aliases.remove(&a.name);
                self.assign_local(&a.name, v.clone());
                Ok(v)
            }
            Node::Begin(b) => self.statements(&b.statements),
            Node::KwBegin(b) => self.statements(&b.statements),
            Node::If(i) => self.branch(&i.cond, i.if_true.as_deref(), i.if_false.as_deref()),
            Node::IfMod(i) => self.branch(&i.cond, i.if_true.as_deref(), i.if_false.as_deref()),
            Node::IfTernary(i) => self.branch(&i.cond, Some(&i.if_true), Some(&i.if_false)),
            Node::Case(c) => self.case(c),
            Node::And(a) => {
                let l = self.eval(&a.lhs)?;
                if truthy(&l) { self.eval(&a.rhs) } else { Ok(l) }
            }
            Node::Or(o) => {
                let l = self.eval(&o.lhs)?;
                if truthy(&l) { Ok(l) } else { self.eval(&o.rhs) }
            }
            Node::Index(_) => self.read_index(n),
            Node::IndexAsgn(a) => self.index_assign(a),
            Node::OrAsgn(a) => self.or_assign(n, &a.recv, &a.value),
            Node::OpAsgn(a) => self.op_assign(n, &a.recv, &a.operator, &a.value),
            Node::Send(s) => self.send(n, s),
            Node::Block(b) => self.block(n, b),
            _ => Err(self.unsupported(n)),
        }
    }

    fn statements(&mut self, list: &[Node]) -> Result<Value, CookbookError> {
        let mut last = Value::Null;
        for s in list {
            last = self.eval(s)?;
        }
        Ok(last)
    }

    fn int(&self, text: &str, loc: &Loc) -> Result<Value, CookbookError> {
        ruby_int(text).map(Value::from).ok_or_else(|| {
            self.err(
                loc,
                format!("integer {text}"),
                "not an integer netgw evaluates (64-bit, in Ruby's 0b, 0o, 0, 0d or 0x notation)",
            )
        })
    }

    fn utf8(&self, b: &lib_ruby_parser::Bytes, n: &Node) -> Result<String, CookbookError> {
        b.to_string()
            .map_err(|_| self.err(n.expression(), describe(n), "not valid UTF-8"))
    }

    /// Ruby's `to_s` of `v`, or an error naming the construct when netgw cannot reproduce it.
    fn text(&self, n: &Node, v: &Value) -> Result<String, CookbookError> {
        to_s(v).ok_or_else(|| {
            self.err(
                n.expression(),
                format!("text of {}", type_name(v)),
                "Ruby's text for this value is not reproduced exactly by netgw (a float of 16 digits, or a non-ASCII string inside an array or hash)",
            )
        })
    }

    fn interpolate(&mut self, parts: &[Node]) -> Result<String, CookbookError> {
        let mut out = String::new();
        for p in parts {
            match p {
                Node::Str(s) => out.push_str(&s.value.to_string_lossy()),
                other => {
                    let v = self.eval(other)?;
                    out.push_str(&self.text(other, &v)?);
                }
            }
            self.within_value_bound(p, out.len())?;
        }
        Ok(out)
    }

    fn array(&mut self, elements: &[Node]) -> Result<Value, CookbookError> {
        let mut out = Vec::with_capacity(elements.len());
        let mut bytes = 0usize;
        for e in elements {
            let added = match e {
                Node::Splat(s) => self.splat(e, s.value.as_deref())?,
                _ => vec![self.eval(e)?],
            };
            for v in added {
                bytes = bytes.saturating_add(value::measure(&v, MAX_VALUE_DEPTH).0);
                self.within_value_bound(e, bytes)?;
                out.push(v);
            }
        }
        Ok(Value::Array(out))
    }

    /// `*x`: an array's or range's elements, nothing for nil, else the value itself.
    fn splat(&mut self, n: &Node, v: Option<&Node>) -> Result<Vec<Value>, CookbookError> {
        let v = v.map(|v| self.eval(v)).transpose()?.unwrap_or(Value::Null);
        if let Some((a, b, x)) = value::as_range(&v) {
            return Ok(value::range_items(a, b, x));
        }
        match v {
            Value::Array(a) => Ok(a),
            Value::Null => Ok(Vec::new()),
            Value::Object(_) => Err(self.err(
                n.expression(),
                format!("splat of {}", type_name(&v)),
                "not evaluated by netgw",
            )),
            v => Ok(vec![v]),
        }
    }

    fn hash(&mut self, pairs: &[Node]) -> Result<Value, CookbookError> {
        let mut m = Map::new();
        let mut bytes = 0usize;
        for p in pairs {
            let Node::Pair(pair) = p else {
                return Err(self.unsupported(p));
            };
            let k = self.eval(&pair.key)?;
            let k = self.hash_key(&k, &pair.key)?;
            let v = self.eval(&pair.value)?;
            bytes = bytes.saturating_add(k.len() + value::measure(&v, MAX_VALUE_DEPTH).0);
            self.within_value_bound(p, bytes)?;
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }

    /// An attribute key as Chef stores it: a String, or a Symbol as its String (Chef's `VividMash`
    /// converts Symbol keys).
    fn key(&self, k: &Value, at: &Node) -> Result<String, CookbookError> {
        match (k, value::as_sym(k)) {
            (_, Some(s)) => Ok(s.to_owned()),
            (Value::String(s), None) if !value::has_marker(s) => Ok(s.clone()),
            (Value::Number(_), None) => Err(self.err(
                at.expression(),
                format!("attribute key of type {}", type_name(k)),
                "Chef keeps an Integer key apart from its String and netgw's attributes are JSON: use a string ('1', or 1.to_s)",
            )),
            _ => Err(self.err(
                at.expression(),
                format!("key of type {}", type_name(k)),
                "keys must be strings or symbols",
            )),
        }
    }

    /// A Ruby hash literal's key.
    fn hash_key(&self, k: &Value, at: &Node) -> Result<String, CookbookError> {
        value::map_key(k).ok_or_else(|| {
            self.err(
                at.expression(),
                format!("hash key of type {}", type_name(k)),
                "hash keys must be strings, symbols or integers",
            )
        })
    }

    fn range(
        &mut self,
        left: Option<&Node>,
        right: Option<&Node>,
        inclusive: bool,
        n: &Node,
    ) -> Result<Value, CookbookError> {
        let (Some(l), Some(r)) = (left, right) else {
            return Err(self.err(n.expression(), "endless range", "a range needs both ends"));
        };
        let (l, r) = (self.eval(l)?, self.eval(r)?);
        let (Some(a), Some(b)) = (as_int(&l), as_int(&r)) else {
            return Err(self.err(
                n.expression(),
                format!("range of {} and {}", type_name(&l), type_name(&r)),
                "only integer ranges are supported",
            ));
        };
        let end = if inclusive { b } else { b.saturating_sub(1) };
        if end.saturating_sub(a) >= MAX_RANGE {
            return Err(self.err(
                n.expression(),
                format!("range {a}..{b}"),
                format!("more than {MAX_RANGE} elements"),
            ));
        }
        Ok(value::range(a, b, !inclusive))
    }

    fn local(&self, name: &str) -> Option<&Value> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// Ruby's scoping: assignment updates an outer block's variable if it exists, else it is new in
    /// the innermost scope.
    fn assign_local(&mut self, name: &str, v: Value) {
        if let Some(s) = self.scopes.iter_mut().rev().find(|s| s.contains_key(name)) {
            s.insert(name.to_owned(), v);
        } else if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_owned(), v);
        }
    }

    fn branch(
        &mut self,
        cond: &Node,
        yes: Option<&Node>,
        no: Option<&Node>,
    ) -> Result<Value, CookbookError> {
        let c = self.eval(cond)?;
        self.eval_body(if truthy(&c) { yes } else { no })
    }

    /// `when a..b`: Ruby's `Range#===` is `cover?` (2.5 is in 1..3; a non-number is in no
    /// integer range).
    fn covers(
        &mut self,
        pat: &Node,
        left: &Option<Box<Node>>,
        right: &Option<Box<Node>>,
        inclusive: bool,
        s: &Value,
    ) -> Result<bool, CookbookError> {
        let (Some(l), Some(r)) = (left.as_deref(), right.as_deref()) else {
            return Err(self.err(pat.expression(), "endless range", "a range needs both ends"));
        };
        let (l, r) = (self.eval(l)?, self.eval(r)?);
        let (Some(a), Some(b)) = (as_int(&l), as_int(&r)) else {
            return Err(self.err(
                pat.expression(),
                "range",
                "only integer ranges are supported",
            ));
        };
        let Some(x) = s.as_f64() else {
            return Ok(false);
        };
        let (a, b) = (a as f64, b as f64);
        Ok(a <= x && if inclusive { x <= b } else { x < b })
    }

    fn case(&mut self, c: &lib_ruby_parser::nodes::Case) -> Result<Value, CookbookError> {
        let subject = c.expr.as_deref().map(|e| self.eval(e)).transpose()?;
        for w in &c.when_bodies {
            let Node::When(w) = w else {
                return Err(self.unsupported(w));
            };
            for pat in &w.patterns {
                let hit = match (&subject, pat) {
                    (Some(s), Node::Irange(r)) => self.covers(pat, &r.left, &r.right, true, s)?,
                    (Some(s), Node::Erange(r)) => self.covers(pat, &r.left, &r.right, false, s)?,
                    (Some(s), Node::Splat(sp)) => {
                        let list = self.splat(pat, sp.value.as_deref())?;
                        list.iter().any(|e| case_eq(e, s))
                    }
                    (Some(s), _) => {
                        let v = self.eval(pat)?;
                        if matches!(pat, Node::Const(_) | Node::Regexp(_)) {
                            return Err(self.unsupported(pat));
                        }
                        case_eq(&v, s)
                    }
                    (None, _) => truthy(&self.eval(pat)?),
                };
                if hit {
                    return self.eval_body(w.body.as_deref());
                }
            }
        }
        self.eval_body(c.else_body.as_deref())
    }
}

// Attribute reads and writes.
impl Eval<'_> {
    /// The start of an `x[...]` chain: `node`, a precedence level (`default`, `node.default`), a
    /// block parameter naming a path in a level, or a value.
    fn root(&mut self, n: &Node) -> Result<Root, CookbookError> {
        if let Node::Lvar(v) = n
            && let Some((c, path)) = self.aliases.get(&v.name)
        {
            return Ok(Root::Level(*c, path.clone()));
        }
        if let Node::Send(s) = n
            && s.args.is_empty()
        {
            match s.recv.as_deref() {
                None if s.method_name == "node" => return Ok(Root::Node),
                None if self.local(&s.method_name).is_none() => {
                    if let Some(c) = precedence(&s.method_name) {
                        return Ok(Root::Level(c, Vec::new()));
                    }
                }
                Some(r) if is_node(r) => {
                    if let Some(c) = precedence(&s.method_name) {
                        return Ok(Root::Level(c, Vec::new()));
                    }
                    if s.method_name == "set" {
                        return Err(self.err(
                            &s.expression_l,
                            "`node.set`",
                            "removed in Chef 14; use node.normal",
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(Root::Value(self.eval(n)?))
    }

    /// Whether a chain's root names a precedence level or a path in one (not evaluated).
    fn names_level(&self, n: &Node) -> bool {
        match n {
            Node::Lvar(v) => self.aliases.contains_key(&v.name),
            Node::Send(s) if s.args.is_empty() => match s.recv.as_deref() {
                None => {
                    self.local(&s.method_name).is_none() && precedence(&s.method_name).is_some()
                }
                Some(r) => is_node(r) && precedence(&s.method_name).is_some(),
            },
            _ => false,
        }
    }

    /// Whether `n` reads node attributes (`node[...]`, `default[...]`), whose hashes are Chef's
    /// `VividMash`.
    fn rooted_in_node(&self, n: &Node) -> bool {
        let root = chain_root(n);
        is_node(root) || self.names_level(root)
    }

    /// Split `a[k1][k2]` into `a` and the keys.
    fn chain<'n>(&mut self, n: &'n Node) -> Result<(&'n Node, RawKeys<'n>), CookbookError> {
        let mut keys = Vec::new();
        let mut cur = n;
        while let Node::Index(i) = cur {
            let [k] = i.indexes.as_slice() else {
                return Err(self.err(
                    &i.expression_l,
                    "multi-argument index",
                    "index one key at a time",
                ));
            };
            keys.push((self.eval(k)?, k));
            cur = &i.recv;
        }
        keys.reverse();
        Ok((cur, keys))
    }

    /// An attribute path: `prefix` (an alias's path, located at `at`) then `keys` as Chef stores them.
    fn attr_keys<'n>(
        &self,
        prefix: Vec<String>,
        at: &'n Node,
        keys: &[(Value, &'n Node)],
    ) -> Result<Keys<'n>, CookbookError> {
        let mut out: Keys<'n> = prefix.into_iter().map(|k| (k, at)).collect();
        for (k, n) in keys {
            out.push((self.key(k, n)?, n));
        }
        Ok(out)
    }

    /// A local variable's value; a block parameter naming a level path reads the level now.
    fn read_local(&mut self, name: &str, n: &Node) -> Result<Value, CookbookError> {
        match self.aliases.get(name) {
            Some((c, path)) => {
                let (c, keys) = (*c, path.iter().map(|k| (k.clone(), n)).collect::<Keys>());
                self.read_level(c, &keys, n.expression())
            }
            None => Ok(self.local(name).cloned().unwrap_or(Value::Null)),
        }
    }

    fn read_index(&mut self, n: &Node) -> Result<Value, CookbookError> {
        let (root, keys) = self.chain(n)?;
        let base = match self.root(root)? {
            Root::Node => {
                if let Some((Value::String(k), _)) = keys.first() {
                    self.note_fact_read(k);
                }
                let base = self.merged().clone();
                return self.index_value("node", &base, &keys, true);
            }
            Root::Level(c, prefix) => {
                let keys = self.attr_keys(prefix, root, &keys)?;
                return self.read_level(c, &keys, n.expression());
            }
            Root::Value(v) => v,
        };
        self.index_value(&describe_root(root), &base, &keys, false)
    }

    /// A read through a precedence level (`default['a']['b']`): Chef's `VividMash#[]` creates every
    /// missing key on the way as an empty hash, stored in the level, and returns it (so
    /// `if default['x']['y']` is always true, and `default['x'] ||= 1` leaves `{}`).
    fn read_level(
        &mut self,
        c: Component,
        keys: &[(String, &Node)],
        loc: &Loc,
    ) -> Result<Value, CookbookError> {
        let level = match self.level(c) {
            Value::Null => Value::Object(Map::new()),
            v => v,
        };
        let path: Vec<String> = keys.iter().map(|(k, _)| k.clone()).collect();
        if !keys.is_empty() && missing_in_hashes(&level, &path) {
            self.set(c, keys, Value::Object(Map::new()), loc)?;
            return Ok(Value::Object(Map::new()));
        }
        let raw: RawKeys = keys
            .iter()
            .map(|(k, n)| (Value::String(k.clone()), *n))
            .collect();
        self.index_value(precedence_name(c), &level, &raw, true)
    }

    /// `base[k1]...[kn]`; `mash` when `base` is known to be node attributes (a Symbol reads the
    /// String key, as Chef's `VividMash` converts it).
    fn index_value(
        &self,
        root: &str,
        base: &Value,
        keys: &[(Value, &Node)],
        mash: bool,
    ) -> Result<Value, CookbookError> {
        let mut cur = base.clone();
        let mut path = root.to_owned();
        for (k, at) in keys {
            let shown = inspect(k).unwrap_or_else(|| type_name(k).into());
            path = format!("{path}[{shown}]");
            cur = self.index_once(&path, cur, k, at, mash)?;
        }
        Ok(cur)
    }

    fn index_once(
        &self,
        path: &str,
        cur: Value,
        k: &Value,
        at: &Node,
        mash: bool,
    ) -> Result<Value, CookbookError> {
        let refuse = |why: Refusal| self.err(at.expression(), path.to_owned(), why.to_string());
        if let Some(m) = value::as_hash(&cur) {
            return lookup(m, k, mash)
                .map(|v| v.cloned().unwrap_or(Value::Null))
                .map_err(refuse);
        }
        match (&cur, k) {
            (Value::Array(a), Value::Number(i)) if i.is_i64() => {
                let i = i.as_i64().unwrap_or_default();
                let idx = if i < 0 { a.len() as i64 + i } else { i };
                Ok(usize::try_from(idx)
                    .ok()
                    .and_then(|i| a.get(i))
                    .cloned()
                    .unwrap_or(Value::Null))
            }
            (Value::Array(_), _) => Err(refuse(Refusal::ArrayIndex(type_name(k)))),
            _ => Err(refuse(Refusal::NotIndexable(type_name(&cur)))),
        }
    }

    fn index_assign(
        &mut self,
        a: &lib_ruby_parser::nodes::IndexAsgn,
    ) -> Result<Value, CookbookError> {
        let value = match &a.value {
            Some(v) => self.eval(v)?,
            None => return Err(self.err(&a.expression_l, "index assignment", "has no value")),
        };
        let [k] = a.indexes.as_slice() else {
            return Err(self.err(
                &a.expression_l,
                "multi-argument index",
                "index one key at a time",
            ));
        };
        if let Some(c) = unless_level(&a.recv) {
            return self.set_unless(a, c);
        }
        let (root, mut raw) = self.chain(&a.recv)?;
        raw.push((self.eval(k)?, k));
        let (c, prefix) = self.assign_target(root, &a.expression_l)?;
        let keys = self.attr_keys(prefix, root, &raw)?;
        self.set(c, &keys, value.clone(), &a.expression_l)?;
        Ok(value)
    }

    fn assign_target(
        &mut self,
        root: &Node,
        loc: &Loc,
    ) -> Result<(Component, Vec<String>), CookbookError> {
        match self.root(root)? {
            Root::Level(c, prefix) => Ok((c, prefix)),
            Root::Node => Err(self.err(
                loc,
                "assignment to node[...]",
                "Chef refuses writes to the merged view; name a precedence level (node.default[...])",
            )),
            Root::Value(_) => Err(self.err(
                loc,
                "assignment into a value",
                "only attribute assignments (default[...] = ...) are evaluated",
            )),
        }
    }

    /// `level[k1]...[kn] = value`, creating missing hashes on the way (Chef's auto-vivification).
    fn set(
        &mut self,
        c: Component,
        keys: &[(String, &Node)],
        value: Value,
        loc: &Loc,
    ) -> Result<(), CookbookError> {
        let level = precedence_name(c);
        let value = value::chef_value(&value).map_err(|what| {
            self.p
                .error(loc, format!("{level} assignment"), format!("stores {what}"))
        })?;
        self.charge(loc, &value)?;
        if value.is_object() {
            let path: Vec<String> = keys.iter().map(|(k, _)| k.clone()).collect();
            let replaced = self.replaced.entry(c).or_default();
            if !replaced.contains(&path) {
                replaced.push(path);
            }
        }
        let mut cur = self
            .pending
            .entry(c)
            .or_insert_with(|| Value::Object(Map::new()));
        let mut path = level.to_owned();
        let last = keys.len() - 1;
        for (i, (k, _)) in keys.iter().enumerate() {
            let Value::Object(m) = cur else {
                let e = format!("{path} is not a hash in this file's {level} assignments");
                return Err(self.p.error(loc, format!("{level} assignment"), e));
            };
            if i == last {
                m.insert(k.clone(), value);
                break;
            }
            cur = m
                .entry(k.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            path = format!("{path}[{k:?}]");
        }
        self.merged = None;
        Ok(())
    }

    /// The attribute path of a compound assignment's target (`default['a']['b'] ||= ...`), and its
    /// current value in that level.
    fn compound_target<'n>(
        &mut self,
        target: &'n lib_ruby_parser::nodes::IndexAsgn,
    ) -> Result<(Component, Keys<'n>, Value), CookbookError> {
        let [k] = target.indexes.as_slice() else {
            return Err(self.err(
                &target.expression_l,
                "multi-argument index",
                "index one key at a time",
            ));
        };
        let (root, mut raw) = self.chain(&target.recv)?;
        raw.push((self.eval(k)?, k));
        let (c, prefix) = self.assign_target(root, &target.expression_l)?;
        let keys = self.attr_keys(prefix, root, &raw)?;
        // The read half of `x op= v` reads through the level, auto-vivifying as any level read does.
        let cur = self.read_level(c, &keys, &target.expression_l)?;
        Ok((c, keys, cur))
    }

    fn or_assign(&mut self, n: &Node, target: &Node, value: &Node) -> Result<Value, CookbookError> {
        match target {
            Node::Lvasgn(l) => {
                let cur = self.local(&l.name).cloned().unwrap_or(Value::Null);
                if truthy(&cur) {
                    return Ok(cur);
                }
                let v = self.eval(value)?;
                self.assign_local(&l.name, v.clone());
                Ok(v)
            }
            Node::IndexAsgn(t) => {
                let (c, keys, cur) = self.compound_target(t)?;
                if truthy(&cur) {
                    return Ok(cur);
                }
                let v = self.eval(value)?;
                self.set(c, &keys, v.clone(), n.expression())?;
                Ok(v)
            }
            _ => Err(self.unsupported(n)),
        }
    }

    fn op_assign(
        &mut self,
        n: &Node,
        target: &Node,
        op: &str,
        value: &Node,
    ) -> Result<Value, CookbookError> {
        let rhs = self.eval(value)?;
        match target {
            Node::Lvasgn(l) => {
                let cur = self.local(&l.name).cloned().unwrap_or(Value::Null);
                let v = self.binary(n, op, cur, rhs)?;
                self.assign_local(&l.name, v.clone());
                Ok(v)
            }
            Node::IndexAsgn(t) => {
                let (c, keys, cur) = self.compound_target(t)?;
                let v = self.binary(n, op, cur, rhs)?;
                self.set(c, &keys, v.clone(), n.expression())?;
                Ok(v)
            }
            _ => Err(self.unsupported(n)),
        }
    }

    /// `default_unless[...] = v` and friends: set only where the level has no value yet.
    fn set_unless(
        &mut self,
        a: &lib_ruby_parser::nodes::IndexAsgn,
        c: Component,
    ) -> Result<Value, CookbookError> {
        let (root, mut raw) = self.chain(&a.recv)?;
        let [k] = a.indexes.as_slice() else {
            return Err(self.err(
                &a.expression_l,
                "multi-argument index",
                "index one key at a time",
            ));
        };
        raw.push((self.eval(k)?, k));
        let keys = self.attr_keys(Vec::new(), root, &raw)?;
        let level = self.level(c);
        let path: Vec<String> = keys.iter().map(|(k, _)| k.clone()).collect();
        if netgw_models::attributes::get_path(&level, &path).is_some_and(|v| !v.is_null()) {
            return Ok(Value::Null);
        }
        let v = match &a.value {
            Some(v) => self.eval(v)?,
            None => Value::Null,
        };
        self.set(c, &keys, v.clone(), &a.expression_l)?;
        Ok(v)
    }
}

/// The level of a `default_unless[...]` (or `node.override_unless[...]`) chain.
fn unless_level(mut n: &Node) -> Option<Component> {
    while let Node::Index(i) = n {
        n = &i.recv;
    }
    let Node::Send(s) = n else { return None };
    if !s.args.is_empty() || !s.recv.as_deref().is_none_or(is_node) {
        return None;
    }
    precedence(s.method_name.strip_suffix("_unless")?)
}

/// Whether `path` ends inside hashes: some key is missing from a hash on the way (what Chef's
/// `VividMash#[]` fills in).
fn missing_in_hashes(v: &Value, path: &[String]) -> bool {
    let mut cur = v;
    for k in path {
        match cur {
            Value::Object(m) => match m.get(k) {
                Some(next) => cur = next,
                None => return true,
            },
            _ => return false,
        }
    }
    false
}

/// A hash lookup as Ruby does it. A Symbol key that only matches a String key is Chef's `VividMash`
/// conversion (`mash`) or, on a plain Ruby hash, nil; when netgw cannot tell which the value is,
/// it refuses (`Err`: why).
fn lookup<'m>(
    m: &'m Map<String, Value>,
    k: &Value,
    mash: bool,
) -> Result<Option<&'m Value>, Refusal> {
    if let Some(name) = value::as_sym(k) {
        let exact = m.get(&format!("{}{name}", value::SYM_KEY));
        return match (exact, m.get(name)) {
            (Some(v), _) => Ok(Some(v)),
            (None, Some(v)) if mash => Ok(Some(v)),
            (None, Some(_)) => Err(Refusal::SymbolOnStringKey(name.to_owned())),
            (None, None) => Ok(None),
        };
    }
    match value::map_key(k) {
        Some(key) => Ok(m.get(&key)),
        None => Err(Refusal::HashKeyType(type_name(k))),
    }
}

/// Whether evaluating `n` builds a new value (counted against the bounds); reads of variables and
/// attributes do not.
fn builds(n: &Node) -> bool {
    match n {
        Node::Send(s) => {
            !(s.args.is_empty()
                && s.recv.is_none()
                && (s.method_name == "node" || precedence(&s.method_name).is_some()))
        }
        Node::Array(_)
        | Node::Hash(_)
        | Node::Kwargs(_)
        | Node::Dstr(_)
        | Node::Dsym(_)
        | Node::Heredoc(_)
        | Node::Block(_)
        | Node::OpAsgn(_) => true,
        _ => false,
    }
}

/// Ruby's `pattern === subject` in `case`/`when`: a Range covers numbers, anything else is `==`.
fn case_eq(pattern: &Value, subject: &Value) -> bool {
    match (value::as_range(pattern), subject.as_f64()) {
        (Some((a, b, x)), Some(v)) => {
            (a as f64) <= v && if x { v < b as f64 } else { v <= b as f64 }
        }
        (Some(_), None) => false,
        _ => ruby_eq(pattern, subject),
    }
}

/// The start of an `x[k1][k2]` chain, without evaluating it.
fn chain_root(mut n: &Node) -> &Node {
    while let Node::Index(i) = n {
        n = &i.recv;
    }
    n
}

fn is_node(n: &Node) -> bool {
    matches!(n, Node::Send(s) if s.recv.is_none() && s.method_name == "node" && s.args.is_empty())
}

fn precedence_name(c: Component) -> &'static str {
    PRECEDENCES
        .iter()
        .find(|(_, x)| *x == c)
        .map(|(n, _)| *n)
        .unwrap_or("default")
}

fn describe_root(n: &Node) -> String {
    match n {
        Node::Send(s) if s.recv.is_none() => s.method_name.clone(),
        Node::Send(s) if s.recv.as_deref().is_some_and(is_node) => {
            format!("node.{}", s.method_name)
        }
        Node::Lvar(v) => v.name.clone(),
        _ => "value".into(),
    }
}

pub(crate) fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false))
}

fn as_int(v: &Value) -> Option<i64> {
    v.as_i64().filter(|_| !v.is_f64())
}

/// A Ruby integer literal's value: `0x`, `0b`, `0o` or a leading `0` (octal), `0d`, `_` between
/// digits, and a sign the parser folded in.
fn ruby_int(text: &str) -> Option<i64> {
    let (neg, t) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let lower = t.to_ascii_lowercase();
    let (radix, digits) = match lower.as_bytes() {
        [b'0', b'x', ..] => (16, &lower[2..]),
        [b'0', b'b', ..] => (2, &lower[2..]),
        [b'0', b'o', ..] => (8, &lower[2..]),
        [b'0', b'd', ..] => (10, &lower[2..]),
        [b'0', _, ..] => (8, &lower[1..]),
        _ => (10, lower.as_str()),
    };
    let digits = digits.trim_start_matches('_').replace('_', "");
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let v = i64::from_str_radix(&digits, radix).ok()?;
    if neg { v.checked_neg() } else { Some(v) }
}

mod calls;
#[cfg(test)]
mod difftest;
mod methods;
mod platform;
mod refusal;
mod resources;
mod strings;
mod value;

pub use platform::platform_family;
pub(crate) use value::{inspect, ruby_eq, to_s, type_name};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cookbook::ruby::parse;
    use serde_json::json;
    use std::path::Path;

    fn file_source() -> Source {
        Source::AttributeFile {
            cookbook: "cb".into(),
            file: "default.rb".into(),
        }
    }

    fn attrs_of(text: &str) -> Result<Value, CookbookError> {
        let p = parse(Path::new("attributes/default.rb"), text)?;
        let mut set = AttributeSet::new();
        attribute_file(&p, &mut set, file_source(), None)?;
        Ok(Value::Object(set.merged()))
    }

    struct NoHost;
    impl Host for NoHost {
        fn include_recipe(
            &mut self,
            _: &str,
            _: &mut AttributeSet,
            at: CookbookError,
        ) -> Result<(), CookbookError> {
            Err(at)
        }
    }

    fn recipe_of(text: &str, attrs: Value) -> Result<Vec<ResourceDecl>, CookbookError> {
        let p = parse(Path::new("recipes/default.rb"), text)?;
        let mut set = AttributeSet::new();
        if let Value::Object(m) = attrs {
            set.push(Component::Default, file_source(), m);
        }
        recipe(
            &p,
            &mut set,
            Source::Recipe {
                recipe: "cb::default".into(),
            },
            &mut NoHost,
        )
    }

    #[test]
    fn precedence_levels_autovivify_and_merge_like_chef() {
        let v = attrs_of(
            "default['netdev']['vlans']['100']['name'] = 'web'\n\
             node.default['netdev']['vlans']['200'] = { 'name' => 'db', mtu: 9000 }\n\
             override[:netdev][:vlans]['100'][:name] = 'web-o'\n\
             force_default['x'] = 1\nnormal['y'] = %w(a b)\nforce_override['z'] = (1..3).to_a\n\
             default['x'] = 2\n",
        )
        .unwrap();
        assert_eq!(
            v["netdev"]["vlans"]["100"]["name"], "web-o",
            "override beats default"
        );
        assert_eq!(
            v["netdev"]["vlans"]["200"],
            json!({"name": "db", "mtu": 9000})
        );
        assert_eq!(v["x"], 1, "force_default beats default");
        assert_eq!(v["y"], json!(["a", "b"]));
        assert_eq!(v["z"], json!([1, 2, 3]));
    }

    #[test]
    fn reads_see_assignments_so_far_and_interpolate() {
        let v = attrs_of(
            "default['site'] = 'par1'\nnormal['site'] = 'lon2'\n\
             default['desc'] = \"uplink #{node['site']} #{node['missing']}!\"\n\
             default['site'] = 'ams3'\n\
             default['n'] = node['site'] == 'lon2' ? 1 : 2\n\
             default['has'] = node.attribute?('site')\n\
             default['t'] = :sym\n\
             default['s'] = ' Eth1 Eth2 '.split.map { |p| p.downcase } + [' X '.strip, 'ab'.start_with?('a'), 'v12x'.to_i]\n",
        )
        .unwrap();
        assert_eq!(v["s"], json!(["eth1", "eth2", "X", true, 0]));
        assert_eq!(v["desc"], "uplink lon2 !");
        assert_eq!(v["n"], 1);
        assert_eq!(v["has"], true);
        assert_eq!(v["t"], "sym");
    }

    #[test]
    fn control_flow_loops_and_locals() {
        let v = attrs_of(
            "base = 100\nnames = %w[web db]\n\
             names.each_with_index do |n, i|\n  default['vlans'][(base + i * 10).to_s] = { 'name' => n }\nend\n\
             { 'a' => 1, 'b' => 2 }.each { |k, v| default['h'][k] = v + 1 }\n\
             (1..3).each { |i| default['r'] = i }\n\
             case node['vlans']['100']['name']\nwhen 'db' then default['c'] = 'db'\nwhen 'web', 'www' then default['c'] = 'web'\nelse default['c'] = 'x'\nend\n\
             if node['h']['a'] > 5\n  default['i'] = 'big'\nelsif node['h']['a'] == 2\n  default['i'] = 'two'\nend\n\
             default['u'] = 'yes' unless node['nope']\n\
             default['m'] = node['vlans'].keys.map { |k| k.to_i }.select { |k| k > 100 }\n",
        )
        .unwrap();
        assert_eq!(
            v["vlans"],
            json!({"100": {"name": "web"}, "110": {"name": "db"}})
        );
        assert_eq!(v["h"], json!({"a": 2, "b": 3}));
        assert_eq!(v["r"], 3);
        assert_eq!(v["c"], "web");
        assert_eq!(v["i"], "two");
        assert_eq!(v["u"], "yes");
        assert_eq!(v["m"], json!([110]));
    }

    #[test]
    fn unless_and_or_assign_keep_earlier_values() {
        let v = attrs_of(
            "default['a'] = 1\ndefault_unless['a'] = 2\ndefault_unless['b'] = 3\n\
             default['c'] ||= 4\ndefault['n'] = 1\ndefault['n'] += 1\ndefault['z'] = nil\n\
             default['z'] ||= 6\nif default['x']['y'] then default['t'] = 1 end\n",
        )
        .unwrap();
        // Chef's VividMash#[] creates a missing key as {} on read, so `||=` on a missing key leaves
        // {} and a level read is always truthy (checked against Chef in tests/it/chef_attrs.rs); a key
        // holding nil is assigned.
        assert_eq!(
            v,
            json!({"a": 1, "b": 3, "c": {}, "n": 2, "z": 6, "x": {"y": {}}, "t": 1})
        );
    }

    #[test]
    fn a_fact_dependent_error_before_facts_names_the_fact_and_the_second_evaluation() {
        let e =
            attrs_of("v = value_for_platform_family('fedora' => 'eos')\ndefault['a'] = v.upcase\n")
                .unwrap_err()
                .to_string();
        assert!(
            e.starts_with("attributes/default.rb:2: `upcase` on nil")
                && e.contains("`platform_family`")
                && e.contains("second evaluation"),
            "{e}"
        );
        // With the fact present, the same file evaluates.
        let p = parse(
            Path::new("attributes/default.rb"),
            "default['a'] = value_for_platform_family('fedora' => 'eos').upcase\n",
        )
        .unwrap();
        let mut set = AttributeSet::new();
        set.push(
            Component::Automatic,
            Source::Automatic,
            json!({"platform_family": "fedora"})
                .as_object()
                .unwrap()
                .clone(),
        );
        attribute_file(&p, &mut set, file_source(), None).unwrap();
        assert_eq!(set.merged()["a"], "EOS");
        // Errors that read no missing fact are unchanged.
        let e = attrs_of("default['a'] = nil.upcase\n")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("second evaluation"), "{e}");
    }

    /// Parse and evaluate as a run does (on the Ruby stack), called from a thread with the 2 MB
    /// stack of a tokio worker.
    fn attrs_on_worker_stack(text: String) -> Result<Value, CookbookError> {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let path = Path::new("attributes/default.rb");
                crate::cookbook::ruby::on_ruby_stack(path, || {
                    let p = parse(path, &text)?;
                    let mut set = AttributeSet::new();
                    attribute_file(&p, &mut set, file_source(), None)?;
                    Ok(Value::Object(set.merged()))
                })
            })
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn hostile_cookbooks_are_refused_with_file_and_line() {
        let hostile = [
            // 60 KB of nested brackets (Drop of the AST overflowed a worker's stack).
            (
                format!("x = 1\ndefault['a'] = {}1\n", "[".repeat(30_000)),
                "attributes/default.rb:2: brackets nested too deep",
            ),
            // 200 KB of one expression: the parser and the AST's drop recurse on every `+`.
            (
                format!("default['a'] = 1{}\n", "+1".repeat(100_000)),
                "nested more than 200 levels deep",
            ),
            (
                format!(
                    "x = 1\n{}1\n{}",
                    "begin\n".repeat(20_000),
                    "end\n".repeat(20_000)
                ),
                "nested more than 200 levels deep",
            ),
            (
                format!("# {}\n", "x".repeat(300_000)),
                "attributes/default.rb:1: file of 300003 bytes",
            ),
            // Doubling strings, arrays and hashes; `map` and `times`; nesting; the total per file.
            (
                "a = 'x'\n40.times { a = a + a }\n".into(),
                "attributes/default.rb:2: value too large",
            ),
            (
                "a = [1, 2]\n40.times { |i| a = a + a }\n".into(),
                "value too large",
            ),
            (
                "b = 'xxxxxxxx'\n19.times { b = b + b }\nc = [b, b, b, b, b, b, b, b, b]\n".into(),
                "attributes/default.rb:3: value too large",
            ),
            (
                "b = 'xxxxxxxx'\n19.times { b = b + b }\nc = \"#{b}#{b}#{b}\"\n".into(),
                "attributes/default.rb:3: value too large",
            ),
            (
                "s = 'xxxxxxxx'\n16.times { s = s + s }\nx = (1..60_000).to_a.join(s)\n".into(),
                "attributes/default.rb:3: `join`",
            ),
            (
                "x = (1..60_000).to_a.uniq\n".into(),
                "attributes/default.rb:1: `uniq`",
            ),
            (
                "h = { 'k' => 'v' }\n40.times { h = { 'a' => h, 'b' => h } }\n".into(),
                "value too large",
            ),
            (
                "b = 'xxxxxxxx'\n19.times { b = b + b }\n(1..60_000).map { |i| b }\n".into(),
                "attributes/default.rb:3: value too large",
            ),
            (
                "b = 'xxxxxxxx'\n19.times { b = b + b }\n40.times { |i| default[i.to_s] = b }\n"
                    .into(),
                "add up to more than",
            ),
            (
                "a = []\n100.times { a = [a] }\n".into(),
                "nested more than 64 deep",
            ),
        ];
        for (text, want) in hostile {
            let e = attrs_on_worker_stack(text.clone()).unwrap_err().to_string();
            assert!(e.contains(want), "{}...: {e}", &text[..text.len().min(60)]);
            assert!(e.starts_with("attributes/default.rb:"), "{e}");
        }
    }

    #[test]
    fn an_evaluation_past_its_time_is_refused() {
        let text = "default['n'] = 0\n60_000.times { |i| default['n'] = i\n node['n'] }\n";
        let p = parse(Path::new("attributes/default.rb"), text).unwrap();
        let mut set = AttributeSet::new();
        let mut e = Eval::new(&p, &mut set, file_source(), None);
        e.time_limit = std::time::Duration::from_millis(50);
        let err = e.run().unwrap_err().to_string();
        // The bound is checked at every statement: which of the loop's two lines is running when it
        // passes depends on the machine's speed.
        let at_loop = ["attributes/default.rb:2:", "attributes/default.rb:3:"]
            .iter()
            .any(|l| err.starts_with(l));
        assert!(
            at_loop && err.contains(": evaluation: took longer than 50ms"),
            "{err}"
        );
    }

    #[test]
    fn chef_host_resources_are_refused_and_common_properties_ignored() {
        let refused = [
            (
                "link '/etc/chef' do\n  to '/opt/chef'\nend\n",
                "recipes/default.rb:1: resource `link \"/etc/chef\"`: Chef's `link`",
            ),
            (
                "x = 1\nlink 'Ethernet1' do\n  owner 'root'\nend\n",
                "recipes/default.rb:2: resource `link \"Ethernet1\"`",
            ),
            (
                "package 'httpd'\n",
                "recipes/default.rb:1: resource `package`: a host resource netgw does not manage",
            ),
            (
                "template '/etc/motd' do\n  source 'motd.erb'\nend\n",
                "recipes/default.rb:1: resource `template`: a host resource",
            ),
            (
                "netdev_vlan 'web' do\n  vlan_id 1\n  retries 'twice'\nend\n",
                "recipes/default.rb:3: `retries` of a string",
            ),
        ];
        for (text, want) in refused {
            let e = recipe_of(text, json!({})).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
        let r = recipe_of(
            "netdev_vlan 'web' do\n  vlan_id 1\n  provider 'Chef::Provider::CumulusVlan'\n  retries 2\n  retry_delay 1\n  ignore_failure :quiet\n  sensitive true\nend\nlink 'Ethernet1' do\n  mtu 9000\nend\n",
            json!({}),
        )
        .unwrap();
        assert_eq!(r[0].properties, vec![("vlan_id".to_owned(), json!(1))]);
        assert_eq!(r[1].kind, "link");
    }

    #[test]
    fn resources_in_loops_over_node_attributes() {
        let r = recipe_of(
            "node['netdev']['vlans'].each do |id, props|\n  netdev_vlan props['name'] do\n    vlan_id id.to_i\n    description \"vlan #{id}\"\n    action :create\n  end\nend\n\
             netdev_l2_interface 'ge-0/0/1' do\n  tagged_vlans %w[web db]\n  vlan_tagging true\nend\n",
            json!({"netdev": {"vlans": {"100": {"name": "web"}, "200": {"name": "db"}}}}),
        )
        .unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[1].name, "db");
        assert_eq!(r[1].property("vlan_id"), Some(&json!(200)));
        assert_eq!(r[1].actions, ["create"]);
        assert_eq!(r[1].line, 2);
        assert_eq!(r[2].property("tagged_vlans"), Some(&json!(["web", "db"])));
    }

    #[test]
    fn unsupported_constructs_name_file_line_and_construct() {
        let cases = [
            (
                "x = 1\n`reboot`\n",
                "attributes/default.rb:2: shell command (backticks)",
            ),
            (
                "File.read('/etc/passwd')\n",
                "attributes/default.rb:1: constant `File`",
            ),
            (
                "def f; end\n",
                "attributes/default.rb:1: method definition `def f`",
            ),
            (
                "default['a'] = 1\n\nwhile true do end\n",
                "attributes/default.rb:3: while loop",
            ),
            (
                "default['a']['b'] = node['x']['y']\n",
                "attributes/default.rb:1: node[\"x\"][\"y\"]",
            ),
            (
                "node['a'] = 1\n",
                "attributes/default.rb:1: assignment to node[...]",
            ),
            ("node.set['a'] = 1\n", "attributes/default.rb:1: `node.set`"),
            (
                "netdev_vlan 'x' do\n vlan_id 1\nend\n",
                "attributes/default.rb:1: resource `netdev_vlan`",
            ),
            (
                "include_recipe 'a'\n",
                "attributes/default.rb:1: `include_recipe`",
            ),
            (
                "default['a'] = 'x'\ndefault['a']['b'] = 1\n",
                "attributes/default.rb:2: default assignment",
            ),
            (
                "(1..1_000_000).each { |i| }\n",
                "attributes/default.rb:1: range 1..1000000",
            ),
        ];
        for (text, want) in cases {
            let e = attrs_of(text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
        let deep = format!("default['a'] = 1{}\n", "+1".repeat(300));
        let e = attrs_on_worker_stack(deep).unwrap_err().to_string();
        assert!(e.contains("nested more than 200 levels deep"), "{e}");
        let e = attrs_of("default['a'] = 'secret-value' + 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a string + an integer") && !e.contains("secret-value"),
            "{e}"
        );
        let e = recipe_of(
            "netdev_vlan 'a' do\n  vlan_id 1\n  only_if { true }\nend\n",
            json!({}),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("recipes/default.rb:3: block passed to `only_if`: guards"),
            "{e}"
        );
    }
}
