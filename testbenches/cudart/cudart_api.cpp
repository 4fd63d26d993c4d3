// libgpusc_cudart: the functions of CUDA's runtime API that gpusc implements, with the names,
// arguments and symbol version (libcudart.so.13) that nvcc 13's host code links against. Each
// one checks what it can in the program's process and asks the simulator (client.hpp) for the
// rest. Every other function of the toolkit's runtime answers cudaErrorNotSupported with a
// one-line message (unsupported.cpp, generated from cudart_symbols.txt).
//
// Errors follow the runtime's rules: each call's error becomes the calling thread's last error
// (cudaGetLastError returns and clears it, cudaPeekAtLastError returns it); a kernel fault is
// sticky, returned by every later call as on a GPU whose context is lost.
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "client.hpp"
#include "cuda_abi.hpp"
#include "cudart/cuda_errors.hpp"
#include "func/texture.hpp"

#define GPUSC_API extern "C" __attribute__((visibility("default")))

using namespace gpusc::cudart;
using gpusc::cudart::shim::Client;
using gpusc::cudart::shim::Dim3;
namespace wire = gpusc::cudart::wire;
namespace abi = gpusc::cudart::abi;

namespace {

thread_local int tLastError = kSuccess;
// The <<<>>> configurations this thread pushed and its host stubs have not popped yet.
struct Configuration {
  Dim3 grid, block;
  size_t sharedBytes;
  void* stream;
};
thread_local std::vector<Configuration> tConfigurations;
std::atomic<int> gSticky{kSuccess};

int record(int code) {
  if (code != kSuccess) {
    tLastError = code;
    if (isStickyError(code)) gSticky.store(code);
  }
  return code;
}

using wire::ptr;
using wire::u64;

Client& client() { return Client::instance(); }

// A failure the library finds itself goes into the run's results (stats.json's failed_calls) as
// the simulator's own do: one message to the simulator (never from inside another report).
void reportFailure(int code) {
  thread_local bool reporting = false;
  if (reporting) return;
  reporting = true;
  wire::Buffer b;
  b.put(uint32_t(code));
  client().call(wire::Op::ClientFailure, b);
  reporting = false;
}

// A failure the library finds itself: its message on stderr, as the simulator writes its own.
int fail(int code, const char* function, const std::string& why) {
  std::fprintf(stderr, "gpusc: %s: %s (%s)\n", function, why.c_str(), errorName(code));
  reportFailure(code);
  return record(code);
}

// The one device gpusc simulates, 0; any other is `function`'s cudaErrorInvalidDevice.
int checkDevice(int device, const char* function) {
  if (device != 0)
    return fail(kErrorInvalidDevice, function,
                "device " + std::to_string(device) + ": gpusc simulates one device, 0");
  return kSuccess;
}

// What cudaDeviceProp says of texture memory, and what cudaCreateTextureObject requires of it.
constexpr uint64_t kTextureAlignment = 512;      // a texture's first texel
constexpr uint64_t kTexturePitchAlignment = 32;  // a pitch-2D texture's rows

// A call that works on the device: the sticky error first.
#define GPUSC_STICKY()                                              \
  do {                                                              \
    if (int s_ = gSticky.load(); s_ != kSuccess) return record(s_); \
  } while (0)

int simple(wire::Op op, uint64_t a) {
  GPUSC_STICKY();
  wire::Buffer b;
  b.put(a);
  return record(client().call(op, b));
}

// ---- memory ----

int copyToDevice(void* dst, const void* src, size_t bytes) {
  wire::Buffer b;
  b.put(u64(dst));
  b.putBytes(src, bytes);
  return client().call(wire::Op::CopyToDevice, b);
}

int copyFromDevice(void* dst, const void* src, size_t bytes) {
  wire::Buffer b;
  b.put(u64(src)).put(uint64_t(bytes));
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::CopyFromDevice, b, &reply); e != kSuccess) return e;
  std::memcpy(dst, reply.data(), std::min<size_t>(bytes, reply.size()));
  return kSuccess;
}

// cudaMemcpy of every kind: where each side lives decides who copies. Host and shared memory
// are this process's; device memory is the simulator's.
int memcpyAny(void* dst, const void* src, size_t bytes, int kind, const char* function) {
  GPUSC_STICKY();
  if (bytes == 0) return kSuccess;
  if (dst == nullptr || src == nullptr) return fail(kErrorInvalidValue, function, "a null pointer");
  Client& c = client();
  const Client::Where d = c.where(dst), s = c.where(src);
  bool toDevice = false, fromDevice = false;
  if (!memcpySides(kind, d != Client::Where::Host, s != Client::Where::Host, &toDevice,
                   &fromDevice))
    return fail(kErrorInvalidMemcpyDirection, function,
                "kind " + std::to_string(kind) + " is not a cudaMemcpyKind");
  // A side the kind calls host must be memory this process can touch, and a side it calls
  // device must be a device allocation.
  if ((!toDevice && d == Client::Where::Device) || (!fromDevice && s == Client::Where::Device))
    return fail(kErrorInvalidValue, function,
                "the kind names host memory, but the pointer is device memory");
  if ((toDevice && d == Client::Where::Host) || (fromDevice && s == Client::Where::Host))
    return fail(kErrorInvalidValue, function,
                "the kind names device memory, but the pointer is not inside a device allocation");
  // Shared memory is mapped here: only plain device memory needs the simulator.
  const bool dDev = d == Client::Where::Device, sDev = s == Client::Where::Device;
  int e = kSuccess;
  if (!dDev && !sDev) {
    std::memmove(dst, src, bytes);
  } else if (dDev && !sDev) {
    e = copyToDevice(dst, src, bytes);
  } else if (!dDev && sDev) {
    e = copyFromDevice(dst, src, bytes);
  } else {
    wire::Buffer b;
    b.put(u64(dst)).put(u64(src)).put(uint64_t(bytes));
    e = c.call(wire::Op::CopyDeviceToDevice, b);
  }
  return record(e);
}

// A region of `slices` slices `slicePitch` bytes apart, each of `rows` rows `pitch` bytes apart,
// each row `width` bytes, from `p`: in device or shared memory it must lie inside the allocation
// `p` is in. The 2D and 3D copies and sets check it before their first row, so a refused call
// changes nothing, as CUDA's do. Host memory is the program's own, and a pointer in no
// allocation fails at its first row.
int regionInside(const void* p, size_t width, size_t rows, size_t pitch, size_t slices,
                 size_t slicePitch, const char* function) {
  if (width == 0 || rows == 0 || slices == 0) return kSuccess;
  uint64_t base = 0, bytes = 0;
  if (!client().allocation(p, &base, &bytes, nullptr)) return kSuccess;
  const uint64_t at = uint64_t(reinterpret_cast<uintptr_t>(p)) - base;
  uint64_t span = 0, rowSpan = 0;
  const bool overflow = __builtin_mul_overflow(uint64_t(rows - 1), uint64_t(pitch), &rowSpan) ||
                        __builtin_mul_overflow(uint64_t(slices - 1), uint64_t(slicePitch), &span) ||
                        __builtin_add_overflow(span, rowSpan, &span) ||
                        __builtin_add_overflow(span, uint64_t(width), &span);
  if (overflow || span > bytes - at)
    return fail(kErrorInvalidValue, function,
                "the region of " + std::to_string(slices) + " x " + std::to_string(rows) +
                    " rows of " + std::to_string(width) + " bytes runs past the end of its " +
                    std::to_string(bytes) + "-byte allocation");
  return kSuccess;
}

// Rows of `width` bytes, `height` of them, from rows `spitch` bytes apart to rows `dpitch` bytes
// apart: cudaMemcpy2D, and the copies to and from CUDA arrays. One copy when both sides are
// contiguous.
int copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
           int kind, const char* function) {
  if (width > dpitch || width > spitch)  // CUDA's code for it: invalid pitch, not invalid value
    return fail(kErrorInvalidPitchValue, function, "a row wider than its pitch");
  if (int e = regionInside(dst, width, height, dpitch, 1, 0, function); e != kSuccess) return e;
  if (int e = regionInside(src, width, height, spitch, 1, 0, function); e != kSuccess) return e;
  if (width == dpitch && width == spitch)
    return memcpyAny(dst, src, width * height, kind, function);
  for (size_t row = 0; row < height; ++row)
    if (int e = memcpyAny(static_cast<uint8_t*>(dst) + row * dpitch,
                          static_cast<const uint8_t*>(src) + row * spitch, width, kind, function);
        e != kSuccess)
      return e;
  return kSuccess;
}

// Asks the simulator for `bytes` of shared memory and maps it at its device address here. With
// `keepFd`, the memory file's descriptor is given back open (the caller maps the memory again
// elsewhere, then closes it).
int mapShared(uint64_t bytes, bool managed, const char* function, uint64_t* base, uint64_t* span,
              int* keepFd = nullptr) {
  wire::Buffer b;
  b.put(uint64_t(bytes)).put(uint32_t(managed));
  std::vector<uint8_t> reply;
  int fd = -1;
  Client& c = client();
  if (int e = c.call(wire::Op::MallocShared, b, &reply, &fd); e != kSuccess) return record(e);
  wire::Reader in(reply.data(), reply.size());
  *base = in.get<uint64_t>();
  *span = in.get<uint64_t>();
  void* got = fd >= 0 ? ::mmap(ptr(*base), *span, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0)
                      : MAP_FAILED;
  if (got != ptr(*base)) {
    if (fd >= 0) ::close(fd);
    if (got != MAP_FAILED) ::munmap(got, *span);
    wire::Buffer f;
    f.put(*base);
    c.call(wire::Op::FreeHost, f);
    return fail(kErrorMemoryAllocation, function,
                "cannot map the shared memory at its device address in this process (the "
                "program already uses that address)");
  }
  if (keepFd != nullptr)
    *keepFd = fd;
  else
    ::close(fd);
  return kSuccess;
}

int mallocShared(void** p, size_t bytes, const char* function, bool managed,
                 unsigned hostFlags = 0) {
  GPUSC_STICKY();
  if (p == nullptr) return fail(kErrorInvalidValue, function, "a null pointer for the result");
  uint64_t base = 0, span = 0;
  if (int e = mapShared(bytes, managed, function, &base, &span); e != kSuccess) return e;
  // Pinned host memory is the host's: cudaMemGetInfo counts managed memory only.
  client().addAllocation(base, bytes, span, managed, managed, hostFlags);
  *p = ptr(base);
  return kSuccess;
}

// What cudaMemAdvise and cudaMemPrefetchAsync said of managed memory (below).
struct RangeNote {
  uint64_t from, to;
  int op;  // cudaMemoryAdvise (1 to 6), or kPrefetched
  abi::MemLocation where;
};
constexpr int kPrefetched = 0;
struct RangeNotes {
  std::mutex mutex;
  std::vector<RangeNote> notes;
};
RangeNotes& rangeNotes() {
  static RangeNotes r;
  return r;
}
void note(const void* p, size_t bytes, int op, abi::MemLocation where) {
  RangeNotes& r = rangeNotes();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.notes.push_back({u64(p), u64(p) + bytes, op, where});
}
// Freed managed memory forgets what was said of it.
void forgetRange(uint64_t base, uint64_t size) {
  RangeNotes& r = rangeNotes();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.notes.erase(
      std::remove_if(r.notes.begin(), r.notes.end(),
                     [&](const RangeNote& n) { return n.from < base + size && base < n.to; }),
      r.notes.end());
}
// `function`: the call that frees, for messages (null: cudaFree or cudaFreeHost, as `op`).
int freeAny(void* p, wire::Op op, const char* function = nullptr) {
  GPUSC_STICKY();
  if (p == nullptr) return kSuccess;
  Client& c = client();
  // Pinned host memory is cudaFreeHost's, managed memory cudaFree's.
  if (op == wire::Op::Free && c.where(p) == Client::Where::Shared && !c.managed(p))
    return fail(kErrorInvalidValue, function ? function : "cudaFree",
                "host memory from cudaMallocHost or cudaHostAlloc: free it with cudaFreeHost");
  if (op == wire::Op::FreeHost && c.managed(p))
    return fail(kErrorInvalidValue, "cudaFreeHost",
                "managed memory from cudaMallocManaged: free it with cudaFree");
  uint64_t base = 0, mapped = 0, size = 0;
  const bool known = c.allocation(p, &base, &size, &mapped) && base == u64(p);
  if (known && c.managed(p)) forgetRange(base, size);
  wire::Buffer b;
  b.put(u64(p));
  const int e = c.call(op, b);
  if (e == kSuccess && known) {
    if (mapped) ::munmap(p, mapped);
    c.removeAllocation(base);
  }
  return record(e);
}

// ---- stream capture ----
//
// A stream in capture records the work issued to it instead of doing it; the graph the capture
// ends in replays that work, in the order it was issued, each time it is launched. Work issued
// to another stream after it waited on an event recorded in a capturing stream joins the same
// capture (a fork), so one list in issue order keeps every stream's order and every wait.
// Kernel arguments are copied when captured; copies and memsets read and write their memory when
// replayed, as a GPU's graph nodes do.
using Replay = std::function<int()>;

// The graph allocations that outlive their graph's launch (GraphMemory::outliving): whether
// each is allocated now, from the graph's last launch until the program frees it.
struct OutlivingAllocations {
  std::mutex mutex;
  std::map<const void*, bool> allocated;
};
OutlivingAllocations& outlivingAllocations() {
  static OutlivingAllocations a;
  return a;
}

// cudaFree or cudaFreeAsync of `p` when it is an outliving graph allocation: it is free until
// the graph's next launch (its bytes stay the graph's). False for any other memory.
bool freeOutliving(const void* p, int* result, const char* function) {
  OutlivingAllocations& o = outlivingAllocations();
  std::lock_guard<std::mutex> lock(o.mutex);
  auto it = o.allocated.find(p);
  if (it == o.allocated.end()) return false;
  if (!it->second)
    *result = fail(kErrorInvalidValue, function,
                   "a graph's allocation that is not allocated now (freed already since the "
                   "graph's last launch, or the graph has not been launched)");
  else
    *result = kSuccess;
  it->second = false;
  return true;
}

// Memory a graph owns: what cudaMallocAsync allocated in its capture. It is allocated once, when
// captured, and every launch of the graph uses it (a GPU's graph allocations keep their
// addresses too); it is freed with the last copy of the graph. `blocks` were freed in the capture
// too; `outliving` were not: each launch allocates them, and they stay allocated until the
// program frees them (cudaFree, cudaFreeAsync), which it must do before the graph's next launch
// unless the graph was instantiated with cudaGraphInstantiateFlagAutoFreeOnLaunch.
// The device's graph memory (cudaDeviceGetGraphMemAttribute): the bytes the graphs that exist
// now hold, and the most they held at once since the program started or reset it.
struct GraphMemoryUse {
  std::mutex mutex;
  uint64_t current = 0, high = 0;
  void add(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    current = uint64_t(int64_t(current) + bytes);
    high = std::max(high, current);
  }
};
GraphMemoryUse& graphMemoryUse() {
  static GraphMemoryUse u;
  return u;
}

struct GraphMemory {
  std::vector<void*> blocks;
  std::vector<void*> outliving;
  std::vector<void*> words;  // conditional handles' values (cudaGraphConditionalHandleCreate)
  std::map<const void*, size_t> bytes;  // each allocation's size (blocks and outliving)
  GraphMemory() = default;
  GraphMemory(const GraphMemory&) = delete;
  GraphMemory& operator=(const GraphMemory&) = delete;
  // A new allocation of the graph's (`p`, of `size` bytes).
  void hold(const void* p, size_t size) {
    bytes[p] = size;
    graphMemoryUse().add(int64_t(size));
  }
  // Takes the allocations of `other` (a capture's, into the graph it ends in).
  void adopt(GraphMemory& other) {
    blocks.insert(blocks.end(), other.blocks.begin(), other.blocks.end());
    outliving.insert(outliving.end(), other.outliving.begin(), other.outliving.end());
    bytes.insert(other.bytes.begin(), other.bytes.end());
    other.blocks.clear();
    other.outliving.clear();
    other.bytes.clear();
  }
  // An outliving block still allocated (the program has not freed it since the last launch)
  // stays allocated, as on a GPU: it is the program's to free, as any allocation.
  ~GraphMemory() {
    uint64_t held = 0;
    for (const auto& [p, size] : bytes) held += size;
    graphMemoryUse().add(-int64_t(held));
    std::vector<void*> freed;
    {
      OutlivingAllocations& o = outlivingAllocations();
      std::lock_guard<std::mutex> lock(o.mutex);
      for (void* p : outliving) {
        if (!o.allocated[p]) freed.push_back(p);
        o.allocated.erase(p);
      }
    }
    for (void* p : blocks) freeAny(p, wire::Op::Free);
    for (void* p : freed) freeAny(p, wire::Op::Free);
    for (void* p : words) freeAny(p, wire::Op::Free);
  }
  // A launch's first step: the outliving blocks are allocated again (still allocated from the
  // last launch: an error, unless it frees them on launch).
  int launch(bool autoFree) const {
    OutlivingAllocations& o = outlivingAllocations();
    std::lock_guard<std::mutex> lock(o.mutex);
    for (void* p : outliving)
      if (o.allocated[p] && !autoFree) {
        char why[240];
        std::snprintf(why, sizeof why,
                      "the graph's allocation at %p from its last launch is still allocated: "
                      "free it (cudaFree, cudaFreeAsync) before launching the graph again, or "
                      "instantiate it with cudaGraphInstantiateFlagAutoFreeOnLaunch",
                      p);
        return fail(kErrorInvalidValue, "cudaGraphLaunch", why);
      }
    for (void* p : outliving) o.allocated[p] = true;
    return kSuccess;
  }
};

// cudaGraphNodeType's values.
constexpr int kNodeKernel = 0, kNodeMemcpy = 1, kNodeMemset = 2, kNodeHost = 3, kNodeGraph = 4,
              kNodeEmpty = 5, kNodeWaitEvent = 6, kNodeEventRecord = 7, kNodeMemAlloc = 10,
              kNodeMemFree = 11, kNodeConditional = 13;

// A kernel node's launch as it was given, for cudaGraphKernelNodeGetParams (the arguments' bytes
// are the node's own, so the pointers it returns stay valid while the node does).
struct KernelLaunchCopy {
  void* func = nullptr;
  abi::Dim3Abi grid{}, block{};
  unsigned sharedBytes = 0;
  std::vector<std::vector<uint8_t>> args;
  std::vector<void*> argPointers;  // into args
};

// What a graph node is, for the calls that read it back (cudaGraphNodeGetType and the
// cudaGraph*NodeGetParams): its type (cudaGraphNodeType) and the parameters of that type it was
// made with. A kernel node whose launch it holds (`kernel`) may have its parameters set again.
struct Graph;
struct NodeKind {
  int type = kNodeEmpty;
  std::shared_ptr<const KernelLaunchCopy> kernel;
  // A kernel node's attributes (cudaGraphKernelNodeSetAttribute) by id.
  std::map<int, abi::LaunchAttribute> attributes;
  abi::Memcpy3DParms copy{};  // kNodeMemcpy, when `copyKnown` (not a copy to or from a symbol)
  bool copyKnown = false;
  abi::MemsetParams memset{};  // kNodeMemset
  abi::HostNodeParams host{};  // kNodeHost
  void* event = nullptr;       // kNodeEventRecord, kNodeWaitEvent
  // kNodeMemAlloc: the allocation's parameters (dptr its address) and access descriptors;
  // kNodeMemFree: the address it frees.
  abi::MemAllocNodeParams alloc{};
  std::shared_ptr<const std::vector<abi::MemAccessDesc>> access;
  void* freed = nullptr;
  // kNodeGraph: the node's own graph (cudaGraphChildGraphNodeGetGraph), which it runs.
  std::shared_ptr<Graph> child;
};

// A copy node's kind from the 3D parameters that describe the copy.
NodeKind copy3DKind(const abi::Memcpy3DParms& p) {
  NodeKind k;
  k.type = kNodeMemcpy;
  k.copyKnown = true;
  k.copy = p;
  return k;
}

// A 1D copy as the 3D parameters that describe it (what CUDA reads back for such a node).
NodeKind copyKind(void* dst, const void* src, size_t bytes, int kind) {
  abi::Memcpy3DParms p{};
  p.srcPtr = {const_cast<void*>(src), bytes, bytes, 1};
  p.dstPtr = {dst, bytes, bytes, 1};
  p.extent = {bytes, 1, 1};
  p.kind = kind;
  return copy3DKind(p);
}

NodeKind memsetKind(void* dst, size_t pitch, unsigned value, unsigned elementSize, size_t width,
                    size_t height) {
  NodeKind k;
  k.type = kNodeMemset;
  k.memset = {dst, pitch, value, elementSize, width, height};
  return k;
}

NodeKind typeKind(int type) {
  NodeKind k;
  k.type = type;
  return k;
}

// A memory allocation node's kind: `bytes` at `p` in the device's memory.
NodeKind allocKind(void* p, size_t bytes) {
  NodeKind k;
  k.type = kNodeMemAlloc;
  k.alloc.poolProps.allocType = 1;      // cudaMemAllocationTypePinned
  k.alloc.poolProps.location = {1, 0};  // cudaMemLocationTypeDevice, device 0
  k.alloc.bytesize = bytes;
  k.alloc.dptr = p;
  return k;
}

NodeKind freeKind(void* p) {
  NodeKind k;
  k.type = kNodeMemFree;
  k.freed = p;
  return k;
}

NodeKind hostKind(void (*fn)(void*), void* userData) {
  NodeKind k;
  k.type = kNodeHost;
  k.host = {fn, userData};
  return k;
}

// Which captured work a stream's next work comes after, as counts of ops: stream -> the ops
// issued up to the last one of that stream's it waits for.
using Joined = std::map<void*, size_t>;

struct CaptureSequence {
  unsigned long long id = 0;  // unique over the process's life (cudaStreamGetCaptureInfo)
  void* origin = nullptr;     // the stream the capture began in (and must end in)
  std::vector<Replay> ops;
  std::vector<NodeKind> kinds;   // what each of them is (its node's type and parameters)
  std::vector<void*> allocated;  // by cudaMallocAsync in the capture
  std::shared_ptr<GraphMemory> memory = std::make_shared<GraphMemory>();
  // cudaStreamBeginCaptureToGraph: the graph the captured nodes join, after `after`.
  // cudaStreamGetCaptureInfo gives out the graph being captured: made then, as `into`, and the
  // capture's own (deleted if it ends without a graph).
  void* into = nullptr;
  bool madeInto = false;
  std::vector<const void*> after;
  // cudaStreamUpdateCaptureDependencies: nodes of `into` the next captured op depends on too,
  // and those each op got (by its place in `ops`).
  std::vector<const void*> pendingDeps;
  std::map<size_t, std::vector<const void*>> extraDeps;
  // Forks and joins: each stream's last op (ops.size() after it), what each stream's work
  // waits for (through events it waited on), and what each event recorded in the capture
  // stands for. The capture ends only when the origin waits for every other stream's last op.
  std::map<void*, size_t> lastOp;
  std::map<void*, Joined> joined;
  std::map<void*, Joined> eventJoins;
  // A call the capture cannot hold (cudaStreamSynchronize on a capturing stream, say) broke it:
  // its streams' later work is refused, and it ends without a graph.
  bool invalidated = false;

  void push(void* stream, Replay op, NodeKind kind) {
    if (!pendingDeps.empty()) extraDeps[ops.size()] = std::move(pendingDeps);
    pendingDeps.clear();
    ops.push_back(std::move(op));
    kinds.push_back(std::move(kind));
    lastOp[stream] = ops.size();
  }
  void record(void* event, void* stream) {
    Joined j = joined[stream];
    j[stream] = ops.size();
    eventJoins[event] = std::move(j);
  }
  void wait(void* stream, void* event) {
    Joined& mine = joined[stream];
    for (const auto& [s, n] : eventJoins[event]) mine[s] = std::max(mine[s], n);
  }
  // A stream other than the origin with work the origin does not wait for, or null.
  void* unjoined() {
    Joined& o = joined[origin];
    for (const auto& [s, n] : lastOp)
      if (s != origin && o[s] < n) return s;
    return nullptr;
  }
};

// A graph node: what it does when the graph runs, and the nodes it must run after. A captured
// graph is a chain of nodes in issue order; a graph built node by node (cudaGraphAdd*Node) has
// the dependencies its nodes were given.
struct GraphNode {
  Replay op;
  std::vector<const GraphNode*> deps;
  NodeKind kind;
  Graph* owner = nullptr;
};

// User objects (cudaUserObjectCreate): a program's resource with a count of references and a
// destructor, called when the last reference goes. Graphs and their instantiations own references
// (cudaGraphRetainUserObject), so the program can release its own while a graph still needs the
// resource. Every call completes before it returns, so the destructor runs in the call that
// releases the last reference (a GPU's runtime runs it once the work using it has completed).
struct UserObject {
  void* ptr;
  void (*destroy)(void*);
  uint64_t count;
};
struct UserObjects {
  std::mutex mutex;
  std::set<UserObject*> live;
};
UserObjects& userObjects() {
  static UserObjects u;
  return u;
}

// Takes `n` references to `o` (a live user object, else false).
bool retainUserObject(UserObject* o, uint64_t n) {
  std::lock_guard<std::mutex> lock(userObjects().mutex);
  if (userObjects().live.count(o) == 0) return false;
  o->count += n;
  return true;
}

// Gives back `n` references to `o`; the last one calls its destructor (outside the lock, so the
// destructor may release other objects). False when `o` is not live or has fewer references.
bool releaseUserObject(UserObject* o, uint64_t n) {
  {
    std::lock_guard<std::mutex> lock(userObjects().mutex);
    if (userObjects().live.count(o) == 0 || o->count < n) return false;
    o->count -= n;
    if (o->count != 0) return true;
    userObjects().live.erase(o);
  }
  if (o->destroy != nullptr) o->destroy(o->ptr);
  delete o;
  return true;
}

// The references a graph or an instantiation owns: a copy (a clone, an instantiation) takes its
// own, and they are given back when their owner goes.
struct UserReferences {
  std::map<UserObject*, uint64_t> held;
  UserReferences() = default;
  UserReferences(const UserReferences& other) : held(other.held) {
    for (const auto& [o, n] : held) retainUserObject(o, n);
  }
  UserReferences& operator=(const UserReferences&) = delete;
  // Holds what `other` holds instead (its references taken before these are given back).
  void replaceWith(const UserReferences& other) {
    UserReferences copy(other);
    held.swap(copy.held);
  }
  ~UserReferences() {
    for (const auto& [o, n] : held) releaseUserObject(o, n);
  }
};

struct Graph {
  std::vector<std::unique_ptr<GraphNode>> nodes;  // in the order they were added
  std::shared_ptr<GraphMemory> memory = std::make_shared<GraphMemory>();
  UserReferences userReferences;  // cudaGraphRetainUserObject
  // A child graph node's own graph (cudaGraphChildGraphNodeGetGraph): no memory nodes may be
  // added to it.
  bool embedded = false;
  // While an instantiation of a graph with memory nodes exists, there may be no other (CUDA's
  // rule): each instantiation holds the token this watches.
  std::weak_ptr<void> instantiation;

  // A clone's nodes by the original's (cudaGraphNodeFindInClone).
  std::unordered_map<const void*, GraphNode*> cloneOf;
  // Conditional handles made for this graph (cudaGraphConditionalHandleCreate): each the device
  // address of its value's word, and the value every run of the graph starts with (set when
  // `assignDefault`).
  struct Handle {
    void* word;
    unsigned defaultValue;
    bool assignDefault;
  };
  std::vector<Handle> handles;
  // Sets the handles that take their default when the graph runs; then its nodes' work in order.
  int run() const;

  bool holds(const void* node) const { return index.count(node) != 0; }
  // Whether it has memory allocation or free nodes, which CUDA's rules restrict (no clone, no
  // child by copy, no node or edge removed, one instantiation at a time).
  bool hasMemoryNodes() const {
    for (const auto& n : nodes)
      if (n->kind.type == kNodeMemAlloc || n->kind.type == kNodeMemFree) return true;
    return false;
  }
  GraphNode& add(Replay op, const void* const* deps, size_t count) {
    nodes.push_back(std::make_unique<GraphNode>());
    GraphNode& n = *nodes.back();
    n.owner = this;
    index.emplace(&n, nodes.size() - 1);
    n.op = std::move(op);
    for (size_t i = 0; i < count; ++i) n.deps.push_back(static_cast<const GraphNode*>(deps[i]));
    return n;
  }
  // The nodes in an order that runs each after its dependencies: of the nodes whose
  // dependencies have run, the first added (so a captured graph keeps its issue order). False
  // when the dependencies form a cycle.
  bool order(std::vector<const GraphNode*>& out) const {
    out.clear();
    std::vector<size_t> waitsFor(nodes.size(), 0);
    std::vector<std::vector<size_t>> after(nodes.size());  // each node's dependents
    for (size_t i = 0; i < nodes.size(); ++i)
      for (const GraphNode* d : nodes[i]->deps) {
        after[index.at(d)].push_back(i);
        ++waitsFor[i];
      }
    std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (waitsFor[i] == 0) ready.push(i);
    while (!ready.empty()) {
      const size_t i = ready.top();
      ready.pop();
      out.push_back(nodes[i].get());
      for (size_t j : after[i])
        if (--waitsFor[j] == 0) ready.push(j);
    }
    return out.size() == nodes.size();
  }
  // Removes `node` and every edge to it (cudaGraphDestroyNode).
  void remove(const GraphNode* node) {
    for (auto& n : nodes)
      n->deps.erase(std::remove(n->deps.begin(), n->deps.end(), node), n->deps.end());
    for (auto& [original, copy] : cloneOf)
      if (copy == node) copy = nullptr;
    nodes.erase(nodes.begin() + std::ptrdiff_t(index.at(node)));
    index.clear();
    for (size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].get(), i);
  }

 private:
  std::unordered_map<const void*, size_t> index;  // node -> its place in `nodes`
};

// An instantiated graph: its nodes' work in the order it runs (node handles stay valid for
// cudaGraphExecKernelNodeSetParams).
struct GraphExec {
  std::vector<const GraphNode*> nodes;
  // Each node's kind and dependencies (places in `nodes`), for cudaGraphExecUpdate: the graph
  // may be destroyed after instantiation, and `nodes` then only names the nodes.
  std::vector<NodeKind> kinds;
  std::vector<std::vector<size_t>> deps;
  std::vector<bool> enabled;        // cudaGraphNodeSetEnabled
  std::vector<Replay> disabledOps;  // a disabled node's work, kept for when it is enabled
  unsigned long long flags = 0;
  std::vector<Replay> ops;  // the launch's own steps (opsBefore of them), then the nodes'
  size_t opsBefore = 0;
  std::shared_ptr<GraphMemory> memory;
  UserReferences userReferences;        // the graph's, when it was instantiated or updated
  std::shared_ptr<void> instantiation;  // for Graph::instantiation
};

// Gives an instantiation's node new work (kept aside while the node is disabled).
void setExecWork(GraphExec& x, size_t place, Replay op, NodeKind kind) {
  x.kinds[place] = std::move(kind);
  if (x.enabled[place])
    x.ops[x.opsBefore + place] = std::move(op);
  else
    x.disabledOps[place] = std::move(op);
}

// The value each conditional handle of `handles` takes when its graph runs.
int setHandleDefaults(const std::vector<Graph::Handle>& handles) {
  for (const Graph::Handle& h : handles)
    if (h.assignDefault)
      if (int e = memcpyAny(h.word, &h.defaultValue, sizeof h.defaultValue, kHostToDevice,
                            "cudaGraphLaunch");
          e != kSuccess)
        return e;
  return kSuccess;
}

// The work a child graph node does: its graph's nodes as they are now, in an order that keeps
// their dependencies (its conditional handles' defaults first).
Replay childWork(const Graph& child);

// The work `n` does when an instantiation of its graph runs: a child graph node runs its graph as
// it was when the instantiation was made (cudaGraphChildGraphNodeGetGraph may change it later).
Replay nodeWork(const GraphNode& n) { return n.kind.child ? childWork(*n.kind.child) : n.op; }

Replay childWork(const Graph& child) {
  std::vector<const GraphNode*> ordered;
  if (!child.order(ordered))
    return [] {
      return fail(kErrorInvalidValue, "cudaGraphLaunch",
                  "a child graph's dependencies form a cycle");
    };
  std::vector<Replay> ops;
  for (const GraphNode* n : ordered) ops.push_back(nodeWork(*n));
  return [ops = std::move(ops), handles = child.handles, memory = child.memory] {
    if (int e = setHandleDefaults(handles); e != kSuccess) return e;
    for (const Replay& op : ops)
      if (int e = op(); e != kSuccess) return e;
    return int(kSuccess);
  };
}

int Graph::run() const {
  if (int e = setHandleDefaults(handles); e != kSuccess) return e;
  std::vector<const GraphNode*> ordered;
  if (!order(ordered))
    return fail(kErrorInvalidValue, "cudaGraphLaunch",
                "a conditional node's body graph has dependencies that form a cycle");
  for (const GraphNode* n : ordered)
    if (int e = nodeWork(*n)(); e != kSuccess) return e;
  return kSuccess;
}

struct Captures {
  std::mutex mutex;
  unsigned long long sequences = 0;                           // captures begun
  std::map<void*, std::shared_ptr<CaptureSequence>> streams;  // capturing stream -> its capture
  std::map<void*, std::shared_ptr<CaptureSequence>> events;   // recorded in a capture
};

Captures& captures() {
  static Captures c;
  return c;
}

// Events created with cudaEventDisableTiming: cudaEventElapsedTime refuses them, as CUDA does.
struct UntimedEvents {
  std::mutex mutex;
  std::set<void*> events;
};

UntimedEvents& untimedEvents() {
  static UntimedEvents u;
  return u;
}

// What each stream was created with (cudaStreamGetFlags, cudaStreamGetPriority) and each
// kernel's device name (cudaFuncGetName; nvcc's registration passes a string of the program's).
struct StreamSettings {
  unsigned flags = 0;
  int priority = 0;
  unsigned long long id = 0;  // cudaStreamGetId: unique in the process (0: the legacy stream)
};
// The next stream id (created streams and each host thread's per-thread default stream).
std::atomic<unsigned long long>& nextStreamId() {
  static std::atomic<unsigned long long> next{1};
  return next;
}
struct Names {
  std::mutex mutex;
  std::map<void*, StreamSettings> streams;
  std::map<const void*, const char*> functions;
};

Names& names() {
  static Names n;
  return n;
}

// The legacy default stream (0, cudaStreamLegacy) cannot be captured.
bool legacyStream(void* stream) { return stream == nullptr || stream == ptr(1); }

// The stream a per-thread-default-stream entry point (_ptsz, nvcc --default-stream per-thread)
// means: there, 0 is the calling thread's default stream, cudaStreamPerThread.
void* perThread(void* stream) { return stream == nullptr ? ptr(2) : stream; }

// The capture `stream` records into, or null.
std::shared_ptr<CaptureSequence> capturing(void* stream) {
  Captures& c = captures();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.streams.find(stream);
  return it == c.streams.end() ? nullptr : it->second;
}

// Marks the capture `stream` takes part in as broken by `function` (a call it cannot hold), and
// returns that call's error, cudaErrorStreamCaptureUnsupported, as CUDA does.
int breakCapture(const std::shared_ptr<CaptureSequence>& seq, const char* function,
                 const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(captures().mutex);
    seq->invalidated = true;
  }
  return fail(kErrorStreamCaptureUnsupported, function,
              why + " (this invalidates the capture: end it and begin again)");
}

// The error for work issued to a stream whose capture is broken.
int refuseInvalidated(const char* function) {
  return fail(kErrorStreamCaptureInvalidated, function,
              "the stream's capture was invalidated by an earlier call it cannot hold "
              "(cudaStreamEndCapture ends it without a graph)");
}

// Records `op` if `stream` is capturing (true, with *error kSuccess, or the error when the capture
// is broken and the op dropped), else leaves it to the caller (false).
bool captured(void* stream, Replay op, int* error, NodeKind kind) {
  *error = kSuccess;
  auto seq = capturing(stream);
  if (!seq) return false;
  std::lock_guard<std::mutex> lock(captures().mutex);
  if (seq->invalidated)
    *error = kErrorStreamCaptureInvalidated;
  else
    seq->push(stream, std::move(op), std::move(kind));
  return true;
}

// Work `function` issues to `stream`: recorded if it is capturing (a node of `kind`), else done
// now.
int issue(const char* function, void* stream, Replay op, NodeKind kind) {
  int error = kSuccess;
  if (!captured(stream, op, &error, std::move(kind))) return op();
  return error == kSuccess ? int(kSuccess) : refuseInvalidated(function);
}

// ---- launches ----

int sendLaunch(const wire::Buffer& b) {
  std::vector<uint8_t> printed;
  const int e = client().call(wire::Op::Launch, b, &printed);
  Client::print(printed);
  // A fault is asynchronous on a GPU: the launch itself succeeds, and every call after it
  // returns the fault.
  if (isStickyError(e)) {
    record(e);
    return kSuccess;
  }
  return record(e);
}

// The dynamic shared memory a block of kernel `k` may ask for: what cudaFuncSetAttribute
// (cudaFuncAttributeMaxDynamicSharedMemorySize) allowed, else a block's 48 KB (the device's
// sharedMemPerBlock) less the kernel's static shared memory, as on a GPU.
uint64_t maxDynamicShared(const gpusc::cudart::shim::Kernel& k) {
  if (k.maxDynamicSharedBytes >= 0) return uint64_t(k.maxDynamicSharedBytes);
  const uint64_t perBlock = client().facts().sharedMemoryPerBlock;
  return perBlock - std::min<uint64_t>(perBlock, k.facts.staticSharedBytes);
}

// The launch as work to do (now, or when a graph runs), its arguments copied; an error code when
// it cannot be made.
int makeLaunch(const void* hostFun, Dim3 grid, Dim3 block, void** args, size_t sharedBytes,
               void* stream, bool cooperative, Replay* work) {
  Client& c = client();
  const gpusc::cudart::shim::Kernel* k = nullptr;
  if (int e = c.kernel(hostFun, &k); e != kSuccess) return record(e);
  if (const uint64_t room = maxDynamicShared(*k); sharedBytes > room)
    return fail(
        kErrorInvalidValue, "cudaLaunchKernel",
        std::to_string(sharedBytes) +
            " bytes of dynamic shared memory: a block of this "
            "kernel may ask for " +
            std::to_string(room) +
            (k->maxDynamicSharedBytes >= 0 ? " (its cudaFuncAttributeMaxDynamicSharedMemorySize)"
                                           : "; more needs cudaFuncSetAttribute("
                                             "cudaFuncAttributeMaxDynamicSharedMemorySize)"));
  wire::LaunchHeader h;
  h.hostFun = u64(hostFun);
  h.grid[0] = grid.x, h.grid[1] = grid.y, h.grid[2] = grid.z;
  h.block[0] = block.x, h.block[1] = block.y, h.block[2] = block.z;
  h.sharedBytes = sharedBytes;
  h.stream = u64(stream);
  h.cooperative = cooperative ? 1 : 0;
  wire::Buffer b;
  b.put(h);
  if (!k->paramSizes.empty() && args == nullptr)
    return fail(kErrorInvalidValue, "cudaLaunchKernel", "no argument array for the parameters");
  for (size_t i = 0; i < k->paramSizes.size(); ++i) b.putBytes(args[i], k->paramSizes[i]);
  *work = [b] {
    if (int s = gSticky.load(); s != kSuccess) return record(s);  // when replayed
    return sendLaunch(b);
  };
  return kSuccess;
}

