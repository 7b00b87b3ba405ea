//! `lake-bench`: Lake against the tools a user would otherwise reach for, on the same
//! machine, in the same run, on the same data, with ratios.
//!
//! `cargo run --release --bin lake-bench -- --scale 1 --out bench-results`
//!
//! Sections (all by default, or a subset with `--sections`):
//! - `tpch`: the 22 TPC-H queries through Flight SQL with the ADBC driver (Lake, `lake
//!   serve` in a child process), against DuckDB on the same rows as Parquet and DataFusion
//!   in this process on that Parquet. Every answer is checked against DuckDB's.
//! - `ingest`: rows/s appending lineitem through the SDK, against pylance writing the same
//!   chunks (one commit per chunk on both sides).
//! - `commits`: commits/s and p50/p99 through Metasrv on RocksDB at 1, 8 and 64 writers,
//!   against synced RocksDB writes/s on the same disk.
//! - `point`: p50/p99 of a selective query on a warm replica, and Metasrv requests per query.
//! - `memory`: peak RSS of the `lake serve` child during the TPC-H run (and during load).
//! - `files`: upload and download of a `--file-mib` FILE through the SDK against a raw
//!   object_store put and get of the same bytes, with each side's peak RSS.
//! - `streaming`: `--stream-appends` one-row appends to one table with table maintenance
//!   (compaction, cleanup) on and off: append rate, manifest bytes and files per window.
//!
//! Writes `results.json`, `results.md` and `chart.png` to `--out`. The peers (DuckDB, ADBC,
//! pylance, matplotlib) are installed from PyPI by `bench/requirements.txt` first, and driven
//! by `bench/peers.py`.

mod child;
mod files;
mod report;
mod streaming;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use arrow::datatypes::SchemaRef;
use arrow::ipc::writer::FileWriter;
use arrow::record_batch::RecordBatch;
use clap::{Parser, Subcommand, ValueEnum};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use lake::tpch;
use lake_metasrv::bench::quantile;
use lake_sdk::LakeClient;

use report::{Commits, CommitsAt, Ingest, Memory, PointReads, Query, Results, Startup, Tpch};

/// The allocator `lake` uses (see `shells/cli/src/main.rs`), so the `lake serve` child
/// measures what users run; DataFusion in this process gets it too, as `datafusion-cli` does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Rows per append when loading Lake, and per pylance commit (keeps each DoPut well under
/// the request limit).
const CHUNK_ROWS: usize = 500_000;

/// Point queries timed after the warm-up.
const POINT_QUERIES: usize = 300;

/// Point queries run before timing (fills caches, plans once).
const POINT_WARMUP: usize = 20;

