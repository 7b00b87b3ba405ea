"""Tables that stay healthy under streaming writes (issue 19), on a local data root (`lake
serve`) and on S3 (a cluster on moto): one-row appends are compacted in the background,
`OPTIMIZE` compacts by hand, the files only expired versions reference are removed while
every retained version (and a ticket pinned to one) still reads its exact rows, and a
dropped table's files go after their grace period."""

import re
import threading
import time
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pyarrow.flight as fl
import pytest

from cluster import Cluster  # noqa: E402  (conftest put scripts/ on the path)
from conftest import LakeServer, query
from test_flight_sql import statement_query_cmd

# Compact at 4 small fragments; keep 6 versions of history; remove an expired version's
# files at once (no grace); cleanups only after compactions, so what these tests see is
# theirs; look for dropped tables every second and remove their files 3 s after.
ENV = {
    "LAKE_COMPACT_AT_SMALL_FRAGMENTS": "4",
    "LAKE_HISTORY_MAX_VERSIONS": "6",
    "LAKE_CLEANUP_GRACE_SECS": "0",
    "LAKE_CLEANUP_EVERY_VERSIONS": "0",
    "LAKE_DROPPED_SCAN_SECS": "1",
    "LAKE_DROPPED_GRACE_SECS": "3",
}


class LocalFiles:
    """The dataset directories under a local data root."""

    def __init__(self, data_dir: str):
        self.tables = Path(data_dir) / "tables"
        self.storage_options = None

    def uri(self, table_dir: str) -> str:
        return str(self.tables / table_dir)

    def table_dirs(self) -> set[str]:
        return {d.name for d in self.tables.iterdir()} if self.tables.exists() else set()

    def files(self, table_dir: str) -> dict[str, int]:
        """Every file under the directory, relative to it, with its size."""
        root = self.tables / table_dir
        return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


class S3Files:
    """The dataset directories under an S3 warehouse (moto)."""

    def __init__(self, c: Cluster):
        import boto3  # installed with moto

        self.s3 = boto3.client("s3", endpoint_url=c.moto_endpoint, region_name="us-east-1",
                               aws_access_key_id="testing", aws_secret_access_key="testing")
        self.bucket = c.bucket
        self.prefix = "warehouse/tables/"
        self.storage_options = {"endpoint": c.moto_endpoint, "allow_http": "true", "region": "us-east-1",
                                "access_key_id": "testing", "secret_access_key": "testing"}

    def uri(self, table_dir: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}{table_dir}"

    def _objects(self, prefix: str) -> dict[str, int]:
        out = {}
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for o in page.get("Contents", []):
                out[o["Key"][len(prefix):]] = o["Size"]
        return out

    def table_dirs(self) -> set[str]:
        return {key.split("/", 1)[0] for key in self._objects(self.prefix)}

    def files(self, table_dir: str) -> dict[str, int]:
        return self._objects(f"{self.prefix}{table_dir}/")


def data_files(files: dict[str, int]) -> list[str]:
    return sorted(f for f in files if f.startswith("data/") and f.endswith(".lance"))


def manifest_versions(files: dict[str, int]) -> set[int]:
    """Versions whose final manifest is stored (Lance's V2 naming stores u64::MAX - version)."""
    versions = set()
    for f in files:
        m = re.fullmatch(r"_versions/(\d+)\.manifest", f)
        if m:
            n = int(m.group(1))
            versions.add(2**64 - 1 - n if n >= 2**63 else n)
    return versions


def retained(conn, table) -> tuple[int, int]:
    """(oldest, latest) retained version, as the error for a version never committed names them."""
    with pytest.raises(flightsql.Error) as err:
        query(conn, f"SELECT count(*) FROM {table} VERSION AS OF 1000000")
    m = re.search(r"versions are (\d+) to (\d+)", str(err.value))
    assert m, str(err.value)
    return int(m.group(1)), int(m.group(2))


def rows_at(conn, table, version=None) -> tuple[int, int]:
    clause = "" if version is None else f" VERSION AS OF {version}"
    row = query(conn, f"SELECT count(*) AS n, coalesce(sum(x), 0) AS s FROM {table}{clause}").to_pylist()[0]
    return row["n"], row["s"]


