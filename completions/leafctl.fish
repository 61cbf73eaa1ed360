# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_leafctl_global_optspecs
    string join \n config= output= q/quiet v/verbose state-dir= region= regions= name= db= zk= etcd= instance= key-file= h/help V/version
end

function __fish_leafctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_leafctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_leafctl_using_subcommand
    set -l cmd (__fish_leafctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c leafctl -n "__fish_leafctl_needs_command" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_needs_command" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_needs_command" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_needs_command" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_needs_command" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_needs_command" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_needs_command" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_needs_command" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_needs_command" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_needs_command" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_needs_command" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_needs_command" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_needs_command" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_needs_command" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "next" -d 'Issue IDs'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "serve" -d 'Run Leaf\'s HTTP service (drop-in for Leaf\'s clients), with batches, metrics and health checks'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "decode" -d 'Decode IDs (snowflake, UUID v1/v6/v7, ULID, KSUID, ObjectId) into time and worker, guess a layout, find IDs in logs, or turn a time range into an ID range'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "tag" -d 'Manage segment-mode tags (rows of Leaf\'s leaf_alloc table)'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "db" -d 'Set up the segment database (leaf_alloc table)'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "region" -d 'Regions: show a database\'s region, add a region beside a running deployment, check several regions\' databases'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "workers" -d 'List, reclaim and check worker ids in ZooKeeper, MySQL, PostgreSQL or etcd'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "config" -d 'Inspect the effective configuration'
complete -c leafctl -n "__fish_leafctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -s n -l count -d 'How many IDs to issue' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l encode -d 'Print each ID as a compact string with a check character: base36 (0-9a-z) or crockford (Crockford\'s base32); `decode --encode` reads it back' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l seq-start -d 'Where each tick\'s sequence starts: random in [0,100) like Leaf, or zero [env: LEAF_SEQ_START] [default: random]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l max-lead -d 'Let ID times run up to MS ahead of the clock when a millisecond\'s 4,096 sequence numbers are used up, instead of waiting (0-60000; the registry records them first) [env: LEAF_MAX_LEAD_MS] [default: 0]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l registry -d 'Where the worker id comes from: local, forever, lease, mysql, postgres or etcd [env: LEAF_REGISTRY] [default: local with --worker-id, lease with --zk, etcd with --etcd, mysql or postgres with a mysql:// or postgres:// --db alone]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l worker-id -d 'Worker id of this process, unique among live generators (the local registry) [env: LEAF_WORKER_ID]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l preset -d 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]' -r -f -a "leaf\t'Leaf and Twitter: 41 bits of ms since 2010-11-04 | 10 worker | 12 sequence'
discord\t'Discord: 41 bits of ms since 2015-01-01 | 10 worker | 12 sequence'
sonyflake\t'Sonyflake: 39 bits of 10 ms since 2014-09-01 | 8 sequence | 16 machine'
baidu\t'Baidu uid-generator: 28 bits of seconds since 2016-05-20+08:00 | 22 worker | 13 sequence'
instagram\t'Instagram: ms since 2011-08-24T21:07:01.721Z | 13 shard | 10 sequence'
mastodon\t'Mastodon: ms since 1970 | 16 sequence (a hash of table, secret and time plus a counter)'
yitter\t'Yitter IdGenerator\'s default: ms since 2020-02-20+08:00 | 6 worker | 6 sequence'
seata\t'Seata\'s improved snowflake: 10 worker | 41 bits of ms since 2020-05-03+08:00 | 12 sequence'"
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l epoch -d 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l layout -d 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l unit-ms -d 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l snowflake -d 'Issue snowflake IDs (time | worker | sequence) instead of a tag\'s'
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -l no-wait -d 'Fail at once if another process holds this worker id, instead of waiting'
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand next" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l listen -d 'Address `leafctl serve` listens on; port 0 picks a free one (printed at start) [env: LEAF_SERVE_LISTEN] [default: 127.0.0.1:8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l seq-start -d 'Where each tick\'s sequence starts: random in [0,100) like Leaf, or zero [env: LEAF_SEQ_START] [default: random]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l max-lead -d 'Let ID times run up to MS ahead of the clock when a millisecond\'s 4,096 sequence numbers are used up, instead of waiting (0-60000; the registry records them first) [env: LEAF_MAX_LEAD_MS] [default: 0]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l registry -d 'Where the worker id comes from: local, forever, lease, mysql, postgres or etcd [env: LEAF_REGISTRY] [default: local with --worker-id, lease with --zk, etcd with --etcd, mysql or postgres with a mysql:// or postgres:// --db alone]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l worker-id -d 'Worker id of this process, unique among live generators (the local registry) [env: LEAF_WORKER_ID]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l preset -d 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]' -r -f -a "leaf\t'Leaf and Twitter: 41 bits of ms since 2010-11-04 | 10 worker | 12 sequence'
discord\t'Discord: 41 bits of ms since 2015-01-01 | 10 worker | 12 sequence'
sonyflake\t'Sonyflake: 39 bits of 10 ms since 2014-09-01 | 8 sequence | 16 machine'
baidu\t'Baidu uid-generator: 28 bits of seconds since 2016-05-20+08:00 | 22 worker | 13 sequence'
instagram\t'Instagram: ms since 2011-08-24T21:07:01.721Z | 13 shard | 10 sequence'
mastodon\t'Mastodon: ms since 1970 | 16 sequence (a hash of table, secret and time plus a counter)'
yitter\t'Yitter IdGenerator\'s default: ms since 2020-02-20+08:00 | 6 worker | 6 sequence'
seata\t'Seata\'s improved snowflake: 10 worker | 41 bits of ms since 2020-05-03+08:00 | 12 sequence'"
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l epoch -d 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l layout -d 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l unit-ms -d 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l segment -d 'Serve segment mode: IDs of the tags in --db [env: LEAF_SERVE_SEGMENT]'
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -l snowflake -d 'Serve snowflake mode, with a worker id from --worker-id, --zk, --registry mysql, --registry postgres or --etcd [env: LEAF_SERVE_SNOWFLAKE]'
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand serve" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l around -d 'Print the range of IDs the same worker made within --window of this ID\'s time, for WHERE id BETWEEN ... during an incident' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l window -d 'With --around: how far either side of the ID\'s time (500ms, 30s, 10m, 2h, 1d; a bare number is ms) [default: 5m]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l since -d 'With --scan: find IDs made from this time on (now, Unix ms, RFC 3339 or YYYY-MM-DD) [default: ten years ago]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l until -d 'With --scan: find IDs made up to this time (a date: its whole day) [default: a day from now]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l from -d 'Print the ID range from this time (now, Unix ms, RFC 3339 or YYYY-MM-DD)' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l to -d 'End of the range, inclusive (default: now)' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l encode -d 'Read each ID as the compact string `next --encode` prints (base36 or crockford), its check character verified: a mistyped character is an error, not another ID' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l tag -d 'Read the IDs as IDs of this segment tag, with its shape from the table (--db): an opaque tag\'s dense IDs need its key (--key-file)' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l preset -d 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]' -r -f -a "leaf\t'Leaf and Twitter: 41 bits of ms since 2010-11-04 | 10 worker | 12 sequence'
discord\t'Discord: 41 bits of ms since 2015-01-01 | 10 worker | 12 sequence'
sonyflake\t'Sonyflake: 39 bits of 10 ms since 2014-09-01 | 8 sequence | 16 machine'
baidu\t'Baidu uid-generator: 28 bits of seconds since 2016-05-20+08:00 | 22 worker | 13 sequence'
instagram\t'Instagram: ms since 2011-08-24T21:07:01.721Z | 13 shard | 10 sequence'
mastodon\t'Mastodon: ms since 1970 | 16 sequence (a hash of table, secret and time plus a counter)'
yitter\t'Yitter IdGenerator\'s default: ms since 2020-02-20+08:00 | 6 worker | 6 sequence'
seata\t'Seata\'s improved snowflake: 10 worker | 41 bits of ms since 2020-05-03+08:00 | 12 sequence'"
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l epoch -d 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l layout -d 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l unit-ms -d 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l guess -d 'Rank every known layout by how plausible it makes each ID (time after the layout\'s epoch and not in the future, recent, the configured layout, a worker id this host issued with); exit 2 when none is plausible'
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -l scan -d 'Find IDs in any text (logs, JSON lines, CSV) from files or stdin and print each line with their times and workers beside them, or one record per ID with --output tsv|json|ndjson'
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand decode" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -f -a "add" -d 'Add a tag (a row of leaf_alloc)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -f -a "list" -d 'List tags with their max_id, step and last update'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -f -a "show" -d 'Show one tag, with the IDs it has left'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -f -a "set-step" -d 'Change a tag\'s step (the size of the segments servers claim)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -f -a "bump" -d 'Move a tag\'s max_id forward to a value, never down (one statement)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -f -a "remove" -d 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and not __fish_seen_subcommand_from add list show set-step bump remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l step -d 'IDs claimed per segment by servers (1..=2147483647)' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l start -d 'The first ID (the initial max_id), e.g. to continue an existing ID scheme [default: 1, or for a removed tag the max_id it left behind]. Below a removed tag\'s max_id it is refused unless --reuse-removed-ids is given' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l desc -d 'A description' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l opaque -d 'Issue the tag\'s IDs through a keyed permutation that hides their order and count: 7 to 18 (IDs of exactly that many digits) or 63 (any positive 63-bit number). Needs the ID key (--key-file); fixed for good, as the tag\'s shape' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l period -d 'Issue numbers <period><code><sequence>, e.g. 20261206000001 for a day, whose sequence restarts every period (each period\'s row TAG@PERIOD is made on first use)' -r -f -a "day\t'A calendar day: `YYYYMMDD`'
month\t'A calendar month: `YYYYMM`'
year\t'A calendar year: `YYYY`'"
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l width -d 'The sequence\'s digits, zero-padded (with --period); a period whose sequence would pass them is refused, never widened. With --opaque (equal to it, 7 or more) it is permuted' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l time-zone -d 'The time zone periods are counted in (with --period): an IANA name [default: UTC]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l code -d 'A fixed business code of decimal digits between the period and the sequence' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l reuse-removed-ids -d 'Accept a --start below the max_id a removed tag of the same name left behind: the IDs from there up to it were issued before and will be issued again. Only when you know none of them is in use'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -l if-not-exists -d 'Succeed without changing anything when the tag exists'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l prefix -d 'Only tags that start with this text (case-sensitive)' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l match -d 'Only tags matching this glob: * any characters, ? one character, \\ takes the next character as it is (case-sensitive; quote it for the shell)' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from set-step" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l to -d 'The new max_id: the next claim starts here' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from bump" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -l yes -d 'Confirm the removal'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a tag (a row of leaf_alloc)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "list" -d 'List tags with their max_id, step and last update'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show one tag, with the IDs it has left'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "set-step" -d 'Change a tag\'s step (the size of the segments servers claim)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "bump" -d 'Move a tag\'s max_id forward to a value, never down (one statement)'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued'
complete -c leafctl -n "__fish_leafctl_using_subcommand tag; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -f -a "init" -d 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and not __fish_seen_subcommand_from init help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -l print -d 'Print the DDL instead of running it (nothing is connected to)'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from init" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "init" -d 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)'
complete -c leafctl -n "__fish_leafctl_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -f -a "show" -d 'Show the region the database (--db) records, if any'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -f -a "add" -d 'Add a region beside a running deployment: record the old database\'s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region\'s block (safe to run again)'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -f -a "check" -d 'Check several regions\' databases against each other: each records a region, all the same count, no region twice, every tag inside its region\'s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and not __fish_seen_subcommand_from show add check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l from -d 'The running deployment\'s database (any region of it)' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from check" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show the region the database (--db) records, if any'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add a region beside a running deployment: record the old database\'s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region\'s block (safe to run again)'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from help" -f -a "check" -d 'Check several regions\' databases against each other: each records a region, all the same count, no region twice, every tag inside its region\'s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong'
complete -c leafctl -n "__fish_leafctl_using_subcommand region; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -f -a "list" -d 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -f -a "reclaim" -d 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -f -a "doctor" -d 'Check this host\'s clock against ZooKeeper\'s (or etcd\'s holders\') and the live peers\' and print a verdict'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and not __fish_seen_subcommand_from list reclaim doctor help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l mode -d 'Only consider this mode when a worker id exists in both' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l yes -d 'Do it (without --yes only says what would be done)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -l force -d 'Reclaim even a live worker (two generators could then share the id)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from reclaim" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from doctor" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from help" -f -a "list" -d 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from help" -f -a "reclaim" -d 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from help" -f -a "doctor" -d 'Check this host\'s clock against ZooKeeper\'s (or etcd\'s holders\') and the live peers\' and print a verdict'
complete -c leafctl -n "__fish_leafctl_using_subcommand workers; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -f -a "show" -d 'Print every setting\'s effective value and its origin (flag, env, config file, default); secrets are redacted'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -f -a "import-leaf" -d 'Print the leaf.toml equivalent of Leaf\'s leaf.properties (the password is not copied)'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and not __fish_seen_subcommand_from show import-leaf help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l config -d 'Configuration file (TOML) [env: LEAF_CONFIG]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l output -d 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string' -r -f -a "text\t'For people: tables and plain lines (IDs: one per line; decode: a table on a terminal, tab-separated lines otherwise)'
json\t'JSON (an array for rows, streamed); every 64-bit ID is a decimal string'
tsv\t'Tab-separated lines after a header line; only commands that print rows (next, decode, tag list)'
ndjson\t'One JSON value per line (for jq -c); only commands that print rows (next, decode, tag list)'"
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l state-dir -d 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l region -d 'This deployment\'s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l regions -d 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l name -d 'Namespace of worker ids (Leaf\'s leaf.name) [env: LEAF_NAME] [default: leaf]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l db -d 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l zk -d 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l etcd -d 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l instance -d 'This process\'s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]' -r
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -l key-file -d 'File holding the key of opaque tags (64 hex digits); else systemd\'s credential leaf-id-key [env: LEAF_ID_KEY_FILE]' -r -F
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -s q -l quiet -d 'Print only results: no progress, no warnings'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -s v -l verbose -d 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from import-leaf" -s V -l version -d 'Print version'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print every setting\'s effective value and its origin (flag, env, config file, default); secrets are redacted'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "import-leaf" -d 'Print the leaf.toml equivalent of Leaf\'s leaf.properties (the password is not copied)'
complete -c leafctl -n "__fish_leafctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "next" -d 'Issue IDs'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "serve" -d 'Run Leaf\'s HTTP service (drop-in for Leaf\'s clients), with batches, metrics and health checks'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "decode" -d 'Decode IDs (snowflake, UUID v1/v6/v7, ULID, KSUID, ObjectId) into time and worker, guess a layout, find IDs in logs, or turn a time range into an ID range'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "tag" -d 'Manage segment-mode tags (rows of Leaf\'s leaf_alloc table)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "db" -d 'Set up the segment database (leaf_alloc table)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "region" -d 'Regions: show a database\'s region, add a region beside a running deployment, check several regions\' databases'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "workers" -d 'List, reclaim and check worker ids in ZooKeeper, MySQL, PostgreSQL or etcd'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "config" -d 'Inspect the effective configuration'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and not __fish_seen_subcommand_from next serve decode tag db region workers config help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "add" -d 'Add a tag (a row of leaf_alloc)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "list" -d 'List tags with their max_id, step and last update'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "show" -d 'Show one tag, with the IDs it has left'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "set-step" -d 'Change a tag\'s step (the size of the segments servers claim)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "bump" -d 'Move a tag\'s max_id forward to a value, never down (one statement)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from tag" -f -a "remove" -d 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "init" -d 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from region" -f -a "show" -d 'Show the region the database (--db) records, if any'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from region" -f -a "add" -d 'Add a region beside a running deployment: record the old database\'s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region\'s block (safe to run again)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from region" -f -a "check" -d 'Check several regions\' databases against each other: each records a region, all the same count, no region twice, every tag inside its region\'s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from workers" -f -a "list" -d 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from workers" -f -a "reclaim" -d 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from workers" -f -a "doctor" -d 'Check this host\'s clock against ZooKeeper\'s (or etcd\'s holders\') and the live peers\' and print a verdict'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "show" -d 'Print every setting\'s effective value and its origin (flag, env, config file, default); secrets are redacted'
complete -c leafctl -n "__fish_leafctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "import-leaf" -d 'Print the leaf.toml equivalent of Leaf\'s leaf.properties (the password is not copied)'
