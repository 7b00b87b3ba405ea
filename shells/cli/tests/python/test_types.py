"""The type round-trip matrix: every Arrow type a Lake column can hold, through each write
path and each read path, compared with what went in; every type Lake cannot hold gets a
clear error at CREATE / ingest time, before anything is written.

Write paths (the first part of each id):
  ingest  ADBC `adbc_ingest(mode="create")` with the first rows, then `mode="append"`
          with the rest (versions 1 and 2).
  ctas    `CREATE TABLE … AS SELECT * FROM <ingested table>` (version 1 holds every row).
  insert  `CREATE TABLE … (k BIGINT NOT NULL, v <SQL type>)` declaring the same schema,
          then `INSERT INTO … SELECT * FROM <ingested table>` (version 1 empty, 2 full);
          left out of the matrix, with the reason in each case, for types SQL cannot declare.
  equiv   an equivalent Arrow layout: the table is created (ingest) with string / binary /
          list, and rows arrive (ingest append) as large_string / string_view /
          large_binary / binary_view / large_list / dictionary; Lake stores them as the
          table's type.

Read paths (the test function):
  test_round_trip        ADBC `SELECT * FROM t` (fetch_arrow_table)
  test_read_flight       pyarrow.flight GetFlightInfo + DoGet; the announced schema must
                         equal the streamed one (nullability and metadata included)
  test_read_time_travel  `SELECT * FROM t VERSION AS OF 1`
  test_read_prepared     `SELECT * FROM t WHERE k = ?`, once per key
  test_read_catalog_schema  (extra) ADBC GetTableSchema equals the schema the rows have

Declared expectations:
  * Every result must equal what went in: same schema (names, types, nullability,
    metadata; a timestamp's zone string exactly as sent, `+08:00` stays `+08:00`), same
    values (Arrow equality after sorting by the key `k`; floats compared bit for bit, so
    NaN, -0.0 and ±inf must survive), and `to_pylist()` must work.
  * Other layouts of one SQL type come back in the layout the table stores (its SQL
    type), as a table declares it (the catalog schema says the same):
    - a dictionary column as its VALUE type (the wire never carries dictionaries):
      dictionary<int32, string> reads as string;
    - string_view as string, binary_view as binary, large_list and list_view as list;
    - decimal32 / decimal64 as decimal128 of the same precision and scale.
  * Types Lake cannot hold (interval, null, union, run-end encoded): the write fails with a message
    that names the column, names the type and says what is allowed, and leaves nothing
    behind (the table is not listed and its name is free; an append leaves the version
    count unchanged).
"""

import datetime
import decimal
import math
import re
import uuid
from dataclasses import dataclass

import adbc_driver_flightsql.dbapi as flightsql
import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.flight as fl
import pytest

from conftest import query
from test_flight_sql import statement_query_cmd

D = decimal.Decimal
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


# --- the type catalogue ------------------------------------------------------------------

@dataclass
class Case:
    id: str
    values: pa.Array
    sql: str | None = None  # SQL type that declares exactly this Arrow type, if any
    why_no_sql: str = ""    # why SQL cannot declare it
    stored: pa.DataType | None = None  # the type Lake stores and returns (default: the same)
    equiv_base: pa.DataType | None = None  # for the `equiv` path: the table's column type

    @property
    def type(self) -> pa.DataType:
        return self.values.type

    @property
    def stored_type(self) -> pa.DataType:
        return self.stored if self.stored is not None else self.type


def arr(values, type_):
    return pa.array(values, type_)


def floats(np_dtype, pa_type, extremes):
    """0, -0, NaN, +inf, -inf, NULL and the type's extremes."""
    values = [0.0, -0.0, math.nan, math.inf, -math.inf, 0.0, *extremes]
    mask = np.array([False] * len(values))
    mask[5] = True
    out = pa.array(np.array(values, dtype=np_dtype), mask=mask)
    assert out.type == pa_type
    return out


def ints(type_, lo, hi):
    return arr([lo, hi, 0, None, -1 if lo < 0 else 1], type_)


DATES = [datetime.date(1970, 1, 1), datetime.date(1, 1, 1), datetime.date(9999, 12, 31), None,
         datetime.date(1969, 12, 31)]

# Seconds since the epoch: 0, just before it, a recent instant, and instants a day inside
# years 1 and 9999 (so that every zone's local time stays within Python's datetime range).
TS_SECONDS = [0, -1, 1_700_000_000, None, -62_135_596_800 + 86_400, 253_402_300_799 - 86_400]
TS_SCALE = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def ts_values(unit):
    if unit == "ns":  # int64 nanoseconds span 1677..2262; whole microseconds (to_pylist)
        return [0, -1_000, 1_700_000_000_123_456_000, None, -9_223_372_036_854_775_000,
                9_223_372_036_854_775_000]
    scale = TS_SCALE[unit]
    return [None if v is None else v * scale + (scale - 1 if v > 0 and scale > 1 else 0)
            for v in TS_SECONDS]


