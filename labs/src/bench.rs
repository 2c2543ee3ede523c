//! Shared by the benchmark's floors (`ssh-floor`, `netconf-floor`, `http-floor`) and the test that keeps
//! them honest (`tests/it/bench_floor.rs`).
//!
//! A floor is what `netgw converge` sends to one device of a vendor in a run that changes one VLAN and
//! one interface description (scripts/bench.sh's desired state), then what an unchanged run sends, kept
//! as a file under `labs/bench/floors/`:
//!
//! ```text
//!   CLI (ios, nxos)   one line per command, as typed; `#` lines are comments; a line starting
//!                     with `+ ` is written together with the one before it (one write, one round
//!                     trip: the device answers each line with its prompt)
//!   NETCONF (junos)   one message per block (the client hello first), blocks separated by a `%%` line;
//!                     a block after a `%% +` line is written with the one before it (pipelined:
//!                     one write, one round trip, a reply each)
//!   HTTP (eos, f5)    `METHOD PATH[?QUERY]`, `Header: value` lines, then the body; blocks as NETCONF,
//!                     but a block after `%% +` may be sent with the one before it on another
//!                     connection (at once: one round trip; F5 with `rest_parallel_reads: true`),
//!                     and such requests are in the order of their text
//! ```
//! A line `# unchanged` (CLI) or `%% unchanged` starts the unchanged run; the floors send the changing
//! one. Placeholders for what differs between runs: `RUN_ID` (the run id netgw puts in commit comments,
//! session and checkpoint names; a floor sends a fresh id of the same shape), and on F5 `TOKEN` (the
//! login's token), `TXN` (the transaction id) and `LOGIN` (the login body: the simulator never traces a
//! password; a floor sends `{"username":…,"password":…,"loginProviderName":"tmos"}`).

use serde_json::{Value, json};

/// What stands for the run id in a floor file.
pub const RUN_ID: &str = "RUN_ID";
/// F5: the login's token.
pub const TOKEN: &str = "TOKEN";
/// F5: the transaction id.
pub const TXN: &str = "TXN";
/// F5: the login body.
pub const LOGIN: &str = "LOGIN";
/// F5: the header that queues a request into a transaction.
pub const COORDINATION_HEADER: &str = "X-F5-REST-Coordination-Id";

/// One thing a client sends: CLI lines written at once, NETCONF messages written at once, or HTTP
/// requests sent at once (each on a connection of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FloorCall {
    Lines(Vec<String>),
    Netconf(Vec<String>),
    Http(Vec<HttpCall>),
}

/// One HTTP request.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HttpCall {
    pub method: String,
    /// Path, with `?query` when there is one.
    pub path: String,
    /// Headers beyond host, authentication and content type.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// A floor: the calls of a changing converge, and of an unchanged one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Floor {
    pub calls: Vec<FloorCall>,
    pub unchanged: Vec<FloorCall>,
}

const IOS: &str = include_str!("../bench/floors/ios.txt");
const NXOS: &str = include_str!("../bench/floors/nxos.txt");
const JUNOS: &str = include_str!("../bench/floors/junos.txt");
const EOS: &str = include_str!("../bench/floors/eos.txt");
const F5: &str = include_str!("../bench/floors/f5.txt");

pub fn ios() -> Floor {
    parse_lines(IOS)
}

pub fn nxos() -> Floor {
    parse_lines(NXOS)
}

pub fn junos() -> Floor {
    parse_blocks(JUNOS, netconf_block)
}

pub fn eos() -> Floor {
    parse_blocks(EOS, http_block)
}

pub fn f5() -> Floor {
    parse_blocks(F5, http_block)
}

/// CLI: one command a line, `+ ` before a command written with the one above; `#` lines are
/// comments, `# unchanged` the section marker.
pub fn parse_lines(text: &str) -> Floor {
    let mut f = Floor {
        calls: Vec::new(),
        unchanged: Vec::new(),
    };
    let mut into_unchanged = false;
    for l in text.lines() {
        if l.trim() == "# unchanged" {
            into_unchanged = true;
        } else if !l.trim().is_empty() && !l.starts_with('#') {
            let calls = if into_unchanged {
                &mut f.unchanged
            } else {
                &mut f.calls
            };
            match (l.strip_prefix("+ "), calls.last_mut()) {
                (Some(more), Some(FloorCall::Lines(write))) => write.push(more.to_owned()),
                _ => calls.push(FloorCall::Lines(vec![l.to_owned()])),
            }
        }
    }
    f
}

