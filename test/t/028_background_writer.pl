# Copyright: see LICENSE
#
# 028_background_writer.pl
#	The background writer keeps the reservation ahead, so callers do not
#	wait for the disk, and the guarantees do not move.
#
# Proves, with counters and IDs rather than timings:
#  - pg_stat_activity shows the writer by name; on a fresh data directory it
#    applies the floor itself, before any call;
#  - calls at about 2 a second for 10 s: after the first, no caller writes
#    the reservation (today's code wrote for nearly every call), also with
#    every state file fsync slowed by the fault shim;
#  - idle (no ID for snowflake.writer_idle_timeout): no write at all while
#    the clock runs well past the reservation;
#  - the writer's writes failing: logged once, the caller's fallback
#    reports the error as without the writer, and recovery once it clears;
#  - the writer stopped with SIGSTOP: calls go on, callers write;
#  - the writer ended with pg_terminate_backend(): the postmaster starts
#    another by itself, which keeps the reservation ahead; at shutdown the
#    writer exits with code 0 and is not restarted;
#  - the writer, and a backend, killed with SIGKILL while held at each step
#    of a write (before the rename, at it, before the directory fsync):
#    after the crash restart the writer is back and every ID is above every
#    earlier one;
#  - a standby runs no writer; once promoted, the writer applies the floor
#    before anything is asked of it;
#  - a clean shutdown records the exact last ID, after the writer is gone.
# fsync is on: with fsync = off, PostgreSQL's pg_fsync() never calls fsync.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use JSON::PP qw(decode_json);
use Time::HiRes;

my $node = start_snowflake_node(
	'background_writer',
	node_id => 11,
	settings => {
		'snowflake.writer_idle_timeout' => '2s',
		fsync => 'on',
		restart_after_crash => 'on',
		wal_level => 'replica',
		max_wal_senders => '4'
	},
	with => 'shim');

# Wait until the clock has passed the reservation (plus $extra, an interval):
# the writer keeps it ahead while it is active, so this means it stopped.
sub wait_past_reservation
{
	my ($n, $extra) = @_;
	$extra //= '0';
	return $n->poll_query_until('postgres',
		"SELECT clock_timestamp() > reserved_until + interval '$extra' FROM snowflake_stats"
	);
}

# Issue $count IDs one by one in session $sess, $pause seconds apart (the
# workload's pace, not a wait for anything); return the largest.  The
# sections that count who wrote the reservation issue their first call,
# read the counters and issue the calls they count in one open session:
# the writer, woken by the first call, stays active for
# snowflake.writer_idle_timeout (2 s) only, which the starts of new
# processes in between could use up on a busy machine.
sub calls_in
{
	my ($sess, $count, $pause) = @_;
	my $max = -1;
	for my $i (1 .. $count)
	{
		my $id = query_value($sess, 'SELECT snowflake_nextval()');
		$max = $id if $id > $max;
		Time::HiRes::sleep($pause) if $i < $count;
	}
	return $max;
}

# The snowflake_stats row as a hash, read in session $sess.
sub stats_in
{
	my ($sess) = @_;
	return decode_json(
		query_value($sess, 'SELECT row_to_json(s) FROM snowflake_stats s'));
}

# --- the writer runs, and applies a new data directory's floor itself ---

my $log_offset = 0;
my $pid = writer_pid($node);
ok(defined $pid, 'pg_stat_activity shows the snowflake reservation writer');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
ok( $node->poll_query_until('postgres',
		'SELECT background_writes >= 1 FROM snowflake_stats'),
	'the writer applied the floor of a new data directory');
ok( log_appears(
		$node,
		qr/LOG:  snowflake IDs resume at \d+ ms past the clock, because the server started\n/,
		$log_offset),
	'the floor is logged');
my $st = stats($node);
is($st->{ids_issued}, 0, 'the floor was applied before any ID was asked for');
is($st->{caller_writes}, 0, 'no caller wrote');
is($st->{reservation_writes},
	$st->{background_writes} + $st->{caller_writes},
	'reservation_writes counts both kinds');

# The floor's lead (max_drift_ms) passes while nobody asks.
ok( $node->poll_query_until('postgres',
		'SELECT lead_ms <= 0 FROM snowflake_stats'),
	'the floor\'s lead has passed');

# --- everyday rates: about two calls a second ---

my $calls = $node->background_psql('postgres');
my $max_id = calls_in($calls, 1, 0);
my $before = stats_in($calls);
$max_id = calls_in($calls, 20, 0.5);
my $after = stats_in($calls);
is($after->{ids_issued} - $before->{ids_issued}, 20, '20 calls issued');
is($after->{caller_writes}, $before->{caller_writes},
	'2 calls a second for 10 s: no caller wrote the reservation');
