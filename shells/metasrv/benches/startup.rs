//! How long a Metasrv node takes to load a large registry, with and without a checkpoint,
//! ([`lake_metasrv::bench::measure_startup`]). The registry's memory is measured by
//! `core/tests/registry_memory.rs` (a counting allocator).
//!
//! `cargo bench --bench startup -- [--tables 10000] [--versions 100]` (release; the store is
//! built in a temporary directory first: 1,010,001 events at the defaults).

use lake_metasrv::bench::measure_startup;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn arg(name: &str, default: u64) -> Result<u64> {
    let mut args = std::env::args().skip_while(|a| a != name).skip(1);
    match args.next() {
        None => Ok(default),
        Some(value) => Ok(value
            .parse()
            .map_err(|e| format!("{name} takes a whole number: {e}"))?),
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let tables = arg("--tables", 10_000)?;
    let versions = arg("--versions", 100)?;
    let dir = tempfile::tempdir()?;
    eprintln!("building a store of {tables} tables × {versions} versions ...");
    let s = measure_startup(dir.path(), tables, versions).await?;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!("tables                      {}", s.tables);
    println!("versions per table          {}", s.versions_per_table);
    println!("events                      {}", s.events);
    println!("replay of the whole log     {:.0} ms", ms(s.replay));
    println!(
        "checkpoint write            {:.0} ms ({} bytes)",
        ms(s.checkpoint),
        s.checkpoint_bytes
    );
    println!("load: checkpoint + tail     {:.0} ms", ms(s.load));
    println!("node start to first commit  {:.0} ms", ms(s.node_start));
    println!(
        "ratio replay / load         {:.1}",
        ms(s.replay) / ms(s.load).max(1e-3)
    );
    Ok(())
}
