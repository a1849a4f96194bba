// tex_surf.cu -- texture and surface object access (parse-only coverage).
//
// Covers: tex1Dfetch<float> (tex.1d.v4.f32.s32), tex1D/tex2D/tex3D with
// float coordinates, tex2DLod, tex2DLayered, texCubemap, tex2Dgather (tld4),
// integer-returning fetches (int4/uint), surf2Dread / surf2Dwrite
// (suld.b / sust.b, with .trap/.clamp/.zero boundary modes), surf1Dwrite,
// surf3Dwrite, and txq/suq queries via asm.
#include <cuda_runtime.h>

extern "C" __global__ void tex_fetches(cudaTextureObject_t t1, cudaTextureObject_t t2,
                                       cudaTextureObject_t t3, cudaTextureObject_t tl,
                                       cudaTextureObject_t tc, cudaTextureObject_t ti,
                                       float *out, int *iout) {
  int i = threadIdx.x;
  float u = (i + 0.5f) / 64.0f;
  float a = tex1Dfetch<float>(t1, i);
  float b = tex1D<float>(t1, u);
  float c = tex2D<float>(t2, u, 1.0f - u);
  float4 d = tex2D<float4>(t2, u, 0.25f);
  float e = tex3D<float>(t3, u, u, 0.5f);
  float f = tex2DLod<float>(t2, u, u, 1.5f);
  float g = tex2DLayered<float>(tl, u, u, i & 3);
  float h = texCubemap<float>(tc, u, 1.0f, -u);
  float4 q = tex2Dgather<float4>(t2, u, u, 1);
  int4 n = tex1Dfetch<int4>(ti, i);
  out[i] = a + b + c + d.x + d.w + e + f + g + h + q.y;
  iout[i] = n.x + n.w;
  unsigned w, hgt;
  asm("txq.width.b32 %0, [%1];" : "=r"(w) : "l"(t2));
  asm("txq.height.b32 %0, [%1];" : "=r"(hgt) : "l"(t2));
  iout[64 + i] = (int)(w * hgt);
}

extern "C" __global__ void surf_rw(cudaSurfaceObject_t s1, cudaSurfaceObject_t s2,
                                   cudaSurfaceObject_t s3, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float v = surf2Dread<float>(s2, x * 4, y);                          // suld.b.2d
  surf2Dwrite(v * 2.0f, s2, x * 4, y);                                // sust.b.2d
  float4 p = surf2Dread<float4>(s2, x * 16, y, cudaBoundaryModeClamp);
  surf2Dwrite(p, s2, x * 16, y, cudaBoundaryModeZero);
  surf1Dwrite((unsigned)(x + y), s1, x * 4);
  uchar4 c = make_uchar4(x, y, 0, 255);
  surf3Dwrite(c, s3, x * 4, y, 0, cudaBoundaryModeTrap);
  unsigned sw;
  asm("suq.width.b32 %0, [%1];" : "=r"(sw) : "l"(s2));
  if (sw == 0) surf1Dwrite(0u, s1, 0);
}
