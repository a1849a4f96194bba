// conversions.cu -- cvt in all its forms, plus f16 / bf16 arithmetic.
//
// Covers: float->int with every rounding (__float2int_rn/rz/rd/ru,
// __float2uint_*, __float2ll_*, __float2ull_*, __double2int_*, ...),
// int->float with rounding (__int2float_rn/rz/rd/ru, __ll2double_*, ...),
// f32<->f64 (__double2float_rn/rz/rd/ru), float->float integer rounding
// (cvt.rni/rzi/rmi/rpi via rintf/truncf/floorf/ceilf), .sat (__saturatef and
// cvt.sat via asm), .ftz (asm), integer narrowing/widening with sign
// extension (cvt.s8.s32, cvt.u16.u64, ...), f16 (__half: __float2half_rn/rz/
// rd/ru, __half2float, __hadd/__hmul/__hfma, comparisons), half2 (__hadd2,
// __hfma2, __hmul2), bf16 (__nv_bfloat16: __float2bfloat16, arithmetic,
// bfloat162), and cvt.rn.f16x2.f32 / cvt.rn.bf16.f32 via intrinsics.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void cvt_float_to_int(const float *f, const double *d,
                                            int *oi, unsigned *ou,
                                            long long *ol,
                                            unsigned long long *oul) {
  int i = threadIdx.x;
  float x = f[i];
  double y = d[i];
  oi[8 * i + 0] = __float2int_rn(x);
  oi[8 * i + 1] = __float2int_rz(x);
  oi[8 * i + 2] = __float2int_rd(x);
  oi[8 * i + 3] = __float2int_ru(x);
  oi[8 * i + 4] = __double2int_rn(y);
  oi[8 * i + 5] = __double2int_rz(y);
  oi[8 * i + 6] = __double2int_rd(y);
  oi[8 * i + 7] = __double2int_ru(y);
  ou[4 * i + 0] = __float2uint_rn(x);
  ou[4 * i + 1] = __float2uint_rz(x);
  ou[4 * i + 2] = __double2uint_rd(y);
  ou[4 * i + 3] = __double2uint_ru(y);
  ol[4 * i + 0] = __float2ll_rn(x);
  ol[4 * i + 1] = __float2ll_rd(x);
  ol[4 * i + 2] = __double2ll_rz(y);
  ol[4 * i + 3] = __double2ll_ru(y);
  oul[2 * i + 0] = __float2ull_ru(x);
  oul[2 * i + 1] = __double2ull_rn(y);
}

extern "C" __global__ void cvt_int_to_float(const int *a, const unsigned *b,
                                            const long long *c,
                                            const unsigned long long *e,
                                            float *of, double *od) {
  int i = threadIdx.x;
  of[8 * i + 0] = __int2float_rn(a[i]);
  of[8 * i + 1] = __int2float_rz(a[i]);
  of[8 * i + 2] = __uint2float_rd(b[i]);
  of[8 * i + 3] = __uint2float_ru(b[i]);
  of[8 * i + 4] = __ll2float_rn(c[i]);
  of[8 * i + 5] = __ull2float_rz(e[i]);
  of[8 * i + 6] = (float)(short)a[i];          // cvt.rn.f32.s16
  of[8 * i + 7] = (float)(unsigned char)b[i];  // cvt.rn.f32.u8 or u16
  od[4 * i + 0] = __ll2double_rd(c[i]);
  od[4 * i + 1] = __ull2double_ru(e[i]);
  od[4 * i + 2] = (double)a[i];
  od[4 * i + 3] = (double)b[i];
}

extern "C" __global__ void cvt_float_float(const float *f, const double *d,
                                           float *of, double *od) {
  int i = threadIdx.x;
  float x = f[i];
  double y = d[i];
  of[8 * i + 0] = __double2float_rn(y);
  of[8 * i + 1] = __double2float_rz(y);
  of[8 * i + 2] = __double2float_rd(y);
  of[8 * i + 3] = __double2float_ru(y);
  of[8 * i + 4] = rintf(x) + truncf(x);      // cvt.rni / cvt.rzi
  of[8 * i + 5] = floorf(x) - ceilf(x);      // cvt.rmi / cvt.rpi
  of[8 * i + 6] = __saturatef(x);            // cvt.sat.f32.f32
  float sat_ftz, rni_ftz, h;
  asm("cvt.ftz.sat.f32.f32 %0, %1;" : "=f"(sat_ftz) : "f"(x));
  asm("cvt.rni.ftz.f32.f32 %0, %1;" : "=f"(rni_ftz) : "f"(x));
  asm("cvt.rzi.f32.f32 %0, %1;" : "=f"(h) : "f"(x));
  of[8 * i + 7] = sat_ftz + rni_ftz + h;
  od[4 * i + 0] = (double)x;                 // cvt.f64.f32
  od[4 * i + 1] = rint(y) + trunc(y);        // cvt.rni/rzi.f64.f64
  od[4 * i + 2] = floor(y) * ceil(y);
  double ftz64;
  asm("cvt.ftz.f64.f32 %0, %1;" : "=d"(ftz64) : "f"(x));
  od[4 * i + 3] = ftz64;
}

