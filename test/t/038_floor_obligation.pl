# Copyright: see LICENSE
#
# 038_floor_obligation.pl
#	The floor is owed at every start and never forgotten: restores and
#	copies of a data directory never reissue an ID.
#
# Every server here allows IDs to lead its clock by 60 s, and the primary
# mints batches of a million IDs (each a run of consecutive IDs of its node,
# checked below) after its data directory was copied, then is lost.  The
# copy is started in its place, and its IDs are compared with the
# primary's: none may be equal.
#  - A base backup started as a primary while the state file cannot be
#    written (the fault shim: "open EACCES"): with the preload such a start
#    continues the primary's timeline, so it asks for its node id to be
#    confirmed, and a request that cannot be recorded keeps the server from
#    starting; without the preload its calls are refused.  The cause
#    removed, it starts (confirmed, as the primary is lost) and mints: no
#    key shared with the primary (issue 41, issue 44).
#  - The same with a standby built from the backup, its first start failing
#    to write the file, later started as a primary without standby.signal.
#  - A volume snapshot: the whole server stopped with SIGSTOP while it
#    inserts under load, its data directory copied (an atomic, crash-
#    consistent image, as a disk snapshot takes), then the server goes on
#    and is lost; the copy restored in place mints: no key shared, and the
#    log says the floor applies (issue 36).
#  - A crash (the postmaster killed with SIGKILL), a clean restart, busy or
#    idle: each applies the floor (issue 44: one rule at every start).
#  - State files of 1.0, 1.1 and 1.2 are read, and replaced by the current
#    format at the first write.
# In the no-preload pass (17 and later) the same holds, the lead capped at
# 1 s (docs/deployment/no-preload.md).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;
use Time::HiRes;
use File::Path ();

# Without the preload the lead is capped at 1 s.
my $lead = no_preload() ? 1000 : 60000;
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

# The reason the floor line of $node's log from $offset gives, once it is
# there (the background writer may apply the floor a moment after the
# start), or '' if it never comes.
sub floor_reason
{
	my ($node, $offset) = @_;
	log_appears($node, qr/LOG:  snowflake IDs resume at \d+ ms past the clock, because /,
		$offset);
	my $log = slurp_file($node->logfile, $offset);
	return $log =~ /LOG:  snowflake IDs resume at \d+ ms past the clock, because ([^\n]*)/
	  ? $1 : '';
}

# Without the preload the floor is owed from the first use (reading
# snowflake_stats is one) and applied, with its log line, by the first
# reservation write: make an ID.
sub first_use
{
	my ($node) = @_;
	$node->safe_psql('postgres', 'SELECT snowflake_nextval()') if no_preload();
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

# The request to confirm the node id of a start without a new timeline
# cannot be recorded: the server does not start, and says why.
my $continued =
  'This server started from a base backup (backup_label) without standby.signal or recovery.signal: it leaves recovery without a new timeline, continuing the timeline of the server it was copied from.';
set_fault('open EACCES');
my $restored = start_snowflake_node('restored',
	from_backup => [ $primary, 'before_batches' ],
	start => 0);
my ($sqlstate, $stderr);
if (no_preload())
{
	start_with_shim($restored);
	$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the restored backup did not leave recovery';
	($sqlstate, $stderr) = sql_error($restored, 'SELECT snowflake_nextval()');
	is($sqlstate, '42501', 'restored, state file unwritable: snowflake_nextval() is refused');
	like($stderr, qr/could not create file "snowflake\.state\.tmp": Permission denied/,
		'with the reason');
	$restored->stop;
}
else
{
	my $offset = -s $restored->logfile;
	ok(!start_with_shim($restored, fail_ok => 1),
		'restored without recovery.signal, state file unwritable: the server does not start');
	like(slurp_file($restored->logfile, $offset),
		qr/FATAL:  could not create file "snowflake\.state\.tmp": Permission denied\n[^\n]*DETAIL:  \Q$continued\E It mints nothing until its node id is confirmed, and the state file must record that before recovery removes what tells such a start, so the server does not start\./,
		'and says why');
	ok(-e $restored->data_dir . '/backup_label', 'backup_label stays for the next start');
}

# The standby: its first start fails to write the state file the same way
# (nothing asks it to: it writes nothing in recovery).
my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'before_batches', has_streaming => 1 ],
	with => 'shim');
