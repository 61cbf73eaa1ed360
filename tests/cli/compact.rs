//! Issue 48, item 4: IDs as compact strings for people who copy them. `next --encode` prints
//! base36 or Crockford base32 with a check character; `decode --encode` reads them back, and a
//! mistyped character is an error (exit 2), never another ID. Under `--output json` each is a
//! JSON string.

use crate::support::{self, Sandbox, stderr};
use leafctl::idformat::compact::Encoding;

/// The IDs `decode --encode` reads from `strings`, as `--output json` gives them.
fn decoded(sb: &Sandbox, encoding: &str, strings: &[String]) -> Vec<u64> {
    let mut args = vec!["decode", "--encode", encoding, "--output", "json"];
    args.extend(strings.iter().map(String::as_str));
    let v = support::json(&sb.run(args));
    v.as_array()
        .expect("an array")
        .iter()
        .map(|row| row["id"].as_str().expect("id").parse().expect("a number"))
        .collect()
}

#[test]
fn next_encodes_and_decode_reads_back_every_id() {
    let sb = Sandbox::new();
    for encoding in ["base36", "crockford"] {
        let e: Encoding = encoding.parse().unwrap();
        let out = sb.run_ok([
            "next",
            "--snowflake",
            "--worker-id",
            "7",
            "-n",
            "200",
            "--encode",
            encoding,
        ]);
        let strings: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(strings.len(), 200, "{encoding}");
        let ids = decoded(&sb, encoding, &strings);
        assert_eq!(ids.len(), 200);
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "{encoding}: not ascending"
        );
        for (s, id) in strings.iter().zip(&ids) {
            assert_eq!(e.decode(s), Ok(*id), "{encoding}: {s}");
            assert!(s.len() <= 14, "{s}");
        }
        // Segment IDs too, on the embedded default (read back here: `decode` reads times, and
        // a tag's first IDs hold none).
        sb.run_ok(["tag", "add", &format!("t_{encoding}")]);
        let out = sb.run_ok([
            "next",
            &format!("t_{encoding}"),
            "-n",
            "5",
            "--encode",
            encoding,
        ]);
        let strings: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let ids: Vec<u64> = strings.iter().map(|s| e.decode(s).unwrap()).collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    }
}

#[test]
fn json_holds_strings_and_a_typo_is_an_error() {
    let sb = Sandbox::new();
    for format in ["json", "ndjson"] {
        let out = sb.run_ok([
            "next",
            "--snowflake",
            "--worker-id",
            "1",
            "-n",
            "3",
            "--encode",
            "crockford",
            "--output",
            format,
        ]);
        let text = String::from_utf8(out.stdout).unwrap();
        let values: Vec<serde_json::Value> = if format == "json" {
            serde_json::from_str::<Vec<serde_json::Value>>(&text).unwrap()
        } else {
            text.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        assert_eq!(values.len(), 3, "{format}: {text}");
        assert!(values.iter().all(|v| v.as_str().is_some_and(|s| {
            s.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        })));
    }
    // One character changed: caught by the check character, exit 2, named.
    let out = sb.run_ok([
        "next",
        "--snowflake",
        "--worker-id",
        "1",
        "--encode",
        "crockford",
    ]);
    let good = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let mut typo: Vec<char> = good.chars().collect();
    typo[3] = if typo[3] == '7' { '8' } else { '7' };
    let typo: String = typo.into_iter().collect();
    let out = sb.run(["decode", "--encode", "crockford", &typo]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fails its check") || err.contains("not a crockford digit"),
        "{err}"
    );
    assert!(out.stdout.is_empty() || !String::from_utf8_lossy(&out.stdout).contains(&good));
    // People's spelling: lowercase, O for 0, hyphens.
    let spelled = good.to_lowercase().replace('0', "o");
    let (a, b) = spelled.split_at(4);
    assert_eq!(
        decoded(&sb, "crockford", &[format!("{a}-{b}")]),
        decoded(&sb, "crockford", std::slice::from_ref(&good))
    );
    // An unknown encoding is a usage error naming the two.
    let out = sb.run([
        "next",
        "--snowflake",
        "--worker-id",
        "1",
        "--encode",
        "base64",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("base36"), "{}", stderr(&out));
}
