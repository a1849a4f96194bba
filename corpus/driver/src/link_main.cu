// Linked with link_helper.cu by cuLinkAddData/cuLinkAddFile at run time (built with -rdc: the PTX keeps
// the extern declaration).
extern __device__ float scale(float v);

extern "C" __global__ void apply(float *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = scale(v[i]);
}
