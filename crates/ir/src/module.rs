//! The IR data structures: a [`Module`] of module-scope variables and functions, each function body a list of
//! basic blocks over typed arenas.
//!
//! Entities are `u32` indices ([`FuncId`], [`GlobalId`], [`BlockId`], [`InstId`], [`RegId`], [`VarId`], ...)
//! into `PrimaryMap`s owned by their parent; nothing points at anything else by reference. Names are resolved:
//! an operand names a register by [`RegId`], a branch target by [`BlockId`], a variable by [`Symbol`].
//! Opcodes, modifiers and types reuse the `ptx` crate's keyword tables.

use graph::cranelift_entity::{entity_impl, PrimaryMap};
use smallvec::SmallVec;

pub use ptx::ast::{Component, FunctionKind, Immediate, Linkage, PtrAttr, Span};
pub use ptx::keywords::{Modifier, Opcode, ScalarType, Shape, SpecialReg, StateSpace, Word};

/// A function (`.entry` kernel or `.func`) of a module.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);
entity_impl!(FuncId, "func");

/// A module-scope variable (`.global`, `.const`, `.shared`, ... at module scope).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(u32);
entity_impl!(GlobalId, "global");

/// A basic block of a function body.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(u32);
entity_impl!(BlockId, "block");

/// An instruction of a function body.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstId(u32);
entity_impl!(InstId, "inst");

/// A virtual register of a function body.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegId(u32);
entity_impl!(RegId, "reg");

/// A variable declared inside a function body (`.local`, `.shared`, `.param`, ...).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(u32);
entity_impl!(VarId, "var");

/// A `.callprototype` of a function body.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtoId(u32);
entity_impl!(ProtoId, "proto");

/// A `.branchtargets` or `.calltargets` table of a function body.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableId(u32);
entity_impl!(TableId, "table");

/// A whole PTX module.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub version: Option<(u32, u32)>,
    pub target: Vec<String>,
    pub address_size: Option<u32>,
    pub globals: PrimaryMap<GlobalId, Variable>,
    pub functions: PrimaryMap<FuncId, Function>,
    /// Module-scope items in source order; the printer follows it.
    pub items: Vec<Item>,
    /// Byte offset of the start of each source line, computed from `source` when first needed.
    pub line_starts: std::sync::OnceLock<Vec<u32>>,
    /// The PTX text the module was lowered from, so messages can quote what the user wrote.
    pub source: std::sync::Arc<str>,
}

/// A module-scope item in source order.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    File {
        index: u32,
        path: String,
        timestamp: Option<u64>,
        size: Option<u64>,
    },
    /// A `.section` kept verbatim (DWARF data is not interpreted).
    Section {
        name: String,
        body: String,
    },
    Pragma(String),
    Global(GlobalId),
    /// A function declaration without body (a prototype), or a definition that comes later.
    FunctionDecl(FuncId),
    /// The place of a function's definition (its body).
    FunctionDef(FuncId),
    Alias {
        alias: FuncId,
        aliasee: FuncId,
    },
}

/// A variable: module scope ([`GlobalId`]) or function scope ([`VarId`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// Unique within its scope (function-scope names that PTX let blocks shadow are renamed `name_N`).
    pub name: String,
    pub linkage: Linkage,
    pub space: StateSpace,
    pub align: Option<u32>,
    pub vector: Option<u8>,
    pub ty: ScalarType,
    pub attributes: Vec<String>,
    /// Array dimensions; `None` is an unsized `[]` dimension (extern or dynamic shared memory).
    pub dims: SmallVec<[Option<u64>; 1]>,
    pub init: Option<Init>,
    pub span: Span,
}

impl Variable {
    /// Bytes of one element (a vector counts as one element).
    pub fn element_size(&self) -> u64 {
        u64::from(self.ty.size()) * u64::from(self.vector.unwrap_or(1))
    }

    /// Total size in bytes; unsized dimensions count as zero.
    pub fn size(&self) -> u64 {
        self.dims.iter().fold(self.element_size(), |acc, d| acc.saturating_mul(d.unwrap_or(0)))
    }

    /// Alignment in bytes: the declared `.align`, else the element size.
    pub fn alignment(&self) -> u64 {
        self.align.map_or(self.element_size(), u64::from).max(1)
    }
}

