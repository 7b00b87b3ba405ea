//! The suite's figures: `results.json` (every figure, ratios under stable keys such as
//! `tpch.total_ratio_vs_duckdb`) and `results.md` (the same as tables).
//!
//! Ratio conventions: time ratios are Lake ÷ peer (below 1 means Lake is faster);
//! throughput ratios are Lake ÷ peer (above 1 means Lake is faster).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Everything one run measured. Sections not run are `null`.
#[derive(Serialize, Debug)]
pub struct Results {
    /// TPC-H scale factor.
    pub scale: f64,
    /// CPU cores available to the run.
    pub cores: usize,
    /// TPC-H against DuckDB and DataFusion (`--sections tpch`).
    pub tpch: Option<Tpch>,
    /// Lineitem appends against pylance (`--sections ingest`).
    pub ingest: Option<Ingest>,
    /// Metasrv commits against synced RocksDB writes (`--sections commits`).
    pub commits: Option<Commits>,
    /// One-row lookups on a warm replica (`--sections point`).
    pub point_reads: Option<PointReads>,
    /// Peak RSS of the `lake serve` child (absent fields: not measured).
    pub memory: Memory,
    /// FILE upload and download against raw object_store (`--sections files`).
    pub files: Option<Files>,
    /// Lineitem as an external Iceberg table: Lake's `iceberg` catalog against DuckDB's
    /// Iceberg reader on the same snapshot (`--sections iceberg`).
    pub iceberg: Option<Iceberg>,
    /// Metasrv loading a large registry with and without a checkpoint
    /// (`--sections startup`).
    pub startup: Option<Startup>,
    /// One-row appends with table maintenance on and off (`--sections streaming`).
    pub streaming: Option<Streaming>,
}

/// A streaming producer's one-row appends to one table (`streaming.rs`).
#[derive(Serialize, Debug)]
pub struct Streaming {
    /// One-row appends per run.
    pub appends: usize,
    /// Appends per reported window.
    pub window: usize,
    /// Maintenance on: compaction at 16 small fragments, cleanup of expired versions'
    /// files (history window 1,000 versions, no grace).
    pub with: StreamingRun,
    /// Maintenance off: what Lake did before it had any.
    pub without: StreamingRun,
    /// Append rate in the last window, on ÷ off (above 1: maintenance keeps appends faster).
    pub ratio_last_window_rate_on_vs_off: f64,
    /// Manifest bytes on disk at the end, on ÷ off.
    pub ratio_manifest_bytes_on_vs_off: f64,
}

/// One run of [`Streaming`].
#[derive(Serialize, Debug)]
pub struct StreamingRun {
    /// Figures after each window of appends.
    pub windows: Vec<StreamingWindow>,
}

/// The state after one window of appends.
#[derive(Serialize, Debug)]
pub struct StreamingWindow {
    /// Appends done so far.
    pub appends_done: usize,
    /// Appends per second in this window.
    pub appends_per_s: f64,
    /// Bytes of the table's Lance manifests on disk.
    pub manifest_bytes: u64,
    /// Files under the table's dataset directory.
    pub files: u64,
}

/// Metasrv's start on a RocksDB store of `tables` × `versions_per_table`
/// (`lake_metasrv::bench::measure_startup`).
#[derive(Serialize, Debug)]
pub struct Startup {
    /// Tables in the store.
    pub tables: u64,
    /// Committed versions per table.
    pub versions_per_table: u64,
    /// Events in the log before the checkpoint.
    pub events: u64,
    /// Loading by replaying the whole log (every start before checkpoints), ms.
    pub replay_ms: f64,
    /// Writing the checkpoint, ms, and its encoded size.
    pub checkpoint_ms: f64,
    /// The checkpoint's encoded size, bytes.
    pub checkpoint_bytes: u64,
    /// Loading the checkpoint and the log after it, ms.
    pub load_ms: f64,
    /// A node started on the checkpointed store until its first acknowledged commit, ms.
    pub node_start_ms: f64,
    /// load ÷ replay (below 1: the checkpoint is faster).
    pub ratio_load_vs_replay: f64,
}

