//! Warp-level matrix instructions: `wmma.load` / `wmma.store` / `wmma.mma`, `mma.sync`, `ldmatrix`, `stmatrix`
//! and `movmatrix`, and each warp's part of the warpgroup's `wgmma.mma_async` (`wgmma.rs`).
//!
//! All of them are collective: the 32 lanes of a warp execute them together (`.sync.aligned`), so each is
//! executed once per warp over every lane's registers, and the emulator requires the whole warp to execute
//! it (a partial warp or a divergent warp is an error naming the instruction and its PTX line).
//!
//! # Fragment layouts
//!
//! - **`mma.sync`** of other element types (`m16n8k16`/`m16n8k32` `.s8`/`.u8` with `.s32` accumulators,
//!   `m16n8k16`/`m16n8k32` `.e4m3`/`.e5m2` with `.f16` or `.f32` accumulators (sm_89, the 8-bit layouts; FP8
//!   values are exact in `.f32`, summed as `.f16` products are), `m16n8k8` `.tf32`, `m8n8k4` `.f64`) follows
//!   the ISA's tables for them too (see [`Frag::position`]).
//!   Integer results are exact, then wrapped to 32 bits or, with `.satfinite`, clamped; `.f64` is one fused
//!   multiply-add per step in order of k, rounded as `.rn`/`.rz`/`.rm`/`.rp` says; `.tf32` operands count
//!   by their upper 19 bits.
//! - **Single-bit** `mma.sync` (`m8n8k128`, `m16n8k128`, `m16n8k256`) and `wmma` (`m8n8k128`, A `.row`, B
//!   `.col`, strides in bits) with `.xor.popc` / `.and.popc`: the fragments are matrices of 32-bit words
//!   of 32 elements along k ([`Elem::B1`]), which is how every `.b1` layout of the ISA places them (the
//!   `mma` ones are then the 32-bit-element layouts above); D = C + the population count of the row of A
//!   XOR (AND) the column of B, wrapped to 32 bits.
//! - **`mma.sync.m8n8k4`** with `.f16` multiplicands (any `.alayout.blayout`, `.f16`/`.f32` accumulators) is
//!   four independent 8×8×4 products, computation `q` held by lanes `4q..4q+3` and `16+4q..16+4q+3`, in the
//!   ISA's per-lane layouts for it ([`Layout::QuadA`]); the arithmetic is that of the other `.f16` shapes.
//! - **`mma.sync`** (`m16n8k8`, `m16n8k16`; `.f16`/`.bf16` inputs, `.f16`/`.f32` accumulators) and
//!   **`ldmatrix`** (`m8n8`, `.x1/.x2/.x4`, `.trans`, `.b16`) follow the layouts the PTX ISA specifies, with
//!   `g = %laneid >> 2` and `t = %laneid % 4`. A (`a0..a7`, two per `.b32` register, low half first): row
//!   `g + 8·((i >> 1) & 1)`, column `2t + (i & 1) + 8·(i >> 2)`; B (`b0..b3`): row `2t + (i & 1) + 8·(i >> 1)`,
//!   column `g`; C and D (`c0..c3`, one per `.f32` register or two per `.f16x2` register): row
//!   `g + 8·(i >> 1)`, column `2t + (i & 1)`. `ldmatrix`: lanes `8j .. 8j+7` give the addresses of rows 0–7 of
//!   matrix `j`; lane `l` receives, in destination register `j`, row `l / 4`, columns `2(l % 4)` and
//!   `2(l % 4) + 1` of matrix `j` (with `.trans`: rows `2(l % 4)`, `2(l % 4) + 1` of column `l / 4`).
//!   **`stmatrix`** stores the same fragments to the same row addresses; **`movmatrix`** gives each lane the
//!   `ldmatrix` fragment of the transposed matrix.
//! - **`wmma`** fragments are opaque in PTX (their layout is implementation-defined and differs between GPU
//!   generations), so the emulator uses its own, the same for `wmma.load`, `wmma.mma` and `wmma.store`:
//!   slot `e` of lane `l` (8-bit elements four per `.b32` register and 16-bit elements two, low first;
//!   `.f32`/`.tf32`/`.s32` one per register, `.f64` one per `.f64` register) holds element `(32·e + l) mod (rows·cols)` of the fragment's matrix in row-major order,
//!   whatever the memory layout (`.row`/`.col`) it was loaded from. A fragment with more slots than the
//!   matrix has elements (the `.f16` A and B fragments: eight registers, sixteen slots, for 256 or 128
//!   elements) holds every element twice or four times; `wmma.load` fills every copy, `wmma.mma` reads the
//!   first. Every `wmma` type uses this layout (`.f16`/`.bf16`, `.s8`/`.u8` with `.s32` accumulators,
//!   `.tf32` `m16n16k8`, `.f64` `m8n8k4`), with the register counts the ISA gives each fragment; the
//!   arithmetic is that of the same types' `mma.sync`. Loads and stores honour the layout qualifier and the stride (in elements; by default the
//!   leading dimension), and check the ISA's alignment rule: the address and the stride in bytes must be
//!   multiples of the fragment's size in bytes. The address and stride must be the same in every lane.
//!
//! # Arithmetic
//!
//! `D = A·B + C` is computed per element as the sequence `acc = C[m][n]`, then for `k = 0, 1, …, K-1`:
//! `acc = fma(A[m][k], B[k][n], acc)` in `.f32` with round-to-nearest-even (one rounding per accumulate
//! step; the products of `.f16`/`.bf16` values are exact in `.f32`), no flushing of subnormals. An `.f16`
//! C is widened exactly to `.f32` first, and an `.f16` D is the final `.f32` accumulator rounded to nearest
//! `.f16`. Real tensor cores add the products of a step in a wider, truncating adder, so hardware results
//! may differ from these in the last bits; the emulator's are reproducible and order-defined. NaN results are
//! the canonical NaN.
//!
//! Statistics count these as instructions; their memory accesses are not part of the coalescing and
//! bank-conflict statistics.

use ir::{Modifier, Operand, ScalarType, Word};
use scalar::half::{self as sh, Bf16, F16};
use scalar::round::Rounding;
use smallvec::SmallVec;

use crate::types::Ty;
use crate::WarpAccess;
use crate::{Dst, Op, OperandCx, Space, Src, WARP};
use device::{ErrorKind, ExecError};
use scalar::float::{self as sf, Mods};
use simt::LaneMask;

/// Element type of a fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F16,
    Bf16,
    F32,
    /// `.tf32`: an `.f32` bit pattern of which the multiply reads the sign, the exponent and the top 10
    /// fraction bits (see [`Elem::to_f32`]).
    Tf32,
    F64,
    S8,
    U8,
    S32,
    /// FP8 multiplicands of `wgmma` (one byte each).
    E4m3,
    E5m2,
    /// Single-bit multiplicands, handled as 32-bit words of 32 consecutive elements along k (element
    /// `32w + j` is bit `j` of word `w`, low to high as in the ISA's fragments and in memory): every `.b1`
    /// fragment layout of the ISA places whole words, so the fragments are word matrices `k / 32` wide.
    B1,
}

impl Elem {
    pub fn from_scalar(t: ScalarType) -> Option<Elem> {
        match t {
            ScalarType::F16 | ScalarType::F16x2 => Some(Elem::F16),
            ScalarType::Bf16 | ScalarType::Bf16x2 => Some(Elem::Bf16),
            ScalarType::F32 => Some(Elem::F32),
            _ => None,
        }
    }

