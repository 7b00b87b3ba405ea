//! FILE columns in SQL: the `FILE` column type and the functions over FILE values.
//!
//! * `CREATE TABLE t (id BIGINT, clip FILE)`: [`FileTypePlanner`] (DataFusion's
//!   `TypePlanner` hook) plans `FILE` as the FILE storage struct, and the engine marks
//!   columns of exactly that type as FILE ([`mark_file_columns`]).
//! * `file_uri(clip)`, `file_size(clip)` (bytes, UInt64), `file_sha256(clip)`,
//!   `file_media_type(clip)`: one field of a FILE value (NULL for NULL). Struct field
//!   access (`clip['size']`, `get_field(clip, 'size')`) works as well.
//! * `file_ref('{"uri": …, "size": …, "sha256": …, "media_type": …, "uploaded_at_ms": …}')`:
//!   a FILE value from the JSON that `lake file put --format json` and the SDK's
//!   [`lake_sdk::FileRef`] print (or `lake sql --format json`, with `uploaded_at`), for
//!   `INSERT … VALUES`.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, make_array};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use datafusion::common::{Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::sql::sqlparser::ast;
use lake_sdk::file::{FileRef, FileType, file_array, file_data_type};

use crate::QueryError;

/// Plans the SQL type `FILE` (any case) as [`file_data_type`].
#[derive(Debug, Default)]
pub struct FileTypePlanner;

impl TypePlanner for FileTypePlanner {
    fn plan_type(&self, sql_type: &ast::DataType) -> Result<Option<DataType>> {
        match sql_type {
            ast::DataType::Custom(name, modifiers)
                if modifiers.is_empty() && name.to_string().eq_ignore_ascii_case("file") =>
            {
                Ok(Some(file_data_type()))
            }
            _ => Ok(None),
        }
    }
}

/// `schema` with every column of exactly the FILE storage type marked as FILE (the
/// `lake.file` extension type), as `CREATE TABLE … (clip FILE)` declares them.
///
/// # Errors
/// [`QueryError::Unsupported`] for FILE inside another type (`STRUCT<f FILE>`,
/// `FILE[]`): appends check top-level FILE columns only.
pub fn mark_file_columns(schema: &Schema) -> Result<SchemaRef, QueryError> {
    let fields = schema
        .fields()
        .iter()
        .map(|f| {
            if f.data_type() == &file_data_type() {
                return Ok(f.as_ref().clone().with_extension_type(FileType));
            }
            if contains_file(f.data_type()) {
                return Err(QueryError::Unsupported(format!(
                    "column {} has FILE inside {}; FILE must be the type of a column itself",
                    f.name(),
                    f.data_type()
                )));
            }
            Ok(f.as_ref().clone())
        })
        .collect::<Result<Vec<Field>, QueryError>>()?;
    Ok(Arc::new(Schema::new(fields)))
}

/// Whether `data_type` is or nests the FILE storage type.
fn contains_file(data_type: &DataType) -> bool {
    if data_type == &file_data_type() {
        return true;
    }
    match data_type {
        DataType::Struct(fields) => fields.iter().any(|f| contains_file(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => contains_file(f.data_type()),
        DataType::Dictionary(_, value) => contains_file(value),
        _ => false,
    }
}

/// The SQL functions over FILE values (see the module docs).
pub fn functions() -> Vec<ScalarUDF> {
    let accessor = |name: &'static str, index: usize, data_type: DataType| {
        ScalarUDF::new_from_impl(FileAccessor {
            name,
            index,
            data_type,
            signature: Signature::user_defined(Volatility::Immutable),
        })
    };
    vec![
        accessor("file_uri", 0, DataType::Utf8),
        accessor("file_size", 1, DataType::UInt64),
        accessor("file_sha256", 2, DataType::Utf8),
        accessor("file_media_type", 3, DataType::Utf8),
        ScalarUDF::new_from_impl(FileRefFromJson {
            signature: Signature::string(1, Volatility::Immutable),
        }),
    ]
}

/// One field of a FILE value.
#[derive(Debug, PartialEq, Eq, Hash)]
struct FileAccessor {
    name: &'static str,
    index: usize,
    data_type: DataType,
    signature: Signature,
}

impl ScalarUDFImpl for FileAccessor {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(self.data_type.clone())
    }

    /// A FILE value, or NULL (which gives NULL).
    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        match arg_types {
            [t] if t == &file_data_type() || t == &DataType::Null => Ok(vec![file_data_type()]),
            [t] => plan_err!("{} takes a FILE value, got {t}", self.name),
            _ => plan_err!(
                "{} takes one FILE value, got {} arguments",
                self.name,
                arg_types.len()
            ),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [file] = args.args.as_slice() else {
            return exec_err!("{} takes one FILE argument", self.name);
        };
        let (array, scalar) = match file {
            ColumnarValue::Array(a) => (a.clone(), false),
            ColumnarValue::Scalar(s) => (s.to_array()?, true),
        };
        let files = array.as_struct();
        let child = files.column(self.index);
        // A NULL FILE has no fields: the parent's nulls apply to the child.
        let nulls = NullBuffer::union(files.nulls(), child.nulls());
        let out: ArrayRef = make_array(child.to_data().into_builder().nulls(nulls).build()?);
        if scalar {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
        } else {
            Ok(ColumnarValue::Array(out))
        }
    }
}

/// `file_ref(json)`: a FILE value from its JSON form.
#[derive(Debug, PartialEq, Eq, Hash)]
struct FileRefFromJson {
    signature: Signature,
}

impl ScalarUDFImpl for FileRefFromJson {
    fn name(&self) -> &str {
        "file_ref"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(file_data_type())
    }

    fn return_field_from_args(&self, _args: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(
            Field::new(self.name(), file_data_type(), true).with_extension_type(FileType),
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [json] = args.args.as_slice() else {
            return exec_err!("file_ref takes one argument: the FILE value as JSON text");
        };
        let (array, scalar) = match json {
            ColumnarValue::Array(a) => (a.clone(), false),
            ColumnarValue::Scalar(s) => (s.to_array()?, true),
        };
        let text = arrow::compute::cast(&array, &DataType::Utf8)?;
        let mut files = Vec::with_capacity(text.len());
        for value in text.as_string::<i32>() {
            let Some(value) = value else {
                files.push(None);
                continue;
            };
            let file: FileRef = match serde_json::from_str(value) {
                Ok(f) => f,
                Err(e) => {
                    return exec_err!(
                        "file_ref: {e}; expected JSON with uri, size, sha256, media_type and uploaded_at_ms (or uploaded_at as RFC 3339), as `lake file put --format json` and `lake sql --format json` print"
                    );
                }
            };
            if let Err(e) = file.validate() {
                return exec_err!("file_ref: {e}");
            }
            files.push(Some(file));
        }
        let out: ArrayRef = Arc::new(file_array(&files));
        if scalar {
            Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?))
        } else {
            Ok(ColumnarValue::Array(out))
        }
    }
}
