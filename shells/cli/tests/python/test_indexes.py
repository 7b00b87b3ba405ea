"""Scalar indexes on Lake tables (issue 20's point reads): `CREATE INDEX` builds a Lance
index as one new version, the scan uses it (EXPLAIN shows the index query), answers stay
those of a full scan while rows are appended, deleted and updated after it was built, a
maintenance run brings it up to date, `DROP INDEX` removes it, and what cannot be indexed
is refused with the reason."""

import re
import threading

import adbc_driver_flightsql.dbapi as flightsql
import pytest

from conftest import query

KEYS = 600  # rows 0..599 in two appends


def rows(conn, sql):
    return sorted(tuple(r.values()) for r in query(conn, sql).to_pylist())


def plan(conn, sql):
    return "\n".join(str(v) for v in query(conn, f"EXPLAIN {sql}").column("plan").to_pylist())


def latest_version(conn, table):
    """The table's latest version, from what time travel to a version never committed says
    ("… versions are A to B …")."""
    with pytest.raises(flightsql.Error) as e:
        query(conn, f"SELECT * FROM {table} VERSION AS OF 999999")
    found = re.search(r"versions are \d+ to (\d+)", str(e.value))
    assert found, str(e.value)
    return int(found.group(1))


def fill(conn, t):
    query(conn, f"CREATE TABLE {t} (k BIGINT, s VARCHAR, f DOUBLE)")
    half = KEYS // 2
    for lo, hi in [(0, half), (half, KEYS)]:
        values = ", ".join(f"({k}, 's{k % 7}', {k / 4})" for k in range(lo, hi))
        query(conn, f"INSERT INTO {t} VALUES {values}")


# Each filter with what it selects from the rows as `expected` has them.
def selections(t, model):
    return [
        (f"SELECT * FROM {t} WHERE k = 417", [r for r in model if r[0] == 417]),
        (f"SELECT * FROM {t} WHERE k IN (3, 299, 300, 598, 100000)",
         [r for r in model if r[0] in (3, 299, 300, 598, 100000)]),
        (f"SELECT * FROM {t} WHERE k BETWEEN 295 AND 305", [r for r in model if 295 <= r[0] <= 305]),
        (f"SELECT * FROM {t} WHERE k > 590", [r for r in model if r[0] > 590]),
        (f"SELECT * FROM {t} WHERE k < 0", []),
        (f"SELECT count(*) AS n FROM {t} WHERE s = 's3'", [(sum(1 for r in model if r[1] == "s3"),)]),
        (f"SELECT * FROM {t} WHERE f BETWEEN 149 AND 150", [r for r in model if 149 <= r[2] <= 150]),
    ]


def check(conn, t, model):
    for sql, expected in selections(t, model):
        assert rows(conn, sql) == sorted(expected), sql


