# Copyright: see LICENSE
#
# 063_restored_copy.pl
#	A restored copy that runs beside its original: what happens when it
#	keeps the original's node id, and the safeguard that stops it.
#
# A base backup of a primary that claimed its node id is restored (archive
# recovery) and runs as a primary while the original keeps running (a
# staging copy, a second region), and both insert under load for 10 s:
#  - with the original's node id: the copy mints keys equal to the
#    original's (the test counts them), and nothing notices: both have the
#    same system identifier, so the copy's claim of the node id is the
#    original's own claim as far as snowflake_node_claims can tell, and the
#    claim row applied to the original (as replication would) is taken
#    silently; both servers' stats say "ready";
#  - given its own node id before its first start (docs/operations.md):
#    no key in common;
#  - the page's recipe for such a copy, run as written on copies of an
#    original with the node ids it names (node_id 1, node_id_span 2):
#    configured, with a standby promoted once the original is lost (it
#    mints with node id 2, which the recipe's copy must not take), and
#    derived from an environment variable (the recipe must stop the
#    derivation, or the copy does not start);
#  - a base backup started as a primary without recovery.signal continues
#    the original's timeline: it refuses to generate until its node id is
#    confirmed, whatever snowflake.confirm_restore says (issue 44).
# With snowflake.confirm_restore on (set by ALTER SYSTEM, so every copy of
# the data directory carries it):
#  - a restore (recovery.signal), to its end or to a point in time, with
#    the original's node id refuses to generate
#    (55000, whole message), also after a restart, until a superuser runs
#    snowflake_confirm_restore() with the node id they mint with (another
#    one is refused: 22023); then they generate;
#  - a copy given its own node id generates at once;
#  - the request is never lost: a restore whose state file cannot be
#    written, or is unusable, does not start (recovery would remove the
#    sign of the restore before the file records it), and waits for the
#    confirmation once started, also after a crash re-initialisation while
#    the file cannot be written; a restore started with another epoch is
#    refused for the layout first, and still waits for the confirmation
#    once the epoch is put back or adopted;
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
use File::Basename ();
use File::Spec;

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
	from_backup => [ $origin, 'copy', has_restoring => 1, standby => 0 ],
	settings => \%no_archive);
