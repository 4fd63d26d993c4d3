// PdnNetwork: the power-delivery network as a linear state-space model, stepped once per core
// cycle (seed 001, section 2 and Fig. 3a).
//
// The circuit (pdn_config.hpp): ideal regulator -> R2 + L2 (board and package) -> package node
// with decap C2 (+ ESR) -> one bump branch R1 + L1 per grid node -> die nodes, each with its share
// of the die decap C1 (+ ESR), linked to their grid neighbours by R + L; each SM draws its
// current at its node (and, with pdn.uncore_rail shared, the memory side at the others).
//
// The model works in drop coordinates: every quantity is the deviation the load currents cause,
// drop = V_supply - V, so the regulator is a short, the network is driven by the load currents
// alone, and superposition is exact (the drop of a sum of loads is the sum of their drops). The
// states are the drop across each decap (e, one per node) and the current of each inductive
// branch (i); every node holds exactly one decap with its ESR, so the node drop is explicit:
//   d = e + ESR * (load - inflow through the branches).
// The continuous model dx/dt = A x + B u, d = C x + D u is discretised exactly for inputs held
// over a core cycle T (zero-order hold): [Ad Bd; 0 I] = expm([A B; 0 0] T).
//
// Element values come from impedance targets (PdnConfig): each resonance's L and C from its
// frequency and characteristic impedance Z0 = Z / q, its damping resistance Z0 / q split into the
// configured series (DC) resistance and the decap's ESR; then a few fixed-point iterations on the
// design frequencies and impedances, against the exact |Z(f)| of the assembled network, put the
// die-level peaks at the configured frequencies and impedances (to 0.05 %; a target the network
// cannot reach within 2 % is an InputError).
#pragma once

#include <complex>
#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include "common/pdn_config.hpp"

namespace gpusc::pdn {

namespace detail {
struct ModalStep;  // pdn_network.cpp's arguments of one modal step
}

// A lumped RLC network in drop coordinates, for PdnNetwork. Node n has a decap `c` (farad) with
// series resistance `esr` (ohm) to the reference; a branch is a series R (ohm) + L (henry, > 0)
// from node `from` (-1: the regulator) to node `to`; its current flows from `from` to `to`.
struct PdnCircuit {
  struct Node {
    double c = 0, esr = 0;
  };
  struct Branch {
    int32_t from = -1, to = 0;
    double r = 0, l = 0;
  };
  std::vector<Node> nodes;
  std::vector<Branch> branches;
  std::vector<uint32_t> smNodes;    // the node each SM draws its current at
  std::vector<double> uncoreShare;  // share of the uncore current per node (empty: none)
  uint32_t rows = 1, cols = 1;      // the layout the first rows x cols nodes form (row-major)
  // A regulating source (PdnRegulatorConfig): with regulatorHz > 0 the regulator raises its
  // output by y, dy/dt = 2 pi regulatorHz x (sum over nodes of sense[k] x drop[k]); one more
  // state. 0: an ideal source.
  double regulatorHz = 0;
  std::vector<double> sense;  // one weight per node (with regulatorHz > 0)
};

// The state of one network instance and scratch space for step() (sized by zeroState() and
// steadyState(), so stepping never allocates). With the network's modal form (the default) the
// state is its modal coordinates q (one of each conjugate pair of modes, real and imaginary
// parts apart), with the last inputs and what they contribute cached; without it, x = [decap
// drops; branch currents], scaled by sqrt(C) and sqrt(L) (energy coordinates, for conditioning).
struct PdnState {
  Eigen::VectorXd x;         // dense form
  Eigen::VectorXd z_, out_;  // dense step() scratch: [x; u] and [x'; drops]
  // Modal form: q holds the real parts of every mode, then the imaginary parts of the complex
  // ones; w_ is Bq u in the same layout, direct_ is Ds u per SM, u_ the last inputs.
  Eigen::VectorXd q, w_, direct_;
  std::vector<double> u_;
  std::vector<double> acc_;  // step() scratch: the network's padded output rows
  // stepCycles() scratch: the states and padded output rows of PdnNetwork::kStepCycles cycles.
  std::vector<double> cyclesQ_, cyclesRes_;
  bool haveInputs_ = false;
  uint32_t updates_ = 0;  // inputs changed since w and direct were last computed afresh
};

class PdnNetwork {
 public:
  // From the platform's pdn section; the SMs sit at cfg.grid.sm_nodes (or row-major).
  // Throws InputError naming the pdn key when the SMs do not fit the grid or the targets cannot
  // be met.
  PdnNetwork(const PdnConfig& cfg, double coreClockHz, uint32_t numSms);
  // From an explicit circuit (tests, custom networks); the same model and discretisation.
  PdnNetwork(const PdnCircuit& circuit, double coreClockHz);

