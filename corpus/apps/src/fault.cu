// fault: a kernel that faults, chosen by argv[1]:
//   fault oob   - one thread writes 256 GiB past the end of a small allocation
//                 (expected: cudaErrorIllegalAddress)
//   fault trap  - one thread executes __trap()   (expected: cudaErrorLaunchFailure)
// The launch itself succeeds; the error comes back from cudaDeviceSynchronize
// and is sticky. Exits 0 when an error was reported, 1 when the fault went
// unnoticed (cudaSuccess), 2 on a bad argument or an unexpected API failure.
#include "common.h"
#include <cstring>

__global__ void oob_write(int* p, size_t far_index) {
  if (threadIdx.x == 0 && blockIdx.x == 0) p[far_index] = 42;
}

__global__ void trap_kernel(int* p) {
  if (threadIdx.x == 3) __trap();
  p[threadIdx.x] = 1;
}

int main(int argc, char** argv) {
  if (argc != 2 || (strcmp(argv[1], "oob") != 0 && strcmp(argv[1], "trap") != 0)) {
    printf("usage: fault oob|trap\n");
    return 2;
  }
  const bool oob = strcmp(argv[1], "oob") == 0;
  printf("fault: mode %s\n", argv[1]);
  int* p;
  CHECK(cudaMalloc(&p, 64 * sizeof(int)));
  CHECK(cudaMemset(p, 0, 64 * sizeof(int)));
  CHECK(cudaDeviceSynchronize());
  if (oob)
    oob_write<<<1, 32>>>(p, (size_t)1 << 36);
  else
    trap_kernel<<<1, 32>>>(p);
  printf("launch: %s\n", cudaGetErrorName(cudaGetLastError()));
  cudaError_t e = cudaDeviceSynchronize();
  printf("cudaDeviceSynchronize: %s\n", cudaGetErrorName(e));
  if (e == cudaSuccess) {
    printf("the fault went unnoticed\nFAILED\n");
    return 1;
  }
  void* q = nullptr;
  printf("cudaMalloc afterwards: %s\n", cudaGetErrorName(cudaMalloc(&q, 64)));
  printf("fault reported\n");
  return 0;
}
