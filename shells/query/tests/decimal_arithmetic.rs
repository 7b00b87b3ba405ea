//! `DECIMAL` `+`, `-` and `*` on 128-bit decimals, as the vendored `arrow-arith` computes them
//! (vendor/README.md): without a checked 128-bit multiply per value where every operand
//! fits in 64 bits, and by the checked kernel otherwise. DataFusion evaluates SQL's decimal
//! arithmetic with these kernels (`add_wrapping`, `sub_wrapping`, `mul_wrapping`, which are
//! checked for decimals), so every answer of `l_extendedprice * (1 - l_discount)` goes
//! through them.
//!
//! Each case is checked against the same arithmetic done value by value with Rust's checked
//! `i128` operations: the same values and NULLs where no valid row overflows, an overflow
//! error where one does. Operands are arrays or one-value scalars (either side, both),
//! sliced or not, with NULLs whose slots hold values that would overflow, and values small
//! (the fast path), past 64 bits and near the 128-bit limits (the checked kernel).

use arrow::array::{Array, ArrayRef, Datum, Decimal128Array, Scalar};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::compute::kernels::numeric;
use arrow::datatypes::DataType;
use arrow::error::ArrowError;
use proptest::prelude::*;

/// The three operations, each as SQL means it on decimals.
#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
}

/// One operand: its values (`None` a NULL, over a slot holding the paired garbage value),
/// its type, whether it is a scalar, and how many leading values to slice off.
#[derive(Clone, Debug)]
struct Operand {
    values: Vec<(Option<i128>, i128)>,
    precision: u8,
    scale: i8,
    scalar: bool,
    offset: usize,
}

impl Operand {
    /// The values as an array (sliced by `offset`), or a one-value scalar.
    fn datum(&self) -> Box<dyn Datum> {
        let raw: Vec<i128> = self.values.iter().map(|(v, g)| v.unwrap_or(*g)).collect();
        let nulls = NullBuffer::from(
            self.values
                .iter()
                .map(|(v, _)| v.is_some())
                .collect::<Vec<_>>(),
        );
        let array = Decimal128Array::new(ScalarBuffer::from(raw), Some(nulls))
            .with_precision_and_scale(self.precision, self.scale)
            .unwrap();
        if self.scalar {
            Box::new(Scalar::new(array.slice(0, 1)))
        } else {
            Box::new(array.slice(self.offset, self.values.len() - self.offset))
        }
    }

    /// The values the kernel sees, in order (one for a scalar).
    fn seen(&self) -> Vec<Option<i128>> {
        if self.scalar {
            vec![self.values[0].0]
        } else {
            self.values[self.offset..].iter().map(|(v, _)| *v).collect()
        }
    }
}

/// The result type arrow gives (Hive's rules): for `+` / `-` the larger scale and one more
/// digit than the wider integer part; for `*` the sum of the scales (at most 38, else an
/// error) and the precisions plus one; precision at most 38.
fn result_type(op: Op, l: &Operand, r: &Operand) -> (u8, i8) {
    match op {
        Op::Add | Op::Sub => {
            let scale = l.scale.max(r.scale);
            let integer = (l.precision as i8 - l.scale).max(r.precision as i8 - r.scale);
            (((scale + integer) as u8 + 1).min(38), scale)
        }
        Op::Mul => ((l.precision + r.precision + 1).min(38), l.scale + r.scale),
    }
}

/// One row's value: `None` where it overflows.
fn exact(op: Op, a: i128, b: i128, l: &Operand, r: &Operand) -> Option<i128> {
    match op {
        Op::Add | Op::Sub => {
            let scale = l.scale.max(r.scale);
            let a = a.checked_mul(10_i128.checked_pow((scale - l.scale) as u32)?)?;
            let b = b.checked_mul(10_i128.checked_pow((scale - r.scale) as u32)?)?;
            match op {
                Op::Add => a.checked_add(b),
                _ => a.checked_sub(b),
            }
        }
        Op::Mul => a.checked_mul(b),
    }
}

/// What the operation must give: each row's value or NULL, or `Err` where a row with both
/// operands valid overflows.
fn expected(op: Op, l: &Operand, r: &Operand) -> Result<Vec<Option<i128>>, ()> {
    let (a, b) = (l.seen(), r.seen());
    let rows = if l.scalar { b.len() } else { a.len() };
    let pick = |values: &[Option<i128>], scalar: bool, i: usize| {
        if scalar { values[0] } else { values[i] }
    };
    (0..rows)
        .map(|i| match (pick(&a, l.scalar, i), pick(&b, r.scalar, i)) {
            (Some(x), Some(y)) => exact(op, x, y, l, r).map(Some).ok_or(()),
            _ => Ok(None),
        })
        .collect()
}

/// An arithmetic kernel of `arrow::compute::kernels::numeric`.
type Kernel = fn(&dyn Datum, &dyn Datum) -> Result<ArrayRef, ArrowError>;

/// The kernels DataFusion calls and the checked ones; for decimals they are the same.
fn kernels(op: Op) -> [Kernel; 2] {
    match op {
        Op::Add => [numeric::add, numeric::add_wrapping],
        Op::Sub => [numeric::sub, numeric::sub_wrapping],
        Op::Mul => [numeric::mul, numeric::mul_wrapping],
    }
}

