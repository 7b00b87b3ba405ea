//! Small filtered dimensions joined first (`lake_query::join_order`), over Lance tables in
//! TPC-H q21's shape: `supplier(sk, nk)`, `items(sk, ok)`, `orders(ok, status)` and
//! `nation(nk, name)`, written in that order in `FROM`. The answers are the rows' own,
//! computed here, with and without the rule; the plans join `nation` where the rule says,
//! and the largest join then handles only the rows of the chosen nation's suppliers.

mod common;

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use common::write;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::joins::HashJoinExec;
use datafusion::prelude::{SessionConfig, SessionContext};
use lake_query::join_order::{SMALL_DIMENSION_ROWS, optimizer_rules};
use lake_query::scan::LanceTable;

const SUPPLIERS: i64 = 2_000;
const NATIONS: i64 = 25;
const ORDERS: i64 = 7_000;
const ITEMS: i64 = 40_000;

fn supplier_of(item: i64) -> i64 {
    item % SUPPLIERS
}
fn nation_of(supplier: i64) -> i64 {
    supplier % NATIONS
}
fn order_of(item: i64) -> i64 {
    item % ORDERS
}
fn status_of(order: i64) -> &'static str {
    if order % 2 == 0 { "F" } else { "O" }
}

/// A table of the named columns.
fn table(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).expect("table")
}

