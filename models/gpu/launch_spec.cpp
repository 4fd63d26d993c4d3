#include "gpu/launch_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/config.hpp"
#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/result_files.hpp"
#include "common/rng.hpp"
#include "common/strings.hpp"
#include "common/yaml_reader.hpp"

namespace gpusc {

namespace fs = std::filesystem;

namespace {

class SpecReader : public config::YamlReader {
 public:
  using YamlReader::YamlReader;

  Dim3 dims(const YAML::Node& n, const std::string& key) const {
    std::vector<uint32_t> d;
    if (n.IsScalar()) {
      d.push_back(scalar<uint32_t>(n, key));
    } else if (n.IsSequence() && n.size() >= 1 && n.size() <= 3) {
      for (size_t i = 0; i < n.size(); ++i) d.push_back(scalar<uint32_t>(n[i], key));
    } else {
      fail(n, key, "expected 1 to 3 dimensions, e.g. [64, 16]");
    }
    for (uint32_t v : d)
      if (v == 0) fail(n, key, "dimensions must be at least 1");
    Dim3 r;
    r.x = d[0];
    if (d.size() > 1) r.y = d[1];
    if (d.size() > 2) r.z = d[2];
    return r;
  }
};

ptx::Type parseType(const SpecReader& r, const YAML::Node& n, const std::string& key) {
  std::string s = r.scalar<std::string>(n, key);
  static const std::vector<std::string> names = {"u8",  "u16", "u32", "u64", "s8",  "s16", "s32",
                                                 "s64", "f32", "f64", "b8",  "b16", "b32", "b64"};
  auto t = ptx::typeFromName("." + s);
  if (!t || std::find(names.begin(), names.end(), s) == names.end())
    r.fail(n, key,
           fmt::format("'{}' is not a type: {}{}", s, join(names, ", "), didYouMean(s, names)));
  return *t;
}

// Why `v` is not a value of type t (nothing when it is): an integer type holds whole numbers in
// its range (a .bN type those of either signedness), f32 finite values within its range.
bool isUnsignedInteger(ptx::Type t) { return ptx::typeName(t)[1] == 'u'; }  // .u8 ... .u64

std::optional<std::string> notA(ptx::Type t, double v) {
  const auto name = [&] { return std::string(ptx::typeName(t)).substr(1); };
  if (ptx::isFloat(t)) {
    if (t == ptx::Type::F32 && std::isfinite(v) &&
        std::fabs(v) > double(std::numeric_limits<float>::max()))
      return fmt::format("{} is beyond the range of f32", v);
    return std::nullopt;
  }
  if (v != std::floor(v)) return fmt::format("{} is not a whole number, as {} needs", v, name());
  const int bits = int(8 * ptx::typeBytes(t));
  const double lo = isUnsignedInteger(t) ? 0.0 : -std::ldexp(1.0, bits - 1);
  const double hi = std::ldexp(1.0, ptx::isSigned(t) ? bits - 1 : bits) - 1;
  if (v < lo || v > hi) return fmt::format("{} is outside {}'s range [{}, {}]", v, name(), lo, hi);
  return std::nullopt;
}

__extension__ typedef __int128 Int128;

// The whole number `n` holds, exactly (any 64-bit integer of either signedness), or nothing
// when it is not one (a fraction, a word). "1e3" and the like are read as doubles and taken
// when whole and exact.
std::optional<Int128> exactInteger(const YAML::Node& n) {
  int64_t iv = 0;
  uint64_t uv = 0;
  double d = 0;
  if (!config::convertScalar(n, iv)) return Int128(iv);
  if (!config::convertScalar(n, uv)) return Int128(uv);
  // A whole double is the integer it holds (1e19 is 10^19); beyond 2^100 it is out of every
  // type's range, and stays so.
  if (!config::convertScalar(n, d) && std::isfinite(d) && d == std::floor(d))
    return static_cast<Int128>(std::clamp(d, -0x1p100, 0x1p100));
  return std::nullopt;
}

// The range of integer type t.
Int128 lowest(ptx::Type t) {
  const int bits = int(8 * ptx::typeBytes(t));
  return isUnsignedInteger(t) ? Int128(0) : -(Int128(1) << (bits - 1));
}
Int128 highest(ptx::Type t) {
  const int bits = int(8 * ptx::typeBytes(t));
  return (Int128(1) << (ptx::isSigned(t) ? bits - 1 : bits)) - 1;
}

std::string int128Text(Int128 v) {
  if (v < 0) return "-" + int128Text(-v);
  std::string s;
  do {
    s.insert(s.begin(), char('0' + int(v % 10)));
    v /= 10;
  } while (v != 0);
  return s;
}

// The largest buffer a spec may ask for (1 TiB): its byte count cannot overflow.
constexpr uint64_t kMaxBufferBytes = 1ull << 40;

// The bytes of `v` as type t (integers truncated, floats converted).
uint64_t scalarBits(ptx::Type t, double v, int64_t iv, bool isInt) {
  if (t == ptx::Type::F32) {
    float f = isInt ? static_cast<float>(iv) : static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  if (t == ptx::Type::F64) {
    double d = isInt ? static_cast<double>(iv) : v;
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
  }
  uint64_t x = static_cast<uint64_t>(isInt ? iv : static_cast<int64_t>(std::llround(v)));
  unsigned bytes = ptx::typeBytes(t);
  return bytes >= 8 ? x : (x & ((1ull << (8 * bytes)) - 1));
}

// Element `i` of a buffer of type `t` as a double (integers exactly up to 2^53).
double elementAt(const std::vector<uint8_t>& bytes, ptx::Type t, uint64_t i) {
  const unsigned n = ptx::typeBytes(t);
  uint64_t raw = 0;
  std::memcpy(&raw, bytes.data() + i * n, n);
  switch (t) {
    case ptx::Type::F32: {
      float f;
      std::memcpy(&f, &raw, 4);
      return f;
    }
    case ptx::Type::F64: {
      double d;
      std::memcpy(&d, &raw, 8);
      return d;
    }
    case ptx::Type::S8:
      return double(int8_t(raw));
    case ptx::Type::S16:
      return double(int16_t(raw));
    case ptx::Type::S32:
      return double(int32_t(raw));
    case ptx::Type::S64:
      return double(int64_t(raw));
    default:
      return double(raw);
  }
}

LaunchSpecResult::Check compareBuffer(Device& dev, const LaunchSpec& spec, const ExpectSpec& x,
                                      DevPtr p) {
  const BufferSpec& b = *std::find_if(spec.buffers.begin(), spec.buffers.end(),
                                      [&](const BufferSpec& s) { return s.name == x.buffer; });
  const uint64_t bytes = b.count * ptx::typeBytes(b.type);
  std::vector<uint8_t> got(bytes), want(bytes);
  dev.copyToHost(got.data(), p, bytes);
  std::ifstream in(x.file, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(want.data()), static_cast<std::streamsize>(bytes)))
    throw InputError(fmt::format("{}: expect.{}: cannot read '{}'", x.where, x.buffer, x.file));
  LaunchSpecResult::Check c;
  c.buffer = x.buffer;
  const bool exactBits = x.tolerance == 0 && x.relativeTolerance == 0 && b.type != ptx::Type::F32 &&
                         b.type != ptx::Type::F64;
  for (uint64_t i = 0; i < b.count; ++i) {
    bool ok;
    double g = 0, w = 0;
    if (exactBits) {
      ok = std::memcmp(got.data() + i * ptx::typeBytes(b.type),
                       want.data() + i * ptx::typeBytes(b.type), ptx::typeBytes(b.type)) == 0;
      g = elementAt(got, b.type, i);
      w = elementAt(want, b.type, i);
    } else {
      g = elementAt(got, b.type, i);
      w = elementAt(want, b.type, i);
      ok = (std::isnan(g) && std::isnan(w)) ||
           std::abs(g - w) <= x.tolerance + x.relativeTolerance * std::abs(w);
    }
    if (!ok && c.mismatches++ == 0)
      c.message = fmt::format("{}[{}] = {} where {} expects {}", x.buffer, i, g, x.file, w);
  }
  c.pass = c.mismatches == 0;
  if (c.pass)
    c.message = fmt::format("{}: all {} elements match", x.buffer, b.count);
  else
    c.message =
        fmt::format("{} of {} elements differ; first: {}", c.mismatches, b.count, c.message);
  return c;
}

}  // namespace

LaunchSpec parseLaunchSpec(const std::string& text, const std::string& fileName,
                           const std::string& baseDir) {
  SpecReader r(fileName);
  const YAML::Node root = config::parseYaml(text, fileName);  // one document
  if (!root.IsMap())
    throw InputError(
        fmt::format("{}:1:1: a launch spec is a map with ptx, buffers and launches", fileName));
  r.keys(root, "", {"ptx", "buffers", "textures", "launches", "dump", "expect"});
  LaunchSpec spec;
  spec.file = fileName;
  auto resolve = [&](const std::string& p) {
    return fs::path(p).is_absolute() ? p : (fs::path(baseDir) / p).string();
  };

  if (!root["ptx"])
    throw InputError(fmt::format("{}:1:1: missing key 'ptx' (the PTX file to run)", fileName));
  spec.ptxPath = resolve(r.scalar<std::string>(root["ptx"], "ptx"));
  spec.ptxWhere = r.where(root["ptx"]);

  std::map<std::string, size_t> bufferIndex;
  if (root["buffers"]) {
    const YAML::Node bufs = root["buffers"];
    if (!bufs.IsMap()) r.fail(bufs, "buffers", "expected a map of buffer names");
    r.uniqueNames(bufs, "buffers");
    for (auto it = bufs.begin(); it != bufs.end(); ++it) {
      BufferSpec b;
      b.name = it->first.Scalar();
      const std::string key = "buffers." + b.name;
      const YAML::Node n = it->second;
      b.where = r.where(it->first);
      r.keys(n, key, {"type", "count", "init", "file"});
      if (!n["type"]) r.fail(n, key, "missing key 'type'");
      b.type = parseType(r, n["type"], key + ".type");
      if (n["file"]) {
        if (n["init"] || n["count"])
          r.fail(n, key, "a buffer read from a file takes neither count nor init");
        b.init = BufferSpec::Init::File;
        b.file = resolve(r.scalar<std::string>(n["file"], key + ".file"));
        std::error_code ec;
        auto size = fs::file_size(b.file, ec);
        if (ec) r.fail(n["file"], key + ".file", fmt::format("cannot read '{}'", b.file));
        if (size == 0)
          r.fail(n["file"], key + ".file",
                 fmt::format("'{}' is empty: a buffer has at least one element", b.file));
        if (size % ptx::typeBytes(b.type) != 0)
          r.fail(n["file"], key + ".file",
                 fmt::format("{} bytes is not a whole number of {}-byte elements", size,
                             ptx::typeBytes(b.type)));
        b.count = size / ptx::typeBytes(b.type);
      } else {
        if (!n["count"]) r.fail(n, key, "missing key 'count'");
        b.count = r.scalar<uint64_t>(n["count"], key + ".count");
        if (b.count == 0) r.fail(n["count"], key + ".count", "must be at least 1");
        // No device has a TiB (and the byte count must not overflow): checked against the
        // platform's memory.device_memory_bytes when the buffer is made.
        if (b.count > kMaxBufferBytes / ptx::typeBytes(b.type))
          r.fail(n["count"], key + ".count",
                 fmt::format("{} elements of {} bytes is more than 1 TiB", b.count,
                             ptx::typeBytes(b.type)));
        if (n["init"]) {
          const YAML::Node in = n["init"];
          const std::string ik = key + ".init";
          // An iota's first and last elements fit the type.
          const auto checkIota = [&](const YAML::Node& node, const std::string& k) {
            for (const double end : {b.a, b.a + b.b * double(b.count - 1)})
              if (auto e = notA(b.type, end))
                r.fail(node, k, fmt::format("element {}: {}", end == b.a ? 0 : b.count - 1, *e));
          };
          // An integer type's values, exactly, and checked against its range.
          const bool integer = !ptx::isFloat(b.type);
          const auto whole = [&](const YAML::Node& v, const std::string& k) {
            const std::optional<Int128> x = exactInteger(v);
            if (!x)
              r.fail(v, k,
                     fmt::format("{} is not a whole number, as {} needs", v.Scalar(),
                                 ptx::typeName(b.type) + 1));
            return *x;
          };
          // `what` names the value: the element an iota computes, or empty for the value as
          // the spec writes it.
          const auto inRange = [&](const YAML::Node& v, const std::string& k, Int128 x,
                                   const std::string& what) {
            if (x < lowest(b.type) || x > highest(b.type))
              r.fail(v, k,
                     fmt::format("{} is outside {}'s range [{}, {}]",
                                 what.empty() ? v.Scalar() : what + int128Text(x),
                                 ptx::typeName(b.type) + 1, int128Text(lowest(b.type)),
                                 int128Text(highest(b.type))));
          };
          if (in.IsScalar()) {
            std::string s = in.Scalar();
            if (s == "zeros")
              b.init = BufferSpec::Init::Zeros;
            else if (s == "iota") {
              b.init = BufferSpec::Init::Iota;  // 0, 1, ..., count - 1 (a, ia = 0; b, ib = 1)
              if (integer)
                inRange(in, ik, Int128(b.count - 1), fmt::format("element {}: ", b.count - 1));
              else
                checkIota(in, ik);
            } else
              r.fail(in, ik,
                     fmt::format("'{}' is not a generator: zeros, iota, {{iota: [start, step]}}, "
                                 "{{uniform: [min, max], seed: N}}, {{constant: V}}{}",
                                 s, didYouMean(s, {"zeros", "iota"})));
          } else {
            r.keys(in, ik, {"iota", "uniform", "constant", "seed"});
            if (in["iota"]) {
              b.init = BufferSpec::Init::Iota;
              const YAML::Node v = in["iota"];
              if (!v.IsSequence() || v.size() != 2)
                r.fail(v, ik + ".iota", "expected [start, step]");
              if (integer) {
                const Int128 start = whole(v[0], ik + ".iota"), step = whole(v[1], ik + ".iota");
                // (a step of either sign fits a 64-bit integer of either signedness)
                if (step < -(Int128(1) << 63) || step > highest(ptx::Type::U64))
                  r.fail(v[1], ik + ".iota", "the step is outside the 64-bit range");
                inRange(v, ik + ".iota", start, "element 0: ");
                inRange(v, ik + ".iota", start + step * Int128(b.count - 1),
                        fmt::format("element {}: ", b.count - 1));
                b.ia = static_cast<uint64_t>(start);
                b.ib = static_cast<uint64_t>(step);
              } else {
                b.a = r.scalar<double>(v[0], ik + ".iota");
                b.b = r.scalar<double>(v[1], ik + ".iota");
                checkIota(v, ik + ".iota");
              }
            } else if (in["uniform"]) {
              b.init = BufferSpec::Init::Uniform;
              const YAML::Node v = in["uniform"];
              if (!v.IsSequence() || v.size() != 2)
                r.fail(v, ik + ".uniform", "expected [min, max]");
              if (integer) {
                const Int128 lo = whole(v[0], ik + ".uniform"), hi = whole(v[1], ik + ".uniform");
                inRange(v[0], ik + ".uniform", lo, "");
                inRange(v[1], ik + ".uniform", hi, "");
                if (!(lo < hi)) r.fail(v, ik + ".uniform", "min must be below max");
                b.ia = static_cast<uint64_t>(lo);
                b.ib = static_cast<uint64_t>(hi);
              } else {
                b.a = r.scalar<double>(v[0], ik + ".uniform");
                b.b = r.scalar<double>(v[1], ik + ".uniform");
                if (!(b.a < b.b)) r.fail(v, ik + ".uniform", "min must be below max");
                for (int k = 0; k < 2; ++k)
                  if (auto e = notA(b.type, k ? b.b : b.a)) r.fail(v[k], ik + ".uniform", *e);
              }
              if (in["seed"]) b.seed = r.scalar<uint64_t>(in["seed"], ik + ".seed");
            } else if (in["constant"]) {
              b.init = BufferSpec::Init::Constant;
              if (integer) {
                const Int128 x = whole(in["constant"], ik + ".constant");
                inRange(in["constant"], ik + ".constant", x, "");
                b.ia = static_cast<uint64_t>(x);
              } else {
                b.a = r.scalar<double>(in["constant"], ik + ".constant");
                if (auto e = notA(b.type, b.a)) r.fail(in["constant"], ik + ".constant", *e);
              }
            } else {
              r.fail(in, ik, "expected one of iota, uniform, constant");
            }
            if (in["seed"] && b.init != BufferSpec::Init::Uniform)
              r.fail(in["seed"], ik + ".seed", "only uniform takes a seed");
          }
        }
      }
      bufferIndex[b.name] = spec.buffers.size();
      spec.buffers.push_back(std::move(b));
    }
  }

  auto bufferNames = [&] {
    std::vector<std::string> names;
    for (const auto& b : spec.buffers) names.push_back(b.name);
    return names;
  };
  auto needBuffer = [&](const YAML::Node& n, const std::string& key, const std::string& name) {
    if (!bufferIndex.count(name))
      r.fail(n, key, fmt::format("no buffer named '{}'{}", name, didYouMean(name, bufferNames())));
  };

  // Texture and surface objects over buffers: the texel format follows the buffer's type.
  std::map<std::string, size_t> textureIndex;
  if (root["textures"]) {
    const YAML::Node texs = root["textures"];
    if (!texs.IsMap()) r.fail(texs, "textures", "expected a map of texture names");
    r.uniqueNames(texs, "textures");
    for (auto it = texs.begin(); it != texs.end(); ++it) {
      TextureSpec t;
      t.name = it->first.Scalar();
      const std::string key = "textures." + t.name;
      const YAML::Node n = it->second;
      t.where = r.where(it->first);
      r.keys(n, key,
             {"buffer", "surface", "width", "height", "depth", "layers", "channels", "pitch",
              "slice_pitch", "filter", "address", "normalized", "read", "border"});
      for (const char* required : {"buffer", "width"})
        if (!n[required]) r.fail(n, key, fmt::format("missing key '{}'", required));
      t.buffer = r.scalar<std::string>(n["buffer"], key + ".buffer");
      needBuffer(n["buffer"], key + ".buffer", t.buffer);
      const BufferSpec& b = spec.buffers[bufferIndex.at(t.buffer)];
      func::TextureDescriptor& d = t.desc;
      if (n["surface"]) t.surface = r.scalar<bool>(n["surface"], key + ".surface");
      if (t.surface) d.magic = func::kSurfaceMagic;
      const unsigned bits = ptx::typeBytes(b.type) * 8;
      if (bits > 32 || b.type == ptx::Type::F64)
        r.fail(n["buffer"], key + ".buffer",
               fmt::format("texels have channels of 8, 16 or 32 bits; buffer '{}' holds {}",
                           t.buffer, ptx::typeName(b.type) + 1));
      d.channelBits = static_cast<uint8_t>(bits);
      d.kind = uint8_t(b.type == ptx::Type::F32                         ? func::TexKind::Float
                       : ptx::isSigned(b.type) && !ptx::isFloat(b.type) ? func::TexKind::Signed
                                                                        : func::TexKind::Unsigned);
      if (n["channels"]) d.channels = r.scalar<uint8_t>(n["channels"], key + ".channels");
      d.width = r.scalar<uint64_t>(n["width"], key + ".width");
      if (n["height"]) d.height = r.scalar<uint64_t>(n["height"], key + ".height");
      if (n["depth"] && n["layers"]) r.fail(n, key, "give depth (3D) or layers, not both");
      d.dims = n["height"] ? 2 : 1;
      if (n["depth"]) {
        if (!n["height"]) r.fail(n, key, "a 3D texture needs a height");
        d.depth = r.scalar<uint64_t>(n["depth"], key + ".depth");
        d.dims = 3;
      }
      if (n["layers"]) {
        d.depth = r.scalar<uint64_t>(n["layers"], key + ".layers");
        d.layered = 1;
      }
      const uint64_t tb = func::texelBytes(d);
      d.pitch = n["pitch"] ? r.scalar<uint64_t>(n["pitch"], key + ".pitch") : d.width * tb;
      d.slicePitch = n["slice_pitch"] ? r.scalar<uint64_t>(n["slice_pitch"], key + ".slice_pitch")
                                      : d.height * d.pitch;
      if (n["filter"]) {
        const std::string f = r.scalar<std::string>(n["filter"], key + ".filter");
        if (f != "point" && f != "linear")
          r.fail(n["filter"], key + ".filter",
                 fmt::format("'{}' is not a filter: point, linear{}", f,
                             didYouMean(f, {"point", "linear"})));
        d.linearFilter = f == "linear";
      }
      if (n["address"]) {
        static const std::vector<std::string> modes = {"wrap", "clamp", "mirror", "border"};
        const YAML::Node a = n["address"];
        std::vector<YAML::Node> axes;
        if (a.IsSequence()) {
          if (a.size() < 1 || a.size() > 3) r.fail(a, key + ".address", "expected 1 to 3 modes");
          for (size_t i = 0; i < a.size(); ++i) axes.push_back(a[i]);
        } else {
          axes.assign(3, a);
        }
        for (size_t i = 0; i < axes.size(); ++i) {
          const std::string m = r.scalar<std::string>(axes[i], key + ".address");
          const auto at = std::find(modes.begin(), modes.end(), m);
          if (at == modes.end())
            r.fail(axes[i], key + ".address",
                   fmt::format("'{}' is not an address mode: {}{}", m, join(modes, ", "),
                               didYouMean(m, modes)));
          d.address[i] = static_cast<uint8_t>(at - modes.begin());
        }
      }
      if (n["normalized"])
        d.normalizedCoords = r.scalar<bool>(n["normalized"], key + ".normalized");
      if (n["read"]) {
        const std::string m = r.scalar<std::string>(n["read"], key + ".read");
        if (m != "element" && m != "normalized_float")
          r.fail(n["read"], key + ".read",
                 fmt::format("'{}' is not a read mode: element, normalized_float{}", m,
                             didYouMean(m, {"element", "normalized_float"})));
        d.normalizedRead = m == "normalized_float" && d.kind != uint8_t(func::TexKind::Float);
      }
      if (n["border"]) {
        const YAML::Node c = n["border"];
        if (!c.IsSequence() || c.size() != 4)
          r.fail(c, key + ".border", "expected four values [r, g, b, a]");
        for (size_t i = 0; i < 4; ++i)
          d.border[i] = static_cast<float>(r.scalar<double>(c[i], key + ".border"));
      }
      const std::string problem = func::textureDescriptorProblem(d, t.surface);
      if (!problem.empty()) r.fail(n, key, problem);
      const uint64_t span = func::textureSpan(d), bytes = b.count * ptx::typeBytes(b.type);
      if (span > bytes)
        r.fail(n, key,
               fmt::format("its texels span {} bytes; buffer '{}' has {}", span, t.buffer, bytes));
      textureIndex[t.name] = spec.textures.size();
      spec.textures.push_back(std::move(t));
    }
  }

  auto parseRepetition = [&](const YAML::Node& n, const std::string& key, LaunchEntry& e) {
    if (n["repeat"]) {
      e.repeat = r.scalar<uint32_t>(n["repeat"], key + ".repeat");
      if (e.repeat == 0) r.fail(n["repeat"], key + ".repeat", "must be at least 1");
    }
    if (n["until_zero"]) {
      if (n["repeat"])
        r.fail(n["until_zero"], key + ".until_zero", "use either repeat or until_zero");
      e.untilZero = r.scalar<std::string>(n["until_zero"], key + ".until_zero");
      needBuffer(n["until_zero"], key + ".until_zero", e.untilZero);
    }
    if (n["max_iterations"]) {
      if (!n["until_zero"])
        r.fail(n["max_iterations"], key + ".max_iterations", "only with until_zero");
      e.maxIterations = r.scalar<uint32_t>(n["max_iterations"], key + ".max_iterations");
      if (e.maxIterations == 0)
        r.fail(n["max_iterations"], key + ".max_iterations", "must be at least 1");
    }
  };

  const YAML::Node launches = root["launches"];
  if (!launches || !launches.IsSequence() || launches.size() == 0)
    throw InputError(fmt::format("{}: launches: expected a list of at least one launch",
                                 launches ? r.where(launches) : fileName + ":1:1"));
  std::function<LaunchEntry(const YAML::Node&, const std::string&, bool)> parseEntry =
      [&](const YAML::Node& n, const std::string& key, bool inLoop) {
        LaunchEntry e;
        e.where = r.where(n);
        if (n.IsMap() && n["loop"]) {
          if (inLoop) r.fail(n, key, "loops do not nest");
          r.keys(n, key, {"loop"});
          const YAML::Node l = n["loop"];
          const std::string lk = key + ".loop";
          r.keys(l, lk, {"launches", "repeat", "until_zero", "max_iterations"});
          const YAML::Node body = l["launches"];
          if (!body || !body.IsSequence() || body.size() == 0)
            r.fail(l, lk, "expected launches: a list of launches");
          for (size_t j = 0; j < body.size(); ++j)
            e.body.push_back(parseEntry(body[j], fmt::format("{}.launches[{}]", lk, j), true));
          parseRepetition(l, lk, e);
          return e;
        }
        r.keys(n, key,
               {"kernel", "grid", "block", "shared", "cooperative", "args", "repeat", "until_zero",
                "max_iterations"});
        if (!n["kernel"]) r.fail(n, key, "missing key 'kernel'");
        e.kernel = r.scalar<std::string>(n["kernel"], key + ".kernel");
        if (!n["grid"]) r.fail(n, key, "missing key 'grid'");
        if (!n["block"]) r.fail(n, key, "missing key 'block'");
        e.grid = r.dims(n["grid"], key + ".grid");
        e.block = r.dims(n["block"], key + ".block");
        if (n["shared"]) e.sharedBytes = r.scalar<uint32_t>(n["shared"], key + ".shared");
        if (n["cooperative"])
          e.cooperative = r.scalar<bool>(n["cooperative"], key + ".cooperative");
        if (inLoop && (n["repeat"] || n["until_zero"] || n["max_iterations"]))
          r.fail(n, key, "launches inside a loop repeat with the loop");
        parseRepetition(n, key, e);
        if (n["args"]) {
          const YAML::Node args = n["args"];
          if (!args.IsSequence()) r.fail(args, key + ".args", "expected a list");
          for (size_t j = 0; j < args.size(); ++j) {
            const YAML::Node a = args[j];
            const std::string ak = fmt::format("{}.args[{}]", key, j);
            ArgSpec arg;
            arg.where = r.where(a);
            if (a.IsScalar()) {
              arg.isBuffer = true;
              arg.buffer = a.Scalar();
              needBuffer(a, ak, arg.buffer);
            } else if (a.IsMap() && a.size() >= 1) {
              if (a["texture"] || a["surface"]) {
                const bool surface = bool(a["surface"]);
                const char* kind = surface ? "surface" : "texture";
                r.keys(a, ak, {kind});
                arg.texture = r.scalar<std::string>(a[kind], ak + "." + kind);
                std::vector<std::string> names;
                for (const auto& t : spec.textures)
                  if (t.surface == surface) names.push_back(t.name);
                const auto at = textureIndex.find(arg.texture);
                if (at == textureIndex.end() || spec.textures[at->second].surface != surface)
                  r.fail(a[kind], ak + "." + kind,
                         fmt::format("no {} named '{}' in textures{}", kind, arg.texture,
                                     didYouMean(arg.texture, names)));
              } else if (a["buffer"]) {
                r.keys(a, ak, {"buffer", "offset"});
                arg.isBuffer = true;
                arg.buffer = r.scalar<std::string>(a["buffer"], ak + ".buffer");
                needBuffer(a["buffer"], ak + ".buffer", arg.buffer);
                if (a["offset"]) arg.offset = r.scalar<uint64_t>(a["offset"], ak + ".offset");
              } else {
                if (a.size() != 1)
                  r.fail(a, ak, "a scalar argument is {type: value}, e.g. {u32: 1024}");
                auto it = a.begin();
                YAML::Node tn = it->first;
                arg.type = parseType(r, tn, ak);
                const YAML::Node v = it->second;
                if (ptx::isFloat(arg.type)) {
                  const double d = r.scalar<double>(v, ak);
                  if (auto e = notA(arg.type, d)) r.fail(v, ak, *e);
                  arg.bits = scalarBits(arg.type, d, 0, false);
                } else {
                  int64_t iv = 0;
                  uint64_t uv = 0;
                  const unsigned bits = 8 * ptx::typeBytes(arg.type);
                  const auto wide = [&] {  // a 64-bit type takes any 64-bit integer
                    return fmt::format("{} is outside {}'s range", v.Scalar(),
                                       std::string(ptx::typeName(arg.type)).substr(1));
                  };
                  if (!config::convertScalar(v, iv)) {
                    if (bits < 64 ? bool(notA(arg.type, double(iv)))
                                  : (isUnsignedInteger(arg.type) && iv < 0))
                      r.fail(v, ak, wide());
                    arg.bits = scalarBits(arg.type, 0, iv, true);
                  } else if (!config::convertScalar(v, uv)) {
                    if (bits < 64 || ptx::isSigned(arg.type)) r.fail(v, ak, wide());
                    arg.bits = scalarBits(arg.type, 0, static_cast<int64_t>(uv), true);
                  } else
                    r.fail(v, ak,
                           fmt::format("expected an integer, got '{}'",
                                       v.IsScalar() ? v.Scalar() : "?"));
                }
              }
            } else {
              r.fail(a, ak,
                     "expected a buffer name, {buffer: name, offset: N}, {texture: name}, "
                     "{surface: name} or {type: value}");
            }
            e.args.push_back(std::move(arg));
          }
        }
        return e;
      };
  for (size_t i = 0; i < launches.size(); ++i)
    spec.launches.push_back(parseEntry(launches[i], fmt::format("launches[{}]", i), false));

  if (root["dump"]) {
    const YAML::Node d = root["dump"];
    if (!d.IsMap()) r.fail(d, "dump", "expected a map of buffer: file");
    r.uniqueNames(d, "dump");
    std::map<std::string, std::string> files;  // file -> buffer
    for (auto it = d.begin(); it != d.end(); ++it) {
      std::string name = it->first.Scalar();
      needBuffer(it->first, "dump", name);
      const std::string key = "dump." + name;
      const std::string file = r.scalar<std::string>(it->second, key);
      // A file of the output folder itself, not one gpusc writes there.
      if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos ||
          file.find('\\') != std::string::npos)
        r.fail(it->second, key,
               fmt::format("'{}' is not a file name: a dump is written into the output folder "
                           "(a name such as {}.bin, without a folder)",
                           file, name));
      if (isOwnedResultFile(file))
        r.fail(it->second, key,
               fmt::format("'{}' is a file gpusc writes into the output folder itself", file));
      if (const auto [at, fresh] = files.emplace(file, name); !fresh)
        r.fail(it->second, key,
               fmt::format("buffer '{}' is dumped to '{}' already", at->second, file));
      spec.dumps.push_back({name, file});
    }
  }
  if (root["expect"]) {
    const YAML::Node d = root["expect"];
    if (!d.IsMap()) r.fail(d, "expect", "expected a map of buffer: file or {file, tolerance}");
    r.uniqueNames(d, "expect");
    for (auto it = d.begin(); it != d.end(); ++it) {
      ExpectSpec x;
      x.buffer = it->first.Scalar();
      const std::string key = "expect." + x.buffer;
      needBuffer(it->first, "expect", x.buffer);
      x.where = r.where(it->first);
      const YAML::Node n = it->second;
      // (yaml-cpp's Node assignment writes through to the node: pick the file node at once.)
      const YAML::Node fileNode = n.IsMap() ? n["file"] : n;
      if (n.IsMap()) {
        r.keys(n, key, {"file", "tolerance", "relative_tolerance"});
        if (!n["file"]) r.fail(n, key, "missing key 'file' (the expected contents)");
        if (n["tolerance"]) x.tolerance = r.scalar<double>(n["tolerance"], key + ".tolerance");
        if (n["relative_tolerance"])
          x.relativeTolerance =
              r.scalar<double>(n["relative_tolerance"], key + ".relative_tolerance");
        if (!(x.tolerance >= 0)) r.fail(n["tolerance"], key + ".tolerance", "must be >= 0");
        if (!(x.relativeTolerance >= 0))
          r.fail(n["relative_tolerance"], key + ".relative_tolerance", "must be >= 0");
      }
      x.file = resolve(r.scalar<std::string>(fileNode, key + (n.IsMap() ? ".file" : "")));
      const BufferSpec& b = spec.buffers[bufferIndex.at(x.buffer)];
      std::error_code ec;
      const auto size = fs::file_size(x.file, ec);
      if (ec) r.fail(fileNode, key, fmt::format("cannot read '{}'", x.file));
      if (size != b.count * ptx::typeBytes(b.type))
        r.fail(
            fileNode, key,
            fmt::format("'{}' has {} bytes; buffer '{}' has {} ({} x {})", x.file, size, x.buffer,
                        b.count * ptx::typeBytes(b.type), b.count, ptx::typeName(b.type) + 1));
      spec.expects.push_back(std::move(x));
    }
  }
  return spec;
}

