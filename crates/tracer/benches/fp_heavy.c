/* Floating-point-heavy benchmark: 2 threads, each multiplies half of a 200x200 double matrix product. */
#include <pthread.h>
#include <stdio.h>

#define N 200
static double A[N][N], B[N][N], C[N][N];

static void *run(void *arg) {
    long id = (long)arg;
    for (int i = (int)id * N / 2; i < ((int)id + 1) * N / 2; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < N; k++) s += A[i][k] * B[k][j];
            C[i][j] = s;
        }
    return NULL;
}

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            A[i][j] = (i + 1) * 0.5 + j;
            B[i][j] = (i - j) * 0.25;
        }
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    double s = 0;
    for (int i = 0; i < N; i++) s += C[i][i];
    printf("%f\n", s);
    return 0;
}