SQL_TS = {"s": "TIMESTAMP(0)", "ms": "TIMESTAMP(3)", "us": "TIMESTAMP(6)", "ns": "TIMESTAMP(9)"}
ZONES = [None, "UTC", "+08:00", "-03:30", "America/New_York"]

STRINGS = ["", "héllo wörld", "🦆 unicode ✓ 日本語", None, "x" * 300, "tab\tnew\nline", "nul\u0000inside"]
BINARIES = [b"", b"\x00", bytes(range(256)), None, b"\xff\xfe", "🦆".encode()]

POINT = pa.struct([pa.field("x", pa.float64(), nullable=False), pa.field("y", pa.float64(), nullable=False)])
PAIR = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])
TAGGED = pa.struct([pa.field("name", pa.string()), pa.field("tags", pa.list_(pa.string()))])


def point_column():
    """struct<x double NOT NULL, y double NOT NULL> holding a NULL struct (its children
    hold values, as non-null children must)."""
    x = pa.array([1.0, 0.0, -1.5, 1.7976931348623157e308, 0.5], pa.float64())
    y = pa.array([2.0, 0.0, math.inf, -1.7976931348623157e308, -0.5], pa.float64())
    return pa.StructArray.from_arrays([x, y], fields=list(POINT), mask=pa.array([False, True, False, False, False]))


def decimals(type_, texts):
    return arr([None if t is None else D(t) for t in texts], type_)


def nines(p, s, sign=""):
    whole = "9" * (p - s)
    return f"{sign}{whole or '0'}" + (f".{'9' * s}" if s else "")


def decimal_case(kind, p, s):
    type_ = pa.decimal128(p, s) if kind == "decimal128" else pa.decimal256(p, s)
    zero = "0" + ("." + "0" * s if s else "")
    smallest = ("-0." + "0" * (s - 1) + "1") if s else "-1"
    values = decimals(type_, [nines(p, s), nines(p, s, "-"), zero, None, smallest])
    declarable = kind == "decimal128" or p > 38
    return Case(f"{kind}_{p}_{s}", values,
                sql=f"DECIMAL({p},{s})" if declarable else None,
                why_no_sql="" if declarable else f"DECIMAL({p},{s}) declares decimal128; SQL has no decimal256 of precision <= 38")


