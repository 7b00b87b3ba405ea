//! Helpers shared by the Lance scan tests.

use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchIterator};
use lance::Dataset;

/// `batch` written as the one fragment of a new Lance dataset `<name>.lance` under `dir`,
/// opened again.
pub async fn write(dir: &std::path::Path, name: &str, batch: RecordBatch) -> Arc<Dataset> {
    let uri = dir
        .join(format!("{name}.lance"))
        .to_string_lossy()
        .to_string();
    let schema = batch.schema();
    Dataset::write(
        RecordBatchIterator::new([Ok(batch)], schema),
        uri.as_str(),
        None,
    )
    .await
    .expect("write");
    Arc::new(Dataset::open(&uri).await.expect("open"))
}
