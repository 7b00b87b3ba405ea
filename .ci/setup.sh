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

# Decided per Debian package (dpkg's own record), never by looking for files: the image
# ships libclang-cpp but not libclang, so a file glob passes and the RocksDB bindings then
# fail with "Unable to find libclang".
#   protobuf-compiler, libprotobuf-dev: protoc and google/protobuf/*.proto (lance, tonic)
#   libclang-dev: bindgen for the RocksDB bindings
#   ffmpeg: makes (and ffprobe checks) the real video the FILE tests round-trip
need_apt=()
for pkg in protobuf-compiler libprotobuf-dev libclang-dev ffmpeg; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$' \
    || need_apt+=("$pkg")
done
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