    /// The `mma` element type of a type qualifier (`wmma` takes [`Elem::from_scalar`]'s).
    pub fn mma(t: ScalarType) -> Option<Elem> {
        match t {
            ScalarType::Tf32 => Some(Elem::Tf32),
            ScalarType::F64 => Some(Elem::F64),
            ScalarType::S8 => Some(Elem::S8),
            ScalarType::U8 => Some(Elem::U8),
            ScalarType::S32 => Some(Elem::S32),
            ScalarType::E4m3 => Some(Elem::E4m3),
            ScalarType::E5m2 => Some(Elem::E5m2),
            _ => Elem::from_scalar(t),
        }
    }

    pub fn bytes(self) -> u32 {
        match self {
            Elem::S8 | Elem::U8 | Elem::E4m3 | Elem::E5m2 => 1,
            Elem::F16 | Elem::Bf16 => 2,
            Elem::F32 | Elem::Tf32 | Elem::S32 | Elem::B1 => 4,
            Elem::F64 => 8,
        }
    }

    /// Elements per register (32-bit registers; an `.f64` element takes a 64-bit register of its own).
    pub fn per_reg(self) -> u32 {
        (4 / self.bytes()).max(1)
    }

    pub fn is_int(self) -> bool {
        matches!(self, Elem::S8 | Elem::U8 | Elem::S32)
    }

    /// [`Elem::mma`], and `.b1` (which `wgmma` does not take).
    fn mma_or_b1(t: ScalarType) -> Option<Elem> {
        if t == ScalarType::B1 {
            Some(Elem::B1)
        } else {
            Elem::mma(t)
        }
    }

    /// The integer value of an integer element's bits.
    pub fn to_i64(self, bits: u64) -> i64 {
        match self {
            Elem::S8 => i64::from(bits as u8 as i8),
            Elem::U8 => i64::from(bits as u8),
            _ => i64::from(bits as u32 as i32),
        }
    }

    /// A floating-point element's value. A `.tf32` element is the register's `.f32` bits with the low 13
    /// fraction bits cleared: the ISA leaves tf32's layout to the implementation (5.2.3) and produces valid
    /// operands with `cvt.rna.tf32.f32`, which zeroes them; tensor cores read the upper 19 bits only.
    pub fn to_f32(self, bits: u64) -> f32 {
        match self {
            Elem::F16 => sh::to_f32::<F16>(bits as u16),
            Elem::Bf16 => sh::to_f32::<Bf16>(bits as u16),
            Elem::F32 => f32::from_bits(bits as u32),
            Elem::Tf32 => f32::from_bits(bits as u32 & 0xFFFF_E000),
            Elem::F64 => f64::from_bits(bits) as f32,
            Elem::S8 | Elem::U8 | Elem::S32 | Elem::B1 => self.to_i64(bits) as f32,
            // Every FP8 value is exact in `.f32`.
            Elem::E4m3 | Elem::E5m2 => {
                use scalar::convert::{convert, CvtModes, Type};
                let from = if self == Elem::E4m3 { Type::E4m3 } else { Type::E5m2 };
                f32::from_bits(convert(bits & 0xFF, from, Type::F32, CvtModes::default()) as u32)
            }
        }
    }

    pub fn round_from(self, x: f32) -> u64 {
        match self {
            Elem::F16 => u64::from(sh::from_f32::<F16>(x, Rounding::Rn)),
            Elem::Bf16 => u64::from(sh::from_f32::<Bf16>(x, Rounding::Rn)),
            Elem::F64 => f64::from(x).to_bits(),
            _ => u64::from(x.to_bits()),
        }
    }
}

/// Which lane holds which element of a fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The emulator's `wmma` layout (see the module documentation).
    Wmma,
    /// The `mma.sync` layouts of the PTX ISA.
    MmaA,
    MmaB,
    MmaC,
    /// A warp's 16 rows of a `wgmma` accumulator (`m64nN`): the `MmaC` layout repeated for every 8 columns.
    WgmmaD,
    /// `.f16` `mma.m8n8k4`: four independent 8×8×4 products, one per quad pair, stacked (A 32×4 and C/D 32×8
    /// by rows `8q..8q+8`, B 4×32 by columns `8q..8q+8`, for the computation `q`); `col` is the operand's
    /// layout qualifier.
    QuadA {
        col: bool,
    },
    QuadB {
        col: bool,
    },
    QuadC,
}

/// The geometry of one fragment: the matrix it holds, its element type, and how many registers it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frag {
    pub rows: u32,
    pub cols: u32,
    pub elem: Elem,
    pub regs: u32,
    pub layout: Layout,
}

impl Frag {
    /// A `wmma` fragment: `role` is `a` (M×K), `b` (K×N) or `c`/`d` (M×N).
    pub fn wmma(role: Word, (m, n, k): (u32, u32, u32), elem: Elem) -> Frag {
        let (rows, cols) = match role {
            Word::A => (m, k),
            Word::B => (k, n),
            _ => (m, n),
        };
        let total = rows * cols;
        let regs = match (role, elem) {
            // The `.f16` multiplicand fragments are eight `.f16x2` registers for every shape.
            (Word::A | Word::B, Elem::F16) => 8,
            (_, e) => total / WARP as u32 / e.per_reg(),
        };
        Frag { rows, cols, elem, regs, layout: Layout::Wmma }
    }

    /// An `mma.sync` fragment for shape `m{m}n{n}k{k}`.
    pub fn mma(layout: Layout, (m, n, k): (u32, u32, u32), elem: Elem) -> Frag {
        let (rows, cols) = match layout {
            Layout::MmaA => (m, k),
            Layout::MmaB => (k, n),
            _ => (m, n),
        };
        let regs = rows * cols / WARP as u32 / elem.per_reg();
        Frag { rows, cols, elem, regs, layout }
    }

    /// An `.f16` `mma.m8n8k4` fragment (stacked over the four quad pairs, see [`Layout::QuadA`]).
    pub fn quad(layout: Layout, elem: Elem) -> Frag {
        let (rows, cols) = match layout {
            Layout::QuadA { .. } => (32, 4),
            Layout::QuadB { .. } => (4, 32),
            _ => (32, 8),
        };
        Frag { rows, cols, elem, regs: rows * cols / WARP as u32 / elem.per_reg(), layout }
    }

    pub fn slots(&self) -> u32 {
        self.regs * self.elem.per_reg()
    }

    pub fn bytes(&self) -> u64 {
        u64::from(self.regs * self.elem.per_reg() * self.elem.bytes())
    }

