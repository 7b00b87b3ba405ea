//! Commits per second through Metasrv, against the rate of synced RocksDB writes on the same
//! disk measured in the same run (the limit group commit should approach in writes and
//! exceed in commits), and on DynamoDB when an endpoint is given.
//!
//! Each writer commits to a table of its own, one version after another (base `v` → `v + 1`),
//! so what is measured is Metasrv — coordinator, group commit, store — not CAS conflicts.
//! Every run is bounded by a commit count and a time limit.
//!
//! `cargo bench --workspace --bench commits -- [--writers 1,8,64] [--seconds 5]
//!  [--dynamodb-endpoint http://127.0.0.1:5055]` (DynamoDB credentials from the standard AWS
//! environment; for moto any key works).

use std::sync::Arc;
use std::time::{Duration, Instant};

use lake_core::commit::{Applied, Mutation};
use lake_core::{CommitError, ManifestRef};
use lake_metasrv::{DynamoStore, EventStore, Metasrv, RocksStore, single_node_election};

struct Args {
    writers: Vec<usize>,
    seconds: u64,
    dynamodb_endpoint: Option<String>,
}

fn args() -> Args {
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
                    .expect("--writers needs a list like 1,8,64")
                    .split(',')
                    .map(|w| w.parse().expect("--writers: whole numbers"))
                    .collect();
            }
            "--seconds" => {
                parsed.seconds = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .expect("--seconds needs a whole number");
            }
            "--dynamodb-endpoint" => parsed.dynamodb_endpoint = it.next(),
            _ => {} // cargo bench passes --bench
        }
    }
    parsed
}

/// Synced single-key RocksDB writes per second on this disk, one after another: what one
/// committer without group commit could reach.
fn synced_writes_per_second(dir: &std::path::Path, seconds: u64) -> f64 {
    let db = rocksdb::DB::open_default(dir).expect("open rocksdb");
    let mut options = rocksdb::WriteOptions::default();
    options.set_sync(true);
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < Duration::from_secs(seconds) && n < 1_000_000 {
        let mut batch = rocksdb::WriteBatch::default();
        batch.put(n.to_be_bytes(), [0u8; 200]);
        db.write_opt(batch, &options).expect("write");
        n += 1;
    }
    n as f64 / started.elapsed().as_secs_f64()
}

struct Measured {
    /// Commits sent again after a retryable refusal (a leader step-down under load).
    retries: u64,
    commits: usize,
    per_second: f64,
    p50: Duration,
    p99: Duration,
}

/// `writers` concurrent committers on `metasrv`, each on its own table, for `seconds`.
async fn measure(metasrv: &Metasrv, label: &str, writers: usize, seconds: u64) -> Measured {
    let namespace = format!("{label}_{writers}");
    loop {
        let answer = metasrv
            .mutate(Mutation::CreateNamespace {
                name: namespace.clone(),
            })
            .await;
        match answer {
            Ok(_)
            | Err(lake_metasrv::MetasrvError::Commit(CommitError::NamespaceExists { .. })) => {
                break;
            }
            Err(lake_metasrv::MetasrvError::Commit(e)) if e.is_retryable() => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("create namespace: {e}"),
        }
    }
    let mut tables = Vec::new();
    for w in 0..writers {
        let reply = loop {
            let answer = metasrv
                .mutate(Mutation::CreateTable {
                    namespace: namespace.clone(),
                    name: format!("t{w}"),
                    schema_ipc: vec![],
                })
                .await;
            match answer {
                Ok(reply) => match reply.applied {
                    Applied::TableCreated(meta) => break meta.id,
                    other => panic!("{other:?}"),
                },
                // An earlier attempt whose outcome was unknown did create it.
                Err(lake_metasrv::MetasrvError::Commit(CommitError::TableExists { .. })) => {
                    let (ns, name) = (namespace.clone(), format!("t{w}"));
                    let id = metasrv
                        .read(move |r| r.table(&ns, &name).map(|t| t.meta.id))
                        .await
                        .expect("read");
                    break id.expect("the table exists");
                }
                Err(lake_metasrv::MetasrvError::Commit(e)) if e.is_retryable() => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("create table: {e}"),
            }
        };
        tables.push(reply);
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = tables
        .into_iter()
        .map(|table_id| {
            let metasrv = metasrv.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut version = 0;
                let mut retries = 0u64;
                while Instant::now() < deadline && version < 100_000 {
                    let sent = Instant::now();
                    loop {
                        let answer = metasrv
                            .mutate(Mutation::Commit {
                                table_id,
                                base_version: version,
                                manifest: ManifestRef {
                                    path: format!("_versions/{}.manifest", version + 1),
                                    size_bytes: 1000,
                                },
                                operation: Some((format!("op-{table_id}-{version}"), [7; 32])),
                            })
                            .await;
                        match answer {
                            Ok(_) => break,
                            // A step-down or a store hiccup: the same operation id is safe
                            // to send again (a landed commit comes back as a replay).
                            Err(lake_metasrv::MetasrvError::Commit(e)) if e.is_retryable() => {
                                retries += 1;
                                tokio::time::sleep(Duration::from_millis(20)).await;
                            }
                            Err(e) => panic!("commit: {e}"),
                        }
                    }
                    latencies.push(sent.elapsed());
                    version += 1;
                }
                (latencies, retries)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut retries = 0;
    for task in tasks {
        let (l, r) = task.await.expect("writer");
        latencies.extend(l);
        retries += r;
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Measured {
        retries,
        commits: latencies.len(),
        per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: at(0.5),
        p99: at(0.99),
    }
}

async fn run_store(store: Arc<dyn EventStore>, label: &str, args: &Args, baseline: f64) {
    let metasrv = Metasrv::start_node(store, single_node_election()).expect("start");
    for &writers in &args.writers {
        let m = measure(&metasrv, label, writers, args.seconds).await;
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
}

#[tokio::main]
async fn main() {
    let args = args();
    let dir = tempfile::tempdir().expect("tempdir");
    let baseline = synced_writes_per_second(&dir.path().join("raw"), args.seconds);
    println!("synced RocksDB writes/s on this disk (one writer, one write each): {baseline:.0}");
    println!();
    println!(
        "| store | writers | commits | retried | commits/s | p50 ms | p99 ms | commits/s ÷ synced writes/s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let rocks = RocksStore::open(&dir.path().join("metasrv")).expect("rocksdb");
    run_store(Arc::new(rocks), "rocksdb", &args, baseline).await;
    if let Some(endpoint) = &args.dynamodb_endpoint {
        let table = format!(
            "lake-bench-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis())
        );
        DynamoStore::create_table(&table, Some(endpoint))
            .await
            .expect("create the DynamoDB table");
        let store = DynamoStore::connect(&table, Some(endpoint))
            .await
            .expect("dynamodb");
        run_store(Arc::new(store), "dynamodb", &args, baseline).await;
    }
}
