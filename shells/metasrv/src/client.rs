//! The typed gRPC client Query replicas use to reach Metasrv.

use futures::{Stream, StreamExt};
use lake_core::{ChangeEvent, Digest, ManifestRef, TableMeta, VersionRecord};
use tonic::transport::Channel;

use crate::MetasrvError;
use crate::convert;
use crate::proto;
use crate::proto::metasrv_client::MetasrvClient as RpcClient;

/// Result of a successful commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Committed {
    /// The table version the commit pointer now holds (or held, for a replay).
    pub version: u64,
    /// The same operation id and payload had already committed `version`; nothing was
    /// written now.
    pub replayed: bool,
    /// Registry revision that includes the commit (read-your-writes token).
    pub revision: u64,
}

/// A table's registry entry and its version history.
#[derive(Clone, Debug)]
pub struct TableDescription {
    /// Identity, schema, location.
    pub meta: TableMeta,
    /// Committed versions, oldest first.
    pub versions: Vec<VersionRecord>,
    /// Registry revision the description was read at.
    pub revision: u64,
}

/// A cheaply clonable Metasrv client.
#[derive(Clone, Debug)]
pub struct MetasrvClient {
    rpc: RpcClient<Channel>,
}

impl MetasrvClient {
    /// Connects to `endpoint` (e.g. `http://127.0.0.1:50052`), or to several Metasrv nodes
    /// given as a comma-separated list (`http://a:7000,http://b:7000`): calls are spread
    /// over the nodes that are up (tonic's `Channel::balance_list`), and any node forwards
    /// to the leader.
    ///
    /// # Errors
    /// [`MetasrvError::Connect`] when an endpoint is malformed, or (for a single endpoint)
    /// unreachable.
    pub async fn connect(endpoint: &str) -> Result<Self, MetasrvError> {
        let connect_error = |message: String| MetasrvError::Connect {
            endpoint: endpoint.to_string(),
            message,
        };
        let endpoints: Vec<&str> = endpoint
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        let channel = match endpoints.as_slice() {
            [] => return Err(connect_error("no endpoint given".into())),
            [one] => Channel::from_shared(one.to_string())
                .map_err(|e| connect_error(e.to_string()))?
                .connect()
                .await
                .map_err(|e| connect_error(e.to_string()))?,
            several => {
                let mut list = Vec::new();
                for e in several {
                    list.push(
                        Channel::from_shared(e.to_string())
                            .map_err(|err| connect_error(format!("{e}: {err}")))?
                            .connect_timeout(std::time::Duration::from_secs(2)),
                    );
                }
                Channel::balance_list(list.into_iter())
            }
        };
        Ok(Self {
            rpc: RpcClient::new(channel),
        })
    }

    /// This node's health and readiness view.
    ///
    /// # Errors
    /// Transport errors.
    pub async fn node_status(&self) -> Result<proto::NodeStatusResponse, MetasrvError> {
        Ok(self
            .rpc
            .clone()
            .node_status(proto::NodeStatusRequest {})
            .await?
            .into_inner())
    }

    /// Creates a namespace; returns the revision that includes it.
    ///
    /// # Errors
    /// Already exists, invalid name, or transport errors.
    pub async fn create_namespace(&self, name: &str) -> Result<u64, MetasrvError> {
        let request = proto::NamespaceRequest { name: name.into() };
        Ok(self
            .rpc
            .clone()
            .create_namespace(request)
            .await?
            .into_inner()
            .revision)
    }

    /// Drops an empty namespace; returns the revision that includes it.
    ///
    /// # Errors
    /// Not found, not empty, or transport errors.
    pub async fn drop_namespace(&self, name: &str) -> Result<u64, MetasrvError> {
        let request = proto::NamespaceRequest { name: name.into() };
        Ok(self
            .rpc
            .clone()
            .drop_namespace(request)
            .await?
            .into_inner()
            .revision)
    }

