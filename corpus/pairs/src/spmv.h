/* spmv: host code shared by spmv.cu and spmv.c: a random CSR matrix (1..32
 * nonzeros per row, so row lengths, and the loop trip counts of a warp's
 * threads, vary), a sequential product for the check, the output. */
#include "pairs.h"

/* Fills row_ptr (n + 1), col, val (at most 32 n) and x (n); returns nnz. */
static int spmv_matrix(int *row_ptr, int *col, float *val, float *x, int n) {
  lcg_t g = lcg_seed(6);
  int nnz = 0;
  for (int r = 0; r < n; r++) {
    row_ptr[r] = nnz;
    int len = 1 + (int)lcg_below(&g, 32);
    for (int k = 0; k < len; k++) {
      col[nnz] = (int)lcg_below(&g, (uint32_t)n);
      val[nnz] = lcg_unit(&g) - 0.5f;
      nnz++;
    }
  }
  row_ptr[n] = nnz;
  for (int i = 0; i < n; i++) x[i] = lcg_unit(&g);
  return nnz;
}

static int spmv_report(const int *row_ptr, const int *col, const float *val, const float *x,
                       const float *y, int n) {
  double sum = 0;
  for (int r = 0; r < n; r++) {
    float s = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++) s += val[k] * x[col[k]];
    if (y[r] != s) FAIL("y[%d] = %g, expected %g", r, y[r], s);
    sum += y[r];
  }
  printf("spmv n=%d nnz=%d\nchecksum %.6f\nPASSED\n", n, row_ptr[n], sum);
  return 0;
}
