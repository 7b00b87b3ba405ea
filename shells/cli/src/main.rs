//! The `lake` command: the embedded server, the distributed processes (`metasrv`,
//! `query`, `meta`) and the client commands.
//!
//! Stdout carries data; stderr carries logs and progress. Flags win over `LAKE_*`
//! environment variables, which win over defaults.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use arrow::record_batch::RecordBatch;
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use lake::embedded;

/// mimalloc instead of glibc's malloc: scans and writes allocate and free many short-lived
/// buffers, and glibc's allocator took about a tenth of the CPU in a TPC-H q6 profile
/// (`_int_malloc`, `_int_free`, `malloc_consolidate`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Lake: a data lake service that answers Arrow Flight SQL.
#[derive(Parser)]
#[command(
    name = "lake",
    version,
    about,
    after_help = "Logging in (lake sql, lake ingest, lake file): LAKE_USER and LAKE_PASSWORD, or LAKE_TOKEN (a login's bearer token or an API token), when the replica requires a login."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the embedded all-in-one server: Metasrv on RocksDB, a Query replica answering
    /// Flight SQL, and tables on the local filesystem.
    Serve {
        /// Where table data and the Metasrv store live.
        #[arg(long, env = "LAKE_DATA_DIR", default_value = "./lake-data")]
        data_dir: PathBuf,
        /// Flight SQL listen address.
        #[arg(long, env = "LAKE_LISTEN", default_value = "127.0.0.1:50051")]
        listen: SocketAddr,
        /// Also load TPC-H into lake.tpch.* (through the SDK append path) if absent.
        #[arg(long)]
        demo: bool,
        /// TPC-H scale factor for --demo.
        #[arg(long, default_value_t = 0.01)]
        demo_scale: f64,
        #[command(flatten)]
        iceberg: lake::cluster::IcebergArgs,
        #[command(flatten)]
        limits: lake::cluster::LimitArgs,
        #[command(flatten)]
        maintenance: lake::cluster::MaintenanceArgs,
        #[command(flatten)]
        auth: lake::cluster::AuthArgs,
        #[command(flatten)]
        retention: lake::cluster::RetentionArgs,
    },
    /// Run one SQL statement and print the result.
    Sql {
        #[command(flatten)]
        replica: Replica,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// The statement.
        query: String,
    },
    /// Run one Metasrv node of a distributed Lake: it competes for the leader lease in the
    /// store; the leader coordinates commits, the others forward to it.
    Metasrv(lake::cluster::MetasrvOptions),
    /// Run one stateless Query replica: Flight SQL over a warehouse on object storage,
    /// with its catalog cache following Metasrv.
    Query(lake::cluster::QueryOptions),
    /// Metasrv administration.
    Meta {
        #[command(subcommand)]
        command: MetaCommand,
    },
    /// Large objects on a table's managed stage: upload, download, presigned URLs.
    File {
        #[command(subcommand)]
        command: FileCommand,
    },
    /// Users who may log in to a Query replica started with --users-file.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Append a Parquet or CSV file to a table (created from the file's schema if absent).
    Ingest {
        #[command(flatten)]
        replica: Replica,
        /// Target table: lake.namespace.table or namespace.table.
        table: String,
        /// A .parquet or .csv file (CSV with a header row).
        file: PathBuf,
        /// Idempotency key; a retry with the same key appends nothing new.
        #[arg(long)]
        operation_id: Option<String>,
    },
    /// Collect the garbage of a table's managed stage: remove the objects no retained
    /// version of the table names and that were last written more than the replica's
    /// --stage-gc-grace-secs ago (and what unfinished uploads left as long ago), and abort
    /// the S3 multipart uploads never completed and last written (started, or sent a part)
    /// as long ago. Prints one line per object or upload and the total bytes. Needs write
    /// on the table.
    Gc {
        #[command(flatten)]
        replica: Replica,
        /// The table: lake.namespace.table or namespace.table.
        table: String,
        /// Only print what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

/// Where a client command reaches a Query replica.
#[derive(clap::Args)]
struct Replica {
    /// Flight SQL endpoint of a Query replica: http:// or grpc:// (plain), https:// or
    /// grpc+tls:// (TLS). A replica that requires a login gets LAKE_USER and
    /// LAKE_PASSWORD, or LAKE_TOKEN, from the environment.
    #[arg(long, env = "LAKE_ENDPOINT", default_value = "http://127.0.0.1:50051")]
    endpoint: String,
    /// CA certificate(s) (PEM) the replica's TLS certificate must chain to (default: the
    /// system's roots).
    #[arg(long, env = "LAKE_TLS_CA")]
    tls_ca: Option<PathBuf>,
}

impl Replica {
    /// Connects (and logs in, see [`embedded::connect`]).
    async fn connect(&self) -> anyhow::Result<lake_sdk::LakeClient> {
        embedded::connect(&self.endpoint, self.tls_ca.as_deref()).await
    }
}

#[derive(Subcommand)]
enum UserCommand {
    /// Add a user, or set a new password for one. The password is read from
    /// LAKE_PASSWORD, else from the first line of standard input; the file keeps only its
    /// argon2id hash. Replicas read the file at start.
    Add {
        /// User name: 1 to 64 ASCII letters, digits, '_', '-', '.' or '@'.
        name: String,
        /// The users file (created if absent, mode 0600).
        #[arg(long, env = "LAKE_USERS_FILE")]
        users_file: PathBuf,
        /// A service instead: print a new random API token (`lakeapi.NAME.SECRET`) on
        /// standard output, once; the file keeps only its SHA-256. Clients send it as a
        /// bearer token (LAKE_TOKEN for the CLI), or as the password of a Basic login.
        /// Running it again replaces the token.
        #[arg(long)]
        api_token: bool,
        /// Make the user a superuser: every privilege on every namespace and catalog, and
        /// the right to GRANT them (see the README's security section). Without it or
        /// --no-admin, an existing user keeps what it was (a new password never demotes).
        #[arg(long, conflicts_with = "no_admin")]
        admin: bool,
        /// Make an existing superuser an ordinary user, held to its grants.
        #[arg(long)]
        no_admin: bool,
    },
}

#[derive(Subcommand)]
enum FileCommand {
    /// Upload a local file straight to the table's managed stage (the Query replica only
    /// tells where the stage is) and print its FILE value, for a row. Content-addressed:
    /// bytes already on the stage are not sent again. An interrupted upload to S3 resumes
    /// from its checkpoint when run again.
    Put {
        #[command(flatten)]
        replica: Replica,
        /// Table: lake.namespace.table or namespace.table.
        table: String,
        /// The file to upload.
        path: PathBuf,
        /// IANA media type (default: guessed from the file name, else
        /// application/octet-stream).
        #[arg(long)]
        media_type: Option<String>,
        /// Output: `text` (the FILE value as JSON plus a summary on stderr) or `json`
        /// (one JSON object with the FILE value and what the upload did).
        #[arg(long, value_enum, default_value_t = FileFormat::Text)]
        format: FileFormat,
        /// Part size in MiB (5 to 512); memory is about part size × concurrency.
        #[arg(long, default_value_t = 16)]
        part_size_mib: usize,
        /// Parts in flight (1 to 64).
        #[arg(long, default_value_t = 4)]
        concurrency: usize,
        /// Do not keep a resume checkpoint.
        #[arg(long)]
        no_resume: bool,
        /// Send the bytes even if the stage already holds them (repairs an object that was
        /// damaged on the store; a verified `get` reports such damage).
        #[arg(long)]
        force: bool,
    },
    /// Download a FILE by its URI (as `put` printed it) to a local path, verified: size and
    /// SHA-256 must match the content address, else nothing is written. An S3 stage is
    /// read through presigned URLs the replica signs after checking your read grant on the
    /// table (no storage credentials needed); a local stage is read directly.
    Get {
        #[command(flatten)]
        replica: Replica,
        /// The FILE URI: <stage>/sha256/<sha256>.
        uri: String,
        /// Where to write it.
        #[arg(long)]
        out: PathBuf,
    },
    /// Print a presigned GET URL for a FILE, for clients without storage credentials
    /// (S3 stages only), signed by the replica after checking your read grant on the table.
    Url {
        #[command(flatten)]
        replica: Replica,
        /// The FILE URI: <stage>/sha256/<sha256>.
        uri: String,
        /// Lifetime in seconds (1 to 604800).
        #[arg(long, default_value_t = 3600)]
        expires_secs: u64,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum FileFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum MetaCommand {
    /// Create the DynamoDB table a Metasrv group uses (idempotent).
    Init {
        /// The table name.
        #[arg(long)]
        dynamodb: String,
        /// DynamoDB endpoint override.
        #[arg(long, env = "LAKE_DYNAMODB_ENDPOINT")]
        dynamodb_endpoint: Option<String>,
    },
    /// Print a Metasrv node's health and readiness as JSON.
    Status {
        /// The node's endpoint (http:// or https://).
        #[arg(long, env = "LAKE_METASRV", default_value = "http://127.0.0.1:7000")]
        metasrv: String,
        #[command(flatten)]
        tls: lake::cluster::MetasrvTlsArgs,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

fn main() -> anyhow::Result<()> {
    // SAFETY: no thread has been started yet.
    unsafe { lake_query::dataset::size_lance_compute_pool() };
    lake::allocator::reset_on_purge();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colour only on a terminal: logs redirected to files stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LAKE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,lance=warn")),
        )
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(lake_query::sql::WORKER_STACK_BYTES)
        .build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Serve {
                data_dir,
                listen,
                demo,
                demo_scale,
                iceberg,
                limits,
                maintenance,
                auth,
                retention,
            } => {
                let options = embedded::ReplicaOptions {
                    stage_root: None,
                    iceberg: iceberg.config()?,
                    limits: limits.limits(),
                    maintenance: maintenance.maintenance()?,
                    auth: auth.options()?,
                    retention: retention.retention()?,
                };
                let server = embedded::start_with(
                    &data_dir,
                    listen,
                    &options,
                    lake::cluster::shutdown_signal(),
                )
                .await?;
                if demo {
                    embedded::load_demo(&server, demo_scale)
                        .await
                        .context("loading the TPC-H demo")?;
                }
                // Tests and scripts wait for this line on stderr.
                eprintln!("lake: ready on {}", server.flight_addr);
                server.wait().await
            }
            Command::Metasrv(options) => {
                lake::cluster::run_metasrv(options, lake::cluster::shutdown_signal()).await
            }
            Command::Query(options) => {
                lake::cluster::run_query(options, lake::cluster::shutdown_signal()).await
            }
            Command::Meta {
                command:
                    MetaCommand::Init {
                        dynamodb,
                        dynamodb_endpoint,
                    },
            } => {
                lake::cluster::validate_table_name(&dynamodb).map_err(anyhow::Error::msg)?;
                let created = lake_metasrv::DynamoStore::create_table(
                    &dynamodb,
                    dynamodb_endpoint.as_deref(),
                )
                .await?;
                eprintln!(
                    "lake: DynamoDB table {dynamodb} {}",
                    if created { "created" } else { "already exists" }
                );
                Ok(())
            }
            Command::Meta {
                command: MetaCommand::Status { metasrv, tls },
            } => {
                // A paused or hung node accepts connections but never answers.
                let answered = tokio::time::timeout(Duration::from_secs(3), async {
                    let client = tls.connect(&metasrv).await?;
                    anyhow::Ok(client.node_status().await?)
                })
                .await;
                let s = answered.map_err(|_| {
                    anyhow::anyhow!("metasrv at {metasrv} did not answer within 3 s")
                })??;
                let json = serde_json::json!({
                    "node": s.node,
                    "serving": s.serving,
                    "epoch": s.epoch,
                    "leader_node": s.leader_node,
                    "leader_address": s.leader_address,
                    "revision": s.revision,
                    "requests_served": s.requests_served,
                });
                println!("{json}");
                Ok(())
            }
            Command::Sql {
                replica,
                format,
                query,
            } => sql(&replica, format, &query).await,
            Command::Ingest {
                replica,
                table,
                file,
                operation_id,
            } => ingest(&replica, &table, &file, operation_id).await,
            Command::Gc {
                replica,
                table,
                dry_run,
            } => gc(&replica, &table, dry_run).await,
            Command::File { command } => file_command(command).await,
            Command::User {
                command:
                    UserCommand::Add {
                        name,
                        users_file,
                        api_token,
                        admin,
                        no_admin,
                    },
            } => {
                let admin = if admin {
                    Some(true)
                } else if no_admin {
                    Some(false)
                } else {
                    None
                };
                add_user(&name, &users_file, api_token, admin)
            }
        }
    })
}

async fn sql(replica: &Replica, format: Format, query: &str) -> anyhow::Result<()> {
    let mut lake = replica.connect().await?;
    let batches = lake.sql(query).await?;
    print_batches(&batches, format)
}

fn print_batches(batches: &[RecordBatch], format: Format) -> anyhow::Result<()> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // FILE values read as `uri (size, media type, sha256:…)` in tables and CSV; JSON
    // keeps their fields.
    let readable = || -> anyhow::Result<Vec<RecordBatch>> {
        Ok(batches
            .iter()
            .map(lake_sdk::file::readable)
            .collect::<Result<_, _>>()?)
    };
    match format {
        Format::Table => {
            writeln!(
                out,
                "{}",
                arrow::util::pretty::pretty_format_batches(&readable()?)?
            )?;
        }
        Format::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut out);
            for batch in readable()? {
                writer.write(&batch)?;
            }
        }
        Format::Json => {
            let mut writer = arrow::json::LineDelimitedWriter::new(&mut out);
            for batch in batches {
                writer.write(batch)?;
            }
            writer.finish()?;
        }
    }
    Ok(())
}

