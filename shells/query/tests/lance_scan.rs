//! `LanceTable` (the Query replica's scan of a Lance dataset) over a dataset of several
//! fragments: with one output partition per target partition, unordered fragments and early
//! materialization, every row is still read exactly once, filters and limits hold, and
//! the answers equal those computed directly from the written rows. A filtered scan's byte
//! estimate counts the columns it returns and its row estimate follows the zone maps of the
//! columns its filter reads, so joins build on the side that is smaller, and a join's probe
//! scan drops the rows whose key the join did not build.

mod common;

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Date32Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray,
    UInt32Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use common::write;
use datafusion::common::hash_utils::create_hashes;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::TableProvider;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::joins::HashJoinExec;
use datafusion::physical_plan::repartition::REPARTITION_RANDOM_STATE;
use datafusion::prelude::{SessionConfig, SessionContext};
use lake_query::runtime_filter::RuntimeFilterExec;
use lake_query::scan::LanceTable;
use lance::Dataset;
use lance::dataset::{WriteMode, WriteParams};
use lance::io::exec::filtered_read::{FilteredReadExec, FilteredReadThreadingMode};

/// Fragments written (one append each) and rows per fragment.
const FRAGMENTS: i64 = 7;
const ROWS: i64 = 3_001;

fn batch(fragment: i64) -> RecordBatch {
    rows(fragment * ROWS..(fragment + 1) * ROWS)
}

/// Rows `(id, tag)` for each id of `ids`, `tag` being `tag{id % 13}`.
fn rows(ids: std::ops::Range<i64>) -> RecordBatch {
    let ids: Vec<i64> = ids.collect();
    let tags: Vec<String> = ids.iter().map(|i| format!("tag{}", i % 13)).collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("tag", DataType::Utf8, false),
        ])),
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(tags)),
        ],
    )
    .expect("batch")
}

async fn dataset(dir: &std::path::Path) -> Arc<Dataset> {
    let uri = dir.join("t.lance").to_string_lossy().to_string();
    for fragment in 0..FRAGMENTS {
        let b = batch(fragment);
        let schema = b.schema();
        let params = WriteParams {
            mode: if fragment == 0 {
                WriteMode::Create
            } else {
                WriteMode::Append
            },
            ..WriteParams::default()
        };
        Dataset::write(
            RecordBatchIterator::new([Ok(b)], schema),
            uri.as_str(),
            Some(params),
        )
        .await
        .expect("write");
    }
    let ds = Dataset::open(&uri).await.expect("open");
    assert_eq!(ds.get_fragments().len(), FRAGMENTS as usize);
    Arc::new(ds)
}

/// The batches `sql` returns, panicking with the statement on an error.
async fn collect(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql).await.expect(sql).collect().await.expect(sql)
}

async fn scalar(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = collect(ctx, sql).await;
    column::<Int64Array>(&batches[0], 0).value(0)
}

/// Column `i` of `batch` as an `A`, panicking with the type it has instead.
fn column<A: Array + 'static>(batch: &RecordBatch, i: usize) -> &A {
    let array = batch.column(i);
    array.as_any().downcast_ref::<A>().unwrap_or_else(|| {
        panic!(
            "column {i}: not {} but {:?}",
            std::any::type_name::<A>(),
            array.data_type()
        )
    })
}

/// `plan` as `EXPLAIN` shows it, for assertion messages.
fn explained(plan: &Arc<dyn ExecutionPlan>) -> String {
    datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string()
}

