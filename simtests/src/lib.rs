//! Deterministic simulations of Lake's Sans-IO core under madsim.
//!
//! * `tests/cluster.rs`: three Metasrv nodes electing a leader through
//!   `lake_core::Election` over a simulated DynamoDB-like store (conditional and
//!   transactional writes, throttling, slow requests, lost responses), the leader driving
//!   `lake_core::Coordinator` with every append fenced by its epoch, followers forwarding,
//!   writers with operation ids, and Query replicas' `lake_core::CatalogCache`s serving
//!   read-your-writes reads; partitions (symmetric and one-way), message loss, duplication,
//!   delay and reordering, crashes, graceful restarts, pauses, clock offset and drift.
//! * `tests/commit_and_cache.rs`: one leader that crashes often, against a store with faults,
//!   and caches on a lossy stream.
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

pub mod store;
