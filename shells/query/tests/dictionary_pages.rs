//! Lance's decode of a dictionary page (`DictionaryDataBlock::decode`) as the vendored
//! `lance-encoding` does it (vendor/README.md): a typed gather for fixed-width values and
//! one pass for strings give each index's value in order, and a page that is corrupt (an
//! index past the dictionary, offsets that go backwards) is an error, never a panic of the
//! replica reading it. Encoding a page keeps first-appearance order in the dictionary, and
//! the cardinality estimate that picks an encoding is the same on every run (the vendored
//! crate hashes values with XXH3, not SipHash under a random key).

use arrow::datatypes::UInt64Type;
use lance_encoding::buffer::LanceBuffer;
use lance_encoding::data::{
    BlockInfo, DataBlock, DictionaryDataBlock, FixedWidthDataBlock, VariableWidthBlock,
};
use lance_encoding::encodings::logical::primitive::dict::dictionary_encode;
use lance_encoding::statistics::{ComputeStat, GetStat, Stat};

fn indices(values: &[u8]) -> FixedWidthDataBlock {
    FixedWidthDataBlock {
        data: LanceBuffer::copy_slice(values),
        bits_per_value: 8,
        num_values: values.len() as u64,
        block_info: BlockInfo::new(),
    }
}

fn fixed_width(values: Vec<i128>) -> DataBlock {
    let num_values = values.len() as u64;
    DataBlock::FixedWidth(FixedWidthDataBlock {
        data: LanceBuffer::reinterpret_vec(values),
        bits_per_value: 128,
        num_values,
        block_info: BlockInfo::new(),
    })
}

fn strings(values: &[&str], offsets: Vec<i32>) -> DataBlock {
    DataBlock::VariableWidth(VariableWidthBlock {
        data: LanceBuffer::copy_slice(values.concat().as_bytes()),
        offsets: LanceBuffer::reinterpret_vec(offsets),
        bits_per_offset: 32,
        num_values: values.len() as u64,
        block_info: BlockInfo::new(),
    })
}

fn decode(indices: FixedWidthDataBlock, dictionary: DataBlock) -> lance_core::Result<DataBlock> {
    DictionaryDataBlock {
        indices,
        dictionary: Box::new(dictionary),
    }
    .decode()
}

#[test]
fn a_decimal_dictionary_decodes_each_index_to_its_value() {
    // DECIMAL(15, 2) values as TPC-H's l_discount, and one past 64 bits.
    let dictionary = vec![5, 0, -7, 10_i128.pow(30)];
    let decoded = decode(
        indices(&[2, 0, 0, 3, 1, 2]),
        fixed_width(dictionary.clone()),
    )
    .expect("decode");
    let DataBlock::FixedWidth(decoded) = decoded else {
        panic!("not fixed-width: {decoded:?}");
    };
    assert_eq!(decoded.bits_per_value, 128);
    assert_eq!(decoded.num_values, 6);
    let values = decoded.data.borrow_to_typed_slice::<i128>();
    let expected: Vec<i128> = [2, 0, 0, 3, 1, 2].iter().map(|&i| dictionary[i]).collect();
    assert_eq!(&values[..], &expected[..]);
}

#[test]
fn a_string_dictionary_decodes_each_index_to_its_bytes_with_offsets_from_zero() {
    let values = ["AIR", "", "REG AIR"];
    let decoded = decode(
        indices(&[2, 1, 0, 0, 2]),
        strings(&values, vec![0, 3, 3, 10]),
    )
    .expect("decode");
    let DataBlock::VariableWidth(decoded) = decoded else {
        panic!("not variable-width: {decoded:?}");
    };
    assert_eq!(decoded.num_values, 5);
    assert_eq!(decoded.bits_per_offset, 32);
    assert_eq!(&decoded.data[..], b"REG AIRAIRAIRREG AIR");
    let offsets = decoded.offsets.borrow_to_typed_slice::<i32>();
    assert_eq!(&offsets[..], &[0, 7, 7, 10, 13, 20]);
}

#[test]
fn an_index_past_the_dictionary_is_an_error() {
    let error =
        decode(indices(&[0, 4]), fixed_width(vec![1, 2, 3, 4])).expect_err("index 4 of 4 values");
    assert!(error.to_string().contains("past the dictionary"), "{error}");
    let error = decode(indices(&[3]), strings(&["a", "b", "c"], vec![0, 1, 2, 3]))
        .expect_err("index 3 of 3 values");
    assert!(error.to_string().contains("past the dictionary"), "{error}");
}

#[test]
fn string_offsets_that_go_backwards_or_past_the_bytes_are_an_error() {
    // "ab", then an offset before the previous one.
    assert!(decode(indices(&[0]), strings(&["ab", "c"], vec![0, 2, 1])).is_err());
    // The last offset past the 3 bytes there are.
    assert!(decode(indices(&[1]), strings(&["ab", "c"], vec![0, 2, 9])).is_err());
}

