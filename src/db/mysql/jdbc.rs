//! Leaf's `jdbc:mysql://` and `jdbc:mariadb://` URLs (`config import-leaf`).

use crate::db::jdbc::Jdbc;

/// MySQL's JDBC URLs: Connector/J's and MariaDB Connector/J's.
pub(crate) const JDBC: Jdbc = Jdbc {
    schemes: &["mysql", "mariadb"],
    port: 3306,
    param,
};

/// Connector/J's TLS parameters as `tls=true`; nothing else carries over.
fn param(key: &str, value: &str, kept: &mut Vec<String>) {
    let on = value.eq_ignore_ascii_case("true");
    match key {
        "useSSL" | "requireSSL" if on => kept.push("tls=true".into()),
        "sslMode" | "sslmode"
            if !value.eq_ignore_ascii_case("disabled")
                && !value.eq_ignore_ascii_case("preferred") =>
        {
            kept.push("tls=true".into())
        }
        _ => {}
    }
}
