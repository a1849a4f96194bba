//! Inlining of the device functions that need the kernel's thread loop.
//!
//! The JIT runs a CTA's threads as a loop in the kernel function and can stop a thread (to let the others
//! catch up) only there. A device function that contains a barrier (`bar`/`barrier`, `bar.warp.sync`
//! included), a warp collective (`shfl`, `vote`, `match`, `redux`, `activemask`, `elect`), a warp matrix
//! instruction (`wmma`, `mma`, `ldmatrix`, ...) or a texture/surface instruction (all yield points of the
//! JIT's plan), directly or through its callees, is therefore copied into the kernel at each call site. nvcc
//! `-G` keeps such functions out of line (the `__shfl_down_sync` and `__syncwarp` wrappers,
//! `__syncthreads_count`, `tex2D`, ...). [`needs_thread_loop_inst`] is the one place that decides.
//!
//! Inlining one call site (the PTX ABI as `ir::lower` builds it):
//! - the caller block is split after the call; the callee's blocks go in between, its `ret` becomes a `bra` to
//!   the continuation block (a guarded `ret` a guarded `bra`), a guarded call branches around the body;
//! - the callee's registers, `.local`/`.param` variables, labels, tables and prototypes get fresh names
//!   `__inl<K>_<name>` (`%__inl<K>_<name>` for `%` names); its `.shared` (and other static) variables are
//!   copied once per function, since they exist once per CTA;
//! - `Symbol::Param(i)` becomes the caller's argument variable (copied into a fresh `.param` variable first when
//!   the callee may write it or takes its address, as the callee works on a copy); a register or immediate
//!   argument is stored into a fresh `.param` variable before the body;
//! - `Symbol::Return(i)` becomes the caller's return variable; a register return gets a fresh `.param`
//!   variable that is loaded into the register after the body;
//! - copied instructions keep their `span` (so errors point at the callee's PTX lines) and `.loc`.
//!
//! Rounds repeat until no call of such a function is left in the kernel (callees of callees come in with
//! the inlined bodies); recursion among them is an error, found before anything is inlined.

use std::collections::{HashMap, HashSet};

use graph::cranelift_entity::EntityRef;
use ir::{
    Address, AddressBase, Block, BlockId, Body, FuncId, Guard, Immediate, Inst, Item, Linkage, Modifier, Module,
    Opcode, Operand, Param, RegDecl, RegId, Register, ScalarType, StateSpace, Symbol, TableTargets, VarId, Variable,
};
use smallvec::{smallvec, SmallVec};

/// Whether an instruction needs the kernel's thread loop (the JIT's yield points, `plan::yield_kind`): a
/// barrier (`bar`/`barrier`, `bar.warp.sync` included: the JIT meets the warp there), a warp collective, a
/// warp-level matrix instruction, a texture or surface instruction (the runtime runs those for the warp), or
/// an mbarrier wait (a thread that fails one stops for the others).
pub fn needs_thread_loop_inst(inst: &Inst) -> bool {
    use Opcode::*;
    let wait = inst.opcode == Mbarrier && (inst.has(ir::Word::TestWait) || inst.has(ir::Word::TryWait));
    wait || matches!(
        inst.opcode,
        Bar | Barrier
            | Shfl
            | Vote
            | Match
            | Redux
            | Activemask
            | Elect
            | Wmma
            | Mma
            | Ldmatrix
            | Stmatrix
            | Movmatrix
            | Wgmma
            | Tex
            | Tld4
            | Txq
            | Suld
            | Sust
            | Suq
            | Sured
            | Istypep
    )
}

