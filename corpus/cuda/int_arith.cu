// int_arith.cu -- integer arithmetic at every width.
//
// Covers: add/sub/mul on s8/u8/s16/u16/s32/u32/s64/u64 with wrap-around,
// mul.hi (__mulhi/__umulhi/__mul64hi/__umul64hi), mul.wide (32x32->64,
// 16x16->32 via asm), mad.lo / mad.hi / mad.wide, div/rem signed and
// unsigned at 16/32/64 bits (incl. division by a runtime value), min/max
// (signed/unsigned, 32/64), abs (32/64), neg, sad (__sad/__usad), __mul24,
// and 128-bit add/multiply carry chains with add.cc/addc/sub.cc/subc/
// mad.lo.cc/madc.hi via inline asm.

extern "C" __global__ void int_wrap_widths(const signed char *a8, const unsigned char *b8,
                                           const short *a16, const unsigned short *b16,
                                           signed char *o8, unsigned char *ou8,
                                           short *o16, unsigned short *ou16) {
  int i = threadIdx.x;
  // 8-bit: computed in int, truncated on store (wraps).
  o8[i] = (signed char)(a8[i] * 3 + 100);
  ou8[i] = (unsigned char)(b8[i] + 200u);
  // 16-bit wrap-around and 16-bit multiply.
  o16[i] = (short)(a16[i] * a16[i] - 30000);
  ou16[i] = (unsigned short)(b16[i] * 7u + 65000u);
}

extern "C" __global__ void int_arith32(const int *a, const int *b,
                                       const unsigned *ua, const unsigned *ub,
                                       int *out, unsigned *uout) {
  int i = threadIdx.x;
  int x = a[i], y = b[i];
  unsigned ux = ua[i], uy = ub[i];
  int k = 0;
  out[8 * i + k++] = x + y;
  out[8 * i + k++] = x - y;
  out[8 * i + k++] = x * y;               // mul.lo.s32
  out[8 * i + k++] = __mulhi(x, y);       // mul.hi.s32
  out[8 * i + k++] = (y != 0) ? x / y : 0; // div.s32
  out[8 * i + k++] = (y != 0) ? x % y : 0; // rem.s32
  out[8 * i + k++] = min(x, y) + max(x, y);
  out[8 * i + k++] = abs(x) - (-y);       // abs / neg
  k = 0;
  uout[8 * i + k++] = ux + uy;
  uout[8 * i + k++] = ux * uy + 0x9E3779B9u;  // mad.lo.u32
  uout[8 * i + k++] = __umulhi(ux, uy);       // mul.hi.u32
  uout[8 * i + k++] = (uy != 0) ? ux / uy : 0u;
  uout[8 * i + k++] = (uy != 0) ? ux % uy : 0u;
  uout[8 * i + k++] = umin(ux, uy) ^ umax(ux, uy);
  uout[8 * i + k++] = __usad(ux, uy, 5u) + (unsigned)__sad(x, y, 1u);
  uout[8 * i + k++] = (unsigned)__mul24(x, y) + __umul24(ux, uy);
}

extern "C" __global__ void int_arith64(const long long *a, const long long *b,
                                       const unsigned long long *ua,
                                       const unsigned long long *ub,
                                       long long *out, unsigned long long *uout) {
  int i = threadIdx.x;
  long long x = a[i], y = b[i];
  unsigned long long ux = ua[i], uy = ub[i];
  out[6 * i + 0] = x * y + x;             // mul.lo.s64 / mad.lo.s64
  out[6 * i + 1] = __mul64hi(x, y);       // mul.hi.s64
  out[6 * i + 2] = (y != 0) ? x / y : 0;  // div.s64
  out[6 * i + 3] = (y != 0) ? x % y : 0;  // rem.s64
  out[6 * i + 4] = llmin(x, y) - llmax(x, y);
  out[6 * i + 5] = llabs(x) + (-y);
  uout[4 * i + 0] = __umul64hi(ux, uy);   // mul.hi.u64
  uout[4 * i + 1] = (uy != 0) ? ux / uy : 0ull;
  uout[4 * i + 2] = (uy != 0) ? ux % uy : 0ull;
  uout[4 * i + 3] = ux - uy * 3ull;       // wraps below zero
}