/// One query of the `iceberg` section.
#[derive(Serialize, Deserialize, Debug)]
pub struct IcebergQuery {
    /// Median Lake time (ADBC client wall time), ms; `None` after an error.
    pub lake_ms: Option<f64>,
    /// Median DuckDB time (in-process, to the last row), ms; `None` after an error.
    pub duckdb_ms: Option<f64>,
    /// Whether the two answers agree.
    pub lake_matches_duckdb: bool,
    /// How they differ.
    pub mismatch: Option<String>,
    /// Lake's error, if any.
    pub lake_error: Option<String>,
    /// DuckDB's error, if any.
    pub duckdb_error: Option<String>,
}

/// The `iceberg` section as `peers.py iceberg` measured it.
#[derive(Serialize, Deserialize, Debug)]
pub struct Iceberg {
    /// Rows in the table.
    pub rows: u64,
    /// Seconds pyiceberg took to write it (one append).
    pub write_seconds: f64,
    /// DuckDB version of the Iceberg reader.
    pub duckdb_version: String,
    /// Timed runs per query and engine.
    pub runs: usize,
    /// The snapshot both engines read.
    pub snapshot_id: Option<i64>,
    /// Per query.
    pub queries: BTreeMap<String, IcebergQuery>,
}

/// One FILE through the SDK against raw object_store put/get of the same bytes on the same
/// local filesystem store, each transfer in its own process.
#[derive(Serialize, Debug)]
pub struct Files {
    /// Size of the file, in bytes.
    pub file_bytes: u64,
    /// Multipart part size on both sides, in bytes.
    pub part_size_bytes: u64,
    /// Parts in flight on both sides.
    pub concurrency: usize,
    /// SDK upload (SHA-256 pass plus multipart upload), MiB/s.
    pub lake_upload_mib_per_s: f64,
    /// object_store `WriteMultipart` of the same file, MiB/s.
    pub raw_upload_mib_per_s: f64,
    /// Lake ÷ raw upload throughput (above 1: Lake faster).
    pub upload_ratio_vs_raw: f64,
    /// SDK verified download (streamed, SHA-256 checked, fsynced, renamed), MiB/s.
    pub lake_download_mib_per_s: f64,
    /// object_store `get` streamed to a file and fsynced, MiB/s.
    pub raw_download_mib_per_s: f64,
    /// Lake ÷ raw download throughput (above 1: Lake faster).
    pub download_ratio_vs_raw: f64,
    /// Peak RSS of the SDK upload process, bytes.
    pub lake_upload_peak_rss_bytes: u64,
    /// Peak RSS of the raw upload process, bytes.
    pub raw_upload_peak_rss_bytes: u64,
    /// Peak RSS of the SDK download process, bytes.
    pub lake_download_peak_rss_bytes: u64,
    /// Peak RSS of the raw download process, bytes.
    pub raw_download_peak_rss_bytes: u64,
    /// Both downloaded copies equal the source, byte for byte.
    pub copies_verified: bool,
}

/// TPC-H over Flight SQL (ADBC) against DuckDB and DataFusion on the same Parquet.
#[derive(Serialize, Debug)]
pub struct Tpch {
    /// Timed runs per query and engine; times are medians.
    pub runs: usize,
    /// `duckdb.__version__` of the peer that was timed.
    pub duckdb_version: String,
    /// By query name (`q1` … `q22`).
    pub queries: BTreeMap<String, Query>,
    /// Sum of Lake's per-query medians, ms.
    pub total_lake_ms: f64,
    /// Sum of DuckDB's per-query medians, ms.
    pub total_duckdb_ms: f64,
    /// Sum of DataFusion's per-query medians, ms.
    pub total_datafusion_ms: f64,
    /// Sum of Lake's medians ÷ sum of DuckDB's.
    pub total_ratio_vs_duckdb: f64,
    /// Sum of Lake's medians ÷ sum of DataFusion's.
    pub total_ratio_vs_datafusion: f64,
    /// Geometric mean of the per-query Lake ÷ DuckDB ratios.
    pub geomean_ratio_vs_duckdb: f64,
    /// Geometric mean of the per-query Lake ÷ DataFusion ratios.
    pub geomean_ratio_vs_datafusion: f64,
    /// Sum of the Flight SQL peer's medians, ms (`null` unless `--flight-peer`).
    pub total_flight_peer_ms: Option<f64>,
    /// Sum of Lake's medians ÷ sum of the Flight SQL peer's (`null` unless `--flight-peer`).
    pub total_ratio_vs_flight_peer: Option<f64>,
    /// Every Lake, DataFusion and Flight SQL peer answer equals DuckDB's.
    pub all_answers_match: bool,
}

