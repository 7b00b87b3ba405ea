//! Lance's decode of a run-length encoded page (`RleDecompressor`) as the vendored
//! `lance-encoding` does it (vendor/README.md): each value repeated its run's length, in
//! order, for runs of every length (a run of up to eight values is written by one
//! fixed-size store, a longer one by a fill), for every value width. A page whose runs do
//! not add up is an error in a block and cut at the page's end in a mini-block, as
//! upstream decodes it; a zero run length is an error. Never a panic of the replica.

use lance_encoding::buffer::LanceBuffer;
use lance_encoding::compression::{BlockDecompressor, MiniBlockDecompressor};
use lance_encoding::data::DataBlock;
use lance_encoding::encodings::physical::rle::RleDecompressor;
use proptest::prelude::*;

/// The values `values[i]` repeated `lengths[i]` times, as the reference.
fn expanded<T: Copy>(values: &[T], lengths: &[u8]) -> Vec<T> {
    values
        .iter()
        .zip(lengths)
        .flat_map(|(v, &n)| std::iter::repeat_n(*v, n as usize))
        .collect()
}

/// The little-endian bytes of `values`, each `width` bytes (the low bytes of a `u64`).
fn value_bytes(values: &[u64], width: usize) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| v.to_le_bytes()[..width].to_vec())
        .collect()
}

/// A block-format RLE payload: `[values size: u64 LE][values][one-byte run lengths]`.
fn block(values: &[u8], lengths: &[u8]) -> LanceBuffer {
    let mut frame = (values.len() as u64).to_le_bytes().to_vec();
    frame.extend_from_slice(values);
    frame.extend_from_slice(lengths);
    LanceBuffer::from(frame)
}

fn decoded_bytes(block: DataBlock) -> Vec<u8> {
    match block {
        DataBlock::FixedWidth(fixed) => fixed.data.as_ref().to_vec(),
        other => panic!("expected a fixed-width block, got {}", other.name()),
    }
}

fn error_of(result: lance_core::Result<DataBlock>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Runs of 1 to 255 values, weighted to the short runs a key column has, decode to
    /// the values repeated, as blocks and as mini-blocks, for 8-, 16-, 32- and 64-bit values.
    #[test]
    fn runs_decode_to_each_value_repeated(
        runs in prop::collection::vec(
            (any::<u64>(), prop_oneof![4 => 1_u8..=8, 2 => 9_u8..=20, 1 => 200_u8..=255]),
            1..300,
        ),
        width_index in 0_usize..4,
    ) {
        let width = [1, 2, 4, 8][width_index];
        let values: Vec<u64> = runs
            .iter()
            .map(|(v, _)| if width == 8 { *v } else { v & ((1_u64 << (8 * width)) - 1) })
            .collect();
        let lengths: Vec<u8> = runs.iter().map(|(_, n)| *n).collect();
        let expected = value_bytes(&expanded(&values, &lengths), width);
        let count = (expected.len() / width) as u64;
        let decoder = RleDecompressor::new(8 * width as u64);
        let bytes = value_bytes(&values, width);

        let from_block = BlockDecompressor::decompress(&decoder, Some(block(&bytes, &lengths)), count)
            .expect("a block of consistent runs decodes");
        prop_assert_eq!(decoded_bytes(from_block), expected.clone());

        let from_mini_block = MiniBlockDecompressor::decompress(
            &decoder,
            vec![LanceBuffer::from(bytes.clone()), LanceBuffer::from(lengths.clone())],
            count,
        )
        .expect("a mini-block of consistent runs decodes");
        prop_assert_eq!(decoded_bytes(from_mini_block), expected.clone());

        // A mini-block whose runs go past its value count is cut there (upstream's rule
        // for legacy chunks), whichever run crosses it.
        let cut = count / 2 + 1;
        let from_cut = MiniBlockDecompressor::decompress(
            &decoder,
            vec![LanceBuffer::from(bytes), LanceBuffer::from(lengths)],
            cut,
        )
        .expect("a mini-block is cut at its value count");
        prop_assert_eq!(decoded_bytes(from_cut), expected[..cut as usize * width].to_vec());
    }
}

#[test]
fn short_runs_at_the_end_of_a_page_stay_within_it() {
    // Every run is short, the last one ends the page exactly: 1 + 7 + 8 + 1 values.
    let values = [10_u64, 20, 30, 40];
    let lengths = [1_u8, 7, 8, 1];
    let decoder = RleDecompressor::new(64);
    let decoded = BlockDecompressor::decompress(
        &decoder,
        Some(block(&value_bytes(&values, 8), &lengths)),
        17,
    )
    .unwrap();
    let DataBlock::FixedWidth(fixed) = decoded else {
        panic!("expected a fixed-width block")
    };
    assert_eq!(fixed.num_values, 17);
    let got: Vec<u64> = fixed
        .data
        .as_ref()
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(got, expanded(&values, &lengths));
}

#[test]
fn runs_that_do_not_add_up_are_errors_in_a_block() {
    let decoder = RleDecompressor::new(32);
    let values = value_bytes(&[1, 2, 3], 4);
    // 2 + 3 + 4 = 9 values.
    let past = error_of(BlockDecompressor::decompress(
        &decoder,
        Some(block(&values, &[2, 3, 4])),
        8,
    ));
    assert!(
        past.contains("overflowed expected value count: produced at least 9, expected 8"),
        "{past}"
    );
    let short = error_of(BlockDecompressor::decompress(
        &decoder,
        Some(block(&values, &[2, 3, 4])),
        12,
    ));
    assert!(short.contains("produced 9 values, expected 12"), "{short}");
    let zero = error_of(BlockDecompressor::decompress(
        &decoder,
        Some(block(&values, &[2, 0, 4])),
        6,
    ));
    assert!(zero.contains("zero run length"), "{zero}");
    let zero_in_mini_block = error_of(MiniBlockDecompressor::decompress(
        &decoder,
        vec![
            LanceBuffer::from(values),
            LanceBuffer::from(vec![0_u8, 3, 4]),
        ],
        7,
    ));
    assert!(
        zero_in_mini_block.contains("zero run length"),
        "{zero_in_mini_block}"
    );
}
