// ShaderCluster: the shader-cluster platform's top (You and Wang, Sec. 3, Fig. 3): `cores`
// ShaderCores (the paper's two) and the InputController, which owns the shared instruction/
// constant buffer and feeds the cores' input buffers, connected by a task FIFO and a report FIFO
// per core. A draw is its phases (vertex, then fragment); simulateDraw elaborates the cluster
// for one draw and runs it to the end.
#pragma once

#include <memory>
#include <vector>

#include <systemc>

#include "shader/draw.hpp"
#include "shader/input_controller.hpp"
#include "shader/shader_core.hpp"

namespace gpusc::shader {

class ShaderCluster : public sc_core::sc_module {
 public:
  ShaderCluster(sc_core::sc_module_name name, const ShaderPlatformConfig& cfg,
                std::vector<ShaderPhase> phases, const TextureUnits& textures);

  const InputController& controller() const { return controller_; }
  const sc_core::sc_vector<ShaderCore>& cores() const { return cores_; }

 private:
  sc_core::sc_vector<sc_core::sc_fifo<ShaderTask>> taskFifos_;
  sc_core::sc_vector<sc_core::sc_fifo<bool>> doneFifos_;
  sc_core::sc_vector<ShaderCore> cores_;
  InputController controller_;
};

struct ClusterRun {
  std::vector<PhaseResult> phases;
  uint64_t cycles = 0;             // the draw, from the first load to the last write-out
  std::vector<uint64_t> coreBusy;  // per core: cycles running or writing out
  CoreStats stats[2];              // by Stage, over every core
};

// Elaborates a ShaderCluster in a SystemC simulation context of its own (a design is elaborated
// once per context) and simulates the draw; the cluster and the context are deleted when it ends
// and the caller's context is current again. An error inside the simulation (a program that does
// not finish) stops it and is rethrown; InputError before it starts for a program whose bindings
// or registers lie outside the buffers; InternalError if the cluster stops before the draw ends.
ClusterRun simulateDraw(const ShaderPlatformConfig& cfg, std::vector<ShaderPhase> phases,
                        const TextureUnits& textures);

// A draw of two compiled programs (allocated and bundled): the vertex invocations of `d`, then
// the fragments interpolated from the vertex outputs the cluster computed. The draw's attributes,
// varyings, uniforms and textures are checked before the simulation starts (InputError naming
// the file and key).
ClusterRun simulateDraw(const ShaderPlatformConfig& cfg, const DrawSpec& d, const Program& vertex,
                        const Program& fragment);

}  // namespace gpusc::shader
