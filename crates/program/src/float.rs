//! Floating-point instructions on lanes. The per-lane semantics (rounding modes, `.ftz`, `.sat`, NaN rules,
//! f16/bf16) come from the `scalar` crate; this module only dispatches on opcode and type.

use scalar::approx;
use scalar::float::{self as sf, Float, MinMaxMods, Mods, TestP};
use scalar::half::{self as sh, Bf16, HalfMods, F16};
use scalar::round::Rounding;
use simt::LaneMask;

use crate::Ty;
use crate::WARP;
use crate::{Kind, Op, Rnd, Sub};

type Lanes = [u64; WARP];

pub fn rounding(r: Rnd) -> Rounding {
    match r {
        Rnd::Rz | Rnd::Rzi => Rounding::Rz,
        Rnd::Rm | Rnd::Rmi => Rounding::Rm,
        Rnd::Rp | Rnd::Rpi => Rounding::Rp,
        Rnd::Rna => Rounding::Rna,
        Rnd::None | Rnd::Rn | Rnd::Rni => Rounding::Rn,
    }
}

pub fn exec(op: &Op, exec: LaneMask, a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes) -> bool {
    match op.ty {
        Ty::F32 => typed::<f32>(op, exec, a, b, c, out, |v| f32::from_bits(v as u32), |x| u64::from(x.to_bits())),
        Ty::F64 => typed::<f64>(op, exec, a, b, c, out, f64::from_bits, f64::to_bits),
        Ty::F16 => half::<F16>(op, exec, a, b, c, out, false),
        Ty::Bf16 => half::<Bf16>(op, exec, a, b, c, out, false),
        Ty::F16x2 => half::<F16>(op, exec, a, b, c, out, true),
        Ty::Bf16x2 => half::<Bf16>(op, exec, a, b, c, out, true),
        _ => false,
    }
}

#[allow(clippy::too_many_arguments)]
fn typed<F: Float + Approx>(
    op: &Op,
    exec: LaneMask,
    a: &Lanes,
    b: &Lanes,
    c: &Lanes,
    out: &mut Lanes,
    from: impl Fn(u64) -> F,
    to: impl Fn(F) -> u64,
) -> bool {
    let m = &op.m;
    let rnd = rounding(m.rnd);
    let mods = Mods { ftz: m.ftz, sat: m.sat };
    let mm = MinMaxMods { ftz: m.ftz, nan: m.nan, xorsign_abs: false };
    macro_rules! each {
        (|$x:ident| $e:expr) => {{
            for l in exec.iter() {
                let l = l as usize;
                let $x = from(a[l]);
                out[l] = to($e);
            }
        }};
        (|$x:ident, $y:ident| $e:expr) => {{
            for l in exec.iter() {
                let l = l as usize;
                let ($x, $y) = (from(a[l]), from(b[l]));
                out[l] = to($e);
            }
        }};
        (|$x:ident, $y:ident, $z:ident| $e:expr) => {{
            for l in exec.iter() {
                let l = l as usize;
                let ($x, $y, $z) = (from(a[l]), from(b[l]), from(c[l]));
                out[l] = to($e);
            }
        }};
    }
    match op.kind {
        Kind::Add => each!(|x, y| sf::add(x, y, rnd, mods)),
        Kind::Sub => each!(|x, y| sf::sub(x, y, rnd, mods)),
        Kind::Mul => each!(|x, y| sf::mul(x, y, rnd, mods)),
        Kind::Fma | Kind::Mad => each!(|x, y, z| sf::fma(x, y, z, rnd, mods)),
        Kind::Div if m.approx => each!(|x, y| F::div_approx(x, y, mods)),
        Kind::Div if m.full => each!(|x, y| F::div_full(x, y, mods)),
        Kind::Div => each!(|x, y| sf::div(x, y, rnd, mods)),
        Kind::Rcp if m.approx => each!(|x| F::rcp_approx(x, mods)),
        Kind::Rcp => each!(|x| sf::rcp(x, rnd, mods)),
        Kind::Sqrt if m.approx => each!(|x| F::sqrt_approx(x, mods)),
        Kind::Sqrt => each!(|x| sf::sqrt(x, rnd, mods)),
        Kind::Rsqrt => each!(|x| F::rsqrt_approx(x, mods)),
        Kind::Sin => each!(|x| F::sin_approx(x, mods)),
        Kind::Cos => each!(|x| F::cos_approx(x, mods)),
        Kind::Lg2 => each!(|x| F::lg2_approx(x, mods)),
        Kind::Ex2 => each!(|x| F::ex2_approx(x, mods)),
        Kind::Tanh => each!(|x| F::tanh_approx(x, mods)),
        Kind::Abs => each!(|x| sf::abs(x, m.ftz)),
        Kind::Neg => each!(|x| sf::neg(x, m.ftz)),
        Kind::Min => each!(|x, y| sf::min(x, y, mm)),
        Kind::Max => each!(|x, y| sf::max(x, y, mm)),
        Kind::Copysign => each!(|x, y| sf::copysign(x, y)),
        Kind::Testp => {
            let Sub::Testp(w) = m.sub else { return false };
            let t = testp(w);
            for l in exec.iter() {
                let l = l as usize;
                out[l] = u64::from(sf::testp(t, from(a[l])));
            }
        }
        _ => return false,
    }
    true
}

