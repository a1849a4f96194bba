//! Constant expressions (initializers, section data, array sizes, immediate operands, address offsets) and
//! initializers.
//!
//! The grammar is C's: `?:` (right associative), `||`, `&&`, `|`, `^`, `&`, `==` `!=`, `<` `<=` `>` `>=`,
//! `<<` `>>`, `+` `-`, `*` `/` `%`, then unary `-` `~` `!`, loosest first; binary operators associate to the
//! left. Every subexpression without symbols is folded while parsing (see [`Value`]), so the AST keeps
//! operator nodes only above symbols; the operators the AST cannot hold (comparisons, logical and
//! conditional) must fold. A `-` directly before a literal negates the literal itself, keeping its spelling
//! (`-0f3F800000` is the bit pattern `0fBF800000`).

use super::instruction::negate;
use super::module::expr_span;
use super::{PResult, Parser, Stop, MAX_DEPTH};
use crate::ast::*;
use crate::lexer::{decode_float, decode_int, FloatLit, TokenKind};

/// A folded constant: a 64-bit integer that is unsigned if any unsigned value went into it (a literal with
/// a `U` suffix or too large for `.s64`), or an `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value {
    Int(i64, bool),
    Float(f64),
}

impl Value {
    fn to_imm(self) -> Immediate {
        match self {
            Value::Int(value, unsigned) => Immediate::Int { value, unsigned },
            Value::Float(v) => Immediate::Float(v),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Value::Int(v, true) => v as u64 as f64,
            Value::Int(v, false) => v as f64,
            Value::Float(f) => f,
        }
    }

    fn truth(self) -> bool {
        match self {
            Value::Int(v, _) => v != 0,
            Value::Float(f) => f != 0.0,
        }
    }
}

fn bool_value(b: bool) -> Value {
    Value::Int(i64::from(b), false)
}

/// A binary operator of the constant-expression grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Ast(BinaryOp),
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
}

/// Whether a token after a complete operand ends the expression (it is no operator that could continue it).
pub(super) fn ends_expression(kind: TokenKind) -> bool {
    binary_op(kind).is_none() && kind != TokenKind::Question
}

/// Precedence of the conditional operator; binary operators bind tighter.
const TERNARY: u8 = 1;
/// Precedence of `+` and `-` (address offsets parse terms one level tighter).
pub(super) const ADDITIVE: u8 = 10;

fn binary_op(kind: TokenKind) -> Option<(Op, u8)> {
    Some(match kind {
        TokenKind::OrOr => (Op::LogicalOr, 2),
        TokenKind::AndAnd => (Op::LogicalAnd, 3),
        TokenKind::Pipe => (Op::Ast(BinaryOp::Or), 4),
        TokenKind::Caret => (Op::Ast(BinaryOp::Xor), 5),
        TokenKind::Amp => (Op::Ast(BinaryOp::And), 6),
        TokenKind::EqEq => (Op::Eq, 7),
        TokenKind::NotEq => (Op::Ne, 7),
        TokenKind::Lt => (Op::Lt, 8),
        TokenKind::Le => (Op::Le, 8),
        TokenKind::Gt => (Op::Gt, 8),
        TokenKind::Ge => (Op::Ge, 8),
        TokenKind::Shl => (Op::Ast(BinaryOp::Shl), 9),
        TokenKind::Shr => (Op::Ast(BinaryOp::Shr), 9),
        TokenKind::Plus => (Op::Ast(BinaryOp::Add), ADDITIVE),
        TokenKind::Minus => (Op::Ast(BinaryOp::Sub), ADDITIVE),
        TokenKind::Star => (Op::Ast(BinaryOp::Mul), 11),
        TokenKind::Slash => (Op::Ast(BinaryOp::Div), 11),
        TokenKind::Percent => (Op::Ast(BinaryOp::Rem), 11),
        _ => return None,
    })
}

