//! The Flight SQL client.

use std::collections::HashMap;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::sql::client::FlightSqlServiceClient;
use arrow_flight::sql::{
    CommandStatementIngest, ProstMessageExt, TableDefinitionOptions, TableExistsOption,
    TableNotExistOption,
};
use arrow_flight::{FlightClient, FlightDescriptor};
use futures::{StreamExt, TryStreamExt};
use prost::Message;
use tonic::transport::Channel;

use crate::file::FileRef;
use crate::stage::{Stage, UploadOptions};
use crate::wire::{
    ACTION_DESCRIBE_TABLE, ActionDescribeTableRequest, AppendResult, CommandAppend,
    TableDescription,
};

/// Errors of the SDK.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    /// The endpoint is malformed or unreachable.
    #[error("cannot connect to {endpoint}: {message}")]
    Connect { endpoint: String, message: String },
    /// The server answered with an error status; `message` is the server's explanation.
    #[error("{code:?}: {message}")]
    Server { code: tonic::Code, message: String },
    /// Arrow or Flight decoding failed.
    #[error("arrow: {0}")]
    Arrow(String),
    /// The table name is not `table`, `namespace.table` or `lake.namespace.table`.
    #[error("invalid table name {0:?}: use table, namespace.table or lake.namespace.table")]
    TableName(String),
    /// An argument is outside what is allowed; the message says what is.
    #[error("{0}")]
    InvalidArgument(String),
    /// A FILE object is not on its stage.
    #[error("{0}")]
    NotFound(String),
    /// The operation is not available here (e.g. presigning on a local-filesystem stage).
    #[error("not supported: {0}")]
    Unsupported(String),
    /// The object store failed.
    #[error("storage error at {uri}: {message}")]
    Storage { uri: String, message: String },
    /// Stored bytes do not match their FILE value (size or SHA-256).
    #[error("corrupt object {uri}: {message}")]
    Corrupt { uri: String, message: String },
    /// A local file could not be read or written.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

impl From<arrow::error::ArrowError> for SdkError {
    fn from(e: arrow::error::ArrowError) -> Self {
        match e {
            arrow::error::ArrowError::ExternalError(inner) => {
                match inner.downcast::<tonic::Status>() {
                    Ok(status) => (*status).into(),
                    Err(other) => Self::Arrow(other.to_string()),
                }
            }
            other => Self::Arrow(other.to_string()),
        }
    }
}

impl From<tonic::Status> for SdkError {
    fn from(s: tonic::Status) -> Self {
        Self::Server {
            code: s.code(),
            message: s.message().to_string(),
        }
    }
}

impl From<FlightError> for SdkError {
    fn from(e: FlightError) -> Self {
        match e {
            FlightError::Tonic(status) => (*status).into(),
            FlightError::Arrow(a) => a.into(),
            other => Self::Arrow(other.to_string()),
        }
    }
}

/// A Lake table name: `namespace.table` (catalog `lake` implied).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableName {
    /// Namespace (SQL schema).
    pub namespace: String,
    /// Table.
    pub table: String,
}

impl TableName {
    /// Parses `table` (namespace `default`, as in SQL), `namespace.table` or
    /// `lake.namespace.table`.
    ///
    /// # Errors
    /// [`SdkError::TableName`] for any other shape.
    pub fn parse(name: &str) -> Result<Self, SdkError> {
        let parts: Vec<&str> = name.split('.').collect();
        let (namespace, table) = match parts.as_slice() {
            [t] => ("default", *t),
            [ns, t] => (*ns, *t),
            ["lake", ns, t] => (*ns, *t),
            _ => return Err(SdkError::TableName(name.to_string())),
        };
        if namespace.is_empty() || table.is_empty() {
            return Err(SdkError::TableName(name.to_string()));
        }
        Ok(Self {
            namespace: namespace.to_string(),
            table: table.to_string(),
        })
    }
}

/// A connection to a Lake Query replica.
pub struct LakeClient {
    channel: Channel,
    sql: FlightSqlServiceClient<Channel>,
    /// The `authorization` header value (`Bearer …`) a login gave, sent with every call.
    bearer: Option<String>,
}