fn testp(w: ir::Word) -> TestP {
    use ir::Word as W;
    match w {
        W::Infinite => TestP::Infinite,
        W::Number => TestP::Number,
        W::Notanumber => TestP::NotANumber,
        W::Normal => TestP::Normal,
        W::Subnormal => TestP::Subnormal,
        _ => TestP::Finite,
    }
}

fn half<H: sh::Half>(op: &Op, exec: LaneMask, a: &Lanes, b: &Lanes, c: &Lanes, out: &mut Lanes, pair: bool) -> bool {
    let m = &op.m;
    let rnd = rounding(m.rnd);
    let hm = HalfMods { ftz: m.ftz, sat: m.sat, relu: m.relu };
    let mm = MinMaxMods { ftz: m.ftz, nan: m.nan, xorsign_abs: false };
    let f2: fn(u16, u16, Rounding, HalfMods) -> u16 = match op.kind {
        Kind::Add => sh::add::<H>,
        Kind::Sub => sh::sub::<H>,
        Kind::Mul => sh::mul::<H>,
        _ => |_, _, _, _| 0,
    };
    for l in exec.iter() {
        let l = l as usize;
        let one = |x: u16, y: u16, z: u16| -> Option<u16> {
            Some(match op.kind {
                Kind::Add | Kind::Sub | Kind::Mul => f2(x, y, rnd, hm),
                Kind::Fma | Kind::Mad => sh::fma::<H>(x, y, z, rnd, hm),
                Kind::Neg => sh::neg::<H>(x, m.ftz),
                Kind::Abs => sh::abs::<H>(x, m.ftz),
                Kind::Min => sh::min::<H>(x, y, mm),
                Kind::Max => sh::max::<H>(x, y, mm),
                Kind::Ex2 => approx::ex2_half::<H>(x, m.ftz),
                Kind::Tanh => approx::tanh_half::<H>(x),
                _ => return None,
            })
        };
        let r = if pair {
            let lo = one(a[l] as u16, b[l] as u16, c[l] as u16);
            let hi = one((a[l] >> 16) as u16, (b[l] >> 16) as u16, (c[l] >> 16) as u16);
            match (lo, hi) {
                (Some(lo), Some(hi)) => u64::from(lo) | u64::from(hi) << 16,
                _ => return false,
            }
        } else {
            match one(a[l] as u16, b[l] as u16, c[l] as u16) {
                Some(v) => u64::from(v),
                None => return false,
            }
        };
        out[l] = r;
    }
    true
}

