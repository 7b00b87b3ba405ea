//! The distributed store: the event log and the leader lease in one DynamoDB table.
//!
//! Item layout (table key: partition key `pk`, a string; sort key `sk`, a number):
//!
//! | `pk` | `sk` | attributes |
//! |---|---|---|
//! | `lease` | 0 | `epoch` (N), `holder` (S, empty when released), `address` (S), `renewal` (N) |
//! | `head` | 0 | `revision` (N): the last revision in the log; `through` (N): the highest revision truncation removed |
//! | `log` | revision | `event` (B): protobuf `lake.metasrv.v1.ChangeEvent`, or its first part; `parts` (N, only when split): how many parts |
//! | `logpart` | revision × 1000 + part | `event` (B): part `part` (1, 2, …) of a split event |
//! | `checkpoint` | 0 | `header` (B): protobuf `CheckpointHeader` of the newest checkpoint; `revision` (N): its revision |
//! | `ckpt` | revision × 1,000,000 + chunk | `chunk` (B): chunk `chunk` (0, 1, …) of the checkpoint at `revision` ([`crate::checkpoint`]); `sha` (B): that checkpoint's SHA-256 |
//!
//! A checkpoint is written chunks first (transactions of conditional puts, each chunk
//! tagged with the checkpoint's SHA-256 so that a chunk slot never takes another
//! checkpoint's bytes), then its header with a
//! `PutItem` conditioned on the stored one being older, then the earlier checkpoints'
//! chunks are deleted. Truncation is one `TransactWriteItems` (the lease check, a check that
//! the checkpoint covers the revision, and `head.through` raised), after which the events
//! through it are deleted. A crash between any two steps leaves a readable checkpoint and
//! log: chunks without a header are never read (and are deleted with the next checkpoint's
//! sweep), and events at or below `through` that a crash left behind are valid events that
//! the next truncation deletes.
//!
//! An item holds at most 400 KB, so an event larger than [`DynamoStore::ITEM_BYTES`] (a wide
//! table's schema) is split over several items written in the same transaction.
//! An append is one `TransactWriteItems` (DynamoDB API reference, "TransactWriteItems"):
//! a `ConditionCheck` that the lease still has the leader's epoch and holder, an `Update` of
//! `head` conditioned on its revision being the append's base, and one `Put` per event
//! (or part) conditioned on `attribute_not_exists(pk)`. All apply or none do, so a deposed
//! leader's append can never land. A transaction holds at most 100 actions and 4 MB, which
//! the store reports as its [`EventStore::append_limits`] so that the coordinator sizes
//! every group commit to fit. Lease writes are a `PutItem` with a
//! `ConditionExpression` on the whole expected record. Every read is strongly consistent.
//!
//! The whole log lives in one partition (`pk = log`), which is ordered by `sk` and served by
//! `Query`; DynamoDB's per-partition write limit (1,000 writes/s) bounds group commits, not
//! commits, since one group commit is one transaction.
//!
//! Endpoint, region and credentials come from the standard AWS configuration
//! (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, profiles, …), with an optional
//! endpoint override. The [`EventStore`] methods block: call them from a blocking thread
//! (`tokio::task::spawn_blocking`), never from an async task.

use std::collections::HashMap;

use aws_config::BehaviorVersion;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConditionCheck, DeleteRequest,
    KeySchemaElement, KeyType, Put, ScalarAttributeType, TransactWriteItem, Update, WriteRequest,
};
use lake_core::{AppendLimits, ChangeEvent, Fence, Lease, Registry};
use prost::Message;
use tokio::runtime::Handle;

use crate::checkpoint;
use crate::convert;
use crate::proto;
use crate::store::{EventStore, StoreError};

type Item = HashMap<String, AttributeValue>;

/// [`EventStore`] on a DynamoDB table; see the module docs for the layout.
pub struct DynamoStore {
    client: Client,
    table: String,
    runtime: Handle,
}