cmp_ok($after->{background_writes}, '>', $before->{background_writes},
	'the writer did');
is($after->{refused}, 0, 'no call was refused');

# The same with every fsync of the state file slowed (a slow disk).
set_fault('fsync sleep=20', 'dirfsync sleep=20');
$before = stats_in($calls);
my $id = calls_in($calls, 20, 0.5);
ok($id > $max_id, 'IDs keep increasing');
$max_id = $id;
$after = stats_in($calls);
$calls->quit;
is($after->{caller_writes}, $before->{caller_writes},
	'slow fsyncs: no caller wrote the reservation');
cmp_ok($after->{background_writes}, '>', $before->{background_writes},
	'slow fsyncs: the writer did');
set_fault();

# --- idle: nothing is written ---

ok(wait_past_reservation($node), 'idle: the writer let the reservation lapse');
$before = stats($node);
ok(wait_past_reservation($node, '3 s'),
	'idle: the clock ran 3 s further');
$after = stats($node);
is($after->{reservation_writes}, $before->{reservation_writes},
	'idle: no reservation write at all');
is($after->{reserved_until}, $before->{reserved_until},
	'idle: the reservation did not move');

# The first call after idling writes once, itself, and wakes the writer.
$id = paced_calls($node, 1, 0);
ok($id > $max_id, 'the first ID after idling is above the earlier ones');
$max_id = $id;
$after = stats($node);
is($after->{caller_writes}, $before->{caller_writes} + 1,
	'the first call after idling wrote the reservation itself, once');
cmp_ok($after->{caller_wait_ms}, '>', $before->{caller_wait_ms},
	'caller_wait_ms counts the time it waited for the disk');
# Counted from before the call (the idle writer wrote nothing since, as
# shown above): by the time $after was read, the writer may have written
# already, and gone idle again (on a loaded machine that read took 2.4 s,
# longer than its active time, and a poll for a write after it waited in
# vain).
ok( $node->poll_query_until('postgres',
		"SELECT background_writes > $before->{background_writes} FROM snowflake_stats"
	),
	'the writer, woken by that call, keeps the reservation ahead again');

# --- the writer's writes fail ---

# A session puts its IDs, and so the reservation, most of a second ahead of
# the clock first (three batches of a million): the call it makes once the
# fault is set then finds room in the reservation however slowly the
# machine runs (the writer keeps about 250 ms of room, which the next
# processes' starts could use up on a busy machine).
my $sess = $node->background_psql('postgres');
$sess->query_safe(
	q{DO $$ BEGIN FOR i IN 1..3 LOOP PERFORM snowflake_nextval_batch(1000000) LIMIT 1; END LOOP; END $$}
);
set_fault('fsync EIO');
$log_offset = -s $node->logfile;
$id = query_value($sess, 'SELECT snowflake_nextval()');
ok($id > $max_id, 'an ID within the reservation is still issued');
# The session keeps the writer active, with IDs within the reservation,
# until the clock comes within 200 ms of its end: the writer tries to
# extend it there, and fails.  Then it retries while it is active.
$sess->query_safe(
	q{DO $$
BEGIN
	WHILE clock_timestamp()
		< (SELECT reserved_until FROM snowflake_stats) - interval '200 ms' LOOP
		PERFORM snowflake_nextval();
		PERFORM pg_sleep(0.02);
	END LOOP;
END $$});
$max_id = query_value($sess, 'SELECT snowflake_lastval()');
$sess->quit;
ok( log_appears(
		$node,
		qr/LOG:  could not fsync file "snowflake\.state\.tmp": Input\/output error\n[^\n]*DETAIL:  The snowflake reservation could not be extended ahead of need/,
		$log_offset),
	'the writer logged why it could not write');
$before = stats($node);
# Nothing extends the reservation now: the clock passes it.
ok(wait_past_reservation($node, '1 s'),
	'the failing writer could not keep the reservation ahead');
is( error_report($node, 'SELECT snowflake_nextval()'),
	"58030: could not fsync file \"snowflake.state.tmp\": Input/output error\n"
	  . 'DETAIL:  The snowflake reservation could not be made durable, so no ID was issued.',
	'a call that needs the reservation reports the error, as without the writer'
);
my $lines = () =
  slurp_file($node->logfile, $log_offset) =~
  /could not be extended ahead of need/g;
is($lines, 1, 'once, although it retried (at most once a minute)');
$after = stats($node);
is($after->{reserved_until}, $before->{reserved_until},
	'the reservation did not move');
is($after->{refused}, $before->{refused} + 1, 'the one call was refused');
set_fault();
$id = paced_calls($node, 1, 0);
ok($id > $max_id, 'generation resumes once the fault clears');
$max_id = $id;

