//! The IR verifier. Every later stage (emulator, JIT, analyses) may rely on these invariants of a verified
//! [`Module`]:
//!
//! **Module**
//! - M1. Every id in [`Module::items`] is in range; every global appears there exactly once and every
//!   defined function has exactly one [`Item::FunctionDef`].
//! - M2. Module-scope variables live in `.global`, `.const`, `.shared`, `.local` or `.tex`; an `.extern`
//!   variable has no initializer; only `.global` and `.const` variables have initializers; only an `.extern`
//!   or `.shared` variable may have an unsized `[]` dimension.
//! - M3. Kernels (`.entry`) have no return parameters and only `.param` parameters; `.extern` functions have
//!   no body; function names are unique.
//! - M4. `.address_size`, when given, is 32 or 64.
//!
//! **Function bodies**
//! - B1. A body has at least one block; the blocks list every instruction exactly once, in increasing id
//!   order (layout order equals id order for both blocks and instructions).
//! - B2. A terminator (`bra`, `brx`, `ret`, `exit`, `trap`) is the last instruction of its block.
//! - B3. Every id in an operand or guard (register, variable, block, table, prototype, function, global,
//!   parameter index) is in range.
//! - B4. Labels are unique within the function; a label operand names a labelled block; block, register,
//!   variable, table and prototype names are unique within the function.
//! - B5. A guard is a `.pred` register.
//! - B6. Operand counts per opcode are within the PTX ISA's forms; destinations are registers, vectors of
//!   registers, `d|p` pairs or `_`.
//! - B7. Register operands of data instructions have the size of the instruction type, with the ISA's
//!   exceptions: `ld`/`ldu`/`st`/`cvt` data registers may be wider; shift amounts and bit positions are 32-bit;
//!   `.wide` results are twice the type size; comparisons write and predicates read `.pred` registers;
//!   `popc`/`clz`/`bfind` write 32-bit results.
//! - B8. `bra` has one label operand; `brx.idx` has an index register and a `.branchtargets` table; `call`
//!   names a function (or a register with a prototype or `.calltargets` table) and passes as many arguments
//!   and return values as the callee declares.
//! - B9. Memory instructions (`ld`, `ldu`, `st`, `atom`, `red`, `prefetch`, `prefetchu`) have an address
//!   operand; a `.vN` access has a vector operand of exactly N elements.

use graph::cranelift_entity::EntityRef;
use rustc_hash::FxHashSet;

use crate::module::*;
use crate::Diagnostic;

/// Checks every invariant listed in the module docs; returns all violations found.
pub fn verify(module: &Module) -> Result<(), Vec<Diagnostic>> {
    let mut v = Verifier { module, diags: Vec::new() };
    v.module();
    if v.diags.is_empty() {
        Ok(())
    } else {
        Err(v.diags)
    }
}

struct Verifier<'m> {
    module: &'m Module,
    diags: Vec<Diagnostic>,
}

impl<'m> Verifier<'m> {
    fn error(&mut self, span: Span, message: String) {
        if self.diags.len() < 200 {
            self.diags.push(Diagnostic::new(span, message));
        }
    }

    fn module(&mut self) {
        let m = self.module;
        if let Some(size) = m.address_size {
            if size != 32 && size != 64 {
                self.error(Span::default(), format!("`.address_size {size}` must be 32 or 64"));
            }
        }
        let mut global_seen = vec![0u32; m.globals.len()];
        let mut def_seen = vec![0u32; m.functions.len()];
        for item in &m.items {
            match *item {
                Item::Global(g) if g.index() < m.globals.len() => global_seen[g.index()] += 1,
                Item::FunctionDef(f) if f.index() < m.functions.len() => def_seen[f.index()] += 1,
                Item::FunctionDecl(f) if f.index() < m.functions.len() => {}
                Item::Alias { alias, aliasee }
                    if alias.index() < m.functions.len() && aliasee.index() < m.functions.len() => {}
                Item::Global(_) | Item::FunctionDef(_) | Item::FunctionDecl(_) | Item::Alias { .. } => {
                    self.error(Span::default(), "module item refers to an entity out of range".into())
                }
                _ => {}
            }
        }
        for (g, var) in m.globals.iter() {
            if global_seen[g.index()] != 1 {
                self.error(
                    var.span,
                    format!("variable `{}` is listed {} times in the module", var.name, global_seen[g.index()]),
                );
            }
            self.global(var);
        }
        let mut names = FxHashSet::default();
        for (f, func) in m.functions.iter() {
            if !names.insert(func.name.as_str()) {
                self.error(func.span, format!("function `{}` is declared twice", func.name));
            }
            let expected = u32::from(func.body.is_some());
            if def_seen[f.index()] != expected {
                self.error(
                    func.span,
                    format!("function `{}` has {} definitions in the module", func.name, def_seen[f.index()]),
                );
            }
            self.function(func);
        }
    }

