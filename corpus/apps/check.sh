#!/usr/bin/env bash
# Run the committed corpus programs (bin/) as tests.tsv lists them and compare
# each one's stdout byte for byte with expected/, and its exit status.
#
#   corpus/apps/check.sh [LIBDIR] [NAME...]
#
# LIBDIR: a directory holding the libcudart.so.13 to test (prepended to
# LD_LIBRARY_PATH); without it the programs load whatever the dynamic loader
# finds. NAME...: only these programs. stderr is kept out of the comparison
# (device-side assert messages and runtime diagnostics go there). Each run
# has a 60 s timeout. Exits 0 when every run passed. Needs no CUDA toolchain.
# APPS_BIN: run the programs in that folder instead of bin/ (see build.sh).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -gt 0 && -d $1 ]]; then
  export LD_LIBRARY_PATH="$(cd "$1" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  shift
fi
want=("$@")
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

pass=0
fail=0
while IFS=$'\t' read -r name args expected status; do
  [[ -z $name || $name == \#* ]] && continue
  if [[ ${#want[@]} -gt 0 && " ${want[*]} " != *" $name "* ]]; then continue; fi
  argv=()
  [[ $args != - ]] && read -r -a argv <<<"$args"
  label="$name${argv[*]:+ ${argv[*]}}"
  timeout 60 "${APPS_BIN:-$HERE/bin}/$name" "${argv[@]}" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ok=1
  why=""
  if [[ $status == refused ]]; then
    [[ $rc -ne 0 ]] || { ok=0; why="expected a refusal (non-zero exit), got exit 0"; }
  else
    [[ $rc -eq $status ]] || { ok=0; why="exit status $rc, expected $status"; }
    if [[ $expected != - ]] && ! cmp -s "$HERE/expected/$expected" "$tmp/out"; then
      ok=0
      why="${why:+$why; }stdout differs from expected/$expected"
    fi
  fi
  if [[ $ok -eq 1 ]]; then
    pass=$((pass + 1))
    printf 'ok      %s\n' "$label"
  else
    fail=$((fail + 1))
    printf 'FAILED  %s: %s\n' "$label" "$why"
    if [[ $expected != - && $status != refused ]]; then
      diff -u "$HERE/expected/$expected" "$tmp/out" | head -n 40 | sed 's/^/    /'
    fi
    head -n 20 "$tmp/err" | sed 's/^/    stderr: /'
  fi
done <"$HERE/tests.tsv"
printf '%d passed, %d failed\n' "$pass" "$fail"
[[ $fail -eq 0 ]]
