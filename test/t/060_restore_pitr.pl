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
#	(pgBackRest and Barman: 061_pgbackrest.pl, 062_barman.pl.)  Then a
#	restore whose recovery target lies past the archive's end stops its
#	server, and the wait for the promotion of docs/operations.md
#	(backup/wait-promoted.sh, read from the page) fails by itself, saying
#	so, rather than after its 10 minutes.
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
use File::Basename ();
use File::Spec;
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

# A restore whose target is not reached (a time after the archive's end)
# stops the server; the page's wait for the promotion (docs/operations.md,
# backup/wait-promoted.sh, read from the page) then fails by itself,
# saying so, instead of after its 10 minutes.
my %recipes = doc_recipes(File::Spec->rel2abs(File::Basename::dirname(__FILE__) . '/../../docs/operations.md'));
my $missed = start_snowflake_node('missed_target',
	from_backup => [ $primary, 'base', has_restoring => 1, standby => 0 ],
	settings => {
		recovery_target_time => '2999-01-01 00:00:00+00',
		recovery_target_action => 'promote',
		archive_mode => 'off'
	},
	start => 0);
# Started without waiting, as the node's own start would wait: pg_ctl may
# report it started (consistent, it accepts read-only connections) an
# instant before recovery reaches the archive's end and the server exits,
# and the node would then look for a postmaster.pid already gone.  The log
# is created first (pg_ctl appends to it): the wait below reads it at once.
open my $missed_log, '>', $missed->logfile or die 'could not create ' . $missed->logfile . ": $!";
close $missed_log;
PostgreSQL::Test::Utils::system_or_bail('pg_ctl', '-W', '-D', $missed->data_dir, '-l', $missed->logfile,
	'-o', '--cluster-name=missed_target', 'start');
ok( $missed->wait_for_log(qr/FATAL:  recovery ended before configured recovery target was reached/),
	'a restore whose target is past the archive stops the server');
my $wait = "$dir/wait-promoted.sh";
open my $fh, '>', $wait or die "could not write $wait: $!";
print $fh $recipes{'backup/wait-promoted.sh'};
close $fh;
my ($ok, $out, $err) = run_in_dir($dir, { PGHOST => $missed->host, PGPORT => $missed->port },
	120, [ 'bash', '-e', '-o', 'pipefail', $wait ]);
ok(!$ok, "the page's wait for the promotion fails");
like($err, qr/^the restored server is not running: its log says why \(a recovery target not reached\?\)$/m,
	'by itself, saying why (not by a timeout)');
unlike($err, qr/timeout/i, 'before any timeout');
foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	last unless -e $missed->data_dir . '/postmaster.pid';
	Time::HiRes::usleep(100_000);
}
$missed->_update_pid(-1);

done_testing();
