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
//! ...); `include_recipe`; and resource blocks (`netdev_vlan 'web' do vlan_id 100 end`) with their
//! properties and actions. Anything else is an error naming the file, line and construct.
//!
//! Reads of `node[...]` see Chef's merged view at that moment: every layer loaded so far plus this
//! file's own assignments up to the read (Chef's `VividMash` writes through to the merged cache).

use super::CookbookError;
use super::ruby::{Program, body_statements, describe};
use lib_ruby_parser::{Loc, Node};
use netgw_models::attributes::{AttributeSet, Component, Source, assign_replacing};
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
}

/// The resource names a recipe may declare: Chef's netdev cookbook's and netgw's own.
pub const RESOURCE_KINDS: [&str; 8] = [
    "netdev_vlan",
    "netdev_interface",
    "netdev_l2_interface",
    "netdev_lag",
    "netdev_lag_interface",
    "netdev_group",
    "vlan",
    "link",
];

/// Evaluate an attribute file: its assignments become layers of `attrs` from `source`.
pub fn attribute_file(
    program: &Program,
    attrs: &mut AttributeSet,
    source: Source,
) -> Result<(), CookbookError> {
    let mut e = Eval::new(program, attrs, source, None);
    for s in &program.statements {
        e.eval(s)?;
    }
    e.flush();
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
    for s in &program.statements {
        e.eval(s)?;
    }
    e.flush();
    Ok(e.resources)
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

/// The keys of an `x[k1][k2]` chain, each with its node (for error lines).
type Keys<'n> = Vec<(String, &'n Node)>;

/// Where an `x[...]` chain starts.
enum Root {
    Node,
    Level(Component),
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
    host: Option<&'a mut dyn Host>,
    resources: Vec<ResourceDecl>,
    current: Option<ResourceDecl>,
    steps: u64,
    depth: usize,
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
            host,
            resources: Vec::new(),
            current: None,
            steps: 0,
            depth: 0,
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
        self.depth += 1;
        let v = self.eval_node(n);
        self.depth -= 1;
        v
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
            Node::Str(s) => Ok(Value::String(s.value.to_string_lossy())),
            Node::Sym(s) => Ok(Value::String(s.name.to_string_lossy())),
            Node::Dstr(d) => self.interpolate(&d.parts).map(Value::String),
            Node::Dsym(d) => self.interpolate(&d.parts).map(Value::String),
            Node::Heredoc(h) => self.interpolate(&h.parts).map(Value::String),
            Node::Array(a) => self.array(&a.elements),
            Node::Hash(h) => self.hash(&h.pairs),
            Node::Kwargs(h) => self.hash(&h.pairs),
            Node::Irange(r) => self.range(r.left.as_deref(), r.right.as_deref(), true, n),
            Node::Erange(r) => self.range(r.left.as_deref(), r.right.as_deref(), false, n),
            Node::Lvar(v) => Ok(self.local(&v.name).cloned().unwrap_or(Value::Null)),
            Node::Lvasgn(a) => {
                let v = match &a.value {
                    Some(v) => self.eval(v)?,
                    None => return Err(self.unsupported(n)),
                };
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
        let t = text.replace('_', "");
        let parsed = if let Some(h) = t.strip_prefix("0x") {
            i64::from_str_radix(h, 16).ok()
        } else {
            t.parse::<i64>().ok()
        };
        parsed.map(Value::from).ok_or_else(|| {
            self.err(
                loc,
                format!("integer {text}"),
                "not a 64-bit decimal or hex integer",
            )
        })
    }

    fn interpolate(&mut self, parts: &[Node]) -> Result<String, CookbookError> {
        let mut out = String::new();
        for p in parts {
            match p {
                Node::Str(s) => out.push_str(&s.value.to_string_lossy()),
                other => out.push_str(&to_s(&self.eval(other)?)),
            }
        }
        Ok(out)
    }

