//! Leaf's `leaf.properties`, turned into a leafctl configuration file so that moving a Leaf
//! deployment to `leafctl serve` is one command (`leafctl config import-leaf`).
//!
//! Keys understood: `leaf.name`, `leaf.segment.enable`, `leaf.jdbc.url`, `leaf.jdbc.username`,
//! `leaf.jdbc.password` (never copied), `leaf.snowflake.enable`, `leaf.snowflake.zk.address`,
//! `leaf.snowflake.port`, and the `leaf.snowflake.mode` of NotFound9's fork (`zk`, `mysql`,
//! `local`). Anything else is reported, not guessed at.

use super::ConfigFile;
pub use super::properties::parse_properties;

/// Why a `leaf.properties` file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A value that leafctl cannot translate.
    #[error("{key} = {value:?}: {reason}")]
    BadValue {
        /// The property.
        key: String,
        /// Its value (never a password).
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// The result of an import: the configuration and what the operator must know about it.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The equivalent leafctl configuration.
    pub config: ConfigFile,
    /// Notes: what was not copied (the password), what was ignored, what to check.
    pub notes: Vec<String>,
}

impl Imported {
    /// The configuration as a `leaf.toml`, the notes as comments at its top.
    pub fn to_toml(&self) -> String {
        let mut out =
            String::from("# leaf.toml for leafctl, imported from Leaf's leaf.properties\n");
        for note in &self.notes {
            out.push_str("# NOTE: ");
            // A note can quote a key from the file; a control character (a newline above all)
            // would end the comment and put the rest into the configuration, or make the
            // file invalid TOML. Such characters are written as escapes.
            for c in note.chars() {
                if c.is_control() {
                    out.push_str(&c.escape_unicode().to_string());
                } else {
                    out.push(c);
                }
            }
            out.push('\n');
        }
        out.push('\n');
        // Serialising plain strings, booleans and integers cannot fail.
        out.push_str(&self.config.to_toml());
        out
    }
}

fn parse_bool(key: &str, value: &str) -> Result<bool, ImportError> {
    // Spring's relaxed boolean conversion.
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" | "" => Ok(false),
        _ => Err(ImportError::BadValue {
            key: key.into(),
            value: value.into(),
            reason: "expected true or false".into(),
        }),
    }
}

/// `jdbc:SCHEME://host[:port][,host...]/database[?params]` with a user, as a leafctl URL (the
/// database's own reading, [`crate::db::jdbc`]), plus a note for parameters that matter.
fn db_url(jdbc: &str, user: Option<&str>) -> Result<(String, Vec<String>), ImportError> {
    let converted =
        crate::db::jdbc::from_jdbc(jdbc, user).map_err(|reason| ImportError::BadValue {
            key: "leaf.jdbc.url".into(),
            value: redact_jdbc(jdbc),
            reason,
        })?;
    let mut notes = Vec::new();
    let params = jdbc.trim().split_once('?').map_or("", |(_, p)| p);
    if !params.is_empty() {
        // Names only: a value may be a password (`password=...`).
        let names: Vec<&str> = params
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').map_or(p, |(k, _)| k))
            .collect();
        notes.push(format!(
            "JDBC parameters ({}) were not copied{}",
            names.join(", "),
            if converted.kept.is_empty() {
                String::new()
            } else {
                format!(" except as {}", converted.kept.join("&"))
            }
        ));
    }
    if user.map(str::trim).is_none_or(str::is_empty) {
        notes.push("leaf.jdbc.username is not set: add the user to db.url".into());
    }
    Ok((converted.url, notes))
}

/// A JDBC URL for messages: a password in `//user:password@host` or in a parameter whose name
/// contains "password" (any case) becomes `***`.
fn redact_jdbc(jdbc: &str) -> String {
    let (base, params) = jdbc.split_once('?').unwrap_or((jdbc, ""));
    let mut out = match base.split_once("//") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.split_once('/') {
                Some((a, p)) => (a, Some(p)),
                None => (rest, None),
            };
            let authority = match authority.rsplit_once('@') {
                Some((creds, host)) => match creds.split_once(':') {
                    Some((user, _)) => format!("{user}:***@{host}"),
                    None => authority.to_string(),
                },
                None => authority.to_string(),
            };
            match path {
                Some(path) => format!("{scheme}//{authority}/{path}"),
                None => format!("{scheme}//{authority}"),
            }
        }
        None => base.to_string(),
    };
    if jdbc.contains('?') {
        let masked: Vec<String> = params
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.to_ascii_lowercase().contains("password") => format!("{k}=***"),
                _ => p.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&masked.join("&"));
    }
    out
}

