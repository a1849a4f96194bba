/* nw (CPU side): each call of nw_step is one launch of nw.cu's kernel (one
 * anti-diagonal d); its iteration t is thread t, which computes cell
 * (t + 1, d - t + 1) if that is inside the matrix. Traced: nw_step._omp_fn.0. */
#include "nw.h"

PAIRS_TRACED void nw_step(const int *ref, int *score, int n, int d) {
#pragma omp parallel for schedule(static)
  for (int t = 0; t < n; t++) {
    int i = t + 1, j = d - t + 1, w = n + 1;
    if (j >= 1 && j <= n) {
      int idx = i * w + j;
      score[idx] = nw_max3(score[idx - w - 1] + ref[idx], score[idx - 1] - NW_PENALTY,
                           score[idx - w] - NW_PENALTY);
    }
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 128);
  const int w = n + 1;
  int *ref = (int *)pairs_alloc(w * w * sizeof(int)), *init = (int *)malloc(w * w * sizeof(int));
  int *score = (int *)pairs_alloc(w * w * sizeof(int));
  nw_inputs(ref, init, n);
  for (int i = 0; i < w * w; i++) score[i] = init[i];
  int launches = 0;
  for (int d = 0; d < 2 * n - 1; d++) {
    nw_step(ref, score, n, d);
    launches++;
  }
  return nw_report(ref, init, score, n, launches);
}
