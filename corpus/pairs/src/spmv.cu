// spmv (CUDA side): y = A x with A in CSR, one row per thread (the scalar
// CSR kernel): a loop over the row's nonzeros, gathering x[col[k]].
// CPU side: spmv.c.
#include "spmv.h"

__global__ void spmv_csr(const int *row_ptr, const int *col, const float *val, const float *x,
                         float *y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) {
    float s = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++) s += val[k] * x[col[k]];
    y[r] = s;
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 8192);
  const int block = 256;
  int *row_ptr = (int *)malloc((n + 1) * sizeof(int)), *col = (int *)malloc(32 * n * sizeof(int));
  float *val = (float *)malloc(32 * n * sizeof(float)), *x = (float *)malloc(n * sizeof(float));
  float *y = (float *)malloc(n * sizeof(float));
  const int nnz = spmv_matrix(row_ptr, col, val, x, n);
  int *drow, *dcol;
  float *dval, *dx, *dy;
  CHECK(cudaMalloc(&drow, (n + 1) * sizeof(int)));
  CHECK(cudaMalloc(&dcol, nnz * sizeof(int)));
  CHECK(cudaMalloc(&dval, nnz * sizeof(float)));
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CHECK(cudaMemcpy(drow, row_ptr, (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dcol, col, nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dval, val, nnz * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));
  spmv_csr<<<(n + block - 1) / block, block>>>(drow, dcol, dval, dx, dy, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  return spmv_report(row_ptr, col, val, x, y, n);
}
