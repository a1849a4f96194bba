// templates: C++ in device code.
//  * a template kernel instantiated for int, float and double;
//  * functors (stateless and stateful) and extended lambdas (__device__ and
//    __host__ __device__, built with --extended-lambda) passed to a template
//    kernel;
//  * template recursion and a C++17 fold expression in device code;
//  * a __device__ table of device function pointers (indirect calls), and a
//    function pointer read from that table with cudaMemcpyFromSymbol and passed
//    to a kernel as an argument;
//  * virtual functions: objects built with placement new in one kernel and
//    called through base pointers in another.
#include "common.h"
#include <new>

template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T, typename Op>
__global__ void transform(const T* in, T* out, int n, Op op) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = op(in[i]);
}

struct Square {
  template <typename T>
  __device__ T operator()(T v) const { return v * v; }
};

struct AddK {
  int k;
  __device__ int operator()(int v) const { return v + k; }
};

template <int N>
struct Pow {
  template <typename T>
  __device__ static T apply(T v) { return v * Pow<N - 1>::apply(v); }
};
template <>
struct Pow<0> {
  template <typename T>
  __device__ static T apply(T) { return T(1); }
};

template <int N, typename T>
__global__ void pow_kernel(T* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = Pow<N>::apply(d[i]);
}

template <typename... Args>
__device__ int sum_all(Args... args) { return (args + ... + 0); }

__global__ void variadic(int* out) {
  out[0] = sum_all(1, 2, 3, 4, 5);
  out[1] = sum_all();
  out[2] = sum_all(10, -3);
}

// ---- device function pointers ----
typedef int (*binop_t)(int, int);
__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_sub(int a, int b) { return a - b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ int op_max(int a, int b) { return a > b ? a : b; }
__device__ binop_t d_ops[4] = {op_add, op_sub, op_mul, op_max};

__global__ void apply_ops(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = d_ops[i % 4](a[i], b[i]);
}

__global__ void apply_fp(binop_t f, int a, int b, int* out) { *out = f(a, b); }

// ---- virtual functions ----
struct Shape {
  __device__ virtual ~Shape() {}
  __device__ virtual int area() const = 0;
  __device__ virtual int id() const { return 0; }
};
struct Rect : Shape {
  int w, h;
  __device__ Rect(int w_, int h_) : w(w_), h(h_) {}
  __device__ int area() const override { return w * h; }
  __device__ int id() const override { return 1; }
};
struct Tri : Shape {
  int b, h;
  __device__ Tri(int b_, int h_) : b(b_), h(h_) {}
  __device__ int area() const override { return b * h / 2; }
  __device__ int id() const override { return 2; }
};
const int kSlot = 32;  // bytes per object slot: >= sizeof(Rect), sizeof(Tri)

__global__ void build_shapes(Shape** objs, char* storage, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    void* slot = storage + (size_t)i * kSlot;
    if (i % 2 == 0)
      objs[i] = new (slot) Rect(i + 1, i + 2);
    else
      objs[i] = new (slot) Tri(2 * i + 2, i + 3);
  }
}

__global__ void use_shapes(Shape* const* objs, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = objs[i]->area() * 10 + objs[i]->id();
}

__global__ void destroy_shapes(Shape** objs, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) objs[i]->~Shape();
}

