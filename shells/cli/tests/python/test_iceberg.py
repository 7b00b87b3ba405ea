"""Lake's read-only `iceberg` catalog through a real Flight SQL client (ADBC).

The tables are written by pyiceberg (fixtures/iceberg/make_tables.py) and served by the
spec-following REST catalog in fixtures/iceberg/rest_catalog.py; every expected value is
pyiceberg's own read of the same snapshot (expected.json), never Lake's output echoed."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pytest

from conftest import ICEBERG_CLIENT as CLIENT
from conftest import ICEBERG_TOKEN as TOKEN
from conftest import LakeServer, lake_binary, query

REPO = Path(__file__).resolve().parents[4]
FIXTURES = REPO / "fixtures" / "iceberg"
sys.path.insert(0, str(FIXTURES))
from make_tables import catalog as sql_catalog  # noqa: E402
from rest_catalog import serve  # noqa: E402


def stats(rest_uri):
    with urllib.request.urlopen(f"{rest_uri}/test/stats", timeout=10) as response:
        return json.loads(response.read())


def start_lake(env):
    data_dir = tempfile.mkdtemp(prefix="lake-iceberg-")
    return LakeServer(data_dir, demo=False, env=env), data_dir


@pytest.fixture(scope="module")
def lake(iceberg_rest, iceberg_tables):
    out, _ = iceberg_tables
    server, data_dir = start_lake({
        "LAKE_ICEBERG_REST_URI": iceberg_rest,
        "LAKE_ICEBERG_WAREHOUSE": "fixtures",
        "LAKE_ICEBERG_TOKEN": TOKEN,
        # lab.events has a migrated data file beside the warehouse (merge_on_read.py).
        "LAKE_ICEBERG_ALLOWED_PREFIXES": str(out),
    })
    yield server
    server.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def conn(lake):
    with flightsql.connect(lake.uri, autocommit=True) as connection:
        yield connection


def rows(table: pa.Table):
    """Rows as JSON values, sorted by id, as expected.json records them."""
    return json.loads(json.dumps(table.sort_by([("id", "ascending")]).to_pylist(), default=str))


def orders(expected):
    return expected["tables"]["sales.orders"]


def error_of(conn, sql):
    with pytest.raises(Exception) as failure:
        query(conn, sql)
    return str(failure.value)


def test_every_snapshot_reads_as_pyiceberg_reads_it_under_its_own_schema(conn, iceberg_tables):
    _, expected = iceberg_tables
    table = orders(expected)
    assert len(table["snapshots"]) == 5
    for snapshot in table["snapshots"]:
        got = query(conn, f"SELECT * FROM iceberg.sales.orders VERSION AS OF {snapshot['snapshot_id']}")
        assert got.column_names == snapshot["columns"], snapshot["what"]
        assert rows(got) == snapshot["rows"], snapshot["what"]
    # Trino's spelling reads the same snapshot.
    first = table["snapshots"][0]
    got = query(conn, f"SELECT * FROM iceberg.sales.orders FOR VERSION AS OF {first['snapshot_id']}")
    assert rows(got) == first["rows"]


def test_evolution_is_matched_by_field_id(conn, iceberg_tables):
    _, expected = iceberg_tables
    snapshots = orders(expected)["snapshots"]
    # The first snapshot wrote `customer` and an `amount` that was later dropped and
    # re-added with a new field id: read at the current snapshot, the renamed column keeps
    # its values and the old amounts do not come back.
    current = query(conn, "SELECT id, client, amount FROM iceberg.sales.orders WHERE id = 1").to_pylist()
    assert current == [{"id": 1, "client": "ann", "amount": None}]
    first = query(conn, f"SELECT id, customer, amount FROM iceberg.sales.orders VERSION AS OF {snapshots[0]['snapshot_id']} WHERE id = 1").to_pylist()
    assert first == [{"id": 1, "customer": "ann", "amount": 10.0}]
    err = error_of(conn, f"SELECT client FROM iceberg.sales.orders VERSION AS OF {snapshots[0]['snapshot_id']}")
    assert "client" in err


def test_the_default_is_the_current_snapshot_and_refs_resolve_by_name(conn, iceberg_tables):
    _, expected = iceberg_tables
    table = orders(expected)
    by_id = {s["snapshot_id"]: s for s in table["snapshots"]}
    current = by_id[table["current_snapshot_id"]]
    assert rows(query(conn, "SELECT * FROM iceberg.sales.orders")) == current["rows"]
    for name, snapshot_id in table["refs"].items():
        for form in (f"VERSION AS OF '{name}'", f"FOR VERSION AS OF '{name}'"):
            got = query(conn, f"SELECT * FROM iceberg.sales.orders {form}")
            assert rows(got) == by_id[snapshot_id]["rows"], (name, form)
    err = error_of(conn, "SELECT * FROM iceberg.sales.orders VERSION AS OF 'nope'")
    assert "nope" in err and "tag v1" in err and "branch dev" in err


def test_timestamp_as_of_reads_the_snapshot_current_at_that_time(conn, iceberg_tables):
    _, expected = iceberg_tables
    snapshots = orders(expected)["snapshots"]
    for snapshot in snapshots:
        ms = snapshot["timestamp_ms"]
        for form in (f"TIMESTAMP AS OF {ms}", f"FOR TIMESTAMP AS OF {ms}"):
            got = query(conn, f"SELECT * FROM iceberg.sales.orders {form}")
            assert rows(got) == snapshot["rows"], (snapshot["what"], form)
    before = snapshots[0]["timestamp_ms"] - 1
    err = error_of(conn, f"SELECT * FROM iceberg.sales.orders TIMESTAMP AS OF {before}")
    assert "first" in err


def test_unknown_snapshot_id_names_the_ones_that_exist(conn, iceberg_tables):
    _, expected = iceberg_tables
    err = error_of(conn, "SELECT * FROM iceberg.sales.orders VERSION AS OF 12")
    assert "12" in err
    for snapshot in orders(expected)["snapshots"]:
        assert str(snapshot["snapshot_id"]) in err


def test_multi_level_namespaces_in_both_spellings(conn, iceberg_tables):
    _, expected = iceberg_tables
    runs = expected["tables"]["lab.robots.runs"]["snapshots"][-1]["rows"]
    assert rows(query(conn, "SELECT * FROM iceberg.lab.robots.runs")) == runs
    assert rows(query(conn, 'SELECT * FROM iceberg."lab.robots".runs')) == runs
    joined = query(conn, "SELECT r.robot, o.client FROM iceberg.lab.robots.runs r "
                         "JOIN iceberg.sales.orders o ON r.id = o.id ORDER BY r.id").to_pylist()
    assert joined == [{"robot": "r2", "client": "ann"}]  # id 2 was deleted from orders


def test_metadata_tables_list_snapshots_history_and_refs(conn, iceberg_tables):
    _, expected = iceberg_tables
    table = orders(expected)
    ids = [s["snapshot_id"] for s in table["snapshots"]]
    snaps = query(conn, 'SELECT snapshot_id, parent_id, operation FROM iceberg.sales."orders$snapshots" ORDER BY committed_at')
    assert snaps.column("snapshot_id").to_pylist() == ids
    assert snaps.column("parent_id").to_pylist() == [None] + ids[:-1]
    assert snaps.column("operation").to_pylist()[-1] == "delete"
    history = query(conn, 'SELECT snapshot_id, is_current_ancestor FROM iceberg.sales."orders$history" ORDER BY made_current_at')
    assert history.column("snapshot_id").to_pylist() == ids
    assert all(history.column("is_current_ancestor").to_pylist())
    refs = query(conn, 'SELECT name, type, snapshot_id FROM iceberg.sales."orders$refs" ORDER BY name').to_pylist()
    assert {r["name"]: r["snapshot_id"] for r in refs} == table["refs"]
    assert {r["name"]: r["type"] for r in refs} == {"dev": "BRANCH", "main": "BRANCH", "v1": "TAG"}
    # A snapshot id found in a metadata table is directly usable.
    dev = [r["snapshot_id"] for r in refs if r["name"] == "dev"][0]
    assert query(conn, f"SELECT count(*) AS n FROM iceberg.sales.orders VERSION AS OF {dev}").to_pylist() == [{"n": 7}]
    err = error_of(conn, 'SELECT * FROM iceberg.sales."orders$files"')
    assert "orders$snapshots" in err


def test_listing_shows_iceberg_namespaces_and_tables_beside_lake(conn, iceberg_tables):
    catalogs = [c["catalog_name"] for c in conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()]
    assert sorted(catalogs) == ["iceberg", "lake"]
    objects = conn.adbc_get_objects(depth="tables", catalog_filter="iceberg").read_all().to_pylist()
    assert len(objects) == 1
    found = {(s["db_schema_name"], t["table_name"])
             for s in objects[0]["catalog_db_schemas"] for t in (s["db_schema_tables"] or [])}
    assert found >= {("sales", "orders"), ("lab.robots", "runs"), ("lab", "events")}
    assert all(catalog_table[0] in {"sales", "lab", "lab.robots"} for catalog_table in found)
    schemas = {s["db_schema_name"] for s in objects[0]["catalog_db_schemas"]}
    assert schemas == {"sales", "lab", "lab.robots"}
    columns = conn.adbc_get_objects(depth="columns", catalog_filter="iceberg", db_schema_filter="sales",
                                    table_name_filter="orders").read_all().to_pylist()
    table = columns[0]["catalog_db_schemas"][0]["db_schema_tables"][0]
    assert [c["column_name"] for c in table["table_columns"]] == ["id", "client", "region", "amount", "discount"]
    schema = conn.adbc_get_table_schema("runs", catalog_filter="iceberg", db_schema_filter="lab.robots")
    assert schema.names == ["id", "robot"]


def duckdb_rows(metadata_location, snapshot_id, tmp_path):
    """DuckDB's Iceberg reader (bench/duckdb_iceberg.py in the DuckDB 1.5.5 virtualenv that
    .ci/setup.sh creates) on one snapshot, as an independent check of rows pyiceberg cannot
    compute."""
    venv_python = Path.home() / ".cache" / "lake" / "duckdb-iceberg" / "bin" / "python"
    assert venv_python.exists(), "run .ci/setup.sh: it creates the DuckDB iceberg virtualenv"
    answer = tmp_path / f"duck-{snapshot_id}.parquet"
    request = {"sql": f"SELECT * FROM iceberg_scan('{metadata_location}', snapshot_from_id => {snapshot_id})",
               "answer": str(answer)}
    done = subprocess.run([str(venv_python), str(REPO / "bench" / "duckdb_iceberg.py"), metadata_location],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=120)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies[-1].get("seconds") is not None, (replies, done.stderr)
    import pyarrow.parquet as pq
    return rows(pq.read_table(answer))


def test_merge_on_read_deletes_and_files_without_field_ids(conn, iceberg_tables, tmp_path):
    _, expected = iceberg_tables
    events = expected["tables"]["lab.events"]
    assert [s["rows_from"] for s in events["snapshots"]] == ["pyiceberg", "pyiceberg", "spec", "spec"]
    for snapshot in events["snapshots"]:
        got = query(conn, f"SELECT * FROM iceberg.lab.events VERSION AS OF {snapshot['snapshot_id']}")
        assert rows(got) == snapshot["rows"], snapshot["what"]
        if snapshot["rows_from"] == "spec":
            # pyiceberg does not apply equality deletes: DuckDB's reader is the check.
            assert duckdb_rows(events["metadata_location"], snapshot["snapshot_id"], tmp_path) == snapshot["rows"]
    # Filters and projections over deleted rows.
    got = query(conn, "SELECT kind FROM iceberg.lab.events WHERE id BETWEEN 2 AND 7 ORDER BY kind").to_pylist()
    assert got == [{"kind": "c"}, {"kind": "f"}, {"kind": "g"}]


def test_filters_with_casts_and_escapes_keep_every_matching_row(conn, iceberg_tables):
    # Issue 15 cases 8 and 9: a cast around a column was stripped when the filter was pushed
    # into the Iceberg scan (an internal "Can't convert datum" error, or rows lost), and a
    # LIKE escape was lost. Only exact translations reach the scan now.
    out, _ = iceberg_tables
    writer = sql_catalog(out)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("x", pa.float64()),
                        pa.field("s", pa.string())])
    table = writer.create_table("lab.casts", schema=schema)
    table.append(pa.table({"id": [1, 2, 3], "x": [1.0, 1.00000001, 2.5], "s": ["007", "7", "10"]}, schema=schema))
    ids = lambda where: [r["id"] for r in query(conn, f"SELECT id FROM iceberg.lab.casts WHERE {where} ORDER BY id").to_pylist()]  # noqa: E731
    assert ids("CAST(x AS INT) = 1") == [1, 2]
    assert ids("CAST(s AS BIGINT) = 7") == [1, 2]
    assert ids("CAST(x AS REAL) = 1") == [1, 2]
    assert ids("x = 1") == [1]
    assert ids("s = '7'") == [2]
    like = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())])
    escapes = writer.create_table("lab.escapes", schema=like)
    escapes.append(pa.table({"id": [1, 2, 3, 4], "s": ["abc%", "abcd", "abc\\x", "abc"]}, schema=like))
    found = lambda where: [r["id"] for r in query(conn, f"SELECT id FROM iceberg.lab.escapes WHERE {where} ORDER BY id").to_pylist()]  # noqa: E731
    assert found("s LIKE 'abc\\%'") == [1]
    assert found("s LIKE 'abc%'") == [1, 2, 3, 4]
    assert found("s LIKE 'abc_'") == [1, 2]
    assert found("s NOT LIKE 'abc\\%'") == [2, 3, 4]


def test_a_ticket_reads_its_pinned_snapshot_after_the_table_moves_on(conn, iceberg_tables):
    out, _ = iceberg_tables
    writer = sql_catalog(out)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    table = writer.create_table("lab.pinned", schema=schema)
    table.append(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    with conn.cursor() as cur:
        partitions, _ = cur.adbc_execute_partitions("SELECT id, v FROM iceberg.lab.pinned")
        assert len(partitions) == 1
        # The owner of the table commits between planning and DoGet.
        writer.load_table("lab.pinned").append(pa.table({"id": [3], "v": ["c"]}, schema=schema))
        cur.adbc_read_partition(partitions[0])
        pinned = cur.fetch_arrow_table()
    assert rows(pinned) == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    assert rows(query(conn, "SELECT id, v FROM iceberg.lab.pinned")) == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]


def test_writes_on_iceberg_fail_clearly_and_the_rest_catalog_receives_none(conn, iceberg_tables, iceberg_rest):
    for sql in [
        "INSERT INTO iceberg.sales.orders (id) VALUES (100)",
        "DELETE FROM iceberg.sales.orders WHERE id = 1",
        "UPDATE iceberg.sales.orders SET region = 'x'",
        "DROP TABLE iceberg.sales.orders",
        "CREATE TABLE iceberg.sales.more (id BIGINT)",
        "CREATE TABLE iceberg.lab.robots.more AS SELECT 1 AS id",
        "ALTER TABLE iceberg.sales.orders ADD COLUMN z INT",
        "TRUNCATE TABLE iceberg.sales.orders",
        "CREATE SCHEMA iceberg.newns",
    ]:
        err = error_of(conn, sql)
        assert "read-only" in err, (sql, err)
    with pytest.raises(Exception) as failure:
        with conn.cursor() as cur:
            cur.adbc_ingest("orders", pa.table({"id": [1]}), mode="append", catalog_name="iceberg",
                            db_schema_name="sales")
    assert "read-only" in str(failure.value)
    # Reading Iceberg into a Lake table is the way to copy.
    query(conn, "CREATE TABLE lake.default.robots_copy AS SELECT * FROM iceberg.lab.robots.runs")
    assert rows(query(conn, "SELECT * FROM robots_copy")) == [{"id": 1, "robot": "r2"}, {"id": 2, "robot": "c3"}]
    assert stats(iceberg_rest)["writes"] == 0
    # The table's files are untouched: pyiceberg still reads the same current snapshot.
    out, expected = iceberg_tables
    assert sql_catalog(out).load_table("sales.orders").metadata_location == orders(expected)["metadata_location"]


def test_explain_describe_and_copies_see_the_snapshot_asked_for(conn, iceberg_tables):
    _, expected = iceberg_tables
    v1 = orders(expected)["snapshots"][0]
    plan = query(conn, "EXPLAIN SELECT customer FROM iceberg.sales.orders VERSION AS OF 'v1'").to_pylist()
    assert any("customer" in row["plan"] for row in plan)
    analyzed = query(conn, "EXPLAIN ANALYZE SELECT id FROM iceberg.sales.orders VERSION AS OF 'v1'").to_pylist()
    assert any("output_rows=3" in row["plan"] for row in analyzed), analyzed
    described = query(conn, "DESCRIBE iceberg.sales.orders").column("column_name").to_pylist()
    assert described == ["id", "client", "region", "amount", "discount"]
    # A copy of a snapshot (timestamptz columns included) into Lake.
    query(conn, "CREATE TABLE lake.default.orders_v1 AS SELECT * FROM iceberg.sales.orders VERSION AS OF 'v1'")
    assert rows(query(conn, "SELECT * FROM orders_v1")) == v1["rows"]
    query(conn, "CREATE TABLE lake.default.orders_snapshots AS SELECT committed_at, snapshot_id, operation "
                'FROM iceberg.sales."orders$snapshots"')
    copied = query(conn, "SELECT committed_at, snapshot_id FROM orders_snapshots ORDER BY committed_at").to_pylist()
    assert [r["snapshot_id"] for r in copied] == [s["snapshot_id"] for s in orders(expected)["snapshots"]]
    assert [int(r["committed_at"].timestamp() * 1000) for r in copied] == [
        s["timestamp_ms"] for s in orders(expected)["snapshots"]]


def test_count_star_comes_from_the_snapshot_summary_only_when_it_is_exact(conn, iceberg_tables):
    _, expected = iceberg_tables
    for snapshot in orders(expected)["snapshots"]:
        sql = f"SELECT count(*) AS n FROM iceberg.sales.orders VERSION AS OF {snapshot['snapshot_id']}"
        assert query(conn, sql).to_pylist() == [{"n": len(snapshot["rows"])}]
        plan = "\n".join(r["plan"] for r in query(conn, "EXPLAIN " + sql).to_pylist())
        assert "IcebergScanExec" not in plan, plan  # total-records, no delete files
    # Delete files make total-records an upper bound: the count scans and applies them.
    for snapshot in expected["tables"]["lab.events"]["snapshots"]:
        sql = f"SELECT count(*) AS n FROM iceberg.lab.events VERSION AS OF {snapshot['snapshot_id']}"
        assert query(conn, sql).to_pylist() == [{"n": len(snapshot["rows"])}], snapshot["what"]
    plan = "\n".join(r["plan"] for r in query(conn, "EXPLAIN SELECT count(*) FROM iceberg.lab.events").to_pylist())
    assert "IcebergScanExec" in plan
    # A filtered count scans too.
    eu = sum(1 for r in orders(expected)["snapshots"][-1]["rows"] if r["region"] == "eu")
    assert query(conn, "SELECT count(*) AS n FROM iceberg.sales.orders WHERE region = 'eu'").to_pylist() == [{"n": eu}]


def test_names_are_taken_literally(conn):
    # Lake's internal spelling of a time-travel clause is not a way to name one.
    err = error_of(conn, 'SELECT * FROM iceberg.sales."orders@rv1"')
    assert "orders@rv1" in err and "does not exist" in err, err
    for sql in ['SELECT * FROM iceberg."".orders', 'SELECT * FROM iceberg."lab..robots".runs',
                'SELECT * FROM iceberg.sales.""']:
        err = error_of(conn, sql)
        assert "must not be empty" in err, (sql, err)
    # Two-part names starting with `iceberg` are Lake names (namespace lake.iceberg).
    query(conn, "CREATE SCHEMA iceberg")
    query(conn, "CREATE TABLE iceberg.t AS SELECT 1 AS id")
    query(conn, "INSERT INTO iceberg.t VALUES (2)")
    assert rows(query(conn, "SELECT * FROM lake.iceberg.t")) == [{"id": 1}, {"id": 2}]
    query(conn, "DROP TABLE iceberg.t")
    query(conn, "DROP SCHEMA iceberg")
    err = error_of(conn, "DROP SCHEMA iceberg.sales")
    assert "read-only" in err, err


def test_planning_revalidates_with_the_etag(conn, iceberg_rest):
    query(conn, "SELECT count(*) FROM iceberg.sales.orders")
    before = stats(iceberg_rest)
    query(conn, "SELECT count(*) FROM iceberg.sales.orders")
    after = stats(iceberg_rest)
    # Every load-table request of the second query was answered 304 Not Modified (the
    # other request counted is the /test/stats call itself).
    revalidated = after["not_modified"] - before["not_modified"]
    assert revalidated >= 1
    assert after["requests"] - before["requests"] - 1 == revalidated


def test_a_file_outside_the_table_location_is_read_only_under_an_allowed_prefix(iceberg_rest, iceberg_tables):
    # lab.events' last snapshots list a data file outside the table's location (a migrated
    # file). A catalog could as well list file:///etc/passwd: Lake reads neither unless the
    # location is allowed.
    _, expected = iceberg_tables
    events = expected["tables"]["lab.events"]
    server, data_dir = start_lake({"LAKE_ICEBERG_REST_URI": iceberg_rest, "LAKE_ICEBERG_WAREHOUSE": "fixtures",
                                   "LAKE_ICEBERG_TOKEN": TOKEN})
    try:
        with flightsql.connect(server.uri, autocommit=True) as c:
            first = events["snapshots"][0]
            assert rows(query(c, f"SELECT * FROM iceberg.lab.events VERSION AS OF {first['snapshot_id']}")) == first["rows"]
            err = error_of(c, "SELECT * FROM iceberg.lab.events")
            assert "outside its location" in err and "--iceberg-allowed-prefix" in err, err
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.mark.parametrize("location_key", [None, "metadata_location"])
def test_a_catalog_that_sends_metadata_inline_without_a_metadata_location(iceberg_tables, location_key):
    # Issue 15 case 11: LoadTableResult's `metadata` is required and `metadata-location`
    # optional (some catalogs spell it metadata_location). Lake reads the inline metadata and
    # pins the snapshot id, also for snapshots no ref points to.
    out, expected = iceberg_tables
    rest = serve(out, 0, "fixtures", "fixtures", TOKEN, None, location_key=location_key)
    server, data_dir = start_lake({"LAKE_ICEBERG_REST_URI": f"http://127.0.0.1:{rest.server_address[1]}",
                                   "LAKE_ICEBERG_WAREHOUSE": "fixtures", "LAKE_ICEBERG_TOKEN": TOKEN})
    try:
        with flightsql.connect(server.uri, autocommit=True) as c:
            for snapshot in orders(expected)["snapshots"]:
                got = query(c, f"SELECT * FROM iceberg.sales.orders VERSION AS OF {snapshot['snapshot_id']}")
                assert rows(got) == snapshot["rows"], snapshot["what"]
            latest = orders(expected)["snapshots"][-1]
            assert rows(query(c, "SELECT * FROM iceberg.sales.orders")) == latest["rows"]
            # A ticket redeemed after the plan: the pinned snapshot, from the cached metadata.
            with c.cursor() as cur:
                partitions, _ = cur.adbc_execute_partitions("SELECT * FROM iceberg.sales.orders")
                cur.adbc_read_partition(partitions[0])
                assert rows(cur.fetch_arrow_table()) == latest["rows"]
    finally:
        server.stop()
        rest.shutdown()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_oauth2_client_credentials_and_a_refused_credential(iceberg_rest, iceberg_tables):
    _, expected = iceberg_tables
    good, good_dir = start_lake({"LAKE_ICEBERG_REST_URI": iceberg_rest, "LAKE_ICEBERG_WAREHOUSE": "fixtures",
                                 "LAKE_ICEBERG_CREDENTIAL": f"{CLIENT[0]}:{CLIENT[1]}"})
    bad, bad_dir = start_lake({"LAKE_ICEBERG_REST_URI": iceberg_rest, "LAKE_ICEBERG_WAREHOUSE": "fixtures",
                               "LAKE_ICEBERG_CREDENTIAL": "lake:wrong"})
    try:
        with flightsql.connect(good.uri, autocommit=True) as c:
            got = query(c, "SELECT * FROM iceberg.lab.robots.runs")
            assert rows(got) == expected["tables"]["lab.robots.runs"]["snapshots"][-1]["rows"]
        with flightsql.connect(bad.uri, autocommit=True) as c:
            err = error_of(c, "SELECT * FROM iceberg.lab.robots.runs")
            assert "OAuth2" in err and "401" in err, err
    finally:
        for server, data_dir in ((good, good_dir), (bad, bad_dir)):
            server.stop()
            shutil.rmtree(data_dir, ignore_errors=True)


def test_a_partial_configuration_is_a_startup_error_naming_what_is_missing(tmp_path):
    for env, missing in [({"LAKE_ICEBERG_REST_URI": "http://127.0.0.1:1"}, "LAKE_ICEBERG_WAREHOUSE"),
                         ({"LAKE_ICEBERG_TOKEN": "t"}, "LAKE_ICEBERG_REST_URI")]:
        result = subprocess.run([lake_binary(), "serve", "--data-dir", str(tmp_path / "d"), "--listen", "127.0.0.1:0"],
                                env={"PATH": "/usr/bin:/bin", "RUST_BACKTRACE": "0", **env},
                                capture_output=True, text=True, timeout=120)
        assert result.returncode != 0
        assert missing in result.stderr, result.stderr


def test_a_silent_rest_catalog_fails_after_the_deadline_and_lake_tables_keep_answering():
    # A server that accepts connections and never answers.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    held = []
    stop = threading.Event()

    def hold():
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(silent.accept()[0])
            except OSError:
                pass

    threading.Thread(target=hold, daemon=True).start()
    server, data_dir = start_lake({"LAKE_ICEBERG_REST_URI": f"http://127.0.0.1:{silent.getsockname()[1]}",
                                   "LAKE_ICEBERG_WAREHOUSE": "w", "LAKE_ICEBERG_TIMEOUT_SECS": "2"})
    try:
        with flightsql.connect(server.uri, autocommit=True) as c:
            query(c, "CREATE TABLE lake.default.local AS SELECT 1 AS id")
            errors = []

            def iceberg_query():
                errors.append(error_of(c2, "SELECT * FROM iceberg.sales.orders"))

            with flightsql.connect(server.uri, autocommit=True) as c2:
                started = time.monotonic()
                worker = threading.Thread(target=iceberg_query)
                worker.start()
                # While the iceberg query waits on the silent catalog, Lake tables answer.
                assert query(c, "SELECT id FROM local").to_pylist() == [{"id": 1}]
                worker.join(60)
                elapsed = time.monotonic() - started
            assert errors and ("did not" in errors[0] or "in time" in errors[0]), errors
            assert 1.5 <= elapsed < 30, elapsed
            # Listing every catalog leaves the silent one out after its deadline and still
            # lists Lake's tables.
            objects = c.adbc_get_objects(depth="tables").read_all().to_pylist()
            lake_tables = {t["table_name"] for o in objects if o["catalog_name"] == "lake"
                           for s in o["catalog_db_schemas"] for t in (s["db_schema_tables"] or [])}
            assert "local" in lake_tables
    finally:
        stop.set()
        server.stop()
        silent.close()
        for conn_ in held:
            conn_.close()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_an_unreachable_rest_catalog_is_named(tmp_path):
    port_socket = socket.socket()
    port_socket.bind(("127.0.0.1", 0))
    port = port_socket.getsockname()[1]
    port_socket.close()  # nothing listens there now
    server, data_dir = start_lake({"LAKE_ICEBERG_REST_URI": f"http://127.0.0.1:{port}",
                                   "LAKE_ICEBERG_WAREHOUSE": "w"})
    try:
        with flightsql.connect(server.uri, autocommit=True) as c:
            err = error_of(c, "SELECT * FROM iceberg.sales.orders")
            assert "unreachable" in err and str(port) in err, err
            err = error_of(c, "SELECT * FROM nocatalog.a.b")
            assert "lake, iceberg" in err
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def moto_endpoint():
    """moto's S3 on 127.0.0.1 (started by .ci/services.sh, or here if it is not running)."""
    endpoint = os.environ.get("LAKE_TEST_MOTO_ENDPOINT", "http://127.0.0.1:5055")
    try:
        urllib.request.urlopen(endpoint + "/moto-api/", timeout=2)
        return endpoint, None
    except OSError:
        port_socket = socket.socket()
        port_socket.bind(("127.0.0.1", 0))
        port = port_socket.getsockname()[1]
        port_socket.close()
        proc = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint + "/moto-api/", timeout=1)
                return endpoint, proc
            except OSError:
                time.sleep(0.1)
        proc.kill()
        raise RuntimeError("moto_server did not start")


