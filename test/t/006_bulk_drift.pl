# Copyright: see LICENSE
#
# 006_bulk_drift.pl
#	Millions of IDs in one statement, and the bound on their lead.
#
# When more IDs are asked for in a millisecond than the sequence field
# holds, the generator carries into the next millisecond ("borrowing"),
# but an ID's time may never lead the wall clock by more than
# snowflake.max_drift_ms: beyond that, calls sleep for the clock.  This test
# checks, for every one of millions of IDs minted in one statement, that it
# is unique, larger than the one before, never behind the clock and never
# further ahead of it than the bound; once with max_drift_ms = 1000 and,
# after a reload, with max_drift_ms = 200.
#
# The layout is 41/14/8: 256 IDs per millisecond.  A single backend mints
# IDs several times faster than that (millions per second), so it cannot
# help borrowing up to the bound and then waiting, and the bound is
# exercised for most of the IDs.  (With the default 4096 per millisecond,
# whether one backend outruns the field depends on the machine.)
#
# How the lead is checked soundly: each row reads clock_timestamp() before
# (c0) and after (c1) its ID.  The generator reads the clock (call it now,
# in whole milliseconds) in between, and promises
#	now <= ts(id) <= now + max_drift_ms.
# As c0 <= now and c1 >= now, every ID must satisfy
#	ts(id) >= c0 truncated to the millisecond, and
#	ts(id) <= c1 + max_drift_ms.
# A clock read before the ID cannot bound its lead (now may be later than
# it), nor a read after it its lag; reading both makes both checks exact
# consequences of the guarantee.  The target list is evaluated left to
# right; if it were not, the checks could fail spuriously but could never
# pass over a real violation.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node_id = 4242;
my $bulk = 3_000_000;
my $per_ms = 256;    # 2^sequence_bits

my $node = start_snowflake_node(
	'bulk',
	node_id => $node_id,
	layout => '41/14/8',
	settings => { timezone => 'UTC', 'snowflake.max_drift_ms' => 1000 });
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# The generator's packed value, (ms << 8) | sequence, of an ID: the IDs of
# a batch are consecutive packed values.
my $packed = '((id >> 22) * 256 + (id & 255))';

# Mint $bulk IDs in one statement and check every one of them against the
# guarantees, for the given max_drift_ms.  OFFSET 0 keeps the clock reads
# in the same projection as the ID they bracket (the planner could
# otherwise evaluate them above the sort); g numbers the rows in the order
# their IDs were made.
sub bulk_check
{
	my ($drift, $label) = @_;
	my $result = $node->safe_psql(
		'postgres', qq{
		SET work_mem = '512MB';
		SET jit = off;
		SELECT count(*),
		       count(DISTINCT id),
		       count(*) FILTER (WHERE id <= prev),
		       count(*) FILTER (WHERE snowflake_node_id(id) <> $node_id),
		       count(*) FILTER (WHERE snowflake_timestamp(id) < date_trunc('milliseconds', c0)),
		       count(*) FILTER (WHERE snowflake_timestamp(id) > c1 + interval '$drift ms'),
		       max(snowflake_timestamp(id) - c1),
		       round(extract(epoch FROM max(c1) - min(c0)) * 1000)
		FROM (SELECT *, lag(id) OVER (ORDER BY g) AS prev
		      FROM (SELECT g, clock_timestamp() AS c0, snowflake_nextval() AS id,
		                   clock_timestamp() AS c1
		            FROM generate_series(1, $bulk) g
		            OFFSET 0) b) w});
	my @r = split /\|/, $result;
	is($r[0], $bulk, "$label: $bulk IDs in one statement");
	is($r[1], $bulk, "$label: all distinct");
	is($r[2], 0, "$label: each larger than the one made before it");
	is($r[3], 0, "$label: all carry node id $node_id");
	is($r[4], 0, "$label: none behind the clock read before it");
	is($r[5], 0,
		"$label: none leads the clock read after it by more than $drift ms");
	note("$label: largest lead over the clock read after the ID: $r[6]");
	return $r[7];
}

# ---------------------------------------------------------------------------
# max_drift_ms = 1000
# ---------------------------------------------------------------------------
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
my $minting_ms = bulk_check(1000, 'max_drift_ms 1000');

# 3000000 IDs span 11718 ms of timestamps past the first, at most 1000 of
# them ahead of the clock: had no call slept, minting them would have taken
# at least 10718 ms by the clock (10716 allowing for rounding).  It usually takes a second or two, but a
# loaded machine may be slower: what must hold is that a statement faster
# than that slept, and this is checked against the time it really took.
my $s = stats($node);
is($s->{ids_issued}, $bulk, "stats: $bulk IDs issued");
cmp_ok($s->{borrowed_ms}, '>', 0, 'stats: milliseconds were borrowed');
ok($s->{waits} > 0 || $minting_ms >= 10716,
	"stats: calls slept for the clock ($s->{waits} calls, $s->{wait_ms} ms), as minting took $minting_ms ms, under 10716");
