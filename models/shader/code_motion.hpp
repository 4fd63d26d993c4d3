// The energy-aware code-motion framework (You and Wang, Sec. 4) on programs with virtual
// temporaries, before register allocation:
//   I   insertion of data-transfer operations (DTOs): `mov tX, vK` before every input-buffer read,
//       `mov oK, tX` after every output-buffer write;
//   II  local code motion (Algorithm 1): redundant-DTO elimination and cluster hoisting inside a
//       block, bounded by the code-motion tunnel; for the output buffer, the mirror (sinking);
//   III global code motion: the cluster placement analysis (Algorithm 2 with CandidateSucc,
//       Eq. 2) and Algorithm 3, never out of a loop; branch-point and join-point variants by name.
// Plus the paper's comparison point, naive code motion (every input read into a temporary at the
// start, every output kept in a temporary until the end). docs/shader.md explains each pass.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/registry.hpp"
#include "shader/isa.hpp"

namespace gpusc::shader {

enum class Buffer : uint8_t { Input, Output };
const char* bufferName(Buffer b);

// Step I.
void insertDtos(Program& p, Buffer b);

// Step II. `registers`: the temporaries the core has (the tunnel's capacity).
void localCodeMotion(Program& p, Buffer b, int registers);

// Eq. 2's choice at a branch point when the clusters of all successors cannot pass the tunnel
// together: which single successor's clusters may (or none). `sizes[i]` is ||CLUSTER_in(s_i)||
// of the candidate successors (those whose clusters fit the tunnel alone).
class BranchPointPolicy {
 public:
  virtual ~BranchPointPolicy() = default;
  virtual int choose(const std::vector<int>& sizes) const = 0;  // index, or -1 for none
};
const Registry<BranchPointPolicy>& branchPointPolicies();  // large-cluster, small-cluster, ...

// How a cluster crosses a join point: duplicated into every predecessor, or moved only to a
// strict dominator (Algorithm 3).
class JoinPointPolicy {
 public:
  virtual ~JoinPointPolicy() = default;
  virtual bool duplicates() const = 0;
};
const Registry<JoinPointPolicy>& joinPointPolicies();  // duplication-allowed / -forbidden

// What the cluster placement analysis computed, for inspection and the paper's Tables I-IV.
// Clusters are named by the block they start in (the cluster at the top of block b is b).
struct PlacementAnalysis {
  std::vector<int> tunnel;  // CMT(b)
  std::vector<int> gen;     // the block's own cluster, or -1
  std::vector<int> size;    // DTOs of cluster b
  struct Iteration {
    std::vector<std::vector<int>> in, out;  // CLUSTER_in(b), CLUSTER_out(b): sorted cluster ids
  };
  std::vector<Iteration> iterations;        // one entry per pass over the blocks
  std::vector<std::vector<int>> placement;  // GCM(b): clusters moved to block b
};

// Step III. Returns the analysis it acted on.
PlacementAnalysis globalCodeMotion(Program& p, Buffer b, int registers,
                                   const BranchPointPolicy& branch, const JoinPointPolicy& join);

// The cluster placement analysis alone (Algorithm 2), on a program after local code motion.
PlacementAnalysis clusterPlacement(const Program& p, Buffer b, int registers,
                                   const BranchPointPolicy& branch);

// Naive code motion: inputs promoted to temporaries at the entry, outputs demoted at the end.
// Returns false (and leaves `p` unchanged) when the register pressure would exceed
// `registers`, as the paper's compiler fails to allocate such programs.
bool naiveCodeMotion(Program& p, Buffer b, int registers);

}  // namespace gpusc::shader
