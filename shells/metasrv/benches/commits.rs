//! Commits per second through Metasrv, against the rate of synced RocksDB writes on the same
//! disk measured in the same run (the limit group commit should approach in writes and
//! exceed in commits), and on DynamoDB when an endpoint is given. The measurement itself is
//! [`lake_metasrv::bench`]; `lake-bench` runs the RocksDB half as part of the whole suite.
//!
//! `cargo bench --workspace --bench commits -- [--writers 1,8,64] [--seconds 5]
//!  [--dynamodb-endpoint http://127.0.0.1:5055]` (DynamoDB credentials from the standard AWS
//! environment; for moto any key works).

use std::sync::Arc;

use lake_metasrv::bench::{measure_commits, synced_writes_per_second};
use lake_metasrv::{DynamoStore, EventStore, Metasrv, RocksStore, single_node_election};

struct Args {
    writers: Vec<usize>,
    seconds: u64,
    dynamodb_endpoint: Option<String>,
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn args() -> Result<Args> {
    let mut parsed = Args {
        writers: vec![1, 8, 64],
        seconds: 5,
        dynamodb_endpoint: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--writers" => {
                parsed.writers = it
                    .next()
                    .ok_or("--writers needs a list like 1,8,64")?
                    .split(',')
                    .map(str::parse)
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|e| format!("--writers takes whole numbers: {e}"))?;
            }
            "--seconds" => {
                parsed.seconds = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--seconds needs a whole number")?;
            }
            "--dynamodb-endpoint" => parsed.dynamodb_endpoint = it.next(),
            _ => {} // cargo bench passes --bench
        }
    }
    Ok(parsed)
}

async fn run_store(
    store: Arc<dyn EventStore>,
    label: &str,
    args: &Args,
    baseline: f64,
) -> Result<()> {
    let metasrv = Metasrv::start_node(store, single_node_election())?;
    for &writers in &args.writers {
        let m = measure_commits(&metasrv, label, writers, args.seconds).await?;
        println!(
            "| {label} | {writers} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} |",
            m.commits,
            m.retries,
            m.per_second,
            m.p50.as_secs_f64() * 1000.0,
            m.p99.as_secs_f64() * 1000.0,
            m.per_second / baseline,
        );
    }
    metasrv.shutdown().await;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = args()?;
    let dir = tempfile::tempdir()?;
    let baseline = synced_writes_per_second(&dir.path().join("raw"), args.seconds)?;
    println!("synced RocksDB writes/s on this disk (one writer, one write each): {baseline:.0}");
    println!();
    println!(
        "| store | writers | commits | retried | commits/s | p50 ms | p99 ms | commits/s ÷ synced writes/s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let rocks = RocksStore::open(&dir.path().join("metasrv"))?;
    run_store(Arc::new(rocks), "rocksdb", &args, baseline).await?;
    if let Some(endpoint) = &args.dynamodb_endpoint {
        let table = format!(
            "lake-bench-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
        );
        DynamoStore::create_table(&table, Some(endpoint)).await?;
        let store = DynamoStore::connect(&table, Some(endpoint)).await?;
        run_store(Arc::new(store), "dynamodb", &args, baseline).await?;
    }
    Ok(())
}
