// Seed 004: energy-aware code motion for the shader cluster's I/O buffers (You and Wang,
// "Energy-aware code motion for GPU shader processors"). Every shader benchmark's draw runs on
// shader-cluster (`gpusc shader run`) under
//   baseline      no clock gating, no code motion
//   naive-gating  the buffer's clock runs only in its access cycles (gating.* = immediate)
//   local         gated, with DTO insertion and local code motion (steps I and II)
//   global        gated, with local and global code motion (steps I to III)
//   naive-motion  gated, with naive code motion (every input read at the start, every output
//                 kept in a temporary until the end), where the eight temporaries allow it
// each for the input buffer only, the output buffer only and both (the paper's Secs. 5.2.1 to
// 5.2.3), plus global code motion's branch- and join-point policies on the input buffer. The
// metrics cover the whole draw (vertex and fragment invocations): the cores' cycles, Table VI
// energy by component and the energy-delay product, relative to the baseline.
#include <iostream>
#include <map>

#include "cli_options.hpp"
#include "common/strings.hpp"
#include "experiment_util.hpp"
#include "run_pool.hpp"
#include "shader/compiler.hpp"
#include "shader_catalog.hpp"

namespace gpusc::cli {

namespace {

struct Method {
  const char* key;
  const char* label;
  const char* motion;  // compiler.*_motion
};
const Method kMethods[] = {{"naive-gating", "naive clock gating", "none"},
                           {"local", "local code motion", "local"},
                           {"global", "local + global code motion", "global"},
                           {"naive-motion", "naive code motion", "naive"}};

struct Scope {
  const char* key;
  const char* label;
  bool input, output;
};
const Scope kScopes[] = {{"input", "input buffer", true, false},
                         {"output", "output buffer", false, true},
                         {"both", "input and output buffers", true, true}};

const char* kBranchPolicies[] = {"large-cluster", "small-cluster", "zero-or-all"};
const char* kJoinPolicies[] = {"duplication-allowed", "duplication-forbidden"};

// One configuration of the study.
struct Config004 {
  std::string key;
  std::vector<std::string> sets;
  const Scope* scope = nullptr;  // null: the baseline
  const Method* method = nullptr;
};

std::string configKey(const Scope& s, const Method& m) {
  return fmt::format("{}-{}", s.key, m.key);
}

std::vector<Config004> configs004() {
  std::vector<Config004> out{{"baseline", {}}};
  for (const Scope& s : kScopes)
    for (const Method& m : kMethods) {
      Config004 c{configKey(s, m), {}, &s, &m};
      if (s.input)
        c.sets = {"gating.input=immediate", fmt::format("compiler.input_motion={}", m.motion)};
      if (s.output) {
        c.sets.push_back("gating.output=immediate");
        c.sets.push_back(fmt::format("compiler.output_motion={}", m.motion));
      }
      out.push_back(c);
    }
  for (const char* b : kBranchPolicies)
    for (const char* j : kJoinPolicies)
      out.push_back({fmt::format("policy-{}-{}", b, j),
                     {"gating.input=immediate", "compiler.input_motion=global",
                      fmt::format("compiler.branch_policy={}", b),
                      fmt::format("compiler.join_policy={}", j)}});
  return out;
}

// The paper's Table V, per benchmark: fragment share of the execution time, the input- and
// output-buffer-access share of all cycles, register requirement (fragment / vertex).
struct PaperRow {
  const char* name;
  double fragmentShare, inputShare, outputShare;
  int fragmentRegs, vertexRegs;
};
const PaperRow kTableV[] = {
    {"Blur0", 90.6, 10.9, 3.1, 3, 3},         {"Blur1", 90.6, 10.9, 3.1, 3, 3},
    {"HGaussianBlur", 82.8, 26.7, 6.0, 3, 2}, {"NormalMap", 27.7, 10.4, 2.5, 6, 8},
    {"POM", 95.1, 3.5, 20.9, 13, 6},          {"SimpleTexLight", 43.9, 16.1, 5.2, 6, 7},
    {"SimpleTex", 69.5, 11.7, 3.6, 8, 7},     {"VGaussianBlur", 83.9, 15.0, 5.6, 3, 2},
    {"WaterWave", 93.8, 6.2, 1.7, 5, 3}};

const PaperRow* paperRow(const std::string& paperName) {
  for (const PaperRow& r : kTableV)
    if (paperName == r.name) return &r;
  return nullptr;
}

struct Run004 {
  uint64_t cycles = 0, vertexCycles = 0, fragmentCycles = 0;
  uint64_t clusterCycles = 0;  // the draw on the cluster, transfers included
  uint64_t inputAccess = 0, outputAccess = 0, inputClocked = 0, outputClocked = 0, wake = 0;
  double eIn = 0, eOut = 0, eTemp = 0, eCore = 0, eTotal = 0;
  int vertexRegs = 0, fragmentRegs = 0, vertexSpilled = 0, fragmentSpilled = 0;
  double edp() const { return eTotal * double(cycles); }
};

Run004 parse004(const nlohmann::json& j) {
  Run004 r;
  const auto& t = j.at("stages").at("total");
  r.cycles = t.at("cycles").get<uint64_t>();
  r.vertexCycles = j.at("stages").at("vertex").at("cycles").get<uint64_t>();
  r.fragmentCycles = j.at("stages").at("fragment").at("cycles").get<uint64_t>();
  r.clusterCycles = j.at("cluster").at("cycles").get<uint64_t>();
  r.inputAccess = t.at("input_access_cycles").get<uint64_t>();
  r.outputAccess = t.at("output_access_cycles").get<uint64_t>();
  r.inputClocked = t.at("input_clocked_cycles").get<uint64_t>();
  r.outputClocked = t.at("output_clocked_cycles").get<uint64_t>();
  r.wake = t.at("wake_cycles").get<uint64_t>();
  const auto& e = t.at("energy");
  r.eIn = e.at("input_buffer").get<double>();
  r.eOut = e.at("output_buffer").get<double>();
  r.eTemp = e.at("temporaries").get<double>();
  r.eCore = e.at("core").get<double>();
  r.eTotal = e.at("total").get<double>();
  const auto& c = j.at("compiler");
  r.vertexRegs = c.at("vertex").at("register_requirement").get<int>();
  r.fragmentRegs = c.at("fragment").at("register_requirement").get<int>();
  r.vertexSpilled = c.at("vertex").at("spilled").get<int>();
  r.fragmentSpilled = c.at("fragment").at("spilled").get<int>();
  return r;
}

// Naive code motion of `scope` fits both programs of `b` in the temporaries.
bool naiveApplies(const shaders::ShaderBenchmark& b, const Scope& scope) {
  shader::CompileOptions opts;
  if (scope.input) opts.inputMotion = "naive";
  if (scope.output) opts.outputMotion = "naive";
  try {
    shader::compile(b.vertex, opts);
    shader::compile(b.fragment, opts);
  } catch (const InputError&) {
    return false;
  }
  return true;
}

// A change in percent, "-" when there is none.
std::string change(const std::vector<double>& ratios) { return meanPct(ratios); }

}  // namespace

int seed004(const ExperimentOptions& o) {
  cli::refuseRepeatedValues(o.kernels, "--kernel");
  std::vector<std::string> names = o.kernels;
  if (names.empty() || (names.size() == 1 && names[0] == "all")) names = shaders::names();
  std::map<std::string, shaders::ShaderBenchmark> bench;
  for (const auto& n : names) bench[n] = shaders::load(n);  // InputError for a misspelled name

  const std::vector<Config004> configs = configs004();
  std::vector<RunSpec> specs;
  std::vector<std::pair<std::string, const Config004*>> order;       // per spec
  std::map<std::string, std::map<std::string, std::string>> status;  // "n/a" or an error
  for (const auto& n : names)
    for (const Config004& c : configs) {
      if (c.method && std::string(c.method->key) == "naive-motion" &&
          !naiveApplies(bench[n], *c.scope)) {
        status[n][c.key] = "n/a";
        continue;
      }
      RunSpec s;
      s.label = fmt::format("{} {}", n, c.key);
      s.command = {"shader", "run"};
      s.outDir = (fs::path(o.work) / "seed004" / n / c.key).string();
      s.args = {"--shader", n};
      for (const auto& set : c.sets) {
        s.args.push_back("--set");
        s.args.push_back(set);
      }
      specs.push_back(s);
      order.push_back({n, &c});
    }
  const std::vector<RunOutcome> results = runAll(selfExecutable(), specs, o.jobs);

  std::map<std::string, std::map<std::string, Run004>> runs;
  int failures = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& [n, c] = order[i];
    if (results[i].ok && results[i].stats.at("check").at("pass").get<bool>()) {
      runs[n][c->key] = parse004(results[i].stats);
    } else {
      ++failures;
      status[n][c->key] = results[i].ok ? "check failed" : results[i].error;
    }
  }

