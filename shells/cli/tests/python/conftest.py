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
import adbc_driver_manager
import pyarrow.flight
import pytest

REPO = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "scripts"))
from cluster import free_port, lake_binary  # noqa: E402  (one copy, shared with the cluster recipe)


# Every error text the client libraries build from a server's answer during the session
# (ADBC's Error, pyarrow's FlightError and ArrowException, however a test catches them), for
# the check that
# no client ever reads a server-side path (test_robustness.py, run last).
CLIENT_ERRORS: list[str] = []


def _exception_classes(roots):
    seen, todo = [], list(roots)
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.append(cls)
            todo.extend(cls.__subclasses__())
    return seen


def _record_client_errors():
    # Every subclass too: pyarrow's ArrowInvalid inherits ValueError's __init__ first.
    roots = (adbc_driver_manager.Error, pyarrow.flight.FlightError, pyarrow.lib.ArrowException)
    for cls in _exception_classes(roots):
        original = cls.__init__

        def init(self, *args, _original=original, **kwargs):
            if args:
                CLIENT_ERRORS.append(str(args[0]))
            _original(self, *args, **kwargs)

        cls.__init__ = init


_record_client_errors()

LAST = "test_no_error_text_a_client_read_names_a_server_path"


def pytest_collection_modifyitems(items):
    """The error-text check runs after every other test, over what they provoked."""
    items.sort(key=lambda item: item.name == LAST)


def race_on_a_new_table(uris: list[str], table: str, clients: int = 6, inserts: int = 10) -> list:
    """`clients` connections (spread over `uris`) start together, each runs `CREATE TABLE IF
    NOT EXISTS table (w BIGINT, i BIGINT)` and then `inserts` INSERTs of (w, i); returns the
    errors they got."""
    errors: list = []
    start = threading.Barrier(clients)

    def run(w):
        try:
            with flightsql.connect(uris[w % len(uris)], autocommit=True) as c:
                start.wait(60)
                query(c, f"CREATE TABLE IF NOT EXISTS {table} (w BIGINT, i BIGINT)")
                for i in range(inserts):
                    query(c, f"INSERT INTO {table} VALUES ({w}, {i})")
        except Exception as e:  # noqa: BLE001 - returned to the test, which asserts on them
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return errors


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
