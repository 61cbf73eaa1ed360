//! etcd's failures, as the etcd registry and `workers --etcd` report them.

use crate::worker::{StoreError, StoreFailure, WorkerError};

/// What went wrong talking to etcd.
#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    /// No etcd endpoint answered.
    #[error("cannot reach etcd at {endpoints}: {reason}")]
    Unreachable {
        /// The endpoints tried.
        endpoints: String,
        /// What the client said.
        reason: String,
    },
    /// The TLS handshake with etcd failed (an untrusted or mismatched certificate).
    #[error("cannot talk TLS to etcd at {endpoints}: {reason}")]
    Tls {
        /// The endpoints tried.
        endpoints: String,
        /// What the TLS library said.
        reason: String,
    },
    /// An etcd request failed.
    #[error("etcd {action} {key} failed: {reason}")]
    Request {
        /// What was being done.
        action: &'static str,
        /// The key (or key prefix).
        key: String,
        /// What etcd or the client said.
        reason: String,
    },
    /// etcd refused the user name or password, or the user lacks a permission.
    #[error("etcd refused user {user:?}: {reason}")]
    Auth {
        /// The user name (never the password).
        user: String,
        /// Why.
        reason: String,
    },
    /// An etcd setting leafctl cannot use (an endpoint URL, a CA file).
    #[error("invalid etcd setting: {0}")]
    Config(String),
    /// The etcd lease that holds a worker id expired, was revoked, or could not be kept alive.
    #[error("the etcd lease holding worker id {worker} is lost ({reason}); stopped issuing IDs")]
    LeaseLost {
        /// The worker id.
        worker: u64,
        /// What happened.
        reason: String,
    },
}

impl StoreError for EtcdError {
    fn hint(&self) -> &'static str {
        match self {
            EtcdError::Unreachable { .. } => {
                "check --etcd ENDPOINTS and that etcd is running (etcdctl --endpoints=... endpoint health)"
            }
            EtcdError::Tls { .. } => {
                "set etcd.ca_file (or LEAF_ETCD_CA_FILE) to the PEM file of the CA that signed etcd's certificate, and use the host name the certificate names"
            }
            EtcdError::Request { .. } => "retry once etcd answers",
            EtcdError::Auth { .. } => {
                "check etcd.user (LEAF_ETCD_USER) and the password in LEAF_ETCD_PASSWORD, and the user's permissions on /leafctl/"
            }
            EtcdError::Config(_) => {
                "give endpoints as http://HOST:PORT or https://HOST:PORT (CA file: etcd.ca_file), comma-separated"
            }
            EtcdError::LeaseLost { .. } => {
                "etcd stopped answering or the worker id was reclaimed; retry once etcd is reachable"
            }
        }
    }

    fn is_usage(&self) -> bool {
        matches!(self, EtcdError::Config(_))
    }
}

impl From<EtcdError> for WorkerError {
    fn from(e: EtcdError) -> WorkerError {
        WorkerError::Store(StoreFailure::new("etcd", e))
    }
}
