//! The IR printer: emits PTX text that `ptx::parse` accepts and that lowers back to the same IR.
//!
//! Function bodies come out flat: every declaration (registers, variables, prototypes, branch tables) first,
//! then the blocks in layout order, each with its label, pragmas and instructions; a `.loc` line is emitted
//! whenever an instruction's source position differs from the previous instruction's.

use std::fmt::{self, Write};

use crate::module::*;
use ptx::ast::{BinaryOp, UnaryOp};

/// Prints a module as PTX.
pub fn print(module: &Module) -> String {
    let mut out = String::with_capacity(module.instruction_count() * 40 + 1024);
    // Writing into a String cannot fail.
    let _ = Printer { module, out: &mut out }.module();
    out
}

struct Printer<'m, 'o> {
    module: &'m Module,
    out: &'o mut String,
}

impl Printer<'_, '_> {
    fn module(&mut self) -> fmt::Result {
        let m = self.module;
        if let Some((major, minor)) = m.version {
            writeln!(self.out, ".version {major}.{minor}")?;
        }
        if !m.target.is_empty() {
            writeln!(self.out, ".target {}", m.target.join(", "))?;
        }
        if let Some(size) = m.address_size {
            writeln!(self.out, ".address_size {size}")?;
        }
        for item in &m.items {
            // `.file` lines stay together; everything else gets a blank line before it.
            if !matches!(item, Item::File { .. }) {
                self.out.push('\n');
            }
            match item {
                Item::File { index, path, timestamp, size } => {
                    write!(self.out, ".file {index} \"{path}\"")?;
                    if let Some(t) = timestamp {
                        write!(self.out, ", {t}")?;
                        if let Some(s) = size {
                            write!(self.out, ", {s}")?;
                        }
                    }
                    self.out.push('\n');
                }
                Item::Section { name, body } => writeln!(self.out, ".section {name}\n{{{body}}}")?,
                Item::Pragma(p) => writeln!(self.out, ".pragma \"{p}\";")?,
                Item::Global(g) => {
                    let var = &m.globals[*g];
                    self.variable(var, |p, init| p.init(init, None))?;
                }
                Item::FunctionDecl(f) => {
                    self.function_header(&m.functions[*f])?;
                    self.out.push_str(";\n");
                }
                Item::FunctionDef(f) => self.function(&m.functions[*f])?,
                Item::Alias { alias, aliasee } => {
                    writeln!(self.out, ".alias {}, {};", m.functions[*alias].name, m.functions[*aliasee].name)?
                }
            }
        }
        Ok(())
    }

    fn linkage(&mut self, linkage: Linkage) {
        self.out.push_str(match linkage {
            Linkage::Internal => "",
            Linkage::Visible => ".visible ",
            Linkage::Extern => ".extern ",
            Linkage::Weak => ".weak ",
            Linkage::Common => ".common ",
        });
    }

    fn variable(&mut self, var: &Variable, init: impl FnOnce(&mut Self, &Init) -> fmt::Result) -> fmt::Result {
        self.linkage(var.linkage);
        write!(self.out, ".{}", var.space)?;
        for a in &var.attributes {
            write!(self.out, " .attribute({a})")?;
        }
        if let Some(a) = var.align {
            write!(self.out, " .align {a}")?;
        }
        if let Some(v) = var.vector {
            write!(self.out, " .v{v}")?;
        }
        write!(self.out, " .{} {}", var.ty, var.name)?;
        dims(self.out, &var.dims)?;
        if let Some(i) = &var.init {
            self.out.push_str(" = ");
            init(self, i)?;
        }
        self.out.push_str(";\n");
        Ok(())
    }

