//! A grouping a statement repeats is computed once.
//!
//! A statement often computes the same grouping twice: a CTE referenced twice (TPC-H q15's
//! `revenue0`, read by the outer query and by its `max(total_revenue)` subquery), a view
//! joined with itself, a subquery repeating the outer query's aggregation. DataFusion
//! inlines each reference and plans it again, so the grouping, and the scan under it, runs
//! once per reference. DuckDB materializes a CTE that is referenced more than once.
//!
//! Lake computes such a grouping once:
//! 1. [`ShareRepeatedGroupings`], the last logical optimizer rule, finds the `Aggregate`s
//!    that group one input by the same expressions more than once in the plan, subqueries
//!    included (the input compared as a logical plan, `LogicalPlan: Eq`, and by the table
//!    providers it scans), none of them with a volatile expression (`random()`: each
//!    reference draws its own). It replaces each with a [`Shared`] node over one
//!    `Aggregate` computing every aggregate any of them computes, under a projection
//!    to the reference's own columns where it reads fewer. One id per grouping.
//! 2. [`SharedPlanner`] plans a [`Shared`] node into a [`SharedExec`] over its input.
//! 3. [`LinkSharedGroupings`], the last physical optimizer rule, gives the [`SharedExec`]s
//!    of one id a common [`SharedResults`] when their inputs became the same physical plan
//!    (same display, schema and partitioning); it removes the wrappers otherwise, and in
//!    the recursive term of a `WITH RECURSIVE`, which runs again for each iteration. The
//!    first reference keeps the input as its child, the others read through it (in
//!    `EXPLAIN`, `SharedExec: id=…, reads the first reference`).
//! 4. At execution each partition of the input runs once. Whichever reference needs a
//!    batch nobody has read yet pulls it from the input and keeps it for the other
//!    references; they read the kept batches at their own pace. So no reference waits for
//!    another to be polled, and nothing deadlocks whichever order the plan polls them in.
//!
//! Kept batches are charged to the statement's memory pool (the memory of their slices)
//! and released once every reference has read them. A grouping's output is at most the
//! hash table that built it, so keeping it costs no more than the grouping did. When the
//! pool refuses a batch while only one reference has read any, the kept batches are
//! dropped and the other references compute the grouping themselves over a fresh copy of
//! its input (`reset_plan_states`), as they would without this module; once two have read
//! some, the pool's error is the statement's, as for any operator that holds rows.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchemaRef, DataFusionError, Result, Statistics};
use datafusion::execution::context::{QueryPlanner, SessionState};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{
    Aggregate, Expr, Extension, LogicalPlan, Projection, UserDefinedLogicalNode,
    UserDefinedLogicalNodeCore,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::execution_plan::reset_plan_states;
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::recursive_query::RecursiveQueryExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, displayable,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};
use futures::StreamExt;

/// The logical optimizer rule of the [module docs](self) (step 1). Runs last in each
/// optimizer pass, once filters and projections have been pushed into the groupings, so
/// that it compares them as they will be planned; a grouping already shared is left alone.
#[derive(Debug, Default)]
pub struct ShareRepeatedGroupings;