LaunchSpec loadLaunchSpec(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw InputError(fmt::format("--launch {}: a folder, not a launch spec", path));
  const std::optional<std::string> text = readInputFile(path, "launch spec");
  if (!text) throw InputError(fmt::format("--launch {}: cannot read the launch spec", path));
  return parseLaunchSpec(*text, path, fs::path(path).parent_path().string());
}

LaunchSpecResult runLaunchSpec(Device& dev, const LaunchSpec& spec, const std::string& outDir) {
  {
    const std::string where = spec.ptxWhere.empty() ? spec.file : spec.ptxWhere;
    std::error_code ec;
    const fs::file_status st = fs::status(spec.ptxPath, ec);
    if (fs::is_directory(st))
      throw InputError(
          fmt::format("{}: ptx: '{}' is a folder, not a PTX file", where, spec.ptxPath));
    if (ec || !fs::exists(st) || !std::ifstream(spec.ptxPath))
      throw InputError(fmt::format("{}: ptx: cannot read '{}'", where, spec.ptxPath));
    if (fs::is_regular_file(st) && fs::file_size(spec.ptxPath, ec) == 0)
      throw InputError(fmt::format("{}: ptx: '{}' is empty", where, spec.ptxPath));
  }
  Module& mod = dev.loadModuleFile(spec.ptxPath);
  std::map<std::string, std::pair<DevPtr, uint64_t>> bufs;  // name -> (address, bytes)
  for (const auto& b : spec.buffers) {
    const unsigned eb = ptx::typeBytes(b.type);
    const uint64_t bytes = b.count * eb;
    // The device memory first: a buffer larger than the platform's is refused before the host
    // holds its initial contents.
    DevPtr p = 0;
    try {
      p = dev.malloc(bytes);
    } catch (const InputError& e) {
      throw InputError(
          fmt::format("{}: buffers.{}: {} bytes: {}", b.where, b.name, bytes, e.what()));
    }
    std::vector<uint8_t> host(bytes, 0);
    Rng rng(b.seed);
    const bool isFloat = ptx::isFloat(b.type);
    auto put = [&](uint64_t i, double v, int64_t iv, bool isInt) {
      uint64_t bits = scalarBits(b.type, v, iv, isInt);
      std::memcpy(host.data() + i * eb, &bits, eb);
    };
    switch (b.init) {
      case BufferSpec::Init::Zeros:
        break;
      // Integer types from the exact values (two's complement arithmetic modulo 2^64 gives
      // each element, which the parser checked is in the type's range).
      case BufferSpec::Init::Iota:
        for (uint64_t i = 0; i < b.count; ++i)
          if (isFloat)
            put(i, b.a + b.b * double(i), 0, false);
          else
            put(i, 0, static_cast<int64_t>(b.ia + b.ib * i), true);
        break;
      case BufferSpec::Init::Constant:
        for (uint64_t i = 0; i < b.count; ++i)
          if (isFloat)
            put(i, b.a, 0, false);
          else
            put(i, 0, static_cast<int64_t>(b.ia), true);
        break;
      case BufferSpec::Init::Uniform: {
        const uint64_t span = b.ib - b.ia;  // max - min: below 2^64 (min < max)
        for (uint64_t i = 0; i < b.count; ++i) {
          if (isFloat) {
            put(i, rng.uniform(b.a, b.b), 0, false);
          } else {
            // One of the span + 1 integers from min; every 64-bit value when that is 2^64.
            const uint64_t draw = span == ~0ull ? rng.next() : rng.next() % (span + 1);
            put(i, 0, static_cast<int64_t>(b.ia + draw), true);
          }
        }
        break;
      }
      case BufferSpec::Init::File: {
        std::ifstream f(b.file, std::ios::binary);
        if (!f ||
            !f.read(reinterpret_cast<char*>(host.data()), static_cast<std::streamsize>(bytes)))
          throw InputError(
              fmt::format("{}: buffers.{}: cannot read '{}'", b.where, b.name, b.file));
        break;
      }
    }
    dev.copyToDevice(p, host.data(), bytes);
    bufs[b.name] = {p, bytes};
  }

  std::map<std::string, DevPtr> textures;  // name -> handle
  for (const auto& t : spec.textures) {
    func::TextureDescriptor d = t.desc;
    d.base = bufs.at(t.buffer).first;
    try {
      textures[t.name] = t.surface ? dev.createSurface(d) : dev.createTexture(d);
    } catch (const InputError& err) {
      throw InputError(fmt::format("{}: textures.{}: {}", t.where, t.name, err.what()));
    }
  }

  LaunchSpecResult res;
  auto launchOnce = [&](const LaunchEntry& e) {
    const Kernel* k;
    try {
      k = &mod.kernel(e.kernel);
    } catch (const InputError& err) {
      throw InputError(fmt::format("{}: kernel: {}", e.where, err.what()));
    }
    KernelArgs args;
    for (const auto& a : e.args) {
      if (!a.texture.empty()) {
        args.u64(textures.at(a.texture));
      } else if (a.isBuffer) {
        auto [p, bytes] = bufs.at(a.buffer);
        if (a.offset >= bytes)
          throw InputError(fmt::format("{}: offset {} is past the end of buffer '{}' ({} bytes)",
                                       a.where, a.offset, a.buffer, bytes));
        args.ptr(p + a.offset);
      } else {
        args.raw(&a.bits, ptx::typeBytes(a.type), ptx::typeName(a.type) + 1);
      }
    }
    try {
      LaunchOptions options;
      options.cooperative = e.cooperative;
      dev.launch(*k, e.grid, e.block, e.sharedBytes, args, options);
    } catch (const InputError& err) {
      throw InputError(fmt::format("{}: {}", e.where, err.what()));
    }
    ++res.launches;
  };
  // One repetition of an entry: its launch, or every launch of its loop body.
  auto once = [&](const LaunchEntry& e) {
    if (e.body.empty()) {
      launchOnce(e);
    } else {
      for (const auto& b : e.body) launchOnce(b);
    }
  };
  for (const auto& e : spec.launches) {
    if (e.untilZero.empty()) {
      for (uint32_t i = 0; i < e.repeat; ++i) once(e);
    } else {
      auto [p, bytes] = bufs.at(e.untilZero);
      std::vector<uint8_t> host(bytes);
      uint32_t it = 0;
      while (true) {
        if (it++ == e.maxIterations)
          throw InputError(
              fmt::format("{}: buffer '{}' still not zero after max_iterations = {} iterations",
                          e.where, e.untilZero, e.maxIterations));
        once(e);
        dev.copyToHost(host.data(), p, bytes);
        if (std::all_of(host.begin(), host.end(), [](uint8_t v) { return v == 0; })) break;
      }
    }
  }

  if (!spec.dumps.empty()) fs::create_directories(outDir);
  for (const auto& [name, file] : spec.dumps) {
    auto [p, bytes] = bufs.at(name);
    std::vector<uint8_t> host(bytes);
    dev.copyToHost(host.data(), p, bytes);
    std::string path = (fs::path(outDir) / file).string();
    try {
      writeFileAtomically(path,
                          std::string_view(reinterpret_cast<const char*>(host.data()), bytes));
    } catch (const InputError& e) {
      throw InputError(fmt::format("dump.{}: {}", name, e.what()));
    }
    res.dumped.push_back(path);
  }
  for (const ExpectSpec& x : spec.expects)
    res.checks.push_back(compareBuffer(dev, spec, x, bufs.at(x.buffer).first));
  return res;
}

}  // namespace gpusc
