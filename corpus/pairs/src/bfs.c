/* bfs (CPU side): Rodinia-style level-synchronous BFS. Per level, one
 * parallel loop per kernel of bfs.cu: iteration tid of bfs_expand's loop is
 * thread tid of kernel 1, of bfs_update's loop thread tid of kernel 2.
 * Traced: bfs_expand._omp_fn.0, against kernel 1 (bfs_expand) alone: the
 * tracer follows one function, so pairs.toml counts only that kernel. */
#include "bfs.h"

PAIRS_TRACED void bfs_expand(const Node *nodes, const int *edges, bool *mask, bool *updating,
                             const bool *visited, int *cost, int n) {
#pragma omp parallel for schedule(static)
  for (int tid = 0; tid < n; tid++) {
    if (mask[tid]) {
      mask[tid] = false;
      for (int i = nodes[tid].starting; i < nodes[tid].starting + nodes[tid].no_of_edges; i++) {
        int id = edges[i];
        if (!visited[id]) {
          cost[id] = cost[tid] + 1;
          updating[id] = true;
        }
      }
    }
  }
}

PAIRS_TRACED void bfs_update(bool *mask, bool *updating, bool *visited, bool *over, int n) {
#pragma omp parallel for schedule(static)
  for (int tid = 0; tid < n; tid++) {
    if (updating[tid]) {
      mask[tid] = true;
      visited[tid] = true;
      *over = true;
      updating[tid] = false;
    }
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 4096);
  Node *nodes = (Node *)pairs_alloc(n * sizeof(Node));
  int *edges = (int *)pairs_alloc(8 * n * sizeof(int));
  bfs_graph(nodes, edges, n);
  bool *mask = (bool *)pairs_alloc(n), *updating = (bool *)pairs_alloc(n);
  bool *visited = (bool *)pairs_alloc(n), *over = (bool *)pairs_alloc(1);
  int *cost = (int *)pairs_alloc(n * sizeof(int));
  for (int v = 0; v < n; v++) {
    cost[v] = v == 0 ? 0 : -1;
    mask[v] = visited[v] = v == 0;
    updating[v] = false;
  }

  int launches = 0;
  do {
    *over = false;
    bfs_expand(nodes, edges, mask, updating, visited, cost, n);
    bfs_update(mask, updating, visited, over, n);
    launches += 2;
  } while (*over);
  return bfs_report(nodes, edges, cost, n, launches);
}
