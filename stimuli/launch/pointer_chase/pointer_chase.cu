// A latency probe: one thread follows p = a[p] for n steps, each load cached in the L2 only
// (__ldcg: ld.global.cg), so every step waits for the one before. Two launches that differ only
// in n give the time of one step: their cycle difference over their step difference. See
// pointer_chase_l2.yaml and pointer_chase_dram.yaml.
extern "C" __global__ void pointer_chase(const unsigned* __restrict__ a, unsigned n,
                                         unsigned* __restrict__ out) {
  unsigned p = 0;
  for (unsigned k = 0; k < n; ++k) p = __ldcg(a + p);
  out[0] = p;
}