// 16-bit division and widening multiplies.
extern "C" __global__ void int_div16_wide(const short *a, const short *b,
                                          const unsigned short *ua,
                                          const unsigned short *ub,
                                          const int *c, const unsigned *uc,
                                          int *o32, long long *o64,
                                          unsigned long long *uo64) {
  int i = threadIdx.x;
  short y = b[i] == 0 ? (short)1 : b[i];
  unsigned short uy = ub[i] == 0 ? (unsigned short)1 : ub[i];
  o32[2 * i + 0] = (short)(a[i] / y) + (short)(a[i] % y);
  o32[2 * i + 1] = (unsigned short)(ua[i] / uy) + (unsigned short)(ua[i] % uy);
  // mul.wide.s32 / mul.wide.u32 (32x32 -> 64)
  o64[2 * i + 0] = (long long)c[i] * (long long)c[i + 1];
  uo64[3 * i + 0] = (unsigned long long)uc[i] * (unsigned long long)uc[i + 1];
  // mad.wide.u32: 32x32 + 64
  uo64[3 * i + 1] = (unsigned long long)uc[i] * uc[i + 2] + uo64[3 * i + 2];
  // explicit PTX forms that nvcc may fold differently
  int w16;
  asm("mul.wide.s16 %0, %1, %2;" : "=r"(w16) : "h"(a[i]), "h"(b[i]));
  int mhi;
  asm("mad.hi.s32 %0, %1, %2, %3;" : "=r"(mhi) : "r"(c[i]), "r"(c[i + 1]), "r"(c[i + 2]));
  long long mw;
  asm("mad.wide.s32 %0, %1, %2, %3;" : "=l"(mw) : "r"(c[i]), "r"(c[i + 1]), "l"(o64[2 * i]));
  unsigned s;
  asm("sad.u32 %0, %1, %2, %3;" : "=r"(s) : "r"(uc[i]), "r"(uc[i + 1]), "r"(7u));
  short n16;
  asm("neg.s16 %0, %1;" : "=h"(n16) : "h"(a[i]));
  short ab16;
  asm("abs.s16 %0, %1;" : "=h"(ab16) : "h"(b[i]));
  o32[2 * i + 1] += w16 + mhi + (int)s + n16 + ab16;
  o64[2 * i + 1] = mw;
}

// 128-bit arithmetic with carry chains (PTX extended-precision instructions).
struct u128 { unsigned long long lo, hi; };

__device__ __forceinline__ u128 add128(u128 a, u128 b) {
  u128 r;
  unsigned a0 = (unsigned)a.lo, a1 = (unsigned)(a.lo >> 32), a2 = (unsigned)a.hi, a3 = (unsigned)(a.hi >> 32);
  unsigned b0 = (unsigned)b.lo, b1 = (unsigned)(b.lo >> 32), b2 = (unsigned)b.hi, b3 = (unsigned)(b.hi >> 32);
  unsigned r0, r1, r2, r3;
  asm("add.cc.u32  %0, %4, %8;\n\t"
      "addc.cc.u32 %1, %5, %9;\n\t"
      "addc.cc.u32 %2, %6, %10;\n\t"
      "addc.u32    %3, %7, %11;"
      : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(b2), "r"(b3));
  r.lo = ((unsigned long long)r1 << 32) | r0;
  r.hi = ((unsigned long long)r3 << 32) | r2;
  return r;
}

__device__ __forceinline__ u128 sub128(u128 a, u128 b) {
  u128 r;
  asm("sub.cc.u64 %0, %2, %4;\n\t"
      "subc.u64   %1, %3, %5;"
      : "=l"(r.lo), "=l"(r.hi)
      : "l"(a.lo), "l"(a.hi), "l"(b.lo), "l"(b.hi));
  return r;
}

// 64x64 -> 128 using 32-bit mad.lo.cc / madc.hi.cc chains.
__device__ __forceinline__ u128 mul64x64(unsigned long long a, unsigned long long b) {
  unsigned a0 = (unsigned)a, a1 = (unsigned)(a >> 32);
  unsigned b0 = (unsigned)b, b1 = (unsigned)(b >> 32);
  unsigned r0, r1, r2, r3;
  asm("{\n\t"
      ".reg .u32 t1;\n\t"
      "mul.lo.u32     %0, %4, %6;\n\t"
      "mul.hi.u32     %1, %4, %6;\n\t"
      "mad.lo.cc.u32  %1, %5, %6, %1;\n\t"
      "madc.hi.u32    %2, %5, %6, 0;\n\t"
      "mad.lo.cc.u32  %1, %4, %7, %1;\n\t"
      "madc.hi.cc.u32 %2, %4, %7, %2;\n\t"
      "addc.u32       %3, 0, 0;\n\t"
      "mad.lo.cc.u32  %2, %5, %7, %2;\n\t"
      "madc.hi.u32    %3, %5, %7, %3;\n\t"
      "}"
      : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
      : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
  u128 r;
  r.lo = ((unsigned long long)r1 << 32) | r0;
  r.hi = ((unsigned long long)r3 << 32) | r2;
  return r;
}

extern "C" __global__ void carry_chain_u128(const unsigned long long *a,
                                            const unsigned long long *b,
                                            unsigned long long *out) {
  int i = threadIdx.x;
  u128 x = {a[2 * i], a[2 * i + 1]};
  u128 y = {b[2 * i], b[2 * i + 1]};
  u128 s = add128(x, y);
  u128 d = sub128(x, y);
  u128 p = mul64x64(x.lo, y.lo);
  out[6 * i + 0] = s.lo; out[6 * i + 1] = s.hi;
  out[6 * i + 2] = d.lo; out[6 * i + 3] = d.hi;
  out[6 * i + 4] = p.lo; out[6 * i + 5] = p.hi;
}
