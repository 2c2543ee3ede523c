//! Methods on values and block iterators, each as Ruby 3.1 defines it, or refused with file, line
//! and construct. `src/cookbook/eval/difftest.rs` checks them against `ruby` itself.

use super::refusal::Refusal;
use super::strings::{string_method, symbol_method};
use super::value::{as_hash, as_range, as_sym, key_value, map_key};
use super::{Eval, inspect, lookup, ruby_eq, to_s, truthy, type_name};
use crate::cookbook::CookbookError;
use lib_ruby_parser::Node;
use serde_json::{Map, Value};

/// Iterators taking a block, and what each may be called on (`a`rray, `h`ash, `i`nteger, `*` any).
const ITERATORS: [(&str, &str); 20] = [
    ("each", "ah"),
    ("each_pair", "h"),
    ("each_with_index", "ah"),
    ("each_key", "h"),
    ("each_value", "h"),
    ("map", "ah"),
    ("collect", "ah"),
    ("flat_map", "ah"),
    ("select", "ah"),
    ("filter", "ah"),
    ("reject", "ah"),
    ("times", "i"),
    ("tap", "*"),
    ("any?", "ah"),
    ("all?", "ah"),
    ("none?", "ah"),
    ("count", "ah"),
    ("sum", "ah"),
    ("find", "ah"),
    ("detect", "ah"),
];

fn kind(v: &Value) -> char {
    match v {
        Value::Array(_) => 'a',
        _ if as_range(v).is_some() => 'a',
        Value::Number(n) if !n.is_f64() => 'i',
        _ if as_hash(v).is_some() => 'h',
        _ => '-',
    }
}

