// particlefilter (CUDA side): resampling, one draw per thread: a linear scan
// of the CDF until cdf[x] >= u[i] (trip counts differ from lane to lane),
// then a copy of the chosen particle's position. CPU side: particlefilter.c.
#include "particlefilter.h"

__global__ void find_index(const double *cdf, const double *ax, const double *ay, const double *u,
                           double *xj, double *yj, int m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int index = -1;
    for (int x = 0; x < m; x++) {
      if (cdf[x] >= u[i]) {
        index = x;
        break;
      }
    }
    if (index == -1) index = m - 1;
    xj[i] = ax[index];
    yj[i] = ay[index];
  }
}

int main(int argc, char **argv) {
  const int m = arg_int(argc, argv, 1, 256);
  const int n = arg_int(argc, argv, 2, 4096);
  const int block = 256;
  double *cdf = (double *)malloc(m * sizeof(double)), *ax = (double *)malloc(m * sizeof(double));
  double *ay = (double *)malloc(m * sizeof(double)), *u = (double *)malloc(n * sizeof(double));
  double *xj = (double *)malloc(n * sizeof(double)), *yj = (double *)malloc(n * sizeof(double));
  pf_inputs(cdf, ax, ay, u, m, n);
  double *dcdf, *dax, *day, *du, *dxj, *dyj;
  CHECK(cudaMalloc(&dcdf, m * sizeof(double)));
  CHECK(cudaMalloc(&dax, m * sizeof(double)));
  CHECK(cudaMalloc(&day, m * sizeof(double)));
  CHECK(cudaMalloc(&du, n * sizeof(double)));
  CHECK(cudaMalloc(&dxj, n * sizeof(double)));
  CHECK(cudaMalloc(&dyj, n * sizeof(double)));
  CHECK(cudaMemcpy(dcdf, cdf, m * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dax, ax, m * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(day, ay, m * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(du, u, n * sizeof(double), cudaMemcpyHostToDevice));
  find_index<<<(n + block - 1) / block, block>>>(dcdf, dax, day, du, dxj, dyj, m, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(xj, dxj, n * sizeof(double), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(yj, dyj, n * sizeof(double), cudaMemcpyDeviceToHost));
  return pf_report(cdf, ax, ay, u, xj, yj, m, n);
}
