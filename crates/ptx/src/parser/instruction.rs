//! One instruction: `[@[!]pred] opcode{.modifier} operand, ...;`, and its operands.

use smallvec::SmallVec;

use super::{PResult, Parser, Stop};
use crate::ast::*;
use crate::lexer::{clip, TokenKind};
use crate::lookup;

/// Operands nest only a little (`[tex, {x, y}]`); anything deeper is an error, not recursion.
const MAX_OPERAND_DEPTH: u32 = 4;

impl<'a> Parser<'a> {
    /// Parses an instruction through its `;` and appends it to `out` (built in place: instructions are large).
    /// Returns `Ok` without appending when the instruction was malformed but the parser is already positioned
    /// at the start of the next statement (a missing `;` at the end of a line), so no resynchronization is
    /// needed.
    pub(super) fn instruction(&mut self, out: &mut Vec<Statement<'a>>) -> PResult<()> {
        let start = self.tok.start;
        let guard = if self.at(TokenKind::At) {
            self.bump();
            let negated = self.eat(TokenKind::Bang).is_some();
            let reg = self.expect(TokenKind::Ident, "a predicate register after `@`")?;
            Some(Guard { negated, reg: self.text(reg), span: self.span_from(start) })
        } else {
            None
        };
        if !self.at(TokenKind::Ident) {
            return Err(self.unexpected("an opcode after the guard predicate"));
        }
        let op_tok = self.bump();
        let op_text = self.text(op_tok);
        let Some(opcode) = lookup::opcode(op_text) else {
            self.error(op_tok.span(), format!("unknown opcode `{}`", clip(op_text)));
            return Err(Stop);
        };
        let mut modifiers = SmallVec::new();
        let mut bad = false;
        // Modifiers are written attached to the opcode; a directive on a later line starts a new statement
        // (after a forgotten `;`), so it is not taken as a modifier.
        while self.at(TokenKind::Directive) && !self.newline_before_tok() {
            let t = self.bump();
            let text = self.text(t);
            match text.strip_prefix('.').and_then(lookup::modifier) {
                Some(m) => modifiers.push(m),
                None => {
                    self.error(t.span(), format!("unknown modifier `{}` on `{op_text}`", clip(text)));
                    bad = true;
                }
            }
        }
        let mut operands = SmallVec::new();
        if self.eat(TokenKind::Semi).is_none() {
            if self.at_statement_start() {
                self.unexpected("`;` after the instruction");
                return Ok(());
            }
            loop {
                operands.push(self.operand(0)?);
                match self.tok.kind {
                    TokenKind::Comma => {
                        self.bump();
                    }
                    TokenKind::Semi => {
                        self.bump();
                        break;
                    }
                    _ => return self.missing_semicolon(),
                }
            }
        }
        if !bad {
            let span = self.span_from(start);
            out.push(Statement::Instruction(Instruction { guard, opcode, modifiers, operands, span }));
        }
        Ok(())
    }

    /// Reports a missing `;` or `,` after an operand. When the unexpected token looks like the start of the
    /// next statement, the `;` was most likely forgotten: say so and resume parsing at that token.
    fn missing_semicolon(&mut self) -> PResult<()> {
        if self.at_statement_start() {
            self.unexpected("`;` after the instruction");
            Ok(())
        } else {
            Err(self.unexpected("`,` or `;` after the operand"))
        }
    }

    /// Whether the current token ends the instruction being parsed without a `;`: end of file, a `}`, or,
    /// on a new line, something that starts a statement (a directive, a guard, a label or an opcode).
    fn at_statement_start(&self) -> bool {
        match self.tok.kind {
            TokenKind::Eof | TokenKind::RBrace => true,
            TokenKind::Directive | TokenKind::At => self.newline_before_tok(),
            TokenKind::Ident => {
                self.newline_before_tok()
                    && (self.next.kind == TokenKind::Colon
                        || (matches!(self.next.kind, TokenKind::Directive | TokenKind::Semi)
                            && lookup::opcode(self.tok_text()).is_some()))
            }
            _ => false,
        }
    }

