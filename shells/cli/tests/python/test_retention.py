"""Retention windows on `lake serve`: time travel reaches the versions kept and names the
oldest kept when asked for more; an append retried with an expired operation id commits
again; a restart keeps what expired expired."""

import shutil
import subprocess
import tempfile

import adbc_driver_flightsql.dbapi as flightsql
import pytest

from conftest import LakeServer, lake_binary, query

WINDOWS = {"LAKE_HISTORY_MAX_VERSIONS": "2", "LAKE_OPERATION_IDS_MAX": "1"}


def count(conn, table, clause=""):
    return query(conn, f"SELECT count(*) AS n FROM {table} {clause}").to_pylist()[0]["n"]


def expired(conn, table, clause):
    with pytest.raises(flightsql.Error) as err:
        count(conn, table, clause)
    return str(err.value)


def check_history(conn):
    # Versions 1 (created, empty) to 4; the window keeps the last two.
    assert count(conn, "ns.tt") == 3
    assert count(conn, "ns.tt", "VERSION AS OF 4") == 3
    assert count(conn, "ns.tt", "VERSION AS OF 3") == 2
    text = expired(conn, "ns.tt", "VERSION AS OF 2")
    assert "version 2 of table lake.ns.tt has expired: the oldest retained version is 3" in text, text
    assert "--history-max-versions" in text, text
    text = expired(conn, "ns.tt", "TIMESTAMP AS OF '1970-01-02 00:00:00'")
    assert "table lake.ns.tt keeps no version as of 1970-01-02 00:00:00.000 UTC: the oldest retained version is 3" in text, text
    assert "older versions expired" in text, text
    # A version never committed is still not found, naming what is kept.
    text = expired(conn, "ns.tt", "VERSION AS OF 9")
    assert "versions are 3 to 4 (1 to 2 expired)" in text, text


def test_time_travel_reaches_the_window_and_an_expired_operation_id_commits_again(tmp_path):
    data_dir = tempfile.mkdtemp(prefix="lake-retention-")
    srv = LakeServer(data_dir, demo=False, env=WINDOWS)
    try:
        with flightsql.connect(srv.uri, autocommit=True) as conn:
            query(conn, "CREATE SCHEMA ns")
            query(conn, "CREATE TABLE ns.tt (x BIGINT)")
            for i in range(3):
                query(conn, f"INSERT INTO ns.tt VALUES ({i})")
            check_history(conn)

            csv = tmp_path / "rows.csv"
            csv.write_text("a\n1\n2\n")
            ingest = lambda op: subprocess.run(
                [lake_binary(), "ingest", "--endpoint", srv.endpoint, "lake.ns.r", str(csv), "--operation-id", op],
                capture_output=True, text=True, timeout=120)
            for op in ["op-1", "op-1"]:
                done = ingest(op)
                assert done.returncode == 0, done.stderr
            assert "replay" in done.stderr, "inside the window: a replay"
            assert count(conn, "ns.r") == 2
            # One operation id is kept per table: op-2 pushes op-1 out of the window ...
            assert ingest("op-2").returncode == 0
            assert count(conn, "ns.r") == 4
            # ... so op-1 sent again is a new append, as the window's documentation says.
            again = ingest("op-1")
            assert again.returncode == 0, again.stderr
            assert "replay" not in again.stderr, again.stderr
            assert count(conn, "ns.r") == 6
        srv.stop()
        # The expiry events replay at start: what expired stays expired.
        srv = LakeServer(data_dir, demo=False, env=WINDOWS)
        with flightsql.connect(srv.uri, autocommit=True) as conn:
            check_history(conn)
    finally:
        srv.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_bad_windows_are_refused_at_start(tmp_path):
    done = subprocess.run([lake_binary(), "serve", "--data-dir", str(tmp_path / "d"), "--listen", "127.0.0.1:0",
                           "--history-max-versions", "0"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "history-max-versions must be at least 1" in done.stderr, done.stderr
