//! Read-only Iceberg file access over object_store: the `Storage` that iceberg-rust's
//! `FileIO` reads metadata files, manifest lists, manifests, data files and delete files
//! through (`iceberg::io::Storage`, iceberg 0.10).
//!
//! Paths are absolute URIs as Iceberg metadata writes them: `file:///path` (or a bare
//! absolute path) on the local filesystem, `s3://bucket/key` (also `s3a://`) on S3 or an
//! S3-compatible store. S3 settings come from AWS environment variables (object_store's
//! `AmazonS3Builder::from_env`), overridden by Iceberg's FileIO property names
//! ([`STORAGE_PROPERTIES`]). Every write and delete fails: Lake never writes an external
//! Iceberg table.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use iceberg::io::{
    FileMetadata, FileRead, FileWrite, InputFile, OutputFile, Storage, StorageConfig,
    StorageFactory,
};
use iceberg::{Error, ErrorKind, Result};
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use serde::{Deserialize, Serialize};

/// The storage properties Lake accepts for Iceberg table files, with their meaning
/// (Iceberg's FileIO property names, `S3FileIOProperties`).
pub const STORAGE_PROPERTIES: &[(&str, &str)] = &[
    ("s3.endpoint", "S3 endpoint URL, e.g. http://127.0.0.1:9000"),
    ("s3.region", "S3 region"),
    ("s3.access-key-id", "S3 access key id"),
    ("s3.secret-access-key", "S3 secret access key"),
    ("s3.session-token", "S3 session token"),
    (
        "s3.path-style-access",
        "true for path-style requests (the default), false for virtual-hosted style",
    ),
];

