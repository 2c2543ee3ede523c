//! `String` methods of the evaluator, each as Ruby 3.1 defines it; a call netgw cannot answer
//! exactly is `None` (refused by the caller).

use super::value::{as_sym, sym};
use serde_json::Value;

/// Ruby's ASCII whitespace (`rb_isspace`): what `split` and `to_i` skip.
const SPACE: [char; 6] = [' ', '\t', '\n', '\u{b}', '\u{c}', '\r'];
/// What `strip` removes (whitespace and NUL).
const STRIP: [char; 7] = [' ', '\t', '\n', '\u{b}', '\u{c}', '\r', '\0'];

/// `x.m(args)`: `None` when the method or its arguments are outside what netgw evaluates.
pub(super) fn string_method(m: &str, x: &str, args: &[Value]) -> Option<Value> {
    let strs: Option<Vec<&str>> = args.iter().map(Value::as_str).collect();
    let one = match args {
        [Value::String(a)] => Some(a.as_str()),
        _ => None,
    };
    if let ("gsub" | "sub", [Value::String(pat), Value::String(rep)]) = (m, args) {
        return substitute(m == "gsub", x, pat, rep);
    }
    Some(match (m, args.len()) {
        ("include?", 1) => Value::Bool(x.contains(one?)),
        ("start_with?", _) => Value::Bool(strs?.iter().any(|a| x.starts_with(a))),
        ("end_with?", _) => Value::Bool(strs?.iter().any(|a| x.ends_with(a))),
        ("split", _) => split(x, args)?,
        (_, 0) => no_arg_method(m, x)?,
        _ => return None,
    })
}

/// `gsub`/`sub` with a String pattern, which matches literally. The replacement's `\\0`, `\\1`,
/// `\\k<n>` ... are still substitutions, and an empty pattern matches between characters: refused.
fn substitute(all: bool, x: &str, pat: &str, rep: &str) -> Option<Value> {
    if pat.is_empty() || rep.contains('\\') {
        return None;
    }
    Some(Value::String(if all {
        x.replace(pat, rep)
    } else {
        x.replacen(pat, rep, 1)
    }))
}

fn no_arg_method(m: &str, x: &str) -> Option<Value> {
    Some(match m {
        "length" | "size" => Value::from(x.chars().count()),
        "to_sym" | "intern" => sym(x),
        "to_s" | "to_str" => Value::String(x.to_owned()),
        "to_i" => Value::from(leading_int(x)?),
        "to_f" => leading_float(x)?,
        "upcase" if x.is_ascii() => Value::String(x.to_ascii_uppercase()),
        "downcase" if x.is_ascii() => Value::String(x.to_ascii_lowercase()),
        "capitalize" if x.is_ascii() => {
            let lower = x.to_ascii_lowercase();
            let mut chars = lower.chars();
            Value::String(match chars.next() {
                Some(c) => c.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            })
        }
        "strip" => Value::String(x.trim_matches(STRIP).to_owned()),
        "empty?" => Value::Bool(x.is_empty()),
        _ => return None,
    })
}

/// `Symbol` methods netgw evaluates.
pub(super) fn symbol_method(m: &str, v: &Value, args: &[Value]) -> Option<Value> {
    let name = as_sym(v)?;
    if !args.is_empty() {
        return None;
    }
    Some(match m {
        "to_s" | "id2name" | "name" => Value::String(name.to_owned()),
        "to_sym" => v.clone(),
        "length" | "size" => Value::from(name.chars().count()),
        "empty?" => Value::Bool(name.is_empty()),
        _ => return None,
    })
}

/// `String#split(sep = nil, limit = 0)` (`rb_str_split_m`): a nil or `' '` separator splits on runs
/// of whitespace ignoring leading whitespace (awk mode); `''` splits characters; a positive limit
/// caps the fields, the last one holding the rest; without a limit trailing empty fields go.
fn split(x: &str, args: &[Value]) -> Option<Value> {
    let (sep, limit) = match args {
        [] => (None, None),
        [s] => (Some(s), None),
        [s, Value::Number(l)] => (Some(s), Some(l.as_i64()?)),
        _ => return None,
    };
    let awk = match sep {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s == " ",
        _ => return None,
    };
    let lim = limit.unwrap_or(0);
    if lim == 1 {
        let whole = if x.is_empty() {
            vec![]
        } else {
            vec![x.to_owned()]
        };
        return Some(strings(whole));
    }
    let max = usize::try_from(lim).ok().filter(|l| *l > 0);
    let mut fields = match sep.and_then(Value::as_str) {
        _ if awk => split_awk(x, max, lim < 0),
        Some("") => split_chars(x, max, lim < 0),
        Some(s) => split_str(x, s, max, lim < 0),
        None => return None,
    };
    if lim == 0 {
        while fields.last().is_some_and(String::is_empty) {
            fields.pop();
        }
    }
    Some(strings(fields))
}

fn strings(v: Vec<String>) -> Value {
    Value::Array(v.into_iter().map(Value::String).collect())
}

/// The remainder Ruby appends after the loop: when the string is not empty and there is a limit,
/// text left, or a negative limit.
fn push_rest(out: &mut Vec<String>, x: &str, beg: usize, max: Option<usize>, negative: bool) {
    if !x.is_empty() && (max.is_some() || x.len() > beg || negative) {
        out.push(x[beg..].to_owned());
    }
}

