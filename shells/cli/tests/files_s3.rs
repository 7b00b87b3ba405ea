//! FILE bytes on an S3 stage (moto's server on 127.0.0.1, started by `.ci/services.sh`;
//! `LAKE_TEST_MOTO_ENDPOINT`, default `http://127.0.0.1:5055`): a multipart upload that
//! dies midway (in-process, and `lake file put` killed with SIGKILL) leaves no visible
//! object and resumes from its checkpoint without sending completed parts again; presigned URLs serve the bytes to a client without credentials;
//! Query and Metasrv receive none of them. The SDK and the CLI reach the stage through the
//! replica's grants (presigned URLs per request): `lake file put/get` run with no storage
//! credentials at all, a reader reads but cannot upload, a stranger can do neither, and
//! malformed stage requests are refused by name. Stage garbage collection aborts multipart
//! uploads left unfinished past its grace. moto does not verify part checksums, so every
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
    let replica = replica(
        &metasrv,
        &bucket,
        &lake::embedded::ReplicaOptions::default(),
    )
    .await;
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
    // The replica signed every part (a few hundred bytes of request each) and carried
    // none of the 20 MiB; Metasrv heard nothing.
    let after = received(&replica.received);
    assert!(
        after.0 - before.0 < 64 << 10,
        "Query received {} bytes during a {size}-byte upload",
        after.0 - before.0
    );
    assert_eq!(
        after.1, before.1,
        "Metasrv received bytes during the upload"
    );
    let file = resumed.file;

    // Read back in full (verified) and by range, byte-exact.
    assert!(
        read_all(&lake, &file).await == original,
        "the stored object differs"
    );
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
            // No storage credentials: the replica signs every request.
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env_remove("AWS_ENDPOINT_URL")
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

    // `lake file get` without credentials, through the replica, verified.
    let back = dir.path().join("video.back");
    let get = std::process::Command::new(env!("CARGO_BIN_EXE_lake"))
        .args(["file", "get", "--endpoint"])
        .arg(format!("http://{}", replica.addr))
        .arg(&video.uri)
        .arg("--out")
        .arg(&back)
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_ENDPOINT_URL")
        .output()
        .expect("lake file get");
    assert!(
        get.status.success(),
        "{}",
        String::from_utf8_lossy(&get.stderr)
    );
    assert!(std::fs::read(&back).expect("read back") == big_bytes);

    refused_stage_requests(replica.addr, stage.uri(), &sha256).await;
    grants_decide_stage_access(&metasrv, &bucket, &file).await;
    stage_gc_aborts_unfinished_uploads(&metasrv, &bucket, replica.addr).await;

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

/// One `lake.stage` action on the replica at `addr`, without a login.
async fn stage_call(
    addr: std::net::SocketAddr,
    request: lake_sdk::wire::StageRequest,
) -> Result<lake_sdk::wire::StageResponse, tonic::Status> {
    use prost::Message;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    let mut flight = arrow_flight::flight_service_client::FlightServiceClient::new(channel);
    let mut results = flight
        .do_action(arrow_flight::Action::new(
            lake_sdk::wire::ACTION_STAGE,
            request.encode_to_vec(),
        ))
        .await?
        .into_inner();
    let body = results.message().await?.expect("one result").body;
    Ok(lake_sdk::wire::StageResponse::decode(body).expect("StageResponse"))
}

