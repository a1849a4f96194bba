//! Canonical PTX printing: `Display` for the AST.
//!
//! One statement per line, tabs for indentation, modifiers in stored order, single spaces between tokens.
//! Immediates print in a form that re-parses to the identical value: integers in decimal (negative values
//! with a leading `-`, which the parser folds back into the literal), `0f`/`0d` bit patterns for floats, and
//! decimal floats as the `0d` pattern of their exact bits. Sections print their raw body verbatim. Expressions
//! print with the parentheses their tree needs and no others, so printing is a fixed point:
//! `print(parse(print(parse(x)))) == print(parse(x))`.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;
use crate::parser::precedence;

impl Display for Module<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some((major, minor)) = self.version {
            writeln!(f, ".version {major}.{minor}")?;
        }
        if !self.target.is_empty() {
            f.write_str(".target ")?;
            comma_list(f, self.target.iter())?;
            f.write_char('\n')?;
        }
        if let Some(size) = self.address_size {
            writeln!(f, ".address_size {size}")?;
        }
        for item in &self.items {
            if matches!(item, Item::Function(_) | Item::Section(_)) {
                f.write_char('\n')?;
            }
            writeln!(f, "{item}")?;
        }
        Ok(())
    }
}

fn comma_list<T: Display>(f: &mut Formatter<'_>, items: impl Iterator<Item = T>) -> fmt::Result {
    for (i, item) in items.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        item.fmt(f)?;
    }
    Ok(())
}

impl Display for Item<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Item::File(file) => file.fmt(f),
            Item::Section(s) => s.fmt(f),
            Item::Pragma(text, _) => write!(f, ".pragma \"{text}\";"),
            Item::Variable(v) => v.fmt(f),
            Item::Function(func) => func.fmt(f),
            Item::Alias { alias, aliasee, .. } => write!(f, ".alias {alias}, {aliasee};"),
        }
    }
}

impl Display for FileDecl<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".file {} \"{}\"", self.index, self.path)?;
        if self.timestamp.is_some() || self.size.is_some() {
            write!(f, ", {}", self.timestamp.unwrap_or(0))?;
        }
        if let Some(size) = self.size {
            write!(f, ", {size}")?;
        }
        Ok(())
    }
}

impl Display for Section<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".section {}\n{{{}}}", self.name, self.body)
    }
}

impl Display for Linkage {
    /// The linkage directive (`.visible`), or nothing for internal linkage.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Linkage::Internal => "",
            Linkage::Visible => ".visible",
            Linkage::Extern => ".extern",
            Linkage::Weak => ".weak",
            Linkage::Common => ".common",
        })
    }
}

fn linkage_prefix(f: &mut Formatter<'_>, linkage: Linkage) -> fmt::Result {
    if linkage != Linkage::Internal {
        write!(f, "{linkage} ")?;
    }
    Ok(())
}

impl Display for VarDecl<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        linkage_prefix(f, self.linkage)?;
        write!(f, ".{}", self.space)?;
        for a in &self.attributes {
            write!(f, " .attribute({a})")?;
        }
        if let Some(align) = self.align {
            write!(f, " .align {align}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .v{v}")?;
        }
        write!(f, " .{} ", self.ty)?;
        comma_list(f, self.declarators.iter())?;
        f.write_char(';')
    }
}

fn write_dims(f: &mut Formatter<'_>, dims: &[Option<u64>]) -> fmt::Result {
    for d in dims {
        match d {
            Some(n) => write!(f, "[{n}]")?,
            None => f.write_str("[]")?,
        }
    }
    Ok(())
}

impl Display for Declarator<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        if let Some(n) = self.range {
            write!(f, "<{n}>")?;
        }
        write_dims(f, &self.dims)?;
        if let Some(init) = &self.init {
            write!(f, " = {init}")?;
        }
        Ok(())
    }
}

impl Display for Initializer<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Initializer::Expr(e) => e.fmt(f),
            Initializer::List(items, _) => {
                f.write_char('{')?;
                comma_list(f, items.iter())?;
                f.write_char('}')
            }
            Initializer::Named { name, value, .. } => write!(f, "{name} = {value}"),
        }
    }
}

impl Display for UnaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnaryOp::Neg => "-",
            UnaryOp::Not => "~",
            UnaryOp::LogicalNot => "!",
        })
    }
}

impl Display for BinaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::And => "&",
            BinaryOp::Or => "|",
            BinaryOp::Xor => "^",
        })
    }
}

impl Display for Expr<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_expr(f, self, 0)
    }
}

