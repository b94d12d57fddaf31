# Copyright: see LICENSE
#
# 029_no_preload.pl
#	PostgreSQL 17 and later: the generator without shared_preload_libraries,
#	its shared state in the DSM registry.
#
# The files that prove the guarantees (concurrency, crashes and restarts
# with the clock set back, standbys, promotion, the floor) run a second time
# without the preload (test/check.sh's no-preload pass).  This file proves
# what is particular to the mode:
#  - a database owner without superuser creates the extension and gets IDs
#    on a server where the operator only set the node id, with ALTER SYSTEM
#    and a reload before any use: nobody edits shared_preload_libraries;
#  - the node id and layout are the server's: set for a session, a role, a
#    database or by the client they are refused with a clear message, set
#    in a session after its first call they change nothing; an operator
#    knob set in a session before the library is loaded is discarded;
#  - they are fixed when the shared state is created: a changed or broken
#    configuration file gives a WARNING and the values in force stay until
#    a restart, which applies them, also across a crash re-initialisation
#    (which creates the shared state again);
#  - the background writer is started by the first call, shows in
#    pg_stat_activity, keeps callers from writing at everyday rates, comes
#    back after it is terminated; killed with SIGKILL, the crash restart
#    relaunches it, and it creates the shared state again itself;
#  - with no background worker slot free, calls go on and write the
#    reservation themselves, and the log says why;
#  - what "server start" is when the shared state is created lazily: how
#    the server started cannot be seen, so the state file is trusted only
#    if this postmaster's life wrote it (a crash re-initialisation drops
#    the shared state, not the postmaster), and the first use of every
#    other life applies the floor, after a clean restart too; so a former
#    standby restarted without standby.signal, a base backup started as a
#    primary, and a restored backup that replayed WAL in a life that never
#    used the generator and was then restarted cleanly, none asked for an
#    ID before, place their first ID above every ID of the old primary
#    (same system, same timeline: nothing on disk tells).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node(
	'no_preload',
	preload => 0,
	init => { allows_streaming => 1 },
	settings => { restart_after_crash => 'on' },
	start => 0);
if ($node->pg_version < 17)
{
	# test/check.sh accepts a skip that says "need PostgreSQL N or later".
	plan skip_all =>
	  'the generator without the preload uses the DSM registry: need PostgreSQL 17 or later';
}
$node->start;

# ---------------------------------------------------------------------------
# A managed cluster: the operator sets the node id, the owner of a database
# creates the extension.
# ---------------------------------------------------------------------------

is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'snowflake is not preloaded');
$node->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.node_id = 12; SELECT pg_reload_conf()");
ok( $node->poll_query_until(
		'postgres', "SELECT current_setting('snowflake.node_id', true) = '12'"),
	'the node id is set by ALTER SYSTEM and a reload');
$node->safe_psql(
	'postgres', q{
CREATE ROLE alice LOGIN;
CREATE DATABASE app OWNER alice;
});
my @alice = (extra_params => [ '-U', 'alice' ]);
my $alice_connstr = $node->connstr('app') . ' user=alice';

is( $node->safe_psql(
		'app', 'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
		@alice),
	'f',
	'alice is not a superuser');
$node->safe_psql('app', 'CREATE EXTENSION snowflake', @alice);
is( $node->safe_psql(
		'app', q{
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int);
INSERT INTO orders (v) SELECT g FROM generate_series(1, 1000) g;
SELECT count(*), count(DISTINCT id), bool_and(snowflake_node_id(id) = 12),
	bool_and(id > coalesce(prev, 0))
FROM (SELECT id, lag(id) OVER (ORDER BY v) AS prev FROM orders) o},
		@alice),
	'1000|1000|t|t',
	'alice creates the extension and gets increasing IDs of node 12, no preload');
my $max_id = $node->safe_psql('app', 'SELECT max(id) FROM orders', @alice);

my $pid = writer_pid($node);
ok(defined $pid, 'the first call started the reservation writer');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my $st = stats($node);
is("$st->{status}|$st->{node_id}", 'ready|12',
	'another database shares the same generator');

