#!/usr/bin/env bash
# Keeps the shared target dir from filling the disk before a CI run. The target dir lives
# outside the clone so that runs stay warm, and so it only grows: every change to the
# workspace's crates leaves their old artifacts behind, and so does a clone at a new path
# (the crates patched in vendor/, and everything built on them, build again there). A cold
# run on a fresh machine left an 11 GiB target dir (1.6 GiB of it incremental caches) and
# about 1 GiB of test data; a run needs LAKE_CI_FREE_GIB (default 16) free to start.
#
# When less is free, this removes what costs least to rebuild first: the incremental
# caches (the workspace's own crates rebuild in minutes), then the whole target dir (a cold
# run, which fits CI's budget). It prints what it found and did.
set -euo pipefail
target="${1:?usage: disk.sh TARGET_DIR}"
need_gib="${LAKE_CI_FREE_GIB:-16}"
free_gib() {
  mkdir -p "$target"
  df -Pk "$target" | awk 'NR == 2 { printf "%d", $4 / 1048576 }'
}
free=$(free_gib)
echo "disk: ${free} GiB free where the target dir is ($target: $(du -sh "$target" 2>/dev/null | cut -f1)); a run needs ${need_gib} GiB"
[ "$free" -ge "$need_gib" ] && exit 0
echo "disk: removing the incremental caches"
find "$target" -maxdepth 3 -type d -name incremental -prune -exec rm -rf {} +
free=$(free_gib)
[ "$free" -ge "$need_gib" ] && { echo "disk: ${free} GiB free"; exit 0; }
echo "disk: still ${free} GiB free; removing the target dir (this run builds cold)"
rm -rf "$target"
free=$(free_gib)
echo "disk: ${free} GiB free"
if [ "$free" -lt "$need_gib" ]; then
  echo "disk: only ${free} GiB free with no target dir; the run may not fit (set LAKE_CI_FREE_GIB to change the need)" >&2
fi
