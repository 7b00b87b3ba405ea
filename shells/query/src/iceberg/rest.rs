//! A read-only client of the Iceberg REST catalog protocol (`open-api/rest-catalog-open-api.yaml`
//! of the Iceberg spec): `GET /v1/config`, `POST /v1/oauth/tokens` (client credentials),
//! list namespaces, list tables and load table. It sends no other request, so a REST
//! catalog never receives a write from Lake.
//!
//! Load table asks for `snapshots=refs` and sends the last `ETag` as `If-None-Match`, so
//! revalidating a cached table is a `304 Not Modified` or a small response whose
//! `metadata-location` says whether anything changed; the full metadata is then read from
//! that (immutable) file. iceberg-catalog-rest 0.10 offers neither, hence this client.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::Deserialize;
use tokio::sync::Mutex;
use url::Url;

use crate::QueryError;

/// How a REST catalog authenticates Lake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RestAuth {
    /// No `Authorization` header.
    None,
    /// `Authorization: Bearer <token>`.
    Token(String),
    /// OAuth2 client credentials (RFC 6749 §4.4), exchanged at the catalog's
    /// `/v1/oauth/tokens` or at `server_uri`.
    ClientCredentials {
        /// `client_id`.
        client_id: String,
        /// `client_secret`.
        client_secret: String,
        /// `scope`; the REST spec's default is `catalog`.
        scope: String,
        /// A token endpoint other than `<uri>/v1/oauth/tokens`.
        server_uri: Option<String>,
    },
}

/// What load table returned.
#[derive(Debug)]
pub enum Loaded {
    /// `304 Not Modified`: the `ETag` sent still holds.
    NotModified,
    /// The table's current metadata.
    Table {
        /// `metadata-location`, when the catalog names one.
        metadata_location: Option<String>,
        /// The metadata itself (JSON), as the response carried it.
        metadata: Option<serde_json::Value>,
        /// The response's `ETag`, if the server sent one.
        etag: Option<String>,
    },
}

/// A REST catalog client bound to one catalog URI and warehouse.
pub struct RestClient {
    http: reqwest::Client,
    uri: Url,
    warehouse: String,
    prefix: Option<String>,
    auth: RestAuth,
    token: Mutex<Option<String>>,
    /// Resolved on first use from `GET /v1/config` (`overrides.prefix`) or the configured
    /// prefix.
    base: Mutex<Option<Url>>,
}

#[derive(Deserialize)]
struct ConfigResponse {
    #[serde(default)]
    overrides: std::collections::HashMap<String, String>,
    #[serde(default)]
    defaults: std::collections::HashMap<String, String>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
}

#[derive(Deserialize)]
struct NamespacesResponse {
    namespaces: Vec<Vec<String>>,
    #[serde(rename = "next-page-token", default)]
    next_page_token: Option<String>,
}

#[derive(Deserialize)]
struct TableIdentifier {
    name: String,
}

#[derive(Deserialize)]
struct TablesResponse {
    identifiers: Vec<TableIdentifier>,
    #[serde(rename = "next-page-token", default)]
    next_page_token: Option<String>,
}

