//! Lake Query replica: Arrow Flight SQL over DataFusion with the `lake` catalog of Lance
//! tables.
//!
//! * [`catalog::Catalog`]: the catalog cache, fed by Metasrv's change stream.
//! * [`engine::Engine`]: pins snapshots, plans with DataFusion, executes reads, and writes
//!   through Lance with Metasrv's compare-and-swap ([`dataset`]).
//! * [`flight::LakeFlightService`]: the Flight SQL surface.
//! * [`serve`]: runs the service on a listener; [`redact`] keeps server paths out of the
//!   error messages it sends.

pub mod audit;
pub mod auth;
pub mod canonical_float;
pub mod catalog;
pub mod checked_integers;
pub mod dataset;
pub mod engine;
mod error;
pub mod exact_sums;
pub mod files;
pub mod flight;
pub mod iceberg;
pub mod redact;
pub mod scan;
pub mod sql;
pub mod ticket;

use std::sync::Arc;

pub use engine::{Engine, Limits};
pub use error::QueryError;
pub use flight::LakeFlightService;
pub use ticket::TicketKey;

/// Serves Flight SQL for `engine` on `listener` until `shutdown` resolves, adding every
/// byte read from client connections to `received`.
///
/// # Errors
/// [`QueryError::Execution`] when the transport fails.
pub async fn serve(
    engine: Arc<Engine>,
    listener: tokio::net::TcpListener,
    received: Arc<std::sync::atomic::AtomicU64>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), QueryError> {
    let auth = auth::AuthLayer::new(engine.auth().cloned());
    let service = LakeFlightService::new(engine)?;
    let incoming = lake_metasrv::server::incoming(listener, received);
    tonic::transport::Server::builder()
        .layer(redact::RedactLayer)
        .layer(auth)
        .add_service(service.into_server())
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
        .map_err(|e| QueryError::Execution(format!("flight server: {e}")))
}
