// Texture fetches (PTX `tex.1d/2d/3d`) through texture objects and raw surface accesses
// (`suld.b` / `sust.b`) through surface objects (func/texture.hpp).
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "func/handlers.hpp"
#include "func/lanes.hpp"
#include "func/texture.hpp"

namespace gpusc::func {

const char* textureDescriptorProblem(const TextureDescriptor& d, bool surface) {
  if (d.magic != (surface ? kSurfaceMagic : kTextureMagic))
    return d.magic == (surface ? kTextureMagic : kSurfaceMagic)
               ? (surface ? "it is a texture object, not a surface object"
                          : "it is a surface object, not a texture object")
               : (surface ? "no surface descriptor at that address"
                          : "no texture descriptor at that address");
  if (d.dims < 1 || d.dims > 3) return "a texture has 1, 2 or 3 dimensions";
  if (d.channels != 1 && d.channels != 2 && d.channels != 4)
    return "a texel has 1, 2 or 4 channels";
  if (d.channelBits != 8 && d.channelBits != 16 && d.channelBits != 32)
    return "a channel has 8, 16 or 32 bits";
  if (d.kind > uint8_t(TexKind::Float)) return "unknown channel kind";
  if (d.kind == uint8_t(TexKind::Float) && d.channelBits == 8) return "no 8-bit float channels";
  if (d.address[0] > 3 || d.address[1] > 3 || d.address[2] > 3) return "unknown address mode";
  if (d.width == 0 || d.height == 0 || d.depth == 0) return "the texture is empty";
  if (d.dims == 1 && d.height != 1) return "a 1D texture has one row";
  if (d.layered > 1) return "the layered flag is 0 or 1";
  if (d.layered && d.dims == 3) return "layers are 1D or 2D";
  if (d.dims < 3 && !d.layered && d.depth != 1) return "a 1D or 2D texture has one slice";
  const uint64_t tb = texelBytes(d);
  if (d.base % tb != 0) return "the texels are not aligned to their size";
  if (d.width > (uint64_t(1) << 31) || d.height > (uint64_t(1) << 31) ||
      d.depth > (uint64_t(1) << 31))
    return "more than 2^31 texels along an axis";
  if (textureSpan(d) == ~uint64_t(0)) return "its texels span more bytes than an address holds";
  if (d.height > 1 && (d.pitch < d.width * tb || d.pitch % tb != 0))
    return "the pitch is shorter than a row or not a multiple of the texel size";
  if (d.depth > 1 &&
      (d.slicePitch < (d.height - 1) * d.pitch + d.width * tb || d.slicePitch % tb != 0))
    return "the slice pitch is shorter than a slice or not a multiple of the texel size";
  if (d.normalizedRead && d.kind != uint8_t(TexKind::Float) && d.channelBits == 32)
    return "32-bit integers cannot be read as normalized floats";
  if (d.linearFilter && texReadsIntegers(d))
    return "linear filtering needs a texture that reads as floats";
  return "";
}

namespace {

// Texel index `i` on an axis of n texels under `mode`; -1 for the border.
int64_t addressIndex(int64_t i, int64_t n, TexAddress mode) {
  switch (mode) {
    case TexAddress::Wrap:
      return ((i % n) + n) % n;
    case TexAddress::Mirror: {
      const int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
      return m < n ? m : 2 * n - 1 - m;
    }
    case TexAddress::Border:
      return i < 0 || i >= n ? -1 : i;
    case TexAddress::Clamp:
    default:
      return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
}

// One axis of a float-coordinate fetch: the first texel's index before addressing and, for
// linear filtering, the weight of the next one.
struct Axis {
  int64_t i = 0;
  float alpha = 0;
  TexAddress mode = TexAddress::Clamp;
  int64_t n = 1;
};

Axis axisOf(const TextureDescriptor& d, int a, float coord, uint64_t n) {
  Axis ax;
  ax.n = static_cast<int64_t>(n);
  ax.mode = static_cast<TexAddress>(d.address[a]);
  // Wrap and mirror apply to normalized coordinates only; otherwise they clamp.
  if (!d.normalizedCoords && (ax.mode == TexAddress::Wrap || ax.mode == TexAddress::Mirror))
    ax.mode = TexAddress::Clamp;
  double x = std::isnan(coord) ? 0.0 : static_cast<double>(coord);
  if (d.normalizedCoords) {
    if (ax.mode == TexAddress::Wrap) {
      x -= std::floor(x);
    } else if (ax.mode == TexAddress::Mirror) {
      const double f = std::floor(x);
      x = std::fmod(f, 2.0) == 0.0 ? x - f : 1.0 - (x - f);
    }
    x *= static_cast<double>(n);
  }
  if (d.linearFilter) x -= 0.5;
  // Far outside the texture every mode gives its edge (or the border): keep the index in range.
  const double limit = 4.0 * static_cast<double>(n) + 4.0;
  x = x < -limit ? -limit : x > limit ? limit : x;
  const double f = std::floor(x);
  ax.i = static_cast<int64_t>(f);
  if (d.linearFilter) ax.alpha = static_cast<float>(std::round((x - f) * 256.0) / 256.0);
  return ax;
}

}  // namespace

TexFootprint textureFootprint(const TextureDescriptor& d, float x, float y, float z) {
  TexFootprint fp;
  const Axis ax = axisOf(d, 0, x, d.width);
  const Axis ay = d.dims >= 2 ? axisOf(d, 1, y, d.height) : Axis{};
  const Axis az = d.dims == 3 ? axisOf(d, 2, z, d.depth) : Axis{};
  const int nx = d.linearFilter ? 2 : 1;
  const int ny = d.linearFilter && d.dims >= 2 ? 2 : 1;
  const int nz = d.linearFilter && d.dims == 3 ? 2 : 1;
  fp.n = nx * ny * nz;
  // With one texel along an axis (point sampling, or fewer dimensions) its weight is 1.
  auto weight = [](const Axis& a, int n, int i) {
    return n == 1 ? 1.0f : i == 0 ? 1.0f - a.alpha : a.alpha;
  };
  for (int k = 0; k < fp.n; ++k) {
    const int i = k % nx, j = (k / nx) % ny, l = k / (nx * ny);
    const int64_t tx = addressIndex(ax.i + i, ax.n, ax.mode);
    const int64_t ty = addressIndex(ay.i + j, ay.n, ay.mode);
    const int64_t tz = addressIndex(az.i + l, az.n, az.mode);
    fp.ix[k] = ty < 0 || tz < 0 ? -1 : tx;
    fp.iy[k] = ty;
    fp.iz[k] = tz;
    fp.w[k] = weight(ax, nx, i) * weight(ay, ny, j) * weight(az, nz, l);
  }
  return fp;
}

TexFootprint textureFootprintInt(const TextureDescriptor& d, int32_t x, int32_t y, int32_t z) {
  TexFootprint fp;
  auto mode = [&](int a) {
    auto m = static_cast<TexAddress>(d.address[a]);
    return m == TexAddress::Wrap || m == TexAddress::Mirror ? TexAddress::Clamp : m;
  };
  fp.ix[0] = addressIndex(x, static_cast<int64_t>(d.width), mode(0));
  fp.iy[0] = d.dims >= 2 ? addressIndex(y, static_cast<int64_t>(d.height), mode(1)) : 0;
  fp.iz[0] = d.dims == 3 ? addressIndex(z, static_cast<int64_t>(d.depth), mode(2)) : 0;
  if (fp.iy[0] < 0 || fp.iz[0] < 0) fp.ix[0] = -1;
  return fp;
}

TexelValue decodeTexel(const TextureDescriptor& d, const uint8_t* texel) {
  TexelValue v{};
  const bool ints = texReadsIntegers(d);
  if (ints) {
    v.u[0] = v.u[1] = v.u[2] = 0;
    v.u[3] = 1;
  } else {
    v.f[0] = v.f[1] = v.f[2] = 0.0f;
    v.f[3] = 1.0f;
  }
  const unsigned bytes = d.channelBits / 8u;
  for (unsigned c = 0; c < d.channels; ++c) {
    const uint8_t* p = texel + c * bytes;
    uint32_t raw = 0;
    std::memcpy(&raw, p, bytes);
    if (d.kind == uint8_t(TexKind::Float)) {
      if (bytes == 2) {
        v.f[c] = halfToFloat(static_cast<uint16_t>(raw));
      } else {
        std::memcpy(&v.f[c], &raw, 4);
      }
      continue;
    }
    const bool isSigned = d.kind == uint8_t(TexKind::Signed);
    int64_t value = raw;
    if (isSigned && bytes < 4) {
      const unsigned shift = 64 - d.channelBits;
      value = static_cast<int64_t>(static_cast<uint64_t>(raw) << shift) >> shift;
    } else if (isSigned) {
      value = static_cast<int32_t>(raw);
    }
    if (ints) {
      v.u[c] = static_cast<uint32_t>(value);
    } else if (isSigned) {
      const double top = double((int64_t(1) << (d.channelBits - 1)) - 1);
      v.f[c] = static_cast<float>(std::max(double(value) / top, -1.0));
    } else {
      const double top = double((int64_t(1) << d.channelBits) - 1);
      v.f[c] = static_cast<float>(double(value) / top);
    }
  }
  return v;
}

namespace handlers {
namespace {

// The descriptor of the texture (or surface) object a lane names, read and checked when the
// handle differs from the previous lane's (a warp's lanes mostly name one object); a fault naming
// the handle when it is not one, or when its layering does not match the access's.
class DescriptorCache {
 public:
  DescriptorCache(bool surface, bool layeredAccess)
      : surface_(surface), layeredAccess_(layeredAccess) {}

