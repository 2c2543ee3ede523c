//! Method calls, blocks and resources of the evaluator ([`super`]).

use super::{
    Eval, RESOURCE_KINDS, ResourceDecl, Root, inspect, is_node, precedence, ruby_eq, to_s, truthy,
    type_name,
};
use crate::cookbook::CookbookError;
use lib_ruby_parser::Node;
use lib_ruby_parser::nodes::{Block, Send};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// `Chef::Log`.
fn is_chef_log(n: &Node) -> bool {
    matches!(n, Node::Const(c) if c.name == "Log"
        && matches!(c.scope.as_deref(), Some(Node::Const(p)) if p.name == "Chef" && p.scope.is_none()))
}

/// A block parameter: a name, or `(a, b)` destructuring.
enum Param {
    Name(String),
    Destructure(Vec<Param>),
}

impl Eval<'_> {
    pub(super) fn send(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let Some(r) = s.recv.as_deref() else {
            return self.call(n, s);
        };
        if is_chef_log(r)
            && matches!(
                s.method_name.as_str(),
                "debug" | "info" | "warn" | "error" | "fatal"
            )
        {
            // Logging changes nothing netgw computes; the message is still evaluated (and checked).
            self.args(s)?;
            return Ok(Value::Null);
        }
        if is_node(r) {
            return self.node_method(n, s);
        }
        let recv = match self.root(r)? {
            Root::Node => self.merged().clone(),
            Root::Level(c) => self.level(c),
            Root::Value(v) => v,
        };
        let args = self.args(s)?;
        self.method(n, s, recv, args)
    }

    fn args(&mut self, s: &Send) -> Result<Vec<Value>, CookbookError> {
        let mut out = Vec::with_capacity(s.args.len());
        for a in &s.args {
            if matches!(a, Node::BlockPass(_)) {
                return Err(self.err(
                    a.expression(),
                    "block argument `&`",
                    "pass an explicit block",
                ));
            }
            out.push(self.eval(a)?);
        }
        Ok(out)
    }

    /// A call without a receiver: `node`, a precedence level, `include_recipe`, a resource, or (inside
    /// a resource block) a property.
    fn call(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let name = s.method_name.as_str();
        if s.args.is_empty() {
            if name == "node" {
                return Ok(self.merged().clone());
            }
            if let Some(c) = precedence(name) {
                return Ok(self.level(c));
            }
        }
        if self.current.is_some() {
            return self.property(n, s);
        }
        if name == "include_recipe" {
            return self.include(n, s);
        }
        if RESOURCE_KINDS.contains(&name) {
            return self.resource(n, s, None);
        }
        if matches!(
            name,
            "data_bag_item" | "data_bag" | "search" | "encrypted_data_bag_item"
        ) {
            return Err(self.err(
                n.expression(),
                format!("call to `{name}`"),
                "netgw reads no data bags and runs no searches; put the values in attributes, roles or environments",
            ));
        }
        Err(self.unsupported(n))
    }

    fn property(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let name = s.method_name.clone();
        let mut args = self.args(s)?;
        let value = match (name.as_str(), args.len()) {
            (_, 0) => {
                return Err(self.err(
                    n.expression(),
                    format!("`{name}` without a value"),
                    "reading a resource property back is not evaluated",
                ));
            }
            ("action", _) => {
                let list = if args.len() == 1 {
                    args.remove(0)
                } else {
                    Value::Array(args)
                };
                let actions: Vec<String> = match list {
                    Value::Array(a) => a.iter().map(to_s).collect(),
                    other => vec![to_s(&other)],
                };
                if let Some(d) = self.current.as_mut() {
                    d.actions = actions;
                }
                return Ok(Value::Null);
            }
            (_, 1) => args.remove(0),
            _ => Value::Array(args),
        };
        if let Some(d) = self.current.as_mut() {
            d.properties.push((name, value));
        }
        Ok(Value::Null)
    }

    fn include(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let names = self.args(s)?;
        if self.host.is_none() {
            return Err(self.err(
                n.expression(),
                "`include_recipe`",
                "only recipes can include recipes (this is an attribute file)",
            ));
        }
        // The included recipe reads what this one has assigned so far.
        self.flush();
        self.merged = None;
        for v in names {
            let Value::String(name) = v else {
                return Err(self.err(
                    n.expression(),
                    "`include_recipe`",
                    format!("takes recipe names, found {}", type_name(&v)),
                ));
            };
            let at = self.err(n.expression(), format!("`include_recipe {name:?}`"), "");
            if let Some(host) = self.host.as_deref_mut() {
                host.include_recipe(&name, self.attrs, at)?;
            }
        }
        self.merged = None;
        Ok(Value::Null)
    }

    /// A resource declaration, with or without a block of properties.
    fn resource(
        &mut self,
        n: &Node,
        s: &Send,
        body: Option<&Node>,
    ) -> Result<Value, CookbookError> {
        if self.host.is_none() {
            return Err(self.err(
                n.expression(),
                format!("resource `{}`", s.method_name),
                "resources belong in recipes, not attribute files",
            ));
        }
        let name = match self.args(s)?.as_slice() {
            [Value::String(v)] => v.clone(),
            [Value::Number(v)] => v.to_string(),
            other => {
                return Err(self.err(
                    n.expression(),
                    format!("resource `{}`", s.method_name),
                    format!("takes one name (a string), found {} arguments", other.len()),
                ));
            }
        };
        if self.current.is_some() {
            return Err(self.err(
                n.expression(),
                format!("resource `{}`", s.method_name),
                "declared inside another resource's block",
            ));
        }
        self.current = Some(ResourceDecl {
            kind: s.method_name.clone(),
            name,
            path: self.p.path.clone(),
            line: self.p.line(n.expression()),
            properties: Vec::new(),
            actions: Vec::new(),
        });
        self.scopes.push(HashMap::new());
        let r = self.eval_body(body);
        self.scopes.pop();
        let decl = self.current.take();
        r?;
        self.resources.extend(decl);
        Ok(Value::Null)
    }

    fn node_method(&mut self, n: &Node, s: &Send) -> Result<Value, CookbookError> {
        let name = s.method_name.as_str();
        if let Some(c) = precedence(name)
            && s.args.is_empty()
        {
            return Ok(self.level(c));
        }
        let args = self.args(s)?;
        let merged = self.merged().clone();
        match name {
            "attribute?" | "key?" | "has_key?" | "include?" => {
                let k = args.first().map(to_s).unwrap_or_default();
                Ok(Value::Bool(merged.get(&k).is_some()))
            }
            "dig" | "read" => Ok(dig(&merged, &args)),
            _ => Err(self.err(
                n.expression(),
                format!("`node.{name}`"),
                "not an attribute read netgw can evaluate before the run (use node['...'])",
            )),
        }
    }

    pub(super) fn block(&mut self, n: &Node, b: &Block) -> Result<Value, CookbookError> {
        let Node::Send(call) = &*b.call else {
            return Err(self.unsupported(n));
        };
        let Some(recv) = call.recv.as_deref() else {
            if RESOURCE_KINDS.contains(&call.method_name.as_str()) && self.current.is_none() {
                return self.resource(n, call, b.body.as_deref());
            }
            let why = if self.current.is_some() {
                "guards and notifications run Ruby at converge time; netgw never runs code"
            } else {
                "outside the Ruby subset netgw evaluates statically (see docs/cookbooks.md); nothing is run"
            };
            return Err(self.err(
                n.expression(),
                format!("block passed to `{}`", call.method_name),
                why,
            ));
        };
        let recv = self.eval(recv)?;
        if !call.args.is_empty() {
            return Err(self.err(
                n.expression(),
                format!("`{}` with arguments", call.method_name),
                "iterators take no arguments here",
            ));
        }
        let params = match b.args.as_deref() {
            None => Vec::new(),
            Some(Node::Args(a)) => a
                .args
                .iter()
                .map(|p| self.param(p))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(self.unsupported(other)),
        };
        self.iterate(n, &call.method_name, recv, &params, b.body.as_deref())
    }

    fn param(&self, p: &Node) -> Result<Param, CookbookError> {
        match p {
            Node::Arg(a) => Ok(Param::Name(a.name.clone())),
            Node::Procarg0(a) => match a.args.as_slice() {
                [one] => self.param(one),
                many => Ok(Param::Destructure(
                    many.iter()
                        .map(|p| self.param(p))
                        .collect::<Result<_, _>>()?,
                )),
            },
            Node::Mlhs(m) => Ok(Param::Destructure(
                m.items
                    .iter()
                    .map(|p| self.param(p))
                    .collect::<Result<_, _>>()?,
            )),
            other => Err(self.err(
                other.expression(),
                "block parameter",
                format!("{} parameters are not supported", other.str_type()),
            )),
        }
    }

    fn iterate(
        &mut self,
        n: &Node,
        method: &str,
        recv: Value,
        params: &[Param],
        body: Option<&Node>,
    ) -> Result<Value, CookbookError> {
        let items: Vec<Value> = match (&recv, method) {
            (Value::Number(c), "times") => {
                let count = c
                    .as_i64()
                    .filter(|c| (0..super::MAX_RANGE).contains(c))
                    .ok_or_else(|| {
                        self.err(
                            n.expression(),
                            "`times`",
                            format!("count must be 0 to {}", super::MAX_RANGE),
                        )
                    })?;
                (0..count).map(Value::from).collect()
            }
            (Value::Array(a), _) => a.clone(),
            (Value::Object(m), _) => m
                .iter()
                .map(|(k, v)| Value::Array(vec![Value::String(k.clone()), v.clone()]))
                .collect(),
            (Value::Null, _) => {
                return Err(self.err(
                    n.expression(),
                    format!("`{method}` on nil"),
                    "the value is nil (a missing attribute?); Chef raises NoMethodError",
                ));
            }
            (other, _) => {
                return Err(self.err(
                    n.expression(),
                    format!("`{method}` on {}", type_name(other)),
                    "only arrays, hashes and ranges are iterated",
                ));
            }
        };
        let mut results = Vec::new();
        for (i, item) in items.iter().enumerate() {
            self.step(n.expression())?;
            let yielded = match method {
                "each" | "each_pair" | "map" | "collect" | "select" | "filter" | "reject" | "times" | "flat_map" => vec![item.clone()],
                "each_with_index" => vec![item.clone(), Value::from(i)],
                "each_key" => vec![first(item)],
                "each_value" => vec![second(item)],
                _ => return Err(self.err(n.expression(), format!("`{method}` with a block"), "supported iterators: each, each_pair, each_with_index, each_key, each_value, map, flat_map, select, reject, times")),
            };
            let mut scope = HashMap::new();
            bind(params, yielded, &mut scope);
            self.scopes.push(scope);
            let r = self.eval_body(body);
            self.scopes.pop();
            results.push(r?);
        }
        let keep = |want: bool, results: &[Value]| -> Vec<Value> {
            items
                .iter()
                .zip(results)
                .filter(|(_, r)| truthy(r) == want)
                .map(|(i, _)| i.clone())
                .collect()
        };
        Ok(match method {
            "map" | "collect" => Value::Array(results),
            "flat_map" => Value::Array(
                results
                    .into_iter()
                    .flat_map(|r| match r {
                        Value::Array(a) => a,
                        v => vec![v],
                    })
                    .collect(),
            ),
            "select" | "filter" => rebuild(&recv, keep(true, &results)),
            "reject" => rebuild(&recv, keep(false, &results)),
            _ => recv,
        })
    }

    pub(super) fn binary(
        &self,
        n: &Node,
        op: &str,
        l: Value,
        r: Value,
    ) -> Result<Value, CookbookError> {
        use std::cmp::Ordering;
        let bad = || {
            self.err(
                n.expression(),
                format!("{} {op} {}", type_name(&l), type_name(&r)),
                "operands of these types are not supported (values are not shown: they may be secrets)",
            )
        };
        Ok(match op {
            "==" | "eql?" => Value::Bool(ruby_eq(&l, &r)),
            "!=" => Value::Bool(!ruby_eq(&l, &r)),
            "<" | ">" | "<=" | ">=" => {
                let ord = match (&l, &r) {
                    (Value::Number(a), Value::Number(b)) => a.as_f64().partial_cmp(&b.as_f64()),
                    (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                    _ => None,
                }
                .ok_or_else(bad)?;
                Value::Bool(match op {
                    "<" => ord == Ordering::Less,
                    ">" => ord == Ordering::Greater,
                    "<=" => ord != Ordering::Greater,
                    _ => ord != Ordering::Less,
                })
            }
            "+" | "-" | "*" => match (&l, &r) {
                (Value::Number(a), Value::Number(b)) => {
                    let (a, b) = (a.as_i64().ok_or_else(bad)?, b.as_i64().ok_or_else(bad)?);
                    let v = match op {
                        "+" => a.checked_add(b),
                        "-" => a.checked_sub(b),
                        _ => a.checked_mul(b),
                    };
                    Value::from(v.ok_or_else(bad)?)
                }
                (Value::String(a), Value::String(b)) if op == "+" => {
                    Value::String(format!("{a}{b}"))
                }
                (Value::Array(a), Value::Array(b)) if op == "+" => {
                    Value::Array(a.iter().chain(b).cloned().collect())
                }
                (Value::Array(a), Value::Array(b)) if op == "-" => {
                    Value::Array(a.iter().filter(|x| !b.contains(x)).cloned().collect())
                }
                _ => return Err(bad()),
            },
            _ => return Err(bad()),
        })
    }

    /// Methods on values.
    fn method(
        &mut self,
        n: &Node,
        s: &Send,
        recv: Value,
        args: Vec<Value>,
    ) -> Result<Value, CookbookError> {
        let m = s.method_name.as_str();
        let unsupported = || {
            self.err(
                n.expression(),
                format!("`{m}` on {}", type_name(&recv)),
                "not a method netgw evaluates (see docs/cookbooks.md)",
            )
        };
        if let [arg] = args.as_slice()
            && matches!(
                m,
                "==" | "!=" | "<" | ">" | "<=" | ">=" | "+" | "-" | "*" | "eql?"
            )
        {
            return self.binary(n, m, recv, arg.clone());
        }
        if let Value::String(x) = &recv
            && let Some(v) = string_method(m, x, &args)
        {
            return Ok(v);
        }
        let arg0 = args.first();
        Ok(match (m, &recv) {
            ("!", v) => Value::Bool(!truthy(v)),
            ("-@", Value::Number(x)) => Value::from(-x.as_i64().ok_or_else(unsupported)?),
            ("nil?", v) => Value::Bool(v.is_null()),
            ("empty?", Value::String(x)) => Value::Bool(x.is_empty()),
            ("empty?", Value::Array(x)) => Value::Bool(x.is_empty()),
            ("empty?", Value::Object(x)) => Value::Bool(x.is_empty()),
            ("include?" | "member?", Value::Array(x)) => {
                Value::Bool(arg0.is_some_and(|a| x.iter().any(|e| ruby_eq(e, a))))
            }
            ("include?" | "member?" | "key?" | "has_key?", Value::Object(x)) => {
                Value::Bool(arg0.is_some_and(|a| x.contains_key(&to_s(a))))
            }
            ("keys", Value::Object(x)) => {
                Value::Array(x.keys().cloned().map(Value::String).collect())
            }
            ("values", Value::Object(x)) => Value::Array(x.values().cloned().collect()),
            ("length" | "size" | "count", Value::Array(x)) if args.is_empty() => {
                Value::from(x.len())
            }
            ("length" | "size" | "count", Value::Object(x)) if args.is_empty() => {
                Value::from(x.len())
            }
            ("first", Value::Array(x)) if args.is_empty() => {
                x.first().cloned().unwrap_or(Value::Null)
            }
            ("last", Value::Array(x)) if args.is_empty() => {
                x.last().cloned().unwrap_or(Value::Null)
            }
            ("sort", Value::Array(x)) => sorted(x.clone()).ok_or_else(unsupported)?,
            ("uniq", Value::Array(x)) => Value::Array(x.iter().fold(Vec::new(), |mut acc, v| {
                if !acc.contains(v) {
                    acc.push(v.clone())
                }
                acc
            })),
            ("compact", Value::Array(x)) => {
                Value::Array(x.iter().filter(|v| !v.is_null()).cloned().collect())
            }
            ("reverse", Value::Array(x)) => Value::Array(x.iter().rev().cloned().collect()),
            ("join", Value::Array(x)) => Value::String(
                x.iter()
                    .map(to_s)
                    .collect::<Vec<_>>()
                    .join(&arg0.map(to_s).unwrap_or_default()),
            ),
            ("to_a", Value::Array(_)) => recv.clone(),
            ("to_a", Value::Object(x)) => Value::Array(
                x.iter()
                    .map(|(k, v)| Value::Array(vec![Value::String(k.clone()), v.clone()]))
                    .collect(),
            ),
            ("to_h" | "to_hash", Value::Object(_)) => recv.clone(),
            ("to_s" | "to_str", v) => Value::String(to_s(v)),
            ("to_i", Value::Number(x)) => Value::from(x.as_f64().ok_or_else(unsupported)? as i64),
            ("to_i", Value::Null) => Value::from(0),
            ("fetch", Value::Object(x)) => {
                match (arg0.map(to_s).and_then(|k| x.get(&k).cloned()), args.get(1)) {
                    (Some(v), _) => v,
                    (None, Some(d)) => d.clone(),
                    (None, None) => {
                        return Err(self.err(
                            n.expression(),
                            format!("`fetch({})`", arg0.map(inspect).unwrap_or_default()),
                            "key not found (Chef raises KeyError)",
                        ));
                    }
                }
            }
            ("dig", v) => dig(v, &args),
            ("merge", Value::Object(x)) => match arg0 {
                Some(Value::Object(y)) => {
                    let mut z = x.clone();
                    z.extend(y.clone());
                    Value::Object(z)
                }
                _ => return Err(unsupported()),
            },
            ("zero?", Value::Number(x)) => Value::Bool(x.as_f64() == Some(0.0)),
            _ => return Err(unsupported()),
        })
    }
}

