/* Shared by both sides of every pair in corpus/pairs: the CUDA program
 * (src/NAME.cu, nvcc) and the CPU program (src/NAME.c or .cpp, gcc/g++).
 *
 * - lcg_*: the one deterministic input generator (32-bit LCG, Numerical
 *   Recipes constants), so both sides see the same inputs.
 * - pairs_alloc: the CPU side's cudaMalloc (256-byte aligned).
 * - arg_int: reads argv[k] as a positive int, or a default.
 * - FAIL: a self-check mismatch: prints and exits with 1.
 * - CHECK (CUDA only): a failed CUDA call prints and exits with 2.
 *
 * Everything is plain C (static inline), valid as C99, C++ and CUDA. */
#ifndef LOCKSTEP_PAIRS_H
#define LOCKSTEP_PAIRS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  uint32_t s;
} lcg_t;

static inline lcg_t lcg_seed(uint32_t seed) {
  lcg_t g;
  g.s = seed;
  return g;
}

static inline uint32_t lcg_next(lcg_t *g) {
  g->s = g->s * 1664525u + 1013904223u;
  return g->s;
}

/* In [0, n): from the high 24 bits (an LCG's low bits are weak). */
static inline uint32_t lcg_below(lcg_t *g, uint32_t n) { return (lcg_next(g) >> 8) % n; }

/* In [0, 1), a multiple of 2^-24: exact as float and as double. */
static inline float lcg_unit(lcg_t *g) { return (float)(lcg_next(g) >> 8) * (1.0f / 16777216.0f); }

/* The CPU side's counterpart of cudaMalloc: 256-byte aligned, as cudaMalloc's
 * blocks are, so a warp's accesses cover the same 32-byte sectors on both
 * sides (plain malloc returns 16 bytes past a page boundary for large
 * blocks, which would add a sector to every coalesced warp access). */
static inline void *pairs_alloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 256, bytes ? bytes : 1) != 0) {
    printf("out of memory\n");
    exit(2);
  }
  return p;
}

static inline int arg_int(int argc, char **argv, int k, int dflt) {
  if (argc > k) {
    int v = atoi(argv[k]);
    if (v > 0) return v;
    printf("bad argument %s\n", argv[k]);
    exit(2);
  }
  return dflt;
}

/* Helpers shared by a kernel and the host code that checks it. */
#ifdef __CUDACC__
#define PAIRS_HD __host__ __device__
#else
#define PAIRS_HD
#endif

/* For the CPU side's traced functions: never inlined into the caller and
 * never cloned (a .constprop/.isra clone would trace under another name). */
#define PAIRS_TRACED __attribute__((noinline, noclone))

#define FAIL(...)                                   \
  do {                                              \
    printf("MISMATCH: ");                           \
    printf(__VA_ARGS__);                            \
    printf("\nFAILED\n");                           \
    fflush(stdout);                                 \
    exit(1);                                        \
  } while (0)

#ifdef __CUDACC__
#include <cuda_runtime.h>
#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t check_err_ = (call);                                           \
    if (check_err_ != cudaSuccess) {                                           \
      printf("CUDA call failed: %s\n  at %s:%d\n  %s: %s\n", #call, __FILE__,  \
             __LINE__, cudaGetErrorName(check_err_),                           \
             cudaGetErrorString(check_err_));                                  \
      fflush(stdout);                                                          \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)
#define CHECK_LAUNCH() CHECK(cudaGetLastError())
#endif

#endif
