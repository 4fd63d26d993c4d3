// SHA-256 (FIPS 180-4), written for gpusc: the sweep engine names each point's configuration by
// the digest of its resolved text. Not for security; for a stable, collision-free identity.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpusc::cli {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  // The digest as 64 lower-case hex digits. Ends the hash: call once.
  std::string hexDigest();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t used_ = 0;
  uint64_t bytes_ = 0;
};

// The hex digest of `data`.
std::string sha256Hex(std::string_view data);

}  // namespace gpusc::cli