// A kernel node's record of its launch (after makeLaunch has checked it).
std::shared_ptr<const KernelLaunchCopy> launchCopy(const void* hostFun, Dim3 grid, Dim3 block,
                                                   void** args, size_t sharedBytes) {
  const gpusc::cudart::shim::Kernel* k = nullptr;
  if (client().kernel(hostFun, &k) != kSuccess) return nullptr;
  auto c = std::make_shared<KernelLaunchCopy>();
  c->func = const_cast<void*>(hostFun);
  c->grid = {grid.x, grid.y, grid.z};
  c->block = {block.x, block.y, block.z};
  c->sharedBytes = static_cast<unsigned>(sharedBytes);
  for (size_t i = 0; i < k->paramSizes.size(); ++i) {
    const auto* a = static_cast<const uint8_t*>(args[i]);
    c->args.emplace_back(a, a + k->paramSizes[i]);
  }
  for (auto& a : c->args) c->argPointers.push_back(a.data());
  return c;
}

int launch(const void* hostFun, Dim3 grid, Dim3 block, void** args, size_t sharedBytes,
           void* stream, bool cooperative = false) {
  GPUSC_STICKY();
  Replay work;
  if (int e = makeLaunch(hostFun, grid, block, args, sharedBytes, stream, cooperative, &work);
      e != kSuccess)
    return e;
  NodeKind kind = typeKind(kNodeKernel);
  if (capturing(stream)) {
    kind.kernel = launchCopy(hostFun, grid, block, args, sharedBytes);
    if (cooperative) {  // the node's cooperative attribute
      abi::LaunchAttribute a{};
      a.id = abi::kLaunchAttrCooperative;
      a.val.cooperative = 1;
      kind.attributes[a.id] = a;
    }
  }
  return issue(cooperative ? "cudaLaunchCooperativeKernel" : "cudaLaunchKernel", stream,
               std::move(work), std::move(kind));
}

std::string programNameOf(const char* deviceName) { return deviceName ? deviceName : "?"; }

// A fat binary container's header: its own size (u16 at byte 6) and the bytes of the entries
// that follow it (u64 at byte 8). `data` holds at least the 16-byte header.
struct ContainerHeader {
  uint16_t headerBytes = 0;
  uint64_t bodyBytes = 0;
};
ContainerHeader containerHeader(const uint8_t* data) {
  ContainerHeader h;
  std::memcpy(&h.headerBytes, data + 6, 2);
  std::memcpy(&h.bodyBytes, data + 8, 8);
  return h;
}
uint64_t containerBytes(const uint8_t* data) {
  const ContainerHeader h = containerHeader(data);
  return h.headerBytes + h.bodyBytes;
}

}  // namespace

// ===================================================================== registration

GPUSC_API void** __cudaRegisterFatBinary(void* fatCubin) {
  // nvcc's wrapper: magic, version, the container, and with relocatable device code (version
  // 2, nvcc -rdc=true: a container of linked SASS) each file's own container, null-terminated.
  struct Wrapper {
    uint32_t magic, version;
    const uint8_t* data;
    const uint8_t* const* prelinked;
  };
  const auto* w = static_cast<const Wrapper*>(fatCubin);
  Client& c = client();
  if (w == nullptr || w->magic != 0x466243B1u || w->data == nullptr) {
    fail(kErrorInvalidKernelImage, "__cudaRegisterFatBinary", "not nvcc's fat binary wrapper");
    return nullptr;
  }
  wire::Buffer b;
  b.putBytes(w->data, containerBytes(w->data));
  if (w->version == 2 && w->prelinked != nullptr)
    for (const uint8_t* const* f = w->prelinked; *f != nullptr; ++f)
      b.putBytes(*f, containerBytes(*f));
  std::vector<uint8_t> reply;
  if (int e = c.call(wire::Op::RegisterFatBinary, b, &reply); e != kSuccess || reply.size() != 8) {
    record(e);
    return nullptr;
  }
  uint64_t handle = 0;
  std::memcpy(&handle, reply.data(), 8);
  return static_cast<void**>(ptr(handle));
}

GPUSC_API void __cudaRegisterFatBinaryEnd(void**) {}

GPUSC_API void __cudaUnregisterFatBinary(void** handle) {
  if (handle == nullptr) return;
  Client& c = client();
  if (!c.hasConnection()) return;  // nothing to tell
  wire::Buffer b;
  b.put(u64(handle));
  c.call(wire::Op::UnregisterFatBinary, b);
  c.forgetKernels();
}

GPUSC_API void __cudaRegisterFunction(void** handle, const char* hostFun, char*,
                                      const char* deviceName, int, void*, void*, void*, void*,
                                      int*) {
  if (handle == nullptr) return;  // the fat binary was refused (said already)
  if (deviceName != nullptr) {
    std::lock_guard<std::mutex> lock(names().mutex);
    names().functions[hostFun] = deviceName;
  }
  wire::Buffer b;
  b.put(u64(handle)).put(u64(hostFun)).putString(programNameOf(deviceName));
  record(client().call(wire::Op::RegisterFunction, b));
}

GPUSC_API void __cudaRegisterVar(void** handle, char* hostVar, char*, const char* deviceName, int,
                                 size_t size, int constant, int) {
  if (handle == nullptr) return;
  wire::Buffer b;
  b.put(u64(handle)).put(u64(hostVar)).put(uint64_t(size)).put(uint32_t(constant != 0));
  b.putString(programNameOf(deviceName));
  record(client().call(wire::Op::RegisterVar, b));
}

// A __managed__ variable: nvcc's host code reaches it through the pointer at `hostVarPtr`, which
// gets managed memory of its size (mapped at the same address in both processes, as
// cudaMallocManaged's); the module's .global of that name is placed there when it loads.
GPUSC_API void __cudaRegisterManagedVar(void** handle, void** hostVarPtr, char*,
                                        const char* deviceName, int, size_t size, int, int) {
  if (handle == nullptr || hostVarPtr == nullptr) return;
  void* p = nullptr;
  if (mallocShared(&p, size, "__cudaRegisterManagedVar", true) != kSuccess) return;
  wire::Buffer b;
  b.put(u64(handle)).put(u64(p)).put(uint64_t(size)).putString(programNameOf(deviceName));
  if (record(client().call(wire::Op::RegisterManagedVar, b)) == kSuccess) *hostVarPtr = p;
}

// nvcc's host code calls it before the program first touches a __managed__ variable: the module
// loads now, so the variables hold their initial values.
// A failure is said once: nvcc's code calls again at each access while it gets 0.
GPUSC_API char __cudaInitModule(void** handle) {
  if (handle == nullptr) return 0;
  static std::mutex mutex;
  static std::map<void**, char> done;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = done.find(handle); it != done.end()) return it->second;
  wire::Buffer b;
  b.put(u64(handle));
  return done[handle] = record(client().call(wire::Op::InitModule, b)) == kSuccess ? 1 : 0;
}

GPUSC_API unsigned __cudaPushCallConfiguration(Dim3 grid, Dim3 block, size_t sharedMem,
                                               void* stream) {
  tConfigurations.push_back({grid, block, sharedMem, stream});
  return 0;
}

GPUSC_API int __cudaPopCallConfiguration(Dim3* grid, Dim3* block, size_t* sharedMem, void* stream) {
  auto& configs = tConfigurations;
  if (configs.empty())
    return fail(kErrorInvalidConfiguration, "__cudaPopCallConfiguration", "nothing pushed");
  const auto c = configs.back();
  configs.pop_back();
  if (grid) *grid = c.grid;
  if (block) *block = c.block;
  if (sharedMem) *sharedMem = c.sharedBytes;
  if (stream) *static_cast<void**>(stream) = c.stream;
  return kSuccess;
}

// cudaKernel_t: the host stub itself.
GPUSC_API int __cudaGetKernel(void** kernel, const void* hostFun) {
  if (kernel == nullptr) return fail(kErrorInvalidValue, "__cudaGetKernel", "a null result");
  *kernel = const_cast<void*>(hostFun);
  return kSuccess;
}

GPUSC_API int __cudaLaunchKernel(void* kernel, Dim3 grid, Dim3 block, void** args, size_t shared,
                                 void* stream) {
  return launch(kernel, grid, block, args, shared, stream);
}

GPUSC_API int __cudaLaunchKernel_ptsz(void* kernel, Dim3 grid, Dim3 block, void** args,
                                      size_t shared, void* stream) {
  return launch(kernel, grid, block, args, shared, perThread(stream));
}

GPUSC_API int cudaLaunchKernel(const void* func, Dim3 grid, Dim3 block, void** args, size_t shared,
                               void* stream) {
  return launch(func, grid, block, args, shared, stream);
}

GPUSC_API int cudaLaunchKernel_ptsz(const void* func, Dim3 grid, Dim3 block, void** args,
                                    size_t shared, void* stream) {
  return launch(func, grid, block, args, shared, perThread(stream));
}

// Every block resident at once, so the grid may sync (cooperative groups' grid.sync()).
GPUSC_API int cudaLaunchCooperativeKernel(const void* func, Dim3 grid, Dim3 block, void** args,
                                          size_t shared, void* stream) {
  return launch(func, grid, block, args, shared, stream, true);
}

GPUSC_API int cudaLaunchCooperativeKernel_ptsz(const void* func, Dim3 grid, Dim3 block, void** args,
                                               size_t shared, void* stream) {
  return launch(func, grid, block, args, shared, perThread(stream), true);
}

// cudaLaunchConfig_t.
struct LaunchConfig {
  Dim3 grid, block;
  size_t dynamicSmemBytes;
  void* stream;
  const abi::LaunchAttribute* attrs;
  unsigned numAttrs;
};

namespace {

// Why gpusc cannot honour launch attribute `a`, or empty when the launch runs as the attribute
// asks. gpusc runs a stream's kernels one after another, each to completion, so it honours what
// only relaxes or orders that: programmatic dependent launch (a kernel allowed to start before
// the previous one ends may also start after it; griddepcontrol.wait then finds it done, as on
// GPUs before compute capability 9.0), priorities (among kernels that never run at once), memory
// synchronisation domains (which only narrow what fences wait for), cooperative launches (the
// launch says so), and the neutral values of the others (clusters of one block).
std::string unsupportedAttribute(const abi::LaunchAttribute& a) {
  switch (a.id) {
    case abi::kLaunchAttrIgnore:
    case abi::kLaunchAttrProgrammaticStreamSerialization:
    case abi::kLaunchAttrPriority:
    case abi::kLaunchAttrMemSyncDomainMap:
    case abi::kLaunchAttrMemSyncDomain:
      return {};
    case abi::kLaunchAttrCooperative:
      return {};
    case abi::kLaunchAttrClusterDimension:
    case abi::kLaunchAttrPreferredClusterDimension:
      if (a.val.clusterDim[0] <= 1 && a.val.clusterDim[1] <= 1 && a.val.clusterDim[2] <= 1)
        return {};
      return "thread-block clusters are not supported";
    case abi::kLaunchAttrAccessPolicyWindow:  // a cache hint: changes no result
      return {};
    case abi::kLaunchAttrProgrammaticEvent:
    case abi::kLaunchAttrLaunchCompletionEvent:
      return "events triggered by a launch are not supported";
    default:
      return "launch attribute " + std::to_string(a.id) + " is not supported";
  }
}

}  // namespace

GPUSC_API int cudaLaunchKernelExC(const LaunchConfig* config, const void* func, void** args) {
  if (config == nullptr) return fail(kErrorInvalidValue, "cudaLaunchKernelExC", "no configuration");
  if (config->numAttrs != 0 && config->attrs == nullptr)
    return fail(kErrorInvalidValue, "cudaLaunchKernelExC", "attributes counted but not given");
  bool cooperative = false;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (const std::string why = unsupportedAttribute(config->attrs[i]); !why.empty())
      return fail(kErrorNotSupported, "cudaLaunchKernelExC", why);
    if (config->attrs[i].id == abi::kLaunchAttrCooperative)
      cooperative = config->attrs[i].val.cooperative != 0;
  }
  return launch(func, config->grid, config->block, args, config->dynamicSmemBytes, config->stream,
                cooperative);
}

GPUSC_API int cudaLaunchKernelExC_ptsz(const LaunchConfig* config, const void* func, void** args) {
  if (config == nullptr) return cudaLaunchKernelExC(config, func, args);
  LaunchConfig onThisThread = *config;
  onThisThread.stream = perThread(config->stream);
  return cudaLaunchKernelExC(&onThisThread, func, args);
}

// ===================================================================== errors

GPUSC_API int cudaGetLastError() {
  const int sticky = gSticky.load();
  const int e = sticky ? sticky : tLastError;
  tLastError = kSuccess;
  return e;
}

GPUSC_API int cudaPeekAtLastError() {
  const int sticky = gSticky.load();
  return sticky ? sticky : tLastError;
}

GPUSC_API const char* cudaGetErrorName(int error) { return errorName(error); }
GPUSC_API const char* cudaGetErrorString(int error) { return errorString(error); }

// ===================================================================== device

GPUSC_API int cudaGetDeviceCount(int* count) {
  if (count == nullptr) return fail(kErrorInvalidValue, "cudaGetDeviceCount", "a null result");
  *count = client().connected() ? 1 : 0;
  return client().connected() ? kSuccess : record(kErrorNoDevice);
}

GPUSC_API int cudaGetDevice(int* device) {
  if (device == nullptr) return fail(kErrorInvalidValue, "cudaGetDevice", "a null result");
  *device = 0;
  return kSuccess;
}

GPUSC_API int cudaSetDevice(int device) {
  if (int e = checkDevice(device, "cudaSetDevice"); e != kSuccess) return e;
  return client().connected() ? kSuccess : record(kErrorNoDevice);
}

GPUSC_API int cudaInitDevice(int device, unsigned, unsigned) { return cudaSetDevice(device); }
// cudaSetDeviceFlags's flags: a scheduling choice (auto 0, spin 1, yield 2, blocking sync 4;
// how the host waits, which a simulation does not change) and cudaDeviceMapHost (8),
// cudaDeviceLmemResizeToMax (0x10), cudaDeviceSyncMemops (0x80). Kept to be read back, with
// cudaDeviceMapHost set: mapped host memory is always available (cudaHostAlloc).
struct DeviceFlags {
  std::mutex mutex;
  unsigned flags = 0;
};
DeviceFlags& deviceFlags() {
  static DeviceFlags f;
  return f;
}
constexpr unsigned kDeviceMapHost = 0x08;
GPUSC_API int cudaSetDeviceFlags(unsigned flags) {
  const unsigned schedule = flags & 0x07;
  if ((flags & ~0x9Fu) != 0 || schedule == 3 || schedule > 4)
    return fail(kErrorInvalidValue, "cudaSetDeviceFlags",
                "flags " + std::to_string(flags) +
                    ": one scheduling flag (cudaDeviceScheduleAuto, Spin, Yield or BlockingSync) "
                    "with cudaDeviceMapHost, cudaDeviceLmemResizeToMax or cudaDeviceSyncMemops");
  std::lock_guard<std::mutex> lock(deviceFlags().mutex);
  deviceFlags().flags = flags;
  return kSuccess;
}
GPUSC_API int cudaGetDeviceFlags(unsigned* flags) {
  if (flags == nullptr) return fail(kErrorInvalidValue, "cudaGetDeviceFlags", "a null result");
  std::lock_guard<std::mutex> lock(deviceFlags().mutex);
  *flags = deviceFlags().flags | kDeviceMapHost;
  return kSuccess;
}
GPUSC_API int cudaChooseDevice(int* device, const void*) {
  if (device) *device = 0;
  return kSuccess;
}

GPUSC_API int cudaDriverGetVersion(int* version) {
  if (version == nullptr) return fail(kErrorInvalidValue, "cudaDriverGetVersion", "a null result");
  *version = 13000;
  return kSuccess;
}

// Driver API entry points: gpusc's runtime has none (the driver API is not simulated), so each
// symbol is not found, which CUDA answers with success, a null function and
// cudaDriverEntryPointSymbolNotFound; programs that can do without it go on. A version above the
// driver's (13000) is cudaErrorInvalidValue, as CUDA says.
namespace {
int driverEntryPoint(const char* symbol, void** fn, int version, unsigned long long flags,
                     int* status, const char* function) {
  if (symbol == nullptr || fn == nullptr)
    return fail(kErrorInvalidValue, function, "a null symbol or result");
  if (flags > 2)
    return fail(
        kErrorInvalidValue, function,
        "flags " + std::to_string(flags) +
            ": cudaEnableDefault, cudaEnableLegacyStream or cudaEnablePerThreadDefaultStream");
  if (version > 13000)
    return fail(kErrorInvalidValue, function,
                "CUDA version " + std::to_string(version) + " is above the driver's (13000)");
  *fn = nullptr;
  if (status != nullptr) *status = 1;  // cudaDriverEntryPointSymbolNotFound
  std::fprintf(stderr,
               "gpusc: %s(%s): gpusc simulates no driver API functions (symbol not found)\n",
               function, symbol);
  return kSuccess;
}
}  // namespace
GPUSC_API int cudaGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long flags,
                                      int* status) {
  return driverEntryPoint(symbol, fn, 13000, flags, status, "cudaGetDriverEntryPoint");
}
GPUSC_API int cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned version,
                                               unsigned long long flags, int* status) {
  return driverEntryPoint(symbol, fn, int(version), flags, status,
                          "cudaGetDriverEntryPointByVersion");
}
GPUSC_API int cudaGetDriverEntryPoint_ptsz(const char* symbol, void** fn, unsigned long long flags,
                                           int* status) {
  return cudaGetDriverEntryPoint(symbol, fn, flags, status);
}
GPUSC_API int cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** fn, unsigned version,
                                                    unsigned long long flags, int* status) {
  return cudaGetDriverEntryPointByVersion(symbol, fn, version, flags, status);
}

GPUSC_API int cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return fail(kErrorInvalidValue, "cudaRuntimeGetVersion", "a null result");
  *version = 13000;
  return kSuccess;
}

namespace {

// The largest CUDA arrays, [0] for textures and [1] for arrays with cudaArraySurfaceLoadStore:
// compute capability 7.5 and 8.6's (CUDA C++ Programming Guide, "Technical Specifications per
// Compute Capability"), reported by cudaGetDeviceProperties and enforced by cudaMallocArray and
// cudaMalloc3DArray as a GPU enforces them.
struct ArrayLimits {
  size_t width1D, width2D, height2D, extent3D, widthLayered1D, sideLayered2D, layers;
};
constexpr ArrayLimits kArrayLimits[2] = {
    {131072, 131072, 65536, 16384, 32768, 32768, 2048},
    {32768, 131072, 65536, 16384, 32768, 32768, 2048},
};

// The simulated device as cudaDeviceProp describes it (the fields of features gpusc does not
// model, such as peer access, 0).
void describeDevice(const wire::DeviceFacts& f, abi::DeviceProp* prop) {
  std::memset(prop, 0, sizeof *prop);
  std::memcpy(prop->name, f.name, sizeof prop->name);
  prop->totalGlobalMem = f.globalMemoryBytes;
  prop->sharedMemPerBlock = f.sharedMemoryPerBlock;
  prop->regsPerBlock = int(f.registersPerBlock);
  prop->warpSize = int(f.warpSize);
  prop->memPitch = 0x7fffffff;
  prop->maxThreadsPerBlock = int(f.maxThreadsPerBlock);
  prop->maxThreadsDim[0] = 1024, prop->maxThreadsDim[1] = 1024, prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 0x7fffffff, prop->maxGridSize[1] = 65535, prop->maxGridSize[2] = 65535;
  prop->totalConstMem = 64 * 1024;
  prop->major = int(f.computeCapability / 10);
  prop->minor = int(f.computeCapability % 10);
  prop->textureAlignment = kTextureAlignment;
  prop->texturePitchAlignment = kTexturePitchAlignment;
  prop->multiProcessorCount = int(f.sms);
  prop->canMapHostMemory = 1;
  prop->surfaceAlignment = 512;
  prop->memoryBusWidth = int(f.memoryBusBits);
  prop->l2CacheSize = int(f.l2Bytes);
  prop->maxThreadsPerMultiProcessor = int(f.maxThreadsPerSm);
  prop->globalL1CacheSupported = 1;
  prop->localL1CacheSupported = 1;
  prop->sharedMemPerMultiprocessor = f.sharedMemoryPerSm;
  prop->regsPerMultiprocessor = int(f.registersPerSm);
  prop->managedMemory = 1;
  prop->unifiedAddressing = 1;
  prop->sharedMemPerBlockOptin = f.sharedMemoryPerBlockOptin;
  prop->reservedSharedMemPerBlock = f.sharedReservedPerBlock;
  prop->maxBlocksPerMultiProcessor = int(f.maxBlocksPerSm);
  prop->hostRegisterSupported = 1;
  prop->cooperativeLaunch = 1;
  prop->memoryPoolsSupported = 1;  // cudaMallocAsync and the cudaMemPool calls
  // Textures and surfaces are modelled (not cubemaps, mipmaps or gather): the limits CUDA arrays
  // are made with (kArrayLimits), so that a program that checks them before it makes a texture
  // finds the feature.
  const ArrayLimits& t = kArrayLimits[0];
  const ArrayLimits& u = kArrayLimits[1];
  prop->maxTexture1D = t.width1D;
  prop->maxTexture2D[0] = t.width2D, prop->maxTexture2D[1] = t.height2D;
  prop->maxTexture2DLinear[0] = 131072, prop->maxTexture2DLinear[1] = 65000;
  prop->maxTexture2DLinear[2] = 2097120;  // bytes of pitch
  prop->maxTexture3D[0] = prop->maxTexture3D[1] = prop->maxTexture3D[2] = t.extent3D;
  prop->maxTexture1DLayered[0] = t.widthLayered1D, prop->maxTexture1DLayered[1] = t.layers;
  prop->maxTexture2DLayered[0] = prop->maxTexture2DLayered[1] = t.sideLayered2D;
  prop->maxTexture2DLayered[2] = t.layers;
  prop->maxSurface1D = u.width1D;
  prop->maxSurface2D[0] = u.width2D, prop->maxSurface2D[1] = u.height2D;
  prop->maxSurface3D[0] = prop->maxSurface3D[1] = prop->maxSurface3D[2] = u.extent3D;
  prop->maxSurface1DLayered[0] = u.widthLayered1D, prop->maxSurface1DLayered[1] = u.layers;
  prop->maxSurface2DLayered[0] = prop->maxSurface2DLayered[1] = u.sideLayered2D;
  prop->maxSurface2DLayered[2] = u.layers;
}

}  // namespace

GPUSC_API int cudaGetDeviceProperties(abi::DeviceProp* prop, int device) {
  if (prop == nullptr) return fail(kErrorInvalidValue, "cudaGetDeviceProperties", "a null result");
  if (int e = checkDevice(device, "cudaGetDeviceProperties"); e != kSuccess) return e;
  Client& c = client();
  if (!c.connected()) return record(kErrorNoDevice);
  describeDevice(c.facts(), prop);
  return kSuccess;
}

GPUSC_API int cudaDeviceGetAttribute(int* value, int attr, int device) {
  if (value == nullptr) return fail(kErrorInvalidValue, "cudaDeviceGetAttribute", "a null result");
  if (int e = checkDevice(device, "cudaDeviceGetAttribute"); e != kSuccess) return e;
  Client& c = client();
  if (!c.connected()) return record(kErrorNoDevice);
  const wire::DeviceFacts& f = c.facts();
  abi::DeviceProp p;
  describeDevice(f, &p);
  // The attributes with a cudaDeviceProp field or a platform value; every other attribute of
  // CUDA 13's cudaDeviceAttr (1 to 147) is a feature gpusc does not model: 0.
  const std::pair<int, int64_t> known[] = {
      {abi::kAttrMaxThreadsPerBlock, p.maxThreadsPerBlock},
      {abi::kAttrMaxBlockDimX, p.maxThreadsDim[0]},
      {abi::kAttrMaxBlockDimY, p.maxThreadsDim[1]},
      {abi::kAttrMaxBlockDimZ, p.maxThreadsDim[2]},
      {abi::kAttrMaxGridDimX, p.maxGridSize[0]},
      {abi::kAttrMaxGridDimY, p.maxGridSize[1]},
      {abi::kAttrMaxGridDimZ, p.maxGridSize[2]},
      {abi::kAttrMaxSharedMemoryPerBlock, p.sharedMemPerBlock},
      {abi::kAttrTotalConstantMemory, p.totalConstMem},
      {abi::kAttrWarpSize, p.warpSize},
      {abi::kAttrMaxPitch, p.memPitch},
      {abi::kAttrMaxRegistersPerBlock, p.regsPerBlock},
      {abi::kAttrClockRate, f.coreKhz},
      {abi::kAttrTextureAlignment, p.textureAlignment},
      {abi::kAttrMultiProcessorCount, p.multiProcessorCount},
      {abi::kAttrCanMapHostMemory, p.canMapHostMemory},
      {abi::kAttrSurfaceAlignment, p.surfaceAlignment},
      {abi::kAttrMemoryClockRate, f.memoryKhz},
      {abi::kAttrGlobalMemoryBusWidth, p.memoryBusWidth},
      {abi::kAttrL2CacheSize, p.l2CacheSize},
      {abi::kAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor},
      {abi::kAttrUnifiedAddressing, p.unifiedAddressing},
      {abi::kAttrTexturePitchAlignment, p.texturePitchAlignment},
      {abi::kAttrComputeCapabilityMajor, p.major},
      {abi::kAttrComputeCapabilityMinor, p.minor},
      {abi::kAttrGlobalL1CacheSupported, p.globalL1CacheSupported},
      {abi::kAttrLocalL1CacheSupported, p.localL1CacheSupported},
      {abi::kAttrMaxSharedMemoryPerMultiprocessor, p.sharedMemPerMultiprocessor},
      {abi::kAttrMaxRegistersPerMultiprocessor, p.regsPerMultiprocessor},
      {abi::kAttrManagedMemory, p.managedMemory},
      {abi::kAttrMaxSharedMemoryPerBlockOptin, p.sharedMemPerBlockOptin},
      {abi::kAttrHostRegisterSupported, p.hostRegisterSupported},
      {abi::kAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor},
      {abi::kAttrReservedSharedMemoryPerBlock, int64_t(p.reservedSharedMemPerBlock)},
      {abi::kAttrCooperativeLaunch, p.cooperativeLaunch},
      {abi::kAttrSingleToDoublePrecisionPerfRatio, f.singleToDoubleRatio},
      {abi::kAttrMemoryPoolsSupported, p.memoryPoolsSupported},
      {abi::kAttrMaxTexture1DWidth, p.maxTexture1D},
      {abi::kAttrMaxTexture2DWidth, p.maxTexture2D[0]},
      {abi::kAttrMaxTexture2DHeight, p.maxTexture2D[1]},
      {abi::kAttrMaxTexture3DWidth, p.maxTexture3D[0]},
      {abi::kAttrMaxTexture3DHeight, p.maxTexture3D[1]},
      {abi::kAttrMaxTexture3DDepth, p.maxTexture3D[2]},
      {abi::kAttrMaxTexture2DLayeredWidth, p.maxTexture2DLayered[0]},
      {abi::kAttrMaxTexture2DLayeredHeight, p.maxTexture2DLayered[1]},
      {abi::kAttrMaxTexture2DLayeredLayers, p.maxTexture2DLayered[2]},
      {abi::kAttrMaxTexture1DLayeredWidth, p.maxTexture1DLayered[0]},
      {abi::kAttrMaxTexture1DLayeredLayers, p.maxTexture1DLayered[1]},
      {abi::kAttrMaxSurface1DWidth, p.maxSurface1D},
      {abi::kAttrMaxSurface2DWidth, p.maxSurface2D[0]},
      {abi::kAttrMaxSurface2DHeight, p.maxSurface2D[1]},
      {abi::kAttrMaxSurface3DWidth, p.maxSurface3D[0]},
      {abi::kAttrMaxSurface3DHeight, p.maxSurface3D[1]},
      {abi::kAttrMaxSurface3DDepth, p.maxSurface3D[2]},
      {abi::kAttrMaxSurface1DLayeredWidth, p.maxSurface1DLayered[0]},
      {abi::kAttrMaxSurface1DLayeredLayers, p.maxSurface1DLayered[1]},
      {abi::kAttrMaxSurface2DLayeredWidth, p.maxSurface2DLayered[0]},
      {abi::kAttrMaxSurface2DLayeredHeight, p.maxSurface2DLayered[1]},
      {abi::kAttrMaxSurface2DLayeredLayers, p.maxSurface2DLayered[2]},
      {abi::kAttrMaxTexture1DLinearWidth, 1 << 28},  // no cudaDeviceProp field since CUDA 12
      {abi::kAttrMaxTexture2DLinearWidth, p.maxTexture2DLinear[0]},
      {abi::kAttrMaxTexture2DLinearHeight, p.maxTexture2DLinear[1]},
      {abi::kAttrMaxTexture2DLinearPitch, p.maxTexture2DLinear[2]},
      {abi::kAttrMemSyncDomainCount, 1},  // one domain: a launch's domain attributes name it
  };
  for (const auto& [a, v] : known)
    if (a == attr) {
      *value = int(v);
      return kSuccess;
    }
  if (attr < 1 || attr > abi::kAttrLast)
    return fail(kErrorInvalidValue, "cudaDeviceGetAttribute",
                "attribute " + std::to_string(attr) + " is not a cudaDeviceAttr");
  *value = 0;
  return kSuccess;
}

GPUSC_API int cudaDeviceSynchronize() {
  GPUSC_STICKY();
  return kSuccess;  // every call completes before it returns
}
// The L1/shared preference: no effect (a launch's carve-out follows its occupancy), read back as
// set; a value that is not a cudaFuncCache (0 to 3) is refused.
namespace {
std::atomic<int>& cacheConfig() {
  static std::atomic<int> c{0};
  return c;
}
int checkCacheConfig(int config, const char* function) {
  if (config < 0 || config > 3)
    return fail(kErrorInvalidValue, function,
                "config " + std::to_string(config) + " is not a cudaFuncCache (0 to 3)");
  return kSuccess;
}
}  // namespace
GPUSC_API int cudaDeviceSetCacheConfig(int config) {
  if (int e = checkCacheConfig(config, "cudaDeviceSetCacheConfig"); e != kSuccess) return e;
  cacheConfig() = config;
  return kSuccess;
}
GPUSC_API int cudaDeviceGetCacheConfig(int* config) {
  if (config == nullptr)
    return fail(kErrorInvalidValue, "cudaDeviceGetCacheConfig", "a null result");
  *config = cacheConfig();
  return kSuccess;
}
// cudaDeviceSetLimit's values: the printf FIFO is not modelled (printf's output has no size limit
// here) but reads back as set; the stack (alloca, recursion) and the malloc heap are the
// device's (1 KiB, and memory.device_heap_bytes until set).
struct Limits {
  std::mutex mutex;
  size_t stack = 1024, printfFifo = 1 << 20, heap = 0;  // heap 0: the device's
  size_t l2FetchGranularity = 0, persistingL2 = 0;      // hints: read back as set, no effect
  // Launches from device code: the pending count the device allows (the simulator's), and the
  // synchronisation depth, which reads back as set (CDP2 has no synchronisation in device code).
  size_t pendingLaunches = 2048, syncDepth = 2;
};

Limits& limits() {
  static Limits l;
  return l;
}

GPUSC_API int cudaDeviceSetLimit(int limit, size_t value) {
  GPUSC_STICKY();
  constexpr int kStack = 0, kPrintfFifo = 1, kHeap = 2;
  Limits& l = limits();
  std::lock_guard<std::mutex> lock(l.mutex);
  switch (limit) {
    case kStack: {
      wire::Buffer b;
      b.put(uint64_t(value));
      if (int e = client().call(wire::Op::SetStackSize, b); e != kSuccess) return record(e);
      l.stack = value;
      return kSuccess;
    }
    case kPrintfFifo:
      l.printfFifo = value;
      return kSuccess;
    case kHeap: {
      wire::Buffer b;
      b.put(uint64_t(value));
      if (int e = client().call(wire::Op::SetHeapSize, b); e != kSuccess) return record(e);
      l.heap = value;
      return kSuccess;
    }
    case 5:  // cudaLimitMaxL2FetchGranularity: 0 to 128 bytes, a hint
      if (value > 128)
        return fail(kErrorInvalidValue, "cudaDeviceSetLimit",
                    "cudaLimitMaxL2FetchGranularity is 0 to 128 bytes");
      l.l2FetchGranularity = value;
      return kSuccess;
    case 6:  // cudaLimitPersistingL2CacheSize: L2 persistence is not modelled; read back as set
      l.persistingL2 = value;
      return kSuccess;
    case 3:  // cudaLimitDevRuntimeSyncDepth
      l.syncDepth = value;
      return kSuccess;
    case 4: {  // cudaLimitDevRuntimePendingLaunchCount
      if (value == 0)
        return fail(kErrorInvalidValue, "cudaDeviceSetLimit",
                    "cudaLimitDevRuntimePendingLaunchCount must be at least 1");
      wire::Buffer b;
      b.put(uint64_t(value));
      if (int e = client().call(wire::Op::SetPendingLaunches, b); e != kSuccess) return record(e);
      l.pendingLaunches = value;
      return kSuccess;
    }
    default:
      return fail(kErrorUnsupportedLimit, "cudaDeviceSetLimit",
                  "limit " + std::to_string(limit) + " is not one of CUDA's (0 to 6)");
  }
}
GPUSC_API int cudaDeviceGetLimit(size_t* value, int limit) {
  if (value == nullptr) return fail(kErrorInvalidValue, "cudaDeviceGetLimit", "a null result");
  Limits& l = limits();
  std::lock_guard<std::mutex> lock(l.mutex);
  switch (limit) {
    case 0:
      *value = l.stack;
      break;
    case 1:
      *value = l.printfFifo;
      break;
    case 2:
      *value = l.heap ? l.heap : client().facts().heapBytes;
      break;
    case 3:
      *value = l.syncDepth;
      break;
    case 4:
      *value = l.pendingLaunches;
      break;
    case 5:
      *value = l.l2FetchGranularity;
      break;
    case 6:
      *value = l.persistingL2;
      break;
    default:
      return fail(kErrorUnsupportedLimit, "cudaDeviceGetLimit",
                  "limit " + std::to_string(limit) + " is not one of CUDA's (0 to 6)");
  }
  return kSuccess;
}
GPUSC_API int cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = 0;
  return kSuccess;
}
GPUSC_API int cudaDeviceCanAccessPeer(int* can, int, int) {
  if (can) *can = 0;
  return kSuccess;
}
// Peer attributes: between two devices, and there is one (CUDA answers a device with itself the
// same way).
GPUSC_API int cudaDeviceGetP2PAttribute(int* value, int, int src, int dst) {
  if (value == nullptr)
    return fail(kErrorInvalidValue, "cudaDeviceGetP2PAttribute", "a null result");
  return fail(kErrorInvalidDevice, "cudaDeviceGetP2PAttribute",
              "devices " + std::to_string(src) + " and " + std::to_string(dst) +
                  ": the simulated GPU is the only device (0), and has no peer");
}

// The PCI address, domain:bus:device.function in hex: the device's cudaDeviceProp pciDomainID,
// pciBusID and pciDeviceID (0: the simulated GPU sits on no bus), function 0.
GPUSC_API int cudaDeviceGetPCIBusId(char* id, int len, int device) {
  if (int e = checkDevice(device, "cudaDeviceGetPCIBusId"); e != kSuccess) return e;
  if (id == nullptr || len <= 0)
    return fail(kErrorInvalidValue, "cudaDeviceGetPCIBusId", "a null or empty buffer");
  std::snprintf(id, size_t(len), "%04x:%02x:%02x.0", 0u, 0u, 0u);
  return kSuccess;
}
// The device at a PCI address (domain:bus:device.function, domain:bus:device or
// bus:device.function, in hex): device 0 at 0000:00:00.0.
GPUSC_API int cudaDeviceGetByPCIBusId(int* device, const char* id) {
  const char* fn = "cudaDeviceGetByPCIBusId";
  if (device == nullptr || id == nullptr) return fail(kErrorInvalidValue, fn, "a null argument");
  unsigned domain = 0, bus = 0, dev = 0, func = 0;
  char end = 0;
  const bool full = std::sscanf(id, "%x:%x:%x.%x%c", &domain, &bus, &dev, &func, &end) == 4;
  const bool noFunction = !full && std::sscanf(id, "%x:%x:%x%c", &domain, &bus, &dev, &end) == 3 &&
                          !std::strchr(id, '.');
  const bool noDomain =
      !full && !noFunction && std::sscanf(id, "%x:%x.%x%c", &bus, &dev, &func, &end) == 3;
  if (!full && !noFunction && !noDomain)
    return fail(kErrorInvalidValue, fn,
                std::string("'") + id + "' is not a PCI address (domain:bus:device.function)");
  if (noDomain) domain = 0;
  if (domain != 0 || bus != 0 || dev != 0 || func != 0)
    return fail(kErrorInvalidDevice, fn,
                std::string("no device at ") + id + " (the simulated GPU is at 0000:00:00.0)");
  *device = 0;
  return kSuccess;
}
GPUSC_API int cudaProfilerStart() { return kSuccess; }
GPUSC_API int cudaProfilerStop() { return kSuccess; }

// ===================================================================== functions

GPUSC_API int cudaFuncGetAttributes(abi::FuncAttributes* attr, const void* func) {
  GPUSC_STICKY();
  if (attr == nullptr) return fail(kErrorInvalidValue, "cudaFuncGetAttributes", "a null result");
  const gpusc::cudart::shim::Kernel* k = nullptr;
  if (int e = client().kernel(func, &k); e != kSuccess) return record(e);
  std::memset(attr, 0, sizeof *attr);
  attr->sharedSizeBytes = k->facts.staticSharedBytes;
  attr->constSizeBytes = k->facts.constBytes;
  attr->localSizeBytes = k->facts.localBytesPerThread;
  attr->maxThreadsPerBlock = int(k->facts.maxThreadsPerBlock);
  attr->numRegs = int(k->facts.regsPerThread);
  attr->ptxVersion = int(k->facts.ptxVersion);
  attr->binaryVersion = int(client().facts().computeCapability);
  attr->maxDynamicSharedSizeBytes = int(maxDynamicShared(*k));
  attr->preferredShmemCarveout = k->preferredCarveout;
  return kSuccess;
}

