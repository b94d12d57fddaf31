# Copyright: see LICENSE
#
# 045_pgbouncer.pl
#	Behind a transaction pooler: PgBouncer (the distribution's package) in
#	transaction mode in front of a real server, on loopback, with its own
#	configuration and user list in the test directory.
#
#	- pgbench, 8 clients sharing 2 server sessions, inserts rows keyed by
#	  snowflake_nextval() through it: no error, no duplicate key, every row
#	  there; each transaction also reads snowflake_lastval() back after its
#	  INSERT, and it is always that row's key, whichever server session ran
#	  the transaction.
#	- What keeps per-session state, as docs/deployment/poolers.md says:
#	  between transactions a server session passes from client to client,
#	  so one client's snowflake_lastval() can be another client's key, and
#	  a session-level SET of snowflake.max_wait_ms reaches other clients
#	  (SET LOCAL does not).  In session mode, PgBouncer's DISCARD ALL
#	  between clients forgets the last value.
#
# PgBouncer runs in the foreground under IPC::Run, with a timeout, and is
# stopped by its PID at the end (or when the test dies).

use strict;
use warnings;

use File::Spec;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

# PgBouncer comes from the distribution's package (test/setup.sh installs
# it); a missing one fails the test.
my ($pgbouncer) =
  grep { -x $_ } map { "$_/pgbouncer" } (File::Spec->path, '/usr/sbin', '/usr/bin');
ok(defined $pgbouncer, 'pgbouncer is installed') or BAIL_OUT('pgbouncer not found');

my $node = start_snowflake_node('pooled', node_id => 45);
$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
	                client integer NOT NULL, n integer NOT NULL, pid integer NOT NULL);
	CREATE TABLE back (client integer NOT NULL, n integer NOT NULL, lastval bigint NOT NULL,
	                   PRIMARY KEY (client, n));
	CREATE TABLE drv (id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
	                  driver text NOT NULL, client integer NOT NULL, n integer NOT NULL);
});

# The pooler: three databases, all the server's "postgres", each with a pool
# of its own.  "pooled": transaction mode, 2 server sessions; "one":
# transaction mode, 1 server session, so that consecutive clients meet the
# same one; "session1": session mode, 1 server session, reset with DISCARD
# ALL when a client leaves.
my $dir = PostgreSQL::Test::Utils::tempdir();
my $user = getpwuid($<);
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $server = sprintf('host=%s port=%d dbname=postgres', $node->host, $node->port);
PostgreSQL::Test::Utils::append_to_file("$dir/userlist.txt", qq{"$user" ""\n});
PostgreSQL::Test::Utils::append_to_file(
	"$dir/pgbouncer.ini", qq{
[databases]
pooled = $server pool_size=2
one = $server pool_size=1
session1 = $server pool_size=1 pool_mode=session
drivers = $server pool_size=2
forced_psycopg = $server pool_size=2
forced_asyncpg = $server pool_size=2

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 50
server_reset_query = DISCARD ALL
ignore_startup_parameters = extra_float_digits
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
});

my ($bouncer_out, $bouncer_err) = ('', '');
my $bouncer = IPC::Run::start(
	[ $pgbouncer, "$dir/pgbouncer.ini" ],
	'>', \$bouncer_out, '2>', \$bouncer_err,
	IPC::Run::timeout(4 * $PostgreSQL::Test::Utils::timeout_default));
END
{
	# Stopped by its PID, however the test ends.
	$bouncer->kill_kill(grace => 5) if $bouncer && $bouncer->pumpable;
}

