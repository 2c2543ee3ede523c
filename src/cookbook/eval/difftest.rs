//! The evaluator checked against Ruby itself: seeded random expressions over the supported literals,
//! operators, methods and iterators are evaluated by netgw and, in one batch, by the real `ruby`
//! (the oracle scripts/peers/chef-attrs.sh installs). A value netgw gives must be the value Ruby
//! gives; netgw refusing an expression is allowed, giving a value where Ruby raises is not.

use super::Eval;
use super::value::{as_range, as_sym, key_value};
use crate::cookbook::ruby::parse;
use netgw_models::attributes::{AttributeSet, Source};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// A small deterministic generator (xorshift64*), so a failure reproduces from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const INTS: [&str; 14] = [
    "0",
    "7",
    "-3",
    "0644",
    "0o17",
    "0b101",
    "0d19",
    "0x1F",
    "1_000",
    "0_7",
    "12",
    "2",
    "-0x10",
    "9_223_372_036_854_775_807",
];
const FLOATS: [&str; 8] = [
    "1.5", "-2.25", "2.0e20", "0.0001", "1.0e-5", "100.0", "0.1", "3.0",
];
const STRS: [&str; 19] = [
    "'22.04'",
    "' -1_0.2_5x'",
    "'5.15.0-91'",
    "'1._5'",
    "'a.b.c'",
    "'a'",
    "''",
    "'a b'",
    "' a  b '",
    "'x,y,,'",
    "',x,,y,'",
    "'12abc'",
    "'Eth1'",
    "\"t\\tz\\n\"",
    "'0d12'",
    "' -4_2'",
    "'a#{1}'",
    "\"q\\\"\"",
    "'1__2'",
];
const SYMS: [&str; 4] = [":a", ":b", ":web", ":\"x y\""];
const SEPS: [&str; 6] = ["','", "' '", "''", "nil", "'a'", "', '"];

/// Expressions of one Ruby type, built from literals and the supported methods.
struct Gen {
    rng: Rng,
    /// Block variables in scope.
    vars: Vec<&'static str>,
}

impl Gen {
    fn any(&mut self, d: usize) -> String {
        if let Some(v) = self.vars.last()
            && self.rng.below(4) == 0
        {
            return (*v).to_owned();
        }
        match self.rng.below(9) {
            0 => self.int(d),
            1 => self.float(d),
            2 | 3 => self.string(d),
            4 => self.symbol(d),
            5 => self.array(d),
            6 => self.hash(d),
            7 => self.boolean(d),
            _ => self.other(d),
        }
    }

    fn leaf(&mut self, xs: &[&str]) -> String {
        self.rng.pick(xs).to_owned()
    }

    fn int(&mut self, d: usize) -> String {
        if d == 0 || self.rng.below(3) == 0 {
            return self.leaf(&INTS);
        }
        let (a, b, s, f) = (
            self.int(d - 1),
            self.int(d - 1),
            self.string(d - 1),
            self.float(d - 1),
        );
        let arr = self.array(d - 1);
        match self.rng.below(12) {
            0 => format!("({a} + {b})"),
            1 => format!("({a} - {b})"),
            2 => format!("({a} * {b})"),
            3 => format!("{s}.size"),
            4 => format!("{s}.to_i"),
            5 => format!("{arr}.length"),
            6 => format!("{f}.to_i"),
            7 => format!("{arr}.count {{ |x| x.nil? }}"),
            8 => format!("[{a}, {b}].sum"),
            9 => format!("{arr}.sum {{ |x| 1 }}"),
            10 => format!("-({a})"),
            _ => "nil.to_i".into(),
        }
    }

    fn float(&mut self, d: usize) -> String {
        if d == 0 || self.rng.below(2) == 0 {
            return self.leaf(&FLOATS);
        }
        let (a, b, i) = (self.float(d - 1), self.float(d - 1), self.int(d - 1));
        let s = self.string(d - 1);
        match self.rng.below(5) {
            0 => format!("({a} + {b})"),
            1 => format!("({a} * {i})"),
            2 => format!("({a} - {b})"),
            3 => format!("{s}.to_f"),
            _ => format!("-({a})"),
        }
    }