/// The precedence of an AST binary operator (higher binds tighter); the printer places parentheses by it.
pub(crate) fn precedence(op: BinaryOp) -> u8 {
    match binary_op(match op {
        BinaryOp::Or => TokenKind::Pipe,
        BinaryOp::Xor => TokenKind::Caret,
        BinaryOp::And => TokenKind::Amp,
        BinaryOp::Shl => TokenKind::Shl,
        BinaryOp::Shr => TokenKind::Shr,
        BinaryOp::Add => TokenKind::Plus,
        BinaryOp::Sub => TokenKind::Minus,
        BinaryOp::Mul => TokenKind::Star,
        BinaryOp::Div => TokenKind::Slash,
        BinaryOp::Rem => TokenKind::Percent,
    }) {
        Some((_, p)) => p,
        None => 0,
    }
}

fn op_text(op: Op) -> &'static str {
    match op {
        Op::Ast(BinaryOp::Add) => "+",
        Op::Ast(BinaryOp::Sub) => "-",
        Op::Ast(BinaryOp::Mul) => "*",
        Op::Ast(BinaryOp::Div) => "/",
        Op::Ast(BinaryOp::Rem) => "%",
        Op::Ast(BinaryOp::Shl) => "<<",
        Op::Ast(BinaryOp::Shr) => ">>",
        Op::Ast(BinaryOp::And) => "&",
        Op::Ast(BinaryOp::Or) => "|",
        Op::Ast(BinaryOp::Xor) => "^",
        Op::Eq => "==",
        Op::Ne => "!=",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Ge => ">=",
        Op::LogicalAnd => "&&",
        Op::LogicalOr => "||",
    }
}

/// Folds `a op b`. Integer arithmetic wraps at 64 bits (two's complement, as the hardware computes);
/// division by zero, shifts by 64 or more and bit operations on floats are errors.
fn fold_binary(op: Op, a: Value, b: Value) -> Result<Value, String> {
    use std::cmp::Ordering;
    let ord = |a: Value, b: Value| -> Option<Ordering> {
        match (a, b) {
            (Value::Int(x, ux), Value::Int(y, uy)) if ux || uy => Some((x as u64).cmp(&(y as u64))),
            (Value::Int(x, _), Value::Int(y, _)) => Some(x.cmp(&y)),
            _ => a.as_f64().partial_cmp(&b.as_f64()),
        }
    };
    match op {
        Op::Eq => return Ok(bool_value(ord(a, b) == Some(Ordering::Equal))),
        Op::Ne => return Ok(bool_value(ord(a, b) != Some(Ordering::Equal))),
        Op::Lt => return Ok(bool_value(ord(a, b) == Some(Ordering::Less))),
        Op::Le => return Ok(bool_value(matches!(ord(a, b), Some(Ordering::Less | Ordering::Equal)))),
        Op::Gt => return Ok(bool_value(ord(a, b) == Some(Ordering::Greater))),
        Op::Ge => return Ok(bool_value(matches!(ord(a, b), Some(Ordering::Greater | Ordering::Equal)))),
        Op::LogicalAnd => return Ok(bool_value(a.truth() && b.truth())),
        Op::LogicalOr => return Ok(bool_value(a.truth() || b.truth())),
        Op::Ast(_) => {}
    }
    let Op::Ast(op) = op else {
        return Err("internal: unhandled operator".to_string());
    };
    match (a, b) {
        (Value::Int(x, ux), Value::Int(y, uy)) => {
            let unsigned = ux || uy;
            let v = match op {
                BinaryOp::Add => x.wrapping_add(y),
                BinaryOp::Sub => x.wrapping_sub(y),
                BinaryOp::Mul => x.wrapping_mul(y),
                BinaryOp::Div | BinaryOp::Rem if y == 0 => return Err("division by zero".to_string()),
                BinaryOp::Div if unsigned => ((x as u64) / (y as u64)) as i64,
                BinaryOp::Rem if unsigned => ((x as u64) % (y as u64)) as i64,
                BinaryOp::Div => x.wrapping_div(y),
                BinaryOp::Rem => x.wrapping_rem(y),
                BinaryOp::Shl | BinaryOp::Shr if !(0..64).contains(&y) => {
                    return Err(format!("shift amount {y} is out of range (0 to 63)"))
                }
                // The result of a shift has the type of its left operand, as in C.
                BinaryOp::Shl => return Ok(Value::Int(x << y, ux)),
                BinaryOp::Shr if ux => return Ok(Value::Int(((x as u64) >> y) as i64, ux)),
                BinaryOp::Shr => return Ok(Value::Int(x >> y, ux)),
                BinaryOp::And => x & y,
                BinaryOp::Or => x | y,
                BinaryOp::Xor => x ^ y,
            };
            Ok(Value::Int(v, unsigned))
        }
        _ => {
            let (x, y) = (a.as_f64(), b.as_f64());
            Ok(Value::Float(match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
                _ => return Err(format!("`{}` needs integer operands", op_text(Op::Ast(op)))),
            }))
        }
    }
}

