# Copyright: see LICENSE
#
# 004_js_safe_layout.pl
#	The JavaScript-safe layout, 41/7/5: every ID below 2^53.
#
# 41 + 7 + 5 = 53 bits, so every ID is an integer a JavaScript number holds
# exactly.  Only 32 IDs fit in a millisecond, so a burst borrows future
# milliseconds and then waits for the clock; the IDs must stay unique,
# increasing, below 2^53, carry the node id, and never lead the clock by
# more than snowflake.max_drift_ms.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $two_53 = '9007199254740992';
my $node_id = 99;

my $node = start_snowflake_node(
	'js_safe',
	node_id => $node_id,
	layout => '41/7/5',
	settings => { timezone => 'UTC', 'snowflake.max_drift_ms' => 1000 });
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

is( $node->safe_psql(
		'postgres',
		'SELECT status, node_id, timestamp_bits, node_bits, sequence_bits FROM snowflake_stats'),
	"ready|$node_id|41|7|5",
	'the generator runs with layout 41/7/5');

# ---------------------------------------------------------------------------
# The layout's largest ID is 2^53 - 1.
# ---------------------------------------------------------------------------
is( $node->safe_psql(
		'postgres', q{
		SELECT snowflake_compose(timestamptz '2024-01-01 00:00:00+00'
		                         + interval '1 ms' * (2 ^ 41 - 1), 127, 31)}),
	'9007199254740991',
	'the last millisecond, node 127 and sequence 31 compose to 2^53 - 1');

is( error_report(
		$node, q{
	SELECT snowflake_compose(timestamptz '2024-01-01 00:00:00+00'
	                         + interval '1 ms' * 2 ^ 41, 0, 0)}),
	"22003: timestamp out of range for snowflake IDs\n"
	  . 'DETAIL:  Snowflake IDs carry times from 2024-01-01 00:00:00.000+00 to 2093-09-06 15:47:35.551+00.',
	'one millisecond later cannot be composed');

# ---------------------------------------------------------------------------
# Single calls, one statement each: strictly increasing, below 2^53.
# ---------------------------------------------------------------------------
my @ids;
push @ids, $node->safe_psql('postgres', 'SELECT snowflake_nextval()')
  foreach 1 .. 20;
my @bad = grep { !($ids[$_] > $ids[ $_ - 1 ]) } 1 .. $#ids;
is(scalar @bad, 0, '20 IDs from 20 sessions are strictly increasing');
ok(!(grep { !($_ > 0 && $_ < $two_53) } @ids), 'all are between 0 and 2^53');
is( $node->safe_psql(
		'postgres',
		'SELECT DISTINCT snowflake_node_id(id) FROM unnest(ARRAY['
		  . join(',', @ids) . ']) id'),
	$node_id,
	"all decode to node id $node_id");

# ---------------------------------------------------------------------------
# A burst of 200000 IDs in one statement: 6250 ms worth of sequence numbers
# at 32 per millisecond, so the generator borrows up to max_drift_ms ahead
# and then waits for the clock.
#
# Each row reads the clock before (c0) and after (c1) its ID.  The generator
# reads the clock in between, so for every ID:
#	ts(id) >= c0 truncated to the millisecond    (never behind the clock)
#	ts(id) <= c1 + max_drift_ms                  (bounded lead)
# (Were the target list not evaluated left to right, these checks could
# fail spuriously, but never pass over a real violation.)  OFFSET 0 keeps
# the clock reads in the same projection as the ID; g numbers the rows in
# the order their IDs were made.
# ---------------------------------------------------------------------------
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
my $burst = $node->safe_psql(
	'postgres', qq{
	SET work_mem = '64MB';
	SET jit = off;
	WITH w AS (
		SELECT *, lag(id) OVER (ORDER BY g) AS prev
		FROM (SELECT g, clock_timestamp() AS c0, snowflake_nextval() AS id,
		             clock_timestamp() AS c1
		      FROM generate_series(1, 200000) g
		      OFFSET 0) b
	)
	SELECT count(*),
	       count(DISTINCT id),
	       count(*) FILTER (WHERE id <= prev),
	       count(*) FILTER (WHERE id < 0 OR id >= $two_53),
	       count(*) FILTER (WHERE snowflake_node_id(id) <> $node_id),
	       count(*) FILTER (WHERE snowflake_sequence(id) NOT BETWEEN 0 AND 31),
	       count(*) FILTER (WHERE snowflake_timestamp(id) < date_trunc('milliseconds', c0)),
	       count(*) FILTER (WHERE snowflake_timestamp(id) > c1 + interval '1000 ms'),
	       max(snowflake_timestamp(id) - c1)
	FROM w});
my @r = split /\|/, $burst;
is($r[0], 200000, 'burst: 200000 rows');
is($r[1], 200000, 'burst: all IDs distinct');
is($r[2], 0, 'burst: IDs strictly increase in the order they were made');
is($r[3], 0, 'burst: every ID is between 0 and 2^53');
is($r[4], 0, "burst: every ID carries node id $node_id");
is($r[5], 0, 'burst: every sequence number fits 5 bits');
is($r[6], 0, 'burst: no ID is behind the clock read before it');
is($r[7], 0, 'burst: no ID leads the clock read after it by more than 1000 ms');
note("burst: largest lead over the clock read after the ID: $r[8]");

is( $node->safe_psql(
		'postgres',
		'SELECT ids_issued, lead_ms <= 1000, refused FROM snowflake_stats'),
	'200000|t|0',
	'stats: 200000 issued, lead within max_drift_ms, none refused');
# 200000 IDs need 6250 ms of timestamps, of which at most 1000 can be
# borrowed: calls had to sleep for the clock unless minting took over 5 s.
note('after the burst: '
	  . $node->safe_psql('postgres',
		"SELECT format('borrowed_ms %s, waits %s, wait_ms %s', borrowed_ms, waits, wait_ms) FROM snowflake_stats"
	  ));

# ---------------------------------------------------------------------------
# A batch: one reservation, consecutive IDs, all below 2^53.
# ---------------------------------------------------------------------------
# The generator's packed value is (ms << 5) | sequence: a batch is a run of
# consecutive packed values.
is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*), count(DISTINCT id),
		       max((id >> 12) * 32 + (id & 31)) - min((id >> 12) * 32 + (id & 31)),
		       bool_and(id < $two_53), bool_and(snowflake_node_id(id) = $node_id)
		FROM snowflake_nextval_batch(30000) id}),
	'30000|30000|29999|t|t',
	'a batch of 30000 IDs is one run of consecutive sequence numbers, below 2^53');

# 30000 IDs at 32 per millisecond span 938 ms: the batch certainly borrowed.
is( $node->safe_psql(
		'postgres',
		'SELECT ids_issued, borrowed_ms >= 937, lead_ms <= 1000 FROM snowflake_stats'),
	'230000|t|t',
	'stats: the batch borrowed at least 937 ms, the lead stays within max_drift_ms');

$node->stop;
done_testing();
