/* mandelbrot (CPU side): iteration t of mandelbrot_step's loop is the CUDA
 * thread of mandelbrot.cu for pixel (t / w, t % w) (warps hold the same 32
 * pixels of one row on both sides). Traced: mandelbrot_step._omp_fn.0. */
#include "mandelbrot.h"

PAIRS_TRACED void mandelbrot_step(int *out, int w, int h, int maxiter, float dx, float dy) {
#pragma omp parallel for schedule(static)
  for (int t = 0; t < w * h; t++) {
    int row = t / w, col = t % w;
    float cx = -2.0f + (float)col * dx, cy = -1.25f + (float)row * dy;
    float x = 0.0f, y = 0.0f;
    int it = 0;
    while (it < maxiter && x * x + y * y <= 4.0f) {
      float xt = x * x - y * y + cx;
      y = 2.0f * x * y + cy;
      x = xt;
      it++;
    }
    out[row * w + col] = it;
  }
}

int main(int argc, char **argv) {
  const int w = arg_int(argc, argv, 1, 128);
  const int h = arg_int(argc, argv, 2, 128);
  const int maxiter = arg_int(argc, argv, 3, 64);
  const float dx = 2.5f / (float)w, dy = 2.5f / (float)h;
  int *out = (int *)pairs_alloc(w * h * sizeof(int));
  mandelbrot_step(out, w, h, maxiter, dx, dy);
  return mandel_report(out, w, h, maxiter, dx, dy);
}
