"""End-to-end tests of `lake serve` through clients written by others: the ADBC Flight SQL
driver and pyarrow.flight. TPC-H answers are checked against DuckDB on the same rows."""

import decimal
import subprocess

import adbc_driver_flightsql.dbapi as flightsql
import duckdb
import pyarrow as pa
import pyarrow.flight as fl
import pytest

from conftest import lake_binary, query


# --- Flight SQL helpers for calls ADBC does not expose ---------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def statement_query_cmd(sql: str) -> bytes:
    """google.protobuf.Any wrapping arrow.flight.protocol.sql.CommandStatementQuery."""
    inner = _field(1, sql.encode())
    return _field(1, b"type.googleapis.com/arrow.flight.protocol.sql.CommandStatementQuery") + _field(2, inner)


def _fields(data: bytes) -> dict[int, bytes]:
    """The length-delimited fields of a protobuf message (the last of each number)."""
    out, i = {}, 0
    while i < len(data):
        key, shift = 0, 0
        while True:
            b = data[i]; i += 1
            key |= (b & 0x7F) << shift; shift += 7
            if not b & 0x80:
                break
        assert key & 7 == 2, "only length-delimited fields expected"
        length, shift = 0, 0
        while True:
            b = data[i]; i += 1
            length |= (b & 0x7F) << shift; shift += 7
            if not b & 0x80:
                break
        out[key >> 3] = data[i:i + length]
        i += length
    return out


def prepared_statement_cmd(client, sql: str) -> bytes:
    """CreatePreparedStatement for `sql`; the Any of a CommandPreparedStatementQuery on its
    handle."""
    request = _field(1, b"type.googleapis.com/arrow.flight.protocol.sql.ActionCreatePreparedStatementRequest") \
        + _field(2, _field(1, sql.encode()))
    result = next(iter(client.do_action(fl.Action("CreatePreparedStatement", request))))
    handle = _fields(_fields(result.body.to_pybytes())[2])[1]
    return _field(1, b"type.googleapis.com/arrow.flight.protocol.sql.CommandPreparedStatementQuery") \
        + _field(2, _field(1, handle))


def flight_client(server):
    return fl.FlightClient(server.uri)


# --- metadata ----------------------------------------------------------------------------

def test_get_info_names_the_server(conn):
    info = conn.adbc_get_info()
    assert info["vendor_name"] == "Lake"
    assert "vendor_version" in info


def test_get_objects_at_every_depth(conn):
    catalogs = conn.adbc_get_objects(depth="catalogs").read_all().to_pylist()
    assert [c["catalog_name"] for c in catalogs] == ["lake"]

    schemas = conn.adbc_get_objects(depth="db_schemas").read_all().to_pylist()
    names = {s["db_schema_name"] for s in schemas[0]["catalog_db_schemas"]}
    assert {"default", "tpch"} <= names

    tables = conn.adbc_get_objects(depth="tables", db_schema_filter="tpch").read_all().to_pylist()
    tpch = [s for s in tables[0]["catalog_db_schemas"] if s["db_schema_name"] == "tpch"][0]
    assert sorted(t["table_name"] for t in tpch["db_schema_tables"]) == sorted(
        ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"]
    )
    assert {t["table_type"] for t in tpch["db_schema_tables"]} == {"TABLE"}

    columns = conn.adbc_get_objects(
        depth="all", db_schema_filter="tpch", table_name_filter="nation"
    ).read_all().to_pylist()
    nation = columns[0]["catalog_db_schemas"][0]["db_schema_tables"][0]
    assert [c["column_name"] for c in nation["table_columns"]] == [
        "n_nationkey", "n_name", "n_regionkey", "n_comment"]


def test_table_schema_matches_the_data(conn):
    schema = conn.adbc_get_table_schema("nation", catalog_filter="lake", db_schema_filter="tpch")
    data = query(conn, "SELECT * FROM lake.tpch.nation")
    assert schema == data.schema
    assert schema.field("n_nationkey").type == pa.int64()
    assert not schema.field("n_nationkey").nullable


def test_table_types(conn):
    assert conn.adbc_get_table_types() == ["TABLE"]


