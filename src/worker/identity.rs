//! Who this process is to a registry: Leaf's `ip:port`.

use std::net::Ipv4Addr;

use super::WorkerError;

/// The `ip:port` a worker registers under (Leaf's listen address).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The IP address, as text.
    pub ip: String,
    /// The port, as text (Leaf stores it as a string).
    pub port: String,
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.ip, self.port)
    }
}

impl std::str::FromStr for Identity {
    type Err = WorkerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || WorkerError::InvalidIdentity(s.to_string());
        let (ip, port) = s.rsplit_once(':').ok_or_else(bad)?;
        let ip = ip.trim_start_matches('[').trim_end_matches(']');
        if ip.is_empty() || ip.contains(['/', '-']) || port.parse::<u16>().is_err() {
            return Err(bad());
        }
        Ok(Identity {
            ip: ip.to_string(),
            port: port.to_string(),
        })
    }
}

impl Identity {
    /// The identity an `--instance` setting names: `IP:PORT`, `:PORT` for this host's address
    /// with that port, or (no setting) this host's first non-loopback IPv4 and `default_port`.
    pub fn from_setting(
        instance: Option<&crate::resolved::Resolved<String>>,
        default_port: u16,
    ) -> Result<Identity, WorkerError> {
        let Some(i) = instance else {
            return Identity::local(default_port);
        };
        let bad = |e: &dyn std::fmt::Display| {
            WorkerError::setting(
                format!("{e} (from {})", i.origin),
                "give the instance as IP:PORT, e.g. --instance 10.0.0.5:8080, or :PORT for this host's address",
            )
        };
        match i.value.strip_prefix(':') {
            Some(port) => {
                let port = port.parse::<u16>().map_err(|_| {
                    bad(&format!(
                        "invalid instance {:?}: expected IP:PORT or :PORT",
                        i.value
                    ))
                })?;
                Identity::local(port)
            }
            None => i.value.parse::<Identity>().map_err(|e| bad(&e)),
        }
    }

    /// This host's first non-loopback IPv4 address with `port`, as Leaf picks it.
    pub fn local(port: u16) -> Result<Identity, WorkerError> {
        let ip = first_non_loopback_ipv4().ok_or(WorkerError::NoAddress)?;
        Ok(Identity {
            ip: ip.to_string(),
            port: port.to_string(),
        })
    }
}

/// The first IPv4 address of an interface that is up and not loopback.
pub fn first_non_loopback_ipv4() -> Option<Ipv4Addr> {
    let mut found = None;
    // SAFETY: getifaddrs fills a linked list that we only read and then free exactly once.
    unsafe {
        let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut head) != 0 {
            return None;
        }
        let mut cur = head;
        while !cur.is_null() {
            let ifa = &*cur;
            let up = ifa.ifa_flags & (libc::IFF_UP as libc::c_uint) != 0;
            let loopback = ifa.ifa_flags & (libc::IFF_LOOPBACK as libc::c_uint) != 0;
            if up
                && !loopback
                && !ifa.ifa_addr.is_null()
                && i32::from((*ifa.ifa_addr).sa_family) == libc::AF_INET
            {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                if !ip.is_loopback() {
                    found = Some(ip);
                    break;
                }
            }
            cur = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_parse() {
        let i: Identity = "10.0.0.5:8080".parse().unwrap();
        assert_eq!(i.to_string(), "10.0.0.5:8080");
        assert!("10.0.0.5".parse::<Identity>().is_err());
        assert!("10.0.0.5:http".parse::<Identity>().is_err());
        assert!(":80".parse::<Identity>().is_err());
    }
}
