"""Loading files of any size: `lake ingest` streams a file into one table version with
bounded memory on client and server, or writes nothing (issue 15 case 10: a 231 MB Parquet
file was refused for exceeding 256 MiB, after an empty table had been created)."""

import socket
import struct
import subprocess
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from conftest import lake_binary, query

# Arrow bytes of the rows written below: 3 M rows of (int64, float64, a 94-byte string),
# over 300 MiB, more than the 256 MiB a request may hold.
ROWS = 3_000_000
ARROW_BYTES_MIN = 300 << 20
# What either process may grow by while the rows pass: well under the rows' size.
GROWTH_MAX = 200 << 20
# The HTTP/2 frame size the Flight SQL server accepts (lake_query::FLIGHT_MAX_FRAME_BYTES):
# a Rust h2 client (the SDK, `lake ingest`) sends a DoPut in frames this large.
MAX_FRAME_BYTES = 1 << 20


def write_parquet(path, rows):
    """Writes the rows in chunks; returns their size as Arrow data, in bytes."""
    rng = np.random.default_rng(7)
    writer, arrow_bytes = None, 0
    for start in range(0, rows, 250_000):
        ids = np.arange(start, min(rows, start + 250_000), dtype=np.int64)
        chunk = pa.table({"id": ids, "v": rng.standard_normal(len(ids)),
                          "s": pa.array([f"row-{i:012d}-{'x' * 77}" for i in ids])})
        if writer is None:
            writer = pq.ParquetWriter(path, chunk.schema)
        writer.write_table(chunk)
        arrow_bytes += chunk.nbytes
    writer.close()
    return arrow_bytes


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except FileNotFoundError:  # the process ended
        pass
    return 0


