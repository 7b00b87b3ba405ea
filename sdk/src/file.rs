//! The `FILE` logical type: a column value that describes a large object on a table's
//! managed stage (see [`crate::stage`]). A FILE value holds metadata only; the bytes stay
//! on object storage and travel between the SDK and the stage directly.
//!
//! In Arrow a FILE column is the extension type [`FileType`] (`ARROW:extension:name` =
//! `lake.file`, Arrow columnar spec "Extension Types") over the storage type
//! [`file_data_type`]:
//!
//! | field         | Arrow type                  | meaning                                  |
//! |---------------|-----------------------------|------------------------------------------|
//! | `uri`         | `Utf8`                      | object URI: `<stage>/sha256/<hex>`        |
//! | `size`        | `UInt64`                    | length in bytes                          |
//! | `sha256`      | `Utf8`                      | SHA-256 of the bytes, 64 lowercase hex    |
//! | `media_type`  | `Utf8`                      | IANA media type, e.g. `video/mp4`         |
//! | `uploaded_at` | `Timestamp(ms, "UTC")`      | when the SDK finished the upload          |

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, RecordBatch, StringArray, StringBuilder, StructArray,
    TimestampMillisecondArray, UInt64Array,
};
use arrow::datatypes::{DataType, Field, Fields, Schema, TimeUnit};
use arrow::error::ArrowError;
use arrow_schema::extension::ExtensionType;
use serde::{Deserialize, Serialize};

/// A FILE value: where a large object is and what it must hash to.
///
/// Its JSON form (serde) is what `lake file put --format json` prints. Reading JSON also
/// accepts `uploaded_at` as an RFC 3339 timestamp in place of `uploaded_at_ms`, as
/// `lake sql --format json` prints FILE columns, so either output can be fed back to
/// `file_ref(…)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "FileRefJson")]
pub struct FileRef {
    /// Object URI on the table's stage: `<stage uri>/sha256/<sha256>`, e.g.
    /// `s3://bucket/warehouse/stage/7/sha256/9f86…` or `file:///var/lake/stage/7/sha256/9f86…`.
    pub uri: String,
    /// Length in bytes.
    pub size: u64,
    /// SHA-256 of the bytes as 64 lowercase hex digits.
    pub sha256: String,
    /// IANA media type (`video/mp4`, `application/octet-stream`, …).
    pub media_type: String,
    /// Upload completion time, milliseconds since the Unix epoch (UTC).
    pub uploaded_at_ms: i64,
}

/// The accepted JSON shapes of a [`FileRef`].
#[derive(Deserialize)]
struct FileRefJson {
    uri: String,
    size: u64,
    sha256: String,
    media_type: String,
    uploaded_at_ms: Option<i64>,
    uploaded_at: Option<String>,
}

impl TryFrom<FileRefJson> for FileRef {
    type Error = String;

    fn try_from(json: FileRefJson) -> Result<Self, String> {
        let uploaded_at_ms = match (json.uploaded_at_ms, json.uploaded_at) {
            (Some(ms), _) => ms,
            (None, Some(text)) => {
                let utc: arrow::array::timezone::Tz =
                    "+00:00".parse().map_err(|e: ArrowError| e.to_string())?;
                arrow::compute::kernels::cast_utils::string_to_datetime(&utc, &text)
                    .map_err(|e| format!("uploaded_at {text:?} is not an RFC 3339 timestamp: {e}"))?
                    .timestamp_millis()
            }
            (None, None) => return Err("missing field `uploaded_at_ms` (or `uploaded_at`)".into()),
        };
        Ok(Self {
            uri: json.uri,
            size: json.size,
            sha256: json.sha256,
            media_type: json.media_type,
            uploaded_at_ms,
        })
    }
}

