//! A table's managed stage: the object-store prefix that holds the bytes of its FILE values.
//!
//! Objects are content-addressed: the bytes with SHA-256 `h` live at `<stage>/sha256/<h>`,
//! so a retried or repeated upload of the same bytes stores them once, and the key itself
//! says what a read must hash to. The SDK reaches the stage with object_store, directly:
//! Query replicas and Metasrv never carry a FILE byte.
//!
//! * Uploads hash the source first (one local read), skip bytes the stage already holds,
//!   then stream them in parts of [`UploadOptions::part_size`] bytes with at most
//!   [`UploadOptions::concurrency`] parts in flight, so memory stays at about
//!   `part_size × concurrency` whatever the file size.
//! * On stores with a multipart API (S3 and S3-compatible servers: object_store's
//!   `MultipartStore`), the upload id and every completed part are written to a local
//!   checkpoint; after a crash, the same upload resumes and sends only the missing parts.
//!   An unfinished multipart upload is never visible as an object. On the local filesystem
//!   an upload is written to a temporary file and renamed into place when complete; an
//!   interrupted one starts again.
//! * Reads verify: a full read checks size and SHA-256 at the end and fails rather than
//!   return bytes that do not match; ranged reads check their length.
//!
//! Stage URIs: `s3://bucket/prefix` (credentials and endpoint from the `AWS_*` environment
//! variables, as object_store's `AmazonS3Builder::from_env` reads them) or `file:///path`.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::local::LocalFileSystem;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::signer::Signer;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::SdkError;
use crate::file::{FileRef, hex, is_sha256_hex, validate_media_type};
use crate::granted::{self, GrantedStore, Transport};
use crate::wire::{STAGE_URL_TTL_SECS, StageOp, StageRequest, StageResponse};

/// Default part size of multipart uploads: 16 MiB.
pub const PART_SIZE_DEFAULT: usize = 16 << 20;
/// Smallest part size accepted: 5 MiB, the S3 minimum for every part but the last.
pub const PART_SIZE_MIN: usize = 5 << 20;
/// Largest part size accepted: 512 MiB (memory is about part size × concurrency).
pub const PART_SIZE_MAX: usize = 512 << 20;
/// Most parts of one upload (the S3 limit).
pub const PARTS_MAX: u64 = 10_000;
/// Default parts in flight.
pub const CONCURRENCY_DEFAULT: usize = 4;
/// Longest presigned URL lifetime: 7 days, the S3 SigV4 limit.
pub const PRESIGN_MAX: Duration = Duration::from_secs(7 * 24 * 3600);
/// Size of local reads while hashing and spooling, in bytes.
const READ_CHUNK: usize = 4 << 20;

/// What an upload is doing, for progress bars: `done` of `total` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Reading the source to compute its SHA-256 (and spooling a reader to disk).
    Hashing { done: u64, total: Option<u64> },
    /// Sending parts to the stage (resumed parts count as done from the start).
    Uploading { done: u64, total: u64 },
    /// Receiving bytes from the stage.
    Downloading { done: u64, total: u64 },
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// How an upload runs.
#[derive(Clone)]
pub struct UploadOptions {
    /// Bytes per part, [`PART_SIZE_MIN`]..=[`PART_SIZE_MAX`]; default [`PART_SIZE_DEFAULT`].
    pub part_size: usize,
    /// Parts in flight, 1..=64; default [`CONCURRENCY_DEFAULT`].
    pub concurrency: usize,
    /// Where resumable uploads keep their checkpoints; `None` disables resuming. Default:
    /// `$LAKE_UPLOAD_DIR`, else `$XDG_CACHE_HOME/lake/uploads`, else
    /// `$HOME/.cache/lake/uploads`.
    pub checkpoint_dir: Option<PathBuf>,
    /// Called as bytes are hashed and sent.
    pub progress: Option<ProgressFn>,
    /// Send the bytes even when the stage already holds an object of the same address and
    /// size (to repair an object damaged on the store).
    pub force: bool,
}

impl Default for UploadOptions {
    fn default() -> Self {
        let dir = std::env::var_os("LAKE_UPLOAD_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_CACHE_HOME")
                    .map(|d| PathBuf::from(d).join("lake").join("uploads"))
            })
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(|d| PathBuf::from(d).join(".cache").join("lake").join("uploads"))
            });
        Self {
            part_size: PART_SIZE_DEFAULT,
            concurrency: CONCURRENCY_DEFAULT,
            checkpoint_dir: dir,
            progress: None,
            force: false,
        }
    }
}

impl UploadOptions {
    fn validate(&self) -> Result<(), SdkError> {
        if !(PART_SIZE_MIN..=PART_SIZE_MAX).contains(&self.part_size) {
            return Err(SdkError::InvalidArgument(format!(
                "part size {} bytes is outside {PART_SIZE_MIN}..={PART_SIZE_MAX} (5 MiB to 512 MiB)",
                self.part_size
            )));
        }
        if !(1..=64).contains(&self.concurrency) {
            return Err(SdkError::InvalidArgument(format!(
                "concurrency {} is outside 1..=64",
                self.concurrency
            )));
        }
        Ok(())
    }

    fn report(&self, progress: Progress) {
        if let Some(f) = &self.progress {
            f(progress);
        }
    }
}

/// The outcome of an upload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uploaded {
    /// The FILE value to put in a row.
    pub file: FileRef,
    /// The stage already held these bytes: nothing was sent.
    pub deduplicated: bool,
    /// Parts of an earlier, interrupted upload that were not sent again.
    pub resumed_parts: u64,
    /// Parts sent by this call.
    pub sent_parts: u64,
}

/// A checkpoint of a resumable multipart upload, as JSON in the checkpoint directory.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Checkpoint {
    /// The object URI being written.
    uri: String,
    size: u64,
    part_size: usize,
    upload_id: String,
    /// Completed parts: index → the store's part id (S3 ETag).
    parts: BTreeMap<usize, String>,
}

/// The backend of a stage.
#[derive(Clone)]
enum Backend {
    /// S3 with the caller's own credentials.
    S3(Arc<AmazonS3>),
    Local(Arc<LocalFileSystem>),
    /// S3 through the Query replica's grants (presigned URLs; [`crate::granted`]).
    Granted(Arc<GrantedStore>),
}

/// One object of a stage, as [`Stage::list_objects`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedObject {
    /// Its URI (for a finished object, the FILE URI `<stage>/sha256/<sha256>`).
    pub uri: String,
    /// Its key under the stage: `sha256/<sha256>`, or `incoming/<sha256>/<token>` for the
    /// bytes of an upload that never completed.
    pub key: String,
    /// The content address of a finished object (64 lowercase hex digits); `None` for an
    /// unfinished upload's bytes.
    pub sha256: Option<String>,
    /// Its size in bytes.
    pub size: u64,
    /// When it was last written, Unix milliseconds.
    pub last_modified_ms: i64,
}

/// An S3 multipart upload on a stage that was started and never completed or aborted, as
/// [`Stage::list_unfinished_uploads`] finds it. Its parts are stored (and billed) by S3 but
/// invisible to object listings until it is aborted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnfinishedUpload {
    /// The URI of the object it would create (`<stage>/sha256/<sha256>`).
    pub uri: String,
    /// Its key under the stage: `sha256/<sha256>`.
    pub key: String,
    /// S3's upload id.
    pub upload_id: String,
    /// When it was started (S3's `Initiated`), Unix milliseconds.
    pub initiated_ms: i64,
    /// When it was last written: the latest of its start and its parts' `LastModified`,
    /// Unix milliseconds. A resumed upload is active again.
    pub last_active_ms: i64,
    /// The bytes of the parts uploaded so far (S3 `ListParts`).
    pub bytes: u64,
}

/// Pages of [`Stage::list_unfinished_uploads`] (S3 answers up to 1,000 uploads a page):
/// a stage with more unfinished uploads than this lists the first ones, and the next
/// collection the rest.
const MAX_UPLOAD_PAGES: usize = 100;
/// S3 answers up to 1,000 parts a `ListParts` page and an upload has at most 10,000 parts.
const MAX_PART_PAGES: usize = 10;
/// The most bytes of one S3 listing answer read (a page of 1,000 uploads is ~0.5 MB).
const MAX_LISTING_BYTES: usize = 16 << 20;

/// `ListMultipartUploadsResult` (S3 API reference, ListMultipartUploads), the fields used.
#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct ListUploadsPage {
    #[serde(rename = "Upload", default)]
    uploads: Vec<ListedUpload>,
    #[serde(default)]
    is_truncated: bool,
    #[serde(default)]
    next_key_marker: Option<String>,
    #[serde(default)]
    next_upload_id_marker: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ListedUpload {
    key: String,
    upload_id: String,
    initiated: String,
}

/// `ListPartsResult` (S3 API reference, ListParts), the fields used.
#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct ListPartsPage {
    #[serde(rename = "Part", default)]
    parts: Vec<ListedPart>,
    #[serde(default)]
    is_truncated: bool,
    #[serde(default)]
    next_part_number_marker: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ListedPart {
    size: u64,
    last_modified: String,
}