    pub(super) fn operand(&mut self, depth: u32) -> PResult<Operand<'a>> {
        let start = self.tok.start;
        match self.tok.kind {
            TokenKind::Ident => {
                let t = self.bump();
                let name = self.text(t);
                if self.at(TokenKind::Pipe) {
                    self.bump();
                    let second = self.expect(TokenKind::Ident, "a second destination after `|`")?;
                    return Ok(Operand::Pair(name, self.text(second), self.span_from(start)));
                }
                if name == "_" {
                    return Ok(Operand::Sink(t.span()));
                }
                let mut component = None;
                if self.at(TokenKind::Directive) {
                    component =
                        match self.tok_text() {
                            ".x" | ".r" => Some(Component::X),
                            ".y" | ".g" => Some(Component::Y),
                            ".z" | ".b" => Some(Component::Z),
                            ".w" | ".a" => Some(Component::W),
                            ".b0" => Some(Component::B0),
                            ".b1" => Some(Component::B1),
                            ".b2" => Some(Component::B2),
                            ".b3" => Some(Component::B3),
                            ".h0" => Some(Component::H0),
                            ".h1" => Some(Component::H1),
                            t => match crate::ast::Lanes::parse(&t[1..]) {
                                Some(l) => Some(Component::Lanes(l)),
                                None => return Err(self.unexpected(
                                    "a vector component (`.x`, `.y`, `.z` or `.w`), a selector (`.b0`..`.b3`, `.h0`, \
                                     `.h1`) or SIMD lanes (`.h10`, `.b3210`, ...) after the name",
                                )),
                            },
                        };
                    self.bump();
                }
                if component.is_none() && matches!(self.tok.kind, TokenKind::Plus | TokenKind::Minus) {
                    let offset = self.offset()?;
                    return Ok(Operand::SymbolOffset(name, offset, self.span_from(start)));
                }
                Ok(Operand::Name(name, component, self.span_from(start)))
            }
            // A negated register (`vmad d, -a, b, -c`), with a selector (`-%r.h1`).
            TokenKind::Minus if self.next.kind == TokenKind::Ident => {
                self.bump();
                match self.operand(depth)? {
                    Operand::Name(name, component, _) => Ok(Operand::Neg(name, component, self.span_from(start))),
                    _ => Err(self.unexpected("a register after `-`")),
                }
            }
            TokenKind::Bang if self.next.kind == TokenKind::Ident => {
                self.bump();
                let t = self.bump();
                Ok(Operand::Not(self.text(t), self.span_from(start)))
            }
            // A constant expression: a literal, `-1`, `(1 << 4) + 3`, `!0`, ...
            TokenKind::Minus | TokenKind::Int | TokenKind::Float | TokenKind::Tilde | TokenKind::Bang => {
                self.constant_operand()
            }
            TokenKind::LParen
                if matches!(
                    self.next.kind,
                    TokenKind::Int
                        | TokenKind::Float
                        | TokenKind::Minus
                        | TokenKind::Tilde
                        | TokenKind::Bang
                        | TokenKind::LParen
                ) =>
            {
                self.constant_operand()
            }
            TokenKind::LBrace => {
                if depth >= MAX_OPERAND_DEPTH {
                    return Err(self.unexpected("a simple operand (operands are nested too deeply)"));
                }
                self.bump();
                let items = self.operand_list(depth, TokenKind::RBrace, "`,` or `}` in the vector operand")?;
                if self.eat(TokenKind::Pipe).is_some() {
                    let p = self.expect(TokenKind::Ident, "a predicate destination after `|`")?;
                    return Ok(Operand::VectorPair(items, self.text(p), self.span_from(start)));
                }
                Ok(Operand::Vector(items, self.span_from(start)))
            }
            TokenKind::LParen => {
                if depth >= MAX_OPERAND_DEPTH {
                    return Err(self.unexpected("a simple operand (operands are nested too deeply)"));
                }
                self.bump();
                let items = self.operand_list(depth, TokenKind::RParen, "`,` or `)` in the operand list")?;
                Ok(Operand::List(items, self.span_from(start)))
            }
            TokenKind::LBracket => {
                if depth >= MAX_OPERAND_DEPTH {
                    return Err(self.unexpected("a simple operand (operands are nested too deeply)"));
                }
                self.bracket(depth)
            }
            _ => Err(self.unexpected("an operand")),
        }
    }

    /// An immediate operand: a constant expression folded to its value. A lone literal keeps its spelling
    /// (`0f3F800000` stays a bit pattern).
    fn constant_operand(&mut self) -> PResult<Operand<'a>> {
        if matches!(self.tok.kind, TokenKind::Int | TokenKind::Float) && super::expr::ends_expression(self.next.kind) {
            let t = self.bump();
            return Ok(Operand::Imm(super::expr::decode_literal(t.kind, self.text(t)).0, t.span()));
        }
        let p = self.parsed_expr(0)?;
        match p.expr {
            Expr::Imm(imm, span) => Ok(Operand::Imm(imm, span)),
            other => {
                self.error(super::module::expr_span(&other), "expected a constant expression as the operand");
                Err(Stop)
            }
        }
    }

    /// Operands separated by commas up to `close` (consumed); the opening token is consumed. May be empty.
    fn operand_list(&mut self, depth: u32, close: TokenKind, what: &str) -> PResult<Vec<Operand<'a>>> {
        let mut items = Vec::new();
        if self.eat(close).is_some() {
            return Ok(items);
        }
        loop {
            items.push(self.operand(depth + 1)?);
            if self.eat(TokenKind::Comma).is_some() {
                continue;
            }
            self.expect(close, what)?;
            return Ok(items);
        }
    }

    /// `[reg]`, `[reg+off]`, `[sym+off]`, `[imm]`, or a bracketed list `[tex, {x, y}]`.
    fn bracket(&mut self, depth: u32) -> PResult<Operand<'a>> {
        let start = self.bump().start;
        let base = match self.tok.kind {
            TokenKind::Ident
                if !matches!(self.next.kind, TokenKind::Comma | TokenKind::Pipe | TokenKind::Directive) =>
            {
                let name = self.bump_text();
                if name.starts_with('%') {
                    AddressBase::Reg(name)
                } else {
                    AddressBase::Symbol(name)
                }
            }
            TokenKind::Int | TokenKind::Minus | TokenKind::LParen | TokenKind::Tilde
                if self.next.kind != TokenKind::Comma =>
            {
                AddressBase::Absolute(self.int_expr(0, "an absolute address")?.0)
            }
            _ => {
                let mut items = Vec::new();
                loop {
                    items.push(self.operand(depth + 1)?);
                    if self.eat(TokenKind::Comma).is_none() {
                        break;
                    }
                }
                self.expect(TokenKind::RBracket, "`,` or `]` in the bracketed operand list")?;
                return Ok(Operand::Bracket(items, self.span_from(start)));
            }
        };
        let offset = if matches!(self.tok.kind, TokenKind::Plus | TokenKind::Minus) { self.offset()? } else { 0 };
        self.expect(TokenKind::RBracket, "`]` to close the address (or `+offset`)")?;
        Ok(Operand::Address(Address { base, offset, span: self.span_from(start) }))
    }

    /// One or more `+N` / `-N` terms after an address base or symbol, summed (wrapping, as addresses do).
    /// Each term is a constant expression tighter than `+`, so `[%r+-4+104]` and `[%r+4*8]` work.
    fn offset(&mut self) -> PResult<i64> {
        let mut total: i64 = 0;
        while matches!(self.tok.kind, TokenKind::Plus | TokenKind::Minus) {
            let negative = self.bump().kind == TokenKind::Minus;
            let (value, _) = self.int_expr(super::expr::ADDITIVE + 1, "an offset")?;
            total = total.wrapping_add(if negative { value.wrapping_neg() } else { value });
        }
        Ok(total)
    }
}

/// `-imm`: two's complement for integers, the sign bit flipped for floats.
pub(super) fn negate(imm: Immediate) -> Immediate {
    match imm {
        Immediate::Int { value, unsigned } => Immediate::Int { value: value.wrapping_neg(), unsigned },
        Immediate::F32Bits(b) => Immediate::F32Bits(b ^ 0x8000_0000),
        Immediate::F64Bits(b) => Immediate::F64Bits(b ^ (1 << 63)),
        Immediate::Float(v) => Immediate::Float(-v),
    }
}
