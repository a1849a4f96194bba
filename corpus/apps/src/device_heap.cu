// device_heap: the device-side heap. cudaDeviceSetLimit(cudaLimitMallocHeapSize)
// / cudaDeviceGetLimit; malloc/free and new[]/delete[] in kernels; memory
// allocated by one kernel, used by a second and freed by a third (heap
// allocations outlive the kernel that made them).
#include "common.h"

__global__ void scratch_sums(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int len = 1 + i % 16;
  int* buf = (int*)malloc(len * sizeof(int));
  if (buf == nullptr) {
    out[i] = -1;
    return;
  }
  for (int k = 0; k < len; k++) buf[k] = i + k;
  int s = 0;
  for (int k = 0; k < len; k++) s += buf[k];
  free(buf);
  long long* big = new long long[4];
  if (big == nullptr) {
    out[i] = -2;
    return;
  }
  for (int k = 0; k < 4; k++) big[k] = (long long)s * (k + 1);
  out[i] = (int)(big[3] - big[2]);  // == s
  delete[] big;
}

// One block-wide allocation per block, kept across kernels.
__global__ void alloc_blocks(int** slots) {
  if (threadIdx.x == 0) {
    int* p = (int*)malloc(blockDim.x * sizeof(int));
    slots[blockIdx.x] = p;
  }
}

__global__ void fill_blocks(int** slots) {
  int* p = slots[blockIdx.x];
  if (p) p[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
}

__global__ void sum_and_free(int** slots, int* sums) {
  if (threadIdx.x == 0) {
    int* p = slots[blockIdx.x];
    int s = -1;
    if (p) {
      s = 0;
      for (unsigned k = 0; k < blockDim.x; k++) s += p[k];
      free(p);
    }
    sums[blockIdx.x] = s;
  }
}

int main() {
  printf("device_heap\n");
  const size_t heap = 8 << 20;
  CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
  size_t got = 0;
  CHECK(cudaDeviceGetLimit(&got, cudaLimitMallocHeapSize));
  if (got < heap) FAIL("cudaLimitMallocHeapSize %zu < %zu", got, heap);
  printf("cudaLimitMallocHeapSize >= 8 MiB\n");

  const int n = 512;
  int* dout;
  CHECK(cudaMalloc(&dout, n * sizeof(int)));
  scratch_sums<<<n / 128, 128>>>(dout, n);
  CHECK_LAUNCH();
  int hout[n];
  CHECK(cudaMemcpy(hout, dout, sizeof(hout), cudaMemcpyDeviceToHost));
  long long total = 0;
  for (int i = 0; i < n; i++) {
    int len = 1 + i % 16, want = len * i + len * (len - 1) / 2;
    if (hout[i] != want) FAIL("thread %d: %d, expected %d (-1: malloc failed, -2: new failed)", i, hout[i], want);
    total += hout[i];
  }
  printf("per-thread malloc/free and new[]/delete[]: checksum %lld\n", total);

  const int nb = 8, bs = 64;
  int** slots;
  int* dsums;
  CHECK(cudaMalloc(&slots, nb * sizeof(int*)));
  CHECK(cudaMalloc(&dsums, nb * sizeof(int)));
  alloc_blocks<<<nb, bs>>>(slots);
  CHECK_LAUNCH();
  fill_blocks<<<nb, bs>>>(slots);
  CHECK_LAUNCH();
  sum_and_free<<<nb, bs>>>(slots, dsums);
  CHECK_LAUNCH();
  int sums[nb];
  CHECK(cudaMemcpy(sums, dsums, sizeof(sums), cudaMemcpyDeviceToHost));
  printf("allocations across kernels:");
  for (int b = 0; b < nb; b++) {
    int want = b * 1000 * bs + bs * (bs - 1) / 2;
    if (sums[b] != want) FAIL("block %d: sum %d, expected %d (-1: malloc failed)", b, sums[b], want);
    printf(" %d", sums[b]);
  }
  printf("\n");
  CHECK(cudaFree(dout));
  CHECK(cudaFree(slots));
  CHECK(cudaFree(dsums));
  printf("PASSED\n");
  return 0;
}
