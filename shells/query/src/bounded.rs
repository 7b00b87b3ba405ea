//! Built-in SQL functions whose result size is a number the client picks, bounded.
//!
//! `repeat('a', 2147483647)`, `lpad('', 1e9)` or `range(0, 1e10)` allocate their whole
//! result at once, outside DataFusion's memory pool, and the planner evaluates them while
//! it folds constants, before any statement limit applies: one such statement took a
//! replica past 12 GB (or aborted it under a memory cap). Each function here is the
//! built-in one behind a check of its size arguments, refused with `RESOURCE_EXHAUSTED`
//! before anything is allocated:
//!
//! | function | bound |
//! |---|---|
//! | `repeat(s, n)` | `n × bytes(s)` ≤ [`VALUE_BYTES_MAX`] per value |
//! | `lpad(s, n[, f])`, `rpad(s, n[, f])` | `n` ≤ [`VALUE_CHARS_MAX`] |
//! | `array_repeat(e, n)` | `n` ≤ [`LIST_LEN_MAX`] |
//! | `range(…)`, `generate_series(…)` on integers | element count ≤ [`LIST_LEN_MAX`] |
//!
//! and all values of one call together at most [`CALL_BYTES_MAX`] bytes (or 8-byte elements).

use arrow::array::{Array, ArrayRef, Int64Array};
use arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature,
};
use datafusion::prelude::SessionContext;

use crate::QueryError;

/// Largest string one call of `repeat` may make, in bytes.
pub const VALUE_BYTES_MAX: i64 = 64 << 20;
/// Largest length `lpad`/`rpad` may pad to, in characters.
pub const VALUE_CHARS_MAX: i64 = 16 << 20;
/// Most elements of one list made by `array_repeat`, `range` or `generate_series`.
pub const LIST_LEN_MAX: i64 = 16 << 20;
/// Most bytes (for lists: 8-byte elements) all values of one call may add up to.
pub const CALL_BYTES_MAX: i64 = 256 << 20;

/// How a function's result size follows from its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Size {
    /// `repeat(s, n)`: n copies of s.
    Repeat,
    /// `lpad`/`rpad(s, n, …)`: n characters.
    Pad,
    /// `array_repeat(e, n)`: n elements.
    ListOf,
    /// `range`/`generate_series([start,] stop[, step])` on integers.
    Series,
}

/// A built-in function behind a size check (see the module doc).
#[derive(Debug, PartialEq, Eq, Hash)]
struct Bounded {
    inner: ScalarUDF,
    size: Size,
}

/// Replaces the session's built-in `repeat`, `lpad`, `rpad`, `array_repeat`, `range` and
/// `generate_series` with bounded ones.
pub fn register(ctx: &SessionContext) {
    for (name, size) in [
        ("repeat", Size::Repeat),
        ("lpad", Size::Pad),
        ("rpad", Size::Pad),
        ("array_repeat", Size::ListOf),
        ("range", Size::Series),
        ("generate_series", Size::Series),
    ] {
        if let Ok(inner) = ctx.udf(name) {
            let inner = inner.as_ref().clone();
            ctx.register_udf(ScalarUDF::new_from_impl(Bounded { inner, size }));
        }
    }
}

/// The values of argument `i` as Int64 (NULLs as 0), one per row.
fn ints(args: &[ColumnarValue], i: usize, rows: usize) -> Result<Option<Int64Array>> {
    let Some(arg) = args.get(i) else {
        return Ok(None);
    };
    let array: ArrayRef = arg.to_array(rows)?;
    if !array.data_type().is_integer() {
        return Ok(None);
    }
    let cast = arrow::compute::cast(&array, &DataType::Int64)?;
    Ok(cast.as_any().downcast_ref::<Int64Array>().cloned())
}

fn refuse(name: &str, what: String) -> DataFusionError {
    DataFusionError::External(Box::new(QueryError::TooLarge(format!(
        "{name}(): {what}; Lake bounds what one call may allocate"
    ))))
}

