// cpp_features.cu -- C++ surface features and kernel attributes.
//
// Covers: function templates instantiated for several types (mangled entry
// names such as _Z10scale_tmplIfEvPT_S0_i), a template with a non-type
// parameter, a kernel inside a namespace, an overloaded kernel,
// __launch_bounds__(256, 2) (-> .maxntid 256, 1, 1 / .minnctapersm 2),
// __launch_bounds__(128) alone, __restrict__ pointers (ld.global.nc
// eligible), a struct passed by value as a kernel parameter (-> .param
// .align 8 .b8 name[N]), a struct with mixed members returned from a device
// function, lambdas, constexpr and a class with member functions.

template <typename T>
__global__ void scale_tmpl(T *data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * factor;
}
template __global__ void scale_tmpl<float>(float *, float, int);
template __global__ void scale_tmpl<double>(double *, double, int);
template __global__ void scale_tmpl<int>(int *, int, int);

template <int N>
__global__ void unrolled_sum(const float *in, float *out) {
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < N; ++k) s += in[threadIdx.x * N + k];
  out[threadIdx.x] = s;
}
template __global__ void unrolled_sum<4>(const float *, float *);
template __global__ void unrolled_sum<8>(const float *, float *);

namespace lockstep_fixture {
__global__ void ns_kernel(int *p) { p[threadIdx.x] = threadIdx.x * 2; }
}  // namespace lockstep_fixture

// Overloads (only distinguishable by mangling).
__global__ void overloaded(float *p) { p[threadIdx.x] += 1.0f; }
__global__ void overloaded(int *p, int v) { p[threadIdx.x] += v; }

extern "C" __global__ void __launch_bounds__(256, 2)
bounded_kernel(const float *__restrict__ a, const float *__restrict__ b,
               float *__restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * b[i] + a[i];
}

extern "C" __global__ void __launch_bounds__(128)
bounded_kernel_maxonly(float *p) { p[threadIdx.x] *= 2.0f; }

struct Params {
  float scale;
  int offset;
  double bias;
  const float *src;
  float *dst;
  int n;
  short tag[3];
};

extern "C" __global__ void struct_by_value(Params p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) p.dst[i] = p.src[(i + p.offset) % p.n] * p.scale + (float)p.bias + p.tag[i % 3];
}

struct alignas(16) Vec4 { float x, y, z, w; };
extern "C" __global__ void struct_aligned16(Vec4 v, Vec4 *out) {
  Vec4 r = {v.x + threadIdx.x, v.y, v.z, v.w};
  out[threadIdx.x] = r;
}

class Accum {
 public:
  __device__ explicit Accum(float init) : sum_(init), n_(0) {}
  __device__ void add(float v) { sum_ += v; ++n_; }
  __device__ float mean() const { return n_ ? sum_ / n_ : 0.0f; }
 private:
  float sum_;
  int n_;
};

constexpr int kWindow = 5;

extern "C" __global__ void class_and_lambda(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  auto clampi = [n](int j) { return j < 0 ? 0 : (j >= n ? n - 1 : j); };
  Accum acc(0.0f);
  for (int k = -kWindow / 2; k <= kWindow / 2; ++k) acc.add(in[clampi(i + k)]);
  if (i < n) out[i] = acc.mean();
}
