// What travels on gpusc's TLM-2.0 memory sockets: the generic payload (address, command,
// length; its data buffer is not used, values are exchanged functionally) plus a
// MemAccessExtension naming who asked for what. Payloads come from a PayloadPool, never
// new/delete per access.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tlm>

#include "common/bits.hpp"

namespace gpusc {

enum class AccessKind : uint8_t { Load, Store, Atomic, InstructionFetch, ConstLoad };
const char* accessKindName(AccessKind k);

struct MemAccessExtension : tlm::tlm_extension<MemAccessExtension> {
  uint32_t sm = 0;
  uint32_t warp = 0;  // hardware warp slot in the SM
  uint32_t pc = 0;    // instruction index in the kernel's program
  AccessKind kind = AccessKind::Load;
  uint32_t activeMask = 0;   // lanes of the warp taking part in this transaction
  uint32_t warpThreads = 0;  // active threads of the warp instruction that made it (0: a fetch)
  std::array<uint64_t, 4> byteMask{};  // bytes of the transaction the lanes touch (up to 256)
  // A cache's line fetch: the bytes of the fetched line the requesting warp's lanes touch (the
  // first request of the miss; merged requests add nothing), while byteMask covers the whole
  // line. All zero on other requests. The L2 counts its divided-word-line activity with it
  // (docs/cache-power.md): what GPGPU-Sim passes down as the access's byte mask.
  std::array<uint64_t, 4> demandMask{};
  // An atomic: the most lanes whose operations target one word of the transaction. Operations
  // on one word read each other's results, so the L2 performs them one after another.
  uint32_t atomicSerial = 1;
  // A sectored cache's request: only the sectors (of this many bytes) that byteMask touches move
  // (the data of a read's answer, of a write's request), across the interconnect and the DRAM
  // bus. 0: the whole data_length moves.
  uint32_t sectorBytes = 0;
  // A load the L1 passes to the L2 without looking it up or allocating (func::InstInfo::l2Only).
  bool l2Only = false;
  uint64_t tag = 0;  // initiator's own reference (its request record)

  void setByte(unsigned i) { byteMask[i / 64] |= 1ull << (i % 64); }
  unsigned bytesTouched() const {
    unsigned n = 0;
    for (uint64_t w : byteMask) n += popcount64(w);
    return n;
  }

  tlm::tlm_extension_base* clone() const override { return new MemAccessExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const MemAccessExtension&>(other);
  }
};

// A pool of generic payloads, each with a MemAccessExtension and a data buffer attached.
// acquire() returns a payload with reference count 1; release() (or the last release() by a
// target) returns it to the pool.
class PayloadPool : public tlm::tlm_mm_interface {
 public:
  static constexpr unsigned kDataBytes = 256;

  PayloadPool() = default;
  ~PayloadPool() override;
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;

  tlm::tlm_generic_payload* acquire();
  void free(tlm::tlm_generic_payload* gp) override;

  size_t created() const { return all_.size(); }
  size_t available() const { return free_.size(); }

  // The MemAccessExtension of gp, or nullptr when it has none. A payload made by a PayloadPool
  // (every payload the model's initiators send) is known by its data pointer, which points at its
  // own buffer at a fixed offset from the payload: its extension, beside it, is read without the
  // lookup in the payload's extension array (a call into SystemC and a cache miss on an array
  // of its own, about 6 % of a memory-bound kernel's time). Other payloads (a testbench's) are
  // looked up.
  static MemAccessExtension* extensionOf(tlm::tlm_generic_payload& gp) {
    if (reinterpret_cast<uintptr_t>(gp.get_data_ptr()) - reinterpret_cast<uintptr_t>(&gp) ==
        kSlotDataOffset)
      return &static_cast<Slot&>(gp).ext;
    MemAccessExtension* e = nullptr;
    gp.get_extension(e);
    return e;
  }
  static const MemAccessExtension* extensionOf(const tlm::tlm_generic_payload& gp) {
    return extensionOf(const_cast<tlm::tlm_generic_payload&>(gp));
  }

 private:
  struct Slot : tlm::tlm_generic_payload {
    MemAccessExtension ext;
    unsigned char data[kDataBytes];
  };
  // Slot is not standard-layout (the payload has virtual functions), for which offsetof is
  // conditionally supported; GCC and Clang give the member's offset (single, non-virtual
  // inheritance), which the constructor of every slot checks.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
  static constexpr uintptr_t kSlotDataOffset = offsetof(Slot, data);
#pragma GCC diagnostic pop
  std::vector<Slot*> all_, free_;
};

// The payload's MemAccessExtension, which every request on the model's memory sockets carries.
inline MemAccessExtension& accessOf(tlm::tlm_generic_payload& gp) {
  return *PayloadPool::extensionOf(gp);
}

// How many of the `chunk`-byte pieces of [0, len) hold a byte of `mask` (bit i: byte i; len at
// most 256, the mask's width).
uint32_t touchedChunks(const std::array<uint64_t, 4>& mask, uint32_t len, uint32_t chunk);

// The bytes of data `gp` moves: its data_length, or, for a sectored cache's request
// (MemAccessExtension::sectorBytes; a whole line, a whole number of sectors), the sectors its byte
// mask touches.
uint32_t movedBytes(const tlm::tlm_generic_payload& gp);

// A request a memory unit holds and must act on itself (not waiting on a unit further down):
// accepted but its END_REQ held back, queued to be sent on, or answered but not yet delivered.
// The no-progress watchdog names the unit holding the oldest one: where a request got stuck.
struct HeldRequest {
  uint64_t since = 0;  // simulation time (sc_time value) from which it has waited there
  std::string what;    // "load of 0x1f80 from SM 3, in the miss queue"
};
// "load of 0x1f80 from SM 3" (the payload carries its MemAccessExtension).
std::string describeRequest(const tlm::tlm_generic_payload& gp);
// Keeps the older of `best` and {since, what}.
void keepOlder(std::optional<HeldRequest>& best, uint64_t since, const std::string& what);

}  // namespace gpusc