def test_an_index_is_one_version_used_by_the_scan_and_answers_as_the_scan_does(conn, unique_ns):
    t = f"{unique_ns}.t"
    fill(conn, t)
    model = [(k, f"s{k % 7}", k / 4) for k in range(KEYS)]
    check(conn, t, model)
    before = latest_version(conn, t)
    assert "ScalarIndexQuery" not in plan(conn, f"SELECT * FROM {t} WHERE k = 417")

    assert query(conn, f"CREATE INDEX ON {t} (k)").to_pylist() in ([], [{"count": 0}])
    assert latest_version(conn, t) == before + 1
    query(conn, f"CREATE INDEX s_kinds ON {t} USING BITMAP (s)")
    query(conn, f"CREATE INDEX s_zones ON {t} USING BRIN (s)")
    assert latest_version(conn, t) == before + 3
    assert "ScalarIndexQuery" in plan(conn, f"SELECT * FROM {t} WHERE k = 417")
    assert "ScalarIndexQuery" in plan(conn, f"SELECT * FROM {t} WHERE s = 's3'")
    check(conn, t, model)
    # The versions before the index read as they did.
    assert rows(conn, f"SELECT * FROM {t} VERSION AS OF {before} WHERE k = 417") == [(417, "s4", 104.25)]

    # Rows the index has not seen yet: appended, deleted, updated after it was built.
    query(conn, f"INSERT INTO {t} VALUES (1000, 's3', 250.0), (417, 'dup', 0.5)")
    model += [(1000, "s3", 250.0), (417, "dup", 0.5)]
    query(conn, f"DELETE FROM {t} WHERE k = 3 OR k = 299")
    model = [r for r in model if r[0] not in (3, 299)]
    query(conn, f"UPDATE {t} SET k = 5000 WHERE k = 598")
    model = [(5000 if r[0] == 598 else r[0], r[1], r[2]) for r in model]
    check(conn, t, model)
    assert rows(conn, f"SELECT k FROM {t} WHERE k = 5000") == [(5000,)]
    assert rows(conn, f"SELECT k FROM {t} WHERE k = 598") == []

    # A maintenance run indexes what was appended since; answers stay the same.
    query(conn, f"OPTIMIZE {t}")
    check(conn, t, model)
    assert "ScalarIndexQuery" in plan(conn, f"SELECT * FROM {t} WHERE k = 417")

    # DROP INDEX is one version; the scan reads every row again, with the same answers.
    version = latest_version(conn, t)
    query(conn, f"DROP INDEX k_idx ON {t}")
    assert latest_version(conn, t) == version + 1
    assert "ScalarIndexQuery" not in plan(conn, f"SELECT * FROM {t} WHERE k = 417")
    check(conn, t, model)


def test_an_index_built_while_rows_are_appended_loses_none(conn, server, unique_ns):
    t = f"{unique_ns}.t"
    fill(conn, t)
    appended = []
    failures = []

    def append():
        with flightsql.connect(server.uri, autocommit=True) as c:
            for i in range(10):
                try:
                    query(c, f"INSERT INTO {t} VALUES ({10_000 + i}, 'new', 0.0)")
                    appended.append(10_000 + i)
                except flightsql.Error as e:  # pragma: no cover - reported below
                    failures.append(str(e))

    writer = threading.Thread(target=append)
    writer.start()
    query(conn, f"CREATE INDEX ON {t} (k)")
    writer.join(timeout=120)
    assert not writer.is_alive()
    assert failures == []
    assert rows(conn, f"SELECT k FROM {t} WHERE k >= 10000") == [(k,) for k in sorted(appended)]
    assert rows(conn, f"SELECT count(*) FROM {t}") == [(KEYS + len(appended),)]
    for k in (0, 599, 10_004):
        assert rows(conn, f"SELECT k FROM {t} WHERE k = {k}") == [(k,)]


@pytest.mark.parametrize(
    "sql,message",
    [
        ("CREATE INDEX ON {t} (nope)", "has no column nope; its columns are k, s, f, tags, d, My Col"),
        ("CREATE INDEX ON {t} (tags)", "column tags of"),
        ("CREATE INDEX ON {t} (f)", "is Float64: a BTREE index takes integers"),
        ("CREATE INDEX ON {t} USING BITMAP (f)", "a BITMAP index takes integers"),
        # Lance's zone map skips a zone of NaNs for `f > 0` (NaN sorts above numbers).
        ("CREATE INDEX ON {t} USING ZONEMAP (f)", "is Float64: a ZONEMAP index takes integers"),
        ("CREATE INDEX ON {t} USING BLOOM (d)", "is Decimal128(15, 2): a BLOOM index takes integers, strings"),
        ("CREATE INDEX ON {t} (\"My Col\")", "name the index"),
        ("CREATE INDEX ON foo.a.t (k)", "catalog of foo.a.t does not exist"),
        ("CREATE INDEX ON {t} USING HASH (k)", "Lake builds BTREE"),
        ("CREATE INDEX ON {t} (k, s)", "exactly one column"),
        ("CREATE UNIQUE INDEX ON {t} (k)", "UNIQUE"),
        ("CREATE INDEX ON {t} (k + 1)", "not an expression"),
        ("CREATE INDEX __lance ON {t} (k)", "two underscores"),
        ("CREATE INDEX ON iceberg.ns.t (k)", "read-only"),
        ("DROP INDEX k_idx", "ON ns.t"),
        ("DROP INDEX nope ON {t}", "has no index named nope; its indexes are: k_idx"),
        ("CREATE INDEX k_idx ON {t} (s)", "already has an index named k_idx"),
    ],
    ids=["no-column", "list", "btree-float", "bitmap-float", "zonemap-float", "bloom-decimal", "quoted-column",
         "no-catalog", "hash", "two-columns", "unique", "expression",
         "reserved-name", "iceberg", "drop-no-table", "drop-unknown", "name-taken"],
)
def test_refused_with_the_reason(conn, unique_ns, sql, message):
    t = f"{unique_ns}.t"
    query(conn, f'CREATE TABLE {t} (k BIGINT, s VARCHAR, f DOUBLE, tags VARCHAR[], d DECIMAL(15, 2), "My Col" INT)')
    query(conn, f"INSERT INTO {t} VALUES (1, 'a', 1.5, ['x'], 2.5, 7)")
    query(conn, f"CREATE INDEX ON {t} (k)")
    version = latest_version(conn, t)
    with pytest.raises(flightsql.Error, match=re.escape(message)):
        query(conn, sql.format(t=t))
    assert latest_version(conn, t) == version
    assert rows(conn, f"SELECT k, s FROM {t} WHERE k = 1") == [(1, "a")]


