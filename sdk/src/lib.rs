//! The Rust SDK of Lake.
//!
//! [`LakeClient`] talks to a Query replica over Arrow Flight SQL: create and drop tables,
//! append Arrow [`RecordBatch`]es idempotently under an operation id, and run SQL that
//! returns Arrow. Large objects go straight between the SDK and the table's managed stage
//! ([`stage`]); rows hold [`FileRef`] metadata in FILE columns ([`file`]). The SDK never
//! talks to Metasrv.
//!
//! ```no_run
//! # async fn demo() -> Result<(), lake_sdk::SdkError> {
//! let mut lake = lake_sdk::LakeClient::connect("http://127.0.0.1:50051").await?;
//! let batches = lake.sql("SELECT 1 AS one").await?;
//! # Ok(()) }
//! ```

mod client;
pub mod file;
mod granted;
pub mod stage;
pub mod wire;

pub use arrow::record_batch::RecordBatch;
pub use client::{LakeClient, SdkError, TableName};
pub use file::{FileRef, FileType, file_array, file_field, file_refs};
pub use stage::{Stage, StagedObject, UnfinishedUpload, UploadOptions, Uploaded};
pub use wire::AppendResult;
