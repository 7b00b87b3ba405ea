//! The Arrow Flight SQL service of a Query replica.
//!
//! Follows the Flight SQL protocol (`FlightSql.proto`, arrow-rs `FlightSqlService`):
//! statements and prepared statements are planned in `GetFlightInfo` and served by `DoGet`
//! from a sealed ticket that pins every table version, so any replica can serve it; handles
//! of prepared statements are sealed and stateless too (`DoPut` with parameters returns an
//! updated handle). Endpoints carry no location: "this connection".

use std::pin::Pin;
use std::sync::Arc;

use arrow::datatypes::Schema;
use arrow_flight::decode::{DecodedPayload, FlightDataDecoder, FlightRecordBatchStream};
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::FlightService;
use arrow_flight::sql::metadata::{SqlInfoData, SqlInfoDataBuilder};
use arrow_flight::sql::server::{FlightSqlService, PeekableFlightDataStream};
use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, Any, CommandGetCatalogs, CommandGetDbSchemas,
    CommandGetSqlInfo, CommandGetTableTypes, CommandGetTables, CommandPreparedStatementQuery,
    CommandPreparedStatementUpdate, CommandStatementIngest, CommandStatementQuery,
    CommandStatementUpdate, DoPutPreparedStatementResult, ProstMessageExt, SqlInfo,
    TableExistsOption, TableNotExistOption, TicketStatementQuery,
};
use arrow_flight::{
    FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse, IpcMessage,
    PutResult, SchemaAsIpc, Ticket,
};
use futures::{Stream, StreamExt, TryStreamExt};
use lake_sdk::wire::{
    ACTION_DESCRIBE_TABLE, ACTION_STAGE, ACTION_STAGE_GC, ActionDescribeTableRequest, AppendResult,
    CommandAppend, END_OF_ROWS, INGEST_END_MARKER_OPTION, INGEST_OPERATION_ID_OPTION,
    StageGcRequest, StageRequest,
};
use prost::Message;
use tonic::{Request, Response, Status, Streaming};

use lake_core::Privilege;

use crate::QueryError;
use crate::dataset::RowStream;
use crate::engine::{Engine, Planned, Writes};
use crate::sql::{ICEBERG_CATALOG, LAKE_CATALOG};
use crate::ticket::Sealed;

/// Flight's action that cancels a statement (`Flight.proto`: "CancelFlightInfo").
const ACTION_CANCEL_FLIGHT_INFO: &str = "CancelFlightInfo";

/// Largest gRPC message accepted or sent, in bytes: one SQL text, one parameter set, one
/// Arrow record batch of a DoPut (a DoPut itself streams any number of them).
pub const REQUEST_BYTES_MAX: usize = 256 << 20;

/// The Flight SQL service.
#[derive(Clone)]
pub struct LakeFlightService {
    engine: Arc<Engine>,
    sql_info: Arc<SqlInfoData>,
}

impl LakeFlightService {
    /// A service over `engine`.
    ///
    /// # Errors
    /// [`QueryError::Execution`] if the static SqlInfo table cannot be built.
    pub fn new(engine: Arc<Engine>) -> Result<Self, QueryError> {
        let mut info = SqlInfoDataBuilder::new();
        info.append(SqlInfo::FlightSqlServerName, "Lake");
        info.append(SqlInfo::FlightSqlServerVersion, env!("CARGO_PKG_VERSION"));
        info.append(SqlInfo::FlightSqlServerArrowVersion, "58.4.1");
        info.append(SqlInfo::FlightSqlServerReadOnly, false);
        info.append(SqlInfo::FlightSqlServerSql, true);
        info.append(SqlInfo::FlightSqlServerSubstrait, false);
        info.append(SqlInfo::FlightSqlServerTransaction, 0i32);
        info.append(SqlInfo::FlightSqlServerCancel, false);
        info.append(SqlInfo::FlightSqlServerStatementTimeout, 0i32);
        info.append(SqlInfo::FlightSqlServerTransactionTimeout, 0i32);
        info.append(SqlInfo::SqlDdlCatalog, false);
        info.append(SqlInfo::SqlDdlSchema, true);
        info.append(SqlInfo::SqlDdlTable, true);
        info.append(SqlInfo::SqlIdentifierQuoteChar, "\"");
        info.append(SqlInfo::SqlQuotedIdentifierCase, 0i32);
        let sql_info = info
            .build()
            .map_err(|e| QueryError::Execution(format!("sql info: {e}")))?;
        Ok(Self {
            engine,
            sql_info: Arc::new(sql_info),
        })
    }

    /// The tonic service, with message size limits set.
    pub fn into_server(self) -> arrow_flight::flight_service_server::FlightServiceServer<Self> {
        arrow_flight::flight_service_server::FlightServiceServer::new(self)
            .max_decoding_message_size(REQUEST_BYTES_MAX)
            .max_encoding_message_size(REQUEST_BYTES_MAX)
    }

    fn flight_info(
        &self,
        schema: &Schema,
        ticket: Vec<u8>,
        descriptor: FlightDescriptor,
    ) -> Result<FlightInfo, Status> {
        let endpoint = FlightEndpoint::new().with_ticket(Ticket::new(ticket));
        FlightInfo::new()
            .try_with_schema(schema)
            .map_err(|e| Status::internal(e.to_string()))
            .map(|info| {
                info.with_endpoint(endpoint)
                    .with_descriptor(descriptor)
                    .with_ordered(true)
            })
    }

