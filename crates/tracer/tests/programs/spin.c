/* Prints its pid (under qemu-x86_64: QEMU's), then runs forever until killed. */
#include <stdio.h>
#include <unistd.h>
#include "work.h"

int main(void) {
    printf("%d\n", (int)getpid());
    fflush(stdout);
    for (;;) work(1000);
}
