// compare_select.cu -- comparisons, selection and predicate logic.
//
// Covers: setp with every integer compare (eq ne lt le gt ge, lo ls hi hs
// for unsigned), every float compare incl. the unordered ones (equ neu ltu
// leu gtu geu) and num/nan, at f32 and f64; selp; set (set.*.u32.f32 /
// set.*.f32.s32 producing masks / 1.0f); slct (s32 and f32 selectors);
// setp with a combining predicate (setp.lt.and / .or / .xor) and predicate
// and/or/xor/not; predicated @p / @!p instructions.

extern "C" __global__ void cmp_int(const int *a, const int *b,
                                   const unsigned *ua, const unsigned *ub,
                                   const long long *c, int *out) {
  int i = threadIdx.x;
  int x = a[i], y = b[i];
  unsigned ux = ua[i], uy = ub[i];
  long long z = c[i];
  int r = 0;
  r |= (x == y) << 0;
  r |= (x != y) << 1;
  r |= (x < y) << 2;
  r |= (x <= y) << 3;
  r |= (x > y) << 4;
  r |= (x >= y) << 5;
  r |= (ux < uy) << 6;   // lo
  r |= (ux <= uy) << 7;  // ls
  r |= (ux > uy) << 8;   // hi
  r |= (ux >= uy) << 9;  // hs
  r |= (z < 0) << 10;
  r |= (z >= (long long)x) << 11;
  out[2 * i] = r;
  out[2 * i + 1] = (x < y) ? ux : uy;                   // selp
}

// Float comparisons: C/C++ ordered compares map to ordered setp; negated
// compares (!(a < b)) become the unordered forms (geu etc.).
extern "C" __global__ void cmp_float(const float *a, const float *b,
                                     const double *c, const double *d,
                                     int *out) {
  int i = threadIdx.x;
  float x = a[i], y = b[i];
  double u = c[i], v = d[i];
  int r = 0;
  r |= (x == y) << 0;
  r |= (x != y) << 1;     // neu
  r |= (x < y) << 2;
  r |= (x <= y) << 3;
  r |= (x > y) << 4;
  r |= (x >= y) << 5;
  r |= (!(x < y)) << 6;   // geu
  r |= (!(x <= y)) << 7;  // gtu
  r |= (!(x > y)) << 8;   // leu
  r |= (!(x >= y)) << 9;  // ltu
  r |= (!(x != y)) << 10; // equ? (compiler choice)
  r |= (x != x) << 11;    // nan
  r |= (x == x && y == y) << 12; // num
  r |= (u < v) << 13;
  r |= (!(u >= v)) << 14;
  r |= (u != u) << 15;
  out[i] = r;
}

// Every setp comparison operator spelled out explicitly.
#define SETP_F32(op, bit)                                                   \
  asm("{ .reg .pred p; setp." #op ".f32 p, %1, %2; selp.u32 %0, 1, 0, p; }" \
      : "=r"(t) : "f"(x), "f"(y));                                          \
  r |= t << bit;
#define SETP_F64(op, bit)                                                   \
  asm("{ .reg .pred p; setp." #op ".f64 p, %1, %2; selp.u32 %0, 1, 0, p; }" \
      : "=r"(t) : "d"(u), "d"(v));                                          \
  r |= t << bit;

extern "C" __global__ void setp_all_ops(const float *a, const float *b,
                                        const double *c, const double *d,
                                        unsigned *out) {
  int i = threadIdx.x;
  float x = a[i], y = b[i];
  double u = c[i], v = d[i];
  unsigned r = 0, t;
  SETP_F32(eq, 0) SETP_F32(ne, 1) SETP_F32(lt, 2) SETP_F32(le, 3)
  SETP_F32(gt, 4) SETP_F32(ge, 5) SETP_F32(equ, 6) SETP_F32(neu, 7)
  SETP_F32(ltu, 8) SETP_F32(leu, 9) SETP_F32(gtu, 10) SETP_F32(geu, 11)
  SETP_F32(num, 12) SETP_F32(nan, 13)
  SETP_F64(eq, 16) SETP_F64(ne, 17) SETP_F64(lt, 18) SETP_F64(le, 19)
  SETP_F64(gt, 20) SETP_F64(ge, 21) SETP_F64(equ, 22) SETP_F64(neu, 23)
  SETP_F64(ltu, 24) SETP_F64(leu, 25) SETP_F64(gtu, 26) SETP_F64(geu, 27)
  SETP_F64(num, 28) SETP_F64(nan, 29)
  out[i] = r;
}

extern "C" __global__ void set_slct_pred(const int *a, const int *b,
                                         const float *f, const float *g,
                                         unsigned *out, float *fout) {
  int i = threadIdx.x;
  int x = a[i], y = b[i];
  float p = f[i], q = g[i];
  unsigned s1, s2;
  float s3;
  asm("set.lt.u32.s32 %0, %1, %2;" : "=r"(s1) : "r"(x), "r"(y));       // 0 / 0xFFFFFFFF
  asm("set.gtu.u32.f32 %0, %1, %2;" : "=r"(s2) : "f"(p), "f"(q));
  asm("set.ge.f32.s32 %0, %1, %2;" : "=f"(s3) : "r"(x), "r"(y));       // 0.0f / 1.0f
  unsigned s4;
  asm("{ .reg .pred pp; setp.ne.s32 pp, %3, 0; set.eq.and.u32.s32 %0, %1, %2, !pp; }"
      : "=r"(s4) : "r"(x), "r"(y), "r"(i & 1));
  int sl1;
  float sl2;
  asm("slct.s32.s32 %0, %1, %2, %3;" : "=r"(sl1) : "r"(x), "r"(y), "r"(x - y));
  asm("slct.f32.f32 %0, %1, %2, %3;" : "=f"(sl2) : "f"(p), "f"(q), "f"(p - q));
  unsigned comb;
  asm("{\n\t"
      ".reg .pred p, q, r, s;\n\t"
      "setp.lt.s32 p, %1, %2;\n\t"
      "setp.gt.and.s32 q, %1, 0, p;\n\t"      // q = (x > 0) && p
      "setp.eq.or.s32 r, %2, 0, q;\n\t"       // r = (y == 0) || q
      "setp.ne.xor.s32 s, %1, %2, r;\n\t"     // s = (x != y) ^ r
      "and.pred p, p, s;\n\t"
      "or.pred q, q, !s;\n\t"
      "xor.pred r, r, p;\n\t"
      "not.pred s, s;\n\t"
      "mov.u32 %0, 0;\n\t"
      "@p add.u32 %0, %0, 1;\n\t"
      "@!q add.u32 %0, %0, 2;\n\t"
      "@r add.u32 %0, %0, 4;\n\t"
      "@s add.u32 %0, %0, 8;\n\t"
      "}"
      : "=r"(comb) : "r"(x), "r"(y));
  // C-level predicate combination (compiler decides and/or/not of preds)
  bool c1 = (x < y) && (p > q);
  bool c2 = (x == 0) || (q != q);
  bool c3 = c1 != c2;
  out[4 * i + 0] = s1 ^ s2;
  out[4 * i + 1] = s4 + comb;
  out[4 * i + 2] = (unsigned)sl1;
  out[4 * i + 3] = (c1 ? 1 : 0) | (c2 ? 2 : 0) | (!c3 ? 4 : 0);
  fout[2 * i + 0] = s3;
  fout[2 * i + 1] = c3 ? sl2 : p;
}
