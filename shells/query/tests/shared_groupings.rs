//! A grouping a statement repeats is computed once (`lake_query::shared_groupings`): SQL
//! over a table that counts how often it is scanned, with Lake's rules and with
//! DataFusion's alone. Every expected answer is computed here from the rows.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::Result;
use datafusion::datasource::provider_as_source;
use datafusion::datasource::{MemTable, TableType};
use datafusion::execution::{SendableRecordBatchStream, SessionStateBuilder, TaskContext};
use datafusion::functions_aggregate::expr_fn::sum;
use datafusion::logical_expr::Expr;
use datafusion::logical_expr::{LogicalPlanBuilder, col};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, displayable,
};
use datafusion::prelude::{DataFrame, SessionConfig, SessionContext};
use lake_query::shared_groupings::{LakeQueryPlanner, LinkSharedGroupings, ShareRepeatedGroupings};

const ROWS: i64 = 10_000;
const SUPPLIERS: i64 = 97;
const PARTITIONS: usize = 2;

fn supplier_of(row: i64) -> i64 {
    (row * 31) % SUPPLIERS
}
fn amount_of(row: i64) -> i64 {
    (row * 7919) % 1_000
}
fn day_of(row: i64) -> i64 {
    row % 365
}

/// `sales(supplier, amount, day)` in [`PARTITIONS`] partitions, counting the executions of
/// its scans' partitions.
#[derive(Debug)]
struct Sales {
    table: MemTable,
    executions: Arc<AtomicUsize>,
}

impl Sales {
    fn new() -> Arc<Self> {
        Self::of(ROWS)
    }

    /// The first `rows` rows.
    fn of(rows: i64) -> Arc<Self> {
        let column = |f: fn(i64) -> i64, rows: std::ops::Range<i64>| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values(rows.map(f)))
        };
        let half = rows / 2;
        let partitions: Vec<Vec<RecordBatch>> = [0..half, half..rows]
            .into_iter()
            .map(|rows| {
                vec![
                    RecordBatch::try_from_iter([
                        ("supplier", column(supplier_of, rows.clone())),
                        ("amount", column(amount_of, rows.clone())),
                        ("day", column(day_of, rows)),
                    ])
                    .expect("batch"),
                ]
            })
            .collect();
        let table = MemTable::try_new(partitions[0][0].schema(), partitions).expect("table");
        Arc::new(Self {
            table,
            executions: Arc::default(),
        })
    }

    fn scans(&self) -> usize {
        self.executions.load(Ordering::SeqCst) / PARTITIONS
    }
}

#[async_trait]
impl TableProvider for Sales {
    fn schema(&self) -> SchemaRef {
        self.table.schema()
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
        let input = self.table.scan(state, projection, filters, limit).await?;
        Ok(Arc::new(Counted {
            input,
            executions: Arc::clone(&self.executions),
        }))
    }
}

#[derive(Debug)]
struct Counted {
    input: Arc<dyn ExecutionPlan>,
    executions: Arc<AtomicUsize>,
}

impl DisplayAs for Counted {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Counted")
    }
}

impl ExecutionPlan for Counted {
    fn name(&self) -> &str {
        "Counted"
    }
    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }
    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }
    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(Counted {
            input: children.remove(0),
            executions: Arc::clone(&self.executions),
        }))
    }
    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.executions.fetch_add(1, Ordering::SeqCst);
        self.input.execute(partition, context)
    }
}

/// A session over `sales`, with Lake's three pieces or DataFusion's planner alone.
fn session(sales: Arc<Sales>, lake: bool) -> SessionContext {
    let config = SessionConfig::new().with_target_partitions(PARTITIONS);
    let mut state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    if lake {
        state = state
            .with_optimizer_rule(Arc::new(ShareRepeatedGroupings))
            .with_query_planner(Arc::new(LakeQueryPlanner))
            .with_physical_optimizer_rule(Arc::new(LinkSharedGroupings));
    }
    let ctx = SessionContext::new_with_state(state.build());
    ctx.register_table("sales", sales).expect("register");
    ctx
}

/// The statement's rows (as `i64` columns), its physical plan, and how many times it
/// scanned `sales`.
async fn run(sql: &str, lake: bool) -> (Vec<Vec<i64>>, String, usize) {
    let sales = Sales::new();
    let ctx = session(Arc::clone(&sales), lake);
    let frame = ctx.sql(sql).await.expect("plan");
    let (rows, shown) = rows(&ctx, frame).await;
    (rows, shown, sales.scans())
}