# Without the preload, a first use while the fault is set: in recovery it
# generates nothing (25006), so it reads snowflake_stats.
$standby->safe_psql('postgres', 'SELECT count(*) FROM snowflake_stats') if no_preload();

# The primary goes on: 16 batches, far ahead of the clock.
my $ranges = batches($primary, 16);
my $primary_max = $ranges->[-1][1];
$primary->wait_for_catchup($standby);
$primary->stop;
$standby->stop;
set_fault();

# The cause removed, the primary lost: the restored backup starts; with the
# preload it asks for its node id, which the operator confirms.
my $offset = -s $restored->logfile;
$restored->start;
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restored backup did not leave recovery';
if (!no_preload())
{
	like(error_report($restored, 'SELECT snowflake_nextval()'),
		qr/^55000: snowflake node id 1 is not confirmed after leaving recovery without a new timeline\nDETAIL:  \Q$continued\E/,
		'started again: it asks for its node id to be confirmed');
	$restored->safe_psql('postgres', 'SELECT snowflake_confirm_restore(1)');
}
is(shared_with($restored, 1, $ranges, undef, $primary_max), '0|t',
	'restored, stopped, cause removed, started again: no key shared with the primary');
is(floor_reason($restored, $offset),
	no_preload() ? start_reason() : 'the server started from a restore',
	'the floor is logged with why');
$restored->stop;

unlink($standby->data_dir . '/standby.signal') or die "standby.signal: $!";
$offset = -s $standby->logfile;
$standby->start;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f',
	'the former standby runs as a primary, without a promotion');
$standby->safe_psql('postgres', 'SELECT snowflake_confirm_restore(1)') unless no_preload();
is(shared_with($standby, 1, $ranges, undef, $primary_max), '0|t',
	'former standby started as a primary (its node id confirmed): no key shared with the primary');
is(floor_reason($standby, $offset), start_reason(), 'the floor is logged with why');
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
is(floor_reason($primary, $offset), start_reason(), 'the floor is logged with why');

# ---------------------------------------------------------------------------
# Crash, clean restart, idle clean restart: every start applies the floor
# ---------------------------------------------------------------------------

my $max = $primary->safe_psql('postgres', 'SELECT snowflake_nextval()');
$primary->kill9;
$offset = -s $primary->logfile;
start_after_kill9($primary);
# (Its first ID is the first use: without the preload, what applies the floor.)
is(first_above($primary, $max), 't', 'after the postmaster was killed, the first ID is above');
is(floor_reason($primary, $offset), start_reason(), 'and the floor applies');

foreach my $what ('busy', 'idle')
{
	$primary->safe_psql('postgres', 'SELECT snowflake_nextval()') if $what eq 'busy';
	$offset = -s $primary->logfile;
	$primary->restart;
	first_use($primary);
	is(floor_reason($primary, $offset), start_reason(),
		"$what clean restart: the floor applies, as at every start");
}

# ---------------------------------------------------------------------------
# State files of snowflake 1.0, 1.1 and 1.2, after a clean shutdown
# ---------------------------------------------------------------------------

foreach my $version (1, 2, 3)
{
	$max = $primary->safe_psql('postgres', 'SELECT snowflake_nextval()');
	$primary->stop;
	my $state = $primary->data_dir . '/snowflake.state';
	write_raw($state, old_state_file(read_state($primary), $version));
	is(read_state($primary)->{version}, $version, "a version $version state file is in place");
	$offset = -s $primary->logfile;
	$primary->start;
	is(first_above($primary, $max), 't', "version $version file: the server starts, and its first ID is above");
	is(floor_reason($primary, $offset), start_reason(),
		"version $version file: the floor applies");
	is(read_state($primary)->{version}, 4, "version $version file: replaced by the current format");
}
$primary->stop;

done_testing();
