//! `setp` / `set` comparisons and their boolean combination.
//!
//! Integer types: `eq ne lt le gt ge` use the instruction type's signedness, `lo ls hi hs` are
//! always unsigned. Float types: `eq ne lt le gt ge` are ordered (false if either operand is NaN;
//! `ne` too), `equ neu ltu leu gtu geu` are unordered (true if either is NaN), `num` is "neither is
//! NaN", `nan` "either is NaN"; `-0.0 == +0.0`.
//!
//! Operators the ISA does not define for a type are given a total meaning instead of panicking:
//! on integers the `u`-suffixed operators act like their ordered forms, `num` is true and `nan`
//! false; on floats `lo ls hi hs` act like `lt le gt ge`.

use crate::float::{flush, Float};
use crate::int::Width;

/// A `setp`/`set` comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `eq`.
    Eq,
    /// `ne`.
    Ne,
    /// `lt`.
    Lt,
    /// `le`.
    Le,
    /// `gt`.
    Gt,
    /// `ge`.
    Ge,
    /// `lo` (unsigned `<`).
    Lo,
    /// `ls` (unsigned `<=`).
    Ls,
    /// `hi` (unsigned `>`).
    Hi,
    /// `hs` (unsigned `>=`).
    Hs,
    /// `equ`.
    Equ,
    /// `neu`.
    Neu,
    /// `ltu`.
    Ltu,
    /// `leu`.
    Leu,
    /// `gtu`.
    Gtu,
    /// `geu`.
    Geu,
    /// `num`.
    Num,
    /// `nan`.
    Nan,
}

/// `.and` / `.or` / `.xor` combination with a predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoolOp {
    /// `.and`.
    And,
    /// `.or`.
    Or,
    /// `.xor`.
    Xor,
}

/// Combine a comparison result `t` with predicate `c`.
#[inline]
pub fn bool_op(op: BoolOp, t: bool, c: bool) -> bool {
    match op {
        BoolOp::And => t && c,
        BoolOp::Or => t || c,
        BoolOp::Xor => t ^ c,
    }
}

/// The value `set` writes: `1.0f` (`0x3F800000`) for a float destination or `0xFFFFFFFF` for an
/// integer destination when `t`, else `0`.
#[inline]
pub fn set_result(t: bool, float_dest: bool) -> u32 {
    match (t, float_dest) {
        (false, _) => 0,
        (true, true) => 0x3F80_0000,
        (true, false) => 0xFFFF_FFFF,
    }
}

/// Integer comparison of the low `w` bits of `a` and `b`.
#[inline]
pub fn cmp_int(op: CmpOp, a: u64, b: u64, w: Width, signed: bool) -> bool {
    let (x, y) = (w.value(a, signed), w.value(b, signed));
    let (ux, uy) = (w.trunc(a), w.trunc(b));
    match op {
        CmpOp::Eq | CmpOp::Equ => x == y,
        CmpOp::Ne | CmpOp::Neu => x != y,
        CmpOp::Lt | CmpOp::Ltu => x < y,
        CmpOp::Le | CmpOp::Leu => x <= y,
        CmpOp::Gt | CmpOp::Gtu => x > y,
        CmpOp::Ge | CmpOp::Geu => x >= y,
        CmpOp::Lo => ux < uy,
        CmpOp::Ls => ux <= uy,
        CmpOp::Hi => ux > uy,
        CmpOp::Hs => ux >= uy,
        CmpOp::Num => true,
        CmpOp::Nan => false,
    }
}

/// Float comparison (`setp.op{.ftz}.f32` / `.f64`); `ftz` flushes subnormal operands first.
#[inline]
pub fn cmp_float<F: Float>(op: CmpOp, a: F, b: F, ftz: bool) -> bool {
    let (a, b) = if ftz { (flush(a), flush(b)) } else { (a, b) };
    let unordered = a.nan() || b.nan();
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => !unordered && a != b,
        CmpOp::Lt | CmpOp::Lo => a < b,
        CmpOp::Le | CmpOp::Ls => a <= b,
        CmpOp::Gt | CmpOp::Hi => a > b,
        CmpOp::Ge | CmpOp::Hs => a >= b,
        CmpOp::Equ => unordered || a == b,
        CmpOp::Neu => a != b,
        CmpOp::Ltu => unordered || a < b,
        CmpOp::Leu => unordered || a <= b,
        CmpOp::Gtu => unordered || a > b,
        CmpOp::Geu => unordered || a >= b,
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
    }
}
