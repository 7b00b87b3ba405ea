"""FILE stage garbage collection (issue 19), on a local data root (`lake serve`) and on S3 (a
cluster on moto): `lake gc --dry-run` lists exactly the stage objects no retained version
names (and removes none), objects written within the grace period stay, `VACUUM ns.t` and
`lake gc` remove exactly the unreferenced ones while every object a retained version names
(through time travel included) stays readable byte-exact, and a dropped table's stage goes
with its files after the drop grace."""

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pytest

from cluster import Cluster, lake_binary
from conftest import LakeServer, query

# Three versions of history; unreferenced stage objects go at once; dropped tables are
# looked for every second and their files (and stage) removed 2 s after.
ENV = {
    "LAKE_HISTORY_MAX_VERSIONS": "3",
    "LAKE_STAGE_GC_GRACE_SECS": "0",
    "LAKE_DROPPED_SCAN_SECS": "1",
    "LAKE_DROPPED_GRACE_SECS": "2",
}


def lake(endpoint, tmp_path, *args):
    env = dict(os.environ, LAKE_ENDPOINT=endpoint, LAKE_UPLOAD_DIR=str(tmp_path / "uploads"),
               RUST_BACKTRACE="0")
    done = subprocess.run([lake_binary(), *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def gc(endpoint, tmp_path, *flags) -> tuple[set[str], str]:
    """`lake gc ns.f`: the objects it printed (by sha256) and its summary line."""
    lines = lake(endpoint, tmp_path, "gc", "ns.f", *flags).strip().splitlines()
    return {line.split("\t")[1].rsplit("/", 1)[1] for line in lines[:-1]}, lines[-1]


class LocalStages:
    def __init__(self, data_dir: str):
        self.root = Path(data_dir, "stage")

    def objects(self, table_id: str | None = None) -> set[str]:
        """The sha256 of every finished object on the stages (or on table `table_id`'s)."""
        return {p.name for p in self.root.glob(f"{table_id or '*'}/sha256/*")}


class S3Stages:
    def __init__(self, c: Cluster):
        import boto3  # installed with moto

        self.s3 = boto3.client("s3", endpoint_url=c.moto_endpoint, region_name="us-east-1",
                               aws_access_key_id="testing", aws_secret_access_key="testing")
        self.bucket = c.bucket

    def objects(self, table_id: str | None = None) -> set[str]:
        prefix = "warehouse/stage/" + (f"{table_id}/" if table_id else "")
        out = set()
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for o in page.get("Contents", []):
                parts = o["Key"].split("/")
                if len(parts) >= 2 and parts[-2] == "sha256":
                    out.add(parts[-1])
        return out


def collecting(uri, endpoint, stages, tmp_path):
    files = {}
    for name in "abcde":
        files[name] = tmp_path / f"{name}.bin"
        files[name].write_bytes(name.encode() * (1000 + ord(name)))
    sha = {n: sha256_of(p) for n, p in files.items()}
    keys = ("uri", "size", "sha256", "media_type", "uploaded_at_ms")
    with flightsql.connect(uri, autocommit=True) as conn:
        query(conn, "CREATE SCHEMA ns")
        query(conn, "CREATE TABLE ns.f (id BIGINT NOT NULL, blob FILE)")  # version 1
        puts = {n: json.loads(lake(endpoint, tmp_path, "file", "put", "ns.f", str(files[n]), "--format", "json"))
                for n in "abcd"}
        assert stages.objects() == {sha[n] for n in "abcd"}
        with conn.cursor() as cur:
            for i, n in enumerate("abc", start=1):  # versions 2, 3, 4
                cur.execute("INSERT INTO ns.f VALUES (?, file_ref(?))",
                            parameters=(i, json.dumps({k: puts[n][k] for k in keys})))
        # d is named by no version.
        removed, summary = gc(endpoint, tmp_path, "--dry-run")
        assert removed == {sha["d"]}, summary
        assert summary.startswith(f"would remove 1 objects ({files['d'].stat().st_size} bytes)"), summary
        assert "kept 3 named by a retained version" in summary, summary
        assert stages.objects() == {sha[n] for n in "abcd"}, "a dry run removed something"
        # a's row goes (version 5), but versions 3 and 4 still name a.
        query(conn, "DELETE FROM ns.f WHERE id = 1")
        assert gc(endpoint, tmp_path, "--dry-run")[0] == {sha["d"]}
        assert query(conn, "SELECT count(*) AS n FROM ns.f VERSION AS OF 3").to_pylist() == [{"n": 2}]
        # Two more versions: the three retained (5, 6, 7) name b and c only.
        query(conn, "UPDATE ns.f SET id = id + 10")
        query(conn, "UPDATE ns.f SET id = id + 10")
        with pytest.raises(flightsql.Error, match="expired"):
            query(conn, "SELECT * FROM ns.f VERSION AS OF 4")
        assert gc(endpoint, tmp_path, "--dry-run")[0] == {sha["a"], sha["d"]}
        assert query(conn, "VACUUM ns.f").to_pylist() == [{"count": 2}]
        assert stages.objects() == {sha["b"], sha["c"]}
        # What is named stays readable, byte-exact.
        rows = query(conn, "SELECT id, blob['uri'] AS uri FROM ns.f ORDER BY id").to_pylist()
        assert [r["id"] for r in rows] == [22, 23]
        for row, n in zip(rows, "bc"):
            out = tmp_path / f"{n}.back"
            lake(endpoint, tmp_path, "file", "get", row["uri"], "--out", str(out))
            assert out.read_bytes() == files[n].read_bytes()
        # Nothing more to collect; without --dry-run the CLI says what it did.
        removed, summary = gc(endpoint, tmp_path)
        assert removed == set() and summary.startswith("removed 0 objects"), summary
        # Refusals name what was wrong.
        with pytest.raises(flightsql.Error, match="takes a table name only"):
            query(conn, "VACUUM FULL ns.f")
        with pytest.raises(flightsql.Error, match="does not exist"):
            query(conn, "VACUUM ns.missing")

        # A dropped table's stage goes with its files after the drop grace; others stay.
        query(conn, "CREATE TABLE ns.gone (id BIGINT NOT NULL, blob FILE)")
        put = json.loads(lake(endpoint, tmp_path, "file", "put", "ns.gone", str(files["e"]), "--format", "json"))
        with conn.cursor() as cur:
            cur.execute("INSERT INTO ns.gone VALUES (1, file_ref(?))", parameters=(json.dumps(put),))
        gone_id = put["uri"].split("/")[-3]
        assert stages.objects(gone_id) == {sha["e"]}
        query(conn, "DROP TABLE ns.gone")
        deadline = time.time() + 60
        while time.time() < deadline and stages.objects(gone_id):
            time.sleep(0.5)
        assert not stages.objects(gone_id), "the dropped table's stage stayed"
        assert stages.objects() == {sha["b"], sha["c"]}
        assert query(conn, "SELECT count(*) AS n FROM ns.f").to_pylist() == [{"n": 2}]


def test_stage_gc_on_a_local_root(tmp_path):
    server = LakeServer(str(tmp_path / "data"), demo=False, env=ENV)
    try:
        collecting(server.uri, server.endpoint, LocalStages(server.data_dir), tmp_path)
    finally:
        server.stop()


def test_stage_gc_on_s3(tmp_path):
    c = Cluster(tmp_path / "cluster", metasrv_nodes=1, query_replicas=1, env=ENV)
    try:
        endpoint = c.query_uri(0).replace("grpc://", "http://")
        collecting(c.query_uri(0), endpoint, S3Stages(c), tmp_path)
    finally:
        c.stop()


def test_an_object_written_within_the_grace_period_stays(tmp_path):
    server = LakeServer(str(tmp_path / "data"), demo=False)  # the default grace: a day
    try:
        with flightsql.connect(server.uri, autocommit=True) as conn:
            query(conn, "CREATE SCHEMA ns")
            query(conn, "CREATE TABLE ns.f (id BIGINT NOT NULL, blob FILE)")
            path = tmp_path / "new.bin"
            path.write_bytes(b"n" * 5000)
            lake(server.endpoint, tmp_path, "file", "put", "ns.f", str(path))
            removed, summary = gc(server.endpoint, tmp_path)
            assert removed == set(), summary
            assert summary.endswith(
                "kept 0 named by a retained version, and 1 objects and 0 unfinished uploads written within the grace period")
            assert LocalStages(server.data_dir).objects() == {sha256_of(path)}
    finally:
        server.stop()
