//! Lake's own Flight messages, beside the standard Flight SQL ones.
//!
//! [`CommandAppend`] travels as a `google.protobuf.Any` in the `FlightDescriptor.cmd` of a
//! `DoPut` (type URL [`CommandAppend::TYPE_URL`]), followed by the Arrow IPC stream of the
//! rows; the server answers with one `PutResult` whose `app_metadata` is an encoded
//! [`AppendResult`].

/// Append Arrow rows to `namespace.table`, idempotently under `operation_id`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CommandAppend {
    /// Namespace (SQL schema) of the table.
    #[prost(string, tag = "1")]
    pub namespace: String,
    /// Table name.
    #[prost(string, tag = "2")]
    pub table: String,
    /// Idempotency key: a replay with the same key and payload returns the original
    /// version; the same key with another payload is refused.
    #[prost(string, tag = "3")]
    pub operation_id: String,
    /// The rows end with a [`END_OF_ROWS`] message: a stream that ends without it broke off
    /// (the client failed or went away) and commits nothing.
    #[prost(bool, tag = "4")]
    pub ends_with_marker: bool,
    /// A table that does not exist is created with the rows' schema, the rows its first
    /// version (if they fail, no table remains).
    #[prost(bool, tag = "5")]
    pub create_if_missing: bool,
}

/// `app_metadata` of the message (no Arrow payload) that closes the rows of a DoPut whose
/// command asks for it ([`CommandAppend::ends_with_marker`],
/// [`INGEST_END_MARKER_OPTION`]): the rows are complete. A transport cannot tell a stream
/// the client finished from one it abandoned; this message can.
pub const END_OF_ROWS: &[u8] = b"lake.end_of_rows";

/// The message that closes the rows: [`END_OF_ROWS`] as `app_metadata`, and as its
/// `data_header` an Arrow IPC message with no header (`MessageHeader::NONE`), which Flight
/// decoders read as a message without an Arrow payload.
pub fn end_of_rows() -> arrow_flight::FlightData {
    let mut builder = flatbuffers::FlatBufferBuilder::new();
    let mut message = arrow::ipc::MessageBuilder::new(&mut builder);
    message.add_version(arrow::ipc::MetadataVersion::V5);
    message.add_header_type(arrow::ipc::MessageHeader::NONE);
    message.add_bodyLength(0);
    let root = message.finish();
    builder.finish(root, None);
    arrow_flight::FlightData {
        data_header: builder.finished_data().to_vec().into(),
        app_metadata: END_OF_ROWS.to_vec().into(),
        ..Default::default()
    }
}

/// Key of the `CommandStatementIngest.options` entry (value `true`) saying the rows end
/// with an [`END_OF_ROWS`] message.
pub const INGEST_END_MARKER_OPTION: &str = "lake.end_marker";

impl CommandAppend {
    /// `google.protobuf.Any` type URL of this message.
    pub const TYPE_URL: &'static str = "type.googleapis.com/lake.v1.CommandAppend";
}

/// What an append did.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct AppendResult {
    /// Table version that holds the rows.
    #[prost(uint64, tag = "1")]
    pub version: u64,
    /// Registry revision that includes the commit: a read-your-writes token.
    #[prost(uint64, tag = "2")]
    pub revision: u64,
    /// Rows in the payload.
    #[prost(uint64, tag = "3")]
    pub rows: u64,
    /// True when the operation id had already committed this payload; nothing new was
    /// written.
    #[prost(bool, tag = "4")]
    pub replayed: bool,
}

/// Key of the `CommandStatementIngest.options` entry that carries an operation id when a
/// standard Flight SQL client ingests.
pub const INGEST_OPERATION_ID_OPTION: &str = "lake.operation_id";

/// `DoAction` type that describes a Lake table: body an encoded
/// [`ActionDescribeTableRequest`], one result whose body is an encoded
/// [`TableDescription`].
pub const ACTION_DESCRIBE_TABLE: &str = "lake.describe_table";

/// Which table to describe.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ActionDescribeTableRequest {
    /// Namespace (SQL schema) of the table.
    #[prost(string, tag = "1")]
    pub namespace: String,
    /// Table name.
    #[prost(string, tag = "2")]
    pub table: String,
}