# ---------------------------------------------------------------------------
# The node id and layout belong to the server.
# ---------------------------------------------------------------------------

my $refused_node = qq{22023: invalid value for parameter "snowflake.node_id": "5"\n}
  . 'DETAIL:  The snowflake node id is read from the server configuration only, but this value was set for a database, a role or the session.';
is( error_report(
		$node, "SET snowflake.node_id = 5;\nSELECT snowflake_nextval()",
		connstr => $alice_connstr),
	$refused_node,
	'a node id SET in a session is refused at its first call, with why');
is( error_report(
		$node, "SET snowflake.node_bits = 3;\nSELECT snowflake_nextval()",
		connstr => $alice_connstr),
	qq{22023: invalid value for parameter "snowflake.node_bits": "3"\n}
	  . 'DETAIL:  The snowflake layout is read from the server configuration only, but this value was set for a database, a role or the session.',
	'so is a layout setting, for the generator as for the decoders');
is( error_report(
		$node, 'SELECT snowflake_nextval()',
		connstr => $alice_connstr . ' options=-csnowflake.node_id=5'),
	$refused_node,
	'so is a node id the client sends');

$node->safe_psql('postgres', 'ALTER ROLE alice SET snowflake.node_id = 5');
is(error_report($node, 'SELECT snowflake_nextval()', connstr => $alice_connstr),
	$refused_node, 'so is a node id set for the role');
$node->safe_psql('postgres', 'ALTER ROLE alice RESET snowflake.node_id');
$node->safe_psql('postgres', 'ALTER DATABASE app SET snowflake.node_id = 5');
is(error_report($node, 'SELECT snowflake_nextval()', connstr => $alice_connstr),
	$refused_node, 'so is a node id set for the database');
$node->safe_psql('postgres', 'ALTER DATABASE app RESET snowflake.node_id');

# A session that has made its first call has the server's values for good.
is( $node->safe_psql(
		'app',
		"SELECT snowflake_node_id(snowflake_nextval());\n"
		  . "SET snowflake.node_id = 5;\n"
		  . 'SELECT snowflake_node_id(snowflake_nextval())',
		@alice),
	"12\n12",
	'a node id SET after the first call changes nothing');

# The operator knobs: a value a session sets before the library is loaded
# (a placeholder, which anyone may set) is discarded when it loads; after
# that a SET is refused, as with the preload.
my ($sqlstate, $stderr, $stdout) = sql_error(
	$node,
	"SET snowflake.max_drift_ms = 3600000;\n"
	  . show_setting('snowflake.max_drift_ms'),
	connstr => $alice_connstr);
like(
	$stderr,
	qr/WARNING:  55P02: parameter "snowflake\.max_drift_ms" cannot be changed now/,
	'max_drift_ms set in a session before the library loads: a warning');
is($stdout, '1s', 'and the server\'s value stays');
($sqlstate) = sql_error($node,
	"SELECT snowflake_node_id(0);\nSET snowflake.max_drift_ms = 3600000",
	connstr => $alice_connstr);
is($sqlstate, '55P02', 'after the library is loaded, SET is refused');
($sqlstate) = sql_error($node, 'ALTER SYSTEM SET snowflake.node_id = 6',
	connstr => $alice_connstr);
is($sqlstate, '42501', 'alice cannot ALTER SYSTEM');

# ---------------------------------------------------------------------------
# Fixed when the shared state is created; a restart applies a change.
# ---------------------------------------------------------------------------

$node->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.node_id = 13; SELECT pg_reload_conf()");
$node->poll_query_until('postgres',
	"SELECT current_setting('snowflake.node_id', true) = '13'")
  or die 'timed out waiting for the reload';
($sqlstate, $stderr, $stdout) = sql_error($node,
	'SELECT snowflake_node_id(snowflake_nextval())',
	connstr => $alice_connstr);