fn parse_blocks(text: &str, make: fn(&str) -> FloorCall) -> Floor {
    let mut sections: [Vec<FloorCall>; 2] = [Vec::new(), Vec::new()];
    let mut at = 0;
    let mut block: Vec<&str> = Vec::new();
    let mut joined = false;
    for l in text.lines().chain(std::iter::once("%%")) {
        if l == "%%" || l == "%% +" || l == "%% unchanged" {
            if !block.is_empty() {
                let call = make(&block.join("\n"));
                match (joined, call, sections[at].last_mut()) {
                    (true, FloorCall::Netconf(more), Some(FloorCall::Netconf(write))) => {
                        write.extend(more)
                    }
                    (true, FloorCall::Http(more), Some(FloorCall::Http(sent))) => sent.extend(more),
                    (_, call, _) => sections[at].push(call),
                }
                block.clear();
            }
            joined = l == "%% +";
            if l == "%% unchanged" {
                at = 1;
            }
        } else {
            block.push(l);
        }
    }
    let [calls, unchanged] = sections;
    Floor { calls, unchanged }
}

fn netconf_block(b: &str) -> FloorCall {
    FloorCall::Netconf(vec![b.to_owned()])
}

fn http_block(b: &str) -> FloorCall {
    let mut lines = b.lines();
    let head = lines.next().unwrap_or("");
    let (method, path) = head.split_once(' ').unwrap_or((head, ""));
    let mut headers = Vec::new();
    let mut body = Vec::new();
    for l in lines {
        match l.split_once(": ") {
            Some((k, v))
                if body.is_empty()
                    && !k.is_empty()
                    && k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') =>
            {
                headers.push((k.to_owned(), v.to_owned()));
            }
            _ => body.push(l),
        }
    }
    FloorCall::Http(vec![HttpCall {
        method: method.to_owned(),
        path: path.to_owned(),
        headers,
        body: body.join("\n"),
    }])
}

fn render_call(c: &FloorCall, out: &mut String) {
    match c {
        FloorCall::Lines(lines) => out.push_str(&lines.join("\n+ ")),
        FloorCall::Netconf(msgs) => out.push_str(&msgs.join("\n%% +\n")),
        FloorCall::Http(requests) => {
            let texts: Vec<String> = requests.iter().map(render_http).collect();
            out.push_str(&texts.join("\n%% +\n"));
        }
    }
    out.push('\n');
}

fn render_http(r: &HttpCall) -> String {
    let mut out = format!("{} {}", r.method, r.path);
    for (k, v) in &r.headers {
        out.push_str(&format!("\n{k}: {v}"));
    }
    if !r.body.is_empty() {
        out.push('\n');
        out.push_str(&r.body);
    }
    out
}

/// A floor in its file's format (what a test failure prints, to compare with or replace the file).
pub fn render(f: &Floor) -> String {
    let cli = matches!(f.calls.first(), Some(FloorCall::Lines(_)));
    let mut out = String::new();
    for (section, calls) in [(None, &f.calls), (Some("unchanged"), &f.unchanged)] {
        for (i, c) in calls.iter().enumerate() {
            match (cli, section, i) {
                (true, Some(s), 0) => out.push_str(&format!("# {s}\n")),
                (false, Some(s), 0) => out.push_str(&format!("%% {s}\n")),
                (false, None, 0) | (true, _, _) => {}
                (false, _, _) => out.push_str("%%\n"),
            }
            render_call(c, &mut out);
        }
    }
    out
}

