//! Lowering: PTX AST → IR. Resolves every name (registers, variables, parameters, labels, functions, tables)
//! into typed indices, splits function bodies into basic blocks and flattens `{ }` scopes.
//!
//! PTX lets nested scopes redeclare a name (nvcc declares `.param .b64 param0;` in every call block). The IR
//! has one namespace per function, so a redeclared name is renamed `name__N_` (ranges keep a digit-free
//! prefix so `%r<10>` style lookups stay unambiguous). Printing the IR therefore yields PTX without shadowing,
//! and lowering that again gives back the same IR.

use graph::cranelift_entity::EntityRef;
use ptx::ast;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use crate::module::*;
use crate::Diagnostic;

/// PTX's predefined constant: the warp size (nvcc writes it for CUDA's `warpSize`), 32 on every target.
const WARP_SZ: &str = "WARP_SZ";

/// Lowers a parsed module. `source` is the text the AST was parsed from (for line numbers).
pub fn lower(module: &ast::Module<'_>, source: &str) -> Result<Module, Vec<Diagnostic>> {
    let mut cx = ModuleLowering { out: Module::default(), names: FxHashMap::default(), diags: Vec::new() };
    cx.out.source = std::sync::Arc::from(source);
    cx.out.version = module.version;
    cx.out.target = module.target.iter().map(|s| s.to_string()).collect();
    cx.out.address_size = module.address_size;
    cx.declare_module_symbols(module);
    cx.lower_items(module);
    if cx.diags.is_empty() {
        Ok(cx.out)
    } else {
        Err(cx.diags)
    }
}

#[derive(Clone, Copy, Debug)]
enum ModuleSym {
    Global(GlobalId),
    Func(FuncId),
}

struct ModuleLowering<'a> {
    out: Module,
    names: FxHashMap<&'a str, ModuleSym>,
    diags: Vec<Diagnostic>,
}

impl<'a> ModuleLowering<'a> {
    fn error(&mut self, span: Span, message: String) {
        self.diags.push(Diagnostic::new(span, message));
    }

    /// First pass: give every module-scope variable and function its id, so initializers and calls may refer
    /// to symbols declared later in the file.
    fn declare_module_symbols(&mut self, module: &ast::Module<'a>) {
        for item in &module.items {
            match item {
                ast::Item::Variable(decl) => {
                    if let Some(why) = vector_decl_error(decl.vector, decl.ty) {
                        self.error(decl.span, why);
                    }
                    for d in &decl.declarators {
                        let var = Variable {
                            name: d.name.to_string(),
                            linkage: decl.linkage,
                            space: decl.space,
                            align: decl.align,
                            vector: decl.vector,
                            ty: decl.ty,
                            attributes: decl.attributes.iter().map(|s| s.to_string()).collect(),
                            dims: d.dims.clone(),
                            init: None,
                            span: d.span,
                        };
                        if d.range.is_some() {
                            self.error(
                                d.span,
                                format!("`{}<N>` ranges are only allowed in `.reg` declarations", d.name),
                            );
                        }
                        let id = self.out.globals.push(var);
                        if let Some(prev) = self.names.insert(d.name, ModuleSym::Global(id)) {
                            if !self.redeclaration_ok(prev, ModuleSym::Global(id)) {
                                self.error(d.span, format!("`{}` is declared twice at module scope", d.name));
                            }
                        }
                    }
                }
                ast::Item::Function(f) => match self.names.get(f.name).copied() {
                    Some(ModuleSym::Func(id)) => {
                        let existing = &self.out.functions[id];
                        if existing.body.is_some() && f.body.is_some() {
                            self.error(f.name_span, format!("function `{}` is defined twice", f.name));
                        } else if existing.params.len() != f.params.len() || existing.kind != f.kind {
                            self.error(
                                f.name_span,
                                format!("function `{}` is redeclared with a different signature", f.name),
                            );
                        }
                    }
                    Some(ModuleSym::Global(_)) => {
                        self.error(f.name_span, format!("`{}` is already declared as a variable", f.name));
                    }
                    None => {
                        let func = Function {
                            name: f.name.to_string(),
                            kind: f.kind,
                            linkage: f.linkage,
                            returns: f.returns.iter().map(lower_param).collect(),
                            params: f.params.iter().map(lower_param).collect(),
                            directives: f.directives.iter().map(lower_directive).collect(),
                            body: None,
                            span: f.span,
                        };
                        let id = self.out.functions.push(func);
                        self.names.insert(f.name, ModuleSym::Func(id));
                    }
                },
                _ => {}
            }
        }
    }

    /// `.extern` declarations may be repeated; everything else must be unique.
    fn redeclaration_ok(&self, prev: ModuleSym, _new: ModuleSym) -> bool {
        match prev {
            ModuleSym::Global(g) => self.out.globals[g].linkage == Linkage::Extern,
            ModuleSym::Func(_) => false,
        }
    }