  std::string csv =
      "shader,config,gated,method,branch_policy,join_policy,status,cycles,vertex_cycles,"
      "fragment_cycles,cluster_cycles,input_access_cycles,output_access_cycles,input_clocked_"
      "cycles,"
      "output_clocked_cycles,wake_cycles,energy_input_buffer,energy_output_buffer,"
      "energy_temporaries,energy_core,energy_total,vertex_registers,fragment_registers,"
      "vertex_spilled,fragment_spilled\n";
  for (const auto& n : names)
    for (const Config004& c : configs) {
      std::string branch = "large-cluster", join = "duplication-allowed";
      for (const char* b : kBranchPolicies)
        if (c.key.find(b) != std::string::npos) branch = b;
      for (const char* j : kJoinPolicies)
        if (c.key.find(j) != std::string::npos) join = j;
      const std::string gated = c.scope ? c.scope->key : c.key == "baseline" ? "none" : "input";
      const std::string method = c.method ? c.method->key : c.key == "baseline" ? "none" : "global";
      const auto it = runs[n].find(c.key);
      if (it == runs[n].end()) {
        csv += fmt::format("{},{},{},{},{},{},\"{}\"{}\n", n, c.key, gated, method, branch, join,
                           status[n][c.key], std::string(18, ','));
        continue;
      }
      const Run004& r = it->second;
      csv += fmt::format(
          "{},{},{},{},{},{},ok,{},{},{},{},{},{},{},{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{},{}"
          ","
          "{},{}\n",
          n, c.key, gated, method, branch, join, r.cycles, r.vertexCycles, r.fragmentCycles,
          r.clusterCycles, r.inputAccess, r.outputAccess, r.inputClocked, r.outputClocked, r.wake,
          r.eIn, r.eOut, r.eTemp, r.eCore, r.eTotal, r.vertexRegs, r.fragmentRegs, r.vertexSpilled,
          r.fragmentSpilled);
    }

