/* histogram (CPU side): iteration i of histogram_step's loop is thread i of
 * histogram.cu: an atomic increment of bin data[i] (a locked add).
 * Traced: histogram_step._omp_fn.0. */
#include "histogram.h"

PAIRS_TRACED void histogram_step(const int *data, unsigned *hist, int n) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
#pragma omp atomic
    hist[data[i]] += 1u;
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 32768);
  const int bins = arg_int(argc, argv, 2, 64);
  int *data = (int *)pairs_alloc(n * sizeof(int));
  unsigned *hist = (unsigned *)pairs_alloc(bins * sizeof(unsigned));
  hist_inputs(data, n, bins);
  for (int b = 0; b < bins; b++) hist[b] = 0;
  histogram_step(data, hist, n);
  return hist_report(data, hist, n, bins);
}
