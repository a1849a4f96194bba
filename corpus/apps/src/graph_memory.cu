// CUDA Graphs with memory and event nodes: cudaMallocAsync/cudaFreeAsync captured as allocation and free
// nodes (the address fixed at capture, usable by the captured kernels, the graph run again after its free);
// an explicit allocation node freed outside the graph by cudaFree, relaunching while an allocation is still
// live refused unless the graph was instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch; the graph
// memory attributes; event record and wait nodes (an event recorded by the graph); disabling a kernel node
// in the executable graph; cloning a graph with memory nodes refused. The generic node API of CUDA 12.2+
// (cudaGraphAddNode, cudaGraphNodeGetParams/SetParams, cudaGraphExecNodeSetParams): allocation, set,
// kernel, copy and free nodes from cudaGraphNodeParams, a child graph with memory nodes moved into its
// parent, parameters read back and changed. Kernel node launch attributes: set, read back, copied, and
// the refusals of a cluster of two CTAs, an access policy window and a node that is not a kernel. Copy
// nodes to and from a __device__ variable (cudaGraphAddMemcpyNodeToSymbol/FromSymbol), changed in the
// graph and in the executable graph.
#include "common.h"

constexpr int N = 4096;

__device__ int g_table[8];

__global__ void iota(int *x, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = base + i;
}

__global__ void add(int *dst, const int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] += a[i];
}

static void expect_error(cudaError_t got, cudaError_t want, const char *what) {
  printf("%s: %s\n", what, cudaGetErrorName(got));
  if (got != want) FAIL("%s: expected %s\n", what, cudaGetErrorName(want));
  cudaGetLastError();
}

static unsigned long long attr(cudaGraphMemAttributeType a) {
  unsigned long long v = 0;
  CHECK(cudaDeviceGetGraphMemAttribute(0, a, &v));
  return v;
}

static void check_sum(const int *d, long long want, const char *what) {
  static int h[N];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  long long s = 0;
  for (int i = 0; i < N; i++) s += h[i];
  printf("%s: sum %lld\n", what, s);
  if (s != want) FAIL("%s: sum %lld, expected %lld\n", what, s, want);
}