    fn lower_items(&mut self, module: &ast::Module<'a>) {
        let mut global_listed = vec![false; self.out.globals.len()];
        let mut function_listed = vec![false; self.out.functions.len()];
        for item in &module.items {
            match item {
                ast::Item::File(f) => self.out.items.push(Item::File {
                    index: f.index,
                    path: f.path.to_string(),
                    timestamp: f.timestamp,
                    size: f.size,
                }),
                ast::Item::Section(s) => {
                    self.out.items.push(Item::Section { name: s.name.to_string(), body: s.body.to_string() })
                }
                ast::Item::Pragma(p, _) => self.out.items.push(Item::Pragma(p.to_string())),
                ast::Item::Alias { alias, aliasee, span } => {
                    match (self.names.get(alias).copied(), self.names.get(aliasee).copied()) {
                        (Some(ModuleSym::Func(a)), Some(ModuleSym::Func(b))) => {
                            self.out.items.push(Item::Alias { alias: a, aliasee: b })
                        }
                        _ => self.error(*span, format!("`.alias {alias}, {aliasee}` must name two functions")),
                    }
                }
                ast::Item::Variable(decl) => {
                    for d in &decl.declarators {
                        let Some(&ModuleSym::Global(id)) = self.names.get(d.name) else { continue };
                        // Repeated `.extern` declarations share the id of the last one; print it once.
                        if std::mem::replace(&mut global_listed[id.as_u32() as usize], true) {
                            continue;
                        }
                        if let Some(init) = &d.init {
                            let init = self.lower_init(init);
                            self.out.globals[id].init = init;
                        }
                        self.out.items.push(Item::Global(id));
                    }
                }
                ast::Item::Function(f) => {
                    let Some(&ModuleSym::Func(id)) = self.names.get(f.name) else { continue };
                    match &f.body {
                        None => {
                            if !std::mem::replace(&mut function_listed[id.as_u32() as usize], true) {
                                self.out.items.push(Item::FunctionDecl(id));
                            }
                        }
                        Some(stmts) => {
                            if self.out.functions[id].body.is_some() {
                                continue; // reported in declare_module_symbols
                            }
                            // The definition's own spelling of the signature wins over a prior declaration's.
                            let func = &mut self.out.functions[id];
                            func.returns = f.returns.iter().map(lower_param).collect();
                            func.params = f.params.iter().map(lower_param).collect();
                            func.directives = f.directives.iter().map(lower_directive).collect();
                            func.linkage = f.linkage;
                            func.span = f.span;
                            let body = BodyLowering::new(self, f).lower(stmts);
                            self.out.functions[id].body = Some(body);
                            self.out.items.push(Item::FunctionDef(id));
                            function_listed[id.as_u32() as usize] = true;
                        }
                    }
                }
            }
        }
    }

    fn lower_init(&mut self, init: &ast::Initializer<'a>) -> Option<Init> {
        match init {
            ast::Initializer::Expr(e) => self.lower_const(e).map(Init::Expr),
            ast::Initializer::Named { name, value, .. } => {
                let value = match value {
                    ast::Expr::Symbol(word, _) if !self.names.contains_key(word) => NamedValue::Word(word.to_string()),
                    e => NamedValue::Expr(self.lower_const(e)?),
                };
                Some(Init::Named { name: name.to_string(), value })
            }
            ast::Initializer::List(items, _) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.lower_init(i)?);
                }
                Some(Init::List(out))
            }
        }
    }

    fn lower_const(&mut self, e: &ast::Expr<'a>) -> Option<ConstExpr> {
        Some(match e {
            ast::Expr::Imm(i, _) => ConstExpr::Imm(canonical(*i)),
            ast::Expr::Symbol(name, span) => match self.names.get(name) {
                Some(ModuleSym::Global(g)) => ConstExpr::Global(*g),
                Some(ModuleSym::Func(f)) => ConstExpr::Func(*f),
                None if *name == WARP_SZ => ConstExpr::Imm(Immediate::Int { value: 32, unsigned: false }),
                None => {
                    self.error(*span, format!("undeclared symbol `{name}` in initializer"));
                    return None;
                }
            },
            ast::Expr::Generic(name, span) => match self.names.get(name) {
                Some(ModuleSym::Global(g)) => ConstExpr::Generic(*g),
                _ => {
                    self.error(*span, format!("`generic({name})` must name a module-scope variable"));
                    return None;
                }
            },
            ast::Expr::Unary(op, a, _) => match (op, self.lower_const(a)?) {
                // Fold negated literals so that printing `-1` and parsing it again gives the same IR.
                (ast::UnaryOp::Neg, ConstExpr::Imm(i)) => ConstExpr::Imm(negate(i)),
                (op, a) => ConstExpr::Unary(*op, Box::new(a)),
            },
            ast::Expr::Binary(op, a, b, _) => {
                ConstExpr::Binary(*op, Box::new(self.lower_const(a)?), Box::new(self.lower_const(b)?))
            }
        })
    }
}

/// Decimal float literals are f64 values: store them as bits so that printing is exact.
fn canonical(imm: Immediate) -> Immediate {
    match imm {
        Immediate::Float(x) => Immediate::F64Bits(x.to_bits()),
        other => other,
    }
}

