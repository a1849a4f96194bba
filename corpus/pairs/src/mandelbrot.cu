// mandelbrot (CUDA side): one pixel per thread, an escape-time loop whose
// trip count depends on the pixel; 32x8 blocks (a warp: 32 consecutive
// pixels of one row). CPU side: mandelbrot.c.
#include "mandelbrot.h"

__global__ void mandelbrot(int *out, int w, int h, int maxiter, float dx, float dy) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < h && col < w) {
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
  int *out = (int *)malloc(w * h * sizeof(int)), *dout;
  CHECK(cudaMalloc(&dout, w * h * sizeof(int)));
  dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
  mandelbrot<<<grid, block>>>(dout, w, h, maxiter, dx, dy);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out, dout, w * h * sizeof(int), cudaMemcpyDeviceToHost));
  return mandel_report(out, w, h, maxiter, dx, dy);
}
