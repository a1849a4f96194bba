// managed: unified and pinned host memory.
//  * cudaMallocManaged arrays written on the host, used by kernels, read back
//    after cudaDeviceSynchronize;
//  * __managed__ variables read and written from both sides;
//  * cudaMallocHost / cudaHostAlloc pinned buffers with cudaMemcpyAsync;
//  * cudaHostRegister of a malloc'd buffer;
//  * mapped (zero-copy) host memory through cudaHostGetDevicePointer;
//  * cudaPointerGetAttributes on device, pinned, registered, managed and plain
//    host pointers.
#include "common.h"

__managed__ int gScale = 3;
__managed__ unsigned int gCounter = 0;

__global__ void scale_managed(const int* x, int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = x[i] * gScale + 1;
    atomicAdd(&gCounter, 1u);
  }
}

__global__ void accumulate(int* x, const int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

__global__ void affine(int* d, int n, int mul, int add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * mul + add;
}

__global__ void write_squares(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * i;
}

static const char* memtype_name(cudaMemoryType t) {
  switch (t) {
    case cudaMemoryTypeUnregistered: return "cudaMemoryTypeUnregistered";
    case cudaMemoryTypeHost: return "cudaMemoryTypeHost";
    case cudaMemoryTypeDevice: return "cudaMemoryTypeDevice";
    case cudaMemoryTypeManaged: return "cudaMemoryTypeManaged";
  }
  return "unknown";
}

static void print_attr(const char* what, const void* p) {
  cudaPointerAttributes a;
  CHECK(cudaPointerGetAttributes(&a, p));
  printf("cudaPointerGetAttributes(%s): %s\n", what, memtype_name(a.type));
}

int main() {
  const int n = 4096;
  const size_t bytes = n * sizeof(int);
  const int block = 128, grid = (n + block - 1) / block;
  printf("managed: n=%d\n", n);

  // ---- cudaMallocManaged + __managed__ ----
  int *x, *y;
  CHECK(cudaMallocManaged(&x, bytes));
  CHECK(cudaMallocManaged(&y, bytes, cudaMemAttachGlobal));
  for (int i = 0; i < n; i++) {
    x[i] = i - 100;
    y[i] = -1;
  }
  if (gScale != 3) FAIL("__managed__ gScale initial value %d, expected 3", gScale);
  printf("__managed__ initial value %d\n", gScale);
  gScale = 5;
  gCounter = 0;
  scale_managed<<<grid, block>>>(x, y, n);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; i++)
    if (y[i] != (i - 100) * 5 + 1) FAIL("y[%d] = %d, expected %d", i, y[i], (i - 100) * 5 + 1);
  if (gCounter != (unsigned)n) FAIL("__managed__ gCounter = %u, expected %d", gCounter, n);
  accumulate<<<grid, block>>>(x, y, n);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  long long sum = 0;
  for (int i = 0; i < n; i++) {
    int want = (i - 100) + (i - 100) * 5 + 1;
    if (x[i] != want) FAIL("x[%d] = %d after accumulate, expected %d", i, x[i], want);
    sum += x[i];
  }
  printf("managed arrays ok, checksum %lld\n", sum);
  printf("__managed__ counter %u\n", gCounter);

  // ---- pinned memory: cudaMallocHost and cudaHostAlloc with async copies ----
  int *hp, *hq, *d;
  CHECK(cudaMallocHost(&hp, bytes));
  CHECK(cudaHostAlloc(&hq, bytes, cudaHostAllocDefault));
  CHECK(cudaMalloc(&d, bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  for (int i = 0; i < n; i++) {
    hp[i] = 7 * i;
    hq[i] = 0;
  }
  CHECK(cudaMemcpyAsync(d, hp, bytes, cudaMemcpyHostToDevice, s));
  affine<<<grid, block, 0, s>>>(d, n, 2, 3);
  CHECK_LAUNCH();
  CHECK(cudaMemcpyAsync(hq, d, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < n; i++)
    if (hq[i] != 14 * i + 3) FAIL("pinned hq[%d] = %d, expected %d", i, hq[i], 14 * i + 3);
  printf("pinned cudaMallocHost/cudaHostAlloc async copies ok\n");

  // ---- cudaHostRegister of a malloc'd buffer ----
  int* reg = (int*)malloc(bytes);
  for (int i = 0; i < n; i++) reg[i] = n - i;
  CHECK(cudaHostRegister(reg, bytes, cudaHostRegisterDefault));
  CHECK(cudaMemcpyAsync(d, reg, bytes, cudaMemcpyHostToDevice, s));
  affine<<<grid, block, 0, s>>>(d, n, -1, 10);
  CHECK_LAUNCH();
  CHECK(cudaMemcpyAsync(reg, d, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < n; i++)
    if (reg[i] != 10 - (n - i)) FAIL("registered reg[%d] = %d, expected %d", i, reg[i], 10 - (n - i));
  printf("cudaHostRegister copies ok\n");

  // ---- mapped (zero-copy) host memory ----
  int* hm;
  int* dm = nullptr;
  CHECK(cudaHostAlloc(&hm, bytes, cudaHostAllocMapped));
  for (int i = 0; i < n; i++) hm[i] = -1;
  CHECK(cudaHostGetDevicePointer((void**)&dm, hm, 0));
  write_squares<<<grid, block>>>(dm, n);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; i++)
    if (hm[i] != i * i) FAIL("mapped hm[%d] = %d, expected %d", i, hm[i], i * i);
  printf("mapped host memory ok\n");

  // ---- cudaPointerGetAttributes ----
  int* plain = (int*)malloc(bytes);
  print_attr("cudaMalloc", d);
  print_attr("cudaMallocHost", hp);
  print_attr("cudaHostAlloc", hq);
  print_attr("cudaHostRegister", reg);
  print_attr("cudaMallocManaged", x);
  print_attr("malloc", plain);
  cudaPointerAttributes a;
  CHECK(cudaPointerGetAttributes(&a, d));
  if (a.device != 0) FAIL("device pointer attribute device = %d, expected 0", a.device);
  if (a.devicePointer != (void*)d) FAIL("device pointer attribute devicePointer differs from the pointer");
  CHECK(cudaPointerGetAttributes(&a, hp));
  if (a.hostPointer != (void*)hp) FAIL("pinned pointer attribute hostPointer differs from the pointer");
  CHECK(cudaPointerGetAttributes(&a, x + 10));  // interior pointer of a managed allocation
  if (a.type != cudaMemoryTypeManaged) FAIL("interior managed pointer type %s", memtype_name(a.type));
  printf("pointer attribute fields ok\n");

  CHECK(cudaHostUnregister(reg));
  free(reg);
  free(plain);
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFreeHost(hp));
  CHECK(cudaFreeHost(hq));
  CHECK(cudaFreeHost(hm));
  CHECK(cudaFree(d));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  printf("PASSED\n");
  return 0;
}
