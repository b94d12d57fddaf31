# Copyright: see LICENSE
#
# 038_floor_obligation.pl
#	A floor, once owed, is never forgotten: restores and copies of a data
#	directory never reissue an ID.
#
# Every server here allows IDs to lead its clock by 60 s, and the primary
# mints batches of a million IDs (each a run of consecutive IDs of its node,
# checked below) after its data directory was copied, then is lost.  The
# copy is started in its place, and its IDs are compared with the
# primary's: none may be equal.
#  - A base backup started as a primary while the state file cannot be
#    written (the fault shim: "open EACCES"): its calls are refused, its
#    recovery renames backup_label; stopped, the cause removed, started
#    again, it mints: no key shared with the primary (issue 41).
#  - The same with a standby built from the backup, its first start failing
#    the same way, later started as a primary without standby.signal.
#  - A volume snapshot: the whole server stopped with SIGSTOP while it
#    inserts under load, its data directory copied (an atomic, crash-
#    consistent image, as a disk snapshot takes), then the server goes on
#    and is lost; the copy restored in place mints: no key shared, and the
#    log says why the floor applies (issue 36).
#  - A crash (the postmaster killed with SIGKILL) applies the floor; a
#    clean restart, busy or idle, does not (with the preload).
# In the no-preload pass (17 and later) the same holds: without the preload
# every server start applies the floor at the first use, since a start
# cannot be seen.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;
use Time::HiRes;
use File::Path ();

my $lead = 60000;
my %settings = (
	'snowflake.max_drift_ms' => $lead,
	'snowflake.max_wait_ms' => '5s',
	restart_after_crash => 'on');

# The default layout: a packed value (ms << 12 | sequence) of an ID.
sub packed { my ($id) = @_; return (($id >> 22) << 12) | ($id & 4095); }

# Issue $n batches of a million IDs on $node, one statement each; return
# their ranges [min, max].  Each batch must be a run of consecutive IDs of
# one node (its packed values without a gap), so that every ID of that
# node between min and max is one the batch issued.
sub batches
{
	my ($node, $n) = @_;
	my @ranges;
	my $dense = 0;
	for (1 .. $n)
	{
		my ($lo, $hi, $count) = split /\|/,
		  $node->safe_psql('postgres',
			'SELECT min(x), max(x), count(*) FROM snowflake_nextval_batch(1000000) x');
		$dense++ if packed($hi) - packed($lo) + 1 == $count && $count == 1000000;
		push @ranges, [ $lo, $hi ];
	}
	is($dense, $n, "$n batches of a million consecutive IDs issued by " . $node->name);
	return \@ranges;
}

# How many of the IDs $node mints now in a batch of a million are equal to
# an ID of the ranges (batches of node $node_id, see batches()) or of the
# file $ids_file (one ID a line, if given); "|t" follows if every one is
# above $max.
sub shared_with
{
	my ($node, $node_id, $ranges, $ids_file, $max) = @_;
	my $values = join(',', map { "($_->[0], $_->[1])" } @$ranges);
	my $copy = $ids_file ? "COPY other FROM '$ids_file';" : '';
	return $node->safe_psql(
		'postgres', qq{
CREATE TEMP TABLE minted AS SELECT x FROM snowflake_nextval_batch(1000000) x;
CREATE TEMP TABLE other (id bigint);
$copy
SELECT (SELECT count(*) FROM minted m JOIN (VALUES $values) r(lo, hi)
		ON m.x BETWEEN r.lo AND r.hi AND snowflake_node_id(m.x) = $node_id)
	+ (SELECT count(*) FROM minted JOIN other ON x = id),
	(SELECT min(x) > $max FROM minted)});
}

# Why the floor applies, as the log says, at a start that is not known
# (without the preload, every start).
my $unknown_start =
  'the state file was written before this server started (without the preload, how a server started is not known)';

# The whole message of a floor that could not be recorded, for $reason.
sub unrecorded_floor
{
	my ($reason) = @_;
	return qr/LOG:  could not create file "snowflake\.state\.tmp": Permission denied\n[^\n]*DETAIL:  The snowflake floor of this start \($lead ms past the clock, because \Q$reason\E\) could not be recorded in the state file\. No ID is issued below it: calls that issue IDs write it first, and fail while the file cannot be written\. It stays owed across restarts and crashes until it is written\.\n[^\n]*HINT:  Make the state file in the data directory writable by the server again \(permissions, free space, the disk\); generation then resumes by itself, with no restart\./;
}

