"""cuda.core under lockstep (`lockstep exec -- python cuda_core_nvrtc.py`): CUDA C++ compiled to PTX by
NVRTC at run time (cuda.core's Program), loaded through the driver API, launched on a stream, checked
against NumPy. Host memory is page-locked (cuda.core's pinned memory resource) and viewed from NumPy
through DLPack. Prints one line per check and "cuda.core: ok"."""

import numpy as np
from cuda.core import Device, LaunchConfig, LegacyPinnedMemoryResource, Program, ProgramOptions, launch

SOURCE = r"""
template <typename T>
__global__ void scale_add(const T *x, T *y, T a, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// One partial sum per block, with warp shuffles for the last 32 values.
extern "C" __global__ void block_sum(const float *x, float *partial, size_t n) {
    __shared__ float s[256];
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride >= 32; stride /= 2) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        float v = s[threadIdx.x];
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    }
}
"""


def main():
    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    arch = "".join(str(v) for v in dev.compute_capability)
    options = ProgramOptions(std="c++17", arch=f"sm_{arch}")
    program = Program(SOURCE, code_type="c++", options=options)
    module = program.compile("ptx", name_expressions=("scale_add<double>",))
    scale_add = module.get_kernel("scale_add<double>")
    block_sum = module.get_kernel("block_sum")

    n = 1 << 16
    pinned = LegacyPinnedMemoryResource()
    rng = np.random.default_rng(3)

    def host(count, dtype):
        buf = pinned.allocate(count * np.dtype(dtype).itemsize, stream=stream)
        return buf, np.from_dlpack(buf).view(dtype)[:count]

    hx_buf, hx = host(n, np.float64)
    hy_buf, hy = host(n, np.float64)
    hx[:] = rng.standard_normal(n)
    hy[:] = rng.standard_normal(n)
    want = 3.0 * hx + hy
    # The kernel's a * x + y is one fused multiply-add (rounded once): allow an ulp of the operands.
    bound = 4e-16 * (np.abs(3.0 * hx) + np.abs(hy))

    dx = dev.allocate(hx_buf.size, stream=stream)
    dy = dev.allocate(hy_buf.size, stream=stream)
    dx.copy_from(hx_buf, stream=stream)
    dy.copy_from(hy_buf, stream=stream)
    block = 256
    config = LaunchConfig(grid=(n + block - 1) // block, block=block)
    launch(stream, config, scale_add, dx, dy, np.float64(3.0), np.uint64(n))
    dy.copy_to(hy_buf, stream=stream)
    stream.sync()
    if not np.all(np.abs(hy - want) <= bound):
        raise SystemExit(f"scale_add<double>: mismatch: {hy[:4]} against {want[:4]}")
    print("scale_add<double>: ok")

    hf_buf, hf = host(n, np.float32)
    hf[:] = rng.random(n, dtype=np.float32)
    blocks = n // block
    hp_buf, hp = host(blocks, np.float32)
    df = dev.allocate(hf_buf.size, stream=stream)
    dp = dev.allocate(hp_buf.size, stream=stream)
    df.copy_from(hf_buf, stream=stream)
    launch(stream, LaunchConfig(grid=blocks, block=block), block_sum, df, dp, np.uint64(n))
    dp.copy_to(hp_buf, stream=stream)
    stream.sync()
    want_partial = hf.reshape(blocks, block).sum(axis=1, dtype=np.float64)
    if not np.allclose(hp, want_partial, rtol=1e-5):
        raise SystemExit(f"block_sum: mismatch: {hp[:4]} against {want_partial[:4]}")
    print("block_sum (shared memory, warp shuffles): ok")
    print("cuda.core: ok")


if __name__ == "__main__":
    main()
