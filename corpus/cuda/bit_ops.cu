// bit_ops.cu -- logic, shifts and bit manipulation.
//
// Covers: and/or/xor/not/cnot at 16/32/64 bits, shl/shr (logical and
// arithmetic, 32/64, clamped and variable amounts), funnel shifts
// (__funnelshift_l/r/lc/rc -> shf.l/r.wrap/clamp), rotations, bfe/bfi
// (explicit asm, signed and unsigned, 32/64), brev (__brev/__brevll), popc
// (__popc/__popcll), clz (__clz/__clzll), bfind (asm, incl. .shiftamt),
// fns (__fns), prmt (__byte_perm and asm prmt modes), __ffs/__ffsll,
// lop3 (from combined logic on sm_50+), mul24.lo via asm.

extern "C" __global__ void logic_shift(const unsigned *a, const unsigned *b,
                                       const unsigned long long *c,
                                       const int *s, unsigned *out,
                                       unsigned long long *out64) {
  int i = threadIdx.x;
  unsigned x = a[i], y = b[i];
  unsigned long long z = c[i];
  int sh = s[i];
  out[8 * i + 0] = (x & y) | (~x & 0xF0F0F0F0u);
  out[8 * i + 1] = x ^ y ^ (x | ~y);
  out[8 * i + 2] = x << (sh & 31);
  out[8 * i + 3] = x >> (sh & 31);
  out[8 * i + 4] = (unsigned)(((int)x) >> (sh & 31));   // shr.s32
  out[8 * i + 5] = __funnelshift_l(x, y, sh) ^ __funnelshift_r(x, y, sh);
  out[8 * i + 6] = __funnelshift_lc(x, y, sh) + __funnelshift_rc(x, y, sh);
  out[8 * i + 7] = (x << 7) | (x >> 25);                // rotate
  out64[3 * i + 0] = z << (sh & 63) | (z >> (64 - (sh & 63)));
  out64[3 * i + 1] = (unsigned long long)(((long long)z) >> (sh & 63));
  out64[3 * i + 2] = ~z ^ (z & 0xFFFF0000FFFF0000ull);
  // 16-bit logic and cnot via asm
  unsigned short h = (unsigned short)x, hn, hc;
  asm("not.b16 %0, %1;" : "=h"(hn) : "h"(h));
  asm("cnot.b16 %0, %1;" : "=h"(hc) : "h"(h));
  unsigned cn;
  asm("cnot.b32 %0, %1;" : "=r"(cn) : "r"(x));
  unsigned big;
  asm("shl.b32 %0, %1, 40;" : "=r"(big) : "r"(x));  // shift >= width -> 0
  out[8 * i + 7] += hn + hc + cn + big;
}

extern "C" __global__ void bit_manip(const unsigned *a, const unsigned *b,
                                     const unsigned long long *c,
                                     unsigned *out, unsigned long long *out64) {
  int i = threadIdx.x;
  unsigned x = a[i], y = b[i];
  unsigned long long z = c[i];
  int k = 0;
  out[16 * i + k++] = __brev(x);
  out[16 * i + k++] = __popc(x) + __popcll(z);
  out[16 * i + k++] = __clz(x) + __clzll(z);
  out[16 * i + k++] = __ffs(x) + __ffsll(z);
  out[16 * i + k++] = __byte_perm(x, y, 0x3210 + (i & 0x7));
  out[16 * i + k++] = __fns(x, i & 31, 1) ^ __fns(x, 31, -2);
  unsigned bfe_u, bfi_r, bfind_r, bfind_s, prmt_f;
  int bfe_s, bfind_i;
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(bfe_u) : "r"(x), "r"(i & 15), "r"(9));
  asm("bfe.s32 %0, %1, 4, 12;" : "=r"(bfe_s) : "r"(x));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(bfi_r) : "r"(y), "r"(x), "r"(8), "r"(i & 7));
  asm("bfind.u32 %0, %1;" : "=r"(bfind_r) : "r"(x));
  asm("bfind.shiftamt.u32 %0, %1;" : "=r"(bfind_s) : "r"(x));
  asm("bfind.s32 %0, %1;" : "=r"(bfind_i) : "r"((int)y));
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(prmt_f) : "r"(x), "r"(y), "r"(i));
  unsigned prmt_b4e, prmt_rc8, prmt_ecl, prmt_ecr, prmt_rc16;
  asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(prmt_b4e) : "r"(x), "r"(y), "r"(i));
  asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(prmt_rc8) : "r"(x), "r"(y), "r"(i));
  asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(prmt_ecl) : "r"(x), "r"(y), "r"(i));
  asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(prmt_ecr) : "r"(x), "r"(y), "r"(i));
  asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(prmt_rc16) : "r"(x), "r"(y), "r"(i));
  out[16 * i + k++] = bfe_u;
  out[16 * i + k++] = (unsigned)bfe_s;
  out[16 * i + k++] = bfi_r;
  out[16 * i + k++] = bfind_r + bfind_s + (unsigned)bfind_i;
  out[16 * i + k++] = prmt_f ^ prmt_b4e ^ prmt_rc8 ^ prmt_ecl ^ prmt_ecr ^ prmt_rc16;
  // 64-bit bfe/bfi/brev/bfind
  unsigned long long bfe64, bfi64, brev64;
  unsigned bfind64;
  asm("bfe.u64 %0, %1, %2, %3;" : "=l"(bfe64) : "l"(z), "r"(i & 31), "r"(20));
  asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(bfi64) : "l"(z), "l"((unsigned long long)x), "r"(16), "r"(24));
  asm("brev.b64 %0, %1;" : "=l"(brev64) : "l"(z));
  asm("bfind.u64 %0, %1;" : "=r"(bfind64) : "l"(z));
  out64[3 * i + 0] = bfe64 ^ bfi64;
  out64[3 * i + 1] = brev64 + __brevll(z);
  out64[3 * i + 2] = bfind64;
  // lop3 directly, and mul24
  unsigned l3, m24, m24h;
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(l3) : "r"(x), "r"(y), "r"(~x));
  asm("mul24.lo.u32 %0, %1, %2;" : "=r"(m24) : "r"(x), "r"(y));
  asm("mul24.hi.s32 %0, %1, %2;" : "=r"(m24h) : "r"(x), "r"(y));
  out[16 * i + k++] = l3;
  out[16 * i + k++] = m24 + m24h;
  // test bits: count of set bits in lower half via masks
  out[16 * i + k++] = (x & (1u << (i & 31))) ? 1u : 0u;
}