class PeakRss:
    """Samples a process's resident set every 50 ms until stopped (at most 10 minutes)."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, rss_bytes(pid), threading.Event()
        self.baseline = self.peak
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        deadline = time.time() + 600
        while not self.stop.wait(0.05) and time.time() < deadline:
            self.peak = max(self.peak, rss_bytes(self.pid))

    def growth(self):
        self.stop.set()
        self.thread.join()
        return self.peak - self.baseline


def ingest(server, table, path):
    """Runs `lake ingest`; returns (exit code, stderr, how much the client grew, in bytes,
    from its first sample)."""
    proc = subprocess.Popen([lake_binary(), "ingest", "--endpoint", server.endpoint, table, str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    client = PeakRss(proc.pid)
    stderr = proc.stderr.read()
    proc.wait(600)
    return proc.returncode, stderr, client.growth()


def test_a_file_larger_than_a_request_streams_into_one_version_with_bounded_memory(server, conn, unique_ns, tmp_path):
    path = tmp_path / "big.parquet"
    assert write_parquet(path, ROWS) > ARROW_BYTES_MIN
    server_rss = PeakRss(server.proc.pid)
    code, stderr, client_growth = ingest(server, f"lake.{unique_ns}.big", path)
    server_growth = server_rss.growth()
    assert code == 0, stderr
    assert "3000000 rows" in stderr and "one version" in stderr
    # Created with its rows in one version: version 1 holds them all, there is no version 2.
    got = query(conn, f"SELECT count(*) AS n, count(DISTINCT id) AS ids, max(length(s)) AS len "
                      f"FROM {unique_ns}.big VERSION AS OF 1").to_pylist()
    assert got == [{"n": ROWS, "ids": ROWS, "len": 94}]
    versions = query(conn, f"SELECT count(*) AS n FROM {unique_ns}.big").to_pylist()
    assert versions == [{"n": ROWS}]
    try:
        query(conn, f"SELECT count(*) FROM {unique_ns}.big VERSION AS OF 2")
        raise AssertionError("a second version exists")
    except Exception as e:  # noqa: BLE001 - the refusal is the expected outcome
        assert "no version 2" in str(e), e
    # Neither side held the rows: each grew by far less than their size.
    assert server_growth < GROWTH_MAX, f"server grew by {server_growth >> 20} MiB"
    assert client_growth < GROWTH_MAX, f"client grew by {client_growth >> 20} MiB"
    # The same file again under a new operation id appends it as one more version.
    code, stderr, _ = ingest(server, f"lake.{unique_ns}.big", path)
    assert code == 0, stderr
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.big").to_pylist() == [{"n": 2 * ROWS}]


def test_a_file_that_fails_midway_writes_nothing(server, conn, unique_ns, tmp_path):
    # A CSV whose 30,000th row does not parse as the inferred BIGINT column: the stream
    # fails after thousands of rows went out.
    path = tmp_path / "bad.csv"
    lines = ["id,name"] + [f"{i},n{i}" for i in range(30_000)] + ["not-a-number,x"]
    path.write_text("\n".join(lines) + "\n")
    code, stderr, _ = ingest(server, f"lake.{unique_ns}.bad", path)
    assert code != 0
    assert "reading the file" in stderr, stderr
    tables = [t["table_name"] for s in conn.adbc_get_objects(depth="tables", db_schema_filter=unique_ns)
              .read_all().to_pylist()[0]["catalog_db_schemas"] for t in (s["db_schema_tables"] or [])]
    assert "bad" not in tables, "a failed ingest left its new table behind"
    # Into an existing table: no new version.
    query(conn, f"CREATE TABLE {unique_ns}.kept (id BIGINT, name VARCHAR)")
    code, _, _ = ingest(server, f"lake.{unique_ns}.kept", path)
    assert code != 0
    assert query(conn, f"SELECT count(*) AS n FROM {unique_ns}.kept").to_pylist() == [{"n": 0}]
    try:
        query(conn, f"SELECT count(*) FROM {unique_ns}.kept VERSION AS OF 2")
        raise AssertionError("a failed ingest committed a version")
    except Exception as e:  # noqa: BLE001 - the refusal is the expected outcome
        assert "no version 2" in str(e), e


def server_settings(port):
    """The SETTINGS the server sends first on a new HTTP/2 connection (RFC 9113 §3.4, §6.5),
    as {identifier: value}."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        # The client connection preface: the magic string, then an empty SETTINGS frame
        # (length 0, type 4, no flags, stream 0).
        empty_settings = struct.pack(">I", 0)[1:] + struct.pack(">BBI", 4, 0, 0)
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + empty_settings)

        def read(n):
            data = b""
            while len(data) < n:
                chunk = sock.recv(n - len(data))
                assert chunk, "the server closed the connection"
                data += chunk
            return data

        header = read(9)
        length, kind, flags = int.from_bytes(header[:3], "big"), header[3], header[4]
        assert (kind, flags & 1) == (4, 0), f"the server's first frame is not its SETTINGS: {header!r}"
        payload = read(length)
        return {ident: value for ident, value in struct.iter_unpack(">HI", payload)}


def test_the_server_accepts_frames_of_a_mebibyte_and_rows_sent_in_them_land(server, conn, unique_ns, tmp_path):
    # SETTINGS_MAX_FRAME_SIZE (0x5) is announced: without it a peer may send 16 KiB frames only.
    assert server_settings(server.port).get(0x5) == MAX_FRAME_BYTES
    # `lake ingest` (h2) sends its batches in frames up to that size; rows of long strings
    # make messages of several frames. Every row lands, once, with its values.
    rows = 40_000
    table = pa.table({"id": pa.array(range(rows), pa.int64()),
                      "s": pa.array([f"{i:08d}" + "y" * 500 for i in range(rows)])})
    assert table.nbytes > 8 * MAX_FRAME_BYTES
    path = tmp_path / "frames.parquet"
    pq.write_table(table, path)
    code, stderr, _ = ingest(server, f"lake.{unique_ns}.frames", path)
    assert code == 0, stderr
    got = query(conn, f"SELECT count(*) AS n, count(DISTINCT id) AS ids, sum(id) AS total, "
                      f"min(length(s)) AS shortest, max(length(s)) AS longest, "
                      f"count(*) FILTER (WHERE s = lpad(CAST(id AS VARCHAR), 8, '0') || repeat('y', 500)) AS exact "
                      f"FROM {unique_ns}.frames").to_pylist()
    assert got == [{"n": rows, "ids": rows, "total": rows * (rows - 1) // 2,
                    "shortest": 508, "longest": 508, "exact": rows}]
