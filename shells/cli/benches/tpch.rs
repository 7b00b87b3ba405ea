//! TPC-H over Flight SQL (Lake, embedded, in this process) against DataFusion in-process on
//! the same rows written as Parquet. Prints per-query medians and ratios (Lake / DataFusion;
//! lower is better, 1.0 is parity) and checks that both return the same number of rows.
//!
//! `cargo bench -p lake --bench tpch -- --scale 1 --runs 3 [--queries 1,3,6]`

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use lake::{embedded, tpch};
use lake_sdk::LakeClient;

/// Rows per append when loading Lake (keeps each DoPut well under the request limit).
const APPEND_ROWS: usize = 500_000;

struct Args {
    scale: f64,
    runs: usize,
    queries: Vec<usize>,
}

fn args() -> anyhow::Result<Args> {
    let mut parsed = Args {
        scale: 1.0,
        runs: 3,
        queries: (1..=22).collect(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--scale" => parsed.scale = it.next().context("--scale needs a value")?.parse()?,
            "--runs" => parsed.runs = it.next().context("--runs needs a value")?.parse()?,
            "--queries" => {
                parsed.queries = it
                    .next()
                    .context("--queries needs a list like 1,6")?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
            }
            _ => {} // cargo bench passes --bench
        }
    }
    anyhow::ensure!(parsed.runs >= 1, "--runs must be at least 1");
    Ok(parsed)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

fn main() -> anyhow::Result<()> {
    let args = args()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let parquet_dir = dir.path().join("parquet");
    std::fs::create_dir_all(&parquet_dir)?;
    let server = embedded::start(
        &dir.path().join("lake"),
        "127.0.0.1:0".parse()?,
        std::future::pending(),
    )
    .await?;
    let mut lake = LakeClient::connect(&server.endpoint()).await?;
    let config = SessionConfig::new()
        .with_target_partitions(std::thread::available_parallelism().map_or(2, |n| n.get()));
    let df = SessionContext::new_with_config(config);

    eprintln!("generating TPC-H at scale factor {} ...", args.scale);
    let load_started = Instant::now();
    for table in tpch::TABLES {
        let (schema, batches) = tpch::generate(table, args.scale)?;
        let path = parquet_dir.join(format!("{table}.parquet"));
        let mut writer = ArrowWriter::try_new(std::fs::File::create(&path)?, schema.clone(), None)?;
        for batch in &batches {
            writer.write(batch)?;
        }
        writer.close()?;
        df.register_parquet(
            table,
            path.to_string_lossy().as_ref(),
            ParquetReadOptions::default(),
        )
        .await?;
        lake.create_table(&format!("default.{table}"), schema)
            .await?;
        let mut chunk = Vec::new();
        let mut chunk_rows = 0;
        let mut part = 0;
        for batch in batches {
            chunk_rows += batch.num_rows();
            chunk.push(batch);
            if chunk_rows >= APPEND_ROWS {
                lake.append(
                    &format!("default.{table}"),
                    std::mem::take(&mut chunk),
                    &format!("load-{table}-{part}"),
                )
                .await?;
                chunk_rows = 0;
                part += 1;
            }
        }
        if !chunk.is_empty() {
            lake.append(
                &format!("default.{table}"),
                chunk,
                &format!("load-{table}-{part}"),
            )
            .await?;
        }
    }
    eprintln!("loaded in {:.1} s", load_started.elapsed().as_secs_f64());

    let queries_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/tpch");
    println!("| query | lake (Flight SQL) ms | DataFusion (Parquet) ms | ratio | rows |");
    println!("|---|---|---|---|---|");
    let (mut lake_total, mut df_total) = (Duration::ZERO, Duration::ZERO);
    for q in &args.queries {
        let sql = std::fs::read_to_string(queries_dir.join(format!("q{q}.sql")))
            .with_context(|| format!("reading q{q}.sql"))?;
        let sql = sql.trim().trim_end_matches(';');
        // One warm-up of each, then `runs` timed runs.
        let lake_rows = rows(&lake.sql(sql).await.with_context(|| format!("lake q{q}"))?);
        let df_rows = rows(&df.sql(sql).await?.collect().await?);
        anyhow::ensure!(
            lake_rows == df_rows,
            "q{q}: lake returned {lake_rows} rows, DataFusion {df_rows}"
        );
        let mut lake_times = Vec::new();
        let mut df_times = Vec::new();
        for _ in 0..args.runs {
            let t = Instant::now();
            lake.sql(sql).await?;
            lake_times.push(t.elapsed());
            let t = Instant::now();
            df.sql(sql).await?.collect().await?;
            df_times.push(t.elapsed());
        }
        let (l, d) = (median(lake_times), median(df_times));
        lake_total += l;
        df_total += d;
        println!(
            "| q{q} | {:.1} | {:.1} | {:.2} | {lake_rows} |",
            l.as_secs_f64() * 1e3,
            d.as_secs_f64() * 1e3,
            l.as_secs_f64() / d.as_secs_f64()
        );
    }
    println!(
        "| total | {:.1} | {:.1} | {:.2} | |",
        lake_total.as_secs_f64() * 1e3,
        df_total.as_secs_f64() * 1e3,
        lake_total.as_secs_f64() / df_total.as_secs_f64()
    );
    Ok(())
}
