// pagerank (CUDA side): PageRank by pulling, one node per thread: each
// thread sums rank[u] / out_deg[u] over its in-edges. One launch per
// iteration, rank buffers swapped. CPU side: pagerank.c.
#include "pagerank.h"

__global__ void pagerank_pull(const int *in_ptr, const int *in_src, const int *out_deg,
                              const float *rank, float *next, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) {
    float sum = 0.0f;
    for (int e = in_ptr[v]; e < in_ptr[v + 1]; e++) {
      int u = in_src[e];
      sum += rank[u] / (float)out_deg[u];
    }
    next[v] = (1.0f - PR_DAMP) / (float)n + PR_DAMP * sum;
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 4096);
  const int iters = arg_int(argc, argv, 2, 5);
  const int block = 256;
  int *in_ptr = (int *)malloc((n + 1) * sizeof(int)), *in_src = (int *)malloc(16 * n * sizeof(int));
  int *out_deg = (int *)malloc(n * sizeof(int));
  float *rank = (float *)malloc(n * sizeof(float));
  const int ne = pagerank_graph(in_ptr, in_src, out_deg, n);
  for (int v = 0; v < n; v++) rank[v] = 1.0f / (float)n;
  int *dptr, *dsrc, *ddeg;
  float *dr, *ds;
  CHECK(cudaMalloc(&dptr, (n + 1) * sizeof(int)));
  CHECK(cudaMalloc(&dsrc, ne * sizeof(int)));
  CHECK(cudaMalloc(&ddeg, n * sizeof(int)));
  CHECK(cudaMalloc(&dr, n * sizeof(float)));
  CHECK(cudaMalloc(&ds, n * sizeof(float)));
  CHECK(cudaMemcpy(dptr, in_ptr, (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dsrc, in_src, ne * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ddeg, out_deg, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dr, rank, n * sizeof(float), cudaMemcpyHostToDevice));
  for (int it = 0; it < iters; it++) {
    pagerank_pull<<<(n + block - 1) / block, block>>>(dptr, dsrc, ddeg, dr, ds, n);
    CHECK_LAUNCH();
    float *t = dr;
    dr = ds;
    ds = t;
  }
  CHECK(cudaMemcpy(rank, dr, n * sizeof(float), cudaMemcpyDeviceToHost));
  return pagerank_report(in_ptr, in_src, out_deg, rank, n, iters);
}
