/* stencil: host code shared by stencil.cu and stencil.c. */
#include "pairs.h"

static void stencil_inputs(float *grid, int n) {
  lcg_t g = lcg_seed(4);
  for (int i = 0; i < n * n; i++) grid[i] = lcg_unit(&g);
}

/* One Jacobi step, sequentially: what every thread of a launch does. */
static void stencil_ref_step(const float *in, float *out, int n) {
  for (int row = 0; row < n; row++)
    for (int col = 0; col < n; col++) {
      int i = row * n + col;
      if (row == 0 || row == n - 1 || col == 0 || col == n - 1)
        out[i] = in[i];
      else
        out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
    }
}

static int stencil_report(const float *init, const float *result, int n, int steps) {
  float *x = (float *)malloc((size_t)n * n * sizeof(float));
  float *y = (float *)malloc((size_t)n * n * sizeof(float));
  for (int i = 0; i < n * n; i++) x[i] = init[i];
  for (int s = 0; s < steps; s++) {
    stencil_ref_step(x, y, n);
    float *t = x;
    x = y;
    y = t;
  }
  double sum = 0;
  for (int i = 0; i < n * n; i++) {
    if (result[i] != x[i]) FAIL("grid[%d] = %g, expected %g", i, result[i], x[i]);
    sum += result[i];
  }
  printf("stencil n=%d steps=%d\nchecksum %.6f\nPASSED\n", n, steps, sum);
  free(x);
  free(y);
  return 0;
}