GPUSC_API int cudaFuncSetAttribute(const void* func, int attribute, int value) {
  GPUSC_STICKY();
  const gpusc::cudart::shim::Kernel* k = nullptr;
  if (int e = client().kernel(func, &k); e != kSuccess) return record(e);
  // What a GPU refuses at once; launches check the shared memory they ask for themselves.
  constexpr int kMaxDynamicSharedMemorySize = 8, kPreferredSharedMemoryCarveout = 9;
  const uint64_t optin = client().facts().sharedMemoryPerBlockOptin;
  const uint64_t room = optin - std::min<uint64_t>(optin, k->facts.staticSharedBytes);
  if (attribute == kMaxDynamicSharedMemorySize && (value < 0 || uint64_t(value) > room))
    return fail(kErrorInvalidValue, "cudaFuncSetAttribute",
                std::to_string(value) +
                    " bytes of dynamic shared memory: a block of this kernel may have " +
                    std::to_string(room) + " (" + std::to_string(optin) + " per block less its " +
                    std::to_string(k->facts.staticSharedBytes) + " static bytes)");
  if (attribute == kPreferredSharedMemoryCarveout && (value < -1 || value > 100))
    return fail(
        kErrorInvalidValue, "cudaFuncSetAttribute",
        "a carve-out of " + std::to_string(value) + " %: it is -1 (no preference) or 0 to 100");
  // The cluster attributes (cudaFuncAttributeClusterDimMustBeSet 10 to
  // ClusterSchedulingPolicyPreference 15): thread block clusters are not modelled, so only their
  // defaults (no cluster; non-portable sizes allowed or not) are taken.
  constexpr int kNonPortableClusterSizeAllowed = 14, kAttributeMax = 16;
  if (attribute < kMaxDynamicSharedMemorySize || attribute >= kAttributeMax)
    return fail(kErrorInvalidValue, "cudaFuncSetAttribute",
                "attribute " + std::to_string(attribute) +
                    " is not one cudaFuncSetAttribute sets (8 to 15)");
  if (attribute > kPreferredSharedMemoryCarveout) {
    if (value == 0 || (attribute == kNonPortableClusterSizeAllowed && value == 1)) return kSuccess;
    return fail(kErrorNotSupported, "cudaFuncSetAttribute",
                "attribute " + std::to_string(attribute) + " = " + std::to_string(value) +
                    ": thread block clusters are not modelled");
  }
  return record(client().setKernel(func, [&](gpusc::cudart::shim::Kernel& kk) {
    (attribute == kMaxDynamicSharedMemorySize ? kk.maxDynamicSharedBytes : kk.preferredCarveout) =
        value;
  }));
}

GPUSC_API int cudaFuncSetCacheConfig(const void*, int config) {
  return checkCacheConfig(config, "cudaFuncSetCacheConfig");
}

// The shared memory's bank width (cudaSharedMemConfig, deprecated): the banks of every platform
// gpusc has are four bytes wide (sm.shared_memory_banks of them) and cannot be set otherwise, as
// on every GPU after Kepler; a setting is checked and accepted and changes nothing, as there.
namespace {
int checkSharedMemConfig(int config, const char* function) {
  if (config < 0 || config > 2)
    return fail(kErrorInvalidValue, function,
                "config " + std::to_string(config) + " is not a cudaSharedMemConfig (0 to 2)");
  return kSuccess;
}
}  // namespace
GPUSC_API int cudaDeviceSetSharedMemConfig(int config) {
  return checkSharedMemConfig(config, "cudaDeviceSetSharedMemConfig");
}
GPUSC_API int cudaDeviceGetSharedMemConfig(int* config) {
  if (config == nullptr)
    return fail(kErrorInvalidValue, "cudaDeviceGetSharedMemConfig", "a null result");
  *config = 1;  // cudaSharedMemBankSizeFourByte
  return kSuccess;
}
GPUSC_API int cudaFuncSetSharedMemConfig(const void* func, int config) {
  if (func == nullptr)
    return fail(kErrorInvalidDeviceFunction, "cudaFuncSetSharedMemConfig", "a null function");
  return checkSharedMemConfig(config, "cudaFuncSetSharedMemConfig");
}

GPUSC_API int cudaFuncGetName(const char** name, const void* func) {
  GPUSC_STICKY();
  if (name == nullptr) return fail(kErrorInvalidValue, "cudaFuncGetName", "a null result");
  const gpusc::cudart::shim::Kernel* k = nullptr;
  if (int e = client().kernel(func, &k); e != kSuccess) return record(e);
  std::lock_guard<std::mutex> lock(names().mutex);
  auto it = names().functions.find(func);
  if (it == names().functions.end())
    return fail(kErrorInvalidDeviceFunction, "cudaFuncGetName", "a kernel with no name");
  *name = it->second;
  return kSuccess;
}

GPUSC_API int cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* func,
                                                                     int blockSize,
                                                                     size_t dynamicShared,
                                                                     unsigned) {
  GPUSC_STICKY();
  if (blocks == nullptr || blockSize <= 0)
    return fail(kErrorInvalidValue, "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                "a null result or a block of no threads");
  wire::Buffer b;
  b.put(u64(func)).put(uint32_t(blockSize)).put(uint64_t(dynamicShared));
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::Occupancy, b, &reply); e != kSuccess) return record(e);
  uint32_t n = 0;
  std::memcpy(&n, reply.data(), std::min<size_t>(4, reply.size()));
  *blocks = int(n);
  return kSuccess;
}

GPUSC_API int cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func,
                                                            int blockSize, size_t dynamicShared) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, func, blockSize,
                                                                dynamicShared, 0);
}

// The most dynamic shared memory a block may ask for with `numBlocks` blocks of `blockSize`
// threads still resident on one SM: the occupancy calculator's answer falls as the shared memory
// grows, so the largest size giving at least `numBlocks` is found by halving the interval, up to
// what a launch of the kernel may ask for (cudaFuncAttributeMaxDynamicSharedMemorySize). 0 when
// even none leaves room for `numBlocks`.
GPUSC_API int cudaOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, const void* func,
                                                        int numBlocks, int blockSize) {
  GPUSC_STICKY();
  if (bytes == nullptr || numBlocks <= 0 || blockSize <= 0)
    return fail(kErrorInvalidValue, "cudaOccupancyAvailableDynamicSMemPerBlock",
                "a null result, no blocks or a block of no threads");
  const gpusc::cudart::shim::Kernel* k = nullptr;
  if (int e = client().kernel(func, &k); e != kSuccess) return record(e);
  const auto fits = [&](uint64_t shared, bool* ok) {
    int blocks = 0;
    const int e =
        cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, func, blockSize, shared, 0);
    *ok = e == kSuccess && blocks >= numBlocks;
    return e;
  };
  bool ok = false;
  if (int e = fits(0, &ok); e != kSuccess) return e;
  // As CUDA's occupancy calculator: blocks an SM cannot hold even without dynamic shared memory
  // are invalid input.
  if (!ok)
    return fail(kErrorInvalidValue, "cudaOccupancyAvailableDynamicSMemPerBlock",
                std::to_string(numBlocks) + " blocks of " + std::to_string(blockSize) +
                    " threads do not fit on an SM even without dynamic shared memory");
  uint64_t lo = 0, hi = maxDynamicShared(*k);  // lo fits; the answer is in [lo, hi]
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (int e = fits(mid, &ok); e != kSuccess) return e;
    if (ok)
      lo = mid;
    else
      hi = mid - 1;
  }
  *bytes = size_t(lo);
  return kSuccess;
}

// ===================================================================== libraries

// Code the program loads itself (cudaLibraryLoadData): PTX from NVRTC or nvcc -ptx, or a fat
// binary (nvcc -fatbin). Its kernels are launched by their cudaKernel_t, which is the address of
// the name it was asked for by: unique for the process's life (an unloaded library's names stay,
// so a handle is never reused), and the name cudaFuncGetName gives.
namespace {

struct Library {
  uint64_t handle = 0;
  std::vector<std::string> kernels;                           // every kernel, in the PTX's order
  std::map<std::string, std::unique_ptr<std::string>> asked;  // cudaKernel_t of each asked for
};

struct Libraries {
  std::mutex mutex;
  std::map<const void*, std::unique_ptr<Library>> loaded;  // by cudaLibrary_t
  std::vector<std::unique_ptr<std::string>> unloaded;      // their kernels' handles
};

Libraries& libraries() {
  static Libraries l;
  return l;
}

// The library `lib` names, with the libraries' mutex held; null (and `function`'s error) when it
// names none.
Library* findLibrary(const void* lib, const char* function, int* error) {
  auto it = libraries().loaded.find(lib);
  if (it != libraries().loaded.end()) return it->second.get();
  *error = fail(kErrorInvalidResourceHandle, function, "not a loaded library");
  return nullptr;
}

// The kernel `name` of `l`, registered with the simulator on first use; libraries' mutex held.
int libraryKernel(Library& l, const std::string& name, void** kernel) {
  if (auto it = l.asked.find(name); it != l.asked.end()) {
    *kernel = it->second.get();
    return kSuccess;
  }
  auto handle = std::make_unique<std::string>(name);
  wire::Buffer b;
  b.put(l.handle).put(u64(handle.get())).putString(name);
  if (int e = client().call(wire::Op::LibraryKernel, b); e != kSuccess) return record(e);
  {
    std::lock_guard<std::mutex> lock(names().mutex);
    names().functions[handle.get()] = handle->c_str();
  }
  *kernel = handle.get();
  l.asked[name] = std::move(handle);
  return kSuccess;
}

// The JIT options' error log (cudaJitErrorLogBuffer, cudaJitErrorLogBufferSizeBytes): the
// message of a failed load, as a GPU's JIT compiler writes its own there.
void writeJitLog(const std::string& message, const int* options, void** values, unsigned count) {
  constexpr int kErrorLogBuffer = 5, kErrorLogBufferSizeBytes = 6;
  if (options == nullptr || values == nullptr) return;
  char* buffer = nullptr;
  size_t room = 0;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == kErrorLogBuffer) buffer = static_cast<char*>(values[i]);
    if (options[i] == kErrorLogBufferSizeBytes) room = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (buffer == nullptr || room == 0) return;
  const size_t n = std::min(room - 1, message.size());
  std::memcpy(buffer, message.data(), n);
  buffer[n] = '\0';
  for (unsigned i = 0; i < count; ++i)
    if (options[i] == kErrorLogBufferSizeBytes) values[i] = reinterpret_cast<void*>(uintptr_t(n));
}

int loadLibrary(void** library, const uint8_t* code, size_t bytes, const char* function,
                const int* jitOptions, void** jitValues, unsigned jitCount) {
  GPUSC_STICKY();
  if (library == nullptr || code == nullptr || bytes == 0)
    return fail(kErrorInvalidValue, function, "a null library or code");
  constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
  // The first four bytes, when there are four before a null (PTX is text: it may be shorter).
  const bool four = bytes >= 4 && strnlen(reinterpret_cast<const char*>(code), 4) == 4;
  uint32_t magic = 0;
  if (four) std::memcpy(&magic, code, 4);
  bool ptx = false;
  if (magic == kFatbinMagic) {
    const ContainerHeader h = bytes >= 16 ? containerHeader(code) : ContainerHeader{};
    if (h.headerBytes < 16 || h.bodyBytes > bytes - h.headerBytes)
      return fail(kErrorInvalidKernelImage, function, "a fat binary cut short");
    bytes = h.headerBytes + h.bodyBytes;
  } else if (four && std::memcmp(code,
                                 "\x7f"
                                 "ELF",
                                 4) == 0) {
    return fail(kErrorNoKernelImageForDevice, function,
                "a cubin holds SASS only, and gpusc runs PTX: load the PTX (NVRTC's "
                "nvrtcGetPTX, nvcc -ptx) or a fat binary with PTX in it (nvcc -fatbin "
                "-gencode arch=compute_XX,code=compute_XX)");
  } else {
    ptx = true;  // text up to its terminating null
    bytes = strnlen(reinterpret_cast<const char*>(code), bytes);
    if (bytes == 0) return fail(kErrorInvalidPtx, function, "empty PTX");
  }
  wire::Buffer b;
  b.put(uint32_t(ptx)).putBytes(code, bytes);
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::LoadLibrary, b, &reply); e != kSuccess) {
    writeJitLog(std::string(reply.begin(), reply.end()), jitOptions, jitValues, jitCount);
    return record(e);
  }
  wire::Reader in(reply.data(), reply.size());
  auto l = std::make_unique<Library>();
  l->handle = in.get<uint64_t>();
  const auto count = in.get<uint32_t>();
  for (uint32_t i = 0; i < count && in.ok; ++i) l->kernels.push_back(in.getString());
  if (!in.ok) return record(kErrorUnknown);
  std::lock_guard<std::mutex> lock(libraries().mutex);
  *library = l.get();
  libraries().loaded[l.get()] = std::move(l);
  return kSuccess;
}

}  // namespace

GPUSC_API int cudaLibraryLoadData(void** library, const void* code, int* jitOptions,
                                  void** jitOptionsValues, unsigned numJitOptions, int*, void**,
                                  unsigned) {
  return loadLibrary(library, static_cast<const uint8_t*>(code), SIZE_MAX, "cudaLibraryLoadData",
                     jitOptions, jitOptionsValues, numJitOptions);
}

GPUSC_API int cudaLibraryLoadFromFile(void** library, const char* fileName, int* jitOptions,
                                      void** jitOptionsValues, unsigned numJitOptions, int*, void**,
                                      unsigned) {
  const char* fn = "cudaLibraryLoadFromFile";
  if (fileName == nullptr) return fail(kErrorInvalidValue, fn, "a null file name");
  std::FILE* f = std::fopen(fileName, "rb");
  if (f == nullptr)
    return fail(kErrorFileNotFound, fn, std::string(fileName) + ": " + std::strerror(errno));
  std::vector<uint8_t> code;
  uint8_t chunk[65536];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;)
    code.insert(code.end(), chunk, chunk + n);
  std::fclose(f);
  if (code.empty()) return fail(kErrorInvalidValue, fn, std::string(fileName) + ": empty");
  code.push_back(0);  // PTX ends at its null
  return loadLibrary(library, code.data(), code.size(), fn, jitOptions, jitOptionsValues,
                     numJitOptions);
}

GPUSC_API int cudaLibraryUnload(void* library) {
  std::unique_ptr<Library> l;
  {
    std::lock_guard<std::mutex> lock(libraries().mutex);
    int e = kSuccess;
    if (findLibrary(library, "cudaLibraryUnload", &e) == nullptr) return e;
    auto it = libraries().loaded.find(library);
    l = std::move(it->second);
    libraries().loaded.erase(it);
    for (auto& [name, handle] : l->asked) {
      client().forgetKernel(handle.get());
      {
        std::lock_guard<std::mutex> names_lock(names().mutex);
        names().functions.erase(handle.get());
      }
      libraries().unloaded.push_back(std::move(handle));
    }
  }
  wire::Buffer b;
  b.put(l->handle);
  return record(client().call(wire::Op::UnregisterFatBinary, b));
}

GPUSC_API int cudaLibraryGetKernel(void** kernel, void* library, const char* name) {
  GPUSC_STICKY();
  const char* fn = "cudaLibraryGetKernel";
  if (kernel == nullptr || name == nullptr) return fail(kErrorInvalidValue, fn, "a null argument");
  std::lock_guard<std::mutex> lock(libraries().mutex);
  int e = kSuccess;
  Library* l = findLibrary(library, fn, &e);
  return l == nullptr ? e : libraryKernel(*l, name, kernel);
}

GPUSC_API int cudaLibraryGetKernelCount(unsigned* count, void* library) {
  const char* fn = "cudaLibraryGetKernelCount";
  if (count == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  std::lock_guard<std::mutex> lock(libraries().mutex);
  int e = kSuccess;
  Library* l = findLibrary(library, fn, &e);
  if (l == nullptr) return e;
  *count = unsigned(l->kernels.size());
  return kSuccess;
}

GPUSC_API int cudaLibraryEnumerateKernels(void** kernels, unsigned numKernels, void* library) {
  GPUSC_STICKY();
  const char* fn = "cudaLibraryEnumerateKernels";
  if (kernels == nullptr && numKernels > 0) return fail(kErrorInvalidValue, fn, "a null result");
  std::lock_guard<std::mutex> lock(libraries().mutex);
  int e = kSuccess;
  Library* l = findLibrary(library, fn, &e);
  if (l == nullptr) return e;
  for (size_t i = 0; i < l->kernels.size() && i < numKernels; ++i)
    if (int k = libraryKernel(*l, l->kernels[i], &kernels[i]); k != kSuccess) return k;
  return kSuccess;
}

GPUSC_API int cudaLibraryGetGlobal(void** dptr, size_t* bytes, void* library, const char* name) {
  GPUSC_STICKY();
  const char* fn = "cudaLibraryGetGlobal";
  if ((dptr == nullptr && bytes == nullptr) || name == nullptr)
    return fail(kErrorInvalidValue, fn, "no result asked for, or a null name");
  uint64_t handle = 0;
  {
    std::lock_guard<std::mutex> lock(libraries().mutex);
    int e = kSuccess;
    Library* l = findLibrary(library, fn, &e);
    if (l == nullptr) return e;
    handle = l->handle;
  }
  wire::Buffer b;
  b.put(handle).putString(name);
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::LibraryGlobal, b, &reply); e != kSuccess) return record(e);
  wire::Reader in(reply.data(), reply.size());
  const auto addr = in.get<uint64_t>();
  const auto size = in.get<uint64_t>();
  if (addr == 0 && dptr != nullptr)
    return fail(kErrorInvalidSymbol, fn,
                std::string(name) +
                    " is a __constant__ variable: gpusc keeps constant memory in a bank of its "
                    "own, outside the device's address space (a __device__ variable has an "
                    "address)");
  if (dptr != nullptr) {
    client().addAllocation(addr, size, 0, false);  // device memory the program may copy to
    *dptr = ptr(addr);
  }
  if (bytes != nullptr) *bytes = size;
  return kSuccess;
}

// Managed variables of a loaded library would need memory mapped into the program at load time.
GPUSC_API int cudaLibraryGetManaged(void**, size_t*, void*, const char* name) {
  return fail(kErrorNotSupported, "cudaLibraryGetManaged",
              std::string(name ? name : "?") +
                  ": __managed__ variables of a library the program loads are not supported (a "
                  "__device__ variable's address, cudaLibraryGetGlobal, is)");
}

// The device has no unified function pointers (cudaDevAttrUnifiedFunctionPointers is 0): CUDA's
// documented answer is cudaErrorSymbolNotFound.
GPUSC_API int cudaLibraryGetUnifiedFunction(void**, void*, const char* name) {
  return fail(kErrorSymbolNotFound, "cudaLibraryGetUnifiedFunction",
              std::string(name ? name : "?") + ": the device has no unified function pointers");
}

GPUSC_API int cudaKernelSetAttributeForDevice(void* kernel, int attribute, int value, int device) {
  if (int e = checkDevice(device, "cudaKernelSetAttributeForDevice"); e != kSuccess) return e;
  return cudaFuncSetAttribute(kernel, attribute, value);
}

// A kernel's handles (cudaKernel_t, cudaFunction_t) are its host stub, as the runtime's calls take
// it (cudaLaunchKernel, cudaFuncGetAttributes, cudaFuncSetAttribute).
GPUSC_API int cudaGetKernel(void** kernel, const void* entry) {
  GPUSC_STICKY();
  if (kernel == nullptr) return fail(kErrorInvalidValue, "cudaGetKernel", "a null result");
  const gpusc::cudart::shim::Kernel* k = nullptr;
  if (int e = client().kernel(entry, &k); e != kSuccess) return record(e);
  *kernel = const_cast<void*>(entry);
  return kSuccess;
}

GPUSC_API int cudaGetFuncBySymbol(void** function, const void* symbol) {
  GPUSC_STICKY();
  if (function == nullptr) return fail(kErrorInvalidValue, "cudaGetFuncBySymbol", "a null result");
  const gpusc::cudart::shim::Kernel* k = nullptr;
  if (int e = client().kernel(symbol, &k); e != kSuccess) return record(e);
  *function = const_cast<void*>(symbol);
  return kSuccess;
}

// ===================================================================== memory

GPUSC_API int cudaMalloc(void** p, size_t bytes) {
  GPUSC_STICKY();
  if (p == nullptr) return fail(kErrorInvalidValue, "cudaMalloc", "a null pointer for the result");
  if (bytes == 0) {  // as CUDA: success, and no allocation
    *p = nullptr;
    return kSuccess;
  }
  wire::Buffer b;
  b.put(uint64_t(bytes));
  std::vector<uint8_t> reply;
  Client& c = client();
  if (int e = c.call(wire::Op::Malloc, b, &reply); e != kSuccess) return record(e);
  uint64_t addr = 0;
  std::memcpy(&addr, reply.data(), std::min<size_t>(8, reply.size()));
  c.addAllocation(addr, bytes, 0);
  *p = ptr(addr);
  return kSuccess;
}

// ---- stream-ordered memory pools ----
//
// The device has one memory; a pool is an account of the allocations made from it: cudaMallocAsync
// allocates from the device's current pool (cudaDeviceSetMemPool; the default pool until set),
// cudaMallocFromPoolAsync from the pool it names. Each call completes before it returns, and
// memory freed goes back to the device at once, so a pool holds exactly what it has allocated
// (ReservedMemCurrent equals UsedMemCurrent) and cudaMemPoolTrimTo has nothing to release; the
// release threshold and the reuse policies are kept and read back and change nothing. A pool's
// maxSize bounds what it may hold. Allocations in a stream capture are the graph's (a GPU takes
// them from its graph memory pool), not a pool's.
namespace {

struct MemPool {
  uint64_t maxSize = 0;  // 0: no bound of its own
  uint64_t releaseThreshold = 0;
  int reuse[3] = {1, 1, 1};  // cudaMemPoolReuse*: FollowEventDependencies, Opportunistic, Internal
  uint64_t used = 0, usedHigh = 0, reservedHigh = 0;
  bool destroyed = false;  // destroyed while allocations were outstanding: gone with the last
};

struct MemPools {
  std::mutex mutex;
  MemPool defaultPool;
  std::map<MemPool*, std::unique_ptr<MemPool>> created;
  MemPool* current = &defaultPool;
  std::map<const void*, std::pair<MemPool*, uint64_t>> allocations;  // pointer -> pool, bytes
  // The pool a handle names, with `mutex` held; null when it names none (never created, or
  // destroyed), which is `function`'s cudaErrorInvalidValue.
  MemPool* find(void* handle, const char* function) {
    auto* pool = static_cast<MemPool*>(handle);
    if (pool == &defaultPool) return pool;
    auto it = created.find(pool);
    if (it != created.end() && !it->second->destroyed) return pool;
    fail(kErrorInvalidValue, function, "not a memory pool (or one destroyed)");
    return nullptr;
  }
};
MemPools& memPools() {
  static MemPools pools;
  return pools;
}

// That `handle` names a pool (`function`'s error if not).
int checkPool(void* handle, const char* function) {
  MemPools& m = memPools();
  std::lock_guard<std::mutex> lock(m.mutex);
  return m.find(handle, function) != nullptr ? kSuccess : kErrorInvalidValue;
}

// The pool memory at `p` came from gives it back (after it was freed).
void releasePoolAllocation(const void* p) {
  MemPools& m = memPools();
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.allocations.find(p);
  if (it == m.allocations.end()) return;
  MemPool* pool = it->second.first;
  pool->used -= it->second.second;
  m.allocations.erase(it);
  if (pool->destroyed && pool->used == 0) m.created.erase(pool);
}

// cudaMallocAsync and cudaMallocFromPoolAsync: `handle` null is the device's current pool.
int mallocFromPool(void** p, size_t bytes, void* handle, void* stream, const char* function) {
  if (p == nullptr) return fail(kErrorInvalidValue, function, "a null pointer for the result");
  if (auto seq = capturing(stream)) {  // the graph's memory, and a memory allocation node
    const int e = cudaMalloc(p, bytes);
    if (e != kSuccess) return e;
    std::lock_guard<std::mutex> lock(captures().mutex);
    seq->allocated.push_back(*p);
    seq->memory->hold(*p, bytes);
    seq->push(
        stream, [] { return int(kSuccess); }, allocKind(*p, bytes));
    return kSuccess;
  }
  MemPools& m = memPools();
  MemPool* pool = nullptr;
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    pool = handle == nullptr ? m.current : m.find(handle, function);
    if (pool == nullptr) return kErrorInvalidValue;
    if (pool->maxSize != 0 && pool->used + bytes > pool->maxSize)
      return fail(kErrorMemoryAllocation, function,
                  std::to_string(bytes) + " bytes more than the pool's maxSize of " +
                      std::to_string(pool->maxSize) + " allows (" + std::to_string(pool->used) +
                      " allocated from it)");
  }
  const int e = cudaMalloc(p, bytes);
  if (e != kSuccess || *p == nullptr) return e;
  std::lock_guard<std::mutex> lock(m.mutex);
  pool->used += bytes;
  pool->usedHigh = std::max(pool->usedHigh, pool->used);
  pool->reservedHigh = std::max(pool->reservedHigh, pool->used);
  m.allocations[*p] = {pool, bytes};
  return kSuccess;
}

// A memory location gpusc's pools can be at: device 0.
int checkPoolLocation(const abi::MemLocation* location, const char* function) {
  constexpr int kLocationDevice = 1;
  if (location == nullptr) return fail(kErrorInvalidValue, function, "a null location");
  if (location->type != kLocationDevice)
    return fail(kErrorNotSupported, function,
                "location type " + std::to_string(location->type) +
                    ": gpusc's memory pools are the device's (cudaMemLocationTypeDevice, 1)");
  return checkDevice(location->id, function);
}
constexpr int kAllocationPinned = 1;  // cudaMemAllocationTypePinned
// A location and allocation type of CUDA 13's pool calls: pinned memory of device 0.
int checkPoolKind(const abi::MemLocation* location, int type, const char* function) {
  if (int e = checkPoolLocation(location, function); e != kSuccess) return e;
  if (type != kAllocationPinned)
    return fail(kErrorNotSupported, function,
                "allocation type " + std::to_string(type) +
                    ": gpusc's pools are pinned device memory (cudaMemAllocationTypePinned)");
  return kSuccess;
}

}  // namespace

GPUSC_API int cudaMallocAsync(void** p, size_t bytes, void* stream) {
  GPUSC_STICKY();
  return mallocFromPool(p, bytes, nullptr, stream, "cudaMallocAsync");
}
GPUSC_API int cudaMallocAsync_ptsz(void** p, size_t bytes, void* stream) {
  return cudaMallocAsync(p, bytes, perThread(stream));
}
GPUSC_API int cudaMallocFromPoolAsync(void** p, size_t bytes, void* pool, void* stream) {
  GPUSC_STICKY();
  if (pool == nullptr) return fail(kErrorInvalidValue, "cudaMallocFromPoolAsync", "a null pool");
  return mallocFromPool(p, bytes, pool, stream, "cudaMallocFromPoolAsync");
}
GPUSC_API int cudaMallocFromPoolAsync_ptsz(void** p, size_t bytes, void* pool, void* stream) {
  return cudaMallocFromPoolAsync(p, bytes, pool, perThread(stream));
}

GPUSC_API int cudaDeviceGetDefaultMemPool(void** pool, int device) {
  if (pool == nullptr)
    return fail(kErrorInvalidValue, "cudaDeviceGetDefaultMemPool", "a null result");
  if (int e = checkDevice(device, "cudaDeviceGetDefaultMemPool"); e != kSuccess) return e;
  *pool = &memPools().defaultPool;
  return kSuccess;
}
GPUSC_API int cudaDeviceGetMemPool(void** pool, int device) {
  if (pool == nullptr) return fail(kErrorInvalidValue, "cudaDeviceGetMemPool", "a null result");
  if (int e = checkDevice(device, "cudaDeviceGetMemPool"); e != kSuccess) return e;
  MemPools& m = memPools();
  std::lock_guard<std::mutex> lock(m.mutex);
  *pool = m.current;
  return kSuccess;
}
GPUSC_API int cudaDeviceSetMemPool(int device, void* pool) {
  if (int e = checkDevice(device, "cudaDeviceSetMemPool"); e != kSuccess) return e;
  MemPools& m = memPools();
  std::lock_guard<std::mutex> lock(m.mutex);
  MemPool* found = m.find(pool, "cudaDeviceSetMemPool");
  if (found == nullptr) return kErrorInvalidValue;
  m.current = found;
  return kSuccess;
}
// CUDA 13's forms with a location and an allocation type: pinned device memory of device 0.
GPUSC_API int cudaMemGetDefaultMemPool(void** pool, abi::MemLocation* location, int type) {
  if (int e = checkPoolKind(location, type, "cudaMemGetDefaultMemPool"); e != kSuccess) return e;
  return cudaDeviceGetDefaultMemPool(pool, 0);
}
GPUSC_API int cudaMemGetMemPool(void** pool, abi::MemLocation* location, int type) {
  if (int e = checkPoolKind(location, type, "cudaMemGetMemPool"); e != kSuccess) return e;
  return cudaDeviceGetMemPool(pool, 0);
}
GPUSC_API int cudaMemSetMemPool(abi::MemLocation* location, int type, void* pool) {
  if (int e = checkPoolKind(location, type, "cudaMemSetMemPool"); e != kSuccess) return e;
  return cudaDeviceSetMemPool(0, pool);
}

GPUSC_API int cudaMemPoolCreate(void** pool, const abi::MemPoolProps* props) {
  constexpr const char* kFn = "cudaMemPoolCreate";
  if (pool == nullptr || props == nullptr)
    return fail(kErrorInvalidValue, kFn, "a null pool or properties");
  if (props->allocType != kAllocationPinned)
    return fail(kErrorNotSupported, kFn,
                "allocType " + std::to_string(props->allocType) +
                    ": gpusc's pools are pinned device memory (cudaMemAllocationTypePinned, 1)");
  if (int e = checkPoolLocation(&props->location, kFn); e != kSuccess) return e;
  if (props->handleTypes != 0)
    return fail(kErrorNotSupported, kFn,
                "handleTypes " + std::to_string(props->handleTypes) +
                    ": gpusc's pools cannot be shared with other processes "
                    "(cudaDevAttrMemoryPoolSupportedHandleTypes is 0)");
  auto made = std::make_unique<MemPool>();
  made->maxSize = props->maxSize;
  MemPools& m = memPools();
  std::lock_guard<std::mutex> lock(m.mutex);
  MemPool* handle = made.get();
  m.created.emplace(handle, std::move(made));
  *pool = handle;
  return kSuccess;
}
// A pool still holding allocations goes when the last is freed; the device's current pool
// becomes its default one again. The default pool cannot be destroyed.
GPUSC_API int cudaMemPoolDestroy(void* pool) {
  MemPools& m = memPools();
  std::lock_guard<std::mutex> lock(m.mutex);
  MemPool* found = m.find(pool, "cudaMemPoolDestroy");
  if (found == nullptr) return kErrorInvalidValue;
  if (found == &m.defaultPool)
    return fail(kErrorInvalidValue, "cudaMemPoolDestroy", "a device's default pool");
  if (m.current == found) m.current = &m.defaultPool;
  found->destroyed = true;
  if (found->used == 0) m.created.erase(found);
  return kSuccess;
}
GPUSC_API int cudaMemPoolTrimTo(void* pool, size_t /*minBytesToKeep*/) {
  return checkPool(pool, "cudaMemPoolTrimTo");  // nothing is held beyond what is allocated
}

GPUSC_API int cudaMemPoolSetAttribute(void* pool, int attr, void* value) {
  constexpr const char* kFn = "cudaMemPoolSetAttribute";
  if (value == nullptr) return fail(kErrorInvalidValue, kFn, "a null value");
  MemPools& m = memPools();
  std::lock_guard<std::mutex> lock(m.mutex);
  MemPool* p = m.find(pool, kFn);
  if (p == nullptr) return kErrorInvalidValue;
  uint64_t v64 = 0;
  switch (attr) {
    case abi::kPoolReuseFollowEventDependencies:
    case abi::kPoolReuseAllowOpportunistic:
    case abi::kPoolReuseAllowInternalDependencies:
      p->reuse[attr - abi::kPoolReuseFollowEventDependencies] = *static_cast<int*>(value) != 0;
      return kSuccess;
    case abi::kPoolReleaseThreshold:
      std::memcpy(&p->releaseThreshold, value, 8);
      return kSuccess;
    case abi::kPoolReservedMemHigh:
    case abi::kPoolUsedMemHigh:  // only a reset (0) to the current value
      std::memcpy(&v64, value, 8);
      if (v64 != 0)
        return fail(kErrorInvalidValue, kFn,
                    "a high watermark can only be reset, to 0 (got " + std::to_string(v64) + ")");
      (attr == abi::kPoolUsedMemHigh ? p->usedHigh : p->reservedHigh) = p->used;
      return kSuccess;
    case abi::kPoolReservedMemCurrent:
    case abi::kPoolUsedMemCurrent:
      return fail(kErrorInvalidValue, kFn,
                  "attribute " + std::to_string(attr) + " can be read, not set");
    default:
      return fail(kErrorInvalidValue, kFn,
                  "attribute " + std::to_string(attr) + " is not a cudaMemPoolAttr (1 to 8)");
  }
}
GPUSC_API int cudaMemPoolGetAttribute(void* pool, int attr, void* value) {
  constexpr const char* kFn = "cudaMemPoolGetAttribute";
  if (value == nullptr) return fail(kErrorInvalidValue, kFn, "a null result");
  MemPools& m = memPools();
  std::lock_guard<std::mutex> lock(m.mutex);
  MemPool* p = m.find(pool, kFn);
  if (p == nullptr) return kErrorInvalidValue;
  uint64_t v64 = 0;
  switch (attr) {
    case abi::kPoolReuseFollowEventDependencies:
    case abi::kPoolReuseAllowOpportunistic:
    case abi::kPoolReuseAllowInternalDependencies:
      *static_cast<int*>(value) = p->reuse[attr - abi::kPoolReuseFollowEventDependencies];
      return kSuccess;
    case abi::kPoolReleaseThreshold:
      v64 = p->releaseThreshold;
      break;
    case abi::kPoolReservedMemCurrent:
    case abi::kPoolUsedMemCurrent:
      v64 = p->used;
      break;
    case abi::kPoolReservedMemHigh:
      v64 = p->reservedHigh;
      break;
    case abi::kPoolUsedMemHigh:
      v64 = p->usedHigh;
      break;
    default:
      return fail(kErrorInvalidValue, kFn,
                  "attribute " + std::to_string(attr) + " is not a cudaMemPoolAttr (1 to 8)");
  }
  std::memcpy(value, &v64, 8);
  return kSuccess;
}
// The one device reads and writes every pool's memory; that cannot be taken away from it.
GPUSC_API int cudaMemPoolSetAccess(void* pool, const abi::MemAccessDesc* list, size_t count) {
  constexpr const char* kFn = "cudaMemPoolSetAccess";
  constexpr int kReadWrite = 3;
  if (int e = checkPool(pool, kFn); e != kSuccess) return e;
  if (count > 0 && list == nullptr) return fail(kErrorInvalidValue, kFn, "a null list");
  for (size_t i = 0; i < count; ++i) {
    if (int e = checkPoolLocation(&list[i].location, kFn); e != kSuccess) return e;
    if (list[i].flags != kReadWrite)
      return fail(kErrorInvalidValue, kFn,
                  "flags " + std::to_string(list[i].flags) +
                      " for the pool's own device: it always reads and writes its memory "
                      "(cudaMemAccessFlagsProtReadWrite, 3)");
  }
  return kSuccess;
}
GPUSC_API int cudaMemPoolGetAccess(int* flags, void* pool, abi::MemLocation* location) {
  constexpr const char* kFn = "cudaMemPoolGetAccess";
  if (flags == nullptr) return fail(kErrorInvalidValue, kFn, "a null result");
  if (int e = checkPool(pool, kFn); e != kSuccess) return e;
  if (int e = checkPoolLocation(location, kFn); e != kSuccess) return e;
  *flags = 3;  // cudaMemAccessFlagsProtReadWrite
  return kSuccess;
}

GPUSC_API int cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
  if (pitch == nullptr) return fail(kErrorInvalidValue, "cudaMallocPitch", "a null pitch");
  // Rows aligned as the device's textures are (cudaDeviceProp::textureAlignment, 512 bytes).
  *pitch = (width + kTextureAlignment - 1) / kTextureAlignment * kTextureAlignment;
  return cudaMalloc(p, *pitch * height);
}

GPUSC_API int cudaMallocHost(void** p, size_t bytes) {
  return mallocShared(p, bytes, "cudaMallocHost", false);
}
GPUSC_API int cudaHostAlloc(void** p, size_t bytes, unsigned flags) {
  // cudaHostAllocPortable (1), Mapped (2), WriteCombined (4): all one here.
  if ((flags & ~0x07u) != 0)
    return fail(kErrorInvalidValue, "cudaHostAlloc",
                "flags " + std::to_string(flags) +
                    ": cudaHostAllocDefault, Portable, Mapped and WriteCombined are 0 to 7");
  return mallocShared(p, bytes, "cudaHostAlloc", false, flags);
}
// The flags a pinned allocation was made with (cudaMallocHost's: cudaHostAllocDefault).
GPUSC_API int cudaHostGetFlags(unsigned* flags, void* p) {
  GPUSC_STICKY();
  if (flags == nullptr) return fail(kErrorInvalidValue, "cudaHostGetFlags", "a null result");
  if (!client().hostFlags(p, flags))
    return fail(kErrorInvalidValue, "cudaHostGetFlags",
                "not memory cudaHostAlloc or cudaMallocHost allocated");
  return kSuccess;
}
GPUSC_API int cudaMallocManaged(void** p, size_t bytes, unsigned flags) {
  constexpr unsigned kMemAttachGlobal = 1, kMemAttachHost = 2;
  if (flags != kMemAttachGlobal && flags != kMemAttachHost)
    return fail(
        kErrorInvalidValue, "cudaMallocManaged",
        "flags " + std::to_string(flags) + ": cudaMemAttachGlobal (1) or cudaMemAttachHost (2)");
  if (bytes == 0) return fail(kErrorInvalidValue, "cudaMallocManaged", "0 bytes");
  return mallocShared(p, bytes, "cudaMallocManaged", true);
}

