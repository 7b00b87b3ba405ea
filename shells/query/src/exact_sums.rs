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

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

use arrow::datatypes::DataType;

use crate::analysis::{expression_schema, map_expressions_keeping_names};

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
            let schema = expression_schema(&plan);
            let rewritten = map_expressions_keeping_names(plan, |expr| {
                expr.transform_up(|e| match e {
                    Expr::AggregateFunction(mut f) if f.func.name() == "sum" => {
                        let widened = widen_first(&mut f.params.args, &schema)?;
                        Ok(Transformed::new_transformed(
                            Expr::AggregateFunction(f),
                            widened,
                        ))
                    }
                    Expr::WindowFunction(mut f) if f.fun.name() == "sum" => {
                        let widened = widen_first(&mut f.params.args, &schema)?;
                        Ok(Transformed::new_transformed(
                            Expr::WindowFunction(f),
                            widened,
                        ))
                    }
                    other => Ok(Transformed::no(other)),
                })
            })?;
            rewritten.map_data(|plan| plan.recompute_schema())
        })
        .data()
    }
}

/// Casts the first of `args` (a `sum`'s argument, typed against `schema`) to
/// [`EXACT_SUM_TYPE`] when it is a 64-bit integer; whether it did.
fn widen_first(args: &mut [Expr], schema: &DFSchema) -> Result<bool> {
    let Some(first) = args.first_mut() else {
        return Ok(false);
    };
    if !matches!(
        first.get_type(schema).ok(),
        Some(DataType::Int64 | DataType::UInt64)
    ) {
        return Ok(false);
    }
    let arg = std::mem::replace(first, Expr::Literal(ScalarValue::Null, None));
    *first = arg.cast_to(&EXACT_SUM_TYPE, schema)?;
    Ok(true)
}
