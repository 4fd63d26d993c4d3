// The binary interface of CUDA 13's runtime as a program compiled by nvcc sees it: the layouts
// of the structures it passes to the runtime and the values of its enumerations, written out by
// gpusc (a program built against the toolkit's headers must find the same bytes where it looks;
// the test cuda_exec.abi_layout checks every offset and value against the toolkit's headers where
// nvcc is found: tests/cuda/abi_layout.cu).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpusc::cudart::abi {

// cudaDeviceProp (CUDA 13: clock rates moved to cudaDeviceGetAttribute).
struct DeviceProp {
  char name[256];
  unsigned char uuid[16];
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int deviceNumaConfig;
  int deviceNumaId;
  int mpsEnabled;
  int hostNumaId;
  unsigned int gpuPciDeviceID;
  unsigned int gpuPciSubsystemID;
  int hostNumaMultinodeIpcSupported;
  int reserved[56];
};

// cudaFuncAttributes.
struct FuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
  int clusterDimMustBeSet;
  int requiredClusterWidth;
  int requiredClusterHeight;
  int requiredClusterDepth;
  int clusterSchedulingPolicyPreference;
  int nonPortableClusterSizeAllowed;
  int reserved[16];
};

// cudaDeviceAttr values gpusc answers from the platform (cudaDeviceGetAttribute); the others up
// to kAttrLast are features it does not model.
enum DeviceAttr : int {
  kAttrMaxThreadsPerBlock = 1,
  kAttrMaxBlockDimX = 2,
  kAttrMaxBlockDimY = 3,
  kAttrMaxBlockDimZ = 4,
  kAttrMaxGridDimX = 5,
  kAttrMaxGridDimY = 6,
  kAttrMaxGridDimZ = 7,
  kAttrMaxSharedMemoryPerBlock = 8,
  kAttrTotalConstantMemory = 9,
  kAttrWarpSize = 10,
  kAttrMaxPitch = 11,
  kAttrMaxRegistersPerBlock = 12,
  kAttrClockRate = 13,
  kAttrTextureAlignment = 14,
  kAttrMultiProcessorCount = 16,
  kAttrCanMapHostMemory = 19,
  kAttrMaxTexture1DWidth = 21,
  kAttrMaxTexture2DWidth = 22,
  kAttrMaxTexture2DHeight = 23,
  kAttrMaxTexture3DWidth = 24,
  kAttrMaxTexture3DHeight = 25,
  kAttrMaxTexture3DDepth = 26,
  kAttrMaxTexture2DLayeredWidth = 27,
  kAttrMaxTexture2DLayeredHeight = 28,
  kAttrMaxTexture2DLayeredLayers = 29,
  kAttrSurfaceAlignment = 30,
  kAttrMemoryClockRate = 36,
  kAttrGlobalMemoryBusWidth = 37,
  kAttrL2CacheSize = 38,
  kAttrMaxThreadsPerMultiProcessor = 39,
  kAttrUnifiedAddressing = 41,
  kAttrMaxTexture1DLayeredWidth = 42,
  kAttrMaxTexture1DLayeredLayers = 43,
  kAttrTexturePitchAlignment = 51,
  kAttrMaxSurface1DWidth = 55,
  kAttrMaxSurface2DWidth = 56,
  kAttrMaxSurface2DHeight = 57,
  kAttrMaxSurface3DWidth = 58,
  kAttrMaxSurface3DHeight = 59,
  kAttrMaxSurface3DDepth = 60,
  kAttrMaxSurface1DLayeredWidth = 61,
  kAttrMaxSurface1DLayeredLayers = 62,
  kAttrMaxSurface2DLayeredWidth = 63,
  kAttrMaxSurface2DLayeredHeight = 64,
  kAttrMaxSurface2DLayeredLayers = 65,
  kAttrMaxTexture1DLinearWidth = 69,
  kAttrMaxTexture2DLinearWidth = 70,
  kAttrMaxTexture2DLinearHeight = 71,
  kAttrMaxTexture2DLinearPitch = 72,
  kAttrComputeCapabilityMajor = 75,
  kAttrComputeCapabilityMinor = 76,
  kAttrGlobalL1CacheSupported = 79,
  kAttrLocalL1CacheSupported = 80,
  kAttrMaxSharedMemoryPerMultiprocessor = 81,
  kAttrMaxRegistersPerMultiprocessor = 82,
  kAttrManagedMemory = 83,
  kAttrSingleToDoublePrecisionPerfRatio = 87,
  kAttrCooperativeLaunch = 95,
  kAttrMaxSharedMemoryPerBlockOptin = 97,
  kAttrHostRegisterSupported = 99,
  kAttrMaxBlocksPerMultiprocessor = 106,
  kAttrReservedSharedMemoryPerBlock = 111,
  kAttrMemoryPoolsSupported = 115,
  kAttrMemSyncDomainCount = 126,
  kAttrLast = 147,  // cudaDevAttrOnlyPartialHostNativeAtomicSupported, CUDA 13's last
};

