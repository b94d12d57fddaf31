# Copyright: see LICENSE
#
# 011_crash_under_load.pl
#	A backend killed with SIGKILL while IDs are generated under load, crash
#	recovery, and the clock set back: no ID may be issued twice or out of
#	order.
#
# pgbench sessions insert snowflake IDs into a table (committed rows survive
# crash recovery), and just before the crash a psql session fetches a batch
# of IDs (IDs returned to a client but stored nowhere).  One generating backend is killed with
# SIGKILL: the postmaster kills every other backend and re-initialises
# shared memory, and the generator reloads its state from the state file,
# whose reservation must cover every ID issued before the crash.  With the
# clock then 30 s behind:
#  - with the default snowflake.max_drift_ms, calls fail with 58000 and
#    issue nothing;
#  - with max_drift_ms raised above the step, calls succeed, and every new
#    ID is above every ID issued before the crash.
# When the clock returns, generation resumes by itself, still above.
# Without the preload (the no-preload pass) the lead is capped at 1 s: the
# raised setting draws the capped WARNING and calls still fail with 58000,
# as no ID can lead the clock by 30 s; generation resumes once the clock
# returns, above every ID issued before the crash.
#
# The server's clock is stepped with libfaketime (see 010_restart_clock_back.pl).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;

# Callers write the reservation themselves: on PostgreSQL 15 the background
# writer was seen reading the real clock under libfaketime, and it applies
# the floor of every start (the re-initialisation's included) at once, on
# its clock: the calls below must meet the floor of the stepped clock.
my $node = start_snowflake_node(
	'crash_under_load',
	node_id => 7,
	settings => { restart_after_crash => 'on', 'snowflake.background_writer' => 'off' },
	with => 'faketime');
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE loaded (id bigint PRIMARY KEY);
});

# The load: four pgbench clients inserting IDs, each statement committed.
my $script = PostgreSQL::Test::Utils::tempdir() . '/insert_ids.sql';
open my $fh, '>', $script or die "could not write $script: $!";
print $fh
  "INSERT INTO loaded SELECT snowflake_nextval() FROM generate_series(1, 20);\n";
close $fh;
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '4', '-j', '4', '-T', '120',
		'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err);

ok($node->poll_query_until('postgres', 'SELECT count(*) >= 20000 FROM loaded'),
	'the load is running');

# IDs handed to a client and kept nowhere else: fetched just before the
# crash, while the load runs.
my $observer = $node->background_psql('postgres');
my $client_max = query_value($observer,
	'SELECT max(x) FROM (SELECT snowflake_nextval_batch(1000)) b(x)');

# Kill a backend that is generating IDs.  pg_stat_activity may briefly show
# every pgbench session between statements, so look a bounded number of
# times.
my $victim = '';
for (my $i = 0; $i < 100 && $victim eq ''; $i++)
{
	$victim = $node->safe_psql(
		'postgres', q{
SELECT pid FROM pg_stat_activity
WHERE state = 'active' AND query LIKE 'INSERT INTO loaded%'
	AND pid <> pg_backend_pid()
LIMIT 1});
}
isnt($victim, '', "found a generating backend (pid $victim)");
my $log_offset = -s $node->logfile;
ok(kill('KILL', $victim), 'SIGKILL sent to the generating backend');

# The clock goes back 30 seconds while the server recovers.
set_clock('-30');

# The postmaster kills the other sessions: pgbench ends with errors.
$pgbench->finish;
$observer->quit;
ok( log_appears(
		$node,
		# "server process" before PostgreSQL 18, "client backend" from 18.
		qr/(?:server process|client backend) \(PID $victim\) was terminated by signal 9/,
		$log_offset),
	'the postmaster saw the backend killed');
ok( log_appears(
		$node, qr/all server processes terminated; reinitializing/,
		$log_offset),
	'and re-initialised shared memory');
ok($node->poll_query_until('postgres', 'SELECT true'),
	'the server accepts connections again after crash recovery');

