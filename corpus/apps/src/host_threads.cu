// host_threads: four std::threads share the device. Each creates its own
// stream, allocations (device and pinned host) and launches several kernels,
// then checks its own result. Thread 2 uses cudaStreamPerThread instead of a
// created stream. Thread 3 also makes an invalid launch: the error is
// per-thread state, seen by thread 3's cudaGetLastError only. The main thread
// joins all and prints the per-thread results in a fixed order.
#include "common.h"
#include <thread>
#include <vector>

__global__ void step(int* d, int n, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * 2 + add;
}

struct Result {
  bool ok = false;
  int n = 0;
  int launches = 0;
  long long checksum = 0;
  cudaError_t own_error = cudaSuccess;    // thread 3: from its invalid launch
  cudaError_t last_error = cudaErrorUnknown;  // cudaGetLastError at the end
  char msg[160] = {0};
};

static void worker(int t, Result* r) {
  const int n = 4096 + 1024 * t;
  r->n = n;
  CHECK(cudaSetDevice(0));
  cudaStream_t s = cudaStreamPerThread;
  if (t != 2) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int *h, *d;
  CHECK(cudaMallocHost(&h, n * sizeof(int)));
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  for (int i = 0; i < n; i++) h[i] = (i % 1000) - 500 + t;
  CHECK(cudaMemcpyAsync(d, h, n * sizeof(int), cudaMemcpyHostToDevice, s));
  const int reps = 3;
  for (int rep = 0; rep < reps; rep++) {
    step<<<(n + 127) / 128, 128, 0, s>>>(d, n, rep + t);
    CHECK_LAUNCH();
    r->launches++;
  }
  if (t == 3) {
    step<<<1, 2048, 0, s>>>(d, n, 1000);  // rejected: must not run
    r->own_error = cudaGetLastError();
  }
  CHECK(cudaMemcpyAsync(h, d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  r->ok = true;
  for (int i = 0; i < n; i++) {
    int v = (i % 1000) - 500 + t;
    for (int rep = 0; rep < reps; rep++) v = v * 2 + rep + t;
    if (h[i] != v) {
      snprintf(r->msg, sizeof(r->msg), "thread %d: d[%d] = %d, expected %d", t, i, h[i], v);
      r->ok = false;
      break;
    }
    r->checksum += h[i];
  }
  r->last_error = cudaGetLastError();
  CHECK(cudaFree(d));
  CHECK(cudaFreeHost(h));
  if (t != 2) CHECK(cudaStreamDestroy(s));
}

int main() {
  const int nthreads = 4;
  printf("host_threads: %d threads\n", nthreads);
  CHECK(cudaFree(nullptr));  // initialise the runtime before the threads start
  std::vector<Result> results(nthreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; t++) threads.emplace_back(worker, t, &results[t]);
  for (auto& th : threads) th.join();
  bool all_ok = true;
  for (int t = 0; t < nthreads; t++) {
    const Result& r = results[t];
    if (!r.ok) {
      printf("%s\n", r.msg);
      all_ok = false;
      continue;
    }
    printf("thread %d: n=%d, %d launches, checksum %lld, cudaGetLastError at the end: %s\n", t, r.n, r.launches,
           r.checksum, cudaGetErrorName(r.last_error));
    if (r.last_error != cudaSuccess) all_ok = false;
  }
  printf("thread 3's invalid launch, its own cudaGetLastError: %s\n", cudaGetErrorName(results[3].own_error));
  if (results[3].own_error != cudaErrorInvalidValue) all_ok = false;
  cudaError_t mine = cudaGetLastError();
  printf("main thread cudaGetLastError: %s\n", cudaGetErrorName(mine));
  if (mine != cudaSuccess || !all_ok) FAIL("a thread failed");
  printf("PASSED\n");
  return 0;
}