/// Translates the text of a `leaf.properties` file.
pub fn import_leaf_properties(text: &str) -> Result<Imported, ImportError> {
    let props = parse_properties(text);
    let get = |k: &str| props.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
    let mut notes = Vec::new();
    let mut config = ConfigFile::default();

    let enabled = |key: &str| -> Result<bool, ImportError> {
        Ok(get(key)
            .map(|v| parse_bool(key, v))
            .transpose()?
            .unwrap_or(false))
    };
    let segment = enabled("leaf.segment.enable")?;
    let snowflake = enabled("leaf.snowflake.enable")?;
    if !segment && !snowflake {
        notes.push(
            "neither leaf.segment.enable nor leaf.snowflake.enable is true: enable a mode under [serve]"
                .into(),
        );
    }
    if let Some(name) = get("leaf.name") {
        if name.contains('/') || name.chars().any(char::is_whitespace) {
            return Err(ImportError::BadValue {
                key: "leaf.name".into(),
                value: name.into(),
                reason: "a name cannot contain '/' or spaces".into(),
            });
        }
        config.set("snowflake.name", name);
    }
    if let Some(url) = get("leaf.jdbc.url") {
        let (url, url_notes) = db_url(url, get("leaf.jdbc.username"))?;
        config.set("db.url", url);
        notes.extend(url_notes);
    }
    if get("leaf.jdbc.password").is_some() {
        notes.push(
            "leaf.jdbc.password was not copied: give it to leafctl as LEAF_DB_PASSWORD".into(),
        );
    }
    import_registry(&get, snowflake, &mut config, &mut notes)?;
    import_listen(&get, &mut config, &mut notes)?;
    for key in props.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        notes.push(format!("{key} is not a setting leafctl knows; ignored"));
    }
    config.set("serve.segment", segment);
    config.set("serve.snowflake", snowflake);
    Ok(Imported { config, notes })
}

/// The keys of `leaf.properties` the import translates; any other is noted as ignored.
const KNOWN_KEYS: [&str; 10] = [
    "leaf.name",
    "leaf.segment.enable",
    "leaf.jdbc.url",
    "leaf.jdbc.username",
    "leaf.jdbc.password",
    "leaf.snowflake.enable",
    "leaf.snowflake.zk.address",
    "leaf.snowflake.port",
    "leaf.snowflake.mode",
    "server.port",
];

/// A port number of `key`, or the error naming it.
fn port_of(key: &str, value: &str) -> Result<u16, ImportError> {
    value.parse::<u16>().map_err(|_| ImportError::BadValue {
        key: key.into(),
        value: value.into(),
        reason: "expected a port number".into(),
    })
}

/// `leaf.snowflake.mode` and its settings: the registry the worker id comes from.
fn import_registry<'a>(
    get: &dyn Fn(&str) -> Option<&'a str>,
    snowflake: bool,
    config: &mut ConfigFile,
    notes: &mut Vec<String>,
) -> Result<(), ImportError> {
    match get("leaf.snowflake.mode").unwrap_or("zk") {
        "zk" | "zookeeper" => {
            if let Some(address) = get("leaf.snowflake.zk.address") {
                config.set("zk.hosts", address);
                config.set("snowflake.registry", "forever");
            } else if snowflake {
                notes.push(
                    "leaf.snowflake.zk.address is not set: set zk.hosts, or snowflake.worker_id for a fixed worker id"
                        .into(),
                );
            }
        }
        "local" => {
            config.set("snowflake.registry", "local");
            notes.push(
                "leaf.snowflake.mode=local: set snowflake.worker_id on each host to the id leaf.snowflake.local.workIdMap gave it"
                    .into(),
            );
        }
        other => match crate::db::registry_databases().find(|(_, r)| r.leaf_mode == Some(other)) {
            // A mode of NotFound9's fork naming a database's leaf_workerid_alloc.
            Some((_, r)) => config.set("snowflake.registry", r.backend.kind.name()),
            None => {
                let modes = crate::db::registry_databases().filter_map(|(_, r)| r.leaf_mode);
                let modes: Vec<&str> = ["zk"].into_iter().chain(modes).chain(["local"]).collect();
                return Err(ImportError::BadValue {
                    key: "leaf.snowflake.mode".into(),
                    value: other.into(),
                    reason: format!("expected {}", crate::text::or_list(modes)),
                });
            }
        },
    }
    Ok(())
}