#[tokio::test]
async fn every_row_is_read_once_at_any_partition_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ds = dataset(dir.path()).await;
    let n = FRAGMENTS * ROWS;
    let expected_sum: i64 = (0..n).sum();
    let expected_tag3: i64 = (0..n).filter(|i| i % 13 == 3).count() as i64;
    let expected_tag3_sum: i64 = (0..n).filter(|i| i % 13 == 3 && *i >= 5_000).sum();
    for partitions in [1, 2, 3, 8] {
        let ctx = SessionContext::new_with_config(
            SessionConfig::new().with_target_partitions(partitions),
        );
        ctx.register_table("t", Arc::new(LanceTable::new(ds.clone())))
            .expect("register");
        let at = format!("at {partitions} target partitions");
        assert_eq!(scalar(&ctx, "SELECT count(*) FROM t").await, n, "{at}");
        assert_eq!(
            scalar(&ctx, "SELECT count(DISTINCT id) FROM t").await,
            n,
            "{at}"
        );
        assert_eq!(
            scalar(&ctx, "SELECT sum(id) FROM t").await,
            expected_sum,
            "{at}"
        );
        assert_eq!(
            scalar(&ctx, "SELECT count(*) FROM t WHERE tag = 'tag3'").await,
            expected_tag3,
            "{at}"
        );
        assert_eq!(
            scalar(
                &ctx,
                "SELECT sum(id) FROM t WHERE tag = 'tag3' AND id >= 5000"
            )
            .await,
            expected_tag3_sum,
            "{at}"
        );
        // A limit keeps Lance's single partition and still returns exactly that many rows.
        let limited = collect(&ctx, "SELECT id FROM t WHERE id % 2 = 0 LIMIT 17").await;
        let rows: Vec<i64> = limited
            .iter()
            .flat_map(|b| {
                let ids = column::<Int64Array>(b, 0);
                (0..ids.len()).map(|i| ids.value(i)).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(rows.len(), 17, "{at}");
        assert!(rows.iter().all(|id| id % 2 == 0), "{at}: {rows:?}");
    }
}

#[tokio::test]
async fn the_scan_runs_on_as_many_partitions_as_the_session_targets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ds = dataset(dir.path()).await;
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(3));
    ctx.register_table("t", Arc::new(LanceTable::new(ds)))
        .expect("register");
    let plan = ctx
        .sql("SELECT id FROM t WHERE tag = 'tag1'")
        .await
        .expect("plan")
        .create_physical_plan()
        .await
        .expect("physical plan");
    let shown = explained(&plan);
    assert_eq!(
        plan.properties().output_partitioning().partition_count(),
        3,
        "{shown}"
    );
    // The partitions are Lance's own (sharing its read tasks), not a repartition on top of
    // one Lance stream.
    let mut reads = vec![];
    plan.apply(|node| {
        if let Some(read) = node.downcast_ref::<FilteredReadExec>() {
            reads.push(read.options().threading_mode);
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .expect("walk");
    assert_eq!(
        reads,
        vec![FilteredReadThreadingMode::MultiplePartitions(3)],
        "{shown}"
    );
}

#[tokio::test]
async fn deleted_rows_stay_deleted_and_an_empty_projection_counts_every_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut ds = (*dataset(dir.path()).await).clone();
    ds.delete("id % 5 = 0").await.expect("delete");
    let ds = Arc::new(ds);
    let kept: Vec<i64> = (0..FRAGMENTS * ROWS).filter(|i| i % 5 != 0).collect();
    for partitions in [1, 2, 4] {
        let ctx = SessionContext::new_with_config(
            SessionConfig::new().with_target_partitions(partitions),
        );
        let table = Arc::new(LanceTable::new(ds.clone()));
        ctx.register_table("t", table.clone()).expect("register");
        let at = format!("at {partitions} target partitions");
        assert_eq!(
            scalar(&ctx, "SELECT sum(id) FROM t").await,
            kept.iter().sum::<i64>(),
            "{at}"
        );
        assert_eq!(
            scalar(&ctx, "SELECT count(*) FROM t WHERE tag <> 'none'").await,
            kept.len() as i64,
            "{at}"
        );
        // No columns at all (what count(*) asks of a scan when statistics cannot answer).
        let state = ctx.state();
        let plan = table
            .scan(&state, Some(&vec![]), &[], None)
            .await
            .expect("empty projection");
        let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .expect("empty projection");
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, kept.len(), "{at}");
    }
}

/// One dataset at `dir/name.lance` holding `batch`.
/// TPC-H q12's shape at 1/1000 of scale factor 1: `orders(ok, prio)` with 1,500 rows and
/// `items(ok, mode, ship, commit, receipt)` with 6,000, joined on `ok` with a filter on
/// `items` that keeps few rows and reads three date columns the query does not return.
async fn q12_tables(dir: &std::path::Path) -> SessionContext {
    let orders = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("ok", DataType::Int64, false),
            Field::new("prio", DataType::Utf8, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(0..1_500)),
            Arc::new(StringArray::from_iter_values(
                (0..1_500).map(|i| format!("{}-PRIORITY", i % 5)),
            )),
        ],
    )
    .expect("orders");
    let n = 6_000;
    let items = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("ok", DataType::Int64, false),
            Field::new("mode", DataType::Utf8, false),
            Field::new("ship", DataType::Date32, false),
            Field::new("commit", DataType::Date32, false),
            Field::new("receipt", DataType::Date32, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i % 1_500))),
            Arc::new(StringArray::from_iter_values((0..n).map(|i| {
                ["MAIL", "SHIP", "AIR", "RAIL", "TRUCK"][i as usize % 5]
            }))),
            Arc::new(Date32Array::from_iter_values(
                (0..n).map(|i| (i % 700) as i32),
            )),
            Arc::new(Date32Array::from_iter_values(
                (0..n).map(|i| (i % 11) as i32 * 60),
            )),
            Arc::new(Date32Array::from_iter_values(
                (0..n).map(|i| (i % 730) as i32),
            )),
        ],
    )
    .expect("items");
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    for (name, batch) in [("orders", orders), ("items", items)] {
        let ds = write(dir, name, batch).await;
        ctx.register_table(name, Arc::new(LanceTable::new(ds)))
            .expect("register");
    }
    ctx
}

