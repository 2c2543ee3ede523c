//! CLI platform behaviour as data (the scrapli pattern, docs/style.md): prompt patterns per mode, failure
//! strings, on-open commands, enable and configuration-mode commands. One table, [`PLATFORMS`]; the
//! shell ([`super::shell`]) is generic over it. Adding a platform is one entry here.
//!
//! Sources: scrapli's core platforms (`scrapli/driver/core/{cisco_iosxe,cisco_nxos,arista_eos,
//! juniper_junos}/base_driver.py`: prompt patterns, failed-when-contains, on-open) and Netmiko's
//! per-vendor `session_preparation`, adjusted for fake-switches (see comments).
//!
//! Prompt classes are ASCII (`[A-Za-z0-9_...]`, never Unicode `\w`): device hostnames are ASCII, and a
//! Unicode class under a `{1,63}` repetition compiles into an automaton so large that building it took
//! seconds per process in unoptimised builds.

use std::sync::{Arc, LazyLock};

use aho_corasick::{AhoCorasick, MatchKind};
use regex::Regex;

/// The platforms with an interactive CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlatformKind {
    Ios,
    Nxos,
    Eos,
    /// Junos operational/configuration CLI (the Junos driver itself uses NETCONF).
    JunosCli,
    Linux,
}

impl PlatformKind {
    pub const ALL: [PlatformKind; 5] = [
        PlatformKind::Ios,
        PlatformKind::Nxos,
        PlatformKind::Eos,
        PlatformKind::JunosCli,
        PlatformKind::Linux,
    ];
}

/// The raw table row: plain `&'static str` so the whole table reads as data.
#[derive(Debug)]
pub struct PlatformSpec {
    pub kind: PlatformKind,
    pub name: &'static str,
    /// Prompt of the unprivileged mode (IOS `sw1>`); matched against the last output line, trailing
    /// blanks removed.
    pub user_prompt: &'static str,
    /// Prompt of the privileged / operational mode (IOS `sw1#`, Junos `user@sw1>`).
    pub privileged_prompt: &'static str,
    /// Prompt of configuration mode (IOS `sw1(config-vlan)#`, Junos `user@sw1#`).
    pub config_prompt: Option<&'static str>,
    /// Output containing one of these means the command failed.
    pub failure_strings: &'static [&'static str],
    /// Paging off, a wide terminal: written ahead of the first command the shell sends, in its write,
    /// so after `enable` (fake-switches accepts `terminal` only in privileged mode) and before any
    /// output is read.
    pub on_open: &'static [&'static str],
    /// Command that enters privileged mode, and its password prompt.
    pub enable: Option<(&'static str, &'static str)>,
    /// Command that enters configuration mode.
    pub config_enter: Option<&'static str>,
    /// Command that leaves configuration mode from any depth. When it fails, the shell falls back to
    /// `exit` until the privileged prompt (fake-switches' IOS has no `end`).
    pub config_end: Option<&'static str>,
    /// Every prompt above ends in one of these characters (checked by `table_is_valid_and_complete`):
    /// output whose last visible character is none of them is not a prompt, so the shell skips the
    /// regexes for it (most packets are echoed characters and command output).
    pub prompt_ends: &'static str,
}

