// Stream-ordered allocation and memory pools: the device's default pool with a
// release threshold, cudaMallocAsync/cudaFreeAsync around kernels in a stream,
// a pool of the program's own (cudaMemPoolCreate) with cudaMallocFromPoolAsync,
// its usage counters and high watermarks, access descriptors, the device's
// current pool, and the documented errors of misuse; CUDA 13's pools by location
// (cudaMemGetDefaultMemPool/GetMemPool/SetMemPool): the device's, a pinned host
// pool and a managed pool, allocations from them used by kernels.
#include "common.h"

__global__ void fill(int *a, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = base + i;
}

__global__ void add(const int *a, const int *b, int *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

static unsigned long long attr64(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  unsigned long long v = 0;
  CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
  return v;
}

int main() {
  int supported = 0;
  CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
  if (!supported) FAIL("memory pools are not supported");

  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // The default pool: keep everything (as NVIDIA's streamOrderedAllocation does).
  cudaMemPool_t def, cur;
  CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
  CHECK(cudaDeviceGetMemPool(&cur, 0));
  if (def != cur) FAIL("the current pool is not the default one");
  unsigned long long threshold = ~0ull;
  CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &threshold));
  if (attr64(def, cudaMemPoolAttrReleaseThreshold) != ~0ull) FAIL("release threshold not kept");
  int reuse = -1;
  CHECK(cudaMemPoolGetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &reuse));
  printf("default pool: reuse opportunistic %d\n", reuse);

  const int n = 1000;
  const size_t bytes = n * sizeof(int);
  long long total = 0;
  for (int round = 0; round < 3; ++round) {
    int *a, *b, *c;
    CHECK(cudaMallocAsync((void **)&a, bytes, s));
    CHECK(cudaMallocAsync((void **)&b, bytes, s));
    CHECK(cudaMallocAsync((void **)&c, bytes, s));
    fill<<<(n + 127) / 128, 128, 0, s>>>(a, n, round);
    CHECK_LAUNCH();
    fill<<<(n + 127) / 128, 128, 0, s>>>(b, n, 1000 * round);
    CHECK_LAUNCH();
    add<<<(n + 127) / 128, 128, 0, s>>>(a, b, c, n);
    CHECK_LAUNCH();
    int *h = (int *)malloc(bytes);
    CHECK(cudaMemcpyAsync(h, c, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaFreeAsync(a, s));
    CHECK(cudaFreeAsync(b, s));
    CHECK(cudaFreeAsync(c, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; ++i) {
      int want = (round + i) + (1000 * round + i);
      if (h[i] != want) FAIL("round %d: c[%d] = %d, expected %d", round, i, h[i], want);
      total += h[i];
    }
    free(h);
  }
  printf("default pool: 3 rounds, sum %lld\n", total);
  if (attr64(def, cudaMemPoolAttrUsedMemCurrent) != 0) FAIL("memory still used after the frees");
  if (attr64(def, cudaMemPoolAttrUsedMemHigh) < 3 * bytes) FAIL("used high watermark below 3 arrays");

  // A pool of our own.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  cudaMemAccessDesc desc = {};
  desc.location = props.location;
  desc.flags = cudaMemAccessFlagsProtReadWrite;
  CHECK(cudaMemPoolSetAccess(pool, &desc, 1));
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  cudaMemLocation loc = props.location;
  CHECK(cudaMemPoolGetAccess(&flags, pool, &loc));
  printf("own pool: access %s\n", flags == cudaMemAccessFlagsProtReadWrite ? "read-write" : "other");

  // Usage counters (compared, not printed: a GPU's pool may round sizes up).
  int *p, *q;
  CHECK(cudaMallocFromPoolAsync((void **)&p, 4096, pool, s));
  CHECK(cudaMallocFromPoolAsync((void **)&q, 1024, pool, s));
  unsigned long long used2 = attr64(pool, cudaMemPoolAttrUsedMemCurrent);
  if (used2 < 5120) FAIL("used %llu after allocating 5120 bytes", used2);
  if (attr64(def, cudaMemPoolAttrUsedMemCurrent) != 0) FAIL("the default pool counts our pool's memory");
  CHECK(cudaFreeAsync(p, s));
  CHECK(cudaStreamSynchronize(s));
  unsigned long long used1 = attr64(pool, cudaMemPoolAttrUsedMemCurrent);
  unsigned long long high = attr64(pool, cudaMemPoolAttrUsedMemHigh);
  if (used1 < 1024 || used1 >= used2) FAIL("used %llu after freeing 4096 of %llu bytes", used1, used2);
  if (high < used2) FAIL("high watermark %llu below %llu", high, used2);
  unsigned long long zero = 0;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  if (attr64(pool, cudaMemPoolAttrUsedMemHigh) >= high) FAIL("the high watermark was not reset");
  printf("own pool: usage follows allocations and frees\n");
  CHECK(cudaMemPoolTrimTo(pool, 0));

  // The device's current pool serves cudaMallocAsync.
  CHECK(cudaDeviceSetMemPool(0, pool));
  CHECK(cudaDeviceGetMemPool(&cur, 0));
  if (cur != pool) FAIL("cudaDeviceSetMemPool did not take");
  int *r;
  CHECK(cudaMallocAsync((void **)&r, 512, s));
  fill<<<1, 128, 0, s>>>(r, 128, 7);
  CHECK_LAUNCH();
  int hr[128];
  CHECK(cudaMemcpyAsync(hr, r, sizeof hr, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  if (hr[127] != 134) FAIL("r[127] = %d", hr[127]);
  if (attr64(pool, cudaMemPoolAttrUsedMemCurrent) <= used1) FAIL("cudaMallocAsync did not use the current pool");
  printf("current pool: serves cudaMallocAsync\n");
  CHECK(cudaFreeAsync(r, s));
  CHECK(cudaFreeAsync(q, s));
  CHECK(cudaStreamSynchronize(s));

  // Misuse: documented errors.
  EXPECT_ERR(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &threshold), cudaErrorInvalidValue);
  EXPECT_ERR(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &zero), cudaErrorInvalidValue);
  EXPECT_ERR(cudaMemPoolDestroy(def), cudaErrorInvalidValue);
  cudaMemPool_t other;
  EXPECT_ERR(cudaDeviceGetDefaultMemPool(&other, 1), cudaErrorInvalidDevice);
  cudaGetLastError();

  // Destroying the current pool makes the default pool current again.
  CHECK(cudaMemPoolDestroy(pool));
  CHECK(cudaDeviceGetMemPool(&cur, 0));
  if (cur != def) FAIL("the default pool is not current after the destroy");

  // Pools by location (CUDA 13). The device's pinned default is cudaDeviceGetDefaultMemPool's.
  cudaMemLocation dev_loc = {};
  dev_loc.type = cudaMemLocationTypeDevice;
  dev_loc.id = 0;
  cudaMemPool_t by_loc;
  CHECK(cudaMemGetDefaultMemPool(&by_loc, &dev_loc, cudaMemAllocationTypePinned));
  if (by_loc != def) FAIL("the device's default pool by location differs");
  cudaMemLocation host_loc = {};
  host_loc.type = cudaMemLocationTypeHost;
  cudaMemPool_t host_pool, host_cur;
  CHECK(cudaMemGetDefaultMemPool(&host_pool, &host_loc, cudaMemAllocationTypePinned));
  CHECK(cudaMemGetMemPool(&host_cur, &host_loc, cudaMemAllocationTypePinned));
  if (host_pool == def || host_cur != host_pool) FAIL("the host pool");
  // The device may use a host pool's memory only once the pool grants it access.
  cudaMemAccessFlags host_flags = cudaMemAccessFlagsProtReadWrite;
  CHECK(cudaMemPoolGetAccess(&host_flags, host_pool, &dev_loc));
  cudaMemAccessDesc host_access = {};
  host_access.location = dev_loc;
  host_access.flags = cudaMemAccessFlagsProtReadWrite;
  CHECK(cudaMemPoolSetAccess(host_pool, &host_access, 1));
  printf("host pool: device access %d, after cudaMemPoolSetAccess read-write\n", (int)host_flags);
  int *h;
  CHECK(cudaMallocFromPoolAsync((void **)&h, 128 * sizeof(int), host_pool, s));
  fill<<<1, 128, 0, s>>>(h, 128, 11);
  CHECK_LAUNCH();
  CHECK(cudaStreamSynchronize(s));
  cudaPointerAttributes pa;
  CHECK(cudaPointerGetAttributes(&pa, h));
  printf("host pool: h[127] = %d read by the host, memory type host: %d\n", h[127], pa.type == cudaMemoryTypeHost);
  if (h[127] != 138) FAIL("h[127] = %d", h[127]);
  CHECK(cudaFreeAsync(h, s));
  cudaMemLocation none = {};
  none.type = cudaMemLocationTypeNone;
  cudaMemPool_t managed_pool;
  CHECK(cudaMemGetDefaultMemPool(&managed_pool, &none, cudaMemAllocationTypeManaged));
  int *m;
  CHECK(cudaMallocFromPoolAsync((void **)&m, 128 * sizeof(int), managed_pool, s));
  fill<<<1, 128, 0, s>>>(m, 128, 20);
  CHECK_LAUNCH();
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaPointerGetAttributes(&pa, m));
  printf("managed pool: m[0] = %d, memory type managed: %d\n", m[0], pa.type == cudaMemoryTypeManaged);
  CHECK(cudaFreeAsync(m, s));
  cudaMemPoolProps hp = {};
  hp.allocType = cudaMemAllocationTypePinned;
  hp.location = host_loc;
  cudaMemPool_t own_host;
  CHECK(cudaMemPoolCreate(&own_host, &hp));
  CHECK(cudaMemSetMemPool(&host_loc, cudaMemAllocationTypePinned, own_host));
  CHECK(cudaMemGetMemPool(&host_cur, &host_loc, cudaMemAllocationTypePinned));
  if (host_cur != own_host) FAIL("cudaMemSetMemPool did not take");
  EXPECT_ERR(cudaMemSetMemPool(&dev_loc, cudaMemAllocationTypePinned, own_host), cudaErrorInvalidValue);
  EXPECT_ERR(cudaMemPoolDestroy(host_pool), cudaErrorInvalidValue);
  EXPECT_ERR(cudaMemGetDefaultMemPool(&other, &none, cudaMemAllocationTypePinned), cudaErrorInvalidValue);
  cudaGetLastError();
  // Which pool a place falls back to when its current pool is destroyed depends on the history on a GPU (an
  // H200 with driver 580 gave the device's default pool to the host after this program's earlier steps,
  // the host's default in a fresh process): the program sets it back itself.
  CHECK(cudaMemPoolDestroy(own_host));
  CHECK(cudaMemSetMemPool(&host_loc, cudaMemAllocationTypePinned, host_pool));
  CHECK(cudaMemGetMemPool(&host_cur, &host_loc, cudaMemAllocationTypePinned));
  if (host_cur != host_pool) FAIL("the host's default pool is not current again");
  printf("pools by location: device, host and managed\n");
  CHECK(cudaStreamDestroy(s));
  printf("PASSED\n");
  return 0;
}