/// Whether `e` is S3's answer for a multipart upload that no longer exists (error code
/// `NoSuchUpload`, HTTP 404; S3 API reference, UploadPart), as object_store and the
/// presigned-URL path both pass S3's error body on.
fn upload_is_gone(e: &SdkError) -> bool {
    e.to_string().contains("<Code>NoSuchUpload</Code>")
}

/// A managed stage (see the module docs).
#[derive(Clone)]
pub struct Stage {
    backend: Backend,
    /// Canonical stage URI without trailing `/`.
    uri: String,
    /// Scheme and authority (`s3://bucket`, `file://`) that object paths are joined onto.
    base: String,
    prefix: Path,
}

impl std::fmt::Debug for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stage").field("uri", &self.uri).finish()
    }
}

fn storage(uri: &str, e: impl std::fmt::Display) -> SdkError {
    SdkError::Storage {
        uri: uri.to_string(),
        message: e.to_string(),
    }
}

/// `e` from the stage's store: the replica's own answer when the stage is reached through
/// it (a refused grant stays `PERMISSION_DENIED`), else [`SdkError::Storage`].
fn store_error(uri: &str, e: object_store::Error) -> SdkError {
    match e {
        object_store::Error::Generic { store, source } if store == granted::STORE => {
            match source.downcast::<SdkError>() {
                Ok(inner) => *inner,
                Err(other) => storage(uri, other),
            }
        }
        other => storage(uri, other),
    }
}

/// `e` from reading the object of FILE `uri`: [`SdkError::NotFound`] when the object is
/// absent, [`SdkError::Storage`] otherwise.
fn read_error(uri: &str, e: object_store::Error) -> SdkError {
    match e {
        object_store::Error::NotFound { .. } => SdkError::NotFound(format!(
            "FILE {uri} is not on the stage; upload it first (LakeClient::upload_file, lake file put)"
        )),
        other => store_error(uri, other),
    }
}

fn io(path: &FsPath, e: impl std::fmt::Display) -> SdkError {
    SdkError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

impl Stage {
    /// Opens the stage at `uri`: `s3://bucket/prefix`, `file:///absolute/path`, or an
    /// absolute path.
    ///
    /// # Errors
    /// [`SdkError::InvalidArgument`] for another scheme or a relative path;
    /// [`SdkError::Storage`] when object_store cannot configure the store (e.g. no region).
    pub fn open(uri: &str) -> Result<Self, SdkError> {
        Self::open_parsed(uri, true)
    }

    /// [`Self::open`]; `credentials` says whether to configure S3 from the environment (a
    /// stage reached through the replica keeps only the parsed URI).
    fn open_parsed(uri: &str, credentials: bool) -> Result<Self, SdkError> {
        let uri = uri.trim_end_matches('/');
        if let Some(rest) = uri
            .strip_prefix("s3://")
            .or_else(|| uri.strip_prefix("s3a://"))
        {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(SdkError::InvalidArgument(format!(
                    "stage {uri:?} names no bucket: use s3://bucket/prefix"
                )));
            }
            let builder = if credentials {
                AmazonS3Builder::from_env()
            } else {
                // Never used for a request: the backend is replaced by the caller.
                AmazonS3Builder::new().with_region("us-east-1")
            };
            let store = builder
                .with_bucket_name(bucket)
                .build()
                .map_err(|e| storage(uri, e))?;
            return Ok(Self {
                backend: Backend::S3(Arc::new(store)),
                uri: format!("s3://{bucket}/{prefix}")
                    .trim_end_matches('/')
                    .to_string(),
                base: format!("s3://{bucket}"),
                prefix: Path::parse(prefix).map_err(|e| storage(uri, e))?,
            });
        }
        let path = match uri.strip_prefix("file://") {
            Some(path) => path,
            None if uri.contains("://") => {
                return Err(SdkError::InvalidArgument(format!(
                    "stage {uri:?} has an unsupported scheme: use s3://bucket/prefix or file:///path"
                )));
            }
            None => uri,
        };
        if !path.starts_with('/') {
            return Err(SdkError::InvalidArgument(format!(
                "stage {uri:?} is not an absolute path"
            )));
        }
        Ok(Self {
            backend: Backend::Local(Arc::new(LocalFileSystem::new())),
            uri: format!("file://{path}"),
            base: "file://".into(),
            prefix: Path::from_absolute_path(path).map_err(|e| storage(uri, e))?,
        })
    }

    /// The stage at `uri` reached through a Query replica (`transport`): an `s3://` stage
    /// is used with presigned URLs the replica hands out after checking the caller's grants
    /// ([`crate::wire::ACTION_STAGE`]), so the caller needs no storage credentials; any
    /// other stage (the local filesystem has no URLs) is opened directly, as by
    /// [`Self::open`].
    ///
    /// # Errors
    /// As [`Self::open`].
    pub(crate) fn through(uri: &str, transport: Transport) -> Result<Self, SdkError> {
        let mut stage = Self::open_parsed(uri, false)?;
        if matches!(stage.backend, Backend::S3(_)) {
            stage.backend = Backend::Granted(Arc::new(GrantedStore::new(transport, &stage.uri)));
        }
        Ok(stage)
    }

    /// Opens the stage that holds `file`, from its URI.
    ///
    /// # Errors
    /// [`SdkError::InvalidArgument`] when the URI is not `<stage>/sha256/<sha256>`; as
    /// [`Self::open`].
    pub fn for_file(file: &FileRef) -> Result<Self, SdkError> {
        Self::open(stage_of(file)?)
    }

    /// [`Self::for_file`], through a Query replica ([`Self::through`]).
    pub(crate) fn for_file_through(file: &FileRef, transport: Transport) -> Result<Self, SdkError> {
        Self::through(stage_of(file)?, transport)
    }

    /// [`Self::stat`], through a Query replica ([`Self::through`]).
    pub(crate) async fn stat_through(
        uri: &str,
        transport: Transport,
    ) -> Result<(Self, FileRef), SdkError> {
        let mut file = FileRef::of_uri(uri);
        let stage = Self::for_file_through(&file, transport)?;
        stage.stat_into(&mut file).await?;
        Ok((stage, file))
    }

    /// The stage object of `file` (its URI checked to be this stage's), from one HEAD.
    async fn head(&self, file: &FileRef) -> Result<object_store::ObjectMeta, SdkError> {
        let key = self.locate(file)?;
        self.store()
            .head(&key)
            .await
            .map_err(|e| read_error(&file.uri, e))
    }

    /// Fills `file`'s size and modification time from one HEAD request.
    async fn stat_into(&self, file: &mut FileRef) -> Result<(), SdkError> {
        let meta = self.head(file).await?;
        file.size = meta.size;
        file.uploaded_at_ms = meta.last_modified.timestamp_millis();
        Ok(())
    }
}

/// The stage URI of `file`'s object `<stage>/sha256/<sha256>`.
///
/// # Errors
/// [`SdkError::InvalidArgument`] when the URI is not of that form.
fn stage_of(file: &FileRef) -> Result<&str, SdkError> {
    {
        file.uri
            .strip_suffix(&file.sha256)
            .and_then(|s| s.strip_suffix("/sha256/"))
            .filter(|_| is_sha256_hex(&file.sha256))
            .ok_or_else(|| {
                SdkError::InvalidArgument(format!(
                    "FILE uri {:?} is not a stage object <stage>/sha256/<the file's sha256>",
                    file.uri
                ))
            })
    }
}

impl Stage {
    /// The stage and FILE value of the object at `uri` (`<stage>/sha256/<sha256>`): size
    /// and modification time from one HEAD request, sha256 from the content address (what
    /// a verified read checks), media type `application/octet-stream` (stages keep none).
    ///
    /// # Errors
    /// [`SdkError::InvalidArgument`] for a URI that is not a stage object;
    /// [`SdkError::NotFound`]; [`SdkError::Storage`].
    pub async fn stat(uri: &str) -> Result<(Self, FileRef), SdkError> {
        let mut file = FileRef::of_uri(uri);
        let stage = Self::for_file(&file)?;
        stage.stat_into(&mut file).await?;
        Ok((stage, file))
    }