// ---- registered host memory ----
//
// cudaHostRegister pins nothing in a simulation: the range is remembered (Client::registerHost),
// so that pointer attributes call it host memory and registering it twice fails, as on a GPU.
// On a system with unified addressing registered memory is mapped, whatever the flags (the
// toolkit's documentation of cudaHostRegister), and kernels reach it through the device pointer
// cudaHostGetDevicePointer gives (cudaDevAttrCanUseHostPointerForRegisteredMem is 0: not through
// the host pointer). The first time the program asks for one, the range's pages are mapped anew
// from shared memory that the simulator maps at the device address (MallocShared), holding the
// bytes they held: the program and its kernels then read and write the same memory, as with
// cudaHostAlloc's mapped memory. cudaHostUnregister maps the pages back as private memory with
// the bytes they hold then. Ranges that share a page share one mapping (the first mapped must
// hold the other's pages). The calling thread's stack may lie in the pages (remapPages), except
// the main thread's, which grows down on demand only below a mapping of its own (onMainStack);
// another thread of the program that writes to those pages while they are mapped anew may lose
// its write.
struct HostMapping {
  uint64_t len = 0;           // bytes of the program's pages
  uint64_t device = 0;        // the shared memory's address: the first page's device address
  std::set<uint64_t> ranges;  // the registered ranges (bases) that use it
};
struct HostMappings {
  std::mutex mutex;
  std::map<uint64_t, HostMapping> byPage;  // first page -> mapping
};
HostMappings& hostMappings() {
  static HostMappings m;
  return m;
}

// Maps the program's pages [from, from + len) anew: from the memory file `fd` after copying their
// bytes to `device` (its mapping here), or back as private memory holding `device`'s bytes. The
// pages may hold this thread's stack (an array on a thread's stack) or the heap (memory from
// malloc), so the work runs on a stack of its own, in fresh pages outside every registered
// range, with everything it reads kept there: nothing but it runs from the copy to the new
// mapping, and nothing it reads changes when the pages do. False when it could not be done.
struct Remap {
  uint64_t from, len, device;
  int fd;  // -1: back to private memory
  bool ok;
  ucontext_t back, run;
};
void remapOnOwnStack(unsigned high, unsigned low) {  // makecontext passes ints
  auto* r = reinterpret_cast<Remap*>((uintptr_t(high) << 32) | low);
  if (r->fd >= 0) {
    std::memcpy(ptr(r->device), ptr(r->from), r->len);
    r->ok = ::mmap(ptr(r->from), r->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd,
                   0) == ptr(r->from);
  } else {
    r->ok = ::mmap(ptr(r->from), r->len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == ptr(r->from);
    if (r->ok) std::memcpy(ptr(r->from), ptr(r->device), r->len);
  }
}
bool remapPages(uint64_t from, uint64_t len, uint64_t device, int fd) {
  constexpr size_t kStackBytes = 256 * 1024;
  void* mem =
      ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  auto* r = new (mem) Remap{from, len, device, fd, false, {}, {}};
  if (::getcontext(&r->run) == 0) {
    r->run.uc_stack.ss_sp = static_cast<uint8_t*>(mem) + sizeof(Remap);
    r->run.uc_stack.ss_size = kStackBytes - sizeof(Remap);
    r->run.uc_link = &r->back;
    const auto bits = uint64_t(reinterpret_cast<uintptr_t>(r));
    ::makecontext(&r->run, reinterpret_cast<void (*)()>(&remapOnOwnStack), 2, unsigned(bits >> 32),
                  unsigned(bits & 0xffffffffu));
    if (::swapcontext(&r->back, &r->run) != 0) r->ok = false;
  }
  const bool ok = r->ok;
  ::munmap(mem, kStackBytes);
  return ok;
}

// Whether [from, to) touches the main thread's stack, which grows down on demand only below a
// mapping of its own: pages mapped anew there would stop it growing.
bool onMainStack(uint64_t from, uint64_t to) {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return false;
  char line[512];
  bool touches = false;
  while (!touches && std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long long lo = 0, hi = 0;
    if (std::strstr(line, "[stack]") != nullptr && std::sscanf(line, "%llx-%llx", &lo, &hi) == 2)
      touches = from < hi && lo < to;
  }
  std::fclose(maps);
  return touches;
}

// The device address of `p`, in the registered range [base, base + bytes), mapping the range's
// pages first if no mapping holds them yet.
int registeredDeviceAddress(const void* p, uint64_t base, uint64_t bytes, const char* function,
                            uint64_t* out) {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t from = base & ~(page - 1), to = (base + bytes + page - 1) & ~(page - 1);
  HostMappings& hm = hostMappings();
  std::lock_guard<std::mutex> lock(hm.mutex);
  // A mapping that holds the range's pages serves it; one that holds only some of them, before
  // or after its first page, is a conflict.
  auto next = hm.byPage.upper_bound(from);
  bool conflict = next != hm.byPage.end() && next->first < to;
  if (next != hm.byPage.begin()) {
    auto& [first, m] = *std::prev(next);
    if (first + m.len >= to) {
      m.ranges.insert(base);
      *out = m.device + (u64(p) - first);
      return kSuccess;
    }
    conflict = conflict || first + m.len > from;
  }
  if (conflict)
    return fail(kErrorNotSupported, function,
                "the registered range shares a page with another registered range whose "
                "mapping does not hold all of its pages; register one range that holds both");
  const uint64_t len = to - from;
  if (onMainStack(from, to))
    return fail(kErrorNotSupported, function,
                "the registered range is on the main thread's stack, which gpusc cannot map for "
                "kernels; register memory from malloc or new, a global, or use cudaHostAlloc");
  if (::msync(ptr(from), len, MS_ASYNC) != 0)
    return fail(kErrorInvalidValue, function,
                "the registered range is not all mapped in the program any more (freed?)");
  uint64_t device = 0, span = 0;
  int fd = -1;
  if (int e = mapShared(len, false, function, &device, &span, &fd); e != kSuccess) return e;
  // Mapped host memory: the host's, not counted as device memory the program allocated.
  client().addAllocation(device, len, span, false, false, 2);  // cudaHostAllocMapped
  const bool mapped = remapPages(from, len, device, fd);
  ::close(fd);
  if (!mapped) {
    freeAny(ptr(device), wire::Op::FreeHost);
    return fail(kErrorMemoryAllocation, function,
                "cannot map the registered range's pages from memory the device shares");
  }
  HostMapping& m = hm.byPage[from];
  m.len = len;
  m.device = device;
  m.ranges.insert(base);
  *out = device + (u64(p) - from);
  return kSuccess;
}

// The registered range at `base` no longer uses its mapping; the last range to leave it maps the
// pages back as private memory holding what they hold now, and frees the shared memory.
void releaseRegisteredMapping(uint64_t base) {
  HostMappings& hm = hostMappings();
  std::lock_guard<std::mutex> lock(hm.mutex);
  for (auto it = hm.byPage.begin(); it != hm.byPage.end(); ++it) {
    HostMapping& m = it->second;
    if (m.ranges.erase(base) == 0 || !m.ranges.empty()) continue;
    const uint64_t from = it->first, len = m.len, device = m.device;
    // The program may have freed the memory: then there is nothing to map back.
    if (::msync(ptr(from), len, MS_ASYNC) == 0) {
      remapPages(from, len, device, -1);
    }
    hm.byPage.erase(it);
    freeAny(ptr(device), wire::Op::FreeHost);
    return;
  }
}

GPUSC_API int cudaHostGetDevicePointer(void** devicePtr, void* hostPtr, unsigned flags) {
  GPUSC_STICKY();
  if (devicePtr == nullptr)
    return fail(kErrorInvalidValue, "cudaHostGetDevicePointer", "a null result");
  if (flags != 0) return fail(kErrorInvalidValue, "cudaHostGetDevicePointer", "flags must be 0");
  Client& c = client();
  if (c.where(hostPtr) == Client::Where::Shared) {
    *devicePtr = hostPtr;  // one address for both
    return kSuccess;
  }
  uint64_t base = 0, bytes = 0, device = 0;
  if (!c.registeredRange(hostPtr, &base, &bytes))
    return fail(kErrorInvalidValue, "cudaHostGetDevicePointer",
                "the pointer is not memory cudaHostAlloc or cudaMallocHost returned, nor memory "
                "cudaHostRegister registered");
  if (int e = registeredDeviceAddress(hostPtr, base, bytes, "cudaHostGetDevicePointer", &device);
      e != kSuccess)
    return e;
  *devicePtr = ptr(device);
  return kSuccess;
}

GPUSC_API int cudaHostRegister(void* p, size_t bytes, unsigned flags) {
  GPUSC_STICKY();
  if (p == nullptr || bytes == 0)
    return fail(kErrorInvalidValue, "cudaHostRegister", "a null pointer or an empty range");
  if (client().where(p) != Client::Where::Host || !client().registerHost(p, bytes))
    return fail(kErrorHostMemoryAlreadyRegistered, "cudaHostRegister",
                "the range overlaps memory registered or allocated before");
  (void)flags;  // every registered range is mapped (above), portable and writable
  return kSuccess;
}
GPUSC_API int cudaHostUnregister(void* p) {
  GPUSC_STICKY();
  if (!client().unregisterHost(p))
    return fail(kErrorHostMemoryNotRegistered, "cudaHostUnregister",
                "the pointer starts no range cudaHostRegister registered");
  releaseRegisteredMapping(u64(p));
  return kSuccess;
}

// Device memory, or a graph's allocation that outlives its launch (freed until the next).
int freeDevice(void* p, const char* function) {
  int e = kSuccess;
  if (freeOutliving(p, &e, function)) return e;
  e = freeAny(p, wire::Op::Free, function);
  if (e == kSuccess) releasePoolAllocation(p);
  return e;
}

GPUSC_API int cudaFree(void* p) { return freeDevice(p, "cudaFree"); }
// In a capture: memory the capture allocated becomes the graph's; other memory is freed when
// the graph runs.
GPUSC_API int cudaFreeAsync(void* p, void* stream) {
  if (auto seq = capturing(stream)) {
    std::lock_guard<std::mutex> lock(captures().mutex);
    auto it = std::find(seq->allocated.begin(), seq->allocated.end(), p);
    if (it != seq->allocated.end()) {
      seq->allocated.erase(it);
      seq->memory->blocks.push_back(p);
      seq->push(
          stream, [] { return int(kSuccess); }, freeKind(p));
    } else {
      seq->push(
          stream, [p] { return freeDevice(p, "cudaFreeAsync"); }, freeKind(p));
    }
    return kSuccess;
  }
  return freeDevice(p, "cudaFreeAsync");
}
GPUSC_API int cudaFreeAsync_ptsz(void* p, void* stream) {
  return cudaFreeAsync(p, perThread(stream));
}
GPUSC_API int cudaFreeHost(void* p) { return freeAny(p, wire::Op::FreeHost); }

GPUSC_API int cudaMemGetInfo(size_t* freeBytes, size_t* total) {
  GPUSC_STICKY();
  // The program's allocations against the device's capacity.
  const uint64_t capacity = client().facts().globalMemoryBytes;
  const uint64_t used = std::min(capacity, client().allocatedBytes());
  if (total) *total = capacity;
  if (freeBytes) *freeBytes = capacity - used;
  return kSuccess;
}

GPUSC_API int cudaPointerGetAttributes(void* attributes, const void* p) {
  struct PointerAttributes {
    int type;  // 0 unregistered, 1 host, 2 device, 3 managed
    int device;
    void* devicePointer;
    void* hostPointer;
  };
  auto* a = static_cast<PointerAttributes*>(attributes);
  if (a == nullptr) return fail(kErrorInvalidValue, "cudaPointerGetAttributes", "a null result");
  void* q = const_cast<void*>(p);
  switch (client().where(p)) {
    case Client::Where::Host: {
      // Registered memory is host memory, mapped at a device address of its own (above).
      uint64_t base = 0, bytes = 0, device = 0;
      if (!client().registeredRange(p, &base, &bytes)) {
        *a = {0, -2, nullptr, q};
        break;
      }
      if (int e = registeredDeviceAddress(p, base, bytes, "cudaPointerGetAttributes", &device);
          e != kSuccess)
        return e;
      *a = {1, 0, ptr(device), q};
      break;
    }
    case Client::Where::Device:
      *a = {2, 0, q, nullptr};
      break;
    case Client::Where::Shared:
      *a = {client().managed(p) ? 3 : 1, 0, q, q};  // managed, or mapped host memory
      break;
  }
  return kSuccess;
}

GPUSC_API int cudaMemcpy(void* dst, const void* src, size_t bytes, int kind) {
  return memcpyAny(dst, src, bytes, kind, "cudaMemcpy");
}
GPUSC_API int cudaMemcpy_ptds(void* dst, const void* src, size_t bytes, int kind) {
  return memcpyAny(dst, src, bytes, kind, "cudaMemcpy");
}
GPUSC_API int cudaMemcpyAsync(void* dst, const void* src, size_t bytes, int kind, void* stream) {
  return issue(
      "cudaMemcpyAsync", stream,
      [=] { return memcpyAny(dst, src, bytes, kind, "cudaMemcpyAsync"); },
      copyKind(dst, src, bytes, kind));
}
GPUSC_API int cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t bytes, int kind,
                                   void* stream) {
  return cudaMemcpyAsync(dst, src, bytes, kind, perThread(stream));
}
// Copies between devices: there is one device (0), and a copy from it to itself is a
// device-to-device copy, as CUDA allows.
int peerDevices(int dstDevice, int srcDevice, const char* function) {
  if (dstDevice == 0 && srcDevice == 0) return kSuccess;
  return fail(kErrorInvalidDevice, function,
              "device " + std::to_string(dstDevice != 0 ? dstDevice : srcDevice) +
                  ": the simulated GPU is the only device (0)");
}
constexpr int kMemcpyDeviceToDevice = 3;
GPUSC_API int cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice,
                             size_t bytes) {
  if (int e = peerDevices(dstDevice, srcDevice, "cudaMemcpyPeer"); e != kSuccess) return e;
  return memcpyAny(dst, src, bytes, kMemcpyDeviceToDevice, "cudaMemcpyPeer");
}
GPUSC_API int cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                  size_t bytes, void* stream) {
  if (int e = peerDevices(dstDevice, srcDevice, "cudaMemcpyPeerAsync"); e != kSuccess) return e;
  return issue(
      "cudaMemcpyPeerAsync", stream,
      [=] { return memcpyAny(dst, src, bytes, kMemcpyDeviceToDevice, "cudaMemcpyPeerAsync"); },
      copyKind(dst, src, bytes, kMemcpyDeviceToDevice));
}
GPUSC_API int cudaMemcpyPeerAsync_ptsz(void* dst, int dstDevice, const void* src, int srcDevice,
                                       size_t bytes, void* stream) {
  return cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, bytes, perThread(stream));
}

// cudaMemcpyAttributes (CUDA 12.8's batched copies).
struct MemcpyAttributes {
  int srcAccessOrder;  // cudaMemcpySrcAccessOrder: stream (1), during the call (2), any (3)
  abi::MemLocation srcLocHint, dstLocHint;
  unsigned flags;  // cudaMemcpyFlags: 0, or 1 (prefer overlap with compute, a hint)
};

// A batch of copies between pointers, each with its attributes (checked as CUDA documents them),
// done in the stream's order one after another (the copies of a batch may run in any order, and
// none may depend on another). A source read during the call is read then, also in a capture.
GPUSC_API int cudaMemcpyBatchAsync(void* const* dsts, const void* const* srcs, const size_t* sizes,
                                   size_t count, const MemcpyAttributes* attrs,
                                   const size_t* attrsIdxs, size_t numAttrs, void* stream) {
  GPUSC_STICKY();
  const char* fn = "cudaMemcpyBatchAsync";
  if (stream == nullptr || stream == ptr(1))
    return fail(kErrorInvalidValue, fn, "the legacy default stream: use another stream");
  if (count == 0 || dsts == nullptr || srcs == nullptr || sizes == nullptr)
    return fail(kErrorInvalidValue, fn, "no copies, or a null list of them");
  if (numAttrs == 0 || numAttrs > count || attrs == nullptr || attrsIdxs == nullptr)
    return fail(kErrorInvalidValue, fn, "between 1 and count attributes, with their indices");
  for (size_t k = 0; k < numAttrs; ++k) {
    const bool ordered = k == 0 ? attrsIdxs[0] == 0 : attrsIdxs[k] > attrsIdxs[k - 1];
    if (!ordered || attrsIdxs[k] >= count)
      return fail(
          kErrorInvalidValue, fn,
          "attrsIdxs must start at 0 and rise, each below count (entry " + std::to_string(k) + ")");
    if (attrs[k].srcAccessOrder < 1 || attrs[k].srcAccessOrder > 3 || attrs[k].flags > 1)
      return fail(kErrorInvalidValue, fn,
                  "attributes " + std::to_string(k) +
                      ": srcAccessOrder must be Stream, DuringApiCall or Any, flags 0 or "
                      "cudaMemcpyFlagPreferOverlapWithCompute");
  }
  const bool captured = capturing(stream) != nullptr;
  size_t k = 0;
  for (size_t i = 0; i < count; ++i) {
    while (k + 1 < numAttrs && attrsIdxs[k + 1] <= i) ++k;
    void* dst = dsts[i];
    const void* src = srcs[i];
    const size_t bytes = sizes[i];
    Replay op = [=] { return memcpyAny(dst, src, bytes, kDefault, fn); };
    if (captured && attrs[k].srcAccessOrder == 2 &&
        client().where(src) != Client::Where::Device) {  // the source's bytes as they are now
      auto now = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t*>(src),
                                                        static_cast<const uint8_t*>(src) + bytes);
      op = [=] { return memcpyAny(dst, now->data(), bytes, kDefault, fn); };
    }
    if (int e = issue(fn, stream, std::move(op), copyKind(dst, src, bytes, kDefault));
        e != kSuccess)
      return e;
  }
  return kSuccess;
}

GPUSC_API int cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                           size_t height, int kind) {
  return copy2D(dst, dpitch, src, spitch, width, height, kind, "cudaMemcpy2D");
}
GPUSC_API int cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                size_t width, size_t height, int kind, void* stream) {
  abi::Memcpy3DParms p{};
  p.srcPtr = {const_cast<void*>(src), spitch, width, height};
  p.dstPtr = {dst, dpitch, width, height};
  p.extent = {width, height, 1};
  p.kind = kind;
  return issue(
      "cudaMemcpy2DAsync", stream,
      [=] { return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind); }, copy3DKind(p));
}
GPUSC_API int cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch,
                                size_t width, size_t height, int kind) {
  return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}
GPUSC_API int cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch,
                                     size_t width, size_t height, int kind, void* stream) {
  return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, perThread(stream));
}

GPUSC_API int cudaMemset(void* dst, int value, size_t bytes) {
  GPUSC_STICKY();
  if (bytes == 0) return kSuccess;
  if (client().where(dst) == Client::Where::Shared) {
    uint64_t base = 0, size = 0;
    client().allocation(dst, &base, &size, nullptr);
    if (u64(dst) + bytes > base + size)
      return fail(kErrorInvalidValue, "cudaMemset", "past the end of the allocation");
    std::memset(dst, value, bytes);
    return kSuccess;
  }
  wire::Buffer b;
  b.put(u64(dst)).put(uint32_t(value)).put(uint64_t(bytes));
  return record(client().call(wire::Op::Memset, b));
}
GPUSC_API int cudaMemset_ptds(void* dst, int value, size_t bytes) {
  return cudaMemset(dst, value, bytes);
}
GPUSC_API int cudaMemsetAsync(void* dst, int value, size_t bytes, void* stream) {
  return issue(
      "cudaMemsetAsync", stream, [=] { return cudaMemset(dst, value, bytes); },
      memsetKind(dst, bytes, static_cast<unsigned>(value) & 0xff, 1, bytes, 1));
}
GPUSC_API int cudaMemsetAsync_ptsz(void* dst, int value, size_t bytes, void* stream) {
  return cudaMemsetAsync(dst, value, bytes, perThread(stream));
}
GPUSC_API int cudaMemset2D(void* dst, size_t pitch, int value, size_t width, size_t height) {
  GPUSC_STICKY();
  if (width > pitch && height > 1)  // the pitch is unused for one row
    return fail(kErrorInvalidValue, "cudaMemset2D", "a row wider than its pitch");
  if (int e = regionInside(dst, width, height, pitch, 1, 0, "cudaMemset2D"); e != kSuccess)
    return e;
  for (size_t row = 0; row < height; ++row)
    if (int e = cudaMemset(static_cast<uint8_t*>(dst) + row * pitch, value, width); e != kSuccess)
      return e;
  return kSuccess;
}

GPUSC_API int cudaMemset2D_ptds(void* dst, size_t pitch, int value, size_t width, size_t height) {
  return cudaMemset2D(dst, pitch, value, width, height);
}
GPUSC_API int cudaMemset2DAsync(void* dst, size_t pitch, int value, size_t width, size_t height,
                                void* stream) {
  return issue(
      "cudaMemset2DAsync", stream, [=] { return cudaMemset2D(dst, pitch, value, width, height); },
      memsetKind(dst, pitch, static_cast<unsigned>(value) & 0xff, 1, width, height));
}
GPUSC_API int cudaMemset2DAsync_ptsz(void* dst, size_t pitch, int value, size_t width,
                                     size_t height, void* stream) {
  return cudaMemset2DAsync(dst, pitch, value, width, height, perThread(stream));
}
// Prefetches and advice change nothing here (managed memory is where both sides reach it), but
// their range must be managed memory, as CUDA requires on a device without pageable memory
// access: within one cudaMallocManaged allocation or __managed__ variable. What they said is
// kept, in order, for cudaMemRangeGetAttribute (until the memory is freed).
namespace {
int managedRange(const void* p, size_t bytes, const char* fn) {
  GPUSC_STICKY();
  uint64_t base = 0, size = 0;
  const auto at = uint64_t(reinterpret_cast<uintptr_t>(p));
  if (!client().managed(p) || !client().allocation(p, &base, &size, nullptr))
    return fail(kErrorInvalidValue, fn, "the range does not start in managed memory");
  if (bytes > base + size - at)
    return fail(kErrorInvalidValue, fn,
                std::to_string(bytes) + " bytes from offset " + std::to_string(at - base) +
                    " pass the end of a managed allocation of " + std::to_string(size));
  return kSuccess;
}
}  // namespace
GPUSC_API int cudaMemPrefetchAsync(const void* p, size_t bytes, abi::MemLocation where, unsigned,
                                   void*) {
  if (int e = managedRange(p, bytes, "cudaMemPrefetchAsync"); e != kSuccess) return e;
  note(p, bytes, kPrefetched, where);
  return kSuccess;
}
GPUSC_API int cudaMemPrefetchAsync_ptsz(const void* p, size_t bytes, abi::MemLocation where,
                                        unsigned flags, void* stream) {
  return cudaMemPrefetchAsync(p, bytes, where, flags, stream);
}
GPUSC_API int cudaMemAdvise(const void* p, size_t bytes, int advice, abi::MemLocation where) {
  if (advice < 1 || advice > 6)
    return fail(kErrorInvalidValue, "cudaMemAdvise",
                "advice " + std::to_string(advice) + " is not a cudaMemoryAdvise (1 to 6)");
  if (int e = managedRange(p, bytes, "cudaMemAdvise"); e != kSuccess) return e;
  note(p, bytes, advice, where);
  return kSuccess;
}

namespace {

// A range's advice and last prefetch, where all its bytes agree.
struct RangeState {
  bool readMostly = true;
  std::optional<abi::MemLocation> preferred, prefetched;  // null: the bytes differ
  std::vector<abi::MemLocation> accessedBy;               // by every byte
};

bool sameLocation(const abi::MemLocation& a, const abi::MemLocation& b) {
  return a.type == b.type && (a.type != 1 || a.id == b.id);
}

RangeState rangeState(uint64_t from, uint64_t to) {
  RangeNotes& r = rangeNotes();
  std::lock_guard<std::mutex> lock(r.mutex);
  // The range in pieces over which every note holds or not; each piece's state from the notes
  // in the order they were made, then what the pieces agree on.
  std::vector<uint64_t> cuts = {from, to};
  for (const RangeNote& n : r.notes) {
    if (n.from > from && n.from < to) cuts.push_back(n.from);
    if (n.to > from && n.to < to) cuts.push_back(n.to);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  RangeState all;
  const abi::MemLocation none{0, 0};
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    bool readMostly = false;
    abi::MemLocation preferred = none, prefetched = none;
    std::vector<abi::MemLocation> accessedBy;
    for (const RangeNote& n : r.notes) {
      if (!(n.from <= cuts[c] && cuts[c] < n.to)) continue;
      const auto same = [&](const abi::MemLocation& l) { return sameLocation(l, n.where); };
      switch (n.op) {
        case kPrefetched:
          prefetched = n.where;
          break;
        case 1:
          readMostly = true;
          break;
        case 2:
          readMostly = false;
          break;
        case 3:
          preferred = n.where;
          break;
        case 4:
          preferred = none;
          break;
        case 5:
          if (std::none_of(accessedBy.begin(), accessedBy.end(), same))
            accessedBy.push_back(n.where);
          break;
        case 6:
          accessedBy.erase(std::remove_if(accessedBy.begin(), accessedBy.end(), same),
                           accessedBy.end());
          break;
      }
    }
    all.readMostly = all.readMostly && readMostly;
    if (c == 0) {
      all.preferred = preferred;
      all.prefetched = prefetched;
      all.accessedBy = accessedBy;
      continue;
    }
    if (all.preferred && !sameLocation(*all.preferred, preferred)) all.preferred.reset();
    if (all.prefetched && !sameLocation(*all.prefetched, prefetched)) all.prefetched.reset();
    all.accessedBy.erase(std::remove_if(all.accessedBy.begin(), all.accessedBy.end(),
                                        [&](const abi::MemLocation& l) {
                                          return std::none_of(accessedBy.begin(), accessedBy.end(),
                                                              [&](const abi::MemLocation& m) {
                                                                return sameLocation(l, m);
                                                              });
                                        }),
                         all.accessedBy.end());
  }
  return all;
}

// A location as the older attributes give it: a device's ordinal, cudaCpuDeviceId (-1) for the
// host, cudaInvalidDeviceId (-2) for none or where the range's bytes differ.
int deviceIdOf(const std::optional<abi::MemLocation>& l) {
  if (!l || l->type == 0) return -2;
  return l->type == 1 ? l->id : -1;
}

}  // namespace

// What cudaMemAdvise and cudaMemPrefetchAsync said of every byte of the range (managed memory).
GPUSC_API int cudaMemRangeGetAttribute(void* data, size_t dataSize, int attribute, const void* p,
                                       size_t bytes) {
  const char* fn = "cudaMemRangeGetAttribute";
  if (data == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  if (int e = managedRange(p, bytes, fn); e != kSuccess) return e;
  const RangeState st = rangeState(u64(p), u64(p) + bytes);
  auto* out = static_cast<int*>(data);
  if (attribute == 3) {  // cudaMemRangeAttributeAccessedBy: devices, then cudaInvalidDeviceId
    if (dataSize == 0 || dataSize % 4 != 0)
      return fail(kErrorInvalidValue, fn, "AccessedBy needs a multiple of 4 bytes");
    for (size_t i = 0; i < dataSize / 4; ++i)
      out[i] = i < st.accessedBy.size() ? deviceIdOf(st.accessedBy[i]) : -2;
    return kSuccess;
  }
  if (attribute < 1 || attribute > 8)
    return fail(kErrorInvalidValue, fn,
                "attribute " + std::to_string(attribute) + " is not a cudaMemRangeAttribute");
  if (dataSize != 4) return fail(kErrorInvalidValue, fn, "the attribute takes 4 bytes");
  const std::optional<abi::MemLocation>& l =
      attribute == 2 || attribute == 5 || attribute == 6 ? st.preferred : st.prefetched;
  switch (attribute) {
    case 1:
      *out = st.readMostly ? 1 : 0;
      break;
    case 2:
    case 4:
      *out = deviceIdOf(l);
      break;
    case 5:  // ...LocationType: cudaMemLocationTypeInvalid (0) where the bytes differ
    case 7:
      *out = l ? l->type : 0;
      break;
    default:  // ...LocationId: a device's ordinal or a NUMA node's id
      *out = l && (l->type == 1 || l->type == 3) ? l->id : -2;
      break;
  }
  return kSuccess;
}

GPUSC_API int cudaMemRangeGetAttributes(void** data, size_t* dataSizes, int* attributes,
                                        size_t count, const void* p, size_t bytes) {
  if (count != 0 && (data == nullptr || dataSizes == nullptr || attributes == nullptr))
    return fail(kErrorInvalidValue, "cudaMemRangeGetAttributes", "a null list");
  for (size_t i = 0; i < count; ++i)
    if (int e = cudaMemRangeGetAttribute(data[i], dataSizes[i], attributes[i], p, bytes);
        e != kSuccess)
      return e;
  return kSuccess;
}
GPUSC_API int cudaStreamAttachMemAsync(void*, void*, size_t, unsigned) { return kSuccess; }
GPUSC_API int cudaStreamAttachMemAsync_ptsz(void*, void*, size_t, unsigned) { return kSuccess; }

// ---- symbols ----

namespace {
NodeKind symbolCopyKind(void* dst, const void* src, const void* symbol, size_t bytes, size_t offset,
                        int kind, bool toSymbol);  // below
// The directions a copy to (or from) a symbol may take: from (to) the host, between device
// memory, or the default.
int checkSymbolCopyKind(int kind, bool toSymbol, const char* fn) {
  const int other = toSymbol ? kHostToDevice : kDeviceToHost;
  if (kind != other && kind != kDeviceToDevice && kind != kDefault)
    return fail(kErrorInvalidMemcpyDirection, fn, "kind " + std::to_string(kind));
  return kSuccess;
}
}  // namespace

GPUSC_API int cudaMemcpyToSymbol(const void* symbol, const void* src, size_t bytes, size_t offset,
                                 int kind) {
  GPUSC_STICKY();
  if (int e = checkSymbolCopyKind(kind, true, "cudaMemcpyToSymbol"); e != kSuccess) return e;
  const bool fromDevice = client().where(src) == Client::Where::Device;
  if (kind == kDeviceToDevice && !fromDevice && client().where(src) == Client::Where::Host)
    return fail(kErrorInvalidValue, "cudaMemcpyToSymbol", "the source is not device memory");
  wire::Buffer b;
  b.put(u64(symbol)).put(uint64_t(offset)).put(uint64_t(bytes)).put(fromDevice ? u64(src) : 0);
  if (!fromDevice) b.putBytes(src, bytes);
  return record(client().call(wire::Op::CopyToSymbol, b));
}
GPUSC_API int cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t bytes,
                                      size_t offset, int kind) {
  return cudaMemcpyToSymbol(symbol, src, bytes, offset, kind);
}
GPUSC_API int cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t bytes,
                                      size_t offset, int kind, void* stream) {
  return issue(
      "cudaMemcpyToSymbolAsync", stream,
      [=] { return cudaMemcpyToSymbol(symbol, src, bytes, offset, kind); },
      capturing(stream) ? symbolCopyKind(nullptr, src, symbol, bytes, offset, kind, true)
                        : typeKind(kNodeMemcpy));
}
GPUSC_API int cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t bytes,
                                           size_t offset, int kind, void* stream) {
  return cudaMemcpyToSymbolAsync(symbol, src, bytes, offset, kind, perThread(stream));
}

GPUSC_API int cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t bytes, size_t offset,
                                   int kind) {
  GPUSC_STICKY();
  if (int e = checkSymbolCopyKind(kind, false, "cudaMemcpyFromSymbol"); e != kSuccess) return e;
  const bool toDevice = client().where(dst) == Client::Where::Device;
  wire::Buffer b;
  b.put(u64(symbol)).put(uint64_t(offset)).put(uint64_t(bytes)).put(toDevice ? u64(dst) : 0);
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::CopyFromSymbol, b, &reply); e != kSuccess) return record(e);
  if (!toDevice) std::memcpy(dst, reply.data(), std::min(bytes, reply.size()));
  return kSuccess;
}
GPUSC_API int cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t bytes, size_t offset,
                                        int kind) {
  return cudaMemcpyFromSymbol(dst, symbol, bytes, offset, kind);
}
GPUSC_API int cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t bytes, size_t offset,
                                        int kind, void* stream) {
  return issue(
      "cudaMemcpyFromSymbolAsync", stream,
      [=] { return cudaMemcpyFromSymbol(dst, symbol, bytes, offset, kind); },
      capturing(stream) ? symbolCopyKind(dst, nullptr, symbol, bytes, offset, kind, false)
                        : typeKind(kNodeMemcpy));
}
GPUSC_API int cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t bytes,
                                             size_t offset, int kind, void* stream) {
  return cudaMemcpyFromSymbolAsync(dst, symbol, bytes, offset, kind, perThread(stream));
}

GPUSC_API int cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  GPUSC_STICKY();
  if (devPtr == nullptr) return fail(kErrorInvalidValue, "cudaGetSymbolAddress", "a null result");
  wire::Buffer b;
  b.put(u64(symbol));
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::SymbolAddress, b, &reply); e != kSuccess) return record(e);
  wire::Reader in(reply.data(), reply.size());
  const auto addr = in.get<uint64_t>();
  const auto bytes = in.get<uint64_t>();
  if (addr == 0)
    return fail(kErrorInvalidSymbol, "cudaGetSymbolAddress",
                "a __constant__ variable: gpusc keeps constant memory in a bank of its own, "
                "outside the device's address space (cudaMemcpyToSymbol and "
                "cudaMemcpyFromSymbol reach it)");
  client().addAllocation(addr, bytes, 0, false);  // device memory the program may copy to
  *devPtr = ptr(addr);
  return kSuccess;
}

GPUSC_API int cudaGetSymbolSize(size_t* size, const void* symbol) {
  GPUSC_STICKY();
  if (size == nullptr) return fail(kErrorInvalidValue, "cudaGetSymbolSize", "a null result");
  wire::Buffer b;
  b.put(u64(symbol));
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::SymbolAddress, b, &reply); e != kSuccess) return record(e);
  wire::Reader in(reply.data(), reply.size());
  in.get<uint64_t>();
  *size = in.get<uint64_t>();
  return kSuccess;
}

namespace {
// The device bytes a copy to or from a __device__ or __constant__ symbol reaches: a graph node
// for such a copy holds a copy of those bytes, as CUDA's does.
int symbolBytes(const void* symbol, size_t offset, size_t bytes, void** at, const char* fn) {
  void* base = nullptr;
  size_t size = 0;
  if (int e = cudaGetSymbolAddress(&base, symbol); e != kSuccess) return e;
  if (int e = cudaGetSymbolSize(&size, symbol); e != kSuccess) return e;
  if (offset > size || bytes > size - offset)
    return fail(kErrorInvalidValue, fn,
                std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                    " of a symbol of " + std::to_string(size) + " bytes");
  *at = static_cast<char*>(base) + offset;
  return kSuccess;
}
// A graph node's copy to or from a symbol: its kind checked, and the bytes it reaches.
int symbolCopyAt(const void* symbol, size_t offset, size_t bytes, int kind, bool toSymbol,
                 const char* fn, void** at) {
  if (int e = checkSymbolCopyKind(kind, toSymbol, fn); e != kSuccess) return e;
  return symbolBytes(symbol, offset, bytes, at, fn);
}
// A captured copy to or from a symbol: the plain copy of its bytes, when the symbol is known.
NodeKind symbolCopyKind(void* dst, const void* src, const void* symbol, size_t bytes, size_t offset,
                        int kind, bool toSymbol) {
  void* at = nullptr;
  if (symbolBytes(symbol, offset, bytes, &at, "cudaStreamEndCapture") != kSuccess) {
    tLastError = kSuccess;  // the copy itself reports it when the graph runs
    return typeKind(kNodeMemcpy);
  }
  return toSymbol ? copyKind(at, src, bytes, kind) : copyKind(dst, at, bytes, kind);
}
}  // namespace

// ===================================================================== streams and events