/// One TPC-H query.
#[derive(Serialize, Debug)]
pub struct Query {
    /// Median ms through Flight SQL with the ADBC driver (`null` in JSON when Lake failed;
    /// the totals are then `null` too).
    pub lake_ms: f64,
    /// Median ms of DuckDB (`null` in JSON when DuckDB failed).
    pub duckdb_ms: f64,
    /// Median ms of DataFusion in the bench process on the Parquet files.
    pub datafusion_ms: f64,
    /// Rows in DuckDB's answer.
    pub rows: u64,
    /// `lake_ms / duckdb_ms` (below 1: Lake faster).
    pub ratio_vs_duckdb: f64,
    /// `lake_ms / datafusion_ms` (below 1: Lake faster).
    pub ratio_vs_datafusion: f64,
    /// Median ms of the Flight SQL peer (datafusion-flight-sql-server, `bench/flight-peer`)
    /// through the same ADBC driver; `None` unless `--flight-peer`.
    pub flight_peer_ms: Option<f64>,
    /// `lake_ms / flight_peer_ms` (below 1: Lake faster).
    pub ratio_vs_flight_peer: Option<f64>,
    /// Lake's, DataFusion's and the Flight SQL peer's answers equal DuckDB's.
    pub answer_matches_duckdb: bool,
    /// The first difference found, or Lake's error.
    pub mismatch: Option<String>,
}

impl Tpch {
    /// Totals and geometric means over `queries`.
    pub fn from_queries(
        runs: usize,
        duckdb_version: String,
        queries: BTreeMap<String, Query>,
    ) -> Self {
        let sum = |f: fn(&Query) -> f64| queries.values().map(f).sum::<f64>();
        let geomean = |f: fn(&Query) -> f64| {
            let n = queries.len().max(1) as f64;
            (queries.values().map(|q| f(q).ln()).sum::<f64>() / n).exp()
        };
        let (lake, duckdb, datafusion) = (
            sum(|q| q.lake_ms),
            sum(|q| q.duckdb_ms),
            sum(|q| q.datafusion_ms),
        );
        let flight_peer = queries
            .values()
            .map(|q| q.flight_peer_ms)
            .sum::<Option<f64>>();
        Self {
            runs,
            duckdb_version,
            total_flight_peer_ms: flight_peer,
            total_ratio_vs_flight_peer: flight_peer.map(|peer| lake / peer),
            total_lake_ms: lake,
            total_duckdb_ms: duckdb,
            total_datafusion_ms: datafusion,
            total_ratio_vs_duckdb: lake / duckdb,
            total_ratio_vs_datafusion: lake / datafusion,
            geomean_ratio_vs_duckdb: geomean(|q| q.ratio_vs_duckdb),
            geomean_ratio_vs_datafusion: geomean(|q| q.ratio_vs_datafusion),
            all_answers_match: queries.values().all(|q| q.answer_matches_duckdb),
            queries,
        }
    }
}

/// Appending lineitem through the SDK against pylance writing the same chunks.
#[derive(Serialize, Debug)]
pub struct Ingest {
    /// Lineitem rows appended.
    pub rows: usize,
    /// Rows per append (one commit each, on both sides).
    pub chunk_rows: usize,
    /// Rows per second of wall time over Lake's appends through the SDK.
    pub lake_rows_per_s: f64,
    /// Rows per second of wall time over pylance's `write_dataset` calls.
    pub pylance_rows_per_s: f64,
    /// Lake rows/s ÷ pylance rows/s.
    pub ratio_vs_pylance: f64,
    /// `lance.__version__` of the peer.
    pub pylance_version: String,
}

