//! Deterministic simulations of Lake's Sans-IO core under madsim.
//!
//! Build and run them in their own target dir so the heavy crates are not rebuilt:
//! `RUSTFLAGS="--cfg madsim" CARGO_TARGET_DIR=target/madsim cargo test -p lake-simtests`.
//! The simulated cluster (Metasrv nodes, a conditional-write store with faults, Query
//! replicas with caches) is tracked by the "Sans-IO core and deterministic simulation"
//! issue; the core's behaviour is covered meanwhile by `core/tests`.
