/* locks: host code shared by locks.cu and locks.c: n random keys inserted
 * into nb buckets of a hash table (bucket b: a count and a slice of cap
 * keys), every insert under a lock: lock b % nlocks (nlocks = nb: one lock
 * per bucket; nlocks = 1: one global lock). Output and check do not depend
 * on the order of the inserts. */
#include "pairs.h"

#define LOCKS_CAP 256

static inline PAIRS_HD int locks_bucket(int key, int nb) { return (int)(((unsigned)key * 2654435761u) >> 8) % nb; }

static void locks_inputs(int *keys, int n) {
  lcg_t g = lcg_seed(15);
  for (int i = 0; i < n; i++) keys[i] = (int)lcg_below(&g, 1u << 20);
}

static int locks_report(const int *keys, const int *count, const int *table, int n, int nb, int nlocks) {
  long *want_sum = (long *)calloc(nb, sizeof(long)), *got_sum = (long *)calloc(nb, sizeof(long));
  int *want_count = (int *)calloc(nb, sizeof(int));
  for (int i = 0; i < n; i++) {
    int b = locks_bucket(keys[i], nb);
    want_count[b]++;
    want_sum[b] += keys[i];
  }
  int fullest = 0;
  long total = 0;
  for (int b = 0; b < nb; b++) {
    if (count[b] != want_count[b]) FAIL("bucket %d holds %d keys, expected %d", b, count[b], want_count[b]);
    for (int k = 0; k < count[b]; k++) got_sum[b] += table[b * LOCKS_CAP + k];
    if (got_sum[b] != want_sum[b]) FAIL("bucket %d: key sum %ld, expected %ld", b, got_sum[b], want_sum[b]);
    if (count[b] > fullest) fullest = count[b];
    total += got_sum[b];
  }
  printf("locks n=%d buckets=%d locks=%d\nfullest bucket %d key sum %ld\nPASSED\n", n, nb, nlocks, fullest, total);
  free(want_sum);
  free(got_sum);
  free(want_count);
  return 0;
}

/* The buckets must not overflow (checked before running either side). */
static void locks_check_capacity(const int *keys, int n, int nb) {
  int *c = (int *)calloc(nb, sizeof(int));
  for (int i = 0; i < n; i++)
    if (++c[locks_bucket(keys[i], nb)] > LOCKS_CAP) FAIL("a bucket overflows: use more buckets");
  free(c);
}
