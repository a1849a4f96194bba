/* vecadd (CPU side): c[i] = a[i] + b[i]; iteration i of vadd_step's parallel
 * loop is CUDA thread i of vecadd.cu. Traced: vadd_step._omp_fn.0. */
#include "pairs.h"

PAIRS_TRACED void vadd_step(const float *a, const float *b, float *c, int n) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 65536);
  float *a = (float *)pairs_alloc(n * sizeof(float));
  float *b = (float *)pairs_alloc(n * sizeof(float));
  float *c = (float *)pairs_alloc(n * sizeof(float));
  lcg_t g = lcg_seed(1);
  for (int i = 0; i < n; i++) a[i] = lcg_unit(&g);
  for (int i = 0; i < n; i++) b[i] = lcg_unit(&g);

  vadd_step(a, b, c, n);

  double sum = 0;
  for (int i = 0; i < n; i++) {
    if (c[i] != a[i] + b[i]) FAIL("c[%d] = %g, expected %g", i, c[i], a[i] + b[i]);
    sum += c[i];
  }
  printf("vecadd n=%d\nchecksum %.6f\nPASSED\n", n, sum);
  return 0;
}
