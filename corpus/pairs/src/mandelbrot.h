/* mandelbrot: host code shared by mandelbrot.cu and mandelbrot.c: escape
 * times of a w x h grid over [-2, 0.5] x [-1.25, 1.25], at most maxiter
 * iterations (single precision; both sides round every operation alike). */
#include "pairs.h"

static inline PAIRS_HD int mandel_pixel(float cx, float cy, int maxiter) {
  float x = 0.0f, y = 0.0f;
  int it = 0;
  while (it < maxiter && x * x + y * y <= 4.0f) {
    float xt = x * x - y * y + cx;
    y = 2.0f * x * y + cy;
    x = xt;
    it++;
  }
  return it;
}

static int mandel_report(const int *out, int w, int h, int maxiter, float dx, float dy) {
  long sum = 0;
  int inside = 0;
  for (int row = 0; row < h; row++)
    for (int col = 0; col < w; col++) {
      int want = mandel_pixel(-2.0f + (float)col * dx, -1.25f + (float)row * dy, maxiter);
      if (out[row * w + col] != want) FAIL("pixel (%d, %d) = %d, expected %d", row, col, out[row * w + col], want);
      sum += want;
      inside += want == maxiter;
    }
  printf("mandelbrot %dx%d maxiter=%d\niterations %ld inside %d\nPASSED\n", w, h, maxiter, sum, inside);
  return 0;
}