def test_an_iceberg_table_on_s3_reads_with_the_storage_settings(tmp_path):
    import boto3  # installed with moto

    endpoint, moto = moto_endpoint()
    bucket = f"iceberg-{int(time.time() * 1000)}"
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                 aws_secret_access_key="testing").create_bucket(Bucket=bucket)
    props = {"s3.endpoint": endpoint, "s3.region": "us-east-1", "s3.access-key-id": "testing",
             "s3.secret-access-key": "testing"}
    writer = sql_catalog(tmp_path, warehouse=f"s3://{bucket}/warehouse", **props,
                         **{"py-io-impl": "boto3_io.Boto3FileIO"})
    writer.create_namespace("remote")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    table = writer.create_table("remote.items", schema=schema)
    table.append(pa.table({"id": [1, 2, 3], "v": ["x", "y", "z"]}, schema=schema))
    table.append(pa.table({"id": [4], "v": ["w"]}, schema=schema))
    table = writer.load_table("remote.items")
    assert table.metadata_location.startswith(f"s3://{bucket}/")
    first = table.history()[0].snapshot_id
    rest = serve(tmp_path, 0, "s3", "s3", None, None, {**props, "py-io-impl": "boto3_io.Boto3FileIO"})
    base = {"LAKE_ICEBERG_REST_URI": f"http://127.0.0.1:{rest.server_address[1]}", "LAKE_ICEBERG_WAREHOUSE": "s3"}
    with_settings, dir_a = start_lake({**base, "LAKE_ICEBERG_STORAGE": ",".join(f"{k}={v}" for k, v in props.items())})
    without, dir_b = start_lake({**base, "AWS_ACCESS_KEY_ID": "nobody", "AWS_SECRET_ACCESS_KEY": "nothing",
                                 "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:1"})
    try:
        with flightsql.connect(with_settings.uri, autocommit=True) as c:
            assert rows(query(c, "SELECT * FROM iceberg.remote.items")) == [
                {"id": 1, "v": "x"}, {"id": 2, "v": "y"}, {"id": 3, "v": "z"}, {"id": 4, "v": "w"}]
            assert query(c, f"SELECT count(*) AS n FROM iceberg.remote.items VERSION AS OF {first}").to_pylist() == [{"n": 3}]
        with flightsql.connect(without.uri, autocommit=True) as c:
            err = error_of(c, "SELECT * FROM iceberg.remote.items")
            assert f"s3://{bucket}/" in err, err
    finally:
        for server, data_dir in ((with_settings, dir_a), (without, dir_b)):
            server.stop()
            shutil.rmtree(data_dir, ignore_errors=True)
        rest.shutdown()
        if moto is not None:
            moto.kill()


