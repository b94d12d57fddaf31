# Copyright: see LICENSE
#
# 063_restored_copy.pl
#	A restored copy that runs beside its original: what happens when it
#	keeps the original's node id, and the safeguard that stops it.
#
# A base backup of a primary that claimed its node id is started as a
# primary while the original keeps running (a staging copy, a second
# region), and both insert under load for 10 s:
#  - with the original's node id: the copy mints keys equal to the
#    original's (the test counts them), and nothing notices: both have the
#    same system identifier, so the copy's claim of the node id is the
#    original's own claim as far as snowflake_node_claims can tell, and the
#    claim row applied to the original (as replication would) is taken
#    silently; both servers' stats say "ready";
#  - given its own node id before its first start (docs/operations.md):
#    no key in common.
# With snowflake.confirm_restore on (set by ALTER SYSTEM, so every copy of
# the data directory carries it):
#  - a base backup started as a primary, and a point-in-time recovery
#    (recovery.signal), with the original's node id refuse to generate
#    (55000, whole message), also after a restart, until a superuser runs
#    snowflake_confirm_restore() with the node id they mint with (another
#    one is refused: 22023); then they generate;
#  - a copy given its own node id generates at once;
#  - a standby promoted (a failover) and the original after a crash never
#    wait for a confirmation.
# The safeguard needs the preload (a server start is not seen without it):
# on 17 and later a server without it warns that the setting does nothing.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;

my $seconds = 10;

my $origin = start_snowflake_node('origin',
	node_id => 3,
	init => { allows_streaming => 1, has_archiving => 1 },
	settings => { restart_after_crash => 'on' },
	preload => 1);
$origin->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int);
SELECT snowflake_claim_node('origin');
INSERT INTO t (v) SELECT 0 FROM generate_series(1, 100);
});
$origin->backup('copy');

# Insert single rows into t on each of @nodes at once for $seconds (one
# pgbench client each, as fast as it goes); return the number of rows each
# inserted, in order.
sub load_side_by_side
{
	my (@nodes) = @_;
	my $script = PostgreSQL::Test::Utils::tempdir() . '/insert.sql';
	open my $fh, '>', $script or die "$script: $!";
	print $fh "INSERT INTO t (v) VALUES (1);\n";
	close $fh;
	my @before = map { $_->safe_psql('postgres', 'SELECT count(*) FROM t') } @nodes;
	my @runs = map {
		my ($out, $err) = ('', '');
		[
			IPC::Run::start(
				[
					'pgbench', '-n', '-c', '1', '-T', $seconds, '-f', $script,
					'-h', $_->host, '-p', $_->port, 'postgres'
				],
				'>', \$out, '2>', \$err),
			\$err
		]
	} @nodes;
	foreach my $run (@runs)
	{
		$run->[0]->finish or die "pgbench failed: ${$run->[1]}";
	}
	return map { $nodes[$_]->safe_psql('postgres', 'SELECT count(*) FROM t') - $before[$_] }
	  0 .. $#nodes;
}

# How many keys of t on $a are also keys of t on $b.
sub equal_keys
{
	my ($a, $b) = @_;
	my $file = PostgreSQL::Test::Utils::tempdir() . '/keys';
	$b->safe_psql('postgres', "COPY (SELECT id FROM t WHERE v = 1) TO '$file'");
	return $a->safe_psql(
		'postgres', qq{
CREATE TEMP TABLE other (id bigint);
COPY other FROM '$file';
SELECT count(*) FROM t JOIN other USING (id)});
}

# ---------------------------------------------------------------------------
# A copy started beside its original, with the original's node id or its own
# ---------------------------------------------------------------------------

# The copies carry the original's configuration, archive_command included:
# a copy must not archive into its original's archive (its WAL would take
# the place of the original's segments of the same names).
my %no_archive = (archive_mode => 'off');
my $same = start_snowflake_node('same_node_copy',
	from_backup => [ $origin, 'copy' ],
	settings => \%no_archive);
my $own = start_snowflake_node('own_node_copy',
	from_backup => [ $origin, 'copy' ],
	node_id => 4,
	settings => \%no_archive);
