/* The driver API as a program that loads its own device code uses it. Each mode checks its results and
   prints "ok"; a failing call prints its name, the error's name and string, and exits with 1.

     driver_test ptx FILE.ptx            cuModuleLoad of a PTX file; both launch parameter forms
     driver_test fatbin FILE.fatbin      cuModuleLoadData and cuModuleLoadFatBinary of a fatbinary
     driver_test cubin FILE.cubin        a cubin is refused with CUDA_ERROR_NO_BINARY_FOR_GPU
     driver_test link MAIN.ptx HELPER.ptx   cuLinkAddData + cuLinkAddFile, cuLinkComplete, load the image
     driver_test badptx                  broken PTX: CUDA_ERROR_INVALID_PTX and the message in the error log
     driver_test proc                    cuGetProcAddress finds functions by API name and version
     driver_test nvrtc LIBNVRTC.so       CUDA C++ compiled by NVRTC at run time, loaded and launched
     driver_test bounds                  launches beyond a kernel's .maxntid / .reqntid: CUDA_ERROR_INVALID_VALUE
     driver_test fork                    a child forked after cuInit gets CUDA_ERROR_NOT_INITIALIZED
     driver_test batch                   cuMemcpyBatchAsync (both forms) and the capture status of streams
     driver_test pools                   memory pools: default, created, current; attributes, access, errors
     driver_test graphs FILE.ptx         stream capture of launches into a graph, instantiated and launched
     driver_test stream_attrs            stream attributes: set, read back, copied; a priority; refusals
     driver_test graph_nodes FILE.ptx    a graph built node by node: kernel, set, copy, host, empty and child
                                         nodes, edges, parameters, clones, updates and user objects */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_min.h"

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        CUresult r_ = (call);                                                                        \
        if (r_ != 0) {                                                                               \
            const char *name_ = "?", *text_ = "?";                                                   \
            cuGetErrorName(r_, &name_);                                                              \
            cuGetErrorString(r_, &text_);                                                            \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, name_, text_); \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#define EXPECT(cond)                                                              \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

static void setup(void) {
    CUdevice dev;
    CUcontext ctx;
    int version = 0, major = 0;
    char name[256];
    CHECK(cuInit(0));
    CHECK(cuDriverGetVersion(&version));
    EXPECT(version >= 12000);
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDeviceGetName(name, sizeof name, dev));
    CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    EXPECT(major >= 7);
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
}

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc(n + 1);
    EXPECT(fread(data, 1, n, f) == (size_t)n);
    data[n] = 0;
    fclose(f);
    if (size) *size = n;
    return data;
}

/* saxpy through kernelParams, then through the CU_LAUNCH_PARAM_BUFFER_POINTER buffer. */
static void run_saxpy(CUmodule mod) {
    enum { N = 10000 };
    static float x[N], y[N];
    CUfunction f;
    CUdeviceptr dx, dy;
    for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 1.0f;
    CHECK(cuModuleGetFunction(&f, mod, "saxpy"));
    /* The parameter layout: int at 0, float at 4, pointers at 8 and 16. */
    size_t count = 0, offset = 0, psize = 0;
    CHECK(cuFuncGetParamCount(f, &count));
    EXPECT(count == 4);
    CHECK(cuFuncGetParamInfo(f, 3, &offset, &psize));
    EXPECT(offset == 16 && psize == 8);
    CHECK(cuFuncGetParamInfo(f, 1, &offset, NULL));
    EXPECT(offset == 4);
    EXPECT(cuFuncGetParamInfo(f, 4, &offset, &psize) == 1 /* invalid value */);
    CHECK(cuMemAlloc_v2(&dx, sizeof x));
    CHECK(cuMemAlloc_v2(&dy, sizeof y));
    CHECK(cuMemcpyHtoD_v2(dx, x, sizeof x));
    CHECK(cuMemcpyHtoD_v2(dy, y, sizeof y));
    int n = N;
    float a = 2.0f;
    void *params[] = {&n, &a, &dx, &dy};
    CHECK(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, 0, params, NULL));
    /* The same launch with the arguments laid out in one buffer: int at 0, float at 4, pointers at 8, 16. */
    struct {
        int n;
        float a;
        CUdeviceptr x, y;
    } buffer = {N, 0.5f, dx, dy};
    size_t size = sizeof buffer;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CHECK(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, 0, NULL, extra));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH_v2(y, dy, sizeof y));
    for (int i = 0; i < N; i++) EXPECT(y[i] == 2.5f * i + 1.0f);
    CHECK(cuMemFree_v2(dx));
    CHECK(cuMemFree_v2(dy));
}