/// Metasrv commits on RocksDB against synced RocksDB writes on the same disk.
#[derive(Serialize, Debug)]
pub struct Commits {
    /// One writer, one synced write each.
    pub synced_writes_per_s: f64,
    /// One entry per writer count (1, 8, 64).
    pub by_writers: Vec<CommitsAt>,
}

/// Commits at one writer count.
#[derive(Serialize, Debug)]
pub struct CommitsAt {
    /// Concurrent committers, each on a table of its own.
    pub writers: usize,
    /// Commits acknowledged in the measured time.
    pub commits: usize,
    /// Re-sends after a retryable refusal.
    pub retries: u64,
    /// Acknowledged commits per second of wall time.
    pub commits_per_s: f64,
    /// Median commit latency, ms.
    pub p50_ms: f64,
    /// 99th-percentile commit latency, ms.
    pub p99_ms: f64,
    /// Commits/s ÷ synced writes/s.
    pub ratio_vs_synced_writes: f64,
}

/// A selective query on a warm replica.
#[derive(Serialize, Debug)]
pub struct PointReads {
    /// Timed lookups (after the warm-up).
    pub queries: usize,
    /// Rows the queries returned (warm-up included), to show they hit.
    pub rows_found: usize,
    /// Median lookup latency through the SDK with a B-tree index on the key, ms.
    pub p50_ms: f64,
    /// 99th-percentile lookup latency with the index, ms.
    pub p99_ms: f64,
    /// Median lookup latency before the index (a scan of the key column), ms.
    pub scan_p50_ms: f64,
    /// 99th-percentile lookup latency before the index, ms.
    pub scan_p99_ms: f64,
    /// Time `CREATE INDEX ON default.orders (o_orderkey)` took, ms.
    pub index_build_ms: f64,
    /// Metasrv requests made by the replica per indexed lookup (target 0 when warm).
    pub metasrv_round_trips_per_query: f64,
}

/// Peak RSS of the `lake serve` child, in bytes.
#[derive(Serialize, Debug, Default)]
pub struct Memory {
    /// During the TPC-H run (peak reset after loading).
    pub tpch_peak_rss_bytes: Option<u64>,
    /// During data loading.
    pub load_peak_rss_bytes: Option<u64>,
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("—".into(), |b| format!("{:.0} MiB", b as f64 / 1048576.0))
}

