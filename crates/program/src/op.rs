//! The decoded form of an instruction, shared by both engines: an [`Op`] (its [`Kind`], modifiers, operands
//! resolved to register slots, immediates and addresses, and the [`Extra`] data of the families that need
//! more) and the [`Program`] of a function.

use std::collections::HashMap;

use ir::{FuncId, InstId, SpecialReg, VarId, Word};
use smallvec::SmallVec;

use crate::{BoolOp, Cmp, Ty};

/// Rounding modifier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rnd {
    #[default]
    None,
    Rn,
    Rz,
    Rm,
    Rp,
    Rna,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// `.lo`, `.hi`, `.wide` of multiplies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Part {
    #[default]
    Lo,
    Hi,
    Wide,
}

/// Memory space of an access.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Space {
    #[default]
    Generic,
    Global,
    Shared,
    Local,
    Const,
    Param,
}

/// Atomic and reduction operations (also `redux`, `bar.red`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AtomOp {
    #[default]
    Add,
    Min,
    Max,
    Inc,
    Dec,
    Cas,
    Exch,
    And,
    Or,
    Xor,
    Popc,
}

/// Instruction-specific sub-mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sub {
    #[default]
    None,
    Shfl(ShflMode),
    Vote(VoteMode),
    /// `match.any` (false) / `match.all` (true)
    MatchAll(bool),
    Atom(AtomOp),
    /// `shf.l` (true) / `shf.r` and `.clamp`
    Shf {
        left: bool,
        clamp: bool,
    },
    /// prmt mode index: 0 default, 1 f4e, 2 b4e, 3 rc8, 4 ecl, 5 ecr, 6 rc16
    Prmt(u8),
    Testp(Word),
    Shiftamt,
    /// `bar.sync`/`barrier.sync` (wait), `bar.arrive` (no wait), `bar.red.op`
    Bar {
        wait: bool,
        red: Option<AtomOp>,
    },
    /// `cvta.to.space` (true) or `cvta.space` (false)
    Cvta {
        to: bool,
    },
    /// `szext.clamp` / `bmsk.clamp`
    Clamp(bool),
    Sat,
    /// The operation of a `Kind::Packed16` op: `Add`, `Min` or `Max`.
    Packed16(Kind),
    /// The operation of a `Kind::Mbarrier` op.
    Mbar(crate::mbarrier::Mbar),
    /// `lop3.BoolOp`'s look-up table (its `d` operand is then the predicate q).
    Lut(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// All modifiers an op may need, decoded.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mods {
    pub rnd: Rnd,
    pub ftz: bool,
    pub sat: bool,
    pub approx: bool,
    pub full: bool,
    pub nan: bool,
    pub relu: bool,
    pub abs: bool,
    pub cc: bool,
    /// The comparison of `setp`/`set` (`Eq` for other instructions).
    pub cmp: Option<Cmp>,
    pub boolop: Option<BoolOp>,
    pub part: Part,
    pub space: Space,
    pub vec: u8,
    pub sub: Sub,
    /// A `.b128` load or store, decoded as a `.v2.b64` access of the register's two halves: one 16-byte
    /// access (`wide.rs`).
    pub b128: bool,
}

/// The address of a variable, as the launch lays it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymAddr {
    /// A device address (module `.global`/`.const` variables).
    Global(u64),
    /// An offset in the CTA's shared memory.
    Shared(u64),
    /// An offset from the thread's current frame base (`.local` and `.param` variables of a body, the
    /// parameters and return values of a device function).
    Frame(u64),
    /// An offset in the kernel's parameter buffer.
    KernelParam(u64),
    /// A function's address token.
    Func(u64),
}

/// A source operand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Src {
    #[default]
    None,
    Reg(u32),
    Pred(u32, bool),
    Imm(u64),
    Special(SpecialReg, u8),
    Sym(SymAddr, i64),
}

/// A destination.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dst {
    #[default]
    None,
    /// A register slot and the mask of its width.
    Reg(u32, u64),
    Pred(u32),
    Sink,
}

/// `[base + offset]`
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemRef {
    pub base: Src,
    pub offset: i64,
}

