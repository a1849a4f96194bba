/* An OpenMP collapse(2) loop of 126 x 126 iterations. gcc computes the first iteration's indices by division
 * and steps them after that: at -O1 and above it may peel the first iteration off before the loop; at -O0
 * the loop's header block holds the whole body and then its exit test. */
#include <stdio.h>
#define N 126
static double a[N][N], b[N][N];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) a[i][j] = (i + j) % 7;
#pragma omp parallel for collapse(2)
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) b[i][j] = a[i][j] + 1.0;
    double s = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) s += b[i][j];
    printf("sum %.1f\n", s);
    return 0;
}
