// stencil (CUDA side): Jacobi steps of a 5-point stencil on an n x n grid,
// one point per thread, 32x8 blocks (a warp: 32 consecutive columns of one
// row); boundary points are copied. One launch per step, buffers swapped.
// CPU side: stencil.c.
#include "stencil.h"

__global__ void jacobi(const float *in, float *out, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    int i = row * n + col;
    if (row == 0 || row == n - 1 || col == 0 || col == n - 1)
      out[i] = in[i];
    else
      out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 64);
  const int steps = arg_int(argc, argv, 2, 4);
  const size_t bytes = (size_t)n * n * sizeof(float);
  float *init = (float *)malloc(bytes), *result = (float *)malloc(bytes);
  stencil_inputs(init, n);
  float *x, *y;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMemcpy(x, init, bytes, cudaMemcpyHostToDevice));
  dim3 block(32, 8), grid((n + 31) / 32, (n + 7) / 8);
  for (int s = 0; s < steps; s++) {
    jacobi<<<grid, block>>>(x, y, n);
    CHECK_LAUNCH();
    float *t = x;
    x = y;
    y = t;
  }
  CHECK(cudaMemcpy(result, x, bytes, cudaMemcpyDeviceToHost));
  return stencil_report(init, result, n, steps);
}
