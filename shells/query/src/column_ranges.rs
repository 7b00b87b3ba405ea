//! Column statistics for a Lance scan, from the table's zone maps.
//!
//! A Lance scan ([`lance::io::exec::filtered_read::FilteredReadExec`]) reports row counts
//! only. DataFusion's join planning then estimates every join on a key as if each row held
//! a distinct key, so a join of `orders` with its 1.5 M rows and `customer` with 150 K
//! looks like 150 K rows, and `JoinSelection` builds hash tables on the wrong side (TPC-H
//! q18: the semi join hashed 6 M rows where 57 suffice). Parquet readers avoid this
//! because every row group carries min/max statistics, which bound a key's distinct
//! count (`max - min + 1`).
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
//! [`ColumnRangesExec`] carries the ranges above the scan; it passes every batch through
//! unchanged.

use std::fmt;
use std::sync::Arc;

use datafusion::common::stats::Precision;
use datafusion::common::{Result, ScalarValue, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::execution_plan::CardinalityEffect;
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

/// `input` with `ranges` (one per output column, [`of_columns`]) added to its statistics;
/// `input` itself when no column has a range.
pub fn with_ranges(
    input: Arc<dyn ExecutionPlan>,
    ranges: Vec<Option<ColumnRange>>,
) -> Arc<dyn ExecutionPlan> {
    if ranges.iter().all(Option::is_none) || ranges.len() != input.schema().fields().len() {
        return input;
    }
    Arc::new(ColumnRangesExec {
        properties: input.properties().clone(),
        input,
        ranges: Arc::new(ranges),
    })
}

/// Its input's batches, unchanged, with each column's range from zone maps in its
/// statistics (min/max [`Precision::Inexact`]). Shown in plans as `ColumnRanges`.
#[derive(Debug)]
pub struct ColumnRangesExec {
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
    ranges: Arc<Vec<Option<ColumnRange>>>,
}

impl DisplayAs for ColumnRangesExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let schema = self.input.schema();
        let columns: Vec<&str> = schema
            .fields()
            .iter()
            .zip(self.ranges.iter())
            .filter(|(_, range)| range.is_some())
            .map(|(field, _)| field.name().as_str())
            .collect();
        write!(f, "ColumnRanges: zone_maps=[{}]", columns.join(", "))
    }
}

impl ExecutionPlan for ColumnRangesExec {
    fn name(&self) -> &str {
        "ColumnRangesExec"
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
            (Some(input), true) if input.schema() == self.input.schema() => Ok(Arc::new(Self {
                properties: input.properties().clone(),
                input,
                ranges: self.ranges.clone(),
            })),
            (Some(input), true) => Ok(input),
            _ => Err(datafusion::error::DataFusionError::Internal(
                "ColumnRangesExec has exactly one child".into(),
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
        Ok(Arc::new(statistics))
    }

    fn supports_limit_pushdown(&self) -> bool {
        self.input.supports_limit_pushdown()
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        self.input
            .with_fetch(limit)
            .map(|input| with_ranges(input, self.ranges.as_ref().clone()))
    }

    fn fetch(&self) -> Option<usize> {
        self.input.fetch()
    }

    fn cardinality_effect(&self) -> CardinalityEffect {
        CardinalityEffect::Equal
    }
}
