//! Statistics for a Lance scan that DataFusion's join planning can trust: column ranges
//! from the table's zone maps, and a byte size of only the columns the scan returns.
//!
//! **Ranges.** A Lance scan ([`lance::io::exec::filtered_read::FilteredReadExec`]) reports
//! row counts only. DataFusion's join planning then estimates every join on a key as if each
//! row held a distinct key, so a join of `orders` with its 1.5 M rows and `customer` with
//! 150 K looks like 150 K rows, and `JoinSelection` builds hash tables on the wrong side
//! (TPC-H q18: the semi join hashed 6 M rows where 57 suffice). Parquet readers avoid this
//! because every row group carries min/max statistics, which bound a key's distinct count
//! (`max - min + 1`).
//!
//! A Lance table gets the same bounds from a zone map index on the column (`CREATE INDEX
//! … USING ZONEMAP`, Lance's `ZoneMap`: min and max per zone of rows), read without a
//! scan by Lance's [`lance::dataset::statistics::DatasetStatistics::column_value_range`].
//! Lance answers only when the zone maps cover every fragment of the pinned version (a
//! fragment appended since the index was last updated makes the range unknown until
//! maintenance indexes it) and the column has no NaN. Deleted rows may still be inside
//! the range, so DataFusion gets it as [`Precision::Inexact`]: a bound for estimates,
//! never an answer (DataFusion answers `min`/`max` aggregates from statistics only when
//! they are exact).
//!
//! **Bytes.** With a filter, Lance's scanner reads the filter's columns (and its row id)
//! beside the projected ones and drops them in a `ProjectionExec` above the read. That
//! projection passes the read's byte estimate through unchanged whenever a returned column
//! is variable-width (DataFusion's `Statistics::calculate_total_byte_size`), so the scan
//! reports the bytes of columns it never returns. `JoinSelection` compares byte sizes
//! first, and TPC-H q12 then built its hash table on the 1.5 M `orders` rows instead of
//! the filtered `lineitem` (31 K rows): the filtered side's estimate carried its three
//! filter-only date columns and the row id. DataFusion's own Parquet scan counts the
//! returned columns only. Here the read's estimate is scaled to the returned columns' share
//! of its width, each column's width being Lance's own
//! ([`lance_encoding::decoder::estimate_bytes_per_row`]).
//!
//! **Rows.** Lance estimates a filtered scan knowing no column's range: a range filter then
//! keeps every row, and one the analysis cannot take keeps DataFusion's default 20 %. Where
//! every column a pushed filter reads has a zone map, the scan's rows are estimated from
//! those ranges instead, by the interval analysis DataFusion's `FilterExec` runs over
//! Parquet statistics ([`filtered_rows`]).
//!
//! [`ScanStatisticsExec`] carries all three above the scan; it passes every batch through
//! unchanged. Plans show it as `ScanStatistics: zone_maps=[…], filter_selectivity=…,
//! bytes_without=[…]`.

