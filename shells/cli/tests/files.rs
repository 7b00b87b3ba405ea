//! FILE columns end to end on the embedded server with its local-filesystem stage: the
//! SDK uploads straight to the stage, rows carry FILE values through the normal append
//! path, Query refuses values that are not on the stage as they claim, reads verify, and
//! neither Query nor Metasrv receives a FILE byte.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use arrow::array::{Array, Int64Array, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use common::bytes;
use futures::TryStreamExt;
use lake_sdk::stage::PART_SIZE_MIN;
use lake_sdk::{FileRef, LakeClient, SdkError, UploadOptions, file_array, file_field, file_refs};

struct Lake {
    server: lake::embedded::Embedded,
    dir: tempfile::TempDir,
}

impl Lake {
    async fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let server = lake::embedded::start(
            &dir.path().join("data"),
            "127.0.0.1:0".parse().expect("addr"),
            std::future::pending(),
        )
        .await
        .expect("embedded server");
        Self { server, dir }
    }

    /// Bytes Query and Metasrv have read from their connections so far.
    fn received(&self) -> (u64, u64) {
        (
            self.server.query_received.load(Ordering::Relaxed),
            self.server.metasrv.bytes_received(),
        )
    }

    fn options(&self) -> UploadOptions {
        UploadOptions {
            part_size: PART_SIZE_MIN,
            concurrency: 2,
            checkpoint_dir: Some(self.dir.path().join("checkpoints")),
            progress: None,
            force: false,
        }
    }
}

fn rows(ids: &[i64], files: &[Option<FileRef>]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        file_field("clip", true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(file_array(files)),
        ],
    )
    .expect("batch")
}

