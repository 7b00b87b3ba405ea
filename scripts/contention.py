#!/usr/bin/env python3
"""Write contention on one hot table: 4 writers (2 per Query replica) each INSERT 30 rows one
statement at a time into the same table of a local cluster (scripts/cluster.py, moto for S3
and DynamoDB). Prints commits/s and INSERT latency p50/p99/max.

    python3 scripts/contention.py            # uses target/debug/lake, or LAKE_BIN
"""
import sys, time, threading, tempfile
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from cluster import Cluster
import adbc_driver_flightsql.dbapi as flightsql
c = Cluster(tempfile.mkdtemp(prefix="contention-"), lease_ms=2000, renew_interval_ms=500, clock_bound_ms=200)
try:
    with flightsql.connect(c.query_uri(0), autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE hot (w BIGINT, seq BIGINT)"); cur.fetchall()
    lat = []; errs = []; lock = threading.Lock()
    def run(w):
        with flightsql.connect(c.query_uri(w % 2), autocommit=True) as conn:
            for seq in range(30):
                t = time.perf_counter()
                try:
                    with conn.cursor() as cur:
                        cur.execute(f"INSERT INTO hot VALUES ({w}, {seq})"); cur.fetchall()
                except Exception as e:
                    errs.append(str(e)[:200])
                with lock: lat.append(time.perf_counter() - t)
    started = time.perf_counter()
    ts = [threading.Thread(target=run, args=(w,)) for w in range(4)]
    [t.start() for t in ts]; [t.join(600) for t in ts]
    el = time.perf_counter() - started
    lat.sort()
    print(f"inserts={len(lat)} errors={len(errs)} commits/s={len(lat)/el:.1f} p50={lat[len(lat)//2]:.2f}s p99={lat[int(len(lat)*0.99)]:.2f}s max={lat[-1]:.2f}s", errs[:2])
finally:
    c.stop()