  // The ratio of a metric under `key` to the baseline's, per benchmark of `set` that has both.
  auto ratios = [&](const std::vector<std::string>& set, const std::string& key,
                    double (*metric)(const Run004&)) {
    std::vector<double> out;
    for (const auto& n : set) {
      auto& m = runs[n];
      if (m.count(key) && m.count("baseline") && metric(m["baseline"]) > 0)
        out.push_back(metric(m[key]) / metric(m["baseline"]));
    }
    return out;
  };
  auto cell = [&](const std::string& n, const std::string& key, double (*metric)(const Run004&)) {
    auto& m = runs[n];
    if (!m.count(key) || !m.count("baseline"))
      return status[n].count(key) ? status[n][key] : std::string("-");
    return pct(metric(m[key]) / metric(m["baseline"]));
  };
  using Metric = double (*)(const Run004&);
  const Metric inputEnergy = [](const Run004& r) { return r.eIn; };
  const Metric outputEnergy = [](const Run004& r) { return r.eOut; };
  const Metric ioEnergy = [](const Run004& r) { return r.eIn + r.eOut; };
  const Metric cycles = [](const Run004& r) { return double(r.cycles); };
  const Metric energy = [](const Run004& r) { return r.eTotal; };
  const Metric edp = [](const Run004& r) { return r.edp(); };

