//! The DataFusion table of one pinned Lance dataset version, scanned for analytics.
//!
//! With a filter, Lance's own `LanceTableProvider` on a local filesystem fetches every
//! variable-width column and every column 10 bytes wide or wider by late materialization:
//! it filters on the filter columns, then takes the other columns row by row. That suits a
//! query that keeps ~0.1% of the rows; for a TPC-H scan that keeps most of them it turns one
//! sequential read into thousands of small ones (q1 at scale factor 1: 4,990 reads for 6 M
//! rows). It also filters and hands on every batch through one output partition, which on a
//! 2-core replica leaves a filtered scan (TPC-H q6) on one core. A Query replica instead asks
//! Lance ([`lance::dataset::scanner::Scanner`]) for:
//! - early materialization of every projected column ([`MaterializationStyle::AllEarly`]),
//!   so a scan reads each column's pages once, sequentially. Very selective queries pay for
//!   it: a one-row lookup by key at SF 1 takes about 3 ms longer;
//! - one output partition per DataFusion target partition
//!   ([`FilteredReadThreadingMode::MultiplePartitions`]), the partitions sharing Lance's
//!   read tasks.
//!
//! Projection, filters and limits are pushed into the Lance scan as before; Lance applies the
//! whole filter, so pushdown is exact. A scan with a limit keeps Lance's single partition
//! (Lance supports a range after the filter only there). Rows come back in no particular
//! order unless the query has an `ORDER BY`, as SQL allows.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::datasource::TableProvider;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use lance::Dataset;
use lance::dataset::scanner::{MaterializationStyle, Scanner};
use lance::io::exec::filtered_read::{FilteredReadExec, FilteredReadThreadingMode};

/// A pinned Lance dataset version as a DataFusion table (columns: the dataset's schema,
/// then [`ROW_ADDR`] when made by [`LanceTable::with_row_addresses`]).
#[derive(Debug)]
pub struct LanceTable {
    dataset: Arc<Dataset>,
    schema: SchemaRef,
    /// The last column of [`Self::schema`] is [`ROW_ADDR`].
    row_addresses: bool,
}

/// Lance's row address column: `UInt64`, not null, a row's fragment id in the upper 32
/// bits and its offset in the fragment in the lower 32 (lance-core `ROW_ADDR`).
pub const ROW_ADDR: &str = lance_core::ROW_ADDR;

impl LanceTable {
    /// The table over `dataset` (an opened, immutable version).
    pub fn new(dataset: Arc<Dataset>) -> Self {
        let schema = Arc::new(arrow::datatypes::Schema::from(dataset.schema()));
        Self {
            dataset,
            schema,
            row_addresses: false,
        }
    }

    /// The table over `dataset` with each row's address as a last column, [`ROW_ADDR`]:
    /// the scan a DELETE or UPDATE finds its rows with ([`crate::dml`]).
    pub fn with_row_addresses(dataset: Arc<Dataset>) -> Self {
        let mut fields: Vec<arrow::datatypes::FieldRef> = Self::new(dataset.clone())
            .schema
            .fields()
            .iter()
            .cloned()
            .collect();
        fields.push(Arc::new(arrow::datatypes::Field::new(
            ROW_ADDR,
            arrow::datatypes::DataType::UInt64,
            false,
        )));
        Self {
            dataset,
            schema: Arc::new(arrow::datatypes::Schema::new(fields)),
            row_addresses: true,
        }
    }
}

#[async_trait]
impl TableProvider for LanceTable {
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
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let lance = |e: lance::Error| DataFusionError::External(Box::new(e));
        let mut scan: Scanner = self.dataset.scan();
        match projection {
            Some(columns) if columns.is_empty() => {
                scan.empty_project().map_err(lance)?;
            }
            Some(columns) => {
                let names: Vec<&str> = columns
                    .iter()
                    .map(|&i| self.schema.field(i).name().as_str())
                    .collect();
                scan.project(&names).map_err(lance)?;
            }
            None if self.row_addresses => {
                let names: Vec<&str> = self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect();
                scan.project(&names).map_err(lance)?;
            }
            None => {}
        }
        if let Some(filter) = filters.iter().cloned().reduce(Expr::and) {
            scan.filter_expr(filter);
        }
        scan.limit(limit.map(|l| l as i64), None).map_err(lance)?;
        scan.materialization_style(MaterializationStyle::AllEarly);
        let plan = scan.create_plan().await.map_err(lance)?;
        if self.row_addresses {
            // The columns as projected, the address where it was asked for.
            let expected: Vec<&str> = match projection {
                Some(columns) => columns
                    .iter()
                    .map(|&i| self.schema.field(i).name().as_str())
                    .collect(),
                None => self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect(),
            };
            let schema = plan.schema();
            let got: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            if got != expected {
                return Err(DataFusionError::Internal(format!(
                    "the Lance scan returned columns {got:?}, not {expected:?}"
                )));
            }
        }
        if limit.is_some() {
            return Ok(plan);
        }
        let partitions = state.config().target_partitions().max(1);
        Ok(plan
            .transform_down(|node| {
                let Some(read) = node.downcast_ref::<FilteredReadExec>() else {
                    return Ok(Transformed::no(node));
                };
                let options = read.options();
                if options.scan_range_after_filter.is_some()
                    || !matches!(
                        options.threading_mode,
                        FilteredReadThreadingMode::OnePartitionMultipleThreads(_)
                    )
                {
                    return Ok(Transformed::no(node));
                }
                let mut options = options.clone();
                options.threading_mode = FilteredReadThreadingMode::MultiplePartitions(partitions);
                let read = FilteredReadExec::try_new(
                    read.dataset().clone(),
                    options,
                    read.index_input().cloned(),
                )
                .map_err(lance)?;
                Ok(Transformed::new(
                    Arc::new(read),
                    true,
                    TreeNodeRecursion::Jump,
                ))
            })?
            .data)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> datafusion::common::Result<Vec<TableProviderFilterPushDown>> {
        // The Lance scan evaluates the whole pushed filter on every row it returns, with
        // DataFusion's own expressions; filters its planner cannot take stay with
        // DataFusion.
        Ok(filters
            .iter()
            .map(|filter| {
                if lance_plans(filter) {
                    TableProviderFilterPushDown::Exact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }
}

/// Whether Lance's filter planner (lance-datafusion `Planner`) takes `filter`: not with
/// Lake's own functions (checked arithmetic, canonical floats) or a LIKE with an escape
/// character other than `\`.
fn lance_plans(filter: &Expr) -> bool {
    !filter
        .exists(|e| {
            Ok(match e {
                Expr::Like(like) | Expr::SimilarTo(like) => {
                    like.escape_char.is_some_and(|c| c != '\\')
                }
                Expr::ScalarFunction(f) => f
                    .func
                    .name()
                    .starts_with(crate::checked_integers::LAKE_FUNCTION_PREFIX),
                _ => false,
            })
        })
        .unwrap_or(true)
}