GPUSC_API int cudaStreamCreate(void** stream) {
  GPUSC_STICKY();
  if (stream == nullptr) return fail(kErrorInvalidValue, "cudaStreamCreate", "a null result");
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::StreamCreate, {}, &reply); e != kSuccess) return record(e);
  uint64_t s = 0;
  std::memcpy(&s, reply.data(), std::min<size_t>(8, reply.size()));
  *stream = ptr(s);
  std::lock_guard<std::mutex> lock(names().mutex);
  StreamSettings& st = names().streams[*stream];
  st = StreamSettings{};
  st.id = nextStreamId()++;
  return kSuccess;
}
// The flags a stream may have: cudaStreamDefault (0) and cudaStreamNonBlocking (1). Streams run
// one at a time here, so a non-blocking stream's independence of the legacy default stream is
// one of the orders a GPU may give; the flag is kept to be read back.
constexpr unsigned kStreamNonBlocking = 1;
int createStream(void** stream, unsigned flags, const char* function) {
  if ((flags & ~kStreamNonBlocking) != 0)
    return fail(kErrorInvalidValue, function,
                "flags " + std::to_string(flags) +
                    ": a stream's flags are cudaStreamDefault (0) or cudaStreamNonBlocking (1)");
  if (int e = cudaStreamCreate(stream); e != kSuccess) return e;
  std::lock_guard<std::mutex> lock(names().mutex);
  names().streams[*stream].flags = flags;
  return kSuccess;
}
GPUSC_API int cudaStreamCreateWithFlags(void** stream, unsigned flags) {
  return createStream(stream, flags, "cudaStreamCreateWithFlags");
}
// Priorities are not modelled: their range is 0 to 0 (cudaDeviceGetStreamPriorityRange), and
// CUDA clamps a stream's priority to the range, so every stream's is 0.
GPUSC_API int cudaStreamCreateWithPriority(void** stream, unsigned flags, int) {
  return createStream(stream, flags, "cudaStreamCreateWithPriority");
}
// cudaStreamSetAttribute / cudaStreamGetAttribute: an access-policy window (L2 persistence),
// the synchronisation policy and memory synchronisation domains are hints here (no result
// changes), kept per stream and read back as set; the priority is the stream's (0 to 0).
struct StreamAttributes {
  std::mutex mutex;
  std::map<std::pair<void*, int>, abi::LaunchAttribute> values;
};
StreamAttributes& streamAttributes() {
  static StreamAttributes a;
  return a;
}
GPUSC_API int cudaStreamDestroy(void* stream) {
  const int e = simple(wire::Op::StreamDestroy, u64(stream));
  if (e == kSuccess) {
    {
      std::lock_guard<std::mutex> lock(names().mutex);
      names().streams.erase(stream);
    }
    std::lock_guard<std::mutex> lock(streamAttributes().mutex);
    auto& v = streamAttributes().values;
    v.erase(v.lower_bound({stream, INT_MIN}), v.upper_bound({stream, INT_MAX}));
  }
  return e;
}
// cudaDeviceReset: frees the memory the program allocated on the device (cudaMalloc and the
// calls built on it: pitched memory, CUDA arrays, stream-ordered and graph allocations), destroys
// its streams, events and memory pools, clears the last error and sets the limits, the cache
// preference and each thread's stack back to their defaults. After a kernel fault it returns the
// sticky error, as every call does: CUDA's documentation says only a new process clears it. What a
// GPU's reset also drops and gpusc keeps: the modules (kernels stay registered; their __device__
// variables keep their values), managed and pinned host memory, and the malloc heap's size. Every
// call completes before it returns, so there is no work to wait for.
GPUSC_API int cudaDeviceReset() {
  GPUSC_STICKY();
  if (int e = client().call(wire::Op::DeviceReset, {}); e != kSuccess) return record(e);
  client().removeDeviceAllocations();
  tLastError = kSuccess;
  {
    std::lock_guard<std::mutex> lock(names().mutex);
    names().streams.clear();
  }
  {
    std::lock_guard<std::mutex> lock(streamAttributes().mutex);
    streamAttributes().values.clear();
  }
  {
    Limits& l = limits();
    std::lock_guard<std::mutex> lock(l.mutex);
    const Limits defaults;
    l.stack = defaults.stack;
    l.printfFifo = defaults.printfFifo;
    l.l2FetchGranularity = defaults.l2FetchGranularity;
    l.persistingL2 = defaults.persistingL2;
  }
  cacheConfig() = 0;
  {
    MemPools& m = memPools();
    std::lock_guard<std::mutex> lock(m.mutex);
    m.allocations.clear();
    m.created.clear();
    m.defaultPool = MemPool{};
    m.current = &m.defaultPool;
  }
  return kSuccess;
}
// A stream's settings: the default streams (0, cudaStreamLegacy, cudaStreamPerThread) have the
// default flags and priority; another stream is one this program created and has not destroyed.
int streamSettings(void* stream, const char* function, StreamSettings* out) {
  if (stream == nullptr || stream == ptr(1) || stream == ptr(2)) {
    *out = StreamSettings{};
    return kSuccess;
  }
  std::lock_guard<std::mutex> lock(names().mutex);
  auto it = names().streams.find(stream);
  if (it == names().streams.end())
    return fail(kErrorInvalidResourceHandle, function, "a stream this program has not created");
  *out = it->second;
  return kSuccess;
}
GPUSC_API int cudaStreamSetAttribute(void* stream, int id, const void* value) {
  const char* fn = "cudaStreamSetAttribute";
  if (value == nullptr) return fail(kErrorInvalidValue, fn, "a null value");
  StreamSettings st;
  if (int e = streamSettings(stream, fn, &st); e != kSuccess) return e;
  switch (id) {
    case abi::kLaunchAttrAccessPolicyWindow:
    case abi::kLaunchAttrSynchronizationPolicy:
    case abi::kLaunchAttrMemSyncDomainMap:
    case abi::kLaunchAttrMemSyncDomain:
    case abi::kLaunchAttrPriority: {
      abi::LaunchAttribute a{};
      a.id = id;
      std::memcpy(&a.val, value, sizeof a.val);
      std::lock_guard<std::mutex> lock(streamAttributes().mutex);
      streamAttributes().values[{stream, id}] = a;
      return kSuccess;
    }
    default:
      return fail(kErrorInvalidValue, fn,
                  "stream attribute " + std::to_string(id) + " is not one a stream has");
  }
}
GPUSC_API int cudaStreamGetAttribute(void* stream, int id, void* value) {
  const char* fn = "cudaStreamGetAttribute";
  if (value == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  StreamSettings st;
  if (int e = streamSettings(stream, fn, &st); e != kSuccess) return e;
  abi::LaunchAttribute a{};
  {
    std::lock_guard<std::mutex> lock(streamAttributes().mutex);
    auto it = streamAttributes().values.find({stream, id});
    if (it != streamAttributes().values.end()) a = it->second;
  }
  if (id == abi::kLaunchAttrPriority) a.val.priority = 0;  // priorities are not modelled
  std::memcpy(value, &a.val, sizeof a.val);
  return kSuccess;
}
GPUSC_API int cudaStreamSetAttribute_ptsz(void* stream, int id, const void* value) {
  return cudaStreamSetAttribute(perThread(stream), id, value);
}
GPUSC_API int cudaStreamGetAttribute_ptsz(void* stream, int id, void* value) {
  return cudaStreamGetAttribute(perThread(stream), id, value);
}
// `dst` takes the attributes `src` was given (cudaStreamSetAttribute's).
GPUSC_API int cudaStreamCopyAttributes(void* dst, void* src) {
  const char* fn = "cudaStreamCopyAttributes";
  StreamSettings st;
  if (int e = streamSettings(dst, fn, &st); e != kSuccess) return e;
  if (int e = streamSettings(src, fn, &st); e != kSuccess) return e;
  if (dst == src) return kSuccess;
  std::lock_guard<std::mutex> lock(streamAttributes().mutex);
  auto& v = streamAttributes().values;
  v.erase(v.lower_bound({dst, INT_MIN}), v.upper_bound({dst, INT_MAX}));
  std::vector<std::pair<int, abi::LaunchAttribute>> copied;
  for (auto it = v.lower_bound({src, INT_MIN}); it != v.upper_bound({src, INT_MAX}); ++it)
    copied.emplace_back(it->first.second, it->second);
  for (const auto& [id, a] : copied) v[{dst, id}] = a;
  return kSuccess;
}
GPUSC_API int cudaStreamCopyAttributes_ptsz(void* dst, void* src) {
  return cudaStreamCopyAttributes(perThread(dst), perThread(src));
}
GPUSC_API int cudaCtxResetPersistingL2Cache() { return kSuccess; }  // nothing persists

GPUSC_API int cudaStreamGetFlags(void* stream, unsigned* flags) {
  if (flags == nullptr) return fail(kErrorInvalidValue, "cudaStreamGetFlags", "a null result");
  StreamSettings st;
  if (int e = streamSettings(stream, "cudaStreamGetFlags", &st); e != kSuccess) return e;
  *flags = st.flags;
  return kSuccess;
}
GPUSC_API int cudaStreamGetFlags_ptsz(void* stream, unsigned* flags) {
  return cudaStreamGetFlags(perThread(stream), flags);
}
// A stream's id: the legacy default stream's is 0, each host thread's per-thread default stream
// and each created stream has its own, never given again in the process.
GPUSC_API int cudaStreamGetId(void* stream, unsigned long long* id) {
  if (id == nullptr) return fail(kErrorInvalidValue, "cudaStreamGetId", "a null result");
  if (stream == ptr(2)) {
    thread_local const unsigned long long mine = nextStreamId()++;
    *id = mine;
    return kSuccess;
  }
  StreamSettings st;
  if (int e = streamSettings(stream, "cudaStreamGetId", &st); e != kSuccess) return e;
  *id = st.id;
  return kSuccess;
}
GPUSC_API int cudaStreamGetId_ptsz(void* stream, unsigned long long* id) {
  return cudaStreamGetId(perThread(stream), id);
}
// The device of every stream: the one simulated device, 0.
GPUSC_API int cudaStreamGetDevice(void* stream, int* device) {
  if (device == nullptr) return fail(kErrorInvalidValue, "cudaStreamGetDevice", "a null result");
  StreamSettings st;
  if (int e = streamSettings(stream, "cudaStreamGetDevice", &st); e != kSuccess) return e;
  *device = 0;
  return kSuccess;
}
GPUSC_API int cudaStreamGetDevice_ptsz(void* stream, int* device) {
  return cudaStreamGetDevice(perThread(stream), device);
}
GPUSC_API int cudaStreamGetPriority(void* stream, int* priority) {
  if (priority == nullptr)
    return fail(kErrorInvalidValue, "cudaStreamGetPriority", "a null result");
  StreamSettings st;
  if (int e = streamSettings(stream, "cudaStreamGetPriority", &st); e != kSuccess) return e;
  *priority = st.priority;
  return kSuccess;
}
GPUSC_API int cudaStreamGetPriority_ptsz(void* stream, int* priority) {
  return cudaStreamGetPriority(perThread(stream), priority);
}
GPUSC_API int cudaStreamSynchronize(void* stream) {
  if (auto seq = capturing(stream))
    return breakCapture(seq, "cudaStreamSynchronize", "the stream is capturing");
  return simple(wire::Op::StreamCheck, u64(stream));
}
GPUSC_API int cudaStreamSynchronize_ptsz(void* stream) {
  return cudaStreamSynchronize(perThread(stream));
}
GPUSC_API int cudaStreamQuery(void* stream) {
  if (auto seq = capturing(stream))
    return breakCapture(seq, "cudaStreamQuery", "the stream is capturing");
  return simple(wire::Op::StreamCheck, u64(stream));
}
GPUSC_API int cudaStreamQuery_ptsz(void* stream) { return cudaStreamQuery(perThread(stream)); }
// Waiting on an event recorded in a capture pulls the stream into that capture.
GPUSC_API int cudaStreamWaitEvent(void* stream, void* event, unsigned flags) {
  if (flags > 1)  // cudaEventWaitDefault (0) or cudaEventWaitExternal (1)
    return fail(kErrorInvalidValue, "cudaStreamWaitEvent",
                "flags " + std::to_string(flags) +
                    ": cudaEventWaitDefault (0) or cudaEventWaitExternal (1)");
  {
    Captures& c = captures();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.events.find(event); it != c.events.end()) {
      if (legacyStream(stream))
        return fail(kErrorStreamCaptureUnsupported, "cudaStreamWaitEvent",
                    "the legacy default stream cannot join a capture");
      c.streams[stream] = it->second;
      it->second->wait(stream, event);
      return kSuccess;
    }
  }
  return simple(wire::Op::StreamCheck, u64(stream));
}
GPUSC_API int cudaStreamWaitEvent_ptsz(void* stream, void* event, unsigned flags) {
  return cudaStreamWaitEvent(perThread(stream), event, flags);
}

// Streams are served in order, one call at a time: a host function runs once the work before it
// has, which is now.
GPUSC_API int cudaLaunchHostFunc(void* stream, void (*fn)(void*), void* userData) {
  int captureError = kSuccess;
  if (captured(
          stream,
          [fn, userData] {
            if (fn) fn(userData);
            return int(kSuccess);
          },
          &captureError, hostKind(fn, userData)))
    return captureError == kSuccess ? int(kSuccess) : refuseInvalidated("cudaLaunchHostFunc");
  if (int e = simple(wire::Op::StreamCheck, u64(stream)); e != kSuccess) return e;
  if (fn) fn(userData);
  return kSuccess;
}
GPUSC_API int cudaLaunchHostFunc_ptsz(void* stream, void (*fn)(void*), void* userData) {
  return cudaLaunchHostFunc(perThread(stream), fn, userData);
}
GPUSC_API int cudaStreamAddCallback(void* stream, void (*cb)(void*, int, void*), void* userData,
                                    unsigned flags) {
  if (flags != 0) return fail(kErrorInvalidValue, "cudaStreamAddCallback", "flags must be 0");
  if (auto seq = capturing(stream))
    return breakCapture(seq, "cudaStreamAddCallback",
                        "the stream is capturing (cudaLaunchHostFunc can be captured)");
  if (int e = simple(wire::Op::StreamCheck, u64(stream)); e != kSuccess) return e;
  if (cb) cb(stream, kSuccess, userData);
  return kSuccess;
}
GPUSC_API int cudaStreamAddCallback_ptsz(void* stream, void (*cb)(void*, int, void*),
                                         void* userData, unsigned flags) {
  return cudaStreamAddCallback(perThread(stream), cb, userData, flags);
}

// ---- stream capture and graphs (the capture's machinery is above, beside the launches) ----

// cudaStreamCaptureMode: global, thread-local or relaxed. The mode says which calls that are
// unsafe during a capture (cudaMalloc, say, which may synchronise on a GPU) a thread may make;
// every call here completes before it returns, so none is unsafe and the mode changes nothing.
namespace {
thread_local int tCaptureMode = 0;  // cudaThreadExchangeStreamCaptureMode's
int checkCaptureMode(int mode, const char* function) {
  if (mode < 0 || mode > 2)
    return fail(kErrorInvalidValue, function,
                "mode " + std::to_string(mode) +
                    ": cudaStreamCaptureModeGlobal (0), ThreadLocal (1) or Relaxed (2)");
  return kSuccess;
}
}  // namespace
GPUSC_API int cudaThreadExchangeStreamCaptureMode(int* mode) {
  if (mode == nullptr)
    return fail(kErrorInvalidValue, "cudaThreadExchangeStreamCaptureMode", "a null mode");
  if (int e = checkCaptureMode(*mode, "cudaThreadExchangeStreamCaptureMode"); e != kSuccess)
    return e;
  std::swap(*mode, tCaptureMode);
  return kSuccess;
}

GPUSC_API int cudaStreamBeginCapture(void* stream, int mode) {
  GPUSC_STICKY();
  if (int e = checkCaptureMode(mode, "cudaStreamBeginCapture"); e != kSuccess) return e;
  if (legacyStream(stream))
    return fail(kErrorStreamCaptureUnsupported, "cudaStreamBeginCapture",
                "the legacy default stream cannot be captured: capture a created stream");
  Captures& c = captures();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.streams.count(stream))
    return fail(kErrorIllegalState, "cudaStreamBeginCapture", "the stream is capturing already");
  auto seq = std::make_shared<CaptureSequence>();
  seq->id = ++c.sequences;
  seq->origin = stream;
  c.streams[stream] = std::move(seq);
  return kSuccess;
}
GPUSC_API int cudaStreamBeginCapture_ptsz(void* stream, int mode) {
  return cudaStreamBeginCapture(perThread(stream), mode);
}
// A capture whose nodes join an existing graph, after `deps` (a conditional node's body, say).
GPUSC_API int cudaStreamBeginCaptureToGraph(void* stream, void* graph, const void* const* deps,
                                            const abi::GraphEdgeData* edges, size_t count,
                                            int mode) {
  const char* fn = "cudaStreamBeginCaptureToGraph";
  if (graph == nullptr || (count != 0 && deps == nullptr))
    return fail(kErrorInvalidValue, fn, "a null graph or dependency list");
  const Graph& g = *static_cast<const Graph*>(graph);
  for (size_t i = 0; i < count; ++i) {
    if (!g.holds(deps[i])) return fail(kErrorInvalidValue, fn, "a dependency not of the graph");
    if (edges != nullptr &&
        (edges[i].type != 0 || edges[i].from_port != 0 || edges[i].to_port != 0))
      return fail(kErrorNotSupported, fn, "edges other than full dependencies are not supported");
  }
  if (int e = cudaStreamBeginCapture(stream, mode); e != kSuccess) return e;
  Captures& c = captures();
  std::lock_guard<std::mutex> lock(c.mutex);
  CaptureSequence& seq = *c.streams.at(stream);
  seq.into = graph;
  seq.after.assign(deps, deps + count);
  return kSuccess;
}
GPUSC_API int cudaStreamBeginCaptureToGraph_ptsz(void* stream, void* graph, const void* const* deps,
                                                 const abi::GraphEdgeData* edges, size_t count,
                                                 int mode) {
  return cudaStreamBeginCaptureToGraph(perThread(stream), graph, deps, edges, count, mode);
}

// Ends the capture begun in `stream`: every stream that joined it stops capturing, and the
// graph holds its work in the order it was issued.
GPUSC_API int cudaStreamEndCapture(void* stream, void** graph) {
  if (graph == nullptr) return fail(kErrorInvalidValue, "cudaStreamEndCapture", "a null result");
  Captures& c = captures();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.streams.find(stream);
  if (it == c.streams.end())
    return fail(kErrorIllegalState, "cudaStreamEndCapture", "the stream is not capturing");
  const std::shared_ptr<CaptureSequence> seq = it->second;
  if (seq->origin != stream)
    return fail(kErrorStreamCaptureUnmatched, "cudaStreamEndCapture",
                "the capture began in another stream");
  for (auto s = c.streams.begin(); s != c.streams.end();)
    s = s->second == seq ? c.streams.erase(s) : std::next(s);
  for (auto e = c.events.begin(); e != c.events.end();)
    e = e->second == seq ? c.events.erase(e) : std::next(e);
  if ((seq->invalidated || seq->unjoined() != nullptr) && seq->madeInto) {
    delete static_cast<Graph*>(seq->into);
    seq->into = nullptr;
  }
  if (seq->invalidated) {
    *graph = nullptr;
    return fail(kErrorStreamCaptureInvalidated, "cudaStreamEndCapture",
                "the capture was invalidated by an earlier call it cannot hold (such as "
                "cudaStreamSynchronize or cudaStreamQuery on a capturing stream)");
  }
  // A fork whose later work the origin never waited for: the capture ends without a graph
  // (what it allocated is freed with it), as CUDA's does.
  if (void* fork = seq->unjoined()) {
    *graph = nullptr;
    char why[200];
    std::snprintf(why, sizeof why,
                  "stream %p has captured work the capture's stream never waited for (record "
                  "an event after it and wait on it in stream %p)",
                  fork, stream);
    return fail(kErrorStreamCaptureUnjoined, "cudaStreamEndCapture", why);
  }
  // A new graph, or the one cudaStreamBeginCaptureToGraph named (which takes what the capture
  // allocated and freed).
  Graph* g = seq->into ? static_cast<Graph*>(seq->into) : new Graph;
  if (seq->into)
    g->memory->adopt(*seq->memory);
  else
    g->memory = seq->memory;
  // What the capture allocated and did not free outlives each launch of the graph.
  if (!seq->allocated.empty()) {
    OutlivingAllocations& o = outlivingAllocations();
    std::lock_guard<std::mutex> olock(o.mutex);
    for (void* p : seq->allocated) {
      g->memory->outliving.push_back(p);
      o.allocated[p] = false;
    }
    seq->allocated.clear();
  }
  std::vector<const void*> prev = seq->after;
  for (size_t i = 0; i < seq->ops.size(); ++i) {
    if (auto extra = seq->extraDeps.find(i); extra != seq->extraDeps.end())
      for (const void* d : extra->second)
        if (std::find(prev.begin(), prev.end(), d) == prev.end()) prev.push_back(d);
    GraphNode& n = g->add(std::move(seq->ops[i]), prev.data(), prev.size());
    n.kind = std::move(seq->kinds[i]);
    prev.assign(1, &n);
  }
  *graph = g;
  return kSuccess;
}
GPUSC_API int cudaStreamEndCapture_ptsz(void* stream, void** graph) {
  return cudaStreamEndCapture(perThread(stream), graph);
}

// cudaStreamCaptureStatus: None (0), Active (1) or Invalidated (2).
int captureStatus(void* stream) {
  const auto seq = capturing(stream);
  if (!seq) return 0;
  std::lock_guard<std::mutex> lock(captures().mutex);
  return seq->invalidated ? 2 : 1;
}

GPUSC_API int cudaStreamIsCapturing(void* stream, int* status) {
  if (status == nullptr) return fail(kErrorInvalidValue, "cudaStreamIsCapturing", "a null result");
  *status = captureStatus(stream);
  return kSuccess;
}
GPUSC_API int cudaStreamIsCapturing_ptsz(void* stream, int* status) {
  return cudaStreamIsCapturing(perThread(stream), status);
}

// The status and the capture's id; the graph being captured (the graph the captured nodes go
// into when the capture ends: to hold user objects, say); the number of nodes the next captured
// one depends on (the capture is one sequence: the last node, if any). The captured nodes'
// handles are not given out.
GPUSC_API int cudaStreamGetCaptureInfo(void* stream, int* status, unsigned long long* id,
                                       void** graph, const void*** dependencies,
                                       const void** edgeData, size_t* count) {
  if (status == nullptr)
    return fail(kErrorInvalidValue, "cudaStreamGetCaptureInfo", "a null status");
  if (dependencies != nullptr || edgeData != nullptr)
    return fail(kErrorNotSupported, "cudaStreamGetCaptureInfo",
                "the captured nodes' handles are not given out (pass null for the dependencies "
                "and their edge data)");
  const auto seq = capturing(stream);
  *status = captureStatus(stream);
  if (seq) {
    std::lock_guard<std::mutex> lock(captures().mutex);
    if (id) *id = seq->id;
    if (count) *count = seq->ops.empty() ? 0 : 1;
    if (graph) {
      if (seq->into == nullptr) {
        seq->into = new Graph;
        seq->madeInto = true;
      }
      *graph = seq->into;
    }
  } else if (count) {
    *count = 0;
  }
  return kSuccess;
}
GPUSC_API int cudaStreamGetCaptureInfo_ptsz(void* stream, int* status, unsigned long long* id,
                                            void** graph, const void*** dependencies,
                                            const void** edgeData, size_t* count) {
  return cudaStreamGetCaptureInfo(perThread(stream), status, id, graph, dependencies, edgeData,
                                  count);
}

// Nodes the capture's next node depends on as well: nodes the program added to the graph being
// captured (cudaStreamGetCaptureInfo gives it out). The capture stays one sequence, so the next
// node also comes after the nodes captured before it, with cudaStreamSetCaptureDependencies too:
// an order the dependencies allow.
GPUSC_API int cudaStreamUpdateCaptureDependencies(void* stream, void* const* deps,
                                                  const abi::GraphEdgeData* edges, size_t count,
                                                  unsigned flags) {
  const char* fn = "cudaStreamUpdateCaptureDependencies";
  if (flags > 1)
    return fail(
        kErrorInvalidValue, fn,
        "flags " + std::to_string(flags) +
            ": cudaStreamAddCaptureDependencies (0) or cudaStreamSetCaptureDependencies (1)");
  if (count != 0 && deps == nullptr) return fail(kErrorInvalidValue, fn, "a null node list");
  for (size_t i = 0; edges != nullptr && i < count; ++i)
    if (edges[i].type != 0 || edges[i].from_port != 0 || edges[i].to_port != 0)
      return fail(kErrorNotSupported, fn, "edges other than full dependencies are not supported");
  const auto seq = capturing(stream);
  if (!seq) return fail(kErrorIllegalState, fn, "the stream is not capturing");
  std::lock_guard<std::mutex> lock(captures().mutex);
  if (seq->invalidated) return kErrorStreamCaptureInvalidated;
  const Graph* g = static_cast<const Graph*>(seq->into);
  for (size_t i = 0; i < count; ++i)
    if (g == nullptr || !g->holds(deps[i]))
      return fail(kErrorInvalidValue, fn,
                  "a node that is not one of the graph being captured (the captured nodes' "
                  "handles are not given out)");
  if (flags == 1) seq->pendingDeps.clear();
  seq->pendingDeps.insert(seq->pendingDeps.end(), deps, deps + count);
  return kSuccess;
}
GPUSC_API int cudaStreamUpdateCaptureDependencies_ptsz(void* stream, void* const* deps,
                                                       const abi::GraphEdgeData* edges,
                                                       size_t count, unsigned flags) {
  return cudaStreamUpdateCaptureDependencies(perThread(stream), deps, edges, count, flags);
}

// cudaGraphInstantiateFlagAutoFreeOnLaunch: a launch frees the graph's allocations that are
// still allocated from its last launch.
constexpr unsigned long long kInstantiateAutoFreeOnLaunch = 1;

GPUSC_API int cudaGraphInstantiate(void** exec, void* graph, unsigned long long flags) {
  if (exec == nullptr || graph == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphInstantiate", "a null graph or result");
  Graph& g = *static_cast<Graph*>(graph);
  auto x = std::make_unique<GraphExec>();
  if (!g.order(x->nodes))
    return fail(kErrorInvalidValue, "cudaGraphInstantiate",
                "the graph's dependencies form a cycle");
  if (g.hasMemoryNodes()) {
    if (!g.instantiation.expired())
      return fail(kErrorInvalidValue, "cudaGraphInstantiate",
                  "the graph has memory allocation or free nodes and an instantiation of it "
                  "exists: destroy that one first (one at a time, as CUDA allows)");
    x->instantiation = std::make_shared<int>(0);
    g.instantiation = x->instantiation;
  }
  if (!g.memory->outliving.empty()) {  // the launch allocates them first
    const bool autoFree = (flags & kInstantiateAutoFreeOnLaunch) != 0;
    x->ops.push_back([memory = g.memory, autoFree] { return memory->launch(autoFree); });
    x->opsBefore = 1;
  }
  if (!g.handles.empty()) {  // the conditional handles' defaults, before every node
    x->ops.push_back([handles = g.handles] { return setHandleDefaults(handles); });
    ++x->opsBefore;
  }
  for (const GraphNode* n : x->nodes) x->ops.push_back(nodeWork(*n));
  {
    std::unordered_map<const GraphNode*, size_t> at;
    for (size_t i = 0; i < x->nodes.size(); ++i) at.emplace(x->nodes[i], i);
    for (const GraphNode* n : x->nodes) {
      x->kinds.push_back(n->kind);
      std::vector<size_t> d;
      for (const GraphNode* p : n->deps) d.push_back(at.at(p));
      std::sort(d.begin(), d.end());
      x->deps.push_back(std::move(d));
    }
  }
  x->memory = g.memory;
  x->userReferences.replaceWith(g.userReferences);
  x->enabled.assign(x->nodes.size(), true);
  x->disabledOps.resize(x->nodes.size());
  x->flags = flags;
  *exec = x.release();
  return kSuccess;
}
GPUSC_API int cudaGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
  return cudaGraphInstantiate(exec, graph, flags);
}
// cudaGraphInstantiateWithParams: cudaGraphInstantiateWithFlags with its outcome in the
// parameters (cudaGraphInstantiateError for any failure; the upload flag and stream change
// nothing here, as cudaGraphUpload does not).
struct GraphInstantiateParams {
  unsigned long long flags;
  void* uploadStream;
  void* errNodeOut;
  int resultOut;  // cudaGraphInstantiateResult
};
GPUSC_API int cudaGraphInstantiateWithParams(void** exec, void* graph, GraphInstantiateParams* p) {
  if (p == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphInstantiateWithParams", "null parameters");
  const int e = cudaGraphInstantiate(exec, graph, p->flags);
  p->errNodeOut = nullptr;
  p->resultOut = e == kSuccess ? 0 : 1;
  return e;
}
GPUSC_API int cudaGraphInstantiateWithParams_ptsz(void** exec, void* graph,
                                                  GraphInstantiateParams* p) {
  return cudaGraphInstantiateWithParams(exec, graph, p);
}

// Replays the graph's work in order (into a capture, when `stream` is capturing: a graph
// launched in a capture becomes part of it).
GPUSC_API int cudaGraphLaunch(void* exec, void* stream) {
  GPUSC_STICKY();
  if (exec == nullptr) return fail(kErrorInvalidValue, "cudaGraphLaunch", "a null graph");
  const std::vector<Replay>& ops = static_cast<const GraphExec*>(exec)->ops;
  if (auto seq = capturing(stream)) {
    std::lock_guard<std::mutex> lock(captures().mutex);
    if (seq->invalidated) return refuseInvalidated("cudaGraphLaunch");
    const GraphExec& x = *static_cast<const GraphExec*>(exec);
    seq->ops.insert(seq->ops.end(), ops.begin(), ops.end());
    seq->kinds.resize(seq->ops.size() - x.kinds.size());  // the launch's own steps: empty
    seq->kinds.insert(seq->kinds.end(), x.kinds.begin(), x.kinds.end());
    return kSuccess;
  }
  for (const Replay& op : ops)
    if (int e = op(); e != kSuccess) return e;
  return kSuccess;
}
GPUSC_API int cudaGraphLaunch_ptsz(void* exec, void* stream) {
  return cudaGraphLaunch(exec, perThread(stream));
}
GPUSC_API int cudaGraphUpload(void* exec, void*) {
  return exec ? int(kSuccess) : fail(kErrorInvalidValue, "cudaGraphUpload", "a null graph");
}
GPUSC_API int cudaGraphUpload_ptsz(void* exec, void* stream) {
  return cudaGraphUpload(exec, perThread(stream));
}
GPUSC_API int cudaGraphDestroy(void* graph) {
  delete static_cast<Graph*>(graph);
  return kSuccess;
}
GPUSC_API int cudaGraphExecDestroy(void* exec) {
  delete static_cast<GraphExec*>(exec);
  return kSuccess;
}
// The nodes (a captured graph has one per captured operation), in the order they were added.
GPUSC_API int cudaGraphGetNodes(void* graph, void** nodes, size_t* count) {
  if (graph == nullptr || count == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphGetNodes", "a null graph or count");
  const Graph& g = *static_cast<const Graph*>(graph);
  if (nodes != nullptr)
    for (size_t i = 0; i < std::min(*count, g.nodes.size()); ++i) nodes[i] = g.nodes[i].get();
  *count = g.nodes.size();
  return kSuccess;
}

// ---- graphs built node by node ----

GPUSC_API int cudaGraphCreate(void** graph, unsigned flags) {
  if (graph == nullptr) return fail(kErrorInvalidValue, "cudaGraphCreate", "a null result");
  if (flags != 0) return fail(kErrorInvalidValue, "cudaGraphCreate", "flags must be 0");
  *graph = new Graph;
  return kSuccess;
}

namespace {

// Adds a node doing `op` after `deps` to `graph`, each checked; its handle goes to `node`.
int addNode(const char* function, void** node, void* graph, const void* const* deps, size_t count,
            Replay op, NodeKind kind) {
  if (node == nullptr || graph == nullptr)
    return fail(kErrorInvalidValue, function, "a null graph or result");
  Graph& g = *static_cast<Graph*>(graph);
  if (count != 0 && deps == nullptr)
    return fail(kErrorInvalidValue, function, "dependencies counted but not given");
  for (size_t i = 0; i < count; ++i)
    if (!g.holds(deps[i]))
      return fail(kErrorInvalidValue, function, "a dependency that is not a node of the graph");
  GraphNode& n = g.add(std::move(op), deps, count);
  n.kind = std::move(kind);
  *node = &n;
  return kSuccess;
}

// A kernel node's launch from its parameters (kernelParams; the `extra` form is not supported).
int kernelWork(const char* function, const abi::KernelNodeParams* p, Replay* work,
               bool cooperative = false) {
  if (p == nullptr) return fail(kErrorInvalidValue, function, "null parameters");
  if (p->kernelParams == nullptr && p->extra != nullptr)
    return fail(kErrorNotSupported, function,
                "kernel arguments in the 'extra' form are not supported: use kernelParams");
  return makeLaunch(p->func, {p->gridDim.x, p->gridDim.y, p->gridDim.z},
                    {p->blockDim.x, p->blockDim.y, p->blockDim.z}, p->kernelParams,
                    p->sharedMemBytes, nullptr, cooperative, work);
}

// A kernel node's launch again, cooperative or not (its cudaLaunchAttributeCooperative).
int kernelNodeWork(const KernelLaunchCopy& c, bool cooperative, Replay* work) {
  return makeLaunch(c.func, {c.grid.x, c.grid.y, c.grid.z}, {c.block.x, c.block.y, c.block.z},
                    const_cast<void**>(c.argPointers.data()), c.sharedBytes, nullptr, cooperative,
                    work);
}
bool cooperativeNode(const NodeKind& k) {
  const auto it = k.attributes.find(abi::kLaunchAttrCooperative);
  return it != k.attributes.end() && it->second.val.cooperative != 0;
}

// A kernel node's kind from its parameters (checked by kernelWork).
NodeKind kernelKind(const abi::KernelNodeParams* p) {
  NodeKind k = typeKind(kNodeKernel);
  k.kernel =
      launchCopy(p->func, {p->gridDim.x, p->gridDim.y, p->gridDim.z},
                 {p->blockDim.x, p->blockDim.y, p->blockDim.z}, p->kernelParams, p->sharedMemBytes);
  return k;
}

}  // namespace

GPUSC_API int cudaGraphAddKernelNode(void** node, void* graph, const void* const* deps,
                                     size_t count, const abi::KernelNodeParams* params) {
  Replay work;
  if (int e = kernelWork("cudaGraphAddKernelNode", params, &work); e != kSuccess) return e;
  return addNode("cudaGraphAddKernelNode", node, graph, deps, count, std::move(work),
                 kernelKind(params));
}

// New arguments or a new configuration for a kernel node of a graph (its later
// instantiations), or of an instantiation.
GPUSC_API int cudaGraphKernelNodeSetParams(void* node, const abi::KernelNodeParams* params) {
  if (node == nullptr || !static_cast<const GraphNode*>(node)->kind.kernel)
    return fail(kErrorInvalidValue, "cudaGraphKernelNodeSetParams",
                "not a kernel node (one cudaGraphAddKernelNode added or a capture recorded)");
  GraphNode& n = *static_cast<GraphNode*>(node);
  Replay work;  // a cooperative node's launch stays cooperative
  if (int e = kernelWork("cudaGraphKernelNodeSetParams", params, &work, cooperativeNode(n.kind));
      e != kSuccess)
    return e;
  NodeKind kind = kernelKind(params);
  kind.attributes = n.kind.attributes;
  n.op = std::move(work);
  n.kind = std::move(kind);
  return kSuccess;
}

GPUSC_API int cudaGraphExecKernelNodeSetParams(void* exec, void* node,
                                               const abi::KernelNodeParams* params) {
  if (exec == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphExecKernelNodeSetParams", "a null graph");
  GraphExec& x = *static_cast<GraphExec*>(exec);
  const auto at = std::find(x.nodes.begin(), x.nodes.end(), node);
  if (at == x.nodes.end() || !x.kinds[size_t(at - x.nodes.begin())].kernel)
    return fail(kErrorInvalidValue, "cudaGraphExecKernelNodeSetParams",
                "not a kernel node of the instantiated graph (one cudaGraphAddKernelNode added "
                "or a capture recorded)");
  const size_t place = size_t(at - x.nodes.begin());
  Replay work;  // a cooperative node's launch stays cooperative
  if (int e = kernelWork("cudaGraphExecKernelNodeSetParams", params, &work,
                         cooperativeNode(x.kinds[place]));
      e != kSuccess)
    return e;
  NodeKind kind = kernelKind(params);
  kind.attributes = x.kinds[place].attributes;
  setExecWork(x, place, std::move(work), std::move(kind));
  return kSuccess;
}

// cudaGraphExecUpdate: the instantiation takes the work of a graph with the same nodes (same
// count, order, kinds and dependencies); each node keeps its handle. Anything else, and graphs
// that allocate memory, is cudaErrorGraphExecUpdateFailure with the reason in resultInfo, as
// CUDA answers an update it cannot make (programs then instantiate the graph again).
struct GraphExecUpdateResultInfo {
  int result;  // cudaGraphExecUpdateResult
  void* errorNode;
  void* errorFromNode;
};
GPUSC_API int cudaGraphExecUpdate(void* exec, void* graph, GraphExecUpdateResultInfo* info) {
  constexpr int kUpdateSuccess = 0, kUpdateError = 1, kUpdateTopologyChanged = 2,
                kUpdateNodeTypeChanged = 3, kUpdateNotSupported = 6;
  constexpr int kErrorGraphExecUpdateFailure = 910;
  const char* fn = "cudaGraphExecUpdate";
  if (info) *info = {kUpdateSuccess, nullptr, nullptr};
  if (exec == nullptr || graph == nullptr)
    return fail(kErrorInvalidValue, fn, "a null graph or instantiation");
  GraphExec& x = *static_cast<GraphExec*>(exec);
  const Graph& g = *static_cast<const Graph*>(graph);
  auto refuse = [&](int result, const void* node, const std::string& why) {
    if (info) *info = {result, const_cast<void*>(node), nullptr};
    return fail(kErrorGraphExecUpdateFailure, fn, why);
  };
  std::vector<const GraphNode*> order;
  if (!g.order(order))
    return refuse(kUpdateError, nullptr, "the graph's dependencies form a cycle");
  if (!g.memory->blocks.empty() || !g.memory->outliving.empty() || !x.memory->blocks.empty() ||
      !x.memory->outliving.empty())
    return refuse(kUpdateNotSupported, nullptr, "graphs that allocate memory are not updated");
  if (order.size() != x.nodes.size())
    return refuse(kUpdateTopologyChanged, nullptr, "the graphs have different numbers of nodes");
  std::unordered_map<const GraphNode*, size_t> newAt;
  for (size_t i = 0; i < order.size(); ++i) newAt.emplace(order[i], i);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i]->kind.type != x.kinds[i].type ||
        (order[i]->kind.kernel != nullptr) != (x.kinds[i].kernel != nullptr))
      return refuse(kUpdateNodeTypeChanged, order[i], "a node's kind changed");
    std::vector<size_t> b;
    for (const GraphNode* d : order[i]->deps) b.push_back(newAt.at(d));
    std::sort(b.begin(), b.end());
    if (b != x.deps[i]) return refuse(kUpdateTopologyChanged, order[i], "the dependencies changed");
  }
  for (size_t i = 0; i < order.size(); ++i) setExecWork(x, i, nodeWork(*order[i]), order[i]->kind);
  x.userReferences.replaceWith(g.userReferences);
  return kSuccess;
}

GPUSC_API int cudaGraphAddMemcpyNode1D(void** node, void* graph, const void* const* deps,
                                       size_t count, void* dst, const void* src, size_t bytes,
                                       int kind) {
  return addNode(
      "cudaGraphAddMemcpyNode1D", node, graph, deps, count,
      [=] { return memcpyAny(dst, src, bytes, kind, "cudaGraphAddMemcpyNode1D"); },
      copyKind(dst, src, bytes, kind));
}

// Copies to and from symbols: plain copies of the symbol's bytes (symbolBytes).
GPUSC_API int cudaGraphAddMemcpyNodeToSymbol(void** node, void* graph, const void* const* deps,
                                             size_t count, const void* symbol, const void* src,
                                             size_t bytes, size_t offset, int kind) {
  const char* fn = "cudaGraphAddMemcpyNodeToSymbol";
  void* at = nullptr;
  if (int e = symbolCopyAt(symbol, offset, bytes, kind, true, fn, &at); e != kSuccess) return e;
  return cudaGraphAddMemcpyNode1D(node, graph, deps, count, at, src, bytes, kind);
}
GPUSC_API int cudaGraphAddMemcpyNodeFromSymbol(void** node, void* graph, const void* const* deps,
                                               size_t count, void* dst, const void* symbol,
                                               size_t bytes, size_t offset, int kind) {
  const char* fn = "cudaGraphAddMemcpyNodeFromSymbol";
  void* at = nullptr;
  if (int e = symbolCopyAt(symbol, offset, bytes, kind, false, fn, &at); e != kSuccess) return e;
  return cudaGraphAddMemcpyNode1D(node, graph, deps, count, dst, at, bytes, kind);
}

namespace {
int plan3D(const abi::Memcpy3DParms& p, const char* fn, Replay* op);  // with cudaMemcpy3D below
}  // namespace

