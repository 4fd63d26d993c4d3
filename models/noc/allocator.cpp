#include "noc/allocator.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::noc {

namespace {
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kIndexMask = (1u << 20) - 1;  // of a request index in an accept key

// x + 1 modulo n, for x < n (without a division: this runs for every grant).
inline uint32_t successor(uint32_t x, uint32_t n) { return x + 1 == n ? 0 : x + 1; }

// The accept keys of one iteration, ascending: at most one per output, usually a handful, which
// an insertion sort orders without std::sort's call and set-up.
void sortKeys(std::vector<uint64_t>& keys) {
  if (keys.size() > 16) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  for (size_t i = 1; i < keys.size(); ++i) {
    const uint64_t v = keys[i];
    size_t j = i;
    for (; j > 0 && keys[j - 1] > v; --j) keys[j] = keys[j - 1];
    keys[j] = v;
  }
}
}  // namespace

Allocator::Allocator(const AllocatorShape& shape) : shape_(shape) {
  if (shape.inputs == 0 || shape.outputs == 0 || shape.ids == 0 || shape.inputCapacity == 0 ||
      shape.iterations == 0)
    throw InternalError("Allocator: every dimension of the shape must be at least 1");
  grantPointer_.assign(shape.outputs, 0);
  acceptPointer_.assign(shape.inputs, 0);
  idPointer_.assign(shape.inputs, 0);
  inputGrants_.assign(shape.inputs, 0);
  outputMatched_.assign(shape.outputs, 0);
  best_.assign(shape.outputs, kNone);
}

void Allocator::reset() {
  std::fill(grantPointer_.begin(), grantPointer_.end(), 0);
  std::fill(acceptPointer_.begin(), acceptPointer_.end(), 0);
  std::fill(idPointer_.begin(), idPointer_.end(), 0);
}

void Allocator::advance(const AllocRequest& r) {
  grantPointer_[r.output] = successor(r.input, shape_.inputs);
  acceptPointer_[r.input] = successor(r.output, shape_.outputs);
  idPointer_[r.input] = successor(r.id, shape_.ids);
}

// ---- iSLIP -------------------------------------------------------------------------------------

IslipAllocator::IslipAllocator(const AllocatorShape& shape)
    : Allocator(shape), outputSeen_(shape.outputs, 0) {
  if (shape.inputs > kIndexMask || shape.outputs > kIndexMask)
    throw InternalError("IslipAllocator: more than 2^20 inputs or outputs");
}

void IslipAllocator::allocate(const std::vector<AllocRequest>& requests,
                              std::vector<uint32_t>& grants) {
  grants.clear();
  if (requests.empty()) return;
  if (requests.size() == 1) {  // the common case of a lightly loaded router
    grants.push_back(0);
    advance(requests[0]);
    return;
  }
  const uint32_t n = static_cast<uint32_t>(requests.size());
  if (n > kIndexMask) throw InternalError("IslipAllocator: more than 2^20 requests at once");
  const uint32_t input = requests[0].input;
  bool oneInput = true;
  for (uint32_t i = 1; i < n && oneInput; ++i) oneInput = requests[i].input == input;
  if (oneInput) {
    allocateOneInput(requests, grants);
    return;
  }
  if (distinctOutputs(requests)) {
    allocateDistinctOutputs(requests, grants);
    return;
  }
  for (const AllocRequest& r : requests) {
    inputGrants_[r.input] = 0;
    outputMatched_[r.output] = 0;
  }
  for (uint32_t iter = 0; iter < shape_.iterations; ++iter) {
    // Grant: every unmatched output picks the input nearest its pointer (and that input's id
    // nearest the input's id pointer).
    touched_.clear();
    for (uint32_t i = 0; i < n; ++i) {
      const AllocRequest& r = requests[i];
      if (outputMatched_[r.output] || inputGrants_[r.input] >= shape_.inputCapacity) continue;
      uint32_t& b = best_[r.output];
      if (b == kNone) {
        b = i;
        touched_.push_back(r.output);
        continue;
      }
      const AllocRequest& cur = requests[b];
      const uint32_t gp = grantPointer_[r.output];
      const uint32_t dNew = distance(gp, r.input, shape_.inputs);
      const uint32_t dCur = distance(gp, cur.input, shape_.inputs);
      if (dNew < dCur || (dNew == dCur && distance(idPointer_[r.input], r.id, shape_.ids) <
                                              distance(idPointer_[r.input], cur.id, shape_.ids)))
        b = i;
    }
    if (touched_.empty()) break;
    // Accept: each input takes the granting outputs nearest its accept pointer, up to capacity.
    // The grants in order of input, then of that distance (a strict order: an output grants once)
    // as one integer key each: input, distance, then the request's index.
    keys_.clear();
    for (uint32_t o : touched_) {
      keys_.push_back(acceptKey(requests, best_[o]));
      best_[o] = kNone;
    }
    accept(requests, grants, iter == 0);
  }
}

