// Black-Scholes pricing of European call and put options, one option per loop iteration of a
// grid-stride loop. The cumulative normal distribution uses the Abramowitz-Stegun polynomial
// (absolute error below 7.5e-8); its `d > 0` reflection compiles to a select.

// Cumulative distribution function of the standard normal distribution.
__device__ inline float cumulativeNormal(float d) {
  const float a1 = 0.31938153f;
  const float a2 = -0.356563782f;
  const float a3 = 1.781477937f;
  const float a4 = -1.821255978f;
  const float a5 = 1.330274429f;
  const float invSqrt2Pi = 0.39894228040143267794f;
  float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
  float tail =
      invSqrt2Pi * expf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
  return d > 0.0f ? 1.0f - tail : tail;
}

// price: spot price S, strike X, years to expiry T; r: riskless rate; v: volatility.
extern "C" __global__ void blackscholes(float* __restrict__ call, float* __restrict__ put,
                                        const float* __restrict__ spot,
                                        const float* __restrict__ strike,
                                        const float* __restrict__ years, float r, float v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float s = spot[i], x = strike[i], t = years[i];
    float sqrtT = sqrtf(t);
    float d1 = (logf(s / x) + (r + 0.5f * v * v) * t) / (v * sqrtT);
    float d2 = d1 - v * sqrtT;
    float cndD1 = cumulativeNormal(d1);
    float cndD2 = cumulativeNormal(d2);
    float discountedStrike = x * expf(-r * t);
    call[i] = s * cndD1 - discountedStrike * cndD2;
    put[i] = discountedStrike * (1.0f - cndD2) - s * (1.0f - cndD1);
  }
}
