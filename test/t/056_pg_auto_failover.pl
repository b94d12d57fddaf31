# Copyright: see LICENSE
#
# 056_pg_auto_failover.pl
#	Failover and switchover under pg_auto_failover (Debian's
#	pg-auto-failover-cli and postgresql-NN-auto-failover), with node ids
#	derived from the host name: a monitor, a primary and a secondary, each
#	pg_autoctl in a UTS namespace of its own (pg-1, pg-2: test/hostns.c).
#
# The secondary is a copy of the primary made by pg_autoctl
# (pg_basebackup), its postgresql.conf included: one configuration,
# snowflake.node_id_from = 'hostname', base 20, count 8, so the members
# mint with node ids 21 and 22.  Two clients insert rows keyed by
# snowflake_nextval() throughout, on whichever member accepts writes,
# recording every ID returned, while
#   1. the primary's node dies (its pg_autoctl and PostgreSQL killed with
#      SIGKILL): the monitor promotes the secondary;
#   2. the old primary's pg_autoctl is started again: it rewinds its
#      PostgreSQL and rejoins as the secondary;
#   3. pg_autoctl perform switchover hands the primary back to it.
# Passes only if no ID was returned twice, every ID is above every ID
# returned before its request was sent, the clients saw the three terms,
# and each member minted with its own node id (21 on pg-1, 22 on pg-2).
# The monitor's health checks are shortened (a second, a demote timeout of
# 5 s) so that the failover takes seconds, not a minute.
#
# Where pg_auto_failover is not installed (this major's archive has no
# postgresql-NN-auto-failover), the file skips saying so (HaTest's
# ha_require; test/check.sh accepts that only where test/setup.sh
# installed no package for it).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use HaTest;
use Test::More;

my $pg_config = ha_program('pg_config');
chomp(my $bindir = `$pg_config --bindir`);
chomp(my $sharedir = `$pg_config --sharedir`);
my $autoctl = ha_program('pg_autoctl');
ha_require([ 'command', 'pg_autoctl', defined $autoctl, 'not in PATH' ],
	[
		'extension', 'pgautofailover',
		-e "$sharedir/extension/pgautofailover.control",
		"no pgautofailover.control in $sharedir/extension: the monitor needs it"
	]);
die 'the no-preload pass does not run this file' if no_preload();

my $dir = PostgreSQL::Test::Utils::tempdir();
my $log = "$dir/pg_autoctl.log";
# pg_autoctl keeps its configuration, state and PID files under the XDG
# directories.
$ENV{HOME} = $dir;
$ENV{XDG_CONFIG_HOME} = "$dir/config";
$ENV{XDG_DATA_HOME} = "$dir/data";
$ENV{XDG_RUNTIME_DIR} = "$dir/run";
mkdir "$dir/run" or die "could not create $dir/run: $!";
$ENV{PG_CONFIG} = $pg_config;
# Its servers use the default socket directory, which is where pg_autoctl
# looks for them unless PGHOST (the test framework's) says otherwise.
delete @ENV{qw(PGHOST PGHOSTADDR PGPORT)};
my $pg_ctl = "$bindir/pg_ctl";
my %port = map { $_ => PostgreSQL::Test::Cluster::get_free_port() } qw(monitor n1 n2);
my $monitor_uri = "postgres://autoctl_node\@127.0.0.1:$port{monitor}/pg_auto_failover?sslmode=disable";

sub psql_at
{
	my ($port, $db, $sql, $quiet) = @_;
	return ha_psql($bindir, $port, $db, $sql, $quiet);
}

# The members' states, as the monitor sees them: "n1:reported:goal ...".
sub states
{
	return psql_at($port{monitor}, 'pg_auto_failover',
		q{SELECT string_agg(nodename || ':' || reportedstate || ':' || goalstate, ' ' ORDER BY nodename) FROM pgautofailover.node},
		1);
}

sub states_are
{
	my ($want) = @_;
	return ha_wait(sub { states() eq $want });
}

# Start member $n's pg_autoctl (and so its PostgreSQL) under host name pg-$n.
sub run_member
{
	my ($n) = @_;
	return ha_start("$dir/n$n.log", hostns_command("pg-$n", $autoctl, 'run', '--pgdata', "$dir/n$n"));
}

# --- the monitor, with health checks of a second ---

ok(ha_run($log, 120, $autoctl, 'create', 'monitor', '--pgctl', $pg_ctl,
		'--pgdata', "$dir/monitor", '--pgport', $port{monitor}, '--hostname', '127.0.0.1',
		'--auth', 'trust', '--no-ssl'),
	'pg_autoctl create monitor')
  or BAIL_OUT('the monitor was not created: ' . slurp_file($log));
append_to_file("$dir/monitor/postgresql.conf", qq{
pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 1000
pgautofailover.health_check_max_retries = 1
pgautofailover.health_check_retry_delay = 500
pgautofailover.node_considered_unhealthy_timeout = 3000
pgautofailover.primary_demote_timeout = 5000
});
ha_start("$dir/monitor.log", $autoctl, 'run', '--pgdata', "$dir/monitor");
ok(ha_wait(sub { psql_at($port{monitor}, 'pg_auto_failover', 'SELECT 1', 1) eq '1' }),
	'the monitor runs');

