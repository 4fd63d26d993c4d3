#include "client.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cudart/cuda_errors.hpp"

extern char** environ;

namespace gpusc::cudart::shim {

namespace {

bool isExecutable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The gpusc that goes with this library: GPUSC_EXECUTABLE, else beside it in a build tree
// (build/cudart/ and build/gpusc) or an installation (lib/gpusc/ and bin/gpusc), else on PATH.
std::string simulatorPath() {
  if (const char* e = std::getenv("GPUSC_EXECUTABLE"); e && *e) return e;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&simulatorPath), &info) && info.dli_fname) {
    std::string dir = info.dli_fname;
    dir = dir.substr(0, dir.find_last_of('/') + 1);
    for (const char* rel : {"../gpusc", "../../bin/gpusc", "../bin/gpusc"})
      if (isExecutable(dir + rel)) return dir + rel;
  }
  return "gpusc";
}

// The requests whose first field is a fat binary's handle (models/cudart/wire.hpp).
bool carriesHandle(wire::Op op) {
  return op == wire::Op::RegisterFunction || op == wire::Op::RegisterVar ||
         op == wire::Op::RegisterManagedVar || op == wire::Op::UnregisterFatBinary ||
         op == wire::Op::InitModule;
}

}  // namespace

Client& Client::instance() {
  static Client client;
  return client;
}

Client::Client() {
  ::pthread_atfork(&Client::beforeFork, &Client::afterForkInParent, &Client::afterForkInChild);
  connect();
}

