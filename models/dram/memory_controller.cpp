#include "dram/memory_controller.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/mem_access.hpp"

namespace gpusc::dram {

MemoryController::MemoryController(const sc_core::sc_module_name& name, uint32_t partition,
                                   const PlatformConfig& cfg,
                                   const DramSchedulerRegistry& schedulers)
    : sc_core::sc_module(name),
      l2_socket("l2_socket"),
      partition_(partition),
      memCfg_(cfg.memory),
      core_(cfg.gpu.clocks.core_mhz),
      dram_(cfg.gpu.clocks.dram_mhz),
      map_(cfg),
      burstBytes_(cfg.memory.dram.burstBytes()),
      channel_(cfg.memory.dram),
      policy_(schedulers.create(cfg.memory.controller.scheduler, cfg.memory.dram)),
      queue_(cfg.memory.controller.queue_entries, cfg.memory.dram.banks) {
  if (partition >= cfg.memory.partitions)
    throw InternalError(
        fmt::format("{}: partition {} of {}", this->name(), partition, cfg.memory.partitions));
  held_.reserve(cfg.l2.slices_per_partition);
  // Answers wait at most the controller latency after leaving the queue; a few queues' worth
  // covers every realistic case, and the heap only grows (once) beyond that.
  answers_.reserve(4 * size_t(queue_.capacity()));
  if (memCfg_.dram.tREFI > 0) refreshDue_ = memCfg_.dram.tREFI;
  l2_socket.register_nb_transport_fw(this, &MemoryController::nb_transport_fw);
  SC_METHOD(schedule);
  sensitive << workEvent_;
  dont_initialize();
  SC_METHOD(respond);
  sensitive << answerEvent_;
  dont_initialize();
}

// ---- requests ----------------------------------------------------------------------------------

tlm::tlm_sync_enum MemoryController::nb_transport_fw(int port, tlm::tlm_generic_payload& gp,
                                                     tlm::tlm_phase& phase, sc_core::sc_time&) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;  // not used by the conventions
  if (phase != tlm::BEGIN_REQ)
    throw InternalError(fmt::format("{}: unexpected phase on the forward path", name()));
  for (const Held& h : held_)
    if (h.port == port)
      throw InternalError(fmt::format(
          "{}: BEGIN_REQ on port {} while its previous request waits for END_REQ", name(), port));
  if (map_.partition(gp.get_address()) != partition_)
    throw InternalError(fmt::format("{}: address {:#x} belongs to partition {}, not {}", name(),
                                    gp.get_address(), map_.partition(gp.get_address()),
                                    partition_));
  if (gp.get_command() == tlm::TLM_WRITE_COMMAND)
    ++stats_.writes;
  else
    ++stats_.reads;
  stats_.bytes += movedBytes(gp);  // a sectored request moves only its sectors
  gp.acquire();
  const uint64_t arrival = core_.now();
  if (queue_.full() || !held_.empty()) {        // back-pressure: END_REQ when an entry frees
    held_.push_back(Held{&gp, arrival, port});  // in arrival order
    ++stats_.heldRequests;
    return tlm::TLM_ACCEPTED;
  }
  enqueue(gp, arrival, port);
  work_.after(sc_core::SC_ZERO_TIME);
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

void MemoryController::enqueue(tlm::tlm_generic_payload& gp, uint64_t arrivalCoreCycle, int port) {
  const DramLocation loc = map_.dram(map_.local(gp.get_address()));
  DramRequest r;
  r.gp = &gp;
  r.seq = seq_++;
  r.row = loc.row;
  r.bank = loc.bank;
  r.arrivalCoreCycle = arrivalCoreCycle;
  r.port = static_cast<uint32_t>(port);
  r.write = gp.get_command() == tlm::TLM_WRITE_COMMAND;
  // Bursts to consecutive columns of the row (a request moves at least one burst). A write moves
  // only the bursts holding bytes of its byte mask (DRAM write data masks cover the rest); a
  // sectored cache's read only the bursts of the sectors it fetches.
  r.burstsLeft = std::max<uint32_t>(1, (gp.get_data_length() + burstBytes_ - 1) / burstBytes_);
  const MemAccessExtension* ext = PayloadPool::extensionOf(gp);
  if (r.write || (ext && ext->sectorBytes != 0))
    r.burstsLeft = std::max<uint32_t>(1, maskedBursts(gp));
  queueSizeChanging();
  queue_.push(r);
  stats_.queueMax = std::max(stats_.queueMax, queue_.size());
}

// ---- the DRAM command cycle --------------------------------------------------------------------

void MemoryController::schedule() {
  const uint64_t now = dram_.nextEdge();
  if (now * dram_.periodValue() != sc_core::sc_time_stamp().value()) {  // between two edges
    work_.at(now * dram_.periodValue());
    return;
  }
  if (queue_.empty()) return;  // idle: sleep until a request arrives (refresh is caught up then)
  if (refreshDue_ <= now) refreshDue_ = channel_.refreshUntil(refreshDue_, now);

  const DramDecision d = policy_->decide(queue_, channel_, now);
  uint64_t next = d.retry;
  if (d.kind == DramDecision::Kind::Column) {
    issueColumn(d.request, now);
    next = now + 1;
  } else if (d.kind == DramDecision::Kind::Row) {
    issueRow(d.request, now);
    next = now + 1;
  }

  next = std::min(next, refreshDue_);
  if (!queue_.empty()) {
    if (next == kNever)  // every queued request must have a command that may issue some time
      throw InternalError(fmt::format("{}: queued requests can never be served", name()));
    work_.at(next * dram_.periodValue());
  }

  if (toAccept_) {  // an entry freed: accept the held request (last: the initiator may send)
    const Held h = *toAccept_;
    toAccept_.reset();
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    l2_socket[h.port]->nb_transport_bw(*h.gp, phase, t);
  }
}

void MemoryController::issueRow(uint32_t slot, uint64_t now) {
  DramRequest& r = queue_[slot];
  if (channel_.isOpen(r.bank)) {
    channel_.precharge(r.bank, now);
    r.neededPrecharge = true;
  } else {
    channel_.activate(r.bank, r.row, now);
    r.neededActivate = true;
  }
}

void MemoryController::issueColumn(uint32_t slot, uint64_t now) {
  DramRequest& r = queue_[slot];
  if (!r.started) {  // the request's row outcome: what it took to open its row
    r.started = true;
    if (r.neededPrecharge)
      ++stats_.rowConflicts;
    else if (r.neededActivate)
      ++stats_.rowMisses;
    else
      ++stats_.rowHits;
  }
  const uint64_t dataEnd = r.write ? channel_.write(r.bank, now) : channel_.read(r.bank, now);
  if (--r.burstsLeft > 0) return;

  // The last burst: answer on the first core edge after its data, plus the controller latency.
  const uint64_t end = dataEnd * dram_.periodValue();
  const uint64_t corePeriod = core_.periodValue();
  const Answer a{(end + corePeriod - 1) / corePeriod + memCfg_.controller.latency,
                 r.seq,
                 r.gp,
                 r.arrivalCoreCycle,
                 r.port,
                 r.write};
  const bool earliest = answers_.empty() || a.coreCycle < answers_.top().coreCycle;
  answers_.push(a);
  if (earliest) answerDue_.at(a.coreCycle * core_.periodValue());

  queueSizeChanging();
  queue_.remove(slot);
  if (!held_.empty() && !toAccept_) {
    toAccept_ = held_.front();
    held_.erase(held_.begin());
    enqueue(*toAccept_->gp, toAccept_->arrival, toAccept_->port);
  }
}

uint32_t MemoryController::maskedBursts(const tlm::tlm_generic_payload& gp) const {
  const MemAccessExtension* ext = PayloadPool::extensionOf(gp);
  const uint32_t len = gp.get_data_length();
  if (!ext || len > 8 * sizeof(ext->byteMask)) return (len + burstBytes_ - 1) / burstBytes_;
  return touchedChunks(ext->byteMask, len, burstBytes_);
}

// ---- answers -----------------------------------------------------------------------------------

void MemoryController::respond() {
  const uint64_t now = core_.now();
  while (!answers_.empty() && answers_.top().coreCycle <= now) {
    const Answer a = answers_.top();
    answers_.pop();
    if (!a.write) {
      const uint64_t latency = a.coreCycle - a.arrivalCoreCycle;
      stats_.readLatencySum += latency;
      stats_.readLatencyMax = std::max(stats_.readLatencyMax, latency);
      ++stats_.readsAnswered;
      const unsigned bucket =
          latency < 2 ? 0 : 63 - static_cast<unsigned>(__builtin_clzll(latency));
      ++stats_.readLatencyHistogram[bucket];
    }
    a.gp->set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    if (l2_socket[int(a.port)]->nb_transport_bw(*a.gp, phase, t) != tlm::TLM_COMPLETED)
      throw InternalError(fmt::format("{}: the initiator must complete BEGIN_RESP", name()));
    a.gp->release();
  }
  if (!answers_.empty()) answerDue_.at(answers_.top().coreCycle * core_.periodValue());
}

// ---- statistics --------------------------------------------------------------------------------

void MemoryController::queueSizeChanging() {
  const uint64_t t = sc_core::sc_time_stamp().value();
  stats_.queueArea += double(queue_.size()) * double(t - lastQueueChange_);
  lastQueueChange_ = t;
}

uint64_t MemoryController::refreshesPending(uint64_t dramCycle) const {
  if (refreshDue_ > dramCycle) return 0;
  return (dramCycle - refreshDue_) / memCfg_.dram.tREFI + 1;
}

void MemoryController::resetStats() {
  stats_ = Stats{};
  stats_.queueMax = queue_.size();
  statsStart_ = lastQueueChange_ = sc_core::sc_time_stamp().value();
  channel_.resetCounters();
}

void MemoryController::resetState() {
  if (!queue_.empty() || !held_.empty() || !answers_.empty())
    throw InternalError(fmt::format("{}: resetState() with requests in flight", name()));
  channel_.reset();
  queue_.clear();
  refreshDue_ = memCfg_.dram.tREFI > 0 ? dram_.now() + memCfg_.dram.tREFI : kNever;
  resetStats();
}

MemoryController::EnergyCounts MemoryController::energyCounts() const {
  const DramCounters& c = channel_.counters();
  // Refreshes that fell due while the channel idled are applied when work arrives; count them.
  const uint64_t pendingRefreshes = refreshesPending(dram_.now());
  EnergyCounts e;
  e.requests = stats_.reads + stats_.writes;
  e.activates = c.activates;
  e.precharges = c.precharges + (pendingRefreshes ? channel_.openBanks() : 0);
  e.refreshes = c.refreshes + pendingRefreshes;
  e.readBursts = c.reads;
  e.writeBursts = c.writes;
  return e;
}

std::optional<HeldRequest> MemoryController::oldestHeld() const {
  std::optional<HeldRequest> best;
  const uint64_t p = core_.periodValue();
  for (const Held& h : held_)
    keepOlder(best, h.arrival * p, describeRequest(*h.gp) + ", not accepted yet (queue full)");
  for (uint32_t i = queue_.oldest(); i != RequestQueue::kEnd; i = queue_.next(i))
    keepOlder(best, queue_[i].arrivalCoreCycle * p,
              describeRequest(*queue_[i].gp) +
                  fmt::format(", in the request queue (bank {}, {} of its bursts issued)",
                              queue_[i].bank, queue_[i].started ? "some" : "none"));
  if (!answers_.empty())
    keepOlder(best, answers_.top().coreCycle * p,
              describeRequest(*answers_.top().gp) + ", answered, not delivered");
  return best;
}

nlohmann::json MemoryController::statsJson() const {
  const uint64_t t = sc_core::sc_time_stamp().value();
  const double elapsedTime = double(t - statsStart_);
  const double elapsedCycles = elapsedTime / double(dram_.periodValue());
  const DramCounters& c = channel_.counters();
  // Refreshes that fell due while the channel idled are applied when work arrives; count them.
  const uint64_t pendingRefreshes = refreshesPending(dram_.now());
  const uint64_t rowAccesses = stats_.rowHits + stats_.rowMisses + stats_.rowConflicts;

  nlohmann::json histogram = nlohmann::json::array();
  unsigned top = kLatencyBuckets;
  while (top > 0 && stats_.readLatencyHistogram[top - 1] == 0) --top;
  for (unsigned i = 0; i < top; ++i) {
    const uint64_t from = i == 0 ? 0 : 1ull << i;
    const uint64_t to = (i == 63 ? ~0ull : (2ull << i) - 1);
    histogram.push_back({{"from", from}, {"to", to}, {"count", stats_.readLatencyHistogram[i]}});
  }

  nlohmann::json j;
  j["reads"] = stats_.reads;
  j["writes"] = stats_.writes;
  j["bytes"] = stats_.bytes;
  j["row_hits"] = stats_.rowHits;
  j["row_misses"] = stats_.rowMisses;
  j["row_conflicts"] = stats_.rowConflicts;
  j["row_hit_rate"] = rowAccesses ? double(stats_.rowHits) / double(rowAccesses) : 0.0;
  j["activates"] = c.activates;
  j["precharges"] = c.precharges + (pendingRefreshes ? channel_.openBanks() : 0);
  j["refreshes"] = c.refreshes + pendingRefreshes;
  j["read_bursts"] = c.reads;
  j["write_bursts"] = c.writes;
  j["data_bus_busy_cycles"] = c.busBusyCycles;
  j["elapsed_dram_cycles"] = elapsedCycles;
  j["bus_utilisation"] = elapsedCycles > 0 ? double(c.busBusyCycles) / elapsedCycles : 0.0;
  j["average_queue_occupancy"] =
      elapsedTime > 0
          ? (stats_.queueArea + double(queue_.size()) * double(t - lastQueueChange_)) / elapsedTime
          : 0.0;
  j["max_queue_occupancy"] = stats_.queueMax;
  j["held_requests"] = stats_.heldRequests;
  j["read_latency_core_cycles"] = {
      {"count", stats_.readsAnswered},
      {"average",
       stats_.readsAnswered ? double(stats_.readLatencySum) / stats_.readsAnswered : 0.0},
      {"max", stats_.readLatencyMax},
      {"histogram", histogram}};
  return j;
}

}  // namespace gpusc::dram
