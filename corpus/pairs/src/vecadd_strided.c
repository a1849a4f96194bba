/* vecadd_strided (CPU side): iteration i of vadd_strided_step's loop is CUDA
 * thread i of vecadd_strided.cu: c[i*s] = a[i*s] + b[i*s].
 * Traced: vadd_strided_step._omp_fn.0. */
#include "pairs.h"

PAIRS_TRACED void vadd_strided_step(const float *a, const float *b, float *c, int n, int s) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    int j = i * s;
    c[j] = a[j] + b[j];
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 16384);
  const int s = arg_int(argc, argv, 2, 4);
  const int len = n * s;
  float *a = (float *)pairs_alloc(len * sizeof(float));
  float *b = (float *)pairs_alloc(len * sizeof(float));
  float *c = (float *)pairs_alloc(len * sizeof(float));
  lcg_t g = lcg_seed(2);
  for (int i = 0; i < len; i++) a[i] = lcg_unit(&g);
  for (int i = 0; i < len; i++) b[i] = lcg_unit(&g);
  for (int i = 0; i < len; i++) c[i] = 0.0f;

  vadd_strided_step(a, b, c, n, s);

  double sum = 0;
  for (int j = 0; j < len; j++) {
    float want = j % s == 0 ? a[j] + b[j] : 0.0f;
    if (c[j] != want) FAIL("c[%d] = %g, expected %g", j, c[j], want);
    sum += c[j];
  }
  printf("vecadd_strided n=%d stride=%d\nchecksum %.6f\nPASSED\n", n, s, sum);
  return 0;
}