  std::vector<std::string> paperSet;
  for (const auto& n : names)
    if (paperRow(bench[n].draw.paperName)) paperSet.push_back(n);

  std::string md = fmt::format(
      "# Seed 004 study: results\n\n"
      "Generated by `gpusc experiment seed004{}` (do not edit; see seed004.md for the "
      "discussion). Each benchmark's draw (its `stimuli/shaders/<name>/<name>.yaml`) runs on "
      "`shader-cluster`; cycles are the cores' cycles over every vertex and fragment invocation "
      "(the paper's execution cycles), energy is Table VI's per-cycle power times the cycles each "
      "component is clocked, EDP is energy x cycles. Changes are relative to no clock gating "
      "and no code motion; means are arithmetic means of the per-benchmark ratios. \"n/a\": naive "
      "code motion would need more than the core's eight temporaries (the paper's compiler "
      "fails on such programs).\n\n",
      o.kernels.empty() ? "" : " --kernel " + join(o.kernels, " --kernel "));

  md +=
      "## The benchmarks (paper Table V)\n\n"
      "Baseline runs. Fragment share: the fragment invocations' part of the cycles. Input / "
      "output: cycles that access the buffer, over all cycles. Registers: the highest register "
      "pressure, fragment / vertex program (spills to the output buffer in brackets).\n\n"
      "| shader | fragment share | paper | input | paper | output | paper | registers | paper |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& n : names) {
    if (!runs[n].count("baseline")) continue;
    const Run004& b = runs[n]["baseline"];
    const PaperRow* p = paperRow(bench[n].draw.paperName);
    const auto share = [](uint64_t a, uint64_t all) {
      return fmt::format("{:.1f}%", all ? 100.0 * double(a) / double(all) : 0.0);
    };
    const auto spill = [](int s) { return s ? fmt::format(" ({})", s) : std::string(); };
    md += fmt::format(
        "| `{}` | {} | {} | {} | {} | {} | {} | {}{} / {}{} | {} |\n", n,
        share(b.fragmentCycles, b.cycles), p ? fmt::format("{:.1f}%", p->fragmentShare) : "-",
        share(b.inputAccess, b.cycles), p ? fmt::format("{:.1f}%", p->inputShare) : "-",
        share(b.outputAccess, b.cycles), p ? fmt::format("{:.1f}%", p->outputShare) : "-",
        b.fragmentRegs, spill(b.fragmentSpilled), b.vertexRegs, spill(b.vertexSpilled),
        p ? fmt::format("{} / {}", p->fragmentRegs, p->vertexRegs) : "-");
  }

  // One section per gated buffer set: per benchmark, the gated buffers' energy, the cycles, the
  // shader's energy and EDP under each method.
  for (const Scope& s : kScopes) {
    const Metric buffer = s.input && s.output ? ioEnergy : s.input ? inputEnergy : outputEnergy;
    md += fmt::format(
        "\n## Clock gating of the {} (paper Sec. 5.2.{})\n\n"
        "Each cell: naive clock gating / local / local + global / naive code motion.\n\n"
        "| shader | {} energy | cycles | shader energy | EDP |\n|---|---|---|---|---|\n",
        s.label,
        s.input && s.output ? 3
        : s.input           ? 1
                            : 2,
        s.input && s.output ? "I/O buffer" : s.label);
    for (const auto& n : names) {
      md += "| `" + n + "` |";
      for (Metric m : {buffer, cycles, energy, edp}) {
        std::vector<std::string> cells;
        for (const Method& meth : kMethods) cells.push_back(cell(n, configKey(s, meth), m));
        md += " " + join(cells, " / ") + " |";
      }
      md += "\n";
    }
  }

  // The averages beside the paper's.
  struct PaperAvg {
    const char* scope;
    const char* metric;
    const char* values[4];  // per method, "" when the paper gives none
  };
  const PaperAvg paper[] = {
      {"input", "input-buffer energy", {"-85.6%", "-96.1%", "-96.8%", ""}},
      {"input", "cycles", {"+18.4%", "+7.4%", "+5.3%", ""}},
      {"input", "shader energy", {"+9.8%", "-1.8%", "-3.9%", ""}},
      {"input", "EDP", {"", "", "-3.0%", ""}},
      {"output", "output-buffer energy", {"", "", "", ""}},
      {"output", "cycles", {"+7.9%", "", "+7.3%", ""}},
      {"output", "shader energy", {"-6.9%", "", "-7.6%", ""}},
      {"output", "EDP", {"", "", "-0.7%", ""}},
      {"both", "I/O buffer energy", {"-90.7%", "-94.3%", "-94.7%", ""}},
      {"both", "cycles", {"+26.1%", "+15.0%", "+12.4%", ""}},
      {"both", "shader energy", {"-0.9%", "-11.0%", "-13.1%", ""}},
      {"both", "EDP", {"+25.1%", "+2.7%", "-2.2%", ""}},
  };
  auto summary = [&](const std::vector<std::string>& set, const std::string& title,
                     bool withPaper) {
    md += fmt::format(
        "\n## Averages over {}\n\n"
        "Each cell: ours{}. Naive code motion: the mean over the benchmarks it applies to "
        "(how many in brackets); the paper gives no averages for it (it applied to Blur0, Blur1 "
        "and HGaussianBlur only).\n\n"
        "| gated | metric | naive clock gating | local | local + global | naive code motion "
        "|\n|---|---|---|---|---|---|\n",
        title, withPaper ? " (paper)" : "");
    for (const PaperAvg& p : paper) {
      const Scope* s = nullptr;
      for (const Scope& x : kScopes)
        if (std::string(x.key) == p.scope) s = &x;
      const std::string metric = p.metric;
      const Metric m = metric == "cycles"          ? cycles
                       : metric == "shader energy" ? energy
                       : metric == "EDP"           ? edp
                       : s->input && s->output     ? ioEnergy
                       : s->input                  ? inputEnergy
                                                   : outputEnergy;
      md += fmt::format("| {} | {} |", s->label, metric);
      for (size_t k = 0; k < 4; ++k) {
        const std::vector<double> r = ratios(set, configKey(*s, kMethods[k]), m);
        std::string c = change(r);
        if (k == 3 && !r.empty()) c += fmt::format(" ({})", r.size());
        if (withPaper && *p.values[k]) c += fmt::format(" ({})", p.values[k]);
        md += " " + c + " |";
      }
      md += "\n";
    }
  };
  summary(paperSet, fmt::format("the paper's nine programs ({} here)", paperSet.size()), true);
  summary(names, fmt::format("all {} benchmarks", names.size()), false);

  md +=
      "\n## Global code motion's policies (input buffer gated)\n\n"
      "Means over the paper's nine programs of the change against the baseline. The paper: the "
      "policies differ by less than 3 points; duplication-allowed is slightly better than "
      "-forbidden, zero-or-all the worst.\n\n"
      "| branch point | join point | input-buffer energy | cycles | shader energy |\n"
      "|---|---|---|---|---|\n";
  for (const char* b : kBranchPolicies)
    for (const char* j : kJoinPolicies) {
      const std::string key = fmt::format("policy-{}-{}", b, j);
      md += fmt::format(
          "| {} | {} | {} | {} | {} |\n", b, j, change(ratios(paperSet, key, inputEnergy)),
          change(ratios(paperSet, key, cycles)), change(ratios(paperSet, key, energy)));
    }
  if (failures) md += fmt::format("\n{} runs failed; see the CSV's status column.\n", failures);

  writeText(fs::path(o.out) / "seed004.csv", csv);
  writeText(fs::path(o.out) / "seed004-results.md", md);
  std::cerr << fmt::format("gpusc: wrote {} and {}\n", (fs::path(o.out) / "seed004.csv").string(),
                           (fs::path(o.out) / "seed004-results.md").string());
  return failures ? 1 : 0;
}

}  // namespace gpusc::cli