/// What an op does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Add,
    Sub,
    Mul,
    Mad,
    Mul24,
    Mad24,
    Sad,
    Div,
    Rem,
    Abs,
    Neg,
    Min,
    Max,
    Fma,
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Tanh,
    Copysign,
    Testp,
    Addc,
    Subc,
    Madc,
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Shl,
    Shr,
    Lop3,
    Shf,
    Prmt,
    Bfe,
    Bfi,
    Brev,
    Popc,
    Clz,
    Bfind,
    Fns,
    Bmsk,
    Szext,
    Dp4a,
    Dp2a,
    /// `cvt` to or from a packed pair of FP8 values (`.e4m3x2`, `.e5m2x2`): `m.vec` is 1 for e5m2, 0 for
    /// e4m3; `ty` is `U16` (to FP8, from `ty2` = `F32` pair or `F16x2`) or `F16x2` (from FP8).
    CvtF8,
    /// `cvt.{rna,rn,rz}{.satfinite}{.relu}.tf32.f32`: an f32 rounded to tf32 (10 fraction bits), written
    /// as f32 bits with the low 13 bits zero; `ty` is `B32`, `ty2` `F32`, `m.sat` stands for `.satfinite`.
    CvtTf32,
    /// `add`, `min`, `max` on a pair of half-words (`.u16x2`, `.s16x2`), each half on its own: `ty` is `U32`
    /// or `S32` (the halves' signedness), `m.sub` is `Sub::Packed16` with the operation, `m.relu` as given.
    Packed16,
    /// A SIMD video instruction (`vadd4`, `vabsdiff2`, ...; `Extra::Video`).
    SimdVideo,
    /// A scalar video instruction (`vadd`, `vshr`, `vmad`, `vset`, ...; `Extra::ScalarVideo`).
    ScalarVideo,
    /// `cp.async`: a copy from global to shared memory (`copy.rs`), done when issued.
    CpAsync,
    /// A bulk copy or reduction (`cp.async.bulk`, `cp.reduce.async.bulk`; `bulk.rs`, `Extra::Bulk`): done
    /// when issued, completing its bytes on an mbarrier where it names one.
    BulkCopy,
    /// An operation on an mbarrier object in shared memory (`mbarrier.rs`; `m.sub` is `Sub::Mbar`): the
    /// object at `mem`, operand `a`, the token, wait result or count in `dst`.
    Mbarrier,
    /// `cvt.pack.sat`: two s32 values saturated to `m.vec` bits each (signed when `ty` is), packed into the
    /// low bits of the destination (b lowest), the rest from the low bits of c.
    CvtPack,
    Setp,
    Set,
    Selp,
    Slct,
    Mov,
    /// `mov.bN d, {a, b, ...}`
    Pack,
    /// `mov.bN {a, b, ...}, s`
    Unpack,
    /// `mov.b128` in any form (`wide.rs`): the 128-bit value whose parts are `a` to `d` (`ty2` bits each,
    /// lowest first: two `.b64` or four `.b32`, a `.b128` register as its two halves) written to the parts of
    /// `Extra::Dsts` (`ty` bits each, lowest first).
    Move128,
    Cvt,
    Cvta,
    Isspacep,
    Ld,
    St,
    Atom,
    /// `atom.cas.b128` / `atom.exch.b128` (`wide.rs`), atomic over 16 bytes: the old value's halves to `dst`
    /// (low) and `dst2` (high); `a`, `b` the halves of the first value operand, `c`, `d` of the second
    /// (`cas`'s new value); `m.sub` the operation.
    Atom128,
    Red,
    Bra,
    Brx,
    Call,
    Ret,
    Exit,
    Trap,
    Bar,
    Shfl,
    Vote,
    Match,
    Redux,
    Activemask,
    /// `elect.sync d|p, membermask`: the lowest executing lane of the member mask (in `b`) is the leader; `dst`
    /// gets its lane id (or is a sink), `dst2` whether this lane is it (`warp.rs`).
    Elect,
    /// `mapa d, a, b`: `a` for CTA rank 0 of the cluster, an error for any other (`cluster.rs`).
    Mapa,
    /// `stacksave d`: the thread's dynamic stack pointer (`stack.rs`).
    StackSave,
    /// `stackrestore a`: sets the thread's dynamic stack pointer back to `a` (`stack.rs`).
    StackRestore,
    /// `alloca d, a` aligned to the immediate `b`: `a` bytes of the thread's dynamic stack (`stack.rs`).
    Alloca,
    /// Warp-level matrix instructions (`wmma`, `mma`, `ldmatrix`, `stmatrix`, `movmatrix`): see `tensor.rs`.
    Matrix,
    /// Texture and surface instructions (`tex`, `tld4`, `txq`, `suld`, `sust`, `suq`): see `texture.rs`.
    Texture,
    /// Fences, prefetches, `nanosleep`, `pmevent`: no effect.
    Nop,
    /// `bar.warp.sync`: no effect where warps run in lock-step (the emulator); a warp rendezvous in the JIT.
    WarpSync,
}

