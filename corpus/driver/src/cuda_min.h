/* The few CUDA driver API declarations the tests use, written from the CUDA driver API documentation so
   that the tests need no CUDA headers. Types and values as in CUDA 13's cuda.h. */
#ifndef LOCKSTEP_CUDA_MIN_H
#define LOCKSTEP_CUDA_MIN_H
#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlinkState_st *CUlinkState;
typedef struct CUstream_st *CUstream;
typedef int CUjit_option;

#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CU_JIT_INPUT_PTX 1
#define CU_LAUNCH_PARAM_END ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_GET_PROC_ADDRESS_DEFAULT 0

CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuCtxSynchronize(void);
CUresult cuModuleLoad(CUmodule *module, const char *fname);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options, void **values);
CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin);
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t n);
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params,
                        void **extra);
CUresult cuLinkCreate_v2(unsigned int n, CUjit_option *options, void **values, CUlinkState *state);
CUresult cuLinkAddData_v2(CUlinkState state, int type, void *data, size_t size, const char *name, unsigned int n,
                          CUjit_option *options, void **values);
CUresult cuLinkAddFile_v2(CUlinkState state, int type, const char *path, unsigned int n, CUjit_option *options,
                          void **values);
CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut);
CUresult cuLinkDestroy(CUlinkState state);
CUresult cuGetErrorName(CUresult error, const char **pStr);
CUresult cuGetErrorString(CUresult error, const char **pStr);
CUresult cuStreamCreate(CUstream *stream, unsigned int flags);
CUresult cuStreamDestroy_v2(CUstream stream);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuStreamIsCapturing(CUstream stream, int *status);
CUresult cuStreamGetCaptureInfo_v3(CUstream stream, int *status, unsigned long long *id, void **graph,
                                   const void **deps, const void **edges, size_t *count);
typedef struct {
    int type;
    int id;
} CUmemLocation;
typedef struct {
    int srcAccessOrder; /* 1 stream, 2 during the call, 3 any */
    CUmemLocation srcLocHint, dstLocHint;
    unsigned int flags;
} CUmemcpyAttributes;
CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                               CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream stream);
CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, CUmemcpyAttributes *attrs,
                            size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, CUstream stream);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags,
                             int *symbolStatus);
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct {
    int allocType; /* 1: pinned */
    int handleTypes;
    CUmemLocation location; /* type 1: a device */
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps;
typedef struct {
    CUmemLocation location;
    int flags; /* 3: read-write */
} CUmemAccessDesc;
enum { CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
       CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7, CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8 };
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev);
CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev);
CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool);
CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props);
CUresult cuMemPoolDestroy(CUmemoryPool pool);
CUresult cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count);
CUresult cuMemPoolGetAccess(int *flags, CUmemoryPool pool, CUmemLocation *location);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuFuncGetParamCount(CUfunction func, size_t *count);
CUresult cuStreamBeginCapture_v2(CUstream stream, int mode);
CUresult cuStreamEndCapture(CUstream stream, void **graph);
CUresult cuGraphGetNodes(void *graph, void **nodes, size_t *count);
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags);
CUresult cuGraphLaunch(void *exec, CUstream stream);
CUresult cuGraphExecDestroy(void *exec);
CUresult cuGraphDestroy(void *graph);
CUresult cuFuncGetParamInfo(CUfunction func, size_t index, size_t *offset, size_t *size);
CUresult cuMemsetD32Async(CUdeviceptr dptr, unsigned int value, size_t n, CUstream stream);

