#!/usr/bin/env bash
# Rebuilds the test fatbinaries of this folder from the .cu sources beside it. Needs nvcc (tested with CUDA
# 13.5: export PATH=/path/to/cuda/bin:$PATH) and binutils' objcopy; the tests themselves need neither.
#
#   NAME.fatbin      the .nv_fatbin section of a program built from axpy.cu, one per way of building it
#   rdc.*            -rdc=true program of rdc_main.cu + rdc_lib.cu: its .nv_fatbin (the device-linked
#                    container) and __nv_relfatbin (one container per unit) sections
#   lto.relfatbin    __nv_relfatbin of axpy.cu compiled to LTO IR (code=lto_80)
#   two_units, rdc   stripped executables (axpy.cu + scale.cu without -rdc; the rdc program) for elf::scan
#   lto.o            the relocatable object of lto.relfatbin, for elf::scan
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build() { # NAME NVCC-ARGS...: the .nv_fatbin section of axpy.cu built with those arguments
  local name=$1
  shift
  "$NVCC" -O2 -cudart shared "$@" axpy.cu -o "$tmp/$name"
  objcopy -O binary --only-section=.nv_fatbin "$tmp/$name" "$name.fatbin"
}

build zstd -arch=sm_80                                    # default: PTX ZSTD-compressed, SASS not
build lz4 -arch=sm_80 -Xfatbin -compress-mode=speed       # PTX as one LZ4 block
build none -arch=sm_80 -Xfatbin -compress-mode=none       # nothing compressed
build size -arch=sm_80 -Xfatbin -compress-mode=size       # PTX and SASS ZSTD-compressed
build sass -gencode arch=compute_80,code=sm_80            # SASS only, no PTX
build multi -gencode 'arch=compute_75,code=[compute_75,sm_75]' -gencode 'arch=compute_80,code=[compute_80,sm_80]'
build debug -G -arch=sm_80                                # device debug information (flag 0x2)

"$NVCC" -O2 -cudart shared -arch=sm_80 axpy.cu scale.cu -o "$tmp/two_units"
strip -o two_units "$tmp/two_units"

"$NVCC" -O2 -cudart shared -arch=sm_80 -rdc=true rdc_main.cu rdc_lib.cu -o "$tmp/rdc"
objcopy -O binary --only-section=.nv_fatbin "$tmp/rdc" rdc.fatbin
objcopy -O binary --only-section=__nv_relfatbin "$tmp/rdc" rdc.relfatbin
strip -o rdc "$tmp/rdc"

"$NVCC" -O2 -rdc=true -gencode arch=compute_80,code=lto_80 -c axpy.cu -o lto.o
objcopy -O binary --only-section=__nv_relfatbin lto.o lto.relfatbin