/// `s` with every run id (`src/engine.rs` `new_run_id`: hex seconds, hex pid, a decimal sequence, e.g.
/// `6b07b7c5-3fff-1`) replaced by [`RUN_ID`].
fn mask_run_ids(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if boundary && let Some(len) = run_id_at(&b[i..]) {
            out.push_str(RUN_ID);
            i += len;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The length of a run id at the start of `b`, if one is there.
fn run_id_at(b: &[u8]) -> Option<usize> {
    let run = |from: usize, ok: fn(&u8) -> bool| b[from..].iter().take_while(|c| ok(c)).count();
    let secs = run(0, u8::is_ascii_hexdigit);
    if secs < 8 || b.get(secs) != Some(&b'-') {
        return None;
    }
    let pid = run(secs + 1, u8::is_ascii_hexdigit);
    let at = secs + 1 + pid;
    if pid == 0 || b.get(at) != Some(&b'-') {
        return None;
    }
    let seq = run(at + 1, u8::is_ascii_digit);
    let end = at + 1 + seq;
    (seq > 0 && b.get(end).is_none_or(|c| !c.is_ascii_alphanumeric())).then_some(end)
}

/// What a simulator recorded, with what differs between runs replaced by the floor files' placeholders:
/// run ids, and on F5 the token in the logout path and the transaction id in paths and headers.
pub fn normalise(calls: &[FloorCall]) -> Vec<FloorCall> {
    let after = |s: &str, prefix: &str, to: &str| match s.split_once(prefix) {
        Some((head, _)) => format!("{head}{prefix}{to}"),
        None => s.to_owned(),
    };
    calls
        .iter()
        .map(|c| match c {
            FloorCall::Lines(l) => FloorCall::Lines(l.iter().map(|l| mask_run_ids(l)).collect()),
            FloorCall::Netconf(m) => {
                FloorCall::Netconf(m.iter().map(|m| mask_run_ids(m)).collect())
            }
            FloorCall::Http(requests) => {
                let mut requests: Vec<HttpCall> =
                    requests.iter().map(|r| normalise_http(r, &after)).collect();
                // Sent at once, they arrive in any order.
                requests.sort();
                FloorCall::Http(requests)
            }
        })
        .collect()
}

fn normalise_http(r: &HttpCall, after: &dyn Fn(&str, &str, &str) -> String) -> HttpCall {
    let path = after(&mask_run_ids(&r.path), "/authz/tokens/", TOKEN);
    let path = after(&path, "/mgmt/tm/transaction/", TXN);
    let headers = r
        .headers
        .iter()
        .map(|(k, v)| {
            let v = if k.eq_ignore_ascii_case(COORDINATION_HEADER) {
                TXN
            } else {
                v
            };
            (k.clone(), v.to_owned())
        })
        .collect();
    let body = if path.contains("/authn/") && !r.body.is_empty() {
        LOGIN.to_owned()
    } else {
        mask_run_ids(&r.body)
    };
    HttpCall {
        method: r.method.clone(),
        path,
        headers,
        body,
    }
}

/// A run id of the shape netgw's (`src/engine.rs`, `new_run_id`): seconds and pid in hex, a sequence.
pub fn fresh_run_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    format!("{secs:x}-{:x}-0", std::process::id())
}

/// The benchmark's desired state for one node (scripts/bench.sh writes the same): one VLAN and one
/// interface description.
pub fn node_json(name: &str, port: &str) -> Value {
    json!({
        "name": name,
        "chef_environment": "_default",
        "run_list": ["recipe[netdev::vlans]", "recipe[netdev::links]"],
        "normal": {"netdev": {"vlans": {"100": {"name": "bench"}},
                              "links": {port: {"description": "bench uplink"}}}}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_floor_parses_and_renders_back() {
        for (name, f) in [
            ("ios", ios()),
            ("nxos", nxos()),
            ("junos", junos()),
            ("eos", eos()),
            ("f5", f5()),
        ] {
            assert!(
                f.calls.len() > f.unchanged.len() && !f.unchanged.is_empty(),
                "{name}: {} calls, {} unchanged",
                f.calls.len(),
                f.unchanged.len()
            );
            let again = match &f.calls[0] {
                FloorCall::Lines(_) => parse_lines(&render(&f)),
                FloorCall::Netconf(_) => parse_blocks(&render(&f), netconf_block),
                FloorCall::Http { .. } => parse_blocks(&render(&f), http_block),
            };
            assert_eq!(again, f, "{name}: render and parse disagree");
        }
    }

    #[test]
    fn run_ids_are_masked_where_they_stand_alone() {
        assert_eq!(
            mask_run_ids("configure session netgw-6b07b7c5-3fff-1 commit"),
            "configure session netgw-RUN_ID commit"
        );
        assert_eq!(
            mask_run_ids("<log>netgw run 6b07b7c5-3fff-0</log>"),
            "<log>netgw run RUN_ID</log>"
        );
        // Dates, short hex and ids glued to letters are not run ids.
        for s in [
            "2026-01-01",
            "abc-1-2",
            "x6b07b7c5-3fff-1",
            "6b07b7c5-3fff-1a",
        ] {
            assert_eq!(mask_run_ids(s), s);
        }
        assert_eq!(mask_run_ids(&fresh_run_id()), RUN_ID);
    }

    #[test]
    fn f5_session_values_become_placeholders_and_requests_sent_at_once_any_order() {
        let call =
            |method: &str, path: &str, headers: Vec<(String, String)>, body: &str| HttpCall {
                method: method.into(),
                path: path.into(),
                headers,
                body: body.into(),
            };
        let got = normalise(&[
            FloorCall::Http(vec![call(
                "POST",
                "/mgmt/shared/authn/login",
                vec![],
                "<66 bytes>",
            )]),
            FloorCall::Http(vec![call(
                "POST",
                "/mgmt/tm/net/vlan",
                vec![(COORDINATION_HEADER.into(), "1700000000002".into())],
                "{}",
            )]),
            FloorCall::Http(vec![call(
                "DELETE",
                "/mgmt/shared/authz/tokens/NGWLAB01",
                vec![],
                "",
            )]),
            FloorCall::Http(vec![
                call("GET", "/mgmt/tm/net/vlan", vec![], ""),
                call("GET", "/mgmt/tm/net/interface", vec![], ""),
            ]),
        ]);
        let one = |i: usize| match &got[i] {
            FloorCall::Http(r) if r.len() == 1 => r[0].clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(one(0).body, LOGIN);
        assert_eq!(one(1).headers[0].1, TXN);
        assert_eq!(one(2).path, "/mgmt/shared/authz/tokens/TOKEN");
        assert_eq!(
            got[3],
            FloorCall::Http(vec![
                call("GET", "/mgmt/tm/net/interface", vec![], ""),
                call("GET", "/mgmt/tm/net/vlan", vec![], ""),
            ])
        );
    }
}