cmp_ok($s->{lead_ms}, '<=', 1000, 'stats: lead_ms within max_drift_ms');
is($s->{refused}, 0, 'stats: no call refused');
note("after $bulk single calls: borrowed_ms $s->{borrowed_ms}, "
	  . "waits $s->{waits}, wait_ms $s->{wait_ms}");

# A batch of 200000 IDs covers 782 milliseconds of sequence numbers: at
# least 781 lie past the millisecond it starts in, so it certainly
# borrows.  Every ID of the batch is reserved before the FunctionScan
# returns its first row, so a clock read in any row (c1) is later than the
# generator's; statement_timestamp() is earlier.
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
is( $node->safe_psql(
		'postgres', qq{
		WITH b AS MATERIALIZED (
			SELECT id, clock_timestamp() AS c1 FROM snowflake_nextval_batch(200000) id
		)
		SELECT count(*), count(DISTINCT id), max($packed) - min($packed),
		       min(snowflake_timestamp(id)) >= date_trunc('milliseconds', statement_timestamp()),
		       bool_and(snowflake_timestamp(id) <= c1 + interval '1000 ms')
		FROM b}),
	'200000|200000|199999|t|t',
	'a batch of 200000: distinct, consecutive, within the lead bound');

$s = stats($node);
is($s->{ids_issued}, 200000, 'stats: the batch was counted');
cmp_ok($s->{borrowed_ms}, '>=', 781, 'stats: at least 781 ms were borrowed');
cmp_ok($s->{lead_ms}, '<=', 1000, 'stats: lead_ms within max_drift_ms');

# ---------------------------------------------------------------------------
# max_drift_ms = 200, by reload (the setting is sighup)
# ---------------------------------------------------------------------------
$node->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.max_drift_ms = 200; SELECT pg_reload_conf()");
ok($node->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '200ms'),
	'max_drift_ms is changed to 200 by a reload');
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');

# A batch that needs more than 200 ms of timestamps is refused whole.
is( error_report($node, 'SELECT count(*) FROM snowflake_nextval_batch(100000)'),
	batch_too_wide_report(100000, 8, 391, 200),
	'a batch of 100000 IDs (391 ms) is refused with max_drift_ms 200, the whole message');
$s = stats($node);
is("$s->{ids_issued}|$s->{refused}", '0|1', 'the refused batch issued nothing');

# Six batches of 51201 IDs, each spanning exactly 200 ms of timestamps,
# reserved back to back in one statement (LIMIT 1: the reservation happens
# at the first row, the other rows are never produced).  Each batch starts
# where the one before ends, so the k-th (from 0) ends 200 * (k + 1) ms
# ahead of the clock the first saw: it can only be issued once the clock
# has moved on by 200 * k ms.  Without a sleep the statement would have to
# be held up a whole second between microseconds of work, so the
# generator has to sleep.
my $span = 200 * $per_ms + 1;
my $nbatches = 6;
is( $node->safe_psql(
		'postgres', qq{
		SELECT bool_and(b > a),
		       bool_and(snowflake_timestamp(b) - snowflake_timestamp(a) >= interval '200 ms')
		FROM (SELECT (SELECT snowflake_nextval_batch($span) LIMIT 1) AS a1,
		             (SELECT snowflake_nextval_batch($span) LIMIT 1) AS a2,
		             (SELECT snowflake_nextval_batch($span) LIMIT 1) AS a3,
		             (SELECT snowflake_nextval_batch($span) LIMIT 1) AS a4,
		             (SELECT snowflake_nextval_batch($span) LIMIT 1) AS a5,
		             (SELECT snowflake_nextval_batch($span) LIMIT 1) AS a6) s,
		     LATERAL (VALUES (a1, a2), (a2, a3), (a3, a4), (a4, a5), (a5, a6)) p(a, b)}),
	't|t',
	'six batches spanning max_drift_ms each are issued back to back, in order');
$s = stats($node);
is($s->{ids_issued}, $nbatches * $span, 'stats: every batch issued');
cmp_ok($s->{waits}, '>=', 1, 'stats: a call slept for the clock');
cmp_ok($s->{wait_ms}, '>', 0, 'stats: wait_ms counts the time slept');
cmp_ok($s->{lead_ms}, '<=', 200, 'stats: lead_ms within max_drift_ms (200)');

bulk_check(200, 'max_drift_ms 200');

$s = stats($node);
is($s->{ids_issued}, $nbatches * $span + $bulk, "stats: $bulk more IDs issued");
cmp_ok($s->{lead_ms}, '<=', 200, 'stats: lead_ms within max_drift_ms (200)');
is($s->{refused}, 1, 'stats: no further call refused');
note("after the second bulk: borrowed_ms $s->{borrowed_ms}, "
	  . "waits $s->{waits}, wait_ms $s->{wait_ms}");

$node->stop;
done_testing();