# Every ID issued before the crash: the committed ones (crash recovery kept
# them) and the ones the observer received.
my $committed_max = $node->safe_psql('postgres', 'SELECT max(id) FROM loaded');
my $committed = $node->safe_psql('postgres', 'SELECT count(*) FROM loaded');
cmp_ok($committed, '>=', 20000, "committed rows survived the crash ($committed)");
my $old_max = $node->safe_psql('postgres',
	"SELECT greatest($committed_max, $client_max)");
note "largest ID issued before the crash: $old_max";

my $st = stats($node);
is($st->{status}, 'ready', 'generator ready after the re-initialisation');
is($st->{ids_issued}, 0, 'the re-initialised generator has issued nothing');

# Default max_drift_ms (1 s): the clock is too far behind, calls fail.
like(
	error_report($node,
		"SET snowflake.max_wait_ms = 100;\n"
		  . 'INSERT INTO loaded SELECT snowflake_nextval() FROM generate_series(1, 10)'),
	clock_behind_report(),
	'with the clock set back, generation fails with 58000, saying how far behind the clock is');
is($node->safe_psql('postgres', 'SELECT count(*) FROM loaded'),
	$committed, 'nothing was inserted');
is(stats($node)->{ids_issued}, 0, 'nothing was issued');

# Let IDs lead the clock by up to a minute: now calls succeed with the clock
# still 30 s behind, and must continue above the IDs issued before.
$node->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.max_drift_ms = '60s'; SELECT pg_reload_conf()");
ok($node->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '1min'),
	'snowflake.max_drift_ms raised to 60 s');
my $batch_max;
if (no_preload())
{
	# Without the preload the lead is capped at 1 s: no ID can lead the
	# stepped-back clock by 30 s, so the raise is not used and calls fail.
	my ($sqlstate, $stderr) = sql_error($node,
		"SET snowflake.max_wait_ms = 100;\n"
		  . 'INSERT INTO loaded SELECT snowflake_nextval() FROM generate_series(1, 10)');
	like($stderr,
		qr/WARNING:  55000: parameter "snowflake\.max_drift_ms" is capped at 1000 ms without the preload\nDETAIL:  It is set to 60000 ms\./,
		'without the preload the raise to 60 s is capped at 1 s, and the call says so');
	like(stderr_report($stderr), clock_behind_report(),
		'with the clock 30 s behind, calls still fail with 58000');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM loaded'),
		$committed, 'nothing was inserted');
	is(stats($node)->{ids_issued}, 0, 'nothing was issued');
	$batch_max = $old_max;
}
else
{
	is(insert_ids_above($node, 'loaded', $old_max),
		'1000|t',
		'with the clock 30 s behind, every new ID is above every ID issued before the crash'
	);
	my $batch_above;
	($batch_above, $batch_max) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT min(x) > $old_max, max(x) FROM (SELECT snowflake_nextval_batch(100000)) b(x)");
	is($batch_above, 't', 'batches too');
	$st = stats($node);
	cmp_ok($st->{lead_ms}, '>', 1000,
		"the new IDs run ahead of the stepped-back clock (lead $st->{lead_ms} ms)");
}

# Back to normal: the clock returns, the drift limit too.
$node->safe_psql('postgres',
	"ALTER SYSTEM RESET snowflake.max_drift_ms; SELECT pg_reload_conf()");
ok($node->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '1s'),
	'snowflake.max_drift_ms back to 1 s');
set_clock('+0');
# Everything issued so far: the rows and the batch above (without the
# preload, the IDs issued before the crash).
my $max_now = $node->safe_psql('postgres',
	"SELECT greatest(max(id), $batch_max, $old_max) FROM loaded");
ok( $node->poll_query_until('postgres',
		"SELECT clock_timestamp() > snowflake_timestamp($max_now)"),
	'the clock caught up with the issued IDs');
is(insert_ids_above($node, 'loaded', $max_now),
	'1000|t',
	'with the clock back, generation resumes above everything issued');

$node->stop;
done_testing();
