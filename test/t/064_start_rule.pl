# Copyright: see LICENSE
#
# 064_start_rule.pl
#	One rule at every start: the first ID of every start (and of every
#	re-initialisation of the shared state after a crash) lies above what
#	the state file records and past the floor, the clock plus the largest
#	lead the history allowed, whatever pg_control, signal files and the
#	file say.  So the copies that 1.2 trusted reissue nothing (issue 44):
#  - a cold copy of a cleanly stopped server, restored in place after the
#    original ran on (its state file records the clean shutdown the copy
#    starts from: nothing inside the data directory can tell it from the
#    server's own clean restart);
#  - a volume snapshot restored in place whose state file cannot be read at
#    the first start, put right, then a backend crash (the re-initialisation
#    trusted the file: the first load never computed a floor);
#  - the same with a base backup started without recovery.signal (with the
#    preload such a start continues its original's timeline: it does not
#    start while the state file is unreadable, then asks for its node id to
#    be confirmed);
#  - after a restore's floor and a crash, a call refused by the lead names
#    the restore, not the clock.
# Each copy's original mints after the copy was made, and is then lost; the
# copy mints in its place, and the two servers' keys are compared.  IDs of
# the layout 41/10/4 (16 a millisecond) run ahead of the clock by whole
# seconds in batches of tens of thousands.  The first start places IDs
# 60 s past the clock (the floor, as every start): the original's later
# IDs lie there, and a copy that trusted its file would resume among them.
# Without the preload the lead is capped at 1 s: the floor is 1 s, the IDs
# are minted in batches of 10000 that lead the clock by at most 1 s, and
# the batch of the last case is refused as too wide instead.

use strict;
use warnings;

use File::Path ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

my $lead = 60000;
my %settings = (
	'snowflake.max_drift_ms' => $lead,
	'snowflake.max_wait_ms' => '10s',
	restart_after_crash => 'on');
# Without the preload the lead is capped (docs/deployment/no-preload.md):
# the floor is then 1 s, and the original's IDs lead by less.
my $floor = no_preload() ? 1000 : $lead;

# Mint $count IDs on $node into its table (mint_into).  Without the preload
# a batch of 41/10/4 may span at most the capped lead, 1000 ms (16000 IDs):
# the IDs are minted in batches of 10000 (625 ms), each waiting for the
# clock as needed, so they lead it by at most 1 s.
sub mint
{
	my ($node, $count) = @_;
	my $chunk = no_preload() ? 10000 : $count;
	for (my $left = $count; $left > 0; $left -= $chunk)
	{
		mint_into($node, $left < $chunk ? $left : $chunk);
	}
	return;
}

