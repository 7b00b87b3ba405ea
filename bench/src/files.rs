//! The `files` section: a FILE upload and download through the SDK (hash, content-addressed
//! multipart upload to the table's stage; verified streaming read) against a raw
//! object_store multipart put and streaming get of the same bytes on the same local store,
//! in the same run. Each transfer runs in its own child process (`lake-bench transfer …`),
//! so its peak RSS (`VmHWM`) is its own.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use clap::{Args as ClapArgs, ValueEnum};
use futures::StreamExt;
use lake_sdk::stage::{CONCURRENCY_DEFAULT, PART_SIZE_DEFAULT};
use lake_sdk::{LakeClient, Stage, UploadOptions};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStoreExt, WriteMultipart};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::child;
use crate::report::Files;

/// What one transfer child does.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `LakeClient::stage` + `Stage::upload_path` of FROM to table TO at ENDPOINT.
    LakePut,
    /// `Stage::stat` + `Stage::download` of FILE uri FROM to path TO.
    LakeGet,
    /// object_store `WriteMultipart` of FROM to the absolute path TO.
    RawPut,
    /// object_store `get` of the absolute path FROM, streamed to path TO.
    RawGet,
}

/// Arguments of the hidden `transfer` subcommand.
#[derive(ClapArgs, Debug)]
pub struct Transfer {
    #[arg(long, value_enum)]
    kind: Kind,
    #[arg(long)]
    from: String,
    #[arg(long)]
    to: String,
    #[arg(long, default_value = "")]
    endpoint: String,
}

/// What a transfer child prints, as one JSON line.
#[derive(Serialize, Deserialize, Debug)]
struct Measured {
    seconds: f64,
    peak_rss_bytes: u64,
    /// The FILE uri (lake-put only).
    uri: String,
}

/// The child's side: runs one transfer and prints its [`Measured`].
///
/// # Errors
/// The transfer fails.
pub async fn transfer(t: &Transfer) -> anyhow::Result<()> {
    let start = Instant::now();
    let mut uri = String::new();
    match t.kind {
        Kind::LakePut => {
            let mut lake = LakeClient::connect(&t.endpoint).await?;
            let stage = lake.stage(&t.to).await?;
            let options = UploadOptions {
                checkpoint_dir: None,
                ..UploadOptions::default()
            };
            let up = stage
                .upload_path(Path::new(&t.from), "application/octet-stream", &options)
                .await?;
            anyhow::ensure!(!up.deduplicated, "the stage already held the bytes");
            uri = up.file.uri;
        }
        Kind::LakeGet => {
            let (stage, file) = Stage::stat(&t.from).await?;
            stage.download(&file, Path::new(&t.to), None).await?;
        }
        Kind::RawPut => {
            let store = LocalFileSystem::new();
            let upload = store
                .put_multipart(&ObjectPath::from_absolute_path(&t.to)?)
                .await?;
            let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE_DEFAULT);
            let mut file = tokio::fs::File::open(&t.from).await?;
            loop {
                writer.wait_for_capacity(CONCURRENCY_DEFAULT).await?;
                let mut chunk = Vec::with_capacity(PART_SIZE_DEFAULT);
                let mut limited = (&mut file).take(PART_SIZE_DEFAULT as u64);
                while limited.read_buf(&mut chunk).await? > 0 {}
                if chunk.is_empty() {
                    break;
                }
                writer.put(chunk.into());
            }
            writer.finish().await?;
        }
        Kind::RawGet => {
            let store = LocalFileSystem::new();
            let got = store.get(&ObjectPath::from_absolute_path(&t.from)?).await?;
            let mut out = tokio::fs::File::create(&t.to).await?;
            let mut stream = got.into_stream();
            while let Some(chunk) = stream.next().await {
                out.write_all(&chunk?).await?;
            }
            out.flush().await?;
            out.sync_all().await?;
        }
    }
    let measured = Measured {
        seconds: start.elapsed().as_secs_f64(),
        peak_rss_bytes: child::peak_rss_bytes("self").unwrap_or(0),
        uri,
    };
    println!("{}", serde_json::to_string(&measured)?);
    Ok(())
}