    fn string(&mut self, d: usize) -> String {
        if d == 0 || self.rng.below(3) == 0 {
            return self.leaf(&STRS);
        }
        let (s, t, x) = (self.string(d - 1), self.string(d - 1), self.any(d - 1));
        let arr = self.array(d - 1);
        let sep = self.leaf(&SEPS);
        match self.rng.below(15) {
            0 => format!("({s} + {t})"),
            12 => format!("{s}.gsub({t}, {})", self.leaf(&STRS)),
            14 => format!("{s}.capitalize"),
            13 => format!("{s}.sub({sep}, {t})"),
            1 => format!("{s}.upcase"),
            2 => format!("{s}.downcase"),
            3 => format!("{s}.strip"),
            4 => format!("{x}.to_s"),
            5 => format!("{arr}.join({sep})"),
            6 => format!("{arr}.join"),
            7 => format!("\"<#{{{x}}}>\""),
            8 => format!("{x}.inspect"),
            9 => format!("{}.to_s", self.symbol(d - 1)),
            10 => format!("{arr}.first.to_s"),
            _ => format!("{s}.to_sym.to_s"),
        }
    }

    fn symbol(&mut self, d: usize) -> String {
        if d == 0 || self.rng.below(2) == 0 {
            return self.leaf(&SYMS);
        }
        format!("{}.to_sym", self.string(d - 1))
    }

    fn array(&mut self, d: usize) -> String {
        if d == 0 || self.rng.below(4) == 0 {
            return self.array_literal(d);
        }
        let (s, a, b, h) = (
            self.string(d - 1),
            self.array(d - 1),
            self.array(d - 1),
            self.hash(d - 1),
        );
        let sep = self.leaf(&SEPS);
        let lim = self.rng.pick(&["0", "1", "2", "-1", "3"]);
        match self.rng.below(16) {
            0 => format!("{s}.split({sep}, {lim})"),
            1 => format!("{s}.split({sep})"),
            2 => format!("{s}.split"),
            3 => self.with_var(|g| format!("{a}.map {{ |x| {} }}", g.any(d - 1))),
            4 => self.with_var(|g| format!("{a}.select {{ |x| {} }}", g.boolean(d - 1))),
            5 => self.with_var(|g| format!("{a}.reject {{ |x| {} }}", g.boolean(d - 1))),
            6 => format!("{a}.uniq"),
            7 => format!("{a}.compact"),
            8 => format!("{a}.reverse"),
            9 => format!("{a}.sort"),
            10 => format!("{h}.keys"),
            11 => format!("{h}.values"),
            12 => format!("{h}.to_a"),
            13 => format!("({a} + {b})"),
            14 => format!("({a} - {b})"),
            _ => self.with_var(|g| format!("{a}.flat_map {{ |x| {} }}", g.array(d - 1))),
        }
    }

    fn array_literal(&mut self, d: usize) -> String {
        match self.rng.below(6) {
            0 => "[]".into(),
            1 => "%w(b a c)".into(),
            2 => "[1, 2.0, 1, nil]".into(),
            3 => self.leaf(&[
                "(1..4).to_a",
                "[*(2...5)]",
                "(1..3).map { |i| i * 2 }",
                "(0...0).to_a",
            ]),
            4 => format!("[{}]", self.any(d.saturating_sub(1))),
            _ => format!(
                "[{}, {}]",
                self.any(d.saturating_sub(1)),
                self.any(d.saturating_sub(1))
            ),
        }
    }

    fn hash(&mut self, d: usize) -> String {
        if d == 0 || self.rng.below(3) == 0 {
            return match self.rng.below(5) {
                0 => "{}".into(),
                1 => "{ 'a' => 1, :b => 'x' }".into(),
                2 => "{ a: 1, 'a' => 2 }".into(),
                3 => "{ 1 => 'one', 'n' => nil }".into(),
                _ => format!("{{ 'k' => {}, v: {} }}", self.any(0), self.any(0)),
            };
        }
        let (h, g) = (self.hash(d - 1), self.hash(d - 1));
        match self.rng.below(5) {
            0 => format!("{h}.merge({g})"),
            1 => self.with_var(|x| format!("{h}.select {{ |k, x| {} }}", x.boolean(d - 1))),
            2 => self.with_var(|x| format!("{h}.reject {{ |k, x| {} }}", x.boolean(d - 1))),
            3 => format!("{h}.to_h"),
            _ => format!("{h}.tap {{ |t| t.size }}"),
        }
    }

    fn key(&mut self) -> String {
        self.leaf(&["'a'", ":a", "1", "'n'", ":b", "'k'", ":v", "nil"])
    }

