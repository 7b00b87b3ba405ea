// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! A hash join's build-side keys of one integer column as one bit per value of their
//! range, for the probe side's dynamic filter.
//!
//! The hash-table lookup the dynamic filter otherwise carries hashes every probe row and
//! follows it into a table of about 16 bytes per build row, which for builds of a few
//! hundred thousand rows lives outside the core's cache; in a partitioned join it also
//! routes every row by a second hash to its partition's table (a `CASE` over the
//! partitions). The bitmap answers the same question, "is this key among the build
//! side's", with one subtraction and one bit test, and in a partitioned join it holds the
//! keys of every partition at once: a key present in partition `p`'s build side is in the
//! union, and a probe row with that key is routed to `p`, so no routing is needed.
//!
//! Keys are mapped to `u64` by two's complement, as [`ArrayMap`] does, so signed ranges
//! such as `[-5, 5]` index from zero by a wrapping subtraction.

use std::fmt::Display;
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Int8Type, Int16Type, Int32Type, Int64Type, Schema,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow::record_batch::RecordBatch;
use datafusion_common::{Result, ScalarValue, internal_err};
use datafusion_expr::ColumnarValue;
use datafusion_physical_expr_common::physical_expr::{
    DynHash, PhysicalExpr, PhysicalExprRef,
};
use num_traits::AsPrimitive;

use crate::joins::array_map::ArrayMap;

/// Bits a bitmap may always use: 2^24 bits, 2 MiB, which a core's L2 cache holds.
const ALWAYS_ALLOWED_BITS: u64 = 1 << 24;

/// Bits a bitmap may use per build-side row beyond [`ALWAYS_ALLOWED_BITS`]: 64 bits, 8
/// bytes, half of what the build side's hash table takes per row.
const BITS_PER_BUILD_ROW: u64 = 64;

/// Calls `$f::<T>($args)` with `T` the Arrow type of an integer `$data_type` of at most
/// 64 bits (the types [`ArrayMap::is_supported_type`] accepts).
macro_rules! with_integer_type {
    ($data_type:expr, $f:ident($($args:expr),*)) => {
        match $data_type {
            DataType::Int8 => $f::<Int8Type>($($args),*),
            DataType::Int16 => $f::<Int16Type>($($args),*),
            DataType::Int32 => $f::<Int32Type>($($args),*),
            DataType::Int64 => $f::<Int64Type>($($args),*),
            DataType::UInt8 => $f::<UInt8Type>($($args),*),
            DataType::UInt16 => $f::<UInt16Type>($($args),*),
            DataType::UInt32 => $f::<UInt32Type>($($args),*),
            DataType::UInt64 => $f::<UInt64Type>($($args),*),
            other => internal_err!("a key bitmap holds integers, not {other}"),
        }
    };
}

/// The keys of a join's build side, one integer column, as one bit per value of
/// `[min, max]`.
#[derive(Debug)]
pub(crate) struct KeyBitmap {
    /// The smallest key, as `u64` by two's complement.
    offset: u64,
    /// Values covered: `max - min + 1`.
    len: u64,
    /// Bit `i` (of word `i / 64`, bit `i % 64`) is set when `offset + i` is a key.
    words: Vec<u64>,
}

impl KeyBitmap {
    /// The bitmap of the non-NULL values of `keys`, all of `data_type`, which lie in
    /// `[min, max]` (the build side's bounds).
    ///
    /// `None` when the key type is not an integer of at most 64 bits, when a bound is NULL
    /// or of another type, when the range needs more bits than `max(2^24, 64 × number of
    /// keys)` (a bitmap never takes more than 2 MiB or half of the build side's hash
    /// table), or when a key lies outside `[min, max]` (the bounds were not the keys'; the
    /// caller keeps its hash-table lookup, which needs no bounds).
    pub(crate) fn try_new(
        data_type: &DataType,
        keys: &[&ArrayRef],
        min: &ScalarValue,
        max: &ScalarValue,
    ) -> Result<Option<Self>> {
        if !ArrayMap::is_supported_type(data_type)
            || &min.data_type() != data_type
            || &max.data_type() != data_type
            || keys.iter().any(|k| k.data_type() != data_type)
        {
            return Ok(None);
        }
        let (Some(offset), Some(max)) =
            (ArrayMap::key_to_u64(min), ArrayMap::key_to_u64(max))
        else {
            return Ok(None);
        };
        let range = max.wrapping_sub(offset);
        let rows: u64 = keys.iter().map(|k| k.len() as u64).sum();
        let allowed = ALWAYS_ALLOWED_BITS.max(rows.saturating_mul(BITS_PER_BUILD_ROW));
        if range >= allowed {
            return Ok(None);
        }
        let len = range + 1;
        let mut bitmap = Self {
            offset,
            len,
            words: vec![0; len.div_ceil(64) as usize],
        };
        for keys in keys {
            if !with_integer_type!(data_type, insert(&mut bitmap, keys))? {
                return Ok(None);
            }
        }
        Ok(Some(bitmap))
    }

