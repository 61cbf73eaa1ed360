
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'leafctl' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'leafctl'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'leafctl' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('next', 'next', [CompletionResultType]::ParameterValue, 'Issue IDs')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run Leaf''s HTTP service (drop-in for Leaf''s clients), with batches, metrics and health checks')
            [CompletionResult]::new('decode', 'decode', [CompletionResultType]::ParameterValue, 'Decode IDs (snowflake, UUID v1/v6/v7, ULID, KSUID, ObjectId) into time and worker, guess a layout, find IDs in logs, or turn a time range into an ID range')
            [CompletionResult]::new('tag', 'tag', [CompletionResultType]::ParameterValue, 'Manage segment-mode tags (rows of Leaf''s leaf_alloc table)')
            [CompletionResult]::new('db', 'db', [CompletionResultType]::ParameterValue, 'Set up the segment database (leaf_alloc table)')
            [CompletionResult]::new('region', 'region', [CompletionResultType]::ParameterValue, 'Regions: show a database''s region, add a region beside a running deployment, check several regions'' databases')
            [CompletionResult]::new('workers', 'workers', [CompletionResultType]::ParameterValue, 'List, reclaim and check worker ids in ZooKeeper, MySQL, PostgreSQL or etcd')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Inspect the effective configuration')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;next' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'How many IDs to issue')
            [CompletionResult]::new('--count', '--count', [CompletionResultType]::ParameterName, 'How many IDs to issue')
            [CompletionResult]::new('--encode', '--encode', [CompletionResultType]::ParameterName, 'Print each ID as a compact string with a check character: base36 (0-9a-z) or crockford (Crockford''s base32); `decode --encode` reads it back')
            [CompletionResult]::new('--seq-start', '--seq-start', [CompletionResultType]::ParameterName, 'Where each tick''s sequence starts: random in [0,100) like Leaf, or zero [env: LEAF_SEQ_START] [default: random]')
            [CompletionResult]::new('--max-lead', '--max-lead', [CompletionResultType]::ParameterName, 'Let ID times run up to MS ahead of the clock when a millisecond''s 4,096 sequence numbers are used up, instead of waiting (0-60000; the registry records them first) [env: LEAF_MAX_LEAD_MS] [default: 0]')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'Where the worker id comes from: local, forever, lease, mysql, postgres or etcd [env: LEAF_REGISTRY] [default: local with --worker-id, lease with --zk, etcd with --etcd, mysql or postgres with a mysql:// or postgres:// --db alone]')
            [CompletionResult]::new('--worker-id', '--worker-id', [CompletionResultType]::ParameterName, 'Worker id of this process, unique among live generators (the local registry) [env: LEAF_WORKER_ID]')
            [CompletionResult]::new('--preset', '--preset', [CompletionResultType]::ParameterName, 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]')
            [CompletionResult]::new('--epoch', '--epoch', [CompletionResultType]::ParameterName, 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]')
            [CompletionResult]::new('--unit-ms', '--unit-ms', [CompletionResultType]::ParameterName, 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('--snowflake', '--snowflake', [CompletionResultType]::ParameterName, 'Issue snowflake IDs (time | worker | sequence) instead of a tag''s')
            [CompletionResult]::new('--no-wait', '--no-wait', [CompletionResultType]::ParameterName, 'Fail at once if another process holds this worker id, instead of waiting')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;serve' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address `leafctl serve` listens on; port 0 picks a free one (printed at start) [env: LEAF_SERVE_LISTEN] [default: 127.0.0.1:8080]')
            [CompletionResult]::new('--seq-start', '--seq-start', [CompletionResultType]::ParameterName, 'Where each tick''s sequence starts: random in [0,100) like Leaf, or zero [env: LEAF_SEQ_START] [default: random]')
            [CompletionResult]::new('--max-lead', '--max-lead', [CompletionResultType]::ParameterName, 'Let ID times run up to MS ahead of the clock when a millisecond''s 4,096 sequence numbers are used up, instead of waiting (0-60000; the registry records them first) [env: LEAF_MAX_LEAD_MS] [default: 0]')
            [CompletionResult]::new('--registry', '--registry', [CompletionResultType]::ParameterName, 'Where the worker id comes from: local, forever, lease, mysql, postgres or etcd [env: LEAF_REGISTRY] [default: local with --worker-id, lease with --zk, etcd with --etcd, mysql or postgres with a mysql:// or postgres:// --db alone]')
            [CompletionResult]::new('--worker-id', '--worker-id', [CompletionResultType]::ParameterName, 'Worker id of this process, unique among live generators (the local registry) [env: LEAF_WORKER_ID]')
            [CompletionResult]::new('--preset', '--preset', [CompletionResultType]::ParameterName, 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]')
            [CompletionResult]::new('--epoch', '--epoch', [CompletionResultType]::ParameterName, 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]')
            [CompletionResult]::new('--unit-ms', '--unit-ms', [CompletionResultType]::ParameterName, 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('--segment', '--segment', [CompletionResultType]::ParameterName, 'Serve segment mode: IDs of the tags in --db [env: LEAF_SERVE_SEGMENT]')
            [CompletionResult]::new('--snowflake', '--snowflake', [CompletionResultType]::ParameterName, 'Serve snowflake mode, with a worker id from --worker-id, --zk, --registry mysql, --registry postgres or --etcd [env: LEAF_SERVE_SNOWFLAKE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;decode' {
            [CompletionResult]::new('--around', '--around', [CompletionResultType]::ParameterName, 'Print the range of IDs the same worker made within --window of this ID''s time, for WHERE id BETWEEN ... during an incident')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'With --around: how far either side of the ID''s time (500ms, 30s, 10m, 2h, 1d; a bare number is ms) [default: 5m]')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'With --scan: find IDs made from this time on (now, Unix ms, RFC 3339 or YYYY-MM-DD) [default: ten years ago]')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'With --scan: find IDs made up to this time (a date: its whole day) [default: a day from now]')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Print the ID range from this time (now, Unix ms, RFC 3339 or YYYY-MM-DD)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'End of the range, inclusive (default: now)')
            [CompletionResult]::new('--encode', '--encode', [CompletionResultType]::ParameterName, 'Read each ID as the compact string `next --encode` prints (base36 or crockford), its check character verified: a mistyped character is an error, not another ID')
            [CompletionResult]::new('--tag', '--tag', [CompletionResultType]::ParameterName, 'Read the IDs as IDs of this segment tag, with its shape from the table (--db): an opaque tag''s dense IDs need its key (--key-file)')
            [CompletionResult]::new('--preset', '--preset', [CompletionResultType]::ParameterName, 'Named snowflake layout (leaf, discord, sonyflake, baidu, ...) [env: LEAF_PRESET] [default: leaf]')
            [CompletionResult]::new('--epoch', '--epoch', [CompletionResultType]::ParameterName, 'Custom layout: epoch as Unix ms or RFC 3339 [env: LEAF_EPOCH]')
            [CompletionResult]::new('--layout', '--layout', [CompletionResultType]::ParameterName, 'Custom layout: bit widths TIME,WORKER,SEQ adding up to 63 (config show: the layout in use) [env: LEAF_LAYOUT] [default: leaf]')
            [CompletionResult]::new('--unit-ms', '--unit-ms', [CompletionResultType]::ParameterName, 'Custom layout: length of one time unit in ms [env: LEAF_UNIT_MS]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('--guess', '--guess', [CompletionResultType]::ParameterName, 'Rank every known layout by how plausible it makes each ID (time after the layout''s epoch and not in the future, recent, the configured layout, a worker id this host issued with); exit 2 when none is plausible')
            [CompletionResult]::new('--scan', '--scan', [CompletionResultType]::ParameterName, 'Find IDs in any text (logs, JSON lines, CSV) from files or stdin and print each line with their times and workers beside them, or one record per ID with --output tsv|json|ndjson')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;tag' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a tag (a row of leaf_alloc)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List tags with their max_id, step and last update')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show one tag, with the IDs it has left')
            [CompletionResult]::new('set-step', 'set-step', [CompletionResultType]::ParameterValue, 'Change a tag''s step (the size of the segments servers claim)')
            [CompletionResult]::new('bump', 'bump', [CompletionResultType]::ParameterValue, 'Move a tag''s max_id forward to a value, never down (one statement)')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;tag;add' {
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'IDs claimed per segment by servers (1..=2147483647)')
            [CompletionResult]::new('--start', '--start', [CompletionResultType]::ParameterName, 'The first ID (the initial max_id), e.g. to continue an existing ID scheme [default: 1, or for a removed tag the max_id it left behind]. Below a removed tag''s max_id it is refused unless --reuse-removed-ids is given')
            [CompletionResult]::new('--desc', '--desc', [CompletionResultType]::ParameterName, 'A description')
            [CompletionResult]::new('--opaque', '--opaque', [CompletionResultType]::ParameterName, 'Issue the tag''s IDs through a keyed permutation that hides their order and count: 7 to 18 (IDs of exactly that many digits) or 63 (any positive 63-bit number). Needs the ID key (--key-file); fixed for good, as the tag''s shape')
            [CompletionResult]::new('--period', '--period', [CompletionResultType]::ParameterName, 'Issue numbers <period><code><sequence>, e.g. 20261206000001 for a day, whose sequence restarts every period (each period''s row TAG@PERIOD is made on first use)')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'The sequence''s digits, zero-padded (with --period); a period whose sequence would pass them is refused, never widened. With --opaque (equal to it, 7 or more) it is permuted')
            [CompletionResult]::new('--time-zone', '--time-zone', [CompletionResultType]::ParameterName, 'The time zone periods are counted in (with --period): an IANA name [default: UTC]')
            [CompletionResult]::new('--code', '--code', [CompletionResultType]::ParameterName, 'A fixed business code of decimal digits between the period and the sequence')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('--reuse-removed-ids', '--reuse-removed-ids', [CompletionResultType]::ParameterName, 'Accept a --start below the max_id a removed tag of the same name left behind: the IDs from there up to it were issued before and will be issued again. Only when you know none of them is in use')
            [CompletionResult]::new('--if-not-exists', '--if-not-exists', [CompletionResultType]::ParameterName, 'Succeed without changing anything when the tag exists')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;tag;list' {
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Only tags that start with this text (case-sensitive)')
            [CompletionResult]::new('--match', '--match', [CompletionResultType]::ParameterName, 'Only tags matching this glob: * any characters, ? one character, \ takes the next character as it is (case-sensitive; quote it for the shell)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;tag;show' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;tag;set-step' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;tag;bump' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The new max_id: the next claim starts here')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;tag;remove' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Confirm the removal')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;tag;help' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a tag (a row of leaf_alloc)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List tags with their max_id, step and last update')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show one tag, with the IDs it has left')
            [CompletionResult]::new('set-step', 'set-step', [CompletionResultType]::ParameterValue, 'Change a tag''s step (the size of the segments servers claim)')
            [CompletionResult]::new('bump', 'bump', [CompletionResultType]::ParameterValue, 'Move a tag''s max_id forward to a value, never down (one statement)')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;tag;help;add' {
            break
        }
        'leafctl;tag;help;list' {
            break
        }
        'leafctl;tag;help;show' {
            break
        }
        'leafctl;tag;help;set-step' {
            break
        }
        'leafctl;tag;help;bump' {
            break
        }
        'leafctl;tag;help;remove' {
            break
        }
        'leafctl;tag;help;help' {
            break
        }
        'leafctl;db' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;db;init' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('--print', '--print', [CompletionResultType]::ParameterName, 'Print the DDL instead of running it (nothing is connected to)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;db;help' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;db;help;init' {
            break
        }
        'leafctl;db;help;help' {
            break
        }
        'leafctl;region' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the region the database (--db) records, if any')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a region beside a running deployment: record the old database''s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region''s block (safe to run again)')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check several regions'' databases against each other: each records a region, all the same count, no region twice, every tag inside its region''s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;region;show' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;region;add' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'The running deployment''s database (any region of it)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;region;check' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;region;help' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the region the database (--db) records, if any')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a region beside a running deployment: record the old database''s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region''s block (safe to run again)')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check several regions'' databases against each other: each records a region, all the same count, no region twice, every tag inside its region''s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;region;help;show' {
            break
        }
        'leafctl;region;help;add' {
            break
        }
        'leafctl;region;help;check' {
            break
        }
        'leafctl;region;help;help' {
            break
        }
        'leafctl;workers' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)')
            [CompletionResult]::new('reclaim', 'reclaim', [CompletionResultType]::ParameterValue, 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check this host''s clock against ZooKeeper''s (or etcd''s holders'') and the live peers'' and print a verdict')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;workers;list' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;workers;reclaim' {
            [CompletionResult]::new('--mode', '--mode', [CompletionResultType]::ParameterName, 'Only consider this mode when a worker id exists in both')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do it (without --yes only says what would be done)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Reclaim even a live worker (two generators could then share the id)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;workers;doctor' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;workers;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)')
            [CompletionResult]::new('reclaim', 'reclaim', [CompletionResultType]::ParameterValue, 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check this host''s clock against ZooKeeper''s (or etcd''s holders'') and the live peers'' and print a verdict')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;workers;help;list' {
            break
        }
        'leafctl;workers;help;reclaim' {
            break
        }
        'leafctl;workers;help;doctor' {
            break
        }
        'leafctl;workers;help;help' {
            break
        }
        'leafctl;config' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print every setting''s effective value and its origin (flag, env, config file, default); secrets are redacted')
            [CompletionResult]::new('import-leaf', 'import-leaf', [CompletionResultType]::ParameterValue, 'Print the leaf.toml equivalent of Leaf''s leaf.properties (the password is not copied)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;config;show' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;config;import-leaf' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file (TOML) [env: LEAF_CONFIG]')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format: text, json; tsv and ndjson for commands that print rows (next, decode, tag list). In JSON every 64-bit ID is a decimal string')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'Directory for lock and state files [env: LEAF_STATE_DIR] [default: $XDG_STATE_HOME/leafctl]')
            [CompletionResult]::new('--region', '--region', [CompletionResultType]::ParameterName, 'This deployment''s region, 0 to N-1 (with --regions N): its worker ids and segment IDs are its own, recorded in its stores [env: LEAF_REGION]')
            [CompletionResult]::new('--regions', '--regions', [CompletionResultType]::ParameterName, 'How many regions the deployment has (2 to 8, the same in every region; with --region) [env: LEAF_REGIONS]')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Namespace of worker ids (Leaf''s leaf.name) [env: LEAF_NAME] [default: leaf]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'Segment database: mysql://user@host:port/database, postgres://user@host:port/database or sqlite://PATH; the password comes from LEAF_DB_PASSWORD or db.password [env: LEAF_DB] [default: sqlite://$XDG_DATA_HOME/leafctl/leaf.db]')
            [CompletionResult]::new('--zk', '--zk', [CompletionResultType]::ParameterName, 'ZooKeeper worker registry, host:port[,host:port...]; digest auth from LEAF_ZK_AUTH or zk.auth [env: LEAF_ZK]')
            [CompletionResult]::new('--etcd', '--etcd', [CompletionResultType]::ParameterName, 'etcd worker registry, http(s)://host:port[,...] (host:port is plain HTTP); user from etcd.user or LEAF_ETCD_USER, password from LEAF_ETCD_PASSWORD, CA for https from etcd.ca_file or LEAF_ETCD_CA_FILE [env: LEAF_ETCD]')
            [CompletionResult]::new('--instance', '--instance', [CompletionResultType]::ParameterName, 'This process''s identity in the worker-id registry, whichever it is [env: LEAF_INSTANCE] [default: first non-loopback IPv4, port 8080]')
            [CompletionResult]::new('--key-file', '--key-file', [CompletionResultType]::ParameterName, 'File holding the key of opaque tags (64 hex digits); else systemd''s credential leaf-id-key [env: LEAF_ID_KEY_FILE]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print only results: no progress, no warnings')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log what leafctl does to stderr (-v info, -vv debug, -vvv trace)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'leafctl;config;help' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print every setting''s effective value and its origin (flag, env, config file, default); secrets are redacted')
            [CompletionResult]::new('import-leaf', 'import-leaf', [CompletionResultType]::ParameterValue, 'Print the leaf.toml equivalent of Leaf''s leaf.properties (the password is not copied)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;config;help;show' {
            break
        }
        'leafctl;config;help;import-leaf' {
            break
        }
        'leafctl;config;help;help' {
            break
        }
        'leafctl;help' {
            [CompletionResult]::new('next', 'next', [CompletionResultType]::ParameterValue, 'Issue IDs')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run Leaf''s HTTP service (drop-in for Leaf''s clients), with batches, metrics and health checks')
            [CompletionResult]::new('decode', 'decode', [CompletionResultType]::ParameterValue, 'Decode IDs (snowflake, UUID v1/v6/v7, ULID, KSUID, ObjectId) into time and worker, guess a layout, find IDs in logs, or turn a time range into an ID range')
            [CompletionResult]::new('tag', 'tag', [CompletionResultType]::ParameterValue, 'Manage segment-mode tags (rows of Leaf''s leaf_alloc table)')
            [CompletionResult]::new('db', 'db', [CompletionResultType]::ParameterValue, 'Set up the segment database (leaf_alloc table)')
            [CompletionResult]::new('region', 'region', [CompletionResultType]::ParameterValue, 'Regions: show a database''s region, add a region beside a running deployment, check several regions'' databases')
            [CompletionResult]::new('workers', 'workers', [CompletionResultType]::ParameterValue, 'List, reclaim and check worker ids in ZooKeeper, MySQL, PostgreSQL or etcd')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Inspect the effective configuration')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'leafctl;help;next' {
            break
        }
        'leafctl;help;serve' {
            break
        }
        'leafctl;help;decode' {
            break
        }
        'leafctl;help;tag' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a tag (a row of leaf_alloc)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List tags with their max_id, step and last update')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show one tag, with the IDs it has left')
            [CompletionResult]::new('set-step', 'set-step', [CompletionResultType]::ParameterValue, 'Change a tag''s step (the size of the segments servers claim)')
            [CompletionResult]::new('bump', 'bump', [CompletionResultType]::ParameterValue, 'Move a tag''s max_id forward to a value, never down (one statement)')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a tag; its final max_id stays behind (table leaf_alloc_removed), so adding the tag again continues above every ID it issued')
            break
        }
        'leafctl;help;tag;add' {
            break
        }
        'leafctl;help;tag;list' {
            break
        }
        'leafctl;help;tag;show' {
            break
        }
        'leafctl;help;tag;set-step' {
            break
        }
        'leafctl;help;tag;bump' {
            break
        }
        'leafctl;help;tag;remove' {
            break
        }
        'leafctl;help;db' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Create the leaf_alloc table, and leaf_alloc_removed for removed tags, when missing (safe to run again)')
            break
        }
        'leafctl;help;db;init' {
            break
        }
        'leafctl;help;region' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Show the region the database (--db) records, if any')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a region beside a running deployment: record the old database''s region (region 0 when it has none), record --region in the new database (--db), create its tables and add every old tag there at the start of the new region''s block (safe to run again)')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check several regions'' databases against each other: each records a region, all the same count, no region twice, every tag inside its region''s block; a tag some regions lack is a note. Exit 0 when all is well, 1 when something is wrong')
            break
        }
        'leafctl;help;region;show' {
            break
        }
        'leafctl;help;region;add' {
            break
        }
        'leafctl;help;region;check' {
            break
        }
        'leafctl;help;workers' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Table of worker ids: identity, mode, last report, status (live / stale / clock-ahead)')
            [CompletionResult]::new('reclaim', 'reclaim', [CompletionResultType]::ParameterValue, 'Free a worker id: a lease becomes free (keeping its reserved_until), a database row is marked given back for the next new identity (keeping its max_timestamp), a forever node is deleted')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check this host''s clock against ZooKeeper''s (or etcd''s holders'') and the live peers'' and print a verdict')
            break
        }
        'leafctl;help;workers;list' {
            break
        }
        'leafctl;help;workers;reclaim' {
            break
        }
        'leafctl;help;workers;doctor' {
            break
        }
        'leafctl;help;config' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print every setting''s effective value and its origin (flag, env, config file, default); secrets are redacted')
            [CompletionResult]::new('import-leaf', 'import-leaf', [CompletionResultType]::ParameterValue, 'Print the leaf.toml equivalent of Leaf''s leaf.properties (the password is not copied)')
            break
        }
        'leafctl;help;config;show' {
            break
        }
        'leafctl;help;config;import-leaf' {
            break
        }
        'leafctl;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