my $own = start_snowflake_node('own_node_copy',
	from_backup => [ $origin, 'copy', has_restoring => 1, standby => 0 ],
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

# The page's recipe for a copy that will write beside its original
# (docs/operations.md), read from the page and run as written on a copy of
# a running original's files: a base backup with the original's
# postmaster.pid beside it, as a copy of a running server's directory has
# (with it in place the copy does not start, and pg_ctl stop run on the
# copy would signal the original).  Only the port is the test's.  The
# original is the one the recipe names (its node_id and node_id_span), once
# configured with snowflake.node_id, with a streaming standby that is
# promoted after the original is lost (it mints with the span's second node
# id, which a copy given that node id would share), and once deriving the
# same node ids from an environment variable (snowflake.node_id_from), as
# the HA pages advise: the recipe must start that copy too, which it does
# not without its snowflake.node_id_from = '' line.
{
	my $root = File::Spec->rel2abs(File::Basename::dirname(__FILE__) . '/../..');
	my %recipes = doc_recipes("$root/docs/operations.md");
	my $recipe = $recipes{'restore/copy-beside.sh'};
	ok(defined $recipe, 'docs/operations.md has the recipe of a copy beside its original');
	like($recipe, qr/^port = \d+$/m, 'the recipe gives the copy its own port');
	my ($orig_id, $span) =
	  $recipe =~ /original mints with node_id (\d+) and node_id_span (\d+)/;
	my ($copy_id) = $recipe =~ /^snowflake\.node_id = (\d+)$/m;
	ok(defined $span && $span == 2 && defined $copy_id,
		'the recipe names its original\'s node_id and a span of 2, and the copy\'s node id');
	ok($copy_id > $orig_id + $span - 1 || $copy_id + $span - 1 < $orig_id,
		"the copy's node ids ($copy_id to " . ($copy_id + $span - 1)
		  . ") are outside the original's ($orig_id to " . ($orig_id + $span - 1) . ')');

	# Run the recipe (with its lines matching $drop left out, if given) on a
	# copy of $original's files; return the copy and whether it started.
	my $copy_by_recipe = sub {
		my ($original, $name, $drop) = @_;
		my $copy = PostgreSQL::Test::Cluster->new($name);
		my $port = $copy->port;
		(my $script = $recipe) =~ s/^port = \d+$/port = $port/m;
		$script =~ s/^\Q$drop\E\n//mg if defined $drop;
		PostgreSQL::Test::Utils::system_or_bail('pg_basebackup', '-D', $copy->data_dir,
			'-X', 'stream', '-c', 'fast', '-h', $original->host, '-p', $original->port);
		PostgreSQL::Test::Utils::system_or_bail('cp', $original->data_dir . '/postmaster.pid',
			$copy->data_dir . '/postmaster.pid');
		my ($ok, $out, $err) = run_in_dir(PostgreSQL::Test::Utils::tempdir(),
			{ COPY => $copy->data_dir }, 120, [ 'bash', '-e', '-c', $script ]);
		$copy->_update_pid($ok ? 1 : -1);
		diag("the recipe failed:\n$out$err"
			  . (-e $copy->data_dir . '.log' ? slurp_file($copy->data_dir . '.log') : ''))
		  if !$ok && !defined $drop;
		return ($copy, $ok);
	};

	# Configured: the original, its standby, the copy.
	my $configured = start_snowflake_node('span_original',
		node_id => $orig_id,
		init => { allows_streaming => 1 },
		settings => { 'snowflake.node_id_span' => $span },
		preload => 1);
	$configured->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	$configured->backup('span_standby');
	my $standby = start_snowflake_node('span_standby',
		from_backup => [ $configured, 'span_standby', has_streaming => 1 ]);
	my ($copy, $ok) = $copy_by_recipe->($configured, 'recipe_copy');
	ok($ok, 'the recipe starts the copy of an original configured with snowflake.node_id');
	ok(-s $copy->data_dir . '.log', 'and its log goes to the file pg_ctl -l names');
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the recipe\'s copy did not leave recovery';
	is($copy->safe_psql('postgres', q{SELECT current_setting('archive_mode')}),
		'off', 'the recipe\'s copy does not archive');
	mint_into($_, 20000) foreach $configured, $copy;
	my $node_ids = 'SELECT string_agg(DISTINCT snowflake_node_id(id)::text, \',\') FROM minted_%s';
	my $original_ids = $configured->safe_psql('postgres', sprintf($node_ids, $configured->name));
	$configured->wait_for_catchup($standby);
	$configured->stop;    # the original is lost
	promote_and_wait($standby);
	mint_into($standby, 20000);
	mint_into($copy, 20000);
	is( join(' ',
			$original_ids,
			$standby->safe_psql('postgres', sprintf($node_ids, $standby->name)),
			$copy->safe_psql('postgres', sprintf($node_ids, $copy->name))),
		"$orig_id " . ($orig_id + 1) . " $copy_id",
		'the original minted with its node id, its promoted standby with the span\'s next, the copy with its own');
	is(keys_in_common($copy, $standby), '0',
		"the recipe's copy (node id $copy_id) and the original's promoted standby: no key in common of 40000 each");
	is(keys_in_common($standby, minted_file($copy)), '0', 'either way');
	$copy->stop;
	$standby->stop;

	# Derived: the original derives node id 1 (member 0 of node ids 1 and 2,
	# with the span).  The recipe's copy starts, and mints with its own; the
	# recipe without the line that stops the derivation does not start it.
	local $ENV{SF_COPY_MEMBER} = '0';
	my $derived = start_snowflake_node('derived_original',
		init => { allows_streaming => 1 },
		settings => {
			'snowflake.node_id_from' => 'env:SF_COPY_MEMBER',
			'snowflake.node_id_base' => $orig_id,
			'snowflake.node_id_count' => $span,
			'snowflake.node_id_span' => $span
		},
		preload => 1);
	$derived->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	is($derived->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
		$orig_id, "the derived original mints with node id $orig_id");
	my ($refused, $started) = $copy_by_recipe->($derived, 'recipe_copy_kept_derivation',
		"snowflake.node_id_from = ''");
	ok(!$started, "without its snowflake.node_id_from = '' line, the recipe does not start a copy of a member that derives its node id");
	like(slurp_file($refused->data_dir . '.log'),
		qr/"snowflake\.node_id" is set too \($copy_id\): set one of them only\./,
		'the log says why, as the page quotes it');
	($copy, $ok) = $copy_by_recipe->($derived, 'recipe_copy_of_derived');
	ok($ok, 'the recipe as written starts it');
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the recipe\'s copy did not leave recovery';
	mint_into($_, 20000) foreach $derived, $copy;
	is($copy->safe_psql('postgres', sprintf($node_ids, $copy->name)),
		$copy_id, "the copy mints with node id $copy_id");
	is(keys_in_common($copy, $derived), '0', 'and shares no key with its original');
	$copy->stop;
	ok(kill(0, $derived->{_pid}), 'the original still runs after the copy was stopped');
	$derived->stop;
}

# Started without recovery.signal, the same base backup continues the
# original's timeline: it waits for its node id to be confirmed.
my $continued = start_snowflake_node('continued_copy',
	from_backup => [ $origin, 'copy' ],
	settings => \%no_archive);
$continued->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
like(error_report($continued, 'INSERT INTO t (v) VALUES (1)'),
	qr/^55000: snowflake node id 3 is not confirmed after leaving recovery without a new timeline\nDETAIL:  This server started from a base backup \(backup_label\) without standby\.signal or recovery\.signal: /,
	'a base backup started without recovery.signal refuses to generate, whatever snowflake.confirm_restore says');
$continued->stop;

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
	from_backup => [ $origin, 'guarded', has_restoring => 1, standby => 0 ],
	settings => \%no_archive);
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
is(error_report($restored, 'INSERT INTO t (v) VALUES (3)'),
	$refused->('in archive recovery (recovery.signal)'),
	'a restore refuses to generate, saying why and what to do');
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
	  . 'HINT:  If this server runs beside the one it was copied from, give it its own "snowflake.node_id" and restart it instead.',
	'confirming another node id is refused');