def holdable_cases() -> list[Case]:
    cases = [
        Case("bool", arr([True, False, None, True], pa.bool_()), sql="BOOLEAN"),
        Case("int8", ints(pa.int8(), -128, 127), sql="TINYINT"),
        Case("int16", ints(pa.int16(), -32768, 32767), sql="SMALLINT"),
        Case("int32", ints(pa.int32(), -2**31, 2**31 - 1), sql="INT"),
        Case("int64", ints(pa.int64(), I64_MIN, I64_MAX), sql="BIGINT"),
        Case("uint8", ints(pa.uint8(), 0, 2**8 - 1), sql="TINYINT UNSIGNED"),
        Case("uint16", ints(pa.uint16(), 0, 2**16 - 1), sql="SMALLINT UNSIGNED"),
        Case("uint32", ints(pa.uint32(), 0, 2**32 - 1), sql="INT UNSIGNED"),
        Case("uint64", ints(pa.uint64(), 0, 2**64 - 1), sql="BIGINT UNSIGNED"),
        Case("float16", floats(np.float16, pa.float16(), [65504.0, -65504.0, 5.96e-08]),
             why_no_sql="SQL has no half-precision type"),
        Case("float32", floats(np.float32, pa.float32(), [3.4028234663852886e38, 1.401298464324817e-45]), sql="REAL"),
        Case("float64", floats(np.float64, pa.float64(), [1.7976931348623157e308, 5e-324]), sql="DOUBLE"),
        decimal_case("decimal128", 1, 0),
        decimal_case("decimal128", 15, 2),
        decimal_case("decimal128", 38, 0),
        decimal_case("decimal128", 38, 10),
        decimal_case("decimal128", 38, 38),
        decimal_case("decimal256", 20, 4),
        decimal_case("decimal256", 40, 0),
        decimal_case("decimal256", 76, 20),
        Case("date32", arr(DATES, pa.date32()), sql="DATE"),
        Case("date64", arr(DATES, pa.date64()), why_no_sql="DATE declares date32"),
        Case("time32_s", arr([0, 86_399, None, 3_600], pa.time32("s")), why_no_sql="TIME declares time64[ns]"),
        Case("time32_ms", arr([0, 86_399_999, None, 1], pa.time32("ms")), why_no_sql="TIME declares time64[ns]"),
        Case("time64_us", arr([0, 86_399_999_999, None, 1], pa.time64("us")), why_no_sql="TIME declares time64[ns]"),
        Case("time64_ns", arr([0, 86_399_999_999_000, None, 1_000], pa.time64("ns")), sql="TIME"),
    ]
    for unit in ("s", "ms", "us", "ns"):
        for zone in ZONES:
            cases.append(Case(
                f"timestamp_{unit}_{zone or 'naive'}".replace("/", "_"),
                arr(ts_values(unit), pa.timestamp(unit, zone)),
                sql=SQL_TS[unit] if zone is None else None,
                why_no_sql="" if zone is None else
                f"SQL cannot declare a column with zone {zone!r} (TIMESTAMP WITH TIME ZONE has no zone of its own)"))
    for unit in ("s", "ms", "us", "ns"):
        scale = TS_SCALE[unit]
        cases.append(Case(f"duration_{unit}", arr([0, -scale, 100 * 365 * 86_400 * scale, None, 1_000 if unit == "ns" else 1],
                                                  pa.duration(unit)),
                          why_no_sql="SQL has no duration type"))
    cases += [
        Case("string", arr(STRINGS, pa.string()), sql="VARCHAR"),
        Case("large_string", arr(STRINGS, pa.large_string()), why_no_sql="VARCHAR declares string (Utf8)",
             equiv_base=pa.string()),
        Case("string_view", arr(STRINGS, pa.string_view()), why_no_sql="VARCHAR declares string (Utf8)",
             stored=pa.string(), equiv_base=pa.string()),
        Case("binary", arr(BINARIES, pa.binary()), sql="BYTEA"),
        Case("large_binary", arr(BINARIES, pa.large_binary()), why_no_sql="BYTEA declares binary",
             equiv_base=pa.binary()),
        Case("binary_view", arr(BINARIES, pa.binary_view()), why_no_sql="BYTEA declares binary",
             stored=pa.binary(), equiv_base=pa.binary()),
        Case("fixed_size_binary_16", arr([b"\x00" * 16, b"\xff" * 16, None, bytes(range(16)), uuid.UUID(int=1).bytes],
                                         pa.binary(16)), why_no_sql="SQL has no fixed-size binary type"),
        Case("list_int64", arr([[], None, [1, None, 3], [I64_MIN, I64_MAX], [0]], pa.list_(pa.int64())), sql="BIGINT[]"),
        Case("large_list_string", arr([[], None, ["", "é", None], ["a"], ["🦆"] * 3], pa.large_list(pa.string())),
             why_no_sql="VARCHAR[] declares list<string>", stored=pa.list_(pa.string()),
             equiv_base=pa.list_(pa.string())),
        Case("fixed_size_list_float32_3", arr([[1.0, 2.0, 3.0], None, [-0.0, math.inf, None], [0.0, -1.0, 3.4e38]],
                                              pa.list_(pa.float32(), 3)), sql="REAL[3]"),
        Case("list_struct", arr([[{"a": 1, "b": "x"}, None], [], None, [{"a": None, "b": None}],
                                 [{"a": -2**31, "b": ""}]], pa.list_(PAIR)), sql="STRUCT<a INT, b VARCHAR>[]"),
        Case("struct_not_null_fields_with_null_struct", point_column(),
             why_no_sql="SQL cannot declare NOT NULL struct fields"),
        Case("struct_with_list", arr([{"name": "a", "tags": ["x", "y"]}, {"name": None, "tags": []}, None,
                                      {"name": "", "tags": None}, {"name": "é", "tags": [None]}], TAGGED),
             sql="STRUCT<name VARCHAR, tags VARCHAR[]>"),
        Case("dictionary_int32_string", arr(["a", "b", None, "a", ""], pa.string()).dictionary_encode(),
             why_no_sql="SQL has no dictionary type", stored=pa.string(), equiv_base=pa.string()),
        Case("map_string_int64", arr([[("a", 1), ("b", None)], [], None, [("é", I64_MIN)]],
                                     pa.map_(pa.string(), pa.int64())),
             why_no_sql="SQL MAP types are not declarable in Lake's dialect"),
        Case("decimal32_5_2", decimals(pa.decimal32(5, 2), ["1.25", None, "-999.99", "0.00"]),
             why_no_sql="DECIMAL(5,2) declares decimal128", stored=pa.decimal128(5, 2)),
        Case("decimal64_18_3", decimals(pa.decimal64(18, 3), ["1.250", None, "-999999999999999.999", "0.000"]),
             why_no_sql="DECIMAL(18,3) declares decimal128", stored=pa.decimal128(18, 3)),
    ]
    return cases


def list_view_int64():
    # Offsets/sizes out of order, an empty list and a NULL: a real ListView layout.
    values = pa.array([1, 2, 3, None, 5], pa.int64())
    return pa.ListViewArray.from_arrays(pa.array([3, 0, 0, 1, 0], pa.int32()), pa.array([2, 3, 0, 1, 0], pa.int32()),
                                        values, mask=pa.array([False, False, False, False, True]))


