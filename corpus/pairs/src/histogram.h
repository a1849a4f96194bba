/* histogram: host code shared by histogram.cu and histogram.c: n random
 * values in [0, bins), counted into bins unsigned counters. */
#include "pairs.h"

static void hist_inputs(int *data, int n, int bins) {
  lcg_t g = lcg_seed(13);
  for (int i = 0; i < n; i++) data[i] = (int)lcg_below(&g, (uint32_t)bins);
}

static int hist_report(const int *data, const unsigned *hist, int n, int bins) {
  unsigned *ref = (unsigned *)calloc(bins, sizeof(unsigned));
  for (int i = 0; i < n; i++) ref[data[i]]++;
  unsigned long weighted = 0, total = 0;
  unsigned most = 0;
  for (int b = 0; b < bins; b++) {
    if (hist[b] != ref[b]) FAIL("bin %d = %u, expected %u", b, hist[b], ref[b]);
    total += hist[b];
    weighted += (unsigned long)b * hist[b];
    if (hist[b] > most) most = hist[b];
  }
  printf("histogram n=%d bins=%d\ntotal %lu weighted %lu fullest %u\nPASSED\n", n, bins, total, weighted, most);
  free(ref);
  return 0;
}