fn fold_unary(op: UnaryOp, a: Value) -> Result<Value, String> {
    Ok(match (op, a) {
        (UnaryOp::Neg, Value::Int(v, u)) => Value::Int(v.wrapping_neg(), u),
        (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
        (UnaryOp::Not, Value::Int(v, u)) => Value::Int(!v, u),
        (UnaryOp::Not, Value::Float(_)) => return Err("`~` needs an integer operand".to_string()),
        (UnaryOp::LogicalNot, v) => bool_value(!v.truth()),
    })
}

/// Decodes a literal token once: its AST immediate (keeping its spelling: the `U` suffix, float bit patterns)
/// and its value typed as PTX types literals (unsigned with a `U` suffix or when too large for `.s64`).
/// A malformed literal, already reported by the lexer, becomes 0.
pub(super) fn decode_literal(kind: TokenKind, text: &str) -> (Immediate, Value) {
    if kind == TokenKind::Int && text.len() <= 18 && !text.starts_with('0') {
        // Plain decimals (most literals) in one pass; anything else takes the general path below.
        let mut v: i64 = 0;
        let mut plain = true;
        for b in text.bytes() {
            let d = b.wrapping_sub(b'0');
            plain &= d <= 9;
            v = v.wrapping_mul(10).wrapping_add(i64::from(d));
        }
        if plain {
            return (Immediate::Int { value: v, unsigned: false }, Value::Int(v, false));
        }
    }
    if kind == TokenKind::Int {
        let (v, suffix) = decode_int(text).unwrap_or((0, false));
        return (
            Immediate::Int { value: v as i64, unsigned: suffix },
            Value::Int(v as i64, suffix || v > i64::MAX as u64),
        );
    }
    match decode_float(text) {
        Ok(FloatLit::F32Bits(b)) => (Immediate::F32Bits(b), Value::Float(f64::from(f32::from_bits(b)))),
        Ok(FloatLit::F64Bits(b)) => (Immediate::F64Bits(b), Value::Float(f64::from_bits(b))),
        Ok(FloatLit::Decimal(v)) => (Immediate::Float(v), Value::Float(v)),
        Err(_) => (Immediate::Int { value: 0, unsigned: false }, Value::Int(0, false)),
    }
}

/// One parsed (sub)expression: the tree, its height (bounding later recursion over it), and its value if it
/// is constant.
pub(super) struct Parsed<'a> {
    pub expr: Expr<'a>,
    height: u32,
    pub value: Option<Value>,
}

impl<'a> Parsed<'a> {
    fn constant(value: Value, span: Span) -> Parsed<'a> {
        Parsed { expr: Expr::Imm(value.to_imm(), span), height: 1, value: Some(value) }
    }
}