const Q12_FILTER: &str = "(mode = 'MAIL' OR mode = 'SHIP') AND commit < receipt \
    AND ship < commit AND receipt >= 365 AND receipt < 730";

async fn physical(ctx: &SessionContext, sql: &str) -> Arc<dyn ExecutionPlan> {
    ctx.sql(sql)
        .await
        .expect(sql)
        .create_physical_plan()
        .await
        .expect(sql)
}

#[tokio::test]
async fn a_filtered_scan_counts_the_bytes_of_the_columns_it_returns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = q12_tables(dir.path()).await;
    // Lance reads the filter's three dates and the row id beside `ok` and `mode`, then drops
    // them; per row the estimate must be that of `ok` and `mode`, as for an unfiltered scan.
    let per_row = |plan: &Arc<dyn ExecutionPlan>| {
        let s = plan.partition_statistics(None).expect("statistics");
        let rows = *s.num_rows.get_value().expect("rows");
        let bytes = *s.total_byte_size.get_value().expect("bytes");
        bytes as f64 / rows as f64
    };
    let filtered = physical(
        &ctx,
        &format!("SELECT ok, mode FROM items WHERE {Q12_FILTER}"),
    )
    .await;
    let whole = physical(&ctx, "SELECT ok, mode FROM items").await;
    let shown = explained(&filtered);
    assert!(
        shown.contains("bytes_without=[ship, commit, receipt, _rowid]"),
        "{shown}"
    );
    let ratio = per_row(&filtered) / per_row(&whole);
    assert!(
        (0.9..=1.1).contains(&ratio),
        "filtered {} vs unfiltered {} bytes per row\n{shown}",
        per_row(&filtered),
        per_row(&whole)
    );
}

#[tokio::test]
async fn the_scan_evaluates_cheap_conjuncts_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = q12_tables(dir.path()).await;
    let plan = physical(&ctx, &format!("SELECT ok FROM items WHERE {Q12_FILTER}")).await;
    let shown = explained(&plan);
    // Date comparisons with a literal, then between columns, then the strings; Lance keeps
    // the order it is given.
    assert!(
        shown.contains(
            "full_filter=receipt >= Date32(\"1971-01-01\") AND receipt < Date32(\"1972-01-01\") \
             AND receipt > commit AND ship < commit \
             AND (mode = Utf8(\"MAIL\") OR mode = Utf8(\"SHIP\"))"
        ),
        "{shown}"
    );
    assert_eq!(
        scalar(
            &ctx,
            &format!("SELECT count(*) FROM items WHERE {Q12_FILTER}")
        )
        .await,
        (0..6_000_i64)
            .filter(|i| i % 5 < 2)
            .filter(|i| {
                let (ship, commit, receipt) = (i % 700, (i % 11) * 60, i % 730);
                commit < receipt && ship < commit && (365..730).contains(&receipt)
            })
            .count() as i64
    );
}

