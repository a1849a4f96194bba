//! Bit-exact semantics of one lane of PTX arithmetic, logic, comparison and conversion
//! instructions.
//!
//! The crate knows nothing of registers, warps or the IR: inputs and outputs are plain numbers or
//! raw bits. The emulator (and the JIT, for the hard cases) dispatches once per warp instruction on
//! opcode, type and modifiers and then calls these small `#[inline]` functions in a loop over the
//! lanes; modifiers are passed as plain `Copy` values so that the loop can hoist them.
//!
//! | module | instructions |
//! | --- | --- |
//! | [`int`] | `add sub` (+`.sat`, `.cc`, `addc subc`), `mul mad` (`.lo .hi .wide`, `.sat`, `.cc`, `madc`), `mul24 mad24 sad div rem abs neg min max` (`.relu`, packed lanes), `dp4a dp2a` |
//! | [`bits`] | `not and or xor cnot lop3 shl shr shf popc clz brev bfind bfe bfi fns prmt szext bmsk` |
//! | [`float`] | f32/f64 `add sub mul fma mad div rcp sqrt` (all roundings, `.ftz .sat`), `abs neg min max copysign testp`, integral rounding |
//! | [`half`] | f16/bf16 conversions and `add sub mul fma min max neg abs`, comparisons, `x2` lanes |
//! | [`convert`](mod@convert) | `cvt` between all integer and float types (+ tf32, e4m3, e5m2) |
//! | [`approx`] | `rcp rsqrt sqrt div sin cos lg2 ex2 tanh` `.approx` / `.full` |
//! | [`compare`] | `setp` / `set` operators and boolean combination |
//! | [`round`] | the exact rounding engine and soft-float core the rest is built on |
//!
//! # Exact
//! Everything except [`approx`] is exact — the result is the one the PTX ISA defines, bit for bit:
//! * Integer and bit instructions follow the ISA's semantics pseudo-code, including the clamping
//!   of shift amounts, `bfe`/`bfi` positions, `shf`, `szext`, `bmsk`, `bfind`'s `0xFFFFFFFF`.
//! * Floating-point `add sub mul fma div rcp sqrt` are correctly rounded in all of `.rn .rz .rm
//!   .rp` for f32, f64, f16 and bf16, including subnormals, overflow to infinity versus the
//!   largest finite value under directed rounding, and the sign of exact zeros. Round-to-nearest
//!   f32/f64 uses the host's IEEE 754 operations; every other case uses the integer soft-float in
//!   [`round`]. Both are checked against an arbitrary-precision rational reference in the tests.
//! * Every conversion rounds once, directly (f64 → f16 is not rounded via f32), including
//!   tf32 (`.rna .rn .rz`), e4m3 and e5m2 (`.satfinite`, always applied as the ISA requires).
//! * Integral rounding (`cvt.rni.f32.f32` …) and every `min max abs neg copysign testp setp`.
//!
//! [`Rounding::Rna`] (ties away from zero) is only a `cvt` mode in PTX, but every operation accepts
//! it.
//!
//! # Approximate
//! The `.approx`/`.full` functions return the exact result rounded to nearest (correctly rounded
//! for `rcp`, `sqrt`, `div`; host f64 libm rounded once for `sin cos lg2 ex2 tanh rsqrt`), i.e. at
//! most about half an ulp — well inside the ISA's bounds; see [`approx`] for the table, and for the
//! documented special behaviour we reproduce (`div.approx` with `2^126 < |b| < 2^128`, the
//! truncated "gross" f64 reciprocals).
//!
//! # Choices where the ISA says "unspecified" or "undefined"
//! * Integer division by zero: `x / 0` is all ones (`-1` signed), `x % 0 = x`; `MIN / -1 = MIN`,
//!   `MIN % -1 = 0` ([`int`]).
//! * NaN results: `.f32`, `.f16`, `.bf16` return the canonical NaN (`0x7FFFFFFF`, `0x7FFF`) as
//!   NVIDIA hardware does; `.f64` propagates the first NaN operand, quieted, and produces
//!   `0x7FFF_FFFF_FFFF_FFFF` for invalid operations ([`float`]). `abs.f64` passes NaN through
//!   unchanged (ISA text); `abs.f32`/`neg.f32` of NaN give the canonical NaN; `neg.f64` and the
//!   half `neg`/`abs` flip/clear the sign bit only.
//! * `.sat` maps `-0.0` to `+0.0`; `.relu` maps `-0.0` to `+0.0`.
//! * `.ftz` flushes results that are subnormal *after* rounding.
//! * `fns` with `base > 31` returns `0xFFFFFFFF`.
//! * `cvt` from float to integer: NaN → 0, or `1 << (bits - 1)` for an f64 source or a 64-bit
//!   destination, as the ISA specifies; a missing rounding modifier means `.rzi`.
//! * `min`/`max` treat `-0.0 < +0.0` (ISA note: "+0.0 > -0.0").
//!
//! Nothing here panics, allocates, or uses `unsafe`.

pub mod approx;
pub mod bits;
pub mod compare;
pub mod convert;
pub mod float;
pub mod half;
pub mod int;
pub mod round;

pub use compare::{BoolOp, CmpOp};
pub use convert::{convert, CvtModes, CvtRounding, Type};
pub use float::{Float, MinMaxMods, Mods, TestP};
pub use half::{Bf16, Half, HalfMods, F16};
pub use int::Width;
pub use round::{Format, Rounding};