    /// The stage URI (no trailing `/`).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    fn store(&self) -> Arc<dyn ObjectStore> {
        match &self.backend {
            Backend::S3(s) => s.clone(),
            Backend::Local(l) => l.clone(),
            Backend::Granted(g) => g.clone(),
        }
    }

    /// The store's multipart API (`None` on the local filesystem).
    fn multipart(&self) -> Option<Arc<dyn MultipartStore>> {
        match &self.backend {
            Backend::S3(s) => Some(s.clone()),
            Backend::Granted(g) => Some(g.clone()),
            Backend::Local(_) => None,
        }
    }

    /// Every object on this stage: the finished ones (`<stage>/sha256/<sha256>`, with
    /// [`StagedObject::sha256`] set) and what unfinished single-PUT uploads left under
    /// `<stage>/incoming/` (never visible as FILE objects). Keys of any other shape are left
    /// out, so nothing this module did not write is ever offered for removal. One LIST
    /// (paged by the store).
    ///
    /// # Errors
    /// [`SdkError::Storage`] when the store cannot be listed.
    pub async fn list_objects(&self) -> Result<Vec<StagedObject>, SdkError> {
        let mut found = Vec::new();
        let mut listing = self.store().list(Some(&self.prefix));
        while let Some(meta) = listing.next().await {
            let meta = meta.map_err(|e| store_error(&self.uri, e))?;
            let Some(parts) = meta.location.prefix_match(&self.prefix) else {
                continue;
            };
            let parts: Vec<String> = parts.map(|p| p.as_ref().to_string()).collect();
            let sha256 = match parts.as_slice() {
                [dir, sha] if dir == "sha256" && is_sha256_hex(sha) => Some(sha.clone()),
                [dir, sha, _token] if dir == "incoming" && is_sha256_hex(sha) => None,
                _ => continue,
            };
            found.push(StagedObject {
                uri: self.object_uri(&meta.location),
                key: parts.join("/"),
                sha256,
                size: meta.size,
                last_modified_ms: meta.last_modified.timestamp_millis(),
            });
        }
        found.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(found)
    }

    /// The S3 multipart uploads on this stage that were started and never completed or
    /// aborted (interrupted resumable uploads, abandoned ones), oldest first, each with the
    /// bytes of its parts so far and when it was last written. Only uploads of objects
    /// shaped like this module's (`<stage>/sha256/<sha256>`) are listed. object_store has
    /// no call for this, so it is S3's `ListMultipartUploads` (with `prefix`) and
    /// `ListParts`, sent as requests signed by object_store's [`Signer`] (SigV4 query
    /// parameters) with the stage's own credentials. Up to 100 pages of 1,000 uploads; a
    /// local-filesystem stage has none.
    ///
    /// # Errors
    /// [`SdkError::Unsupported`] on a stage reached through a Query replica (listing needs
    /// the bucket's credentials); [`SdkError::Storage`] when S3 refuses or answers
    /// something that is not the listing.
    pub async fn list_unfinished_uploads(&self) -> Result<Vec<UnfinishedUpload>, SdkError> {
        let s3 = match &self.backend {
            Backend::S3(s3) => s3.clone(),
            Backend::Local(_) => return Ok(Vec::new()),
            Backend::Granted(_) => {
                return Err(SdkError::Unsupported(format!(
                    "listing the unfinished uploads of stage {} needs the bucket's credentials; the Query replica does it (VACUUM, lake gc)",
                    self.uri
                )));
            }
        };
        let http = reqwest::Client::new();
        let prefix = match self.prefix.as_ref() {
            "" => "sha256/".to_string(),
            p => format!("{p}/sha256/"),
        };
        let mut found = Vec::new();
        let mut markers: Option<(String, String)> = None;
        for _ in 0..MAX_UPLOAD_PAGES {
            let mut query = vec![
                ("uploads".to_string(), String::new()),
                ("prefix".to_string(), prefix.clone()),
            ];
            if let Some((key, id)) = &markers {
                query.push(("key-marker".into(), key.clone()));
                query.push(("upload-id-marker".into(), id.clone()));
            }
            let page: ListUploadsPage = self
                .signed_listing(&s3, &http, &Path::default(), query)
                .await?;
            for upload in page.uploads {
                let Some(parts) = Path::from(upload.key.as_str())
                    .prefix_match(&self.prefix)
                    .map(|p| p.map(|p| p.as_ref().to_string()).collect::<Vec<_>>())
                else {
                    continue;
                };
                if !matches!(parts.as_slice(), [dir, sha] if dir == "sha256" && is_sha256_hex(sha))
                {
                    continue;
                }
                let initiated_ms = self.s3_time("Initiated", &upload.initiated)?;
                let key = Path::from(upload.key.as_str());
                let (bytes, last_part_ms) = self
                    .uploaded_parts(&s3, &http, &key, &upload.upload_id)
                    .await?;
                found.push(UnfinishedUpload {
                    uri: self.object_uri(&key),
                    key: parts.join("/"),
                    upload_id: upload.upload_id,
                    initiated_ms,
                    last_active_ms: initiated_ms.max(last_part_ms),
                    bytes,
                });
            }
            match (
                page.is_truncated,
                page.next_key_marker,
                page.next_upload_id_marker,
            ) {
                (true, Some(key), Some(id)) => markers = Some((key, id)),
                _ => break,
            }
        }
        found.sort_by(|a, b| (a.initiated_ms, &a.key).cmp(&(b.initiated_ms, &b.key)));
        Ok(found)
    }

    /// `value`, an S3 timestamp (ISO 8601, `2026-12-04T17:35:20.000Z`) of field `field`,
    /// in Unix milliseconds.
    fn s3_time(&self, field: &str, value: &str) -> Result<i64, SdkError> {
        chrono::DateTime::parse_from_rfc3339(value)
            .map(|t| t.timestamp_millis())
            .map_err(|e| storage(&self.uri, format!("S3 listed {field} {value:?}: {e}")))
    }

    /// The bytes of the parts of upload `upload_id` of `key` so far and the latest part's
    /// `LastModified` in Unix milliseconds (`i64::MIN` without parts): S3 `ListParts`, up
    /// to 10 pages (S3's 10,000 parts).
    async fn uploaded_parts(
        &self,
        s3: &AmazonS3,
        http: &reqwest::Client,
        key: &Path,
        upload_id: &str,
    ) -> Result<(u64, i64), SdkError> {
        let (mut bytes, mut latest) = (0u64, i64::MIN);
        let mut marker: Option<String> = None;
        for _ in 0..MAX_PART_PAGES {
            let mut query = vec![("uploadId".to_string(), upload_id.to_string())];
            if let Some(m) = &marker {
                query.push(("part-number-marker".into(), m.clone()));
            }
            let page: ListPartsPage = self.signed_listing(s3, http, key, query).await?;
            for part in &page.parts {
                bytes = bytes.saturating_add(part.size);
                latest = latest.max(self.s3_time("LastModified", &part.last_modified)?);
            }
            match (page.is_truncated, page.next_part_number_marker) {
                (true, Some(m)) => marker = Some(m),
                _ => break,
            }
        }
        Ok((bytes, latest))
    }

    /// GETs `path` with `query`, signed by object_store for one minute, and reads S3's XML
    /// answer (at most 16 MiB) as `T`.
    async fn signed_listing<T: serde::de::DeserializeOwned>(
        &self,
        s3: &AmazonS3,
        http: &reqwest::Client,
        path: &Path,
        query: Vec<(String, String)>,
    ) -> Result<T, SdkError> {
        let options = object_store::signer::SignedUrlOptions::default().with_query(query);
        let url = s3
            .signed_url_opts(http::Method::GET, path, Duration::from_secs(60), &options)
            .await
            .map_err(|e| store_error(&self.uri, e))?;
        let mut response = http
            .get(url)
            .send()
            .await
            .map_err(|e| storage(&self.uri, e))?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| storage(&self.uri, e))? {
            if body.len() + chunk.len() > MAX_LISTING_BYTES {
                return Err(storage(
                    &self.uri,
                    format!("an S3 listing answer past {MAX_LISTING_BYTES} bytes"),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            return Err(storage(
                &self.uri,
                format!(
                    "S3 listing answered HTTP {status}: {}",
                    text.chars().take(512).collect::<String>()
                ),
            ));
        }
        quick_xml::de::from_str(&text)
            .map_err(|e| storage(&self.uri, format!("S3 listing answer unreadable: {e}")))
    }

    /// Aborts `upload` (one of [`Self::list_unfinished_uploads`]): S3 removes its parts. An
    /// upload already gone is not an error.
    ///
    /// # Errors
    /// [`SdkError::Storage`] when the store refuses; [`SdkError::Unsupported`] on a stage
    /// without multipart uploads.
    pub async fn abort_upload(&self, upload: &UnfinishedUpload) -> Result<(), SdkError> {
        let Some(multipart) = self.multipart() else {
            return Err(SdkError::Unsupported(format!(
                "stage {} has no multipart uploads",
                self.uri
            )));
        };
        let key = self.under(&upload.key);
        match multipart.abort_multipart(&key, &upload.upload_id).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(store_error(&self.uri, e)),
        }
    }

    /// Deletes `object` (one of [`Self::list_objects`]); an object already gone is not an
    /// error.
    ///
    /// # Errors
    /// [`SdkError::Storage`] when the store refuses.
    pub async fn delete_object(&self, object: &StagedObject) -> Result<(), SdkError> {
        let key = self.under(&object.key);
        match self.store().delete(&key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(store_error(&self.uri, e)),
        }
    }

    /// The store path of `key`, a `/`-separated key under the stage (as
    /// [`StagedObject::key`] and [`UnfinishedUpload::key`] give it).
    fn under(&self, key: &str) -> Path {
        key.split('/')
            .fold(self.prefix.clone(), |path, part| path.join(part))
    }

    fn key(&self, sha256: &str) -> Path {
        self.prefix.clone().join("sha256").join(sha256)
    }

    fn object_uri(&self, key: &Path) -> String {
        match &self.backend {
            Backend::S3(_) | Backend::Granted(_) => format!("{}/{key}", self.base),
            Backend::Local(_) => format!("file:///{key}"),
        }
    }

    /// The key of `file` on this stage, after checking that its URI is this stage's
    /// object for its sha256.
    fn locate(&self, file: &FileRef) -> Result<Path, SdkError> {
        file.validate().map_err(SdkError::InvalidArgument)?;
        let key = self.key(&file.sha256);
        let expected = self.object_uri(&key);
        if file.uri != expected {
            return Err(SdkError::InvalidArgument(format!(
                "FILE uri {:?} is not on stage {}: a FILE value names an object on its own table's stage; upload the bytes to this table (LakeClient::upload_file, lake file put) and use the FILE value that returns",
                file.uri, self.uri
            )));
        }
        Ok(key)
    }

    /// Checks that `file` is on this stage as described: its URI is this stage's object
    /// for its sha256 (the content address), and the object exists with `file.size` bytes.
    /// One HEAD request; no object bytes are read.
    ///
    /// # Errors
    /// [`SdkError::InvalidArgument`] naming what disagrees; [`SdkError::NotFound`] when
    /// the object is absent; [`SdkError::Storage`] when the store fails.
    pub async fn check(&self, file: &FileRef) -> Result<(), SdkError> {
        let meta = self.head(file).await?;
        if meta.size != file.size {
            return Err(SdkError::InvalidArgument(format!(
                "FILE {} has {} bytes on the stage but the value says {}",
                file.uri, meta.size, file.size
            )));
        }
        Ok(())
    }

    /// Uploads the file at `path` (see the module docs) as `media_type`.
    ///
    /// # Errors
    /// [`SdkError::Io`] reading `path`; [`SdkError::InvalidArgument`] for a bad media type
    /// or options; [`SdkError::Storage`] when the store fails (the checkpoint, if any, is
    /// kept so that a retry resumes).
    pub async fn upload_path(
        &self,
        path: &FsPath,
        media_type: &str,
        options: &UploadOptions,
    ) -> Result<Uploaded, SdkError> {
        validate_media_type(media_type).map_err(SdkError::InvalidArgument)?;
        options.validate()?;
        let meta = std::fs::metadata(path).map_err(|e| io(path, e))?;
        if !meta.is_file() {
            return Err(io(path, "not a regular file"));
        }
        let version = FileVersion::of(path)?;
        let (sha256, size) = hash_file(path, options).await?;
        version.unchanged(path)?;
        if size.div_ceil(options.part_size as u64) > PARTS_MAX {
            return Err(SdkError::InvalidArgument(format!(
                "{} bytes need more than {PARTS_MAX} parts of {} bytes; raise the part size",
                size, options.part_size
            )));
        }
        let key = self.key(&sha256);
        let uri = self.object_uri(&key);
        let file = |deduplicated, resumed_parts, sent_parts| Uploaded {
            file: FileRef {
                uri: uri.clone(),
                size,
                sha256: sha256.clone(),
                media_type: media_type.to_string(),
                uploaded_at_ms: now_ms(),
            },
            deduplicated,
            resumed_parts,
            sent_parts,
        };
        match self.store().head(&key).await {
            Ok(existing) if existing.size == size && !options.force => {
                options.report(Progress::Uploading {
                    done: size,
                    total: size,
                });
                return Ok(file(true, 0, 0));
            }
            Ok(existing) if existing.size != size => tracing::warn!(
                uri,
                stored = existing.size,
                size,
                "stage object has the wrong size; uploading it again"
            ),
            Ok(_) => {}
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(store_error(&uri, e)),
        }
        let (resumed, sent) = match self.multipart() {
            Some(multipart) if size > options.part_size as u64 => {
                self.upload_resumable(multipart, path, &key, &uri, (size, &version), options)
                    .await?
            }
            _ => {
                self.upload_streaming(path, &key, &uri, (size, &sha256), options)
                    .await?
            }
        };
        let stored = self
            .store()
            .head(&key)
            .await
            .map_err(|e| store_error(&uri, e))?;
        if stored.size != size {
            return Err(SdkError::Corrupt {
                uri,
                message: format!("stored {} bytes, sent {size}", stored.size),
            });
        }
        Ok(file(false, resumed, sent))
    }

    /// Uploads the bytes of `reader`: they are spooled to a temporary file in the
    /// checkpoint directory (or the system temporary directory) while hashing, then sent
    /// as by [`Self::upload_path`], so memory stays bounded. A reader cannot resume.
    ///
    /// # Errors
    /// As [`Self::upload_path`].
    pub async fn upload_reader(
        &self,
        mut reader: impl tokio::io::AsyncRead + Unpin,
        media_type: &str,
        options: &UploadOptions,
    ) -> Result<Uploaded, SdkError> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        validate_media_type(media_type).map_err(SdkError::InvalidArgument)?;
        options.validate()?;
        let dir = options
            .checkpoint_dir
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let spool = tempfile::NamedTempFile::new_in(&dir).map_err(|e| io(&dir, e))?;
        let mut out = tokio::fs::File::create(spool.path())
            .await
            .map_err(|e| io(spool.path(), e))?;
        let mut buffer = vec![0u8; READ_CHUNK];
        let mut done = 0u64;
        loop {
            let n = reader
                .read(&mut buffer)
                .await
                .map_err(|e| io(FsPath::new("<reader>"), e))?;
            if n == 0 {
                break;
            }
            out.write_all(&buffer[..n])
                .await
                .map_err(|e| io(spool.path(), e))?;
            done += n as u64;
            options.report(Progress::Hashing { done, total: None });
        }
        out.flush().await.map_err(|e| io(spool.path(), e))?;
        drop(out);
        let options = UploadOptions {
            checkpoint_dir: None,
            ..options.clone()
        };
        self.upload_path(spool.path(), media_type, &options).await
    }

    /// Streams the file into a multipart upload through object_store's `WriteMultipart`
    /// (a single PUT when it fits in one part), hashing what it sends: bytes that no longer
    /// hash to `sha256` abort the upload. Not resumable.
    async fn upload_streaming(
        &self,
        path: &FsPath,
        key: &Path,
        uri: &str,
        (size, sha256): (u64, &str),
        options: &UploadOptions,
    ) -> Result<(u64, u64), SdkError> {
        let store = self.store();
        let changed = || io(path, "the file changed while it was being uploaded");
        if size <= options.part_size as u64 {
            let bytes = tokio::fs::read(path).await.map_err(|e| io(path, e))?;
            if bytes.len() as u64 != size || hex(&Sha256::digest(&bytes)) != sha256 {
                return Err(changed());
            }
            store
                .put(key, PutPayload::from(bytes))
                .await
                .map_err(|e| store_error(uri, e))?;
            options.report(Progress::Uploading {
                done: size,
                total: size,
            });
            return Ok((0, 1));
        }
        let upload = store
            .put_multipart(key)
            .await
            .map_err(|e| store_error(uri, e))?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, options.part_size);
        let sent = async {
            let mut file = tokio::fs::File::open(path).await.map_err(|e| io(path, e))?;
            let mut hasher = Sha256::new();
            let mut done = 0u64;
            loop {
                writer
                    .wait_for_capacity(options.concurrency)
                    .await
                    .map_err(|e| store_error(uri, e))?;
                let chunk = read_up_to(&mut file, options.part_size)
                    .await
                    .map_err(|e| io(path, e))?;
                if chunk.is_empty() {
                    break;
                }
                done += chunk.len() as u64;
                hasher.update(&chunk);
                writer.put(chunk);
                options.report(Progress::Uploading { done, total: size });
            }
            if done != size || hex(&hasher.finalize()) != sha256 {
                return Err(changed());
            }
            Ok(())
        }
        .await;
        match sent {
            Ok(()) => {
                writer.finish().await.map_err(|e| store_error(uri, e))?;
                Ok((0, size.div_ceil(options.part_size as u64)))
            }
            Err(e) => {
                if let Err(abort) = writer.abort().await {
                    tracing::warn!(uri, error = %abort, "could not abort a failed upload");
                }
                Err(e)
            }
        }
    }

    /// A multipart upload whose id and completed parts are checkpointed, so that a crash
    /// loses no sent part.
    async fn upload_resumable(
        &self,
        s3: Arc<dyn MultipartStore>,
        path: &FsPath,
        key: &Path,
        uri: &str,
        (size, version): (u64, &FileVersion),
        options: &UploadOptions,
    ) -> Result<(u64, u64), SdkError> {
        let part_size = options.part_size;
        let parts = size.div_ceil(part_size as u64) as usize;
        let checkpoint_path = options.checkpoint_dir.as_ref().map(|dir| {
            let digest = hex(&Sha256::digest(uri.as_bytes()));
            dir.join(format!("{}.json", &digest[..32]))
        });
        let resumed = checkpoint_path
            .as_deref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|bytes| serde_json::from_slice::<Checkpoint>(&bytes).ok())
            .filter(|c| c.uri == uri && c.size == size && c.part_size == part_size);
        let checkpoint = match resumed {
            Some(c) => c,
            None => {
                let id = s3
                    .create_multipart(key)
                    .await
                    .map_err(|e| store_error(uri, e))?;
                Checkpoint {
                    uri: uri.to_string(),
                    size,
                    part_size,
                    upload_id: id,
                    parts: BTreeMap::new(),
                }
            }
        };
        let resumed_parts = checkpoint.parts.len() as u64;
        if let Some(p) = &checkpoint_path {
            save_checkpoint(p, &checkpoint)?;
        }
        let id = checkpoint.upload_id.clone();
        let already: u64 = checkpoint
            .parts
            .keys()
            .map(|&i| part_len(i, part_size, size))
            .sum();
        let todo: Vec<usize> = (0..parts)
            .filter(|i| !checkpoint.parts.contains_key(i))
            .collect();
        let state = Arc::new(Mutex::new((checkpoint, already)));
        options.report(Progress::Uploading {
            done: already,
            total: size,
        });
        let sent = futures::stream::iter(todo.iter().copied())
            .map(|index| {
                let s3 = s3.clone();
                let state = state.clone();
                let checkpoint_path = checkpoint_path.clone();
                let id = id.clone();
                async move {
                    let offset = index as u64 * part_size as u64;
                    let len = part_len(index, part_size, size);
                    let bytes = read_at(path, offset, len).await?;
                    let part = s3
                        .put_part(key, &id, index, PutPayload::from(bytes))
                        .await
                        .map_err(|e| store_error(uri, e))?;
                    let mut guard = state.lock().unwrap_or_else(|p| p.into_inner());
                    guard.0.parts.insert(index, part.content_id);
                    guard.1 += len;
                    if let Some(p) = &checkpoint_path {
                        save_checkpoint(p, &guard.0)?;
                    }
                    options.report(Progress::Uploading {
                        done: guard.1,
                        total: size,
                    });
                    Ok::<_, SdkError>(())
                }
            })
            .buffer_unordered(options.concurrency)
            .try_collect::<Vec<()>>()
            .await;
        if let Err(e) = sent {
            // Keep the checkpoint when there is one: a retry resumes. Without one the
            // upload cannot resume, so abort it and leave nothing behind.
            let Some(p) = &checkpoint_path else {
                let _ = s3.abort_multipart(key, &id).await;
                return Err(e);
            };
            // S3's answer for an upload that is gone (aborted by the stage's garbage
            // collection after its grace): resuming it can never succeed, so the next
            // try starts a new upload.
            if upload_is_gone(&e) {
                let _ = std::fs::remove_file(p);
                return Err(SdkError::Storage {
                    uri: uri.to_string(),
                    message: format!(
                        "the resumable upload {id} is no longer on the stage (an upload left unfinished past the stage's garbage grace is aborted); its checkpoint is removed, so uploading again starts over: {e}"
                    ),
                });
            }
            return Err(e);
        }
        // Parts are read out of order, so they cannot be hashed as one stream: the file's
        // length and modification time must be what they were when it was hashed.
        if let Err(e) = version.unchanged(path) {
            if let Some(p) = &checkpoint_path {
                let _ = std::fs::remove_file(p);
            }
            let _ = s3.abort_multipart(key, &id).await;
            return Err(e);
        }
        let completed: Vec<PartId> = {
            let guard = state.lock().unwrap_or_else(|p| p.into_inner());
            guard
                .0
                .parts
                .values()
                .map(|content_id| PartId {
                    content_id: content_id.clone(),
                })
                .collect()
        };
        if let Err(e) = s3.complete_multipart(key, &id, completed).await {
            // The upload id may be gone (expired, aborted): the next attempt starts over.
            if let Some(p) = &checkpoint_path {
                let _ = std::fs::remove_file(p);
            }
            return Err(store_error(uri, e));
        }
        if let Some(p) = &checkpoint_path {
            let _ = std::fs::remove_file(p);
        }
        Ok((resumed_parts, todo.len() as u64))
    }

    /// Streams the bytes of `file`, checking at the end that exactly `file.size` bytes
    /// hashing to `file.sha256` arrived; otherwise the stream's last item is
    /// [`SdkError::Corrupt`].
    ///
    /// # Errors
    /// As [`Self::check`], before any byte.
    pub async fn open_file(
        &self,
        file: &FileRef,
    ) -> Result<BoxStream<'static, Result<Bytes, SdkError>>, SdkError> {
        let key = self.locate(file)?;
        let result = self
            .store()
            .get(&key)
            .await
            .map_err(|e| read_error(&file.uri, e))?;
        let uri = file.uri.clone();
        let expected = (file.size, file.sha256.clone());
        let mut hasher = Some(Sha256::new());
        let mut received = 0u64;
        let bytes = result.into_stream().map_err({
            let uri = uri.clone();
            move |e| store_error(&uri, e)
        });
        let end = futures::stream::once(async { Ok(Bytes::new()) });
        Ok(bytes
            .chain(end)
            .filter_map(move |item| {
                let out = match item {
                    Ok(chunk) if chunk.is_empty() => {
                        // The end marker: verify what arrived.
                        let digest = hex(&hasher.take().unwrap_or_default().finalize());
                        if received != expected.0 || digest != expected.1 {
                            Some(Err(SdkError::Corrupt {
                                uri: uri.clone(),
                                message: format!(
                                    "read {received} bytes with sha256 {digest}; expected {} bytes with sha256 {}",
                                    expected.0, expected.1
                                ),
                            }))
                        } else {
                            None
                        }
                    }
                    Ok(chunk) => {
                        if let Some(h) = hasher.as_mut() {
                            h.update(&chunk);
                        }
                        received += chunk.len() as u64;
                        Some(Ok(chunk))
                    }
                    Err(e) => Some(Err(e)),
                };
                std::future::ready(out)
            })
            .boxed())
    }

    /// Bytes `range` (start inclusive, end exclusive, within `0..=file.size`) of `file`.
    /// A range cannot be checked against the whole file's SHA-256; its length is checked.
    ///
    /// # Errors
    /// [`SdkError::InvalidArgument`] for a range outside the file; as [`Self::check`].
    pub async fn read_range(&self, file: &FileRef, range: Range<u64>) -> Result<Bytes, SdkError> {
        let key = self.locate(file)?;
        if range.start > range.end || range.end > file.size {
            return Err(SdkError::InvalidArgument(format!(
                "range {}..{} is outside FILE {} of {} bytes",
                range.start, range.end, file.uri, file.size
            )));
        }
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let bytes = self
            .store()
            .get_range(&key, range.clone())
            .await
            .map_err(|e| read_error(&file.uri, e))?;
        if bytes.len() as u64 != range.end - range.start {
            return Err(SdkError::Corrupt {
                uri: file.uri.clone(),
                message: format!(
                    "range {}..{} returned {} bytes",
                    range.start,
                    range.end,
                    bytes.len()
                ),
            });
        }
        Ok(bytes)
    }

    /// Writes `file` to `out`, verified: the bytes go to a temporary file beside `out`,
    /// which is renamed to `out` only after size and SHA-256 match.
    ///
    /// # Errors
    /// [`SdkError::Corrupt`] (and `out` untouched) when the stored bytes do not match; as
    /// [`Self::open_file`]; [`SdkError::Io`] writing `out`.
    pub async fn download(
        &self,
        file: &FileRef,
        out: &FsPath,
        progress: Option<ProgressFn>,
    ) -> Result<(), SdkError> {
        use tokio::io::AsyncWriteExt;
        match std::fs::symlink_metadata(out) {
            Ok(meta) if !meta.is_file() => {
                return Err(io(
                    out,
                    "exists and is not a regular file; a download only creates or replaces regular files",
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(out, e)),
        }
        let mut stream = self.open_file(file).await?;
        let dir = match out.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        #[cfg(unix)]
        {
            // As a newly created file: 0666 less the umask.
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let partial = builder.tempfile_in(&dir).map_err(|e| io(&dir, e))?;
        let mut writer = tokio::fs::File::create(partial.path())
            .await
            .map_err(|e| io(partial.path(), e))?;
        let mut done = 0u64;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk?;
            writer
                .write_all(&chunk)
                .await
                .map_err(|e| io(partial.path(), e))?;
            done += chunk.len() as u64;
            if let Some(p) = &progress {
                p(Progress::Downloading {
                    done,
                    total: file.size,
                });
            }
        }
        writer.flush().await.map_err(|e| io(partial.path(), e))?;
        writer.sync_all().await.map_err(|e| io(partial.path(), e))?;
        drop(writer);
        partial.persist(out).map_err(|e| io(out, e.error))?;
        Ok(())
    }

    /// A presigned GET URL for `file`, valid for `expires_in` (at most [`PRESIGN_MAX`]),
    /// for clients without storage credentials (S3 SigV4 query signing, object_store
    /// `Signer`). Through a replica ([`crate::LakeClient::stage`]) the replica signs it
    /// after checking the caller may read the table.
    ///
    /// # Errors
    /// [`SdkError::Unsupported`] on a local-filesystem stage; as [`Self::check`].
    pub async fn presigned_url(
        &self,
        file: &FileRef,
        expires_in: Duration,
    ) -> Result<String, SdkError> {
        let key = self.locate(file)?;
        if expires_in.is_zero() || expires_in > PRESIGN_MAX {
            return Err(SdkError::InvalidArgument(format!(
                "a presigned URL lives 1 s to 7 days; {} s requested",
                expires_in.as_secs()
            )));
        }
        match &self.backend {
            Backend::S3(s3) => s3
                .signed_url(http::Method::GET, &key, expires_in)
                .await
                .map(|u| u.to_string())
                .map_err(|e| storage(&file.uri, e)),
            Backend::Granted(g) => g
                .signed_get(&key, expires_in)
                .await
                .map_err(|e| store_error(&file.uri, e)),
            Backend::Local(_) => Err(SdkError::Unsupported(format!(
                "stage {} is on the local filesystem, which cannot sign URLs; read it with credentials (lake file get)",
                self.uri
            ))),
        }
    }
}

/// The base64 of the 32 bytes a 64-digit lowercase hex SHA-256 spells (S3's
/// `x-amz-checksum-sha256` form).
fn sha256_base64(hex_digest: &str) -> String {
    use base64::Engine as _;
    let bytes: Vec<u8> = (0..hex_digest.len() / 2)
        .filter_map(|i| u8::from_str_radix(&hex_digest[2 * i..2 * i + 2], 16).ok())
        .collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Longest upload id a [`StageRequest`] may carry, in bytes.
const UPLOAD_ID_MAX: usize = 1024;
/// Longest part ETag a [`StageRequest`] may carry, in bytes.
const ETAG_MAX: usize = 1024;

/// An upload a [`StageRequest`] names by its `upload_id`: `put.<token>` for a single PUT
/// to `<stage>/incoming/<sha256>/<token>`, `mp.<id>` for S3 multipart upload `<id>` of the
/// object itself.
enum Upload {
    Put(String),
    Multipart(String),
}

impl Upload {
    fn parse(upload_id: &str) -> Result<Self, SdkError> {
        let bad = || {
            SdkError::InvalidArgument(format!(
                "upload id of {} bytes is not one this replica handed out (put.<token> or mp.<id>, at most {UPLOAD_ID_MAX} bytes)",
                upload_id.len()
            ))
        };
        if upload_id.len() > UPLOAD_ID_MAX {
            return Err(bad());
        }
        if let Some(token) = upload_id.strip_prefix("put.") {
            if token.is_empty() || token.len() > 64 || !token.bytes().all(|b| b.is_ascii_hexdigit())
            {
                return Err(bad());
            }
            return Ok(Self::Put(token.to_string()));
        }
        match upload_id.strip_prefix("mp.") {
            Some(id) if !id.is_empty() => Ok(Self::Multipart(id.to_string())),
            _ => Err(bad()),
        }
    }
}

impl Stage {
    /// Answers a [`StageRequest`] for a client that reaches this stage through a Query
    /// replica, with this stage's (the replica's) credentials. The caller (the replica)
    /// has checked the client's grants and that `request.stage_uri` is this stage.
    ///
    /// Every object at `<stage>/sha256/<h>` is verified to hash to `h` before anyone may
    /// rely on it, and none is ever replaced:
    /// * a single PUT goes to `<stage>/incoming/<h>/<token>`; [`StageOp::Complete`] hashes
    ///   it here and copies it into place only if it hashes to `h` (S3's own check of the
    ///   signed `x-amz-checksum-sha256` refuses wrong bytes earlier);
    /// * a multipart upload is created only while no object is at the address, completed
    ///   (by the replica) only while there is still none, then hashed in place and deleted
    ///   if it does not hash to `h`.
    ///
    /// Hashing reads the object once from the store (the replica's bandwidth, never the
    /// client's bytes).
    ///
    /// # Errors
    /// [`SdkError::InvalidArgument`] naming the field that is malformed or past its bound
    /// (sha256 not 64 lowercase hex digits; part number outside 1..=10,000; an upload id
    /// this replica did not hand out; ETags over 1,024 bytes or more than 10,000; a
    /// lifetime for anything but a GET URL, or over 7 days), an object already at the
    /// address (uploads), or uploaded bytes that do not hash to the address;
    /// [`SdkError::Unsupported`] on a local-filesystem stage (no URLs);
    /// [`SdkError::Storage`] when the store fails.
    pub async fn serve(&self, request: &StageRequest) -> Result<StageResponse, SdkError> {
        let Backend::S3(s3) = &self.backend else {
            return Err(SdkError::Unsupported(format!(
                "stage {} is not on S3: only S3 stages hand out presigned URLs; a local-filesystem stage is read and written directly by clients on the replica's machine",
                self.uri
            )));
        };
        if !is_sha256_hex(&request.sha256) {
            return Err(SdkError::InvalidArgument(format!(
                "sha256 {:?} is not 64 lowercase hex digits",
                request.sha256.chars().take(80).collect::<String>()
            )));
        }
        let op = StageOp::try_from(request.op)
            .map_err(|_| SdkError::InvalidArgument(format!("unknown stage op {}", request.op)))?;
        let expires = match (request.expires_secs, op) {
            (0, _) => Duration::from_secs(STAGE_URL_TTL_SECS),
            (secs, StageOp::SignGet) if Duration::from_secs(secs) <= PRESIGN_MAX => {
                Duration::from_secs(secs)
            }
            (secs, StageOp::SignGet) => {
                return Err(SdkError::InvalidArgument(format!(
                    "a presigned URL lives at most 7 days ({} s); {secs} s requested",
                    PRESIGN_MAX.as_secs()
                )));
            }
            (secs, _) => {
                return Err(SdkError::InvalidArgument(format!(
                    "only GET URLs take a lifetime ({secs} s requested): upload URLs live {STAGE_URL_TTL_SECS} s, so a revoke soon stops them"
                )));
            }
        };
        let key = self.key(&request.sha256);
        let uri = self.object_uri(&key);
        let incoming = |token: &str| {
            self.prefix
                .clone()
                .join("incoming")
                .join(request.sha256.as_str())
                .join(token)
        };
        let sign = |key: Path,
                    method: http::Method,
                    query: Vec<(String, String)>,
                    headers: &std::collections::HashMap<String, String>| {
            let mut options = object_store::signer::SignedUrlOptions::default().with_query(query);
            for (name, value) in headers {
                if let (Ok(name), Ok(value)) = (
                    http::HeaderName::try_from(name.as_str()),
                    http::HeaderValue::try_from(value.as_str()),
                ) {
                    options = options.with_signed_header(name, value);
                }
            }
            let s3 = s3.clone();
            async move {
                s3.signed_url_opts(method, &key, expires, &options)
                    .await
                    .map(|u| u.to_string())
            }
        };
        let absent = || async {
            match s3.head(&key).await {
                Ok(_) => Err(SdkError::InvalidArgument(format!(
                    "{uri} is already on the stage, verified: an object is never replaced (there is nothing to upload)"
                ))),
                Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(storage(&uri, e)),
            }
        };
        let mut answer = StageResponse::default();
        match op {
            StageOp::Head => match s3.head(&key).await {
                Ok(meta) => {
                    answer.found = true;
                    answer.size = meta.size;
                    answer.last_modified_ms = meta.last_modified.timestamp_millis();
                }
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(storage(&uri, e)),
            },
            StageOp::SignGet => {
                answer.url = sign(key.clone(), http::Method::GET, Vec::new(), &answer.headers)
                    .await
                    .map_err(|e| storage(&uri, e))?;
            }
            StageOp::SignPut => {
                absent().await?;
                let token = format!("{:032x}", rand::random::<u128>());
                // S3 checks the whole object's SHA-256 against this signed header.
                answer.headers.insert(
                    "x-amz-checksum-sha256".into(),
                    sha256_base64(&request.sha256),
                );
                answer.url = sign(
                    incoming(&token),
                    http::Method::PUT,
                    Vec::new(),
                    &answer.headers,
                )
                .await
                .map_err(|e| storage(&uri, e))?;
                answer.upload_id = format!("put.{token}");
            }
            StageOp::CreateMultipart => {
                absent().await?;
                let id = s3
                    .create_multipart(&key)
                    .await
                    .map_err(|e| storage(&uri, e))?;
                answer.upload_id = format!("mp.{id}");
            }
            StageOp::SignPart => {
                let Upload::Multipart(id) = Upload::parse(&request.upload_id)? else {
                    return Err(SdkError::InvalidArgument(
                        "parts belong to a multipart upload (mp.<id>); a single PUT has none"
                            .into(),
                    ));
                };
                if request.part_number == 0 || u64::from(request.part_number) > PARTS_MAX {
                    return Err(SdkError::InvalidArgument(format!(
                        "part number {} is outside 1..={PARTS_MAX}",
                        request.part_number
                    )));
                }
                let query = vec![
                    ("partNumber".to_string(), request.part_number.to_string()),
                    ("uploadId".to_string(), id),
                ];
                answer.url = sign(key.clone(), http::Method::PUT, query, &answer.headers)
                    .await
                    .map_err(|e| storage(&uri, e))?;
            }
            StageOp::Complete => match Upload::parse(&request.upload_id)? {
                Upload::Put(token) => {
                    let staged = incoming(&token);
                    let placed = async {
                        self.verify(s3, &staged, &request.sha256).await?;
                        match s3.head(&key).await {
                            // The same bytes, verified, are there already.
                            Ok(_) => Ok(()),
                            Err(object_store::Error::NotFound { .. }) => {
                                s3.copy(&staged, &key).await.map_err(|e| storage(&uri, e))
                            }
                            Err(e) => Err(storage(&uri, e)),
                        }
                    }
                    .await;
                    if let Err(e) = s3.delete(&staged).await {
                        tracing::warn!(uri, error = %e, "could not delete a staged upload");
                    }
                    placed?;
                }
                Upload::Multipart(id) => {
                    if request.etags.is_empty() || request.etags.len() as u64 > PARTS_MAX {
                        return Err(SdkError::InvalidArgument(format!(
                            "{} part ETags: an upload completes from 1..={PARTS_MAX}",
                            request.etags.len()
                        )));
                    }
                    if let Some(long) = request.etags.iter().find(|e| e.len() > ETAG_MAX) {
                        return Err(SdkError::InvalidArgument(format!(
                            "a part ETag of {} bytes; at most {ETAG_MAX}",
                            long.len()
                        )));
                    }
                    match s3.head(&key).await {
                        // Another upload of the same bytes finished first, verified: this
                        // one is not needed (and never replaces it).
                        Ok(_) => {
                            let _ = s3.abort_multipart(&key, &id).await;
                            return Ok(answer);
                        }
                        Err(object_store::Error::NotFound { .. }) => {}
                        Err(e) => return Err(storage(&uri, e)),
                    }
                    let parts = request
                        .etags
                        .iter()
                        .map(|content_id| PartId {
                            content_id: content_id.clone(),
                        })
                        .collect();
                    s3.complete_multipart(&key, &id, parts)
                        .await
                        .map_err(|e| storage(&uri, e))?;
                    if let Err(e) = self.verify(s3, &key, &request.sha256).await {
                        if let Err(delete) = s3.delete(&key).await {
                            tracing::warn!(uri, error = %delete, "could not delete an object that failed verification");
                        }
                        return Err(e);
                    }
                }
            },
            StageOp::Abort => match Upload::parse(&request.upload_id)? {
                Upload::Put(token) => s3
                    .delete(&incoming(&token))
                    .await
                    .map_err(|e| storage(&uri, e))?,
                Upload::Multipart(id) => s3
                    .abort_multipart(&key, &id)
                    .await
                    .map_err(|e| storage(&uri, e))?,
            },
        }
        Ok(answer)
    }

    /// Reads the object at `key` once and checks that it hashes to `sha256`.
    ///
    /// # Errors
    /// [`SdkError::InvalidArgument`] naming both hashes; [`SdkError::Storage`].
    async fn verify(&self, s3: &AmazonS3, key: &Path, sha256: &str) -> Result<(), SdkError> {
        let uri = self.object_uri(key);
        let mut stream = s3
            .get(key)
            .await
            .map_err(|e| read_error(&uri, e))?
            .into_stream();
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| storage(&uri, e))?;
            size += chunk.len() as u64;
            hasher.update(&chunk);
        }
        let got = hex(&hasher.finalize());
        if got != sha256 {
            return Err(SdkError::InvalidArgument(format!(
                "the uploaded {size} bytes hash to sha256 {got}, not to the address {sha256}: nothing was stored"
            )));
        }
        Ok(())
    }
}

