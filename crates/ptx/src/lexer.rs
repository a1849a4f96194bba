//! The PTX lexer: a hand-written scanner over bytes.
//!
//! Tokens are produced one at a time (no token vector is built) and carry only their kind and byte range; the
//! parser slices the source for the text and decodes literals when it consumes them, so lexing allocates
//! nothing. Lexical errors (stray characters, unterminated comments and strings, malformed numbers) are pushed
//! onto the shared diagnostic list and the lexer carries on, so one bad byte never hides later errors.

use crate::ast::Span;
use crate::diagnostic::{Diagnostic, Diagnostics};

/// The kind of a token; its text is the source slice of its span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// `add`, `%r1`, `$L__BB0_1`, `_Z3fooi`, and the lone `_` sink.
    Ident,
    /// A dotted word including its dot: `.b32`, `.shared::cta`, `.L2::cache_hint`, `.2d`, `.x`.
    Directive,
    /// An integer literal (decimal, hex, octal, binary, optional `U` suffix).
    Int,
    /// A float literal: `0f3F800000`, `0d3FF0000000000000`, `1.5`, `1e10`.
    Float,
    /// A string literal including its quotes.
    Str,
    Semi,
    Comma,
    Colon,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Lt,
    Gt,
    At,
    Bang,
    Pipe,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Tilde,
    Amp,
    Caret,
    Eq,
    Shl,
    Shr,
    Question,
    EqEq,
    NotEq,
    Le,
    Ge,
    AndAnd,
    OrOr,
    Eof,
}

impl TokenKind {
    /// How the token kind is named in "expected ..." messages when its text is not shown.
    pub fn describe(self) -> &'static str {
        match self {
            TokenKind::Ident => "identifier",
            TokenKind::Directive => "directive",
            TokenKind::Int => "integer",
            TokenKind::Float => "floating-point literal",
            TokenKind::Str => "string",
            TokenKind::Semi => "`;`",
            TokenKind::Comma => "`,`",
            TokenKind::Colon => "`:`",
            TokenKind::LBrace => "`{`",
            TokenKind::RBrace => "`}`",
            TokenKind::LBracket => "`[`",
            TokenKind::RBracket => "`]`",
            TokenKind::LParen => "`(`",
            TokenKind::RParen => "`)`",
            TokenKind::Lt => "`<`",
            TokenKind::Gt => "`>`",
            TokenKind::At => "`@`",
            TokenKind::Bang => "`!`",
            TokenKind::Pipe => "`|`",
            TokenKind::Plus => "`+`",
            TokenKind::Minus => "`-`",
            TokenKind::Star => "`*`",
            TokenKind::Slash => "`/`",
            TokenKind::Percent => "`%`",
            TokenKind::Tilde => "`~`",
            TokenKind::Amp => "`&`",
            TokenKind::Caret => "`^`",
            TokenKind::Eq => "`=`",
            TokenKind::Shl => "`<<`",
            TokenKind::Shr => "`>>`",
            TokenKind::Question => "`?`",
            TokenKind::EqEq => "`==`",
            TokenKind::NotEq => "`!=`",
            TokenKind::Le => "`<=`",
            TokenKind::Ge => "`>=`",
            TokenKind::AndAnd => "`&&`",
            TokenKind::OrOr => "`||`",
            TokenKind::Eof => "end of file",
        }
    }
}

/// One token: its kind and byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub start: u32,
    pub end: u32,
}

impl Token {
    pub fn span(self) -> Span {
        Span { start: self.start, end: self.end }
    }
}

// Character classes, one table lookup per byte.
const IDENT_CONT: u8 = 1; // [a-zA-Z0-9_$]
const IDENT_START: u8 = 2; // [a-zA-Z]
const DIGIT: u8 = 4;
const SPACE: u8 = 8;