uint64_t IslipAllocator::acceptKey(const std::vector<AllocRequest>& requests, uint32_t idx) const {
  const AllocRequest& r = requests[idx];
  return uint64_t(r.input) << 40 |
         uint64_t(distance(acceptPointer_[r.input], r.output, shape_.outputs)) << 20 | idx;
}

void IslipAllocator::accept(const std::vector<AllocRequest>& requests,
                            std::vector<uint32_t>& grants, bool movePointers) {
  sortKeys(keys_);
  for (uint64_t key : keys_) {
    const uint32_t idx = uint32_t(key & kIndexMask);
    const AllocRequest& r = requests[idx];
    if (inputGrants_[r.input] >= shape_.inputCapacity) continue;
    ++inputGrants_[r.input];
    outputMatched_[r.output] = 1;
    grants.push_back(idx);
    if (movePointers) advance(r);
  }
}

// All requests from one input: a head flit asking for its output port's free VCs (VC allocation),
// or one input port's VCs (switch allocation). Every output asked grants that input, with the
// request whose id is nearest the input's id pointer; the input accepts the outputs nearest its
// accept pointer, up to its capacity. Further iterations add nothing: every output left unmatched
// was declined by an input that is then full. The same grants in the same order as allocate()'s
// general path, without its per-input and per-output bookkeeping.
void IslipAllocator::allocateOneInput(const std::vector<AllocRequest>& requests,
                                      std::vector<uint32_t>& grants) {
  const uint32_t input = requests[0].input;
  const uint32_t n = static_cast<uint32_t>(requests.size());
  const uint32_t idPointer = idPointer_[input];
  touched_.clear();
  for (uint32_t i = 0; i < n; ++i) {
    const AllocRequest& r = requests[i];
    uint32_t& b = best_[r.output];
    if (b == kNone) {
      b = i;
      touched_.push_back(r.output);
    } else if (distance(idPointer, r.id, shape_.ids) <
               distance(idPointer, requests[b].id, shape_.ids)) {
      b = i;
    }
  }
  if (shape_.inputCapacity == 1) {  // VC allocation, and switch allocation without speedup
    uint64_t nearest = ~0ull;
    for (uint32_t o : touched_) {
      nearest = std::min(nearest, acceptKey(requests, best_[o]));
      best_[o] = kNone;
    }
    const uint32_t idx = uint32_t(nearest & kIndexMask);
    grants.push_back(idx);
    advance(requests[idx]);
    return;
  }
  keys_.clear();
  for (uint32_t o : touched_) {
    keys_.push_back(acceptKey(requests, best_[o]));
    best_[o] = kNone;
  }
  inputGrants_[input] = 0;
  accept(requests, grants, true);
}