/// For every function of the module (by [`FuncId`] index): whether it needs the kernel's thread loop, itself
/// or through a function it calls directly (an `.alias` counts as its aliasee). Functions without body do not.
pub fn needs_thread_loop(module: &Module) -> Vec<bool> {
    let aliases = Aliases::new(module);
    let mut needs: Vec<bool> = module
        .functions
        .values()
        .map(|f| f.body.as_ref().is_some_and(|b| b.insts.values().any(needs_thread_loop_inst)))
        .collect();
    let callees: Vec<Vec<FuncId>> = module
        .functions
        .values()
        .map(|f| {
            let Some(body) = &f.body else { return Vec::new() };
            body.insts.values().filter_map(|i| direct_callee(i).map(|g| aliases.resolve(g))).collect()
        })
        .collect();
    loop {
        let mut changed = false;
        for f in 0..needs.len() {
            if !needs[f] && callees[f].iter().any(|g| needs[g.index()]) {
                needs[f] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for (f, _) in module.functions.iter() {
        let target = aliases.resolve(f);
        if target != f {
            needs[f.index()] = needs[target.index()];
        }
    }
    needs
}

/// Inlines, into `kernel`, every call (transitively) of a function that needs the kernel's thread loop
/// (barriers, warp collectives). Returns `Ok(None)` when there is nothing to inline, `Ok(Some(module))` with a
/// new module whose kernel body has the calls replaced, or `Err(message)` (recursion among such functions,
/// indirect call to one, a callee without body).
pub fn inline_for_kernel(module: &Module, kernel: FuncId) -> Result<Option<Module>, String> {
    let Some(kbody) = module.functions.get(kernel).and_then(|f| f.body.as_ref()) else { return Ok(None) };
    let aliases = Aliases::new(module);
    let needs = needs_thread_loop(module);
    check(module, kernel, &needs, &aliases)?;
    let cx = Cx { module, kernel, needs: &needs, aliases: &aliases };
    if !cx.has_inlinable_call(kbody) {
        return Ok(None);
    }
    let mut state = State { used_prefixes: HashSet::new(), next_prefix: 0, statics: HashMap::new() };
    let module_names =
        module.globals.values().map(|g| g.name.as_str()).chain(module.functions.values().map(|f| f.name.as_str()));
    for name in module_names.chain(body_names(kbody)) {
        if let Some(run) = prefix_digits(name) {
            state.used_prefixes.insert(run.to_string());
        }
    }
    let mut body = kbody.clone();
    let mut rounds = 0;
    while cx.has_inlinable_call(&body) {
        rounds += 1;
        if rounds > module.functions.len() + 1 {
            return Err(format!("inlining into `{}` does not terminate", module.functions[kernel].name));
        }
        body = Round::new(&cx, &body, &mut state).run()?;
    }
    let mut out = module.clone();
    out.functions[kernel].body = Some(body);
    Ok(Some(out))
}

/// `.alias` resolution.
struct Aliases(HashMap<FuncId, FuncId>);

impl Aliases {
    fn new(module: &Module) -> Aliases {
        Aliases(
            module
                .items
                .iter()
                .filter_map(|i| match *i {
                    Item::Alias { alias, aliasee } => Some((alias, aliasee)),
                    _ => None,
                })
                .collect(),
        )
    }

    fn resolve(&self, mut f: FuncId) -> FuncId {
        for _ in 0..=self.0.len() {
            match self.0.get(&f) {
                Some(&g) if g != f => f = g,
                _ => break,
            }
        }
        f
    }
}

/// The operands of a `call`: return values, target, arguments.
fn call_parts(inst: &Inst) -> Option<(&[Operand], &Operand, &[Operand])> {
    if inst.opcode != Opcode::Call {
        return None;
    }
    let ops = &inst.operands[..];
    let (rets, rest): (&[Operand], &[Operand]) = match ops.first() {
        Some(Operand::List(r)) => (r, &ops[1..]),
        _ => (&[], ops),
    };
    let target = rest.first()?;
    let args: &[Operand] = match rest.get(1) {
        Some(Operand::List(a)) => a,
        _ => &[],
    };
    Some((rets, target, args))
}

/// The function a direct `call` names (before alias resolution).
fn direct_callee(inst: &Inst) -> Option<FuncId> {
    match call_parts(inst)? {
        (_, Operand::Symbol(Symbol::Func(f)), _) => Some(*f),
        _ => None,
    }
}

/// Errors found before anything is inlined: recursion among functions that need the thread loop, and
/// indirect calls that may reach one (from the kernel or any function it calls).
fn check(module: &Module, kernel: FuncId, needs: &[bool], aliases: &Aliases) -> Result<(), String> {
    let name = |f: FuncId| module.functions[f].name.as_str();
    // Functions whose address is taken: the possible targets of an indirect call without `.calltargets`.
    let mut taken: Vec<FuncId> = Vec::new();
    {
        let mut note = |f: FuncId| {
            let f = aliases.resolve(f);
            if !taken.contains(&f) {
                taken.push(f);
            }
        };
        for g in module.globals.values() {
            if let Some(init) = &g.init {
                init_funcs(init, &mut note);
            }
        }
        for f in module.functions.values() {
            let Some(body) = &f.body else { continue };
            for v in body.vars.values() {
                if let Some(init) = &v.init {
                    init_funcs(init, &mut note);
                }
            }
            for inst in body.insts.values() {
                let skip = direct_callee(inst)
                    .is_some()
                    .then_some(usize::from(matches!(inst.operands.first(), Some(Operand::List(_)))));
                for (k, op) in inst.operands.iter().enumerate() {
                    if Some(k) != skip {
                        operand_funcs(op, &mut note);
                    }
                }
            }
            for t in body.tables.values() {
                if let TableTargets::Call(targets) = &t.targets {
                    targets.iter().for_each(|&g| note(g));
                }
            }
        }
    }
    // Every function reachable by direct calls: no indirect call there may reach a function that needs the
    // thread loop.
    let mut seen = vec![false; module.functions.len()];
    let mut stack = vec![kernel];
    while let Some(f) = stack.pop() {
        if std::mem::replace(&mut seen[f.index()], true) {
            continue;
        }
        let Some(body) = &module.functions[f].body else { continue };
        for inst in body.insts.values() {
            let Some((_, target, _)) = call_parts(inst) else { continue };
            match target {
                Operand::Symbol(Symbol::Func(g)) => stack.push(aliases.resolve(*g)),
                _ => {
                    let table = inst.operands.iter().find_map(|o| match o {
                        Operand::Table(t) => match &body.tables[*t].targets {
                            TableTargets::Call(ts) => Some(ts.clone()),
                            TableTargets::Branch(_) => None,
                        },
                        _ => None,
                    });
                    let targets = table.unwrap_or_else(|| taken.clone());
                    if let Some(&g) = targets.iter().find(|&&g| needs[aliases.resolve(g).index()]) {
                        return Err(format!(
                            "`{}` makes an indirect call that may reach `{}`, which uses barriers or warp \
                             collectives and would have to be inlined into kernel `{}`",
                            name(f),
                            name(g),
                            name(kernel)
                        ));
                    }
                }
            }
        }
    }
    // Recursion among the functions that need the thread loop, reachable from the kernel.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; module.functions.len()];
    let mut path: Vec<FuncId> = Vec::new();
    fn visit(
        module: &Module,
        f: FuncId,
        needs: &[bool],
        aliases: &Aliases,
        mark: &mut [Mark],
        path: &mut Vec<FuncId>,
    ) -> Result<(), String> {
        mark[f.index()] = Mark::Open;
        path.push(f);
        if let Some(body) = &module.functions[f].body {
            for inst in body.insts.values() {
                let Some(g) = direct_callee(inst).map(|g| aliases.resolve(g)) else { continue };
                if !needs[g.index()] {
                    continue;
                }
                match mark[g.index()] {
                    Mark::Open => {
                        let start = path.iter().position(|&p| p == g).unwrap_or(0);
                        let cycle: Vec<&str> =
                            path[start..].iter().chain([&g]).map(|&p| module.functions[p].name.as_str()).collect();
                        return Err(format!(
                            "recursion among functions that use barriers or warp collectives cannot be inlined: {}",
                            cycle.join(" -> ")
                        ));
                    }
                    Mark::New => visit(module, g, needs, aliases, mark, path)?,
                    Mark::Done => {}
                }
            }
        }
        path.pop();
        mark[f.index()] = Mark::Done;
        Ok(())
    }
    visit(module, kernel, needs, aliases, &mut mark, &mut path)
}

fn init_funcs(init: &ir::Init, note: &mut impl FnMut(FuncId)) {
    fn expr(e: &ir::ConstExpr, note: &mut impl FnMut(FuncId)) {
        match e {
            ir::ConstExpr::Func(f) => note(*f),
            ir::ConstExpr::Unary(_, a) => expr(a, note),
            ir::ConstExpr::Binary(_, a, b) => {
                expr(a, note);
                expr(b, note);
            }
            _ => {}
        }
    }
    match init {
        ir::Init::Expr(e) | ir::Init::Named { value: ir::NamedValue::Expr(e), .. } => expr(e, note),
        ir::Init::List(items) => items.iter().for_each(|i| init_funcs(i, note)),
        ir::Init::Named { .. } => {}
    }
}

fn operand_funcs(op: &Operand, note: &mut impl FnMut(FuncId)) {
    match op {
        Operand::Symbol(Symbol::Func(f)) | Operand::SymbolOffset(Symbol::Func(f), _) => note(*f),
        Operand::Address(Address { base: AddressBase::Symbol(Symbol::Func(f)), .. }) => note(*f),
        Operand::Vector(items) | Operand::Bracket(items) | Operand::List(items) | Operand::VectorPair(items, _) => {
            items.iter().for_each(|o| operand_funcs(o, note))
        }
        _ => {}
    }
}

/// Every name declared in a body (registers, variables, tables, prototypes, labels).
fn body_names(body: &Body) -> impl Iterator<Item = &str> + '_ {
    body.reg_decls
        .iter()
        .map(|d| d.name.as_str())
        .chain(body.vars.values().map(|v| v.name.as_str()))
        .chain(body.tables.values().map(|t| t.name.as_str()))
        .chain(body.prototypes.values().map(|p| p.name.as_str()))
        .chain(body.blocks.values().filter_map(|b| b.label.as_deref()))
}

/// The digits after `__inl` in a name of the form `[%]__inl<digits>...`: names the inliner would make with
/// that prefix number could clash with it.
fn prefix_digits(name: &str) -> Option<&str> {
    let rest = name.strip_prefix('%').unwrap_or(name).strip_prefix("__inl")?;
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    (n > 0).then(|| &rest[..n])
}

struct Cx<'m> {
    module: &'m Module,
    kernel: FuncId,
    needs: &'m [bool],
    aliases: &'m Aliases,
}

impl Cx<'_> {
    /// The function to inline at this instruction, if it is a call of one.
    fn inline_target(&self, inst: &Inst) -> Option<FuncId> {
        let f = self.aliases.resolve(direct_callee(inst)?);
        self.needs[f.index()].then_some(f)
    }

    fn has_inlinable_call(&self, body: &Body) -> bool {
        body.insts.values().any(|i| self.inline_target(i).is_some())
    }
}