// Graph nodes' parameters: cudaKernelNodeParams, cudaMemsetParams, cudaHostNodeParams,
// cudaMemcpy3DParms (with cudaPos, cudaPitchedPtr, cudaExtent) and cudaGraphEdgeData.
struct Dim3Abi {
  unsigned x, y, z;
};
struct KernelNodeParams {
  void* func;
  Dim3Abi gridDim, blockDim;
  unsigned sharedMemBytes;
  void** kernelParams;
  void** extra;
};
struct MemsetParams {
  void* dst;
  size_t pitch;
  unsigned value, elementSize;
  size_t width, height;
};
struct HostNodeParams {
  void (*fn)(void*);
  void* userData;
};
struct Pos {
  size_t x, y, z;
};
struct PitchedPtr {
  void* ptr;
  size_t pitch, xsize, ysize;
};
struct Extent {
  size_t width, height, depth;
};
struct Memcpy3DParms {
  void* srcArray;
  Pos srcPos;
  PitchedPtr srcPtr;
  void* dstArray;
  Pos dstPos;
  PitchedPtr dstPtr;
  Extent extent;
  int kind;
};
struct GraphEdgeData {
  unsigned char from_port, to_port, type, reserved[5];
};
// The parameters of cudaGraphNodeParams (cudaGraphAddNode, CUDA 12.2's generic form; below, after
// the memory pools' structures its memory nodes use) for the
// node types gpusc builds (cudaKernelNodeParamsV2 and cudaMemsetParamsV2 are laid out as the
// first versions, cudaHostNodeParamsV2 as cudaHostNodeParams).
struct MemcpyNodeParams {
  int flags;
  int reserved[3];
  Memcpy3DParms copyParams;
};
struct ChildGraphNodeParams {
  void* graph;
  int ownership;  // cudaGraphChildGraphNodeOwnership: clone (0) or move (1)
};
struct EventNodeParams {
  void* event;
};
struct ConditionalNodeParams {
  unsigned long long handle;  // cudaGraphConditionalHandle
  int type;                   // cudaGraphConditionalNodeType: if, while, switch
  unsigned size;              // body graphs
  void** phGraph_out;         // the bodies, set by the call that adds the node
};

// Textures: cudaChannelFormatDesc, cudaResourceDesc and cudaTextureDesc, the values of their
// enumerations, and cudaMallocArray's flags (cudaResourceViewDesc is only told apart from null).
struct ChannelFormatDesc {
  int x, y, z, w;  // bits per channel
  int f;           // cudaChannelFormatKind
};
enum ChannelFormatKind : int {
  kChannelSigned = 0,
  kChannelUnsigned = 1,
  kChannelFloat = 2,
  kChannelNone = 3,
  kChannelNV12 = 4,
  kChannelLast = 31,  // cudaChannelFormatKindUnsignedNormalized1010102, CUDA 13's last
};
struct ResourceDesc {
  int resType;  // cudaResourceType
  union {
    struct {
      void* array;
    } array;
    struct {
      void* mipmap;
    } mipmap;
    struct {
      void* devPtr;
      ChannelFormatDesc desc;
      size_t sizeInBytes;
    } linear;
    struct {
      void* devPtr;
      ChannelFormatDesc desc;
      size_t width, height, pitchInBytes;
    } pitch2D;
    struct {
      int reserved[32];
    } reserved;
  } res;
  unsigned flags;
};
enum ResourceType : int {
  kResourceArray = 0,
  kResourceMipmappedArray = 1,
  kResourceLinear = 2,
  kResourcePitch2D = 3,
};
struct TextureDesc {
  int addressMode[3];  // cudaTextureAddressMode
  int filterMode;      // cudaTextureFilterMode
  int readMode;        // cudaTextureReadMode
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned maxAnisotropy;
  int mipmapFilterMode;
  float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
  int disableTrilinearOptimization;
  int seamlessCubemap;
};
enum TextureEnums : int {
  kAddressWrap = 0,
  kAddressClamp = 1,
  kAddressMirror = 2,
  kAddressBorder = 3,
  kFilterPoint = 0,
  kFilterLinear = 1,
  kReadElementType = 0,
  kReadNormalizedFloat = 1,
};
enum ArrayFlags : unsigned {
  kArrayLayered = 0x01,
  kArraySurfaceLoadStore = 0x02,
  kArrayCubemap = 0x04,
  kArrayTextureGather = 0x08,
  kArrayColorAttachment = 0x20,
  kArraySparse = 0x40,
  kArrayDeferredMapping = 0x80,
};