    fn init(&mut self, init: &Init, body: Option<&Body>) -> fmt::Result {
        match init {
            Init::Expr(e) => self.const_expr(e, body),
            Init::Named { name, value } => {
                write!(self.out, "{name} = ")?;
                match value {
                    NamedValue::Word(w) => self.out.write_str(w),
                    NamedValue::Expr(e) => self.const_expr(e, body),
                }
            }
            Init::List(items) => {
                self.out.push('{');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.init(item, body)?;
                }
                self.out.push('}');
                Ok(())
            }
        }
    }

    fn const_expr(&mut self, e: &ConstExpr, body: Option<&Body>) -> fmt::Result {
        match e {
            ConstExpr::Imm(i) => immediate(self.out, i),
            ConstExpr::Global(g) => self.out.write_str(&self.module.globals[*g].name),
            ConstExpr::Func(f) => self.out.write_str(&self.module.functions[*f].name),
            ConstExpr::Generic(g) => write!(self.out, "generic({})", self.module.globals[*g].name),
            ConstExpr::Unary(op, a) => {
                self.out.push_str(match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Not => "~",
                    UnaryOp::LogicalNot => "!",
                });
                self.operand_expr(a, body)
            }
            ConstExpr::Binary(op, a, b) => {
                self.operand_expr(a, body)?;
                self.out.push_str(match op {
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
                });
                self.operand_expr(b, body)
            }
        }
    }

    /// A sub-expression, parenthesized unless it is atomic.
    fn operand_expr(&mut self, e: &ConstExpr, body: Option<&Body>) -> fmt::Result {
        if matches!(e, ConstExpr::Binary(..) | ConstExpr::Unary(..)) {
            self.out.push('(');
            self.const_expr(e, body)?;
            self.out.push(')');
            Ok(())
        } else {
            self.const_expr(e, body)
        }
    }

    fn params(&mut self, params: &[Param], multiline: bool) -> fmt::Result {
        self.out.push('(');
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            if multiline {
                self.out.push_str("\n\t");
            } else if i > 0 {
                self.out.push(' ');
            }
            write!(self.out, ".{}", p.space)?;
            if let Some(a) = p.align {
                write!(self.out, " .align {a}")?;
            }
            if let Some(v) = p.vector {
                write!(self.out, " .v{v}")?;
            }
            write!(self.out, " .{}", p.ty)?;
            if let Some(ptr) = p.ptr {
                self.out.push_str(" .ptr");
                if let Some(s) = ptr.space {
                    write!(self.out, " .{s}")?;
                }
                if let Some(a) = ptr.align {
                    write!(self.out, " .align {a}")?;
                }
            }
            write!(self.out, " {}", p.name.as_deref().unwrap_or("_"))?;
            dims(self.out, &p.dims)?;
        }
        if multiline && !params.is_empty() {
            self.out.push('\n');
        }
        self.out.push(')');
        Ok(())
    }

    fn function_header(&mut self, f: &Function) -> fmt::Result {
        self.linkage(f.linkage);
        self.out.push_str(match f.kind {
            FunctionKind::Entry => ".entry ",
            FunctionKind::Func => ".func ",
        });
        if !f.returns.is_empty() {
            self.params(&f.returns, false)?;
            self.out.push(' ');
        }
        self.out.push_str(&f.name);
        self.params(&f.params, true)?;
        for d in &f.directives {
            self.out.push('\n');
            match d {
                Directive::MaxNtid(v) => write!(self.out, ".maxntid {}", join(v))?,
                Directive::ReqNtid(v) => write!(self.out, ".reqntid {}", join(v))?,
                Directive::MinNctaPerSm(n) => write!(self.out, ".minnctapersm {n}")?,
                Directive::MaxNctaPerSm(n) => write!(self.out, ".maxnctapersm {n}")?,
                Directive::MaxNreg(n) => write!(self.out, ".maxnreg {n}")?,
                Directive::NoReturn => self.out.push_str(".noreturn"),
                Directive::Pragma(p) => write!(self.out, ".pragma \"{p}\";")?,
                Directive::ExplicitCluster => self.out.push_str(".explicitcluster"),
                Directive::ReqNctaPerCluster(v) => write!(self.out, ".reqnctapercluster {}", join(v))?,
                Directive::MaxClusterRank(n) => write!(self.out, ".maxclusterrank {n}")?,
                Directive::BlocksAreClusters => self.out.push_str(".blocksareclusters"),
                Directive::AbiPreserve(n) => write!(self.out, ".abi_preserve {n}")?,
                Directive::AbiPreserveControl(n) => write!(self.out, ".abi_preserve_control {n}")?,
            }
        }
        Ok(())
    }

    fn function(&mut self, f: &Function) -> fmt::Result {
        self.function_header(f)?;
        let Some(body) = &f.body else {
            self.out.push_str(";\n");
            return Ok(());
        };
        self.out.push_str("\n{\n");
        for d in &body.reg_decls {
            self.out.push_str("\t.reg");
            if let Some(v) = d.vector {
                write!(self.out, " .v{v}")?;
            }
            write!(self.out, " .{} {}", d.ty, d.name)?;
            if let Some(n) = d.count {
                write!(self.out, "<{n}>")?;
            }
            self.out.push_str(";\n");
        }
        for var in body.vars.values() {
            self.out.push('\t');
            self.variable(var, |p, init| p.init(init, Some(body)))?;
        }
        for proto in body.prototypes.values() {
            write!(self.out, "\t{}: .callprototype ", proto.name)?;
            if !proto.returns.is_empty() {
                self.params(&proto.returns, false)?;
                self.out.push(' ');
            }
            self.out.push_str("_ ");
            self.params(&proto.params, false)?;
            if proto.noreturn {
                self.out.push_str(" .noreturn");
            }
            self.out.push_str(";\n");
        }
        for table in body.tables.values() {
            let (kind, names): (&str, Vec<&str>) = match &table.targets {
                TableTargets::Branch(blocks) => {
                    ("branchtargets", blocks.iter().map(|b| body.blocks[*b].label.as_deref().unwrap_or("?")).collect())
                }
                TableTargets::Call(funcs) => {
                    ("calltargets", funcs.iter().map(|f| self.module.functions[*f].name.as_str()).collect())
                }
            };
            writeln!(self.out, "\t{}: .{kind} {};", table.name, names.join(", "))?;
        }
        let mut last_loc = None;
        for (block, data) in body.blocks.iter() {
            if let Some(label) = &data.label {
                writeln!(self.out, "{label}:")?;
            } else if block.as_u32() > 0 && data.insts.is_empty() && data.pragmas.is_empty() {
                continue;
            }
            for p in &data.pragmas {
                writeln!(self.out, "\t.pragma \"{p}\";")?;
            }
            for &i in &data.insts {
                let inst = &body.insts[i];
                if inst.loc != last_loc {
                    if let Some(l) = inst.loc.and_then(|l| body.locs.get(l as usize)) {
                        write!(self.out, "\t.loc {} {} {}", l.file, l.line, l.column)?;
                        if let Some(name) = &l.function_name {
                            write!(self.out, ", function_name {name}")?;
                        }
                        if let Some((file, line, col)) = l.inlined_at {
                            write!(self.out, ", inlined_at {file} {line} {col}")?;
                        }
                        self.out.push('\n');
                    }
                    last_loc = inst.loc;
                }
                self.out.push('\t');
                write_inst(self.out, self.module, f, body, inst)?;
                self.out.push('\n');
            }
        }
        self.out.push_str("}\n");
        Ok(())
    }
}

