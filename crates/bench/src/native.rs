//! Hand-written Rust versions of the benchmark kernels: the same algorithm as the CUDA code in
//! `corpus/cuda/workloads.cu` (and `kernels/alu_loop.ptx`), block for block, written the way one would write
//! them for a CPU: safe Rust over slices, inner loops simple enough for LLVM to vectorize, the blocks of the
//! grid spread over a fixed-size rayon pool.
//!
//! Floating point: every kernel does the same operations in the same order as its CUDA version, except that
//! `a * b + c` stays a multiply and an add (nvcc contracts it into an `fma` in `saxpy` and `matmul_tiled16`;
//! `f32::mul_add` is a library call on a baseline x86-64 build). The harness therefore compares those two
//! kernels within a rounding bound and every other kernel bit for bit.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

/// `matmul_tiled16`'s tile edge.
pub const TILE: usize = 16;
/// `stencil_1d`'s radius.
pub const RADIUS: usize = 3;
/// The largest block `reduce_tree` accepts (its shared array).
pub const MAX_BLOCK: usize = 1024;
/// The largest block `stencil_1d` accepts (its shared array has `256 + 2 * RADIUS` elements).
pub const MAX_STENCIL_BLOCK: usize = 256;

/// A fixed number of worker threads that the kernels run their blocks on.
#[derive(Debug)]
pub struct Pool {
    pool: rayon::ThreadPool,
    threads: usize,
}

