// pathfinder (CUDA side): dynamic programming row by row, one column per
// thread: dst[c] = wall[r][c] + min(src[c-1], src[c], src[c+1]) (the
// neighbours that exist). One launch per row, buffers swapped (Rodinia's
// pathfinder without its pyramid tiling). CPU side: pathfinder.c.
#include "pathfinder.h"

__global__ void pathfinder_row(const int *wall, const int *src, int *dst, int cols, int r) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < cols) {
    int m = src[c];
    if (c > 0 && src[c - 1] < m) m = src[c - 1];
    if (c < cols - 1 && src[c + 1] < m) m = src[c + 1];
    dst[c] = wall[r * cols + c] + m;
  }
}

int main(int argc, char **argv) {
  const int cols = arg_int(argc, argv, 1, 2048);
  const int rows = arg_int(argc, argv, 2, 16);
  const int block = 256;
  int *wall = (int *)malloc(rows * cols * sizeof(int)), *result = (int *)malloc(cols * sizeof(int));
  pathfinder_inputs(wall, rows, cols);
  int *dwall, *src, *dst;
  CHECK(cudaMalloc(&dwall, rows * cols * sizeof(int)));
  CHECK(cudaMalloc(&src, cols * sizeof(int)));
  CHECK(cudaMalloc(&dst, cols * sizeof(int)));
  CHECK(cudaMemcpy(dwall, wall, rows * cols * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(src, wall, cols * sizeof(int), cudaMemcpyHostToDevice));
  for (int r = 1; r < rows; r++) {
    pathfinder_row<<<(cols + block - 1) / block, block>>>(dwall, src, dst, cols, r);
    CHECK_LAUNCH();
    int *t = src;
    src = dst;
    dst = t;
  }
  CHECK(cudaMemcpy(result, src, cols * sizeof(int), cudaMemcpyDeviceToHost));
  return pathfinder_report(wall, result, rows, cols);
}
