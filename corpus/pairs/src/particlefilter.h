/* particlefilter: host code shared by particlefilter.cu and
 * particlefilter.c: the resampling step of a particle filter (Rodinia's
 * findIndex): m weighted particles (double positions, a cumulative
 * distribution of their skewed random weights) and n draws u[i] in [0, 1);
 * draw i takes the first particle whose CDF reaches u[i], by a linear scan. */
#include "pairs.h"

static void pf_inputs(double *cdf, double *ax, double *ay, double *u, int m, int n) {
  lcg_t g = lcg_seed(12);
  double total = 0;
  for (int j = 0; j < m; j++) {
    double w = lcg_unit(&g);
    cdf[j] = w * w * w; /* skewed: a few heavy particles */
    total += cdf[j];
    ax[j] = 100.0 * lcg_unit(&g);
    ay[j] = 100.0 * lcg_unit(&g);
  }
  double acc = 0;
  for (int j = 0; j < m; j++) {
    acc += cdf[j] / total;
    cdf[j] = acc;
  }
  for (int i = 0; i < n; i++) u[i] = lcg_unit(&g);
}

/* The particle draw i takes, as one thread finds it. */
static inline PAIRS_HD int pf_find(const double *cdf, int m, double u) {
  int index = -1;
  for (int x = 0; x < m; x++) {
    if (cdf[x] >= u) {
      index = x;
      break;
    }
  }
  if (index == -1) index = m - 1;
  return index;
}

static int pf_report(const double *cdf, const double *ax, const double *ay, const double *u,
                     const double *xj, const double *yj, int m, int n) {
  double sx = 0, sy = 0;
  long scanned = 0;
  for (int i = 0; i < n; i++) {
    int k = pf_find(cdf, m, u[i]);
    if (xj[i] != ax[k] || yj[i] != ay[k]) FAIL("draw %d took (%g, %g), expected particle %d", i, xj[i], yj[i], k);
    sx += xj[i];
    sy += yj[i];
    scanned += k + 1;
  }
  printf("particlefilter particles=%d draws=%d\nmean (%.6f, %.6f) scanned %ld\nPASSED\n", m, n, sx / n, sy / n, scanned);
  return 0;
}
