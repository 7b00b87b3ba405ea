"""Namespace grants (GRANT / REVOKE), as users of a deployment with logins meet them through
ADBC and pyarrow: a superuser from the users file grants, readers read and cannot write,
writers write and cannot drop, listings show only what a user may read, a revoke takes effect
on the next call (tickets already issued included), and the `iceberg` catalog has a grant of
its own. Every refusal is PERMISSION_DENIED naming the grant that would allow it."""

import os
import shutil
import subprocess
import tempfile

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pyarrow.flight
import pytest

from conftest import ICEBERG_TOKEN, LakeServer, lake_binary, query

PASSWORDS = {"root": "root pw", "rita": "reader pw", "wes": "writer pw", "nobody": "nobody pw",
             "tess": "table pw"}


@pytest.fixture(scope="module")
def users(tmp_path_factory):
    path = tmp_path_factory.mktemp("grant-users") / "users"
    for name, password in PASSWORDS.items():
        admin = ["--admin"] if name == "root" else []
        done = subprocess.run([lake_binary(), "user", "add", name, "--users-file", str(path), *admin],
                              env={**os.environ, "LAKE_PASSWORD": password}, capture_output=True, text=True,
                              timeout=60, check=True)
        assert ("as a superuser" in done.stderr) == (name == "root"), done.stderr
    return path


@pytest.fixture(scope="module")
def lake(users, iceberg_rest, iceberg_tables):
    out, _ = iceberg_tables
    data_dir = tempfile.mkdtemp(prefix="lake-grants-")
    srv = LakeServer(data_dir, demo=False, env={
        "LAKE_USERS_FILE": str(users),
        "LAKE_ICEBERG_REST_URI": iceberg_rest,
        "LAKE_ICEBERG_WAREHOUSE": "fixtures",
        "LAKE_ICEBERG_TOKEN": ICEBERG_TOKEN,
        "LAKE_ICEBERG_ALLOWED_PREFIXES": str(out),
    })
    with login(srv, "root") as root:
        for sql in ["CREATE SCHEMA sales", "CREATE SCHEMA hr",
                    "CREATE TABLE sales.orders (id BIGINT, amount DOUBLE)",
                    "INSERT INTO sales.orders VALUES (1, 10.5), (2, 20.0)",
                    "CREATE TABLE hr.salaries (name VARCHAR, pay BIGINT)",
                    "INSERT INTO hr.salaries VALUES ('ada', 100)",
                    "GRANT SELECT ON SCHEMA sales TO rita",
                    "GRANT INSERT ON SCHEMA sales TO wes"]:
            query(root, sql)
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


def login(srv, name):
    return flightsql.connect(srv.uri, db_kwargs={"username": name, "password": PASSWORDS[name]},
                             autocommit=True)


def denied(conn, sql, *fragments):
    with pytest.raises(flightsql.Error) as err:
        query(conn, sql)
    text = str(err.value)
    assert "permission denied" in text, text
    for fragment in fragments:
        assert fragment in text, text
    return text


def listed_tables(conn):
    reader = conn.adbc_get_objects(depth="tables")
    seen = set()
    for catalog in reader.read_all().to_pylist():
        for schema in catalog["catalog_db_schemas"] or []:
            for table in schema["db_schema_tables"] or []:
                seen.add(f'{catalog["catalog_name"]}.{schema["db_schema_name"]}.{table["table_name"]}')
    return seen


