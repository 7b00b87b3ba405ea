#!/usr/bin/env bash
# Installs what Lake's build and tests need on a fresh Debian machine: the protobuf
# compiler and headers (lance, tonic), libclang (RocksDB bindings), and the Python clients
# the integration tests use (ADBC Flight SQL driver, pyarrow, DuckDB, pytest) and moto's
# S3 + DynamoDB server for the distributed tests (started by .ci/services.sh), ffmpeg and
# safetensors for the FILE tests' real video and model weights, and the benchmark suite's
# peers (bench/requirements.txt: pylance, matplotlib).
# Safe to run again: it skips what is already there.
set -euo pipefail

need_apt=()
command -v protoc >/dev/null 2>&1 || need_apt+=(protobuf-compiler)
[ -e /usr/include/google/protobuf/empty.proto ] || need_apt+=(libprotobuf-dev)
ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || need_apt+=(libclang-dev)
# ffmpeg makes (and ffprobe checks) the real video the FILE tests round-trip.
command -v ffmpeg >/dev/null 2>&1 || need_apt+=(ffmpeg)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

python3 -m pip install -q --disable-pip-version-check -r "$(dirname "$0")/requirements.txt" \
  -r "$(dirname "$0")/../bench/requirements.txt"
