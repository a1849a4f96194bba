// CUDA Graphs: stream capture with a fork/join across two streams and events (kernels by <<<>>> and by
// cudaLaunchKernel, memsets, memcpyAsync, a host function), the captured graph instantiated and launched
// several times; a graph built explicitly (kernel, memset, empty, child graph with a kernel and a copy,
// host nodes, cudaGraphAddDependencies), its kernel parameters read and changed in the graph, in the
// executable graph and by cudaGraphExecUpdate from a clone; and the capture error paths.
#include "common.h"

#include <cstring>

constexpr int N = 1024;

__global__ void add_mod(int *x, int k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += k * (i % 5);
}

__global__ void scale(int *x, int m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= m;
}

__global__ void combine(int *dst, const int *a, const int *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = a[i] + b[i];
}

__global__ void fill(int *x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v + i;
}

__global__ void axpy(int *dst, const int *x, const int *y, int a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = a * x[i] + y[i];
}

__device__ int g_scale;
__device__ int g_side;

__global__ void scale_by_symbol(int *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = g_scale * i;
}

struct HostLog {
  int calls;
  long long sum;
  const int *data;
};

void CUDART_CB on_host(void *p) {
  HostLog *log = static_cast<HostLog *>(p);
  log->calls++;
  long long s = 0;
  for (int i = 0; i < N; i++) s += log->data[i];
  log->sum = s;
}

static int status_of(cudaStream_t s) {
  cudaStreamCaptureStatus st;
  CHECK(cudaStreamIsCapturing(s, &st));
  return (int)st;
}

static void captured_graph(cudaStream_t s1, cudaStream_t s2) {
  int *a, *b, *c, *h_out;
  CHECK(cudaMalloc(&a, N * sizeof(int)));
  CHECK(cudaMalloc(&b, N * sizeof(int)));
  CHECK(cudaMalloc(&c, N * sizeof(int)));
  CHECK(cudaMallocHost(&h_out, N * sizeof(int)));
  HostLog log = {0, 0, h_out};
  cudaEvent_t fork, join;
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  const int blocks = (N + 127) / 128;

  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  printf("capture: s1 status %d, s2 status %d\n", status_of(s1), status_of(s2));
  CHECK(cudaEventRecord(fork, s1));
  CHECK(cudaStreamWaitEvent(s2, fork, 0));
  printf("fork: s2 status %d\n", status_of(s2));
  // s1: a = 0, += k*(i%5) for k = 1..4, *= 2
  CHECK(cudaMemsetAsync(a, 0, N * sizeof(int), s1));
  for (int k = 1; k <= 4; k++) {
    add_mod<<<blocks, 128, 0, s1>>>(a, k, N);
    CHECK_LAUNCH();
  }
  scale<<<blocks, 128, 0, s1>>>(a, 2, N);
  CHECK_LAUNCH();
  // s2: b = 0, += k*(i%5) for k = 1..3 (k = 3 through cudaLaunchKernel, its argument changed after the
  // capture: the graph keeps the value captured)
  CHECK(cudaMemsetAsync(b, 0, N * sizeof(int), s2));
  for (int k = 1; k <= 2; k++) {
    add_mod<<<blocks, 128, 0, s2>>>(b, k, N);
    CHECK_LAUNCH();
  }
  int k3 = 3, n = N;
  void *args[] = {&b, &k3, &n};
  CHECK(cudaLaunchKernel((const void *)add_mod, dim3(blocks), dim3(128), args, 0, s2));
  k3 = 1000;
  CHECK(cudaEventRecord(join, s2));
  CHECK(cudaStreamWaitEvent(s1, join, 0));
  {
    cudaStreamCaptureStatus st;
    unsigned long long id = 0;
    const cudaGraphNode_t *deps = nullptr;
    size_t ndeps = 0;
    CHECK(cudaStreamGetCaptureInfo(s1, &st, &id, nullptr, &deps, nullptr, &ndeps));
    printf("join: status %d, id %s, %zu dependencies\n", (int)st, id != 0 ? "set" : "zero", ndeps);
  }
  combine<<<blocks, 128, 0, s1>>>(c, a, b, N);
  CHECK_LAUNCH();
  CHECK(cudaMemcpyAsync(h_out, c, N * sizeof(int), cudaMemcpyDeviceToHost, s1));
  CHECK(cudaLaunchHostFunc(s1, on_host, &log));
  cudaGraph_t graph;
  CHECK(cudaStreamEndCapture(s1, &graph));
  printf("end: s1 status %d, s2 status %d, host function ran %d times\n", status_of(s1), status_of(s2), log.calls);

  size_t nodes = 0, roots = 0, edges = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  CHECK(cudaGraphGetRootNodes(graph, nullptr, &roots));
  CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  printf("graph: %zu nodes, %zu roots, %zu edges\n", nodes, roots, edges);
  cudaGraphNode_t list[16];
  size_t room = 16;
  CHECK(cudaGraphGetNodes(graph, list, &room));
  int kinds[8] = {0};
  for (size_t i = 0; i < room; i++) {
    cudaGraphNodeType t;
    CHECK(cudaGraphNodeGetType(list[i], &t));
    if ((int)t < 8) kinds[(int)t]++;
  }
  printf("kinds: %d kernel, %d memcpy, %d memset, %d host\n", kinds[cudaGraphNodeTypeKernel],
         kinds[cudaGraphNodeTypeMemcpy], kinds[cudaGraphNodeTypeMemset], kinds[cudaGraphNodeTypeHost]);

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphUpload(exec, s1));
  for (int launch = 1; launch <= 3; launch++) {
    memset(h_out, 0xff, N * sizeof(int));
    CHECK(cudaGraphLaunch(exec, launch == 2 ? s2 : s1));
    CHECK(cudaStreamSynchronize(launch == 2 ? s2 : s1));
    for (int i = 0; i < N; i++)
      if (h_out[i] != 26 * (i % 5)) FAIL("launch %d: c[%d] = %d, expected %d", launch, i, h_out[i], 26 * (i % 5));
    printf("launch %d: host calls %d, sum %lld\n", launch, log.calls, log.sum);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(fork));
  CHECK(cudaEventDestroy(join));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaFreeHost(h_out));
}

