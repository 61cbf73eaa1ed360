//! Ranking the layouts a bare number could have, for an ID whose generator is unknown.

use std::path::{Path, PathBuf};

use super::{
    Decoded, FUTURE_SLACK_MS, Format, IdFormatError, NamedLayout, decode_text, looks_numeric,
    parse_number, rfc3339,
};
use crate::snowflake::Preset;

/// A worker id this host issued snowflake IDs with, from a state file
/// (`snowflake-{name}-{worker}.json` in the state directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalWorker {
    /// The name (Leaf's `leaf.name`) the worker id belongs to.
    pub name: String,
    /// The worker id.
    pub worker: u64,
    /// Every ID it issued has a time below this Unix ms.
    pub issued_below_ms: i64,
    /// No ID it issued has a time below this Unix ms (`None`: the state file, of an earlier
    /// version, does not say, and the host is credited with nothing).
    pub issued_from_ms: Option<i64>,
    /// The state file.
    pub path: PathBuf,
}

/// The worker ids this host's state directory has records of. Files that cannot be read are
/// left out: the ranking only gains from them, it does not depend on them.
pub fn local_workers(state_dir: &Path) -> Vec<LocalWorker> {
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let is_state = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("snowflake-") && n.ends_with(".json"));
        if !is_state {
            continue;
        }
        if let Ok(Some(st)) = crate::worker::local::read_state(&path) {
            out.push(LocalWorker {
                name: st.name,
                worker: st.worker_id,
                issued_below_ms: st.issued_below_ms,
                issued_from_ms: st.issued_from_ms,
                path,
            });
        }
    }
    out.sort_by(|a, b| (a.worker, &a.name).cmp(&(b.worker, &b.name)));
    out
}

/// What the ranking knows besides the ID.
#[derive(Debug, Clone)]
pub struct GuessOptions {
    /// Now, Unix ms.
    pub now_ms: i64,
    /// The layout the settings name: leafctl's own IDs have it, so it is the first candidate.
    pub configured: NamedLayout,
    /// False when `configured` is only the built-in default (no flag, variable or config file).
    pub configured_explicitly: bool,
    /// Worker ids this host issued with (see [`local_workers`]).
    pub local: Vec<LocalWorker>,
}

/// One way of reading an ID, with how plausible it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The ID read this way.
    pub decoded: Decoded,
    /// False when the time cannot be right (in the future, or before the format existed).
    pub plausible: bool,
    /// Higher is likelier; only an order, not a probability.
    pub score: i32,
    /// What raised or lowered the score, in order.
    pub reasons: Vec<String>,
}

impl Candidate {
    /// The reasons as one line.
    pub fn reason(&self) -> String {
        self.reasons.join("; ")
    }
}