fn split_awk(x: &str, max: Option<usize>, negative: bool) -> Vec<String> {
    let (mut out, mut beg, mut end, mut skip, mut i) = (Vec::new(), 0, 0, true, 1);
    for (p, c) in x.char_indices() {
        let space = SPACE.contains(&c);
        if skip {
            if space {
                beg = p + c.len_utf8();
            } else {
                end = p + c.len_utf8();
                skip = false;
                if max.is_some_and(|l| l <= i) {
                    break;
                }
            }
        } else if space {
            out.push(x[beg..end].to_owned());
            skip = true;
            beg = p + c.len_utf8();
            i += 1;
        } else {
            end = p + c.len_utf8();
        }
    }
    push_rest(&mut out, x, beg, max, negative);
    out
}

fn split_str(x: &str, sep: &str, max: Option<usize>, negative: bool) -> Vec<String> {
    let (mut out, mut ptr, mut i) = (Vec::new(), 0, 1);
    while ptr < x.len() {
        let Some(at) = x[ptr..].find(sep) else { break };
        out.push(x[ptr..ptr + at].to_owned());
        ptr += at + sep.len();
        i += 1;
        if max.is_some_and(|l| l <= i) {
            break;
        }
    }
    push_rest(&mut out, x, ptr, max, negative);
    out
}

fn split_chars(x: &str, max: Option<usize>, negative: bool) -> Vec<String> {
    let (mut out, mut ptr, mut i) = (Vec::new(), 0, 1);
    for c in x.chars() {
        out.push(c.to_string());
        ptr += c.len_utf8();
        i += 1;
        if max.is_some_and(|l| l <= i) {
            break;
        }
    }
    push_rest(&mut out, x, ptr, max, negative);
    out
}

/// Ruby's `String#to_i`: leading whitespace, a sign, an optional `0d`, then decimal digits with
/// single underscores between them; 0 when there are none. `None`: beyond 64 bits (Ruby's Bignum).
pub(super) fn leading_int(s: &str) -> Option<i64> {
    let t = s.trim_start_matches(SPACE);
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let t = match t.get(..2) {
        Some("0d" | "0D") if t[2..].starts_with(|c: char| c.is_ascii_digit()) => &t[2..],
        _ => t,
    };
    let mut digits = String::new();
    let mut prev_digit = false;
    for c in t.chars() {
        match c {
            '0'..='9' => {
                digits.push(c);
                prev_digit = true;
            }
            '_' if prev_digit => prev_digit = false,
            _ => break,
        }
    }
    if digits.is_empty() {
        return Some(0);
    }
    let v: i64 = digits.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Ruby's `String#to_f` for the texts netgw reads exactly: leading whitespace, a sign, decimal
/// digits with single underscores between them, an optional `.` and fraction digits; 0.0 when there
/// are none. `None` for an exponent, a fraction without integer digits, a result of -0.0 or more than
/// 15 significant digits (texts where netgw would have to reproduce `strtod`'s corner cases).
fn leading_float(s: &str) -> Option<Value> {
    let t = s.trim_start_matches(SPACE);
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (int, rest) = digit_run(t);
    if int.is_empty() {
        return match rest.chars().next() {
            Some('.' | '_' | 'e' | 'E') => None,
            _ => Some(float_value(0.0)?),
        };
    }
    let (frac, rest) = match rest.strip_prefix('.') {
        Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => digit_run(r),
        _ => (String::new(), rest),
    };
    if rest.starts_with(['e', 'E']) || int.len() + frac.len() > 15 {
        return None;
    }
    let x: f64 = format!("{int}.{frac}0").parse().ok()?;
    if neg && x == 0.0 {
        return None;
    }
    float_value(if neg { -x } else { x })
}

/// Leading decimal digits with single underscores between them, and what follows.
fn digit_run(t: &str) -> (String, &str) {
    let mut digits = String::new();
    let mut end = 0;
    let b = t.as_bytes();
    while end < b.len() {
        match b[end] {
            c @ b'0'..=b'9' => {
                digits.push(c as char);
                end += 1;
            }
            b'_' if end > 0
                && b[end - 1].is_ascii_digit()
                && b.get(end + 1).is_some_and(u8::is_ascii_digit) =>
            {
                end += 1;
            }
            _ => break,
        }
    }
    (digits, &t[end..])
}

fn float_value(x: f64) -> Option<Value> {
    serde_json::Number::from_f64(x).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn split_of(x: &str, args: Value) -> Value {
        split(x, args.as_array().unwrap()).unwrap()
    }

    #[test]
    fn split_follows_ruby() {
        assert_eq!(split_of("a,b,,", json!([","])), json!(["a", "b"]));
        assert_eq!(
            split_of(" a  b  c ", json!([" ", 2])),
            json!(["a", "b  c "])
        );
        assert_eq!(split_of("a b ", json!([" ", -1])), json!(["a", "b", ""]));
        assert_eq!(split_of("a,,", json!([",", -1])), json!(["a", "", ""]));
        assert_eq!(split_of("abc", json!(["", 2])), json!(["a", "bc"]));
        assert_eq!(split_of("", json!([",", -1])), json!([]));
        assert_eq!(split_of("a\0b c", json!([])), json!(["a\0b", "c"]));
    }

    #[test]
    fn to_i_follows_ruby() {
        for (s, want) in [
            ("0d12", 12),
            ("  -0_1", -1),
            ("1__2", 1),
            ("_1", 0),
            ("0x1", 0),
        ] {
            assert_eq!(leading_int(s), Some(want), "{s}");
        }
    }
}
