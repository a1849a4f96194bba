"""One SAXPY and one shared-memory reduction, timed on whatever runs Numba's CUDA target here (lockstep's
driver under `lockstep exec`, or Numba's own simulator with NUMBA_ENABLE_CUDASIM=1), or as the same loops
with Numba's CPU compiler (@njit(parallel=True)). scripts/bench-numba runs the three and prints the table.

    python bench_numba.py cuda N      # kernels through numba.cuda
    python bench_numba.py njit N      # the same loops, @njit(parallel=True)

Prints one JSON line: {"mode", "n", "saxpy_s", "reduce_s", "first_call_s"}: the best of several warm runs
of each (device arrays already in place, synchronized), and the first call (compilation included)."""

import json
import sys
import time

import numpy as np

BLOCK = 256


def best_of(f, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


from numba import cuda, float32  # noqa: E402 (the simulator swaps `cuda` in module globals)


@cuda.jit
def saxpy_kernel(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


@cuda.jit
def block_sum_kernel(x, partial):
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


def run_cuda(n, repeats):
    saxpy, block_sum = saxpy_kernel, block_sum_kernel

    x = np.ones(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    grid = (n + BLOCK - 1) // BLOCK
    partial = cuda.device_array(grid, dtype=np.float32)

    def s():
        saxpy[grid, BLOCK](np.float32(2.0), dx, dy)
        cuda.synchronize()

    def r():
        block_sum[grid, BLOCK](dx, partial)
        cuda.synchronize()

    t = time.perf_counter()
    s()
    r()
    first = time.perf_counter() - t
    saxpy_s, reduce_s = best_of(s, repeats), best_of(r, repeats)
    assert abs(partial.copy_to_host().sum() - n) < 1e-3 * n
    return saxpy_s, reduce_s, first


def run_njit(n, repeats):
    from numba import njit, prange

    @njit(parallel=True)
    def saxpy(a, x, y):
        for i in prange(x.size):
            y[i] = a * x[i] + y[i]

    @njit(parallel=True)
    def block_sum(x, partial):
        # One partial sum per block of BLOCK elements, as the kernel computes them.
        for b in prange(partial.size):
            acc = np.float32(0.0)
            for i in range(b * BLOCK, min((b + 1) * BLOCK, x.size)):
                acc += x[i]
            partial[b] = acc

    x = np.ones(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    partial = np.zeros((n + BLOCK - 1) // BLOCK, dtype=np.float32)
    t = time.perf_counter()
    saxpy(np.float32(2.0), x, y)
    block_sum(x, partial)
    first = time.perf_counter() - t
    saxpy_s = best_of(lambda: saxpy(np.float32(2.0), x, y), repeats)
    reduce_s = best_of(lambda: block_sum(x, partial), repeats)
    assert abs(partial.sum() - n) < 1e-3 * n
    return saxpy_s, reduce_s, first


def main():
    mode, n = sys.argv[1], int(sys.argv[2])
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    saxpy_s, reduce_s, first = (run_cuda if mode == "cuda" else run_njit)(n, repeats)
    print(json.dumps({"mode": mode, "n": n, "saxpy_s": saxpy_s, "reduce_s": reduce_s, "first_call_s": first}))


if __name__ == "__main__":
    main()
