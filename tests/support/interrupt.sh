#!/usr/bin/env bash
# Sends SIGNAL to `gpusc run` of a never-ending launch spec after a second and checks that the
# run stops cleanly: exit code 6, the partial results written and marked incomplete, no
# temporary files left. With COPIES 2 the signal is sent twice at once, as coreutils' `timeout`
# sends it (to gpusc and to its process group): one request, the same clean stop. Used by the
# cli.interrupt_* tests.
#   interrupt.sh GPUSC WORKDIR SPEC SIGNAL MODE [COPIES]
set -u
exe=$1 work=$2 spec=$3 sig=$4 mode=$5 copies=${6:-1}
fail() {
  echo "FAIL: $*"
  echo "--- output ---"
  cat "$work/output.txt"
  exit 1
}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$exe" run --launch "$spec" --mode "$mode" --out out >output.txt 2>&1 &
pid=$!
sleep 1
for ((i = 0; i < copies; ++i)); do kill "-$sig" "$pid"; done
wait "$pid"
rc=$?
[[ $rc == 6 ]] || fail "exit code $rc, expected 6"
grep -q "gpusc: run interrupted after" output.txt || fail "no interrupt message"
grep -q '"complete": false' out/stats.json || fail "stats.json is not marked incomplete"
grep -q '"stopped_by": "interrupted"' out/stats.json || fail "stats.json does not say why"
grep -q 'limits' out/config.yaml || fail "config.yaml was not written"
if ls out | grep -q 'tmp-'; then fail "temporary files left: $(ls out)"; fi
echo "PASS: $sig ($copies at once) stopped the $mode run with exit code 6"
