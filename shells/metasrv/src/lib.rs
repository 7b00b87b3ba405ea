//! Lake Metasrv: the registry and the commit coordinator behind a tonic gRPC service.
//!
//! [`Metasrv`] drives one core [`lake_core::node::Node`] (the election, and while the node
//! leads, the coordinator) in a driver task that decides nothing, carrying out its outputs:
//! lease reads and conditional lease writes, synced appends fenced by the leader's epoch to
//! the durable [`EventStore`] ([`RocksStore`] in embedded mode, [`DynamoStore`] in a
//! cluster), replies to callers, and published events for the change stream (`Watch`, each
//! subscriber a core [`lake_core::watch::Watch`]). [`MetasrvClient`] is what
//! Query replicas use. The wire format is `proto/metasrv.proto`.

pub mod bench;
pub mod checkpoint;
pub mod client;
pub mod convert;
pub mod dynamo;
mod error;
pub mod server;
pub mod store;
pub mod transport;

/// Generated protobuf and gRPC types of `lake.metasrv.v1`.
#[allow(missing_docs, clippy::all)]
pub mod proto {
    tonic::include_proto!("lake.metasrv.v1");
}

pub use client::{MetasrvClient, Watched};
pub use dynamo::DynamoStore;
pub use error::MetasrvError;
pub use server::{Metasrv, NodeState, single_node_election};
pub use store::{EventStore, RocksStore, StoreError};
pub use transport::{ClientTls, ServerTls};
