//! PTX front end: lexer, parser, AST, printer and diagnostics.
//!
//! This crate depends on nothing else in the workspace. The pipeline is:
//!
//! 1. [`lexer`]: a hand-written byte scanner producing one token at a time (kind and byte range only; no
//!    allocation per token). Lexical errors are reported and skipped.
//! 2. [`parser`](crate::parse): recursive descent producing an [`ast::Module`] that borrows names from the
//!    source. It checks syntax and that every opcode, modifier, type and state space is a known keyword
//!    ([`keywords`]); operand counts and types are left to the IR verifier. Constant expressions are folded
//!    while parsing (C rules at 64 bits), so an immediate operand such as `(1 << 4) + 3` arrives as `19`.
//! 3. [`printer`]: `Display` for the AST, printing canonical PTX (one statement per line, immediates in a
//!    form that re-parses to the identical value, sections verbatim).
//!
//! Entry points: [`parse`] (text), [`parse_bytes`] (bytes that may not be UTF-8), [`parse_with`]
//! ([`ParseOptions`]). [`Diagnostic::render`] and [`diagnostic::render_all`] format errors as
//! `file:line:col: error: message` with the source line and a caret.
//!
//! # Guarantees
//!
//! * [`parse`] and [`parse_bytes`] never panic and never hang, whatever the input: there is no unchecked
//!   indexing of input-derived data, recursion is bounded ([`parser::MAX_DEPTH`] levels of blocks,
//!   initializer braces and expression nesting, each reported when exceeded), and parsing takes time linear
//!   in the input size. The returned AST is never deeper than that bound, so dropping it is safe too.
//! * Errors are reported as [`Diagnostic`]s with byte spans, sorted by position; after an error inside a
//!   function body the parser resynchronizes at the next `;` or `}` of the same nesting level (at module
//!   scope, at the next module-level directive), so one input yields several diagnostics (at most
//!   [`diagnostic::MAX_DIAGNOSTICS`]). A module is returned only if there are none.
//! * Round trip: for any module `m` that [`parse`] returns, `parse(&m.to_string())` succeeds, equals `m` up
//!   to spans and the spelling of decimal float literals (which print as their exact `0d` bits), and prints
//!   identically; see [`normalize::equivalent`].

pub mod ast;
pub mod diagnostic;
pub mod keywords;
pub mod lexer;
mod lookup;
pub mod normalize;
pub mod parser;
pub mod printer;

pub use diagnostic::{Diagnostic, LineIndex};
pub use parser::ParseOptions;

use ast::Span;

/// Parses PTX text into a module that borrows from `source`, or returns every diagnostic found.
pub fn parse(source: &str) -> Result<ast::Module<'_>, Vec<Diagnostic>> {
    parse_with(source, ParseOptions::default())
}

/// [`parse`] with options (see [`ParseOptions`]).
pub fn parse_with(source: &str, options: ParseOptions) -> Result<ast::Module<'_>, Vec<Diagnostic>> {
    if u32::try_from(source.len()).is_err() {
        return Err(vec![Diagnostic::new(
            Span::default(),
            "input is too large: PTX files of 4 GiB or more are not supported",
        )]);
    }
    parser::parse_module(source, options)
}

/// Parses PTX given as bytes. Invalid UTF-8 is reported (one diagnostic per invalid sequence, at its line and
/// column) together with every other error in the file: the invalid bytes are treated as spaces to look for
/// more errors, and the result is then always `Err`.
pub fn parse_bytes(bytes: &[u8]) -> Result<ast::Module<'_>, Vec<Diagnostic>> {
    let first_error = match std::str::from_utf8(bytes) {
        Ok(source) => return parse(source),
        Err(e) => e,
    };
    if u32::try_from(bytes.len()).is_err() {
        return Err(vec![Diagnostic::new(
            Span::default(),
            "input is too large: PTX files of 4 GiB or more are not supported",
        )]);
    }
    let mut utf8_errors = Vec::new();
    let mut clean = bytes.to_vec();
    let mut at = first_error.valid_up_to();
    let mut error = Some(first_error);
    while let Some(e) = error {
        // `e` describes `bytes[at..]`'s first invalid sequence relative to where the scan started.
        let len = e.error_len().unwrap_or(bytes.len() - at).max(1);
        let shown: Vec<String> = bytes.get(at..at + len).unwrap_or(&[]).iter().map(|b| format!("0x{b:02X}")).collect();
        if utf8_errors.len() < diagnostic::MAX_DIAGNOSTICS {
            utf8_errors.push(Diagnostic::new(
                Span::new(at, at + len),
                format!(
                    "invalid UTF-8 (byte{} {}); PTX source must be text",
                    if len > 1 { "s" } else { "" },
                    shown.join(" ")
                ),
            ));
        }
        for b in clean.get_mut(at..at + len).unwrap_or(&mut []) {
            *b = b' ';
        }
        at += len;
        error = match std::str::from_utf8(bytes.get(at..).unwrap_or(&[])) {
            Ok(_) => None,
            Err(e) => {
                at += e.valid_up_to();
                Some(e)
            }
        };
    }
    let others = match String::from_utf8(clean) {
        Ok(text) => match parse(&text) {
            Ok(_) => Vec::new(),
            Err(d) => d,
        },
        Err(_) => Vec::new(),
    };
    let mut all = utf8_errors;
    all.extend(others.into_iter().filter(|d| !d.message.starts_with("too many errors")));
    all.sort_by_key(|d| (d.span.start, d.span.end));
    if all.len() >= diagnostic::MAX_DIAGNOSTICS {
        let at = all.get(diagnostic::MAX_DIAGNOSTICS - 2).map_or(Span::default(), |d| d.span);
        all.truncate(diagnostic::MAX_DIAGNOSTICS - 1);
        all.push(Diagnostic::new(at, format!("too many errors; stopped after {}", diagnostic::MAX_DIAGNOSTICS - 1)));
    }
    Err(all)
}

#[cfg(test)]
mod size_probe {
    #[test]
    fn sizes() {
        use crate::ast::*;
        eprintln!(
            "Statement {} Instruction {} Operand {} Expr {} SectionEntry {} Immediate {} Token {}",
            std::mem::size_of::<Statement>(),
            std::mem::size_of::<Instruction>(),
            std::mem::size_of::<Operand>(),
            std::mem::size_of::<Expr>(),
            std::mem::size_of::<SectionEntry>(),
            std::mem::size_of::<Immediate>(),
            std::mem::size_of::<crate::lexer::Token>()
        );
    }
}
