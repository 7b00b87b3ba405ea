"""TLS: Flight SQL over grpc+tls:// (ADBC, pyarrow.flight, the CLI) and Metasrv with mutual
TLS, so that only Query replicas and operators holding a certificate from the cluster's CA
can call it. Every CA, certificate and key is made here at run time (trustme); none is
committed. Everything listens on 127.0.0.1."""

import os
import shutil
import subprocess
import tempfile

import adbc_driver_flightsql
import adbc_driver_flightsql.dbapi as flightsql
import pyarrow.flight
import pytest
import trustme

from cluster import Process, free_port
from conftest import LakeServer, lake_binary, query


class Pki:
    """A CA and what it issued, as PEM files in `directory`."""

    def __init__(self, directory, name="lake"):
        self.dir = directory
        self.ca = trustme.CA(organization_name=name)
        self.ca_file = self.write("ca.pem", self.ca.cert_pem.bytes())

    def write(self, name, data: bytes) -> str:
        path = self.dir / name
        path.write_bytes(data)
        return str(path)

    def issue(self, name, *identities) -> tuple[str, str]:
        """(certificate chain file, key file) for `identities` (host names, IPs or names)."""
        cert = self.ca.issue_cert(*identities)
        chain = b"".join(pem.bytes() for pem in cert.cert_chain_pems)
        return self.write(f"{name}.pem", chain), self.write(f"{name}-key.pem", cert.private_key_pem.bytes())


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def tls_server(pki):
    cert, key = pki.issue("flight", "127.0.0.1", "localhost")
    data_dir = tempfile.mkdtemp(prefix="lake-tls-")
    srv = LakeServer(data_dir, demo=False, env={"LAKE_TLS_CERT": cert, "LAKE_TLS_KEY": key})
    srv.uri = srv.uri.replace("grpc://", "grpc+tls://")
    srv.endpoint = srv.endpoint.replace("http://", "https://")
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


def adbc_tls(uri, ca_file):
    ca = open(ca_file).read()
    return flightsql.connect(uri, db_kwargs={adbc_driver_flightsql.DatabaseOptions.TLS_ROOT_CERTS.value: ca},
                             autocommit=True)


def test_adbc_and_pyarrow_query_over_tls(tls_server, pki):
    with adbc_tls(tls_server.uri, pki.ca_file) as conn:
        query(conn, "CREATE TABLE tls_t (x BIGINT)")
        query(conn, "INSERT INTO tls_t VALUES (1), (2), (3)")
        assert query(conn, "SELECT sum(x) AS s FROM tls_t").to_pylist() == [{"s": 6}]
    client = pyarrow.flight.connect(tls_server.uri, tls_root_certs=open(pki.ca_file, "rb").read())
    assert list(client.list_actions()) is not None


def test_tls_clients_that_do_not_trust_the_server_are_refused(tls_server, tmp_path):
    stranger = Pki(tmp_path, name="someone else")
    with pytest.raises(Exception):
        with adbc_tls(tls_server.uri, stranger.ca_file) as conn:
            query(conn, "SELECT 1")
    # A plain-text client gets no answer from a TLS port.
    with pytest.raises(Exception):
        with flightsql.connect(tls_server.uri.replace("grpc+tls://", "grpc://"), autocommit=True) as conn:
            query(conn, "SELECT 1")
    assert tls_server.alive()


def test_the_cli_connects_with_its_own_ca(tls_server, pki, tmp_path):
    def run(*extra, env=None):
        return subprocess.run([lake_binary(), "sql", "--endpoint", tls_server.uri, *extra, "SELECT 41 + 1 AS answer"],
                              env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120)
    ok = run("--tls-ca", pki.ca_file)
    assert ok.returncode == 0 and "42" in ok.stdout, ok.stderr
    via_env = run(env={"LAKE_TLS_CA": pki.ca_file})
    assert via_env.returncode == 0 and "42" in via_env.stdout, via_env.stderr
    untrusted = run()  # the system's roots do not include the test CA
    assert untrusted.returncode != 0
    assert "certificate" in untrusted.stderr.lower() or "issuer" in untrusted.stderr.lower(), untrusted.stderr
    not_pem = tmp_path / "not-a-ca.pem"
    not_pem.write_text("hello")
    bad = run("--tls-ca", str(not_pem))
    assert bad.returncode != 0 and "TLS" in bad.stderr, bad.stderr