def test_a_reader_reads_its_namespace_and_nothing_else(lake):
    with login(lake, "rita") as rita:
        assert query(rita, "SELECT sum(amount) AS s FROM sales.orders").to_pylist() == [{"s": 30.5}]
        # Time travel is a read too.
        assert query(rita, "SELECT count(*) AS n FROM sales.orders VERSION AS OF 2").to_pylist() == [{"n": 2}]
        text = denied(rita, "SELECT * FROM hr.salaries", "rita may not read lake.hr.salaries",
                      "GRANT SELECT ON SCHEMA hr TO rita")
        assert "ada" not in text  # no row leaks into the message
        # A subquery or join that touches another namespace is refused as a whole.
        denied(rita, "SELECT o.id FROM sales.orders o JOIN hr.salaries s ON o.id = s.pay", "lake.hr.salaries")
        # A namespace that does not exist is refused the same way: nothing tells it apart.
        denied(rita, "SELECT * FROM secret_ns.t", "lake.secret_ns.t")
        denied(rita, "INSERT INTO sales.orders VALUES (3, 1.0)", "rita may not write to lake.sales.orders",
               "holds only read", "GRANT INSERT ON SCHEMA sales TO rita")
        # DELETE, UPDATE and MERGE are writes; a MERGE that reads another namespace is
        # refused for that read.
        denied(rita, "DELETE FROM sales.orders WHERE id = 1", "rita may not delete from lake.sales.orders")
        denied(rita, "UPDATE sales.orders SET amount = 0", "rita may not update lake.sales.orders")
        denied(rita, "MERGE INTO sales.orders AS t USING (SELECT 1 AS id) AS s ON t.id = s.id "
                     "WHEN MATCHED THEN DELETE", "rita may not merge into lake.sales.orders")
        denied(rita, "MERGE INTO sales.orders AS t USING hr.salaries AS s ON t.id = s.pay "
                     "WHEN MATCHED THEN DELETE", "lake.hr.salaries")
        denied(rita, "DROP TABLE sales.orders", "may not drop table lake.sales.orders")
        # EXPLAIN of a write shows its plan only to who may run it.
        denied(rita, "EXPLAIN DROP TABLE sales.orders", "may not drop table lake.sales.orders")
        denied(rita, "EXPLAIN CREATE SCHEMA rita_ns", "needs admin on catalog lake")
        denied(rita, "CREATE TABLE sales.mine AS SELECT 1 AS x", "may not create table lake.sales.mine")
        denied(rita, "CREATE SCHEMA rita_ns", "needs admin on catalog lake")
        denied(rita, "GRANT SELECT ON SCHEMA hr TO rita", "may not grant on namespace lake.hr")
        denied(rita, "SELECT * FROM iceberg.sales.orders", "may not read iceberg.sales.orders",
               "GRANT SELECT ON DATABASE iceberg TO rita")
        # Listings show only what she may read; the iceberg catalog is hidden.
        assert listed_tables(rita) == {"lake.sales.orders"}
        catalogs = {c["catalog_name"] for c in rita.adbc_get_objects(depth="catalogs").read_all().to_pylist()}
        assert catalogs == {"lake"}
    with login(lake, "root") as root:
        assert query(root, "SELECT count(*) AS n FROM sales.orders").to_pylist() == [{"n": 2}]


def test_a_writer_inserts_and_ingests_but_cannot_drop_or_create(lake):
    with login(lake, "wes") as wes:
        query(wes, "INSERT INTO sales.orders VALUES (100, 1.0)")
        with wes.cursor() as cur:
            cur.adbc_ingest("orders", pa.table({"id": [101], "amount": [2.0]}), mode="append",
                            db_schema_name="sales")
        assert query(wes, "SELECT count(*) AS n FROM sales.orders WHERE id >= 100").to_pylist() == [{"n": 2}]
        denied(wes, "DROP TABLE sales.orders", "wes may not drop table", "holds only write",
               "GRANT ALL ON SCHEMA sales TO wes")
        with wes.cursor() as cur:
            with pytest.raises(flightsql.Error) as err:
                cur.adbc_ingest("fresh", pa.table({"x": [1]}), mode="create", db_schema_name="sales")
        assert "may not create table lake.sales.fresh" in str(err.value)
        with wes.cursor() as cur:
            with pytest.raises(flightsql.Error) as err:
                cur.adbc_ingest("salaries", pa.table({"name": ["x"], "pay": [1]}), mode="append",
                                db_schema_name="hr")
        assert "may not write to lake.hr.salaries" in str(err.value)
    with login(lake, "root") as root:
        assert query(root, "SELECT count(*) AS n FROM hr.salaries").to_pylist() == [{"n": 1}]
        assert "lake.sales.fresh" not in listed_tables(root)


