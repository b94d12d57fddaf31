# Copyright: see LICENSE
#
# 071_sql_edition_locks.pl
#	No other role can stop or slow the SQL edition's generation: an
#	unprivileged role that holds every lock it can take, and queues behind
#	them every lock it can ask for, delays no call.
#
# On a server without the C library, the edition is installed as the
# extension by its owner; an application role inserts keys, and a hostile
# role with the same rights (USAGE on the edition's schema, SELECT and
# INSERT on the application's table, a schema of its own) does what it can:
#  - in open transactions, advisory locks: the key the released 1.2
#    serialised its moves with and 5,000 keys of each form around it,
#    exclusive, 5,000 more shared; a lock on every table and sequence of the
#    database it can name (PREPAREd statements lock a relation before any
#    privilege is checked, LOCK TABLE where it has the right), and every
#    sequence whose value it may read (pg_sequence_last_value by OID);
#  - in other sessions, ACCESS EXCLUSIVE requests queued behind those
#    locks (ALTER TABLE ... ATTACH PARTITION locks its target before it
#    checks ownership) on every relation of the edition it can name, and
#    LOCK TABLE of them.
# Then eight pgbench clients insert for a few seconds, as they did for as
# long before the hostile role began: no transaction fails, no key repeats,
# no call waits for a lock the hostile role holds or asks for (sampled
# every few milliseconds from pg_locks), and the latency of the calls is
# reported beside that of the run before (the page states the figures).
# The same attacks on the released 1.2 stop its generation: its advisory
# lock, and an ACCESS EXCLUSIVE request queued on its key sequence, which
# lived in the edition's schema.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $seconds = $ENV{SNOWFLAKE_EDITION_LOCK_SECONDS} // 6;
my $install = edition_installation(edition_build());
my $node = start_edition_node('edition_locks', $install,
	settings => { max_connections => 40, max_locks_per_transaction => 1024, synchronous_commit => 'off' });
$node->safe_psql(
	'postgres', q{
CREATE ROLE ed_owner LOGIN;
CREATE ROLE app_user LOGIN;
CREATE ROLE hostile LOGIN;
GRANT CREATE ON DATABASE postgres TO ed_owner;
CREATE SCHEMA app AUTHORIZATION ed_owner;
CREATE SCHEMA h AUTHORIZATION hostile;
});
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake SCHEMA app;
SELECT app.snowflake_set_node_id(5);
CREATE TABLE app.orders (id bigint PRIMARY KEY DEFAULT app.snowflake_nextval(), client int, phase int);
GRANT USAGE ON SCHEMA app TO app_user, hostile;
GRANT SELECT, INSERT ON app.orders TO app_user, hostile;
}, extra_params => [ '-U', 'ed_owner' ]);

# The released 1.2 in a database of its own, with the same roles.
$node->safe_psql('postgres', 'CREATE DATABASE old OWNER ed_owner');
my ($ret, undef, $stderr) = run_script($node, 'old',
	plain_from_extension_script(edition_root() . '/sql-edition/dist/extension/snowflake--1.2.sql', 'app'),
	undef, [ 'CREATE SCHEMA app AUTHORIZATION ed_owner', 'SET ROLE ed_owner' ]);
is($ret, 0, 'the released 1.2 installs in another database') or diag($stderr);
$node->safe_psql('old', 'CREATE SCHEMA h AUTHORIZATION hostile');
$node->safe_psql(
	'old', q{
SELECT app.snowflake_set_node_id(6);
CREATE TABLE app.orders (id bigint PRIMARY KEY DEFAULT app.snowflake_nextval(), client int, phase int);
GRANT USAGE ON SCHEMA app TO app_user, hostile;
GRANT SELECT, INSERT ON app.orders TO app_user, hostile;
}, extra_params => [ '-U', 'ed_owner' ]);

# pgbench: eight clients inserting one key a transaction for $seconds s, as
# app_user, every transaction's latency logged.  start_load() starts it,
# finish_load() returns the latencies in ms, sorted, and pgbench's output.
sub start_load
{
	my ($phase) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	open my $fh, '>', "$dir/insert.sql" or die $!;
	print $fh "INSERT INTO app.orders (client, phase) VALUES (:client_id, $phase);\n";
	close $fh;
	my $run = { dir => $dir, out => '' };
	$run->{h} = IPC::Run::start(
		[
			'pgbench', '-n', '-c', 8, '-j', 2, '-T', $seconds, '-f', "$dir/insert.sql", '-l',
			'--log-prefix', "$dir/log", '-h', $node->host, '-p', $node->port, '-U', 'app_user', 'postgres'
		],
		'>', \$run->{out}, '2>&1', IPC::Run::timeout($seconds + 120));
	return $run;
}