/// LoadTableResult (REST spec): `metadata` is required, `metadata-location` optional (and
/// spelled `metadata_location` by some catalogs).
#[derive(Deserialize)]
struct LoadTableResponse {
    #[serde(rename = "metadata-location", alias = "metadata_location")]
    metadata_location: Option<String>,
    metadata: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ErrorModel {
    error: ErrorBody,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: String,
    #[serde(rename = "type")]
    kind: String,
}

/// Largest response body read from the REST catalog, in bytes: a load-table response
/// with `snapshots=refs` is kilobytes; a larger one is refused before it fills memory.
pub const RESPONSE_MAX: usize = 32 << 20;

/// Most pages followed for one listing, so a server that repeats its page token cannot
/// loop Lake forever.
const PAGES_MAX: usize = 1000;

impl RestClient {
    /// A client; nothing is sent until the first call.
    ///
    /// # Errors
    /// [`QueryError::InvalidArgument`] when `uri` is not an http(s) URL.
    pub fn new(
        uri: &str,
        warehouse: &str,
        prefix: Option<String>,
        auth: RestAuth,
        timeout: Duration,
    ) -> Result<Self, QueryError> {
        let mut uri = Url::parse(uri).map_err(|e| {
            QueryError::InvalidArgument(format!("Iceberg REST catalog URI {uri:?}: {e}"))
        })?;
        if !matches!(uri.scheme(), "http" | "https") {
            return Err(QueryError::InvalidArgument(format!(
                "Iceberg REST catalog URI {uri} must be http:// or https://"
            )));
        }
        if !uri.path().ends_with('/') {
            let path = format!("{}/", uri.path());
            uri.set_path(&path);
        }
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| QueryError::InvalidArgument(format!("HTTP client: {e}")))?;
        Ok(Self {
            http,
            uri,
            warehouse: warehouse.to_string(),
            prefix,
            auth,
            token: Mutex::new(None),
            base: Mutex::new(None),
        })
    }

    /// The catalog URI, for messages.
    pub fn uri(&self) -> &str {
        self.uri.as_str()
    }

    fn unreachable(&self, e: &reqwest::Error) -> QueryError {
        if e.is_timeout() {
            QueryError::Timeout(format!(
                "Iceberg REST catalog at {} did not answer in time: {e}",
                self.uri
            ))
        } else {
            QueryError::Unavailable(format!(
                "Iceberg REST catalog at {} is unreachable: {e}",
                self.uri
            ))
        }
    }

