// textures: texture and surface objects.
//  * linear memory (cudaResourceTypeLinear) read with tex1Dfetch, float and int;
//  * pitched 2D memory (cudaMallocPitch + cudaMemcpy2D, cudaResourceTypePitch2D)
//    read with tex2D: point filtering, unnormalized coordinates, clamp
//    addressing (reads past every edge);
//  * a cudaArray (cudaMallocArray + cudaMemcpy2DToArray) read with tex2D:
//    linear filtering and normalized coordinates, compared with a CPU bilinear
//    reference within 1e-2 relative (the hardware's interpolation weights have
//    8 fractional bits);
//  * a uchar4 cudaArray read as normalized floats (cudaReadModeNormalizedFloat);
//  * a surface object: surf2Dwrite then surf2Dread, read back with
//    cudaMemcpy2DFromArray;
//  * cudaDestroyTextureObject / cudaDestroySurfaceObject / cudaFreeArray.
#include "common.h"
#include <cmath>
#include <cstring>

__global__ void fetch_linear(cudaTextureObject_t tf, cudaTextureObject_t ti, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(tf, i) * 2.0f + tex1Dfetch<float>(tf, n - 1 - i) + (float)tex1Dfetch<int>(ti, i);
}

__global__ void sample_point(cudaTextureObject_t t, float* out, int w, int h, int dx, int dy) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + dx + 0.5f, y + dy + 0.5f);
}

__global__ void sample_linear(cudaTextureObject_t t, float* out, int ow, int oh) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < ow && y < oh) {
    float u = (x + 0.3f) / ow, v = (y + 0.7f) / oh;
    out[y * ow + x] = tex2D<float>(t, u, v);
  }
}

__global__ void sample_normalized(cudaTextureObject_t t, float4* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float4>(t, x + 0.5f, y + 0.5f);
}

__global__ void surf_write(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) surf2Dwrite(y * 1000 + x, s, x * (int)sizeof(int), y);
}