    fn global(&mut self, var: &Variable) {
        use StateSpace::*;
        if !matches!(var.space, Global | Const | Shared | SharedCta | SharedCluster | Local | Tex) {
            self.error(var.span, format!("module-scope variable `{}` cannot be in `.{}` space", var.name, var.space));
        }
        if var.init.is_some() {
            if var.linkage == Linkage::Extern {
                self.error(var.span, format!("`.extern` variable `{}` cannot have an initializer", var.name));
            }
            if !matches!(var.space, Global | Const) {
                self.error(var.span, format!("`.{}` variable `{}` cannot have an initializer", var.space, var.name));
            }
        }
        if var.dims.iter().any(Option::is_none)
            && var.linkage != Linkage::Extern
            && !matches!(var.space, Shared | SharedCta)
        {
            self.error(
                var.span,
                format!("only `.extern` or `.shared` variables may have an unsized dimension (`{}`)", var.name),
            );
        }
        if let Some(init) = &var.init {
            self.init(init, var.span);
        }
    }

    fn init(&mut self, init: &Init, span: Span) {
        match init {
            Init::List(items) => items.iter().for_each(|i| self.init(i, span)),
            Init::Expr(e) | Init::Named { value: NamedValue::Expr(e), .. } => self.const_expr(e, span),
            Init::Named { .. } => {}
        }
    }

    fn const_expr(&mut self, e: &ConstExpr, span: Span) {
        match e {
            ConstExpr::Global(g) | ConstExpr::Generic(g) if g.index() >= self.module.globals.len() => {
                self.error(span, "initializer names a variable out of range".into())
            }
            ConstExpr::Func(f) if f.index() >= self.module.functions.len() => {
                self.error(span, "initializer names a function out of range".into())
            }
            ConstExpr::Unary(_, a) => self.const_expr(a, span),
            ConstExpr::Binary(_, a, b) => {
                self.const_expr(a, span);
                self.const_expr(b, span);
            }
            _ => {}
        }
    }

    fn function(&mut self, func: &'m Function) {
        if func.is_kernel() {
            if !func.returns.is_empty() {
                self.error(func.span, format!("kernel `{}` cannot have return parameters", func.name));
            }
            if let Some(p) = func.params.iter().find(|p| p.space != StateSpace::Param) {
                self.error(
                    func.span,
                    format!(
                        "kernel `{}` parameter `{}` must be in `.param` space",
                        func.name,
                        p.name.as_deref().unwrap_or("_")
                    ),
                );
            }
        }
        if func.linkage == Linkage::Extern && func.body.is_some() {
            self.error(func.span, format!("`.extern` function `{}` cannot have a body", func.name));
        }
        if let Some(body) = &func.body {
            BodyVerifier { v: self, func, body }.run();
        }
    }
}

struct BodyVerifier<'v, 'm> {
    v: &'v mut Verifier<'m>,
    func: &'m Function,
    body: &'m Body,
}

impl BodyVerifier<'_, '_> {
    fn error(&mut self, span: Span, message: String) {
        let message = format!("in `{}`: {message}", self.func.name);
        self.v.error(span, message);
    }