/// A local file's length and modification time, to notice a file that changes while it
/// is hashed or uploaded.
struct FileVersion {
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileVersion {
    fn of(path: &FsPath) -> Result<Self, SdkError> {
        let meta = std::fs::metadata(path).map_err(|e| io(path, e))?;
        Ok(Self {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }

    fn unchanged(&self, path: &FsPath) -> Result<(), SdkError> {
        let now = Self::of(path)?;
        if now.len == self.len && now.modified == self.modified {
            Ok(())
        } else {
            Err(io(path, "the file changed while it was being uploaded"))
        }
    }
}

/// Length of part `index` of a `size`-byte object in parts of `part_size`.
fn part_len(index: usize, part_size: usize, size: u64) -> u64 {
    let start = index as u64 * part_size as u64;
    (size - start).min(part_size as u64)
}

fn save_checkpoint(path: &FsPath, checkpoint: &Checkpoint) -> Result<(), SdkError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    let tmp = path.with_extension("json.tmp");
    let json = serde_json::to_vec(checkpoint).map_err(|e| io(path, e))?;
    std::fs::write(&tmp, json).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// SHA-256 (lowercase hex) and length of the file at `path`, read in [`READ_CHUNK`]
/// blocks on one blocking thread (tokio's file reads would hop threads per 2 MiB).
async fn hash_file(path: &FsPath, options: &UploadOptions) -> Result<(String, u64), SdkError> {
    let path = path.to_path_buf();
    let progress = options.progress.clone();
    tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut file = std::fs::File::open(&path).map_err(|e| io(&path, e))?;
        let total = file.metadata().map_err(|e| io(&path, e))?.len();
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; READ_CHUNK];
        let mut done = 0u64;
        loop {
            let n = match file.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(&path, e)),
            };
            hasher.update(&buffer[..n]);
            done += n as u64;
            if let Some(f) = &progress {
                f(Progress::Hashing {
                    done,
                    total: Some(total),
                });
            }
        }
        Ok((hex(&hasher.finalize()), done))
    })
    .await
    .map_err(|e| SdkError::Io {
        path: "<hashing>".into(),
        message: e.to_string(),
    })?
}