$_->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'a copy did not leave recovery'
  foreach $same, $own;

my @rows = load_side_by_side($origin, $same, $own);
cmp_ok($_, '>', 0, "the load inserted $_ rows") foreach @rows;
my $equal = equal_keys($origin, $same);
diag("in $seconds s, one client each: the original inserted $rows[0] rows, "
	  . "the copy with its node id $rows[1], the copy with its own $rows[2]; "
	  . "$equal keys of the copy with the same node id are also the original's");
cmp_ok($equal, '>', 0,
	"the copy with the original's node id minted keys equal to the original's ($equal in $seconds s)");
is(equal_keys($origin, $own), '0', 'the copy given its own node id: no key in common');
is(equal_keys($same, $own), '0', 'nor with the other copy');

# Nothing notices.
is( $same->safe_psql('postgres',
		'SELECT system_identifier FROM pg_control_system()'),
	$origin->safe_psql('postgres',
		'SELECT system_identifier FROM pg_control_system()'),
	'the copy has the original\'s system identifier');
is($same->safe_psql('postgres', "SELECT snowflake_claim_node('copy')"),
	'3', 'the copy claims node id 3 without an error');
is( $same->safe_psql('postgres',
		'SELECT string_agg(node_id || \':\' || server_name, \' \') FROM snowflake_node_claims'),
	'3:origin', 'its claims table holds the original\'s claim only: the same server');
my $claim = $same->safe_psql('postgres',
	"SELECT format('(%s, %s, %L)', node_id, system_identifier, 'copy') FROM snowflake_node_claims");
my ($sqlstate) = sql_error($origin,
	"INSERT INTO snowflake_node_claims (node_id, system_identifier, server_name) VALUES $claim");
is($sqlstate, 'none', 'the copy\'s claim, applied to the original as replication would, raises nothing');
is( $origin->safe_psql('postgres', 'SELECT count(*) FROM snowflake_node_claims'),
	'1', 'and is taken silently as the same server\'s');
is(join('|', map { stats($_)->{status} } $origin, $same),
	'ready|ready', 'both servers\' stats say "ready"');
$_->stop foreach $same, $own;

# ---------------------------------------------------------------------------
# The safeguard: snowflake.confirm_restore
# ---------------------------------------------------------------------------

$origin->safe_psql('postgres', "ALTER SYSTEM SET snowflake.confirm_restore = on");
$origin->restart;
is($origin->safe_psql('postgres', 'SHOW snowflake.confirm_restore'), 'on',
	'snowflake.confirm_restore is on in the original');
$origin->backup('guarded');
$origin->safe_psql('postgres', "SELECT pg_create_restore_point('guarded')");
$origin->safe_psql('postgres', 'INSERT INTO t (v) VALUES (2); SELECT pg_switch_wal()');
$origin->poll_query_until('postgres',
	'SELECT last_archived_wal IS NOT NULL AND failed_count = 0 FROM pg_stat_archiver')
  or die 'timed out waiting for WAL archiving';

my $refused = sub {
	my ($how) = @_;
	return "55000: snowflake node id 3 is not confirmed after a restore\n"
	  . "DETAIL:  This server started $how: a restore. A restored copy that runs beside its original with the same node id mints the same keys (\"snowflake.confirm_restore\" is on).\n"
	  . 'HINT:  If this server replaces the one it was restored from, have a superuser run SELECT snowflake_confirm_restore(3); if it runs beside it, give it its own "snowflake.node_id" and restart it.';
};

my $restored = start_snowflake_node('guarded_backup',
	from_backup => [ $origin, 'guarded' ],
	settings => \%no_archive);
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
is(error_report($restored, 'INSERT INTO t (v) VALUES (3)'),
	$refused->('from a base backup (backup_label)'),
	'a base backup started as a primary refuses to generate, saying why and what to do');
is(stats($restored)->{status}, 'node id not confirmed', 'its stats say so');
$restored->restart;
is(error_report($restored, 'SELECT snowflake_nextval()'),
	"55000: snowflake node id 3 is not confirmed after a restore\n"
	  . "DETAIL:  This server started from a restore, and its node id has not been confirmed since. A restored copy that runs beside its original with the same node id mints the same keys (\"snowflake.confirm_restore\" is on).\n"
	  . 'HINT:  If this server replaces the one it was restored from, have a superuser run SELECT snowflake_confirm_restore(3); if it runs beside it, give it its own "snowflake.node_id" and restart it.',
	'after a restart too');
