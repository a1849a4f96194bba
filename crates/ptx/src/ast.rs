//! The PTX abstract syntax tree.
//!
//! The AST mirrors the text closely: names are borrowed from the source (`&'a str`), modifiers are kept in the
//! order they were written, and nothing is resolved (registers, labels and symbols are plain names). The `ir`
//! crate resolves names into typed indices; this crate only promises that what it returns is well formed
//! syntax whose opcodes, modifiers and types are known PTX keywords.
//!
//! Every node that a diagnostic may point at carries a [`Span`] (byte offsets into the parsed text).

use smallvec::SmallVec;

pub use crate::keywords::{Modifier, Opcode, ScalarType, SpecialReg, StateSpace};

/// A byte range `start..end` into the source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// A whole `.ptx` file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module<'a> {
    /// `.version MAJOR.MINOR`
    pub version: Option<(u32, u32)>,
    /// `.target sm_80, debug, texmode_independent` — the comma-separated words, in order.
    pub target: Vec<&'a str>,
    /// `.address_size 32|64`
    pub address_size: Option<u32>,
    /// Everything else at module scope, in source order.
    pub items: Vec<Item<'a>>,
}

/// A module-scope item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item<'a> {
    /// `.file 1 "path" [, timestamp, size]`
    File(FileDecl<'a>),
    /// `.section .debug_info { ... }`
    Section(Section<'a>),
    /// `.pragma "text";`
    Pragma(&'a str, Span),
    /// `.global`, `.const`, `.shared`, ... declarations.
    Variable(VarDecl<'a>),
    /// `.entry` or `.func`, declaration or definition.
    Function(Function<'a>),
    /// `.alias alias, aliasee;`
    Alias { alias: &'a str, aliasee: &'a str, span: Span },
}

#[derive(Clone, Debug, PartialEq)]
pub struct FileDecl<'a> {
    pub index: u32,
    /// The path as written, without the quotes (escape sequences untouched).
    pub path: &'a str,
    pub timestamp: Option<u64>,
    pub size: Option<u64>,
    pub span: Span,
}

/// A `.section` block (DWARF debug data under `-G`/`-lineinfo`). The entries are parsed so that malformed
/// sections are diagnosed; later stages treat sections as opaque data to be printed back.
#[derive(Clone, Debug, PartialEq)]
pub struct Section<'a> {
    /// Section name including the leading dot, e.g. `.debug_info`.
    pub name: &'a str,
    /// The parsed entries; left empty by [`crate::parse_with`] with `section_entries: false`.
    pub entries: Vec<SectionEntry<'a>>,
    /// The raw text between the braces, for verbatim printing.
    pub body: &'a str,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SectionEntry<'a> {
    Label(&'a str, Span),
    /// `.b8 1, 2, 3` / `.b32 $L__info_string0` / `.b64 $L__func_begin0`
    Data {
        ty: ScalarType,
        values: SmallVec<[Expr<'a>; 4]>,
        span: Span,
    },
}

/// Linkage of a module-scope symbol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// No linkage directive: visible only inside this module.
    #[default]
    Internal,
    Visible,
    Extern,
    Weak,
    Common,
}

/// A variable declaration: `[linkage] .space [.align N] [.vN] .type declarator[, declarator]*;`
/// Also used for `.reg` declarations inside function bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl<'a> {
    pub linkage: Linkage,
    pub space: StateSpace,
    pub align: Option<u32>,
    /// `.v2` / `.v4` / `.v8` element vector width, if any.
    pub vector: Option<u8>,
    pub ty: ScalarType,
    /// Attributes such as `.attribute(.managed)` / `.attribute(.unified(...))`, as written.
    pub attributes: Vec<&'a str>,
    pub declarators: SmallVec<[Declarator<'a>; 1]>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Declarator<'a> {
    pub name: &'a str,
    /// `%r<100>` declares `%r0` .. `%r99`.
    pub range: Option<u32>,
    /// Array dimensions in order; `None` for an unsized `[]` dimension.
    pub dims: SmallVec<[Option<u64>; 1]>,
    pub init: Option<Initializer<'a>>,
    pub span: Span,
}

/// A variable initializer: a constant expression or a braced (possibly nested) list.
#[derive(Clone, Debug, PartialEq)]
pub enum Initializer<'a> {
    Expr(Expr<'a>),
    List(Vec<Initializer<'a>>, Span),
    /// `name = value`, an entry of a `.samplerref`/`.texref` initializer such as
    /// `{ addr_mode_0 = clamp_to_edge, filter_mode = nearest }` (the value is usually a bare word, held as
    /// [`Expr::Symbol`]).
    Named {
        name: &'a str,
        value: Expr<'a>,
        span: Span,
    },
}

/// A constant expression (initializers, section data).
///
/// The parser folds every subexpression without symbols into one [`Expr::Imm`] (64-bit integer arithmetic
/// with C's signed/unsigned rules, or `f64` when a float is involved, as PTX specifies), so [`Expr::Unary`]
/// and [`Expr::Binary`] only appear above a symbol, e.g. `generic(a)+8` or `$L__end-$L__begin`. Comparison,
/// logical and conditional operators (`==`, `&&`, `?:`, ...) are accepted only where they fold.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr<'a> {
    Imm(Immediate, Span),
    /// A symbol's address (a variable, function or label).
    Symbol(&'a str, Span),
    /// `generic(symbol)`: the generic address of a global/const/shared variable.
    Generic(&'a str, Span),
    Unary(UnaryOp, Box<Expr<'a>>, Span),
    Binary(BinaryOp, Box<Expr<'a>>, Box<Expr<'a>>, Span),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Not,
    LogicalNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
}

/// A literal as written, decoded to its value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Immediate {
    /// An integer literal (decimal, `0x`, octal, `0b`); values above `i64::MAX` keep their two's-complement
    /// bits. `unsigned` records a `U` suffix.
    Int { value: i64, unsigned: bool },
    /// `0fXXXXXXXX`: the exact bits of an f32.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: the exact bits of an f64.
    F64Bits(u64),
    /// A decimal floating-point literal such as `1.5e3`.
    Float(f64),
}

/// `.entry` (a kernel) or `.func` (a device function).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    Entry,
    Func,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function<'a> {
    pub linkage: Linkage,
    pub kind: FunctionKind,
    /// Return parameters of a `.func` (`.func (.param .b32 r) name (...)`).
    pub returns: Vec<Param<'a>>,
    pub name: &'a str,
    pub name_span: Span,
    pub params: Vec<Param<'a>>,
    /// `.maxntid`, `.reqntid`, `.minnctapersm`, `.maxnreg`, `.noreturn`, `.pragma` and friends, in order.
    pub directives: Vec<FunctionDirective<'a>>,
    /// `None` for a declaration (prototype) ending in `;`.
    pub body: Option<Vec<Statement<'a>>>,
    pub span: Span,
}

/// A parameter of an entry or function (also the return parameters of a function).
#[derive(Clone, Debug, PartialEq)]
pub struct Param<'a> {
    /// `.param` (usual) or `.reg` (old-style function parameters).
    pub space: StateSpace,
    pub align: Option<u32>,
    pub vector: Option<u8>,
    pub ty: ScalarType,
    /// `.ptr [.space] [.align N]` attribute on a kernel pointer parameter.
    pub ptr: Option<PtrAttr>,
    /// Parameter name; may be absent in prototypes (`.callprototype (.param .b32 _) _ (...)`).
    pub name: Option<&'a str>,
    pub dims: SmallVec<[Option<u64>; 1]>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PtrAttr {
    pub space: Option<StateSpace>,
    pub align: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FunctionDirective<'a> {
    /// `.maxntid x[, y[, z]]`
    MaxNtid(SmallVec<[u32; 3]>, Span),
    /// `.reqntid x[, y[, z]]`
    ReqNtid(SmallVec<[u32; 3]>, Span),
    /// `.minnctapersm n`
    MinNctaPerSm(u32, Span),
    /// `.maxnctapersm n` (deprecated)
    MaxNctaPerSm(u32, Span),
    /// `.maxnreg n`
    MaxNreg(u32, Span),
    /// `.noreturn`
    NoReturn(Span),
    /// `.pragma "...";` attached to the function
    Pragma(&'a str, Span),
    /// `.explicitcluster`
    ExplicitCluster(Span),
    /// `.reqnctapercluster x[, y[, z]]`
    ReqNctaPerCluster(SmallVec<[u32; 3]>, Span),
    /// `.maxclusterrank n`
    MaxClusterRank(u32, Span),
    /// `.blocksareclusters` (PTX 9.0)
    BlocksAreClusters(Span),
    /// `.abi_preserve n` (PTX 9.0): registers the callee preserves.
    AbiPreserve(u32, Span),
    /// `.abi_preserve_control n` (PTX 9.0)
    AbiPreserveControl(u32, Span),
}

/// One statement of a function body.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement<'a> {
    Label(&'a str, Span),
    Instruction(Instruction<'a>),
    /// `.reg`, `.local`, `.shared`, `.param` ... declarations inside a body.
    Variable(VarDecl<'a>),
    /// A `{ ... }` scope; nvcc wraps calls in them.
    Block(Vec<Statement<'a>>, Span),
    /// `.loc file line column [, function_name label [, inlined_at file line column]]`
    Loc(Loc<'a>),
    /// `.pragma "text";`
    Pragma(&'a str, Span),
    /// `label: .branchtargets L1, L2, ...;` (targets of `brx.idx`)
    BranchTargets {
        label: &'a str,
        targets: Vec<&'a str>,
        span: Span,
    },
    /// `label: .calltargets f1, f2, ...;`
    CallTargets {
        label: &'a str,
        targets: Vec<&'a str>,
        span: Span,
    },
    /// `label: .callprototype (returns) _ (params) [.noreturn];`
    CallPrototype(CallPrototype<'a>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Loc<'a> {
    pub file: u32,
    pub line: u32,
    pub column: u32,
    pub function_name: Option<&'a str>,
    /// `inlined_at file line column`
    pub inlined_at: Option<(u32, u32, u32)>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CallPrototype<'a> {
    pub label: &'a str,
    pub returns: Vec<Param<'a>>,
    pub params: Vec<Param<'a>>,
    pub noreturn: bool,
    pub span: Span,
}

/// `[@[!]pred] opcode{.modifier} operand, ...;`
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction<'a> {
    pub guard: Option<Guard<'a>>,
    pub opcode: Opcode,
    /// Modifiers in the order written (types included: `cvt.rn.f32.s32` has `[Rn, Type(F32), Type(S32)]`).
    pub modifiers: SmallVec<[Modifier; 4]>,
    pub operands: SmallVec<[Operand<'a>; 4]>,
    pub span: Span,
}

/// A guard predicate `@%p` or `@!%p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard<'a> {
    pub negated: bool,
    pub reg: &'a str,
    pub span: Span,
}

/// An instruction operand.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand<'a> {
    /// A register or special register name (`%r1`, `%tid`), a variable, label or function name, optionally
    /// with a vector component (`%tid.x`, `%v.w`).
    Name(&'a str, Option<Component>, Span),
    /// A negated predicate `!%p` (in `and.pred`, `selp`-style operands, `vote`).
    Not(&'a str, Span),
    /// A negated register `-%r`, with its selector (`-%r.h1`): `vmad`'s sources.
    Neg(&'a str, Option<Component>, Span),
    Imm(Immediate, Span),
    /// `[base + offset]`
    Address(Address<'a>),
    /// `{a, b, c, d}`: a vector of operands (elements may be [`Operand::Sink`]).
    Vector(Vec<Operand<'a>>, Span),
    /// `[tex, sampler, {x, y}]`: a bracketed list of several operands (texture and surface coordinates).
    Bracket(Vec<Operand<'a>>, Span),
    /// `(a, b)`: a call's return or argument list.
    List(Vec<Operand<'a>>, Span),
    /// `d|p`: the two destinations of `setp`, `shfl` and friends.
    Pair(&'a str, &'a str, Span),
    /// `{a, b, c, d}|p`: a vector destination and a predicate destination (`tex`/`tld4` returning the
    /// sparse-texture residency flag).
    VectorPair(Vec<Operand<'a>>, &'a str, Span),
    /// `_`: a destination whose value is discarded.
    Sink(Span),
    /// `sym+8` / `sym-4` as a plain (non-bracketed) operand, e.g. `mov.u64 %rd1, arr+8;`
    SymbolOffset(&'a str, i64, Span),
}

/// What follows a name after a dot: a vector component (`.x` .. `.w`, `.r` .. `.a`), the byte or
/// half-word selector of a video instruction's operand (`%r.b2`, `%r.h1`), or the lane selector or mask of
/// a SIMD video instruction (`%r.h10`, `%r.b7654`, `%r.b320`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    X,
    Y,
    Z,
    W,
    B0,
    B1,
    B2,
    B3,
    H0,
    H1,
    /// Two to four lane digits (`.h10`, `.b7654`, `.b31`): a SIMD video instruction's source lane selector or
    /// destination mask, what it means decided by the instruction.
    Lanes(Lanes),
}

/// The digits of a SIMD video lane selector or mask, as written: `digits[0]` is the first (the highest
/// lane's), `len` of them (2 to 4); `half` for `.h`, bytes for `.b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lanes {
    pub half: bool,
    pub len: u8,
    pub digits: [u8; 4],
}

impl Lanes {
    /// `.hxy` (x, y from 0 to 3) or `.bxy`, `.bxyz`, `.bxyzw` (from 0 to 7), without the dot.
    pub fn parse(s: &str) -> Option<Lanes> {
        let (half, rest) = match s.as_bytes().first()? {
            b'h' => (true, &s[1..]),
            b'b' => (false, &s[1..]),
            _ => return None,
        };
        let max = if half { b'3' } else { b'7' };
        let ok = if half { rest.len() == 2 } else { (2..=4).contains(&rest.len()) };
        if !ok || !rest.bytes().all(|c| (b'0'..=max).contains(&c)) {
            return None;
        }
        let mut digits = [0; 4];
        for (d, c) in digits.iter_mut().zip(rest.bytes()) {
            *d = c - b'0';
        }
        Some(Lanes { half, len: rest.len() as u8, digits })
    }

    /// The digits as written.
    pub fn digits(&self) -> &[u8] {
        &self.digits[..usize::from(self.len)]
    }
}

impl Component {
    /// A byte or half-word selector rather than a vector component.
    pub fn is_selector(self) -> bool {
        !matches!(self, Component::X | Component::Y | Component::Z | Component::W)
    }

    /// The spelling of a single-letter or single-digit component (`"x"`, `"b2"`); `None` for lane digits
    /// (`Lanes`, spelled by `Display`).
    pub fn as_str(self) -> Option<&'static str> {
        Some(match self {
            Component::X => "x",
            Component::Y => "y",
            Component::Z => "z",
            Component::W => "w",
            Component::B0 => "b0",
            Component::B1 => "b1",
            Component::B2 => "b2",
            Component::B3 => "b3",
            Component::H0 => "h0",
            Component::H1 => "h1",
            Component::Lanes(_) => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressBase<'a> {
    /// A register holding an address.
    Reg(&'a str),
    /// A variable (or parameter) name.
    Symbol(&'a str),
    /// An absolute address `[0x1000]`.
    Absolute(i64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Address<'a> {
    pub base: AddressBase<'a>,
    pub offset: i64,
    pub span: Span,
}