/// Where the server listens and the identity it names itself by: `leaf.snowflake.port`, else
/// `server.port`, else Spring Boot's 8080, on every interface as Leaf's server.
fn import_listen<'a>(
    get: &dyn Fn(&str) -> Option<&'a str>,
    config: &mut ConfigFile,
    notes: &mut Vec<String>,
) -> Result<(), ImportError> {
    if let Some(port) = get("leaf.snowflake.port") {
        let port = port_of("leaf.snowflake.port", port)?;
        // Leaf names a worker by this host's IP and this port; ":PORT" keeps that identity.
        config.set("snowflake.instance", format!(":{port}"));
        config.set("serve.listen", format!("0.0.0.0:{port}"));
        notes.push(format!(
            "serve.listen is 0.0.0.0:{port} like Leaf's server; put it behind your usual network policy or use 127.0.0.1"
        ));
        return Ok(());
    }
    // Leaf's server (Spring Boot) listens on all interfaces, on server.port or 8080: its
    // clients are remote, so the import keeps them reaching it.
    let (http_port, from) = match get("server.port") {
        Some(p) => (port_of("server.port", p)?, "server.port"),
        None => (
            8080,
            "Spring Boot's default port; change it if your server.port differs",
        ),
    };
    config.set("serve.listen", format!("0.0.0.0:{http_port}"));
    notes.push(format!(
        "serve.listen is 0.0.0.0:{http_port} like Leaf's server ({from}); put it behind your usual network policy or use 127.0.0.1"
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36, item 1: a segment-only import listens where Leaf's server did (all
    /// interfaces, server.port or 8080), not on loopback, and says so.
    #[test]
    fn segment_only_imports_listen_like_leaf() {
        let text = "leaf.name=com.sankuai.leaf.opensource.test\nleaf.segment.enable=true\n\
            leaf.jdbc.url=jdbc:mysql://db.example:3306/leaf\nleaf.jdbc.username=leaf\n\
            leaf.snowflake.enable=false\n";
        let imported = import_leaf_properties(text).unwrap();
        assert_eq!(
            imported.config.get("serve.listen").and_then(|v| v.as_str()),
            Some("0.0.0.0:8080")
        );
        assert!(
            imported.notes.iter().any(|n| n.contains("0.0.0.0:8080")),
            "{:?}",
            imported.notes
        );
        let with_port = format!("{text}server.port=9090\n");
        let imported = import_leaf_properties(&with_port).unwrap();
        assert_eq!(
            imported.config.get("serve.listen").and_then(|v| v.as_str()),
            Some("0.0.0.0:9090")
        );
        assert!(!imported.notes.iter().any(|n| n.contains("not a setting")));
        let bad = format!("{text}server.port=http\n");
        assert!(matches!(
            import_leaf_properties(&bad),
            Err(ImportError::BadValue { key, .. }) if key == "server.port"
        ));
    }

    #[test]
    fn leafs_sample_with_both_modes() {
        let text = "leaf.name=com.sankuai.leaf.opensource.test\nleaf.segment.enable=true\n\
            leaf.jdbc.url=jdbc:mysql://db.example:3307/leaf?useUnicode=true&characterEncoding=utf8\n\
            leaf.jdbc.username=leafuser\nleaf.jdbc.password=s3cret\n\
            leaf.snowflake.enable=true\nleaf.snowflake.zk.address=zk1:2181,zk2:2181\nleaf.snowflake.port=8081\n";
        let imported = import_leaf_properties(text).unwrap();
        let c = &imported.config;
        assert_eq!(c.get("serve.segment"), Some(&true.into()));
        assert_eq!(c.get("serve.snowflake"), Some(&true.into()));
        assert_eq!(
            c.get("db.url").and_then(|v| v.as_str()),
            Some("mysql://leafuser@db.example:3307/leaf")
        );
        assert_eq!(c.get("db.password"), None);
        assert_eq!(c.get("zk.hosts"), Some(&"zk1:2181,zk2:2181".into()));
        assert_eq!(c.get("snowflake.instance"), Some(&":8081".into()));
        assert_eq!(c.get("snowflake.registry"), Some(&"forever".into()));
        assert_eq!(
            c.get("snowflake.name"),
            Some(&"com.sankuai.leaf.opensource.test".into())
        );
        let toml_text = imported.to_toml();
        assert!(!toml_text.contains("s3cret"), "{toml_text}");
        assert!(toml_text.contains("LEAF_DB_PASSWORD"), "{toml_text}");
        let back: toml::Table = toml::from_str(&toml_text).unwrap();
        assert_eq!(back["db"].get("url"), c.get("db.url"));
        assert_eq!(back["serve"].get("segment"), Some(&true.into()));
    }

    #[test]
    fn jdbc_urls() {
        let (u, _) = db_url("jdbc:mysql://h/db", Some("u")).unwrap();
        assert_eq!(u, "mysql://u@h:3306/db");
        let (u, notes) = db_url("jdbc:mysql://h:1/db?useSSL=true", Some("u")).unwrap();
        assert_eq!(u, "mysql://u@h:1/db?tls=true");
        assert_eq!(notes.len(), 1);
        assert!(db_url("jdbc:oracle:thin:@h:1521/db", None).is_err());
        // pgjdbc's form: the default port, ssl=true as verify-full, targetServerType.
        let (u, notes) = db_url(
            "jdbc:postgresql://p1,p2:5433/leaf?ssl=true&sslrootcert=/etc/ca.pem&targetServerType=primary&password=x",
            Some("leaf"),
        )
        .unwrap();
        assert_eq!(
            u,
            "postgres://leaf@p1:5432,p2:5433/leaf?sslmode=verify-full&sslrootcert=/etc/ca.pem&target_session_attrs=read-write"
        );
        assert!(
            notes[0].contains("password") && !notes[0].contains("=x"),
            "{notes:?}"
        );
        let (u, _) = db_url("jdbc:postgresql://h/db?sslmode=require", Some("u")).unwrap();
        assert_eq!(u, "postgres://u@h:5432/db?sslmode=require");
        assert!(db_url("jdbc:mysql://h", None).is_err());
        assert!(db_url("jdbc:mysql:///db", None).is_err());
        // A host list is kept whole, each host with its port.
        let (u, _) = db_url("jdbc:mysql://h1:3307,h2/db?useSSL=true", Some("u")).unwrap();
        assert_eq!(u, "mysql://u@h1:3307,h2:3306/db?tls=true");
        assert!(db_url("jdbc:mysql://h1,,h2/db", None).is_err());
    }

    #[test]
    fn bad_values_are_named() {
        let e = import_leaf_properties("leaf.segment.enable=maybe\n").unwrap_err();
        assert!(e.to_string().contains("leaf.segment.enable"), "{e}");
        let e = import_leaf_properties("leaf.snowflake.port=http\n").unwrap_err();
        assert!(e.to_string().contains("port"), "{e}");
        let e = import_leaf_properties("leaf.snowflake.mode=redis\n").unwrap_err();
        assert!(e.to_string().contains("zk, mysql or local"), "{e}");
    }

    #[test]
    fn a_password_in_the_jdbc_url_is_never_repeated() {
        let text = "leaf.segment.enable=true\nleaf.jdbc.username=u\n\
            leaf.jdbc.url=jdbc:mysql://h:3306/leaf?user=u&password=s3cretpw&useSSL=true\n";
        let i = import_leaf_properties(text).unwrap();
        let all = format!("{}{:?}", i.to_toml(), i.notes);
        assert!(!all.contains("s3cretpw"), "{all}");
        assert!(
            all.contains("password"),
            "the note names the parameter: {all}"
        );
        for bad in [
            "leaf.jdbc.url=jdbc:mysql://u:s3cretpw@h/leaf\n",
            "leaf.jdbc.url=jdbc:oracle:thin:@h/leaf?PassWord=s3cretpw\n",
        ] {
            let e = import_leaf_properties(bad).unwrap_err().to_string();
            assert!(
                e.contains("leaf.jdbc.url") && !e.contains("s3cretpw"),
                "{e}"
            );
        }
        assert_eq!(
            redact_jdbc("jdbc:mysql://u:p@h:1/db?a=1&password=x"),
            "jdbc:mysql://u:***@h:1/db?a=1&password=***"
        );
        assert_eq!(redact_jdbc("jdbc:mysql://h"), "jdbc:mysql://h");
        // Imported, the password parameter is named in a note and left out.
        let i =
            import_leaf_properties("leaf.jdbc.url=jdbc:postgresql://h/leaf?PassWord=s3cretpw\n")
                .unwrap();
        let all = format!("{}{:?}", i.to_toml(), i.notes);
        assert!(
            !all.contains("s3cretpw") && all.contains("PassWord"),
            "{all}"
        );
    }

    #[test]
    fn a_key_with_a_newline_cannot_inject_configuration() {
        let i = import_leaf_properties(
            "leaf.segment.enable=true\nx\\nstate_dir\\=\"/tmp/evil\"\\ \\#=1\n",
        )
        .unwrap();
        let out = i.to_toml();
        let c: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(c.get("state_dir"), None, "{out}");
        assert!(out.contains("x\\u{a}state_dir"), "{out}");
    }

    #[test]
    fn unknown_keys_become_notes() {
        let i = import_leaf_properties("leaf.segment.enable=true\nleaf.foo=1\n").unwrap();
        assert!(i.notes.iter().any(|n| n.contains("leaf.foo")));
    }
}

/// Parser fuzzing (issue 8): arbitrary `leaf.properties` text never panics, what is written reads
/// back, an import's output is a valid config file, and the password is never copied.
/// `PROPTEST_CASES=100000 cargo test --release --lib fuzz_` for a long run.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    /// One line of a leaf.properties file, plausible or not.
    fn line() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec![
            "leaf.name",
            "leaf.segment.enable",
            "leaf.snowflake.enable",
            "leaf.jdbc.url",
            "leaf.jdbc.username",
            "leaf.snowflake.zk.address",
            "leaf.snowflake.port",
            "leaf.snowflake.mode",
            "leaf.other",
        ]);
        let value = prop_oneof![
            Just("true".to_string()),
            Just("jdbc:mysql://h:3306/leaf?useSSL=true".to_string()),
            "[a-z0-9:/.?=&,]{0,30}",
            "[0-9]{1,6}",
            ".{0,20}",
        ];
        prop_oneof![
            (key, "[ =:]{1,3}", value).prop_map(|(k, sep, v)| format!("{k}{sep}{v}")),
            ".{0,40}",
        ]
    }

    proptest! {
        #[test]
        fn fuzz_arbitrary_text_never_panics(text in any::<String>()) {
            let _ = parse_properties(&text);
            if let Ok(i) = import_leaf_properties(&text) {
                let out = i.to_toml();
                prop_assert!(toml::from_str::<toml::Table>(&out).is_ok(), "{}", out);
            }
        }


        #[test]
        fn fuzz_imports_are_valid_configs_without_the_password(
            lines in proptest::collection::vec(line(), 0..10),
            password in "[A-Z][A-Za-z0-9]{9,15}",
        ) {
            prop_assume!(!lines.iter().any(|l| l.contains(&password)));
            // First, so that no continuation line (a trailing `\`) joins it to another key.
            let text = format!("leaf.jdbc.password={password}\n{}", lines.join("\n"));
            match import_leaf_properties(&text) {
                Ok(i) => {
                    let out = i.to_toml();
                    prop_assert!(!out.contains(&password), "{}", out);
                    let notes = i.notes.join("\n");
                    prop_assert!(!notes.contains(&password), "{}", notes);
                    let back: toml::Table = toml::from_str(&out).unwrap();
                    let url = back.get("db").and_then(|db| db.get("url"));
                    prop_assert_eq!(url, i.config.get("db.url"));
                    prop_assert!(!out.contains("password ="), "{}", out);
                }
                Err(e) => prop_assert!(!e.to_string().contains(&password), "{}", e),
            }
        }
    }
}
