"""The Iceberg test fixtures themselves (fixtures/iceberg/): tables written by pyiceberg, and
the read-only REST catalog over them, checked with pyiceberg's own RestCatalog client and
with raw HTTP against the REST spec. test_iceberg.py tests Lake's `iceberg` catalog on them."""

import json
import urllib.error
import urllib.request

import pytest
from pyiceberg.catalog.rest import RestCatalog


def http(method, url, token="secret-token", headers=None):
    request = urllib.request.Request(url, method=method, headers={
        **({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
            return response.status, dict(response.headers), json.loads(body) if body else None
    except urllib.error.HTTPError as e:
        body = e.read()
        return e.code, dict(e.headers), json.loads(body) if body else None


def rows(arrow_table):
    return json.loads(json.dumps(arrow_table.sort_by([("id", "ascending")]).to_pylist(), default=str))


def test_pyiceberg_reads_every_snapshot_through_the_rest_catalog(iceberg_tables, iceberg_rest):
    _, expected = iceberg_tables
    cat = RestCatalog("fixtures", uri=iceberg_rest, warehouse="fixtures", token="secret-token")
    assert set(cat.list_namespaces()) >= {("sales",), ("lab",)}
    assert cat.list_namespaces(("lab",)) == [("lab", "robots")]
    assert cat.list_tables(("lab", "robots")) == [("lab", "robots", "runs")]
    orders = cat.load_table("sales.orders")
    want = expected["tables"]["sales.orders"]
    assert orders.metadata_location == want["metadata_location"]
    assert {name: ref.snapshot_id for name, ref in orders.refs().items()} == want["refs"]
    for snapshot in want["snapshots"]:
        assert rows(orders.scan(snapshot_id=snapshot["snapshot_id"]).to_arrow()) == snapshot["rows"], snapshot["what"]
    # The current snapshot lacks the deleted row; the tag and branch read their snapshots.
    assert [r["id"] for r in rows(orders.scan().to_arrow())] == [1, 3, 4, 5, 6, 7, 8, 9]
    v1 = orders.snapshot_by_name("v1").snapshot_id
    assert [r["customer"] for r in rows(orders.scan(snapshot_id=v1).to_arrow())] == ["ann", "bob", "cy"]
    runs = cat.load_table(("lab", "robots", "runs"))
    assert rows(runs.scan().to_arrow()) == expected["tables"]["lab.robots.runs"]["snapshots"][0]["rows"]


def test_oauth2_client_credentials(iceberg_rest):
    oauth = {"oauth2-server-uri": f"{iceberg_rest}/v1/oauth/tokens"}
    cat = RestCatalog("fixtures", uri=iceberg_rest, warehouse="fixtures", credential="lake:lake-secret", **oauth)
    assert ("sales",) in cat.list_namespaces()
    with pytest.raises(Exception):
        RestCatalog("fixtures", uri=iceberg_rest, warehouse="fixtures", credential="lake:wrong", **oauth).list_namespaces()


def test_rest_spec_details(iceberg_tables, iceberg_rest):
    _, expected = iceberg_tables
    status, _, config = http("GET", f"{iceberg_rest}/v1/config?warehouse=fixtures")
    assert status == 200 and config["overrides"]["prefix"] == "fixtures"
    base = f"{iceberg_rest}/v1/fixtures"
    # Multi-level namespaces travel with the 0x1F separator.
    status, _, body = http("GET", f"{base}/namespaces?parent=lab")
    assert body == {"namespaces": [["lab", "robots"]]}
    status, _, body = http("GET", f"{base}/namespaces/lab%1Frobots/tables")
    assert body == {"identifiers": [{"namespace": ["lab", "robots"], "name": "runs"}]}
    assert http("HEAD", f"{base}/namespaces/lab%1Frobots")[0] == 204
    # snapshots=refs keeps only referenced snapshots; ETags revalidate.
    status, headers, everything = http("GET", f"{base}/namespaces/sales/tables/orders?snapshots=all")
    assert status == 200
    want = expected["tables"]["sales.orders"]
    assert len(everything["metadata"]["snapshots"]) == len(want["snapshots"])
    _, _, referenced = http("GET", f"{base}/namespaces/sales/tables/orders?snapshots=refs")
    assert {s["snapshot-id"] for s in referenced["metadata"]["snapshots"]} == set(want["refs"].values())
    assert http("GET", f"{base}/namespaces/sales/tables/orders?snapshots=all",
                headers={"If-None-Match": headers["ETag"]})[0] == 304
    # Errors are the spec's ErrorModel.
    status, _, body = http("GET", f"{base}/namespaces/sales/tables/absent")
    assert status == 404 and body["error"]["type"] == "NoSuchTableException" and body["error"]["code"] == 404
    status, _, body = http("GET", f"{base}/namespaces/nowhere")
    assert status == 404 and body["error"]["type"] == "NoSuchNamespaceException"
    status, _, body = http("GET", f"{base}/namespaces", token=None)
    assert status == 401 and body["error"]["type"] == "NotAuthorizedException"


def test_writes_are_refused_and_change_nothing(iceberg_tables, iceberg_rest):
    before = http("GET", f"{iceberg_rest}/test/stats")[2]["writes"]
    cat = RestCatalog("fixtures", uri=iceberg_rest, warehouse="fixtures", token="secret-token")
    with pytest.raises(Exception):
        cat.create_namespace("intruder")
    with pytest.raises(Exception):
        cat.drop_table("sales.orders")
    assert http("GET", f"{iceberg_rest}/test/stats")[2]["writes"] == before + 2
    assert ("intruder",) not in cat.list_namespaces()
    assert cat.load_table("sales.orders").metadata_location == iceberg_tables[1]["tables"]["sales.orders"]["metadata_location"]
