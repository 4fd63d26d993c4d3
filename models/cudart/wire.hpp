// The conversation between a CUDA program's runtime library (libgpusc_cudart, in the program's
// process) and the gpusc process that simulates its device (`gpusc exec`). The program's process
// holds no model: each runtime call is one request over a Unix socket and one reply, so the
// program keeps its own address space, libraries and threads, and the simulator its own.
//
// A request is a RequestHeader and `bytes` of payload; a reply a ReplyHeader (the CUDA error code;
// the simulator writes its own message about a failure to stderr) and its payload. Memory the
// program and the device share (managed and mapped host memory) travels as a file descriptor
// (SCM_RIGHTS): both processes map it at the same address.
//
// Header-only and free of the model: the runtime library compiles it into a small shared object.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gpusc::cudart::wire {

// Bumped when a message changes: a library and a simulator of different versions refuse each
// other at Hello instead of misreading.
constexpr uint32_t kVersion = 8;

// The environment variable naming the socket's file descriptor in the program's process.
constexpr const char* kSocketEnv = "GPUSC_CUDART_FD";
// The environment variable naming a file descriptor whose lock claims the socket: programs that
// share the socket's descriptor (the programs a script runs, at once or in turn) each lock it
// first, and one that finds it locked starts a simulator of its own instead.
constexpr const char* kClaimEnv = "GPUSC_CUDART_CLAIM_FD";
// The results folder of the simulator serving a process's ancestor, set by the runtime library
// for the processes its program starts: a simulator one of them starts writes its results into
// a folder inside it, named after its program and the program's process id.
constexpr const char* kParentOutEnv = "GPUSC_PARENT_OUT";

enum class Op : uint32_t {
  Hello = 1,            // u32 version, program name -> DeviceFacts, results folder
  RegisterFatBinary,    // fat binary container bytes -> u64 handle
  RegisterFunction,     // u64 handle, u64 hostFun, device name
  RegisterVar,          // u64 handle, u64 hostVar, u64 bytes, u32 constant, device name
  UnregisterFatBinary,  // u64 handle
  KernelInfo,           // u64 hostFun -> FunctionFacts, u32 sizes[params]
  Launch,               // LaunchHeader, packed arguments -> device printf text
  Malloc,               // u64 bytes -> u64 address
  MallocShared,         // u64 bytes -> u64 address, u64 mapped bytes, and a descriptor
  Free,                 // u64 address
  FreeHost,             // u64 address
  CopyToDevice,         // u64 dst, bytes
  CopyFromDevice,       // u64 src, u64 bytes -> bytes
  CopyDeviceToDevice,   // u64 dst, u64 src, u64 bytes
  Memset,               // u64 dst, u32 value, u64 bytes
  CopyToSymbol,         // u64 symbol, u64 offset, u64 bytes, u64 device src (0: the bytes follow)
  CopyFromSymbol,       // u64 symbol, u64 offset, u64 bytes, u64 device dst (0: reply the bytes)
  SymbolAddress,        // u64 symbol -> u64 address, u64 bytes
  StreamCreate,         // -> u64 stream
  StreamDestroy,        // u64 stream
  StreamCheck,          // u64 stream
  EventCreate,          // -> u64 event
  EventDestroy,         // u64 event
  EventRecord,          // u64 event, u64 stream
  EventElapsed,         // u64 start, u64 end -> f32 milliseconds
  Occupancy,            // u64 hostFun, u32 block threads, u64 dynamic shared -> u32 blocks per SM
  RegisterManagedVar,   // u64 handle, u64 address (MallocShared's), u64 bytes, device name
  InitModule,           // u64 handle: load the fat binary's module now
  SetHeapSize,          // u64 bytes: the device malloc heap's size (before its first use)
  EventCheck,           // u64 event
  SetStackSize,         // u64 bytes: each thread's stack (cudaLimitStackSize)
  DeviceReset,          // cudaDeviceReset: frees cudaMalloc's memory, streams, events, errors
  LoadLibrary,          // u32 ptx (else a fat binary container), bytes -> u64 handle, u32
                        // kernels, each kernel's name
  LibraryKernel,        // u64 handle, u64 kernel (the program's handle for it), name
  LibraryGlobal,        // u64 handle, name -> u64 address (0: constant memory), u64 bytes
  SetPendingLaunches,   // u64 count: launches from device code a launch may have pending
  ClientFailure,        // u32 code: a call the library failed itself (counted in the results)
};

struct RequestHeader {
  Op op;
  uint32_t reserved = 0;
  uint64_t bytes = 0;
};

struct ReplyHeader {
  int32_t code = 0;  // cudaError_t
  uint32_t hasFd = 0;
  uint64_t bytes = 0;
};