sub finish_load
{
	my ($run) = @_;
	$run->{h}->finish;
	my @latency;
	foreach my $log (glob("$run->{dir}/log*"))
	{
		open my $lf, '<', $log or die $!;
		while (<$lf>)
		{
			my @f = split;
			push @latency, $f[2] / 1000;
		}
		close $lf;
	}
	return ([ sort { $a <=> $b } @latency ], $run->{out});
}

sub figures
{
	my ($lat) = @_;
	return sprintf('%d inserts, median %.2f ms, p99 %.2f ms, max %.1f ms',
		scalar(@$lat), $lat->[ int(@$lat / 2) ], $lat->[ int(@$lat * 0.99) ], $lat->[-1]);
}

# The inserts' waits, sampled every 10 ms while a load runs: each insert
# waiting for a heavyweight lock, and the role of each process it waits
# for (pg_blocking_pids).
my $sampler = $node->background_psql('postgres');
query_value($sampler, 'CREATE SCHEMA probe; CREATE TABLE probe.waits (phase int, pid int, wait text, blocker_role text)');
sub run_phase
{
	my ($phase) = @_;
	my $run = start_load($phase);
	my $samples = 0;
	while ($run->{h}->pumpable)
	{
		query_value($sampler, qq{
INSERT INTO probe.waits
SELECT $phase, a.pid, a.wait_event_type || ':' || a.wait_event, b.usename
  FROM pg_stat_activity a LEFT JOIN LATERAL unnest(pg_blocking_pids(a.pid)) bp(pid) ON true
  LEFT JOIN pg_stat_activity b ON b.pid = bp.pid
 WHERE a.usename = 'app_user' AND a.wait_event_type = 'Lock';
SELECT pg_sleep(0.01)});
		$samples++;
		$run->{h}->pump_nb;
	}
	my ($latency, $out) = finish_load($run);
	my $waits = $node->safe_psql(
		'postgres', qq{
SELECT coalesce(string_agg(w || ' x' || n, ', ' ORDER BY n DESC), 'nothing')
  FROM (SELECT wait || coalesce(' (held by ' || blocker_role || ')', '') AS w, count(*) AS n
          FROM probe.waits WHERE phase = $phase GROUP BY 1) x});
	return ($latency, $out, "$samples samples: $waits");
}

my ($before, $out, $waits) = run_phase(1);
like($out, qr/number of failed transactions: 0 /, 'before: pgbench inserts, no transaction fails');
note('before the hostile role: ' . figures($before) . "; the inserts waited for, in $waits");

# --- the hostile role ---

my $hostile = $node->background_psql('postgres', on_error_stop => 0,
	extra_params => [ '-U', 'hostile' ]);
query_value($hostile, 'BEGIN');
# Advisory locks: 1.2's key, and keys of both forms around it, shared in
# a second session, exclusive in this one.
query_value($hostile, q{
SELECT pg_advisory_lock(1936617335, 1718378859);
SELECT count(pg_advisory_lock(k)) FROM generate_series(0, 4999) k;
SELECT count(pg_advisory_lock(1936617335, k)) FROM generate_series(1718376359, 1718381358) k});
my $shared = $node->background_psql('postgres', on_error_stop => 0, extra_params => [ '-U', 'hostile' ]);
query_value($shared, q{
BEGIN;
SELECT count(pg_advisory_lock_shared(k)) FROM generate_series(5000, 9999) k;
SELECT pg_advisory_xact_lock_shared(1936617336, 1718378859)});
# Every table and sequence it can name: a PREPAREd statement of each kind
# locks it (ACCESS SHARE, ROW SHARE, ROW EXCLUSIVE) before any privilege
# is checked, until the transaction ends; LOCK TABLE where it may.
my $named = $node->safe_psql(
	'postgres', q{
SELECT string_agg(format('%I.%I', n.nspname, c.relname), ' ' ORDER BY c.oid)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'S', 'p', 'v') AND has_schema_privilege(n.oid, 'USAGE')
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')},
	extra_params => [ '-U', 'hostile' ]);
# A statement in a savepoint of the hostile role's transaction: kept if it
# works (and the locks it took with it), rolled back if it fails.
sub try_keep
{
	my ($sess, $sql) = @_;
	$sess->query_safe('SAVEPOINT s');
	$sess->{stderr} = '';
	$sess->query($sql);
	if ($sess->{stderr} =~ /ERROR/)
	{
		$sess->{stderr} = '';
		$sess->query_safe('ROLLBACK TO s');
	}
	$sess->query_safe('RELEASE s');
	return;
}
my $i = 0;
foreach my $rel (split ' ', $named)
{
	$i++;
	try_keep($hostile, "PREPARE p${i}a AS SELECT * FROM $rel");
	try_keep($hostile, "PREPARE p${i}b AS SELECT * FROM $rel FOR UPDATE");
	try_keep($hostile, "PREPARE p${i}c AS DELETE FROM $rel");
	try_keep($hostile, "LOCK TABLE $rel IN ROW EXCLUSIVE MODE");
}
# Every sequence it may read, by its OID (no schema privilege needed).
query_value($hostile, q{
SELECT count(pg_sequence_last_value(c.oid))
  FROM pg_class c WHERE CASE WHEN c.relkind = 'S' THEN has_sequence_privilege(c.oid, 'SELECT') END});