# The reason a floor line of $node's log from $offset gives, or ''.
sub floor_reason
{
	my ($node, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	return $log =~ /LOG:  snowflake IDs will resume past the clock plus $lead ms, because ([^\n]*)/
	  ? $1 : '';
}

# Without the preload the floor is decided at the first use: make one.
sub first_use
{
	my ($node) = @_;
	$node->safe_psql('postgres', 'SELECT count(*) FROM snowflake_stats') if no_preload();
	return;
}

my $primary = start_snowflake_node('primary',
	node_id => 1,
	init => { allows_streaming => 1 },
	settings => \%settings);
$primary->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY)');
# A new data directory: its first ID is placed 60 s past the clock.
$primary->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000)');
$primary->backup('before_batches');

# ---------------------------------------------------------------------------
# A base backup started as a primary while the state file cannot be written
# ---------------------------------------------------------------------------

set_fault('open EACCES');
my $restored = start_snowflake_node('restored',
	from_backup => [ $primary, 'before_batches' ],
	with => 'shim');
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restored backup did not leave recovery';
my ($sqlstate, $stderr) = sql_error($restored, 'SELECT snowflake_nextval()');
is($sqlstate, '42501', 'restored, state file unwritable: snowflake_nextval() is refused');
like($stderr, qr/could not create file "snowflake\.state\.tmp": Permission denied/,
	'with the reason');
ok( $restored->log_contains(
		unrecorded_floor(no_preload() ? $unknown_start : 'the server starts from a base backup')),
	'the log says the floor could not be recorded, and what to do');
ok(!-e $restored->data_dir . '/backup_label' && -e $restored->data_dir . '/backup_label.old',
	'its recovery renamed backup_label');
$restored->stop;

# Another copy of the backup, started the same way, then crashed (a backend
# killed: shared memory re-initialised) while the file is still unwritable:
# the floor is still owed, calls still refused.
my $healed = start_snowflake_node('healed',
	from_backup => [ $primary, 'before_batches' ],
	with => 'shim');
$healed->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restored backup did not leave recovery';
first_use($healed);
my $victim = $healed->background_psql('postgres');
my $victim_pid = $victim->query_safe('SELECT pg_backend_pid()');
my $offset = -s $healed->logfile;
kill('KILL', $victim_pid) or die "could not kill $victim_pid";
$healed->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
eval { $victim->quit };
$healed->poll_query_until('postgres', 'SELECT true') or die 'the copy did not come back';
first_use($healed);
ok( $healed->log_contains(
		unrecorded_floor(no_preload() ? $unknown_start : 'the server starts from a base backup'),
		$offset),
	'after a crash re-initialisation the floor is still owed, and its write tried again');
is((sql_error($healed, 'SELECT snowflake_nextval()'))[0],
	'42501', 'and calls are still refused');

# The standby: its first start fails to write the state file the same way.
my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'before_batches', has_streaming => 1 ],
	with => 'shim');
first_use($standby);
ok( $standby->log_contains(qr/could not create file "snowflake\.state\.tmp": Permission denied/),
	'the standby could not write the state file at its first start'
	  . (no_preload() ? ' (its first use)' : ''));

# The primary goes on: 16 batches, far ahead of the clock.
my $ranges = batches($primary, 16);
my $primary_max = $ranges->[-1][1];
$primary->wait_for_catchup($standby);
$primary->stop;
$standby->stop;
set_fault();

# The cause removed while the copy runs: it mints with no restart.
is(shared_with($healed, 1, $ranges, undef, $primary_max), '0|t',
	'a copy whose floor could not be written, cause removed: it mints with no restart, no key shared');
like( slurp_file($healed->logfile, $offset),
	qr/LOG:  snowflake IDs resume at \d+ ms past the clock, because \Q@{[ no_preload() ? $unknown_start : 'the server starts from a base backup' ]}\E/,
	'its first call applied the floor');
$healed->stop;

$offset = -s $restored->logfile;
$restored->start;
is(shared_with($restored, 1, $ranges, undef, $primary_max), '0|t',
	'restored, stopped, cause removed, started again: no key shared with the primary');
is( floor_reason($restored, $offset),
	no_preload() ? $unknown_start : 'the state file was not written at the server\'s last shutdown',
	'the floor is logged with why');
$restored->stop;

unlink($standby->data_dir . '/standby.signal') or die "standby.signal: $!";
$offset = -s $standby->logfile;
$standby->start;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f',
	'the former standby runs as a primary, without a promotion');
is(shared_with($standby, 1, $ranges, undef, $primary_max), '0|t',
	'former standby started as a primary: no key shared with the primary');
is( floor_reason($standby, $offset),
	no_preload() ? $unknown_start : 'the server was in recovery when it was last shut down',
	'the floor is logged with why');
$standby->stop;

# ---------------------------------------------------------------------------
# A volume snapshot of the running server, restored in place
# ---------------------------------------------------------------------------