/// A byte-transfer progress bar on stderr (drawn only when stderr is a terminal).
fn transfer_bar(len: u64) -> anyhow::Result<ProgressBar> {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>9} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        )?
        .progress_chars("=> "),
    );
    Ok(bar)
}

async fn file_command(command: FileCommand) -> anyhow::Result<()> {
    match command {
        FileCommand::Put {
            replica,
            table,
            path,
            media_type,
            format,
            part_size_mib,
            concurrency,
            no_resume,
            force,
        } => {
            let media_type = media_type.unwrap_or_else(|| {
                mime_guess::from_path(&path)
                    .first_or_octet_stream()
                    .essence_str()
                    .to_string()
            });
            let mut lake = replica.connect().await?;
            let stage = lake.stage(&table).await?;
            let bar = transfer_bar(0)?;
            let progress_bar = bar.clone();
            let mut options = lake_sdk::UploadOptions {
                part_size: part_size_mib.saturating_mul(1 << 20),
                concurrency,
                force,
                progress: Some(Arc::new(move |p| match p {
                    lake_sdk::stage::Progress::Hashing { done, total } => {
                        progress_bar.set_message("hashing");
                        progress_bar.set_length(total.unwrap_or(done));
                        progress_bar.set_position(done);
                    }
                    lake_sdk::stage::Progress::Uploading { done, total } => {
                        progress_bar.set_message("uploading");
                        progress_bar.set_length(total);
                        progress_bar.set_position(done);
                    }
                    lake_sdk::stage::Progress::Downloading { .. } => {}
                })),
                ..Default::default()
            };
            if no_resume {
                options.checkpoint_dir = None;
            }
            let uploaded = stage.upload_path(&path, &media_type, &options).await;
            bar.finish_and_clear();
            let uploaded = uploaded?;
            match format {
                FileFormat::Json => {
                    let mut json = serde_json::to_value(&uploaded.file)?;
                    json["deduplicated"] = uploaded.deduplicated.into();
                    json["resumed_parts"] = uploaded.resumed_parts.into();
                    json["sent_parts"] = uploaded.sent_parts.into();
                    println!("{json}");
                }
                FileFormat::Text => {
                    println!("{}", serde_json::to_string(&uploaded.file)?);
                    eprintln!(
                        "lake: {} ({}) {} {}",
                        path.display(),
                        lake_sdk::file::human_size(uploaded.file.size),
                        if uploaded.deduplicated {
                            "was already on the stage at"
                        } else {
                            "uploaded to"
                        },
                        uploaded.file.uri
                    );
                }
            }
            Ok(())
        }
        FileCommand::Get { replica, uri, out } => {
            let (stage, file) = replica.connect().await?.stat_file(&uri).await?;
            let bar = transfer_bar(file.size)?;
            bar.set_message("reading");
            let progress_bar = bar.clone();
            let progress: lake_sdk::stage::ProgressFn = Arc::new(move |p| {
                if let lake_sdk::stage::Progress::Downloading { done, .. } = p {
                    progress_bar.set_position(done);
                }
            });
            let got = stage.download(&file, &out, Some(progress)).await;
            bar.finish_and_clear();
            got?;
            eprintln!(
                "lake: wrote {} ({}, sha256 verified)",
                out.display(),
                lake_sdk::file::human_size(file.size)
            );
            Ok(())
        }
        FileCommand::Url {
            replica,
            uri,
            expires_secs,
        } => {
            let (stage, file) = replica.connect().await?.stat_file(&uri).await?;
            let url = stage
                .presigned_url(&file, Duration::from_secs(expires_secs))
                .await?;
            println!("{url}");
            Ok(())
        }
    }
}

