// All-pairs gravitational N-body step with softening. Each block walks over all bodies in
// tiles of TILE positions staged in shared memory; every thread accumulates the acceleration of
// its own body through a real (non-inlined) call of the pairwise interaction, then integrates
// velocity and position (semi-implicit Euler). The last tile is partial when n is not a
// multiple of TILE. Positions hold the mass in w.

#define TILE 64

// The acceleration body i gains from body j, added to `acc`: m_j * r / (|r|^2 + eps^2)^(3/2).
__device__ __noinline__ float3 bodyBodyInteraction(float3 acc, float4 bi, float4 bj,
                                                   float softening2) {
  float rx = bj.x - bi.x, ry = bj.y - bi.y, rz = bj.z - bi.z;
  float distSqr = rx * rx + ry * ry + rz * rz + softening2;
  float invDist = rsqrtf(distSqr);
  float s = bj.w * (invDist * invDist * invDist);
  acc.x += rx * s;
  acc.y += ry * s;
  acc.z += rz * s;
  return acc;
}

// Launched with blockDim.x == TILE.
extern "C" __global__ void nbody_step(const float4* __restrict__ posIn, float4* __restrict__ posOut,
                                      float4* __restrict__ vel, float4* __restrict__ accel, int n,
                                      float dt, float softening2) {
  __shared__ float4 tile[TILE];
  const int i = blockIdx.x * TILE + threadIdx.x;
  const float4 me = i < n ? posIn[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float3 acc = make_float3(0.0f, 0.0f, 0.0f);
  for (int base = 0; base < n; base += TILE) {
    const int j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? posIn[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
    const int count = min(TILE, n - base);
    for (int k = 0; k < count; ++k) acc = bodyBodyInteraction(acc, me, tile[k], softening2);
    __syncthreads();
  }
  if (i < n) {
    float4 v = vel[i];
    v.x += acc.x * dt;
    v.y += acc.y * dt;
    v.z += acc.z * dt;
    vel[i] = v;
    posOut[i] = make_float4(me.x + v.x * dt, me.y + v.y * dt, me.z + v.z * dt, me.w);
    accel[i] = make_float4(acc.x, acc.y, acc.z, 0.0f);
  }
}
