//! The node JSON every registry writes: Leaf's `{"ip","port","timestamp"}`, plus what leases add
//! (`reserved_until`, `holder`). Registry-neutral: ZooKeeper nodes and etcd keys hold the same.

use serde::{Deserialize, Serialize};

use super::Identity;

/// Node data leafctl and Leaf write: `{"ip","port","timestamp"}` (leases add `reserved_until`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct NodeData {
    /// The holder's IP.
    #[serde(default)]
    pub ip: String,
    /// The holder's port (a string, as Leaf writes it).
    #[serde(default)]
    pub port: String,
    /// The holder's clock at its last report (Unix ms).
    #[serde(default)]
    pub timestamp: i64,
    /// Lease mode: IDs of this worker id were only issued below this Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_until: Option<i64>,
    /// Lease mode: who wrote `reserved_until` (the holder's session or lease, in hex), so a
    /// holder recognises its own write whose answer was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
}

impl NodeData {
    pub(crate) fn new(identity: &Identity, timestamp: i64) -> NodeData {
        NodeData {
            ip: identity.ip.clone(),
            port: identity.port.clone(),
            timestamp,
            reserved_until: None,
            holder: None,
        }
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a node's bytes; the error says what is wrong with them (each store names the
    /// node its own way).
    pub(crate) fn parse(bytes: &[u8]) -> Result<NodeData, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("data is not Leaf's JSON: {e}"))
    }
}
