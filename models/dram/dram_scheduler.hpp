// The memory controller's request queue and the policies that choose, every DRAM command cycle,
// which queued request's next command goes on the command bus (memory.controller.scheduler):
//
//   fr-fcfs  first-ready first-come-first-served: the oldest request whose row is open (a row
//            hit) and whose column command may issue now; otherwise a row command (PRE of the
//            open row or ACT of its row) for the oldest request of a bank with no row hit
//            queued. Row hits are served before older requests to other rows of their bank.
//   fcfs     strict arrival order: column commands issue in arrival order (only the oldest
//            request moves data); banks still prepare ahead, each bank opening the row of its
//            own oldest request, so requests to different banks overlap their ACT/PRE.
//
// A request is served burst by burst: ceil(bytes / burstBytes) column commands to consecutive
// columns of its row (one that runs past the end of its row is served as if the row went on: the
// L2 sends aligned lines, which never cross a row). It stays queued until its last column
// command has issued. FR-FCFS, as usual, lets a stream of row hits delay an older conflict.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <tlm>

#include "common/platform_config.hpp"
#include "common/registry.hpp"
#include "dram/dram_channel.hpp"

namespace gpusc::dram {

struct DramRequest {
  tlm::tlm_generic_payload* gp = nullptr;
  uint64_t seq = 0;               // arrival order
  uint64_t row = 0;               // DRAM row of the first byte
  uint64_t arrivalCoreCycle = 0;  // when BEGIN_REQ arrived (for the latency statistics)
  uint32_t bank = 0;
  uint32_t burstsLeft = 0;  // column commands still to issue
  uint32_t port = 0;        // the controller port (L2 slice) it came from, for the answer
  bool write = false;
  bool started = false;          // a column command has issued (its row outcome is known)
  bool neededPrecharge = false;  // a PRE closed another row for it: a row conflict
  bool neededActivate = false;   // an ACT opened its row: a row miss (unless a conflict)
};

// A bounded queue in arrival order, with removal from anywhere: a fixed array of slots linked
// oldest to youngest, so neither pushing nor removing allocates. Each slot is also linked into
// the list of its bank's reads or its bank's writes (oldest to youngest), so a policy can look
// at one bank's requests of one kind, or at each bank's oldest, without walking the queue.
class RequestQueue {
 public:
  static constexpr uint32_t kEnd = 0xffffffffu;

  // `banks`: at most 64 (DramConfig::banks).
  RequestQueue(uint32_t capacity, uint32_t banks);

  uint32_t capacity() const { return static_cast<uint32_t>(slots_.size()); }
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == capacity(); }

  // Appends `r` as the youngest request (the queue must not be full); returns its slot.
  uint32_t push(const DramRequest& r);
  void remove(uint32_t slot);
  void clear();

  // Iteration from the oldest request: for (i = oldest(); i != kEnd; i = next(i)).
  uint32_t oldest() const { return head_; }
  uint32_t next(uint32_t slot) const { return slots_[slot].next; }
  // Bit b: bank b has a queued request. A bank's reads (writes) from the oldest:
  // for (i = bankOldest(b, write); i != kEnd; i = bankNext(i)).
  uint64_t banksWithRequests() const { return banksUsed_; }
  uint32_t bankOldest(uint32_t bank, bool write) const { return listHead_[list(bank, write)]; }
  uint32_t bankNext(uint32_t slot) const { return slots_[slot].bankNext; }
  // The bank's oldest request of either kind (kEnd if none).
  uint32_t bankOldest(uint32_t bank) const;
  DramRequest& operator[](uint32_t slot) { return slots_[slot].req; }
  const DramRequest& operator[](uint32_t slot) const { return slots_[slot].req; }

 private:
  struct Slot {
    DramRequest req;
    uint32_t prev = kEnd, next = kEnd;
    uint32_t bankPrev = kEnd, bankNext = kEnd;
  };
  static uint32_t list(uint32_t bank, bool write) { return 2 * bank + (write ? 1 : 0); }
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> listHead_, listTail_;  // per bank, reads then writes
  uint64_t banksUsed_ = 0;
  uint32_t head_ = kEnd, tail_ = kEnd, size_ = 0;
};

struct DramDecision {
  enum class Kind : uint8_t {
    None,    // nothing may issue now
    Column,  // the next burst (RD or WR) of `request`, whose row is open
    Row,     // PRE of the other row open in the bank of `request`, or ACT of its row
  };
  Kind kind = Kind::None;
  uint32_t request = RequestQueue::kEnd;
  // With None: the first cycle at which a command the policy considered may issue (kNever if
  // none); the controller sleeps until then unless a request arrives.
  uint64_t retry = kNever;
};

class DramSchedulingPolicy {
 public:
  virtual ~DramSchedulingPolicy() = default;
  // The command to put on the command bus at cycle `now` (queue not empty).
  virtual DramDecision decide(const RequestQueue& queue, const DramChannel& channel,
                              uint64_t now) = 0;
};

using DramSchedulerRegistry = Registry<DramSchedulingPolicy, const DramConfig&>;
const DramSchedulerRegistry& dramSchedulingPolicies();

}  // namespace gpusc::dram
