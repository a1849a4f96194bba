//! Lane strides: how the four lanes of each register relate (`lane l = lane 0 + l * stride`, [`Stride`]),
//! from a flow-insensitive fixpoint over the writes, and the low zero bits of lane 0 ([`low_zeros`]) that tell
//! where widening a 32-bit index cannot wrap between lanes. The access paths (`address.rs`, `memory.rs`) and
//! the scalar tests of masks (`masks.rs`) follow from them at compile time.

use ir::SpecialReg;
use program::{Dst, Kind, Part, Program, Src, SymAddr};

use super::ifs::Ifs;
use super::{dom, Dom};

/// Low bits known to be zero in lane 0 of every register (64: zero), whichever path computed the value: a
/// flow-insensitive fixpoint (the least over the writes). `tid.x`, `%laneid` and `ntid.x` start with two
/// (the vector path runs groups of four aligned threads, with `ntid.x % 4 == 0`); products add, sums take the
/// least. What [`lane_strides`] needs to know that widening a 32-bit index cannot wrap between lanes.
fn low_zeros(prog: &Program) -> Vec<u8> {
    let ns = prog.slots as usize;
    let mut z = vec![64u8; ns];
    let imm_zeros = |c: u64| c.trailing_zeros().min(64) as u8;
    let src = |z: &[u8], s: &Src| -> u8 {
        match *s {
            Src::Reg(r) => z[r as usize],
            Src::Imm(c) => imm_zeros(c),
            Src::Special(SpecialReg::Tid, 0) | Src::Special(SpecialReg::Laneid, _) => 2,
            Src::Special(SpecialReg::Ntid, 0) => 2,
            _ => 0,
        }
    };
    let mut changed = true;
    while changed {
        changed = false;
        for op in &prog.ops {
            let Dst::Reg(slot, mask) = op.dst else {
                crate::plan::for_each_def(prog, op, |v| {
                    if v < ns && z[v] != 0 {
                        z[v] = 0;
                        changed = true;
                    }
                });
                continue;
            };
            let (a, b, c) = (src(&z, &op.a), src(&z, &op.b), src(&z, &op.c));
            let plain = op.extra.is_none() && !op.m.cc && op.dst2 == Dst::None;
            let int = !op.ty.is_float();
            let r = match op.kind {
                _ if !plain => 0,
                Kind::Mov | Kind::Cvta => a,
                Kind::Cvt if int && !op.ty2.is_float() && !op.m.sat => a.min(op.ty.bits().min(op.ty2.bits()) as u8),
                Kind::Add | Kind::Sub if int => a.min(b),
                Kind::Mul if int && op.m.part != Part::Hi => a.saturating_add(b),
                Kind::Mad if int && op.m.part != Part::Hi => a.saturating_add(b).min(c),
                Kind::Shl => match op.b {
                    Src::Imm(k) if k < 64 => a.saturating_add(k as u8),
                    _ => a,
                },
                Kind::And if int => a.max(b),
                _ => 0,
            };
            // Bits past the register's width are not kept.
            let r = r.min(64).min(if mask == u64::MAX { 64 } else { mask.trailing_ones() as u8 });
            let slot = slot as usize;
            if r < z[slot] {
                z[slot] = r;
                changed = true;
            }
        }
    }
    z
}

/// How the four lanes of a register relate, whichever path computed the value: `lane l = lane 0 + l * stride`
/// modulo 2^(the register's bits), exactly when `widened` is 0; with `widened` 1, the value is 64 bits wide
/// and one of its terms was widened from 32 bits, where a wrap-around between lanes 0 and 3 (which a check
/// of those two lanes finds) would break the relation. Stride 0 is a value uniform in the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stride {
    pub(super) stride: i64,
    pub(super) widened: u8,
}

pub(super) const UNIFORM: Stride = Stride { stride: 0, widened: 0 };

/// A stride in a `bits`-wide register (32-bit strides as their signed representative); `None` past one
/// widened term, or where a widened term's stride is so large that lanes 0..3 could wrap more than once.
pub(super) fn stride(stride: i64, widened: u8, bits: u32) -> Option<Stride> {
    let stride = if bits == 32 { i64::from(stride as i32) } else { stride };
    match (stride, widened) {
        (0, _) => Some(UNIFORM),
        (_, 0) => Some(Stride { stride, widened }),
        (s, 1) if s.unsigned_abs() <= 1 << 28 => Some(Stride { stride, widened }),
        _ => None,
    }
}