# Extra equivalent layouts for the `equiv` path only (appended to a list<int64> table).
EQUIV_EXTRA = [Case("list_view_int64", list_view_int64(), equiv_base=pa.list_(pa.int64()))]


@dataclass
class Refused:
    id: str
    values: pa.Array
    names: tuple  # any of these (case-insensitive) names the type in an error
    ctas_expr: str | None = None  # a SQL expression of this type, for the ctas path
    sql: str | None = None        # a SQL type declaring it, for the sql_create path

    @property
    def type(self):
        return self.values.type


def refused_cases() -> list[Refused]:
    dense = pa.UnionArray.from_dense(pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()),
                                     [pa.array([1, 2], pa.int64()), pa.array(["x"])], ["i", "s"])
    ree = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.array(["a", None]))
    return [
        Refused("interval_month_day_nano",
                arr([pa.MonthDayNano([1, 2, 3]), None, pa.MonthDayNano([-1, 0, 0])], pa.month_day_nano_interval()),
                ("interval",), ctas_expr="INTERVAL '1 month'", sql="INTERVAL"),
        Refused("null", arr([None, None, None], pa.null()), ("null",), ctas_expr="NULL"),
        # Beyond the brief: other Arrow types that Lance does not store.
        Refused("dense_union", dense, ("union",)),
        Refused("run_end_encoded_string", ree, ("runendencoded", "run-end", "run_end")),
    ]


HOLDABLE = holdable_cases()
REFUSED = refused_cases()
BY_ID = {c.id: c for c in HOLDABLE + EQUIV_EXTRA}


def ident(text: str) -> str:
    """A table/column name from a case id: `+08:00` -> `p08_00`."""
    return re.sub(r"[^a-z0-9_]", "_", text.lower().replace("+", "p").replace("-", "m"))


def column(case) -> str:
    return "v_" + ident(case.id)


# --- fixtures and helpers ------------------------------------------------------------------

@pytest.fixture(scope="module")
def mconn(server):
    with flightsql.connect(server.uri, autocommit=True) as connection:
        yield connection


@pytest.fixture(scope="module")
def ns(mconn):
    name = "types_" + uuid.uuid4().hex[:8]
    query(mconn, f"CREATE SCHEMA {name}")
    return name


KEY = pa.field("k", pa.int64(), nullable=False)


def input_table(case, values=None) -> pa.Table:
    values = case.values if values is None else values
    values.validate(full=True)
    values.to_pylist()  # what goes in must itself convert, so a failure is Lake's
    keys = pa.array(range(len(values)), pa.int64())
    return pa.Table.from_arrays([keys, values], schema=pa.schema([KEY, pa.field(column(case), values.type)]))


def as_stored(table: pa.Table, type_: pa.DataType) -> pa.Table:
    """`table` with its value column as Lake is expected to store it (`type_`)."""
    name = table.schema.field(1).name
    col = table.column(1)
    if pa.types.is_dictionary(col.type):
        col = pa.chunked_array([c.dictionary_decode() for c in col.chunks], col.type.value_type)
    if pa.types.is_list_view(col.type) or pa.types.is_large_list_view(col.type):
        # pyarrow's ListView -> List cast mishandles out-of-order offsets: go by values.
        col = pa.chunked_array([pa.array(col.to_pylist(), type_)], type_)
    elif col.type != type_:
        col = col.cast(type_)
    return pa.Table.from_arrays([table.column(0), col], schema=pa.schema([KEY, pa.field(name, type_)]))


def pick(table: pa.Table, rows) -> pa.Table:
    """`table`'s `rows`, in that order, as fresh arrays without an offset. (pyarrow's
    `take` has no kernel for the view types, and the ADBC driver's IPC writer fails on
    sliced list views: "arrow/array: index out of range".)"""
    columns = []
    for col in table.columns:
        whole = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        parts = [whole.slice(i, 1) for i in rows] or [whole.slice(0, 0)]
        columns.append(pa.concat_arrays(parts))
    return pa.Table.from_arrays(columns, schema=table.schema)