/// Reads up to `len` bytes (fewer only at the end of the file).
async fn read_up_to(file: &mut tokio::fs::File, len: usize) -> std::io::Result<Bytes> {
    use tokio::io::AsyncReadExt;
    let mut buffer = Vec::with_capacity(len);
    let mut limited = file.take(len as u64);
    while limited.read_buf(&mut buffer).await? > 0 {}
    Ok(buffer.into())
}

/// `len` bytes of the file at `path` from `offset`.
async fn read_at(path: &FsPath, offset: u64, len: u64) -> Result<Bytes, SdkError> {
    use tokio::io::AsyncSeekExt;
    let mut file = tokio::fs::File::open(path).await.map_err(|e| io(path, e))?;
    file.seek(std::io::SeekFrom::Start(offset))
        .await
        .map_err(|e| io(path, e))?;
    let bytes = read_up_to(&mut file, len as usize)
        .await
        .map_err(|e| io(path, e))?;
    if bytes.len() as u64 != len {
        return Err(io(path, "the file changed while it was being uploaded"));
    }
    Ok(bytes)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// S3's answers as the API reference shows them (ListMultipartUploads, ListParts;
    /// trimmed): the fields Lake reads, the repeated elements and the page markers.
    #[test]
    fn s3_upload_and_part_listings_read() {
        let uploads = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>bucket</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>
  <NextKeyMarker>w/stage/7/sha256/bb</NextKeyMarker>
  <NextUploadIdMarker>id-2</NextUploadIdMarker>
  <MaxUploads>2</MaxUploads><IsTruncated>true</IsTruncated>
  <Upload><Key>w/stage/7/sha256/aa</Key><UploadId>id-1</UploadId>
    <Initiator><ID>x</ID></Initiator><StorageClass>STANDARD</StorageClass>
    <Initiated>2026-11-30T20:48:33.000Z</Initiated></Upload>
  <Upload><Key>w/stage/7/sha256/bb</Key><UploadId>id-2</UploadId>
    <Initiated>2026-12-01T08:00:00.000Z</Initiated></Upload>
</ListMultipartUploadsResult>"#;
        let page: ListUploadsPage = quick_xml::de::from_str(uploads).expect("uploads");
        assert!(page.is_truncated);
        assert_eq!(page.next_key_marker.as_deref(), Some("w/stage/7/sha256/bb"));
        assert_eq!(page.next_upload_id_marker.as_deref(), Some("id-2"));
        let listed: Vec<_> = page
            .uploads
            .iter()
            .map(|u| (u.key.as_str(), u.upload_id.as_str(), u.initiated.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                ("w/stage/7/sha256/aa", "id-1", "2026-11-30T20:48:33.000Z"),
                ("w/stage/7/sha256/bb", "id-2", "2026-12-01T08:00:00.000Z")
            ]
        );
        let empty: ListUploadsPage = quick_xml::de::from_str(
            "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>",
        )
        .expect("no uploads");
        assert!(empty.uploads.is_empty() && !empty.is_truncated);

        let parts = r#"<ListPartsResult><Bucket>bucket</Bucket><UploadId>id-1</UploadId>
  <PartNumberMarker>1</PartNumberMarker><NextPartNumberMarker>3</NextPartNumberMarker>
  <IsTruncated>true</IsTruncated>
  <Part><PartNumber>2</PartNumber><LastModified>2026-12-01T09:00:00.000Z</LastModified>
    <ETag>"7778aef83f66abc1fa1e8477f296d394"</ETag><Size>10485760</Size></Part>
  <Part><PartNumber>3</PartNumber><LastModified>2026-12-01T09:00:05.250Z</LastModified>
    <ETag>"aaaa18db4cc2f85cedef654fccc4a4x8"</ETag><Size>3</Size></Part>
</ListPartsResult>"#;
        let page: ListPartsPage = quick_xml::de::from_str(parts).expect("parts");
        assert!(page.is_truncated);
        assert_eq!(page.next_part_number_marker.as_deref(), Some("3"));
        let sizes: Vec<u64> = page.parts.iter().map(|p| p.size).collect();
        assert_eq!(sizes, [10_485_760, 3]);
        let stage = Stage::open("/tmp/lake-stage-times").expect("stage");
        assert_eq!(
            stage
                .s3_time("LastModified", &page.parts[1].last_modified)
                .expect("time"),
            1_796_115_605_250
        );
        assert!(stage.s3_time("Initiated", "yesterday").is_err());
    }

    /// S3's UploadPart answer for an aborted upload, as the presigned-URL path reports it,
    /// is recognized; other failures (which a retry may get past) are not.
    #[test]
    fn an_upload_s3_no_longer_has_is_recognized() {
        let gone = SdkError::Arrow(
            "PUT through a presigned URL: HTTP 404 Not Found: <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.</Message><UploadId>VXBsb2FkIElE</UploadId></Error>".into(),
        );
        assert!(upload_is_gone(&gone));
        for other in [
            SdkError::Arrow("PUT through a presigned URL: HTTP 503 Slow Down: <Error><Code>SlowDown</Code></Error>".into()),
            SdkError::Storage {
                uri: "s3://b/NoSuchUpload".into(),
                message: "connection reset".into(),
            },
        ] {
            assert!(!upload_is_gone(&other), "{other}");
        }
    }

    fn options(dir: &FsPath) -> UploadOptions {
        UploadOptions {
            part_size: PART_SIZE_MIN,
            concurrency: 2,
            checkpoint_dir: Some(dir.join("checkpoints")),
            progress: None,
            force: false,
        }
    }

    #[tokio::test]
    async fn local_round_trip_dedup_range_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let stage = Stage::open(&format!("{}/stage/7", dir.path().display())).unwrap();
        // Larger than a part by a non-multiple.
        let size = PART_SIZE_MIN * 2 + 12_345;
        let bytes: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
        let source = dir.path().join("weights.bin");
        std::fs::write(&source, &bytes).unwrap();
        let up = stage
            .upload_path(&source, "application/octet-stream", &options(dir.path()))
            .await
            .unwrap();
        assert!(!up.deduplicated);
        assert_eq!(up.sent_parts, 3);
        assert_eq!(up.file.size, size as u64);
        assert_eq!(up.file.sha256, hex(&Sha256::digest(&bytes)));
        assert_eq!(
            up.file.uri,
            format!(
                "file://{}/stage/7/sha256/{}",
                dir.path().display(),
                up.file.sha256
            )
        );
        stage.check(&up.file).await.unwrap();

        let again = stage
            .upload_path(&source, "application/octet-stream", &options(dir.path()))
            .await
            .unwrap();
        assert!(again.deduplicated);
        assert_eq!(again.sent_parts, 0);

        let out = dir.path().join("out.bin");
        Stage::for_file(&up.file)
            .unwrap()
            .download(&up.file, &out, None)
            .await
            .unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), bytes);
        let range = stage.read_range(&up.file, 100..200).await.unwrap();
        assert_eq!(&range[..], &bytes[100..200]);
        assert!(
            stage
                .read_range(&up.file, 0..size as u64 + 1)
                .await
                .is_err()
        );

        // Flip one byte of the stored object: a full read fails, and `out` is untouched.
        let stored = format!("{}/stage/7/sha256/{}", dir.path().display(), up.file.sha256);
        let mut corrupted = bytes.clone();
        corrupted[size / 2] ^= 0xff;
        std::fs::write(&stored, &corrupted).unwrap();
        let e = stage
            .download(&up.file, &out, None)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("sha256"), "{e}");
        assert_eq!(std::fs::read(&out).unwrap(), bytes);

        // A plain re-upload trusts the object (same address and size); --force repairs it.
        let again = stage
            .upload_path(&source, "application/octet-stream", &options(dir.path()))
            .await
            .unwrap();
        assert!(again.deduplicated);
        let forced = stage
            .upload_path(
                &source,
                "application/octet-stream",
                &UploadOptions {
                    force: true,
                    ..options(dir.path())
                },
            )
            .await
            .unwrap();
        assert!(!forced.deduplicated);
        stage.download(&up.file, &out, None).await.unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), bytes);

        // A download never replaces something that is not a regular file.
        let e = stage
            .download(&up.file, dir.path(), None)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[tokio::test]
    async fn a_file_that_changes_during_upload_is_not_stored() {
        let dir = tempfile::tempdir().unwrap();
        let stage = Stage::open(&format!("{}/stage/3", dir.path().display())).unwrap();
        let size = PART_SIZE_MIN * 3 + 99;
        let source = dir.path().join("growing.bin");
        std::fs::write(&source, vec![7u8; size]).unwrap();
        let original_sha = hex(&Sha256::digest(vec![7u8; size]));
        // Once the first part is sent, overwrite the last byte in place (same length).
        let target = source.clone();
        let tampered = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = tampered.clone();
        let options = UploadOptions {
            progress: Some(Arc::new(move |p| {
                if let Progress::Uploading { done, .. } = p
                    && done > 0
                    && !flag.swap(true, std::sync::atomic::Ordering::SeqCst)
                {
                    use std::io::{Seek, Write};
                    let mut f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&target)
                        .unwrap();
                    f.seek(std::io::SeekFrom::End(-1)).unwrap();
                    f.write_all(&[8]).unwrap();
                }
            })),
            ..options(dir.path())
        };
        let e = stage
            .upload_path(&source, "application/octet-stream", &options)
            .await
            .unwrap_err()
            .to_string();
        assert!(tampered.load(std::sync::atomic::Ordering::SeqCst));
        assert!(e.contains("changed while it was being uploaded"), "{e}");
        let uri = format!("{}/sha256/{original_sha}", stage.uri());
        assert!(
            matches!(Stage::stat(&uri).await, Err(SdkError::NotFound(_))),
            "an object was stored under the address of bytes that were not sent"
        );
    }

    #[tokio::test]
    async fn empty_files_and_readers_upload() {
        let dir = tempfile::tempdir().unwrap();
        let stage = Stage::open(&format!("file://{}/stage/1", dir.path().display())).unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        let up = stage
            .upload_path(&empty, "text/plain", &options(dir.path()))
            .await
            .unwrap();
        assert_eq!(up.file.size, 0);
        assert_eq!(
            up.file.sha256,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let read: Vec<Bytes> = stage
            .open_file(&up.file)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(read.iter().map(Bytes::len).sum::<usize>(), 0);

        let text = b"hello, stage".to_vec();
        let up = stage
            .upload_reader(&text[..], "text/plain", &options(dir.path()))
            .await
            .unwrap();
        assert_eq!(up.file.size, text.len() as u64);
        let read: Vec<Bytes> = stage
            .open_file(&up.file)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(read.concat(), text);
    }

    #[tokio::test]
    async fn bad_input_is_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Stage::open("relative/path").is_err());
        assert!(Stage::open("gs://bucket/x").is_err());
        let stage = Stage::open(&format!("{}/s", dir.path().display())).unwrap();
        let source = dir.path().join("f");
        std::fs::write(&source, b"x").unwrap();
        let e = stage
            .upload_path(&source, "nonsense", &options(dir.path()))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("type/subtype"), "{e}");
        let mut small = options(dir.path());
        small.part_size = 1024;
        assert!(
            stage
                .upload_path(&source, "text/plain", &small)
                .await
                .is_err()
        );
        let up = stage
            .upload_path(&source, "text/plain", &options(dir.path()))
            .await
            .unwrap();
        let mut elsewhere = up.file.clone();
        elsewhere.uri = format!("file:///tmp/other/sha256/{}", up.file.sha256);
        assert!(
            stage
                .check(&elsewhere)
                .await
                .unwrap_err()
                .to_string()
                .contains("not on stage")
        );
        let mut wrong_size = up.file.clone();
        wrong_size.size = 2;
        assert!(
            stage
                .check(&wrong_size)
                .await
                .unwrap_err()
                .to_string()
                .contains("bytes on the stage")
        );
        let mut missing = up.file.clone();
        missing.sha256 = "0".repeat(64);
        missing.uri = format!(
            "file://{}/s/sha256/{}",
            dir.path().display(),
            missing.sha256
        );
        assert!(matches!(
            stage.check(&missing).await,
            Err(SdkError::NotFound(_))
        ));
        assert!(matches!(
            stage.presigned_url(&up.file, Duration::from_secs(60)).await,
            Err(SdkError::Unsupported(_))
        ));
    }
}
