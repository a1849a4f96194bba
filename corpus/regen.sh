#!/usr/bin/env bash
# Regenerate the committed PTX corpus from the CUDA sources in corpus/cuda.
#
#   corpus/regen.sh                 # install toolchain if missing, rebuild all
#   corpus/regen.sh --install-only  # only fetch/unpack the toolchain
#   corpus/regen.sh --validate-only # only re-run ptxas over corpus/ptx
#
# Runnable from any directory; idempotent (re-running rewrites the same
# files). Not run by tests or CI: the PTX it produces is committed.
#
# Toolchain (all from registries, installed under corpus/.toolchain, which is
# gitignored):
#   * nvcc + ptxas 13.5.37 (PyPI: nvidia-cuda-nvcc, nvidia-nvvm,
#     nvidia-cuda-crt, nvidia-cuda-runtime, nvidia-cuda-cccl) -> sm_75..sm_90
#   * NVRTC + ptxas 12.9.86 (PyPI: nvidia-cuda-nvrtc-cu12, nvidia-cuda-nvcc-cu12,
#     nvidia-cuda-runtime-cu12, nvidia-cuda-cccl-cu12) -> sm_50, sm_60, sm_70
#     (CUDA 13 dropped these; the cu12 wheels ship no nvcc driver, so
#     tools/nvrtc_ptx.py drives libnvrtc through ctypes)
#   * clang 14 (Debian bookworm package "clang") -> corpus/ptx/clang
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TC="$HERE/.toolchain"
SRC="$HERE/cuda"
OUTDIR="$HERE/ptx"

CUDA13_VER=13.5.37
CCCL13_VER=13.3.5.0.6
CU12_NVCC_VER=12.9.86
CU12_NVRTC_VER=12.9.86
CU12_RUNTIME_VER=12.9.79
CU12_CCCL_VER=12.9.27

# Architectures per tool. -G output is large, so it is limited to a subset.
NVCC_ARCHS=(sm_75 sm_80 sm_86 sm_90)
NVRTC_ARCHS=(sm_50 sm_60 sm_70)
G_ARCHS=(sm_50 sm_70 sm_75 sm_80 sm_90)
CLANG_ARCHS=(sm_70 sm_80 sm_86)
CLANG_SOURCES=(workloads simt_stats int_arith control_flow barriers)
# Extra variants: source -> variant name and extra flags.
FASTMATH_SOURCES=(float_math)
RDC_SOURCES=(rdc_linkage)

# Compilers embed absolute source/include paths (.file directives, DWARF
# comp_dir). Building through a fixed staging directory keeps the committed
# PTX identical whichever checkout path regen.sh runs from.
STAGE=/tmp/lockstep-corpus

log() { printf '[regen] %s\n' "$*" >&2; }

