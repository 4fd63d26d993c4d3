// Per-thread ODE integration in the spirit of Rodinia's myocyte: each thread integrates its own
// small system of `neq` equations of one of six kinds with Heun's method (explicit RK2) for its
// own number of steps. Everything that shapes the control flow is per-thread data: the kind (a
// switch), the equation count (the trip count of every inner loop), the step count (the trip
// count of the time loop) and thresholds compared with the state. The state and the stage
// vectors are local arrays indexed with run-time indices and passed by pointer to a
// non-inlined function, so they live in local memory.
#define MAXEQ 16  // equations per system, at most
#define NPAR 4    // parameters per system

// A rate that grows exponentially below the threshold th and linearly above it (continuous at th).
__device__ __noinline__ float gate_rate(float v, float th, float a) {
  if (v < th) return a * expf(v - th);
  return a * (1.0f + (v - th));
}

// dy = f(t, y) for a system of kind `kind` with m equations and parameters p[0..3].
__device__ __noinline__ void derivs(int kind, int m, float t, const float* y, float* dy,
                                    const float* p) {
  switch (kind) {
    case 0:  // diffusion along a chain with decay, fed at its left end
      for (int k = 0; k < m; ++k) {
        float left = k > 0 ? y[k - 1] : p[1];
        float right = k + 1 < m ? y[k + 1] : y[k];
        dy[k] = p[0] * (left - 2.0f * y[k] + right) - 0.5f * p[2] * y[k];
      }
      break;
    case 1: {  // a potential y[0] driven by m - 1 gating variables with threshold-shaped rates
      float v = y[0];
      float current = 0.0f;
      for (int k = 1; k < m; ++k) {
        float alpha = gate_rate(v, p[1] - 1.0f, 0.5f * p[2]);
        float beta = gate_rate(-v, 0.5f - p[1], 0.25f * p[3] * k);
        dy[k] = alpha * (1.0f - y[k]) - beta * y[k];
        current += (k & 1) ? y[k] : -y[k];
      }
      dy[0] = p[0] * (0.5f - v) + current / m;
      break;
    }
    case 2:  // a Michaelis-Menten cascade: each species is converted into the next
      for (int k = 0; k < m; ++k) {
        float in = k > 0 ? p[0] * y[k - 1] / (p[1] + y[k - 1]) : 0.5f * p[2];
        dy[k] = in - p[0] * y[k] / (p[1] + y[k]) - 0.1f * y[k];
      }
      break;
    case 3:  // damped oscillators in pairs (y[2j], y[2j+1]); an odd last equation just decays
      for (int k = 0; k + 1 < m; k += 2) {
        float w = 0.5f * p[0] * (1 + k / 2);
        dy[k] = w * y[k + 1] - 0.3f * p[2] * y[k];
        dy[k + 1] = -w * y[k] - 0.3f * p[2] * y[k + 1];
      }
      if (m & 1) dy[m - 1] = -p[3] * y[m - 1];
      break;
    case 4:  // stores that release into a scattered partner once above a threshold
      for (int k = 0; k < m; ++k) dy[k] = 0.5f * p[2] * (p[3] - y[k]);
      for (int k = 0; k < m; ++k) {
        if (y[k] > p[1]) {
          float release = p[0] * (y[k] - p[1]);
          dy[k] -= release;
          dy[(5 * k + 3) % m] += release;
        }
      }
      break;
    default:  // logistic growth with periodic, non-negative forcing
      for (int k = 0; k < m; ++k)
        dy[k] = p[0] * y[k] * (1.0f - y[k] / (1.0f + p[1])) + 0.3f * (1.0f + sinf(p[2] * t + k));
      break;
  }
}

// Thread i integrates system i: kind[i], neq[i] equations, steps[i] steps of size dt, parameters
// params[i * NPAR ..], initial state y0[i * MAXEQ ..]. It writes its final state to
// yout[i * MAXEQ ..], zeros beyond its equations.
extern "C" __global__ void myocyte(const int* __restrict__ kind, const int* __restrict__ neq,
                                   const int* __restrict__ steps, const float* __restrict__ params,
                                   const float* __restrict__ y0, float dt, float* __restrict__ yout,
                                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float y[MAXEQ], k1[MAXEQ], yt[MAXEQ], k2[MAXEQ];
  int kd = kind[i], m = neq[i], s = steps[i];
  const float* p = params + i * NPAR;
  for (int k = 0; k < m; ++k) y[k] = y0[i * MAXEQ + k];
  for (int it = 0; it < s; ++it) {
    float t = it * dt;
    derivs(kd, m, t, y, k1, p);
    for (int k = 0; k < m; ++k) yt[k] = y[k] + dt * k1[k];
    derivs(kd, m, t + dt, yt, k2, p);
    for (int k = 0; k < m; ++k) y[k] += 0.5f * dt * (k1[k] + k2[k]);
  }
  for (int k = 0; k < MAXEQ; ++k) yout[i * MAXEQ + k] = k < m ? y[k] : 0.0f;
}