async fn count(lake: &mut LakeClient, table: &str) -> i64 {
    let batches = lake
        .sql(&format!("SELECT count(*) AS n FROM {table}"))
        .await
        .expect("count");
    batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("i64")
        .value(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_travel_beside_rows_never_through_servers() {
    let lake = Lake::start().await;
    let mut client = LakeClient::connect(&lake.server.endpoint())
        .await
        .expect("connect");
    client
        .sql("CREATE TABLE media (id BIGINT NOT NULL, clip FILE)")
        .await
        .expect("create with a FILE column");
    let stage = client.stage("media").await.expect("stage");

    // A file larger than the part size by a non-multiple, a small one, an empty one.
    let sizes = [PART_SIZE_MIN * 2 + 4_321, 1_000, 0];
    let mut sources = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        let path = lake.dir.path().join(format!("source-{i}.bin"));
        std::fs::write(&path, bytes(*size, i as u64 + 1)).expect("write source");
        sources.push(path);
    }

    let before = lake.received();
    let mut files = Vec::new();
    for path in &sources {
        let up = stage
            .upload_path(path, "application/octet-stream", &lake.options())
            .await
            .expect("upload");
        assert!(!up.deduplicated);
        files.push(up.file);
    }
    assert_eq!(
        lake.received(),
        before,
        "Query or Metasrv received bytes while FILE bytes were uploaded"
    );
    assert_eq!(
        files.iter().map(|f| f.size).collect::<Vec<_>>(),
        sizes.iter().map(|&s| s as u64).collect::<Vec<_>>()
    );

    // Appending the rows sends metadata only: far less than one file.
    let before = lake.received();
    let batch = rows(
        &[1, 2, 3, 4],
        &[
            Some(files[0].clone()),
            Some(files[1].clone()),
            Some(files[2].clone()),
            None,
        ],
    );
    client
        .append("media", vec![batch], "op-1")
        .await
        .expect("append");
    let after = lake.received();
    let sent = (after.0 - before.0) + (after.1 - before.1);
    // The counters count: the append itself reached Query, which committed at Metasrv.
    assert!(
        after.0 > before.0 && after.1 > before.1,
        "{before:?} {after:?}"
    );
    assert!(
        sent < 64 << 10,
        "an append of 4 FILE values sent {sent} bytes to the servers"
    );

    // The values come back through SQL, as FILE values, with their functions.
    let result = client
        .sql("SELECT id, clip, file_size(clip) AS size, file_uri(clip) AS uri FROM media ORDER BY id")
        .await
        .expect("select");
    let batch = arrow::compute::concat_batches(&result[0].schema(), &result).expect("concat");
    assert!(
        lake_sdk::file::is_file_field(batch.schema().field(1)),
        "the result keeps the lake.file extension type: {:?}",
        batch.schema().field(1)
    );
    let got = file_refs(batch.column(1).as_ref()).expect("FILE values");
    assert_eq!(
        got,
        vec![
            Some(files[0].clone()),
            Some(files[1].clone()),
            Some(files[2].clone()),
            None
        ]
    );
    let size = batch
        .column(2)
        .as_any()
        .downcast_ref::<UInt64Array>()
        .expect("u64");
    assert_eq!(size.value(0), sizes[0] as u64);
    assert!(size.is_null(3));

    // Every file reads back byte-exact, through the SDK, in full and by range.
    for (i, file) in files.iter().enumerate() {
        let chunks: Vec<bytes::Bytes> = client
            .open_file(file)
            .await
            .expect("open")
            .try_collect()
            .await
            .expect("read");
        assert_eq!(chunks.concat(), bytes(sizes[i], i as u64 + 1), "file {i}");
    }
    let tail = client
        .read_range(&files[0], files[0].size - 10..files[0].size)
        .await
        .expect("range");
    assert_eq!(&tail[..], &bytes(sizes[0], 1)[sizes[0] - 10..]);

    // Uploading the same bytes again stores nothing new.
    let again = stage
        .upload_path(&sources[0], "application/octet-stream", &lake.options())
        .await
        .expect("again");
    assert!(again.deduplicated);
    assert_eq!(again.file.uri, files[0].uri);

    // A reader (not a path) uploads through the same stage.
    let from_reader = client
        .upload_reader("media", &b"streamed, not a file"[..], "text/plain")
        .await
        .expect("upload a reader");
    assert_eq!(from_reader.size, 20);
    let back = client
        .read_range(&from_reader, 0..from_reader.size)
        .await
        .expect("read");
    assert_eq!(&back[..], b"streamed, not a file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_with_files_not_on_the_stage_are_refused_and_commit_nothing() {
    let lake = Lake::start().await;
    let mut client = LakeClient::connect(&lake.server.endpoint())
        .await
        .expect("connect");
    let schema = rows(&[], &[]).schema();
    client.create_table("clips", schema).await.expect("create");
    client
        .sql("CREATE TABLE other (id BIGINT NOT NULL, clip FILE)")
        .await
        .expect("other");
    let path = lake.dir.path().join("clip.bin");
    std::fs::write(&path, bytes(5_000, 9)).expect("write");
    let stage = client.stage("clips").await.expect("stage");
    let good = stage
        .upload_path(&path, "video/mp4", &lake.options())
        .await
        .expect("upload")
        .file;
    client
        .append("clips", vec![rows(&[1], &[Some(good.clone())])], "ok")
        .await
        .expect("a FILE on the stage is accepted");

    let on_other_stage = client
        .stage("other")
        .await
        .expect("other stage")
        .upload_path(&path, "video/mp4", &lake.options())
        .await
        .expect("upload to other")
        .file;
    let mut wrong_size = good.clone();
    wrong_size.size += 1;
    let mut absent = good.clone();
    absent.sha256 = "ab".repeat(32);
    absent.uri = format!("{}/sha256/{}", stage.uri(), absent.sha256);
    let mut wrong_checksum = good.clone();
    wrong_checksum.sha256 = "cd".repeat(32);
    let cases = [
        (absent, "is not on the stage"),
        (wrong_size, "bytes on the stage but the value says"),
        (wrong_checksum, "is not on stage"),
        (on_other_stage, "is not on stage"),
    ];
    for (i, (file, expected)) in cases.into_iter().enumerate() {
        let batch = rows(&[10, 11], &[Some(good.clone()), Some(file)]);
        let e = client
            .append("clips", vec![batch], &format!("bad-{i}"))
            .await
            .expect_err("refused");
        let SdkError::Server { code, message } = &e else {
            panic!("case {i}: {e}");
        };
        assert_eq!(*code, tonic::Code::InvalidArgument, "case {i}: {message}");
        assert!(
            message.contains(expected) && message.contains("column clip"),
            "case {i}: {message}"
        );
    }
    assert_eq!(
        count(&mut client, "clips").await,
        1,
        "a refused append wrote rows"
    );

    // INSERT with a FILE value from its JSON goes through the same check.
    let json = serde_json::to_string(&good).expect("json");
    client
        .sql(&format!("INSERT INTO clips VALUES (2, file_ref('{json}'))"))
        .await
        .expect("insert");
    let mut bad = good.clone();
    bad.size = 1;
    let json = serde_json::to_string(&bad).expect("json");
    let e = client
        .sql(&format!("INSERT INTO clips VALUES (3, file_ref('{json}'))"))
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("bytes on the stage"), "{e}");
    let e = client
        .sql("INSERT INTO clips VALUES (3, file_ref('{\"uri\": 1}'))")
        .await
        .expect_err("malformed JSON");
    assert!(e.to_string().contains("file_ref"), "{e}");

    // A FILE value built without file_ref is checked as strictly at append.
    let e = client
        .sql(&format!(
            "INSERT INTO clips VALUES (4, named_struct('uri', '{}', 'size', arrow_cast({}, 'UInt64'), 'sha256', '{}', 'media_type', concat('video/mp4', chr(10), 'X: 1'), 'uploaded_at', now()))",
            good.uri, good.size, good.sha256
        ))
        .await
        .expect_err("a media type with a newline");
    assert!(e.to_string().contains("media type"), "{e}");
    assert_eq!(count(&mut client, "clips").await, 2);

    // FILE nests nowhere, and files are staged only for tables with a FILE column.
    for ddl in [
        "CREATE TABLE nested (id BIGINT, s STRUCT<f FILE>)",
        "CREATE TABLE listed (id BIGINT, f FILE[])",
    ] {
        let e = client.sql(ddl).await.expect_err(ddl);
        assert!(
            e.to_string().contains("FILE must be the type of a column"),
            "{e}"
        );
    }
    client
        .sql("CREATE TABLE plain (v BIGINT)")
        .await
        .expect("plain");
    let e = client.stage("plain").await.expect_err("no FILE column");
    assert!(e.to_string().contains("has no FILE column"), "{e}");

    // The FILE functions take FILE values or NULL, and say so.
    let null = client
        .sql("SELECT file_size(NULL) AS s")
        .await
        .expect("file_size(NULL)");
    assert!(null[0].column(0).is_null(0));
    let e = client
        .sql("SELECT file_size(1)")
        .await
        .expect_err("not a FILE");
    assert!(
        e.to_string()
            .contains("file_size takes a FILE value, got Int64"),
        "{e}"
    );

    // Results larger than tonic's default 4 MiB message reach the SDK.
    let big = client
        .sql("SELECT repeat('x', 6000000) AS big")
        .await
        .expect("a 6 MB value");
    assert_eq!(
        big[0]
            .column(0)
            .as_any()
            .downcast_ref::<arrow::array::StringArray>()
            .expect("utf8")
            .value(0)
            .len(),
        6_000_000
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_stored_object_is_an_error_never_bad_data() {
    let lake = Lake::start().await;
    let mut client = LakeClient::connect(&lake.server.endpoint())
        .await
        .expect("connect");
    client
        .sql("CREATE TABLE weights (id BIGINT NOT NULL, clip FILE)")
        .await
        .expect("create");
    let original = bytes(PART_SIZE_MIN + 17, 3);
    let path = lake.dir.path().join("w.bin");
    std::fs::write(&path, &original).expect("write");
    let stage = client.stage("weights").await.expect("stage");
    let file = stage
        .upload_path(&path, "application/octet-stream", &lake.options())
        .await
        .expect("upload")
        .file;
    // Same length, one byte flipped, written behind Lake's back.
    let stored = file.uri.strip_prefix("file://").expect("local uri");
    let mut corrupted = original.clone();
    corrupted[original.len() / 3] ^= 1;
    std::fs::write(stored, &corrupted).expect("corrupt");

    let read: Result<Vec<bytes::Bytes>, SdkError> = client
        .open_file(&file)
        .await
        .expect("open")
        .try_collect()
        .await;
    let e = read.expect_err("a corrupted object must not read as good");
    assert!(
        matches!(&e, SdkError::Corrupt { message, .. } if message.contains(&file.sha256)),
        "{e}"
    );
    let out = lake.dir.path().join("out.bin");
    assert!(stage.download(&file, &out, None).await.is_err());
    assert!(!out.exists(), "a failed download left a file behind");
    // Truncated: the size check in append refuses rows naming it.
    std::fs::write(stored, &original[..100]).expect("truncate");
    let e = client
        .append(
            "weights",
            vec![rows(&[1], &[Some(file)])],
            "after-truncation",
        )
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("bytes on the stage"), "{e}");
}
