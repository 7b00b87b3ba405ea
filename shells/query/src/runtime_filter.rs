//! Filters that a join or a top-k learns while it runs, applied to the rows of a Lance scan
//! before they travel further up the plan.
//!
//! DataFusion's hash join builds its hash table first and then derives a filter on the probe
//! side's join keys from it: the keys' bounds and a membership test against the hash table
//! (DataFusion's dynamic filters, `datafusion.optimizer.enable_join_dynamic_filter_pushdown`;
//! a top-k `ORDER BY … LIMIT` likewise learns a threshold). Its own Parquet scan takes such
//! filters through the post-optimization filter pushdown
//! ([`FilterPushdownPhase::Post`]); Lance's read
//! ([`lance::io::exec::filtered_read::FilteredReadExec`]) does not, so a probe side read from
//! a Lake table sent every row it read through the repartition and the probe. TPC-H q3 at
//! SF 1 hash-partitioned 3.24 M `lineitem` rows (124 MB) to find 30 K matches.
//!
//! [`RuntimeFilterExec`] sits over every Lance scan of a Query replica. In the post phase it
//! takes the filters pushed to it and, while the query runs, drops each batch's rows they
//! reject (the rows a filter evaluates to `false` or `NULL` for, as `WHERE` does), gathering
//! the kept rows into batches of the session's batch size (arrow's
//! [`BatchCoalescer`](arrow::compute::BatchCoalescer)). Input batches of less than half that
//! size (a selective scan filter leaves a few rows of each batch Lance reads) are gathered to
//! that size before the filters see them, since on a small batch a filter costs per batch
//! more than per row. Until the join has built its hash table a dynamic filter is `true`
//! and larger batches pass through untouched. When no filter reaches
//! it, the node replaces itself with its input, so plans without one are unchanged, and so
//! does a scan known to return fewer rows than a filter's trial (below; an unfiltered scan
//! of a small table): there a filter would save little, and a join whose filter nobody
//! holds does not wait for all its build partitions before probing.
//!
//! A filter is not free: testing a key against a large hash table costs about what the
//! repartition and probe cost per row. Filters run one after another, each on the rows the
//! ones before it kept, and a filter that rejects less than a fifth of the rows it was tried
//! on (over its first 64 K rows) is no longer evaluated in that partition until it changes, as
//! when a join on `partsupp` passes on a filter on keys every `lineitem` row has (TPC-H q9).
//!
//! A runtime filter only ever removes rows that the operator which made it would discard
//! anyway (the join still joins, the top-k still sorts), so applying it changes no answer,
//! and dropping it is always safe. So a filter whose evaluation fails on a batch (its
//! expression can fail on rows that a `WHERE` applied above the scan removes) is no longer
//! evaluated in that partition, and the batch goes on whole. And
//! [`ExecutionPlan::reset_state`], which DataFusion calls before it runs a plan again (the
//! recursive term of `WITH RECURSIVE`, a scalar subquery), clears the filters along with
//! the join's own.
//!
//! Plans show the node as `RuntimeFilter: [DynamicFilter [ … ]]`; `EXPLAIN ANALYZE` counts
//! the rows it removed (`rows_removed`).

use std::fmt;
use std::sync::Arc;

use arrow::array::{Array, BooleanArray};
use arrow::compute::BatchCoalescer;
use arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_expr_common::physical_expr::{
    snapshot_generation, snapshot_physical_expr,
};
use datafusion::physical_plan::execution_plan::CardinalityEffect;
use datafusion::physical_plan::filter_pushdown::{
    ChildPushdownResult, FilterPushdownPhase, FilterPushdownPropagation, PushedDown,
};
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::StreamExt;

/// `input` (a Lance scan's plan) under a [`RuntimeFilterExec`] that holds no filter yet.
pub fn accepting(input: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
    Arc::new(RuntimeFilterExec::new(input, Vec::new()))
}