/* A shared-memory reduction (dynamic shared memory), parameters of mixed sizes, a module variable. */
static void run_others(CUmodule mod) {
    enum { N = 4096, B = 128 };
    static float x[N], partial[N / B];
    CUfunction sum, mixed, bump;
    CUdeviceptr dx, dp, dout, counter;
    size_t counter_size = 0;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 7);
    CHECK(cuModuleGetFunction(&sum, mod, "block_sum"));
    CHECK(cuMemAlloc_v2(&dx, sizeof x));
    CHECK(cuMemAlloc_v2(&dp, sizeof partial));
    CHECK(cuMemcpyHtoD_v2(dx, x, sizeof x));
    int n = N;
    void *p1[] = {&dx, &dp, &n};
    CHECK(cuLaunchKernel(sum, N / B, 1, 1, B, 1, 1, B * sizeof(float), 0, p1, NULL));
    CHECK(cuMemcpyDtoH_v2(partial, dp, sizeof partial));
    double total = 0, expect = 0;
    for (int i = 0; i < N / B; i++) total += partial[i];
    for (int i = 0; i < N; i++) expect += x[i];
    EXPECT(total == expect);

    long long out[3] = {0, 0, 0};
    CHECK(cuModuleGetFunction(&mixed, mod, "mixed"));
    CHECK(cuMemAlloc_v2(&dout, sizeof out));
    char c = -7;
    double d = 21.25;
    short s = 1234;
    void *p2[] = {&c, &d, &s, &dout};
    CHECK(cuLaunchKernel(mixed, 1, 1, 1, 1, 1, 1, 0, 0, p2, NULL));
    CHECK(cuMemcpyDtoH_v2(out, dout, sizeof out));
    EXPECT(out[0] == -7 && out[1] == 42 && out[2] == 1234);

    CHECK(cuModuleGetFunction(&bump, mod, "bump"));
    CHECK(cuModuleGetGlobal_v2(&counter, &counter_size, mod, "counter"));
    EXPECT(counter_size == sizeof(int));
    int by = 3, value = 0;
    void *p3[] = {&by};
    CHECK(cuLaunchKernel(bump, 4, 1, 1, 32, 1, 1, 0, 0, p3, NULL));
    CHECK(cuMemcpyDtoH_v2(&value, counter, sizeof value));
    EXPECT(value == 5 + 4 * 32 * 3);
    CUfunction none;
    EXPECT(cuModuleGetFunction(&none, mod, "no_such_kernel") == 500 /* CUDA_ERROR_NOT_FOUND */);
}

static const char *NVRTC_SOURCE =
    "extern \"C\" __global__ void square_add(const double *x, double *y, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] += x[i] * x[i];\n"
    "}\n";

typedef int (*nvrtcCreateProgram_t)(void **, const char *, const char *, int, const char *const *,
                                    const char *const *);
typedef int (*nvrtcCompileProgram_t)(void *, int, const char *const *);
typedef int (*nvrtcGetSize_t)(void *, size_t *);
typedef int (*nvrtcGet_t)(void *, char *);

static void run_nvrtc(const char *lib) {
    void *h = dlopen(lib, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "cannot load NVRTC: %s\n", dlerror());
        exit(1);
    }
    nvrtcCreateProgram_t create = (nvrtcCreateProgram_t)dlsym(h, "nvrtcCreateProgram");
    nvrtcCompileProgram_t compile = (nvrtcCompileProgram_t)dlsym(h, "nvrtcCompileProgram");
    nvrtcGetSize_t ptx_size = (nvrtcGetSize_t)dlsym(h, "nvrtcGetPTXSize");
    nvrtcGet_t get_ptx = (nvrtcGet_t)dlsym(h, "nvrtcGetPTX");
    nvrtcGetSize_t log_size = (nvrtcGetSize_t)dlsym(h, "nvrtcGetProgramLogSize");
    nvrtcGet_t get_log = (nvrtcGet_t)dlsym(h, "nvrtcGetProgramLog");
    EXPECT(create && compile && ptx_size && get_ptx);
    void *prog;
    EXPECT(create(&prog, NVRTC_SOURCE, "square_add.cu", 0, NULL, NULL) == 0);
    const char *opts[] = {"--gpu-architecture=compute_80"};
    if (compile(prog, 1, opts) != 0) {
        size_t n = 0;
        log_size(prog, &n);
        char *log = malloc(n + 1);
        get_log(prog, log);
        fprintf(stderr, "NVRTC failed:\n%s\n", log);
        exit(1);
    }
    size_t n = 0;
    EXPECT(ptx_size(prog, &n) == 0);
    char *ptx = malloc(n);
    EXPECT(get_ptx(prog, ptx) == 0);

    char log[1024] = "";
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(size_t)sizeof log};
    CUmodule mod;
    CHECK(cuModuleLoadDataEx(&mod, ptx, 2, options, values));
    CUfunction f;
    CHECK(cuModuleGetFunction(&f, mod, "square_add"));
    enum { N = 1000 };
    static double x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = i * 0.5, y[i] = 1.0;
    CUdeviceptr dx, dy;
    CHECK(cuMemAlloc_v2(&dx, sizeof x));
    CHECK(cuMemAlloc_v2(&dy, sizeof y));
    CHECK(cuMemcpyHtoD_v2(dx, x, sizeof x));
    CHECK(cuMemcpyHtoD_v2(dy, y, sizeof y));
    int count = N;
    void *params[] = {&dx, &dy, &count};
    CHECK(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, 0, params, NULL));
    CHECK(cuMemcpyDtoH_v2(y, dy, sizeof y));
    for (int i = 0; i < N; i++) EXPECT(y[i] == 1.0 + x[i] * x[i]);
}

