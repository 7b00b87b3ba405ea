"""Differential SQL testing: Lake (Flight SQL over ADBC, DataFusion underneath) against
DuckDB (the oracle, in process) on the same rows, compared with SQL-aware rules.

Test files (`sql/*.slt`) use a small subset of the sqllogictest format. Blocks are separated
by blank lines; lines starting with `#` are comments (anywhere):

    statement ok
    CREATE TABLE nl_t (id BIGINT, x DOUBLE)

    query rowsort
    SELECT id FROM nl_t WHERE x IS NULL

    query ordered
    SELECT id, x FROM nl_t ORDER BY id

    query error division by zero
    SELECT 1 / 0

    query rowsort
    SELECT count(*) FROM nl_t WHERE x > 1
    ----
    7

* `statement ok` + SQL: setup (CREATE TABLE with explicit column types, INSERT … VALUES),
  run on both engines. Type names are written as Lake (DataFusion) spells them; for DuckDB
  the runner rewrites MySQL-style unsigned types (`INT UNSIGNED` → `UINTEGER`, etc.).
* `query rowsort` + SQL: the results are compared as multisets of rows.
* `query ordered` + SQL: the SQL's ORDER BY orders the rows completely; compared in order.
* `query error [substring]`: both engines must refuse the SQL; when a substring is given it
  must occur (case-insensitively) in Lake's error message (DuckDB's messages differ). Lake's
  refusal must be the client's error, never INTERNAL (a failure on the data a query names is
  INVALID_ARGUMENT wherever the failing expression runs, in DataFusion or in a Lance scan).
* Recorded divergences, each with the upstream reason in a comment above it, checked as
  strictly as an answer (when the divergence goes away, the block fails and says to drop
  the marker):
  - `query lake-refuses substring`: DuckDB answers; Lake refuses with an error containing
    the substring (a clear refusal rather than a wrong answer);
  - `query lake-differs reason`: both answer and the answers differ (Lake's is a known
    DataFusion semantic, e.g. one the SQL standard leaves to the implementation, or the
    standard's where DuckDB departs from it); pinned rows after `----` are then Lake's
    answer alone;
  - `[iceberg]` or `[native]` right after the marker (`query lake-refuses[iceberg] …`)
    scopes it to one mode; in the other the block is an ordinary `query rowsort`.
* Optional `----` after the SQL of a query, then one expected row per line: a value pinned
  independently of DuckDB (both engines must produce it). Values are separated by
  whitespace, or by `|` when a line contains one; `NULL` is NULL, `(empty)` the empty
  string, `NaN` / `inf` / `-inf` floats, `true` / `false` booleans, numbers compare by value,
  anything else as text (temporal values compare with their ISO text).

Each file creates tables whose names are unique to it (a prefix such as `nl_`); the runner
finds them in `CREATE TABLE` statements and drops them on Lake after the file. Lake's
unqualified names live in namespace `default`; each file gets a fresh in-memory DuckDB.

DuckDB session settings that make it follow the PostgreSQL conventions DataFusion follows:
`TimeZone = 'UTC'`, `default_null_order = 'nulls_last_on_asc_first_on_desc'` (ASC puts
NULLs last, DESC first), one thread.

Comparison rules (values are read from Arrow on both sides):
* NULL equals NULL; the column count must match; column names and types need not.
* Floats: equal within relative 1e-9 (absolute 1e-12 around zero, for sums whose rounding
  depends on the order of addition); NaN equals NaN; ±inf exactly; -0.0 equals 0.0.
* Decimals compare by value (DuckDB DECIMAL / HUGEINT vs Lake Decimal128 or integers);
  a decimal against a float compares as floats, with the tolerance above.
* Timestamps compare as instants (nanoseconds since the epoch): a zoned value against
  another zoned one, or against a zone-less one read as UTC (DataFusion without a session
  time zone stores TIMESTAMPTZ values as zone-less UTC). Dates, times, intervals and
  timestamps are distinct kinds: a DATE never equals a TIMESTAMP.
* `rowsort`: multisets (sorted by a canonical key, then a pairwise match as fallback, so
  float tolerance and ±0 cannot make equal multisets differ); `ordered`: row by row.

Iceberg mode runs the same file against Iceberg tables: statements run on DuckDB only;
before each query whose tables changed, every table of the file is copied from DuckDB
(as Arrow) into an Iceberg table written by pyiceberg (namespace per file), and the query
runs on Lake with the file's table names replaced (whole words, outside string literals,
not before a `.`) by `iceberg.<namespace>.<table>`. Column types Iceberg cannot hold
(unsigned integers, intervals) make that table skipped in Iceberg mode, with the reason
printed and reported; TINYINT / SMALLINT are widened to INT in Iceberg and in the DuckDB
table alike, so both engines see one type (reported as a note). Tables with no rows are
created without a snapshot, as pyiceberg leaves them.

Generated cases: `generate(seed, n)` builds tables (ints, doubles with NULL / NaN / ±0 /
±inf, strings, dates) and `n` random queries from a seed; they run through the same runner.
"""

from __future__ import annotations

import datetime
import math
import os
import random
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import duckdb
import pyarrow as pa