Client::~Client() {
  // The program's output before the simulator's summary (stdio flushes after this otherwise).
  std::fflush(stdout);
  if (sock_ >= 0) ::close(sock_);  // the simulator sees the program end
  sock_ = -1;
  if (simulatorPid_ > 0) {
    // The simulator this library started writes the results and the summary now: the program
    // ends after it, so that the summary comes before the shell's prompt.
    int status = 0;
    while (::waitpid(simulatorPid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void Client::lost(const std::string& why) {
  if (sock_ >= 0) ::close(sock_);
  sock_ = -1;
  if (lostWhy_.empty()) lostWhy_ = why;
}

void Client::connect() {
  if (const char* text = std::getenv(wire::kSocketEnv); text && *text) {
    char* end = nullptr;
    const long fd = std::strtol(text, &end, 10);
    // The claim's lock: the programs a script runs share the socket's descriptor, and only one
    // at a time may use it (the others, running beside it, start simulators of their own).
    int claim = -1;
    if (const char* c = std::getenv(wire::kClaimEnv); c && *c) {
      char* cend = nullptr;
      const long n = std::strtol(c, &cend, 10);
      if (*cend == '\0' && n >= 0 && ::fcntl(int(n), F_GETFD) >= 0) claim = int(n);
    }
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;  // the whole file
    // The descriptor must still be gpusc's socket: a script between `gpusc exec` and this
    // program may have closed it (Python's subprocess closes every descriptor above 2 by
    // default) or put something else there (`3>&1`). Then this program gets a simulator of its
    // own, with the run's settings from the environment, as a program started beside another
    // does.
    struct stat st {};
    const bool usable =
        *end == '\0' && fd >= 0 && ::fstat(int(fd), &st) == 0 && S_ISSOCK(st.st_mode);
    if (!usable || (claim >= 0 && ::fcntl(claim, F_SETLK, &lock) != 0)) {
      if (usable) ::close(int(fd));
      if (claim >= 0) ::close(claim);
      ::unsetenv(wire::kSocketEnv);
      ::unsetenv(wire::kClaimEnv);
      spawnSimulator();
    } else {
      sock_ = int(fd);
      // Programs this one starts get a simulator of their own, not this connection. The claim
      // stays open (closing it would release the lock) until the process ends.
      ::fcntl(sock_, F_SETFD, FD_CLOEXEC);
      if (claim >= 0) ::fcntl(claim, F_SETFD, FD_CLOEXEC);
      ::unsetenv(wire::kSocketEnv);
      ::unsetenv(wire::kClaimEnv);
    }
  } else {
    spawnSimulator();
  }
  hello();
}

void Client::hello() {
  if (sock_ < 0) return;
  wire::Buffer hello;
  hello.put(wire::kVersion).putString(program_invocation_short_name);
  std::vector<uint8_t> reply;
  if (call(wire::Op::Hello, hello, &reply) != kSuccess || reply.size() < sizeof facts_) {
    lost("the simulator refused the program (its message above)");
    return;
  }
  wire::Reader in(reply.data(), reply.size());
  facts_ = in.get<wire::DeviceFacts>();
  // A simulator that a program this one starts starts writes its results inside this one's.
  if (const std::string folder = in.getString(); in.ok && !folder.empty())
    ::setenv(wire::kParentOutEnv, folder.c_str(), 1);
}

// fork() without exec: the child shares its parent's socket, and its requests would interleave
// with the parent's, so it closes its copy. A child of a parent that has initialised CUDA (made
// a call other than nvcc's registrations) has no device, as on a GPU: every call answers
// cudaErrorInitializationError (call()). A child forked before that gets a device of its own,
// as on a GPU: its first call starts a simulator (startAfterFork). The mutex is held across the
// fork, so that no other thread is changing the state the child copies; the child gets a fresh
// one (its copy is locked by the parent's thread, which an unlock in the child's thread does not
// release).
void Client::beforeFork() { instance().mutex_.lock(); }
void Client::afterForkInParent() { instance().mutex_.unlock(); }
void Client::afterForkInChild() {
  Client& c = instance();
  new (&c.mutex_) std::recursive_mutex();
  const bool connected = c.sock_ >= 0;
  if (connected) ::close(c.sock_);  // the parent's connection stays open in the parent
  c.sock_ = -1;
  c.simulatorPid_ = -1;  // the parent's to wait for
  c.reportedLost_ = false;
  if ((connected || c.startInChild_) && !c.initialised_)  // a child's child before its start too
    c.startInChild_ = true;
  else
    c.forked_ = true;
}

// The child's own simulator, with the settings of the environment (the parent's, under `gpusc
// exec`), writing inside the parent's results (GPUSC_PARENT_OUT, which the parent's Hello set),
// told the registrations the parent made. Its fat binaries get handles of their own; nvcc's code
// holds the parent's, which call() translates (handles_).
void Client::startAfterFork() {
  startInChild_ = false;
  handles_.clear();  // a child of a forked child: its parent's simulator's handles are gone
  spawnSimulator();
  hello();
  replaying_ = true;
  for (const Registration& r : registrations_) {
    if (sock_ < 0) break;
    wire::Buffer request;
    request.bytes = r.request;
    std::vector<uint8_t> reply;
    const bool accepted = call(r.op, request, &reply) == kSuccess;
    if (accepted && r.op == wire::Op::RegisterFatBinary && reply.size() == 8 &&
        r.reply.size() == 8) {
      uint64_t held = 0, own = 0;
      std::memcpy(&held, r.reply.data(), 8);
      std::memcpy(&own, reply.data(), 8);
      handles_[held] = own;
    } else if (!accepted || reply != r.reply) {
      lost("the simulator of this forked process did not accept the parent's kernels");
      break;
    }
  }
  replaying_ = false;
}

void Client::spawnSimulator() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    lost(std::string("socketpair: ") + std::strerror(errno));
    return;
  }
  const std::string path = simulatorPath();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pair[1], 3);  // dup2 clears close-on-exec
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::string name = program_invocation_short_name;
  const char* argv[] = {path.c_str(), "exec",       "--attach-fd", "3",
                        "--program",  name.c_str(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, path.c_str(), &actions, nullptr,
                                const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pair[1]);
  if (rc != 0) {
    ::close(pair[0]);
    lost("cannot start " + path + ": " + std::strerror(rc) +
         " (set GPUSC_EXECUTABLE, or run the program with `gpusc exec -- PROGRAM`)");
    return;
  }
  sock_ = pair[0];
  simulatorPid_ = pid;
}

int Client::call(wire::Op op, const wire::Buffer& request, std::vector<uint8_t>* reply, int* fd) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (fd) *fd = -1;
  if (forked_) {
    if (op == wire::Op::UnregisterFatBinary) return kSuccess;  // the child's exit: nothing to say
    if (!reportedLost_) {
      std::fprintf(stderr,
                   "gpusc: this process was forked from a process that uses CUDA and has no "
                   "device of its own (as on a GPU after its runtime was initialised): make "
                   "CUDA calls in the parent, or exec a program, which gets a simulator of its "
                   "own\n");
      reportedLost_ = true;
    }
    return kErrorInitializationError;
  }
  if (startInChild_) {
    if (op == wire::Op::UnregisterFatBinary) return kSuccess;  // its exit, without CUDA
    startAfterFork();
  }
  // nvcc's registrations before the first other call are kept for a child forked before it.
  const bool registration = op == wire::Op::RegisterFatBinary || op == wire::Op::RegisterFunction ||
                            op == wire::Op::RegisterVar;
  if (op != wire::Op::Hello && !registration) markInitialised();
  if (sock_ < 0) {
    if (!reportedLost_) {
      std::fprintf(stderr, "gpusc: no simulated device: %s\n", lostWhy_.c_str());
      reportedLost_ = true;
    }
    return kErrorNoDevice;
  }
  // A forked child's own simulator: the fat binary handles nvcc's code holds, translated.
  const wire::Buffer* sent = &request;
  wire::Buffer translated;
  if (!handles_.empty() && carriesHandle(op) && request.bytes.size() >= 8) {
    uint64_t held = 0;
    std::memcpy(&held, request.bytes.data(), 8);
    if (auto it = handles_.find(held); it != handles_.end()) {
      translated.bytes = request.bytes;
      std::memcpy(translated.bytes.data(), &it->second, 8);
      sent = &translated;
    }
  }
  wire::RequestHeader h{op, 0, sent->bytes.size()};
  if (!wire::writeAll(sock_, &h, sizeof h) ||
      (!sent->bytes.empty() && !wire::writeAll(sock_, sent->bytes.data(), sent->bytes.size()))) {
    lost("the simulator has ended");
    return call(op, request, reply, fd);
  }
  wire::ReplyHeader r{};
  int received = -1;
  if (!wire::recvWithFd(sock_, &r, sizeof r, &received)) {
    lost("the simulator has ended");
    return call(op, request, reply, fd);
  }
  std::vector<uint8_t> body(r.bytes);
  if (r.bytes && !wire::readAll(sock_, body.data(), body.size())) {
    if (received >= 0) ::close(received);
    lost("the simulator has ended");
    return call(op, request, reply, fd);
  }
  if (fd)
    *fd = received;
  else if (received >= 0)
    ::close(received);
  if (registration && !initialised_ && !replaying_ && r.code == kSuccess)
    registrations_.push_back({op, request.bytes, body});
  if (reply) *reply = std::move(body);
  return r.code;
}

void Client::markInitialised() {
  if (initialised_) return;
  initialised_ = true;
  registrations_.clear();
  registrations_.shrink_to_fit();
}

bool Client::connected() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (startInChild_) startAfterFork();
  markInitialised();
  return sock_ >= 0;
}