/// The columns of each hash join's build side (its left input) in `plan`, in plan order.
fn build_sides(plan: &Arc<dyn ExecutionPlan>) -> Vec<Vec<String>> {
    let mut builds = vec![];
    plan.apply(|node| {
        if let Some(join) = node.downcast_ref::<HashJoinExec>() {
            builds.push(
                join.left()
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect(),
            );
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .expect("walk");
    builds
}

#[tokio::test]
async fn a_join_builds_on_the_filtered_side_when_it_is_smaller() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = q12_tables(dir.path()).await;
    let sql = format!(
        "SELECT mode, count(*), sum(CASE WHEN prio = '1-PRIORITY' THEN 1 ELSE 0 END) \
         FROM orders, items WHERE orders.ok = items.ok AND {Q12_FILTER} \
         GROUP BY mode ORDER BY mode"
    );
    let plan = physical(&ctx, &sql).await;
    let shown = explained(&plan);
    // Estimated at DataFusion's default 20 % of 6,000 rows, the filtered `items` (1,200 rows
    // of `ok`, `mode`) is smaller than the 1,500 `orders` (`ok`, `prio`): the hash table is
    // built on it, the join's left input.
    assert_eq!(
        build_sides(&plan),
        vec![vec!["ok".to_string(), "mode".to_string()]],
        "{shown}"
    );
    // And the answer is the rows': items of MAIL or SHIP whose dates pass, every `ok` an
    // order, whose priority is `ok % 5`.
    let expected: Vec<(String, i64, i64)> = ["MAIL", "SHIP"]
        .iter()
        .enumerate()
        .map(|(m, name)| {
            let kept: Vec<i64> = (0..6_000_i64)
                .filter(|i| *i as usize % 5 == m)
                .filter(|i| {
                    let (ship, commit, receipt) = (i % 700, (i % 11) * 60, i % 730);
                    commit < receipt && ship < commit && (365..730).contains(&receipt)
                })
                .collect();
            let urgent = kept.iter().filter(|i| (*i % 1_500) % 5 == 1).count() as i64;
            (name.to_string(), kept.len() as i64, urgent)
        })
        .filter(|(_, count, _)| *count > 0)
        .collect();
    assert!(!expected.is_empty(), "the filter keeps some rows");
    let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
        .await
        .expect(&sql);
    let mut got = vec![];
    for b in &batches {
        let (modes, counts, urgent) = (
            column::<StringArray>(b, 0),
            column::<Int64Array>(b, 1),
            column::<Int64Array>(b, 2),
        );
        for i in 0..b.num_rows() {
            got.push((modes.value(i).to_string(), counts.value(i), urgent.value(i)));
        }
    }
    assert_eq!(got, expected, "{shown}");
}

/// The rows `RuntimeFilterExec` nodes of `plan` removed, summed over the plan.
fn runtime_filtered(plan: &Arc<dyn ExecutionPlan>) -> (usize, usize) {
    let (mut nodes, mut removed) = (0, 0);
    plan.apply(|node| {
        if let Some(filter) = node.downcast_ref::<RuntimeFilterExec>() {
            nodes += 1;
            removed += filter
                .metrics()
                .and_then(|m| m.sum_by_name("rows_removed"))
                .map_or(0, |m| m.as_usize());
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .expect("walk");
    (nodes, removed)
}

#[tokio::test]
async fn a_join_filters_its_probe_scan_by_the_keys_it_built() {
    let dir = tempfile::tempdir().expect("tempdir");
    // More rows than a runtime filter's trial (a smaller scan takes no filter).
    let n = 100_000_i64;
    let ds = write(dir.path(), "t", rows(0..n)).await;
    // 40 keys spread over the table's ids.
    let keys: Vec<i64> = (0..40_i64).map(|k| k * 2_557 + 11).collect();
    let small = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from(keys.clone()))],
    )
    .expect("keys");
    let ks = write(dir.path(), "keys", small).await;
    for partitions in [1, 2] {
        let ctx = SessionContext::new_with_config(
            SessionConfig::new().with_target_partitions(partitions),
        );
        ctx.register_table("t", Arc::new(LanceTable::new(ds.clone())))
            .expect("register");
        ctx.register_table("keys", Arc::new(LanceTable::new(ks.clone())))
            .expect("register");
        let sql = "SELECT count(*), sum(t.id) FROM keys JOIN t ON keys.k = t.id \
                   WHERE t.tag <> 'tag5'";
        let matched: Vec<i64> = keys
            .iter()
            .copied()
            .filter(|k| *k < n && k % 13 != 5)
            .collect();
        // The probe side's scan took the join's filter and dropped the rows of `t` (those
        // its own filter kept) whose id is not a key before they reached the join.
        let probed = (0..n).filter(|i| i % 13 != 5).count();
        check_join(&ctx, sql, &matched, probed - matched.len()).await;
    }
}

/// Columns of 64- and 128-bit values with few distinct values, which Lance stores as a
/// dictionary and its indices (`should_dictionary_encode`: more than 100 values, few
/// distinct), read back value for value: the vendored `lance-encoding` decodes such pages
/// by a typed gather (vendor/README.md). Integers, floats (both zeros, NaN, infinities),
/// `DECIMAL(15, 2)` as TPC-H's `l_discount`, `DECIMAL(38, 10)` with values beyond 64 bits,
/// strings as TPC-H's `l_shipmode` (the empty string among them), and nullable columns.
#[tokio::test]
async fn dictionary_encoded_fixed_width_columns_read_back_exactly() {
    use arrow::array::{Decimal128Array, Float64Array};
    const N: i64 = 20_000;
    let ids: Vec<i64> = (0..N).collect();
    let ints: Vec<i64> = ids.iter().map(|i| (i % 7) * 1_000_000_007 - 3).collect();
    let float_values = [0.0, -0.0, 1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
    let floats: Vec<f64> = ids.iter().map(|i| float_values[(i % 6) as usize]).collect();
    let money: Vec<i128> = ids.iter().map(|i| (i % 11) as i128).collect();
    let wide: Vec<i128> = ids
        .iter()
        .map(|i| (i % 5) as i128 * 10_i128.pow(30) - 1)
        .collect();
    let nullable: Vec<Option<i64>> = ids.iter().map(|i| (i % 4 != 0).then_some(i % 3)).collect();
    let modes = ["AIR", "", "REG AIR", "TRUCK", "MAIL", "FOB", "SHIP", "RAIL"];
    let strings: Vec<&str> = ids.iter().map(|i| modes[(i % 8) as usize]).collect();
    let nullable_strings: Vec<Option<&str>> = ids
        .iter()
        .map(|i| (i % 5 != 0).then_some(modes[(i % 3) as usize]))
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("i", DataType::Int64, false),
        Field::new("f", DataType::Float64, false),
        Field::new("m", DataType::Decimal128(15, 2), false),
        Field::new("w", DataType::Decimal128(38, 10), false),
        Field::new("n", DataType::Int64, true),
        Field::new("s", DataType::Utf8, false),
        Field::new("ns", DataType::Utf8, true),
    ]));
    let written = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(Int64Array::from(ints)),
            Arc::new(Float64Array::from(floats)),
            Arc::new(
                Decimal128Array::from(money)
                    .with_precision_and_scale(15, 2)
                    .expect("decimal"),
            ),
            Arc::new(
                Decimal128Array::from(wide)
                    .with_precision_and_scale(38, 10)
                    .expect("decimal"),
            ),
            Arc::new(Int64Array::from(nullable)),
            Arc::new(StringArray::from(strings)),
            Arc::new(StringArray::from(nullable_strings)),
        ],
    )
    .expect("batch");
    let dir = tempfile::tempdir().expect("tempdir");
    let ds = write(dir.path(), "dictionaries", written.clone()).await;
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(LanceTable::new(ds)))
        .expect("register");
    let read = collect(&ctx, "SELECT * FROM t ORDER BY id").await;
    let read = arrow::compute::concat_batches(&read[0].schema(), &read).expect("concat");
    assert_eq!(read.num_rows(), N as usize);
    for (i, field) in written.schema().fields().iter().enumerate() {
        // Bit for bit: the float column's NaNs and zeros of both signs compare by their bits.
        assert_eq!(
            read.column(i).to_data(),
            written.column(i).to_data(),
            "column {}",
            field.name()
        );
    }
}

