# Copyright: see LICENSE
#
# 019_clock_before_epoch.pl
#	A server whose clock is behind the epoch still starts.
#
# A host may boot with a bad hardware clock, before time synchronisation
# has corrected it.  PostgreSQL must start there: generation refuses each
# call with 22003 (and issues nothing) until the clock passes the epoch,
# then resumes by itself, without a restart.  An epoch configured in the
# future likewise starts the server and refuses calls; once corrected, the
# epoch recorded in the state file, under which nothing was issued, gives
# way, while a change after an ID was issued is still refused.  The epoch is
# read with PostgreSQL's own time input, so named time zones work.
# Without the preload the state file is written at the first ID only: the
# mistaken epoch, under which no ID was issued, is never recorded, so the
# corrected one starts as a new data directory does (nothing to replace).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# --- the clock behind the (default, 2024-01-01) epoch at startup ---

# About 3.2 years back: late 2023 for a machine clock in 2026 or later.
set_clock('-100000000');
my $node = start_snowflake_node('before_epoch', node_id => 3,
	with => 'faketime');
is($node->safe_psql('postgres', 'SELECT clock_timestamp() < $$2024-01-01 00:00:00+00$$'),
	't', 'the server started with its clock before the epoch');
$node->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int)');

my ($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_nextval()');
is($sqlstate, '22003', 'snowflake_nextval() before the epoch fails with 22003');
like(
	$stderr,
	qr/ERROR:  22003: current time is before the snowflake epoch\n(?:.*\n)*?DETAIL:  The epoch, 2024-01-01 00:00:00\.000\+00, is \d+ ms in the future\./,
	'the message says the clock is before the epoch, and by how much');
($sqlstate) = sql_error($node, 'SELECT count(*) FROM snowflake_nextval_batch(10)');
is($sqlstate, '22003', 'a batch fails too');
($sqlstate) = sql_error($node, 'INSERT INTO ids (v) VALUES (1)');
is($sqlstate, '22003', 'an INSERT keyed by the default fails too');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'), '0', 'no row inserted');
my $st = stats($node);
is("$st->{status}|$st->{ids_issued}|$st->{refused}", 'ready|0|3',
	'the generator is ready, issued nothing and counted three refusals');
is($node->safe_psql('postgres',
		"SELECT snowflake_timestamp(snowflake_compose('2024-06-01 00:00:00+00', 3, 1))"),
	'2024-06-01 00:00:00+00', 'decoding works meanwhile');

# The clock is corrected: calls succeed without a restart.
set_clock('+0');
$node->poll_query_until('postgres',
	'SELECT clock_timestamp() > $$2024-01-01 00:00:00+00$$')
  or die 'the clock was not corrected';
is( $node->safe_psql(
		'postgres', q{
WITH n AS (INSERT INTO ids (v) SELECT g FROM generate_series(1, 1000) g RETURNING id)
SELECT count(*), count(DISTINCT id),
	bool_and(snowflake_node_id(id) = 3),
	bool_and(snowflake_timestamp(id) BETWEEN now() - interval '1 minute'
		AND clock_timestamp() + interval '1 second')
FROM n}),
	'1000|1000|t|t',
	'once the clock passes the epoch, IDs are issued, with the current time');
$node->stop;

# --- an epoch configured in the future, with a named time zone ---

my $future = start_snowflake_node('future_epoch',
	node_id => 3,
	settings => { 'snowflake.epoch' => '2999-01-01 00:00:00 America/New_York' });
$future->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$st = stats($future);
is($st->{epoch}, '2999-01-01T05:00:00+00:00',
	'the named time zone of the epoch is honoured');
($sqlstate, $stderr) = sql_error($future, 'SELECT snowflake_nextval()');
is($sqlstate, '22003', 'a server with an epoch in the future starts and refuses calls');
like($stderr,
	qr/DETAIL:  The epoch, 2999-01-01 05:00:00\.000\+00, is \d+ ms in the future\./,
	'the detail names the epoch in UTC');
is($future->safe_psql('postgres',
		"SELECT snowflake_compose('2999-01-01 00:00:00.001 America/New_York', 0, 0)"),
	'4194304', 'IDs compose against the zoned epoch (1 ms after it)');
$future->stop;

# --- the mistaken epoch corrected: nothing was issued under it ---

# The new cluster recorded the mistaken epoch, and no ID under it.
# Without the preload the state file is written at the first ID only, and
# none was issued: nothing recorded the mistaken epoch, so nothing gives way.
if (no_preload())
{
	ok(!-e $future->data_dir . '/snowflake.state',
		'no preload: no state file, as no ID was issued under the mistaken epoch');
}
else
{
	my $rec = read_state($future);
	is($rec->{epoch_ms}, 32472162000000, 'the state file records the mistaken epoch');
	ok($rec->{reserved_ms} < 0 && $rec->{last} < 0,
		'and no reservation or last ID at or past it');
}

$future->append_conf('postgresql.conf', "snowflake.epoch = '2024-01-01'");
my $log_offset = -s $future->logfile;
$future->start;
is( $future->safe_psql(
		'postgres', q{
SELECT snowflake_timestamp(id) BETWEEN now() - interval '1 minute'
		AND clock_timestamp() + interval '2 seconds'
FROM snowflake_nextval() id}),
	't',
	'corrected, the server issues IDs at the corrected epoch (past the floor: the clock plus the lead)');
if (!no_preload())
{
	ok( log_appears(
			$future,
			qr/LOG:  snowflake epoch and layout recorded in "snowflake\.state" replaced by the configured ones\n.*DETAIL:  The state file records epoch 2999-01-01 05:00:00\.000\+00 and layout 41\/10\/12 \(timestamp\/node\/sequence bits\) and no ID issued under them; the server is configured with epoch 2024-01-01 00:00:00\.000\+00 and layout 41\/10\/12\./,
			$log_offset),
		'and logs that the recorded epoch, under which nothing was issued, gave way');
}
# The replaced file says nothing of IDs other servers issued under the
# corrected epoch (a primary this server took over from): the floor
# applies, as at every start.
ok( log_appears(
		$future,
		qr/LOG:  snowflake IDs resume at \d+ ms past the clock, because \Q@{[ start_reason() ]}\E\n/,
		$log_offset),
	'and that the floor applies, as without a state file');
ok(!$future->log_contains(qr/replaced by the configured ones/, $log_offset),
	'no preload: no recorded epoch was replaced, as none was recorded')
  if no_preload();
$future->stop;
is(read_state($future)->{epoch_ms}, 1704067200000,
	'the state file records the corrected epoch once an ID was issued');

# An ID was issued under 2024-01-01: a change of epoch is refused again.
$future->append_conf('postgresql.conf', "snowflake.epoch = '2025-01-01'");
$log_offset = -s $future->logfile;
$future->start;
($sqlstate, $stderr) = sql_error($future, 'SELECT snowflake_nextval()');
is($sqlstate, '55000', 'after an ID was issued, another epoch is still refused');
like($stderr, qr/snowflake epoch or layout differs from the one recorded in "snowflake\.state"/,
	'with the usual message');
ok(!$future->log_contains(qr/replaced by the configured ones/, $log_offset),
	'and nothing is replaced');
$future->stop;

done_testing();
