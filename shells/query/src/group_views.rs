//! String grouping keys compared as `Utf8View`.
//!
//! DataFusion's vectorized group table (`GroupValuesColumn`, datafusion-physical-plan's
//! `aggregates::group_values::multi_group_by`) keeps a `Utf8View` key of up to 12 bytes
//! inline in its 16-byte view and compares two such keys as one 128-bit value; a `Utf8` key
//! is compared through its offsets and its bytes. Lance decodes strings as `Utf8`, so TPC-H
//! q1 spent 238 ms of its 1.28 s of CPU finding the group of each row by two one-character
//! keys (`time_calculating_group_ids` in `EXPLAIN ANALYZE`).
//!
//! [`GroupViews`], an analyzer rule that runs after type coercion, groups each aggregate by
//! `CAST(key AS Utf8View)` in place of every `Utf8` key, under the key's own name, and casts
//! those columns back to `Utf8` in a projection right above the aggregate. So every node
//! above the aggregate, and the client, sees the schema it saw before; only the group
//! table works on views. Casting `Utf8` to `Utf8View` builds one view per row over the same
//! bytes; the cast back copies the bytes of each group's key once.
//!
//! Aggregates with grouping sets (`ROLLUP`, `CUBE`, `GROUPING SETS`) are left as they are:
//! their output carries a grouping id after the keys, and `grouping(key)` names the keys as
//! written.

use std::sync::Arc;

use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult};
use datafusion::common::{Column, Result};
use datafusion::logical_expr::expr::Cast;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Aggregate, Expr, ExprSchemable, LogicalPlan, Projection};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule of the [module docs](self): every `Aggregate` without grouping sets
/// whose group keys include `Utf8` expressions becomes `Projection(CAST(key AS Utf8) …)`
/// over the same `Aggregate` grouped by `CAST(key AS Utf8View)`, with the original output
/// schema (names, qualifiers, types). It never fails a plan that planned without it: a key
/// whose type cannot be computed yet is left as it is.
#[derive(Debug, Default)]
pub struct GroupViews;

impl AnalyzerRule for GroupViews {
    fn name(&self) -> &str {
        "lake_group_views"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| match plan {
            LogicalPlan::Aggregate(aggregate) => grouped_on_views(aggregate),
            other => Ok(Transformed::no(other)),
        })
        .data()
    }
}