# ---------------------------------------------------------------------------------------
# Parsing


@dataclass
class Block:
    kind: str  # "statement" | "query"
    mode: str  # statement: "ok"; query: "rowsort" | "ordered" | "error"
    sql: str
    line: int
    error: str | None = None  # substring for `query error` / `lake-refuses`; reason for `lake-differs`
    expected: list[list[str]] | None = None  # pinned rows after `----`
    scope: str | None = None  # the one mode a recorded divergence applies to


HEADER = re.compile(r"^(statement ok|query (rowsort|ordered)|query error(?:\s+(.*))?"
                    r"|query (lake-refuses|lake-differs)(?:\[(native|iceberg)\])?\s+(.+))\s*$")


def parse(text: str, name: str = "<sql>") -> list[Block]:
    blocks: list[Block] = []
    chunk: list[tuple[int, str]] = []

    def flush():
        if not chunk:
            return
        start, header = chunk[0]
        m = HEADER.match(header.strip())
        if not m:
            raise ValueError(f"{name}:{start}: expected `statement ok`, `query rowsort|ordered` or "
                             f"`query error [substring]`, got {header!r}")
        body = [line for _, line in chunk[1:]]
        expected = None
        if "----" in [b.strip() for b in body]:
            cut = [b.strip() for b in body].index("----")
            expected = [_split_expected(line) for line in body[cut + 1:]]
            body = body[:cut]
        sql = "\n".join(body).strip()
        if not sql:
            raise ValueError(f"{name}:{start}: block without SQL")
        head = header.strip()
        if head == "statement ok":
            if expected is not None:
                raise ValueError(f"{name}:{start}: a statement cannot have expected rows")
            blocks.append(Block("statement", "ok", sql, start))
        elif head.startswith("query error"):
            if expected is not None:
                raise ValueError(f"{name}:{start}: `query error` cannot have expected rows")
            blocks.append(Block("query", "error", sql, start, error=(m.group(3) or "").strip() or None))
        elif m.group(4):
            if expected is not None and m.group(4) == "lake-refuses":
                raise ValueError(f"{name}:{start}: a recorded refusal cannot have expected rows")
            blocks.append(Block("query", m.group(4), sql, start, error=m.group(6).strip(), scope=m.group(5),
                                expected=expected))
        else:
            blocks.append(Block("query", m.group(2), sql, start, expected=expected))
        chunk.clear()

    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        if not line.strip():
            flush()
        else:
            chunk.append((number, line))
    flush()
    return blocks


def _split_expected(line: str) -> list[str]:
    if "|" in line:
        return [part.strip() for part in line.split("|")]
    return line.split()


CREATE_TABLE = re.compile(r"\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*[(\s]",
                          re.IGNORECASE)


def table_names(blocks: list[Block]) -> list[str]:
    names: list[str] = []
    for block in blocks:
        if block.kind == "statement":
            for name in CREATE_TABLE.findall(block.sql):
                if name.lower() not in names:
                    names.append(name.lower())
    return names


# ---------------------------------------------------------------------------------------
# Engines

DUCKDB_TYPES = [
    (re.compile(r"\bBIGINT\s+UNSIGNED\b", re.I), "UBIGINT"),
    (re.compile(r"\bINT(?:EGER)?\s+UNSIGNED\b", re.I), "UINTEGER"),
    (re.compile(r"\bSMALLINT\s+UNSIGNED\b", re.I), "USMALLINT"),
    (re.compile(r"\bTINYINT\s+UNSIGNED\b", re.I), "UTINYINT"),
]


def for_duckdb(sql: str) -> str:
    for pattern, replacement in DUCKDB_TYPES:
        sql = pattern.sub(replacement, sql)
    return sql


class DuckDB:
    def __init__(self):
        self.con = duckdb.connect()
        self.con.execute("SET TimeZone = 'UTC'")
        self.con.execute("SET default_null_order = 'nulls_last_on_asc_first_on_desc'")
        self.con.execute("SET threads = 1")

    def statement(self, sql: str):
        self.con.execute(for_duckdb(sql))

    def query(self, sql: str) -> pa.Table:
        return self.con.sql(for_duckdb(sql)).to_arrow_table()

    def table(self, name: str) -> pa.Table:
        return self.con.sql(f"SELECT * FROM {name}").to_arrow_table()

    def close(self):
        self.con.close()


class Lake:
    """One ADBC Flight SQL connection with deadlines on every call."""

    def __init__(self, uri: str, timeout_secs: int = 60):
        import adbc_driver_flightsql
        import adbc_driver_flightsql.dbapi as flightsql

        options = adbc_driver_flightsql.DatabaseOptions
        self.conn = flightsql.connect(uri, autocommit=True, db_kwargs={
            options.TIMEOUT_QUERY.value: str(timeout_secs),
            options.TIMEOUT_FETCH.value: str(timeout_secs),
            options.TIMEOUT_UPDATE.value: str(timeout_secs),
        })

    def query(self, sql: str) -> pa.Table:
        with self.conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetch_arrow_table()

    statement = query

    def close(self):
        self.conn.close()


