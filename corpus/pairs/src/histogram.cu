// histogram (CUDA side): one value per thread, atomicAdd on its bin in
// global memory (lanes of a warp hit random bins). CPU side: histogram.c.
#include "histogram.h"

__global__ void histogram(const int *data, unsigned *hist, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[data[i]], 1u);
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 32768);
  const int bins = arg_int(argc, argv, 2, 64);
  const int block = 256;
  int *data = (int *)malloc(n * sizeof(int)), *ddata;
  unsigned *hist = (unsigned *)malloc(bins * sizeof(unsigned)), *dhist;
  hist_inputs(data, n, bins);
  CHECK(cudaMalloc(&ddata, n * sizeof(int)));
  CHECK(cudaMalloc(&dhist, bins * sizeof(unsigned)));
  CHECK(cudaMemcpy(ddata, data, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dhist, 0, bins * sizeof(unsigned)));
  histogram<<<(n + block - 1) / block, block>>>(ddata, dhist, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hist, dhist, bins * sizeof(unsigned), cudaMemcpyDeviceToHost));
  return hist_report(data, hist, n, bins);
}