is($stdout, '12', 'a node id changed by a reload is not used');
like(
	$stderr,
	qr/WARNING:  55000: snowflake settings changed since its shared state was created\nDETAIL:  In force: node id 12, epoch 2024-01-01 00:00:00\.000\+00 and layout 41\/10\/12\. Configured: node id 13, epoch 2024-01-01 00:00:00\.000\+00 and layout 41\/10\/12\.\nHINT:  A change of the node id, epoch or layout takes effect at the next restart of the server\./,
	'the session is warned, with the values in force and configured');

# A crash re-initialisation drops the DSM registry, not the values of the
# server's life: the reloaded node id still waits for a restart.
my $victim = $node->background_psql('postgres');
my $victim_pid = query_value($victim, 'SELECT pg_backend_pid()');
my $crash_offset = -s $node->logfile;
ok(kill('KILL', $victim_pid), 'a backend is killed with SIGKILL');
ok( log_appears(
		$node, qr/all server processes terminated; reinitializing/,
		$crash_offset),
	'the postmaster re-initialised shared memory');
eval { $victim->quit };
$node->poll_query_until('postgres', 'SELECT true')
  or die 'the server did not come back';
($sqlstate, $stderr, $stdout) = sql_error($node,
	"SET snowflake.max_wait_ms = '60s'; SELECT snowflake_node_id(snowflake_nextval())");
is($stdout, '12', 'after a crash re-initialisation, the node id of the server start is still used');
like($stderr,
	qr/WARNING:  55000: snowflake settings changed since its shared state was created\nDETAIL:  In force: node id 12, /,
	'and the session is warned that the reloaded one waits for a restart');

$node->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.node_bits = 'ten'; SELECT pg_reload_conf()");
$node->poll_query_until('postgres',
	"SELECT current_setting('snowflake.node_bits', true) = 'ten'")
  or die 'timed out waiting for the reload';
($sqlstate, $stderr, $stdout) = sql_error($node,
	'SELECT snowflake_node_id(snowflake_nextval())',
	connstr => $alice_connstr);
is($stdout, '12', 'an invalid layout loaded by a reload is not used either');
like(
	$stderr,
	qr/WARNING:  22023: invalid value for parameter "snowflake\.node_bits": "ten"\nDETAIL:  The value must be a plain decimal integer\.\n(?:.*\n)*?[^\n]*WARNING:  55000: snowflake keeps the settings in force since its shared state was created\nDETAIL:  In force: node id 12, epoch 2024-01-01 00:00:00\.000\+00 and layout 41\/10\/12\.\n/,
	'the session is warned what is wrong and what stays in force');

# At a restart the invalid value is refused, by decoders too.
$node->restart;
is( error_report($node, 'SELECT snowflake_nextval()'),
	qq{22023: invalid value for parameter "snowflake.node_bits": "ten"\n}
	  . 'DETAIL:  The value must be a plain decimal integer.',
	'after a restart, the invalid layout is refused (22023)');
($sqlstate) = sql_error($node, 'SELECT snowflake_node_id(1)');
is($sqlstate, '22023', 'by the decoders too: never decode with another layout');

$node->safe_psql('postgres',
	"ALTER SYSTEM RESET snowflake.node_bits");
my $log_offset = -s $node->logfile;
$node->restart;
is($node->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'13', 'after a restart with a valid file, the new node id is used');
ok( $node->log_contains(
		qr/LOG:  parameter "snowflake\.node_id" changed from 12 to 13/,
		$log_offset),
	'the change is logged, as with the preload');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'),
	'>', $max_id, 'and IDs keep increasing');

# ---------------------------------------------------------------------------
# The background writer.
# ---------------------------------------------------------------------------

# A restart: the first call applies the floor and writes the reservation,
# the writer starts.
$max_id = paced_calls($node, 1, 0);
$pid = writer_pid($node);
ok(defined $pid, 'the writer runs again after the restart');
my $before = stats($node);
my $id = paced_calls($node, 12, 0.5);
ok($id > $max_id, 'IDs keep increasing');
$max_id = $id;
my $after = stats($node);
is($after->{caller_writes}, $before->{caller_writes},
	'2 calls a second for 6 s: no caller wrote the reservation');
