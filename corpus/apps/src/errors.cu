// errors: the error paths a CUDA program meets, each printed by name.
//  * invalid launch configurations (cudaErrorInvalidValue since CUDA 13's
//    runtime launches through the driver; CUDA 12 said
//    cudaErrorInvalidConfiguration): cudaPeekAtLastError does not clear the
//    error, cudaGetLastError returns and clears it; more than 48 KiB of
//    dynamic shared memory needs the kernel's opt-in;
//  * cudaMemcpy with a null pointer, an oversized count and a bad direction;
//    cudaMemcpyToSymbol with something that is not a symbol;
//  * cudaFree of a host pointer, cudaFree(nullptr);
//  * cudaSetDevice / cudaGetDeviceProperties with a bad ordinal;
//  * an impossible cudaMalloc;
//  * cudaEventElapsedTime on unrecorded and on timing-disabled events;
//  * cudaFuncGetAttributes of a host function (an invalid handle to CUDA 13);
//  * cudaGetErrorName / cudaGetErrorString of several codes;
//  * last: a device-side assert on one thread: the launch succeeds,
//    cudaDeviceSynchronize returns cudaErrorAssert and the error is sticky.
#include "common.h"
#include <cassert>
#include <cstring>

__global__ void fill(int* d, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = v;
}

__global__ void assert_one(const int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // d[i] == i everywhere except at index 2*64+17, where it is -1.
  if (i < n) assert(d[i] >= 0);
}

static void host_only_function() {}

static int gNotASymbol = 0;

static void show(const char* what, cudaError_t got, cudaError_t want) {
  printf("%s: %s\n", what, cudaGetErrorName(got));
  if (got != want) FAIL("%s returned %s, expected %s", what, cudaGetErrorName(got), cudaGetErrorName(want));
}