/// Methods of strings (`None`: not one of them).
fn string_method(m: &str, x: &str, args: &[Value]) -> Option<Value> {
    let arg0 = args.first().map(to_s);
    Some(match m {
        "include?" => Value::Bool(arg0.is_some_and(|a| x.contains(&a))),
        "length" | "size" => Value::from(x.chars().count()),
        "to_sym" => Value::String(x.to_owned()),
        "to_i" => Value::from(leading_int(x)),
        "upcase" => Value::String(x.to_uppercase()),
        "downcase" => Value::String(x.to_lowercase()),
        "strip" => Value::String(x.trim().to_owned()),
        "start_with?" => Value::Bool(args.iter().any(|a| x.starts_with(&to_s(a)))),
        "end_with?" => Value::Bool(args.iter().any(|a| x.ends_with(&to_s(a)))),
        "split" => Value::Array(match arg0 {
            Some(sep) if sep != " " => x
                .split(sep.as_str())
                .map(|p| Value::String(p.into()))
                .collect(),
            _ => x
                .split_whitespace()
                .map(|p| Value::String(p.into()))
                .collect(),
        }),
        _ => return None,
    })
}

fn bind(params: &[Param], mut yielded: Vec<Value>, scope: &mut HashMap<String, Value>) {
    // Ruby splats a single yielded array over several block parameters.
    if params.len() > 1
        && yielded.len() == 1
        && let Some(Value::Array(a)) = yielded.first()
    {
        yielded = a.clone();
    }
    for (i, p) in params.iter().enumerate() {
        let v = yielded.get(i).cloned().unwrap_or(Value::Null);
        match p {
            Param::Name(name) => {
                scope.insert(name.clone(), v);
            }
            Param::Destructure(sub) => {
                let parts = match v {
                    Value::Array(a) => a,
                    other => vec![other],
                };
                bind_all(sub, parts, scope);
            }
        }
    }
}

