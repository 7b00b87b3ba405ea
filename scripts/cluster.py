#!/usr/bin/env python3
"""A local distributed Lake on 127.0.0.1: moto's server (S3 + DynamoDB), 3 Metasrv nodes
electing a leader on DynamoDB, and 2 Query replicas over an S3 warehouse.

    python3 scripts/cluster.py start [--dir DIR]   # prints the endpoints, returns
    python3 scripts/cluster.py status [--dir DIR]  # each node's view (JSON lines)
    python3 scripts/cluster.py stop [--dir DIR]    # SIGTERM everything it started

Needs `bash .ci/setup.sh` (moto) and `cargo build --workspace` first (or LAKE_BIN). Logs and
the process table live in DIR (default ./lake-cluster). The integration tests drive the same
`Cluster` class, which can also kill -9, pause and resume single processes.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def lake_binary() -> str:
    explicit = os.environ.get("LAKE_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    binary = target / "debug" / "lake"
    if not binary.exists():
        raise RuntimeError(f"{binary} not found: run `cargo build --workspace` first or set LAKE_BIN")
    return str(binary)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1)
        return True
    except OSError:
        return False


class Process:
    """One child process whose stderr goes to `log_path` (so it outlives this script);
    ready once its log has a line containing `ready_marker`."""

    def __init__(self, name: str, args: list[str], log_path: Path, ready_marker: str,
                 env: dict[str, str] | None = None, timeout: float = 120):
        self.name = name
        self.args = args
        self.log_path = log_path
        self.env = env
        self.ready_marker = ready_marker
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self):
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "a", encoding="utf-8") as log:
            self.proc = subprocess.Popen(self.args, stderr=log, stdout=subprocess.DEVNULL,
                                         env=self.env, start_new_session=True)
        deadline = time.time() + self.timeout
        while True:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                log.seek(offset)
                if self.ready_marker in log.read():
                    return
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not start:\n{self.tail()}")
            time.sleep(0.1)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int):
        if self.alive():
            os.kill(self.pid, sig)

    def kill(self):
        """kill -9: no shutdown code runs (a Metasrv leader keeps its lease)."""
        if self.alive():
            self.proc.kill()
            self.proc.wait()

    def stop(self, timeout: float = 20):
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def tail(self, n: int = 40) -> str:
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])


class Cluster:
    """moto + `metasrv_nodes` Metasrv nodes on one DynamoDB table + `query_replicas` Query
    replicas over one S3 warehouse, all on 127.0.0.1."""

    def __init__(self, directory: Path, metasrv_nodes: int = 3, query_replicas: int = 2,
                 moto_endpoint: str | None = None, name: str | None = None,
                 lease_ms: int | None = None, renew_interval_ms: int | None = None,
                 clock_bound_ms: int | None = None, env: dict[str, str] | None = None):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.name = name or f"lake-{int(time.time() * 1000)}"
        self.moto: Process | None = None
        self.moto_endpoint = moto_endpoint or os.environ.get("LAKE_TEST_MOTO_ENDPOINT", "")
        if not self.moto_endpoint or not answers(self.moto_endpoint + "/moto-api/"):
            port = free_port()
            self.moto_endpoint = f"http://127.0.0.1:{port}"
            self.moto = Process("moto", ["moto_server", "-H", "127.0.0.1", "-p", str(port)],
                                self.dir / "moto.log", "Running on")
        self.env = dict(os.environ)
        self.env.update({
            "AWS_ENDPOINT_URL": self.moto_endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
            "LAKE_LOG": os.environ.get("LAKE_LOG", "info,lance=warn,aws=warn"),
        })
        # Settings of every node and replica (`lake metasrv` and `lake query` read theirs).
        self.env.update(env or {})
        self.bucket = self.name
        self.table = self.name
        self._create_bucket()
        subprocess.run([lake_binary(), "meta", "init", "--dynamodb", self.table], env=self.env,
                       check=True, capture_output=True, timeout=120)
        # Election timing: `lake metasrv`'s defaults unless given.
        self.election = [arg for flag, value in (("--lease-ms", lease_ms),
                                                 ("--renew-interval-ms", renew_interval_ms),
                                                 ("--clock-bound-ms", clock_bound_ms))
                         if value is not None for arg in (flag, str(value))]
        self.metasrv_ports = [free_port() for _ in range(metasrv_nodes)]
        self.metasrv: list[Process] = [self._start_metasrv(i) for i in range(metasrv_nodes)]
        self.metasrv_urls = ",".join(f"http://127.0.0.1:{p}" for p in self.metasrv_ports)
        self.query_ports = [free_port() for _ in range(query_replicas)]
        self.query: list[Process] = [self._start_query(i) for i in range(query_replicas)]

    def _create_bucket(self):
        import boto3  # installed with moto

        s3 = boto3.client("s3", endpoint_url=self.moto_endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        s3.create_bucket(Bucket=self.bucket)

    def _start_metasrv(self, i: int) -> Process:
        port = self.metasrv_ports[i]
        args = [lake_binary(), "metasrv", "--store", f"dynamodb://{self.table}",
                "--listen", f"127.0.0.1:{port}", "--node", f"m{i}", *self.election]
        return Process(f"metasrv m{i}", args, self.dir / f"metasrv-{i}.log",
                       "lake: metasrv ready on", env=self.env)

    def _start_query(self, i: int) -> Process:
        port = self.query_ports[i]
        args = [lake_binary(), "query", "--metasrv", self.metasrv_urls,
                "--warehouse", f"s3://{self.bucket}/warehouse", "--listen", f"127.0.0.1:{port}",
                "--ticket-key-file", str(self.dir / "ticket.key")]
        return Process(f"query q{i}", args, self.dir / f"query-{i}.log", "lake: ready on",
                       env=self.env)

    def restart_metasrv(self, i: int):
        self.metasrv[i].stop()
        self.metasrv[i] = self._start_metasrv(i)

    def query_uri(self, i: int) -> str:
        return f"grpc://127.0.0.1:{self.query_ports[i]}"

    def status(self, i: int) -> dict | None:
        """Node i's view (`lake meta status`), or None when it does not answer."""
        try:
            done = subprocess.run([lake_binary(), "meta", "status", "--metasrv",
                                   f"http://127.0.0.1:{self.metasrv_ports[i]}"],
                                  capture_output=True, text=True, timeout=10, env=self.env)
        except subprocess.TimeoutExpired:
            return None
        if done.returncode != 0:
            return None
        return json.loads(done.stdout)

    def leader(self, timeout: float = 30) -> int:
        """The index of the node that serves, waiting up to `timeout` s for one."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            for i, p in enumerate(self.metasrv):
                if p.alive():
                    s = self.status(i)
                    if s and s["serving"]:
                        return i
            time.sleep(0.2)
        raise RuntimeError("no Metasrv node serves:\n" + "\n".join(p.tail(10) for p in self.metasrv))

    def processes(self) -> list[Process]:
        return [*self.query, *self.metasrv, *([self.moto] if self.moto else [])]

    def stop(self):
        for p in self.processes():
            if p.alive():
                p.signal(signal.SIGCONT)  # a paused process cannot stop
            p.stop()

    def describe(self) -> dict:
        return {
            "moto": self.moto_endpoint,
            "metasrv": self.metasrv_urls,
            "query": [f"grpc://127.0.0.1:{p}" for p in self.query_ports],
            "pids": {p.name: p.pid for p in self.processes()},
            "binary": lake_binary(),
            "commands": {p.name: p.args for p in self.processes()},
            "dir": str(self.dir),
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["start", "status", "stop"])
    parser.add_argument("--dir", default="lake-cluster")
    args = parser.parse_args()
    directory = Path(args.dir).resolve()
    state = directory / "cluster.json"
    if args.command == "start":
        if state.exists():
            sys.exit(f"{state} exists: stop that cluster first (`{sys.argv[0]} stop --dir {args.dir}`)")
        cluster = Cluster(directory)
        info = cluster.describe()
        state.write_text(json.dumps(info, indent=2))
        print(json.dumps(info, indent=2))
        for port in cluster.query_ports:
            print(f"query replica: lake sql --endpoint http://127.0.0.1:{port} \"SELECT 1\"  "
                  f"(ADBC: grpc://127.0.0.1:{port})", file=sys.stderr)
        return
    if not state.exists():
        sys.exit(f"no cluster in {directory}")
    info = json.loads(state.read_text())
    binary = info.get("binary") or lake_binary()
    if args.command == "status":
        for url in info["metasrv"].split(","):
            try:
                done = subprocess.run([binary, "meta", "status", "--metasrv", url],
                                      capture_output=True, text=True, timeout=10)
                view = json.loads(done.stdout) if done.returncode == 0 else {"down": True}
            except (subprocess.TimeoutExpired, json.JSONDecodeError):
                view = {"down": True}
            print(json.dumps({"endpoint": url, **view}))
        return
    pids = list(info["pids"].values())
    for pid in pids:
        try:
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + 20
    while time.time() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.1)
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    state.unlink()
    print("stopped", file=sys.stderr)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


if __name__ == "__main__":
    main()
