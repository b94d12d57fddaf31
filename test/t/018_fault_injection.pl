# Copyright: see LICENSE
#
# 018_fault_injection.pl
#	Faults injected into every step of the reservation write, a slow disk,
#	and a crash during the write.
#
# The server runs with test/faultshim.c preloaded, which makes the state
# file's open, write, fsync, rename or directory fsync fail with a chosen
# errno, block, or sleep (see SnowflakeTest.pm).  Proves:
#  - for each failing step: the error's SQLSTATE and whole message, that
#    nothing was issued or inserted, that the reservation moved neither in
#    memory nor on disk, and that generation resumes once the fault clears;
#  - with the fsync held: other backends keep issuing within the old
#    reservation, never past the one on disk; the writer shows a wait
#    event; a caller that needs a new reservation waits for it;
#  - with every fsync slowed, under pgbench load: no ID seen by a probe is
#    past the reservation on disk at that moment;
#  - a backend killed while holding the write: after the crash restart the
#    leftover temporary file is gone and new IDs are above all old ones.
# fsync is on, so that "anyfsync" slows the WAL and data files' fsyncs too
# (the state file is fsynced with fsync = off as well: 031_fsync_off.pl).
# The background writer is off: these are the writes callers make when the
# reservation is used up (the fallback), and which process writes must not
# depend on the writer's timer.  The writer's own faults and crashes are in
# 028_background_writer.pl.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;

my $node = start_snowflake_node(
	'fault_injection',
	node_id => 7,
	settings => {
		'snowflake.max_drift_ms' => '30s',
		'snowflake.background_writer' => 'off',
		fsync => 'on',
		restart_after_crash => 'on'
	},
	with => 'shim');
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), note text);
INSERT INTO ids (note) SELECT 'before' FROM generate_series(1, 1000);
});

my $st0 = stats($node);
my $ms_shift = $st0->{node_bits} + $st0->{sequence_bits};
my $tmp_path = $node->data_dir . '/snowflake.state.tmp';
# psql prefixes the first line of an error with "psql:<stdin>:N: ".
my $prefix = qr/^(?:psql:<stdin>:\d+: )?/m;
my $detail = 'The snowflake reservation could not be made durable, so no ID was issued.';

# The millisecond of an ID, as the state file counts them.
sub id_ms { return $_[0] >> $ms_shift; }

# --- each step of the write fails ---

my @faults = (
	[ 'open EACCES', '42501',
		'could not create file "snowflake.state.tmp": Permission denied' ],
	[ 'open ENOSPC', '53100',
		'could not create file "snowflake.state.tmp": No space left on device' ],
	[ 'write ENOSPC', '53100',
		'could not write file "snowflake.state.tmp": No space left on device' ],
	[ 'write EIO', '58030',
		'could not write file "snowflake.state.tmp": Input/output error' ],
	[ 'fsync EIO', '58030',
		'could not fsync file "snowflake.state.tmp": Input/output error' ],
	[ 'fsync ENOSPC', '53100',
		'could not fsync file "snowflake.state.tmp": No space left on device' ],
	[ 'rename ENOSPC', '53100',
		'could not rename file "snowflake.state.tmp" to "snowflake.state": No space left on device'
	],
	[ 'rename EACCES', '42501',
		'could not rename file "snowflake.state.tmp" to "snowflake.state": Permission denied'
	],
	[ 'dirfsync EIO', '58030',
		'could not fsync the data directory: Input/output error' ],
	[ 'dirfsync EACCES', '42501',
		'could not fsync the data directory: Permission denied' ],);

