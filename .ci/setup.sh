#!/usr/bin/env bash
# Installs what Lake's build and tests need on a fresh Debian machine: the protobuf
# compiler and headers (lance, tonic), libclang (RocksDB bindings), and the Python clients
# the integration tests use (ADBC Flight SQL driver, pyarrow, DuckDB, pytest) and moto's
# S3 + DynamoDB server for the distributed tests (started by .ci/services.sh), ffmpeg and
# safetensors for the FILE tests' real video and model weights, and the benchmark suite's
# peers (bench/requirements.txt: pylance, matplotlib; bench/requirements-iceberg.txt:
# DuckDB 1.5.5 with its Iceberg reader, in ~/.cache/lake/duckdb-iceberg). pyiceberg writes
# the Iceberg test tables.
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

# DuckDB's Iceberg reader for the bench's iceberg section, in its own virtualenv: its
# extension wheels need DuckDB 1.5.5, while the TPC-H peer pins 2.0.1.
venv="$HOME/.cache/lake/duckdb-iceberg"
if ! "$venv/bin/python" -c "import duckdb, duckdb_extension_iceberg, duckdb_extension_avro" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$(dirname "$0")/../bench/requirements-iceberg.txt"
fi
