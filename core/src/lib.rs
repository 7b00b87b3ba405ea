//! Lake's Sans-IO core: the state machines behind commit coordination, Metasrv leader
//! election, the Query replica's catalog cache and snapshot resolution (Lake and Iceberg).
//!
//! Nothing here does I/O, reads a clock or spawns a task: time (`now_ms`, milliseconds
//! since the Unix epoch) is an argument and every effect is an output the caller carries
//! out. The tokio shells (`lake-metasrv`, `lake-query`) and the madsim simulations
//! (`lake-simtests`) drive the same code through the same handle-then-poll loop, in the
//! style of quinn-proto and str0m.

pub mod cache;
pub mod commit;
pub mod election;
pub mod error;
pub mod follower;
pub mod node;
pub mod registry;
pub mod retention;
pub mod snapshot;
pub mod store;
pub mod tail;
pub mod watch;

pub use cache::{CacheError, CacheInput, CacheOutput, CatalogCache};
pub use commit::{Applied, Coordinator, Input, Mutation, Output, Reply, StoreWrite, WriteOutcome};
pub use election::{Election, ElectionConfig, ElectionInput, ElectionOutput, Fence, Lease};
pub use error::{CommitError, RegistryError, SnapshotError};
pub use follower::{Follower, FollowerConfig, FollowerEvent, FollowerInput, FollowerOutput};
pub use node::{
    CallId, Node, NodeConfig, NodeEvent, NodeInput, NodeOutput, NodeRequest, NodeState,
    StoreAnswer, StoreCall,
};
pub use registry::{
    ChangeEvent, ChangeKind, Digest, GrantScope, ManifestRef, OperationRecord, Operations,
    Privilege, Registry, RegistryParts, TableId, TableMeta, TableParts, TableState, VersionRecord,
};
pub use retention::{Expiry, ExpiryWatch, Retention};
pub use snapshot::{
    IcebergHistory, IcebergRefKind, IcebergSpec, TimeTravel, VersionSpec, resolve_iceberg,
    resolve_version,
};
pub use store::{AppendLimits, EventStore, StoreError};
pub use tail::{Tail, TailConfig, TailInput, TailOutput};
pub use watch::{Watch, WatchConfig, WatchInput, WatchOutput};