impl OptimizerRule for ShareRepeatedGroupings {
    fn name(&self) -> &str {
        "lake_share_repeated_groupings"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let mut families: HashMap<Family, Members> = HashMap::new();
        let mut next_id = 0;
        plan.apply_with_subqueries(|node| {
            if let Some(shared) = as_shared(node) {
                next_id = next_id.max(shared.id + 1);
                return Ok(TreeNodeRecursion::Jump);
            }
            if let LogicalPlan::Aggregate(aggregate) = node {
                let members = families.entry(Family::of(aggregate)?).or_default();
                members.count += 1;
                members.volatile |= volatile(node)?;
                for expr in &aggregate.aggr_expr {
                    if !members.aggregates.contains(expr) {
                        members.aggregates.push(expr.clone());
                    }
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        families.retain(|_, members| members.count > 1 && !members.volatile);
        if families.is_empty() {
            return Ok(Transformed::no(plan));
        }
        // Per family, its id (in the order the plan is walked, so that one statement always
        // gets the same) and the grouping its references read.
        let mut shared: HashMap<Family, Option<(usize, LogicalPlan)>> = HashMap::new();
        plan.transform_down_with_subqueries(|node| {
            if as_shared(&node).is_some() {
                return Ok(Transformed::new(node, false, TreeNodeRecursion::Jump));
            }
            let LogicalPlan::Aggregate(aggregate) = &node else {
                return Ok(Transformed::no(node));
            };
            let family = Family::of(aggregate)?;
            let Some(members) = families.get(&family) else {
                return Ok(Transformed::no(node));
            };
            let (input, group_expr) = (Arc::clone(&aggregate.input), aggregate.group_expr.clone());
            let entry = shared.entry(family).or_insert_with(|| {
                // Every aggregate any reference computes, over the one input and grouping.
                // DataFusion may refuse the union (two aggregates under one alias): the
                // references are then left as they are.
                Aggregate::try_new(input, group_expr, members.aggregates.clone())
                    .ok()
                    .map(|union| {
                        next_id += 1;
                        (next_id - 1, LogicalPlan::Aggregate(union))
                    })
            });
            let Some((id, union)) = entry else {
                return Ok(Transformed::no(node));
            };
            let reference = LogicalPlan::Extension(Extension {
                node: Arc::new(Shared {
                    id: *id,
                    input: union.clone(),
                }),
            });
            let schema = node.schema();
            if union.schema().iter().eq(schema.iter()) {
                return Ok(Transformed::new(reference, true, TreeNodeRecursion::Jump));
            }
            // This reference's columns of the grouping, under the names it gave them.
            let columns = schema.columns().into_iter().map(Expr::Column).collect();
            let projection =
                LogicalPlan::Projection(Projection::try_new(columns, Arc::new(reference))?);
            if !projection.schema().iter().eq(schema.iter()) {
                return Ok(Transformed::no(node));
            }
            Ok(Transformed::new(projection, true, TreeNodeRecursion::Jump))
        })
    }
}

/// Groupings that can share one computation: the same input grouped by the same
/// expressions, whatever aggregates each computes. The input is compared as a plan
/// (`LogicalPlan: Eq`, which compares a `TableScan` by table name, projection and
/// filters, not by its provider) and by the address of each scan's provider in walk order,
/// so that two scans of one name at different versions or snapshots are not taken for
/// the same.
#[derive(PartialEq, Eq, Hash)]
struct Family {
    input: Arc<LogicalPlan>,
    group_expr: Vec<Expr>,
    sources: Vec<usize>,
}

impl Family {
    fn of(aggregate: &Aggregate) -> Result<Self> {
        let mut sources = Vec::new();
        aggregate.input.apply_with_subqueries(|node| {
            if let LogicalPlan::TableScan(scan) = node {
                sources.push(Arc::as_ptr(&scan.source).cast::<()>() as usize);
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(Self {
            input: Arc::clone(&aggregate.input),
            group_expr: aggregate.group_expr.clone(),
            sources,
        })
    }
}

/// The groupings of one [`Family`] in a plan.
#[derive(Default)]
struct Members {
    count: usize,
    /// Whether one of them has a volatile expression.
    volatile: bool,
    /// Every aggregate they compute, each once, in the order first seen.
    aggregates: Vec<Expr>,
}

fn as_shared(plan: &LogicalPlan) -> Option<&Shared> {
    match plan {
        LogicalPlan::Extension(extension) => extension.node.as_any().downcast_ref::<Shared>(),
        _ => None,
    }
}

/// Whether any expression of `plan` or of its inputs and subqueries is volatile
/// (`Expr::is_volatile`: `random()`, `uuid()`, volatile UDFs).
fn volatile(plan: &LogicalPlan) -> Result<bool> {
    let mut found = false;
    plan.apply_with_subqueries(|node| {
        node.apply_expressions(|expr| {
            found = expr.is_volatile();
            Ok(if found {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        })
    })?;
    Ok(found)
}

/// One reference to a grouping the statement repeats: the logical node of
/// [`ShareRepeatedGroupings`]. Its output is its input's, unchanged; filters and
/// projections are not pushed into it (each reference's would make the inputs differ).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd)]
pub struct Shared {
    /// Equal for the references of one grouping; numbered from 0 within a plan.
    pub id: usize,
    /// The grouping (an `Aggregate`).
    pub input: LogicalPlan,
}

impl UserDefinedLogicalNodeCore for Shared {
    fn name(&self) -> &str {
        "Shared"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        self.input.schema()
    }

    fn expressions(&self) -> Vec<Expr> {
        Vec::new()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Shared: id={}", self.id)
    }

    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        match (inputs.pop(), inputs.is_empty()) {
            (Some(input), true) => Ok(Self { id: self.id, input }),
            _ => Err(DataFusionError::Internal(
                "Shared has exactly one input".into(),
            )),
        }
    }
}

/// Plans a [`Shared`] node into a [`SharedExec`] (step 2 of the [module docs](self)).
#[derive(Debug, Default)]
pub struct SharedPlanner;

#[async_trait]
impl ExtensionPlanner for SharedPlanner {
    async fn plan_extension(
        &self,
        _planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        _logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        _session_state: &SessionState,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(shared) = node.as_any().downcast_ref::<Shared>() else {
            return Ok(None);
        };
        let [input] = physical_inputs else {
            return Err(DataFusionError::Internal(
                "Shared has exactly one input".into(),
            ));
        };
        Ok(Some(Arc::new(SharedExec::new(
            shared.id,
            Arc::clone(input),
            None,
        ))))
    }
}

/// DataFusion's physical planner with [`SharedPlanner`]: the query planner of Lake's
/// sessions (`SessionStateBuilder::with_query_planner`).
#[derive(Debug, Default)]
pub struct LakeQueryPlanner;

#[async_trait]
impl QueryPlanner for LakeQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &SessionState,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(SharedPlanner)])
            .create_physical_plan(logical_plan, session_state)
            .await
    }
}

/// The physical optimizer rule of the [module docs](self) (step 3). Must run last: a rule
/// after it could change one reference's input and not the others'.
#[derive(Debug, Default)]
pub struct LinkSharedGroupings;

impl PhysicalOptimizerRule for LinkSharedGroupings {
    fn name(&self) -> &str {
        "lake_link_shared_groupings"
    }

    fn schema_check(&self) -> bool {
        true
    }

    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Per id, the references found; `None` once two references' inputs differ.
        let mut groups: HashMap<usize, Option<Group>> = HashMap::new();
        find_references(&plan, false, &mut groups);
        let mut linked: HashMap<usize, Arc<SharedResults>> = HashMap::new();
        plan.transform_up(|node| {
            let Some(shared) = node.downcast_ref::<SharedExec>() else {
                return Ok(Transformed::no(node));
            };
            if shared.results.is_some() {
                return Ok(Transformed::no(node));
            }
            match groups.get(&shared.id) {
                Some(Some(group)) if group.references > 1 => {
                    let first = !linked.contains_key(&shared.id);
                    let results = linked.entry(shared.id).or_insert_with(|| {
                        Arc::new(SharedResults::new(
                            Arc::clone(&group.input),
                            group.references,
                        ))
                    });
                    Ok(Transformed::yes(Arc::new(SharedExec::new(
                        shared.id,
                        Arc::clone(&group.input),
                        Some((Arc::clone(results), first)),
                    ))))
                }
                // The only reference left, or references planned differently.
                _ => Ok(Transformed::yes(Arc::clone(&shared.input))),
            }
        })
        .map(|t| t.data)
    }
}

/// Records the unlinked references under `node` in `groups`. References in the recursive
/// term of a `WITH RECURSIVE` (under a `RecursiveQueryExec`, which resets and executes it
/// again for each iteration) are never linked.
fn find_references(
    node: &Arc<dyn ExecutionPlan>,
    recursive: bool,
    groups: &mut HashMap<usize, Option<Group>>,
) {
    let recursive = recursive || node.downcast_ref::<RecursiveQueryExec>().is_some();
    if let Some(shared) = node.downcast_ref::<SharedExec>()
        && shared.results.is_none()
    {
        let fingerprint = fingerprint(&shared.input);
        let group = groups.entry(shared.id).or_insert_with(|| {
            Some(Group {
                input: Arc::clone(&shared.input),
                fingerprint: fingerprint.clone(),
                references: 0,
            })
        });
        match group {
            Some(found) if !recursive && found.fingerprint == fingerprint => found.references += 1,
            _ => *group = None,
        }
    }
    for child in node.children() {
        find_references(child, recursive, groups);
    }
}

/// The references of one id found by [`LinkSharedGroupings`].
struct Group {
    /// The first reference's input, which the linked references read.
    input: Arc<dyn ExecutionPlan>,
    fingerprint: String,
    references: usize,
}

/// What identifies a reference's physical input: its plan as `EXPLAIN VERBOSE` shows it
/// (operators, expressions, partitioning), its schema and its partition count.
fn fingerprint(input: &Arc<dyn ExecutionPlan>) -> String {
    format!(
        "{}\n{:?}\n{}",
        displayable(input.as_ref()).indent(true),
        input.schema(),
        input.properties().partitioning.partition_count()
    )
}

/// One reference to a repeated grouping (step 4 of the [module docs](self)). Unlinked
/// (`results` = `None`, as the planner makes it), it passes its input through.
#[derive(Debug)]
pub struct SharedExec {
    id: usize,
    input: Arc<dyn ExecutionPlan>,
    /// The grouping's shared results, and whether this is the first reference (the one
    /// showing the input as its child).
    results: Option<(Arc<SharedResults>, bool)>,
    metrics: ExecutionPlanMetricsSet,
}

impl SharedExec {
    fn new(
        id: usize,
        input: Arc<dyn ExecutionPlan>,
        results: Option<(Arc<SharedResults>, bool)>,
    ) -> Self {
        Self {
            id,
            input,
            results,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// Whether this reference shows the input as its child.
    fn shows_input(&self) -> bool {
        self.results.as_ref().is_none_or(|(_, first)| *first)
    }
}

impl DisplayAs for SharedExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.results {
            None => write!(f, "SharedExec: id={}", self.id),
            Some((results, true)) => {
                write!(
                    f,
                    "SharedExec: id={}, references={}",
                    self.id, results.references
                )
            }
            Some((_, false)) => write!(f, "SharedExec: id={}, reads the first reference", self.id),
        }
    }
}

impl ExecutionPlan for SharedExec {
    fn name(&self) -> &str {
        "SharedExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        if self.shows_input() {
            vec![&self.input]
        } else {
            Vec::new()
        }
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true; self.children().len()]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false; self.children().len()]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !self.shows_input() && children.is_empty() {
            return Ok(self);
        }
        match (children.pop(), children.is_empty()) {
            (Some(input), true) if Arc::ptr_eq(&input, &self.input) => Ok(self),
            // A new input is no longer the one the other references read: this reference
            // computes its own (they still read theirs through the shared results).
            (Some(input), true) => Ok(Arc::new(Self::new(self.id, input, None))),
            _ => Err(DataFusionError::Internal(
                "SharedExec has exactly one child".into(),
            )),
        }
    }