    fn run(&mut self) {
        let body = self.body;
        if body.blocks.is_empty() {
            self.error(self.func.span, "a function body needs at least one block".into());
            return;
        }
        // B1, B2
        let mut next = 0usize;
        for (block, data) in body.blocks.iter() {
            for (pos, &i) in data.insts.iter().enumerate() {
                if i.index() != next {
                    self.error(self.func.span, format!("{block} lists {i} out of layout order"));
                    return;
                }
                next += 1;
                let inst = &body.insts[i];
                if inst.is_terminator() && pos + 1 != data.insts.len() {
                    self.error(
                        inst.span,
                        format!("`{}` ends a basic block but is followed by more instructions", inst.opcode),
                    );
                }
            }
        }
        if next != body.insts.len() {
            self.error(self.func.span, format!("blocks list {next} of {} instructions", body.insts.len()));
            return;
        }
        // B4: unique names
        let mut names = FxHashSet::default();
        for b in body.blocks.values() {
            if let Some(l) = &b.label {
                if !names.insert(l.as_str()) {
                    self.error(self.func.span, format!("label `{l}` is defined twice"));
                }
            }
        }
        let mut names = FxHashSet::default();
        let decl_names = body
            .reg_decls
            .iter()
            .map(|d| d.name.as_str())
            .chain(body.vars.values().map(|v| v.name.as_str()))
            .chain(body.tables.values().map(|t| t.name.as_str()))
            .chain(body.prototypes.values().map(|p| p.name.as_str()));
        for name in decl_names {
            if !names.insert(name) {
                self.error(self.func.span, format!("`{name}` is declared twice"));
            }
        }
        for d in &body.reg_decls {
            let count = d.count.unwrap_or(1) as usize;
            if d.first.index() + count > body.regs.len() {
                self.error(self.func.span, format!("register declaration `{}` is out of range", d.name));
            }
        }
        for table in body.tables.values() {
            match &table.targets {
                TableTargets::Branch(t) => {
                    for &b in t {
                        if b.index() >= body.blocks.len() || body.blocks[b].label.is_none() {
                            self.error(
                                self.func.span,
                                format!("`.branchtargets` table `{}` names a block without label", table.name),
                            );
                        }
                    }
                }
                TableTargets::Call(t) => {
                    if t.iter().any(|f| f.index() >= self.v.module.functions.len()) {
                        self.error(self.func.span, format!("`.calltargets` table `{}` is out of range", table.name));
                    }
                }
            }
        }
        for inst in body.insts.values() {
            self.inst(inst);
        }
    }

    fn reg_size(&self, r: RegId) -> Option<u32> {
        self.body.regs.get(r).map(|reg| reg.ty.size() * u32::from(reg.vector.unwrap_or(1)))
    }

    fn is_pred(&self, r: RegId) -> bool {
        self.body.regs.get(r).is_some_and(|reg| reg.ty == ScalarType::Pred)
    }

    /// B3 for one operand, recursively.
    fn ids_in_range(&mut self, inst: &Inst, op: &Operand) -> bool {
        let body = self.body;
        let m = self.v.module;
        let symbol_ok = |s: Symbol| match s {
            Symbol::Global(g) => g.index() < m.globals.len(),
            Symbol::Local(v) => v.index() < body.vars.len(),
            Symbol::Param(i) => (i as usize) < self.func.params.len(),
            Symbol::Return(i) => (i as usize) < self.func.returns.len(),
            Symbol::Func(f) => f.index() < m.functions.len(),
        };
        let ok = match op {
            Operand::Reg(r)
            | Operand::RegElement(r, _)
            | Operand::Select(r, _)
            | Operand::Not(r)
            | Operand::Neg(r, _) => r.index() < body.regs.len(),
            Operand::Pair(a, b) => a.index() < body.regs.len() && b.index() < body.regs.len(),
            Operand::Address(a) => match a.base {
                AddressBase::Reg(r) => r.index() < body.regs.len(),
                AddressBase::Symbol(s) => symbol_ok(s),
                AddressBase::Absolute(_) => true,
            },
            Operand::Vector(items) | Operand::Bracket(items) | Operand::List(items) => {
                return items.iter().all(|o| self.ids_in_range(inst, o))
            }
            Operand::VectorPair(items, p) => {
                return p.index() < body.regs.len() && items.iter().all(|o| self.ids_in_range(inst, o))
            }
            Operand::Label(b) => {
                if b.index() < body.blocks.len() && body.blocks[*b].label.is_none() {
                    self.error(inst.span, format!("branch to {b}, which has no label"));
                }
                b.index() < body.blocks.len()
            }
            Operand::Symbol(s) | Operand::SymbolOffset(s, _) => symbol_ok(*s),
            Operand::Table(t) => t.index() < body.tables.len(),
            Operand::Prototype(p) => p.index() < body.prototypes.len(),
            Operand::Special(..) | Operand::Imm(_) | Operand::Sink => true,
        };
        if !ok {
            self.error(inst.span, format!("`{}` has an operand that refers to an entity out of range", inst.opcode));
        }
        ok
    }