/// Latest upload time accepted: 9999-12-31T23:59:59.999Z, in ms since the epoch.
pub const UPLOADED_AT_MAX_MS: i64 = 253_402_300_799_999;
/// Longest media type accepted, in bytes.
pub const MEDIA_TYPE_LEN_MAX: usize = 255;

impl FileRef {
    /// The FILE value of stage object `uri` (`<stage>/sha256/<sha256>`) before its size and
    /// upload time are known: sha256 from the content address, media type
    /// `application/octet-stream` (stages keep none), size and time 0.
    pub(crate) fn of_uri(uri: &str) -> Self {
        Self {
            uri: uri.to_string(),
            size: 0,
            sha256: uri.rsplit('/').next().unwrap_or_default().to_string(),
            media_type: "application/octet-stream".into(),
            uploaded_at_ms: 0,
        }
    }

    /// Checks the fields that need no storage access: a 64-hex-digit `sha256`, a
    /// non-empty `uri`, a `media_type` of the form `type/subtype` (at most
    /// [`MEDIA_TYPE_LEN_MAX`] bytes) and an upload time from 1970 to 9999.
    ///
    /// # Errors
    /// A message naming the field and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        if !is_sha256_hex(&self.sha256) {
            return Err(format!(
                "sha256 {:?} is not 64 lowercase hex digits",
                self.sha256
            ));
        }
        if self.uri.is_empty() {
            return Err("uri is empty".into());
        }
        if !(0..=UPLOADED_AT_MAX_MS).contains(&self.uploaded_at_ms) {
            return Err(format!(
                "uploaded_at_ms {} is outside 0..={UPLOADED_AT_MAX_MS} (1970 to 9999)",
                self.uploaded_at_ms
            ));
        }
        validate_media_type(&self.media_type)
    }
}

/// `bytes` as lowercase hex, two digits a byte (the form of FILE values' `sha256`).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `s` is a SHA-256 digest as 64 lowercase hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Checks that `media_type` has the RFC 6838 shape `type/subtype` (parameters allowed).
///
/// # Errors
/// A message saying what is allowed.
pub fn validate_media_type(media_type: &str) -> Result<(), String> {
    if media_type.len() > MEDIA_TYPE_LEN_MAX {
        return Err(format!(
            "media type is {} bytes; at most {MEDIA_TYPE_LEN_MAX} are allowed",
            media_type.len()
        ));
    }
    if media_type.chars().any(char::is_control) {
        return Err(format!(
            "media type {media_type:?} contains control characters"
        ));
    }
    let essence = media_type.split(';').next().unwrap_or_default().trim();
    let ok = essence.split_once('/').is_some_and(|(t, s)| {
        let token = |x: &str| {
            !x.is_empty()
                && x.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
        };
        token(t) && token(s)
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "media type {media_type:?} is not of the form type/subtype (e.g. video/mp4, application/octet-stream)"
        ))
    }
}

/// The Arrow extension type of FILE columns, name `lake.file`, no metadata. Its storage
/// type is exactly [`file_data_type`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileType;

impl ExtensionType for FileType {
    const NAME: &'static str = "lake.file";
    type Metadata = ();

    fn metadata(&self) -> &Self::Metadata {
        &()
    }

    fn serialize_metadata(&self) -> Option<String> {
        None
    }

    fn deserialize_metadata(_metadata: Option<&str>) -> Result<Self::Metadata, ArrowError> {
        Ok(())
    }

    fn supports_data_type(&self, data_type: &DataType) -> Result<(), ArrowError> {
        if data_type == &file_data_type() {
            Ok(())
        } else {
            Err(ArrowError::InvalidArgumentError(format!(
                "lake.file storage must be {}, got {data_type}",
                file_data_type()
            )))
        }
    }

    fn try_new(data_type: &DataType, _metadata: Self::Metadata) -> Result<Self, ArrowError> {
        FileType.supports_data_type(data_type)?;
        Ok(FileType)
    }
}