    fn boolean(&mut self, d: usize) -> String {
        if d == 0 {
            return self.leaf(&["true", "false", "nil"]);
        }
        let (x, y) = (self.any(d - 1), self.any(d - 1));
        let (s, t) = (self.string(d - 1), self.string(d - 1));
        let (a, h, k) = (self.array(d - 1), self.hash(d - 1), self.key());
        match self.rng.below(18) {
            0 => format!("({x} == {y})"),
            1 => format!("({x} != {y})"),
            2 => format!("({} < {})", self.int(d - 1), self.float(d - 1)),
            3 => format!("({s} >= {t})"),
            4 => format!("{x}.nil?"),
            5 => format!("{s}.empty?"),
            6 => format!("{a}.include?({x})"),
            7 => format!("{h}.key?({k})"),
            8 => format!("{s}.include?({t})"),
            9 => format!("{s}.start_with?({t})"),
            10 => format!("{s}.end_with?({t}, 'b')"),
            11 => self.with_var(|g| format!("{a}.any? {{ |x| {} }}", g.boolean(d - 1))),
            12 => self.with_var(|g| format!("{a}.all? {{ |x| {} }}", g.boolean(d - 1))),
            13 => self.with_var(|g| format!("{a}.none? {{ |x| {} }}", g.boolean(d - 1))),
            14 => format!("{}.zero?", self.int(d - 1)),
            15 => format!("{x}.eql?({y})"),
            16 => format!("!{x}"),
            _ => format!("({x} == {})", self.symbol(d - 1)),
        }
    }

    fn other(&mut self, d: usize) -> String {
        let d1 = d.saturating_sub(1);
        let (a, h, k, x, y) = (
            self.array(d1),
            self.hash(d1),
            self.key(),
            self.any(d1),
            self.any(d1),
        );
        match self.rng.below(13) {
            0 => format!("{a}.first"),
            1 => format!("{a}.last"),
            2 => format!("{h}.fetch({k}, {x})"),
            3 => format!("{h}[{k}]"),
            4 => format!("{a}[{}]", self.leaf(&["0", "1", "-1", "5"])),
            5 => format!("{h}.dig({k})"),
            6 => self.with_var(|g| format!("{a}.find {{ |x| {} }}", g.boolean(d1))),
            7 => format!("({} ? {x} : {y})", self.boolean(d1)),
            8 => format!("({x} && {y})"),
            9 => format!("({x} || {y})"),
            10 => format!("(case {x} when 1..3 then 'r' when *[{y}, :a] then 's' else 'e' end)"),
            11 => self.leaf(&[
                "(1..3)",
                "(1...4).size",
                "(2..5).include?(3.5)",
                "((1..3) == (1..3))",
                "((1..3) == [1, 2, 3])",
                "(1..3).inspect",
                "(1..3).select { |i| i > 1 }",
                "(1..3).first",
            ]),
            _ => format!("{}.times.to_a", self.leaf(&["3"])),
        }
    }

    fn with_var(&mut self, f: impl FnOnce(&mut Gen) -> String) -> String {
        self.vars.push("x");
        let s = f(self);
        self.vars.pop();
        s
    }
}

/// Ruby's answers for a batch: `["ok", encoded]` or `["err", class]` per expression.
const RUBY: &str = r#"
require 'json'
def enc(v)
  case v
  when nil then ['nil']
  when true then ['true']
  when false then ['false']
  when Integer then ['int', v.to_s]
  when Float then ['float', [v].pack('G').unpack1('H*')]
  when String
    u = v.dup.force_encoding(Encoding::UTF_8)
    ['str', u.valid_encoding? ? u : v.bytes.inspect]
  when Symbol then ['sym', v.to_s]
  when Array then ['arr', v.map { |x| enc(x) }]
  when Range then ['range', enc(v.begin), enc(v.end), v.exclude_end?]
  when Hash then ['hash', v.map { |k, x| [enc(k), enc(x)] }]
  else ['other', v.class.name]
  end
end
out = JSON.parse($stdin.read).map do |src|
  begin
    ['ok', enc(Object.new.instance_eval { binding }.eval(src))]
  rescue Exception => e
    ['err', e.class.name]
  end
end
print JSON.generate(out)
"#;

fn encode(v: &Value) -> Value {
    if let Some(s) = as_sym(v) {
        return json!(["sym", s]);
    }
    if let Some((a, b, x)) = as_range(v) {
        return json!(["range", ["int", a.to_string()], ["int", b.to_string()], x]);
    }
    match v {
        Value::Null => json!(["nil"]),
        Value::Bool(b) => json!([b.to_string()]),
        Value::Number(n) if n.is_f64() => {
            json!([
                "float",
                format!("{:016x}", n.as_f64().unwrap_or_default().to_bits())
            ])
        }
        Value::Number(n) => json!(["int", n.to_string()]),
        Value::String(s) => json!(["str", s]),
        Value::Array(a) => json!(["arr", a.iter().map(encode).collect::<Vec<_>>()]),
        Value::Object(m) => json!([
            "hash",
            m.iter()
                .map(|(k, x)| json!([encode(&key_value(k)), encode(x)]))
                .collect::<Vec<_>>()
        ]),
    }
}

