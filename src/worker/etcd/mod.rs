//! etcd worker ids: a connection ([`session`]), leases under the fenced-lease protocol
//! ([`lease`]), and the admin view behind `leafctl workers --etcd` ([`admin`]).

pub(crate) mod admin;
pub(crate) mod lease;
pub(crate) mod session;