/// The table. Hostname characters in prompts: IOS allows letters, digits and `-_.`; `@/:` are accepted
/// too for user@host-style prompts and slot names.
pub static PLATFORMS: &[PlatformSpec] = &[
    PlatformSpec {
        kind: PlatformKind::Ios,
        name: "ios",
        user_prompt: r"^[A-Za-z0-9_.\-@/:]{1,63}>$",
        privileged_prompt: r"^[A-Za-z0-9_.\-@/:]{1,63}#$",
        config_prompt: Some(r"^[A-Za-z0-9_.\-@/:]{1,63}\(conf[A-Za-z0-9_.\-@/:+]{0,32}\)#$"),
        failure_strings: &[
            "% Invalid input",
            "% Incomplete command",
            "% Ambiguous command",
            "% Unknown command",
            "% Unrecognized command",
            "% Bad mask",
            "% Access denied",
            // fake-switches' answer to a command it does not know (real IOS says `% Invalid input`).
            "No such command :",
            // IOS (and fake-switches) for an out-of-range VLAN: `Command rejected: Bad VLAN list`.
            "Command rejected",
            // VTP refusing a VLAN change, printed when the VLAN sub-mode is left: in server mode (v1/v2)
            // for extended VLANs, `% Failed to create VLANs 3000` / `Extended VLAN(s) not allowed in
            // current VTP mode.` / `%Failed to commit extended VLAN(s) changes.`; in client mode
            // `VTP VLAN configuration not allowed when device is in CLIENT mode.`
            "% Failed to",
            "%Failed to",
            "not allowed in current VTP mode",
            "VTP VLAN configuration not allowed",
        ],
        on_open: &["terminal length 0", "terminal width 511"],
        enable: Some(("enable", r"(?i)^password:$")),
        config_enter: Some("configure terminal"),
        config_end: Some("end"),
        prompt_ends: ">#",
    },
    PlatformSpec {
        kind: PlatformKind::Nxos,
        name: "nxos",
        user_prompt: r"^[A-Za-z0-9_.\-@/:]{1,63}>$",
        privileged_prompt: r"^[A-Za-z0-9_.\-@/:]{1,63}#$",
        config_prompt: Some(r"^[A-Za-z0-9_.\-@/:]{1,63}\(config[A-Za-z0-9_.\-@/:+]{0,32}\)#$"),
        failure_strings: &[
            "% Invalid command",
            "% Invalid input",
            "% Incomplete command",
            "% Ambiguous command",
            "% Invalid number",
            "% Invalid parameter",
            "% Permission denied",
            "Syntax error while parsing",
            "ERROR:",
        ],
        on_open: &["terminal length 0", "terminal width 511"],
        // NX-OS puts users straight into privileged mode; `enable` exists only with feature privilege.
        enable: None,
        config_enter: Some("configure terminal"),
        config_end: Some("end"),
        prompt_ends: ">#",
    },
    PlatformSpec {
        kind: PlatformKind::Eos,
        name: "eos",
        user_prompt: r"^[A-Za-z0-9_.\-@/:]{1,63}>$",
        privileged_prompt: r"^[A-Za-z0-9_.\-@/:]{1,63}#$",
        config_prompt: Some(r"^[A-Za-z0-9_.\-@/:]{1,63}\(config[A-Za-z0-9_.\-@/:+]{0,48}\)#$"),
        failure_strings: &[
            "% Invalid input",
            "% Incomplete command",
            "% Ambiguous command",
            "% Unrecognized command",
            "% This is an unconverted command",
            "% Error",
        ],
        on_open: &["terminal length 0", "terminal width 32767"],
        enable: Some(("enable", r"(?i)^password:$")),
        config_enter: Some("configure terminal"),
        config_end: Some("end"),
        prompt_ends: ">#",
    },
    PlatformSpec {
        kind: PlatformKind::JunosCli,
        name: "junos",
        // Junos has no unprivileged/enable split: `user@host>` is operational mode.
        user_prompt: r"\b\B",
        privileged_prompt: r"^[A-Za-z0-9_.\-@/:]{1,63}>$",
        config_prompt: Some(r"^[A-Za-z0-9_.\-@/:]{1,63}#$"),
        failure_strings: &[
            "syntax error",
            "unknown command",
            "is ambiguous",
            "missing argument",
            "invalid value",
            "error:",
        ],
        on_open: &[
            "set cli screen-length 0",
            "set cli screen-width 511",
            "set cli complete-on-space off",
        ],
        enable: None,
        config_enter: Some("configure"),
        config_end: Some("exit configuration-mode"),
        prompt_ends: ">#",
    },
    PlatformSpec {
        kind: PlatformKind::Linux,
        name: "linux",
        // bash/sh prompts: `user@host:~$`, `[root@host ~]#`, `$`.
        user_prompt: r"^[A-Za-z0-9_.\-@:~/\[\] ]{0,128}\$$",
        privileged_prompt: r"^[A-Za-z0-9_.\-@:~/\[\] ]{0,128}#$",
        config_prompt: None,
        failure_strings: &[
            "command not found",
            "No such file or directory",
            "Permission denied",
        ],
        // No pager, no colours, no line editing surprises.
        on_open: &["export PAGER=cat TERM=dumb", "unset PROMPT_COMMAND"],
        enable: None,
        config_enter: None,
        config_end: None,
        prompt_ends: "$#",
    },
];