  const TextureDescriptor& get(ExecCtx& c, int l, uint64_t h) {
    if (h != handle_) {
      load(c, l, h);
      handle_ = h;
    }
    return d_;
  }

 private:
  void load(ExecCtx& c, int l, uint64_t h) {
    const char* what = surface_ ? "surface object" : "texture object";
    if (h % 16 != 0 || !c.L->gmem->isAllocated(h, sizeof d_))
      c.fault(l, fmt::format("{} 0x{:x} does not exist (no descriptor there)", what, h));
    for (unsigned k = 0; k < sizeof d_; k += 16)
      std::memcpy(reinterpret_cast<uint8_t*>(&d_) + k,
                  memoryPointer(c, MemSpace::Global, h + k, 16, l, false), 16);
    const char* problem = textureDescriptorProblem(d_, surface_);
    if (*problem) c.fault(l, fmt::format("{} 0x{:x} cannot be used: {}", what, h, problem));
    const uint64_t span = textureSpan(d_);
    if (!c.L->gmem->isAllocated(d_.base, span))
      c.fault(l, fmt::format("{} 0x{:x}: its {} bytes of texels at 0x{:x} are not inside one "
                             "allocation",
                             what, h, span, d_.base));
    if (layeredAccess_ != bool(d_.layered)) {
      const char* why =
          surface_ ? (d_.layered ? "is layered: use a layered access (.a1d / .a2d)"
                                 : "is not layered (.a1d / .a2d access layers)")
                   : (d_.layered ? "is layered: fetch it with a layered fetch (tex.a1d / tex.a2d)"
                                 : "is not layered (tex.a1d / tex.a2d fetch layers)");
      c.fault(l, fmt::format("{} 0x{:x} {}", what, h, why));
    }
  }

