/* pathfinder (CPU side): each call of pathfinder_step is one launch of
 * pathfinder.cu's kernel (one row r); its iteration c is thread c.
 * Traced: pathfinder_step._omp_fn.0. */
#include "pathfinder.h"

PAIRS_TRACED void pathfinder_step(const int *wall, const int *src, int *dst, int cols, int r) {
#pragma omp parallel for schedule(static)
  for (int c = 0; c < cols; c++) {
    int m = src[c];
    if (c > 0 && src[c - 1] < m) m = src[c - 1];
    if (c < cols - 1 && src[c + 1] < m) m = src[c + 1];
    dst[c] = wall[r * cols + c] + m;
  }
}

int main(int argc, char **argv) {
  const int cols = arg_int(argc, argv, 1, 2048);
  const int rows = arg_int(argc, argv, 2, 16);
  int *wall = (int *)pairs_alloc(rows * cols * sizeof(int));
  int *src = (int *)pairs_alloc(cols * sizeof(int)), *dst = (int *)pairs_alloc(cols * sizeof(int));
  pathfinder_inputs(wall, rows, cols);
  for (int c = 0; c < cols; c++) src[c] = wall[c];
  for (int r = 1; r < rows; r++) {
    pathfinder_step(wall, src, dst, cols, r);
    int *t = src;
    src = dst;
    dst = t;
  }
  return pathfinder_report(wall, src, rows, cols);
}
