// nw (CUDA side): Needleman-Wunsch, one cell per thread along anti-diagonals:
// launch d (d = 0 .. 2n-2) runs n threads; thread t computes cell
// (t + 1, d - t + 1) if that is inside the matrix. Neighbouring threads touch
// cells a row apart (uncoalesced), and the corners of the wavefront mask off
// most threads. CPU side: nw.c.
#include "nw.h"

__global__ void nw_diagonal(const int *ref, int *score, int n, int d) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int i = t + 1, j = d - t + 1, w = n + 1;
  if (t < n && j >= 1 && j <= n) {
    int idx = i * w + j;
    score[idx] = nw_max3(score[idx - w - 1] + ref[idx], score[idx - 1] - NW_PENALTY,
                         score[idx - w] - NW_PENALTY);
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 128);
  const int w = n + 1, block = 128;
  int *ref = (int *)malloc(w * w * sizeof(int)), *init = (int *)malloc(w * w * sizeof(int));
  int *score = (int *)malloc(w * w * sizeof(int));
  nw_inputs(ref, init, n);
  int *dref, *dscore;
  CHECK(cudaMalloc(&dref, w * w * sizeof(int)));
  CHECK(cudaMalloc(&dscore, w * w * sizeof(int)));
  CHECK(cudaMemcpy(dref, ref, w * w * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dscore, init, w * w * sizeof(int), cudaMemcpyHostToDevice));
  int launches = 0;
  for (int d = 0; d < 2 * n - 1; d++) {
    nw_diagonal<<<(n + block - 1) / block, block>>>(dref, dscore, n, d);
    CHECK_LAUNCH();
    launches++;
  }
  CHECK(cudaMemcpy(score, dscore, w * w * sizeof(int), cudaMemcpyDeviceToHost));
  return nw_report(ref, init, score, n, launches);
}
