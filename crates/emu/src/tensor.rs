//! Executing warp-level matrix instructions (`wmma`, `mma.sync`, `ldmatrix`); decoding, fragment layouts and
//! the arithmetic they follow are documented in `program::tensor`.

use device::{ErrorKind, ExecError};
use program::tensor::*;
use program::{Op, Space, Src};
use scalar::float::{self as sf, Mods};
use scalar::round::Rounding;
use simt::LaneMask;

use crate::machine::{WarpCx, WARP};

/// Executes a matrix instruction for the whole warp.
pub(crate) fn exec(x: &mut WarpCx<'_, '_>, exec: LaneMask, op: &Op) -> Result<(), ExecError> {
    let Some(program::Extra::Matrix(mop)) = op.extra.as_deref() else { return Ok(()) };
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
            let read = |x: &WarpCx<'_, '_>, f: &Frag, srcs: &[Src]| -> Vec<f32> {
                let regs: Vec<[u64; WARP]> = srcs.iter().map(|s| x.read(s)).collect();
                f.gather(&regs).into_iter().map(|b| f.elem.to_f32(b)).collect()
            };
            let a = read(x, &m.a, &m.srcs[0]);
            let b = read(x, &m.b, &m.srcs[1]);
            let c = read(x, &m.c, &m.srcs[2]);
            let d = multiply_accumulate(m.d.rows, m.d.cols, m.k, &a, &b, &c);
            let tile: Vec<u64> = d.into_iter().map(|v| m.d.elem.round_from(v)).collect();
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

fn element_address(base: u64, stride: u64, esz: u32, col_major: bool, r: u32, c: u32) -> u64 {
    let (major, minor) = if col_major { (c, r) } else { (r, c) };
    base.wrapping_add((u64::from(major) * stride + u64::from(minor)) * u64::from(esz))
}

/// The base address and stride (in elements) of a `wmma.load`/`wmma.store`: the same in every lane, and
/// aligned as the ISA requires (address and stride in bytes multiples of the fragment's size).
fn place(
    x: &WarpCx<'_, '_>,
    exec: LaneMask,
    space: Space,
    frag: &Frag,
    col_major: bool,
    stride: &Option<Src>,
) -> Result<(u64, u64), ExecError> {
    let addrs = x.addresses(exec);
    let stride = match stride {
        Some(s) => x.read(s).map(|v| v & 0xFFFF_FFFF),
        None => [u64::from(if col_major { frag.rows } else { frag.cols }); WARP],
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
    }

    #[test]
    fn mma_fragments_match_the_isa() {
        let a = Frag::mma(Layout::MmaA, 16, Elem::F16);
        assert_eq!(a.regs, 4);
        // lane 5: g = 1, t = 1
        assert_eq!(a.position(5, 0), (1, 2));
        assert_eq!(a.position(5, 3), (9, 3));
        assert_eq!(a.position(5, 6), (9, 10));
        let b = Frag::mma(Layout::MmaB, 16, Elem::F16);
        assert_eq!(b.regs, 2);
        assert_eq!(b.position(5, 3), (11, 1));
        let c = Frag::mma(Layout::MmaC, 16, Elem::F32);
        assert_eq!(c.regs, 4);
        assert_eq!(c.position(31, 3), (15, 7));
        for f in [a, b, c, Frag::mma(Layout::MmaA, 8, Elem::Bf16), Frag::mma(Layout::MmaB, 8, Elem::F16)] {
            let tile: Vec<u64> = (0..u64::from(f.rows * f.cols)).collect();
            assert_eq!(f.gather(&f.scatter(&tile)), tile);
        }
    }
}
