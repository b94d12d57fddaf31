# Copyright: see LICENSE
#
# 092_sql_edition_oid_locks.pl
#	No lock that another role can queue, through any function that takes
#	a relation's OID, delays the SQL edition's generation (issue 53).
#
# A role with no privilege cannot name the edition's relations (schema
# _snowflake is its owner's alone: 071), but functions that take an OID or
# a regclass open, and so lock, a relation before they check anything:
# brin_summarize_new_values() queues SHARE UPDATE EXCLUSIVE on any
# relation, gin_clean_pending_list() ROW EXCLUSIVE, pg_relation_size()
# ACCESS SHARE, nextval() ROW EXCLUSIVE.  The edition's moves serialise on
# a row lock of its own table (ROW SHARE on the table), its calls take ROW
# EXCLUSIVE on its sequences: neither conflicts with any of those.  Here,
# on a server without the C library:
#  - The list is generated from pg_proc: every function the hostile role
#    may execute that takes an oid or a regclass, called with a relation's
#    OID in those arguments and a value of its type in the others
#    (functions with an argument of a type no value is given for, such as
#    internal, are listed and left out).
#  - Which of them lock a relation by OID, found by calling each, as the
#    hostile role with lock_timeout set, on a table, an index and a
#    sequence of the superuser's that another session holds in ACCESS
#    EXCLUSIVE: a call that times out queued a lock.  brin_summarize_
#    new_values(), brin_summarize_range(), brin_desummarize_range(),
#    gin_clean_pending_list(), pg_relation_size() and nextval() must be
#    among them.
#  - Then every one of the functions, on every relation of the edition (in
#    _snowflake, its composite type, their TOAST tables and indexes), in
#    loops: two sessions calling them one statement at a time (each lock
#    queued, taken and released), a third in one transaction (each lock it
#    gets held), while eight pgbench clients insert keys as the application
#    role.  No insert fails, no key repeats, and no insert waits for a lock
#    the hostile role holds or asks for (pg_locks and pg_blocking_pids
#    sampled every few milliseconds).  The inserts' rate beside the rate
#    without the loops, in the same run, is noted (the loops' own work
#    shares the CPUs: test/bench/edition.sh measures it against loops on a
#    table of their own).

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $seconds = $ENV{SNOWFLAKE_EDITION_LOCK_SECONDS} // 8;
my $install = edition_installation(edition_build());
my $node = start_edition_node('edition_oid_locks', $install,
	settings => { max_connections => 40, synchronous_commit => 'off' });
$node->safe_psql(
	'postgres', q{
CREATE ROLE ed_owner LOGIN;
CREATE ROLE app_user LOGIN;
CREATE ROLE hostile LOGIN;
GRANT CREATE ON DATABASE postgres TO ed_owner;
CREATE SCHEMA app AUTHORIZATION ed_owner;
});
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake SCHEMA app;
SELECT app.snowflake_set_node_id(5);
CREATE TABLE app.orders (id bigint PRIMARY KEY DEFAULT app.snowflake_nextval(), client int, phase int);
GRANT USAGE ON SCHEMA app TO app_user;
GRANT SELECT, INSERT ON app.orders TO app_user;
}, extra_params => [ '-U', 'ed_owner' ]);

# --- the functions ---

