// printf: device-side printf. Conversions %d %i %u %x %X %o %c %s %f %e %g
// and %%, widths, precisions and flags, long long / long, strings from
// literals and from global memory. Output is deterministic: one printing
// thread per launch, or threads that take turns separated by __syncthreads.
// Host printf lines are interleaved before launches and after
// cudaDeviceSynchronize (where the device buffer is flushed), so the whole
// stdout comes out in program order.
#include "common.h"

__device__ char gMessage[32];

__global__ void hello(int launch) {
  if (threadIdx.x == 0 && blockIdx.x == 0) printf("device: hello from launch %d\n", launch);
}

__global__ void formats(int neg, unsigned big, float f, double third, long long ll, const char* gstr) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  printf("int: %d %i %u %x %X %o\n", neg, -neg, big, 255, 255, 8);
  printf("width: [%5d] [%-5d] [%05d] [%+d] [% d] [%3d]\n", 42, 42, 42, 42, 42, 123456);
  printf("hex: [%#x] [%08x] [%-6X]\n", 48879, 0xbeef, 0xab);
  printf("char/string: %c%c%c [%s] [%8s] [%-8s] [%.3s]\n", 'C', 'U', 'D', "lockstep", "sim", "sim", "truncate");
  printf("global string: [%s]\n", gstr);
  printf("float: %f %.2f %10.4f %-8.1f|\n", f, 2.5, third, 7.25);
  printf("exp: %e %.3e %E\n", 12345.678, 0.000123, -6.02e23);
  printf("general: %g %g %g %g %.3g\n", 100000.0, 1e-5, 0.1, 1234567.0, 3.14159);
  printf("long: %lld %llu %llx %ld\n", ll, 18000000000000000000ULL, 0x123456789abcULL, -5L);
  printf("math: sqrt(2) = %.6f, 1/3 = %.10f\n", sqrt(2.0), third);
  printf("percent: 100%%\n");
  printf("many: %d %d %d %d %d %d %d %d %d %d %d %d\n", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
}

__global__ void loop_print(int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0)
    for (int i = 0; i < n; i++) printf("loop: i=%d sq=%d\n", i, i * i);
}

// Threads take turns: one prints, then everyone waits at the barrier.
__global__ void turns(int rounds) {
  for (int t = 0; t < rounds; t++) {
    if (threadIdx.x == t * 16) printf("turn %d: thread %d of %d\n", t, threadIdx.x, blockDim.x);
    __syncthreads();
  }
}

int main() {
  printf("host: before the first launch\n");
  hello<<<1, 32>>>(0);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  printf("host: after the first synchronize\n");

  const char msg[] = "from global memory";
  char* dmsg;
  CHECK(cudaGetSymbolAddress((void**)&dmsg, gMessage));
  CHECK(cudaMemcpy(dmsg, msg, sizeof(msg), cudaMemcpyHostToDevice));
  formats<<<2, 64>>>(-42, 3000000000u, 3.14159f, 1.0 / 3.0, -9000000000LL, dmsg);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  printf("host: formats done\n");

  // Several launches queued before one synchronize: printed in launch order.
  for (int l = 1; l <= 3; l++) {
    hello<<<1, 1>>>(l);
    CHECK_LAUNCH();
  }
  loop_print<<<1, 1>>>(4);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  printf("host: queued launches done\n");

  turns<<<1, 64>>>(4);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  printf("host: turns done\n");
  printf("PASSED\n");
  return 0;
}