    /// For another execution (`reset_plan_states`, as `WITH RECURSIVE` does for each
    /// iteration): the reference computes the grouping alone, over a fresh copy of the
    /// input, since the other references may not be reset with it.
    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        let input = if self.shows_input() {
            // `reset_plan_states` has already reset the child.
            Arc::clone(&self.input)
        } else {
            reset_plan_states(Arc::clone(&self.input))?
        };
        Ok(Arc::new(Self::new(self.id, input, None)))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let Some((results, _)) = &self.results else {
            return self.input.execute(partition, context);
        };
        if partition >= results.partitions.len() {
            return Err(DataFusionError::Internal(format!(
                "SharedExec: partition {partition} of {}",
                results.partitions.len()
            )));
        }
        let reader = Reader {
            results: Arc::clone(results),
            partition,
            next: 0,
            context,
            alone: None,
            owner: false,
            finished: false,
            reused: MetricBuilder::new(&self.metrics).counter("reused_batches", partition),
            baseline: BaselineMetrics::new(&self.metrics, partition),
        };
        let stream = futures::stream::unfold(reader, |mut reader| async move {
            let item = reader.next().await;
            match &item {
                Some(Ok(batch)) => reader.baseline.record_output(batch.num_rows()),
                _ => reader.baseline.done(),
            }
            item.map(|item| (item, reader))
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema(),
            stream,
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        self.input.partition_statistics(partition)
    }
}

/// The results of one repeated grouping, shared by its references: per partition of the
/// input, the batches read so far by one reference and not yet by all.
pub struct SharedResults {
    input: Arc<dyn ExecutionPlan>,
    references: usize,
    partitions: Vec<Partition>,
}

#[derive(Default)]
struct Partition {
    state: Mutex<Kept>,
    /// The input's stream of this partition, pulled by one reference at a time.
    source: tokio::sync::Mutex<Option<SendableRecordBatchStream>>,
}

#[derive(Default)]
struct Kept {
    batches: Vec<RecordBatch>,
    /// The input's stream has ended.
    done: bool,
    /// The input's stream failed: every reference reports it.
    failed: Option<Arc<DataFusionError>>,
    /// References that have read at least one batch and not finished.
    reading: usize,
    /// References that have finished (or were dropped).
    finished: usize,
    /// The pool refused a batch while one reference was reading: the batches are no
    /// longer kept, that reference pulls the rest alone, the others compute their own.
    given_up: bool,
    reservation: Option<MemoryReservation>,
}

impl fmt::Debug for SharedResults {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("SharedResults")
            .field("references", &self.references)
            .field("partitions", &self.partitions.len())
            .finish_non_exhaustive()
    }
}