def test_a_user_without_grants_sees_and_reads_nothing(lake):
    with login(lake, "nobody") as nobody:
        assert listed_tables(nobody) == set()
        denied(nobody, "SELECT * FROM sales.orders", "nobody may not read lake.sales.orders", "holds no grant")
        # A write names what it asked for, not a read, whether or not the table exists.
        denied(nobody, "INSERT INTO sales.orders VALUES (1)", "nobody may not write to lake.sales.orders",
               "needs write on table lake.sales.orders (or its namespace)")
        denied(nobody, "CREATE TABLE sales.mine (x BIGINT)", "nobody may not create table lake.sales.mine",
               "needs admin on namespace lake.sales")
        denied(nobody, "DROP TABLE sales.orders", "nobody may not drop table lake.sales.orders",
               "needs admin on table lake.sales.orders (or its namespace)")
        denied(nobody, "DROP TABLE sales.absent", "nobody may not drop table lake.sales.absent",
               "needs admin on table lake.sales.absent (or its namespace)")
        # Statements that touch no table still work.
        assert query(nobody, "SELECT 1 + 1 AS two").to_pylist() == [{"two": 2}]


def test_revoke_takes_effect_on_the_next_call_and_on_issued_tickets(lake):
    from test_flight_sql import statement_query_cmd
    with login(lake, "root") as root:
        query(root, "GRANT SELECT ON SCHEMA hr TO nobody")
    client = pyarrow.flight.connect(lake.uri)
    options = pyarrow.flight.FlightCallOptions(headers=[client.authenticate_basic_token("nobody", PASSWORDS["nobody"])])
    descriptor = pyarrow.flight.FlightDescriptor.for_command(statement_query_cmd("SELECT pay FROM hr.salaries"))
    ticket = client.get_flight_info(descriptor, options).endpoints[0].ticket
    assert client.do_get(ticket, options).read_all().to_pylist() == [{"pay": 100}]
    # Planned, not yet redeemed: the replica keeps its plan for the DoGet (plan once).
    unredeemed = client.get_flight_info(descriptor, options).endpoints[0].ticket
    with login(lake, "root") as root:
        query(root, "REVOKE SELECT ON SCHEMA hr FROM nobody")
    # The tickets issued before the revoke no longer serve, redeemed before or not.
    for issued in (ticket, unredeemed):
        with pytest.raises(pyarrow.flight.FlightError) as err:
            client.do_get(issued, options).read_all()
        assert "permission denied" in str(err.value)
    with login(lake, "nobody") as nobody:
        denied(nobody, "SELECT pay FROM hr.salaries", "holds no grant")
        assert listed_tables(nobody) == set()


def test_revoking_write_leaves_read_and_all_grants_admin(lake):
    with login(lake, "root") as root:
        query(root, "CREATE SCHEMA lab")
        query(root, "GRANT ALL PRIVILEGES ON SCHEMA lab TO wes")
    with login(lake, "wes") as wes:
        # An admin of a namespace creates, drops and grants inside it, and nowhere else.
        query(wes, "CREATE TABLE lab.notes (x BIGINT)")
        query(wes, "INSERT INTO lab.notes VALUES (1)")
        query(wes, "GRANT SELECT ON SCHEMA lab TO rita")
        denied(wes, "GRANT SELECT ON SCHEMA hr TO rita", "may not grant on namespace lake.hr")
    with login(lake, "rita") as rita:
        assert query(rita, "SELECT x FROM lab.notes").to_pylist() == [{"x": 1}]
    with login(lake, "root") as root:
        query(root, "REVOKE ALL ON SCHEMA lab FROM wes")
        query(root, "GRANT INSERT ON SCHEMA lab TO wes")
        query(root, "REVOKE INSERT ON SCHEMA lab FROM wes")
    with login(lake, "wes") as wes:
        assert query(wes, "SELECT x FROM lab.notes").to_pylist() == [{"x": 1}]
        denied(wes, "INSERT INTO lab.notes VALUES (2)", "holds only read")
        denied(wes, "DROP TABLE lab.notes", "holds only read")


def test_catalog_wide_and_iceberg_grants(lake):
    with login(lake, "root") as root:
        query(root, "GRANT SELECT ON DATABASE lake TO nobody")
        query(root, "GRANT SELECT ON DATABASE iceberg TO nobody")
    try:
        with login(lake, "nobody") as nobody:
            seen = listed_tables(nobody)
            assert {"lake.sales.orders", "lake.hr.salaries"} <= seen
            assert any(t.startswith("iceberg.") for t in seen), seen
            assert query(nobody, "SELECT count(*) AS n FROM iceberg.sales.orders").num_rows == 1
            denied(nobody, "INSERT INTO hr.salaries VALUES ('x', 1)", "holds only read")
    finally:
        with login(lake, "root") as root:
            query(root, "REVOKE ALL ON DATABASE lake FROM nobody")
            query(root, "REVOKE ALL ON DATABASE iceberg FROM nobody")