impl<'a> Parser<'a> {
    /// A constant expression.
    pub(super) fn expr(&mut self) -> PResult<Expr<'a>> {
        // Fast path for the common lone literal (section data, initializer lists).
        if matches!(self.tok.kind, TokenKind::Int | TokenKind::Float) && ends_expression(self.next.kind) {
            let t = self.bump();
            return Ok(Expr::Imm(decode_literal(t.kind, self.text(t)).0, t.span()));
        }
        self.expr_bp(0, 0).map(|p| p.expr)
    }

    /// A constant expression with its folded value, if constant.
    pub(super) fn parsed_expr(&mut self, min_prec: u8) -> PResult<Parsed<'a>> {
        self.expr_bp(min_prec, 0)
    }

    /// An expression that must fold to an integer (address offsets, absolute addresses, array sizes).
    pub(super) fn int_expr(&mut self, min_prec: u8, what: &str) -> PResult<(i64, bool)> {
        let p = self.parsed_expr(min_prec)?;
        match p.value {
            Some(Value::Int(v, u)) => Ok((v, u)),
            _ => {
                self.error(expr_span(&p.expr), format!("expected {what}: an integer constant expression"));
                Err(Stop)
            }
        }
    }

    fn too_deep(&mut self, span: Span) -> Stop {
        self.error(span, format!("expression is nested too deeply (the limit is {MAX_DEPTH} levels)"));
        Stop
    }

    /// Precedence climbing. `nesting` counts enclosing parentheses, unary operators and conditionals
    /// (bounding recursion); the tree height is checked separately, because long operator chains over
    /// symbols (`a+a+...+a`) build deep trees without recursing here.
    fn expr_bp(&mut self, min_prec: u8, nesting: u32) -> PResult<Parsed<'a>> {
        let start = self.tok.start;
        let mut lhs = self.unary(nesting)?;
        loop {
            if self.at(TokenKind::Question) && min_prec <= TERNARY {
                if nesting + 1 >= MAX_DEPTH {
                    return Err(self.too_deep(self.tok.span()));
                }
                let q = self.bump();
                let then = self.expr_bp(0, nesting + 1)?;
                self.expect(TokenKind::Colon, "`:` in the conditional expression")?;
                let otherwise = self.expr_bp(TERNARY, nesting + 1)?;
                let Some(cond) = lhs.value else {
                    self.error(q.span(), "the condition of `?:` must be a constant");
                    return Err(Stop);
                };
                let chosen = if cond.truth() { then } else { otherwise };
                lhs = match chosen.value {
                    Some(v) => Parsed::constant(v, self.span_from(start)),
                    None => chosen,
                };
                continue;
            }
            let Some((op, prec)) = binary_op(self.tok.kind) else {
                break;
            };
            if prec < min_prec {
                break;
            }
            let op_tok = self.bump();
            let rhs = self.expr_bp(prec + 1, nesting)?;
            let span = self.span_from(start);
            lhs = match (lhs.value, rhs.value) {
                (Some(a), Some(b)) => match fold_binary(op, a, b) {
                    Ok(v) => Parsed::constant(v, span),
                    Err(msg) => {
                        self.error(op_tok.span(), format!("in constant expression: {msg}"));
                        return Err(Stop);
                    }
                },
                _ => {
                    let Op::Ast(ast_op) = op else {
                        let msg = format!("the operands of `{}` must be constants", op_text(op));
                        self.error(op_tok.span(), msg);
                        return Err(Stop);
                    };
                    let height = lhs.height.max(rhs.height) + 1;
                    if height > MAX_DEPTH {
                        return Err(self.too_deep(op_tok.span()));
                    }
                    Parsed {
                        expr: Expr::Binary(ast_op, Box::new(lhs.expr), Box::new(rhs.expr), span),
                        height,
                        value: None,
                    }
                }
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self, nesting: u32) -> PResult<Parsed<'a>> {
        if nesting >= MAX_DEPTH {
            return Err(self.too_deep(self.tok.span()));
        }
        let start = self.tok.start;
        let op = match self.tok.kind {
            TokenKind::Minus => UnaryOp::Neg,
            TokenKind::Tilde => UnaryOp::Not,
            TokenKind::Bang => UnaryOp::LogicalNot,
            TokenKind::LParen => {
                self.bump();
                let inner = self.expr_bp(0, nesting + 1)?;
                self.expect(TokenKind::RParen, "`)` to close the parenthesized expression")?;
                return Ok(inner);
            }
            TokenKind::Int | TokenKind::Float => {
                let t = self.bump();
                let (imm, value) = decode_literal(t.kind, self.text(t));
                return Ok(Parsed { expr: Expr::Imm(imm, t.span()), height: 1, value: Some(value) });
            }
            TokenKind::Ident => {
                let t = self.bump();
                let name = self.text(t);
                if name == "generic" && self.at(TokenKind::LParen) {
                    self.bump();
                    let sym = self.expect(TokenKind::Ident, "a variable name inside `generic(...)`")?;
                    self.expect(TokenKind::RParen, "`)` after the variable name in `generic(...)`")?;
                    let expr = Expr::Generic(self.text(sym), self.span_from(start));
                    return Ok(Parsed { expr, height: 1, value: None });
                }
                return Ok(Parsed { expr: Expr::Symbol(name, t.span()), height: 1, value: None });
            }
            // Section data refers to other sections by their dotted names (`.b32 .debug_abbrev`).
            TokenKind::Directive => {
                let t = self.bump();
                return Ok(Parsed { expr: Expr::Symbol(self.text(t), t.span()), height: 1, value: None });
            }
            _ => return Err(self.unexpected("an expression")),
        };
        self.bump();
        if op == UnaryOp::Neg && matches!(self.tok.kind, TokenKind::Int | TokenKind::Float) {
            // `-literal` stays one literal, keeping its spelling (a float bit pattern gets its sign flipped).
            let t = self.bump();
            let (imm, value) = decode_literal(t.kind, self.text(t));
            let value = fold_unary(UnaryOp::Neg, value).ok();
            return Ok(Parsed { expr: Expr::Imm(negate(imm), self.span_from(start)), height: 1, value });
        }
        let inner = self.unary(nesting + 1)?;
        let span = self.span_from(start);
        match inner.value {
            Some(v) => match fold_unary(op, v) {
                Ok(v) => Ok(Parsed::constant(v, span)),
                Err(msg) => {
                    self.error(span, format!("in constant expression: {msg}"));
                    Err(Stop)
                }
            },
            None => {
                Ok(Parsed { expr: Expr::Unary(op, Box::new(inner.expr), span), height: inner.height + 1, value: None })
            }
        }
    }

    /// An initializer after `=`: a constant expression or a braced list, nested at most [`MAX_DEPTH`] deep.
    pub(super) fn initializer(&mut self) -> PResult<Initializer<'a>> {
        self.initializer_at(0)
    }

    fn initializer_at(&mut self, depth: u32) -> PResult<Initializer<'a>> {
        if !self.at(TokenKind::LBrace) {
            return self.expr().map(Initializer::Expr);
        }
        if depth >= MAX_DEPTH {
            let msg = format!("initializer braces are nested too deeply (the limit is {MAX_DEPTH} levels)");
            self.error(self.tok.span(), msg);
            return Err(Stop);
        }
        let start = self.bump().start;
        let mut items = Vec::new();
        if self.eat(TokenKind::RBrace).is_none() {
            loop {
                if self.at(TokenKind::Ident) && self.next.kind == TokenKind::Eq {
                    let name = self.bump();
                    self.bump();
                    let value = self.expr()?;
                    items.push(Initializer::Named { name: self.text(name), value, span: self.span_from(name.start) });
                } else {
                    items.push(self.initializer_at(depth + 1)?);
                }
                match self.tok.kind {
                    TokenKind::Comma => {
                        self.bump();
                    }
                    TokenKind::RBrace => {
                        self.bump();
                        break;
                    }
                    _ => return Err(self.unexpected("`,` or `}` in the initializer")),
                }
            }
        }
        Ok(Initializer::List(items, self.span_from(start)))
    }
}