int main() {
  const int blocks = (N + 255) / 256;
  const long long iota_sum = (long long)N * (N - 1) / 2;
  int *out;
  CHECK(cudaMalloc(&out, N * sizeof(int)));
  CHECK(cudaMemset(out, 0, N * sizeof(int)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaStream_t s2;
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  // 1. Stream-ordered allocation captured: tmp = iota(100); out += tmp; free(tmp).
  int *tmp = nullptr;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMallocAsync(&tmp, N * sizeof(int), s));
  iota<<<blocks, 256, 0, s>>>(tmp, 100, N);
  add<<<blocks, 256, 0, s>>>(out, tmp, N);
  CHECK(cudaFreeAsync(tmp, s));
  cudaGraph_t g;
  CHECK(cudaStreamEndCapture(s, &g));
  size_t count = 0;
  CHECK(cudaGraphGetNodes(g, nullptr, &count));
  cudaGraphNode_t nodes[8];
  CHECK(cudaGraphGetNodes(g, nodes, &count));
  cudaGraphNodeType first, last;
  CHECK(cudaGraphNodeGetType(nodes[0], &first));
  CHECK(cudaGraphNodeGetType(nodes[count - 1], &last));
  printf("captured: %zu nodes, first is an allocation: %d, last a free: %d\n", count,
         first == cudaGraphNodeTypeMemAlloc, last == cudaGraphNodeTypeMemFree);
  cudaMemAllocNodeParams ap;
  CHECK(cudaGraphMemAllocNodeGetParams(nodes[0], &ap));
  printf("allocation node: %zu bytes at the captured address: %d\n", ap.bytesize, ap.dptr == tmp);
  cudaGraph_t copy;
  expect_error(cudaGraphClone(&copy, g), cudaErrorNotSupported, "clone of a graph with memory nodes");
  cudaGraphExec_t e;
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaGraphLaunch(e, s));  // freed at the end of the first launch: runs again
  CHECK(cudaStreamSynchronize(s));
  check_sum(out, 2 * (iota_sum + 100LL * N), "two launches");
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));

  // 2. An allocation node without a free node: live after the launch, a second launch refused, cudaFree
  //    ends it; with AutoFreeOnLaunch a relaunch frees it itself.
  CHECK(cudaGraphCreate(&g, 0));
  cudaMemAllocNodeParams p = {};
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = 0;
  p.bytesize = N * sizeof(int);
  cudaGraphNode_t alloc, fill;
  CHECK(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &p));
  int *buf = static_cast<int *>(p.dptr);
  cudaKernelNodeParams kp = {};
  int base = 7, n = N;
  void *args[] = {&buf, &base, &n};
  kp.func = (void *)iota;
  kp.gridDim = dim3(blocks);
  kp.blockDim = dim3(256);
  kp.kernelParams = args;
  CHECK(cudaGraphAddKernelNode(&fill, g, &alloc, 1, &kp));
  // A GPU reserves graph memory in large granules (32 MiB on an H100) and counts it as used until it is
  // trimmed; lockstep counts the allocations' bytes. Only what holds for both is printed.
  const unsigned long long bytes = N * sizeof(int);
  printf("reserved after the node covers the allocation: %d\n", attr(cudaGraphMemAttrReservedMemCurrent) >= bytes);
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  check_sum(buf, iota_sum + 7LL * N, "the graph's allocation after its launch");
  printf("used while live covers it: %d\n", attr(cudaGraphMemAttrUsedMemCurrent) >= bytes);
  expect_error(cudaGraphLaunch(e, s), cudaErrorInvalidValue, "relaunch while the allocation is live");
  CHECK(cudaFree(buf));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphInstantiate(&e, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
  CHECK(cudaGraphLaunch(e, s));  // the allocation from the last launch is freed first
  CHECK(cudaStreamSynchronize(s));
  check_sum(buf, iota_sum + 7LL * N, "AutoFreeOnLaunch relaunch");
  CHECK(cudaFreeAsync(buf, s));
  CHECK(cudaStreamSynchronize(s));
  expect_error(cudaFree(buf), cudaErrorInvalidValue, "freeing it twice");
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
  unsigned long long zero = 0;
  CHECK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
  printf("after the graph is gone: used high within reserved: %d\n",
         attr(cudaGraphMemAttrUsedMemHigh) <= attr(cudaGraphMemAttrReservedMemCurrent));

  // 3. Event record and wait nodes, and a disabled kernel node.
  cudaEvent_t done;
  CHECK(cudaEventCreate(&done));
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t k1, rec, wait, k2;
  int *outp = out;
  int b2 = 1;
  void *args2[] = {&outp, &b2, &n};
  kp.kernelParams = args2;
  CHECK(cudaGraphAddKernelNode(&k1, g, nullptr, 0, &kp));
  CHECK(cudaGraphAddEventRecordNode(&rec, g, &k1, 1, done));
  CHECK(cudaGraphAddEventWaitNode(&wait, g, &rec, 1, done));
  base = 1000;
  void *args3[] = {&outp, &base, &n};
  kp.kernelParams = args3;
  CHECK(cudaGraphAddKernelNode(&k2, g, &wait, 1, &kp));
  cudaEvent_t got;
  CHECK(cudaGraphEventRecordNodeGetEvent(rec, &got));
  printf("event nodes: record node's event is ours: %d\n", got == done);
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  printf("event recorded by the graph: %s\n", cudaGetErrorName(cudaEventQuery(done)));
  check_sum(out, iota_sum + 1000LL * N, "both kernels");
  CHECK(cudaGraphNodeSetEnabled(e, k2, 0));
  unsigned int on = 1;
  CHECK(cudaGraphNodeGetEnabled(e, k2, &on));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  printf("second kernel enabled: %u\n", on);
  check_sum(out, iota_sum + 1LL * N, "second kernel disabled");
  expect_error(cudaGraphNodeSetEnabled(e, rec, 0), cudaErrorInvalidValue, "disabling an event node");
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaEventDestroy(done));

  // 4. The generic node API: alloc -> set 0x01010101 -> iota(base 5) -> copy into out -> free, in a child
  //    graph moved into its parent.
  cudaGraph_t child;
  CHECK(cudaGraphCreate(&child, 0));
  cudaGraphNodeParams gp = {};
  gp.type = cudaGraphNodeTypeMemAlloc;
  gp.alloc.poolProps.allocType = cudaMemAllocationTypePinned;
  gp.alloc.poolProps.location.type = cudaMemLocationTypeDevice;
  gp.alloc.bytesize = N * sizeof(int);
  cudaGraphNode_t galloc, gset, gkernel, gcopy, gfree;
  CHECK(cudaGraphAddNode(&galloc, child, nullptr, nullptr, 0, &gp));
  int *scratch = static_cast<int *>(gp.alloc.dptr);
  gp = {};
  gp.type = cudaGraphNodeTypeMemset;
  gp.memset.dst = scratch;
  gp.memset.value = 0x01010101;
  gp.memset.elementSize = 4;
  gp.memset.width = N;
  gp.memset.height = 1;
  CHECK(cudaGraphAddNode(&gset, child, &galloc, nullptr, 1, &gp));
  gp = {};
  gp.type = cudaGraphNodeTypeKernel;
  int gbase = 5;
  void *gargs[] = {&scratch, &gbase, &n};
  gp.kernel.func = (void *)iota;
  gp.kernel.gridDim = dim3(blocks);
  gp.kernel.blockDim = dim3(256);
  gp.kernel.kernelParams = gargs;
  CHECK(cudaGraphAddNode(&gkernel, child, &gset, nullptr, 1, &gp));
  gp = {};
  gp.type = cudaGraphNodeTypeMemcpy;
  gp.memcpy.copyParams.srcPtr = make_cudaPitchedPtr(scratch, N * sizeof(int), N * sizeof(int), 1);
  gp.memcpy.copyParams.dstPtr = make_cudaPitchedPtr(out, N * sizeof(int), N * sizeof(int), 1);
  gp.memcpy.copyParams.extent = make_cudaExtent(N * sizeof(int), 1, 1);
  gp.memcpy.copyParams.kind = cudaMemcpyDeviceToDevice;
  CHECK(cudaGraphAddNode(&gcopy, child, &gkernel, nullptr, 1, &gp));
  gp = {};
  gp.type = cudaGraphNodeTypeMemFree;
  gp.free.dptr = scratch;
  CHECK(cudaGraphAddNode(&gfree, child, &gcopy, nullptr, 1, &gp));
  cudaGraphNodeParams read_back = {};
  CHECK(cudaGraphNodeGetParams(gkernel, &read_back));
  printf("generic kernel node: type %d, grid %u, block %u, base %d\n", (int)read_back.type,
         read_back.kernel.gridDim.x, read_back.kernel.blockDim.x, *(int *)read_back.kernel.kernelParams[1]);
  CHECK(cudaGraphNodeGetParams(gcopy, &read_back));
  printf("generic copy node: %zu bytes\n", read_back.memcpy.copyParams.extent.width);
  CHECK(cudaGraphCreate(&g, 0));
  gp = {};
  gp.type = cudaGraphNodeTypeGraph;
  gp.graph.graph = child;
  gp.graph.ownership = cudaGraphChildGraphOwnershipMove;
  cudaGraphNode_t gchild;
  CHECK(cudaGraphAddNode(&gchild, g, nullptr, nullptr, 0, &gp));
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  check_sum(out, iota_sum + 5LL * N, "generic nodes in a moved child graph");
  gp = {};
  gp.type = cudaGraphNodeTypeKernel;
  gbase = 9;
  gp.kernel.func = (void *)iota;
  gp.kernel.gridDim = dim3(blocks);
  gp.kernel.blockDim = dim3(256);
  gp.kernel.kernelParams = gargs;
  CHECK(cudaGraphExecNodeSetParams(e, gkernel, &gp));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));
  check_sum(out, iota_sum + 9LL * N, "kernel changed in the executable graph");
  gp = {};
  gp.type = cudaGraphNodeTypeMemFree;
  gp.free.dptr = scratch;
  expect_error(cudaGraphNodeSetParams(gfree, &gp), cudaErrorNotSupported, "changing a free node");
  gp.type = cudaGraphNodeTypeEmpty;
  expect_error(cudaGraphNodeSetParams(gkernel, &gp), cudaErrorInvalidValue, "another node type");
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));  // and the child graph it owns

  // 5. Kernel node launch attributes (a grid of 4 CTAs: cooperative launches must fit the device at once).
  CHECK(cudaGraphCreate(&g, 0));
  constexpr int M = 1024;
  int *small;
  CHECK(cudaMalloc(&small, M * sizeof(int)));
  int m = M;
  void *args5[] = {&small, &base, &m};
  kp.kernelParams = args5;
  kp.gridDim = dim3(M / 256);
  cudaGraphNode_t ka, kb, ke;
  CHECK(cudaGraphAddKernelNode(&ka, g, nullptr, 0, &kp));
  CHECK(cudaGraphAddKernelNode(&kb, g, &ka, 1, &kp));
  CHECK(cudaGraphAddEmptyNode(&ke, g, &kb, 1));
  cudaLaunchAttributeValue v = {};
  v.priority = 3;
  CHECK(cudaGraphKernelNodeSetAttribute(ka, cudaLaunchAttributePriority, &v));
  v = {};
  v.cooperative = 1;
  CHECK(cudaGraphKernelNodeSetAttribute(ka, cudaLaunchAttributeCooperative, &v));
  CHECK(cudaGraphKernelNodeCopyAttributes(kb, ka));
  v = {};
  CHECK(cudaGraphKernelNodeGetAttribute(kb, cudaLaunchAttributePriority, &v));
  int copied_priority = v.priority;
  CHECK(cudaGraphKernelNodeGetAttribute(kb, cudaLaunchAttributeCooperative, &v));
  printf("kernel node attributes copied: priority %d, cooperative %d\n", copied_priority, v.cooperative);
  v = {};
  v.clusterDim.x = 2;
  v.clusterDim.y = 1;
  v.clusterDim.z = 1;
  expect_error(cudaGraphKernelNodeSetAttribute(ka, cudaLaunchAttributeClusterDimension, &v),
               cudaErrorInvalidClusterSize, "a cluster of two CTAs");
  v = {};
  v.accessPolicyWindow.num_bytes = 4096;
  expect_error(cudaGraphKernelNodeSetAttribute(ka, cudaLaunchAttributeAccessPolicyWindow, &v),
               cudaErrorInvalidValue, "an access policy window");
  v = {};
  expect_error(cudaGraphKernelNodeSetAttribute(ke, cudaLaunchAttributePriority, &v), cudaErrorInvalidValue,
               "an attribute of an empty node");
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, s));  // cooperative launches of a small grid
  CHECK(cudaStreamSynchronize(s));
  static int hs[M];
  CHECK(cudaMemcpy(hs, small, sizeof hs, cudaMemcpyDeviceToHost));
  long long small_sum = 0;
  for (int i = 0; i < M; i++) small_sum += hs[i];
  printf("cooperative kernel nodes: sum %lld\n", small_sum);
  if (small_sum != (long long)M * (M - 1) / 2 + 1000LL * M) FAIL("cooperative kernel nodes\n");
  CHECK(cudaFree(small));
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));

  // 6. Copy nodes to and from a symbol: in = 10..17 -> g_table[2..6) -> back[0..4).
  static int in[8] = {10, 11, 12, 13, 14, 15, 16, 17}, back[4];
  CHECK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t to_sym, from_sym;
  CHECK(cudaGraphAddMemcpyNodeToSymbol(&to_sym, g, nullptr, 0, g_table, in, 4 * sizeof(int), 2 * sizeof(int),
                                       cudaMemcpyHostToDevice));
  CHECK(cudaGraphAddMemcpyNodeFromSymbol(&from_sym, g, &to_sym, 1, back, g_table, 4 * sizeof(int),
                                         2 * sizeof(int), cudaMemcpyDeviceToHost));
  expect_error(cudaGraphAddMemcpyNodeToSymbol(&to_sym, g, nullptr, 0, g_table, in, 8 * sizeof(int),
                                              4 * sizeof(int), cudaMemcpyHostToDevice),
               cudaErrorInvalidValue, "a symbol copy past the variable's end");
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, s2));
  CHECK(cudaStreamSynchronize(s2));
  printf("through the symbol: %d %d %d %d\n", back[0], back[1], back[2], back[3]);
  // The executable graph copies from in[4..8) instead.
  CHECK(cudaGraphExecMemcpyNodeSetParamsToSymbol(e, to_sym, g_table, in + 4, 4 * sizeof(int), 2 * sizeof(int),
                                                 cudaMemcpyHostToDevice));
  CHECK(cudaGraphLaunch(e, s2));
  CHECK(cudaStreamSynchronize(s2));
  printf("after the executable graph's change: %d %d %d %d\n", back[0], back[1], back[2], back[3]);
  if (back[0] != 14 || back[3] != 17) FAIL("symbol copy nodes\n");
  CHECK(cudaGraphExecDestroy(e));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaStreamDestroy(s2));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(out));
  printf("graph_memory: ok\n");
  return 0;
}
