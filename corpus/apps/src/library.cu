// The runtime's library management (CUDA 12): PTX given as data to cudaLibraryLoadData, its kernel found
// by cudaLibraryGetKernel and launched through cudaLaunchKernel with the cudaKernel_t, a global variable
// read through cudaLibraryGetGlobal, the kernels counted and enumerated, an attribute set with
// cudaKernelSetAttributeForDevice, and the errors for a missing kernel and an unloaded library.
#include "common.h"

#include <cstring>

static const char *kPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .global .align 4 .u32 step = 7;

.visible .entry add_step(.param .u64 p, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<9>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r6, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r6, %r2;
  @%p1 bra DONE;
  ld.global.u32 %r1, [step];
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r6, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r7, [%rd4];
  add.s32 %r8, %r7, %r1;
  st.global.u32 [%rd4], %r8;
DONE:
  ret;
}

.visible .entry nothing()
{
  ret;
}
)";

int main() {
  cudaLibrary_t lib;
  CHECK(cudaLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  unsigned int count = 0;
  CHECK(cudaLibraryGetKernelCount(&count, lib));
  cudaKernel_t kernels[4];
  CHECK(cudaLibraryEnumerateKernels(kernels, count, lib));
  printf("kernels in the library: %u\n", count);
  cudaKernel_t add_step;
  CHECK(cudaLibraryGetKernel(&add_step, lib, "add_step"));
  int *step_ptr;
  size_t step_size = 0;
  CHECK(cudaLibraryGetGlobal((void **)&step_ptr, &step_size, lib, "step"));
  int step = 0;
  CHECK(cudaMemcpy(&step, step_ptr, sizeof step, cudaMemcpyDeviceToHost));
  printf("global step: %d (%zu bytes)\n", step, step_size);
  CHECK(cudaKernelSetAttributeForDevice(add_step, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024, 0));

  const int n = 1000;
  int *d;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  CHECK(cudaMemset(d, 0, n * sizeof(int)));
  int nn = n;
  void *args[] = {&d, &nn};
  CHECK(cudaLaunchKernel((const void *)add_step, dim3((n + 127) / 128), dim3(128), args, 0, 0));
  CHECK(cudaLaunchKernel((const void *)add_step, dim3((n + 127) / 128), dim3(128), args, 0, 0));
  static int h[n];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += h[i] != 2 * step;
  printf("two launches of the library kernel: %d wrong\n", wrong);
  if (wrong) FAIL("library kernel\n");

  cudaKernel_t missing;
  cudaError_t e = cudaLibraryGetKernel(&missing, lib, "no_such_kernel");
  printf("a missing kernel: %s\n", cudaGetErrorName(e));
  if (e == cudaSuccess) FAIL("a missing kernel was found\n");
  cudaGetLastError();
  CHECK(cudaLibraryUnload(lib));
  e = cudaLibraryGetKernel(&missing, lib, "add_step");
  printf("after unloading: %s\n", cudaGetErrorName(e));
  if (e == cudaSuccess) FAIL("an unloaded library answered\n");
  cudaGetLastError();
  CHECK(cudaFree(d));
  printf("library: ok\n");
  return 0;
}
