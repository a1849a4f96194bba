/* lud: host code shared by lud.cu and lud.c: LU decomposition in place
 * (Doolittle, no pivoting) of an n x n row-major float matrix made
 * diagonally dominant. */
#include "pairs.h"

static void lud_inputs(float *a, int n) {
  lcg_t g = lcg_seed(10);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) a[i * n + j] = lcg_unit(&g) - 0.5f + (i == j ? (float)n : 0.0f);
}

/* Step k for row i > k, as one thread does it. */
static inline PAIRS_HD void lud_row(float *a, int n, int k, int i) {
  float l = a[i * n + k] / a[k * n + k];
  a[i * n + k] = l;
  for (int j = k + 1; j < n; j++) a[i * n + j] -= l * a[k * n + j];
}

static int lud_report(const float *init, const float *result, int n, int launches) {
  float *a = (float *)malloc(n * n * sizeof(float));
  for (int i = 0; i < n * n; i++) a[i] = init[i];
  for (int k = 0; k < n - 1; k++)
    for (int i = k + 1; i < n; i++) lud_row(a, n, k, i);
  double sum = 0, det_log = 0;
  for (int i = 0; i < n * n; i++) {
    if (result[i] != a[i]) FAIL("a[%d][%d] = %g, expected %g", i / n, i % n, result[i], a[i]);
    sum += result[i];
  }
  for (int i = 0; i < n; i++) det_log += result[i * n + i] > 0 ? 1 : 0;
  printf("lud n=%d launches=%d\nchecksum %.4f positive pivots %d\nPASSED\n", n, launches, sum, (int)det_log);
  free(a);
  return 0;
}
