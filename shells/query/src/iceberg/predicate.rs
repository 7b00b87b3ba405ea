//! DataFusion filters as Iceberg scan predicates, translated only where the translation is
//! exact.
//!
//! iceberg-rust uses a pushed predicate twice: to skip data files and row groups by their
//! column statistics, and as a Parquet row filter. A predicate that is not equivalent to
//! the SQL filter can therefore drop rows before DataFusion sees them, so a filter is
//! translated whole or not at all (never one side of an `AND`), and only in the forms
//! whose Iceberg meaning equals their SQL meaning:
//!
//! * a plain top-level column compared (`=`, `<>`, `<`, `<=`, `>`, `>=`, `BETWEEN`,
//!   `[NOT] IN` a list) with non-NULL literals of exactly the column's Arrow type, for
//!   Boolean, Int32, Int64, Utf8, Binary, Date32 and Timestamp (µs or ns, with the
//!   column's own zone) columns;
//! * `IS [NOT] NULL` on any top-level column;
//! * `LIKE 'prefix%'` (no escape character, no `\`, `_` or other `%`, case-sensitive) as
//!   Iceberg's `starts_with`;
//! * `AND`, `OR` and `NOT` of translated parts.
//!
//! Everything else stays with DataFusion: casts around a column (`CAST(x AS INT) = 1`;
//! Iceberg binds the literal without the cast), float and double comparisons (Iceberg's
//! NaN and signed-zero rules differ from DataFusion's ordering), decimals, LIKE with
//! escapes, functions. Even a translated filter is reported to DataFusion as `Inexact`
//! (it filters again): Iceberg's row filter keeps every row of a file that lacks the
//! column for some operators (`<`, `IS NULL`, …), where SQL keeps none.

use arrow::datatypes::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Like, Operator};
use iceberg::expr::{Predicate, Reference};
use iceberg::spec::Datum;

/// The Iceberg predicate exactly equivalent to `filter` over a table of `schema` (the
/// snapshot's Arrow schema), or `None` when there is none (see the module doc).
pub fn to_predicate(filter: &Expr, schema: &Schema) -> Option<Predicate> {
    match filter {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => Some(to_predicate(left, schema)?.and(to_predicate(right, schema)?)),
            Operator::Or => Some(to_predicate(left, schema)?.or(to_predicate(right, schema)?)),
            _ => comparison(left, *op, right, schema),
        },
        Expr::Not(inner) => Some(to_predicate(inner, schema)?.negate()),
        Expr::IsNull(inner) => Some(Reference::new(column(inner, schema)?.0).is_null()),
        Expr::IsNotNull(inner) => Some(Reference::new(column(inner, schema)?.0).is_not_null()),
        Expr::InList(list) => {
            let (name, data_type) = column(&list.expr, schema)?;
            let values = list
                .list
                .iter()
                .map(|item| datum(literal(item)?, data_type))
                .collect::<Option<Vec<_>>>()?;
            let reference = Reference::new(name);
            Some(if list.negated {
                reference.is_not_in(values)
            } else {
                reference.is_in(values)
            })
        }
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => {
            let low = comparison(expr, Operator::GtEq, low, schema)?;
            let high = comparison(expr, Operator::LtEq, high, schema)?;
            let within = low.and(high);
            Some(if *negated { within.negate() } else { within })
        }
        Expr::Like(Like {
            negated,
            expr,
            pattern,
            escape_char: None,
            case_insensitive: false,
        }) => {
            let (name, data_type) = column(expr, schema)?;
            if data_type != &DataType::Utf8 {
                return None;
            }
            let prefix = match literal(pattern)? {
                ScalarValue::Utf8(Some(p)) => prefix_of(p)?,
                _ => return None,
            };
            let reference = Reference::new(name);
            let datum = Datum::string(prefix);
            Some(if *negated {
                reference.not_starts_with(datum)
            } else {
                reference.starts_with(datum)
            })
        }
        _ => None,
    }
}

/// `column op literal` (either way round) as a predicate.
fn comparison(left: &Expr, op: Operator, right: &Expr, schema: &Schema) -> Option<Predicate> {
    let (column_side, value_side, op) = match (column(left, schema), column(right, schema)) {
        (Some(c), None) => (c, right, op),
        (None, Some(c)) => (c, left, op.swap()?),
        _ => return None,
    };
    let (name, data_type) = column_side;
    let value = datum(literal(value_side)?, data_type)?;
    let reference = Reference::new(name);
    Some(match op {
        Operator::Eq => reference.equal_to(value),
        Operator::NotEq => reference.not_equal_to(value),
        Operator::Lt => reference.less_than(value),
        Operator::LtEq => reference.less_than_or_equal_to(value),
        Operator::Gt => reference.greater_than(value),
        Operator::GtEq => reference.greater_than_or_equal_to(value),
        _ => return None,
    })
}

