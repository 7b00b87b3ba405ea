#!/usr/bin/env bash
# Lake's tests, in order: clippy's lints (denied) in one build of every target, the workspace (unit, property and Rust integration tests), the
# madsim simulations (their own target dir, built with --cfg madsim), and the end-to-end
# suite against a real `lake serve` through the ADBC Flight SQL driver and pyarrow.flight,
# and a real cluster (3 Metasrv nodes on moto's DynamoDB, Query replicas on moto's S3),
# then a small run of the benchmark suite.
# Run `bash .ci/setup.sh` once first on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
step() { echo "test.sh: $1 done at ${SECONDS}s" >&2; }
# moto's S3 + DynamoDB server on 127.0.0.1 for the distributed tests (no-op if running).
bash .ci/services.sh start
# Clippy's lints, denied, in one build of every target: clippy-driver (what `cargo clippy`
# runs) compiles the workspace's own crates, so the lints of `cargo clippy --workspace
# --all-targets -- -D warnings` are checked without checking every dependency a second
# time (on a fresh machine that separate pass took 17 of 41 minutes). The tests below then
# build the workspace's crates again with plain rustc (the dependencies are shared), so
# they run what `cargo build` makes.
if driver="$(rustup which clippy-driver 2>/dev/null)"; then
  RUSTC_WORKSPACE_WRAPPER="$driver" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__" \
    CARGO_TARGET_DIR="$target" cargo test --workspace --all-targets --locked --no-run
else
  CARGO_TARGET_DIR="$target" cargo clippy --workspace --all-targets --locked -- -D warnings
fi
step lints
CARGO_TARGET_DIR="$target" cargo test --workspace --locked; step "cargo test"
# A few hundred seeds per simulation (from the clock; a failure prints its replay command).
MADSIM_TEST_NUM="${MADSIM_TEST_NUM:-300}" RUSTFLAGS="--cfg madsim" \
  CARGO_TARGET_DIR="${MADSIM_TARGET_DIR:-$target/madsim}" cargo test -p lake-simtests --locked; step simtests
CARGO_TARGET_DIR="$target" python3 -m pytest -q shells/cli/tests/python; step pytest
# The benchmark suite at a tiny scale: every TPC-H answer (Lake over ADBC, DataFusion) is
# checked against DuckDB's, and each section runs once end to end. Figures at this scale
# mean nothing; `cargo run --release --bin lake-bench` is the benchmark.
CARGO_TARGET_DIR="$target" cargo build --workspace --locked; step "cargo build"
"$target/debug/lake-bench" --no-install --scale 0.01 --runs 1 --commit-seconds 1 --file-mib 64 \
  --startup-tables 50 --startup-versions 20 --stream-appends 200 \
  --out "$target/bench-smoke" >/dev/null
step bench-smoke
