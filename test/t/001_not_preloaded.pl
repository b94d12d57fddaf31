# Copyright: see LICENSE
#
# 001_not_preloaded.pl
#	A server that does NOT have snowflake in shared_preload_libraries.
#
# CREATE EXTENSION must work (dump/restore, upgrades).  On PostgreSQL 15
# and 16 the functions that need the shared generator must fail with 55000
# and a hint saying what to add; on 17 and later they run without the
# preload (029_no_preload.pl), and here, with no node id configured, the
# generators fail with the node id's 55000 while the stats work.  The
# decoders must honour the layout configured in postgresql.conf, which
# they read from the settings' placeholders since postmaster-context
# settings cannot be defined after startup: on 15 and 16 as it is now (a
# reload applies), on 17 and later as it was when the server's shared
# state was created, at the first call (a restart applies).  An invalid
# configured value must make the decoders fail (22023), never decode with
# some other layout.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::Local qw(timegm);

# A non-default layout and epoch: 41/7/5, the JavaScript-safe split, and an
# epoch with a time zone offset (10:00 UTC).  The snowflake settings live in
# their own file so each step can replace all of them at once (a line that
# disappears reverts to the default).
my %layout = (
	'snowflake.timestamp_bits' => '41',
	'snowflake.node_bits' => '7',
	'snowflake.sequence_bits' => '5',
	'snowflake.epoch' => '2020-06-15 12:00:00+02');
my $node = start_snowflake_node(
	'not_preloaded',
	preload => 0,
	settings => { timezone => 'UTC' },
	include => [ 'snowflake_layout.conf', %layout ]);

# 17 and later: the generator runs without the preload, and the layout is
# fixed for the server's life when first used.
my $dsm = $node->pg_version >= 17;

