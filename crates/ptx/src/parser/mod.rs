//! The recursive-descent parser.
//!
//! Structure: `module` handles module-scope directives, variables and function headers; `function`
//! handles bodies (statements, labels, declarations, blocks); `instruction` handles one instruction and its
//! operands; `expr` handles constant expressions and initializers.
//!
//! Error handling: every parsing function returns `PResult`; an `Err(Stop)` means a diagnostic has been
//! recorded and the caller should resynchronize: inside a body at the next `;` or `}` of the same nesting
//! level, at module scope at the next module-level directive. Recursion is bounded by [`MAX_DEPTH`] for
//! blocks, initializer braces and expressions, and anything skipped during recovery is skipped iteratively,
//! so no input can exhaust the stack, and every loop consumes a token, so parsing is linear in input size.

mod expr;
mod function;
mod instruction;
mod module;

pub(crate) use expr::precedence;

use crate::ast::{Module, Span};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::lexer::{clip, Lexer, Token, TokenKind};

/// The deepest nesting of blocks, initializer braces or expression parentheses the parser accepts.
pub const MAX_DEPTH: u32 = 256;

/// The error value of parsing functions: a diagnostic has already been recorded.
#[derive(Debug)]
pub(crate) struct Stop;

pub(crate) type PResult<T> = Result<T, Stop>;

pub(crate) struct Parser<'a> {
    src: &'a str,
    lex: Lexer<'a>,
    /// The current token.
    tok: Token,
    /// One token of lookahead.
    next: Token,
    /// End of the previously consumed token (for spans of whole constructs).
    prev_end: u32,
    diags: Diagnostics,
    /// Set once an "... found end of file" error is reported, so unwinding does not repeat it per level.
    eof_reported: bool,
    options: ParseOptions,
    /// Byte-level shortcuts for common simple lines (off only in the test that checks they change nothing).
    fast_paths: bool,
}

/// Parses a whole module. The source must be at most `u32::MAX` bytes (checked by the caller).
/// Options of [`crate::parse_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// Keep the parsed entries of `.section` blocks in [`crate::ast::Section::entries`] (default `true`).
    /// With `false`, sections are still fully checked and keep their name and raw `body`, but `entries` is
    /// left empty: DWARF sections are a quarter of the bytes of `-G` PTX and one small AST node per data byte,
    /// so a consumer that only prints them back saves much of the parsing time.
    pub section_entries: bool,
}

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        ParseOptions { section_entries: true }
    }
}