def first_rows(table: pa.Table) -> pa.Table:
    return pick(table, range((table.num_rows + 1) // 2))


def rest_rows(table: pa.Table) -> pa.Table:
    return pick(table, range((table.num_rows + 1) // 2, table.num_rows))


def sorted_by_key(table: pa.Table) -> pa.Table:
    return pick(table, pa.compute.sort_indices(table.column("k")).to_pylist())


def ingest(conn, ns, name, table, mode):
    with conn.cursor() as cur:
        cur.adbc_ingest(name, table, mode=mode, db_schema_name=ns)


def listed(conn, ns, name) -> bool:
    objects = conn.adbc_get_objects(depth="tables", db_schema_filter=ns, table_name_filter=name).read_all().to_pylist()
    return any(t["table_name"] == name for c in objects for s in (c["catalog_db_schemas"] or [])
               for t in (s["db_schema_tables"] or []))


def version_count(conn, qualified) -> int:
    """The table's newest version, from the error that names the versions there are."""
    with pytest.raises(flightsql.Error) as err:
        query(conn, f"SELECT count(*) FROM {qualified} VERSION AS OF 999999999")
    found = re.search(r"versions are (\d+)(?: to (\d+))?", str(err.value))
    assert found, f"no version range in: {err.value}"
    return int(found.group(2) or found.group(1))


# --- comparing -----------------------------------------------------------------------------

def describe_field(f: pa.Field) -> str:
    meta = f" metadata={dict(f.metadata)}" if f.metadata else ""
    return f"{f.name}: {f.type}{'' if f.nullable else ' NOT NULL'}{meta}"


def schema_diff(got: pa.Schema, want: pa.Schema) -> str:
    lines = []
    if [f.name for f in got] != [f.name for f in want]:
        lines.append(f"columns {got.names} != {want.names}")
    for g, w in zip(got, want):
        if not g.equals(w, check_metadata=True):
            lines.append(f"got  {describe_field(g)}\n      want {describe_field(w)}")
    if (got.metadata or {}) != (want.metadata or {}):
        lines.append(f"schema metadata {got.metadata} != {want.metadata}")
    return "\n      ".join(lines) or f"{got} != {want}"


def comparable(col: pa.ChunkedArray) -> pa.Array:
    """Floats as their bit patterns, so NaN == NaN and -0.0 != 0.0."""
    a = col.combine_chunks()
    bits = {pa.float16(): pa.int16(), pa.float32(): pa.int32(), pa.float64(): pa.int64()}
    if a.type in bits:
        return a.view(bits[a.type])
    return a


def safe_pylist(a, limit=8):
    try:
        return a.to_pylist()[:limit]
    except Exception as e:  # noqa: BLE001 - shown in the failure
        return f"<to_pylist failed: {e}>"


def assert_same(got: pa.Table, want: pa.Table, what: str):
    if not got.schema.equals(want.schema, check_metadata=True):
        try:
            got.to_pylist()
            pylist = ""
        except Exception as e:  # noqa: BLE001
            pylist = f"\n      and to_pylist() fails: {type(e).__name__}: {e}"
        pytest.fail(f"{what}: schema differs:\n      {schema_diff(got.schema, want.schema)}{pylist}")
    got.validate(full=True)
    got_sorted, want_sorted = sorted_by_key(got), sorted_by_key(want)
    assert got_sorted.column("k").to_pylist() == want_sorted.column("k").to_pylist(), f"{what}: keys differ"
    name = want.schema.field(1).name
    g, w = comparable(got_sorted.column(name)), comparable(want_sorted.column(name))
    if not g.equals(w):
        diffs = [(k, safe_pylist(got_sorted.column(name).slice(i, 1)), safe_pylist(want_sorted.column(name).slice(i, 1)))
                 for i, k in enumerate(want_sorted.column("k").to_pylist())
                 if not g.slice(i, 1).equals(w.slice(i, 1))]
        pytest.fail(f"{what}: values differ (k, got, want): {diffs[:6]}")
    try:
        got.to_pylist()
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"{what}: to_pylist() fails: {type(e).__name__}: {e}")


# --- writing (once per path and type; every read test reuses it) -------------------------

@dataclass
class Written:
    qualified: str
    everything: pa.Table  # expected now
    version1: pa.Table    # expected at VERSION AS OF 1


@dataclass
class WriteFailed:
    step: str
    error: str


WRITES: dict = {}
SOURCES: dict = {}

WRITE_PATHS = ["ingest", "ctas", "insert"]


def source(conn, ns, case):
    """The ingested table (every row, one ADBC ingest) that CTAS and INSERT read."""
    if case.id not in SOURCES:
        name = "src_" + ident(case.id)
        try:
            ingest(conn, ns, name, input_table(case), "create")
            SOURCES[case.id] = f"{ns}.{name}"
        except Exception as e:  # noqa: BLE001
            SOURCES[case.id] = WriteFailed("source ingest", f"{type(e).__name__}: {e}")
    return SOURCES[case.id]


def do_write(conn, ns, path, case):
    data = input_table(case)
    want = as_stored(data, case.stored_type)
    name = f"{path}_{ident(case.id)}"
    qualified = f"{ns}.{name}"
    step = path
    try:
        if path == "ingest":
            step = "ingest create"
            ingest(conn, ns, name, first_rows(data), "create")
            step = "ingest append"
            ingest(conn, ns, name, rest_rows(data), "append")
            return Written(qualified, want, first_rows(want))
        if path in ("ctas", "insert"):
            src = source(conn, ns, case)
            if isinstance(src, WriteFailed):
                return src
            if path == "ctas":
                step = "CREATE TABLE AS SELECT"
                query(conn, f"CREATE TABLE {qualified} AS SELECT * FROM {src}")
                return Written(qualified, want, want)
            step = "CREATE TABLE"
            query(conn, f"CREATE TABLE {qualified} (k BIGINT NOT NULL, {column(case)} {case.sql})")
            declared = query(conn, f"SELECT * FROM {qualified}").schema
            if not declared.equals(want.schema, check_metadata=True):
                return WriteFailed("CREATE TABLE", f"SQL {case.sql} declared a different schema:\n      "
                                   + schema_diff(declared, want.schema))
            step = "INSERT INTO … SELECT"
            query(conn, f"INSERT INTO {qualified} SELECT * FROM {src}")
            return Written(qualified, want, want.slice(0, 0))
        if path == "equiv":
            base = as_stored(data, case.equiv_base)
            step = f"ingest create ({case.equiv_base})"
            ingest(conn, ns, name, first_rows(base), "create")
            step = f"ingest append ({case.type})"
            ingest(conn, ns, name, rest_rows(data), "append")
            return Written(qualified, base, first_rows(base))
        raise AssertionError(path)
    except Exception as e:  # noqa: BLE001 - kept and reported by every test of this write
        return WriteFailed(step, f"{type(e).__name__}: {e}")


def written(conn, ns, path, case) -> Written:
    key = (path, case.id)
    if key not in WRITES:
        WRITES[key] = do_write(conn, ns, path, case)
    return WRITES[key]


def matrix():
    """(path, case) for every write path that applies, with readable ids: the `insert`
    path only for types SQL can declare (each other case's `why_no_sql` says why not)."""
    out = []
    for path in WRITE_PATHS:
        for case in HOLDABLE:
            if path == "insert" and case.sql is None:
                continue
            out.append(pytest.param(path, case.id, id=f"{path}-{case.id}"))
    for case in HOLDABLE + EQUIV_EXTRA:
        if case.equiv_base is not None:
            out.append(pytest.param("equiv", case.id, id=f"equiv-{case.id}"))
    return out


MATRIX = matrix()


def need(conn, ns, path, case_id, own_test: bool) -> Written:
    case = BY_ID[case_id]
    w = written(conn, ns, path, case)
    if isinstance(w, WriteFailed):
        if own_test:
            pytest.fail(f"write failed at {w.step}: {w.error}")
        pytest.fail(f"cannot read: the {path} write failed at {w.step} (see test_round_trip[{path}-{case_id}])")
    return w


# --- read paths -----------------------------------------------------------------------------

@pytest.mark.parametrize("path, case_id", MATRIX)
def test_round_trip(mconn, ns, path, case_id):
    """Write through `path`, read with ADBC `SELECT *`."""
    w = need(mconn, ns, path, case_id, own_test=True)
    assert_same(query(mconn, f"SELECT * FROM {w.qualified}"), w.everything, "ADBC SELECT *")


@pytest.mark.parametrize("path, case_id", MATRIX)
def test_read_flight(server, mconn, ns, path, case_id):
    w = need(mconn, ns, path, case_id, own_test=False)
    client = fl.FlightClient(server.uri)
    try:
        info = client.get_flight_info(fl.FlightDescriptor.for_command(
            statement_query_cmd(f"SELECT * FROM lake.{w.qualified}")))
        tables = [client.do_get(e.ticket).read_all() for e in info.endpoints]
    finally:
        client.close()
    got = pa.concat_tables(tables) if tables else info.schema.empty_table()
    if not info.schema.equals(got.schema, check_metadata=True):
        pytest.fail("GetFlightInfo announced a schema DoGet did not stream (got = DoGet, want = GetFlightInfo):\n      "
                    + schema_diff(got.schema, info.schema))
    assert_same(got, w.everything, "Flight DoGet")


@pytest.mark.parametrize("path, case_id", MATRIX)
def test_read_time_travel(mconn, ns, path, case_id):
    w = need(mconn, ns, path, case_id, own_test=False)
    assert_same(query(mconn, f"SELECT * FROM {w.qualified} VERSION AS OF 1"), w.version1, "VERSION AS OF 1")


@pytest.mark.parametrize("path, case_id", MATRIX)
def test_read_prepared(mconn, ns, path, case_id):
    w = need(mconn, ns, path, case_id, own_test=False)
    parts = [query(mconn, f"SELECT * FROM {w.qualified} WHERE k = ?", (k,))
             for k in w.everything.column("k").to_pylist()]
    assert_same(pa.concat_tables(parts), w.everything, "prepared WHERE k = ?")


@pytest.mark.parametrize("path, case_id", MATRIX)
def test_read_catalog_schema(mconn, ns, path, case_id):
    """Beyond the four read paths: the schema the catalog reports (ADBC GetTableSchema,
    i.e. Flight SQL GetTables with include_schema) is the schema the data comes back in."""
    w = need(mconn, ns, path, case_id, own_test=False)
    namespace, name = w.qualified.split(".")
    got = mconn.adbc_get_table_schema(name, db_schema_filter=namespace)
    if not got.equals(w.everything.schema, check_metadata=True):
        pytest.fail("catalog schema differs from the data's:\n      " + schema_diff(got, w.everything.schema))


# --- computed columns: the announced schema equals the streamed one ------------------------

def tz(zone):
    return "None" if zone is None else f'Some("{zone}")'


COMPUTED = [
    # id, SQL expression, the type the result must have, its value
    ("dictionary_int32_utf8", "arrow_cast('a', 'Dictionary(Int32, Utf8)')", pa.string(), "a"),  # value type: declared
    ("dictionary_in_list", "make_array(arrow_cast('a', 'Dictionary(Int32, Utf8)'))", pa.list_(pa.string()), ["a"]),
    ("dictionary_in_struct", "named_struct('d', arrow_cast('a', 'Dictionary(Int32, Utf8)'))",
     pa.struct([pa.field("d", pa.string())]), {"d": "a"}),
    ("large_utf8", "arrow_cast('a', 'LargeUtf8')", pa.large_string(), "a"),
    ("utf8_view", "arrow_cast('a', 'Utf8View')", pa.string_view(), "a"),
    ("binary", "arrow_cast('ab', 'Binary')", pa.binary(), b"ab"),
    ("large_binary", "arrow_cast('ab', 'LargeBinary')", pa.large_binary(), b"ab"),
    ("binary_view", "arrow_cast('ab', 'BinaryView')", pa.binary_view(), b"ab"),
    ("fixed_size_binary_2", "arrow_cast(arrow_cast('ab', 'Binary'), 'FixedSizeBinary(2)')", pa.binary(2), b"ab"),
    ("int8", "arrow_cast(-128, 'Int8')", pa.int8(), -128),
    ("uint64", "arrow_cast(18446744073709551615, 'UInt64')", pa.uint64(), 2**64 - 1),
    ("float16", "arrow_cast(1.5, 'Float16')", pa.float16(), 1.5),
    ("float32_nan", "arrow_cast('NaN', 'Float32')", pa.float32(), None),
    ("decimal128_15_2", "arrow_cast(-1.25, 'Decimal128(15, 2)')", pa.decimal128(15, 2), D("-1.25")),
    ("decimal256_76_20", "arrow_cast(1, 'Decimal256(76, 20)')", pa.decimal256(76, 20), D("1." + "0" * 20)),
    ("date32", "arrow_cast('2020-02-29', 'Date32')", pa.date32(), datetime.date(2020, 2, 29)),
    ("date64", "arrow_cast('2020-02-29', 'Date64')", pa.date64(), datetime.date(2020, 2, 29)),
    ("time32_s", "arrow_cast('01:02:03', 'Time32(Second)')", pa.time32("s"), datetime.time(1, 2, 3)),
    ("time64_ns", "arrow_cast('01:02:03', 'Time64(Nanosecond)')", pa.time64("ns"), datetime.time(1, 2, 3)),
    *[(f"timestamp_{short}_{zone or 'naive'}".replace("/", "_"), f"arrow_cast(0, 'Timestamp({unit}, {tz(zone)})')",
       pa.timestamp(short, zone), None)
      for unit, short in (("Second", "s"), ("Microsecond", "us"), ("Nanosecond", "ns")) for zone in ZONES],
    ("duration_s", "arrow_cast(1, 'Duration(Second)')", pa.duration("s"), datetime.timedelta(seconds=1)),
    ("interval_month_day_nano", "INTERVAL '1 month'", pa.month_day_nano_interval(), None),
    ("list_int64", "make_array(1, 2)", pa.list_(pa.int64()), [1, 2]),
    # Large lists travel as lists (arrow-flight 58's encoder announces a large list as a
    # list whatever the batches hold; Lake casts before encoding).
    ("large_list_int64", "arrow_cast(make_array(1, 2), 'LargeList(Int64)')", pa.list_(pa.int64()), [1, 2]),
    ("fixed_size_list_float32_3", "arrow_cast(make_array(1.0, 2.0, 3.0), 'FixedSizeList(3, Float32)')",
     pa.list_(pa.float32(), 3), [1.0, 2.0, 3.0]),
    ("struct", "named_struct('x', 1.0, 'y', 2.0)", pa.struct([("x", pa.float64()), ("y", pa.float64())]),
     {"x": 1.0, "y": 2.0}),
    ("map", "map(['a'], [1])", None, [("a", 1)]),
    ("null", "NULL", pa.null(), None),
]


@pytest.mark.parametrize("reader", ["flight", "adbc"])
@pytest.mark.parametrize("expr, want_type, want_value", [pytest.param(e, t, v, id=i) for i, e, t, v in COMPUTED])
def test_computed_column(server, mconn, reader, expr, want_type, want_value):
    sql = f"SELECT {expr} AS c"
    if reader == "flight":
        client = fl.FlightClient(server.uri)
        try:
            info = client.get_flight_info(fl.FlightDescriptor.for_command(statement_query_cmd(sql)))
            got = pa.concat_tables([client.do_get(e.ticket).read_all() for e in info.endpoints])
        finally:
            client.close()
        if not info.schema.equals(got.schema, check_metadata=True):
            pytest.fail(f"GetFlightInfo announced {info.schema.field(0)}, DoGet streamed {got.schema.field(0)}")
    else:
        got = query(mconn, sql)
    if want_type is not None:
        assert got.schema.field(0).type == want_type, f"{sql}: type {got.schema.field(0).type}, want {want_type}"
    value = got.column(0).to_pylist()[0]  # to_pylist must work
    if want_value is not None:
        assert value == want_value


# --- types Lake cannot hold -------------------------------------------------------------------

ALLOWED = re.compile(r"(?<!un)supported types|allowed|instead|\buse\b|give it one|e\.g\.|such as|has columns",
                     re.IGNORECASE)


def assert_clear(message: str, case: Refused, col: str):
    problems = []
    if col not in message:
        problems.append(f"does not name the column {col!r}")
    if not any(n in message.lower() for n in case.names):
        problems.append(f"does not name the type ({' / '.join(case.names)})")
    if not ALLOWED.search(message):
        problems.append("does not say what is allowed")
    if problems:
        pytest.fail("unclear error: " + "; ".join(problems) + f"\n      message: {message}")


def refused_matrix():
    out = []
    for case in REFUSED:
        out.append(pytest.param("ingest", case.id, id=f"ingest-{case.id}"))
        out.append(pytest.param("ingest_append", case.id, id=f"ingest_append-{case.id}"))
        if case.ctas_expr:
            out.append(pytest.param("ctas", case.id, id=f"ctas-{case.id}"))
        if case.sql:
            out.append(pytest.param("sql_create", case.id, id=f"sql_create-{case.id}"))
    return out


@pytest.mark.parametrize("path, case_id", refused_matrix())
def test_refused_type(mconn, ns, path, case_id):
    case = {c.id: c for c in REFUSED}[case_id]
    name = f"no_{path}_{ident(case.id)}"
    col = "v_" + ident(case.id)
    qualified = f"{ns}.{name}"
    if path == "ingest_append":
        # An existing table; rows arriving with a column of this type must be refused
        # before anything is written.
        query(mconn, f"CREATE TABLE {qualified} (k BIGINT NOT NULL)")
        query(mconn, f"INSERT INTO {qualified} VALUES (1)")
        before = version_count(mconn, qualified)
        keys = pa.array(range(len(case.values)), pa.int64())
        data = pa.Table.from_arrays([keys, case.values], schema=pa.schema([KEY, pa.field(col, case.type)]))
        with pytest.raises(flightsql.Error) as err:
            ingest(mconn, ns, name, data, "append")
        assert version_count(mconn, qualified) == before, "a refused append left a version behind"
        assert query(mconn, f"SELECT count(*) AS n FROM {qualified}").to_pylist() == [{"n": 1}]
        assert_clear(str(err.value), case, col)
        return
    statement = {
        "ingest": None,
        "ctas": f"CREATE TABLE {qualified} AS SELECT arrow_cast(1, 'Int64') AS k, {case.ctas_expr} AS {col}",
        "sql_create": f"CREATE TABLE {qualified} (k BIGINT NOT NULL, {col} {case.sql})",
    }[path]
    try:
        if path == "ingest":
            keys = pa.array(range(len(case.values)), pa.int64())
            ingest(mconn, ns, name, pa.Table.from_arrays([keys, case.values],
                                                         schema=pa.schema([KEY, pa.field(col, case.type)])), "create")
        else:
            query(mconn, statement)
    except flightsql.Error as e:
        message = str(e)
    else:
        try:
            stored = query(mconn, f"SELECT * FROM {qualified}").schema
            stored = stored.field(col).type if col in stored.names else stored
        except flightsql.Error as e:
            stored = f"unreadable: {e}"
        pytest.fail(f"Lake accepted {case.type} (stored as {stored}); if it round-trips, move it to the holdable types")
    left = listed(mconn, ns, name)
    # The name must be free again: a half-made table would make this fail.
    try:
        query(mconn, f"CREATE TABLE {qualified} (k BIGINT)")
        free = True
    except flightsql.Error as e:
        free = f"{e}"
    assert not left, f"the refused table {qualified} is still listed (error was: {message})"
    assert free is True, f"the name {qualified} is not free after the refusal: {free}"
    assert_clear(message, case, col)