fn bind_all(params: &[Param], parts: Vec<Value>, scope: &mut HashMap<String, Value>) {
    for (i, p) in params.iter().enumerate() {
        let v = parts.get(i).cloned().unwrap_or(Value::Null);
        match p {
            Param::Name(name) => {
                scope.insert(name.clone(), v);
            }
            Param::Destructure(sub) => bind(sub, vec![v], scope),
        }
    }
}

fn first(item: &Value) -> Value {
    item.as_array()
        .and_then(|a| a.first())
        .cloned()
        .unwrap_or(Value::Null)
}

fn second(item: &Value) -> Value {
    item.as_array()
        .and_then(|a| a.get(1))
        .cloned()
        .unwrap_or(Value::Null)
}

/// `select`/`reject` on a hash give a hash back.
fn rebuild(recv: &Value, kept: Vec<Value>) -> Value {
    if !recv.is_object() {
        return Value::Array(kept);
    }
    let mut m = Map::new();
    for pair in kept {
        if let Value::Array(kv) = pair
            && let [Value::String(k), v] = kv.as_slice()
        {
            m.insert(k.clone(), v.clone());
        }
    }
    Value::Object(m)
}

fn dig(v: &Value, keys: &[Value]) -> Value {
    let mut cur = v;
    for k in keys {
        cur = match (cur, k) {
            (Value::Object(m), k) => match m.get(&to_s(k)) {
                Some(x) => x,
                None => return Value::Null,
            },
            (Value::Array(a), Value::Number(i)) => match i.as_u64().and_then(|i| a.get(i as usize))
            {
                Some(x) => x,
                None => return Value::Null,
            },
            _ => return Value::Null,
        };
    }
    cur.clone()
}

/// Ruby's `sort` of numbers or of strings (mixed types raise in Ruby).
fn sorted(mut a: Vec<Value>) -> Option<Value> {
    if a.iter().all(Value::is_number) {
        a.sort_by(|x, y| {
            x.as_f64()
                .partial_cmp(&y.as_f64())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    } else if a.iter().all(Value::is_string) {
        a.sort_by(|x, y| x.as_str().cmp(&y.as_str()));
    } else {
        return None;
    }
    Some(Value::Array(a))
}

/// Ruby's `String#to_i`: the leading decimal digits (with a sign), 0 when there are none.
fn leading_int(s: &str) -> i64 {
    let t = s.trim_start();
    let (sign, rest) = match t.strip_prefix('-') {
        Some(r) => (-1, r),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '_')
        .filter(|c| *c != '_')
        .collect();
    digits.parse::<i64>().map(|v| sign * v).unwrap_or(0)
}