fn ruby_batch(exprs: &[String]) -> Vec<Value> {
    let mut child = Command::new("ruby")
        .args(["-e", RUBY])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("PEER MISSING: ruby ({e}); run scripts/peers/chef-attrs.sh install")
        });
    let input = serde_json::to_vec(exprs).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "ruby failed: {out:?}");
    serde_json::from_slice(&out.stdout).expect("ruby's JSON")
}

/// netgw's value of one expression (`None`: refused).
fn netgw(expr: &str) -> Option<Value> {
    let p = parse(Path::new("attributes/default.rb"), expr).ok()?;
    let mut attrs = AttributeSet::new();
    let source = Source::AttributeFile {
        cookbook: "cb".into(),
        file: "default.rb".into(),
    };
    let mut e = Eval::new(&p, &mut attrs, source, None);
    let mut last = Value::Null;
    for s in &p.statements {
        last = e.eval(s).ok()?;
    }
    Some(last)
}

fn expressions(seed: u64, count: usize) -> Vec<String> {
    let mut g = Gen {
        // xorshift stays at 0 from a 0 state.
        rng: Rng(seed ^ 0x9E37_79B9_7F4A_7C15),
        vars: Vec::new(),
    };
    (0..count).map(|_| g.any(3)).collect()
}

#[test]
fn generated_expressions_evaluate_as_ruby_does() {
    // NETGW_DIFFTEST_SEED and NETGW_DIFFTEST_COUNT explore beyond the fixed batch.
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let seed = env("NETGW_DIFFTEST_SEED").unwrap_or(0x5eed_2026);
    let count = env("NETGW_DIFFTEST_COUNT").unwrap_or(3000) as usize;
    let exprs = expressions(seed, count);
    let answers = ruby_batch(&exprs);
    assert_eq!(answers.len(), exprs.len());
    let (mut same, mut refused, mut wrong) = (0, 0, Vec::new());
    for (expr, ruby) in exprs.iter().zip(&answers) {
        match (netgw(expr), ruby[0].as_str()) {
            (None, _) => {
                refused += 1;
                if std::env::var_os("NETGW_DIFFTEST_SHOW").is_some() {
                    eprintln!("refused: {expr}  (ruby: {ruby})");
                }
            }
            (Some(v), Some("ok")) if encode(&v) == ruby[1] => same += 1,
            (Some(v), _) => wrong.push(format!("{expr}\n  ruby:  {ruby}\n  netgw: {}", encode(&v))),
        }
    }
    eprintln!(
        "seed {seed}: {same} equal to Ruby, {refused} refused, {} wrong",
        wrong.len()
    );
    assert!(
        wrong.is_empty(),
        "{} wrong values:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // The comparison means something only if most expressions are evaluated, not refused.
    assert!(
        same * 2 >= count,
        "only {same} equal to Ruby, {refused} refused"
    );
}

#[test]
fn the_listed_wrong_values_are_ruby_values_now() {
    let exprs: Vec<String> = [
        "0644",
        "0o17 + 0b101 + 0d19 + 0x1F + 1_000",
        "[].any? { |x| true }",
        "[].all? { |x| false }",
        "[].sum { |x| 1 }",
        "'x' == :x",
        "'a,b,,'.split(',')",
        "'a,b,c'.split(',', 2)",
        "' a  b '.split(' ', -1)",
        "{}.tap { |h| 1 }",
        "'22.04'.to_f",
        "' -1_0.2_5x'.to_f",
        "'5.15.0-91-generic'.to_f",
        "'abc'.to_f",
        "'1__0'.to_f",
        "'22.04'.gsub('.', '')",
        "'a.b.c'.sub('.', '-')",
        "'amd-x86_64' =~ /x86_64/",
        "'arm' =~ /x86_64/",
        "\"\\u00e9b\" =~ /b/",
        "/b/ =~ 'ab'",
        "nil =~ /a/",
        "nil !~ /a/",
        "'a' !~ /b/",
        "'ab'.match?(/b/)",
        "'hELLO wORLD'.capitalize",
        "''.capitalize",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let answers = ruby_batch(&exprs);
    for (expr, ruby) in exprs.iter().zip(&answers) {
        let v = netgw(expr).unwrap_or_else(|| panic!("{expr} refused"));
        assert_eq!(encode(&v), ruby[1], "{expr}");
    }
}
