/* An SPMD-style OpenMP port of a CUDA kernel launched twice: `spmd T` runs step(0) then step(1), each one
 * parallel region of T threads in which OpenMP thread t does the work of CUDA thread t: step 0 calls
 * work_a(t + 1), step 1 calls work_b(100). Warps by (launch, thread number) see lanes 0..T-1 of one step:
 * step 0's loop diverges by trip count (lane t runs t + 1 trips), step 1 is uniform. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "fuse.h"

static long out[64];

__attribute__((noinline)) void step(int phase, int threads) {
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num();
        out[t] += phase == 0 ? work_a(t + 1) : work_b(100);
    }
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    if (threads < 1 || threads > 64) return 2;
    step(0, threads);
    step(1, threads);
    long s = 0;
    for (int t = 0; t < threads; t++) s += out[t];
    printf("sum %ld\n", s);
    return 0;
}
