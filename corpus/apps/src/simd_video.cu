// simd_video: the SIMD intrinsics nvcc compiles to PTX video instructions (vabsdiff4 and its .add form):
// __vabsdiffu4 (per-byte |a - b|) and __vsadu4 (the sum of those), checked against CPU references written
// from the CUDA Math API's definitions.
#include "common.h"

#include <cstdlib>

__global__ void video(const unsigned* a, const unsigned* b, unsigned* absdiff, unsigned* sad, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    absdiff[i] = __vabsdiffu4(a[i], b[i]);
    sad[i] = __vsadu4(a[i], b[i]);
  }
}

int main() {
  const int n = 10000;
  unsigned *ha = (unsigned*)malloc(n * 4), *hb = (unsigned*)malloc(n * 4);
  unsigned *habs = (unsigned*)malloc(n * 4), *hsad = (unsigned*)malloc(n * 4);
  unsigned x = 12345;
  for (int i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    ha[i] = x;
    x = x * 1664525u + 1013904223u;
    hb[i] = i % 7 == 0 ? ha[i] : x;
  }
  unsigned *da, *db, *dabs, *dsad;
  CHECK(cudaMalloc(&da, n * 4));
  CHECK(cudaMalloc(&db, n * 4));
  CHECK(cudaMalloc(&dabs, n * 4));
  CHECK(cudaMalloc(&dsad, n * 4));
  CHECK(cudaMemcpy(da, ha, n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, n * 4, cudaMemcpyHostToDevice));
  video<<<(n + 255) / 256, 256>>>(da, db, dabs, dsad, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(habs, dabs, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hsad, dsad, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    unsigned want_abs = 0, want_sad = 0;
    for (int k = 0; k < 4; k++) {
      int p = (ha[i] >> (8 * k)) & 0xff, q = (hb[i] >> (8 * k)) & 0xff;
      unsigned d = (unsigned)abs(p - q);
      want_abs |= d << (8 * k);
      want_sad += d;
    }
    if (habs[i] != want_abs) FAIL("__vabsdiffu4(%08x, %08x) = %08x, want %08x\n", ha[i], hb[i], habs[i], want_abs);
    if (hsad[i] != want_sad) FAIL("__vsadu4(%08x, %08x) = %u, want %u\n", ha[i], hb[i], hsad[i], want_sad);
  }
  printf("simd_video: %d pairs, __vabsdiffu4 and __vsadu4: ok\n", n);
  return 0;
}