def test_empty_catalog_filter_matches_no_catalog(server):
    # CommandGetTables with catalog "" means "tables without a catalog": none here.
    with flightsql.connect(server.uri, autocommit=True) as c:
        tables = c.adbc_get_objects(depth="tables", catalog_filter="").read_all().to_pylist()
        assert tables == []


# --- reads ---------------------------------------------------------------------------------

def test_flight_info_schema_equals_the_streamed_schema_including_nullability(server):
    client = flight_client(server)
    sql = "SELECT n_nationkey, n_name, n_nationkey + 1 AS next, NULL AS nothing FROM lake.tpch.nation"
    info = client.get_flight_info(fl.FlightDescriptor.for_command(statement_query_cmd(sql)))
    assert len(info.endpoints) == 1
    assert list(info.endpoints[0].locations) == []  # "this connection", never 0.0.0.0
    table = client.do_get(info.endpoints[0].ticket).read_all()
    assert info.schema == table.schema
    assert table.num_rows == 25


def duck_table(db, sql):
    result = db.execute(sql)
    # DuckDB 2 renamed fetch_arrow_table to to_arrow_table.
    return result.to_arrow_table() if hasattr(result, "to_arrow_table") else result.fetch_arrow_table()


def _lineitem_in_duckdb(conn):
    lineitem = query(conn, "SELECT * FROM tpch.lineitem")
    db = duckdb.connect()
    db.register("lineitem", lineitem)
    return lineitem, db


Q1 = """
SELECT l_returnflag, l_linestatus,
       sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       count(*) AS count_order
FROM {t}
WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
"""

Q6 = """
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM {t}
WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01'
  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24
"""


def test_string_group_keys_stay_string_on_the_wire(server, conn):
    # Aggregates group on views of their string keys (group_views.rs) and cast them back:
    # the FlightInfo schema and the stream both say string, as the catalog does.
    client = flight_client(server)
    sql = ("SELECT r_name, n_name, count(*) AS n FROM lake.tpch.nation "
           "JOIN lake.tpch.region ON n_regionkey = r_regionkey "
           "GROUP BY r_name, n_name ORDER BY r_name, n_name LIMIT 3")
    info = client.get_flight_info(fl.FlightDescriptor.for_command(statement_query_cmd(sql)))
    table = client.do_get(info.endpoints[0].ticket).read_all()
    assert info.schema == table.schema
    assert [f.type for f in table.schema] == [pa.string(), pa.string(), pa.int64()]
    assert table.to_pylist() == [{"r_name": "AFRICA", "n_name": "ALGERIA", "n": 1},
                                 {"r_name": "AFRICA", "n_name": "ETHIOPIA", "n": 1},
                                 {"r_name": "AFRICA", "n_name": "KENYA", "n": 1}]
    # A bound string parameter as the key.
    grouped = query(conn, "SELECT ? AS x, count(*) AS n FROM tpch.nation GROUP BY 1", ("a",))
    assert grouped.schema.field("x").type == pa.string()
    assert grouped.to_pylist() == [{"x": "a", "n": 25}]


