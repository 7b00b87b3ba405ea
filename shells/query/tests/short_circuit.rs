//! `AND` evaluated by pre-selection, as the vendored `datafusion-physical-expr` does it
//! (vendor/README.md): when at most a fifth of the rows pass the left operand, DataFusion
//! evaluates the right one on those rows only and scatters its values back to their rows.
//! Every row must get what SQL's three-valued `AND` gives, whatever the selection looks
//! like (single rows, runs across 64-bit words, the first and last row, an input batch
//! that is a slice of a larger one) and whether the right operand has NULLs or is the NULL
//! literal. Scan filters (Lance's included) and `WHERE` clauses go through this code.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, Literal};
use proptest::prelude::*;

/// `left AND right` for one row, as SQL defines it (`NULL AND false` is false).
fn and(left: Option<bool>, right: Option<bool>) -> Option<bool> {
    match (left, right) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// `a AND <right>` evaluated over columns `a` and `b` (equally long), read from row
/// `offset` of a batch that has `offset` rows of `true` before them, as its rows.
fn evaluate(
    a: &[bool],
    b: &[Option<bool>],
    offset: usize,
    right: Arc<dyn PhysicalExpr>,
) -> Vec<Option<bool>> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Boolean, false),
        Field::new("b", DataType::Boolean, true),
    ]));
    let a_column: ArrayRef = Arc::new(BooleanArray::from(
        std::iter::repeat_n(true, offset)
            .chain(a.iter().copied())
            .collect::<Vec<_>>(),
    ));
    let b_column: ArrayRef = Arc::new(
        std::iter::repeat_n(Some(true), offset)
            .chain(b.iter().copied())
            .collect::<BooleanArray>(),
    );
    let batch = RecordBatch::try_new(schema, vec![a_column, b_column])
        .unwrap()
        .slice(offset, a.len());
    let expr = BinaryExpr::new(Arc::new(Column::new("a", 0)), Operator::And, right);
    let result = expr
        .evaluate(&batch)
        .unwrap()
        .into_array(batch.num_rows())
        .unwrap();
    let result = result.as_any().downcast_ref::<BooleanArray>().unwrap();
    result.iter().collect()
}

fn column_b() -> Arc<dyn PhysicalExpr> {
    Arc::new(Column::new("b", 1))
}

fn null() -> Arc<dyn PhysicalExpr> {
    Arc::new(Literal::new(ScalarValue::Boolean(None)))
}

/// Rows of `a AND b` and of `a AND NULL` as SQL defines them.
fn expected(a: &[bool], b: &[Option<bool>]) -> (Vec<Option<bool>>, Vec<Option<bool>>) {
    (
        a.iter().zip(b).map(|(&a, &b)| and(Some(a), b)).collect(),
        a.iter().map(|&a| and(Some(a), None)).collect(),
    )
}

#[test]
fn selected_rows_take_the_right_operand_at_word_edges_and_in_slices() {
    // 200 rows, 20 selected (a tenth, so pre-selection applies): the first and last row,
    // both sides of each 64-bit word boundary, a run crossing one, and single rows.
    let selected = [
        0, 1, 62, 63, 64, 65, 100, 101, 102, 103, 126, 127, 128, 129, 150, 170, 190, 197, 198, 199,
    ];
    let a: Vec<bool> = (0..200).map(|row| selected.contains(&row)).collect();
    // The right operand cycles true, false, NULL over all rows, so the selected rows see
    // each value.
    let b: Vec<Option<bool>> = (0..200)
        .map(|row| [Some(true), Some(false), None][row % 3])
        .collect();
    let (with_b, with_null) = expected(&a, &b);
    // Written out for four rows: selected with b true (row 0), selected with b false
    // (row 1), selected with b NULL (row 62), not selected with b true (row 3).
    assert_eq!(
        [with_b[0], with_b[1], with_b[62], with_b[3]],
        [Some(true), Some(false), None, Some(false)]
    );
    for offset in [0, 1, 7, 64, 67] {
        assert_eq!(
            evaluate(&a, &b, offset, column_b()),
            with_b,
            "a AND b, offset {offset}"
        );
        assert_eq!(
            evaluate(&a, &b, offset, null()),
            with_null,
            "a AND NULL, offset {offset}"
        );
        // Without NULLs on the right.
        let b: Vec<Option<bool>> = b.iter().map(|v| Some(v.unwrap_or(true))).collect();
        assert_eq!(
            evaluate(&a, &b, offset, column_b()),
            expected(&a, &b).0,
            "offset {offset}"
        );
    }
}

proptest! {
    #[test]
    fn and_by_pre_selection_is_sql_and(
        rows in prop::collection::vec((prop::bool::weighted(0.12), prop::option::weighted(0.8, any::<bool>())), 1..400),
        offset in 0usize..130,
    ) {
        let (a, b): (Vec<bool>, Vec<Option<bool>>) = rows.into_iter().unzip();
        let (with_b, with_null) = expected(&a, &b);
        prop_assert_eq!(evaluate(&a, &b, offset, column_b()), with_b);
        prop_assert_eq!(evaluate(&a, &b, offset, null()), with_null);
    }
}
