/* Integer-heavy benchmark: 2 threads, each runs a hash/sieve mix over its own array. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#define N (1 << 16)
static uint32_t data[2][N];

static void *run(void *arg) {
    long id = (long)arg;
    uint32_t *a = data[id];
    uint32_t h = 2166136261u + (uint32_t)id;
    for (int round = 0; round < 60; round++) {
        for (int i = 0; i < N; i++) {
            h = (h ^ (uint32_t)i) * 16777619u;
            a[i] += h >> 7;
            if (a[i] & 1) a[(i * 7) & (N - 1)] ^= h;
        }
    }
    return (void *)(uintptr_t)h;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, (void *)i);
    uint64_t s = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        s += (uintptr_t)r;
    }
    printf("%llu\n", (unsigned long long)s);
    return 0;
}
