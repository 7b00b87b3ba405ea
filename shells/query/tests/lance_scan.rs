//! `LanceTable` (the Query replica's scan of a Lance dataset) over a dataset of several
//! fragments: with one output partition per target partition, unordered fragments and early
//! materialization, every row is still read exactly once, filters and limits hold, and
//! the answers equal those computed directly from the written rows.

use std::sync::Arc;

use arrow::array::{Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::TableProvider;
use datafusion::prelude::{SessionConfig, SessionContext};
use lake_query::scan::LanceTable;
use lance::Dataset;
use lance::dataset::{WriteMode, WriteParams};
use lance::io::exec::filtered_read::{FilteredReadExec, FilteredReadThreadingMode};

/// Fragments written (one append each) and rows per fragment.
const FRAGMENTS: i64 = 7;
const ROWS: i64 = 3_001;

fn batch(fragment: i64) -> RecordBatch {
    let ids: Vec<i64> = (fragment * ROWS..(fragment + 1) * ROWS).collect();
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

async fn scalar(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = ctx.sql(sql).await.expect(sql).collect().await.expect(sql);
    let column = batches[0].column(0);
    let values = column
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap_or_else(|| panic!("{sql}: not Int64 but {:?}", column.data_type()));
    values.value(0)
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
        let limited = ctx
            .sql("SELECT id FROM t WHERE id % 2 = 0 LIMIT 17")
            .await
            .expect("limit")
            .collect()
            .await
            .expect("limit");
        let rows: Vec<i64> = limited
            .iter()
            .flat_map(|b| {
                let ids = b
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .expect("ids");
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
    let shown = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string();
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