int Client::kernel(const void* hostFun, const Kernel** out) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (auto it = kernels_.find(hostFun); it != kernels_.end()) {
    *out = &it->second;
    return kSuccess;
  }
  wire::Buffer b;
  b.put(wire::u64(hostFun));
  std::vector<uint8_t> reply;
  if (int e = call(wire::Op::KernelInfo, b, &reply); e != kSuccess) return e;
  wire::Reader in(reply.data(), reply.size());
  Kernel k;
  k.facts = in.get<wire::FunctionFacts>();
  for (uint32_t i = 0; i < k.facts.params && in.ok; ++i) k.paramSizes.push_back(in.get<uint32_t>());
  if (!in.ok) return kErrorUnknown;
  *out = &(kernels_[hostFun] = std::move(k));
  return kSuccess;
}

int Client::setKernel(const void* hostFun, const std::function<void(Kernel&)>& change) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const Kernel* k = nullptr;
  if (int e = kernel(hostFun, &k); e != kSuccess) return e;
  change(kernels_.at(hostFun));
  return kSuccess;
}

void Client::forgetKernels() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  kernels_.clear();
}

void Client::forgetKernel(const void* hostFun) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  kernels_.erase(hostFun);
}

void Client::addAllocation(uint64_t base, uint64_t bytes, uint64_t mapped, bool counted,
                           bool managed, unsigned hostFlags) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  allocations_[base] = Allocation{bytes == 0 ? 1 : bytes, mapped, counted, managed, hostFlags};
}

