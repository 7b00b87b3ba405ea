//! Lake Query replica: Arrow Flight SQL over DataFusion with the `lake` catalog of Lance
//! tables.
//!
//! * [`catalog::Catalog`]: the catalog cache, fed by Metasrv's change stream.
//! * [`engine::Engine`]: pins snapshots, plans with DataFusion, executes reads, and writes
//!   through Lance with Metasrv's compare-and-swap ([`dataset`]).
//! * [`flight::LakeFlightService`]: the Flight SQL surface.
//! * [`serve`]: runs the service on a listener; [`redact`] keeps server paths out of the
//!   error messages it sends.

pub mod access;
mod analysis;
pub mod audit;
pub mod auth;
pub mod bounded;
pub mod canonical_float;
pub mod catalog;
pub mod checked_integers;
pub mod dataset;
pub mod decimal_literals;
pub mod dml;
pub mod duplicate_names;
pub mod engine;
mod error;
pub mod exact_sums;
pub mod files;
pub mod flight;
pub mod group_views;
pub mod iceberg;
pub mod index;
pub mod join_order;
pub mod jwt;
pub mod merge;
pub mod patterns;
pub mod plans;
pub mod redact;
mod row_in;
pub mod running;
pub mod runtime_filter;
pub mod scan;
pub mod scan_statistics;
pub mod shared_groupings;
pub mod sql;
pub mod ticket;

use std::sync::Arc;

pub use engine::{Engine, Limits};
pub use error::QueryError;
pub use flight::LakeFlightService;
pub use ticket::TicketKey;

/// The Flight SQL server's middleware: authentication inside error redaction.
type Layers = tower_layer::Stack<
    auth::AuthLayer,
    tower_layer::Stack<redact::RedactLayer, tower_layer::Identity>,
>;

/// The largest HTTP/2 frame the Flight SQL server accepts, in bytes: its
/// `SETTINGS_MAX_FRAME_SIZE` (RFC 9113 §6.5.2 allows 16 KiB to 16 MiB − 1; hyper's server
/// default is the minimum, 16 KiB). A client whose HTTP/2 stack sends frames as large as
/// the peer allows (Rust's h2, under tonic: the Lake SDK and `lake ingest`) then sends a
/// DoPut's record batches in up to 64 times fewer DATA frames, each handled by h2 and
/// copied into tonic's message buffer on its own. Flow control is unchanged: the stream and
/// connection windows (hyper's 1 MiB each) still bound what a connection holds unread. SF 1
/// lineitem appended through the SDK (`lake-bench --sections ingest`, same session, the
/// settings alternating) went from 0.64–0.68 to 0.68–0.75 times pylance's rows/s; frames
/// and 8 / 16 MiB windows together were no faster than frames alone. gRPC-Go clients (the
/// ADBC driver) send 16 KiB frames whatever the peer allows, and append as fast as before.
pub const FLIGHT_MAX_FRAME_BYTES: u32 = 1 << 20;

/// The Flight SQL service for `engine` on `builder` (accepting frames of up to
/// [`FLIGHT_MAX_FRAME_BYTES`]), behind error redaction and (when the engine has users)
/// authentication.
fn router(
    engine: Arc<Engine>,
    builder: tonic::transport::Server,
) -> Result<tonic::transport::server::Router<Layers>, QueryError> {
    let auth = auth::AuthLayer::new(engine.auth().cloned());
    let service = LakeFlightService::new(engine)?;
    Ok(builder
        .max_frame_size(FLIGHT_MAX_FRAME_BYTES)
        .layer(redact::RedactLayer)
        .layer(auth)
        .add_service(service.into_server()))
}

/// Serves Flight SQL for `engine` on `listener` until `shutdown` resolves, over TLS when
/// `tls` is given, adding every byte read from client connections to `received`.
///
/// # Errors
/// [`QueryError::Execution`] when the transport fails or the TLS settings are unusable.
pub async fn serve(
    engine: Arc<Engine>,
    listener: tokio::net::TcpListener,
    received: Arc<std::sync::atomic::AtomicU64>,
    tls: Option<&lake_metasrv::ServerTls>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), QueryError> {
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = tls {
        builder = tls
            .apply(builder)
            .map_err(|e| QueryError::Execution(e.to_string()))?;
    }
    let incoming = lake_metasrv::server::incoming(listener, received);
    router(engine, builder)?
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
        .map_err(|e| QueryError::Execution(format!("flight server: {e}")))
}

/// Serves Flight SQL for `engine` to this process only (an in-memory transport, see
/// `lake_metasrv::transport::in_process`), e.g. for a loader running beside the server;
/// returns the channel to it. The server stops when every clone of the channel is gone.
///
/// # Errors
/// As [`LakeFlightService::new`].
pub fn serve_in_process(engine: Arc<Engine>) -> Result<tonic::transport::Channel, QueryError> {
    let (channel, incoming) = lake_metasrv::transport::in_process();
    let router = router(engine, tonic::transport::Server::builder())?;
    tokio::spawn(async move {
        if let Err(e) = router.serve_with_incoming(incoming).await {
            tracing::error!(error = %e, "in-process flight server stopped");
        }
    });
    Ok(channel)
}