# The postmaster's PID of a running $node.
sub pm_pid
{
	my ($node) = @_;
	return (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
}

# Replace the data directory of $node (stopped) with the directory $image,
# a copy of another server's (its configuration with it): $node keeps its
# own port and socket directory.
sub restore_in_place
{
	my ($node, $image, $pm) = @_;
	# An image's postmaster.pid may name the lost postmaster: a new one
	# refuses to start while that process exists (until it is reaped).
	for (my $i = 0; $pm && kill(0, $pm) && $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
	{
		Time::HiRes::usleep(100_000);
	}
	File::Path::rmtree($node->data_dir);
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $image, $node->data_dir);
	chmod(0700, $node->data_dir);
	$node->append_conf('postgresql.conf',
		"port = " . $node->port . "\nunix_socket_directories = '" . $node->host . "'\n");
	return;
}

# Kill one backend of $node (SIGKILL): the postmaster re-initialises the
# shared memory.  Waits until it answers again.
sub crash_backend
{
	my ($node) = @_;
	my $victim = $node->background_psql('postgres');
	my $pid = query_value($victim, 'SELECT pg_backend_pid()');
	my $offset = -s $node->logfile;
	kill('KILL', $pid) or die "could not kill $pid";
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	eval { $victim->quit };
	$node->poll_query_until('postgres', 'SELECT true') or die 'the server did not come back';
	return;
}

# The floor line of the first write of a start, from $offset: its lead and
# why.
sub floor_line
{
	my ($node, $offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	return $log =~ /LOG:  snowflake IDs resume at (\d+) ms past the clock, because ([^\n]*)/
	  ? ($1, $2) : ();
}

my $original = start_snowflake_node('original',
	node_id => 1,
	layout => '41/10/4',
	init => { allows_streaming => 1 },
	settings => \%settings);
$original->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $offset = 0;
mint($original, 1000);
my ($floor_ms, $why) = floor_line($original, $offset);
cmp_ok($floor_ms, '>=', $floor - 1000, "the first start placed the first ID past the clock plus the lead ($floor_ms ms)");
is($why, start_reason(), 'and says why');

# ---------------------------------------------------------------------------
# A cold copy of the stopped server, restored in place after it ran on
# ---------------------------------------------------------------------------

$original->stop;
my $cold = PostgreSQL::Test::Utils::tempdir() . '/cold';
PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $original->data_dir, $cold);
$offset = -s $original->logfile;
$original->start;
mint($original, 20000);
my $original_ids = minted_file($original);
($floor_ms, $why) = floor_line($original, $offset);
ok(defined $why, "a clean restart places its first ID past the floor too ($floor_ms ms)");
is($why, start_reason(), 'a clean restart: the reason');
$original->stop('immediate');

my $copy = start_snowflake_node('copy', node_id => 1, layout => '41/10/4',
	settings => \%settings, start => 0);
restore_in_place($copy, $cold);
$copy->start;
mint($copy, 20000);
is(keys_in_common($copy, $original_ids), '0',
	'a cold copy restored in place after its original ran on: no key in common');
$copy->stop;

# ---------------------------------------------------------------------------
# A volume snapshot restored in place, its state file unreadable at the
# first start, put right, then a backend crash
# ---------------------------------------------------------------------------

$original->start;
mint($original, 1000);
my $image = PostgreSQL::Test::Utils::tempdir() . '/image';
volume_snapshot($original, $image);
my $pm = pm_pid($original);
$original->safe_psql('postgres', 'TRUNCATE minted_original');
mint($original, 40000);
$original_ids = minted_file($original);
$original->stop('immediate');

restore_in_place($copy, $image, $pm);
my $state = $copy->data_dir . '/snowflake.state';
chmod(0000, $state) or die "chmod $state: $!";
$copy->start;
my ($sqlstate, $stderr) = sql_error($copy, 'SELECT snowflake_nextval()');
is($sqlstate, '42501', 'the state file unreadable at the start: calls are refused');
like($stderr, qr/could not open file "snowflake\.state": Permission denied/, 'with the reason');
chmod(0600, $state) or die "chmod $state: $!";
($sqlstate) = sql_error($copy, 'SELECT snowflake_nextval()');
is($sqlstate, '42501', 'put right while the server runs: still refused (the file is read at a start)');
$offset = -s $copy->logfile;
crash_backend($copy);
mint($copy, 20000);
is(keys_in_common($copy, $original_ids), '0',
	'then a backend crash: the re-initialisation places the first ID past the floor, no key in common');
($floor_ms, $why) = floor_line($copy, $offset);
is($why, start_reason('restart'), 'and the log says why');
$copy->stop;

# ---------------------------------------------------------------------------
# The same with a base backup started without recovery.signal
# ---------------------------------------------------------------------------

$original->start;
$original->safe_psql('postgres', 'TRUNCATE minted_original');
$original->backup('plain');
mint($original, 40000);
$original_ids = minted_file($original);
$original->stop('immediate');
my $backup = $original->backup_dir . '/plain';
restore_in_place($copy, $backup);
$state = $copy->data_dir . '/snowflake.state';
chmod(0000, $state) or die "chmod $state: $!";
if (no_preload())
{
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the backup did not leave recovery';
	($sqlstate) = sql_error($copy, 'SELECT snowflake_nextval()');
	is($sqlstate, '42501', 'base backup, state file unreadable: calls are refused');
	chmod(0600, $state) or die "chmod $state: $!";
	crash_backend($copy);
}
else
{
	# The start continues the original's timeline: it asks for the node
	# id to be confirmed, which an unreadable file cannot record.
	$offset = -s $copy->logfile;
	ok(!$copy->start(fail_ok => 1), 'base backup without recovery.signal, state file unreadable: the server does not start');
	like(slurp_file($copy->logfile, $offset),
		qr/FATAL:  could not open file "snowflake\.state": Permission denied\n[^\n]*DETAIL:  This server started from a base backup \(backup_label\) without standby\.signal or recovery\.signal: it leaves recovery without a new timeline, continuing the timeline of the server it was copied from\. It mints nothing until its node id is confirmed, and the state file must record that before recovery removes what tells such a start, so the server does not start\. An unusable state file is left as it is\./,
		'and says why');
	chmod(0600, $state) or die "chmod $state: $!";
	$copy->start;
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the backup did not leave recovery';
	is( error_report($copy, 'SELECT snowflake_nextval()'),
		"55000: snowflake node id 1 is not confirmed after leaving recovery without a new timeline\n"
		  . 'DETAIL:  This server started from a base backup (backup_label) without standby.signal or recovery.signal: it leaves recovery without a new timeline, continuing the timeline of the server it was copied from. '
		  . "Its node id is the one its predecessor mints with on this timeline, and that server may still run.\n"
		  . 'HINT:  If the server it continues no longer mints, have a superuser run SELECT snowflake_confirm_restore(1); otherwise give it its own "snowflake.node_id" and restart it. A standby is started with standby.signal and promoted with pg_ctl promote, which gives it a new timeline.',
		'then it asks for its node id to be confirmed: the whole error');
	crash_backend($copy);
	is((sql_error($copy, 'SELECT snowflake_nextval()'))[0], '55000',
		'the request survives a crash re-initialisation');
	$copy->safe_psql('postgres', 'SELECT snowflake_confirm_restore(1)');
}
mint($copy, 20000);
is(keys_in_common($copy, $original_ids), '0',
	'base backup started without recovery.signal: no key in common');
$copy->stop;

# ---------------------------------------------------------------------------
# After a restore's floor and a crash, the error names the restore
# ---------------------------------------------------------------------------

$original->start;
$original->backup('pitr');
$original->stop;
my $restored = start_snowflake_node('restored', from_backup => [ $original, 'pitr' ],
	start => 0);
$restored->append_conf('postgresql.conf',
	"snowflake.max_wait_ms = 0\nrestore_command = 'false'\n");
PostgreSQL::Test::Utils::append_to_file($restored->data_dir . '/recovery.signal', '');
$restored->start;
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restore did not end';
# This session may wait: without the preload its call applies the floor,
# which lies one millisecond past what a call may issue at once.
$restored->safe_psql('postgres',
	"SET snowflake.max_wait_ms = '10s'; SELECT snowflake_nextval()");
crash_backend($restored);
my $span = int($lead / 2) * 16;
my $report = error_report($restored, "SELECT count(*) FROM snowflake_nextval_batch($span)");
like($report,
	no_preload()
	? qr/^22023: a batch of $span snowflake IDs cannot be issued within "snowflake\.max_drift_ms"\n/
	: qr/^58000: snowflake IDs are \d+ ms ahead of the system clock after a restore\nDETAIL:  The first ID of every start, restore and failover is placed past any ID this data directory's history, or a copy of it, can have issued: past the clock plus the largest lead it allowed \($lead ms\)/,
	no_preload()
	? 'without the preload the lead is capped: the batch is refused as too wide'
	: 'a restore, then a crash: a call refused by the lead names the restore');
$restored->stop;

done_testing();
