// Relocatable device code (regen.sh: rdc): the kernel calls a device function of rdc_lib.cu.
__device__ float twice(float v);

__global__ void apply(int n, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = twice(y[i]);
}

int main() {
  apply<<<1, 32>>>(0, nullptr);
  return 0;
}
