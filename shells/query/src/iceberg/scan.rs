//! The DataFusion table of one pinned Iceberg snapshot, read with iceberg-rust's core scan
//! (`TableScan::plan_files` → `ArrowReader`).
//!
//! * Columns are the snapshot's own schema; iceberg-rust matches file columns by field id,
//!   applies position and equality delete files, and reads files without field ids
//!   through the table's name mapping.
//! * Filters reach the scan only where their translation is exact ([`super::predicate`]);
//!   DataFusion filters every row again.
//! * The snapshot's file scan tasks are planned once per execution (not at planning, so
//!   GetFlightInfo reads no manifests) and spread over the session's target partitions,
//!   largest files first onto the least-loaded partition; each partition reads its files
//!   one after another.
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
        Ok(spread(tasks, self.partitions))
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

/// `tasks` over `partitions` lists: largest file first, each onto the partition with the
/// fewest bytes so far (ties to the lowest index), so the split is deterministic.
fn spread(mut tasks: Vec<FileScanTask>, partitions: usize) -> Vec<Vec<FileScanTask>> {
    let partitions = partitions.max(1);
    tasks.sort_by(|a, b| {
        b.file_size_in_bytes
            .cmp(&a.file_size_in_bytes)
            .then_with(|| a.data_file_path.cmp(&b.data_file_path))
    });
    let mut out: Vec<(u64, Vec<FileScanTask>)> = vec![(0, Vec::new()); partitions];
    for task in tasks {
        if let Some((bytes, list)) = out.iter_mut().min_by_key(|(bytes, _)| *bytes) {
            *bytes += task.file_size_in_bytes;
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
}
