#!/usr/bin/env bash
# Regenerates the PTX of mbarrier.cu with the pinned nvcc (bash corpus/regen.sh --install-only installs it).
# Tests never run this: the PTX is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvcc="$here/../.toolchain/cuda13/nvidia/cu13/bin/nvcc"
ptxas="$here/../.toolchain/cuda13/nvidia/cu13/bin/ptxas"
cd "$here"
for arch in sm_80 sm_90; do
  out="mbarrier.$arch.ptx"
  "$nvcc" -arch=$arch -ptx -O3 -std=c++17 mbarrier.cu -o "$out.tmp"
  { printf '//\n// Produced by %s with: nvcc -arch=%s -ptx -O3 -std=c++17 mbarrier.cu\n' \
      "$("$nvcc" --version | tail -n 2 | head -n 1)" "$arch"; cat "$out.tmp"; } > "$out"
  rm "$out.tmp"
  "$ptxas" -arch=$arch "$out" -o /dev/null
done