foreach my $case (@faults)
{
	my ($fault, $sqlstate, $message) = @$case;

	# IDs within the reservation already written may still be issued: wait
	# until the clock has passed it, so that the next ID needs a write.
	ok( $node->poll_query_until('postgres',
			'SELECT clock_timestamp() > reserved_until FROM snowflake_stats'),
		"$fault: the clock passed the reservation");
	my $before = stats($node);
	my $disk = read_state($node);
	my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM ids');
	my $max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');

	set_fault($fault);
	my ($got, $stderr) = sql_error($node, 'SELECT snowflake_nextval()');
	is($got, $sqlstate, "$fault: snowflake_nextval() fails with $sqlstate");
	like($stderr, qr/${prefix}ERROR:  $sqlstate: \Q$message\E$/m,
		"$fault: the whole message");
	like($stderr, qr/^DETAIL:  \Q$detail\E$/m, "$fault: the detail");
	($got, $stderr) =
	  sql_error($node, "INSERT INTO ids (note) VALUES ('$fault')");
	is($got, $sqlstate, "$fault: an INSERT using the default fails too");
	like($stderr, qr/${prefix}ERROR:  $sqlstate: \Q$message\E$/m,
		"$fault: the INSERT's whole message");

	my $after = stats($node);
	is($after->{reserved_until}, $before->{reserved_until},
		"$fault: reserved_until did not move");
	is($after->{ids_issued}, $before->{ids_issued},
		"$fault: ids_issued did not move");
	is($after->{reservation_writes}, $before->{reservation_writes},
		"$fault: no reservation write counted");
	my $disk_after = read_state($node);
	if ($fault =~ /^dirfsync/)
	{
		# The rename is complete before the directory is fsynced: the file
		# visible on disk may already hold the new reservation, which is
		# safe (a larger one), but never a smaller one.
		cmp_ok($disk_after->{reserved_ms}, '>=', $disk->{reserved_ms},
			"$fault: the reservation on disk did not go back");
	}
	else
	{
		is($disk_after->{reserved_ms}, $disk->{reserved_ms},
			"$fault: the reservation on disk did not move");
	}
	is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
		$rows, "$fault: no row inserted");

	# The fault cleared: generation resumes without a restart.
	set_fault();
	is( $node->safe_psql(
			'postgres', qq{
WITH n AS (
	INSERT INTO ids (note) SELECT 'after $fault' FROM generate_series(1, 100)
	RETURNING id)
SELECT count(*), min(id) > $max FROM n}),
		'100|t',
		"$fault cleared: generation resumes above every earlier ID");
}

# --- a slow fsync: other backends keep issuing ---

# Put the last ID seconds ahead of the clock, so that IDs within the
# current reservation remain available while A is held and B issues IDs.
# lead_burst fetches only the first ID of each batch: producing every ID
# took about as long as the ID time it spans on a busy machine, and the
# lead never grew.  The sessions are opened before it, and A reaches its
# write at once: before its batches it claims four batches the same way,
# a second of ID time, more than a reservation ever holds beyond the last
# ID (750 ms).  So no process start and no generation of IDs has to fit
# into the lead before B's IDs are issued, only round trips of open
# sessions.
$node->safe_psql(
	'postgres', q{
CREATE TABLE batches (sess text, i int, lo bigint, hi bigint, n bigint);
CREATE TABLE singles (i serial, id bigint);
});

# Open a session; return it and its backend's PID.
sub open_session
{
	my $sess = $node->background_psql('postgres');
	return ($sess, query_value($sess, 'SELECT pg_backend_pid()'));
}

# In session $sess, claim $claims batches of a million IDs, fetching the
# first ID of each only, then issue $count batches of a million IDs, each
# recorded in table batches as session $label's; return without waiting.
sub start_batches
{
	my ($sess, $label, $claims, $count) = @_;
	$sess->query_until(
		qr/started/, qq{\\echo started
DO \$\$
BEGIN
	FOR i IN 1..$claims LOOP
		PERFORM snowflake_nextval_batch(1000000) LIMIT 1;
	END LOOP;
	FOR i IN 1..$count LOOP
		INSERT INTO batches
		SELECT '$label', i, min(x), max(x), count(*)
		FROM snowflake_nextval_batch(1000000) AS b(x);
	END LOOP;
END \$\$;
});
	return;
}

my ($sess_a, $pid_a) = open_session();
my ($sess_b) = open_session();
lead_burst($node, 8);
my $lead = stats($node)->{lead_ms};
cmp_ok($lead, '>=', 5000, "the last ID leads the clock ($lead ms)");

set_fault('fsync hold');
start_batches($sess_a, 'A', 4, 2);
my $held = wait_for_held();
is($held, $pid_a, 'session A is held in a reservation write');