# --- the writer stopped ---

ok(wait_past_reservation($node), 'the writer went idle');
$pid = writer_pid($node);
ok(kill('STOP', $pid), 'the writer is stopped with SIGSTOP');
$before = stats($node);
# Four batches of a million span about a second of ID time: more than one
# reservation, so the callers must write more than once.
my $batches = $node->safe_psql(
	'postgres', q{
SELECT count(*), count(DISTINCT x), min(x) FROM (
	SELECT snowflake_nextval_batch(1000000) x
	UNION ALL SELECT snowflake_nextval_batch(1000000)
	UNION ALL SELECT snowflake_nextval_batch(1000000)
	UNION ALL SELECT snowflake_nextval_batch(1000000)) b});
my ($n_ids, $n_distinct, $min_batch) = split /\|/, $batches;
is("$n_ids|$n_distinct", '4000000|4000000',
	'with the writer stopped, four batches are issued whole');
ok($min_batch > $max_id, 'above every earlier ID');
$after = stats($node);
cmp_ok($after->{caller_writes}, '>=', $before->{caller_writes} + 2,
	'the callers wrote the reservations themselves');
is($after->{background_writes}, $before->{background_writes},
	'the stopped writer wrote nothing');
ok(kill('CONT', $pid), 'the writer continues');
$max_id = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');

# --- SIGKILL at each step of a write, of the writer and of a backend ---

# Which step of the write a process is held at, and what is on disk then.
my @steps = (
	[ 'fsync', 'before the rename' ],
	[ 'rename', 'at the rename' ],
	[ 'dirfsync', 'after the rename, before the directory fsync' ],);

# Both the writer and a calling backend can reach a write, and which of
# them gets there first depends on the clock and on when each of them runs
# (on a busy machine a call found the reservation lapsed and was held
# instead of the writer).  So each case gives its faults to one process
# only (the shim's "pid="), and makes that process's write certain:
#  - the writer's case holds the writer's writes alone; a session issues
#    IDs, every 50 ms, each committed as it is issued, which keeps the
#    writer active, so that it extends the reservation and is held.  Its
#    calls write for themselves if need be, unhindered, until the held
#    writer's lock stops them (the test waits for that, so that every ID
#    the session was given is in table called);
#  - the backend's case makes every write of the writer fail at once (its
#    open, "open EACCES" for it alone): the reservation lapses and stays
#    lapsed, so that the next call must write itself, and only that
#    call's write is held.
$node->safe_psql('postgres', 'CREATE TABLE called (id bigint)');

foreach my $who ('writer', 'backend')
{
	foreach my $step (@steps)
	{
		my ($what, $when) = @$step;
		my $case = "$who killed $when";
		my $wpid = writer_pid($node);
		my $sess = $node->background_psql('postgres', on_error_stop => 0);
		my $bpid = query_value($sess, 'SELECT pg_backend_pid()');
		my $held;

		if ($who eq 'writer')
		{
			set_fault("$what hold pid=$wpid");
			$sess->query_until(
				qr/started/, q{\echo started
DO $$
BEGIN
	LOOP
		INSERT INTO called VALUES (snowflake_nextval());
		COMMIT;
		PERFORM pg_sleep(0.05);
	END LOOP;
END $$;
});
			$held = wait_for_held();
			is($held, $wpid, "$case: the writer is held in its write");
			my $event = $node->safe_psql('postgres',
				"SELECT wait_event_type || '|' || wait_event FROM pg_stat_activity WHERE pid = $wpid"
			);
			if ($node->pg_version >= 17)
			{
				like($event, qr/^Extension\|SnowflakeStateWrite$/,
					"$case: it shows its wait event");
			}
			else
			{
				is($event, 'Extension|Extension', "$case: it shows its wait event");
			}
			# The reservation cannot move while the writer holds the lock:
			# once the clock has passed it, the next call waits.
			ok( $node->poll_query_until(
					'postgres', qq{
SELECT wait_event_type = 'LWLock' AND wait_event ~* 'snowflake'
FROM pg_stat_activity WHERE pid = $bpid}),
				"$case: a call that needs the reservation waits for the writer's lock"
			);
		}
		else
		{
			set_fault("open EACCES pid=$wpid");
			ok(wait_past_reservation($node),
				"$case: the reservation lapsed, the writer unable to extend it");
			set_fault("open EACCES pid=$wpid", "$what hold pid=$bpid");
			$sess->query_until(qr/started/,
				"\\echo started\nSELECT snowflake_nextval();\n");
			$held = wait_for_held();
			is($held, $bpid, "$case: the calling backend is held in its write");
		}
		my $disk = read_state($node);
		my $log_offset = -s $node->logfile;
		ok(kill('KILL', $held), "$case: SIGKILL sent");
		set_fault();
		# A process killed while held leaves its marker behind.
		unlink(fault_marker());
		# The crash restart ends every session, this one's too.
		{
			local $SIG{PIPE} = 'IGNORE';
			eval { $sess->quit; };
		}
		# Connections are refused until the restart is over: wait for it
		# in the log, then ask the server.
		ok(crash_restarted($node, $log_offset),
			"$case: the server restarted after the crash");
		ok( $node->poll_query_until('postgres',
				"SELECT status = 'ready' FROM snowflake_stats"),
			"$case: the generator is ready");
		my $new_wpid = writer_pid($node);
		ok(defined $new_wpid && $new_wpid != $held,
			"$case: the writer runs again");
		ok(!-e $node->data_dir . '/snowflake.state.tmp',
			"$case: no temporary file is left");
		cmp_ok(read_state($node)->{reserved_ms}, '>=', $disk->{reserved_ms},
			"$case: the reservation on disk did not go back");
		my $called = $node->safe_psql('postgres', 'SELECT max(id) FROM called');
		$max_id = $called if $called ne '' && $called > $max_id;
		$id = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
		ok($id > $max_id, "$case: the next ID is above every earlier one");
		$max_id = $id;
	}
}