def test_if_exists_and_if_not_exists_make_no_version(conn, unique_ns):
    t = f"{unique_ns}.t"
    fill(conn, t)
    query(conn, f"CREATE INDEX ON {t} (k)")
    version = latest_version(conn, t)
    query(conn, f"CREATE INDEX IF NOT EXISTS k_idx ON {t} (k)")
    query(conn, f"DROP INDEX IF EXISTS nope ON {t}")
    assert latest_version(conn, t) == version


def test_zone_maps_give_the_planner_key_ranges(conn, unique_ns):
    """A zone map that covers every fragment gives DataFusion the column's [min, max]
    (`ScanStatistics: zone_maps=[…]` above the scan), which bounds a key's distinct values:
    TPC-H q18's semi join then builds its hash table on the few qualifying keys (RightSemi)
    instead of on the join of every order with its items (LeftSemi). The range steers
    planning only: `min`/`max` answer from the rows after the extreme rows are deleted."""
    c, o, li = (f"{unique_ns}.{n}" for n in ("c", "o", "li"))
    query(conn, f"CREATE TABLE {c} AS SELECT value AS ck, 'n' || value AS name FROM range(1, 151)")
    query(conn, f"CREATE TABLE {o} AS SELECT value AS ok, 1 + value % 150 AS ck FROM range(1, 1501)")
    query(conn, f"CREATE TABLE {li} AS SELECT 1 + value % 1500 AS ok, value % 50 AS q FROM range(0, 6000)")
    q18 = (f"SELECT name, o.ok, sum(q) FROM {c}, {o} AS o, {li} AS li WHERE o.ok IN "
           f"(SELECT ok FROM {li} GROUP BY ok HAVING sum(q) > 180) AND c.ck = o.ck AND o.ok = li.ok "
           "GROUP BY name, o.ok ORDER BY o.ok")
    expected = rows(conn, q18)
    assert expected, "some orders qualify"
    before = plan(conn, q18)
    assert "zone_maps=[" not in before
    assert "join_type=LeftSemi" in before, before

    for table, column in [(c, "ck"), (o, "ok"), (o, "ck"), (li, "ok")]:
        query(conn, f"CREATE INDEX ON {table} USING ZONEMAP ({column})")
    after = plan(conn, q18)
    assert "ScanStatistics: zone_maps=[ok]" in after, after
    assert "join_type=RightSemi" in after, after
    assert rows(conn, q18) == expected

    # Ranges are bounds, not answers: deleting the extremes leaves them wider than the rows.
    query(conn, f"DELETE FROM {o} WHERE ok = 1 OR ok = 1500")
    assert "zone_maps=[" in plan(conn, f"SELECT min(ok), max(ok) FROM {o}")
    assert rows(conn, f"SELECT min(ok), max(ok) FROM {o}") == [(2, 1499)]
    assert rows(conn, f"SELECT count(*) FROM {o} WHERE ok > 1498") == [(1,)]
    # A fragment the zone map has not seen makes the range unknown until maintenance.
    query(conn, f"INSERT INTO {o} VALUES (99999, 1)")
    assert "zone_maps=[" not in plan(conn, f"SELECT ok FROM {o}")
    assert rows(conn, f"SELECT max(ok) FROM {o}") == [(99999,)]
    query(conn, f"OPTIMIZE {o}")
    assert "ScanStatistics: zone_maps=[ok]" in plan(conn, f"SELECT ok FROM {o}")
    assert rows(conn, f"SELECT max(ok) FROM {o}") == [(99999,)]