/// What persists across rounds.
struct State {
    /// Prefix numbers in use (as written after `__inl`).
    used_prefixes: HashSet<String>,
    next_prefix: u32,
    /// The kernel variable each static (`.shared`, ...) variable of an inlined function became.
    statics: HashMap<(FuncId, VarId), VarId>,
}

impl State {
    fn fresh_prefix(&mut self) -> u32 {
        loop {
            let k = self.next_prefix;
            self.next_prefix += 1;
            if self.used_prefixes.insert(k.to_string()) {
                return k;
            }
        }
    }
}

/// One pass over the kernel body that inlines every call of a function that needs the thread loop (calls
/// inside the inlined bodies are left for the next round).
struct Round<'a, 'm> {
    cx: &'a Cx<'m>,
    old: &'a Body,
    new: Body,
    /// Per new instruction: whether it came from the old kernel body (its labels are old block ids).
    from_kernel: Vec<bool>,
    /// New id of each old block.
    block_map: Vec<BlockId>,
    state: &'a mut State,
}

fn bits_type(bytes: u64) -> Option<ScalarType> {
    Some(match bytes {
        1 => ScalarType::B8,
        2 => ScalarType::B16,
        4 => ScalarType::B32,
        8 => ScalarType::B64,
        _ => return None,
    })
}

