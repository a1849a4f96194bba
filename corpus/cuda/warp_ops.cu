// warp_ops.cu -- warp-synchronous primitives.
//
// Covers: __shfl_sync / __shfl_up_sync / __shfl_down_sync / __shfl_xor_sync
// (shfl.sync.idx/up/down/bfly) incl. width < 32 and float/double operands, a
// butterfly warp reduction, __ballot_sync (vote.sync.ballot), __all_sync /
// __any_sync / __uni_sync (vote.sync.all/any/uni), __activemask
// (activemask), __popc(ballot), __match_any_sync / __match_all_sync
// (match.sync, sm_70+), __reduce_add/min/max/and/or/xor_sync (redux.sync,
// sm_80+), lane masks, cooperative_groups tiled_partition<16>/<4> shuffles
// and thread_block_tile::ballot, coalesced_threads() inside a divergent
// branch, and the legacy non-sync shfl/vote forms spelled in asm.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void shuffles(const float *in, float *out, double *dout) {
  int i = threadIdx.x;
  float v = in[i];
  float a = __shfl_sync(0xffffffffu, v, 0);            // broadcast
  float b = __shfl_up_sync(0xffffffffu, v, 1);
  float c = __shfl_down_sync(0xffffffffu, v, 2);
  float d = __shfl_xor_sync(0xffffffffu, v, 5);
  float e = __shfl_sync(0xffffffffu, v, (i + 3) & 31, 8);  // width 8
  int f = __shfl_down_sync(0x0000ffffu, i, 1, 16);
  double g = __shfl_xor_sync(0xffffffffu, (double)v, 1);   // 64-bit: two shfl
  out[i] = a + b + c + d + e + (float)f;
  dout[i] = g;
}

extern "C" __global__ void warp_reduce_sum(const float *in, float *out) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  float v = in[i];
  for (int off = 16; off > 0; off >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) out[i >> 5] = v;
}

extern "C" __global__ void votes(const int *in, unsigned *out) {
  int i = threadIdx.x;
  int v = in[i];
  unsigned bal = __ballot_sync(0xffffffffu, v > 0);
  int all = __all_sync(0xffffffffu, v != 0);
  int any = __any_sync(0xffffffffu, v < 0);
  int uni = __uni_sync(0xffffffffu, v & 1);
  unsigned act = 0;
  if (i & 1) act = __activemask();                     // inside divergence
  out[4 * i + 0] = bal;
  out[4 * i + 1] = (unsigned)__popc(bal);
  out[4 * i + 2] = (unsigned)(all | (any << 1) | (uni << 2));
  out[4 * i + 3] = act;
}

extern "C" __global__ void match_and_redux(const int *in, unsigned *out) {
  int i = threadIdx.x;
  int v = in[i];
#if __CUDA_ARCH__ >= 700
  unsigned any = __match_any_sync(0xffffffffu, v);
  int pred;
  unsigned all = __match_all_sync(0xffffffffu, v & 0xF0, &pred);
  unsigned any64 = __match_any_sync(0xffffffffu, (long long)v << 33);
  out[8 * i + 0] = any;
  out[8 * i + 1] = all ^ (unsigned)pred;
  out[8 * i + 2] = any64;
#endif
#if __CUDA_ARCH__ >= 800
  out[8 * i + 3] = __reduce_add_sync(0xffffffffu, (unsigned)v);
  out[8 * i + 4] = (unsigned)__reduce_min_sync(0xffffffffu, v) +
                   (unsigned)__reduce_max_sync(0xffffffffu, v);
  out[8 * i + 5] = __reduce_and_sync(0xffffffffu, (unsigned)v);
  out[8 * i + 6] = __reduce_or_sync(0xffffffffu, (unsigned)v);
  out[8 * i + 7] = __reduce_xor_sync(0xffffffffu, (unsigned)v);
#else
  out[8 * i + 3] = (unsigned)v;
#endif
}

extern "C" __global__ void coop_groups_tiles(const float *in, float *out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
  cg::thread_block_tile<4> t4 = cg::tiled_partition<4>(t16);
  int i = block.thread_rank();
  float v = in[i];
  for (int off = t16.size() / 2; off > 0; off /= 2) v += t16.shfl_down(v, off);
  float w = t4.shfl(v, 0) + t4.shfl_xor(v, 1) + t4.shfl_up(v, 1);
  unsigned b = t16.ballot(v > 0.0f);
  bool anyp = t4.any(w > 1.0f);
  block.sync();
  out[i] = w + (float)__popc(b) + (anyp ? 1.0f : 0.0f) + (float)t16.meta_group_rank();
  if (i & 1) {
    cg::coalesced_group active = cg::coalesced_threads();
    out[i] += (float)active.thread_rank() + (float)active.size();
  }
}

// Legacy (pre-Volta, non-.sync) forms in PTX: shfl.idx and vote.ballot are
// still accepted by ptxas for sm < 70 targets only, so they are guarded.
extern "C" __global__ void warp_asm_forms(const int *in, int *out) {
  int i = threadIdx.x;
  int v = in[i], r0, r1;
  unsigned m;
  asm volatile("shfl.sync.idx.b32 %0, %1, 3, 0x1f, 0xffffffff;" : "=r"(r0) : "r"(v));
  asm volatile("{ .reg .pred p; shfl.sync.up.b32 %0|p, %1, 1, 0, 0xffffffff; }" : "=r"(r1) : "r"(v));
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }" : "=r"(m) : "r"(v));
#if __CUDA_ARCH__ < 700
  int r2;
  asm volatile("shfl.idx.b32 %0, %1, 0, 0x1f;" : "=r"(r2) : "r"(v));
  r0 += r2;
#endif
  out[i] = r0 + r1 + (int)m;
}