use std::fmt;
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{ColumnStatistics, DFSchema, Result, ScalarValue, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::analysis::{AnalysisContext, analyze};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::intervals::utils::check_support;
use datafusion::physical_plan::execution_plan::CardinalityEffect;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use lance::Dataset;
use lance::index::DatasetIndexExt;

/// A column's `[min, max]` over every live row of a pinned version, both of the column's
/// own data type (a superset: deleted rows may lie inside).
pub type ColumnRange = (ScalarValue, ScalarValue);

/// The ranges of the columns of `schema` (a scan's output: dataset columns, maybe a
/// row address) that Lance can bound from zone maps, in `schema`'s order; `None` for a
/// column it cannot (no zone map covering every fragment, a NaN, a nested type, a
/// column that is not the dataset's). Reading an index that fails is logged and counts
/// as `None`: statistics only steer planning, the scan reads the data itself.
pub async fn of_columns(
    dataset: &Dataset,
    schema: &arrow::datatypes::Schema,
) -> Vec<Option<ColumnRange>> {
    // Only columns some index is keyed on can have a zone map; the index list is one
    // cached read, so a scan of a table without indexes asks nothing more.
    let indexed: Vec<i32> = match dataset.load_indices().await {
        Ok(indices) => indices.iter().filter_map(|i| i.keyed_field()).collect(),
        Err(e) => {
            tracing::debug!(error = %e, "index list unavailable");
            Vec::new()
        }
    };
    let mut ranges = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let bounded = dataset
            .schema()
            .field(field.name())
            .is_some_and(|f| indexed.contains(&f.id))
            && (field.data_type().is_primitive()
                || matches!(
                    field.data_type(),
                    arrow::datatypes::DataType::Utf8 | arrow::datatypes::DataType::LargeUtf8
                ));
        let range = if bounded {
            match dataset.statistics().column_value_range(field.name()).await {
                Ok(Some((min, max)))
                    if &min.data_type() == field.data_type()
                        && &max.data_type() == field.data_type()
                        && !min.is_null()
                        && !max.is_null() =>
                {
                    Some((min, max))
                }
                Ok(_) => None,
                Err(e) => {
                    tracing::debug!(column = %field.name(), error = %e, "zone map range unavailable");
                    None
                }
            }
        } else {
            None
        };
        ranges.push(range);
    }
    ranges
}

/// What a scan's pushed filter is estimated to keep ([`filtered_rows`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FilteredRows {
    /// Live rows of the pinned version, before the filter.
    pub rows: usize,
    /// The estimated share of them the filter keeps, in `[0, 1]`.
    pub selectivity: f64,
}

/// What `filter` (a filter pushed into a scan of `dataset`, over the columns of `table`,
/// the dataset's schema) keeps of the pinned version's live rows, estimated the way
/// DataFusion's `FilterExec` estimates a filter over Parquet statistics: interval analysis
/// ([`datafusion::physical_expr::analysis::analyze`]) of the filter over each column's
/// `[min, max]`, here from zone maps ([`of_columns`]). Lance's own estimate runs the same
/// analysis knowing no column's range, so a range filter keeps every row: a three-month
/// range of `o_orderdate` (TPC-H q4, 3.8 % of `orders`, a key and a string) looked larger than
/// the `lineitem` keys it joins, and the join built its hash table on 3.8 M `lineitem` rows
/// instead of 57 K orders.
///
/// `None`, and the scan keeps Lance's estimate, unless every column the filter reads is an
/// integer, date or timestamp column with a zone map covering every fragment, and the
/// analysis takes every expression in the filter (DataFusion's `check_support` in
/// `physical_expr::intervals::utils`, the test `FilterExec` applies before it). The analysis
/// measures how much of a column's range a filter keeps by counting values
/// (`Interval::cardinality`), which DataFusion defines for those types only; on a decimal
/// or string column it would count a narrowed range as keeping every row.
pub async fn filtered_rows(
    dataset: &Dataset,
    table: &arrow::datatypes::Schema,
    filter: &Expr,
    state: &dyn Session,
) -> Option<FilteredRows> {
    use arrow::datatypes::DataType;
    let columns = filter.column_refs();
    let mut fields: Vec<arrow::datatypes::FieldRef> = Vec::with_capacity(columns.len());
    for column in &columns {
        let field = table.field_with_name(&column.name).ok()?;
        if !(field.data_type().is_integer()
            || matches!(
                field.data_type(),
                DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, _)
            ))
        {
            return None;
        }
        if !fields.iter().any(|f| f.name() == field.name()) {
            fields.push(Arc::new(field.clone()));
        }
    }
    if fields.is_empty() {
        return None;
    }
    let schema = Arc::new(arrow::datatypes::Schema::new(fields));
    let mut column_statistics = Vec::with_capacity(schema.fields().len());
    for range in of_columns(dataset, &schema).await {
        let (min, max) = range?;
        column_statistics.push(ColumnStatistics {
            min_value: Precision::Inexact(min),
            max_value: Precision::Inexact(max),
            ..ColumnStatistics::new_unknown()
        });
    }
    // The filter's columns by name alone: the scan's filters may carry the table's
    // qualifier, the schema here has none.
    let unqualified = filter
        .clone()
        .transform(|e| {
            Ok(match e {
                Expr::Column(c) => Transformed::yes(Expr::Column(
                    datafusion::common::Column::new_unqualified(c.name),
                )),
                other => Transformed::no(other),
            })
        })
        .data()
        .ok()?;
    let df_schema = DFSchema::try_from(schema.as_ref().clone()).ok()?;
    let predicate = state.create_physical_expr(unqualified, &df_schema).ok()?;
    if !check_support(&predicate, &schema) {
        return None;
    }
    let context = AnalysisContext::try_from_statistics(&schema, &column_statistics).ok()?;
    let selectivity = match analyze(&predicate, context, &schema) {
        Ok(analysis) => analysis.selectivity?,
        Err(e) => {
            tracing::debug!(error = %e, "filter selectivity unavailable");
            return None;
        }
    };
    let rows = match dataset.count_rows(None).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::debug!(error = %e, "row count unavailable");
            return None;
        }
    };
    selectivity.is_finite().then_some(FilteredRows {
        rows,
        selectivity: selectivity.clamp(0.0, 1.0),
    })
}

