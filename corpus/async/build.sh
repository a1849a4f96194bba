#!/usr/bin/env bash
# Regenerates the PTX of mbarrier.cu and intra_warp.cu with the pinned nvcc (bash corpus/regen.sh --install-only installs it).
# Tests never run this: the PTX is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvcc="$here/../.toolchain/cuda13/nvidia/cu13/bin/nvcc"
ptxas="$here/../.toolchain/cuda13/nvidia/cu13/bin/ptxas"
cd "$here"
for src in mbarrier intra_warp; do
  for arch in sm_80 sm_90; do
    out="$src.$arch.ptx"
    # -diag-suppress 20054: libcu++'s barrier in __shared__ has a constructor; init() does its work.
    "$nvcc" -arch=$arch -ptx -O3 -std=c++17 -diag-suppress 20054 "$src.cu" -o "$out.tmp"
    { printf '//\n// Produced by %s with: nvcc -arch=%s -ptx -O3 -std=c++17 %s.cu\n' \
        "$("$nvcc" --version | tail -n 2 | head -n 1)" "$arch" "$src"; cat "$out.tmp"; } > "$out"
    rm "$out.tmp"
    "$ptxas" -arch=$arch "$out" -o /dev/null
  done
done