fn unsigned_type(bytes: u64) -> Option<ScalarType> {
    Some(match bytes {
        1 => ScalarType::U8,
        2 => ScalarType::U16,
        4 => ScalarType::U32,
        8 => ScalarType::U64,
        _ => return None,
    })
}

/// Per parameter of a body: whether the body may write it or take its address (anything but `ld` from it or
/// passing it on as a call argument), so that inlining must work on a copy.
fn params_written(body: &Body, count: usize) -> Vec<bool> {
    fn mark(op: &Operand, out: &mut [bool]) {
        match op {
            Operand::Symbol(Symbol::Param(i))
            | Operand::SymbolOffset(Symbol::Param(i), _)
            | Operand::Address(Address { base: AddressBase::Symbol(Symbol::Param(i)), .. }) => {
                if let Some(w) = out.get_mut(*i as usize) {
                    *w = true;
                }
            }
            Operand::Vector(items) | Operand::Bracket(items) | Operand::List(items) | Operand::VectorPair(items, _) => {
                items.iter().for_each(|o| mark(o, out))
            }
            _ => {}
        }
    }
    let mut out = vec![false; count];
    for inst in body.insts.values() {
        let args_at =
            call_parts(inst).map(|_| usize::from(matches!(inst.operands.first(), Some(Operand::List(_)))) + 1);
        for (k, op) in inst.operands.iter().enumerate() {
            let read_only = match inst.opcode {
                Opcode::Ld | Opcode::Ldu => k == 1,
                Opcode::Call => Some(k) == args_at && matches!(op, Operand::List(_)),
                _ => false,
            };
            let passes_value = read_only
                && match op {
                    Operand::List(items) => {
                        // Arguments passed by name are copied into the callee; anything else counts.
                        items.iter().for_each(|o| {
                            if !matches!(o, Operand::Symbol(_)) {
                                mark(o, &mut out)
                            }
                        });
                        true
                    }
                    Operand::Address(_) => true,
                    _ => false,
                };
            if !passes_value {
                mark(op, &mut out);
            }
        }
    }
    out
}

