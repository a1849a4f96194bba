// bfs: a multi-kernel iterative algorithm driven by the host. Level-synchronous
// breadth-first search over a generated directed graph in CSR form: each
// level runs an `expand` kernel and an `update` kernel, then copies a device
// flag back with cudaMemcpy to decide whether to go on. Distances are
// compared with a CPU BFS.
#include "common.h"
#include <queue>
#include <vector>

__global__ void expand(const int* rows, const int* cols, const int* frontier, int* next, const int* dist, int nv) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < nv && frontier[v]) {
    for (int e = rows[v]; e < rows[v + 1]; e++) {
      int u = cols[e];
      if (dist[u] < 0) next[u] = 1;  // benign race: every writer stores 1
    }
  }
}

__global__ void update(int* frontier, int* next, int* dist, int level, int* changed, int nv) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < nv) {
    if (next[v]) {
      dist[v] = level;
      frontier[v] = 1;
      next[v] = 0;
      *changed = 1;
    } else {
      frontier[v] = 0;
    }
  }
}

int main() {
  const int nv = 10000, src = 0;
  // ---- deterministic random graph: out-degree 1..4, uniform targets ----
  Lcg rng(2024);
  std::vector<int> rows(nv + 1), cols;
  for (int v = 0; v < nv; v++) {
    rows[v] = (int)cols.size();
    int deg = 1 + (int)rng.below(4);
    for (int k = 0; k < deg; k++) cols.push_back((int)rng.below(nv));
  }
  rows[nv] = (int)cols.size();
  const int ne = (int)cols.size();
  printf("bfs: %d vertices, %d edges\n", nv, ne);

  // ---- CPU reference ----
  std::vector<int> ref(nv, -1);
  std::queue<int> q;
  ref[src] = 0;
  q.push(src);
  while (!q.empty()) {
    int v = q.front();
    q.pop();
    for (int e = rows[v]; e < rows[v + 1]; e++)
      if (ref[cols[e]] < 0) {
        ref[cols[e]] = ref[v] + 1;
        q.push(cols[e]);
      }
  }

  // ---- GPU ----
  int *drows, *dcols, *dfront, *dnext, *ddist, *dchanged;
  CHECK(cudaMalloc(&drows, (nv + 1) * sizeof(int)));
  CHECK(cudaMalloc(&dcols, ne * sizeof(int)));
  CHECK(cudaMalloc(&dfront, nv * sizeof(int)));
  CHECK(cudaMalloc(&dnext, nv * sizeof(int)));
  CHECK(cudaMalloc(&ddist, nv * sizeof(int)));
  CHECK(cudaMalloc(&dchanged, sizeof(int)));
  CHECK(cudaMemcpy(drows, rows.data(), (nv + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dcols, cols.data(), ne * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dfront, 0, nv * sizeof(int)));
  CHECK(cudaMemset(dnext, 0, nv * sizeof(int)));
  CHECK(cudaMemset(ddist, 0xff, nv * sizeof(int)));  // -1 everywhere
  const int zero = 0, one = 1;
  CHECK(cudaMemcpy(ddist + src, &zero, sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dfront + src, &one, sizeof(int), cudaMemcpyHostToDevice));

  const int block = 256, grid = (nv + block - 1) / block;
  int iterations = 0, level = 0;
  for (;;) {
    int changed = 0;
    CHECK(cudaMemcpy(dchanged, &changed, sizeof(int), cudaMemcpyHostToDevice));
    expand<<<grid, block>>>(drows, dcols, dfront, dnext, ddist, nv);
    CHECK_LAUNCH();
    update<<<grid, block>>>(dfront, dnext, ddist, level + 1, dchanged, nv);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(&changed, dchanged, sizeof(int), cudaMemcpyDeviceToHost));
    iterations++;
    if (!changed) break;
    level++;
    if (iterations > nv) FAIL("no convergence after %d iterations", iterations);
  }

  std::vector<int> dist(nv);
  CHECK(cudaMemcpy(dist.data(), ddist, nv * sizeof(int), cudaMemcpyDeviceToHost));
  int reached = 0, maxd = 0;
  long long sum = 0;
  for (int v = 0; v < nv; v++) {
    if (dist[v] != ref[v]) FAIL("dist[%d] = %d, CPU BFS says %d", v, dist[v], ref[v]);
    if (ref[v] >= 0) {
      reached++;
      sum += ref[v];
      if (ref[v] > maxd) maxd = ref[v];
    }
  }
  printf("iterations %d, reached %d, max distance %d, distance checksum %lld\n", iterations, reached, maxd, sum);
  CHECK(cudaFree(drows));
  CHECK(cudaFree(dcols));
  CHECK(cudaFree(dfront));
  CHECK(cudaFree(dnext));
  CHECK(cudaFree(ddist));
  CHECK(cudaFree(dchanged));
  printf("PASSED\n");
  return 0;
}