    fn inst(&mut self, inst: &Inst) {
        if !inst.operands.iter().all(|o| self.ids_in_range(inst, o)) {
            return;
        }
        if let Some(g) = inst.guard {
            if g.reg.index() >= self.body.regs.len() || !self.is_pred(g.reg) {
                self.error(inst.span, format!("the guard of `{}` must be a `.pred` register", inst.opcode));
            }
        }
        self.arity(inst);
        self.destination(inst);
        self.control(inst);
        self.memory(inst);
        self.types(inst);
        if inst.opcode == Opcode::Mov {
            self.pack(inst);
        }
    }

    /// B6: operand counts.
    fn arity(&mut self, inst: &Inst) {
        use Opcode::*;
        let n = inst.operands.len();
        let (lo, hi) = match inst.opcode {
            Abs | Neg | Not | Cnot | Popc | Clz | Brev | Bfind | Rcp | Sqrt | Rsqrt | Sin | Cos | Lg2 | Ex2 | Tanh
            | Mov | Cvta | Testp | Isspacep => (2, 2),
            Cvt => (2, 4),
            Add | Sub | Mul | Div | Rem | And | Or | Xor | Shl | Shr | Addc | Subc | Mul24 | Copysign | Szext
            | Bmsk => (3, 3),
            Min | Max => (3, 4),
            Mad | Madc | Mad24 | Fma | Sad | Slct | Selp | Shf | Prmt | Dp4a | Dp2a | Fns => (4, 4),
            Bfe => (4, 4),
            Bfi => (5, 5),
            Lop3 => (5, 6),
            Setp | Set => (3, 4),
            Ld | Ldu => (2, 3),
            St => (2, 3),
            Atom => (3, 5),
            Red => (2, 4),
            Bra => (1, 1),
            Brx => (2, 2),
            Call => (1, 4),
            Ret | Exit | Trap | Brkpt | Membar => (0, 0),
            // `fence.proxy.tensormap::generic.acquire.scope [addr], 128`.
            Fence => (0, 2),
            Bar | Barrier => (0, 4),
            Shfl => (4, 5),
            Vote => (2, 3),
            Match => (3, 4),
            Redux => (3, 3),
            Activemask => (1, 1),
            Nanosleep | Pmevent => (1, 1),
            Prefetch | Prefetchu => (1, 1),
            _ => return,
        };
        if n < lo || n > hi {
            let expected = if lo == hi { lo.to_string() } else { format!("{lo} to {hi}") };
            self.error(inst.span, format!("`{}` takes {expected} operands, found {n}", inst.mnemonic()));
        }
    }

    /// B6: the first operand of a value-producing instruction is something a value can be written to.
    fn destination(&mut self, inst: &Inst) {
        use Opcode::*;
        let writes = matches!(
            inst.opcode,
            Abs | Neg
                | Not
                | Cnot
                | Popc
                | Clz
                | Brev
                | Bfind
                | Rcp
                | Sqrt
                | Rsqrt
                | Sin
                | Cos
                | Lg2
                | Ex2
                | Tanh
                | Mov
                | Cvta
                | Testp
                | Isspacep
                | Cvt
                | Add
                | Sub
                | Mul
                | Div
                | Rem
                | And
                | Or
                | Xor
                | Shl
                | Shr
                | Addc
                | Subc
                | Mul24
                | Copysign
                | Min
                | Max
                | Mad
                | Madc
                | Mad24
                | Fma
                | Sad
                | Slct
                | Selp
                | Shf
                | Prmt
                | Dp4a
                | Dp2a
                | Fns
                | Bfe
                | Bfi
                | Lop3
                | Setp
                | Set
                | Ld
                | Ldu
                | Atom
                | Shfl
                | Vote
                | Match
                | Redux
                | Activemask
                | Szext
                | Bmsk
        );
        if !writes {
            return;
        }
        let ok = match inst.operands.first() {
            Some(
                Operand::Reg(_) | Operand::RegElement(..) | Operand::Select(..) | Operand::Pair(..) | Operand::Sink,
            ) => true,
            Some(Operand::VectorPair(..)) => true,
            Some(Operand::Vector(items)) => {
                items.iter().all(|o| matches!(o, Operand::Reg(_) | Operand::RegElement(..) | Operand::Sink))
            }
            _ => false,
        };
        if !ok {
            self.error(inst.span, format!("the destination of `{}` must be a register", inst.opcode));
        }
    }