/// The stride of every register ([`Stride`]), `None` where unknown: a flow-insensitive fixpoint over the
/// writes (each must give the same stride). Sources: immediates, symbols other than local variables, the
/// CTA's special registers, `tid.y` and `tid.z` and kernel parameters are uniform (a group's threads share
/// `tid.y` and `tid.z`, as `ntid.x % 4 == 0`); `tid.x` and `%laneid` have stride 1. Loads of other memory
/// are not uniform: on the scalar loop, a thread may store between its group's loads. Guarded writes are
/// unknown, and so are writes in converted ranges that `blended(op, register)` says keep the old value in the
/// lanes off the mask (the others compute every lane, as an unmasked write would).
pub(super) fn lane_strides(prog: &Program, ifs: &Ifs, blended: &dyn Fn(usize, usize) -> bool) -> Vec<Option<Stride>> {
    let zeros = low_zeros(prog);
    #[derive(Clone, Copy, PartialEq)]
    enum St {
        Unwritten,
        Known(Stride),
        Unknown,
    }
    let ns = prog.slots as usize;
    let mut st = vec![St::Unwritten; ns];
    let bits_of = |slot: usize| if dom(prog.slot_types[slot]) == Dom::W { 32 } else { 64 };
    // `None`: not known yet (an unwritten register); `Some(None)`: unknown.
    // An operand read as `want` bits: a 32-bit register read as 64 bits is zero-extended (widened), a wider
    // one truncated (modular, the stride stays).
    let src = |st: &[St], s: &Src, zero: bool, want: u32| -> Option<Option<Stride>> {
        Some(match *s {
            Src::Reg(r) => match st[r as usize] {
                // Read before any write reaches it: zero in every lane (second phase).
                St::Unwritten if zero => Some(UNIFORM),
                St::Unwritten => return None,
                St::Known(k) if bits_of(r as usize) < want => stride(i64::from(k.stride as i32), k.widened + 1, 64),
                St::Known(k) => stride(k.stride, k.widened, want.min(64)),
                St::Unknown => None,
            },
            Src::Imm(_) | Src::None => Some(UNIFORM),
            Src::Sym(sym, _) => (!matches!(sym, SymAddr::Frame(_))).then_some(UNIFORM),
            Src::Special(SpecialReg::Tid, 0) | Src::Special(SpecialReg::Laneid, _) => {
                Some(Stride { stride: 1, widened: 0 })
            }
            Src::Special(SpecialReg::Tid, c) => (c < 3).then_some(UNIFORM),
            // A group's four threads are in one warp.
            Src::Special(sr, _) => (crate::uniform::cta_uniform(sr) || sr == SpecialReg::Warpid).then_some(UNIFORM),
            Src::Pred(..) => None,
        })
    };
    let imm = |s: &Src| match *s {
        Src::Imm(c) => Some(c as i64),
        _ => None,
    };
    // First the registers some write determines, then those only read before being written.
    for zero in [false, true] {
        let mut changed = true;
        while changed {
            changed = false;
            for (i, op) in prog.ops.iter().enumerate() {
                let Dst::Reg(slot, mask) = op.dst else {
                    crate::plan::for_each_def(prog, op, |v| {
                        if v < ns && st[v] != St::Unknown {
                            st[v] = St::Unknown;
                            changed = true;
                        }
                    });
                    continue;
                };
                let slot = slot as usize;
                let bits = bits_of(slot);
                let want = |k: usize| match (op.kind, op.m.part, k) {
                    (Kind::Mul | Kind::Mad, Part::Wide, 0 | 1) => op.ty.bits(),
                    (Kind::Mul | Kind::Mad, Part::Wide, _) => 2 * op.ty.bits(),
                    (Kind::Cvt, _, _) => op.ty2.bits(),
                    _ => op.ty.bits(),
                };
                let ops: Vec<Option<Option<Stride>>> =
                    [&op.a, &op.b, &op.c, &op.d].iter().enumerate().map(|(k, s)| src(&st, s, zero, want(k))).collect();
                let result: Option<Option<Stride>> = if op.guard.is_some()
                    || (ifs.inside[i].is_some() && blended(i, slot))
                    || op.extra.is_some()
                    || op.m.cc
                    || op.dst2 != Dst::None
                {
                    Some(None)
                } else if ops.iter().any(|o| o.is_none()) {
                    None
                } else {
                    let o: Vec<Option<Stride>> = ops.into_iter().map(|o| o.expect("known")).collect();
                    let (a, b, c) = (o[0], o[1], o[2]);
                    let width_ok = op.ty.bits() == bits && mask == program::mask_bits(bits);
                    let wide_ok = op.ty.bits() == 32 && bits == 64 && mask == u64::MAX;
                    let lo = op.m.part == Part::Lo;
                    let all_uniform = o.iter().all(|x| *x == Some(UNIFORM));
                    let pure = matches!(
                        op.kind,
                        Kind::Mov
                            | Kind::Add
                            | Kind::Sub
                            | Kind::Mul
                            | Kind::Mad
                            | Kind::Shl
                            | Kind::Shr
                            | Kind::And
                            | Kind::Or
                            | Kind::Xor
                            | Kind::Not
                            | Kind::Neg
                            | Kind::Min
                            | Kind::Max
                            | Kind::Cvt
                            | Kind::Cvta
                    );
                    // A 32-bit value's stride in 64 bits, with one more widened term; exact (no wrap-around
                    // between lanes 0 and 3 is possible) when the stride is a positive power of two and lane 0
                    // a multiple of four strides: lanes 0..3 then stay between two multiples of 2^31.
                    let widen = |x: Stride, from: &Src| {
                        let s = i64::from(x.stride as i32);
                        let exact = x.widened == 0
                            && s > 0
                            && (s as u64).is_power_of_two()
                            && s <= 1 << 29
                            && matches!(*from, Src::Reg(r) if u32::from(zeros[r as usize]) >= 2 + s.trailing_zeros());
                        stride(s, x.widened + u8::from(!exact), 64)
                    };
                    let scaled = |x: Option<Stride>, k: Option<i64>, w: u8| {
                        x.zip(k).and_then(|(x, k)| stride(x.stride.wrapping_mul(k), x.widened + w, bits))
                    };
                    let sum = |x: Option<Stride>, y: Option<Stride>, neg: bool| {
                        x.zip(y).and_then(|(x, y)| {
                            let s = if neg { x.stride.wrapping_sub(y.stride) } else { x.stride.wrapping_add(y.stride) };
                            stride(s, x.widened + y.widened, bits)
                        })
                    };
                    let product = |me_a: Option<Stride>, me_b: Option<Stride>, sa: &Src, sb: &Src| {
                        if me_a == Some(UNIFORM) && me_b == Some(UNIFORM) {
                            Some(UNIFORM)
                        } else if let Some(k) = imm(sb) {
                            scaled(me_a, Some(k), 0)
                        } else if let Some(k) = imm(sa) {
                            scaled(me_b, Some(k), 0)
                        } else {
                            None
                        }
                    };
                    Some(match op.kind {
                        Kind::Ld if matches!(op.mem.base, Src::Sym(SymAddr::KernelParam(_), _)) => Some(UNIFORM),
                        _ if all_uniform && pure => Some(UNIFORM),
                        Kind::Mov | Kind::Cvta if width_ok => a,
                        Kind::Add if width_ok => sum(a, b, false),
                        Kind::Sub if width_ok => sum(a, b, true),
                        Kind::Mul if lo && width_ok => product(a, b, &op.a, &op.b),
                        Kind::Mad if lo && width_ok => sum(product(a, b, &op.a, &op.b), c, false),
                        Kind::Mul | Kind::Mad if op.m.part == Part::Wide && wide_ok => {
                            let signed = op.ty.is_signed();
                            let k = |s: &Src| {
                                imm(s).map(|c| if signed { i64::from(c as i32) } else { i64::from(c as u32) })
                            };
                            let p = match (a, b) {
                                (Some(x), Some(UNIFORM)) if x != UNIFORM => {
                                    k(&op.b).and_then(|k| scaled(widen(x, &op.a), Some(k), 0))
                                }
                                (Some(UNIFORM), Some(y)) if y != UNIFORM => {
                                    k(&op.a).and_then(|k| scaled(widen(y, &op.b), Some(k), 0))
                                }
                                _ => None,
                            };
                            if op.kind == Kind::Mad {
                                sum(p, c, false)
                            } else {
                                p
                            }
                        }
                        Kind::Shl if width_ok => match imm(&op.b) {
                            Some(k) if (0..i64::from(bits)).contains(&k) => scaled(a, Some(1 << k), 0),
                            _ => None,
                        },
                        // Integer conversions: the same width, or 32 to 64 bits.
                        Kind::Cvt
                            if !op.ty.is_float() && !op.ty2.is_float() && op.ty.bits() == op.ty2.bits() && width_ok =>
                        {
                            a
                        }
                        Kind::Cvt
                            if !op.ty2.is_float()
                                && op.ty2.bits() == 32
                                && op.ty.bits() == 64
                                && bits == 64
                                && mask == u64::MAX =>
                        {
                            a.and_then(|x| widen(x, &op.a))
                        }
                        _ => None,
                    })
                };
                let Some(r) = result else { continue };
                let new = match (st[slot], r) {
                    (St::Unknown, _) | (_, None) => St::Unknown,
                    (St::Unwritten, Some(k)) => St::Known(k),
                    (St::Known(x), Some(k)) if x == k => St::Known(x),
                    _ => St::Unknown,
                };
                if new != st[slot] {
                    st[slot] = new;
                    changed = true;
                }
            }
        }
    }
    st.into_iter()
        .map(|s| match s {
            // Never written: zero in every lane.
            St::Unwritten => Some(UNIFORM),
            St::Known(k) => Some(k),
            St::Unknown => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Plan;
    use crate::testing::kernel;

    /// The stride of the last register written (`%rd3` in the kernels below).
    fn last_stride(body: &str) -> Option<Stride> {
        let prog = kernel(body);
        let plan = Plan::new(&prog);
        let ifs = Ifs::new(&prog, &plan, false, &|_| false);
        let strides = lane_strides(&prog, &ifs, &|_, _| true);
        let last = prog.ops.iter().rev().find_map(|o| match o.dst {
            Dst::Reg(r, _) => Some(r as usize),
            _ => None,
        });
        strides[last.expect("a write")]
    }

    #[test]
    fn a_widened_index_of_aligned_lanes_needs_no_check_and_others_do() {
        let head = ".reg .b32 %r<6>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\n\
                    mov.u32 %r5, %tid.x;\n";
        // blockIdx.x * blockDim.x + threadIdx.x: lane 0 is a multiple of four, lanes 0..3 cannot wrap.
        let aligned = format!(
            "{head}mov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\nmad.lo.s32 %r4, %r2, %r3, %r5;\n\
             mul.wide.s32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\nret;"
        );
        assert_eq!(last_stride(&aligned), Some(Stride { stride: 4, widened: 0 }));
        // threadIdx.x + n: lane 0 may be 2^31 - 2, where the signed widening wraps between lanes.
        let offset =
            format!("{head}add.s32 %r2, %r1, %r5;\nmul.wide.s32 %rd2, %r2, 4;\nadd.s64 %rd3, %rd1, %rd2;\nret;");
        assert_eq!(last_stride(&offset), Some(Stride { stride: 4, widened: 1 }));
    }

    /// An address computed under a mask (`if (i < n) x = in[i]`) has its stride where the write needs no
    /// blend, and none where the lanes off the mask keep their old value.
    #[test]
    fn writes_under_a_mask_have_strides_unless_blended() {
        let prog = kernel(
            ".reg .b32 %r<6>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\nld.param.u64 %rd1, [p];\n\
             ld.param.u32 %r1, [n];\nmov.u32 %r5, %tid.x;\nsetp.ge.u32 %p1, %r5, %r1;\n@%p1 bra SKIP;\n\
             mul.wide.u32 %rd2, %r5, 4;\nadd.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r5;\nSKIP:\nret;",
        );
        let plan = Plan::new(&prog);
        let ifs = Ifs::new(&prog, &plan, true, &|_| false);
        let (add, rd3) = prog
            .ops
            .iter()
            .enumerate()
            .find_map(|(i, o)| match (o.kind, o.dst) {
                (Kind::Add, Dst::Reg(r, _)) => Some((i, r as usize)),
                _ => None,
            })
            .expect("the add");
        assert!(ifs.inside[add].is_some(), "the address is computed under the mask");
        let unblended = lane_strides(&prog, &ifs, &|_, _| false);
        assert_eq!(unblended[rd3], Some(Stride { stride: 4, widened: 0 }));
        let blended = lane_strides(&prog, &ifs, &|_, _| true);
        assert_eq!(blended[rd3], None);
    }
}