impl Bounded {
    /// Checks the sizes `args` ask for (see the module doc).
    fn check(&self, args: &[ColumnarValue], rows: usize) -> Result<()> {
        let name = self.inner.name();
        let mut total: i64 = 0;
        let mut add = |size: i64, max: i64, unit: &str| -> Result<()> {
            if size > max {
                return Err(refuse(
                    name,
                    format!("a value of {size} {unit} (at most {max})"),
                ));
            }
            let bytes = if unit == "bytes" {
                size
            } else {
                size.saturating_mul(8)
            };
            total = total.saturating_add(bytes.max(0));
            if total > CALL_BYTES_MAX {
                return Err(refuse(
                    name,
                    format!("values of more than {CALL_BYTES_MAX} bytes in one call"),
                ));
            }
            Ok(())
        };
        match self.size {
            Size::Repeat => {
                let (Some(counts), Some(arg)) = (ints(args, 1, rows)?, args.first()) else {
                    return Ok(());
                };
                let strings = arg.to_array(rows)?;
                let lengths = arrow::compute::kernels::length::length(&strings)?;
                let lengths = arrow::compute::cast(&lengths, &DataType::Int64)?;
                let lengths = lengths
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .cloned()
                    .unwrap_or_else(|| Int64Array::from(vec![0; rows]));
                for (length, count) in lengths.iter().zip(counts.iter()) {
                    let bytes = length
                        .unwrap_or(0)
                        .saturating_mul(count.unwrap_or(0).max(0));
                    add(bytes, VALUE_BYTES_MAX, "bytes")?;
                }
            }
            Size::Pad => {
                if let Some(lengths) = ints(args, 1, rows)? {
                    for n in lengths.iter().flatten() {
                        add(n, VALUE_CHARS_MAX, "characters")?;
                    }
                }
            }
            Size::ListOf => {
                if let Some(counts) = ints(args, 1, rows)? {
                    for n in counts.iter().flatten() {
                        add(n, LIST_LEN_MAX, "elements")?;
                    }
                }
            }
            Size::Series => {
                let (start, stop, step) = match args.len() {
                    1 => (None, ints(args, 0, rows)?, None),
                    2 => (ints(args, 0, rows)?, ints(args, 1, rows)?, None),
                    _ => (
                        ints(args, 0, rows)?,
                        ints(args, 1, rows)?,
                        ints(args, 2, rows)?,
                    ),
                };
                let Some(stop) = stop else { return Ok(()) };
                for row in 0..stop.len() {
                    let begin = start.as_ref().map_or(0, |a| a.value(row));
                    let step = step.as_ref().map_or(1, |a| a.value(row));
                    let span = i128::from(stop.value(row)) - i128::from(begin);
                    let count = if step == 0 {
                        0
                    } else {
                        (span / i128::from(step)).max(0)
                    };
                    add(
                        i64::try_from(count).unwrap_or(i64::MAX),
                        LIST_LEN_MAX,
                        "elements",
                    )?;
                }
            }
        }
        Ok(())
    }
}

impl ScalarUDFImpl for Bounded {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<arrow::datatypes::FieldRef> {
        self.inner.return_field_from_args(args)
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.check(&args.args, args.number_rows)?;
        self.inner.invoke_with_args(args)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(ctx: &SessionContext, sql: &str) -> Result<usize> {
        let batches = ctx.sql(sql).await?.collect().await?;
        Ok(batches.iter().map(|b| b.num_rows()).sum())
    }

    #[tokio::test]
    async fn huge_results_are_refused_before_allocation_and_small_ones_still_work() {
        let ctx = SessionContext::new();
        register(&ctx);
        for sql in [
            "SELECT repeat('ab', 3) AS v",
            "SELECT lpad('x', 5, '-') AS v, rpad('x', 5) AS w",
            "SELECT array_repeat(1, 4) AS v",
            "SELECT range(0, 10, 2) AS v, generate_series(5) AS w",
            "SELECT repeat(s, 2) FROM (VALUES ('a'), ('bc'), (NULL)) AS t(s)",
        ] {
            assert!(run(&ctx, sql).await.is_ok(), "{sql}");
        }
        for (sql, fragment) in [
            (
                "SELECT repeat('a', 2147483647)",
                "repeat(): a value of 2147483647 bytes",
            ),
            ("SELECT length(repeat('ab', 1000000000))", "repeat()"),
            ("SELECT lpad('', 1000000000)", "lpad()"),
            ("SELECT rpad('x', 100000000, 'y')", "rpad()"),
            ("SELECT array_repeat('x', 1000000000)", "array_repeat()"),
            ("SELECT range(0, 10000000000)", "range()"),
            (
                "SELECT generate_series(-5000000000, 5000000000, 1)",
                "generate_series()",
            ),
        ] {
            let e = run(&ctx, sql).await.expect_err(sql);
            let q = QueryError::from(e);
            assert!(matches!(q, QueryError::TooLarge(_)), "{sql}: {q}");
            assert!(q.to_string().contains(fragment), "{sql}: {q}");
        }
    }
}
