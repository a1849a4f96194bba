/* pagerank (CPU side): each call of pagerank_step is one launch of
 * pagerank.cu's kernel, its iteration v the thread of node v.
 * Traced: pagerank_step._omp_fn.0. */
#include "pagerank.h"

PAIRS_TRACED void pagerank_step(const int *in_ptr, const int *in_src, const int *out_deg,
                                const float *rank, float *next, int n) {
#pragma omp parallel for schedule(static)
  for (int v = 0; v < n; v++) {
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
  int *in_ptr = (int *)pairs_alloc((n + 1) * sizeof(int)), *in_src = (int *)pairs_alloc(16 * n * sizeof(int));
  int *out_deg = (int *)pairs_alloc(n * sizeof(int));
  float *r = (float *)pairs_alloc(n * sizeof(float)), *s = (float *)pairs_alloc(n * sizeof(float));
  pagerank_graph(in_ptr, in_src, out_deg, n);
  for (int v = 0; v < n; v++) r[v] = 1.0f / (float)n;
  for (int it = 0; it < iters; it++) {
    pagerank_step(in_ptr, in_src, out_deg, r, s, n);
    float *t = r;
    r = s;
    s = t;
  }
  return pagerank_report(in_ptr, in_src, out_deg, r, n, iters);
}