fn inst(opcode: Opcode, modifiers: &[Modifier], operands: SmallVec<[Operand; 4]>, like: &Inst) -> Inst {
    Inst {
        guard: None,
        opcode,
        modifiers: modifiers.iter().copied().collect(),
        operands,
        span: like.span,
        loc: like.loc,
    }
}

fn address(s: Symbol, offset: i64) -> Operand {
    Operand::Address(Address { base: AddressBase::Symbol(s), offset })
}

fn remap_labels(op: &mut Operand, map: &[BlockId]) {
    match op {
        Operand::Label(b) => *b = map[b.index()],
        Operand::Vector(items) | Operand::Bracket(items) | Operand::List(items) | Operand::VectorPair(items, _) => {
            items.iter_mut().for_each(|o| remap_labels(o, map))
        }
        _ => {}
    }
}

/// How the names and ids of one inlined body map into the kernel.
struct Mapping {
    prefix: String,
    reg_base: usize,
    proto_base: usize,
    table_base: usize,
    block_base: usize,
    loc_base: u32,
    vars: Vec<VarId>,
    params: Vec<Symbol>,
    returns: Vec<Symbol>,
}

impl Mapping {
    fn name(&self, n: &str) -> String {
        match n.strip_prefix('%') {
            Some(rest) => format!("%{}{rest}", self.prefix),
            None => format!("{}{n}", self.prefix),
        }
    }

    fn reg(&self, r: RegId) -> RegId {
        RegId::new(self.reg_base + r.index())
    }

    fn symbol(&self, s: Symbol) -> Symbol {
        match s {
            Symbol::Local(v) => Symbol::Local(self.vars[v.index()]),
            Symbol::Param(i) => self.params[i as usize],
            Symbol::Return(i) => self.returns[i as usize],
            Symbol::Global(_) | Symbol::Func(_) => s,
        }
    }

    fn operand(&self, op: &Operand) -> Operand {
        match op {
            Operand::Reg(r) => Operand::Reg(self.reg(*r)),
            Operand::RegElement(r, c) => Operand::RegElement(self.reg(*r), *c),
            Operand::Select(r, c) => Operand::Select(self.reg(*r), *c),
            Operand::Not(r) => Operand::Not(self.reg(*r)),
            Operand::Neg(r, c) => Operand::Neg(self.reg(*r), *c),
            Operand::Pair(a, b) => Operand::Pair(self.reg(*a), self.reg(*b)),
            Operand::VectorPair(items, p) => {
                Operand::VectorPair(items.iter().map(|o| self.operand(o)).collect(), self.reg(*p))
            }
            Operand::Vector(items) => Operand::Vector(items.iter().map(|o| self.operand(o)).collect()),
            Operand::Bracket(items) => Operand::Bracket(items.iter().map(|o| self.operand(o)).collect()),
            Operand::List(items) => Operand::List(items.iter().map(|o| self.operand(o)).collect()),
            Operand::Address(a) => Operand::Address(Address {
                base: match a.base {
                    AddressBase::Reg(r) => AddressBase::Reg(self.reg(r)),
                    AddressBase::Symbol(s) => AddressBase::Symbol(self.symbol(s)),
                    AddressBase::Absolute(x) => AddressBase::Absolute(x),
                },
                offset: a.offset,
            }),
            Operand::Label(b) => Operand::Label(BlockId::new(self.block_base + b.index())),
            Operand::Symbol(s) => Operand::Symbol(self.symbol(*s)),
            Operand::SymbolOffset(s, off) => Operand::SymbolOffset(self.symbol(*s), *off),
            Operand::Table(t) => Operand::Table(ir::TableId::new(self.table_base + t.index())),
            Operand::Prototype(p) => Operand::Prototype(ir::ProtoId::new(self.proto_base + p.index())),
            Operand::Special(..) | Operand::Imm(_) | Operand::Sink => op.clone(),
        }
    }
}

impl<'a, 'm> Round<'a, 'm> {
    fn new(cx: &'a Cx<'m>, old: &'a Body, state: &'a mut State) -> Self {
        let new = Body {
            regs: old.regs.clone(),
            reg_decls: old.reg_decls.clone(),
            vars: old.vars.clone(),
            blocks: Default::default(),
            insts: Default::default(),
            prototypes: old.prototypes.clone(),
            tables: old.tables.clone(),
            locs: old.locs.clone(),
        };
        Round { cx, old, new, from_kernel: Vec::new(), block_map: Vec::new(), state }
    }

