//! The query engine of a replica: pins snapshots, plans with DataFusion, executes reads,
//! and carries out writes (DDL, INSERT, appends) through Lance and Metasrv.

use std::collections::BTreeMap;
use std::io::Cursor;
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow_flight::{IpcMessage, SchemaAsIpc};
use datafusion::catalog::{
    CatalogProvider, MemoryCatalogProvider, MemorySchemaProvider, SchemaProvider,
};
use datafusion::common::ScalarValue;
use datafusion::datasource::TableProvider;
use datafusion::datasource::empty::EmptyTable;
use datafusion::error::DataFusionError;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{DdlStatement, DmlStatement, LogicalPlan, WriteOp};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::{FutureExt, StreamExt, TryStreamExt};
use lake_core::{
    GrantScope, Privilege, Registry, TableMeta, TableState, TimeTravel, VersionSpec,
    resolve_version,
};
use lake_metasrv::MetasrvClient;
use lake_metasrv::client::Committed;

use crate::QueryError;
use crate::access::{self, Access, AccessChange};
use crate::catalog::Catalog;
use crate::dataset::{Datasets, RowStream};
use crate::dml::{self, Change};
use crate::duplicate_names;
use crate::iceberg::{IcebergCatalog, IcebergConfig, IcebergPin};
use crate::scan::LanceTable;
use crate::sql::{
    self, DEFAULT_NAMESPACE, ICEBERG_CATALOG, LAKE_CATALOG, ParsedStatement, WriteKind,
};
use crate::ticket::{Pin, Sealed, TicketKey, b64, unb64};

/// How long a write waits for the local catalog to show its own commit.
const READ_YOUR_WRITES_TIMEOUT: Duration = Duration::from_secs(10);

/// What planning a statement produced: its result schema and the sealed ticket whose
/// DoGet serves it.
pub struct Planned {
    /// The result schema: the query's rows, or `count: Int64` for a write.
    pub schema: SchemaRef,
    /// The ticket.
    pub ticket: Sealed,
    /// Rows written, when a write already ran ([`Writes::AtPlanning`]).
    pub written: Option<i64>,
}

/// When a write statement planned through GetFlightInfo runs, and the operation id it
/// commits under (an INSERT sent again under the same id appends nothing new).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Writes {
    /// When its ticket is redeemed (DoGet), as Flight SQL means a query's FlightInfo to
    /// be used: an abandoned or retried GetFlightInfo writes nothing, and the ticket
    /// carries the operation id, so a retried DoGet writes once. Ad-hoc statements
    /// (`CommandStatementQuery`).
    AtRedeem { operation_id: Option<String> },
    /// At planning, before GetFlightInfo answers: prepared statements
    /// (`CommandPreparedStatementQuery`), which is how ADBC's `execute` sends every
    /// statement — it never redeems the ticket of a statement whose rows nobody reads.
    /// A retry is a replay when the handle (a parameter bind) or the client (an
    /// `idempotency-key` header) gave an operation id.
    AtPlanning { operation_id: Option<String> },
}

/// Schema of write results: one row, `count: Int64` (rows written; 0 for DDL).
pub fn count_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(
        "count",
        DataType::Int64,
        false,
    )]))
}

/// The schema of a result as Lake sends it over Flight: `schema` with every dictionary
/// type replaced by its value type and every large list by a list, at any depth.
/// GetFlightInfo announces this schema and DoGet streams batches cast to it, so the two
/// are equal for every type (clients such as ADBC refuse a stream whose schema differs
/// from the announced one). Large lists travel as lists because arrow-flight 58's encoder
/// announces a large list as a list (`prepare_field_for_flight`) whatever the batches hold.
/// Columns are named as clients see them ([`duplicate_names::shown`]: `SELECT a, a` gives
/// two columns named `a`).
pub fn wire_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<Field> = schema.fields().iter().map(|f| wire_field(f)).collect();
    Arc::new(Schema::new(fields).with_metadata(schema.metadata().clone()))
}

fn wire_field(field: &Field) -> Field {
    let shown = duplicate_names::shown(field.name()).to_string();
    (field.clone())
        .with_name(shown)
        .with_data_type(wire_type(field.data_type()))
}

fn wire_type(data_type: &DataType) -> DataType {
    let child = |f: &arrow::datatypes::FieldRef| Arc::new(wire_field(f));
    match data_type {
        DataType::Dictionary(_, value) => wire_type(value),
        DataType::List(f) => DataType::List(child(f)),
        DataType::LargeList(f) => DataType::List(child(f)),
        DataType::ListView(f) => DataType::ListView(child(f)),
        DataType::LargeListView(f) => DataType::LargeListView(child(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(child(f), *n),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(child).collect()),
        DataType::Map(f, sorted) => DataType::Map(child(f), *sorted),
        other => other.clone(),
    }
}

/// What a Lake table stores, for error messages.
const STORABLE_TYPES: &str = "the supported types are BOOLEAN, signed and unsigned integers, \
REAL/DOUBLE (and half floats), DECIMAL(p, s) up to 76 digits, DATE, TIME, TIMESTAMP with or \
without a time zone, DURATION, VARCHAR, BYTEA, fixed-size binary, lists, structs, maps and FILE";

/// The type a table column of `data_type` stores (its SQL type, in the layout Lance
/// keeps): dictionaries as their values; string and binary views as strings and
/// binaries; every list kind as a list; 32- and 64-bit decimals as 128-bit ones of the
/// same precision and scale; at any depth. A table declares this type and reads return
/// it; appends of the other layouts are cast to it ([`stores_as`]).
///
/// # Errors
/// The (innermost) type Lance cannot store: intervals, unions, run-end encoded arrays,
/// the null type inside a nested type.
fn storage_type(data_type: &DataType) -> Result<DataType, DataType> {
    use DataType::*;
    let child = |f: &arrow::datatypes::FieldRef| -> Result<_, DataType> {
        Ok(Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(storage_type(f.data_type())?),
        ))
    };
    Ok(match data_type {
        Dictionary(_, value) => storage_type(value)?,
        Utf8View => Utf8,
        BinaryView => Binary,
        Decimal32(p, s) | Decimal64(p, s) => Decimal128(*p, *s),
        List(f) | LargeList(f) | ListView(f) | LargeListView(f) => List(child(f)?),
        FixedSizeList(f, n) => FixedSizeList(child(f)?, *n),
        Struct(fields) => Struct(fields.iter().map(child).collect::<Result<_, _>>()?),
        Map(f, sorted) => Map(child(f)?, *sorted),
        Interval(_) | Union(..) | RunEndEncoded(..) | Null => return Err(data_type.clone()),
        other => other.clone(),
    })
}

/// Encodes an Arrow schema as an encapsulated IPC schema message.
///
/// # Errors
/// [`QueryError::InvalidArgument`] when Arrow cannot encode it.
pub fn schema_to_ipc(schema: &Schema) -> Result<Vec<u8>, QueryError> {
    let options = IpcWriteOptions::default();
    let message: IpcMessage = SchemaAsIpc::new(schema, &options).try_into()?;
    Ok(message.0.to_vec())
}

/// Decodes [`schema_to_ipc`].
///
/// # Errors
/// [`QueryError::InvalidArgument`].
pub fn schema_from_ipc(bytes: &[u8]) -> Result<Schema, QueryError> {
    Ok(Schema::try_from(IpcMessage(bytes.to_vec().into()))?)
}

/// Arrow IPC stream bytes of `batches`.
///
/// # Errors
/// [`QueryError::InvalidArgument`].
pub fn batches_to_ipc(schema: &Schema, batches: &[RecordBatch]) -> Result<Vec<u8>, QueryError> {
    let mut writer = StreamWriter::try_new(Vec::new(), schema)?;
    for batch in batches {
        writer.write(batch)?;
    }
    Ok(writer.into_inner()?)
}

/// Inverse of [`batches_to_ipc`].
///
/// # Errors
/// [`QueryError::InvalidArgument`].
pub fn batches_from_ipc(bytes: &[u8]) -> Result<(SchemaRef, Vec<RecordBatch>), QueryError> {
    let reader = StreamReader::try_new(Cursor::new(bytes), None)?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>()?;
    Ok((schema, batches))
}