impl SharedResults {
    fn new(input: Arc<dyn ExecutionPlan>, references: usize) -> Self {
        let partitions = input.properties().partitioning.partition_count();
        Self {
            input,
            references,
            partitions: (0..partitions).map(|_| Partition::default()).collect(),
        }
    }

    fn kept(&self, partition: usize) -> MutexGuard<'_, Kept> {
        self.partitions[partition]
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

/// What a [`Reader`] does next.
enum Step {
    /// Return this: a kept batch, the end, or the failure.
    Ready(Option<Result<RecordBatch>>),
    /// Compute its own stream of the input: the kept batches were given up before this
    /// reference read any.
    Alone,
    /// Pull the next batch from the input.
    Pull,
}

/// The memory a kept batch holds: its columns' slices. A grouping emits slices of one
/// large batch, and `get_array_memory_size` would count the whole of it for each; the
/// slices together hold it once.
fn kept_size(batch: &RecordBatch) -> usize {
    batch
        .columns()
        .iter()
        .map(|column| {
            column
                .to_data()
                .get_slice_memory_size()
                .unwrap_or_else(|_| column.get_array_memory_size())
        })
        .sum()
}

/// One reference's stream of one partition.
struct Reader {
    results: Arc<SharedResults>,
    partition: usize,
    /// Index of the next kept batch to read.
    next: usize,
    context: Arc<TaskContext>,
    /// The reference's own stream of the input, once the kept batches were given up.
    alone: Option<SendableRecordBatchStream>,
    /// This reference gave the kept batches up and pulls the input alone.
    owner: bool,
    finished: bool,
    reused: Count,
    baseline: BaselineMetrics,
}

impl Reader {
    async fn next(&mut self) -> Option<Result<RecordBatch>> {
        if self.finished {
            return None;
        }
        let item = self.read().await;
        if !matches!(item, Some(Ok(_))) {
            self.finish();
        }
        item
    }

