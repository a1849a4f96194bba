/* A pthreads worker pool with a known structure: worker i calls work(1000 * (i + 1)) once, then takes a
 * mutex LOCKS times and a spin lock once. Prints the lock addresses for the tests. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "work.h"

#define LOCKS 50
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t spin;
static long counter, total;

static void *worker(void *arg) {
    long id = (long)arg;
    long r = work(1000 * (id + 1));
    for (int i = 0; i < LOCKS; i++) {
        pthread_mutex_lock(&mutex);
        counter++;
        pthread_mutex_unlock(&mutex);
    }
    pthread_spin_lock(&spin);
    total += r;
    pthread_spin_unlock(&spin);
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4;
    pthread_t t[64];
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    for (long i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    printf("mutex %p\nspin %p\ncounter %ld total %ld\n", (void *)&mutex, (void *)&spin, counter, total);
    return counter == (long)n * LOCKS ? 0 : 1;
}
