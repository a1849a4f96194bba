// Batched copies (CUDA 12.8+): cudaMemcpyBatchAsync with three independent copies (device to device, device
// to host, host to device: copies of one batch may run in any order) under two attributes, cudaMemcpyWithAttributesAsync, and the documented refusals: the
// legacy stream, no attributes, attribute indices that do not start at 0, an invalid source access order.
#include "common.h"

#include <cstring>

constexpr int N = 1000;

static void expect_error(cudaError_t got, cudaError_t want, const char *what) {
  printf("%s: %s\n", what, cudaGetErrorName(got));
  if (got != want) FAIL("%s: expected %s\n", what, cudaGetErrorName(want));
}

int main() {
  static int host_in[N], host_out[N];
  for (int i = 0; i < N; i++) host_in[i] = 3 * i + 1;
  int *a, *b, *c;
  CHECK(cudaMalloc(&a, sizeof host_in));
  CHECK(cudaMalloc(&b, sizeof host_in));
  CHECK(cudaMalloc(&c, sizeof host_in));
  CHECK(cudaMemcpy(a, host_in, sizeof host_in, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  void *dsts[3] = {b, host_out, c};
  const void *srcs[3] = {a, a, host_in};
  size_t sizes[3] = {sizeof host_in, sizeof host_in, sizeof host_in};
  cudaMemcpyAttributes attrs[2];
  memset(attrs, 0, sizeof attrs);
  attrs[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attrs[1].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
  size_t idxs[2] = {0, 2};
  CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idxs, 2, s));
  CHECK(cudaStreamSynchronize(s));
  static int from_b[N], from_c[N];
  CHECK(cudaMemcpy(from_b, b, sizeof from_b, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(from_c, c, sizeof from_c, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += (host_out[i] != 3 * i + 1) + (from_b[i] != 3 * i + 1) + (from_c[i] != 3 * i + 1);
  printf("batch of three copies: %d wrong\n", wrong);
  if (wrong) FAIL("batch copies\n");

  memset(host_out, 0, sizeof host_out);
  CHECK(cudaMemcpyWithAttributesAsync(host_out, a, sizeof host_out, &attrs[0], s));
  CHECK(cudaStreamSynchronize(s));
  printf("copy with attributes: last element %d\n", host_out[N - 1]);
  if (host_out[N - 1] != 3 * (N - 1) + 1) FAIL("copy with attributes\n");

  expect_error(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idxs, 2, 0), cudaErrorInvalidValue,
               "the legacy stream");
  expect_error(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idxs, 0, s), cudaErrorInvalidValue,
               "no attributes");
  size_t late[2] = {1, 2};
  expect_error(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, late, 2, s), cudaErrorInvalidValue,
               "attribute indices from 1");
  attrs[1].srcAccessOrder = cudaMemcpySrcAccessOrderInvalid;
  expect_error(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idxs, 2, s), cudaErrorInvalidValue,
               "an invalid access order");
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  printf("memcpy_batch: ok\n");
  return 0;
}