/// A variable initializer.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Expr(ConstExpr),
    List(Vec<Init>),
    /// `name = value` inside a `.samplerref`/`.texref` initializer.
    Named {
        name: String,
        value: NamedValue,
    },
}

/// The value of a named initializer entry: a bare word (`clamp_to_edge`) or a constant.
#[derive(Clone, Debug, PartialEq)]
pub enum NamedValue {
    Word(String),
    Expr(ConstExpr),
}

/// A constant expression of an initializer.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstExpr {
    Imm(Immediate),
    /// The address of a module-scope variable.
    Global(GlobalId),
    /// The address of a function.
    Func(FuncId),
    /// `generic(var)`: the generic address of a module-scope variable.
    Generic(GlobalId),
    Unary(ptx::ast::UnaryOp, Box<ConstExpr>),
    Binary(ptx::ast::BinaryOp, Box<ConstExpr>, Box<ConstExpr>),
}

/// A kernel or device function.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub kind: FunctionKind,
    pub linkage: Linkage,
    pub returns: Vec<Param>,
    pub params: Vec<Param>,
    pub directives: Vec<Directive>,
    /// `None` for a function declared but not defined in this module.
    pub body: Option<Body>,
    pub span: Span,
}

impl Function {
    pub fn is_kernel(&self) -> bool {
        self.kind == FunctionKind::Entry
    }
}

/// A parameter (or return parameter) of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Option<String>,
    pub space: StateSpace,
    pub align: Option<u32>,
    pub vector: Option<u8>,
    pub ty: ScalarType,
    pub ptr: Option<PtrAttr>,
    pub dims: SmallVec<[Option<u64>; 1]>,
}

impl Param {
    /// Size in bytes, as laid out in parameter space.
    pub fn size(&self) -> u64 {
        let elem = u64::from(self.ty.size()) * u64::from(self.vector.unwrap_or(1));
        self.dims.iter().fold(elem, |acc, d| acc.saturating_mul(d.unwrap_or(0)))
    }

    /// Alignment in bytes: the declared `.align`, else the element size.
    pub fn alignment(&self) -> u64 {
        let elem = u64::from(self.ty.size()) * u64::from(self.vector.unwrap_or(1));
        self.align.map_or(elem, u64::from).max(1)
    }
}

/// A performance-tuning or attribute directive of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    MaxNtid(Vec<u32>),
    ReqNtid(Vec<u32>),
    MinNctaPerSm(u32),
    MaxNctaPerSm(u32),
    MaxNreg(u32),
    NoReturn,
    Pragma(String),
    ExplicitCluster,
    ReqNctaPerCluster(Vec<u32>),
    MaxClusterRank(u32),
    BlocksAreClusters,
    AbiPreserve(u32),
    AbiPreserveControl(u32),
}

/// The body of a defined function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Body {
    pub regs: PrimaryMap<RegId, Register>,
    /// How the registers were declared, for printing (`%r<10>` ranges stay ranges).
    pub reg_decls: Vec<RegDecl>,
    pub vars: PrimaryMap<VarId, Variable>,
    pub blocks: PrimaryMap<BlockId, Block>,
    pub insts: PrimaryMap<InstId, Inst>,
    pub prototypes: PrimaryMap<ProtoId, Prototype>,
    pub tables: PrimaryMap<TableId, Table>,
    /// `.loc` records; [`Inst::loc`] indexes this.
    pub locs: Vec<Loc>,
}

impl Body {
    /// The entry block (the first in layout order).
    pub fn entry(&self) -> BlockId {
        BlockId::from_u32(0)
    }

    /// The instructions of a block, in order.
    pub fn block_insts(&self, block: BlockId) -> impl Iterator<Item = (InstId, &Inst)> + '_ {
        self.blocks[block].insts.iter().map(move |&i| (i, &self.insts[i]))
    }

    /// The name of a register as written in PTX.
    pub fn reg_name(&self, reg: RegId) -> String {
        let r = &self.regs[reg];
        let decl = &self.reg_decls[r.decl as usize];
        match decl.count {
            Some(_) => format!("{}{}", decl.name, r.index),
            None => decl.name.clone(),
        }
    }
}