# --- the primary: a data directory of ours, with the shared configuration ---

my $initdb_out = '';
IPC::Run::run([ "$bindir/initdb", '-D', "$dir/n1", '-A', 'trust', '-U', 'postgres', '--no-sync' ],
	'>', \$initdb_out, '2>&1')
  or BAIL_OUT("initdb failed: $initdb_out");
append_to_file("$dir/n1/postgresql.conf", qq{
shared_preload_libraries = 'pg_stat_statements,snowflake'
snowflake.node_id_from = 'hostname'
snowflake.node_id_base = 20
snowflake.node_id_count = 8
wal_log_hints = on
});
my @create = ('create', 'postgres', '--pgctl', $pg_ctl, '--hostname', '127.0.0.1',
	'--auth', 'trust', '--no-ssl', '--monitor', $monitor_uri);
ok(ha_run($log, 120, hostns_command('pg-1', $autoctl, @create,
			'--pgdata', "$dir/n1", '--pgport', $port{n1}, '--name', 'n1')),
	'pg_autoctl create postgres: n1 on pg-1')
  or BAIL_OUT('n1 was not created: ' . slurp_file($log));
my %group = (n1 => run_member(1));
ok(states_are('n1:single:single'), 'n1 runs as the single node');
# pg_autoctl may still restart its PostgreSQL: retried until it is done.
ok( ha_wait(
		sub {
			psql_at($port{n1}, 'postgres',
				'CREATE EXTENSION IF NOT EXISTS snowflake;'
				  . ' CREATE TABLE IF NOT EXISTS ids (id bigint PRIMARY KEY); SELECT 1', 1) eq '1';
		}),
	'the extension and the table are created on n1');

# --- the secondary: pg_autoctl copies the primary, configuration included ---

ok(ha_run($log, 180, hostns_command('pg-2', $autoctl, @create,
			'--pgdata', "$dir/n2", '--pgport', $port{n2}, '--name', 'n2')),
	'pg_autoctl create postgres: n2 on pg-2, a copy of n1')
  or BAIL_OUT('n2 was not created: ' . slurp_file($log));
$group{n2} = run_member(2);
ok(states_are('n1:primary:primary n2:secondary:secondary'),
	'n1 is the primary, n2 the secondary');
my $stats = q{SELECT node_id || ' ' || node_id_source || ' ' || status FROM snowflake_stats};
is(psql_at($port{n1}, 'postgres', $stats), '21 hostname pg-1 ready',
	'n1 mints with node id 21, from its host name pg-1');
is(psql_at($port{n2}, 'postgres', $stats), '22 hostname pg-2 recovery',
	'n2, with the same configuration, has node id 22 from pg-2');

# --- clients throughout ---

start_clients(2,
	"host=127.0.0.1,127.0.0.1;port=$port{n1},$port{n2};user=postgres;dbname=postgres;"
	  . 'target_session_attrs=read-write;connect_timeout=2',
	$dir);
ok(ha_wait(sub { client_lines($dir, $port{n1}) >= 50 }), 'the clients get IDs from n1');

# 1. n1's node dies: pg_autoctl and PostgreSQL killed with SIGKILL.
ha_kill_group($group{n1}, 'KILL');
ok(ha_wait(sub { states() =~ /^n1:\w+:\w+ n2:wait_primary:wait_primary$/ }),
	'the monitor promotes n2 (wait_primary)');
my $before = client_lines($dir, $port{n2});
ok(ha_wait(sub { client_lines($dir, $port{n2}) >= $before + 50 }),
	'the clients get IDs from n2');

# 2. n1's pg_autoctl again: it rewinds its PostgreSQL and rejoins.
$group{n1} = run_member(1);
ok(states_are('n1:secondary:secondary n2:primary:primary'),
	'n1 rejoins as the secondary');
like(slurp_file("$dir/n1.log"), qr/Rewinding PostgreSQL to follow new primary/,
	'n1 was rewound with pg_rewind');

# 3. Switchover back to n1.
ok(ha_run($log, 120, $autoctl, 'perform', 'switchover', '--pgdata', "$dir/monitor"),
	'pg_autoctl perform switchover');
ok(states_are('n1:primary:primary n2:secondary:secondary'), 'n1 is the primary again');
$before = client_lines($dir, $port{n1});
ok(ha_wait(sub { client_lines($dir, $port{n1}) >= $before + 50 }),
	'the clients get IDs from n1 again');
stop_clients($dir);

# --- what the clients got ---

ha_verdict($dir, 'pg_auto_failover', { $port{n1} => 'n1', $port{n2} => 'n2' },
	150, 'n1 > n2 > n1', 'n1: node id 21, n2: node id 22');
is(psql_at($port{n1}, 'postgres',
		q{SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ',') FROM ids}),
	'21,22', 'the table holds IDs of node ids 21 and 22, nothing else');

done_testing();