fn negate(imm: Immediate) -> Immediate {
    match imm {
        Immediate::Int { value, unsigned } => Immediate::Int { value: value.wrapping_neg(), unsigned },
        Immediate::F32Bits(b) => Immediate::F32Bits(b ^ 0x8000_0000),
        Immediate::F64Bits(b) => Immediate::F64Bits(b ^ (1 << 63)),
        Immediate::Float(x) => Immediate::F64Bits((-x).to_bits()),
    }
}

/// The names a body uses as the base of an address operand (`[name]`, `[name+8]`).
fn addressed_names<'a>(stmts: &[ast::Statement<'a>], out: &mut FxHashSet<&'a str>) {
    for s in stmts {
        match s {
            ast::Statement::Instruction(i) => {
                for op in &i.operands {
                    if let ast::Operand::Address(a) = op {
                        if let ast::AddressBase::Reg(n) | ast::AddressBase::Symbol(n) = a.base {
                            out.insert(n);
                        }
                    }
                }
            }
            ast::Statement::Block(inner, _) => addressed_names(inner, out),
            _ => {}
        }
    }
}

/// Why a `.vN` declaration is not valid PTX, if it is not: the PTX ISA (5.4.2, Vectors) allows vectors of
/// length 2 and 4 of a non-predicate type, of at most 128 bits (`.v4 .f64` is not allowed); ptxas refuses
/// `.v8` declarations ("syntax error") and wider vectors ("exceeds 128 bit limit") alike.
fn vector_decl_error(vector: Option<u8>, ty: ScalarType) -> Option<String> {
    let n = vector?;
    if !matches!(n, 2 | 4) {
        return Some(format!(
            "`.v{n}` vector variables are not valid PTX: vector variables are `.v2` or `.v4` (PTX ISA 5.4.2)"
        ));
    }
    if ty == ScalarType::Pred {
        return Some("vectors of `.pred` are not valid PTX (PTX ISA 5.4.2)".to_string());
    }
    let bits = u32::from(n) * ty.size() * 8;
    (bits > 128).then(|| format!("`.v{n} .{ty}` is {bits} bits: PTX vectors cannot exceed 128 bits (PTX ISA 5.4.2)"))
}

/// A parameter as the IR keeps it. `.reg`-space parameters become `.param` ones: the body moves them between
/// their registers and their slots itself (`BodyLowering::declare_reg_params`), and callers pass values the
/// same way to both.
fn lower_param(p: &ast::Param<'_>) -> Param {
    Param {
        name: p.name.map(str::to_string),
        space: if p.space == StateSpace::Reg { StateSpace::Param } else { p.space },
        align: p.align,
        vector: p.vector,
        ty: p.ty,
        ptr: p.ptr,
        dims: p.dims.clone(),
    }
}

fn lower_directive(d: &ast::FunctionDirective<'_>) -> Directive {
    use ast::FunctionDirective as D;
    match d {
        D::MaxNtid(v, _) => Directive::MaxNtid(v.to_vec()),
        D::ReqNtid(v, _) => Directive::ReqNtid(v.to_vec()),
        D::MinNctaPerSm(n, _) => Directive::MinNctaPerSm(*n),
        D::MaxNctaPerSm(n, _) => Directive::MaxNctaPerSm(*n),
        D::MaxNreg(n, _) => Directive::MaxNreg(*n),
        D::NoReturn(_) => Directive::NoReturn,
        D::Pragma(p, _) => Directive::Pragma(p.to_string()),
        D::ExplicitCluster(_) => Directive::ExplicitCluster,
        D::ReqNctaPerCluster(v, _) => Directive::ReqNctaPerCluster(v.to_vec()),
        D::MaxClusterRank(n, _) => Directive::MaxClusterRank(*n),
        D::BlocksAreClusters(_) => Directive::BlocksAreClusters,
        D::AbiPreserve(n, _) => Directive::AbiPreserve(*n),
        D::AbiPreserveControl(n, _) => Directive::AbiPreserveControl(*n),
    }
}

/// What a name means inside a function body.
#[derive(Clone, Copy, Debug)]
enum Local {
    Reg(RegId),
    /// A `%name<count>` range starting at this register.
    Range(RegId, u32),
    Var(VarId),
    Table(TableId),
    Proto(ProtoId),
}