def _error_text(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return re.sub(r"\s+", " ", text)[:600]


# ---------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class Temporal:
    """A date / time / timestamp / duration / interval read from Arrow, as integers."""

    kind: str  # "date" (days) | "time" (ns) | "timestamp" (ns) | "duration" (ns) | "interval"
    value: int | tuple  # interval: (months, days, nanoseconds)
    zone: str | None = None  # timestamps only

    def text(self) -> str:
        if self.kind == "date":
            return (datetime.date(1970, 1, 1) + datetime.timedelta(days=self.value)).isoformat()
        if self.kind == "timestamp":
            seconds, nanos = divmod(self.value, 1_000_000_000)
            dt = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
            frac = f".{nanos:09d}".rstrip("0") if nanos else ""
            return dt.isoformat(sep=" ") + frac + ("+00" if self.zone else "")
        if self.kind == "time":
            seconds, nanos = divmod(self.value, 1_000_000_000)
            frac = f".{nanos:09d}".rstrip("0") if nanos else ""
            return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}{frac}"
        if self.kind == "interval":
            months, days, nanos = self.value
            return f"{months} months {days} days {nanos} ns"
        return f"{self.value} ns"


_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def column_values(arr) -> list:
    """Python values of an Arrow (chunked) array, temporal values as `Temporal`."""
    if isinstance(arr, pa.ChunkedArray):
        out: list = []
        for chunk in arr.chunks:
            out.extend(column_values(chunk))
        return out
    t = arr.type
    if pa.types.is_dictionary(t):
        return column_values(arr.dictionary_decode())
    if pa.types.is_timestamp(t):
        ints = arr.cast(pa.int64()).to_pylist()
        return [None if v is None else Temporal("timestamp", v * _UNIT[t.unit], t.tz) for v in ints]
    if pa.types.is_date32(t):
        return [None if v is None else Temporal("date", v) for v in arr.cast(pa.int32()).to_pylist()]
    if pa.types.is_date64(t):
        return [None if v is None else Temporal("date", v // 86_400_000) for v in arr.cast(pa.int64()).to_pylist()]
    if pa.types.is_time(t):
        width = pa.int32() if pa.types.is_time32(t) else pa.int64()
        return [None if v is None else Temporal("time", v * _UNIT[t.unit]) for v in arr.cast(width).to_pylist()]
    if pa.types.is_duration(t):
        return [None if v is None else Temporal("duration", v * _UNIT[t.unit]) for v in arr.cast(pa.int64()).to_pylist()]
    if pa.types.is_interval(t):
        out = []
        for v in arr.to_pylist():
            if v is None:
                out.append(None)
            elif hasattr(v, "months"):
                out.append(Temporal("interval", (v.months, v.days, v.nanoseconds)))
            else:  # pragma: no cover - other interval layouts
                out.append(Temporal("interval", (0, 0, int(v))))
        return out
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) \
            or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        out = []
        for i in range(len(arr)):
            out.append(None if not arr[i].is_valid else column_values(arr[i].values))
        return out
    if pa.types.is_struct(t):
        fields = [column_values(arr.field(j)) for j in range(t.num_fields)]
        valid = arr.is_valid().to_pylist()
        return [tuple(f[i] for f in fields) if valid[i] else None for i in range(len(arr))]
    if pa.types.is_string_view(t) or pa.types.is_large_string(t):
        return arr.cast(pa.string()).to_pylist()
    if pa.types.is_binary_view(t):
        return arr.cast(pa.binary()).to_pylist()
    if pa.types.is_float16(t):
        return [None if v is None else float(v) for v in arr.cast(pa.float32()).to_pylist()]
    return arr.to_pylist()


def rows_of(table: pa.Table) -> list[tuple]:
    columns = [column_values(c) for c in table.columns]
    return list(zip(*columns)) if columns else [() for _ in range(table.num_rows)]


REL_TOL = 1e-9
ABS_TOL = 1e-12


def _is_number(v) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def values_equal(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        if isinstance(a, float) or isinstance(b, float):
            x, y = float(a), float(b)
            if math.isnan(x) or math.isnan(y):
                return math.isnan(x) and math.isnan(y)
            if math.isinf(x) or math.isinf(y):
                return x == y
            return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL)
        return Decimal(a) == Decimal(b)
    if isinstance(a, Temporal) and isinstance(b, Temporal):
        return a.kind == b.kind and a.value == b.value
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    if type(a) is type(b):
        return a == b
    return False


def rows_equal(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))


def sort_key(v):
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, int(v))
    if _is_number(v):
        x = float(v)
        if math.isnan(x):
            return (2, 1, 0.0)
        return (2, 0, x + 0.0)
    if isinstance(v, str):
        return (3, v)
    if isinstance(v, bytes):
        return (4, v)
    if isinstance(v, Temporal):
        return (5, v.kind, v.value)
    if isinstance(v, (list, tuple)):
        return (6, tuple(sort_key(x) for x in v))
    return (7, repr(v))


def row_key(row: tuple):
    return tuple(sort_key(v) for v in row)


