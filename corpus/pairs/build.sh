#!/usr/bin/env bash
# Build the CUDA sides of the paired corpus: src/<source>.cu -> bin/<name>.
# The binaries are committed (tests and `lockstep validate` never run nvcc).
# The CPU sides are compiled by `lockstep validate` itself (gcc/g++ at each -O
# level plus the pair's cflags from pairs.toml).
#
#   corpus/pairs/build.sh            # build everything
#   corpus/pairs/build.sh NAME...    # build only the named programs
#
# nvcc: $NVCC if set, else nvcc on PATH, else the CUDA 13 toolchain under
# corpus/.toolchain (corpus/regen.sh --install-only installs it).
#
# Flags: -O2 -cudart shared -arch=sm_80 (sm_80 SASS plus compute_80 PTX, which
# lockstep loads) and -fmad=false: the CPU side (x86-64 baseline, no FMA) does
# every float multiply and add separately, so with contraction off both sides
# round identically and print the same checksums.
#
# Sources are copied to a fixed staging directory and compiled with relative
# paths, so nothing in a binary depends on where the checkout lives.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CORPUS="$(cd "$HERE/.." && pwd)"
STAGE=/tmp/lockstep-pairs-build

log() { printf '[pairs] %s\n' "$*" >&2; }

find_nvcc() {
  if [[ -n ${NVCC:-} ]]; then echo "$NVCC"; return; fi
  if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
  local tc="$CORPUS/.toolchain/cuda13/nvidia/cu13/bin/nvcc"
  if [[ ! -x $tc ]]; then
    log "no nvcc found: installing the toolchain with corpus/regen.sh --install-only"
    "$CORPUS/regen.sh" --install-only >&2
  fi
  echo "$tc"
}

COMMON=(-O2 -cudart shared -arch=sm_80 -fmad=false)

# name | source (relative to src/) | extra flags (word-split)
PROGRAMS=(
  "vecadd|vecadd.cu|"
  "vecadd_stride4|vecadd_strided.cu|"
  "vecadd_stride32|vecadd_strided.cu|"
  "matmul|matmul.cu|"
  "stencil|stencil.cu|"
  "bfs|bfs.cu|"
  "spmv|spmv.cu|"
  "pagerank|pagerank.cu|"
  "nw|nw.cu|"
  "pathfinder|pathfinder.cu|"
  "lud|lud.cu|"
  "kmeans|kmeans.cu|"
  "mandelbrot|mandelbrot.cu|"
  "particlefilter|particlefilter.cu|"
  "histogram|histogram.cu|"
  "virtual_mixed|virtual.cu|"
  "virtual_sorted|virtual.cu|"
  "lock_bucket|locks.cu|"
  "lock_global|locks.cu|"
  "lock_spin|locks.cu|"
  "lock_global_spin|locks.cu|"
  "halfdiv|halfdiv.cu|"
)

main() {
  local nvcc
  nvcc="$(find_nvcc)"
  local nvcc_dir
  nvcc_dir="$(cd "$(dirname "$nvcc")" && pwd)"
  echo "nvcc: $nvcc"
  "$nvcc" --version | tail -n 2 | sed 's/^/  /'
  echo "common flags: ${COMMON[*]}"

  rm -rf "$STAGE"
  # PAIRS_BIN / PAIRS_EXTRA_FLAGS: another output folder and more nvcc flags, for a run on a real GPU
  # whose driver cannot JIT this nvcc's PTX (add its SASS, e.g. -gencode arch=compute_90,code=sm_90).
  local bin="${PAIRS_BIN:-$HERE/bin}"
  # shellcheck disable=SC2206
  local extra=(${PAIRS_EXTRA_FLAGS:-})
  mkdir -p "$STAGE/lib" "$bin"
  cp -r "$HERE/src" "$STAGE/src"
  ln -s "$(cd "$nvcc_dir/.." && pwd)" "$STAGE/cuda"
  local staged_nvcc="$STAGE/cuda/bin/$(basename "$nvcc")"
  local rt
  for rt in "$nvcc_dir/../lib/libcudart.so.13" "$nvcc_dir/../lib64/libcudart.so.13"; do
    if [[ -e $rt ]]; then ln -sf "$rt" "$STAGE/lib/libcudart.so"; break; fi
  done

  local want=("$@") entry name src flags built=0
  for entry in "${PROGRAMS[@]}"; do
    IFS='|' read -r name src flags <<<"$entry"
    if [[ ${#want[@]} -gt 0 && " ${want[*]} " != *" $name "* ]]; then continue; fi
    # shellcheck disable=SC2206
    local flagarr=($flags)
    echo "build $name: nvcc ${COMMON[*]} ${flagarr[*]} src/$src -o bin/$name"
    (cd "$STAGE" && "$staged_nvcc" "${COMMON[@]}" "${flagarr[@]}" "${extra[@]}" -Isrc -L"$STAGE/lib" \
        "src/$src" -o "$STAGE/$name") || { log "FAILED: $name"; exit 1; }
    cp "$STAGE/$name" "$bin/$name"
    built=$((built + 1))
  done
  rm -rf "$STAGE"
  echo "built $built programs into $bin"
}

main "$@"
