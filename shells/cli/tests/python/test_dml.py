"""DELETE and UPDATE on Lake tables (issue 19): each statement is one new version (time
travel still reads the versions before it), a keyed retry changes the rows once, what
cannot be done is refused with the reason and changes nothing, and concurrent deletes,
updates, appends and compactions lose no row and resurrect none. Answers against DuckDB on
the same rows are in sql/dml.slt (test_differential.py)."""

import threading

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pyarrow.flight as fl
import pytest

from conftest import query
from test_flight_sql import flight_client, prepared_statement_cmd


def rows(conn, sql):
    return sorted(tuple(r.values()) for r in query(conn, sql).to_pylist())


def test_each_change_is_a_version_and_time_travel_reads_the_ones_before(conn, unique_ns):
    t = f"{unique_ns}.t"
    query(conn, f"CREATE TABLE {t} (id BIGINT, s VARCHAR)")  # version 1, empty
    query(conn, f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")  # version 2
    assert query(conn, f"DELETE FROM {t} WHERE id = 2").to_pylist() == [{"count": 1}]  # 3
    assert query(conn, f"UPDATE {t} SET s = s || '!' WHERE id >= 3").to_pylist() == [{"count": 1}]  # 4
    # Matching nothing makes no version.
    assert query(conn, f"DELETE FROM {t} WHERE id = 99").to_pylist() == [{"count": 0}]
    assert rows(conn, f"SELECT * FROM {t}") == [(1, "a"), (3, "c!")]
    assert rows(conn, f"SELECT * FROM {t} VERSION AS OF 2") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(conn, f"SELECT * FROM {t} VERSION AS OF 3") == [(1, "a"), (3, "c")]
    assert rows(conn, f"SELECT * FROM {t} VERSION AS OF 4") == [(1, "a"), (3, "c!")]
    with pytest.raises(flightsql.Error, match="5"):
        query(conn, f"SELECT * FROM {t} VERSION AS OF 5")
    # A prepared statement's parameters; unquoted names in any case, the table's own
    # qualifier.
    with conn.cursor() as cur:
        cur.execute(f"UPDATE {t} SET S = ? WHERE ID = ?", parameters=("z", 1))
    assert rows(conn, f"SELECT * FROM {t}") == [(1, "z"), (3, "c!")]
    query(conn, f"UPDATE {t} AS x SET x.s = 'y' WHERE x.id = 3")
    assert rows(conn, f"SELECT * FROM {t}") == [(1, "z"), (3, "y")]


def test_a_keyed_retry_of_an_update_changes_the_rows_once(server, conn, unique_ns):
    t = f"lake.{unique_ns}.k"
    query(conn, f"CREATE TABLE {t} (id BIGINT, s VARCHAR)")
    query(conn, f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
    client = flight_client(server)
    command = prepared_statement_cmd(client, f"UPDATE {t} SET s = s || '!' WHERE id = 1")
    keyed = fl.FlightCallOptions(headers=[(b"idempotency-key", f"{unique_ns}-u".encode())])
    totals = [client.get_flight_info(fl.FlightDescriptor.for_command(command), keyed).total_records
              for _ in range(3)]
    # The first run updated one row; the retries are replays (-1: Flight SQL's unknown count).
    assert totals == [1, -1, -1]
    assert rows(conn, f"SELECT * FROM {t}") == [(1, "a!"), (2, "b")]
    # Another statement under the same key is refused, and changes nothing.
    other = prepared_statement_cmd(client, f"DELETE FROM {t}")
    with pytest.raises(pa.ArrowException, match="different payload"):
        client.get_flight_info(fl.FlightDescriptor.for_command(other), keyed)
    assert rows(conn, f"SELECT * FROM {t}") == [(1, "a!"), (2, "b")]
    # Without a key, each run is a change of its own.
    client.get_flight_info(fl.FlightDescriptor.for_command(command))
    assert rows(conn, f"SELECT * FROM {t}") == [(1, "a!!"), (2, "b")]


@pytest.mark.parametrize("sql, message", [
    ("UPDATE {t} SET v = 2147483647 + v WHERE id = 2", "cast"),
    ("UPDATE {t} SET v = o.v FROM {o} o WHERE {t}.id = o.id", "UPDATE ... FROM is not supported"),
    ("UPDATE {t} SET nope = 1", "nope"),
    ("UPDATE {t} SET v = 'x'", "x"),
    ("DELETE FROM {t} VERSION AS OF 2 WHERE id = 1", "past version"),
    ("DELETE FROM {t} WHERE id = 1 RETURNING id", "returning"),
    ("DELETE FROM lake.{ns}.missing WHERE id = 1", "missing"),
    ("DELETE FROM iceberg.db.t", "read-only"),
    ("UPDATE {t} SET v = 1, V = 2", "more than once"),
    ("UPDATE {t} SET other.v = 1", "qualifier must name the table"),
    ("DELETE FROM {t} WHERE v = max(v)", "aggregate and window functions"),
    ("UPDATE {t} SET v = row_number() OVER ()", "aggregate and window functions"),
], ids=["overflow", "from", "column", "type", "past", "returning", "missing", "iceberg", "twice",
        "qualifier", "aggregate", "window"])
def test_a_refusal_says_why_and_changes_nothing(conn, unique_ns, sql, message):
    t, o = f"{unique_ns}.r", f"{unique_ns}.o"
    query(conn, f"CREATE TABLE {t} (id BIGINT, v INTEGER)")
    query(conn, f"CREATE TABLE {o} (id BIGINT, v INTEGER)")
    query(conn, f"INSERT INTO {t} VALUES (1, 10), (2, 20)")
    query(conn, f"INSERT INTO {o} VALUES (1, 11)")
    with pytest.raises(flightsql.Error) as refused:
        query(conn, sql.format(t=t, o=o, ns=unique_ns))
    assert message.lower() in str(refused.value).lower(), str(refused.value)
    assert rows(conn, f"SELECT * FROM {t}") == [(1, 10), (2, 20)]
    assert rows(conn, f"SELECT * FROM {t} VERSION AS OF 2") == [(1, 10), (2, 20)]


def test_concurrent_deletes_updates_appends_and_compactions_lose_nothing_and_resurrect_nothing(
        server, conn, unique_ns):
    t = f"{unique_ns}.c"
    query(conn, f"CREATE TABLE {t} (id BIGINT, v BIGINT)")
    # Rows 0..59 in six fragments.
    for start in range(0, 60, 10):
        values = ", ".join(f"({i}, 0)" for i in range(start, start + 10))
        query(conn, f"INSERT INTO {t} VALUES {values}")
    errors = []

    def worker(statements, tolerated=()):
        try:
            with flightsql.connect(server.uri, autocommit=True) as c:
                for sql in statements:
                    try:
                        query(c, sql)
                    except flightsql.Error as e:
                        if not any(word in str(e) for word in tolerated):
                            raise
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    plans = [
        ([f"INSERT INTO {t} VALUES ({i}, 0)" for i in range(100, 130)], ()),
        ([f"DELETE FROM {t} WHERE id = {i}" for i in range(0, 30)], ()),
        ([f"UPDATE {t} SET v = v + 1 WHERE id = {i}" for i in range(30, 60)], ()),
        ([f"UPDATE {t} SET v = v + 1 WHERE id = {i}" for i in range(30, 60)], ()),
        # A compaction that loses to a change of the same fragments commits nothing.
        ([f"OPTIMIZE {t}"] * 5, ("lost to another rewrite",)),
    ]
    threads = [threading.Thread(target=worker, args=plan) for plan in plans]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    assert not any(th.is_alive() for th in threads), "a writer did not finish in 300 s"
    assert not errors, errors
    expected = sorted([(i, 2) for i in range(30, 60)] + [(i, 0) for i in range(100, 130)])
    assert rows(conn, f"SELECT * FROM {t}") == expected
    # And once more after a final compaction.
    query(conn, f"OPTIMIZE {t}")
    assert rows(conn, f"SELECT * FROM {t}") == expected


def test_merge_counts_its_rows_is_one_version_and_refuses_an_ambiguous_match(server, conn, unique_ns):
    t, s = f"{unique_ns}.m", f"{unique_ns}.src"
    query(conn, f"CREATE TABLE {t} (id BIGINT NOT NULL, v BIGINT)")  # version 1
    query(conn, f"INSERT INTO {t} VALUES (1, 10), (2, 20), (3, 30)")  # version 2
    query(conn, f"CREATE TABLE {s} (id BIGINT, v BIGINT)")
    query(conn, f"INSERT INTO {s} VALUES (2, 200), (3, NULL), (4, 400)")
    merge = (f"MERGE INTO {t} AS t USING {s} AS s ON t.id = s.id "
             "WHEN MATCHED AND s.v IS NULL THEN DELETE "
             "WHEN MATCHED THEN UPDATE SET v = s.v "
             "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)")
    # One updated, one deleted, one inserted: 3 rows, one version (3).
    assert query(conn, merge).to_pylist() == [{"count": 3}]
    assert rows(conn, f"SELECT * FROM {t}") == [(1, 10), (2, 200), (4, 400)]
    assert rows(conn, f"SELECT * FROM {t} VERSION AS OF 2") == [(1, 10), (2, 20), (3, 30)]
    with pytest.raises(flightsql.Error, match="4"):
        query(conn, f"SELECT * FROM {t} VERSION AS OF 4")
    # A keyed retry is a replay: nothing is inserted twice.
    client = flight_client(server)
    again = f"MERGE INTO lake.{t} AS t USING lake.{s} AS s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id + 10, 0)"
    command = prepared_statement_cmd(client, again)
    keyed = fl.FlightCallOptions(headers=[(b"idempotency-key", f"{unique_ns}-m".encode())])
    totals = [client.get_flight_info(fl.FlightDescriptor.for_command(command), keyed).total_records
              for _ in range(2)]
    assert totals == [1, -1]
    assert rows(conn, f"SELECT * FROM {t}") == [(1, 10), (2, 200), (4, 400), (13, 0)]
    # Two source rows for one target row: refused, nothing changes.
    query(conn, f"INSERT INTO {s} VALUES (2, 201)")
    with pytest.raises(flightsql.Error, match="several rows of the source"):
        query(conn, f"MERGE INTO {t} AS t USING {s} AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v")
    # A NOT NULL column the INSERT leaves out, a clause that cannot be: refused.
    with pytest.raises(flightsql.Error, match="id"):
        query(conn, f"MERGE INTO {t} AS t USING {s} AS s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (v) VALUES (s.v)")
    with pytest.raises(flightsql.Error, match="not allowed in a NOT MATCHED"):
        query(conn, f"MERGE INTO {t} AS t USING {s} AS s ON t.id = s.id WHEN NOT MATCHED THEN DELETE")
    with pytest.raises(flightsql.Error, match="read-only|merges into its own"):
        query(conn, f"MERGE INTO iceberg.db.t AS t USING {s} AS s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert rows(conn, f"SELECT * FROM {t}") == [(1, 10), (2, 200), (4, 400), (13, 0)]


def test_concurrent_upserts_of_one_key_insert_it_once_and_apply_every_update(server, conn, unique_ns):
    t = f"{unique_ns}.up"
    query(conn, f"CREATE TABLE {t} (id INT, v INT)")
    errors = []

    def upsert():
        try:
            with flightsql.connect(server.uri, autocommit=True) as c:
                for key in range(3):
                    query(c, f"MERGE INTO {t} AS t USING (SELECT {key} AS id) AS s ON t.id = s.id "
                             "WHEN MATCHED THEN UPDATE SET v = t.v + 1 WHEN NOT MATCHED THEN INSERT VALUES (s.id, 1)")
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=upsert) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    assert not errors, errors
    # Each key once, counted by every writer: a MERGE that lost the race ran again on
    # what the winner committed, never rebased blindly onto it.
    assert rows(conn, f"SELECT * FROM {t}") == [(0, 4), (1, 4), (2, 4)]


@pytest.mark.parametrize("clause, message", [
    ("WHEN NOT MATCHED THEN INSERT VALUES (s.id, t.v)", "names t, which has no row"),
    ("WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = s.v", "names s, which has no row"),
    ("WHEN MATCHED AND EXISTS (SELECT 1) THEN DELETE", "subquery"),
    ("WHEN MATCHED THEN UPDATE SET v = row_number() OVER ()", "window function"),
    ("WHEN MATCHED THEN UPDATE SET s.v = 1", "qualifier must name the target"),
], ids=["target-absent", "source-absent", "subquery", "window", "qualifier"])
def test_a_merge_clause_that_cannot_mean_anything_is_refused(conn, unique_ns, clause, message):
    t = f"{unique_ns}.mr"
    query(conn, f"CREATE TABLE {t} (id BIGINT, v BIGINT)")
    query(conn, f"INSERT INTO {t} VALUES (1, 1)")
    with pytest.raises(flightsql.Error, match=message):
        query(conn, f"MERGE INTO {t} AS t USING (SELECT 1 AS id, 5 AS v) AS s ON t.id = s.id {clause}")
    assert rows(conn, f"SELECT * FROM {t}") == [(1, 1)]