/// The storage type of a FILE column (see the module docs).
pub fn file_data_type() -> DataType {
    DataType::Struct(file_fields())
}

/// The struct's fields. They are nullable in the Arrow type because a NULL FILE value
/// (from SQL `NULL`, an outer join, …) may carry null children, which Lance's writer
/// refuses under non-nullable fields; a non-null FILE value needs every field, which
/// [`file_refs`] enforces.
fn file_fields() -> Fields {
    Fields::from(vec![
        Field::new("uri", DataType::Utf8, true),
        Field::new("size", DataType::UInt64, true),
        Field::new("sha256", DataType::Utf8, true),
        Field::new("media_type", DataType::Utf8, true),
        Field::new(
            "uploaded_at",
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            true,
        ),
    ])
}

/// A FILE column named `name`.
pub fn file_field(name: &str, nullable: bool) -> Field {
    Field::new(name, file_data_type(), nullable).with_extension_type(FileType)
}

/// Whether `field` is a FILE column (carries the `lake.file` extension name).
pub fn is_file_field(field: &Field) -> bool {
    field.extension_type_name() == Some(FileType::NAME)
}

/// A FILE column of `files` (`None` is a null value), as stored: [`file_data_type`].
pub fn file_array(files: &[Option<FileRef>]) -> StructArray {
    let nulls: arrow::buffer::NullBuffer = files.iter().map(Option::is_some).collect();
    let field = |f: fn(&FileRef) -> &str| -> ArrayRef {
        Arc::new(
            files
                .iter()
                .map(|x| Some(x.as_ref().map_or("", f)))
                .collect::<StringArray>(),
        )
    };
    let columns: Vec<ArrayRef> = vec![
        field(|f| &f.uri),
        Arc::new(
            files
                .iter()
                .map(|x| Some(x.as_ref().map_or(0, |f| f.size)))
                .collect::<UInt64Array>(),
        ),
        field(|f| &f.sha256),
        field(|f| &f.media_type),
        Arc::new(
            files
                .iter()
                .map(|x| Some(x.as_ref().map_or(0, |f| f.uploaded_at_ms)))
                .collect::<TimestampMillisecondArray>()
                .with_timezone("UTC"),
        ),
    ];
    StructArray::new(file_fields(), columns, Some(nulls))
}

/// The FILE values of `array` (of [`file_data_type`]), `None` for nulls.
///
/// # Errors
/// [`ArrowError::InvalidArgumentError`] when `array` is not of the FILE storage type, or
/// a non-null value lacks a field.
pub fn file_refs(array: &dyn Array) -> Result<Vec<Option<FileRef>>, ArrowError> {
    let wrong = || {
        ArrowError::InvalidArgumentError(format!(
            "a FILE column must be {}, got {}",
            file_data_type(),
            array.data_type()
        ))
    };
    if array.data_type() != &file_data_type() {
        return Err(wrong());
    }
    let array = array
        .as_any()
        .downcast_ref::<StructArray>()
        .ok_or_else(wrong)?;
    let strings = |i: usize| array.column(i).as_any().downcast_ref::<StringArray>();
    let (Some(uri), Some(sha256), Some(media_type)) = (strings(0), strings(2), strings(3)) else {
        return Err(wrong());
    };
    let size = array
        .column(1)
        .as_any()
        .downcast_ref::<UInt64Array>()
        .ok_or_else(wrong)?;
    let at = array
        .column(4)
        .as_any()
        .downcast_ref::<TimestampMillisecondArray>()
        .ok_or_else(wrong)?;
    let names = ["uri", "size", "sha256", "media_type", "uploaded_at"];
    (0..array.len())
        .map(|i| {
            if array.is_null(i) {
                return Ok(None);
            }
            if let Some(missing) = (0..names.len()).find(|&c| array.column(c).is_null(i)) {
                return Err(ArrowError::InvalidArgumentError(format!(
                    "FILE value in row {i} has no {}; a FILE value needs all of {}",
                    names[missing],
                    names.join(", ")
                )));
            }
            Ok(Some(FileRef {
                uri: uri.value(i).to_string(),
                size: size.value(i),
                sha256: sha256.value(i).to_string(),
                media_type: media_type.value(i).to_string(),
                uploaded_at_ms: at.value(i),
            }))
        })
        .collect()
}

