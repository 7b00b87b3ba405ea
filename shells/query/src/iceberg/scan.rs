//! The DataFusion table of one pinned Iceberg snapshot, read with iceberg-rust's core scan
//! (`TableScan::plan_files` → `ArrowReader`).
//!
//! * Columns are the snapshot's own schema; iceberg-rust matches file columns by field id,
//!   applies position and equality delete files, and reads files without field ids
//!   through the table's name mapping.
//! * Filters reach the scan only where their translation is exact ([`super::predicate`]).
//!   There they prune data files (manifest bounds) and row groups (Parquet column
//!   statistics); rows are filtered once, by DataFusion above the scan, not also by a
//!   Parquet `RowFilter` as they are decoded (the vendored iceberg's
//!   `with_row_filter_enabled(false)`, vendor/README.md; DataFusion's own Parquet scan
//!   leaves `pushdown_filters` off by default for the same reason). Equality deletes still
//!   filter rows in the reader.
//! * The snapshot's file scan tasks are planned once per execution (not at planning, so
//!   GetFlightInfo reads no manifests), Parquet files of 1.5 times their share or more cut
//!   into byte ranges of whole row groups, and spread over the session's target partitions,
//!   largest first onto the least-loaded partition; each partition reads its ranges one
//!   after another.
//! * Every data and delete file must lie under the table's location, its
//!   `write.data.path`, or a configured allowed prefix (where migrated files stay): a table
//!   whose manifests name other files (a server-local `file:///etc/…`) fails instead of
//!   being read.
//! * A full scan of a snapshot without delete files reports its summary's `total-records`
//!   as an exact row count ([`super::stats`]), so `count(*)` is answered from metadata.

use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{BaselineMetrics, ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};
use iceberg::expr::Predicate;
use iceberg::scan::FileScanTask;
use iceberg::spec::DataFileFormat;
use iceberg::table::Table;
use tokio::sync::OnceCell;

use super::predicate::to_predicate;

/// The table property naming where new data files go, when not under the table location
/// (Iceberg table spec, "Table Properties").
const WRITE_DATA_PATH: &str = "write.data.path";

/// One Iceberg snapshot as a DataFusion table.
#[derive(Debug)]
pub struct IcebergTable {
    table: Table,
    snapshot_id: i64,
    schema: SchemaRef,
    /// Rows of a full scan, when the snapshot's summary says so exactly.
    exact_rows: Option<usize>,
    /// Where files may lie besides the table's location.
    allowed_prefixes: Arc<Vec<String>>,
}

impl IcebergTable {
    /// The table over `snapshot_id` of `table`, whose columns are `schema` (the snapshot's
    /// schema as Arrow); `exact_rows` is a full scan's row count if known exactly, and
    /// `allowed_prefixes` where files may lie besides the table's location.
    pub fn new(
        table: Table,
        snapshot_id: i64,
        schema: SchemaRef,
        exact_rows: Option<usize>,
        allowed_prefixes: Arc<Vec<String>>,
    ) -> Self {
        Self {
            table,
            snapshot_id,
            schema,
            exact_rows,
            allowed_prefixes,
        }
    }
}

#[async_trait]
impl TableProvider for IcebergTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (schema, columns) = match projection {
            Some(indices) => (
                Arc::new(self.schema.project(indices)?),
                Some(
                    indices
                        .iter()
                        .map(|&i| self.schema.field(i).name().clone())
                        .collect::<Vec<_>>(),
                ),
            ),
            None => (self.schema.clone(), None),
        };
        let predicate = filters
            .iter()
            .filter_map(|f| to_predicate(f, &self.schema))
            .reduce(Predicate::and);
        let full_scan = filters.is_empty() && limit.is_none();
        let partitions = state.config().target_partitions().max(1);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(Arc::new(IcebergScanExec {
            files: Arc::new(SnapshotFiles {
                table: self.table.clone(),
                snapshot_id: self.snapshot_id,
                columns,
                predicate,
                partitions,
                allowed_prefixes: self.allowed_prefixes.clone(),
                tasks: OnceCell::new(),
            }),
            metrics: ExecutionPlanMetricsSet::new(),
            schema,
            limit,
            exact_rows: self.exact_rows.filter(|_| full_scan),
            properties,
        }))
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match to_predicate(f, &self.schema) {
                Some(_) => TableProviderFilterPushDown::Inexact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }
}

/// The scan of one snapshot over `properties.partitioning` partitions.
#[derive(Debug)]
struct IcebergScanExec {
    files: Arc<SnapshotFiles>,
    /// Rows and time per partition, for EXPLAIN ANALYZE.
    metrics: ExecutionPlanMetricsSet,
    /// Output columns (after projection).
    schema: SchemaRef,
    limit: Option<usize>,
    exact_rows: Option<usize>,
    properties: Arc<PlanProperties>,
}