# A value of each argument type; oid and regclass take the relation.
my %value = (
	'oid' => 'TARGET::pg_catalog.oid',
	'regclass' => 'TARGET::pg_catalog.regclass',
	'smallint' => '0::pg_catalog.int2',
	'integer' => '0::pg_catalog.int4',
	'bigint' => '0::pg_catalog.int8',
	'real' => '0::pg_catalog.float4',
	'double precision' => '0::pg_catalog.float8',
	'numeric' => '0::pg_catalog.numeric',
	'boolean' => 'false',
	'text' => q{'main'::pg_catalog.text},
	'name' => q{'main'::pg_catalog.name},
	'"char"' => q{'r'::pg_catalog."char"},
	'cstring' => q{'x'::pg_catalog.cstring},
	'bytea' => q{'\x00'::pg_catalog.bytea},
	'text[]' => q{'{}'::pg_catalog.text[]},
	'oid[]' => q{'{}'::pg_catalog.oid[]},
	'inet' => q{'127.0.0.1'::pg_catalog.inet},
	'point' => q{'(0,0)'::pg_catalog.point},
	'box' => q{'(0,0),(1,1)'::pg_catalog.box},
	'circle' => q{'<(0,0),1>'::pg_catalog.circle},
	'polygon' => q{'((0,0),(1,1),(1,0))'::pg_catalog.polygon},
	'tsquery' => q{'x'::pg_catalog.tsquery},
	'tsvector' => q{'x'::pg_catalog.tsvector},
	'anyrange' => 'pg_catalog.int4range(1, 2)',
	'anymultirange' => 'pg_catalog.int4multirange(pg_catalog.int4range(1, 2))',
	'anyelement' => '0::pg_catalog.int4',
	'"any"' => '0::pg_catalog.int4',
	'regtype' => q{'pg_catalog.int4'::pg_catalog.regtype},
	'regproc' => q{'pg_catalog.int4in'::pg_catalog.regproc},
	'regnamespace' => q{'pg_catalog'::pg_catalog.regnamespace},
	'regrole' => q{'hostile'::pg_catalog.regrole},
	'interval' => q{'0'::pg_catalog.interval},
	'timestamp with time zone' => 'pg_catalog.now()',
	'jsonb' => q{'{}'::pg_catalog.jsonb},
	'json' => q{'{}'::pg_catalog.json},
	'pg_node_tree' =>
	  '(SELECT c.conbin FROM pg_catalog.pg_constraint c WHERE c.conbin IS NOT NULL LIMIT 1)');

my @calls;    # [ function, SQL with TARGET ]
my (@skipped, %missing);
foreach my $row (
	split /\n/,
	$node->safe_psql(
		'postgres', q{
SELECT p.oid::regprocedure, n.nspname || '.' || quote_ident(p.proname),
       coalesce((SELECT string_agg(format_type(a.t, NULL), '|' ORDER BY a.o)
                   FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, o)), '')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE p.prokind = 'f' AND has_function_privilege('hostile', p.oid, 'EXECUTE')
   AND p.proargtypes::oid[] && ARRAY['oid'::regtype, 'regclass'::regtype]::oid[]
 ORDER BY 1})
  )
{
	my ($sig, $name, $types) = split /\|/, $row, 3;
	my @types = split /\|/, $types;
	my @missing = grep { !exists $value{$_} } @types;
	if (@missing)
	{
		push @skipped, $sig;
		$missing{$_}++ foreach @missing;
		next;
	}
	push @calls, [ $sig, "SELECT $name(" . join(', ', map { $value{$_} } @types) . ')' ];
}
note scalar(@calls) . ' functions that take an oid or a regclass, callable by a role with no privilege; left out, '
  . scalar(@skipped) . ', for an argument of type ' . join(', ', sort keys %missing) . ': ' . join(' ', @skipped);
cmp_ok(scalar(@calls), '>', 100, 'the functions that take an oid or a regclass are many (' . scalar(@calls) . ')');

