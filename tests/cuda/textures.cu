// Texture objects as CUDA programs use them: tex1Dfetch on linear memory (an index past the end
// reads 0), tex2D on pitched memory from cudaMallocPitch (point sampling, clamped coordinates
// outside the texture), tex2D on a 2D CUDA array with linear filtering and normalized coordinates
// in wrap and in border mode, tex2D<float4> of a one-channel array (the missing channels read 0,
// 0, 1) and of a uchar4 array read as normalized floats, and tex1D<int> / tex2D<int> on int
// arrays. The expected values come from the CUDA C++ Programming Guide's appendix "Texture
// Fetching", computed here on the host. Also the refusals (linear filtering of integers, a
// destroyed texture object, a copy past the end of an array), the descriptors read back, an
// array's contents copied back, and what cudaMemGetInfo counts. Surface objects: surf2Dread with
// the zero and clamp boundary modes and surf2Dwrite on an array made for them, then a texture
// over what they wrote. Volumes: a 3D array filled by cudaMemcpy3D, fetched with trilinear
// filtering, written through a surface, and copied back through cudaMalloc3D memory
// (cudaMemset3D included). Layers: a layered 2D array fetched with tex2DLayered and written with
// surf2DLayeredwrite. The largest arrays the device reports, and arrays past them refused.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "check.hpp"

// ---- kernels: one fetch per thread ----

__global__ void fetch1D(cudaTextureObject_t t, const int* index, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, index[i]);
}

__global__ void sample2D(cudaTextureObject_t t, const float2* at, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

__global__ void sample2D4(cudaTextureObject_t t, const float2* at, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}

__global__ void sample1DInt(cudaTextureObject_t t, const float2* at, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<int>(t, at[i].x);
}

__global__ void sample2DInt(cudaTextureObject_t t, const float2* at, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<int>(t, at[i].x, at[i].y);
}

// Thread i fetches a volume at at[i].
__global__ void sample3D(cudaTextureObject_t t, const float4* at, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}

// Thread i fetches layer at[i].z of a layered 2D texture at (at[i].x, at[i].y).
__global__ void sampleLayered(cudaTextureObject_t t, const float4* at, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, at[i].x, at[i].y, int(at[i].z));
}

// Block l, thread (x, y) of layers of w x h floats: v -> v - l (layered surface read and write).
__global__ void surfaceLayers(cudaSurfaceObject_t s, int w, int h) {
  const int x = threadIdx.x % w, y = threadIdx.x / w, l = blockIdx.x;
  if (y < h) surf2DLayeredwrite(surf2DLayeredread<float>(s, x * 4, y, l) - l, s, x * 4, y, l);
}

// Block z, thread (x, y) of a w x h x d volume of floats: v -> v + 1000 z (surface read and write).
__global__ void surfaceVolume(cudaSurfaceObject_t s, int w, int h) {
  const int x = threadIdx.x % w, y = threadIdx.x / w, z = blockIdx.x;
  if (y < h) surf3Dwrite(surf3Dread<float>(s, x * 4, y, z) + 1000.0f * z, s, x * 4, y, z);
}

// Block y, thread x of a w x h surface of floats: the right neighbour read with
// cudaBoundaryModeZero and with cudaBoundaryModeClamp; then (after the block's reads) v -> 2v + 1.
__global__ void surfaceStep(cudaSurfaceObject_t s, float2* out, int w, int h) {
  const int x = threadIdx.x, y = blockIdx.x;
  const bool in = x < w && y < h;
  if (in) {
    const float zero = surf2Dread<float>(s, (x + 1) * 4, y, cudaBoundaryModeZero);
    const float clamp = surf2Dread<float>(s, (x + 1) * 4, y, cudaBoundaryModeClamp);
    out[y * w + x] = make_float2(zero, clamp);
  }
  __syncthreads();
  if (in) surf2Dwrite(2 * surf2Dread<float>(s, x * 4, y) + 1, s, x * 4, y);
}

