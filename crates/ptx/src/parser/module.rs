//! Module scope: `.version`, `.target`, `.address_size`, `.file`, `.section`, `.pragma`, `.alias`, variable
//! declarations and function headers.

use smallvec::SmallVec;

use super::{PResult, Parser, Stop};
use crate::ast::*;
use crate::lexer::TokenKind;
use crate::lookup;

/// What may stand at module scope, for messages.
const MODULE_ITEM: &str = "a directive such as `.version`, `.entry`, `.func` or `.global` at module scope";

/// Directives that start a module-scope item: module-level recovery resumes at one of them.
fn starts_module_item(text: &str) -> bool {
    matches!(
        text,
        ".version"
            | ".target"
            | ".address_size"
            | ".file"
            | ".section"
            | ".pragma"
            | ".alias"
            | ".visible"
            | ".extern"
            | ".weak"
            | ".common"
            | ".entry"
            | ".func"
            | ".global"
            | ".const"
            | ".shared"
            | ".local"
            | ".tex"
    )
}

pub(super) fn linkage_of(text: &str) -> Option<Linkage> {
    match text {
        ".visible" => Some(Linkage::Visible),
        ".extern" => Some(Linkage::Extern),
        ".weak" => Some(Linkage::Weak),
        ".common" => Some(Linkage::Common),
        _ => None,
    }
}

/// The state spaces a variable declaration may start with.
pub(super) fn decl_space(text: &str) -> Option<StateSpace> {
    let space = StateSpace::from_name(text.strip_prefix('.')?)?;
    (space != StateSpace::Sreg).then_some(space)
}

/// The text of a string token without its quotes (escape sequences untouched).
pub(super) fn string_body(text: &str) -> &str {
    let inner = text.strip_prefix('"').unwrap_or(text);
    inner.strip_suffix('"').unwrap_or(inner)
}

