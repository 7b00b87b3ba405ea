"""The Metasrv store's durability under damage: a `lake serve` whose RocksDB write-ahead
log was damaged in the middle refuses to start with an error that says so, instead of
serving a registry with holes (RocksDB's default recovery silently dropped every record
after the damage: tables vanished, and the next CREATE TABLE reused a lost table's id)."""

import glob
import os
import adbc_driver_flightsql.dbapi as flightsql
import pytest

from conftest import LakeServer, query


def test_a_damaged_metasrv_log_is_refused_with_a_clear_error(tmp_path):
    data = str(tmp_path / "data")
    srv = LakeServer(data, demo=False)
    try:
        with flightsql.connect(srv.uri, autocommit=True) as conn:
            query(conn, "CREATE SCHEMA durable")
            for i in range(40):
                query(conn, f"CREATE TABLE durable.t{i} (id BIGINT, name VARCHAR)")
    finally:
        # kill -9: nothing is flushed on the way out, the log holds every record.
        srv.proc.kill()
        srv.proc.wait()
    wals = sorted(glob.glob(os.path.join(data, "metasrv", "*.log")), key=os.path.getsize)
    assert wals, os.listdir(os.path.join(data, "metasrv"))
    wal = wals[-1]
    size = os.path.getsize(wal)
    assert size > 8192, f"{wal} holds {size} bytes"
    with open(wal, "r+b") as f:
        f.seek(size // 2)
        f.write(b"\xff" * 256)

    try:
        restarted = LakeServer(data, demo=False, env={"RUST_BACKTRACE": "0", "RUST_LIB_BACKTRACE": "0"})
    except RuntimeError as refused:
        said = str(refused)
        assert "damaged" in said and "backup" in said, said
    else:
        restarted.stop()
        pytest.fail("lake serve started on a store whose log was damaged in the middle")
