#include "func/step_env.hpp"

#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"

namespace gpusc::func {

GlobalWriteLog::Entry& GlobalWriteLog::append() {
  if (used_ == entries_.size()) entries_.emplace_back();  // a deque never moves its elements
  return entries_[used_++];
}

uint8_t* GlobalWriteLog::stage(uint64_t addr, const uint8_t* current, unsigned bytes) {
  if (bytes > kMaxStoreBytes)
    throw InternalError(
        fmt::format("deferred store of {} bytes (at most {})", bytes, kMaxStoreBytes));
  Entry& e = append();
  e.addr = addr;
  e.fn = nullptr;
  e.result = nullptr;
  e.bytes = static_cast<uint8_t>(bytes);
  std::memcpy(e.data, current, bytes);
  return e.data;
}

void GlobalWriteLog::rmw(uint64_t addr, RmwFn fn, const RmwArgs& args, uint64_t* result) {
  Entry& e = append();
  e.addr = addr;
  e.fn = fn;
  e.result = result;
  e.args = args;
  e.bytes = 0;
}

void GlobalWriteLog::apply(GlobalMemory& g) {
  for (size_t i = 0; i < used_; ++i) {
    const Entry& e = entries_[i];
    // Translated when logged (an illegal access faulted then); pages are not freed in between.
    uint8_t* p = g.translateForWrite(e.addr);
    if (p == nullptr)
      throw InternalError(
          fmt::format("deferred global write to 0x{:x}, which is no longer "
                      "allocated",
                      e.addr));
    if (e.fn == nullptr) {
      std::memcpy(p, e.data, e.bytes);
    } else {
      const uint64_t old = e.fn(p, e.args);
      if (e.result) *e.result = old;
    }
  }
  used_ = 0;
}

}  // namespace gpusc::func