def referenced_files(conn, table, store, table_dir: str) -> tuple[int, int, set[str], set[str], int]:
    """(oldest, latest, data files, the latest's data files, the latest's fragments): the
    retained versions and the data files they reference, as stock pylance reads their
    manifests."""
    import lance

    oldest, latest = retained(conn, table)
    referenced, latest_files, fragments = set(), set(), 0
    for v in range(oldest, latest + 1):
        ds = lance.dataset(store.uri(table_dir), version=v, storage_options=store.storage_options)
        fragments = len(ds.get_fragments())
        latest_files = {f"data/{d.path}" for fragment in ds.get_fragments() for d in fragment.data_files()}
        referenced |= latest_files
    return oldest, latest, referenced, latest_files, fragments


def check_every_retained_version(conn, table, store, table_dir: str, in_order: bool = True):
    """Each retained version reads completely (with `in_order`, rows 1..n inserted in order
    sum to n(n+1)/2, so a missing or wrong file shows); exactly the retained versions keep
    a manifest; and the data files left are exactly those the retained versions reference,
    as stock pylance reads their manifests."""
    oldest, latest, referenced, _, _ = referenced_files(conn, table, store, table_dir)
    for v in range(oldest, latest + 1):
        n, s = rows_at(conn, table, v)
        assert not in_order or s == n * (n + 1) // 2, (v, n, s)
    files = store.files(table_dir)
    assert manifest_versions(files) == set(range(oldest, latest + 1)), (oldest, latest, sorted(manifest_versions(files)))
    assert set(data_files(files)) == referenced, (sorted(data_files(files)), sorted(referenced))
    return oldest, latest


def streaming(uri: str, store, writers: int = 1):
    """40 one-row appends of 1..40 (from `writers` connections at once), then OPTIMIZE, a
    pinned ticket across a cleanup, and its version's expiry."""
    with flightsql.connect(uri, autocommit=True) as conn:
        query(conn, "CREATE SCHEMA ns")
        query(conn, "CREATE TABLE ns.s (x BIGINT)")
        (table_dir,) = store.table_dirs()
        if writers == 1:
            for i in range(1, 41):
                query(conn, f"INSERT INTO ns.s VALUES ({i})")
        else:
            errors = []

            def write(w):
                try:
                    with flightsql.connect(uri, autocommit=True) as c:
                        for i in range(w + 1, 41, writers):
                            query(c, f"INSERT INTO ns.s VALUES ({i})")
                except Exception as e:  # noqa: BLE001 - asserted below
                    errors.append(e)

            threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(300)
            assert errors == []
        # 40 one-row appends wrote 40 data files; the background runs keep the latest
        # version compact (under 4 fragments, the threshold).
        deadline = time.time() + 60
        while time.time() < deadline:
            _, latest, _, _, fragments = referenced_files(conn, "ns.s", store, table_dir)
            if fragments < 4:
                break
            time.sleep(0.5)
        assert fragments < 4, fragments
        assert latest > 41, "the compactions committed versions of their own"
        assert rows_at(conn, "ns.s") == (40, 820)

        # By hand: whatever small fragments are left become one; a second run finds
        # nothing to do. Each run ends with a cleanup on the history as it stands (the
        # background runs' cleanups ran on the history of their own time, so versions
        # expired by the last appends waited for this), and every background run began
        # with an append, so all of them are done or find nothing to do: the files left
        # are exactly the retained versions' manifests and the data files they reference.
        merged = query(conn, "OPTIMIZE ns.s").to_pylist()
        assert merged[0]["count"] >= 0, merged
        assert query(conn, "OPTIMIZE TABLE lake.ns.s").to_pylist() == [{"count": 0}]
        assert rows_at(conn, "ns.s") == (40, 820)
        oldest, _ = check_every_retained_version(conn, "ns.s", store, table_dir, in_order=writers == 1)
        assert oldest > 1
        _, _, referenced, compacted, fragments = referenced_files(conn, "ns.s", store, table_dir)
        assert fragments == 1, fragments
        superseded = referenced - compacted

        # A ticket pinned to the latest version reads it after more appends and a
        # cleanup, while the version is retained ...
        client = fl.FlightClient(uri)
        pinned = client.get_flight_info(fl.FlightDescriptor.for_command(
            statement_query_cmd("SELECT count(*) AS n, sum(x) AS s FROM lake.ns.s")))
        for i in range(41, 43):
            query(conn, f"INSERT INTO ns.s VALUES ({i})")
        query(conn, "OPTIMIZE ns.s")
        assert client.do_get(pinned.endpoints[0].ticket).read_all().to_pylist() == [{"n": 40, "s": 820}]
        # ... and once it has expired, the ticket fails naming that, not a missing file.
        for i in range(43, 51):
            query(conn, f"INSERT INTO ns.s VALUES ({i})")
        query(conn, "OPTIMIZE ns.s")
        with pytest.raises(pa.ArrowException) as err:  # NOT_FOUND
            client.do_get(pinned.endpoints[0].ticket).read_all()
        assert "has expired: the oldest retained version is" in str(err.value), str(err.value)
        assert rows_at(conn, "ns.s") == (50, 1275)
        check_every_retained_version(conn, "ns.s", store, table_dir, in_order=writers == 1)
        # The files the first OPTIMIZE superseded have expired with the versions that
        # referenced them.
        assert superseded and not superseded & set(data_files(store.files(table_dir)))


