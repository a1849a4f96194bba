/* halfdiv: shared by halfdiv.cu and halfdiv.c. A branch known by construction: odd threads run one chain of
 * k multiply-adds, even threads another, each much longer than the rest of the thread, so a warp runs both
 * paths with half its lanes: SIMT efficiency just above 50% on both sides, whatever each path's length. */
#include "pairs.h"

static inline unsigned chain_odd(unsigned x, int k) {
  for (int j = 0; j < k; j++) x = x * 3u + 1u;
  return x;
}

static inline unsigned chain_even(unsigned x, int k) {
  for (int j = 0; j < k; j++) x = x * 5u + 7u;
  return x;
}

static int halfdiv_report(const unsigned *in, const unsigned *out, int n, int k) {
  unsigned long long sum = 0;
  for (int i = 0; i < n; i++) {
    unsigned want = (i & 1) ? chain_odd(in[i], k) : chain_even(in[i], k);
    if (out[i] != want) FAIL("out[%d] = %u, expected %u", i, out[i], want);
    sum += out[i];
  }
  printf("halfdiv n=%d k=%d\nchecksum %llu\nPASSED\n", n, k, sum);
  return 0;
}
