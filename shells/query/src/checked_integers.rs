//! Integer arithmetic that fails on overflow instead of wrapping.
//!
//! SQL (and PostgreSQL, DuckDB) raise an error when `+`, `-` or `*` of integers overflows
//! the type; DataFusion 54 wraps silently (its `BinaryExpr` has a `fail_on_overflow` switch
//! that the SQL planner never sets): `CAST(2147483647 AS INT) + 1` was `-2147483648`.
//! [`CheckedIntegers`], an analyzer rule that runs after type coercion, replaces `a + b`,
//! `a - b` and `a * b` whose operands are integers (of one type, as coercion leaves them)
//! with [`lake_checked_add`](checked) / `lake_checked_sub` / `lake_checked_mul`, which call
//! Arrow's checked kernels (`arrow::compute::kernels::numeric::{add, sub, mul}`) and fail
//! with "Overflow happened on: …", and `-a` of a signed integer with `lake_checked_neg`
//! ([`checked_neg`], Arrow's checked `neg`: `-(-2147483648)` of an INTEGER fails rather than
//! staying `-2147483648`). Output names stay as written. Decimal, float and
//! temporal arithmetic are untouched (floats go to ±inf as IEEE 754 says; Lake checks every
//! decimal it returns against its precision).
//!
//! The same rule replaces `CAST(x AS REAL)` of a DOUBLE with [`lake_checked_real`](checked_real),
//! which fails with "… is out of range for REAL" where a finite DOUBLE is beyond REAL's
//! ±3.4028235e38: Arrow's cast (`as f32`) makes it ±inf, so `INSERT … VALUES (1e39)` into a
//! REAL column stored inf. PostgreSQL ("value out of range: overflow") and DuckDB ("out of
//! range for the destination type FLOAT") refuse it. NaN and ±inf stay what they are, and a
//! DOUBLE too small for REAL becomes 0 or a subnormal, as in DuckDB.
//!
//! Filters that use these functions are evaluated by DataFusion rather than pushed into a
//! Lance scan ([`crate::scan`]).

use std::sync::{Arc, LazyLock};

use arrow::array::{ArrayRef, AsArray, Float32Array};
use arrow::compute::kernels::numeric;
use arrow::datatypes::DataType;
use arrow::datatypes::Float64Type;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue, exec_err};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;

use crate::analysis::{expression_schema, map_expressions_keeping_names};

/// Prefix of the names of Lake's own functions that a Lance scan cannot evaluate.
pub const LAKE_FUNCTION_PREFIX: &str = "lake_";

/// The checked function for `op` (`+`, `-` or `*`).
pub fn checked(op: Operator) -> Option<Arc<ScalarUDF>> {
    fn udf(name: &'static str, op: Operator) -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(CheckedArithmetic {
            name,
            op,
            signature: Signature::any(2, Volatility::Immutable),
        }))
    }
    static ADD: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| udf("lake_checked_add", Operator::Plus));
    static SUB: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| udf("lake_checked_sub", Operator::Minus));
    static MUL: LazyLock<Arc<ScalarUDF>> =
        LazyLock::new(|| udf("lake_checked_mul", Operator::Multiply));
    match op {
        Operator::Plus => Some(ADD.clone()),
        Operator::Minus => Some(SUB.clone()),
        Operator::Multiply => Some(MUL.clone()),
        _ => None,
    }
}

/// `out` as the result of a function whose arguments were all scalars (`scalar`): its
/// first value as a scalar, else the array.
///
/// # Errors
/// `out` is empty while `scalar` holds.
pub(crate) fn columnar(out: ArrayRef, scalar: bool) -> Result<ColumnarValue> {
    Ok(if scalar {
        ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
    } else {
        ColumnarValue::Array(out)
    })
}

/// `lake_checked_neg(integer) -> integer`: `-a` that fails on overflow (see the module doc).
pub fn checked_neg() -> Arc<ScalarUDF> {
    static NEG: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
        Arc::new(ScalarUDF::new_from_impl(CheckedNeg {
            signature: Signature::any(1, Volatility::Immutable),
        }))
    });
    NEG.clone()
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct CheckedNeg {
    signature: Signature,
}

impl ScalarUDFImpl for CheckedNeg {
    fn name(&self) -> &str {
        "lake_checked_neg"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args {
            [a] if a.is_signed_integer() => Ok(a.clone()),
            _ => exec_err!("lake_checked_neg takes one signed integer, got {args:?}"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value] = args.args.as_slice() else {
            return exec_err!("lake_checked_neg takes one argument");
        };
        let scalar = matches!(value, ColumnarValue::Scalar(_));
        columnar(
            numeric::neg(&value.to_array(args.number_rows.max(1))?)?,
            scalar,
        )
    }
}

/// `lake_checked_real(DOUBLE) -> REAL`: the cast that fails where a finite value does not
/// fit (see the module doc).
pub fn checked_real() -> Arc<ScalarUDF> {
    static REAL: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
        Arc::new(ScalarUDF::new_from_impl(CheckedReal {
            signature: Signature::exact(vec![DataType::Float64], Volatility::Immutable),
        }))
    });
    REAL.clone()
}

