# Copyright: see LICENSE
#
# 025_lineage.pl
#	The reservation is trusted only within one unbroken history.
#
# Whenever generation starts where the state file cannot vouch for every ID
# issued before, the first ID goes past now plus the largest lead any ID of
# the data directory's history may have had:
#  - the state file was lost (deleted; a pg_upgrade-style new data
#    directory);
#  - point-in-time recovery to a moment before IDs that clients received;
#  - a standby whose primary allowed a larger lead (max_drift_ms) than the
#    standby's own setting;
#  - a cluster-wide reload that lowered max_drift_ms just before the primary
#    was killed: the old, larger lead still counts.
# Every case issues a burst that runs seconds ahead of the clock first, so
# that resuming at the clock (what 1.0 did) would reissue IDs.
# Without the preload the lead is capped at 1 s: the bursts lead by up to
# 1 s, the floor (at least 1 s) is applied and logged by the first ID, and
# a primary cannot have allowed a larger lead than its standby, so the
# standby's first call waits at most for the floor's millisecond, not for
# the primary's 30 s, and issues above the old primary's.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# --- the state file is lost ---

my $node = start_snowflake_node('lost_file',
	node_id => 4,
	settings => { 'snowflake.max_drift_ms' => '30s' });
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $max = lead_burst($node, 8);
if (no_preload())
{
	# The burst cannot lead by more than the capped 1 s.
	my $lead = stats($node)->{lead_ms};
	ok($lead > 0 && $lead <= 1000,
		"no preload: the burst leads the clock within the 1 s cap ($lead ms)");
}
else
{
	cmp_ok(stats($node)->{lead_ms}, '>', 5000, 'the burst leads the clock by seconds');
}
$node->stop;
unlink($node->data_dir . '/snowflake.state')
  or die "could not remove the state file: $!";
my $log_offset = -s $node->logfile;
$node->start;
# Without the preload the state file is read when the generator is first
# needed, not at startup, and the floor is applied (and logged) by the first
# reservation write, the first ID's: nothing before that.
if (no_preload())
{
	ok(!-e $node->data_dir . '/snowflake.state',
		'lost file, no preload: no state file before the first use');
	is(first_above($node, $max), 't',
		'lost file: the first ID is above every ID issued before');
}
ok( log_appears($node,
		qr/LOG:  snowflake IDs resume at \d+ ms past the clock, because \Q@{[ start_reason() ]}\E\n/,
		$log_offset),
	'lost file: the start (without the preload, the first use) applies the floor and logs why');
if (no_preload())
{
	ok(-f $node->data_dir . '/snowflake.state',
		'lost file: the floor is in the new state file the first ID wrote');
}
else
{
	ok(-f $node->data_dir . '/snowflake.state',
		'lost file: the floor is in a new state file before any ID');
	is(first_above($node, $max), 't',
		'lost file: the first ID is above every ID issued before');
}
# With the preload the floor was applied at the start, before the call.
# Without it the first call applies it, and the floor lies a millisecond
# past what may be issued at once: that call waits for the clock to pass
# it when it falls in the floor's own millisecond.
cmp_ok(stats($node)->{waits}, '<=', no_preload() ? 1 : 0,
	'lost file: the first ID needed no wait (floor within the lead), or without the preload at most the floor\'s millisecond');

# A restart before the first ID keeps the obligation.
my $max2 = lead_burst($node, 8);
$node->stop;
unlink($node->data_dir . '/snowflake.state') or die $!;
$node->start;
$node->restart;
is(first_above($node, $max2), 't',
	'lost file, restarted before the first ID: still above every earlier ID');

# A pg_upgrade-style start: a new data directory with the same settings.
my $max3 = lead_burst($node, 8);
$node->stop;
my $fresh = start_snowflake_node('new_datadir',
	node_id => 4,
	settings => { 'snowflake.max_drift_ms' => '30s' });
$fresh->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is(first_above($fresh, $max3), 't',
	'new data directory: the first ID is above every ID of the old one');
$fresh->stop;

# --- point-in-time recovery to before IDs that clients received ---

my $primary = start_snowflake_node('pitr_primary',
	node_id => 5,
	settings => { 'snowflake.max_drift_ms' => '30s' },
	init => { has_archiving => 1, allows_streaming => 1 });
$primary->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY)');
$primary->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 100)');
$primary->backup('pitr_backup');
$primary->safe_psql('postgres',
	"SELECT pg_create_restore_point('before_burst')");
# IDs handed out (and a row committed) after the restore point.
$max = lead_burst($primary, 8);
$primary->safe_psql('postgres', "INSERT INTO ids VALUES ($max)");
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	'SELECT last_archived_wal IS NOT NULL AND failed_count = 0 FROM pg_stat_archiver')
  or die 'timed out waiting for WAL archiving';
$primary->stop;