const fn classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        let mut v = 0;
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' {
            v |= IDENT_CONT;
        }
        if c.is_ascii_alphabetic() {
            v |= IDENT_START;
        }
        if c.is_ascii_digit() {
            v |= DIGIT;
        }
        if c == b' ' || c == b'\t' || c == b'\n' || c == b'\r' || c == 0x0b || c == 0x0c {
            v |= SPACE;
        }
        t[i] = v;
        i += 1;
    }
    t
}

static CLASS: [u8; 256] = classes();

/// What a token starting with a given byte may be, for the fast path of [`Lexer::next`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lead {
    /// `[a-zA-Z]`: always an identifier.
    Ident,
    /// A character that is a whole token by itself.
    Punct,
    Dot,
    Digit,
    /// `%`, `$` or `_`: an identifier if an identifier character follows.
    Sigil,
    /// Everything else: see [`Lexer::next_rare`].
    Other,
}

const fn leads() -> [Lead; 256] {
    let mut t = [Lead::Other; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        if c.is_ascii_alphabetic() {
            t[i] = Lead::Ident;
        } else if !matches!(PUNCT[i], TokenKind::Eof) {
            t[i] = Lead::Punct;
        } else if c == b'.' {
            t[i] = Lead::Dot;
        } else if c.is_ascii_digit() {
            t[i] = Lead::Digit;
        } else if c == b'%' || c == b'$' || c == b'_' {
            t[i] = Lead::Sigil;
        }
        i += 1;
    }
    t
}

static LEAD: [Lead; 256] = leads();

/// The token kind of each single-character token (`Eof` for bytes that are not one).
const PUNCT: [TokenKind; 256] = {
    let mut t = [TokenKind::Eof; 256];
    t[b';' as usize] = TokenKind::Semi;
    t[b',' as usize] = TokenKind::Comma;
    t[b':' as usize] = TokenKind::Colon;
    t[b'{' as usize] = TokenKind::LBrace;
    t[b'}' as usize] = TokenKind::RBrace;
    t[b'[' as usize] = TokenKind::LBracket;
    t[b']' as usize] = TokenKind::RBracket;
    t[b'(' as usize] = TokenKind::LParen;
    t[b')' as usize] = TokenKind::RParen;
    t[b'@' as usize] = TokenKind::At;
    t[b'+' as usize] = TokenKind::Plus;
    t[b'-' as usize] = TokenKind::Minus;
    t[b'*' as usize] = TokenKind::Star;
    t[b'~' as usize] = TokenKind::Tilde;
    t[b'^' as usize] = TokenKind::Caret;
    t[b'?' as usize] = TokenKind::Question;
    t
};

#[inline]
fn class(b: u8) -> u8 {
    CLASS[b as usize]
}

