// A CUDA program and the processes it starts (docs/cuda-programs.md, "Processes"):
// - pinned host memory is the host's: cudaMemGetInfo counts managed memory, not pinned memory,
//   and a cudaMalloc of the device's free memory still succeeds beside a pinned buffer;
// - a child forked before the program's first CUDA call gets a device of its own (a simulator
//   whose results go in a folder inside the parent's), as on a GPU;
// - a child forked without exec after that has no device: its calls return
//   cudaErrorInitializationError, and the parent's device goes on working;
// - a copy of this program started by it (fork and exec) gets a simulator of its own with the
//   same settings (the same device, the same mode) whose results go in a folder inside the
//   parent's (GPUSC_PARENT_OUT/processes-PID).
// `processes hold F` is one of two programs a script runs at once (concurrent_programs.sh).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "check.hpp"

__global__ void scale(int* p, int k, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = p[i] * k + 1;
}

// A small launch whose result the caller checks, timed by events: the elapsed milliseconds (0 in
// functional mode, which has no time). False when the result is wrong.
bool work(int k, float* ms) {
  const int n = 4096;
  int* h = nullptr;
  CHECK(cudaMallocHost(&h, n * sizeof(int)));
  for (int i = 0; i < n; ++i) h[i] = i;
  int* d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a));
  scale<<<n / 256, 256>>>(d, k, n);
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  CHECK(cudaEventElapsedTime(ms, a, b));
  CHECK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < n; ++i) ok = ok && h[i] == i * k + 1;
  CHECK(cudaFree(d));
  CHECK(cudaFreeHost(h));
  return ok;
}

// The copy started by the parent: prints what it sees of its device for the parent to compare.
int child() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  float ms = -1;
  const bool ok = work(3, &ms);
  std::printf("child: %s %d.%d %s %s\n", prop.name, prop.major, prop.minor,
              ms > 0 ? "timed" : "untimed", ok ? "correct" : "wrong");
  return ok ? 0 : 1;
}

// `processes hold F` (tests/support/concurrent_programs.sh): uses the device, makes F.ready, and
// launches only once F.go exists, so that another program runs while it holds its simulator.
int hold(const std::string& flag) {
  CHECK(cudaFree(nullptr));
  if (FILE* f = std::fopen((flag + ".ready").c_str(), "w")) std::fclose(f);
  struct stat st;
  for (int i = 0; i < 6000 && ::stat((flag + ".go").c_str(), &st) != 0; ++i) usleep(10000);
  float ms = -1;
  const bool ok = work(9, &ms);
  std::printf("held: %s\n", ok ? "correct" : "wrong");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "child") == 0) return child();
  if (argc > 2 && std::strcmp(argv[1], "hold") == 0) return hold(argv[2]);
  // A child forked before the first CUDA call (nvcc's registrations do not count) has a device.
  std::fflush(stdout);
  const pid_t early = fork();
  if (early == 0) {
    float ms = -1;
    const bool ok = work(11, &ms);
    std::printf("early fork: %s\n", ok ? "correct" : "wrong");
    std::exit(ok ? 0 : 1);  // the runtime waits for its simulator's results
  }
  int status = -1;
  waitpid(early, &status, 0);
  const char* parentOut = std::getenv("GPUSC_PARENT_OUT");
  const std::string out = parentOut ? parentOut : "(unset)";
  struct stat st;
  const std::string earlyStats = out + "/processes-" + std::to_string(early) + "/stats.json";
  const bool earlyWritten = ::stat(earlyStats.c_str(), &st) == 0;
  std::printf("early fork's results: %s\n", earlyWritten ? "written" : "missing");
  bool pass = WIFEXITED(status) && WEXITSTATUS(status) == 0 && earlyWritten;

  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));

  // Pinned memory does not take device memory; managed memory does.
  size_t free0 = 0, total = 0, free1 = 0, free2 = 0;
  CHECK(cudaMemGetInfo(&free0, &total));
  const size_t pinnedBytes = free0 / 2 + (1 << 20);  // with a device buffer of half: over total
  void* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, pinnedBytes));
  CHECK(cudaMemGetInfo(&free1, &total));
  void* device = nullptr;
  const cudaError_t big = cudaMalloc(&device, free0 / 2);
  void* managed = nullptr;
  CHECK(cudaMallocManaged(&managed, 1 << 20));
  CHECK(cudaMemGetInfo(&free2, &total));
  std::printf("pinned: free %zu -> %zu; device of half %s; with managed 1 MiB, free -%zu\n", free0,
              free1, cudaGetErrorName(big), free1 - free2);
  pass = pass && free1 == free0 && big == cudaSuccess && free1 - free2 == (1u << 20) + free0 / 2;
  CHECK(cudaFree(device));
  CHECK(cudaFree(managed));
  CHECK(cudaFreeHost(pinned));

  float ms = -1;
  pass = pass && work(5, &ms);

  // A forked child has no device; the parent keeps its own.
  std::fflush(stdout);
  const pid_t forked = fork();
  if (forked == 0) {
    int* d = nullptr;
    const cudaError_t e = cudaMalloc(&d, 256);
    std::printf("forked: cudaMalloc %s\n", cudaGetErrorName(e));
    std::fflush(stdout);
    _exit(e == cudaErrorInitializationError ? 0 : 1);
  }
  waitpid(forked, &status, 0);
  pass = pass && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  float ms2 = -1;
  pass = pass && work(7, &ms2);

  // A copy of this program, started as a separate program: the same device and mode, its
  // results inside this run's folder.
  std::fflush(stdout);
  const pid_t started = fork();
  if (started == 0) {
    execl("/proc/self/exe", argv[0], "child", static_cast<char*>(nullptr));
    _exit(127);
  }
  waitpid(started, &status, 0);
  pass = pass && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  const std::string stats = out + "/processes-" + std::to_string(started) + "/stats.json";
  const bool nested = ::stat(stats.c_str(), &st) == 0;
  std::printf("parent: %s %d.%d %s; child's results %s: %s\n", prop.name, prop.major, prop.minor,
              ms > 0 ? "timed" : "untimed", stats.c_str(), nested ? "written" : "missing");
  pass = pass && nested;
  return verdict(pass, "a child forked early, pinned memory, a forked child, a child program");
}