/// A virtual register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    pub ty: ScalarType,
    /// `.v2`/`.v4` vector registers hold several elements.
    pub vector: Option<u8>,
    /// Index into [`Body::reg_decls`].
    pub decl: u32,
    /// Position within a `%r<N>` range (0 for a single declaration).
    pub index: u32,
}

/// One `.reg` declarator: a single register or a `%name<count>` range of consecutive [`RegId`]s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegDecl {
    pub name: String,
    pub ty: ScalarType,
    pub vector: Option<u8>,
    /// `Some(n)` for a range `%name<n>`.
    pub count: Option<u32>,
    pub first: RegId,
}

/// A basic block: a maximal straight-line sequence that starts at a label or after a control transfer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub label: Option<String>,
    /// `.pragma` lines met inside this block (e.g. `"nounroll"` after a loop header label).
    pub pragmas: Vec<String>,
    pub insts: Vec<InstId>,
}

/// An instruction with resolved operands.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub guard: Option<Guard>,
    pub opcode: Opcode,
    pub modifiers: SmallVec<[Modifier; 4]>,
    pub operands: SmallVec<[Operand; 4]>,
    /// Where the instruction was in the PTX text.
    pub span: Span,
    /// Index into [`Body::locs`]: the source position from the latest `.loc`.
    pub loc: Option<u32>,
}

impl Inst {
    pub fn has(&self, word: Word) -> bool {
        self.modifiers.contains(&Modifier::Word(word))
    }

    /// The type modifiers in order (`cvt.rn.f32.s32` gives `[F32, S32]`).
    pub fn types(&self) -> impl Iterator<Item = ScalarType> + '_ {
        self.modifiers.iter().filter_map(|m| match m {
            Modifier::Type(t) => Some(*t),
            _ => None,
        })
    }

    /// The state-space modifiers in order (`cp.async.bulk.shared::cta.global` gives `[SharedCta, Global]`).
    pub fn spaces(&self) -> impl Iterator<Item = StateSpace> + '_ {
        self.modifiers.iter().filter_map(|m| match m {
            Modifier::Space(s) => Some(*s),
            _ => None,
        })
    }

    /// The word modifiers in order.
    pub fn words(&self) -> impl Iterator<Item = Word> + '_ {
        self.modifiers.iter().filter_map(|m| match m {
            Modifier::Word(w) => Some(*w),
            _ => None,
        })
    }

    /// The first type modifier.
    pub fn ty(&self) -> Option<ScalarType> {
        self.types().next()
    }

    /// The first state-space modifier.
    pub fn space(&self) -> Option<StateSpace> {
        self.spaces().next()
    }

    /// The `.vN` modifier.
    pub fn vector(&self) -> Option<u8> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Vector(n) => Some(*n),
            _ => None,
        })
    }

    /// The opcode with its modifiers as written, e.g. `mul.wide.s32`.
    pub fn mnemonic(&self) -> String {
        let mut s = self.opcode.as_str().to_string();
        for m in &self.modifiers {
            s.push('.');
            s.push_str(&m.to_string());
        }
        s
    }

    /// Whether the instruction may transfer control away from the next instruction
    /// (branches, returns, exits, traps). Calls return, so they are not terminators.
    pub fn is_terminator(&self) -> bool {
        matches!(self.opcode, Opcode::Bra | Opcode::Brx | Opcode::Ret | Opcode::Exit | Opcode::Trap)
    }
}

/// A guard predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    pub reg: RegId,
    pub negated: bool,
}

