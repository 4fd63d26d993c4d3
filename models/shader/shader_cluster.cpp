#include "shader/shader_cluster.hpp"

#include <cstdlib>
#include <memory>

#include "common/error.hpp"

namespace gpusc::shader {

ShaderCluster::ShaderCluster(sc_core::sc_module_name name, const ShaderPlatformConfig& cfg,
                             std::vector<ShaderPhase> phases, const TextureUnits& textures)
    : sc_module(name),
      taskFifos_("tasks", cfg.cores),
      doneFifos_("done", cfg.cores),
      cores_("core"),
      controller_("input_controller", cfg, std::move(phases), textures) {
  cores_.init(cfg.cores, [&](const char* n, size_t) { return new ShaderCore(n, cfg); });
  for (size_t c = 0; c < cfg.cores; ++c) {
    controller_.tasks[c](taskFifos_[c]);
    cores_[c].tasks(taskFifos_[c]);
    cores_[c].done(doneFifos_[c]);
    controller_.done[c](doneFifos_[c]);
  }
}

ClusterRun simulateDraw(const ShaderPlatformConfig& cfg, std::vector<ShaderPhase> phases,
                        const TextureUnits& textures) {
  // No SystemC banner on stdout: gpusc prints its own report.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  auto cluster =
      std::make_unique<ShaderCluster>("shader_cluster", cfg, std::move(phases), textures);
  sc_core::sc_start();
  const InputController& ic = cluster->controller();
  if (!ic.finished()) throw InternalError("shader cluster: the draw did not finish");
  ClusterRun r;
  r.phases = ic.results();
  r.cycles = ic.cycles();
  for (const ShaderCore& c : cluster->cores()) {
    r.coreBusy.push_back(c.busyCycles());
    for (Stage s : {Stage::Vertex, Stage::Fragment}) r.stats[size_t(s)] += c.stats(s);
  }
  return r;
}

ClusterRun simulateDraw(const ShaderPlatformConfig& cfg, const DrawSpec& d, const Program& vs,
                        const Program& fs) {
  const std::unique_ptr<TextureUnits> tex = drawTextures(d, vs, fs);
  std::vector<ShaderPhase> phases(2);
  phases[0].program = &vs;
  phases[0].constants = constantFile(vs, uniformValues(d, vs));
  phases[0].invocations = [&](const std::vector<InvocationRun>&) {
    return vertexInvocations(d, vs);
  };
  phases[1].program = &fs;
  phases[1].constants = constantFile(fs, uniformValues(d, fs));
  phases[1].invocations = [&](const std::vector<InvocationRun>& vertices) {
    std::vector<std::vector<Vec4>> outputs;
    for (const InvocationRun& v : vertices) outputs.push_back(v.outputs);
    return fragmentInvocations(d, vs, fs, outputs);
  };
  return simulateDraw(cfg, std::move(phases), *tex);
}

}  // namespace gpusc::shader