__global__ void surf_read(cudaSurfaceObject_t s, int* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = 2 * surf2Dread<int>(s, x * (int)sizeof(int), y);
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

int main() {
  printf("textures\n");

  // ---- linear memory, tex1Dfetch ----
  const int n = 1024;
  float* hf = new float[n];
  int* hi = new int[n];
  float* hout = new float[n];
  for (int i = 0; i < n; i++) {
    hf[i] = i * 0.5f;
    hi[i] = (i * 7) % 100;
  }
  float* dlin;
  int* dilin;
  float* dout;
  CHECK(cudaMalloc(&dlin, n * sizeof(float)));
  CHECK(cudaMalloc(&dilin, n * sizeof(int)));
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMemcpy(dlin, hf, n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dilin, hi, n * sizeof(int), cudaMemcpyHostToDevice));
  cudaResourceDesc rd;
  memset(&rd, 0, sizeof(rd));
  rd.resType = cudaResourceTypeLinear;
  rd.res.linear.devPtr = dlin;
  rd.res.linear.desc = cudaCreateChannelDesc<float>();
  rd.res.linear.sizeInBytes = n * sizeof(float);
  cudaTextureDesc td;
  memset(&td, 0, sizeof(td));
  td.readMode = cudaReadModeElementType;
  td.filterMode = cudaFilterModePoint;
  cudaTextureObject_t tlin = 0, tilin = 0;
  CHECK(cudaCreateTextureObject(&tlin, &rd, &td, nullptr));
  rd.res.linear.devPtr = dilin;
  rd.res.linear.desc = cudaCreateChannelDesc<int>();
  rd.res.linear.sizeInBytes = n * sizeof(int);
  CHECK(cudaCreateTextureObject(&tilin, &rd, &td, nullptr));
  fetch_linear<<<(n + 127) / 128, 128>>>(tlin, tilin, dout, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; i++) {
    float want = hf[i] * 2.0f + hf[n - 1 - i] + (float)hi[i];
    if (hout[i] != want) FAIL("tex1Dfetch out[%d] = %f, expected %f", i, hout[i], want);
    sum += hout[i];
  }
  printf("linear texture (tex1Dfetch float+int): checksum %.1f\n", sum);

  // ---- pitched 2D memory, point filtering, clamp ----
  const int W = 60, H = 40;
  float* h2 = new float[W * H];
  float* o2 = new float[W * H];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) h2[y * W + x] = (float)(y * 100 + x);
  float* dp;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(&dp, &pitch, W * sizeof(float), H));
  if (pitch < W * sizeof(float)) FAIL("cudaMallocPitch pitch %zu < row size %zu", pitch, W * sizeof(float));
  CHECK(cudaMemcpy2D(dp, pitch, h2, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
  memset(&rd, 0, sizeof(rd));
  rd.resType = cudaResourceTypePitch2D;
  rd.res.pitch2D.devPtr = dp;
  rd.res.pitch2D.desc = cudaCreateChannelDesc<float>();
  rd.res.pitch2D.width = W;
  rd.res.pitch2D.height = H;
  rd.res.pitch2D.pitchInBytes = pitch;
  memset(&td, 0, sizeof(td));
  td.addressMode[0] = cudaAddressModeClamp;
  td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 0;
  cudaTextureObject_t tpitch = 0;
  CHECK(cudaCreateTextureObject(&tpitch, &rd, &td, nullptr));
  float* d2;
  CHECK(cudaMalloc(&d2, W * H * sizeof(float)));
  dim3 b2(16, 8), g2((W + 15) / 16, (H + 7) / 8);
  const int shifts[2][2] = {{-3, 2}, {5, -4}};
  for (int s = 0; s < 2; s++) {
    int dx = shifts[s][0], dy = shifts[s][1];
    sample_point<<<g2, b2>>>(tpitch, d2, W, H, dx, dy);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(o2, d2, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        float want = h2[clampi(y + dy, 0, H - 1) * W + clampi(x + dx, 0, W - 1)];
        if (o2[y * W + x] != want) FAIL("tex2D pitch2D shift (%d,%d) at (%d,%d) = %f, expected %f", dx, dy, x, y, o2[y * W + x], want);
      }
  }
  // The pitched buffer also copies back row by row.
  memset(o2, 0, W * H * sizeof(float));
  CHECK(cudaMemcpy2D(o2, W * sizeof(float), dp, pitch, W * sizeof(float), H, cudaMemcpyDeviceToHost));
  if (memcmp(o2, h2, W * H * sizeof(float)) != 0) FAIL("cudaMemcpy2D round trip differs");
  printf("pitch2D texture (point, unnormalized, clamp) %dx%d: ok\n", W, H);

  // ---- cudaArray, linear filtering, normalized coordinates ----
  const int AW = 32, AH = 24, OW = 40, OH = 30;
  float* ha = new float[AW * AH];
  for (int y = 0; y < AH; y++)
    for (int x = 0; x < AW; x++) ha[y * AW + x] = 2.0f + (x % 7) * 0.25f + (y % 5) * 0.5f;
  cudaChannelFormatDesc cdf = cudaCreateChannelDesc<float>();
  cudaArray_t arr;
  CHECK(cudaMallocArray(&arr, &cdf, AW, AH));
  CHECK(cudaMemcpy2DToArray(arr, 0, 0, ha, AW * sizeof(float), AW * sizeof(float), AH, cudaMemcpyHostToDevice));
  memset(&rd, 0, sizeof(rd));
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = arr;
  memset(&td, 0, sizeof(td));
  td.addressMode[0] = cudaAddressModeClamp;
  td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 1;
  cudaTextureObject_t tarr = 0;
  CHECK(cudaCreateTextureObject(&tarr, &rd, &td, nullptr));
  float* dl;
  float* ol = new float[OW * OH];
  CHECK(cudaMalloc(&dl, OW * OH * sizeof(float)));
  dim3 gl((OW + 15) / 16, (OH + 7) / 8);
  sample_linear<<<gl, b2>>>(tarr, dl, OW, OH);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(ol, dl, OW * OH * sizeof(float), cudaMemcpyDeviceToHost));
  int within = 0;
  for (int y = 0; y < OH; y++)
    for (int x = 0; x < OW; x++) {
      float u = (x + 0.3f) / OW, v = (y + 0.7f) / OH;
      float xf = u * AW - 0.5f, yf = v * AH - 0.5f;
      float x0f = floorf(xf), y0f = floorf(yf);
      float a = xf - x0f, b = yf - y0f;
      int x0 = (int)x0f, y0 = (int)y0f;
      auto T = [&](int xx, int yy) { return ha[clampi(yy, 0, AH - 1) * AW + clampi(xx, 0, AW - 1)]; };
      float want = (1 - a) * (1 - b) * T(x0, y0) + a * (1 - b) * T(x0 + 1, y0) + (1 - a) * b * T(x0, y0 + 1) +
                   a * b * T(x0 + 1, y0 + 1);
      float got = ol[y * OW + x];
      if (!(fabsf(got - want) <= 1e-2f * fabsf(want)))
        FAIL("tex2D linear at (%d,%d) = %f, CPU bilinear %f", x, y, got, want);
      within++;
    }
  printf("cudaArray texture (linear, normalized, clamp): %d samples within 1e-2 of the CPU bilinear reference\n", within);

  // ---- uchar4 cudaArray read as normalized float ----
  const int CW = 16, CH = 16;
  uchar4* hc = new uchar4[CW * CH];
  float4* oc = new float4[CW * CH];
  for (int i = 0; i < CW * CH; i++) hc[i] = make_uchar4(i & 255, (i * 3) & 255, 255 - (i & 255), (i * 7) & 255);
  cudaChannelFormatDesc cdc = cudaCreateChannelDesc<uchar4>();
  cudaArray_t carr;
  CHECK(cudaMallocArray(&carr, &cdc, CW, CH));
  CHECK(cudaMemcpy2DToArray(carr, 0, 0, hc, CW * sizeof(uchar4), CW * sizeof(uchar4), CH, cudaMemcpyHostToDevice));
  rd.res.array.array = carr;
  memset(&td, 0, sizeof(td));
  td.addressMode[0] = cudaAddressModeClamp;
  td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModePoint;
  td.readMode = cudaReadModeNormalizedFloat;
  td.normalizedCoords = 0;
  cudaTextureObject_t tc = 0;
  CHECK(cudaCreateTextureObject(&tc, &rd, &td, nullptr));
  float4* dc;
  CHECK(cudaMalloc(&dc, CW * CH * sizeof(float4)));
  sample_normalized<<<dim3(1, 2), b2>>>(tc, dc, CW, CH);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(oc, dc, CW * CH * sizeof(float4), cudaMemcpyDeviceToHost));
  for (int i = 0; i < CW * CH; i++) {
    const float got[4] = {oc[i].x, oc[i].y, oc[i].z, oc[i].w};
    const unsigned char in[4] = {hc[i].x, hc[i].y, hc[i].z, hc[i].w};
    for (int c = 0; c < 4; c++)
      if (!(fabsf(got[c] - in[c] / 255.0f) <= 1e-6f))
        FAIL("normalized uchar4 texel %d channel %d = %f, expected %f", i, c, got[c], in[c] / 255.0f);
  }
  printf("uchar4 cudaArray texture (cudaReadModeNormalizedFloat): ok\n");

  // ---- surface object ----
  const int SW = 48, SH = 16;
  cudaChannelFormatDesc cdi = cudaCreateChannelDesc<int>();
  cudaArray_t sarr;
  CHECK(cudaMallocArray(&sarr, &cdi, SW, SH, cudaArraySurfaceLoadStore));
  memset(&rd, 0, sizeof(rd));
  rd.resType = cudaResourceTypeArray;
  rd.res.array.array = sarr;
  cudaSurfaceObject_t surf = 0;
  CHECK(cudaCreateSurfaceObject(&surf, &rd));
  int* ds;
  CHECK(cudaMalloc(&ds, SW * SH * sizeof(int)));
  dim3 gs((SW + 15) / 16, (SH + 7) / 8);
  surf_write<<<gs, b2>>>(surf, SW, SH);
  CHECK_LAUNCH();
  surf_read<<<gs, b2>>>(surf, ds, SW, SH);
  CHECK_LAUNCH();
  int* hs = new int[SW * SH];
  int* hs2 = new int[SW * SH];
  CHECK(cudaMemcpy2DFromArray(hs, SW * sizeof(int), sarr, 0, 0, SW * sizeof(int), SH, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hs2, ds, SW * SH * sizeof(int), cudaMemcpyDeviceToHost));
  long long ssum = 0;
  for (int y = 0; y < SH; y++)
    for (int x = 0; x < SW; x++) {
      int want = y * 1000 + x;
      if (hs[y * SW + x] != want) FAIL("surface (%d,%d) = %d, expected %d", x, y, hs[y * SW + x], want);
      if (hs2[y * SW + x] != 2 * want) FAIL("surf2Dread (%d,%d) = %d, expected %d", x, y, hs2[y * SW + x], 2 * want);
      ssum += hs[y * SW + x];
    }
  printf("surface object (surf2Dwrite/surf2Dread) %dx%d: checksum %lld\n", SW, SH, ssum);

  CHECK(cudaDestroyTextureObject(tlin));
  CHECK(cudaDestroyTextureObject(tilin));
  CHECK(cudaDestroyTextureObject(tpitch));
  CHECK(cudaDestroyTextureObject(tarr));
  CHECK(cudaDestroyTextureObject(tc));
  CHECK(cudaDestroySurfaceObject(surf));
  CHECK(cudaFreeArray(arr));
  CHECK(cudaFreeArray(carr));
  CHECK(cudaFreeArray(sarr));
  CHECK(cudaFree(dlin));
  CHECK(cudaFree(dilin));
  CHECK(cudaFree(dout));
  CHECK(cudaFree(dp));
  CHECK(cudaFree(d2));
  CHECK(cudaFree(dl));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(ds));
  delete[] hf;
  delete[] hi;
  delete[] hout;
  delete[] h2;
  delete[] o2;
  delete[] ha;
  delete[] ol;
  delete[] hc;
  delete[] oc;
  delete[] hs;
  delete[] hs2;
  printf("PASSED\n");
  return 0;
}
