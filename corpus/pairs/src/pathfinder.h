/* pathfinder: host code shared by pathfinder.cu and pathfinder.c (Rodinia's
 * pathfinder): a rows x cols grid of weights 0..9; the cheapest path from the
 * top row to each bottom cell, moving down, down-left or down-right. */
#include "pairs.h"

static void pathfinder_inputs(int *wall, int rows, int cols) {
  lcg_t g = lcg_seed(9);
  for (int i = 0; i < rows * cols; i++) wall[i] = (int)lcg_below(&g, 10);
}

static int pathfinder_report(const int *wall, const int *result, int rows, int cols) {
  int *src = (int *)malloc(cols * sizeof(int)), *dst = (int *)malloc(cols * sizeof(int));
  for (int c = 0; c < cols; c++) src[c] = wall[c];
  for (int r = 1; r < rows; r++) {
    for (int c = 0; c < cols; c++) {
      int m = src[c];
      if (c > 0 && src[c - 1] < m) m = src[c - 1];
      if (c < cols - 1 && src[c + 1] < m) m = src[c + 1];
      dst[c] = wall[r * cols + c] + m;
    }
    int *t = src;
    src = dst;
    dst = t;
  }
  long sum = 0;
  int best = result[0];
  for (int c = 0; c < cols; c++) {
    if (result[c] != src[c]) FAIL("result[%d] = %d, expected %d", c, result[c], src[c]);
    sum += result[c];
    if (result[c] < best) best = result[c];
  }
  printf("pathfinder rows=%d cols=%d\nshortest %d sum %ld\nPASSED\n", rows, cols, best, sum);
  free(src);
  free(dst);
  return 0;
}
