/* spmv (CPU side): iteration r of spmv_step's loop is thread r of spmv.cu's
 * scalar CSR kernel. Traced: spmv_step._omp_fn.0. */
#include "spmv.h"

PAIRS_TRACED void spmv_step(const int *row_ptr, const int *col, const float *val, const float *x,
                            float *y, int n) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++) {
    float s = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++) s += val[k] * x[col[k]];
    y[r] = s;
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 8192);
  int *row_ptr = (int *)pairs_alloc((n + 1) * sizeof(int)), *col = (int *)pairs_alloc(32 * n * sizeof(int));
  float *val = (float *)pairs_alloc(32 * n * sizeof(float)), *x = (float *)pairs_alloc(n * sizeof(float));
  float *y = (float *)pairs_alloc(n * sizeof(float));
  spmv_matrix(row_ptr, col, val, x, n);
  spmv_step(row_ptr, col, val, x, y, n);
  return spmv_report(row_ptr, col, val, x, y, n);
}