fn s(value: &str) -> AttributeValue {
    AttributeValue::S(value.to_string())
}

fn n(value: u64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// The sort key of part `part` (1, 2, …) of the event at `revision`: parts sort after their
/// event and before the next one's (an event has far fewer than 1,000 parts: schemas are
/// at most 1 MiB).
fn part_key(revision: u64, part: usize) -> u64 {
    revision
        .saturating_mul(1000)
        .saturating_add(u64::try_from(part).unwrap_or(u64::MAX))
}

/// Sort keys of one checkpoint's chunks: chunk `c` of the checkpoint at revision `r` is
/// `r × 1,000,000 + c` (a checkpoint has far fewer chunks: 350 GB).
const CHUNK_KEYS: u64 = 1_000_000;

/// The sort key of chunk 0 of the checkpoint at `revision`.
fn chunk_base(revision: u64) -> Result<u64, StoreError> {
    revision.checked_mul(CHUNK_KEYS).ok_or_else(|| {
        StoreError::Refused(format!(
            "revision {revision} is beyond what checkpoint keys hold"
        ))
    })
}

fn key(pk: &str, sk: u64) -> Item {
    HashMap::from([("pk".to_string(), s(pk)), ("sk".to_string(), n(sk))])
}

fn io<E: std::fmt::Debug + ProvideErrorMetadata>(what: &str, error: &SdkError<E>) -> StoreError {
    let detail = match error {
        SdkError::ServiceError(e) => format!(
            "{}: {}",
            e.err().code().unwrap_or("error"),
            e.err().message().unwrap_or_default()
        ),
        other => format!("{other:?}"),
    };
    StoreError::Io(format!("dynamodb {what}: {detail}"))
}

/// Whether a service error says the write was throttled (definitely not applied).
fn throttled(code: Option<&str>) -> bool {
    matches!(
        code,
        Some(
            "ProvisionedThroughputExceededException"
                | "ThrottlingException"
                | "RequestLimitExceeded"
                | "TransactionConflictException"
                | "TransactionInProgressException"
        )
    )
}

fn number(item: &Item, name: &str) -> Result<u64, StoreError> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| StoreError::Corrupt {
            revision: 0,
            message: format!("item attribute {name} is missing or not a number"),
        })
}

fn string(item: &Item, name: &str) -> Result<String, StoreError> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .cloned()
        .ok_or_else(|| StoreError::Corrupt {
            revision: 0,
            message: format!("item attribute {name} is missing or not a string"),
        })
}

impl DynamoStore {
    /// Most log items in one append: a transaction holds at most 100 actions, two of which
    /// are the lease check and the head update.
    pub const MAX_ITEMS_PER_APPEND: usize = 98;
    /// Most event bytes in one append: a transaction carries at most 4 MB, keys and
    /// attribute names included.
    pub const MAX_BYTES_PER_APPEND: usize = 3_500_000;
    /// Most event bytes in one item: an item holds at most 400 KB, keys and attribute
    /// names included.
    pub const ITEM_BYTES: usize = 350_000;

    /// Most items one truncation or checkpoint sweep deletes (a log of millions of events
    /// truncated for the first time is deleted over several truncations).
    pub const DELETES_PER_CALL: usize = 50_000;

    /// Checkpoint chunks written in one transaction: as many items of
    /// [`Self::ITEM_BYTES`] as fit [`Self::MAX_BYTES_PER_APPEND`].
    pub const CHUNKS_PER_TRANSACTION: usize = Self::MAX_BYTES_PER_APPEND / Self::ITEM_BYTES;

    /// The limits [`EventStore::append_limits`] reports.
    pub const LIMITS: AppendLimits = AppendLimits {
        items: Self::MAX_ITEMS_PER_APPEND,
        bytes: Self::MAX_BYTES_PER_APPEND,
        item_bytes: Self::ITEM_BYTES,
    };

