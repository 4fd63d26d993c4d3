// The program's side of libgpusc_cudart: its one connection to the gpusc process that simulates
// its device (models/cudart/wire.hpp), and the runtime state that belongs to the program: the
// allocations it holds (to tell device pointers from host pointers) and the kernels' parameter
// layouts (the launch configurations and the error state are per thread: cudart_api.cpp).
//
// CUDA's runtime API is process-wide, so this state is too: one Client per process, made on the
// first call (nvcc's registration code runs before main). Under `gpusc exec` the connection is the
// socket gpusc passed down (GPUSC_CUDART_FD); otherwise the Client starts `gpusc exec --attach`
// itself, with the settings in the environment, and waits for it to write the results when the
// program exits.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cudart/wire.hpp"

namespace gpusc::cudart::shim {

// dim3 as CUDA lays it out.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct Kernel {
  wire::FunctionFacts facts;
  std::vector<uint32_t> paramSizes;
  // cudaFuncSetAttribute's settings (-1: not set): the dynamic shared memory a launch may ask
  // for, and the preferred shared memory carve-out.
  int maxDynamicSharedBytes = -1;
  int preferredCarveout = -1;
};

class Client {
 public:
  static Client& instance();

  // One request and its reply. Returns the CUDA error code (kErrorNoDevice when there
  // is no simulator to ask, with the reason on stderr once). `fd` receives a descriptor sent with
  // the reply (-1 when none).
  int call(wire::Op op, const wire::Buffer& request, std::vector<uint8_t>* reply = nullptr,
           int* fd = nullptr);

  // The simulated device (zeros when there is no simulator).
  const wire::DeviceFacts& facts() const { return facts_; }
  // Whether there is a simulated device: asking counts as CUDA's initialisation (a child
  // forked before it starts its own simulator now). hasConnection only says whether a
  // simulator is connected.
  bool connected();
  bool hasConnection() const { return sock_ >= 0; }

  // A kernel's parameter layout and attributes, asked once.
  int kernel(const void* hostFun, const Kernel** out);
  // Changes a kernel's settings (cudaFuncSetAttribute), asking for the kernel first if needed.
  int setKernel(const void* hostFun, const std::function<void(Kernel&)>& change);
  void forgetKernels();
  void forgetKernel(const void* hostFun);  // a library's kernel, its library unloaded

  // Allocations, to classify pointers: device memory (host cannot touch it) and shared memory
  // (mapped in this process at the same address).
  // `mapped`: the bytes a shared allocation maps here; 0 for device memory. `counted`: it takes
  // device memory the program allocated (cudaMemGetInfo); false for a symbol's memory (device
  // memory, but not an allocation of the program's) and for pinned host memory (the host's).
  // `managed`: shared memory from cudaMallocManaged (or a __managed__ variable), which pointer
  // attributes call managed; other shared memory is mapped host memory.
  // `hostFlags`: cudaHostAlloc's flags (cudaMallocHost's: 0), for cudaHostGetFlags.
  void addAllocation(uint64_t base, uint64_t bytes, uint64_t mapped, bool counted = true,
                     bool managed = false, unsigned hostFlags = 0);
  void removeAllocation(uint64_t base);
  // Forgets the device memory the program allocated (cudaDeviceReset freed it): not shared
  // memory, nor the symbols' memory.
  void removeDeviceAllocations();
  enum class Where { Host, Device, Shared };
  Where where(const void* p) const;
  bool managed(const void* p) const;
  // The flags of the pinned host allocation holding `p` (false when none holds it).
  bool hostFlags(const void* p, unsigned* flags) const;
  // Host memory the program registered (cudaHostRegister): false when the range overlaps one
  // registered before (register), or `p` starts none (unregister).
  bool registerHost(const void* p, uint64_t bytes);
  bool unregisterHost(const void* p);
  bool registeredHost(const void* p) const;
  // The registered range holding `p`: its base and size (false when none holds it).
  bool registeredRange(const void* p, uint64_t* base, uint64_t* bytes) const;
  // The base and size of the allocation holding `p` (false when none).
  bool allocation(const void* p, uint64_t* base, uint64_t* bytes, uint64_t* mapped) const;
  // The bytes of the program's allocations (cudaMemGetInfo).
  uint64_t allocatedBytes() const;

  // Writes device printf text to the program's stdout.
  static void print(const std::vector<uint8_t>& text);

  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

 private:
  Client();
  void connect();
  void hello();
  void spawnSimulator();
  // A child forked before its parent's first CUDA call of its own (only nvcc's registrations
  // sent): its first call starts a simulator and repeats the registrations to it.
  void startAfterFork();
  void markInitialised();
  void lost(const std::string& why);
  static void beforeFork();
  static void afterForkInParent();
  static void afterForkInChild();

  mutable std::recursive_mutex mutex_;
  int sock_ = -1;
  int simulatorPid_ = -1;  // the gpusc this Client started (not under `gpusc exec`)
  std::string lostWhy_;
  bool reportedLost_ = false;
  bool forked_ = false;  // this process is a fork of the one that connected (afterForkInChild)
  // Whether a call other than nvcc's registrations has been made (CUDA's initialisation, after
  // which a forked child has no device), and until then the registrations sent, with each
  // one's reply, for a child forked before it to repeat (startAfterFork).
  bool initialised_ = false;
  bool startInChild_ = false;
  struct Registration {
    wire::Op op;
    std::vector<uint8_t> request, reply;
  };
  std::vector<Registration> registrations_;
  bool replaying_ = false;  // startAfterFork is repeating them (they are kept as they were)
  // A forked child's simulator's handle for each fat binary handle nvcc's code holds.
  std::map<uint64_t, uint64_t> handles_;
  wire::DeviceFacts facts_{};
  std::map<const void*, Kernel> kernels_;
  struct Allocation {
    uint64_t bytes;
    uint64_t mapped;  // shared memory: the bytes mapped here
    bool counted;
    bool managed;
    unsigned hostFlags;
  };
  std::map<uint64_t, Allocation> allocations_;
  std::map<uint64_t, uint64_t> registeredHost_;  // base -> bytes
};

}  // namespace gpusc::cudart::shim
