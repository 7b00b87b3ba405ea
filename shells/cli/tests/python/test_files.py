"""FILE columns through the `lake file` CLI and a real Flight SQL client (ADBC): a video made
by ffmpeg and a model-weights file written by safetensors round-trip byte-exact, their rows
are written and read over Flight SQL, and the tools that made them read them back."""

import hashlib
import json
import os
import subprocess

import adbc_driver_flightsql.dbapi as flightsql
import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from conftest import query
from cluster import lake_binary


def lake(server, tmp_path, *args, check=True):
    env = dict(os.environ, LAKE_ENDPOINT=server.endpoint, LAKE_UPLOAD_DIR=str(tmp_path / "uploads"),
               RUST_BACKTRACE="0")
    done = subprocess.run([lake_binary(), *args], capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_video_and_model_weights_round_trip_beside_their_rows(server, conn, unique_ns, tmp_path):
    video = tmp_path / "clip.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc=duration=2:size=320x240:rate=25", "-f", "lavfi", "-i",
                    "sine=frequency=440:duration=2", "-pix_fmt", "yuv420p", "-shortest", str(video)],
                   check=True, timeout=120)
    rng = np.random.default_rng(7)
    tensors = {"encoder.weight": rng.standard_normal((1536, 1024), dtype=np.float32),
               "encoder.bias": rng.standard_normal(1024, dtype=np.float32)}
    weights = tmp_path / "model.safetensors"
    save_file(tensors, str(weights))
    # Larger than the 5 MiB part size by a non-multiple: two parts.
    assert weights.stat().st_size > 5 << 20 and weights.stat().st_size % (5 << 20) != 0

    table = f"{unique_ns}.assets"
    query(conn, f"CREATE TABLE {table} (id BIGINT NOT NULL, name VARCHAR, blob FILE)")
    put_video = json.loads(lake(server, tmp_path, "file", "put", table, str(video), "--format", "json").stdout)
    put_weights = json.loads(lake(server, tmp_path, "file", "put", table, str(weights), "--format", "json",
                                  "--media-type", "application/x-safetensors", "--part-size-mib", "5").stdout)
    assert put_video["media_type"] == "video/mp4"  # guessed from the name
    assert (put_video["size"], put_video["sha256"]) == (video.stat().st_size, sha256(video))
    assert (put_weights["size"], put_weights["sha256"]) == (weights.stat().st_size, sha256(weights))
    assert put_weights["sent_parts"] == 2 and not put_weights["deduplicated"]
    again = json.loads(lake(server, tmp_path, "file", "put", table, str(video), "--format", "json").stdout)
    assert again["deduplicated"] and again["uri"] == put_video["uri"]

    # Rows carry the FILE values, bound as parameters of a prepared INSERT.
    keys = ("uri", "size", "sha256", "media_type", "uploaded_at_ms")
    with conn.cursor() as cur:
        for i, (name, put) in enumerate([("clip", put_video), ("model", put_weights)], start=1):
            cur.execute(f"INSERT INTO {table} VALUES (?, ?, file_ref(?))",
                        parameters=(i, name, json.dumps({k: put[k] for k in keys})))
    result = query(conn, f"SELECT id, blob, file_size(blob) AS size, file_media_type(blob) AS mt, "
                         f"blob['sha256'] AS sha FROM {table} ORDER BY id")
    field = result.schema.field("blob")
    assert field.metadata[b"ARROW:extension:name"] == b"lake.file"
    assert [f.name for f in field.type] == ["uri", "size", "sha256", "media_type", "uploaded_at"]
    assert result.column("size").to_pylist() == [put_video["size"], put_weights["size"]]
    assert result.column("mt").to_pylist() == ["video/mp4", "application/x-safetensors"]
    assert result.column("sha").to_pylist() == [sha256(video), sha256(weights)]
    blobs = result.column("blob").to_pylist()
    assert [b["uri"] for b in blobs] == [put_video["uri"], put_weights["uri"]]

    # Filter and project on FILE fields in SQL.
    big = query(conn, f"SELECT name FROM {table} WHERE file_size(blob) > 1000000")
    assert big.column("name").to_pylist() == ["model"]

    # Back from the stage, verified, and readable by the tools that wrote them.
    video_back, weights_back = tmp_path / "back.mp4", tmp_path / "back.safetensors"
    lake(server, tmp_path, "file", "get", blobs[0]["uri"], "--out", str(video_back))
    lake(server, tmp_path, "file", "get", blobs[1]["uri"], "--out", str(weights_back))
    assert video_back.read_bytes() == video.read_bytes()
    assert weights_back.read_bytes() == weights.read_bytes()
    duration = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                               str(video_back)], capture_output=True, text=True, check=True).stdout
    assert abs(float(duration) - 2.0) < 0.1
    loaded = load_file(str(weights_back))
    assert set(loaded) == set(tensors)
    for name, tensor in tensors.items():
        np.testing.assert_array_equal(loaded[name], tensor)

    # A FILE value as `lake sql --format json` prints it feeds `file_ref` again.
    line = lake(server, tmp_path, "sql", "--format", "json", f"SELECT blob FROM {table} WHERE id = 1").stdout
    query(conn, f"INSERT INTO {table} VALUES (3, 'copy', file_ref('{json.dumps(json.loads(line)['blob'])}'))")
    copy = query(conn, f"SELECT blob FROM {table} WHERE id = 3").column("blob").to_pylist()[0]
    assert copy == blobs[0]

    # `lake sql` shows FILE values readably.
    shown = lake(server, tmp_path, "sql", f"SELECT blob FROM {table} ORDER BY id").stdout
    assert "video/mp4" in shown and sha256(video)[:12] in shown and "KiB" in shown