/// `lake gc`: collects (or, `dry_run`, lists) the garbage of `table`'s stage and prints
/// each object's bytes and URI, then a summary line.
async fn gc(replica: &Replica, table: &str, dry_run: bool) -> anyhow::Result<()> {
    let mut lake = replica.connect().await?;
    let table = table.strip_prefix("lake.").unwrap_or(table);
    let result = lake.collect_stage_garbage(table, dry_run).await?;
    for object in &result.removed {
        println!("{}\t{}", object.bytes, object.uri);
    }
    for upload in &result.aborted {
        println!("{}\t{}\t(unfinished upload)", upload.bytes, upload.uri);
    }
    let bytes: u64 = result.removed.iter().map(|o| o.bytes).sum();
    let upload_bytes: u64 = result.aborted.iter().map(|u| u.bytes).sum();
    let (remove, abort) = if result.applied {
        ("removed", "aborted")
    } else {
        ("would remove", "would abort")
    };
    println!(
        "{remove} {} objects ({bytes} bytes) and {abort} {} unfinished uploads ({upload_bytes} bytes); kept {} named by a retained version, and {} objects and {} unfinished uploads written within the grace period",
        result.removed.len(),
        result.aborted.len(),
        result.referenced,
        result.recent,
        result.recent_uploads
    );
    Ok(())
}

