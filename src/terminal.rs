//! Text for a terminal: the one escape every human output goes through.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Text from a device, a Chef server or a repo made safe for a terminal: every control character but
/// newline and tab is shown escaped (`\x1b`, `\x07`, `\r`, `\u{9b}`), as are the Unicode
/// direction overrides that reorder what is shown. The one function for all human output: the
/// report, the progress bar, the error line and the log (`cli::init_tracing`). JSON needs none:
/// its encoder escapes control characters.
///
/// A device error carrying `ESC ] 0 ; title BEL`, `ESC [ 2 J` or a carriage return could otherwise
/// retitle the terminal, clear it, or print a fake "converged OK" over the real line.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if unsafe_char(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if unsafe_char(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}