/// The scanner. `next` returns tokens until [`TokenKind::Eof`], which it then repeats.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    /// Spans are `u32`, so the caller must not pass more than `u32::MAX` bytes (the parser checks).
    /// Moves the scanner to byte `pos` (which must be a token boundary; the parser's fast paths use this after
    /// consuming simple text directly).
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.bytes.len());
    }

    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer { src, bytes: src.as_bytes(), pos: 0 }
    }

    #[inline]
    fn at(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    /// Length of the run of bytes of class `mask` starting at `from` (an iterator, so no bounds check per
    /// byte).
    #[inline(always)]
    fn run(&self, from: usize, mask: u8) -> usize {
        self.bytes.get(from..).map_or(0, |r| r.iter().take_while(|&&b| class(b) & mask != 0).count())
    }

    fn token(&self, kind: TokenKind, start: usize) -> Token {
        Token { kind, start: start as u32, end: self.pos as u32 }
    }

    /// Skips one `//` or `/* */` comment starting at the current position.
    #[inline(never)]
    fn comment(&mut self, diags: &mut Diagnostics) {
        let start = self.pos;
        let rest = self.src.get(self.pos + 2..).unwrap_or("");
        if self.at(self.pos + 1) == b'/' {
            // `str::find` with a byte-sized char uses a fast memchr.
            self.pos += 2 + rest.find('\n').unwrap_or(rest.len());
            return;
        }
        match rest.find("*/") {
            Some(i) => self.pos += 2 + i + 2,
            None => {
                self.pos = self.bytes.len();
                diags.push(Diagnostic::new(
                    Span::new(start, start + 2),
                    "unterminated block comment: expected `*/` before end of file",
                ));
            }
        }
    }

    /// Returns the next token, reporting lexical errors into `diags`.
    ///
    /// The common tokens (identifiers, directives, single-character punctuation) are handled here with table
    /// lookups; everything else (comments, numbers, strings, two-character operators, errors) is out of line
    /// in `Lexer::next_rare`, which keeps this function small and its register use low.
    pub fn next(&mut self, diags: &mut Diagnostics) -> Token {
        loop {
            let start = self.pos + self.run(self.pos, SPACE);
            let Some(&b) = self.bytes.get(start) else {
                self.pos = start;
                return self.token(TokenKind::Eof, start);
            };
            let kind = match LEAD[b as usize] {
                Lead::Ident => {
                    self.pos = start + 1 + self.run(start + 1, IDENT_CONT);
                    TokenKind::Ident
                }
                // `%r1`, `$L__BB0_1`, `_Z3fooi`; a lone `%`, `$` or `_` is left to `next_rare`.
                Lead::Sigil if class(self.at(start + 1)) & IDENT_CONT != 0 => {
                    self.pos = start + 2 + self.run(start + 2, IDENT_CONT);
                    TokenKind::Ident
                }
                Lead::Punct => {
                    self.pos = start + 1;
                    PUNCT[b as usize]
                }
                // Short plain decimals (most numbers: section bytes, offsets) need no further checks.
                Lead::Digit => {
                    let end = start + 1 + self.run(start + 1, DIGIT);
                    let len = end - start;
                    if len <= 18
                        && (b != b'0' || len == 1)
                        && class(self.at(end)) & IDENT_CONT == 0
                        && self.at(end) != b'.'
                    {
                        self.pos = end;
                        TokenKind::Int
                    } else {
                        self.pos = start;
                        match self.next_rare(diags) {
                            Some(kind) => kind,
                            None => continue,
                        }
                    }
                }
                Lead::Dot if class(self.at(start + 1)) & IDENT_CONT != 0 => {
                    self.pos = start + 1;
                    self.dotted_word();
                    TokenKind::Directive
                }
                _ => {
                    self.pos = start;
                    match self.next_rare(diags) {
                        Some(kind) => kind,
                        None => continue,
                    }
                }
            };
            return self.token(kind, start);
        }
    }

    /// The less common tokens, comments and errors, starting at `self.pos`. Returns `None` after skipping a
    /// comment or a reported bad character (the caller then lexes on).
    #[inline(never)]
    fn next_rare(&mut self, diags: &mut Diagnostics) -> Option<TokenKind> {
        let start = self.pos;
        let b = self.at(start);
        if b == b'/' && matches!(self.at(start + 1), b'/' | b'*') {
            self.comment(diags);
            return None;
        }
        self.pos += 1;
        Some(match b {
            b'/' => TokenKind::Slash,
            // Two-character operators of constant expressions.
            b'!' => self.pair(b'=', TokenKind::NotEq, TokenKind::Bang),
            b'|' => self.pair(b'|', TokenKind::OrOr, TokenKind::Pipe),
            b'&' => self.pair(b'&', TokenKind::AndAnd, TokenKind::Amp),
            b'=' => self.pair(b'=', TokenKind::EqEq, TokenKind::Eq),
            b'<' => match self.at(self.pos) {
                b'<' => self.pair(b'<', TokenKind::Shl, TokenKind::Lt),
                _ => self.pair(b'=', TokenKind::Le, TokenKind::Lt),
            },
            b'>' => match self.at(self.pos) {
                b'>' => self.pair(b'>', TokenKind::Shr, TokenKind::Gt),
                _ => self.pair(b'=', TokenKind::Ge, TokenKind::Gt),
            },
            b'"' => self.string(start, diags),
            b'.' => {
                diags.push(Diagnostic::new(
                    Span::new(start, start + 1),
                    "unexpected character `.` (expected a directive or modifier name after the dot)",
                ));
                return None;
            }
            b'0'..=b'9' => self.number(start, diags),
            b'_' | b'$' | b'%' => {
                let rest = self.pos;
                self.ident_tail();
                if self.pos == rest {
                    match b {
                        // `_` alone is the sink operand; `%` alone is the remainder operator.
                        b'_' => TokenKind::Ident,
                        b'%' => TokenKind::Percent,
                        _ => {
                            diags.push(Diagnostic::new(
                                Span::new(start, start + 1),
                                "unexpected character `$` (an identifier must follow it)",
                            ));
                            return None;
                        }
                    }
                } else {
                    TokenKind::Ident
                }
            }
            _ => {
                self.bad_char(start, diags);
                return None;
            }
        })
    }

    /// `two` if the next byte is `second` (consumed), else `one`.
    #[inline]
    fn pair(&mut self, second: u8, two: TokenKind, one: TokenKind) -> TokenKind {
        if self.at(self.pos) == second {
            self.pos += 1;
            two
        } else {
            one
        }
    }

    #[inline(always)]
    fn ident_tail(&mut self) {
        self.pos += self.run(self.pos, IDENT_CONT);
    }

    /// `.word` with optional `::word` parts (`.mbarrier::complete_tx::bytes`). The dot is already consumed.
    fn dotted_word(&mut self) {
        self.ident_tail();
        while self.at(self.pos) == b':'
            && self.at(self.pos + 1) == b':'
            && class(self.at(self.pos + 2)) & IDENT_CONT != 0
        {
            self.pos += 2;
            self.ident_tail();
        }
    }

    #[cold]
    #[inline(never)]
    fn bad_char(&mut self, start: usize, diags: &mut Diagnostics) {
        // `start` is on a char boundary: every token and skip ends on an ASCII byte or a whole char.
        let c = self.src.get(start..).and_then(|s| s.chars().next()).unwrap_or('\u{fffd}');
        self.pos = start + c.len_utf8();
        let shown =
            if c.is_ascii_graphic() { format!("`{c}`") } else { format!("U+{:04X} ({})", c as u32, c.escape_debug()) };
        diags.push(Diagnostic::new(Span::new(start, self.pos), format!("unexpected character {shown}")));
    }

    #[inline(never)]
    fn string(&mut self, start: usize, diags: &mut Diagnostics) -> TokenKind {
        loop {
            match self.bytes.get(self.pos) {
                None | Some(b'\n') => {
                    diags.push(Diagnostic::new(
                        Span::new(start, start + 1),
                        "unterminated string literal: expected `\"` before end of line",
                    ));
                    return TokenKind::Str;
                }
                Some(b'"') => {
                    self.pos += 1;
                    return TokenKind::Str;
                }
                Some(b'\\') => {
                    // Skip the escaped character, but never past a newline (it would hide the error above).
                    self.pos += if matches!(self.bytes.get(self.pos + 1), None | Some(b'\n')) { 1 } else { 2 };
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// Scans a numeric literal; its value is decoded by [`decode_int`] / [`decode_float`] when the parser
    /// consumes it, but its shape is checked here (except for short plain decimals, which are always valid).
    #[inline(never)]
    fn number(&mut self, start: usize, diags: &mut Diagnostics) -> TokenKind {
        let first = self.at(start);
        let second = self.at(start + 1);
        let kind;
        if first == b'0' && matches!(second, b'x' | b'X' | b'b' | b'B' | b'f' | b'F' | b'd' | b'D') {
            self.pos = start + 2;
            self.ident_tail();
            kind = if matches!(second, b'f' | b'F' | b'd' | b'D') { TokenKind::Float } else { TokenKind::Int };
        } else {
            self.pos = start + 1 + self.run(start + 1, DIGIT);
            let digits = self.pos - start;
            let mut float = false;
            if self.at(self.pos) == b'.' && class(self.at(self.pos + 1)) & DIGIT != 0 {
                float = true;
                self.pos += 1 + self.run(self.pos + 1, DIGIT);
            }
            if matches!(self.at(self.pos), b'e' | b'E') {
                let sign = usize::from(matches!(self.at(self.pos + 1), b'+' | b'-'));
                if class(self.at(self.pos + 1 + sign)) & DIGIT != 0 {
                    float = true;
                    self.pos += 1 + sign;
                    self.pos += self.run(self.pos, DIGIT);
                }
            }
            let glued = class(self.at(self.pos)) & IDENT_CONT != 0;
            if !float && !glued && digits <= 18 && (first != b'0' || digits == 1) {
                return TokenKind::Int;
            }
            if !float && self.at(self.pos) == b'U' {
                self.pos += 1;
            }
            kind = if float { TokenKind::Float } else { TokenKind::Int };
            // Letters glued to a number (`12abc`) make a malformed literal; take them into the token.
            self.ident_tail();
        }
        let text = self.src.get(start..self.pos).unwrap_or("");
        let ok = match kind {
            TokenKind::Int => decode_int(text).map(|_| ()),
            _ => decode_float(text).map(|_| ()),
        };
        if let Err(msg) = ok {
            diags.push(Diagnostic::new(Span::new(start, self.pos), msg));
        }
        kind
    }
}

/// Decodes an integer literal (`123`, `0x7f`, `017`, `0b101`, optional `U`): its value as 64 bits and whether
/// it had the `U` suffix. Values that do not fit in 64 bits are errors.
pub fn decode_int(text: &str) -> Result<(u64, bool), String> {
    // Fast path: up to 18 plain decimal digits never overflow.
    if !text.is_empty() && text.len() <= 18 && (!text.starts_with('0') || text.len() == 1) {
        let mut v = 0u64;
        let mut plain = true;
        for b in text.bytes() {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                plain = false;
                break;
            }
            v = v * 10 + u64::from(d);
        }
        if plain {
            return Ok((v, false));
        }
    }
    let (digits, unsigned) = match text.strip_suffix('U') {
        Some(d) => (d, true),
        None => (text, false),
    };
    let b = digits.as_bytes();
    let (radix, body, what) = match b {
        [b'0', b'x' | b'X', ..] => (16, digits.get(2..).unwrap_or(""), "hexadecimal"),
        [b'0', b'b' | b'B', ..] => (2, digits.get(2..).unwrap_or(""), "binary"),
        [b'0', _, ..] => (8, digits.get(1..).unwrap_or(""), "octal"),
        _ => (10, digits, "decimal"),
    };
    if body.is_empty() {
        return Err(format!("malformed integer literal `{}`: no digits after the prefix", clip(text)));
    }
    let mut value: u64 = 0;
    for c in body.bytes() {
        let d = match (c as char).to_digit(radix) {
            Some(d) => d,
            None => {
                return Err(format!("malformed {what} integer literal `{}`: invalid digit `{}`", clip(text), c as char))
            }
        };
        value = match value.checked_mul(u64::from(radix)).and_then(|v| v.checked_add(u64::from(d))) {
            Some(v) => v,
            None => return Err(format!("integer literal `{}` does not fit in 64 bits", clip(text))),
        };
    }
    Ok((value, unsigned))
}

/// A decoded floating-point literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatLit {
    F32Bits(u32),
    F64Bits(u64),
    Decimal(f64),
}

/// Decodes `0fXXXXXXXX` (exactly 8 hex digits), `0dXXXXXXXXXXXXXXXX` (exactly 16) or a decimal float.
pub fn decode_float(text: &str) -> Result<FloatLit, String> {
    let b = text.as_bytes();
    if let [b'0', p @ (b'f' | b'F' | b'd' | b'D'), rest @ ..] = b {
        let want = if matches!(p, b'f' | b'F') { 8 } else { 16 };
        let (name, ty) = if want == 8 { ("0f", "f32") } else { ("0d", "f64") };
        if rest.len() != want || !rest.iter().all(u8::is_ascii_hexdigit) {
            return Err(format!(
                "malformed {ty} literal `{}`: `{name}` must be followed by exactly {want} hexadecimal digits",
                clip(text)
            ));
        }
        let digits = text.get(2..).unwrap_or("");
        return if want == 8 {
            u32::from_str_radix(digits, 16).map(FloatLit::F32Bits).map_err(|e| e.to_string())
        } else {
            u64::from_str_radix(digits, 16).map(FloatLit::F64Bits).map_err(|e| e.to_string())
        };
    }
    // Only digits, one dot and an exponent reach here, so the std parser accepts exactly what we scanned
    // unless letters were glued on.
    match text.parse::<f64>() {
        Ok(v) if text.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-')) => {
            Ok(FloatLit::Decimal(v))
        }
        _ => Err(format!("malformed floating-point literal `{}`", clip(text))),
    }
}

/// Shortens long token text shown in messages.
pub(crate) fn clip(text: &str) -> String {
    const MAX: usize = 48;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", text.get(..end).unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(src: &str) -> (Vec<(TokenKind, &str)>, Vec<String>) {
        let mut d = Diagnostics::default();
        let mut l = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = l.next(&mut d);
            if t.kind == TokenKind::Eof {
                break;
            }
            out.push((t.kind, &src[t.start as usize..t.end as usize]));
        }
        (out, d.into_vec().into_iter().map(|d| d.message).collect())
    }

    #[test]
    fn tokens() {
        use TokenKind::*;
        let (t, e) = lex("ld.global.L2::cache_hint.v4.f32 {%f1, _}, [%rd1+-4]; // c\n/* x */ $L__BB0_1: %tid.x<<>>");
        assert!(e.is_empty(), "{e:?}");
        let kinds: Vec<_> = t.iter().map(|x| x.0).collect();
        assert_eq!(
            kinds,
            vec![
                Ident, Directive, Directive, Directive, Directive, LBrace, Ident, Comma, Ident, RBrace, Comma,
                LBracket, Ident, Plus, Minus, Int, RBracket, Semi, Ident, Colon, Ident, Directive, Shl, Shr
            ]
        );
        assert_eq!(t[2].1, ".L2::cache_hint");
    }

    #[test]
    fn numbers() {
        assert_eq!(decode_int("0x10").unwrap(), (16, false));
        assert_eq!(decode_int("017").unwrap(), (15, false));
        assert_eq!(decode_int("0b101U").unwrap(), (5, true));
        assert_eq!(decode_int("18446744073709551615").unwrap(), (u64::MAX, false));
        assert!(decode_int("18446744073709551616").is_err());
        assert!(decode_int("09").is_err());
        assert_eq!(decode_float("0f3F800000").unwrap(), FloatLit::F32Bits(0x3F80_0000));
        assert!(decode_float("0f123").is_err());
        assert_eq!(decode_float("1.5e-3").unwrap(), FloatLit::Decimal(1.5e-3));
        let (t, e) = lex("1.5e-3 1e10 8.5 0d3FF0000000000000 12U 0x");
        assert_eq!(t.len(), 6);
        assert_eq!(e.len(), 1);
    }

    #[test]
    fn errors() {
        let (_, e) = lex("a # b \"abc\n /* x");
        assert_eq!(e.len(), 3, "{e:?}");
    }
}
