//! ZooKeeper's failures, as the ZooKeeper registries (forever and lease) and `workers` report
//! them.

use crate::worker::{StoreError, StoreFailure, WorkerError};

/// What went wrong talking to ZooKeeper.
#[derive(Debug, thiserror::Error)]
pub enum ZkError {
    /// No ZooKeeper server answered.
    #[error("cannot reach ZooKeeper at {hosts}: {reason}")]
    Unreachable {
        /// The connect string.
        hosts: String,
        /// What the client said.
        reason: String,
    },
    /// A ZooKeeper request failed.
    #[error("ZooKeeper {action} {path} failed: {reason}")]
    Request {
        /// What was being done.
        action: &'static str,
        /// The node.
        path: String,
        /// What the client said.
        reason: String,
    },
    /// ZooKeeper refused access to a node (its ACL does not admit our credentials).
    #[error("ZooKeeper refused access to {path} (not authorized)")]
    NotAuthorized {
        /// The node.
        path: String,
    },
    /// A node does not hold what leafctl or Leaf writes.
    #[error("ZooKeeper node {path} is not a worker node: {reason}")]
    BadNode {
        /// The node.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The ZooKeeper session that holds the lease is not connected.
    #[error("the ZooKeeper session holding worker id {worker} is {state}; stopped issuing IDs")]
    SessionLost {
        /// The worker id.
        worker: u64,
        /// The session's state.
        state: String,
    },
    /// ZooKeeper was unreachable and no usable cache exists.
    #[error("ZooKeeper is unreachable and there is no cached worker id for {identity} in {path}")]
    NoCache {
        /// `ip:port`.
        identity: String,
        /// The cache file looked for.
        path: String,
    },
}

impl StoreError for ZkError {
    fn hint(&self) -> &'static str {
        match self {
            ZkError::Unreachable { .. } => {
                "check --zk HOST:PORT and that ZooKeeper is running (echo ruok | nc HOST PORT)"
            }
            ZkError::Request { .. } => "retry once ZooKeeper answers",
            ZkError::NotAuthorized { .. } => {
                "set LEAF_ZK_AUTH (or zk.auth) to the user:password the nodes were created with"
            }
            ZkError::BadNode { .. } => {
                "inspect the node; `leafctl workers list` shows what leafctl understands"
            }
            ZkError::SessionLost { .. } => {
                "ZooKeeper stopped answering; retry once it is reachable"
            }
            ZkError::NoCache { .. } => {
                "start ZooKeeper (the first start of an identity needs it), or use --worker-id N"
            }
        }
    }

    fn may_recover(&self) -> bool {
        matches!(self, ZkError::SessionLost { state, .. } if state == "disconnected")
    }
}

impl From<ZkError> for WorkerError {
    fn from(e: ZkError) -> WorkerError {
        WorkerError::Store(StoreFailure::new("ZooKeeper", e))
    }
}

/// Reads a node's bytes, or says which node holds what leafctl does not write.
pub(crate) fn parse_node(
    path: &str,
    bytes: &[u8],
) -> Result<crate::worker::node::NodeData, WorkerError> {
    crate::worker::node::NodeData::parse(bytes).map_err(|reason| {
        ZkError::BadNode {
            path: path.to_string(),
            reason,
        }
        .into()
    })
}