  uint32_t numSms() const { return uint32_t(circuit_.smNodes.size()); }
  uint32_t numNodes() const { return uint32_t(circuit_.nodes.size()); }
  uint32_t numStates() const { return nx_; }
  uint32_t nodeOfSm(uint32_t sm) const { return circuit_.smNodes.at(sm); }
  uint32_t rows() const { return circuit_.rows; }
  uint32_t cols() const { return circuit_.cols; }
  double clockHz() const { return clockHz_; }
  const PdnCircuit& circuit() const { return circuit_; }

  PdnState zeroState() const;
  // The DC operating point for constant currents: the state a long constant load settles to.
  PdnState steadyState(const double* smAmps, double uncoreAmps) const;
  // One core cycle with the currents held over the cycle; writes the drop (V) at every SM's
  // node at the end of the cycle into smDrop[numSms()]. Does not allocate.
  void step(PdnState& s, const double* smAmps, double uncoreAmps, double* smDrop) const;
  // `cycles` steps, as many calls of step() give them to the last bit: cycle i's currents at
  // smAmps + i * ampsStride, its drops into smDrops + i * numSms(). Faster per cycle: the
  // modal form's output product goes kStepCycles cycles at a time. Does not allocate.
  static constexpr uint32_t kStepCycles = 4;
  void stepCycles(PdnState& s, uint32_t cycles, const double* smAmps, size_t ampsStride,
                  double uncoreAmps, double* smDrops) const;
  // Whether step() uses the modal form (see discretise()); false: the dense matrix.
  bool usesModalForm() const { return nm_ != 0; }
  // The modes step() advances (one of each conjugate pair); 0 with the dense matrix.
  uint32_t numModes() const { return nm_; }
  // The same step with the dense matrix, whatever the form (tests compare the two).
  void stepDense(PdnState& s, const double* smAmps, double uncoreAmps, double* smDrop) const;
  // The modal step written with Eigen's vector operations and matrix-vector product, which
  // step()'s plain loops reproduce to the last bit (tests compare the two).
  void stepModalEigen(PdnState& s, const double* smAmps, double uncoreAmps, double* smDrop) const;
  // The drop at every node (numNodes()) for state `s` under the currents of its last cycle.
  void nodeDrops(const PdnState& s, const double* smAmps, double uncoreAmps,
                 double* nodeDrop) const;

  // Impedance seen from the die: every SM's node driven with an equal share of 1 A, response
  // the mean drop over the SMs' nodes (ohm).
  std::complex<double> dieImpedance(double hz) const;
  // Self-impedance at one SM's node.
  std::complex<double> smImpedance(uint32_t sm, double hz) const;
  // Transfer impedance: drop at SM `at`'s node per ampere drawn by SM `from`.
  std::complex<double> transferImpedance(uint32_t from, uint32_t at, double hz) const;
  // Local maxima of |Z_die(f)| over [fLo, fHi]: (frequency in Hz, |Z| in ohm), low to high.
  std::vector<std::pair<double, double>> impedancePeaks(double fLo, double fHi) const;
  // Cycles for the slowest natural response to decay by `factor` (e.g. 1e-6).
  uint64_t settlingCycles(double factor) const;