static int fill_value(cudaGraphNode_t node) {
  cudaKernelNodeParams p;
  CHECK(cudaGraphKernelNodeGetParams(node, &p));
  if (p.func != (void *)fill || p.gridDim.x != (N + 255) / 256 || p.blockDim.x != 256)
    FAIL("kernel node parameters read back wrong");
  return *(int *)p.kernelParams[1];
}

static void set_fill(cudaGraphExec_t exec, cudaGraphNode_t node, int *x, int v) {
  int n = N;
  void *args[] = {&x, &v, &n};
  cudaKernelNodeParams p = {};
  p.func = (void *)fill;
  p.gridDim = dim3((N + 255) / 256);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  if (exec)
    CHECK(cudaGraphExecKernelNodeSetParams(exec, node, &p));
  else
    CHECK(cudaGraphKernelNodeSetParams(node, &p));
}

static void explicit_graph(cudaStream_t s) {
  int *x, *y, *z, *h;
  CHECK(cudaMalloc(&x, N * sizeof(int)));
  CHECK(cudaMalloc(&y, N * sizeof(int)));
  CHECK(cudaMalloc(&z, N * sizeof(int)));
  CHECK(cudaMallocHost(&h, N * sizeof(int)));
  HostLog log = {0, 0, h};

  cudaGraph_t graph, child;
  CHECK(cudaGraphCreate(&graph, 0));
  CHECK(cudaGraphCreate(&child, 0));
  // x[i] = 7 + i
  int v = 7, n = N;
  void *fill_args[] = {&x, &v, &n};
  cudaKernelNodeParams kp = {};
  kp.func = (void *)fill;
  kp.gridDim = dim3((N + 255) / 256);
  kp.blockDim = dim3(256);
  kp.kernelParams = fill_args;
  cudaGraphNode_t k1, m, e, cn, hn;
  CHECK(cudaGraphAddKernelNode(&k1, graph, nullptr, 0, &kp));
  v = 99;  // the node copied 7
  // y[i] = 3 (4-byte elements)
  cudaMemsetParams mp = {};
  mp.dst = y;
  mp.value = 3;
  mp.elementSize = 4;
  mp.width = N;
  mp.height = 1;
  CHECK(cudaGraphAddMemsetNode(&m, graph, nullptr, 0, &mp));
  CHECK(cudaGraphAddEmptyNode(&e, graph, nullptr, 0));
  cudaGraphNode_t from[] = {k1, m}, to[] = {e, e};
  CHECK(cudaGraphAddDependencies(graph, from, to, nullptr, 2));
  // child: z = 2x + y, then z copied to h
  int two = 2;
  void *axpy_args[] = {&z, &x, &y, &two, &n};
  cudaKernelNodeParams ap = kp;
  ap.func = (void *)axpy;
  ap.kernelParams = axpy_args;
  cudaGraphNode_t ck, cc;
  CHECK(cudaGraphAddKernelNode(&ck, child, nullptr, 0, &ap));
  CHECK(cudaGraphAddMemcpyNode1D(&cc, child, &ck, 1, h, z, N * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaGraphAddChildGraphNode(&cn, graph, &e, 1, child));
  CHECK(cudaGraphDestroy(child));  // the node holds its own copy
  cudaHostNodeParams hp = {on_host, &log};
  CHECK(cudaGraphAddHostNode(&hn, graph, &cn, 1, &hp));

  size_t nodes = 0, roots = 0, edges = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  CHECK(cudaGraphGetRootNodes(graph, nullptr, &roots));
  CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges));
  cudaGraphNodeType te, tc;
  CHECK(cudaGraphNodeGetType(e, &te));
  CHECK(cudaGraphNodeGetType(cn, &tc));
  printf("explicit: %zu nodes, %zu roots, %zu edges, empty type %d, child type %d\n", nodes, roots, edges, (int)te,
         (int)tc);
  printf("fill node value %d\n", fill_value(k1));
  set_fill(nullptr, k1, x, 10);
  printf("fill node value after set %d\n", fill_value(k1));

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  auto run = [&](int fv, const char *what, int yv = 3) {
    memset(h, 0, N * sizeof(int));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < N; i++)
      if (h[i] != 2 * (fv + i) + yv) FAIL("%s: h[%d] = %d, expected %d", what, i, h[i], 2 * (fv + i) + yv);
    printf("%s: h[0] %d, h[%d] %d, host calls %d, sum %lld\n", what, h[0], N - 1, h[N - 1], log.calls, log.sum);
  };
  run(10, "instantiated");
  set_fill(exec, k1, x, 20);
  run(20, "exec set params");
  printf("graph node still %d\n", fill_value(k1));

  cudaGraph_t copy;
  CHECK(cudaGraphClone(&copy, graph));
  cudaGraphNode_t copies[8];
  size_t count = 8;
  CHECK(cudaGraphGetNodes(copy, copies, &count));
  // The clone's top-level kernel node is its copy of the fill node.
  cudaGraphNode_t fill_copy = nullptr;
  for (size_t i = 0; i < count; i++) {
    cudaGraphNodeType t;
    CHECK(cudaGraphNodeGetType(copies[i], &t));
    if (t == cudaGraphNodeTypeKernel) fill_copy = copies[i];
  }
  if (!fill_copy || fill_copy == k1) FAIL("the clone has no kernel node of its own");
  printf("clone: %zu nodes, fill value %d\n", count, fill_value(fill_copy));
  set_fill(nullptr, fill_copy, x, 30);
  cudaGraphExecUpdateResultInfo info;
  CHECK(cudaGraphExecUpdate(exec, copy, &info));
  printf("update: result %d\n", (int)info.result);
  run(30, "updated");

  cudaGraph_t other;
  CHECK(cudaGraphCreate(&other, 0));
  cudaGraphNode_t lone;
  CHECK(cudaGraphAddEmptyNode(&lone, other, nullptr, 0));
  EXPECT_ERR(cudaGraphExecUpdate(exec, other, &info), cudaErrorGraphExecUpdateFailure);
  (void)cudaGetLastError();
  printf("update to another topology: result %d\n", (int)info.result);
  run(30, "unchanged");

  // The memset node changed in the executable graph only; the child graph node's own graph.
  mp.value = 5;
  CHECK(cudaGraphExecMemsetNodeSetParams(exec, m, &mp));
  run(30, "exec memset 5", 5);
  cudaMemsetParams back;
  CHECK(cudaGraphMemsetNodeGetParams(m, &back));
  cudaGraph_t inner;
  size_t inner_nodes = 0, dependents = 0;
  CHECK(cudaGraphChildGraphNodeGetGraph(cn, &inner));
  CHECK(cudaGraphGetNodes(inner, nullptr, &inner_nodes));
  CHECK(cudaGraphNodeGetDependentNodes(e, nullptr, nullptr, &dependents));
  cudaHostNodeParams hback;
  CHECK(cudaGraphHostNodeGetParams(hn, &hback));
  printf("graph memset value %u, child graph %zu nodes, empty node has %zu dependent, host node %s\n", back.value,
         inner_nodes, dependents, hback.fn == on_host && hback.userData == &log ? "same" : "differs");

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(other));
  CHECK(cudaGraphDestroy(copy));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(z));
  CHECK(cudaFreeHost(h));
}

