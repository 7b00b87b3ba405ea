#!/usr/bin/env python3
"""DuckDB's Iceberg reader as a peer process for ``peers.py iceberg``.

Runs under the interpreter of the DuckDB 1.5.5 virtualenv (bench/requirements-iceberg.txt)
and loads the ``avro`` and ``iceberg`` extensions from their PyPI wheels' files. Reads one
JSON request per stdin line, ``{"sql": "...", "answer": "/path.parquet" | null}``, where the
SQL names the table as ``lineitem``; the view ``lineitem`` is ``iceberg_scan`` of the
metadata file given on the command line (an exact snapshot). Replies one JSON line:
``{"seconds": float}`` (the query run to completion, fetched in DuckDB), or
``{"error": "..."}``. With ``answer`` the result is also written there as Parquet, untimed.
"""

import glob
import json
import os
import sys
import time

import duckdb


def main() -> int:
    metadata_location = sys.argv[1]
    con = duckdb.connect()
    site = os.path.dirname(os.path.dirname(duckdb.__file__))
    for ext in ("avro", "iceberg"):
        found = glob.glob(os.path.join(site, f"duckdb_extension_{ext}", "extensions", "*", f"{ext}.duckdb_extension"))
        if not found:
            print(json.dumps({"error": f"the {ext} extension wheel is not installed in {site}"}), flush=True)
            return 2
        con.execute(f"LOAD '{found[0]}'")
    location = metadata_location.replace("'", "''")
    con.execute(f"CREATE VIEW lineitem AS SELECT * FROM iceberg_scan('{location}')")
    print(json.dumps({"ready": duckdb.__version__}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            start = time.perf_counter()
            con.execute(request["sql"]).fetchall()
            seconds = time.perf_counter() - start
            if request.get("answer"):
                path = request["answer"].replace("'", "''")
                con.execute(f"COPY ({request['sql']}) TO '{path}' (FORMAT parquet)")
            print(json.dumps({"seconds": seconds}), flush=True)
        except Exception as exc:  # reported to the parent, which records it
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
