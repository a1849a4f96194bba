// memory.cu -- state spaces, widths, vectors, cache operators, addressing.
//
// Covers: global ld/st at 8/16/32/64 bits and as vectors (char4, short2,
// float2, float4, int4, double2, longlong2), __ldg (ld.global.nc), cache
// operators (__ldca/__ldcg/__ldcs/__ldlu/__ldcv, __stwb/__stcg/__stcs/__stwt),
// volatile loads/stores (ld.volatile), a dynamically indexed local array
// (.local), static __shared__ arrays with __syncthreads, dynamic
// extern __shared__, __constant__ arrays (ld.const), module-scope __device__
// globals with initializers incl. an array of pointers to other globals
// (generic(var) initializers) and a pointer into the middle of an array
// (var+8), cvta / generic addressing through a __device__ __noinline__
// function that is called with both a shared and a global pointer,
// __isShared/__isGlobal (isspacep), prefetch via asm, ld.global.v4 with
// .L1::no_allocate style qualifiers left to the compiler.

__constant__ float c_coeffs[16] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f,
                                   9.0f, 10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f};
__constant__ int c_table[4];   // uninitialised constant: set by the host

__device__ int g_counter = 42;
__device__ float g_scale[4] = {0.5f, 1.5f, 2.5f, 3.5f};
__device__ int g_a[3] = {1, 2, 3};
__device__ int g_b[2] = {10, 20};
__device__ long long g_wide = -1234567890123LL;
__device__ unsigned char g_bytes[5] = {1, 2, 3, 0xfe, 0xff};
__device__ double g_dbl = 2.718281828459045;
// Array of pointers to other globals -> generic(g_a) style initializers.
__device__ int *g_ptrs[3] = {g_a, g_b, &g_counter};
// Pointer to an interior element -> "generic(g_a)+8".
__device__ int *g_interior = &g_a[2];
struct Pair { int x; float y; };
__device__ Pair g_pairs[2] = {{1, 1.5f}, {2, 2.5f}};
__device__ int g_uninit[8];

extern "C" __global__ void global_widths(const char *c8, const short *s16,
                                         const int *i32, const long long *i64,
                                         char *o8, short *o16, int *o32,
                                         long long *o64) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  o8[i] = c8[i] + 1;
  o16[i] = s16[i] * 2;
  o32[i] = i32[i] - 3;
  o64[i] = i64[i] << 1;
}

extern "C" __global__ void global_vectors(const float2 *f2, const float4 *f4,
                                          const int4 *i4, const double2 *d2,
                                          const char4 *c4, const short2 *s2,
                                          const longlong2 *l2,
                                          float4 *of4, int4 *oi4, double2 *od2,
                                          char4 *oc4, short2 *os2,
                                          longlong2 *ol2) {
  int i = threadIdx.x;
  float2 a = f2[i];
  float4 b = f4[i];
  int4 c = i4[i];
  double2 d = d2[i];
  of4[i] = make_float4(a.x + b.x, a.y + b.y, b.z, b.w);
  oi4[i] = make_int4(c.w, c.z, c.y, c.x);
  od2[i] = make_double2(d.y, d.x);
  char4 e = c4[i];
  oc4[i] = make_char4(e.w, e.z, e.y, e.x);
  short2 s = s2[i];
  os2[i] = make_short2(s.y, s.x);
  longlong2 l = l2[i];
  ol2[i] = make_longlong2(l.y, l.x);
}

extern "C" __global__ void cache_ops(const float *a, const float4 *b,
                                     const int *c, float *out, float4 *out4,
                                     int *outi) {
  int i = threadIdx.x;
  float x = __ldg(&a[i]);              // ld.global.nc
  float4 v = __ldg(&b[i]);             // ld.global.nc.v4
  float y = __ldcg(&a[i + 1]);         // ld.global.cg
  float z = __ldcs(&a[i + 2]);         // ld.global.cs
  float w = __ldca(&a[i + 3]);         // ld.global.ca
  float u = __ldlu(&a[i + 4]);         // ld.global.lu
  float t = __ldcv(&a[i + 5]);         // ld.global.cv
  int q = __ldg(&c[i]);
  __stcs(&out[i], x + y);              // st.global.cs
  __stwt(&out[i + 64], z + w);         // st.global.wt
  __stcg(&out[i + 128], u + t);        // st.global.cg
  __stwb(&out[i + 192], x);            // st.global.wb
  __stcs(&out4[i], v);
  outi[i] = q;
  asm volatile("prefetch.global.L2 [%0];" :: "l"(a + i + 256));
  asm volatile("prefetch.global.L1 [%0];" :: "l"(a + i + 512));
}

