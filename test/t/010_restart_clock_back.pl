# Copyright: see LICENSE
#
# 010_restart_clock_back.pl
#	A burst that runs ahead of the clock, a restart, and the clock set back
#	by tens of seconds: no ID may be issued twice or out of order.
#
# The generator borrows future milliseconds when more than 4096 IDs are
# asked for in one millisecond, so the last issued ID can be ahead of the
# wall clock.  A restart must resume strictly above every ID issued before
# it, even when the clock is now behind them: every new ID is above every
# old one, or the call fails (58000, saying how far behind the clock is) and
# issues nothing.  When the clock catches up, generation resumes by itself.
#
# Both ways of stopping are exercised: an immediate shutdown (no shutdown
# checkpoint, crash recovery at the next start, which also applies the
# floor: now plus the lead, below the IDs of the burst) and a fast, clean
# one.  The background writer is off, so that the floor is applied by the
# first call, on the server's stepped clock: on PostgreSQL 15 the writer
# was seen reading the real clock under libfaketime (035_floor_clock_behind.pl).
#
# The server's clock is stepped with libfaketime (Debian package
# "libfaketime"): the server is started with it preloaded and reads a time
# offset from a file at every clock call, so rewriting the file moves the
# running server's clock at once.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

my $node = start_snowflake_node('restart_clock_back', node_id => 7,
	settings => { 'snowflake.background_writer' => 'off' },
	with => 'faketime');

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
-- IDs returned to the client and committed.
CREATE TABLE issued (id bigint PRIMARY KEY);
-- Several batches of a million IDs back to back.  Each spans 245 ms of ID
-- time and is reserved whole by its first row: only that row is fetched
-- (LIMIT 1), so the batches follow each other within microseconds, not
-- after a million rows each, and the generator runs ahead of the clock
-- however slow the machine.  The largest ID of a batch is its last packed
-- value (ms << 12 | sequence, node 7 in between).  Returns the largest ID
-- issued and the lead right afterwards.
CREATE FUNCTION burst(batches integer, OUT max_id bigint, OUT lead_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
	first bigint;
	last_packed bigint;
BEGIN
	FOR i IN 1..batches LOOP
		first := (SELECT snowflake_nextval_batch(1000000) LIMIT 1);
		last_packed := (first >> 22) * 4096 + (first & 4095) + 999999;
		max_id := ((last_packed >> 12) << 22) | (7 << 12) | (last_packed & 4095);
	END LOOP;
	SELECT s.lead_ms INTO lead_ms FROM snowflake_stats s;
END $$;
});

# The Unix time in milliseconds carried by an ID.
sub id_unix_ms
{
	my ($id) = @_;
	return $node->safe_psql('postgres',
		"SELECT (extract(epoch FROM snowflake_timestamp($id)) * 1000)::bigint");
}