my $offset = -s $restored->logfile;
is($restored->safe_psql('postgres', 'SELECT snowflake_confirm_restore(3)'),
	'3', 'a superuser confirms the node id');
ok($restored->log_contains(qr/LOG:  snowflake node id 3 confirmed\n/, $offset),
	'the log says so');
is($restored->safe_psql('postgres', 'INSERT INTO t (v) VALUES (3) RETURNING snowflake_node_id(id)'),
	'3', 'then it generates');
$restored->restart;
is($restored->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'3', 'and goes on after a restart');
is( error_report($restored, 'SELECT snowflake_confirm_restore(3)'),
	"55000: no restored snowflake node id to confirm\n"
	  . 'DETAIL:  Generation is not waiting for a confirmation of the node id: this server did not start from a restore with "snowflake.confirm_restore" on, nor leave recovery without a new timeline, nor start with a node id in the span of the one its history mints under, or its node id was confirmed already.',
	'there is nothing to confirm any more');
$restored->stop;

# Point-in-time recovery to the restore point.
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
	from_backup => [ $origin, 'guarded', has_restoring => 1, standby => 0 ],
	node_id => 5,
	settings => \%no_archive);
$renamed->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
is($renamed->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'5', 'a copy given its own node id generates at once');
$renamed->stop;

# ---------------------------------------------------------------------------
# The request is never lost
# ---------------------------------------------------------------------------

my $refused_since =
  "55000: snowflake node id 3 is not confirmed after a restore\n"
  . "DETAIL:  This server started from a restore, and its node id has not been confirmed since. A restored copy that runs beside its original with the same node id mints the same keys (\"snowflake.confirm_restore\" is on).\n"
  . 'HINT:  If this server replaces the one it was restored from, have a superuser run SELECT snowflake_confirm_restore(3); if it runs beside it, give it its own "snowflake.node_id" and restart it.';
my $must_record =
  'It mints nothing until its node id is confirmed, and the state file must record that before recovery removes what tells such a start, so the server does not start.';

# Kill a backend of $node, so that the postmaster re-initialises shared
# memory, and wait until it is back.
sub crash_reinit
{
	my ($node) = @_;
	my $victim = $node->background_psql('postgres');
	my $pid = query_value($victim, 'SELECT pg_backend_pid()');
	my $offset = -s $node->logfile;
	kill('KILL', $pid) or die "could not kill $pid";
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	eval { $victim->quit };
	$node->poll_query_until('postgres', 'SELECT true') or die $node->name . ' did not come back';
	return;
}

# The state file cannot be written at the restore's start: the request
# cannot be recorded before recovery removes recovery.signal (and renames
# backup_label), the only signs of a restore.  The server does not start,
# and says why; started again once the cause is removed, it waits for the
# confirmation.  (In 1.1, it started, refused to mint, lost the request with
# backup_label, and minted without a confirmation after a restart or a crash
# re-initialisation.)
set_fault('open EACCES');
my $unwritable = start_snowflake_node('guarded_unwritable',
	from_backup => [ $origin, 'guarded', has_restoring => 1, standby => 0 ],
	settings => \%no_archive,
	start => 0);
my $started = start_with_shim($unwritable, fail_ok => 1);
ok(!$started, 'a restore whose state file cannot be written does not start');
ok( $unwritable->log_contains(
		qr/FATAL:  could not create file "snowflake\.state\.tmp": Permission denied\n[^\n]*DETAIL:  This server started in archive recovery \(recovery\.signal\): a restore\. \Q$must_record\E\n[^\n]*HINT:  Make the state file in the data directory writable by the server again \(permissions, free space, the disk\), then start the server again\./
	),
	'and says why, and what to do');
