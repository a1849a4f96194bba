// special_regs.cu -- every special register, 2D/3D indexing and printf.
//
// Covers: %tid/%ntid/%ctaid/%nctaid in x/y/z (threadIdx, blockDim, blockIdx,
// gridDim), %laneid, %warpid, %nwarpid, %smid, %nsmid, %gridid, %clock,
// %clock64, %globaltimer (+ _lo/_hi), %lanemask_eq/lt/le/gt/ge,
// %dynamic_smem_size, %total_smem_size, %envreg0..2, %pm0 (performance
// counter), clock() / clock64() builtins, __nanosleep (sm_70+), %cluster*
// registers (sm_90+), and printf from a kernel (vprintf with a packed
// argument buffer of mixed int/double/pointer/string arguments).
#ifndef __CUDACC_RTC__  // NVRTC declares printf itself
#include <cstdio>
#endif

__device__ __forceinline__ unsigned sreg_u32_laneid() { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }

#define SREG32(name, var) unsigned var; asm volatile("mov.u32 %0, %%" #name ";" : "=r"(var))
#define SREG64(name, var) unsigned long long var; asm volatile("mov.u64 %0, %%" #name ";" : "=l"(var))

extern "C" __global__ void thread_geometry(unsigned *out) {
  unsigned gx = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned gy = blockIdx.y * blockDim.y + threadIdx.y;
  unsigned gz = blockIdx.z * blockDim.z + threadIdx.z;
  unsigned nx = gridDim.x * blockDim.x, ny = gridDim.y * blockDim.y;
  unsigned lin = (gz * ny + gy) * nx + gx;
  out[12 * lin + 0] = threadIdx.x;  out[12 * lin + 1] = threadIdx.y;  out[12 * lin + 2] = threadIdx.z;
  out[12 * lin + 3] = blockIdx.x;   out[12 * lin + 4] = blockIdx.y;   out[12 * lin + 5] = blockIdx.z;
  out[12 * lin + 6] = blockDim.x;   out[12 * lin + 7] = blockDim.y;   out[12 * lin + 8] = blockDim.z;
  out[12 * lin + 9] = gridDim.x;    out[12 * lin + 10] = gridDim.y;   out[12 * lin + 11] = gridDim.z;
}

extern "C" __global__ void special_registers(unsigned *out, unsigned long long *out64) {
  unsigned i = threadIdx.x + blockIdx.x * blockDim.x;
  SREG32(laneid, lane);
  SREG32(warpid, warp);
  SREG32(nwarpid, nwarp);
  SREG32(smid, sm);
  SREG32(nsmid, nsm);
  SREG32(lanemask_eq, m_eq);
  SREG32(lanemask_lt, m_lt);
  SREG32(lanemask_le, m_le);
  SREG32(lanemask_gt, m_gt);
  SREG32(lanemask_ge, m_ge);
  SREG32(clock, clk);
  SREG32(clock_hi, clk_hi);
  SREG32(dynamic_smem_size, dsmem);
  SREG32(total_smem_size, tsmem);
  SREG32(envreg0, env0);
  SREG32(envreg1, env1);
  SREG32(envreg31, env31);
  SREG32(globaltimer_lo, gt_lo);
  SREG32(globaltimer_hi, gt_hi);
  SREG32(pm0, pm0);
  SREG64(clock64, clk64);
  SREG64(globaltimer, gtimer);
  SREG64(gridid, gridid);
  SREG64(pm0_64, pm0_64);
  unsigned k = 0;
  out[24 * i + k++] = lane;   out[24 * i + k++] = warp;  out[24 * i + k++] = nwarp;
  out[24 * i + k++] = sm;     out[24 * i + k++] = nsm;
  out[24 * i + k++] = m_eq;   out[24 * i + k++] = m_lt;  out[24 * i + k++] = m_le;
  out[24 * i + k++] = m_gt;   out[24 * i + k++] = m_ge;
  out[24 * i + k++] = clk + clk_hi;
  out[24 * i + k++] = dsmem;  out[24 * i + k++] = tsmem;
  out[24 * i + k++] = env0 + env1 + env31;
  out[24 * i + k++] = gt_lo ^ gt_hi;
  out[24 * i + k++] = pm0;
  out[24 * i + k++] = (unsigned)clock();
  out[24 * i + k++] = sreg_u32_laneid() == (threadIdx.x & 31);
#if __CUDA_ARCH__ >= 700
  __nanosleep(100);
#endif
#if __CUDA_ARCH__ >= 900
  SREG32(clusterid.x, clid);
  SREG32(cluster_ctarank, crank);
  SREG32(cluster_nctarank, cn);
  SREG32(nclusterid.x, ncl);
  SREG32(cluster_ctaid.x, cctaid);
  SREG32(cluster_nctaid.x, cnctaid);
  unsigned expl;  // %is_explicit_cluster is a .pred register
  asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(expl));
  out[24 * i + k++] = clid + crank + cn + ncl + cctaid + cnctaid + expl;
#endif
  out64[4 * i + 0] = clk64;
  out64[4 * i + 1] = gtimer;
  out64[4 * i + 2] = gridid + pm0_64;
  out64[4 * i + 3] = (unsigned long long)clock64();
}

extern "C" __global__ void kernel_printf(const int *in, const double *d) {
  int i = threadIdx.x;
  if (i < 4) {
    printf("tid=%d block=(%u,%u,%u) v=%d d=%f p=%p s=%s ll=%lld\n", i, blockIdx.x,
           blockIdx.y, blockIdx.z, in[i], d[i], (const void *)(in + i), "lockstep",
           (long long)in[i] * 1000000007LL);
  }
  if (i == 0) printf("no-arg message\n");
}
