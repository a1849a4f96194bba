// streams_events: streams, events and host callbacks.
//  * cudaStreamCreateWithFlags (non-blocking), cudaStreamCreateWithPriority,
//    cudaDeviceGetStreamPriorityRange, cudaStreamGetPriority/GetFlags;
//  * cudaMemcpyAsync + kernels on several streams at once;
//  * events: cudaEventRecord/Synchronize/Query/ElapsedTime, cudaStreamWaitEvent
//    ordering a consumer on one stream after a producer on another;
//  * cudaLaunchHostFunc and cudaStreamAddCallback, recorded in order;
//  * cudaStreamQuery, the legacy default stream (0) and cudaStreamPerThread.
#include "common.h"
#include <cstring>

__global__ void affine(int* d, int n, int mul, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * mul + add;
}

__device__ __host__ unsigned mix(unsigned v, int iters) {
  for (int k = 0; k < iters; k++) v = v * 1103515245u + 12345u;
  return v;
}

// Deliberately does some work, so that a consumer that failed to wait for it
// would be likely to read stale data on a real GPU.
__global__ void producer(unsigned* x, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = mix((unsigned)i, iters);
}

__global__ void consumer(const unsigned* x, unsigned* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] ^ 0x5555u;
}

// ---- host callbacks: each appends an entry to a log ----
struct CallbackLog {
  int count = 0;
  char entry[8][48];
  const int* out1 = nullptr;  // pinned buffers filled by preceding copies
  const int* out2 = nullptr;
  int n = 0;
  int status = -1;
};

static void CUDART_CB host_fn_a(void* user) {
  CallbackLog* log = (CallbackLog*)user;
  snprintf(log->entry[log->count++], 48, "A(%d,%d)", log->out1[0], log->out1[log->n - 1]);
}

static void CUDART_CB stream_cb_b(cudaStream_t, cudaError_t status, void* user) {
  CallbackLog* log = (CallbackLog*)user;
  log->status = (int)status;  // no CUDA calls allowed in a callback: name it later
  snprintf(log->entry[log->count++], 48, "B(%d)", log->out2[0]);
}

static void CUDART_CB host_fn_c(void* user) {
  CallbackLog* log = (CallbackLog*)user;
  snprintf(log->entry[log->count++], 48, "C");
}