    /// A store on `table`, with the AWS configuration from the environment and `endpoint`
    /// (e.g. `http://127.0.0.1:5000`) overriding the endpoint when given. Checks that the
    /// table exists.
    ///
    /// # Errors
    /// [`StoreError::Io`] naming the table and `lake meta init` when it does not exist or
    /// cannot be described.
    pub async fn connect(table: &str, endpoint: Option<&str>) -> Result<Self, StoreError> {
        let store = Self {
            client: client(endpoint).await,
            table: table.to_string(),
            runtime: Handle::current(),
        };
        store
            .client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| {
                StoreError::Io(format!(
                    "dynamodb table {table:?} is not usable ({}); create it with `lake meta init --dynamodb {table}`",
                    io("DescribeTable", &e)
                ))
            })?;
        Ok(store)
    }

    /// A store on `table` through an already configured `client` (e.g. with static
    /// credentials). Does not check the table.
    pub fn with_client(client: Client, table: &str) -> Self {
        Self {
            client,
            table: table.to_string(),
            runtime: Handle::current(),
        }
    }

    /// Creates `table` with Lake's key schema through `client`; see [`Self::create_table`].
    ///
    /// # Errors
    /// [`StoreError::Io`] from DynamoDB.
    pub async fn create_table_with(client: &Client, table: &str) -> Result<bool, StoreError> {
        create(client, table).await
    }

    /// Creates the table with Lake's key schema (on-demand billing) and waits until it is
    /// active. Returns `false` when it already existed.
    ///
    /// # Errors
    /// [`StoreError::Io`] from DynamoDB.
    pub async fn create_table(table: &str, endpoint: Option<&str>) -> Result<bool, StoreError> {
        create(&client(endpoint).await, table).await
    }

    fn block<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    async fn get(&self, pk: &str) -> Result<Option<Item>, StoreError> {
        let output = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, 0)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| io("GetItem", &e))?;
        Ok(output.item)
    }

    async fn head(&self) -> Result<u64, StoreError> {
        match self.get("head").await? {
            None => Ok(0),
            Some(item) => number(&item, "revision"),
        }
    }

    /// `head.through`: the highest revision truncation removed (0: none).
    async fn through(&self) -> Result<u64, StoreError> {
        match self.get("head").await? {
            Some(item) if item.contains_key("through") => number(&item, "through"),
            _ => Ok(0),
        }
    }

    async fn checkpoint_header(&self) -> Result<Option<proto::CheckpointHeader>, StoreError> {
        let Some(item) = self.get("checkpoint").await? else {
            return Ok(None);
        };
        let bytes = item
            .get("header")
            .and_then(|v| v.as_b().ok())
            .ok_or_else(|| StoreError::Corrupt {
                revision: 0,
                message: "checkpoint item without a header".into(),
            })?;
        checkpoint::decode_header(bytes.as_ref()).map(Some)
    }

    /// The items of partition `pk` whose sort key is in `range`, in order (consistent
    /// reads, page after page), at most `max` of them, holding only the attributes
    /// `projection` names when it is given.
    async fn query(
        &self,
        pk: &str,
        range: std::ops::RangeInclusive<u64>,
        projection: Option<&str>,
        max: usize,
    ) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut start: Option<Item> = None;
        while items.len() < max {
            let left = max - items.len();
            let page = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk AND sk BETWEEN :first AND :last")
                .expression_attribute_values(":pk", s(pk))
                .expression_attribute_values(":first", n(*range.start()))
                .expression_attribute_values(":last", n(*range.end()))
                .set_projection_expression(projection.map(str::to_string))
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .limit(i32::try_from(left.clamp(1, 1000)).unwrap_or(1000))
                .send()
                .await
                .map_err(|e| io("Query", &e))?;
            items.extend(page.items().iter().take(left).cloned());
            match page.last_evaluated_key {
                Some(next) => start = Some(next),
                None => break,
            }
        }
        Ok(items)
    }

    /// Writes `requests` in `BatchWriteItem` calls of 25, retrying what DynamoDB leaves
    /// unprocessed (throttling) with a growing wait, up to 8 times per call.
    async fn batch_write(&self, requests: Vec<WriteRequest>) -> Result<(), StoreError> {
        for batch in requests.chunks(25) {
            let mut pending = batch.to_vec();
            for attempt in 0..8u32 {
                let output = self
                    .client
                    .batch_write_item()
                    .request_items(&self.table, pending)
                    .send()
                    .await
                    .map_err(|e| io("BatchWriteItem", &e))?;
                pending = output
                    .unprocessed_items
                    .and_then(|mut left| left.remove(&self.table))
                    .unwrap_or_default();
                if pending.is_empty() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50 << attempt)).await;
            }
            if !pending.is_empty() {
                return Err(StoreError::Refused(format!(
                    "dynamodb left {} writes unprocessed after 8 attempts",
                    pending.len()
                )));
            }
        }
        Ok(())
    }

    /// Deletes the items of partition `pk` with sort key below `below`, a page of 1,000
    /// keys at a time, at most [`Self::DELETES_PER_CALL`] of them (what is left is deleted
    /// by the next call: readers never see it, see the module docs).
    async fn delete_below(&self, pk: &str, below: u64) -> Result<(), StoreError> {
        let Some(last) = below.checked_sub(1) else {
            return Ok(());
        };
        let mut deleted = 0;
        while deleted < Self::DELETES_PER_CALL {
            let keys = self.query(pk, 0..=last, Some("pk, sk"), 1_000).await?;
            if keys.is_empty() {
                break;
            }
            deleted += keys.len();
            let requests = keys
                .into_iter()
                .map(|key| {
                    DeleteRequest::builder()
                        .set_key(Some(key))
                        .build()
                        .map(|delete| WriteRequest::builder().delete_request(delete).build())
                        .map_err(build)
                })
                .collect::<Result<Vec<_>, _>>()?;
            self.batch_write(requests).await?;
        }
        Ok(())
    }

    /// Up to `limit` events after `after` as stored (not yet checked for holes).
    fn read_page(&self, after: u64, limit: usize) -> Result<Vec<ChangeEvent>, StoreError> {
        self.block(async {
            let first = after.saturating_add(1);
            let items = self.query("log", first..=u64::MAX, None, limit).await?;
            let mut events = Vec::with_capacity(items.len());
            for item in &items {
                let revision = number(item, "sk")?;
                let corrupt = |message: String| StoreError::Corrupt { revision, message };
                let mut bytes = item
                    .get("event")
                    .and_then(|v| v.as_b().ok())
                    .ok_or_else(|| corrupt("log item without an event".into()))?
                    .as_ref()
                    .to_vec();
                let parts = item.get("parts").map_or(Ok(1), |_| number(item, "parts"))?;
                for part in 1..parts {
                    let sk = part_key(revision, usize::try_from(part).unwrap_or(usize::MAX));
                    let piece = self
                        .client
                        .get_item()
                        .table_name(&self.table)
                        .set_key(Some(key("logpart", sk)))
                        .consistent_read(true)
                        .send()
                        .await
                        .map_err(|e| io("GetItem", &e))?
                        .item
                        .ok_or_else(|| corrupt(format!("part {part} of {parts} is missing")))?;
                    let piece = piece
                        .get("event")
                        .and_then(|v| v.as_b().ok())
                        .ok_or_else(|| corrupt(format!("part {part} holds no bytes")))?;
                    bytes.extend_from_slice(piece.as_ref());
                }
                let decoded = proto::ChangeEvent::decode(bytes.as_slice())
                    .map_err(|e| corrupt(e.to_string()))?;
                events.push(convert::change_event(decoded).map_err(|e| corrupt(e.to_string()))?);
            }
            Ok(events)
        })
    }

    async fn write_checkpoint_async(&self, registry: &Registry) -> Result<(), StoreError> {
        let revision = registry.revision();
        if self
            .checkpoint_header()
            .await?
            .is_some_and(|h| h.revision >= revision)
        {
            return Ok(());
        }
        let base = chunk_base(revision)?;
        let encoded = checkpoint::Encoded::new(registry, Self::ITEM_BYTES);
        encoded.check_size()?;
        // Chunks are written in transactions whose puts are conditioned on the slot being
        // free or holding this very checkpoint (same SHA-256): two writers of the same
        // revision with different bytes (a deposed leader's late call during a rolling
        // upgrade) can never mix their chunks under one header.
        let sha = AttributeValue::B(Blob::new(encoded.header.sha256.clone()));
        let chunks: Vec<(u64, &[u8])> = (0u64..).zip(encoded.chunks()).collect();
        for group in chunks.chunks(Self::CHUNKS_PER_TRANSACTION) {
            let mut items = Vec::with_capacity(group.len());
            for (index, chunk) in group {
                let mut item = key("ckpt", base + index);
                item.insert("chunk".into(), AttributeValue::B(Blob::new(chunk.to_vec())));
                item.insert("sha".into(), sha.clone());
                let put = Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(item))
                    .condition_expression("attribute_not_exists(pk) OR sha = :sha")
                    .expression_attribute_values(":sha", sha.clone())
                    .build()
                    .map_err(build)?;
                items.push(TransactWriteItem::builder().put(put).build());
            }
            let written = self
                .client
                .transact_write_items()
                .set_transact_items(Some(items))
                .send()
                .await;
            if let Err(error) = written {
                return Err(match error.as_service_error() {
                    Some(TransactWriteItemsError::TransactionCanceledException(_)) => {
                        StoreError::Refused(format!(
                            "another checkpoint of revision {revision} holds its chunk slots"
                        ))
                    }
                    Some(e) if throttled(e.code()) => {
                        StoreError::Refused(format!("dynamodb: {}", e.code().unwrap_or_default()))
                    }
                    _ => io("TransactWriteItems", &error),
                });
            }
        }
        let mut item = key("checkpoint", 0);
        item.insert(
            "header".into(),
            AttributeValue::B(Blob::new(encoded.header.encode_to_vec())),
        );
        item.insert("revision".into(), n(revision));
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(revision) OR revision < :revision")
            .expression_attribute_values(":revision", n(revision))
            .send()
            .await;
        match put {
            Ok(_) => {}
            // A newer checkpoint is stored: ours is swept with the next one.
            Err(e) if e.code() == Some("ConditionalCheckFailedException") => return Ok(()),
            Err(e) if throttled(e.code()) => {
                return Err(StoreError::Refused(format!(
                    "dynamodb: {}",
                    e.code().unwrap_or_default()
                )));
            }
            Err(e) => return Err(io("PutItem", &e)),
        }
        // The earlier checkpoints' chunks, and any a crashed write left.
        self.delete_below("ckpt", base).await
    }

    async fn read_checkpoint_async(&self) -> Result<Option<Registry>, StoreError> {
        // A newer checkpoint may replace the one read and sweep its chunks between the
        // header and the chunks: read again then.
        for _ in 0..3 {
            let Some(header) = self.checkpoint_header().await? else {
                return Ok(None);
            };
            checkpoint::check_header(&header)?;
            let base = chunk_base(header.revision)?;
            let last = base + u64::from(header.chunks.max(1)) - 1;
            let chunks = usize::try_from(header.chunks).unwrap_or(usize::MAX);
            let items = self.query("ckpt", base..=last, None, chunks).await?;
            let mut bytes = Vec::with_capacity(checkpoint::Encoded::capacity_for(&header));
            let mut next = base;
            for item in &items {
                let ours = item
                    .get("sha")
                    .and_then(|v| v.as_b().ok())
                    .is_some_and(|sha| sha.as_ref() == header.sha256.as_slice());
                if number(item, "sk")? != next || !ours {
                    break;
                }
                let chunk = item
                    .get("chunk")
                    .and_then(|v| v.as_b().ok())
                    .ok_or_else(|| StoreError::Corrupt {
                        revision: header.revision,
                        message: "checkpoint chunk without bytes".into(),
                    })?;
                bytes.extend_from_slice(chunk.as_ref());
                next += 1;
            }
            let read = next - base;
            if read == u64::from(header.chunks) {
                return checkpoint::decode(&header, &bytes).map(Some);
            }
            let now = self.checkpoint_header().await?;
            if now.is_some_and(|h| h.revision == header.revision) {
                return Err(StoreError::Corrupt {
                    revision: header.revision,
                    message: format!("checkpoint chunk {read} of {} is missing", header.chunks),
                });
            }
        }
        Err(StoreError::Io(
            "the checkpoint was replaced three times while it was read".into(),
        ))
    }

    /// The transaction step that holds a write to the lease still naming `fence`'s leader
    /// (appends and truncations carry it).
    fn fence_check(&self, fence: &Fence) -> Result<ConditionCheck, StoreError> {
        ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(key("lease", 0)))
            .condition_expression("epoch = :epoch AND holder = :holder")
            .expression_attribute_values(":epoch", n(fence.epoch))
            .expression_attribute_values(":holder", s(&fence.holder))
            .build()
            .map_err(build)
    }

    async fn truncate_async(&self, fence: &Fence, through: u64) -> Result<(), StoreError> {
        let lease = self.fence_check(fence)?;
        let covered = ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(key("checkpoint", 0)))
            .condition_expression("revision >= :through")
            .expression_attribute_values(":through", n(through))
            .build()
            .map_err(build)?;
        let marker = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key("head", 0)))
            .update_expression("SET through = :through")
            .condition_expression(
                "revision > :through AND (attribute_not_exists(through) OR through < :through)",
            )
            .expression_attribute_values(":through", n(through))
            .build()
            .map_err(build)?;
        let result = self
            .client
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().condition_check(lease).build())
            .transact_items(
                TransactWriteItem::builder()
                    .condition_check(covered)
                    .build(),
            )
            .transact_items(TransactWriteItem::builder().update(marker).build())
            .send()
            .await;
        if let Err(error) = result {
            let Some(TransactWriteItemsError::TransactionCanceledException(canceled)) =
                error.as_service_error()
            else {
                if error
                    .as_service_error()
                    .is_some_and(|e| throttled(e.code()))
                {
                    return Err(StoreError::Refused(
                        "dynamodb throttled the truncation".into(),
                    ));
                }
                return Err(io("TransactWriteItems", &error));
            };
            let codes: Vec<&str> = canceled
                .cancellation_reasons()
                .iter()
                .map(|r| r.code().unwrap_or("None"))
                .collect();
            match codes.as_slice() {
                ["ConditionalCheckFailed", ..] => {
                    return Err(StoreError::ConditionFailed(format!(
                        "the truncation of leader {} (epoch {}) is fenced off: the lease changed",
                        fence.holder, fence.epoch
                    )));
                }
                [_, "ConditionalCheckFailed", ..] => {
                    return Err(StoreError::Refused(format!(
                        "cannot truncate the log through revision {through}: no checkpoint covers it"
                    )));
                }
                [_, _, "ConditionalCheckFailed"] => {
                    if self.through().await? < through {
                        return Err(StoreError::Refused(format!(
                            "cannot truncate the log through revision {through}: the last revision stays"
                        )));
                    }
                    // Already truncated that far: delete what a crash may have left.
                }
                _ => {
                    return Err(StoreError::Refused(format!(
                        "dynamodb canceled the truncation: {}",
                        codes.join(", ")
                    )));
                }
            }
        }
        let below = through.saturating_add(1);
        self.delete_below("log", below).await?;
        self.delete_below("logpart", part_key(below, 0)).await
    }
}

