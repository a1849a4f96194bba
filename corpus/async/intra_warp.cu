// Producers and consumers inside one warp, through mbarrier objects, compiled by nvcc for sm_80 and sm_90
// (build.sh): lanes that wait for arrivals other lanes of their own warp make on another branch path. Under
// independent thread scheduling (Volta and later) the waiting lanes do not keep the others from running;
// crates/jit/tests/mbarrier.rs checks both kernels on both engines against a CPU model.
#include <cuda/barrier>
#include <cuda/ptx>

// Lane 0 of each warp fills its warp's slice of a tile and arrives on `full`; lanes 1..31 wait for it, read
// their word and arrive on `empty`, which lane 0 waits on before the next tile. Raw objects (cuda::ptx), one
// pair per warp.
extern "C" __global__ void lane_producer(const unsigned* in, unsigned* out, int tiles) {
  __shared__ uint64_t full[8], empty[8];
  __shared__ unsigned tile[256];
  int t = threadIdx.x, w = t / 32, lane = t % 32, n = blockDim.x;
  if (lane == 0) {
    cuda::ptx::mbarrier_init(&full[w], 1);
    cuda::ptx::mbarrier_init(&empty[w], 31);
  }
  __syncthreads();
  unsigned acc = 0;
  if (lane == 0) {
    for (int k = 0; k < tiles; ++k) {
      if (k > 0) {
        while (!cuda::ptx::mbarrier_test_wait_parity(&empty[w], (k - 1) & 1)) {
        }
      }
      for (int i = 1; i < 32; ++i) tile[t + i] = in[(blockIdx.x * tiles + k) * n + t + i] * (k + 1);
      acc += k;
      cuda::ptx::mbarrier_arrive(&full[w]);
    }
  } else {
    for (int k = 0; k < tiles; ++k) {
      while (!cuda::ptx::mbarrier_test_wait_parity(&full[w], k & 1)) {
      }
      acc += tile[t];
      cuda::ptx::mbarrier_arrive(&empty[w]);
    }
  }
  out[blockIdx.x * n + t] = acc;
}

// Odd threads arrive and wait at a block-scope cuda::barrier while the even threads of their warp still have
// work to do before they arrive: the two sides call arrive_and_wait on different paths.
extern "C" __global__ void odd_even_barrier(const unsigned* in, unsigned* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ unsigned buf[256];
  int t = threadIdx.x, n = blockDim.x;
  if (t == 0) init(&bar, n);
  __syncthreads();
  unsigned v;
  if (t % 2) {
    bar.arrive_and_wait();
    v = buf[t - 1] + 1;
  } else {
    unsigned x = in[blockIdx.x * n + t];
    for (int i = 0; i < t % 7; ++i) x = x * 3 + i;
    buf[t] = x;
    bar.arrive_and_wait();
    v = buf[(t + 2) % n] * 2;
  }
  out[blockIdx.x * n + t] = v;
}