def test_result_columns_may_share_a_name_as_in_postgresql(server, conn, unique_ns):
    # DataFusion 54 refuses a SELECT list with a repeated name; PostgreSQL returns each
    # column under the name it has.
    def columns(sql, params=None):
        table = query(conn, sql, params)
        rows = [tuple(column[row].as_py() for column in table.columns) for row in range(table.num_rows)]
        return table.schema.names, rows

    assert columns("SELECT 1, 1") == (["Int64(1)", "Int64(1)"], [(1, 1)])
    assert columns("SELECT n_nationkey, n_nationkey, n_nationkey + 1 AS n_nationkey "
                   "FROM tpch.nation WHERE n_nationkey < 2 ORDER BY n_nationkey") == (
        ["n_nationkey"] * 3, [(0, 0, 1), (1, 1, 2)])
    assert columns("SELECT n_regionkey AS k, count(*), n_regionkey AS k, count(*) FROM tpch.nation "
                   "GROUP BY n_regionkey ORDER BY 1 LIMIT 2") == (
        ["k", "count(*)", "k", "count(*)"], [(0, 5, 0, 5), (1, 5, 1, 5)])
    # In a subquery the repeated column stays, for `*` and for a set operation.
    assert columns("SELECT * FROM (SELECT r_name, r_name FROM tpch.region) s "
                   "WHERE r_name = 'ASIA'") == (["r_name", "r_name"], [("ASIA", "ASIA")])
    assert columns("SELECT 2, 2 UNION ALL SELECT 3, 4 ORDER BY 1") == (
        ["Int64(2)", "Int64(2)"], [(2, 2), (3, 4)])
    assert columns("SELECT ? AS x, 7 AS X", (5,)) == (["x", "x"], [(5, 7)])
    # What FlightInfo announces is what DoGet streams, names included.
    client = flight_client(server)
    sql = "SELECT r_regionkey, r_regionkey FROM lake.tpch.region ORDER BY 1 LIMIT 1"
    info = client.get_flight_info(fl.FlightDescriptor.for_command(statement_query_cmd(sql)))
    table = client.do_get(info.endpoints[0].ticket).read_all()
    assert info.schema == table.schema and table.schema.names == ["r_regionkey", "r_regionkey"]
    # A table cannot hold two columns of one name.
    with pytest.raises(flightsql.Error) as err:
        query(conn, f"CREATE TABLE {unique_ns}.twice AS SELECT r_name, r_name FROM tpch.region")
    assert 'column "r_name" appears twice' in str(err.value), str(err.value)
    with pytest.raises(flightsql.Error):
        query(conn, f"SELECT * FROM {unique_ns}.twice")
    query(conn, f"CREATE TABLE {unique_ns}.once (a BIGINT, b BIGINT)")
    query(conn, f"INSERT INTO {unique_ns}.once SELECT r_regionkey, r_regionkey FROM tpch.region")
    assert query(conn, f"SELECT sum(a) AS a, sum(b) AS b FROM {unique_ns}.once").to_pylist() == [{"a": 10, "b": 10}]


def _rows(table):
    return [tuple(decimal.Decimal(str(v)) if isinstance(v, (float, decimal.Decimal)) else v
                  for v in row.values()) for row in table.to_pylist()]


def test_tpch_q1_matches_duckdb(conn):
    lineitem, db = _lineitem_in_duckdb(conn)
    assert lineitem.num_rows > 50_000  # SF 0.01
    ours = query(conn, Q1.format(t="lake.tpch.lineitem"))
    theirs = duck_table(db, Q1.format(t="lineitem"))
    assert ours.num_rows == theirs.num_rows == 4
    for a, b in zip(ours.to_pylist(), theirs.to_pylist()):
        assert a["l_returnflag"] == b["l_returnflag"] and a["l_linestatus"] == b["l_linestatus"]
        assert a["count_order"] == b["count_order"]
        for k in ["sum_qty", "sum_base_price", "sum_disc_price", "sum_charge"]:
            assert abs(decimal.Decimal(str(a[k])) - decimal.Decimal(str(b[k]))) < decimal.Decimal("0.01"), k


def test_tpch_q6_matches_duckdb(conn):
    _, db = _lineitem_in_duckdb(conn)
    ours = query(conn, Q6.format(t="lake.tpch.lineitem")).to_pylist()[0]["revenue"]
    theirs = db.execute(Q6.format(t="lineitem")).fetchone()[0]
    assert ours is not None
    assert abs(decimal.Decimal(str(ours)) - decimal.Decimal(str(theirs))) < decimal.Decimal("0.01")


# --- prepared statements --------------------------------------------------------------------

def test_prepared_statement_with_parameters(conn):
    expected = query(conn, "SELECT count(*) AS n FROM tpch.lineitem WHERE l_linenumber < 3").to_pylist()[0]["n"]
    got = query(conn, "SELECT count(*) AS n FROM tpch.lineitem WHERE l_linenumber < ?", (3,)).to_pylist()[0]["n"]
    assert got == expected > 0
    # A placeholder whose type DataFusion cannot infer takes it from the bound value.
    assert query(conn, "SELECT ? AS v", (41,)).to_pylist() == [{"v": 41}]


