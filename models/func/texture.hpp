// Texture objects: what a texture fetch (PTX `tex`) reads and how it filters.
//
// A texture object's handle (CUDA's cudaTextureObject_t, the 64-bit operand of `tex`) is the
// device address of a TextureDescriptor in global memory. Whoever creates the object (the CUDA
// runtime's cudaCreateTextureObject, or a testbench through writeTexture) writes the descriptor
// there; the fetch reads it and checks its magic number, so a handle that names no texture
// object is a fault naming the address, not a wild read. Hardware keeps texture headers in
// memory too (a table the driver fills), read through a header cache.
//
// The texels are ordinary global memory: row y of a 2D texture starts at base + y x pitch, and a
// CUDA array is an allocation laid out that way (row-major; GPUs lay arrays out in blocks for 2D
// locality, which changes which sectors a fetch touches, not what it returns).
//
// The fetch follows the CUDA C++ Programming Guide's appendix "Texture Fetching": addressing
// modes on texel indices, point sampling at floor(x), linear filtering between the texels at
// floor(x - 0.5) and the next with weights in 9-bit fixed point (8 fractional bits), normalized
// coordinates scaled by the size, and integer texels read as integers or as floats in [0, 1] /
// [-1, 1].
#pragma once

#include <cstdint>
#include <cstring>

namespace gpusc::func {

constexpr uint32_t kTextureMagic = 0x58455447u;  // "GTEX"
// A surface object (cudaSurfaceObject_t) has the same descriptor with its own magic number:
// `suld.b` / `sust.b` read and write the texels as raw bytes (filtering and read modes unused).
constexpr uint32_t kSurfaceMagic = 0x46525347u;  // "GSRF"

// Values as CUDA's enumerations number them (cudaTextureAddressMode, cudaChannelFormatKind).
enum class TexAddress : uint8_t { Wrap = 0, Clamp = 1, Mirror = 2, Border = 3 };
enum class TexKind : uint8_t { Signed = 0, Unsigned = 1, Float = 2 };

struct TextureDescriptor {
  uint32_t magic = kTextureMagic;
  uint8_t dims = 1;          // 1, 2 or 3 (of a layer, when layered)
  uint8_t channels = 1;      // 1, 2 or 4 (a texel is channels x channelBits)
  uint8_t channelBits = 32;  // 8, 16 or 32 (16-bit floats are IEEE half)
  uint8_t kind = uint8_t(TexKind::Float);
  uint8_t address[3] = {uint8_t(TexAddress::Clamp), uint8_t(TexAddress::Clamp),
                        uint8_t(TexAddress::Clamp)};  // x, y, z
  uint8_t linearFilter = 0;                           // cudaFilterModeLinear
  uint8_t normalizedRead = 0;    // cudaReadModeNormalizedFloat (8- and 16-bit integers only)
  uint8_t normalizedCoords = 0;  // coordinates in [0, 1) across the texture
  uint8_t linearMemory = 0;      // cudaResourceTypeLinear: tex1Dfetch (out of range reads 0)
  uint8_t layered = 0;           // `depth` layers of 1D or 2D textures (tex.a1d / tex.a2d)
  uint64_t base = 0;             // device address of texel (0, 0, 0)
  uint64_t width = 0;            // texels
  uint64_t height = 1;           // rows (1 for 1D)
  uint64_t depth = 1;            // slices (3D) or layers; 1 for other 1D and 2D textures
  uint64_t pitch = 0;            // bytes from one row to the next
  uint64_t slicePitch = 0;       // bytes from one slice (or layer) to the next
  float border[4] = {0, 0, 0, 0};
};
static_assert(sizeof(TextureDescriptor) == 80, "the descriptor's layout is part of the wire");

inline uint32_t texelBytes(const TextureDescriptor& d) { return d.channels * d.channelBits / 8u; }

// Why `d` cannot be fetched from (an empty string when it can): sizes, formats and the
// combinations CUDA refuses (linear filtering or normalized reads of what reads as integers).
// With `surface`, whether it is a surface object's descriptor instead.
const char* textureDescriptorProblem(const TextureDescriptor& d, bool surface = false);

// The four values a fetch returns: floats, or 32-bit integers (bits in f[] as uint32).
struct TexelValue {
  union {
    float f[4];
    uint32_t u[4];
  };
};

// True when `d` returns integers (an integer format read as elements).
inline bool texReadsIntegers(const TextureDescriptor& d) {
  return d.kind != uint8_t(TexKind::Float) && !d.normalizedRead;
}

// The texel indices and weights a fetch at (x, y, z) uses, after addressing: up to eight
// texels (two in 1D, four in 2D, one with point sampling); an x index of -1 means the border
// (out of range on some axis).
struct TexFootprint {
  int n = 1;  // texels used
  int64_t ix[8] = {}, iy[8] = {}, iz[8] = {};
  float w[8] = {1, 0, 0, 0, 0, 0, 0, 0};
};
// Float coordinates, as tex.1d/2d/3d with .f32 coordinates pass them.
TexFootprint textureFootprint(const TextureDescriptor& d, float x, float y, float z);
// Integer coordinates (tex with .s32 coordinates, tex1Dfetch): point sampling, no scaling.
TexFootprint textureFootprintInt(const TextureDescriptor& d, int32_t x, int32_t y, int32_t z);

// The bytes a descriptor's texels span from `base` (UINT64_MAX when that does not fit 64 bits,
// which no allocation holds).
inline uint64_t textureSpan(const TextureDescriptor& d) {
  uint64_t slices = 0, rows = 0, row = 0, span = 0;
  if (d.depth == 0 || d.height == 0 || __builtin_mul_overflow(d.depth - 1, d.slicePitch, &slices) ||
      __builtin_mul_overflow(d.height - 1, d.pitch, &rows) ||
      __builtin_mul_overflow(d.width, uint64_t(texelBytes(d)), &row) ||
      __builtin_add_overflow(slices, rows, &span) || __builtin_add_overflow(span, row, &span))
    return ~uint64_t(0);
  return span;
}

// Converts one texel's bytes to the four values a fetch returns.
TexelValue decodeTexel(const TextureDescriptor& d, const uint8_t* texel);

// The fetch's result from its footprint; `texel(i)` returns texel i's bytes (never called for a
// border index).
template <class Texel>
TexelValue filterTexels(const TextureDescriptor& d, const TexFootprint& fp, Texel&& texel) {
  TexelValue out{};
  if (texReadsIntegers(d)) {  // point sampling only
    if (fp.ix[0] < 0) {  // an integer border colour is passed as its bits (CUDA's reinterpret_cast)
      std::memcpy(out.u, d.border, sizeof out.u);
      return out;
    }
    return decodeTexel(d, texel(0));
  }
  for (int c = 0; c < 4; ++c) out.f[c] = 0;
  for (int i = 0; i < fp.n; ++i) {
    TexelValue t;
    if (fp.ix[i] < 0) {
      for (int c = 0; c < 4; ++c) t.f[c] = d.border[c];
    } else {
      t = decodeTexel(d, texel(i));
    }
    for (int c = 0; c < 4; ++c) out.f[c] += fp.w[i] * t.f[c];
  }
  return out;
}

}  // namespace gpusc::func