pub(crate) fn parse_module(src: &str, options: ParseOptions) -> Result<Module<'_>, Vec<Diagnostic>> {
    let mut p = Parser::new(src);
    p.options = options;
    let module = p.module();
    if p.diags.is_empty() {
        Ok(module)
    } else {
        // Drop the partial AST before the diagnostics are returned; it is never deeper than MAX_DEPTH.
        drop(module);
        Err(p.diags.into_vec())
    }
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Parser<'a> {
        let mut diags = Diagnostics::default();
        let mut lex = Lexer::new(src);
        let tok = lex.next(&mut diags);
        let next = lex.next(&mut diags);
        Parser {
            src,
            lex,
            tok,
            next,
            prev_end: 0,
            diags,
            eof_reported: false,
            options: ParseOptions::default(),
            fast_paths: true,
        }
    }

    /// The text of a token.
    #[inline]
    fn text(&self, t: Token) -> &'a str {
        self.src.get(t.start as usize..t.end as usize).unwrap_or("")
    }

    /// The text of the current token.
    #[inline]
    fn tok_text(&self) -> &'a str {
        self.text(self.tok)
    }

    /// Consumes the current token and returns it. Once the diagnostic cap is reached the lexer is no longer
    /// consulted and every token is end of file, so parsing winds down quickly.
    #[inline]
    fn bump(&mut self) -> Token {
        let t = self.tok;
        self.prev_end = t.end;
        if self.diags.is_full() {
            let end = self.src.len() as u32;
            self.tok = Token { kind: TokenKind::Eof, start: end, end };
            self.next = self.tok;
        } else {
            self.tok = self.next;
            self.next = self.lex.next(&mut self.diags);
        }
        t
    }

    /// Restarts lexing at byte `pos` after a fast path consumed `..pos` directly; `last_end` is the end of the
    /// last thing consumed.
    fn resume_at(&mut self, pos: usize, last_end: u32) {
        self.prev_end = last_end;
        self.lex.seek(pos);
        if self.diags.is_full() {
            let end = self.src.len() as u32;
            self.tok = Token { kind: TokenKind::Eof, start: end, end };
            self.next = self.tok;
        } else {
            self.tok = self.lex.next(&mut self.diags);
            self.next = self.lex.next(&mut self.diags);
        }
    }

    /// Consumes the current token and returns its text.
    #[inline]
    fn bump_text(&mut self) -> &'a str {
        let t = self.bump();
        self.text(t)
    }

    #[inline]
    fn at(&self, kind: TokenKind) -> bool {
        self.tok.kind == kind
    }

    #[inline]
    fn eat(&mut self, kind: TokenKind) -> Option<Token> {
        if self.tok.kind == kind {
            Some(self.bump())
        } else {
            None
        }
    }

    /// Consumes a token of `kind` or reports "expected {what}, found ...".
    fn expect(&mut self, kind: TokenKind, what: &str) -> PResult<Token> {
        match self.eat(kind) {
            Some(t) => Ok(t),
            None => Err(self.unexpected(what)),
        }
    }

    /// Span from `start` to the end of the last consumed token.
    fn span_from(&self, start: u32) -> Span {
        Span { start, end: self.prev_end.max(start) }
    }

    fn error(&mut self, span: Span, message: impl Into<String>) {
        self.diags.push(Diagnostic::new(span, message));
    }

    /// How the current token is named in messages.
    fn found(&self) -> String {
        match self.tok.kind {
            TokenKind::Eof => "end of file".to_string(),
            TokenKind::Str => format!("string {}", clip(self.tok_text())),
            _ => format!("`{}`", clip(self.tok_text())),
        }
    }

    /// Reports "expected {what}, found {current token}" at the current token and returns `Stop`.
    fn unexpected(&mut self, what: &str) -> Stop {
        if self.tok.kind == TokenKind::Eof {
            if self.eof_reported {
                return Stop;
            }
            self.eof_reported = true;
        }
        let msg = format!("expected {what}, found {}", self.found());
        self.error(self.tok.span(), msg);
        Stop
    }

    /// True when a line break separates the previous token from the current one.
    fn newline_before_tok(&self) -> bool {
        self.src.as_bytes().get(self.prev_end as usize..self.tok.start as usize).is_some_and(|gap| gap.contains(&b'\n'))
    }

    /// Parses a `u32` from an integer token (for counts, indices and sizes).
    fn expect_u32(&mut self, what: &str) -> PResult<u32> {
        let (v, span) = self.expect_u64(what)?;
        match u32::try_from(v) {
            Ok(v) => Ok(v),
            Err(_) => {
                self.error(span, format!("{what} `{v}` is out of range (at most {})", u32::MAX));
                Err(Stop)
            }
        }
    }

    fn expect_u64(&mut self, what: &str) -> PResult<(u64, Span)> {
        let t = self.expect(TokenKind::Int, what)?;
        // A malformed literal was already reported by the lexer.
        let v = crate::lexer::decode_int(self.text(t)).map_or(0, |(v, _)| v);
        Ok((v, t.span()))
    }

    /// Skips tokens up to and including the `}` matching the `{` at the current token, iteratively.
    fn skip_balanced(&mut self) {
        let mut depth = 0u64;
        loop {
            match self.tok.kind {
                TokenKind::Eof => return,
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.bump();
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// 1-based line of a byte offset (used in messages about unclosed braces; called at most a few times).
    fn line_of(&self, offset: u32) -> usize {
        let prefix = self.src.as_bytes().get(..offset as usize).unwrap_or(&[]);
        prefix.iter().filter(|&&b| b == b'\n').count() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_both(src: &str) -> (Result<Module<'_>, Vec<Diagnostic>>, Result<Module<'_>, Vec<Diagnostic>>) {
        let run = |fast: bool| {
            let mut p = Parser::new(src);
            p.fast_paths = fast;
            let m = p.module();
            if p.diags.is_empty() {
                Ok(m)
            } else {
                Err(p.diags.into_vec())
            }
        };
        (run(true), run(false))
    }

    /// The byte-level fast paths must give exactly the AST (spans included) and diagnostics of the token path.
    #[test]
    fn fast_paths_agree() {
        let head = ".version 8.5\n.target sm_80\n.address_size 64\n.section .debug_info\n{\n";
        let cases = [
            ".b8 1, 2, 3\n.b8 4\n}",
            ".b8 1\n-1\n}",
            ".b8 1\n, 2\n}",
            ".b8 1,\n2\n}",
            ".b8 017\n}",
            ".b8 0\n.b16 00\n}",
            ".b8 1 // comment\n.b32 2\t// c\n$L__x:\n.b64 3\n}",
            ".b8 1 /* c */\n}",
            ".b8 12345678901234567890\n}",
            ".b8 1\n}",
            ".b8 1\n",
            ".b8 1\n\n\n  .b8 2\r\n.b8 3 \r\n}",
            ".b8 1 + 2\n}",
            ".b8 1\n(2)\n}",
            ".b8 1\n~2\n}",
            ".b32 .debug_abbrev\n.b8 7\n}",
            ".b8 1\n/2\n}",
            ".b8 1\n.5\n}",
            ".b8 1,2,\t3 ,4\n_x:\n}",
        ];
        for case in cases {
            let src = format!("{head}{case}");
            let (fast, slow) = parse_both(&src);
            assert_eq!(fast, slow, "fast path differs on {case:?}");
        }
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/ptx");
        let mut stack = vec![std::path::PathBuf::from(dir)];
        let mut checked = 0;
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "ptx") && checked < 60 {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    if text.contains(".section") {
                        let (fast, slow) = parse_both(&text);
                        assert!(fast == slow, "fast path differs on {}", path.display());
                        checked += 1;
                    }
                }
            }
        }
    }
}
