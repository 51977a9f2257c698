#!/usr/bin/env bash
# Installs everything axo builds and tests with, from Debian's packages (run as root).
# CUDA, cuBLAS and NCCL are not installed here: they come from /usr/local/cuda when present.
set -euo pipefail
packages=(
  cmake g++ make pkg-config
  libyaml-cpp-dev libcli11-dev libeigen3-dev nlohmann-json3-dev libboost-graph-dev
  libopenmpi-dev openmpi-bin libopenblas-dev libdnnl-dev libgtest-dev libcsv-dev
  libplplot-dev libexpat1-dev
  clang libclang-rt-14-dev
  fortunes
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
