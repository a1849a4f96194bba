/* locks (CPU side): a pool of 4 pthreads; thread t calls worker(i) for the
 * t-th quarter of the ids, in order, and call worker(i) is thread i of
 * locks.cu: one insert under lock b % nlocks, a pthread mutex, or with
 * -DLOCKS_SPIN a pthread spin lock (an int, like the CUDA side's locks).
 * The arguments are passed as the kernel's parameters are (nothing is read
 * from globals). Traced: worker (one SIMT thread per call). */
#include "locks.h"
#include <pthread.h>

#define POOL 4

#ifdef LOCKS_SPIN
typedef pthread_spinlock_t lock_t;
#define LOCK_INIT(l) pthread_spin_init(l, PTHREAD_PROCESS_PRIVATE)
#define LOCK(l) pthread_spin_lock(l)
#define UNLOCK(l) pthread_spin_unlock(l)
#else
typedef pthread_mutex_t lock_t;
#define LOCK_INIT(l) pthread_mutex_init(l, NULL)
#define LOCK(l) pthread_mutex_lock(l)
#define UNLOCK(l) pthread_mutex_unlock(l)
#endif

PAIRS_TRACED void worker(int i, const int *keys, lock_t *locks, int *count, int *table, int nb, int nlocks) {
  int key = keys[i];
  int b = locks_bucket(key, nb);
  lock_t *lock = &locks[b % nlocks];
  LOCK(lock);
  int pos = count[b];
  table[b * LOCKS_CAP + pos] = key;
  count[b] = pos + 1;
  UNLOCK(lock);
}

typedef struct {
  int first, last;
  const int *keys;
  lock_t *locks;
  int *count, *table;
  int nb, nlocks;
} Job;

static void *pool_thread(void *arg) {
  const Job *j = (const Job *)arg;
  for (int i = j->first; i < j->last; i++) worker(i, j->keys, j->locks, j->count, j->table, j->nb, j->nlocks);
  return NULL;
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 4096);
  const int nb = arg_int(argc, argv, 2, 64);
  const int nlocks = arg_int(argc, argv, 3, nb);
  int *keys = (int *)pairs_alloc(n * sizeof(int)), *count = (int *)pairs_alloc(nb * sizeof(int));
  int *table = (int *)pairs_alloc(nb * LOCKS_CAP * sizeof(int));
  lock_t *locks = (lock_t *)pairs_alloc(nlocks * sizeof(lock_t));
  locks_inputs(keys, n);
  locks_check_capacity(keys, n, nb);
  for (int b = 0; b < nb; b++) count[b] = 0;
  for (int b = 0; b < nb * LOCKS_CAP; b++) table[b] = 0;
  for (int l = 0; l < nlocks; l++) LOCK_INIT(&locks[l]);
  /* Resolve the lock functions' PLT entries here, not in the first traced call. */
  LOCK(&locks[0]);
  UNLOCK(&locks[0]);

  pthread_t tid[POOL];
  Job jobs[POOL];
  for (int t = 0; t < POOL; t++) {
    jobs[t] = (Job){(int)((long)n * t / POOL), (int)((long)n * (t + 1) / POOL), keys, locks, count, table, nb, nlocks};
    pthread_create(&tid[t], NULL, pool_thread, &jobs[t]);
  }
  for (int t = 0; t < POOL; t++) pthread_join(tid[t], NULL);
  return locks_report(keys, count, table, n, nb, nlocks);
}