cmp_ok($after->{background_writes}, '>', $before->{background_writes},
	'the writer did');

# Terminated (exit code 0: the postmaster forgets it), the next call starts
# another.
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok( $node->poll_query_until(
		'postgres',
		"SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $pid)"),
	'the writer is terminated');
$id = paced_calls($node, 1, 0);
ok($id > $max_id, 'calls go on without it');
$max_id = $id;
my $pid2 = writer_pid($node, $pid);
ok(defined $pid2, 'the next call started another writer');

# Killed with SIGKILL: the postmaster re-initialises shared memory, which
# drops the DSM registry; the writer is restarted and creates the shared
# state again itself, before any call.  The state file was written in this
# postmaster's life: it is trusted, no floor.
$log_offset = -s $node->logfile;
ok(kill('KILL', $pid2), 'the writer is killed with SIGKILL');
ok( log_appears(
		$node, qr/all server processes terminated; reinitializing/,
		$log_offset),
	'the postmaster re-initialised shared memory');
$node->poll_query_until('postgres', 'SELECT true')
  or die 'the server did not come back';
my $pid3 = writer_pid($node);
ok(defined $pid3 && $pid3 != $pid2, 'a new writer runs');
stats($node);
ok( !$node->log_contains(qr/snowflake IDs will resume past the clock/, $log_offset),
	'a crash re-initialisation, in the life that wrote the state file: no floor');
$st = stats($node);
is("$st->{ids_issued}|$st->{caller_writes}", '0|0',
	'nothing was asked of the new shared state yet');
ok(first_above($node, $max_id) eq 't',
	'after the crash, the first ID is above every earlier one');
$max_id = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');

# ---------------------------------------------------------------------------
# No background worker slot free.
# ---------------------------------------------------------------------------

$node->append_conf('postgresql.conf', "max_worker_processes = 0\n");
$node->restart;
$log_offset = -s $node->logfile;
$id = paced_calls($node, 6, 0.5);
ok($id > $max_id, 'no worker slot: calls go on');
$max_id = $id;
$st = stats($node);
is($st->{background_writes}, 0, 'no writer wrote');
cmp_ok($st->{caller_writes}, '>=', 2, 'callers wrote the reservation themselves');
is(writers_running($node), '0', 'no writer runs');
ok( $node->log_contains(
		qr/LOG:  could not start the snowflake reservation writer\n[^\n]*DETAIL:  No background worker slot is free: calls that issue IDs write the reservation themselves, waiting for the disk\.\n[^\n]*HINT:  Raise "max_worker_processes" \(a restart is needed\)\./,
		$log_offset),
	'the log says why, and what to do');
my $lines = () =
  slurp_file($node->logfile, $log_offset) =~
  /could not start the snowflake reservation writer/g;
is($lines, 1, 'once, although calls retried (at most once a minute)');
$node->append_conf('postgresql.conf', "max_worker_processes = 8\n");

# ---------------------------------------------------------------------------
# Server start, as seen by a shared state created at the first call.
# ---------------------------------------------------------------------------

my $new_life = qr/LOG:  snowflake IDs resume at (\d+) ms past the clock, because the generator starts \(without the preload, at its first use after the server started or restarted after a crash\)/;

# A clean restart: the floor, at the first use.
$log_offset = -s $node->logfile;
$node->restart;
ok(first_above($node, $max_id) eq 't', 'clean restart: the first ID is above');
ok($node->log_contains($new_life, $log_offset),
	'clean restart: the floor, and why (a start cannot be seen)');

# An immediate stop (crash recovery at the next start): the floor.
$max_id = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
$node->stop('immediate');
$log_offset = -s $node->logfile;
$node->start;
ok(first_above($node, $max_id) eq 't', 'after crash recovery: the first ID is above');
ok($node->log_contains($new_life, $log_offset), 'after crash recovery: the floor, and why');

