// Sweep specs (docs/sweeps.md): a base platform, kernels, named variants and axes over platform
// keys, expanded into points. Each point is one `gpusc run`: a kernel at a size (or a launch
// spec), a platform and a list of --set overrides; its fully resolved configuration (the
// config.yaml the run writes) and its work's identity are hashed into the point's id.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpusc::cli {

// One --set override of a point and where in the spec it came from (for error messages).
struct SpecOverride {
  std::string assignment;  // "gpu.num_sms=16"
  std::string where;       // "sweep.yaml:12:5"
  std::string origin;      // "axes.grid.gpu.num_sms"
};

struct SweepKernel {
  std::string name;    // catalog kernel, or the launch spec's file stem
  std::string size;    // catalog size (tiny | small | default); empty for a launch spec
  std::string launch;  // absolute path of a launch spec; empty for a catalog kernel
  std::string where;
  // A CUDA program and its arguments (gpusc exec; the program's path absolute); empty otherwise.
  std::vector<std::string> exec = {};
};

struct SweepVariant {
  std::string name;
  std::string platform;  // empty: the spec's platform
  std::string platformWhere;
  std::vector<SpecOverride> sets;
};

// One combination of axis values: the overrides (platform: a value of the `platform` axis).
struct AxisCombo {
  std::vector<SpecOverride> sets;
  std::string platform;
  std::string platformWhere;
  nlohmann::json values = nlohmann::json::object();  // key -> value, for the results table
};

struct SweepSpec {
  std::string file;      // as given
  std::string name;      // `name`, or the file's stem
  std::string platform;  // built-in name or absolute path
  std::string platformWhere;
  std::string mode = "timing";
  std::vector<SweepKernel> kernels;    // one per kernel and size
  std::vector<SpecOverride> sets;      // `set` and `limits`: every point
  std::vector<SweepVariant> variants;  // at least one (`base` when the spec names none)
  std::vector<AxisCombo> combos;       // at least one (empty when the spec has no axes)
  std::vector<std::string> axisKeys;   // in spec order
};

struct SweepPoint {
  std::string label;  // "kernel@size/variant/key=value,..." unique within the sweep
  std::string kernel, size, launch, variant, platform, mode;
  std::vector<std::string> exec;  // a CUDA program and its arguments: the point is a gpusc exec
  nlohmann::json axes = nlohmann::json::object();
  std::vector<SpecOverride> sets;  // spec `set`/`limits`, then the variant's, then the axes'
  std::string configYaml;          // the resolved configuration, as the run's config.yaml
  std::string hash;                // sha-256 of the point's identity (pointIdentity)
  std::string dirName() const { return hash.substr(0, 16); }
  // The gpusc subcommand that runs this point (run, or exec for a program) and its arguments
  // (without --out, --quiet, --force; a program's after "--").
  std::vector<std::string> command() const { return {exec.empty() ? "run" : "exec"}; }
  std::vector<std::string> runArgs() const;
};

// A point as JSON and back (the overrides' places in the spec are not kept): what a Slurm
// array's tasks read instead of expanding the spec again.
nlohmann::json pointToJson(const SweepPoint& p);
SweepPoint pointFromJson(const nlohmann::json& j);

// Reads and validates a spec. Throws InputError "FILE:LINE:COL: KEY: message".
SweepSpec loadSweepSpec(const std::string& path);
SweepSpec parseSweepSpec(const std::string& text, const std::string& fileName,
                         const std::string& baseDir);

// Every point of the spec (kernels x variants x axis combinations), each with its resolved
// configuration and hash. A value a platform key rejects is an InputError at its place in the
// spec.
std::vector<SweepPoint> expandPoints(const SweepSpec& spec);

// The text a point's hash is computed from: the mode, the work (catalog kernel and size, the
// launch spec's, PTX's and data files' contents, or the program's contents and arguments) and the
// resolved configuration.
std::string pointIdentity(const SweepPoint& p, const std::string& workIdentity);
// The work part of it (reads the launch spec's files).
std::string workIdentity(const SweepKernel& k);

}  // namespace gpusc::cli