    fn array(&mut self, elements: &[Node]) -> Result<Value, CookbookError> {
        let mut out = Vec::with_capacity(elements.len());
        for e in elements {
            match e {
                Node::Splat(s) => match s.value.as_deref().map(|v| self.eval(v)).transpose()? {
                    Some(Value::Array(a)) => out.extend(a),
                    Some(Value::Null) | None => {}
                    Some(v) => out.push(v),
                },
                _ => out.push(self.eval(e)?),
            }
        }
        Ok(Value::Array(out))
    }

    fn hash(&mut self, pairs: &[Node]) -> Result<Value, CookbookError> {
        let mut m = Map::new();
        for p in pairs {
            let Node::Pair(pair) = p else {
                return Err(self.unsupported(p));
            };
            let k = self.eval(&pair.key)?;
            let k = self.key(&k, &pair.key)?;
            let v = self.eval(&pair.value)?;
            m.insert(k, v);
        }
        Ok(Value::Object(m))
    }

    /// An attribute or hash key as a string: Chef stores symbol and string keys alike, and JSON keys
    /// are strings (a number key is its decimal text, as when Chef saves the node).
    fn key(&self, k: &Value, at: &Node) -> Result<String, CookbookError> {
        match k {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            other => Err(self.err(
                at.expression(),
                format!("key of type {}", type_name(other)),
                "keys must be strings, symbols or numbers",
            )),
        }
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
                format!("range {}..{}", inspect(&l), inspect(&r)),
                "only integer ranges are supported",
            ));
        };
        let end = if inclusive { b } else { b - 1 };
        if end - a >= MAX_RANGE {
            return Err(self.err(
                n.expression(),
                format!("range {a}..{b}"),
                format!("more than {MAX_RANGE} elements"),
            ));
        }
        Ok(Value::Array((a..=end).map(Value::from).collect()))
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

    fn case(&mut self, c: &lib_ruby_parser::nodes::Case) -> Result<Value, CookbookError> {
        let subject = c.expr.as_deref().map(|e| self.eval(e)).transpose()?;
        for w in &c.when_bodies {
            let Node::When(w) = w else {
                return Err(self.unsupported(w));
            };
            for pat in &w.patterns {
                let hit = match (&subject, pat) {
                    (Some(s), Node::Irange(_) | Node::Erange(_)) => {
                        let r = self.eval(pat)?;
                        r.as_array().is_some_and(|a| a.contains(s))
                    }
                    (Some(s), Node::Splat(sp)) => {
                        let list = sp.value.as_deref().map(|v| self.eval(v)).transpose()?;
                        list.as_ref()
                            .and_then(Value::as_array)
                            .is_some_and(|a| a.contains(s))
                    }
                    (Some(s), _) => {
                        let v = self.eval(pat)?;
                        if matches!(pat, Node::Const(_) | Node::Regexp(_)) {
                            return Err(self.unsupported(pat));
                        }
                        ruby_eq(s, &v)
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
    /// The start of an `x[...]` chain: `node`, a precedence level (`default`, `node.default`), or a
    /// value.
    fn root(&mut self, n: &Node) -> Result<Root, CookbookError> {
        if let Node::Send(s) = n
            && s.args.is_empty()
        {
            match s.recv.as_deref() {
                None if s.method_name == "node" => return Ok(Root::Node),
                None if self.local(&s.method_name).is_none() => {
                    if let Some(c) = precedence(&s.method_name) {
                        return Ok(Root::Level(c));
                    }
                }
                Some(r) if is_node(r) => {
                    if let Some(c) = precedence(&s.method_name) {
                        return Ok(Root::Level(c));
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

    /// Split `a[k1][k2]` into `a` and the keys.
    fn chain<'n>(&mut self, n: &'n Node) -> Result<(&'n Node, Keys<'n>), CookbookError> {
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
            let kv = self.eval(k)?;
            keys.push((self.key_or_index(&kv, k)?, k));
            cur = &i.recv;
        }
        keys.reverse();
        Ok((cur, keys))
    }

    fn key_or_index(&self, k: &Value, at: &Node) -> Result<String, CookbookError> {
        self.key(k, at)
    }

    fn read_index(&mut self, n: &Node) -> Result<Value, CookbookError> {
        let (root, keys) = self.chain(n)?;
        let base = match self.root(root)? {
            Root::Node => self.merged().clone(),
            Root::Level(c) => return self.read_level(c, &keys, n.expression()),
            Root::Value(v) => v,
        };
        self.index_value(&describe_root(root), &base, &keys)
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
        let name = precedence_name(c);
        self.index_value(name, &level, keys)
    }

    fn index_value(
        &self,
        root: &str,
        base: &Value,
        keys: &[(String, &Node)],
    ) -> Result<Value, CookbookError> {
        let mut cur = base;
        let mut path = root.to_owned();
        let null = Value::Null;
        for (k, at) in keys {
            cur = match cur {
                Value::Object(m) => m.get(k).unwrap_or(&null),
                Value::Array(a) => {
                    let i = k.parse::<i64>().map_err(|_| {
                        self.err(
                            at.expression(),
                            format!("{path}[{k:?}]"),
                            "an array is indexed by integers",
                        )
                    })?;
                    let idx = if i < 0 { a.len() as i64 + i } else { i };
                    usize::try_from(idx)
                        .ok()
                        .and_then(|i| a.get(i))
                        .unwrap_or(&null)
                }
                Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {
                    return Err(self.err(
                        at.expression(),
                        format!("{path}[{k:?}]"),
                        format!(
                            "{path} is {}, which cannot be indexed (Chef raises NoMethodError)",
                            type_name(cur)
                        ),
                    ));
                }
            };
            path = format!("{path}[{k:?}]");
        }
        Ok(cur.clone())
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
        let (root, mut keys) = self.chain(&a.recv)?;
        let kv = self.eval(k)?;
        keys.push((self.key(&kv, k)?, k));
        let c = self.assign_target(root, &a.expression_l)?;
        self.set(c, &keys, value.clone(), &a.expression_l)?;
        Ok(value)
    }

    fn assign_target(&mut self, root: &Node, loc: &Loc) -> Result<Component, CookbookError> {
        match self.root(root)? {
            Root::Level(c) => Ok(c),
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
        let (root, mut keys) = self.chain(&target.recv)?;
        let kv = self.eval(k)?;
        keys.push((self.key(&kv, k)?, k));
        let c = self.assign_target(root, &target.expression_l)?;
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
        let (_, mut keys) = self.chain(&a.recv)?;
        let [k] = a.indexes.as_slice() else {
            return Err(self.err(
                &a.expression_l,
                "multi-argument index",
                "index one key at a time",
            ));
        };
        let kv = self.eval(k)?;
        keys.push((self.key(&kv, k)?, k));
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
    v.as_i64()
}

fn ruby_eq(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nil",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a hash",
    }
}

/// Ruby's `to_s`, as string interpolation uses it.
pub(crate) fn to_s(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => inspect(v),
        other => other.to_string(),
    }
}

/// Ruby's `inspect` (`[1, "a"]`, `{"k"=>1}`), as `#{}` shows arrays and hashes.
pub(crate) fn inspect(v: &Value) -> String {
    match v {
        Value::Null => "nil".into(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(a) => format!("[{}]", a.iter().map(inspect).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k:?}=>{}", inspect(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

mod calls;

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
        attribute_file(&p, &mut set, file_source())?;
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
             force_default['x'] = 1\nnormal['y'] = %w(a b)\nforce_override['z'] = (1..3)\n\
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
        let deep = format!("default['a'] = {}1{}\n", "[".repeat(300), "]".repeat(300));
        let e = attrs_of(&deep).unwrap_err().to_string();
        assert!(e.contains("nested more than 200 levels deep"), "{e}");
        let e = attrs_of("default['a'] = 'secret-value' + 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a string + a number") && !e.contains("secret-value"),
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