# Replace the settings and reload (restart on 17 and later, where the layout
# in force is fixed when first used); wait until a new session sees them all.
sub configure
{
	my ($node, %settings) = @_;
	write_conf_file($node, 'snowflake_layout.conf', %settings);
	if ($dsm)
	{
		$node->restart;
	}
	else
	{
		$node->reload;
	}
	my @names = (
		'snowflake.epoch', 'snowflake.timestamp_bits',
		'snowflake.node_bits', 'snowflake.sequence_bits');
	my $query = 'SELECT concat_ws(\'|\', '
	  . join(', ',
		map { "coalesce(current_setting('$_', true), '')" } @names)
	  . ')';
	my $expected = join('|', map { $settings{$_} // '' } @names);
	$node->poll_query_until('postgres', $query, $expected)
	  or die "the reloaded snowflake settings never became visible";
	return;
}

# The ID the layout above gives (ms after the epoch, node, sequence).
my $epoch_ms = timegm(0, 0, 10, 15, 5, 2020) * 1000;
sub expected_id
{
	my ($unix_ms, $node_id, $seq) = @_;
	return (($unix_ms - $epoch_ms) << 12) | ($node_id << 5) | $seq;
}

is($node->psql('postgres', 'CREATE EXTENSION snowflake'),
	0, 'CREATE EXTENSION works without the preload');

is( $node->safe_psql(
		'postgres', q{
SELECT e.extversion = a.default_version
  FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
 WHERE e.extname = 'snowflake'}),
	't',
	'the extension is installed, at the default version');

# ---------------------------------------------------------------------------
# Everything that needs the shared generator: on 15 and 16, 55000 and the
# preload hint; on 17 and later the node id's 55000 (none is configured).
# The checks match sql_error()'s stderr, which carries the SQLSTATE
# ("ERROR:  55000: ...") and the DETAIL and HINT lines.
# ---------------------------------------------------------------------------
my $not_loaded =
  qq{55000: snowflake must be loaded via "shared_preload_libraries"\n}
  . 'HINT:  Add snowflake to "shared_preload_libraries" in postgresql.conf and restart the server.';
my $node_unset =
  qq{55000: parameter "snowflake.node_id" is not set\n}
  . 'HINT:  Set "snowflake.node_id" in postgresql.conf to a value between 0 and 127 that no other server minting IDs uses, and restart the server.';
if (!$dsm)
{
	foreach my $sql (
		'SELECT snowflake_nextval()',
		'SELECT * FROM snowflake_nextval_batch(3)',
		'SELECT * FROM snowflake_stats()',
		'SELECT * FROM snowflake_stats',
		'SELECT snowflake_stats_reset()')
	{
		is(error_report($node, $sql), $not_loaded,
			"$sql: 55000 without the preload, the hint says what to add and to restart");
	}
}
else
{
	foreach my $sql ('SELECT snowflake_nextval()',
		'SELECT * FROM snowflake_nextval_batch(3)')
	{
		is(error_report($node, $sql), $node_unset,
			"$sql: 55000 without a node id, the hint names the setting");
	}
	is( $node->safe_psql(
			'postgres',
			'SELECT status, node_id IS NULL, node_bits, sequence_bits, refused FROM snowflake_stats'
		),
		'node_id not set|t|7|5|2',
		'snowflake_stats works without the preload, with the configured layout');
	is(error_report($node, 'SELECT snowflake_stats_reset()'),
		'none', 'so does snowflake_stats_reset()');
}

# The same from a DEFAULT: nothing is inserted.
$node->safe_psql('postgres',
	'CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int)');
is(error_report($node, 'INSERT INTO t (v) VALUES (1)'),
	$dsm ? $node_unset : $not_loaded,
	'a DEFAULT snowflake_nextval() fails with 55000');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '0',
	'no row was inserted');

# ---------------------------------------------------------------------------
# Decoding with the configured 41/7/5 layout and custom epoch.
# ---------------------------------------------------------------------------
my $when = '2024-05-01 12:00:00.123+00';
my $when_ms = timegm(0, 0, 12, 1, 4, 2024) * 1000 + 123;
my $id = expected_id($when_ms, 100, 31);

is($node->safe_psql('postgres', "SELECT snowflake_compose('$when', 100, 31)"),
	$id, 'snowflake_compose packs with the configured epoch and 41/7/5 layout');

is( $node->safe_psql(
		'postgres',
		"SELECT ts = '$when', node_id, sequence FROM snowflake_decode($id)"),
	't|100|31',
	'snowflake_decode unpacks with the configured layout');

is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_timestamp($id) = '$when', snowflake_node_id($id), snowflake_sequence($id)"
	),
	't|100|31',
	'snowflake_timestamp/node_id/sequence agree with snowflake_decode');

# Round trip over a spread of values, entirely in SQL.
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FILTER (WHERE d.ts = date_trunc('milliseconds', v.ts)
		                          AND d.node_id = v.node AND d.sequence = v.seq)
		FROM (SELECT timestamptz '2021-01-01 00:00:00+00' + g * interval '123456.789 s' AS ts,
		             g % 128 AS node, g % 32 AS seq
		      FROM generate_series(0, 999) g) v,
		     snowflake_decode(snowflake_compose(v.ts, v.node, v.seq)) d}),
	'1000',
	'compose then decode is the identity (1000 values)');

# Without the preload, in a new session the library is loaded while the
# first query is planned (the first call of one of its functions).  That
# query and the next are planned alike, as PostgreSQL plans any C function:
# an index and a partition key written in the decode form serve a query
# written the same way, and a field is computed from the row (nothing
# rewrites it).
$node->safe_psql(
	'postgres', q{
	CREATE TABLE dk (id bigint);
	INSERT INTO dk SELECT snowflake_compose('2024-01-01'::timestamptz + g * interval '1 min', g % 100, g % 32)
	  FROM generate_series(1, 20000) g;
	CREATE INDEX dk_ts ON dk (((snowflake_decode(id)).ts));
	CREATE TABLE dp (id bigint) PARTITION BY RANGE (((snowflake_decode(id)).ts));
	CREATE TABLE dp_jan PARTITION OF dp FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
	CREATE TABLE dp_rest PARTITION OF dp DEFAULT;
	INSERT INTO dp SELECT id FROM dk;
	ANALYZE dk, dp});