impl Results {
    /// The figures as Markdown tables.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# lake-bench results\n\nTPC-H scale factor {}, {} cores. Time ratios are Lake ÷ peer (below 1: Lake faster); throughput ratios are Lake ÷ peer (above 1: Lake faster).\n",
            self.scale, self.cores
        );
        if let Some(t) = &self.tpch {
            let _ = writeln!(
                s,
                "## TPC-H (median of {} runs; Lake through Flight SQL with the ADBC driver; DuckDB {} and DataFusion in-process on the same rows as Parquet{})\n",
                t.runs,
                t.duckdb_version,
                if t.total_flight_peer_ms.is_some() {
                    "; the Flight SQL peer, datafusion-flight-sql-server 0.4.19 on DataFusion 55 (bench/flight-peer), on the same Parquet through the same ADBC driver"
                } else {
                    ""
                }
            );
            let peer = t.total_flight_peer_ms.is_some();
            let _ = writeln!(
                s,
                "| query | Lake ms | DuckDB ms | DataFusion ms | ÷ DuckDB | ÷ DataFusion |{} rows | answer |\n|---|---|---|---|---|---|{}---|---|",
                if peer {
                    " Flight SQL peer ms | ÷ Flight SQL peer |"
                } else {
                    ""
                },
                if peer { "---|---|" } else { "" },
            );
            let peer_cells = |ms: Option<f64>, ratio: Option<f64>, bold: bool| match (ms, ratio) {
                (Some(ms), Some(ratio)) if bold => format!(" {ms:.1} | **{ratio:.2}** |"),
                (Some(ms), Some(ratio)) => format!(" {ms:.1} | {ratio:.2} |"),
                _ => String::new(),
            };
            let mut names: Vec<_> = t.queries.keys().collect();
            names.sort_by_key(|n| n[1..].parse::<u32>().unwrap_or(0));
            for name in names {
                let q = &t.queries[name];
                let _ = writeln!(
                    s,
                    "| {name} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} |{} {} | {} |",
                    q.lake_ms,
                    q.duckdb_ms,
                    q.datafusion_ms,
                    q.ratio_vs_duckdb,
                    q.ratio_vs_datafusion,
                    peer_cells(q.flight_peer_ms, q.ratio_vs_flight_peer, false),
                    q.rows,
                    q.mismatch
                        .as_deref()
                        .map_or("= DuckDB".to_string(), |m| format!("DIFFERS: {m}"))
                );
            }
            let _ = writeln!(
                s,
                "| **total** | {:.1} | {:.1} | {:.1} | **{:.2}** | **{:.2}** |{} | {} |\n| geomean | | | | {:.2} | {:.2} |{} | |\n",
                t.total_lake_ms,
                t.total_duckdb_ms,
                t.total_datafusion_ms,
                t.total_ratio_vs_duckdb,
                t.total_ratio_vs_datafusion,
                peer_cells(t.total_flight_peer_ms, t.total_ratio_vs_flight_peer, true),
                if t.all_answers_match {
                    "all match"
                } else {
                    "MISMATCHES"
                },
                t.geomean_ratio_vs_duckdb,
                t.geomean_ratio_vs_datafusion,
                if peer { " | |" } else { "" },
            );
        }
        if let Some(i) = &self.ingest {
            let _ = writeln!(
                s,
                "## Ingest (lineitem, {} rows in chunks of {}, one commit each)\n\n| Lake SDK rows/s | pylance {} rows/s | Lake ÷ pylance |\n|---|---|---|\n| {:.0} | {:.0} | {:.2} |\n",
                i.rows,
                i.chunk_rows,
                i.pylance_version,
                i.lake_rows_per_s,
                i.pylance_rows_per_s,
                i.ratio_vs_pylance
            );
        }
        if let Some(c) = &self.commits {
            let _ = writeln!(
                s,
                "## Commits (Metasrv on RocksDB; synced RocksDB writes on this disk: {:.0}/s)\n\n| writers | commits/s | p50 ms | p99 ms | ÷ synced writes/s | re-sent |\n|---|---|---|---|---|---|",
                c.synced_writes_per_s
            );
            for w in &c.by_writers {
                let _ = writeln!(
                    s,
                    "| {} | {:.0} | {:.2} | {:.2} | {:.2} | {} |",
                    w.writers,
                    w.commits_per_s,
                    w.p50_ms,
                    w.p99_ms,
                    w.ratio_vs_synced_writes,
                    w.retries
                );
            }
            s.push('\n');
        }
        if let Some(u) = &self.startup {
            let _ = writeln!(
                s,
                "## Metasrv startup ({} tables × {} versions, {} events)\n\n| whole-log replay ms | checkpoint write ms | checkpoint MB | checkpoint + tail load ms | ÷ replay | node start to first commit ms |\n|---|---|---|---|---|---|\n| {:.0} | {:.0} | {:.1} | {:.0} | {:.2} | {:.0} |\n",
                u.tables,
                u.versions_per_table,
                u.events,
                u.replay_ms,
                u.checkpoint_ms,
                u.checkpoint_bytes as f64 / 1e6,
                u.load_ms,
                u.ratio_load_vs_replay,
                u.node_start_ms
            );
        }
        if let Some(t) = &self.streaming {
            let _ = writeln!(
                s,
                "## Streaming appends ({} one-row appends through the SDK; maintenance on vs off)\n\n| appends | on: appends/s | on: manifest MB | on: files | off: appends/s | off: manifest MB | off: files |\n|---|---|---|---|---|---|---|",
                t.appends
            );
            for (on, off) in t.with.windows.iter().zip(&t.without.windows) {
                let _ = writeln!(
                    s,
                    "| {} | {:.1} | {:.2} | {} | {:.1} | {:.2} | {} |",
                    on.appends_done,
                    on.appends_per_s,
                    on.manifest_bytes as f64 / 1e6,
                    on.files,
                    off.appends_per_s,
                    off.manifest_bytes as f64 / 1e6,
                    off.files
                );
            }
            let _ = writeln!(
                s,
                "\nLast window's rate on ÷ off: **{:.2}**; manifest bytes on ÷ off: **{:.3}**.\n",
                t.ratio_last_window_rate_on_vs_off, t.ratio_manifest_bytes_on_vs_off
            );
        }
        if let Some(p) = &self.point_reads {
            let _ = writeln!(
                s,
                "## Point reads (one order by key, warm replica, SDK)\n\n| queries | with a B-tree index: p50 ms | p99 ms | scan of the key: p50 ms | p99 ms | index build ms | Metasrv round trips per query |\n|---|---|---|---|---|---|---|\n| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {:.3} |\n",
                p.queries,
                p.p50_ms,
                p.p99_ms,
                p.scan_p50_ms,
                p.scan_p99_ms,
                p.index_build_ms,
                p.metasrv_round_trips_per_query
            );
        }
        let _ = writeln!(
            s,
            "## Memory (peak RSS of lake serve)\n\n| during TPC-H | during load |\n|---|---|\n| {} | {} |",
            mib(self.memory.tpch_peak_rss_bytes),
            mib(self.memory.load_peak_rss_bytes)
        );
        if let Some(i) = &self.iceberg {
            let _ = writeln!(
                s,
                "## Iceberg (lineitem, {} rows written by pyiceberg in {:.1} s; snapshot {}; median of {} runs; Lake's iceberg catalog through the REST catalog and Flight SQL, DuckDB {} iceberg_scan in-process)\n",
                i.rows,
                i.write_seconds,
                i.snapshot_id.map_or("-".to_string(), |id| id.to_string()),
                i.runs,
                i.duckdb_version
            );
            let _ = writeln!(
                s,
                "| query | Lake ms | DuckDB ms | ÷ DuckDB | answer |\n|---|---|---|---|---|"
            );
            let ms = |v: Option<f64>, e: &Option<String>| match (v, e) {
                (_, Some(_)) => "error".to_string(),
                (Some(v), None) => format!("{v:.1}"),
                (None, None) => "-".to_string(),
            };
            for (name, q) in &i.queries {
                let ratio = match (q.lake_ms, q.duckdb_ms) {
                    (Some(l), Some(d)) if d > 0.0 => format!("{:.2}", l / d),
                    _ => "-".to_string(),
                };
                let answer = if q.lake_matches_duckdb {
                    "match".to_string()
                } else {
                    q.mismatch
                        .clone()
                        .or_else(|| q.lake_error.clone())
                        .or_else(|| q.duckdb_error.clone())
                        .unwrap_or_else(|| "differs".into())
                };
                let _ = writeln!(
                    s,
                    "| {name} | {} | {} | {ratio} | {answer} |",
                    ms(q.lake_ms, &q.lake_error),
                    ms(q.duckdb_ms, &q.duckdb_error)
                );
            }
            let _ = writeln!(s);
        }
        if let Some(f) = &self.files {
            let _ = writeln!(
                s,
                "\n## FILE transfer ({} file, {} parts, {} in flight; local filesystem stage; each side in its own process)\n\n| | Lake SDK MiB/s | raw object_store MiB/s | Lake ÷ raw | Lake peak RSS | raw peak RSS |\n|---|---|---|---|---|---|\n| upload | {:.0} | {:.0} | {:.2} | {} | {} |\n| download | {:.0} | {:.0} | {:.2} | {} | {} |\n\nBoth copies equal the source: {}",
                lake_sdk::file::human_size(f.file_bytes),
                lake_sdk::file::human_size(f.part_size_bytes),
                f.concurrency,
                f.lake_upload_mib_per_s,
                f.raw_upload_mib_per_s,
                f.upload_ratio_vs_raw,
                mib(Some(f.lake_upload_peak_rss_bytes)),
                mib(Some(f.raw_upload_peak_rss_bytes)),
                f.lake_download_mib_per_s,
                f.raw_download_mib_per_s,
                f.download_ratio_vs_raw,
                mib(Some(f.lake_download_peak_rss_bytes)),
                mib(Some(f.raw_download_peak_rss_bytes)),
                f.copies_verified
            );
        }
        s
    }
}
