// launch_overhead: the cost of launching an empty kernel through the CUDA runtime, the figure of Ocelot's
// Table II. Launches an empty kernel N times (argv[1], default 2000), each followed by
// cudaDeviceSynchronize, and times each launch-and-synchronize pair on the host. Standard output stays
// deterministic (the test compares it); the timings go to standard error as one line:
//   launch_overhead_us median=M p10=A p90=B mean=C n=N
#include "common.h"
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  if (n <= 0) n = 2000;
  // The first launch loads and compiles the kernel: not part of the overhead.
  empty_kernel<<<1, 1>>>();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<double> us(n);
  for (int i = 0; i < n; i++) {
    auto t0 = std::chrono::steady_clock::now();
    empty_kernel<<<1, 1>>>();
    CHECK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    us[i] = std::chrono::duration<double, std::micro>(t1 - t0).count();
  }
  CHECK(cudaGetLastError());
  double mean = 0;
  for (double u : us) mean += u;
  mean /= n;
  std::sort(us.begin(), us.end());
  fprintf(stderr, "launch_overhead_us median=%.2f p10=%.2f p90=%.2f mean=%.2f n=%d\n", us[n / 2], us[n / 10],
          us[n * 9 / 10], mean, n);
  printf("launched an empty kernel %d times\nPASSED\n", n + 1);
  return 0;
}