def test_a_join_builds_on_the_filtered_side_when_it_is_smaller(conn, unique_ns):
    """TPC-H q12's shape: the filter on the items reads three date columns the query does not
    return. The scan's size estimate leaves them out (`bytes_without=[…]`), so the hash table
    is built on the filtered items (about 1,200 rows by DataFusion's default selectivity)
    rather than on the 1,500 orders, as DataFusion does on Parquet; the answer is the rows'."""
    o, li = (f"{unique_ns}.{n}" for n in ("o", "li"))
    query(conn, f"CREATE TABLE {o} AS SELECT value AS ok, "
                f"CAST(value % 5 AS VARCHAR) || '-PRIORITY' AS prio FROM range(0, 1500)")
    modes = ["MAIL", "SHIP", "AIR", "RAIL", "TRUCK"]
    query(conn, f"CREATE TABLE {li} AS SELECT value % 1500 AS ok, "
                f"make_array({', '.join(repr(m) for m in modes)})[value % 5 + 1] AS mode, "
                "CAST(value % 700 AS INT) AS ship, CAST(value % 11 * 60 AS INT) AS cmt, "
                "CAST(value % 730 AS INT) AS receipt FROM range(0, 6000)")
    q12 = (f"SELECT mode, count(*), sum(CASE WHEN prio = '1-PRIORITY' THEN 1 ELSE 0 END) "
           f"FROM {o} AS o, {li} AS li WHERE o.ok = li.ok AND (mode = 'MAIL' OR mode = 'SHIP') "
           "AND cmt < receipt AND ship < cmt AND receipt >= 365 AND receipt < 730 "
           "GROUP BY mode ORDER BY mode")
    shown = plan(conn, q12)
    assert "bytes_without=[ship, cmt, receipt, _rowid]" in shown, shown
    build = shown[shown.index("HashJoinExec"):]
    build = build[build.index("LanceRead:"):].split("\n")[0]
    assert "projection=[ok, mode," in build, shown
    expected = {}
    for i in range(6000):
        mode = modes[i % 5]
        ship, cmt, receipt = i % 700, i % 11 * 60, i % 730
        if mode in ("MAIL", "SHIP") and cmt < receipt and ship < cmt and 365 <= receipt < 730:
            count, urgent = expected.get(mode, (0, 0))
            expected[mode] = (count + 1, urgent + ((i % 1500) % 5 == 1))
    assert expected, "the filter keeps some rows"
    assert rows(conn, q12) == sorted((m, c, u) for m, (c, u) in expected.items())


def counted(text):
    """A metric as DataFusion prints it (`19.95 K`, `3.21 M`, `7`) as a number."""
    number, _, unit = text.strip().partition(" ")
    return round(float(number) * {"": 1, "K": 1e3, "M": 1e6, "B": 1e9}[unit])