def test_bad_certificate_files_are_refused_at_start(pki, tmp_path):
    cert, key = pki.issue("other", "127.0.0.1")
    _, wrong_key = pki.issue("unrelated", "127.0.0.1")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    cases = [
        ({"LAKE_TLS_CERT": str(junk), "LAKE_TLS_KEY": key}, "no PEM block of a CERTIFICATE"),
        ({"LAKE_TLS_CERT": cert, "LAKE_TLS_KEY": str(junk)}, "no PEM block of a PRIVATE KEY"),
        ({"LAKE_TLS_CERT": cert, "LAKE_TLS_KEY": str(tmp_path / "missing.pem")}, "--tls-key"),
        ({"LAKE_TLS_CERT": cert, "LAKE_TLS_KEY": wrong_key}, "TLS"),
    ]
    for env, expected in cases:
        done = subprocess.run([lake_binary(), "serve", "--data-dir", str(tmp_path / "d"), "--listen", "127.0.0.1:0"],
                              env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0, env
        assert expected in done.stderr, (env, done.stderr)


def test_a_network_address_without_tls_is_refused_at_start(tmp_path):
    users = tmp_path / "users"
    subprocess.run([lake_binary(), "user", "add", "ada", "--users-file", str(users)], check=True,
                   env={**os.environ, "LAKE_PASSWORD": "pw"}, capture_output=True, timeout=60)
    done = subprocess.run([lake_binary(), "serve", "--data-dir", str(tmp_path / "d"), "--listen", "0.0.0.0:0",
                           "--users-file", str(users)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "refusing to serve 0.0.0.0:0 without TLS" in done.stderr
    assert "--tls-cert" in done.stderr and "--insecure-no-tls" in done.stderr
    metasrv = subprocess.run([lake_binary(), "metasrv", "--store", f"rocksdb://{tmp_path / 'm'}",
                              "--listen", "0.0.0.0:0", "--advertise", "127.0.0.1:1"],
                             capture_output=True, text=True, timeout=120)
    assert metasrv.returncode != 0
    assert "without mutual TLS" in metasrv.stderr and "--tls-client-ca" in metasrv.stderr, metasrv.stderr


# ---------------------------------------------------------------------------------------
# Metasrv with mutual TLS.


@pytest.fixture(scope="module")
def mtls_metasrv(pki, tmp_path_factory):
    directory = tmp_path_factory.mktemp("mtls")
    cert, key = pki.issue("metasrv", "127.0.0.1")
    port = free_port()
    proc = Process("metasrv", [lake_binary(), "metasrv", "--store", f"rocksdb://{directory / 'store'}",
                               "--listen", f"127.0.0.1:{port}", "--tls-cert", cert, "--tls-key", key,
                               "--tls-client-ca", pki.ca_file],
                   directory / "metasrv.log", "lake: metasrv ready on", env=dict(os.environ))
    yield f"https://127.0.0.1:{port}", directory
    proc.stop()


def meta_status(url, *tls):
    return subprocess.run([lake_binary(), "meta", "status", "--metasrv", url, *tls],
                          capture_output=True, text=True, timeout=60)


def test_metasrv_answers_only_clients_with_a_certificate_from_its_ca(mtls_metasrv, pki, tmp_path):
    url, _ = mtls_metasrv
    operator = pki.issue("operator", "operator")
    ok = meta_status(url, "--metasrv-ca", pki.ca_file, "--metasrv-cert", operator[0], "--metasrv-key", operator[1])
    assert ok.returncode == 0 and '"serving":true' in ok.stdout.replace(" ", ""), ok.stderr
    no_cert = meta_status(url, "--metasrv-ca", pki.ca_file)
    assert no_cert.returncode != 0, no_cert.stdout
    stranger = Pki(tmp_path, name="someone else")
    forged = stranger.issue("forged", "operator")
    wrong_ca = meta_status(url, "--metasrv-ca", pki.ca_file, "--metasrv-cert", forged[0], "--metasrv-key", forged[1])
    assert wrong_ca.returncode != 0, wrong_ca.stdout
    plain = meta_status(url.replace("https://", "http://"))
    assert plain.returncode != 0, plain.stdout
    half = meta_status(url, "--metasrv-cert", operator[0])
    assert half.returncode != 0 and "--metasrv-key" in half.stderr, half.stderr


def test_a_query_replica_reaches_metasrv_with_its_certificate(mtls_metasrv, pki):
    url, directory = mtls_metasrv
    replica_cert = pki.issue("replica", "query-replica")
    flight_cert = pki.issue("replica-flight", "127.0.0.1")
    port = free_port()
    common = [lake_binary(), "query", "--metasrv", url, "--metasrv-ca", pki.ca_file,
              "--warehouse", str(directory / "warehouse"), "--listen", f"127.0.0.1:{port}",
              "--tls-cert", flight_cert[0], "--tls-key", flight_cert[1]]
    refused = subprocess.run(common, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "Metasrv" in refused.stderr, refused.stderr
    replica = Process("query", [*common, "--metasrv-cert", replica_cert[0], "--metasrv-key", replica_cert[1]],
                      directory / "query.log", "lake: ready on", env=dict(os.environ))
    try:
        with adbc_tls(f"grpc+tls://127.0.0.1:{port}", pki.ca_file) as conn:
            query(conn, "CREATE TABLE mtls_t (x BIGINT)")
            query(conn, "INSERT INTO mtls_t VALUES (40), (2)")
            assert query(conn, "SELECT sum(x) AS s FROM mtls_t").to_pylist() == [{"s": 42}]
    finally:
        replica.stop()