fn ints(values: impl Iterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

fn texts(values: impl Iterator<Item = String>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

/// A session over the four tables, with Lake's optimizer rules or DataFusion's alone.
async fn session(dir: &std::path::Path, lake_rules: bool) -> SessionContext {
    let tables = [
        (
            "supplier",
            table(vec![
                ("sk", ints(0..SUPPLIERS)),
                ("nk", ints((0..SUPPLIERS).map(nation_of))),
            ]),
        ),
        (
            "items",
            table(vec![
                ("sk", ints((0..ITEMS).map(supplier_of))),
                ("ok", ints((0..ITEMS).map(order_of))),
            ]),
        ),
        (
            "orders",
            table(vec![
                ("ok", ints(0..ORDERS)),
                (
                    "status",
                    texts((0..ORDERS).map(|o| status_of(o).to_string())),
                ),
            ]),
        ),
        (
            "nation",
            table(vec![
                ("nk", ints(0..NATIONS)),
                ("name", texts((0..NATIONS).map(|n| format!("N{n}")))),
            ]),
        ),
    ];
    let config = SessionConfig::new().with_target_partitions(2);
    let mut state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features();
    if lake_rules {
        state = state.with_optimizer_rules(optimizer_rules());
    }
    let ctx = SessionContext::new_with_state(state.build());
    for (name, batch) in tables {
        let dataset = write(dir, name, batch).await;
        ctx.register_table(name, Arc::new(LanceTable::new(dataset)))
            .expect("register");
    }
    ctx
}

/// q21's joins: the nation's suppliers' items of finished orders.
const Q21_SHAPE: &str = "SELECT count(*) FROM supplier, items, orders, nation \
    WHERE supplier.sk = items.sk AND orders.ok = items.ok AND orders.status = 'F' \
    AND supplier.nk = nation.nk AND nation.name = 'N3'";

/// The items of nation 3's suppliers, and how many of them belong to finished orders.
fn q21_expected() -> (usize, i64) {
    let items: Vec<i64> = (0..ITEMS)
        .filter(|&i| nation_of(supplier_of(i)) == 3)
        .collect();
    let finished = items
        .iter()
        .filter(|&&i| status_of(order_of(i)) == "F")
        .count();
    (items.len(), finished as i64)
}

/// `sql`'s logical plan as the session's optimizer leaves it.
async fn optimized(ctx: &SessionContext, sql: &str) -> LogicalPlan {
    let plan = ctx.sql(sql).await.expect(sql);
    plan.into_optimized_plan().expect(sql)
}

/// The single count `batches` hold.
fn counted(batches: &[RecordBatch]) -> i64 {
    batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .expect("count")
        .value(0)
}

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    executed(ctx, sql).await.1
}

/// The tables under the join whose keys include `column` (as `table.column`), sorted.
fn tables_under_join_on(plan: &LogicalPlan, column: &str) -> Vec<String> {
    let mut found = None;
    plan.apply(|node| {
        if let LogicalPlan::Join(join) = node
            && join
                .on
                .iter()
                .any(|(l, r)| l.to_string() == column || r.to_string() == column)
        {
            let mut tables = Vec::new();
            node.apply(|below| {
                if let LogicalPlan::TableScan(scan) = below {
                    tables.push(scan.table_name.to_string());
                }
                Ok(TreeNodeRecursion::Continue)
            })
            .expect("walk");
            tables.sort();
            found = Some(tables);
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .expect("walk");
    found.unwrap_or_else(|| panic!("no join on {column} in\n{}", plan.display_indent()))
}

/// The most rows any hash join of the executed `plan` produced.
fn largest_join(plan: &Arc<dyn ExecutionPlan>) -> usize {
    let mut largest = 0;
    plan.apply(|node| {
        if node.downcast_ref::<HashJoinExec>().is_some() {
            let rows = node
                .metrics()
                .and_then(|m| m.output_rows())
                .expect("executed join has output_rows");
            largest = largest.max(rows);
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .expect("walk");
    largest
}

async fn executed(ctx: &SessionContext, sql: &str) -> (Arc<dyn ExecutionPlan>, i64) {
    let plan = ctx
        .sql(sql)
        .await
        .expect(sql)
        .create_physical_plan()
        .await
        .expect(sql);
    let batches = datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx())
        .await
        .expect(sql);
    (plan, counted(&batches))
}

#[tokio::test]
async fn a_filtered_nation_joins_its_suppliers_before_their_items() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (nation_items, finished) = q21_expected();
    assert!(finished > 0 && (nation_items as i64) < ITEMS / 20);

    let lake = session(&dir.path().join("lake"), true).await;
    let plan = optimized(&lake, Q21_SHAPE).await;
    assert_eq!(
        tables_under_join_on(&plan, "nation.nk"),
        ["nation", "supplier"],
        "{}",
        plan.display_indent()
    );
    let (physical, answer) = executed(&lake, Q21_SHAPE).await;
    assert_eq!(answer, finished);
    // Only the chosen nation's suppliers' items reach the join with orders.
    assert_eq!(largest_join(&physical), nation_items);

    let plain = session(&dir.path().join("plain"), false).await;
    let plan = optimized(&plain, Q21_SHAPE).await;
    assert_eq!(
        tables_under_join_on(&plan, "nation.nk"),
        ["items", "nation", "orders", "supplier"]
    );
    let (physical, answer) = executed(&plain, Q21_SHAPE).await;
    assert_eq!(answer, finished);
    assert_eq!(largest_join(&physical), ITEMS as usize);
}

#[tokio::test]
async fn a_join_filter_over_other_tables_stays_above_the_moved_nation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lake = session(dir.path(), true).await;
    // q7's shape: the nation's own filter goes down with it; the disjunction that also
    // reads orders stays above, and the answer is the rows'.
    let sql = "SELECT count(*) FROM supplier, items, orders, nation \
        WHERE supplier.sk = items.sk AND orders.ok = items.ok \
        AND supplier.nk = nation.nk AND nation.name IN ('N3', 'N4') \
        AND (nation.name = 'N3' OR orders.status = 'F')";
    let expected = (0..ITEMS)
        .filter(|&i| {
            let nation = nation_of(supplier_of(i));
            nation == 3 || (nation == 4 && status_of(order_of(i)) == "F")
        })
        .count() as i64;
    let plan = optimized(&lake, sql).await;
    assert_eq!(
        tables_under_join_on(&plan, "nation.nk"),
        ["nation", "supplier"],
        "{}",
        plan.display_indent()
    );
    assert_eq!(count(&lake, sql).await, expected);
}

#[tokio::test]
async fn large_or_unfiltered_tables_stay_where_the_query_put_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lake = session(dir.path(), true).await;
    // An unfiltered nation (q9, q10) filters nothing: it stays last.
    let unfiltered = "SELECT count(*) FROM supplier, items, orders, nation \
        WHERE supplier.sk = items.sk AND orders.ok = items.ok AND supplier.nk = nation.nk";
    let plan = optimized(&lake, unfiltered).await;
    assert_eq!(
        tables_under_join_on(&plan, "nation.nk"),
        ["items", "nation", "orders", "supplier"]
    );
    assert_eq!(count(&lake, unfiltered).await, ITEMS);
    // Filtered suppliers are too many rows to be a dimension: they stay joined after items
    // and orders, as written.
    assert!(SUPPLIERS as usize > SMALL_DIMENSION_ROWS);
    let large = "SELECT count(*) FROM items, orders, supplier \
        WHERE items.ok = orders.ok AND items.sk = supplier.sk AND supplier.nk = 3";
    let plan = optimized(&lake, large).await;
    assert_eq!(
        tables_under_join_on(&plan, "supplier.sk"),
        ["items", "orders", "supplier"],
        "{}",
        plan.display_indent()
    );
    let (nation_items, _) = q21_expected();
    assert_eq!(count(&lake, large).await, nation_items as i64);
}

#[tokio::test]
async fn a_projection_whose_names_would_clash_does_not_fail_the_plan() {
    use datafusion::functions_aggregate::expr_fn::count;
    use datafusion::logical_expr::JoinType;
    use datafusion::prelude::{col, lit};

    let dir = tempfile::tempdir().expect("tempdir");
    let lake = session(dir.path(), true).await;
    // Below the join with nation, a projection names a column `name` that a later one
    // drops: passing nation's columns through it would make `name` and `nation.name`
    // ambiguous, so the nation cannot move down in the optimizer's first pass. The query
    // still plans (the nation moves in the next pass, once that projection is pruned) and
    // answers.
    let suppliers_items = lake
        .table("supplier")
        .await
        .expect("supplier")
        .join(
            lake.table("items").await.expect("items"),
            JoinType::Inner,
            &["sk"],
            &["sk"],
            None,
        )
        .expect("join")
        .select(vec![
            col("supplier.sk"),
            col("supplier.nk"),
            col("items.ok").alias("name"),
        ])
        .expect("select")
        .select(vec![col("supplier.sk"), col("supplier.nk")])
        .expect("select");
    let nation = lake
        .table("nation")
        .await
        .expect("nation")
        .filter(col("nation.name").eq(lit("N3")))
        .expect("filter");
    let counted_rows = suppliers_items
        .join(nation, JoinType::Inner, &["nk"], &["nk"], None)
        .expect("join")
        .aggregate(vec![], vec![count(lit(1))])
        .expect("aggregate");
    let plan = counted_rows
        .clone()
        .into_optimized_plan()
        .expect("the rule leaves a plan it cannot rewrite as it was");
    assert_eq!(
        tables_under_join_on(&plan, "nation.nk"),
        ["nation", "supplier"],
        "{}",
        plan.display_indent()
    );
    let (nation_items, _) = q21_expected();
    assert_eq!(
        counted(&counted_rows.collect().await.expect("count")),
        nation_items as i64
    );
}
