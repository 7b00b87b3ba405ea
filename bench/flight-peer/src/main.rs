//! `lake-bench-flight-peer LISTEN PARQUET_DIR`: serves every `NAME.parquet` in PARQUET_DIR as
//! table NAME over Arrow Flight SQL (datafusion-flight-sql-server's `FlightSqlService` on a
//! default DataFusion session: one target partition per core), until killed. Prints
//! `ready` on stdout once the tables are registered and the port is about to be served.

use datafusion::prelude::{ParquetReadOptions, SessionContext};
use datafusion_flight_sql_server::service::FlightSqlService;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(dir)) = (args.next(), args.next()) else {
        return Err("usage: lake-bench-flight-peer LISTEN PARQUET_DIR".into());
    };
    let ctx = SessionContext::new();
    let mut tables = 0;
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let (Some(name), Some("parquet")) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|s| s.to_str()),
        ) else {
            continue;
        };
        let location = path.to_str().ok_or("a Parquet path that is not UTF-8")?;
        ctx.register_parquet(name, location, ParquetReadOptions::default())
            .await?;
        tables += 1;
    }
    if tables == 0 {
        return Err(format!("no .parquet files in {dir}").into());
    }
    println!("ready");
    FlightSqlService::new(ctx.state()).serve(listen).await?;
    Ok(())
}
