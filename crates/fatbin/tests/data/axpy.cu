// One kernel, built in several ways by regen.sh.
__global__ void axpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  axpy<<<1, 32>>>(0, 2.0f, nullptr, nullptr);
  return 0;
}
