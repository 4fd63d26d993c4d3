#include "common/mem_access.hpp"

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

std::string describeRequest(const tlm::tlm_generic_payload& gp) {
  const MemAccessExtension* e = PayloadPool::extensionOf(gp);
  if (!e) return fmt::format("request of 0x{:x}", gp.get_address());
  return fmt::format("{} of 0x{:x} from SM {}", accessKindName(e->kind), gp.get_address(), e->sm);
}

void keepOlder(std::optional<HeldRequest>& best, uint64_t since, const std::string& what) {
  if (!best || since < best->since) best = HeldRequest{since, what};
}

}  // namespace gpusc