my $restored = start_snowflake_node('pitr_restored',
	from_backup => [ $primary, 'pitr_backup', has_restoring => 1 ],
	settings => {
		recovery_target_name => 'before_burst',
		recovery_target_action => 'promote'
	});
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'timed out waiting for the end of point-in-time recovery';
is($restored->safe_psql('postgres', "SELECT count(*) FROM ids WHERE id = $max"),
	'0', 'PITR: the burst\'s row is gone from the restored database');
cmp_ok($restored->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'),
	'>=', 1, 'PITR: the restored server runs');
is(first_above($restored, $max), 't',
	'PITR: the first ID is above the IDs issued after the restore point');
$restored->stop;

# --- a standby of a primary that allowed a larger lead ---

$primary = start_snowflake_node('wide_primary',
	node_id => 6,
	settings => { 'snowflake.max_drift_ms' => '30s' },
	init => { allows_streaming => 1 });
$primary->safe_psql('postgres',
	'CREATE EXTENSION snowflake; SELECT snowflake_nextval()');
$primary->backup('wide_backup');
my $standby = start_snowflake_node('narrow_standby',
	from_backup => [ $primary, 'wide_backup', has_streaming => 1 ],
	settings => { 'snowflake.max_drift_ms' => '1s' });
$max = lead_burst($primary, 8);
$primary->wait_for_catchup($standby);
$primary->stop;
promote_and_wait($standby);

if (no_preload())
{
	# The primary's 30 s were capped at 1 s.  The standby's floor is the
	# clock plus its own 1 s plus one millisecond (past every ID the
	# primary can have issued), applied by its first call: that call waits
	# at most for the clock to pass that one millisecond (it is refused
	# with max_wait_ms = 0 when it falls in the floor's own millisecond),
	# never for the 30 s the primary's setting named, so a call that may
	# wait 10 s is served.
	is( $standby->safe_psql('postgres',
			"SET snowflake.max_wait_ms = '10s';\nSELECT snowflake_nextval() > $max"),
		't',
		'no preload, capped primary lead: a call that may wait 10 s (not 30) issues an ID above the old primary\'s');
	my $st = stats($standby);
	is("$st->{ids_issued}|$st->{refused}", '1|0',
		'no preload, capped primary lead: one ID, no refusal');
	cmp_ok($st->{waits}, '<=', 1,
		'no preload, capped primary lead: at most one wait (for the floor\'s millisecond)');
	$standby->stop;
}
else
{
	my ($sqlstate, $stderr) = sql_error($standby,
		"SET snowflake.max_wait_ms = 0;\nSELECT snowflake_nextval()");
	is($sqlstate, '58000',
		'larger primary lead: a call that cannot wait fails with 58000');
	like(
		$stderr,
		qr/ERROR:  58000: snowflake IDs are \d+ ms ahead of the system clock after a failover\n(?:.*\n)*?DETAIL:  The first ID of every start, restore and failover is placed past any ID this data directory's history, or a copy of it, can have issued: past the clock plus the largest lead it allowed \(30000 ms\); IDs may lead the clock by 1000 ms \(snowflake\.max_drift_ms\) and a call may wait 0 ms \(snowflake\.max_wait_ms\); no ID was issued\./,
		'larger primary lead: the error explains the floor');
	is(stats($standby)->{ids_issued}, 0, 'larger primary lead: nothing issued by the refused call');
	is(first_above($standby, $max), 't',
		'larger primary lead: once the clock allows, the first ID is above the old primary\'s');
	cmp_ok(stats($standby)->{waits}, '>=', 1, 'larger primary lead: the call waited for the clock');
	$standby->stop;
}

# --- max_drift_ms lowered cluster-wide, then the primary is killed ---

$primary = start_snowflake_node('lowered_primary',
	node_id => 8,
	settings => { 'snowflake.max_drift_ms' => '20s' },
	init => { allows_streaming => 1 });
$primary->safe_psql('postgres',
	'CREATE EXTENSION snowflake; SELECT snowflake_nextval()');
$primary->backup('lowered_backup');
$standby = start_snowflake_node('lowered_standby',
	from_backup => [ $primary, 'lowered_backup', has_streaming => 1 ]);
$max = lead_burst($primary, 8);
foreach my $n ($primary, $standby)
{
	$n->append_conf('postgresql.conf', "snowflake.max_drift_ms = '1s'\n");
	$n->reload;
	$n->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '1s')
	  or die 'timed out waiting for the reload of ' . $n->name;
}
$primary->wait_for_catchup($standby);
$primary->kill9;
promote_and_wait($standby);
is(first_above($standby, $max), 't',
	'lowered max_drift_ms: the new primary\'s first ID is above the killed one\'s IDs');
$standby->stop;
# The killed primary's processes are gone with its postmaster; make sure.
$primary->stop('immediate', fail_ok => 1);

done_testing();