/* A kernel that may have at most 64 threads a block (any shape) and one that must have exactly 32 x 2: each
   stores 1 through its pointer. A launch that breaks the bound fails before it runs. */
static void run_bounds(void) {
    const char *ptx =
        ".version 8.0\n.target sm_80\n.address_size 64\n"
        ".visible .entry bounded(.param .u64 p) .maxntid 64 {\n .reg .b64 %rd<1>;\n"
        " ld.param.u64 %rd0, [p];\n st.global.u32 [%rd0], 1;\n ret;\n}\n"
        ".visible .entry exact(.param .u64 p) .reqntid 32, 2 {\n .reg .b64 %rd<1>;\n"
        " ld.param.u64 %rd0, [p];\n st.global.u32 [%rd0], 1;\n ret;\n}\n";
    CUmodule mod;
    CUfunction bounded, exact;
    CUdeviceptr d;
    unsigned int v = 0;
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&bounded, mod, "bounded"));
    CHECK(cuModuleGetFunction(&exact, mod, "exact"));
    CHECK(cuMemAlloc_v2(&d, 4));
    void *params[] = {&d};
    CHECK(cuMemsetD32_v2(d, 0, 1));
    CHECK(cuLaunchKernel(bounded, 1, 1, 1, 16, 4, 1, 0, 0, params, NULL));
    CHECK(cuMemcpyDtoH_v2(&v, d, 4));
    EXPECT(v == 1);
    CHECK(cuMemsetD32_v2(d, 0, 1));
    EXPECT(cuLaunchKernel(bounded, 1, 1, 1, 128, 1, 1, 0, 0, params, NULL) == 1 /* CUDA_ERROR_INVALID_VALUE */);
    EXPECT(cuLaunchKernel(exact, 1, 1, 1, 64, 1, 1, 0, 0, params, NULL) == 1);
    CHECK(cuMemcpyDtoH_v2(&v, d, 4));
    EXPECT(v == 0);
    CHECK(cuLaunchKernel(exact, 1, 1, 1, 32, 2, 1, 0, 0, params, NULL));
    CHECK(cuMemcpyDtoH_v2(&v, d, 4));
    EXPECT(v == 1);
    CHECK(cuCtxSynchronize());
}

/* fork() after initialization: the child's calls fail with CUDA_ERROR_NOT_INITIALIZED (3), cuInit too; the
   parent goes on working. */
static void run_fork(void) {
    CUdeviceptr d;
    CHECK(cuMemAlloc_v2(&d, 4));
    fflush(NULL);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        CUdeviceptr c;
        int bad = 0;
        bad |= cuMemAlloc_v2(&c, 4) != 3;
        bad |= cuMemsetD32_v2(d, 7, 1) != 3;
        bad |= cuCtxSynchronize() != 3;
        bad |= cuInit(0) != 3;
        _exit(bad ? 1 : 0);
    }
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unsigned int v = 0;
    CHECK(cuMemsetD32_v2(d, 5, 1));
    CHECK(cuMemcpyDtoH_v2(&v, d, 4));
    EXPECT(v == 5);
    CHECK(cuMemFree_v2(d));
}

/* Three copies in one batch (host to device, device to device, device to host) with two attribute sets, on
   a created stream, then the errors CUDA defines: a batch on the legacy stream, attribute indices that do
   not start at 0, an invalid source access order, a copy that fails (the old form names it). No stream is
   ever capturing. */