fn run_transfer(kind: Kind, from: &str, to: &str, endpoint: &str) -> anyhow::Result<Measured> {
    let name = format!("{kind:?}");
    let out = Command::new(std::env::current_exe()?)
        .arg("transfer")
        .arg("--kind")
        .arg(
            kind.to_possible_value()
                .context("transfer kind")?
                .get_name(),
        )
        .args(["--from", from, "--to", to, "--endpoint", endpoint])
        .output()
        .with_context(|| format!("running the {name} child"))?;
    anyhow::ensure!(
        out.status.success(),
        "the {name} child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "the {name} child printed {:?}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Writes `mib` MiB of pseudo-random bytes (xorshift; incompressible) to `path`.
fn generate(path: &Path, mib: u64) -> anyhow::Result<()> {
    use std::io::Write;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut block = vec![0u8; 1 << 20];
    for _ in 0..mib {
        for word in block.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            word.copy_from_slice(&x.to_le_bytes());
        }
        file.write_all(&block)?;
    }
    file.flush()?;
    Ok(())
}

/// Whether two files hold the same bytes (read in 8 MiB blocks).
fn same_bytes(a: &Path, b: &Path) -> anyhow::Result<bool> {
    use std::io::Read;
    if std::fs::metadata(a)?.len() != std::fs::metadata(b)?.len() {
        return Ok(false);
    }
    let (mut a, mut b) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut x, mut y) = (vec![0u8; 8 << 20], vec![0u8; 8 << 20]);
    loop {
        let n = a.read(&mut x)?;
        if n == 0 {
            return Ok(true);
        }
        b.read_exact(&mut y[..n])?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
}

/// Runs the section with a `mib` MiB file under `work`.
///
/// # Errors
/// A transfer fails, or a downloaded copy differs from the source.
pub async fn files(work: &Path, mib: u64) -> anyhow::Result<Files> {
    let dir = work.join("files");
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let server = child::Server::spawn(&dir.join("lake"))?;
    let mut lake = LakeClient::connect(&server.endpoint).await?;
    lake.sql("CREATE TABLE bench_files (id BIGINT NOT NULL, blob FILE)")
        .await?;
    let source = dir.join("source.bin");
    eprintln!("lake-bench: files: writing a {mib} MiB source file");
    generate(&source, mib)?;
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let raw_object = dir.join("raw-stage").join("object");
    std::fs::create_dir_all(dir.join("raw-stage"))?;
    let raw_out = dir.join("raw-out.bin");
    let lake_out = dir.join("lake-out.bin");

    eprintln!("lake-bench: files: uploading and downloading, raw object_store then Lake");
    let raw_put = run_transfer(Kind::RawPut, &path(&source), &path(&raw_object), "")?;
    let lake_put = run_transfer(
        Kind::LakePut,
        &path(&source),
        "bench_files",
        &server.endpoint,
    )?;
    let raw_get = run_transfer(Kind::RawGet, &path(&raw_object), &path(&raw_out), "")?;
    let lake_get = run_transfer(Kind::LakeGet, &lake_put.uri, &path(&lake_out), "")?;
    let verified = same_bytes(&source, &lake_out)? && same_bytes(&source, &raw_out)?;
    for f in [&source, &raw_object, &raw_out, &lake_out] {
        let _ = std::fs::remove_file(f);
    }
    server.stop()?;
    anyhow::ensure!(verified, "a downloaded copy differs from the source file");
    let bytes = mib << 20;
    let rate = |m: &Measured| bytes as f64 / 1048576.0 / m.seconds;
    Ok(Files {
        file_bytes: bytes,
        part_size_bytes: PART_SIZE_DEFAULT as u64,
        concurrency: CONCURRENCY_DEFAULT,
        lake_upload_mib_per_s: rate(&lake_put),
        raw_upload_mib_per_s: rate(&raw_put),
        upload_ratio_vs_raw: rate(&lake_put) / rate(&raw_put),
        lake_download_mib_per_s: rate(&lake_get),
        raw_download_mib_per_s: rate(&raw_get),
        download_ratio_vs_raw: rate(&lake_get) / rate(&raw_get),
        lake_upload_peak_rss_bytes: lake_put.peak_rss_bytes,
        raw_upload_peak_rss_bytes: raw_put.peak_rss_bytes,
        lake_download_peak_rss_bytes: lake_get.peak_rss_bytes,
        raw_download_peak_rss_bytes: raw_get.peak_rss_bytes,
        copies_verified: verified,
    })
}
