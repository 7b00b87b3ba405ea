//! A warm Query replica answers queries with zero Metasrv round trips (DESIGN.md: the
//! catalog cache keeps routine reads off Metasrv); a write goes through Metasrv.

use std::sync::Arc;

use arrow::array::Int64Array;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use lake_sdk::LakeClient;

#[tokio::test(flavor = "multi_thread")]
async fn warm_queries_make_no_metasrv_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = lake::embedded::start(
        dir.path(),
        "127.0.0.1:0".parse().expect("addr"),
        std::future::pending(),
    )
    .await
    .expect("start");
    let mut lake = LakeClient::connect(&server.endpoint())
        .await
        .expect("connect");
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    lake.create_table("default.w", schema.clone())
        .await
        .expect("create");
    let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 2, 3]))])
        .expect("batch");
    lake.append("default.w", vec![batch], "op")
        .await
        .expect("append");
    let sql = "SELECT sum(x) FROM w";
    lake.sql(sql).await.expect("warm-up");

    let before = server.metasrv.requests_served();
    for _ in 0..20 {
        let batches = lake.sql(sql).await.expect("query");
        // sum(BIGINT) is exact: DECIMAL(38, 0), as PostgreSQL's numeric.
        let sum = batches[0]
            .column(0)
            .as_any()
            .downcast_ref::<arrow::array::Decimal128Array>()
            .expect("Decimal128")
            .value(0);
        assert_eq!(sum, 6);
    }
    assert_eq!(
        server.metasrv.requests_served(),
        before,
        "warm queries reached Metasrv"
    );

    lake.sql("INSERT INTO w VALUES (4)").await.expect("insert");
    assert!(
        server.metasrv.requests_served() > before,
        "a write commits through Metasrv"
    );
}
