// symbols: module-scope device variables reached from the host by symbol.
//  * __device__ scalars and arrays, __constant__ arrays and a __constant__
//    struct, written with cudaMemcpyToSymbol (also at an offset and
//    device-to-device) and read back with cudaMemcpyFromSymbol;
//  * cudaGetSymbolAddress / cudaGetSymbolSize, then plain cudaMemcpy through
//    the address;
//  * statically initialised __device__ and __constant__ tables read by kernels;
//  * cudaMemcpyToSymbolAsync / cudaMemcpyFromSymbolAsync on a stream.
#include "common.h"

struct Params {
  int a;
  float b;
  double c;
};

__device__ int dScalar;
__device__ float dArray[256];
__constant__ int cTable[64];
__device__ int dInit[8] = {1, 2, 3, 5, 8, 13, 21, 34};
__constant__ float cCoef[4] = {0.5f, 0.25f, 2.0f, 4.0f};
__device__ long long dResult[4];
__constant__ Params cParams;

__global__ void read_table(int* out) {
  int i = threadIdx.x;
  if (i < 64) out[i] = cTable[i] + dScalar;
}

__global__ void update_array(int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dArray[i] = dArray[i] * cCoef[i % 4] + (float)dInit[i % 8];
}

__global__ void sum_init() {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    long long s = 0;
    for (int i = 0; i < 8; i++) s += dInit[i];
    dResult[0] = s;
    dResult[1] = dInit[7] * 2;
  }
}

__global__ void inc_scalar() {
  if (threadIdx.x == 0) dScalar += 1;
}

__global__ void use_params(double* out) { *out = cParams.a * (double)cParams.b + cParams.c; }

