//! Ruby values inside one evaluation, as JSON values that keep what JSON cannot say.
//!
//! A Symbol is a one-key object under [`SYM`]; a Symbol hash key is [`SYM_KEY`] before its name and
//! an Integer hash key is [`INT_KEY`] before its digits. No Ruby string can produce these markers
//! (a string key starting with one is refused), so `'x' == :x` is false and `{a: 1}['a']` is nil, as
//! in Ruby. Values stored into node attributes are converted to Chef's form by [`chef_value`]: Chef's
//! `VividMash` turns Symbol keys into Strings, and a Symbol value is saved as its String.

use super::refusal::Refusal;
use serde_json::{Map, Value};

/// The key of a Symbol value's one-key object.
pub(crate) const SYM: &str = "\u{1}";
/// The prefix of a Symbol hash key.
pub(crate) const SYM_KEY: char = '\u{0}';
/// The prefix of an Integer hash key.
pub(crate) const INT_KEY: char = '\u{2}';
/// The key of a Range value's one-key object (`[first, last, exclusive]`).
pub(crate) const RANGE: &str = "\u{3}";

pub(crate) fn sym(name: impl Into<String>) -> Value {
    let mut m = Map::new();
    m.insert(SYM.into(), Value::String(name.into()));
    Value::Object(m)
}

/// The name of a Symbol value.
pub(crate) fn as_sym(v: &Value) -> Option<&str> {
    match v {
        Value::Object(m) if m.len() == 1 => m.get(SYM).and_then(Value::as_str),
        _ => None,
    }
}

/// An integer Range (`a..b`, or `a...b` when `exclusive`).
pub(crate) fn range(a: i64, b: i64, exclusive: bool) -> Value {
    let mut m = Map::new();
    m.insert(RANGE.into(), serde_json::json!([a, b, exclusive]));
    Value::Object(m)
}

/// A Range value's first and last elements (`None`: empty, or not a range).
pub(crate) fn as_range(v: &Value) -> Option<(i64, i64, bool)> {
    let Value::Object(m) = v else { return None };
    match m.get(RANGE)?.as_array()?.as_slice() {
        [Value::Number(a), Value::Number(b), Value::Bool(x)] if m.len() == 1 => {
            Some((a.as_i64()?, b.as_i64()?, *x))
        }
        _ => None,
    }
}

/// The elements of a Range, in order.
pub(crate) fn range_items(a: i64, b: i64, exclusive: bool) -> Vec<Value> {
    let end = if exclusive { b.saturating_sub(1) } else { b };
    (a..=end).map(Value::from).collect()
}

/// A hash (not a Symbol or Range).
pub(crate) fn as_hash(v: &Value) -> Option<&Map<String, Value>> {
    match v {
        Value::Object(m) if as_sym(v).is_none() && as_range(v).is_none() => Some(m),
        _ => None,
    }
}

/// Whether a string would be mistaken for one of the markers.
pub(crate) fn has_marker(s: &str) -> bool {
    s.starts_with([SYM_KEY, INT_KEY]) || s == SYM || s == RANGE
}

/// The map key of a Ruby hash key (`None`: a kind of key netgw does not keep).
pub(crate) fn map_key(k: &Value) -> Option<String> {
    match k {
        Value::String(s) if !has_marker(s) => Some(s.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(format!("{INT_KEY}{n}")),
        _ => as_sym(k).map(|s| format!("{SYM_KEY}{s}")),
    }
}

/// The Ruby value of a map key.
pub(crate) fn key_value(k: &str) -> Value {
    if let Some(s) = k.strip_prefix(SYM_KEY) {
        return sym(s);
    }
    if let Some(n) = k.strip_prefix(INT_KEY).and_then(|d| d.parse::<i64>().ok()) {
        return Value::from(n);
    }
    Value::String(k.to_owned())
}

/// A value as Chef stores it in a node attribute: Symbol keys and values become Strings. An Integer
/// key or a Range is refused (`Err` names it): Chef keeps them as Ruby objects, JSON cannot.
pub(crate) fn chef_value(v: &Value) -> Result<Value, Refusal> {
    if let Some(s) = as_sym(v) {
        return Ok(Value::String(s.to_owned()));
    }
    if as_range(v).is_some() {
        return Err(Refusal::Range);
    }
    match v {
        Value::Array(a) => a
            .iter()
            .map(chef_value)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                out.insert(chef_key(k)?, chef_value(x)?);
            }
            Ok(Value::Object(out))
        }
        other => Ok(other.clone()),
    }
}

fn chef_key(k: &str) -> Result<String, Refusal> {
    if let Some(s) = k.strip_prefix(SYM_KEY) {
        return Ok(s.to_owned());
    }
    match k.strip_prefix(INT_KEY) {
        Some(n) => Err(Refusal::IntegerKey(n.to_owned())),
        None => Ok(k.to_owned()),
    }
}

/// Ruby's `==`: numbers by value (`1 == 1.0`), arrays and hashes element by element.
pub(crate) fn ruby_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_eq(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| ruby_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| ruby_eq(v, w)))
        }
        _ => a == b,
    }
}

fn num_eq(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    match (x.as_i64(), y.as_i64()) {
        (Some(p), Some(q)) => p == q,
        _ => x.as_f64() == y.as_f64(),
    }
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nil",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) if as_sym(v).is_some() => "a symbol",
        Value::Object(_) if as_range(v).is_some() => "a range",
        Value::Object(_) => "a hash",
    }
}

/// Ruby's `to_s` (`None`: a float whose text netgw does not reproduce).
pub(crate) fn to_s(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some(String::new()),
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => number_s(n),
        Value::Bool(b) => Some(b.to_string()),
        _ => as_sym(v).map(str::to_owned).or_else(|| inspect(v)),
    }
}