    /// Registers a table; `schema_ipc` is an encapsulated Arrow IPC schema message.
    ///
    /// # Errors
    /// Namespace not found, table exists, invalid name, or transport errors.
    pub async fn create_table(
        &self,
        namespace: &str,
        name: &str,
        schema_ipc: Vec<u8>,
    ) -> Result<(TableMeta, u64), MetasrvError> {
        let request = proto::CreateTableRequest {
            namespace: namespace.into(),
            name: name.into(),
            schema_ipc,
        };
        let response = self.rpc.clone().create_table(request).await?.into_inner();
        let meta = response
            .table
            .ok_or_else(|| MetasrvError::Malformed("create_table returned no table".into()))?;
        Ok((meta.into(), response.revision))
    }

    /// Drops a table; returns the revision that includes it.
    ///
    /// # Errors
    /// Not found or transport errors.
    pub async fn drop_table(&self, namespace: &str, name: &str) -> Result<u64, MetasrvError> {
        let request = proto::TableRequest {
            namespace: namespace.into(),
            name: name.into(),
        };
        Ok(self
            .rpc
            .clone()
            .drop_table(request)
            .await?
            .into_inner()
            .revision)
    }

    /// Reads a table's entry and history straight from Metasrv (authoritative, uncached).
    ///
    /// # Errors
    /// Not found or transport errors.
    pub async fn describe_table(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<TableDescription, MetasrvError> {
        let request = proto::TableRequest {
            namespace: namespace.into(),
            name: name.into(),
        };
        let r = self.rpc.clone().describe_table(request).await?.into_inner();
        Ok(TableDescription {
            meta: r
                .meta
                .ok_or_else(|| MetasrvError::Malformed("describe_table without meta".into()))?
                .into(),
            versions: r
                .versions
                .into_iter()
                .map(convert::version_record)
                .collect::<Result<_, _>>()?,
            revision: r.revision,
        })
    }

    /// Compare-and-swap of the commit pointer of `table_id` from `base_version` to
    /// `base_version + 1`, optionally idempotent under `operation` (id, payload digest).
    ///
    /// # Errors
    /// [`MetasrvError::is_conflict`] for a lost CAS (retry after re-reading);
    /// [`MetasrvError::is_operation_reused`]; not found; transport errors.
    pub async fn commit(
        &self,
        table_id: u64,
        base_version: u64,
        manifest: &ManifestRef,
        operation: Option<(&str, Digest)>,
    ) -> Result<Committed, MetasrvError> {
        let request = proto::CommitRequest {
            table_id,
            base_version,
            manifest: Some(manifest.into()),
            operation_id: operation.map(|(id, _)| id.to_string()),
            digest: operation.map(|(_, d)| d.to_vec()).unwrap_or_default(),
        };
        let r = self.rpc.clone().commit(request).await?.into_inner();
        Ok(Committed {
            version: r.version,
            replayed: r.replayed,
            revision: r.revision,
        })
    }

    /// Records the final manifest path of a committed version.
    ///
    /// # Errors
    /// Version not found or transport errors.
    pub async fn finalize_manifest(
        &self,
        table_id: u64,
        version: u64,
        manifest: &ManifestRef,
    ) -> Result<u64, MetasrvError> {
        let request = proto::FinalizeManifestRequest {
            table_id,
            version,
            manifest: Some(manifest.into()),
        };
        Ok(self
            .rpc
            .clone()
            .finalize_manifest(request)
            .await?
            .into_inner()
            .revision)
    }

    /// The change stream after `from_revision`; with `follow` it stays open for new events.
    ///
    /// # Errors
    /// Transport errors (also as stream items).
    pub async fn watch(
        &self,
        from_revision: u64,
        follow: bool,
    ) -> Result<impl Stream<Item = Result<ChangeEvent, MetasrvError>> + Send + 'static, MetasrvError>
    {
        let request = proto::WatchRequest {
            from_revision,
            follow,
        };
        let stream = self.rpc.clone().watch(request).await?.into_inner();
        Ok(stream.map(|item| match item {
            Ok(event) => convert::change_event(event),
            Err(status) => Err(status.into()),
        }))
    }
}