/// `DoAction` type through which a client without storage credentials reaches a table's
/// managed stage: body an encoded [`StageRequest`], one result whose body is an encoded
/// [`StageResponse`]. The Query replica checks the caller's grant on the table's namespace
/// (read for [`StageOp::Head`] and [`StageOp::SignGet`], write for the rest) and answers
/// with presigned URLs for exactly one object, `<stage>/sha256/<sha256>` (S3 SigV4 query
/// signing, object_store's `Signer::signed_url_opts`), or does the multipart bookkeeping
/// (create, complete, abort) itself with its credentials. The bytes never pass through
/// the replica. A local-filesystem stage answers `UNIMPLEMENTED` (it has no URLs; clients
/// on the replica's machine open it directly, see [`crate::stage`]).
pub const ACTION_STAGE: &str = "lake.stage";

/// What a [`StageRequest`] asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum StageOp {
    /// Size and modification time of the object, or `found = false`.
    Head = 0,
    /// A presigned GET URL of the object (reads send their own `Range` header).
    SignGet = 1,
    /// A presigned PUT URL for the whole object (uploads of one part) and its `upload_id`
    /// (`put.<token>`); the bytes land in a staging key until [`StageOp::Complete`].
    SignPut = 2,
    /// Starts a multipart upload of the object; answers its `upload_id` (`mp.<id>`).
    CreateMultipart = 3,
    /// A presigned `UploadPart` URL for part `part_number` (1..=10,000) of `upload_id`.
    SignPart = 4,
    /// Completes `upload_id`: a multipart upload from the parts' ETags, in part order, or
    /// a single PUT (no ETags). The replica then hashes the object and keeps it only if it
    /// hashes to its address; an object at the address is never replaced.
    Complete = 5,
    /// Aborts `upload_id`.
    Abort = 6,
}

/// A request about one object of a table's managed stage ([`ACTION_STAGE`]).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StageRequest {
    /// The table's stage URI, as [`TableDescription::stage_uri`] gives it (or as a FILE
    /// value's URI starts): it names the table whose grants apply.
    #[prost(string, tag = "1")]
    pub stage_uri: String,
    /// The object's SHA-256, 64 lowercase hex digits (its content address).
    #[prost(string, tag = "2")]
    pub sha256: String,
    /// What is asked.
    #[prost(enumeration = "StageOp", tag = "3")]
    pub op: i32,
    /// The multipart upload ([`StageOp::SignPart`], [`StageOp::Complete`],
    /// [`StageOp::Abort`]); at most 1,024 bytes.
    #[prost(string, tag = "4")]
    pub upload_id: String,
    /// The part, 1..=10,000 ([`StageOp::SignPart`]).
    #[prost(uint32, tag = "5")]
    pub part_number: u32,
    /// The parts' ETags in part order ([`StageOp::Complete`]); at most 10,000 of at most
    /// 1,024 bytes each.
    #[prost(string, repeated, tag = "6")]
    pub etags: Vec<String>,
    /// How long a presigned GET URL is to stay valid, in seconds: 0 means
    /// [`STAGE_URL_TTL_SECS`]; at most 7 days (the SigV4 limit). Upload URLs always live
    /// [`STAGE_URL_TTL_SECS`] (a nonzero value is refused for them).
    #[prost(uint64, tag = "7")]
    pub expires_secs: u64,
}

/// The answer to a [`StageRequest`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct StageResponse {
    /// [`StageOp::Head`]: whether the object exists.
    #[prost(bool, tag = "1")]
    pub found: bool,
    /// [`StageOp::Head`]: the object's size in bytes.
    #[prost(uint64, tag = "2")]
    pub size: u64,
    /// [`StageOp::Head`]: the object's modification time, Unix milliseconds.
    #[prost(int64, tag = "3")]
    pub last_modified_ms: i64,
    /// The presigned URL ([`StageOp::SignGet`], [`StageOp::SignPut`],
    /// [`StageOp::SignPart`]), valid for [`StageRequest::expires_secs`].
    #[prost(string, tag = "4")]
    pub url: String,
    /// [`StageOp::SignPut`], [`StageOp::CreateMultipart`]: the new upload's id.
    #[prost(string, tag = "5")]
    pub upload_id: String,
    /// Headers the request to `url` must carry exactly (they are part of its signature):
    /// for [`StageOp::SignPut`], `x-amz-checksum-sha256` with the object's SHA-256, so S3
    /// itself refuses bytes that do not match their content address.
    #[prost(map = "string, string", tag = "6")]
    pub headers: std::collections::HashMap<String, String>,
}

