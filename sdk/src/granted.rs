//! A table's stage reached through the Query replica's grants instead of storage
//! credentials: an object_store [`ObjectStore`] and [`MultipartStore`] whose every request
//! is a presigned URL (or a multipart create/complete/abort done by the replica) asked for
//! with the [`ACTION_STAGE`] Flight action, so [`crate::Stage`]'s one upload and read path
//! (deduplication, resumable parts, verified reads) serves both kinds of stage.
//!
//! Only what a stage does is supported: HEAD, GET (whole or one range), PUT of a whole
//! object, and multipart uploads. Listing, copying, deleting and object_store's own
//! multipart writer (`put_multipart`) answer `NotSupported`.

use std::ops::Range;

use arrow_flight::flight_service_client::FlightServiceClient;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{
    Attributes, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartId,
    MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions, PutOptions, PutPayload,
    PutResult,
};
use prost::Message;
use tonic::transport::Channel;

use crate::SdkError;
use crate::wire::{ACTION_STAGE, StageOp, StageRequest, StageResponse};

/// The `store` name in this module's object_store errors.
pub(crate) const STORE: &str = "lake.stage";

/// How a [`GrantedStore`] reaches the replica: the client's channel and login.
#[derive(Clone)]
pub(crate) struct Transport {
    pub(crate) flight: FlightServiceClient<Channel>,
    /// The `authorization` header value (`Bearer …`), when the client logged in.
    pub(crate) bearer: Option<String>,
}

/// The stage at `stage_uri`, through the replica (see the module docs).
pub(crate) struct GrantedStore {
    transport: Transport,
    stage_uri: String,
    http: reqwest::Client,
}

impl std::fmt::Debug for GrantedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantedStore")
            .field("stage_uri", &self.stage_uri)
            .finish()
    }
}

impl std::fmt::Display for GrantedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (through the Query replica)", self.stage_uri)
    }
}

/// `e` as an object_store error whose source is the [`SdkError`] (so
/// [`crate::stage`] can give the caller the server's refusal as it was).
fn generic(e: SdkError) -> object_store::Error {
    object_store::Error::Generic {
        store: STORE,
        source: Box::new(e),
    }
}

fn not_supported(what: &str) -> object_store::Error {
    object_store::Error::NotSupported {
        source: format!(
            "{what} on a stage reached through the Query replica; it serves HEAD, GET, PUT and multipart uploads of one object"
        )
        .into(),
    }
}

/// The SHA-256 a stage key `<prefix>/sha256/<sha256>` ends with.
fn sha256_of(location: &Path) -> String {
    location
        .filename()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// `response` as an error when its status is not a success, naming `what` and the status.
async fn checked(
    what: &str,
    response: reqwest::Response,
) -> object_store::Result<reqwest::Response> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body = response.text().await.unwrap_or_default();
    let body: String = body.chars().take(512).collect();
    Err(generic(SdkError::Arrow(format!(
        "{what} through a presigned URL: HTTP {status}: {body}"
    ))))
}

impl GrantedStore {
    pub(crate) fn new(transport: Transport, stage_uri: &str) -> Self {
        Self {
            transport,
            stage_uri: stage_uri.to_string(),
            http: reqwest::Client::new(),
        }
    }

    /// One [`ACTION_STAGE`] call.
    async fn call(&self, request: StageRequest) -> object_store::Result<StageResponse> {
        let mut call = tonic::Request::new(arrow_flight::Action::new(
            ACTION_STAGE,
            request.encode_to_vec(),
        ));
        if let Some(bearer) = &self.transport.bearer {
            call.metadata_mut().insert(
                "authorization",
                bearer
                    .parse()
                    .map_err(|_| generic(SdkError::Arrow("malformed bearer token".into())))?,
            );
        }
        let path = || format!("{}/sha256/{}", self.stage_uri, request.sha256);
        let status_error = |status: tonic::Status| match status.code() {
            tonic::Code::NotFound => object_store::Error::NotFound {
                path: path(),
                source: Box::new(SdkError::from(status)),
            },
            _ => generic(SdkError::from(status)),
        };
        let mut results = self
            .transport
            .flight
            .clone()
            .do_action(call)
            .await
            .map_err(status_error)?
            .into_inner();
        let body = results
            .message()
            .await
            .map_err(status_error)?
            .ok_or_else(|| {
                generic(SdkError::Arrow(format!(
                    "{ACTION_STAGE} returned no result"
                )))
            })?
            .body;
        StageResponse::decode(body).map_err(|e| {
            generic(SdkError::Arrow(format!(
                "malformed {ACTION_STAGE} answer: {e}"
            )))
        })
    }

    fn request(&self, location: &Path, op: StageOp) -> StageRequest {
        StageRequest {
            stage_uri: self.stage_uri.clone(),
            sha256: sha256_of(location),
            op: op as i32,
            ..Default::default()
        }
    }

    async fn head_meta(&self, location: &Path) -> object_store::Result<ObjectMeta> {
        let answer = self.call(self.request(location, StageOp::Head)).await?;
        if !answer.found {
            return Err(object_store::Error::NotFound {
                path: location.to_string(),
                source: format!("{} is not on stage {}", location, self.stage_uri).into(),
            });
        }
        Ok(ObjectMeta {
            location: location.clone(),
            last_modified: chrono::DateTime::from_timestamp_millis(answer.last_modified_ms)
                .unwrap_or_default(),
            size: answer.size,
            e_tag: None,
            version: None,
        })
    }