fn check(op: Op, l: &Operand, r: &Operand) -> Result<(), TestCaseError> {
    let want = expected(op, l, r);
    let (precision, scale) = result_type(op, l, r);
    for kernel in kernels(op) {
        let got = kernel(l.datum().as_ref(), r.datum().as_ref());
        if matches!(op, Op::Mul) && l.scale + r.scale > 38 {
            // A product's scale past 38 digits is refused whatever the values.
            prop_assert!(
                matches!(got, Err(ArrowError::InvalidArgumentError(_))),
                "{got:?}"
            );
            continue;
        }
        match (&want, got) {
            (Ok(values), Ok(array)) => {
                prop_assert_eq!(array.data_type(), &DataType::Decimal128(precision, scale));
                let array = array.as_any().downcast_ref::<Decimal128Array>().unwrap();
                let got: Vec<Option<i128>> = array.iter().collect();
                prop_assert_eq!(&got, values);
            }
            (Err(()), Err(ArrowError::ArithmeticOverflow(_))) => {}
            (want, got) => prop_assert!(false, "{op:?}: expected {want:?}, got {got:?}"),
        }
    }
    Ok(())
}

/// Values within 64 bits only, as most batches of real data are (the fast path).
fn small() -> impl Strategy<Value = i128> {
    prop_oneof![
        -1_000_000_000_000_000_i128..1_000_000_000_000_000,
        Just(i64::MAX as i128),
        Just(i64::MIN as i128),
    ]
}

/// Values of every reach: within 64 bits (most rows of real data, [`small`]), past 64 bits,
/// and near the 128-bit limits.
fn value() -> impl Strategy<Value = i128> {
    prop_oneof![
        6 => small(),
        1 => Just(i64::MAX as i128 + 1),
        1 => Just(i64::MIN as i128 - 1),
        1 => -(10_i128.pow(37))..10_i128.pow(37),
        1 => prop_oneof![Just(i128::MAX), Just(i128::MIN), Just(i128::MAX / 10), Just(-(i128::MAX / 10))],
    ]
}

/// Decimal types of every kind of scale difference: none, small, 10^10, and 10^19 or more
/// (past 64 bits, so the checked kernel).
fn decimal_type() -> impl Strategy<Value = (u8, i8)> {
    prop_oneof![
        Just((15, 2)),
        Just((20, 0)),
        Just((38, 10)),
        Just((38, 0)),
        Just((10, 5)),
        Just((38, 20)),
    ]
}

/// `len` slots, each a value or a NULL over a garbage value: half of the operands all
/// within 64 bits, half of every reach.
fn slots(len: usize) -> impl Strategy<Value = Vec<(Option<i128>, i128)>> {
    prop_oneof![
        prop::collection::vec((prop::option::weighted(0.85, small()), small()), len),
        prop::collection::vec((prop::option::weighted(0.85, value()), value()), len),
    ]
}

fn operand(len: usize) -> impl Strategy<Value = Operand> {
    (slots(len), decimal_type(), 0..3_usize).prop_map(
        move |(values, (precision, scale), offset)| Operand {
            values,
            precision,
            scale,
            scalar: false,
            offset,
        },
    )
}

fn pair() -> impl Strategy<Value = (Operand, Operand)> {
    (3..40_usize, 0..4_u8).prop_flat_map(|(len, shape)| {
        (operand(len), operand(len)).prop_map(move |(mut l, mut r)| {
            l.scalar = shape & 1 == 1;
            r.scalar = shape & 2 == 2;
            r.offset = l.offset;
            (l, r)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn sums_differences_and_products_are_exact_or_overflow_errors((l, r) in pair()) {
        for op in [Op::Add, Op::Sub, Op::Mul] {
            check(op, &l, &r)?;
        }
    }
}

/// An unsliced array operand of `values` (`None` a NULL over a zero slot) typed
/// `DECIMAL(precision, scale)`.
fn array(values: impl IntoIterator<Item = Option<i128>>, precision: u8, scale: i8) -> Operand {
    Operand {
        values: values.into_iter().map(|v| (v, 0)).collect(),
        precision,
        scale,
        scalar: false,
        offset: 0,
    }
}

/// TPC-H's `l_extendedprice * (1 - l_discount)` on a full batch: `1` is `DECIMAL(20, 0)`
/// after type coercion, the columns `DECIMAL(15, 2)`.
#[test]
fn a_discounted_price_over_a_batch() {
    let rows = 8192;
    let column = |f: fn(i128) -> i128| array((0..rows).map(|i| Some(f(i))), 15, 2);
    let price = column(|i| 90_000 + i * 7_919 % 10_000_000);
    let discount = column(|i| i % 11);
    let one = Operand {
        scalar: true,
        ..array([Some(1)], 20, 0)
    };
    check(Op::Sub, &one, &discount).unwrap();
    let rest = numeric::sub(one.datum().as_ref(), discount.datum().as_ref()).unwrap();
    let rest = rest.as_any().downcast_ref::<Decimal128Array>().unwrap();
    assert_eq!(rest.data_type(), &DataType::Decimal128(23, 2));
    assert_eq!(rest.value(3), 97);
    let rest = array(rest.iter(), 23, 2);
    check(Op::Mul, &price, &rest).unwrap();
    let product = numeric::mul(price.datum().as_ref(), rest.datum().as_ref()).unwrap();
    let product = product.as_any().downcast_ref::<Decimal128Array>().unwrap();
    assert_eq!(product.data_type(), &DataType::Decimal128(38, 4));
    assert_eq!(product.value(3), (90_000 + 3 * 7_919) * 97);
    assert_eq!(product.null_count(), 0);
}