// Whether no two requests name the same output (each output's grant is then its one request).
bool IslipAllocator::distinctOutputs(const std::vector<AllocRequest>& requests) {
  if (++generation_ == 0) {  // after 2^32 calls: no mark may look current
    std::fill(outputSeen_.begin(), outputSeen_.end(), 0);
    generation_ = 1;
  }
  for (const AllocRequest& r : requests) {
    if (outputSeen_[r.output] == generation_) return false;
    outputSeen_[r.output] = generation_;
  }
  return true;
}

// Every output is asked by one request, so it grants that request (no input is full before the
// accept step); each input accepts its grants nearest its accept pointer, up to its capacity.
// Further iterations add nothing: an output left unmatched was declined by an input that is then
// full. The same grants in the same order as allocate()'s general path.
void IslipAllocator::allocateDistinctOutputs(const std::vector<AllocRequest>& requests,
                                             std::vector<uint32_t>& grants) {
  const uint32_t n = static_cast<uint32_t>(requests.size());
  keys_.clear();
  for (uint32_t i = 0; i < n; ++i) {
    inputGrants_[requests[i].input] = 0;
    keys_.push_back(acceptKey(requests, i));
  }
  accept(requests, grants, true);
}

// ---- round-robin (separable, input first) ------------------------------------------------------

void RoundRobinAllocator::allocate(const std::vector<AllocRequest>& requests,
                                   std::vector<uint32_t>& grants) {
  grants.clear();
  if (requests.empty()) return;
  if (requests.size() == 1) {
    grants.push_back(0);
    advance(requests[0]);
    return;
  }
  const uint32_t n = static_cast<uint32_t>(requests.size());
  order_.resize(n);
  for (uint32_t i = 0; i < n; ++i) order_[i] = i;
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    const AllocRequest& ra = requests[a];
    const AllocRequest& rb = requests[b];
    if (ra.input != rb.input) return ra.input < rb.input;
    const uint32_t ida = distance(idPointer_[ra.input], ra.id, shape_.ids);
    const uint32_t idb = distance(idPointer_[rb.input], rb.id, shape_.ids);
    if (ida != idb) return ida < idb;
    return distance(acceptPointer_[ra.input], ra.output, shape_.outputs) <
           distance(acceptPointer_[rb.input], rb.output, shape_.outputs);
  });
  // Input stage: nominations (distinct outputs per input); output stage: one winner per output.
  touched_.clear();
  uint32_t i = 0;
  while (i < n) {
    const uint32_t input = requests[order_[i]].input;
    const uint32_t first = i;
    uint32_t nominated = 0;
    for (; i < n && requests[order_[i]].input == input; ++i) {
      if (nominated >= shape_.inputCapacity) continue;
      const AllocRequest& r = requests[order_[i]];
      bool duplicate = false;
      for (uint32_t j = first; j < i && !duplicate; ++j)
        duplicate = requests[order_[j]].output == r.output;
      if (duplicate) continue;
      ++nominated;
      uint32_t& b = best_[r.output];
      if (b == kNone) {
        b = order_[i];
        touched_.push_back(r.output);
      } else {
        const uint32_t gp = grantPointer_[r.output];
        if (distance(gp, r.input, shape_.inputs) < distance(gp, requests[b].input, shape_.inputs))
          b = order_[i];
      }
    }
  }
  for (uint32_t o : touched_) {
    grants.push_back(best_[o]);
    advance(requests[best_[o]]);
    best_[o] = kNone;
  }
}

const Registry<Allocator, const AllocatorShape&>& allocatorPolicies() {
  static const Registry<Allocator, const AllocatorShape&> registry(
      "allocator",
      {{"islip", "iSLIP: request, grant, accept with rotating pointers, noc.allocator_iterations",
        [](const AllocatorShape& s) { return std::make_unique<IslipAllocator>(s); }},
       {"round-robin", "separable input-first allocation with round-robin arbiters, one pass",
        [](const AllocatorShape& s) { return std::make_unique<RoundRobinAllocator>(s); }}});
  return registry;
}

}  // namespace gpusc::noc
