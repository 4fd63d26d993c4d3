// Texture fetches through texture objects and surface accesses through surface objects
// (tests/test_ptx_isa.cpp, "Textures" and "Surfaces"): each thread fetches at its own
// coordinates and writes the four values the fetch returns.
// The PTX beside it comes from stimuli/regen_ptx.sh tests.
#include <cuda_runtime.h>

// Thread i fetches at (x0 + (i % cols) * dx, y0 + (i / cols) * dy).
extern "C" __global__ void fetch2d(cudaTextureObject_t t, float4* out, int n, int cols, float x0,
                                   float y0, float dx, float dy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, x0 + (i % cols) * dx, y0 + (i / cols) * dy);
}

extern "C" __global__ void fetch1d(cudaTextureObject_t t, float4* out, int n, float x0, float dx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<float4>(t, x0 + i * dx);
}

// Integer coordinates: tex1Dfetch (first texel i0) and tex2D<int4> at texel centres.
extern "C" __global__ void fetch1dInt(cudaTextureObject_t t, int4* out, int n, int i0) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int4>(t, i0 + i);
}

extern "C" __global__ void fetch2dInt(cudaTextureObject_t t, int4* out, int n, int cols, int x0,
                                      int y0) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<int4>(t, x0 + i % cols + 0.5f, y0 + i / cols + 0.5f);
}

// Block y, thread x of a w x h surface of floats: out = the right neighbour read with
// cudaBoundaryModeZero and with cudaBoundaryModeClamp; then (after the block's reads) v -> 2v + 1.
extern "C" __global__ void surfaceStep(cudaSurfaceObject_t s, float2* out, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  bool in = x < w && y < h;
  if (in) {
    float zero = surf2Dread<float>(s, (x + 1) * 4, y, cudaBoundaryModeZero);
    float clamp = surf2Dread<float>(s, (x + 1) * 4, y, cudaBoundaryModeClamp);
    out[y * w + x] = make_float2(zero, clamp);
  }
  __syncthreads();
  if (in) surf2Dwrite(2 * surf2Dread<float>(s, x * 4, y) + 1, s, x * 4, y);
}

// uchar4 texels of a 1D surface reversed in place.
extern "C" __global__ void surfaceBytes(cudaSurfaceObject_t s, int n) {
  int i = threadIdx.x;
  if (i < n) {
    uchar4 c = surf1Dread<uchar4>(s, i * 4);
    surf1Dwrite(make_uchar4(c.w, c.z, c.y, c.x), s, i * 4);
  }
}

// A store at byte x (cudaBoundaryModeTrap, the default).
extern "C" __global__ void surfaceStore(cudaSurfaceObject_t s, int x) { surf1Dwrite(1.0f, s, x); }

// Thread i of n fetches a volume at (c0, c0, c0) + step x (i % 6, i / 6 % 5, i / 30).
extern "C" __global__ void fetch3d(cudaTextureObject_t t, float4* out, int n, float c0, float step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float4>(t, c0 + (i % 6) * step, c0 + (i / 6 % 5) * step, c0 + (i / 30) * step);
}

// Block z, thread (x, y) of 4 x 3 x 5 int volumes: b(x, y, z) = a(x, y, z) + a(x, y, z + 1), the
// next slice read with cudaBoundaryModeClamp (the last slice's own).
extern "C" __global__ void surfaceVolume(cudaSurfaceObject_t a, cudaSurfaceObject_t b) {
  int x = threadIdx.x % 4, y = threadIdx.x / 4, z = blockIdx.x;
  int v = surf3Dread<int>(a, x * 4, y, z) + surf3Dread<int>(a, x * 4, y, z + 1, cudaBoundaryModeClamp);
  surf3Dwrite(v, b, x * 4, y, z);
}

// Thread i fetches layer layer0 + i / 64 of a layered 2D texture at (x0, x0) + dx x (i % 8, i / 8 % 8).
extern "C" __global__ void fetchLayered(cudaTextureObject_t t, float4* out, int n, float x0, float dx,
                                        int layer0) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float4>(t, x0 + (i % 8) * dx, x0 + (i / 8 % 8) * dx, layer0 + i / 64);
}

// Block l, thread x of a layered 1D surface of ints: v += 100 l.
extern "C" __global__ void surfaceLayers(cudaSurfaceObject_t s, int w) {
  int x = threadIdx.x, l = blockIdx.x;
  if (x < w) surf1DLayeredwrite(surf1DLayeredread<int>(s, x * 4, l) + 100 * l, s, x * 4, l);
}
