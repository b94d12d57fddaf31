# Copyright: see LICENSE
#
# 016_stats.pl
#	snowflake_stats counters move as the events they count happen, and
#	snowflake_stats_reset() zeroes them (superusers only) without touching
#	the generator.
#
# Also measures, and reports in the test log, how many reservation writes
# per second the generator makes under load: the reservation is written a
# few hundred milliseconds ahead, so a few times a second at most, however
# many IDs are issued.  What is asserted holds however slow the machine is:
# each write moves the reservation at least SNOWFLAKE_RESERVE_AHEAD_MS
# (500 ms) further, and the reservation never gets further ahead of the
# clock than max_drift_ms plus that headroom; never a rate.
#
# A clock step is only seen if the server reads its clock again before the
# real time has made up for it, and a call only sleeps if it comes before
# the clock has caught up by itself: the steps are seconds, far more than a
# loaded machine takes between two statements.
# Without the preload (the no-preload pass) the lead is capped at 1 s, so
# the regression absorbed is a 0.8 s step within a 1 s max_drift_ms, taken
# once the lead is back to 0, rather than a 5 s step within 10 s.
#
# The server's clock is stepped with libfaketime (see 010_restart_clock_back.pl).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;
use Time::HiRes;

# The counts of reservation writes below are the callers' own, one by one:
# the background writer, which would add writes on its own timer, is off
# (its counters are tested in 028_background_writer.pl).
my $node = start_snowflake_node(
	'stats',
	node_id => 7,
	settings => { 'snowflake.background_writer' => 'off' },
	with => 'faketime');
$node->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE ROLE alice LOGIN;');

my @counters = qw(ids_issued borrowed_ms clock_regressions
  max_clock_regression_ms waits wait_ms refused reservation_writes);

# --- a fresh server ---

my $st = stats($node);
is($st->{status}, 'ready', 'fresh server: ready');
is($st->{node_id}, 7, 'node id shown');
is(join('/', $st->{timestamp_bits}, $st->{node_bits}, $st->{sequence_bits}),
	'41/10/12', 'layout shown');
is($st->{$_}, 0, "fresh server: $_ is 0") foreach @counters;
ok(!defined $st->{last_timestamp}, 'fresh server: no last timestamp');
ok(defined $st->{stats_reset}, 'fresh server: stats_reset set');

# --- IDs issued, reservation written ---

my $first = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
$st = stats($node);
is($st->{ids_issued}, 1, 'one ID: ids_issued 1');
is($st->{reservation_writes}, 1, 'the first ID wrote a reservation');
is( $node->safe_psql(
		'postgres',
		"SELECT last_timestamp = snowflake_timestamp($first) AND reserved_until > last_timestamp FROM snowflake_stats"
	),
	't',
	'last_timestamp is the ID\'s, the reservation lies beyond it');

# That first ID of a new data directory (no state file) went max_drift_ms
# past the clock (025_lineage.pl): let the lead pass before the batches.
$node->poll_query_until('postgres', 'SELECT lead_ms = 0 FROM snowflake_stats')
  or die 'the lead of the first ID never went back to 0';

# 5000 IDs need two milliseconds: at least one is borrowed from the future.
$node->safe_psql('postgres', 'SELECT count(*) FROM snowflake_nextval_batch(5000)');
$st = stats($node);
is($st->{ids_issued}, 5001, 'a batch of 5000: ids_issued 5001');
cmp_ok($st->{borrowed_ms}, '>=', 1, "borrowed_ms counts the millisecond borrowed ($st->{borrowed_ms})");

# A million IDs span 245 milliseconds, at least 244 of them borrowed.
my $borrowed = $st->{borrowed_ms};
$node->safe_psql('postgres',
	'SELECT count(*) FROM (SELECT snowflake_nextval_batch(1000000) LIMIT 1) s');
