#include "shader/shader_cluster.hpp"

#include <exception>
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

namespace {

// SystemC keeps its kernel in two globals (sc_curr_simcontext, sc_default_global_context) and
// elaborates a design once per simulation context. A draw therefore gets a context of its own,
// current while the draw exists: made when it starts and deleted when it ends, after the cluster
// (SystemC objects must be destroyed while their context is current), with the caller's context
// restored. This is the one place the shader platform touches SystemC's globals; nothing is left
// behind (docs/shader.md gives the measurement).
class DrawContext {
 public:
  DrawContext()
      : previous_(sc_core::sc_curr_simcontext),
        previousDefault_(sc_core::sc_default_global_context),
        context_(new sc_core::sc_simcontext) {
    sc_core::sc_curr_simcontext = context_;
    sc_core::sc_default_global_context = context_;
  }
  ~DrawContext() {
    delete context_;
    sc_core::sc_curr_simcontext = previous_;
    sc_core::sc_default_global_context = previousDefault_;
  }
  DrawContext(const DrawContext&) = delete;
  DrawContext& operator=(const DrawContext&) = delete;

 private:
  sc_core::sc_simcontext* previous_;
  sc_core::sc_simcontext* previousDefault_;
  sc_core::sc_simcontext* context_;
};

}  // namespace

ClusterRun simulateDraw(const ShaderPlatformConfig& cfg, std::vector<ShaderPhase> phases,
                        const TextureUnits& textures) {
  for (const ShaderPhase& ph : phases)
    checkProgram(*ph.program, BufferSizes{cfg.core.input_entries, cfg.core.output_entries});
  const DrawContext context;
  auto cluster =
      std::make_unique<ShaderCluster>("shader_cluster", cfg, std::move(phases), textures);
  sc_core::sc_start();
  // An error inside a SystemC thread stopped that thread; it is rethrown here, as thrown.
  const InputController& ic = cluster->controller();
  if (ic.error()) std::rethrow_exception(ic.error());
  for (const ShaderCore& c : cluster->cores())
    if (c.error()) std::rethrow_exception(c.error());
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
  // Everything the draw's input can get wrong is checked here, before the simulation starts.
  const BufferSizes sizes{cfg.core.input_entries, cfg.core.output_entries};
  checkProgram(vs, sizes);
  checkProgram(fs, sizes);
  const std::unique_ptr<TextureUnits> tex = drawTextures(d, vs, fs);
  std::vector<Invocation> vertices = vertexInvocations(d, vs, sizes.input);
  varyingSources(d, vs, fs);
  std::vector<ShaderPhase> phases(2);
  phases[0].program = &vs;
  phases[0].constants = constantFile(vs, uniformValues(d, vs));
  phases[0].invocations = [&](const std::vector<InvocationRun>&) { return vertices; };
  phases[1].program = &fs;
  phases[1].constants = constantFile(fs, uniformValues(d, fs));
  phases[1].invocations = [&](const std::vector<InvocationRun>& runs) {
    std::vector<std::vector<Vec4>> outputs;
    for (const InvocationRun& v : runs) outputs.push_back(v.outputs);
    return fragmentInvocations(d, vs, fs, outputs, sizes.input);
  };
  return simulateDraw(cfg, std::move(phases), *tex);
}

}  // namespace gpusc::shader