/// A resolved instruction operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Reg(RegId),
    /// One element of a vector register (`%v.x`).
    RegElement(RegId, Component),
    /// A byte or half-word of a scalar register (`%r.b2`, `%r.h1`; `Component::is_selector`): the operand
    /// selectors of the video instructions. As a destination (`%r.h0`), the part the result is merged into.
    Select(RegId, Component),
    /// A special register, with its component for the vector ones (`%tid.x`).
    Special(SpecialReg, Option<Component>),
    /// A negated predicate `!%p`.
    Not(RegId),
    /// A negated register, with its byte or half-word selector (`-%r`, `-%r.h1`): `vmad`'s sources, read by
    /// the video decoder only.
    Neg(RegId, Option<Component>),
    Imm(Immediate),
    Address(Address),
    /// `{a, b, ...}`
    Vector(Vec<Operand>),
    /// `[a, b, ...]` (texture and surface operands)
    Bracket(Vec<Operand>),
    /// `(a, b, ...)` (call arguments and return values)
    List(Vec<Operand>),
    /// `d|p`
    Pair(RegId, RegId),
    /// `{a, b, ...}|p` (sparse texture fetches)
    VectorPair(Vec<Operand>, RegId),
    /// `_`
    Sink,
    Label(BlockId),
    /// A variable, parameter or function used as a value (its address).
    Symbol(Symbol),
    /// `symbol+offset` as a value.
    SymbolOffset(Symbol, i64),
    Table(TableId),
    Prototype(ProtoId),
}

/// Something with an address that an operand can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symbol {
    Global(GlobalId),
    /// A variable declared in the function body.
    Local(VarId),
    /// The function's parameter with this index.
    Param(u32),
    /// The function's return parameter with this index.
    Return(u32),
    Func(FuncId),
}

/// `[base + offset]`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Address {
    pub base: AddressBase,
    pub offset: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressBase {
    Reg(RegId),
    Symbol(Symbol),
    Absolute(i64),
}

/// A `.callprototype`.
#[derive(Clone, Debug, PartialEq)]
pub struct Prototype {
    pub name: String,
    pub returns: Vec<Param>,
    pub params: Vec<Param>,
    pub noreturn: bool,
}

/// A `.branchtargets` (labels) or `.calltargets` (functions) table.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub targets: TableTargets,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TableTargets {
    Branch(Vec<BlockId>),
    Call(Vec<FuncId>),
}

/// A `.loc` record: a source position of the PTX's originating program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub column: u32,
    pub function_name: Option<String>,
    pub inlined_at: Option<(u32, u32, u32)>,
}

impl Module {
    /// Finds a function by name.
    pub fn function(&self, name: &str) -> Option<FuncId> {
        self.functions.iter().find(|(_, f)| f.name == name).map(|(id, _)| id)
    }

    /// The kernels (`.entry` functions) of the module.
    pub fn kernels(&self) -> impl Iterator<Item = (FuncId, &Function)> + '_ {
        self.functions.iter().filter(|(_, f)| f.is_kernel())
    }

    /// The 1-based line and column of a byte offset in the text this module was lowered from.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let starts = self.line_starts.get_or_init(|| {
            let mut starts = Vec::with_capacity(self.source.len() / 32 + 1);
            starts.push(0);
            starts.extend(memchr::memchr_iter(b'\n', self.source.as_bytes()).map(|i| i as u32 + 1));
            starts
        });
        let line = starts.partition_point(|&s| s <= offset).max(1);
        let start = starts.get(line - 1).copied().unwrap_or(0);
        (line as u32, offset - start + 1)
    }

    /// The source text a span covers, as the user wrote it (empty if the module has no source).
    pub fn source_text(&self, span: Span) -> &str {
        self.source.get(span.start as usize..span.end as usize).unwrap_or("").trim()
    }

    /// The 1-based source line of an instruction.
    pub fn line_of(&self, span: Span) -> u32 {
        self.line_col(span.start).0
    }

    /// The total number of instructions in all function bodies.
    pub fn instruction_count(&self) -> usize {
        self.functions.values().filter_map(|f| f.body.as_ref()).map(|b| b.insts.len()).sum()
    }
}

impl Module {
    /// A copy with every span and the line table cleared: two modules lowered from different texts are the
    /// same IR exactly when these copies are equal (the round-trip property of the printer).
    pub fn without_source_positions(&self) -> Module {
        let mut m = self.clone();
        m.line_starts = std::sync::OnceLock::new();
        m.source = std::sync::Arc::from("");
        for g in m.globals.values_mut() {
            g.span = Span::default();
        }
        for f in m.functions.values_mut() {
            f.span = Span::default();
            if let Some(body) = &mut f.body {
                for v in body.vars.values_mut() {
                    v.span = Span::default();
                }
                for i in body.insts.values_mut() {
                    i.span = Span::default();
                }
            }
        }
        m
    }
}
