/* particlefilter (CPU side): iteration i of find_index_step's loop is thread
 * i of particlefilter.cu's find_index kernel. Traced: find_index_step._omp_fn.0. */
#include "particlefilter.h"

PAIRS_TRACED void find_index_step(const double *cdf, const double *ax, const double *ay, const double *u,
                                  double *xj, double *yj, int m, int n) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    int index = -1;
    for (int x = 0; x < m; x++) {
      if (cdf[x] >= u[i]) {
        index = x;
        break;
      }
    }
    if (index == -1) index = m - 1;
    xj[i] = ax[index];
    yj[i] = ay[index];
  }
}

int main(int argc, char **argv) {
  const int m = arg_int(argc, argv, 1, 256);
  const int n = arg_int(argc, argv, 2, 4096);
  double *cdf = (double *)pairs_alloc(m * sizeof(double)), *ax = (double *)pairs_alloc(m * sizeof(double));
  double *ay = (double *)pairs_alloc(m * sizeof(double)), *u = (double *)pairs_alloc(n * sizeof(double));
  double *xj = (double *)pairs_alloc(n * sizeof(double)), *yj = (double *)pairs_alloc(n * sizeof(double));
  pf_inputs(cdf, ax, ay, u, m, n);
  find_index_step(cdf, ax, ay, u, xj, yj, m, n);
  return pf_report(cdf, ax, ay, u, xj, yj, m, n);
}
