// cudaFuncGetParamCount and cudaFuncGetParamInfo: a kernel's parameters in the
// device-side layout (each at its alignment), and the errors for an index past
// the last parameter and for a pointer that is not a kernel.
#include "common.h"

struct Triple {
  int a, b, c;
};

__global__ void mixed(int n, double scale, Triple t, float *out, char tag) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (float)(scale * (t.a + t.b + t.c)) + tag;
}

static void host_function() {}

int main() {
  size_t count = 0;
  CHECK(cudaFuncGetParamCount((const void *)mixed, &count));
  printf("mixed: %zu parameters\n", count);
  for (size_t i = 0; i < count; ++i) {
    size_t offset = 0, size = 0;
    CHECK(cudaFuncGetParamInfo((const void *)mixed, i, &offset, &size));
    printf("  parameter %zu: offset %zu, size %zu\n", i, offset, size);
  }
  size_t offset = 0;
  CHECK(cudaFuncGetParamInfo((const void *)mixed, 2, &offset, NULL));
  if (offset != 16) FAIL("offset of parameter 2 is %zu", offset);
  EXPECT_ERR(cudaFuncGetParamInfo((const void *)mixed, count, &offset, NULL), cudaErrorInvalidValue);
  EXPECT_ERR(cudaFuncGetParamCount((const void *)host_function, &count), cudaErrorInvalidDeviceFunction);
  cudaGetLastError();

  // The layout is the one launches use.
  float *out;
  CHECK(cudaMalloc(&out, 4 * sizeof(float)));
  mixed<<<1, 4>>>(4, 0.5, Triple{1, 2, 3}, out, 1);
  CHECK_LAUNCH();
  float h[4];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  if (h[3] != 4.0f) FAIL("out[3] = %f", h[3]);
  CHECK(cudaFree(out));
  printf("PASSED\n");
  return 0;
}
