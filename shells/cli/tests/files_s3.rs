//! FILE bytes on an S3 stage (moto's server on 127.0.0.1, started by `.ci/services.sh`;
//! `LAKE_TEST_MOTO_ENDPOINT`, default `http://127.0.0.1:5055`): a multipart upload that
//! dies midway (in-process, and `lake file put` killed with SIGKILL) leaves no visible
//! object and resumes from its checkpoint without sending completed parts again; presigned URLs serve the bytes to a client without credentials;
//! Query and Metasrv receive none of them. moto does not verify part checksums, so every
//! check here reads the stored bytes back and compares them with the source.

mod common;

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use arrow::array::Int64Array;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use common::bytes;
use futures::TryStreamExt;
use lake_metasrv::{Metasrv, MetasrvClient, RocksStore};
use lake_query::TicketKey;
use lake_sdk::stage::{PART_SIZE_MIN, Progress};
use lake_sdk::{LakeClient, SdkError, UploadOptions, file_array, file_field};
use object_store::ObjectStoreExt;

fn moto() -> String {
    std::env::var("LAKE_TEST_MOTO_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:5055".into())
}

/// One HTTP/1.1 request to 127.0.0.1 (moto); returns the status and the body.
fn http(method: &str, url: &str) -> (u16, Vec<u8>) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    assert!(
        host.starts_with("127.0.0.1:"),
        "tests talk to 127.0.0.1 only: {url}"
    );
    let mut stream = std::net::TcpStream::connect(host).expect("connect to moto");
    write!(
        stream,
        "{method} {} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        if path.is_empty() { "/" } else { path }
    )
    .expect("request");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("response");
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("headers");
    let head = String::from_utf8_lossy(&response[..split]).to_string();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "this helper reads plain bodies only"
    );
    (status, response[split + 4..].to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_uploads_resume_after_a_crash_and_presign() {
    let endpoint = moto();
    // The only test in this binary: nothing else reads the environment concurrently.
    // SAFETY: set before any thread of this test reads the environment.
    unsafe {
        std::env::set_var("AWS_ENDPOINT_URL", &endpoint);
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
        std::env::set_var("AWS_REGION", "us-east-1");
        std::env::set_var("AWS_ALLOW_HTTP", "true");
    }
    let bucket = format!(
        "lake-files-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let (status, body) = http("PUT", &format!("{endpoint}/{bucket}"));
    assert_eq!(
        status,
        200,
        "moto must run on 127.0.0.1 (bash .ci/services.sh): {}",
        String::from_utf8_lossy(&body)
    );

    // Metasrv on RocksDB and a Query replica over an S3 warehouse, in this process.
    let dir = tempfile::tempdir().expect("tempdir");
    let metasrv = Metasrv::start(Arc::new(
        RocksStore::open(&dir.path().join("metasrv")).expect("rocksdb"),
    ))
    .expect("metasrv");
    let address = metasrv
        .clone()
        .spawn_server("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("metasrv server");
    let client = MetasrvClient::connect(&format!("http://{address}"))
        .await
        .expect("metasrv client");
    let replica = lake::embedded::start_query(
        client,
        &format!("s3://{bucket}/warehouse"),
        &lake::embedded::ReplicaOptions::default(),
        TicketKey::new(&[5; 32]).expect("key"),
        "127.0.0.1:0".parse().expect("addr"),
        std::future::pending(),
    )
    .await
    .expect("query replica");
    let received = |q: &Arc<AtomicU64>| (q.load(Ordering::Relaxed), metasrv.bytes_received());

    let mut lake = LakeClient::connect(&format!("http://{}", replica.addr))
        .await
        .expect("sdk");
    lake.sql("CREATE TABLE models (id BIGINT NOT NULL, weights FILE)")
        .await
        .expect("create");
    let stage = lake.stage("models").await.expect("stage");
    assert!(
        stage
            .uri()
            .starts_with(&format!("s3://{bucket}/warehouse/stage/")),
        "{}",
        stage.uri()
    );

    // Five parts, the last one short.
    let size = PART_SIZE_MIN * 4 + 123_457;
    let source = dir.path().join("model.safetensors");
    let original = bytes(size, 42);
    std::fs::write(&source, &original).expect("write");
    let checkpoints = dir.path().join("checkpoints");
    let before = received(&replica.received);

    // The process "dies" once two parts are on the store: the progress callback panics
    // inside the upload task, which drops every part in flight.
    let crashing = UploadOptions {
        part_size: PART_SIZE_MIN,
        concurrency: 1,
        checkpoint_dir: Some(checkpoints.clone()),
        progress: Some(Arc::new(|p| {
            if let Progress::Uploading { done, .. } = p
                && done >= 2 * PART_SIZE_MIN as u64
            {
                panic!("simulated crash after two parts");
            }
        })),
        force: false,
    };
    let crash = tokio::spawn({
        let stage = stage.clone();
        let source = source.clone();
        async move {
            stage
                .upload_path(&source, "application/octet-stream", &crashing)
                .await
        }
    })
    .await;
    assert!(
        crash.is_err_and(|e| e.is_panic()),
        "the upload should have died"
    );
    let sha256 = {
        use sha2::Digest;
        sha2::Sha256::digest(&original)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let uri = format!("{}/sha256/{sha256}", stage.uri());
    assert!(
        matches!(
            lake_sdk::Stage::stat(&uri).await,
            Err(SdkError::NotFound(_))
        ),
        "an unfinished upload is visible at {uri}"
    );
    assert_eq!(
        std::fs::read_dir(&checkpoints)
            .expect("checkpoint dir")
            .count(),
        1,
        "the crashed upload left its checkpoint"
    );

    let resumed = stage
        .upload_path(
            &source,
            "application/octet-stream",
            &UploadOptions {
                part_size: PART_SIZE_MIN,
                concurrency: 2,
                checkpoint_dir: Some(checkpoints.clone()),
                progress: None,
                force: false,
            },
        )
        .await
        .expect("resume");
    assert_eq!(resumed.resumed_parts, 2, "{resumed:?}");
    assert_eq!(resumed.sent_parts, 3, "{resumed:?}");
    assert_eq!(resumed.file.uri, uri);
    assert_eq!(
        std::fs::read_dir(&checkpoints)
            .expect("checkpoint dir")
            .count(),
        0,
        "a finished upload keeps no checkpoint"
    );
    assert_eq!(
        received(&replica.received),
        before,
        "Query or Metasrv received bytes during the upload"
    );
    let file = resumed.file;

    // Read back in full (verified) and by range, byte-exact.
    let chunks: Vec<bytes::Bytes> = lake
        .open_file(&file)
        .await
        .expect("open")
        .try_collect()
        .await
        .expect("read");
    assert!(chunks.concat() == original, "the stored object differs");
    let range = lake
        .read_range(&file, PART_SIZE_MIN as u64 - 5..PART_SIZE_MIN as u64 + 5)
        .await
        .expect("range across a part boundary");
    assert_eq!(&range[..], &original[PART_SIZE_MIN - 5..PART_SIZE_MIN + 5]);

    // A client without credentials reads it through a presigned URL.
    let url = stage
        .presigned_url(&file, Duration::from_secs(300))
        .await
        .expect("presign");
    assert!(url.contains("X-Amz-Signature="), "{url}");
    let (status, body) = http("GET", &url);
    assert_eq!(status, 200);
    assert!(body == original, "the presigned URL served other bytes");

    // The append path checks the object on S3 (HEAD), and the row reads back.
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        file_field("weights", true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(file_array(&[Some(file.clone())])),
        ],
    )
    .expect("batch");
    lake.append("models", vec![batch], "models-1")
        .await
        .expect("append");
    let result = lake
        .sql("SELECT file_size(weights) AS size, file_uri(weights) AS uri FROM models")
        .await
        .expect("select");
    let size_back = result[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::UInt64Array>()
        .expect("u64")
        .value(0);
    assert_eq!(size_back, size as u64);

    // A real crash: `lake file put` killed with SIGKILL once two parts are checkpointed,
    // then run again, sends only the parts it had not finished.
    let big = dir.path().join("video.bin");
    let big_bytes = bytes(PART_SIZE_MIN * 16 + 777, 43);
    std::fs::write(&big, &big_bytes).expect("write");
    let cli_checkpoints = dir.path().join("cli-checkpoints");
    let put = || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lake"));
        command
            .args(["file", "put", "--endpoint"])
            .arg(format!("http://{}", replica.addr))
            .arg("models")
            .arg(&big)
            .args([
                "--format",
                "json",
                "--part-size-mib",
                "5",
                "--concurrency",
                "1",
            ])
            .env("LAKE_UPLOAD_DIR", &cli_checkpoints)
            .env("RUST_BACKTRACE", "0")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        command
    };
    let mut child = put().spawn().expect("lake file put");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let parts_done = || -> usize {
        std::fs::read_dir(&cli_checkpoints)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| std::fs::read(e.path()).ok())
            .filter_map(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .map(|c| c["parts"].as_object().map_or(0, |p| p.len()))
            .max()
            .unwrap_or(0)
    };
    while parts_done() < 2 {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "lake file put finished before it could be killed"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "no parts were checkpointed"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let killed_at = parts_done();
    let again = put().output().expect("lake file put again");
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let resumed: serde_json::Value = serde_json::from_slice(&again.stdout).expect("json");
    assert!(
        resumed["resumed_parts"].as_u64().expect("resumed") == killed_at as u64,
        "{resumed} after {killed_at} checkpointed parts"
    );
    assert_eq!(
        resumed["resumed_parts"].as_u64().unwrap() + resumed["sent_parts"].as_u64().unwrap(),
        17,
        "{resumed}"
    );
    let video: lake_sdk::FileRef = serde_json::from_value(resumed).expect("FileRef");
    let chunks: Vec<bytes::Bytes> = lake
        .open_file(&video)
        .await
        .expect("open")
        .try_collect()
        .await
        .expect("read");
    assert!(chunks.concat() == big_bytes, "the resumed object differs");

    // Bytes replaced behind Lake's back (same length) fail the verified read.
    let s3 = object_store::aws::AmazonS3Builder::from_env()
        .with_bucket_name(&bucket)
        .build()
        .expect("s3");
    let key = uri.strip_prefix(&format!("s3://{bucket}/")).expect("key");
    let mut corrupted = original.clone();
    corrupted[size - 1] ^= 0x80;
    s3.put(&object_store::path::Path::from(key), corrupted.into())
        .await
        .expect("overwrite");
    let read: Result<Vec<bytes::Bytes>, SdkError> = lake
        .open_file(&file)
        .await
        .expect("open")
        .try_collect()
        .await;
    assert!(
        matches!(read, Err(SdkError::Corrupt { .. })),
        "a corrupted object read as good"
    );
}
