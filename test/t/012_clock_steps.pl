# Copyright: see LICENSE
#
# 012_clock_steps.pl
#	The clock stepping back while the server runs.
#
#  - A step back within snowflake.max_drift_ms (900 ms with the default
#    1000 ms) is absorbed: calls succeed, IDs keep increasing (they run
#    ahead of the clock until it catches up), the regression is counted in
#    snowflake_stats and logged.
#  - A step back beyond max_drift_ms (2.5 s) makes the call sleep, within
#    snowflake.max_wait_ms (3 s in that session), until the clock is close
#    enough; it then succeeds, and the wait is counted.
#
# A step is only seen as one if the server reads its clock again before
# the real time has made up for it, so the steps are as large as each case
# allows, and every figure that depends on the time between two readings is
# checked against that time as measured by the test (Time::HiRes), never
# against a guess of how fast the machine is.
#  - A large step (10 s) makes calls fail with 58000 once they would have
#    to wait longer than snowflake.max_wait_ms, saying how far behind the
#    clock is, and issues nothing.
#  - When the clock returns, generation resumes by itself, above every ID
#    issued before.
#
# The server's clock is stepped with libfaketime (see 010_restart_clock_back.pl).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

my $node = start_snowflake_node('clock_steps', node_id => 7,
	with => 'faketime');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
# A new data directory has no state file: its first ID goes max_drift_ms
# past the clock (025_lineage.pl).  Let that lead pass before stepping.
$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
$node->poll_query_until('postgres', 'SELECT lead_ms = 0 FROM snowflake_stats')
  or die 'the lead of the first ID never went back to 0';
is($node->safe_psql('postgres', show_setting('snowflake.max_drift_ms')),
	'1s', 'default snowflake.max_drift_ms is 1 s');

# A query that issues $n IDs one by one and returns how many there were,
# whether each was above the one before and above $floor, the largest, and
# the lead of the last one over the clock right afterwards.
sub series_sql
{
	my ($n, $floor) = @_;
	return qq{
SELECT count(*), bool_and(x > coalesce(prev, $floor)), max(x),
	(SELECT lead_ms FROM snowflake_stats)
FROM (SELECT x, lag(x) OVER (ORDER BY i) AS prev
	FROM (SELECT i, snowflake_nextval() AS x
		FROM generate_series(1, $n) i) s) t};
}

# --- A small step back, within max_drift_ms ---

# One session issues an ID, the clock steps back 900 ms, and the same
# session issues more.  Perl's own clock bounds the time between the two
# server clock readings, so the regression the server measures can be
# checked: 900 ms minus at most that time.
my $step_ms = 900;
my $session = $node->background_psql('postgres');
my $log_offset = -s $node->logfile;
my $t0 = Time::HiRes::time();
my $before = query_value($session, 'SELECT snowflake_nextval()');
set_clock(-$step_ms / 1000);
my ($n, $increasing, $after, $lead) =
  split /\|/, query_value($session, series_sql(1000, $before));
my $gap_ms = (Time::HiRes::time() - $t0) * 1000;
is($n, 1000, "after a $step_ms ms step back, calls still succeed");
is($increasing, 't', 'and every ID is above the one before');

my $st = stats($node);
is($st->{clock_regressions}, 1, 'the regression is counted');
cmp_ok($st->{max_clock_regression_ms}, '<=', $step_ms,
	"the largest regression ($st->{max_clock_regression_ms} ms) is at most the step");
cmp_ok($st->{max_clock_regression_ms}, '>=', $step_ms - $gap_ms - 1,
	sprintf('and at least the step less the time between the readings (%.1f ms)',
		$gap_ms));
# The last ID is at least as late as the first one's clock reading, and the
# lead was read at most $gap_ms later, on a clock $step_ms behind.
cmp_ok($lead, '>=', $step_ms - $gap_ms - 1,
	"the step was absorbed by running ahead of the clock (lead $lead ms)");
is($st->{refused}, 0, 'no call was refused');
ok( log_appears(
		$node, qr/LOG:\s+system clock went backwards by \d+ ms/, $log_offset),
	'the server log says the clock went backwards');

# --- A step back beyond max_drift_ms, within max_drift_ms + max_wait_ms ---