impl<'a> Parser<'a> {
    pub(super) fn module(&mut self) -> Module<'a> {
        let mut m = Module::default();
        while !self.diags.is_full() {
            let start = self.tok.start;
            let result = match self.tok.kind {
                TokenKind::Eof => break,
                TokenKind::Directive => self.module_item(&mut m),
                TokenKind::Semi => {
                    self.bump();
                    Ok(())
                }
                TokenKind::RBrace => {
                    self.error(self.tok.span(), "unexpected `}` at module scope: no block is open");
                    self.bump();
                    Ok(())
                }
                TokenKind::Ident if lookup::opcode(self.tok_text()).is_some() => Err(self.stray_instruction()),
                _ => Err(self.unexpected(MODULE_ITEM)),
            };
            if result.is_err() {
                self.recover_module(start);
            }
        }
        m
    }

    /// An instruction at module scope, most likely after a `}` that closed its function too early.
    fn stray_instruction(&mut self) -> Stop {
        let msg = format!(
            "instruction `{}` outside any function: expected a directive such as `.entry` or `.global` at module \
             scope (is there an extra `}}` above?)",
            self.tok_text()
        );
        self.error(self.tok.span(), msg);
        Stop
    }

    /// Skips to the next module-level directive outside braces. Always consumes at least one token when the
    /// failed item started at the current token, so the module loop makes progress.
    fn recover_module(&mut self, item_start: u32) {
        if self.tok.start == item_start && !self.at(TokenKind::Eof) {
            self.bump();
        }
        let mut depth = 0u64;
        loop {
            match self.tok.kind {
                TokenKind::Eof => return,
                TokenKind::Directive if depth == 0 && starts_module_item(self.tok_text()) => return,
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.bump();
        }
    }

    fn module_item(&mut self, m: &mut Module<'a>) -> PResult<()> {
        let start = self.tok.start;
        match self.tok_text() {
            ".version" => {
                self.bump();
                m.version = Some(self.version()?);
            }
            ".target" => {
                self.bump();
                loop {
                    let t = self.expect(TokenKind::Ident, "a target name such as `sm_80`")?;
                    m.target.push(self.text(t));
                    if self.eat(TokenKind::Comma).is_none() {
                        break;
                    }
                }
            }
            ".address_size" => {
                self.bump();
                m.address_size = Some(self.expect_u32("an address size (32 or 64)")?);
            }
            ".file" => {
                self.bump();
                let index = self.expect_u32("a file index after `.file`")?;
                let path = self.expect(TokenKind::Str, "a file name string after the file index")?;
                let mut timestamp = None;
                let mut size = None;
                if self.eat(TokenKind::Comma).is_some() {
                    timestamp = Some(self.expect_u64("a timestamp after `,`")?.0);
                    if self.eat(TokenKind::Comma).is_some() {
                        size = Some(self.expect_u64("a file size after `,`")?.0);
                    }
                }
                let path = string_body(self.text(path));
                m.items.push(Item::File(FileDecl { index, path, timestamp, size, span: self.span_from(start) }));
            }
            ".section" => {
                self.bump();
                let section = self.section(start)?;
                m.items.push(Item::Section(section));
            }
            ".pragma" => {
                self.bump();
                let s = self.expect(TokenKind::Str, "a string after `.pragma`")?;
                self.expect(TokenKind::Semi, "`;` after `.pragma` string")?;
                m.items.push(Item::Pragma(string_body(self.text(s)), self.span_from(start)));
            }
            ".alias" => {
                self.bump();
                let a = self.expect(TokenKind::Ident, "an alias name after `.alias`")?;
                self.expect(TokenKind::Comma, "`,` between alias and aliasee")?;
                let b = self.expect(TokenKind::Ident, "the aliased function name")?;
                self.expect(TokenKind::Semi, "`;` after `.alias`")?;
                let (alias, aliasee) = (self.text(a), self.text(b));
                m.items.push(Item::Alias { alias, aliasee, span: self.span_from(start) });
            }
            text => {
                let linkage = match linkage_of(text) {
                    Some(l) => {
                        self.bump();
                        l
                    }
                    None => Linkage::Internal,
                };
                match self.tok_text() {
                    ".entry" | ".func" if self.at(TokenKind::Directive) => {
                        let f = self.function(linkage, start)?;
                        m.items.push(Item::Function(f));
                    }
                    t if self.at(TokenKind::Directive) && decl_space(t).is_some() => {
                        let v = self.var_decl(linkage, start)?;
                        m.items.push(Item::Variable(v));
                    }
                    t if self.at(TokenKind::Directive) && linkage == Linkage::Internal => {
                        let msg = format!("unknown directive `{}` at module scope", crate::lexer::clip(t));
                        self.error(self.tok.span(), msg);
                        return Err(Stop);
                    }
                    _ => {
                        return Err(
                            self.unexpected("`.entry`, `.func` or a state space such as `.global` after the linkage")
                        )
                    }
                }
            }
        }
        Ok(())
    }

    /// `MAJOR.MINOR` after `.version`; lexed as a float token, so it is split from the text.
    fn version(&mut self) -> PResult<(u32, u32)> {
        let t = self.tok;
        let text = self.tok_text();
        let parsed = match t.kind {
            TokenKind::Float | TokenKind::Int => {
                let (maj, min) = text.split_once('.').unwrap_or((text, "0"));
                let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
                if digits(maj) && digits(min) {
                    maj.parse::<u32>().ok().zip(min.parse::<u32>().ok())
                } else {
                    None
                }
            }
            _ => None,
        };
        match parsed {
            Some(v) => {
                self.bump();
                Ok(v)
            }
            None => Err(self.unexpected("a version number such as `8.5` after `.version`")),
        }
    }

    /// `.section NAME { entries }`; `.section` is consumed.
    fn section(&mut self, start: u32) -> PResult<Section<'a>> {
        let name = match self.tok.kind {
            TokenKind::Directive | TokenKind::Ident => self.bump_text(),
            _ => return Err(self.unexpected("a section name such as `.debug_info` after `.section`")),
        };
        let open = self.expect(TokenKind::LBrace, "`{` after the section name")?;
        // Sections hold one entry per line, often tens of thousands: size the vector once.
        let rest = self.src.get(open.end as usize..).unwrap_or("");
        let body_len = rest.find('}').unwrap_or(rest.len());
        let lines = rest.as_bytes().get(..body_len).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
        let mut entries = Vec::with_capacity(if self.options.section_entries { lines } else { 0 });
        loop {
            match self.tok.kind {
                TokenKind::RBrace => break,
                TokenKind::Semi => {
                    self.bump();
                }
                TokenKind::Ident if self.next.kind == TokenKind::Colon => {
                    let l = self.bump();
                    self.bump();
                    if self.options.section_entries {
                        entries.push(SectionEntry::Label(self.text(l), l.span()));
                    }
                }
                TokenKind::Directive => {
                    if self.section_line_fast(&mut entries) {
                        continue;
                    }
                    let t = self.tok;
                    let ty = match self.tok_text() {
                        ".b8" => ScalarType::B8,
                        ".b16" => ScalarType::B16,
                        ".b32" => ScalarType::B32,
                        ".b64" => ScalarType::B64,
                        text => match text.strip_prefix('.').and_then(lookup::scalar_type) {
                            Some(ty) => ty,
                            None => return Err(self.section_error()),
                        },
                    };
                    self.bump();
                    let mut values = SmallVec::new();
                    values.push(self.expr()?);
                    if self.at(TokenKind::Comma) {
                        // Byte strings are long comma lists on one line: size the list once. The count stops
                        // at the end of the line or the next directive, so each byte is counted at most once.
                        let rest = self.src.as_bytes().get(self.tok.start as usize..).unwrap_or(&[]);
                        let commas =
                            rest.iter().take_while(|&&b| b != b'\n' && b != b'.').filter(|&&b| b == b',').count();
                        values.reserve(commas);
                        while self.eat(TokenKind::Comma).is_some() {
                            values.push(self.expr()?);
                        }
                    }
                    if self.options.section_entries {
                        entries.push(SectionEntry::Data { ty, values, span: self.span_from(t.start) });
                    }
                }
                TokenKind::Eof if self.eof_reported => return Err(Stop),
                TokenKind::Eof => {
                    return Err(self
                        .unexpected(&format!("`}}` to close the section opened on line {}", self.line_of(open.start))))
                }
                _ => return Err(self.section_error()),
            }
        }
        let close = self.bump();
        let body = self.src.get(open.end as usize..close.start as usize).unwrap_or("");
        Ok(Section { name, entries, body, span: self.span_from(start) })
    }

    /// Parses a `.bN v, v, ...` section line of plain decimal values (optionally followed by a `//` comment)
    /// straight from the bytes, without the lexer: DWARF sections are mostly such lines. Returns `false`,
    /// consuming nothing, for a line of any other shape (symbols, other literals, a list continued on the next
    /// line, ...), which then goes through the general token-based path; when it accepts a line, that path
    /// would have produced the same entry.
    fn section_line_fast(&mut self, entries: &mut Vec<SectionEntry<'a>>) -> bool {
        let ty = match self.tok_text() {
            ".b8" => ScalarType::B8,
            ".b16" => ScalarType::B16,
            ".b32" => ScalarType::B32,
            ".b64" => ScalarType::B64,
            _ => return false,
        };
        if !self.fast_paths {
            return false;
        }
        // The entry is built in place in `entries` (entries are large; moving them costs), and removed again
        // if the line turns out not to have the simple shape.
        let span = Span { start: self.tok.start, end: self.tok.end };
        entries.push(SectionEntry::Data { ty, values: SmallVec::new(), span });
        let accepted = match entries.last_mut() {
            Some(SectionEntry::Data { values, span, .. }) => self.section_values_fast(values, span),
            _ => false,
        };
        if !accepted || !self.options.section_entries {
            entries.pop();
        }
        accepted
    }

    /// The values of [`Parser::section_line_fast`], pushed onto `values`; on success `span` is extended to the
    /// last value and the lexer resumes after the line.
    fn section_values_fast(&mut self, values: &mut SmallVec<[Expr<'a>; 4]>, span: &mut Span) -> bool {
        let bytes = self.src.as_bytes();
        let mut pos = self.tok.end as usize;
        loop {
            while matches!(bytes.get(pos), Some(b' ' | b'\t')) {
                pos += 1;
            }
            let start = pos;
            let mut value: u64 = 0;
            while let Some(&c) = bytes.get(pos) {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                value = value * 10 + u64::from(d);
                pos += 1;
                if pos - start > 18 {
                    return false;
                }
            }
            let digits = pos - start;
            // No digits, or an octal literal (`017`): not this shape.
            if digits == 0 || (digits > 1 && bytes.get(start) == Some(&b'0')) {
                return false;
            }
            values.push(Expr::Imm(Immediate::Int { value: value as i64, unsigned: false }, Span::new(start, pos)));
            let end = pos;
            while matches!(bytes.get(pos), Some(b' ' | b'\t' | b'\r')) {
                pos += 1;
            }
            if bytes.get(pos) == Some(&b'/') && bytes.get(pos + 1) == Some(&b'/') {
                match bytes.get(pos..).and_then(|r| r.iter().position(|&b| b == b'\n')) {
                    Some(i) => pos += i,
                    None => return false,
                }
            }
            match bytes.get(pos) {
                Some(b',') => pos += 1,
                Some(b'\n') => {
                    // The entry ends here only if what follows cannot continue the expression list.
                    let next = bytes.get(pos..).and_then(|r| r.iter().find(|b| !b.is_ascii_whitespace()));
                    match next {
                        Some(c) if c.is_ascii_alphabetic() || matches!(c, b'.' | b'$' | b'_' | b'}') => {}
                        _ => return false,
                    }
                    span.end = end as u32;
                    self.resume_at(pos, end as u32);
                    return true;
                }
                _ => return false,
            }
        }
    }

    fn section_error(&mut self) -> Stop {
        let stop = self.unexpected("section data (`.b8`, `.b16`, `.b32` or `.b64` values) or a label");
        // Skip the rest of the section so its contents are not taken for module items.
        let mut depth = 1u64;
        loop {
            match self.tok.kind {
                TokenKind::Eof => break,
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        break;
                    }
                }
                _ => {}
            }
            self.bump();
        }
        stop
    }

    /// A variable declaration starting at the state space (linkage already consumed); consumes the `;`.
    pub(super) fn var_decl(&mut self, linkage: Linkage, start: u32) -> PResult<VarDecl<'a>> {
        let space = match decl_space(self.tok_text()) {
            Some(s) if self.at(TokenKind::Directive) => s,
            _ => return Err(self.unexpected("a state space such as `.reg`, `.global` or `.shared`")),
        };
        self.bump();
        let mut align = None;
        let mut vector = None;
        let mut attributes = Vec::new();
        let ty = loop {
            if !self.at(TokenKind::Directive) {
                return Err(self.unexpected("a type such as `.b32` in the declaration"));
            }
            match self.tok_text() {
                ".align" => {
                    self.bump();
                    align = Some(self.expect_u32("an alignment after `.align`")?);
                }
                ".v2" | ".v4" | ".v8" => {
                    vector = self.tok_text().get(2..).and_then(|n| n.parse().ok());
                    self.bump();
                }
                ".attribute" => {
                    self.bump();
                    attributes.push(self.attribute()?);
                }
                text => match text.strip_prefix('.').and_then(lookup::scalar_type) {
                    Some(ty) => {
                        self.bump();
                        break ty;
                    }
                    None => {
                        let msg = format!("unknown type `{}` in the declaration", crate::lexer::clip(text));
                        self.error(self.tok.span(), msg);
                        return Err(Stop);
                    }
                },
            }
        };
        let mut declarators = SmallVec::new();
        loop {
            declarators.push(self.declarator()?);
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        self.expect(TokenKind::Semi, "`;` or `,` after the declarator")?;
        Ok(VarDecl { linkage, space, align, vector, ty, attributes, declarators, span: self.span_from(start) })
    }

    /// `( ... )` after `.attribute`: the text between the parentheses, as written.
    fn attribute(&mut self) -> PResult<&'a str> {
        let open = self.expect(TokenKind::LParen, "`(` after `.attribute`")?;
        let mut depth = 1u32;
        loop {
            match self.tok.kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                TokenKind::Eof | TokenKind::Semi | TokenKind::LBrace | TokenKind::RBrace => {
                    return Err(self.unexpected("`)` to close `.attribute(`"))
                }
                _ => {}
            }
            self.bump();
        }
        let close = self.bump();
        Ok(self.src.get(open.end as usize..close.start as usize).unwrap_or("").trim())
    }

    fn declarator(&mut self) -> PResult<Declarator<'a>> {
        let name_tok = self.expect(TokenKind::Ident, "a variable name")?;
        let name = self.text(name_tok);
        let mut range = None;
        if self.eat(TokenKind::Lt).is_some() {
            range = Some(self.expect_u32("a register count after `<`")?);
            self.expect(TokenKind::Gt, "`>` after the register count")?;
        }
        let dims = self.dims()?;
        let init = if self.eat(TokenKind::Eq).is_some() { Some(self.initializer()?) } else { None };
        Ok(Declarator { name, range, dims, init, span: self.span_from(name_tok.start) })
    }

    /// Array dimensions: `[N]` (a constant expression) or `[]`.
    pub(super) fn dims(&mut self) -> PResult<SmallVec<[Option<u64>; 1]>> {
        let mut dims = SmallVec::new();
        while self.eat(TokenKind::LBracket).is_some() {
            if self.eat(TokenKind::RBracket).is_some() {
                dims.push(None);
                continue;
            }
            let start = self.tok.start;
            let (n, unsigned) = self.int_expr(0, "an array size")?;
            if n < 0 && !unsigned {
                self.error(self.span_from(start), format!("array size {n} is negative"));
                return Err(Stop);
            }
            self.expect(TokenKind::RBracket, "`]` after the array size")?;
            dims.push(Some(n as u64));
        }
        Ok(dims)
    }

    /// `.entry` / `.func` through the body or the `;` of a declaration. After an error in the header, the body
    /// (if one follows) is still parsed for its own errors.
    fn function(&mut self, linkage: Linkage, start: u32) -> PResult<Function<'a>> {
        let result = self.function_inner(linkage, start);
        if result.is_err() {
            loop {
                match self.tok.kind {
                    TokenKind::Eof | TokenKind::RBrace => break,
                    TokenKind::Semi => {
                        self.bump();
                        break;
                    }
                    TokenKind::LBrace => {
                        let open = self.bump();
                        drop(self.block_body(1, open));
                        break;
                    }
                    TokenKind::Directive if starts_module_item(self.tok_text()) => break,
                    _ => {
                        self.bump();
                    }
                }
            }
        }
        result
    }

    fn function_inner(&mut self, linkage: Linkage, start: u32) -> PResult<Function<'a>> {
        let keyword = self.bump();
        let kind = if self.text(keyword) == ".entry" { FunctionKind::Entry } else { FunctionKind::Func };
        let mut returns = Vec::new();
        if kind == FunctionKind::Func && self.at(TokenKind::LParen) {
            returns = self.param_list()?;
        }
        let name_tok = self.expect(TokenKind::Ident, "a function name")?;
        let params = if self.at(TokenKind::LParen) { self.param_list()? } else { Vec::new() };
        let mut directives = Vec::new();
        while self.at(TokenKind::Directive) {
            match self.function_directive()? {
                Some(d) => directives.push(d),
                None => break,
            }
        }
        let body = match self.tok.kind {
            TokenKind::Semi => {
                self.bump();
                None
            }
            TokenKind::LBrace => {
                let open = self.bump();
                Some(self.block_body(1, open))
            }
            _ => return Err(self.unexpected("`{` to start the function body, or `;` after a declaration")),
        };
        Ok(Function {
            linkage,
            kind,
            returns,
            name: self.text(name_tok),
            name_span: name_tok.span(),
            params,
            directives,
            body,
            span: self.span_from(start),
        })
    }
}

/// The span of an expression.
pub(super) fn expr_span(e: &Expr<'_>) -> Span {
    match e {
        Expr::Imm(_, s)
        | Expr::Symbol(_, s)
        | Expr::Generic(_, s)
        | Expr::Unary(_, _, s)
        | Expr::Binary(_, _, _, s) => *s,
    }
}