struct BodyLowering<'m, 'a> {
    module: &'m mut ModuleLowering<'a>,
    body: Body,
    params: FxHashMap<&'a str, Symbol>,
    /// Label name → ordinal among the body's labels; ordinals become block ids once all blocks exist.
    labels: FxHashMap<&'a str, u32>,
    label_blocks: Vec<Option<BlockId>>,
    /// Where each label was first named, for the error when it is never defined.
    label_refs: Vec<(&'a str, Span)>,
    /// Names visible now; scopes are undone through `undo`.
    scope: FxHashMap<&'a str, Local>,
    ranges: FxHashMap<&'a str, Local>,
    undo: Vec<(bool, &'a str, Option<Local>)>,
    /// Every name given out in this function, to keep the flattened namespace unique.
    used: FxHashSet<String>,
    /// Every `%name<count>` range given out in this function.
    used_ranges: Vec<(String, u32)>,
    current: Option<BlockId>,
    pending_pragmas: Vec<String>,
    loc: Option<u32>,
    /// The latest `.loc`, recorded in `body.locs` only once an instruction follows it.
    pending_loc: Option<ast::Loc<'a>>,
    /// Lowering the operands of a `bra` (unknown names are then missing labels).
    in_branch: bool,
    /// `.reg`-space parameters and return values (old-style device functions): the register each name
    /// stands for in the body, with its `.param` slot. Parameters are loaded from their slot at entry, return
    /// values stored to theirs before every `ret`.
    reg_params: Vec<(RegId, Symbol, Span)>,
    reg_returns: Vec<(RegId, Symbol)>,
}

impl<'m, 'a> BodyLowering<'m, 'a> {
    fn new(module: &'m mut ModuleLowering<'a>, f: &ast::Function<'a>) -> Self {
        let mut params = FxHashMap::default();
        let mut used = FxHashSet::default();
        let slots = f.params.iter().enumerate().map(|(i, p)| (p, Symbol::Param(i as u32)));
        let slots = slots.chain(f.returns.iter().enumerate().map(|(i, p)| (p, Symbol::Return(i as u32))));
        for (p, slot) in slots {
            if let Some(name) = p.name {
                params.insert(name, slot);
                used.insert(name.to_string());
            }
        }
        let mut lowering = BodyLowering {
            module,
            body: Body::default(),
            params,
            labels: FxHashMap::default(),
            label_blocks: Vec::new(),
            label_refs: Vec::new(),
            scope: FxHashMap::default(),
            ranges: FxHashMap::default(),
            undo: Vec::new(),
            used,
            used_ranges: Vec::new(),
            current: None,
            pending_pragmas: Vec::new(),
            loc: None,
            pending_loc: None,
            in_branch: false,
            reg_params: Vec::new(),
            reg_returns: Vec::new(),
        };
        lowering.declare_reg_params(f);
        lowering
    }

    /// Gives each `.reg`-space parameter and return value a register of its name, type and vector width
    /// (unless the body addresses it as memory, the older reading of such parameters).
    fn declare_reg_params(&mut self, f: &ast::Function<'a>) {
        let slots = f.params.iter().enumerate().map(|(i, p)| (p, Symbol::Param(i as u32)));
        let slots = slots.chain(f.returns.iter().enumerate().map(|(i, p)| (p, Symbol::Return(i as u32))));
        let mut addressed = FxHashSet::default();
        if let Some(body) = &f.body {
            addressed_names(body, &mut addressed);
        }
        for (p, slot) in slots {
            let Some(name) = p.name.filter(|_| p.space == StateSpace::Reg) else { continue };
            // A body that reads or writes the parameter as memory (`ld.param [v]`) keeps it a `.param`.
            if addressed.contains(name) {
                continue;
            }
            let decl = self.body.reg_decls.len() as u32;
            let first = RegId::new(self.body.regs.len());
            self.body.regs.push(Register { ty: p.ty, vector: p.vector, decl, index: 0 });
            let unique = self.unique_name(name, None);
            self.body.reg_decls.push(RegDecl { name: unique, ty: p.ty, vector: p.vector, count: None, first });
            self.params.remove(name);
            self.bind(name, Local::Reg(first));
            match slot {
                Symbol::Return(_) => self.reg_returns.push((first, slot)),
                _ => self.reg_params.push((first, slot, p.span)),
            }
        }
    }

    /// The block instructions go to now, started if the last one ended.
    fn current_block(&mut self) -> BlockId {
        match self.current {
            Some(b) => b,
            None => {
                let b = self.new_block();
                self.current = Some(b);
                b
            }
        }
    }

    /// `ld.param` (at entry) or `st.param` (before `ret`) between a `.reg` parameter's register and its slot.
    fn param_move(&mut self, reg: RegId, slot: Symbol, store: bool, guard: Option<Guard>, span: Span) {
        let r = &self.body.regs[reg];
        let (ty, vector) = (r.ty, r.vector);
        let mut modifiers: SmallVec<[Modifier; 4]> = SmallVec::new();
        modifiers.push(Modifier::Space(StateSpace::Param));
        if let Some(n) = vector {
            modifiers.push(Modifier::Vector(n));
        }
        modifiers.push(Modifier::Type(ty));
        let value = self.whole_vector(Operand::Reg(reg));
        let address = Operand::Address(Address { base: AddressBase::Symbol(slot), offset: 0 });
        let operands = if store { [address, value] } else { [value, address] };
        let block = self.current_block();
        let inst = Inst {
            guard,
            opcode: if store { Opcode::St } else { Opcode::Ld },
            modifiers: modifiers.into_iter().collect(),
            operands: operands.into_iter().collect(),
            span,
            loc: self.loc,
        };
        let id = self.body.insts.push(inst);
        self.body.blocks[block].insts.push(id);
    }

    fn error(&mut self, span: Span, message: String) {
        self.module.error(span, message);
    }

    fn lower(mut self, stmts: &[ast::Statement<'a>]) -> Body {
        self.body.insts.reserve(stmts.len());
        for (reg, slot, span) in self.reg_params.clone() {
            self.param_move(reg, slot, false, None, span);
        }
        self.statements(stmts);
        if self.body.blocks.is_empty() {
            self.body.blocks.push(Block::default());
        }
        if let Some(b) = self.current.or(self.body.blocks.keys().next_back()) {
            let pragmas = std::mem::take(&mut self.pending_pragmas);
            self.body.blocks[b].pragmas.extend(pragmas);
        }
        for (ordinal, block) in self.label_blocks.clone().into_iter().enumerate() {
            if block.is_none() {
                let (name, span) = self.label_refs[ordinal];
                self.error(span, format!("undeclared label `{name}`"));
            }
        }
        self.resolve_labels();
        self.body
    }

    /// The ordinal of a label, defined or only referenced so far (labels may be used before they appear).
    fn label_ordinal(&mut self, name: &'a str, span: Span) -> u32 {
        if let Some(&o) = self.labels.get(name) {
            return o;
        }
        let o = self.label_blocks.len() as u32;
        self.labels.insert(name, o);
        self.label_blocks.push(None);
        self.label_refs.push((name, span));
        o
    }

    /// Replaces label ordinals (used while the blocks were being built) by block ids.
    fn resolve_labels(&mut self) {
        let map = &self.label_blocks;
        let fix = |ordinal: BlockId| map[ordinal.index()].unwrap_or(ordinal);
        for inst in self.body.insts.values_mut() {
            for op in inst.operands.iter_mut() {
                if let Operand::Label(b) = op {
                    *b = fix(*b);
                }
            }
        }
        for table in self.body.tables.values_mut() {
            if let TableTargets::Branch(targets) = &mut table.targets {
                for b in targets.iter_mut() {
                    *b = fix(*b);
                }
            }
        }
    }

    fn statements(&mut self, stmts: &[ast::Statement<'a>]) {
        for s in stmts {
            match s {
                ast::Statement::Label(name, span) => {
                    let block = match self.current {
                        Some(b) if self.body.blocks[b].insts.is_empty() && self.body.blocks[b].label.is_none() => b,
                        _ => self.new_block(),
                    };
                    self.current = Some(block);
                    let ordinal = self.label_ordinal(name, *span) as usize;
                    if self.label_blocks[ordinal].is_some() {
                        self.error(*span, format!("label `{name}` is defined twice"));
                    } else {
                        self.label_blocks[ordinal] = Some(block);
                        self.body.blocks[block].label = Some(name.to_string());
                    }
                }
                ast::Statement::Instruction(inst) => self.instruction(inst),
                ast::Statement::Variable(decl) => self.declaration(decl),
                ast::Statement::Block(inner, _) => {
                    let mark = self.undo.len();
                    self.statements(inner);
                    self.pop_scope(mark);
                }
                ast::Statement::Loc(l) => self.pending_loc = Some(l.clone()),
                ast::Statement::Pragma(p, _) => match self.current {
                    Some(b) => self.body.blocks[b].pragmas.push(p.to_string()),
                    None => self.pending_pragmas.push(p.to_string()),
                },
                ast::Statement::BranchTargets { label, targets, span } => {
                    let mut blocks = Vec::with_capacity(targets.len());
                    for t in targets {
                        blocks.push(BlockId::from_u32(self.label_ordinal(t, *span)));
                    }
                    let name = self.unique_name(label, None);
                    let id = self.body.tables.push(Table { name, targets: TableTargets::Branch(blocks) });
                    self.bind(label, Local::Table(id));
                }
                ast::Statement::CallTargets { label, targets, span } => {
                    let mut funcs = Vec::with_capacity(targets.len());
                    for t in targets {
                        match self.module.names.get(t) {
                            Some(&ModuleSym::Func(f)) => funcs.push(f),
                            _ => self.error(*span, format!("`.calltargets` names unknown function `{t}`")),
                        }
                    }
                    let name = self.unique_name(label, None);
                    let id = self.body.tables.push(Table { name, targets: TableTargets::Call(funcs) });
                    self.bind(label, Local::Table(id));
                }
                ast::Statement::CallPrototype(p) => {
                    let name = self.unique_name(p.label, None);
                    let id = self.body.prototypes.push(Prototype {
                        name,
                        returns: p.returns.iter().map(lower_param).collect(),
                        params: p.params.iter().map(lower_param).collect(),
                        noreturn: p.noreturn,
                    });
                    self.bind(p.label, Local::Proto(id));
                }
            }
        }
    }

    fn new_block(&mut self) -> BlockId {
        let block = self.body.blocks.push(Block::default());
        self.body.blocks[block].pragmas.append(&mut self.pending_pragmas);
        block
    }

    fn bind(&mut self, name: &'a str, what: Local) {
        let prev = self.scope.insert(name, what);
        self.undo.push((false, name, prev));
    }

    fn bind_range(&mut self, name: &'a str, what: Local) {
        let prev = self.ranges.insert(name, what);
        self.undo.push((true, name, prev));
    }

    fn pop_scope(&mut self, mark: usize) {
        while self.undo.len() > mark {
            let Some((range, name, prev)) = self.undo.pop() else { break };
            let map = if range { &mut self.ranges } else { &mut self.scope };
            match prev {
                Some(p) => map.insert(name, p),
                None => map.remove(name),
            };
        }
    }

    /// A name not yet used in this function: `name` itself, or `name__N_`. With `range: Some(count)` the
    /// name is the prefix of `%name<count>`, which must not capture a single name already given out; a single
    /// name must not fall inside a range given out earlier. (`name__N_` ends in `_`, so a renamed range
    /// prefix never ends in a digit.)
    fn unique_name(&mut self, name: &str, range: Option<u32>) -> String {
        let mut candidate = name.to_string();
        let mut n = 0u32;
        while self.name_taken(&candidate, range) {
            n += 1;
            candidate = format!("{name}__{n}_");
        }
        self.used.insert(candidate.clone());
        if let Some(count) = range {
            self.used_ranges.push((candidate.clone(), count));
        }
        candidate
    }

    fn name_taken(&self, name: &str, range: Option<u32>) -> bool {
        // A body name may not shadow a module-scope one either: printing moves every declaration to the top
        // of the body, above uses that meant the module symbol.
        if self.used.contains(name) || self.module.names.contains_key(name) {
            return true;
        }
        let in_range = |prefix: &str, count: u32, single: &str| {
            single
                .strip_prefix(prefix)
                .filter(|d| {
                    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && (d.len() == 1 || !d.starts_with('0'))
                })
                .and_then(|d| d.parse::<u64>().ok())
                .is_some_and(|i| i < u64::from(count))
        };
        match range {
            None => self.used_ranges.iter().any(|(prefix, count)| in_range(prefix, *count, name)),
            Some(count) => self.used.iter().any(|single| in_range(name, count, single)),
        }
    }

    fn declaration(&mut self, decl: &ast::VarDecl<'a>) {
        if let Some(why) = vector_decl_error(decl.vector, decl.ty) {
            self.error(decl.span, why);
        }
        for d in &decl.declarators {
            if decl.space == StateSpace::Reg {
                let name = self.unique_name(d.name, d.range);
                let decl_index = self.body.reg_decls.len() as u32;
                let count = d.range.unwrap_or(1);
                let first = RegId::new(self.body.regs.len());
                for index in 0..count {
                    self.body.regs.push(Register { ty: decl.ty, vector: decl.vector, decl: decl_index, index });
                }
                self.body.reg_decls.push(RegDecl { name, ty: decl.ty, vector: decl.vector, count: d.range, first });
                match d.range {
                    Some(n) => self.bind_range(d.name, Local::Range(first, n)),
                    None => self.bind(d.name, Local::Reg(first)),
                }
                if !d.dims.is_empty() || d.init.is_some() {
                    self.error(d.span, format!("register `{}` cannot have array dimensions or an initializer", d.name));
                }
            } else {
                let name = self.unique_name(d.name, None);
                let init = d.init.as_ref().and_then(|i| self.module.lower_init(i));
                if d.range.is_some() {
                    self.error(d.span, format!("`{}<N>` ranges are only allowed in `.reg` declarations", d.name));
                }
                let id = self.body.vars.push(Variable {
                    name,
                    linkage: decl.linkage,
                    space: decl.space,
                    align: decl.align,
                    vector: decl.vector,
                    ty: decl.ty,
                    attributes: decl.attributes.iter().map(|s| s.to_string()).collect(),
                    dims: d.dims.clone(),
                    init,
                    span: d.span,
                });
                self.bind(d.name, Local::Var(id));
            }
        }
    }

    fn instruction(&mut self, inst: &ast::Instruction<'a>) {
        if let Some(l) = self.pending_loc.take() {
            let same = self.body.locs.last().is_some_and(|last| {
                (last.file, last.line, last.column, last.inlined_at) == (l.file, l.line, l.column, l.inlined_at)
                    && last.function_name.as_deref() == l.function_name
            });
            if !same {
                self.body.locs.push(Loc {
                    file: l.file,
                    line: l.line,
                    column: l.column,
                    function_name: l.function_name.map(str::to_string),
                    inlined_at: l.inlined_at,
                });
            }
            self.loc = Some(self.body.locs.len() as u32 - 1);
        }
        let guard = inst.guard.and_then(|g| {
            let reg = self.register(g.reg, g.span)?;
            Some(Guard { reg, negated: g.negated })
        });
        let mut operands = SmallVec::with_capacity(inst.operands.len());
        self.in_branch = inst.opcode == Opcode::Bra;
        for op in &inst.operands {
            let lowered = self.operand(op);
            operands.push(self.whole_vector(lowered));
        }
        self.in_branch = false;
        if inst.opcode == Opcode::Ret {
            for (reg, slot) in self.reg_returns.clone() {
                self.param_move(reg, slot, true, guard, inst.span);
            }
        }
        let block = self.current_block();
        // `mov.v4.u16 d, a` between vector registers (or lists) is one `mov` per element.
        let odd_vector = inst.modifiers.iter().find_map(|m| match m {
            Modifier::Vector(n) if !matches!(n, 2 | 4) => Some(*n),
            _ => None,
        });
        if let (Opcode::Mov, Some(n)) = (inst.opcode, odd_vector) {
            // ptxas: "Illegal vector size: 8". The 128-bit pack and unpack are `mov.b128`.
            self.error(
                inst.span,
                format!("`mov.v{n}` is not valid PTX: vector moves are `.v2` or `.v4` (PTX ISA 5.4.2, 9.7.9.4)"),
            );
            return;
        }
        if let (Opcode::Mov, [Operand::Vector(d), Operand::Vector(a)]) = (inst.opcode, operands.as_slice()) {
            if d.len() == a.len() && inst.modifiers.iter().any(|m| matches!(m, Modifier::Vector(_))) {
                let modifiers: SmallVec<_> =
                    inst.modifiers.iter().filter(|m| !matches!(m, Modifier::Vector(_))).cloned().collect();
                for (d, a) in d.clone().into_iter().zip(a.clone()) {
                    let one = Inst {
                        guard,
                        opcode: Opcode::Mov,
                        modifiers: modifiers.clone(),
                        operands: [d, a].into_iter().collect(),
                        span: inst.span,
                        loc: self.loc,
                    };
                    let id = self.body.insts.push(one);
                    self.body.blocks[block].insts.push(id);
                }
                return;
            }
        }
        let lowered = Inst {
            guard,
            opcode: inst.opcode,
            modifiers: inst.modifiers.clone(),
            operands,
            span: inst.span,
            loc: self.loc,
        };
        let terminator = lowered.is_terminator();
        let id = self.body.insts.push(lowered);
        self.body.blocks[block].insts.push(id);
        if terminator {
            self.current = None;
        }
    }

    fn lookup(&self, name: &str) -> Option<Local> {
        if let Some(&l) = self.scope.get(name) {
            return Some(l);
        }
        // `%r57` inside a `%r<100>` range.
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits == name.len() {
            return None;
        }
        let (prefix, number) = name.split_at(name.len() - digits);
        if number.len() > 1 && number.starts_with('0') {
            return None;
        }
        let Some(&Local::Range(first, count)) = self.ranges.get(prefix) else { return None };
        let index: u32 = number.parse().ok()?;
        (index < count).then(|| Local::Reg(RegId::new(first.index() + index as usize)))
    }

    /// The `%name<count>` range whose prefix `name` has, if any.
    fn range_of<'n>(&self, name: &'n str) -> Option<(&'n str, u32)> {
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        let prefix = &name[..name.len() - digits];
        match self.ranges.get(prefix) {
            Some(&Local::Range(_, count)) if digits > 0 => Some((prefix, count)),
            _ => None,
        }
    }

    fn register(&mut self, name: &str, span: Span) -> Option<RegId> {
        match self.lookup(name) {
            Some(Local::Reg(r)) => Some(r),
            _ => {
                self.error(span, format!("`{name}` is not a declared register"));
                None
            }
        }
    }

    /// Resolves a non-register name to a symbol (variable, parameter, function).
    fn symbol(&self, name: &str) -> Option<Symbol> {
        match self.lookup(name) {
            Some(Local::Var(v)) => return Some(Symbol::Local(v)),
            Some(_) => return None,
            None => {}
        }
        if let Some(&s) = self.params.get(name) {
            return Some(s);
        }
        match self.module.names.get(name) {
            Some(ModuleSym::Global(g)) => Some(Symbol::Global(*g)),
            Some(ModuleSym::Func(f)) => Some(Symbol::Func(*f)),
            None => None,
        }
    }

    fn operand(&mut self, op: &ast::Operand<'a>) -> Operand {
        match op {
            ast::Operand::Name(name, component, span) => self.name_operand(name, *component, *span),
            ast::Operand::Not(name, span) => self.register(name, *span).map_or(Operand::Sink, Operand::Not),
            ast::Operand::Neg(name, component, span) => match self.name_operand(name, *component, *span) {
                Operand::Reg(r) => Operand::Neg(r, None),
                Operand::Select(r, c) => Operand::Neg(r, Some(c)),
                Operand::Sink => Operand::Sink,
                _ => {
                    self.error(*span, format!("`-{name}`: only a scalar register (with a selector) can be negated"));
                    Operand::Sink
                }
            },
            ast::Operand::Imm(i, _) => Operand::Imm(canonical(*i)),
            ast::Operand::Address(a) => {
                let base = match a.base {
                    ast::AddressBase::Absolute(x) => {
                        return Operand::Address(Address {
                            base: AddressBase::Absolute(x.wrapping_add(a.offset)),
                            offset: 0,
                        })
                    }
                    ast::AddressBase::Reg(name) | ast::AddressBase::Symbol(name) => match self.lookup(name) {
                        Some(Local::Reg(r)) => AddressBase::Reg(r),
                        _ => match self.symbol(name) {
                            Some(s) => AddressBase::Symbol(s),
                            None => {
                                self.error(
                                    a.span,
                                    format!("`{name}` in an address is neither a register nor a variable"),
                                );
                                AddressBase::Absolute(0)
                            }
                        },
                    },
                };
                Operand::Address(Address { base, offset: a.offset })
            }
            ast::Operand::Vector(items, _) => Operand::Vector(items.iter().map(|o| self.operand(o)).collect()),
            ast::Operand::Bracket(items, _) => Operand::Bracket(items.iter().map(|o| self.operand(o)).collect()),
            ast::Operand::List(items, _) => Operand::List(items.iter().map(|o| self.operand(o)).collect()),
            // `_|p` (`elect.sync _|p, mask`): no data destination, only the predicate; the IR has
            // that as a destination list of one sink and the predicate.
            ast::Operand::Pair("_", b, span) => {
                self.register(b, *span).map_or(Operand::Sink, |p| Operand::VectorPair(vec![Operand::Sink], p))
            }
            ast::Operand::Pair(a, b, span) => match (self.register(a, *span), self.register(b, *span)) {
                (Some(a), Some(b)) => Operand::Pair(a, b),
                _ => Operand::Sink,
            },
            ast::Operand::VectorPair(items, p, span) => {
                let items = items.iter().map(|o| self.operand(o)).collect();
                self.register(p, *span).map_or(Operand::Sink, |p| Operand::VectorPair(items, p))
            }
            ast::Operand::Sink(_) => Operand::Sink,
            ast::Operand::SymbolOffset(name, offset, span) => match self.symbol(name) {
                Some(s) => Operand::SymbolOffset(s, *offset),
                None => {
                    self.error(*span, format!("`{name}` is not a declared variable or function"));
                    Operand::Sink
                }
            },
        }
    }

    /// A whole vector register as an instruction's operand (`ld.global.v4.u32 t, [a]` with `.reg .v4 .u32 t`)
    /// stands for its elements, `{t.x, t.y, t.z, t.w}`: every element is read or written.
    fn whole_vector(&self, op: Operand) -> Operand {
        let Operand::Reg(r) = op else { return op };
        let n = match self.body.regs[r].vector {
            Some(n @ 2..=4) => n,
            _ => return op,
        };
        let comps = [Component::X, Component::Y, Component::Z, Component::W];
        Operand::Vector(comps[..usize::from(n)].iter().map(|&c| Operand::RegElement(r, c)).collect())
    }

    fn name_operand(&mut self, name: &'a str, component: Option<Component>, span: Span) -> Operand {
        match self.lookup(name) {
            Some(Local::Reg(r)) => {
                return match component {
                    None => Operand::Reg(r),
                    Some(c) if c.is_selector() => {
                        if self.body.regs[r].vector.is_some() {
                            self.error(
                                span,
                                format!(
                                    "`{name}` is a vector register: `.{c}` selects a byte or half-word of a scalar one"
                                ),
                            );
                        }
                        Operand::Select(r, c)
                    }
                    Some(c) if self.body.regs[r].vector.is_some() => Operand::RegElement(r, c),
                    Some(_) => {
                        self.error(span, format!("`{name}` is not a vector register and has no components"));
                        Operand::Reg(r)
                    }
                }
            }
            Some(Local::Table(t)) => return Operand::Table(t),
            Some(Local::Proto(p)) => return Operand::Prototype(p),
            Some(Local::Var(_)) | Some(Local::Range(..)) | None => {}
        }
        if component.is_none() {
            if let Some(s) = self.symbol(name) {
                return Operand::Symbol(s);
            }
            if self.in_branch || self.labels.contains_key(name) {
                return Operand::Label(BlockId::from_u32(self.label_ordinal(name, span)));
            }
        }
        if let Some(special) = name.strip_prefix('%').and_then(SpecialReg::from_name) {
            if let Some(c) = component.filter(|c| c.is_selector()) {
                self.error(span, format!("`.{c}` selects a byte or half-word of a register, not of `{name}`"));
            }
            return Operand::Special(special, component);
        }
        if name == WARP_SZ && component.is_none() {
            return Operand::Imm(Immediate::Int { value: 32, unsigned: false });
        }
        if let Some((prefix, count)) = self.range_of(name) {
            self.error(span, format!("`{name}` is outside the declared range `{prefix}<{count}>`"));
            return Operand::Sink;
        }
        let what = if self.in_branch {
            "label"
        } else if name.starts_with('%') {
            "register"
        } else {
            "name"
        };
        self.error(span, format!("undeclared {what} `{name}`"));
        Operand::Sink
    }
}
