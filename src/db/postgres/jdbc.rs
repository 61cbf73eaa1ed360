//! Leaf's `jdbc:postgresql://` URLs (pgjdbc's, `config import-leaf`).

use crate::db::jdbc::Jdbc;

/// pgjdbc's URLs.
pub(crate) const JDBC: Jdbc = Jdbc {
    schemes: &["postgresql"],
    port: 5432,
    param,
};

/// pgjdbc's TLS and host-choice parameters in libpq's words; nothing else carries over.
fn param(key: &str, value: &str, kept: &mut Vec<String>) {
    match key {
        // pgjdbc: ssl=true alone checks the certificate and the host name.
        "ssl" if value.eq_ignore_ascii_case("true") => kept.push("sslmode=verify-full".into()),
        "sslmode" => {
            kept.retain(|k| !k.starts_with("sslmode="));
            kept.push(format!("sslmode={value}"));
        }
        "sslrootcert" => kept.push(format!("sslrootcert={value}")),
        "targetServerType" => kept.push(
            if value.eq_ignore_ascii_case("any") {
                "target_session_attrs=any"
            } else {
                "target_session_attrs=read-write"
            }
            .into(),
        ),
        _ => {}
    }
}