/// Its input's rows that every filter in `filters` keeps, each filter as it stands when a
/// batch arrives (a dynamic filter's current expression), in the input's order and
/// partitioning: a superset of them where a trial found a filter not worth evaluating (see
/// the [module docs](self)). Rows of a batch of at least half the session's batch size that
/// every filter keeps are not copied; smaller batches are gathered first. With no
/// filters (before the post-phase filter pushdown) it returns its input's batches as they
/// are. Shown in plans as `RuntimeFilter`; see the [module docs](self).
#[derive(Debug)]
pub struct RuntimeFilterExec {
    input: Arc<dyn ExecutionPlan>,
    /// Predicates over the input's columns, each evaluated to a Boolean per row.
    filters: Vec<Arc<dyn PhysicalExpr>>,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl RuntimeFilterExec {
    fn new(input: Arc<dyn ExecutionPlan>, filters: Vec<Arc<dyn PhysicalExpr>>) -> Self {
        Self {
            properties: input.properties().clone(),
            input,
            filters,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// The filters this node applies, in the order they were pushed.
    pub fn filters(&self) -> &[Arc<dyn PhysicalExpr>] {
        &self.filters
    }
}

impl DisplayAs for RuntimeFilterExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let filters: Vec<String> = self.filters.iter().map(|e| e.to_string()).collect();
        write!(f, "RuntimeFilter: [{}]", filters.join(", "))
    }
}

impl ExecutionPlan for RuntimeFilterExec {
    fn name(&self) -> &str {
        "RuntimeFilterExec"
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
            // The filters name the input's columns by position; over another schema they
            // are dropped, which only costs the rows they would have removed.
            (Some(input), true) if input.schema() == self.input.schema() => {
                Ok(Arc::new(Self::new(input, self.filters.clone())))
            }
            (Some(input), true) => Ok(accepting(input)),
            _ => Err(datafusion::error::DataFusionError::Internal(
                "RuntimeFilterExec has exactly one child".into(),
            )),
        }
    }

    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        // The join that made a dynamic filter forgets it on reset and would never update it
        // again, so a filter from the last run must not outlive it.
        Ok(accepting(Arc::clone(&self.input)))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, Arc::clone(&context))?;
        if self.filters.is_empty() {
            return Ok(input);
        }
        let schema = input.schema();
        let batch_size = context.session_config().batch_size();
        let state = Filtering {
            input,
            filters: self
                .filters
                .iter()
                .map(|filter| Applied {
                    filter: Arc::clone(filter),
                    snapshot: None,
                    seen: 0,
                    rejected: 0,
                    failed: false,
                })
                .collect(),
            gathering: BatchCoalescer::new(Arc::clone(&schema), batch_size),
            gather_below: batch_size / 2,
            coalescer: BatchCoalescer::new(Arc::clone(&schema), batch_size),
            baseline: BaselineMetrics::new(&self.metrics, partition),
            removed: MetricBuilder::new(&self.metrics).counter("rows_removed", partition),
            input_ended: false,
            done: false,
        };
        let stream = futures::stream::unfold(state, |mut state| async move {
            let next = state.next().await;
            next.map(|item| (item, state))
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        // The filters are unknown at planning time; the input's figures are the bound.
        self.input.partition_statistics(partition)
    }

    fn handle_child_pushdown_result(
        &self,
        phase: FilterPushdownPhase,
        child_pushdown_result: ChildPushdownResult,
        _config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn ExecutionPlan>>> {
        // The pre phase carries a query's own predicates, which Lake already pushed into the
        // Lance scan where it could; the post phase carries the runtime filters.
        if phase != FilterPushdownPhase::Post {
            return Ok(FilterPushdownPropagation::all_unsupported(
                child_pushdown_result,
            ));
        }
        // A scan known to return fewer rows than one trial (an unfiltered scan's count is
        // exact) saves too little to pay for a filter, and a join whose filter nobody holds
        // neither computes it nor waits for every partition's build side before probing
        // (DataFusion's `is_used`). A filtered scan's count is DataFusion's guess (a fifth
        // of the table for most predicates), too rough to decline on.
        // (The statistics are asked for only when a filter arrived: most scans get none.)
        let pushed = child_pushdown_result.parent_filters;
        let small = !pushed.is_empty()
            && matches!(
                self.input.partition_statistics(None)?.num_rows,
                Precision::Exact(rows) if rows < TRIAL_ROWS
            );
        let mut filters = self.filters.clone();
        if !small {
            filters.extend(pushed.iter().map(|p| Arc::clone(&p.filter)));
        }
        let taken = if small {
            PushedDown::No
        } else {
            PushedDown::Yes
        };
        let supported = vec![taken; pushed.len()];
        let updated: Arc<dyn ExecutionPlan> = if filters.is_empty() {
            Arc::clone(&self.input)
        } else {
            Arc::new(Self::new(Arc::clone(&self.input), filters))
        };
        Ok(
            FilterPushdownPropagation::with_parent_pushdown_result(supported)
                .with_updated_node(updated),
        )
    }

    fn supports_limit_pushdown(&self) -> bool {
        self.input.supports_limit_pushdown()
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        // A limit below a filter would cut rows before the filter sees them; only a node
        // that filters nothing yet can hand the limit to its input.
        if !self.filters.is_empty() {
            return None;
        }
        self.input.with_fetch(limit).map(accepting)
    }

    fn fetch(&self) -> Option<usize> {
        self.input.fetch()
    }

    fn cardinality_effect(&self) -> CardinalityEffect {
        if self.filters.is_empty() {
            CardinalityEffect::Equal
        } else {
            CardinalityEffect::LowerEqual
        }
    }
}

/// Rows a filter is tried on (after its operator has learnt something) before it may be
/// found not worth evaluating: eight batches of DataFusion's default size.
const TRIAL_ROWS: usize = 8 * 8192;

/// The least share of the rows reaching a filter that it must reject to stay in use, as a
/// fraction `1 / REJECT_AT_LEAST`. Testing a key against a hash table of the build side
/// costs about as much as the repartition and probe it saves per row (TPC-H q9 at SF 1: a
/// membership test on 6 M `lineitem` rows against the 800 K keys of `partsupp`, which
/// rejects none, took 0.6 s of CPU), so a filter that rejects fewer rows is dropped.
const REJECT_AT_LEAST: usize = 5;

/// One filter as a partition's stream applies it.
struct Applied {
    filter: Arc<dyn PhysicalExpr>,
    /// Its last snapshot and that snapshot's generation: a dynamic filter's expression is
    /// rebuilt for a snapshot (DataFusion remaps its columns, an `IN` list of thousands of
    /// keys included), so it is taken again only when the filter changed.
    snapshot: Option<(u64, Arc<dyn PhysicalExpr>)>,
    /// Rows it was evaluated on and rows it rejected since its last change.
    seen: usize,
    rejected: usize,
    /// Its evaluation failed on a batch: it is not evaluated again in this partition.
    failed: bool,
}

impl Applied {
    /// The filter as it stands, or `None` when it keeps every row (`true`, before its
    /// operator has learnt anything) or rejected too few of the rows it was tried on.
    fn current(&mut self) -> Result<Option<Arc<dyn PhysicalExpr>>> {
        if self.failed {
            return Ok(None);
        }
        let generation = snapshot_generation(&self.filter);
        let current = match &self.snapshot {
            Some((taken, current)) if *taken == generation => Arc::clone(current),
            _ => {
                let current = snapshot_physical_expr(Arc::clone(&self.filter))?;
                self.snapshot = Some((generation, Arc::clone(&current)));
                (self.seen, self.rejected) = (0, 0);
                current
            }
        };
        let useless = self.seen >= TRIAL_ROWS && self.rejected * REJECT_AT_LEAST < self.seen;
        Ok((!is_true(&current) && !useless).then_some(current))
    }
}

/// The state of one partition's filtering stream.
struct Filtering {
    input: SendableRecordBatchStream,
    /// The filters in the order they were pushed, each evaluated on the rows the ones before
    /// it kept.
    filters: Vec<Applied>,
    /// Input batches of fewer than [`Self::gather_below`] rows, gathered into batches of
    /// the session's batch size before the filters see them: on a small batch a filter's
    /// cost is mostly per batch, not per row, and a selective scan filter leaves a few rows
    /// of each batch it reads (TPC-H q14 at SF 1: 733 batches of about
    /// 100 rows, 23 µs each through a partitioned join's filter).
    gathering: BatchCoalescer,
    gather_below: usize,
    /// The kept rows, gathered into batches of the session's batch size.
    coalescer: BatchCoalescer,
    baseline: BaselineMetrics,
    removed: Count,
    /// The input has ended and its gathered rows were flushed to [`Self::gathering`]'s
    /// completed batches.
    input_ended: bool,
    /// Every gathered batch was filtered and the coalescer's last rows were flushed.
    done: bool,
}

impl Filtering {
    /// The next batch to return: a full batch of kept rows, a batch no filter touched, the
    /// last kept rows once the input ends, or the input's error.
    async fn next(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if let Some(batch) = self.coalescer.next_completed_batch() {
                return Some(Ok(self.emit(batch)));
            }
            if self.done {
                return None;
            }
            let batch = if let Some(gathered) = self.gathering.next_completed_batch() {
                gathered
            } else if self.input_ended {
                self.done = true;
                if let Err(e) = self.coalescer.finish_buffered_batch() {
                    return Some(Err(e.into()));
                }
                continue;
            } else {
                match self.input.next().await {
                    None => {
                        self.input_ended = true;
                        if let Err(e) = self.gathering.finish_buffered_batch() {
                            return Some(Err(e.into()));
                        }
                        continue;
                    }
                    Some(Err(e)) => return Some(Err(e)),
                    Some(Ok(batch))
                        if batch.num_rows() >= self.gather_below && self.gathering.is_empty() =>
                    {
                        batch
                    }
                    Some(Ok(batch)) => {
                        let _timer = self.baseline.elapsed_compute().timer();
                        if let Err(e) = self.gathering.push_batch(batch) {
                            return Some(Err(e.into()));
                        }
                        continue;
                    }
                }
            };
            match self.filter(batch) {
                Ok(Some(untouched)) => return Some(Ok(self.emit(untouched))),
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// Pushes the rows of `batch` the filters keep into the coalescer, or returns `batch`
    /// itself when no filter rejected a row of it and nothing is buffered before it.
    fn filter(&mut self, mut batch: RecordBatch) -> Result<Option<RecordBatch>> {
        let timer = self.baseline.elapsed_compute().timer();
        let arrived = batch.num_rows();
        for applied in &mut self.filters {
            if batch.num_rows() == 0 {
                break;
            }
            let Some(current) = applied.current()? else {
                continue;
            };
            // A filter's expression can fail where the query's own would not: the keys of
            // `JOIN … ON 1000 / (b.id % 10) = s.k` or `ORDER BY CAST(s AS INT) LIMIT 5`
            // evaluated on rows that a `WHERE` above this scan removes (`b.id % 10 <> 0`,
            // a filter Lance cannot evaluate and DataFusion applies after this node). The
            // filter only saves work, so it stops being evaluated and the rows go on.
            let Ok(mask) = current
                .evaluate(&batch)
                .and_then(|value| value.into_array(batch.num_rows()))
            else {
                applied.failed = true;
                continue;
            };
            let mask = mask
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or_else(|| {
                    datafusion::error::DataFusionError::Internal(format!(
                        "runtime filter {current} is not a predicate"
                    ))
                })?;
            // `true_count` counts the valid `true`s: the rows `WHERE` would keep.
            let kept = mask.true_count();
            applied.seen += batch.num_rows();
            applied.rejected += batch.num_rows() - kept;
            if kept < batch.num_rows() {
                batch = arrow::compute::filter_record_batch(&batch, mask)?;
            }
        }
        let result = if batch.num_rows() == arrived && self.coalescer.is_empty() {
            Some(batch)
        } else {
            self.removed.add(arrived - batch.num_rows());
            self.coalescer.push_batch(batch)?;
            None
        };
        timer.done();
        Ok(result)
    }

    fn emit(&self, batch: RecordBatch) -> RecordBatch {
        self.baseline.record_output(batch.num_rows());
        batch
    }
}

/// Whether `expr` is the literal `true` (a dynamic filter before its operator has learnt
/// anything).
fn is_true(expr: &Arc<dyn PhysicalExpr>) -> bool {
    expr.downcast_ref::<Literal>().is_some_and(|literal| {
        literal.value() == &datafusion::common::ScalarValue::Boolean(Some(true))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{
        BinaryExpr, Column, DynamicFilterPhysicalExpr, lit,
    };
    use datafusion::physical_plan::filter_pushdown::ChildFilterPushdownResult;
    use datafusion::prelude::SessionContext;

    /// Two batches of `a`: 0..10 with every seventh value null, then 10..20.
    fn input() -> Arc<dyn ExecutionPlan> {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]));
        let batch = |range: std::ops::Range<i64>| {
            RecordBatch::try_new(
                Arc::clone(&schema),
                vec![Arc::new(Int64Array::from_iter(
                    range.map(|v| (v % 7 != 3).then_some(v)),
                ))],
            )
            .expect("batch")
        };
        MemorySourceConfig::try_new_exec(&[vec![batch(0..10), batch(10..20)]], schema, None)
            .expect("memory")
    }

    fn above(limit: i64) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(
            Arc::new(Column::new("a", 0)),
            Operator::Gt,
            lit(limit),
        ))
    }

    async fn run(plan: Arc<dyn ExecutionPlan>) -> (Vec<RecordBatch>, Vec<Option<i64>>) {
        let batches = datafusion::physical_plan::collect(plan, SessionContext::new().task_ctx())
            .await
            .expect("run");
        let values = batches
            .iter()
            .flat_map(|b| {
                let a = b
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .expect("a");
                a.iter().collect::<Vec<_>>()
            })
            .collect();
        (batches, values)
    }

    fn removed(plan: &RuntimeFilterExec) -> usize {
        plan.metrics()
            .expect("metrics")
            .sum_by_name("rows_removed")
            .expect("rows_removed")
            .as_usize()
    }

    #[tokio::test]
    async fn a_filter_keeps_the_rows_it_accepts_in_order_and_drops_nulls() {
        let plan = Arc::new(RuntimeFilterExec::new(input(), vec![above(8)]));
        let (batches, values) = run(plan.clone()).await;
        // 9, 11, 12, 13, 14, 15, 16, 18, 19: 10 and 17 are null (v % 7 == 3).
        let expected: Vec<Option<i64>> = (9..20).filter(|v| v % 7 != 3).map(Some).collect();
        assert_eq!(values, expected);
        assert_eq!(batches.len(), 1, "kept rows are gathered into full batches");
        assert_eq!(removed(&plan), 20 - expected.len());
    }

    #[tokio::test]
    async fn every_filter_must_keep_a_row() {
        let below_15 = Arc::new(BinaryExpr::new(
            Arc::new(Column::new("a", 0)),
            Operator::Lt,
            lit(15_i64),
        ));
        let plan = Arc::new(RuntimeFilterExec::new(input(), vec![above(4), below_15]));
        let (_, values) = run(plan).await;
        let expected: Vec<Option<i64>> = (5..15).filter(|v| v % 7 != 3).map(Some).collect();
        assert_eq!(values, expected);
    }

    #[tokio::test]
    async fn a_dynamic_filter_applies_what_it_holds_when_the_batch_arrives() {
        let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new("a", 0));
        let dynamic = Arc::new(DynamicFilterPhysicalExpr::new(vec![column], lit(true)));
        let plan = Arc::new(RuntimeFilterExec::new(input(), vec![dynamic.clone()]));
        // Before its operator learnt anything: every row passes (the two small batches
        // gathered into one).
        let (batches, values) = run(plan.clone()).await;
        assert_eq!(values, run(input()).await.1);
        assert_eq!(batches.len(), 1);
        assert_eq!(removed(&plan), 0);
        dynamic.update(above(16)).expect("update");
        let (_, values) = run(plan).await;
        assert_eq!(values, vec![Some(18), Some(19)]);
    }

    #[tokio::test]
    async fn large_batches_no_filter_touches_pass_as_they_are() {
        let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new("a", 0));
        let dynamic = Arc::new(DynamicFilterPhysicalExpr::new(vec![column], lit(true)));
        let source = counting(3);
        let (sent, _) = run(Arc::clone(&source)).await;
        let plan = Arc::new(RuntimeFilterExec::new(source, vec![dynamic.clone()]));
        let (batches, _) = run(plan.clone()).await;
        // The same three batches of 8,192 rows, their buffers not copied.
        assert_eq!(batches.len(), 3);
        for (got, sent) in batches.iter().zip(&sent) {
            assert_eq!(got, sent);
            assert_eq!(
                got.column(0).to_data().buffers()[0].as_ptr(),
                sent.column(0).to_data().buffers()[0].as_ptr()
            );
        }
        // A filter that keeps every row of a large batch does not copy it either.
        dynamic.update(above(-1)).expect("update");
        let (batches, _) = run(plan).await;
        assert_eq!(batches.len(), 3);
        assert_eq!(
            batches[2].column(0).to_data().buffers()[0].as_ptr(),
            sent[2].column(0).to_data().buffers()[0].as_ptr()
        );
    }

    /// `a` counting up from 0 in batches of `sizes` rows each.
    fn batches_of(sizes: &[i64]) -> Arc<dyn ExecutionPlan> {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]));
        let mut start = 0;
        let batches: Vec<RecordBatch> = sizes
            .iter()
            .map(|&size| {
                let values = Int64Array::from_iter_values(start..start + size);
                start += size;
                RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(values)]).expect("batch")
            })
            .collect();
        MemorySourceConfig::try_new_exec(&[batches], schema, None).expect("memory")
    }

    #[tokio::test]
    async fn small_batches_are_gathered_before_the_filters_in_order() {
        // 3,000 batches of 7 rows (what a selective scan filter leaves), a large batch
        // among them, and a few rows at the end.
        let mut sizes = vec![7; 1500];
        sizes.push(8192);
        sizes.extend(vec![7; 1500]);
        sizes.push(3);
        let total: i64 = sizes.iter().sum();
        let plan = Arc::new(RuntimeFilterExec::new(
            batches_of(&sizes),
            vec![not_multiple_of(2)],
        ));
        let (batches, values) = run(plan.clone()).await;
        let expected: Vec<Option<i64>> = (0..total).filter(|v| v % 2 != 0).map(Some).collect();
        assert_eq!(values, expected, "every kept row, in the input's order");
        // 14,597 kept rows: one full batch and the rest, not 3,002 small ones.
        assert_eq!(expected.len(), 14_597);
        assert_eq!(
            batches
                .iter()
                .map(RecordBatch::num_rows)
                .collect::<Vec<_>>(),
            [8192, 6405]
        );
        assert_eq!(removed(&plan), (total as usize) - expected.len());
    }

    #[tokio::test]
    async fn a_filter_that_fails_on_a_batch_lets_its_rows_through() {
        // `100 / (a - 12000) > 0` divides by zero on the second batch's 12000: that batch
        // goes on whole, and the filter is not evaluated again; the first batch was
        // filtered. (Batches large enough to reach the filters one at a time.)
        let quotient = Arc::new(BinaryExpr::new(
            lit(100_i64),
            Operator::Divide,
            Arc::new(BinaryExpr::new(
                Arc::new(Column::new("a", 0)),
                Operator::Minus,
                lit(12000_i64),
            )),
        ));
        let failing = Arc::new(BinaryExpr::new(quotient, Operator::Gt, lit(0_i64)));
        let plan = Arc::new(RuntimeFilterExec::new(
            batches_of(&[8192, 8192]),
            vec![failing, above(9000)],
        ));
        let (_, values) = run(plan.clone()).await;
        // First batch: `100 / (a - 12000)` is negative for 0..8192, so the filter removed
        // all of it; the second, 8192..16384, passes the failed filter, and `a > 9000`
        // still applies to it.
        let expected: Vec<Option<i64>> = (9001..16384).map(Some).collect();
        assert_eq!(values, expected);
        assert_eq!(removed(&plan), 9001);
    }

    #[tokio::test]
    async fn a_reset_plan_forgets_its_filters() {
        let plan: Arc<dyn ExecutionPlan> =
            Arc::new(RuntimeFilterExec::new(input(), vec![above(8)]));
        let reset =
            datafusion::physical_plan::execution_plan::reset_plan_states(plan).expect("reset");
        let node = reset.downcast_ref::<RuntimeFilterExec>().expect("node");
        assert!(node.filters().is_empty());
        assert_eq!(run(reset).await.1.len(), 20);
    }

    /// `batches` batches of 8,192 values of `a`, counting up from 0.
    fn counting(batches: usize) -> Arc<dyn ExecutionPlan> {
        batches_of(&vec![8192; batches])
    }

    /// `a % modulus <> 0`: rejects one row in `modulus`.
    fn not_multiple_of(modulus: i64) -> Arc<dyn PhysicalExpr> {
        let rest = Arc::new(BinaryExpr::new(
            Arc::new(Column::new("a", 0)),
            Operator::Modulo,
            lit(modulus),
        ));
        Arc::new(BinaryExpr::new(rest, Operator::NotEq, lit(0_i64)))
    }

    #[tokio::test]
    async fn a_filter_that_rejects_few_rows_is_dropped_after_its_trial() {
        // One row in ten: tried on the first eight batches, then no longer evaluated.
        let plan = Arc::new(RuntimeFilterExec::new(
            counting(12),
            vec![not_multiple_of(10)],
        ));
        let (_, values) = run(plan.clone()).await;
        let trial = TRIAL_ROWS as i64;
        let expected: Vec<Option<i64>> = (0..12 * 8192)
            .filter(|v| *v >= trial || v % 10 != 0)
            .map(Some)
            .collect();
        assert_eq!(values, expected);
        assert_eq!(removed(&plan), (0..trial).filter(|v| v % 10 == 0).count());
    }

    #[tokio::test]
    async fn a_filter_that_rejects_many_rows_stays() {
        // Every other row, over all twelve batches, long after its trial.
        let plan = Arc::new(RuntimeFilterExec::new(
            counting(12),
            vec![not_multiple_of(2)],
        ));
        let (_, values) = run(plan.clone()).await;
        let expected: Vec<Option<i64>> = (0..12 * 8192).filter(|v| v % 2 != 0).map(Some).collect();
        assert_eq!(values, expected);
        assert_eq!(removed(&plan), 6 * 8192);
    }

    fn pushed(filters: &[Arc<dyn PhysicalExpr>]) -> ChildPushdownResult {
        ChildPushdownResult {
            parent_filters: filters
                .iter()
                .map(|f| ChildFilterPushdownResult {
                    filter: Arc::clone(f),
                    child_results: vec![PushedDown::No],
                })
                .collect(),
            self_filters: vec![vec![]],
        }
    }

    #[test]
    fn the_post_phase_takes_runtime_filters_and_removes_an_unused_node() {
        let config = ConfigOptions::default();
        let node = RuntimeFilterExec::new(counting(12), vec![]);
        let source = Arc::clone(&node.input);

        let result = node
            .handle_child_pushdown_result(FilterPushdownPhase::Post, pushed(&[]), &config)
            .expect("post");
        let updated = result.updated_node.expect("replaced");
        assert!(
            Arc::ptr_eq(&updated, &source),
            "nothing pushed: the scan itself"
        );

        let result = node
            .handle_child_pushdown_result(FilterPushdownPhase::Post, pushed(&[above(3)]), &config)
            .expect("post");
        assert!(matches!(result.filters[..], [PushedDown::Yes]));
        let updated = result.updated_node.expect("updated");
        let updated = updated.downcast_ref::<RuntimeFilterExec>().expect("node");
        assert_eq!(updated.filters().len(), 1);

        // A scan of fewer rows than a trial takes none, and is left alone.
        let small = RuntimeFilterExec::new(input(), vec![]);
        let result = small
            .handle_child_pushdown_result(FilterPushdownPhase::Post, pushed(&[above(3)]), &config)
            .expect("post");
        assert!(matches!(result.filters[..], [PushedDown::No]));
        let updated = result.updated_node.expect("replaced");
        assert!(Arc::ptr_eq(&updated, &small.input));

        // A query's own predicates (the pre phase) stay where they are.
        let result = node
            .handle_child_pushdown_result(FilterPushdownPhase::Pre, pushed(&[above(3)]), &config)
            .expect("pre");
        assert!(matches!(result.filters[..], [PushedDown::No]));
        assert!(result.updated_node.is_none());
    }
}
