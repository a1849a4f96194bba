// locks (CUDA side): hash-table inserts under spin locks, one key per thread.
// The lock loop is written so that it cannot deadlock under SIMT: the
// critical section is inside the branch of a successful atomicCAS, and that
// lane releases the lock before the warp's lanes reconverge, so a lane that
// lost to another lane of its own warp just tries again on the next trip.
// The table is read and written through volatile pointers and the writes
// fenced before the release. argv: n, buckets, locks (buckets: one lock per
// bucket; 1: one global lock). CPU side: locks.c.
#include "locks.h"

__global__ void insert(const int *keys, int *locks, volatile int *count, volatile int *table, int n, int nb,
                       int nlocks) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int key = keys[i];
    int b = locks_bucket(key, nb);
    int *lock = &locks[b % nlocks];
    bool done = false;
    while (!done) {
      if (atomicCAS(lock, 0, 1) == 0) {
        int pos = count[b];
        table[b * LOCKS_CAP + pos] = key;
        count[b] = pos + 1;
        __threadfence();
        atomicExch(lock, 0);
        done = true;
      }
    }
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 4096);
  const int nb = arg_int(argc, argv, 2, 64);
  const int nlocks = arg_int(argc, argv, 3, nb);
  const int block = 256;
  int *keys = (int *)malloc(n * sizeof(int)), *count = (int *)malloc(nb * sizeof(int));
  int *table = (int *)malloc(nb * LOCKS_CAP * sizeof(int));
  locks_inputs(keys, n);
  locks_check_capacity(keys, n, nb);
  int *dkeys, *dlocks, *dcount, *dtable;
  CHECK(cudaMalloc(&dkeys, n * sizeof(int)));
  CHECK(cudaMalloc(&dlocks, nlocks * sizeof(int)));
  CHECK(cudaMalloc(&dcount, nb * sizeof(int)));
  CHECK(cudaMalloc(&dtable, nb * LOCKS_CAP * sizeof(int)));
  CHECK(cudaMemcpy(dkeys, keys, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dlocks, 0, nlocks * sizeof(int)));
  CHECK(cudaMemset(dcount, 0, nb * sizeof(int)));
  CHECK(cudaMemset(dtable, 0, nb * LOCKS_CAP * sizeof(int)));
  insert<<<(n + block - 1) / block, block>>>(dkeys, dlocks, dcount, dtable, n, nb, nlocks);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(count, dcount, nb * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(table, dtable, nb * LOCKS_CAP * sizeof(int), cudaMemcpyDeviceToHost));
  return locks_report(keys, count, table, n, nb, nlocks);
}