/// What a scan reads, shared by its partitions: the file scan tasks are planned by the
/// first partition that runs.
#[derive(Debug)]
struct SnapshotFiles {
    table: Table,
    snapshot_id: i64,
    /// Projected column names; `None` reads every column.
    columns: Option<Vec<String>>,
    predicate: Option<Predicate>,
    partitions: usize,
    allowed_prefixes: Arc<Vec<String>>,
    /// Each partition's file scan tasks.
    tasks: OnceCell<Vec<Vec<FileScanTask>>>,
}

fn iceberg_error(e: iceberg::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

impl SnapshotFiles {
    /// The file scan tasks of `partition`, planning them all on the first call.
    async fn of_partition(&self, partition: usize) -> Result<Vec<FileScanTask>> {
        let groups = self.tasks.get_or_try_init(|| self.plan()).await?;
        Ok(groups.get(partition).cloned().unwrap_or_default())
    }

    /// Plans the snapshot's files and splits them over the partitions.
    async fn plan(&self) -> Result<Vec<Vec<FileScanTask>>> {
        let builder = self.table.scan().snapshot_id(self.snapshot_id);
        let mut builder = match &self.columns {
            Some(columns) if columns.is_empty() => builder.select_empty(),
            Some(columns) => builder.select(columns.clone()),
            None => builder.select_all(),
        };
        if let Some(predicate) = &self.predicate {
            builder = builder.with_filter(predicate.clone());
        }
        let scan = builder.build().map_err(iceberg_error)?;
        let tasks: Vec<FileScanTask> = scan
            .plan_files()
            .await
            .map_err(iceberg_error)?
            .try_collect()
            .await
            .map_err(iceberg_error)?;
        let mut roots = table_roots(&self.table);
        roots.extend(self.allowed_prefixes.iter().cloned());
        for task in &tasks {
            let files = std::iter::once(task.data_file_path.as_str())
                .chain(task.deletes.iter().map(|d| d.file_path.as_str()));
            for file in files {
                if !roots.iter().any(|root| under(root, file)) {
                    tracing::warn!(table = %self.table.identifier(), file, roots = ?roots, "an Iceberg file outside the table's location was refused");
                    return Err(DataFusionError::External(Box::new(
                        crate::QueryError::InvalidArgument(format!(
                            "Iceberg table {} lists a data or delete file outside its location; Lake reads only files under the table's location or a prefix allowed with --iceberg-allowed-prefix (LAKE_ICEBERG_ALLOWED_PREFIXES)",
                            self.table.identifier(),
                        )),
                    )));
                }
            }
        }
        Ok(spread(split(tasks, self.partitions), self.partitions))
    }
}

/// Where a table's files may lie: its location and its `write.data.path`.
fn table_roots(table: &Table) -> Vec<String> {
    let metadata = table.metadata();
    let mut roots = vec![metadata.location().to_string()];
    if let Some(path) = metadata.properties().get(WRITE_DATA_PATH) {
        roots.push(path.clone());
    }
    roots
}

/// A local path's spelling without its scheme: `file:///a/b`, `file:/a/b` and `/a/b` are
/// the same file.
fn local(uri: &str) -> &str {
    uri.strip_prefix("file://")
        .or_else(|| uri.strip_prefix("file:"))
        .unwrap_or(uri)
}

/// Whether `file` lies under the directory `root` (no `..` segment escapes it).
fn under(root: &str, file: &str) -> bool {
    let root = local(root).trim_end_matches('/');
    local(file)
        .strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| !rest.is_empty() && !rest.split('/').any(|s| s == ".." || s == "."))
}

/// The smallest byte range a Parquet data file is split into for reading on more than one
/// partition: a piece costs one more footer read (a GET on object storage), so below this
/// a second core gains less than that.
const SPLIT_BYTES_MIN: u64 = 8 << 20;