/// A client from the standard AWS configuration, with `endpoint` overriding the endpoint.
async fn client(endpoint: Option<&str>) -> Client {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(endpoint) = endpoint {
        loader = loader.endpoint_url(endpoint);
    }
    Client::new(&loader.load().await)
}

/// Creates `table` with Lake's key schema and waits until it is active; `false` when it
/// already existed.
async fn create(client: &Client, table: &str) -> Result<bool, StoreError> {
    let attribute = |name: &str, kind| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(kind)
            .build()
    };
    let key_element = |name: &str, kind| {
        KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(kind)
            .build()
    };
    let created = client
        .create_table()
        .table_name(table)
        .attribute_definitions(attribute("pk", ScalarAttributeType::S).map_err(build)?)
        .attribute_definitions(attribute("sk", ScalarAttributeType::N).map_err(build)?)
        .key_schema(key_element("pk", KeyType::Hash).map_err(build)?)
        .key_schema(key_element("sk", KeyType::Range).map_err(build)?)
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    match created {
        Ok(_) => {}
        Err(e) if e.code() == Some("ResourceInUseException") => return Ok(false),
        Err(e) => return Err(io("CreateTable", &e)),
    }
    for _ in 0..600 {
        let described = client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| io("DescribeTable", &e))?;
        let active = described
            .table()
            .and_then(|t| t.table_status())
            .is_some_and(|s| s.as_str() == "ACTIVE");
        if active {
            return Ok(true);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(StoreError::Io(format!(
        "dynamodb table {table:?} did not become ACTIVE within 60 s"
    )))
}