#[test]
fn string_dictionaries_of_every_value_width_decode_to_their_bytes() {
    // The widest value picks how the bytes are moved (up to 8, 16 or 32 bytes at a time, or
    // one copy each past 32); a value ending at the dictionary's last byte must not read or
    // leave anything past it.
    let cases: [&[&str]; 5] = [
        &["R", "", "AIR", "TRUCK", "12345678"],
        &["DELIVER IN PERSON", "NONE", "", "COLLECT COD", "x"],
        &[
            "LARGE PLATED STEEL",
            "",
            "PROMO BURNISHED COPPER",
            "y",
            "0123456789abcdef0123456789abcdef",
        ],
        &[
            "furiously express packages wake.",
            "",
            "z",
            "a comment past thirty-two bytes long",
            "q",
        ],
        &["", ""],
    ];
    let picks: Vec<u8> = vec![4, 0, 1, 1, 3, 2, 4, 4, 0, 3, 2, 1];
    for values in cases {
        let mut offsets = vec![0_i32];
        for value in values {
            offsets.push(offsets.last().unwrap() + value.len() as i32);
        }
        let picks: Vec<u8> = picks.iter().map(|&i| i % values.len() as u8).collect();
        let decoded = decode(indices(&picks), strings(values, offsets)).expect("decode");
        let DataBlock::VariableWidth(decoded) = decoded else {
            panic!("not variable-width: {decoded:?}");
        };
        let expected: Vec<&str> = picks.iter().map(|&i| values[i as usize]).collect();
        assert_eq!(decoded.num_values, picks.len() as u64, "{values:?}");
        assert_eq!(
            &decoded.data[..],
            expected.concat().as_bytes(),
            "{values:?}"
        );
        let mut expected_offsets = vec![0_i32];
        for value in &expected {
            expected_offsets.push(expected_offsets.last().unwrap() + value.len() as i32);
        }
        let offsets = decoded.offsets.borrow_to_typed_slice::<i32>();
        assert_eq!(&offsets[..], &expected_offsets[..], "{values:?}");
    }
}

/// Dictionary-encodes `block` with room for every value, as a page's encoder does.
fn encode(block: &DataBlock) -> (DataBlock, DataBlock) {
    dictionary_encode(block, u32::MAX, usize::MAX, usize::MAX).expect("dictionary-encodable")
}

#[test]
fn a_page_encodes_to_a_dictionary_in_first_appearance_order_and_back() {
    // DECIMAL(15, 2) cents as TPC-H's l_extendedprice, repeated in a scrambled order,
    // and 64-bit values of the same pattern.
    let values: Vec<i128> = (0..5_000_i128)
        .map(|i| (i * 7_919 % 613) * 100 + 10_i128.pow(20) * (i % 3))
        .collect();
    let mut first_seen: Vec<i128> = vec![];
    for v in &values {
        if !first_seen.contains(v) {
            first_seen.push(*v);
        }
    }
    let mut block = fixed_width(values.clone());
    block.compute_stat();
    let (DataBlock::FixedWidth(indices), DataBlock::FixedWidth(dictionary)) = encode(&block) else {
        panic!("not fixed-width");
    };
    assert_eq!(
        &dictionary.data.borrow_to_typed_slice::<i128>()[..],
        &first_seen[..]
    );
    let decoded = decode(indices, DataBlock::FixedWidth(dictionary)).expect("decode");
    let DataBlock::FixedWidth(decoded) = decoded else {
        panic!("not fixed-width: {decoded:?}");
    };
    assert_eq!(
        &decoded.data.borrow_to_typed_slice::<i128>()[..],
        &values[..]
    );

    let values: Vec<u64> = values.iter().map(|v| *v as u64).collect();
    let mut block = DataBlock::FixedWidth(FixedWidthDataBlock {
        data: LanceBuffer::reinterpret_vec(values.clone()),
        bits_per_value: 64,
        num_values: values.len() as u64,
        block_info: BlockInfo::new(),
    });
    block.compute_stat();
    let (DataBlock::FixedWidth(indices), dictionary) = encode(&block) else {
        panic!("not fixed-width");
    };
    let DataBlock::FixedWidth(decoded) = decode(indices, dictionary).expect("decode") else {
        panic!("not fixed-width");
    };
    assert_eq!(
        &decoded.data.borrow_to_typed_slice::<u64>()[..],
        &values[..]
    );

    // Strings: the same order, offsets from zero.
    let words = [
        "MAIL", "SHIP", "AIR", "MAIL", "", "TRUCK", "AIR", "SHIP", "RAIL",
    ];
    let mut offsets = vec![0_i32];
    for w in words {
        offsets.push(offsets.last().unwrap() + w.len() as i32);
    }
    let mut block = strings(&words, offsets);
    block.compute_stat();
    let (DataBlock::FixedWidth(indices), DataBlock::VariableWidth(dictionary)) = encode(&block)
    else {
        panic!("not a string dictionary");
    };
    assert_eq!(&dictionary.data[..], b"MAILSHIPAIRTRUCKRAIL");
    let decoded = decode(indices, DataBlock::VariableWidth(dictionary)).expect("decode");
    let DataBlock::VariableWidth(decoded) = decoded else {
        panic!("not variable-width: {decoded:?}");
    };
    assert_eq!(&decoded.data[..], words.concat().as_bytes());
}

#[test]
fn the_cardinality_estimate_of_128_bit_values_is_the_same_on_every_run_and_close() {
    // 10,000 distinct DECIMAL values: Lance's sketch (HyperLogLog+, 16 registers) is in
    // its dense mode, where the estimate depends on every value's hash. Under SipHash with
    // a random key each block got its own estimate.
    let estimate = || {
        let values: Vec<i128> = (0..20_000_i128).map(|i| (i % 10_000) * 1_000_003).collect();
        let mut block = fixed_width(values);
        block.compute_stat();
        block
            .get_stat(Stat::Cardinality)
            .expect("a 128-bit block has a cardinality")
            .as_any()
            .downcast_ref::<arrow::array::PrimitiveArray<UInt64Type>>()
            .expect("UInt64")
            .value(0)
    };
    let first = estimate();
    for _ in 0..8 {
        assert_eq!(estimate(), first);
    }
    assert!(
        (5_000..=20_000).contains(&first),
        "estimate {first} for 10,000 distinct values"
    );
}
