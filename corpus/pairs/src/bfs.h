/* bfs: host code shared by bfs.cu and bfs.c: the graph (Rodinia's layout: a
 * node array of {first edge, edge count}, an edge array of targets), a
 * sequential BFS for the check, the output. */
#include "pairs.h"
#include <stdbool.h>

typedef struct {
  int starting;
  int no_of_edges;
} Node;

/* n nodes, each with 2..8 edges to random nodes; returns the edge count. */
static int bfs_graph(Node *nodes, int *edges, int n) {
  lcg_t g = lcg_seed(5);
  int e = 0;
  for (int v = 0; v < n; v++) {
    int deg = 2 + (int)lcg_below(&g, 7);
    nodes[v].starting = e;
    nodes[v].no_of_edges = deg;
    for (int k = 0; k < deg; k++) edges[e++] = (int)lcg_below(&g, (uint32_t)n);
  }
  return e;
}

static int bfs_report(const Node *nodes, const int *edges, const int *cost, int n, int launches) {
  int *ref = (int *)malloc(n * sizeof(int)), *queue = (int *)malloc(n * sizeof(int));
  for (int v = 0; v < n; v++) ref[v] = -1;
  int head = 0, tail = 0;
  ref[0] = 0;
  queue[tail++] = 0;
  while (head < tail) {
    int v = queue[head++];
    for (int e = nodes[v].starting; e < nodes[v].starting + nodes[v].no_of_edges; e++)
      if (ref[edges[e]] < 0) {
        ref[edges[e]] = ref[v] + 1;
        queue[tail++] = edges[e];
      }
  }
  long sum = 0;
  int reached = 0, depth = 0;
  for (int v = 0; v < n; v++) {
    if (cost[v] != ref[v]) FAIL("cost[%d] = %d, expected %d", v, cost[v], ref[v]);
    if (cost[v] >= 0) {
      reached++;
      sum += cost[v];
      if (cost[v] > depth) depth = cost[v];
    }
  }
  printf("bfs n=%d edges=%d\nreached %d depth %d cost sum %ld launches %d\nPASSED\n", n,
         nodes[n - 1].starting + nodes[n - 1].no_of_edges, reached, depth, sum, launches);
  free(ref);
  free(queue);
  return 0;
}