    /// A turn for a write of the caller of `request` (see [`crate::running`]).
    fn admit_write<T>(&self, request: &Request<T>) -> Result<crate::running::Slot, Status> {
        Ok(self
            .engine
            .running()
            .admit(principal(request).as_deref(), None)?)
    }

    /// Cancels the statements whose tickets `info`'s endpoints carry (Flight's
    /// `CancelFlightInfo`); each ticket must be one of ours issued to the caller.
    fn cancel(&self, info: &FlightInfo, principal: Option<&str>) -> Result<(), Status> {
        if info.endpoint.is_empty() {
            return Err(Status::invalid_argument(
                "CancelFlightInfo names no endpoint: send the FlightInfo GetFlightInfo returned",
            ));
        }
        for endpoint in &info.endpoint {
            let ticket = endpoint.ticket.as_ref().ok_or_else(|| {
                Status::invalid_argument("CancelFlightInfo: an endpoint without a ticket")
            })?;
            let handle = Any::decode(ticket.ticket.as_ref())
                .ok()
                .and_then(|any| any.unpack::<TicketStatementQuery>().ok().flatten())
                .ok_or_else(|| {
                    Status::invalid_argument(
                        "CancelFlightInfo: a ticket that is not a statement ticket of this Lake deployment",
                    )
                })?
                .statement_handle;
            // Only the principal the ticket was issued to may cancel it.
            self.engine.key().open(&handle, principal)?;
            let expires_ms = crate::ticket::now_ms().saturating_add(
                u64::try_from(crate::ticket::TICKET_TTL.as_millis()).unwrap_or(u64::MAX),
            );
            self.engine.running().cancel(&handle, expires_ms);
        }
        Ok(())
    }

    /// Checks that `access` may append to (`Write`) or create (`Admin`) `namespace.table`
    /// by ingest or append; checked before any row is read.
    fn authorize_put(
        &self,
        access: &crate::access::Access,
        namespace: &str,
        table: &str,
        need: Privilege,
    ) -> Result<(), Status> {
        let (doing, scope) = match need {
            Privilege::Admin => ("create table", crate::access::namespace(namespace)),
            _ => ("write to", crate::access::table_scope(namespace, table)),
        };
        Ok(self.engine.authorize(
            access,
            &scope,
            need,
            &format!("{doing} {LAKE_CATALOG}.{namespace}.{table}"),
        )?)
    }

    /// Whether listings show catalog `iceberg` to `access`: configured, and readable.
    fn iceberg_listed(&self, access: &crate::access::Access) -> bool {
        self.engine.iceberg().is_some() && self.engine.may_read_iceberg(access)
    }

    fn sealed_ticket(&self, sealed: &Sealed, principal: Option<&str>) -> Vec<u8> {
        TicketStatementQuery {
            statement_handle: self.engine.key().seal(sealed, principal).into(),
        }
        .as_any()
        .encode_to_vec()
    }

    async fn statement_info(
        &self,
        sql: String,
        params: Option<String>,
        writes: Writes,
        (principal, access): (Option<String>, crate::access::Access),
        descriptor: FlightDescriptor,
    ) -> Result<Response<FlightInfo>, Status> {
        let engine = self.engine.clone();
        let at_planning = matches!(writes, Writes::AtPlanning { .. });
        let planned = to_completion(async move {
            engine
                .prepare_statement(&sql, params, writes, &access)
                .await
        })
        .await
        .map_err(Status::from);
        match &planned {
            // A write ran here: its audit line.
            Ok(Planned {
                written: Some(rows),
                ..
            }) => crate::audit::Audit::write(principal.as_deref()).written(&Ok::<_, Status>(*rows)),
            // A statement refused or failed while planning (or, as a write, running): no
            // ticket will carry its line.
            Err(e) if at_planning => {
                crate::audit::Audit::of(principal.as_deref(), "prepared").written(&Err::<i64, _>(e))
            }
            Err(status) => {
                crate::audit::Audit::of(principal.as_deref(), "statement").refused(status.code())
            }
            _ => {}
        }
        let Planned {
            schema,
            ticket,
            written,
        } = planned?;
        let ticket = self.sealed_ticket(&ticket, principal.as_deref());
        let mut info = self.flight_info(&schema, ticket, descriptor)?;
        if let Some(rows) = written {
            // ADBC reports this as the statement's row count.
            info = info.with_total_records(rows);
        }
        Ok(Response::new(info))
    }

    /// Info for a metadata command: the schema, and the command itself as the ticket.
    fn metadata_info(
        &self,
        schema: &Schema,
        command: Any,
        descriptor: FlightDescriptor,
    ) -> Result<Response<FlightInfo>, Status> {
        Ok(Response::new(self.flight_info(
            schema,
            command.encode_to_vec(),
            descriptor,
        )?))
    }

    /// A prepared statement handle's SQL, bound parameters and the operation id of that
    /// bind.
    fn prepared_sql(
        &self,
        handle: &[u8],
        principal: Option<&str>,
    ) -> Result<PreparedHandle, Status> {
        match self.engine.key().open(handle, principal)? {
            Sealed::Prepared {
                sql,
                params,
                operation_id,
            } => Ok(PreparedHandle {
                sql,
                params,
                operation_id,
            }),
            _ => Err(Status::invalid_argument(
                "not a prepared statement handle of this server",
            )),
        }
    }
}