def same_multiset(a: list[tuple], b: list[tuple]) -> bool:
    if len(a) != len(b):
        return False
    sa, sb = sorted(a, key=row_key), sorted(b, key=row_key)
    if all(rows_equal(x, y) for x, y in zip(sa, sb)):
        return True
    if len(a) > 5000:
        return False
    # Fallback: pairwise matching (floats within tolerance can sort differently).
    unmatched = list(sb)
    for row in sa:
        for j, other in enumerate(unmatched):
            if rows_equal(row, other):
                del unmatched[j]
                break
        else:
            return False
    return True


def same_rows(a: list[tuple], b: list[tuple], ordered: bool) -> bool:
    if ordered:
        return len(a) == len(b) and all(rows_equal(x, y) for x, y in zip(a, b))
    return same_multiset(a, b)


def render_value(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, Temporal):
        return v.text()
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, (list, tuple)):
        inner = ", ".join(render_value(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"{{{inner}}}"
    return str(v)


def render_rows(rows: list[tuple], limit: int = 40) -> str:
    if not rows:
        return "    (no rows)"
    lines = ["    (" + ", ".join(render_value(v) for v in row) + ")" for row in rows[:limit]]
    if len(rows) > limit:
        lines.append(f"    … {len(rows) - limit} more rows")
    return "\n".join(lines)


def expected_value(token: str):
    if token == "NULL":
        return None
    if token == "(empty)":
        return ""
    if token in ("true", "false"):
        return token == "true"
    if token in ("NaN", "nan"):
        return math.nan
    if token in ("inf", "+inf", "Infinity"):
        return math.inf
    if token in ("-inf", "-Infinity"):
        return -math.inf
    if re.fullmatch(r"[+-]?\d+", token):
        return int(token)
    try:
        return Decimal(token)
    except InvalidOperation:
        return token


def matches_expected(rows: list[tuple], expected: list[list[str]], ordered: bool) -> bool:
    def norm(row):
        return tuple(v.text() if isinstance(v, Temporal) else v for v in row)

    want = [tuple(expected_value(t) for t in line) for line in expected]
    got = [norm(r) for r in rows]
    return same_rows(got, want, ordered)


# ---------------------------------------------------------------------------------------
# Running a file


@dataclass
class Failure:
    kind: str
    line: int
    sql: str
    lake: str
    duckdb: str
    expected: str | None = None

    def render(self, where: str) -> str:
        text = [f"--- [{self.kind}] {where}:{self.line}", "  SQL: " + self.sql.replace("\n", "\n       "),
                "  Lake:", self.lake, "  DuckDB:", self.duckdb]
        if self.expected is not None:
            text += ["  Expected (pinned):", self.expected]
        return "\n".join(text)


@dataclass
class Report:
    name: str
    mode: str
    statements: int = 0
    queries: int = 0
    passed: int = 0
    recorded: int = 0  # passed queries that are recorded divergences
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    extra: str = ""  # e.g. the seed and the replay command for generated cases

    def summary(self) -> str:
        return (f"{self.name} [{self.mode}]: {self.statements} statements, {self.queries} queries, "
                f"{self.passed} passed ({self.recorded} of them recorded divergences), "
                f"{len(self.failures)} failed, {len(self.skipped)} skipped "
                f"({self.seconds:.1f}s)")

    def render(self) -> str:
        parts = [self.summary()]
        if self.extra:
            parts.append(self.extra)
        parts += [f"note: {n}" for n in self.notes]
        parts += [f"skipped: {s}" for s in self.skipped]
        parts += [f.render(self.name) for f in self.failures]
        if self.extra and self.failures:
            parts.append(self.extra)
        return "\n".join(parts)


def _outcome(run, sql):
    """(rows, column count, None) or (None, None, error text)."""
    try:
        table = run(sql)
        return rows_of(table), table.num_columns, None
    except Exception as e:  # noqa: BLE001 - an engine's refusal is a result to compare
        return None, None, _error_text(e)


def _internal(error: str) -> bool:
    """Whether Lake's refusal says the fault is the server's (gRPC INTERNAL)."""
    return error.startswith("InternalError") or "INTERNAL:" in error


def _show(rows, error) -> str:
    return f"    ERROR {error}" if error is not None else render_rows(rows)


def _words(sql: str, names: list[str]) -> set[str]:
    code = _outside_strings(sql)
    return {n for n in names if re.search(rf"(?<![\w.\"]){re.escape(n)}\b", code, re.I)}


def _outside_strings(sql: str) -> str:
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def rewrite_tables(sql: str, names: list[str], prefix: str) -> str:
    """Each whole-word table name (outside string literals, not a qualifier before `.`, not
    already qualified) becomes `prefix.name`."""
    if not names:
        return sql
    pattern = re.compile(r"(?<![\w.\"])(" + "|".join(re.escape(n) for n in names) + r")\b(?!\s*\.)", re.I)
    pieces = re.split(r"('(?:[^']|'')*')", sql)
    return "".join(p if i % 2 else pattern.sub(lambda m: f"{prefix}.{m.group(1)}", p)
                   for i, p in enumerate(pieces))


def compare_query(block: Block, lake_sql: str, lake, duck: DuckDB, mode: str = "native") -> Failure | None:
    lake_rows, lake_cols, lake_err = _outcome(lake.query, lake_sql)
    duck_rows, duck_cols, duck_err = _outcome(duck.query, block.sql)
    show = lambda: (_show(lake_rows, lake_err), _show(duck_rows, duck_err))  # noqa: E731
    recorded = block.mode in ("lake-refuses", "lake-differs") and block.scope in (None, mode)
    if block.mode in ("lake-refuses", "lake-differs") and not recorded:
        block = Block(block.kind, "rowsort", block.sql, block.line)
    if block.mode == "lake-refuses":
        if duck_err is not None:
            return Failure("DuckDB error", block.line, lake_sql, *show())
        if lake_err is None:
            return Failure("recorded refusal is gone (Lake answers now): check the answer, drop the marker",
                           block.line, lake_sql, *show())
        if block.error.lower() not in lake_err.lower():
            return Failure("error text", block.line, lake_sql, *show(), expected=f"    an error containing {block.error!r}")
        if _internal(lake_err):
            return Failure("Lake refuses with INTERNAL", block.line, lake_sql, *show())
        return None
    if block.mode == "lake-differs":
        if lake_err is not None or duck_err is not None:
            return Failure("Lake error" if lake_err is not None else "DuckDB error", block.line, lake_sql, *show())
        if same_rows(lake_rows, duck_rows, False):
            return Failure("recorded difference is gone (Lake agrees now): drop the marker",
                           block.line, lake_sql, *show())
        if block.expected is not None and not matches_expected(lake_rows, block.expected, False):
            pinned = "\n".join("    (" + ", ".join(line) + ")" for line in block.expected) or "    (no rows)"
            return Failure("wrong result (pinned)", block.line, lake_sql, *show(), expected=pinned)
        return None
    if block.mode == "error":
        if lake_err is None or duck_err is None:
            who = "Lake" if lake_err is None and duck_err is not None else \
                "DuckDB" if duck_err is None and lake_err is not None else "both engines"
            return Failure(f"error expected, {who} answered", block.line, lake_sql, *show())
        if block.error and block.error.lower() not in lake_err.lower():
            return Failure("error text", block.line, lake_sql, *show(), expected=f"    an error containing {block.error!r}")
        if _internal(lake_err):
            return Failure("Lake refuses with INTERNAL", block.line, lake_sql, *show())
        return None
    if lake_err is not None and duck_err is not None:
        return Failure("both engines refuse", block.line, lake_sql, *show())
    if lake_err is not None:
        return Failure("Lake error", block.line, lake_sql, *show())
    if duck_err is not None:
        return Failure("DuckDB error", block.line, lake_sql, *show())
    ordered = block.mode == "ordered"
    if lake_cols != duck_cols:
        return Failure(f"column count ({lake_cols} vs {duck_cols})", block.line, lake_sql, *show())
    if block.expected is not None:
        lake_ok = matches_expected(lake_rows, block.expected, ordered)
        duck_ok = matches_expected(duck_rows, block.expected, ordered)
        if not (lake_ok and duck_ok):
            kind = "wrong result (pinned)" if not lake_ok else "DuckDB differs from pinned value"
            pinned = "\n".join("    (" + ", ".join(line) + ")" for line in block.expected) or "    (no rows)"
            return Failure(kind, block.line, lake_sql, *show(), expected=pinned)
    if not same_rows(lake_rows, duck_rows, ordered):
        kind = "wrong result" + (" (order)" if ordered and same_multiset(lake_rows, duck_rows) else "")
        return Failure(kind, block.line, lake_sql, *show())
    return None


def run_blocks(blocks: list[Block], name: str, lake, mode: str = "native", iceberg=None) -> Report:
    """Runs parsed blocks against `lake` (a `Lake`) and a fresh DuckDB. `mode` "native":
    statements run on both; "iceberg": statements on DuckDB only, tables copied into Iceberg
    through `iceberg` (an `IcebergTarget`) and queries rewritten to read them."""
    started = time.time()
    report = Report(name, mode)
    duck = DuckDB()
    tables = table_names(blocks)
    broken: dict[str, str] = {}  # table -> why queries on it are skipped
    namespace = None
    if mode == "native":
        for t in tables:
            _outcome(lake.query, f"DROP TABLE IF EXISTS {t}")
    else:
        namespace = iceberg.namespace_for(name)
        iceberg.reset(namespace)
    dirty = False
    try:
        for block in blocks:
            if block.kind == "statement":
                report.statements += 1
                _, _, duck_err = _outcome(lambda s: duck.statement(s) or pa.table({}), block.sql)
                lake_err = None
                if mode == "native":
                    _, _, lake_err = _outcome(lake.statement, block.sql)
                if duck_err or lake_err:
                    report.failures.append(Failure("statement failed", block.line, block.sql,
                                                   f"    ERROR {lake_err}" if lake_err else "    ok",
                                                   f"    ERROR {duck_err}" if duck_err else "    ok"))
                    for t in CREATE_TABLE.findall(block.sql):
                        broken.setdefault(t.lower(), f"its CREATE TABLE (line {block.line}) failed")
                dirty = True
                continue
            report.queries += 1
            lake_sql = block.sql
            if mode == "iceberg":
                if dirty:
                    for t, reason in iceberg.sync(duck, tables, namespace, report).items():
                        broken.setdefault(t, reason)
                    dirty = False
                lake_sql = rewrite_tables(block.sql, [t for t in tables if t not in broken],
                                          f"iceberg.{namespace}")
            used = _words(block.sql, tables)
            skip = sorted(t for t in used if t in broken)
            if skip:
                why = "; ".join(f"{t}: {broken[t]}" for t in skip)
                report.skipped.append(f"line {block.line} ({why}): {' '.join(block.sql.split())[:160]}")
                continue
            failure = compare_query(block, lake_sql, lake, duck, mode)
            if failure is None:
                report.passed += 1
                if block.mode in ("lake-refuses", "lake-differs") and block.scope in (None, mode):
                    report.recorded += 1
            else:
                report.failures.append(failure)
    finally:
        if mode == "native":
            for t in tables:
                _outcome(lake.query, f"DROP TABLE IF EXISTS {t}")
        else:
            iceberg.reset(namespace)
        duck.close()
        report.seconds = time.time() - started
    return report


def run_file(path: Path, lake, mode: str = "native", iceberg=None) -> Report:
    path = Path(path)
    return run_blocks(parse(path.read_text(), path.name), path.name, lake, mode, iceberg)


# ---------------------------------------------------------------------------------------
# Iceberg


class IcebergTarget:
    """Writes DuckDB's tables into Iceberg tables with pyiceberg (the SQL catalog the fixture
    REST catalog serves)."""

    def __init__(self, catalog):
        self.catalog = catalog
        self.created: dict[str, set[str]] = {}

    @staticmethod
    def namespace_for(name: str) -> str:
        stem = re.sub(r"\.slt$", "", name)
        return "diff_" + re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")

    def reset(self, namespace: str):
        from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError

        try:
            self.catalog.create_namespace(namespace)
        except NamespaceAlreadyExistsError:
            pass
        for ident in self.catalog.list_tables(namespace):
            try:
                self.catalog.drop_table(ident)
            except NoSuchTableError:
                pass
        self.created[namespace] = set()

    def sync(self, duck: DuckDB, tables: list[str], namespace: str, report: Report) -> dict[str, str]:
        """Copies every table DuckDB has into Iceberg (create, then overwrite); returns the
        tables that cannot be copied, with the reason."""
        skipped: dict[str, str] = {}
        for name in tables:
            try:
                data = duck.table(name)
            except Exception as e:  # noqa: BLE001 - not created (yet) on DuckDB
                skipped[name] = f"DuckDB has no table {name}: {_error_text(e)[:120]}"
                continue
            schema, notes, reason, widened = iceberg_schema(data.schema)
            if reason:
                skipped[name] = f"not copied to Iceberg: {reason}"
                message = f"table {name} skipped in the Iceberg run: {reason}"
                if message not in report.notes:
                    report.notes.append(message)
                    print(message)
                continue
            for n in notes:
                message = f"table {name}: {n}"
                if message not in report.notes:
                    report.notes.append(message)
                    print(message)
            for column in widened:
                # The oracle reads the same widened type the Iceberg table holds.
                duck.con.execute(f'ALTER TABLE {name} ALTER COLUMN "{column}" SET DATA TYPE INTEGER')
            try:
                self._write(namespace, name, data.cast(schema), schema)
            except Exception as e:  # noqa: BLE001 - pyiceberg's refusal: skip the table, say why
                skipped[name] = f"writing it to Iceberg failed: {_error_text(e)[:200]}"
                message = f"table {name} skipped in the Iceberg run: {skipped[name]}"
                report.notes.append(message)
                print(message)
        return skipped

    def _write(self, namespace: str, name: str, data: pa.Table, schema: pa.Schema):
        ident = (namespace, name)
        if name not in self.created[namespace]:
            table = self.catalog.create_table(ident, schema=schema)
            self.created[namespace].add(name)
            if data.num_rows:
                table.append(data)
        else:
            table = self.catalog.load_table(ident)
            if data.num_rows or table.current_snapshot() is not None:
                table.overwrite(data)


def iceberg_schema(schema: pa.Schema) -> tuple[pa.Schema, list[str], str | None, list[str]]:
    """The Arrow schema to write into Iceberg, notes on changed types, why it can't be
    written (or None), and the columns widened to INT."""
    fields, notes, widened = [], [], []
    for f in schema:
        t = f.type
        if pa.types.is_unsigned_integer(t):
            return schema, notes, f"column {f.name} is {t} and Iceberg has no unsigned integer types", widened
        if pa.types.is_int8(t) or pa.types.is_int16(t):
            notes.append(f"column {f.name} {t} widened to int32 (Iceberg has no 8/16-bit integers; "
                         "the DuckDB table is widened too)")
            widened.append(f.name)
            t = pa.int32()
        elif pa.types.is_string_view(t) or pa.types.is_large_string(t):
            t = pa.string()
        elif pa.types.is_binary_view(t) or pa.types.is_large_binary(t):
            t = pa.binary()
        elif pa.types.is_timestamp(t):
            if t.unit == "ns":
                notes.append(f"column {f.name} timestamp[ns] written as timestamp[us]")
            t = pa.timestamp("us", tz="UTC" if t.tz else None)
        elif pa.types.is_time(t):
            t = pa.time64("us")
        elif pa.types.is_interval(t) or pa.types.is_duration(t):
            return schema, notes, f"column {f.name} is {t} and Iceberg has no interval type", widened
        elif pa.types.is_decimal(t) and t.precision > 38:
            return schema, notes, f"column {f.name} is {t}: Iceberg decimals hold at most 38 digits", widened
        elif not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
                  or pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_date32(t)
                  or pa.types.is_decimal(t)):
            return schema, notes, f"column {f.name} is {t}, not written to Iceberg by this runner", widened
        fields.append(pa.field(f.name, t, nullable=True))
    return pa.schema(fields), notes, None, widened


# ---------------------------------------------------------------------------------------
# Generated cases

REPLAY = "LAKE_DIFF_SEED={seed} python3 -m pytest -q shells/cli/tests/python/test_differential.py -k generated"


def replay_command(seed: int, n: int) -> str:
    cases = f"LAKE_DIFF_CASES={n} " if n != 200 else ""
    return cases + REPLAY.format(seed=seed)


def default_seed() -> int:
    explicit = os.environ.get("LAKE_DIFF_SEED")
    return int(explicit) if explicit else int(time.time())


def default_cases() -> int:
    return int(os.environ.get("LAKE_DIFF_CASES", "200"))


_DOUBLES = ["0.0", "-0.0", "1.5", "-2.25", "3.0", "1e-3", "100.0", "NaN", "Infinity", "-Infinity", "2.5"]
_STRINGS = ["a", "A", "ab", "b", "a_b", "a%b", "", " a", "é", "Ω", "zz", "abc", "B"]
_DATES = ["2024-01-01", "2024-02-29", "2023-12-31", "1999-12-31", "2024-03-10", "1970-01-01"]


class Generator:
    """Random tables and queries from a seed (see module doc)."""

    COLS = {"k": "int", "i": "int", "d": "double", "s": "str", "dt": "date"}

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.seed = seed

    # literals -----------------------------------------------------------------------------
    def double_literal(self, for_insert=False):
        v = self.r.choice(_DOUBLES)
        if v in ("NaN", "Infinity", "-Infinity", "-0.0") or for_insert:
            return f"CAST('{v}' AS DOUBLE)"
        return v

    def literal(self, kind, null_ok=False):
        if null_ok and self.r.random() < 0.15:
            return "NULL"
        if kind == "int":
            return str(self.r.randint(-3, 6))
        if kind == "double":
            return self.double_literal()
        if kind == "str":
            return "'" + self.r.choice(_STRINGS).replace("'", "''") + "'"
        return f"DATE '{self.r.choice(_DATES)}'"

    def value(self, kind):
        if self.r.random() < 0.15:
            return "NULL"
        if kind == "double":
            return self.double_literal(for_insert=True)
        return self.literal(kind)

    # tables -------------------------------------------------------------------------------
    def tables(self) -> list[Block]:
        blocks = []
        for name, nrows in (("gen_a", self.r.randint(20, 60)), ("gen_b", self.r.randint(5, 25))):
            blocks.append(Block("statement", "ok",
                                f"CREATE TABLE {name} (k INTEGER, i BIGINT, d DOUBLE, s VARCHAR, dt DATE)", 0))
            rows = []
            for _ in range(nrows):
                rows.append("(" + ", ".join(self.value(kind) for kind in self.COLS.values()) + ")")
            blocks.append(Block("statement", "ok", f"INSERT INTO {name} VALUES\n  " + ",\n  ".join(rows), 0))
        return blocks

    # predicates ---------------------------------------------------------------------------
    def atom(self, alias=""):
        col = self.r.choice(list(self.COLS))
        kind = self.COLS[col]
        c = alias + col
        choice = self.r.random()
        if choice < 0.3:
            op = self.r.choice(["=", "<>", "<", "<=", ">", ">="])
            return f"{c} {op} {self.literal(kind)}"
        if choice < 0.45:
            items = [self.literal(kind, null_ok=True) for _ in range(self.r.randint(1, 4))]
            neg = "NOT " if self.r.random() < 0.5 else ""
            return f"{c} {neg}IN ({', '.join(items)})"
        if choice < 0.55:
            return f"{c} IS {'NOT ' if self.r.random() < 0.5 else ''}NULL"
        if choice < 0.7:
            a, b = self.literal(kind), self.literal(kind)
            neg = "NOT " if self.r.random() < 0.3 else ""
            return f"{c} {neg}BETWEEN {a} AND {b}"
        if choice < 0.8:
            # Parenthesized: the SQL parser of old Lake builds binds `IS DISTINCT FROM` looser
            # than AND / OR (nulls.slt pins that bug); unparenthesized it would fail most cases.
            neg = "NOT " if self.r.random() < 0.5 else ""
            return f"({c} IS {neg}DISTINCT FROM {self.literal(kind, null_ok=True)})"
        if choice < 0.88 and kind == "str":
            pat = self.r.choice(["a%", "%b", "_", "a_b", "%", "%\\_%", "A%", "é%", "_b%"])
            esc = " ESCAPE '\\'" if "\\" in pat else ""
            return f"{c} {'NOT ' if self.r.random() < 0.3 else ''}LIKE '{pat}'{esc}"
        other = self.r.choice([x for x, k in self.COLS.items() if k == kind])
        op = self.r.choice(["=", "<>", "<", ">="])
        return f"{c} {op} {alias}{other}"

    def predicate(self, depth=0, alias=""):
        if depth >= 2 or self.r.random() < 0.4:
            return self.atom(alias)
        choice = self.r.random()
        if choice < 0.2:
            return f"NOT ({self.predicate(depth + 1, alias)})"
        op = "AND" if choice < 0.6 else "OR"
        return f"({self.predicate(depth + 1, alias)} {op} {self.predicate(depth + 1, alias)})"

    # queries ------------------------------------------------------------------------------
    def order_by(self, cols):
        terms = []
        for c in cols:
            direction = self.r.choice(["", " ASC", " DESC"])
            nulls = self.r.choice(["", "", " NULLS FIRST", " NULLS LAST"])
            terms.append(f"{c}{direction}{nulls}")
        return ", ".join(terms)

    def limit(self):
        parts = []
        if self.r.random() < 0.7:
            parts.append(f"LIMIT {self.r.randint(0, 12)}")
        if self.r.random() < 0.5:
            parts.append(f"OFFSET {self.r.randint(0, 8)}")
        return (" " + " ".join(parts)) if parts else ""

    def query(self) -> Block:
        t = self.r.choice(["gen_a", "gen_a", "gen_b"])
        kind = self.r.random()
        if kind < 0.25:
            cols = self.r.sample(list(self.COLS), self.r.randint(1, 3))
            return Block("query", "rowsort", f"SELECT {', '.join(cols)} FROM {t} WHERE {self.predicate()}", 0)
        if kind < 0.4:
            return Block("query", "rowsort", f"SELECT count(*) FROM {t} WHERE {self.predicate()}", 0)
        if kind < 0.65:
            key = self.r.choice(list(self.COLS))
            aggs = []
            for _ in range(self.r.randint(1, 3)):
                col = self.r.choice(list(self.COLS))
                numeric = self.COLS[col] in ("int", "double")
                fn = self.r.choice(["count", "min", "max", "count_distinct"] + (["sum", "avg"] if numeric else []))
                agg = f"count(DISTINCT {col})" if fn == "count_distinct" else f"{fn}({col})"
                aggs.append(f"{agg} AS a{len(aggs)}")  # DataFusion refuses two unnamed equal expressions
            aggs.append("count(*) AS n")
            where = f" WHERE {self.predicate()}" if self.r.random() < 0.5 else ""
            return Block("query", "rowsort",
                         f"SELECT {key}, {', '.join(aggs)} FROM {t}{where} GROUP BY {key}", 0)
        if kind < 0.85:
            cols = self.r.sample(list(self.COLS), self.r.randint(1, 4))
            order = self.order_by(self.r.sample(cols, len(cols)))
            where = f" WHERE {self.predicate()}" if self.r.random() < 0.6 else ""
            distinct = "DISTINCT " if self.r.random() < 0.2 else ""
            return Block("query", "ordered",
                         f"SELECT {distinct}{', '.join(cols)} FROM {t}{where} ORDER BY {order}{self.limit()}", 0)
        if kind < 0.93:
            # Nested Top-K: an inner ORDER BY … LIMIT, then an outer ORDER BY … OFFSET.
            cols = self.r.sample(list(self.COLS), self.r.randint(1, 3))
            inner = self.order_by(self.r.sample(cols, len(cols)))
            outer = self.order_by(self.r.sample(cols, len(cols)))
            return Block("query", "ordered",
                         f"SELECT * FROM (SELECT {', '.join(cols)} FROM {t} ORDER BY {inner} "
                         f"LIMIT {self.r.randint(0, 15)}) q ORDER BY {outer} OFFSET {self.r.randint(0, 5)}", 0)
        col = self.r.choice(list(self.COLS))
        neg = "NOT " if self.r.random() < 0.5 else ""
        return Block("query", "rowsort",
                     f"SELECT count(*) FROM gen_a a WHERE a.{col} {neg}IN (SELECT b.{col} FROM gen_b b "
                     f"WHERE {self.predicate(alias='b.')})", 0)


def generate(seed: int, n: int) -> list[Block]:
    g = Generator(seed)
    blocks = g.tables()
    for number in range(1, n + 1):
        block = g.query()
        block.line = number  # the case number, shown in failures
        blocks.append(block)
    return blocks


def run_generated(seed: int, n: int, lake, mode: str = "native", iceberg=None) -> Report:
    report = run_blocks(generate(seed, n), f"generated(seed={seed})", lake, mode, iceberg)
    report.extra = f"seed {seed}; replay: " + replay_command(seed, n)
    return report