// Symbol copies captured: a memcpy node reads its host source when the graph runs, not when captured.
// Another stream outside the capture keeps working meanwhile (a relaxed capture: the others forbid
// synchronizing it, see capture_errors).
static void symbol_graph(cudaStream_t s1, cudaStream_t s2) {
  int *d, *h;
  CHECK(cudaMalloc(&d, N * sizeof(int)));
  CHECK(cudaMallocHost(&h, N * sizeof(int)));
  int *factor;
  CHECK(cudaMallocHost(&factor, sizeof(int)));
  *factor = 3;
  int side = 11, side_back = 0;
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeRelaxed));
  CHECK(cudaMemcpyToSymbolAsync(g_scale, factor, sizeof(int), 0, cudaMemcpyHostToDevice, s1));
  scale_by_symbol<<<N / 256, 256, 0, s1>>>(d, N);
  CHECK_LAUNCH();
  CHECK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s1));
  CHECK(cudaMemcpyFromSymbolAsync(&side_back, g_scale, sizeof(int), 0, cudaMemcpyDeviceToHost, s1));
  // s2 is not part of the capture: its work runs now.
  CHECK(cudaMemcpyToSymbolAsync(g_side, &side, sizeof(int), 0, cudaMemcpyHostToDevice, s2));
  CHECK(cudaStreamSynchronize(s2));
  cudaGraph_t graph;
  CHECK(cudaStreamEndCapture(s1, &graph));
  int side_read = 0;
  CHECK(cudaMemcpyFromSymbol(&side_read, g_side, sizeof(int)));
  printf("symbol capture: side stream wrote %d, captured copy-back not run (%d)\n", side_read, side_back);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int f = 4; f <= 5; f++) {
    *factor = f;
    CHECK(cudaGraphLaunch(exec, s1));
    CHECK(cudaStreamSynchronize(s1));
    for (int i = 0; i < N; i++)
      if (h[i] != f * i) FAIL("factor %d: h[%d] = %d", f, i, h[i]);
    printf("symbol graph with factor %d: h[%d] %d, copied back %d\n", f, N - 1, h[N - 1], side_back);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(d));
  CHECK(cudaFreeHost(h));
  CHECK(cudaFreeHost(factor));
}