/// `aggregate` grouped on views of its `Utf8` keys under a projection that casts them back,
/// or `aggregate` itself when it has none (or has grouping sets).
fn grouped_on_views(aggregate: Aggregate) -> Result<Transformed<LogicalPlan>> {
    let input_schema = aggregate.input.schema();
    let mut viewed = Vec::with_capacity(aggregate.group_expr.len());
    for expr in &aggregate.group_expr {
        if matches!(expr, Expr::GroupingSet(_)) {
            return Ok(Transformed::no(LogicalPlan::Aggregate(aggregate)));
        }
        // A key whose type is not known yet (an unbound placeholder) stays as it is.
        viewed.push(matches!(expr.get_type(input_schema), Ok(DataType::Utf8)));
    }
    if !viewed.contains(&true) {
        return Ok(Transformed::no(LogicalPlan::Aggregate(aggregate)));
    }
    let names = NamePreserver::new_for_projection();
    let group_expr = aggregate
        .group_expr
        .iter()
        .zip(&viewed)
        .map(|(expr, &view)| {
            if view {
                names.save(expr).restore(Expr::Cast(Cast::new(
                    Box::new(expr.clone()),
                    DataType::Utf8View,
                )))
            } else {
                expr.clone()
            }
        })
        .collect();
    let on_views = Aggregate::try_new(
        Arc::clone(&aggregate.input),
        group_expr,
        aggregate.aggr_expr.clone(),
    )?;
    // The aggregate's output is its group keys, in order, then its aggregates.
    let columns = on_views
        .schema
        .iter()
        .enumerate()
        .map(|(i, (qualifier, field))| {
            let column = Expr::Column(Column::from((qualifier, field)));
            if viewed.get(i).copied().unwrap_or(false) {
                Expr::Cast(Cast::new(Box::new(column), DataType::Utf8))
                    .alias_qualified(qualifier.cloned(), field.name())
            } else {
                column
            }
        })
        .collect();
    let above = Projection::try_new_with_schema(
        columns,
        Arc::new(LogicalPlan::Aggregate(on_views)),
        Arc::clone(&aggregate.schema),
    )?;
    Ok(Transformed::yes(LogicalPlan::Projection(above)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{Field, Schema};
    use arrow::util::pretty::pretty_format_batches;
    use datafusion::datasource::MemTable;
    use datafusion::prelude::{SessionConfig, SessionContext};

    /// A session over `t(k, s, v)` in two partitions, with or without [`GroupViews`]. `k`
    /// has a NULL, an empty string, keys of 12 and 13 bytes (the longest kept inside a view
    /// and the shortest not) and a non-ASCII key; `s` a second key.
    fn context(with_rule: bool) -> SessionContext {
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
        if with_rule {
            ctx.add_analyzer_rule(Arc::new(GroupViews));
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("s", DataType::Utf8, false),
            Field::new("v", DataType::Int64, false),
        ]));
        let batch = |k: Vec<Option<&str>>, s: Vec<&str>, v: Vec<i64>| {
            RecordBatch::try_new(
                Arc::clone(&schema),
                vec![
                    Arc::new(StringArray::from(k)),
                    Arc::new(StringArray::from(s)),
                    Arc::new(Int64Array::from(v)),
                ],
            )
            .expect("batch")
        };
        let partitions = vec![
            vec![batch(
                vec![Some("a"), None, Some(""), Some("twelve bytes"), Some("a")],
                vec!["x", "x", "y", "x", "y"],
                vec![1, 2, 3, 4, 5],
            )],
            vec![batch(
                vec![
                    Some("thirteen byte"),
                    Some("twelve bytes"),
                    None,
                    Some("é"),
                    Some(""),
                ],
                vec!["x", "x", "x", "y", "y"],
                vec![6, 7, 8, 9, 10],
            )],
        ];
        let table = MemTable::try_new(schema, partitions).expect("table");
        ctx.register_table("t", Arc::new(table)).expect("register");
        ctx
    }

    async fn answer(ctx: &SessionContext, sql: &str) -> (String, Vec<DataType>) {
        let frame = ctx.sql(sql).await.expect("plan");
        let types = frame
            .schema()
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let batches = frame.collect().await.expect("run");
        let text = pretty_format_batches(&batches).expect("format").to_string();
        (text, types)
    }

    /// Each query gives the rows and the column types it gives without the rule, and the
    /// rows written out here; the first query's plan groups on views.
    #[tokio::test]
    async fn grouping_on_views_keeps_every_answer_and_type() {
        let cases = [
            (
                "SELECT k, s, sum(v) AS n FROM t GROUP BY k, s ORDER BY k NULLS FIRST, s",
                vec![
                    "+---------------+---+----+",
                    "| k             | s | n  |",
                    "+---------------+---+----+",
                    "|               | x | 10 |",
                    "|               | y | 13 |",
                    "| a             | x | 1  |",
                    "| a             | y | 5  |",
                    "| thirteen byte | x | 6  |",
                    "| twelve bytes  | x | 11 |",
                    "| é             | y | 9  |",
                    "+---------------+---+----+",
                ],
            ),
            (
                // A key compared above the aggregate (HAVING) and used in an expression.
                "SELECT upper(k) AS u, count(*) AS c FROM t GROUP BY k \
                 HAVING k <> 'a' AND k IS NOT NULL ORDER BY u",
                vec![
                    "+---------------+---+",
                    "| u             | c |",
                    "+---------------+---+",
                    "|               | 2 |",
                    "| THIRTEEN BYTE | 1 |",
                    "| TWELVE BYTES  | 2 |",
                    "| É             | 1 |",
                    "+---------------+---+",
                ],
            ),
            (
                // An expression as the key, DISTINCT, and a subquery's aggregate.
                "SELECT substr(k, 1, 1) AS f, count(DISTINCT s) AS d FROM t \
                 WHERE v IN (SELECT max(v) FROM t GROUP BY s) GROUP BY substr(k, 1, 1) ORDER BY f",
                vec![
                    "+---+---+",
                    "| f | d |",
                    "+---+---+",
                    "|   | 1 |",
                    "|   | 1 |",
                    "+---+---+",
                ],
            ),
            (
                // Grouping sets are left alone.
                "SELECT s, count(*) AS c FROM t GROUP BY ROLLUP (s) ORDER BY s NULLS LAST",
                vec![
                    "+---+----+",
                    "| s | c  |",
                    "+---+----+",
                    "| x | 6  |",
                    "| y | 4  |",
                    "|   | 10 |",
                    "+---+----+",
                ],
            ),
        ];
        let (with, without) = (context(true), context(false));
        for (sql, expected) in cases {
            let (text, types) = answer(&with, sql).await;
            assert_eq!(text, expected.join("\n"), "{sql}");
            assert_eq!((text, types), answer(&without, sql).await, "{sql}");
        }
        let (plan, _) = answer(&with, "EXPLAIN SELECT k, s, sum(v) FROM t GROUP BY k, s").await;
        assert!(
            plan.contains("CAST(t.k AS Utf8View) AS k, CAST(t.s AS Utf8View) AS s"),
            "{plan}"
        );
    }
}
