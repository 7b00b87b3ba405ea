//! The `lake` command's library: the embedded all-in-one server, the distributed processes
//! and the TPC-H demo data.
//! `main.rs` is the CLI over it; benchmarks and tests start servers through it too.

pub mod allocator;
pub mod cluster;
pub mod embedded;
pub mod tpch;
