#include "common/mem_access.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc {

const char* accessKindName(AccessKind k) {
  switch (k) {
    case AccessKind::Load:
      return "load";
    case AccessKind::Store:
      return "store";
    case AccessKind::Atomic:
      return "atomic";
    case AccessKind::InstructionFetch:
      return "ifetch";
    case AccessKind::ConstLoad:
      return "const";
  }
  return "?";
}

PayloadPool::~PayloadPool() {
  for (Slot* s : all_) {
    s->clear_extension(&s->ext);  // the extension is part of the slot, not heap-owned
    delete s;
  }
}

tlm::tlm_generic_payload* PayloadPool::acquire() {
  Slot* s;
  if (free_.empty()) {
    s = new Slot;
    if (reinterpret_cast<uintptr_t>(s->data) -
            reinterpret_cast<uintptr_t>(static_cast<tlm::tlm_generic_payload*>(s)) !=
        kSlotDataOffset) {
      delete s;
      throw InternalError("PayloadPool: the compiler's offset of a slot's buffer is not its own");
    }
    s->set_mm(this);
    s->set_extension(&s->ext);
    all_.push_back(s);
  } else {
    s = free_.back();
    free_.pop_back();
  }
  s->ext = MemAccessExtension{};
  s->set_data_ptr(s->data);
  s->set_byte_enable_ptr(nullptr);
  s->set_byte_enable_length(0);
  s->set_streaming_width(0);
  s->set_dmi_allowed(false);
  s->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  s->acquire();
  return s;
}

void PayloadPool::free(tlm::tlm_generic_payload* gp) { free_.push_back(static_cast<Slot*>(gp)); }

uint32_t touchedChunks(const std::array<uint64_t, 4>& mask, uint32_t len, uint32_t chunk) {
  // Whether any byte in [from, to) is set, a 64-bit word at a time.
  const auto any = [&](uint32_t from, uint32_t to) {
    while (from < to) {
      const uint32_t lo = from % 64, n = std::min(to - from, 64 - lo);
      const uint64_t bits = n == 64 ? ~0ull : ((1ull << n) - 1) << lo;
      if (mask[from / 64] & bits) return true;
      from += n;
    }
    return false;
  };
  uint32_t n = 0;
  for (uint32_t from = 0; from < len; from += chunk) n += any(from, std::min(len, from + chunk));
  return n;
}

uint32_t movedBytes(const tlm::tlm_generic_payload& gp) {
  const uint32_t len = gp.get_data_length();
  const MemAccessExtension* e = PayloadPool::extensionOf(gp);
  if (!e || e->sectorBytes == 0 || len > 8 * sizeof(e->byteMask)) return len;
  return std::min(len, touchedChunks(e->byteMask, len, e->sectorBytes) * e->sectorBytes);
}

std::string describeRequest(const tlm::tlm_generic_payload& gp) {
  const MemAccessExtension* e = PayloadPool::extensionOf(gp);
  if (!e) return fmt::format("request of 0x{:x}", gp.get_address());
  return fmt::format("{} of 0x{:x} from SM {}", accessKindName(e->kind), gp.get_address(), e->sm);
}

void keepOlder(std::optional<HeldRequest>& best, uint64_t since, const std::string& what) {
  if (!best || since < best->since) best = HeldRequest{since, what};
}

}  // namespace gpusc
