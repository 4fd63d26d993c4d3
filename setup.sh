#!/usr/bin/env bash
# Installs the Debian 12 packages gpusc needs to build and test. Idempotent: packages already
# present are skipped, so this is cheap to run before every build.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config clang-format
  lld                       # a faster linker, used when present
  libsystemc-dev            # SystemC 2.3.4 + TLM-2.0 (built for C++17)
  libboost-dev libboost-graph-dev
  libyaml-cpp-dev nlohmann-json3-dev libfmt-dev libcli11-dev libeigen3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev            # the sweep engine's results database
  libzstd-dev liblz4-dev    # CUDA programs: the compressed PTX in nvcc's fat binaries
  munge slurmctld slurmd slurm-client  # test cli.sweep_slurm: a single-node Slurm cluster for the sweeps' Slurm backend
  spirv-tools spirv-headers # the shader front end reads SPIR-V (validation, disassembly)
  glslang-tools             # GLSL -> SPIR-V for stimuli/shaders/regen_spirv.sh (not needed to build)
  python3 python3-jsonschema  # the test that every stats.json follows docs/stats.schema.json
  clang libclang-rt-14-dev  # ./build.sh sanitize and fuzz: clang with the ASan, UBSan and libFuzzer runtimes
  verilator                 # RTL co-simulation: models/rtl/verilog verilated into the build
  yosys                     # the RTL blocks' area (`gpusc rtl area`, test cli.rtl_area)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup.sh: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