def dropping(uri: str, store):
    """DROP TABLE frees the table's files after the grace period, and only its files."""
    with flightsql.connect(uri, autocommit=True) as conn:
        query(conn, "CREATE SCHEMA IF NOT EXISTS d")
        before = store.table_dirs()
        for name in ["gone", "kept"]:
            query(conn, f"CREATE TABLE d.{name} AS SELECT * FROM (VALUES (1), (2), (3)) AS v(x)")
        # Table ids grow: gone's directory (`<id>-<ms>.lance`) has the smaller id.
        (gone, _) = sorted(store.table_dirs() - before, key=lambda d: int(d.split("-")[0]))
        assert data_files(store.files(gone))
        query(conn, "DROP TABLE d.gone")
        # A table made right after the drop is never taken for a dropped one.
        query(conn, "CREATE TABLE d.gone AS SELECT * FROM (VALUES (4)) AS v(x)")
        # The next scan marks the dropped table's directory; its files stay for the grace.
        deadline = time.time() + 60
        while "_lake_dropped" not in store.files(gone) and time.time() < deadline:
            time.sleep(0.1)
        files = store.files(gone)
        assert "_lake_dropped" in files, files
        assert data_files(files), "still there within the grace period"
        while store.files(gone) and time.time() < deadline:
            time.sleep(0.2)
        assert store.files(gone) == {}
        time.sleep(2)  # more scans: nothing else goes
        assert gone not in store.table_dirs() and len(store.table_dirs() - before) == 2
        assert rows_at(conn, "d.kept") == (3, 6)
        assert rows_at(conn, "d.gone") == (1, 4)


def test_streaming_appends_on_a_local_root_stay_compact_and_dropped_tables_leave_no_files(tmp_path):
    srv = LakeServer(str(tmp_path / "lake"), demo=False, env=ENV)
    try:
        streaming(srv.uri, LocalFiles(srv.data_dir))
        dropping(srv.uri, LocalFiles(srv.data_dir))
    finally:
        srv.stop()


def test_streaming_appends_on_s3_racing_compactions_stay_compact_and_dropped_tables_leave_no_files(tmp_path):
    c = Cluster(tmp_path / "cluster", metasrv_nodes=1, query_replicas=1, env=ENV)
    try:
        streaming(c.query_uri(0), S3Files(c), writers=4)
        dropping(c.query_uri(0), S3Files(c))
    finally:
        c.stop()


def test_optimize_refuses_what_it_cannot_do(server, conn, unique_ns):
    query(conn, f"CREATE TABLE {unique_ns}.t (x BIGINT)")
    for sql, expected in [
        (f"OPTIMIZE {unique_ns}.t WHERE x > 1", "takes a table name only"),
        (f"OPTIMIZE {unique_ns}.t ZORDER BY (x)", "ZORDER BY"),
        (f"OPTIMIZE {unique_ns}.missing", "does not exist"),
        ("OPTIMIZE iceberg.ns.t", "read-only"),
    ]:
        with pytest.raises(flightsql.Error) as err:
            query(conn, sql)
        assert expected in str(err.value), (sql, str(err.value))
    # An empty table (one version, no rows) is compact already.
    assert query(conn, f"OPTIMIZE {unique_ns}.t").to_pylist() == [{"count": 0}]
