//! CUDA error codes (`cudaError_t`), with the names and descriptions NVIDIA's runtime gives them
//! (`cudaGetErrorName`, `cudaGetErrorString`; read from libcudart 13.5). The driver API's `CUresult` shares
//! most values.

use std::fmt;

/// A `cudaError_t` value other than success.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Error(pub i32);

impl Error {
    pub const INVALID_VALUE: Error = Error(1);
    pub const MEMORY_ALLOCATION: Error = Error(2);
    pub const INITIALIZATION_ERROR: Error = Error(3);
    pub const CUDART_UNLOADING: Error = Error(4);
    pub const PROFILER_DISABLED: Error = Error(5);
    pub const PROFILER_NOT_INITIALIZED: Error = Error(6);
    pub const PROFILER_ALREADY_STARTED: Error = Error(7);
    pub const PROFILER_ALREADY_STOPPED: Error = Error(8);
    pub const INVALID_CONFIGURATION: Error = Error(9);
    pub const VERSION_TRANSLATION: Error = Error(10);
    pub const INVALID_PITCH_VALUE: Error = Error(12);
    pub const INVALID_SYMBOL: Error = Error(13);
    pub const INVALID_HOST_POINTER: Error = Error(16);
    pub const INVALID_DEVICE_POINTER: Error = Error(17);
    pub const INVALID_TEXTURE: Error = Error(18);
    pub const INVALID_TEXTURE_BINDING: Error = Error(19);
    pub const INVALID_CHANNEL_DESCRIPTOR: Error = Error(20);
    pub const INVALID_MEMCPY_DIRECTION: Error = Error(21);
    pub const ADDRESS_OF_CONSTANT: Error = Error(22);
    pub const TEXTURE_FETCH_FAILED: Error = Error(23);
    pub const TEXTURE_NOT_BOUND: Error = Error(24);
    pub const SYNCHRONIZATION_ERROR: Error = Error(25);
    pub const INVALID_FILTER_SETTING: Error = Error(26);
    pub const INVALID_NORM_SETTING: Error = Error(27);
    pub const MIXED_DEVICE_EXECUTION: Error = Error(28);
    pub const NOT_YET_IMPLEMENTED: Error = Error(31);
    pub const MEMORY_VALUE_TOO_LARGE: Error = Error(32);
    pub const STUB_LIBRARY: Error = Error(34);
    pub const INSUFFICIENT_DRIVER: Error = Error(35);
    pub const CALL_REQUIRES_NEWER_DRIVER: Error = Error(36);
    pub const INVALID_SURFACE: Error = Error(37);
    pub const DUPLICATE_VARIABLE_NAME: Error = Error(43);
    pub const DUPLICATE_TEXTURE_NAME: Error = Error(44);
    pub const DUPLICATE_SURFACE_NAME: Error = Error(45);
    pub const DEVICES_UNAVAILABLE: Error = Error(46);
    pub const INCOMPATIBLE_DRIVER_CONTEXT: Error = Error(49);
    pub const MISSING_CONFIGURATION: Error = Error(52);
    pub const PRIOR_LAUNCH_FAILURE: Error = Error(53);
    pub const LAUNCH_MAX_DEPTH_EXCEEDED: Error = Error(65);
    pub const LAUNCH_FILE_SCOPED_TEX: Error = Error(66);
    pub const LAUNCH_FILE_SCOPED_SURF: Error = Error(67);
    pub const SYNC_DEPTH_EXCEEDED: Error = Error(68);
    pub const LAUNCH_PENDING_COUNT_EXCEEDED: Error = Error(69);
    pub const INVALID_DEVICE_FUNCTION: Error = Error(98);
    pub const NO_DEVICE: Error = Error(100);
    pub const INVALID_DEVICE: Error = Error(101);
    pub const DEVICE_NOT_LICENSED: Error = Error(102);
    pub const SOFTWARE_VALIDITY_NOT_ESTABLISHED: Error = Error(103);
    pub const STARTUP_FAILURE: Error = Error(127);
    pub const INVALID_KERNEL_IMAGE: Error = Error(200);
    pub const DEVICE_UNINITIALIZED: Error = Error(201);
    pub const MAP_BUFFER_OBJECT_FAILED: Error = Error(205);
    pub const UNMAP_BUFFER_OBJECT_FAILED: Error = Error(206);
    pub const ARRAY_IS_MAPPED: Error = Error(207);
    pub const ALREADY_MAPPED: Error = Error(208);
    pub const NO_KERNEL_IMAGE_FOR_DEVICE: Error = Error(209);
    pub const ALREADY_ACQUIRED: Error = Error(210);
    pub const NOT_MAPPED: Error = Error(211);
    pub const NOT_MAPPED_AS_ARRAY: Error = Error(212);
    pub const NOT_MAPPED_AS_POINTER: Error = Error(213);
    pub const ECC_UNCORRECTABLE: Error = Error(214);
    pub const UNSUPPORTED_LIMIT: Error = Error(215);
    pub const DEVICE_ALREADY_IN_USE: Error = Error(216);
    pub const PEER_ACCESS_UNSUPPORTED: Error = Error(217);
    pub const INVALID_PTX: Error = Error(218);
    pub const INVALID_GRAPHICS_CONTEXT: Error = Error(219);
    pub const NVLINK_UNCORRECTABLE: Error = Error(220);
    pub const JIT_COMPILER_NOT_FOUND: Error = Error(221);
    pub const UNSUPPORTED_PTX_VERSION: Error = Error(222);
    pub const JIT_COMPILATION_DISABLED: Error = Error(223);
    pub const UNSUPPORTED_EXEC_AFFINITY: Error = Error(224);
    pub const UNSUPPORTED_DEV_SIDE_SYNC: Error = Error(225);
    pub const CONTAINED: Error = Error(226);
    pub const INSUFFICIENT_LOADER_VERSION: Error = Error(227);
    pub const INVALID_SOURCE: Error = Error(300);
    pub const FILE_NOT_FOUND: Error = Error(301);
    pub const SHARED_OBJECT_SYMBOL_NOT_FOUND: Error = Error(302);
    pub const SHARED_OBJECT_INIT_FAILED: Error = Error(303);
    pub const OPERATING_SYSTEM: Error = Error(304);
    pub const INVALID_RESOURCE_HANDLE: Error = Error(400);
    pub const ILLEGAL_STATE: Error = Error(401);
    pub const LOSSY_QUERY: Error = Error(402);
    pub const SYMBOL_NOT_FOUND: Error = Error(500);
    pub const NOT_READY: Error = Error(600);
    pub const ILLEGAL_ADDRESS: Error = Error(700);
    pub const LAUNCH_OUT_OF_RESOURCES: Error = Error(701);
    pub const LAUNCH_TIMEOUT: Error = Error(702);
    pub const LAUNCH_INCOMPATIBLE_TEXTURING: Error = Error(703);
    pub const PEER_ACCESS_ALREADY_ENABLED: Error = Error(704);
    pub const PEER_ACCESS_NOT_ENABLED: Error = Error(705);
    pub const SET_ON_ACTIVE_PROCESS: Error = Error(708);
    pub const CONTEXT_IS_DESTROYED: Error = Error(709);
    pub const ASSERT: Error = Error(710);
    pub const TOO_MANY_PEERS: Error = Error(711);
    pub const HOST_MEMORY_ALREADY_REGISTERED: Error = Error(712);
    pub const HOST_MEMORY_NOT_REGISTERED: Error = Error(713);
    pub const HARDWARE_STACK_ERROR: Error = Error(714);
    pub const ILLEGAL_INSTRUCTION: Error = Error(715);
    pub const MISALIGNED_ADDRESS: Error = Error(716);
    pub const INVALID_ADDRESS_SPACE: Error = Error(717);
    pub const INVALID_PC: Error = Error(718);
    pub const LAUNCH_FAILURE: Error = Error(719);
    pub const COOPERATIVE_LAUNCH_TOO_LARGE: Error = Error(720);
    pub const TENSOR_MEMORY_LEAK: Error = Error(721);
    pub const NOT_PERMITTED: Error = Error(800);
    pub const NOT_SUPPORTED: Error = Error(801);
    pub const SYSTEM_NOT_READY: Error = Error(802);
    pub const SYSTEM_DRIVER_MISMATCH: Error = Error(803);
    pub const COMPAT_NOT_SUPPORTED_ON_DEVICE: Error = Error(804);
    pub const MPS_CONNECTION_FAILED: Error = Error(805);
    pub const MPS_RPC_FAILURE: Error = Error(806);
    pub const MPS_SERVER_NOT_READY: Error = Error(807);
    pub const MPS_MAX_CLIENTS_REACHED: Error = Error(808);
    pub const MPS_MAX_CONNECTIONS_REACHED: Error = Error(809);
    pub const MPS_CLIENT_TERMINATED: Error = Error(810);
    pub const CDP_NOT_SUPPORTED: Error = Error(811);
    pub const CDP_VERSION_MISMATCH: Error = Error(812);
    pub const STREAM_CAPTURE_UNSUPPORTED: Error = Error(900);
    pub const STREAM_CAPTURE_INVALIDATED: Error = Error(901);
    pub const STREAM_CAPTURE_MERGE: Error = Error(902);
    pub const STREAM_CAPTURE_UNMATCHED: Error = Error(903);
    pub const STREAM_CAPTURE_UNJOINED: Error = Error(904);
    pub const STREAM_CAPTURE_ISOLATION: Error = Error(905);
    pub const STREAM_CAPTURE_IMPLICIT: Error = Error(906);
    pub const CAPTURED_EVENT: Error = Error(907);
    pub const STREAM_CAPTURE_WRONG_THREAD: Error = Error(908);
    pub const TIMEOUT: Error = Error(909);
    pub const GRAPH_EXEC_UPDATE_FAILURE: Error = Error(910);
    pub const EXTERNAL_DEVICE: Error = Error(911);
    pub const INVALID_CLUSTER_SIZE: Error = Error(912);
    pub const FUNCTION_NOT_LOADED: Error = Error(913);
    pub const INVALID_RESOURCE_TYPE: Error = Error(914);
    pub const INVALID_RESOURCE_CONFIGURATION: Error = Error(915);
    pub const STREAM_DETACHED: Error = Error(917);
    pub const GRAPH_RECAPTURE_FAILURE: Error = Error(918);
    pub const FABRIC_NOT_READY: Error = Error(919);
    pub const UNKNOWN: Error = Error(999);