# One round: issue IDs (committed ones, then a burst that leads the clock),
# stop the server in $mode, set the clock back 30 seconds and start it.
sub restart_with_clock_back
{
	my ($mode) = @_;

	$node->safe_psql('postgres',
		'INSERT INTO issued SELECT snowflake_nextval() FROM generate_series(1, 1000)');
	my $t0 = Time::HiRes::time();
	my ($burst_max, $lead) = split /\|/,
	  $node->safe_psql('postgres', 'SELECT max_id, lead_ms FROM burst(3)');
	my $took_ms = (Time::HiRes::time() - $t0) * 1000;
	# 3 million IDs span 732 ms past the first one's millisecond, which is
	# no earlier than the clock when the statement started.
	cmp_ok($lead, '>=', 732 - $took_ms - 1,
		sprintf('%s: the burst put the last issued ID ahead of the clock (lead %d ms, burst took %.1f ms)',
			$mode, $lead, $took_ms));
	# The computed largest ID is one the generator issued: the next is
	# just above it.
	my $next = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
	cmp_ok($next, '>', $burst_max, "$mode: the next ID is above the burst's largest");
	is( $node->safe_psql('postgres',
			"SELECT snowflake_node_id($burst_max), snowflake_sequence($burst_max) < 4096"),
		'7|t', "$mode: the burst's largest ID is a valid ID of node 7");

	# Everything issued so far: the burst and the committed IDs.
	my $old_max = $node->safe_psql('postgres',
		"SELECT greatest($burst_max, $next, max(id)) FROM issued");
	my $old_count = $node->safe_psql('postgres', 'SELECT count(*) FROM issued');
	my $old_max_ms = id_unix_ms($old_max);

	$node->stop($mode);
	set_clock('-30');
	start_faked($node);

	my $st = stats($node);
	is($st->{status}, 'ready', "$mode: generator ready after the restart");
	is($st->{ids_issued}, 0, "$mode: nothing issued yet after the restart");

	# The clock is 30 s behind the last ID: calls fail, saying by how much.
	# The clock is read just before and after the call, so the reported
	# figure can be checked against what the server itself saw.
	my ($sqlstate, $stderr, $stdout) = sql_error(
		$node, q{
SET snowflake.max_wait_ms = 100;
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
SELECT snowflake_nextval();
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
});
	is($sqlstate, '58000',
		"$mode: snowflake_nextval() with the clock set back fails with 58000");
	my ($behind) =
	  $stderr =~ /system clock is (\d+) ms behind the last issued snowflake ID/;
	ok(defined $behind, "$mode: the error says how far behind the clock is")
	  or diag($stderr);
	my ($before_ms, $after_ms) = split /\n/, $stdout;
	cmp_ok($after_ms, '<', $old_max_ms,
		"$mode: the server's clock is behind the last ID issued before the restart");
	cmp_ok($behind // 0, '>=', $old_max_ms - $after_ms,
		"$mode: the reported gap ($behind ms) covers the IDs issued before the restart");
	like(
		error_report($node, "SET snowflake.max_wait_ms = 100;\nSELECT snowflake_nextval()"),
		clock_behind_report(),
		"$mode: the whole error; the detail says no ID was issued");

	# Nothing at all is issued, for single IDs and batches alike.
	($sqlstate) = sql_error($node,
		"SET snowflake.max_wait_ms = 100;\n"
		  . 'INSERT INTO issued SELECT snowflake_nextval() FROM generate_series(1, 10)');
	is($sqlstate, '58000', "$mode: an INSERT using snowflake_nextval() fails");
	($sqlstate) = sql_error($node,
		"SET snowflake.max_wait_ms = 100;\n"
		  . 'SELECT count(*) FROM snowflake_nextval_batch(1000)');
	is($sqlstate, '58000', "$mode: snowflake_nextval_batch() fails");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM issued'),
		$old_count, "$mode: no row was inserted");
	$st = stats($node);
	is("$st->{ids_issued}|$st->{refused}|$st->{waits}", '0|4|0',
		"$mode: no ID was issued while the clock was behind, the 4 refused calls are counted, none slept");

	# The clock comes back.  Once it has passed the old IDs' time (a bounded
	# poll, at most a second or so of lead) generation resumes by itself.
	set_clock('+0');
	ok( $node->poll_query_until('postgres',
			"SELECT clock_timestamp() > snowflake_timestamp($old_max)"),
		"$mode: the clock caught up with the IDs issued before the restart");
	is(insert_ids_above($node, 'issued', $old_max),
		'1000|t',
		"$mode: every ID issued after the restart is above every ID issued before it");
	is( $node->safe_psql('postgres',
			"SELECT min(x) > $old_max FROM snowflake_nextval_batch(100000) x"),
		't', "$mode: batches too");
	return;
}

restart_with_clock_back('immediate');
restart_with_clock_back('fast');

# The IDs of all rounds are distinct (the primary key says so) and were
# issued in increasing order.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE id <= prev)
FROM (SELECT id, lag(id) OVER (ORDER BY ctid) AS prev FROM issued) t}),
	'0',
	'committed IDs increase in insertion order across both restarts');

$node->stop;
done_testing();