/// The schema a new table gets from a requested one: each column's [`storage_type`]; time
/// zones stay as written (Lance 14 stores `+08:00`); schema-level metadata is dropped.
///
/// # Errors
/// [`QueryError::InvalidArgument`] for no columns, duplicate or empty column names,
/// columns without a type (`Null`, e.g. from an all-empty CSV column), and types a table
/// cannot store (naming the column, its type and what a table stores).
pub fn table_schema(requested: SchemaRef) -> Result<SchemaRef, QueryError> {
    if requested.fields().is_empty() {
        return Err(QueryError::InvalidArgument(
            "a table needs at least one column".into(),
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut fields = Vec::with_capacity(requested.fields().len());
    for field in requested.fields() {
        // A repeated result column (`CREATE TABLE t AS SELECT a, a …`) under the name it shows.
        let name = duplicate_names::shown(field.name());
        if name.is_empty() || name.contains('.') {
            return Err(QueryError::InvalidArgument(format!(
                "column name {name:?} is not allowed: use a non-empty name without '.'"
            )));
        }
        if !seen.insert(name.to_lowercase()) {
            return Err(QueryError::InvalidArgument(format!(
                "column {name:?} appears twice (names are compared case-insensitively)"
            )));
        }
        if field.data_type() == &DataType::Null {
            return Err(QueryError::InvalidArgument(format!(
                "column {name:?} has no type (Null); give it one, e.g. CAST(NULL AS BIGINT)"
            )));
        }
        let data_type = storage_type(field.data_type()).map_err(|refused| {
            QueryError::InvalidArgument(format!(
                "column {name:?} has type {}, which a Lake table cannot store{}; {STORABLE_TYPES}",
                field.data_type(),
                if refused == *field.data_type() {
                    String::new()
                } else {
                    format!(" (its {refused} values)")
                }
            ))
        })?;
        fields.push(field.as_ref().clone().with_data_type(data_type));
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// Checks that `batch` fits `table` (same column names and types, in order, where a type
/// may come in an equivalent layout ([`stores_as`]); non-nullable columns without nulls)
/// and rebinds it to the table's schema.
///
/// # Errors
/// [`QueryError::InvalidArgument`] naming both schemas.
pub fn conform_batch(
    table: &str,
    schema: &SchemaRef,
    batch: RecordBatch,
) -> Result<RecordBatch, QueryError> {
    let describe = |s: &Schema| {
        s.fields()
            .iter()
            .map(|f| format!("{} {}", f.name(), f.data_type()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let got = batch.schema();
    let fits = got.fields().len() == schema.fields().len()
        && got
            .fields()
            .iter()
            .zip(schema.fields())
            .all(|(g, w)| g.name() == w.name() && stores_as(g.data_type(), w.data_type()));
    if !fits {
        return Err(QueryError::InvalidArgument(format!(
            "schema mismatch: table {table} has columns ({}); the rows have ({})",
            describe(schema),
            describe(&got)
        )));
    }
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| {
            if column.data_type() == field.data_type() {
                Ok(column.clone())
            } else {
                // An equivalent layout ([`stores_as`]): the values stay; a value the table's
                // layout cannot hold (over 2 GiB of strings) is an error.
                let options = arrow::compute::CastOptions {
                    safe: false,
                    ..Default::default()
                };
                arrow::compute::cast_with_options(column, field.data_type(), &options)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| QueryError::InvalidArgument(format!("rows do not fit table {table}: {e}")))
}

/// Casts `batch` column by column to `schema` (same arity), as SQL assignment does: a
/// DOUBLE beyond REAL's range is an error ([`crate::checked_integers::real_of`]).
fn cast_batch(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, QueryError> {
    use arrow::array::AsArray;
    if batch.num_columns() != schema.fields().len() {
        return Err(QueryError::InvalidArgument(format!(
            "INSERT supplies {} columns; the table has {}",
            batch.num_columns(),
            schema.fields().len()
        )));
    }
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| {
            let invalid = |e: &dyn std::fmt::Display| {
                QueryError::InvalidArgument(format!("column {}: {e}", field.name()))
            };
            // Arrow's cast makes a DOUBLE beyond REAL's range infinite; SQL refuses it.
            if let (Some(doubles), DataType::Float32) = (
                column.as_primitive_opt::<arrow::datatypes::Float64Type>(),
                field.data_type(),
            ) {
                let reals: arrow::array::Float32Array = doubles
                    .try_unary(crate::checked_integers::real_of)
                    .map_err(|e| invalid(&QueryError::from(e)))?;
                return Ok(Arc::new(reals) as arrow::array::ArrayRef);
            }
            let options = arrow::compute::CastOptions {
                safe: false,
                ..Default::default()
            };
            arrow::compute::cast_with_options(column, field.data_type(), &options)
                .map_err(|e| invalid(&e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| QueryError::InvalidArgument(format!("rows do not fit the table: {e}")))
}

/// Refuses a result whose decimal column holds a value with more digits than its type's
/// precision: Arrow's decimal arithmetic does not check precision, so `DECIMAL(38, 0)`
/// max + 1 would otherwise be sent as a 39-digit value of a 38-digit type.
///
/// # Errors
/// [`QueryError::InvalidArgument`] naming the column and its type.
fn check_decimals(batch: &RecordBatch) -> Result<(), QueryError> {
    use arrow::array::AsArray;
    use arrow::datatypes::{Decimal128Type, Decimal256Type};
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let valid = match field.data_type() {
            DataType::Decimal128(p, _) => column
                .as_primitive::<Decimal128Type>()
                .validate_decimal_precision(*p),
            DataType::Decimal256(p, _) => column
                .as_primitive::<Decimal256Type>()
                .validate_decimal_precision(*p),
            _ => Ok(()),
        };
        if valid.is_err() {
            return Err(QueryError::InvalidArgument(format!(
                "decimal overflow: column {:?} has a value with more digits than its type {} holds",
                field.name(),
                field.data_type()
            )));
        }
    }
    Ok(())
}

/// DataFusion's analyzer rules with Lake's: [`crate::patterns::Patterns`] and
/// [`crate::exact_sums::ExactSums`] before type coercion (so the regular-expression match
/// and arithmetic on a sum are coerced for their new types), and
/// [`crate::checked_integers::CheckedIntegers`] and
/// [`crate::canonical_float::CanonicalFloats`] after it (they need the coerced types).
fn analyzer_rules() -> Vec<Arc<dyn datafusion::optimizer::AnalyzerRule + Send + Sync>> {
    let mut rules = datafusion::optimizer::Analyzer::new().rules;
    let coercion = rules
        .iter()
        .position(|rule| rule.name() == "type_coercion")
        .unwrap_or(rules.len());
    rules.insert(coercion, Arc::new(crate::exact_sums::ExactSums));
    rules.insert(coercion, Arc::new(crate::patterns::Patterns));
    rules.push(Arc::new(crate::decimal_literals::DecimalLiterals));
    rules.push(Arc::new(crate::checked_integers::CheckedIntegers));
    rules.push(Arc::new(crate::canonical_float::CanonicalFloats));
    rules.push(Arc::new(crate::group_views::GroupViews));
    rules
}

/// How a statement's placeholders are bound when planning.
enum Bind {
    /// Leave placeholders (describing a prepared statement).
    Describe,
    /// The statement must have no placeholders.
    Nothing,
    /// One row of values, one per placeholder.
    Values(Vec<ScalarValue>),
}

/// Whether a column of type `given` stores as `table` without change of values: the same
/// type, or another Arrow layout of the same SQL type, at any depth:
/// * a dictionary of it;
/// * `Utf8`, `LargeUtf8` and `Utf8View` (VARCHAR); `Binary`, `LargeBinary` and
///   `BinaryView` (BYTEA);
/// * `List`, `LargeList`, `ListView` and `LargeListView` of elements that store as the
///   table's (element names may differ: `item`, `element`);
/// * 32- and 64-bit decimals for a 128-bit one of the same precision and scale;
/// * structs whose fields have the table's names, in order, and store as its types;
/// * a timestamp of the same unit with another spelling of its zone (the instants are UTC
///   either way).
///
/// [`conform_batch`] casts such columns to the table's type.
fn stores_as(given: &DataType, table: &DataType) -> bool {
    use DataType::*;
    let string = |t: &DataType| matches!(t, Utf8 | LargeUtf8 | Utf8View);
    let binary = |t: &DataType| matches!(t, Binary | LargeBinary | BinaryView);
    let list = |t: &DataType| match t {
        List(f) | LargeList(f) | ListView(f) | LargeListView(f) => Some(f.clone()),
        _ => None,
    };
    match (given, table) {
        (Dictionary(_, value), _) => stores_as(value, table),
        (a, b) if string(a) && string(b) => true,
        (a, b) if binary(a) && binary(b) => true,
        (Timestamp(a, Some(_)), Timestamp(b, Some(_))) => a == b,
        (Decimal32(p, s) | Decimal64(p, s), Decimal128(q, t)) => p == q && s == t,
        (FixedSizeList(a, n), FixedSizeList(b, m)) => {
            n == m && stores_as(a.data_type(), b.data_type())
        }
        (Struct(a), Struct(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(a, b)| a.name() == b.name() && stores_as(a.data_type(), b.data_type()))
        }
        (Map(a, _), Map(b, _)) => stores_as(a.data_type(), b.data_type()),
        (a, b) => match (list(a), list(b)) {
            (Some(a), Some(b)) => stores_as(a.data_type(), b.data_type()),
            _ => a == b,
        },
    }
}

/// A fresh operation id for a write whose client gave none.
pub fn random_operation_id() -> String {
    format!("lake-{:032x}", rand::random::<u128>())
}

/// What one statement may use on a replica. A statement past a limit is cancelled and
/// fails alone (`RESOURCE_EXHAUSTED` for memory, `DEADLINE_EXCEEDED` for time) while the
/// replica goes on serving others; a write that fails so commits nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Memory one statement's operators may reserve (hash tables of joins, aggregates and
    /// DISTINCT, sorts), in bytes. Past it, operators that can spill do (within
    /// `spill_bytes`); the others fail the statement. DataFusion's `FairSpillPool`, one per
    /// statement. Scan and network buffers are not counted.
    pub statement_memory_bytes: usize,
    /// Disk that spill files of all statements on the replica may take at once, in bytes
    /// (in the OS temporary directory); 0 turns spilling off.
    pub spill_bytes: u64,
    /// Longest a statement may run, from planning to its last row (a write: to the end of
    /// its rows, before the commit, which is never cut short).
    pub statement_timeout: Duration,
    /// Statements (reads being served and writes) one principal may run at once on the
    /// replica; past it, more are refused with `RESOURCE_EXHAUSTED` (see
    /// [`crate::running`]).
    pub statements_per_principal: usize,
}

impl Default for Limits {
    /// 4 GiB of memory and 10 minutes per statement; 16 GiB of spill files; 64 statements
    /// at once per principal.
    fn default() -> Self {
        Self {
            statement_memory_bytes: 4 << 30,
            spill_bytes: 16 << 30,
            statement_timeout: Duration::from_secs(600),
            statements_per_principal: crate::running::STATEMENTS_PER_PRINCIPAL_DEFAULT,
        }
    }
}

impl Limits {
    /// The runtime statements share: spill files in the OS temporary directory, at most
    /// `spill_bytes` of them (none when 0).
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for less than 1 MiB of statement memory or a zero
    /// timeout.
    fn runtime(&self) -> Result<Arc<RuntimeEnv>, QueryError> {
        use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
        if self.statement_memory_bytes < 1 << 20 || self.statement_timeout.is_zero() {
            return Err(QueryError::InvalidArgument(format!(
                "statement limits of {} bytes and {:?}: a statement needs at least 1 MiB and a timeout above zero",
                self.statement_memory_bytes, self.statement_timeout
            )));
        }
        let disk = if self.spill_bytes == 0 {
            DiskManagerBuilder::default().with_mode(DiskManagerMode::Disabled)
        } else {
            DiskManagerBuilder::default().with_max_temp_directory_size(self.spill_bytes)
        };
        Ok(datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
            .with_disk_manager_builder(disk)
            .build_arc()?)
    }
}

/// `stream`, ended with [`QueryError::Timeout`] (and dropped, which cancels the work
/// behind it) once `timeout` has passed since this call.
fn with_deadline(
    stream: SendableRecordBatchStream,
    timeout: Duration,
) -> SendableRecordBatchStream {
    let schema = stream.schema();
    let deadline = tokio::time::Instant::now() + timeout;
    let rows = futures::stream::unfold(Some(stream), move |stream| async move {
        let mut stream = stream?;
        match tokio::time::timeout_at(deadline, stream.next()).await {
            Ok(Some(item)) => Some((item, Some(stream))),
            Ok(None) => None,
            Err(_) => {
                drop(stream);
                let e = QueryError::Timeout(format!(
                    "the statement ran longer than the replica's statement timeout ({} s) and was cancelled",
                    timeout.as_secs_f64()
                ));
                Some((Err(DataFusionError::from(e)), None))
            }
        }
    });
    Box::pin(RecordBatchStreamAdapter::new(schema, rows))
}

/// A Query replica's engine.
pub struct Engine {
    catalog: Arc<Catalog>,
    datasets: Arc<Datasets>,
    /// Where table stages live (URI, no trailing `/`): table `id`'s is `<stage_root>/<id>`.
    stage_root: String,
    metasrv: MetasrvClient,
    key: TicketKey,
    runtime: Arc<RuntimeEnv>,
    limits: Limits,
    target_partitions: usize,
    iceberg: Option<Arc<IcebergCatalog>>,
    auth: Option<crate::auth::Authenticator>,
    running: Arc<crate::running::Running>,
    /// Physical plans GetFlightInfo made, waiting for their DoGet ([`crate::plans`]).
    plans: Arc<crate::plans::Plans>,
}

/// The snapshots a statement reads: Lake versions and Iceberg snapshots.
#[derive(Clone, Debug, Default)]
struct Pins {
    lake: Vec<Pin>,
    iceberg: Vec<IcebergPin>,
}

impl Engine {
    /// An engine over `catalog` (fed by `metasrv`) and the datasets under `data_root`.
    pub fn new(
        catalog: Arc<Catalog>,
        metasrv: MetasrvClient,
        data_root: &str,
        key: TicketKey,
    ) -> Self {
        let target_partitions = std::thread::available_parallelism().map_or(2, |n| n.get());
        let root = data_root.trim_end_matches('/');
        let stage_root = if root.contains("://") {
            format!("{root}/stage")
        } else {
            format!("file://{root}/stage")
        };
        Self {
            datasets: Arc::new(Datasets::new(data_root, metasrv.clone())),
            stage_root,
            catalog,
            metasrv,
            key,
            runtime: Limits::default()
                .runtime()
                .unwrap_or_else(|_| Arc::new(RuntimeEnv::default())),
            limits: Limits::default(),
            target_partitions,
            iceberg: None,
            auth: None,
            running: Arc::new(crate::running::Running::new(
                crate::running::STATEMENTS_PER_PRINCIPAL_DEFAULT,
            )),
            plans: Arc::default(),
        }
    }

    /// Keeps tables' files in shape with `maintenance` (default
    /// [`crate::dataset::Maintenance::DEFAULT`]). Call before the engine serves.
    #[must_use]
    pub fn with_maintenance(mut self, maintenance: crate::dataset::Maintenance) -> Self {
        self.datasets = Arc::new(
            Datasets::new(self.datasets.root(), self.metasrv.clone()).with_maintenance(maintenance),
        );
        self
    }

    /// Serves the read-only `iceberg` catalog from the REST catalog in `config`.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for a REST URI that is not http(s).
    pub fn with_iceberg(mut self, config: &IcebergConfig) -> Result<Self, QueryError> {
        self.iceberg = Some(Arc::new(IcebergCatalog::new(config)?));
        Ok(self)
    }

    /// Bounds every statement by `limits`.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for limits that admit nothing;
    /// [`QueryError::Execution`] when DataFusion cannot set up spilling.
    pub fn with_limits(mut self, limits: Limits) -> Result<Self, QueryError> {
        self.runtime = limits.runtime()?;
        self.running = Arc::new(crate::running::Running::new(
            limits.statements_per_principal,
        ));
        self.limits = limits;
        Ok(self)
    }

    /// The statements running on this replica.
    pub fn running(&self) -> &Arc<crate::running::Running> {
        &self.running
    }

    /// Requires a login of every client, checked by `auth` (see [`crate::auth`]).
    pub fn with_auth(mut self, auth: crate::auth::Authenticator) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The authenticator, when clients must log in.
    pub fn auth(&self) -> Option<&crate::auth::Authenticator> {
        self.auth.as_ref()
    }

    /// Who `caller` (the login [`crate::auth::AuthLayer`] found, `None` without one) is
    /// for grants: [`Access::Everyone`] when this replica has no logins, a superuser when
    /// the users file marks it `admin`, else a user held to its grants.
    pub fn access(&self, caller: Option<&crate::auth::Principal>) -> Access {
        match (&self.auth, caller) {
            (None, _) => Access::Everyone,
            (Some(_), Some(p)) if p.superuser => Access::Superuser(p.name.clone()),
            (Some(_), Some(p)) => Access::User(p.name.clone()),
            (Some(_), None) => Access::Nobody,
        }
    }

    /// Checks that `access` holds `need` on `scope` at this replica's revision; `doing`
    /// says what was asked ("append to lake.sales.orders").
    ///
    /// # Errors
    /// [`QueryError::PermissionDenied`] (see [`Access::check`]).
    pub fn authorize(
        &self,
        access: &Access,
        scope: &GrantScope,
        need: Privilege,
        doing: &str,
    ) -> Result<(), QueryError> {
        self.catalog
            .with_registry(|registry| access.check(registry, scope, need, doing))
    }

    /// Whether `access` may read the `iceberg` catalog (and so list it).
    pub fn may_read_iceberg(&self, access: &Access) -> bool {
        self.catalog.with_registry(|registry| {
            access.allows(registry, &GrantScope::Iceberg, Privilege::Read)
        })
    }

    /// The `iceberg` catalog, when configured.
    pub fn iceberg(&self) -> Option<&Arc<IcebergCatalog>> {
        self.iceberg.as_ref()
    }

    /// Catalog names this replica serves.
    pub fn catalogs(&self) -> Vec<&'static str> {
        let mut out = vec![LAKE_CATALOG];
        if self.iceberg.is_some() {
            out.push(ICEBERG_CATALOG);
        }
        out
    }

    fn iceberg_catalog(&self) -> Result<&Arc<IcebergCatalog>, QueryError> {
        self.iceberg.as_ref().ok_or_else(|| {
            QueryError::NotFound(format!(
                "catalog {ICEBERG_CATALOG} is not configured on this Query replica; start it with --iceberg-rest-uri and --iceberg-warehouse (or LAKE_ICEBERG_REST_URI and LAKE_ICEBERG_WAREHOUSE)"
            ))
        })
    }

    /// Iceberg namespaces as schema names (levels joined by `.`), sorted.
    ///
    /// # Errors
    /// The catalog is not configured; the REST catalog fails or misses its deadline.
    pub async fn iceberg_namespaces(&self) -> Result<Vec<String>, QueryError> {
        let catalog = self.iceberg_catalog()?;
        Ok(catalog
            .namespaces()
            .await?
            .into_iter()
            .map(|levels| levels.join("."))
            .collect())
    }

    /// Iceberg tables as (schema name, table), for the namespaces that `keep` accepts.
    ///
    /// # Errors
    /// As [`Self::iceberg_namespaces`].
    pub async fn iceberg_tables(
        &self,
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<(String, String)>, QueryError> {
        let catalog = self.iceberg_catalog()?;
        let mut out = Vec::new();
        for levels in catalog.namespaces().await? {
            let schema_name = levels.join(".");
            if !keep(&schema_name) {
                continue;
            }
            let mut names = catalog.tables(&levels).await?;
            names.sort();
            out.extend(names.into_iter().map(|name| (schema_name.clone(), name)));
        }
        Ok(out)
    }

    /// Puts table stages under `root` (`s3://bucket/prefix`, `file:///path` or an absolute
    /// path) instead of `<data root>/stage`.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] when `root` is not a stage URI.
    pub fn with_stage_root(mut self, root: &str) -> Result<Self, QueryError> {
        let stage = lake_sdk::Stage::open(root)
            .map_err(|e| QueryError::InvalidArgument(format!("stage root: {e}")))?;
        self.stage_root = stage.uri().to_string();
        Ok(self)
    }

    /// The URI of `meta`'s managed stage: `<stage root>/<table id>`.
    pub fn stage_uri(&self, meta: &TableMeta) -> String {
        format!("{}/{}", self.stage_root, meta.id)
    }

    /// What a client needs to know about `namespace.name`: id, schema, stage URI.
    ///
    /// # Errors
    /// [`QueryError::NotFound`] naming the tables that exist.
    pub fn describe_table(
        &self,
        access: &Access,
        namespace: &str,
        name: &str,
    ) -> Result<lake_sdk::wire::TableDescription, QueryError> {
        self.authorize(
            access,
            &access::table_scope(namespace, name),
            Privilege::Read,
            &format!("describe {LAKE_CATALOG}.{namespace}.{name}"),
        )?;
        let meta = self.table_meta(namespace, name)?;
        Ok(lake_sdk::wire::TableDescription {
            stage_uri: self.stage_uri(&meta),
            namespace: meta.namespace,
            table: meta.name,
            table_id: meta.id,
            schema_ipc: meta.schema_ipc,
        })
    }

    /// Answers a client's [`lake_sdk::wire::ACTION_STAGE`] request about one object of a
    /// table's stage, with this replica's storage credentials ([`lake_sdk::Stage::serve`]):
    /// the stage URI names the table (`<stage root>/<table id>`), whose namespace grant
    /// decides: read for HEAD and GET URLs, write (and a FILE column) for uploads.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for a stage URI that is not a table stage of this
    /// deployment or a malformed request; [`QueryError::NotFound`] when no table has that
    /// stage; [`QueryError::PermissionDenied`]; [`QueryError::Unsupported`] on a
    /// local-filesystem stage; [`QueryError::Unavailable`] when the store fails.
    pub async fn stage_request(
        &self,
        access: &Access,
        request: &lake_sdk::wire::StageRequest,
    ) -> Result<lake_sdk::wire::StageResponse, QueryError> {
        let started = std::time::Instant::now();
        let answer = self.serve_stage_request(access, request).await;
        // Every request, refused or not, leaves one audit line (never a URL).
        tracing::info!(
            target: "lake::audit",
            principal = access.name().unwrap_or("-"),
            kind = "stage",
            stage = %request.stage_uri.chars().take(200).collect::<String>(),
            op = request.op,
            sha256 = %request.sha256.chars().take(64).collect::<String>(),
            outcome = match &answer {
                Ok(_) => "ok".to_string(),
                Err(e) => lake_core::registry::clip(e.to_string(), 256),
            },
            duration_ms = started.elapsed().as_millis() as u64,
            "statement"
        );
        answer
    }

    async fn serve_stage_request(
        &self,
        access: &Access,
        request: &lake_sdk::wire::StageRequest,
    ) -> Result<lake_sdk::wire::StageResponse, QueryError> {
        use lake_sdk::wire::StageOp;
        let shown: String = request.stage_uri.chars().take(200).collect();
        let id = request
            .stage_uri
            .strip_prefix(self.stage_root.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|id| id.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|id| id.parse::<u64>().ok())
            .ok_or_else(|| {
                QueryError::InvalidArgument(format!(
                    "stage {shown:?} is not a table stage of this deployment (<stage root>/<table id>): give the stage_uri DescribeTable answered"
                ))
            })?;
        let op = StageOp::try_from(request.op).map_err(|_| {
            QueryError::InvalidArgument(format!(
                "unknown stage op {}; ops are 0 (head) to 6 (abort)",
                request.op
            ))
        })?;
        let meta = self
            .catalog
            .with_registry(|r| r.table_by_id(id).map(|t| t.meta.clone()));
        // Whoever may not read a table hears the same about its stage whether or not the
        // table exists, and never its name.
        let meta = match (meta, access) {
            (Some(meta), Access::Everyone | Access::Superuser(_)) => meta,
            (None, Access::Everyone | Access::Superuser(_)) => {
                return Err(QueryError::NotFound(format!(
                    "no table has stage {shown}: the table was dropped, or never existed"
                )));
            }
            (meta, _) => {
                let readable = meta.filter(|m| {
                    self.catalog.with_registry(|r| {
                        access.allows(
                            r,
                            &access::table_scope(&m.namespace, &m.name),
                            Privilege::Read,
                        )
                    })
                });
                let Some(meta) = readable else {
                    let who = access.name().unwrap_or("anonymous");
                    return Err(QueryError::PermissionDenied(format!(
                        "permission denied: {who} may not reach stage {shown}: it is not the stage of a table {who} may read"
                    )));
                };
                meta
            }
        };
        let table = format!("{LAKE_CATALOG}.{}.{}", meta.namespace, meta.name);
        if !matches!(op, StageOp::Head | StageOp::SignGet) {
            self.authorize(
                access,
                &access::table_scope(&meta.namespace, &meta.name),
                Privilege::Write,
                &format!("upload files to {table}"),
            )?;
            if !schema_from_ipc(&meta.schema_ipc)?
                .fields()
                .iter()
                .any(|f| lake_sdk::file::is_file_field(f))
            {
                return Err(QueryError::InvalidArgument(format!(
                    "table {table} has no FILE column, so nothing could reference a file uploaded to its stage"
                )));
            }
        }
        let stage = lake_sdk::Stage::open(&self.stage_uri(&meta))
            .map_err(|e| QueryError::Execution(format!("stage of {table}: {e}")))?;
        // Upload ids travel bound to the caller: another writer of the table cannot sign
        // parts of, complete or abort an upload it did not start.
        let principal = access.name().unwrap_or_default();
        let mut request = request.clone();
        if matches!(op, StageOp::SignPart | StageOp::Complete | StageOp::Abort) {
            let (id, mac) = request.upload_id.rsplit_once('~').unwrap_or(("", ""));
            if id.is_empty() || mac != self.upload_mac(principal, &request, id) {
                return Err(QueryError::InvalidArgument(format!(
                    "upload id of {} bytes was not handed out to {} for this object: give the upload_id SignPut or CreateMultipart answered",
                    request.upload_id.len(),
                    access.name().unwrap_or("this caller")
                )));
            }
            request.upload_id = id.to_string();
        }
        let mut answer = stage.serve(&request).await.map_err(|e| match e {
            lake_sdk::SdkError::InvalidArgument(m) => QueryError::InvalidArgument(m),
            lake_sdk::SdkError::Unsupported(m) => QueryError::Unsupported(m),
            lake_sdk::SdkError::NotFound(_) => QueryError::NotFound(format!(
                "nothing was uploaded for {} on the stage of {table} under that upload id",
                request.sha256
            )),
            other => {
                // The store's own words name endpoints, request ids and upload ids: they
                // stay in this replica's log.
                tracing::error!(table, error = %other, "stage request failed at the store");
                QueryError::Unavailable(format!(
                    "the object store of {table}'s stage failed; the replica's log has the details"
                ))
            }
        })?;
        if !answer.upload_id.is_empty() {
            let mac = self.upload_mac(principal, &request, &answer.upload_id);
            answer.upload_id = format!("{}~{mac}", answer.upload_id);
        }
        Ok(answer)
    }

    /// The binding of upload `id` of `request`'s object to `principal`: 32 hex digits of
    /// HMAC-SHA256 under a key derived from the ticket key (so every replica agrees).
    fn upload_mac(
        &self,
        principal: &str,
        request: &lake_sdk::wire::StageRequest,
        id: &str,
    ) -> String {
        use hmac::{Hmac, Mac};
        let key = self.key.derive("stage upload ids");
        let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        for part in [principal, &request.stage_uri, &request.sha256, id] {
            mac.update(part.as_bytes());
            mac.update(&[0]);
        }
        lake_sdk::file::hex(&mac.finalize().into_bytes()[..16])
    }

    /// The FILE check of rows written to `meta` (of `schema`), if it has FILE columns.
    ///
    /// # Errors
    /// [`QueryError::Execution`] when the table's stage URI does not open.
    fn file_check(
        &self,
        meta: &TableMeta,
        schema: &Schema,
    ) -> Result<Option<Arc<FileCheck>>, QueryError> {
        let columns: Vec<(usize, String)> = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, f)| lake_sdk::file::is_file_field(f))
            .map(|(i, f)| (i, f.name().clone()))
            .collect();
        if columns.is_empty() {
            return Ok(None);
        }
        let table = format!("{LAKE_CATALOG}.{}.{}", meta.namespace, meta.name);
        let stage = lake_sdk::Stage::open(&self.stage_uri(meta))
            .map_err(|e| QueryError::Execution(format!("stage of {table}: {e}")))?;
        Ok(Some(Arc::new(FileCheck {
            table,
            columns,
            stage,
        })))
    }

    /// `rows` as written to `meta` (whose schema is `schema`): each batch conformed to the
    /// table ([`conform_batch`]) and its FILE values checked ([`FileCheck`]) as it passes.
    ///
    /// # Errors
    /// As [`Self::file_check`].
    fn table_rows(
        &self,
        meta: &TableMeta,
        schema: &SchemaRef,
        rows: RowStream,
    ) -> Result<RowStream, QueryError> {
        let table = format!("{}.{}", meta.namespace, meta.name);
        let schema = schema.clone();
        let files = self.file_check(meta, &schema)?;
        Ok(rows
            .and_then(move |batch| {
                let conformed = conform_batch(&table, &schema, batch);
                let files = files.clone();
                async move {
                    let batch = conformed?;
                    if let Some(files) = files {
                        files.check(&batch).await?;
                    }
                    Ok(batch)
                }
            })
            .boxed())
    }

    /// The replica's catalog cache.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The ticket key.
    pub fn key(&self) -> &TicketKey {
        &self.key
    }

    fn session(&self) -> Result<SessionContext, QueryError> {
        let config = SessionConfig::new()
            .with_default_catalog_and_schema(LAKE_CATALOG, DEFAULT_NAMESPACE)
            .with_create_default_catalog_and_schema(false)
            .with_information_schema(false)
            .with_target_partitions(self.target_partitions)
            // VARCHAR is Utf8, as Flight SQL clients send it, not Utf8View.
            .set_bool("datafusion.sql_parser.map_string_types_to_utf8view", false)
            // TIMESTAMP WITH TIME ZONE is an instant (zone UTC), as in PostgreSQL and
            // DuckDB, not a zone-less timestamp; AT TIME ZONE then converts between zones.
            .set_str("datafusion.execution.time_zone", "UTC");
        // One memory pool per statement (a session serves one), over the shared spill space.
        let pool = datafusion::execution::memory_pool::TrackConsumersPool::new(
            datafusion::execution::memory_pool::FairSpillPool::new(
                self.limits.statement_memory_bytes,
            ),
            std::num::NonZeroUsize::MIN.saturating_add(4),
        );
        let runtime =
            datafusion::execution::runtime_env::RuntimeEnvBuilder::from_runtime_env(&self.runtime)
                .with_memory_pool(Arc::new(pool))
                .build_arc()?;
        let state = datafusion::execution::SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_default_features()
            .with_type_planner(Arc::new(crate::files::FileTypePlanner))
            .with_analyzer_rules(analyzer_rules())
            .with_optimizer_rules(crate::join_order::optimizer_rules())
            .with_optimizer_rule(Arc::new(crate::shared_groupings::ShareRepeatedGroupings))
            .with_query_planner(Arc::new(crate::shared_groupings::LakeQueryPlanner))
            .with_physical_optimizer_rule(Arc::new(crate::shared_groupings::LinkSharedGroupings))
            .build();
        let ctx = SessionContext::new_with_state(state);
        for function in crate::files::functions() {
            ctx.register_udf(function);
        }
        crate::bounded::register(&ctx);
        Ok(ctx)
    }

    /// Resolves the pins of `parsed` (or checks the given ones) against the catalog cache
    /// and the `iceberg` catalog, and builds a session whose `lake` and `iceberg` catalogs
    /// hold exactly those versions and snapshots.
    async fn pinned_session(
        &self,
        parsed: &ParsedStatement,
        given: Option<&Pins>,
        strict: bool,
    ) -> Result<(SessionContext, Pins, u64), QueryError> {
        let mut iceberg_tables: Vec<(Vec<String>, String)> = Vec::new();
        for reference in &parsed.tables {
            if sql::lake_table(reference).is_some() {
                continue;
            }
            if let Some(table) = sql::iceberg_table(reference) {
                self.iceberg_catalog()?;
                if !iceberg_tables.contains(&table) {
                    iceberg_tables.push(table);
                }
                continue;
            }
            return Err(QueryError::NotFound(format!(
                "catalog of {reference} does not exist; catalogs: [{}]",
                self.catalogs().join(", ")
            )));
        }
        if given.is_none() && !self.catalog.is_verified() {
            // Serve the last verified versions (DESIGN.md: keep answering from the cache),
            // but say so: the stream from Metasrv has been lost for longer than the lease.
            tracing::warn!(
                revision = self.catalog.revision(),
                "catalog cache unverified: planning against the last versions seen from metasrv"
            );
        }
        // One generation of the cache for the pins and the namespaces alike.
        let (resolved, namespaces, revision) = self.catalog.with_registry(|registry| {
            let resolved = match given {
                Some(pins) => pins
                    .lake
                    .iter()
                    .map(|pin| Ok((pin.clone(), pinned_table(registry, pin)?.clone())))
                    .collect::<Result<Vec<_>, QueryError>>()?,
                None => resolve_pins(registry, parsed, strict)?,
            };
            let namespaces: Vec<String> = registry.namespaces().map(str::to_string).collect();
            Ok::<_, QueryError>((resolved, namespaces, registry.revision()))
        })?;
        let ctx = self.session()?;
        let lake = Arc::new(MemoryCatalogProvider::new());
        let mut schemas: BTreeMap<String, Arc<MemorySchemaProvider>> = BTreeMap::new();
        for ns in namespaces {
            schemas.insert(ns, Arc::new(MemorySchemaProvider::new()));
        }
        let mut pins = Pins::default();
        for (pin, table) in resolved {
            let provider: Arc<dyn TableProvider> = if pin.version == 0 {
                let schema = schema_from_ipc(&table.meta.schema_ipc)?;
                Arc::new(EmptyTable::new(Arc::new(schema)))
            } else {
                let dataset = self.datasets.open(&table, pin.version).await?;
                Arc::new(LanceTable::new(dataset))
            };
            let schema = schemas
                .entry(pin.namespace.clone())
                .or_insert_with(|| Arc::new(MemorySchemaProvider::new()));
            schema.register_table(pin.key.clone(), provider)?;
            pins.lake.push(pin);
        }
        for (name, schema) in schemas {
            lake.register_schema(&name, schema)?;
        }
        ctx.register_catalog(LAKE_CATALOG, lake);
        if !iceberg_tables.is_empty() {
            let catalog = self.iceberg_catalog()?;
            pins.iceberg = match given {
                Some(given) => given.iceberg.clone(),
                None => {
                    let mut out = Vec::with_capacity(iceberg_tables.len());
                    for (namespace, key) in &iceberg_tables {
                        out.push(catalog.pin(namespace, key).await?);
                    }
                    out
                }
            };
            let iceberg = Arc::new(MemoryCatalogProvider::new());
            let mut schemas: BTreeMap<String, Arc<MemorySchemaProvider>> = BTreeMap::new();
            for pin in &pins.iceberg {
                let provider = catalog.provider(pin).await?;
                schemas
                    .entry(pin.namespace.join("."))
                    .or_insert_with(|| Arc::new(MemorySchemaProvider::new()))
                    .register_table(pin.key.clone(), provider)?;
            }
            for (name, schema) in schemas {
                iceberg.register_schema(&name, schema)?;
            }
            ctx.register_catalog(ICEBERG_CATALOG, iceberg);
        }
        Ok((ctx, pins, revision))
    }

    /// Plans `sql`. With [`Bind::Values`] the statement's placeholders are replaced by one
    /// row of values, which must match them in number; [`Bind::Nothing`] requires a
    /// statement without placeholders; [`Bind::Describe`] leaves placeholders in place.
    async fn plan(
        &self,
        parsed: ParsedStatement,
        given: Option<&Pins>,
        bind: Bind,
        access: &Access,
    ) -> Result<(SessionContext, LogicalPlan, Pins, u64), QueryError> {
        if command(&parsed.statement).is_some() {
            return Err(QueryError::InvalidArgument(
                "GRANT, REVOKE, OPTIMIZE, VACUUM, MERGE, CREATE INDEX and DROP INDEX return no rows: run them as an update (ExecuteUpdate), not a query".into(),
            ));
        }
        // Before anything is resolved, so a refusal tells nothing of what exists there.
        self.check_references(access, &parsed)?;
        let strict = is_read(&parsed.statement);
        let (ctx, pins, revision) = self.pinned_session(&parsed, given, strict).await?;
        if parsed.calls(access::GRANTS_FUNCTION) {
            let grants = self
                .catalog
                .with_registry(|registry| access::GrantsFunction::new(registry, access))?;
            ctx.register_udtf(access::GRANTS_FUNCTION, Arc::new(grants));
        }
        let state = ctx.state();
        let mut plan = match state.statement_to_plan(parsed.statement.clone()).await {
            // `SELECT a, a`: planned with the repeated item renamed.
            Err(e) if duplicate_names::is_refusal(&e) => {
                duplicate_names::plan(&state, parsed.statement, e).await?
            }
            planned => planned?,
        };
        check_surface(&plan)?;
        self.check_plan(access, &plan)?;
        let expected = || plan.get_parameter_types().map(|types| types.len());
        match bind {
            Bind::Describe => {}
            Bind::Nothing => {
                let expected = expected()?;
                if expected > 0 {
                    return Err(QueryError::InvalidArgument(format!(
                        "the statement has {expected} parameter(s) and none were bound"
                    )));
                }
            }
            Bind::Values(values) => {
                let expected = expected()?;
                if values.len() != expected {
                    return Err(QueryError::InvalidArgument(format!(
                        "the statement has {expected} parameter(s) but {} value(s) were bound",
                        values.len()
                    )));
                }
                plan = plan.with_param_values(values)?;
            }
        }
        Ok((ctx, plan, pins, revision))
    }

    /// Checks that `access` may read every table `parsed` names (read on its namespace in
    /// catalog `lake`, or on catalog `iceberg`), and do to a table it writes what it does:
    /// write to INSERT, admin to CREATE or DROP it ([`ParsedStatement::targets`]).
    ///
    /// # Errors
    /// [`QueryError::PermissionDenied`] for the first table it may not read or write.
    fn check_references(
        &self,
        access: &Access,
        parsed: &ParsedStatement,
    ) -> Result<(), QueryError> {
        if matches!(access, Access::Everyone | Access::Superuser(_)) {
            return Ok(());
        }
        self.catalog.with_registry(|registry| {
            for reference in &parsed.tables {
                let target = parsed.targets.iter().find(|(t, _)| t == reference);
                let (scope, shown) = if let Some((ns, key)) = sql::lake_table(reference) {
                    let name = sql::split_table_key(&key).0;
                    // A table being created has no grants of its own yet: its namespace's.
                    let scope = if matches!(target, Some((_, WriteKind::Create))) {
                        access::namespace(&ns)
                    } else {
                        access::table_scope(&ns, &name)
                    };
                    (scope, format!("{LAKE_CATALOG}.{ns}.{name}"))
                } else if let Some((levels, key)) = sql::iceberg_table(reference) {
                    let name = sql::split_table_key(&key).0;
                    (
                        GrantScope::Iceberg,
                        format!("{ICEBERG_CATALOG}.{}.{name}", levels.join(".")),
                    )
                } else {
                    continue;
                };
                // A table the statement writes is refused for that (the privilege it needs
                // is above read), so the message says what was asked.
                let (need, verb) = match target {
                    Some((
                        _,
                        kind @ (WriteKind::Insert
                        | WriteKind::Delete
                        | WriteKind::Update
                        | WriteKind::Merge),
                    )) => (Privilege::Write, kind.verb()),
                    Some((_, kind)) => (Privilege::Admin, kind.verb()),
                    None => (Privilege::Read, "read"),
                };
                access.check(registry, &scope, need, &format!("{verb} {shown}"))?;
            }
            Ok(())
        })
    }

    /// Checks that `access` may run the write `plan` is: INSERT needs write on the
    /// target's namespace, CREATE/DROP TABLE admin on it, CREATE/DROP SCHEMA admin on
    /// catalog `lake`. Reads were checked by [`Self::check_references`].
    ///
    /// # Errors
    /// [`QueryError::PermissionDenied`].
    fn check_plan(&self, access: &Access, plan: &LogicalPlan) -> Result<(), QueryError> {
        if matches!(access, Access::Everyone | Access::Superuser(_)) {
            return Ok(());
        }
        // A Lake table's scope and name; `created`: a table that does not exist yet is
        // covered by its namespace.
        let lake = |reference: &datafusion::sql::TableReference, created: bool| {
            sql::lake_table(reference).map(|(ns, key)| {
                let name = sql::split_table_key(&key).0;
                let scope = if created {
                    access::namespace(&ns)
                } else {
                    access::table_scope(&ns, &name)
                };
                (scope, format!("{LAKE_CATALOG}.{ns}.{name}"))
            })
        };
        let table = |reference| lake(reference, false);
        let (scope, need, doing) = match plan {
            // EXPLAIN of a write runs nothing, but shows it only to who may run it.
            LogicalPlan::Explain(explain) => return self.check_plan(access, &explain.plan),
            LogicalPlan::Analyze(analyze) => return self.check_plan(access, &analyze.input),
            LogicalPlan::Dml(DmlStatement { table_name, .. }) => match table(table_name) {
                Some((scope, shown)) => (scope, Privilege::Write, format!("write to {shown}")),
                None => return Ok(()),
            },
            LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(create)) => {
                match lake(&create.name, true) {
                    Some((scope, shown)) => {
                        (scope, Privilege::Admin, format!("create table {shown}"))
                    }
                    None => return Ok(()),
                }
            }
            LogicalPlan::Ddl(DdlStatement::DropTable(drop)) => match table(&drop.name) {
                Some((scope, shown)) => (scope, Privilege::Admin, format!("drop table {shown}")),
                None => return Ok(()),
            },
            LogicalPlan::Ddl(DdlStatement::CreateCatalogSchema(create)) => (
                GrantScope::Lake,
                Privilege::Admin,
                format!("create schema {}", create.schema_name),
            ),
            LogicalPlan::Ddl(DdlStatement::DropCatalogSchema(drop)) => (
                GrantScope::Lake,
                Privilege::Admin,
                format!("drop schema {}", drop.name),
            ),
            _ => return Ok(()),
        };
        self.authorize(access, &scope, need, &doing)
    }

    /// Carries out a `GRANT` or `REVOKE` through Metasrv, once the caller is found to be
    /// admin on every scope it names (a namespace's admin, catalog `lake`'s admin for any
    /// namespace, or a superuser). Waits until this replica enforces it. Returns 0 (rows).
    ///
    /// # Errors
    /// [`QueryError::PermissionDenied`]; Metasrv's refusal (a namespace that does not
    /// exist).
    async fn change_access(
        &self,
        access: &Access,
        change: AccessChange,
    ) -> Result<i64, QueryError> {
        let verb = if change.grant { "grant" } else { "revoke" };
        for scope in &change.scopes {
            self.authorize(
                access,
                scope,
                Privilege::Admin,
                &format!("{verb} on {scope}"),
            )?;
        }
        // A grant to a name nobody can log in as is a typo (a revoke may clean one up).
        if change.grant
            && let Some(auth) = &self.auth
            && let Some(unknown) = change.principals.iter().find(|p| !auth.may_log_in(p))
        {
            return Err(QueryError::InvalidArgument(format!(
                "no user {unknown} can log in here: it is not in the users file this replica read at start, and no identity provider is configured; add it with `lake user add {unknown}` (then restart the replicas) or check the name"
            )));
        }
        let mut revision = 0;
        for scope in &change.scopes {
            for principal in &change.principals {
                let (now, at) = match (change.grant, change.privilege) {
                    (true, Some(privilege)) => {
                        self.metasrv.grant(principal, scope, privilege).await?
                    }
                    (true, None) => {
                        return Err(QueryError::InvalidArgument(
                            "a GRANT names a privilege".into(),
                        ));
                    }
                    (false, privilege) => self.metasrv.revoke(principal, scope, privilege).await?,
                };
                tracing::info!(
                    by = access.name().unwrap_or("anonymous"),
                    %principal,
                    scope = %scope,
                    now = now.map_or("none", Privilege::name),
                    "{verb}"
                );
                revision = revision.max(at);
            }
        }
        self.await_revision(revision).await;
        Ok(0)
    }

    /// `OPTIMIZE` of `target`: one maintenance run ([`Datasets::optimize`]) on a Lake
    /// table, which needs write on it. Returns the fragments the compaction merged away
    /// (0: the table was compact already).
    ///
    /// # Errors
    /// [`QueryError::Unsupported`] for an Iceberg table or a past version,
    /// [`QueryError::PermissionDenied`], [`QueryError::NotFound`], or the run's failure.
    async fn optimize(
        &self,
        access: &Access,
        target: &datafusion::sql::TableReference,
    ) -> Result<i64, QueryError> {
        let table = self.maintained_table(access, "OPTIMIZE", target)?;
        let optimized = maintain(&self.datasets, &self.catalog, table.meta.id).await?;
        tracing::info!(
            by = access.name().unwrap_or("anonymous"),
            table = %target,
            ?optimized,
            "optimize"
        );
        Ok(i64::try_from(optimized.fragments_removed).unwrap_or(i64::MAX))
    }

    /// `CREATE INDEX` ([`crate::index`]): builds the index on a Lake table, which needs
    /// write on it, as one new version; returns once this replica's catalog shows it, so
    /// the caller's next query uses it. Returns 0 (no rows are written).
    ///
    /// # Errors
    /// [`QueryError::Unsupported`] for an Iceberg table, [`QueryError::InvalidArgument`]
    /// for a past version, [`QueryError::PermissionDenied`], [`QueryError::NotFound`], or
    /// [`Datasets::create_index`]'s.
    async fn create_index(
        &self,
        access: &Access,
        request: &crate::index::CreateIndex,
    ) -> Result<i64, QueryError> {
        let table = self.maintained_table(access, "CREATE INDEX", &request.table)?;
        let _running = self.datasets.maintenance_lock(table.meta.id).await;
        let committed = self
            .datasets
            .create_index(&self.current(&table), request)
            .await?;
        self.await_committed(committed).await?;
        tracing::info!(
            by = access.name().unwrap_or("anonymous"),
            table = %request.table,
            index = %request.name,
            column = %request.column,
            kind = request.kind.sql_name(),
            built = committed.is_some(),
            "create index"
        );
        Ok(0)
    }

    /// `DROP INDEX name ON ns.t`: removes the index from a Lake table (write on it needed)
    /// as one new version. Returns 0.
    ///
    /// # Errors
    /// As [`Self::create_index`], and [`Datasets::drop_index`]'s.
    async fn drop_index(
        &self,
        access: &Access,
        request: &crate::index::DropIndex,
    ) -> Result<i64, QueryError> {
        let table = self.maintained_table(access, "DROP INDEX", &request.table)?;
        let _running = self.datasets.maintenance_lock(table.meta.id).await;
        let committed = self
            .datasets
            .drop_index(&self.current(&table), &request.name, request.if_exists)
            .await?;
        self.await_committed(committed).await?;
        tracing::info!(
            by = access.name().unwrap_or("anonymous"),
            table = %request.table,
            index = %request.name,
            dropped = committed.is_some(),
            "drop index"
        );
        Ok(0)
    }

    /// The Lake table a maintenance statement (`verb`) names, once `access` may write it.
    ///
    /// # Errors
    /// As [`Self::lake_target`], [`QueryError::PermissionDenied`], [`QueryError::NotFound`].
    fn maintained_table(
        &self,
        access: &Access,
        verb: &str,
        target: &datafusion::sql::TableReference,
    ) -> Result<Arc<TableState>, QueryError> {
        let (namespace, name) = self.lake_target(verb, target)?;
        self.authorize(
            access,
            &access::table_scope(&namespace, &name),
            Privilege::Write,
            &format!("{} {LAKE_CATALOG}.{namespace}.{name}", verb.to_lowercase()),
        )?;
        self.catalog
            .with_registry(|r| lookup(r, &namespace, &name).cloned())
    }

    /// Waits until this replica's catalog shows `committed` (a version a statement just
    /// committed, if any), so the caller's next query reads it.
    ///
    /// # Errors
    /// [`QueryError::Timeout`] after [`READ_YOUR_WRITES_TIMEOUT`].
    async fn await_committed(&self, committed: Option<Committed>) -> Result<(), QueryError> {
        match committed {
            Some(committed) => {
                self.catalog
                    .wait_for(committed.revision, READ_YOUR_WRITES_TIMEOUT)
                    .await
            }
            None => Ok(()),
        }
    }

    /// `table` as this replica's catalog has it now (another maintenance run may have
    /// committed while the lock was awaited); the one given if it was dropped meanwhile.
    fn current(&self, table: &Arc<TableState>) -> Arc<TableState> {
        self.catalog
            .with_registry(|r| r.table_by_id(table.meta.id).cloned())
            .unwrap_or_else(|| table.clone())
    }

    /// The namespace and name of the Lake table a statement that changes or maintains one
    /// (`verb`: OPTIMIZE, VACUUM, DELETE, UPDATE, MERGE) names.
    ///
    /// # Errors
    /// [`QueryError::Unsupported`] for an Iceberg table; [`QueryError::NotFound`] for a
    /// catalog that does not exist; [`QueryError::InvalidArgument`] for a past version of
    /// a table.
    fn lake_target(
        &self,
        verb: &str,
        target: &datafusion::sql::TableReference,
    ) -> Result<(String, String), QueryError> {
        let (namespace, key) = sql::lake_table(target).ok_or_else(|| {
            if sql::iceberg_table(target).is_some() {
                QueryError::Unsupported(format!(
                    "{verb} {target}: catalog {ICEBERG_CATALOG} is read-only; Lake maintains its own tables (lake.namespace.table)"
                ))
            } else {
                QueryError::NotFound(format!(
                    "{verb} {target}: catalog of {target} does not exist; catalogs: [{}]",
                    self.catalogs().join(", ")
                ))
            }
        })?;
        let (name, travel) = sql::split_table_key(&key);
        if travel != TimeTravel::Latest {
            return Err(QueryError::InvalidArgument(format!(
                "{verb} takes a table, not a past version of one"
            )));
        }
        Ok((namespace, name))
    }

    /// `meta`'s table as Metasrv has it now: this replica's cached state, once the cache
    /// has caught up with Metasrv's revision (so it holds every retained version).
    ///
    /// # Errors
    /// [`QueryError::Unavailable`] when the cache does not catch up within
    /// [`READ_YOUR_WRITES_TIMEOUT`]; [`QueryError::NotFound`] when the table was dropped.
    async fn table_now(&self, meta: &TableMeta) -> Result<Arc<TableState>, QueryError> {
        let description = self
            .metasrv
            .describe_table(&meta.namespace, &meta.name)
            .await?;
        self.catalog
            .wait_for(description.revision, READ_YOUR_WRITES_TIMEOUT)
            .await
            .map_err(|e| {
                QueryError::Unavailable(format!(
                    "this replica's catalog has not caught up with Metasrv ({e}); try again"
                ))
            })?;
        let table = self
            .catalog
            .with_registry(|r| lookup(r, &meta.namespace, &meta.name).cloned())?;
        if table.meta.id != meta.id {
            return Err(QueryError::NotFound(format!(
                "table {}.{} was dropped (and recreated) meanwhile",
                meta.namespace, meta.name
            )));
        }
        Ok(table)
    }

    /// Removes every object of the managed stage of table `id`, a dropped table's
    /// ([`Self::collect_dropped_tables`]), after aborting its unfinished multipart uploads;
    /// an empty or absent stage is nothing to do.
    ///
    /// # Errors
    /// [`QueryError::Unavailable`] when the stage's store fails.
    async fn remove_stage(&self, id: u64) -> Result<(), QueryError> {
        let uri = format!("{}/{id}", self.stage_root);
        let failed = |e: lake_sdk::SdkError| {
            tracing::error!(stage = %uri, error = %e, "removing a dropped table's stage failed at the store");
            QueryError::Unavailable(format!(
                "removing the stage of dropped table {id} failed; the replica's log has the details"
            ))
        };
        let stage = lake_sdk::Stage::open(&uri).map_err(failed)?;
        for upload in stage.list_unfinished_uploads().await.map_err(failed)? {
            stage.abort_upload(&upload).await.map_err(failed)?;
        }
        let objects = stage.list_objects().await.map_err(failed)?;
        for object in &objects {
            stage.delete_object(object).await.map_err(failed)?;
        }
        if !objects.is_empty() {
            tracing::info!(
                stage = %uri,
                objects = objects.len(),
                bytes = objects.iter().map(|o| o.size).sum::<u64>(),
                "removed a dropped table's stage"
            );
        }
        Ok(())
    }

    /// Collects the garbage of `namespace.name`'s managed stage (`VACUUM`, `lake gc`,
    /// [`lake_sdk::wire::ACTION_STAGE_GC`]): the objects that no version Metasrv retains
    /// names in a FILE column ([`Datasets::referenced_files`]) and that were last written
    /// more than [`crate::dataset::Maintenance::stage_gc_grace_ms`] ago, and the leftovers
    /// of uploads that never completed, as old; S3 multipart uploads never completed and
    /// last written (started, or sent a part) as long ago are aborted
    /// ([`lake_sdk::Stage::list_unfinished_uploads`]), so S3 frees their parts. The
    /// retained versions are read again after the listing, so a version committed
    /// meanwhile keeps what it names. `dry_run`: only say what would go. Needs write on the
    /// table.
    ///
    /// A FILE value names an object of its own table's stage only, and an append checks
    /// that the object exists before it commits; an append that names an object older than
    /// the grace that no version names (the same bytes uploaded again after their rows were
    /// deleted: the upload finds the object there and writes nothing) and commits between
    /// the second reading and the removal loses its object. Keep the grace longer than the
    /// longest time from an upload to its append.
    ///
    /// # Errors
    /// [`QueryError::PermissionDenied`]; [`QueryError::NotFound`] for an unknown table;
    /// [`QueryError::Unavailable`] when the stage's store fails; as
    /// [`Datasets::referenced_files`].
    pub async fn collect_stage_garbage(
        &self,
        access: &Access,
        namespace: &str,
        name: &str,
        dry_run: bool,
    ) -> Result<lake_sdk::wire::StageGcResult, QueryError> {
        let shown = format!("{LAKE_CATALOG}.{namespace}.{name}");
        self.authorize(
            access,
            &access::table_scope(namespace, name),
            Privilege::Write,
            &format!("collect the stage garbage of {shown}"),
        )?;
        let meta = self.table_meta(namespace, name)?;
        let stage_store = |e: lake_sdk::SdkError| {
            tracing::error!(table = %shown, error = %e, "stage garbage collection failed at the store");
            QueryError::Unavailable(format!(
                "the object store of {shown}'s stage failed; the replica's log has the details"
            ))
        };
        let stage = lake_sdk::Stage::open(&self.stage_uri(&meta)).map_err(stage_store)?;
        let (mut scanned, mut referenced) = (Default::default(), Default::default());
        let table = self.table_now(&meta).await?;
        self.datasets
            .referenced_files(&table, &mut scanned, &mut referenced)
            .await?;
        let listed = stage.list_objects().await.map_err(stage_store)?;
        let uploads = stage.list_unfinished_uploads().await.map_err(stage_store)?;
        if !dry_run {
            // What commits while the stage was listed keeps what it names.
            let table = self.table_now(&meta).await?;
            self.datasets
                .referenced_files(&table, &mut scanned, &mut referenced)
                .await?;
        }
        let now_ms = i64::try_from(crate::ticket::now_ms()).unwrap_or(i64::MAX);
        let cutoff = now_ms.saturating_sub(self.datasets.maintenance().stage_gc_grace_ms);
        let mut result = lake_sdk::wire::StageGcResult {
            applied: !dry_run,
            ..Default::default()
        };
        let mut garbage = Vec::new();
        for object in listed {
            if object
                .sha256
                .as_ref()
                .is_some_and(|s| referenced.contains(s))
            {
                result.referenced += 1;
            } else if object.last_modified_ms > cutoff {
                result.recent += 1;
            } else {
                garbage.push(object);
            }
        }
        for object in &garbage {
            if !dry_run {
                stage.delete_object(object).await.map_err(stage_store)?;
            }
            result.removed.push(lake_sdk::wire::StageGcObject {
                uri: object.uri.clone(),
                bytes: object.size,
                last_modified_ms: object.last_modified_ms,
            });
        }
        for upload in uploads {
            if upload.last_active_ms > cutoff {
                result.recent_uploads += 1;
                continue;
            }
            if !dry_run {
                stage.abort_upload(&upload).await.map_err(stage_store)?;
            }
            result.aborted.push(lake_sdk::wire::StageGcUpload {
                uri: upload.uri,
                bytes: upload.bytes,
                last_active_ms: upload.last_active_ms,
            });
        }
        tracing::info!(
            by = access.name().unwrap_or("anonymous"),
            table = %shown,
            dry_run,
            aborted_uploads = result.aborted.len(),
            removed = result.removed.len(),
            bytes = result.removed.iter().map(|o| o.bytes).sum::<u64>(),
            referenced = result.referenced,
            recent = result.recent,
            "stage garbage"
        );
        Ok(result)
    }

    /// Starts a maintenance run on `meta`'s table in the background when an append here
    /// found it due ([`crate::dataset::Maintenance`]) and no background run is on it; a
    /// run in progress runs again when it ends if appends found the table due meanwhile
    /// ([`Datasets::claim_due`]). A run's failure is logged: it changes nothing a reader
    /// sees, and the next due append tries again.
    fn maintain_if_due(&self, meta: &TableMeta) {
        if !self.datasets.claim_due(meta.id) {
            return;
        }
        let (datasets, catalog, meta) = (self.datasets.clone(), self.catalog.clone(), meta.clone());
        tokio::spawn(async move {
            let shown = format!("{LAKE_CATALOG}.{}.{}", meta.namespace, meta.name);
            loop {
                match maintain(&datasets, &catalog, meta.id).await {
                    Ok(optimized) => tracing::info!(table = %shown, ?optimized, "maintenance"),
                    Err(e) => tracing::warn!(table = %shown, error = %e, "maintenance failed"),
                }
                if !datasets.run_again(meta.id) {
                    return;
                }
            }
        });
    }

    /// Starts this replica's collection of dropped tables' files
    /// ([`Datasets::collect_dropped`]) every [`crate::dataset::Maintenance::dropped_scan_interval_ms`];
    /// `None` when that is 0. The task ends when the engine is dropped; a failed round is
    /// logged and the next one tries again.
    pub fn collect_dropped_tables(engine: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        let maintenance = engine.datasets.maintenance();
        if maintenance.dropped_scan_interval_ms == 0 {
            return None;
        }
        let engine = Arc::downgrade(engine);
        Some(tokio::spawn(async move {
            let mut rounds =
                tokio::time::interval(Duration::from_millis(maintenance.dropped_scan_interval_ms));
            rounds.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                rounds.tick().await;
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                // A table this replica's registry does not know yet has an id not below
                // its next id, so it is never taken for a dropped one.
                let dropped = match engine.datasets.table_dirs().await {
                    Ok(dirs) => engine.catalog.with_registry(|r| {
                        dirs.into_iter()
                            .filter(|d| r.is_dropped_dir(d))
                            .collect::<Vec<_>>()
                    }),
                    Err(e) => {
                        tracing::warn!(error = %e, "collecting dropped tables' files");
                        continue;
                    }
                };
                let now_ms = i64::try_from(crate::ticket::now_ms()).unwrap_or(i64::MAX);
                match engine
                    .datasets
                    .collect_dropped(
                        &dropped,
                        maintenance.dropped_grace_ms,
                        now_ms,
                        false,
                        |dir| {
                            let engine = engine.clone();
                            let id = lake_core::registry::location_table_id(dir);
                            async move {
                                let Some(id) = id else {
                                    return Ok(());
                                };
                                engine.datasets.forget(id);
                                engine.remove_stage(id).await
                            }
                            .boxed()
                        },
                    )
                    .await
                {
                    Ok(found) => {
                        for table in found.iter().filter(|t| t.removed) {
                            tracing::info!(
                                location = %table.location,
                                files = table.files,
                                bytes = table.bytes,
                                "removed a dropped table's files"
                            );
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "collecting dropped tables' files"),
                }
            }
        }))
    }

    /// Runs a write statement once per parameter row (or once without parameters). The
    /// rows of an INSERT become one append, so several parameter rows commit together or
    /// not at all. Returns the rows written (0 for DDL).
    async fn execute_writes(
        &self,
        sql_text: &str,
        rows: Vec<Vec<ScalarValue>>,
        operation_id: String,
        access: &Access,
    ) -> Result<i64, QueryError> {
        let parsed = sql::parse(sql_text)?;
        if let Some(command) = command(&parsed.statement) {
            if !rows.is_empty() {
                return Err(QueryError::InvalidArgument(
                    "GRANT, REVOKE, OPTIMIZE, VACUUM, MERGE, CREATE INDEX and DROP INDEX take no parameters".into(),
                ));
            }
            return match command? {
                Command::Access(change) => self.change_access(access, change).await,
                Command::Optimize(target) => self.optimize(access, &target).await,
                Command::CreateIndex(request) => self.create_index(access, &request).await,
                Command::DropIndex(request) => self.drop_index(access, &request).await,
                Command::Merge(merge) => {
                    self.merge(&parsed, &merge, sql_text, operation_id, access)
                        .await
                }
                Command::Vacuum(target) => {
                    let (namespace, name) = self.lake_target("VACUUM", &target)?;
                    let collected = self
                        .collect_stage_garbage(access, &namespace, &name, false)
                        .await?;
                    let count = collected.removed.len() + collected.aborted.len();
                    Ok(i64::try_from(count).unwrap_or(i64::MAX))
                }
            };
        }
        // What a DELETE or UPDATE's operation id digests besides its text.
        let params = format!("{rows:?}");
        let binds: Vec<Bind> = if rows.is_empty() {
            vec![Bind::Nothing]
        } else {
            rows.into_iter().map(Bind::Values).collect()
        };
        let mut count = 0i64;
        let mut insert: Option<(TableMeta, Vec<RowStream>)> = None;
        let bound = binds.len();
        for bind in binds {
            let (ctx, plan, _, _) = self.plan(parsed.clone(), None, bind, access).await?;
            match plan {
                LogicalPlan::Dml(DmlStatement {
                    table_name,
                    op: WriteOp::Insert(InsertOp::Append),
                    input,
                    ..
                }) => {
                    let (meta, rows) = self.insert_rows(&ctx, &table_name, &input).await?;
                    match &mut insert {
                        Some((_, all)) => all.push(rows),
                        None => insert = Some((meta, vec![rows])),
                    }
                }
                LogicalPlan::Ddl(ddl) => {
                    let rows = self.execute_ddl(&ctx, ddl).await?;
                    count += i64::try_from(rows).unwrap_or(i64::MAX);
                }
                LogicalPlan::Dml(DmlStatement {
                    table_name,
                    op: op @ (WriteOp::Delete | WriteOp::Update),
                    input,
                    ..
                }) => {
                    let change = if op == WriteOp::Delete {
                        Change::Delete
                    } else {
                        Change::Update
                    };
                    if bound > 1 {
                        return Err(QueryError::InvalidArgument(format!(
                            "{} takes one row of parameter values; {bound} were bound (run the statement once per row)",
                            change.keyword()
                        )));
                    }
                    let digest = dml::statement_digest(change, sql_text, &params);
                    return self
                        .change(&ctx, &table_name, change, &input, (operation_id, digest))
                        .await;
                }
                LogicalPlan::Dml(DmlStatement { op, .. }) => {
                    return Err(QueryError::Unsupported(format!(
                        "{op} on Lake tables; Lake tables take INSERT INTO, DELETE and UPDATE"
                    )));
                }
                other if !is_write(&other) => {
                    return Err(QueryError::InvalidArgument(
                        "this statement returns rows: run it as a query, not an update".into(),
                    ));
                }
                other => {
                    return Err(QueryError::Unsupported(format!(
                        "statement {}",
                        other.display()
                    )));
                }
            }
        }
        if let Some((meta, streams)) = insert {
            let rows = futures::stream::iter(streams).flatten().boxed();
            let (_, rows) = self.append(&meta, rows, Some(operation_id)).await?;
            count += i64::try_from(rows).unwrap_or(i64::MAX);
        }
        Ok(count)
    }

    /// Runs a DELETE or UPDATE on `table_name` (its DataFusion source plan `input`) as one
    /// new version ([`Datasets::change`], [`crate::dml`]) and waits until this replica
    /// reads it. Returns the rows deleted or updated; -1 for a replay of a statement that
    /// committed before under the same operation id (Flight SQL's "unknown" record count).
    ///
    /// # Errors
    /// As [`Self::lake_target`]; the change's errors.
    async fn change(
        &self,
        ctx: &SessionContext,
        table_name: &datafusion::sql::TableReference,
        change: Change,
        input: &Arc<LogicalPlan>,
        operation: (String, lake_core::Digest),
    ) -> Result<i64, QueryError> {
        let (namespace, name) = self.lake_target(change.keyword(), table_name)?;
        let meta = self.table_meta(&namespace, &name)?;
        let schema = Arc::new(schema_from_ipc(&meta.schema_ipc)?);
        let timeout = self.limits.statement_timeout;
        let matched = |dataset: Arc<lance::Dataset>| {
            let (meta, schema) = (&meta, schema.clone());
            async move {
                let plan = dml::at_version(input, table_name, &dataset, change)?;
                let found = ctx
                    .execute_logical_plan(plan)
                    .await?
                    .execute_stream()
                    .await?;
                let addresses = Arc::default();
                let rows = dml::split_addresses(
                    with_deadline(found, timeout),
                    Arc::clone(&addresses),
                    change,
                );
                let rows = match change {
                    Change::Delete => rows,
                    Change::Update | Change::Merge => self.new_rows(meta, &schema, rows)?,
                };
                Ok(dml::Matched {
                    rows,
                    addresses,
                    inserted: Arc::default(),
                })
            }
            .boxed() as futures::future::BoxFuture<'_, _>
        };
        self.commit_change(&meta, change, operation, matched).await
    }

    /// Commits a change of `meta`'s table ([`Datasets::change`]), waits until this
    /// replica reads it, and starts maintenance if it left the table due. Returns the rows
    /// changed; -1 for a replay (Flight SQL's "unknown" record count).
    ///
    /// # Errors
    /// As [`Datasets::change`].
    async fn commit_change<'a, F>(
        &self,
        meta: &TableMeta,
        change: Change,
        operation: (String, lake_core::Digest),
        matched: F,
    ) -> Result<i64, QueryError>
    where
        F: Fn(
            Arc<lance::Dataset>,
        ) -> futures::future::BoxFuture<'a, Result<dml::Matched, QueryError>>,
    {
        let (committed, count) = self
            .datasets
            .change(meta, change, operation, matched)
            .await?;
        self.await_revision(committed.revision).await;
        self.maintain_if_due(meta);
        Ok(count.map_or(-1, |c| i64::try_from(c).unwrap_or(i64::MAX)))
    }

    /// The new rows of an UPDATE or MERGE as `meta`'s table (columns `schema`) takes them:
    /// each batch cast as SQL assignment does ([`cast_batch`]), then conformed and its
    /// FILE values checked ([`Self::table_rows`]).
    ///
    /// # Errors
    /// As [`Self::table_rows`].
    fn new_rows(
        &self,
        meta: &TableMeta,
        schema: &SchemaRef,
        rows: RowStream,
    ) -> Result<RowStream, QueryError> {
        let cast = schema.clone();
        let rows = rows.map(move |batch| cast_batch(&batch?, &cast)).boxed();
        self.table_rows(meta, schema, rows)
    }

    /// Runs a MERGE ([`crate::merge`]) as one new version of its target
    /// ([`Datasets::change`]) and waits until this replica reads it. Returns the rows
    /// updated, deleted and inserted; -1 for a replay under the same operation id.
    ///
    /// # Errors
    /// [`QueryError::PermissionDenied`] without write on the target (and read on the
    /// source); [`QueryError::Unsupported`] for an Iceberg target or what [`crate::merge`]
    /// refuses; [`QueryError::InvalidArgument`] for a past version of the target, or a
    /// target row two source rows match; the change's errors.
    async fn merge(
        &self,
        parsed: &ParsedStatement,
        merge: &datafusion::sql::sqlparser::ast::Merge,
        sql_text: &str,
        operation_id: String,
        access: &Access,
    ) -> Result<i64, QueryError> {
        self.check_references(access, parsed)?;
        let target = crate::merge::target(merge)?;
        let (namespace, name) = self.lake_target(Change::Merge.keyword(), &target)?;
        let meta = self.table_meta(&namespace, &name)?;
        let schema = Arc::new(schema_from_ipc(&meta.schema_ipc)?);
        let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let select = crate::merge::select(merge, &columns)?;
        let (ctx, _, _) = self.pinned_session(parsed, None, true).await?;
        let digest = dml::statement_digest(Change::Merge, sql_text, "");
        let timeout = self.limits.statement_timeout;
        let matched = |dataset: Arc<lance::Dataset>| {
            let (ctx, select, meta, schema) = (ctx.clone(), &select, &meta, schema.clone());
            async move {
                let (catalog, schema_name, table) = crate::merge::TARGET;
                let tables = Arc::new(MemorySchemaProvider::new());
                tables.register_table(
                    table.to_string(),
                    Arc::new(LanceTable::with_row_addresses(dataset)),
                )?;
                let target = Arc::new(MemoryCatalogProvider::new());
                target.register_schema(schema_name, tables)?;
                ctx.register_catalog(catalog, target);
                let plan = ctx.state().create_logical_plan(select).await?;
                check_surface(&plan)?;
                let found = ctx
                    .execute_logical_plan(plan)
                    .await?
                    .execute_stream()
                    .await?;
                let (addresses, inserted) = (Arc::default(), Arc::default());
                let rows = dml::split_merge(
                    with_deadline(found, timeout),
                    Arc::clone(&addresses),
                    Arc::clone(&inserted),
                );
                Ok(dml::Matched {
                    rows: self.new_rows(meta, &schema, rows)?,
                    addresses,
                    inserted,
                })
            }
            .boxed() as futures::future::BoxFuture<'_, _>
        };
        self.commit_change(&meta, Change::Merge, (operation_id, digest), matched)
            .await
    }

    /// An INSERT's rows as they are computed, each batch cast to the target table's
    /// columns as SQL assignment does (by position; a value that does not convert is an
    /// error, not NULL).
    async fn insert_rows(
        &self,
        ctx: &SessionContext,
        table_name: &datafusion::sql::TableReference,
        input: &LogicalPlan,
    ) -> Result<(TableMeta, RowStream), QueryError> {
        let (namespace, key) = sql::lake_table(table_name)
            .ok_or_else(|| QueryError::Unsupported(format!("cannot insert into {table_name}")))?;
        let (name, spec) = sql::split_table_key(&key);
        if spec != TimeTravel::Latest {
            return Err(QueryError::InvalidArgument(
                "INSERT cannot target a past version of a table".into(),
            ));
        }
        let meta = self.table_meta(&namespace, &name)?;
        let schema = Arc::new(schema_from_ipc(&meta.schema_ipc)?);
        let computed = ctx
            .execute_logical_plan(input.clone())
            .await?
            .execute_stream()
            .await?;
        let rows = with_deadline(computed, self.limits.statement_timeout)
            .map(move |batch| cast_batch(&batch?, &schema))
            .boxed();
        Ok((meta, rows))
    }

    /// Plans one statement (GetFlightInfo): a read is planned at pinned versions; a write
    /// is only checked to plan, and runs when its ticket is redeemed ([`Planned`]).
    /// `params` is an Arrow IPC stream of parameter rows (base64, as bound by a prepared
    /// statement); a read runs once per row, a write commits all rows at once.
    ///
    /// # Errors
    /// [`QueryError`] naming what was wrong.
    pub async fn prepare_statement(
        &self,
        sql_text: &str,
        params: Option<String>,
        writes: Writes,
        access: &Access,
    ) -> Result<Planned, QueryError> {
        let rows = param_rows(params.as_deref())?;
        let bind = rows.first().cloned().map_or(Bind::Nothing, Bind::Values);
        let parsed = sql::parse(sql_text)?;
        let planned = match command(&parsed.statement) {
            Some(command) => {
                command?;
                None
            }
            None => Some(self.plan(parsed, None, bind, access).await?),
        };
        if planned
            .as_ref()
            .is_none_or(|(_, plan, _, _)| is_write(plan))
        {
            let schema = count_schema();
            return Ok(match writes {
                Writes::AtRedeem { operation_id } => Planned {
                    schema,
                    ticket: Sealed::Write {
                        sql: sql_text.to_string(),
                        params,
                        operation_id: operation_id.unwrap_or_else(random_operation_id),
                    },
                    written: None,
                },
                Writes::AtPlanning { operation_id } => {
                    let operation_id = operation_id.unwrap_or_else(random_operation_id);
                    let count = self
                        .execute_writes(sql_text, rows, operation_id, access)
                        .await?;
                    let batch = RecordBatch::try_new(
                        schema.clone(),
                        vec![Arc::new(Int64Array::from(vec![count]))],
                    )?;
                    Planned {
                        ticket: Sealed::Result {
                            ipc: b64(&batches_to_ipc(&schema, &[batch])?),
                        },
                        schema,
                        written: Some(count),
                    }
                }
            });
        }
        let Some((ctx, plan, pins, revision)) = planned else {
            return Err(QueryError::Execution(
                "a statement planned to nothing".into(),
            ));
        };
        let physical = ctx.state().create_physical_plan(&plan).await?;
        let schema = wire_schema(&physical.schema());
        let once = params.is_none();
        let ticket = Sealed::Query {
            sql: sql_text.to_string(),
            pins: pins.lake,
            iceberg: pins.iceberg,
            params,
            revision,
        };
        if once {
            // Parameter rows each plan again at DoGet; one plan serves a ticket without.
            self.plans.keep(
                plan_key(access, &ticket),
                crate::plans::Plan { ctx, physical },
            );
        }
        Ok(Planned {
            schema,
            ticket,
            written: None,
        })
    }

    /// Result and parameter schemas of a prepared statement, without executing it.
    ///
    /// # Errors
    /// [`QueryError`] for SQL that does not plan.
    pub async fn describe_prepared(
        &self,
        sql_text: &str,
        access: &Access,
    ) -> Result<(SchemaRef, Schema), QueryError> {
        let parsed = sql::parse(sql_text)?;
        if let Some(command) = command(&parsed.statement) {
            command?;
            return Ok((count_schema(), Schema::empty()));
        }
        let (ctx, plan, _, _) = self.plan(parsed, None, Bind::Describe, access).await?;
        let mut types: Vec<(usize, String, Option<DataType>)> = plan
            .get_parameter_types()?
            .into_iter()
            .map(|(name, ty)| {
                let position = name.trim_start_matches('$').parse().unwrap_or(usize::MAX);
                (position, name, ty)
            })
            .collect();
        types.sort();
        let parameters = Schema::new(
            types
                .into_iter()
                .map(|(_, name, ty)| Field::new(name, ty.unwrap_or(DataType::Null), true))
                .collect::<Vec<_>>(),
        );
        let schema = if is_write(&plan) {
            count_schema()
        } else if types_known(&plan) {
            match ctx.state().create_physical_plan(&plan).await {
                Ok(physical) => wire_schema(&physical.schema()),
                Err(_) => wire_schema(plan.schema().as_arrow()),
            }
        } else {
            wire_schema(plan.schema().as_arrow())
        };
        Ok((schema, parameters))
    }

    /// Executes a sealed ticket: a planned query at exactly its pinned versions, or the
    /// replay of a write's result.
    ///
    /// # Errors
    /// [`QueryError`]; [`QueryError::NotFound`] when a pinned table was dropped since.
    pub async fn execute_ticket(
        &self,
        sealed: Sealed,
        access: &Access,
    ) -> Result<(SchemaRef, SendableRecordBatchStream), QueryError> {
        // The plan GetFlightInfo made on this replica for this caller, if it is waiting.
        let kept = match &sealed {
            Sealed::Query { params: None, .. } => self.plans.take(&plan_key(access, &sealed)),
            _ => None,
        };
        match sealed {
            Sealed::Write {
                sql,
                params,
                operation_id,
            } => {
                let rows = param_rows(params.as_deref())?;
                let count = self
                    .execute_writes(&sql, rows, operation_id, access)
                    .await?;
                let schema = count_schema();
                let batch = RecordBatch::try_new(
                    schema.clone(),
                    vec![Arc::new(Int64Array::from(vec![count]))],
                )?;
                let stream = futures::stream::iter([Ok(batch)]);
                Ok((
                    schema.clone(),
                    Box::pin(RecordBatchStreamAdapter::new(schema, stream)),
                ))
            }
            Sealed::Result { ipc } => {
                let (schema, batches) = batches_from_ipc(&unb64(&ipc)?)?;
                let stream = futures::stream::iter(batches.into_iter().map(Ok));
                Ok((
                    schema.clone(),
                    Box::pin(RecordBatchStreamAdapter::new(schema, stream)),
                ))
            }
            Sealed::Query {
                sql,
                pins,
                iceberg,
                params,
                revision,
            } => {
                let pins = Pins {
                    lake: pins,
                    iceberg,
                };
                // Another replica may have planned this ticket: catch up to its revision.
                self.catalog
                    .wait_for(revision, READ_YOUR_WRITES_TIMEOUT)
                    .await?;
                let rows = param_rows(params.as_deref())?;
                let binds: Vec<Bind> = if rows.is_empty() {
                    vec![Bind::Nothing]
                } else {
                    rows.into_iter().map(Bind::Values).collect()
                };
                let parsed = sql::parse(&sql)?;
                let mut streams = Vec::with_capacity(binds.len());
                let mut schema = None;
                let binds = match kept {
                    Some(kept) => {
                        // Planned here moments ago: only what may have changed since is
                        // checked again (grants, and the pinned tables and versions).
                        self.check_references(access, &parsed)?;
                        self.catalog.with_registry(|registry| {
                            pins.lake
                                .iter()
                                .try_for_each(|pin| pinned_table(registry, pin).map(drop))
                        })?;
                        schema = Some(wire_schema(&kept.physical.schema()));
                        streams.push(datafusion::physical_plan::execute_stream(
                            kept.physical,
                            kept.ctx.task_ctx(),
                        )?);
                        Vec::new()
                    }
                    None => binds,
                };
                for bind in binds {
                    // Grants are checked again: a revoke since planning takes effect here.
                    let (ctx, plan, _, _) =
                        self.plan(parsed.clone(), Some(&pins), bind, access).await?;
                    if is_write(&plan) {
                        return Err(QueryError::InvalidArgument(
                            "ticket does not name a query".into(),
                        ));
                    }
                    let physical = ctx.state().create_physical_plan(&plan).await?;
                    schema.get_or_insert_with(|| wire_schema(&physical.schema()));
                    streams.push(datafusion::physical_plan::execute_stream(
                        physical,
                        ctx.task_ctx(),
                    )?);
                }
                let schema = schema.unwrap_or_else(|| Arc::new(Schema::empty()));
                let timeout = self.limits.statement_timeout;
                let streams: Vec<_> = streams
                    .into_iter()
                    .map(|s| with_deadline(s, timeout))
                    .collect();
                // The schema announced in FlightInfo is the one streamed ([`wire_schema`]),
                // even where a scan returns another physical type than its provider
                // declares (e.g. a dictionary column that Lance stores as plain values).
                let declared = schema.clone();
                let stream = futures::stream::iter(streams).flatten().map(move |batch| {
                    let batch = batch?;
                    check_decimals(&batch).map_err(DataFusionError::from)?;
                    if batch.schema() == declared {
                        return Ok(batch);
                    }
                    cast_batch(&batch, &declared).map_err(DataFusionError::from)
                });
                Ok((
                    schema.clone(),
                    Box::pin(RecordBatchStreamAdapter::new(schema, stream)),
                ))
            }
            Sealed::Prepared { .. } => Err(QueryError::InvalidArgument(
                "a prepared statement handle is not a ticket; call GetFlightInfo with it first"
                    .into(),
            )),
        }
    }

    /// Executes a statement for its effect (Flight SQL `CommandStatementUpdate`); returns
    /// the rows written (0 for DDL).
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] for a query; otherwise as the write fails.
    pub async fn execute_update(
        &self,
        sql_text: &str,
        params: Option<String>,
        operation_id: Option<String>,
        access: &Access,
    ) -> Result<i64, QueryError> {
        let rows = param_rows(params.as_deref())?;
        self.execute_writes(
            sql_text,
            rows,
            operation_id.unwrap_or_else(random_operation_id),
            access,
        )
        .await
    }

    /// Executes a DDL statement; returns the rows it wrote (those of CREATE TABLE … AS
    /// SELECT; 0 otherwise).
    async fn execute_ddl(
        &self,
        ctx: &SessionContext,
        ddl: DdlStatement,
    ) -> Result<u64, QueryError> {
        match ddl {
            DdlStatement::CreateCatalogSchema(create) => {
                let namespace = namespace_of(&create.schema_name)?;
                match self.metasrv.create_namespace(&namespace).await {
                    Ok(revision) => {
                        self.await_revision(revision).await;
                        Ok(0)
                    }
                    Err(e) if e.is_already_exists() && create.if_not_exists => {
                        self.catch_up().await;
                        Ok(0)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            DdlStatement::DropCatalogSchema(drop) => {
                if drop.cascade {
                    return Err(QueryError::Unsupported(
                        "DROP SCHEMA … CASCADE; drop the tables first".into(),
                    ));
                }
                let namespace = namespace_of(&drop.name.to_string())?;
                match self.metasrv.drop_namespace(&namespace).await {
                    Ok(revision) => {
                        self.await_revision(revision).await;
                        Ok(0)
                    }
                    Err(e) if e.is_not_found() && drop.if_exists => {
                        self.catch_up().await;
                        Ok(0)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            DdlStatement::CreateMemoryTable(create) => {
                if create.or_replace {
                    return Err(QueryError::Unsupported("CREATE OR REPLACE TABLE".into()));
                }
                if !create.constraints.is_empty() || !create.column_defaults.is_empty() {
                    return Err(QueryError::Unsupported(
                        "PRIMARY KEY, UNIQUE and DEFAULT on Lake tables: they would not be enforced".into(),
                    ));
                }
                let (namespace, name) = sql::lake_table(&create.name).ok_or_else(|| {
                    QueryError::Unsupported(format!("cannot create {}", create.name))
                })?;
                // Columns declared FILE plan as the FILE storage struct: mark them FILE.
                let schema = crate::files::mark_file_columns(create.input.schema().as_arrow())?;
                let rows: RowStream = match create.input.as_ref() {
                    LogicalPlan::EmptyRelation(_) => futures::stream::empty().boxed(),
                    input => with_deadline(
                        ctx.execute_logical_plan(input.clone())
                            .await?
                            .execute_stream()
                            .await?,
                        self.limits.statement_timeout,
                    )
                    .map_err(QueryError::from)
                    .boxed(),
                };
                match self
                    .create_table(&namespace, &name, schema, rows, None, false)
                    .await
                {
                    Err(QueryError::Metasrv(e))
                        if e.is_already_exists() && create.if_not_exists =>
                    {
                        self.catch_up().await;
                        Ok(0)
                    }
                    other => other.map(|(_, _, rows)| rows),
                }
            }
            DdlStatement::DropTable(drop) => {
                let (namespace, name) = sql::lake_table(&drop.name)
                    .ok_or_else(|| QueryError::Unsupported(format!("cannot drop {}", drop.name)))?;
                match self.metasrv.drop_table(&namespace, &name).await {
                    Ok(revision) => {
                        self.await_revision(revision).await;
                        Ok(0)
                    }
                    Err(e) if e.is_not_found() && drop.if_exists => {
                        self.catch_up().await;
                        Ok(0)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            other => Err(QueryError::Unsupported(format!(
                "{}; Lake supports CREATE/DROP SCHEMA and CREATE/DROP TABLE",
                other.name()
            ))),
        }
    }

    /// Waits (up to [`READ_YOUR_WRITES_TIMEOUT`]) until this replica's catalog shows the
    /// write that Metasrv acknowledged at `revision`, so the client's next statement here
    /// reads it. The write is durable either way: a catalog that lags (its change stream
    /// stalled) is logged, never reported to the client as a failure of a write that
    /// happened.
    async fn await_revision(&self, revision: u64) {
        if let Err(e) = self
            .catalog
            .wait_for(revision, READ_YOUR_WRITES_TIMEOUT)
            .await
        {
            tracing::warn!(error = %e, revision, "a committed write is acknowledged before this replica's catalog shows it");
        }
    }

    /// After a statement that found its work already done at Metasrv (`CREATE … IF NOT
    /// EXISTS` of something another client just created, `DROP … IF EXISTS` of something
    /// just dropped), waits until this replica's catalog shows Metasrv's state as of now,
    /// so the client's next statement here sees what made it a no-op.
    async fn catch_up(&self) {
        match self.metasrv.revision().await {
            Ok(revision) => self.await_revision(revision).await,
            Err(e) => {
                tracing::warn!(error = %e, "could not learn Metasrv's revision to catch up with");
            }
        }
    }

    /// The registry entry of `namespace.name` from the cache.
    ///
    /// # Errors
    /// [`QueryError::NotFound`] naming the tables that exist.
    pub fn table_meta(&self, namespace: &str, name: &str) -> Result<TableMeta, QueryError> {
        self.catalog
            .with_registry(|r| lookup(r, namespace, name).map(|t| t.meta.clone()))
    }

    /// Creates `namespace.name` with `schema` and writes `rows` (possibly none) as its
    /// first version, streaming them into Lance, under `operation_id` if given (a later
    /// append of the same rows under that id is a replay of this version). Returns the table,
    /// the commit of its first version and the number of rows. If the rows fail (a bad
    /// batch, a client that went away) or Lance refuses them, the table is dropped again:
    /// no half-made table remains. With `or_append`, a table another client created
    /// meanwhile (this replica had not seen it yet) gets the rows as an append instead.
    ///
    /// # Errors
    /// Metasrv's refusal (namespace missing, table exists, bad name), a type the table
    /// cannot store, the rows' error, or Lance's failure.
    pub async fn create_table(
        &self,
        namespace: &str,
        name: &str,
        schema: SchemaRef,
        rows: RowStream,
        operation_id: Option<String>,
        or_append: bool,
    ) -> Result<(TableMeta, Committed, u64), QueryError> {
        for (kind, value) in [("namespace", namespace), ("table", name)] {
            lake_core::registry::validate_name(kind, value)
                .map_err(|e| QueryError::InvalidArgument(e.to_string()))?;
        }
        let schema = table_schema(schema)?;
        let (meta, revision) = match self
            .metasrv
            .create_table(namespace, name, schema_to_ipc(&schema)?)
            .await
        {
            Ok(created) => created,
            Err(e) if e.is_already_exists() && or_append => {
                self.catch_up().await;
                let meta = self.table_meta(namespace, name)?;
                let (committed, count) = self.append(&meta, rows, operation_id).await?;
                return Ok((meta, committed, count));
            }
            Err(e) => return Err(e.into()),
        };
        // FILE values in the first rows (CREATE TABLE … AS SELECT, ingest) must be on the
        // new table's stage, so only content already uploaded there can be referenced.
        let written = match self.table_rows(&meta, &schema, rows) {
            Ok(rows) => {
                self.datasets
                    .append(&meta, schema, rows, operation_id)
                    .await
            }
            Err(e) => Err(e),
        };
        let (committed, count) = match written {
            Ok(written) => written,
            Err(e) => {
                if let Err(undo) = self.metasrv.drop_table(namespace, name).await {
                    tracing::warn!(error = %undo, table = %format!("{namespace}.{name}"), "could not drop a table whose first version failed");
                }
                return Err(e);
            }
        };
        let committed = Committed {
            revision: committed.revision.max(revision),
            ..committed
        };
        self.await_revision(committed.revision).await;
        self.maintain_if_due(&meta);
        Ok((meta, committed, count))
    }

    /// Appends `rows` to the table as one version, streaming them into Lance, idempotently
    /// under `operation_id` (a random one when `None`, so that this replica's own retries
    /// of a commit whose outcome was unknown can never commit the rows twice). Returns the
    /// commit and the number of rows.
    ///
    /// # Errors
    /// Schema mismatch, operation id reused with another payload, table dropped, the rows'
    /// own error.
    pub async fn append(
        &self,
        meta: &TableMeta,
        rows: RowStream,
        operation_id: Option<String>,
    ) -> Result<(Committed, u64), QueryError> {
        let schema = Arc::new(schema_from_ipc(&meta.schema_ipc)?);
        let rows = self.table_rows(meta, &schema, rows)?;
        let id = operation_id.unwrap_or_else(random_operation_id);
        let (committed, count) = self.datasets.append(meta, schema, rows, Some(id)).await?;
        self.await_revision(committed.revision).await;
        self.maintain_if_due(meta);
        Ok((committed, count))
    }

    /// Namespaces `access` may read, sorted.
    pub fn namespaces(&self, access: &Access) -> Vec<String> {
        self.catalog.with_registry(|r| {
            r.namespaces()
                .filter(|ns| match access {
                    Access::User(name) => r.reaches_namespace(name, ns, Privilege::Read),
                    _ => access.allows(r, &access::namespace(ns), Privilege::Read),
                })
                .map(str::to_string)
                .collect()
        })
    }

    /// Tables `access` may read as (namespace, name, schema), sorted.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] if a stored schema does not decode.
    pub fn tables(&self, access: &Access) -> Result<Vec<(String, String, Schema)>, QueryError> {
        let metas: Vec<TableMeta> = self.catalog.with_registry(|r| {
            let mut metas: Vec<TableMeta> = r
                .tables()
                .filter(|t| {
                    let scope = access::table_scope(&t.meta.namespace, &t.meta.name);
                    access.allows(r, &scope, Privilege::Read)
                })
                .map(|t| t.meta.clone())
                .collect();
            metas.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
            metas
        });
        metas
            .into_iter()
            .map(|m| Ok((m.namespace, m.name, schema_from_ipc(&m.schema_ipc)?)))
            .collect()
    }

    /// Collects the parameter rows a client bound to a prepared statement (the Arrow
    /// batches of a DoPut) as the base64 IPC stream that sealed handles carry; `None` when
    /// the DoPut carried no rows.
    ///
    /// # Errors
    /// Malformed Arrow data.
    pub async fn collect_params(
        stream: impl futures::Stream<Item = Result<RecordBatch, QueryError>>,
    ) -> Result<Option<String>, QueryError> {
        let batches: Vec<RecordBatch> = stream.try_collect().await?;
        let Some(first) = batches.first() else {
            return Ok(None);
        };
        let schema = first.schema();
        Ok(Some(b64(&batches_to_ipc(&schema, &batches)?)))
    }
}

/// Refuses rows whose FILE values are not on their table's stage as they say: each
/// value's URI must be the stage's object for its sha256, and that object must exist with
/// its size (one HEAD per distinct value of a batch, 16 at a time; no object bytes are
/// read).
struct FileCheck {
    /// `lake.ns.t`, for messages.
    table: String,
    /// FILE columns: index and name.
    columns: Vec<(usize, String)>,
    stage: lake_sdk::Stage,
}

impl FileCheck {
    async fn check(&self, batch: &RecordBatch) -> Result<(), QueryError> {
        let table = &self.table;
        let refused = |column: &str, e: &dyn std::fmt::Display| {
            QueryError::InvalidArgument(format!("write to {table} refused: column {column}: {e}"))
        };
        // One check per distinct (uri, size, sha256).
        let mut files: BTreeMap<(String, u64, String), (lake_sdk::FileRef, String)> =
            BTreeMap::new();
        for (index, name) in &self.columns {
            let values = lake_sdk::file::file_refs(batch.column(*index).as_ref())
                .map_err(|e| refused(name, &e))?;
            for file in values.into_iter().flatten() {
                file.validate().map_err(|e| refused(name, &e))?;
                files
                    .entry((file.uri.clone(), file.size, file.sha256.clone()))
                    .or_insert_with(|| (file, name.clone()));
            }
        }
        let checks = files.into_values().map(|(file, column)| async move {
            self.stage.check(&file).await.map_err(|e| match e {
                lake_sdk::SdkError::Storage { .. } => {
                    QueryError::Execution(format!("checking FILE values of {table}: {e}"))
                }
                other => QueryError::InvalidArgument(format!(
                    "write to {table} refused: column {column}: {other}"
                )),
            })
        });
        futures::stream::iter(checks)
            .buffer_unordered(16)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }
}

/// One maintenance run on table `table_id` (as `catalog` shows it): compaction, then the cleanup
/// of expired versions' files with the history as it stands after the compaction's commit
/// (which may have expired versions). Waits for a run in progress on this replica first.
///
/// # Errors
/// As [`Datasets::compact`] and [`Datasets::clean_up`].
async fn maintain(
    datasets: &Datasets,
    catalog: &Arc<Catalog>,
    table_id: u64,
) -> Result<crate::dataset::Optimized, QueryError> {
    let _running = datasets.maintenance_lock(table_id).await;
    // Read under the lock: a run that held it may have committed and expired versions.
    let Some(table) = catalog.with_registry(|r| r.table_by_id(table_id).cloned()) else {
        return Ok(crate::dataset::Optimized::default()); // dropped meanwhile
    };
    let mut optimized = datasets.compact(&table).await?;
    let table = match optimized.committed {
        Some(committed) => {
            // A catalog that lags keeps an older history: the cleanup then keeps more.
            catalog_caught_up(catalog, committed.revision, "a compaction").await;
            catalog
                .with_registry(|r| r.table_by_id(table.meta.id).cloned())
                .unwrap_or(table)
        }
        None => table,
    };
    if let Some(committed) = datasets.update_indices(&table).await? {
        optimized.indexes_updated = true;
        catalog_caught_up(catalog, committed.revision, "an index update").await;
    }
    let table = catalog
        .with_registry(|r| r.table_by_id(table.meta.id).cloned())
        .unwrap_or(table);
    datasets.clean_up(&table, &mut optimized).await?;
    Ok(optimized)
}

/// Waits until `catalog` shows Metasrv's `revision` (a maintenance commit's, `what`), so
/// what runs next sees it; one that lags only keeps more history, so a timeout is logged,
/// not failed.
async fn catalog_caught_up(catalog: &Arc<Catalog>, revision: u64, what: &str) {
    if let Err(e) = catalog.wait_for(revision, READ_YOUR_WRITES_TIMEOUT).await {
        tracing::warn!(error = %e, "the catalog does not show {what} yet");
    }
}

/// The table `pin` names, still there and still holding the pinned version.
///
/// # Errors
/// [`QueryError::NotFound`] when the table was dropped after the query was planned; the
/// snapshot error time travel gives when the pinned version expired meanwhile (a ticket
/// outlived by its version's history: its files may be gone).
fn pinned_table<'a>(registry: &'a Registry, pin: &Pin) -> Result<&'a Arc<TableState>, QueryError> {
    let table = registry.table_by_id(pin.table_id).ok_or_else(|| {
        QueryError::NotFound(format!(
            "table {}.{} (id {}) was dropped after the query was planned",
            pin.namespace,
            sql::split_table_key(&pin.key).0,
            pin.table_id
        ))
    })?;
    if pin.version > 0 {
        let shown = format!(
            "{LAKE_CATALOG}.{}.{}",
            pin.namespace,
            sql::split_table_key(&pin.key).0
        );
        resolve_version(&shown, &table.versions, VersionSpec::Version(pin.version))
            .map_err(snapshot_error)?;
    }
    Ok(table)
}

/// What a kept plan ([`crate::plans`]) is found by: the caller and the sealed ticket.
fn plan_key(access: &Access, ticket: &Sealed) -> String {
    format!("{:?}\u{1f}{ticket:?}", access.name())
}

/// A statement Lake carries out itself rather than through a DataFusion plan.
enum Command {
    /// `GRANT` / `REVOKE`.
    Access(AccessChange),
    /// `OPTIMIZE ns.t`.
    Optimize(datafusion::sql::TableReference),
    /// `VACUUM ns.t`.
    Vacuum(datafusion::sql::TableReference),
    /// `CREATE INDEX … ON ns.t (column)`.
    CreateIndex(crate::index::CreateIndex),
    /// `DROP INDEX name ON ns.t`.
    DropIndex(crate::index::DropIndex),
    /// `MERGE INTO …` ([`crate::merge`]).
    Merge(Box<datafusion::sql::sqlparser::ast::Merge>),
}

/// The [`Command`] `statement` is, if it is one.
fn command(statement: &datafusion::sql::parser::Statement) -> Option<Result<Command, QueryError>> {
    if let Some(change) = access::access_change(statement) {
        return Some(change.map(Command::Access));
    }
    if let Some(target) = sql::vacuum_target(statement) {
        return Some(target.map(Command::Vacuum));
    }
    if let Some(merge) = crate::merge::statement(statement) {
        return Some(Ok(Command::Merge(Box::new(merge.clone()))));
    }
    if let Some(request) = crate::index::create_statement(statement) {
        return Some(request.map(Command::CreateIndex));
    }
    if let Some(request) = crate::index::drop_statement(statement) {
        return Some(request.map(Command::DropIndex));
    }
    sql::optimize_target(statement).map(|target| target.map(Command::Optimize))
}

fn lookup<'a>(
    registry: &'a Registry,
    namespace: &str,
    name: &str,
) -> Result<&'a Arc<TableState>, QueryError> {
    if !registry.has_namespace(namespace) {
        let hint = if namespace == LAKE_CATALOG {
            " (to name a table in catalog lake, write lake.namespace.table)"
        } else {
            ""
        };
        return Err(QueryError::NotFound(format!(
            "namespace {LAKE_CATALOG}.{namespace} does not exist; namespaces: [{}]{hint}",
            registry.namespaces().collect::<Vec<_>>().join(", ")
        )));
    }
    registry.table(namespace, name).ok_or_else(|| {
        QueryError::NotFound(format!(
            "table {LAKE_CATALOG}.{namespace}.{name} does not exist; tables in {namespace}: [{}]",
            registry
                .tables_in(namespace)
                .map(|t| t.meta.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

fn resolve_pins(
    registry: &Registry,
    parsed: &ParsedStatement,
    strict: bool,
) -> Result<Vec<(Pin, Arc<TableState>)>, QueryError> {
    let mut out: Vec<(Pin, Arc<TableState>)> = Vec::new();
    for reference in &parsed.tables {
        let Some((namespace, key)) = sql::lake_table(reference) else {
            continue;
        };
        if out
            .iter()
            .any(|(p, _)| p.namespace == namespace && p.key == key)
        {
            continue;
        }
        let (name, spec) = sql::split_table_key(&key);
        let table = match lookup(registry, &namespace, &name) {
            Ok(t) => t,
            Err(e) if strict => return Err(e),
            Err(_) => continue,
        };
        let display = format!("{LAKE_CATALOG}.{namespace}.{name}");
        let spec = spec.for_lake(&display).map_err(snapshot_error)?;
        let version = resolve_version(&display, &table.versions, spec).map_err(snapshot_error)?;
        out.push((
            Pin {
                namespace,
                key: key.clone(),
                table_id: table.meta.id,
                version,
            },
            table.clone(),
        ));
    }
    Ok(out)
}

/// A snapshot-resolution error, with times shown as UTC timestamps rather than epoch ms.
pub(crate) fn snapshot_error(e: lake_core::SnapshotError) -> QueryError {
    let utc = |ms: i64| {
        arrow::temporal_conversions::timestamp_ms_to_datetime(ms).map_or_else(
            || format!("{ms} ms"),
            |t| format!("{} UTC", t.format("%Y-%m-%d %H:%M:%S%.3f")),
        )
    };
    match e {
        lake_core::SnapshotError::BeforeFirstCommit {
            table,
            requested_ms,
            first_ms,
        } => QueryError::NotFound(format!(
            "table {table} has no version as of {}; its first version was committed at {}",
            utc(requested_ms),
            utc(first_ms)
        )),
        lake_core::SnapshotError::Expired {
            table,
            requested,
            oldest,
            oldest_ms,
        } => QueryError::NotFound(format!(
            "{}: the oldest retained version is {oldest}, committed at {}; older versions expired (Metasrv keeps history for `--history-max-age-hours` / `--history-max-versions`)",
            match requested {
                lake_core::VersionSpec::AsOfMs(ms) => {
                    format!("table {table} keeps no version as of {}", utc(ms))
                }
                lake_core::VersionSpec::Version(v) => {
                    format!("version {v} of table {table} has expired")
                }
                lake_core::VersionSpec::Latest => format!("table {table} has no latest version"),
            },
            utc(oldest_ms)
        )),
        e @ lake_core::SnapshotError::Unsupported { .. } => {
            QueryError::InvalidArgument(e.to_string())
        }
        other => QueryError::NotFound(other.to_string()),
    }
}

fn namespace_of(name: &str) -> Result<String, QueryError> {
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        [ns] => Ok(ns.trim_matches('"').to_string()),
        [catalog, ns] if catalog.trim_matches('"') == LAKE_CATALOG => {
            Ok(ns.trim_matches('"').to_string())
        }
        _ => Err(QueryError::NotFound(format!(
            "cannot use schema {name}: write {LAKE_CATALOG}.NAME or NAME, where NAME is 1 to 128 ASCII letters, digits or '_' (schemas live in catalog {LAKE_CATALOG})"
        ))),
    }
}

fn is_read(statement: &datafusion::sql::parser::Statement) -> bool {
    use datafusion::sql::sqlparser::ast::Statement as Ast;
    match statement {
        datafusion::sql::parser::Statement::Statement(s) => {
            matches!(
                s.as_ref(),
                Ast::Query(_)
                    | Ast::Insert(_)
                    | Ast::Delete(_)
                    | Ast::Update(_)
                    | Ast::Explain { .. }
            )
        }
        datafusion::sql::parser::Statement::Explain(_) => true,
        _ => false,
    }
}

fn is_write(plan: &LogicalPlan) -> bool {
    matches!(
        plan,
        LogicalPlan::Ddl(_)
            | LogicalPlan::Dml(_)
            | LogicalPlan::Statement(_)
            | LogicalPlan::Copy(_)
    )
}

/// Refuses the plans no client may run, wherever they sit in the plan (subqueries
/// included): `COPY … TO`, which writes files wherever the server's user can, and a write
/// nested inside another statement (`EXPLAIN ANALYZE` runs its statement, so `EXPLAIN
/// ANALYZE INSERT …` or `… COPY …` would write under the cover of a read). Plain `EXPLAIN`
/// runs nothing and may show any plan but COPY.
///
/// # Errors
/// [`QueryError::Unsupported`] naming the statement and what to do instead.
fn check_surface(plan: &LogicalPlan) -> Result<(), QueryError> {
    use datafusion::common::tree_node::TreeNodeRecursion;
    let explain_only = matches!(plan, LogicalPlan::Explain(_));
    let mut refusal = None;
    plan.apply_with_subqueries(|node| {
        let nested = !std::ptr::eq(node, plan);
        refusal = match node {
            LogicalPlan::Copy(_) => Some(
                "COPY … TO writes files on the server, which clients may not do: read the rows over Flight SQL, or keep them with CREATE TABLE … AS SELECT"
                    .to_string(),
            ),
            node if nested && !explain_only && is_write(node) => Some(format!(
                "{} inside another statement (EXPLAIN ANALYZE runs its statement): run writes on their own",
                node.display()
            )),
            _ => None,
        };
        Ok(if refusal.is_some() {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    refusal.map_or(Ok(()), |r| Err(QueryError::Unsupported(r)))
}

fn types_known(plan: &LogicalPlan) -> bool {
    plan.get_parameter_types()
        .map(|types| types.values().all(Option::is_some))
        .unwrap_or(false)
}

/// Most parameter rows one bind of a prepared statement may carry: each row is planned
/// and run as its own statement. Bulk rows go through ingest, which streams.
pub const PARAMETER_ROWS_MAX: usize = 1000;

/// Rows of parameter values from a base64 IPC stream.
///
/// # Errors
/// [`QueryError::TooLarge`] past [`PARAMETER_ROWS_MAX`] rows; [`QueryError::InvalidArgument`]
/// for bytes that are not an Arrow IPC stream.
fn param_rows(params: Option<&str>) -> Result<Vec<Vec<ScalarValue>>, QueryError> {
    let Some(params) = params else {
        return Ok(Vec::new());
    };
    let (_, batches) = batches_from_ipc(&unb64(params)?)?;
    let count: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if count > PARAMETER_ROWS_MAX {
        return Err(QueryError::TooLarge(format!(
            "{count} parameter rows in one bind; at most {PARAMETER_ROWS_MAX} are accepted (each is its own statement): send bulk rows with ingest (ADBC adbc_ingest, CommandStatementIngest) instead"
        )));
    }
    let mut rows = Vec::new();
    for batch in batches {
        for row in 0..batch.num_rows() {
            let values = batch
                .columns()
                .iter()
                .map(|column| ScalarValue::try_from_array(column, row))
                .collect::<Result<Vec<_>, _>>()?;
            rows.push(values);
        }
    }
    Ok(rows)
}
