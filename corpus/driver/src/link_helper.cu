__device__ float scale(float v) { return 3.0f * v + 1.0f; }