/// The frame's rows (as `i64` columns) and its physical plan.
async fn rows(ctx: &SessionContext, frame: DataFrame) -> (Vec<Vec<i64>>, String) {
    let plan = frame.create_physical_plan().await.expect("physical plan");
    let shown = displayable(plan.as_ref()).indent(false).to_string();
    let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
        .await
        .expect("execute");
    let mut rows = Vec::new();
    for batch in &batches {
        for row in 0..batch.num_rows() {
            rows.push(
                batch
                    .columns()
                    .iter()
                    .map(|c| {
                        let c = c.as_any().downcast_ref::<Int64Array>().expect("ints");
                        if c.is_null(row) { -1 } else { c.value(row) }
                    })
                    .collect(),
            );
        }
    }
    (rows, shown)
}

/// Revenue per supplier over the days from `from`.
fn revenue(from: i64) -> BTreeMap<i64, i64> {
    let mut revenue = BTreeMap::new();
    for row in (0..ROWS).filter(|&r| day_of(r) >= from) {
        *revenue.entry(supplier_of(row)).or_default() += amount_of(row);
    }
    revenue
}

const Q15: &str = "WITH revenue AS (
        SELECT supplier, sum(amount) AS total FROM sales WHERE day >= 100 GROUP BY supplier)
    SELECT supplier, total FROM revenue
    WHERE total = (SELECT max(total) FROM revenue)
    ORDER BY supplier";

#[tokio::test]
async fn a_cte_read_by_the_query_and_its_subquery_is_grouped_once() {
    let revenue = revenue(100);
    let best = *revenue.values().max().expect("suppliers");
    let expected: Vec<Vec<i64>> = revenue
        .iter()
        .filter(|(_, total)| **total == best)
        .map(|(supplier, total)| vec![*supplier, *total])
        .collect();

    let (rows, plan, scans) = run(Q15, true).await;
    assert_eq!(rows, expected);
    assert_eq!(scans, 1, "{plan}");
    assert!(plan.contains("SharedExec: id=0, references=2"), "{plan}");
    assert!(
        plan.contains("SharedExec: id=0, reads the first reference"),
        "{plan}"
    );

    let (rows, plan, scans) = run(Q15, false).await;
    assert_eq!(rows, expected);
    assert_eq!(scans, 2, "{plan}");
}

#[tokio::test]
async fn a_grouping_joined_with_itself_is_grouped_once() {
    // Both sides of the join read the grouping; the hash join polls one side while the
    // other is read.
    let sql = "WITH revenue AS (SELECT supplier, sum(amount) AS total FROM sales GROUP BY supplier)
        SELECT a.supplier, b.supplier FROM revenue a JOIN revenue b
        ON a.total % 10 = b.total % 10 AND a.supplier < b.supplier
        ORDER BY a.supplier, b.supplier";
    let revenue = revenue(0);
    let mut expected = Vec::new();
    for (a, ta) in &revenue {
        for (b, tb) in &revenue {
            if ta % 10 == tb % 10 && a < b {
                expected.push(vec![*a, *b]);
            }
        }
    }
    assert!(!expected.is_empty());
    let (rows, plan, scans) = run(sql, true).await;
    assert_eq!(rows, expected);
    assert_eq!(scans, 1, "{plan}");
}

#[tokio::test]
async fn groupings_that_differ_are_each_computed() {
    let sql = "SELECT count(*) FROM
        (SELECT supplier, sum(amount) AS total FROM sales WHERE day >= 100 GROUP BY supplier) a
        JOIN (SELECT supplier, sum(amount) AS total FROM sales WHERE day >= 200 GROUP BY supplier) b
        ON a.supplier = b.supplier AND a.total = b.total";
    let (low, high) = (revenue(100), revenue(200));
    let expected = low.iter().filter(|(s, t)| high.get(s) == Some(t)).count() as i64;
    let (rows, plan, scans) = run(sql, true).await;
    assert_eq!(rows, vec![vec![expected]]);
    assert_eq!(scans, 2, "{plan}");
    assert!(!plan.contains("SharedExec"), "{plan}");
}

