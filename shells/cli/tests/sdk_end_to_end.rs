//! The Rust SDK and the `lake` CLI against a real `lake serve` on a free 127.0.0.1 port.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use lake_sdk::{LakeClient, SdkError};

struct Server {
    child: Child,
    endpoint: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lake"))
        .args(["serve", "--data-dir"])
        .arg(dir.path())
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn lake serve");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("lake: ready on") {
                let _ = tx.send(());
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while rx.recv_timeout(Duration::from_millis(200)).is_err() {
        assert!(Instant::now() < deadline, "lake serve did not become ready");
        assert!(
            child.try_wait().expect("wait").is_none(),
            "lake serve exited"
        );
    }
    Server {
        child,
        endpoint: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    }
}

fn batch(ids: &[i64], names: &[&str]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(StringArray::from(names.to_vec())),
        ],
    )
    .expect("batch")
}

async fn count(lake: &mut LakeClient, sql: &str) -> i64 {
    let batches = lake.sql(sql).await.expect("query");
    batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("count is Int64")
        .value(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn sdk_appends_are_idempotent_and_versioned() {
    let server = start();
    let mut lake = LakeClient::connect(&server.endpoint)
        .await
        .expect("connect");
    lake.sql("CREATE SCHEMA robots").await.expect("schema");
    let schema = batch(&[], &[]).schema();
    lake.create_table("robots.runs", schema.clone())
        .await
        .expect("create");
    let again = lake.create_table("robots.runs", schema).await;
    assert!(
        matches!(
            again,
            Err(SdkError::Server {
                code: tonic::Code::AlreadyExists,
                ..
            })
        ),
        "{again:?}"
    );

    let first = lake
        .append("robots.runs", vec![batch(&[1, 2], &["a", "b"])], "op-1")
        .await
        .expect("append");
    assert_eq!((first.rows, first.replayed), (2, false));
    let replay = lake
        .append("robots.runs", vec![batch(&[1, 2], &["a", "b"])], "op-1")
        .await
        .expect("replay");
    assert_eq!(replay.version, first.version);
    assert!(replay.replayed);
    let conflict = lake
        .append("robots.runs", vec![batch(&[3], &["c"])], "op-1")
        .await
        .expect_err("same id, other payload");
    assert!(
        conflict.to_string().contains("different payload"),
        "{conflict}"
    );
    let second = lake
        .append("lake.robots.runs", vec![batch(&[3], &["c"])], "op-2")
        .await
        .expect("append 2");
    assert_eq!(second.version, first.version + 1);
    assert!(second.revision > first.revision);

    assert_eq!(
        count(&mut lake, "SELECT count(*) FROM robots.runs").await,
        3
    );
    let old = format!(
        "SELECT count(*) FROM robots.runs VERSION AS OF {}",
        first.version
    );
    assert_eq!(count(&mut lake, &old).await, 2);

    let mismatched = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, false)])),
        vec![Arc::new(StringArray::from(vec!["x"]))],
    )
    .expect("batch");
    let err = lake
        .append("robots.runs", vec![mismatched], "op-3")
        .await
        .expect_err("schema mismatch");
    assert!(err.to_string().contains("schema mismatch"), "{err}");
    assert_eq!(
        count(&mut lake, "SELECT count(*) FROM robots.runs").await,
        3
    );

    lake.drop_table("robots.runs").await.expect("drop");
    let gone = lake
        .sql("SELECT * FROM robots.runs")
        .await
        .expect_err("dropped");
    assert!(gone.to_string().contains("does not exist"), "{gone}");
}

#[tokio::test(flavor = "multi_thread")]
async fn cli_sql_prints_json_and_errors_go_to_stderr() {
    let server = start();
    let output = Command::new(env!("CARGO_BIN_EXE_lake"))
        .args(["sql", "--endpoint", &server.endpoint, "--format", "json"])
        .arg("SELECT 1 AS one, 'x' AS s")
        .output()
        .expect("run lake sql");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        r#"{"one":1,"s":"x"}"#
    );

    let bad = Command::new(env!("CARGO_BIN_EXE_lake"))
        .args(["sql", "--endpoint", &server.endpoint, "SELEC nonsense"])
        .output()
        .expect("run lake sql");
    assert!(!bad.status.success());
    assert!(bad.stdout.is_empty());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("SQL error"));
}