impl Eval<'_> {
    /// The block's results per item, evaluating it as Ruby would (stopping where Ruby stops).
    pub(super) fn check_iterator(
        &self,
        n: &Node,
        method: &str,
        recv: &Value,
    ) -> Result<(), CookbookError> {
        let names: Vec<&str> = ITERATORS.iter().map(|(m, _)| *m).collect();
        match ITERATORS.iter().find(|(m, _)| *m == method) {
            Some((_, on)) if on.contains('*') || on.contains(kind(recv)) => Ok(()),
            Some(_) => Err(self.err(
                n.expression(),
                format!("`{method}` on {}", type_name(recv)),
                "Ruby has no such method on this value (on nil Chef raises NoMethodError)",
            )),
            None => Err(self.err(
                n.expression(),
                format!("`{method}` with a block"),
                format!("supported iterators: {}", names.join(", ")),
            )),
        }
    }

    /// The items an iterator yields: array elements, `[key, value]` pairs, or `0...n`.
    pub(super) fn items(&self, n: &Node, recv: &Value) -> Result<Vec<Value>, CookbookError> {
        Ok(match recv {
            Value::Number(c) => {
                let count = c
                    .as_i64()
                    .filter(|c| *c < super::MAX_RANGE)
                    .ok_or_else(|| {
                        self.err(
                            n.expression(),
                            "`times`",
                            format!("count must be below {}", super::MAX_RANGE),
                        )
                    })?;
                (0..count.max(0)).map(Value::from).collect()
            }
            Value::Array(a) => a.clone(),
            other if as_range(other).is_some() => self.range_items(other),
            other => as_hash(other)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| Value::Array(vec![key_value(k), v.clone()]))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// An iterator's value from the items and the block's results (`results` may be shorter when
    /// the iterator stopped early).
    pub(super) fn finish_iterator(
        &self,
        n: &Node,
        method: &str,
        recv: Value,
        items: &[Value],
        results: Vec<Value>,
    ) -> Result<Value, CookbookError> {
        let keep = |want: bool| -> Vec<Value> {
            items
                .iter()
                .zip(&results)
                .filter(|(_, r)| truthy(r) == want)
                .map(|(i, _)| i.clone())
                .collect()
        };
        Ok(match method {
            "map" | "collect" => Value::Array(results),
            "flat_map" => Value::Array(results.into_iter().flat_map(flatten_one).collect()),
            "select" | "filter" => rebuild(&recv, keep(true)),
            "reject" => rebuild(&recv, keep(false)),
            "any?" => Value::Bool(results.iter().any(truthy)),
            "all?" => Value::Bool(results.iter().all(truthy)),
            "none?" => Value::Bool(!results.iter().any(truthy)),
            "count" => Value::from(results.iter().filter(|r| truthy(r)).count()),
            "sum" => self.sum(n, &results)?,
            "find" | "detect" => keep(true).into_iter().next().unwrap_or(Value::Null),
            _ => recv,
        })
    }

    /// A range's elements (its size was bounded when it was built).
    fn range_items(&self, v: &Value) -> Vec<Value> {
        as_range(v)
            .map(|(a, b, x)| super::value::range_items(a, b, x))
            .unwrap_or_default()
    }

    /// Whether an iterator stops after this result, as Ruby's short-circuiting ones do.
    pub(super) fn stops(method: &str, result: &Value) -> bool {
        match method {
            "any?" | "find" | "detect" | "none?" => truthy(result),
            "all?" => !truthy(result),
            _ => false,
        }
    }

    /// `sum` of integers (Ruby adds floats with Kahan-Babuska compensation, which netgw does not
    /// reproduce, and raises on anything else).
    fn sum(&self, n: &Node, values: &[Value]) -> Result<Value, CookbookError> {
        let mut total: i64 = 0;
        for v in values {
            total = v
                .as_i64()
                .filter(|_| !v.as_number().is_some_and(serde_json::Number::is_f64))
                .and_then(|x| total.checked_add(x))
                .ok_or_else(|| {
                    self.err(
                        n.expression(),
                        format!("`sum` of {}", type_name(v)),
                        "netgw sums 64-bit integers only",
                    )
                })?;
        }
        Ok(Value::from(total))
    }

    pub(super) fn binary(
        &self,
        n: &Node,
        op: &str,
        l: Value,
        r: Value,
    ) -> Result<Value, CookbookError> {
        let bad = || {
            self.err(
                n.expression(),
                format!("{} {op} {}", type_name(&l), type_name(&r)),
                "operands of these types are not supported (values are not shown: they may be secrets)",
            )
        };
        Ok(match op {
            "==" => Value::Bool(ruby_eq(&l, &r)),
            "!=" => Value::Bool(!ruby_eq(&l, &r)),
            // `eql?` keeps 1 and 1.0 apart, as JSON numbers do.
            "eql?" => Value::Bool(l == r),
            "<" | ">" | "<=" | ">=" => Value::Bool(compare(op, &l, &r).ok_or_else(bad)?),
            "+" | "-" | "*" => arith(op, &l, &r).ok_or_else(bad)?,
            _ => return Err(bad()),
        })
    }

    /// Methods on values (without a block). `mash`: the receiver is node attributes.
    pub(super) fn method(
        &mut self,
        n: &Node,
        m: &str,
        recv: Value,
        args: Vec<Value>,
        mash: bool,
    ) -> Result<Value, CookbookError> {
        let unsupported = |why: &str| {
            self.err(
                n.expression(),
                format!("`{m}` on {}", type_name(&recv)),
                format!("{why} (see docs/cookbooks.md)"),
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
        let found = match &recv {
            Value::String(x) => string_method(m, x, &args),
            v if as_sym(v).is_some() => symbol_method(m, v, &args),
            _ => None,
        };
        if let Some(v) = found {
            return Ok(v);
        }
        if recv.is_string() || as_sym(&recv).is_some() {
            return common(m, &recv, &args)
                .ok_or_else(|| unsupported("not a method netgw evaluates"));
        }
        self.collection_method(m, &recv, &args, mash)
            .map_err(|why| unsupported(&why.to_string()))
    }

    fn collection_method(
        &self,
        m: &str,
        recv: &Value,
        args: &[Value],
        mash: bool,
    ) -> Result<Value, Refusal> {
        if let Some(v) = common(m, recv, args) {
            return Ok(v);
        }
        let none = || Refusal::NotEvaluated;
        match recv {
            Value::Array(a) => array_method(m, a, args).ok_or_else(none),
            Value::Number(x) => number_method(m, x, args).ok_or_else(none),
            Value::Null if m == "to_i" && args.is_empty() => Ok(Value::from(0)),
            v if as_range(v).is_some() => {
                range_method(m, v, args, self.range_items(v)).ok_or_else(none)
            }
            v => match as_hash(v) {
                Some(h) => hash_method(m, h, args, mash),
                None => Err(none()),
            },
        }
    }
}

/// Methods every value has.
fn common(m: &str, v: &Value, args: &[Value]) -> Option<Value> {
    if !args.is_empty() {
        return None;
    }
    Some(match m {
        "!" => Value::Bool(!truthy(v)),
        "nil?" => Value::Bool(v.is_null()),
        "to_s" => Value::String(to_s(v)?),
        "inspect" => Value::String(inspect(v)?),
        _ => return None,
    })
}

/// `Range` methods: those that mean the same as on the range's elements.
fn range_method(m: &str, v: &Value, args: &[Value], items: Vec<Value>) -> Option<Value> {
    let (a, b, exclusive) = as_range(v)?;
    Some(match (m, args) {
        ("to_a" | "entries", []) => Value::Array(items),
        ("size" | "count", []) => Value::from(items.len()),
        ("first", []) => Value::from(a),
        ("include?" | "member?" | "cover?", [x]) => {
            let x = x.as_f64()?;
            let (a, b) = (a as f64, b as f64);
            Value::Bool(a <= x && if exclusive { x < b } else { x <= b })
        }
        _ => return None,
    })
}

fn number_method(m: &str, x: &serde_json::Number, args: &[Value]) -> Option<Value> {
    if !args.is_empty() {
        return None;
    }
    Some(match m {
        "-@" if x.is_f64() => Value::from(-x.as_f64()?),
        "-@" => Value::from(x.as_i64()?.checked_neg()?),
        "to_i" if x.is_f64() => {
            let f = x.as_f64()?.trunc();
            (f.abs() < 9.0e18).then(|| Value::from(f as i64))?
        }
        "to_i" => Value::from(x.as_i64()?),
        "zero?" => Value::Bool(x.as_f64() == Some(0.0)),
        _ => return None,
    })
}

fn array_method(m: &str, a: &[Value], args: &[Value]) -> Option<Value> {
    let arg0 = args.first();
    Some(match (m, args.len()) {
        ("include?" | "member?", 1) => {
            let x = arg0?;
            Value::Bool(a.iter().any(|e| ruby_eq(e, x)))
        }
        ("join", 0) => Value::String(join(a, "")?),
        ("join", 1) if arg0?.is_null() => Value::String(join(a, "")?),
        ("join", 1) => Value::String(join(a, arg0?.as_str()?)?),
        (_, 0) => array_no_arg(m, a)?,
        _ => return None,
    })
}

fn array_no_arg(m: &str, a: &[Value]) -> Option<Value> {
    Some(match m {
        "empty?" => Value::Bool(a.is_empty()),
        "length" | "size" | "count" => Value::from(a.len()),
        "first" => a.first().cloned().unwrap_or(Value::Null),
        "last" => a.last().cloned().unwrap_or(Value::Null),
        "sort" => sorted(a.to_vec())?,
        // `uniq` and `-` compare with `eql?` (1 and 1.0 differ), as JSON equality does.
        "uniq" if a.len().saturating_mul(a.len()) > MAX_PAIRS => return None,
        "uniq" => Value::Array(a.iter().fold(Vec::new(), |mut acc, v| {
            if !acc.contains(v) {
                acc.push(v.clone())
            }
            acc
        })),
        "compact" => Value::Array(a.iter().filter(|v| !v.is_null()).cloned().collect()),
        "sum" => int_sum(a)?,
        "reverse" => Value::Array(a.iter().rev().cloned().collect()),
        "to_a" => Value::Array(a.to_vec()),
        "any?" => Value::Bool(a.iter().any(truthy)),
        "all?" => Value::Bool(a.iter().all(truthy)),
        "none?" => Value::Bool(!a.iter().any(truthy)),
        _ => return None,
    })
}

fn hash_method(
    m: &str,
    h: &Map<String, Value>,
    args: &[Value],
    mash: bool,
) -> Result<Value, Refusal> {
    let none = || Refusal::NotEvaluated;
    Ok(match (m, args) {
        ("include?" | "member?" | "key?" | "has_key?", [k]) => {
            Value::Bool(lookup(h, k, mash)?.is_some())
        }
        // Chef's attribute collections alias `attribute?` to `has_key?`; a plain Hash has none.
        ("attribute?", [k]) if mash => Value::Bool(lookup(h, k, mash)?.is_some()),
        ("fetch", [k, rest @ ..]) if rest.len() <= 1 => match (lookup(h, k, mash)?, rest) {
            (Some(v), _) => v.clone(),
            (None, [d]) => d.clone(),
            _ => return Err(Refusal::KeyNotFound),
        },
        ("dig", keys) if !keys.is_empty() => dig(&Value::Object(h.clone()), keys, mash)?,
        ("merge", [other]) => {
            let mut z = h.clone();
            z.extend(as_hash(other).ok_or_else(none)?.clone());
            Value::Object(z)
        }
        ("keys", []) => Value::Array(h.keys().map(|k| key_value(k)).collect()),
        ("values", []) => Value::Array(h.values().cloned().collect()),
        ("length" | "size" | "count", []) => Value::from(h.len()),
        ("empty?", []) => Value::Bool(h.is_empty()),
        ("to_a", []) => Value::Array(pairs(h)),
        ("to_h" | "to_hash", []) => Value::Object(h.clone()),
        _ => return Err(none()),
    })
}

fn pairs(h: &Map<String, Value>) -> Vec<Value> {
    h.iter()
        .map(|(k, v)| Value::Array(vec![key_value(k), v.clone()]))
        .collect()
}

/// `dig` through hashes and arrays; a step into anything else raises in Ruby (refused).
pub(super) fn dig(v: &Value, keys: &[Value], mash: bool) -> Result<Value, Refusal> {
    let mut cur = v.clone();
    for k in keys {
        cur = match (&cur, k) {
            (Value::Null, _) => return Ok(Value::Null),
            (Value::Array(a), Value::Number(i)) if i.is_i64() => {
                let i = i.as_i64().unwrap_or_default();
                let idx = if i < 0 { a.len() as i64 + i } else { i };
                usize::try_from(idx)
                    .ok()
                    .and_then(|i| a.get(i))
                    .cloned()
                    .unwrap_or(Value::Null)
            }
            (c, k) => match as_hash(c) {
                Some(m) => lookup(m, k, mash)?.cloned().unwrap_or(Value::Null),
                None => return Err(Refusal::DigInto(type_name(c))),
            },
        };
    }
    Ok(cur)
}

/// `sum` of 64-bit integers (floats are summed with compensation in Ruby: refused).
fn int_sum(a: &[Value]) -> Option<Value> {
    let mut total: i64 = 0;
    for v in a {
        if v.is_f64() {
            return None;
        }
        total = total.checked_add(v.as_i64()?)?;
    }
    Some(Value::from(total))
}

/// `Array#join`: nested arrays joined recursively with the same separator (`None` past
/// [`super::MAX_VALUE_BYTES`]: a long separator between many elements multiplies).
fn join(a: &[Value], sep: &str) -> Option<String> {
    let mut parts = Vec::with_capacity(a.len());
    let mut len = 0usize;
    for v in a {
        let part = match v {
            Value::Array(inner) => join(inner, sep)?,
            other => to_s(other)?,
        };
        len = len.saturating_add(part.len() + sep.len());
        if len > super::MAX_VALUE_BYTES {
            return None;
        }
        parts.push(part);
    }
    Some(parts.join(sep))
}

/// Most element comparisons `uniq` and `Array#-` may make (they compare every pair).
const MAX_PAIRS: usize = 10_000_000;

fn flatten_one(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        v => vec![v],
    }
}

/// `select`/`reject` on a hash give a hash back.
fn rebuild(recv: &Value, kept: Vec<Value>) -> Value {
    if as_hash(recv).is_none() {
        return Value::Array(kept);
    }
    let mut m = Map::new();
    for pair in kept {
        if let Value::Array(kv) = pair
            && let [k, v] = kv.as_slice()
            && let Some(k) = map_key(k)
        {
            m.insert(k, v.clone());
        }
    }
    Value::Object(m)
}

fn num_cmp(l: &Value, r: &Value) -> Option<std::cmp::Ordering> {
    match (l.as_i64(), r.as_i64()) {
        (Some(x), Some(y)) if !l.is_f64() && !r.is_f64() => Some(x.cmp(&y)),
        _ => l.as_f64()?.partial_cmp(&r.as_f64()?),
    }
}

fn compare(op: &str, l: &Value, r: &Value) -> Option<bool> {
    use std::cmp::Ordering;
    let ord = match (l, r) {
        (Value::Number(_), Value::Number(_)) => num_cmp(l, r),
        (Value::String(a), Value::String(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        _ => None,
    }?;
    Some(match op {
        "<" => ord == Ordering::Less,
        ">" => ord == Ordering::Greater,
        "<=" => ord != Ordering::Greater,
        _ => ord != Ordering::Less,
    })
}

fn arith(op: &str, l: &Value, r: &Value) -> Option<Value> {
    match (l, r) {
        (Value::Number(a), Value::Number(b)) if a.is_f64() || b.is_f64() => {
            let (x, y) = (a.as_f64()?, b.as_f64()?);
            let v = match op {
                "+" => x + y,
                "-" => x - y,
                _ => x * y,
            };
            serde_json::Number::from_f64(v).map(Value::Number)
        }
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_i64()?, b.as_i64()?);
            let v = match op {
                "+" => a.checked_add(b),
                "-" => a.checked_sub(b),
                _ => a.checked_mul(b),
            };
            v.map(Value::from)
        }
        (Value::String(a), Value::String(b)) if op == "+" => Some(Value::String(format!("{a}{b}"))),
        (Value::Array(a), Value::Array(b)) if op == "+" => {
            Some(Value::Array(a.iter().chain(b).cloned().collect()))
        }
        (Value::Array(a), Value::Array(b))
            if op == "-" && a.len().saturating_mul(b.len()) <= MAX_PAIRS =>
        {
            Some(Value::Array(
                a.iter().filter(|x| !b.contains(x)).cloned().collect(),
            ))
        }
        _ => None,
    }
}

/// Ruby's `sort` of numbers or of strings (mixed types raise in Ruby). Ruby's sort is not stable,
/// so elements that compare equal without being the same (1 and 1.0) are refused.
fn sorted(mut a: Vec<Value>) -> Option<Value> {
    if a.iter().all(Value::is_number) {
        a.sort_by(|x, y| num_cmp(x, y).unwrap_or(std::cmp::Ordering::Equal));
        if a.windows(2).any(|w| ruby_eq(&w[0], &w[1]) && w[0] != w[1]) {
            return None;
        }
    } else if a.iter().all(Value::is_string) {
        a.sort_by(|x, y| {
            x.as_str()
                .map(str::as_bytes)
                .cmp(&y.as_str().map(str::as_bytes))
        });
    } else {
        return None;
    }
    Some(Value::Array(a))
}