# --- ended with pg_terminate_backend(), the writer comes back by itself ---

{
	my $old = writer_pid($node);
	$log_offset = -s $node->logfile;
	is( $node->safe_psql('postgres', "SELECT pg_terminate_backend($old)"),
		't', 'pg_terminate_backend() ends the writer');
	ok( log_appears(
			$node,
			qr/LOG:  terminating snowflake reservation writer due to administrator command/,
			$log_offset),
		'it says why it exits');
	my $new = writer_pid($node, $old);
	ok(defined $new && $new != $old,
		'the postmaster starts another writer, with no restart of the server');
	is(writers_running($node), '1', 'one writer runs');
	# The new writer keeps the reservation ahead, as the first did.
	ok(wait_past_reservation($node), 'the reservation lapsed meanwhile');
	my $calls = $node->background_psql('postgres');
	calls_in($calls, 1, 0);
	$before = stats_in($calls);
	$id = calls_in($calls, 10, 0.5);
	ok($id > $max_id, 'IDs keep increasing');
	$max_id = $id;
	$after = stats_in($calls);
	$calls->quit;
	is($after->{caller_writes}, $before->{caller_writes},
		'the new writer keeps the reservation ahead: no caller wrote');
}

# --- a standby runs no writer; promoted, the writer applies the floor ---

$node->backup('bw_backup');
my $standby = start_snowflake_node('bw_standby',
	from_backup => [ $node, 'bw_backup', has_streaming => 1 ]);
$node->wait_for_catchup($standby);
is(writers_running($standby), '0', 'a standby runs no writer');
is(stats($standby)->{background_writes}, 0, 'nor writes anything');
$max_id = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
$log_offset = -s $node->logfile;
$node->stop;
# At shutdown the writer exits quietly, and is not restarted.
ok( !$node->log_contains(
		qr/"snowflake reservation writer" \(PID \d+\) exited with exit code/,
		$log_offset),
	'at shutdown the writer exits with code 0');
$log_offset = -s $standby->logfile;
$standby->promote;
ok(defined writer_pid($standby), 'promoted, the standby runs a writer');
ok( log_appears(
		$standby,
		qr/LOG:  snowflake IDs resume at \d+ ms past the clock, because the server was promoted \(the state file records another timeline\)\n/,
		$log_offset),
	'the writer applied the floor after the promotion');
$st = stats($standby);
is($st->{ids_issued}, 0, 'before any ID was asked for');
is("$st->{background_writes}|$st->{caller_writes}", '1|0',
	'with one write of its own, and none since: the floor is no activity');
ok(wait_past_reservation($standby),
	'the clock passes the floor\'s reservation');
is(stats($standby)->{background_writes}, 1,
	'the writer did not keep it ahead: raising the floor issued no ID');
$id = $standby->safe_psql('postgres', 'SELECT snowflake_nextval()');
ok($id > $max_id, 'the promoted server issues IDs above the old primary\'s');

# --- a clean shutdown records the exact last ID ---

$standby->stop;
my $state = read_state($standby);
my $sb = $st->{sequence_bits};
my $packed = (($id >> ($st->{node_bits} + $sb)) << $sb) | ($id & ((1 << $sb) - 1));
is($state->{last}, $packed, 'a clean shutdown recorded the exact last ID');

done_testing();