async fn ingest(
    replica: &Replica,
    table: &str,
    file: &Path,
    operation_id: Option<String>,
) -> anyhow::Result<()> {
    let (schema, rows) = open_rows(file)?;
    let mut lake = replica.connect().await?;
    let table = table.strip_prefix("lake.").unwrap_or(table).to_string();
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template(
        "{spinner} {pos} rows sent {msg}",
    )?);
    bar.set_message("(streaming; the table changes only when all are in)");
    let operation_id = operation_id.unwrap_or_else(|| {
        // The file's name (not its whole path, which may be longer than an operation id
        // may be) and the time: unique per run.
        let name: String = file
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(200)
                    .collect()
            })
            .unwrap_or_default();
        format!(
            "ingest-{name}-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        )
    });
    // The file is read on a blocking thread, a few batches ahead of the network: memory
    // stays bounded whatever the file's size.
    let (sender, receiver) =
        tokio::sync::mpsc::channel::<Result<RecordBatch, lake_sdk::SdkError>>(4);
    let reader = tokio::task::spawn_blocking(move || {
        for batch in rows {
            let batch =
                batch.map_err(|e| lake_sdk::SdkError::Arrow(format!("reading the file: {e}")));
            let failed = batch.is_err();
            if sender.blocking_send(batch).is_err() || failed {
                return;
            }
        }
    });
    let sent = bar.clone();
    let stream = futures::StreamExt::inspect(
        tokio_stream::wrappers::ReceiverStream::new(receiver),
        move |batch| {
            if let Ok(batch) = batch {
                sent.inc(batch.num_rows() as u64);
            }
        },
    );
    let result = lake.ingest(&table, schema, stream, &operation_id).await;
    reader.abort();
    bar.finish_and_clear();
    let result = result?;
    eprintln!(
        "lake: wrote {} rows to lake.{table} as version {} (one version; operation id {operation_id:?}){}",
        result.rows,
        result.version,
        if result.replayed {
            "; a replay: nothing new written"
        } else {
            ""
        }
    );
    Ok(())
}