$st = stats($node);
is($st->{ids_issued}, 1005001, 'a batch of a million: counted whole');
cmp_ok($st->{borrowed_ms} - $borrowed, '>=', 244,
	'a batch of a million borrows at least 244 ms');
is($st->{$_}, 0, "no $_ yet") foreach qw(clock_regressions waits refused);

# --- a clock regression, absorbed ---

# With max_drift_ms 10 s a 5 s step back is absorbed; the regression seen is
# the step less the time between the two calls.  Without the preload the
# lead is capped at 1 s: a 0.8 s step within 1 s, from no lead.
my ($step, $step_ms, $drift) = no_preload() ? ('0.8', 800, '1s') : ('5', 5000, '10s');
set_drift($node, $drift, $drift);
if (no_preload())
{
	$node->poll_query_until('postgres',
		'SELECT coalesce(lead_ms, 0) = 0 FROM snowflake_stats')
	  or die 'the lead over the clock never went back to 0';
}
my $session = $node->background_psql('postgres');
my $t0 = Time::HiRes::time();
$session->query_safe('SELECT snowflake_nextval()');
set_clock("-$step");
$session->query_safe('SELECT snowflake_nextval()');
my $gap_ms = (Time::HiRes::time() - $t0) * 1000;
$st = stats($node);
is($st->{clock_regressions}, 1, "a $step s step back: clock_regressions 1");
cmp_ok($st->{max_clock_regression_ms}, '>=', $step_ms - $gap_ms - 1,
	sprintf('max_clock_regression_ms (%d ms) is the step less the time between the calls (%.1f ms)',
		$st->{max_clock_regression_ms}, $gap_ms));
cmp_ok($st->{max_clock_regression_ms}, '<=', $step_ms, 'at most the step');
is($st->{$_}, 0, "absorbed: no $_") foreach qw(waits refused);
$session->quit;
# The clock back (a step forwards), so that no lead is left.
set_clock('+0');
$node->poll_query_until('postgres',
	'SELECT coalesce(lead_ms, 0) = 0 FROM snowflake_stats')
  or die 'the lead over the clock never went back to 0';

# --- a call that waits ---

# With max_drift_ms 100, a 2 s step back puts the next ID 2 s ahead of the
# clock, less the time between the calls: the call sleeps up to 1.9 s
# (within this session's max_wait_ms, 3 s), then succeeds.
set_drift($node, '100ms', '100ms');
$session = $node->background_psql('postgres');
$session->query_safe('SET snowflake.max_wait_ms = 3000');
$session->query_safe('SELECT snowflake_nextval()');
my $before_wait = stats($node);
$t0 = Time::HiRes::time();
$session->query_safe('SELECT snowflake_nextval()');
set_clock('-2');
$session->query_safe('SELECT snowflake_nextval()');
$gap_ms = (Time::HiRes::time() - $t0) * 1000;
$session->quit;
$st = stats($node);
is($st->{waits} - $before_wait->{waits}, 1, 'a call that slept: waits +1');
cmp_ok($st->{wait_ms} - $before_wait->{wait_ms},
	'>', 0, "wait_ms counts the sleep ($st->{wait_ms} ms)");
cmp_ok($st->{wait_ms} - $before_wait->{wait_ms}, '<=', $gap_ms + 1,
	sprintf('wait_ms counts no more than the calls took (%.1f ms)', $gap_ms));
is($st->{clock_regressions}, 2, 'and the regression is counted');
is($st->{refused}, 0, 'nothing refused yet');

# --- a refused call ---

# A million IDs span 245 ms, more than max_drift_ms now allows.
my $issued = $st->{ids_issued};
is( error_report($node, 'SELECT count(*) FROM snowflake_nextval_batch(1000000)'),
	batch_too_wide_report(1000000, 12, 245, 100),
	'a batch wider than max_drift_ms is refused (22023), the whole message');
$st = stats($node);
is($st->{refused}, 1, 'refused 1');
is($st->{ids_issued}, $issued, 'and nothing issued');

