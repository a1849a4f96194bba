// The device function rdc_main.cu calls, in another translation unit.
__device__ float twice(float v) { return 2.0f * v; }