/// How long a presigned stage URL is valid, in seconds (15 minutes: a URL is asked for
/// right before its one request, and S3 checks the expiry when the request starts).
pub const STAGE_URL_TTL_SECS: u64 = 15 * 60;

/// `DoAction` type that collects the garbage of a table's managed stage: body an encoded
/// [`StageGcRequest`], one result whose body is an encoded [`StageGcResult`]. Needs write
/// on the table. The objects that go are those no retained version of the table names in a
/// FILE column and that were last written more than the replica's stage grace ago (its
/// `--stage-gc-grace-secs`), and what uploads that never completed left behind as long
/// ago; S3 multipart uploads never completed and last written that long ago are aborted. SQL
/// `VACUUM ns.t` does the same and answers the objects removed plus the uploads aborted as
/// `count`.
pub const ACTION_STAGE_GC: &str = "lake.stage_gc";

/// Which table's stage to collect, and whether only to say what would go.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StageGcRequest {
    /// Namespace (SQL schema) of the table.
    #[prost(string, tag = "1")]
    pub namespace: String,
    /// Table name.
    #[prost(string, tag = "2")]
    pub table: String,
    /// Only list what would be removed; remove nothing.
    #[prost(bool, tag = "3")]
    pub dry_run: bool,
}

/// One stage object a [`StageGcRequest`] removed (or, in a dry run, would remove).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StageGcObject {
    /// The object's URI.
    #[prost(string, tag = "1")]
    pub uri: String,
    /// Its size in bytes.
    #[prost(uint64, tag = "2")]
    pub bytes: u64,
    /// When it was last written, Unix milliseconds.
    #[prost(int64, tag = "3")]
    pub last_modified_ms: i64,
}

/// The answer to a [`StageGcRequest`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct StageGcResult {
    /// The objects removed (a dry run: that would be removed), by URI.
    #[prost(message, repeated, tag = "1")]
    pub removed: Vec<StageGcObject>,
    /// Whether they were removed (false for a dry run).
    #[prost(bool, tag = "2")]
    pub applied: bool,
    /// Objects kept because a retained version names them.
    #[prost(uint64, tag = "3")]
    pub referenced: u64,
    /// Objects kept because they were written within the grace period.
    #[prost(uint64, tag = "4")]
    pub recent: u64,
    /// S3 multipart uploads never completed and last written (started, or sent a part)
    /// more than the grace period ago, aborted (a dry run: that would be aborted); S3 then frees their parts.
    #[prost(message, repeated, tag = "5")]
    pub aborted: Vec<StageGcUpload>,
    /// Unfinished multipart uploads kept because they were written within the grace
    /// period (they may still complete or resume).
    #[prost(uint64, tag = "6")]
    pub recent_uploads: u64,
}

/// One unfinished S3 multipart upload a [`StageGcRequest`] aborted (or, in a dry run,
/// would abort).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StageGcUpload {
    /// The URI of the object the upload would have created.
    #[prost(string, tag = "1")]
    pub uri: String,
    /// The bytes of its parts.
    #[prost(uint64, tag = "2")]
    pub bytes: u64,
    /// When it was last written (started, or sent a part), Unix milliseconds.
    #[prost(int64, tag = "3")]
    pub last_active_ms: i64,
}

/// What a client needs to know about a table beyond its Arrow schema.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TableDescription {
    /// Namespace (SQL schema) of the table.
    #[prost(string, tag = "1")]
    pub namespace: String,
    /// Table name.
    #[prost(string, tag = "2")]
    pub table: String,
    /// Registry id of the table (stable across renames of nothing: Lake tables are not
    /// renamed; a dropped and re-created table gets a new id).
    #[prost(uint64, tag = "3")]
    pub table_id: u64,
    /// URI of the table's managed stage for FILE bytes (`s3://bucket/prefix/stage/<id>`
    /// or `file:///…/stage/<id>`); see [`crate::stage`].
    #[prost(string, tag = "4")]
    pub stage_uri: String,
    /// Arrow IPC schema message of the table.
    #[prost(bytes = "vec", tag = "5")]
    pub schema_ipc: Vec<u8>,
}