extern "C" __global__ void volatile_ops(volatile int *flag, volatile float *v,
                                        int *out) {
  int i = threadIdx.x;
  v[i] = (float)i;                     // st.volatile.global
  int f = flag[0];                     // ld.volatile.global
  int s = 0;
  for (int k = 0; k < 4; ++k) s += flag[k];  // each read kept
  out[i] = f + s + (int)v[i];
}

// Local memory: a dynamically indexed private array cannot live in registers.
extern "C" __global__ void local_array(const int *idx, const float *in,
                                       float *out) {
  float buf[32];
  int i = threadIdx.x;
  for (int k = 0; k < 32; ++k) buf[k] = in[(i + k) & 255] * (float)k;
  int j = idx[i] & 31;
  buf[j] += 1.0f;                       // st.local
  out[i] = buf[(j * 7) & 31] + buf[j];  // ld.local
}

extern "C" __global__ void shared_static(const float *in, float *out) {
  __shared__ float tile[256];
  __shared__ int counts[8];
  int i = threadIdx.x;
  if (i < 8) counts[i] = 0;
  tile[i] = in[blockIdx.x * blockDim.x + i];
  __syncthreads();
  atomicAdd(&counts[i & 7], 1);
  float s = tile[(i + 1) & 255] + tile[(i + 255) & 255];
  __syncthreads();
  out[blockIdx.x * blockDim.x + i] = s + (float)counts[i & 7];
}

extern "C" __global__ void shared_dynamic(const float *in, float *out, int n) {
  extern __shared__ float dyn[];
  int i = threadIdx.x;
  double *dd = reinterpret_cast<double *>(dyn + n);   // second region
  dyn[i] = in[i];
  dd[i] = (double)in[i] * 2.0;
  __syncthreads();
  out[i] = dyn[(i + 1) % blockDim.x] + (float)dd[(i + 3) % blockDim.x];
}

extern "C" __global__ void const_and_globals(const int *in, float *out, int *iout) {
  int i = threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < 16; ++k) acc += c_coeffs[k] * (float)in[(i + k) & 63];
  out[i] = acc + c_coeffs[in[i] & 15] * g_scale[i & 3];   // indexed ld.const
  int *p = g_ptrs[i % 3];                                 // ld.global of a generic pointer
  iout[4 * i + 0] = p[0] + *g_interior + c_table[i & 3];
  iout[4 * i + 1] = (int)g_wide + g_bytes[i % 5] + g_pairs[i & 1].x;
  iout[4 * i + 2] = (int)(g_dbl * 1000.0) + (int)g_pairs[1].y;
  g_uninit[i & 7] = i;
  if (i == 0) g_counter += 1;
  iout[4 * i + 3] = g_uninit[(i + 1) & 7];
}

// Generic addressing: the same non-inlined function is called with a shared
// and a global pointer, so it must use generic ld/st and the callers cvta.
__device__ __noinline__ float accumulate_generic(float *p, int n, float bias) {
  float s = bias;
  for (int k = 0; k < n; ++k) s += p[k];
  p[0] = s;
  return s;
}

__device__ __noinline__ int which_space(const void *p) {
  return (__isShared(p) ? 1 : 0) | (__isGlobal(p) ? 2 : 0) | (__isLocal(p) ? 4 : 0) |
         (__isConstant(p) ? 8 : 0);
}

extern "C" __global__ void generic_addressing(float *g, float *out, int *space) {
  __shared__ float sh[64];
  int i = threadIdx.x;
  float loc[4] = {1.0f, 2.0f, 3.0f, (float)i};
  sh[i] = g[i];
  __syncthreads();
  float a = 0.0f;
  if (i == 0) {
    a += accumulate_generic(sh, 64, 1.0f);   // shared -> generic
    a += accumulate_generic(g, 64, 2.0f);    // global -> generic
  }
  a += accumulate_generic(loc, 4, 0.0f);     // local -> generic
  out[i] = a;
  space[3 * i + 0] = which_space(sh + i);
  space[3 * i + 1] = which_space(g + i);
  space[3 * i + 2] = which_space(&c_coeffs[i & 15]);
  unsigned long long gen = (unsigned long long)(sh + i), sp;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(sp) : "l"(gen));
  unsigned long long back;
  asm("cvta.shared.u64 %0, %1;" : "=l"(back) : "l"(sp));
  if (back != gen) out[i] = -1.0f;
}
