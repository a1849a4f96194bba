// barriers.cu -- CTA barriers, barrier reductions and memory fences.
//
// Covers: __syncthreads (bar.sync 0), __syncthreads_count/_and/_or
// (bar.red.popc / .and / .or), __syncwarp (bar.warp.sync) with full and
// partial masks, __threadfence (fence.sc.gpu / membar.gl),
// __threadfence_block (membar.cta), __threadfence_system (membar.sys),
// bar.arrive + bar.sync on a named barrier (producer/consumer warps),
// bar.sync with an explicit thread count (bar.sync 1, 64), barrier.sync
// .aligned spellings, a barrier inside a loop with a uniform trip count, and
// a barrier inside a uniform (blockIdx-dependent) conditional.

extern "C" __global__ void sync_variants(const int *in, int *out) {
  __shared__ int s[256];
  int i = threadIdx.x;
  int v = in[blockIdx.x * blockDim.x + i];
  s[i] = v;
  __syncthreads();
  int cnt = __syncthreads_count(v > 0);    // bar.red.popc.u32
  int all = __syncthreads_and(v != 0);     // bar.red.and.pred
  int any = __syncthreads_or(v < 0);       // bar.red.or.pred
  out[blockIdx.x * blockDim.x + i] = s[(i + 1) % blockDim.x] + cnt * 4 + all * 2 + any;
}

extern "C" __global__ void warp_sync_and_fences(int *data, int *out) {
  int i = threadIdx.x;
  int lane = i & 31;
  data[i] = i;
  __syncwarp();                            // full mask
  if (lane < 16) {
    data[i] += 1;
    __syncwarp(0x0000FFFFu);               // partial mask
  }
  __threadfence_block();
  int a = data[i ^ 1];
  __threadfence();
  int b = data[(i + 32) % blockDim.x];
  __threadfence_system();
  out[i] = a + b;
}

// Warp 0 produces into shared memory and arrives at barrier 1; warp 1 waits
// at barrier 1 then consumes. bar.sync 2, 64 synchronises both warps again.
extern "C" __global__ void named_barriers(const float *in, float *out) {
  __shared__ float buf[32];
  int i = threadIdx.x;
  int warp = i >> 5;
  if (warp == 0) {
    buf[i] = in[i] * 2.0f;
    asm volatile("bar.arrive 1, 64;" ::: "memory");
  } else if (warp == 1) {
    asm volatile("bar.sync 1, 64;" ::: "memory");
    out[i] = buf[i - 32];
  }
  asm volatile("bar.sync 2, 64;" ::: "memory");
  if (warp < 2) out[64 + i] = buf[i & 31] + 1.0f;
  asm volatile("barrier.sync.aligned 3;" ::: "memory");
  asm volatile("barrier.sync 4, %0;" :: "r"(blockDim.x) : "memory");
  int n;
  asm volatile("{ .reg .pred p; setp.gt.f32 p, %1, 0f00000000;\n\t"
               "bar.red.popc.u32 %0, 5, p; }" : "=r"(n) : "f"(in[i]));
  out[128 + i] = (float)n;
}

// Uniform trip count: every thread executes the same number of barriers.
extern "C" __global__ void barrier_in_loop(const float *in, float *out, int iters) {
  __shared__ float tile[128];
  int i = threadIdx.x;
  float v = in[blockIdx.x * blockDim.x + i];
  for (int k = 0; k < iters; ++k) {
    tile[i] = v;
    __syncthreads();
    v = 0.5f * (tile[i] + tile[(i + 1) % blockDim.x]);
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + i] = v;
}

// The condition depends only on blockIdx, so it is uniform within a CTA.
extern "C" __global__ void barrier_in_uniform_cond(const float *in, float *out) {
  __shared__ float tile[128];
  int i = threadIdx.x;
  float v = in[blockIdx.x * blockDim.x + i];
  if (blockIdx.x % 2 == 0) {
    tile[i] = v;
    __syncthreads();
    v = tile[blockDim.x - 1 - i];
  }
  out[blockIdx.x * blockDim.x + i] = v;
}