    /// B8: branches and calls.
    fn control(&mut self, inst: &Inst) {
        match inst.opcode {
            Opcode::Bra if !matches!(inst.operands.first(), Some(Operand::Label(_))) => {
                self.error(inst.span, "`bra` needs a label operand".into());
            }
            Opcode::Brx => {
                let table_ok = match inst.operands.get(1) {
                    Some(Operand::Table(t)) => matches!(self.body.tables[*t].targets, TableTargets::Branch(_)),
                    _ => false,
                };
                if !matches!(inst.operands.first(), Some(Operand::Reg(_))) || !table_ok {
                    self.error(inst.span, "`brx.idx` needs an index register and a `.branchtargets` table".into());
                }
            }
            Opcode::Call => self.call(inst),
            _ => {}
        }
    }

    fn call(&mut self, inst: &Inst) {
        let ops = &inst.operands;
        let (returns, rest) = match ops.first() {
            Some(Operand::List(r)) => (Some(r), &ops[1..]),
            _ => (None, &ops[..]),
        };
        let Some(target) = rest.first() else {
            self.error(inst.span, "`call` needs a target".into());
            return;
        };
        let args = match rest.get(1) {
            Some(Operand::List(a)) => Some(a),
            _ => None,
        };
        let callee = match target {
            Operand::Symbol(Symbol::Func(f)) => Some(&self.v.module.functions[*f]),
            Operand::Reg(_) => {
                let typed = rest.iter().skip(1).any(|o| matches!(o, Operand::Prototype(_) | Operand::Table(_)));
                if !typed {
                    self.error(
                        inst.span,
                        "an indirect `call` needs a `.callprototype` or `.calltargets` operand".into(),
                    );
                }
                None
            }
            _ => {
                self.error(inst.span, "`call` target must be a function or a register".into());
                None
            }
        };
        if let Some(callee) = callee {
            let nret = returns.map_or(0, |r| r.len());
            let nargs = args.map_or(0, |a| a.len());
            // More return values than the callee has are accepted, as NVIDIA's linker accepts them (Numba
            // declares C-ABI `void` functions with a return value their definitions lack); they get no value.
            if nret < callee.returns.len() || nargs != callee.params.len() {
                self.error(
                    inst.span,
                    format!(
                        "call to `{}` passes {nret} return value(s) and {nargs} argument(s); it declares {} and {}",
                        callee.name,
                        callee.returns.len(),
                        callee.params.len()
                    ),
                );
            }
        }
    }

    /// B9: memory operands.
    fn memory(&mut self, inst: &Inst) {
        use Opcode::*;
        let addr_index = match inst.opcode {
            Ld | Ldu | Atom => 1,
            St | Red | Prefetch | Prefetchu => 0,
            _ => return,
        };
        if !matches!(inst.operands.get(addr_index), Some(Operand::Address(_))) {
            self.error(
                inst.span,
                format!("operand {} of `{}` must be an address `[...]`", addr_index + 1, inst.mnemonic()),
            );
        }
        if let Some(width) = inst.vector() {
            let data = match inst.opcode {
                Ld | Ldu | Atom => inst.operands.first(),
                St | Red => inst.operands.get(1),
                _ => None,
            };
            match data {
                Some(Operand::Vector(items)) if items.len() == usize::from(width) => {}
                Some(Operand::Reg(r)) if self.body.regs[*r].vector == Some(width) => {}
                _ => self.error(inst.span, format!("`{}` needs a vector of {width} operands", inst.mnemonic())),
            }
        }
    }

    /// B7 for `mov`'s pack and unpack (`mov.b64 d, {a, b}`, `mov.b32 {r, g, b, a}, x`): the PTX ISA (9.7.9.4)
    /// packs or unpacks two or four elements, the vector's overall size and the scalar's matching the type
    /// (ptxas: "Illegal vector size" for eight, "Arguments mismatch" for sizes that do not add up).
    fn pack(&mut self, inst: &Inst) {
        let Some(ty) = inst.ty() else { return };
        let items = match inst.operands.as_slice() {
            [Operand::Vector(_), Operand::Vector(_)] => return,
            [Operand::Vector(items), _] | [_, Operand::Vector(items)] => items,
            _ => return,
        };
        let n = items.len() as u32;
        let sizes: Vec<u32> = items
            .iter()
            .filter_map(|o| match o {
                Operand::Reg(r) => self.reg_size(*r),
                Operand::RegElement(r, _) => self.body.regs.get(*r).map(|reg| reg.ty.size()),
                _ => None,
            })
            .collect();
        let fits = matches!(n, 2 | 4) && sizes.iter().all(|s| s * n == ty.size());
        if !fits {
            self.error(
                inst.span,
                format!(
                    "`{}` packs or unpacks two or four elements whose sizes add up to the type's {} bits (PTX ISA \
                     9.7.9.4); this vector has {n}",
                    inst.mnemonic(),
                    ty.size() * 8
                ),
            );
        }
    }