int main() {
  const int nstreams = 4, chunk = 8192, n = nstreams * chunk;
  const int block = 256;
  const int cgrid = (chunk + block - 1) / block;
  printf("streams_events: %d streams x %d elements\n", nstreams, chunk);

  // ---- stream creation ----
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  if (greatest > least) FAIL("priority range: greatest %d > least %d", greatest, least);
  cudaStream_t s[nstreams];
  CHECK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithPriority(&s[1], cudaStreamDefault, greatest));
  CHECK(cudaStreamCreate(&s[2]));
  CHECK(cudaStreamCreateWithPriority(&s[3], cudaStreamNonBlocking, least));
  unsigned flags = 99;
  CHECK(cudaStreamGetFlags(s[0], &flags));
  if (flags != cudaStreamNonBlocking) FAIL("stream 0 flags %u, expected cudaStreamNonBlocking", flags);
  CHECK(cudaStreamGetFlags(s[2], &flags));
  if (flags != cudaStreamDefault) FAIL("stream 2 flags %u, expected cudaStreamDefault", flags);
  int prio = 12345;
  CHECK(cudaStreamGetPriority(s[1], &prio));
  if (prio != greatest) FAIL("stream 1 priority %d, expected greatest %d", prio, greatest);
  CHECK(cudaStreamGetPriority(s[3], &prio));
  if (prio != least) FAIL("stream 3 priority %d, expected least %d", prio, least);
  printf("stream flags and priorities ok\n");

  // ---- per-stream copies and kernels, timed with events on stream 0 ----
  int *hin, *hout, *d;
  CHECK(cudaMallocHost(&hin, n * sizeof(int)));
  CHECK(cudaMallocHost(&hout, n * sizeof(int)));
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  for (int i = 0; i < n; i++) {
    hin[i] = i;
    hout[i] = 0;
  }
  cudaEvent_t start, stop, never;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
  CHECK(cudaEventCreate(&never));
  CHECK(cudaEventRecord(start, s[0]));
  for (int k = 0; k < nstreams; k++) {
    int off = k * chunk;
    CHECK(cudaMemcpyAsync(d + off, hin + off, chunk * sizeof(int), cudaMemcpyHostToDevice, s[k]));
    affine<<<cgrid, block, 0, s[k]>>>(d + off, chunk, k + 2, k);
    CHECK_LAUNCH();
    CHECK(cudaMemcpyAsync(hout + off, d + off, chunk * sizeof(int), cudaMemcpyDeviceToHost, s[k]));
  }
  CHECK(cudaEventRecord(stop, s[0]));
  for (int k = 0; k < nstreams; k++) CHECK(cudaStreamSynchronize(s[k]));
  for (int k = 0; k < nstreams; k++)
    for (int j = 0; j < chunk; j++) {
      int i = k * chunk + j;
      if (hout[i] != i * (k + 2) + k) FAIL("stream %d: out[%d] = %d, expected %d", k, i, hout[i], i * (k + 2) + k);
    }
  printf("per-stream copies and kernels ok\n");

  CHECK(cudaEventSynchronize(stop));
  cudaError_t q = cudaEventQuery(stop);
  printf("cudaEventQuery(recorded, synchronized): %s\n", cudaGetErrorName(q));
  q = cudaEventQuery(never);
  printf("cudaEventQuery(never recorded): %s\n", cudaGetErrorName(q));
  float ms = -1.0f;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  if (!(ms >= 0.0f)) FAIL("cudaEventElapsedTime gave %f", ms);
  printf("cudaEventElapsedTime >= 0: yes\n");

  // ---- cross-stream dependency through cudaStreamWaitEvent ----
  const int iters = 16;
  unsigned *dx, *dy;
  CHECK(cudaMalloc(&dx, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&dy, n * sizeof(unsigned)));
  CHECK(cudaMemsetAsync(dx, 0, n * sizeof(unsigned), s[0]));
  cudaEvent_t produced;
  CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
  producer<<<(n + block - 1) / block, block, 0, s[0]>>>(dx, n, iters);
  CHECK_LAUNCH();
  CHECK(cudaEventRecord(produced, s[0]));
  CHECK(cudaStreamWaitEvent(s[3], produced, 0));
  consumer<<<(n + block - 1) / block, block, 0, s[3]>>>(dx, dy, n);
  CHECK_LAUNCH();
  unsigned* hy = (unsigned*)hout;  // reuse the pinned buffer
  CHECK(cudaMemcpyAsync(hy, dy, n * sizeof(unsigned), cudaMemcpyDeviceToHost, s[3]));
  CHECK(cudaStreamSynchronize(s[3]));
  for (int i = 0; i < n; i++) {
    unsigned want = mix((unsigned)i, iters) ^ 0x5555u;
    if (hy[i] != want) FAIL("cross-stream y[%d] = %u, expected %u", i, hy[i], want);
  }
  printf("cudaStreamWaitEvent cross-stream ordering ok\n");

  // ---- host functions and stream callbacks, in stream order ----
  const int m = 8192;
  int *p1, *p2, *dm;
  CHECK(cudaMallocHost(&p1, m * sizeof(int)));
  CHECK(cudaMallocHost(&p2, m * sizeof(int)));
  CHECK(cudaMalloc(&dm, m * sizeof(int)));
  memset(p1, 0, m * sizeof(int));
  memset(p2, 0, m * sizeof(int));
  for (int i = 0; i < m; i++) hin[i] = i;
  CallbackLog log;
  log.out1 = p1;
  log.out2 = p2;
  log.n = m;
  cudaStream_t cs = s[2];
  CHECK(cudaMemcpyAsync(dm, hin, m * sizeof(int), cudaMemcpyHostToDevice, cs));
  affine<<<(m + block - 1) / block, block, 0, cs>>>(dm, m, 3, 5);
  CHECK_LAUNCH();
  CHECK(cudaMemcpyAsync(p1, dm, m * sizeof(int), cudaMemcpyDeviceToHost, cs));
  CHECK(cudaLaunchHostFunc(cs, host_fn_a, &log));
  affine<<<(m + block - 1) / block, block, 0, cs>>>(dm, m, 3, 1);
  CHECK_LAUNCH();
  CHECK(cudaMemcpyAsync(p2, dm, m * sizeof(int), cudaMemcpyDeviceToHost, cs));
  CHECK(cudaStreamAddCallback(cs, stream_cb_b, &log, 0));
  CHECK(cudaLaunchHostFunc(cs, host_fn_c, &log));
  CHECK(cudaStreamSynchronize(cs));
  printf("host callbacks:");
  for (int i = 0; i < log.count; i++) printf(" %s", log.entry[i]);
  printf("\n");
  printf("stream callback status: %s\n", cudaGetErrorName((cudaError_t)log.status));

  for (int k = 0; k < nstreams; k++) {
    q = cudaStreamQuery(s[k]);
    if (q != cudaSuccess) FAIL("cudaStreamQuery(s[%d]) after synchronize: %s", k, cudaGetErrorName(q));
  }
  printf("cudaStreamQuery after synchronize: cudaSuccess\n");

  // ---- legacy default stream: implicitly ordered after blocking streams ----
  CHECK(cudaMemset(dx, 0, n * sizeof(unsigned)));
  producer<<<(n + block - 1) / block, block, 0, s[2]>>>(dx, n, iters);  // s[2] is blocking
  CHECK_LAUNCH();
  consumer<<<(n + block - 1) / block, block>>>(dx, dy, n);  // stream 0
  CHECK_LAUNCH();
  cudaEvent_t legacy_done;
  CHECK(cudaEventCreate(&legacy_done));
  CHECK(cudaEventRecord(legacy_done, 0));
  CHECK(cudaEventSynchronize(legacy_done));
  CHECK(cudaMemcpy(hy, dy, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    unsigned want = mix((unsigned)i, iters) ^ 0x5555u;
    if (hy[i] != want) FAIL("legacy stream y[%d] = %u, expected %u", i, hy[i], want);
  }
  CHECK(cudaStreamSynchronize(0));
  printf("legacy default stream ok\n");

  // ---- per-thread default stream ----
  for (int i = 0; i < m; i++) hin[i] = 2 * i;
  CHECK(cudaMemcpyAsync(dm, hin, m * sizeof(int), cudaMemcpyHostToDevice, cudaStreamPerThread));
  affine<<<(m + block - 1) / block, block, 0, cudaStreamPerThread>>>(dm, m, 5, -7);
  CHECK_LAUNCH();
  CHECK(cudaMemcpyAsync(p1, dm, m * sizeof(int), cudaMemcpyDeviceToHost, cudaStreamPerThread));
  CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  for (int i = 0; i < m; i++)
    if (p1[i] != 10 * i - 7) FAIL("per-thread stream out[%d] = %d, expected %d", i, p1[i], 10 * i - 7);
  q = cudaStreamQuery(cudaStreamPerThread);
  printf("per-thread default stream ok, cudaStreamQuery: %s\n", cudaGetErrorName(q));

  CHECK(cudaDeviceSynchronize());
  for (int k = 0; k < nstreams; k++) CHECK(cudaStreamDestroy(s[k]));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaEventDestroy(never));
  CHECK(cudaEventDestroy(produced));
  CHECK(cudaEventDestroy(legacy_done));
  CHECK(cudaFreeHost(hin));
  CHECK(cudaFreeHost(hout));
  CHECK(cudaFreeHost(p1));
  CHECK(cudaFreeHost(p2));
  CHECK(cudaFree(d));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  CHECK(cudaFree(dm));
  printf("PASSED\n");
  return 0;
}
