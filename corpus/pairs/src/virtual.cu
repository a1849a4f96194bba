// virtual (CUDA side): virtual-call dispatch. A setup kernel (not measured:
// pairs.toml counts only measure_all) constructs every object on the device,
// so the vtable pointers are the device's; measure_all then makes one
// virtual call per thread: out[i] = objs[i]->measure(). With mixed kinds the
// lanes of a warp call up to four different functions.
// CPU side: virtual.cpp.
#include "virtual.h"

static_assert(sizeof(Circle) <= SLOT_BYTES && sizeof(Rect) <= SLOT_BYTES && sizeof(Triangle) <= SLOT_BYTES &&
                  sizeof(Polygon) <= SLOT_BYTES,
              "objects fit their slots");

__global__ void construct(char *slots, Shape **objs, const int *kind, const float *p, const float *q,
                          const float *s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) objs[i] = shape_make(slots + (size_t)i * SLOT_BYTES, kind[i], p[i], q[i], s[i]);
}

__global__ void measure_all(Shape *const *objs, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = objs[i]->measure();
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 16384);
  const int mode = argc > 2 && argv[2][0] == '1' ? 1 : 0;
  const int block = 256;
  int *kind = (int *)malloc(n * sizeof(int));
  float *p = (float *)malloc(n * sizeof(float)), *q = (float *)malloc(n * sizeof(float));
  float *s = (float *)malloc(n * sizeof(float)), *out = (float *)malloc(n * sizeof(float));
  shape_inputs(kind, p, q, s, n, mode);
  char *slots;
  Shape **objs;
  int *dkind;
  float *dp, *dq, *ds, *dout;
  CHECK(cudaMalloc(&slots, (size_t)n * SLOT_BYTES));
  CHECK(cudaMalloc(&objs, n * sizeof(Shape *)));
  CHECK(cudaMalloc(&dkind, n * sizeof(int)));
  CHECK(cudaMalloc(&dp, n * sizeof(float)));
  CHECK(cudaMalloc(&dq, n * sizeof(float)));
  CHECK(cudaMalloc(&ds, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMemcpy(dkind, kind, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dp, p, n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dq, q, n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ds, s, n * sizeof(float), cudaMemcpyHostToDevice));
  construct<<<(n + block - 1) / block, block>>>(slots, objs, dkind, dp, dq, ds, n);
  CHECK_LAUNCH();
  measure_all<<<(n + block - 1) / block, block>>>(objs, dout, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  return shape_report(kind, p, q, s, out, n, mode);
}
