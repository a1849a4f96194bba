// rdc, util.cu: defines the __device__ function and the __device__ variables
// that the kernels in kernels.cu and main.cu use across translation units
// (separate compilation, -rdc=true, resolved by the device link).
#include "rdc.h"

__device__ int g_bias = 7;
__device__ unsigned int g_calls = 0;

__device__ __noinline__ int combine(int a, int b) {
  atomicAdd(&g_calls, 1u);
  return a * 3 + b + g_bias;
}
