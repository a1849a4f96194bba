/* stencil (CPU side): each call of jacobi_step is one launch of stencil.cu's
 * kernel; its iteration t is the thread at row t / n, column t % n (warps
 * hold the same points on both sides). Traced: jacobi_step._omp_fn.0. */
#include "stencil.h"

PAIRS_TRACED void jacobi_step(const float *in, float *out, int n) {
#pragma omp parallel for schedule(static)
  for (int t = 0; t < n * n; t++) {
    int row = t / n, col = t % n;
    int i = row * n + col;
    if (row == 0 || row == n - 1 || col == 0 || col == n - 1)
      out[i] = in[i];
    else
      out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 64);
  const int steps = arg_int(argc, argv, 2, 4);
  const size_t bytes = (size_t)n * n * sizeof(float);
  float *init = (float *)malloc(bytes), *result;
  stencil_inputs(init, n);
  float *x = (float *)pairs_alloc(bytes), *y = (float *)pairs_alloc(bytes);
  for (int i = 0; i < n * n; i++) x[i] = init[i];
  for (int s = 0; s < steps; s++) {
    jacobi_step(x, y, n);
    float *t = x;
    x = y;
    y = t;
  }
  result = x;
  return stencil_report(init, result, n, steps);
}
