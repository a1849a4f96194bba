// fp8: FP8 conversions (__nv_fp8_e4m3, __nv_fp8_e5m2 and their x2 pairs, from float, float2 and __half2,
// and back), which nvcc compiles for sm_90 to cvt.rn.satfinite.{e4m3x2,e5m2x2}.{f32,f16x2} and
// cvt.rn.f16x2.{e4m3x2,e5m2x2}. The same conversions on the host (cuda_fp8.h's software path) are the
// reference: every byte must match.
#include "common.h"

#include <cmath>
#include <cstring>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

struct Out {
  unsigned char e4, e5;       // scalar conversions of x
  unsigned short p4, p5;      // pair conversions of (x, -x / 3)
  unsigned short h4, h5;      // pair conversions of __half2(x, x * 2)
  float b4, b5;               // the scalar FP8 values back to float
  unsigned int w4, w5;        // the pairs back to __half2 (bits)
};

// One value's conversions; compiled for the device (PTX cvt instructions) and for the host (cuda_fp8.h's
// software path, the reference).
__host__ __device__ Out convert_one(float v) {
  Out o;
  __nv_fp8_e4m3 a(v);
  __nv_fp8_e5m2 b(v);
  __nv_fp8x2_e4m3 pa(make_float2(v, -v / 3.0f));
  __nv_fp8x2_e5m2 pb(make_float2(v, -v / 3.0f));
  __half2 h = __floats2half2_rn(v, v * 2.0f);
  __nv_fp8x2_e4m3 ha(h);
  __nv_fp8x2_e5m2 hb(h);
  o.e4 = a.__x;
  o.e5 = b.__x;
  o.p4 = pa.__x;
  o.p5 = pb.__x;
  o.h4 = ha.__x;
  o.h5 = hb.__x;
  o.b4 = float(a);
  o.b5 = float(b);
  __half2 wa = __half2(pa), wb = __half2(pb);
  memcpy(&o.w4, &wa, 4);
  memcpy(&o.w5, &wb, 4);
  return o;
}

__global__ void convert(const float* x, Out* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = convert_one(x[i]);
}

int main() {
  // Specials, the formats' limits and the values around them, rounding ties, subnormals, then a sweep.
  const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 448.0f, 464.0f, 480.0f, -500.0f, 57344.0f, 61440.0f,
                            1e30f, -1e30f, INFINITY, -INFINITY, NAN, 0.001953125f, 0.0009765625f, 1.0625f,
                            1.1875f, 0.013671875f, 6.103515625e-05f, 1.52587890625e-05f, 3e-8f, 2.25f, 2.75f};
  const int ns = sizeof(specials) / sizeof(specials[0]);
  const int n = ns + 4000;
  float* hx = (float*)malloc(n * sizeof(float));
  for (int i = 0; i < ns; i++) hx[i] = specials[i];
  for (int i = 0; i < 4000; i++) hx[ns + i] = ldexpf((float)(i % 200) / 37.0f - 2.5f, i / 200 - 12);
  float* dx;
  Out* dout;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, n * sizeof(Out)));
  CHECK(cudaMemcpy(dx, hx, n * sizeof(float), cudaMemcpyHostToDevice));
  convert<<<(n + 127) / 128, 128>>>(dx, dout, n);
  CHECK_LAUNCH();
  Out* hout = (Out*)malloc(n * sizeof(Out));
  CHECK(cudaMemcpy(hout, dout, n * sizeof(Out), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++) {
    Out want = convert_one(hx[i]);
    const Out& got = hout[i];
    bool same_b4 = memcmp(&got.b4, &want.b4, 4) == 0 || (std::isnan(got.b4) && std::isnan(want.b4));
    bool same_b5 = memcmp(&got.b5, &want.b5, 4) == 0 || (std::isnan(got.b5) && std::isnan(want.b5));
    if (got.e4 != want.e4 || got.e5 != want.e5 || got.p4 != want.p4 || got.p5 != want.p5 || got.h4 != want.h4 ||
        got.h5 != want.h5 || !same_b4 || !same_b5 || got.w4 != want.w4 || got.w5 != want.w5) {
      if (bad++ < 10)
        printf("x = %a: got e4 %02x e5 %02x p4 %04x p5 %04x h4 %04x h5 %04x w4 %08x w5 %08x, want e4 %02x e5 %02x "
               "p4 %04x p5 %04x h4 %04x h5 %04x w4 %08x w5 %08x\n",
               hx[i], got.e4, got.e5, got.p4, got.p5, got.h4, got.h5, got.w4, got.w5, want.e4, want.e5, want.p4,
               want.p5, want.h4, want.h5, want.w4, want.w5);
    }
  }
  if (bad) FAIL("%d of %d values convert differently from cuda_fp8.h's host path\n", bad, n);
  printf("fp8: %d values, e4m3 and e5m2, scalar and pairs, both ways: ok\n", n);
  return 0;
}