impl LakeClient {
    /// Connects to a Query endpoint such as `http://127.0.0.1:50051`. The Flight forms
    /// `grpc://`, `grpc+tcp://` (plain) and `grpc+tls://` (TLS) are accepted too;
    /// `https://` and `grpc+tls://` check the server's certificate against the system's
    /// roots (see [`Self::connect_with_ca`] for a CA of your own).
    ///
    /// # Errors
    /// [`SdkError::Connect`].
    pub async fn connect(endpoint: &str) -> Result<Self, SdkError> {
        Self::connect_with_ca(endpoint, None).await
    }

    /// [`Self::connect`], checking a TLS server's certificate against `ca_pem` (PEM
    /// certificates, e.g. a private CA's) instead of the system's roots.
    ///
    /// # Errors
    /// [`SdkError::Connect`] for a malformed or unreachable endpoint, a CA that does not
    /// parse, a CA given for a plain endpoint, or a failed TLS handshake (naming why,
    /// e.g. an unknown issuer).
    pub async fn connect_with_ca(endpoint: &str, ca_pem: Option<&[u8]>) -> Result<Self, SdkError> {
        use tonic::transport::{Certificate, ClientTlsConfig};
        let connect_error = |message: String| SdkError::Connect {
            endpoint: endpoint.to_string(),
            message,
        };
        let (tls, rest) = match endpoint.split_once("://") {
            Some(("http" | "grpc" | "grpc+tcp", rest)) => (false, rest),
            Some(("https" | "grpc+tls", rest)) => (true, rest),
            _ => {
                return Err(connect_error(
                    "use http://HOST:PORT or grpc://HOST:PORT (plain), https://HOST:PORT or grpc+tls://HOST:PORT (TLS)".into(),
                ));
            }
        };
        let scheme = if tls { "https" } else { "http" };
        let mut channel = Channel::from_shared(format!("{scheme}://{rest}"))
            .map_err(|e| connect_error(e.to_string()))?;
        match (tls, ca_pem) {
            (true, ca) => {
                let config = ClientTlsConfig::new();
                let config = match ca {
                    Some(ca)
                        if !String::from_utf8_lossy(ca).contains("-----BEGIN CERTIFICATE-----") =>
                    {
                        return Err(connect_error(
                            "TLS: the CA holds no PEM certificate (a \"-----BEGIN CERTIFICATE-----\" block)".into(),
                        ));
                    }
                    Some(ca) => config.ca_certificate(Certificate::from_pem(ca)),
                    None => config.with_native_roots(),
                };
                channel = channel
                    .tls_config(config)
                    .map_err(|e| connect_error(format!("TLS settings: {e}")))?;
            }
            (false, Some(_)) => {
                return Err(connect_error(
                    "a CA was given for a plain endpoint: use https:// or grpc+tls://".into(),
                ));
            }
            (false, None) => {}
        }
        let channel = channel.connect().await.map_err(|e| {
            // tonic says only "transport error" at the top; the cause is underneath.
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                message = format!("{message}: {cause}");
                source = cause.source();
            }
            connect_error(message)
        })?;
        Ok(Self::from_channel(channel))
    }

    /// A client over an established `channel` (e.g. an in-process one).
    pub fn from_channel(channel: Channel) -> Self {
        Self {
            sql: FlightSqlServiceClient::new_from_inner(flight_service(channel.clone())),
            channel,
            bearer: None,
        }
    }

    /// Logs in to a server that requires it: a Flight `Handshake` with HTTP Basic
    /// credentials (RFC 7617). Every later call of this client carries the bearer token
    /// the server returned, until it expires (then log in again).
    ///
    /// # Errors
    /// [`SdkError::Server`] with `UNAUTHENTICATED` for a wrong name or password;
    /// [`SdkError::Arrow`] when the server returned no bearer token.
    pub async fn login(&mut self, user: &str, password: &str) -> Result<(), SdkError> {
        use base64::Engine as _;
        let credentials =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let mut request = tonic::Request::new(futures::stream::iter([
            arrow_flight::HandshakeRequest::default(),
        ]));
        request.metadata_mut().insert(
            "authorization",
            format!("Basic {credentials}").parse().map_err(|_| {
                SdkError::InvalidArgument(
                    "user names and passwords are text without line breaks".into(),
                )
            })?,
        );
        let response = flight_service(self.channel.clone())
            .handshake(request)
            .await?;
        let bearer = response
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .filter(|v| v.starts_with("Bearer "))
            .ok_or_else(|| {
                SdkError::Arrow("the server's Handshake returned no bearer token".into())
            })?
            .to_string();
        self.sql.set_token(bearer["Bearer ".len()..].to_string());
        self.bearer = Some(bearer);
        Ok(())
    }

    /// Sends `token` as the bearer token of every later call (a token a login gave
    /// elsewhere, or one an operator minted for a service).
    pub fn set_token(&mut self, token: &str) {
        self.sql.set_token(token.to_string());
        self.bearer = Some(format!("Bearer {token}"));
    }

    /// `message` as a request carrying this client's bearer token, if it logged in.
    fn request<T>(&self, message: T) -> Result<tonic::Request<T>, SdkError> {
        let mut request = tonic::Request::new(message);
        if let Some(bearer) = &self.bearer {
            request.metadata_mut().insert(
                "authorization",
                bearer
                    .parse()
                    .map_err(|_| SdkError::Arrow("malformed bearer token".into()))?,
            );
        }
        Ok(request)
    }

    /// Runs one SQL statement and collects its result. An empty result is one batch with no
    /// rows, so the columns (the `FlightInfo` schema) are never lost.
    ///
    /// # Errors
    /// [`SdkError::Server`] with the server's message for bad SQL, unknown tables, …
    pub async fn sql(&mut self, query: &str) -> Result<Vec<RecordBatch>, SdkError> {
        let info = self.sql.execute(query.to_string(), None).await?;
        let schema = info
            .clone()
            .try_decode_schema()
            .map_err(|e| SdkError::Arrow(e.to_string()))?;
        let batches: Vec<RecordBatch> = self.collect(info).try_collect().await?;
        if batches.iter().all(|b| b.num_rows() == 0) {
            return Ok(vec![RecordBatch::new_empty(std::sync::Arc::new(schema))]);
        }
        Ok(batches)
    }

    /// Runs one SQL statement and streams its result batches, in order.
    ///
    /// # Errors
    /// As [`Self::sql`].
    pub async fn sql_stream(
        &mut self,
        query: &str,
    ) -> Result<futures::stream::BoxStream<'static, Result<RecordBatch, SdkError>>, SdkError> {
        let info = self.sql.execute(query.to_string(), None).await?;
        Ok(self.collect(info))
    }

    /// The result batches of every endpoint of `info`, in order.
    fn collect(
        &self,
        info: arrow_flight::FlightInfo,
    ) -> futures::stream::BoxStream<'static, Result<RecordBatch, SdkError>> {
        let sql = self.sql.clone();
        futures::stream::iter(info.endpoint)
            .then(move |endpoint| {
                let mut sql = sql.clone();
                async move {
                    let ticket = endpoint
                        .ticket
                        .ok_or_else(|| SdkError::Arrow("endpoint without ticket".into()))?;
                    Ok::<_, SdkError>(sql.do_get(ticket).await?.map_err(SdkError::from))
                }
            })
            .try_flatten()
            .boxed()
    }

    /// Creates `namespace.table` with `schema` (Flight SQL ingest of zero rows with
    /// `if_not_exist = create`, `if_exists = fail`).
    ///
    /// # Errors
    /// [`SdkError::Server`] if the table exists or the namespace does not.
    pub async fn create_table(&mut self, table: &str, schema: SchemaRef) -> Result<(), SdkError> {
        let name = TableName::parse(table)?;
        let command = CommandStatementIngest {
            table_definition_options: Some(TableDefinitionOptions {
                if_not_exist: TableNotExistOption::Create.into(),
                if_exists: TableExistsOption::Fail.into(),
            }),
            table: name.table,
            schema: Some(name.namespace),
            catalog: Some("lake".into()),
            temporary: false,
            transaction_id: None,
            options: HashMap::new(),
        };
        let empty = RecordBatch::new_empty(schema.clone());
        self.put(command.as_any().encode_to_vec(), schema, vec![empty])
            .await?;
        Ok(())
    }

    /// Drops `namespace.table`.
    ///
    /// # Errors
    /// [`SdkError::Server`] if it does not exist.
    pub async fn drop_table(&mut self, table: &str) -> Result<(), SdkError> {
        let name = TableName::parse(table)?;
        self.sql(&format!(
            "DROP TABLE lake.\"{}\".\"{}\"",
            name.namespace, name.table
        ))
        .await?;
        Ok(())
    }

    /// Appends `batches` to `table` as one commit, idempotently under `operation_id` (1 to
    /// 512 bytes, no control characters): a retry with the same id and the same rows
    /// returns the original version and writes nothing; the same id with other rows is
    /// refused.
    ///
    /// # Errors
    /// [`SdkError::Server`]: unknown table, schema mismatch (the message names both
    /// schemas), operation id reused with another payload or outside the bounds.
    pub async fn append(
        &mut self,
        table: &str,
        batches: Vec<RecordBatch>,
        operation_id: &str,
    ) -> Result<AppendResult, SdkError> {
        let Some(first) = batches.first() else {
            return Err(SdkError::Arrow("append needs at least one batch".into()));
        };
        let schema = first.schema();
        let rows = futures::stream::iter(batches.into_iter().map(Ok));
        self.append_stream(table, schema, rows, operation_id).await
    }

    /// Appends the batches of `rows` (all of `schema`) to `table` as one commit, streaming
    /// them: neither this process nor the Query replica holds more than a few batches at a
    /// time, whatever the total. Idempotent under `operation_id` as [`Self::append`]. An
    /// error of `rows` ends the append and commits nothing.
    ///
    /// # Errors
    /// As [`Self::append`].
    pub async fn append_stream(
        &mut self,
        table: &str,
        schema: SchemaRef,
        rows: impl futures::Stream<Item = Result<RecordBatch, SdkError>> + Send + 'static,
        operation_id: &str,
    ) -> Result<AppendResult, SdkError> {
        self.put_rows(table, schema, rows, operation_id, false)
            .await
    }

    /// A `CommandAppend` DoPut of `rows`.
    async fn put_rows(
        &mut self,
        table: &str,
        schema: SchemaRef,
        rows: impl futures::Stream<Item = Result<RecordBatch, SdkError>> + Send + 'static,
        operation_id: &str,
        create_if_missing: bool,
    ) -> Result<AppendResult, SdkError> {
        let name = TableName::parse(table)?;
        let command = CommandAppend {
            namespace: name.namespace,
            table: name.table,
            operation_id: operation_id.to_string(),
            ends_with_marker: true,
            create_if_missing,
        };
        let any = prost_types_any(CommandAppend::TYPE_URL, command.encode_to_vec());
        let metadata = self.put_stream(any, schema, rows).await?;
        AppendResult::decode(metadata.as_slice())
            .map_err(|e| SdkError::Arrow(format!("malformed append result: {e}")))
    }

    /// Writes the batches of `rows` (all of `schema`) to `table` as one version: the
    /// table's first when it does not exist yet (it is created with `schema`; if the rows
    /// fail, no table remains), an append otherwise. Streams like [`Self::append_stream`],
    /// idempotent under `operation_id` like [`Self::append`] (also for the version that
    /// created the table).
    ///
    /// # Errors
    /// As [`Self::append`]; a type a Lake table cannot store.
    pub async fn ingest(
        &mut self,
        table: &str,
        schema: SchemaRef,
        rows: impl futures::Stream<Item = Result<RecordBatch, SdkError>> + Send + 'static,
        operation_id: &str,
    ) -> Result<AppendResult, SdkError> {
        self.put_rows(table, schema, rows, operation_id, true).await
    }

    /// Describes `table`: its id, schema and the URI of its managed stage.
    ///
    /// # Errors
    /// [`SdkError::Server`] (`NOT_FOUND`) for an unknown table.
    pub async fn describe_table(&mut self, table: &str) -> Result<TableDescription, SdkError> {
        let name = TableName::parse(table)?;
        let request = ActionDescribeTableRequest {
            namespace: name.namespace,
            table: name.table,
        };
        self.action(ACTION_DESCRIBE_TABLE, &request).await
    }

    /// Collects the garbage of `table`'s managed stage ([`crate::wire::ACTION_STAGE_GC`]):
    /// the objects no retained version names and that are older than the replica's stage
    /// grace, and unfinished uploads' leftovers as old. `dry_run`: only list them.
    ///
    /// # Errors
    /// [`SdkError::Server`] (`PERMISSION_DENIED` without write on the table, `NOT_FOUND`
    /// for an unknown table); [`SdkError::Arrow`] for a malformed answer.
    pub async fn collect_stage_garbage(
        &mut self,
        table: &str,
        dry_run: bool,
    ) -> Result<crate::wire::StageGcResult, SdkError> {
        let name = TableName::parse(table)?;
        let request = crate::wire::StageGcRequest {
            namespace: name.namespace,
            table: name.table,
            dry_run,
        };
        self.action(crate::wire::ACTION_STAGE_GC, &request).await
    }

    /// Runs `DoAction` `kind` with `request` as its body; the first result, decoded.
    async fn action<R: Message + Default>(
        &mut self,
        kind: &str,
        request: &impl Message,
    ) -> Result<R, SdkError> {
        let mut client = FlightClient::new_from_inner(flight_service(self.channel.clone()));
        if let Some(bearer) = &self.bearer {
            client.add_header("authorization", bearer)?;
        }
        let mut results = client
            .do_action(arrow_flight::Action::new(kind, request.encode_to_vec()))
            .await?;
        let body = results
            .next()
            .await
            .ok_or_else(|| SdkError::Arrow(format!("{kind} returned no result")))??;
        R::decode(body).map_err(|e| SdkError::Arrow(format!("malformed answer to {kind}: {e}")))
    }

    /// The managed stage of `table`, opened from its description. An S3 stage is reached
    /// through this replica: it checks this client's grants and hands out presigned URLs
    /// for each object request, so the client needs no storage credentials and can touch
    /// nothing but this table's objects (see [`crate::wire::ACTION_STAGE`]). A
    /// local-filesystem stage is opened directly (clients on the replica's machine).
    ///
    /// # Errors
    /// [`SdkError::InvalidArgument`] when the table has no FILE column (nothing could
    /// reference what is staged); as [`Self::describe_table`] and [`Stage::open`].
    pub async fn stage(&mut self, table: &str) -> Result<Stage, SdkError> {
        let description = self.describe_table(table).await?;
        let schema = arrow::datatypes::Schema::try_from(arrow_flight::IpcMessage(
            description.schema_ipc.into(),
        ))
        .map_err(|e| SdkError::Arrow(format!("malformed table schema: {e}")))?;
        if !schema
            .fields()
            .iter()
            .any(|f| crate::file::is_file_field(f))
        {
            return Err(SdkError::InvalidArgument(format!(
                "table {table} has no FILE column, so nothing could reference a file staged for it; add one (e.g. CREATE TABLE … (id BIGINT, clip FILE))"
            )));
        }
        Stage::through(&description.stage_uri, self.transport())
    }

    /// How a stage reached through this replica calls it.
    fn transport(&self) -> crate::granted::Transport {
        crate::granted::Transport {
            flight: flight_service(self.channel.clone()),
            bearer: self.bearer.clone(),
        }
    }

    /// The stage and FILE value of stage object `uri` (`<stage>/sha256/<sha256>`), through
    /// this replica (read grant on the table), as [`Stage::stat`] does with credentials.
    ///
    /// # Errors
    /// As [`Stage::stat`]; [`SdkError::Server`] with `PERMISSION_DENIED` when this client
    /// may not read the table.
    pub async fn stat_file(&self, uri: &str) -> Result<(Stage, FileRef), SdkError> {
        Stage::stat_through(uri, self.transport()).await
    }

    /// Uploads the file at `path` to `table`'s stage with default [`UploadOptions`] and
    /// returns the FILE value for a row. The bytes go to object storage directly; the Query
    /// replica only answers [`Self::describe_table`].
    ///
    /// # Errors
    /// As [`Self::stage`] and [`Stage::upload_path`].
    pub async fn upload_file(
        &mut self,
        table: &str,
        path: &std::path::Path,
        media_type: &str,
    ) -> Result<FileRef, SdkError> {
        let stage = self.stage(table).await?;
        Ok(stage
            .upload_path(path, media_type, &UploadOptions::default())
            .await?
            .file)
    }

    /// Uploads the bytes of `reader` to `table`'s stage (spooled to a temporary file while
    /// hashing, so memory stays bounded; see [`Stage::upload_reader`]) and returns the FILE
    /// value for a row.
    ///
    /// # Errors
    /// As [`Self::stage`] and [`Stage::upload_reader`].
    pub async fn upload_reader(
        &mut self,
        table: &str,
        reader: impl tokio::io::AsyncRead + Unpin,
        media_type: &str,
    ) -> Result<FileRef, SdkError> {
        let stage = self.stage(table).await?;
        Ok(stage
            .upload_reader(reader, media_type, &UploadOptions::default())
            .await?
            .file)
    }

    /// Streams the bytes of `file`, verified at the end (see [`Stage::open_file`]).
    ///
    /// # Errors
    /// As [`Stage::for_file`] and [`Stage::open_file`].
    pub async fn open_file(
        &self,
        file: &FileRef,
    ) -> Result<futures::stream::BoxStream<'static, Result<bytes::Bytes, SdkError>>, SdkError> {
        Stage::for_file_through(file, self.transport())?
            .open_file(file)
            .await
    }

    /// Bytes `range` of `file` (see [`Stage::read_range`]).
    ///
    /// # Errors
    /// As [`Stage::for_file`] and [`Stage::read_range`].
    pub async fn read_range(
        &self,
        file: &FileRef,
        range: std::ops::Range<u64>,
    ) -> Result<bytes::Bytes, SdkError> {
        Stage::for_file_through(file, self.transport())?
            .read_range(file, range)
            .await
    }

    /// DoPut of `batches` under a descriptor carrying `command`; returns the first
    /// `PutResult.app_metadata`.
    async fn put(
        &mut self,
        command: Vec<u8>,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<Vec<u8>, SdkError> {
        self.put_stream(
            command,
            schema,
            futures::stream::iter(batches.into_iter().map(Ok)),
        )
        .await
    }

    /// A DoPut of `command` with the batches of `rows` sent as they come; returns the first
    /// result's app metadata.
    ///
    /// The rows end with an [`crate::wire::END_OF_ROWS`] message (the command asks the
    /// server to expect it), and when `rows` fail midway the call is cancelled instead: the
    /// server sees an upload without its end and commits nothing.
    async fn put_stream(
        &mut self,
        command: Vec<u8>,
        schema: SchemaRef,
        rows: impl futures::Stream<Item = Result<RecordBatch, SdkError>> + Send + 'static,
    ) -> Result<Vec<u8>, SdkError> {
        let descriptor = FlightDescriptor::new_cmd(command);
        let (failed_tx, failed_rx) = tokio::sync::oneshot::channel::<SdkError>();
        let mut failed_tx = Some(failed_tx);
        let frames = FlightDataEncoderBuilder::new()
            .with_schema(schema)
            .with_flight_descriptor(Some(descriptor))
            .build(rows.map_err(|e| FlightError::ExternalError(Box::new(e))))
            .scan((), move |_, frame| {
                futures::future::ready(match frame {
                    Ok(frame) => Some(futures::future::Either::Left(futures::stream::once(
                        futures::future::ready(frame),
                    ))),
                    Err(e) => {
                        // Report the failure and never end the request body.
                        if let Some(tx) = failed_tx.take() {
                            let _ = tx.send(match e {
                                FlightError::ExternalError(e) => match e.downcast::<SdkError>() {
                                    Ok(e) => *e,
                                    Err(e) => SdkError::Arrow(e.to_string()),
                                },
                                other => SdkError::Arrow(other.to_string()),
                            });
                        }
                        Some(futures::future::Either::Right(futures::stream::pending()))
                    }
                })
            })
            .flatten()
            .chain(futures::stream::once(futures::future::ready(
                crate::wire::end_of_rows(),
            )));
        let mut client = flight_service(self.channel.clone());
        let request = self.request(frames)?;
        let call = async move {
            let mut results = client.do_put(request).await?.into_inner();
            let mut metadata = Vec::new();
            while let Some(result) = results.message().await? {
                if metadata.is_empty() {
                    metadata = result.app_metadata.to_vec();
                }
            }
            Ok::<_, SdkError>(metadata)
        };
        tokio::select! {
            done = call => done,
            // Dropping the call cancels it.
            Ok(failure) = failed_rx => Err(failure),
        }
    }
}

/// Largest gRPC message the SDK sends or receives: 256 MiB, the Query replica's request
/// limit (`lake_query::flight::REQUEST_BYTES_MAX`). tonic's default of 4 MiB would refuse
/// a result batch holding one large value.
const MESSAGE_BYTES_MAX: usize = 256 << 20;

fn flight_service(
    channel: Channel,
) -> arrow_flight::flight_service_client::FlightServiceClient<Channel> {
    arrow_flight::flight_service_client::FlightServiceClient::new(channel)
        .max_decoding_message_size(MESSAGE_BYTES_MAX)
        .max_encoding_message_size(MESSAGE_BYTES_MAX)
}

/// Encodes a `google.protobuf.Any` (field 1: type_url, field 2: value).
fn prost_types_any(type_url: &str, value: Vec<u8>) -> Vec<u8> {
    arrow_flight::sql::Any {
        type_url: type_url.to_string(),
        value: value.into(),
    }
    .encode_to_vec()
}