# While A is held, B issues single IDs, each within the reservation on
# disk read after it was returned.
my $within = 0;
for my $i (1 .. 3)
{
	my $id = query_value($sess_b,
		'INSERT INTO singles (id) VALUES (snowflake_nextval()) RETURNING id');
	my $disk = read_state($node);
	$within++ if id_ms($id) <= $disk->{reserved_ms};
	note "B: ID $id (ms " . id_ms($id) . "), on disk $disk->{reserved_ms}";
}
is($within, 3, 'B: every ID is within the reservation on disk');
ok(-e fault_marker(), 'B: its calls returned while A is still held');
is( $node->safe_psql(
		'postgres',
		"SELECT state, query LIKE '%snowflake_nextval_batch%' FROM pg_stat_activity WHERE pid = $pid_a"
	),
	'active|t',
	'B: its calls returned while A\'s query has not finished');

my $wait = $node->safe_psql('postgres',
	"SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE pid = $pid_a");
if ($node->pg_version >= 17)
{
	like($wait, qr/^Extension\|.*Snowflake/,
		"A shows a snowflake wait event while it writes ($wait)");
}
else
{
	is($wait, 'Extension|Extension',
		"A shows the Extension wait event while it writes");
}

# C needs a new reservation (its second batch at the latest): it waits.
my ($sess_c, $pid_c) = open_session();
start_batches($sess_c, 'C', 0, 2);
ok( $node->poll_query_until(
		'postgres', qq{
SELECT state = 'active'
	AND (wait_event_type = 'LWLock' AND wait_event = 'snowflake'
		OR wait_event ~* 'snowflake')
FROM pg_stat_activity WHERE pid = $pid_c}),
	'C waits for the reservation');
note 'C waits on '
  . $node->safe_psql('postgres',
	"SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE pid = $pid_c");
ok(-e fault_marker(), 'A is still held while C waits');

set_fault();
ok(wait_for_held(1), 'A is released');
$sess_a->query_safe('SELECT 1');
$sess_c->query_safe('SELECT 1');
$sess_b->query_safe(
	'INSERT INTO singles (id) VALUES (snowflake_nextval()) RETURNING id');
$sess_a->quit;
$sess_b->quit;
$sess_c->quit;

is( $node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE n = 1000000), count(*) FROM batches"),
	'4|4', 'A and C got every batch, whole');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
	SELECT lo, lag(hi) OVER (PARTITION BY sess ORDER BY i) AS prev_hi
	FROM batches) t
WHERE lo <= prev_hi}),
	'0',
	'A and C: IDs increase from batch to batch');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
	SELECT id, lag(id) OVER (ORDER BY i) AS prev FROM singles) t
WHERE id <= prev}),
	'0',
	'B: IDs increase');
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM batches b1 JOIN batches b2
		ON (b1.sess, b1.i) < (b2.sess, b2.i) AND b1.lo <= b2.hi AND b2.lo <= b1.hi)
	+ (SELECT count(*) FROM batches b JOIN singles s ON s.id BETWEEN b.lo AND b.hi)
	+ (SELECT count(*) FROM singles s JOIN ids USING (id))
	+ (SELECT count(*) FROM batches b JOIN ids ON ids.id BETWEEN b.lo AND b.hi)}),
	'0',
	'every ID of A, B and C is distinct from every other');
my $max_seen = $node->safe_psql('postgres',
	'SELECT greatest((SELECT max(hi) FROM batches), (SELECT max(id) FROM singles))');
cmp_ok(id_ms($max_seen), '<=', read_state($node)->{reserved_ms},
	'the reservation on disk covers every ID issued');

# --- pgbench with every state file fsync slowed ---

$node->safe_psql('postgres', 'CREATE TABLE loaded (id bigint)');
my $script = PostgreSQL::Test::Utils::tempdir() . '/insert_ids.sql';
open my $fh, '>', $script or die "could not write $script: $!";
print $fh
  "INSERT INTO loaded SELECT snowflake_nextval() FROM generate_series(1, 20);\n";
close $fh;