/// The rows of a Parquet or CSV (with a header row) file, read in batches.
type FileRows = Box<dyn Iterator<Item = Result<RecordBatch, arrow::error::ArrowError>> + Send>;

fn open_rows(file: &Path) -> anyhow::Result<(arrow::datatypes::SchemaRef, FileRows)> {
    let extension = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let handle =
        std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
    match extension.as_str() {
        "parquet" => {
            let builder =
                datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                    handle,
                )?;
            let schema = builder.schema().clone();
            Ok((schema, Box::new(builder.build()?)))
        }
        "csv" => {
            let format = arrow::csv::reader::Format::default().with_header(true);
            let (schema, _) = format.infer_schema(std::fs::File::open(file)?, Some(10_000))?;
            let schema = Arc::new(schema);
            let reader = arrow::csv::ReaderBuilder::new(schema.clone())
                .with_header(true)
                .build(handle)?;
            Ok((schema, Box::new(reader)))
        }
        other => bail!(
            "cannot ingest {}: unknown extension {other:?}; use .parquet or .csv",
            file.display()
        ),
    }
}

/// `lake user add`: sets `name`'s password in `path` (see [`UserCommand::Add`]); `admin`
/// sets or clears the superuser mark (`None` keeps it).
fn add_user(name: &str, path: &Path, api_token: bool, admin: Option<bool>) -> anyhow::Result<()> {
    // A bad name is refused before a password is asked for.
    lake_query::auth::validate_user_name(name)?;
    let mut users = match std::fs::metadata(path) {
        Ok(_) => lake_query::auth::Users::load(path)?,
        Err(_) => lake_query::auth::Users::default(),
    };
    let token = if api_token {
        Some(users.set_api_token(name)?)
    } else {
        let password = match std::env::var("LAKE_PASSWORD") {
            Ok(password) => password,
            Err(_) => {
                eprintln!("password for {name} (one line on standard input):");
                let mut line = String::new();
                std::io::stdin().read_line(&mut line)?;
                line.trim_end_matches(['\r', '\n']).to_string()
            }
        };
        users.set(name, &password)?;
        None
    };
    let was_admin = users.is_admin(name);
    let admin = admin.unwrap_or(was_admin);
    match (was_admin, admin) {
        (true, false) => {
            eprintln!("{name} is no longer a superuser: it holds only what GRANT gives it");
        }
        (true, true) => {
            eprintln!("{name} stays a superuser (--no-admin makes it an ordinary user)")
        }
        _ => {}
    }
    users.set_admin(name, admin);
    let temporary = path.with_extension("tmp");
    {
        use std::io::Write as _;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options
            .open(&temporary)
            .with_context(|| format!("writing {}", temporary.display()))?;
        file.write_all(users.to_text().as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(&temporary, path).with_context(|| format!("replacing {}", path.display()))?;
    let role = if admin {
        "as a superuser"
    } else {
        "with what GRANT gives it"
    };
    eprintln!(
        "{name} can log in {role} to replicas started with --users-file {} ({} user(s))",
        path.display(),
        users.len()
    );
    if let Some(token) = token {
        // Only here, once: the file keeps its hash.
        println!("{token}");
    }
    Ok(())
}