# The calls, for the hostile role to read.
$node->safe_psql('postgres', 'CREATE TABLE public.oid_calls (id int PRIMARY KEY, fn text, sql text)');
my $i = 0;
foreach my $c (@calls)
{
	$i++;
	my ($fn, $sql) = map { s/'/''/gr } @$c;
	$node->safe_psql('postgres', "INSERT INTO public.oid_calls VALUES ($i, '$fn', '$sql')");
}
$node->safe_psql('postgres', 'GRANT SELECT ON public.oid_calls TO hostile');

# --- which of them lock a relation by OID ---

$node->safe_psql(
	'postgres', q{
CREATE SCHEMA probe;
CREATE TABLE probe.t (v int);
CREATE INDEX t_v ON probe.t (v);
CREATE SEQUENCE probe.s;
});
my $probes = $node->safe_psql('postgres',
	q{SELECT string_agg(c.oid::text, ',') FROM pg_class c WHERE c.relnamespace = 'probe'::regnamespace});
my $holder = $node->background_psql('postgres');
query_value($holder, 'BEGIN; LOCK TABLE probe.t IN ACCESS EXCLUSIVE MODE; DROP INDEX probe.t_v; DROP SEQUENCE probe.s');
my $lockers = $node->safe_psql(
	'postgres', qq{
SET lock_timeout = '50ms';
CREATE TEMP TABLE lockers (fn text);
DO \$\$
DECLARE
    c record;
    target oid;
BEGIN
    FOR c IN SELECT * FROM public.oid_calls ORDER BY id LOOP
        FOREACH target IN ARRAY '{$probes}'::oid[] LOOP
            BEGIN
                EXECUTE replace(c.sql, 'TARGET', target::text);
            EXCEPTION
                WHEN lock_not_available THEN
                    INSERT INTO lockers VALUES (c.fn);
                WHEN OTHERS THEN
                    NULL;
            END;
        END LOOP;
    END LOOP;
END
\$\$;
SELECT string_agg(DISTINCT fn, ' ' ORDER BY fn) FROM lockers;
}, extra_params => [ '-U', 'hostile' ]);
query_value($holder, 'ROLLBACK');
$holder->quit;
note "they lock a relation by its OID, before they check anything or on their way to it: $lockers";
my @known = (
	'brin_summarize_new_values(regclass)', 'brin_summarize_range(regclass,bigint)',
	'brin_desummarize_range(regclass,bigint)', 'gin_clean_pending_list(regclass)',
	'pg_relation_size(regclass)', 'nextval(regclass)');
is(join(' ', grep { index(" $lockers ", " $_ ") < 0 } @known), '',
	'among them: ' . join(', ', @known));

# --- every one of them on every relation of the edition, under load ---

my $targets = $node->safe_psql(
	'postgres', q{
WITH r AS (
    SELECT c.oid, c.reltoastrelid FROM pg_class c
     WHERE c.relnamespace = '_snowflake'::regnamespace
        OR (c.relkind = 'c' AND c.relnamespace = 'app'::regnamespace))
SELECT string_agg(oid::text, ',') FROM (SELECT oid FROM r UNION SELECT reltoastrelid FROM r WHERE reltoastrelid <> 0) s});
my $relnames = $node->safe_psql('postgres',
	"SELECT string_agg(oid::regclass::text, ', ' ORDER BY oid::regclass::text) FROM unnest('{$targets}'::oid[]) oid");
note "the edition's relations: $relnames";

# pgbench: eight clients inserting one key a transaction for $seconds s, as
# app_user, every transaction's latency logged, and the inserts' waits
# sampled every 10 ms: each insert waiting for a heavyweight lock, and the
# role of each process it waits for (pg_blocking_pids).
my $sampler = $node->background_psql('postgres');
query_value($sampler, 'CREATE TABLE public.waits (phase int, pid int, wait text, blocker_role text)');
sub run_phase
{
	my ($phase) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	open my $ifh, '>', "$dir/insert.sql" or die $!;
	print $ifh "INSERT INTO app.orders (client, phase) VALUES (:client_id, $phase);\n";
	close $ifh;
	my $out = '';
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', 8, '-j', 2, '-T', $seconds, '-f', "$dir/insert.sql", '-l',
			'--log-prefix', "$dir/log", '-h', $node->host, '-p', $node->port, '-U', 'app_user', 'postgres'
		],
		'>', \$out, '2>&1', IPC::Run::timeout($seconds + 120));
	my $samples = 0;
	while ($h->pumpable)
	{
		query_value(
			$sampler, qq{
INSERT INTO public.waits
SELECT $phase, a.pid, a.wait_event_type || ':' || a.wait_event, b.usename
  FROM pg_stat_activity a LEFT JOIN LATERAL unnest(pg_blocking_pids(a.pid)) bp(pid) ON true
  LEFT JOIN pg_stat_activity b ON b.pid = bp.pid
 WHERE a.usename = 'app_user' AND a.wait_event_type = 'Lock';
SELECT pg_sleep(0.01)});
		$samples++;
		$h->pump_nb;
	}
	$h->finish;
	my @latency;
	foreach my $log (glob("$dir/log*"))
	{
		open my $lf, '<', $log or die $!;
		while (<$lf>)
		{
			my @f = split;
			push @latency, $f[2] / 1000;
		}
		close $lf;
	}
	@latency = sort { $a <=> $b } @latency;
	my $waits = $node->safe_psql(
		'postgres', qq{
SELECT coalesce(string_agg(w || ' x' || n, ', ' ORDER BY n DESC), 'nothing')
  FROM (SELECT wait || coalesce(' (held by ' || blocker_role || ')', '') AS w, count(*) AS n
          FROM public.waits WHERE phase = $phase GROUP BY 1) x});
	my $tps = $out =~ /^tps = ([0-9.]+)/m ? $1 : '?';
	return (
		$out,
		sprintf('%.0f inserts/s, median %.2f ms, p99 %.2f ms, max %.1f ms; %d samples of the waits: %s',
			$tps, $latency[ int(@latency / 2) ], $latency[ int(@latency * 0.99) ], $latency[-1], $samples, $waits));
}