static void run_batch(void) {
    enum { N = 256 };
    static int in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = i * 7 + 1, out[i] = -1;
    CUstream s;
    CUdeviceptr a, b;
    CHECK(cuStreamCreate(&s, 0));
    CHECK(cuMemAlloc_v2(&a, sizeof in));
    CHECK(cuMemAlloc_v2(&b, sizeof in));
    int status = -1;
    CHECK(cuStreamIsCapturing(s, &status));
    EXPECT(status == 0);
    status = -1;
    CHECK(cuStreamGetCaptureInfo_v3(s, &status, NULL, NULL, NULL, NULL, NULL));
    EXPECT(status == 0);

    CUmemcpyAttributes attrs[2] = {{1, {0, 0}, {0, 0}, 0}, {3, {1, 0}, {2, 0}, 0}};
    size_t idxs[2] = {0, 1};
    /* The batch's copies have no order among themselves: one batch per dependent step. */
    CUdeviceptr d1[] = {a}, s1[] = {(CUdeviceptr)in};
    size_t n1[] = {sizeof in};
    CHECK(cuMemcpyBatchAsync_v2(d1, s1, n1, 1, attrs, idxs, 1, s));
    CUdeviceptr d2[] = {b, (CUdeviceptr)out}, s2[] = {a, a};
    size_t n2[] = {sizeof in, sizeof in / 2};
    CHECK(cuMemcpyBatchAsync_v2(d2, s2, n2, 2, attrs, idxs, 2, s));
    CHECK(cuStreamSynchronize(s));
    for (int i = 0; i < N; i++) EXPECT(out[i] == (i < N / 2 ? in[i] : -1));
    CUdeviceptr d3[] = {(CUdeviceptr)out}, s3[] = {b};
    CHECK(cuMemcpyBatchAsync_v2(d3, s3, n1, 1, attrs, idxs, 1, s));
    CHECK(cuStreamSynchronize(s));
    for (int i = 0; i < N; i++) EXPECT(out[i] == in[i]);

    EXPECT(cuMemcpyBatchAsync_v2(d1, s1, n1, 1, attrs, idxs, 1, NULL) == 1 /* the legacy stream */);
    size_t bad_idxs[2] = {1, 0};
    EXPECT(cuMemcpyBatchAsync_v2(d2, s2, n2, 2, attrs, bad_idxs, 2, s) == 1);
    CUmemcpyAttributes bad_order = {0, {0, 0}, {0, 0}, 0};
    EXPECT(cuMemcpyBatchAsync_v2(d1, s1, n1, 1, &bad_order, idxs, 1, s) == 1);
    size_t fail = 12345; /* left alone for the legacy stream, as NVIDIA's driver does */
    EXPECT(cuMemcpyBatchAsync(d1, s1, n1, 1, attrs, idxs, 1, &fail, NULL) == 1 && fail == 12345);
    fail = 0;
    EXPECT(cuMemcpyBatchAsync(d2, s2, n2, 2, attrs, bad_idxs, 2, &fail, s) == 1 && fail == (size_t)-1);
    CUdeviceptr d4[] = {b, 0}, s4[] = {a, a};
    fail = 0;
    EXPECT(cuMemcpyBatchAsync(d4, s4, n2, 2, attrs, idxs, 1, &fail, s) == 1 && fail == 1);
    CHECK(cuStreamDestroy_v2(s));
    CHECK(cuMemFree_v2(a));
    CHECK(cuMemFree_v2(b));
}

static unsigned long long pool_u64(CUmemoryPool pool, int attr) {
    unsigned long long v = 0;
    CHECK(cuMemPoolGetAttribute(pool, attr, &v));
    return v;
}

/* Memory pools: the default pool is the current one and keeps its release threshold; a created pool counts
   what is allocated from it (cuMemAllocFromPoolAsync, and cuMemAllocAsync once it is current) and its high
   watermark resets; the documented errors of misuse. */
static void run_pools(void) {
    CUstream s;
    CUmemoryPool def, cur, pool;
    CHECK(cuStreamCreate(&s, 0));
    CHECK(cuDeviceGetDefaultMemPool(&def, 0));
    CHECK(cuDeviceGetMemPool(&cur, 0));
    EXPECT(def == cur);
    unsigned long long threshold = 1ull << 30;
    CHECK(cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
    EXPECT(pool_u64(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 1ull << 30);
    int reuse = 0;
    CHECK(cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse));
    EXPECT(reuse == 1);

    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = 1;
    props.location.type = 1;
    props.location.id = 0;
    CHECK(cuMemPoolCreate(&pool, &props));
    CUmemAccessDesc desc = {{1, 0}, 3};
    CHECK(cuMemPoolSetAccess(pool, &desc, 1));
    int flags = 0;
    CHECK(cuMemPoolGetAccess(&flags, pool, &props.location));
    EXPECT(flags == 3);

    CUdeviceptr a, b;
    CHECK(cuMemAllocFromPoolAsync(&a, 4096, pool, s));
    CHECK(cuMemAllocFromPoolAsync(&b, 1024, pool, s));
    CHECK(cuMemsetD32Async(a, 7, 1024, s));
    unsigned v = 0;
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemcpyDtoH_v2(&v, a + 4092, 4));
    EXPECT(v == 7);
    unsigned long long used2 = pool_u64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    EXPECT(used2 >= 5120);
    EXPECT(pool_u64(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
    CHECK(cuMemFreeAsync(a, s));
    CHECK(cuStreamSynchronize(s));
    unsigned long long used1 = pool_u64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    EXPECT(used1 >= 1024 && used1 < used2);
    EXPECT(pool_u64(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= used2);
    unsigned long long zero = 0;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
    EXPECT(pool_u64(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) < used2);
    CHECK(cuMemPoolTrimTo(pool, 0));

    CHECK(cuDeviceSetMemPool(0, pool));
    CHECK(cuMemAllocAsync(&a, 512, s));
    EXPECT(pool_u64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) > used1);
    CHECK(cuMemFreeAsync(a, s));
    CHECK(cuMemFreeAsync(b, s));
    CHECK(cuStreamSynchronize(s));

    EXPECT(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &zero) == 1 /* invalid value */);
    EXPECT(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &threshold) == 1);
    EXPECT(cuMemPoolDestroy(def) == 1);
    EXPECT(cuDeviceGetDefaultMemPool(&cur, 1) == 101 /* invalid device */);
    CHECK(cuMemPoolDestroy(pool));
    CHECK(cuDeviceGetMemPool(&cur, 0));
    EXPECT(cur == def);
    CHECK(cuStreamDestroy_v2(s));
}