/// Writes `e`, parenthesized if its operator binds looser than `min_prec` requires.
fn write_expr(f: &mut Formatter<'_>, e: &Expr<'_>, min_prec: u8) -> fmt::Result {
    match e {
        Expr::Imm(imm, _) => imm.fmt(f),
        Expr::Symbol(name, _) => f.write_str(name),
        Expr::Generic(name, _) => write!(f, "generic({name})"),
        Expr::Unary(op, inner, _) => {
            op.fmt(f)?;
            // `-` before a literal would fold into it on re-parsing, so that case keeps its parentheses.
            let parens =
                matches!(**inner, Expr::Binary(..)) || (*op == UnaryOp::Neg && matches!(**inner, Expr::Imm(..)));
            if parens {
                f.write_char('(')?;
            }
            write_expr(f, inner, 0)?;
            if parens {
                f.write_char(')')?;
            }
            Ok(())
        }
        Expr::Binary(op, a, b, _) => {
            let prec = precedence(*op);
            let parens = prec < min_prec;
            if parens {
                f.write_char('(')?;
            }
            // Left-associative: an operand of the same precedence needs parentheses only on the right.
            write_expr(f, a, prec)?;
            write!(f, " {op} ")?;
            write_expr(f, b, prec + 1)?;
            if parens {
                f.write_char(')')?;
            }
            Ok(())
        }
    }
}

impl Display for Immediate {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match *self {
            // A `U` literal prints as its unsigned value; a signed one in two's complement with a `-`.
            Immediate::Int { value, unsigned: true } => write!(f, "{}U", value as u64),
            Immediate::Int { value, unsigned: false } => write!(f, "{value}"),
            Immediate::F32Bits(bits) => write!(f, "0f{bits:08X}"),
            Immediate::F64Bits(bits) => write!(f, "0d{bits:016X}"),
            Immediate::Float(v) => write!(f, "0d{:016X}", v.to_bits()),
        }
    }
}

impl Display for Function<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        linkage_prefix(f, self.linkage)?;
        f.write_str(match self.kind {
            FunctionKind::Entry => ".entry ",
            FunctionKind::Func => ".func ",
        })?;
        if !self.returns.is_empty() {
            f.write_char('(')?;
            comma_list(f, self.returns.iter())?;
            f.write_str(") ")?;
        }
        f.write_str(self.name)?;
        if !self.params.is_empty() {
            f.write_str("(\n")?;
            for (i, p) in self.params.iter().enumerate() {
                writeln!(f, "\t{p}{}", if i + 1 < self.params.len() { "," } else { "" })?;
            }
            f.write_char(')')?;
        }
        for d in &self.directives {
            write!(f, "\n{d}")?;
        }
        match &self.body {
            None => f.write_str("\n;"),
            Some(body) => {
                f.write_str("\n{\n")?;
                for s in body {
                    write_statement(f, s, 1)?;
                }
                f.write_char('}')
            }
        }
    }
}

impl Display for Param<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".{}", self.space)?;
        if let Some(align) = self.align {
            write!(f, " .align {align}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .v{v}")?;
        }
        write!(f, " .{}", self.ty)?;
        if let Some(ptr) = self.ptr {
            f.write_str(" .ptr")?;
            if let Some(space) = ptr.space {
                write!(f, " .{space}")?;
            }
            if let Some(align) = ptr.align {
                write!(f, " .align {align}")?;
            }
        }
        write!(f, " {}", self.name.unwrap_or("_"))?;
        write_dims(f, &self.dims)
    }
}

fn write_u32s(f: &mut Formatter<'_>, name: &str, values: &[u32]) -> fmt::Result {
    write!(f, ".{name} ")?;
    comma_list(f, values.iter())
}

impl Display for FunctionDirective<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            FunctionDirective::MaxNtid(v, _) => write_u32s(f, "maxntid", v),
            FunctionDirective::ReqNtid(v, _) => write_u32s(f, "reqntid", v),
            FunctionDirective::MinNctaPerSm(n, _) => write!(f, ".minnctapersm {n}"),
            FunctionDirective::MaxNctaPerSm(n, _) => write!(f, ".maxnctapersm {n}"),
            FunctionDirective::MaxNreg(n, _) => write!(f, ".maxnreg {n}"),
            FunctionDirective::NoReturn(_) => f.write_str(".noreturn"),
            FunctionDirective::Pragma(text, _) => write!(f, ".pragma \"{text}\";"),
            FunctionDirective::ExplicitCluster(_) => f.write_str(".explicitcluster"),
            FunctionDirective::ReqNctaPerCluster(v, _) => write_u32s(f, "reqnctapercluster", v),
            FunctionDirective::MaxClusterRank(n, _) => write!(f, ".maxclusterrank {n}"),
            FunctionDirective::BlocksAreClusters(_) => f.write_str(".blocksareclusters"),
            FunctionDirective::AbiPreserve(n, _) => write!(f, ".abi_preserve {n}"),
            FunctionDirective::AbiPreserveControl(n, _) => write!(f, ".abi_preserve_control {n}"),
        }
    }
}

fn indent(f: &mut Formatter<'_>, depth: usize) -> fmt::Result {
    for _ in 0..depth {
        f.write_char('\t')?;
    }
    Ok(())
}

