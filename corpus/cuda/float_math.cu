// float_math.cu -- f32 / f64 arithmetic and math functions.
//
// Covers: add/sub/mul/fma/div at f32 and f64 with explicit rounding
// (__fadd_rn/rz/rd/ru, __fmul_*, __fmaf_*, __fdiv_rn, __dadd_*, __dmul_*,
// __fma_*, __ddiv_*), div.approx / div.full (__fdividef, asm), rcp
// (__frcp_rn, asm rcp.approx.ftz), sqrt (sqrtf, __fsqrt_rn, __dsqrt_rn,
// asm sqrt.approx), rsqrt (rsqrtf), __sinf/__cosf/__log2f/__expf/__exp10f
// (sin/cos/lg2/ex2 .approx), tanh.approx (asm, sm_75+), copysign, testp via
// isnan/isinf/isfinite (and explicit testp asm), fminf/fmaxf (NaN handling)
// and min.NaN (asm, sm_80+), fabs/neg, and libdevice double functions
// (sin, cos, exp, log, pow, erf, atan2, cbrt) plus single precision
// sinf/expf/logf/powf. Also compiled with -use_fast_math ("fastmath"
// variant) where the single-precision libm calls become .approx forms.

extern "C" __global__ void f32_arith(const float *a, const float *b,
                                     const float *c, float *out) {
  int i = threadIdx.x;
  float x = a[i], y = b[i], z = c[i];
  int k = 0;
  out[16 * i + k++] = __fadd_rn(x, y) + __fadd_rz(x, z);
  out[16 * i + k++] = __fadd_rd(x, y) - __fadd_ru(y, z);
  out[16 * i + k++] = __fsub_rn(x, y) * __fmul_rz(x, y);
  out[16 * i + k++] = __fmul_rd(x, z) + __fmul_ru(y, z);
  out[16 * i + k++] = __fmaf_rn(x, y, z) + __fmaf_rz(x, y, z);
  out[16 * i + k++] = __fmaf_rd(x, y, z) - __fmaf_ru(x, y, z);
  out[16 * i + k++] = x / y;                       // div.rn.f32 (IEEE)
  out[16 * i + k++] = __fdividef(x, y);            // div.approx(.ftz)
  out[16 * i + k++] = __fdiv_rz(x, y) + __frcp_rn(z);
  out[16 * i + k++] = sqrtf(x) + __fsqrt_rn(y) + rsqrtf(z);
  out[16 * i + k++] = fminf(x, y) + fmaxf(y, z);   // min/max: NaN -> other
  out[16 * i + k++] = copysignf(x, y) + fabsf(z) - (-x);
  float dfull, rapx, sapx, rsapx, dapx;
  asm("div.full.f32 %0, %1, %2;" : "=f"(dfull) : "f"(x), "f"(y));
  asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(dapx) : "f"(x), "f"(y));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(rapx) : "f"(z));
  asm("sqrt.approx.f32 %0, %1;" : "=f"(sapx) : "f"(x));
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(rsapx) : "f"(y));
  out[16 * i + k++] = dfull + rapx + sapx + rsapx + dapx;
  float addftz, mulsat, fmasat;
  asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(addftz) : "f"(x), "f"(y));
  asm("mul.rn.sat.f32 %0, %1, %2;" : "=f"(mulsat) : "f"(x), "f"(y));
  asm("fma.rn.ftz.sat.f32 %0, %1, %2, %3;" : "=f"(fmasat) : "f"(x), "f"(y), "f"(z));
  out[16 * i + k++] = addftz + mulsat + fmasat;
#if __CUDA_ARCH__ >= 800
  float mnan, mxnan;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(mnan) : "f"(x), "f"(y));
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(mxnan) : "f"(x), "f"(y));
  out[16 * i + k++] = mnan + mxnan;
#else
  out[16 * i + k++] = 0.0f;
#endif
  out[16 * i + k++] = fmodf(x, y) + remainderf(x, y);
}