int main() {
  printf("symbols\n");

  // ---- __constant__ table: whole copy, then a copy at an offset ----
  int tbl[64], part[16], back[64], out[64];
  for (int i = 0; i < 64; i++) tbl[i] = i * i;
  for (int j = 0; j < 16; j++) part[j] = -j - 1;
  CHECK(cudaMemcpyToSymbol(cTable, tbl, sizeof(tbl)));
  CHECK(cudaMemcpyToSymbol(cTable, part, sizeof(part), 32 * sizeof(int)));
  for (int j = 0; j < 16; j++) tbl[32 + j] = part[j];
  int v = 1000;
  CHECK(cudaMemcpyToSymbol(dScalar, &v, sizeof(int)));
  int* dout;
  CHECK(cudaMalloc(&dout, sizeof(out)));
  read_table<<<1, 64>>>(dout);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++)
    if (out[i] != tbl[i] + 1000) FAIL("read_table out[%d] = %d, expected %d", i, out[i], tbl[i] + 1000);
  CHECK(cudaMemcpyFromSymbol(back, cTable, sizeof(back)));
  for (int i = 0; i < 64; i++)
    if (back[i] != tbl[i]) FAIL("cTable[%d] read back %d, expected %d", i, back[i], tbl[i]);
  printf("__constant__ table: cudaMemcpyToSymbol/FromSymbol ok\n");
  int window[8];
  CHECK(cudaMemcpyFromSymbol(window, cTable, sizeof(window), 28 * sizeof(int)));
  printf("cTable[28..35] =");
  for (int i = 0; i < 8; i++) printf(" %d", window[i]);
  printf("\n");

  // ---- cudaGetSymbolAddress / cudaGetSymbolSize ----
  size_t sz = 0;
  CHECK(cudaGetSymbolSize(&sz, dArray));
  printf("cudaGetSymbolSize(dArray) = %zu\n", sz);
  CHECK(cudaGetSymbolSize(&sz, cParams));
  if (sz != sizeof(Params)) FAIL("cudaGetSymbolSize(cParams) = %zu, expected %zu", sz, sizeof(Params));
  float* parr = nullptr;
  CHECK(cudaGetSymbolAddress((void**)&parr, dArray));
  float harr[256], hres[256];
  for (int i = 0; i < 256; i++) harr[i] = (float)i;
  CHECK(cudaMemcpy(parr, harr, sizeof(harr), cudaMemcpyHostToDevice));
  update_array<<<2, 128>>>(256);
  CHECK_LAUNCH();
  CHECK(cudaMemcpyFromSymbol(hres, dArray, sizeof(hres)));
  const float coef[4] = {0.5f, 0.25f, 2.0f, 4.0f};
  const int init[8] = {1, 2, 3, 5, 8, 13, 21, 34};
  double checksum = 0;
  for (int i = 0; i < 256; i++) {
    float want = (float)i * coef[i % 4] + (float)init[i % 8];
    if (hres[i] != want) FAIL("dArray[%d] = %f, expected %f", i, hres[i], want);
    checksum += hres[i];
  }
  float tail[4];
  CHECK(cudaMemcpy(tail, parr + 252, sizeof(tail), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 4; i++)
    if (tail[i] != hres[252 + i]) FAIL("dArray[%d] via symbol address = %f, expected %f", 252 + i, tail[i], hres[252 + i]);
  printf("dArray through its symbol address ok, checksum %.2f\n", checksum);

  // ---- statically initialised tables ----
  sum_init<<<1, 32>>>();
  CHECK_LAUNCH();
  long long res[2];
  CHECK(cudaMemcpyFromSymbol(res, dResult, sizeof(res)));
  printf("static __device__ table: sum %lld, last*2 %lld\n", res[0], res[1]);
  float hc[4];
  CHECK(cudaMemcpyFromSymbol(hc, cCoef, sizeof(hc)));
  printf("static __constant__ table: %g %g %g %g\n", hc[0], hc[1], hc[2], hc[3]);

  // ---- async symbol copies on a stream ----
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  int* pin;
  CHECK(cudaMallocHost(&pin, 2 * sizeof(int)));
  pin[0] = 41;
  pin[1] = 0;
  CHECK(cudaMemcpyToSymbolAsync(dScalar, &pin[0], sizeof(int), 0, cudaMemcpyHostToDevice, s));
  inc_scalar<<<1, 1, 0, s>>>();
  CHECK_LAUNCH();
  CHECK(cudaMemcpyFromSymbolAsync(&pin[1], dScalar, sizeof(int), 0, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  printf("async symbol copies: dScalar = %d\n", pin[1]);

  // ---- device-to-device copy into a symbol ----
  int src4[4] = {7, 77, 777, 7777}, got4[4];
  int* dsrc;
  CHECK(cudaMalloc(&dsrc, sizeof(src4)));
  CHECK(cudaMemcpy(dsrc, src4, sizeof(src4), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyToSymbol(cTable, dsrc, sizeof(src4), 4 * sizeof(int), cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpyFromSymbol(got4, cTable, sizeof(got4), 4 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 4; i++)
    if (got4[i] != src4[i]) FAIL("cTable[%d] after device-to-device copy = %d, expected %d", 4 + i, got4[i], src4[i]);
  int* dtbl;
  CHECK(cudaMalloc(&dtbl, sizeof(int) * 64));
  CHECK(cudaMemcpyFromSymbol(dtbl, cTable, sizeof(int) * 64, 0, cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy(back, dtbl, sizeof(back), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 64; i++) {
    int want = (i >= 4 && i < 8) ? src4[i - 4] : tbl[i];
    if (back[i] != want) FAIL("cTable[%d] copied to device memory = %d, expected %d", i, back[i], want);
  }
  printf("device-to-device symbol copies ok\n");

  // ---- __constant__ struct ----
  Params hp = {3, 1.5f, 0.25};
  CHECK(cudaMemcpyToSymbol(cParams, &hp, sizeof(hp)));
  double* dd;
  CHECK(cudaMalloc(&dd, sizeof(double)));
  use_params<<<1, 1>>>(dd);
  CHECK_LAUNCH();
  double r = 0;
  CHECK(cudaMemcpy(&r, dd, sizeof(double), cudaMemcpyDeviceToHost));
  if (r != 4.75) FAIL("use_params gave %f, expected 4.75", r);
  printf("__constant__ struct: %.2f\n", r);

  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFreeHost(pin));
  CHECK(cudaFree(dout));
  CHECK(cudaFree(dsrc));
  CHECK(cudaFree(dtbl));
  CHECK(cudaFree(dd));
  printf("PASSED\n");
  return 0;
}
