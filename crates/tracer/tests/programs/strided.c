/* An OpenMP loop over n elements with a stride known only at run time: at -O3 gcc versions the loop (a
 * vectorized copy for stride 1, a scalar one for the rest) and adds remainder loops; every version and
 * remainder runs iterations of the one source loop. `strided N S`. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void step(const float *a, const float *b, float *c, int n, int s) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) c[i * s] = a[i * s] + b[i * s];
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000, s = argc > 2 ? atoi(argv[2]) : 1;
    float *a = calloc((size_t)n * s, sizeof(float)), *b = calloc((size_t)n * s, sizeof(float));
    float *c = calloc((size_t)n * s, sizeof(float));
    for (int i = 0; i < n * s; i++) a[i] = b[i] = (float)(i % 13);
    step(a, b, c, n, s);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += c[i * s];
    printf("sum %.1f\n", sum);
    return 0;
}