int main() {
  printf("errors\n");
  show("cudaGetLastError at start", cudaGetLastError(), cudaSuccess);

  const int n = 256;
  int* d;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  CHECK(cudaMemset(d, 0, n * sizeof(int)));

  // ---- invalid launch configurations ----
  fill<<<1, 2048>>>(d, n, 7);
  show("launch with 2048 threads per block, cudaPeekAtLastError", cudaPeekAtLastError(), cudaErrorInvalidValue);
  show("cudaPeekAtLastError again", cudaPeekAtLastError(), cudaErrorInvalidValue);
  show("cudaGetLastError", cudaGetLastError(), cudaErrorInvalidValue);
  show("cudaGetLastError again", cudaGetLastError(), cudaSuccess);
  fill<<<0, 32>>>(d, n, 7);
  show("launch with an empty grid, cudaGetLastError", cudaGetLastError(), cudaErrorInvalidValue);
  fill<<<1, dim3(1, 1, 65)>>>(d, n, 7);
  show("launch with blockDim.z = 65, cudaGetLastError", cudaGetLastError(), cudaErrorInvalidValue);
  fill<<<1, 32, 64 << 10>>>(d, n, 7);
  show("launch with 64 KiB of dynamic shared memory, no opt-in", cudaGetLastError(), cudaErrorInvalidValue);
  show("cudaDeviceSynchronize after rejected launches", cudaDeviceSynchronize(), cudaSuccess);
  int h[n];
  CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (h[i] != 0) FAIL("a rejected launch ran: d[%d] = %d", i, h[i]);
  printf("rejected launches did not run\n");
  CHECK(cudaFuncSetAttribute(fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10));
  fill<<<1, 32, 64 << 10>>>(d, n, 0);
  show("the same launch after the opt-in", cudaGetLastError(), cudaSuccess);
  CHECK(cudaDeviceSynchronize());

  // ---- bad copies ----
  const size_t big = 1 << 20;
  char* hbig = (char*)calloc(big, 1);
  show("cudaMemcpy to a null device pointer", cudaMemcpy(nullptr, h, sizeof(h), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  show("cudaGetLastError after it", cudaGetLastError(), cudaErrorInvalidValue);
  show("cudaGetLastError again", cudaGetLastError(), cudaSuccess);
  show("cudaMemcpy past the end of an allocation", cudaMemcpy(d, hbig, big, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  show("cudaMemcpy with an invalid direction", cudaMemcpy(d, h, sizeof(h), (cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
  show("cudaMemcpyToSymbol of a host variable", cudaMemcpyToSymbol(gNotASymbol, h, sizeof(int)), cudaErrorInvalidSymbol);
  cudaGetLastError();

  // ---- bad frees ----
  show("cudaFree of a malloc'd host pointer", cudaFree(hbig), cudaErrorInvalidValue);
  show("cudaFree(nullptr)", cudaFree(nullptr), cudaSuccess);
  cudaGetLastError();

  // ---- bad device ordinals ----
  show("cudaSetDevice(99)", cudaSetDevice(99), cudaErrorInvalidDevice);
  show("cudaSetDevice(-1)", cudaSetDevice(-1), cudaErrorInvalidDevice);
  cudaDeviceProp prop;
  show("cudaGetDeviceProperties(99)", cudaGetDeviceProperties(&prop, 99), cudaErrorInvalidDevice);
  int dev = -1;
  CHECK(cudaGetDevice(&dev));
  printf("current device still %d\n", dev);
  cudaGetLastError();

  // ---- impossible allocation ----
  void* huge = nullptr;
  show("cudaMalloc of 2^50 bytes", cudaMalloc(&huge, (size_t)1 << 50), cudaErrorMemoryAllocation);
  show("cudaGetLastError after it", cudaGetLastError(), cudaErrorMemoryAllocation);

  // ---- events ----
  cudaEvent_t e1, e2, n1, n2;
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventCreate(&e2));
  float ms = 0;
  show("cudaEventElapsedTime on unrecorded events", cudaEventElapsedTime(&ms, e1, e2), cudaErrorInvalidResourceHandle);
  CHECK(cudaEventCreateWithFlags(&n1, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&n2, cudaEventDisableTiming));
  CHECK(cudaEventRecord(n1, 0));
  CHECK(cudaEventRecord(n2, 0));
  CHECK(cudaEventSynchronize(n2));
  show("cudaEventElapsedTime on timing-disabled events", cudaEventElapsedTime(&ms, n1, n2), cudaErrorInvalidResourceHandle);
  cudaGetLastError();

  // ---- not a kernel ----
  cudaFuncAttributes fa;
  show("cudaFuncGetAttributes of a host function", cudaFuncGetAttributes(&fa, (const void*)host_only_function),
       cudaErrorInvalidResourceHandle);
  cudaGetLastError();

  // ---- error names and strings ----
  const cudaError_t codes[] = {cudaSuccess,
                               cudaErrorInvalidValue,
                               cudaErrorMemoryAllocation,
                               cudaErrorInvalidConfiguration,
                               cudaErrorInvalidSymbol,
                               cudaErrorInvalidMemcpyDirection,
                               cudaErrorInvalidDeviceFunction,
                               cudaErrorNoKernelImageForDevice,
                               cudaErrorInvalidDevice,
                               cudaErrorInvalidResourceHandle,
                               cudaErrorNotReady,
                               cudaErrorIllegalAddress,
                               cudaErrorAssert,
                               cudaErrorLaunchFailure,
                               (cudaError_t)12345};
  for (cudaError_t c : codes) printf("  %d %s: %s\n", (int)c, cudaGetErrorName(c), cudaGetErrorString(c));

  // ---- the device still works after all the non-sticky errors ----
  show("cudaGetLastError before the good launch", cudaGetLastError(), cudaSuccess);
  fill<<<(n + 63) / 64, 64>>>(d, n, 5);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (h[i] != 5) FAIL("good launch: d[%d] = %d, expected 5", i, h[i]);
  printf("device still usable after non-sticky errors\n");

  // ---- device-side assert: sticky ----
  for (int i = 0; i < n; i++) h[i] = (i == 2 * 64 + 17) ? -1 : i;
  CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
  assert_one<<<4, 64>>>(d, n);
  show("assert kernel launch, cudaGetLastError", cudaGetLastError(), cudaSuccess);
  show("cudaDeviceSynchronize after the assert", cudaDeviceSynchronize(), cudaErrorAssert);
  void* after = nullptr;
  show("cudaMalloc after the assert", cudaMalloc(&after, 64), cudaErrorAssert);
  show("cudaMemcpy after the assert", cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost), cudaErrorAssert);
  show("cudaDeviceSynchronize again", cudaDeviceSynchronize(), cudaErrorAssert);
  free(hbig);
  printf("PASSED\n");
  return 0;
}
