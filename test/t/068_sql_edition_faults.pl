# Copyright: see LICENSE
#
# 068_sql_edition_faults.pl
#	The SQL edition never issues a key twice across the faults its
#	sequence must survive, on servers without the C library, each under
#	load (pgbench, four clients inserting keys), and never lets more than
#	4096 calls in one millisecond spill into the node field.
#
# Every key handed out before a fault is counted: the committed rows, and
# the keys a client received and stored nowhere (a SELECT just before the
# fault).  After each fault, the new keys lie above all of them:
#  - an immediate stop (no shutdown checkpoint, WAL not yet written lost)
#    and a restart;
#  - a backend killed with SIGKILL (the postmaster kills every other
#    backend and runs crash recovery, in the same postmaster life);
#  - the clock stepped 5 s back (libfaketime) while the load runs: calls
#    that would have to wait longer than a second for the clock fail with
#    58000 and issue nothing, the load goes on, keys stay unique and
#    increasing, and generation resumes by itself;
#  - the promotion of a streaming standby that stopped receiving WAL while
#    the primary issued keys, some of them ahead of its clock (batches),
#    after the primary died.
# With the clock frozen (libfaketime), 20000 calls in one millisecond carry
# into the following milliseconds, never into the node field.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;
use IPC::Run;
use POSIX qw(strftime);

my $node_id = 9;
my $install = edition_installation(edition_build());
my $node = start_edition_node('edition_faults', $install,
	init => { allows_streaming => 1 },
	with => 'faketime',
	settings => { restart_after_crash => 'on' });
$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION snowflake;
SELECT snowflake_set_node_id($node_id);
CREATE TABLE ids (id bigint PRIMARY KEY, phase int NOT NULL);
CREATE TABLE refused (phase int, report text);
-- Twenty keys for phase p; a call refused with 58000 (the clock stepped
-- back) issues nothing, its error is kept, and the load goes on.
CREATE FUNCTION take(p int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
    m text;
    d text;
    h text;
BEGIN
    INSERT INTO ids SELECT snowflake_nextval(), p FROM generate_series(1, 20);
EXCEPTION WHEN SQLSTATE '58000' THEN
    GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
    INSERT INTO refused VALUES (p, m || E'\\n' || d || E'\\n' || h);
END \$\$;
});

my $script = PostgreSQL::Test::Utils::tempdir() . '/take.sql';
open my $fh, '>', $script or die "could not write $script: $!";
print $fh "SELECT take(:phase);\n";
close $fh;

# pgbench, four clients, for phase $phase, in the background.
sub start_load
{
	my ($n, $phase, $seconds) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '4', '-j', '2', '-T', $seconds, '-D', "phase=$phase",
			'-f', $script, '-h', $n->host, '-p', $n->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
	return { h => $h, out => \$out, err => \$err };
}

# The largest key a client received just now and stored nowhere.
sub client_keys
{
	my ($n) = @_;
	return $n->safe_psql('postgres',
		'SELECT max(x) FROM (SELECT snowflake_nextval() FROM generate_series(1, 1000)) s(x)');
}

# Insert 1000 keys for phase $phase; '1000|t|t' when all went in, above
# $max, with the node id.
sub above
{
	my ($n, $phase, $max) = @_;
	return $n->safe_psql(
		'postgres', qq{
WITH k AS (INSERT INTO ids SELECT snowflake_nextval(), $phase FROM generate_series(1, 1000) RETURNING id)
SELECT count(*), min(id) > $max, bool_and(snowflake_node_id(id) = $node_id) FROM k});
}

# Whether the first key of a new server life lies a second past the clock
# as it was when the call began (the keys its last life may have handed out
# and lost led it by no more): 't'.
sub floor_applied
{
	my ($n) = @_;
	return $n->safe_psql(
		'postgres', q{
WITH s AS MATERIALIZED (SELECT clock_timestamp() AS t),
     c AS MATERIALIZED (SELECT t, snowflake_nextval() AS id FROM s)
SELECT snowflake_timestamp(id) >= date_trunc('milliseconds', t) + interval '1 second' FROM c});
}

# --- an immediate stop ---

my $load = start_load($node, 1, 60);
ok($node->poll_query_until('postgres', 'SELECT count(*) >= 2000 FROM ids WHERE phase = 1'),
	'phase 1: the load is running');
my $client_max = client_keys($node);
$node->stop('immediate');
$load->{h}->finish;
start_faked($node);
my $old_max = $node->safe_psql('postgres', "SELECT greatest(max(id), $client_max) FROM ids");
is(floor_applied($node), 't', 'the restart is a new life: its first key is a second past the clock');
is(above($node, 11, $old_max), '1000|t|t',
	'after an immediate stop under load, every new key is above every key issued before');

# --- a backend killed ---

$load = start_load($node, 2, 60);
ok($node->poll_query_until('postgres', 'SELECT count(*) >= 2000 FROM ids WHERE phase = 2'),
	'phase 2: the load is running');
$client_max = client_keys($node);
my $victim = '';
for (my $i = 0; $i < 100 && $victim eq ''; $i++)
{
	$victim = $node->safe_psql(
		'postgres', q{
SELECT pid FROM pg_stat_activity
 WHERE state = 'active' AND query LIKE 'SELECT take%' AND pid <> pg_backend_pid() LIMIT 1});
}
isnt($victim, '', "found a backend taking keys (pid $victim)");
my $log_offset = -s $node->logfile;
ok(kill('KILL', $victim), 'SIGKILL sent to it');
$load->{h}->finish;
ok(log_appears($node, qr/all server processes terminated; reinitializing/, $log_offset),
	'the postmaster re-initialised shared memory');
