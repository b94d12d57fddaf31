# Copyright: see LICENSE
#
# 027_early_write.pl
#	A call whose IDs are issued never raises an error.
#
# Once issued IDs come within 250 ms of the reservation, the calling backend
# writes the next reservation ahead of need, after its own IDs are already
# committed to shared memory.  If that write fails, the call must still
# return its IDs: the failure is logged (at most once a minute) and the
# write is retried by the next call that needs it; only that mandatory
# write, made before anything is handed out, may raise.
#
# The server allows a lead of 30 s, and its first ID is placed 30 s past
# the clock (a new data directory), so the reservation is consumed by the
# IDs issued, not by the clock: which call writes early and which must
# write is decided by counting IDs alone.  A batch of a million spans 245 ms.
# Without the preload the lead is capped at 1 s: the first ID is placed
# 1 s past the clock, and each batch waits (up to max_wait_ms, 1 s) until it
# leads by no more than 1 s; the IDs still lead the clock, so counting them
# still decides.
# The background writer is off: with it on, a caller crossing the renewal
# point wakes the writer instead of writing early (028_background_writer.pl
# tests the writer's failed writes); off, callers write early themselves.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node(
	'early_write',
	node_id => 9,
	settings => {
		'snowflake.max_drift_ms' => '30s',
		'snowflake.background_writer' => 'off',
		fsync => 'on'
	},
	with => 'shim');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

my $batch = 'SELECT count(*) FROM (SELECT snowflake_nextval_batch(1000000) LIMIT 1) s';

# The first ID takes the floor: the reservation ends 500 ms past it.
$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
my $st0 = stats($node);
if (no_preload())
{
	# The lead is capped at 1 s: so is the floor the first ID takes.
	ok($st0->{lead_ms} > 0 && $st0->{lead_ms} <= 1000,
		"no preload: the first ID leads the clock by the floor, within the 1 s cap ($st0->{lead_ms} ms)");
}
else
{
	cmp_ok($st0->{lead_ms}, '>', 20000, 'the first ID leads the clock by the floor');
}
my $disk0 = read_state($node)->{reserved_ms};

# The first batch ends 245 ms into the reservation: no write.  The second
# ends within 250 ms of its end: it writes early, and the write fails.
set_fault('fsync EIO');
my $log_offset = -s $node->logfile;
is($node->safe_psql('postgres', $batch), '1', 'first batch issued');
is($node->safe_psql('postgres', $batch), '1',
	'second batch issued although its early reservation write failed');
my $st1 = stats($node);
is($st1->{ids_issued}, $st0->{ids_issued} + 2000000,
	'both batches were issued whole');
is($st1->{refused}, 0, 'no call was refused');
is($st1->{reserved_until}, $st0->{reserved_until},
	'the durable reservation did not move');
is(read_state($node)->{reserved_ms}, $disk0, 'nor did the one on disk');
ok( log_appears(
		$node,
		qr/LOG:  could not fsync file "snowflake\.state\.tmp": Input\/output error\n[^\n]*DETAIL:  The snowflake reservation could not be extended ahead of need; a call that finds it used up will retry and report the error\./,
		$log_offset),
	'the failed early write is logged with the reason');

# The third batch needs the reservation: the mandatory write raises.
is( error_report($node, $batch),
	"58030: could not fsync file \"snowflake.state.tmp\": Input/output error\n"
	  . 'DETAIL:  The snowflake reservation could not be made durable, so no ID was issued.',
	'a call that needs the reservation fails with the reason');
my $st2 = stats($node);
is("$st2->{ids_issued}|$st2->{refused}", "$st1->{ids_issued}|1",
	'that call issued nothing');

# The fault cleared: the next call writes, and issues.
set_fault();
is($node->safe_psql('postgres', $batch), '1', 'fault cleared: the call succeeds');
my $st3 = stats($node);
cmp_ok($st3->{reservation_writes}, '>', $st2->{reservation_writes},
	'the reservation was written');

# Another early failure within the minute is not logged again.  Two more
# batches bring the IDs within 250 ms of the reservation just written.
set_fault('fsync EIO');
is($node->safe_psql('postgres', "$batch; $batch"), "1\n1",
	'two more batches issued, the second writing early and failing');
my $count = () = slurp_file($node->logfile, $log_offset) =~
  /could not be extended ahead of need/g;
is($count, 1, 'the repeated early failure is not logged twice within a minute');
is(stats($node)->{reserved_until}, $st3->{reserved_until},
	'the reservation did not move with the failed early write');

set_fault();
$node->stop;
done_testing();