# The IDs of the sections above lead the clock by seconds: wait until the
# clock has passed the reservation, so that the load needs new ones.
ok( $node->poll_query_until('postgres',
		'SELECT clock_timestamp() > reserved_until FROM snowflake_stats'),
	'the clock passed the reservation before the load');
my $writes_before = stats($node)->{reservation_writes};
set_fault('fsync sleep=100');
my $probe = $node->background_psql('postgres');
$probe->set_query_timer_restart;
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '4', '-j', '4', '-T', '5',
		'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err);
my ($samples, $past) = (0, 0);
while ($pgbench->pumpable)
{
	$pgbench->pump_nb;
	my $id = query_value($probe, 'SELECT snowflake_nextval()');
	my $disk = read_state($node);
	$samples++;
	if (id_ms($id) > $disk->{reserved_ms})
	{
		$past++;
		diag "ID $id (ms " . id_ms($id) . ") past the reservation on disk, $disk->{reserved_ms}";
	}
}
my $pgbench_ok = $pgbench->finish;
$probe->quit;
set_fault();
ok($pgbench_ok, 'pgbench ran without errors') or diag $pgb_err;
like($pgb_out, qr/number of transactions actually processed: [1-9]/,
	'pgbench processed transactions');
cmp_ok($samples, '>', 0, "the reservation on disk was sampled $samples times under load");
is($past, 0, 'no ID seen past the reservation on disk at that moment');
my $writes = stats($node)->{reservation_writes} - $writes_before;
cmp_ok($writes, '>=', 2, "slowed reservation writes happened under load ($writes)");
like( $node->safe_psql(
		'postgres', 'SELECT count(*) > 0, count(*) = count(DISTINCT id) FROM loaded'),
	qr/^t\|t$/,
	'pgbench inserted rows, all distinct');

# --- a crash during the write ---

$node->safe_psql('postgres',
	'CREATE TABLE crash_ids (id bigint PRIMARY KEY); '
	  . 'INSERT INTO crash_ids SELECT snowflake_nextval() FROM generate_series(1, 1000)');
my $old_max = $node->safe_psql(
	'postgres', q{
SELECT greatest((SELECT max(id) FROM crash_ids), (SELECT max(id) FROM ids),
	(SELECT max(id) FROM loaded), (SELECT max(hi) FROM batches))});

# The hold is the session's alone: the startup process of the crash
# restart fsyncs every file of the data directory, the leftover temporary
# file too, and must not be held there.
my $sess_k = $node->background_psql('postgres');
my $pid_k = query_value($sess_k, 'SELECT pg_backend_pid()');
set_fault("fsync hold pid=$pid_k");
$sess_k->query_until(
	qr/started/, q{\echo started
DO $$ BEGIN FOR i IN 1..8 LOOP PERFORM snowflake_nextval_batch(1000000); END LOOP; END $$;
});
is(wait_for_held(), $pid_k, 'the session is held in a reservation write');
ok(-e $tmp_path, 'the temporary state file exists while the write is held');
my $reserved_at_crash = read_state($node)->{reserved_ms};

my $log_offset = -s $node->logfile;
ok(kill('KILL', $pid_k), 'SIGKILL sent to the writing backend');
$node->wait_for_log(
	qr/(?:server process|client backend) \(PID $pid_k\) was terminated by signal 9/,
	$log_offset);

# The killed process could not remove its marker.
set_fault();
unlink(fault_marker());
# The crash restart ended the session (its psql would learn it at its next
# query): stop its psql.  Connections are refused until the restart is
# over: wait for it in the log before the next query.
$sess_k->{run}->kill_kill;
ok(crash_restarted($node, $log_offset),
	'the server accepts connections after the crash restart');

ok(!-e $tmp_path, 'the leftover temporary state file is gone after the restart');
is( $node->safe_psql(
		'postgres', qq{
WITH n AS (
	INSERT INTO crash_ids SELECT snowflake_nextval() FROM generate_series(1, 1000)
	RETURNING id)
SELECT count(*), min(id) > $old_max, min(id) >> $ms_shift > $reserved_at_crash FROM n}),
	'1000|t|t',
	'after the crash every new ID is above every earlier one and past the reservation on disk');

$node->stop;
done_testing();