/// A plain, top-level column of `schema`: its name and type.
fn column<'a>(expr: &Expr, schema: &'a Schema) -> Option<(&'a str, &'a DataType)> {
    let Expr::Column(column) = expr else {
        return None;
    };
    let field = schema.field_with_name(&column.name).ok()?;
    // A dotted name would bind to a nested field in Iceberg.
    if field.name().contains('.') {
        return None;
    }
    Some((field.name().as_str(), field.data_type()))
}

fn literal(expr: &Expr) -> Option<&ScalarValue> {
    match expr {
        Expr::Literal(value, _) if !value.is_null() => Some(value),
        _ => None,
    }
}

/// `value` as an Iceberg literal for a column of `column_type`: only when the value has
/// exactly that type (a literal DataFusion could not coerce to the column's type comes with
/// a cast on the column, which is not translated).
fn datum(value: &ScalarValue, column_type: &DataType) -> Option<Datum> {
    if &value.data_type() != column_type {
        return None;
    }
    Some(match value {
        ScalarValue::Boolean(Some(v)) => Datum::bool(*v),
        ScalarValue::Int32(Some(v)) => Datum::int(*v),
        ScalarValue::Int64(Some(v)) => Datum::long(*v),
        ScalarValue::Utf8(Some(v)) => Datum::string(v),
        ScalarValue::Binary(Some(v)) => Datum::binary(v.iter().copied()),
        ScalarValue::Date32(Some(v)) => Datum::date(*v),
        ScalarValue::TimestampMicrosecond(Some(v), zone) => match zone {
            None => Datum::timestamp_micros(*v),
            Some(_) => Datum::timestamptz_micros(*v),
        },
        ScalarValue::TimestampNanosecond(Some(v), zone) => match zone {
            None => Datum::timestamp_nanos(*v),
            Some(_) => Datum::timestamptz_nanos(*v),
        },
        _ => return None,
    })
}

/// The prefix of a `LIKE` pattern of the form `prefix%`, where the prefix holds no
/// wildcard and no `\` (DataFusion's default escape character).
fn prefix_of(pattern: &str) -> Option<&str> {
    let prefix = pattern.strip_suffix('%')?;
    if prefix.is_empty() || prefix.contains(['%', '_', '\\']) {
        return None;
    }
    Some(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{Field, TimeUnit};
    use datafusion::logical_expr::{cast, col, lit};

    fn schema() -> Schema {
        let mut fields = vec![
            Field::new("id", DataType::Int64, false),
            Field::new("n", DataType::Int32, true),
            Field::new("x", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Date32, true),
            Field::new("m", DataType::Decimal128(15, 2), true),
        ];
        for unit in [TimeUnit::Microsecond, TimeUnit::Nanosecond] {
            fields.push(Field::new(
                format!("ts_{unit:?}"),
                DataType::Timestamp(unit, None),
                true,
            ));
        }
        Schema::new(fields)
    }

    fn shown(filter: Expr) -> Option<String> {
        to_predicate(&filter, &schema()).map(|p| p.to_string())
    }

    #[test]
    fn exact_comparisons_translate_either_way_round() {
        assert!(shown(col("id").eq(lit(7i64))).is_some());
        assert_eq!(
            shown(lit(7i64).lt(col("id"))),
            shown(col("id").gt(lit(7i64)))
        );
        assert!(shown(col("s").in_list(vec![lit("a"), lit("b")], true)).is_some());
        assert!(shown(col("n").between(lit(1i32), lit(5i32))).is_some());
        assert!(shown(col("d").is_null().or(col("id").not_eq(lit(1i64)))).is_some());
    }

    #[test]
    fn casts_floats_decimals_and_mismatched_literals_stay_with_datafusion() {
        // Issue 15 case 8: CAST(x AS INT) = 1 must not become x = 1.
        assert_eq!(shown(cast(col("x"), DataType::Int32).eq(lit(1i32))), None);
        assert_eq!(shown(cast(col("s"), DataType::Int64).eq(lit(7i64))), None);
        assert_eq!(shown(cast(col("x"), DataType::Float32).eq(lit(1f32))), None);
        assert_eq!(shown(col("x").gt(lit(1.0f64))), None);
        assert_eq!(
            shown(col("m").eq(lit(ScalarValue::Decimal128(Some(100), 15, 2)))),
            None
        );
        // An Int64 literal against an Int32 column: not the column's type.
        assert_eq!(shown(col("n").eq(lit(1i64))), None);
        assert_eq!(shown(col("id").eq(lit(ScalarValue::Int64(None)))), None);
        // An AND is translated whole or not at all.
        assert_eq!(
            shown(col("id").eq(lit(1i64)).and(col("x").gt(lit(0.5)))),
            None
        );
    }

    #[test]
    fn only_plain_prefix_likes_become_starts_with() {
        assert!(shown(col("s").like(lit("abc%"))).is_some());
        // Issue 15 case 9: 'abc\%' is the literal 'abc%', not a prefix.
        for pattern in ["abc\\%", "a_c%", "%abc", "abc", "a%c%", "%"] {
            assert_eq!(shown(col("s").like(lit(pattern))), None, "{pattern}");
        }
        assert_eq!(shown(col("s").ilike(lit("abc%"))), None);
    }
}
