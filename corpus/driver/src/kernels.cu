// Kernels the driver API tests load as PTX text (kernels.ptx) and as a fatbinary with PTX only
// (kernels.fatbin); see build.sh.

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// A tree reduction in shared memory: one partial sum per block.
extern "C" __global__ void block_sum(const float *x, float *partial, int n) {
    extern __shared__ float s[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

// Mixed parameter sizes, to check the parameter buffer's layout: a char, a double, a short, a pointer.
extern "C" __global__ void mixed(char c, double d, short s, long long *out) {
    out[0] = c;
    out[1] = (long long)(d * 2.0);
    out[2] = s;
}

__device__ int counter = 5;

extern "C" __global__ void bump(int by) { atomicAdd(&counter, by); }
