//! How the command line prints: reports (human or JSON), drift verdicts, hosts and values, and the
//! terminal-safe stdout and stderr every human output goes through (`crate::terminal::terminal_safe`, the one
//! escape).

use super::*;

/// stderr for the log, with device- and server-originated text made terminal-safe. The formatter
/// writes each event whole, so a write never splits a character.
pub(super) struct SafeStderr;

impl std::io::Write for SafeStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(crate::terminal::terminal_safe(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// The format a command writes on stdout (`serve` writes none of its own: human).
pub(super) fn output_format(c: &Command) -> Format {
    match c {
        Command::Node {
            command: NodeCommand::Show { format, .. },
        }
        | Command::Expand { format, .. }
        | Command::Converge { format, .. }
        | Command::Facts { format, .. }
        | Command::Inventory { format, .. }
        | Command::Links { format, .. }
        | Command::Drift { format, .. } => *format,
        Command::Trigger(args) => args.format,
        Command::Validate { format, .. } if *format == ValidateFormat::Json => Format::Json,
        // GitHub's annotations are text lines: escaped as human output is.
        Command::Serve { .. } | Command::Validate { .. } => Format::Human,
        // Generated from our own definition, not from outside: written byte for byte, as JSON is
        // (a completion script has tabs and escapes of its own).
        Command::Completions { .. } | Command::Man { .. } => Format::Json,
    }
}

/// stdout, with human output made terminal-safe as a whole (`crate::terminal::terminal_safe`): whatever a
/// device, a Chef server or a repo put in a string, no control byte reaches the terminal, even
/// from a line its writer forgot to escape. JSON is left as serialised (it escapes control
/// characters itself, and escaping it again would change its strings).
pub(super) struct SafeStdout {
    human: bool,
    /// The start of a UTF-8 character a write split, kept for the next write.
    pending: Vec<u8>,
}

impl SafeStdout {
    pub(super) fn new(format: Format) -> Self {
        SafeStdout {
            human: format == Format::Human,
            pending: Vec::new(),
        }
    }
}

impl std::io::Write for SafeStdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut stdout = std::io::stdout().lock();
        if !self.human {
            return stdout.write(buf);
        }
        self.pending.extend_from_slice(buf);
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let rest = self.pending.split_off(whole);
        let text = String::from_utf8_lossy(&self.pending);
        stdout.write_all(crate::terminal::terminal_safe(&text).as_bytes())?;
        self.pending = rest;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let text = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            std::io::stdout().write_all(crate::terminal::terminal_safe(&text).as_bytes())?;
        }
        std::io::stdout().flush()
    }
}

/// `netgw drift`'s last line: which nodes differ from their desired state, which could not be compared.
pub(super) fn drift_verdict(report: &report::RunReport) -> String {
    let differ: Vec<&str> = report
        .nodes
        .iter()
        .filter(|n| n.updated > 0)
        .map(|n| n.name.as_str())
        .collect();
    let failed: Vec<&str> = report
        .nodes
        .iter()
        .filter(|n| n.failed())
        .map(|n| n.name.as_str())
        .collect();
    let unknown = if failed.is_empty() {
        String::new()
    } else {
        format!(
            "; {} node(s) could not be compared: {}",
            failed.len(),
            some_names(&failed)
        )
    };
    if !differ.is_empty() {
        format!(
            "Drift: {} node(s) differ from their desired state ({} resource(s)): {}{unknown}",
            differ.len(),
            report.summary.updated,
            some_names(&differ)
        )
    } else {
        format!("No drift: every node compared matches its desired state{unknown}")
    }
}

/// Node names for a summary line: the first 20, then how many more.
fn some_names(names: &[&str]) -> String {
    const SHOWN: usize = 20;
    let mut s = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    crate::terminal::terminal_safe(&s).into_owned()
}

/// How a report is shown: in `drift`'s words, and (`--changes-only`) how many nodes were left out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shown {
    pub(super) drift: bool,
    pub(super) hidden: Option<usize>,
}

/// The run report, as JSON or as text for people: each node's report, one line a node, the summary.
pub(super) fn write_report(
    report: &report::RunReport,
    format: Format,
    shown: Shown,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    match format {
        Format::Json => {
            // Written as it is serialised: a `Value` copy and a string of a 10,000-node report were
            // about 100 MB of the run's peak RSS (docs/bench.md).
            let mut w = std::io::BufWriter::new(&mut *out);
            serde_json::to_writer_pretty(&mut w, report).map_err(std::io::Error::from)?;
            writeln!(w)?;
            w.flush()?;
        }
        Format::Human => {
            for n in &report.nodes {
                writeln!(out, "{}", report::human_node(n))?;
            }
            match shown.hidden {
                Some(h) => writeln!(out, "Nodes (changes only; {h} more without changes):")?,
                None => writeln!(out, "Nodes:")?,
            }
            write!(out, "{}", report::node_lines(&report.nodes, shown.drift))?;
            if let Some(tx) = &report.transaction {
                write!(out, "{}", tx.human(&report.run_id))?;
            }
            write!(out, "{}", report::human_summary(report))?;
        }
    }
    Ok(())
}

/// One resolved host, a `key: value  (source)` line per field.
pub(super) fn human_host(h: &Value) -> String {
    let src = |k: &str| match h["sources"][k].as_str() {
        Some(s) => format!("  ({s})"),
        None => String::new(),
    };
    let mut s = format!("{}:\n", h["name"].as_str().unwrap_or_default());
    for k in ["hostname", "port", "platform", "username", "password"] {
        s.push_str(&format!("  {k}: {}{}\n", compact(&h[k]), src(k)));
    }
    let driver = match (&h["driver"], &h["not_driven"], &h["error"]) {
        (Value::String(d), _, _) => d.clone(),
        (_, Value::String(r), _) => format!("not driven: {r}"),
        (_, _, e) => format!("error: {}", e.as_str().unwrap_or("?")),
    };
    s.push_str(&format!("  driver: {driver}\n"));
    if let (Value::String(_), Value::String(e)) = (&h["driver"], &h["error"]) {
        s.push_str(&format!("  error: {e}\n"));
    }
    s.push_str(&format!("  groups: {}\n", compact(&h["groups"])));
    if let Some(data) = h["data"].as_object() {
        for (k, v) in data {
            s.push_str(&format!(
                "  data.{k}: {}{}\n",
                compact(v),
                src(&format!("data.{k}"))
            ));
        }
    }
    if let Some(co) = h["connection_options"].as_object() {
        for (k, v) in co {
            s.push_str(&format!("  connection_options.{k}: {}\n", compact(v)));
        }
    }
    s.push_str(&format!("  trust: {}\n", compact(&h["trust"])));
    s
}

pub(super) fn join_items(items: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = items.collect();
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}

pub(super) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

pub(super) fn compact(v: &Value) -> String {
    v.to_string()
}