/// Ruby 3.1's `inspect` (`[1, "a"]`, `{"k"=>1, :s=>2}`), as `to_s` and `#{}` show arrays and hashes.
pub(crate) fn inspect(v: &Value) -> Option<String> {
    if let Some(s) = as_sym(v) {
        return inspect_sym(s);
    }
    if let Some((a, b, x)) = as_range(v) {
        return Some(format!("{a}{}{b}", if x { "..." } else { ".." }));
    }
    match v {
        Value::Null => Some("nil".into()),
        Value::String(s) => inspect_str(s),
        Value::Array(a) => {
            let parts = a.iter().map(inspect).collect::<Option<Vec<_>>>()?;
            Some(format!("[{}]", parts.join(", ")))
        }
        Value::Object(m) => {
            let parts = m
                .iter()
                .map(|(k, v)| Some(format!("{}=>{}", inspect(&key_value(k))?, inspect(v)?)))
                .collect::<Option<Vec<_>>>()?;
            Some(format!("{{{}}}", parts.join(", ")))
        }
        other => to_s(other),
    }
}

fn inspect_sym(s: &str) -> Option<String> {
    let mut chars = s.chars();
    let simple = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.trim_end_matches(['?', '!'])
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.matches(['?', '!']).count() <= usize::from(s.ends_with(['?', '!']));
    if simple {
        Some(format!(":{s}"))
    } else {
        inspect_str(s).map(|q| format!(":{q}"))
    }
}

/// Ruby's `String#inspect` for the characters netgw can render exactly (`None` otherwise).
fn inspect_str(s: &str) -> Option<String> {
    let mut out = String::from('"');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '#' if matches!(chars.peek(), Some('{' | '$' | '@')) => out.push_str("\\#"),
            c if c.is_ascii_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c if c.is_ascii() => out.push(c),
            _ => return None,
        }
    }
    out.push('"');
    Some(out)
}

/// Ruby's `Integer#to_s` and `Float#to_s`. A float is shown fixed when its decimal exponent is -4
/// to 15 and in Ruby's `1.0e+16` form beyond; at exactly 16 digits before the point Ruby's choice
/// depends on the digits, so netgw refuses (`None`).
fn number_s(n: &serde_json::Number) -> Option<String> {
    if !n.is_f64() {
        return Some(n.to_string());
    }
    let f = n.as_f64()?;
    if f == 0.0 {
        return Some(if f.is_sign_negative() { "-0.0" } else { "0.0" }.into());
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    let decpt = exp + 1;
    let body = match decpt {
        16 => return None,
        d if d > 16 || d <= -4 => exponent_form(&digits, exp),
        d if d <= 0 => format!("0.{}{digits}", "0".repeat((-d) as usize)),
        d => fixed_form(&digits, d as usize),
    };
    Some(format!("{sign}{body}"))
}

fn exponent_form(digits: &str, exp: i32) -> String {
    let (first, rest) = digits.split_at(1);
    let rest = if rest.is_empty() { "0" } else { rest };
    let esign = if exp < 0 { '-' } else { '+' };
    format!("{first}.{rest}e{esign}{:02}", exp.abs())
}

fn fixed_form(digits: &str, decpt: usize) -> String {
    if digits.len() <= decpt {
        format!("{digits}{}.0", "0".repeat(decpt - digits.len()))
    } else {
        format!("{}.{}", &digits[..decpt], &digits[decpt..])
    }
}

/// The size of a value as netgw bounds it, about the memory it takes (text, plus a fixed cost per
/// element and per hash entry), and its nesting depth; the walk stops below `max_depth` (the depth is
/// then `max_depth + 1`).
pub(crate) fn measure(v: &Value, max_depth: usize) -> (usize, usize) {
    const ELEMENT: usize = 32;
    match v {
        Value::String(s) => (s.len() + ELEMENT, 0),
        _ if max_depth == 0 && (v.is_array() || v.is_object()) => (ELEMENT, 1),
        Value::Array(a) => children(a.iter().map(|x| (0, x)), max_depth),
        Value::Object(m) => children(m.iter().map(|(k, x)| (k.len() + ELEMENT, x)), max_depth),
        _ => (ELEMENT, 0),
    }
}

fn children<'v>(
    items: impl Iterator<Item = (usize, &'v Value)>,
    max_depth: usize,
) -> (usize, usize) {
    let (mut bytes, mut depth) = (64usize, 0);
    for (extra, x) in items {
        let (b, d) = measure(x, max_depth - 1);
        bytes = bytes.saturating_add(extra + b);
        depth = depth.max(d);
    }
    (bytes, depth + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_as_ruby_prints_them() {
        let cases = [
            (1e20, Some("1.0e+20")),
            (1e14, Some("100000000000000.0")),
            (1.5e15, None),
            (0.0001, Some("0.0001")),
            (-2.5e-5, Some("-2.5e-05")),
            (100.0, Some("100.0")),
            (0.25, Some("0.25")),
            (1.5e300, Some("1.5e+300")),
        ];
        for (f, want) in cases {
            assert_eq!(to_s(&json!(f)).as_deref(), want, "{f}");
        }
    }

    #[test]
    fn symbols_differ_from_strings_and_convert_for_chef() {
        assert!(!ruby_eq(&sym("x"), &json!("x")));
        assert!(ruby_eq(&json!([1, {"a": 2}]), &json!([1.0, {"a": 2.0}])));
        let mut h = Map::new();
        h.insert(format!("{SYM_KEY}a"), sym("b"));
        let v = Value::Object(h);
        assert_eq!(inspect(&v).unwrap(), "{:a=>:b}");
        assert_eq!(chef_value(&v).unwrap(), json!({"a": "b"}));
    }
}
