#!/usr/bin/env bash
# Regenerates the driver API tests' device code: PTX text and a PTX-only fatbinary of src/kernels.cu, and
# the two -rdc PTX units the linker test links. The outputs are committed (tests never need nvcc).
#
# nvcc: $NVCC, nvcc on PATH, or the CUDA 13 toolchain `corpus/regen.sh --install-only` installs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NVCC=${NVCC:-$(command -v nvcc || echo "$HERE/../.toolchain/cuda13/nvidia/cu13/bin/nvcc")}
[[ -x $NVCC ]] || "$HERE/../regen.sh" --install-only
cd "$HERE/src"
"$NVCC" -arch=sm_80 -ptx kernels.cu -o ../kernels.ptx
"$NVCC" -fatbin -gencode arch=compute_80,code=compute_80 kernels.cu -o ../kernels.fatbin
"$NVCC" -arch=sm_80 -rdc=true -ptx link_main.cu -o ../link_main.ptx
"$NVCC" -arch=sm_80 -rdc=true -ptx link_helper.cu -o ../link_helper.ptx
"$NVCC" -cubin -arch=sm_80 kernels.cu -o ../kernels.cubin
echo "driver fixtures regenerated in $HERE"