/// What a prepared statement handle carries.
struct PreparedHandle {
    sql: String,
    params: Option<String>,
    operation_id: Option<String>,
}

/// The gRPC request header in which a client names the operation a write is part of, so
/// that sending the request again cannot write twice (the "Idempotency-Key" of
/// draft-ietf-httpapi-idempotency-key-header; ADBC sets it with the option
/// `adbc.flight.sql.rpc.call_header.idempotency-key`).
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";
/// Longest idempotency key accepted, in bytes.
pub const IDEMPOTENCY_KEY_MAX: usize = 256;

/// The request's idempotency key, if it has one.
///
/// # Errors
/// `INVALID_ARGUMENT` for an empty or overlong key, or one with characters outside
/// printable ASCII.
fn idempotency_key<T>(request: &Request<T>) -> Result<Option<String>, Status> {
    let Some(value) = request.metadata().get(IDEMPOTENCY_KEY_HEADER) else {
        return Ok(None);
    };
    let key = value.to_str().unwrap_or_default();
    if key.is_empty()
        || key.len() > IDEMPOTENCY_KEY_MAX
        || !key.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(Status::invalid_argument(format!(
            "header {IDEMPOTENCY_KEY_HEADER} must be 1 to {IDEMPOTENCY_KEY_MAX} printable ASCII characters without spaces"
        )));
    }
    Ok(Some(format!("key-{key}")))
}

/// Runs `work` (a statement that may write) to completion on its own task: a client that
/// cancels its call does not stop a write halfway; it only stops waiting for the answer.
async fn to_completion<T: Send + 'static>(
    work: impl std::future::Future<Output = Result<T, QueryError>> + Send + 'static,
) -> Result<T, QueryError> {
    tokio::spawn(work)
        .await
        .map_err(|e| QueryError::Execution(format!("statement task failed: {e}")))?
}

type DoGetStream = <LakeFlightService as FlightService>::DoGetStream;

fn batch_stream(
    schema: Arc<Schema>,
    batches: impl Stream<Item = Result<arrow::record_batch::RecordBatch, QueryError>> + Send + 'static,
) -> Response<DoGetStream> {
    let batches = batches.map_err(|e| FlightError::Tonic(Box::new(Status::from(e))));
    let stream = FlightDataEncoderBuilder::new()
        .with_schema(schema)
        .build(batches)
        .map_err(Status::from);
    Response::new(Box::pin(stream))
}

fn one_batch(batch: arrow::record_batch::RecordBatch) -> Response<DoGetStream> {
    let schema = batch.schema();
    batch_stream(schema, futures::stream::iter([Ok(batch)]))
}

fn arrow_status(e: arrow::error::ArrowError) -> Status {
    Status::internal(e.to_string())
}

/// Decodes the Arrow rows of a DoPut.
fn put_batches(
    request: Request<PeekableFlightDataStream>,
) -> impl Stream<Item = Result<arrow::record_batch::RecordBatch, QueryError>> {
    let flight = request
        .into_inner()
        .map_err(|status| FlightError::Tonic(Box::new(status)));
    FlightRecordBatchStream::new_from_flight_data(flight).map_err(put_error)
}

/// The Arrow rows of a DoPut as they arrive, with their schema (from the stream's schema
/// message, read before the rows; `None` when the client sent none). Nothing is collected:
/// an append of any size streams into Lance. With `require_end`, the rows are complete only
/// when an [`END_OF_ROWS`] message closes them: a stream that ends without it (a client
/// that failed or went away) ends the rows with an error, so nothing commits.
async fn put_rows(
    request: Request<PeekableFlightDataStream>,
    require_end: bool,
) -> Result<(Option<Arc<Schema>>, RowStream), QueryError> {
    let flight = request
        .into_inner()
        .map_err(|status| FlightError::Tonic(Box::new(status)));
    let mut decoder = FlightDataDecoder::new(flight);
    // The schema message (and, from some clients, the first batch in its place).
    let mut schema = None;
    let mut first = None;
    let mut ended = false;
    while schema.is_none() && !ended {
        let Some(message) = decoder.next().await.transpose().map_err(put_error)? else {
            break;
        };
        match message.payload {
            DecodedPayload::Schema(s) => schema = Some(s),
            DecodedPayload::RecordBatch(batch) => {
                schema = Some(batch.schema());
                first = Some(batch);
            }
            DecodedPayload::None => ended = message.app_metadata() == END_OF_ROWS,
        }
    }
    let state = (decoder, ended, false);
    let rest = futures::stream::unfold(state, move |(mut decoder, mut ended, done)| async move {
        if done {
            return None;
        }
        loop {
            match decoder.next().await {
                Some(Ok(message)) => match message.payload {
                    DecodedPayload::RecordBatch(batch) if !ended => {
                        return Some((Ok(batch), (decoder, ended, false)));
                    }
                    DecodedPayload::RecordBatch(_) => {
                        let e = QueryError::InvalidArgument(
                            "rows after the end-of-rows message".into(),
                        );
                        return Some((Err(e), (decoder, ended, true)));
                    }
                    DecodedPayload::None => ended |= message.app_metadata() == END_OF_ROWS,
                    DecodedPayload::Schema(_) => {
                        let e = QueryError::InvalidArgument(
                            "a second schema message in one DoPut: the rows of an append have one schema".into(),
                        );
                        return Some((Err(e), (decoder, ended, true)));
                    }
                },
                Some(Err(e)) => return Some((Err(put_error(e)), (decoder, ended, true))),
                None if require_end && !ended => {
                    let e = QueryError::InvalidArgument(
                        "the rows ended without their end-of-rows message: the client broke off, and nothing is committed".into(),
                    );
                    return Some((Err(e), (decoder, ended, true)));
                }
                None => return None,
            }
        }
    });
    let rows = futures::stream::iter(first.map(Ok)).chain(rest).boxed();
    Ok((schema, rows))
}