$primary->start;
$primary->safe_psql('postgres', 'CHECKPOINT');
my $script = PostgreSQL::Test::Utils::tempdir() . '/insert.sql';
open my $fh, '>', $script or die "$script: $!";
print $fh "INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 10);\n";
close $fh;
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '2', '-j', '2', '-T', '5', '-f', $script,
		'-h', $primary->host, '-p', $primary->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err);
my $rows = $primary->safe_psql('postgres', 'SELECT count(*) FROM ids');
$primary->poll_query_until('postgres', "SELECT count(*) >= $rows + 2000 FROM ids")
  or die 'the load does not run';
my $image = PostgreSQL::Test::Utils::tempdir() . '/image';
volume_snapshot($primary, $image);
ok($pgbench->finish, 'the load went on after the snapshot') or diag($pgb_err);
my ($controldata) = PostgreSQL::Test::Utils::run_command([ 'pg_controldata', $image ]);
like($controldata, qr/Database cluster state:\s+in production/,
	'the image is of a running server (pg_control says "in production")');

# The server goes on, far ahead of the clock, and is lost.
my $snap_ranges = batches($primary, 16);
my $ids_file = PostgreSQL::Test::Utils::tempdir() . '/ids';
$primary->safe_psql('postgres', "COPY ids TO '$ids_file'");
my $snap_max = $primary->safe_psql('postgres',
	"SELECT greatest(max(id), $snap_ranges->[-1][1]) FROM ids");
my $pm = (split /\n/, slurp_file($primary->data_dir . '/postmaster.pid'))[0];
$primary->stop('immediate');
# The image's postmaster.pid names the lost postmaster: a new one refuses
# to start while that process exists (until it is reaped).
for (my $i = 0; kill(0, $pm) && $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
{
	Time::HiRes::usleep(100_000);
}

# Restored in place: the image replaces the data directory.
File::Path::rmtree($primary->data_dir);
PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $image, $primary->data_dir);
$offset = -s $primary->logfile;
$primary->start;
is(shared_with($primary, 1, $snap_ranges, $ids_file, $snap_max), '0|t',
	'volume snapshot restored in place: no key shared with what the server issued after it');
first_use($primary);
is( floor_reason($primary, $offset),
	no_preload()
	? $unknown_start
	: 'the server was not shut down cleanly (after a crash, or from a copy of a running server\'s data directory)',
	'the floor is logged with why');

# ---------------------------------------------------------------------------
# Crash, clean restart, idle clean restart
# ---------------------------------------------------------------------------

my $max = $primary->safe_psql('postgres', 'SELECT snowflake_nextval()');
$primary->kill9;
$offset = -s $primary->logfile;
start_after_kill9($primary);
first_use($primary);
is( floor_reason($primary, $offset),
	no_preload() ? $unknown_start
	: 'the server was not shut down cleanly (after a crash, or from a copy of a running server\'s data directory)',
	'after the postmaster was killed, the floor applies');
is(first_above($primary, $max), 't', 'and the first ID is above');

foreach my $what ('busy', 'idle')
{
	$primary->safe_psql('postgres', 'SELECT snowflake_nextval()') if $what eq 'busy';
	$offset = -s $primary->logfile;
	$primary->restart;
	first_use($primary);
	if (no_preload())
	{
		is(floor_reason($primary, $offset), $unknown_start,
			"$what clean restart without the preload: the floor applies at the first use");
	}
	else
	{
		is(floor_reason($primary, $offset), '', "$what clean restart: no floor");
	}
}

# ---------------------------------------------------------------------------
# A state file of snowflake 1.0 or 1.1, after a clean shutdown
# ---------------------------------------------------------------------------

# Neither recorded the shutdown it was written at: the first start of this
# version applies the floor once, then trusts its own clean shutdowns.
foreach my $version (1, 2)
{
	$max = $primary->safe_psql('postgres', 'SELECT snowflake_nextval()');
	$primary->stop;
	my $state = $primary->data_dir . '/snowflake.state';
	write_raw($state, old_state_file(read_state($primary), $version));
	is(read_state($primary)->{version}, $version, "a version $version state file is in place");
	$offset = -s $primary->logfile;
	$primary->start;
	is(first_above($primary, $max), 't', "version $version file: the server starts, and its first ID is above");
	is( floor_reason($primary, $offset),
		no_preload() ? $unknown_start
		: "the state file was not written at the server's last shutdown",
		"version $version file: the floor applies once");
	$offset = -s $primary->logfile;
	$primary->restart;
	first_use($primary);
	is(read_state($primary)->{version}, 3, "version $version file: replaced by the current format");
	is(floor_reason($primary, $offset), no_preload() ? $unknown_start : '',
		"version $version file: the next clean restart "
		  . (no_preload() ? 'applies the floor as always without the preload' : 'has no floor'));
}
$primary->stop;

done_testing();