# A client of the pooler: psql through it, one connection.
sub through
{
	my ($db, $sql) = @_;
	my ($stdout, $stderr) = ('', '');
	IPC::Run::run(
		[
			'psql', '-X', '-A', '-t', '-q', '-v', 'VERBOSITY=verbose',
			'-h', '127.0.0.1', '-p', $port, '-d', $db, '-c', $sql
		],
		'>', \$stdout, '2>', \$stderr,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	chomp $stdout;
	return ($stdout, $stderr);
}

# Ready once a query goes through (bounded: the timeout fails the wait).
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
my $ready = 0;
while (time() < $deadline)
{
	$bouncer->pump_nb;
	die "pgbouncer exited: $bouncer_err" unless $bouncer->pumpable;
	if ((through('pooled', 'SELECT 1'))[0] eq '1') { $ready = 1; last; }
	Time::HiRes::usleep(100_000);
}
ok($ready, 'pgbouncer accepts connections') or diag(slurp_file("$dir/pgbouncer.log"));

# ---------------------------------------------------------------------------
# pgbench through the pooler.
# ---------------------------------------------------------------------------
my $clients = 8;
my $per_client = 250;
my $total = $clients * $per_client;
PostgreSQL::Test::Utils::append_to_file(
	"$dir/insert.sql", q{
\set n :n + 1
BEGIN;
INSERT INTO t (client, n, pid) VALUES (:client_id, :n, pg_backend_pid());
INSERT INTO back (client, n, lastval) VALUES (:client_id, :n, snowflake_lastval());
COMMIT;
});
my ($bench_out, $bench_err) = ('', '');
IPC::Run::run(
	[
		'pgbench', '-n', '-c', $clients, '-j', '2', '-t', $per_client, '-D', 'n=0',
		'-f', "$dir/insert.sql", '-h', '127.0.0.1', '-p', $port, 'pooled'
	],
	'>', \$bench_out, '2>', \$bench_err,
	IPC::Run::timeout(4 * $PostgreSQL::Test::Utils::timeout_default));
like($bench_out, qr/number of transactions actually processed: $total\/$total/,
	"pgbench: $clients clients, $total transactions through the pooler")
  or diag("$bench_out\n$bench_err");
unlike($bench_err, qr/ERROR|FATAL|error/i, 'with no error') or diag($bench_err);

is( $node->safe_psql(
		'postgres',
		'SELECT count(*), count(DISTINCT id), count(DISTINCT client), count(DISTINCT (client, n)) FROM t'),
	"$total|$total|$clients|$total",
	'every row is there, each with a key of its own, from every client');
my $pids = $node->safe_psql('postgres', 'SELECT count(DISTINCT pid) FROM t');
cmp_ok($pids, '<=', 2,
	"the $clients clients shared at most 2 server sessions ($pids used)");
is( $node->safe_psql(
		'postgres',
		'SELECT count(*) FROM t JOIN back USING (client, n) WHERE back.lastval = t.id'),
	$total,
	'in every transaction, snowflake_lastval() after the INSERT was that row\'s key');

# ---------------------------------------------------------------------------
# The drivers of docs/deployment/poolers.md through the pooler, each with
# the setting the page gives for it ("drivers": transaction mode, 2
# server sessions): 4 connections at once, 50 transactions each, every
# one a parameterized INSERT keyed by DEFAULT snowflake_nextval().  JDBC
# and Go run where the frameworks are installed (test/check.sh sets
# SNOWFLAKE_FRAMEWORKS=0 where they are not, and says so); elsewhere they
# are required.
# ---------------------------------------------------------------------------
my $pooler_dir = "$FindBin::RealBin/../pooler";
my $page = slurp_file("$FindBin::RealBin/../../docs/deployment/poolers.md");
my ($dclients, $dtxns) = (4, 50);
my $dtotal = $dclients * $dtxns;

sub driver_load
{
	my ($driver, $row, $setting, @cmd) = @_;
	like($page, qr/^\| \Q$row\E .*\| \Q$setting\E/m,
		"poolers.md gives ${driver}'s setting: $setting");
	my ($ok, $out, $err) = run_in_dir($dir, { PGUSER => $user }, 300, \@cmd);
	is($ok && $out =~ /^ok (\d+) failed (\d+)$/m ? "$1 $2" : "exit: $err",
		"$dtotal 0", "$driver with it: $dtotal transactions from $dclients connections, none failed")
	  or diag("$out\n$err");
	is($node->safe_psql('postgres',
			"SELECT count(*), count(DISTINCT id), count(DISTINCT (client, n)) FROM drv WHERE driver = '$driver'"),
		"$dtotal|$dtotal|$dtotal", "$driver: every row there, each with a key of its own");
}

my @pyargs = ('127.0.0.1', $port, 'drivers', $dclients, $dtxns);
driver_load('psycopg2', 'psycopg 2', 'nothing', '/usr/bin/python3', "$pooler_dir/clients.py", 'load', 'psycopg2', @pyargs);
driver_load('psycopg', 'psycopg 3', '`prepare_threshold=None`', '/usr/bin/python3', "$pooler_dir/clients.py", 'load', 'psycopg', @pyargs);
driver_load('asyncpg', 'asyncpg', '`statement_cache_size=0`', '/usr/bin/python3', "$pooler_dir/clients.py", 'load', 'asyncpg', @pyargs);
driver_load('node-postgres', 'node-postgres', 'nothing', 'node', "$FindBin::RealBin/../node/pooler-client.mjs", @pyargs);
SKIP:
{
	skip 'JDBC, Go and SQLAlchemy through PgBouncer: SNOWFLAKE_FRAMEWORKS=0, Java, Go and SQLAlchemy are not installed in this stage', 9
	  if ($ENV{SNOWFLAKE_FRAMEWORKS} // '1') eq '0';
	driver_load('sqlalchemy', 'SQLAlchemy on asyncpg',
		'`?prepared_statement_cache_size=0` in the URL and `statement_cache_size=0` in `connect_args`',
		'/usr/bin/python3', "$pooler_dir/clients.py", 'load', 'sqlalchemy', @pyargs);
	driver_load('jdbc', 'pgjdbc', '`prepareThreshold=0`', 'java', '-cp', '/usr/share/java/postgresql.jar',
		"$pooler_dir/PoolerClient.java",
		"jdbc:postgresql://127.0.0.1:$port/drivers?user=$user&prepareThreshold=0", $dclients, $dtxns);
	my $gocache = File::Spec->rel2abs("$dir/gocache");
	local @ENV{qw(GO111MODULE GOPATH GOFLAGS GOTOOLCHAIN GOCACHE)} =
	  ('off', '/usr/share/gocode', '', 'local', $gocache);
	driver_load('go', 'Go lib/pq', 'nothing', 'go', 'run', "$pooler_dir/client.go",
		"host=127.0.0.1 port=$port dbname=drivers user=$user sslmode=disable", $dclients, $dtxns);
}

# With their defaults, psycopg 3 and asyncpg prepare statements on the
# server; forced into another server session (see test/pooler/clients.py),
# the next use of one fails, unless PgBouncer carries named statements
# itself: max_prepared_statements, which 1.21 added at 0 (off) and 1.24.0
# turned on by default (200), per PgBouncer's release notes.  Debian 12
# has 1.18, trixie 1.24.1, sid 1.26.1.
my ($bv) = `$pgbouncer --version` =~ /PgBouncer (\d+\.\d+)/;
my $carries = defined $bv && version->parse($bv) >= version->parse('1.24');
note("PgBouncer " . ($bv // 'of unknown version'));
foreach my $d ([ 'psycopg', 'InvalidSqlStatementName' ], [ 'asyncpg', 'InvalidSQLStatementNameError' ])
{
	my ($driver, $class) = @$d;
	my ($ok, $out, $err) = run_in_dir($dir, { PGUSER => $user }, 300,
		[ '/usr/bin/python3', "$pooler_dir/clients.py", 'forced', $driver, '127.0.0.1', $port, "forced_$driver" ]);
	if ($carries)
	{
		is($out, "ok\n",
			"$driver with its defaults, PgBouncer $bv: the prepared statement works in another server session")
		  or diag($err);
	}
	else
	{
		like($out, qr/^error $class 26000$/m,
			"$driver with its defaults: a prepared statement used in another server session fails (26000)")
		  or diag("$out\n$err");
	}
}

# ---------------------------------------------------------------------------
# Per-session state behind the pooler ("one": a single server session).
# ---------------------------------------------------------------------------

# One client inserts and leaves; the next client, which minted nothing,
# meets the same server session and its last value.
my ($first, $err) = through('one',
	'INSERT INTO t (client, n, pid) VALUES (-1, 1, pg_backend_pid()); '
	  . 'SELECT pg_backend_pid(), snowflake_lastval()');
my ($first_pid, $first_key) = split /\|/, $first;
is($node->safe_psql('postgres', 'SELECT id FROM t WHERE client = -1'),
	$first_key, 'client 1: snowflake_lastval() in its transaction is its key');
my ($second) = through('one', 'SELECT pg_backend_pid(), snowflake_lastval()');
is($second, "$first_pid|$first_key",
	"client 2, same server session: snowflake_lastval() is client 1's key, in transaction mode");

# A session-level SET reaches the next client; SET LOCAL does not.
through('one', 'SET snowflake.max_wait_ms = 7');
is((through('one', 'SHOW snowflake.max_wait_ms'))[0],
	'7ms', 'a session-level SET of snowflake.max_wait_ms reaches the next client');
through('one', 'BEGIN; SET LOCAL snowflake.max_wait_ms = 9; SELECT snowflake_nextval(); COMMIT');
is((through('one', 'SHOW snowflake.max_wait_ms'))[0],
	'7ms', 'SET LOCAL ends with its transaction');
through('one', 'RESET snowflake.max_wait_ms');

# Session mode: PgBouncer resets the server session with DISCARD ALL when
# a client leaves, and that forgets the last value.
my ($s1) = through('session1', 'SELECT pg_backend_pid(), snowflake_nextval() = snowflake_lastval()');
my ($s1_pid) = split /\|/, $s1;
is((split /\|/, $s1)[1], 't', 'session mode, client 1: mints, reads its key back');
my ($s2, $s2_err) = through('session1', 'SELECT pg_backend_pid(); SELECT snowflake_lastval()');
is($s2, $s1_pid, 'session mode, client 2 gets the same server session');
like($s2_err,
	qr/ERROR:  55000: snowflake_lastval is not yet defined in this session/,
	'but no last value: DISCARD ALL forgot it');

# Stopped by its PID.
my $bpid = slurp_file("$dir/pgbouncer.pid");
chomp $bpid;
ok(kill('TERM', $bpid), "pgbouncer (PID $bpid) stopped");
$bouncer->finish;
$node->stop;
done_testing();