install_cuda13() {
  local root="$TC/cuda13"
  if [[ -x "$root/nvidia/cu13/bin/nvcc" && -d "$root/nvidia/cu13/include/cccl" ]]; then return; fi
  log "installing CUDA $CUDA13_VER wheels into $root"
  mkdir -p "$TC/wheels13" "$root"
  python3 -m pip download --no-deps -d "$TC/wheels13" \
    "nvidia-cuda-nvcc==$CUDA13_VER" "nvidia-nvvm==$CUDA13_VER" \
    "nvidia-cuda-crt==$CUDA13_VER" "nvidia-cuda-runtime==$CUDA13_VER" \
    "nvidia-cuda-cccl==$CCCL13_VER"
  local w
  for w in "$TC"/wheels13/*.whl; do unzip -q -o "$w" -d "$root"; done
  chmod +x "$root"/nvidia/cu13/bin/* "$root"/nvidia/cu13/nvvm/bin/*
}

install_cuda12() {
  local root="$TC/cuda12"
  if [[ -f "$root/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" && -x "$root/nvidia/cuda_nvcc/bin/ptxas" ]]; then return; fi
  log "installing CUDA 12.9 NVRTC/ptxas wheels into $root"
  mkdir -p "$TC/wheels12" "$root"
  python3 -m pip download --no-deps -d "$TC/wheels12" \
    "nvidia-cuda-nvrtc-cu12==$CU12_NVRTC_VER" "nvidia-cuda-nvcc-cu12==$CU12_NVCC_VER" \
    "nvidia-cuda-runtime-cu12==$CU12_RUNTIME_VER" "nvidia-cuda-cccl-cu12==$CU12_CCCL_VER"
  local w
  for w in "$TC"/wheels12/*.whl; do unzip -q -o "$w" -d "$root"; done
  chmod +x "$root"/nvidia/cuda_nvcc/bin/*
}

install_clang() {
  if command -v clang++-14 >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1; then return; fi
  log "installing clang via apt-get"
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y clang
}

install_toolchain() {
  command -v python3 >/dev/null || { echo "python3 is required" >&2; exit 1; }
  command -v unzip >/dev/null || { echo "unzip is required" >&2; exit 1; }
  install_cuda13
  install_cuda12
  install_clang
}

setup_stage() {
  rm -rf "$STAGE"
  mkdir -p "$STAGE/cuda"
  cp "$SRC"/*.cu "$SRC"/*.h "$STAGE/cuda/"
  ln -s "$TC/cuda13" "$STAGE/cuda13"
  ln -s "$TC/cuda12" "$STAGE/cuda12"
}

# compile_one TOOL NAME ARCH VARIANT  (runs in a subshell via xargs)
compile_one() {
  local tool=$1 name=$2 arch=$3 variant=$4
  local out="$OUTDIR/$name/$name.$arch.$variant.ptx"
  local tmp="$out.tmp"
  local flags=()
  case $variant in
    O3) flags=(-O3) ;;
    lineinfo) flags=(-O3 -lineinfo) ;;
    G) flags=(-G) ;;
    fastmath) flags=(-O3 -use_fast_math) ;;
    rdc) flags=(-O3 -rdc=true) ;;
    *) echo "unknown variant $variant" >&2; return 1 ;;
  esac
  mkdir -p "$OUTDIR/$name"
  cd "$STAGE/cuda"
  if [[ $tool == nvcc ]]; then
    local nvcc="$STAGE/cuda13/nvidia/cu13/bin/nvcc"
    if ! "$nvcc" -arch="$arch" -ptx "${flags[@]}" "$name.cu" -o "$tmp" 2>"$tmp.log"; then
      echo "FAILED nvcc $name $arch $variant:" >&2; cat "$tmp.log" >&2; rm -f "$tmp" "$tmp.log"; return 1
    fi
    { printf '//\n// Produced by nvcc %s (PyPI nvidia-cuda-nvcc) with: nvcc -arch=%s -ptx %s %s.cu\n' \
        "$CUDA13_VER" "$arch" "${flags[*]}" "$name"; cat "$tmp"; } >"$out"
  else
    # NVRTC: optimisation is on by default; -O3 is not an NVRTC option.
    local nflags=()
    local f
    for f in "${flags[@]}"; do [[ $f == -O3 ]] || nflags+=("--opt=$f"); done
    local cu12="$STAGE/cuda12/nvidia"
    if ! python3 "$STAGE/nvrtc_ptx.py" --lib "$cu12/cuda_nvrtc/lib/libnvrtc.so.12" \
        --arch "compute_${arch#sm_}" -I "$cu12/cuda_runtime/include" \
        -I "$cu12/cuda_nvcc/include" -I "$cu12/cuda_cccl/include" \
        "${nflags[@]}" "$name.cu" "$tmp" 2>"$tmp.log"; then
      echo "FAILED nvrtc $name $arch $variant:" >&2; cat "$tmp.log" >&2; rm -f "$tmp" "$tmp.log"; return 1
    fi
    mv "$tmp" "$out"
  fi
  rm -f "$tmp" "$tmp.log"
}

compile_clang() {
  local name=$1 arch=$2
  local out="$OUTDIR/clang/$name.$arch.ptx"
  local clang=clang++-14
  command -v $clang >/dev/null 2>&1 || clang=clang++
  mkdir -p "$OUTDIR/clang"
  cd "$STAGE/cuda"
  local flags=(-x cuda --cuda-gpu-arch="$arch" --cuda-device-only -nocudainc -nocudalib
               -Xclang -target-feature -Xclang +ptx70 -include clang_nvptx_shim.h -S -O3)
  if ! "$clang" "${flags[@]}" "$name.cu" -o "$out.tmp" 2>"$out.log"; then
    echo "FAILED clang $name $arch:" >&2; cat "$out.log" >&2; rm -f "$out.tmp" "$out.log"; return 1
  fi
  rm -f "$out.log"
  { printf '//\n// Produced by %s\n// with: clang++ %s %s.cu\n' "$("$clang" --version | head -n1)" \
      "${flags[*]}" "$name"; cat "$out.tmp"; } >"$out"
  rm -f "$out.tmp"
}

export -f compile_one compile_clang
export OUTDIR STAGE CUDA13_VER

# ptxas over everything; writes ptx/ptxas-validation.txt.
validate() {
  local report="$OUTDIR/ptxas-validation.txt"
  local p13="$TC/cuda13/nvidia/cu13/bin/ptxas" p12="$TC/cuda12/nvidia/cuda_nvcc/bin/ptxas"
  local ok=0 bad=0 f arch ptxas res
  {
    echo "# ptxas validation of every committed PTX file (generated by regen.sh)."
    echo "# sm_75+ checked with ptxas $CUDA13_VER, sm_50/60/70 with ptxas $CU12_NVCC_VER;"
    echo "# -c (relocatable) is used for rdc variants and handwritten files."
    echo "# Handwritten bad_* files are expected to assemble: their faults are dynamic."
  } >"$report"
  while IFS= read -r f; do
    arch=$(grep -m1 -oE '^\.target[[:space:]]+sm_[0-9]+[a-z]?' "$f" | grep -oE 'sm_[0-9]+[a-z]?')
    case $arch in sm_5*|sm_6*|sm_70|sm_72) ptxas=$p12 ;; *) ptxas=$p13 ;; esac
    local extra=()
    case $f in *.rdc.ptx|*/handwritten/*) extra=(-c) ;; esac
    if res=$("$ptxas" -arch="$arch" "${extra[@]}" "$f" -o /dev/null 2>&1); then
      ok=$((ok + 1)); echo "OK   ${f#"$HERE"/}" >>"$report"
    else
      bad=$((bad + 1)); echo "FAIL ${f#"$HERE"/}: $(echo "$res" | grep -m1 -i error)" >>"$report"
    fi
  done < <(find "$OUTDIR" -name '*.ptx' | sort)
  echo "# total: $ok ok, $bad failed" >>"$report"
  log "ptxas: $ok ok, $bad failed (see ${report#"$HERE"/})"
}

main() {
  local mode=${1:-all}
  install_toolchain
  [[ $mode == --install-only ]] && return
  if [[ $mode != --validate-only ]]; then
    setup_stage
    cp "$HERE/tools/nvrtc_ptx.py" "$STAGE/"
    # Remove previously generated output (not handwritten/).
    local d
    for d in "$OUTDIR"/*/; do
      [[ $(basename "$d") == handwritten ]] || rm -rf "$d"
    done
    local jobs=() name arch v
    for src in "$SRC"/*.cu; do
      name=$(basename "$src" .cu)
      for arch in "${NVCC_ARCHS[@]}" "${NVRTC_ARCHS[@]}"; do
        local tool=nvcc
        [[ " ${NVRTC_ARCHS[*]} " == *" $arch "* ]] && tool=nvrtc
        local variants=(O3 lineinfo)
        [[ " ${G_ARCHS[*]} " == *" $arch "* ]] && variants+=(G)
        [[ " ${FASTMATH_SOURCES[*]} " == *" $name "* ]] && variants+=(fastmath)
        [[ " ${RDC_SOURCES[*]} " == *" $name "* ]] && variants+=(rdc)
        for v in "${variants[@]}"; do jobs+=("$tool $name $arch $v"); done
      done
    done
    log "compiling ${#jobs[@]} PTX files"
    printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -L 1 bash -c 'compile_one "$@"' _
    local cj=()
    for name in "${CLANG_SOURCES[@]}"; do
      for arch in "${CLANG_ARCHS[@]}"; do cj+=("$name $arch"); done
    done
    printf '%s\n' "${cj[@]}" | xargs -P "$(nproc)" -L 1 bash -c 'compile_clang "$@"' _
    rm -rf "$STAGE"
  fi
  validate
}

main "$@"