/// Every way `raw` can be read, most plausible first. A text ID (UUID, ULID, KSUID, ObjectId) has
/// one reading; a number is read under the configured layout and every preset, each judged by
/// its time (after the layout's epoch and not in the future; recent is likelier), by whether it is
/// the configured layout, and by whether this host's state files say its worker id issued IDs
/// then; a time within a day of the layout's epoch scores low, and a number below 2^31 is no
/// snowflake ID at all (see [`implausible`]). Equal
/// scores rank the more recent time first (as the scores say: recent is likelier); only equal
/// times keep the configured layout first, then the presets' order.
pub fn guess(raw: &[u8], opts: &GuessOptions) -> Result<Vec<Candidate>, IdFormatError> {
    let s = raw.trim_ascii();
    if s.is_empty() {
        return Err(IdFormatError::Empty);
    }
    if !looks_numeric(s) {
        let d = decode_text(s)?;
        return Ok(vec![judge(d, None, opts)]);
    }
    let id = parse_number(s)?;
    let mut layouts = vec![opts.configured];
    layouts.extend(
        Preset::ALL
            .into_iter()
            .map(NamedLayout::preset)
            .filter(|l| l.layout != opts.configured.layout),
    );
    let mut out = Vec::with_capacity(layouts.len());
    for l in &layouts {
        out.push(judge(l.decode(id)?, Some(id), opts));
    }
    out.sort_by(|a, b| {
        b.plausible
            .cmp(&a.plausible)
            .then_with(|| b.score.cmp(&a.score))
            .then_with(|| {
                // Among plausible readings of equal score, the more recent one (a reading in
                // the future is implausible, so "more recent" is "closer to now").
                if a.plausible {
                    b.decoded.unix_ms.cmp(&a.decoded.unix_ms)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
    });
    Ok(out)
}

const DAY_MS: i64 = 86_400_000;
const YEAR_MS: i64 = 365 * DAY_MS;

/// Mastodon's first release (2016-03-16): a Mastodon reading before it is some other number.
const MASTODON_SINCE_MS: i64 = 1_458_086_400_000;

/// The recent window: IDs looked up during an incident are mostly this young, so a reading in
/// it outweighs the default layout's when that one lies outside (two years).
pub const RECENT_MS: i64 = 2 * YEAR_MS;

/// Sequences from which Leaf's layout is unlikely to have issued an ID: Leaf starts each
/// millisecond's sequence below 100 and Twitter's snowflake at 0, so reaching them takes dozens
/// (the first) or over 900 IDs (the second) in one millisecond from one worker. Mastodon's 16 low
/// bits are a hash spread over all values, so 97 in 100 Mastodon IDs read this high under Leaf's
/// 12-bit sequence. Discord, Instagram, Baidu and Seata count on across ticks: any value is theirs.
const BUSY_SEQUENCES: [(u64, i32); 2] = [(1024, 10), (BUSY_FROM, 6)];

/// The lower of the two: from here a Leaf reading is doubted (see [`super::decode_value`]).
pub(super) const BUSY_FROM: u64 = 128;

/// Below this, a sequence is what Twitter's and Leaf's generators mostly issue (one of the first
/// IDs of its millisecond): a point for Leaf's layout, which is Twitter's.
const FIRST_OF_TICK: u64 = 16;

/// Numbers below this fit a signed 32-bit integer (an `INT` key, a counter): no 64-bit
/// snowflake ID is this small once its generator has run for a second.
const SMALL_NUMBER: u64 = 1 << 31;

/// Why a reading cannot be right, or `None` when it can: a number below 2^31 read as a
/// snowflake (`number`: the value read, for snowflakes), a time in the future (past a day's
/// slack), before the format existed, or a Mastodon time before Mastodon existed. The one rule
/// `decode` and `decode --guess` share.
pub fn implausible(d: &Decoded, number: Option<u64>, now_ms: i64) -> Option<String> {
    let (earliest, since) = d.format.earliest();
    if let (Format::Snowflake(_), Some(n)) = (d.format, number)
        && n < SMALL_NUMBER
    {
        return Some("a number below 2^31 (a 32-bit counter or key, no snowflake ID)".to_string());
    }
    if d.unix_ms > now_ms.saturating_add(FUTURE_SLACK_MS) {
        return Some("in the future".to_string());
    }
    if let Format::Snowflake(l) = d.format {
        if d.unix_ms < earliest {
            return Some("before the layout's epoch".to_string());
        }
        if l.preset == Some(Preset::Mastodon) && d.unix_ms < MASTODON_SINCE_MS {
            return Some("before Mastodon existed (2016)".to_string());
        }
    } else if d.unix_ms < earliest {
        return Some(format!("before {} IDs existed ({since})", d.format.name()));
    }
    None
}

/// Points for how recent a plausible time is (recent is likelier), and the reason.
fn recency(age_ms: i64) -> (i32, String) {
    let years = age_ms / YEAR_MS;
    let years_ago = if years == 1 {
        "made 1 year ago".to_string()
    } else {
        format!("made {years} years ago")
    };
    match age_ms {
        a if a < 0 => (
            15,
            "a little ahead of now (a clock ahead, or a lead)".to_string(),
        ),
        a if a <= 30 * DAY_MS => (20, "made in the last 30 days".to_string()),
        a if a <= YEAR_MS => (15, "made in the last year".to_string()),
        a if a <= RECENT_MS => (7, years_ago),
        a if a <= 5 * YEAR_MS => (3, years_ago),
        _ => (0, years_ago),
    }
}

fn judge(d: Decoded, number: Option<u64>, opts: &GuessOptions) -> Candidate {
    let mut reasons = Vec::new();
    let mut score = 0;
    let plausible = match implausible(&d, number, opts.now_ms) {
        Some(why) => {
            reasons.push(why);
            false
        }
        None => {
            let (points, what) = recency(opts.now_ms - d.unix_ms);
            score += points;
            reasons.push(what);
            if matches!(d.format, Format::Snowflake(_))
                && d.unix_ms - d.format.earliest().0 < DAY_MS
            {
                // Generators start issuing well after their epoch.
                score -= 15;
                reasons.push("within a day of the layout's epoch".to_string());
            }
            true
        }
    };
    if let Format::Snowflake(l) = d.format {
        if l.layout == opts.configured.layout {
            if opts.configured_explicitly {
                score += 30;
                reasons.push("the configured layout".into());
            } else {
                // Only a default: it settles a tie, but a reading in the recent window outweighs
                // it when this one lies outside.
                score += 5;
                reasons.push("leafctl's default layout".into());
            }
            // Only a time the worker id really issued at on this host earns the credit: the
            // state file bounds them on both sides.
            if let (true, Some(w)) = (plausible, d.worker)
                && let Some(lw) = opts.local.iter().find(|lw| {
                    lw.worker == w
                        && lw.issued_from_ms.is_some_and(|from| d.unix_ms >= from)
                        && d.unix_ms < lw.issued_below_ms + FUTURE_SLACK_MS
                })
            {
                score += 40;
                reasons.push(format!(
                    "{} {w} issued IDs on this host from {} until {} ({})",
                    l.worker_name(),
                    rfc3339(lw.issued_from_ms.unwrap_or(lw.issued_below_ms)),
                    rfc3339(lw.issued_below_ms),
                    lw.path.display()
                ));
            }
        }
        if l.preset == Some(Preset::Yitter) && d.sequence.is_some_and(|s| s < 5) {
            score -= 5;
            reasons.push("sequence below 5, which Yitter reserves".into());
        }
        if l.preset == Some(Preset::Leaf)
            && let Some(s) = d.sequence
            && let Some(&(from, points)) = BUSY_SEQUENCES.iter().find(|(from, _)| s >= *from)
        {
            score -= points;
            reasons.push(format!(
                "sequence {s}: {from} or more IDs in one ms from one worker, though Leaf starts each ms below 100"
            ));
        }
        if l.preset == Some(Preset::Leaf)
            && plausible
            && let Some(s) = d.sequence.filter(|&s| s < FIRST_OF_TICK)
        {
            score += 3;
            reasons.push(format!(
                "sequence {s}: one of its ms's first IDs, as Twitter's and Leaf's generators issue them"
            ));
        }
    }
    Candidate {
        decoded: d,
        plausible,
        score,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(now: i64) -> GuessOptions {
        GuessOptions {
            now_ms: now,
            configured: NamedLayout::preset(Preset::Leaf),
            configured_explicitly: false,
            local: Vec::new(),
        }
    }

    /// Issue 36, item 13: leafctl's default layout no longer outweighs a recent time. A Mastodon
    /// status (ID and created_at from a public Mastodon client's recorded API response) reads
    /// as Mastodon within a year of now and as a Leaf ID from 2011 with a sequence Leaf would
    /// hardly reach (2550): Mastodon ranks first, Leaf below it.
    #[test]
    fn a_recent_reading_outranks_the_default_layout() {
        // 111345072838007286: mastodon.social, created_at 2023-11-03T05:56:19.586Z.
        let created = 1_698_990_979_586;
        let now = created + 200 * DAY_MS;
        let ranked = guess(b"111345072838007286", &opts(now)).unwrap();
        let first = &ranked[0];
        assert_eq!(first.decoded.format.name(), "mastodon", "{ranked:#?}");
        assert!((first.decoded.unix_ms - created).abs() < 5, "{first:?}");
        let leaf = ranked
            .iter()
            .find(|c| c.decoded.format.name() == "leaf")
            .unwrap();
        assert!(leaf.score < first.score, "{leaf:?}");
        assert!(leaf.reason().contains("sequence 2550"), "{}", leaf.reason());
        // Years later, when neither reading is recent, the sequence still tells.
        let ranked = guess(b"111345072838007286", &opts(created + 8 * 365 * DAY_MS)).unwrap();
        assert_eq!(ranked[0].decoded.format.name(), "mastodon", "{ranked:#?}");
    }

    /// The same rule decides for `decode` and `--guess`: a number below 2^31 (145344012, a tweet
    /// ID from 2007, before Twitter's snowflake) and a Mastodon reading before Mastodon existed
    /// are implausible.
    #[test]
    fn implausible_names_why() {
        let now = 1_780_000_000_000;
        let leaf = NamedLayout::preset(Preset::Leaf)
            .decode(145_344_012)
            .unwrap();
        assert!(
            implausible(&leaf, Some(145_344_012), now)
                .unwrap()
                .contains("below 2^31")
        );
        let mastodon = NamedLayout::preset(Preset::Mastodon)
            .decode(1 << 50)
            .unwrap();
        assert!(
            implausible(&mastodon, Some(1 << 50), now)
                .unwrap()
                .contains("before Mastodon")
        );
        let id = 175_928_847_299_117_063;
        let discord = NamedLayout::preset(Preset::Discord).decode(id).unwrap();
        assert_eq!(implausible(&discord, Some(id), now), None);
    }

    #[test]
    fn discords_documented_id_ranks_discord_among_the_plausible() {
        // Discord's API reference: 175928847299117063 is 2016-04-30T11:18:25.796Z.
        let now = 1_780_000_000_000;
        let ranked = guess(b"175928847299117063", &opts(now)).unwrap();
        assert_eq!(ranked.len(), Preset::ALL.len());
        let discord = ranked
            .iter()
            .find(|c| c.decoded.format.name() == "discord")
            .unwrap();
        assert!(discord.plausible);
        assert_eq!(discord.decoded.unix_ms, 1_462_015_105_796);
        // Sonyflake reads it 2048: in the future, so last.
        let last = ranked.last().unwrap();
        assert!(!last.plausible, "{last:?}");
        assert!(last.reason().contains("in the future"), "{}", last.reason());
        // Plausible candidates come first.
        let first_implausible = ranked.iter().position(|c| !c.plausible).unwrap();
        assert!(ranked[first_implausible..].iter().all(|c| !c.plausible));
    }

    #[test]
    fn the_configured_layout_and_local_state_lift_a_candidate() {
        let now = 1_780_000_000_000;
        let discord = NamedLayout::preset(Preset::Discord);
        let id = discord
            .layout
            .encode(discord.layout.ticks_at(now - 3_600_000).unwrap(), 9, 0)
            .unwrap();
        let mut o = opts(now);
        o.configured = discord;
        o.configured_explicitly = true;
        let ranked = guess(id.to_string().as_bytes(), &o).unwrap();
        assert_eq!(ranked[0].decoded.format.name(), "discord");
        assert!(ranked[0].reason().contains("the configured layout"));
        o.local = vec![LocalWorker {
            name: "leaf".into(),
            worker: 9,
            issued_below_ms: now,
            issued_from_ms: Some(now - 7_200_000),
            path: PathBuf::from("snowflake-leaf-9.json"),
        }];
        let ranked = guess(id.to_string().as_bytes(), &o).unwrap();
        assert!(
            ranked[0]
                .reason()
                .contains("worker 9 issued IDs on this host from"),
            "{}",
            ranked[0].reason()
        );
        assert_eq!(ranked[0].score, 20 + 30 + 40);
        // Issue 45 #4: a time before the worker id's first use on this host earns nothing,
        // and nor does a state file that does not say when that was.
        for from in [Some(now - 1_800_000), None] {
            o.local[0].issued_from_ms = from;
            let ranked = guess(id.to_string().as_bytes(), &o).unwrap();
            assert!(!ranked[0].reason().contains("on this host"), "{from:?}");
            assert_eq!(ranked[0].score, 20 + 30, "{from:?}");
        }
    }

    #[test]
    fn small_numbers_fit_no_layout() {
        let ranked = guess(b"12345", &opts(1_780_000_000_000)).unwrap();
        assert!(ranked.iter().all(|c| !c.plausible), "{ranked:?}");
    }

    #[test]
    fn text_ids_have_one_reading() {
        let ranked = guess(
            b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            &opts(1_780_000_000_000),
        )
        .unwrap();
        assert_eq!(ranked.len(), 1);
        assert!(ranked[0].plausible);
        assert!(guess(b"919108f7-52d1-4320-9bac-f847db4148a8", &opts(0)).is_err());
    }

    #[test]
    fn state_files_are_read_and_others_skipped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("snowflake-leaf-7.json"),
            r#"{"name":"leaf","worker_id":7,"issued_below_ms":1700000000000,"clean":true}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("snowflake-leaf-8.json"), "{garbled").unwrap();
        std::fs::write(dir.path().join("other.json"), "{}").unwrap();
        let found = local_workers(dir.path());
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].worker, found[0].issued_below_ms),
            (7, 1_700_000_000_000)
        );
        assert!(local_workers(&dir.path().join("missing")).is_empty());
    }
}
