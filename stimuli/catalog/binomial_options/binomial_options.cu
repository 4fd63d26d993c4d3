// Binomial-tree pricing of European call options: one option per thread block. Thread 0 derives
// the tree parameters in double precision and shares them; the leaves of the tree are then
// filled in parallel and the tree is folded back one level per step, ping-ponging between two
// halves of dynamic shared memory with a barrier per level. As the level shrinks below the
// block size, fewer and fewer threads stay active.

struct TreeParams {
  float vDt;     // volatility * sqrt(dt): the log-price step
  float puByDf;  // up probability times the one-step discount factor
  float pdByDf;  // down probability times the one-step discount factor
};

extern "C" __global__ void binomial_options(float* __restrict__ callValue,
                                            const float* __restrict__ spot,
                                            const float* __restrict__ strike,
                                            const float* __restrict__ years, float rate,
                                            float volatility, int steps) {
  extern __shared__ float tree[];  // 2 * (steps + 1) floats
  __shared__ TreeParams params;
  const int option = blockIdx.x;

  if (threadIdx.x == 0) {
    double dt = (double)years[option] / steps;
    double vDt = volatility * sqrt(dt);
    double rDt = rate * dt;
    double growth = exp(rDt), discount = exp(-rDt);
    double up = exp(vDt), down = exp(-vDt);
    double pu = (growth - down) / (up - down);
    params.vDt = (float)vDt;
    params.puByDf = (float)(pu * discount);
    params.pdByDf = (float)((1.0 - pu) * discount);
  }
  __syncthreads();

  const float s = spot[option], x = strike[option];
  const float vDt = params.vDt, puByDf = params.puByDf, pdByDf = params.pdByDf;
  float* cur = tree;
  float* next = tree + steps + 1;

  // Leaves: the payoff at expiry after i up-moves and steps - i down-moves.
  for (int i = threadIdx.x; i <= steps; i += blockDim.x)
    cur[i] = fmaxf(s * expf(vDt * (float)(2 * i - steps)) - x, 0.0f);
  __syncthreads();

  // Fold back: level L has L + 1 nodes and produces L nodes.
  for (int level = steps; level > 0; --level) {
    for (int i = threadIdx.x; i < level; i += blockDim.x)
      next[i] = puByDf * cur[i + 1] + pdByDf * cur[i];
    __syncthreads();
    float* t = cur;
    cur = next;
    next = t;
  }
  if (threadIdx.x == 0) callValue[option] = cur[0];
}