    /// The code as `cudaError_t` returns it.
    pub fn code(self) -> i32 {
        self.0
    }

    /// `cudaGetErrorName`: the enumerator's name, `None` for a value CUDA does not define.
    pub fn name(self) -> Option<&'static str> {
        TABLE.iter().find(|e| e.0 == self.0).map(|e| e.1)
    }

    /// `cudaGetErrorString`: the description, `None` for a value CUDA does not define.
    pub fn description(self) -> Option<&'static str> {
        TABLE.iter().find(|e| e.0 == self.0).map(|e| e.2)
    }

    /// Whether the error corrupts the context: after a kernel fault of this kind every later call fails with
    /// it (CUDA's "sticky" errors).
    pub fn is_sticky(self) -> bool {
        matches!(
            self,
            Error::ILLEGAL_ADDRESS
                | Error::ASSERT
                | Error::LAUNCH_FAILURE
                | Error::ILLEGAL_INSTRUCTION
                | Error::MISALIGNED_ADDRESS
                | Error::INVALID_ADDRESS_SPACE
                | Error::INVALID_PC
                | Error::HARDWARE_STACK_ERROR
                | Error::LAUNCH_TIMEOUT
        )
    }
}

/// `cudaGetErrorName`/`cudaGetErrorString` of a code without an enumerator.
pub const UNRECOGNIZED: &str = "unrecognized error code";