/* Graphs built node by node. */
typedef struct {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    void **kernelParams;
    void **extra;
    void *kern;
    CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;
typedef struct {
    CUdeviceptr dst;
    size_t pitch;
    unsigned int value, elementSize;
    size_t width, height;
} CUDA_MEMSET_NODE_PARAMS;
typedef struct {
    void (*fn)(void *);
    void *userData;
} CUDA_HOST_NODE_PARAMS;
typedef struct {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray, *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray, *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;
typedef struct {
    unsigned long long flags;
    CUstream hUploadStream;
    void *hErrNode_out;
    int result_out;
} CUDA_GRAPH_INSTANTIATE_PARAMS;
typedef struct {
    int result;
    void *errorNode, *errorFromNode;
} CUgraphExecUpdateResultInfo;
CUresult cuGraphCreate(void **graph, unsigned int flags);
CUresult cuGraphAddKernelNode_v2(void **node, void *graph, void *const *deps, size_t n,
                                 const CUDA_KERNEL_NODE_PARAMS *params);
CUresult cuGraphAddMemsetNode(void **node, void *graph, void *const *deps, size_t n,
                              const CUDA_MEMSET_NODE_PARAMS *params, CUcontext ctx);
CUresult cuGraphAddMemcpyNode(void **node, void *graph, void *const *deps, size_t n, const CUDA_MEMCPY3D *params,
                              CUcontext ctx);
CUresult cuGraphAddHostNode(void **node, void *graph, void *const *deps, size_t n,
                            const CUDA_HOST_NODE_PARAMS *params);
CUresult cuGraphAddEmptyNode(void **node, void *graph, void *const *deps, size_t n);
CUresult cuGraphAddChildGraphNode(void **node, void *graph, void *const *deps, size_t n, void *child);
CUresult cuGraphAddDependencies_v2(void *graph, void *const *from, void *const *to, const void *edges, size_t n);
CUresult cuGraphGetEdges_v2(void *graph, void **from, void **to, void *edges, size_t *count);
CUresult cuGraphNodeGetDependencies_v2(void *node, void **deps, void *edges, size_t *count);
CUresult cuGraphKernelNodeGetParams_v2(void *node, CUDA_KERNEL_NODE_PARAMS *params);
CUresult cuGraphKernelNodeSetParams_v2(void *node, const CUDA_KERNEL_NODE_PARAMS *params);
CUresult cuGraphExecKernelNodeSetParams_v2(void *exec, void *node, const CUDA_KERNEL_NODE_PARAMS *params);
CUresult cuGraphClone(void **clone, void *graph);
CUresult cuGraphDestroyNode(void *node);
CUresult cuGraphInstantiateWithParams(void **exec, void *graph, CUDA_GRAPH_INSTANTIATE_PARAMS *params);
CUresult cuGraphExecUpdate_v2(void *exec, void *graph, CUgraphExecUpdateResultInfo *info);
CUresult cuUserObjectCreate(void **object, void *ptr, void (*destroy)(void *), unsigned int initial,
                            unsigned int flags);
CUresult cuUserObjectRelease(void *object, unsigned int count);
CUresult cuGraphRetainUserObject(void *graph, void *object, unsigned int count, unsigned int flags);
typedef union {
    char pad[64];
    struct {
        void *base_ptr;
        size_t num_bytes;
        float hitRatio;
        int hitProp, missProp;
    } accessPolicyWindow;
    int priority;
    int syncPolicy;
} CUstreamAttrValue;
typedef struct {
    int type;
    int reserved0[3];
    union {
        long long reserved1[29];
        CUDA_KERNEL_NODE_PARAMS kernel;
    };
    long long reserved2;
} CUgraphNodeParams;
CUresult cuGraphAddNode_v2(void **node, void *graph, void *const *deps, const void *edges, size_t n,
                           CUgraphNodeParams *params);
CUresult cuGraphNodeGetParams(void *node, CUgraphNodeParams *params);
CUresult cuGraphNodeFindInClone(void **node, void *original, void *clone);
CUresult cuGraphNodeGetLocalId(void *node, unsigned int *id);
CUresult cuGraphGetId(void *graph, unsigned int *id);
CUresult cuGraphDebugDotPrint(void *graph, const char *path, unsigned int flags);
CUresult cuGraphExecGetFlags(void *exec, unsigned long long *flags);
CUresult cuStreamGetAttribute(CUstream stream, int attr, CUstreamAttrValue *value);
CUresult cuStreamSetAttribute(CUstream stream, int attr, const CUstreamAttrValue *value);
CUresult cuStreamCopyAttributes(CUstream dst, CUstream src);
CUresult cuStreamCreateWithPriority(CUstream *stream, unsigned int flags, int priority);
CUresult cuStreamGetPriority(CUstream stream, int *priority);
#endif