def test_similar_to_and_like_follow_the_sql_standard_with_escape_clauses_and_bound_patterns(conn):
    """SIMILAR TO as ISO 9075-2 8.6 and PostgreSQL (manual 9.7.2) define it: a whole-string
    match, `%` / `_` wildcards, the character after the escape character literal. DuckDB
    has no ESCAPE clause for SIMILAR TO, so these answers are pinned here rather than in
    sql/strings.slt."""
    values = "(VALUES ('a_c'), ('abc'), ('a#c'), ('100%'), ('1000'), ('x\ny')) AS t(v)"

    def matching(pattern_sql, params=None):
        sql = f"SELECT v FROM {values} WHERE v SIMILAR TO {pattern_sql}"
        return sorted(r["v"] for r in query(conn, sql, params).to_pylist())

    assert matching("'a_c'") == ["a#c", "a_c", "abc"]
    assert matching("'a#_c' ESCAPE '#'") == ["a_c"]
    assert matching("'a##c' ESCAPE '#'") == ["a#c"]
    assert matching("'100\\%'") == ["100%"]
    assert matching("'100%'") == ["100%", "1000"]
    assert matching("'x%'") == ["x\ny"]  # `%` spans a line break
    assert matching("'b'") == []  # the whole string, not a part of it
    # A bound pattern is translated like a literal one.
    assert matching("?", ("%c",)) == ["a#c", "a_c", "abc"]
    with pytest.raises(flightsql.ProgrammingError) as err:
        matching("'ab#' ESCAPE '#'")
    assert "INVALID_ARGUMENT" in str(err.value), err.value
    assert "ends with its escape character" in str(err.value), err.value
    # LIKE with another escape character, bound too (DataFusion takes only the backslash).
    like = f"SELECT v FROM {values} WHERE v LIKE ? ESCAPE '#'"
    assert sorted(r["v"] for r in query(conn, like, ("a#_c",)).to_pylist()) == ["a_c"]
    assert sorted(r["v"] for r in query(conn, like, ("%##%",)).to_pylist()) == ["a#c"]


def test_row_value_in_subquery_binds_its_parameters_in_order(conn):
    """`(a, b) IN (subquery)` is rewritten into EXISTS subqueries before planning (DataFusion
    refuses it); a `?` in the row and another in the subquery keep their order, both where
    the predicate filters rows and where it is a value."""
    pairs = "(VALUES (1, 'a'), (2, 'b'), (2, NULL)) AS p(k, s)"
    rows = "(VALUES (1), (2), (3)) AS t(k)"
    where = f"SELECT k FROM {rows} WHERE (k, ?) IN (SELECT k, s FROM {pairs} WHERE k <= ?) ORDER BY k"
    assert [r["k"] for r in query(conn, where, ("b", 2)).to_pylist()] == [2]
    assert [r["k"] for r in query(conn, where, ("b", 1)).to_pylist()] == []
    value = (
        f"SELECT k, (k, ?) NOT IN (SELECT k, s FROM {pairs} WHERE k <= ?) AS missing "
        f"FROM {rows} ORDER BY k"
    )
    # k = 2 meets (2, NULL): unknown, so NOT IN is NULL there.
    assert query(conn, value, ("a", 2)).to_pylist() == [
        {"k": 1, "missing": False},
        {"k": 2, "missing": None},
        {"k": 3, "missing": True},
    ]


def test_prepared_insert_with_several_parameter_rows(conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.p (id BIGINT, name VARCHAR)")
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {unique_ns}.p VALUES (?, ?)", [(1, "a"), (2, "b"), (3, "c")])
    rows = query(conn, f"SELECT id, name FROM {unique_ns}.p ORDER BY id").to_pylist()
    assert rows == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]


# --- writes -----------------------------------------------------------------------------------