@pytest.mark.parametrize("sql,fragment", [
    ("GRANT SELECT ON TABLE lake.sales.orders.x TO rita", "table grants cover tables of catalog lake"),
    ("GRANT SELECT ON TABLE sales.nope TO rita", "table sales.nope does not exist"),
    ("GRANT UPDATE ON SCHEMA sales TO rita", "privilege UPDATE"),
    ("GRANT SELECT ON SCHEMA sales TO ROLE analysts", "grantees are user names"),
    ("GRANT SELECT ON SCHEMA sales TO rita WITH GRANT OPTION", "WITH GRANT OPTION"),
    ("GRANT INSERT ON DATABASE iceberg TO rita", "read-only"),
    ("GRANT SELECT ON DATABASE postgres TO rita", "the catalogs are lake and iceberg"),
    ("GRANT SELECT ON SCHEMA no_such_ns TO rita", "no_such_ns"),
    ("GRANT SELECT ON SCHEMA sales TO \"bad name!\"", "invalid user name"),
    ("GRANT SELECT ON SCHEMA sales TO ritta", "no user ritta can log in here"),
])
def test_malformed_grants_are_refused_with_the_form_lake_takes(lake, sql, fragment):
    with login(lake, "root") as root:
        with pytest.raises(flightsql.Error) as err:
            query(root, sql)
        assert fragment in str(err.value), str(err.value)
    assert lake.alive()


def test_lake_grants_lists_what_each_caller_may_see(lake):
    sql = "SELECT principal, scope, privilege FROM lake_grants() ORDER BY principal, scope"
    with login(lake, "rita") as rita:
        mine = query(rita, sql).to_pylist()
    assert {"principal": "rita", "scope": "lake.sales", "privilege": "read"} in mine
    assert all(row["principal"] == "rita" for row in mine), mine
    with login(lake, "root") as root:
        everyone = query(root, sql).to_pylist()
    assert {"principal": "wes", "scope": "lake.sales", "privilege": "write"} in everyone
    assert {row["principal"] for row in everyone} >= {"rita", "wes"}


def test_a_table_grant_covers_that_table_only_and_goes_with_the_table(lake):
    with login(lake, "root") as root:
        for sql in ["CREATE TABLE hr.teams (name VARCHAR)", "INSERT INTO hr.teams VALUES ('core')",
                    "GRANT SELECT ON TABLE hr.teams TO tess"]:
            query(root, sql)
    with login(lake, "tess") as tess:
        assert query(tess, "SELECT name FROM hr.teams").to_pylist() == [{"name": "core"}]
        assert query(tess, "SELECT name FROM lake.hr.teams VERSION AS OF 2").to_pylist() == [{"name": "core"}]
        assert listed_tables(tess) == {"lake.hr.teams"}
        denied(tess, "SELECT * FROM hr.salaries", "tess may not read lake.hr.salaries",
               "GRANT SELECT ON TABLE hr.salaries TO tess")
        denied(tess, "INSERT INTO hr.teams VALUES ('x')", "tess may not write to lake.hr.teams",
               "needs write on table lake.hr.teams", "GRANT INSERT ON TABLE hr.teams TO tess")
        denied(tess, "DROP TABLE hr.teams", "tess may not drop table lake.hr.teams")
        grants = query(tess, "SELECT principal, scope, privilege FROM lake_grants()").to_pylist()
        assert grants == [{"principal": "tess", "scope": "lake.hr.teams", "privilege": "read"}]
    with login(lake, "root") as root:
        with pytest.raises(flightsql.Error) as err:
            query(root, "GRANT SELECT ON TABLE hr.absent TO tess")
        assert "does not exist" in str(err.value)
        # A table created again under the name starts without the old table's grants.
        query(root, "DROP TABLE hr.teams")
        query(root, "CREATE TABLE hr.teams (name VARCHAR)")
    with login(lake, "tess") as tess:
        denied(tess, "SELECT * FROM hr.teams", "tess may not read lake.hr.teams")
        assert listed_tables(tess) == set()