def test_a_join_filters_its_probe_scan_by_the_keys_it_built(conn, unique_ns):
    """A hash join hands the scan of its probe side a filter on the keys it built (DataFusion's
    dynamic filter: their bounds and a test against its hash table); the scan drops the rows
    it rejects before they are repartitioned and probed (`RuntimeFilter` above the Lance
    read, `rows_removed` in EXPLAIN ANALYZE). The answer is the join's."""
    k, f = (f"{unique_ns}.{n}" for n in ("k", "f"))
    query(conn, f"CREATE TABLE {k} AS SELECT value * 1997 AS key FROM range(0, 50)")
    # More rows than a filter's trial (64 K): a smaller scan takes no runtime filter.
    query(conn, f"CREATE TABLE {f} AS SELECT value AS key, value % 7 AS v FROM range(0, 100000)")
    sql = f"SELECT count(*), sum(v) FROM {k} AS k JOIN {f} AS f ON k.key = f.key"
    assert rows(conn, sql) == [(50, sum(key * 1997 % 7 for key in range(50)))]
    analyzed = "\n".join(query(conn, f"EXPLAIN ANALYZE {sql}").column("plan").to_pylist())
    filters = [line for line in analyzed.splitlines() if "RuntimeFilter:" in line]
    assert len(filters) == 1, analyzed
    assert "DynamicFilter" in filters[0], analyzed
    removed = re.search(r"rows_removed=([0-9.]+(?: [KMB])?)", filters[0])
    assert removed, filters[0]
    assert counted(removed.group(1)) == 100000 - 50, filters[0]
    # Without a join there is nothing to learn: the scan is Lance's read alone.
    assert "RuntimeFilter" not in plan(conn, f"SELECT sum(v) FROM {f} WHERE key > 10")


def test_a_zone_map_on_a_filtered_date_steers_the_join(conn, unique_ns):
    """A scan's rows under a filter are estimated from the zone maps of the columns the
    filter reads (`filter_selectivity=` on `ScanStatistics`), as DataFusion estimates a
    filter over Parquet statistics; without them, Lance's estimate knows no range and a range
    filter keeps every row. TPC-H q4's shape: a quarter of `o` by date, semi-joined with the
    items received late. Without ranges the filtered `o` (key and a string) looks larger than
    the filtered items (a key) and the join builds on the items (RightSemi); the zone map on
    `od` shows 1 order in 26 and the join builds on the orders (LeftSemi). Same answer."""
    o, li = (f"{unique_ns}.{n}" for n in ("o", "li"))
    query(conn, f"CREATE TABLE {o} AS SELECT value AS ok, DATE '1992-01-01' + CAST(value * 7 % 2400 AS INT) "
                f"AS od, 'p' || (value % 5) AS prio FROM range(0, 15000)")
    query(conn, f"CREATE TABLE {li} AS SELECT value % 15000 AS ok, DATE '1995-01-01' AS cd, "
                f"DATE '1995-01-01' + CAST(value % 5 < 3 AS INT) AS rd FROM range(0, 60000)")
    q4 = (f"SELECT prio, count(*) FROM {o} WHERE od >= DATE '1994-09-27' AND od < DATE '1994-12-28' "
          f"AND EXISTS (SELECT 1 FROM {li} WHERE {li}.ok = {o}.ok AND cd < rd) GROUP BY prio")
    # Order i's four items are i + 15000 k, all received late when i % 5 < 3.
    in_quarter = [i for i in range(15000) if 1000 <= i * 7 % 2400 < 1092]
    expected = sorted((f"p{p}", sum(1 for i in in_quarter if i % 5 == p)) for p in range(3))
    assert rows(conn, q4) == expected
    before = plan(conn, q4)
    assert "filter_selectivity=" not in before, before
    assert "join_type=RightSemi" in before, before

    query(conn, f"CREATE INDEX ON {o} USING ZONEMAP (od)")
    after = plan(conn, q4)
    selectivity = re.search(r"filter_selectivity=([0-9.]+)", after)
    assert selectivity and 0.036 < float(selectivity.group(1)) < 0.040, after
    assert "join_type=LeftSemi" in after, after
    assert rows(conn, q4) == expected

    # A fragment the zone map has not seen makes the range, and so the estimate, unknown.
    query(conn, f"INSERT INTO {o} VALUES (99999, DATE '1994-10-01', 'p0')")
    assert "filter_selectivity=" not in plan(conn, q4)
    query(conn, f"OPTIMIZE {o}")
    assert "filter_selectivity=" in plan(conn, q4)
