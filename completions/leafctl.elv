
use builtin;
use str;

set edit:completion:arg-completer[leafctl] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'leafctl'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'leafctl'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand next 'Issue IDs'
            cand serve 'Run Leaf''s HTTP service (drop-in for Leaf''s clients), with batches, metrics and health checks'
            cand decode 'Decode IDs (snowflake, UUID v1/v6/v7, ULID, KSUID, ObjectId) into time and worker, guess a layout, find IDs in logs, or turn a time range into an ID range'
            cand tag 'Manage segment-mode tags (rows of Leaf''s leaf_alloc table)'
            cand db 'Set up the segment database (leaf_alloc table)'
            cand region 'Regions: show a database''s region, add a region beside a running deployment, check several regions'' databases'
            cand workers 'List, reclaim and check worker ids in ZooKeeper, MySQL, PostgreSQL or etcd'
            cand config 'Inspect the effective configuration'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;next'= {
            cand -n 'How many IDs to issue'
            cand --count 'How many IDs to issue'
            cand --encode 'Print each ID as a compact string with a check character: base36 (0-9a-z) or crockford (Crockford''s base32); `decode --encode` reads it back'
            cand --seq-start 'Where each tick''s sequence starts: random in [0,100) like Leaf, or zero [env: LEAF_SEQ_START] [default: random]'
            cand --max-lead 'Let ID times run up to MS ahead of the clock when a millisecond''s 4,096 sequence numbers are used up, instead of waiting (0-60000; the registry records them first) [env: LEAF_MAX_LEAD_MS] [default: 0]'
            cand --registry 'Where the worker id comes from: local, forever, lease, mysql, postgres or etcd [env: LEAF_REGISTRY] [default: local with --worker-id, lease with --zk, etcd with --etcd, mysql or postgres with a mysql:// or postgres:// --db alone]'
            cand --worker-id 'Worker id of this process, unique among live generators (the local registry) [env: LEAF_WORKER_ID]'
            cand --preset 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]'
            cand --epoch 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]'
            cand --layout 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]'
            cand --unit-ms 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]'
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand --snowflake 'Issue snowflake IDs (time | worker | sequence) instead of a tag''s'
            cand --no-wait 'Fail at once if another process holds this worker id, instead of waiting'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;serve'= {
            cand --listen 'Address `leafctl serve` listens on; port 0 picks a free one (printed at start) [env: LEAF_SERVE_LISTEN] [default: 127.0.0.1:8080]'
            cand --seq-start 'Where each tick''s sequence starts: random in [0,100) like Leaf, or zero [env: LEAF_SEQ_START] [default: random]'
            cand --max-lead 'Let ID times run up to MS ahead of the clock when a millisecond''s 4,096 sequence numbers are used up, instead of waiting (0-60000; the registry records them first) [env: LEAF_MAX_LEAD_MS] [default: 0]'
            cand --registry 'Where the worker id comes from: local, forever, lease, mysql, postgres or etcd [env: LEAF_REGISTRY] [default: local with --worker-id, lease with --zk, etcd with --etcd, mysql or postgres with a mysql:// or postgres:// --db alone]'
            cand --worker-id 'Worker id of this process, unique among live generators (the local registry) [env: LEAF_WORKER_ID]'
            cand --preset 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]'
            cand --epoch 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]'
            cand --layout 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]'
            cand --unit-ms 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]'
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand --segment 'Serve segment mode: IDs of the tags in --db [env: LEAF_SERVE_SEGMENT]'
            cand --snowflake 'Serve snowflake mode, with a worker id from --worker-id, --zk, --registry mysql, --registry postgres or --etcd [env: LEAF_SERVE_SNOWFLAKE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;decode'= {
            cand --around 'Print the range of IDs the same worker made within --window of this ID''s time, for WHERE id BETWEEN ... during an incident'
            cand --window 'With --around: how far either side of the ID''s time (500ms, 30s, 10m, 2h, 1d; a bare number is ms) [default: 5m]'
            cand --since 'With --scan: find IDs made from this time on (now, Unix ms, RFC 3339 or YYYY-MM-DD) [default: ten years ago]'
            cand --until 'With --scan: find IDs made up to this time (a date: its whole day) [default: a day from now]'
            cand --from 'Print the ID range from this time (now, Unix ms, RFC 3339 or YYYY-MM-DD)'
            cand --to 'End of the range, inclusive (default: now)'
            cand --encode 'Read each ID as the compact string `next --encode` prints (base36 or crockford), its check character verified: a mistyped character is an error, not another ID'
            cand --tag 'Read the IDs as IDs of this segment tag, with its shape from the table (--db): an opaque tag''s dense IDs need its key (--key-file)'
            cand --preset 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]'
            cand --epoch 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]'
            cand --layout 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]'
            cand --unit-ms 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]'
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand --guess 'Rank every known layout by how plausible it makes each ID (time after the layout''s epoch and not in the future, recent, the configured layout, a worker id this host issued with); exit 2 when none is plausible'
            cand --scan 'Find IDs in any text (logs, JSON lines, CSV) from files or stdin and print each line with their times and workers beside them, or one record per ID with --output tsv|json|ndjson'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;tag'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand add 'Add a tag (a row of leaf_alloc)'
            cand list 'List tags with their max_id, step and last update'
            cand show 'Show one tag, with the IDs it has left'
            cand set-step 'Change a tag''s step (the size of the segments servers claim)'
            cand bump 'Move a tag''s max_id forward to a value, never down (one statement)'
            cand remove 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;tag;add'= {
            cand --step 'IDs claimed per segment by servers (1..=2147483647)'
            cand --start 'The first ID (the initial max_id), e.g. to continue an existing ID scheme [default: 1, or for a removed tag the max_id it left behind]. Below a removed tag''s max_id it is refused unless --reuse-removed-ids is given'
            cand --desc 'A description'
            cand --opaque 'Issue the tag''s IDs through a keyed permutation that hides their order and count: 7 to 18 (IDs of exactly that many digits) or 63 (any positive 63-bit number). Needs the ID key (--key-file); fixed for good, as the tag''s shape'
            cand --period 'Issue numbers <period><code><sequence>, e.g. 20261206000001 for a day, whose sequence restarts every period (each period''s row TAG@PERIOD is made on first use)'
            cand --width 'The sequence''s digits, zero-padded (with --period); a period whose sequence would pass them is refused, never widened. With --opaque (equal to it, 7 or more) it is permuted'
            cand --time-zone 'The time zone periods are counted in (with --period): an IANA name [default: UTC]'
            cand --code 'A fixed business code of decimal digits between the period and the sequence'
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand --reuse-removed-ids 'Accept a --start below the max_id a removed tag of the same name left behind: the IDs from there up to it were issued before and will be issued again. Only when you know none of them is in use'
            cand --if-not-exists 'Succeed without changing anything when the tag exists'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;tag;list'= {
            cand --prefix 'Only tags that start with this text (case-sensitive)'
            cand --match 'Only tags matching this glob: * any characters, ? one character, \ takes the next character as it is (case-sensitive; quote it for the shell)'
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;tag;show'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;tag;set-step'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;tag;bump'= {
            cand --to 'The new max_id: the next claim starts here'
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;tag;remove'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand --yes 'Confirm the removal'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;tag;help'= {
            cand add 'Add a tag (a row of leaf_alloc)'
            cand list 'List tags with their max_id, step and last update'
            cand show 'Show one tag, with the IDs it has left'
            cand set-step 'Change a tag''s step (the size of the segments servers claim)'
            cand bump 'Move a tag''s max_id forward to a value, never down (one statement)'
            cand remove 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;tag;help;add'= {
        }
        &'leafctl;tag;help;list'= {
        }
        &'leafctl;tag;help;show'= {
        }
        &'leafctl;tag;help;set-step'= {
        }
        &'leafctl;tag;help;bump'= {
        }
        &'leafctl;tag;help;remove'= {
        }
        &'leafctl;tag;help;help'= {
        }
        &'leafctl;db'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand init 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;db;init'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand --print 'Print the DDL instead of running it (nothing is connected to)'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;db;help'= {
            cand init 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;db;help;init'= {
        }
        &'leafctl;db;help;help'= {
        }
        &'leafctl;region'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand show 'Show the region the database (--db) records, if any'
            cand add 'Add a region beside a running deployment: record the old database''s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region''s block (safe to run again)'
            cand check 'Check several regions'' databases against each other: each records a region, all the same count, no region twice, every tag inside its region''s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;region;show'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;region;add'= {
            cand --from 'The running deployment''s database (any region of it)'
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;region;check'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;region;help'= {
            cand show 'Show the region the database (--db) records, if any'
            cand add 'Add a region beside a running deployment: record the old database''s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region''s block (safe to run again)'
            cand check 'Check several regions'' databases against each other: each records a region, all the same count, no region twice, every tag inside its region''s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;region;help;show'= {
        }
        &'leafctl;region;help;add'= {
        }
        &'leafctl;region;help;check'= {
        }
        &'leafctl;region;help;help'= {
        }
        &'leafctl;workers'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand list 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)'
            cand reclaim 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted'
            cand doctor 'Check this host''s clock against ZooKeeper''s (or etcd''s holders'') and the live peers'' and print a verdict'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;workers;list'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;workers;reclaim'= {
            cand --mode 'Only consider this mode when a worker id exists in both'
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand --yes 'Do it (without --yes only says what would be done)'
            cand --force 'Reclaim even a live worker (two generators could then share the id)'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;workers;doctor'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;workers;help'= {
            cand list 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)'
            cand reclaim 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted'
            cand doctor 'Check this host''s clock against ZooKeeper''s (or etcd''s holders'') and the live peers'' and print a verdict'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;workers;help;list'= {
        }
        &'leafctl;workers;help;reclaim'= {
        }
        &'leafctl;workers;help;doctor'= {
        }
        &'leafctl;workers;help;help'= {
        }
        &'leafctl;config'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand show 'Print every setting''s effective value and its origin (flag, env, config file, default); secrets are redacted'
            cand import-leaf 'Print the leaf.toml equivalent of Leaf''s leaf.properties (the password is not copied)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;config;show'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;config;import-leaf'= {
            cand --config 'Configuration file (TOML) [env: LEAF_CONFIG]'
            cand --output 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string'
            cand --state-dir 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]'
            cand --region 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]'
            cand --regions 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]'
            cand --name 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]'
            cand --db 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]'
            cand --zk 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]'
            cand --etcd 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]'
            cand --instance 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]'
            cand --key-file 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]'
            cand -q 'Print only results: no progress, no warnings'
            cand --quiet 'Print only results: no progress, no warnings'
            cand -v 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand --verbose 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'leafctl;config;help'= {
            cand show 'Print every setting''s effective value and its origin (flag, env, config file, default); secrets are redacted'
            cand import-leaf 'Print the leaf.toml equivalent of Leaf''s leaf.properties (the password is not copied)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;config;help;show'= {
        }
        &'leafctl;config;help;import-leaf'= {
        }
        &'leafctl;config;help;help'= {
        }
        &'leafctl;help'= {
            cand next 'Issue IDs'
            cand serve 'Run Leaf''s HTTP service (drop-in for Leaf''s clients), with batches, metrics and health checks'
            cand decode 'Decode IDs (snowflake, UUID v1/v6/v7, ULID, KSUID, ObjectId) into time and worker, guess a layout, find IDs in logs, or turn a time range into an ID range'
            cand tag 'Manage segment-mode tags (rows of Leaf''s leaf_alloc table)'
            cand db 'Set up the segment database (leaf_alloc table)'
            cand region 'Regions: show a database''s region, add a region beside a running deployment, check several regions'' databases'
            cand workers 'List, reclaim and check worker ids in ZooKeeper, MySQL, PostgreSQL or etcd'
            cand config 'Inspect the effective configuration'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'leafctl;help;next'= {
        }
        &'leafctl;help;serve'= {
        }
        &'leafctl;help;decode'= {
        }
        &'leafctl;help;tag'= {
            cand add 'Add a tag (a row of leaf_alloc)'
            cand list 'List tags with their max_id, step and last update'
            cand show 'Show one tag, with the IDs it has left'
            cand set-step 'Change a tag''s step (the size of the segments servers claim)'
            cand bump 'Move a tag''s max_id forward to a value, never down (one statement)'
            cand remove 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued'
        }
        &'leafctl;help;tag;add'= {
        }
        &'leafctl;help;tag;list'= {
        }
        &'leafctl;help;tag;show'= {
        }
        &'leafctl;help;tag;set-step'= {
        }
        &'leafctl;help;tag;bump'= {
        }
        &'leafctl;help;tag;remove'= {
        }
        &'leafctl;help;db'= {
            cand init 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)'
        }
        &'leafctl;help;db;init'= {
        }
        &'leafctl;help;region'= {
            cand show 'Show the region the database (--db) records, if any'
            cand add 'Add a region beside a running deployment: record the old database''s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region''s block (safe to run again)'
            cand check 'Check several regions'' databases against each other: each records a region, all the same count, no region twice, every tag inside its region''s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong'
        }
        &'leafctl;help;region;show'= {
        }
        &'leafctl;help;region;add'= {
        }
        &'leafctl;help;region;check'= {
        }
        &'leafctl;help;workers'= {
            cand list 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)'
            cand reclaim 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted'
            cand doctor 'Check this host''s clock against ZooKeeper''s (or etcd''s holders'') and the live peers'' and print a verdict'
        }
        &'leafctl;help;workers;list'= {
        }
        &'leafctl;help;workers;reclaim'= {
        }
        &'leafctl;help;workers;doctor'= {
        }
        &'leafctl;help;config'= {
            cand show 'Print every setting''s effective value and its origin (flag, env, config file, default); secrets are redacted'
            cand import-leaf 'Print the leaf.toml equivalent of Leaf''s leaf.properties (the password is not copied)'
        }
        &'leafctl;help;config;show'= {
        }
        &'leafctl;help;config;import-leaf'= {
        }
        &'leafctl;help;help'= {
        }
    ]
    $completions[$command]
}