/// `cudaGetErrorName` of any code, 0 included.
pub fn name_of(code: i32) -> &'static str {
    TABLE.iter().find(|e| e.0 == code).map_or(UNRECOGNIZED, |e| e.1)
}

/// `cudaGetErrorString` of any code, 0 included.
pub fn description_of(code: i32) -> &'static str {
    TABLE.iter().find(|e| e.0 == code).map_or(UNRECOGNIZED, |e| e.2)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", name_of(self.0), description_of(self.0))
    }
}

impl std::error::Error for Error {}

/// Every code CUDA 13 defines: value, name, description.
static TABLE: &[(i32, &str, &str)] = &[
    (0, "cudaSuccess", "no error"),
    (1, "cudaErrorInvalidValue", "invalid argument"),
    (2, "cudaErrorMemoryAllocation", "out of memory"),
    (3, "cudaErrorInitializationError", "initialization error"),
    (4, "cudaErrorCudartUnloading", "driver shutting down"),
    (5, "cudaErrorProfilerDisabled", "profiler disabled while using external profiling tool"),
    (6, "cudaErrorProfilerNotInitialized", "profiler not initialized: call cudaProfilerInitialize()"),
    (7, "cudaErrorProfilerAlreadyStarted", "profiler already started"),
    (8, "cudaErrorProfilerAlreadyStopped", "profiler already stopped"),
    (9, "cudaErrorInvalidConfiguration", "invalid configuration argument"),
    (10, "cudaErrorVersionTranslation", "Driver is newer than runtime and returned parameters the runtime cannot process"),
    (12, "cudaErrorInvalidPitchValue", "invalid pitch argument"),
    (13, "cudaErrorInvalidSymbol", "invalid device symbol"),
    (16, "cudaErrorInvalidHostPointer", "invalid host pointer"),
    (17, "cudaErrorInvalidDevicePointer", "invalid device pointer"),
    (18, "cudaErrorInvalidTexture", "invalid texture reference"),
    (19, "cudaErrorInvalidTextureBinding", "texture is not bound to a pointer"),
    (20, "cudaErrorInvalidChannelDescriptor", "invalid channel descriptor"),
    (21, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"),
    (22, "cudaErrorAddressOfConstant", "invalid address of constant"),
    (23, "cudaErrorTextureFetchFailed", "fetch from texture failed"),
    (24, "cudaErrorTextureNotBound", "cannot fetch from a texture that is not bound"),
    (25, "cudaErrorSynchronizationError", "incorrect use of __syncthreads()"),
    (26, "cudaErrorInvalidFilterSetting", "linear filtering not supported for non-float type"),
    (27, "cudaErrorInvalidNormSetting", "read as normalized float not supported for data type"),
    (28, "cudaErrorMixedDeviceExecution", "device emulation mode and device execution mode cannot be mixed"),
    (31, "cudaErrorNotYetImplemented", "feature not yet implemented"),
    (32, "cudaErrorMemoryValueTooLarge", "memory size or pointer value too large to fit in 32 bit"),
    (34, "cudaErrorStubLibrary", "CUDA driver is a stub library"),
    (35, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient for CUDA runtime version"),
    (36, "cudaErrorCallRequiresNewerDriver", "API call is not supported in the installed CUDA driver"),
    (37, "cudaErrorInvalidSurface", "invalid surface reference"),
    (43, "cudaErrorDuplicateVariableName", "duplicate global variable looked up by string name"),
    (44, "cudaErrorDuplicateTextureName", "duplicate texture looked up by string name"),
    (45, "cudaErrorDuplicateSurfaceName", "duplicate surface looked up by string name"),
    (46, "cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable"),
    (49, "cudaErrorIncompatibleDriverContext", "incompatible driver context"),
    (52, "cudaErrorMissingConfiguration", "__global__ function call is not configured"),
    (53, "cudaErrorPriorLaunchFailure", "unspecified launch failure in prior launch"),
    (65, "cudaErrorLaunchMaxDepthExceeded", "launch would exceed maximum depth of nested launches"),
    (66, "cudaErrorLaunchFileScopedTex", "launch failed because kernel uses unsupported, file-scoped textures (texture objects are supported)"),
    (67, "cudaErrorLaunchFileScopedSurf", "launch failed because kernel uses unsupported, file-scoped surfaces (surface objects are supported)"),
    (68, "cudaErrorSyncDepthExceeded", "cudaDeviceSynchronize failed because caller's grid depth exceeds cudaLimitDevRuntimeSyncDepth"),
    (69, "cudaErrorLaunchPendingCountExceeded", "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount"),
    (98, "cudaErrorInvalidDeviceFunction", "invalid device function"),
    (100, "cudaErrorNoDevice", "no CUDA-capable device is detected"),
    (101, "cudaErrorInvalidDevice", "invalid device ordinal"),
    (102, "cudaErrorDeviceNotLicensed", "device doesn't have valid Grid license"),
    (103, "cudaErrorSoftwareValidityNotEstablished", "integrity checks failed"),
    (127, "cudaErrorStartupFailure", "startup failure in cuda runtime"),
    (200, "cudaErrorInvalidKernelImage", "device kernel image is invalid"),
    (201, "cudaErrorDeviceUninitialized", "invalid device context"),
    (205, "cudaErrorMapBufferObjectFailed", "mapping of buffer object failed"),
    (206, "cudaErrorUnmapBufferObjectFailed", "unmapping of buffer object failed"),
    (207, "cudaErrorArrayIsMapped", "array is mapped"),
    (208, "cudaErrorAlreadyMapped", "resource already mapped"),
    (209, "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device"),
    (210, "cudaErrorAlreadyAcquired", "resource already acquired"),
    (211, "cudaErrorNotMapped", "resource not mapped"),
    (212, "cudaErrorNotMappedAsArray", "resource not mapped as array"),
    (213, "cudaErrorNotMappedAsPointer", "resource not mapped as pointer"),
    (214, "cudaErrorECCUncorrectable", "uncorrectable ECC error encountered"),
    (215, "cudaErrorUnsupportedLimit", "limit is not supported on this architecture"),
    (216, "cudaErrorDeviceAlreadyInUse", "exclusive-thread device already in use by a different thread"),
    (217, "cudaErrorPeerAccessUnsupported", "peer access is not supported between these two devices"),
    (218, "cudaErrorInvalidPtx", "a PTX JIT compilation failed"),
    (219, "cudaErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context"),
    (220, "cudaErrorNvlinkUncorrectable", "uncorrectable NVLink error detected during the execution"),
    (221, "cudaErrorJitCompilerNotFound", "PTX JIT compiler library not found"),
    (222, "cudaErrorUnsupportedPtxVersion", "the provided PTX was compiled with an unsupported toolchain."),
    (223, "cudaErrorJitCompilationDisabled", "PTX JIT compilation was disabled"),
    (224, "cudaErrorUnsupportedExecAffinity", "the provided execution affinity is not supported"),
    (225, "cudaErrorUnsupportedDevSideSync", "the provided PTX contains unsupported call to cudaDeviceSynchronize"),
    (226, "cudaErrorContained", "Invalid access of peer GPU memory over nvlink or a hardware error"),
    (227, "cudaErrorInsufficientLoaderVersion", "Loader version is insufficient for fatbin"),
    (300, "cudaErrorInvalidSource", "device kernel image is invalid"),
    (301, "cudaErrorFileNotFound", "file not found"),
    (302, "cudaErrorSharedObjectSymbolNotFound", "shared object symbol not found"),
    (303, "cudaErrorSharedObjectInitFailed", "shared object initialization failed"),
    (304, "cudaErrorOperatingSystem", "OS call failed or operation not supported on this OS"),
    (400, "cudaErrorInvalidResourceHandle", "invalid resource handle"),
    (401, "cudaErrorIllegalState", "the operation cannot be performed in the present state"),
    (402, "cudaErrorLossyQuery", "attempted introspection would be semantically lossy"),
    (500, "cudaErrorSymbolNotFound", "named symbol not found"),
    (600, "cudaErrorNotReady", "device not ready"),
    (700, "cudaErrorIllegalAddress", "an illegal memory access was encountered"),
    (701, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"),
    (702, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"),
    (703, "cudaErrorLaunchIncompatibleTexturing", "launch uses incompatible texturing mode"),
    (704, "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"),
    (705, "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"),
    (708, "cudaErrorSetOnActiveProcess", "cannot set while device is active in this process"),
    (709, "cudaErrorContextIsDestroyed", "context is destroyed"),
    (710, "cudaErrorAssert", "device-side assert triggered"),
    (711, "cudaErrorTooManyPeers", "peer mapping resources exhausted"),
    (712, "cudaErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"),
    (713, "cudaErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"),
    (714, "cudaErrorHardwareStackError", "hardware stack error"),
    (715, "cudaErrorIllegalInstruction", "an illegal instruction was encountered"),
    (716, "cudaErrorMisalignedAddress", "misaligned address"),
    (717, "cudaErrorInvalidAddressSpace", "operation not supported on global/shared address space"),
    (718, "cudaErrorInvalidPc", "invalid program counter"),
    (719, "cudaErrorLaunchFailure", "unspecified launch failure"),
    (720, "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"),
    (721, "cudaErrorTensorMemoryLeak", "tensor memory not completely freed"),
    (800, "cudaErrorNotPermitted", "operation not permitted"),
    (801, "cudaErrorNotSupported", "operation not supported"),
    (802, "cudaErrorSystemNotReady", "system not yet initialized"),
    (803, "cudaErrorSystemDriverMismatch", "system has unsupported display driver / cuda driver combination"),
    (804, "cudaErrorCompatNotSupportedOnDevice", "forward compatibility was attempted on non supported HW"),
    (805, "cudaErrorMpsConnectionFailed", "MPS client failed to connect to the MPS control daemon or the MPS server"),
    (806, "cudaErrorMpsRpcFailure", "the remote procedural call between the MPS server and the MPS client failed"),
    (807, "cudaErrorMpsServerNotReady", "MPS server is not ready to accept new MPS client requests"),
    (808, "cudaErrorMpsMaxClientsReached", "the hardware resources required to create MPS client have been exhausted"),
    (809, "cudaErrorMpsMaxConnectionsReached", "the hardware resources required to support device connections have been exhausted"),
    (810, "cudaErrorMpsClientTerminated", "the MPS client has been terminated by the server"),
    (811, "cudaErrorCdpNotSupported", "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it"),
    (812, "cudaErrorCdpVersionMismatch", "unsupported interaction between different versions of CUDA Dynamic Parallelism"),
    (900, "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    (901, "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    (902, "cudaErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"),
    (903, "cudaErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"),
    (904, "cudaErrorStreamCaptureUnjoined", "capturing stream has unjoined work"),
    (905, "cudaErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream"),
    (906, "cudaErrorStreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream"),
    (907, "cudaErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"),
    (908, "cudaErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"),
    (909, "cudaErrorTimeout", "wait operation timed out"),
    (910, "cudaErrorGraphExecUpdateFailure", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"),
    (911, "cudaErrorExternalDevice", "an async error has occured in external entity outside of CUDA"),
    (912, "cudaErrorInvalidClusterSize", "a kernel launch error has occurred due to cluster misconfiguration"),
    (913, "cudaErrorFunctionNotLoaded", "the function handle is not loaded when calling an API that requires a loaded function"),
    (914, "cudaErrorInvalidResourceType", "one or more resources passed in are not valid resource types for the operation"),
    (915, "cudaErrorInvalidResourceConfiguration", "one or more resources are insufficient or non-applicable for the operation"),
    (917, "cudaErrorStreamDetached", "API call not permitted since the green context associated with the stream has been destroyed"),
    (918, "cudaErrorGraphRecaptureFailure", "recapturing to the source graph failed and had to be terminated"),
    (919, "cudaErrorFabricNotReady", "GPU fabric is not ready within the probe wait budget; application may retry (see CUDA_FABRIC_INIT_TIMEOUT_MS)"),
    (999, "cudaErrorUnknown", "unknown error"),
];
