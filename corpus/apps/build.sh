#!/usr/bin/env bash
# Build the CUDA application corpus: every program in corpus/apps/src into
# corpus/apps/bin/<name>. The binaries are committed (tests never need nvcc).
#
#   corpus/apps/build.sh            # build everything
#   corpus/apps/build.sh NAME...    # build only the named programs
#
# For a run on a real GPU whose driver is older than this nvcc (it cannot JIT
# newer PTX: cudaErrorUnsupportedPtxVersion), add SASS for that GPU and build
# into another folder, leaving the committed binaries alone:
#
#   APPS_BIN=/tmp/gpu-bin APPS_EXTRA_FLAGS="-gencode arch=compute_90,code=sm_90" corpus/apps/build.sh
#   APPS_BIN=/tmp/gpu-bin corpus/apps/check.sh /path/to/nvidia/lib
#
# nvcc: $NVCC if set, else nvcc on PATH, else the CUDA 13 toolchain that
# `corpus/regen.sh --install-only` installs under corpus/.toolchain (installed
# on demand). Every program links the CUDA runtime dynamically
# (-cudart shared -> DT_NEEDED libcudart.so.13), so lockstep's drop-in
# libcudart.so.13 can be put in its place with LD_LIBRARY_PATH.
#
# Sources are copied to a fixed staging directory and compiled with relative
# paths, so nothing in a binary depends on where the checkout lives
# (__FILE__ in the CHECK messages reads e.g. "src/vector_add.cu").
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CORPUS="$(cd "$HERE/.." && pwd)"
STAGE=/tmp/lockstep-apps-build

log() { printf '[apps] %s\n' "$*" >&2; }

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

# Common flags for every program. -cudart shared is mandatory.
COMMON=(-O2 -cudart shared)
SM80=(-arch=sm_80)
MULTI=(-gencode arch=compute_75,code=sm_75
       -gencode "arch=compute_80,code=[sm_80,compute_80]"
       -gencode arch=compute_90,code=compute_90)

# name | sources (relative to src/, space separated) | extra flags
# Flags are word-split; keep them free of spaces inside one flag.
PROGRAMS=(
  "vector_add|vector_add.cu|${SM80[*]}"
  "vector_add_nocompress|vector_add.cu|${SM80[*]} -no-compress"
  "vector_add_lz4|vector_add.cu|${SM80[*]} -compress-mode=speed"
  "vector_add_sass_only|vector_add.cu|-gencode arch=compute_80,code=sm_80"
  "managed|managed.cu|${SM80[*]}"
  "streams_events|streams_events.cu|${SM80[*]}"
  "symbols|symbols.cu|${SM80[*]}"
  "templates|templates.cu|${SM80[*]} --extended-lambda -std=c++17"
  "printf|printf.cu|${SM80[*]}"
  "errors|errors.cu|${SM80[*]}"
  "fault|fault.cu|${SM80[*]}"
  "thrust|thrust.cu|${SM80[*]} -std=c++17"
  "cub|cub.cu|${SM80[*]} -std=c++17"
  "two_units|two_units/main.cu two_units/second.cu|${SM80[*]}"
  "rdc|rdc/main.cu rdc/kernels.cu rdc/util.cu|${SM80[*]} -rdc=true"
  "rdc_ptx|rdc/main.cu rdc/kernels.cu rdc/util.cu|-gencode arch=compute_80,code=compute_80 -rdc=true"
  "textures|textures.cu|${SM80[*]}"
  "bfs|bfs.cu|${SM80[*]}"
  "host_threads|host_threads.cu|${SM80[*]} -std=c++17"
  "multi_arch|multi_arch.cu|${MULTI[*]}"
  "matmul|matmul.cu|${SM80[*]}"
  "legacy|legacy.cu|${SM80[*]}"
  "reduce_atomic|reduce_atomic.cu|${SM80[*]}"
  "stencil2d|stencil2d.cu|${SM80[*]}"
  "coop_groups|coop_groups.cu|${SM80[*]} -std=c++17"
  "device_heap|device_heap.cu|${SM80[*]}"
  "launch_overhead|launch_overhead.cu|${SM80[*]}"
  "async_copy|async_copy.cu|${SM80[*]} -std=c++17"
  "fp8|fp8.cu|-arch=sm_90 -std=c++17"
  "simd_video|simd_video.cu|${SM80[*]}"
  "tma|tma.cu|-arch=sm_90a -std=c++17 -diag-suppress=1444"
  "grid_sync|grid_sync.cu|${SM80[*]} -std=c++17"
  "mem_pools|mem_pools.cu|${SM80[*]}"
  "func_params|func_params.cu|${SM80[*]}"
  "array_copies|array_copies.cu|${SM80[*]} -Xcompiler=-Wno-deprecated-declarations"
  "graphs|graphs.cu|${SM80[*]} -std=c++17"
  "graph_memory|graph_memory.cu|${SM80[*]} -std=c++17"
  "memcpy_batch|memcpy_batch.cu|${SM80[*]}"
  "library|library.cu|${SM80[*]} -std=c++17"
)

main() {
  local nvcc
  nvcc="$(find_nvcc)"
  local nvcc_dir
  nvcc_dir="$(cd "$(dirname "$nvcc")" && pwd)"
  echo "nvcc: $nvcc"
  "$nvcc" --version | sed 's/^/  /'
  echo "common flags: ${COMMON[*]}"

  rm -rf "$STAGE"
  local bin="${APPS_BIN:-$HERE/bin}"
  # shellcheck disable=SC2206
  local extra=(${APPS_EXTRA_FLAGS:-})
  mkdir -p "$STAGE/lib" "$bin"
  cp -r "$HERE/src" "$STAGE/src"
  # nvcc records its library search path in the binaries: run it through a
  # fixed symlink so the checkout's location does not leak into them.
  ln -s "$(cd "$nvcc_dir/.." && pwd)" "$STAGE/cuda"
  local staged_nvcc="$STAGE/cuda/bin/$(basename "$nvcc")"
  # The PyPI runtime wheel ships only libcudart.so.13; -cudart shared links
  # -lcudart, so provide the unversioned name (DT_NEEDED stays the soname).
  local rt
  for rt in "$nvcc_dir/../lib/libcudart.so.13" "$nvcc_dir/../lib64/libcudart.so.13"; do
    if [[ -e $rt ]]; then ln -sf "$rt" "$STAGE/lib/libcudart.so"; break; fi
  done

  local want=("$@") entry name srcs flags built=0
  for entry in "${PROGRAMS[@]}"; do
    IFS='|' read -r name srcs flags <<<"$entry"
    if [[ ${#want[@]} -gt 0 && " ${want[*]} " != *" $name "* ]]; then continue; fi
    # shellcheck disable=SC2206
    local srcarr=($srcs) flagarr=($flags)
    local srcpaths=() s
    for s in "${srcarr[@]}"; do srcpaths+=("src/$s"); done
    echo "build $name: nvcc ${COMMON[*]} ${flagarr[*]} ${srcpaths[*]} -o bin/$name"
    (cd "$STAGE" && "$staged_nvcc" "${COMMON[@]}" "${flagarr[@]}" "${extra[@]}" -Isrc -L"$STAGE/lib" \
        "${srcpaths[@]}" -o "$STAGE/$name") || { log "FAILED: $name"; exit 1; }
    cp "$STAGE/$name" "$bin/$name"
    built=$((built + 1))
  done
  rm -rf "$STAGE"
  echo "built $built programs into $bin"
}

main "$@"