// Integer narrowing / widening (sign and zero extension, saturation).
extern "C" __global__ void cvt_int_int(const int *a, const long long *c,
                                       signed char *o8, unsigned short *o16,
                                       long long *o64, int *o32) {
  int i = threadIdx.x;
  int x = a[i];
  long long z = c[i];
  o8[i] = (signed char)x;                     // cvt.s8.s32 / truncating store
  o16[i] = (unsigned short)z;                 // cvt.u16.u64
  o64[2 * i] = (long long)(short)x;           // sign-extend 16 -> 64
  o64[2 * i + 1] = (long long)(unsigned char)x;
  int s8, u16, s16from64;
  asm("cvt.sat.s8.s32 %0, %1;" : "=r"(s8) : "r"(x));
  asm("cvt.sat.u16.s32 %0, %1;" : "=r"(u16) : "r"(x));
  asm("cvt.sat.s32.s64 %0, %1;" : "=r"(s16from64) : "l"(z));
  int fi;
  asm("cvt.rzi.sat.s32.f32 %0, %1;" : "=r"(fi) : "f"((float)x * 1.0e9f));
  o32[i] = s8 + u16 + s16from64 + fi;
}

extern "C" __global__ void half_ops(const float *f, __half *oh, float *of) {
  int i = threadIdx.x;
  float x = f[i], y = f[i + 1];
  __half a = __float2half_rn(x);
  __half b = __float2half_rz(y);
  __half c = __float2half_rd(x - y);
  __half d = __float2half_ru(x * y);
#if __CUDA_ARCH__ >= 530
  // native f16 arithmetic
  __half s = __hfma(a, b, __hadd(c, d));
  s = __hmul(s, __hsub(a, c));
  s = __hdiv(s, __float2half(3.0f));
  bool lt = __hlt(a, b), nan = __hisnan(c);
  oh[i] = lt ? s : __hneg(s);
  of[i] = __half2float(s) + (nan ? 1.0f : 0.0f) + __half2float(__habs(d));
#else
  // sm_50 has no f16 arithmetic: compute in f32, convert back
  float s = __half2float(a) * __half2float(b) + __half2float(c) + __half2float(d);
  oh[i] = __float2half_rn(s);
  of[i] = s;
#endif
  // int <-> half conversions
  oh[i + 64] = __int2half_rn(i - 32);
  of[i + 64] = (float)__half2int_rz(a) + (float)__half2short_rn(b);
}

extern "C" __global__ void half2_ops(const float2 *f, __half2 *oh, float2 *of) {
  int i = threadIdx.x;
  __half2 a = __float22half2_rn(f[i]);
  __half2 b = __floats2half2_rn(f[i].y, f[i].x);
#if __CUDA_ARCH__ >= 530
  __half2 c = __hadd2(a, b);
  c = __hfma2(a, b, c);
  c = __hmul2(c, __hsub2(a, b));
#if __CUDA_ARCH__ >= 800
  c = __hmax2(c, __hmin2(a, b));
#endif
#else
  __half2 c = __floats2half2_rn(f[i].x + f[i].y, f[i].x * f[i].y);
#endif
  oh[i] = c;
  of[i] = __half22float2(c);
  // explicit f16x2 packing
#if __CUDA_ARCH__ >= 800
  unsigned packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(f[i].x), "f"(f[i].y));
  oh[i + 64] = *reinterpret_cast<__half2 *>(&packed);
#endif
}

extern "C" __global__ void bf16_ops(const float *f, __nv_bfloat16 *ob,
                                    __nv_bfloat162 *ob2, float *of) {
  int i = threadIdx.x;
  __nv_bfloat16 a = __float2bfloat16(f[i]);
  __nv_bfloat16 b = __float2bfloat16_rz(f[i + 1]);
  __nv_bfloat162 p = __floats2bfloat162_rn(f[i], f[i + 1]);
#if __CUDA_ARCH__ >= 800
  // native bf16 arithmetic (fma.rn.bf16 / fma.rn.bf16x2, max.bf16)
  __nv_bfloat16 c = __hadd(a, b);
  c = __hmul(c, a);
  c = __hfma(a, b, c);
  of[i] = __bfloat162float(c) + __bfloat162float(__hmax(a, b));
  __nv_bfloat162 q = __hfma2(p, p, p);
  ob2[i] = __hadd2(q, p);
#else
  // older targets: arithmetic in f32, bf16 only as a storage format
  __nv_bfloat16 c = __float2bfloat16(__bfloat162float(a) * __bfloat162float(b) + __bfloat162float(a));
  of[i] = __bfloat162float(c);
  __nv_bfloat162 q = __floats2bfloat162_rn(__low2float(p) * 2.0f, __high2float(p) * 2.0f);
  ob2[i] = q;
#endif
  ob[i] = c;
  of[i + 64] = __low2float(q) + __high2float(q);
  // f16 <-> bf16 round trip through float
  __half h = __float2half(__bfloat162float(a));
  of[i + 128] = __half2float(h);
}