template <typename T>
static long long run_axpy(const char* name, int n) {
  T *hx = new T[n], *hy = new T[n], *res = new T[n];
  for (int i = 0; i < n; i++) {
    hx[i] = (T)(i % 100 - 50);
    hy[i] = (T)(3 * i % 7);
  }
  T *dx, *dy;
  CHECK(cudaMalloc(&dx, n * sizeof(T)));
  CHECK(cudaMalloc(&dy, n * sizeof(T)));
  CHECK(cudaMemcpy(dx, hx, n * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, hy, n * sizeof(T), cudaMemcpyHostToDevice));
  axpy<T><<<(n + 127) / 128, 128>>>((T)2, dx, dy, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(res, dy, n * sizeof(T), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int i = 0; i < n; i++) {
    T want = (T)2 * hx[i] + hy[i];
    if (res[i] != want) FAIL("axpy<%s>[%d] = %f, expected %f", name, i, (double)res[i], (double)want);
    sum += (long long)res[i];
  }
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  delete[] hx;
  delete[] hy;
  delete[] res;
  return sum;
}

int main() {
  const int n = 1000;
  const int block = 128, grid = (n + block - 1) / block;
  printf("templates: n=%d\n", n);

  long long si = run_axpy<int>("int", n);
  long long sf = run_axpy<float>("float", n);
  long long sd = run_axpy<double>("double", n);
  printf("axpy<int> %lld, axpy<float> %lld, axpy<double> %lld\n", si, sf, sd);

  // ---- functors and lambdas through one template kernel ----
  int *hin = new int[n], *hout = new int[n];
  double *hdin = new double[n], *hdout = new double[n];
  float *hfin = new float[n], *hfout = new float[n];
  for (int i = 0; i < n; i++) {
    hin[i] = i - 500;
    hdin[i] = (i - 500) * 0.5;
    hfin[i] = (float)(i % 64) * 0.25f;
  }
  int *din, *dout;
  double *ddin, *ddout;
  float *dfin, *dfout;
  CHECK(cudaMalloc(&din, n * sizeof(int)));
  CHECK(cudaMalloc(&dout, n * sizeof(int)));
  CHECK(cudaMalloc(&ddin, n * sizeof(double)));
  CHECK(cudaMalloc(&ddout, n * sizeof(double)));
  CHECK(cudaMalloc(&dfin, n * sizeof(float)));
  CHECK(cudaMalloc(&dfout, n * sizeof(float)));
  CHECK(cudaMemcpy(din, hin, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ddin, hdin, n * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dfin, hfin, n * sizeof(float), cudaMemcpyHostToDevice));

  transform<<<grid, block>>>(din, dout, n, Square());
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int i = 0; i < n; i++) {
    if (hout[i] != hin[i] * hin[i]) FAIL("Square<int>[%d] = %d, expected %d", i, hout[i], hin[i] * hin[i]);
    sum += hout[i];
  }
  printf("functor Square<int>: sum %lld\n", sum);

  transform<<<grid, block>>>(ddin, ddout, n, Square());
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hdout, ddout, n * sizeof(double), cudaMemcpyDeviceToHost));
  double dsum = 0;
  for (int i = 0; i < n; i++) {
    if (hdout[i] != hdin[i] * hdin[i]) FAIL("Square<double>[%d] = %f, expected %f", i, hdout[i], hdin[i] * hdin[i]);
    dsum += hdout[i];
  }
  printf("functor Square<double>: sum %.2f\n", dsum);

  transform<<<grid, block>>>(din, dout, n, AddK{-17});
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (hout[i] != hin[i] - 17) FAIL("AddK[%d] = %d, expected %d", i, hout[i], hin[i] - 17);
  printf("stateful functor AddK{-17}: out[0] %d, out[%d] %d\n", hout[0], n - 1, hout[n - 1]);

  int k = 7;
  auto dev_lambda = [=] __device__(int v) { return v * k + 1; };
  transform<<<grid, block>>>(din, dout, n, dev_lambda);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (hout[i] != hin[i] * 7 + 1) FAIL("__device__ lambda[%d] = %d, expected %d", i, hout[i], hin[i] * 7 + 1);
  printf("__device__ lambda (captures k=%d): out[0] %d, out[%d] %d\n", k, hout[0], n - 1, hout[n - 1]);

  float offset = 2.0f;
  auto hd_lambda = [=] __host__ __device__(float v) { return v * 0.5f + offset; };
  transform<<<grid, block>>>(dfin, dfout, n, hd_lambda);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hfout, dfout, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (hfout[i] != hd_lambda(hfin[i])) FAIL("__host__ __device__ lambda[%d] = %f, expected %f", i, hfout[i], hd_lambda(hfin[i]));
  printf("__host__ __device__ lambda: out[63] %g\n", hfout[63]);

  // ---- template recursion and fold expressions ----
  for (int i = 0; i < n; i++) hin[i] = i % 5 - 2;
  CHECK(cudaMemcpy(din, hin, n * sizeof(int), cudaMemcpyHostToDevice));
  pow_kernel<5, int><<<grid, block>>>(din, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, din, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int v = hin[i], want = v * v * v * v * v;
    if (hout[i] != want) FAIL("Pow<5>[%d] = %d, expected %d", i, hout[i], want);
  }
  printf("Pow<5>: %d %d %d %d %d\n", hout[0], hout[1], hout[2], hout[3], hout[4]);
  pow_kernel<3, double><<<grid, block>>>(ddin, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hdout, ddin, n * sizeof(double), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (hdout[i] != hdin[i] * hdin[i] * hdin[i]) FAIL("Pow<3,double>[%d] = %f", i, hdout[i]);
  printf("Pow<3, double>: %g %g\n", hdout[0], hdout[n - 1]);
  variadic<<<1, 1>>>(dout);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, dout, 3 * sizeof(int), cudaMemcpyDeviceToHost));
  printf("fold expressions: %d %d %d\n", hout[0], hout[1], hout[2]);

  // ---- device function pointer table ----
  int *ha = new int[n], *hb = new int[n];
  for (int i = 0; i < n; i++) {
    ha[i] = i % 13 - 6;
    hb[i] = i % 7 - 3;
  }
  int *da, *db;
  CHECK(cudaMalloc(&da, n * sizeof(int)));
  CHECK(cudaMalloc(&db, n * sizeof(int)));
  CHECK(cudaMemcpy(da, ha, n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, n * sizeof(int), cudaMemcpyHostToDevice));
  apply_ops<<<grid, block>>>(da, db, dout, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  sum = 0;
  for (int i = 0; i < n; i++) {
    int a = ha[i], b = hb[i], want;
    switch (i % 4) {
      case 0: want = a + b; break;
      case 1: want = a - b; break;
      case 2: want = a * b; break;
      default: want = a > b ? a : b; break;
    }
    if (hout[i] != want) FAIL("function pointer table [%d] = %d, expected %d", i, hout[i], want);
    sum += hout[i];
  }
  printf("device function pointer table: checksum %lld\n", sum);
  binop_t fp = nullptr;
  CHECK(cudaMemcpyFromSymbol(&fp, d_ops, sizeof(binop_t), 2 * sizeof(binop_t)));
  apply_fp<<<1, 1>>>(fp, 6, 7, dout);
  CHECK_LAUNCH();
  int r = 0;
  CHECK(cudaMemcpy(&r, dout, sizeof(int), cudaMemcpyDeviceToHost));
  printf("function pointer passed from the host: op_mul(6, 7) = %d\n", r);

  // ---- virtual functions ----
  const int ns = 8;
  Shape** objs;
  char* storage;
  CHECK(cudaMalloc(&objs, ns * sizeof(Shape*)));
  CHECK(cudaMalloc(&storage, ns * kSlot));
  build_shapes<<<1, 32>>>(objs, storage, ns);
  CHECK_LAUNCH();
  use_shapes<<<1, 32>>>(objs, dout, ns);
  CHECK_LAUNCH();
  destroy_shapes<<<1, 32>>>(objs, ns);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, dout, ns * sizeof(int), cudaMemcpyDeviceToHost));
  printf("virtual calls:");
  for (int i = 0; i < ns; i++) {
    int want = (i % 2 == 0) ? (i + 1) * (i + 2) * 10 + 1 : (2 * i + 2) * (i + 3) / 2 * 10 + 2;
    if (hout[i] != want) FAIL("virtual call [%d] = %d, expected %d", i, hout[i], want);
    printf(" %d", hout[i]);
  }
  printf("\n");

  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
  CHECK(cudaFree(ddin));
  CHECK(cudaFree(ddout));
  CHECK(cudaFree(dfin));
  CHECK(cudaFree(dfout));
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(objs));
  CHECK(cudaFree(storage));
  delete[] hin;
  delete[] hout;
  delete[] hdin;
  delete[] hdout;
  delete[] hfin;
  delete[] hfout;
  delete[] ha;
  delete[] hb;
  printf("PASSED\n");
  return 0;
}
