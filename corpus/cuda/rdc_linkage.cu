// rdc_linkage.cu -- linkage as seen with relocatable device code.
//
// Compiled normally (whole-program: O3/lineinfo/G variants) and with
// -rdc=true ("rdc" variant). With -rdc=true the PTX contains .extern .func
// declarations for device functions defined in another translation unit,
// .extern .global variables, .visible .func definitions callable from other
// units, and .weak definitions for inline/template functions (the
// __CUDACC_RDC__ guard keeps the whole-program build self-contained).

#ifdef __CUDACC_RDC__
extern __device__ int ext_counter;                 // -> .extern .global
extern __device__ float ext_transform(float x);    // -> .extern .func
#else
__device__ int ext_counter;
__device__ __noinline__ float ext_transform(float x) { return x * 0.5f; }
#endif

__device__ int visible_state = 5;                  // .visible .global under rdc
static __device__ int internal_state = 7;          // internal linkage

// Visible (externally callable) device function.
__device__ __noinline__ float shared_helper(float x) { return x * x + (float)internal_state; }

// Inline function with external linkage -> .weak .func under rdc.
template <typename T>
__device__ __noinline__ T weak_tmpl(T x) { return x + (T)visible_state; }

static __device__ __noinline__ int local_helper(int x) { return x ^ internal_state; }

extern "C" __global__ void rdc_kernel(float *data, int *counts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  data[i] = ext_transform(shared_helper(data[i])) + weak_tmpl<float>(1.0f);
  counts[i] = local_helper(weak_tmpl<int>(i));
  atomicAdd(&ext_counter, 1);
}
