/* matmul: host code shared by matmul.cu and matmul.c (inputs, check, output). */
#include "pairs.h"

static void matmul_inputs(float *a, float *b, int n) {
  lcg_t g = lcg_seed(3);
  for (int i = 0; i < n * n; i++) a[i] = lcg_unit(&g) - 0.5f;
  for (int i = 0; i < n * n; i++) b[i] = lcg_unit(&g) - 0.5f;
}

/* Compares with a sequential product summed in the same order; prints. */
static int matmul_report(const float *a, const float *b, const float *c, int n) {
  double sum = 0;
  for (int row = 0; row < n; row++)
    for (int col = 0; col < n; col++) {
      float s = 0.0f;
      for (int k = 0; k < n; k++) s += a[row * n + k] * b[k * n + col];
      if (c[row * n + col] != s) FAIL("c[%d][%d] = %g, expected %g", row, col, c[row * n + col], s);
      sum += c[row * n + col];
    }
  printf("matmul n=%d\nchecksum %.6f\nPASSED\n", n, sum);
  return 0;
}