/// A session of two target partitions; `partitioned`: no build side is small enough to
/// collect, so both sides of a join are hash-partitioned.
fn join_session(partitioned: bool) -> SessionContext {
    let mut config = SessionConfig::new().with_target_partitions(2);
    if partitioned {
        let options = config.options_mut();
        options.optimizer.hash_join_single_partition_threshold = 0;
        options.optimizer.hash_join_single_partition_threshold_rows = 0;
    }
    SessionContext::new_with_config(config)
}

/// Runs `sql`, a `count(*), sum(…)` of two Int64 columns, and checks that the answer is
/// `matched`'s length and sum and that the plan's one runtime filter removed `removed`
/// rows. Returns the plan as run, its filters shown with their values.
async fn check_join(ctx: &SessionContext, sql: &str, matched: &[i64], removed: usize) -> String {
    let plan = physical(ctx, sql).await;
    let batches = datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx())
        .await
        .expect(sql);
    let shown = explained(&plan);
    let value = |i: usize| column::<Int64Array>(&batches[0], i).value(0);
    assert_eq!(
        (value(0), value(1)),
        (matched.len() as i64, matched.iter().sum()),
        "{shown}"
    );
    assert_eq!(runtime_filtered(&plan), (1, removed), "{shown}");
    shown
}

/// A session (`join_session(partitioned)`) with `t`, 100,000 rows of `rows`, and
/// `keys(k)`, the one nullable column `keys`; both are written under `dir`.
async fn t_and_keys(dir: &std::path::Path, partitioned: bool, keys: ArrayRef) -> SessionContext {
    let schema = Schema::new(vec![Field::new("k", keys.data_type().clone(), true)]);
    let small = RecordBatch::try_new(Arc::new(schema), vec![keys]).expect("keys");
    let ks = write(dir, "keys", small).await;
    let ds = write(dir, "t", rows(0..100_000)).await;
    let ctx = join_session(partitioned);
    ctx.register_table("t", Arc::new(LanceTable::new(ds)))
        .expect("register");
    ctx.register_table("keys", Arc::new(LanceTable::new(ks)))
        .expect("register");
    ctx
}