my $held = $node->safe_psql(
	'postgres', q{
SELECT count(*) FILTER (WHERE l.locktype = 'advisory'),
       count(*) FILTER (WHERE l.locktype = 'relation' AND n.nspname = '_snowflake'),
       string_agg(DISTINCT c.relname, ',' ORDER BY c.relname) FILTER (WHERE l.locktype = 'relation' AND n.nspname <> 'pg_catalog')
  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
  LEFT JOIN pg_class c ON c.oid = l.relation LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE a.usename = 'hostile' AND l.granted AND a.datname = 'postgres'});
is($held, '15001|1|_snowflake_id_seq,orders',
	'the hostile role holds 15,001 advisory locks (1.2\'s key among them), locks on the table it can name, and on the key sequence it may read');

# ACCESS EXCLUSIVE requests on the edition's relations, from other
# sessions: refused at once, none queued.
my %refused;
foreach my $rel ('_snowflake._snowflake_id_seq', '_snowflake._snowflake_state_seq', '_snowflake._snowflake_node_seq',
	'_snowflake._snowflake_lock')
{
	my $q = $node->background_psql('postgres', on_error_stop => 0, extra_params => [ '-U', 'hostile' ]);
	$q->query("CREATE TABLE IF NOT EXISTS h.parted (one bool) PARTITION BY LIST (one)");
	my $e1 = $q->query("ALTER TABLE h.parted ATTACH PARTITION $rel FOR VALUES IN (true)") // '';
	$refused{ $q->{stderr} =~ /permission denied for schema _snowflake/ ? 'refused' : "not refused: $q->{stderr}" }++;
	$q->{stderr} = '';
	$q->query("BEGIN; LOCK TABLE $rel IN ACCESS EXCLUSIVE MODE");
	$refused{ $q->{stderr} =~ /permission denied for schema _snowflake/ ? 'refused' : "not refused: $q->{stderr}" }++;
	$q->quit;
}
is(join(',', map { "$_=$refused{$_}" } sort keys %refused), 'refused=8',
	'the hostile role\'s ACCESS EXCLUSIVE requests on the edition\'s relations (ATTACH PARTITION, LOCK TABLE) are refused before they lock');

# The load again.
(my $during, $out, $waits) = run_phase(2);
like($out, qr/number of failed transactions: 0 /, 'with the hostile role: pgbench inserts, no transaction fails');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id), count(*) > 0 FROM app.orders WHERE phase = 2'),
	't|t', 'every key unique');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE blocker_role = 'hostile') FROM probe.waits WHERE phase = 2}),
	'0', 'no insert waited for a lock the hostile role holds or asks for');
note('with the hostile role: ' . figures($during) . "; the inserts waited for, in $waits");
$hostile->quit;
$shared->quit;

# --- the released 1.2: the same attacks stop it ---

# Its advisory lock, held exclusively.
my $old_hostile = $node->background_psql('old', on_error_stop => 0, extra_params => [ '-U', 'hostile' ]);
query_value($old_hostile, 'SELECT pg_advisory_lock(1936617335, 1718378859)');
is( report_in(
		$node, 'old', 'SET statement_timeout = 3000; INSERT INTO app.orders (client, phase) VALUES (0, 3)',
		extra_params => [ '-U', 'app_user' ]),
	'57014: canceling statement due to statement timeout',
	'1.2: an insert waits for the hostile role\'s advisory lock until its statement_timeout');
query_value($old_hostile, 'SELECT pg_advisory_unlock_all()');
# An ACCESS EXCLUSIVE request queued on its key sequence, behind a lock the
# hostile role holds on it through a PREPAREd statement.
query_value($old_hostile, 'BEGIN; PREPARE p AS SELECT * FROM app._snowflake_id_seq');
my $queue = $node->background_psql('old', on_error_stop => 0, extra_params => [ '-U', 'hostile' ]);
$queue->query_until(qr/start/, q{
CREATE TABLE h.parted (one bool) PARTITION BY LIST (one);
\echo start
ALTER TABLE h.parted ATTACH PARTITION app._snowflake_id_seq FOR VALUES IN (true);
});
$node->poll_query_until('old', q{
SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND mode = 'AccessExclusiveLock'
   AND relation = 'app._snowflake_id_seq'::regclass}) or die 'no queued request';
is( report_in(
		$node, 'old', 'SET statement_timeout = 3000; INSERT INTO app.orders (client, phase) VALUES (0, 3)',
		extra_params => [ '-U', 'app_user' ]),
	'57014: canceling statement due to statement timeout',
	'1.2: an insert waits behind the hostile role\'s request queued on its key sequence');
$old_hostile->quit;
$queue->quit;

$node->stop;
done_testing();