set_drift($node, undef, '1s');
set_clock('+0');

# --- snowflake_stats_reset() ---

is( error_report($node, 'SELECT snowflake_stats_reset()',
		extra_params => [ '-U', 'alice' ]),
	'42501: permission denied for function snowflake_stats_reset',
	'a non-superuser cannot reset the counters (42501)');
is(stats($node)->{refused}, 1, 'and the counters are untouched');

my $last = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
my $before = stats($node);
$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
my $after = stats($node);
is($after->{$_}, 0, "after the reset: $_ is 0") foreach @counters;
is($after->{$_}, $before->{$_}, "after the reset: $_ unchanged")
  foreach qw(status node_id last_timestamp reserved_until);
is( $node->safe_psql(
		'postgres',
		"SELECT stats_reset > '$before->{stats_reset}' FROM snowflake_stats"),
	't',
	'stats_reset moved');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'),
	'>', $last, 'the generator carries on above the IDs issued before the reset');

# --- reservation writes under load ---

# Run pgbench with $script for a couple of seconds from freshly reset
# counters; return the counters and the elapsed time.
sub load
{
	my ($name, $script_text) = @_;
	my $script = PostgreSQL::Test::Utils::tempdir() . "/$name.sql";
	open my $fh, '>', $script or die "could not write $script: $!";
	print $fh $script_text;
	close $fh;
	$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
	# The reservation, or the clock if it is behind: no write of this run
	# can reserve less than 500 ms past that.
	my $reserved0 = $node->safe_psql('postgres',
		'SELECT (extract(epoch FROM greatest(reserved_until, clock_timestamp())) * 1000)::bigint FROM snowflake_stats');
	my $t0 = Time::HiRes::time();
	my ($out, $err);
	my $ok = IPC::Run::run(
		[
			'pgbench', '-n', '-c', '4', '-j', '4', '-T', '2', '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	my $elapsed = Time::HiRes::time() - $t0;
	ok($ok, "$name load: pgbench ran without errors") or diag($err);
	my $st = stats($node);
	note sprintf(
		'%s load: %d IDs in %.1f s (%.0f IDs/s), %d reservation writes (%.1f per second), %d calls slept',
		$name, $st->{ids_issued}, $elapsed, $st->{ids_issued} / $elapsed,
		$st->{reservation_writes}, $st->{reservation_writes} / $elapsed,
		$st->{waits});
	my $reserved1 = $node->safe_psql('postgres',
		'SELECT (extract(epoch FROM reserved_until) * 1000)::bigint FROM snowflake_stats');
	my $advance = $reserved1 - $reserved0;
	cmp_ok($st->{reservation_writes}, '>=', 1, "$name load: the reservation moved");
	# Each write reserves at least 500 ms beyond the one before.
	cmp_ok($st->{reservation_writes} * 500, '<=', $advance,
		"$name load: $st->{reservation_writes} writes, each at least 500 ms further ($advance ms in all)");
	# A write reserves 500 ms past the later of the clock and the
	# millisecond it is for, which is at most 250 ms past an issued ID, at
	# most max_drift_ms (1 s) ahead of the clock.  The count started no
	# earlier than the clock at $t0, so the reservation advanced by at most
	# the elapsed time plus 1.75 s, however many IDs were issued.
	cmp_ok($advance, '<=', $elapsed * 1000 + 1750 + 2,
		sprintf('%s load: the reservation advanced %d ms in %.1f s, at most the elapsed time plus 1.75 s',
			$name, $advance, $elapsed));
	return;
}

# Many single IDs from four sessions.
load('single', "SELECT snowflake_nextval();\n");
# Four sessions asking for more than the generator can mint: it runs at full
# speed (4096 IDs per millisecond), max_drift_ms ahead of the clock.
load('saturating', "SELECT snowflake_nextval_batch(10000) LIMIT 1;\n");

$node->stop;
done_testing();