/// Joins `keys(k)` (from `keys`, and a NULL) with a 100,000-row `t` on `k = t.id`,
/// `partitioned` or collecting the build side, and checks the answer and that the probe
/// scan dropped every row of `t` whose id is not a key: exactly, not only the rows outside
/// the keys' range. Returns the plan as run.
async fn join_many_keys(keys: &[i64], partitioned: bool) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 100_000_i64;
    let column: ArrayRef = Arc::new(Int64Array::from_iter(
        keys.iter().map(|&k| Some(k)).chain([None]),
    ));
    let ctx = t_and_keys(dir.path(), partitioned, column).await;
    let matched: Vec<i64> = keys
        .iter()
        .copied()
        .filter(|k| (0..n).contains(k))
        .collect();
    let sql = "SELECT count(*), sum(t.id) FROM keys JOIN t ON keys.k = t.id";
    let shown = check_join(&ctx, sql, &matched, n as usize - matched.len()).await;
    let joins = shown.matches("HashJoinExec: mode=Partitioned").count();
    assert_eq!(joins, usize::from(partitioned), "{shown}");
    shown
}

/// More keys than an `IN` list takes (150) within a range of a few hundred thousand: the
/// probe scan tests each id against a bitmap of the keys (the vendored
/// `datafusion-physical-plan`'s `KeyBitmap`), with one bitmap for both partitions of a
/// partitioned join instead of routing each row to its partition's hash table. Negative
/// keys, keys past the probe's ids and a NULL key are among them.
#[tokio::test]
async fn a_join_of_many_integer_keys_filters_its_probe_scan_by_a_bitmap_of_them() {
    let keys: Vec<i64> = (0..3_000_i64).map(|i| i * 37 - 5_000).collect();
    for partitioned in [false, true] {
        let shown = join_many_keys(&keys, partitioned).await;
        assert!(shown.contains("AND bitmap_lookup"), "{shown}");
        assert!(!shown.contains("hash_lookup"), "{shown}");
        assert!(!shown.contains("hash_repartition"), "{shown}");
    }
}

/// A partitioned join of few keys (each partition's build side an `IN` list) tests the
/// probe side's ids against one bitmap of all partitions' keys, not a `CASE` routing each
/// row to its partition's list.
#[tokio::test]
async fn a_partitioned_join_of_few_integer_keys_tests_them_in_one_bitmap() {
    let keys: Vec<i64> = (0..40_i64).map(|i| i * 2_557 - 11).collect();
    let shown = join_many_keys(&keys, true).await;
    assert!(shown.contains("AND bitmap_lookup"), "{shown}");
    assert!(!shown.contains("hash_repartition"), "{shown}");
}

/// A partitioned join on strings (no bitmap) of few keys: one `IN` list of all partitions'
/// keys with their overall bounds, and the probe scan drops every other row.
#[tokio::test]
async fn a_partitioned_join_of_few_string_keys_tests_them_in_one_in_list() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 100_000_i64;
    let tags = ["tag3", "tag7", "tag11", "tag13", "", "TAG3"];
    let column: ArrayRef = Arc::new(StringArray::from_iter(
        tags.iter().map(|t| Some(*t)).chain([None]),
    ));
    let ctx = t_and_keys(dir.path(), true, column).await;
    let matched: Vec<i64> = (0..n).filter(|i| [3, 7, 11].contains(&(i % 13))).collect();
    let sql = "SELECT count(*), sum(t.id) FROM keys JOIN t ON keys.k = t.tag";
    let shown = check_join(&ctx, sql, &matched, n as usize - matched.len()).await;
    assert!(shown.contains("HashJoinExec: mode=Partitioned"), "{shown}");
    assert!(shown.contains("IN (SET)"), "{shown}");
    assert!(!shown.contains("hash_repartition"), "{shown}");
}

/// The partition (of two) that a hash repartition sends each of `keys` to, as DataFusion's
/// `RepartitionExec` does (`REPARTITION_RANDOM_STATE`, the hash's low bit for two).
fn partition_of_two(keys: &ArrayRef) -> Vec<u64> {
    let mut hashes = vec![0; keys.len()];
    create_hashes([keys], REPARTITION_RANDOM_STATE.random_state(), &mut hashes).expect("hash");
    hashes.iter().map(|h| h & 1).collect()
}

