// libcu++ asynchronous barriers, copies and pipelines, compiled by nvcc for sm_80 and sm_90 (build.sh):
// the PTX lockstep runs for them (crates/jit/tests/mbarrier.rs checks every kernel against a CPU model).
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cooperative_groups.h>

// Two phases of a block-scope barrier: each thread writes, arrive_and_wait, reads a neighbour.
extern "C" __global__ void barrier_arrive_and_wait(const int* in, int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int buf[256];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  int t = threadIdx.x;
  buf[t] = in[blockIdx.x * blockDim.x + t] * 2;
  bar.arrive_and_wait();
  int v = buf[(t + 1) % blockDim.x];
  bar.arrive_and_wait();
  buf[t] = v + 1;
  bar.arrive_and_wait();
  out[blockIdx.x * blockDim.x + t] = buf[(t + 3) % blockDim.x];
}

// Split arrive/wait with tokens and useful work in between.
extern "C" __global__ void barrier_tokens(const int* in, int* out, int rounds) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int buf[2][256];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  int t = threadIdx.x, n = blockDim.x;
  int acc = in[blockIdx.x * n + t];
  for (int r = 0; r < rounds; ++r) {
    buf[r & 1][t] = acc;
    auto token = bar.arrive();
    int local = acc * 3 + r;
    bar.wait(std::move(token));
    acc = local + buf[r & 1][(t + r + 1) % n];
  }
  out[blockIdx.x * n + t] = acc;
}

// memcpy_async of a tile into shared memory, completed through a barrier.
extern "C" __global__ void memcpy_async_barrier(const float* in, float* out, int tiles) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ alignas(16) float tile[256];
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  int n = blockDim.x;
  float sum = 0.f;
  for (int k = 0; k < tiles; ++k) {
    const float* src = in + (blockIdx.x * tiles + k) * n;
    if (threadIdx.x == 0) {
      cuda::memcpy_async(tile, src, cuda::aligned_size_t<16>(sizeof(float) * n), bar);
    }
    bar.arrive_and_wait();
    sum += tile[(threadIdx.x * 7) % n];
    bar.arrive_and_wait();
  }
  out[blockIdx.x * n + threadIdx.x] = sum;
}

// A two-stage block-scope pipeline: producer and consumer roles in every thread.
extern "C" __global__ void pipeline_block(const int* in, int* out, int tiles) {
  constexpr int stages = 2;
  __shared__ alignas(16) int buf[stages][128];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
  auto block = cooperative_groups::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  int n = blockDim.x;
  int acc = 0;
  int fetch = 0;
  for (int k = 0; k < tiles; ++k) {
    for (; fetch < tiles && fetch < k + stages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[fetch % stages], in + (blockIdx.x * tiles + fetch) * n, sizeof(int) * n, pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    acc += buf[k % stages][(threadIdx.x + k) % n];
    pipe.consumer_release();
  }
  out[blockIdx.x * n + threadIdx.x] = acc;
}
