//! Sums of 64-bit integers are exact, as in PostgreSQL (`sum(bigint)` is `numeric`) and
//! DuckDB (`HUGEINT`).
//!
//! DataFusion sums `BIGINT` and `BIGINT UNSIGNED` into a value of the same type and wraps
//! silently past 2^63 (2^64): `sum` of `(9223372036854775807, 1)` was
//! `-9223372036854775808`. [`ExactSums`], an analyzer rule (before type coercion, which
//! then coerces what is computed from a sum for its new type), sums
//! those columns as `DECIMAL(38, 0)` instead — `sum(x)` becomes `sum(CAST(x AS
//! DECIMAL(38, 0)))`, in aggregates and windows, under the name the query gave — so a sum
//! is exact up to 38 digits (over 10^19 rows of the largest values) and fails with an
//! overflow error beyond (Lake checks every decimal it returns). Sums of narrower integers
//! are 64-bit already and cannot overflow in practice.

use datafusion::common::Result;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

use arrow::datatypes::DataType;

/// The type 64-bit integer sums take.
pub const EXACT_SUM_TYPE: DataType = DataType::Decimal128(38, 0);

/// The analyzer rule: see the module doc.
#[derive(Debug, Default)]
pub struct ExactSums;

impl AnalyzerRule for ExactSums {
    fn name(&self) -> &str {
        "lake_exact_sums"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| {
            let changed = matches!(plan, LogicalPlan::Aggregate(_) | LogicalPlan::Window(_));
            if !changed {
                // A parent of a rewritten node: its schema follows its inputs'.
                return Ok(Transformed::yes(plan.recompute_schema()?));
            }
            let schema = datafusion::logical_expr::utils::merge_schema(&plan.inputs());
            let names = NamePreserver::new(&plan);
            let rewritten = plan.map_expressions(|expr| {
                let saved = names.save(&expr);
                let out = expr.transform_up(|e| match e {
                    Expr::AggregateFunction(mut f) if f.func.name() == "sum" => {
                        let wide = f.params.args.first().is_some_and(|arg| {
                            matches!(
                                arg.get_type(&schema).ok(),
                                Some(DataType::Int64 | DataType::UInt64)
                            )
                        });
                        if !wide {
                            return Ok(Transformed::no(Expr::AggregateFunction(f)));
                        }
                        let arg = f.params.args.remove(0);
                        f.params
                            .args
                            .insert(0, arg.cast_to(&EXACT_SUM_TYPE, &schema)?);
                        Ok(Transformed::yes(Expr::AggregateFunction(f)))
                    }
                    Expr::WindowFunction(mut f) if f.fun.name() == "sum" => {
                        let wide = f.params.args.first().is_some_and(|arg| {
                            matches!(
                                arg.get_type(&schema).ok(),
                                Some(DataType::Int64 | DataType::UInt64)
                            )
                        });
                        if !wide {
                            return Ok(Transformed::no(Expr::WindowFunction(f)));
                        }
                        let arg = f.params.args.remove(0);
                        f.params
                            .args
                            .insert(0, arg.cast_to(&EXACT_SUM_TYPE, &schema)?);
                        Ok(Transformed::yes(Expr::WindowFunction(f)))
                    }
                    other => Ok(Transformed::no(other)),
                })?;
                Ok(out.update_data(|e| saved.restore(e)))
            })?;
            rewritten.map_data(|plan| plan.recompute_schema())
        })
        .data()
    }
}
