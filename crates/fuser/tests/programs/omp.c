/* OpenMP parallel for, traced per iteration: iteration i calls work(i + 1) and adds the result to a sum in a
 * critical section. With schedule(static) and 4 threads, thread t runs iterations 16 t .. 16 t + 15. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "fuse.h"

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 64;
    long sum = 0;
    omp_set_num_threads(4);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        long r = work(i + 1);
#pragma omp critical
        sum += r;
    }
    printf("sum %ld\n", sum);
    return 0;
}
