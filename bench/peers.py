#!/usr/bin/env python3
"""Peer baselines and the results chart for Lake's benchmark suite.

The Rust benchmark driver (``lake-bench``) measures Lake itself and runs this
script as a subprocess for everything that needs a Python peer.  Each
subcommand writes one JSON (or PNG) file that ``lake-bench`` reads back.

Subcommands
-----------
``tpch``
    Times the TPC-H queries on DuckDB (in-memory, over the same Parquet files
    Lake was loaded from) and on Lake (Flight SQL through ADBC), interleaving
    the two so neither gets systematically warmer caches, and checks Lake's
    answers -- and optionally DataFusion's, written by the Rust side as Arrow
    IPC files -- against DuckDB's.  Writes::

        {"runs": N, "duckdb_version": "...",
         "queries": {"q1": {"duckdb_ms": float, "lake_ms": float, "rows": int,
                            "lake_matches_duckdb": bool,
                            "datafusion_matches_duckdb": bool | null,
                            "mismatch": str | null}, ...}}

    A query that fails on Lake gets ``"lake_error": "message"`` and
    ``"lake_ms": null`` and the run goes on; likewise ``"duckdb_error"`` and
    ``"duckdb_ms": null`` for DuckDB.

``ingest``
    The pylance baseline for Lake's ingest: reads a Parquet file into memory,
    splits it into chunks of N rows and times writing them to a fresh Lance
    dataset with ``lance.write_dataset``, one commit per chunk, as Lake's SDK
    appends one commit per chunk.  Writes::

        {"rows": int, "chunks": int, "seconds": float, "rows_per_s": float,
         "pylance_version": "..."}

``iceberg``
    Writes a Parquet file (TPC-H lineitem) as an Iceberg table with pyiceberg (SQL
    catalog on sqlite), serves it through the fixture REST catalog
    (fixtures/iceberg/rest_catalog.py), starts ``lake-bench serve`` with the ``iceberg``
    catalog on it, and times scan-and-aggregate queries through Lake (ADBC) against
    DuckDB's Iceberg reader (``iceberg_scan`` of the same metadata file, so the same
    snapshot) running in the DuckDB 1.5.5 virtualenv (bench/duckdb_iceberg.py).  Writes::

        {"rows": int, "write_seconds": float, "duckdb_version": "...", "runs": N,
         "queries": {"count": {"lake_ms": float, "duckdb_ms": float,
                               "lake_matches_duckdb": bool, "mismatch": str | null}, ...}}

``chart``
    Draws Lake's ``results.json`` (TPC-H, ingest, commit throughput, point
    reads; any section may be missing) as one 2x2 PNG.

Errors in the inputs or the environment are reported on stderr with exit
code 2; exit code 0 means the output file was written.  Progress goes to
stderr.  Output files are written atomically (temporary file + rename).

Install the dependencies with ``pip install -r bench/requirements.txt``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import importlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

#: The TPC-H tables, smallest first.
TPCH_TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
TPCH_QUERY_COUNT = 22

#: Floats compare equal within this relative or absolute tolerance. The absolute one is
#: one unit in the sixth decimal: Lake and DataFusion return decimal averages at scale 6
#: (rounded), where DuckDB returns doubles; anything looser would hide wrong answers in
#: TPC-H's small columns (q1 avg_disc is about 0.05).
REL_TOLERANCE = 1e-6
ABS_TOLERANCE = 1e-6

#: Longest error message kept in the JSON.
MAX_MESSAGE_CHARS = 1000


class PeerError(Exception):
    """A problem with the inputs or the environment; reported with exit code 2."""


# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------


def require(module: str, package: str | None = None) -> Any:
    """Import ``module``, or fail with a message naming the pip package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PeerError(
            f"Python module {module!r} is not importable ({exc}); "
            f"install {package or module!r} (pip install -r bench/requirements.txt)"
        ) from exc


def write_json_atomically(path: Path, document: dict) -> None:
    """Write ``document`` as JSON to ``path`` via a temporary file and a rename."""
    text = json.dumps(document, indent=2, allow_nan=False) + "\n"
    write_atomically(path, text.encode())


