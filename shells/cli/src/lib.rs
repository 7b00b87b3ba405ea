//! The `lake` command's library: the embedded all-in-one server and the TPC-H demo data.
//! `main.rs` is the CLI over it; benchmarks and tests start servers through it too.

pub mod embedded;
pub mod tpch;