/// The principal [`crate::auth::AuthLayer`] found for a call (`None` when clients do not
/// log in).
fn principal<T>(request: &Request<T>) -> Option<String> {
    request
        .extensions()
        .get::<crate::auth::Principal>()
        .map(|p| p.name.clone())
}

/// Who `request`'s caller is for grants (see [`Engine::access`]).
fn access<T>(engine: &Engine, request: &Request<T>) -> crate::access::Access {
    engine.access(request.extensions().get::<crate::auth::Principal>())
}

fn put_error(e: FlightError) -> QueryError {
    match e {
        FlightError::Tonic(status) => QueryError::InvalidArgument(status.message().to_string()),
        other => QueryError::InvalidArgument(format!("malformed Arrow data in DoPut: {other}")),
    }
}

#[tonic::async_trait]
impl FlightSqlService for LakeFlightService {
    type FlightService = LakeFlightService;

    async fn do_handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<
        Response<Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>>,
        Status,
    > {
        let response = HandshakeResponse {
            protocol_version: 0,
            payload: Default::default(),
        };
        let mut response = Response::new(Box::pin(futures::stream::iter([Ok(response)]))
            as Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>);
        // Without users (the loopback demo) everyone is let in and no token is needed.
        if let Some(auth) = self.engine.auth() {
            let header = request
                .metadata()
                .get("authorization")
                .and_then(|v| v.to_str().ok());
            let token = auth.login(header)?;
            let value = format!("Bearer {token}")
                .parse()
                .map_err(|_| Status::internal("token is not a valid header value"))?;
            response.metadata_mut().insert("authorization", value);
        }
        Ok(response)
    }

    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let operation_id = idempotency_key(&request)?;
        let caller = (principal(&request), access(&self.engine, &request));
        self.statement_info(
            query.query,
            None,
            Writes::AtRedeem { operation_id },
            caller,
            request.into_inner(),
        )
        .await
    }

    async fn get_flight_info_prepared_statement(
        &self,
        cmd: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let principal = principal(&request);
        let handle = self.prepared_sql(&cmd.prepared_statement_handle, principal.as_deref())?;
        let operation_id = idempotency_key(&request)?.or(handle.operation_id);
        let access = access(&self.engine, &request);
        self.statement_info(
            handle.sql,
            handle.params,
            Writes::AtPlanning { operation_id },
            (principal, access),
            request.into_inner(),
        )
        .await
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let principal = principal(&request);
        let sealed = self
            .engine
            .key()
            .open(&ticket.statement_handle, principal.as_deref())?;
        let mut audit = crate::audit::Audit::start(principal.as_deref(), &sealed);
        let slot = match self
            .engine
            .running()
            .admit(principal.as_deref(), Some(&ticket.statement_handle))
        {
            Ok(slot) => slot,
            Err(e) => {
                audit.failed(&e);
                return Err(e.into());
            }
        };
        let engine = self.engine.clone();
        let access = access(&engine, &request);
        let (schema, stream) = match to_completion(async move {
            engine.execute_ticket(sealed, &access).await
        })
        .await
        {
            Ok(answer) => answer,
            Err(e) => {
                audit.failed(&e);
                return Err(e.into());
            }
        };
        // The audit line is written when the stream ends, or fails, or is dropped early; a
        // cancellation (CancelFlightInfo) ends it with CANCELLED and drops the execution.
        let stream = futures::stream::unfold(
            Some((stream.map_err(QueryError::from), audit, slot)),
            |state| async move {
                let (mut stream, mut audit, mut slot) = state?;
                let item = tokio::select! {
                    item = stream.next() => item,
                    () = slot.cancelled() => Some(Err(QueryError::Cancelled(
                        "the statement was cancelled by its client (CancelFlightInfo)".into(),
                    ))),
                };
                match &item {
                    Some(Ok(batch)) => audit.rows(batch.num_rows()),
                    Some(Err(e)) => audit.failed(e),
                    None => audit.finished(),
                }
                let done = matches!(item, Some(Err(QueryError::Cancelled(_))));
                let next = (!done).then_some((stream, audit, slot));
                item.map(|item| (item, next))
            },
        );
        Ok(batch_stream(schema, stream))
    }

    async fn get_flight_info_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        self.metadata_info(&schema, query.as_any(), request.into_inner())
    }

    async fn do_get_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let access = access(&self.engine, &request);
        let mut builder = query.into_builder();
        for catalog in self.engine.catalogs() {
            if catalog == ICEBERG_CATALOG && !self.iceberg_listed(&access) {
                continue;
            }
            builder.append(catalog);
        }
        Ok(one_batch(builder.build().map_err(Status::from)?))
    }

    async fn get_flight_info_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        self.metadata_info(&schema, query.as_any(), request.into_inner())
    }

    async fn do_get_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let access = access(&self.engine, &request);
        let catalog = query.catalog.clone();
        let mut builder = query.into_builder();
        if wants(catalog.as_deref(), LAKE_CATALOG) {
            for namespace in self.engine.namespaces(&access) {
                builder.append(LAKE_CATALOG, namespace);
            }
        }
        if self.iceberg_listed(&access) && wants(catalog.as_deref(), ICEBERG_CATALOG) {
            match unfiltered_wait(catalog.as_deref(), self.engine.iceberg_namespaces()).await {
                Ok(namespaces) => {
                    for namespace in namespaces {
                        builder.append(ICEBERG_CATALOG, namespace);
                    }
                }
                Err(e) => external_listing_failed(catalog.as_deref(), e)?,
            }
        }
        Ok(one_batch(builder.build().map_err(Status::from)?))
    }

    async fn get_flight_info_tables(
        &self,
        query: CommandGetTables,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        self.metadata_info(&schema, query.as_any(), request.into_inner())
    }

    async fn do_get_tables(
        &self,
        query: CommandGetTables,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let access = access(&self.engine, &request);
        let catalog = query.catalog.clone();
        let schema_pattern = query.db_schema_filter_pattern.clone();
        let table_pattern = query.table_name_filter_pattern.clone();
        let include_schema = query.include_schema;
        let mut builder = query.into_builder();
        if wants(catalog.as_deref(), LAKE_CATALOG) {
            for (namespace, name, schema) in self.engine.tables(&access)? {
                builder
                    .append(LAKE_CATALOG, namespace, name, "TABLE", &schema)
                    .map_err(Status::from)?;
            }
        }
        if self.iceberg_listed(&access) && wants(catalog.as_deref(), ICEBERG_CATALOG) {
            // Load schemas only for the tables the filters keep: each is a metadata read.
            let keep_schema = |s: &str| schema_pattern.as_deref().is_none_or(|p| like(p, s));
            let listed =
                unfiltered_wait(catalog.as_deref(), self.engine.iceberg_tables(keep_schema)).await;
            match listed {
                Ok(tables) => {
                    for (namespace, name) in tables {
                        if table_pattern.as_deref().is_some_and(|p| !like(p, &name)) {
                            continue;
                        }
                        let schema = if include_schema {
                            let levels = crate::iceberg::namespace_levels(&namespace);
                            match self.engine.iceberg() {
                                Some(iceberg) => iceberg.current_schema(&levels, &name).await?,
                                None => Schema::empty(),
                            }
                        } else {
                            Schema::empty()
                        };
                        builder
                            .append(ICEBERG_CATALOG, namespace, name, "TABLE", &schema)
                            .map_err(Status::from)?;
                    }
                }
                Err(e) => external_listing_failed(catalog.as_deref(), e)?,
            }
        }
        Ok(one_batch(builder.build().map_err(Status::from)?))
    }

    async fn get_flight_info_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        self.metadata_info(&schema, query.as_any(), request.into_inner())
    }

    async fn do_get_table_types(
        &self,
        query: CommandGetTableTypes,
        _request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let mut builder = query.into_builder();
        builder.append("TABLE");
        Ok(one_batch(builder.build().map_err(Status::from)?))
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder(&self.sql_info).schema();
        self.metadata_info(&schema, query.as_any(), request.into_inner())
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        _request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let batch = query
            .into_builder(&self.sql_info)
            .build()
            .map_err(Status::from)?;
        Ok(one_batch(batch))
    }

    async fn do_put_statement_update(
        &self,
        ticket: CommandStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let operation_id = idempotency_key(&request)?;
        let _slot = self.admit_write(&request)?;
        let audit = crate::audit::Audit::write(principal(&request).as_deref());
        let engine = self.engine.clone();
        let access = access(&engine, &request);
        let result = to_completion(async move {
            engine
                .execute_update(&ticket.query, None, operation_id, &access)
                .await
        })
        .await;
        audit.written(&result);
        Ok(result?)
    }

    async fn do_put_prepared_statement_update(
        &self,
        query: CommandPreparedStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let principal = principal(&request);
        let handle = self.prepared_sql(&query.prepared_statement_handle, principal.as_deref())?;
        let key = idempotency_key(&request)?;
        let _slot = self.admit_write(&request)?;
        let access = access(&self.engine, &request);
        // Parameters may come with this DoPut or from an earlier bind (whose operation id
        // then applies).
        let (params, operation_id) = match Engine::collect_params(put_batches(request)).await? {
            Some(params) => (Some(params), key),
            None => (handle.params, key.or(handle.operation_id)),
        };
        let audit = crate::audit::Audit::write(principal.as_deref());
        let engine = self.engine.clone();
        let result = to_completion(async move {
            engine
                .execute_update(&handle.sql, params, operation_id, &access)
                .await
        })
        .await;
        audit.written(&result);
        Ok(result?)
    }

    async fn do_put_prepared_statement_query(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<DoPutPreparedStatementResult, Status> {
        let principal = principal(&request);
        let sql = self
            .prepared_sql(&query.prepared_statement_handle, principal.as_deref())?
            .sql;
        let params = Engine::collect_params(put_batches(request)).await?;
        // Each bind is one execution: a retry of it must not write twice.
        let operation_id = params.is_some().then(crate::engine::random_operation_id);
        let handle = self.engine.key().seal(
            &Sealed::Prepared {
                sql,
                params,
                operation_id,
            },
            principal.as_deref(),
        );
        Ok(DoPutPreparedStatementResult {
            prepared_statement_handle: Some(handle.into()),
        })
    }

    async fn do_put_statement_ingest(
        &self,
        command: CommandStatementIngest,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let table = format!(
            "{LAKE_CATALOG}.{}.{}",
            command
                .schema
                .as_deref()
                .unwrap_or(crate::sql::DEFAULT_NAMESPACE),
            command.table
        );
        let audit = crate::audit::Audit::of(principal(&request).as_deref(), "ingest").on(table);
        let result = self.ingest(command, request).await;
        audit.written(&result);
        result
    }

    async fn do_put_fallback(
        &self,
        request: Request<PeekableFlightDataStream>,
        message: Any,
    ) -> Result<Response<<Self as FlightService>::DoPutStream>, Status> {
        let audit = crate::audit::Audit::of(principal(&request).as_deref(), "append");
        let result = self.append(request, message).await;
        let (audit, outcome) = match &result {
            Ok((table, appended)) => (
                audit.on(table.clone()),
                Ok(i64::try_from(appended.rows).unwrap_or(i64::MAX)),
            ),
            Err(e) => (audit, Err(e.clone())),
        };
        audit.written(&outcome);
        let (_, appended) = result?;
        let output = futures::stream::iter([Ok(PutResult {
            app_metadata: appended.encode_to_vec().into(),
        })]);
        Ok(Response::new(Box::pin(output)))
    }

    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        request: Request<arrow_flight::Action>,
    ) -> Result<ActionCreatePreparedStatementResult, Status> {
        let access = access(&self.engine, &request);
        let described = self
            .engine
            .describe_prepared(&query.query, &access)
            .await
            .map_err(Status::from);
        // A statement refused while it is prepared leaves its audit line here.
        if let Err(status) = &described {
            crate::audit::Audit::of(principal(&request).as_deref(), "statement")
                .refused(status.code());
        }
        let (schema, parameters) = described?;
        let options = arrow::ipc::writer::IpcWriteOptions::default();
        let IpcMessage(dataset_schema) = SchemaAsIpc::new(&schema, &options)
            .try_into()
            .map_err(arrow_status)?;
        let IpcMessage(parameter_schema) = SchemaAsIpc::new(&parameters, &options)
            .try_into()
            .map_err(arrow_status)?;
        let handle = self.engine.key().seal(
            &Sealed::Prepared {
                sql: query.query,
                params: None,
                operation_id: None,
            },
            principal(&request).as_deref(),
        );
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: handle.into(),
            dataset_schema,
            parameter_schema,
        })
    }

    async fn do_action_close_prepared_statement(
        &self,
        _query: ActionClosePreparedStatementRequest,
        _request: Request<arrow_flight::Action>,
    ) -> Result<(), Status> {
        // Handles are stateless: nothing to release.
        Ok(())
    }

    async fn do_action_fallback(
        &self,
        request: Request<arrow_flight::Action>,
    ) -> Result<Response<<Self as FlightService>::DoActionStream>, Status> {
        let principal = principal(&request);
        let access = access(&self.engine, &request);
        let action = request.into_inner();
        if action.r#type == ACTION_CANCEL_FLIGHT_INFO {
            let request = arrow_flight::CancelFlightInfoRequest::decode(action.body.as_ref())
                .map_err(|e| {
                    Status::invalid_argument(format!("malformed CancelFlightInfoRequest: {e}"))
                })?;
            let info = request.info.ok_or_else(|| {
                Status::invalid_argument("CancelFlightInfoRequest carries no FlightInfo")
            })?;
            self.cancel(&info, principal.as_deref())?;
            let result = arrow_flight::CancelFlightInfoResult {
                status: arrow_flight::CancelStatus::Cancelled as i32,
            };
            let result = arrow_flight::Result::new(result.encode_to_vec());
            return Ok(Response::new(Box::pin(futures::stream::iter([Ok(result)]))));
        }
        if action.r#type == ACTION_STAGE {
            let request = StageRequest::decode(action.body.as_ref())
                .map_err(|e| Status::invalid_argument(format!("malformed StageRequest: {e}")))?;
            let answer = self.engine.stage_request(&access, &request).await?;
            let result = arrow_flight::Result::new(answer.encode_to_vec());
            return Ok(Response::new(Box::pin(futures::stream::iter([Ok(result)]))));
        }
        if action.r#type == ACTION_STAGE_GC {
            let request = StageGcRequest::decode(action.body.as_ref())
                .map_err(|e| Status::invalid_argument(format!("malformed StageGcRequest: {e}")))?;
            let engine = self.engine.clone();
            let answer = to_completion(async move {
                engine
                    .collect_stage_garbage(
                        &access,
                        &request.namespace,
                        &request.table,
                        request.dry_run,
                    )
                    .await
            })
            .await?;
            let result = arrow_flight::Result::new(answer.encode_to_vec());
            return Ok(Response::new(Box::pin(futures::stream::iter([Ok(result)]))));
        }
        if action.r#type != ACTION_DESCRIBE_TABLE {
            return Err(Status::invalid_argument(format!(
                "unknown action {:?}; actions: CreatePreparedStatement, ClosePreparedStatement, {ACTION_CANCEL_FLIGHT_INFO}, CancelQuery, {ACTION_DESCRIBE_TABLE}, {ACTION_STAGE}, {ACTION_STAGE_GC}",
                action.r#type
            )));
        }
        let request = ActionDescribeTableRequest::decode(action.body.as_ref()).map_err(|e| {
            Status::invalid_argument(format!("malformed ActionDescribeTableRequest: {e}"))
        })?;
        let description =
            self.engine
                .describe_table(&access, &request.namespace, &request.table)?;
        let result = arrow_flight::Result::new(description.encode_to_vec());
        Ok(Response::new(Box::pin(futures::stream::iter([Ok(result)]))))
    }

    async fn do_action_cancel_query(
        &self,
        query: arrow_flight::sql::ActionCancelQueryRequest,
        request: Request<arrow_flight::Action>,
    ) -> Result<arrow_flight::sql::ActionCancelQueryResult, Status> {
        let info = FlightInfo::decode(query.info.as_ref())
            .map_err(|e| Status::invalid_argument(format!("malformed FlightInfo: {e}")))?;
        self.cancel(&info, principal(&request).as_deref())?;
        Ok(arrow_flight::sql::ActionCancelQueryResult {
            // CANCEL_RESULT_CANCELLED (FlightSql.proto); arrow-flight does not export the enum.
            result: 1,
        })
    }

    async fn list_custom_actions(&self) -> Option<Vec<Result<arrow_flight::ActionType, Status>>> {
        Some(vec![
            Ok(arrow_flight::ActionType {
                r#type: ACTION_CANCEL_FLIGHT_INFO.into(),
                description: "Cancel a statement: its running DoGet ends with CANCELLED and its \
                ticket serves no more (body: arrow.flight.protocol.CancelFlightInfoRequest; \
                result: CancelFlightInfoResult)"
                    .into(),
            }),
            Ok(arrow_flight::ActionType {
                r#type: ACTION_DESCRIBE_TABLE.into(),
                description: "Describe a Lake table: id, schema and managed stage URI \
                (body: lake.v1.ActionDescribeTableRequest; result: lake.v1.TableDescription)"
                    .into(),
            }),
            Ok(arrow_flight::ActionType {
                r#type: ACTION_STAGE_GC.into(),
                description: "Collect a table's stage garbage: the objects no retained \
                version names, older than the replica's grace, and the S3 multipart uploads \
                unfinished for as long; or, as a dry run, list them (body: lake.v1.StageGcRequest; result: lake.v1.StageGcResult)"
                    .into(),
            }),
            Ok(arrow_flight::ActionType {
                r#type: ACTION_STAGE.into(),
                description: "Reach one object of a table's S3 stage without storage \
                credentials: presigned GET/PUT/UploadPart URLs and multipart \
                create/complete/abort, after the caller's grant on the table's namespace; \
                uploads are verified against their address (body: lake.v1.StageRequest; \
                result: lake.v1.StageResponse)"
                    .into(),
            }),
        ])
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

/// Whether a listing filtered to `filter` (Flight SQL `catalog`; `None` is every catalog)
/// includes `catalog`.
fn wants(filter: Option<&str>, catalog: &str) -> bool {
    filter.is_none_or(|f| f == catalog)
}

/// How long a listing of every catalog waits for the `iceberg` catalog before leaving it
/// out (a listing of `iceberg` alone waits for its full deadline).
const UNFILTERED_LISTING_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Runs an `iceberg` listing, bounded by [`UNFILTERED_LISTING_WAIT`] when the listing is
/// of every catalog.
async fn unfiltered_wait<T>(
    filter: Option<&str>,
    listing: impl std::future::Future<Output = Result<T, QueryError>>,
) -> Result<T, QueryError> {
    if filter.is_some() {
        return listing.await;
    }
    tokio::time::timeout(UNFILTERED_LISTING_WAIT, listing)
        .await
        .unwrap_or_else(|_| {
            Err(QueryError::Timeout(format!(
                "the iceberg catalog did not list within {} s",
                UNFILTERED_LISTING_WAIT.as_secs()
            )))
        })
}

/// A listing of every catalog leaves out an unreachable `iceberg` catalog (logged), so
/// Lake tables stay listable; a listing of `iceberg` alone fails with the cause.
fn external_listing_failed(filter: Option<&str>, e: QueryError) -> Result<(), Status> {
    if filter == Some(ICEBERG_CATALOG) {
        return Err(e.into());
    }
    tracing::warn!(error = %e, "listing without catalog {ICEBERG_CATALOG}: its REST catalog failed");
    Ok(())
}

/// Whether `text` matches the SQL `LIKE` pattern of a Flight SQL filter (arrow's kernel,
/// as the metadata builders apply it).
fn like(pattern: &str, text: &str) -> bool {
    let texts = arrow::array::StringArray::from(vec![text]);
    let pattern = arrow::array::Scalar::new(arrow::array::StringArray::from(vec![pattern]));
    arrow::compute::kernels::comparison::like(&texts, &pattern)
        .map(|matched| matched.value(0))
        .unwrap_or(false)
}

impl LakeFlightService {
    /// Flight SQL ingest (`CommandStatementIngest`): appends to or creates a Lake table.
    async fn ingest(
        &self,
        command: CommandStatementIngest,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        if command.temporary {
            return Err(Status::unimplemented("temporary tables are not supported"));
        }
        let _slot = self.admit_write(&request)?;
        if command.transaction_id.is_some() {
            return Err(Status::unimplemented("transactions are not supported"));
        }
        if let Some(catalog) = &command.catalog
            && catalog != LAKE_CATALOG
        {
            if catalog == ICEBERG_CATALOG && self.engine.iceberg().is_some() {
                return Err(Status::unimplemented(format!(
                    "catalog {ICEBERG_CATALOG} is read-only: Lake never writes Iceberg tables; ingest into catalog {LAKE_CATALOG}"
                )));
            }
            return Err(Status::not_found(format!(
                "catalog {catalog} does not exist; catalogs: [{}]",
                self.engine.catalogs().join(", ")
            )));
        }
        let namespace = command
            .schema
            .clone()
            .unwrap_or_else(|| crate::sql::DEFAULT_NAMESPACE.to_string());
        let options = command.table_definition_options.unwrap_or_default();
        let access = access(&self.engine, &request);
        self.authorize_put(&access, &namespace, &command.table, Privilege::Write)?;
        let require_end = command
            .options
            .get(INGEST_END_MARKER_OPTION)
            .is_some_and(|v| v == "true");
        let (schema, rows) = put_rows(request, require_end).await?;
        let schema = schema
            .ok_or_else(|| Status::invalid_argument("ingest carried no Arrow schema message"))?;
        let operation_id = command.options.get(INGEST_OPERATION_ID_OPTION).cloned();
        let existing = self.engine.table_meta(&namespace, &command.table);
        let engine = self.engine.clone();
        let count = match existing {
            Ok(meta) => match TableExistsOption::try_from(options.if_exists) {
                Ok(TableExistsOption::Append) => {
                    to_completion(async move { engine.append(&meta, rows, operation_id).await })
                        .await?
                        .1
                }
                Ok(TableExistsOption::Replace) => {
                    return Err(Status::unimplemented(
                        "ingest with if_exists = replace is not supported; drop the table first",
                    ));
                }
                _ => {
                    return Err(Status::already_exists(format!(
                        "table {LAKE_CATALOG}.{namespace}.{} already exists (ingest with if_exists = append to add rows)",
                        command.table
                    )));
                }
            },
            Err(QueryError::NotFound(message)) => {
                match TableNotExistOption::try_from(options.if_not_exist) {
                    Ok(TableNotExistOption::Create) => {
                        self.authorize_put(&access, &namespace, &command.table, Privilege::Admin)?;
                        let table = command.table.clone();
                        // Created by another client since this replica last heard: append,
                        // as the client asked for when the table exists.
                        let or_append = matches!(
                            TableExistsOption::try_from(options.if_exists),
                            Ok(TableExistsOption::Append)
                        );
                        to_completion(async move {
                            engine
                                .create_table(
                                    &namespace,
                                    &table,
                                    schema,
                                    rows,
                                    operation_id,
                                    or_append,
                                )
                                .await
                        })
                        .await?
                        .2
                    }
                    _ => return Err(Status::not_found(message)),
                }
            }
            Err(e) => return Err(e.into()),
        };
        Ok(i64::try_from(count).unwrap_or(i64::MAX))
    }

    /// Lake's own append (`CommandAppend`); returns the table and what was committed.
    async fn append(
        &self,
        request: Request<PeekableFlightDataStream>,
        message: Any,
    ) -> Result<(String, AppendResult), Status> {
        if message.type_url != CommandAppend::TYPE_URL {
            return Err(Status::unimplemented(format!(
                "DoPut command {} is not supported",
                message.type_url
            )));
        }
        let command = CommandAppend::decode(message.value.as_ref())
            .map_err(|e| Status::invalid_argument(format!("malformed CommandAppend: {e}")))?;
        if command.operation_id.is_empty() {
            return Err(Status::invalid_argument(
                "CommandAppend needs an operation_id (any unique string, reused on retry)",
            ));
        }
        let _slot = self.admit_write(&request)?;
        let access = access(&self.engine, &request);
        self.authorize_put(
            &access,
            &command.namespace,
            &command.table,
            Privilege::Write,
        )?;
        let existing = self.engine.table_meta(&command.namespace, &command.table);
        if existing.is_err() && command.create_if_missing {
            self.authorize_put(
                &access,
                &command.namespace,
                &command.table,
                Privilege::Admin,
            )?;
        }
        let (schema, rows) = put_rows(request, command.ends_with_marker).await?;
        let engine = self.engine.clone();
        let operation_id = Some(command.operation_id);
        let shown = format!("{LAKE_CATALOG}.{}.{}", command.namespace, command.table);
        let (committed, rows) = match existing {
            Ok(meta) => {
                to_completion(async move { engine.append(&meta, rows, operation_id).await }).await?
            }
            Err(QueryError::NotFound(_)) if command.create_if_missing => {
                let schema = schema.ok_or_else(|| {
                    Status::invalid_argument("CommandAppend carried no Arrow schema message")
                })?;
                let (namespace, table) = (command.namespace, command.table);
                let (_, committed, rows) = to_completion(async move {
                    engine
                        .create_table(&namespace, &table, schema, rows, operation_id, true)
                        .await
                })
                .await?;
                (committed, rows)
            }
            Err(e) => return Err(e.into()),
        };
        let result = AppendResult {
            version: committed.version,
            revision: committed.revision,
            rows,
            replayed: committed.replayed,
        };
        Ok((shown, result))
    }
}