// A copy as cudaMemcpy3D makes it: between pitched pointers and CUDA arrays.
GPUSC_API int cudaGraphAddMemcpyNode(void** node, void* graph, const void* const* deps,
                                     size_t count, const abi::Memcpy3DParms* p) {
  if (p == nullptr) return fail(kErrorInvalidValue, "cudaGraphAddMemcpyNode", "null parameters");
  Replay op;
  if (int e = plan3D(*p, "cudaGraphAddMemcpyNode", &op); e != kSuccess) return e;
  return addNode("cudaGraphAddMemcpyNode", node, graph, deps, count, std::move(op), copy3DKind(*p));
}

namespace {

// A memset node's work: `height` rows of `width` elements of 1, 2 or 4 bytes, `pitch` bytes
// apart, set to `value`.
int memsetWork(const char* function, const abi::MemsetParams* p, Replay* op) {
  if (p == nullptr) return fail(kErrorInvalidValue, function, "null parameters");
  if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
    return fail(kErrorInvalidValue, function, "elementSize must be 1, 2 or 4");
  const abi::MemsetParams m = *p;
  std::vector<uint8_t> row(m.width * m.elementSize);
  for (size_t i = 0; i < row.size(); ++i) row[i] = uint8_t(m.value >> (8 * (i % m.elementSize)));
  *op = [m, row, function] {
    for (size_t y = 0; y < std::max<size_t>(1, m.height); ++y)
      if (int e = memcpyAny(static_cast<uint8_t*>(m.dst) + y * m.pitch, row.data(), row.size(),
                            kHostToDevice, function);
          e != kSuccess)
        return e;
    return int(kSuccess);
  };
  return kSuccess;
}

int hostWork(const char* function, const abi::HostNodeParams* p, Replay* op) {
  if (p == nullptr || p->fn == nullptr) return fail(kErrorInvalidValue, function, "no function");
  const abi::HostNodeParams h = *p;
  *op = [h] {
    h.fn(h.userData);
    return int(kSuccess);
  };
  return kSuccess;
}

NodeKind memsetKindOf(const abi::MemsetParams& p) {
  return memsetKind(p.dst, p.pitch, p.value, p.elementSize, p.width, p.height);
}

}  // namespace

GPUSC_API int cudaGraphAddMemsetNode(void** node, void* graph, const void* const* deps,
                                     size_t count, const abi::MemsetParams* p) {
  Replay op;
  if (int e = memsetWork("cudaGraphAddMemsetNode", p, &op); e != kSuccess) return e;
  return addNode("cudaGraphAddMemsetNode", node, graph, deps, count, std::move(op),
                 memsetKindOf(*p));
}

GPUSC_API int cudaGraphAddHostNode(void** node, void* graph, const void* const* deps, size_t count,
                                   const abi::HostNodeParams* p) {
  Replay op;
  if (int e = hostWork("cudaGraphAddHostNode", p, &op); e != kSuccess) return e;
  return addNode("cudaGraphAddHostNode", node, graph, deps, count, std::move(op),
                 hostKind(p->fn, p->userData));
}

GPUSC_API int cudaGraphAddEmptyNode(void** node, void* graph, const void* const* deps,
                                    size_t count) {
  return addNode(
      "cudaGraphAddEmptyNode", node, graph, deps, count, [] { return int(kSuccess); },
      typeKind(kNodeEmpty));
}

namespace {

// A copy of `g`: its nodes with their work, parameters and edges, a child graph node's graph
// copied too (the memory a capture allocated and the conditional handles' words stay shared with
// the original, and are freed with the last of them; a conditional node's bodies too).
std::unique_ptr<Graph> cloneGraph(const Graph& g) {
  auto c = std::make_unique<Graph>();
  c->memory = g.memory;
  c->handles = g.handles;  // its conditional nodes read the same words
  c->userReferences.replaceWith(g.userReferences);
  for (const auto& n : g.nodes) {
    GraphNode& copy = c->add(n->op, nullptr, 0);
    copy.kind = n->kind;
    if (n->kind.child) {
      copy.kind.child = cloneGraph(*n->kind.child);
      copy.kind.child->embedded = true;
    }
    c->cloneOf[n.get()] = &copy;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const GraphNode* d : g.nodes[i]->deps) c->nodes[i]->deps.push_back(c->cloneOf.at(d));
  return c;
}

// A child graph node runs a graph of its own: a copy of `child` (cudaGraphChildGraphOwnershipClone,
// later changes to `child` do not reach it), or `child` itself, which the node then owns
// (cudaGraphChildGraphOwnershipMove: the program must not destroy it).
int addChildGraphNode(void** node, void* graph, const void* const* deps, size_t count, void* child,
                      int ownership, const char* fn) {
  if (child == nullptr) return fail(kErrorInvalidValue, fn, "a null child graph");
  if (ownership != 0 && ownership != 1)
    return fail(kErrorInvalidValue, fn,
                "ownership " + std::to_string(ownership) +
                    ": cudaGraphChildGraphOwnershipClone (0) or Move (1)");
  Graph& c = *static_cast<Graph*>(child);
  if (child == graph) return fail(kErrorInvalidValue, fn, "a graph cannot be its own child");
  std::vector<const GraphNode*> order;
  if (!c.order(order))
    return fail(kErrorInvalidValue, fn, "the child graph's dependencies form a cycle");
  if (ownership == 0 && c.hasMemoryNodes())
    return fail(kErrorInvalidValue, fn,
                "the child graph has memory allocation or free nodes: it can be a child only "
                "when its ownership moves to the parent (cudaGraphChildGraphOwnershipMove)");
  if (ownership == 1 && c.embedded)
    return fail(kErrorInvalidValue, fn, "the graph is a child graph node's already");
  std::shared_ptr<Graph> own(ownership == 1 ? &c : cloneGraph(c).release());
  own->embedded = true;
  NodeKind kind = typeKind(kNodeGraph);
  kind.child = own;
  return addNode(fn, node, graph, deps, count, childWork(*own), std::move(kind));
}

}  // namespace

GPUSC_API int cudaGraphAddChildGraphNode(void** node, void* graph, const void* const* deps,
                                         size_t count, void* child) {
  return addChildGraphNode(node, graph, deps, count, child, 0, "cudaGraphAddChildGraphNode");
}

// The node's own graph, not a copy: changes to it reach the node (in instantiations made after).
GPUSC_API int cudaGraphChildGraphNodeGetGraph(void* node, void** graph) {
  const char* fn = "cudaGraphChildGraphNodeGetGraph";
  if (node == nullptr || graph == nullptr)
    return fail(kErrorInvalidValue, fn, "a null node or result");
  const GraphNode& n = *static_cast<const GraphNode*>(node);
  if (n.kind.type != kNodeGraph || !n.kind.child)
    return fail(kErrorInvalidValue, fn, "not a child graph node");
  *graph = n.kind.child.get();
  return kSuccess;
}

// ---- memory allocation and free nodes ----
//
// An allocation node's memory is allocated when the node is made and keeps its address for the
// graph's life, as CUDA's does. Freed by a free node of the same graph, it is the graph's own
// (GraphMemory::blocks); otherwise it outlives each launch, as a capture's cudaMallocAsync does
// (GraphMemory::outliving), until the program frees it.

GPUSC_API int cudaGraphAddMemAllocNode(void** node, void* graph, const void* const* deps,
                                       size_t count, abi::MemAllocNodeParams* p) {
  const char* fn = "cudaGraphAddMemAllocNode";
  if (p == nullptr || graph == nullptr)
    return fail(kErrorInvalidValue, fn, "a null graph or parameters");
  Graph& g = *static_cast<Graph*>(graph);
  if (g.embedded)
    return fail(kErrorInvalidValue, fn,
                "the graph is a child graph node's: memory nodes cannot be added to it");
  if (p->bytesize == 0) return fail(kErrorInvalidValue, fn, "an allocation of 0 bytes");
  if (p->poolProps.allocType != kAllocationPinned)
    return fail(kErrorInvalidValue, fn,
                "poolProps.allocType " + std::to_string(p->poolProps.allocType) +
                    ": graph allocations are pinned device memory (cudaMemAllocationTypePinned)");
  if (p->poolProps.handleTypes != 0)
    return fail(kErrorInvalidValue, fn, "poolProps.handleTypes must be cudaMemHandleTypeNone");
  if (int e = checkPoolLocation(&p->poolProps.location, fn); e != kSuccess) return e;
  if (p->accessDescCount != 0 && p->accessDescs == nullptr)
    return fail(kErrorInvalidValue, fn, "accessDescCount without accessDescs");
  for (size_t i = 0; i < p->accessDescCount; ++i)
    if (int e = checkPoolLocation(&p->accessDescs[i].location, fn); e != kSuccess) return e;
  void* dptr = nullptr;
  if (int e = cudaMalloc(&dptr, p->bytesize); e != kSuccess) return e;
  NodeKind kind = allocKind(dptr, p->bytesize);
  kind.alloc.poolProps = p->poolProps;
  kind.access = std::make_shared<const std::vector<abi::MemAccessDesc>>(
      p->accessDescs, p->accessDescs + p->accessDescCount);
  if (int e = addNode(
          fn, node, graph, deps, count, [] { return int(kSuccess); }, std::move(kind));
      e != kSuccess) {
    freeAny(dptr, wire::Op::Free);
    return e;
  }
  g.memory->hold(dptr, p->bytesize);
  g.memory->outliving.push_back(dptr);
  {
    OutlivingAllocations& o = outlivingAllocations();
    std::lock_guard<std::mutex> lock(o.mutex);
    o.allocated[dptr] = false;
  }
  p->dptr = dptr;
  return kSuccess;
}

GPUSC_API int cudaGraphAddMemFreeNode(void** node, void* graph, const void* const* deps,
                                      size_t count, void* dptr) {
  const char* fn = "cudaGraphAddMemFreeNode";
  if (graph == nullptr) return fail(kErrorInvalidValue, fn, "a null graph");
  Graph& g = *static_cast<Graph*>(graph);
  if (g.embedded)
    return fail(kErrorInvalidValue, fn,
                "the graph is a child graph node's: memory nodes cannot be added to it");
  GraphMemory& m = *g.memory;
  if (std::find(m.blocks.begin(), m.blocks.end(), dptr) != m.blocks.end())
    return fail(kErrorInvalidValue, fn, "the graph frees that allocation already");
  const auto own = std::find(m.outliving.begin(), m.outliving.end(), dptr);
  if (own != m.outliving.end()) {  // the graph's own allocation: freed in the graph
    if (int e = addNode(
            fn, node, graph, deps, count, [] { return int(kSuccess); }, freeKind(dptr));
        e != kSuccess)
      return e;
    m.outliving.erase(own);
    m.blocks.push_back(dptr);
    OutlivingAllocations& o = outlivingAllocations();
    std::lock_guard<std::mutex> lock(o.mutex);
    o.allocated.erase(dptr);
    return kSuccess;
  }
  {
    OutlivingAllocations& o = outlivingAllocations();
    std::lock_guard<std::mutex> lock(o.mutex);
    if (o.allocated.count(dptr) == 0)
      return fail(kErrorInvalidValue, fn,
                  "not an address an allocation node returned (or its graph frees it itself)");
  }
  // Another graph's allocation that outlives its launches: freed when this graph runs.
  return addNode(
      fn, node, graph, deps, count, [dptr] { return freeDevice(dptr, "cudaGraphLaunch"); },
      freeKind(dptr));
}

GPUSC_API int cudaGraphMemAllocNodeGetParams(void* node, abi::MemAllocNodeParams* p) {
  const char* fn = "cudaGraphMemAllocNodeGetParams";
  if (node == nullptr || p == nullptr) return fail(kErrorInvalidValue, fn, "a null node or result");
  const NodeKind& k = static_cast<const GraphNode*>(node)->kind;
  if (k.type != kNodeMemAlloc) return fail(kErrorInvalidValue, fn, "not a memory allocation node");
  *p = k.alloc;
  p->accessDescs = k.access && !k.access->empty() ? k.access->data() : nullptr;
  p->accessDescCount = k.access ? k.access->size() : 0;
  return kSuccess;
}

GPUSC_API int cudaGraphMemFreeNodeGetParams(void* node, void* dptr) {
  const char* fn = "cudaGraphMemFreeNodeGetParams";
  if (node == nullptr || dptr == nullptr)
    return fail(kErrorInvalidValue, fn, "a null node or result");
  const NodeKind& k = static_cast<const GraphNode*>(node)->kind;
  if (k.type != kNodeMemFree) return fail(kErrorInvalidValue, fn, "not a memory free node");
  std::memcpy(dptr, &k.freed, sizeof k.freed);
  return kSuccess;
}

namespace {
// cudaGraphMemAttributeType.
constexpr int kGraphMemUsedCurrent = 0, kGraphMemUsedHigh = 1, kGraphMemReservedCurrent = 2,
              kGraphMemReservedHigh = 3;
}  // namespace