    /// A presigned GET URL of `location`, valid for `expires_in`, signed by the replica.
    pub(crate) async fn signed_get(
        &self,
        location: &Path,
        expires_in: std::time::Duration,
    ) -> object_store::Result<String> {
        let request = StageRequest {
            expires_secs: expires_in.as_secs().max(1),
            ..self.request(location, StageOp::SignGet)
        };
        Ok(self.call(request).await?.url)
    }

    /// PUTs `payload` to a presigned `url` with the `headers` its signature covers; returns
    /// the ETag the store answered.
    async fn put_url(
        &self,
        signed: StageResponse,
        payload: PutPayload,
    ) -> object_store::Result<String> {
        let body = Bytes::from(payload);
        let mut put = self.http.put(&signed.url).body(body);
        for (name, value) in &signed.headers {
            put = put.header(name, value);
        }
        let response = put
            .send()
            .await
            .map_err(|e| generic(SdkError::Arrow(format!("PUT to the stage: {e}"))))?;
        let response = checked("PUT", response).await?;
        Ok(response
            .headers()
            .get(http::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string())
    }
}

#[async_trait::async_trait]
impl ObjectStore for GrantedStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        if opts.mode != object_store::PutMode::Overwrite {
            return Err(not_supported("a conditional PUT"));
        }
        let signed = self.call(self.request(location, StageOp::SignPut)).await?;
        let upload_id = signed.upload_id.clone();
        let e_tag = self.put_url(signed, payload).await?;
        // The replica verifies the bytes against their address and puts them in place.
        let complete = StageRequest {
            upload_id,
            ..self.request(location, StageOp::Complete)
        };
        self.call(complete).await?;
        Ok(PutResult {
            e_tag: Some(e_tag),
            version: None,
            extensions: Default::default(),
        })
    }

    async fn put_multipart_opts(
        &self,
        _location: &Path,
        _opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        Err(not_supported("put_multipart"))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let meta = self.head_meta(location).await?;
        let range: Range<u64> = match &options.range {
            Some(r) => r
                .as_range(meta.size)
                .map_err(|e| generic(SdkError::InvalidArgument(e.to_string())))?,
            None => 0..meta.size,
        };
        let payload: BoxStream<'static, object_store::Result<Bytes>> =
            if options.head || range.is_empty() {
                futures::stream::empty().boxed()
            } else {
                let url = self
                    .call(self.request(location, StageOp::SignGet))
                    .await?
                    .url;
                let response = self
                    .http
                    .get(url)
                    .header(
                        http::header::RANGE,
                        format!("bytes={}-{}", range.start, range.end - 1),
                    )
                    .send()
                    .await
                    .map_err(|e| generic(SdkError::Arrow(format!("GET from the stage: {e}"))))?;
                checked("GET", response)
                    .await?
                    .bytes_stream()
                    .map_err(|e| generic(SdkError::Arrow(format!("GET from the stage: {e}"))))
                    .boxed()
            };
        Ok(GetResult {
            payload: GetResultPayload::Stream(payload),
            meta,
            range,
            attributes: Attributes::default(),
            extensions: Default::default(),
        })
    }

    fn delete_stream(
        &self,
        _locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        futures::stream::once(async { Err(not_supported("delete")) }).boxed()
    }

    fn list(&self, _prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        futures::stream::once(async { Err(not_supported("list")) }).boxed()
    }

    async fn list_with_delimiter(
        &self,
        _prefix: Option<&Path>,
    ) -> object_store::Result<ListResult> {
        Err(not_supported("list"))
    }

    async fn copy_opts(
        &self,
        _from: &Path,
        _to: &Path,
        _options: CopyOptions,
    ) -> object_store::Result<()> {
        Err(not_supported("copy"))
    }
}

#[async_trait::async_trait]
impl MultipartStore for GrantedStore {
    async fn create_multipart(&self, path: &Path) -> object_store::Result<MultipartId> {
        Ok(self
            .call(self.request(path, StageOp::CreateMultipart))
            .await?
            .upload_id)
    }

    async fn put_part(
        &self,
        path: &Path,
        id: &MultipartId,
        part_idx: usize,
        data: PutPayload,
    ) -> object_store::Result<PartId> {
        let request = StageRequest {
            upload_id: id.clone(),
            part_number: u32::try_from(part_idx + 1).unwrap_or(u32::MAX),
            ..self.request(path, StageOp::SignPart)
        };
        let signed = self.call(request).await?;
        let content_id = self.put_url(signed, data).await?;
        Ok(PartId { content_id })
    }

    async fn complete_multipart(
        &self,
        path: &Path,
        id: &MultipartId,
        parts: Vec<PartId>,
    ) -> object_store::Result<PutResult> {
        let request = StageRequest {
            upload_id: id.clone(),
            etags: parts.into_iter().map(|p| p.content_id).collect(),
            ..self.request(path, StageOp::Complete)
        };
        self.call(request).await?;
        Ok(PutResult {
            e_tag: None,
            version: None,
            extensions: Default::default(),
        })
    }

    async fn abort_multipart(&self, path: &Path, id: &MultipartId) -> object_store::Result<()> {
        let request = StageRequest {
            upload_id: id.clone(),
            ..self.request(path, StageOp::Abort)
        };
        self.call(request).await.map(|_| ())
    }
}