// cudaLaunchAttribute: an id, padding to 8 bytes, a 64-byte union of values (those read here
// are 32-bit and first in it), and the ids cudaLaunchKernelExC acts on.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char pad[64];
    int cooperative;
    unsigned int clusterDim[3];
    int priority;
  } val;
};

enum LaunchAttributeId : int {
  kLaunchAttrIgnore = 0,
  kLaunchAttrAccessPolicyWindow = 1,
  kLaunchAttrCooperative = 2,
  kLaunchAttrSynchronizationPolicy = 3,
  kLaunchAttrClusterDimension = 4,
  kLaunchAttrClusterSchedulingPolicyPreference = 5,
  kLaunchAttrProgrammaticStreamSerialization = 6,
  kLaunchAttrProgrammaticEvent = 7,
  kLaunchAttrPriority = 8,
  kLaunchAttrMemSyncDomainMap = 9,
  kLaunchAttrMemSyncDomain = 10,
  kLaunchAttrPreferredClusterDimension = 11,
  kLaunchAttrLaunchCompletionEvent = 12,
  kLaunchAttrDeviceUpdatableKernelNode = 13,
  kLaunchAttrPreferredSharedMemoryCarveout = 14,
};

// Stream-ordered memory pools (cudaMemPoolCreate, cudaMemPoolSetAccess).
struct MemLocation {
  int type;  // cudaMemLocationType: 1 a device, 2 the host
  int id;
};
struct MemPoolProps {
  int allocType;    // cudaMemAllocationType: 1 pinned, 2 managed
  int handleTypes;  // cudaMemAllocationHandleType, a mask
  MemLocation location;
  void* win32SecurityAttributes;
  size_t maxSize;  // 0: no limit of the pool's own
  unsigned short usage;
  unsigned char reserved[54];
};
static_assert(sizeof(MemPoolProps) == 88, "cudaMemPoolProps");
struct MemAccessDesc {
  MemLocation location;
  int flags;  // cudaMemAccessFlags: 0 none, 1 read, 3 read and write
};
// Graph memory nodes: cudaMemAllocNodeParams (and V2, laid out the same) and
// cudaMemFreeNodeParams.
struct MemAllocNodeParams {
  MemPoolProps poolProps;
  const MemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;  // out: the allocation's address
};
struct MemFreeNodeParams {
  void* dptr;
};
struct GraphNodeParams {
  int type;  // cudaGraphNodeType
  int reserved0[3];
  union {
    long long reserved1[29];
    KernelNodeParams kernel;
    MemcpyNodeParams memcpy;
    MemsetParams memset;
    HostNodeParams host;
    ChildGraphNodeParams graph;
    EventNodeParams eventWait;
    EventNodeParams eventRecord;
    MemAllocNodeParams alloc;
    MemFreeNodeParams free;
    ConditionalNodeParams conditional;
  };
  long long reserved2;
};
enum MemPoolAttr : int {
  kPoolReuseFollowEventDependencies = 1,
  kPoolReuseAllowOpportunistic = 2,
  kPoolReuseAllowInternalDependencies = 3,
  kPoolReleaseThreshold = 4,
  kPoolReservedMemCurrent = 5,
  kPoolReservedMemHigh = 6,
  kPoolUsedMemCurrent = 7,
  kPoolUsedMemHigh = 8,
};

}  // namespace gpusc::cudart::abi