    /// Whether each value of `keys` is in the bitmap; `false` for NULL.
    fn contains(&self, keys: &ArrayRef) -> Result<BooleanArray> {
        with_integer_type!(keys.data_type(), contains(self, keys))
    }

    /// Whether `key` (as `u64` by two's complement) is in the bitmap.
    #[inline]
    fn contains_u64(&self, key: u64) -> bool {
        let i = key.wrapping_sub(self.offset);
        i < self.len && (self.words[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }
}

/// Sets the bits of the non-NULL `keys`; `false` (and stops) at a key outside the bitmap.
fn insert<T: ArrowPrimitiveType>(bitmap: &mut KeyBitmap, keys: &ArrayRef) -> Result<bool>
where
    T::Native: AsPrimitive<u64>,
{
    for key in keys.as_primitive::<T>().iter().flatten() {
        let i = AsPrimitive::<u64>::as_(key).wrapping_sub(bitmap.offset);
        if i >= bitmap.len {
            return Ok(false);
        }
        bitmap.words[(i / 64) as usize] |= 1 << (i % 64);
    }
    Ok(true)
}

fn contains<T: ArrowPrimitiveType>(
    bitmap: &KeyBitmap,
    keys: &ArrayRef,
) -> Result<BooleanArray>
where
    T::Native: AsPrimitive<u64>,
{
    let keys = keys.as_primitive::<T>();
    let values = keys.values();
    let found = BooleanBuffer::collect_bool(values.len(), |i| {
        bitmap.contains_u64(values[i].as_())
    });
    let found = match keys.nulls() {
        Some(nulls) => &found & nulls.inner(),
        None => found,
    };
    Ok(BooleanArray::new(found, None))
}

/// `key IN (the build side's keys)` by a [`KeyBitmap`]: `true` where the probe row's key
/// is one of them, `false` otherwise and for a NULL key.
pub struct KeyBitmapLookupExpr {
    key: PhysicalExprRef,
    bitmap: Arc<KeyBitmap>,
}

impl KeyBitmapLookupExpr {
    pub(crate) fn new(key: PhysicalExprRef, bitmap: Arc<KeyBitmap>) -> Self {
        Self { key, bitmap }
    }
}

impl std::fmt::Debug for KeyBitmapLookupExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bitmap_lookup({}, {} bits)", self.key, self.bitmap.len)
    }
}

impl Hash for KeyBitmapLookupExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.dyn_hash(state);
        // By pointer, as `HashTableLookupExpr` compares its hash table: each join
        // execution builds its own.
        Arc::as_ptr(&self.bitmap).hash(state);
    }
}

impl PartialEq for KeyBitmapLookupExpr {
    fn eq(&self, other: &Self) -> bool {
        self.key.eq(&other.key) && Arc::ptr_eq(&self.bitmap, &other.bitmap)
    }
}

impl Eq for KeyBitmapLookupExpr {}

impl Display for KeyBitmapLookupExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bitmap_lookup")
    }
}

impl PhysicalExpr for KeyBitmapLookupExpr {
    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.key]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let [key] = <[_; 1]>::try_from(children).map_err(|children| {
            datafusion_common::internal_datafusion_err!(
                "bitmap_lookup has one child, got {}",
                children.len()
            )
        })?;
        Ok(Arc::new(Self::new(key, Arc::clone(&self.bitmap))))
    }

    fn data_type(&self, _input_schema: &Schema) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn nullable(&self, _input_schema: &Schema) -> Result<bool> {
        Ok(false)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let keys = self.key.evaluate(batch)?.into_array(batch.num_rows())?;
        Ok(ColumnarValue::Array(Arc::new(self.bitmap.contains(&keys)?)))
    }

    fn fmt_sql(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bitmap_lookup")
    }
}