// Memcpy nodes from cudaMemcpy3DParms (as simpleCudaGraphs makes them): host rows into pitched device
// memory and back, the device rows padded.
static void memcpy3d_graph(cudaStream_t s) {
  constexpr int W = 20, H = 6;
  int src[H][W], back[H][W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) src[y][x] = 100 * y + x, back[y][x] = -1;
  int *d;
  size_t pitch;
  CHECK(cudaMallocPitch(&d, &pitch, W * sizeof(int), H));
  cudaGraph_t graph;
  CHECK(cudaGraphCreate(&graph, 0));
  cudaMemcpy3DParms up = {};
  up.srcPtr = make_cudaPitchedPtr(src, W * sizeof(int), W, H);
  up.dstPtr = make_cudaPitchedPtr(d, pitch, W, H);
  up.extent = make_cudaExtent(W * sizeof(int), H, 1);
  up.kind = cudaMemcpyHostToDevice;
  cudaMemcpy3DParms down = {};
  down.srcPtr = up.dstPtr;
  down.dstPtr = up.srcPtr;
  down.dstPtr.ptr = back;
  down.extent = up.extent;
  down.kind = cudaMemcpyDeviceToHost;
  cudaGraphNode_t n_up, n_down;
  CHECK(cudaGraphAddMemcpyNode(&n_up, graph, nullptr, 0, &up));
  CHECK(cudaGraphAddMemcpyNode(&n_down, graph, &n_up, 1, &down));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      if (back[y][x] != src[y][x]) FAIL("3-D copy: (%d, %d) = %d", x, y, back[y][x]);
  cudaGraphNodeType t;
  CHECK(cudaGraphNodeGetType(n_down, &t));
  printf("memcpy3d nodes (type %d): %dx%d ints there and back, last %d\n", (int)t, W, H, back[H - 1][W - 1]);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(d));
}

