"""Numba CUDA kernels run under lockstep (`lockstep exec -- python numba_kernels.py`), each checked against
NumPy: an elementwise kernel, a shared-memory stencil with syncthreads, atomics (a histogram), a tree
reduction in shared memory, a 2D kernel, device functions and a reduction with Numba's @cuda.reduce.
Prints one line per check and "numba: ok"; any mismatch raises."""

import math
import sys

import numpy as np
from numba import cuda, float32

rng = np.random.default_rng(7)


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


BLOCK = 128
TILE = BLOCK + 2


@cuda.jit
def blur(x, out):
    # Each block stages its elements and a halo of one on each side in shared memory.
    tile = cuda.shared.array(TILE, dtype=float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    n = x.size
    tile[t + 1] = x[i] if i < n else 0.0
    if t == 0:
        tile[0] = x[i - 1] if i > 0 else 0.0
    if t == BLOCK - 1:
        tile[BLOCK + 1] = x[i + 1] if i + 1 < n else 0.0
    cuda.syncthreads()
    if i < n:
        out[i] = (tile[t] + tile[t + 1] + tile[t + 2]) / 3.0


@cuda.jit
def histogram(values, bins):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(bins, values[i] % bins.size, 1)


@cuda.jit
def block_sums(x, partial):
    s = cuda.shared.array(BLOCK, dtype=float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    s[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit(device=True)
def mandel(cr, ci, limit):
    zr = 0.0
    zi = 0.0
    for k in range(limit):
        if zr * zr + zi * zi > 4.0:
            return k
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
    return limit


@cuda.jit
def mandelbrot(out, limit):
    x, y = cuda.grid(2)
    h, w = out.shape
    if y < h and x < w:
        out[y, x] = mandel(-2.0 + 3.0 * x / w, -1.5 + 3.0 * y / h, limit)


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def check(name, got, want, **tol):
    got, want = np.asarray(got), np.asarray(want)
    if not np.allclose(got, want, **tol):
        bad = np.flatnonzero(~np.isclose(got, want, **tol))[:5]
        raise SystemExit(f"{name}: mismatch at {bad.tolist()}: got {got.ravel()[bad]}, want {want.ravel()[bad]}")
    print(f"{name}: ok")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)

    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array_like(x)
    grid = (n + BLOCK - 1) // BLOCK
    saxpy[grid, BLOCK](np.float32(2.5), d_x, d_y, d_out)
    # NVVM contracts a * x + y into one fused multiply-add: the exact product, rounded once.
    fused = (2.5 * x.astype(np.float64) + y).astype(np.float32)
    check("saxpy", d_out.copy_to_host(), fused, rtol=0, atol=0)

    blur[grid, BLOCK](d_x, d_out)
    padded = np.concatenate([[0.0], x, [0.0]]).astype(np.float32)
    check("shared-memory stencil", d_out.copy_to_host(), (padded[:-2] + padded[1:-1] + padded[2:]) / 3, rtol=1e-5)

    values = rng.integers(0, 1 << 20, n).astype(np.int32)
    bins = cuda.to_device(np.zeros(64, dtype=np.int32))
    histogram[grid, BLOCK](cuda.to_device(values), bins)
    check("atomic histogram", bins.copy_to_host(), np.bincount(values % 64, minlength=64))

    d_partial = cuda.device_array(grid, dtype=np.float32)
    block_sums[grid, BLOCK](d_x, d_partial)
    check("block reduction", d_partial.copy_to_host().sum(dtype=np.float64), x.sum(dtype=np.float64), rtol=1e-4)

    check("cuda.reduce", sum_reduce(d_x), x.sum(dtype=np.float64), rtol=1e-4)

    h, w, limit = 96, 128, 64
    img = cuda.device_array((h, w), dtype=np.int32)
    mandelbrot[(math.ceil(w / 16), math.ceil(h / 16)), (16, 16)](img, limit)
    want = np.zeros((h, w), dtype=np.int32)
    for j in range(h):
        for i in range(w):
            cr, ci = -2.0 + 3.0 * i / w, -1.5 + 3.0 * j / h
            zr = zi = 0.0
            k = 0
            while k < limit and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                k += 1
            want[j, i] = k
    check("2D grid, device function, divergent loop", img.copy_to_host(), want)
    cuda.synchronize()
    print("numba: ok")


if __name__ == "__main__":
    main()