  // The derived element values and the achieved peaks.
  nlohmann::json elements() const;

 private:
  struct Model;  // continuous-time matrices of a circuit
  static Model buildModel(const PdnCircuit& c);
  static std::complex<double> response(const Model& m, double hz, const Eigen::VectorXcd& u,
                                       const Eigen::VectorXcd& w);
  // Takes circuit_'s continuous-time model `m` and discretises it at the core clock.
  void discretise(const Model& m);
  // The modal form of the discrete step, when it reproduces the dense one (else none).
  void diagonalise(const Eigen::MatrixXd& Ad, const Eigen::MatrixXd& Bd, const Eigen::MatrixXd& Cs,
                   const Eigen::MatrixXd& Ds);
  // The state x of `s` (the modal coordinates mapped back).
  Eigen::VectorXd stateOf(const PdnState& s) const;
  Eigen::VectorXd inputs(const double* smAmps, double uncoreAmps) const;
  // The modal step's inputs' part computed afresh from the inputs, when the state has none yet
  // or its updates are due for it; false: it is to be updated from the inputs that changed.
  bool refreshInputs(PdnState& s, const double* smAmps, double uncoreAmps) const;
  // The modal step's arguments for state `s` (no currents, not incremental, no result yet).
  detail::ModalStep modalStepOf(PdnState& s, double uncoreAmps) const;

  PdnCircuit circuit_;
  double clockHz_ = 0;
  uint32_t nx_ = 0, nu_ = 0, ns_ = 0;
  // Continuous model: dx/dt = A x + B u; node drops = Cn x + Dn u (u = [SM amps; uncore amps]).
  Eigen::MatrixXd A_, B_, Cn_, Dn_;
  // Discrete step, fused: [x'; smDrop] = G [x; u].
  Eigen::MatrixXd G_;
  // DC gain: steady state x = Xdc u.
  Eigen::MatrixXd Xdc_;
  // Modal form (Ad = V diag(lambda) V^-1, kept: the real modes, then one of each conjugate pair):
  // q' = lambda q + Bq u, drops = Re(Cq q') + Ds u, with Cq's columns of conjugate pairs doubled.
  uint32_t nm_ = 0, nr_ = 0;  // modes; the first nr_ are real
  std::vector<double> modeLambdaRe_, modeLambdaIm_;
  // In PdnState::q's layout (nm_ real parts, then the complex modes' imaginary parts):
  Eigen::MatrixXd modeIn_;   // Bq's parts, (2 nm_ - nr_) x nu_
  Eigen::MatrixXd modeOut_;  // Re(Cq) and -Im(Cq), ns_ x (2 nm_ - nr_)
  Eigen::MatrixXd direct_;   // Ds, ns_ x nu_
  // modeOut_ column by column with each column padded to outLd_ rows (a multiple of 4, zeros
  // below ns_), for step()'s product: every column a whole number of SIMD vectors.
  std::vector<double> outPadded_;
  uint32_t outLd_ = 0;
  uint32_t outBlock_ = 0;         // the product's column blocks (see step())
  bool avx_ = false;              // the processor has AVX: step() uses the AVX form of the product
  Eigen::MatrixXcd modeToState_;  // V's kept columns, conjugate pairs doubled
  Eigen::MatrixXcd stateToMode_;  // V^-1's kept rows
  nlohmann::json elements_;
};

// Seed 001's alignment experiment (Fig. 9): every SM draws baseAmps + amplitudeAmps *
// sin(2 pi hz t), SM k delayed by k * skewCycles core cycles. Starting from the steady state of
// the base current, it steps until the start-up transient has decayed, then returns the worst
// drop over every SM's node during `cycles` further cycles, in % of supplyV.
double alignmentDroopPct(const PdnNetwork& net, double hz, uint32_t skewCycles, double baseAmps,
                         double amplitudeAmps, double supplyV, uint64_t cycles);

}  // namespace gpusc::pdn