/// Writes one statement and its newline at `depth` tabs (labels one tab less).
fn write_statement(f: &mut Formatter<'_>, s: &Statement<'_>, depth: usize) -> fmt::Result {
    match s {
        Statement::Label(name, _) => {
            indent(f, depth.saturating_sub(1))?;
            writeln!(f, "{name}:")
        }
        Statement::Block(body, _) => {
            indent(f, depth)?;
            f.write_str("{\n")?;
            for inner in body {
                write_statement(f, inner, depth + 1)?;
            }
            indent(f, depth)?;
            f.write_str("}\n")
        }
        other => {
            indent(f, depth)?;
            match other {
                Statement::Instruction(i) => i.fmt(f)?,
                Statement::Variable(v) => v.fmt(f)?,
                Statement::Loc(l) => l.fmt(f)?,
                Statement::Pragma(text, _) => write!(f, ".pragma \"{text}\";")?,
                Statement::BranchTargets { label, targets, .. } => {
                    write!(f, "{label}: .branchtargets ")?;
                    comma_list(f, targets.iter())?;
                    f.write_char(';')?;
                }
                Statement::CallTargets { label, targets, .. } => {
                    write!(f, "{label}: .calltargets ")?;
                    comma_list(f, targets.iter())?;
                    f.write_char(';')?;
                }
                Statement::CallPrototype(p) => p.fmt(f)?,
                Statement::Label(..) | Statement::Block(..) => {}
            }
            f.write_char('\n')
        }
    }
}

impl Display for Statement<'_> {
    /// The statement at indentation 0 (nested blocks indent their contents), ending in a newline.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_statement(f, self, 0)
    }
}

impl Display for Loc<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".loc {} {} {}", self.file, self.line, self.column)?;
        if let Some(name) = self.function_name {
            write!(f, ", function_name {name}")?;
            if let Some((file, line, column)) = self.inlined_at {
                write!(f, ", inlined_at {file} {line} {column}")?;
            }
        }
        Ok(())
    }
}

impl Display for CallPrototype<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}: .callprototype ", self.label)?;
        if !self.returns.is_empty() {
            f.write_char('(')?;
            comma_list(f, self.returns.iter())?;
            f.write_str(") ")?;
        }
        f.write_str("_ (")?;
        comma_list(f, self.params.iter())?;
        f.write_char(')')?;
        if self.noreturn {
            f.write_str(" .noreturn")?;
        }
        f.write_char(';')
    }
}

impl Display for Guard<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "@{}{}", if self.negated { "!" } else { "" }, self.reg)
    }
}

impl Display for Instruction<'_> {
    /// The whole instruction statement, guard and `;` included, without indentation or newline.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "{g} ")?;
        }
        f.write_str(self.opcode.as_str())?;
        for m in &self.modifiers {
            write!(f, ".{m}")?;
        }
        if !self.operands.is_empty() {
            f.write_char(' ')?;
            comma_list(f, self.operands.iter())?;
        }
        f.write_char(';')
    }
}

impl Display for Component {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match (self.as_str(), self) {
            (Some(s), _) => f.write_str(s),
            (None, Component::Lanes(l)) => {
                f.write_char(if l.half { 'h' } else { 'b' })?;
                l.digits().iter().try_for_each(|d| write!(f, "{d}"))
            }
            (None, _) => Ok(()),
        }
    }
}

impl Display for Operand<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Name(name, None, _) => f.write_str(name),
            Operand::Name(name, Some(c), _) => write!(f, "{name}.{c}"),
            Operand::Not(name, _) => write!(f, "!{name}"),
            Operand::Neg(name, None, _) => write!(f, "-{name}"),
            Operand::Neg(name, Some(c), _) => write!(f, "-{name}.{c}"),
            Operand::Imm(imm, _) => imm.fmt(f),
            Operand::Address(a) => a.fmt(f),
            Operand::Vector(items, _) => {
                f.write_char('{')?;
                comma_list(f, items.iter())?;
                f.write_char('}')
            }
            Operand::Bracket(items, _) => {
                f.write_char('[')?;
                comma_list(f, items.iter())?;
                f.write_char(']')
            }
            Operand::List(items, _) => {
                f.write_char('(')?;
                comma_list(f, items.iter())?;
                f.write_char(')')
            }
            Operand::Pair(a, b, _) => write!(f, "{a}|{b}"),
            Operand::VectorPair(items, p, _) => {
                f.write_char('{')?;
                comma_list(f, items.iter())?;
                write!(f, "}}|{p}")
            }
            Operand::Sink(_) => f.write_char('_'),
            Operand::SymbolOffset(name, offset, _) => write!(f, "{name}+{offset}"),
        }
    }
}

impl Display for AddressBase<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            AddressBase::Reg(name) | AddressBase::Symbol(name) => f.write_str(name),
            AddressBase::Absolute(value) => write!(f, "{value}"),
        }
    }
}

impl Display for Address<'_> {
    /// `[base]` or `[base+offset]` (a negative offset prints as `+-N`, as nvcc writes it).
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "[{}", self.base)?;
        if self.offset != 0 {
            write!(f, "+{}", self.offset)?;
        }
        f.write_char(']')
    }
}
