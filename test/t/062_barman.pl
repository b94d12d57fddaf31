# Copyright: see LICENSE
#
# 062_barman.pl
#	Barman on the database server, without ssh, with the configuration
#	and commands of docs/operations.md ("Backups and restores", the blocks
#	marked <!-- recipe: backup/barman... -->), run as the page shows them
#	with its example paths, port and user replaced by this test's:
#	backup_method = postgres (pg_basebackup) and the streaming archiver
#	(pg_receivewal through a replication slot), a backup taken under
#	insert load, then `barman recover --target-time` to a time before keys
#	that clients already hold, into the emptied data directory of the
#	stopped server.  After the restore the checks of RestoreTest.pm: no
#	snowflake ID that any client holds is handed out again, while the
#	bigserial column of the same table hands out again values clients
#	hold; the time from the restored server's start to its first ID and
#	the gap between the last ID before and the first after are printed.
#
#	Barman runs as the test's user, with the page's configuration files in
#	the test's directory (BARMAN_CONFIG_FILE, which `barman -c` would
#	name), its home and log there too.  The page's commands run in the
#	page's order: the slot, then `barman cron` (which starts `barman
#	receive-wal pg` in the background; the test stops it at the end by the
#	PID its lock file holds), then `barman switch-wal --archive`, which
#	fails without a receiver.  After the restore, the page's wait for the
#	promotion (backup/wait-promoted.sh), and the first call must not be
#	refused for recovery.
#	Without Barman (`barman --version` fails) the file skips, saying so;
#	test/check.sh accepts that only where the scripts were told not to
#	install it (SF_BACKUP_TOOLS=0, the default of the chroots).

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use RestoreTest;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

# Where the tool is not installed (test/setup.sh installs it unless
# SF_BACKUP_TOOLS=0), the file skips; test/check.sh accepts that only
# where no package was installed for it (SF_TEST_PROVIDES).
skip_without_command('barman');
my $version = `barman --version 2>&1`;
die "barman --version failed (exit status " . ($? >> 8) . "): $version" if $? != 0;
chomp $version;
note("Barman $version");

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my %recipes = doc_recipes("$root/docs/operations.md");
my @steps = qw(barman.conf barman-pg.conf barman-slot.sh barman-check.sh
  barman-backup.sh barman-recover.sh);
is( join(' ', sort grep { m{^backup/(barman|wait)} } keys %recipes),
	join(' ', sort map { "backup/$_" } @steps, 'wait-promoted.sh'),
	'docs/operations.md has every Barman step this test runs, and the wait for the promotion');

my $dir = PostgreSQL::Test::Utils::tempdir('barman');
mkdir "$dir/$_" or die "mkdir $dir/$_: $!" foreach qw(home barman.d history);

my $node = start_snowflake_node('primary',
	node_id => 1,
	init => { allows_streaming => 1 },
	settings => { restore_primary_settings() });
$node->safe_psql('postgres', restore_schema());
my $user = getpwuid($<);
my $bindir = `pg_config --bindir`;
die 'pg_config --bindir failed' if $? != 0;
chomp $bindir;
my %global = (
	'barman_user = postgres' => "barman_user = $user",
	'/var/lib/barman' => "$dir/home",
	'/var/log/barman/barman.log' => "$dir/barman.log",
	'/etc/barman.d' => "$dir/barman.d");
my %server = (
	'host=/var/run/postgresql' => 'host=' . $node->host,
	'port=5432' => 'port=' . $node->port,
	'user=postgres' => "user=$user",
	'/usr/lib/postgresql/15/bin' => $bindir);
my %example = (%global, %server, '/var/lib/postgresql/15/main' => $node->data_dir);
foreach my $file ([ 'barman.conf', 'barman.conf', \%global ],
	[ 'barman-pg.conf', 'barman.d/pg.conf', \%server ])
{
	open my $fh, '>', "$dir/$file->[1]" or die "$dir/$file->[1]: $!";
	print $fh doc_config($recipes{"backup/$file->[0]"}, $file->[2], 1);
	close $fh;
}
my %env = (BARMAN_CONFIG_FILE => "$dir/barman.conf");

# Run the page's step $name under $label (bounded: 300 s).
sub step
{
	my ($label, $name, %more) = @_;
	return run_tool("$label: the page's $name runs",
		doc_config($recipes{"backup/$name"}, \%example), { %env, %more }, 300);
}

# The slot, and barman cron, which starts the WAL receiver in the
# background; its PID is in its lock file.
step('replication slot and barman cron', 'barman-slot.sh');
my $lock = "$dir/home/.pg-receive-wal.lock";
my $receiver;
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_replication WHERE application_name = 'barman_receive_wal'")
  or die 'barman cron started no WAL receiver that connected: '
  . (-e "$dir/barman.log" ? PostgreSQL::Test::Utils::slurp_file("$dir/barman.log") : '');
($receiver) = PostgreSQL::Test::Utils::slurp_file($lock) =~ /^(\d+)$/m
  or die "no PID in $lock";

# Stop the receiver by its PID: SIGTERM (it passes it on to its
# pg_receivewal), then SIGKILL if it still runs after 30 s.
sub stop_receiver
{
	return unless $receiver && kill(0, $receiver);
	kill('TERM', $receiver);
	my $deadline = time() + 30;
	while (time() < $deadline && kill(0, $receiver))
	{
		Time::HiRes::sleep(0.1);
	}
	kill('KILL', $receiver) if kill(0, $receiver);
	undef $receiver;
	return;
}
# Stopped by its PID if the file ends early, before the servers are.
END { stop_receiver(); }
# Under load from here on: the check waits for the WAL file it closed,
# which the receiver finishes only once later WAL comes.
my $load = start_load("$dir/history");
set_target($load, $node);
wait_for_rows($load, 300);
step('archiving', 'barman-check.sh');
step('backup under load', 'barman-backup.sh');
wait_for_rows($load, 300);
my $target_time = $node->safe_psql('postgres',
	q{SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'});
wait_for_rows($load, 300);
# The page's step before a point-in-time recovery, while the server runs.
step('the WAL up to now archived', 'barman-check.sh');
wait_for_rows($load, 300);

# A burst that puts the last IDs some 5 s ahead of the clock; stop the
# server under load and the WAL receiver (by its PID; it passes SIGTERM on
# to its pg_receivewal), move the data directory aside and recover into an
# empty one.
burst($load, $node, 5);
$node->stop;
set_target($load, undef);
stop_receiver();
rename($node->data_dir, $node->data_dir . '.old')
  or die 'rename ' . $node->data_dir . ": $!";
mkdir($node->data_dir, 0700) or die 'mkdir ' . $node->data_dir . ": $!";
my $label = 'Barman, point in time';
step($label, 'barman-recover.sh', TARGET_TIME => $target_time);
my $offset = -s $node->logfile;
my $t0 = time();
$node->start;
step($label, 'wait-promoted.sh', PGHOST => $node->host, PGPORT => $node->port);
check_restore($load, $label, $node, $t0, $offset, 1);
set_target($load, $node);
wait_for_rows($load, 300);

stop_load($load);
final_check($load);
$node->stop;

done_testing();
