// workloads.cu -- small reference kernels for emulator/JIT tests and
// benchmarks, all with plain signatures (pointers + ints/floats).
//
// Covers: vector_add, saxpy, reduce_tree (shared-memory tree reduction with
// __syncthreads, one partial sum per block), matmul_tiled16 (16x16 shared
// tiles, 2D grid/block), histogram256 (shared-memory atomics merged into a
// global histogram), stencil_1d (radius 3, shared halo), stencil_2d
// (5-point), stencil_3d (7-point, 3D grid using blockIdx.z/threadIdx.z),
// transpose_tiled (32x32 tile with +1 padding, 2D grid, 32x8 block),
// transpose_naive, and dot_product (grid-stride loop + warp shuffle +
// atomicAdd).

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(int n, float alpha, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

// blockDim.x must be a power of two and <= 1024.
extern "C" __global__ void reduce_tree(const float *in, float *partial, int n) {
  extern __shared__ float sdata[];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  sdata[tid] = (i < (unsigned)n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partial[blockIdx.x] = sdata[0];
}

#define TILE 16
// C[M x N] = A[M x K] * B[K x N], row-major; block (16,16), grid (ceil(N/16), ceil(M/16)).
extern "C" __global__ void matmul_tiled16(const float *A, const float *B, float *C,
                                          int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ak = t * TILE + threadIdx.x;
    int bk = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

extern "C" __global__ void histogram256(const unsigned char *data, unsigned *hist, int n) {
  __shared__ unsigned local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (local[b]) atomicAdd(&hist[b], local[b]);
}

#define RADIUS 3
// blockDim.x <= 256.
extern "C" __global__ void stencil_1d(const float *in, float *out, int n) {
  __shared__ float s[256 + 2 * RADIUS];
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  int l = threadIdx.x + RADIUS;
  s[l] = (g < n) ? in[g] : 0.0f;
  if (threadIdx.x < RADIUS) {
    s[l - RADIUS] = (g >= RADIUS) ? in[g - RADIUS] : 0.0f;
    int h = g + blockDim.x;
    s[l + blockDim.x] = (h < n) ? in[h] : 0.0f;
  }
  __syncthreads();
  if (g < n) {
    float acc = 0.0f;
    for (int o = -RADIUS; o <= RADIUS; ++o) acc += s[l + o];
    out[g] = acc / (2 * RADIUS + 1);
  }
}

extern "C" __global__ void stencil_2d(const float *in, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x <= 0 || y <= 0 || x >= w - 1 || y >= h - 1) return;
  int i = y * w + x;
  out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}

extern "C" __global__ void stencil_3d(const float *in, float *out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1) return;
  long i = ((long)z * ny + y) * nx + x;
  long sy = nx, sz = (long)nx * ny;
  out[i] = (in[i - 1] + in[i + 1] + in[i - sy] + in[i + sy] + in[i - sz] + in[i + sz] -
            6.0f * in[i]);
}

#define TDIM 32
#define BROWS 8
// block (32, 8), grid (ceil(w/32), ceil(h/32)); out is h x w transposed.
extern "C" __global__ void transpose_tiled(const float *in, float *out, int w, int h) {
  __shared__ float tile[TDIM][TDIM + 1];
  int x = blockIdx.x * TDIM + threadIdx.x;
  int y = blockIdx.y * TDIM + threadIdx.y;
  for (int j = 0; j < TDIM; j += BROWS)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * TDIM + threadIdx.x;
  y = blockIdx.x * TDIM + threadIdx.y;
  for (int j = 0; j < TDIM; j += BROWS)
    if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void transpose_naive(const float *in, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[x * h + y] = in[y * w + x];
}

extern "C" __global__ void dot_product(const float *a, const float *b, float *result, int n) {
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    s += a[i] * b[i];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0) atomicAdd(result, s);
}
