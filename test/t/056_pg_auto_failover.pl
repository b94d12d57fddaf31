# Copyright: see LICENSE
#
# 056_pg_auto_failover.pl
#	Failover and switchover under pg_auto_failover (Debian's
#	pg-auto-failover-cli and postgresql-NN-auto-failover), with node ids
#	derived from an environment variable of the server, as
#	docs/deployment/pg_auto_failover.md says to do it: the settings and
#	the commands are read from the page (its blocks marked
#	<!-- recipe: pg_auto_failover/... -->), with the test's own paths,
#	ports, node names, address, authentication and monitor put in place of
#	the page's examples (a page that changes under the test fails it).
#
# A monitor, a primary and a secondary.  The first node's data directory
# is made by the page's initdb, the page's settings are added to its
# postgresql.conf (snowflake.node_id_from = 'env:SF_MEMBER', base 20, count
# 8), and the page's pg_autoctl create postgres and pg_autoctl run start
# each node with its own SF_MEMBER (1, 2: node ids 21 and 22); the
# secondary is a copy of the primary made by pg_autoctl (pg_basebackup),
# its postgresql.conf included.  Two clients insert rows keyed by
# snowflake_nextval() throughout, on whichever member accepts writes,
# recording every ID returned, while
#   1. the primary's node dies (its pg_autoctl and PostgreSQL killed with
#      SIGKILL): the monitor promotes the secondary;
#   2. the old primary's pg_autoctl is started again: it rewinds its
#      PostgreSQL and rejoins as the secondary;
#   3. pg_autoctl perform switchover hands the primary back to it.
# Passes only if no ID was returned twice, every ID is above every ID
# returned before its request was sent, the clients saw the three terms,
# and each member minted with its own node id (21 and 22).
# The monitor's health checks are shortened (a second, a demote timeout of
# 5 s) so that the failover takes seconds, not a minute.
#
# Where pg_auto_failover is not installed for the server under test (this
# major's archive has no postgresql-NN-auto-failover, a server built from
# source), the file skips, saying which of the command and the extension
# is missing (HaTest's ha_require; test/check.sh accepts that only where
# test/setup.sh installed no package for it).

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use RestoreTest qw(doc_config run_tool);
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

# The page's settings and commands.
my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my %recipes = doc_recipes("$root/docs/deployment/pg_auto_failover.md");
is( join(' ', sort keys %recipes),
	join(' ', map { "pg_auto_failover/$_" } qw(create.sh initdb.sh postgresql.conf run.sh)),
	'docs/deployment/pg_auto_failover.md has the settings and commands this test runs');

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

# The page's command $name for member $n: its example paths, number, name,
# address, authentication and monitor replaced by the test's; each example
# value the step must have is there (else the page changed: die).
my %example_in = (
	'initdb.sh' => [ '/usr/lib/postgresql/15/bin', '/var/lib/postgresql/15/node' ],
	'create.sh' => [
		'SF_MEMBER=1', '/var/lib/postgresql/15/node',
		'--hostname db-1.example.com --name db-1',
		'--auth scram-sha-256 --ssl-self-signed',
		q{'postgres://autoctl_node@monitor.example.com/pg_auto_failover'}
	],
	'run.sh' => [ 'SF_MEMBER=1', '/var/lib/postgresql/15/node' ]);

sub member_step
{
	my ($n, $name) = @_;
	my %test = (
		'SF_MEMBER=1' => "SF_MEMBER=$n",
		'/usr/lib/postgresql/15/bin' => $bindir,
		'/var/lib/postgresql/15/node' => "$dir/n$n",
		'--hostname db-1.example.com --name db-1' =>
		  "--hostname 127.0.0.1 --name n$n --pgport $port{\"n$n\"} --pgctl $pg_ctl",
		'--auth scram-sha-256 --ssl-self-signed' => '--auth trust --no-ssl',
		q{'postgres://autoctl_node@monitor.example.com/pg_auto_failover'} => "'$monitor_uri'");
	return doc_config($recipes{"pg_auto_failover/$name"},
		{ map { $_ => $test{$_} } @{ $example_in{$name} } }, 1);
}

# Start member $n's pg_autoctl (and so its PostgreSQL) as the page runs it,
# in a process group of its own.
sub run_member
{
	my ($n) = @_;
	return ha_start("$dir/n$n.log", 'bash', '-e', '-c', member_step($n, 'run.sh'));
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

# --- the primary: the page's initdb, settings and create ---

run_tool("n1: the page's initdb", member_step(1, 'initdb.sh'), {}, 120);
append_to_file("$dir/n1/postgresql.conf", $recipes{'pg_auto_failover/postgresql.conf'});
run_tool("n1: the page's pg_autoctl create postgres", member_step(1, 'create.sh'), {}, 180);
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

run_tool("n2: the page's pg_autoctl create postgres, a copy of n1",
	member_step(2, 'create.sh'), {}, 300);
$group{n2} = run_member(2);
ok(states_are('n1:primary:primary n2:secondary:secondary'),
	'n1 is the primary, n2 the secondary');
my $stats = q{SELECT node_id || ' ' || node_id_source || ' ' || status FROM snowflake_stats};
is(psql_at($port{n1}, 'postgres', $stats), '21 env:SF_MEMBER 1 ready',
	'n1 mints with node id 21, from its SF_MEMBER');
is(psql_at($port{n2}, 'postgres', $stats), '22 env:SF_MEMBER 2 recovery',
	'n2, with the same configuration, has node id 22 from its SF_MEMBER');

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