/// Checks storage properties against [`STORAGE_PROPERTIES`].
///
/// # Errors
/// A message naming the unknown key and the keys allowed.
pub fn validate_properties(props: &BTreeMap<String, String>) -> std::result::Result<(), String> {
    for key in props.keys() {
        if !STORAGE_PROPERTIES.iter().any(|(k, _)| k == key) {
            return Err(format!(
                "unknown Iceberg storage property {key:?}; allowed: {}",
                STORAGE_PROPERTIES
                    .iter()
                    .map(|(k, _)| *k)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(())
}

/// Builds [`ObjectStoreStorage`] for a `FileIO` (`FileIOBuilder::new(Arc::new(factory))`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ObjectStoreStorageFactory;

#[typetag::serde]
impl StorageFactory for ObjectStoreStorageFactory {
    fn build(&self, config: &StorageConfig) -> Result<Arc<dyn Storage>> {
        let props: BTreeMap<String, String> = config
            .props()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Arc::new(ObjectStoreStorage {
            props,
            stores: Arc::default(),
        }))
    }
}

/// A read-only `Storage` that resolves each path to an object store (one per S3 bucket,
/// one for the local filesystem) and caches the stores.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ObjectStoreStorage {
    props: BTreeMap<String, String>,
    #[serde(skip)]
    stores: Arc<Mutex<HashMap<String, Arc<dyn ObjectStore>>>>,
}

fn read_only(path: &str) -> Error {
    Error::new(
        ErrorKind::FeatureUnsupported,
        format!("Lake reads external Iceberg tables and never writes them (asked to write {path})"),
    )
}

/// Prefix of every storage failure's message, so callers can tell them from bad content.
const STORAGE_FAILURE: &str = "reading Iceberg file";

fn storage_error(path: &str, e: object_store::Error) -> Error {
    let kind = match e {
        object_store::Error::NotFound { .. } => ErrorKind::DataInvalid,
        _ => ErrorKind::Unexpected,
    };
    Error::new(kind, format!("{STORAGE_FAILURE} {path}: {e}"))
}

/// Whether `e` is a failure to read from storage (as opposed to content that does not
/// parse).
pub fn is_storage_error(e: &Error) -> bool {
    e.message().starts_with(STORAGE_FAILURE)
}

impl ObjectStoreStorage {
    /// The store holding `path` and the object's path in it.
    fn locate(&self, path: &str) -> Result<(Arc<dyn ObjectStore>, Path)> {
        let invalid = |why: String| Error::new(ErrorKind::DataInvalid, why);
        if let Some(rest) = path
            .strip_prefix("s3://")
            .or_else(|| path.strip_prefix("s3a://"))
        {
            let (bucket, key) = rest
                .split_once('/')
                .ok_or_else(|| invalid(format!("Iceberg file {path:?} names no object key")))?;
            let key =
                Path::parse(key).map_err(|e| invalid(format!("Iceberg file {path:?}: {e}")))?;
            let store = self.store(&format!("s3://{bucket}"), || self.s3(bucket))?;
            return Ok((store, key));
        }
        let local = match path.strip_prefix("file://") {
            Some(p) => p,
            None => path.strip_prefix("file:").unwrap_or(path),
        };
        if !local.starts_with('/') {
            return Err(invalid(format!(
                "Iceberg file {path:?} has an unsupported location: Lake reads s3://, s3a:// and file:// locations"
            )));
        }
        let key = Path::from_absolute_path(local)
            .map_err(|e| invalid(format!("Iceberg file {path:?}: {e}")))?;
        let store = self.store("file://", || Ok(Arc::new(LocalFileSystem::new())))?;
        Ok((store, key))
    }

    fn store(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<Arc<dyn ObjectStore>>,
    ) -> Result<Arc<dyn ObjectStore>> {
        let mut stores = self.stores.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = stores.get(key) {
            return Ok(store.clone());
        }
        let store = make()?;
        stores.insert(key.to_string(), store.clone());
        Ok(store)
    }

    fn s3(&self, bucket: &str) -> Result<Arc<dyn ObjectStore>> {
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        for (key, value) in &self.props {
            builder = match key.as_str() {
                "s3.endpoint" => builder
                    .with_endpoint(value)
                    .with_allow_http(value.starts_with("http://")),
                "s3.region" => builder.with_region(value),
                "s3.access-key-id" => builder.with_access_key_id(value),
                "s3.secret-access-key" => builder.with_secret_access_key(value),
                "s3.session-token" => builder.with_token(value),
                "s3.path-style-access" => {
                    builder.with_virtual_hosted_style_request(value != "true")
                }
                _ => builder,
            };
        }
        let store = builder.build().map_err(|e| {
            Error::new(
                ErrorKind::DataInvalid,
                format!("cannot configure S3 for bucket {bucket}: {e}"),
            )
        })?;
        Ok(Arc::new(store))
    }
}

struct ObjectRead {
    store: Arc<dyn ObjectStore>,
    path: Path,
    location: String,
}

#[async_trait]
impl FileRead for ObjectRead {
    async fn read(&self, range: Range<u64>) -> Result<Bytes> {
        self.store
            .get_range(&self.path, range)
            .await
            .map_err(|e| storage_error(&self.location, e))
    }
}

#[async_trait]
#[typetag::serde]
impl Storage for ObjectStoreStorage {
    async fn exists(&self, path: &str) -> Result<bool> {
        let (store, key) = self.locate(path)?;
        match store.head(&key).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(storage_error(path, e)),
        }
    }

    async fn metadata(&self, path: &str) -> Result<FileMetadata> {
        let (store, key) = self.locate(path)?;
        let meta = store.head(&key).await.map_err(|e| storage_error(path, e))?;
        Ok(FileMetadata { size: meta.size })
    }

    async fn read(&self, path: &str) -> Result<Bytes> {
        let (store, key) = self.locate(path)?;
        let result = store.get(&key).await.map_err(|e| storage_error(path, e))?;
        result.bytes().await.map_err(|e| storage_error(path, e))
    }

    async fn reader(&self, path: &str) -> Result<Box<dyn FileRead>> {
        let (store, key) = self.locate(path)?;
        Ok(Box::new(ObjectRead {
            store,
            path: key,
            location: path.to_string(),
        }))
    }

    async fn write(&self, path: &str, _bs: Bytes) -> Result<()> {
        Err(read_only(path))
    }

    async fn writer(&self, path: &str) -> Result<Box<dyn FileWrite>> {
        Err(read_only(path))
    }

    async fn delete(&self, path: &str) -> Result<()> {
        Err(read_only(path))
    }

    async fn delete_prefix(&self, path: &str) -> Result<()> {
        Err(read_only(path))
    }

    async fn delete_stream(&self, _paths: BoxStream<'static, String>) -> Result<()> {
        Err(read_only("a stream of paths"))
    }

    fn new_input(&self, path: &str) -> Result<InputFile> {
        Ok(InputFile::new(Arc::new(self.clone()), path.to_string()))
    }

    fn new_output(&self, path: &str) -> Result<OutputFile> {
        Err(read_only(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_local_files_by_uri_and_refuses_every_write() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("m.json");
        std::fs::write(&file, b"0123456789").expect("write");
        let storage = ObjectStoreStorageFactory
            .build(&StorageConfig::new())
            .expect("storage");
        let uri = format!("file://{}", file.display());
        assert_eq!(storage.read(&uri).await.expect("read"), "0123456789");
        let reader = storage.reader(&uri).await.expect("reader");
        assert_eq!(reader.read(2..5).await.expect("range"), "234");
        assert_eq!(storage.metadata(&uri).await.expect("head").size, 10);
        assert!(storage.exists(&uri).await.expect("exists"));
        assert!(
            !storage
                .exists(&format!("{uri}.gone"))
                .await
                .expect("exists")
        );
        assert!(storage.write(&uri, Bytes::from_static(b"x")).await.is_err());
        assert!(storage.delete(&uri).await.is_err());
        assert!(storage.new_output(&uri).is_err());
        assert_eq!(std::fs::read(&file).expect("still there"), b"0123456789");
        let err = storage.read("gs://bucket/x").await.expect_err("scheme");
        assert!(err.to_string().contains("s3://"), "{err}");
    }

    #[test]
    fn unknown_properties_are_named() {
        let mut props = BTreeMap::new();
        props.insert("s3.region".to_string(), "us-east-1".to_string());
        assert!(validate_properties(&props).is_ok());
        props.insert("s3.endpiont".to_string(), "x".to_string());
        let err = validate_properties(&props).expect_err("typo");
        assert!(
            err.contains("s3.endpiont") && err.contains("s3.endpoint"),
            "{err}"
        );
    }
}