/// The `.approx` functions. Their results are the correctly rounded value of the exact function (computed
/// in f64), which is within the error bounds the PTX ISA gives for each of them; the ISA's special cases
/// (signed zeros, infinities, NaN) hold.
pub trait Approx: Float {
    fn rcp_approx(x: Self, m: Mods) -> Self;
    fn sqrt_approx(x: Self, m: Mods) -> Self;
    fn rsqrt_approx(x: Self, m: Mods) -> Self;
    fn sin_approx(x: Self, m: Mods) -> Self;
    fn cos_approx(x: Self, m: Mods) -> Self;
    fn lg2_approx(x: Self, m: Mods) -> Self;
    fn ex2_approx(x: Self, m: Mods) -> Self;
    fn tanh_approx(x: Self, m: Mods) -> Self;
    fn div_approx(x: Self, y: Self, m: Mods) -> Self;
    fn div_full(x: Self, y: Self, m: Mods) -> Self;
}

impl Approx for f32 {
    fn rcp_approx(x: Self, m: Mods) -> Self {
        m.output(approx::rcp_f32(x, m.ftz))
    }
    fn sqrt_approx(x: Self, m: Mods) -> Self {
        m.output(approx::sqrt_f32(x, m.ftz))
    }
    fn rsqrt_approx(x: Self, m: Mods) -> Self {
        m.output(approx::rsqrt_f32(x, m.ftz))
    }
    fn sin_approx(x: Self, m: Mods) -> Self {
        m.output(approx::sin_f32(x, m.ftz))
    }
    fn cos_approx(x: Self, m: Mods) -> Self {
        m.output(approx::cos_f32(x, m.ftz))
    }
    fn lg2_approx(x: Self, m: Mods) -> Self {
        m.output(approx::lg2_f32(x, m.ftz))
    }
    fn ex2_approx(x: Self, m: Mods) -> Self {
        m.output(approx::ex2_f32(x, m.ftz))
    }
    fn tanh_approx(x: Self, m: Mods) -> Self {
        m.output(approx::tanh_f32(x))
    }
    fn div_approx(x: Self, y: Self, m: Mods) -> Self {
        m.output(approx::div_approx_f32(x, y, m.ftz))
    }
    fn div_full(x: Self, y: Self, m: Mods) -> Self {
        m.output(approx::div_full_f32(x, y, m.ftz))
    }
}

/// f64 has only `rcp.approx.ftz` and `rsqrt.approx(.ftz)` in PTX; the other entries are never decoded for
/// f64 (ptxas rejects them) and fall back to correctly rounded results.
impl Approx for f64 {
    fn rcp_approx(x: Self, m: Mods) -> Self {
        m.output(approx::rcp_ftz_f64(x))
    }
    fn sqrt_approx(x: Self, m: Mods) -> Self {
        m.output(x.sqrt())
    }
    fn rsqrt_approx(x: Self, m: Mods) -> Self {
        m.output(if m.ftz { approx::rsqrt_ftz_f64(x) } else { approx::rsqrt_f64(x) })
    }
    fn sin_approx(x: Self, m: Mods) -> Self {
        m.output(x.sin())
    }
    fn cos_approx(x: Self, m: Mods) -> Self {
        m.output(x.cos())
    }
    fn lg2_approx(x: Self, m: Mods) -> Self {
        m.output(x.log2())
    }
    fn ex2_approx(x: Self, m: Mods) -> Self {
        m.output(x.exp2())
    }
    fn tanh_approx(x: Self, m: Mods) -> Self {
        m.output(x.tanh())
    }
    fn div_approx(x: Self, y: Self, m: Mods) -> Self {
        m.output(x / y)
    }
    fn div_full(x: Self, y: Self, m: Mods) -> Self {
        m.output(x / y)
    }
}