def test_one_large_data_file_is_read_by_every_partition_and_each_row_once(tmp_path):
    # One 19 MB data file of 15 row groups (pyiceberg's single append): Lake cuts it into
    # byte ranges so both partitions read it; every row group must be read by exactly one
    # range, and position deletes (by row position in the file) must still hit the rows
    # they name wherever the cut falls.
    import numpy as np
    from merge_on_read import POS_FILE_PATH_ID, POS_ID, commit_deletes, write_parquet
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    n = 1_500_000
    writer = sql_catalog(tmp_path)
    writer.create_namespace("big")
    x = np.random.default_rng(7).integers(-2**62, 2**62, n, dtype=np.int64)
    data = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)), "x": pa.array(x)})
    table = writer.create_table("big.wide", schema=data.schema,
                                properties={"format-version": "2", "write.parquet.row-group-limit": "100000"})
    table.append(data)
    table.refresh()
    whole = table.current_snapshot().snapshot_id
    (task,) = table.scan().plan_files()
    assert task.file.file_size_in_bytes > 16 << 20, task.file.file_size_in_bytes
    deleted = [0, 99_999, 100_000, 749_999, 750_000, 750_123, n - 1]
    pos_path = f"{table.location()}/data/pos-deletes.parquet"
    positions = pa.table({"file_path": [task.file.file_path] * len(deleted), "pos": deleted}, schema=pa.schema([
        pa.field("file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": str(POS_FILE_PATH_ID)}),
        pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": str(POS_ID)})]))
    size = write_parquet(pos_path, positions)
    commit_deletes(table, DataFile.from_args(
        _table_format_version=2, content=DataFileContent.POSITION_DELETES, file_path=pos_path,
        file_format=FileFormat.PARQUET, partition=Record(), record_count=len(deleted), file_size_in_bytes=size),
        "position deletes across the cut")

    rest = serve(tmp_path, 0, "big", "big", None, None)
    server, data_dir = start_lake({"LAKE_ICEBERG_REST_URI": f"http://127.0.0.1:{rest.server_address[1]}",
                                   "LAKE_ICEBERG_WAREHOUSE": "big"})
    summary = ("SELECT count(*) AS n, count(x) AS nx, sum(id) AS s, count(DISTINCT id) AS d, "
               "min(x) AS lo, max(x) AS hi FROM iceberg.big.wide")
    try:
        with flightsql.connect(server.uri, autocommit=True) as c:
            got = query(c, f"{summary} VERSION AS OF {whole} WHERE x <> 0").to_pylist()
            assert got == [{"n": n, "nx": n, "s": n * (n - 1) // 2, "d": n,
                            "lo": int(x.min()), "hi": int(x.max())}], got
            kept = np.delete(np.arange(n), deleted)
            got = query(c, summary).to_pylist()
            assert got == [{"n": len(kept), "nx": len(kept), "s": int(kept.sum()), "d": len(kept),
                            "lo": int(np.delete(x, deleted).min()), "hi": int(np.delete(x, deleted).max())}], got
            listed = ", ".join(str(i) for i in deleted + [1, 100_001, n - 2])
            got = query(c, f"SELECT id FROM iceberg.big.wide WHERE id IN ({listed}) ORDER BY id").to_pylist()
            assert got == [{"id": 1}, {"id": 100_001}, {"id": n - 2}], got
            # A range on the sorted id skips the row groups whose bounds exclude it: the
            # scan reads the first two of the fifteen, and the filter above it keeps the
            # range's rows less the deleted ones (0, 99,999, 100,000).
            where = "FROM iceberg.big.wide WHERE id < 150000"
            got = query(c, f"SELECT count(*) AS n, sum(id) AS s {where}").to_pylist()
            assert got == [{"n": 150_000 - 3, "s": 150_000 * 149_999 // 2 - 99_999 - 100_000}], got
            plan = "\n".join(r["plan"] for r in query(c, f"EXPLAIN ANALYZE SELECT id {where}").to_pylist())
            # DataFusion shows counts rounded, as "200.0 K".
            scanned = [float(n) * {"": 1, "K": 1e3, "M": 1e6, "B": 1e9}[unit] for n, unit in
                       re.findall(r"IcebergScanExec:.*?output_rows=([\d.]+) ?([KMB]?)", plan)]
            assert len(scanned) == 1 and 100_000 < scanned[0] <= 200_000, plan
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
        rest.shutdown()