fn build(error: aws_sdk_dynamodb::error::BuildError) -> StoreError {
    StoreError::Io(format!("dynamodb request: {error}"))
}

fn lease_item(lease: &Lease) -> Item {
    let mut item = key("lease", 0);
    item.insert("epoch".into(), n(lease.epoch));
    item.insert("holder".into(), s(&lease.holder));
    item.insert("address".into(), s(&lease.address));
    item.insert("renewal".into(), n(lease.renewal));
    item
}

impl EventStore for DynamoStore {
    fn append(
        &self,
        fence: &Fence,
        base_revision: u64,
        events: &[ChangeEvent],
    ) -> Result<(), StoreError> {
        if !Self::LIMITS.admit(events) {
            return Err(StoreError::Refused(format!(
                "{} events ({} bytes) do not fit one DynamoDB transaction ({:?})",
                events.len(),
                events.iter().map(ChangeEvent::size_bound).sum::<usize>(),
                Self::LIMITS
            )));
        }
        let last = events.last().map_or(base_revision, |e| e.revision);
        let check = self.fence_check(fence)?;
        let head_condition = if base_revision == 0 {
            "attribute_not_exists(revision) OR revision = :base"
        } else {
            "revision = :base"
        };
        let head = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key("head", 0)))
            .update_expression("SET revision = :last")
            .condition_expression(head_condition)
            .expression_attribute_values(":base", n(base_revision))
            .expression_attribute_values(":last", n(last))
            .build()
            .map_err(build)?;
        let mut items = vec![
            TransactWriteItem::builder().condition_check(check).build(),
            TransactWriteItem::builder().update(head).build(),
        ];
        for event in events {
            let encoded = proto::ChangeEvent::from(event).encode_to_vec();
            let parts: Vec<&[u8]> = encoded.chunks(Self::ITEM_BYTES).collect();
            for (part, bytes) in parts.iter().enumerate() {
                let mut item = if part == 0 {
                    key("log", event.revision)
                } else {
                    key("logpart", part_key(event.revision, part))
                };
                item.insert("event".into(), AttributeValue::B(Blob::new(bytes.to_vec())));
                if part == 0 && parts.len() > 1 {
                    item.insert("parts".into(), n(parts.len() as u64));
                }
                let put = Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(item))
                    .condition_expression("attribute_not_exists(pk)")
                    .build()
                    .map_err(build)?;
                items.push(TransactWriteItem::builder().put(put).build());
            }
        }
        let result = self.block(
            self.client
                .transact_write_items()
                .set_transact_items(Some(items))
                .send(),
        );
        let Err(error) = result else {
            return Ok(());
        };
        let Some(service) = error.as_service_error() else {
            return Err(io("TransactWriteItems", &error));
        };
        if let TransactWriteItemsError::TransactionCanceledException(canceled) = service {
            let codes: Vec<&str> = canceled
                .cancellation_reasons()
                .iter()
                .map(|r| r.code().unwrap_or("None"))
                .collect();
            return Err(match codes.as_slice() {
                ["ConditionalCheckFailed", ..] => StoreError::ConditionFailed(format!(
                    "the write of leader {} (epoch {}) is fenced off: the lease changed",
                    fence.holder, fence.epoch
                )),
                [_, "ConditionalCheckFailed", ..] => StoreError::RevisionMismatch {
                    expected: base_revision,
                    actual: self.block(self.head())?,
                },
                _ => StoreError::Refused(format!(
                    "dynamodb canceled the transaction: {}",
                    codes.join(", ")
                )),
            });
        }
        if throttled(service.code()) {
            return Err(StoreError::Refused(format!(
                "dynamodb: {}",
                service.code().unwrap_or_default()
            )));
        }
        Err(io("TransactWriteItems", &error))
    }

    fn read_after(&self, after: u64, limit: usize) -> Result<Vec<ChangeEvent>, StoreError> {
        let events = match self.read_page(after, limit) {
            Ok(events) => events,
            // A split event whose parts a truncation is deleting.
            Err(StoreError::Corrupt { .. }) if after < self.truncated_through()? => {
                return Err(StoreError::Truncated {
                    after,
                    through: self.truncated_through()?,
                });
            }
            Err(error) => return Err(error),
        };
        lake_core::store::check_page(after, &events, || self.truncated_through())?;
        Ok(events)
    }

    fn revision(&self) -> Result<u64, StoreError> {
        self.block(self.head())
    }

    fn write_checkpoint(&self, registry: &Registry) -> Result<(), StoreError> {
        self.block(self.write_checkpoint_async(registry))
    }

    fn read_checkpoint(&self) -> Result<Option<Registry>, StoreError> {
        self.block(self.read_checkpoint_async())
    }

    fn truncate(&self, fence: &Fence, through: u64) -> Result<(), StoreError> {
        self.block(self.truncate_async(fence, through))
    }

    fn truncated_through(&self) -> Result<u64, StoreError> {
        self.block(self.through())
    }

    fn read_lease(&self) -> Result<Option<Lease>, StoreError> {
        let Some(item) = self.block(self.get("lease"))? else {
            return Ok(None);
        };
        Ok(Some(Lease {
            epoch: number(&item, "epoch")?,
            holder: string(&item, "holder")?,
            address: string(&item, "address")?,
            renewal: number(&item, "renewal")?,
        }))
    }

    fn write_lease(&self, expected: Option<&Lease>, lease: &Lease) -> Result<(), StoreError> {
        let mut put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(lease_item(lease)));
        put = match expected {
            None => put.condition_expression("attribute_not_exists(pk)"),
            Some(e) => put
                .condition_expression(
                    "epoch = :epoch AND holder = :holder AND address = :address AND renewal = :renewal",
                )
                .expression_attribute_values(":epoch", n(e.epoch))
                .expression_attribute_values(":holder", s(&e.holder))
                .expression_attribute_values(":address", s(&e.address))
                .expression_attribute_values(":renewal", n(e.renewal)),
        };
        match self.block(put.send()) {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some("ConditionalCheckFailedException") => {
                Err(StoreError::ConditionFailed(
                    "the lease is not the record the write expected".into(),
                ))
            }
            Err(e) if throttled(e.code()) => Err(StoreError::Refused(format!(
                "dynamodb: {}",
                e.code().unwrap_or_default()
            ))),
            Err(e) => Err(io("PutItem", &e)),
        }
    }

    fn append_limits(&self) -> AppendLimits {
        Self::LIMITS
    }
}
