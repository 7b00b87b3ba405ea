"""Fixtures: a real `lake serve --demo` on a free 127.0.0.1 port, and ADBC connections."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pytest

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "scripts"))
from cluster import free_port, lake_binary  # noqa: E402  (one copy, shared with the cluster recipe)


class LakeServer:
    """One `lake serve` process; its stderr is kept for failure messages."""

    def __init__(self, data_dir: str, demo: bool, env: dict | None = None):
        self.data_dir = data_dir
        self.port = free_port()
        self.uri = f"grpc://127.0.0.1:{self.port}"
        self.endpoint = f"http://127.0.0.1:{self.port}"
        args = [lake_binary(), "serve", "--data-dir", data_dir, "--listen", f"127.0.0.1:{self.port}"]
        if demo:
            args.append("--demo")
        self.log: list[str] = []
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                     env={**os.environ, **(env or {})})
        ready = threading.Event()

        def pump():
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line)
                if "lake: ready on" in line:
                    ready.set()

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.time() + 300
        while not ready.wait(0.2):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError("lake serve did not start:\n" + "".join(self.log[-50:]))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def server():
    data_dir = tempfile.mkdtemp(prefix="lake-test-")
    srv = LakeServer(data_dir, demo=True)
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def conn(server):
    with flightsql.connect(server.uri, autocommit=True) as connection:
        yield connection


def query(conn, sql, params=None):
    with conn.cursor() as cur:
        if params is None:
            cur.execute(sql)
        else:
            cur.execute(sql, params)
        return cur.fetch_arrow_table()


@pytest.fixture()
def unique_ns(conn, request):
    """A fresh namespace per test, so tests do not see each other's tables."""
    name = "t_" + "".join(c if c.isalnum() else "_" for c in request.node.name).lower()[:60]
    query(conn, f"CREATE SCHEMA {name}")
    return name


ICEBERG_FIXTURES = REPO / "fixtures" / "iceberg"
ICEBERG_TOKEN = "secret-token"
ICEBERG_CLIENT = ("lake", "lake-secret")


@pytest.fixture(scope="module")
def iceberg_tables(tmp_path_factory):
    """Iceberg tables written by pyiceberg (fixtures/iceberg/make_tables.py): (OUT_DIR,
    expected.json)."""
    out = tmp_path_factory.mktemp("iceberg")
    subprocess.run([sys.executable, str(ICEBERG_FIXTURES / "make_tables.py"), str(out)], check=True, timeout=300)
    return out, json.loads((out / "expected.json").read_text())


@pytest.fixture(scope="module")
def iceberg_rest(iceberg_tables):
    """The fixture REST catalog over `iceberg_tables` (bearer token and OAuth2 client
    credentials required), as its base URI."""
    sys.path.insert(0, str(ICEBERG_FIXTURES))
    from rest_catalog import serve

    out, _ = iceberg_tables
    server = serve(out, 0, "fixtures", "fixtures", ICEBERG_TOKEN, ICEBERG_CLIENT)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
