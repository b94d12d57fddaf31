# Copyright: see LICENSE
#
# 014_standby.pl
#	Streaming standbys and failover.
#
# A hot standby usually carries its primary's configuration, node id
# included, so a server in recovery refuses to generate (25006) and issues
# nothing, while decoding works there as anywhere.  Its copy of the state
# file (taken by pg_basebackup) predates IDs the primary issued afterwards,
# some of them ahead of the clock; once promoted (and the old primary
# stopped) it must generate IDs above all of those.  That must hold too when
# the promoted server is restarted, crashes and re-initialises, or loses its
# postmaster (as in a power loss) before it has generated anything, when
# standby.signal is gone already.
# Without the preload (the no-preload pass) the lead is capped at 1 s: the
# 30 s raise is used as 1 s, so the burst leads the clock by at most 1 s.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

# Issue IDs on $node: committed ones, then $batches batches of a million
# that run ahead of the clock (each spans 245 ms of ID time).  Returns the
# largest ID issued.
sub issue_ids
{
	my ($node, $batches) = @_;
	return $node->safe_psql(
		'postgres', qq{
INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000);
SELECT greatest(max(id), max(b)) FROM ids,
	LATERAL (SELECT max(x) AS b FROM
		(SELECT snowflake_nextval_batch(1000000)
		 FROM generate_series(1, $batches)) s(x)) l});
}

# Does every ID $node now issues lie above $max?  Checks single IDs and a
# batch, inserted into the table (whose primary key holds every ID of the
# old primary replicated so far).
sub generates_above
{
	my ($node, $max) = @_;
	return $node->safe_psql(
		'postgres', qq{
WITH n AS (
	INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000)
	RETURNING id)
SELECT count(*) = 1000 AND min(id) > $max
	AND (SELECT min(x) > $max FROM snowflake_nextval_batch(10000) x)
FROM n});
}

my $primary = start_snowflake_node('primary',
	node_id => 7,
	init => { allows_streaming => 1 });
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000);
});

# The base backup copies the state file as it is now.
$primary->backup('primary_backup');

# IDs the standby's copy of the state file knows nothing about.
issue_ids($primary, 3);

my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'primary_backup', has_streaming => 1 ]);
$primary->wait_for_catchup($standby);

# --- the standby refuses to generate, decodes ---

my ($sqlstate, $stderr) = sql_error($standby, 'SELECT snowflake_nextval()');
is($sqlstate, '25006', 'snowflake_nextval() on a standby fails with 25006');
like($stderr, qr/cannot generate snowflake IDs during recovery/,
	'the message says why');
($sqlstate) = sql_error($standby, 'SELECT count(*) FROM snowflake_nextval_batch(10)');
is($sqlstate, '25006', 'snowflake_nextval_batch() too');
($sqlstate, $stderr) = sql_error($standby, 'SELECT snowflake_adopt_layout()');
is($sqlstate, '25006', 'snowflake_adopt_layout() too');
like($stderr, qr/cannot adopt a snowflake layout during recovery/,
	'with its own message');
my $st = stats($standby);
is($st->{status}, 'recovery', 'snowflake_stats on the standby says "recovery"');
is($st->{ids_issued}, 0, 'the standby issued nothing');

my $decode_sql = q{
SELECT count(*), max(snowflake_decode(id)::text), bool_and(snowflake_node_id(id) = 7),
	bool_and(id BETWEEN snowflake_min_id(snowflake_timestamp(id))
		AND snowflake_max_id(snowflake_timestamp(id)))
FROM ids};
is($standby->safe_psql('postgres', $decode_sql),
	$primary->safe_psql('postgres', $decode_sql),
	'decoding on the standby gives what it gives on the primary');

# --- failover: the old primary stops, the standby is promoted ---

# More IDs, ahead of the clock, just before the primary stops.
my $primary_max = issue_ids($primary, 3);
$primary->wait_for_catchup($standby);
$primary->stop;

promote_and_wait($standby);
is(stats($standby)->{status}, 'ready', 'the promoted standby is ready');
is(generates_above($standby, $primary_max),
	't', 'the promoted standby generates IDs above all of the old primary\'s');

# --- promoted, then restarted or crashed before generating anything ---

# The promoted standby is the primary now.  Let IDs lead the clock by up to
# 30 s, so that a burst puts the last ID far ahead of anything a restart
# takes, and make three new standbys (their postgresql.auto.conf carries
# the setting too).  Each is promoted in turn after the primary stops, as
# three alternative failovers: each is compared with the old primary only.
$standby->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.max_drift_ms = '30s'; SELECT pg_reload_conf()");
$standby->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '30s')
  or die 'timed out waiting for the reload';
$standby->backup('standby_backup');
my @standbys;
foreach my $name ('restarted', 'crashed', 'killed')
{
	push @standbys,
	  start_snowflake_node(
		$name,
		from_backup => [ $standby, 'standby_backup', has_streaming => 1 ],
		settings => { restart_after_crash => 'on' });
}
my ($restarted, $crashed, $killed) = @standbys;

# About 20 s of ID time issued in a moment, then the primary stops.
issue_ids($standby, 1);
# Without the preload the lead is capped at 1 s: a burst of 3 s reaches it.
my $max = lead_burst($standby, no_preload() ? 3 : 20);
$st = stats($standby);
if (no_preload())
{
	cmp_ok($st->{lead_ms}, '>', 500,
		"the last ID is ahead of the clock (lead $st->{lead_ms} ms)");
	cmp_ok($st->{lead_ms}, '<=', 1000,
		'... by at most the 1 s cap without the preload');
}
else
{
	cmp_ok($st->{lead_ms}, '>', 10000,
		"the last ID is far ahead of the clock (lead $st->{lead_ms} ms)");
}
$standby->wait_for_catchup($_) foreach @standbys;
$standby->stop;

# Promoted, then restarted cleanly before issuing anything.
promote_and_wait($restarted);
$restarted->restart;
is(generates_above($restarted, $max),
	't',
	'promoted then restarted: it generates IDs above all of the old primary\'s');

# Promoted, then a backend crash re-initialises shared memory before
# anything was issued.
promote_and_wait($crashed);
my $session = $crashed->background_psql('postgres');
my $pid = query_value($session, 'SELECT pg_backend_pid()');
my $log_offset = -s $crashed->logfile;
kill 'KILL', $pid;
$crashed->wait_for_log(qr/all server processes terminated; reinitializing/,
	$log_offset);
$session->quit;
$crashed->poll_query_until('postgres', 'SELECT true')
  or die 'timed out waiting for crash recovery';
is(generates_above($crashed, $max),
	't',
	'promoted then crashed: it generates IDs above all of the old primary\'s');

# Promoted, then the postmaster is killed with SIGKILL (nothing runs at
# shutdown, as in a power loss) and the server started again.
promote_and_wait($killed);
$killed->kill9;
# Until the killed postmaster is reaped and its orphaned children have
# exited, a new postmaster refuses to start; try a bounded number of times,
# clearing the test framework's idea of the node's state after each failure.
my $started = 0;
for (my $i = 0; $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
{
	last if $started = $killed->start(fail_ok => 1);
	Time::HiRes::usleep(100_000);
	$killed->stop('fast', fail_ok => 1);
}
ok($started, 'the server starts again after its postmaster was killed');
is(generates_above($killed, $max),
	't',
	'promoted then postmaster killed: it generates IDs above all of the old primary\'s');

$_->stop foreach @standbys;
done_testing();