/// A call's argument or return value as the caller names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallArg {
    /// A caller `.param` variable (frame offset) of this many bytes.
    Frame(u64, u64),
    /// A register (old-style `.reg` parameters).
    Reg(u32, u64),
    Imm(u64),
}

/// Rarely needed operand data, kept out of [`Op`] to keep it small.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Extra {
    /// Vector destinations (`ld.v4`, `mov` unpack, `tex`).
    Dsts(SmallVec<[Dst; 4]>),
    /// Vector sources (`st.v4`, `mov` pack).
    Srcs(SmallVec<[Src; 4]>),
    Call {
        callee: Callee,
        args: Vec<CallArg>,
        rets: Vec<CallArg>,
    },
    /// `brx.idx` targets (op indices).
    Targets(Vec<u32>),
    /// A warp-level matrix instruction.
    Matrix(crate::tensor::MatrixOp),
    /// A texture or surface instruction.
    Texture(crate::texture::TexOp),
    /// A `cp.async` copy.
    Copy(crate::copy::CopyOp),
    /// A bulk copy or reduction.
    Bulk(crate::bulk::BulkOp),
    /// A vector atomic (`atom.global.add.v4.f32`, ...): one atomic per element.
    AtomVec(crate::atom_vec::AtomVec),
    /// A SIMD video instruction.
    Video(VideoOp),
    /// A scalar video instruction.
    ScalarVideo(crate::video::ScalarVideoOp),
}

/// The operation of a SIMD video instruction (`vadd2`, `vsub4`, `vavrg2`, `vabsdiff4`, `vmin2`, `vmax4`,
/// `vset2`, `vset4`): on 2 half-word or 4 byte lanes selected from {b, a}, each signed or not by its
/// operand's type, the result saturated to the destination's lane type with `.sat`, then the lanes in the
/// mask merged into c's (the others c's), or with `.add` the masked lanes summed into c.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VideoOp {
    pub op: VideoArith,
    /// 2 or 4.
    pub lanes: u8,
    pub d_signed: bool,
    pub a_signed: bool,
    pub b_signed: bool,
    pub sat: bool,
    pub add: bool,
    /// For each lane (lane 0 first), the half-word (0 to 3) or byte (0 to 7) of {b, a} that a's and b's
    /// operand takes: `a`'s parts are 0-1 (half-words) or 0-3 (bytes), `b`'s the rest. Defaults: a's own
    /// lanes for `asel`, b's for `bsel`.
    pub asel: [u8; 4],
    pub bsel: [u8; 4],
    /// The destination mask: bit i set where lane i's result is written (or, with `.add`, summed).
    pub mask: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VideoArith {
    Add,
    Sub,
    Avrg,
    Absdiff,
    Min,
    Max,
    /// `vset2`/`vset4`: 1 where the comparison holds, else 0 (unsigned lanes).
    Set(Cmp),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    Direct(FuncId),
    Indirect(Src),
}

/// One decoded instruction.
#[derive(Clone, Debug)]
pub struct Op {
    pub kind: Kind,
    pub ty: Ty,
    pub ty2: Ty,
    pub m: Mods,
    /// Guard predicate index and negation.
    pub guard: Option<(u32, bool)>,
    pub dst: Dst,
    /// Second destination (`setp d|p`, `shfl d|p`, carry-out is implicit).
    pub dst2: Dst,
    pub a: Src,
    pub b: Src,
    pub c: Src,
    pub d: Src,
    pub mem: MemRef,
    /// Branch target (op index) for `bra`.
    pub target: u32,
    /// Reconvergence point (op index) of a branch; `None` when it is the function's exit.
    pub reconverge: Option<u32>,
    pub extra: Option<Box<Extra>>,
    pub inst: InstId,
}

/// Per-thread frame of a function: parameters, return values, body `.param` and `.local` variables.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    pub size: u64,
    pub params: Vec<(u64, u64)>,
    pub returns: Vec<(u64, u64)>,
    /// Frame offset of each body `.local`/`.param` variable.
    pub vars: HashMap<VarId, u64>,
}

/// A decoded function.
#[derive(Clone, Debug)]
pub struct Program {
    pub func: FuncId,
    pub name: String,
    pub ops: Vec<Op>,
    pub slots: u32,
    pub preds: u32,
    /// The declared type of each register slot (vector registers: the element type, once per element).
    pub slot_types: Vec<Ty>,
    pub frame: Frame,
    /// Whether the function is a kernel (its parameters live in the parameter buffer).
    pub is_kernel: bool,
}