# The clock back to the real time, and no lead left: then 2.5 s back with
# an ID just issued.  The next ID would lead the clock by 2.5 s less the time
# between the two calls, more than max_drift_ms allows unless that time
# exceeds 1.5 s, so the call sleeps until the clock is back within 1 s of it
# (at most 1.5 s, within this session's max_wait_ms of 3 s), then succeeds.
set_clock('+0');
$node->poll_query_until('postgres',
	'SELECT coalesce(lead_ms, 0) = 0 FROM snowflake_stats')
  or die 'the lead over the clock never went back to 0';
$session->query_safe('SET snowflake.max_wait_ms = 3000');
$st = stats($node);
$t0 = Time::HiRes::time();
my $x = query_value($session, 'SELECT snowflake_nextval()');
set_clock('-2.5');
my $y = query_value($session, 'SELECT snowflake_nextval()');
$gap_ms = (Time::HiRes::time() - $t0) * 1000;
cmp_ok($y, '>', $x, 'after a 2.5 s step back, the call waits and succeeds, above');
my $st1 = stats($node);
is($st1->{waits}, $st->{waits} + 1, 'the call that slept is counted');
cmp_ok($st1->{wait_ms}, '>', $st->{wait_ms},
	'and the time it slept is counted');
cmp_ok($st1->{wait_ms} - $st->{wait_ms}, '<=', $gap_ms + 1,
	sprintf('the time counted (%d ms) is at most the time the two calls took (%.1f ms)',
		$st1->{wait_ms} - $st->{wait_ms}, $gap_ms));
is($st1->{clock_regressions}, $st->{clock_regressions} + 1,
	'the regression is counted');
is($st1->{refused}, 0, 'no call was refused');
$after = $y;

# --- A large step back: 10 s ---

$log_offset = -s $node->logfile;
$st = stats($node);
my $last_ms = $node->safe_psql('postgres',
	"SELECT (extract(epoch FROM snowflake_timestamp($after)) * 1000)::bigint");
set_clock('-10');
my ($sqlstate, $stderr, $stdout) = sql_error(
	$node, q{
SET snowflake.max_wait_ms = 100;
SELECT snowflake_nextval();
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
});
is($sqlstate, '58000', 'after a 10 s step back, calls fail with 58000');
my ($behind) =
  $stderr =~ /system clock is (\d+) ms behind the last issued snowflake ID/;
ok(defined $behind, 'the error says how many ms behind the clock is')
  or diag($stderr);
cmp_ok($behind // 0, '>=', $last_ms - $stdout,
	"the figure ($behind ms) covers the last ID issued");
like(
	error_report($node, "SET snowflake.max_wait_ms = 100;\nSELECT snowflake_nextval()"),
	clock_behind_report(),
	'the whole error: the detail names both settings and says nothing was issued, the hint says generation resumes by itself');
($sqlstate) = sql_error($node,
	"SET snowflake.max_wait_ms = 100;\n"
	  . 'SELECT count(*) FROM snowflake_nextval_batch(10)');
is($sqlstate, '58000', 'batches fail too');

my $st2 = stats($node);
is($st2->{ids_issued}, $st->{ids_issued}, 'nothing was issued');
is($st2->{refused}, $st->{refused} + 3, 'the three calls were counted as refused');
is($st2->{clock_regressions}, $st->{clock_regressions} + 1,
	'the second regression is counted');
cmp_ok($st2->{max_clock_regression_ms}, '>', 1000,
	"the largest regression is now the big one ($st2->{max_clock_regression_ms} ms)");
ok( log_appears(
		$node, qr/LOG:\s+system clock went backwards by \d+ ms/, $log_offset),
	'the server log says the clock went backwards again');

# With max_wait_ms above the gap a call would wait for the clock, so the
# refusal above is what max_wait_ms decided; with 0 it fails at once.
($sqlstate) = sql_error($node,
	"SET snowflake.max_wait_ms = 0;\nSELECT snowflake_nextval()");
is($sqlstate, '58000', 'with max_wait_ms = 0 the call fails too');

# --- The clock returns ---

set_clock('+0');
($n, $increasing) =
  split /\|/, $node->safe_psql('postgres', series_sql(1000, $after));
is($n, 1000, 'with the clock back, calls succeed without a restart');
is($increasing, 't', 'and the IDs are above every ID issued before');

$session->quit;
$node->stop;
done_testing();
