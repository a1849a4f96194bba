// halfdiv (CUDA side): thread i runs chain_odd or chain_even on in[i] by the parity of i.
// CPU side: halfdiv.c (halfdiv_step: one loop iteration per CUDA thread).
#include "halfdiv.h"

__device__ unsigned d_chain_odd(unsigned x, int k) {
  for (int j = 0; j < k; j++) x = x * 3u + 1u;
  return x;
}

__device__ unsigned d_chain_even(unsigned x, int k) {
  for (int j = 0; j < k; j++) x = x * 5u + 7u;
  return x;
}

__global__ void halfdiv(const unsigned *in, unsigned *out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (i & 1) ? d_chain_odd(in[i], k) : d_chain_even(in[i], k);
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 8192), k = arg_int(argc, argv, 2, 256);
  const int block = 256;
  unsigned *in = (unsigned *)malloc(n * sizeof(unsigned)), *out = (unsigned *)malloc(n * sizeof(unsigned));
  lcg_t g = lcg_seed(11);
  for (int i = 0; i < n; i++) in[i] = lcg_next(&g);
  unsigned *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&dout, n * sizeof(unsigned)));
  CHECK(cudaMemcpy(din, in, n * sizeof(unsigned), cudaMemcpyHostToDevice));
  halfdiv<<<(n + block - 1) / block, block>>>(din, dout, n, k);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out, dout, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  return halfdiv_report(in, out, n, k);
}