/// `bytes` as a short human-readable size (`0 B`, `512 B`, `1.5 KiB`, `2.0 GiB`).
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `batch` with every FILE column (by its `lake.file` extension name) replaced by readable
/// text, `<uri> (<size>, <media type>, sha256:<first 12 hex>)`, for
/// terminal tables and CSV. Other columns are unchanged.
///
/// # Errors
/// [`ArrowError`] when a FILE column is malformed.
pub fn readable(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if !is_file_field(field) {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
            continue;
        }
        let mut text = StringBuilder::new();
        for file in file_refs(column.as_ref())? {
            match file {
                Some(f) => text.append_value(format!(
                    "{} ({}, {}, sha256:{})",
                    f.uri,
                    human_size(f.size),
                    f.media_type,
                    f.sha256.get(..12).unwrap_or(&f.sha256)
                )),
                None => text.append_null(),
            }
        }
        fields.push(Field::new(
            field.name(),
            DataType::Utf8,
            field.is_nullable(),
        ));
        columns.push(Arc::new(text.finish()) as ArrayRef);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: u8) -> FileRef {
        FileRef {
            uri: format!("file:///lake/stage/1/sha256/{}", "a".repeat(64)),
            size: u64::from(i) * 1000,
            sha256: format!("{:02x}", i).repeat(32),
            media_type: "video/mp4".into(),
            uploaded_at_ms: 1_700_000_000_000 + i64::from(i),
        }
    }

    #[test]
    fn json_reads_both_upload_time_forms() {
        let f = sample(1);
        let ms: FileRef = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(ms, f);
        let mut sql = serde_json::to_value(&f).unwrap();
        sql.as_object_mut().unwrap().remove("uploaded_at_ms");
        sql["uploaded_at"] = "2023-11-14T22:13:20.001Z".into();
        let from_sql: FileRef = serde_json::from_value(sql.clone()).unwrap();
        assert_eq!(from_sql, f);
        sql["uploaded_at"] = "yesterday".into();
        let e = serde_json::from_value::<FileRef>(sql)
            .unwrap_err()
            .to_string();
        assert!(e.contains("RFC 3339"), "{e}");
    }

    #[test]
    fn arrays_round_trip_values_and_nulls() {
        let files = vec![Some(sample(1)), None, Some(sample(2))];
        let array = file_array(&files);
        assert_eq!(array.data_type(), &file_data_type());
        assert_eq!(array.null_count(), 1);
        assert_eq!(file_refs(&array).unwrap(), files);
    }

    #[test]
    fn a_value_without_a_field_is_refused() {
        let mut columns: Vec<ArrayRef> = file_array(&[Some(sample(1))]).columns().to_vec();
        columns[2] = Arc::new(StringArray::from(vec![None::<&str>]));
        let array = StructArray::new(file_fields(), columns, None);
        let e = file_refs(&array).unwrap_err().to_string();
        assert!(e.contains("row 0 has no sha256"), "{e}");
    }

    #[test]
    fn another_struct_is_not_a_file_column() {
        let other = StructArray::from(vec![(
            Arc::new(Field::new("uri", DataType::Utf8, false)),
            Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
        )]);
        let e = file_refs(&other).unwrap_err().to_string();
        assert!(e.contains("a FILE column must be"), "{e}");
    }

    #[test]
    fn the_extension_type_marks_file_fields_only() {
        let field = file_field("clip", true);
        assert!(is_file_field(&field));
        assert_eq!(field.try_extension_type::<FileType>().unwrap(), FileType);
        assert!(!is_file_field(&Field::new("clip", file_data_type(), true)));
        let wrong = Field::new("clip", DataType::Utf8, true);
        assert!(FileType::try_new(wrong.data_type(), ()).is_err());
    }

    #[test]
    fn validation_names_the_bad_field() {
        let mut f = sample(1);
        f.validate().unwrap();
        f.sha256 = "ABC".into();
        assert!(f.validate().unwrap_err().contains("sha256"));
        let mut f = sample(1);
        f.media_type = "mp4".into();
        assert!(f.validate().unwrap_err().contains("type/subtype"));
        validate_media_type("text/plain; charset=utf-8").unwrap();
        assert!(validate_media_type("video/").is_err());
        assert!(validate_media_type("video/mp4\nX-Evil: 1").is_err());
        assert!(validate_media_type(&format!("a/{}", "b".repeat(300))).is_err());
        let mut f = sample(1);
        f.uploaded_at_ms = -5;
        assert!(f.validate().unwrap_err().contains("uploaded_at_ms"));
        f.uploaded_at_ms = i64::MAX;
        assert!(f.validate().is_err());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(2 << 30), "2.0 GiB");
    }

    #[test]
    fn readable_replaces_file_columns_only() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            file_field("clip", true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(arrow::array::Int64Array::from(vec![1, 2])),
                Arc::new(file_array(&[Some(sample(3)), None])),
            ],
        )
        .unwrap();
        let text = readable(&batch).unwrap();
        assert_eq!(text.column(0).as_ref(), batch.column(0).as_ref());
        let clip = text
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(
            clip.value(0),
            format!(
                "{} (2.9 KiB, video/mp4, sha256:030303030303)",
                sample(3).uri
            )
        );
        assert!(clip.is_null(1));
    }
}