def write_atomically(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` so readers never see a partial file."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise PeerError(f"output directory {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates the file 0600; results are for people to read, so use the
        # mode a plain open() would have given (0666 less the umask).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def check_output_dir(path: Path) -> None:
    """Fail early, before any work, if ``path`` cannot be written for lack of a directory."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise PeerError(f"--out: directory {directory} does not exist")


def describe_error(exc: BaseException) -> str:
    """A one-line, bounded description of an exception for the JSON output."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = f"{type(exc).__name__}: {text}"
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 3] + "..."
    return text


def progress(message: str) -> None:
    """One progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# tpch: DuckDB vs Lake, with answer checking
# ---------------------------------------------------------------------------


def parse_only(only: str | None) -> list[int]:
    """Query numbers selected by ``--only`` ("1,6,14"), or all 22."""
    if not only:
        return list(range(1, TPCH_QUERY_COUNT + 1))
    numbers: list[int] = []
    for part in only.split(","):
        part = part.strip().lower().removeprefix("q")
        if not part:
            continue
        if not part.isdigit() or not 1 <= int(part) <= TPCH_QUERY_COUNT:
            raise PeerError(f"--only: {part!r} is not a TPC-H query number (1..{TPCH_QUERY_COUNT})")
        if int(part) not in numbers:
            numbers.append(int(part))
    if not numbers:
        raise PeerError("--only selects no queries")
    return sorted(numbers)


def load_queries(directory: Path, numbers: list[int]) -> dict[int, str]:
    """Read ``directory/q{N}.sql`` for each N, without a trailing semicolon."""
    if not directory.is_dir():
        raise PeerError(f"--queries: {directory} is not a directory")
    queries: dict[int, str] = {}
    for n in numbers:
        path = directory / f"q{n}.sql"
        try:
            text = path.read_text()
        except OSError as exc:
            raise PeerError(f"cannot read query file {path}: {exc.strerror or exc}") from exc
        text = text.strip()
        while text.endswith(";"):
            text = text[:-1].rstrip()
        if not text:
            raise PeerError(f"query file {path} is empty")
        queries[n] = text
    return queries


def sql_string(value: str) -> str:
    """``value`` as a SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def open_duckdb(parquet_dir: Path) -> tuple[Any, Callable[[str], Any]]:
    """An in-memory DuckDB connection with one view per TPC-H table, and a runner.

    The runner executes a query and fetches the whole result as an Arrow table.
    It uses ``con.sql(q).to_arrow_table()`` where available (DuckDB >= 1.4):
    DuckDB 2 warns that Arrow output from a DB-API result
    (``con.execute(q).arrow()``) makes an extra copy of the rows, which would
    handicap DuckDB.  Older releases fall back to ``fetch_arrow_table()``.
    """
    duckdb = require("duckdb")
    pa = require("pyarrow")
    if not parquet_dir.is_dir():
        raise PeerError(f"--parquet: {parquet_dir} is not a directory")
    missing = [t for t in TPCH_TABLES if not (parquet_dir / f"{t}.parquet").is_file()]
    if missing:
        raise PeerError(
            f"--parquet: {parquet_dir} lacks " + ", ".join(f"{t}.parquet" for t in missing)
        )
    con = duckdb.connect(":memory:")
    for table in TPCH_TABLES:
        path = str((parquet_dir / f"{table}.parquet").resolve())
        try:
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet({sql_string(path)})")
        except Exception as exc:
            raise PeerError(f"DuckDB cannot read {path}: {describe_error(exc)}") from exc

    probe = con.sql("SELECT 1")
    fetch_name = "to_arrow_table" if hasattr(probe, "to_arrow_table") else "fetch_arrow_table"

    def run(sql: str) -> Any:
        relation = con.sql(sql)
        if relation is None:
            raise RuntimeError("the statement returned no result set")
        result = getattr(relation, fetch_name)()
        if not isinstance(result, pa.Table):  # a RecordBatchReader on some releases
            result = result.read_all()
        return result

    return con, run


def lake_uri(endpoint: str) -> str:
    """The ADBC Flight SQL URI for a Lake endpoint.

    Lake's own tools spell endpoints ``http://host:port``, but the ADBC driver
    treats ``http://`` as TLS; map it to ``grpc+tcp://`` (and ``https://`` to
    ``grpc+tls://``, a bare ``host:port`` to ``grpc+tcp://``).
    """
    if endpoint.startswith("http://"):
        return "grpc+tcp://" + endpoint[len("http://"):]
    if endpoint.startswith("https://"):
        return "grpc+tls://" + endpoint[len("https://"):]
    if "://" not in endpoint:
        return "grpc+tcp://" + endpoint
    return endpoint


def open_flight_sql(endpoint: str, label: str = "Lake", wait_seconds: float = 0.0) -> tuple[Any, Callable[[str], Any]]:
    """An ADBC Flight SQL connection to ``endpoint``, checked with ``SELECT 1`` (retried for
    up to ``wait_seconds`` while the server starts), and a runner."""
    flightsql = require("adbc_driver_flightsql.dbapi", "adbc-driver-flightsql")
    uri = lake_uri(endpoint)
    # Flight SQL has no transactions; the driver warns that it cannot disable
    # autocommit on every connect.  Irrelevant for read-only queries.
    warnings.filterwarnings("ignore", message="Cannot disable autocommit")
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            con = flightsql.connect(uri)
            cur = con.cursor()
            cur.execute("SELECT 1")
            cur.fetch_arrow_table()
            break
        except Exception as exc:
            if time.monotonic() >= deadline:
                raise PeerError(f"cannot query {label} at {uri}: {describe_error(exc)}") from exc
            time.sleep(0.2)

    def run(sql: str) -> Any:
        cur.execute(sql)
        return cur.fetch_arrow_table()

    return con, run


@dataclass
class Contender:
    """One engine's warm-up answer, timings and first error for one query."""

    label: str
    run: Callable[[str], Any]
    answer: Any = None
    seconds: list[float] = field(default_factory=list)
    error: str | None = None

    def warm_up(self, sql: str) -> None:
        """Run once untimed and keep the answer for checking."""
        try:
            self.answer = self.run(sql)
        except Exception as exc:
            self.error = describe_error(exc)

    def timed_run(self, sql: str) -> None:
        """Run once and record the wall time; after an error the engine sits out."""
        if self.error is not None:
            return
        start = time.perf_counter()
        try:
            self.run(sql)
        except Exception as exc:
            self.error = describe_error(exc)
            return
        self.seconds.append(time.perf_counter() - start)

    def median_ms(self) -> float | None:
        """Median of the timed runs in milliseconds; None after an error."""
        if self.error is not None or not self.seconds:
            return None
        return statistics.median(self.seconds) * 1000.0


def bench_query(
    name: str,
    sql: str,
    duck: Contender,
    lake: Contender,
    runs: int,
    datafusion_answer: Path | None,
    flight_peer: Contender | None = None,
) -> dict:
    """Warm up every engine, time ``runs`` rounds (each engine once per round, the order
    rotating so none always runs right after another), check the answers."""
    contenders = [lake, duck] + ([flight_peer] if flight_peer else [])
    for contender in contenders:
        contender.warm_up(sql)
    for i in range(runs):
        shift = i % len(contenders)
        for contender in contenders[shift:] + contenders[:shift]:
            contender.timed_run(sql)

    entry: dict[str, Any] = {
        "duckdb_ms": duck.median_ms(),
        "lake_ms": lake.median_ms(),
        "rows": None,
        "lake_matches_duckdb": False,
        "datafusion_matches_duckdb": None,
        "mismatch": None,
    }
    if duck.answer is not None:
        entry["rows"] = duck.answer.num_rows
    elif lake.answer is not None:
        entry["rows"] = lake.answer.num_rows

    mismatches: list[str] = []
    if lake.answer is not None and duck.answer is not None:
        problem = compare_answers(name, "lake", lake.answer, "duckdb", duck.answer) or order_problem(
            name, "lake", lake.answer, sql
        )
        entry["lake_matches_duckdb"] = problem is None
        if problem:
            mismatches.append(problem)

    if datafusion_answer is not None and datafusion_answer.is_file():
        problem = check_datafusion(name, sql, datafusion_answer, duck)
        entry["datafusion_matches_duckdb"] = None if duck.answer is None else problem is None
        if problem:
            mismatches.append(problem)

    if flight_peer is not None:
        entry["flight_peer_ms"] = flight_peer.median_ms()
        if flight_peer.error is not None:
            entry["flight_peer_error"] = flight_peer.error
        elif flight_peer.answer is not None and duck.answer is not None:
            problem = compare_answers(
                name, "flight peer", flight_peer.answer, "duckdb", duck.answer
            ) or order_problem(name, "flight peer", flight_peer.answer, sql)
            entry["flight_peer_matches_duckdb"] = problem is None
            if problem:
                mismatches.append(problem)

    entry["mismatch"] = "; ".join(mismatches) or None
    if lake.error is not None:
        entry["lake_error"] = lake.error
    if duck.error is not None:
        entry["duckdb_error"] = duck.error
    return entry


def check_datafusion(name: str, sql: str, path: Path, duck: Contender) -> str | None:
    """Compare DataFusion's answer (an Arrow IPC file) with DuckDB's, and its row order with
    the query's ORDER BY; a problem or None."""
    ipc = require("pyarrow.ipc", "pyarrow")
    try:
        with ipc.open_file(path) as reader:
            answer = reader.read_all()
    except Exception as exc:
        return f"{name}: cannot read DataFusion answer {path}: {describe_error(exc)}"
    if duck.answer is None:
        return None
    return compare_answers(name, "datafusion", answer, "duckdb", duck.answer) or order_problem(
        name, "datafusion", answer, sql
    )


def cmd_tpch(args: argparse.Namespace) -> int:
    """The ``tpch`` subcommand."""
    if args.runs < 1:
        raise PeerError(f"--runs must be at least 1, not {args.runs}")
    numbers = parse_only(args.only)
    queries = load_queries(Path(args.queries), numbers)
    answers = Path(args.answers) if args.answers else None
    if answers is not None and not answers.is_dir():
        raise PeerError(f"--answers: {answers} is not a directory")
    out = Path(args.out)
    check_output_dir(out)

    duckdb = require("duckdb")
    _duck_con, duck_run = open_duckdb(Path(args.parquet))
    _lake_con, lake_run = open_flight_sql(args.endpoint)
    peer_run = None
    if args.flight_peer:
        _peer_con, peer_run = open_flight_sql(args.flight_peer, "the Flight SQL peer", wait_seconds=60)

    results: dict[str, dict] = {}
    for n, sql in queries.items():
        name = f"q{n}"
        datafusion_answer = answers / "datafusion" / f"{name}.arrow" if answers else None
        duck = Contender("duckdb", duck_run)
        lake = Contender("lake", lake_run)
        peer = Contender("flight_peer", peer_run) if peer_run else None
        entry = bench_query(name, sql, duck, lake, args.runs, datafusion_answer, peer)
        results[name] = entry
        progress(tpch_progress_line(name, entry))

    write_json_atomically(
        out, {"runs": args.runs, "duckdb_version": duckdb.__version__, "queries": results}
    )
    matched = sum(1 for e in results.values() if e["lake_matches_duckdb"])
    progress(f"tpch: Lake matched DuckDB on {matched}/{len(results)} queries; wrote {out}")
    return 0


def tpch_progress_line(name: str, entry: dict) -> str:
    """``q1: lake 12.3 ms  duckdb 4.5 ms  (2.73x)  answers match``."""

    def ms(value: float | None, error: str | None) -> str:
        return "ERROR" if error else ("-" if value is None else f"{value:.1f} ms")

    lake_ms, duck_ms = entry["lake_ms"], entry["duckdb_ms"]
    line = (
        f"{name}: lake {ms(lake_ms, entry.get('lake_error'))}"
        f"  duckdb {ms(duck_ms, entry.get('duckdb_error'))}"
    )
    if lake_ms and duck_ms:
        line += f"  ({lake_ms / duck_ms:.2f}x)"
    if "flight_peer_ms" in entry:
        line += f"  flight peer {ms(entry['flight_peer_ms'], entry.get('flight_peer_error'))}"
    line += f"  rows {entry['rows']}"
    if entry.get("lake_error"):
        line += f"\n  lake error: {entry['lake_error']}"
    if entry.get("duckdb_error"):
        line += f"\n  duckdb error: {entry['duckdb_error']}"
    if entry.get("flight_peer_error"):
        line += f"\n  flight peer error: {entry['flight_peer_error']}"
    if entry["mismatch"]:
        line += f"\n  MISMATCH: {entry['mismatch']}"
    elif entry["lake_matches_duckdb"]:
        line += "  answers match"
    return line


# -- answer comparison -------------------------------------------------------


def normalize(value: Any) -> Any:
    """A plain Python value comparable across engines.

    Decimals become floats, dates and timestamps ISO strings, strings lose
    trailing spaces (CHAR padding); None stays None.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, str):
        return value.rstrip(" ")
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return value


def answer_rows(table: Any) -> list[tuple]:
    """The rows of an Arrow table as normalized tuples, columns by position."""
    columns = [[normalize(v) for v in column.to_pylist()] for column in table.columns]
    return list(zip(*columns)) if columns else [()] * table.num_rows


def sort_key(row: tuple) -> tuple:
    """An order for rows of mixed values, None first.

    Floats are rounded to 6 significant digits so values equal within the
    comparison tolerance usually sort alike; integers stay exact.
    """
    key = []
    for value in row:
        if value is None:
            key.append((0, 0))
        elif isinstance(value, bool):
            key.append((1, int(value)))
        elif isinstance(value, float):
            key.append((1, float(f"{value:.6g}") if math.isfinite(value) else value))
        elif isinstance(value, int):
            key.append((1, value))
        elif isinstance(value, str):
            key.append((2, value))
        else:
            key.append((3, repr(value)))
    return tuple(key)


def values_equal(a: Any, b: Any) -> bool:
    """Equality with a float tolerance (relative 1e-6 or absolute 0.01)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOLERANCE, abs_tol=ABS_TOLERANCE)
    return a == b


def compare_answers(query: str, left_label: str, left: Any, right_label: str, right: Any) -> str | None:
    """None when two Arrow answers agree, else a short description of the first difference.

    Columns are compared by position (engines differ in the case of names and
    aliases), and rows as sorted multisets: TPC-H's ORDER BYs leave ties, whose
    order is up to each engine.
    """
    if left.num_columns != right.num_columns:
        return (
            f"{query}: {left_label} has {left.num_columns} columns {left.column_names}, "
            f"{right_label} has {right.num_columns} {right.column_names}"
        )
    if left.num_rows != right.num_rows:
        return f"{query}: {left_label} has {left.num_rows} rows, {right_label} has {right.num_rows}"
    left_rows = sorted(answer_rows(left), key=sort_key)
    right_rows = sorted(answer_rows(right), key=sort_key)
    for i, (left_row, right_row) in enumerate(zip(left_rows, right_rows)):
        for j, (a, b) in enumerate(zip(left_row, right_row)):
            if not values_equal(a, b):
                return (
                    f"{query}: sorted row {i}, column {j} ({left.column_names[j]}): "
                    f"{left_label}={a!r} {right_label}={b!r}"
                )
    return None


def order_by_keys(sql: str) -> list[tuple[str, bool]]:
    """The outermost ORDER BY of ``sql`` as (output column name, descending) pairs.

    Empty when the query has none, or when an item is not a plain column name
    (then the order cannot be checked by name). TPC-H's ORDER BYs name output
    columns.
    """
    text = re.sub(r"--[^\n]*", " ", sql).lower()
    at = text.rfind("order by")
    if at < 0:
        return []
    tail = text[at + len("order by"):]
    if tail.count(")") > tail.count("("):
        return []  # inside a subquery or a window
    tail = re.split(r"\blimit\b|;", tail)[0]
    keys = []
    for item in tail.split(","):
        words = item.split()
        if not words or len(words) > 2 or not re.fullmatch(r"[a-z_][a-z0-9_]*", words[0]):
            return []
        if len(words) == 2 and words[1] not in ("asc", "desc"):
            return []
        keys.append((words[0], len(words) == 2 and words[1] == "desc"))
    return keys


def order_problem(query: str, label: str, answer: Any, sql: str) -> str | None:
    """None when ``answer``'s rows come in the order its ORDER BY asks for, else the first
    pair out of order. Values equal within the comparison tolerance are ties, whose order
    is the engine's."""
    keys = order_by_keys(sql)
    names = [n.lower() for n in answer.column_names]
    if not keys or any(k not in names for k, _ in keys):
        return None
    columns = [([normalize(v) for v in answer.column(names.index(k)).to_pylist()], desc) for k, desc in keys]
    for i in range(1, answer.num_rows):
        for values, desc in columns:
            a, b = values[i - 1], values[i]
            if values_equal(a, b):
                continue
            # NULLs sort last ascending, first descending (PostgreSQL's and DuckDB's default).
            if a is None or b is None:
                in_order = (b is None) != desc
            else:
                in_order = (a > b) if desc else (a < b)
            if not in_order:
                return f"{query}: {label}'s rows {i - 1} and {i} are out of ORDER BY order ({a!r} then {b!r})"
            break
    return None


# ---------------------------------------------------------------------------
# ingest: the pylance baseline
# ---------------------------------------------------------------------------


#: What a Lance dataset directory holds (also after an interrupted write).
LANCE_DATASET_ENTRIES = frozenset({"_versions", "_transactions", "_indices", "_deletions", "_refs", "data"})


def prepare_dataset_dir(directory: Path) -> None:
    """Remove a previous dataset at ``directory``, refusing to delete anything else."""
    if not directory.exists():
        return
    if not directory.is_dir():
        raise PeerError(f"--dir: {directory} exists and is not a directory")
    foreign = sorted(e.name for e in directory.iterdir() if e.name not in LANCE_DATASET_ENTRIES)
    if foreign:
        raise PeerError(
            f"--dir: {directory} holds {', '.join(foreign[:5])}, so it is not a Lance dataset; "
            "refusing to delete it"
        )
    shutil.rmtree(directory)


def cmd_ingest(args: argparse.Namespace) -> int:
    """The ``ingest`` subcommand."""
    pa = require("pyarrow")
    pq = require("pyarrow.parquet", "pyarrow")
    lance = require("lance", "pylance")
    if args.chunk_rows < 1:
        raise PeerError(f"--chunk-rows must be at least 1, not {args.chunk_rows}")
    source = Path(args.parquet)
    directory = Path(args.dir)
    out = Path(args.out)
    check_output_dir(out)

    try:
        table = pq.read_table(source)
    except Exception as exc:
        raise PeerError(f"cannot read Parquet file {source}: {describe_error(exc)}") from exc
    rows = table.num_rows
    if rows == 0:
        raise PeerError(f"{source} has no rows")
    try:
        # One contiguous batch, so every chunk below is a zero-copy slice.
        table = table.combine_chunks()
    except pa.ArrowInvalid:
        pass  # e.g. a string column over 2 GiB; slices of the chunked table do as well
    chunks = [table.slice(offset, args.chunk_rows) for offset in range(0, rows, args.chunk_rows)]
    prepare_dataset_dir(directory)
    uri = str(directory)

    progress(f"ingest: writing {rows} rows in {len(chunks)} commit(s) of up to {args.chunk_rows} rows")
    start = time.perf_counter()
    for i, chunk in enumerate(chunks):
        lance.write_dataset(chunk, uri, mode="create" if i == 0 else "append")
    seconds = time.perf_counter() - start

    written = lance.dataset(uri).count_rows()
    if written != rows:
        raise PeerError(f"the Lance dataset at {uri} has {written} rows, expected {rows}")
    result = {
        "rows": rows,
        "chunks": len(chunks),
        "seconds": seconds,
        "rows_per_s": rows / seconds,
        "pylance_version": lance.__version__,
    }
    write_json_atomically(out, result)
    progress(f"ingest: {rows} rows in {seconds:.2f} s = {rows / seconds:,.0f} rows/s; wrote {out}")
    return 0


# ---------------------------------------------------------------------------
# chart: results.json as one PNG
# ---------------------------------------------------------------------------

LAKE_COLOR = "#1f77b4"
DUCKDB_COLOR = "#ff7f0e"
DATAFUSION_COLOR = "#2ca02c"
PEER_COLOR = "#7f7f7f"
MISMATCH_COLOR = "#d62728"


def number(value: Any) -> float | None:
    """``value`` as a finite float, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def ratio_text(ratio: float | None) -> str:
    """``2.31x``, or ``n/a``."""
    return "n/a" if ratio is None else f"{ratio:.2f}x"


def query_order(name: str) -> tuple:
    """Sort "q2" before "q10"."""
    match = re.fullmatch(r"[qQ](\d+)", name)
    return (0, int(match.group(1)), "") if match else (1, 0, name)


def empty_panel(ax: Any, title: str, message: str) -> None:
    """A panel saying its section is missing."""
    ax.set_title(title, fontsize=11)
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="#555555",
            transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def label_bars(ax: Any, bars: Any, fmt: Callable[[float], str]) -> None:
    """Write each bar's value above it."""
    for bar in bars:
        height = bar.get_height()
        if height and math.isfinite(height):
            ax.annotate(fmt(height), (bar.get_x() + bar.get_width() / 2, height),
                        xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                        fontsize=9)


def draw_tpch(ax: Any, tpch: dict | None, scale: Any) -> None:
    """(a) Per-query times, grouped bars Lake / DuckDB / DataFusion, log scale."""
    title = "TPC-H per-query time"
    queries = (tpch or {}).get("queries") or {}
    if not queries:
        empty_panel(ax, title, "no TPC-H results")
        return
    names = sorted(queries, key=query_order)
    series = [("Lake", "lake_ms", LAKE_COLOR), ("DuckDB", "duckdb_ms", DUCKDB_COLOR),
              ("DataFusion", "datafusion_ms", DATAFUSION_COLOR)]
    series = [s for s in series if any(number(queries[q].get(s[1])) for q in names)]
    width = 0.8 / max(len(series), 1)
    values: list[float] = []
    for k, (label, key, color) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(names))]
        ys = [number(queries[q].get(key)) or math.nan for q in names]
        values += [y for y in ys if y > 0]
        ax.bar(xs, ys, width, label=label, color=color)
    ax.set_yscale("log")
    if values:
        # Head room above the tallest bar for the legend.
        ax.set_ylim(min(values) / 1.5, max(values) * 8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=60, fontsize=8)
    mismatched = [q for q in names if queries[q].get("answer_matches_duckdb") is False]
    for tick, q in zip(ax.get_xticklabels(), names):
        if q in mismatched:
            tick.set_color(MISMATCH_COLOR)
            tick.set_fontweight("bold")
    ax.set_ylabel("median time (ms, log scale)")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", ncol=len(series))

    def total_ratio(ratio_key: str, peer_key: str) -> float | None:
        ratio = number(tpch.get(ratio_key))
        lake, peer = number(tpch.get("total_lake_ms")), number(tpch.get(peer_key))
        if ratio is None and lake is not None and peer:
            ratio = lake / peer
        return ratio

    parts = []
    if any(s[1] == "duckdb_ms" for s in series):
        parts.append(f"{ratio_text(total_ratio('total_ratio_vs_duckdb', 'total_duckdb_ms'))} DuckDB's")
    if any(s[1] == "datafusion_ms" for s in series):
        parts.append(
            f"{ratio_text(total_ratio('total_ratio_vs_datafusion', 'total_datafusion_ms'))} DataFusion's"
        )
    heading = f"TPC-H SF {scale}" if scale is not None else "TPC-H"
    if tpch.get("runs") is not None:
        runs = tpch["runs"]
        heading += f", median of {runs} run{'' if runs == 1 else 's'}"
    subtitle = "Lake's total time = " + ", ".join(parts) + " (lower is better)" if parts else ""
    if mismatched:
        subtitle += f"\nanswers differ from DuckDB: {', '.join(mismatched)} (red)"
    elif tpch.get("all_answers_match") is True:
        subtitle += "  (all answers match DuckDB)"
    ax.set_title(f"{heading}\n{subtitle}".strip(), fontsize=11)


def draw_ingest(ax: Any, ingest: dict | None) -> None:
    """(b) Ingest rows/s, Lake SDK vs pylance."""
    title = "Ingest throughput"
    lake, peer = number((ingest or {}).get("lake_rows_per_s")), number((ingest or {}).get("pylance_rows_per_s"))
    if lake is None and peer is None:
        empty_panel(ax, title, "no ingest results")
        return
    labels, values, colors = [], [], []
    for label, value, color in (("Lake SDK", lake, LAKE_COLOR), ("pylance", peer, PEER_COLOR)):
        if value is not None:
            labels.append(label)
            values.append(value)
            colors.append(color)
    bars = ax.bar(labels, values, color=colors, width=0.5)
    label_bars(ax, bars, lambda v: f"{v:,.0f}")
    ax.set_ylabel("rows / s")
    ax.set_ylim(0, max(values) * 1.18)
    ax.yaxis.set_major_formatter(thousands_formatter())
    ratio = number(ingest.get("ratio_vs_pylance"))
    if ratio is None and lake is not None and peer:
        ratio = lake / peer
    rows = ingest.get("rows")
    heading = f"Ingest of {rows:,} rows" if isinstance(rows, int) else title
    ax.set_title(f"{heading}\nLake = {ratio_text(ratio)} pylance's rows/s", fontsize=11)
    ax.grid(axis="y", alpha=0.3)


def draw_commits(ax: Any, commits: dict | None) -> None:
    """(c) Commits/s against concurrent writers, with synced RocksDB writes/s as a line."""
    title = "Commit throughput (Metasrv on RocksDB)"
    commits = commits or {}
    points = [p for p in commits.get("by_writers") or []
              if isinstance(p, dict) and number(p.get("commits_per_s")) is not None]
    synced = number(commits.get("synced_writes_per_s"))
    if not points and synced is None:
        empty_panel(ax, title, "no commit results")
        return
    points.sort(key=lambda p: p.get("writers") or 0)
    labels = [f"{p.get('writers')} writer{'s' if p.get('writers') != 1 else ''}" for p in points]
    values = [number(p["commits_per_s"]) for p in points]
    if points:
        bars = ax.bar(labels, values, color=LAKE_COLOR, width=0.55, label="Lake commits/s")
        for bar, p in zip(bars, points):
            p50, p99 = number(p.get("p50_ms")), number(p.get("p99_ms"))
            text = f"{bar.get_height():,.0f}/s"
            if p50 is not None and p99 is not None:
                text += f"\np50 {p50:.1f} / p99 {p99:.1f} ms"
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                        fontsize=8)
    if synced is not None:
        ax.axhline(synced, color=MISMATCH_COLOR, linestyle="--",
                   label=f"synced RocksDB writes/s ({synced:,.0f})")
    top = max(values + ([synced] if synced is not None else []))
    ax.set_ylim(0, top * 1.3)
    ax.set_ylabel("commits / s")
    ax.yaxis.set_major_formatter(thousands_formatter())
    ax.legend(fontsize=9, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{title}\ncommits/s by concurrent writers", fontsize=11)


def draw_point_reads(ax: Any, reads: dict | None) -> None:
    """(d) Point-read latency p50 / p99, Metasrv round trips per query in the title."""
    title = "Point reads"
    reads = reads or {}
    p50, p99 = number(reads.get("p50_ms")), number(reads.get("p99_ms"))
    if p50 is None and p99 is None:
        empty_panel(ax, title, "no point-read results")
        return
    labels = [label for label, v in (("p50", p50), ("p99", p99)) if v is not None]
    values = [v for v in (p50, p99) if v is not None]
    bars = ax.bar(labels, values, color=[LAKE_COLOR, "#aec7e8"][: len(values)], width=0.5)
    label_bars(ax, bars, lambda v: f"{v:.2f} ms")
    ax.set_ylim(0, max(values) * 1.18)
    ax.set_ylabel("latency (ms)")
    ax.grid(axis="y", alpha=0.3)
    details = []
    if isinstance(reads.get("queries"), int):
        details.append(f"{reads['queries']:,} queries")
    trips = number(reads.get("metasrv_round_trips_per_query"))
    if trips is not None:
        details.append(f"{trips:.2f} Metasrv round trips per query")
    ax.set_title(f"{title} latency\n{', '.join(details)}".strip(), fontsize=11)


def thousands_formatter() -> Any:
    """A y-axis formatter writing 12,345."""
    ticker = require("matplotlib.ticker", "matplotlib")
    return ticker.FuncFormatter(lambda v, _pos: f"{v:,.0f}")


def cmd_chart(args: argparse.Namespace) -> int:
    """The ``chart`` subcommand."""
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot", "matplotlib")
    source = Path(args.results)
    out = Path(args.out)
    check_output_dir(out)
    try:
        results = json.loads(source.read_text())
    except OSError as exc:
        raise PeerError(f"cannot read {source}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise PeerError(f"{source} is not valid JSON: {exc}") from exc
    if not isinstance(results, dict):
        raise PeerError(f"{source} does not hold a JSON object")

    def section(name: str) -> dict | None:
        value = results.get(name)
        if value is not None and not isinstance(value, dict):
            raise PeerError(f"{source}: {name!r} is not an object")
        return value

    fig, axes = plt.subplots(2, 2, figsize=(14, 9), dpi=120)
    draw_tpch(axes[0][0], section("tpch"), results.get("scale"))
    draw_ingest(axes[0][1], section("ingest"))
    draw_commits(axes[1][0], section("commits"))
    draw_point_reads(axes[1][1], section("point_reads"))

    heading = "Lake benchmarks"
    if results.get("scale") is not None:
        heading += f" (TPC-H scale factor {results['scale']})"
    rss = number((section("memory") or {}).get("tpch_peak_rss_bytes"))
    if rss is not None:
        heading += f" \u2014 lake serve peak RSS during TPC-H {rss / 2**20:,.0f} MiB"
    fig.suptitle(heading, fontsize=14, fontweight="bold")
    fig.tight_layout(rect=(0, 0, 1, 0.96))

    suffix = out.suffix or ".png"
    with tempfile.TemporaryDirectory(dir=out.parent if str(out.parent) else ".") as tmp:
        scratch = Path(tmp) / f"chart{suffix}"
        fig.savefig(scratch, format="png")
        write_atomically(out, scratch.read_bytes())
    plt.close(fig)
    progress(f"chart: wrote {out}")
    return 0


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


ICEBERG_QUERIES = {
    "count": "SELECT count(*) AS n FROM lineitem",
    "scan_aggregate": (
        "SELECT sum(l_quantity) AS q, sum(l_extendedprice) AS p, sum(l_discount) AS d, "
        "min(l_shipdate) AS first_ship, max(l_receiptdate) AS last_receipt, "
        "count(DISTINCT l_suppkey) AS suppliers, max(length(l_comment)) AS longest_comment FROM lineitem"
    ),
    "q1": (
        "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
        "sum(l_extendedprice) AS sum_base_price, "
        "sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
        "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, "
        "avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, "
        "count(*) AS count_order FROM lineitem "
        "WHERE l_shipdate <= date '1998-12-01' - interval '90' day "
        "GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"
    ),
    "q6": (
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem "
        "WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01' "
        "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
    ),
}


class DuckIceberg:
    """bench/duckdb_iceberg.py in the DuckDB virtualenv, one request per query run."""

    def __init__(self, python: str, metadata_location: str):
        script = Path(__file__).resolve().parent / "duckdb_iceberg.py"
        self.proc = subprocess.Popen([python, str(script), metadata_location], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        ready = self._reply()
        if "ready" not in ready:
            raise PeerError(f"DuckDB iceberg peer did not start: {ready.get('error', ready)}")
        self.version = ready["ready"]

    def _reply(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise PeerError("DuckDB iceberg peer exited")
        return json.loads(line)

    def run(self, sql: str, answer: Path | None = None) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"sql": sql, "answer": str(answer) if answer else None}) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(30)


def duckdb_venv_python(venv: Path) -> str:
    """The DuckDB 1.5.5 virtualenv's interpreter, created from requirements-iceberg.txt if absent."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import duckdb, duckdb_extension_iceberg, duckdb_extension_avro"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return str(python)
    progress(f"iceberg: creating the DuckDB iceberg virtualenv in {venv}")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    requirements = Path(__file__).resolve().parent / "requirements-iceberg.txt"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r",
                    str(requirements)], check=True)
    return str(python)


def cmd_iceberg(args: argparse.Namespace) -> int:
    """The ``iceberg`` subcommand."""
    if args.runs < 1:
        raise PeerError(f"--runs must be at least 1, not {args.runs}")
    out = Path(args.out)
    check_output_dir(out)
    work = Path(args.work)
    if work.exists():
        raise PeerError(f"--work {work} exists; give a new directory")
    work.mkdir(parents=True)
    repo = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(repo / "fixtures" / "iceberg"))
    from make_tables import catalog as sql_catalog
    from rest_catalog import serve

    pq = require("pyarrow.parquet", "pyarrow")
    data = pq.read_table(args.parquet)
    catalog = sql_catalog(work)
    catalog.create_namespace("bench")
    started = time.perf_counter()
    table = catalog.create_table("bench.lineitem", schema=data.schema)
    table.append(data)
    write_seconds = time.perf_counter() - started
    table = catalog.load_table("bench.lineitem")
    rows = data.num_rows
    progress(f"iceberg: pyiceberg wrote {rows} rows in {write_seconds:.1f} s")
    del data

    duck = DuckIceberg(duckdb_venv_python(Path(args.duckdb_venv)), table.metadata_location)
    rest = serve(work, 0, "bench", "bench", None, None)
    env = {**os.environ, "LAKE_ICEBERG_REST_URI": f"http://127.0.0.1:{rest.server_address[1]}",
           "LAKE_ICEBERG_WAREHOUSE": "bench"}
    child = subprocess.Popen([args.lake_bench, "serve", "--data", str(work / "lake")], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        first = child.stdout.readline().split()
        if len(first) != 2 or first[0] != "endpoint":
            raise PeerError(f"lake-bench serve did not announce its endpoint: {first}")
        lake_con, lake_run = open_flight_sql(first[1])
        results: dict[str, dict] = {}
        for name, sql in ICEBERG_QUERIES.items():
            lake_sql = sql.replace("FROM lineitem", "FROM iceberg.bench.lineitem")
            entry: dict[str, Any] = {"lake_ms": None, "duckdb_ms": None, "lake_matches_duckdb": False,
                                     "mismatch": None}
            answer_path = work / f"duckdb-{name}.parquet"
            lake_answer = duck_answer = None
            try:
                lake_answer = lake_run(lake_sql)
            except Exception as exc:
                entry["lake_error"] = describe_error(exc)
            warm = duck.run(sql, answer_path)
            if "error" in warm:
                entry["duckdb_error"] = warm["error"]
            else:
                duck_answer = pq.read_table(answer_path)
            lake_s: list[float] = []
            duck_s: list[float] = []
            for i in range(args.runs):
                for who in (("lake", "duck") if i % 2 == 0 else ("duck", "lake")):
                    if who == "lake" and "lake_error" not in entry:
                        t = time.perf_counter()
                        lake_run(lake_sql)
                        lake_s.append(time.perf_counter() - t)
                    elif who == "duck" and "duckdb_error" not in entry:
                        reply = duck.run(sql)
                        if "seconds" in reply:
                            duck_s.append(reply["seconds"])
            if lake_s:
                entry["lake_ms"] = statistics.median(lake_s) * 1000.0
            if duck_s:
                entry["duckdb_ms"] = statistics.median(duck_s) * 1000.0
            if lake_answer is not None and duck_answer is not None:
                problem = compare_answers(name, "lake", lake_answer, "duckdb", duck_answer) or order_problem(
                    name, "lake", lake_answer, lake_sql
                )
                entry["lake_matches_duckdb"] = problem is None
                entry["mismatch"] = problem
            results[name] = entry
            ratio = (entry["lake_ms"] / entry["duckdb_ms"]) if entry["lake_ms"] and entry["duckdb_ms"] else None
            progress(f"iceberg {name}: lake {entry['lake_ms'] or 0:.1f} ms  "
                     f"duckdb {entry['duckdb_ms'] or 0:.1f} ms  ({ratio_text(ratio)})  "
                     f"{'answers match' if entry['lake_matches_duckdb'] else entry['mismatch']}")
        lake_con.close()
    finally:
        if child.stdin:
            child.stdin.close()
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
        rest.shutdown()
        duck.close()
    write_json_atomically(out, {"rows": rows, "write_seconds": write_seconds, "duckdb_version": duck.version,
                                "runs": args.runs, "snapshot_id": table.metadata.current_snapshot_id,
                                "queries": results})
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with the three subcommands."""
    parser = argparse.ArgumentParser(
        prog="peers.py",
        description="Peer baselines (DuckDB, pylance) and the results chart for lake-bench.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    tpch = commands.add_parser("tpch", help="time TPC-H on DuckDB and Lake; check answers")
    tpch.add_argument("--endpoint", required=True,
                      help="Lake's Flight SQL endpoint, e.g. grpc://127.0.0.1:50051 "
                           "(http:// is taken to mean plaintext gRPC)")
    tpch.add_argument("--parquet", required=True, metavar="DIR",
                      help="directory with region.parquet ... lineitem.parquet (the rows Lake holds)")
    tpch.add_argument("--queries", required=True, metavar="DIR", help="directory with q1.sql ... q22.sql")
    tpch.add_argument("--runs", required=True, type=int, metavar="N",
                      help="timed runs per query and engine, after one warm-up")
    tpch.add_argument("--only", metavar="LIST", help="comma-separated query numbers, e.g. 1,6,14")
    tpch.add_argument("--answers", metavar="DIR",
                      help="directory with datafusion/q{N}.arrow (Arrow IPC files) to check too")
    tpch.add_argument("--flight-peer", metavar="ENDPOINT",
                      help="also time the Flight SQL peer (bench/flight-peer) serving the same Parquet "
                           "at ENDPOINT, over the same ADBC driver, and check its answers")
    tpch.add_argument("--out", required=True, metavar="FILE.json", help="where to write the results")
    tpch.set_defaults(func=cmd_tpch)

    ingest = commands.add_parser("ingest", help="time pylance writing a Parquet file in commits of N rows")
    ingest.add_argument("--parquet", required=True, metavar="FILE", help="the Parquet file to ingest")
    ingest.add_argument("--chunk-rows", required=True, type=int, metavar="N", help="rows per commit")
    ingest.add_argument("--dir", required=True, metavar="DIR",
                        help="the Lance dataset to create (a previous dataset there is removed)")
    ingest.add_argument("--out", required=True, metavar="FILE.json", help="where to write the results")
    ingest.set_defaults(func=cmd_ingest)

    iceberg = commands.add_parser("iceberg", help="time Lake's iceberg catalog against DuckDB's Iceberg reader")
    iceberg.add_argument("--parquet", required=True, metavar="FILE", help="lineitem as Parquet")
    iceberg.add_argument("--lake-bench", required=True, metavar="EXE", help="the lake-bench binary (its serve child)")
    iceberg.add_argument("--work", required=True, metavar="DIR", help="new directory for the Iceberg table")
    iceberg.add_argument("--duckdb-venv", required=True, metavar="DIR",
                         help="virtualenv with bench/requirements-iceberg.txt (created if absent)")
    iceberg.add_argument("--runs", type=int, default=3, help="timed runs per query and engine")
    iceberg.add_argument("--out", required=True, metavar="FILE.json", help="where to write the results")
    iceberg.set_defaults(func=cmd_iceberg)

    chart = commands.add_parser("chart", help="draw results.json as a 2x2 PNG")
    chart.add_argument("--results", required=True, metavar="FILE.json", help="lake-bench's results.json")
    chart.add_argument("--out", required=True, metavar="FILE.png", help="where to write the PNG")
    chart.set_defaults(func=cmd_chart)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run a subcommand; exit code 2 on PeerError."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except PeerError as exc:
        print(f"peers.py {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
