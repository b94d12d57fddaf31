# Copyright: see LICENSE
#
# 035_floor_clock_behind.pl
#	A floor applied while the clock is behind the last ID a clean shutdown
#	recorded must still reserve that ID's millisecond.
#
# A clean shutdown records the exact last ID; the next start resumes from
# it with the reservation one millisecond below it, so that the first call
# writes.  If the server then starts in recovery (a floor obligation) with
# its clock set back, the background writer applies the floor at once: its
# write must reach the recorded last ID's millisecond even though the floor
# and the clock lie below it.  Otherwise the file holds a reservation below
# IDs already issued until the writer's next renewal, and a crash in between
# resumes inside their millisecond and issues them again.  (Before the fix
# the file was read here with the reservation one millisecond short.)
#
# The clock is stepped with libfaketime (see 010_restart_clock_back.pl).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

# A lead of 5 s, so that the IDs asked for at the end may run 2 s ahead of
# the clock, inside the last ID's millisecond, however slow the machine.
my $node = start_snowflake_node('floor_clock_behind', node_id => 4,
	init => { allows_streaming => 1 },
	settings => { 'snowflake.max_drift_ms' => 5000 }, with => 'faketime');

# The first life runs with its clock 30 s ahead and ends cleanly: the
# recorded last ID lies 30 s ahead of the real clock.  (The clock is moved
# this way round, and the next life runs on the real time, because on
# PostgreSQL 15 the background writer started at the promotion was seen
# reading the real clock under libfaketime, as were some of the
# postmaster's own log lines: the floor must be applied on a clock that is
# behind whichever clock the writer reads.)
set_clock('+30');
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE issued (id bigint PRIMARY KEY);
INSERT INTO issued SELECT snowflake_nextval() FROM generate_series(1, 20000);
});
my $old_max = $node->safe_psql('postgres', 'SELECT max(id) FROM issued');
# The Unix millisecond of the last ID (default layout and epoch).
my $last_ms = ($old_max >> 22) + 1704067200000;

$node->stop('fast');
my $rec = read_state($node);
is($rec->{last} >> 12, $last_ms - 1704067200000,
	'the clean shutdown recorded the last ID');

# Restart in recovery (a floor obligation) on the real clock, 30 s behind
# the recorded last ID, and promote: the background writer applies the
# floor while the clock is far behind that ID.
set_clock('+0');
$node->append_conf('standby.signal', '');
my $log_offset = -s $node->logfile;
start_faked($node);
$node->promote;
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the server did not leave recovery';
ok( log_appears(
		$node, qr/LOG:  snowflake IDs resume at -?\d+ ms past the clock, because/,
		$log_offset),
	'the background writer applied the floor with the clock behind');
$rec = read_state($node);
cmp_ok($rec->{reserved_ms}, '>=', $last_ms - 1704067200000,
	"the floor's write reserves the last ID's millisecond");

# A crash, then the clock 2 s behind the last ID's millisecond: IDs may be
# issued (within the 5 s lead), and must all lie above the old ones.
$node->stop('immediate');
start_faked($node);
$node->poll_query_until('postgres', "SELECT status = 'ready' FROM snowflake_stats")
  or die 'the generator is not ready';
set_clock(sprintf('%+.3f', ($last_ms - 2000) / 1000 - Time::HiRes::time()));
my ($sqlstate, $stderr) = sql_error($node,
	'INSERT INTO issued SELECT snowflake_nextval() FROM generate_series(1, 100)');
is($sqlstate, 'none', 'after the crash, new IDs go in without a duplicate key')
  or diag($stderr);
is( $node->safe_psql('postgres',
		"SELECT count(*) = 20100 AND count(*) FILTER (WHERE id > $old_max) = 100 FROM issued"),
	't', 'every new ID lies above every ID issued before the clean shutdown');
set_clock('+0');
$node->stop;

done_testing();
