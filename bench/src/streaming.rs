//! The `streaming` section: a streaming producer's thousands of one-row appends to one
//! table through the SDK, on an embedded `lake serve` in this process, with Lake's table
//! maintenance on (compaction of small fragments, cleanup of expired versions' files) and,
//! as the baseline in the same run, off. Per window of appends: the append rate, and the
//! bytes of Lance manifests and the files on disk under the table.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use arrow::array::Int64Array;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use lake_query::dataset::Maintenance;
use lake_sdk::LakeClient;

use crate::report::{Streaming, StreamingRun, StreamingWindow};

/// Windows each run is reported in.
const WINDOWS: usize = 10;

/// Both runs: `appends` one-row appends each, maintenance on and off.
pub async fn streaming(work: &Path, appends: usize) -> anyhow::Result<Streaming> {
    let window = appends.div_ceil(WINDOWS).max(1);
    let off = Maintenance {
        compact_at_small_fragments: 0,
        cleanup_every_versions: 0,
        ..Maintenance::DEFAULT
    };
    // Expired versions' files go at once, so the steady state shows within a short run
    // (the default keeps them an hour after their commit for queries that pinned them).
    let on = Maintenance {
        cleanup_grace_ms: 0,
        ..Maintenance::DEFAULT
    };
    let without = run(&work.join("streaming-off"), appends, window, off).await?;
    let with = run(&work.join("streaming-on"), appends, window, on).await?;
    let rate = |r: &StreamingRun| r.windows.last().map_or(0.0, |w| w.appends_per_s);
    Ok(Streaming {
        appends,
        window,
        ratio_last_window_rate_on_vs_off: rate(&with) / rate(&without).max(1e-9),
        ratio_manifest_bytes_on_vs_off: with.windows.last().map_or(0, |w| w.manifest_bytes) as f64
            / without
                .windows
                .last()
                .map_or(1, |w| w.manifest_bytes.max(1)) as f64,
        with,
        without,
    })
}

/// One run on a fresh data directory.
async fn run(
    data: &Path,
    appends: usize,
    window: usize,
    maintenance: Maintenance,
) -> anyhow::Result<StreamingRun> {
    let on = maintenance.compact_at_small_fragments > 0;
    eprintln!(
        "lake-bench: streaming {appends} one-row appends, maintenance {} ...",
        if on { "on" } else { "off" }
    );
    std::fs::create_dir_all(data)?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = lake::embedded::ReplicaOptions {
        maintenance,
        ..Default::default()
    };
    let server = lake::embedded::start_with(data, "127.0.0.1:0".parse()?, &options, async {
        let _ = stopped.await;
    })
    .await?;
    let mut lake = LakeClient::connect(&server.endpoint()).await?;
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    lake.create_table("default.events", schema.clone()).await?;
    let mut windows = Vec::new();
    let mut started = Instant::now();
    for i in 0..appends {
        let id = i64::try_from(i)?;
        let row = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![id]))])?;
        lake.append("default.events", vec![row], &format!("event-{i}"))
            .await
            .with_context(|| format!("append {i}"))?;
        if (i + 1) % window == 0 || i + 1 == appends {
            let done = (i + 1) % window;
            let count = if done == 0 { window } else { done };
            let seconds = started.elapsed().as_secs_f64();
            let (manifest_bytes, files) = on_disk(data)?;
            windows.push(StreamingWindow {
                appends_done: i + 1,
                appends_per_s: count as f64 / seconds.max(1e-9),
                manifest_bytes,
                files,
            });
            started = Instant::now();
        }
    }
    let batches = lake.sql("SELECT count(*) AS n FROM default.events").await?;
    let rows = batches
        .first()
        .and_then(|b| b.column(0).as_any().downcast_ref::<Int64Array>())
        .map_or(0, |a| a.value(0));
    anyhow::ensure!(
        rows == i64::try_from(appends)?,
        "the table holds {rows} rows after {appends} one-row appends"
    );
    let _ = stop.send(());
    server.wait().await?;
    Ok(StreamingRun { windows })
}

/// Bytes of the Lance manifests (`_versions/*.manifest`) and the number of files under
/// the one table's dataset directory in `data`.
///
/// The server's maintenance removes files while this walks (cleanup of expired versions,
/// compaction's replaced fragments), so an entry that vanished between listing and reading
/// is skipped rather than failing the run: the figures are a snapshot of what remained.
fn on_disk(data: &Path) -> anyhow::Result<(u64, u64)> {
    let table = find_versions_dir(data)?
        .parent()
        .map(Path::to_path_buf)
        .context("a _versions directory has a parent")?;
    let (mut manifest_bytes, mut files) = (0, 0);
    let mut todo = vec![table];
    while let Some(dir) = todo.pop() {
        for entry in entries(&dir)? {
            let Some(meta) = present(entry.metadata())? else {
                continue;
            };
            if meta.is_dir() {
                todo.push(entry.path());
                continue;
            }
            files += 1;
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "manifest")
                && path.parent().is_some_and(|p| p.ends_with("_versions"))
            {
                manifest_bytes += meta.len();
            }
        }
    }
    Ok((manifest_bytes, files))
}

fn find_versions_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in entries(&dir)? {
            let Some(kind) = present(entry.file_type())? else {
                continue;
            };
            if kind.is_dir() {
                if entry.file_name() == "_versions" {
                    return Ok(entry.path());
                }
                todo.push(entry.path());
            }
        }
    }
    anyhow::bail!("no Lance dataset under {}", dir.display())
}

/// The entries of `dir` still present while listing; a directory removed meanwhile has none.
fn entries(dir: &Path) -> anyhow::Result<Vec<std::fs::DirEntry>> {
    let Some(listing) = present(std::fs::read_dir(dir))? else {
        return Ok(Vec::new());
    };
    let mut entries = Vec::new();
    for entry in listing {
        if let Some(entry) = present(entry)? {
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// `Ok(None)` for a file or directory that no longer exists; other errors pass through.
fn present<T>(result: std::io::Result<T>) -> anyhow::Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}