/// A platform with its patterns compiled. Obtain the built-ins with [`CliPlatform::get`]; clone and
/// adjust fields for a variant (extra on-open commands, another failure string).
#[derive(Debug, Clone)]
pub struct CliPlatform {
    pub kind: PlatformKind,
    pub name: &'static str,
    // Shared (`Arc`), not cloned with the platform: a cloned `Regex` starts with an empty cache pool,
    // so every shell would rebuild the lazy DFA of its prompts (measured: ~6 us per prompt check).
    pub user_prompt: Arc<Regex>,
    pub privileged_prompt: Arc<Regex>,
    pub config_prompt: Option<Arc<Regex>>,
    pub failures: FailureStrings,
    pub on_open: Vec<String>,
    /// `(command, password prompt)`.
    pub enable: Option<(String, Arc<Regex>)>,
    pub config_enter: Option<String>,
    pub config_end: Option<String>,
    /// The characters every prompt of this platform ends in; `None` (say, for a variant whose prompt
    /// patterns were changed) makes the shell try the patterns on every line.
    pub prompt_ends: Option<Vec<u8>>,
}

static COMPILED: LazyLock<Vec<CliPlatform>> =
    LazyLock::new(|| PLATFORMS.iter().map(CliPlatform::compile).collect());

impl CliPlatform {
    /// The built-in platform of this kind.
    pub fn get(kind: PlatformKind) -> &'static CliPlatform {
        // The table has one row per kind (tested); fall back to the first row rather than panic.
        COMPILED
            .iter()
            .find(|p| p.kind == kind)
            .unwrap_or_else(|| &COMPILED[0])
    }

    /// Look a platform up by its netgw name (`ios`, `nxos`, `eos`, `junos`, `linux`).
    pub fn by_name(name: &str) -> Option<&'static CliPlatform> {
        COMPILED.iter().find(|p| p.name == name)
    }

    fn compile(spec: &PlatformSpec) -> CliPlatform {
        CliPlatform {
            kind: spec.kind,
            name: spec.name,
            user_prompt: re(spec.user_prompt),
            privileged_prompt: re(spec.privileged_prompt),
            config_prompt: spec.config_prompt.map(re),
            failures: FailureStrings::new(spec.failure_strings),
            on_open: spec.on_open.iter().map(|s| (*s).to_owned()).collect(),
            enable: spec.enable.map(|(c, p)| (c.to_owned(), re(p))),
            config_enter: spec.config_enter.map(str::to_owned),
            config_end: spec.config_end.map(str::to_owned),
            prompt_ends: Some(spec.prompt_ends.as_bytes().to_vec()),
        }
    }

    /// False when `last` (the last byte of a line other than trailing whitespace) cannot end a prompt
    /// of this platform: the prompt patterns need not run. True when unsure.
    pub fn may_end_prompt(&self, last: u8) -> bool {
        self.prompt_ends.as_ref().is_none_or(|e| e.contains(&last))
    }

    /// Which mode a (trimmed) last output line is the prompt of, if any.
    pub fn prompt_mode(&self, line: &str) -> Option<super::CliMode> {
        use super::CliMode;
        // Config first: IOS `sw1(config)#` also ends in `#`.
        if self
            .config_prompt
            .as_ref()
            .is_some_and(|r| r.is_match(line))
        {
            Some(CliMode::Config)
        } else if self.privileged_prompt.is_match(line) {
            Some(CliMode::Privileged)
        } else if self.user_prompt.is_match(line) {
            Some(CliMode::User)
        } else {
            None
        }
    }

    /// The first failure string (in the table's order) contained in `output`.
    pub fn failure_in(&self, output: &str) -> Option<&str> {
        self.failures.first_in(output)
    }
}