my $twice = q{
	EXPLAIN (COSTS OFF) SELECT id FROM dk WHERE (snowflake_decode(id)).ts >= '2024-01-10' AND (snowflake_decode(id)).ts < '2024-01-10 01:00';
	EXPLAIN (COSTS OFF) SELECT count(*) FROM dp WHERE (snowflake_decode(id)).ts >= '2024-02-01';
	EXPLAIN (VERBOSE, COSTS OFF) SELECT (snowflake_decode(id)).node_id FROM dk;
	EXPLAIN (COSTS OFF) SELECT id FROM dk WHERE (snowflake_decode(id)).ts >= '2024-01-10' AND (snowflake_decode(id)).ts < '2024-01-10 01:00';
	EXPLAIN (COSTS OFF) SELECT count(*) FROM dp WHERE (snowflake_decode(id)).ts >= '2024-02-01';
	EXPLAIN (VERBOSE, COSTS OFF) SELECT (snowflake_decode(id)).node_id FROM dk;
	SELECT count(*) FROM dk WHERE (snowflake_decode(id)).node_id = 7};
my $plans = $node->safe_psql('postgres', $twice);
like(
	$plans,
	qr/\A\s*Index Scan using dk_ts on dk\n\s*Index Cond: \(\(\(snowflake_decode\(id\)\)\.ts >= .*\n\s*Index Scan using dk_ts on dk\n\s*Index Cond: \(\(\(snowflake_decode\(id\)\)\.ts >= /s,
	'without the preload the expression index serves the first query of a session and the next (quals keep their fields)');
is(scalar(() = $plans =~ /Seq Scan on dp_rest dp\n/g),
	2, 'and the partition key prunes in both');
is(scalar(() = $plans =~ /Output: \(snowflake_decode\(id\)\)\.node_id\n/g),
	2, 'a field is planned as written, before and after the library is loaded');
like($plans, qr/\n200\z/, 'and the rows are right');

# ID 0 is the configured epoch itself: the custom epoch is honoured.
is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_timestamp(0) = timestamptz '2020-06-15 10:00:00+00'"),
	't',
	'ID 0 decodes to the configured epoch (2020-06-15 12:00:00+02)');

# The field widths: 7 node bits, 5 sequence bits.
is( $node->safe_psql(
		'postgres',
		'SELECT snowflake_node_id(127 << 5), snowflake_sequence(31), '
		  . 'snowflake_node_id(1 << 12), snowflake_timestamp(1 << 12) - snowflake_timestamp(0)'),
	"127|31|0|00:00:00.001",
	'bit 12 is the first timestamp bit (node_bits = 7, sequence_bits = 5)');

is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_min_id('$when') = "
		  . expected_id($when_ms, 0, 0)
		  . ", snowflake_max_id('$when') = "
		  . expected_id($when_ms, 127, 31)),
	't|t',
	'snowflake_min_id and snowflake_max_id use the configured layout');

# Range checks follow the configured widths, not the 10/12 defaults.
is( error_report($node, "SELECT snowflake_compose('$when', 128, 0)"),
	"22003: snowflake ID field out of range\n"
	  . 'DETAIL:  The node id must be between 0 and 127.',
	'node id 128 does not fit 7 node bits');
is( error_report($node, "SELECT snowflake_compose('$when', 0, 32)"),
	"22003: snowflake ID field out of range\n"
	  . 'DETAIL:  The sequence must be between 0 and 31.',
	'sequence 32 does not fit 5 sequence bits');
is( error_report($node,
		"SELECT snowflake_compose('2020-06-15 09:59:59.999+00', 0, 0)"),
	"22003: timestamp out of range for snowflake IDs\n"
	  . 'DETAIL:  Snowflake IDs carry times from 2020-06-15 10:00:00.000+00 to 2090-02-20 01:47:35.551+00.',
	'a time before the configured epoch is out of range');
is( error_report($node, 'SELECT snowflake_decode(-1)'),
	"22023: snowflake ID must not be negative\n"
	  . 'DETAIL:  The value -1 has the sign bit set, which no snowflake ID has.',
	'a negative ID is rejected');

# ---------------------------------------------------------------------------
# Invalid configured values: decoders fail clearly (22023).
# ---------------------------------------------------------------------------
my @decoders = (
	'SELECT snowflake_decode(1)',
	'SELECT snowflake_timestamp(1)',
	'SELECT snowflake_node_id(1)',
	'SELECT snowflake_sequence(1)',
	'SELECT snowflake_min_id(now())',
	'SELECT snowflake_max_id(now())',
	'SELECT snowflake_compose(now(), 0, 0)');

# A node_bits value that is not an integer.
configure($node, %layout, 'snowflake.node_bits' => 'abc');
foreach my $sql (@decoders)
{
	is( error_report($node, $sql),
		qq{22023: invalid value for parameter "snowflake.node_bits": "abc"\n}
		  . 'DETAIL:  The value must be a plain decimal integer.',
		"node_bits = 'abc': $sql fails with 22023 naming the setting");
}

# A combination of widths over 63 bits.
configure(
	$node, %layout,
	'snowflake.timestamp_bits' => '45',
	'snowflake.node_bits' => '10',
	'snowflake.sequence_bits' => '12');
foreach my $sql (@decoders)
{
	is( error_report($node, $sql),
		"22023: invalid snowflake layout\n"
		  . 'DETAIL:  snowflake.timestamp_bits (45) + snowflake.node_bits (10) + snowflake.sequence_bits (12) = 67, but an ID has only 63 bits.',
		"45/10/12: $sql fails with 22023 naming the settings");
}

# An epoch that does not parse.
configure($node, %layout, 'snowflake.epoch' => 'next tuesday');
like(
	error_report($node, 'SELECT snowflake_decode(1)'),
	qr/\A22023: invalid value for parameter "snowflake\.epoch": "next tuesday"\nDETAIL:  [^\n]+\.\z/,
	'an unparsable epoch makes the decoders fail with 22023, with a detail');

# A width out of its own range.
configure($node, %layout, 'snowflake.sequence_bits' => '40');
is( error_report($node, 'SELECT snowflake_decode(1)'),
	"22023: invalid snowflake layout\n"
	  . 'DETAIL:  snowflake.timestamp_bits must be between 32 and 53, snowflake.node_bits between 0 and 31, and snowflake.sequence_bits between 0 and 31.',
	'sequence_bits = 40 makes the decoders fail with 22023, naming the setting');

# Back to no snowflake settings at all: the defaults (41/10/12, 2024-01-01).
configure($node);
is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_timestamp(0) = timestamptz '2024-01-01 00:00:00+00', "
		  . 'snowflake_node_id(1023 << 12), snowflake_node_id(1 << 22)'),
	't|1023|0',
	'with the settings removed the decoders use the default layout and epoch');

