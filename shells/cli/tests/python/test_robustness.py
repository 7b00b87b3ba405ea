"""Bad input and concurrency found by attacking `lake serve`: each case must get a clear
error (or the right answer), keep the server up, and lose or half-write nothing."""

import re
import threading
import time

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pyarrow.flight
import pytest

from conftest import CLIENT_ERRORS, query, race_on_a_new_table


def lineitem_count(conn):
    return query(conn, "SELECT count(*) AS n FROM tpch.lineitem").to_pylist()[0]["n"]


def test_deep_expressions_are_refused_not_fatal(server, conn):
    before = lineitem_count(conn)
    assert query(conn, "SELECT " + "+".join(["1"] * 100) + " AS s").to_pylist() == [{"s": 100}]
    for sql in ["SELECT " + "+".join(["1"] * 3000), "SELECT 1 WHERE " + " AND ".join(["1=1"] * 3000)]:
        with pytest.raises(flightsql.Error) as err:
            query(conn, sql)
        assert "nested more than" in str(err.value)
    assert server.alive()
    assert lineitem_count(conn) == before


def test_concurrent_writers_and_readers_all_succeed(server, unique_ns):
    with flightsql.connect(server.uri, autocommit=True) as c:
        query(c, f"CREATE TABLE {unique_ns}.cc (w BIGINT, i BIGINT)")
    errors = []

    def write(w):
        try:
            with flightsql.connect(server.uri, autocommit=True) as c:
                for i in range(6):
                    query(c, f"INSERT INTO {unique_ns}.cc VALUES ({w}, {i})")
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(e)

    def read():
        try:
            with flightsql.connect(server.uri, autocommit=True) as c:
                for _ in range(10):
                    query(c, f"SELECT count(*) AS n FROM {unique_ns}.cc")
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(3)]
    threads += [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    with flightsql.connect(server.uri, autocommit=True) as c:
        rows = query(c, f"SELECT w, i FROM {unique_ns}.cc ORDER BY w, i").to_pylist()
    assert rows == [{"w": w, "i": i} for w in range(3) for i in range(6)]


def test_concurrent_writers_on_a_brand_new_table_all_succeed_exactly_once(server, unique_ns):
    # Issue 21: the first commits of a new table (creating the Lance dataset) raced, and the
    # losers got INTERNAL "Dataset already exists: <server path>".
    errors = race_on_a_new_table([server.uri], f"{unique_ns}.race")
    assert errors == []
    with flightsql.connect(server.uri, autocommit=True) as c:
        rows = query(c, f"SELECT w, i FROM {unique_ns}.race ORDER BY w, i").to_pylist()
    assert rows == [{"w": w, "i": i} for w in range(6) for i in range(10)]


# An absolute path with two or more segments at the start of a word, a file:// URI, or a
# Rust source location; gRPC method names (/arrow.flight.protocol.FlightService/DoGet) are
# protocol, not files.
SERVER_PATH = re.compile(r"(?:^|[\s'\"(=,:<\[])(/(?!arrow\.flight\.protocol\.)[\w.~-]+/[^\s'\",;)]*)|file://|\.rs:\d+")


def test_no_error_text_a_client_read_names_a_server_path(server, conn, unique_ns):
    # Runs last (conftest.py): every error the suites above provoked, as the client read it,
    # plus failures of each kind provoked here, so the check means something on its own.
    query(conn, f"CREATE TABLE {unique_ns}.e (id BIGINT NOT NULL)")
    provoked = [
        f"SELECT * FROM {unique_ns}.missing",
        "SELEC 1",
        "SELECT 'a' + 1",
        f"SELECT * FROM {unique_ns}.e VERSION AS OF 99",
        f"INSERT INTO {unique_ns}.e VALUES (NULL)",
        "CREATE TABLE no_such_ns.t (x BIGINT)",
        f"DROP TABLE {unique_ns}.missing",
        "COPY (SELECT 1) TO '/tmp/lake-copy-probe.csv'",
        "SELECT * FROM read_parquet('/etc/passwd')",
    ]
    for sql in provoked:
        with pytest.raises(flightsql.Error):
            query(conn, sql)
    with conn.cursor() as cur, pytest.raises(flightsql.Error):
        cur.adbc_ingest("e", pa.table({"other": pa.array(["x"])}), mode="append", db_schema_name=unique_ns)
    client = pyarrow.flight.FlightClient(server.uri)
    with pytest.raises(pyarrow.lib.ArrowException):
        client.do_get(pyarrow.flight.Ticket(b"\x01" + b"\x00" * 40)).read_all()
    server_errors = [e for e in CLIENT_ERRORS if "connection refused" not in e.lower()]
    assert len(server_errors) >= len(provoked) + 2
    leaks = [e for e in server_errors if SERVER_PATH.search(e)]
    assert leaks == []


def test_executemany_is_all_or_nothing(conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.em (id BIGINT NOT NULL)")
    with conn.cursor() as cur, pytest.raises(flightsql.Error):
        cur.executemany(f"INSERT INTO {unique_ns}.em VALUES (?)", [(1,), (2,), (None,), (4,)])
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.em").to_pylist() == [{"n": 0}]


@pytest.mark.parametrize("columns, expected", [
    ("a INT, a INT", "appears twice"),
    ("id BIGINT PRIMARY KEY", "would not be enforced"),
    ("n BIGINT DEFAULT 5", "would not be enforced"),
])
def test_a_refused_create_table_leaves_no_table(conn, unique_ns, columns, expected):
    with pytest.raises(flightsql.Error) as err:
        query(conn, f"CREATE TABLE {unique_ns}.bad ({columns})")
    assert expected in str(err.value)
    query(conn, f"CREATE TABLE {unique_ns}.bad (ok BIGINT)")  # the name is free
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.bad").to_pylist() == [{"n": 0}]


def test_a_type_lance_cannot_store_leaves_no_table(conn, unique_ns):
    with pytest.raises(flightsql.Error) as err:
        query(conn, f"CREATE TABLE {unique_ns}.iv (e INTERVAL)")
    assert "cannot store" in str(err.value) or "not supported" in str(err.value).lower()
    assert "iv" not in [t["table_name"] for s in conn.adbc_get_objects(
        depth="tables", db_schema_filter=unique_ns).read_all().to_pylist()[0]["catalog_db_schemas"]
        for t in (s["db_schema_tables"] or [])]


def test_dictionary_columns_are_stored_as_values_and_read_back(conn, unique_ns):
    data = pa.table({"k": pa.array(["a", "b", "a"]).dictionary_encode(), "v": pa.array([1, 2, 3])})
    with conn.cursor() as cur:
        cur.adbc_ingest("dict", data, mode="create", db_schema_name=unique_ns)
        cur.adbc_ingest("dict", data, mode="append", db_schema_name=unique_ns)
    table = query(conn, f"SELECT * FROM {unique_ns}.dict ORDER BY v, k")
    assert table.column("k").to_pylist() == ["a", "a", "b", "b", "a", "a"]


def test_an_overlong_name_gets_a_clear_error_and_metasrv_stays_reachable(server, conn, unique_ns):
    data = pa.table({"x": pa.array([1])})
    with conn.cursor() as cur, pytest.raises(flightsql.Error) as err:
        cur.adbc_ingest("t" * 20_000, data, mode="create", db_schema_name=unique_ns)
    assert "invalid table name" in str(err.value)
    assert len(str(err.value)) < 5_000
    # Writes go through Metasrv: it must still answer.
    query(conn, f"CREATE TABLE {unique_ns}.after (x BIGINT)")
    assert server.alive()


@pytest.mark.parametrize("sql, params, expected", [
    ("SELECT ? + 1 AS v", (), "none were bound"),
    ("SELECT count(*) FROM tpch.nation WHERE n_nationkey < ?", (1, 2), "but 2 value(s) were bound"),
    ("SELECT 1 AS one", (5,), "but 1 value(s) were bound"),
])
def test_parameter_count_must_match(conn, sql, params, expected):
    with pytest.raises(flightsql.Error) as err:
        query(conn, sql, params)
    assert expected in str(err.value)


def test_a_string_that_is_not_a_number_is_an_error_not_null(conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.num (n BIGINT)")
    with pytest.raises(flightsql.Error) as err:
        query(conn, f"INSERT INTO {unique_ns}.num VALUES (?)", ("x",))
    assert "column n" in str(err.value)
    assert query(conn, f"SELECT count(*) AS c FROM {unique_ns}.num").to_pylist() == [{"c": 0}]


def test_a_filter_that_fails_on_the_data_is_the_clients_error_and_writes_nothing(conn, unique_ns):
    """A filter Lance could evaluate in its scan but that fails on a row (a zero divisor,
    text that is no number, bytes that are no UTF-8) is refused as INVALID_ARGUMENT with
    the cause, as the same expression in a projection is; DML with such a predicate
    commits nothing."""
    t = f"{unique_ns}.fails"
    query(conn, f"CREATE TABLE {t} (i INT, s VARCHAR, b BYTEA)")
    query(conn, f"INSERT INTO {t} VALUES (0, 'x', X'ff00'), (2, '7', X'6162'), (5, NULL, NULL)")
    for sql, cause in [
        (f"SELECT i FROM {t} WHERE 10 / i > 1", "Divide by zero"),
        (f"SELECT i FROM {t} WHERE i % 0 = 1", "Divide by zero"),
        (f"SELECT i FROM {t} WHERE CAST(s AS INT) = 7", "Cannot cast string 'x'"),
        (f"SELECT i FROM {t} WHERE b LIKE 'ab%'", "non UTF-8"),
        (f"DELETE FROM {t} WHERE 10 / i > 1", "Divide by zero"),
        (f"UPDATE {t} SET s = 'y' WHERE CAST(s AS INT) = 7", "Cannot cast string 'x'"),
        (f"SELECT i FROM {t} WHERE substr(s, -9223372036854775808, 5) = ''", "overflow"),
        # Failures shared by several partitions (a join's build side, a subquery's result).
        (f"SELECT i FROM {t} WHERE i = (SELECT i FROM {t})", "more than one row"),
        (f"SELECT i FROM {t} WHERE i IN (SELECT 10 / i FROM {t})", "Divide by zero"),
        (f"DELETE FROM {t} WHERE i IN (SELECT i FROM {t} WHERE 10 / i > 1)", "Divide by zero"),
        # A pattern that does not compile, found by the simplifier or at execution.
        (f"SELECT i FROM {t} WHERE s ~ '('", "regex parse error"),
        (f"SELECT i FROM {t} WHERE s SIMILAR TO '('", "did not compile"),
        (f"SELECT regexp_replace(s, '(', 'x') FROM {t}", "regex parse error"),
    ]:
        with pytest.raises(flightsql.ProgrammingError) as err:  # INVALID_ARGUMENT
            query(conn, sql)
        assert "INVALID_ARGUMENT" in str(err.value) and cause in str(err.value), sql
    assert sorted(query(conn, f"SELECT i, s FROM {t}").to_pylist(), key=lambda r: r["i"]) == [
        {"i": 0, "s": "x"}, {"i": 2, "s": "7"}, {"i": 5, "s": None}]
    # The conjuncts that cannot fail still filter inside the Lance scan; the rest runs above.
    plan = query(conn, f"EXPLAIN SELECT i FROM {t} WHERE i > 1 AND 10 / i > 1").to_pylist()
    physical = next(r["plan"] for r in plan if r["plan_type"] == "physical_plan")
    assert re.search(r"LanceRead:.*full_filter=i > Int32\(1\)", physical), physical
    assert re.search(r"FilterExec: 10 / CAST\(i@\d+ AS Int64\) > 1", physical), physical
    assert sorted(r["i"] for r in query(conn, f"SELECT i FROM {t} WHERE i > 1 AND 10 / i > 1")
                  .to_pylist()) == [2, 5]
    assert query(conn, f"SELECT i FROM {t} WHERE i > 1 AND 10 / i > 2").to_pylist() == [{"i": 2}]


def test_a_double_beyond_real_range_is_refused_not_stored_as_infinity(conn, unique_ns):
    t = f"{unique_ns}.reals"
    query(conn, f"CREATE TABLE {t} (r REAL)")
    for value in ["1e39", "CAST(-1e39 AS DOUBLE)"]:
        with pytest.raises(flightsql.ProgrammingError) as err:
            query(conn, f"INSERT INTO {t} VALUES ({value})")
        assert "out of range for REAL" in str(err.value)
    query(conn, f"INSERT INTO {t} VALUES (3e38), (CAST('Infinity' AS DOUBLE)), (NULL), (1e-50)")
    # Every other way a DOUBLE reaches the column: a bound parameter, UPDATE, MERGE.
    for sql, params in [
        (f"INSERT INTO {t} VALUES (?)", (1e39,)),
        (f"UPDATE {t} SET r = ? WHERE r IS NULL", (-1e39,)),
        (f"MERGE INTO {t} USING (SELECT CAST(1e300 AS DOUBLE) AS v) s ON {t}.r = s.v "
         "WHEN NOT MATCHED THEN INSERT (r) VALUES (s.v)", None),
        (f"MERGE INTO {t} USING (SELECT CAST(0 AS DOUBLE) AS v) s ON {t}.r = s.v "
         "WHEN MATCHED THEN UPDATE SET r = 1e39", None),
    ]:
        with pytest.raises(flightsql.ProgrammingError) as err:
            query(conn, sql, params)
        assert "out of range for REAL" in str(err.value), sql
    rows = [r["r"] for r in query(conn, f"SELECT r FROM {t}").to_pylist()]
    assert sorted(rows, key=lambda v: (v is None, v or 0)) == [
        0.0, pytest.approx(3e38, rel=1e-6), float("inf"), None]


# Every kind of write a client can send while another client drops the table.
DROP_RACERS = [
    "INSERT INTO {t} VALUES ({k})",
    "DELETE FROM {t} WHERE i = {k}",
    "UPDATE {t} SET i = i + 1 WHERE i = {k}",
    "MERGE INTO {t} USING (SELECT {k} AS i) s ON {t}.i = s.i WHEN NOT MATCHED THEN INSERT (i) VALUES (s.i)",
    "OPTIMIZE {t}",
    "CREATE INDEX IF NOT EXISTS i_idx ON {t} (i)",
    "SELECT count(*) FROM {t}",
]


def test_writes_racing_drop_table_fail_as_not_found_never_internal(server, unique_ns):
    """A write that loses to DROP TABLE committed nothing, and says the table does not
    exist (NOT_FOUND): before, an append whose commit Metasrv refused for the dropped table
    failed with INTERNAL "lance: append …: LanceError(IO): metasrv: table … does not exist",
    a compaction with INTERNAL "Commit result … is unknown", and an index build with
    INTERNAL "cannot open … version …". A concurrent OPTIMIZE or index build may still lose
    to another (ABORTED, safe to run again)."""
    bad = []
    for trial in range(4):
        t = f"{unique_ns}.dropped{trial}"
        with flightsql.connect(server.uri, autocommit=True) as c:
            query(c, f"CREATE TABLE {t} (i BIGINT)")
            query(c, f"INSERT INTO {t} VALUES (1), (2), (3)")
        go = threading.Barrier(len(DROP_RACERS) + 1)

        def write(k):
            with flightsql.connect(server.uri, autocommit=True) as c:
                go.wait(60)
                deadline = time.monotonic() + 60
                n = 0
                while time.monotonic() < deadline:
                    sql = DROP_RACERS[(k + n) % len(DROP_RACERS)].format(t=t, k=k)
                    n += 1
                    try:
                        query(c, sql)
                    except flightsql.Error as e:
                        text = str(e).splitlines()[0]
                        if text.startswith("NOT_FOUND"):
                            return
                        if "lost to" in text and "committed nothing" in text:
                            continue
                        bad.append((sql, text))
                        return
                bad.append((k, "no statement saw the table dropped within 60 s"))

        threads = [threading.Thread(target=write, args=(k,)) for k in range(len(DROP_RACERS))]
        for thread in threads:
            thread.start()
        go.wait(60)
        time.sleep(0.2 + 0.2 * trial)
        with flightsql.connect(server.uri, autocommit=True) as c:
            query(c, f"DROP TABLE {t}")
        for thread in threads:
            thread.join(120)
    assert bad == []
    assert server.alive()
