//! TPC-H data for `lake serve --demo`, generated with the `tpchgen` crate (TPC-H spec
//! § 4.2 dbgen rules) as CSV text and parsed into Arrow with explicit schemas.

use std::fmt::Write as _;
use std::io::Cursor;
use std::sync::Arc;

use anyhow::Context;
use arrow::csv::ReaderBuilder;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use tpchgen::csv::{
    CustomerCsv, LineItemCsv, NationCsv, OrderCsv, PartCsv, PartSuppCsv, RegionCsv, SupplierCsv,
};
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// The eight TPC-H tables, in load order.
pub const TABLES: [&str; 8] = [
    "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem",
];

/// Rows per Arrow batch.
const BATCH_ROWS: usize = 8192;

fn money() -> DataType {
    DataType::Decimal128(15, 2)
}

fn schema(table: &str) -> anyhow::Result<SchemaRef> {
    use DataType::{Date32, Int32, Int64, Utf8};
    let f = |name: &str, ty: DataType| Field::new(name, ty, false);
    let fields = match table {
        "region" => vec![
            f("r_regionkey", Int64),
            f("r_name", Utf8),
            f("r_comment", Utf8),
        ],
        "nation" => vec![
            f("n_nationkey", Int64),
            f("n_name", Utf8),
            f("n_regionkey", Int64),
            f("n_comment", Utf8),
        ],
        "supplier" => vec![
            f("s_suppkey", Int64),
            f("s_name", Utf8),
            f("s_address", Utf8),
            f("s_nationkey", Int64),
            f("s_phone", Utf8),
            f("s_acctbal", money()),
            f("s_comment", Utf8),
        ],
        "customer" => vec![
            f("c_custkey", Int64),
            f("c_name", Utf8),
            f("c_address", Utf8),
            f("c_nationkey", Int64),
            f("c_phone", Utf8),
            f("c_acctbal", money()),
            f("c_mktsegment", Utf8),
            f("c_comment", Utf8),
        ],
        "part" => vec![
            f("p_partkey", Int64),
            f("p_name", Utf8),
            f("p_mfgr", Utf8),
            f("p_brand", Utf8),
            f("p_type", Utf8),
            f("p_size", Int32),
            f("p_container", Utf8),
            f("p_retailprice", money()),
            f("p_comment", Utf8),
        ],
        "partsupp" => vec![
            f("ps_partkey", Int64),
            f("ps_suppkey", Int64),
            f("ps_availqty", Int32),
            f("ps_supplycost", money()),
            f("ps_comment", Utf8),
        ],
        "orders" => vec![
            f("o_orderkey", Int64),
            f("o_custkey", Int64),
            f("o_orderstatus", Utf8),
            f("o_totalprice", money()),
            f("o_orderdate", Date32),
            f("o_orderpriority", Utf8),
            f("o_clerk", Utf8),
            f("o_shippriority", Int32),
            f("o_comment", Utf8),
        ],
        "lineitem" => vec![
            f("l_orderkey", Int64),
            f("l_partkey", Int64),
            f("l_suppkey", Int64),
            f("l_linenumber", Int32),
            f("l_quantity", money()),
            f("l_extendedprice", money()),
            f("l_discount", money()),
            f("l_tax", money()),
            f("l_returnflag", Utf8),
            f("l_linestatus", Utf8),
            f("l_shipdate", Date32),
            f("l_commitdate", Date32),
            f("l_receiptdate", Date32),
            f("l_shipinstruct", Utf8),
            f("l_shipmode", Utf8),
            f("l_comment", Utf8),
        ],
        other => anyhow::bail!("unknown TPC-H table {other}; tables: {}", TABLES.join(", ")),
    };
    Ok(Arc::new(Schema::new(fields)))
}

fn csv_text(table: &str, sf: f64) -> anyhow::Result<String> {
    let mut out = String::new();
    macro_rules! emit {
        ($gen:expr, $csv:ident) => {{
            writeln!(out, "{}", $csv::header())?;
            for row in $gen.iter() {
                writeln!(out, "{}", $csv::new(row))?;
            }
        }};
    }
    match table {
        "region" => emit!(RegionGenerator::new(sf, 1, 1), RegionCsv),
        "nation" => emit!(NationGenerator::new(sf, 1, 1), NationCsv),
        "supplier" => emit!(SupplierGenerator::new(sf, 1, 1), SupplierCsv),
        "customer" => emit!(CustomerGenerator::new(sf, 1, 1), CustomerCsv),
        "part" => emit!(PartGenerator::new(sf, 1, 1), PartCsv),
        "partsupp" => emit!(PartSuppGenerator::new(sf, 1, 1), PartSuppCsv),
        "orders" => emit!(OrderGenerator::new(sf, 1, 1), OrderCsv),
        "lineitem" => emit!(LineItemGenerator::new(sf, 1, 1), LineItemCsv),
        other => anyhow::bail!("unknown TPC-H table {other}"),
    }
    Ok(out)
}

/// Generates `table` at scale factor `sf` as Arrow batches of its TPC-H schema (keys
/// Int64, money Decimal128(15, 2), dates Date32, all columns non-nullable).
///
/// # Errors
/// Unknown table, or CSV that does not parse (a tpchgen bug).
pub fn generate(table: &str, sf: f64) -> anyhow::Result<(SchemaRef, Vec<RecordBatch>)> {
    let schema = schema(table)?;
    let text = csv_text(table, sf)?;
    let reader = ReaderBuilder::new(schema.clone())
        .with_header(true)
        .with_batch_size(BATCH_ROWS)
        .build(Cursor::new(text))
        .context("tpch csv")?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("parsing generated TPC-H {table}"))?;
    Ok((schema, batches))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tables_have_the_spec_row_counts_at_sf_0_01() {
        let rows = |t: &str| -> usize {
            generate(t, 0.01)
                .expect("generates")
                .1
                .iter()
                .map(RecordBatch::num_rows)
                .sum()
        };
        // TPC-H spec § 4.2.5: fixed sizes for nation/region, SF-scaled for the rest.
        assert_eq!(rows("region"), 5);
        assert_eq!(rows("nation"), 25);
        assert_eq!(rows("supplier"), 100);
        assert_eq!(rows("customer"), 1_500);
        assert_eq!(rows("orders"), 15_000);
    }
}
