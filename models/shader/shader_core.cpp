#include "shader/shader_core.hpp"

#include <algorithm>
#include <array>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "shader/interpreter.hpp"
#include "shader/shader_policies.hpp"

namespace gpusc::shader {

namespace {

constexpr uint64_t kMaxSteps = 1000000;  // as the reference interpreter's default

class NoGating : public GatingPolicy {
 public:
  bool stopped(int64_t, int64_t) const override { return false; }
  uint32_t wakeCycles() const override { return 0; }
  uint64_t clockedAfter(int64_t rest) const override { return uint64_t(rest); }
  bool gates() const override { return false; }
};

// The paper's clock gating: the clock runs only in cycles that access the buffer (the decode
// stage sees whether the next bundle does), so an access after any idle cycle waits for it.
class ImmediateGating : public GatingPolicy {
 public:
  explicit ImmediateGating(uint32_t wake) : wake_(wake) {}
  bool stopped(int64_t cycle, int64_t last) const override { return last < 0 || last != cycle - 1; }
  uint32_t wakeCycles() const override { return wake_; }
  uint64_t clockedAfter(int64_t) const override { return 0; }

 private:
  uint32_t wake_;
};

// Hardware alone: the clock stops after `idle` cycles without an access. It is off for an
// access only when it stopped before the access's wake would begin (with `wake` >= 2 an access
// soon after the timeout finds it still running).
class IdleTimeoutGating : public GatingPolicy {
 public:
  IdleTimeoutGating(uint32_t wake, uint32_t idle) : wake_(wake), idle_(idle) {}
  bool stopped(int64_t cycle, int64_t last) const override {
    return last < 0 || cycle - int64_t(wake_) - last - 1 >= int64_t(idle_);
  }
  uint32_t wakeCycles() const override { return wake_; }
  uint64_t clockedAfter(int64_t rest) const override {
    return uint64_t(std::min<int64_t>(rest, idle_));
  }