uint64_t Client::allocatedBytes() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  uint64_t sum = 0;
  for (const auto& [base, a] : allocations_)
    if (a.counted) sum += a.bytes;
  return sum;
}

void Client::removeAllocation(uint64_t base) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  allocations_.erase(base);
}

void Client::removeDeviceAllocations() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  for (auto it = allocations_.begin(); it != allocations_.end();)
    it = it->second.mapped == 0 && it->second.counted ? allocations_.erase(it) : std::next(it);
}

bool Client::allocation(const void* p, uint64_t* base, uint64_t* bytes, uint64_t* mapped) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const auto addr = uint64_t(reinterpret_cast<uintptr_t>(p));
  auto it = allocations_.upper_bound(addr);
  if (it == allocations_.begin()) return false;
  --it;
  if (addr >= it->first + it->second.bytes) return false;
  if (base) *base = it->first;
  if (bytes) *bytes = it->second.bytes;
  if (mapped) *mapped = it->second.mapped;
  return true;
}

Client::Where Client::where(const void* p) const {
  uint64_t mapped = 0;
  if (!allocation(p, nullptr, nullptr, &mapped)) return Where::Host;
  return mapped ? Where::Shared : Where::Device;
}

bool Client::managed(const void* p) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  uint64_t base = 0;
  return allocation(p, &base, nullptr, nullptr) && allocations_.at(base).managed;
}

bool Client::hostFlags(const void* p, unsigned* flags) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  uint64_t base = 0, mapped = 0;
  if (!allocation(p, &base, nullptr, &mapped) || mapped == 0) return false;
  const Allocation& a = allocations_.at(base);
  if (a.managed) return false;
  *flags = a.hostFlags;
  return true;
}

bool Client::registerHost(const void* p, uint64_t bytes) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const auto addr = uint64_t(reinterpret_cast<uintptr_t>(p));
  auto next = registeredHost_.lower_bound(addr);
  if (next != registeredHost_.end() && next->first - addr < bytes) return false;
  if (next != registeredHost_.begin() && addr - std::prev(next)->first < std::prev(next)->second)
    return false;
  registeredHost_[addr] = bytes;
  return true;
}

bool Client::unregisterHost(const void* p) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return registeredHost_.erase(uint64_t(reinterpret_cast<uintptr_t>(p))) > 0;
}

bool Client::registeredHost(const void* p) const {
  uint64_t base = 0, bytes = 0;
  return registeredRange(p, &base, &bytes);
}

bool Client::registeredRange(const void* p, uint64_t* base, uint64_t* bytes) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const auto addr = uint64_t(reinterpret_cast<uintptr_t>(p));
  auto it = registeredHost_.upper_bound(addr);
  if (it == registeredHost_.begin()) return false;
  --it;
  if (addr - it->first >= it->second) return false;
  *base = it->first;
  *bytes = it->second;
  return true;
}

void Client::print(const std::vector<uint8_t>& text) {
  if (!text.empty()) std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace gpusc::cudart::shim