/// A partitioned join whose build side has only NULL keys in one partition: that
/// partition's bounds are NULL, and the merged filter (one `IN` list of strings, one bitmap
/// of integers) must not take them for the keys' minimum (`key >= NULL` keeps no row).
#[tokio::test]
async fn a_partition_of_null_keys_adds_no_bounds_to_the_merged_filter() {
    let n = 100_000_i64;
    let strings: ArrayRef = Arc::new(StringArray::from_iter(
        (0..13).map(|i| Some(format!("tag{i}"))).chain([None]),
    ));
    let integers: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..400).map(|i| Some(i * 211)).chain([None]),
    ));
    for (keys, column, expect) in [
        (strings, "tag", "IN (SET)"),
        (integers, "id", "bitmap_lookup"),
    ] {
        // The keys that go to the partition the NULL key does not, and 200 NULLs.
        let partitions = partition_of_two(&keys);
        let null_partition = partitions[keys.len() - 1];
        let chosen: Vec<u32> = (0..keys.len() as u32 - 1)
            .filter(|&i| partitions[i as usize] != null_partition)
            .collect();
        assert!(chosen.len() >= 3, "{column}: {partitions:?}");
        let taken = arrow::compute::take(&keys, &UInt32Array::from(chosen), None).expect("take");
        let nulls = arrow::array::new_null_array(keys.data_type(), 200);
        let build = arrow::compute::concat(&[taken.as_ref(), nulls.as_ref()]).expect("concat");
        let matched: Vec<i64> = (0..n)
            .filter(|&id| {
                let probe: ArrayRef = match column {
                    "tag" => Arc::new(StringArray::from(vec![format!("tag{}", id % 13)])),
                    _ => Arc::new(Int64Array::from(vec![id])),
                };
                arrow::compute::kernels::cmp::eq(&build, &arrow::array::Scalar::new(probe))
                    .expect("eq")
                    .true_count()
                    > 0
            })
            .collect();
        assert!(!matched.is_empty(), "{column}");
        let dir = tempfile::tempdir().expect("tempdir");
        let ctx = t_and_keys(dir.path(), true, build).await;
        let sql = format!("SELECT count(*), sum(t.id) FROM keys JOIN t ON keys.k = t.{column}");
        let shown = check_join(&ctx, &sql, &matched, n as usize - matched.len()).await;
        assert!(shown.contains("HashJoinExec: mode=Partitioned"), "{shown}");
        assert!(shown.contains(expect), "{shown}");
        assert!(!shown.contains("hash_repartition"), "{shown}");
    }
}

/// Keys spread over more values than a bitmap may cover (`max(2^24, 64 × keys)` bits):
/// the probe scan keeps the join's hash-table lookup, and the answer and the rows it drops
/// are the same.
#[tokio::test]
async fn keys_too_sparse_for_a_bitmap_keep_the_hash_table_lookup() {
    let keys: Vec<i64> = (0..300_i64)
        .map(|i| i * 350)
        .chain([1 << 40, -(1 << 40)])
        .collect();
    for partitioned in [false, true] {
        let shown = join_many_keys(&keys, partitioned).await;
        assert!(shown.contains("hash_lookup"), "{shown}");
        assert!(!shown.contains("bitmap_lookup"), "{shown}");
    }
}

/// TPC-H q4's shape at 1/100 of scale factor 1: `orders(ok, od, prio)` with 15,000 rows
/// over 2,400 days, and `items(ok, commit, receipt)` with 60,000, four per order, the
/// receipt after the commit in three of five. With `zone_map`, `orders.od` has a zone map.
async fn q4_tables(dir: &std::path::Path, zone_map: bool) -> SessionContext {
    let n = 15_000;
    let orders = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("ok", DataType::Int64, false),
            Field::new("od", DataType::Date32, false),
            Field::new("prio", DataType::Utf8, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(0..n)),
            Arc::new(Date32Array::from_iter_values(
                (0..n).map(|i| (i * 7 % 2_400) as i32),
            )),
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("{}-PRIORITY", i % 5)),
            )),
        ],
    )
    .expect("orders");
    let items = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("ok", DataType::Int64, false),
            Field::new("commit", DataType::Date32, false),
            Field::new("receipt", DataType::Date32, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values((0..4 * n).map(|i| i % n))),
            Arc::new(Date32Array::from_iter_values((0..4 * n).map(|_| 100))),
            Arc::new(Date32Array::from_iter_values(
                (0..4 * n).map(|i| if i % 5 < 3 { 101 } else { 99 }),
            )),
        ],
    )
    .expect("items");
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    for (name, batch) in [("orders", orders), ("items", items)] {
        let mut ds = write(dir, name, batch).await;
        if zone_map && name == "orders" {
            let mut indexed = Arc::unwrap_or_clone(ds);
            lance::index::DatasetIndexExt::create_index(
                &mut indexed,
                &["od"],
                lance_index::IndexType::ZoneMap,
                Some("od_zonemap".into()),
                &lance_index::scalar::ScalarIndexParams::for_builtin(
                    lance_index::scalar::BuiltinIndexType::ZoneMap,
                ),
                false,
            )
            .await
            .expect("zone map");
            ds = Arc::new(indexed);
        }
        ctx.register_table(name, Arc::new(LanceTable::new(ds)))
            .expect("register");
    }
    ctx
}