ok(-e $unwritable->data_dir . '/recovery.signal', 'its recovery.signal is still there');
if ($started)
{
	$unwritable->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the copy did not leave recovery';
	$unwritable->stop;
}
set_fault();
start_with_shim($unwritable);
$unwritable->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
is(error_report($unwritable, 'SELECT snowflake_nextval()'),
	$refused->('in archive recovery (recovery.signal)'),
	'the cause removed, it starts from the restore, and waits for the confirmation');

# The state file records the request: a crash re-initialisation while the
# file cannot be written keeps it, and so does a restart.
set_fault('open EACCES');
crash_reinit($unwritable);
is(error_report($unwritable, 'SELECT snowflake_nextval()'),
	$refused_since, 'after a crash re-initialisation with the state file unwritable, still');
set_fault();
is(error_report($unwritable, 'SELECT snowflake_nextval()'),
	$refused_since, 'and with the file writable again');
$unwritable->restart;
is(error_report($unwritable, 'SELECT snowflake_nextval()'),
	$refused_since, 'and after a restart');
$unwritable->stop;

# The restore's state file is unusable (here too short): it cannot record
# the request, and is left as it is for the operator to look at.  The server
# does not start; once the file is removed (as the README's
# "Troubleshooting" says), it starts from the restore, and waits for the
# confirmation.
my $corrupt = start_snowflake_node('guarded_corrupt',
	from_backup => [ $origin, 'guarded', has_restoring => 1, standby => 0 ],
	settings => \%no_archive,
	start => 0);
write_raw($corrupt->data_dir . '/snowflake.state', 'not a state file');
$started = $corrupt->start(fail_ok => 1);
ok(!$started, 'a restore whose state file is unusable does not start');
ok( $corrupt->log_contains(
		qr/FATAL:  file "snowflake\.state" is corrupt \(wrong size\)\n[^\n]*DETAIL:  This server started in archive recovery \(recovery\.signal\): a restore\. \Q$must_record\E An unusable state file is left as it is\.\n[^\n]*HINT:  See the section "Troubleshooting" of the snowflake README before removing the state file, then start the server again\./
	),
	'and says why, and what to do');
if ($started)
{
	$corrupt->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the copy did not leave recovery';
	$corrupt->stop;
}
unlink($corrupt->data_dir . '/snowflake.state') or die "snowflake.state: $!";
$corrupt->start;
$corrupt->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
is(error_report($corrupt, 'SELECT snowflake_nextval()'),
	$refused->('in archive recovery (recovery.signal)'),
	'the file removed, it starts from the restore, and waits for the confirmation');
$corrupt->stop;

# The restore's first start has another epoch configured: the layout is
# refused first, and the confirmation cannot come before it.  The epoch put
# back, the request is still there.
my $layout_error = qr/^55000: snowflake epoch or layout differs from the one recorded in "snowflake\.state"\n/;
my $epoch = start_snowflake_node('guarded_epoch',
	from_backup => [ $origin, 'guarded', has_restoring => 1, standby => 0 ],
	settings => { %no_archive, 'snowflake.epoch' => '2023-01-01 00:00:00+00' });
$epoch->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
like(error_report($epoch, 'SELECT snowflake_nextval()'), $layout_error,
	'a restore started with another epoch: the layout is refused first');
is(stats($epoch)->{status}, 'layout changed', 'its stats say so');
like(error_report($epoch, 'SELECT snowflake_confirm_restore(3)'), $layout_error,
	'the node id cannot be confirmed before the layout is settled');
$epoch->append_conf('postgresql.conf', "snowflake.epoch = '2024-01-01 00:00:00+00'");
$epoch->restart;
is(error_report($epoch, 'SELECT snowflake_nextval()'),
	$refused_since, 'the epoch put back: it still waits for the confirmation');
$epoch->stop;

# The same, the configured epoch adopted instead: the adoption lifts the
# layout's refusal only.
my $adopted = start_snowflake_node('guarded_adopted',
	from_backup => [ $origin, 'guarded', has_restoring => 1, standby => 0 ],
	settings => { %no_archive, 'snowflake.epoch' => '2023-01-01 00:00:00+00' });
$adopted->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the copy did not leave recovery';
$adopted->safe_psql('postgres', 'SELECT snowflake_adopt_layout()');
is(error_report($adopted, 'SELECT snowflake_nextval()'),
	$refused->('in archive recovery (recovery.signal)'),
	'the configured epoch adopted: it still waits for the confirmation');
$adopted->restart;
is(error_report($adopted, 'SELECT snowflake_nextval()'),
	$refused_since, 'also after a restart');
$adopted->safe_psql('postgres', 'SELECT snowflake_confirm_restore(3)');
is($adopted->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'3', 'once confirmed, it mints');
$adopted->stop;

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