    async fn read(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if let Some(alone) = &mut self.alone {
                return alone.next().await;
            }
            match self.read_kept() {
                Step::Ready(item) => return item,
                Step::Alone => {
                    // A fresh copy of the input: an instance of an operator such as
                    // `RepartitionExec` runs each of its partitions once.
                    match reset_plan_states(Arc::clone(&self.results.input))
                        .and_then(|input| input.execute(self.partition, Arc::clone(&self.context)))
                    {
                        Ok(stream) => self.alone = Some(stream),
                        Err(e) => return Some(Err(e)),
                    }
                    continue;
                }
                Step::Pull => {}
            }
            let results = Arc::clone(&self.results);
            let mut source = results.partitions[self.partition].source.lock().await;
            // Another reference may have pulled, failed or given up while this one waited.
            if !matches!(self.step(&results.kept(self.partition)), Step::Pull) {
                continue;
            }
            if source.is_none() {
                match results
                    .input
                    .execute(self.partition, Arc::clone(&self.context))
                {
                    Ok(stream) => *source = Some(stream),
                    Err(e) => return Some(Err(self.fail(e))),
                }
            }
            let Some(stream) = source.as_mut() else {
                return Some(Err(DataFusionError::Internal(
                    "SharedExec: the input's stream is not open".into(),
                )));
            };
            let pulled = stream.next().await;
            let mut kept = results.kept(self.partition);
            let batch = match pulled {
                None => {
                    kept.done = true;
                    *source = None;
                    return None;
                }
                Some(Err(e)) => {
                    drop(kept);
                    return Some(Err(self.fail(e)));
                }
                Some(Ok(batch)) => batch,
            };
            if self.next == 0 {
                kept.reading += 1;
            }
            self.next += 1;
            // Kept unless given up, or unless every other reference has finished.
            if kept.given_up || results.references - kept.finished <= 1 {
                return Some(Ok(batch));
            }
            let reservation = kept.reservation.get_or_insert_with(|| {
                MemoryConsumer::new(format!("SharedExec[{}]", self.partition))
                    .register(self.context.memory_pool())
            });
            if let Err(e) = reservation.try_grow(kept_size(&batch)) {
                if kept.reading > 1 {
                    let e = Arc::new(e);
                    kept.failed = Some(Arc::clone(&e));
                    return Some(Err(DataFusionError::Shared(e)));
                }
                // Only this reference has read any: it goes on alone, and the others
                // compute their own.
                kept.given_up = true;
                kept.batches = Vec::new();
                if let Some(reservation) = &mut kept.reservation {
                    reservation.free();
                }
                self.owner = true;
                return Some(Ok(batch));
            }
            kept.batches.push(batch.clone());
            return Some(Ok(batch));
        }
    }

    /// What this reference does next (see [`Step`]); reading a kept batch counts it, under
    /// the same lock, so that no reference gives the batches up in between.
    fn read_kept(&mut self) -> Step {
        let results = Arc::clone(&self.results);
        let mut kept = results.kept(self.partition);
        let step = self.step(&kept);
        if let Step::Ready(Some(Ok(_))) = &step {
            if self.next == 0 {
                kept.reading += 1;
            }
            self.next += 1;
            self.reused.add(1);
        }
        step
    }

    fn step(&self, kept: &Kept) -> Step {
        if let Some(batch) = kept.batches.get(self.next) {
            return Step::Ready(Some(Ok(batch.clone())));
        }
        if let Some(e) = &kept.failed {
            return Step::Ready(Some(Err(DataFusionError::Shared(Arc::clone(e)))));
        }
        match (kept.given_up, self.owner, self.next) {
            // The input's end, which a reference computing its own has not reached.
            (false, _, _) | (true, true, _) if kept.done => Step::Ready(None),
            (false, _, _) | (true, true, _) => Step::Pull,
            (true, false, 0) => Step::Alone,
            // Cannot happen: the batches are given up only while one reference reads.
            (true, false, _) => Step::Ready(Some(Err(DataFusionError::Internal(
                "SharedExec: a reference's batches were given up while it read them".into(),
            )))),
        }
    }