    /// `<uri>/v1/<segments…>` with each segment percent-encoded.
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.uri.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().push("v1");
            for s in segments {
                path.push(s);
            }
        }
        url
    }

    async fn bearer(&self) -> Result<Option<String>, QueryError> {
        match &self.auth {
            RestAuth::None => Ok(None),
            RestAuth::Token(token) => Ok(Some(token.clone())),
            RestAuth::ClientCredentials {
                client_id,
                client_secret,
                scope,
                server_uri,
            } => {
                let mut cached = self.token.lock().await;
                if let Some(token) = cached.as_ref() {
                    return Ok(Some(token.clone()));
                }
                let endpoint = match server_uri {
                    Some(uri) => Url::parse(uri).map_err(|e| {
                        QueryError::InvalidArgument(format!("OAuth2 server URI {uri:?}: {e}"))
                    })?,
                    None => self.url(&["oauth", "tokens"]),
                };
                let response = self
                    .http
                    .post(endpoint.clone())
                    .form(&[
                        ("grant_type", "client_credentials"),
                        ("client_id", client_id),
                        ("client_secret", client_secret),
                        ("scope", scope),
                    ])
                    .send()
                    .await
                    .map_err(|e| self.unreachable(&e))?;
                if !response.status().is_success() {
                    let status = response.status();
                    let body = self.error_text(response).await;
                    return Err(QueryError::Unauthenticated(format!(
                        "Iceberg REST catalog at {}: OAuth2 client-credentials exchange at {endpoint} failed ({status}): {}",
                        self.uri,
                        lake_core::registry::clip(body, 512)
                    )));
                }
                let token: TokenResponse = self.json("OAuth2 token response", response).await?;
                *cached = Some(token.access_token.clone());
                Ok(Some(token.access_token))
            }
        }
    }

    /// Sends a GET (with auth); on 401 with OAuth2, fetches a new token once and retries.
    async fn get(&self, url: Url, etag: Option<&str>) -> Result<reqwest::Response, QueryError> {
        for attempt in 0..2 {
            let mut request = self.http.request(Method::GET, url.clone());
            if let Some(token) = self.bearer().await? {
                request = request.bearer_auth(token);
            }
            if let Some(etag) = etag {
                request = request.header(reqwest::header::IF_NONE_MATCH, etag);
            }
            let response = request.send().await.map_err(|e| self.unreachable(&e))?;
            if response.status() == StatusCode::UNAUTHORIZED
                && attempt == 0
                && matches!(self.auth, RestAuth::ClientCredentials { .. })
            {
                *self.token.lock().await = None;
                continue;
            }
            return Ok(response);
        }
        Err(QueryError::Unauthenticated(format!(
            "Iceberg REST catalog at {} refused a fresh OAuth2 token",
            self.uri
        )))
    }

    /// Reads at most `limit` bytes of a body; `true` when there was more.
    async fn body(
        &self,
        mut response: reqwest::Response,
        limit: usize,
    ) -> Result<(Vec<u8>, bool), QueryError> {
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.unreachable(&e))? {
            if body.len() + chunk.len() > limit {
                body.extend_from_slice(&chunk[..limit - body.len()]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body, false))
    }

    /// Reads a JSON body of at most [`RESPONSE_MAX`] bytes.
    async fn json<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        response: reqwest::Response,
    ) -> Result<T, QueryError> {
        let (body, more) = self.body(response, RESPONSE_MAX).await?;
        if more {
            return Err(QueryError::Execution(format!(
                "Iceberg REST catalog at {}: {what}: the response exceeds {} MiB; Lake refuses it",
                self.uri,
                RESPONSE_MAX >> 20
            )));
        }
        serde_json::from_slice(&body).map_err(|e| {
            QueryError::Execution(format!(
                "Iceberg REST catalog at {}: {what}: the response is not the spec's JSON: {e}",
                self.uri
            ))
        })
    }

    /// The start of an error body, as text.
    async fn error_text(&self, response: reqwest::Response) -> String {
        self.body(response, 4096)
            .await
            .map(|(b, _)| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Maps a non-success response to an error naming the server's `ErrorModel`.
    async fn failure(&self, what: &str, response: reqwest::Response) -> QueryError {
        let status = response.status();
        let body = self.error_text(response).await;
        let detail = match serde_json::from_str::<ErrorModel>(&body) {
            Ok(model) => format!("{}: {}", model.error.kind, model.error.message),
            Err(_) => lake_core::registry::clip(body, 512),
        };
        let message = format!(
            "Iceberg REST catalog at {}: {what}: {status} {detail}",
            self.uri
        );
        match status {
            StatusCode::NOT_FOUND => QueryError::NotFound(message),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                QueryError::Unauthenticated(message)
            }
            StatusCode::BAD_REQUEST => QueryError::InvalidArgument(message),
            StatusCode::REQUEST_TIMEOUT | StatusCode::GATEWAY_TIMEOUT => {
                QueryError::Timeout(message)
            }
            _ => QueryError::Unavailable(message),
        }
    }

    /// `<uri>/v1/<prefix>/`: the prefix from `GET /v1/config?warehouse=…` (`overrides`,
    /// then `defaults`), else the configured one.
    async fn base(&self) -> Result<Url, QueryError> {
        let mut base = self.base.lock().await;
        if let Some(url) = base.as_ref() {
            return Ok(url.clone());
        }
        let mut url = self.url(&["config"]);
        url.query_pairs_mut()
            .append_pair("warehouse", &self.warehouse);
        let response = self.get(url, None).await?;
        if !response.status().is_success() {
            return Err(self.failure("GET /v1/config", response).await);
        }
        let config: ConfigResponse = self.json("GET /v1/config", response).await?;
        let prefix = config
            .overrides
            .get("prefix")
            .or_else(|| config.defaults.get("prefix"))
            .cloned()
            .or_else(|| self.prefix.clone());
        let mut url = self.url(&[]);
        if let Some(prefix) = prefix.filter(|p| !p.is_empty())
            && let Ok(mut path) = url.path_segments_mut()
        {
            for part in prefix.split('/').filter(|p| !p.is_empty()) {
                path.push(part);
            }
        }
        *base = Some(url.clone());
        Ok(url)
    }

    async fn endpoint(&self, segments: &[&str]) -> Result<Url, QueryError> {
        let mut url = self.base().await?;
        if let Ok(mut path) = url.path_segments_mut() {
            for s in segments {
                path.push(s);
            }
        }
        Ok(url)
    }

    /// Child namespaces of `parent` (all top-level ones for an empty `parent`), following
    /// `next-page-token`.
    ///
    /// # Errors
    /// [`QueryError::NotFound`] for an unknown parent; transport and server errors.
    pub async fn list_namespaces(&self, parent: &[String]) -> Result<Vec<Vec<String>>, QueryError> {
        let mut out = Vec::new();
        let mut page: Option<String> = None;
        for _ in 0..PAGES_MAX {
            let mut url = self.endpoint(&["namespaces"]).await?;
            {
                let mut query = url.query_pairs_mut();
                if !parent.is_empty() {
                    query.append_pair("parent", &parent.join("\u{1f}"));
                }
                if let Some(token) = &page {
                    query.append_pair("pageToken", token);
                }
            }
            let response = self.get(url, None).await?;
            if !response.status().is_success() {
                return Err(self.failure("list namespaces", response).await);
            }
            let body: NamespacesResponse = response
                .json()
                .await
                .map_err(|e| QueryError::Execution(format!("Iceberg REST list namespaces: {e}")))?;
            out.extend(body.namespaces);
            match body.next_page_token.filter(|t| !t.is_empty()) {
                Some(token) => page = Some(token),
                None => return Ok(out),
            }
        }
        Ok(out)
    }

    /// Names of the tables in `namespace`, following `next-page-token`.
    ///
    /// # Errors
    /// [`QueryError::NotFound`] for an unknown namespace; transport and server errors.
    pub async fn list_tables(&self, namespace: &[String]) -> Result<Vec<String>, QueryError> {
        let ns = namespace.join("\u{1f}");
        let mut out = Vec::new();
        let mut page: Option<String> = None;
        for _ in 0..PAGES_MAX {
            let mut url = self.endpoint(&["namespaces", &ns, "tables"]).await?;
            if let Some(token) = &page {
                url.query_pairs_mut().append_pair("pageToken", token);
            }
            let response = self.get(url, None).await?;
            if !response.status().is_success() {
                return Err(self.failure("list tables", response).await);
            }
            let body: TablesResponse = self.json("list tables", response).await?;
            out.extend(body.identifiers.into_iter().map(|t| t.name));
            match body.next_page_token.filter(|t| !t.is_empty()) {
                Some(token) => page = Some(token),
                None => return Ok(out),
            }
        }
        Ok(out)
    }

    /// Loads `namespace.table` with `snapshots=refs` (or `all` with `all_snapshots`),
    /// sending `etag` as `If-None-Match`.
    ///
    /// # Errors
    /// [`QueryError::NotFound`] (`NoSuchTableException`, `NoSuchNamespaceException`);
    /// transport and server errors; a response with neither `metadata-location` nor
    /// `metadata`.
    pub async fn load_table(
        &self,
        namespace: &[String],
        table: &str,
        etag: Option<&str>,
        all_snapshots: bool,
    ) -> Result<Loaded, QueryError> {
        let ns = namespace.join("\u{1f}");
        let mut url = self.endpoint(&["namespaces", &ns, "tables", table]).await?;
        url.query_pairs_mut()
            .append_pair("snapshots", if all_snapshots { "all" } else { "refs" });
        let response = self.get(url, etag).await?;
        if response.status() == StatusCode::NOT_MODIFIED {
            return Ok(Loaded::NotModified);
        }
        if !response.status().is_success() {
            return Err(self.failure("load table", response).await);
        }
        let etag = response
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body: LoadTableResponse = self.json("load table", response).await?;
        if body.metadata_location.is_none() && body.metadata.is_none() {
            return Err(QueryError::Unavailable(format!(
                "Iceberg REST catalog at {} returned table {}.{table} without its metadata (LoadTableResult needs `metadata`)",
                self.uri,
                namespace.join(".")
            )));
        }
        Ok(Loaded::Table {
            metadata_location: body.metadata_location,
            metadata: body.metadata,
            etag,
        })
    }
}