/* Two saxpy launches captured from a stream into a graph (nothing runs while capturing), the capture status
   during and after, then the graph launched three times; ending a capture that never began is an illegal
   state and gives a null graph. */
static void run_graphs(CUmodule mod) {
    enum { N = 1000 };
    static float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 1.0f;
    CUfunction f;
    CUstream s;
    CUdeviceptr dx, dy;
    CHECK(cuModuleGetFunction(&f, mod, "saxpy"));
    CHECK(cuStreamCreate(&s, 1 /* non-blocking */));
    CHECK(cuMemAlloc_v2(&dx, sizeof x));
    CHECK(cuMemAlloc_v2(&dy, sizeof y));
    CHECK(cuMemcpyHtoD_v2(dx, x, sizeof x));
    CHECK(cuMemcpyHtoD_v2(dy, y, sizeof y));
    int n = N;
    float a = 2.0f;
    void *params[] = {&n, &a, &dx, &dy};

    CHECK(cuStreamBeginCapture_v2(s, 0 /* global */));
    int status = -1;
    CHECK(cuStreamIsCapturing(s, &status));
    EXPECT(status == 1);
    CHECK(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
    unsigned long long id = 0;
    size_t deps = 0;
    CHECK(cuStreamGetCaptureInfo_v3(s, &status, &id, NULL, NULL, NULL, &deps));
    EXPECT(status == 1 && id != 0 && deps == 1);
    CHECK(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
    void *graph = NULL;
    CHECK(cuStreamEndCapture(s, &graph));
    EXPECT(graph != NULL);
    CHECK(cuStreamIsCapturing(s, &status));
    EXPECT(status == 0);
    CHECK(cuMemcpyDtoH_v2(y, dy, sizeof y));
    for (int i = 0; i < N; i++) EXPECT(y[i] == 1.0f); /* captured, not run */
    size_t count = 0;
    CHECK(cuGraphGetNodes(graph, NULL, &count));
    EXPECT(count == 2);

    void *exec = NULL;
    CHECK(cuGraphInstantiateWithFlags(&exec, graph, 0));
    for (int k = 0; k < 3; k++) CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemcpyDtoH_v2(y, dy, sizeof y));
    for (int i = 0; i < N; i++) EXPECT(y[i] == 12.0f * i + 1.0f);

    void *none = &none;
    EXPECT(cuStreamEndCapture(s, &none) == 401 /* CUDA_ERROR_ILLEGAL_STATE */ && none == NULL);
    CHECK(cuGraphExecDestroy(exec));
    CHECK(cuGraphDestroy(graph));
    CHECK(cuStreamDestroy_v2(s));
    CHECK(cuMemFree_v2(dx));
    CHECK(cuMemFree_v2(dy));
}

static int host_calls;
static void host_node(void *data) { host_calls += *(int *)data; }
static int destroyed;
static void destroy_object(void *data) { destroyed += *(int *)data; }

/* y = 1 (set node) -> y += 2x (kernel node) -> a host node -> a copy of y to the host; a child graph of one
   kernel (y += 2x), before the copy, and an empty node come after the kernel. The graph is checked through its edges and
   the kernel node's parameters, launched, changed (a = 3) in the graph and in the executable graph, cloned,
   updated from the clone, and it keeps a user object alive until the executable graph goes. */
static void run_graph_nodes(CUmodule mod) {
    enum { N = 500 };
    static float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = (float)i;
    CUfunction f;
    CUstream s;
    CUdeviceptr dx, dy;
    CHECK(cuModuleGetFunction(&f, mod, "saxpy"));
    CHECK(cuStreamCreate(&s, 1));
    CHECK(cuMemAlloc_v2(&dx, sizeof x));
    CHECK(cuMemAlloc_v2(&dy, sizeof y));
    CHECK(cuMemcpyHtoD_v2(dx, x, sizeof x));
    int n = N;
    float a = 2.0f;
    void *params[] = {&n, &a, &dx, &dy};

    void *graph, *set, *kernel, *host, *copy, *empty, *child_graph, *child, *child_kernel;
    CHECK(cuGraphCreate(&graph, 0));
    CUDA_MEMSET_NODE_PARAMS ms = {dy, 0, 0x3f800000u /* 1.0f */, 4, N, 1};
    CHECK(cuGraphAddMemsetNode(&set, graph, NULL, 0, &ms, NULL));
    CUDA_KERNEL_NODE_PARAMS kp = {f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, params, NULL, NULL, NULL};
    CHECK(cuGraphAddKernelNode_v2(&kernel, graph, &set, 1, &kp));
    int bump = 5;
    CUDA_HOST_NODE_PARAMS hp = {host_node, &bump};
    CHECK(cuGraphAddHostNode(&host, graph, NULL, 0, &hp));
    CHECK(cuGraphAddDependencies_v2(graph, &kernel, &host, NULL, 1));
    CUDA_MEMCPY3D cp;
    memset(&cp, 0, sizeof cp);
    cp.srcMemoryType = 2 /* device */;
    cp.srcDevice = dy;
    cp.dstMemoryType = 1 /* host */;
    cp.dstHost = y;
    cp.WidthInBytes = sizeof y;
    cp.Height = cp.Depth = 1;
    CHECK(cuGraphAddMemcpyNode(&copy, graph, &host, 1, &cp, NULL));
    CHECK(cuGraphCreate(&child_graph, 0));
    CHECK(cuGraphAddKernelNode_v2(&child_kernel, child_graph, NULL, 0, &kp));
    CHECK(cuGraphAddChildGraphNode(&child, graph, &kernel, 1, child_graph));
    CHECK(cuGraphDestroy(child_graph)); /* the node holds its own copy */
    /* The empty node through the generic API; the kernel node read back through it. */
    CUgraphNodeParams gp;
    memset(&gp, 0, sizeof gp);
    gp.type = 5; /* CU_GRAPH_NODE_TYPE_EMPTY */
    CHECK(cuGraphAddNode_v2(&empty, graph, &kernel, NULL, 1, &gp));
    CHECK(cuGraphNodeGetParams(kernel, &gp));
    EXPECT(gp.type == 0 && gp.kernel.func == f && gp.kernel.blockDimX == 128 && *(int *)gp.kernel.kernelParams[0] == N);
    CHECK(cuGraphAddDependencies_v2(graph, &child, &copy, NULL, 1));

    size_t edges = 0;
    CHECK(cuGraphGetEdges_v2(graph, NULL, NULL, NULL, &edges));
    EXPECT(edges == 6);
    void *deps[4];
    size_t count = 4;
    CHECK(cuGraphNodeGetDependencies_v2(copy, deps, NULL, &count));
    EXPECT(count == 2 && ((deps[0] == host && deps[1] == child) || (deps[0] == child && deps[1] == host)));
    CUDA_KERNEL_NODE_PARAMS got;
    CHECK(cuGraphKernelNodeGetParams_v2(kernel, &got));
    EXPECT(got.func == f && got.gridDimX == (N + 127) / 128 && got.blockDimX == 128);
    EXPECT(*(int *)got.kernelParams[0] == N && *(float *)got.kernelParams[1] == 2.0f);

    int one = 1;
    void *object;
    CHECK(cuUserObjectCreate(&object, &one, destroy_object, 1, 1 /* CU_USER_OBJECT_NO_DESTRUCTOR_SYNC */));
    CHECK(cuGraphRetainUserObject(graph, object, 1, 1 /* CU_GRAPH_USER_OBJECT_MOVE */));

    CUDA_GRAPH_INSTANTIATE_PARAMS ip = {2 /* upload */, s, NULL, -1};
    void *exec;
    CHECK(cuGraphInstantiateWithParams(&exec, graph, &ip));
    EXPECT(ip.result_out == 0);
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuStreamSynchronize(s));
    for (int i = 0; i < N; i++) EXPECT(y[i] == 1.0f + 4.0f * i); /* the copy node's, after the child graph */
    EXPECT(host_calls == 5);

    /* a = 3 in the executable graph only, then in the graph (seen by a clone and an update). */
    a = 3.0f;
    CHECK(cuGraphExecKernelNodeSetParams_v2(exec, kernel, &kp));
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuMemcpyDtoH_v2(y, dy, sizeof y));
    for (int i = 0; i < N; i++) EXPECT(y[i] == 1.0f + 5.0f * i);
    CHECK(cuGraphKernelNodeSetParams_v2(kernel, &kp));
    void *clone, *kernel_copy;
    CHECK(cuGraphClone(&clone, graph));
    CHECK(cuGraphNodeFindInClone(&kernel_copy, kernel, clone));
    unsigned int local = 99, kernel_local = 98;
    CHECK(cuGraphNodeGetLocalId(kernel_copy, &local));
    CHECK(cuGraphNodeGetLocalId(kernel, &kernel_local));
    EXPECT(kernel_copy != kernel && local == 1 && kernel_local == 1);
    unsigned long long flags = 99;
    CHECK(cuGraphExecGetFlags(exec, &flags));
    EXPECT(flags == 0); /* the upload flag is not an instantiation flag */
    char dot_path[64];
    snprintf(dot_path, sizeof dot_path, "/tmp/lockstep-driver-test-%d.dot", (int)getpid());
    CHECK(cuGraphDebugDotPrint(graph, dot_path, 0));
    size_t dot_size = 0;
    char *dot = read_file(dot_path, &dot_size);
    unsigned int graph_id = 0;
    CHECK(cuGraphGetId(graph, &graph_id));
    char head[64];
    snprintf(head, sizeof head, "digraph \"graph_%u\"", graph_id);
    EXPECT(strncmp(dot, head, strlen(head)) == 0 && strstr(dot, "saxpy") && strstr(dot, "MEMSET"));
    free(dot);
    unlink(dot_path);
    CHECK(cuGraphDestroy(graph));
    EXPECT(destroyed == 0);
    a = 0.0f; /* the nodes copied the arguments */
    CUgraphExecUpdateResultInfo info;
    CHECK(cuGraphExecUpdate_v2(exec, clone, &info));
    EXPECT(info.result == 0);
    CHECK(cuGraphLaunch(exec, s));
    CHECK(cuMemcpyDtoH_v2(y, dy, sizeof y));
    for (int i = 0; i < N; i++) EXPECT(y[i] == 1.0f + 5.0f * i); /* the child graph still has a = 2 */
    EXPECT(host_calls == 15);

    /* A clone without its host node no longer has the executable graph's topology. */
    void *nodes[8];
    count = 8;
    CHECK(cuGraphGetNodes(clone, nodes, &count));
    EXPECT(count == 6);
    CHECK(cuGraphDestroyNode(nodes[2]));
    EXPECT(cuGraphExecUpdate_v2(exec, clone, &info) == 910 /* CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE */);
    EXPECT(info.result != 0);
    CHECK(cuGraphDestroy(clone));
    EXPECT(destroyed == 0);
    CHECK(cuGraphExecDestroy(exec));
    EXPECT(destroyed == 1); /* the last reference went with the executable graph */
    CHECK(cuStreamDestroy_v2(s));
    CHECK(cuMemFree_v2(dx));
    CHECK(cuMemFree_v2(dy));
}