// What cudaGetDeviceProperties and cudaDeviceGetAttribute describe: the simulated platform.
struct DeviceFacts {
  char name[256] = {};
  uint64_t globalMemoryBytes = 0;
  uint64_t sharedMemoryPerSm = 0;
  uint64_t sharedMemoryPerBlock = 0;
  uint64_t sharedMemoryPerBlockOptin = 0;  // sharedMemoryPerSm less the reserved part
  uint64_t sharedReservedPerBlock = 0;
  uint32_t registersPerSm = 0;
  uint32_t registersPerBlock = 0;
  uint32_t warpSize = 32;
  uint32_t maxThreadsPerBlock = 0;
  uint32_t maxThreadsPerSm = 0;
  uint32_t maxBlocksPerSm = 0;
  uint32_t sms = 0;
  uint32_t computeCapability = 0;  // major * 10 + minor
  uint32_t coreKhz = 0;
  uint32_t memoryKhz = 0;
  uint32_t memoryBusBits = 0;
  uint32_t l2Bytes = 0;
  uint64_t heapBytes = 0;  // the device malloc heap's size (memory.device_heap_bytes)
  // FP32 over FP64 multiply-add results per SM per cycle (cudaDevAttrSingleToDoublePrecision...).
  uint32_t singleToDoubleRatio = 0;
};

// What cudaFuncGetAttributes describes, and the parameters' sizes for packing a launch.
struct FunctionFacts {
  uint64_t staticSharedBytes = 0;
  uint64_t constBytes = 0;
  uint64_t localBytesPerThread = 0;
  uint32_t regsPerThread = 0;
  uint32_t maxThreadsPerBlock = 0;
  uint32_t ptxVersion = 0;  // major * 10 + minor
  uint32_t params = 0;
};

struct LaunchHeader {
  uint64_t hostFun = 0;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint64_t sharedBytes = 0;
  uint64_t stream = 0;
  uint32_t cooperative = 0;  // cudaLaunchCooperativeKernel, or the launch attribute
  uint32_t reserved = 0;
};

// Addresses cross the socket as 64-bit integers.
inline uint64_t u64(const void* p) { return uint64_t(reinterpret_cast<uintptr_t>(p)); }
inline void* ptr(uint64_t v) { return reinterpret_cast<void*>(uintptr_t(v)); }

// A byte buffer built and read field by field.
class Buffer {
 public:
  std::vector<uint8_t> bytes;

  template <class T>
  Buffer& put(const T& v) {
    return putBytes(&v, sizeof(T));
  }
  Buffer& putBytes(const void* p, size_t n) {
    if (n == 0) return *this;
    const size_t at = bytes.size();
    bytes.resize(at + n);
    std::memcpy(bytes.data() + at, p, n);
    return *this;
  }
  Buffer& putString(const std::string& s) {
    return put(uint64_t(s.size())).putBytes(s.data(), s.size());
  }
};

// Reads fields in order from a received payload; `ok` turns false when one runs past its end.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  template <class T>
  T get() {
    T v{};
    if (size_t(end_ - p_) < sizeof(T)) {
      ok = false;
      p_ = end_;
      return v;
    }
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  std::string getString() {
    const auto n = get<uint64_t>();
    if (size_t(end_ - p_) < n) {
      ok = false;
      p_ = end_;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  const uint8_t* rest() const { return p_; }
  size_t left() const { return size_t(end_ - p_); }
  bool ok = true;

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Whole-message I/O on a connected stream socket. False when the peer has gone (or the socket
// failed): the caller reports it.
inline bool writeAll(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

inline bool readAll(int fd, void* data, size_t n) {
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

// The header with a descriptor attached (SCM_RIGHTS), then the payload.
inline bool sendWithFd(int sock, const void* header, size_t headerBytes, int fdToSend) {
  iovec iov{const_cast<void*>(header), headerBytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fdToSend >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fdToSend, sizeof(int));
  }
  for (;;) {
    const ssize_t w = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    // The descriptor went with the first byte; the rest of the header follows plainly.
    return size_t(w) == headerBytes ||
           writeAll(sock, static_cast<const uint8_t*>(header) + w, headerBytes - size_t(w));
  }
}

// Receives `headerBytes` and the descriptor sent with them (-1 when none).
inline bool recvWithFd(int sock, void* header, size_t headerBytes, int* fdReceived) {
  *fdReceived = -1;
  iovec iov{header, headerBytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t r;
  do {
    r = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (r < 0 && errno == EINTR);
  if (r <= 0) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      std::memcpy(fdReceived, CMSG_DATA(c), sizeof(int));
  return size_t(r) == headerBytes ||
         readAll(sock, static_cast<uint8_t*>(header) + r, headerBytes - size_t(r));
}

}  // namespace gpusc::cudart::wire