# ---------------------------------------------------------------------------
# The decoders only ever use the configured layout.  (How
# each way of writing a width is read is checked by 008_conf_parsing.pl.)
# ---------------------------------------------------------------------------
configure($node, %layout);
$node->safe_psql('postgres', 'CREATE ROLE app LOGIN');
my $app = $node->connstr('postgres') . ' user=app';

{
	# An ordinary user can SET a placeholder.  The decoders are IMMUTABLE
	# (index expressions may use them) and section 4 of the spec says
	# nothing deciding the layout may be changed per session: after the SET
	# they must still decode with 7 node bits, or fail.
	my ($ret, $out, $err) = $node->psql(
		'postgres',
		"SET snowflake.node_bits = 3;\nSELECT snowflake_node_id(127 << 5)",
		connstr => $app);
	isnt($ret, 0, 'a session SET of snowflake.node_bits makes decoding fail')
	  or diag("decoded node id after SET: $out");
	like(
		$err,
		qr/invalid value for parameter "snowflake\.node_bits": "3"\nDETAIL:  The snowflake layout is read from the server configuration only, but this value was set for a database, a role or the session\./,
		'the error says the layout belongs to the server configuration');

	# RESET brings back the configured value.
	is( $node->safe_psql(
			'postgres',
			"SET snowflake.node_bits = 3;\nRESET snowflake.node_bits;\nSELECT snowflake_node_id(127 << 5)",
			connstr => $app),
		'127',
		'after RESET the configured layout decodes again');
}

$node->stop;
done_testing();
