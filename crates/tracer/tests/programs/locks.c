/* Lock addresses known by construction. `locks N T` runs worker(i) for i < N, on T pthreads that take ids
 * in turn (T = 0: all in the main thread, so that glibc stays on its single-threaded paths, which write the
 * lock word with plain stores). worker(i) takes, once each, its own and a shared lock of every kind: pthread
 * mutex, spin lock, rwlock (read on its own, write on the shared), OpenMP lock and nest lock, and a named
 * OpenMP critical section (shared). Prints `KIND ADDRESS STRIDE` for the per-worker arrays and
 * `KIND_shared ADDRESS` for the shared locks. Build with -fopenmp -pthread. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXN 256
static pthread_mutex_t mutex[MAXN], mutex_shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t spin[MAXN], spin_shared;
static pthread_rwlock_t rwlock[MAXN], rwlock_shared = PTHREAD_RWLOCK_INITIALIZER;
static omp_lock_t omplock[MAXN], omplock_shared;
static omp_nest_lock_t nestlock[MAXN];
/* One counter per shared lock: each is only touched under its own lock. */
static long own[MAXN], by_mutex, by_spin, by_rwlock, by_omplock, by_critical;
static int n, nthreads;

__attribute__((noinline)) void worker(long i) {
    pthread_mutex_lock(&mutex[i]);
    own[i] += i;
    pthread_mutex_unlock(&mutex[i]);
    pthread_mutex_lock(&mutex_shared);
    by_mutex += 1;
    pthread_mutex_unlock(&mutex_shared);
    pthread_spin_lock(&spin[i]);
    own[i] += 1;
    pthread_spin_unlock(&spin[i]);
    pthread_spin_lock(&spin_shared);
    by_spin += 1;
    pthread_spin_unlock(&spin_shared);
    pthread_rwlock_rdlock(&rwlock[i]);
    long r = own[i];
    pthread_rwlock_unlock(&rwlock[i]);
    pthread_rwlock_wrlock(&rwlock_shared);
    by_rwlock += r > 0;
    pthread_rwlock_unlock(&rwlock_shared);
    omp_set_lock(&omplock[i]);
    own[i] += 1;
    omp_unset_lock(&omplock[i]);
    omp_set_lock(&omplock_shared);
    by_omplock += 1;
    omp_unset_lock(&omplock_shared);
    omp_set_nest_lock(&nestlock[i]);
    own[i] += 1;
    omp_unset_nest_lock(&nestlock[i]);
#pragma omp critical(named)
    by_critical += 1;
}

static void *pool(void *arg) {
    for (long i = (long)arg; i < n; i += nthreads) worker(i);
    return NULL;
}

int main(int argc, char **argv) {
    n = argc > 1 ? atoi(argv[1]) : 64;
    nthreads = argc > 2 ? atoi(argv[2]) : 0;
    if (n < 1 || n > MAXN || nthreads < 0 || nthreads > 64) return 2;
    for (int i = 0; i < n; i++) {
        pthread_mutex_init(&mutex[i], NULL);
        pthread_spin_init(&spin[i], PTHREAD_PROCESS_PRIVATE);
        pthread_rwlock_init(&rwlock[i], NULL);
        omp_init_lock(&omplock[i]);
        omp_init_nest_lock(&nestlock[i]);
    }
    pthread_spin_init(&spin_shared, PTHREAD_PROCESS_PRIVATE);
    omp_init_lock(&omplock_shared);
    if (nthreads == 0) {
        for (long i = 0; i < n; i++) worker(i);
    } else {
        pthread_t t[64];
        for (long k = 0; k < nthreads; k++) pthread_create(&t[k], NULL, pool, (void *)k);
        for (int k = 0; k < nthreads; k++) pthread_join(t[k], NULL);
    }
    printf("mutex %p %zu\nspin %p %zu\nrwlock %p %zu\nomplock %p %zu\nnestlock %p %zu\n", (void *)mutex,
           sizeof mutex[0], (void *)spin, sizeof spin[0], (void *)rwlock, sizeof rwlock[0], (void *)omplock,
           sizeof omplock[0], (void *)nestlock, sizeof nestlock[0]);
    printf("mutex_shared %p\nspin_shared %p\nrwlock_shared %p\nomplock_shared %p\n", (void *)&mutex_shared,
           (void *)&spin_shared, (void *)&rwlock_shared, (void *)&omplock_shared);
    long total = by_mutex + by_spin + by_rwlock + by_omplock + by_critical;
    printf("total %ld\n", total);
    return total == 5L * n ? 0 : 1;
}