/* Stream attributes are kept and read back (the priority is the stream's); an access policy window must be
   empty (no persisting L2), an unknown attribute is refused. */
static void run_stream_attrs(void) {
    CUstream a, b;
    CHECK(cuStreamCreateWithPriority(&a, 1, 0));
    CHECK(cuStreamCreate(&b, 1));
    CUstreamAttrValue v;
    memset(&v, 0x55, sizeof v);
    CHECK(cuStreamGetAttribute(a, 8 /* priority */, &v));
    EXPECT(v.priority == 0);
    v.priority = -1;
    CHECK(cuStreamSetAttribute(a, 8, &v));
    int p = 0;
    CHECK(cuStreamGetPriority(a, &p));
    EXPECT(p == -1);
    memset(&v, 0, sizeof v);
    v.syncPolicy = 2 /* CU_SYNC_POLICY_YIELD */;
    CHECK(cuStreamSetAttribute(a, 3 /* synchronization policy */, &v));
    memset(&v, 0, sizeof v);
    v.accessPolicyWindow.num_bytes = 1 << 20;
    EXPECT(cuStreamSetAttribute(a, 1 /* access policy window */, &v) == 1 /* CUDA_ERROR_INVALID_VALUE */);
    v.accessPolicyWindow.num_bytes = 0;
    CHECK(cuStreamSetAttribute(a, 1, &v));
    EXPECT(cuStreamSetAttribute(a, 7 /* not a stream attribute */, &v) == 1);
    CHECK(cuStreamCopyAttributes(b, a));
    memset(&v, 0, sizeof v);
    CHECK(cuStreamGetAttribute(b, 3, &v));
    EXPECT(v.syncPolicy == 2);
    CHECK(cuStreamGetPriority(b, &p));
    EXPECT(p == -1);
    CHECK(cuStreamDestroy_v2(a));
    CHECK(cuStreamDestroy_v2(b));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: driver_test MODE [FILES]\n");
        return 2;
    }
    const char *mode = argv[1];
    setup();
    CUmodule mod;
    if (!strcmp(mode, "ptx") && argc == 3) {
        CHECK(cuModuleLoad(&mod, argv[2]));
        run_saxpy(mod);
        run_others(mod);
        CHECK(cuModuleUnload(mod));
    } else if (!strcmp(mode, "fatbin") && argc == 3) {
        void *image = read_file(argv[2], NULL);
        CHECK(cuModuleLoadData(&mod, image));
        run_saxpy(mod);
        CHECK(cuModuleLoadFatBinary(&mod, image));
        run_others(mod);
    } else if (!strcmp(mode, "cubin") && argc == 3) {
        void *image = read_file(argv[2], NULL);
        CUresult r = cuModuleLoadData(&mod, image);
        const char *name = "?";
        cuGetErrorName(r, &name);
        printf("cubin: %s\n", name);
        EXPECT(r == 209 /* CUDA_ERROR_NO_BINARY_FOR_GPU */);
    } else if (!strcmp(mode, "link") && argc == 4) {
        size_t size;
        char *main_ptx = read_file(argv[2], &size);
        CUlinkState link;
        void *image;
        size_t image_size;
        CHECK(cuLinkCreate_v2(0, NULL, NULL, &link));
        CHECK(cuLinkAddData_v2(link, CU_JIT_INPUT_PTX, main_ptx, size + 1, "link_main.ptx", 0, NULL, NULL));
        CHECK(cuLinkAddFile_v2(link, CU_JIT_INPUT_PTX, argv[3], 0, NULL, NULL));
        CHECK(cuLinkComplete(link, &image, &image_size));
        EXPECT(image_size > 0);
        CHECK(cuModuleLoadData(&mod, image));
        CHECK(cuLinkDestroy(link));
        CUfunction f;
        CHECK(cuModuleGetFunction(&f, mod, "apply"));
        float v[100];
        for (int i = 0; i < 100; i++) v[i] = (float)i;
        CUdeviceptr dv;
        CHECK(cuMemAlloc_v2(&dv, sizeof v));
        CHECK(cuMemcpyHtoD_v2(dv, v, sizeof v));
        int n = 100;
        void *params[] = {&dv, &n};
        CHECK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, 0, params, NULL));
        CHECK(cuMemcpyDtoH_v2(v, dv, sizeof v));
        for (int i = 0; i < 100; i++) EXPECT(v[i] == 3.0f * i + 1.0f);
    } else if (!strcmp(mode, "badptx")) {
        const char *ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k() {\n  frobnicate.u32 %r1;\n}\n";
        char log[4096] = "";
        CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *values[] = {log, (void *)(size_t)sizeof log};
        CUresult r = cuModuleLoadDataEx(&mod, ptx, 2, options, values);
        printf("badptx: %d, log: %s\n", r, log);
        EXPECT(r == 218 /* CUDA_ERROR_INVALID_PTX */);
        EXPECT(strstr(log, "frobnicate") != NULL);
        EXPECT((size_t)values[1] == strlen(log));
    } else if (!strcmp(mode, "proc")) {
        void *pfn = NULL;
        int status = -1;
        CHECK(cuGetProcAddress_v2("cuMemAlloc", &pfn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
        EXPECT(pfn == (void *)cuMemAlloc_v2 && status == 0);
        CHECK(cuGetProcAddress_v2("cuLaunchKernel", &pfn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status));
        EXPECT(pfn == (void *)cuLaunchKernel);
        /* CUDA 12's form succeeds and says why in the status (NVIDIA's driver 580 does so). */
        EXPECT(cuGetProcAddress_v2("cuNoSuchFunction", &pfn, 13000, 0, &status) == 0 && status == 1 && !pfn);
        EXPECT(cuGetProcAddress_v2("cuLaunchKernelEx", &pfn, 11000, 0, &status) == 0 && status == 2 && !pfn);
        EXPECT(cuGetProcAddress_v2("cuNoSuchFunction", &pfn, 13000, 0, NULL) == 0 && !pfn);
    } else if (!strcmp(mode, "nvrtc") && argc == 3) {
        run_nvrtc(argv[2]);
    } else if (!strcmp(mode, "bounds")) {
        run_bounds();
    } else if (!strcmp(mode, "fork")) {
        run_fork();
    } else if (!strcmp(mode, "batch")) {
        run_batch();
    } else if (!strcmp(mode, "pools")) {
        run_pools();
    } else if (!strcmp(mode, "graphs") && argc == 3) {
        CHECK(cuModuleLoad(&mod, argv[2]));
        run_graphs(mod);
        CHECK(cuModuleUnload(mod));
    } else if (!strcmp(mode, "stream_attrs")) {
        run_stream_attrs();
    } else if (!strcmp(mode, "graph_nodes") && argc == 3) {
        CHECK(cuModuleLoad(&mod, argv[2]));
        run_graph_nodes(mod);
        CHECK(cuModuleUnload(mod));
    } else {
        fprintf(stderr, "unknown mode or wrong arguments: %s\n", mode);
        return 2;
    }
    printf("%s: ok\n", mode);
    return 0;
}
