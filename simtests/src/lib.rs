//! Deterministic simulations of Lake's Sans-IO core under madsim.
//!
//! * `tests/cluster.rs`: Metasrv nodes, each the shipped `lake_core::node::Node` (the
//!   machine the tokio shell drives), electing a leader over [`store::SimStore`] with faults
//!   (throttling, slow requests, lost responses), the leader committing with every append
//!   fenced by its epoch, followers naming the leader for forwarding, writers with operation
//!   ids, and Query replicas' `lake_core::CatalogCache`s serving read-your-writes reads;
//!   partitions (symmetric and one-way), message loss, duplication, delay and reordering,
//!   crashes, graceful restarts, pauses, clock offset and drift. Two shapes: three nodes,
//!   and the embedded single exclusive node.
//! * `tests/node.rs`: named scenarios of one node, stepped by hand (a write planned after
//!   the lease lapsed, a store call past its deadline, a failed log read, resigning, ...).
//! * [`store`]: the simulated store, which keeps the same contract as Metasrv's RocksDB and
//!   DynamoDB stores (`tests/store.rs`), and its fault wrapper.
//!
//! Build and run them in their own target dir so the heavy crates are not rebuilt:
//! `RUSTFLAGS="--cfg madsim" CARGO_TARGET_DIR=target/madsim cargo test -p lake-simtests`.
//! `MADSIM_TEST_SEED=s` picks the first seed (default: the clock), `MADSIM_TEST_NUM=n` the
//! number of seeds (default 8; `.ci/test.sh` sweeps 300). A failing seed prints the one
//! command that replays it. A longer sweep, e.g. 5,000 seeds (about 2 minutes here in release):
//! `MADSIM_TEST_NUM=5000 RUSTFLAGS="--cfg madsim" CARGO_TARGET_DIR=target/madsim cargo test
//! -p lake-simtests --release`.

pub mod checkers;
pub mod store;
