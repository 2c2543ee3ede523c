//! Parsing Ruby cookbook files (attribute files, recipes, `metadata.rb`) into an AST; nothing is run.
//!
//! The parser is `lib-ruby-parser`, a pure-Rust port of whitequark's `parser` gem (the parser RuboCop
//! and most Ruby tooling were built on), with the Ruby 3.1 grammar. It was chosen over `ruby-prism`
//! (Ruby's own, newer parser) because prism's crate generates its bindings with bindgen at build time,
//! which needs libclang on every build machine (not installed here, and one more system dependency
//! for CI), while lib-ruby-parser builds from crates.io alone with no C toolchain and no Ruby. Its last
//! release (2022) predates Ruby 3.2/3.3 syntax additions, none of which the cookbook subset netgw
//! evaluates uses; a file it cannot parse fails with the parser's own message and line.

use super::CookbookError;
use lib_ruby_parser::{Loc, Node, Parser, ParserOptions};
use std::path::{Path, PathBuf};

/// A parsed Ruby file: its AST and what is needed to name lines in errors.
pub struct Program {
    pub path: PathBuf,
    /// Top-level statements, in order.
    pub statements: Vec<Node>,
    line_starts: Vec<usize>,
}

impl Program {
    /// The 1-based line of a node, for error messages.
    pub fn line(&self, loc: &Loc) -> usize {
        self.line_starts.partition_point(|&s| s <= loc.begin)
    }

    /// An error about a construct at `loc`.
    pub fn error(
        &self,
        loc: &Loc,
        construct: impl Into<String>,
        why: impl Into<String>,
    ) -> CookbookError {
        CookbookError::Ruby {
            path: self.path.clone(),
            line: self.line(loc),
            construct: construct.into(),
            why: why.into(),
        }
    }
}

/// Largest Ruby file netgw parses (real attribute files and recipes are a few KB).
pub const MAX_FILE_BYTES: usize = 256 * 1024;
/// Deepest nesting of `(`, `[` and `{` netgw parses (real cookbooks nest a handful).
pub const MAX_NESTING: usize = 100;
/// The stack a Ruby file is parsed, evaluated and dropped on. The parser recurses on nested
/// parentheses and dropping an AST recurses on every nesting (`1+1+1...`, `begin begin ...`); at
/// [`MAX_FILE_BYTES`] the deepest AST a file can produce needs about 80 MB in a debug build (measured:
/// 300 MB for 1 MB files). Only the pages used are ever committed.
const STACK_BYTES: usize = 256 << 20;

/// Run `f` (parsing, evaluating and dropping one file's AST) on a thread with [`STACK_BYTES`] of
/// stack, so no file within [`MAX_FILE_BYTES`] can overflow the caller's stack.
pub fn on_ruby_stack<T: Send>(
    path: &Path,
    f: impl FnOnce() -> Result<T, CookbookError> + Send,
) -> Result<T, CookbookError> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("netgw-ruby".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, f)
            .map_err(|source| CookbookError::Io {
                path: path.to_owned(),
                source,
            })?;
        handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Refuse, before parsing, a file too large or nested too deep to parse safely.
fn check_bounds(path: &Path, text: &str) -> Result<(), CookbookError> {
    let refuse = |line: usize, construct: String, why: String| CookbookError::Ruby {
        path: path.to_owned(),
        line,
        construct,
        why,
    };
    if text.len() > MAX_FILE_BYTES {
        return Err(refuse(
            1,
            format!("file of {} bytes", text.len()),
            format!(
                "larger than {MAX_FILE_BYTES} bytes, the most netgw parses (a bound against hostile cookbooks)"
            ),
        ));
    }
    let (mut depth, mut line) = (0usize, 1);
    for b in text.bytes() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => line += 1,
            _ => {}
        }
        if depth > MAX_NESTING {
            return Err(refuse(
                line,
                "brackets nested too deep".into(),
                format!(
                    "more than {MAX_NESTING} levels of (, [ or {{ (a bound against hostile cookbooks)"
                ),
            ));
        }
    }
    Ok(())
}

/// Parse `text`; a syntax error is reported with its line and the parser's message. Call it inside
/// [`on_ruby_stack`].
pub fn parse(path: &Path, text: &str) -> Result<Program, CookbookError> {
    check_bounds(path, text)?;
    let options = ParserOptions {
        buffer_name: path.display().to_string(),
        record_tokens: false,
        ..Default::default()
    };
    let result = Parser::new(text.as_bytes().to_vec(), options).do_parse();
    let mut line_starts = vec![0];
    line_starts.extend(
        text.bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .map(|(i, _)| i + 1),
    );
    let mut program = Program {
        path: path.to_owned(),
        statements: Vec::new(),
        line_starts,
    };
    if let Some(d) = result.diagnostics.iter().find(|d| d.is_error()) {
        return Err(CookbookError::Syntax {
            path: path.to_owned(),
            line: program.line(&d.loc),
            message: d.render_message(),
        });
    }
    program.statements = match result.ast.map(|b| *b) {
        None => Vec::new(),
        Some(Node::Begin(b)) => b.statements,
        Some(other) => vec![other],
    };
    Ok(program)
}

/// A node's statements when it is a body (`begin ... end` or a single statement).
pub fn body_statements(body: Option<&Node>) -> Vec<&Node> {
    match body {
        None => Vec::new(),
        Some(Node::Begin(b)) => b.statements.iter().collect(),
        Some(Node::KwBegin(b)) => b.statements.iter().collect(),
        Some(n) => vec![n],
    }
}

/// How a construct is named in error messages (`method call foo`, `while loop`, ...).
pub fn describe(node: &Node) -> String {
    match node {
        Node::Send(s) => format!("call to `{}`", s.method_name),
        Node::CSend(s) => format!("safe-navigation call `&.{}`", s.method_name),
        Node::Block(b) => match &*b.call {
            Node::Send(s) => format!("block passed to `{}`", s.method_name),
            other => format!("block on {}", describe(other)),
        },
        Node::Const(c) => format!("constant `{}`", c.name),
        Node::Def(d) => format!("method definition `def {}`", d.name),
        Node::Class(_) => "class definition".into(),
        Node::Module(_) => "module definition".into(),
        Node::Xstr(_) => "shell command (backticks)".into(),
        Node::Ivar(v) => format!("instance variable `{}`", v.name),
        Node::Gvar(v) => format!("global variable `{}`", v.name),
        Node::Ivasgn(v) => format!("instance variable assignment `{}`", v.name),
        Node::Gvasgn(v) => format!("global variable assignment `{}`", v.name),
        Node::While(_) | Node::WhilePost(_) => "while loop".into(),
        Node::Until(_) | Node::UntilPost(_) => "until loop".into(),
        Node::For(_) => "for loop".into(),
        Node::Regexp(_) => "regular expression".into(),
        other => format!("`{}` expression", other.str_type()),
    }
}