/// A platform's failure strings, looked for in one pass over an output rather than one pass per
/// string: every output a shell reads is searched, the large ones (`show running-config`, `show
/// interfaces`) included, and one `contains` per string was 1.6% of a first IOS converge's CPU.
#[derive(Debug, Clone)]
pub struct FailureStrings {
    strings: Vec<String>,
    /// `None` only if the automatons could not be built (they are a dozen short literals): then the
    /// strings are searched one by one.
    finder: Option<Arc<Finders>>,
}

/// Whether any string is there, then which listed first. Output almost never holds one: the first
/// automaton (leftmost-first, so a SIMD prefilter skips most bytes) answers alone, 15 times faster
/// on an IOS `show interfaces` than the overlapping search the second (standard semantics) needs.
#[derive(Debug)]
struct Finders {
    any: AhoCorasick,
    each: AhoCorasick,
}

impl FailureStrings {
    pub fn new<S: AsRef<str>>(strings: impl IntoIterator<Item = S>) -> FailureStrings {
        let strings: Vec<String> = strings.into_iter().map(|s| s.as_ref().to_owned()).collect();
        let any = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(&strings);
        let finder = match (any, AhoCorasick::new(&strings)) {
            (Ok(any), Ok(each)) => Some(Arc::new(Finders { any, each })),
            _ => None,
        };
        FailureStrings { strings, finder }
    }

    pub fn strings(&self) -> &[String] {
        &self.strings
    }

    /// The earliest-listed string contained in `output`.
    pub fn first_in(&self, output: &str) -> Option<&str> {
        let index = match &self.finder {
            Some(f) if !f.any.is_match(output) => None,
            Some(f) => f
                .each
                .find_overlapping_iter(output)
                .map(|m| m.pattern().as_usize())
                .min(),
            None => self
                .strings
                .iter()
                .position(|f| output.contains(f.as_str())),
        };
        index.and_then(|i| self.strings.get(i)).map(String::as_str)
    }
}

/// The table holds literals, every one compiled by the `table_is_valid_and_complete` test: a failure
/// here is a programming error in this file, never a reaction to device input.
fn re(pattern: &str) -> Arc<Regex> {
    #[allow(clippy::expect_used)]
    Arc::new(Regex::new(pattern).expect("PLATFORMS table patterns are valid (tested)"))
}

#[cfg(test)]
mod tests {
    use super::super::CliMode;
    use super::*;

