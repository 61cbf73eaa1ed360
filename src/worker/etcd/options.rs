//! How to reach etcd and which keys to use.

use std::path::PathBuf;
use std::time::Duration;

use super::error::EtcdError;
use crate::worker::{DEFAULT_MAX_CLOCK_SKEW_MS, Identity, WorkerError};

/// How to reach etcd and which keys to use.
#[derive(Clone)]
pub struct EtcdOptions {
    /// Endpoints: `http://host:port`, `https://host:port`, or `host:port` (plain HTTP).
    pub endpoints: Vec<String>,
    /// Leaf's `leaf.name`: keys live under `/leafctl/{name}/`.
    pub name: String,
    /// This process's `ip:port`.
    pub identity: Identity,
    /// etcd user name, when etcd has authentication enabled.
    pub user: Option<String>,
    /// That user's password (never printed; `Debug` shows `***`).
    pub password: Option<String>,
    /// PEM file with the CA certificate(s) that signed the servers' certificates, for `https://`
    /// endpoints (without it the system's trust roots are used).
    pub ca_file: Option<PathBuf>,
    /// TTL asked for the etcd lease that holds a worker id. Issuing stops when no keep-alive
    /// was confirmed for 2/3 of it, or as soon as one keep-alive fails.
    pub lease_ttl: Duration,
    /// Deadline of one request to one endpoint.
    pub request_timeout: Duration,
    /// Largest clock difference to live peers that `workers doctor` accepts (ms).
    pub max_clock_skew_ms: i64,
    /// This deployment's region, recorded in `/leafctl/region` on first use. None: no region.
    pub scope: crate::worker::WorkerScope,
}

impl std::fmt::Debug for EtcdOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdOptions")
            .field("endpoints", &self.endpoints)
            .field("name", &self.name)
            .field("identity", &self.identity)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("ca_file", &self.ca_file)
            .field("lease_ttl", &self.lease_ttl)
            .field("request_timeout", &self.request_timeout)
            .field("max_clock_skew_ms", &self.max_clock_skew_ms)
            .field("scope", &self.scope)
            .finish()
    }
}

/// Default TTL of the etcd lease behind a worker id.
pub const DEFAULT_ETCD_LEASE_TTL: Duration = Duration::from_secs(10);

impl EtcdOptions {
    /// Options with leafctl's defaults: 10 s leases, 2 s requests, no auth, no CA file.
    /// `endpoints` is a comma-separated list.
    pub fn new(endpoints: &str, name: &str, identity: Identity) -> EtcdOptions {
        EtcdOptions {
            endpoints: endpoints
                .split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(str::to_string)
                .collect(),
            name: name.to_string(),
            identity,
            user: None,
            password: None,
            ca_file: None,
            lease_ttl: DEFAULT_ETCD_LEASE_TTL,
            request_timeout: Duration::from_secs(2),
            max_clock_skew_ms: DEFAULT_MAX_CLOCK_SKEW_MS,
            scope: Default::default(),
        }
    }

    /// `/leafctl/{name}/`.
    pub fn root(&self) -> String {
        format!("/leafctl/{}/", self.name)
    }

    /// `/leafctl/{name}/leases/`: one key per held worker id, attached to its holder's lease.
    pub fn leases_prefix(&self) -> String {
        format!("{}leases/", self.root())
    }

    /// `/leafctl/{name}/workers/`: one key per worker id ever used, holding `reserved_until`.
    pub fn workers_prefix(&self) -> String {
        format!("{}workers/", self.root())
    }

    /// The endpoints as one string, for messages.
    pub fn endpoints_text(&self) -> String {
        self.endpoints.join(",")
    }
}

/// The URL of an endpoint as given: `host:port` means plain HTTP.
pub(super) fn endpoint_url(raw: &str) -> Result<String, WorkerError> {
    let url = if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(WorkerError::from(EtcdError::Config(format!(
            "endpoint {raw:?} is neither http:// nor https://"
        ))));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_default_to_http_and_refuse_other_schemes() {
        assert_eq!(
            endpoint_url("127.0.0.1:2379").unwrap(),
            "http://127.0.0.1:2379"
        );
        assert_eq!(endpoint_url("https://e:2379").unwrap(), "https://e:2379");
        assert!(matches!(
            endpoint_url("unix:///tmp/etcd.sock")
                .unwrap_err()
                .store::<EtcdError>(),
            Some(EtcdError::Config(_))
        ));
    }

    #[test]
    fn the_password_never_shows_in_debug_output() {
        let mut o = EtcdOptions::new("a:1, b:2", "n", "10.0.0.1:80".parse().unwrap());
        o.password = Some("s3cret-pw".into());
        assert_eq!(o.endpoints, vec!["a:1".to_string(), "b:2".to_string()]);
        let shown = format!("{o:?}");
        assert!(
            !shown.contains("s3cret-pw") && shown.contains("***"),
            "{shown}"
        );
    }
}
