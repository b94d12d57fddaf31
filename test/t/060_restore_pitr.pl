# Copyright: see LICENSE
#
# 060_restore_pitr.pl
#	Point-in-time recovery with no backup tool: WAL archived by
#	archive_command (a copy into an archive directory), a base backup by
#	pg_basebackup taken under insert load, then, the server stopped, the
#	backup restored into a new data directory with restore_command,
#	recovery_target_time set to a moment before keys that clients already
#	hold, and recovery_target_action = 'promote'.  After the restore the
#	checks of RestoreTest.pm: no snowflake ID that any client holds is
#	handed out again, while the bigserial column of the same table hands
#	out again values clients hold; the time from the restored server's
#	start to its first ID and the gap between the last ID before and the
#	first after are printed.  The restored server then takes the load.
#	(pgBackRest and Barman: 061_pgbackrest.pl, 062_barman.pl.)
#	Without the preload (the no-preload pass, 17 and later) the lead is
#	capped at 1 s: the burst's last IDs lead the clock by at most 1 s, and
#	the 10 s snowflake.max_drift_ms draws the capped WARNING; the checks
#	are the same.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use RestoreTest;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

my $dir = PostgreSQL::Test::Utils::tempdir('pitr');
mkdir "$dir/history" or die "mkdir $dir/history: $!";

# PostgreSQL::Test::Cluster's archiving: archive_command copies each WAL
# file into the node's archive directory; a node restored with
# has_restoring gets a restore_command that copies them back, and
# recovery.signal.
my $primary = start_snowflake_node('primary',
	node_id => 1,
	init => { allows_streaming => 1, has_archiving => 1 },
	settings => { restore_primary_settings() });
$primary->safe_psql('postgres', restore_schema());

my $load = start_load("$dir/history");
set_target($load, $primary);
wait_for_rows($load, 300);
$primary->backup('base');
wait_for_rows($load, 300);
my $target_time = $primary->safe_psql('postgres',
	q{SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'});
wait_for_rows($load, 300);
my $segment = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver")
  or die "timed out waiting for $segment to be archived";
wait_for_rows($load, 300);

# A bad change at the target time; a burst puts the last IDs some 5 s
# ahead of the clock (without the preload, at most the capped 1 s); stop
# the server under load and go back.
burst($load, $primary, 5);
$primary->stop;
set_target($load, undef);
my $restored = start_snowflake_node('restored',
	from_backup => [ $primary, 'base', has_restoring => 1 ],
	settings => {
		recovery_target_time => $target_time,
		recovery_target_action => 'promote'
	},
	start => 0);
my $offset = -s $restored->logfile // 0;
my $t0 = time();
$restored->start;
check_restore($load, 'pg_basebackup and restore_command, point in time', $restored, $t0, $offset);
set_target($load, $restored);
wait_for_rows($load, 300);

stop_load($load);
final_check($load);
$restored->stop;

done_testing();