/// `tasks` with each Parquet data file of one and a half times its share of the bytes or
/// more cut into byte ranges of about that share (Iceberg's split planning, as Spark's
/// `read.split.target-size` does; here the share is the scan's bytes over `partitions`, at
/// least [`SPLIT_BYTES_MIN`]), so one large file is read by every partition instead of
/// one. iceberg-rust's reader reads the row groups whose midpoint lies in a task's
/// `[start, start + length)`, so every row group is read by exactly one piece and position
/// deletes still apply by file position.
/// A piece's `record_count` is unknown (`None`).
fn split(tasks: Vec<FileScanTask>, partitions: usize) -> Vec<FileScanTask> {
    let range = |t: &FileScanTask| match (t.start, t.length) {
        (0, 0) => (0, t.file_size_in_bytes),
        range => range,
    };
    let total: u64 = tasks.iter().map(|t| range(t).1).sum();
    let target = total
        .div_ceil(partitions.max(1) as u64)
        .max(SPLIT_BYTES_MIN);
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        let (start, length) = range(&task);
        // Rounded: a file barely over its share stays whole (the cut would only move a
        // row group from one partition to another and cost a footer read).
        let pieces = (length + target / 2) / target;
        if pieces <= 1 || task.data_file_format != DataFileFormat::Parquet {
            out.push(task);
            continue;
        }
        for k in 0..pieces {
            let from = start + length * k / pieces;
            let to = start + length * (k + 1) / pieces;
            out.push(FileScanTask {
                start: from,
                length: to - from,
                record_count: None,
                ..task.clone()
            });
        }
    }
    out
}

/// `tasks` over `partitions` lists: largest byte range first, each onto the partition with
/// the fewest bytes so far (ties to the lowest index), so the split is deterministic.
fn spread(mut tasks: Vec<FileScanTask>, partitions: usize) -> Vec<Vec<FileScanTask>> {
    let partitions = partitions.max(1);
    let bytes = |t: &FileScanTask| match t.length {
        0 => t.file_size_in_bytes,
        length => length,
    };
    tasks.sort_by(|a, b| {
        bytes(b)
            .cmp(&bytes(a))
            .then_with(|| a.data_file_path.cmp(&b.data_file_path))
            .then_with(|| a.start.cmp(&b.start))
    });
    let mut out: Vec<(u64, Vec<FileScanTask>)> = vec![(0, Vec::new()); partitions];
    for task in tasks {
        if let Some((sum, list)) = out.iter_mut().min_by_key(|(sum, _)| *sum) {
            *sum += bytes(&task);
            list.push(task);
        }
    }
    out.into_iter().map(|(_, list)| list).collect()
}

