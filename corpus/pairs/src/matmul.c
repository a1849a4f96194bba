/* matmul (CPU side): iteration t of matmul_step's loop is the CUDA thread of
 * matmul.cu computing c[t / n][t % n] (warps hold the same 32 elements on
 * both sides: 32 consecutive columns of one row). Traced: matmul_step._omp_fn.0. */
#include "matmul.h"

PAIRS_TRACED void matmul_step(const float *a, const float *b, float *c, int n) {
#pragma omp parallel for schedule(static)
  for (int t = 0; t < n * n; t++) {
    int row = t / n, col = t % n;
    float sum = 0.0f;
    for (int k = 0; k < n; k++) sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 64);
  const size_t bytes = (size_t)n * n * sizeof(float);
  float *a = (float *)pairs_alloc(bytes), *b = (float *)pairs_alloc(bytes), *c = (float *)pairs_alloc(bytes);
  matmul_inputs(a, b, n);
  matmul_step(a, b, c, n);
  return matmul_report(a, b, c, n);
}
