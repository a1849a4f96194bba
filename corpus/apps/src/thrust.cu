// thrust: Thrust algorithms on device_vector, each checked against the
// corresponding std:: algorithm on the host: sort (ascending, descending),
// stable_sort_by_key, reduce, inclusive/exclusive scan, transform with a
// functor, copy_if, count_if, max_element, sequence/fill.
#include "common.h"
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/extrema.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <algorithm>
#include <exception>
#include <numeric>
#include <vector>

struct saxpy_int {
  int a;
  __host__ __device__ int operator()(int x, int y) const { return a * x + y; }
};

struct multiple_of_3 {
  __host__ __device__ bool operator()(int x) const { return x % 3 == 0; }
};

template <typename T>
static void expect_equal(const char* what, const thrust::device_vector<T>& dv, const std::vector<T>& ref) {
  thrust::host_vector<T> h = dv;
  if (h.size() != ref.size()) FAIL("%s: size %zu, expected %zu", what, (size_t)h.size(), ref.size());
  for (size_t i = 0; i < ref.size(); i++)
    if (h[i] != ref[i]) FAIL("%s: [%zu] = %lld, expected %lld", what, i, (long long)h[i], (long long)ref[i]);
}

static int run() {
  const int n = 10000, m = 4096;
  printf("thrust: n=%d, m=%d\n", n, m);
  Lcg rng(12345);
  std::vector<int> keys(n);
  for (int i = 0; i < n; i++) keys[i] = (int)rng.below(1000000) - 500000;

  // ---- sort ----
  thrust::device_vector<int> dkeys(keys.begin(), keys.end());
  thrust::sort(dkeys.begin(), dkeys.end());
  std::vector<int> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  expect_equal("sort", dkeys, sorted);
  printf("sort: min %d, median %d, max %d\n", sorted[0], sorted[n / 2], sorted[n - 1]);

  // ---- descending sort ----
  std::vector<int> small(keys.begin(), keys.begin() + m);
  thrust::device_vector<int> dsmall(small.begin(), small.end());
  thrust::sort(dsmall.begin(), dsmall.end(), thrust::greater<int>());
  std::vector<int> desc = small;
  std::sort(desc.begin(), desc.end(), std::greater<int>());
  expect_equal("sort descending", dsmall, desc);
  printf("sort descending: first %d, last %d\n", desc[0], desc[m - 1]);

  // ---- stable_sort_by_key: many equal keys, values record the order ----
  std::vector<int> k2(m), v2(m);
  for (int i = 0; i < m; i++) {
    k2[i] = (int)rng.below(100);
    v2[i] = i;
  }
  thrust::device_vector<int> dk2(k2.begin(), k2.end()), dv2(v2.begin(), v2.end());
  thrust::stable_sort_by_key(dk2.begin(), dk2.end(), dv2.begin());
  std::vector<int> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return k2[a] < k2[b]; });
  std::vector<int> k2s(m);
  for (int i = 0; i < m; i++) k2s[i] = k2[order[i]];
  expect_equal("stable_sort_by_key keys", dk2, k2s);
  expect_equal("stable_sort_by_key values", dv2, order);
  unsigned long long ck = 0;
  for (int i = 0; i < m; i++) ck += (unsigned long long)(i + 1) * (unsigned)order[i];
  printf("stable_sort_by_key: values checksum %llu\n", ck);

  // ---- reduce ----
  thrust::device_vector<int> dorig(keys.begin(), keys.end());
  long long dsum = thrust::reduce(dorig.begin(), dorig.end(), 0LL);
  long long hsum = std::accumulate(keys.begin(), keys.end(), 0LL);
  if (dsum != hsum) FAIL("reduce: %lld, expected %lld", dsum, hsum);
  int dmax = thrust::reduce(dorig.begin(), dorig.end(), -2147483647 - 1, thrust::maximum<int>());
  if (dmax != sorted[n - 1]) FAIL("reduce maximum: %d, expected %d", dmax, sorted[n - 1]);
  auto it = thrust::max_element(dorig.begin(), dorig.end());
  long pos = (long)(it - dorig.begin());
  long hpos = (long)(std::max_element(keys.begin(), keys.end()) - keys.begin());
  if (pos != hpos) FAIL("max_element at %ld, expected %ld", pos, hpos);
  printf("reduce: sum %lld, max %d at %ld\n", hsum, dmax, pos);

  // ---- scans ----
  std::vector<int> small_vals(n);
  for (int i = 0; i < n; i++) small_vals[i] = ((keys[i] % 100) + 100) % 100;  // 0..99
  thrust::device_vector<int> dsv(small_vals.begin(), small_vals.end()), dscan(n);
  thrust::inclusive_scan(dsv.begin(), dsv.end(), dscan.begin());
  std::vector<int> inc(n), exc(n);
  std::partial_sum(small_vals.begin(), small_vals.end(), inc.begin());
  expect_equal("inclusive_scan", dscan, inc);
  thrust::exclusive_scan(dsv.begin(), dsv.end(), dscan.begin(), 10);
  int acc = 10;
  for (int i = 0; i < n; i++) {
    exc[i] = acc;
    acc += small_vals[i];
  }
  expect_equal("exclusive_scan", dscan, exc);
  printf("scans: inclusive last %d, exclusive last %d\n", inc[n - 1], exc[n - 1]);

  // ---- transform with a functor ----
  thrust::device_vector<int> dx(n), dy(n), dz(n);
  thrust::sequence(dx.begin(), dx.end(), -5000);  // -5000 .. 4999
  thrust::fill(dy.begin(), dy.end(), 7);
  thrust::transform(dx.begin(), dx.end(), dy.begin(), dz.begin(), saxpy_int{3});
  std::vector<int> z(n);
  for (int i = 0; i < n; i++) z[i] = 3 * (i - 5000) + 7;
  expect_equal("transform saxpy", dz, z);
  printf("transform: z[0] %d, z[%d] %d\n", z[0], n - 1, z[n - 1]);

  // ---- copy_if / count_if ----
  thrust::device_vector<int> dsel(n);
  auto end = thrust::copy_if(dorig.begin(), dorig.end(), dsel.begin(), multiple_of_3());
  dsel.resize(end - dsel.begin());
  std::vector<int> sel;
  std::copy_if(keys.begin(), keys.end(), std::back_inserter(sel), multiple_of_3());
  expect_equal("copy_if", dsel, sel);
  long cnt = (long)thrust::count_if(dorig.begin(), dorig.end(), multiple_of_3());
  if (cnt != (long)sel.size()) FAIL("count_if: %ld, expected %zu", cnt, sel.size());
  printf("copy_if/count_if: %ld multiples of 3\n", cnt);
  printf("PASSED\n");
  return 0;
}

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    printf("exception: %s\nFAILED\n", e.what());
    return 2;
  }
}
