//! Literals with a decimal point meet DECIMAL columns as the decimals they were written as.
//!
//! DataFusion 54 types `99999999.99` as a DOUBLE (its `parse_float_as_decimal` would make
//! every such literal a DECIMAL, which then drags DOUBLE columns compared with it into
//! DECIMAL(30, 15), where NaN and infinities do not fit). Where type coercion then casts
//! the literal to a DECIMAL (a comparison, `IN`, `BETWEEN` or arithmetic with a DECIMAL
//! column), Arrow converts the binary double exactly, `99999999.989999994…`, so
//! `d = 99999999.99` misses the row that holds it. [`DecimalLiterals`], an analyzer rule
//! after type coercion, casts such a literal from its shortest decimal text instead (the
//! digits that read back as the same double: what was written), as PostgreSQL and DuckDB
//! read `99999999.99` as a DECIMAL. The same holds where a literal is stored into a DECIMAL
//! column (`INSERT … VALUES (1.005)` into DECIMAL(10, 2) stores 1.01: the digits written,
//! rounded, not the double's 1.00499…).

use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{Cast, Expr, LogicalPlan, TryCast};
use datafusion::optimizer::AnalyzerRule;

/// See the module docs.
#[derive(Debug, Default)]
pub struct DecimalLiterals;

impl AnalyzerRule for DecimalLiterals {
    fn name(&self) -> &str {
        "lake_decimal_literals"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            node.map_expressions(|expr| expr.transform_up(|e| Ok(rewrite(e))))
        })
        .data()
    }
}

/// `CAST(<float literal> AS DECIMAL(p, s))` → `CAST('<its shortest text>' AS DECIMAL(p, s))`
/// (and the same for `TRY_CAST`).
fn rewrite(expr: Expr) -> Transformed<Expr> {
    match expr {
        Expr::Cast(Cast { expr, field }) if is_decimal(field.data_type()) => {
            as_text(expr).update_data(|expr| Expr::Cast(Cast { expr, field }))
        }
        Expr::TryCast(TryCast { expr, field }) if is_decimal(field.data_type()) => {
            as_text(expr).update_data(|expr| Expr::TryCast(TryCast { expr, field }))
        }
        other => Transformed::no(other),
    }
}

/// A finite float literal as the literal of its shortest decimal text (the digits that
/// read back as the same float); anything else as it is.
fn as_text(expr: Box<Expr>) -> Transformed<Box<Expr>> {
    let text = match expr.as_ref() {
        Expr::Literal(ScalarValue::Float64(Some(v)), _) if v.is_finite() => v.to_string(),
        Expr::Literal(ScalarValue::Float32(Some(v)), _) if v.is_finite() => v.to_string(),
        _ => return Transformed::no(expr),
    };
    Transformed::yes(Box::new(Expr::Literal(ScalarValue::Utf8(Some(text)), None)))
}

fn is_decimal(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
    )
}