ok($node->poll_query_until('postgres', 'SELECT true'), 'crash recovery done');
$old_max = $node->safe_psql('postgres', "SELECT greatest(max(id), $client_max) FROM ids");
is(floor_applied($node), 't', 'crash recovery is a new life: its first key is a second past the clock');
is(above($node, 12, $old_max), '1000|t|t',
	'after a backend crash under load, every new key is above every key issued before');

# --- the clock stepped 5 s back under load ---

$load = start_load($node, 3, 12);
ok($node->poll_query_until('postgres', 'SELECT count(*) >= 2000 FROM ids WHERE phase = 3'),
	'phase 3: the load is running');
$client_max = client_keys($node);
my $before_step = $node->safe_psql('postgres', "SELECT greatest(max(id), $client_max) FROM ids");
set_clock('-5');
ok($node->poll_query_until('postgres', 'SELECT count(*) > 0 FROM refused WHERE phase = 3'),
	'calls refused while the clock is more than two seconds behind the keys');
# Every call is refused until then: the largest key stays.
my $refused_max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
ok( $node->poll_query_until(
		'postgres', qq{SELECT count(*) > 0 FROM ids WHERE phase = 3 AND id > $refused_max}),
	'and taken again, above, once the clock is within two seconds of the keys');
$load->{h}->finish;
like(${ $load->{out} }, qr/number of failed transactions: 0 /, 'the load ran on through the step');
like( $node->safe_psql('postgres', 'SELECT report FROM refused WHERE phase = 3 LIMIT 1'),
	qr/\Asystem clock is \d+ ms behind the last issued snowflake ID\nIDs may lead the clock by 1000 ms and a call may wait 1000 ms; no ID was issued\.\nGeneration resumes by itself once the clock catches up\. Check the server's time synchronisation\.\z/,
	'a refused call says how far behind the clock is, and that it issued nothing (58000)');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'), 't',
	'no key twice');
set_clock('+0');
ok($node->poll_query_until('postgres', qq{SELECT snowflake_nextval() > $before_step}),
	'the clock back: generation resumes above the keys issued before the step');
$old_max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
is(above($node, 13, $old_max), '1000|t|t', 'and goes on above every key');

# --- more than 4096 calls in one millisecond ---

# Frozen at a time the keys do not lead (else a call would sleep, which a
# frozen clock never ends).
ok($node->poll_query_until('postgres',
		'SELECT snowflake_timestamp(snowflake_nextval()) <= clock_timestamp()'),
	'the keys no longer lead the clock');
# libfaketime reads an absolute time in the local time zone.
set_clock(strftime('%Y-%m-%d %H:%M:%S', localtime(time())));
is( $node->safe_psql(
		'postgres', qq{
WITH k AS (SELECT i, snowflake_nextval() AS id FROM generate_series(1, 20000) i)
SELECT count(DISTINCT id), bool_and(snowflake_node_id(id) = $node_id),
       count(*) FILTER (WHERE id <= prev), count(DISTINCT snowflake_timestamp(id)) >= 5,
       max(snowflake_timestamp(id)) - min(snowflake_timestamp(id)) < interval '10 ms',
       clock_timestamp() = statement_timestamp()
  FROM (SELECT id, lag(id) OVER (ORDER BY i) AS prev FROM k) s}),
	'20000|t|0|t|t|t',
	'20000 calls with the clock frozen: distinct, increasing, the node id in each; they carry into the next milliseconds');
set_clock('+0');

# --- the promotion of a standby that missed WAL ---

$node->backup('edition_backup');
my $standby = start_snowflake_node('edition_faults_standby',
	from_backup => [ $node, 'edition_backup', has_streaming => 1 ],
	install_path => $install);
$node->wait_for_catchup($standby);
is( report_in($standby, 'postgres', 'SELECT snowflake_nextval()'),
	"25006: cannot generate snowflake IDs during recovery\n"
	  . q{HINT:  Generate IDs on the primary: a standby generates none until it is promoted.},
	'a standby refuses to generate (25006)');
# The standby stops receiving WAL: what the primary does next is lost to it.
$standby->safe_psql('postgres', "ALTER SYSTEM SET primary_conninfo = ''; SELECT pg_reload_conf()");
ok($standby->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_stat_wal_receiver'),
	'the standby no longer receives WAL');
$load = start_load($node, 4, 60);
ok($node->poll_query_until('postgres', 'SELECT count(*) >= 2000 FROM ids WHERE phase = 4'),
	'phase 4: the load is running');
$client_max = client_keys($node);
# Keys as far ahead of the clock as they may be: eight batches of a million
# span 1952 ms, and the last ones wait until they lead by a second.
my $lead_max = $node->safe_psql('postgres',
	'SELECT max(x) FROM (SELECT snowflake_nextval_batch(1000000) FROM generate_series(1, 8)) b(x)');
$node->stop('immediate');
$load->{h}->finish;
promote_and_wait($standby);
is(floor_applied($standby), 't', 'the promoted standby is a new life: its first key is a second past the clock');
my $new = $standby->safe_psql(
	'postgres', qq{
WITH k AS (INSERT INTO ids SELECT snowflake_nextval(), 5 FROM generate_series(1, 1000) RETURNING id)
SELECT min(id) FROM k});
start_faked($node);
$old_max = $node->safe_psql('postgres', "SELECT greatest(max(id), $client_max, $lead_max) FROM ids");
cmp_ok($new, '>', $old_max,
	'after the promotion, every key of the new primary is above every key the old one issued, which it never received');
is( $standby->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase = 4')
	  < $node->safe_psql('postgres', 'SELECT count(*) FROM ids WHERE phase = 4') ? 'lost' : 'kept',
	'lost', 'the promoted standby indeed missed keys the old primary issued');

$standby->stop;
$node->stop;
done_testing();