/// FILE values arrive as client JSON (`file_ref(json)`, ingest): any text reads as a
/// valid FILE value or an error, never a panic, and a valid value reads back as itself.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn read(text: &str) -> Result<FileRef, String> {
        let file: FileRef = serde_json::from_str(text).map_err(|e| e.to_string())?;
        file.validate()?;
        Ok(file)
    }

    proptest! {
        #[test]
        fn any_text_reads_or_is_refused(text in ".{0,300}") {
            let _ = read(&text);
        }

        #[test]
        fn any_field_values_read_or_are_refused(
            uri in ".{0,40}",
            size in any::<i128>(),
            sha in "[0-9a-fA-F]{0,70}",
            media in ".{0,40}",
            at in prop_oneof![any::<i64>().prop_map(|n| n.to_string()), ".{0,30}".prop_map(|t| format!("{t:?}"))],
        ) {
            let field = if at.starts_with('"') { "uploaded_at" } else { "uploaded_at_ms" };
            let text = format!(
                r#"{{"uri":{uri:?},"size":{size},"sha256":{sha:?},"media_type":{media:?},"{field}":{at}}}"#
            );
            if let Ok(file) = read(&text) {
                prop_assert!(is_sha256_hex(&file.sha256));
                prop_assert!((0..=UPLOADED_AT_MAX_MS).contains(&file.uploaded_at_ms));
            }
        }

        #[test]
        fn a_valid_value_reads_back_as_itself(
            size in any::<u64>(),
            sha in "[0-9a-f]{64}",
            at in 0..=UPLOADED_AT_MAX_MS,
            subtype in "[a-z0-9.+-]{1,20}",
        ) {
            let file = FileRef {
                uri: format!("s3://bucket/stage/7/sha256/{sha}"),
                size,
                sha256: sha,
                media_type: format!("video/{subtype}"),
                uploaded_at_ms: at,
            };
            prop_assume!(file.validate().is_ok());
            let text = serde_json::to_string(&file).expect("json");
            prop_assert_eq!(read(&text).expect("reads"), file);
        }
    }
}