/// Days 1,000 to 1,091 of the 2,400: 578 of the 15,000 orders.
const Q4_ORDERS: &str = "od >= 1000 AND od < 1092";

#[tokio::test]
async fn a_date_range_is_estimated_from_its_zone_map() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kept = (0..15_000_i64)
        .filter(|i| (1_000..1_092).contains(&(i * 7 % 2_400)))
        .count();
    assert_eq!(kept, 578);
    for (zone_map, expected) in [(true, 15_000.0 * 92.0 / 2_400.0), (false, 15_000.0)] {
        let ctx = q4_tables(&dir.path().join(zone_map.to_string()), zone_map).await;
        let plan = physical(
            &ctx,
            &format!("SELECT ok, prio FROM orders WHERE {Q4_ORDERS}"),
        )
        .await;
        let shown = explained(&plan);
        let rows = *plan
            .partition_statistics(None)
            .expect("statistics")
            .num_rows
            .get_value()
            .expect("rows") as f64;
        // With the zone map, the share of the range the filter keeps (92 of 2,400 days);
        // without it, Lance's estimate, which knows no range: every row.
        assert!(
            (rows - expected).abs() <= 0.1 * expected,
            "zone map {zone_map}: {rows} rows estimated, about {expected} expected\n{shown}"
        );
        let selectivity = shown
            .split("filter_selectivity=")
            .nth(1)
            .map(|rest| rest[..6].parse::<f64>().expect("a share"));
        match selectivity {
            Some(s) => assert!(zone_map && (0.036..0.040).contains(&s), "{shown}"),
            None => assert!(!zone_map, "{shown}"),
        }
        assert_eq!(
            scalar(
                &ctx,
                &format!("SELECT count(*) FROM orders WHERE {Q4_ORDERS}")
            )
            .await,
            kept as i64
        );
    }
}

#[tokio::test]
async fn a_semi_join_builds_on_the_side_a_zone_map_shows_smaller() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sql = format!(
        "SELECT prio, count(*) FROM orders WHERE {Q4_ORDERS} AND EXISTS \
         (SELECT 1 FROM items WHERE items.ok = orders.ok AND commit < receipt) \
         GROUP BY prio ORDER BY prio"
    );
    // Each order has four items, three of them received late (`i % 5 < 3` of item `i`,
    // whose order is `i % 15,000`); an order is counted when any of its four is.
    let late = |order: i64| (0..4).any(|k| (order + k * 15_000) % 5 < 3);
    let mut expected: Vec<(String, i64)> = (0..5)
        .map(|p| {
            let count = (0..15_000_i64)
                .filter(|i| i % 5 == p && (1_000..1_092).contains(&(i * 7 % 2_400)) && late(*i))
                .count() as i64;
            (format!("{p}-PRIORITY"), count)
        })
        .filter(|(_, count)| *count > 0)
        .collect();
    expected.sort();
    assert!(!expected.is_empty());
    // Estimated without ranges, the filters keep every row: the orders (15,000 rows of `ok`
    // and a string, 64 bytes to Lance) look larger than the items (60,000 keys of 8 bytes),
    // and the join builds on items; the zone map shows about 575 orders, and it builds on
    // them.
    for (zone_map, build) in [(true, vec!["ok", "prio"]), (false, vec!["ok"])] {
        let ctx = q4_tables(&dir.path().join(zone_map.to_string()), zone_map).await;
        let plan = physical(&ctx, &sql).await;
        let shown = explained(&plan);
        assert_eq!(
            build_sides(&plan),
            vec![build],
            "zone map {zone_map}\n{shown}"
        );
        let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .expect(&sql);
        let mut got = vec![];
        for b in &batches {
            let (prio, count) = (column::<StringArray>(b, 0), column::<Int64Array>(b, 1));
            for i in 0..b.num_rows() {
                got.push((prio.value(i).to_string(), count.value(i)));
            }
        }
        assert_eq!(got, expected, "zone map {zone_map}\n{shown}");
    }
}
