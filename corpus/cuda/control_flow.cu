// control_flow.cu -- branches, loops, calls and abnormal termination.
//
// Covers: divergent if/else on lane parity, loops with lane-dependent trip
// counts, early return of some threads, a dense switch (jump table ->
// brx.idx where the compiler chooses one) and a sparse switch, __noinline__
// device functions with scalar/pointer params and return values (call with
// .param), a recursive device function (call stack, local frame), indirect
// calls through a __device__ function-pointer table (call through
// .callprototype), __trap() (trap), exit via asm, __builtin_unreachable,
// a [[noreturn]] helper (.noreturn), __builtin_expect, nested loops with
// break/continue, and do/while, goto.

__device__ __noinline__ int add_scaled(int a, int b, float s) {
  return a + (int)((float)b * s);
}

__device__ __noinline__ void write_pair(int *p, int a, long long b) {
  p[0] = a;
  p[1] = (int)(b >> 32) ^ (int)b;
}

__device__ __noinline__ float3 make_vec(float a) {   // struct return
  return make_float3(a, a * 2.0f, a * 3.0f);
}

__device__ __noinline__ int fib(int n) {              // recursion
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}

__device__ __noinline__ int factorial_acc(int n, int acc) {
  return n <= 1 ? acc : factorial_acc(n - 1, acc * n);
}

typedef int (*binop_t)(int, int);
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_xor(int a, int b) { return a ^ b; }
__device__ binop_t g_ops[4] = {op_add, op_sub, op_mul, op_xor};

extern "C" __global__ void divergent_if_else(const int *in, int *out) {
  int i = threadIdx.x;
  int v = in[i];
  if (i & 1) {
    v = v * 3 + 1;
  } else {
    v = v / 2;
  }
  if ((i & 3) == 0) {
    if (v > 10) v -= 10;
    else v += 100;
  }
  out[i] = v;
}

extern "C" __global__ void loops(const int *in, int *out) {
  int i = threadIdx.x;
  int trip = (i % 32) + 1;
  int s = 0;
  for (int k = 0; k < trip; ++k) s += in[k];
  int j = 0;
  do {
    j += 3;
    if (j % 7 == 0) continue;
    s ^= j;
  } while (j < trip * 2);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a * b > i) break;
      s += a - b;
    }
  }
  int n = in[i] & 15;
again:
  if (n > 0) { s += n; n -= 2; goto again; }
  out[i] = s;
}

extern "C" __global__ void early_return(const int *in, int *out, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;                 // tail threads leave
  int v = in[i];
  if (v < 0) { out[i] = 0; return; }  // data-dependent exit
  out[i] = v * 2;
}

extern "C" __global__ void switch_dense(const int *in, int *out) {
  int i = threadIdx.x;
  int v = in[i];
  int r;
  switch (v & 15) {
    case 0: r = v + 11; break;
    case 1: r = v * 7; break;
    case 2: r = v ^ 0x55; break;
    case 3: r = v - 99; break;
    case 4: r = v << 3; break;
    case 5: r = v >> 2; break;
    case 6: r = ~v; break;
    case 7: r = v * v; break;
    case 8: r = v | 0x100; break;
    case 9: r = v & 0xF0F; break;
    case 10: r = v + in[i + 1]; break;
    case 11: r = v - in[i + 2]; break;
    case 12: r = in[v & 63]; break;
    case 13: r = 1313; break;
    case 14: r = -v; break;
    default: r = 0; break;
  }
  out[i] = r;
}

extern "C" __global__ void switch_sparse(const int *in, int *out) {
  int i = threadIdx.x;
  int v = in[i];
  int r;
  switch (v) {
    case -1000: r = 1; break;
    case 7: r = 2; break;
    case 4096: r = 3; break;
    case 123456: r = 4; break;
    default: r = v;
  }
  out[i] = r;
}

extern "C" __global__ void calls(const int *in, int *out, float *fout) {
  int i = threadIdx.x;
  out[4 * i + 0] = add_scaled(in[i], i, 0.5f);
  write_pair(&out[4 * i + 1], i, (long long)in[i] << 20);
  out[4 * i + 3] = fib(i % 12) + factorial_acc(i % 8, 1);
  float3 v = make_vec((float)i);
  fout[i] = v.x + v.y + v.z;
}

extern "C" __global__ void indirect_calls(const int *in, int *out) {
  int i = threadIdx.x;
  binop_t f = g_ops[in[i] & 3];
  out[i] = f(in[i], i);               // call through a prototype
  binop_t local_tbl[2] = {op_mul, op_add};
  out[i] += local_tbl[i & 1](i, 3);
}

[[noreturn]] __device__ __noinline__ void fatal(int code) {
  printf("fatal %d\n", code);
  __trap();
}

extern "C" __global__ void trap_and_exit(const int *in, int *out) {
  int i = threadIdx.x;
  int v = in[i];
  if (v == -1) __trap();                       // trap
  if (v == -2) asm volatile("exit;");          // thread exits
  if (v == -3) fatal(v);                       // noreturn call
  if (__builtin_expect(v == -4, 0)) asm volatile("trap;");
  switch (v & 3) {
    case 0: out[i] = 1; break;
    case 1: out[i] = 2; break;
    case 2: out[i] = 3; break;
    case 3: out[i] = 4; break;
    default: __builtin_unreachable();
  }
  if (v == -5) __brkpt();                      // brkpt
}

// nvcc lowers switches to compare trees, never brx.idx; spell an indexed
// branch through a .branchtargets table in asm so the instruction appears
// in compiler-wrapped PTX too.
extern "C" __global__ void switch_brx_asm(const int *in, int *out) {
  int i = threadIdx.x;
  unsigned sel = (unsigned)in[i] & 3u;
  int r;
  asm volatile("{\n\t"
               "ts: .branchtargets Lc0, Lc1, Lc2, Lc3;\n\t"
               "brx.idx %1, ts;\n\t"
               "Lc0: mov.u32 %0, 10; bra.uni Ldone;\n\t"
               "Lc1: mov.u32 %0, 11; bra.uni Ldone;\n\t"
               "Lc2: mov.u32 %0, 12; bra.uni Ldone;\n\t"
               "Lc3: mov.u32 %0, 13;\n\t"
               "Ldone:\n\t"
               "}"
               : "=r"(r) : "r"(sel));
  out[i] = r;
}