/// Where this crate's scripts and the repository's TPC-H queries live.
fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[derive(Parser, Debug)]
#[command(
    name = "lake-bench",
    about = "Lake's benchmark suite against DuckDB, DataFusion, pylance, raw RocksDB and raw object_store"
)]
struct Args {
    #[command(subcommand)]
    command: Option<Internal>,
    /// TPC-H scale factor (1 = 6 M lineitem rows).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Directory for results.json, results.md and chart.png (created if missing).
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// Timed runs per TPC-H query and engine (after one warm-up); the median is reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// TPC-H queries to run, e.g. `1,6,19` (default: all 22).
    #[arg(long, value_delimiter = ',')]
    queries: Vec<u32>,
    /// Sections to run (default: all).
    #[arg(long, value_delimiter = ',', value_enum)]
    sections: Vec<Section>,
    /// Seconds per writer count in the commits section.
    #[arg(long, default_value_t = 5)]
    commit_seconds: u64,
    /// Tables of the Metasrv store the startup section builds.
    #[arg(long, default_value_t = 10_000)]
    startup_tables: u64,
    /// Committed versions per table of that store.
    #[arg(long, default_value_t = 100)]
    startup_versions: u64,
    /// Python interpreter that runs bench/peers.py.
    #[arg(long, default_value = "python3")]
    python: String,
    /// Do not `pip install -r bench/requirements.txt` first.
    #[arg(long)]
    no_install: bool,
    /// Directory for generated data and datasets, kept after the run; it must not hold an
    /// earlier run's (default: a temporary one, removed after).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// One-row appends per run of the `streaming` section.
    #[arg(long, default_value_t = 3_000)]
    stream_appends: usize,
    /// Size of the file the `files` section uploads and downloads, in MiB (1..=65536).
    #[arg(long, default_value_t = 2048)]
    file_mib: u64,
    /// Virtualenv with DuckDB's Iceberg reader (bench/requirements-iceberg.txt) for the
    /// `iceberg` section; created if absent (default: ~/.cache/lake/duckdb-iceberg).
    #[arg(long)]
    duckdb_venv: Option<PathBuf>,
    /// The `lake-bench-flight-peer` binary (`cargo build --release --locked --manifest-path
    /// bench/flight-peer/Cargo.toml`): the TPC-H section then also times
    /// datafusion-flight-sql-server on the same Parquet over the same ADBC driver, and
    /// reports `tpch.total_ratio_vs_flight_peer`.
    #[arg(long)]
    flight_peer: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Internal {
    /// (internal) Runs `lake serve` on DIR for the parent bench; see `child.rs`.
    #[command(hide = true)]
    Serve {
        #[arg(long)]
        data: PathBuf,
        #[command(flatten)]
        iceberg: lake::cluster::IcebergArgs,
    },
    /// (internal) One measured FILE transfer for the `files` section; see `files.rs`.
    #[command(hide = true)]
    Transfer(files::Transfer),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
    Tpch,
    Ingest,
    Commits,
    Point,
    Memory,
    Files,
    Iceberg,
    Startup,
    Streaming,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(Internal::Serve { .. }) = &args.command {
        // The replica as `lake serve` runs it; the peers (pylance) keep Lance's default.
        // SAFETY: no thread has been started yet.
        unsafe { lake_query::dataset::size_lance_compute_pool() };
        lake::allocator::reset_on_purge();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match &args.command {
        Some(Internal::Serve { data, iceberg }) => {
            return runtime.block_on(child::serve(data, iceberg.config()?));
        }
        Some(Internal::Transfer(t)) => return runtime.block_on(files::transfer(t)),
        None => {}
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    runtime.block_on(run(args))
}

impl Args {
    fn wants(&self, section: Section) -> bool {
        self.sections.is_empty() || self.sections.contains(&section)
    }

    fn queries(&self) -> Vec<u32> {
        if self.queries.is_empty() {
            (1..=22).collect()
        } else {
            self.queries.clone()
        }
    }

    fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.scale > 0.0 && self.scale <= 100.0,
            "--scale must be in (0, 100], got {}",
            self.scale
        );
        anyhow::ensure!(self.runs >= 1, "--runs must be at least 1");
        anyhow::ensure!(
            (1..=1_000_000).contains(&self.stream_appends),
            "--stream-appends must be 1..=1000000, got {}",
            self.stream_appends
        );
        anyhow::ensure!(
            (1..=300).contains(&self.commit_seconds),
            "--commit-seconds must be 1..=300"
        );
        anyhow::ensure!(
            (1..=65536).contains(&self.file_mib),
            "--file-mib must be 1..=65536, got {}",
            self.file_mib
        );
        if let Some(bad) = self.queries.iter().find(|q| !(1..=22).contains(*q)) {
            anyhow::bail!("--queries: TPC-H has queries 1..=22, got {bad}");
        }
        if let Some(dir) = &self.work_dir {
            anyhow::ensure!(
                !dir.join("lake").exists(),
                "--work-dir {} holds an earlier run's Lake data (lake/); remove it or pick another directory",
                dir.display()
            );
        }
        Ok(())
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    args.validate()?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating --out {}", args.out.display()))?;
    if !args.no_install {
        install_peers(&args.python)?;
    }
    let temp;
    let work = match &args.work_dir {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let mut results = Results::new(args.scale);
    let needs_data = args.wants(Section::Tpch)
        || args.wants(Section::Ingest)
        || args.wants(Section::Point)
        || args.wants(Section::Memory)
        || args.wants(Section::Iceberg);
    if needs_data {
        let mut server = child::Server::spawn(&work.join("lake"))?;
        let parquet = work.join("parquet");
        let load = load(&server.endpoint, &parquet, args.scale).await?;
        results.memory.load_peak_rss_bytes = server.peak_rss_bytes();
        if args.wants(Section::Ingest) {
            results.ingest = Some(ingest(&args, &parquet, &work, &load)?);
        }
        if args.wants(Section::Tpch) || args.wants(Section::Memory) {
            server.reset_peak_rss();
            results.tpch = Some(tpch(&args, &server.endpoint, &parquet, &work).await?);
            results.memory.tpch_peak_rss_bytes = server.peak_rss_bytes();
        }
        if args.wants(Section::Point) {
            results.point_reads = Some(point_reads(&mut server, args.scale).await?);
        }
        server.stop()?;
        if args.wants(Section::Iceberg) {
            results.iceberg = Some(iceberg(&args, &parquet, &work)?);
        }
    }
    if args.wants(Section::Commits) {
        results.commits = Some(commits(&work.join("commits"), args.commit_seconds).await?);
    }
    if args.wants(Section::Files) {
        results.files = Some(files::files(&work, args.file_mib).await?);
    }
    if args.wants(Section::Startup) {
        results.startup = Some(startup(&work.join("startup"), &args).await?);
    }
    if args.wants(Section::Streaming) {
        results.streaming = Some(streaming::streaming(&work, args.stream_appends).await?);
    }
    let markdown = results.markdown();
    std::fs::write(args.out.join("results.md"), &markdown)?;
    std::fs::write(
        args.out.join("results.json"),
        serde_json::to_string_pretty(&results)?,
    )?;
    peers(
        &args.python,
        &[
            "chart",
            "--results",
            &args.out.join("results.json").to_string_lossy(),
            "--out",
            &args.out.join("chart.png").to_string_lossy(),
        ],
    )?;
    println!("{markdown}");
    eprintln!(
        "lake-bench: wrote results.md, results.json and chart.png to {}",
        args.out.display()
    );
    if let Some(iceberg) = &results.iceberg {
        anyhow::ensure!(
            iceberg.queries.values().all(|q| q.lake_matches_duckdb),
            "some Iceberg answers differ from DuckDB's or failed (see iceberg in results.json)"
        );
    }
    if let Some(tpch) = &results.tpch {
        anyhow::ensure!(
            tpch.all_answers_match,
            "some TPC-H answers differ from DuckDB's (see `mismatch` in results.json)"
        );
    }
    Ok(())
}

/// The `iceberg` section: `peers.py iceberg` writes lineitem as an Iceberg table, serves
/// it through the fixture REST catalog, runs this binary's `serve` child with the `iceberg`
/// catalog, and times it against DuckDB's Iceberg reader.
fn iceberg(args: &Args, parquet: &Path, work: &Path) -> anyhow::Result<report::Iceberg> {
    let venv = match &args.duckdb_venv {
        Some(dir) => dir.clone(),
        None => PathBuf::from(std::env::var("HOME").context("HOME is not set")?)
            .join(".cache/lake/duckdb-iceberg"),
    };
    let out = work.join("iceberg.json");
    peers(
        &args.python,
        &[
            "iceberg",
            "--parquet",
            &parquet.join("lineitem.parquet").to_string_lossy(),
            "--lake-bench",
            &std::env::current_exe()?.to_string_lossy(),
            "--work",
            &work.join("iceberg").to_string_lossy(),
            "--duckdb-venv",
            &venv.to_string_lossy(),
            "--runs",
            &args.runs.to_string(),
            "--out",
            &out.to_string_lossy(),
        ],
    )?;
    let text = std::fs::read_to_string(&out)?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", out.display()))
}

fn install_peers(python: &str) -> anyhow::Result<()> {
    eprintln!("lake-bench: installing the peers (bench/requirements.txt) ...");
    let status = Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(bench_dir().join("requirements.txt"))
        .status()
        .with_context(|| format!("running {python} -m pip"))?;
    anyhow::ensure!(
        status.success(),
        "installing bench/requirements.txt failed ({status}); fix it or pass --no-install"
    );
    Ok(())
}

/// Runs `bench/peers.py` with `args`; its progress goes to our stderr.
fn peers(python: &str, args: &[&str]) -> anyhow::Result<()> {
    let script = bench_dir().join("peers.py");
    let status = Command::new(python)
        .arg(&script)
        .args(args)
        .status()
        .with_context(|| format!("running {python} {}", script.display()))?;
    anyhow::ensure!(status.success(), "peers.py {} failed ({status})", args[0]);
    Ok(())
}

/// What loading saw of lineitem, the ingest section's Lake side.
struct Load {
    lineitem_rows: usize,
    lineitem_seconds: f64,
}

/// Generates TPC-H at `scale` (tpchgen), writes each table as Parquet under `parquet/` and
/// appends it to `default.<table>` on the server through the SDK in [`CHUNK_ROWS`] chunks,
/// timing lineitem's appends, then puts a zone map on each key column (`…key`).
async fn load(endpoint: &str, parquet: &Path, scale: f64) -> anyhow::Result<Load> {
    std::fs::create_dir_all(parquet)?;
    let mut lake = LakeClient::connect(endpoint).await?;
    let mut lineitem = Load {
        lineitem_rows: 0,
        lineitem_seconds: 0.0,
    };
    for table in tpch::TABLES {
        eprintln!("lake-bench: generating and loading {table} (scale factor {scale}) ...");
        let (schema, batches) = tpch::generate(table, scale)?;
        let mut writer = ArrowWriter::try_new(
            std::fs::File::create(parquet.join(format!("{table}.parquet")))?,
            schema.clone(),
            None,
        )?;
        for batch in &batches {
            writer.write(batch)?;
        }
        writer.close()?;
        let name = format!("default.{table}");
        lake.create_table(&name, schema.clone()).await?;
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let started = Instant::now();
        for (part, chunk) in chunks(batches).into_iter().enumerate() {
            lake.append(&name, chunk, &format!("bench-{table}-{part}"))
                .await
                .with_context(|| format!("appending to {name}"))?;
        }
        // The appends alone: pylance's side times only its writes, and the zone maps
        // below are an index build, not ingest.
        let appended = started.elapsed();
        // Zone maps on the key and date columns give the planner each key's range and
        // each date filter's selectivity, as row-group statistics do for the Parquet peers
        // ([`lake_query::scan_statistics`]).
        for field in schema.fields() {
            let column = field.name();
            if column.ends_with("key") || column.ends_with("date") {
                lake.sql(&format!(
                    "CREATE INDEX IF NOT EXISTS {column}_zonemap ON {name} USING ZONEMAP ({column})"
                ))
                .await
                .with_context(|| format!("zone map on {name}({column})"))?;
            }
        }
        if table == "lineitem" {
            lineitem = Load {
                lineitem_rows: rows,
                lineitem_seconds: appended.as_secs_f64(),
            };
        }
    }
    Ok(lineitem)
}

/// Splits `batches` into runs of at least [`CHUNK_ROWS`] rows (the last may be shorter).
/// The runs end on batch boundaries (8,192 rows), so at SF 1 Lake commits 12 chunks of
/// 507,904 rows where `peers.py ingest --chunk-rows` commits 13 of exactly 500,000.
fn chunks(batches: Vec<RecordBatch>) -> Vec<Vec<RecordBatch>> {
    let mut out = vec![];
    let mut chunk = vec![];
    let mut rows = 0;
    for batch in batches {
        rows += batch.num_rows();
        chunk.push(batch);
        if rows >= CHUNK_ROWS {
            out.push(std::mem::take(&mut chunk));
            rows = 0;
        }
    }
    if !chunk.is_empty() {
        out.push(chunk);
    }
    out
}

fn ingest(args: &Args, parquet: &Path, work: &Path, load: &Load) -> anyhow::Result<Ingest> {
    eprintln!("lake-bench: ingest baseline (pylance) ...");
    let out = work.join("pylance.json");
    peers(
        &args.python,
        &[
            "ingest",
            "--parquet",
            &parquet.join("lineitem.parquet").to_string_lossy(),
            "--chunk-rows",
            &CHUNK_ROWS.to_string(),
            "--dir",
            &work.join("pylance-lineitem").to_string_lossy(),
            "--out",
            &out.to_string_lossy(),
        ],
    )?;
    let pylance: serde_json::Value = serde_json::from_slice(&std::fs::read(&out)?)?;
    let pylance_rows_per_s = pylance["rows_per_s"]
        .as_f64()
        .context("peers.py ingest wrote no rows_per_s")?;
    anyhow::ensure!(
        pylance["rows"].as_u64() == Some(load.lineitem_rows as u64),
        "pylance wrote {} rows, Lake {}",
        pylance["rows"],
        load.lineitem_rows
    );
    let lake_rows_per_s = load.lineitem_rows as f64 / load.lineitem_seconds;
    Ok(Ingest {
        rows: load.lineitem_rows,
        chunk_rows: CHUNK_ROWS,
        lake_rows_per_s,
        pylance_rows_per_s,
        ratio_vs_pylance: lake_rows_per_s / pylance_rows_per_s,
        pylance_version: pylance["pylance_version"].as_str().unwrap_or("").into(),
    })
}

/// The median of `times` (the mean of the two middle ones for an even count, as Python's
/// `statistics.median` that times the peers). `times` is never empty (`--runs` ≥ 1).
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    let n = times.len();
    if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2
    }
}

fn query_sql(q: u32) -> anyhow::Result<String> {
    let path = bench_dir().join(format!("../fixtures/tpch/q{q}.sql"));
    let sql =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    Ok(sql.trim().trim_end_matches(';').to_string())
}

/// DataFusion in this process on the Parquet files (its answers written for peers.py to
/// check), then Lake over ADBC and DuckDB through `peers.py tpch`.
async fn tpch(args: &Args, endpoint: &str, parquet: &Path, work: &Path) -> anyhow::Result<Tpch> {
    let queries = args.queries();
    let answers = work.join("answers");
    std::fs::create_dir_all(answers.join("datafusion"))?;
    let df = SessionContext::new();
    for table in tpch::TABLES {
        df.register_parquet(
            table,
            parquet
                .join(format!("{table}.parquet"))
                .to_string_lossy()
                .as_ref(),
            ParquetReadOptions::default(),
        )
        .await?;
    }
    let mut datafusion_ms = BTreeMap::new();
    for &q in &queries {
        let sql = query_sql(q)?;
        let frame = df.sql(&sql).await?;
        let schema = Arc::new(frame.schema().as_arrow().clone());
        let answer = frame.collect().await?;
        write_ipc(
            &answers.join(format!("datafusion/q{q}.arrow")),
            schema,
            &answer,
        )?;
        let mut times = vec![];
        for _ in 0..args.runs {
            let started = Instant::now();
            df.sql(&sql).await?.collect().await?;
            times.push(started.elapsed());
        }
        let ms = median(times).as_secs_f64() * 1e3;
        eprintln!("lake-bench: q{q} DataFusion {ms:.1} ms");
        datafusion_ms.insert(q, ms);
    }
    drop(df);

    let peer = match &args.flight_peer {
        Some(exe) => Some(child::FlightPeer::spawn(exe, parquet)?),
        None => None,
    };
    let out = work.join("peers-tpch.json");
    let only = queries
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let endpoint = endpoint.replacen("http://", "grpc://", 1);
    let (parquet_arg, queries_arg) = (
        parquet.to_string_lossy(),
        bench_dir()
            .join("../fixtures/tpch")
            .to_string_lossy()
            .into_owned(),
    );
    let (runs, answers_arg, out_arg) = (
        args.runs.to_string(),
        answers.to_string_lossy(),
        out.to_string_lossy(),
    );
    let mut peer_args = vec![
        "tpch",
        "--endpoint",
        &endpoint,
        "--parquet",
        &parquet_arg,
        "--queries",
        &queries_arg,
        "--runs",
        &runs,
        "--only",
        &only,
        "--answers",
        &answers_arg,
        "--out",
        &out_arg,
    ];
    if let Some(peer) = &peer {
        peer_args.extend(["--flight-peer", &peer.endpoint]);
    }
    peers(&args.python, &peer_args)?;
    drop(peer);
    let measured: serde_json::Value = serde_json::from_slice(&std::fs::read(&out)?)?;
    let mut per_query = BTreeMap::new();
    for &q in &queries {
        let m = &measured["queries"][format!("q{q}")];
        let datafusion_ms = datafusion_ms[&q];
        // A failed run is NaN (null in results.json) and counts as a mismatch.
        let lake_ms = m["lake_ms"].as_f64().unwrap_or(f64::NAN);
        let duckdb_ms = m["duckdb_ms"].as_f64().unwrap_or(f64::NAN);
        let mismatch = match (
            m["lake_error"].as_str(),
            m["duckdb_error"].as_str(),
            m["mismatch"].as_str(),
        ) {
            (Some(error), _, _) => Some(format!("Lake failed: {error}")),
            (None, Some(error), _) => Some(format!("DuckDB failed: {error}")),
            (None, None, Some(mismatch)) => Some(mismatch.to_string()),
            (None, None, None) => None,
        };
        let flight_peer_ms = args
            .flight_peer
            .as_ref()
            .map(|_| m["flight_peer_ms"].as_f64().unwrap_or(f64::NAN));
        let mismatch = mismatch.or_else(|| {
            m["flight_peer_error"]
                .as_str()
                .map(|error| format!("the Flight SQL peer failed: {error}"))
        });
        let answer_matches_duckdb = m["lake_matches_duckdb"].as_bool() == Some(true)
            && m["datafusion_matches_duckdb"].as_bool() != Some(false)
            && m["flight_peer_matches_duckdb"].as_bool() != Some(false);
        per_query.insert(
            format!("q{q}"),
            Query {
                lake_ms,
                duckdb_ms,
                datafusion_ms,
                rows: m["rows"].as_u64().unwrap_or(0),
                ratio_vs_duckdb: lake_ms / duckdb_ms,
                ratio_vs_datafusion: lake_ms / datafusion_ms,
                flight_peer_ms,
                ratio_vs_flight_peer: flight_peer_ms.map(|peer| lake_ms / peer),
                answer_matches_duckdb: answer_matches_duckdb && mismatch.is_none(),
                mismatch,
            },
        );
    }
    Ok(Tpch::from_queries(
        args.runs,
        measured["duckdb_version"].as_str().unwrap_or("").into(),
        per_query,
    ))
}

/// Writes `batches` (of `schema`, which an empty answer still has) as an Arrow IPC file.
fn write_ipc(path: &Path, schema: SchemaRef, batches: &[RecordBatch]) -> anyhow::Result<()> {
    let mut writer = FileWriter::try_new(std::fs::File::create(path)?, &schema)?;
    for batch in batches {
        writer.write(batch)?;
    }
    writer.finish()?;
    Ok(())
}

/// A selective query (one order by key) on the warm replica, through the SDK: latency
/// percentiles and the Metasrv requests the replica made while answering them; first as a
/// scan of `o_orderkey`, then after `CREATE INDEX ON default.orders (o_orderkey)` (a Lance B-tree),
/// with the time the index took to build.
async fn point_reads(server: &mut child::Server, scale: f64) -> anyhow::Result<PointReads> {
    eprintln!("lake-bench: point reads ...");
    let mut lake = LakeClient::connect(&server.endpoint).await?;
    let scan = lookups(&mut lake, scale, 0).await?;
    eprintln!("lake-bench: point reads: building the index on orders.o_orderkey ...");
    let started = Instant::now();
    lake.sql("CREATE INDEX IF NOT EXISTS o_orderkey_idx ON default.orders (o_orderkey)")
        .await?;
    let index_build_ms = started.elapsed().as_secs_f64() * 1e3;
    let before = server.metasrv_requests()?;
    // Other keys than the scan's, so no answer comes from a cache the scan warmed.
    let indexed = lookups(&mut lake, scale, POINT_WARMUP + POINT_QUERIES).await?;
    let requests = server.metasrv_requests()? - before;
    Ok(PointReads {
        queries: POINT_QUERIES,
        rows_found: scan.found + indexed.found,
        p50_ms: quantile(&indexed.times, 0.5).as_secs_f64() * 1e3,
        p99_ms: quantile(&indexed.times, 0.99).as_secs_f64() * 1e3,
        scan_p50_ms: quantile(&scan.times, 0.5).as_secs_f64() * 1e3,
        scan_p99_ms: quantile(&scan.times, 0.99).as_secs_f64() * 1e3,
        index_build_ms,
        metasrv_round_trips_per_query: requests as f64 / (POINT_WARMUP + POINT_QUERIES) as f64,
    })
}

/// What one series of point lookups measured: the timed latencies (sorted) and the rows
/// every lookup (warm-up included) returned.
struct Lookups {
    times: Vec<Duration>,
    found: usize,
}

/// [`POINT_WARMUP`] then [`POINT_QUERIES`] timed lookups of one order each, the `first`-th
/// pseudo-random order key on; every lookup must find its row.
async fn lookups(lake: &mut LakeClient, scale: f64, first: usize) -> anyhow::Result<Lookups> {
    // TPC-H order keys are sparse (spec § 4.2.3): the i-th order (i = 1..=N) has key
    // ((i >> 3) << 5) + (i & 7), as tpchgen's `make_order_key` computes it.
    let orders = (1_500_000.0 * scale) as u64;
    let key = |i: usize| {
        let n = (i as u64).wrapping_mul(2_654_435_761) % orders.max(1) + 1;
        ((n >> 3) << 5) + (n & 7)
    };
    let point = |k: u64| {
        format!(
            "SELECT o_orderkey, o_custkey, o_totalprice, o_orderdate FROM orders WHERE o_orderkey = {k}"
        )
    };
    let mut found = 0;
    let mut times = Vec::with_capacity(POINT_QUERIES);
    for i in first..first + POINT_WARMUP + POINT_QUERIES {
        let started = Instant::now();
        let batches = lake.sql(&point(key(i))).await?;
        if i >= first + POINT_WARMUP {
            times.push(started.elapsed());
        }
        found += batches.iter().map(RecordBatch::num_rows).sum::<usize>();
    }
    anyhow::ensure!(
        found == POINT_WARMUP + POINT_QUERIES,
        "{found} of {} point queries found their order; each should find exactly one",
        POINT_WARMUP + POINT_QUERIES
    );
    times.sort();
    Ok(Lookups { times, found })
}

/// Metasrv on a fresh RocksDB store in this process at 1, 8 and 64 writers, and synced
/// RocksDB writes on the same disk.
async fn commits(dir: &Path, seconds: u64) -> anyhow::Result<Commits> {
    use lake_metasrv::bench::{measure_commits, synced_writes_per_second};
    eprintln!("lake-bench: synced RocksDB writes ({seconds} s) ...");
    std::fs::create_dir_all(dir)?;
    let raw = dir.join("raw");
    let synced_writes_per_s =
        tokio::task::spawn_blocking(move || synced_writes_per_second(&raw, seconds)).await??;
    let store = lake_metasrv::RocksStore::open(&dir.join("metasrv"))?;
    let metasrv =
        lake_metasrv::Metasrv::start_node(Arc::new(store), lake_metasrv::single_node_election())?;
    let mut by_writers = vec![];
    for writers in [1, 8, 64] {
        eprintln!("lake-bench: commits with {writers} writers ({seconds} s) ...");
        let m = measure_commits(&metasrv, "bench", writers, seconds).await?;
        by_writers.push(CommitsAt {
            writers,
            commits: m.commits,
            retries: m.retries,
            commits_per_s: m.per_second,
            p50_ms: m.p50.as_secs_f64() * 1e3,
            p99_ms: m.p99.as_secs_f64() * 1e3,
            ratio_vs_synced_writes: m.per_second / synced_writes_per_s,
        });
    }
    metasrv.shutdown().await;
    Ok(Commits {
        synced_writes_per_s,
        by_writers,
    })
}

/// A Metasrv store of `--startup-tables` × `--startup-versions`: loading it by replaying
/// the whole log against loading its checkpoint and the tail, and a node's start on it.
async fn startup(dir: &Path, args: &Args) -> anyhow::Result<Startup> {
    let (tables, versions) = (args.startup_tables, args.startup_versions);
    eprintln!("lake-bench: metasrv startup on {tables} tables × {versions} versions ...");
    std::fs::create_dir_all(dir)?;
    let s = lake_metasrv::bench::measure_startup(dir, tables, versions).await?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    Ok(Startup {
        tables,
        versions_per_table: versions,
        events: s.events,
        replay_ms: ms(s.replay),
        checkpoint_ms: ms(s.checkpoint),
        checkpoint_bytes: s.checkpoint_bytes,
        load_ms: ms(s.load),
        node_start_ms: ms(s.node_start),
        ratio_load_vs_replay: ms(s.load) / ms(s.replay).max(1e-3),
    })
}

impl Results {
    fn new(scale: f64) -> Self {
        Self {
            scale,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            tpch: None,
            ingest: None,
            commits: None,
            point_reads: None,
            memory: Memory::default(),
            files: None,
            iceberg: None,
            startup: None,
            streaming: None,
        }
    }
}