/// `input` (a Lance scan's plan) with `ranges` (one per output column, [`of_columns`])
/// added to its statistics, its row count estimated from `filtered` when given (the scan's
/// filter, [`filtered_rows`]), and its byte size counting only the columns it returns
/// ([`ReturnedShare`]); `input` itself when there is nothing to add. Ranges of another
/// length than `input`'s columns are ignored.
pub fn with_statistics(
    input: Arc<dyn ExecutionPlan>,
    ranges: Vec<Option<ColumnRange>>,
    filtered: Option<FilteredRows>,
) -> Arc<dyn ExecutionPlan> {
    let ranges = if ranges.len() == input.schema().fields().len() {
        ranges
    } else {
        vec![None; input.schema().fields().len()]
    };
    let returned = ReturnedShare::of(&input);
    if ranges.iter().all(Option::is_none) && returned.is_none() && filtered.is_none() {
        return input;
    }
    Arc::new(ScanStatisticsExec {
        properties: input.properties().clone(),
        input,
        ranges: Arc::new(ranges),
        returned,
        filtered,
    })
}

/// A scan plan that reads more columns than it returns, and reports the bytes of all it
/// reads: a `ProjectionExec` of column references over the read (the way Lance's scanner
/// drops a filter's columns and the row id) that returns a variable-width column, so that
/// DataFusion passes the read's byte figure through unchanged
/// (`datafusion_common::Statistics::calculate_total_byte_size` recomputes it only when
/// every returned column has a fixed width).
#[derive(Debug)]
struct ReturnedShare {
    /// The read's columns the projection drops, in the read's order.
    dropped: Vec<String>,
    /// The returned columns' share of the read's width per row, in `(0, 1)`; widths are
    /// Lance's estimates per data type ([`lance_encoding::decoder::estimate_bytes_per_row`]).
    share: f64,
}

impl ReturnedShare {
    /// `None` unless `plan` is a projection of columns that drops some of its input's and
    /// returns a variable-width one.
    fn of(plan: &Arc<dyn ExecutionPlan>) -> Option<Self> {
        let projection = plan.downcast_ref::<ProjectionExec>()?;
        let returned = plan.schema();
        if !projection
            .expr()
            .iter()
            .all(|e| e.expr.downcast_ref::<Column>().is_some())
            || returned
                .fields()
                .iter()
                .all(|f| f.data_type().primitive_width().is_some())
        {
            return None;
        }
        let read = projection.input().schema();
        let dropped: Vec<String> = read
            .fields()
            .iter()
            .filter(|f| returned.field_with_name(f.name()).is_err())
            .map(|f| f.name().clone())
            .collect();
        let width = |fields: &arrow::datatypes::Fields| -> f64 {
            fields
                .iter()
                .map(|f| lance_encoding::decoder::estimate_bytes_per_row(f.data_type()))
                .sum()
        };
        let share = width(returned.fields()) / width(read.fields());
        (!dropped.is_empty() && share > 0.0 && share < 1.0).then_some(Self { dropped, share })
    }
}

