// Copies between CUDA arrays: cudaMemcpy2DArrayToArray (a block of rows at
// offsets in both arrays) and the deprecated cudaMemcpyArrayToArray (bytes
// through the rows, as linear memory), checked by reading the arrays back,
// and their documented errors.
#include "common.h"

int main() {
  const int SW = 16, SH = 8, DW = 20, DH = 10;
  cudaChannelFormatDesc cd = cudaCreateChannelDesc<int>();
  cudaArray_t src, dst;
  CHECK(cudaMallocArray(&src, &cd, SW, SH));
  CHECK(cudaMallocArray(&dst, &cd, DW, DH));
  static int hs[SH][SW], hd[DH][DW];
  for (int y = 0; y < SH; ++y)
    for (int x = 0; x < SW; ++x) hs[y][x] = 100 * y + x;
  for (int y = 0; y < DH; ++y)
    for (int x = 0; x < DW; ++x) hd[y][x] = -1;
  CHECK(cudaMemcpy2DToArray(src, 0, 0, hs, sizeof hs[0], sizeof hs[0], SH, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy2DToArray(dst, 0, 0, hd, sizeof hd[0], sizeof hd[0], DH, cudaMemcpyHostToDevice));

  // A 5x3 block from (2, 1) of src to (10, 6) of dst (offsets in bytes across, rows down).
  CHECK(cudaMemcpy2DArrayToArray(dst, 10 * sizeof(int), 6, src, 2 * sizeof(int), 1, 5 * sizeof(int), 3,
                                 cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy2DFromArray(hd, sizeof hd[0], dst, 0, 0, sizeof hd[0], DH, cudaMemcpyDeviceToHost));
  int copied = 0;
  for (int y = 0; y < DH; ++y)
    for (int x = 0; x < DW; ++x) {
      bool in = y >= 6 && y < 9 && x >= 10 && x < 15;
      int want = in ? 100 * (y - 6 + 1) + (x - 10 + 2) : -1;
      if (hd[y][x] != want) FAIL("dst[%d][%d] = %d, expected %d", y, x, hd[y][x], want);
      copied += in;
    }
  printf("2D array to array: %d elements where expected\n", copied);

  // 24 ints from row 2 of src (through rows 2 and 3) to row 0, element 4 of dst (through rows 0 and 1).
  CHECK(cudaMemcpyArrayToArray(dst, 4 * sizeof(int), 0, src, 0, 2, 24 * sizeof(int), cudaMemcpyDefault));
  CHECK(cudaMemcpy2DFromArray(hd, sizeof hd[0], dst, 0, 0, sizeof hd[0], DH, cudaMemcpyDeviceToHost));
  for (int k = 0; k < 24; ++k) {
    int d = 4 + k, s = 2 * SW + k;
    int got = hd[d / DW][d % DW], want = hs[s / SW][s % SW];
    if (got != want) FAIL("linear element %d: %d, expected %d", k, got, want);
  }
  printf("linear array to array: 24 elements through the rows\n");

  // The deprecated host copies run through the rows the same way: 30 ints into src from row 5, element 10,
  // read back from there.
  int line[30], back[30];
  for (int k = 0; k < 30; ++k) line[k] = 7000 + k;
  CHECK(cudaMemcpyToArray(src, 10 * sizeof(int), 5, line, sizeof line, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyFromArray(back, src, 10 * sizeof(int), 5, sizeof back, cudaMemcpyDeviceToHost));
  for (int k = 0; k < 30; ++k)
    if (back[k] != line[k]) FAIL("linear host copy element %d: %d", k, back[k]);
  printf("linear host copies: 30 elements through the rows\n");
  EXPECT_ERR(cudaMemcpyToArray(src, 0, 7, line, sizeof line, cudaMemcpyHostToDevice), cudaErrorInvalidValue);

  EXPECT_ERR(cudaMemcpy2DArrayToArray(dst, 0, 0, src, 0, 0, 4, 1, cudaMemcpyHostToDevice),
             cudaErrorInvalidMemcpyDirection);
  EXPECT_ERR(cudaMemcpy2DArrayToArray(dst, 0, 8, src, 0, 0, 4, 3, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
  EXPECT_ERR(cudaMemcpyArrayToArray(dst, 0, 0, src, 0, 7, 20 * sizeof(int), cudaMemcpyDeviceToDevice),
             cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaFreeArray(src));
  CHECK(cudaFreeArray(dst));
  printf("PASSED\n");
  return 0;
}