  const bool surface_, layeredAccess_;
  uint64_t handle_ = ~0ull;
  TextureDescriptor d_;
};

// tex.{1d,2d,3d,a1d,a2d}.v4.dtype.ctype {d0, d1, d2, d3}, [handle, {coordinates}]: src[0] the
// handle, src[1..3] x, y and z (.f32 or .s32: IntCoords) or, layered (flags 1), x, y and the
// layer (an integer); dst[0..3] the values.
template <bool IntCoords>
void texHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* handle = slot(c, in.src[0]);
  const uint64_t* xs = slot(c, in.src[1]);
  const uint64_t* ys = slot(c, in.src[2]);
  const uint64_t* zs = slot(c, in.src[3]);
  TexelValue out[kWarpSize];
  DescriptorCache descriptors(false, in.flags & 1);
  forEachLane(mask, [&](int l) {
    const TextureDescriptor& d = descriptors.get(c, l, handle[l]);
    TexFootprint fp;
    if constexpr (IntCoords) {
      fp = textureFootprintInt(d, get<int32_t>(xs, l), get<int32_t>(ys, l), get<int32_t>(zs, l));
    } else {
      fp = textureFootprint(d, get<float>(xs, l), get<float>(ys, l), get<float>(zs, l));
    }
    if (d.layered) {  // the layer, an integer clamped to the texture's layers
      const int64_t layer =
          std::min<int64_t>(std::max<int64_t>(get<int32_t>(zs, l), 0), int64_t(d.depth) - 1);
      for (int i = 0; i < fp.n; ++i) fp.iz[i] = layer;
    }
    const unsigned tb = texelBytes(d);
    bool recorded = false;
    out[l] = filterTexels(d, fp, [&](int i) -> const uint8_t* {
      const uint64_t addr = d.base + uint64_t(fp.iz[i]) * d.slicePitch +
                            uint64_t(fp.iy[i]) * d.pitch + uint64_t(fp.ix[i]) * tb;
      // The timing model sees the first texel a lane reads (the others of a filtered fetch are
      // its neighbours, mostly in the same sectors).
      uint8_t* p =
          memoryPointer(c, MemSpace::Global, addr, tb, l, false, recorded ? nullptr : c.rec);
      recorded = true;
      return p;
    });
  });
  forEachLane(mask, [&](int l) {
    for (int k = 0; k < 4; ++k) slot(c, in.dst[k])[l] = out[l].u[k];
  });
}

// suld.b / sust.b .{1d,2d,3d,a1d,a2d}{.v2,.v4}.{b8,b16,b32,b64}.{trap,clamp,zero}: src[0] the
// surface object, src[1] x in bytes, src[2] y in rows, src[3] z in slices (or the layer: flags
// 2); operandLists[aux] the data registers, in.bytes bytes each; mode 0 trap, 1 clamp, 2 zero;
// flags 1: store.
void surfaceHandler(ExecCtx& c, const Inst& in, uint32_t mask) {
  const uint64_t* handle = slot(c, in.src[0]);
  const uint64_t* xs = slot(c, in.src[1]);
  const uint64_t* ys = slot(c, in.src[2]);
  const uint64_t* zs = slot(c, in.src[3]);
  const auto& regs = c.L->prog->operandLists[in.aux];
  const bool store = in.flags & 1;
  const unsigned eb = in.bytes, n = static_cast<unsigned>(regs.size()), size = eb * n;
  uint64_t vals[4][kWarpSize] = {};
  DescriptorCache descriptors(true, in.flags & 2);
  forEachLane(mask, [&](int l) {
    const TextureDescriptor& d = descriptors.get(c, l, handle[l]);
    int64_t x = get<int32_t>(xs, l), y = d.dims >= 2 ? get<int32_t>(ys, l) : 0;
    int64_t z = d.dims == 3 || d.layered ? get<int32_t>(zs, l) : 0;
    const int64_t rowBytes = static_cast<int64_t>(d.width * texelBytes(d));
    const int64_t rows = static_cast<int64_t>(d.height), slices = static_cast<int64_t>(d.depth);
    if (x % size != 0)
      c.fault(l, fmt::format("surface access of {} bytes at byte {} is not aligned", size, x));
    if (x < 0 || x + size > rowBytes || y < 0 || y >= rows || z < 0 || z >= slices) {
      if (in.mode == 0)
        c.fault(l, fmt::format("surface access at ({} bytes, row {}, slice {}) is outside the "
                               "{} x {} x {} surface (.trap)",
                               x, y, z, rowBytes, rows, slices));
      if (in.mode == 2) return;  // .zero: loads read 0 (vals are 0), stores do nothing
      x = std::min<int64_t>(std::max<int64_t>(x, 0), rowBytes - size);
      y = std::min<int64_t>(std::max<int64_t>(y, 0), rows - 1);
      z = std::min<int64_t>(std::max<int64_t>(z, 0), slices - 1);
    }
    const uint64_t addr = d.base + uint64_t(z) * d.slicePitch + uint64_t(y) * d.pitch + uint64_t(x);
    uint8_t* p = memoryPointer(c, MemSpace::Global, addr, size, l, store, c.rec);
    for (unsigned k = 0; k < n; ++k) {
      if (store) {
        const uint64_t v = slot(c, regs[k])[l];
        std::memcpy(p + k * eb, &v, eb);  // the low bytes (little-endian host)
      } else {
        std::memcpy(&vals[k][l], p + k * eb, eb);
      }
    }
  });
  if (store) return;
  forEachLane(mask, [&](int l) {
    for (unsigned k = 0; k < n; ++k) slot(c, regs[k])[l] = vals[k][l];
  });
}

}  // namespace

Handler surfaceAccess() { return &surfaceHandler; }

Handler texFetch(bool intCoords) { return intCoords ? &texHandler<true> : &texHandler<false>; }

}  // namespace handlers
}  // namespace gpusc::func
