/* Programs whose SIMT behaviour is known by construction. `lanes MODE N` runs N pthreads; thread i (created
 * i-th, so SIMT thread i with --function worker_MODE) runs worker_MODE(i):
 *   uniform  work(1000): every lane the same path (100%).
 *   oddeven  odd ids work_a(1000), even ids work_b(1000): each path 50%.
 *   trips    work(i % 32 + 1): the loop runs 1..32 times across a warp of 32 (528 of 1024 lane slots).
 *   mem      load_c(&buf[i]) (4-byte stride: 4 sectors per warp of 32) and load_s(&buf[8 i]) (32-byte stride:
 *            32 sectors), buf 128-byte aligned on the heap.
 *   cmps     cmps_loop(i % 32 + 1): like trips, each iteration one `cmpsq` (two heap loads by one instruction).
 *   lock1    all threads increment one counter under one mutex.
 *   lockn    thread i increments its own counter under its own mutex.
 *   lockloop thread i runs work(1000) under its own mutex.
 *   straggler thread 0 runs 3000 iterations of a loop with a stack store and load, a heap load and, every 16th,
 *            a call of load_c, once cmps_loop(300); the others one: lane 0 runs on alone, long after the items
 *            queued before ran out.
 * `lanes MODE N seq` calls worker_MODE(0), ..., worker_MODE(N - 1) in the main thread instead: a process with
 * one thread, where glibc's mutexes take plain stores rather than atomics. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuse.h"

#define MAXT 256
static int *buf;
static pthread_mutex_t one = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t many[MAXT];
static long counters[MAXT];
static long shared;
static long sink[MAXT];

void *worker_uniform(void *arg) {
    long id = (long)arg;
    sink[id] = work(1000);
    return NULL;
}

void *worker_oddeven(void *arg) {
    long id = (long)arg;
    sink[id] = (id & 1) ? work_a(1000) : work_b(1000);
    return NULL;
}

void *worker_trips(void *arg) {
    long id = (long)arg;
    sink[id] = work(id % 32 + 1);
    return NULL;
}

void *worker_mem(void *arg) {
    long id = (long)arg;
    sink[id] = load_c(&buf[id]) + load_s(&buf[8 * id]);
    return NULL;
}

/* One instruction, two loads of the same segment (`cmpsq`): a warp access each lane makes twice, `n` times. */
__attribute__((noinline)) static long cmps_loop(long n, const long *a, const long *b) {
    long eq = 0;
    for (long i = 0; i < n; i++) {
        const long *s = a + i, *d = b + i;
        unsigned char z;
        __asm__ volatile("cmpsq\n\tsete %0" : "=r"(z), "+S"(s), "+D"(d) : : "cc", "memory");
        eq += z;
    }
    return eq;
}

void *worker_cmps(void *arg) {
    long id = (long)arg;
    sink[id] = cmps_loop(id % 32 + 1, (const long *)buf, (const long *)buf + 40);
    return NULL;
}

void *worker_straggler(void *arg) {
    long id = (long)arg;
    volatile long acc = 0;
    long n = id == 0 ? 3000 : 1;
    for (long i = 0; i < n; i++) {
        acc += buf[(i * 8) % (8 * MAXT)];
        if ((i & 15) == 0) acc += load_c(&buf[i % MAXT]);
        if (i == 1000) acc += cmps_loop(300, (const long *)buf, (const long *)buf + 40);
    }
    sink[id] = acc;
    return NULL;
}

void *worker_lock1(void *arg) {
    long id = (long)arg;
    pthread_mutex_lock(&one);
    shared += id;
    pthread_mutex_unlock(&one);
    return NULL;
}

void *worker_lockloop(void *arg) {
    long id = (long)arg;
    pthread_mutex_lock(&many[id]);
    counters[id] += work(1000);
    pthread_mutex_unlock(&many[id]);
    return NULL;
}

void *worker_lockn(void *arg) {
    long id = (long)arg;
    pthread_mutex_lock(&many[id]);
    counters[id] += id;
    pthread_mutex_unlock(&many[id]);
    return NULL;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "uniform";
    int n = argc > 2 ? atoi(argv[2]) : 32;
    if (n < 1 || n > MAXT) return 2;
    void *(*fn)(void *) = NULL;
    if (!strcmp(mode, "uniform")) fn = worker_uniform;
    else if (!strcmp(mode, "oddeven")) fn = worker_oddeven;
    else if (!strcmp(mode, "trips")) fn = worker_trips;
    else if (!strcmp(mode, "mem")) fn = worker_mem;
    else if (!strcmp(mode, "cmps")) fn = worker_cmps;
    else if (!strcmp(mode, "lock1")) fn = worker_lock1;
    else if (!strcmp(mode, "lockn")) fn = worker_lockn;
    else if (!strcmp(mode, "lockloop")) fn = worker_lockloop;
    else if (!strcmp(mode, "straggler")) fn = worker_straggler;
    else return 2;
    buf = aligned_alloc(128, 8 * MAXT * sizeof(int));
    for (int i = 0; i < 8 * MAXT; i++) buf[i] = i;
    for (int i = 0; i < MAXT; i++) pthread_mutex_init(&many[i], NULL);
    pthread_t t[MAXT];
    if (argc > 3 && !strcmp(argv[3], "seq")) {
        for (long i = 0; i < n; i++) fn((void *)i);
    } else {
        for (long i = 0; i < n; i++) pthread_create(&t[i], NULL, fn, (void *)i);
        for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    }
    printf("buf %p shared %ld\n", (void *)buf, shared);
    return 0;
}
