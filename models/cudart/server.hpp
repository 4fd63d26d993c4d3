// The simulator's side of a CUDA program's runtime calls (cudart/wire): each request of the
// program's runtime library served by one Runtime on the Device, until the program closes its
// end of the socket.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cudart/runtime.hpp"
#include "cudart/wire.hpp"

namespace gpusc::cudart {

// The simulated platform as cudaGetDeviceProperties describes it.
wire::DeviceFacts deviceFacts(const PlatformConfig& cfg);

class ProgramServer {
 public:
  // Messages about failed calls (gpusc's own words; the program gets the CUDA error code) go to
  // `diagnostics`, one line each, prefixed "gpusc: ".
  ProgramServer(Device& device, std::string programName, std::ostream& diagnostics);

  // The folder this simulator writes its results to, told to the program at Hello: its runtime
  // library passes it on to the processes it starts (GPUSC_PARENT_OUT), so that a simulator one of
  // them starts writes beside it instead of over it.
  void setResultsFolder(std::string folder) { resultsFolder_ = std::move(folder); }

  // Serves requests on the connected socket until the program closes it (it exited), or fails
  // (a broken message). Throws what the model throws beyond a CUDA error: InternalError,
  // LockstepDivergence.
  void serve(int sock);

  // A run limit or an interrupt stopped a launch: the program got kErrorLaunchTimeout for it and
  // for every launch after it.
  const std::optional<RunStopped>& stopped() const { return stopped_; }
  // Kernel faults the program was told of (their messages), in order.
  const std::vector<std::string>& faults() const { return faults_; }
  // Calls that failed, by CUDA error name.
  const std::map<std::string, uint64_t>& failures() const { return failures_; }
  const Runtime& runtime() const { return rt_; }
  // Set when a message could not be read (a program and a simulator of different versions).
  const std::string& protocolError() const { return protocolError_; }

 private:
  // One request: its reply's payload, a descriptor to send with it (-1: none).
  std::vector<uint8_t> handle(wire::Op op, wire::Reader& in, int* fdOut);
  std::string newPrintf();

  Device& device_;
  Runtime rt_;
  std::ostream& diag_;
  std::optional<RunStopped> stopped_;
  std::vector<std::string> faults_;
  std::map<std::string, uint64_t> failures_;
  std::string protocolError_;
  std::string resultsFolder_;
  size_t printfSent_ = 0;
};

}  // namespace gpusc::cudart
