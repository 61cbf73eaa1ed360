//! Leaf's JDBC URLs (`leaf.jdbc.url`) read as leafctl's (`config import-leaf`): what every
//! database's has in common is read here (the host list, the database, the parameters); each
//! database says which JDBC schemes are its own, its default port and which parameters carry
//! over (its `Jdbc`, in its folder).

use super::DATABASES;

/// How one database's JDBC URLs become its leafctl URL.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Jdbc {
    /// The schemes after `jdbc:` that name it (`mysql`, `mariadb`); the first names it in
    /// messages.
    pub schemes: &'static [&'static str],
    /// The port of a host given without one.
    pub port: u16,
    /// Adds to `kept` (leafctl's URL parameters) what a JDBC parameter `key=value` becomes,
    /// if anything.
    pub param: fn(key: &str, value: &str, kept: &mut Vec<String>),
}

/// A JDBC URL as a leafctl URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromJdbc {
    /// The leafctl URL (`scheme://user@host:port[,...]/database[?params]`).
    pub url: String,
    /// The parameters carried over, as the URL writes them (`tls=true`).
    pub kept: Vec<String>,
}

/// Every host of a JDBC URL's list, each with its port (`port` when it names none), joined by
/// commas as leafctl's URLs take them (leafctl fails over along the list too).
fn with_ports(hosts: &str, port: u16) -> Result<String, String> {
    let mut list = Vec::new();
    for host in hosts.split(',') {
        let host = host.trim();
        if host.is_empty() || host.contains('@') {
            return Err("expected a host name after jdbc:...://".into());
        }
        let has_port = host
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok());
        list.push(if has_port {
            host.to_string()
        } else {
            format!("{host}:{port}")
        });
    }
    Ok(list.join(","))
}

/// `jdbc:SCHEME://host[:port][,host...]/database[?params]` of a database of [`DATABASES`]
/// with `user`, as a leafctl URL: each host with its port, the parameters that matter carried
/// over. The error is the reason the URL cannot be read (it never quotes the URL).
pub fn from_jdbc(jdbc: &str, user: Option<&str>) -> Result<FromJdbc, String> {
    let trimmed = jdbc.trim();
    let found = DATABASES.iter().find_map(|d| {
        let j = d.jdbc?;
        j.schemes.iter().find_map(|s| {
            trimmed
                .strip_prefix("jdbc:")
                .and_then(|t| t.strip_prefix(s))
                .and_then(|t| t.strip_prefix("://"))
                .map(|rest| (d.schemes[0], j, rest))
        })
    });
    let Some((scheme, j, rest)) = found else {
        let forms = DATABASES
            .iter()
            .filter_map(|d| d.jdbc)
            .map(|j| format!("jdbc:{}://host:port/database", j.schemes[0]));
        return Err(format!("expected {}", crate::text::or_list(forms)));
    };
    let no_database = || "no database name after the host".to_string();
    let (hosts, path) = rest.split_once('/').ok_or_else(no_database)?;
    let (database, params) = path.split_once('?').unwrap_or((path, ""));
    if database.is_empty() {
        return Err(no_database());
    }
    let host = with_ports(hosts, j.port)?;
    let mut kept: Vec<String> = Vec::new();
    for param in params.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = param.split_once('=').unwrap_or((param, ""));
        (j.param)(k, v, &mut kept);
    }
    kept.dedup();
    let user = match user.map(str::trim).filter(|u| !u.is_empty()) {
        Some(u) => format!("{u}@"),
        None => String::new(),
    };
    let query = if kept.is_empty() {
        String::new()
    } else {
        format!("?{}", kept.join("&"))
    };
    Ok(FromJdbc {
        url: format!("{scheme}://{user}{host}/{database}{query}"),
        kept,
    })
}