fn join(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

fn dims(out: &mut String, dims: &[Option<u64>]) -> fmt::Result {
    for d in dims {
        match d {
            Some(n) => write!(out, "[{n}]")?,
            None => out.push_str("[]"),
        }
    }
    Ok(())
}

/// Canonical immediate spelling: decimal integers, exact `0f`/`0d` bit patterns for floats.
pub fn immediate(out: &mut String, imm: &Immediate) -> fmt::Result {
    match *imm {
        Immediate::Int { value, unsigned: true } => write!(out, "{}U", value as u64),
        Immediate::Int { value, unsigned: false } => write!(out, "{value}"),
        Immediate::F32Bits(bits) => write!(out, "0f{bits:08X}"),
        Immediate::F64Bits(bits) => write!(out, "0d{bits:016X}"),
        Immediate::Float(x) => write!(out, "0d{:016X}", x.to_bits()),
    }
}

/// Writes one instruction of `func`'s body (without indentation or newline).
pub fn write_inst(out: &mut String, module: &Module, func: &Function, body: &Body, inst: &Inst) -> fmt::Result {
    if let Some(g) = inst.guard {
        write!(out, "@{}{} ", if g.negated { "!" } else { "" }, body.reg_name(g.reg))?;
    }
    out.push_str(inst.opcode.as_str());
    for m in &inst.modifiers {
        write!(out, ".{m}")?;
    }
    for (i, op) in inst.operands.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        operand(out, module, func, body, op)?;
    }
    out.push(';');
    Ok(())
}

