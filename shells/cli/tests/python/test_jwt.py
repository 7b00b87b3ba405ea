"""Logins from an identity provider: JWTs minted by PyJWT (another implementation) with keys
from `cryptography`, verified by Lake against a JWKS file. The user a JWT names gets what
grants give it; expired, forged, unsigned and foreign tokens get UNAUTHENTICATED saying why."""

import json
import os
import shutil
import subprocess
import tempfile
import time

import adbc_driver_flightsql.dbapi as flightsql
import jwt
import pyarrow.flight
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from conftest import LakeServer, lake_binary, query

ISSUER = "https://idp.example.test"
AUDIENCE = "lake"


@pytest.fixture(scope="module")
def keys():
    return {"rsa-1": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "ec-1": ec.generate_private_key(ec.SECP256R1())}


@pytest.fixture(scope="module")
def lake(keys, tmp_path_factory):
    directory = tmp_path_factory.mktemp("jwt")
    jwks = {"keys": []}
    for kid, key in keys.items():
        algorithm = jwt.algorithms.RSAAlgorithm if kid.startswith("rsa") else jwt.algorithms.ECAlgorithm
        jwk = json.loads(algorithm.to_jwk(key.public_key()))
        jwk["kid"] = kid
        jwks["keys"].append(jwk)
    (directory / "jwks.json").write_text(json.dumps(jwks))
    users = directory / "users"
    subprocess.run([lake_binary(), "user", "add", "root", "--users-file", str(users), "--admin"], check=True,
                   env={**os.environ, "LAKE_PASSWORD": "root pw"}, capture_output=True, timeout=60)
    data_dir = tempfile.mkdtemp(prefix="lake-jwt-")
    srv = LakeServer(data_dir, demo=False, env={
        "LAKE_USERS_FILE": str(users), "LAKE_JWKS_FILE": str(directory / "jwks.json"),
        "LAKE_JWT_ISSUER": ISSUER, "LAKE_JWT_AUDIENCE": AUDIENCE})
    with flightsql.connect(srv.uri, db_kwargs={"username": "root", "password": "root pw"}, autocommit=True) as root:
        query(root, "CREATE SCHEMA reports")
        query(root, "CREATE TABLE reports.daily (day BIGINT)")
        query(root, "INSERT INTO reports.daily VALUES (1), (2)")
        query(root, "GRANT SELECT ON SCHEMA reports TO alice")
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


def token(keys, kid="rsa-1", sub="alice", exp_in=300, **overrides):
    claims = {"sub": sub, "iss": ISSUER, "aud": AUDIENCE, "iat": int(time.time()),
              "exp": int(time.time()) + exp_in, **overrides}
    algorithm = "RS256" if kid.startswith("rsa") else "ES256"
    return jwt.encode(claims, keys[kid], algorithm=algorithm, headers={"kid": kid})


def connect(srv, bearer):
    return flightsql.connect(srv.uri, db_kwargs={"adbc.flight.sql.authorization_header": f"Bearer {bearer}"},
                             autocommit=True)


def test_a_jwt_from_the_identity_provider_logs_its_user_in_with_their_grants(lake, keys):
    for kid in ["rsa-1", "ec-1"]:
        with connect(lake, token(keys, kid)) as alice:
            assert query(alice, "SELECT sum(day) AS s FROM reports.daily").to_pylist() == [{"s": 3}]
            with pytest.raises(flightsql.Error) as err:
                query(alice, "INSERT INTO reports.daily VALUES (3)")
            assert "permission denied: alice may not write" in str(err.value)
    # A user the provider knows but nobody granted anything reads nothing.
    with connect(lake, token(keys, sub="bob")) as bob:
        with pytest.raises(flightsql.Error) as err:
            query(bob, "SELECT * FROM reports.daily")
        assert "bob may not read" in str(err.value)
    time.sleep(0.5)
    assert any("principal=alice" in line for line in lake.log if "lake::audit" in line)


def refused(srv, bearer):
    client = pyarrow.flight.connect(srv.uri)
    options = pyarrow.flight.FlightCallOptions(headers=[(b"authorization", f"Bearer {bearer}".encode())])
    with pytest.raises(pyarrow.flight.FlightUnauthenticatedError) as err:
        list(client.list_actions(options))
    return str(err.value)


def test_expired_forged_unsigned_and_foreign_jwts_are_refused_saying_why(lake, keys):
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cases = [
        (token(keys, exp_in=-3600), "expired"),
        (token(keys, iss="https://evil.example.test"), "issuer"),
        (token(keys, aud="another-service"), "audience"),
        # Configured claims must be there, not only right when they are.
        (jwt.encode({"sub": "alice", "aud": AUDIENCE, "exp": int(time.time()) + 300}, keys["rsa-1"],
                    algorithm="RS256", headers={"kid": "rsa-1"}), 'no "iss" claim'),
        (jwt.encode({"sub": "alice", "iss": ISSUER, "exp": int(time.time()) + 300}, keys["rsa-1"],
                    algorithm="RS256", headers={"kid": "rsa-1"}), 'no "aud" claim'),
        (jwt.encode({"sub": "alice", "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 300},
                    stranger, algorithm="RS256", headers={"kid": "rsa-1"}), "signature does not verify"),
        (jwt.encode({"sub": "alice", "exp": int(time.time()) + 300}, stranger, algorithm="RS256",
                    headers={"kid": "unknown"}), "does not hold"),
        # HMAC signed with the public key as the secret: the classic key confusion.
        (jwt.api_jws.PyJWS().encode(json.dumps({"sub": "root", "iss": ISSUER, "aud": AUDIENCE,
                                                "exp": int(time.time()) + 300}).encode(),
                                    b"a secret of thirty-two bytes !!!", algorithm="HS256", headers={"kid": "rsa-1"}),
         "not one its key allows"),
        (token(keys, sub="no spaces allowed"), "invalid user name"),
        (token(keys).rsplit(".", 1)[0] + ".", "signature"),
    ]
    for bearer, why in cases:
        assert why in refused(lake, bearer), why
    # Unsigned (alg none) tokens never pass.
    unsigned = jwt.encode({"sub": "root", "exp": int(time.time()) + 300}, None, algorithm="none")
    assert "JWT refused" in refused(lake, unsigned)
    assert lake.alive()


def test_a_jwt_is_not_a_superuser_even_if_it_names_one(lake, keys):
    """Superusers are the users file's: a JWT naming `root` is an ordinary user."""
    with connect(lake, token(keys, sub="root")) as fake_root:
        with pytest.raises(flightsql.Error) as err:
            query(fake_root, "SELECT * FROM reports.daily")
        assert "root may not read" in str(err.value)
