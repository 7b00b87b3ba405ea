//! Exact row counts from snapshot summaries, so `SELECT count(*)` over an Iceberg snapshot
//! is answered from metadata as other Iceberg engines answer it, instead of by a scan.
//!
//! A snapshot's summary carries `total-records` and, for v2 tables, `total-delete-files`
//! (table spec, "Snapshot Summary" / Java `SnapshotSummary`). When the snapshot has no
//! delete files, `total-records` is exactly the rows a full scan returns; DataFusion's
//! `AggregateStatistics` rule then replaces `count(*)` with that number.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use iceberg::spec::Snapshot;

/// The rows a full scan of `snapshot` returns, when its summary says so exactly:
/// `total-records`, provided `total-delete-files` is present and 0.
pub fn exact_rows(snapshot: &Snapshot) -> Option<usize> {
    let summary = &snapshot.summary().additional_properties;
    let deletes: u64 = summary.get("total-delete-files")?.parse().ok()?;
    if deletes != 0 {
        return None;
    }
    summary.get("total-records")?.parse().ok()
}

/// A table provider whose unfiltered, unlimited scans report an exact row count.
#[derive(Debug)]
pub struct CountedTable {
    inner: Arc<dyn TableProvider>,
    rows: usize,
}

impl CountedTable {
    /// `inner`, whose full scan returns exactly `rows` rows.
    pub fn new(inner: Arc<dyn TableProvider>, rows: usize) -> Self {
        Self { inner, rows }
    }
}

#[async_trait]
impl TableProvider for CountedTable {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = self.inner.scan(state, projection, filters, limit).await?;
        // Pushed-down filters may prune files and a limit stops early: only a full scan
        // returns exactly `rows`.
        if filters.is_empty() && limit.is_none() {
            return Ok(Arc::new(ExactRows {
                inner: plan,
                rows: self.rows,
            }));
        }
        Ok(plan)
    }
}

/// `inner`, reporting `rows` as its exact output row count.
#[derive(Debug)]
struct ExactRows {
    inner: Arc<dyn ExecutionPlan>,
    rows: usize,
}

impl DisplayAs for ExactRows {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ExactRows: rows={}", self.rows)
    }
}

impl ExecutionPlan for ExactRows {
    fn name(&self) -> &str {
        "ExactRows"
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.inner]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match children.pop() {
            Some(inner) if children.is_empty() => Ok(Arc::new(Self {
                inner,
                rows: self.rows,
            })),
            _ => Err(datafusion::error::DataFusionError::Internal(
                "ExactRows takes exactly one child".into(),
            )),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.inner.execute(partition, context)
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Statistics> {
        let mut statistics = Statistics::new_unknown(&self.schema());
        let whole = partition.is_none() || self.properties().partitioning.partition_count() == 1;
        if whole {
            statistics.num_rows = Precision::Exact(self.rows);
        }
        Ok(statistics)
    }
}
