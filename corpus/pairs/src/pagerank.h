/* pagerank: host code shared by pagerank.cu and pagerank.c: a random graph
 * stored by in-edges (CSR over targets: in_ptr, in_src) with every node's
 * out-degree, a sequential PageRank for the check, the output. */
#include "pairs.h"

#define PR_DAMP 0.85f

/* n nodes with 1..16 in-edges from random sources; returns the edge count. */
static int pagerank_graph(int *in_ptr, int *in_src, int *out_deg, int n) {
  lcg_t g = lcg_seed(7);
  int e = 0;
  for (int v = 0; v < n; v++) out_deg[v] = 0;
  for (int v = 0; v < n; v++) {
    in_ptr[v] = e;
    int deg = 1 + (int)lcg_below(&g, 16);
    for (int k = 0; k < deg; k++) {
      int u = (int)lcg_below(&g, (uint32_t)n);
      in_src[e++] = u;
      out_deg[u]++;
    }
  }
  in_ptr[n] = e;
  return e;
}

/* What one thread does for node v: the pull update. */
static inline float pagerank_node(const int *in_ptr, const int *in_src, const int *out_deg,
                                  const float *rank, int v, int n) {
  float sum = 0.0f;
  for (int e = in_ptr[v]; e < in_ptr[v + 1]; e++) {
    int u = in_src[e];
    sum += rank[u] / (float)out_deg[u];
  }
  return (1.0f - PR_DAMP) / (float)n + PR_DAMP * sum;
}

static int pagerank_report(const int *in_ptr, const int *in_src, const int *out_deg,
                           const float *result, int n, int iters) {
  float *r = (float *)malloc(n * sizeof(float)), *s = (float *)malloc(n * sizeof(float));
  for (int v = 0; v < n; v++) r[v] = 1.0f / (float)n;
  for (int it = 0; it < iters; it++) {
    for (int v = 0; v < n; v++) s[v] = pagerank_node(in_ptr, in_src, out_deg, r, v, n);
    float *t = r;
    r = s;
    s = t;
  }
  double sum = 0;
  int best = 0;
  for (int v = 0; v < n; v++) {
    if (result[v] != r[v]) FAIL("rank[%d] = %g, expected %g", v, result[v], r[v]);
    sum += result[v];
    if (result[v] > result[best]) best = v;
  }
  printf("pagerank n=%d edges=%d iterations=%d\nrank sum %.6f top node %d\nPASSED\n", n, in_ptr[n],
         iters, sum, best);
  free(r);
  free(s);
  return 0;
}