    /// B7: register sizes against the instruction type.
    fn types(&mut self, inst: &Inst) {
        use Opcode::*;
        let Some(ty) = inst.ty() else { return };
        let size = ty.size();
        let ops = &inst.operands;
        // (operand index, expected size or `None` for a predicate, wider allowed)
        let mut expect: smallvec::SmallVec<[(usize, Option<u32>, bool); 6]> = smallvec::SmallVec::new();
        let wide = inst.has(Word::Wide);
        let bool_type = ty == ScalarType::Pred;
        let sized = |s: u32| if bool_type { None } else { Some(s) };
        match inst.opcode {
            Add | Sub | Mul | Div | Rem | And | Or | Xor | Min | Max | Copysign | Addc | Subc | Mul24 => {
                let d = if wide { size * 2 } else { size };
                expect.extend([(0, sized(d), false), (1, sized(size), false), (2, sized(size), false)]);
            }
            Abs | Neg | Not | Rcp | Sqrt | Rsqrt | Sin | Cos | Lg2 | Ex2 | Tanh | Brev | Cnot => {
                expect.extend([(0, sized(size), false), (1, sized(size), false)]);
            }
            Mov => expect.extend([(0, sized(size), false), (1, sized(size), false)]),
            Popc | Clz | Bfind => expect.extend([(0, Some(4), false), (1, Some(size), false)]),
            Mad | Fma | Madc | Mad24 => {
                let d = if wide { size * 2 } else { size };
                expect.extend([
                    (0, Some(d), false),
                    (1, Some(size), false),
                    (2, Some(size), false),
                    (3, Some(d), false),
                ]);
            }
            Shl | Shr => expect.extend([(0, Some(size), false), (1, Some(size), false), (2, Some(4), false)]),
            Bfe => expect.extend([
                (0, Some(size), false),
                (1, Some(size), false),
                (2, Some(4), false),
                (3, Some(4), false),
            ]),
            Bfi => expect.extend([
                (0, Some(size), false),
                (1, Some(size), false),
                (2, Some(size), false),
                (3, Some(4), false),
                (4, Some(4), false),
            ]),
            Selp => expect.extend([
                (0, Some(size), false),
                (1, Some(size), false),
                (2, Some(size), false),
                (3, None, false),
            ]),
            Setp => {
                expect.extend([(0, None, false), (1, Some(size), false), (2, Some(size), false)]);
                if ops.len() == 4 {
                    expect.push((3, None, false));
                }
            }
            Testp => expect.extend([(0, None, false), (1, Some(size), false)]),
            Cvt => {
                if let Some(src) = inst.types().nth(1) {
                    expect.extend([(0, Some(size), true), (1, Some(src.size()), true)]);
                }
            }
            Ld | Ldu if inst.vector().is_none() => expect.push((0, sized(size), true)),
            St if inst.vector().is_none() => expect.push((1, sized(size), true)),
            _ => {}
        }
        for (index, want, wider_ok) in expect {
            let Some(Operand::Reg(r)) = ops.get(index) else { continue };
            let r = *r;
            let ok = match want {
                None => self.is_pred(r),
                Some(want) => {
                    let have = self.reg_size(r).unwrap_or(0);
                    !self.is_pred(r) && (have == want || (wider_ok && have >= want))
                }
            };
            if !ok {
                let reg = &self.body.regs[r];
                let what = match want {
                    None => "a `.pred` register".to_string(),
                    Some(w) => format!("a {}-bit register", w * 8),
                };
                self.error(
                    inst.span,
                    format!(
                        "operand {} of `{}` must be {what}, found `{}` (.{})",
                        index + 1,
                        inst.mnemonic(),
                        self.body.reg_name(r),
                        reg.ty
                    ),
                );
            }
        }
    }
}
