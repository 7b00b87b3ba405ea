#!/usr/bin/env bash
# Starts (default) or stops the services the tests need, listening on 127.0.0.1 only:
# moto's server (PyPI `moto[server]`, installed by .ci/setup.sh), which emulates both S3 and
# DynamoDB (with TransactWriteItems and conditional writes). Idempotent: `start` does
# nothing when the server already answers. The tests find it at LAKE_TEST_MOTO_ENDPOINT
# (default http://127.0.0.1:5055).
set -euo pipefail
port="${LAKE_MOTO_PORT:-5055}"
state="${TMPDIR:-/tmp}/lake-moto-$port"
up() {
  python3 - "$port" <<'PY' 2>/dev/null
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/moto-api/", timeout=1)
PY
}
case "${1:-start}" in
  start)
    up && exit 0
    nohup moto_server -H 127.0.0.1 -p "$port" >"$state.log" 2>&1 &
    echo $! >"$state.pid"
    for _ in $(seq 1 200); do
      up && exit 0
      sleep 0.1
    done
    echo "moto_server did not start on 127.0.0.1:$port; see $state.log" >&2
    exit 1
    ;;
  stop)
    [ -f "$state.pid" ] && kill "$(cat "$state.pid")" 2>/dev/null || true
    rm -f "$state.pid"
    ;;
  *)
    echo "usage: $0 [start|stop]" >&2
    exit 2
    ;;
esac