/// Its input's batches, unchanged, with each column's range from zone maps in its
/// statistics (min/max [`Precision::Inexact`]) and, where the input reads columns it does
/// not return, a byte size of the returned ones. Shown in plans as `ScanStatistics`.
#[derive(Debug)]
pub struct ScanStatisticsExec {
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
    ranges: Arc<Vec<Option<ColumnRange>>>,
    returned: Option<ReturnedShare>,
    filtered: Option<FilteredRows>,
}

impl DisplayAs for ScanStatisticsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let schema = self.input.schema();
        let columns: Vec<&str> = schema
            .fields()
            .iter()
            .zip(self.ranges.iter())
            .filter(|(_, range)| range.is_some())
            .map(|(field, _)| field.name().as_str())
            .collect();
        let mut parts = Vec::with_capacity(3);
        if !columns.is_empty() {
            parts.push(format!("zone_maps=[{}]", columns.join(", ")));
        }
        if let Some(filtered) = &self.filtered {
            parts.push(format!("filter_selectivity={:.4}", filtered.selectivity));
        }
        if let Some(returned) = &self.returned {
            parts.push(format!("bytes_without=[{}]", returned.dropped.join(", ")));
        }
        write!(f, "ScanStatistics: {}", parts.join(", "))
    }
}

impl ExecutionPlan for ScanStatisticsExec {
    fn name(&self) -> &str {
        "ScanStatisticsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match (children.pop(), children.is_empty()) {
            (Some(input), true) if input.schema() == self.input.schema() => Ok(with_statistics(
                input,
                self.ranges.as_ref().clone(),
                self.filtered,
            )),
            (Some(input), true) => Ok(input),
            _ => Err(datafusion::error::DataFusionError::Internal(
                "ScanStatisticsExec has exactly one child".into(),
            )),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.input.execute(partition, context)
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let mut statistics = Arc::unwrap_or_clone(self.input.partition_statistics(partition)?);
        for (column, range) in statistics
            .column_statistics
            .iter_mut()
            .zip(self.ranges.iter())
        {
            if let Some((min, max)) = range {
                column.min_value = Precision::Inexact(min.clone());
                column.max_value = Precision::Inexact(max.clone());
            }
        }
        if let Some(filtered) = &self.filtered {
            // Lance's figure for a partition is its share of the whole.
            let share = match partition {
                Some(_) => self.properties.partitioning.partition_count().max(1) as f64,
                None => 1.0,
            };
            let rows = (filtered.rows as f64 * filtered.selectivity / share).ceil();
            // Lance's byte figure is its row figure times a width; keep the width.
            if let (Some(&before), Some(&bytes)) = (
                statistics.num_rows.get_value(),
                statistics.total_byte_size.get_value(),
            ) && before > 0
            {
                statistics.total_byte_size =
                    Precision::Inexact((bytes as f64 * rows / before as f64).ceil() as usize);
            }
            statistics.num_rows = Precision::Inexact(rows as usize);
        }
        if let (Some(returned), Some(bytes)) =
            (&self.returned, statistics.total_byte_size.get_value())
        {
            // The read's figure, passed through by the projection ([`ReturnedShare`]).
            statistics.total_byte_size =
                Precision::Inexact((*bytes as f64 * returned.share).ceil() as usize);
        }
        Ok(Arc::new(statistics))
    }

    fn supports_limit_pushdown(&self) -> bool {
        self.input.supports_limit_pushdown()
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        self.input
            .with_fetch(limit)
            // A limit bounds the rows whatever the filter keeps: Lance's estimate then.
            .map(|input| with_statistics(input, self.ranges.as_ref().clone(), None))
    }

    fn fetch(&self) -> Option<usize> {
        self.input.fetch()
    }

    fn cardinality_effect(&self) -> CardinalityEffect {
        CardinalityEffect::Equal
    }
}
