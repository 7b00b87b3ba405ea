"""Differential SQL suite: every `sql/*.slt` file runs against Lake and against DuckDB (the
oracle) on the same rows, once on native Lake tables and once on Iceberg tables written by
pyiceberg and read through the `iceberg` catalog; then seeded random cases. The file format,
the comparison rules and the generator are documented in differential.py.

    python3 -m pytest -q shells/cli/tests/python/test_differential.py
    python3 -m pytest -q shells/cli/tests/python/test_differential.py -k nulls
    LAKE_DIFF_SEED=123 LAKE_DIFF_CASES=500 python3 -m pytest -q … -k generated
    LAKE_DIFF_REPORT_DIR=/tmp/diff python3 -m pytest -q …   # also writes every report there

A failing test lists every mismatching query of its file (SQL, Lake's rows or error,
DuckDB's rows or error, the pinned rows if any)."""

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

import differential
from conftest import ICEBERG_FIXTURES, ICEBERG_TOKEN, LakeServer

SQL_DIR = Path(__file__).resolve().parent / "sql"
FILES = sorted(SQL_DIR.glob("*.slt"))


def check(report: differential.Report):
    """Prints the summary; fails with every mismatch of the file. With LAKE_DIFF_REPORT_DIR
    set, also writes the full report there (one file per test)."""
    out = os.environ.get("LAKE_DIFF_REPORT_DIR")
    if out:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{report.mode}-{report.name}") + ".txt"
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / name).write_text(report.render() + "\n")
    print(report.summary())
    for note in report.notes:
        print("note:", note)
    for skipped in report.skipped:
        print("skipped:", skipped)
    if report.failures:
        pytest.fail("\n" + report.render(), pytrace=False)


@pytest.fixture(scope="module")
def lake(server):
    connection = differential.Lake(server.uri)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def iceberg(tmp_path_factory):
    """A pyiceberg SQL catalog (sqlite) in a temporary directory, the fixture REST catalog
    serving it, and a `lake serve` whose `iceberg` catalog is that REST catalog: yields
    (Lake connection, IcebergTarget)."""
    sys.path.insert(0, str(ICEBERG_FIXTURES))
    from make_tables import catalog
    from rest_catalog import serve

    out = tmp_path_factory.mktemp("differential-iceberg")
    (out / "warehouse").mkdir()
    target = differential.IcebergTarget(catalog(out))
    rest = serve(out, 0, "fixtures", "fixtures", ICEBERG_TOKEN, None)
    data_dir = tempfile.mkdtemp(prefix="lake-differential-")
    server = LakeServer(data_dir, demo=False, env={
        "LAKE_ICEBERG_REST_URI": f"http://127.0.0.1:{rest.server_address[1]}",
        "LAKE_ICEBERG_WAREHOUSE": "fixtures",
        "LAKE_ICEBERG_TOKEN": ICEBERG_TOKEN,
    })
    connection = differential.Lake(server.uri)
    yield connection, target
    connection.close()
    server.stop()
    rest.shutdown()
    shutil.rmtree(data_dir, ignore_errors=True)


def test_sql_files_are_well_formed_and_own_their_tables():
    assert len(FILES) >= 8, FILES
    owner = {}
    for path in FILES:
        blocks = differential.parse(path.read_text(), path.name)
        assert any(b.kind == "query" for b in blocks), path.name
        for table in differential.table_names(blocks):
            assert table not in owner, f"table {table} is created by both {owner[table]} and {path.name}"
            owner[table] = path.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_sql_file_native(lake, path):
    check(differential.run_file(path, lake))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_sql_file_iceberg(iceberg, path):
    connection, target = iceberg
    check(differential.run_file(path, connection, mode="iceberg", iceberg=target))


SEED = differential.default_seed()
CASES = differential.default_cases()


def test_generated_native(lake):
    print(f"generated cases: seed {SEED}, {CASES} queries; replay: "
          + differential.replay_command(SEED, CASES))
    check(differential.run_generated(SEED, CASES, lake))


def test_generated_iceberg(iceberg):
    connection, target = iceberg
    print(f"generated cases: seed {SEED}, {CASES} queries; replay: "
          + differential.replay_command(SEED, CASES))
    check(differential.run_generated(SEED, CASES, connection, mode="iceberg", iceberg=target))