    #[test]
    fn table_is_valid_and_complete() {
        for spec in PLATFORMS {
            for p in [spec.user_prompt, spec.privileged_prompt]
                .into_iter()
                .chain(spec.config_prompt)
                .chain(spec.enable.map(|e| e.1))
            {
                Regex::new(p).unwrap_or_else(|e| panic!("{}: bad pattern {p}: {e}", spec.name));
            }
        }
        // Every prompt pattern is anchored at the end right after one of `prompt_ends` (or never
        // matches, like Junos' user prompt), so skipping other lines never misses a prompt.
        for spec in PLATFORMS {
            for p in [spec.user_prompt, spec.privileged_prompt]
                .into_iter()
                .chain(spec.config_prompt)
            {
                if p == r"\b\B" {
                    continue;
                }
                let body = p
                    .strip_suffix('$')
                    .unwrap_or_else(|| panic!("{}: {p} not anchored at the end", spec.name));
                let last = match body.strip_suffix(r"\$") {
                    Some(_) => '$',
                    None => body.chars().last().unwrap_or(' '),
                };
                assert!(
                    spec.prompt_ends.contains(last)
                        && !body.ends_with([']', ')', '}', '*', '+', '?', '.']),
                    "{}: {p} ends in {last:?}, not one of {:?}",
                    spec.name,
                    spec.prompt_ends
                );
            }
        }
        for kind in PlatformKind::ALL {
            assert_eq!(
                PLATFORMS.iter().filter(|p| p.kind == kind).count(),
                1,
                "{kind:?}"
            );
            assert_eq!(CliPlatform::get(kind).kind, kind);
        }
    }

    #[test]
    fn failure_strings_report_the_earliest_listed_one_found() {
        let f = FailureStrings::new(["% Invalid input", "ERROR:", "% Invalid"]);
        // "ERROR:" comes first in the output; "% Invalid input" first in the list.
        assert_eq!(
            f.first_in("ERROR: no\n% Invalid input detected"),
            Some("% Invalid input")
        );
        // Overlapping strings: the longer one is listed first and found.
        assert_eq!(f.first_in("x % Invalid input y"), Some("% Invalid input"));
        assert_eq!(f.first_in("x % Invalid y"), Some("% Invalid"));
        assert_eq!(f.first_in("all fine"), None);
        assert_eq!(
            FailureStrings::new(Vec::<String>::new()).first_in("x"),
            None
        );
    }

    #[test]
    fn ios_prompts() {
        let p = CliPlatform::get(PlatformKind::Ios);
        assert_eq!(p.prompt_mode("sw1>"), Some(CliMode::User));
        assert_eq!(p.prompt_mode("sw1#"), Some(CliMode::Privileged));
        assert_eq!(p.prompt_mode("sw1(config)#"), Some(CliMode::Config));
        assert_eq!(p.prompt_mode("sw1(config-vlan)#"), Some(CliMode::Config));
        assert_eq!(p.prompt_mode("sw1(config-if)#"), Some(CliMode::Config));
        assert_eq!(p.prompt_mode("VLAN0123  active"), None);
        assert_eq!(p.prompt_mode("Password:"), None);
        assert!(p.enable.as_ref().unwrap().1.is_match("Password:"));
        // VTP refusals (networkinferno.net capture of a server-mode switch; client-mode wording from
        // Cisco's VTP documentation).
        for refusal in [
            "% Failed to create VLANs 3000\nExtended VLAN(s) not allowed in current VTP mode.\n%Failed to commit extended VLAN(s) changes.",
            "VTP VLAN configuration not allowed when device is in CLIENT mode.",
        ] {
            assert!(p.failure_in(refusal).is_some(), "{refusal}");
        }
        assert_eq!(
            p.failure_in("  ^\n% Invalid input detected at '^' marker."),
            Some("% Invalid input")
        );
    }

    #[test]
    fn junos_and_linux_prompts() {
        let j = CliPlatform::get(PlatformKind::JunosCli);
        assert_eq!(j.prompt_mode("admin@vsrx>"), Some(CliMode::Privileged));
        assert_eq!(j.prompt_mode("admin@vsrx#"), Some(CliMode::Config));
        assert_eq!(j.prompt_mode(""), None);
        let l = CliPlatform::get(PlatformKind::Linux);
        assert_eq!(l.prompt_mode("user@host:~$"), Some(CliMode::User));
        assert_eq!(l.prompt_mode("[root@host ~]#"), Some(CliMode::Privileged));
        assert_eq!(
            CliPlatform::by_name("eos").map(|p| p.kind),
            Some(PlatformKind::Eos)
        );
    }
}