    /// The (row, column) of the element in slot `e` of `lane`. The `mma` layouts are the ISA's "Matrix
    /// Fragments for mma.m…" tables, which depend on the element size: 16-bit elements (`m16n8k8`,
    /// `m16n8k16`), 8-bit integers (`m16n8k16`, `m16n8k32`: A row `g + 8·((i >> 2) & 1)`, column
    /// `4t + (i & 3) + 16·(i >> 3)`; B row `4t + (i & 3) + 16·(i >> 2)`, column `g`), one element per
    /// register (`.tf32` `m16n8k8`: A row `g + 8·(i & 1)`, column `t + 4·(i >> 1)`; B row `t + 4i`, column
    /// `g`; `.f64` `m8n8k4`: A (`g`, `t`), B (`t`, `g`)). C and D are the same for all: row `g + 8·(i >> 1)`,
    /// column `2t + (i & 1)` (`m8n8k4` has i = 0, 1 only).
    pub fn position(&self, lane: u32, e: u32) -> (u32, u32) {
        let (g, t) = (lane >> 2, lane & 3);
        match (self.layout, self.elem.bytes()) {
            (Layout::Wmma, _) => {
                let idx = (e * WARP as u32 + lane) % (self.rows * self.cols);
                (idx / self.cols, idx % self.cols)
            }
            (Layout::MmaA, 1) => (g + 8 * ((e >> 2) & 1), 4 * t + (e & 3) + 16 * (e >> 3)),
            (Layout::MmaB, 1) => (4 * t + (e & 3) + 16 * (e >> 2), g),
            (Layout::MmaA, 2) => (g + 8 * ((e >> 1) & 1), 2 * t + (e & 1) + 8 * (e >> 2)),
            (Layout::MmaB, 2) => (2 * t + (e & 1) + 8 * (e >> 1), g),
            (Layout::MmaA, _) => (g + 8 * (e & 1), t + 4 * (e >> 1)),
            (Layout::MmaB, _) => (t + 4 * e, g),
            (Layout::MmaC, _) => (g + 8 * (e >> 1), 2 * t + (e & 1)),
            (Layout::WgmmaD, _) => (g + 8 * ((e >> 1) & 1), 8 * (e >> 2) + 2 * t + (e & 1)),
            // The ISA's "Matrix Fragments for mma.m8n8k4 with .f16": lanes 4q..4q+3 (low group) and
            // 16+4q..16+4q+3 (high group) hold computation q; `r = %laneid % 4`, `h = 4` in the high group.
            (Layout::QuadA { .. } | Layout::QuadB { .. } | Layout::QuadC, _) => {
                let (q, r, h) = ((lane >> 2) & 3, lane & 3, if lane >= 16 { 4 } else { 0 });
                match self.layout {
                    Layout::QuadA { col: true } => (8 * q + e + h, r),
                    Layout::QuadA { col: false } => (8 * q + r + h, e),
                    Layout::QuadB { col: true } => (e, 8 * q + r + h),
                    Layout::QuadB { col: false } => (r, 8 * q + e + h),
                    _ if self.elem == Elem::F16 => (8 * q + r + h, e),
                    _ => (8 * q + (lane & 1) + (e & 2) + h, (e & 4) + (lane & 2) + (e & 1)),
                }
            }
        }
    }

    /// The matrix (row-major element bits) held by the registers `regs` (one value per lane each). Where
    /// several slots hold the same element, the first one counts.
    pub fn gather(&self, regs: &[[u64; WARP]]) -> Vec<u64> {
        let per = self.elem.per_reg();
        let bits = self.elem.bytes() * 8;
        let mask = crate::types::mask_bits(bits);
        let mut tile = vec![None; (self.rows * self.cols) as usize];
        for e in 0..self.slots() {
            for lane in 0..WARP as u32 {
                let (r, c) = self.position(lane, e);
                let slot = &mut tile[(r * self.cols + c) as usize];
                if slot.is_none() {
                    let v = regs[(e / per) as usize][lane as usize];
                    *slot = Some((v >> (bits * (e % per))) & mask);
                }
            }
        }
        tile.into_iter().map(Option::unwrap_or_default).collect()
    }

    /// The registers (one value per lane each) holding the row-major matrix `tile`.
    pub fn scatter(&self, tile: &[u64]) -> Vec<[u64; WARP]> {
        let per = self.elem.per_reg();
        let bits = self.elem.bytes() * 8;
        let mut regs = vec![[0u64; WARP]; self.regs as usize];
        for e in 0..self.slots() {
            for lane in 0..WARP as u32 {
                let (r, c) = self.position(lane, e);
                regs[(e / per) as usize][lane as usize] |= tile[(r * self.cols + c) as usize] << (bits * (e % per));
            }
        }
        regs
    }
}

/// A decoded matrix instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatrixOp {
    /// `wmma.load.{a,b,c}`
    Load { frag: Frag, col_major: bool, dsts: SmallVec<[Dst; 8]>, stride: Option<Src> },
    /// `wmma.store.d`
    Store { frag: Frag, col_major: bool, srcs: SmallVec<[Src; 8]>, stride: Option<Src> },
    /// `wmma.mma` and `mma.sync`: `D = A·B + C`.
    Mma(Box<MmaOp>),
    /// `ldmatrix.m8n8.{x1,x2,x4}{.trans}.b16`: one destination register per matrix.
    Ldmatrix { trans: bool, dsts: SmallVec<[Dst; 4]> },
    /// `stmatrix.m8n8.{x1,x2,x4}{.trans}.b16`: one source register per matrix, the fragments of `ldmatrix`.
    Stmatrix { trans: bool, srcs: SmallVec<[Src; 4]> },
    /// `movmatrix.m8n8.trans.b16 d, a`: the `ldmatrix` fragment of the transpose of the matrix `a` holds.
    Movmatrix { dst: Dst, src: Src },
    /// `wgmma.mma_async`: this warp's quarter of the warpgroup's `D = A·B + D` (`crate::wgmma`).
    Wgmma(Box<crate::wgmma::WgmmaOp>),
}

