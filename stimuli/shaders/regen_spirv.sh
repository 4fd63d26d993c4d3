#!/usr/bin/env bash
# Regenerates the SPIR-V committed beside each shader (<name>.vert.spv, <name>.frag.spv) from its
# GLSL ES 1.00 source with glslang (Debian package glslang-tools). gpusc reads only the SPIR-V, so
# it builds and runs without glslang.
#
# glslang compiles ES shaders to SPIR-V from version 310 on, so each source goes through its
# front end as "#version 310 es" after the prelude es100_prelude.<stage> (defines for the ES 1.00
# names: attribute, varying, texture2D, gl_FragColor); the source's own #version line becomes
# blank and a #line directive keeps the messages' line numbers those of the source. -G: OpenGL
# semantics (loose uniforms); --aml/--amb: locations and bindings in declaration order; -Os: SSA
# form, functions inlined. `gpusc shader compile|run` does the same for a GLSL file it is given
# (stimuli/shader_catalog.cpp, with these preludes compiled in).
#
#   stimuli/shaders/regen_spirv.sh            every shader
#   stimuli/shaders/regen_spirv.sh pom toon   some
#   regen_spirv.sh --one FILE OUT             one source file to OUT
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v glslangValidator >/dev/null || { echo "regen_spirv.sh: glslangValidator not found (apt-get install glslang-tools)" >&2; exit 2; }

compile() {  # source out
  local src=$1 out=$2 stage tmp base
  case "$src" in
    *.vert) stage=vert ;;
    *.frag) stage=frag ;;
    *) echo "regen_spirv.sh: $src: expected a .vert or .frag file" >&2; exit 2 ;;
  esac
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  base=$(basename "$src")
  { echo "#version 310 es"; cat "$here/es100_prelude.$stage"; echo "#line 1"
    sed -E 's/^[[:space:]]*#[[:space:]]*version.*$//' "$src"; } > "$tmp/$base"
  if ! (cd "$tmp" && glslangValidator -G --aml --amb -Os -S "$stage" -o "$tmp/out.spv" "$base" > "$tmp/log" 2>&1); then
    grep -E "ERROR" "$tmp/log" | sed "s|$base|$src|" >&2
    exit 2
  fi
  cp "$tmp/out.spv" "$out"
}

if [[ ${1:-} == --one ]]; then
  compile "$2" "$3"
  exit 0
fi
names=("$@")
if ((${#names[@]} == 0)); then
  for d in "$here"/*/; do names+=("$(basename "$d")"); done
fi
for n in "${names[@]}"; do
  for s in vert frag; do
    compile "$here/$n/$n.$s" "$here/$n/$n.$s.spv"
  done
  echo "regen_spirv.sh: $n"
done