 private:
  uint32_t wake_, idle_;
};

bool touches(const Instr& i, File f) {
  if (i.dst.file == f) return true;
  for (int s = 0; s < i.sources(); ++s)
    if (i.src[size_t(s)].file == f) return true;
  return false;
}

uint32_t latencyOf(const Instr& i, const ShaderLatencyConfig& l) {
  switch (opInfo(i.op).unit) {
    case Unit::Sfu:
      return l.sfu;
    case Unit::Texture:
      return l.texture;
    default:
      return l.alu;
  }
}

// Per buffer: the last access and the clocked cycles so far.
struct BufferTrack {
  int64_t last = -1;
  uint64_t clocked = 0, accessCycles = 0, wakes = 0;
};

}  // namespace

const Registry<GatingPolicy, const ShaderGatingConfig&>& gatingPolicies() {
  static const Registry<GatingPolicy, const ShaderGatingConfig&> r(
      "buffer gating policy",
      {{"none", "the clock always runs",
        [](const ShaderGatingConfig&) { return std::make_unique<NoGating>(); }},
       {"immediate",
        "the clock runs only in access cycles; an access after an idle cycle wakes it (the "
        "paper's)",
        [](const ShaderGatingConfig& c) {
          return std::make_unique<ImmediateGating>(c.wake_cycles);
        }},
       {"idle-timeout", "the clock stops after idle_cycles cycles without an access",
        [](const ShaderGatingConfig& c) {
          return std::make_unique<IdleTimeoutGating>(c.wake_cycles, c.idle_cycles);
        }}});
  return r;
}

CoreStats& CoreStats::operator+=(const CoreStats& o) {
  invocations += o.invocations;
  killed += o.killed;
  cycles += o.cycles;
  bundles += o.bundles;
  words += o.words;
  stallCycles += o.stallCycles;
  wakeCycles += o.wakeCycles;
  branchPenaltyCycles += o.branchPenaltyCycles;
  inputAccessCycles += o.inputAccessCycles;
  outputAccessCycles += o.outputAccessCycles;
  inputClockedCycles += o.inputClockedCycles;
  inputWakes += o.inputWakes;
  outputWakes += o.outputWakes;
  outputClockedCycles += o.outputClockedCycles;
  return *this;
}

CoreEnergy energyOf(const CoreStats& s, const ShaderPlatformConfig& cfg) {
  const ShaderEnergyConfig& e = cfg.energy;
  CoreEnergy r;
  r.inputBuffer =
      e.input_buffer * double(s.inputClockedCycles) + e.input_access * double(s.inputAccessCycles);
  r.outputBuffer = e.output_buffer * double(s.outputClockedCycles) +
                   e.output_access * double(s.outputAccessCycles);
  r.temporaries = e.temporaries * double(cfg.core.temporaries) / 8.0 * double(s.cycles);
  r.core = e.core * double(s.cycles);
  return r;
}

InvocationRun runInvocation(const Program& p, const Invocation& in, const std::vector<Vec4>& consts,
                            const TextureUnits& tex, const ShaderPlatformConfig& cfg,
                            const GatingPolicy& inGate, const GatingPolicy& outGate) {
  if (!p.allocated || !p.bundled)
    throw InternalError(fmt::format("{}: the core runs allocated, bundled programs", p.name));
  if (p.blocks.empty()) throw InputError(fmt::format("{}: no code", p.name));
  InvocationRun r;
  RegisterState s;
  s.t.assign(std::max<size_t>(cfg.core.temporaries, p.temporaryCount()), Vec4{});
  s.v = in;
  s.o.assign(cfg.core.output_entries, Vec4{});
  s.c = consts;
  // Ready cycle of each component of each register (temporaries and output entries): a
  // partial write leaves the other components' pending results pending.
  std::map<std::pair<int, int>, std::array<int64_t, 4>> ready;
  auto readyOf = [&](File f, uint16_t i, uint8_t mask) {
    auto it = ready.find({int(f), int(i)});
    int64_t r = 0;
    if (it != ready.end())
      for (size_t c = 0; c < 4; ++c)
        if (mask & (1u << c)) r = std::max(r, it->second[c]);
    return r;
  };
  BufferTrack ib, ob;
  int64_t cycle = 0;  // the next issue cycle
  CoreStats& st = r.stats;
  // Issues one bundle (words: instructions, plus a branch word); returns its issue cycle.
  auto issue = [&](const std::vector<const Instr*>& words, int branchWords, const Operand* cond) {
    int64_t at = cycle;
    auto need = [&](const Operand& o, uint8_t mask) {
      if (o.file == File::Temp || o.file == File::Output)
        at = std::max(at, readyOf(o.file, o.index, mask));
    };
    for (const Instr* w : words)
      for (int k = 0; k < w->sources(); ++k) need(w->src[size_t(k)], w->readMask(k));
    if (cond) need(*cond, uint8_t(1u << cond->swz[0]));
    st.stallCycles += uint64_t(at - cycle);
    bool inAcc = false, outAcc = false;
    for (const Instr* w : words) {
      inAcc = inAcc || touches(*w, File::Input);
      outAcc = outAcc || touches(*w, File::Output);
    }
    if (cond) {
      inAcc = inAcc || cond->file == File::Input;
      outAcc = outAcc || cond->file == File::Output;
    }
    // A gated buffer's clock starts `wake` cycles before the access, as soon as the bundle is
    // decoded (at `cycle`): the wake overlaps with an operand wait and delays the bundle only by
    // what is left of it.
    const int64_t operandsReady = at;
    const bool inStopped = inAcc && inGate.stopped(operandsReady, ib.last);
    const bool outStopped = outAcc && outGate.stopped(operandsReady, ob.last);
    const uint32_t inWake = inStopped ? inGate.wakeCycles() : 0;
    const uint32_t outWake = outStopped ? outGate.wakeCycles() : 0;
    at = std::max(operandsReady, cycle + int64_t(std::max(inWake, outWake)));
    st.wakeCycles += uint64_t(at - operandsReady);
    auto account = [&](BufferTrack& b, const GatingPolicy& g, bool acc, bool stopped, uint32_t w) {
      if (!acc) return;
      if (stopped) {
        // Clocked for a while after the last access, off, then clocked from the wake on.
        if (b.last >= 0) b.clocked += g.clockedAfter(at - w - b.last - 1);
        b.clocked += w + 1;
        ++b.wakes;
      } else {
        // Still running: it ran since the last access, and stays on while the bundle waits.
        if (b.last >= 0) b.clocked += uint64_t(at - b.last - 1);
        b.clocked += 1;
      }
      b.last = at;
      ++b.accessCycles;
    };
    account(ib, inGate, inAcc, inStopped, inWake);
    account(ob, outGate, outAcc, outStopped, outWake);
    for (const Instr* w : words) {
      execute(*w, s, tex);
      auto& rd = ready[{int(w->dst.file), int(w->dst.index)}];
      for (size_t c = 0; c < 4; ++c)
        if (w->dst.mask & (1u << c)) rd[c] = at + latencyOf(*w, cfg.core.latency);
    }
    st.bundles += 1;
    st.words += words.size() + size_t(branchWords);
    cycle = at + 1;
    return at;
  };
  int b = 0;
  uint64_t steps = 0;
  while (true) {
    const Block& blk = p.blocks[size_t(b)];
    const size_t n = blk.code.size();
    const int words = branchWords(blk.term, b);
    const Operand* cond = blk.term.kind == TermKind::Branch ? &blk.term.cond : nullptr;
    bool termIssued = words == 0;
    for (size_t k = 0; k < n;) {
      std::vector<const Instr*> bundle{&blk.code[k]};
      size_t next = k + 1;
      if (blk.code[k].pairNext && k + 1 < n) {
        bundle.push_back(&blk.code[k + 1]);
        next = k + 2;
      }
      const bool withTerm = next == n && blk.term.pairPrev && words > 0;
      issue(bundle, withTerm ? 1 : 0, withTerm ? cond : nullptr);
      if (withTerm) termIssued = true;
      k = next;
    }
    if (!termIssued) issue({}, 1, cond);
    // Every block counts as a step, so that a loop of empty blocks ends too.
    if ((steps += n + 1) > kMaxSteps)
      throw InputError(fmt::format("{}: did not finish within {} steps", p.name, kMaxSteps));
    if (blk.term.kind == TermKind::End || blk.term.kind == TermKind::Kill) {
      r.killed = blk.term.kind == TermKind::Kill;
      break;
    }
    const bool taken = blk.term.kind == TermKind::Jump || branchTaken(blk.term, s);
    // bnz + bra: the bra word issues only when the bnz falls through to it.
    if (words == 2 && !taken) issue({}, 1, nullptr);
    const int to = blk.term.succ[taken ? 0 : 1];
    if (to != b + 1) {
      cycle += cfg.core.branch_penalty;
      st.branchPenaltyCycles += cfg.core.branch_penalty;
    }
    b = to;
  }
  // The last bundle leaves the pipeline stages - 1 cycles after it issued.
  const int64_t total = cycle + int64_t(cfg.core.pipeline_stages) - 1;
  auto finish = [&](BufferTrack& bt, const GatingPolicy& g, uint64_t& clocked, uint64_t& acc) {
    if (!g.gates()) {
      clocked = uint64_t(total);
    } else {
      clocked = bt.clocked + (bt.last >= 0 ? g.clockedAfter(total - bt.last - 1) : 0);
    }
    acc = bt.accessCycles;
  };
  finish(ib, inGate, st.inputClockedCycles, st.inputAccessCycles);
  finish(ob, outGate, st.outputClockedCycles, st.outputAccessCycles);
  st.inputWakes = ib.wakes;
  st.outputWakes = ob.wakes;
  st.cycles = uint64_t(total);
  st.invocations = 1;
  st.killed = r.killed;
  r.outputs = std::move(s.o);
  return r;
}

uint32_t outputEntries(const Program& p) {
  uint32_t n = 0;
  for (const auto& b : p.outputs) n += b.entries;
  return n;
}

uint32_t inputEntries(const Program& p) {
  uint32_t n = 0;
  for (const auto& b : p.inputs) n += b.entries;
  return n;
}

ShaderCore::ShaderCore(sc_core::sc_module_name name, const ShaderPlatformConfig& cfg)
    : sc_module(name),
      cfg_(cfg),
      inGate_(policiesOf(cfg).gating.create(cfg.gating.input, cfg.gating)),
      outGate_(policiesOf(cfg).gating.create(cfg.gating.output, cfg.gating)),
      period_(sc_core::sc_time(1e3 / cfg.clock_mhz, sc_core::SC_NS)) {
  SC_HAS_PROCESS(ShaderCore);
  SC_THREAD(run);
}

void ShaderCore::run() {
  // An error (a program that does not finish, say) ends this thread and is kept for
  // simulateDraw, which rethrows it once the simulation has stopped: nothing is thrown through
  // the SystemC kernel.
  try {
    while (true) {
      const ShaderTask t = tasks.read();
      if (t.last) break;
      InvocationRun r = runInvocation(*t.program, *t.inputs, *t.constants, *t.textures, cfg_,
                                      *inGate_, *outGate_);
      stats_[size_t(t.program->stage)] += r.stats;
      const uint64_t writeout = r.killed ? 0
                                         : uint64_t(outputEntries(*t.program)) *
                                               cfg_.controller.writeout_cycles_per_entry;
      busyCycles_ += r.stats.cycles + writeout;
      wait(period_ * double(r.stats.cycles + writeout));
      *t.result = std::move(r);
      done.write(true);
    }
  } catch (const std::exception&) {
    error_ = std::current_exception();
  }
}

}  // namespace gpusc::shader
