# Copyright: see LICENSE
#
# 061_pgbackrest.pl
#	pgBackRest, with the configuration and commands of docs/operations.md
#	("Backups and restores", the blocks marked
#	<!-- recipe: backup/pgbackrest... -->), run as the page shows them with
#	its example paths and port replaced by this test's: a local
#	repository, WAL archived by archive_command = pgbackrest archive-push,
#	a full and a differential backup taken under insert load.  Then, one
#	after the other, each restored server taking the load before the next
#	restore:
#	  - the data directory is lost (the server stopped with -m immediate,
#	    its directory emptied) after rows whose WAL was not archived yet:
#	    the latest restore;
#	  - point-in-time recovery to a time;
#	  - point-in-time recovery to a restore point (pg_create_restore_point).
#	After each restore the page's wait for the promotion
#	(backup/wait-promoted.sh), then the checks of RestoreTest.pm, the
#	first call not refused for recovery: no snowflake ID that
#	any client holds is handed out again, while the bigserial column of
#	the same table hands out again values clients hold; the time from the
#	restored server's start to its first ID and the gap between the last
#	ID before and the first after are printed.
#
#	pgBackRest's settings outside its configuration file come from the
#	environment, which the server's archive_command inherits:
#	PGBACKREST_CONFIG (the page's file, in the test's directory),
#	PGBACKREST_LOG_PATH and PGBACKREST_LOCK_PATH.  Without pgBackRest
#	(`pgbackrest version` fails) the file skips, saying so; test/check.sh
#	accepts that only where the scripts were told not to install it
#	(SF_BACKUP_TOOLS=0, the default of the chroots).  Where pgBackRest
#	does not support the server's major (Debian 12's 2.45 and a PostgreSQL
#	16 built from source: "unexpected control version"), the page's first
#	step says so, and the file skips, saying "pgbackrest VERSION does not
#	support PostgreSQL N"; test/check.sh accepts that only for a server
#	built from source.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Path qw(rmtree);
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use RestoreTest;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

# Where the tool is not installed (test/setup.sh installs it unless
# SF_BACKUP_TOOLS=0), the file skips; test/check.sh accepts that only
# where no package was installed for it (SF_TEST_PROVIDES).
skip_without_command('pgbackrest');
my $version = `pgbackrest version 2>&1`;
die "pgbackrest version failed (exit status " . ($? >> 8) . "): $version" if $? != 0;
chomp $version;
note($version);

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my %recipes = doc_recipes("$root/docs/operations.md");
my @steps = qw(pgbackrest.conf pgbackrest-postgresql.conf pgbackrest-stanza.sh
  pgbackrest-full.sh pgbackrest-diff.sh pgbackrest-restore-latest.sh
  pgbackrest-restore-time.sh pgbackrest-restore-point-create.sh
  pgbackrest-restore-point.sh);

my $dir = PostgreSQL::Test::Utils::tempdir('pgbackrest');
mkdir "$dir/$_" or die "mkdir $dir/$_: $!" foreach qw(repo log lock history);
$ENV{PGBACKREST_CONFIG} = "$dir/pgbackrest.conf";
$ENV{PGBACKREST_LOG_PATH} = "$dir/log";
$ENV{PGBACKREST_LOCK_PATH} = "$dir/lock";

my $node = start_snowflake_node('primary',
	node_id => 1,
	init => { allows_streaming => 1 },
	settings => { restore_primary_settings() },
	start => 0);
my %example = (
	'/var/lib/pgbackrest' => "$dir/repo",
	'/var/lib/postgresql/15/main' => $node->data_dir,
	'pg1-port=5432' => 'pg1-port=' . $node->port,
	'/var/run/postgresql' => $node->host);
open my $fh, '>', "$dir/pgbackrest.conf" or die "$dir/pgbackrest.conf: $!";
print $fh doc_config($recipes{'backup/pgbackrest.conf'}, \%example, 1);
close $fh;
$node->append_conf('postgresql.conf', $recipes{'backup/pgbackrest-postgresql.conf'});
$node->start;
$node->safe_psql('postgres', restore_schema());

# Run the page's step $name under $label (bounded: 300 s).
my %env = (PGHOST => $node->host, PGPORT => $node->port);
sub step
{
	my ($label, $name, %more) = @_;
	return run_tool("$label: the page's $name runs",
		doc_config($recipes{"backup/$name"}, \%example), { %env, %more }, 300);
}

# The page's first step asks pgBackRest about the server: where it does
# not support this major, the file skips, saying so (before any test).
{
	my ($out, $err) = ('', '');
	local @ENV{ keys %env } = values %env;
	my $ok = IPC::Run::run([ 'bash', '-e', '-o', 'pipefail', '-c',
			doc_config($recipes{'backup/pgbackrest-stanza.sh'}, \%example) ],
		'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(300));
	if (!$ok && "$out$err" =~ /(unexpected control version[^\n]*)/)
	{
		my $why = $1;
		my $major = int($node->safe_psql('postgres', 'SHOW server_version_num') / 10000);
		(my $v = $version) =~ s/^pgBackRest //;
		plan skip_all => "pgbackrest $v does not support PostgreSQL $major (stanza-create: $why)";
	}
	ok($ok, "stanza: the page's pgbackrest-stanza.sh runs")
	  or die "pgbackrest-stanza.sh failed:\n$out$err";
}
is( join(' ', sort grep { m{^backup/(pgbackrest|wait)} } keys %recipes),
	join(' ', sort map { "backup/$_" } @steps, 'wait-promoted.sh'),
	'docs/operations.md has every pgBackRest step this test runs, and the wait for the promotion');
my $load = start_load("$dir/history");
set_target($load, $node);
wait_for_rows($load, 300);
step('full backup under load', 'pgbackrest-full.sh');
wait_for_rows($load, 300);
step('differential backup under load', 'pgbackrest-diff.sh');
wait_for_rows($load, 300);
step('restore point', 'pgbackrest-restore-point-create.sh');
wait_for_rows($load, 300);
my $target_time = $node->safe_psql('postgres',
	q{SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'});
wait_for_rows($load, 300);
# The WAL so far goes to the repository; the rows after it are only in the
# data directory that is then lost.
my $segment = $node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$node->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$segment' FROM pg_stat_archiver")
  or die "timed out waiting for $segment to be archived";
wait_for_rows($load, 300);

# A burst that puts the last IDs some 5 s ahead of the clock, then stop
# the server under load (-m immediate or fast), restore by the page's step
# $name into its data directory, emptied first if $empty, and start it;
# then the checks after a restore.
sub restore
{
	my ($label, $name, $mode, $empty, %more) = @_;
	burst($load, $node, 5);
	$node->stop($mode);
	set_target($load, undef);
	if ($empty)
	{
		rmtree($node->data_dir);
		mkdir($node->data_dir, 0700) or die 'mkdir ' . $node->data_dir . ": $!";
	}
	step($label, $name, %more);
	my $offset = -s $node->logfile;
	my $t0 = time();
	$node->start;
	step($label, 'wait-promoted.sh');
	check_restore($load, $label, $node, $t0, $offset, 1);
	set_target($load, $node);
	wait_for_rows($load, 300);
	return;
}

restore('pgBackRest, the latest after the data directory was lost',
	'pgbackrest-restore-latest.sh', 'immediate', 1);
restore('pgBackRest, point in time', 'pgbackrest-restore-time.sh', 'fast', 0,
	TARGET_TIME => $target_time);
restore('pgBackRest, restore point', 'pgbackrest-restore-point.sh', 'fast', 0);

stop_load($load);
final_check($load);
$node->stop;

done_testing();