impl MatrixOp {
    /// Calls `src` for every source operand and `dst` for every destination.
    pub fn operands(&self, mut src: impl FnMut(&Src), mut dst: impl FnMut(&Dst)) {
        match self {
            MatrixOp::Load { dsts, stride, .. } => {
                dsts.iter().for_each(&mut dst);
                stride.iter().for_each(&mut src);
            }
            MatrixOp::Store { srcs, stride, .. } => {
                srcs.iter().for_each(&mut src);
                stride.iter().for_each(&mut src);
            }
            MatrixOp::Mma(m) => {
                m.dsts.iter().for_each(&mut dst);
                m.srcs.iter().flatten().for_each(&mut src);
            }
            MatrixOp::Ldmatrix { dsts, .. } => dsts.iter().for_each(&mut dst),
            MatrixOp::Stmatrix { srcs, .. } => srcs.iter().for_each(&mut src),
            MatrixOp::Movmatrix { dst: d, src: a } => {
                src(a);
                dst(d);
            }
            MatrixOp::Wgmma(w) => w.operands(src, dst),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MmaOp {
    pub k: u32,
    /// Integer `mma`: `.satfinite` clamps the `.s32` result instead of wrapping it.
    pub satfinite: bool,
    /// `.f64` `mma`: the rounding of each fused multiply-add (`.rn` unless `.rz`, `.rm`, `.rp`).
    pub rounding: Rounding,
    /// `.b1` `mma`: `.and.popc` (else `.xor.popc`) — `k` then counts 32-bit words.
    pub and: bool,
    pub a: Frag,
    pub b: Frag,
    pub c: Frag,
    pub d: Frag,
    pub dsts: SmallVec<[Dst; 8]>,
    pub srcs: [SmallVec<[Src; 8]>; 3],
}

/// Decodes a `wmma`, `mma` or `ldmatrix` instruction; `None` (after recording why) if the emulator does not
/// implement its form.
pub(crate) fn decode(cx: &mut OperandCx<'_, '_>, op: &mut Op) -> Option<MatrixOp> {
    let inst = cx.inst();
    let words: SmallVec<[Word; 8]> = inst.words().collect();
    let shape = inst.modifiers.iter().find_map(|m| match m {
        Modifier::Shape(s) => Some((u32::from(s.m), u32::from(s.n), s.k.map(u32::from))),
        _ => None,
    });
    let types: SmallVec<[ScalarType; 4]> = inst.types().collect();
    let has = |w: Word| words.contains(&w);
    let ops = &inst.operands;
    let fail = |cx: &mut OperandCx<'_, '_>, why: &str| {
        cx.unsupported(why);
        None
    };
    match inst.opcode {
        ir::Opcode::Ldmatrix | ir::Opcode::Stmatrix => {
            let name = inst.opcode;
            if shape != Some((8, 8, None)) || types.as_slice() != [ScalarType::B16] {
                return fail(cx, &format!("only `{name}.m8n8` with `.b16` elements is implemented"));
            }
            let num = if has(Word::X4) {
                4
            } else if has(Word::X2) {
                2
            } else if has(Word::X1) {
                1
            } else {
                return fail(cx, &format!("`{name}` needs `.x1`, `.x2` or `.x4`"));
            };
            if !matches!(op.m.space, Space::Shared | Space::Generic) {
                return fail(cx, &format!("`{name}` accesses shared memory"));
            }
            let load = name == ir::Opcode::Ldmatrix;
            let (mem, regs) = if load { (ops.get(1), ops.first()) } else { (ops.first(), ops.get(1)) };
            op.mem = cx.mem(mem);
            let trans = has(Word::Trans);
            if load {
                let dsts = dst_list(cx, regs)?;
                if dsts.len() != num {
                    return fail(cx, &format!("`ldmatrix .x{num}` needs {num} destination registers"));
                }
                Some(MatrixOp::Ldmatrix { trans, dsts: dsts.into_iter().collect() })
            } else {
                let srcs = src_list(cx, regs)?;
                if srcs.len() != num || ops.len() != 2 {
                    return fail(cx, &format!("`stmatrix .x{num}` needs {num} source registers"));
                }
                Some(MatrixOp::Stmatrix { trans, srcs: srcs.into_iter().collect() })
            }
        }
        ir::Opcode::Movmatrix => {
            let plain = words.iter().all(|w| matches!(w, Word::Sync | Word::Aligned | Word::Trans));
            if shape != Some((8, 8, None)) || types.as_slice() != [ScalarType::B16] || !has(Word::Trans) || !plain {
                return fail(cx, "`movmatrix` is `movmatrix.sync.aligned.m8n8.trans.b16`");
            }
            let (Some(d @ Operand::Reg(_)), Some(a @ Operand::Reg(_)), 2) = (ops.first(), ops.get(1), ops.len()) else {
                return fail(cx, "`movmatrix` takes two 32-bit registers, d and a");
            };
            Some(MatrixOp::Movmatrix { dst: cx.dst(d), src: cx.src(a, Ty::B32) })
        }
        ir::Opcode::Wmma => {
            let Some((m, n, Some(k))) = shape else { return fail(cx, "`wmma` needs a shape such as `.m16n16k16`") };
            let col_major = has(Word::Col);
            if has(Word::Load) || has(Word::Store) {
                let Some(role) = [Word::A, Word::B, Word::C, Word::D].into_iter().find(|w| has(*w)) else {
                    return fail(cx, "`wmma.load`/`wmma.store` need a fragment `.a`, `.b`, `.c` or `.d`");
                };
                let elem = match types.as_slice() {
                    [t] => Elem::mma_or_b1(*t),
                    _ => None,
                };
                let multiplicand = matches!(role, Word::A | Word::B);
                let Some(elem) = elem.filter(|e| wmma_type_fits((m, n, k), *e, multiplicand)) else {
                    return fail(cx, WMMA_FORMS);
                };
                if elem == Elem::B1 && col_major != (role == Word::B) {
                    return fail(cx, "a `.b1` `wmma` A fragment is `.row` and a B fragment `.col`");
                }
                let frag = Frag::wmma(role, wmma_words((m, n, k), elem), elem);
                let (regs_at, mem_at) = if has(Word::Load) { (0, 1) } else { (1, 0) };
                let stride = ops.get(2).map(|o| cx.src(o, Ty::U32));
                op.mem = cx.mem(ops.get(mem_at));
                if has(Word::Load) {
                    let dsts = dst_list(cx, ops.get(regs_at))?;
                    check_count(cx, dsts.len(), frag.regs)?;
                    Some(MatrixOp::Load { frag, col_major, dsts, stride })
                } else {
                    let srcs = src_list(cx, ops.get(regs_at))?;
                    check_count(cx, srcs.len(), frag.regs)?;
                    Some(MatrixOp::Store { frag, col_major, srcs, stride })
                }
            } else {
                // wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype (f16 multiplicands), or
                // .dtype.atype.btype.ctype. The fragments are already in logical (row, column) order, so the
                // layout qualifiers have no further effect.
                let (d, a, b, c) = match types.as_slice() {
                    [d, c] => (Elem::from_scalar(*d), Some(Elem::F16), Some(Elem::F16), Elem::from_scalar(*c)),
                    [d, a, b, c] => (Elem::mma(*d), Elem::mma_or_b1(*a), Elem::mma_or_b1(*b), Elem::mma(*c)),
                    _ => (None, None, None, None),
                };
                let (Some(d), Some(a), Some(b), Some(c)) = (d, a, b, c) else { return fail(cx, WMMA_FORMS) };
                use Elem::*;
                let fits = [(a, true), (b, true), (c, false), (d, false)]
                    .into_iter()
                    .all(|(e, mult)| wmma_type_fits((m, n, k), e, mult));
                let ok = fits
                    && match a {
                        F16 => b == F16 && matches!(c, F16 | F32) && matches!(d, F16 | F32),
                        Bf16 | Tf32 => b == a && (c, d) == (F32, F32),
                        S8 | U8 => b == a && (c, d) == (S32, S32),
                        F64 => (b, c, d) == (F64, F64, F64),
                        B1 => b == B1 && (c, d) == (S32, S32),
                        _ => false,
                    };
                if !ok {
                    return fail(cx, &format!("unsupported `wmma.mma` type combination; {WMMA_FORMS}"));
                }
                if has(Word::Satfinite) && !a.is_int() {
                    return fail(cx, "`.satfinite` on a floating-point `wmma.mma` is not implemented");
                }
                if [Word::Rn, Word::Rz, Word::Rm, Word::Rp].into_iter().any(has) && a != F64 {
                    return fail(cx, "a rounding modifier is valid on `.f64` `wmma.mma` only");
                }
                if (a == B1) != (has(Word::Popc) && (has(Word::Xor) || has(Word::And))) {
                    return fail(cx, "`.b1` `wmma.mma` is `wmma.mma.{xor,and}.popc`, and only it");
                }
                let layouts = words.iter().filter(|w| matches!(w, Word::Row | Word::Col));
                if a == B1 && !layouts.eq([Word::Row, Word::Col].iter()) {
                    return fail(cx, "`.b1` `wmma.mma` is `.row.col`");
                }
                let shape = wmma_words((m, n, k), a);
                let frags = [
                    Frag::wmma(Word::A, shape, a),
                    Frag::wmma(Word::B, shape, b),
                    Frag::wmma(Word::C, shape, c),
                    Frag::wmma(Word::D, shape, d),
                ];
                mma_operands(cx, ops, shape.2, frags)
            }
        }
        ir::Opcode::Mma => {
            let Some((m, n, Some(k))) = shape else { return fail(cx, "`mma` needs a shape such as `.m16n8k16`") };
            if has(Word::Sp) || has(Word::SpOrderedMetadata) {
                return fail(
                    cx,
                    "sparse `mma.sp` is not implemented: the PTX ISA gives the metadata operand's mapping to the \
                     elements of A only in figures, which lockstep does not follow yet",
                );
            }
            if words.iter().any(|w| w.as_str().starts_with("kind::") || *w == Word::BlockScale) {
                return fail(cx, "`mma` with `.kind::…` (sm_120 FP8/FP6/FP4 and block scaling) is not implemented");
            }
            let layouts: SmallVec<[Word; 2]> =
                words.iter().copied().filter(|w| matches!(w, Word::Row | Word::Col)).collect();
            let elems: SmallVec<[Option<Elem>; 4]> = types.iter().map(|t| Elem::mma_or_b1(*t)).collect();
            if (m, n, k) == (8, 8, 4) && elems.get(1) == Some(&Some(Elem::F16)) {
                return quad_pair_mma(cx, ops, &layouts, &elems);
            }
            if layouts.as_slice() != [Word::Row, Word::Col] {
                return fail(cx, "only `mma.sync.aligned.{shape}.row.col` is implemented");
            }
            let [Some(d), Some(a), Some(b), Some(c)] = *elems.as_slice() else {
                return fail(
                    cx,
                    "`mma` needs `.dtype.atype.btype.ctype` with `.f16`/`.bf16`/`.tf32`/`.f64`/`.s8`/`.u8`/`.e4m3`/\
                     `.e5m2`/`.b1` multiplicands",
                );
            };
            use Elem::*;
            let ok = match (m, n, k) {
                (16, 8, 8 | 16) if matches!(a, F16 | Bf16) => {
                    a == b
                        && matches!(d, F16 | F32)
                        && matches!(c, F16 | F32)
                        && (a == F16 || (d, c) == (F32, F32))
                        && (k == 16 || d == c)
                }
                (16, 8, 8) if a == Tf32 => b == Tf32 && (d, c) == (F32, F32),
                (16, 8, 16 | 32) if matches!(a, S8 | U8) => matches!(b, S8 | U8) && (d, c) == (S32, S32),
                // FP8 (sm_89): the 8-bit fragment layouts, products summed as for `.f16`.
                (16, 8, 16 | 32) if matches!(a, E4m3 | E5m2) => matches!(b, E4m3 | E5m2) && d == c && matches!(d, F16 | F32),
                (8, 8, 4) if a == F64 => (d, b, c) == (F64, F64, F64),
                (8, 8, 128) | (16, 8, 128 | 256) if a == B1 => b == B1 && (d, c) == (S32, S32),
                _ => {
                    return fail(
                        cx,
                        "the `mma` shapes implemented are `.m16n8k8`/`.m16n8k16` (`.f16`, `.bf16`), `.m16n8k8` \
                         (`.tf32`), `.m16n8k16`/`.m16n8k32` (`.s8`, `.u8`, `.e4m3`, `.e5m2`), `.m8n8k4` (`.f64`, `.f16`) and \
                         `.m8n8k128`/`.m16n8k128`/`.m16n8k256` (`.b1`)",
                    )
                }
            };
            if !ok {
                return fail(cx, "unsupported `mma` type combination");
            }
            if has(Word::Satfinite) && !a.is_int() {
                return fail(cx, "`.satfinite` on a floating-point `mma` is not implemented");
            }
            if (a == B1) != (has(Word::Popc) && (has(Word::Xor) || has(Word::And))) {
                return fail(cx, "`.b1` `mma` is `mma.….s32.b1.b1.s32.{xor,and}.popc`, and only it");
            }
            let (m, n, k) = if a == B1 { (m, n, k / 32) } else { (m, n, k) };
            let rounds = [Word::Rn, Word::Rz, Word::Rm, Word::Rp].into_iter().any(has);
            if rounds && a != F64 {
                return fail(cx, "a rounding modifier is valid on `.f64` `mma` only");
            }
            let frags = [
                Frag::mma(Layout::MmaA, (m, n, k), a),
                Frag::mma(Layout::MmaB, (m, n, k), b),
                Frag::mma(Layout::MmaC, (m, n, k), c),
                Frag::mma(Layout::MmaC, (m, n, k), d),
            ];
            mma_operands(cx, ops, k, frags)
        }
        ir::Opcode::Wgmma => crate::wgmma::decode(cx, shape, &words, &types),
        _ => None,
    }
}

/// The `wmma` forms implemented, for refusals.
const WMMA_FORMS: &str = "the `wmma` forms implemented are `.m16n16k16`/`.m32n8k16`/`.m8n32k16` with `.f16`/`.bf16` \
                          (`.f16`/`.f32` accumulators) or `.s8`/`.u8` (`.s32`) multiplicands, `.m16n16k8` `.tf32` \
                          (`.f32`), `.m8n8k4` `.f64` and `.m8n8k128` `.b1` (`.s32`)";

/// Whether a `wmma` fragment of element type `e` exists for `shape` (a multiplicand, or C/D).
fn wmma_type_fits(shape: (u32, u32, u32), e: Elem, multiplicand: bool) -> bool {
    use Elem::*;
    let common = matches!(shape, (16, 16, 16) | (32, 8, 16) | (8, 32, 16));
    match (e, multiplicand) {
        (F16, _) | (Bf16 | S8 | U8, true) => common,
        (S32, false) if common => true,
        (F32, false) => common || shape == (16, 16, 8),
        (Tf32, true) => shape == (16, 16, 8),
        (F64, _) => shape == (8, 8, 4),
        (B1, true) => shape == (8, 8, 128),
        (S32, false) => shape == (8, 8, 128),
        _ => false,
    }
}

/// The shape whose fragments hold `elem`: `.b1` fragments count 32-bit words along k.
fn wmma_words((m, n, k): (u32, u32, u32), elem: Elem) -> (u32, u32, u32) {
    if elem == Elem::B1 {
        (m, n, k / 32)
    } else {
        (m, n, k)
    }
}

/// `mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype`: four 8×8×4 products, one per quad pair.
fn quad_pair_mma(
    cx: &mut OperandCx<'_, '_>,
    ops: &[Operand],
    layouts: &[Word],
    elems: &[Option<Elem>],
) -> Option<MatrixOp> {
    let float = |e: &Option<Elem>| matches!(e, Some(Elem::F16 | Elem::F32));
    let [d, Some(Elem::F16), Some(Elem::F16), c] = *elems else {
        cx.unsupported("`mma.m8n8k4` with `.f16` multiplicands needs `.dtype.f16.f16.ctype`");
        return None;
    };
    let (&[al, bl], true, true) = (layouts, float(&d), float(&c)) else {
        cx.unsupported("`mma.m8n8k4` needs `.alayout.blayout` (`.row`/`.col`) and `.f16`/`.f32` accumulators");
        return None;
    };
    let (Some(d), Some(c)) = (d, c) else { return None };
    if cx.inst().has(Word::Satfinite) || [Word::Rn, Word::Rz, Word::Rm, Word::Rp].into_iter().any(|w| cx.inst().has(w))
    {
        cx.unsupported("`mma.m8n8k4` with `.f16` multiplicands takes no `.satfinite` or rounding modifier");
        return None;
    }
    let frags = [
        Frag::quad(Layout::QuadA { col: al == Word::Col }, Elem::F16),
        Frag::quad(Layout::QuadB { col: bl == Word::Col }, Elem::F16),
        Frag::quad(Layout::QuadC, c),
        Frag::quad(Layout::QuadC, d),
    ];
    mma_operands(cx, ops, 4, frags)
}

pub fn check_count(cx: &mut OperandCx<'_, '_>, got: usize, want: u32) -> Option<()> {
    if got == want as usize {
        Some(())
    } else {
        cx.unsupported(&format!("the fragment has {want} registers, the instruction names {got}"));
        None
    }
}

pub fn mma_operands(cx: &mut OperandCx<'_, '_>, ops: &[Operand], k: u32, frags: [Frag; 4]) -> Option<MatrixOp> {
    let [a, b, c, d] = frags;
    let satfinite = cx.inst().has(Word::Satfinite);
    let rounding = [(Word::Rz, Rounding::Rz), (Word::Rm, Rounding::Rm), (Word::Rp, Rounding::Rp)]
        .into_iter()
        .find_map(|(w, r)| cx.inst().has(w).then_some(r))
        .unwrap_or(Rounding::Rn);
    let dsts = dst_list(cx, ops.first())?;
    check_count(cx, dsts.len(), d.regs)?;
    let mut srcs: [SmallVec<[Src; 8]>; 3] = Default::default();
    for (i, f) in [a, b, c].iter().enumerate() {
        srcs[i] = src_list(cx, ops.get(i + 1))?;
        check_count(cx, srcs[i].len(), f.regs)?;
    }
    let and = cx.inst().has(Word::And);
    Some(MatrixOp::Mma(Box::new(MmaOp { k, satfinite, rounding, and, a, b, c, d, dsts, srcs })))
}

/// The registers of a vector operand `{r0, r1, ...}` (or of a single register) as destinations.
pub fn dst_list(cx: &mut OperandCx<'_, '_>, o: Option<&Operand>) -> Option<SmallVec<[Dst; 8]>> {
    match o {
        Some(Operand::Vector(items)) => Some(items.iter().map(|o| cx.dst(o)).collect()),
        Some(o @ Operand::Reg(_)) => Some(std::iter::once(cx.dst(o)).collect()),
        _ => {
            cx.unsupported("expected a vector of registers");
            None
        }
    }
}

pub fn src_list(cx: &mut OperandCx<'_, '_>, o: Option<&Operand>) -> Option<SmallVec<[Src; 8]>> {
    match o {
        Some(Operand::Vector(items)) => Some(items.iter().map(|o| cx.src(o, Ty::B32)).collect()),
        Some(o @ Operand::Reg(_)) => Some(std::iter::once(cx.src(o, Ty::B32)).collect()),
        _ => {
            cx.unsupported("expected a vector of registers");
            None
        }
    }
}

/// Executes a matrix instruction for the whole warp.
pub fn exec(x: &mut dyn WarpAccess, exec: LaneMask, op: &Op) -> Result<(), ExecError> {
    let Some(crate::Extra::Matrix(mop)) = op.extra.as_deref() else { return Ok(()) };
    if exec.count() != WARP as u32 {
        let lane = exec.first().unwrap_or(0);
        return Err(x.error(
            lane,
            ErrorKind::Invalid(format!(
                "warp-collective matrix instruction executed by {} of the 32 lanes of the warp (lane mask {exec}); \
                 `.sync.aligned` needs the whole warp",
                exec.count()
            )),
        ));
    }
    let space = op.m.space;
    match mop {
        MatrixOp::Wgmma(w) => crate::wgmma::exec(x, w),
        MatrixOp::Stmatrix { trans, srcs } => {
            let addrs = x.addresses(exec);
            for (j, src) in srcs.iter().enumerate() {
                let vals = x.read(src);
                // tile[r][c]: element (r, c) of matrix j, from the fragment lane 4r + c / 2 holds (`ldmatrix`).
                let mut tile = [[0u64; 8]; 8];
                for (lane, v) in vals.iter().enumerate() {
                    let (g, c) = (lane / 4, 2 * (lane % 4));
                    let (lo, hi) = (v & 0xFFFF, (v >> 16) & 0xFFFF);
                    if *trans {
                        (tile[c][g], tile[c + 1][g]) = (lo, hi);
                    } else {
                        (tile[g][c], tile[g][c + 1]) = (lo, hi);
                    }
                }
                for (r, row) in tile.iter().enumerate() {
                    let lane = (8 * j + r) as u32;
                    let addr = addrs[lane as usize];
                    if !addr.is_multiple_of(16) {
                        return Err(x.misaligned(lane, space, addr, 16));
                    }
                    for (c, v) in row.iter().enumerate() {
                        x.store(lane, space, addr + 2 * c as u64, 2, *v)?;
                    }
                }
            }
            Ok(())
        }
        MatrixOp::Movmatrix { dst, src } => {
            let a = x.read(src);
            let half = |lane: usize, k: usize| (a[lane] >> (16 * k)) & 0xFFFF;
            let mut d = [0u64; WARP];
            for (lane, v) in d.iter_mut().enumerate() {
                // Element (r, c) of the input is half c % 2 of lane 4r + c / 2; d's lane holds the transpose's
                // row g, columns c and c + 1, that is the input's column g, rows c and c + 1.
                let (g, c) = (lane / 4, 2 * (lane % 4));
                let at = |r: usize, col: usize| half(4 * r + col / 2, col % 2);
                *v = at(c, g) | at(c + 1, g) << 16;
            }
            x.write(*dst, &d, exec);
            Ok(())
        }
        MatrixOp::Load { frag, col_major, dsts, stride } => {
            let (base, stride) = place(x, exec, space, frag, *col_major, stride)?;
            let esz = frag.elem.bytes();
            let mut tile = Vec::with_capacity((frag.rows * frag.cols) as usize);
            for idx in 0..frag.rows * frag.cols {
                let addr = element_address(base, stride, esz, *col_major, idx / frag.cols, idx % frag.cols);
                tile.push(x.load(idx % WARP as u32, space, addr, esz)?);
            }
            for (dst, vals) in dsts.iter().zip(frag.scatter(&tile)) {
                x.write(*dst, &vals, exec);
            }
            Ok(())
        }
        MatrixOp::Store { frag, col_major, srcs, stride } => {
            let (base, stride) = place(x, exec, space, frag, *col_major, stride)?;
            let esz = frag.elem.bytes();
            let regs: Vec<[u64; WARP]> = srcs.iter().map(|s| x.read(s)).collect();
            let tile = frag.gather(&regs);
            for (idx, v) in tile.iter().enumerate() {
                let idx = idx as u32;
                let addr = element_address(base, stride, esz, *col_major, idx / frag.cols, idx % frag.cols);
                x.store(idx % WARP as u32, space, addr, esz, *v)?;
            }
            Ok(())
        }
        MatrixOp::Mma(m) => {
            let bits = |x: &dyn WarpAccess, f: &Frag, srcs: &[Src]| -> Vec<u64> {
                let regs: Vec<[u64; WARP]> = srcs.iter().map(|s| x.read(s)).collect();
                f.gather(&regs)
            };
            let [a, b, c] = [(&m.a, 0), (&m.b, 1), (&m.c, 2)].map(|(f, i)| bits(x, f, &m.srcs[i]));
            let (rows, cols) = (m.d.rows, m.d.cols);
            let tile: Vec<u64> = if m.a.elem == Elem::B1 {
                single_bit_multiply_accumulate(rows, cols, m.k, &a, &b, &c, m.and)
            } else if m.a.elem.is_int() {
                let [a, b, c] = [(&m.a, a), (&m.b, b), (&m.c, c)]
                    .map(|(f, v)| v.into_iter().map(|e| f.elem.to_i64(e)).collect::<Vec<i64>>());
                integer_multiply_accumulate(rows, cols, m.k, &a, &b, &c, m.satfinite)
                    .into_iter()
                    .map(|v| u64::from(v as u32))
                    .collect()
            } else if m.a.elem == Elem::F64 {
                let [a, b, c] = [a, b, c].map(|v| v.into_iter().map(f64::from_bits).collect::<Vec<f64>>());
                f64_multiply_accumulate(rows, cols, m.k, &a, &b, &c, m.rounding).into_iter().map(f64::to_bits).collect()
            } else {
                let [a, b, c] = [(&m.a, a), (&m.b, b), (&m.c, c)]
                    .map(|(f, v)| v.into_iter().map(|e| f.elem.to_f32(e)).collect::<Vec<f32>>());
                let d = if matches!(m.a.layout, Layout::QuadA { .. }) {
                    quad_pair_multiply_accumulate(&a, &b, &c)
                } else {
                    multiply_accumulate(rows, cols, m.k, &a, &b, &c)
                };
                d.into_iter().map(|v| m.d.elem.round_from(v)).collect()
            };
            for (dst, vals) in m.dsts.iter().zip(m.d.scatter(&tile)) {
                x.write(*dst, &vals, exec);
            }
            Ok(())
        }
        MatrixOp::Ldmatrix { trans, dsts } => {
            let addrs = x.addresses(exec);
            // rows[j][r][c]: element (r, c) of matrix j, read from the row address lane 8j + r gave.
            let mut rows = vec![[[0u64; 8]; 8]; dsts.len()];
            for (j, matrix) in rows.iter_mut().enumerate() {
                for (r, row) in matrix.iter_mut().enumerate() {
                    let lane = (8 * j + r) as u32;
                    let addr = addrs[lane as usize];
                    if !addr.is_multiple_of(16) {
                        return Err(x.misaligned(lane, space, addr, 16));
                    }
                    for (c, v) in row.iter_mut().enumerate() {
                        *v = x.load(lane, space, addr + 2 * c as u64, 2)?;
                    }
                }
            }
            for (j, dst) in dsts.iter().enumerate() {
                let mut vals = [0u64; WARP];
                for (lane, v) in vals.iter_mut().enumerate() {
                    let (g, c) = (lane / 4, 2 * (lane % 4));
                    let (lo, hi) =
                        if *trans { (rows[j][c][g], rows[j][c + 1][g]) } else { (rows[j][g][c], rows[j][g][c + 1]) };
                    *v = lo | (hi << 16);
                }
                x.write(*dst, &vals, exec);
            }
            Ok(())
        }
    }
}

/// `D = A·B + C` for an `rows × cols` result and inner dimension `k` (all row-major), one `.f32` fma per
/// accumulate step in order of `k`, rounded to nearest even.
pub fn multiply_accumulate(rows: u32, cols: u32, k: u32, a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let (rows, cols, k) = (rows as usize, cols as usize, k as usize);
    let mut d = Vec::with_capacity(rows * cols);
    for m in 0..rows {
        for n in 0..cols {
            let mut acc = c[m * cols + n];
            for kk in 0..k {
                acc = sf::fma(a[m * k + kk], b[kk * cols + n], acc, Rounding::Rn, Mods::default());
            }
            d.push(acc);
        }
    }
    d
}

/// The four `mma.m8n8k4` products of the stacked `a` (32×4), `b` (4×32) and `c` (32×8): rows `8q..8q+8` of
/// the result are `A_q·B_q + C_q`, with `B_q` columns `8q..8q+8` of `b`.
fn quad_pair_multiply_accumulate(a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let mut d = Vec::with_capacity(256);
    for q in 0..4 {
        let bq: Vec<f32> = (0..32).map(|i| b[(i / 8) * 32 + 8 * q + i % 8]).collect();
        d.extend(multiply_accumulate(8, 8, 4, &a[32 * q..32 * q + 32], &bq, &c[64 * q..64 * q + 64]));
    }
    d
}

/// Single-bit `D = A·B + C` over word matrices (`k` words of 32 elements; see [`Elem::B1`]): each element of
/// D is C plus the population count of the XOR (or with `and`, the AND) of A's row and B's column, wrapped
/// to 32 bits (PTX ISA, mma: single-bit `.xor.popc` / `.and.popc`).
fn single_bit_multiply_accumulate(
    rows: u32,
    cols: u32,
    k: u32,
    a: &[u64],
    b: &[u64],
    c: &[u64],
    and: bool,
) -> Vec<u64> {
    let (rows, cols, k) = (rows as usize, cols as usize, k as usize);
    let mut d = Vec::with_capacity(rows * cols);
    for m in 0..rows {
        for n in 0..cols {
            let bits = |w: usize| {
                let (x, y) = (a[m * k + w] as u32, b[w * cols + n] as u32);
                if and { x & y } else { x ^ y }.count_ones()
            };
            let sum = (0..k).map(bits).fold(c[m * cols + n] as u32, u32::wrapping_add);
            d.push(u64::from(sum));
        }
    }
    d
}

/// Integer `D = A·B + C` (`.s32` accumulators): the exact sum, then wrapped to 32 bits, or with
/// `.satfinite` clamped to `MIN_INT32..MAX_INT32` (PTX ISA, mma "Integer operations"). The products of 8-bit
/// values cannot overflow the sum of a row (at most 32 · 255² before C), so only C decides overflow.
pub fn integer_multiply_accumulate(
    rows: u32,
    cols: u32,
    k: u32,
    a: &[i64],
    b: &[i64],
    c: &[i64],
    satfinite: bool,
) -> Vec<i32> {
    let (rows, cols, k) = (rows as usize, cols as usize, k as usize);
    let mut d = Vec::with_capacity(rows * cols);
    for m in 0..rows {
        for n in 0..cols {
            let sum = c[m * cols + n] + (0..k).map(|kk| a[m * k + kk] * b[kk * cols + n]).sum::<i64>();
            d.push(if satfinite { sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 } else { sum as i32 });
        }
    }
    d
}

/// `.f64` `D = A·B + C`: one `.f64` fused multiply-add per step in order of k, each rounded as `rounding`
/// says (PTX ISA: "identical to that of .f64 precision fused multiply-add").
pub fn f64_multiply_accumulate(
    rows: u32,
    cols: u32,
    k: u32,
    a: &[f64],
    b: &[f64],
    c: &[f64],
    rounding: Rounding,
) -> Vec<f64> {
    let (rows, cols, k) = (rows as usize, cols as usize, k as usize);
    let mut d = Vec::with_capacity(rows * cols);
    for m in 0..rows {
        for n in 0..cols {
            let mut acc = c[m * cols + n];
            for kk in 0..k {
                acc = sf::fma(a[m * k + kk], b[kk * cols + n], acc, rounding, Mods::default());
            }
            d.push(acc);
        }
    }
    d
}

fn element_address(base: u64, stride: u64, esz: u32, col_major: bool, r: u32, c: u32) -> u64 {
    let (major, minor) = if col_major { (c, r) } else { (r, c) };
    base.wrapping_add((u64::from(major) * stride + u64::from(minor)) * u64::from(esz))
}

/// The base address and stride (in elements) of a `wmma.load`/`wmma.store`: the same in every lane, and
/// aligned as the ISA requires (address and stride in bytes multiples of the fragment's size).
fn place(
    x: &dyn WarpAccess,
    exec: LaneMask,
    space: Space,
    frag: &Frag,
    col_major: bool,
    stride: &Option<Src>,
) -> Result<(u64, u64), ExecError> {
    let addrs = x.addresses(exec);
    let stride_given = stride.is_some();
    let stride = match stride {
        Some(s) => x.read(s).map(|v| v & 0xFFFF_FFFF),
        None => [u64::from(if col_major { frag.rows } else { frag.cols }); WARP],
    };
    // A `.b1` stride counts bits; the fragment's elements are 32-bit words.
    let stride = if frag.elem == Elem::B1 && stride_given {
        if !stride[0].is_multiple_of(32) {
            return Err(x.error(
                0,
                ErrorKind::Invalid(format!("`.b1` `wmma` stride of {} bits is not a multiple of 32", stride[0])),
            ));
        }
        stride.map(|s| s / 32)
    } else {
        stride
    };
    for lane in 1..WARP {
        if addrs[lane] != addrs[0] || stride[lane] != stride[0] {
            return Err(x.error(
                lane as u32,
                ErrorKind::Invalid(format!(
                    "`wmma` address and stride must be the same in every lane: lane 0 has {:#x} and {}, lane {lane} \
                     has {:#x} and {}",
                    addrs[0], stride[0], addrs[lane], stride[lane]
                )),
            ));
        }
    }
    let (base, stride) = (addrs[0], stride[0]);
    let align = frag.bytes();
    if !base.is_multiple_of(align) {
        return Err(x.misaligned(0, space, base, align as u32));
    }
    let stride_bytes = stride * u64::from(frag.elem.bytes());
    if !stride_bytes.is_multiple_of(align) {
        return Err(x.error(
            0,
            ErrorKind::Invalid(format!(
                "`wmma` stride of {stride} elements ({stride_bytes} bytes) is not a multiple of the fragment size \
                 ({align} bytes)"
            )),
        ));
    }
    Ok((base, stride))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::Word;

    #[test]
    fn wmma_fragments_cover_every_element() {
        for (role, elem) in [(Word::A, Elem::F16), (Word::B, Elem::Bf16), (Word::C, Elem::F32), (Word::D, Elem::F16)] {
            for shape in [(16, 16, 16), (32, 8, 16), (8, 32, 16)] {
                let f = Frag::wmma(role, shape, elem);
                assert!(f.slots() * WARP as u32 >= f.rows * f.cols, "{role:?} {shape:?}");
                let tile: Vec<u64> = (0..u64::from(f.rows * f.cols)).collect();
                assert_eq!(f.gather(&f.scatter(&tile)), tile);
            }
        }
        // The other types: the ISA's register counts, and every element in one slot.
        let more = [
            (Word::A, (16, 16, 16), Elem::S8, 2),
            (Word::B, (32, 8, 16), Elem::U8, 1),
            (Word::A, (32, 8, 16), Elem::S8, 4),
            (Word::C, (8, 32, 16), Elem::S32, 8),
            (Word::A, (16, 16, 8), Elem::Tf32, 4),
            (Word::D, (16, 16, 8), Elem::F32, 8),
            (Word::A, (8, 8, 4), Elem::F64, 1),
            (Word::C, (8, 8, 4), Elem::F64, 2),
            (Word::A, (8, 8, 4), Elem::B1, 1),
            (Word::B, (8, 8, 4), Elem::B1, 1),
            (Word::C, (8, 8, 4), Elem::S32, 2),
        ];
        for (role, shape, elem, regs) in more {
            let f = Frag::wmma(role, shape, elem);
            assert_eq!((f.regs, f.slots() * WARP as u32), (regs, f.rows * f.cols), "{role:?} {shape:?} {elem:?}");
            let mask = crate::types::mask_bits(elem.bytes() * 8);
            let tile: Vec<u64> = (0..u64::from(f.rows * f.cols)).map(|v| v.wrapping_mul(0x9E37_79B9) & mask).collect();
            assert_eq!(f.gather(&f.scatter(&tile)), tile);
        }
    }

    #[test]
    fn mma_fragments_match_the_isa() {
        let a = Frag::mma(Layout::MmaA, (16, 8, 16), Elem::F16);
        assert_eq!(a.regs, 4);
        // lane 5: g = 1, t = 1
        assert_eq!(a.position(5, 0), (1, 2));
        assert_eq!(a.position(5, 3), (9, 3));
        assert_eq!(a.position(5, 6), (9, 10));
        let b = Frag::mma(Layout::MmaB, (16, 8, 16), Elem::F16);
        assert_eq!(b.regs, 2);
        assert_eq!(b.position(5, 3), (11, 1));
        let c = Frag::mma(Layout::MmaC, (16, 8, 16), Elem::F32);
        assert_eq!(c.regs, 4);
        assert_eq!(c.position(31, 3), (15, 7));
        let more = [
            Frag::mma(Layout::MmaA, (16, 8, 8), Elem::Bf16),
            Frag::mma(Layout::MmaB, (16, 8, 8), Elem::F16),
            Frag::mma(Layout::MmaA, (16, 8, 32), Elem::S8),
            Frag::mma(Layout::MmaB, (16, 8, 32), Elem::U8),
            Frag::mma(Layout::MmaA, (16, 8, 16), Elem::U8),
            Frag::mma(Layout::MmaB, (16, 8, 16), Elem::S8),
            Frag::mma(Layout::MmaC, (16, 8, 32), Elem::S32),
            Frag::mma(Layout::MmaA, (16, 8, 8), Elem::Tf32),
            Frag::mma(Layout::MmaB, (16, 8, 8), Elem::Tf32),
            Frag::mma(Layout::MmaA, (8, 8, 4), Elem::F64),
            Frag::mma(Layout::MmaB, (8, 8, 4), Elem::F64),
            Frag::mma(Layout::MmaC, (8, 8, 4), Elem::F64),
            Frag::quad(Layout::QuadA { col: false }, Elem::F16),
            Frag::quad(Layout::QuadA { col: true }, Elem::F16),
            Frag::quad(Layout::QuadB { col: false }, Elem::F16),
            Frag::quad(Layout::QuadB { col: true }, Elem::F16),
            Frag::quad(Layout::QuadC, Elem::F16),
            Frag::quad(Layout::QuadC, Elem::F32),
        ];
        for f in [a, b, c].into_iter().chain(more) {
            // Every element is in exactly one slot of one lane.
            let mut seen = vec![0u32; (f.rows * f.cols) as usize];
            for lane in 0..WARP as u32 {
                for e in 0..f.slots() {
                    let (r, c) = f.position(lane, e);
                    assert!(r < f.rows && c < f.cols, "{f:?}: lane {lane} slot {e} at ({r}, {c})");
                    seen[(r * f.cols + c) as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{f:?}: {seen:?}");
            let mask = crate::types::mask_bits(f.elem.bytes() * 8);
            let tile: Vec<u64> =
                (0..u64::from(f.rows * f.cols)).map(|v| v.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask).collect();
            assert_eq!(f.gather(&f.scatter(&tile)), tile);
        }
    }
}
