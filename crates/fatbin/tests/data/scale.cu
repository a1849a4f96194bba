// A second translation unit: with axpy.cu, a program of two units (regen.sh: two_units).
__global__ void scale(int n, float a, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}

void launch_scale() { scale<<<1, 32>>>(0, 2.0f, nullptr); }
