// bfs (CUDA side): Rodinia-style level-synchronous BFS, one node per thread.
// Per level: kernel 1 expands the frontier (mask), marking unvisited
// neighbours in the updating mask; kernel 2 turns the updating mask into the
// next frontier and raises the over flag; the host loops until no change.
// CPU side: bfs.c.
#include "bfs.h"

__global__ void bfs_expand(const Node *nodes, const int *edges, bool *mask, bool *updating,
                           const bool *visited, int *cost, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n && mask[tid]) {
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

__global__ void bfs_update(bool *mask, bool *updating, bool *visited, bool *over, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n && updating[tid]) {
    mask[tid] = true;
    visited[tid] = true;
    *over = true;
    updating[tid] = false;
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 4096);
  const int block = 256, grid = (n + block - 1) / block;
  Node *nodes = (Node *)malloc(n * sizeof(Node));
  int *edges = (int *)malloc(8 * n * sizeof(int));
  const int ne = bfs_graph(nodes, edges, n);
  bool *flags = (bool *)malloc(n);
  int *cost = (int *)malloc(n * sizeof(int));
  for (int v = 0; v < n; v++) cost[v] = -1;
  cost[0] = 0;

  Node *dnodes;
  int *dedges, *dcost;
  bool *dmask, *dupdating, *dvisited, *dover;
  CHECK(cudaMalloc(&dnodes, n * sizeof(Node)));
  CHECK(cudaMalloc(&dedges, ne * sizeof(int)));
  CHECK(cudaMalloc(&dmask, n));
  CHECK(cudaMalloc(&dupdating, n));
  CHECK(cudaMalloc(&dvisited, n));
  CHECK(cudaMalloc(&dover, 1));
  CHECK(cudaMalloc(&dcost, n * sizeof(int)));
  CHECK(cudaMemcpy(dnodes, nodes, n * sizeof(Node), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dedges, edges, ne * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dcost, cost, n * sizeof(int), cudaMemcpyHostToDevice));
  for (int v = 0; v < n; v++) flags[v] = v == 0;
  CHECK(cudaMemcpy(dmask, flags, n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dvisited, flags, n, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dupdating, 0, n));

  int launches = 0;
  bool over;
  do {
    over = false;
    CHECK(cudaMemcpy(dover, &over, 1, cudaMemcpyHostToDevice));
    bfs_expand<<<grid, block>>>(dnodes, dedges, dmask, dupdating, dvisited, dcost, n);
    CHECK_LAUNCH();
    bfs_update<<<grid, block>>>(dmask, dupdating, dvisited, dover, n);
    CHECK_LAUNCH();
    launches += 2;
    CHECK(cudaMemcpy(&over, dover, 1, cudaMemcpyDeviceToHost));
  } while (over);
  CHECK(cudaMemcpy(cost, dcost, n * sizeof(int), cudaMemcpyDeviceToHost));
  return bfs_report(nodes, edges, cost, n, launches);
}