/// `v` as a REAL (the nearest `f32`, NaN and ±inf as they are).
///
/// # Errors
/// "… is out of range for REAL" where a finite `v` is beyond REAL's ±3.4028235e38.
pub fn real_of(v: f64) -> Result<f32> {
    #[allow(clippy::cast_possible_truncation)] // checked just below
    let r = v as f32;
    if r.is_infinite() && v.is_finite() {
        return exec_err!(
            "{v:e} is out of range for REAL (a finite REAL is at most {:e} in magnitude)",
            f32::MAX
        );
    }
    Ok(r)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct CheckedReal {
    signature: Signature,
}

impl ScalarUDFImpl for CheckedReal {
    fn name(&self) -> &str {
        "lake_checked_real"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float32)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value] = args.args.as_slice() else {
            return exec_err!("lake_checked_real takes one DOUBLE");
        };
        let scalar = matches!(value, ColumnarValue::Scalar(_));
        let doubles = value.to_array(args.number_rows.max(1))?;
        let Some(doubles) = doubles.as_primitive_opt::<Float64Type>() else {
            return exec_err!(
                "lake_checked_real takes a DOUBLE, got {}",
                doubles.data_type()
            );
        };
        let reals: Float32Array = doubles.try_unary(real_of)?;
        columnar(Arc::new(reals), scalar)
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct CheckedArithmetic {
    name: &'static str,
    op: Operator,
    signature: Signature,
}

impl ScalarUDFImpl for CheckedArithmetic {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args {
            [a, b] if a == b && a.is_integer() => Ok(a.clone()),
            _ => exec_err!("{} takes two integers of one type, got {args:?}", self.name),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [left, right] = args.args.as_slice() else {
            return exec_err!("{} takes two arguments", self.name);
        };
        let scalar = matches!(
            (left, right),
            (ColumnarValue::Scalar(_), ColumnarValue::Scalar(_))
        );
        // Two scalars give one value; otherwise a scalar spreads over the batch, which may
        // have no rows (a join's output can be empty).
        let rows = if scalar { 1 } else { args.number_rows };
        let left: ArrayRef = left.to_array(rows)?;
        let right: ArrayRef = right.to_array(rows)?;
        let out = match self.op {
            Operator::Plus => numeric::add(&left, &right)?,
            Operator::Minus => numeric::sub(&left, &right)?,
            _ => numeric::mul(&left, &right)?,
        };
        columnar(out, scalar)
    }
}

/// The analyzer rule: see the module doc.
#[derive(Debug, Default)]
pub struct CheckedIntegers;

impl AnalyzerRule for CheckedIntegers {
    fn name(&self) -> &str {
        "lake_checked_integers"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|plan| {
            let schema = expression_schema(&plan);
            map_expressions_keeping_names(plan, |expr| checked_arithmetic(expr, &schema))
        })
        .data()
    }
}

fn checked_arithmetic(expr: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    expr.transform_up(|e| match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let integers = left.get_type(schema).is_ok_and(|t| t.is_integer())
                && right.get_type(schema).is_ok_and(|t| t.is_integer());
            match checked(op).filter(|_| integers) {
                Some(function) => Ok(Transformed::yes(Expr::ScalarFunction(
                    ScalarFunction::new_udf(function, vec![*left, *right]),
                ))),
                None => Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr::new(
                    left, op, right,
                )))),
            }
        }
        Expr::Negative(inner) if inner.get_type(schema).is_ok_and(|t| t.is_signed_integer()) => {
            Ok(Transformed::yes(Expr::ScalarFunction(
                ScalarFunction::new_udf(checked_neg(), vec![*inner]),
            )))
        }
        Expr::Cast(cast)
            if cast.field.data_type() == &DataType::Float32
                && cast
                    .expr
                    .get_type(schema)
                    .is_ok_and(|t| t == DataType::Float64) =>
        {
            Ok(Transformed::yes(Expr::ScalarFunction(
                ScalarFunction::new_udf(checked_real(), vec![*cast.expr]),
            )))
        }
        other => Ok(Transformed::no(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, Int64Array};
    use arrow::datatypes::Field;

    fn add(left: ColumnarValue, right: ColumnarValue, rows: usize) -> Result<ColumnarValue> {
        let udf = checked(Operator::Plus).expect("+ is checked");
        let field = Arc::new(Field::new("a", DataType::Int64, true));
        udf.invoke_with_args(ScalarFunctionArgs {
            args: vec![left, right],
            arg_fields: vec![Arc::clone(&field), field],
            number_rows: rows,
            return_field: Arc::new(Field::new("sum", DataType::Int64, true)),
            config_options: Arc::new(ConfigOptions::default()),
        })
    }

    #[test]
    fn a_column_plus_a_constant_over_an_empty_batch_is_empty() {
        // A batch without rows: the constant spread over zero rows (it was spread over one,
        // and Arrow refused to add arrays of different lengths).
        let empty = ColumnarValue::Array(Arc::new(Int64Array::from(Vec::<i64>::new())));
        let one = ColumnarValue::Scalar(ScalarValue::Int64(Some(1)));
        let ColumnarValue::Array(sum) = add(empty, one.clone(), 0).unwrap() else {
            panic!("a column in, a column out");
        };
        assert_eq!(sum.len(), 0);
        let two = add(one.clone(), one.clone(), 0).unwrap();
        assert!(matches!(
            two,
            ColumnarValue::Scalar(ScalarValue::Int64(Some(2)))
        ));
        let column = ColumnarValue::Array(Arc::new(Int64Array::from(vec![1, i64::MAX])));
        let error = add(column, one, 2).unwrap_err().to_string();
        assert!(error.contains("Overflow"), "{error}");
    }
}