fn symbol_name<'a>(module: &'a Module, body: &'a Body, function: Option<&'a Function>, s: Symbol) -> &'a str {
    match s {
        Symbol::Global(g) => &module.globals[g].name,
        Symbol::Local(v) => &body.vars[v].name,
        Symbol::Func(f) => &module.functions[f].name,
        Symbol::Param(i) => {
            function.and_then(|f| f.params.get(i as usize)).and_then(|p| p.name.as_deref()).unwrap_or("?")
        }
        Symbol::Return(i) => {
            function.and_then(|f| f.returns.get(i as usize)).and_then(|p| p.name.as_deref()).unwrap_or("?")
        }
    }
}

fn operand(out: &mut String, module: &Module, func: &Function, body: &Body, op: &Operand) -> fmt::Result {
    let list = |out: &mut String, items: &[Operand], open: char, close: char| -> fmt::Result {
        out.push(open);
        for (i, o) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            operand(out, module, func, body, o)?;
        }
        out.push(close);
        Ok(())
    };
    match op {
        Operand::Reg(r) => out.push_str(&body.reg_name(*r)),
        Operand::RegElement(r, c) | Operand::Select(r, c) => write!(out, "{}.{}", body.reg_name(*r), component(*c))?,
        Operand::Special(s, c) => {
            write!(out, "%{s}")?;
            if let Some(c) = c {
                write!(out, ".{}", component(*c))?;
            }
        }
        Operand::Not(r) => write!(out, "!{}", body.reg_name(*r))?,
        Operand::Neg(r, None) => write!(out, "-{}", body.reg_name(*r))?,
        Operand::Neg(r, Some(c)) => write!(out, "-{}.{c}", body.reg_name(*r))?,
        Operand::Imm(i) => immediate(out, i)?,
        Operand::Address(a) => {
            out.push('[');
            match a.base {
                AddressBase::Reg(r) => out.push_str(&body.reg_name(r)),
                AddressBase::Symbol(s) => out.push_str(symbol_name(module, body, Some(func), s)),
                AddressBase::Absolute(x) => write!(out, "{}", x.wrapping_add(a.offset))?,
            }
            if a.offset != 0 && !matches!(a.base, AddressBase::Absolute(_)) {
                write!(out, "+{}", a.offset)?;
            }
            out.push(']');
        }
        Operand::Vector(items) => list(out, items, '{', '}')?,
        Operand::Bracket(items) => list(out, items, '[', ']')?,
        Operand::List(items) => list(out, items, '(', ')')?,
        Operand::Pair(a, b) => write!(out, "{}|{}", body.reg_name(*a), body.reg_name(*b))?,
        // `_|p`: a lone sink is not a vector (see `lower`).
        Operand::VectorPair(items, p) if matches!(items.as_slice(), [Operand::Sink]) => {
            write!(out, "_|{}", body.reg_name(*p))?
        }
        Operand::VectorPair(items, p) => {
            list(out, items, '{', '}')?;
            write!(out, "|{}", body.reg_name(*p))?;
        }
        Operand::Sink => out.push('_'),
        Operand::Label(b) => out.push_str(body.blocks[*b].label.as_deref().unwrap_or("?")),
        Operand::Symbol(s) => out.push_str(symbol_name(module, body, Some(func), *s)),
        Operand::SymbolOffset(s, off) => {
            out.push_str(symbol_name(module, body, Some(func), *s));
            if *off < 0 {
                write!(out, "-{}", off.unsigned_abs())?;
            } else {
                write!(out, "+{off}")?;
            }
        }
        Operand::Table(t) => out.push_str(&body.tables[*t].name),
        Operand::Prototype(p) => out.push_str(&body.prototypes[*p].name),
    }
    Ok(())
}

fn component(c: Component) -> Component {
    c
}