#[tokio::test]
async fn a_grouping_with_a_volatile_expression_is_computed_per_reference() {
    // Each reference draws its own random numbers: shared, every supplier's two totals
    // would be equal; drawn apart, two sums of 100 random products all but never are.
    let sql = "WITH noisy AS (
            SELECT supplier, sum(amount * random()) AS total FROM sales GROUP BY supplier)
        SELECT count(*) FROM noisy a JOIN noisy b ON a.supplier = b.supplier AND a.total = b.total";
    let (rows, plan, scans) = run(sql, true).await;
    assert!(rows[0][0] < SUPPLIERS, "{rows:?}");
    assert_eq!(scans, 2, "{plan}");
    assert!(!plan.contains("SharedExec"), "{plan}");
}

#[tokio::test]
async fn one_name_scanned_at_two_versions_is_grouped_per_version() {
    // Two scans of one table name with different providers, as two versions of a table
    // would be: equal as logical plans, but not the same rows.
    let (old, new) = (Sales::of(ROWS / 2), Sales::of(ROWS));
    let total = |sales: &Arc<Sales>| {
        LogicalPlanBuilder::scan("sales", provider_as_source(Arc::clone(sales) as _), None)
            .and_then(|scan| scan.aggregate(Vec::<Expr>::new(), vec![sum(col("amount"))]))
            .and_then(|grouped| grouped.build())
            .expect("grouping")
    };
    let plan = LogicalPlanBuilder::from(total(&old))
        .union(total(&new))
        .and_then(|union| union.build())
        .expect("union");
    let ctx = session(Sales::new(), true);
    let frame = ctx.execute_logical_plan(plan).await.expect("plan");
    let (mut rows, shown) = rows(&ctx, frame).await;
    rows.sort();
    let sum_of = |n: i64| (0..n).map(amount_of).sum::<i64>();
    assert_eq!(
        rows,
        vec![vec![sum_of(ROWS / 2)], vec![sum_of(ROWS)]],
        "{shown}"
    );
    assert_eq!((old.scans(), new.scans()), (1, 1), "{shown}");
    assert!(!shown.contains("SharedExec"), "{shown}");
}

#[tokio::test]
async fn references_reading_different_aggregates_of_one_grouping_share_it() {
    // The subquery reads only `total`, the query `total` and `n`: one grouping computes
    // both, and each reference takes its columns.
    let sql = "WITH revenue AS (
            SELECT supplier, sum(amount) AS total, count(*) AS n FROM sales GROUP BY supplier)
        SELECT supplier, n FROM revenue WHERE total > (SELECT avg(total) FROM revenue)
        ORDER BY supplier";
    let mut groups: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for row in 0..ROWS {
        let group = groups.entry(supplier_of(row)).or_default();
        group.0 += amount_of(row);
        group.1 += 1;
    }
    let totals: Vec<f64> = groups.values().map(|(total, _)| *total as f64).collect();
    let average = totals.iter().sum::<f64>() / totals.len() as f64;
    let expected: Vec<Vec<i64>> = groups
        .iter()
        .filter(|(_, (total, _))| *total as f64 > average)
        .map(|(supplier, (_, n))| vec![*supplier, *n])
        .collect();
    assert!(!expected.is_empty());
    let (rows, plan, scans) = run(sql, true).await;
    assert_eq!(rows, expected);
    assert_eq!(scans, 1, "{plan}");
    let (rows, plan, scans) = run(sql, false).await;
    assert_eq!(rows, expected);
    assert_eq!(scans, 2, "{plan}");
}

#[tokio::test]
async fn a_grouping_repeated_in_a_recursive_term_is_computed_per_iteration() {
    // `WITH RECURSIVE` resets and runs its recursive term again for each iteration; the
    // two groupings there are not linked, and every iteration reads them.
    let sql = "WITH RECURSIVE r AS (
            SELECT 0 AS n
            UNION ALL
            SELECT r.n + 1 FROM r
            JOIN (SELECT supplier % 5 AS k, count(*) AS c FROM sales GROUP BY supplier % 5) a
              ON a.k = r.n
            JOIN (SELECT supplier % 5 AS k, count(*) AS c FROM sales GROUP BY supplier % 5) b
              ON b.k = r.n
            WHERE r.n < 10)
        SELECT n FROM r ORDER BY n";
    let expected: Vec<Vec<i64>> = (0..=5).map(|n| vec![n]).collect();
    let (rows, plan, _) = run(sql, true).await;
    assert_eq!(rows, expected, "{plan}");
    assert!(!plan.contains("references="), "{plan}");
}