    fn run(mut self) -> Result<Body, String> {
        let old = self.old;
        for blk in old.blocks.values() {
            let nb = self.new.blocks.push(Block {
                label: blk.label.clone(),
                pragmas: blk.pragmas.clone(),
                insts: Vec::new(),
            });
            self.block_map.push(nb);
            for &i in &blk.insts {
                let inst = &old.insts[i];
                match self.cx.inline_target(inst) {
                    Some(f) => self.inline_call(inst, f)?,
                    None => self.push(inst.clone(), true),
                }
            }
        }
        let map = self.block_map;
        for (i, inst) in self.new.insts.iter_mut() {
            if self.from_kernel[i.index()] {
                inst.operands.iter_mut().for_each(|o| remap_labels(o, &map));
            }
        }
        for (t, table) in self.new.tables.iter_mut() {
            if t.index() >= old.tables.len() {
                break;
            }
            if let TableTargets::Branch(targets) = &mut table.targets {
                targets.iter_mut().for_each(|b| *b = map[b.index()]);
            }
        }
        Ok(self.new)
    }

    fn push(&mut self, inst: Inst, from_kernel: bool) {
        let id = self.new.insts.push(inst);
        self.from_kernel.push(from_kernel);
        let last = self.new.blocks.values_mut().next_back().expect("a block");
        last.insts.push(id);
    }

    fn new_block(&mut self, label: Option<String>, pragmas: Vec<String>) {
        self.new.blocks.push(Block { label, pragmas, insts: Vec::new() });
    }

    /// A fresh `.param` variable shaped like a parameter.
    fn param_var(&mut self, name: String, p: &Param, call: &Inst) -> VarId {
        self.new.vars.push(Variable {
            name,
            linkage: Linkage::Internal,
            space: StateSpace::Param,
            align: p.align,
            vector: p.vector,
            ty: if p.ty == ScalarType::Pred { ScalarType::B8 } else { p.ty },
            attributes: Vec::new(),
            dims: p.dims.clone(),
            init: None,
            span: call.span,
        })
    }

    /// Size and alignment of what a caller symbol names.
    fn symbol_extent(&self, s: Symbol) -> (u64, u64) {
        match s {
            Symbol::Local(v) => {
                let var = &self.new.vars[v];
                (device::module::variable_size(var), var.alignment())
            }
            Symbol::Param(k) => match self.cx.module.functions[self.cx.kernel].params.get(k as usize) {
                Some(p) => (p.size(), p.alignment()),
                None => (0, 1),
            },
            _ => (0, 1),
        }
    }

