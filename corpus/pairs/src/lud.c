/* lud (CPU side): each call of lud_step is one launch of lud.cu's kernel
 * (elimination step k); its iteration i is thread i, which updates row i if
 * i > k. Traced: lud_step._omp_fn.0. */
#include "lud.h"

PAIRS_TRACED void lud_step(float *a, int n, int k) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    if (i > k) {
      float l = a[i * n + k] / a[k * n + k];
      a[i * n + k] = l;
      for (int j = k + 1; j < n; j++) a[i * n + j] -= l * a[k * n + j];
    }
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 128);
  float *init = (float *)malloc(n * n * sizeof(float)), *a = (float *)pairs_alloc(n * n * sizeof(float));
  lud_inputs(init, n);
  for (int i = 0; i < n * n; i++) a[i] = init[i];
  int launches = 0;
  for (int k = 0; k < n - 1; k++) {
    lud_step(a, n, k);
    launches++;
  }
  return lud_report(init, a, n, launches);
}