static void capture_errors(cudaStream_t s1, cudaStream_t s2) {
  int *d;
  CHECK(cudaMalloc(&d, N * sizeof(int)));
  cudaEvent_t ev;
  CHECK(cudaEventCreate(&ev));
  cudaGraph_t graph;

  // A fork never joined back.
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  CHECK(cudaEventRecord(ev, s1));
  CHECK(cudaStreamWaitEvent(s2, ev, 0));
  fill<<<N / 256, 256, 0, s2>>>(d, 1, N);
  CHECK_LAUNCH();
  graph = (cudaGraph_t)&graph;
  cudaError_t err = cudaStreamEndCapture(s1, &graph);
  (void)cudaGetLastError();
  printf("unjoined: %s, graph %s, s2 status %d\n", cudaGetErrorName(err), graph ? "set" : "null", status_of(s2));

  // Synchronizing the capturing stream.
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  err = cudaStreamSynchronize(s1);
  (void)cudaGetLastError();
  printf("synchronize: %s, status %d\n", cudaGetErrorName(err), status_of(s1));
  err = cudaStreamEndCapture(s1, &graph);
  (void)cudaGetLastError();
  printf("end after synchronize: %s, graph %s\n", cudaGetErrorName(err), graph ? "set" : "null");

  // A blocking copy on the legacy stream while a blocking stream captures.
  int host[4] = {0};
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  err = cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost);
  (void)cudaGetLastError();
  printf("legacy copy: %s, status %d\n", cudaGetErrorName(err), status_of(s1));
  err = cudaStreamEndCapture(s1, &graph);
  (void)cudaGetLastError();
  printf("end after legacy copy: %s\n", cudaGetErrorName(err));

  // cudaDeviceSynchronize while capturing.
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  err = cudaDeviceSynchronize();
  (void)cudaGetLastError();
  printf("device synchronize: %s\n", cudaGetErrorName(err));
  err = cudaStreamEndCapture(s1, &graph);
  (void)cudaGetLastError();
  printf("end after device synchronize: %s\n", cudaGetErrorName(err));

  // Calls that may synchronize (waiting for another stream, querying an event, cudaMalloc) are forbidden
  // while this thread captures in global or thread-local mode, and the capture is invalidated; a relaxed
  // capture allows them.
  cudaEvent_t other;
  CHECK(cudaEventCreate(&other));
  CHECK(cudaEventRecord(other, s2));
  const cudaStreamCaptureMode modes[] = {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal,
                                         cudaStreamCaptureModeRelaxed};
  const char *mode_names[] = {"global", "thread-local", "relaxed"};
  for (int m = 0; m < 3; m++) {
    CHECK(cudaStreamBeginCapture(s1, modes[m]));
    fill<<<N / 256, 256, 0, s1>>>(d, 2, N);
    CHECK_LAUNCH();
    cudaError_t sync = cudaStreamSynchronize(s2);
    cudaError_t query = cudaEventQuery(other);
    void *p = nullptr;
    cudaError_t alloc = cudaMalloc(&p, 64);
    int status = status_of(s1);
    graph = nullptr;
    err = cudaStreamEndCapture(s1, &graph);
    (void)cudaGetLastError();
    printf("%s capture: synchronize another stream %s, query an event %s, cudaMalloc %s, status %d, end %s\n",
           mode_names[m], cudaGetErrorName(sync), cudaGetErrorName(query), cudaGetErrorName(alloc), status,
           cudaGetErrorName(err));
    if (graph) CHECK(cudaGraphDestroy(graph));
    if (p) CHECK(cudaFree(p));
  }
  CHECK(cudaEventDestroy(other));

  // Everything works again afterwards.
  fill<<<N / 256, 256, 0, s1>>>(d, 5, N);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost));
  printf("after: %d %d %d %d\n", host[0], host[1], host[2], host[3]);
  CHECK(cudaEventDestroy(ev));
  CHECK(cudaFree(d));
}

int main() {
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreate(&s2));
  captured_graph(s1, s2);
  explicit_graph(s1);
  symbol_graph(s1, s2);
  memcpy3d_graph(s2);
  capture_errors(s1, s2);
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  CHECK(cudaDeviceSynchronize());
  printf("PASSED\n");
  return 0;
}
