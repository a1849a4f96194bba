/* OpenMP parallel for: iteration i calls work(i + 1) and adds to a sum in a critical section. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "work.h"

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