extern "C" __global__ void f32_special(const float *a, float *out, int *flags) {
  int i = threadIdx.x;
  float x = a[i];
  out[8 * i + 0] = __sinf(x) + __cosf(x);          // sin/cos.approx
  out[8 * i + 1] = __log2f(x) + exp2f(x) + __exp10f(x);        // lg2/ex2.approx
  out[8 * i + 2] = __expf(x) + __logf(x) + __powf(x, 1.5f);
  out[8 * i + 3] = __tanf(x) + __fsqrt_rd(x);
#if __CUDA_ARCH__ >= 750
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(x));
  out[8 * i + 4] = t;
#else
  out[8 * i + 4] = tanhf(x);
#endif
  out[8 * i + 5] = sinf(x) + cosf(x) + tanf(x);    // accurate libm paths
  out[8 * i + 6] = expf(x) + logf(x) + powf(x, 2.5f) + erff(x);
  out[8 * i + 7] = tanhf(x) + atan2f(x, 1.0f) + exp10f(x) + log1pf(x);
  int f = 0;
  f |= isnan(x) ? 1 : 0;
  f |= isinf(x) ? 2 : 0;
  f |= isfinite(x) ? 4 : 0;
  f |= signbit(x) ? 8 : 0;
  unsigned tp = 0, t1;
  asm("{ .reg .pred p; testp.finite.f32 p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(t1) : "f"(x)); tp |= t1;
  asm("{ .reg .pred p; testp.infinite.f32 p, %1; selp.u32 %0, 2, 0, p; }" : "=r"(t1) : "f"(x)); tp |= t1;
  asm("{ .reg .pred p; testp.number.f32 p, %1; selp.u32 %0, 4, 0, p; }" : "=r"(t1) : "f"(x)); tp |= t1;
  asm("{ .reg .pred p; testp.notanumber.f32 p, %1; selp.u32 %0, 8, 0, p; }" : "=r"(t1) : "f"(x)); tp |= t1;
  asm("{ .reg .pred p; testp.normal.f32 p, %1; selp.u32 %0, 16, 0, p; }" : "=r"(t1) : "f"(x)); tp |= t1;
  asm("{ .reg .pred p; testp.subnormal.f32 p, %1; selp.u32 %0, 32, 0, p; }" : "=r"(t1) : "f"(x)); tp |= t1;
  flags[2 * i] = f;
  flags[2 * i + 1] = (int)tp;
}

extern "C" __global__ void f64_arith(const double *a, const double *b,
                                     const double *c, double *out, int *flags) {
  int i = threadIdx.x;
  double x = a[i], y = b[i], z = c[i];
  int k = 0;
  out[12 * i + k++] = __dadd_rn(x, y) + __dadd_rz(x, z);
  out[12 * i + k++] = __dadd_rd(x, y) - __dadd_ru(y, z);
  out[12 * i + k++] = __dmul_rn(x, y) * __dmul_rz(x, z);
  out[12 * i + k++] = __fma_rn(x, y, z) + __fma_rd(x, y, z) + __fma_ru(x, y, z);
  out[12 * i + k++] = x / y + __ddiv_rz(x, z);     // div.rn.f64 / div.rz.f64
  out[12 * i + k++] = __drcp_rn(z) + sqrt(x) + __dsqrt_ru(y) + rsqrt(z);
  out[12 * i + k++] = fmin(x, y) + fmax(y, z) + copysign(x, y) + fabs(z);
  double rapx, ftzr;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(rapx) : "d"(z));
  asm("rsqrt.approx.f64 %0, %1;" : "=d"(ftzr) : "d"(x));
  out[12 * i + k++] = rapx + ftzr;
  out[12 * i + k++] = sin(x) + cos(y) + tan(z);    // libdevice
  out[12 * i + k++] = exp(x) + log(y) + pow(x, y) + erf(z);
  out[12 * i + k++] = atan2(x, y) + cbrt(z) + log1p(x) + expm1(y);
  out[12 * i + k++] = fmod(x, y) + hypot(x, z) + lgamma(y);
  int f = 0;
  f |= isnan(x) ? 1 : 0;
  f |= isinf(y) ? 2 : 0;
  f |= isfinite(z) ? 4 : 0;
  unsigned t1;
  asm("{ .reg .pred p; testp.normal.f64 p, %1; selp.u32 %0, 8, 0, p; }" : "=r"(t1) : "d"(x));
  flags[i] = f | (int)t1;
}