is( error_report($restored, 'SELECT snowflake_confirm_restore(4)'),
	"22023: snowflake node id 4 is not the one this server mints with\n"
	  . "DETAIL:  This server mints with node id 3.\n"
	  . 'HINT:  If this server runs beside the one it was restored from, give it its own "snowflake.node_id" and restart it instead.',
	'confirming another node id is refused');
my $offset = -s $restored->logfile;
is($restored->safe_psql('postgres', 'SELECT snowflake_confirm_restore(3)'),
	'3', 'a superuser confirms the node id');
ok($restored->log_contains(qr/LOG:  snowflake node id 3 confirmed after a restore/, $offset),
	'the log says so');
is($restored->safe_psql('postgres', 'INSERT INTO t (v) VALUES (3) RETURNING snowflake_node_id(id)'),
	'3', 'then it generates');
$restored->restart;
is($restored->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'3', 'and goes on after a restart');
is( error_report($restored, 'SELECT snowflake_confirm_restore(3)'),
	"55000: no restored snowflake node id to confirm\n"
	  . 'DETAIL:  Generation is not waiting for a confirmation of the node id: "snowflake.confirm_restore" is off, this server did not start from a restore, or its node id was confirmed already.',
	'there is nothing to confirm any more');
$restored->stop;

# Point-in-time recovery to the restore point (recovery.signal).
my $pitr = start_snowflake_node('guarded_pitr',
	from_backup => [ $origin, 'guarded', has_restoring => 1, standby => 0 ],
	settings => {
		%no_archive,
		recovery_target_name => 'guarded',
		recovery_target_action => 'promote'
	});
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the point-in-time recovery did not end';
is(error_report($pitr, 'SELECT snowflake_nextval()'),
	$refused->('in archive recovery (recovery.signal)'),
	'a point-in-time recovery refuses to generate too');
$pitr->safe_psql('postgres', 'SELECT snowflake_confirm_restore(3)');
is($pitr->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'3', 'until confirmed');
$pitr->stop;

# A copy given its own node id before its first start: nothing to confirm.
my $renamed = start_snowflake_node('guarded_own_node',
	from_backup => [ $origin, 'guarded' ],
	node_id => 5,
	settings => \%no_archive);
$renamed->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
is($renamed->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'5', 'a copy given its own node id generates at once');
$renamed->stop;

# A standby promoted (a failover) never waits for a confirmation.
my $standby = start_snowflake_node('guarded_standby',
	from_backup => [ $origin, 'guarded', has_streaming => 1 ],
	settings => \%no_archive);
$origin->wait_for_catchup($standby);

# The original after a crash neither.
$origin->kill9;
start_after_kill9($origin);
is($origin->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'3', 'the original, after a crash, generates at once');
$origin->stop;
promote_and_wait($standby);
is($standby->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'3', 'a promoted standby generates at once');
$standby->stop;

# Without the preload, the setting does nothing, and says so.
if ($origin->pg_version >= 17)
{
	my $plain = start_snowflake_node('guarded_no_preload',
		node_id => 6,
		preload => 0,
		settings => { 'snowflake.confirm_restore' => 'on' });
	my (undef, $stderr) = sql_error($plain, "CREATE EXTENSION snowflake;\nSELECT snowflake_nextval() > 0");
	like(
		$stderr,
		qr/WARNING:  55000: parameter "snowflake\.confirm_restore" has no effect without the preload\nDETAIL:  Without "shared_preload_libraries" the server's start cannot be seen, so a restore cannot be told from a restart\.\nHINT:  Add snowflake to "shared_preload_libraries" in postgresql\.conf and restart the server\./,
		'without the preload, the first use warns that the setting has no effect');
	$plain->stop;
}
else
{
	note('PostgreSQL ' . $origin->pg_version . ' has no mode without the preload');
}

done_testing();
