/* nw: host code shared by nw.cu and nw.c: Needleman-Wunsch global alignment
 * of two random sequences of length n (alphabet of 24 symbols, a random
 * symmetric substitution table, gap penalty 10), score matrix of
 * (n + 1) x (n + 1) ints, row-major, as in Rodinia's nw. */
#include "pairs.h"

#define NW_PENALTY 10

/* Rodinia's maximum(): the larger of a and b, then of that and c. */
static inline PAIRS_HD int nw_max3(int a, int b, int c) {
  int k;
  if (a <= b)
    k = b;
  else
    k = a;
  if (k <= c)
    return c;
  else
    return k;
}

/* Fills ref (the substitution score of every cell) and the score matrix's
 * first row and column (0 elsewhere). */
static void nw_inputs(int *ref, int *score, int n) {
  lcg_t g = lcg_seed(8);
  int table[24][24];
  for (int x = 0; x < 24; x++)
    for (int y = 0; y <= x; y++) table[x][y] = table[y][x] = x == y ? 4 + (int)lcg_below(&g, 8) : (int)lcg_below(&g, 9) - 4;
  int *s1 = (int *)malloc((n + 1) * sizeof(int)), *s2 = (int *)malloc((n + 1) * sizeof(int));
  for (int i = 1; i <= n; i++) s1[i] = (int)lcg_below(&g, 24);
  for (int j = 1; j <= n; j++) s2[j] = (int)lcg_below(&g, 24);
  const int w = n + 1;
  for (int i = 0; i < w * w; i++) ref[i] = score[i] = 0;
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= n; j++) ref[i * w + j] = table[s1[i]][s2[j]];
  for (int i = 0; i <= n; i++) score[i * w] = -i * NW_PENALTY;
  for (int j = 0; j <= n; j++) score[j] = -j * NW_PENALTY;
  free(s1);
  free(s2);
}

static int nw_report(const int *ref, const int *init, const int *score, int n, int launches) {
  const int w = n + 1;
  int *s = (int *)malloc(w * w * sizeof(int));
  for (int i = 0; i < w * w; i++) s[i] = init[i];
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= n; j++)
      s[i * w + j] = nw_max3(s[(i - 1) * w + j - 1] + ref[i * w + j], s[i * w + j - 1] - NW_PENALTY,
                             s[(i - 1) * w + j] - NW_PENALTY);
  long sum = 0;
  for (int i = 0; i < w * w; i++) {
    if (score[i] != s[i]) FAIL("score[%d][%d] = %d, expected %d", i / w, i % w, score[i], s[i]);
    sum += score[i];
  }
  printf("nw n=%d launches=%d\nalignment score %d matrix sum %ld\nPASSED\n", n, launches, score[w * w - 1], sum);
  free(s);
  return 0;
}
