//! Comparing modules up to spans: the round-trip check of the printer.
//!
//! [`normalize`] zeroes every span and rewrites decimal float literals as their `0d` bit pattern (which is how
//! the printer writes them); two modules are [`equivalent`] when their normalized forms are equal. Unlike
//! comparing printed text, this catches a printer that drops or reorders information.

use crate::ast::*;

/// Zeroes every span in `m` and turns `Immediate::Float` into `Immediate::F64Bits`.
pub fn normalize(m: &mut Module<'_>) {
    for item in &mut m.items {
        match item {
            Item::File(file) => file.span = Span::default(),
            Item::Section(s) => {
                s.span = Span::default();
                for e in &mut s.entries {
                    match e {
                        SectionEntry::Label(_, span) => *span = Span::default(),
                        SectionEntry::Data { values, span, .. } => {
                            *span = Span::default();
                            values.iter_mut().for_each(expr);
                        }
                    }
                }
            }
            Item::Pragma(_, span) | Item::Alias { span, .. } => *span = Span::default(),
            Item::Variable(v) => var(v),
            Item::Function(f) => {
                f.span = Span::default();
                f.name_span = Span::default();
                f.returns.iter_mut().chain(f.params.iter_mut()).for_each(|p| p.span = Span::default());
                for d in &mut f.directives {
                    directive(d);
                }
                if let Some(body) = &mut f.body {
                    statements(body);
                }
            }
        }
    }
}

/// True when `a` and `b` are equal up to spans and the spelling of float literals.
///
/// The normalized modules are compared through their `Debug` form, which shows every field: the AST is
/// invariant in its lifetime (through `SmallVec`), so modules borrowing from different texts cannot be
/// compared with `==` directly.
pub fn equivalent(a: &Module<'_>, b: &Module<'_>) -> bool {
    let (mut a, mut b) = (a.clone(), b.clone());
    normalize(&mut a);
    normalize(&mut b);
    format!("{a:?}") == format!("{b:?}")
}

fn directive(d: &mut FunctionDirective<'_>) {
    match d {
        FunctionDirective::MaxNtid(_, s)
        | FunctionDirective::ReqNtid(_, s)
        | FunctionDirective::MinNctaPerSm(_, s)
        | FunctionDirective::MaxNctaPerSm(_, s)
        | FunctionDirective::MaxNreg(_, s)
        | FunctionDirective::NoReturn(s)
        | FunctionDirective::Pragma(_, s)
        | FunctionDirective::ExplicitCluster(s)
        | FunctionDirective::ReqNctaPerCluster(_, s)
        | FunctionDirective::MaxClusterRank(_, s)
        | FunctionDirective::BlocksAreClusters(s)
        | FunctionDirective::AbiPreserve(_, s)
        | FunctionDirective::AbiPreserveControl(_, s) => *s = Span::default(),
    }
}

fn var(v: &mut VarDecl<'_>) {
    v.span = Span::default();
    for d in &mut v.declarators {
        d.span = Span::default();
        if let Some(init) = &mut d.init {
            initializer(init);
        }
    }
}

fn initializer(i: &mut Initializer<'_>) {
    match i {
        Initializer::Expr(e) => expr(e),
        Initializer::List(items, span) => {
            *span = Span::default();
            items.iter_mut().for_each(initializer);
        }
        Initializer::Named { value, span, .. } => {
            *span = Span::default();
            expr(value);
        }
    }
}

fn imm(i: &mut Immediate) {
    if let Immediate::Float(v) = *i {
        *i = Immediate::F64Bits(v.to_bits());
    }
}

fn expr(e: &mut Expr<'_>) {
    match e {
        Expr::Imm(i, span) => {
            imm(i);
            *span = Span::default();
        }
        Expr::Symbol(_, span) | Expr::Generic(_, span) => *span = Span::default(),
        Expr::Unary(_, a, span) => {
            *span = Span::default();
            expr(a);
        }
        Expr::Binary(_, a, b, span) => {
            *span = Span::default();
            expr(a);
            expr(b);
        }
    }
}

fn statements(body: &mut [Statement<'_>]) {
    for s in body {
        match s {
            Statement::Label(_, span) | Statement::Pragma(_, span) => *span = Span::default(),
            Statement::Instruction(i) => {
                i.span = Span::default();
                if let Some(g) = &mut i.guard {
                    g.span = Span::default();
                }
                i.operands.iter_mut().for_each(operand);
            }
            Statement::Variable(v) => var(v),
            Statement::Block(inner, span) => {
                *span = Span::default();
                statements(inner);
            }
            Statement::Loc(l) => l.span = Span::default(),
            Statement::BranchTargets { span, .. } | Statement::CallTargets { span, .. } => *span = Span::default(),
            Statement::CallPrototype(p) => {
                p.span = Span::default();
                p.returns.iter_mut().chain(p.params.iter_mut()).for_each(|p| p.span = Span::default());
            }
        }
    }
}

fn operand(o: &mut Operand<'_>) {
    match o {
        Operand::Name(_, _, span)
        | Operand::Not(_, span)
        | Operand::Neg(_, _, span)
        | Operand::Pair(_, _, span)
        | Operand::Sink(span)
        | Operand::SymbolOffset(_, _, span) => *span = Span::default(),
        Operand::Imm(i, span) => {
            imm(i);
            *span = Span::default();
        }
        Operand::Address(a) => a.span = Span::default(),
        Operand::Vector(items, span)
        | Operand::Bracket(items, span)
        | Operand::List(items, span)
        | Operand::VectorPair(items, _, span) => {
            *span = Span::default();
            items.iter_mut().for_each(operand);
        }
    }
}
