"""Distributed Lake under failure, with real processes on 127.0.0.1: three `lake metasrv`
nodes electing a leader on DynamoDB (moto's server), Query replicas (`lake query`) over an
S3 warehouse (moto), clients through the ADBC Flight SQL driver and pyarrow.flight.

Every load loop is bounded in count and time. Figures (failover time, queries/s, latency,
Metasrv requests per 1,000 warm queries, commits/s) are printed and written to
$LAKE_TEST_RESULTS/cluster.json when that is set.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow.flight as flight
import pytest

from conftest import query, race_on_a_new_table
from test_flight_sql import statement_query_cmd

from cluster import Cluster, Process, free_port, lake_binary  # noqa: E402  (conftest put scripts/ on the path)

FIGURES: dict[str, float] = {}


def report(name: str, value: float):
    FIGURES[name] = value
    print(f"{name} = {value}", file=sys.stderr)
    out = os.environ.get("LAKE_TEST_RESULTS")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "cluster.json").write_text(json.dumps(FIGURES, indent=2))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # A short lease keeps the failover tests quick: 2 s, renewed every 0.5 s, 0.2 s bound.
    # `check_versions` reads one more row at each version, so the replicas' automatic
    # compaction (a version of its own with the same rows) is off here; test_maintenance.py
    # runs it on a cluster of its own, racing writers.
    c = Cluster(tmp_path_factory.mktemp("cluster"), lease_ms=2000, renew_interval_ms=500,
                clock_bound_ms=200, env={"LAKE_COMPACT_AT_SMALL_FRAGMENTS": "0"})
    yield c
    c.stop()


def connect(c: Cluster, i: int):
    return flightsql.connect(c.query_uri(i), autocommit=True)


def serving(c: Cluster) -> list[int]:
    return [i for i, p in enumerate(c.metasrv) if p.alive() and (c.status(i) or {}).get("serving")]


def count_at(conn, table: str, version: int) -> int:
    return query(conn, f"SELECT count(*) AS n FROM {table} VERSION AS OF {version}").column("n")[0].as_py()


def check_versions(conn, table: str, rows: int):
    """CREATE TABLE commits version 1 (empty) and each INSERT here adds one row: version v
    holds v - 1 rows, and there is no version past rows + 1. So no version was assigned
    twice, skipped, or committed without its row."""
    counts = [count_at(conn, table, v) for v in range(1, rows + 2)]
    assert counts == list(range(rows + 1)), counts[:20]
    with pytest.raises(Exception, match="no version"):
        count_at(conn, table, rows + 2)


class Writers:
    """`per_replica` threads per Query replica, each INSERTing (writer, seq) rows one
    statement at a time until stopped or `max_rows` each. An INSERT that fails, or is still
    running when the writers are told to finish, has an unknown outcome; it is not retried
    (a retry could insert the row twice)."""

    def __init__(self, c: Cluster, table: str, per_replica: int = 2, max_rows: int = 400):
        self.acked: set[tuple[int, int]] = set()
        self.unknown: set[tuple[int, int]] = set()
        self.in_flight: dict[int, tuple[int, int]] = {}
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.threads = []
        for r in range(len(c.query)):
            for k in range(per_replica):
                w = r * per_replica + k
                t = threading.Thread(target=self.run, args=(c, r, w, table, max_rows), daemon=True)
                self.threads.append(t)
        for t in self.threads:
            t.start()

    def run(self, c, replica, w, table, max_rows):
        with connect(c, replica) as conn:
            for seq in range(max_rows):
                if self.stop.is_set():
                    return
                with self.lock:
                    self.in_flight[w] = (w, seq)
                try:
                    query(conn, f"INSERT INTO {table} VALUES ({w}, {seq})")
                    with self.lock:
                        self.acked.add((w, seq))
                        del self.in_flight[w]
                except Exception as e:  # noqa: BLE001 - the outcome is unknown
                    with self.lock:
                        self.unknown.add((w, seq))
                        self.errors.append(str(e)[:300])
                        del self.in_flight[w]

    def finish(self):
        self.stop.set()
        # Each thread ends after its current statement; under contention on one table a
        # statement can take minutes (Lance's commit backoff), so wait generously.
        deadline = time.time() + 300
        for t in self.threads:
            t.join(max(0.0, deadline - time.time()))
        # Statements still running have an unknown outcome (they may land later).
        with self.lock:
            self.unknown |= set(self.in_flight.values())


def check_history(conn, table: str, writers: Writers):
    rows = query(conn, f"SELECT w, seq FROM {table}").to_pylist()
    seen = [(r["w"], r["seq"]) for r in rows]
    assert len(seen) == len(set(seen)), "a row was committed twice"
    missing = writers.acked - set(seen)
    assert not missing, f"acknowledged rows lost: {sorted(missing)[:10]}"
    extra = set(seen) - writers.acked - writers.unknown
    assert not extra, f"rows nobody wrote: {sorted(extra)[:10]}"
    check_versions(conn, table, len(seen))


def test_reads_and_writes_reach_every_replica_and_tickets_travel(cluster):
    with connect(cluster, 0) as a, connect(cluster, 1) as b:
        query(a, "CREATE TABLE travel (id BIGINT, name VARCHAR)")
        query(b, "INSERT INTO travel VALUES (1, 'one'), (2, 'two')")
        # Read-your-writes across replicas through the ticket: planned on replica 1 right
        # after its own write, redeemed on replica 0, which waits for that revision.
        query(b, "INSERT INTO travel VALUES (3, 'three')")
        info = flight.FlightClient(cluster.query_uri(1)).get_flight_info(
            flight.FlightDescriptor.for_command(statement_query_cmd("SELECT id FROM travel ORDER BY id")))
        table = flight.FlightClient(cluster.query_uri(0)).do_get(info.endpoints[0].ticket).read_all()
        assert table.column("id").to_pylist() == [1, 2, 3]
        assert query(a, "SELECT count(*) AS n FROM travel").column("n")[0].as_py() == 3


def test_concurrent_writers_on_a_brand_new_table_on_s3_all_succeed_exactly_once(cluster):
    # Issue 21 on moto's S3 and DynamoDB: six clients over both replicas create the table and
    # append at once; the first commits (creating the Lance dataset) race like any other.
    uris = [cluster.query_uri(i) for i in range(len(cluster.query))]
    errors = race_on_a_new_table(uris, "race")
    assert errors == []
    expected = [{"w": w, "i": i} for w in range(6) for i in range(10)]
    for replica in range(len(uris)):
        # Each replica's cache follows the change stream: wait (bounded) for the last commit.
        with connect(cluster, replica) as conn:
            deadline = time.time() + 30
            while (rows := query(conn, "SELECT w, i FROM race ORDER BY w, i").to_pylist()) != expected:
                assert time.time() < deadline, f"replica {replica}: {len(rows)} rows"
                time.sleep(0.2)


def test_failover_keeps_every_acknowledged_append_exactly_once(cluster):
    with connect(cluster, 0) as conn:
        query(conn, "CREATE TABLE failover (w BIGINT, seq BIGINT)")
    leader = cluster.leader()
    writers = Writers(cluster, "failover")
    # Readers on both replicas keep answering from their caches throughout.
    read_failures: list[str] = []
    reads = [0]
    stop_reads = threading.Event()

    def read(replica):
        with connect(cluster, replica) as conn:
            while not stop_reads.is_set() and reads[0] < 100_000:
                try:
                    query(conn, "SELECT count(*) FROM failover")
                    reads[0] += 1
                except Exception as e:  # noqa: BLE001
                    read_failures.append(str(e)[:300])
                time.sleep(0.02)

    readers = [threading.Thread(target=read, args=(r,), daemon=True) for r in range(2)]
    for t in readers:
        t.start()
    time.sleep(3)
    before = len(writers.acked)
    killed_at = time.time()
    cluster.metasrv[leader].kill()  # kill -9: the lease is not released
    new_leader = cluster.leader(timeout=30)
    takeover = time.time() - killed_at
    report("failover.takeover_seconds", round(takeover, 2))
    assert new_leader != leader
    time.sleep(4)
    writers.finish()
    stop_reads.set()
    for t in readers:
        t.join(30)
    after = len(writers.acked)
    report("failover.acked_appends", after)
    report("failover.unknown_outcomes", len(writers.unknown))
    assert before > 0 and after > before, (before, after, writers.errors[:5])
    # Lease 2 s + clock bound 0.2 s + a renewal interval 0.5 s, plus reads of the store.
    assert takeover < 6, takeover
    assert not read_failures, read_failures[:5]
    assert reads[0] > 0
    with connect(cluster, 1) as conn:
        check_history(conn, "failover", writers)
    cluster.restart_metasrv(leader)


def test_a_paused_leader_that_wakes_up_cannot_commit(cluster):
    with connect(cluster, 0) as conn:
        query(conn, "CREATE TABLE paused (w BIGINT, seq BIGINT)")
    leader = cluster.leader()
    cluster.metasrv[leader].signal(signal.SIGSTOP)
    try:
        writers = Writers(cluster, "paused", per_replica=1, max_rows=60)
        new_leader = cluster.leader(timeout=30)
        assert new_leader != leader
        time.sleep(3)  # well past the paused leader's lease
        # Wake it while writes continue: it must step down, and nothing it does may land.
        cluster.metasrv[leader].signal(signal.SIGCONT)
        samples = []
        for _ in range(20):
            samples.append(serving(cluster))
            time.sleep(0.1)
        writers.finish()
    finally:
        cluster.metasrv[leader].signal(signal.SIGCONT)
    assert all(len(s) <= 1 for s in samples), samples
    assert leader not in serving(cluster)
    assert (cluster.status(leader) or {}).get("leader_node") == f"m{new_leader}"
    assert len(writers.acked) > 0, writers.errors[:5]
    with connect(cluster, 0) as conn:
        check_history(conn, "paused", writers)
    log = cluster.metasrv[leader].tail(200)
    assert "stepped down" in log, log[-2000:]


class Proxy:
    """A TCP proxy from a local port to `target`; `cut()` drops every connection and
    refuses new ones (a partition), `heal()` lets them through again."""

    def __init__(self, target: int):
        self.target = target
        self.port = free_port()
        self.open = threading.Event()
        self.open.set()
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.server.accept()
            if not self.open.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    def pipe(self, a, b):
        try:
            while self.open.is_set():
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.close()
            except OSError:
                pass

    def cut(self):
        self.open.clear()
        with self.lock:
            for s in self.conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.conns.clear()

    def heal(self):
        self.open.set()


def test_a_partitioned_replica_serves_its_cache_honours_tokens_and_catches_up(cluster):
    leader = cluster.leader()
    proxy = Proxy(cluster.metasrv_ports[leader])
    port = free_port()
    replica = Process("query partitioned",
                      [lake_binary(), "query", "--metasrv", f"http://127.0.0.1:{proxy.port}",
                       "--warehouse", f"s3://{cluster.bucket}/warehouse",
                       "--listen", f"127.0.0.1:{port}",
                       "--ticket-key-file", str(cluster.dir / "ticket.key")],
                      cluster.dir / "query-partitioned.log", "lake: ready on", env=cluster.env)
    try:
        uri = f"grpc://127.0.0.1:{port}"
        with connect(cluster, 0) as a, flightsql.connect(uri, autocommit=True) as p:
            query(a, "CREATE TABLE cut (id BIGINT)")
            query(a, "INSERT INTO cut VALUES (1)")
            deadline = time.time() + 30
            while True:  # the partitioned-to-be replica has seen version 1
                try:
                    if query(p, "SELECT count(*) AS n FROM cut").column("n")[0].as_py() == 1:
                        break
                except Exception:  # noqa: BLE001 - not in its catalog yet
                    pass
                assert time.time() < deadline
                time.sleep(0.2)
            proxy.cut()
            query(a, "INSERT INTO cut VALUES (2)")
            # Without a token it keeps answering from the last versions it saw.
            for _ in range(5):
                assert query(p, "SELECT count(*) AS n FROM cut").column("n")[0].as_py() == 1
            # With a token (a ticket planned after the write) it must not serve older data:
            # it fails clearly instead.
            info = flight.FlightClient(cluster.query_uri(0)).get_flight_info(
                flight.FlightDescriptor.for_command(statement_query_cmd("SELECT count(*) AS n FROM cut")))
            ticket = info.endpoints[0].ticket
            started = time.time()
            with pytest.raises(flight.FlightError) as refused:
                flight.FlightClient(uri).do_get(ticket).read_all()
            report("partition.token_refusal_seconds", round(time.time() - started, 2))
            assert "revision" in str(refused.value), str(refused.value)
            # After the link returns it catches up and serves the ticket.
            proxy.heal()
            deadline = time.time() + 30
            while True:
                try:
                    table = flight.FlightClient(uri).do_get(ticket).read_all()
                    break
                except flight.FlightError:
                    assert time.time() < deadline, replica.tail()
                    time.sleep(0.5)
            assert table.column("n").to_pylist() == [2]
            assert query(p, "SELECT count(*) AS n FROM cut").column("n")[0].as_py() == 2
    finally:
        proxy.heal()
        replica.stop()


def total_requests(c: Cluster) -> int:
    total = 0
    for i, p in enumerate(c.metasrv):
        if p.alive():
            total += (c.status(i) or {}).get("requests_served", 0)
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def test_load_on_two_replicas_is_served_without_metasrv(cluster):
    with connect(cluster, 0) as conn:
        query(conn, "CREATE TABLE points (id BIGINT, v DOUBLE)")
        values = ", ".join(f"({i}, {i * 0.5})" for i in range(1000))
        query(conn, f"INSERT INTO points VALUES {values}")
    clients, per_client = 8, 100
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()

    def run(k):
        with connect(cluster, k % 2) as conn:
            query(conn, "SELECT v FROM points WHERE id = 1")  # warm this connection
            barrier.wait()
            for n in range(per_client):
                started = time.perf_counter()
                try:
                    got = query(conn, f"SELECT v FROM points WHERE id = {(k * 37 + n) % 1000}")
                    assert got.num_rows == 1
                except Exception as e:  # noqa: BLE001
                    failures.append(str(e)[:200])
                with lock:
                    latencies.append(time.perf_counter() - started)

    barrier = threading.Barrier(clients + 1)
    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    barrier.wait(60)
    status_calls = sum(1 for p in cluster.metasrv if p.alive())
    before = total_requests(cluster)
    started = time.perf_counter()
    for t in threads:
        t.join(300)
    elapsed = time.perf_counter() - started
    after = total_requests(cluster)
    queries = clients * per_client
    # The status reads themselves count one request per node each time.
    metasrv_requests = after - before - status_calls
    assert not failures, failures[:5]
    report("load.queries", queries)
    report("load.queries_per_second", round(queries / elapsed, 1))
    report("load.p50_ms", round(percentile(latencies, 0.5) * 1000, 2))
    report("load.p99_ms", round(percentile(latencies, 0.99) * 1000, 2))
    report("load.metasrv_requests_per_1000_queries", round(metasrv_requests * 1000 / queries, 2))
    assert metasrv_requests == 0, metasrv_requests

    # Commits through the whole path (Flight SQL INSERT → Lance on S3 → Metasrv on
    # DynamoDB), 4 concurrent writers on one table, bounded.
    with connect(cluster, 0) as conn:
        query(conn, "CREATE TABLE commits (w BIGINT, seq BIGINT)")
    started = time.perf_counter()
    writers = Writers(cluster, "commits", per_replica=2, max_rows=10)
    for t in writers.threads:
        t.join(300)
    elapsed = time.perf_counter() - started
    assert not writers.errors, writers.errors[:5]
    report("load.insert_commits_per_second_dynamodb_s3", round(len(writers.acked) / elapsed, 1))