impl DisplayAs for IcebergScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let files = &self.files;
        write!(
            f,
            "IcebergScanExec: snapshot={} columns=[{}]",
            files.snapshot_id,
            files
                .columns
                .as_ref()
                .map_or_else(|| "*".to_string(), |c| c.join(", "))
        )?;
        if let Some(predicate) = &files.predicate {
            write!(f, " predicate=[{predicate}]")?;
        }
        if let Some(limit) = self.limit {
            write!(f, " limit={limit}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for IcebergScanExec {
    fn name(&self) -> &str {
        "IcebergScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "IcebergScanExec has no children".into(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let files = self.files.clone();
        let batch_size = context.session_config().batch_size();
        let batches = futures::stream::once(async move {
            let mine = files.of_partition(partition).await?;
            let reader = files
                .table
                .reader_builder()
                .with_batch_size(batch_size)
                .with_data_file_concurrency_limit(1)
                .with_row_filter_enabled(false)
                .build();
            let tasks = futures::stream::iter(mine.into_iter().map(Ok)).boxed();
            let stream = reader.read(tasks).map_err(iceberg_error)?.stream();
            Ok::<_, DataFusionError>(stream.map_err(iceberg_error))
        })
        .try_flatten();
        let limited = match self.limit {
            None => batches.boxed(),
            Some(limit) => {
                let mut remaining = limit;
                batches
                    .try_take_while(move |_| futures::future::ready(Ok(remaining > 0)))
                    .map_ok(move |batch| {
                        let keep = batch.num_rows().min(remaining);
                        remaining -= keep;
                        batch.slice(0, keep)
                    })
                    .boxed()
            }
        };
        let baseline = BaselineMetrics::new(&self.metrics, partition);
        let counted = limited.map(move |batch| {
            if let Ok(batch) = &batch {
                baseline.record_output(batch.num_rows());
            }
            batch
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            counted,
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let mut statistics = Statistics::new_unknown(&self.schema);
        if partition.is_none()
            && let Some(rows) = self.exact_rows
        {
            statistics.num_rows = Precision::Exact(rows);
        }
        Ok(Arc::new(statistics))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_under_a_root_are_under_it() {
        let root = "file:///w/ns/t";
        assert!(under(root, "file:///w/ns/t/data/a.parquet"));
        assert!(under("s3://b/w/t/", "s3://b/w/t/data/x.parquet"));
        assert!(under("/w/ns/t", "file:///w/ns/t/data/a.parquet"));
        assert!(under("file:/w/ns/t", "/w/ns/t/data/a.parquet"));
        assert!(!under("s3://b/w/t", "s3://c/w/t/data/x.parquet"));
        for outside in [
            "file:///etc/passwd",
            "file:///w/ns/t2/data/a.parquet",
            "file:///w/ns/t/../t2/a.parquet",
            "file:///w/ns/t/",
            "file:///w/ns/t",
        ] {
            assert!(!under(root, outside), "{outside}");
        }
    }

    fn task(path: &str, bytes: u64, format: DataFileFormat) -> FileScanTask {
        FileScanTask::builder()
            .with_file_size_in_bytes(bytes)
            .with_start(0)
            .with_length(bytes)
            .with_record_count(Some(1000))
            .with_data_file_path(path.to_string())
            .with_data_file_format(format)
            .with_schema(Arc::new(
                iceberg::spec::Schema::builder().build().expect("schema"),
            ))
            .with_project_field_ids(vec![1])
            .with_case_sensitive(true)
            .build()
    }

    /// A task as (path, start, length, record_count).
    type Shown = (String, u64, u64, Option<u64>);

    /// Each task of each partition, as [`Shown`].
    fn shown(partitions: &[Vec<FileScanTask>]) -> Vec<Vec<Shown>> {
        partitions
            .iter()
            .map(|p| {
                p.iter()
                    .map(|t| (t.data_file_path.clone(), t.start, t.length, t.record_count))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn one_large_file_is_cut_into_byte_ranges_that_cover_it_once() {
        const MIB: u64 = 1 << 20;
        let planned = spread(
            split(vec![task("big", 100 * MIB + 1, DataFileFormat::Parquet)], 2),
            2,
        );
        assert_eq!(
            shown(&planned),
            [
                vec![("big".to_string(), 50 * MIB, 50 * MIB + 1, None)],
                vec![("big".to_string(), 0, 50 * MIB, None)],
            ]
        );
        // Three partitions, a file of 20 MiB and one of 3 MiB: a third of 23 MiB is below
        // the minimum, so the target is 8 MiB: the big file is cut into three equal pieces
        // and the small one stays whole.
        let planned = split(
            vec![
                task("a", 20 * MIB, DataFileFormat::Parquet),
                task("b", 3 * MIB, DataFileFormat::Parquet),
            ],
            3,
        );
        let ranges: Vec<(&str, u64, u64)> = planned
            .iter()
            .map(|t| (t.data_file_path.as_str(), t.start, t.length))
            .collect();
        let third = 20 * MIB / 3;
        assert_eq!(
            ranges,
            [
                ("a", 0, third),
                ("a", third, 2 * 20 * MIB / 3 - third),
                ("a", 2 * 20 * MIB / 3, 20 * MIB - 2 * 20 * MIB / 3),
                ("b", 0, 3 * MIB)
            ]
        );
        assert_eq!(
            planned[3].record_count,
            Some(1000),
            "a whole file keeps its count"
        );
        // Every byte of each file belongs to exactly one piece.
        let covered: u64 = planned
            .iter()
            .filter(|t| t.data_file_path == "a")
            .map(|t| t.length)
            .sum();
        assert_eq!(covered, 20 * MIB);
        // One partition, small files, files barely over their share (two files of 85 and
        // 77 MB on two partitions), or another format: nothing is cut.
        for (tasks, partitions) in [
            (
                vec![
                    task("f0", 85 * MIB, DataFileFormat::Parquet),
                    task("f1", 77 * MIB, DataFileFormat::Parquet),
                ],
                2,
            ),
            (vec![task("big", 100 * MIB, DataFileFormat::Parquet)], 1),
            (
                vec![task("small", SPLIT_BYTES_MIN, DataFileFormat::Parquet)],
                4,
            ),
            (vec![task("orc", 100 * MIB, DataFileFormat::Orc)], 2),
        ] {
            let whole = tasks.clone();
            assert_eq!(split(tasks, partitions), whole);
        }
    }

    #[test]
    fn ranges_spread_largest_first_onto_the_least_loaded_partition() {
        let tasks = vec![
            task("c", 10, DataFileFormat::Parquet),
            task("a", 30, DataFileFormat::Parquet),
            task("b", 25, DataFileFormat::Parquet),
            task("d", 10, DataFileFormat::Parquet),
        ];
        let names: Vec<Vec<String>> = spread(tasks, 2)
            .iter()
            .map(|p| p.iter().map(|t| t.data_file_path.clone()).collect())
            .collect();
        assert_eq!(names, [vec!["a", "d"], vec!["b", "c"]]);
    }
}
