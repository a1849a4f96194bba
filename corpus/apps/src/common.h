// Shared helpers for the lockstep CUDA application corpus (corpus/apps).
//
// CHECK(call): every CUDA runtime call goes through it. On failure it prints
// the call, file, line, error name and string, and exits with status 2.
// FAIL(...): a self-check mismatch: prints the message and exits with 1.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cuda_runtime.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t check_err_ = (call);                                             \
    if (check_err_ != cudaSuccess) {                                             \
      printf("CUDA call failed: %s\n  at %s:%d\n  %s (%d): %s\n", #call,         \
             __FILE__, __LINE__, cudaGetErrorName(check_err_), (int)check_err_,  \
             cudaGetErrorString(check_err_));                                    \
      fflush(stdout);                                                            \
      exit(2);                                                                   \
    }                                                                            \
  } while (0)

// Checks that a launch was accepted (cudaGetLastError right after <<<>>>).
#define CHECK_LAUNCH() CHECK(cudaGetLastError())

#define FAIL(...)                                                                \
  do {                                                                           \
    printf("MISMATCH at %s:%d: ", __FILE__, __LINE__);                           \
    printf(__VA_ARGS__);                                                         \
    printf("\nFAILED\n");                                                        \
    fflush(stdout);                                                              \
    exit(1);                                                                     \
  } while (0)

// Expect a specific (non-success) error code from a call; mismatches fail.
#define EXPECT_ERR(call, want)                                                   \
  do {                                                                           \
    cudaError_t expect_err_ = (call);                                            \
    if (expect_err_ != (want)) {                                                 \
      FAIL("%s returned %s, expected %s", #call, cudaGetErrorName(expect_err_),  \
           cudaGetErrorName(want));                                              \
    }                                                                            \
  } while (0)

// Deterministic 32-bit LCG (Numerical Recipes constants), used by every
// program that needs pseudo-random inputs, so expected outputs can be
// recomputed on any host.
struct Lcg {
  uint32_t s;
  explicit Lcg(uint32_t seed) : s(seed) {}
  uint32_t next() {
    s = s * 1664525u + 1013904223u;
    return s;
  }
  // Uniform-ish in [0, n): uses the high bits (the low bits of an LCG are weak).
  uint32_t below(uint32_t n) { return (uint32_t)(((uint64_t)next() >> 8) % n); }
};
