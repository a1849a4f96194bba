//! Diagnostics: an error message tied to a byte span, and rendering it as `file:line:col: error: ...` with the
//! offending source line and a caret.

use std::fmt;

use crate::ast::Span;

/// The most diagnostics reported for one input; past it parsing stops (the last one says so).
pub const MAX_DIAGNOSTICS: usize = 100;

/// One error found in the input. Owns its data, so it outlives the source text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// The bytes the error is about (may be empty, e.g. at end of file).
    pub span: Span,
    /// What is wrong, including what was expected and what was found.
    pub message: String,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { span, message: message.into() }
    }

    /// 1-based `(line, column)` of the start of the span in `source`.
    pub fn line_col(&self, source: &[u8]) -> (u32, u32) {
        LineIndex::new(source).line_col(source, self.span.start)
    }

    /// Renders `file:line:col: error: message`, the source line and a caret under the span.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        self.render_bytes(file_name, source.as_bytes())
    }

    /// Like [`Diagnostic::render`], for input that may not be valid UTF-8 (as given to [`crate::parse_bytes`]).
    pub fn render_bytes(&self, file_name: &str, source: &[u8]) -> String {
        self.render_with(&LineIndex::new(source), file_name, source)
    }

    /// Renders with a prebuilt [`LineIndex`] (cheaper when rendering many diagnostics of one file).
    pub fn render_with(&self, index: &LineIndex, file_name: &str, source: &[u8]) -> String {
        let offset = (self.span.start as usize).min(source.len());
        let (line, col) = index.line_col(source, offset as u32);
        let line_start = index.line_start(line).min(offset);
        let line_end = source
            .get(line_start..)
            .and_then(|r| r.iter().position(|&b| b == b'\n'))
            .map_or(source.len(), |i| line_start + i);
        let span_end = (self.span.end as usize).clamp(offset, line_end);

        // Very long lines (minified or generated input) are shown as a window around the error.
        const WINDOW: usize = 100;
        let win_start = if offset - line_start > WINDOW { floor_char(source, offset - WINDOW / 2) } else { line_start };
        let win_end = if line_end - win_start > 2 * WINDOW {
            floor_char(source, (offset + WINDOW).min(line_end))
        } else {
            line_end
        };
        let win_end = win_end.max(offset);
        let pre = display(source.get(win_start..offset).unwrap_or(&[]));
        let mid = display(source.get(offset..span_end.min(win_end)).unwrap_or(&[]));
        let text = display(source.get(win_start..win_end).unwrap_or(&[]));
        let (lead, trail) =
            (if win_start > line_start { "..." } else { "" }, if win_end < line_end { "..." } else { "" });

        let gutter = line.to_string();
        let pad = " ".repeat(gutter.len());
        let caret_pad: String =
            lead.chars().map(|_| ' ').chain(pre.chars().map(|c| if c == '\t' { '\t' } else { ' ' })).collect();
        let carets = "^".repeat(mid.chars().count().max(1));
        format!(
            "{file_name}:{line}:{col}: error: {msg}\n{gutter} | {lead}{text}{trail}\n{pad} | {caret_pad}{carets}\n",
            msg = self.message
        )
    }
}

/// Renders every diagnostic of one file, in order.
pub fn render_all(diagnostics: &[Diagnostic], file_name: &str, source: &[u8]) -> String {
    let index = LineIndex::new(source);
    diagnostics.iter().map(|d| d.render_with(&index, file_name, source)).collect()
}

fn floor_char(source: &[u8], mut i: usize) -> usize {
    // Step back over UTF-8 continuation bytes so a window never starts inside a character.
    while i > 0 && source.get(i).is_some_and(|b| b & 0xC0 == 0x80) {
        i -= 1;
    }
    i
}

/// Source bytes as shown in a rendered diagnostic: invalid UTF-8 becomes U+FFFD and control characters other
/// than tab become `?`, so the rendering is always printable text.
fn display(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).chars().map(|c| if c.is_control() && c != '\t' { '?' } else { c }).collect()
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

/// Maps byte offsets to 1-based line and column numbers (columns count characters, a tab counting as one).
#[derive(Clone, Debug)]
pub struct LineIndex {
    /// Byte offset of the start of each line.
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(source: &[u8]) -> LineIndex {
        let mut starts = vec![0u32];
        starts.extend(source.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| (i + 1) as u32));
        LineIndex { starts }
    }

    /// Number of lines (a final line without a newline counts).
    pub fn lines(&self) -> u32 {
        self.starts.len() as u32
    }

    /// 1-based line of `offset` (offsets past the end map to the last line).
    pub fn line(&self, offset: u32) -> u32 {
        self.starts.partition_point(|&s| s <= offset).max(1) as u32
    }

    /// Byte offset at which 1-based `line` starts.
    pub fn line_start(&self, line: u32) -> usize {
        self.starts.get(line.saturating_sub(1) as usize).copied().unwrap_or(0) as usize
    }

    /// 1-based `(line, column)` of `offset`; the column counts characters (UTF-8 lead bytes) from the line
    /// start. `source` must be the text the index was built from.
    pub fn line_col(&self, source: &[u8], offset: u32) -> (u32, u32) {
        let line = self.line(offset);
        let start = self.line_start(line);
        let end = (offset as usize).clamp(start, source.len().max(start));
        let col = source.get(start..end).map_or(0, |s| s.iter().filter(|&&b| b & 0xC0 != 0x80).count());
        (line, col as u32 + 1)
    }
}

/// A diagnostic list that stops accepting entries at [`MAX_DIAGNOSTICS`] (used by the lexer and parser).
#[derive(Debug, Default)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
    full: bool,
}

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        if self.list.len() < MAX_DIAGNOSTICS {
            self.list.push(d);
        }
        // One diagnostic is held back from the cap, so a full list can say that more were dropped.
        self.full |= self.list.len() >= MAX_DIAGNOSTICS;
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// True once the cap is reached: the parser then stops.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// The diagnostics in source order; when the cap was hit, the last one says that more were dropped.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        let mut list = self.list;
        // Lexer errors for a lookahead token are found before parser errors at the current one.
        list.sort_by_key(|d| (d.span.start, d.span.end));
        if self.full {
            let at = list.last().map_or(Span::default(), |d| d.span);
            list.truncate(MAX_DIAGNOSTICS - 1);
            list.push(Diagnostic::new(at, format!("too many errors; stopped after {}", MAX_DIAGNOSTICS - 1)));
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col() {
        let src = b"ab\n\tcd\n";
        let idx = LineIndex::new(src);
        assert_eq!(idx.line_col(src, 0), (1, 1));
        assert_eq!(idx.line_col(src, 2), (1, 3));
        assert_eq!(idx.line_col(src, 3), (2, 1));
        assert_eq!(idx.line_col(src, 5), (2, 3));
        assert_eq!(idx.line_col(src, 7), (3, 1));
        assert_eq!(idx.line_col(src, 100), (3, 1));
    }

    #[test]
    fn render() {
        let src = "x\n\tfoo.s32 %r1;\n";
        let d = Diagnostic::new(Span::new(3, 6), "unknown opcode `foo`");
        assert_eq!(d.render("a.ptx", src), "a.ptx:2:2: error: unknown opcode `foo`\n2 | \tfoo.s32 %r1;\n  | \t^^^\n");
    }

    #[test]
    fn render_long_line() {
        let src = "a".repeat(10_000);
        let d = Diagnostic::new(Span::new(5000, 5001), "x");
        let r = d.render("f", &src);
        assert!(r.len() < 400, "{r}");
        assert!(r.starts_with("f:1:5001: error: x\n"));
    }
}