    fn fail(&self, e: DataFusionError) -> DataFusionError {
        let e = Arc::new(e);
        self.results.kept(self.partition).failed = Some(Arc::clone(&e));
        DataFusionError::Shared(e)
    }

    /// Marks this reference finished; the last one releases the kept batches and resets
    /// the partition, so that executing the plan again computes it again.
    fn finish(&mut self) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        let partition = &self.results.partitions[self.partition];
        let mut kept = self.results.kept(self.partition);
        if self.next > 0 {
            kept.reading = kept.reading.saturating_sub(1);
        }
        kept.finished += 1;
        if kept.finished >= self.results.references {
            *kept = Kept::default();
            if let Ok(mut source) = partition.source.try_lock() {
                *source = None;
            }
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use datafusion::arrow::array::{ArrayRef, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryPool};
    use datafusion::execution::runtime_env::RuntimeEnvBuilder;
    use datafusion::physical_expr::EquivalenceProperties;
    use datafusion::physical_plan::Partitioning;
    use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
    use datafusion::physical_plan::union::UnionExec;

    use super::*;

    /// A leaf of `partitions` × `batches` batches of one `Int64` column (batch `b` of
    /// partition `p` holds `100 * p + b`), failing instead of the batch `fail_at` names;
    /// counts its executions. Like `RepartitionExec`, an instance runs each partition once
    /// (`reset_state` makes a fresh one). With `sliced`, the batches of a partition are
    /// slices of one batch.
    #[derive(Debug)]
    struct Source {
        batches: usize,
        fail_at: Option<usize>,
        sliced: bool,
        executions: Arc<AtomicUsize>,
        executed: Mutex<Vec<usize>>,
        properties: Arc<PlanProperties>,
    }

    impl Source {
        fn new(partitions: usize, batches: usize, fail_at: Option<usize>) -> Arc<Self> {
            Arc::new(Self {
                batches,
                fail_at,
                sliced: false,
                executions: Arc::default(),
                executed: Mutex::default(),
                properties: Arc::new(PlanProperties::new(
                    EquivalenceProperties::new(schema()),
                    Partitioning::UnknownPartitioning(partitions),
                    EmissionType::Incremental,
                    Boundedness::Bounded,
                )),
            })
        }

        fn sliced(partitions: usize, batches: usize) -> Arc<Self> {
            let mut source = Arc::into_inner(Self::new(partitions, batches, None)).expect("new");
            source.sliced = true;
            Arc::new(source)
        }
    }

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]))
    }

    fn batch(value: i64) -> RecordBatch {
        let column: ArrayRef = Arc::new(Int64Array::from(vec![value; 1_000]));
        RecordBatch::try_new(schema(), vec![column]).expect("batch")
    }

    fn values(batches: &[RecordBatch]) -> Vec<i64> {
        batches
            .iter()
            .map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .expect("ints")
                    .value(0)
            })
            .collect()
    }

    impl DisplayAs for Source {
        fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "Source")
        }
    }

    impl ExecutionPlan for Source {
        fn name(&self) -> &str {
            "Source"
        }
        fn properties(&self) -> &Arc<PlanProperties> {
            &self.properties
        }
        fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
            Vec::new()
        }
        fn with_new_children(
            self: Arc<Self>,
            _children: Vec<Arc<dyn ExecutionPlan>>,
        ) -> Result<Arc<dyn ExecutionPlan>> {
            Ok(self)
        }
        fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
            Ok(Arc::new(Self {
                batches: self.batches,
                fail_at: self.fail_at,
                sliced: self.sliced,
                executions: Arc::clone(&self.executions),
                executed: Mutex::default(),
                properties: Arc::clone(&self.properties),
            }))
        }
        fn execute(
            &self,
            partition: usize,
            _context: Arc<TaskContext>,
        ) -> Result<SendableRecordBatchStream> {
            let mut executed = self.executed.lock().expect("executed");
            if executed.contains(&partition) {
                return Err(DataFusionError::Internal(format!(
                    "partition {partition} executed twice"
                )));
            }
            executed.push(partition);
            self.executions.fetch_add(1, Ordering::SeqCst);
            let (fail_at, batches) = (self.fail_at, self.batches);
            let whole = self.sliced.then(|| {
                let column: ArrayRef = Arc::new(Int64Array::from_iter_values(
                    (0..batches).flat_map(|b| [100 * partition as i64 + b as i64; 1_000]),
                ));
                RecordBatch::try_new(schema(), vec![column]).expect("batch")
            });
            let items = (0..batches).map(move |b| match (fail_at, &whole) {
                (Some(at), _) if at == b => Err(DataFusionError::Execution("source failed".into())),
                (_, Some(whole)) => Ok(whole.slice(b * 1_000, 1_000)),
                _ => Ok(batch(100 * partition as i64 + b as i64)),
            });
            Ok(Box::pin(RecordBatchStreamAdapter::new(
                schema(),
                futures::stream::iter(items),
            )))
        }
    }

    /// Two references to `source` (id 0) under a union, linked as the physical optimizer
    /// links them.
    fn linked(source: &Arc<Source>) -> Arc<dyn ExecutionPlan> {
        let input: Arc<dyn ExecutionPlan> = Arc::clone(source) as _;
        let references: Vec<Arc<dyn ExecutionPlan>> = (0..2)
            .map(|_| Arc::new(SharedExec::new(0, Arc::clone(&input), None)) as _)
            .collect();
        let union = UnionExec::try_new(references).expect("union");
        LinkSharedGroupings
            .optimize(union, &ConfigOptions::default())
            .expect("link")
    }

    fn context(pool_bytes: usize) -> Arc<TaskContext> {
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(pool_bytes));
        let runtime = RuntimeEnvBuilder::new()
            .with_memory_pool(pool)
            .build_arc()
            .expect("runtime");
        Arc::new(TaskContext::default().with_runtime(runtime))
    }

    /// Partition `partition` of the union's two references, the first's and the second's
    /// (the union numbers the first reference's `partitions` first).
    fn readers(
        plan: &Arc<dyn ExecutionPlan>,
        partitions: usize,
        partition: usize,
        context: &Arc<TaskContext>,
    ) -> (SendableRecordBatchStream, SendableRecordBatchStream) {
        let open = |reference: usize| {
            plan.execute(reference * partitions + partition, Arc::clone(context))
                .expect("execute")
        };
        (open(0), open(1))
    }

    async fn take(stream: &mut SendableRecordBatchStream, n: usize) -> Vec<RecordBatch> {
        let mut batches = Vec::new();
        for _ in 0..n {
            batches.push(stream.next().await.expect("a batch").expect("no error"));
        }
        batches
    }

    async fn rest(stream: &mut SendableRecordBatchStream) -> Result<Vec<RecordBatch>> {
        let mut batches = Vec::new();
        while let Some(batch) = stream.next().await {
            batches.push(batch?);
        }
        Ok(batches)
    }

    #[test]
    fn the_first_reference_shows_the_input_and_the_second_reads_through_it() {
        let plan = linked(&Source::new(2, 3, None));
        let shown = displayable(plan.as_ref()).indent(false).to_string();
        assert_eq!(
            shown.matches("SharedExec: id=0, references=2").count(),
            1,
            "{shown}"
        );
        assert_eq!(
            shown
                .matches("SharedExec: id=0, reads the first reference")
                .count(),
            1
        );
        assert_eq!(shown.matches("Source").count(), 1, "{shown}");
    }

    #[test]
    fn references_whose_inputs_differ_are_not_linked() {
        let a: Arc<dyn ExecutionPlan> = Source::new(2, 3, None);
        let b: Arc<dyn ExecutionPlan> = Source::new(3, 3, None);
        let union = UnionExec::try_new(vec![
            Arc::new(SharedExec::new(0, a, None)) as _,
            Arc::new(SharedExec::new(0, b, None)) as _,
        ])
        .expect("union");
        let plan = LinkSharedGroupings
            .optimize(union, &ConfigOptions::default())
            .expect("link");
        let shown = displayable(plan.as_ref()).indent(false).to_string();
        assert!(!shown.contains("SharedExec"), "{shown}");
        assert_eq!(shown.matches("Source").count(), 2, "{shown}");
    }

    #[tokio::test]
    async fn interleaved_references_read_every_batch_of_one_execution() {
        let source = Source::new(2, 3, None);
        let plan = linked(&source);
        let context = context(usize::MAX);
        let (mut a, mut b) = readers(&plan, 2, 1, &context);
        let mut read_a = take(&mut a, 1).await;
        let read_b = rest(&mut b).await.expect("b");
        read_a.extend(rest(&mut a).await.expect("a"));
        assert_eq!(values(&read_a), [100, 101, 102]);
        assert_eq!(values(&read_b), [100, 101, 102]);
        assert_eq!(source.executions.load(Ordering::SeqCst), 1);
        // Both finished: the kept batches are released.
        assert_eq!(context.memory_pool().reserved(), 0);
    }

    #[tokio::test]
    async fn a_plan_reset_for_another_execution_computes_each_reference_alone() {
        let source = Source::new(1, 2, None);
        let plan = linked(&source);
        let context = context(usize::MAX);
        let (mut a, mut b) = readers(&plan, 1, 0, &context);
        assert_eq!(values(&rest(&mut a).await.expect("a")), [0, 1]);
        assert_eq!(values(&rest(&mut b).await.expect("b")), [0, 1]);
        assert_eq!(source.executions.load(Ordering::SeqCst), 1);
        let again = reset_plan_states(plan).expect("reset");
        let shown = displayable(again.as_ref()).indent(false).to_string();
        assert_eq!(shown.matches("SharedExec: id=0\n").count(), 2, "{shown}");
        let (mut a, mut b) = readers(&again, 1, 0, &context);
        assert_eq!(values(&rest(&mut a).await.expect("a")), [0, 1]);
        assert_eq!(values(&rest(&mut b).await.expect("b")), [0, 1]);
        assert_eq!(source.executions.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_refused_batch_before_the_second_reference_reads_lets_it_compute_its_own() {
        let source = Source::new(1, 3, None);
        let plan = linked(&source);
        // Less than one batch: nothing can be kept.
        let context = context(1_000);
        let (mut a, mut b) = readers(&plan, 1, 0, &context);
        assert_eq!(values(&rest(&mut a).await.expect("a")), [0, 1, 2]);
        assert_eq!(values(&rest(&mut b).await.expect("b")), [0, 1, 2]);
        assert_eq!(source.executions.load(Ordering::SeqCst), 2);
        assert_eq!(context.memory_pool().reserved(), 0);
    }

    #[tokio::test]
    async fn a_refused_batch_once_both_references_read_fails_the_statement() {
        let source = Source::new(1, 3, None);
        let plan = linked(&source);
        let one_batch = batch(0).get_array_memory_size();
        let context = context(one_batch + one_batch / 2);
        let (mut a, mut b) = readers(&plan, 1, 0, &context);
        assert_eq!(values(&take(&mut a, 1).await), [0]);
        assert_eq!(values(&take(&mut b, 1).await), [0]);
        let error = rest(&mut a).await.expect_err("the pool holds one batch");
        assert!(
            matches!(error.find_root(), DataFusionError::ResourcesExhausted(_)),
            "{error}"
        );
        let error = rest(&mut b).await.expect_err("b reads the same failure");
        assert!(
            matches!(error.find_root(), DataFusionError::ResourcesExhausted(_)),
            "{error}"
        );
        assert_eq!(source.executions.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn an_input_failure_reaches_every_reference() {
        let source = Source::new(1, 3, Some(1));
        let plan = linked(&source);
        let context = context(usize::MAX);
        let (mut a, mut b) = readers(&plan, 1, 0, &context);
        for stream in [&mut a, &mut b] {
            assert_eq!(values(&take(stream, 1).await), [0]);
            let error = rest(stream).await.expect_err("the source fails");
            assert!(error.to_string().contains("source failed"), "{error}");
        }
        assert_eq!(source.executions.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn slices_of_one_batch_are_charged_once() {
        // Ten slices of one 10,000-row batch; the pool holds a little more than it.
        let source = Source::sliced(1, 10);
        let plan = linked(&source);
        let whole = 10 * batch(0).get_array_memory_size();
        let context = context(whole + whole / 2);
        let (mut a, mut b) = readers(&plan, 1, 0, &context);
        let expected: Vec<i64> = (0..10).collect();
        let mut read_a = take(&mut a, 1).await;
        assert_eq!(values(&take(&mut b, 1).await), [0]);
        read_a.extend(rest(&mut a).await.expect("every slice kept"));
        assert_eq!(values(&read_a), expected);
        assert!(context.memory_pool().reserved() <= whole + 64 * 10);
        let mut read_b = vec![batch(0)];
        read_b.extend(rest(&mut b).await.expect("b"));
        assert_eq!(values(&read_b), expected);
        assert_eq!(source.executions.load(Ordering::SeqCst), 1);
        assert_eq!(context.memory_pool().reserved(), 0);
    }

    #[tokio::test]
    async fn a_reference_dropped_early_leaves_the_other_whole() {
        let source = Source::new(1, 3, None);
        let plan = linked(&source);
        let context = context(usize::MAX);
        let (mut a, mut b) = readers(&plan, 1, 0, &context);
        assert_eq!(values(&take(&mut a, 1).await), [0]);
        drop(a);
        assert_eq!(values(&rest(&mut b).await.expect("b")), [0, 1, 2]);
        assert_eq!(source.executions.load(Ordering::SeqCst), 1);
        drop(b);
        assert_eq!(context.memory_pool().reserved(), 0);
    }
}
