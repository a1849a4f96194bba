// tensor_core.cu -- warp matrix multiply-accumulate (parse-only coverage).
//
// Covers: nvcuda::wmma 16x16x16 half x half -> float (wmma.load.a/b,
// wmma.mma.sync, wmma.store.d, fill_fragment), row/col layouts, a
// bf16 variant (sm_80+), a raw mma.sync.aligned.m16n8k16 (sm_80+) and
// ldmatrix (sm_75+) in asm. Guarded by __CUDA_ARCH__: on targets below
// sm_70 the kernels compile to trivial bodies.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
using namespace nvcuda;
#endif

// One warp computes one 16x16 tile: C = A (16x16 row-major) * B (col-major) + C.
extern "C" __global__ void wmma_16x16x16_f16_f32(const half *a, const half *b, float *c) {
#if __CUDA_ARCH__ >= 700
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
#endif
}

extern "C" __global__ void wmma_16x16x16_f16_f16(const half *a, const half *b, half *c) {
#if __CUDA_ARCH__ >= 700
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, half> fc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_col_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_col_major);
#endif
}

extern "C" __global__ void wmma_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c) {
#if __CUDA_ARCH__ >= 800
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 1.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
#endif
}

extern "C" __global__ void mma_sync_m16n8k16(const unsigned *a, const unsigned *b, float *c) {
#if __CUDA_ARCH__ >= 800
  int lane = threadIdx.x & 31;
  unsigned a0 = a[4 * lane], a1 = a[4 * lane + 1], a2 = a[4 * lane + 2], a3 = a[4 * lane + 3];
  unsigned b0 = b[2 * lane], b1 = b[2 * lane + 1];
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  c[4 * lane + 0] = d0; c[4 * lane + 1] = d1; c[4 * lane + 2] = d2; c[4 * lane + 3] = d3;
#endif
#if __CUDA_ARCH__ >= 750
  __shared__ unsigned tile[32 * 4];
  tile[threadIdx.x & 127] = a[threadIdx.x & 127];
  __syncwarp();
  unsigned r0, r1, r2, r3;
  unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[(threadIdx.x & 31) * 4]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  c[128 + (threadIdx.x & 31)] = (float)(r0 ^ r1 ^ r2 ^ r3);
#endif
}