def test_bad_file_input_gets_clear_errors_and_the_server_stays_up(server, conn, unique_ns, tmp_path):
    table = f"{unique_ns}.assets"
    query(conn, f"CREATE TABLE {table} (id BIGINT NOT NULL, blob FILE)")
    missing = lake(server, tmp_path, "file", "put", table, str(tmp_path / "nope.bin"), check=False)
    assert missing.returncode != 0 and "nope.bin" in missing.stderr
    source = tmp_path / "a.txt"
    source.write_text("hello")
    bad_type = lake(server, tmp_path, "file", "put", table, str(source), "--media-type", "text", check=False)
    assert bad_type.returncode != 0 and "type/subtype" in bad_type.stderr
    no_table = lake(server, tmp_path, "file", "put", f"{unique_ns}.absent", str(source), check=False)
    assert no_table.returncode != 0 and "does not exist" in no_table.stderr
    query(conn, f"CREATE TABLE {unique_ns}.plain (v BIGINT)")
    no_file_column = lake(server, tmp_path, "file", "put", f"{unique_ns}.plain", str(source), check=False)
    assert no_file_column.returncode != 0 and "has no FILE column" in no_file_column.stderr
    bad_parts = lake(server, tmp_path, "file", "put", table, str(source), "--part-size-mib", "1", check=False)
    assert bad_parts.returncode != 0 and "part size" in bad_parts.stderr
    not_a_stage = lake(server, tmp_path, "file", "get", "file:///etc/passwd", "--out", str(tmp_path / "x"),
                       check=False)
    assert not_a_stage.returncode != 0 and "sha256" in not_a_stage.stderr
    assert not (tmp_path / "x").exists()
    good = json.loads(lake(server, tmp_path, "file", "put", table, str(source), "--format", "json").stdout)
    into_dir = lake(server, tmp_path, "file", "get", good["uri"], "--out", str(tmp_path), check=False)
    assert into_dir.returncode != 0 and "not a regular file" in into_dir.stderr
    local_url = lake(server, tmp_path, "file", "put", table, str(source), "--format", "json")
    uri = json.loads(local_url.stdout)["uri"]
    presign = lake(server, tmp_path, "file", "url", uri, check=False)
    assert presign.returncode != 0 and "cannot sign" in presign.stderr
    with pytest.raises(flightsql.Error) as err:
        query(conn, f"INSERT INTO {table} VALUES (1, file_ref('not json'))")
    assert "file_ref" in str(err.value)
    assert server.alive()
