//! Builders for transaction parts.

use etcdv3client::pb;
use pb::compare::{CompareResult, CompareTarget, TargetUnion};

fn compare(key: &str, target: CompareTarget, value: TargetUnion) -> pb::Compare {
    pb::Compare {
        result: CompareResult::Equal as i32,
        target: target as i32,
        key: key.as_bytes().to_vec(),
        range_end: Vec::new(),
        target_union: Some(value),
    }
}

/// `create_revision(key) == rev` (0: the key does not exist).
pub fn create_revision_is(key: &str, rev: i64) -> pb::Compare {
    compare(key, CompareTarget::Create, TargetUnion::CreateRevision(rev))
}

/// `mod_revision(key) == rev` (0: the key does not exist).
pub fn mod_revision_is(key: &str, rev: i64) -> pb::Compare {
    compare(key, CompareTarget::Mod, TargetUnion::ModRevision(rev))
}

/// Put `value` at `key`, attached to `lease` (0: none).
pub fn put(key: &str, value: Vec<u8>, lease: i64) -> pb::RequestOp {
    pb::RequestOp {
        request: Some(pb::request_op::Request::RequestPut(pb::PutRequest {
            key: key.as_bytes().to_vec(),
            value,
            lease,
            ..Default::default()
        })),
    }
}

/// Read `key`.
pub fn get(key: &str) -> pb::RequestOp {
    pb::RequestOp {
        request: Some(pb::request_op::Request::RequestRange(pb::RangeRequest {
            key: key.as_bytes().to_vec(),
            ..Default::default()
        })),
    }
}

/// The key-values read by the `n`th operation of a transaction's answer.
pub fn read(resp: &pb::TxnResponse, n: usize) -> Option<pb::KeyValue> {
    match resp.responses.get(n)?.response.as_ref()? {
        pb::response_op::Response::ResponseRange(r) => r.kvs.first().cloned(),
        _ => None,
    }
}

/// The revision a transaction was applied at.
pub fn revision(resp: &pb::TxnResponse) -> i64 {
    resp.header.map(|h| h.revision).unwrap_or(0)
}