# The primary is set to let IDs lead the clock by up to 30 s, which without
# the preload is used as 1 s: the state file records the capped lead before
# the backups are taken.
$node->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.max_drift_ms = '30s'; SELECT pg_reload_conf()");
$node->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '30s')
  or die 'timed out waiting for the reload';
$node->safe_psql('postgres', 'SELECT snowflake_nextval_batch(1000000) LIMIT 1');
{
	# Each process that generates IDs warns that the lead is capped at 1 s
	# without the preload; the poll takes a warning for a failure.
	local $ENV{PGOPTIONS} = '-c client_min_messages=error';
	ok( $node->poll_query_until(
			'postgres',
			'SELECT reservation_writes > 0 AND lead_ms = 0 FROM snowflake_stats'),
		'the primary wrote its state file (the lead set to 30 s, used as 1 s)');
}
$node->backup('live_backup');

my $standby = start_snowflake_node('former_standby',
	from_backup => [ $node, 'live_backup', has_streaming => 1 ]);
my $restored = start_snowflake_node('restored_backup',
	from_backup => [ $node, 'live_backup' ],
	start => 0);

# A restored backup whose first life replays the WAL to its end and never
# uses snowflake, then stops cleanly: its next life starts from a clean
# shutdown, replays nothing, and its state file is the backup's (issue 41).
my $replayed = start_snowflake_node('replayed_then_restarted',
	from_backup => [ $node, 'live_backup' ]);
$replayed->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restored backup did not leave recovery';
ok(-e $replayed->data_dir . '/backup_label.old',
	'the restored backup replayed WAL from its backup_label');
$replayed->stop;

# IDs the copies of the state file know nothing about, ahead of the clock:
# without the preload by at most 1 s whatever snowflake.max_drift_ms says
# (no WAL record can carry a larger lead), and the history's lead that
# every start's floor covers is that 1 s, not the setting's 30 s (which
# would refuse the first calls of every start for 29 s).
$max_id = lead_burst($node, 8);
cmp_ok(stats($node)->{lead_ms}, '>', 500, 'the burst leads the clock');
cmp_ok(stats($node)->{lead_ms}, '<=', 1000, '... by at most the 1 s cap without the preload');
$node->wait_for_catchup($standby);
$node->stop;

# The standby is restarted without standby.signal: no promotion, the same
# timeline and system as the old primary.  Nothing used snowflake on it.
$standby->stop;
unlink($standby->data_dir . '/standby.signal')
  or die "could not remove standby.signal: $!";
$log_offset = -s $standby->logfile;
$standby->start;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'the former standby runs as a primary');
is(first_above($standby, $max_id), 't',
	'former standby restarted without standby.signal: the first ID is above every ID of the old primary'
);
ok( $standby->log_contains($new_life, $log_offset)
	  && $standby->log_contains(qr/resume at 1000 ms past the clock/, $log_offset),
	'former standby: the floor, with the old primary\'s lead (capped at 1 s)');
$standby->stop;

# The backup started as a primary (backup_label, no signal file).
$restored->start;
is($restored->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'the restored backup runs as a primary');
is(first_above($restored, $max_id), 't',
	'base backup started as a primary: the first ID is above every ID of the old primary'
);
$restored->stop;

# The restored backup, its replaying life long over, started again: its
# first ID is above every ID of the old primary.
$log_offset = -s $replayed->logfile;
$replayed->start;
is($replayed->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'the restored backup, restarted cleanly, replays nothing');
is(first_above($replayed, $max_id), 't',
	'restored, replayed without minting, restarted cleanly: the first ID is above every ID of the old primary'
);
ok($replayed->log_contains($new_life, $log_offset),
	'the floor, at the first use of its second life');
my $batch = $replayed->safe_psql('postgres',
	"SELECT count(*) FILTER (WHERE x <= $max_id) FROM snowflake_nextval_batch(1000000) x");
is($batch, '0', 'and none of a batch of a million is at or below the old primary\'s last ID');
$replayed->stop;

done_testing();
