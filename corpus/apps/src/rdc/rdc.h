// Declarations shared by the three units of the rdc program.
#pragma once

// Defined in util.cu.
extern __device__ int g_bias;
extern __device__ unsigned int g_calls;
__device__ int combine(int a, int b);

// Host wrappers defined in kernels.cu.
void launch_combine(const int* a, const int* b, int* out, int n);
void launch_read_bias(int* out);
