// Allocators of the interconnect's routers: each cycle they match requesters (inputs) to
// resources (outputs). A router uses one for virtual-channel allocation (inputs: input VCs,
// outputs: output VCs) and one for switch allocation (inputs: input ports, outputs: output ports;
// a request's id is the input VC asking, so an input port can choose among its VCs).
//
// Every allocation grants each output at most once and each input at most `inputCapacity` times
// (the router's input speedup for switch allocation, 1 for VC allocation).
//
// Policies (noc.allocator):
//   islip        iSLIP (McKeown, 1999): request, grant, accept. Each output grants the requesting
//                input nearest its grant pointer; each input accepts the granting outputs nearest
//                its accept pointer (up to its capacity), taking among its own requests for that
//                output the id nearest its id pointer. Pointers move one past the match, and only
//                for matches of the first iteration (which desynchronises the outputs' pointers).
//                noc.allocator_iterations rounds per allocation, each among the still unmatched.
//   round-robin  a separable input-first allocator in one pass: each input nominates up to its
//                capacity of requests (the ids nearest its id pointer first, distinct outputs);
//                each output grants the nominee nearest its pointer; pointers move past winners.
//
// Allocators keep their scratch space between calls: no heap allocation per cycle once the
// request lists have reached their largest size.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/registry.hpp"

namespace gpusc::noc {

struct AllocatorShape {
  uint32_t inputs = 1, outputs = 1;
  uint32_t ids = 1;            // distinct request ids per input (VCs of an input port)
  uint32_t inputCapacity = 1;  // grants an input may receive per allocation
  uint32_t iterations = 1;     // iSLIP rounds
};

struct AllocRequest {
  uint32_t input = 0, output = 0, id = 0;
};

class Allocator {
 public:
  explicit Allocator(const AllocatorShape& shape);
  virtual ~Allocator() = default;

  // Matches `requests` (each input/output pair at most once per id); writes the indices of the
  // granted requests to `grants` (cleared first).
  virtual void allocate(const std::vector<AllocRequest>& requests,
                        std::vector<uint32_t>& grants) = 0;
  // Pointers back to their initial positions.
  void reset();
  const AllocatorShape& shape() const { return shape_; }

 protected:
  static uint32_t distance(uint32_t from, uint32_t to, uint32_t n) {
    return to >= from ? to - from : to + n - from;
  }
  // Records a granted request in the pointers.
  void advance(const AllocRequest& r);

  AllocatorShape shape_;
  std::vector<uint32_t> grantPointer_;   // per output: input preferred next
  std::vector<uint32_t> acceptPointer_;  // per input: output preferred next
  std::vector<uint32_t> idPointer_;      // per input: id preferred next
  // Scratch, valid within one allocate() call.
  std::vector<uint32_t> inputGrants_;   // per input: grants so far
  std::vector<uint8_t> outputMatched_;  // per output
  std::vector<uint32_t> best_;          // per output: index of the best request this round
  std::vector<uint32_t> touched_;       // outputs with a best_ entry this round
  std::vector<uint32_t> order_;         // request indices
  std::vector<uint64_t> keys_;          // sort keys of requests
};

class IslipAllocator : public Allocator {
 public:
  explicit IslipAllocator(const AllocatorShape& shape);
  void allocate(const std::vector<AllocRequest>& requests, std::vector<uint32_t>& grants) override;

 private:
  void allocateOneInput(const std::vector<AllocRequest>& requests, std::vector<uint32_t>& grants);
  bool distinctOutputs(const std::vector<AllocRequest>& requests);
  // The accept order of request `idx`'s grant: its input, then its output's distance from the
  // input's accept pointer, then the index, as one integer.
  uint64_t acceptKey(const std::vector<AllocRequest>& requests, uint32_t idx) const;
  // The accept step over keys_: in key order, each input up to its capacity; `movePointers`:
  // the first iteration's matches move the pointers.
  void accept(const std::vector<AllocRequest>& requests, std::vector<uint32_t>& grants,
              bool movePointers);
  void allocateDistinctOutputs(const std::vector<AllocRequest>& requests,
                               std::vector<uint32_t>& grants);

  std::vector<uint32_t> outputSeen_;  // per output: the call (generation_) that last named it
  uint32_t generation_ = 0;
};

class RoundRobinAllocator : public Allocator {
 public:
  using Allocator::Allocator;
  void allocate(const std::vector<AllocRequest>& requests, std::vector<uint32_t>& grants) override;
};

const Registry<Allocator, const AllocatorShape&>& allocatorPolicies();

}  // namespace gpusc::noc