def test_ddl_insert_select_and_drop(conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.t (id BIGINT NOT NULL, v DOUBLE)")
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.t").to_pylist() == [{"n": 0}]
    query(conn, f"INSERT INTO {unique_ns}.t VALUES (1, 1.5), (2, NULL)")
    query(conn, f"INSERT INTO {unique_ns}.t SELECT id + 10, v FROM {unique_ns}.t")
    rows = query(conn, f"SELECT id, v FROM {unique_ns}.t ORDER BY id").to_pylist()
    assert rows == [{"id": 1, "v": 1.5}, {"id": 2, "v": None}, {"id": 11, "v": 1.5}, {"id": 12, "v": None}]
    query(conn, f"CREATE TABLE {unique_ns}.c AS SELECT id FROM {unique_ns}.t WHERE id > 10")
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.c").to_pylist() == [{"n": 2}]
    query(conn, f"DROP TABLE {unique_ns}.t")
    with pytest.raises(flightsql.Error) as err:
        query(conn, f"SELECT * FROM {unique_ns}.t")
    assert "does not exist" in str(err.value) and "[c]" in str(err.value)


def test_adbc_ingest_creates_and_appends(conn, unique_ns):
    data = pa.table({"k": pa.array([1, 2, 3], pa.int64()), "s": ["x", "y", "z"]})
    with conn.cursor() as cur:
        cur.adbc_ingest("ing", data, mode="create", db_schema_name=unique_ns)
        cur.adbc_ingest("ing", data, mode="append", db_schema_name=unique_ns)
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.ing").to_pylist() == [{"n": 6}]


def test_time_travel_by_version_and_timestamp(conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.tt (x BIGINT)")  # version 1, empty
    for i in range(3):
        query(conn, f"INSERT INTO {unique_ns}.tt VALUES ({i})")  # versions 2, 3, 4
    count = lambda clause: query(conn, f"SELECT count(*) AS n FROM {unique_ns}.tt {clause}").to_pylist()[0]["n"]
    assert count("") == 3
    assert count("VERSION AS OF 1") == 0
    assert count("VERSION AS OF 3") == 2
    assert count("TIMESTAMP AS OF '2999-01-01 00:00:00'") == 3
    # Both versions of one table in one query.
    both = query(conn, f"SELECT (SELECT count(*) FROM {unique_ns}.tt VERSION AS OF 2) AS old, "
                       f"(SELECT count(*) FROM {unique_ns}.tt) AS new").to_pylist()
    assert both == [{"old": 1, "new": 3}]
    with pytest.raises(flightsql.Error) as err:
        count("VERSION AS OF 99")
    assert "versions are 1 to 4" in str(err.value)
    with pytest.raises(flightsql.Error) as err:
        count("TIMESTAMP AS OF '1970-01-02 00:00:00'")
    assert "first version was committed" in str(err.value)
    assert "as of 1970-01-02 00:00:00.000 UTC" in str(err.value)


def test_retried_append_returns_the_original_version(server, conn, unique_ns, tmp_path):
    csv = tmp_path / "rows.csv"
    csv.write_text("a,b\n1,x\n2,y\n")
    run = lambda op, path: subprocess.run(
        [lake_binary(), "ingest", "--endpoint", server.endpoint, f"lake.{unique_ns}.r", str(path),
         "--operation-id", op], capture_output=True, text=True, timeout=120)
    first = run("op-1", csv)
    assert first.returncode == 0, first.stderr
    again = run("op-1", csv)
    assert again.returncode == 0, again.stderr
    assert "replay" in again.stderr
    v_first = first.stderr.split("as version ")[1].split()[0]
    v_again = again.stderr.split("as version ")[1].split()[0]
    assert v_first == v_again
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.r").to_pylist() == [{"n": 2}]
    other = tmp_path / "other.csv"
    other.write_text("a,b\n3,z\n")
    conflict = run("op-1", other)
    assert conflict.returncode != 0
    assert "different payload" in conflict.stderr
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.r").to_pylist() == [{"n": 2}]


def test_pinned_ticket_reads_its_snapshot_while_a_commit_lands(server, conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.race (x BIGINT)")
    query(conn, f"INSERT INTO {unique_ns}.race VALUES (1), (2)")
    client = flight_client(server)
    info = client.get_flight_info(fl.FlightDescriptor.for_command(
        statement_query_cmd(f"SELECT x FROM lake.{unique_ns}.race ORDER BY x")))
    query(conn, f"INSERT INTO {unique_ns}.race VALUES (3)")  # commits after planning
    pinned = client.do_get(info.endpoints[0].ticket).read_all()
    assert pinned.column("x").to_pylist() == [1, 2]
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.race").to_pylist() == [{"n": 3}]


def test_a_ticket_planned_once_serves_again_and_not_after_its_table_is_dropped(server, conn, unique_ns):
    """GetFlightInfo's plan serves the first DoGet (plan once); a second DoGet plans again
    at the same pins; a table dropped between planning and DoGet is named, not read."""
    t = f"lake.{unique_ns}.once"
    query(conn, f"CREATE TABLE {t} (x BIGINT)")
    query(conn, f"INSERT INTO {t} VALUES (1), (2), (3)")
    client = flight_client(server)
    descriptor = fl.FlightDescriptor.for_command(statement_query_cmd(f"SELECT x FROM {t} WHERE x > 1 ORDER BY x"))
    ticket = client.get_flight_info(descriptor).endpoints[0].ticket
    query(conn, f"INSERT INTO {t} VALUES (4)")
    for _ in range(3):
        assert client.do_get(ticket).read_all().column("x").to_pylist() == [2, 3]
    unredeemed = client.get_flight_info(descriptor).endpoints[0].ticket
    query(conn, f"DROP TABLE {t}")
    # pyarrow raises NOT_FOUND as a KeyError.
    with pytest.raises((fl.FlightError, pa.ArrowKeyError), match="dropped after the query was planned"):
        client.do_get(unredeemed).read_all()


def test_a_write_runs_when_its_ticket_is_redeemed_and_once_however_often(server, conn, unique_ns):
    # Issue 15 case 12: an INSERT sent as a query (GetFlightInfo + CommandStatementQuery)
    # ran at planning, so three retried GetFlightInfo calls inserted three rows.
    query(conn, f"CREATE TABLE {unique_ns}.once (x BIGINT)")
    client = flight_client(server)
    insert = fl.FlightDescriptor.for_command(statement_query_cmd(f"INSERT INTO lake.{unique_ns}.once VALUES (1)"))
    infos = [client.get_flight_info(insert) for _ in range(3)]
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.once").to_pylist() == [{"n": 0}]
    # Redeeming one ticket writes; redeeming it again (a client's retry) writes nothing more.
    for _ in range(2):
        result = client.do_get(infos[0].endpoints[0].ticket).read_all()
        assert result.to_pylist() == [{"count": 1}]
        assert infos[0].schema == result.schema
    assert query(conn, f"SELECT x FROM {unique_ns}.once").to_pylist() == [{"x": 1}]


def test_a_prepared_write_runs_at_planning_and_a_keyed_retry_writes_once(server, conn, unique_ns):
    # ADBC's execute() plans a prepared statement and may never redeem the ticket of a
    # write, so a prepared write runs in GetFlightInfo; an idempotency-key header makes a
    # retried GetFlightInfo a replay.
    query(conn, f"CREATE TABLE {unique_ns}.keyed (x BIGINT)")
    client = flight_client(server)
    command = prepared_statement_cmd(client, f"INSERT INTO lake.{unique_ns}.keyed VALUES (7)")
    keyed = fl.FlightCallOptions(headers=[(b"idempotency-key", f"{unique_ns}-1".encode())])
    for _ in range(3):
        info = client.get_flight_info(fl.FlightDescriptor.for_command(command), keyed)
        assert info.total_records == 1
    assert query(conn, f"SELECT x FROM {unique_ns}.keyed").to_pylist() == [{"x": 7}]
    # Without a key each execution is a write of its own (a statement run twice on purpose).
    client.get_flight_info(fl.FlightDescriptor.for_command(command))
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.keyed").to_pylist() == [{"n": 2}]
    bad = fl.FlightCallOptions(headers=[(b"idempotency-key", b"has space")])
    with pytest.raises(pa.ArrowInvalid, match="printable ASCII"):
        client.get_flight_info(fl.FlightDescriptor.for_command(command), bad)


def test_adbc_execute_without_fetching_still_writes(conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.nofetch (x BIGINT)")
    with conn.cursor() as cur:
        cur.execute(f"INSERT INTO {unique_ns}.nofetch VALUES (?)", parameters=(1,))
        cur.execute(f"INSERT INTO {unique_ns}.nofetch VALUES (2)")
        cur.execute(f"INSERT INTO {unique_ns}.nofetch VALUES (2)")
    assert query(conn, f"SELECT x FROM {unique_ns}.nofetch ORDER BY x").to_pylist() == [{"x": 1}, {"x": 2}, {"x": 2}]


def test_a_forged_ticket_is_refused(server):
    client = flight_client(server)
    info = client.get_flight_info(fl.FlightDescriptor.for_command(statement_query_cmd("SELECT 1 AS one")))
    raw = bytearray(info.endpoints[0].ticket.ticket)
    raw[-2] ^= 1
    # pyarrow raises INVALID_ARGUMENT as ArrowInvalid.
    with pytest.raises(pa.ArrowInvalid) as err:
        client.do_get(fl.Ticket(bytes(raw))).read_all()
    assert "not issued by this Lake deployment" in str(err.value)


# --- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize("sql, expected", [
    ("SELEC 1", "SQL error"),
    ("SELECT * FROM tpch.no_such_table", "tables in tpch: ["),
    ("SELECT * FROM nowhere.t", "namespaces: ["),
    ("SELECT * FROM other_catalog.tpch.nation", "catalogs: [lake]"),
    ("SELECT * FROM tpch.nation VERSION AS OF 42", "versions are 1 to"),
    ("SELECT 1; SELECT 2", "exactly one SQL statement"),
    # (UPDATE and DELETE work since issue 19; these forms of them DataFusion 54 refuses.)
    ("UPDATE tpch.nation SET n_name = 'x' FROM tpch.region", "not supported"),
    ("UPDATE tpch.nation SET n_name = 'x' RETURNING n_name", "not yet supported"),
])
def test_bad_sql_gets_a_clear_error_and_the_server_stays_up(server, conn, sql, expected):
    with pytest.raises(flightsql.Error) as err:
        query(conn, sql)
    assert expected in str(err.value)
    assert server.alive()
    assert query(conn, "SELECT count(*) AS n FROM tpch.nation").to_pylist() == [{"n": 25}]
    assert query(conn, "SELECT n_name FROM tpch.nation WHERE n_nationkey = 0").to_pylist() == [
        {"n_name": "ALGERIA"}]


def test_schema_mismatched_append_is_refused_and_loses_nothing(conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.m (id BIGINT)")
    query(conn, f"INSERT INTO {unique_ns}.m VALUES (7)")
    wrong = pa.table({"id": pa.array(["not a number"])})
    with conn.cursor() as cur, pytest.raises(flightsql.Error) as err:
        cur.adbc_ingest("m", wrong, mode="append", db_schema_name=unique_ns)
    assert "schema mismatch" in str(err.value)
    assert query(conn, f"SELECT id FROM {unique_ns}.m").to_pylist() == [{"id": 7}]


def test_non_null_column_refuses_nulls(conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.nn (id BIGINT NOT NULL)")
    with pytest.raises(flightsql.Error):
        query(conn, f"INSERT INTO {unique_ns}.nn VALUES (NULL)")
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.nn").to_pylist() == [{"n": 0}]


def test_oversized_sql_is_refused(server, conn):
    huge = "SELECT 1 AS x" + " " * (2 << 20)
    with pytest.raises(flightsql.Error) as err:
        query(conn, huge)
    assert "at most" in str(err.value)
    assert server.alive()


def test_committed_data_survives_a_restart(tmp_path):
    from conftest import LakeServer
    first = LakeServer(str(tmp_path), demo=False)
    try:
        with flightsql.connect(first.uri, autocommit=True) as c:
            query(c, "CREATE TABLE keep (x BIGINT)")
            query(c, "INSERT INTO keep VALUES (1), (2), (3)")
    finally:
        first.stop()
    second = LakeServer(str(tmp_path), demo=False)
    try:
        with flightsql.connect(second.uri, autocommit=True) as c:
            assert query(c, "SELECT sum(x) AS s FROM keep").to_pylist() == [{"s": 6}]
            assert query(c, "SELECT count(*) AS n FROM keep VERSION AS OF 1").to_pylist() == [{"n": 0}]
    finally:
        second.stop()
