// simt_stats.cu -- kernels whose SIMT statistics are known by construction.
//
// Launch with whole warps (blockDim.x a multiple of 32) unless noted.
//   uniform_work             : no divergence; every lane runs 16 FMAs.
//   branch_on_lane_parity    : each warp splits 16/16 at one if/else.
//   lane_dependent_trip_count: lane L runs (L % 32) + 1 iterations, so a warp
//                              issues 32 iterations with 1..32 active lanes
//                              (sum of active lanes = 528).
//   load_coalesced           : a[tid] -> one 128-byte line per warp.
//   load_strided_32B         : a[tid*8] (floats) -> each lane its own 32-byte
//                              sector (32 sectors per warp).
//   load_scattered           : a[hash(tid) & mask] -> data-dependent addresses.
//   shared_bank_conflicts_strideK (K = 1, 2, 4, 32): shared word index
//                              tid*K -> K-way conflict for K = 2, 4, 32
//                              (K = 1 is conflict-free); blockDim.x <= 32.
//   barrier_uniform_loop     : `iters` barriers per thread, uniform.
//   barrier_uniform_cond     : barrier under a blockIdx-only condition.

extern "C" __global__ void uniform_work(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
#pragma unroll 1
  for (int k = 0; k < 16; ++k) v = fmaf(v, 1.0001f, 0.5f);
  out[i] = v;
}

extern "C" __global__ void branch_on_lane_parity(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  if ((threadIdx.x & 1) == 0) {
    v = v * 2.0f + 1.0f;
    v = sqrtf(fabsf(v));
  } else {
    v = v * 0.5f - 1.0f;
    v = v * v;
  }
  out[i] = v;
}

extern "C" __global__ void lane_dependent_trip_count(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  int trip = (int)(lane % 32) + 1;
  float v = in[i];
#pragma unroll 1
  for (int k = 0; k < trip; ++k) v += 1.0f;
  out[i] = v;
}

extern "C" __global__ void load_coalesced(const float *a, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = a[i];
}

extern "C" __global__ void load_strided_32B(const float *a, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = a[i * 8];
}

__device__ __forceinline__ unsigned hash_u32(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352du;
  x ^= x >> 15; x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// `mask` = (length of a) - 1, length a power of two.
extern "C" __global__ void load_scattered(const float *a, float *out, unsigned mask) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = a[hash_u32(i) & mask];
}

#define BANK_KERNEL(K)                                                          \
  extern "C" __global__ void shared_bank_conflicts_stride##K(const float *in,   \
                                                             float *out) {      \
    __shared__ float s[32 * 32];                                                \
    unsigned t = threadIdx.x;                                                   \
    for (unsigned j = t; j < 32 * 32; j += blockDim.x) s[j] = in[j];            \
    __syncthreads();                                                            \
    out[blockIdx.x * blockDim.x + t] = s[(t * K) & (32 * 32 - 1)];              \
  }
BANK_KERNEL(1)
BANK_KERNEL(2)
BANK_KERNEL(4)
BANK_KERNEL(32)

extern "C" __global__ void barrier_uniform_loop(const float *in, float *out, int iters) {
  __shared__ float s[1024];
  unsigned t = threadIdx.x;
  float v = in[blockIdx.x * blockDim.x + t];
  for (int k = 0; k < iters; ++k) {
    s[t] = v;
    __syncthreads();
    v += s[(t + 1) % blockDim.x];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + t] = v;
}

extern "C" __global__ void barrier_uniform_cond(const float *in, float *out, int flag) {
  __shared__ float s[1024];
  unsigned t = threadIdx.x;
  float v = in[blockIdx.x * blockDim.x + t];
  if (flag != 0 && (blockIdx.x & 1) == 0) {
    s[t] = v;
    __syncthreads();
    v = s[blockDim.x - 1 - t];
  }
  out[blockIdx.x * blockDim.x + t] = v;
}