impl Pool {
    /// A pool of `threads` workers (at least one).
    pub fn new(threads: usize) -> Pool {
        let threads = threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("native-{i}"))
            .build()
            .expect("cannot start the native thread pool");
        Pool { pool, threads }
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f` on the pool (parallel iterators inside it use the pool's workers).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }
}

/// `c[i] = a[i] + b[i]`, one block of `block` elements per task.
pub fn vector_add(pool: &Pool, a: &[f32], b: &[f32], c: &mut [f32], block: usize) {
    let n = c.len();
    let (a, b) = (&a[..n], &b[..n]);
    pool.install(|| {
        c.par_chunks_mut(block).zip(a.par_chunks(block)).zip(b.par_chunks(block)).for_each(|((c, a), b)| {
            for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
                *c = a + b;
            }
        })
    });
}

/// `y[i] = alpha * x[i] + y[i]` (multiply, then add: see the module documentation).
pub fn saxpy(pool: &Pool, alpha: f32, x: &[f32], y: &mut [f32], block: usize) {
    let x = &x[..y.len()];
    pool.install(|| {
        y.par_chunks_mut(block).zip(x.par_chunks(block)).for_each(|(y, x)| {
            for (y, x) in y.iter_mut().zip(x) {
                *y += alpha * x;
            }
        })
    });
}

/// The shared-memory tree of `reduce_tree` on one block's values (a power of two of them): strides
/// `len/2, len/4, ..., 1`, `v[t] += v[t + s]`.
pub fn tree_sum(values: &mut [f32]) -> f32 {
    let mut s = values.len() / 2;
    while s > 0 {
        let (low, high) = values.split_at_mut(s);
        for (x, y) in low.iter_mut().zip(&high[..s]) {
            *x += *y;
        }
        s /= 2;
    }
    values[0]
}

/// `reduce_tree`: `partial[b]` = the tree sum of block `b`'s `block` inputs (zeros past the end).
/// `block` must be a power of two of at most [`MAX_BLOCK`]; `partial` has `input.len().div_ceil(block)`
/// elements.
pub fn reduce_tree(pool: &Pool, input: &[f32], partial: &mut [f32], block: usize) {
    assert!(block.is_power_of_two() && block <= MAX_BLOCK, "reduce_tree: block {block}");
    assert_eq!(partial.len(), input.len().div_ceil(block));
    pool.install(|| {
        // One block-sized scratch array per rayon job, standing in for the block's shared memory.
        partial.par_iter_mut().zip(input.par_chunks(block)).for_each_init(
            || vec![0.0f32; block],
            |shared, (p, chunk)| {
                shared[..chunk.len()].copy_from_slice(chunk);
                shared[chunk.len()..].fill(0.0);
                *p = tree_sum(shared);
            },
        )
    });
}

/// `matmul_tiled16`: `C[m x n] = A[m x k] * B[k x n]`, row-major. Each block computes a 16x16 tile of `C`
/// from 16x16 tiles of `A` and `B` copied into local arrays (zero-padded at the edges), accumulating over
/// `k` in the kernel's order. One task per row of tiles.
pub fn matmul_tiled16(pool: &Pool, a: &[f32], b: &[f32], c: &mut [f32], m: usize, n: usize, k: usize) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() == m * n);
    if n == 0 {
        return;
    }
    pool.install(|| {
        c.par_chunks_mut(TILE * n).enumerate().for_each(|(tile_row, c_rows)| {
            let row0 = tile_row * TILE;
            let rows = c_rows.len() / n;
            for col0 in (0..n).step_by(TILE) {
                let cols = TILE.min(n - col0);
                let mut acc = [[0.0f32; TILE]; TILE];
                let mut at = [[0.0f32; TILE]; TILE];
                let mut bt = [[0.0f32; TILE]; TILE];
                for k0 in (0..k).step_by(TILE) {
                    let depth = TILE.min(k - k0);
                    for (y, at_row) in at.iter_mut().enumerate() {
                        *at_row = [0.0; TILE];
                        if y < rows {
                            let start = (row0 + y) * k + k0;
                            at_row[..depth].copy_from_slice(&a[start..start + depth]);
                        }
                    }
                    for (kk, bt_row) in bt.iter_mut().enumerate() {
                        *bt_row = [0.0; TILE];
                        if kk < depth {
                            let start = (k0 + kk) * n + col0;
                            bt_row[..cols].copy_from_slice(&b[start..start + cols]);
                        }
                    }
                    for (acc_row, at_row) in acc.iter_mut().zip(&at) {
                        for (&av, bt_row) in at_row.iter().zip(&bt) {
                            for (o, &bv) in acc_row.iter_mut().zip(bt_row) {
                                *o += av * bv;
                            }
                        }
                    }
                }
                for (y, acc_row) in acc.iter().enumerate().take(rows) {
                    c_rows[y * n + col0..y * n + col0 + cols].copy_from_slice(&acc_row[..cols]);
                }
            }
        })
    });
}

/// `histogram256`: `blocks` blocks each count a contiguous share of `data` into a local histogram, then add
/// its non-zero bins into `hist` atomically.
pub fn histogram256(pool: &Pool, data: &[u8], hist: &[AtomicU32; 256], blocks: usize) {
    let chunk = data.len().div_ceil(blocks.max(1)).max(1);
    pool.install(|| {
        data.par_chunks(chunk).for_each(|chunk| {
            let mut local = [0u32; 256];
            for &d in chunk {
                local[usize::from(d)] += 1;
            }
            for (h, &l) in hist.iter().zip(&local) {
                if l != 0 {
                    h.fetch_add(l, Ordering::Relaxed);
                }
            }
        })
    });
}

/// `stencil_1d`: `out[g] = (in[g-3] + ... + in[g+3]) / 7` with zeros outside `[0, n)`, summed left to right
/// from 0. Each block copies its `block + 6` inputs (halo included) into a local array first, as the kernel
/// does into shared memory. `block` is at most [`MAX_STENCIL_BLOCK`].
pub fn stencil_1d(pool: &Pool, input: &[f32], out: &mut [f32], block: usize) {
    assert!(block > 0 && block <= MAX_STENCIL_BLOCK, "stencil_1d: block {block}");
    let n = out.len();
    let input = &input[..n];
    pool.install(|| {
        out.par_chunks_mut(block).enumerate().for_each_init(
            || vec![0.0f32; block + 2 * RADIUS],
            |shared, (b, out)| {
                // shared[l] holds in[b * block + l - RADIUS], zero outside [0, n).
                let first = (b * block) as isize - RADIUS as isize;
                let lo = first.max(0) as usize;
                let hi = (b * block + block + RADIUS).min(n);
                let offset = (lo as isize - first) as usize;
                shared[..offset].fill(0.0);
                shared[offset..offset + (hi - lo)].copy_from_slice(&input[lo..hi]);
                shared[offset + (hi - lo)..].fill(0.0);
                for (t, o) in out.iter_mut().enumerate() {
                    let mut acc = 0.0f32;
                    for &v in &shared[t..t + 2 * RADIUS + 1] {
                        acc += v;
                    }
                    *o = acc / (2 * RADIUS + 1) as f32;
                }
            },
        )
    });
}

/// One thread of `alu_loop` (see `kernels/alu_loop.ptx`).
#[inline]
pub fn alu_thread(gid: u32, iters: u32) -> u32 {
    let mut h = gid;
    let (mut f, mut g) = (0.0f32, 1.0f32);
    for _ in 0..iters {
        h = h.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        h ^= h >> 13;
        let r = (h >> 8) as f32 * (1.0 / 16_777_216.0);
        f = f * 0.5 + r;
        g = f * f + g * 0.25;
    }
    h ^ ((g * 1000.0) as i32 as u32)
}

/// `alu_loop`: `out[i] = alu_thread(i, iters)`, one block of `block` elements per task.
pub fn alu_loop(pool: &Pool, out: &mut [u32], iters: u32, block: usize) {
    pool.install(|| {
        out.par_chunks_mut(block).enumerate().for_each(|(b, out)| {
            for (t, o) in out.iter_mut().enumerate() {
                *o = alu_thread((b * block + t) as u32, iters);
            }
        })
    });
}

/// Simple sequential versions, for the tests.
pub mod reference {
    use super::{RADIUS, TILE};

    pub fn vector_add(a: &[f32], b: &[f32]) -> Vec<f32> {
        a.iter().zip(b).map(|(x, y)| x + y).collect()
    }

    pub fn saxpy(alpha: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        x.iter().zip(y).map(|(x, y)| alpha * x + y).collect()
    }

    pub fn reduce_tree(input: &[f32], block: usize) -> Vec<f32> {
        (0..input.len().div_ceil(block))
            .map(|b| {
                let mut v: Vec<f32> = (0..block).map(|t| input.get(b * block + t).copied().unwrap_or(0.0)).collect();
                let mut s = block / 2;
                while s > 0 {
                    for t in 0..s {
                        v[t] += v[t + s];
                    }
                    s /= 2;
                }
                v[0]
            })
            .collect()
    }

    /// The plain triple loop, with the tile padding's `0 * 0` terms (which leave the sum unchanged).
    pub fn matmul(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
        let mut c = vec![0.0f32; m * n];
        for row in 0..m {
            for col in 0..n {
                let mut acc = 0.0f32;
                for kk in 0..k.div_ceil(TILE) * TILE {
                    let (x, y) = if kk < k { (a[row * k + kk], b[kk * n + col]) } else { (0.0, 0.0) };
                    acc += x * y;
                }
                c[row * n + col] = acc;
            }
        }
        c
    }

    pub fn histogram256(data: &[u8]) -> Vec<u32> {
        let mut h = vec![0u32; 256];
        for &d in data {
            h[usize::from(d)] += 1;
        }
        h
    }

    pub fn stencil_1d(input: &[f32]) -> Vec<f32> {
        let n = input.len() as i64;
        (0..n)
            .map(|g| {
                let mut acc = 0.0f32;
                for off in -(RADIUS as i64)..=RADIUS as i64 {
                    let j = g + off;
                    acc += if (0..n).contains(&j) { input[j as usize] } else { 0.0 };
                }
                acc / (2 * RADIUS + 1) as f32
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    fn pools() -> Vec<Pool> {
        vec![Pool::new(1), Pool::new(3)]
    }

    #[test]
    fn vector_add_matches_reference() {
        let mut rng = Rng::new(1);
        for n in [0, 1, 255, 256, 1000, 4099] {
            let (a, b) = (rng.vec_f32(n, -100.0, 100.0), rng.vec_f32(n, -100.0, 100.0));
            for pool in pools() {
                let mut c = vec![f32::NAN; n];
                vector_add(&pool, &a, &b, &mut c, 256);
                assert_eq!(bits(&c), bits(&reference::vector_add(&a, &b)), "n = {n}");
            }
        }
    }

    #[test]
    fn saxpy_matches_reference() {
        let mut rng = Rng::new(2);
        for n in [1, 300, 5000] {
            let (x, y) = (rng.vec_f32(n, -10.0, 10.0), rng.vec_f32(n, -10.0, 10.0));
            for pool in pools() {
                let mut out = y.clone();
                saxpy(&pool, 1.7, &x, &mut out, 128);
                assert_eq!(bits(&out), bits(&reference::saxpy(1.7, &x, &y)));
            }
        }
    }

    #[test]
    fn reduce_tree_matches_reference() {
        let mut rng = Rng::new(3);
        for (n, block) in [(1, 32), (1000, 256), (4096, 1024), (5000, 64)] {
            let input = rng.vec_f32(n, -1.0, 1.0);
            for pool in pools() {
                let mut partial = vec![f32::NAN; n.div_ceil(block)];
                reduce_tree(&pool, &input, &mut partial, block);
                assert_eq!(bits(&partial), bits(&reference::reduce_tree(&input, block)), "n = {n}, block = {block}");
            }
        }
    }

    #[test]
    fn matmul_matches_reference() {
        let mut rng = Rng::new(4);
        for (m, n, k) in [(1, 1, 1), (40, 24, 20), (16, 16, 16), (33, 17, 50), (5, 64, 3)] {
            let (a, b) = (rng.vec_f32(m * k, -1.0, 1.0), rng.vec_f32(k * n, -1.0, 1.0));
            for pool in pools() {
                let mut c = vec![f32::NAN; m * n];
                matmul_tiled16(&pool, &a, &b, &mut c, m, n, k);
                assert_eq!(bits(&c), bits(&reference::matmul(&a, &b, m, n, k)), "{m}x{n}x{k}");
            }
        }
    }

    #[test]
    fn histogram_matches_reference() {
        let mut rng = Rng::new(5);
        for (n, blocks) in [(0, 4), (1, 4), (5000, 4), (100_000, 37)] {
            let data: Vec<u8> = (0..n).map(|i| if i % 3 == 0 { 7 } else { rng.next_u32() as u8 }).collect();
            for pool in pools() {
                let hist: [AtomicU32; 256] = std::array::from_fn(|_| AtomicU32::new(0));
                histogram256(&pool, &data, &hist, blocks);
                let got: Vec<u32> = hist.iter().map(|h| h.load(Ordering::Relaxed)).collect();
                assert_eq!(got, reference::histogram256(&data), "n = {n}");
            }
        }
    }

    #[test]
    fn stencil_matches_reference() {
        let mut rng = Rng::new(6);
        for (n, block) in [(1, 256), (2, 4), (1000, 256), (1025, 128), (7, 3)] {
            let input = rng.vec_f32(n, -5.0, 5.0);
            for pool in pools() {
                let mut out = vec![f32::NAN; n];
                stencil_1d(&pool, &input, &mut out, block);
                assert_eq!(bits(&out), bits(&reference::stencil_1d(&input)), "n = {n}, block = {block}");
            }
        }
    }

    #[test]
    fn alu_loop_matches_sequential() {
        let n = 1000;
        for pool in pools() {
            let mut out = vec![0u32; n];
            alu_loop(&pool, &mut out, 50, 128);
            let want: Vec<u32> = (0..n as u32).map(|i| alu_thread(i, 50)).collect();
            assert_eq!(out, want);
        }
    }
}
