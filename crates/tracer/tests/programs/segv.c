/* Does some work, then dereferences NULL. */
#include <stdio.h>
#include "work.h"

int main(void) {
    long r = work(5000);
    printf("before %ld\n", r);
    fflush(stdout);
    *(volatile int *)0 = 1;
    return 0;
}