// Runs `kernel` with one thread per input on texture `t`; returns the fetched values.
template <class Out, class In, class Kernel>
std::vector<Out> fetch(Kernel kernel, cudaTextureObject_t t, const std::vector<In>& in) {
  const int n = int(in.size());
  In* dIn;
  Out* dOut;
  CHECK(cudaMalloc(&dIn, n * sizeof(In)));
  CHECK(cudaMalloc(&dOut, n * sizeof(Out)));
  CHECK(cudaMemcpy(dIn, in.data(), n * sizeof(In), cudaMemcpyHostToDevice));
  kernel<<<(n + 63) / 64, 64>>>(t, dIn, dOut, n);
  CHECK(cudaGetLastError());
  std::vector<Out> out(n);
  CHECK(cudaMemcpy(out.data(), dOut, n * sizeof(Out), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(dIn));
  CHECK(cudaFree(dOut));
  return out;
}

// ---- the reference: the Programming Guide's texture fetching, in double precision ----

// Texel index i of an axis of n texels under `mode`; -1 for the border.
long addressed(long i, long n, cudaTextureAddressMode mode) {
  switch (mode) {
    case cudaAddressModeWrap:
      return ((i % n) + n) % n;
    case cudaAddressModeBorder:
      return i < 0 || i >= n ? -1 : i;
    default:  // clamp
      return std::min(std::max(i, 0L), n - 1);
  }
}

// A one-channel 2D texture of floats as the fetch sees it.
struct Reference {
  long w = 0, h = 0;
  std::vector<float> texels;  // row-major
  cudaTextureAddressMode mode[2] = {cudaAddressModeClamp, cudaAddressModeClamp};
  bool linear = false, normalized = false;
  float border = 0;

  double texel(long i, long j) const {
    cudaTextureAddressMode mx = mode[0], my = mode[1];
    // Unnormalized coordinates: wrap (and mirror) act as clamp.
    if (!normalized) {
      if (mx == cudaAddressModeWrap) mx = cudaAddressModeClamp;
      if (my == cudaAddressModeWrap) my = cudaAddressModeClamp;
    }
    i = addressed(i, w, mx);
    j = addressed(j, h, my);
    return i < 0 || j < 0 ? border : texels[j * w + i];
  }
  // The coordinate on an axis of n texels, in texels (wrapped first in wrap mode).
  double scaled(float c, long n, cudaTextureAddressMode m) const {
    double x = c;
    if (!normalized) return x;
    if (m == cudaAddressModeWrap) x -= std::floor(x);
    return x * double(n);
  }
  // alpha in 9-bit fixed point with 8 fractional bits.
  static double fixed(double frac) { return std::round(frac * 256.0) / 256.0; }

  double at(float u, float v) const {
    const double x = scaled(u, w, mode[0]), y = scaled(v, h, mode[1]);
    if (!linear) return texel(long(std::floor(x)), long(std::floor(y)));
    const double xb = x - 0.5, yb = y - 0.5;
    const long i = long(std::floor(xb)), j = long(std::floor(yb));
    const double a = fixed(xb - std::floor(xb)), b = fixed(yb - std::floor(yb));
    return (1 - a) * (1 - b) * texel(i, j) + a * (1 - b) * texel(i + 1, j) +
           (1 - a) * b * texel(i, j + 1) + a * b * texel(i + 1, j + 1);
  }
  // True when the 8-bit fraction of the filter weights at (u, v) is far from a rounding tie, so
  // that the float arithmetic of a fetch cannot round it the other way.
  bool clearOfTies(float u, float v) const {
    for (double x : {scaled(u, w, mode[0]) - 0.5, scaled(v, h, mode[1]) - 0.5}) {
      const double q = (x - std::floor(x)) * 256.0;
      if (std::fabs(q - std::floor(q) - 0.5) < 0.05) return false;
    }
    return true;
  }
};

// ---- checks ----

int failures = 0;

bool close(double got, double want) {
  return std::fabs(got - want) <= 1e-5 * std::max(1.0, std::fabs(want));
}

// One check's verdict; `wrong` values of `total` differed (the first one described in `first`).
void report(const char* what, int wrong, int total, const char* first) {
  if (wrong == 0) {
    std::printf("  PASS %s (%d values)\n", what, total);
  } else {
    std::printf("  FAIL %s: %d of %d values differ; first: %s\n", what, wrong, total, first);
    ++failures;
  }
}

void expect(const char* what, bool ok) {
  std::printf("  %s %s\n", ok ? "PASS" : "FAIL", what);
  if (!ok) ++failures;
}

// The call must fail with `code` (and the error is then cleared).
void refused(const char* what, cudaError_t got, cudaError_t code) {
  cudaGetLastError();
  char line[256];
  std::snprintf(line, sizeof line, "%s: %s (expected %s)", what, cudaGetErrorName(got),
                cudaGetErrorName(code));
  expect(line, got == code);
}

void compare(const char* what, const Reference& ref, const std::vector<float2>& at,
             const std::vector<float>& got) {
  int wrong = 0;
  char first[200] = "";
  for (size_t k = 0; k < at.size(); ++k) {
    const double want = ref.at(at[k].x, at[k].y);
    if (!close(got[k], want) && wrong++ == 0)
      std::snprintf(first, sizeof first, "at (%g, %g) got %.9g, want %.9g", at[k].x, at[k].y,
                    got[k], want);
  }
  report(what, wrong, int(at.size()), first);
}

cudaTextureDesc textureDesc(cudaTextureAddressMode mode, cudaTextureFilterMode filter,
                            cudaTextureReadMode read, bool normalized) {
  cudaTextureDesc t{};
  t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = mode;
  t.filterMode = filter;
  t.readMode = read;
  t.normalizedCoords = normalized;
  return t;
}

cudaResourceDesc arrayResource(cudaArray_t a) {
  cudaResourceDesc r{};
  r.resType = cudaResourceTypeArray;
  r.res.array.array = a;
  return r;
}

// Coordinates from a fixed pseudo-random sequence in [lo, hi) on both axes (normalized or not),
// each clear of the fixed-point rounding ties of `ref`.
std::vector<float2> coordinates(const Reference& ref, int n, float lo, float hi) {
  std::vector<float2> at;
  unsigned s = 12345;
  const auto next = [&] {
    s = s * 1103515245u + 12345u;
    return lo + (hi - lo) * float((s >> 8) & 0xffff) / 65536.0f;
  };
  while (int(at.size()) < n) {
    const float u = next(), v = next();
    if (ref.clearOfTies(u, v)) at.push_back({u, v});
  }
  return at;
}

int main() {
  size_t free0 = 0, free1 = 0, total = 0;

  // 1. tex1Dfetch<float> on linear memory: 100 floats; index 105 is past the end and reads 0.
  constexpr int kLinear = 100;
  std::vector<float> linear(kLinear);
  for (int i = 0; i < kLinear; ++i) linear[i] = 0.25f * i - 3.0f;
  float* dLinear;
  CHECK(cudaMalloc(&dLinear, kLinear * sizeof(float)));
  CHECK(cudaMemcpy(dLinear, linear.data(), kLinear * sizeof(float), cudaMemcpyHostToDevice));
  cudaResourceDesc linearRes{};
  linearRes.resType = cudaResourceTypeLinear;
  linearRes.res.linear.devPtr = dLinear;
  linearRes.res.linear.desc = cudaCreateChannelDesc<float>();
  linearRes.res.linear.sizeInBytes = kLinear * sizeof(float);
  const cudaTextureDesc linearTex =
      textureDesc(cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, false);
  cudaTextureObject_t tLinear;
  CHECK(cudaMemGetInfo(&free0, &total));
  CHECK(cudaCreateTextureObject(&tLinear, &linearRes, &linearTex, nullptr));
  CHECK(cudaMemGetInfo(&free1, &total));
  expect("a texture object is not a program allocation (cudaMemGetInfo unchanged)", free0 == free1);
  std::vector<int> index;
  for (int i = 0; i < 63; ++i) index.push_back(i * 37 % kLinear);
  index.push_back(kLinear + 5);
  {
    const std::vector<float> got = fetch<float>(fetch1D, tLinear, index);
    int wrong = 0;
    char first[200] = "";
    for (size_t k = 0; k < index.size(); ++k) {
      const float want = index[k] < kLinear ? linear[index[k]] : 0.0f;
      if (got[k] != want && wrong++ == 0)
        std::snprintf(first, sizeof first, "index %d got %g, want %g", index[k], got[k], want);
    }
    report("tex1Dfetch<float> on linear memory, one index past the end", wrong, int(index.size()),
           first);
  }

  // 2. tex2D<float> on pitched memory: point sampling, clamp, coordinates in texels, some outside.
  Reference pitched;
  pitched.w = 20, pitched.h = 6;
  pitched.texels.resize(pitched.w * pitched.h);
  for (long j = 0; j < pitched.h; ++j)
    for (long i = 0; i < pitched.w; ++i) pitched.texels[j * pitched.w + i] = 100.0f * j + i + 0.5f;
  float* dPitched;
  size_t pitch = 0;
  CHECK(cudaMallocPitch((void**)&dPitched, &pitch, pitched.w * sizeof(float), pitched.h));
  CHECK(cudaMemcpy2D(dPitched, pitch, pitched.texels.data(), pitched.w * sizeof(float),
                     pitched.w * sizeof(float), pitched.h, cudaMemcpyHostToDevice));
  cudaResourceDesc pitchedRes{};
  pitchedRes.resType = cudaResourceTypePitch2D;
  pitchedRes.res.pitch2D.devPtr = dPitched;
  pitchedRes.res.pitch2D.desc = cudaCreateChannelDesc<float>();
  pitchedRes.res.pitch2D.width = pitched.w;
  pitchedRes.res.pitch2D.height = pitched.h;
  pitchedRes.res.pitch2D.pitchInBytes = pitch;
  const cudaTextureDesc pointClamp =
      textureDesc(cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, false);
  cudaTextureObject_t tPitched;
  CHECK(cudaCreateTextureObject(&tPitched, &pitchedRes, &pointClamp, nullptr));
  {
    std::vector<float2> at;
    for (int k = 0; k < 24; ++k)
      at.push_back({(k * 7 % 20) + 0.1f * (k % 10), float(k % 6) + 0.5f});
    const float2 outside[] = {{-3.0f, -2.0f}, {24.0f, 2.5f},   {5.5f, 16.0f},
                              {-0.5f, 3.2f},  {19.99f, 5.99f}, {100.0f, -100.0f}};
    for (const float2& o : outside) at.push_back(o);
    compare("tex2D<float> on pitched memory, point sampling, clamped outside", pitched, at,
            fetch<float>(sample2D, tPitched, at));
  }
  {
    cudaResourceDesc back{};
    CHECK(cudaGetTextureObjectResourceDesc(&back, tPitched));
    expect("cudaGetTextureObjectResourceDesc gives the pitch-2D resource back",
           back.resType == cudaResourceTypePitch2D && back.res.pitch2D.devPtr == dPitched &&
               back.res.pitch2D.width == size_t(pitched.w) &&
               back.res.pitch2D.height == size_t(pitched.h) &&
               back.res.pitch2D.pitchInBytes == pitch && back.res.pitch2D.desc.x == 32 &&
               back.res.pitch2D.desc.f == cudaChannelFormatKindFloat);
    cudaTextureDesc backTex{};
    CHECK(cudaGetTextureObjectTextureDesc(&backTex, tPitched));
    expect("cudaGetTextureObjectTextureDesc gives the texture descriptor back",
           std::memcmp(&backTex, &pointClamp, sizeof backTex) == 0);
  }

  // 3. A 16 x 8 CUDA array of floats, filled from rows with a padded pitch.
  Reference grid;
  grid.w = 16, grid.h = 8;
  grid.texels.resize(grid.w * grid.h);
  for (long j = 0; j < grid.h; ++j)
    for (long i = 0; i < grid.w; ++i)
      grid.texels[j * grid.w + i] = float((i * 7 + j * 13) % 17) * 0.75f - 4.0f;
  const cudaChannelFormatDesc floatDesc = cudaCreateChannelDesc<float>();
  cudaArray_t floats;
  CHECK(cudaMemGetInfo(&free0, &total));
  CHECK(cudaMallocArray(&floats, &floatDesc, grid.w, grid.h));
  CHECK(cudaMemGetInfo(&free1, &total));
  expect("cudaMemGetInfo counts the array's bytes",
         free0 - free1 == size_t(grid.w * grid.h * sizeof(float)));
  const size_t rowBytes = grid.w * sizeof(float), hostPitch = rowBytes + 12;
  std::vector<unsigned char> padded(hostPitch * grid.h, 0xee);
  for (long j = 0; j < grid.h; ++j)
    std::memcpy(&padded[j * hostPitch], &grid.texels[j * grid.w], rowBytes);
  CHECK(cudaMemcpy2DToArray(floats, 0, 0, padded.data(), hostPitch, rowBytes, grid.h,
                            cudaMemcpyHostToDevice));
  {
    std::vector<float> back((grid.w + 1) * grid.h, -1.0f);
    const size_t backPitch = rowBytes + 4;  // every row one float apart from the next
    CHECK(cudaMemcpy2DFromArray(back.data(), backPitch, floats, 0, 0, rowBytes, grid.h,
                                cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (long j = 0; j < grid.h; ++j)
      for (long i = 0; i < grid.w; ++i)
        wrong += back[j * (grid.w + 1) + i] != grid.texels[j * grid.w + i];
    report("cudaMemcpy2DFromArray gives the array's contents back", wrong, int(grid.w * grid.h),
           "a texel differs");
    // A part of it: 3 floats of rows 5 and 6 from column 4.
    float part[6];
    CHECK(cudaMemcpy2DFromArray(part, 3 * sizeof(float), floats, 4 * sizeof(float), 5,
                                3 * sizeof(float), 2, cudaMemcpyDeviceToHost));
    bool same = true;
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c) same &= part[r * 3 + c] == grid.texels[(5 + r) * grid.w + 4 + c];
    expect("cudaMemcpy2DFromArray of a region at an offset", same);
  }
  {
    cudaChannelFormatDesc desc{};
    cudaExtent extent{};
    unsigned flags = 99;
    CHECK(cudaArrayGetInfo(&desc, &extent, &flags, floats));
    cudaChannelFormatDesc desc2{};
    CHECK(cudaGetChannelDesc(&desc2, floats));
    expect("cudaArrayGetInfo and cudaGetChannelDesc describe the array",
           desc.x == 32 && desc.y == 0 && desc.f == cudaChannelFormatKindFloat &&
               extent.width == size_t(grid.w) && extent.height == size_t(grid.h) &&
               extent.depth == 0 && flags == 0 && std::memcmp(&desc, &desc2, sizeof desc) == 0);
  }
  const cudaResourceDesc floatsRes = arrayResource(floats);

  // 3a. Linear filtering, normalized coordinates, wrap.
  {
    Reference ref = grid;
    ref.mode[0] = ref.mode[1] = cudaAddressModeWrap;
    ref.linear = ref.normalized = true;
    const cudaTextureDesc t =
        textureDesc(cudaAddressModeWrap, cudaFilterModeLinear, cudaReadModeElementType, true);
    cudaTextureObject_t obj;
    CHECK(cudaCreateTextureObject(&obj, &floatsRes, &t, nullptr));
    const std::vector<float2> at = coordinates(ref, 64, -0.4f, 1.6f);
    compare("tex2D<float> on an array, linear filtering, normalized coordinates, wrap", ref, at,
            fetch<float>(sample2D, obj, at));
    CHECK(cudaDestroyTextureObject(obj));
  }
  // 3b. Linear filtering, normalized coordinates, border (colour -2.5).
  {
    Reference ref = grid;
    ref.mode[0] = ref.mode[1] = cudaAddressModeBorder;
    ref.linear = ref.normalized = true;
    ref.border = -2.5f;
    cudaTextureDesc t =
        textureDesc(cudaAddressModeBorder, cudaFilterModeLinear, cudaReadModeElementType, true);
    t.borderColor[0] = t.borderColor[1] = t.borderColor[2] = t.borderColor[3] = -2.5f;
    cudaTextureObject_t obj;
    CHECK(cudaCreateTextureObject(&obj, &floatsRes, &t, nullptr));
    std::vector<float2> at = coordinates(ref, 60, -0.25f, 1.25f);
    at.push_back({1.5f, 0.5f});  // wholly outside: the border colour
    at.push_back({0.5f, -0.75f});
    compare("tex2D<float> on an array, linear filtering, normalized coordinates, border", ref, at,
            fetch<float>(sample2D, obj, at));
    CHECK(cudaDestroyTextureObject(obj));
  }
  // 3c. tex2D<float4> of the one-channel array: (texel, 0, 0, 1).
  {
    cudaTextureObject_t obj;
    CHECK(cudaCreateTextureObject(&obj, &floatsRes, &pointClamp, nullptr));
    std::vector<float2> at;
    for (int k = 0; k < 32; ++k) at.push_back({float(k % 16) + 0.5f, float(k / 4 % 8) + 0.25f});
    at.push_back({-1.0f, 9.0f});
    const std::vector<float4> got = fetch<float4>(sample2D4, obj, at);
    int wrong = 0;
    char first[200] = "";
    for (size_t k = 0; k < at.size(); ++k) {
      const double want = grid.at(at[k].x, at[k].y);
      if (!(close(got[k].x, want) && got[k].y == 0 && got[k].z == 0 && got[k].w == 1) &&
          wrong++ == 0)
        std::snprintf(first, sizeof first, "at (%g, %g) got (%g, %g, %g, %g), want (%g, 0, 0, 1)",
                      at[k].x, at[k].y, got[k].x, got[k].y, got[k].z, got[k].w, want);
    }
    report("tex2D<float4> of a one-channel array: missing channels read 0, 0, 1", wrong,
           int(at.size()), first);
    CHECK(cudaDestroyTextureObject(obj));
    // Destroyed: a second destruction is refused.
    refused("cudaDestroyTextureObject of a destroyed texture object", cudaDestroyTextureObject(obj),
            cudaErrorInvalidValue);
  }
  // A copy past the end of the array: a row too long, and a row too many.
  refused("cudaMemcpy2DToArray past the end of a row",
          cudaMemcpy2DToArray(floats, 8 * sizeof(float), 0, padded.data(), hostPitch, rowBytes, 1,
                              cudaMemcpyHostToDevice),
          cudaErrorInvalidValue);
  refused("cudaMemcpy2DToArray past the last row",
          cudaMemcpy2DToArray(floats, 0, 5, padded.data(), hostPitch, rowBytes, 4,
                              cudaMemcpyHostToDevice),
          cudaErrorInvalidValue);

  // 4. A uchar4 array read as normalized floats: v / 255.
  {
    constexpr int kW = 8, kH = 4;
    std::vector<uchar4> texels(kW * kH);
    for (int k = 0; k < kW * kH; ++k)
      texels[k] = make_uchar4(k * 8, 255 - k * 5, (k * 37) & 0xff, k % 2 ? 255 : 0);
    const cudaChannelFormatDesc desc = cudaCreateChannelDesc<uchar4>();
    cudaArray_t bytes;
    CHECK(cudaMallocArray(&bytes, &desc, kW, kH));
    CHECK(cudaMemcpy2DToArray(bytes, 0, 0, texels.data(), kW * sizeof(uchar4), kW * sizeof(uchar4),
                              kH, cudaMemcpyHostToDevice));
    const cudaResourceDesc res = arrayResource(bytes);
    const cudaTextureDesc t =
        textureDesc(cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeNormalizedFloat, false);
    cudaTextureObject_t obj;
    CHECK(cudaCreateTextureObject(&obj, &res, &t, nullptr));
    std::vector<float2> at;
    for (int k = 0; k < 32; ++k) at.push_back({float(k % kW) + 0.5f, float(k / kW) + 0.75f});
    at.push_back({-4.0f, 10.0f});  // clamped to (0, 3)
    const std::vector<float4> got = fetch<float4>(sample2D4, obj, at);
    int wrong = 0;
    char first[200] = "";
    for (size_t k = 0; k < at.size(); ++k) {
      const long i = std::min(std::max(long(std::floor(at[k].x)), 0L), long(kW - 1));
      const long j = std::min(std::max(long(std::floor(at[k].y)), 0L), long(kH - 1));
      const uchar4 v = texels[j * kW + i];
      const float want[4] = {v.x / 255.0f, v.y / 255.0f, v.z / 255.0f, v.w / 255.0f};
      const float have[4] = {got[k].x, got[k].y, got[k].z, got[k].w};
      bool ok = true;
      for (int c = 0; c < 4; ++c) ok &= close(have[c], want[c]);
      if (!ok && wrong++ == 0)
        std::snprintf(first, sizeof first,
                      "at (%g, %g) got (%g, %g, %g, %g), want (%g, %g, %g, %g)", at[k].x, at[k].y,
                      have[0], have[1], have[2], have[3], want[0], want[1], want[2], want[3]);
    }
    report("tex2D<float4> of a uchar4 array, cudaReadModeNormalizedFloat", wrong, int(at.size()),
           first);
    CHECK(cudaDestroyTextureObject(obj));
    CHECK(cudaFreeArray(bytes));
  }

  // 5. int arrays, point sampling: tex1D<int> on a 1D array, tex2D<int> on a 2D one.
  {
    constexpr int kW = 32;
    std::vector<int> values(kW);
    for (int i = 0; i < kW; ++i) values[i] = i * i - 50;
    const cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
    cudaArray_t ints;
    CHECK(cudaMallocArray(&ints, &desc, kW));  // height 0: a 1D array
    CHECK(cudaMemcpy2DToArray(ints, 0, 0, values.data(), kW * sizeof(int), kW * sizeof(int), 1,
                              cudaMemcpyHostToDevice));
    const cudaResourceDesc res = arrayResource(ints);
    cudaTextureObject_t obj;
    CHECK(cudaCreateTextureObject(&obj, &res, &pointClamp, nullptr));
    std::vector<float2> at;
    for (int k = 0; k < 30; ++k) at.push_back({float(k * 5 % kW) + 0.125f * (k % 8), 0});
    at.push_back({-5.0f, 0});
    at.push_back({40.2f, 0});
    const std::vector<int> got = fetch<int>(sample1DInt, obj, at);
    int wrong = 0;
    char first[200] = "";
    for (size_t k = 0; k < at.size(); ++k) {
      const int want = values[std::min(std::max(long(std::floor(at[k].x)), 0L), long(kW - 1))];
      if (got[k] != want && wrong++ == 0)
        std::snprintf(first, sizeof first, "at %g got %d, want %d", at[k].x, got[k], want);
    }
    report("tex1D<int> on a 1D int array, point sampling, clamp", wrong, int(at.size()), first);
    // Linear filtering of a texture that reads integers: refused, as CUDA refuses it.
    const cudaTextureDesc linearInts =
        textureDesc(cudaAddressModeClamp, cudaFilterModeLinear, cudaReadModeElementType, false);
    cudaTextureObject_t never;
    refused("linear filtering of an int texture",
            cudaCreateTextureObject(&never, &res, &linearInts, nullptr), cudaErrorInvalidValue);
    CHECK(cudaDestroyTextureObject(obj));
    CHECK(cudaFreeArray(ints));
  }
  {
    constexpr int kW = 8, kH = 4;
    std::vector<int> values(kW * kH);
    for (int k = 0; k < kW * kH; ++k) values[k] = (k / kW) * 1000 + (k % kW) - 3000;
    const cudaChannelFormatDesc desc = cudaCreateChannelDesc<int>();
    cudaArray_t ints;
    CHECK(cudaMallocArray(&ints, &desc, kW, kH));
    CHECK(cudaMemcpy2DToArray(ints, 0, 0, values.data(), kW * sizeof(int), kW * sizeof(int), kH,
                              cudaMemcpyHostToDevice));
    const cudaResourceDesc res = arrayResource(ints);
    cudaTextureObject_t obj;
    CHECK(cudaCreateTextureObject(&obj, &res, &pointClamp, nullptr));
    std::vector<float2> at;
    for (int k = 0; k < 32; ++k) at.push_back({float(k % kW) + 0.9f, float(k * 3 % kH) + 0.1f});
    at.push_back({-1.0f, -1.0f});
    at.push_back({8.5f, 4.0f});
    const std::vector<int> got = fetch<int>(sample2DInt, obj, at);
    int wrong = 0;
    char first[200] = "";
    for (size_t k = 0; k < at.size(); ++k) {
      const long i = std::min(std::max(long(std::floor(at[k].x)), 0L), long(kW - 1));
      const long j = std::min(std::max(long(std::floor(at[k].y)), 0L), long(kH - 1));
      const int want = values[j * kW + i];
      if (got[k] != want && wrong++ == 0)
        std::snprintf(first, sizeof first, "at (%g, %g) got %d, want %d", at[k].x, at[k].y, got[k],
                      want);
    }
    report("tex2D<int> on a 2D int array, point sampling, clamp", wrong, int(at.size()), first);
    CHECK(cudaDestroyTextureObject(obj));
    CHECK(cudaFreeArray(ints));
  }

  // Formats and flags gpusc refuses.
  {
    cudaArray_t never;
    const cudaChannelFormatDesc three =
        cudaCreateChannelDesc(32, 32, 32, 0, cudaChannelFormatKindFloat);
    refused("an array of 3 channels", cudaMallocArray(&never, &three, 4, 4), cudaErrorInvalidValue);
  }

  // Surfaces: a 2D float array made for surface loads and stores; a kernel reads each element's
  // right neighbour with cudaBoundaryModeZero and cudaBoundaryModeClamp, then writes 2v + 1;
  // a texture over the same array then reads the new values.
  {
    constexpr int kW = 7, kH = 3;
    std::vector<float> values(kW * kH);
    for (int k = 0; k < kW * kH; ++k) values[k] = float((k % kW) + 10 * (k / kW));
    cudaArray_t a;
    CHECK(cudaMallocArray(&a, &floatDesc, kW, kH, cudaArraySurfaceLoadStore));
    CHECK(cudaMemcpy2DToArray(a, 0, 0, values.data(), kW * sizeof(float), kW * sizeof(float), kH,
                              cudaMemcpyHostToDevice));
    const cudaResourceDesc res = arrayResource(a);
    cudaSurfaceObject_t surf;
    CHECK(cudaCreateSurfaceObject(&surf, &res));
    float2* dNeighbours;
    CHECK(cudaMalloc(&dNeighbours, kW * kH * sizeof(float2)));
    surfaceStep<<<kH, 32>>>(surf, dNeighbours, kW, kH);
    CHECK(cudaGetLastError());
    std::vector<float2> neighbours(kW * kH);
    CHECK(cudaMemcpy(neighbours.data(), dNeighbours, kW * kH * sizeof(float2),
                     cudaMemcpyDeviceToHost));
    std::vector<float> after(kW * kH);
    CHECK(cudaMemcpy2DFromArray(after.data(), kW * sizeof(float), a, 0, 0, kW * sizeof(float), kH,
                                cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int k = 0; k < kW * kH; ++k) {
      const int x = k % kW, y = k / kW;
      const float right = x + 1 < kW ? values[k + 1] : 0.0f;
      const float clamped = values[y * kW + std::min(x + 1, kW - 1)];
      if (neighbours[k].x != right || neighbours[k].y != clamped || after[k] != 2 * values[k] + 1)
        ++wrong;
    }
    report("surf2Dread (zero and clamp boundaries) and surf2Dwrite on a 2D array", wrong, kW * kH,
           wrong ? "see the kernel surfaceStep" : "");
    // A texture over the array the surface wrote.
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &pointClamp, nullptr));
    std::vector<float2> at;
    for (int k = 0; k < kW * kH; ++k) at.push_back({float(k % kW) + 0.5f, float(k / kW) + 0.5f});
    const std::vector<float> got = fetch<float>(sample2D, t, at);
    wrong = 0;
    for (int k = 0; k < kW * kH; ++k) wrong += got[k] != after[k];
    report("tex2D of what the surface wrote", wrong, kW * kH, wrong ? "a texel differs" : "");
    cudaResourceDesc back{};
    CHECK(cudaGetSurfaceObjectResourceDesc(&back, surf));
    expect("cudaGetSurfaceObjectResourceDesc names the array",
           back.resType == cudaResourceTypeArray && back.res.array.array == a);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaDestroySurfaceObject(surf));
    refused("destroying a surface object twice", cudaDestroySurfaceObject(surf),
            cudaErrorInvalidValue);
    CHECK(cudaFree(dNeighbours));
    CHECK(cudaFreeArray(a));
    // An array made without cudaArraySurfaceLoadStore is no surface.
    cudaArray_t plain;
    CHECK(cudaMallocArray(&plain, &floatDesc, 4, 4));
    const cudaResourceDesc plainRes = arrayResource(plain);
    cudaSurfaceObject_t never;
    refused("a surface over an array without cudaArraySurfaceLoadStore",
            cudaCreateSurfaceObject(&never, &plainRes), cudaErrorInvalidValue);
    CHECK(cudaFreeArray(plain));
  }

  // Volumes: a 3D array filled by cudaMemcpy3D, fetched with trilinear filtering and
  // normalized coordinates (clamp), written through a surface, and copied back through pitched
  // device memory from cudaMalloc3D, which cudaMemset3D cleared.
  {
    constexpr int kW = 6, kH = 5, kD = 4;
    std::vector<float> values(kW * kH * kD);
    for (int k = 0; k < kW * kH * kD; ++k) {
      const int x = k % kW, y = k / kW % kH, z = k / (kW * kH);
      values[k] = float(x + 10 * y + 100 * z + x * y * z);
    }
    const cudaExtent extent = make_cudaExtent(kW, kH, kD);
    cudaArray_t volume;
    CHECK(cudaMalloc3DArray(&volume, &floatDesc, extent, cudaArraySurfaceLoadStore));
    cudaMemcpy3DParms up{};
    up.srcPtr = make_cudaPitchedPtr(values.data(), kW * sizeof(float), kW, kH);
    up.dstArray = volume;
    up.extent = extent;
    up.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&up));
    cudaChannelFormatDesc gotDesc;
    cudaExtent gotExtent;
    unsigned gotFlags = 0;
    CHECK(cudaArrayGetInfo(&gotDesc, &gotExtent, &gotFlags, volume));
    expect("cudaArrayGetInfo gives a 3D array's extent",
           gotExtent.width == kW && gotExtent.height == kH && gotExtent.depth == kD &&
               gotFlags == cudaArraySurfaceLoadStore);
    const cudaResourceDesc res = arrayResource(volume);
    const cudaTextureDesc trilinear =
        textureDesc(cudaAddressModeClamp, cudaFilterModeLinear, cudaReadModeElementType, true);
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &trilinear, nullptr));
    std::vector<float4> at;
    unsigned seed = 777;
    const auto next = [&] {
      seed = seed * 1103515245u + 12345u;
      return -0.2f + 1.4f * float((seed >> 8) & 0xffff) / 65536.0f;
    };
    // The Guide's trilinear fetch; coordinates clear of the 8-bit weights' rounding ties.
    const auto texel = [&](long i, long j, long k) {
      i = std::min(std::max(i, 0L), long(kW - 1));
      j = std::min(std::max(j, 0L), long(kH - 1));
      k = std::min(std::max(k, 0L), long(kD - 1));
      return double(values[(k * kH + j) * kW + i]);
    };
    const auto reference = [&](float4 c, bool* tie) {
      const double p[3] = {double(c.x) * kW - 0.5, double(c.y) * kH - 0.5, double(c.z) * kD - 0.5};
      long i[3];
      double f[3];
      for (int a = 0; a < 3; ++a) {
        i[a] = long(std::floor(p[a]));
        const double frac = (p[a] - std::floor(p[a])) * 256.0;
        *tie = *tie || std::fabs(frac - std::floor(frac) - 0.5) < 1e-3;
        f[a] = std::round(frac) / 256.0;
      }
      double sum = 0;
      for (int k = 0; k < 2; ++k)
        for (int j = 0; j < 2; ++j)
          for (int q = 0; q < 2; ++q)
            sum += (q ? f[0] : 1 - f[0]) * (j ? f[1] : 1 - f[1]) * (k ? f[2] : 1 - f[2]) *
                   texel(i[0] + q, i[1] + j, i[2] + k);
      return sum;
    };
    std::vector<double> want;
    while (at.size() < 96) {
      const float4 c = make_float4(next(), next(), next(), 0.0f);
      bool tie = false;
      const double r = reference(c, &tie);
      if (tie) continue;
      at.push_back(c);
      want.push_back(r);
    }
    const std::vector<float> got = fetch<float>(sample3D, t, at);
    int wrong = 0;
    char first[200] = "";
    for (size_t k = 0; k < at.size(); ++k)
      if (!close(got[k], want[k]) && wrong++ == 0)
        std::snprintf(first, sizeof first, "at (%g, %g, %g) got %.9g, want %.9g", at[k].x, at[k].y,
                      at[k].z, got[k], want[k]);
    report("tex3D<float> on a 3D array, trilinear filtering, normalized coordinates, clamp", wrong,
           int(at.size()), first);
    CHECK(cudaDestroyTextureObject(t));

    cudaSurfaceObject_t surf;
    CHECK(cudaCreateSurfaceObject(&surf, &res));
    surfaceVolume<<<kD, kW * kH>>>(surf, kW, kH);
    CHECK(cudaGetLastError());
    CHECK(cudaDestroySurfaceObject(surf));
    cudaPitchedPtr pitched;
    CHECK(cudaMalloc3D(&pitched, make_cudaExtent(kW * sizeof(float), kH, kD)));
    expect("cudaMalloc3D pads rows to the texture alignment",
           pitched.pitch % 512 == 0 && pitched.xsize == kW * sizeof(float) && pitched.ysize == kH);
    CHECK(cudaMemset3D(pitched, 0x7f, make_cudaExtent(kW * sizeof(float), kH, kD)));
    cudaMemcpy3DParms down{};
    down.srcArray = volume;
    down.dstPtr = pitched;
    down.extent = extent;
    down.kind = cudaMemcpyDeviceToDevice;
    CHECK(cudaMemcpy3D(&down));
    std::vector<float> back(kW * kH * kD, -1.0f);
    cudaMemcpy3DParms host{};
    host.srcPtr = pitched;
    host.dstPtr = make_cudaPitchedPtr(back.data(), kW * sizeof(float), kW, kH);
    host.extent = make_cudaExtent(kW * sizeof(float), kH, kD);  // bytes: no array takes part
    host.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&host));
    wrong = 0;
    for (int k = 0; k < kW * kH * kD; ++k)
      wrong += back[k] != values[k] + 1000.0f * float(k / (kW * kH));
    report("surf3Dwrite, then cudaMemcpy3D array -> cudaMalloc3D memory -> host", wrong,
           kW * kH * kD, wrong ? "a value differs" : "");
    // cudaMemset3D: a box inside the pitched memory.
    CHECK(cudaMemset3D(pitched, 0, make_cudaExtent(2 * sizeof(float), 2, 2)));
    CHECK(cudaMemcpy3D(&host));
    wrong = 0;
    for (int k = 0; k < kW * kH * kD; ++k) {
      const int x = k % kW, y = k / kW % kH, z = k / (kW * kH);
      const float was = values[k] + 1000.0f * float(z);
      wrong += back[k] != (x < 2 && y < 2 && z < 2 ? 0.0f : was);
    }
    report("cudaMemset3D of a 2 x 2 x 2 box", wrong, kW * kH * kD, wrong ? "a value differs" : "");
    cudaMemcpy3DParms past = up;
    past.dstPos = make_cudaPos(1, 0, 0);  // one element too far along x
    refused("cudaMemcpy3D past a 3D array's end", cudaMemcpy3D(&past), cudaErrorInvalidValue);
    CHECK(cudaFree(pitched.ptr));
    CHECK(cudaFreeArray(volume));
  }

  // Layers: a layered 2D array (cudaArrayLayered) filled by cudaMemcpy3D, fetched with point
  // sampling in each layer (a layer past the last clamps to it), then written through a layered
  // surface and copied back.
  {
    constexpr int kW = 4, kH = 3, kL = 5;
    std::vector<float> values(kW * kH * kL);
    for (int k = 0; k < kW * kH * kL; ++k) values[k] = float(k * 3 + 1);
    const cudaExtent extent = make_cudaExtent(kW, kH, kL);
    cudaArray_t layers;
    CHECK(cudaMalloc3DArray(&layers, &floatDesc, extent,
                            cudaArrayLayered | cudaArraySurfaceLoadStore));
    cudaMemcpy3DParms up{};
    up.srcPtr = make_cudaPitchedPtr(values.data(), kW * sizeof(float), kW, kH);
    up.dstArray = layers;
    up.extent = extent;
    up.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&up));
    const cudaResourceDesc res = arrayResource(layers);
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &pointClamp, nullptr));
    std::vector<float4> at;
    for (int k = 0; k < 64; ++k)
      at.push_back(make_float4(float(k % 5) - 0.5f, float(k / 5 % 4) + 0.25f, float(k % 7), 0));
    const std::vector<float> got = fetch<float>(sampleLayered, t, at);
    int wrong = 0;
    char first[200] = "";
    for (size_t k = 0; k < at.size(); ++k) {
      const int i = std::min(std::max(int(std::floor(at[k].x)), 0), kW - 1);
      const int j = std::min(std::max(int(std::floor(at[k].y)), 0), kH - 1);
      const int l = std::min(int(at[k].z), kL - 1);
      const float want = values[(l * kH + j) * kW + i];
      if (got[k] != want && wrong++ == 0)
        std::snprintf(first, sizeof first, "layer %g at (%g, %g) got %g, want %g", at[k].z, at[k].x,
                      at[k].y, got[k], want);
    }
    report("tex2DLayered<float> on a layered array, point sampling, clamp", wrong, int(at.size()),
           first);
    CHECK(cudaDestroyTextureObject(t));
    cudaSurfaceObject_t surf;
    CHECK(cudaCreateSurfaceObject(&surf, &res));
    surfaceLayers<<<kL, kW * kH>>>(surf, kW, kH);
    CHECK(cudaGetLastError());
    CHECK(cudaDestroySurfaceObject(surf));
    std::vector<float> back(values.size());
    cudaMemcpy3DParms down{};
    down.srcArray = layers;
    down.dstPtr = make_cudaPitchedPtr(back.data(), kW * sizeof(float), kW, kH);
    down.extent = extent;
    down.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&down));
    wrong = 0;
    for (int k = 0; k < kW * kH * kL; ++k) wrong += back[k] != values[k] - float(k / (kW * kH));
    report("surf2DLayeredwrite, then cudaMemcpy3D of the layers to the host", wrong, kW * kH * kL,
           wrong ? "a value differs" : "");
    CHECK(cudaFreeArray(layers));
    cudaArray_t cube;
    refused("a cubemap array",
            cudaMalloc3DArray(&cube, &floatDesc, make_cudaExtent(4, 4, 6), cudaArrayCubemap),
            cudaErrorNotSupported);
  }

  // The size limits: reported (property and attribute agree) and enforced, a texture array's
  // and a surface array's.
  {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int width2D = 0, surface1D = 0, layers = 0;
    CHECK(cudaDeviceGetAttribute(&width2D, cudaDevAttrMaxTexture2DWidth, 0));
    CHECK(cudaDeviceGetAttribute(&surface1D, cudaDevAttrMaxSurface1DWidth, 0));
    CHECK(cudaDeviceGetAttribute(&layers, cudaDevAttrMaxTexture2DLayeredLayers, 0));
    expect("texture and surface limits reported, attributes as properties",
           prop.maxTexture1D > 0 && prop.maxTexture2D[0] > 0 && width2D == prop.maxTexture2D[0] &&
               surface1D == prop.maxSurface1D && layers == prop.maxTexture2DLayered[2] &&
               prop.maxTexture3D[2] > 0);
    const cudaChannelFormatDesc byteDesc = cudaCreateChannelDesc<unsigned char>();
    cudaArray_t a;
    CHECK(cudaMallocArray(&a, &byteDesc, prop.maxTexture1D, 0, 0));
    CHECK(cudaFreeArray(a));
    refused("a 1D array one texel wider than maxTexture1D",
            cudaMallocArray(&a, &byteDesc, prop.maxTexture1D + 1, 0, 0), cudaErrorInvalidValue);
    refused("a 1D surface array one texel wider than maxSurface1D",
            cudaMallocArray(&a, &byteDesc, prop.maxSurface1D + 1, 0, cudaArraySurfaceLoadStore),
            cudaErrorInvalidValue);
    refused("a 2D array taller than maxTexture2D",
            cudaMallocArray(&a, &byteDesc, 16, prop.maxTexture2D[1] + 1, 0), cudaErrorInvalidValue);
    refused("a 3D array deeper than maxTexture3D",
            cudaMalloc3DArray(&a, &byteDesc, make_cudaExtent(2, 2, prop.maxTexture3D[2] + 1), 0),
            cudaErrorInvalidValue);
    refused("a layered array of more layers than maxTexture2DLayered",
            cudaMalloc3DArray(&a, &byteDesc, make_cudaExtent(2, 2, prop.maxTexture2DLayered[2] + 1),
                              cudaArrayLayered),
            cudaErrorInvalidValue);
  }

  CHECK(cudaDestroyTextureObject(tLinear));
  CHECK(cudaDestroyTextureObject(tPitched));
  CHECK(cudaFreeArray(floats));
  CHECK(cudaFree(dLinear));
  CHECK(cudaFree(dPitched));
  return verdict(failures == 0,
                 "texture objects fetch what the Programming Guide says; surfaces read and write");
}