// The graphs' memory: what the graphs that exist hold (gpusc reserves no more than it uses, so
// the reserved figures are the used ones), and its high watermark.
GPUSC_API int cudaDeviceGetGraphMemAttribute(int device, int attr, void* value) {
  const char* fn = "cudaDeviceGetGraphMemAttribute";
  if (int e = checkDevice(device, fn); e != kSuccess) return e;
  if (value == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  GraphMemoryUse& u = graphMemoryUse();
  std::lock_guard<std::mutex> lock(u.mutex);
  uint64_t v = 0;
  switch (attr) {
    case kGraphMemUsedCurrent:
    case kGraphMemReservedCurrent:
      v = u.current;
      break;
    case kGraphMemUsedHigh:
    case kGraphMemReservedHigh:
      v = u.high;
      break;
    default:
      return fail(kErrorInvalidValue, fn, "attribute " + std::to_string(attr) + " is not one");
  }
  std::memcpy(value, &v, sizeof v);
  return kSuccess;
}

GPUSC_API int cudaDeviceSetGraphMemAttribute(int device, int attr, void* value) {
  const char* fn = "cudaDeviceSetGraphMemAttribute";
  if (int e = checkDevice(device, fn); e != kSuccess) return e;
  if (value == nullptr) return fail(kErrorInvalidValue, fn, "a null value");
  uint64_t v = 0;
  std::memcpy(&v, value, sizeof v);
  if ((attr != kGraphMemUsedHigh && attr != kGraphMemReservedHigh) || v != 0)
    return fail(kErrorInvalidValue, fn,
                "only the high watermarks (cudaGraphMemAttrUsedMemHigh, ReservedMemHigh) can be "
                "set, and only to 0");
  GraphMemoryUse& u = graphMemoryUse();
  std::lock_guard<std::mutex> lock(u.mutex);
  u.high = u.current;
  return kSuccess;
}

// Nothing is reserved beyond what the graphs hold, so there is nothing to give back.
GPUSC_API int cudaDeviceGraphMemTrim(int device) {
  return checkDevice(device, "cudaDeviceGraphMemTrim");
}

// Edges from[i] -> to[i] between nodes of the graph (edge data: the default kind only).
GPUSC_API int cudaGraphAddDependencies(void* graph, const void* const* from, const void* const* to,
                                       const abi::GraphEdgeData* edges, size_t count) {
  if (graph == nullptr || (count != 0 && (from == nullptr || to == nullptr)))
    return fail(kErrorInvalidValue, "cudaGraphAddDependencies", "a null graph or node list");
  Graph& g = *static_cast<Graph*>(graph);
  for (size_t i = 0; i < count; ++i) {
    if (!g.holds(from[i]) || !g.holds(to[i]))
      return fail(kErrorInvalidValue, "cudaGraphAddDependencies", "a node not of the graph");
    if (edges != nullptr &&
        (edges[i].type != 0 || edges[i].from_port != 0 || edges[i].to_port != 0))
      return fail(kErrorNotSupported, "cudaGraphAddDependencies",
                  "edges other than full dependencies are not supported");
  }
  for (size_t i = 0; i < count; ++i)
    static_cast<GraphNode*>(const_cast<void*>(to[i]))
        ->deps.push_back(static_cast<const GraphNode*>(from[i]));
  return kSuccess;
}

// ---- reading graphs back, changing and copying them ----

GPUSC_API int cudaEventRecord(void* event, void* stream);

namespace {

GraphNode* nodeOf(void* node) { return static_cast<GraphNode*>(node); }

// Writes up to *count of `list` to `out` (when given) and the list's size to *count: CUDA's way of
// returning a list (ask for the count with a null array, then for the nodes).
template <class T>
int giveList(const char* function, const std::vector<T>& list, T* out, size_t* count) {
  if (count == nullptr) return fail(kErrorInvalidValue, function, "a null count");
  if (out != nullptr)
    for (size_t i = 0; i < std::min(*count, list.size()); ++i) out[i] = list[i];
  *count = list.size();
  return kSuccess;
}

// A node's parameters of `type`, or the error for a node of another type.
const NodeKind* kindOf(void* node, int type, const char* function, const char* what) {
  if (node == nullptr || nodeOf(node)->kind.type != type) {
    fail(kErrorInvalidValue, function, std::string("not a ") + what + " node");
    return nullptr;
  }
  return &nodeOf(node)->kind;
}

// The place of `node` in an instantiation, or the error.
int execPlace(void* exec, const void* node, const char* function, size_t* place) {
  if (exec == nullptr) return fail(kErrorInvalidValue, function, "a null instantiation");
  const GraphExec& x = *static_cast<const GraphExec*>(exec);
  const auto at = std::find(x.nodes.begin(), x.nodes.end(), node);
  if (at == x.nodes.end())
    return fail(kErrorInvalidValue, function, "not a node of the instantiated graph");
  *place = size_t(at - x.nodes.begin());
  return kSuccess;
}

// The events graph nodes record and wait for: a wait is nothing here (work runs in issue order),
// a record marks the simulated time when the work before it ended, as cudaEventRecord does.
Replay eventRecordWork(void* event) {
  return [event] { return cudaEventRecord(event, nullptr); };
}

}  // namespace

GPUSC_API int cudaGraphNodeGetType(void* node, int* type) {
  if (node == nullptr || type == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphNodeGetType", "a null node or result");
  *type = nodeOf(node)->kind.type;
  return kSuccess;
}

GPUSC_API int cudaGraphKernelNodeGetParams(void* node, abi::KernelNodeParams* p) {
  const NodeKind* k = kindOf(node, kNodeKernel, "cudaGraphKernelNodeGetParams", "kernel");
  if (k == nullptr) return kErrorInvalidValue;
  if (p == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphKernelNodeGetParams", "a null result");
  if (!k->kernel)
    return fail(kErrorNotSupported, "cudaGraphKernelNodeGetParams",
                "the node's launch parameters are not kept");
  const KernelLaunchCopy& c = *k->kernel;
  p->func = c.func;
  p->gridDim = c.grid;
  p->blockDim = c.block;
  p->sharedMemBytes = c.sharedBytes;
  p->kernelParams = const_cast<void**>(c.argPointers.data());
  p->extra = nullptr;
  return kSuccess;
}

namespace {
// The kernel node `node` with `attributes` (checked as cudaLaunchKernelExC checks a launch's; the
// cooperative one makes its launch cooperative).
int setKernelNodeAttributes(void* node, std::map<int, abi::LaunchAttribute> attributes,
                            const char* fn) {
  const NodeKind* k = kindOf(node, kNodeKernel, fn, "kernel");
  if (k == nullptr) return kErrorInvalidValue;
  if (!k->kernel) return fail(kErrorInvalidValue, fn, "the node's launch parameters are not kept");
  for (const auto& [id, a] : attributes)
    if (const std::string why = unsupportedAttribute(a); !why.empty())
      return fail(kErrorNotSupported, fn, why);
  NodeKind changed = *k;
  changed.attributes = std::move(attributes);
  Replay work;
  if (int e = kernelNodeWork(*changed.kernel, cooperativeNode(changed), &work); e != kSuccess)
    return e;
  nodeOf(node)->op = std::move(work);
  nodeOf(node)->kind = std::move(changed);
  return kSuccess;
}
}  // namespace

// A kernel node's launch attributes: those cudaLaunchKernelExC takes (an access-policy window,
// the priority and memory synchronisation domains are hints that change no result here; the
// cooperative attribute makes the node's launch cooperative), read back as set.
GPUSC_API int cudaGraphKernelNodeSetAttribute(void* node, int id, const void* value) {
  const char* fn = "cudaGraphKernelNodeSetAttribute";
  if (value == nullptr) return fail(kErrorInvalidValue, fn, "a null value");
  const NodeKind* k = kindOf(node, kNodeKernel, fn, "kernel");
  if (k == nullptr) return kErrorInvalidValue;
  abi::LaunchAttribute a{};
  a.id = id;
  std::memcpy(&a.val, value, sizeof a.val);
  auto attributes = k->attributes;
  attributes[id] = a;
  return setKernelNodeAttributes(node, std::move(attributes), fn);
}
GPUSC_API int cudaGraphKernelNodeGetAttribute(void* node, int id, void* value) {
  const char* fn = "cudaGraphKernelNodeGetAttribute";
  if (value == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  const NodeKind* k = kindOf(node, kNodeKernel, fn, "kernel");
  if (k == nullptr) return kErrorInvalidValue;
  abi::LaunchAttribute a{};
  if (const auto it = k->attributes.find(id); it != k->attributes.end()) a = it->second;
  std::memcpy(value, &a.val, sizeof a.val);
  return kSuccess;
}
GPUSC_API int cudaGraphKernelNodeCopyAttributes(void* dst, void* src) {
  const char* fn = "cudaGraphKernelNodeCopyAttributes";
  const NodeKind* from = kindOf(src, kNodeKernel, fn, "kernel");
  if (from == nullptr) return kErrorInvalidValue;
  return setKernelNodeAttributes(dst, from->attributes, fn);
}

GPUSC_API int cudaGraphMemcpyNodeGetParams(void* node, abi::Memcpy3DParms* p) {
  const NodeKind* k = kindOf(node, kNodeMemcpy, "cudaGraphMemcpyNodeGetParams", "memcpy");
  if (k == nullptr) return kErrorInvalidValue;
  if (p == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphMemcpyNodeGetParams", "a null result");
  if (!k->copyKnown)
    return fail(kErrorNotSupported, "cudaGraphMemcpyNodeGetParams",
                "the node copies to or from a CUDA array region, whose parameters "
                "are not kept");
  *p = k->copy;
  return kSuccess;
}

GPUSC_API int cudaGraphMemsetNodeGetParams(void* node, abi::MemsetParams* p) {
  const NodeKind* k = kindOf(node, kNodeMemset, "cudaGraphMemsetNodeGetParams", "memset");
  if (k == nullptr) return kErrorInvalidValue;
  if (p == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphMemsetNodeGetParams", "a null result");
  *p = k->memset;
  return kSuccess;
}

GPUSC_API int cudaGraphHostNodeGetParams(void* node, abi::HostNodeParams* p) {
  const NodeKind* k = kindOf(node, kNodeHost, "cudaGraphHostNodeGetParams", "host");
  if (k == nullptr) return kErrorInvalidValue;
  if (p == nullptr) return fail(kErrorInvalidValue, "cudaGraphHostNodeGetParams", "a null result");
  *p = k->host;
  return kSuccess;
}

GPUSC_API int cudaGraphMemcpyNodeSetParams(void* node, const abi::Memcpy3DParms* p) {
  const char* fn = "cudaGraphMemcpyNodeSetParams";
  if (kindOf(node, kNodeMemcpy, fn, "memcpy") == nullptr) return kErrorInvalidValue;
  if (p == nullptr) return fail(kErrorInvalidValue, fn, "null parameters");
  Replay op;
  if (int e = plan3D(*p, fn, &op); e != kSuccess) return e;
  nodeOf(node)->op = std::move(op);
  nodeOf(node)->kind = copy3DKind(*p);
  return kSuccess;
}

GPUSC_API int cudaGraphMemcpyNodeSetParams1D(void* node, void* dst, const void* src, size_t bytes,
                                             int kind) {
  const char* fn = "cudaGraphMemcpyNodeSetParams1D";
  if (kindOf(node, kNodeMemcpy, fn, "memcpy") == nullptr) return kErrorInvalidValue;
  nodeOf(node)->op = [=] { return memcpyAny(dst, src, bytes, kind, fn); };
  nodeOf(node)->kind = copyKind(dst, src, bytes, kind);
  return kSuccess;
}

GPUSC_API int cudaGraphMemcpyNodeSetParamsToSymbol(void* node, const void* symbol, const void* src,
                                                   size_t bytes, size_t offset, int kind) {
  const char* fn = "cudaGraphMemcpyNodeSetParamsToSymbol";
  void* at = nullptr;
  if (int e = symbolCopyAt(symbol, offset, bytes, kind, true, fn, &at); e != kSuccess) return e;
  return cudaGraphMemcpyNodeSetParams1D(node, at, src, bytes, kind);
}
GPUSC_API int cudaGraphMemcpyNodeSetParamsFromSymbol(void* node, void* dst, const void* symbol,
                                                     size_t bytes, size_t offset, int kind) {
  const char* fn = "cudaGraphMemcpyNodeSetParamsFromSymbol";
  void* at = nullptr;
  if (int e = symbolCopyAt(symbol, offset, bytes, kind, false, fn, &at); e != kSuccess) return e;
  return cudaGraphMemcpyNodeSetParams1D(node, dst, at, bytes, kind);
}

GPUSC_API int cudaGraphMemsetNodeSetParams(void* node, const abi::MemsetParams* p) {
  const char* fn = "cudaGraphMemsetNodeSetParams";
  if (kindOf(node, kNodeMemset, fn, "memset") == nullptr) return kErrorInvalidValue;
  Replay op;
  if (int e = memsetWork(fn, p, &op); e != kSuccess) return e;
  nodeOf(node)->op = std::move(op);
  nodeOf(node)->kind = memsetKindOf(*p);
  return kSuccess;
}

GPUSC_API int cudaGraphHostNodeSetParams(void* node, const abi::HostNodeParams* p) {
  const char* fn = "cudaGraphHostNodeSetParams";
  if (kindOf(node, kNodeHost, fn, "host") == nullptr) return kErrorInvalidValue;
  Replay op;
  if (int e = hostWork(fn, p, &op); e != kSuccess) return e;
  nodeOf(node)->op = std::move(op);
  nodeOf(node)->kind = hostKind(p->fn, p->userData);
  return kSuccess;
}

GPUSC_API int cudaGraphExecMemcpyNodeSetParams(void* exec, void* node,
                                               const abi::Memcpy3DParms* p) {
  const char* fn = "cudaGraphExecMemcpyNodeSetParams";
  size_t place = 0;
  if (int e = execPlace(exec, node, fn, &place); e != kSuccess) return e;
  GraphExec& x = *static_cast<GraphExec*>(exec);
  if (x.kinds[place].type != kNodeMemcpy || p == nullptr)
    return fail(kErrorInvalidValue, fn, "not a memcpy node, or null parameters");
  Replay op;
  if (int e = plan3D(*p, fn, &op); e != kSuccess) return e;
  setExecWork(x, place, std::move(op), copy3DKind(*p));
  return kSuccess;
}

GPUSC_API int cudaGraphExecMemcpyNodeSetParams1D(void* exec, void* node, void* dst, const void* src,
                                                 size_t bytes, int kind) {
  const char* fn = "cudaGraphExecMemcpyNodeSetParams1D";
  size_t place = 0;
  if (int e = execPlace(exec, node, fn, &place); e != kSuccess) return e;
  GraphExec& x = *static_cast<GraphExec*>(exec);
  if (x.kinds[place].type != kNodeMemcpy) return fail(kErrorInvalidValue, fn, "not a memcpy node");
  setExecWork(
      x, place, [=] { return memcpyAny(dst, src, bytes, kind, fn); },
      copyKind(dst, src, bytes, kind));
  return kSuccess;
}

GPUSC_API int cudaGraphExecMemcpyNodeSetParamsToSymbol(void* exec, void* node, const void* symbol,
                                                       const void* src, size_t bytes, size_t offset,
                                                       int kind) {
  const char* fn = "cudaGraphExecMemcpyNodeSetParamsToSymbol";
  void* at = nullptr;
  if (int e = symbolCopyAt(symbol, offset, bytes, kind, true, fn, &at); e != kSuccess) return e;
  return cudaGraphExecMemcpyNodeSetParams1D(exec, node, at, src, bytes, kind);
}
GPUSC_API int cudaGraphExecMemcpyNodeSetParamsFromSymbol(void* exec, void* node, void* dst,
                                                         const void* symbol, size_t bytes,
                                                         size_t offset, int kind) {
  const char* fn = "cudaGraphExecMemcpyNodeSetParamsFromSymbol";
  void* at = nullptr;
  if (int e = symbolCopyAt(symbol, offset, bytes, kind, false, fn, &at); e != kSuccess) return e;
  return cudaGraphExecMemcpyNodeSetParams1D(exec, node, dst, at, bytes, kind);
}

GPUSC_API int cudaGraphExecMemsetNodeSetParams(void* exec, void* node, const abi::MemsetParams* p) {
  const char* fn = "cudaGraphExecMemsetNodeSetParams";
  size_t place = 0;
  if (int e = execPlace(exec, node, fn, &place); e != kSuccess) return e;
  GraphExec& x = *static_cast<GraphExec*>(exec);
  if (x.kinds[place].type != kNodeMemset) return fail(kErrorInvalidValue, fn, "not a memset node");
  Replay op;
  if (int e = memsetWork(fn, p, &op); e != kSuccess) return e;
  setExecWork(x, place, std::move(op), memsetKindOf(*p));
  return kSuccess;
}

GPUSC_API int cudaGraphExecHostNodeSetParams(void* exec, void* node, const abi::HostNodeParams* p) {
  const char* fn = "cudaGraphExecHostNodeSetParams";
  size_t place = 0;
  if (int e = execPlace(exec, node, fn, &place); e != kSuccess) return e;
  GraphExec& x = *static_cast<GraphExec*>(exec);
  if (x.kinds[place].type != kNodeHost) return fail(kErrorInvalidValue, fn, "not a host node");
  Replay op;
  if (int e = hostWork(fn, p, &op); e != kSuccess) return e;
  setExecWork(x, place, std::move(op), hostKind(p->fn, p->userData));
  return kSuccess;
}

GPUSC_API int cudaGraphAddEventRecordNode(void** node, void* graph, const void* const* deps,
                                          size_t count, void* event) {
  if (event == nullptr)
    return fail(kErrorInvalidResourceHandle, "cudaGraphAddEventRecordNode", "a null event");
  NodeKind k = typeKind(kNodeEventRecord);
  k.event = event;
  return addNode("cudaGraphAddEventRecordNode", node, graph, deps, count, eventRecordWork(event),
                 std::move(k));
}

GPUSC_API int cudaGraphAddEventWaitNode(void** node, void* graph, const void* const* deps,
                                        size_t count, void* event) {
  if (event == nullptr)
    return fail(kErrorInvalidResourceHandle, "cudaGraphAddEventWaitNode", "a null event");
  NodeKind k = typeKind(kNodeWaitEvent);
  k.event = event;
  return addNode(
      "cudaGraphAddEventWaitNode", node, graph, deps, count, [] { return int(kSuccess); },
      std::move(k));
}

namespace {

int eventOfNode(void* node, int type, const char* fn, void** event) {
  const NodeKind* k =
      kindOf(node, type, fn, type == kNodeEventRecord ? "event record" : "event wait");
  if (k == nullptr) return kErrorInvalidValue;
  if (event == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  *event = k->event;
  return kSuccess;
}

int setEventOfNode(void* node, int type, const char* fn, void* event) {
  if (kindOf(node, type, fn, type == kNodeEventRecord ? "event record" : "event wait") == nullptr)
    return kErrorInvalidValue;
  if (event == nullptr) return fail(kErrorInvalidResourceHandle, fn, "a null event");
  nodeOf(node)->kind.event = event;
  if (type == kNodeEventRecord) nodeOf(node)->op = eventRecordWork(event);
  return kSuccess;
}

int setExecEvent(void* exec, void* node, int type, const char* fn, void* event) {
  size_t place = 0;
  if (int e = execPlace(exec, node, fn, &place); e != kSuccess) return e;
  GraphExec& x = *static_cast<GraphExec*>(exec);
  if (x.kinds[place].type != type) return fail(kErrorInvalidValue, fn, "not a node of that kind");
  if (event == nullptr) return fail(kErrorInvalidResourceHandle, fn, "a null event");
  NodeKind k = x.kinds[place];
  k.event = event;
  setExecWork(
      x, place, type == kNodeEventRecord ? eventRecordWork(event) : [] { return int(kSuccess); },
      std::move(k));
  return kSuccess;
}

}  // namespace

GPUSC_API int cudaGraphEventRecordNodeGetEvent(void* node, void** event) {
  return eventOfNode(node, kNodeEventRecord, "cudaGraphEventRecordNodeGetEvent", event);
}
GPUSC_API int cudaGraphEventWaitNodeGetEvent(void* node, void** event) {
  return eventOfNode(node, kNodeWaitEvent, "cudaGraphEventWaitNodeGetEvent", event);
}
GPUSC_API int cudaGraphEventRecordNodeSetEvent(void* node, void* event) {
  return setEventOfNode(node, kNodeEventRecord, "cudaGraphEventRecordNodeSetEvent", event);
}
GPUSC_API int cudaGraphEventWaitNodeSetEvent(void* node, void* event) {
  return setEventOfNode(node, kNodeWaitEvent, "cudaGraphEventWaitNodeSetEvent", event);
}
GPUSC_API int cudaGraphExecEventRecordNodeSetEvent(void* exec, void* node, void* event) {
  return setExecEvent(exec, node, kNodeEventRecord, "cudaGraphExecEventRecordNodeSetEvent", event);
}
GPUSC_API int cudaGraphExecEventWaitNodeSetEvent(void* exec, void* node, void* event) {
  return setExecEvent(exec, node, kNodeWaitEvent, "cudaGraphExecEventWaitNodeSetEvent", event);
}

GPUSC_API int cudaGraphGetRootNodes(void* graph, void** nodes, size_t* count) {
  if (graph == nullptr) return fail(kErrorInvalidValue, "cudaGraphGetRootNodes", "a null graph");
  std::vector<void*> roots;
  for (const auto& n : static_cast<const Graph*>(graph)->nodes)
    if (n->deps.empty()) roots.push_back(n.get());
  return giveList("cudaGraphGetRootNodes", roots, nodes, count);
}

// Every edge from[i] -> to[i], the edges into each node in the order the nodes were added (edge
// data: the default kind, all zero).
GPUSC_API int cudaGraphGetEdges(void* graph, void** from, void** to, abi::GraphEdgeData* edges,
                                size_t* count) {
  if (graph == nullptr || count == nullptr || (from == nullptr) != (to == nullptr))
    return fail(kErrorInvalidValue, "cudaGraphGetEdges", "a null graph or count, or one list");
  std::vector<void*> f, t;
  for (const auto& n : static_cast<const Graph*>(graph)->nodes)
    for (const GraphNode* d : n->deps) {
      f.push_back(const_cast<GraphNode*>(d));
      t.push_back(n.get());
    }
  if (from != nullptr) {
    for (size_t i = 0; i < std::min(*count, f.size()); ++i) {
      from[i] = f[i];
      to[i] = t[i];
      if (edges != nullptr) edges[i] = abi::GraphEdgeData{};
    }
  }
  *count = f.size();
  return kSuccess;
}

GPUSC_API int cudaGraphNodeGetDependencies(void* node, void** deps, abi::GraphEdgeData* edges,
                                           size_t* count) {
  if (node == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphNodeGetDependencies", "a null node");
  std::vector<void*> list;
  for (const GraphNode* d : nodeOf(node)->deps) list.push_back(const_cast<GraphNode*>(d));
  if (edges != nullptr && deps != nullptr && count != nullptr)
    for (size_t i = 0; i < std::min(*count, list.size()); ++i) edges[i] = abi::GraphEdgeData{};
  return giveList("cudaGraphNodeGetDependencies", list, deps, count);
}

GPUSC_API int cudaGraphNodeGetDependentNodes(void* node, void** dependents,
                                             abi::GraphEdgeData* edges, size_t* count) {
  if (node == nullptr || nodeOf(node)->owner == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphNodeGetDependentNodes", "a null node");
  std::vector<void*> list;
  for (const auto& n : nodeOf(node)->owner->nodes)
    for (const GraphNode* d : n->deps)
      if (d == node) list.push_back(n.get());
  if (edges != nullptr && dependents != nullptr && count != nullptr)
    for (size_t i = 0; i < std::min(*count, list.size()); ++i) edges[i] = abi::GraphEdgeData{};
  return giveList("cudaGraphNodeGetDependentNodes", list, dependents, count);
}

GPUSC_API int cudaGraphRemoveDependencies(void* graph, const void* const* from,
                                          const void* const* to, const abi::GraphEdgeData* edges,
                                          size_t count) {
  const char* fn = "cudaGraphRemoveDependencies";
  if (graph == nullptr || (count != 0 && (from == nullptr || to == nullptr)))
    return fail(kErrorInvalidValue, fn, "a null graph or node list");
  Graph& g = *static_cast<Graph*>(graph);
  if (g.hasMemoryNodes())
    return fail(kErrorInvalidValue, fn,
                "the graph has memory allocation or free nodes: its edges cannot be removed");
  for (size_t i = 0; i < count; ++i) {
    if (!g.holds(from[i]) || !g.holds(to[i]))
      return fail(kErrorInvalidValue, fn, "a node not of the graph");
    const auto& d = static_cast<const GraphNode*>(to[i])->deps;
    if (std::find(d.begin(), d.end(), from[i]) == d.end())
      return fail(kErrorInvalidValue, fn, "an edge the graph does not have");
    if (edges != nullptr &&
        (edges[i].type != 0 || edges[i].from_port != 0 || edges[i].to_port != 0))
      return fail(kErrorInvalidValue, fn, "an edge the graph does not have (its edge data)");
  }
  for (size_t i = 0; i < count; ++i) {
    auto& d = static_cast<GraphNode*>(const_cast<void*>(to[i]))->deps;
    d.erase(std::find(d.begin(), d.end(), from[i]));
  }
  return kSuccess;
}

GPUSC_API int cudaGraphDestroyNode(void* node) {
  if (node == nullptr || nodeOf(node)->owner == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphDestroyNode", "a null node");
  if (nodeOf(node)->owner->hasMemoryNodes())
    return fail(kErrorInvalidValue, "cudaGraphDestroyNode",
                "the graph has memory allocation or free nodes: its nodes cannot be destroyed");
  nodeOf(node)->owner->remove(nodeOf(node));
  return kSuccess;
}

// A copy of the graph (cloneGraph). CUDA clones no graph with memory allocation or free nodes.
GPUSC_API int cudaGraphClone(void** clone, void* graph) {
  if (clone == nullptr || graph == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphClone", "a null graph or result");
  const Graph& g = *static_cast<const Graph*>(graph);
  if (g.hasMemoryNodes())
    return fail(kErrorInvalidValue, "cudaGraphClone",
                "a graph with memory allocation or free nodes cannot be cloned");
  *clone = cloneGraph(g).release();
  return kSuccess;
}

GPUSC_API int cudaGraphNodeFindInClone(void** node, void* original, void* clone) {
  if (node == nullptr || original == nullptr || clone == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphNodeFindInClone", "a null node, graph or result");
  const auto& map = static_cast<const Graph*>(clone)->cloneOf;
  const auto it = map.find(original);
  if (it == map.end() || it->second == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphNodeFindInClone",
                "the node is not one the graph was cloned from (or its copy was destroyed)");
  *node = it->second;
  return kSuccess;
}

// A node of an instantiation that is disabled does nothing when the graph runs.
GPUSC_API int cudaGraphNodeSetEnabled(void* exec, void* node, unsigned enabled) {
  size_t place = 0;
  if (int e = execPlace(exec, node, "cudaGraphNodeSetEnabled", &place); e != kSuccess) return e;
  GraphExec& x = *static_cast<GraphExec*>(exec);
  const int type = x.kinds[place].type;
  if (type != kNodeKernel && type != kNodeMemcpy && type != kNodeMemset)
    return fail(kErrorInvalidValue, "cudaGraphNodeSetEnabled",
                "only kernel, memcpy and memset nodes may be disabled");
  if (bool(enabled) == x.enabled[place]) return kSuccess;
  Replay& op = x.ops[x.opsBefore + place];
  if (enabled) {
    op = std::move(x.disabledOps[place]);
  } else {
    x.disabledOps[place] = std::move(op);
    op = [] { return int(kSuccess); };
  }
  x.enabled[place] = enabled != 0;
  return kSuccess;
}

GPUSC_API int cudaGraphNodeGetEnabled(void* exec, void* node, unsigned* enabled) {
  size_t place = 0;
  if (int e = execPlace(exec, node, "cudaGraphNodeGetEnabled", &place); e != kSuccess) return e;
  if (enabled == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphNodeGetEnabled", "a null result");
  *enabled = static_cast<const GraphExec*>(exec)->enabled[place] ? 1 : 0;
  return kSuccess;
}

GPUSC_API int cudaGraphExecGetFlags(void* exec, unsigned long long* flags) {
  if (exec == nullptr || flags == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphExecGetFlags", "a null instantiation or result");
  *flags = static_cast<const GraphExec*>(exec)->flags;
  return kSuccess;
}

// The graph in Graphviz's DOT language: a node per graph node, labelled with its type (and a
// kernel's name, grid and block), and its edges.
GPUSC_API int cudaGraphDebugDotPrint(void* graph, const char* path, unsigned) {
  if (graph == nullptr || path == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphDebugDotPrint", "a null graph or path");
  static const char* const typeNames[] = {"kernel",         "memcpy",       "memset",
                                          "host",           "child graph",  "empty",
                                          "event wait",     "event record", "semaphore signal",
                                          "semaphore wait", "mem alloc",    "mem free"};
  const Graph& g = *static_cast<const Graph*>(graph);
  std::unordered_map<const GraphNode*, size_t> at;
  for (size_t i = 0; i < g.nodes.size(); ++i) at.emplace(g.nodes[i].get(), i);
  std::string dot = "digraph gpusc_graph {\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeKind& k = g.nodes[i]->kind;
    std::string label = k.type >= 0 && k.type < int(sizeof typeNames / sizeof typeNames[0])
                            ? typeNames[k.type]
                            : "type " + std::to_string(k.type);
    if (k.kernel) {
      std::lock_guard<std::mutex> lock(names().mutex);
      const auto name = names().functions.find(k.kernel->func);
      if (name != names().functions.end()) label += std::string(" ") + name->second;
    }
    if (k.kernel)
      label += " <<<(" + std::to_string(k.kernel->grid.x) + "," + std::to_string(k.kernel->grid.y) +
               "," + std::to_string(k.kernel->grid.z) + "), (" + std::to_string(k.kernel->block.x) +
               "," + std::to_string(k.kernel->block.y) + "," + std::to_string(k.kernel->block.z) +
               ")>>>";
    dot += "  n" + std::to_string(i) + " [label=\"" + std::to_string(i) + ": " + label + "\"];\n";
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const GraphNode* d : g.nodes[i]->deps)
      dot += "  n" + std::to_string(at.at(d)) + " -> n" + std::to_string(i) + ";\n";
  dot += "}\n";
  FILE* f = std::fopen(path, "w");
  if (f == nullptr)
    return fail(kErrorInvalidValue, "cudaGraphDebugDotPrint",
                std::string("cannot write ") + path + ": " + std::strerror(errno));
  const bool ok = std::fwrite(dot.data(), 1, dot.size(), f) == dot.size();
  if (std::fclose(f) != 0 || !ok)
    return fail(kErrorInvalidValue, "cudaGraphDebugDotPrint", std::string("cannot write ") + path);
  return kSuccess;
}

// Conditional nodes (CUDA 12.3). A handle is the device address of a 32-bit word holding its
// value, which kernels set with cudaGraphSetConditional (a store to that word); the graph owns
// the word. A conditional node reads the word when it runs and runs its body graphs by it: an
// `if` its first body when the value is not 0 (else its second, if it has one), a `while` its
// body until the value is 0, a `switch` the body the value numbers (none past the last).
GPUSC_API int cudaGraphConditionalHandleCreate(unsigned long long* handle, void* graph,
                                               unsigned defaultValue, unsigned flags) {
  const char* fn = "cudaGraphConditionalHandleCreate";
  if (handle == nullptr || graph == nullptr)
    return fail(kErrorInvalidValue, fn, "a null graph or result");
  if (flags > 1) return fail(kErrorInvalidValue, fn, "flags: 0 or cudaGraphCondAssignDefault (1)");
  void* word = nullptr;
  if (int e = cudaMalloc(&word, sizeof defaultValue); e != kSuccess) return e;
  if (int e = memcpyAny(word, &defaultValue, sizeof defaultValue, kHostToDevice, fn); e != kSuccess)
    return e;
  Graph& g = *static_cast<Graph*>(graph);
  g.memory->words.push_back(word);
  g.handles.push_back({word, defaultValue, flags == 1});
  *handle = u64(word);
  return kSuccess;
}

namespace {

// A conditional node's body graphs, which it owns, and the array cudaGraphAddNode hands out.
struct ConditionalBodies {
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<void*> handles;
};

int addConditionalNode(void** node, void* graph, const void* const* deps, size_t count,
                       abi::ConditionalNodeParams* p) {
  const char* fn = "cudaGraphAddNode";
  constexpr int kIf = 0, kWhile = 1, kSwitch = 2;
  if (p->handle == 0) return fail(kErrorInvalidValue, fn, "a null conditional handle");
  if (!((p->type == kIf && (p->size == 1 || p->size == 2)) || (p->type == kWhile && p->size == 1) ||
        (p->type == kSwitch && p->size >= 1)))
    return fail(kErrorInvalidValue, fn,
                "a conditional node is an if of 1 or 2 bodies, a while of 1, or a switch of 1 or "
                "more (type " +
                    std::to_string(p->type) + ", size " + std::to_string(p->size) + ")");
  auto bodies = std::make_shared<ConditionalBodies>();
  for (unsigned i = 0; i < p->size; ++i) {
    bodies->graphs.push_back(std::make_unique<Graph>());
    bodies->handles.push_back(bodies->graphs.back().get());
  }
  void* word = ptr(p->handle);
  const int type = p->type;
  Replay op = [bodies, word, type]() -> int {
    unsigned value = 0;
    const auto read = [&] {
      return memcpyAny(&value, word, sizeof value, kDeviceToHost, "cudaGraphLaunch");
    };
    if (int e = read(); e != kSuccess) return e;
    const auto& body = bodies->graphs;
    if (type == kIf) return value != 0 ? body[0]->run() : body.size() > 1 ? body[1]->run() : 0;
    if (type == kSwitch) return value < body.size() ? body[value]->run() : int(kSuccess);
    while (value != 0) {
      if (int e = body[0]->run(); e != kSuccess) return e;
      if (int e = read(); e != kSuccess) return e;
    }
    return kSuccess;
  };
  const int e = addNode(fn, node, graph, deps, count, std::move(op), typeKind(kNodeConditional));
  if (e == kSuccess) p->phGraph_out = bodies->handles.data();
  return e;
}

}  // namespace

// CUDA 12.2's generic node calls: a node of any type gpusc builds from cudaGraphNodeParams.
// An instantiation's child graph node runs `child`'s work instead, a graph of the same shape
// (its nodes' types in the same order).
GPUSC_API int cudaGraphExecChildGraphNodeSetParams(void* exec, void* node, void* child) {
  const char* fn = "cudaGraphExecChildGraphNodeSetParams";
  size_t place = 0;
  if (int e = execPlace(exec, node, fn, &place); e != kSuccess) return e;
  if (child == nullptr) return fail(kErrorInvalidValue, fn, "a null child graph");
  GraphExec& x = *static_cast<GraphExec*>(exec);
  const NodeKind& kind = x.kinds[place];
  if (kind.type != kNodeGraph || !kind.child)
    return fail(kErrorInvalidValue, fn, "not a child graph node of the instantiation");
  const Graph& c = *static_cast<const Graph*>(child);
  const Graph& was = *kind.child;
  bool same = c.nodes.size() == was.nodes.size();
  for (size_t i = 0; same && i < c.nodes.size(); ++i)
    same = c.nodes[i]->kind.type == was.nodes[i]->kind.type &&
           c.nodes[i]->deps.size() == was.nodes[i]->deps.size();
  if (!same)
    return fail(kErrorInvalidValue, fn,
                "the graph's nodes differ from the node's graph (their number, types or "
                "dependencies)");
  if (c.hasMemoryNodes())
    return fail(kErrorInvalidValue, fn, "a child graph with memory allocation or free nodes");
  setExecWork(x, place, childWork(c), kind);
  return kSuccess;
}

// ---- user objects ----

GPUSC_API int cudaUserObjectCreate(void** object, void* ptr, void (*destroy)(void*),
                                   unsigned initialRefcount, unsigned flags) {
  const char* fn = "cudaUserObjectCreate";
  constexpr unsigned kNoDestructorSync = 1;  // cudaUserObjectNoDestructorSync
  if (object == nullptr || destroy == nullptr)
    return fail(kErrorInvalidValue, fn, "a null result or destructor");
  if (flags != kNoDestructorSync)
    return fail(kErrorInvalidValue, fn, "flags must be cudaUserObjectNoDestructorSync (1)");
  if (initialRefcount == 0) return fail(kErrorInvalidValue, fn, "an initial count of 0");
  auto* o = new UserObject{ptr, destroy, initialRefcount};
  std::lock_guard<std::mutex> lock(userObjects().mutex);
  userObjects().live.insert(o);
  *object = o;
  return kSuccess;
}

GPUSC_API int cudaUserObjectRetain(void* object, unsigned count) {
  if (count == 0 || !retainUserObject(static_cast<UserObject*>(object), count))
    return fail(kErrorInvalidValue, "cudaUserObjectRetain",
                "not a user object the program holds, or a count of 0");
  return kSuccess;
}

GPUSC_API int cudaUserObjectRelease(void* object, unsigned count) {
  if (count == 0 || !releaseUserObject(static_cast<UserObject*>(object), count))
    return fail(kErrorInvalidValue, "cudaUserObjectRelease",
                "not a user object with that many references, or a count of 0");
  return kSuccess;
}

// The graph takes `count` references: new ones, or the caller's own (cudaGraphUserObjectMove).
GPUSC_API int cudaGraphRetainUserObject(void* graph, void* object, unsigned count, unsigned flags) {
  const char* fn = "cudaGraphRetainUserObject";
  constexpr unsigned kMove = 1;  // cudaGraphUserObjectMove
  if (graph == nullptr || count == 0 || flags > kMove)
    return fail(kErrorInvalidValue, fn, "a null graph, a count of 0 or flags other than 0 and 1");
  auto* o = static_cast<UserObject*>(object);
  if (flags != kMove && !retainUserObject(o, count))
    return fail(kErrorInvalidValue, fn, "not a user object the program holds");
  if (flags == kMove) {
    std::lock_guard<std::mutex> lock(userObjects().mutex);
    if (userObjects().live.count(o) == 0 || o->count < count)
      return fail(kErrorInvalidValue, fn, "not a user object with that many references to move");
  }
  static_cast<Graph*>(graph)->userReferences.held[o] += count;
  return kSuccess;
}

GPUSC_API int cudaGraphReleaseUserObject(void* graph, void* object, unsigned count) {
  const char* fn = "cudaGraphReleaseUserObject";
  if (graph == nullptr || count == 0)
    return fail(kErrorInvalidValue, fn, "a null graph or count 0");
  auto& held = static_cast<Graph*>(graph)->userReferences.held;
  auto* o = static_cast<UserObject*>(object);
  const auto it = held.find(o);
  if (it == held.end() || it->second < count)
    return fail(kErrorInvalidValue, fn, "the graph holds fewer references to the object");
  if ((it->second -= count) == 0) held.erase(it);
  releaseUserObject(o, count);
  return kSuccess;
}

GPUSC_API int cudaGraphAddNode(void** node, void* graph, const void* const* deps,
                               const abi::GraphEdgeData* edges, size_t count,
                               abi::GraphNodeParams* p) {
  const char* fn = "cudaGraphAddNode";
  if (p == nullptr) return fail(kErrorInvalidValue, fn, "null parameters");
  for (size_t i = 0; edges != nullptr && i < count; ++i)
    if (edges[i].type != 0 || edges[i].from_port != 0 || edges[i].to_port != 0)
      return fail(kErrorNotSupported, fn, "edges other than full dependencies are not supported");
  switch (p->type) {
    case kNodeKernel:
      return cudaGraphAddKernelNode(node, graph, deps, count, &p->kernel);
    case kNodeMemcpy:
      if (p->memcpy.flags != 0) return fail(kErrorInvalidValue, fn, "memcpy flags must be 0");
      return cudaGraphAddMemcpyNode(node, graph, deps, count, &p->memcpy.copyParams);
    case kNodeMemset:
      return cudaGraphAddMemsetNode(node, graph, deps, count, &p->memset);
    case kNodeHost:
      return cudaGraphAddHostNode(node, graph, deps, count, &p->host);
    case kNodeGraph:
      return addChildGraphNode(node, graph, deps, count, p->graph.graph, p->graph.ownership, fn);
    case kNodeMemAlloc:
      return cudaGraphAddMemAllocNode(node, graph, deps, count, &p->alloc);
    case kNodeMemFree:
      return cudaGraphAddMemFreeNode(node, graph, deps, count, p->free.dptr);
    case kNodeEmpty:
      return cudaGraphAddEmptyNode(node, graph, deps, count);
    case kNodeWaitEvent:
      return cudaGraphAddEventWaitNode(node, graph, deps, count, p->eventWait.event);
    case kNodeEventRecord:
      return cudaGraphAddEventRecordNode(node, graph, deps, count, p->eventRecord.event);
    case kNodeConditional:
      return addConditionalNode(node, graph, deps, count, &p->conditional);
    default:
      return fail(
          kErrorNotSupported, fn,
          "node type " + std::to_string(p->type) + ": external semaphore nodes are not supported");
  }
}

GPUSC_API int cudaGraphNodeSetParams(void* node, abi::GraphNodeParams* p) {
  const char* fn = "cudaGraphNodeSetParams";
  if (node == nullptr || p == nullptr)
    return fail(kErrorInvalidValue, fn, "a null node or parameters");
  if (p->type != nodeOf(node)->kind.type)
    return fail(kErrorInvalidValue, fn, "the parameters are for a node of another type");
  switch (p->type) {
    case kNodeKernel:
      return cudaGraphKernelNodeSetParams(node, &p->kernel);
    case kNodeMemcpy:
      return cudaGraphMemcpyNodeSetParams(node, &p->memcpy.copyParams);
    case kNodeMemset:
      return cudaGraphMemsetNodeSetParams(node, &p->memset);
    case kNodeHost:
      return cudaGraphHostNodeSetParams(node, &p->host);
    case kNodeWaitEvent:
      return cudaGraphEventWaitNodeSetEvent(node, p->eventWait.event);
    case kNodeEventRecord:
      return cudaGraphEventRecordNodeSetEvent(node, p->eventRecord.event);
    default:
      return fail(kErrorNotSupported, fn,
                  "node type " + std::to_string(p->type) + ": its parameters are not set again");
  }
}

GPUSC_API int cudaGraphExecNodeSetParams(void* exec, void* node, abi::GraphNodeParams* p) {
  const char* fn = "cudaGraphExecNodeSetParams";
  if (p == nullptr) return fail(kErrorInvalidValue, fn, "null parameters");
  switch (p->type) {
    case kNodeKernel:
      return cudaGraphExecKernelNodeSetParams(exec, node, &p->kernel);
    case kNodeMemcpy:
      return cudaGraphExecMemcpyNodeSetParams(exec, node, &p->memcpy.copyParams);
    case kNodeMemset:
      return cudaGraphExecMemsetNodeSetParams(exec, node, &p->memset);
    case kNodeHost:
      return cudaGraphExecHostNodeSetParams(exec, node, &p->host);
    case kNodeWaitEvent:
      return cudaGraphExecEventWaitNodeSetEvent(exec, node, p->eventWait.event);
    case kNodeEventRecord:
      return cudaGraphExecEventRecordNodeSetEvent(exec, node, p->eventRecord.event);
    case kNodeGraph:
      return cudaGraphExecChildGraphNodeSetParams(exec, node, p->graph.graph);
    default:
      return fail(kErrorNotSupported, fn,
                  "node type " + std::to_string(p->type) + ": its parameters are not set again");
  }
}

GPUSC_API int cudaEventCreate(void** event) {
  GPUSC_STICKY();
  if (event == nullptr) return fail(kErrorInvalidValue, "cudaEventCreate", "a null result");
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::EventCreate, {}, &reply); e != kSuccess) return record(e);
  uint64_t h = 0;
  std::memcpy(&h, reply.data(), std::min<size_t>(8, reply.size()));
  *event = ptr(h);
  return kSuccess;
}
GPUSC_API int cudaEventCreateWithFlags(void** event, unsigned flags) {
  // cudaEventBlockingSync (1), DisableTiming (2), Interprocess (4, with DisableTiming).
  constexpr unsigned kDisableTiming = 0x02, kInterprocess = 0x04;
  if ((flags & ~0x07u) != 0 || ((flags & kInterprocess) && !(flags & kDisableTiming)))
    return fail(kErrorInvalidValue, "cudaEventCreateWithFlags",
                "flags " + std::to_string(flags) +
                    ": cudaEventDefault, BlockingSync, DisableTiming, and Interprocess with "
                    "DisableTiming");
  const int e = cudaEventCreate(event);
  if (e == kSuccess && (flags & kDisableTiming)) {
    UntimedEvents& u = untimedEvents();
    std::lock_guard<std::mutex> lock(u.mutex);
    u.events.insert(*event);
  }
  return e;
}
GPUSC_API int cudaEventDestroy(void* event) {
  {
    UntimedEvents& u = untimedEvents();
    std::lock_guard<std::mutex> lock(u.mutex);
    u.events.erase(event);
  }
  return simple(wire::Op::EventDestroy, u64(event));
}
GPUSC_API int cudaEventRecord(void* event, void* stream) {
  GPUSC_STICKY();
  {
    // In a capture the event marks a point to wait for (streams that wait on it join the
    // capture); outside, it records the time.
    Captures& c = captures();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.streams.find(stream); it != c.streams.end()) {
      c.events[event] = it->second;
      it->second->record(event, stream);
      return kSuccess;
    }
    c.events.erase(event);
  }
  wire::Buffer b;
  b.put(u64(event)).put(u64(stream));
  return record(client().call(wire::Op::EventRecord, b));
}
GPUSC_API int cudaEventRecord_ptsz(void* event, void* stream) {
  return cudaEventRecord(event, perThread(stream));
}
// cudaEventRecordDefault (0) or cudaEventRecordExternal (1, for graphs: the same here).
GPUSC_API int cudaEventRecordWithFlags(void* event, void* stream, unsigned flags) {
  if (flags > 1)
    return fail(kErrorInvalidValue, "cudaEventRecordWithFlags",
                "flags " + std::to_string(flags) +
                    ": cudaEventRecordDefault (0) or cudaEventRecordExternal (1)");
  return cudaEventRecord(event, stream);
}
GPUSC_API int cudaEventRecordWithFlags_ptsz(void* event, void* stream, unsigned flags) {
  return cudaEventRecordWithFlags(event, perThread(stream), flags);
}
// Every call completes before it returns, so a recorded event has happened: both check the event.
namespace {
// An event last recorded in a capture stands for a point in a graph, not a time.
int checkEventNotCaptured(void* event, const char* function) {
  Captures& c = captures();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.events.count(event))
    return fail(kErrorCapturedEvent, function, "the event was last recorded in a capturing stream");
  return kSuccess;
}
}  // namespace
GPUSC_API int cudaEventSynchronize(void* event) {
  if (int e = checkEventNotCaptured(event, "cudaEventSynchronize"); e != kSuccess) return e;
  return simple(wire::Op::EventCheck, u64(event));
}
GPUSC_API int cudaEventQuery(void* event) {
  if (int e = checkEventNotCaptured(event, "cudaEventQuery"); e != kSuccess) return e;
  return simple(wire::Op::EventCheck, u64(event));
}
GPUSC_API int cudaEventElapsedTime(float* ms, void* start, void* end) {
  GPUSC_STICKY();
  if (ms == nullptr) return fail(kErrorInvalidValue, "cudaEventElapsedTime", "a null result");
  for (void* e : {start, end})
    if (int err = checkEventNotCaptured(e, "cudaEventElapsedTime"); err != kSuccess) return err;
  {
    UntimedEvents& u = untimedEvents();
    std::lock_guard<std::mutex> lock(u.mutex);
    if (u.events.count(start) || u.events.count(end))
      return fail(kErrorInvalidResourceHandle, "cudaEventElapsedTime",
                  "an event created with cudaEventDisableTiming has no time");
  }
  wire::Buffer b;
  b.put(u64(start)).put(u64(end));
  std::vector<uint8_t> reply;
  if (int e = client().call(wire::Op::EventElapsed, b, &reply); e != kSuccess) return record(e);
  std::memcpy(ms, reply.data(), std::min<size_t>(sizeof(float), reply.size()));
  return kSuccess;
}

// ===================================================================== CUDA arrays and textures
//
// A CUDA array (cudaArray_t) is a record of this library's: its texels live in one ordinary
// device allocation, made as cudaMalloc makes one (cudaMemGetInfo counts it), row-major with rows
// width x texel bytes apart and slices (or layers) after each other. Copies to and from it are 2D
// or 3D copies into that allocation.
//
// A texture object's handle is the device address of the descriptor the fetch reads
// (func/texture.hpp): 80 bytes of device memory written here, which are not an allocation of the
// program's (cudaMemGetInfo does not count them, and the program cannot copy to them).

GPUSC_API abi::ChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, int f) {
  return {x, y, z, w, f};
}

namespace {

namespace tex = gpusc::func;
static_assert(int(tex::TexAddress::Wrap) == abi::kAddressWrap &&
                  int(tex::TexAddress::Clamp) == abi::kAddressClamp &&
                  int(tex::TexAddress::Mirror) == abi::kAddressMirror &&
                  int(tex::TexAddress::Border) == abi::kAddressBorder,
              "the descriptor's address modes are numbered as CUDA's");
static_assert(int(tex::TexKind::Signed) == abi::kChannelSigned &&
                  int(tex::TexKind::Unsigned) == abi::kChannelUnsigned &&
                  int(tex::TexKind::Float) == abi::kChannelFloat,
              "the descriptor's channel kinds are numbered as CUDA's");

// A texel format the fetch reads: 1, 2 or 4 channels of the same size, 8, 16 or 32 bits each,
// signed or unsigned integers or floats (16-bit floats are halves).
struct TexelFormat {
  uint8_t channels = 0, bits = 0, kind = 0;
  uint32_t bytes() const { return uint32_t(channels) * bits / 8u; }
};

// `d` as a format the fetch reads; else an error code, with the reason on stderr.
int texelFormat(const abi::ChannelFormatDesc* d, const char* function, TexelFormat* out) {
  if (d == nullptr) return fail(kErrorInvalidValue, function, "a null channel descriptor");
  if (d->f == abi::kChannelNone)
    return fail(kErrorInvalidValue, function, "cudaChannelFormatKindNone describes no texels");
  if (d->f > abi::kChannelNone && d->f <= abi::kChannelLast)
    return fail(kErrorNotSupported, function,
                "channel format kind " + std::to_string(d->f) +
                    " (NV12, normalized-integer, block-compressed and 10-10-10-2 formats) is not "
                    "supported: use cudaChannelFormatKindSigned, Unsigned or Float (and "
                    "cudaReadModeNormalizedFloat to read integers as normalized floats)");
  if (d->f < abi::kChannelSigned || d->f > abi::kChannelLast)
    return fail(kErrorInvalidValue, function,
                "channel format kind " + std::to_string(d->f) + " is not a cudaChannelFormatKind");
  const int bits[4] = {d->x, d->y, d->z, d->w};
  const std::string sizes = "(" + std::to_string(d->x) + ", " + std::to_string(d->y) + ", " +
                            std::to_string(d->z) + ", " + std::to_string(d->w) + " bits)";
  int channels = 0;
  while (channels < 4 && bits[channels] > 0) ++channels;
  for (int c = 0; c < 4; ++c)
    if (bits[c] < 0 || (c >= channels && bits[c] != 0))
      return fail(kErrorInvalidValue, function,
                  "channel sizes that are not x, then y, z and w " + sizes);
  if (channels == 0) return fail(kErrorInvalidValue, function, "a format of no channels");
  for (int c = 1; c < channels; ++c)
    if (bits[c] != bits[0])
      return fail(kErrorInvalidValue, function, "channels of different sizes " + sizes);
  if (channels == 3)
    return fail(kErrorInvalidValue, function,
                "a format of 3 channels " + sizes + ": textures have 1, 2 or 4 channels");
  if (bits[0] != 8 && bits[0] != 16 && bits[0] != 32)
    return fail(kErrorInvalidValue, function, "channels of 8, 16 or 32 bits only " + sizes);
  if (d->f == abi::kChannelFloat && bits[0] == 8)
    return fail(kErrorInvalidValue, function, "no 8-bit floats: floats have 16 or 32 bits");
  out->channels = uint8_t(channels);
  out->bits = uint8_t(bits[0]);
  out->kind = uint8_t(d->f);
  return kSuccess;
}

// What cudaMallocArray or cudaMalloc3DArray made. `height` is 0 for a 1D array (one row).
struct ArrayRecord {
  uint64_t base = 0;
  size_t width = 0, height = 0, depth = 0;  // height 0: 1D; depth 0: 1D or 2D; or layers
  abi::ChannelFormatDesc desc{};
  TexelFormat format;
  unsigned flags = 0;
  size_t pitch = 0;  // bytes from one row to the next: width x texel bytes
  size_t rows() const { return height == 0 ? 1 : height; }
  size_t slices() const { return depth == 0 ? 1 : depth; }  // or layers
  bool layered() const { return (flags & abi::kArrayLayered) != 0; }
  // Of a layer, when layered.
  uint8_t dims() const { return depth != 0 && !layered() ? 3 : height != 0 ? 2 : 1; }
  size_t slicePitch() const { return pitch * rows(); }
};

// A texture object: what the program described (cudaGetTextureObject*Desc).
struct TextureRecord {
  abi::ResourceDesc res;
  abi::TextureDesc tex;
};

struct TextureState {
  std::mutex mutex;
  std::map<const void*, std::unique_ptr<ArrayRecord>> arrays;  // by handle (the record)
  std::map<uint64_t, TextureRecord> textures;                  // by handle (the descriptor)
};

TextureState& textureState() {
  static TextureState s;
  return s;
}

// The array `handle` names (a copy), or an error with the reason on stderr.
int findArray(const void* handle, const char* function, ArrayRecord* out) {
  if (handle == nullptr) return fail(kErrorInvalidValue, function, "a null CUDA array");
  TextureState& s = textureState();
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = s.arrays.find(handle);
  if (it == s.arrays.end())
    return fail(kErrorInvalidValue, function,
                "not a CUDA array cudaMallocArray or cudaMalloc3DArray made");
  *out = *it->second;
  return kSuccess;
}

// Where `width` bytes by `height` rows from byte `wOffset` of row `hOffset` of `a` start; an
// error when they do not fit in the array.
int arrayRegion(const ArrayRecord& a, size_t wOffset, size_t hOffset, size_t width, size_t height,
                const char* function, uint8_t** at) {
  if (wOffset > a.pitch || width > a.pitch - wOffset || hOffset > a.rows() ||
      height > a.rows() - hOffset)
    return fail(kErrorInvalidValue, function,
                std::to_string(width) + " bytes x " + std::to_string(height) + " rows from byte " +
                    std::to_string(wOffset) + " of row " + std::to_string(hOffset) +
                    " do not fit in the array's " + std::to_string(a.rows()) + " rows of " +
                    std::to_string(a.pitch) + " bytes");
  *at = static_cast<uint8_t*>(ptr(a.base)) + hOffset * a.pitch + wOffset;
  return kSuccess;
}

// `count` bytes from byte `wOffset` of row `hOffset` of `a`, on through the rows (the
// deprecated cudaMemcpyToArray and cudaMemcpyFromArray): the rows are contiguous.
int arrayRun(const ArrayRecord& a, size_t wOffset, size_t hOffset, size_t count,
             const char* function, uint8_t** at) {
  const size_t total = a.pitch * a.rows();
  if (wOffset > a.pitch || hOffset > a.rows() || hOffset * a.pitch + wOffset > total ||
      count > total - (hOffset * a.pitch + wOffset))
    return fail(kErrorInvalidValue, function,
                std::to_string(count) + " bytes from byte " + std::to_string(wOffset) + " of row " +
                    std::to_string(hOffset) + " run past the array's " + std::to_string(total) +
                    " bytes");
  *at = static_cast<uint8_t*>(ptr(a.base)) + hOffset * a.pitch + wOffset;
  return kSuccess;
}

// The copy kinds that can reach an array: to it (`toArray`), from it, or both.
bool arrayKind(int kind, bool toArray, bool fromArray) {
  if (kind == kDefault || kind == kDeviceToDevice) return true;
  if (toArray && !fromArray) return kind == kHostToDevice;
  if (fromArray && !toArray) return kind == kDeviceToHost;
  return false;
}

int badArrayKind(int kind, const char* function) {
  return fail(kErrorInvalidMemcpyDirection, function,
              "kind " + std::to_string(kind) + " cannot copy that way to or from a CUDA array");
}

}  // namespace

namespace {

// cudaMallocArray and cudaMalloc3DArray: an array of width x height x depth texels (height 0 for
// 1D, depth 0 for 1D and 2D), or with cudaArrayLayered, depth layers of 1D or 2D ones.
int makeArray(void** array, const abi::ChannelFormatDesc* desc, size_t width, size_t height,
              size_t depth, unsigned flags, const char* fn) {
  GPUSC_STICKY();
  if (array == nullptr) return fail(kErrorInvalidValue, fn, "a null pointer for the result");
  TexelFormat f;
  if (int e = texelFormat(desc, fn, &f); e != kSuccess) return e;
  if (flags & abi::kArrayTextureGather)
    return fail(kErrorNotSupported, fn, "cudaArrayTextureGather: texture gather is not supported");
  if (flags & (abi::kArraySparse | abi::kArrayDeferredMapping))
    return fail(kErrorNotSupported, fn, "sparse and deferred-mapping arrays are not supported");
  if (flags & abi::kArrayCubemap)
    return fail(kErrorNotSupported, fn, "cubemap arrays are not supported (layered ones are)");
  if ((flags & ~unsigned(abi::kArraySurfaceLoadStore | abi::kArrayLayered)) != 0)
    return fail(kErrorInvalidValue, fn, "flags " + std::to_string(flags) + " are not array flags");
  if (width == 0) return fail(kErrorInvalidValue, fn, "an array of width 0");
  const bool layered = flags & abi::kArrayLayered;
  if (layered && depth == 0)
    return fail(kErrorInvalidValue, fn, "a layered array of no layers (extent.depth 0)");
  if (!layered && depth != 0 && height == 0)
    return fail(kErrorInvalidValue, fn, "a 3D array of height 0 (a 1D array has depth 0 too)");
  const bool surface = flags & abi::kArraySurfaceLoadStore;
  const ArrayLimits& lim = kArrayLimits[surface ? 1 : 0];
  const char* kind = nullptr;
  size_t limW = 0, limH = 0, limD = 0;
  if (layered && height == 0)
    kind = "1D layered", limW = lim.widthLayered1D, limD = lim.layers;
  else if (layered)
    kind = "2D layered", limW = limH = lim.sideLayered2D, limD = lim.layers;
  else if (depth != 0)
    kind = "3D", limW = limH = limD = lim.extent3D;
  else if (height != 0)
    kind = "2D", limW = lim.width2D, limH = lim.height2D;
  else
    kind = "1D", limW = lim.width1D;
  if (width > limW || height > limH || depth > limD) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "a %s %s of %zux%zux%zu: at most %zux%zux%zu (cudaDeviceProp's %s)", kind,
                  surface ? "surface array" : "array", width, height, depth, limW, limH, limD,
                  surface ? "maxSurface*" : "maxTexture*");
    return fail(kErrorInvalidValue, fn, why);
  }
  auto a = std::make_unique<ArrayRecord>();
  a->width = width;
  a->height = height;
  a->depth = depth;
  a->desc = *desc;
  a->format = f;
  a->flags = flags;
  a->pitch = width * f.bytes();
  size_t bytes = 0;
  if (__builtin_mul_overflow(a->slicePitch(), a->slices(), &bytes))
    return fail(kErrorMemoryAllocation, fn, "more bytes than an address holds");
  void* base = nullptr;
  if (int e = cudaMalloc(&base, bytes); e != kSuccess) return e;
  a->base = u64(base);
  void* handle = a.get();
  {
    TextureState& s = textureState();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.arrays.emplace(handle, std::move(a));
  }
  *array = handle;
  return kSuccess;
}

}  // namespace

// The most elements of `desc`'s format a 1D texture over linear memory may have: 2^28, as
// cudaDevAttrMaxTexture1DLinearWidth says, for every format gpusc's textures read.
GPUSC_API int cudaDeviceGetTexture1DLinearMaxWidth(size_t* width,
                                                   const abi::ChannelFormatDesc* desc, int device) {
  const char* fn = "cudaDeviceGetTexture1DLinearMaxWidth";
  if (int e = checkDevice(device, fn); e != kSuccess) return e;
  if (width == nullptr || desc == nullptr) return fail(kErrorInvalidValue, fn, "a null argument");
  TexelFormat f;
  if (int e = texelFormat(desc, fn, &f); e != kSuccess) return e;
  *width = size_t(1) << 28;
  return kSuccess;
}

GPUSC_API int cudaMallocArray(void** array, const abi::ChannelFormatDesc* desc, size_t width,
                              size_t height, unsigned flags) {
  return makeArray(array, desc, width, height, 0, flags, "cudaMallocArray");
}

// A 3D array when extent.depth > 0 (layers with cudaArrayLayered); otherwise as cudaMallocArray.
GPUSC_API int cudaMalloc3DArray(void** array, const abi::ChannelFormatDesc* desc,
                                abi::Extent extent, unsigned flags) {
  return makeArray(array, desc, extent.width, extent.height, extent.depth, flags,
                   "cudaMalloc3DArray");
}

GPUSC_API int cudaFreeArray(void* array) {
  GPUSC_STICKY();
  if (array == nullptr) return kSuccess;
  std::unique_ptr<ArrayRecord> a;
  {
    TextureState& s = textureState();
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.arrays.find(array);
    if (it == s.arrays.end())
      return fail(kErrorInvalidValue, "cudaFreeArray",
                  "not a CUDA array cudaMallocArray or cudaMalloc3DArray made");
    a = std::move(it->second);
    s.arrays.erase(it);
  }
  return cudaFree(ptr(a->base));
}

// The format, the extent (height 0 for a 1D array, depth 0 for 1D and 2D) and the flags.
GPUSC_API int cudaArrayGetInfo(abi::ChannelFormatDesc* desc, abi::Extent* extent, unsigned* flags,
                               void* array) {
  ArrayRecord a;
  if (int e = findArray(array, "cudaArrayGetInfo", &a); e != kSuccess) return e;
  if (desc) *desc = a.desc;
  if (extent) *extent = {a.width, a.height, a.depth};
  if (flags) *flags = a.flags;
  return kSuccess;
}

GPUSC_API int cudaGetChannelDesc(abi::ChannelFormatDesc* desc, const void* array) {
  if (desc == nullptr) return fail(kErrorInvalidValue, "cudaGetChannelDesc", "a null result");
  ArrayRecord a;
  if (int e = findArray(array, "cudaGetChannelDesc", &a); e != kSuccess) return e;
  *desc = a.desc;
  return kSuccess;
}

// ---- copies to and from arrays: wOffset and width in bytes, hOffset and height in rows ----

namespace {

// The array's side of a copy to it (`to`) or from it: where the box of `width` bytes by
// `height` rows from byte wOffset of row hOffset starts, and the bytes between its rows; with
// `run`, `width` bytes on through the rows (the deprecated 1D forms, `height` 1).
int arraySide(const void* array, bool to, size_t wOffset, size_t hOffset, size_t width,
              size_t height, bool run, int kind, const char* fn, uint8_t** at, size_t* pitch) {
  ArrayRecord a;
  if (int e = findArray(array, fn, &a); e != kSuccess) return e;
  if (!arrayKind(kind, to, !to)) return badArrayKind(kind, fn);
  if (int e = run ? arrayRun(a, wOffset, hOffset, width, fn, at)
                  : arrayRegion(a, wOffset, hOffset, width, height, fn, at);
      e != kSuccess)
    return e;
  *pitch = run ? width : a.pitch;
  return kSuccess;
}

int toArray(void* dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch, size_t width,
            size_t height, bool run, int kind, void* stream, bool async, const char* fn) {
  GPUSC_STICKY();
  uint8_t* at = nullptr;
  size_t pitch = 0;
  if (int e = arraySide(dst, true, wOffset, hOffset, width, height, run, kind, fn, &at, &pitch);
      e != kSuccess)
    return e;
  Replay op = [=] { return copy2D(at, pitch, src, spitch, width, height, kind, fn); };
  return async ? issue(fn, stream, std::move(op), typeKind(kNodeMemcpy)) : op();
}

int fromArray(void* dst, size_t dpitch, const void* src, size_t wOffset, size_t hOffset,
              size_t width, size_t height, bool run, int kind, void* stream, bool async,
              const char* fn) {
  GPUSC_STICKY();
  uint8_t* at = nullptr;
  size_t pitch = 0;
  if (int e = arraySide(src, false, wOffset, hOffset, width, height, run, kind, fn, &at, &pitch);
      e != kSuccess)
    return e;
  Replay op = [=] { return copy2D(dst, dpitch, at, pitch, width, height, kind, fn); };
  return async ? issue(fn, stream, std::move(op), typeKind(kNodeMemcpy)) : op();
}

}  // namespace

GPUSC_API int cudaMemcpy2DToArray(void* dst, size_t wOffset, size_t hOffset, const void* src,
                                  size_t spitch, size_t width, size_t height, int kind) {
  return toArray(dst, wOffset, hOffset, src, spitch, width, height, false, kind, nullptr, false,
                 "cudaMemcpy2DToArray");
}
GPUSC_API int cudaMemcpy2DToArray_ptds(void* dst, size_t wOffset, size_t hOffset, const void* src,
                                       size_t spitch, size_t width, size_t height, int kind) {
  return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}
GPUSC_API int cudaMemcpy2DToArrayAsync(void* dst, size_t wOffset, size_t hOffset, const void* src,
                                       size_t spitch, size_t width, size_t height, int kind,
                                       void* stream) {
  return toArray(dst, wOffset, hOffset, src, spitch, width, height, false, kind, stream, true,
                 "cudaMemcpy2DToArrayAsync");
}
GPUSC_API int cudaMemcpy2DToArrayAsync_ptsz(void* dst, size_t wOffset, size_t hOffset,
                                            const void* src, size_t spitch, size_t width,
                                            size_t height, int kind, void* stream) {
  return cudaMemcpy2DToArrayAsync(dst, wOffset, hOffset, src, spitch, width, height, kind,
                                  perThread(stream));
}

GPUSC_API int cudaMemcpy2DFromArray(void* dst, size_t dpitch, const void* src, size_t wOffset,
                                    size_t hOffset, size_t width, size_t height, int kind) {
  return fromArray(dst, dpitch, src, wOffset, hOffset, width, height, false, kind, nullptr, false,
                   "cudaMemcpy2DFromArray");
}
GPUSC_API int cudaMemcpy2DFromArray_ptds(void* dst, size_t dpitch, const void* src, size_t wOffset,
                                         size_t hOffset, size_t width, size_t height, int kind) {
  return cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind);
}
GPUSC_API int cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, const void* src, size_t wOffset,
                                         size_t hOffset, size_t width, size_t height, int kind,
                                         void* stream) {
  return fromArray(dst, dpitch, src, wOffset, hOffset, width, height, false, kind, stream, true,
                   "cudaMemcpy2DFromArrayAsync");
}
GPUSC_API int cudaMemcpy2DFromArrayAsync_ptsz(void* dst, size_t dpitch, const void* src,
                                              size_t wOffset, size_t hOffset, size_t width,
                                              size_t height, int kind, void* stream) {
  return cudaMemcpy2DFromArrayAsync(dst, dpitch, src, wOffset, hOffset, width, height, kind,
                                    perThread(stream));
}

// Between two arrays (device to device): a 2D copy between their allocations.
GPUSC_API int cudaMemcpy2DArrayToArray(void* dst, size_t wOffsetDst, size_t hOffsetDst,
                                       const void* src, size_t wOffsetSrc, size_t hOffsetSrc,
                                       size_t width, size_t height, int kind) {
  GPUSC_STICKY();
  const char* fn = "cudaMemcpy2DArrayToArray";
  ArrayRecord d, s;
  uint8_t *to = nullptr, *from = nullptr;
  if (int e = findArray(dst, fn, &d); e != kSuccess) return e;
  if (int e = findArray(src, fn, &s); e != kSuccess) return e;
  if (!arrayKind(kind, true, true)) return badArrayKind(kind, fn);
  if (int e = arrayRegion(d, wOffsetDst, hOffsetDst, width, height, fn, &to); e != kSuccess)
    return e;
  if (int e = arrayRegion(s, wOffsetSrc, hOffsetSrc, width, height, fn, &from); e != kSuccess)
    return e;
  return copy2D(to, d.pitch, from, s.pitch, width, height, kind, fn);
}
GPUSC_API int cudaMemcpy2DArrayToArray_ptds(void* dst, size_t wOffsetDst, size_t hOffsetDst,
                                            const void* src, size_t wOffsetSrc, size_t hOffsetSrc,
                                            size_t width, size_t height, int kind) {
  return cudaMemcpy2DArrayToArray(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width,
                                  height, kind);
}

// The deprecated 1D forms: `count` bytes from (wOffset, hOffset) on through the rows.
GPUSC_API int cudaMemcpyToArray(void* dst, size_t wOffset, size_t hOffset, const void* src,
                                size_t count, int kind) {
  return toArray(dst, wOffset, hOffset, src, count, count, 1, true, kind, nullptr, false,
                 "cudaMemcpyToArray");
}
GPUSC_API int cudaMemcpyToArray_ptds(void* dst, size_t wOffset, size_t hOffset, const void* src,
                                     size_t count, int kind) {
  return cudaMemcpyToArray(dst, wOffset, hOffset, src, count, kind);
}
GPUSC_API int cudaMemcpyToArrayAsync(void* dst, size_t wOffset, size_t hOffset, const void* src,
                                     size_t count, int kind, void* stream) {
  return toArray(dst, wOffset, hOffset, src, count, count, 1, true, kind, stream, true,
                 "cudaMemcpyToArrayAsync");
}
GPUSC_API int cudaMemcpyToArrayAsync_ptsz(void* dst, size_t wOffset, size_t hOffset,
                                          const void* src, size_t count, int kind, void* stream) {
  return cudaMemcpyToArrayAsync(dst, wOffset, hOffset, src, count, kind, perThread(stream));
}
GPUSC_API int cudaMemcpyFromArray(void* dst, const void* src, size_t wOffset, size_t hOffset,
                                  size_t count, int kind) {
  return fromArray(dst, count, src, wOffset, hOffset, count, 1, true, kind, nullptr, false,
                   "cudaMemcpyFromArray");
}
GPUSC_API int cudaMemcpyFromArray_ptds(void* dst, const void* src, size_t wOffset, size_t hOffset,
                                       size_t count, int kind) {
  return cudaMemcpyFromArray(dst, src, wOffset, hOffset, count, kind);
}
GPUSC_API int cudaMemcpyFromArrayAsync(void* dst, const void* src, size_t wOffset, size_t hOffset,
                                       size_t count, int kind, void* stream) {
  return fromArray(dst, count, src, wOffset, hOffset, count, 1, true, kind, stream, true,
                   "cudaMemcpyFromArrayAsync");
}
GPUSC_API int cudaMemcpyFromArrayAsync_ptsz(void* dst, const void* src, size_t wOffset,
                                            size_t hOffset, size_t count, int kind, void* stream) {
  return cudaMemcpyFromArrayAsync(dst, src, wOffset, hOffset, count, kind, perThread(stream));
}
GPUSC_API int cudaMemcpyArrayToArray(void* dst, size_t wOffsetDst, size_t hOffsetDst,
                                     const void* src, size_t wOffsetSrc, size_t hOffsetSrc,
                                     size_t count, int kind) {
  GPUSC_STICKY();
  const char* fn = "cudaMemcpyArrayToArray";
  ArrayRecord d, s;
  uint8_t *to = nullptr, *from = nullptr;
  if (int e = findArray(dst, fn, &d); e != kSuccess) return e;
  if (int e = findArray(src, fn, &s); e != kSuccess) return e;
  if (!arrayKind(kind, true, true)) return badArrayKind(kind, fn);
  if (int e = arrayRun(d, wOffsetDst, hOffsetDst, count, fn, &to); e != kSuccess) return e;
  if (int e = arrayRun(s, wOffsetSrc, hOffsetSrc, count, fn, &from); e != kSuccess) return e;
  return memcpyAny(to, from, count, kind, fn);
}
GPUSC_API int cudaMemcpyArrayToArray_ptds(void* dst, size_t wOffsetDst, size_t hOffsetDst,
                                          const void* src, size_t wOffsetSrc, size_t hOffsetSrc,
                                          size_t count, int kind) {
  return cudaMemcpyArrayToArray(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, count,
                                kind);
}

// ---- 3D copies and sets: pitched pointers (cudaMalloc3D) and CUDA arrays ----

namespace {

// One side of a cudaMemcpy3D: where (x, y, z) = (0, 0, 0) of the copied box starts, and the
// bytes from one row and one slice to the next.
struct CopySide {
  uint8_t* origin = nullptr;
  size_t pitch = 0, slicePitch = 0;
};

// The copy `p` describes, checked (arrays' bounds, units and kinds), as an operation to run now
// or in a stream: extent.width rows of bytes (of the array's elements when an array takes part),
// extent.height rows a slice, extent.depth slices.
int plan3D(const abi::Memcpy3DParms& p, const char* fn, Replay* op) {
  if ((p.srcArray != nullptr && p.srcPtr.ptr != nullptr) ||
      (p.dstArray != nullptr && p.dstPtr.ptr != nullptr))
    return fail(kErrorInvalidValue, fn, "a side names both a CUDA array and a pointer");
  if ((p.srcArray == nullptr && p.srcPtr.ptr == nullptr) ||
      (p.dstArray == nullptr && p.dstPtr.ptr == nullptr))
    return fail(kErrorInvalidValue, fn, "a side names neither a CUDA array nor a pointer");
  ArrayRecord arrays[2];
  const void* handles[2] = {p.srcArray, p.dstArray};
  size_t element = 1;  // bytes of the extent's and the arrays' positions' unit
  for (int k = 0; k < 2; ++k) {
    if (handles[k] == nullptr) continue;
    if (int e = findArray(handles[k], fn, &arrays[k]); e != kSuccess) return e;
    if (element != 1 && element != arrays[k].format.bytes())
      return fail(kErrorInvalidValue, fn, "arrays of different element sizes");
    element = arrays[k].format.bytes();
  }
  if (!arrayKind(p.kind, p.dstArray != nullptr, p.srcArray != nullptr) &&
      (p.srcArray != nullptr || p.dstArray != nullptr))
    return badArrayKind(p.kind, fn);
  const size_t width = p.extent.width * element, height = p.extent.height, depth = p.extent.depth;
  CopySide sides[2];
  const abi::Pos pos[2] = {p.srcPos, p.dstPos};
  const abi::PitchedPtr ptrs[2] = {p.srcPtr, p.dstPtr};
  for (int k = 0; k < 2; ++k) {
    if (handles[k] != nullptr) {
      const ArrayRecord& a = arrays[k];
      if (pos[k].x > a.width || p.extent.width > a.width - pos[k].x || pos[k].y > a.rows() ||
          height > a.rows() - pos[k].y || pos[k].z > a.slices() || depth > a.slices() - pos[k].z)
        return fail(kErrorInvalidValue, fn,
                    std::string(k == 0 ? "the source" : "the destination") +
                        " box runs past the array's " + std::to_string(a.width) + " x " +
                        std::to_string(a.rows()) + " x " + std::to_string(a.slices()) +
                        " elements");
      sides[k].pitch = a.pitch;
      sides[k].slicePitch = a.slicePitch();
      sides[k].origin = static_cast<uint8_t*>(ptr(a.base)) + pos[k].z * sides[k].slicePitch +
                        pos[k].y * a.pitch + pos[k].x * element;
    } else {
      const abi::PitchedPtr& q = ptrs[k];
      if (width > q.pitch && height * depth > 1)
        return fail(kErrorInvalidPitchValue, fn, "a row wider than its pitch");
      sides[k].pitch = q.pitch;
      sides[k].slicePitch = q.pitch * (q.ysize != 0 ? q.ysize : height);
      sides[k].origin = static_cast<uint8_t*>(q.ptr) + pos[k].z * sides[k].slicePitch +
                        pos[k].y * q.pitch + pos[k].x;
      if (int e =
              regionInside(sides[k].origin, width, height, q.pitch, depth, sides[k].slicePitch, fn);
          e != kSuccess)
        return e;
    }
  }
  const CopySide from = sides[0], to = sides[1];
  const int kind = p.kind;
  *op = [=] {
    for (size_t z = 0; z < depth; ++z)
      if (int e = copy2D(to.origin + z * to.slicePitch, to.pitch, from.origin + z * from.slicePitch,
                         from.pitch, width, height, kind, fn);
          e != kSuccess)
        return e;
    return int(kSuccess);
  };
  return kSuccess;
}

int memcpy3D(const abi::Memcpy3DParms* p, void* stream, bool async, const char* fn) {
  GPUSC_STICKY();
  if (p == nullptr) return fail(kErrorInvalidValue, fn, "null parameters");
  Replay op;
  if (int e = plan3D(*p, fn, &op); e != kSuccess) return e;
  return async ? issue(fn, stream, std::move(op), copy3DKind(*p)) : op();
}

int memset3D(abi::PitchedPtr p, int value, abi::Extent e, void* stream, bool async,
             const char* fn) {
  GPUSC_STICKY();
  if (e.width > p.pitch && e.height * e.depth > 1)
    return fail(kErrorInvalidValue, fn, "a row wider than its pitch");
  const size_t slicePitch = p.pitch * (p.ysize != 0 ? p.ysize : e.height);
  if (int r = regionInside(p.ptr, e.width, e.height, p.pitch, e.depth, slicePitch, fn);
      r != kSuccess)
    return r;
  Replay op = [=] {
    for (size_t z = 0; z < e.depth; ++z)
      for (size_t y = 0; y < e.height; ++y)
        if (int r = cudaMemset(static_cast<uint8_t*>(p.ptr) + z * slicePitch + y * p.pitch, value,
                               e.width);
            r != kSuccess)
          return r;
    return int(kSuccess);
  };
  return async ? issue(fn, stream, std::move(op), typeKind(kNodeMemset)) : op();
}

}  // namespace

// Rows of extent.width bytes, padded to the pitch cudaMallocPitch gives, extent.height rows a
// slice, extent.depth slices.
GPUSC_API int cudaMalloc3D(abi::PitchedPtr* p, abi::Extent extent) {
  if (p == nullptr) return fail(kErrorInvalidValue, "cudaMalloc3D", "a null result");
  size_t pitch = 0, rows = 0;
  if (__builtin_mul_overflow(extent.height, extent.depth, &rows))
    return fail(kErrorMemoryAllocation, "cudaMalloc3D", "more bytes than an address holds");
  void* base = nullptr;
  if (int e = cudaMallocPitch(&base, &pitch, extent.width, rows); e != kSuccess) return e;
  *p = {base, pitch, extent.width, extent.height};
  return kSuccess;
}

GPUSC_API int cudaMemcpy3D(const abi::Memcpy3DParms* p) {
  return memcpy3D(p, nullptr, false, "cudaMemcpy3D");
}
GPUSC_API int cudaMemcpy3D_ptds(const abi::Memcpy3DParms* p) { return cudaMemcpy3D(p); }
GPUSC_API int cudaMemcpy3DAsync(const abi::Memcpy3DParms* p, void* stream) {
  return memcpy3D(p, stream, true, "cudaMemcpy3DAsync");
}
GPUSC_API int cudaMemcpy3DAsync_ptsz(const abi::Memcpy3DParms* p, void* stream) {
  return cudaMemcpy3DAsync(p, perThread(stream));
}

// cudaMemcpy3DPeerParms: a 3D copy between devices, here between device 0 and itself.
struct Memcpy3DPeerParms {
  void* srcArray;
  abi::Pos srcPos;
  abi::PitchedPtr srcPtr;
  int srcDevice;
  void* dstArray;
  abi::Pos dstPos;
  abi::PitchedPtr dstPtr;
  int dstDevice;
  abi::Extent extent;
};
namespace {
int peer3D(const Memcpy3DPeerParms* p, abi::Memcpy3DParms* out, const char* fn) {
  if (p == nullptr) return fail(kErrorInvalidValue, fn, "null parameters");
  if (int e = peerDevices(p->dstDevice, p->srcDevice, fn); e != kSuccess) return e;
  *out = {};
  out->srcArray = p->srcArray;
  out->srcPos = p->srcPos;
  out->srcPtr = p->srcPtr;
  out->dstArray = p->dstArray;
  out->dstPos = p->dstPos;
  out->dstPtr = p->dstPtr;
  out->extent = p->extent;
  out->kind = kMemcpyDeviceToDevice;
  return kSuccess;
}
}  // namespace
GPUSC_API int cudaMemcpyBatchAsync_ptsz(void* const* dsts, const void* const* srcs,
                                        const size_t* sizes, size_t count,
                                        const MemcpyAttributes* attrs, const size_t* attrsIdxs,
                                        size_t numAttrs, void* stream) {
  return cudaMemcpyBatchAsync(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs,
                              perThread(stream));
}
GPUSC_API int cudaMemcpy3DPeer(const Memcpy3DPeerParms* p) {
  abi::Memcpy3DParms q;
  if (int e = peer3D(p, &q, "cudaMemcpy3DPeer"); e != kSuccess) return e;
  return memcpy3D(&q, nullptr, false, "cudaMemcpy3DPeer");
}
GPUSC_API int cudaMemcpy3DPeer_ptds(const Memcpy3DPeerParms* p) { return cudaMemcpy3DPeer(p); }
GPUSC_API int cudaMemcpy3DPeerAsync(const Memcpy3DPeerParms* p, void* stream) {
  abi::Memcpy3DParms q;
  if (int e = peer3D(p, &q, "cudaMemcpy3DPeerAsync"); e != kSuccess) return e;
  return memcpy3D(&q, stream, true, "cudaMemcpy3DPeerAsync");
}
GPUSC_API int cudaMemcpy3DPeerAsync_ptsz(const Memcpy3DPeerParms* p, void* stream) {
  return cudaMemcpy3DPeerAsync(p, perThread(stream));
}

// cudaMemcpy3DBatchOp (CUDA 12.8's batched 3D copies): each operand a pointer (rows of rowLength
// elements, layers of layerHeight rows; 0: as tight as the extent) or a CUDA array at an offset.
struct Memcpy3DOperand {
  int type;  // cudaMemcpy3DOperandType: a pointer (1) or a CUDA array (2)
  union {
    struct {
      void* ptr;
      size_t rowLength, layerHeight;
      abi::MemLocation locHint;
    } ptr;
    struct {
      void* array;
      abi::Pos offset;
    } array;
  } op;
};
struct Memcpy3DBatchOp {
  Memcpy3DOperand src, dst;
  abi::Extent extent;  // in elements: bytes between pointers, the array's texels otherwise
  int srcAccessOrder;  // cudaMemcpySrcAccessOrder
  unsigned flags;
};

namespace {
// One operand of a batched 3D copy as cudaMemcpy3D's side of it: `elementBytes` is the size of
// the copy's elements (1 between pointers).
int batchOperand(const Memcpy3DOperand& o, const abi::Extent& e, size_t elementBytes, void** array,
                 abi::Pos* pos, abi::PitchedPtr* ptr, const char* fn) {
  if (o.type == 2) {
    *array = o.op.array.array;
    *pos = o.op.array.offset;
    return kSuccess;
  }
  if (o.type != 1)
    return fail(kErrorInvalidValue, fn,
                "operand type " + std::to_string(o.type) +
                    ": cudaMemcpyOperandTypePointer (1) or cudaMemcpyOperandTypeArray (2)");
  if ((o.op.ptr.rowLength != 0 && o.op.ptr.rowLength < e.width) ||
      (o.op.ptr.layerHeight != 0 && o.op.ptr.layerHeight < e.height))
    return fail(kErrorInvalidValue, fn,
                "a pointer operand's rowLength or layerHeight below the copy's width or height");
  const size_t row = (o.op.ptr.rowLength != 0 ? o.op.ptr.rowLength : e.width) * elementBytes;
  *ptr = {o.op.ptr.ptr, row, row, o.op.ptr.layerHeight != 0 ? o.op.ptr.layerHeight : e.height};
  *pos = {0, 0, 0};
  return kSuccess;
}
}  // namespace

// Each copy as cudaMemcpy3DAsync makes it, in the stream's order. A host source read during the
// call is read then, also in a capture (the bytes the copy reads, kept for the graph).
GPUSC_API int cudaMemcpy3DBatchAsync(size_t numOps, const Memcpy3DBatchOp* ops,
                                     unsigned long long flags, void* stream) {
  GPUSC_STICKY();
  const char* fn = "cudaMemcpy3DBatchAsync";
  if (stream == nullptr || stream == ptr(1))
    return fail(kErrorInvalidValue, fn, "the legacy default stream: use another stream");
  if (numOps == 0 || ops == nullptr || flags != 0)
    return fail(kErrorInvalidValue, fn, "no copies, a null list of them, or flags other than 0");
  for (size_t i = 0; i < numOps; ++i) {
    const Memcpy3DBatchOp& b = ops[i];
    if (b.srcAccessOrder < 1 || b.srcAccessOrder > 3 || b.flags > 1)
      return fail(kErrorInvalidValue, fn,
                  "copy " + std::to_string(i) +
                      ": srcAccessOrder must be Stream, DuringApiCall or Any, flags 0 or "
                      "cudaMemcpyFlagPreferOverlapWithCompute");
    if (b.extent.width == 0 || b.extent.height == 0 || b.extent.depth == 0)
      return fail(kErrorInvalidValue, fn, "copy " + std::to_string(i) + ": an extent of 0");
    size_t elementBytes = 1;
    for (const Memcpy3DOperand* o : {&b.src, &b.dst})
      if (o->type == 2) {
        ArrayRecord a;
        if (int e = findArray(o->op.array.array, fn, &a); e != kSuccess) return e;
        const size_t bytes = a.width != 0 ? a.pitch / a.width : 1;
        if (elementBytes != 1 && bytes != elementBytes)
          return fail(kErrorInvalidValue, fn,
                      "copy " + std::to_string(i) + ": CUDA arrays of different element sizes");
        elementBytes = bytes;
      }
    abi::Memcpy3DParms q{};
    if (int e = batchOperand(b.src, b.extent, elementBytes, &q.srcArray, &q.srcPos, &q.srcPtr, fn);
        e != kSuccess)
      return e;
    if (int e = batchOperand(b.dst, b.extent, elementBytes, &q.dstArray, &q.dstPos, &q.dstPtr, fn);
        e != kSuccess)
      return e;
    q.extent = b.extent;
    q.kind = kDefault;
    std::shared_ptr<std::vector<uint8_t>> now;
    if (b.srcAccessOrder == 2 && b.src.type == 1 && capturing(stream) &&
        client().where(b.src.op.ptr.ptr) != Client::Where::Device) {
      const size_t slice = q.srcPtr.pitch * q.srcPtr.ysize;
      const size_t bytes = slice * (b.extent.depth - 1) + q.srcPtr.pitch * (b.extent.height - 1) +
                           b.extent.width * elementBytes;
      const auto* from = static_cast<const uint8_t*>(q.srcPtr.ptr);
      now = std::make_shared<std::vector<uint8_t>>(from, from + bytes);
      q.srcPtr.ptr = now->data();
    }
    Replay op;
    if (int e = plan3D(q, fn, &op); e != kSuccess) return e;
    if (now) op = [op, now] { return op(); };  // keeps the source's bytes
    if (int e = issue(fn, stream, std::move(op), copy3DKind(q)); e != kSuccess) return e;
  }
  return kSuccess;
}
GPUSC_API int cudaMemcpy3DBatchAsync_ptsz(size_t numOps, const Memcpy3DBatchOp* ops,
                                          unsigned long long flags, void* stream) {
  return cudaMemcpy3DBatchAsync(numOps, ops, flags, perThread(stream));
}

GPUSC_API int cudaMemset3D(abi::PitchedPtr p, int value, abi::Extent extent) {
  return memset3D(p, value, extent, nullptr, false, "cudaMemset3D");
}
GPUSC_API int cudaMemset3D_ptds(abi::PitchedPtr p, int value, abi::Extent extent) {
  return cudaMemset3D(p, value, extent);
}
GPUSC_API int cudaMemset3DAsync(abi::PitchedPtr p, int value, abi::Extent extent, void* stream) {
  return memset3D(p, value, extent, stream, true, "cudaMemset3DAsync");
}
GPUSC_API int cudaMemset3DAsync_ptsz(abi::PitchedPtr p, int value, abi::Extent extent,
                                     void* stream) {
  return cudaMemset3DAsync(p, value, extent, perThread(stream));
}

// ---- texture objects ----

namespace {

// `bytes` from `p` must lie in one device allocation of the program's (device, managed or mapped
// memory), `p` aligned as CUDA requires of a texture's first texel.
int textureMemory(const void* p, uint64_t bytes, const char* function) {
  if (p == nullptr) return fail(kErrorInvalidValue, function, "a null devPtr");
  uint64_t base = 0, size = 0;
  if (!client().allocation(p, &base, &size, nullptr))
    return fail(kErrorInvalidValue, function, "devPtr is not inside a device allocation");
  if (u64(p) % kTextureAlignment != 0)
    return fail(kErrorInvalidValue, function,
                "devPtr is not aligned to cudaDeviceProp::textureAlignment (" +
                    std::to_string(kTextureAlignment) + " bytes)");
  if (bytes > base + size - u64(p))
    return fail(kErrorInvalidValue, function,
                "the texture's " + std::to_string(bytes) + " bytes run past the end of its " +
                    std::to_string(size) + "-byte allocation");
  return kSuccess;
}

// The descriptor the fetch reads for the resource `r` sampled as `t`; an error code when gpusc
// cannot make one (the reason on stderr).
int describeTexture(const abi::ResourceDesc& r, const abi::TextureDesc& t,
                    tex::TextureDescriptor* d) {
  const char* fn = "cudaCreateTextureObject";
  constexpr uint64_t kMaxTexels = uint64_t(1) << 31;  // along an axis (the fetch's limit)
  TexelFormat f;
  if (r.flags != 0) return fail(kErrorInvalidValue, fn, "cudaResourceDesc::flags must be 0");
  switch (r.resType) {
    case abi::kResourceArray: {
      ArrayRecord a;
      if (int e = findArray(r.res.array.array, fn, &a); e != kSuccess) return e;
      f = a.format;
      d->dims = a.dims();
      d->layered = a.layered();
      d->base = a.base;
      d->width = a.width;
      d->height = a.rows();
      d->depth = a.slices();
      d->pitch = a.pitch;
      d->slicePitch = a.slicePitch();
      break;
    }
    case abi::kResourceMipmappedArray:
      return fail(kErrorNotSupported, fn, "mipmapped arrays are not supported");
    case abi::kResourceLinear: {
      const auto& l = r.res.linear;
      if (int e = texelFormat(&l.desc, fn, &f); e != kSuccess) return e;
      if (l.sizeInBytes < f.bytes())
        return fail(kErrorInvalidValue, fn, "sizeInBytes holds no texel");
      if (int e = textureMemory(l.devPtr, l.sizeInBytes, fn); e != kSuccess) return e;
      d->dims = 1;
      d->linearMemory = 1;
      d->base = u64(l.devPtr);
      d->width = l.sizeInBytes / f.bytes();
      d->height = 1;
      d->pitch = d->width * f.bytes();
      break;
    }
    case abi::kResourcePitch2D: {
      const auto& p = r.res.pitch2D;
      if (int e = texelFormat(&p.desc, fn, &f); e != kSuccess) return e;
      if (p.width == 0 || p.height == 0)
        return fail(kErrorInvalidValue, fn, "a pitch-2D texture of no texels");
      if (p.width > kMaxTexels || p.height > kMaxTexels)
        return fail(kErrorInvalidValue, fn, "more than 2^31 texels along an axis");
      if (p.pitchInBytes < p.width * f.bytes())
        return fail(kErrorInvalidValue, fn,
                    "pitchInBytes " + std::to_string(p.pitchInBytes) + " is shorter than a row (" +
                        std::to_string(p.width * f.bytes()) + " bytes)");
      if (p.pitchInBytes % kTexturePitchAlignment != 0)
        return fail(kErrorInvalidValue, fn,
                    "pitchInBytes is not a multiple of cudaDeviceProp::texturePitchAlignment (" +
                        std::to_string(kTexturePitchAlignment) + " bytes)");
      uint64_t bytes = 0;
      if (__builtin_mul_overflow(uint64_t(p.pitchInBytes), uint64_t(p.height - 1), &bytes) ||
          __builtin_add_overflow(bytes, uint64_t(p.width * f.bytes()), &bytes))
        return fail(kErrorInvalidValue, fn, "more bytes than an address holds");
      if (int e = textureMemory(p.devPtr, bytes, fn); e != kSuccess) return e;
      d->dims = 2;
      d->base = u64(p.devPtr);
      d->width = p.width;
      d->height = p.height;
      d->pitch = p.pitchInBytes;
      break;
    }
    default:
      return fail(kErrorInvalidValue, fn,
                  "resource type " + std::to_string(r.resType) + " is not a cudaResourceType");
  }
  if (d->width > kMaxTexels) return fail(kErrorInvalidValue, fn, "more than 2^31 texels");
  d->channels = f.channels;
  d->channelBits = f.bits;
  d->kind = f.kind;

  // How it is sampled.
  if (t.readMode != abi::kReadElementType && t.readMode != abi::kReadNormalizedFloat)
    return fail(kErrorInvalidValue, fn,
                "read mode " + std::to_string(t.readMode) + " is not a cudaTextureReadMode");
  if (t.sRGB != 0) return fail(kErrorNotSupported, fn, "sRGB conversion is not supported");
  if (t.maxAnisotropy > 1)
    return fail(kErrorNotSupported, fn,
                "anisotropic filtering (maxAnisotropy > 1) is not supported");
  if (t.seamlessCubemap != 0)
    return fail(kErrorInvalidValue, fn, "seamlessCubemap is for cubemap arrays only");
  // The mipmap fields apply to mipmapped arrays only (refused above): ignored, as CUDA does.
  const bool integerFormat = f.kind != abi::kChannelFloat;
  if (t.readMode == abi::kReadNormalizedFloat && integerFormat) {
    if (f.bits == 32)
      return fail(kErrorInvalidValue, fn,
                  "cudaReadModeNormalizedFloat of 32-bit integers: only 8- and 16-bit integers "
                  "read as normalized floats");
    d->normalizedRead = 1;  // (floats read as floats in either mode)
  }
  if (d->linearMemory) {
    // tex1Dfetch: integer indices, no filtering, 0 out of range. CUDA ignores the address and
    // filter modes of linear memory.
    d->address[0] = d->address[1] = d->address[2] = uint8_t(tex::TexAddress::Border);
    return kSuccess;
  }
  if (t.filterMode != abi::kFilterPoint && t.filterMode != abi::kFilterLinear)
    return fail(kErrorInvalidValue, fn,
                "filter mode " + std::to_string(t.filterMode) + " is not a cudaTextureFilterMode");
  if (t.filterMode == abi::kFilterLinear) {
    if (integerFormat && !d->normalizedRead)
      return fail(kErrorInvalidValue, fn,
                  "linear filtering of a texture that reads integers (cudaReadModeElementType of "
                  "an integer format): use cudaFilterModePoint, or cudaReadModeNormalizedFloat");
    d->linearFilter = 1;
  }
  d->normalizedCoords = t.normalizedCoords != 0 ? 1 : 0;
  for (int a = 0; a < 3; ++a) {
    int mode = a < d->dims ? t.addressMode[a] : int(abi::kAddressClamp);
    if (mode < abi::kAddressWrap || mode > abi::kAddressBorder)
      return fail(kErrorInvalidValue, fn,
                  "address mode " + std::to_string(mode) + " is not a cudaTextureAddressMode");
    // Without normalized coordinates, wrap and mirror clamp (CUDA switches them to clamp).
    if (!d->normalizedCoords && (mode == abi::kAddressWrap || mode == abi::kAddressMirror))
      mode = abi::kAddressClamp;
    d->address[a] = uint8_t(mode);
  }
  for (int c = 0; c < 4; ++c) d->border[c] = t.borderColor[c];
  return kSuccess;
}

}  // namespace

namespace {

// Writes `d` to device memory of its own (not an allocation of the program's) and returns its
// address, the object's handle.
int writeDescriptor(const tex::TextureDescriptor& d, uint64_t* addr) {
  wire::Buffer b;
  b.put(uint64_t(sizeof d));
  std::vector<uint8_t> reply;
  Client& c = client();
  if (int e = c.call(wire::Op::Malloc, b, &reply); e != kSuccess) return record(e);
  std::memcpy(addr, reply.data(), std::min<size_t>(8, reply.size()));
  if (int e = copyToDevice(ptr(*addr), &d, sizeof d); e != kSuccess) {
    wire::Buffer f;
    f.put(*addr);
    c.call(wire::Op::Free, f);
    return record(e);
  }
  return kSuccess;
}

}  // namespace

GPUSC_API int cudaCreateTextureObject(unsigned long long* object, const abi::ResourceDesc* res,
                                      const abi::TextureDesc* texDesc, const void* view) {
  GPUSC_STICKY();
  const char* fn = "cudaCreateTextureObject";
  if (object == nullptr || res == nullptr || texDesc == nullptr)
    return fail(kErrorInvalidValue, fn, "a null result, resource or texture descriptor");
  if (view != nullptr)
    return fail(kErrorNotSupported, fn, "resource views (cudaResourceViewDesc) are not supported");
  tex::TextureDescriptor d;
  if (int e = describeTexture(*res, *texDesc, &d); e != kSuccess) return e;
  uint64_t addr = 0;
  if (int e = writeDescriptor(d, &addr); e != kSuccess) return e;
  {
    TextureState& s = textureState();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.textures[addr] = TextureRecord{*res, *texDesc};
  }
  *object = addr;
  return kSuccess;
}

GPUSC_API int cudaDestroyTextureObject(unsigned long long object) {
  GPUSC_STICKY();
  if (object == 0) return kSuccess;
  {
    TextureState& s = textureState();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.textures.erase(object) == 0)
      return fail(kErrorInvalidValue, "cudaDestroyTextureObject",
                  "not a texture object (destroyed already, or never made)");
  }
  wire::Buffer b;
  b.put(uint64_t(object));
  return record(client().call(wire::Op::Free, b));
}

namespace {

int findTexture(unsigned long long object, const char* function, TextureRecord* out) {
  TextureState& s = textureState();
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = s.textures.find(object);
  if (it == s.textures.end()) return fail(kErrorInvalidValue, function, "not a texture object");
  *out = it->second;
  return kSuccess;
}

}  // namespace

GPUSC_API int cudaGetTextureObjectResourceDesc(abi::ResourceDesc* res, unsigned long long object) {
  const char* fn = "cudaGetTextureObjectResourceDesc";
  if (res == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  TextureRecord t;
  if (int e = findTexture(object, fn, &t); e != kSuccess) return e;
  *res = t.res;
  return kSuccess;
}

GPUSC_API int cudaGetTextureObjectTextureDesc(abi::TextureDesc* desc, unsigned long long object) {
  const char* fn = "cudaGetTextureObjectTextureDesc";
  if (desc == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  TextureRecord t;
  if (int e = findTexture(object, fn, &t); e != kSuccess) return e;
  *desc = t.tex;
  return kSuccess;
}

// ---- surface objects: a CUDA array made with cudaArraySurfaceLoadStore, read and written as
// raw bytes (surf1Dread, surf2Dwrite, ...) through a descriptor like a texture's ----

namespace {

std::map<uint64_t, abi::ResourceDesc>& surfaces() {
  static std::map<uint64_t, abi::ResourceDesc> s;  // guarded by textureState().mutex
  return s;
}

}  // namespace

GPUSC_API int cudaCreateSurfaceObject(unsigned long long* object, const abi::ResourceDesc* res) {
  GPUSC_STICKY();
  const char* fn = "cudaCreateSurfaceObject";
  if (object == nullptr || res == nullptr)
    return fail(kErrorInvalidValue, fn, "a null result or resource descriptor");
  if (res->resType != abi::kResourceArray)
    return fail(kErrorInvalidValue, fn, "a surface is a CUDA array (cudaResourceTypeArray)");
  if (res->flags != 0) return fail(kErrorInvalidValue, fn, "cudaResourceDesc::flags must be 0");
  ArrayRecord a;
  if (int e = findArray(res->res.array.array, fn, &a); e != kSuccess) return e;
  if ((a.flags & abi::kArraySurfaceLoadStore) == 0)
    return fail(kErrorInvalidValue, fn, "the array was not made with cudaArraySurfaceLoadStore");
  tex::TextureDescriptor d;
  d.magic = tex::kSurfaceMagic;
  d.dims = a.dims();
  d.layered = a.layered();
  d.channels = a.format.channels;
  d.channelBits = a.format.bits;
  d.kind = a.format.kind;
  d.base = a.base;
  d.width = a.width;
  d.height = a.rows();
  d.depth = a.slices();
  d.pitch = a.pitch;
  d.slicePitch = a.slicePitch();
  uint64_t addr = 0;
  if (int e = writeDescriptor(d, &addr); e != kSuccess) return e;
  {
    TextureState& s = textureState();
    std::lock_guard<std::mutex> lock(s.mutex);
    surfaces()[addr] = *res;
  }
  *object = addr;
  return kSuccess;
}

GPUSC_API int cudaDestroySurfaceObject(unsigned long long object) {
  GPUSC_STICKY();
  if (object == 0) return kSuccess;
  {
    TextureState& s = textureState();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (surfaces().erase(object) == 0)
      return fail(kErrorInvalidValue, "cudaDestroySurfaceObject",
                  "not a surface object (destroyed already, or never made)");
  }
  wire::Buffer b;
  b.put(uint64_t(object));
  return record(client().call(wire::Op::Free, b));
}

GPUSC_API int cudaGetSurfaceObjectResourceDesc(abi::ResourceDesc* res, unsigned long long object) {
  const char* fn = "cudaGetSurfaceObjectResourceDesc";
  if (res == nullptr) return fail(kErrorInvalidValue, fn, "a null result");
  TextureState& s = textureState();
  std::lock_guard<std::mutex> lock(s.mutex);
  const auto it = surfaces().find(object);
  if (it == surfaces().end()) return fail(kErrorInvalidValue, fn, "not a surface object");
  *res = it->second;
  return kSuccess;
}

// ===================================================================== the rest

// unsupported.cpp's functions: one line naming the function, then cudaErrorNotSupported.
extern "C" __attribute__((visibility("hidden"))) int gpusc_cudart_unsupported(const char* name) {
  std::fprintf(stderr,
               "gpusc: %s is not supported by gpusc's CUDA runtime (docs/cuda-programs.md lists "
               "what is)\n",
               name);
  reportFailure(kErrorNotSupported);
  return record(kErrorNotSupported);
}