my ($out, $figures) = run_phase(1);
like($out, qr/number of failed transactions: 0 /, 'alone: eight clients insert, no transaction fails');
note "alone: $figures";

# The loops: two sessions calling every function on every relation of the
# edition a statement at a time, until the file $stop exists; a third in
# one transaction, until it is ended.
my $stop = PostgreSQL::Test::Utils::tempdir() . '/stop';
my $script = PostgreSQL::Test::Utils::tempdir() . '/calls.sql';
open my $fh, '>', $script or die $!;
foreach my $t (split /,/, $targets)
{
	foreach my $c (@calls)
	{
		print $fh ($c->[1] =~ s/TARGET/$t/gr) . ";\n";
	}
}
close $fh;
my @loops;
foreach my $name ('a', 'b')
{
	my $lout = '';
	push @loops,
	  IPC::Run::start(
		[
			'bash', '-c',
			'while [ ! -e "$1" ]; do psql -X -q -h "$2" -p "$3" -U hostile -d postgres -f "$4" >/dev/null 2>&1; done',
			'loop', $stop, $node->host, $node->port, $script
		],
		'>', \$lout, '2>&1', IPC::Run::timeout(600));
}
my $in_txn = $node->background_psql('postgres', on_error_stop => 0, extra_params => [ '-U', 'hostile' ]);
my $in_txn_pid = query_value($in_txn, 'SELECT pg_backend_pid()');
$in_txn->query_until(
	qr/looping/, qq{
\\echo looping
DO \$\$
DECLARE
    c record;
    target oid;
BEGIN
    LOOP
        FOR c IN SELECT * FROM public.oid_calls ORDER BY id LOOP
            FOREACH target IN ARRAY '{$targets}'::oid[] LOOP
                BEGIN
                    EXECUTE replace(c.sql, 'TARGET', target::text);
                EXCEPTION WHEN OTHERS THEN
                    NULL;
                END;
            END LOOP;
        END LOOP;
    END LOOP;
END
\$\$;
});
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) >= 3 FROM pg_stat_activity WHERE usename = 'hostile' AND state = 'active'}),
	'the three sessions of the hostile role call the functions');

($out, $figures) = run_phase(2);
like($out, qr/number of failed transactions: 0 /,
	'beside the loops: eight clients insert, no transaction fails');
is( $node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id), count(*) > 0 FROM app.orders WHERE phase = 2'),
	't|t', 'every key unique');
my $held = $node->safe_psql(
	'postgres', qq{
SELECT count(*) FROM pg_locks l
 WHERE l.pid = $in_txn_pid AND l.granted AND l.relation = ANY ('{$targets}'::oid[])});
note "the hostile role's transaction holds $held locks on the edition's relations now";
is( $node->safe_psql('postgres', q{SELECT count(*) FROM public.waits WHERE phase = 2 AND blocker_role = 'hostile'}),
	'0', 'no insert waited for a lock the hostile role holds or asks for');
note "beside the loops: $figures";

# The loops end: the file says stop, and the hostile role's sessions are
# ended (a call of one loop may wait for a lock the transaction of the
# third holds).
open my $sfh, '>', $stop or die $!;
close $sfh;
$node->safe_psql('postgres',
	q{SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'hostile'});
$_->finish foreach @loops;
eval { $in_txn->quit };
$sampler->quit;
$node->stop;
done_testing();