/// Malformed `lake.stage` requests get INVALID_ARGUMENT naming what is wrong; a good one
/// is answered. `stage` is a table's stage URI, `sha256` an object on it.
async fn refused_stage_requests(addr: std::net::SocketAddr, stage: &str, sha256: &str) {
    use lake_sdk::wire::{StageOp, StageRequest};
    let good = StageRequest {
        stage_uri: stage.to_string(),
        sha256: sha256.to_string(),
        op: StageOp::Head as i32,
        ..Default::default()
    };
    let head = stage_call(addr, good.clone()).await.expect("head");
    assert!(head.found && head.size > 0, "{head:?}");
    // An upload in progress, for the checks that need a real upload id.
    let pending = StageRequest {
        sha256: "ef".repeat(32),
        ..good.clone()
    };
    let upload = stage_call(
        addr,
        StageRequest {
            op: StageOp::CreateMultipart as i32,
            ..pending.clone()
        },
    )
    .await
    .expect("create multipart")
    .upload_id;
    assert!(
        upload.starts_with("mp.") && upload.contains('~'),
        "{upload}"
    );
    let cases: Vec<(StageRequest, &str)> = vec![
        (
            StageRequest {
                stage_uri: "s3://another-bucket/anything/1".into(),
                ..good.clone()
            },
            "is not a table stage of this deployment",
        ),
        (
            StageRequest {
                stage_uri: format!("{stage}/../2"),
                ..good.clone()
            },
            "is not a table stage of this deployment",
        ),
        (
            StageRequest {
                sha256: "../../../etc/passwd".into(),
                op: StageOp::SignPut as i32,
                ..good.clone()
            },
            "is not 64 lowercase hex digits",
        ),
        (
            StageRequest {
                op: StageOp::SignPart as i32,
                upload_id: upload.clone(),
                part_number: 0,
                ..pending.clone()
            },
            "part number 0 is outside 1..=10000",
        ),
        (
            StageRequest {
                op: StageOp::Complete as i32,
                upload_id: upload.clone(),
                etags: vec!["e".into(); 10_001],
                ..pending.clone()
            },
            "10001 part ETags",
        ),
        // Upload ids are bound to the caller and the object: made up, altered or moved to
        // another object, they are refused.
        (
            StageRequest {
                op: StageOp::SignPart as i32,
                upload_id: "u".repeat(5000),
                part_number: 1,
                ..pending.clone()
            },
            "upload id of 5000 bytes was not handed out",
        ),
        (
            StageRequest {
                op: StageOp::SignPart as i32,
                upload_id: "some-upload".into(),
                part_number: 1,
                ..pending.clone()
            },
            "was not handed out",
        ),
        (
            StageRequest {
                op: StageOp::Complete as i32,
                upload_id: "put.../../sha256/x".into(),
                ..pending.clone()
            },
            "was not handed out",
        ),
        (
            StageRequest {
                op: StageOp::Abort as i32,
                upload_id: format!(
                    "{}{}",
                    &upload[..upload.len() - 1],
                    if upload.ends_with('0') { '1' } else { '0' }
                ),
                ..pending.clone()
            },
            "was not handed out",
        ),
        (
            StageRequest {
                op: StageOp::Abort as i32,
                upload_id: upload.clone(),
                ..good.clone()
            },
            "was not handed out",
        ),
        (
            StageRequest {
                op: StageOp::SignGet as i32,
                expires_secs: 8 * 24 * 3600,
                ..good.clone()
            },
            "at most 7 days",
        ),
        (
            StageRequest {
                op: StageOp::SignPut as i32,
                sha256: "cd".repeat(32),
                expires_secs: 3600,
                ..good.clone()
            },
            "only GET URLs take a lifetime",
        ),
        // An object on the stage is never replaced, by a single PUT or a multipart upload.
        (
            StageRequest {
                op: StageOp::SignPut as i32,
                ..good.clone()
            },
            "is already on the stage, verified",
        ),
        (
            StageRequest {
                op: StageOp::CreateMultipart as i32,
                ..good.clone()
            },
            "is already on the stage, verified",
        ),
        (
            StageRequest {
                op: 99,
                ..good.clone()
            },
            "unknown stage op 99",
        ),
    ];
    for (request, expected) in cases {
        let status = stage_call(addr, request.clone())
            .await
            .expect_err("refused");
        assert_eq!(
            status.code(),
            tonic::Code::InvalidArgument,
            "{request:?}: {status:?}"
        );
        assert!(
            status.message().contains(expected),
            "{expected:?} not in {:?}",
            status.message()
        );
    }
    // A presigned PUT carries the object's SHA-256 as a signed header, which S3 checks
    // against the bytes (moto does not, so only the signature is checked here).
    let put = stage_call(
        addr,
        StageRequest {
            op: StageOp::SignPut as i32,
            sha256: "ab".repeat(32),
            ..good.clone()
        },
    )
    .await
    .expect("sign put");
    assert_eq!(
        put.headers.get("x-amz-checksum-sha256").map(String::as_str),
        Some("q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s="),
        "{put:?}"
    );
    assert!(
        put.url
            .contains("X-Amz-SignedHeaders=host%3Bx-amz-checksum-sha256")
            || put
                .url
                .contains("X-Amz-SignedHeaders=host;x-amz-checksum-sha256"),
        "the checksum header is not part of the signature: {}",
        put.url
    );
    assert!(
        put.url.contains("/incoming/"),
        "a PUT lands in a staging key: {}",
        put.url
    );
    stage_call(
        addr,
        StageRequest {
            op: StageOp::Abort as i32,
            upload_id: upload,
            ..pending
        },
    )
    .await
    .expect("the upload's own id aborts it");

    // Bytes that do not hash to their address are never stored: not by a single PUT...
    let honest = b"bytes someone will upload later".to_vec();
    let address = {
        use sha2::Digest;
        sha2::Sha256::digest(&honest)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let junk = b"junk planted under that address".to_vec();
    let planted = StageRequest {
        sha256: address.clone(),
        ..good.clone()
    };
    let put = stage_call(
        addr,
        StageRequest {
            op: StageOp::SignPut as i32,
            ..planted.clone()
        },
    )
    .await
    .expect("sign put");
    let (status, _) = http_put(&put.url, &put.headers, &junk);
    assert_eq!(status, 200, "moto takes the PUT (it checks no checksum)");
    let refused = stage_call(
        addr,
        StageRequest {
            op: StageOp::Complete as i32,
            upload_id: put.upload_id.clone(),
            ..planted.clone()
        },
    )
    .await
    .expect_err("junk refused");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(
        refused.message().contains("not to the address"),
        "{refused:?}"
    );
    // ...nor by a multipart upload, which is deleted after the replica hashes it.
    let created = stage_call(
        addr,
        StageRequest {
            op: StageOp::CreateMultipart as i32,
            ..planted.clone()
        },
    )
    .await
    .expect("create multipart");
    let part = stage_call(
        addr,
        StageRequest {
            op: StageOp::SignPart as i32,
            upload_id: created.upload_id.clone(),
            part_number: 1,
            ..planted.clone()
        },
    )
    .await
    .expect("sign part");
    let (status, etag) = http_put(&part.url, &part.headers, &junk);
    assert_eq!(status, 200);
    let refused = stage_call(
        addr,
        StageRequest {
            op: StageOp::Complete as i32,
            upload_id: created.upload_id,
            etags: vec![etag.expect("ETag")],
            ..planted.clone()
        },
    )
    .await
    .expect_err("junk refused");
    assert!(
        refused.message().contains("not to the address"),
        "{refused:?}"
    );
    let head = stage_call(
        addr,
        StageRequest {
            op: StageOp::Head as i32,
            ..planted.clone()
        },
    )
    .await
    .expect("head");
    assert!(!head.found, "junk stayed at {address}");
    // The honest bytes then upload through the same path and are kept.
    let put = stage_call(
        addr,
        StageRequest {
            op: StageOp::SignPut as i32,
            ..planted.clone()
        },
    )
    .await
    .expect("sign put");
    assert_eq!(http_put(&put.url, &put.headers, &honest).0, 200);
    stage_call(
        addr,
        StageRequest {
            op: StageOp::Complete as i32,
            upload_id: put.upload_id,
            ..planted.clone()
        },
    )
    .await
    .expect("the honest bytes are kept");
    let head = stage_call(
        addr,
        StageRequest {
            op: StageOp::Head as i32,
            ..planted
        },
    )
    .await
    .expect("head");
    assert!(head.found && head.size == honest.len() as u64, "{head:?}");

    let stage_of_nothing = format!("{}/999999", stage.rsplit_once('/').expect("stage root").0);
    let status = stage_call(
        addr,
        StageRequest {
            stage_uri: stage_of_nothing,
            ..good
        },
    )
    .await
    .expect_err("no such table");
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
}

/// A replica with logins over the same Metasrv and warehouse: a reader of namespace
/// `default` reads `file` through presigned URLs but cannot upload; a user without a grant
/// can do neither; and none of them holds storage credentials of its own.
async fn grants_decide_stage_access(metasrv: &Metasrv, bucket: &str, file: &lake_sdk::FileRef) {
    let mut users = lake_query::auth::Users::default();
    for (name, password) in [
        ("root", "root-pw"),
        ("reader", "reader-pw"),
        ("stranger", "s-pw"),
    ] {
        users.set(name, password).expect("user");
    }
    users.set_admin("root", true);
    let options = lake::embedded::ReplicaOptions {
        auth: lake::embedded::AuthOptions {
            users: Some(users),
            token_ttl: Duration::from_secs(600),
            ..Default::default()
        },
        ..Default::default()
    };
    let replica = replica(metasrv, bucket, &options).await;
    let login = |user: &'static str, password: &'static str| {
        let endpoint = format!("http://{}", replica.addr);
        async move {
            let mut lake = LakeClient::connect(&endpoint).await.expect("connect");
            lake.login(user, password).await.expect("login");
            lake
        }
    };
    let mut root = login("root", "root-pw").await;
    root.sql("GRANT SELECT ON SCHEMA default TO reader")
        .await
        .expect("grant");

    let mut reader = login("reader", "reader-pw").await;
    let chunks: Vec<bytes::Bytes> = reader
        .open_file(file)
        .await
        .expect("a reader opens the file")
        .try_collect()
        .await
        .expect("and reads it, verified");
    assert_eq!(
        chunks.iter().map(|c| c.len() as u64).sum::<u64>(),
        file.size
    );
    let stage = reader
        .stage("models")
        .await
        .expect("a reader sees the stage");
    let url = stage
        .presigned_url(file, Duration::from_secs(60))
        .await
        .expect("a reader gets a presigned URL");
    assert!(url.contains("X-Amz-Signature="), "{url}");
    let dir = tempfile::tempdir().expect("tempdir");
    let small = dir.path().join("note.txt");
    std::fs::write(&small, b"a reader may not upload this").expect("write");
    let refused = stage
        .upload_path(&small, "text/plain", &UploadOptions::default())
        .await
        .expect_err("a reader may not upload");
    assert!(
        matches!(&refused, SdkError::Server { code: tonic::Code::PermissionDenied, message }
            if message.contains("reader may not upload files to lake.default.models")),
        "{refused:?}"
    );

    // A writer's one-part upload (a presigned PUT carrying the checksum header), read
    // back by the reader.
    let note = root
        .stage("models")
        .await
        .expect("stage")
        .upload_path(&small, "text/plain", &UploadOptions::default())
        .await
        .expect("root uploads");
    assert_eq!(note.sent_parts, 1, "{note:?}");
    let back = reader
        .read_range(&note.file, 0..note.file.size)
        .await
        .expect("the reader reads the note");
    assert_eq!(&back[..], b"a reader may not upload this");

    let stranger = login("stranger", "s-pw").await;
    let refused = stranger
        .stat_file(&file.uri)
        .await
        .expect_err("a stranger may not read");
    assert!(
        matches!(&refused, SdkError::Server { code: tonic::Code::PermissionDenied, message }
            if message.contains("stranger may not reach stage")
                && !message.contains("models")),
        "{refused:?}"
    );
    // The same words for a stage no table has: nothing tells which tables exist.
    let stage_root = file
        .uri
        .split("/sha256/")
        .next()
        .expect("stage")
        .rsplit_once('/')
        .expect("root")
        .0;
    let refused_too = stranger
        .stat_file(&format!("{stage_root}/999999/sha256/{}", file.sha256))
        .await
        .expect_err("a stranger may not read");
    let words = |e: &SdkError| {
        e.to_string()
            .replace(&format!("{stage_root}/999999"), "S")
            .replace(file.uri.split("/sha256/").next().unwrap_or_default(), "S")
    };
    assert_eq!(words(&refused), words(&refused_too));
    // Without a login, nothing at all.
    let anonymous = LakeClient::connect(&format!("http://{}", replica.addr))
        .await
        .expect("connect");
    let refused = anonymous.stat_file(&file.uri).await.expect_err("no login");
    assert!(
        matches!(
            &refused,
            SdkError::Server {
                code: tonic::Code::Unauthenticated,
                ..
            }
        ),
        "{refused:?}"
    );
}

/// Stage garbage collection aborts S3 multipart uploads left unfinished longer than the
/// grace (S3 keeps, and bills, their parts until then, and object listings never show
/// them): an upload that crashed after two parts is kept by a replica whose grace has not
/// passed, listed with its bytes by a dry run and aborted by `VACUUM` on a replica whose
/// grace is 0; resuming it then fails, and a new upload starts over. `default_replica` keeps the default grace (1 day).
async fn stage_gc_aborts_unfinished_uploads(
    metasrv: &Metasrv,
    bucket: &str,
    default_replica: std::net::SocketAddr,
) {
    let mut patient = LakeClient::connect(&format!("http://{default_replica}"))
        .await
        .expect("sdk");
    patient
        .sql("CREATE TABLE clips (id BIGINT NOT NULL, clip FILE)")
        .await
        .expect("create");
    let stage = patient.stage("clips").await.expect("stage");
    let dir = tempfile::tempdir().expect("tempdir");
    let source = dir.path().join("clip.mp4");
    let original = bytes(PART_SIZE_MIN * 3 + 77, 7);
    std::fs::write(&source, &original).expect("write");
    let checkpoints = dir.path().join("checkpoints");
    let options = |progress: Option<lake_sdk::stage::ProgressFn>| UploadOptions {
        part_size: PART_SIZE_MIN,
        concurrency: 1,
        checkpoint_dir: Some(checkpoints.clone()),
        progress,
        force: false,
    };
    let crashing = options(Some(Arc::new(|p| {
        if let Progress::Uploading { done, .. } = p
            && done >= 2 * PART_SIZE_MIN as u64
        {
            panic!("simulated crash after two parts");
        }
    })));
    let crash = tokio::spawn({
        let (stage, source) = (stage.clone(), source.clone());
        async move { stage.upload_path(&source, "video/mp4", &crashing).await }
    })
    .await;
    assert!(
        crash.is_err_and(|e| e.is_panic()),
        "the upload should have died"
    );
    let direct = lake_sdk::Stage::open(stage.uri()).expect("stage with the bucket's credentials");
    let unfinished = direct
        .list_unfinished_uploads()
        .await
        .expect("list uploads");
    assert_eq!(unfinished.len(), 1, "{unfinished:?}");
    assert_eq!(
        unfinished[0].bytes,
        2 * PART_SIZE_MIN as u64,
        "{unfinished:?}"
    );
    // moto answers a fixed 2010 `Initiated`; the parts' `LastModified` are real.
    let hour_ago = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
        - 3_600_000;
    assert!(unfinished[0].last_active_ms > hour_ago, "{unfinished:?}");
    assert!(
        unfinished[0].key.starts_with("sha256/") && unfinished[0].uri.ends_with(&unfinished[0].key),
        "{unfinished:?}"
    );
    assert!(
        direct.list_objects().await.expect("list").is_empty(),
        "an unfinished upload is an object"
    );

    // Within the default grace (1 day) nothing goes.
    let kept = patient
        .collect_stage_garbage("clips", false)
        .await
        .expect("gc");
    assert!(kept.aborted.is_empty(), "{kept:?}");
    assert_eq!(kept.recent_uploads, 1, "{kept:?}");
    assert_eq!(
        direct.list_unfinished_uploads().await.expect("list").len(),
        1
    );

    // Past the grace: a dry run lists it with its bytes, VACUUM aborts it.
    let hasty = replica(
        metasrv,
        bucket,
        &lake::embedded::ReplicaOptions {
            maintenance: lake_query::dataset::Maintenance {
                stage_gc_grace_ms: 0,
                ..lake_query::dataset::Maintenance::DEFAULT
            },
            ..Default::default()
        },
    )
    .await;
    let mut lake = LakeClient::connect(&format!("http://{}", hasty.addr))
        .await
        .expect("sdk");
    let dry = lake
        .collect_stage_garbage("clips", true)
        .await
        .expect("dry run");
    assert!(!dry.applied && dry.removed.is_empty(), "{dry:?}");
    assert_eq!(dry.aborted.len(), 1, "{dry:?}");
    assert_eq!(dry.aborted[0].uri, unfinished[0].uri);
    assert_eq!(dry.aborted[0].bytes, 2 * PART_SIZE_MIN as u64);
    assert_eq!(dry.aborted[0].last_active_ms, unfinished[0].last_active_ms);
    assert_eq!(
        direct.list_unfinished_uploads().await.expect("list"),
        unfinished,
        "a dry run aborted something"
    );
    let vacuum = lake.sql("VACUUM clips").await.expect("vacuum");
    let count = vacuum[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("count")
        .value(0);
    assert_eq!(count, 1, "VACUUM counts the aborted upload");
    assert!(
        direct
            .list_unfinished_uploads()
            .await
            .expect("list")
            .is_empty(),
        "VACUUM left the upload"
    );

    // The checkpoint names an upload S3 no longer has: resuming it fails. (S3 answers
    // 404 NoSuchUpload, on which the SDK drops the checkpoint, as a unit test of
    // `upload_is_gone` checks; moto answers 500, an unknown upload id being a KeyError
    // there, so that recovery is not reached here.) A new upload starts over.
    let resumed = stage
        .upload_path(&source, "video/mp4", &options(None))
        .await;
    assert!(resumed.is_err(), "an aborted upload resumed: {resumed:?}");
    let again = stage
        .upload_path(
            &source,
            "video/mp4",
            &UploadOptions {
                checkpoint_dir: None,
                ..options(None)
            },
        )
        .await
        .expect("upload again");
    assert_eq!((again.resumed_parts, again.sent_parts), (0, 4), "{again:?}");
    assert!(
        read_all(&lake, &again.file).await == original,
        "the new upload's bytes differ"
    );
}

/// Every byte of `file`, read (and verified) through `lake`.
async fn read_all(lake: &LakeClient, file: &lake_sdk::FileRef) -> Vec<u8> {
    let chunks: Vec<bytes::Bytes> = lake
        .open_file(file)
        .await
        .expect("open")
        .try_collect()
        .await
        .expect("read");
    chunks.concat()
}

/// A Query replica over `metasrv` (served on a port of its own) and an S3 warehouse in
/// `bucket`, in this process.
async fn replica(
    metasrv: &Metasrv,
    bucket: &str,
    options: &lake::embedded::ReplicaOptions,
) -> lake::embedded::QueryReplica {
    let address = metasrv
        .clone()
        .spawn_server("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("metasrv server");
    let client = MetasrvClient::connect(&format!("http://{address}"))
        .await
        .expect("metasrv client");
    lake::embedded::start_query(
        client,
        &format!("s3://{bucket}/warehouse"),
        options,
        TicketKey::new(&[5; 32]).expect("key"),
        "127.0.0.1:0".parse().expect("addr"),
        std::future::pending(),
    )
    .await
    .expect("query replica")
}

/// One HTTP/1.1 PUT of `body` with `headers` to `url` (moto on 127.0.0.1); returns the
/// status and the ETag answered.
fn http_put(
    url: &str,
    headers: &std::collections::HashMap<String, String>,
    body: &[u8],
) -> (u16, Option<String>) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    assert!(
        host.starts_with("127.0.0.1:"),
        "tests talk to 127.0.0.1 only: {url}"
    );
    let mut stream = std::net::TcpStream::connect(host).expect("connect to moto");
    let mut head = format!(
        "PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("head");
    stream.write_all(body).expect("body");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("response");
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let etag = text.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("etag")
            .then(|| value.trim().to_string())
    });
    (status, etag)
}