    fn inline_call(&mut self, call: &Inst, f: FuncId) -> Result<(), String> {
        let module = self.cx.module;
        let callee = &module.functions[f];
        let Some(cb) = &callee.body else {
            return Err(format!(
                "`{}` uses barriers or warp collectives and must be inlined, but has no body",
                callee.name
            ));
        };
        let (rets, _, args) = call_parts(call).expect("a call");
        if rets.len() != callee.returns.len() || args.len() != callee.params.len() {
            return Err(format!(
                "a call of `{}` passes {} return value(s) and {} argument(s); it declares {} and {}",
                callee.name,
                rets.len(),
                args.len(),
                callee.returns.len(),
                callee.params.len()
            ));
        }
        let k = self.state.fresh_prefix();
        let extra = |what: &str| format!("__inl{k}${what}");
        let start = self.new.blocks.len() + usize::from(call.guard.is_some());
        let cont = BlockId::new(start + cb.blocks.len());
        let mut map = Mapping {
            prefix: format!("__inl{k}_"),
            reg_base: self.new.regs.len(),
            proto_base: self.new.prototypes.len(),
            table_base: self.new.tables.len(),
            block_base: start,
            loc_base: self.new.locs.len() as u32,
            vars: Vec::with_capacity(cb.vars.len()),
            params: Vec::with_capacity(args.len()),
            returns: Vec::with_capacity(rets.len()),
        };

        // Declarations.
        let decl_base = self.new.reg_decls.len() as u32;
        for d in &cb.reg_decls {
            self.new.reg_decls.push(RegDecl {
                name: map.name(&d.name),
                ty: d.ty,
                vector: d.vector,
                count: d.count,
                first: map.reg(d.first),
            });
        }
        for r in cb.regs.values() {
            self.new.regs.push(Register { decl: r.decl + decl_base, ..*r });
        }
        for (v, var) in cb.vars.iter() {
            let per_call = matches!(var.space, StateSpace::Local | StateSpace::Param | StateSpace::Reg);
            if !per_call {
                if let Some(&nv) = self.state.statics.get(&(f, v)) {
                    map.vars.push(nv);
                    continue;
                }
            }
            let nv = self.new.vars.push(Variable { name: map.name(&var.name), ..var.clone() });
            if !per_call {
                self.state.statics.insert((f, v), nv);
            }
            map.vars.push(nv);
        }
        for p in cb.prototypes.values() {
            self.new.prototypes.push(ir::Prototype { name: map.name(&p.name), ..p.clone() });
        }
        for t in cb.tables.values() {
            let targets = match &t.targets {
                TableTargets::Branch(bs) => {
                    TableTargets::Branch(bs.iter().map(|b| BlockId::new(start + b.index())).collect())
                }
                TableTargets::Call(fs) => TableTargets::Call(fs.clone()),
            };
            self.new.tables.push(ir::Table { name: map.name(&t.name), targets });
        }
        self.new.locs.extend(cb.locs.iter().cloned());

        // Arguments: what each `Symbol::Param(i)` of the callee becomes, and the stores before the body.
        let written = params_written(cb, callee.params.len());
        let mut pre: Vec<Inst> = Vec::new();
        let mut tmp: Option<RegId> = None;
        for (i, (p, a)) in callee.params.iter().zip(args).enumerate() {
            let sym = match a {
                Operand::Symbol(s @ (Symbol::Local(_) | Symbol::Param(_)))
                    if !written[i] && self.symbol_extent(*s).0 >= p.size() =>
                {
                    *s
                }
                Operand::Symbol(s @ (Symbol::Local(_) | Symbol::Param(_))) => {
                    // The callee works on its own copy (it writes its parameter or takes its address, or the
                    // argument is smaller than the parameter: the call zero-fills the rest).
                    let v = self.param_var(extra(&format!("arg{i}")), p, call);
                    let (src_size, src_align) = self.symbol_extent(*s);
                    let n = src_size.min(p.size());
                    let align = src_align.min(p.alignment()).clamp(1, 8);
                    let mut w = 8u64;
                    while w > 1 && (n % w != 0 || align % w != 0) {
                        w /= 2;
                    }
                    let ty = bits_type(w).expect("a power of two");
                    let t = *tmp.get_or_insert_with(|| {
                        let first = self.new.regs.push(Register {
                            ty: ScalarType::B64,
                            vector: None,
                            decl: self.new.reg_decls.len() as u32,
                            index: 0,
                        });
                        self.new.reg_decls.push(RegDecl {
                            name: format!("%{}", extra("tmp")),
                            ty: ScalarType::B64,
                            vector: None,
                            count: None,
                            first,
                        });
                        first
                    });
                    let ld = [Modifier::Space(StateSpace::Param), Modifier::Type(ty)];
                    for off in (0..n).step_by(w as usize) {
                        let off = off as i64;
                        pre.push(inst(Opcode::Ld, &ld, smallvec![Operand::Reg(t), address(*s, off)], call));
                        pre.push(inst(
                            Opcode::St,
                            &ld,
                            smallvec![address(Symbol::Local(v), off), Operand::Reg(t)],
                            call,
                        ));
                    }
                    Symbol::Local(v)
                }
                Operand::Reg(r) => {
                    let reg = self.new.regs[*r];
                    if reg.ty == ScalarType::Pred {
                        return Err(format!(
                            "a call of `{}` passes predicate `{}` as argument {i}, which inlining does not support",
                            callee.name,
                            self.new.reg_name(*r)
                        ));
                    }
                    let size = u64::from(reg.ty.size()) * u64::from(reg.vector.unwrap_or(1));
                    let ty = bits_type(size.min(p.size())).ok_or_else(|| {
                        format!("a call of `{}` passes a register of an unsupported size as argument {i}", callee.name)
                    })?;
                    let v = self.param_var(extra(&format!("arg{i}")), p, call);
                    let m = [Modifier::Space(StateSpace::Param), Modifier::Type(ty)];
                    pre.push(inst(Opcode::St, &m, smallvec![address(Symbol::Local(v), 0), a.clone()], call));
                    Symbol::Local(v)
                }
                Operand::Imm(imm) => {
                    let ty = bits_type(p.size().min(8)).ok_or_else(|| {
                        format!("a call of `{}` passes an immediate to a parameter of {} bytes", callee.name, p.size())
                    })?;
                    let v = self.param_var(extra(&format!("arg{i}")), p, call);
                    let m = [Modifier::Space(StateSpace::Param), Modifier::Type(ty)];
                    let imm = Operand::Imm(match *imm {
                        Immediate::Float(x) => Immediate::F64Bits(x.to_bits()),
                        other => other,
                    });
                    pre.push(inst(Opcode::St, &m, smallvec![address(Symbol::Local(v), 0), imm], call));
                    Symbol::Local(v)
                }
                _ => {
                    return Err(format!(
                        "a call of `{}` passes argument {i} in a form inlining does not support",
                        callee.name
                    ))
                }
            };
            map.params.push(sym);
        }
        // Return values: what each `Symbol::Return(i)` becomes, and the loads after the body.
        let mut post: Vec<Inst> = Vec::new();
        for (i, (p, r)) in callee.returns.iter().zip(rets).enumerate() {
            let sym = match r {
                Operand::Symbol(s @ Symbol::Local(_)) => *s,
                Operand::Reg(reg) => {
                    let register = self.new.regs[*reg];
                    let size = u64::from(register.ty.size()) * u64::from(register.vector.unwrap_or(1));
                    let ty = match register.ty {
                        ScalarType::Pred => None,
                        _ => unsigned_type(size.min(p.size())),
                    }
                    .ok_or_else(|| {
                        format!(
                            "a call of `{}` returns value {i} into a register inlining does not support",
                            callee.name
                        )
                    })?;
                    let v = self.param_var(extra(&format!("ret{i}")), p, call);
                    let m = [Modifier::Space(StateSpace::Param), Modifier::Type(ty)];
                    post.push(inst(Opcode::Ld, &m, smallvec![r.clone(), address(Symbol::Local(v), 0)], call));
                    Symbol::Local(v)
                }
                Operand::Sink => Symbol::Local(self.param_var(extra(&format!("ret{i}")), p, call)),
                _ => {
                    return Err(format!(
                        "a call of `{}` receives return value {i} in a form inlining does not support",
                        callee.name
                    ))
                }
            };
            map.returns.push(sym);
        }

        // A callee that moves the dynamic stack pointer (`alloca`, `stackrestore`) frees what it allocated when
        // it returns: the pointer is saved before the body (before a guard's branch too, so that the restore
        // in the continuation always has it) and restored after it.
        let moves_sp = cb.insts.values().any(|i| matches!(i.opcode, Opcode::Alloca | Opcode::Stackrestore));
        if moves_sp {
            let sp = self.new.regs.push(Register {
                ty: ScalarType::B64,
                vector: None,
                decl: self.new.reg_decls.len() as u32,
                index: 0,
            });
            self.new.reg_decls.push(RegDecl {
                name: format!("%{}", extra("sp")),
                ty: ScalarType::B64,
                vector: None,
                count: None,
                first: sp,
            });
            let u64 = [Modifier::Type(ScalarType::U64)];
            self.push(inst(Opcode::Stacksave, &u64, smallvec![Operand::Reg(sp)], call), false);
            post.insert(0, inst(Opcode::Stackrestore, &u64, smallvec![Operand::Reg(sp)], call));
        }
        // A guarded call branches around the body.
        if let Some(g) = call.guard {
            let mut bra = inst(Opcode::Bra, &[], smallvec![Operand::Label(cont)], call);
            bra.guard = Some(Guard { reg: g.reg, negated: !g.negated });
            self.push(bra, false);
            self.new_block(None, Vec::new());
        }
        for i in pre {
            self.push(i, false);
        }
        debug_assert_eq!(self.new.blocks.len(), start);
        for blk in cb.blocks.values() {
            self.new_block(blk.label.as_deref().map(|l| map.name(l)), blk.pragmas.clone());
            for &i in &blk.insts {
                let ci = &cb.insts[i];
                let guard = ci.guard.map(|g| Guard { reg: map.reg(g.reg), negated: g.negated });
                let loc = ci.loc.map(|l| l + map.loc_base);
                let copied = if ci.opcode == Opcode::Ret {
                    Inst {
                        guard,
                        opcode: Opcode::Bra,
                        modifiers: ci.modifiers.clone(),
                        operands: smallvec![Operand::Label(cont)],
                        span: ci.span,
                        loc,
                    }
                } else {
                    Inst {
                        guard,
                        opcode: ci.opcode,
                        modifiers: ci.modifiers.clone(),
                        operands: ci.operands.iter().map(|o| map.operand(o)).collect(),
                        span: ci.span,
                        loc,
                    }
                };
                self.push(copied, false);
            }
        }
        debug_assert_eq!(self.new.blocks.len(), cont.index());
        self.new_block(Some(extra("cont")), Vec::new());
        for i in post {
            self.push(i, false);
        }
        Ok(())
    }
}
