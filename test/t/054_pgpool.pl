# Copyright: see LICENSE
#
# 054_pgpool.pl
#	Behind pgpool-II (the distribution's pgpool2) in streaming-replication
#	mode with load balancing over a primary (node id 1) and its streaming
#	standby, all on loopback, as docs/deployment/poolers.md says.  The
#	standby has all the weight of load balancing (backend_weight0 = 0),
#	so every read pgpool balances goes to the standby: the routing is
#	deterministic, and a probe (current_setting('cluster_name'), a STABLE
#	function) shows it.  pgpool runs four times, each time with another
#	function list:
#
#  - pgpool's defaults (read_only_function_list and write_function_list
#    empty): pgpool asks the primary whether each function in a SELECT is
#    VOLATILE and sends such SELECTs to the primary, so
#    SELECT snowflake_nextval(), its batch form, schema-qualified or in
#    FROM, and snowflake_lastval() after an INSERT all run there;
#    INSERT ... RETURNING is a write and goes there anyway.
#  - write_function_list = 'nextval,setval,lastval,currval' (pgpool's own
#    example for sequences): every function not listed counts as a reader,
#    so SELECT snowflake_nextval() goes to the standby and fails with
#    25006, and snowflake_lastval() after an INSERT with 55000 (the
#    standby's session minted nothing); INSERT ... RETURNING still works.
#  - the same list with the extension's functions that mint or write
#    added: everything works again, but pgpool matches a name as it is
#    written in the query, so public.snowflake_nextval() still reaches the
#    standby (25006) until the list names the schema-qualified form too.
#    The pattern is checked against the extension's catalogue: it names
#    every VOLATILE function but the trigger and the two that read the
#    server's counters.
#
#    In the two working configurations pgbench clients mint through
#    pgpool with the extended protocol (SELECT snowflake_nextval(), then
#    an INSERT of the key): no error, no key twice, all minted by the
#    primary.
#
# pgpool runs in the foreground under IPC::Run, with a timeout, and is
# stopped by its PID (or killed when the test dies).  It comes from
# Debian's pgpool2, which test/setup.sh installs; without it the file
# skips, which test/check.sh accepts only where test/setup.sh installed no
# package for it.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

my $pgpool = skip_without_command('pgpool');

my $primary = start_snowflake_node(
	'primary',
	node_id => 1,
	init => { allows_streaming => 1 },
	settings => { cluster_name => 'primary' });
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), src text NOT NULL);
CREATE TABLE seen (id bigint PRIMARY KEY, src text NOT NULL);});
$primary->backup('base');
my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'base', has_streaming => 1 ],
	settings => { cluster_name => 'standby' });
$primary->wait_for_catchup($standby);

my ($version) = `$pgpool --version 2>&1` =~ /version (\S+)/;
note "pgpool-II $version";

my $dir = PostgreSQL::Test::Utils::tempdir();
my $user = getpwuid($<);
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $pcp_port = PostgreSQL::Test::Cluster::get_free_port();
PostgreSQL::Test::Utils::append_to_file("$dir/pcp.conf", '');
PostgreSQL::Test::Utils::append_to_file("$dir/pool_hba.conf", '');

# pgpool's configuration: every path in the test directory, the two
# backends, and $lists (the function lists; empty: pgpool's defaults).
sub pgpool_conf
{
	my ($lists) = @_;
	return qq{
backend_clustering_mode = 'streaming_replication'
listen_addresses = '127.0.0.1'
port = $port
socket_dir = '$dir'
pcp_listen_addresses = ''
pcp_port = $pcp_port
pcp_socket_dir = '$dir'
wd_ipc_socket_dir = '$dir'
pid_file_name = '$dir/pgpool.pid'
logdir = '$dir'
num_init_children = 4
max_pool = 1
backend_hostname0 = '${\ $primary->host}'
backend_port0 = ${\ $primary->port}
backend_weight0 = 0
backend_hostname1 = '${\ $standby->host}'
backend_port1 = ${\ $standby->port}
backend_weight1 = 1
sr_check_user = '$user'
sr_check_period = 0
health_check_period = 0
load_balance_mode = on
log_per_node_statement = on
$lists
};
}

# Whether process $pid runs (one that exited, a zombie until reaped, does
# not), and the processes whose parent is $pid: from /proc.
sub proc_stat
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return undef;
	my $stat = <$fh>;
	return defined $stat && $stat =~ /^\d+ \(.*\) (\S) (\d+) / ? ($1, $2) : undef;
}
sub running { my ($state) = proc_stat($_[0]); return defined $state && $state ne 'Z'; }

sub children_of
{
	my ($pid) = @_;
	opendir my $dh, '/proc' or return ();
	return grep { /^\d+$/ && ((proc_stat($_))[1] // 0) == $pid } readdir $dh;
}

# Start pgpool with $lists in its configuration and wait (a bounded poll)
# until a query goes through it; return its handle and PID (from its PID
# file).  Its log goes to a file: a pipe nobody reads while pgbench runs
# would fill up and stop it.
my @pools;
sub start_pgpool
{
	my ($lists) = @_;
	open my $fh, '>', "$dir/pgpool.conf" or die "could not write pgpool.conf: $!";
	print $fh pgpool_conf($lists);
	close $fh;
	unlink "$dir/pgpool.pid";
	my $log = "$PostgreSQL::Test::Utils::log_path/054_pgpool_pgpool_" . (@pools + 1) . '.log';
	# -n: in the foreground; -D: forget the backends' status of a run before.
	my $h = IPC::Run::start(
		[
			$pgpool, '-n', '-D', '-f', "$dir/pgpool.conf", '-F', "$dir/pcp.conf",
			'-a', "$dir/pool_hba.conf"
		],
		'>', $log, '2>&1',
		IPC::Run::timeout(4 * $PostgreSQL::Test::Utils::timeout_default));
	my $pool = { h => $h };
	push @pools, $pool;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		$h->pump_nb;
		die 'pgpool exited: ' . slurp_file($log) unless $h->pumpable;
		($pool->{pid}) = slurp_file("$dir/pgpool.pid") =~ /^(\d+)/
		  if !$pool->{pid} && -s "$dir/pgpool.pid";
		return $pool if $pool->{pid} && (through('SELECT 1'))[0] eq '1';
		Time::HiRes::usleep(100_000);
	}
	die 'pgpool did not accept connections: ' . slurp_file($log);
}

# Stop pgpool by its PID: SIGINT (a fast shutdown, which stops its
# children), and wait for it at most $grace seconds (the framework's
# timeout by default); if it or a child is still there then, SIGKILL.
sub stop_pgpool
{
	my ($pool, $grace) = @_;
	return if $pool->{stopped}++;
	my $pid = $pool->{pid} // return $pool->{h}->kill_kill;
	my @children = children_of($pid);
	kill 'INT', $pid;
	my $deadline = time() + ($grace // $PostgreSQL::Test::Utils::timeout_default);
	Time::HiRes::usleep(50_000) while running($pid) && time() < $deadline;
	my @left = grep { running($_) } ($pid, @children);
	kill 'KILL', @left if @left;
	$pool->{h}->finish;
	return;
}

END
{
	# However the test ends.
	local $?;
	stop_pgpool($_, 5) foreach @pools;
}

# psql through pgpool, one session running each statement of @sql in turn
# (each sent alone); returns its standard output and error.
sub through
{
	my (@sql) = @_;
	my ($stdout, $stderr) = ('', '');
	IPC::Run::run(
		[
			'psql', '-X', '-A', '-t', '-q', '-v', 'VERBOSITY=verbose',
			'-h', '127.0.0.1', '-p', $port, '-d', 'postgres',
			map { ('-c', $_) } @sql
		],
		'>', \$stdout, '2>', \$stderr,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	chomp $stdout;
	return ($stdout, $stderr);
}

# The value $sql gives through pgpool, or its error as error_report()
# gives it.
sub through_value
{
	my ($stdout, $stderr) = through(@_);
	my $error = stderr_report($stderr);
	return $error eq 'none' ? $stdout : $error;
}

# pgbench through pgpool, extended protocol: 3 clients each mint 100 keys
# with SELECT snowflake_nextval() and record them in "seen" as $src.
my $bench = "$dir/bench.sql";
PostgreSQL::Test::Utils::append_to_file(
	$bench, q{
SELECT snowflake_nextval() AS id \gset
INSERT INTO seen (id, src) VALUES (:id, :src);
});
sub bench
{
	my ($src) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			'pgbench', '-n', '-M', 'extended', '-c', 3, '-j', 3, '-t', 100,
			'-D', "src=$src", '-f', $bench, '-h', '127.0.0.1', '-p', $port,
			'postgres'
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	diag($err) unless $ok;
	return $ok;
}

my $recovery_error =
  "25006: cannot generate snowflake IDs during recovery\n"
  . "HINT:  Generate IDs on the primary: a standby generates none until it is promoted.";
my $lastval_error =
  "55000: snowflake_lastval is not yet defined in this session\n"
  . 'HINT:  Call it in the session that called snowflake_nextval() or '
  . 'snowflake_nextval_batch(), and behind a transaction pooler in the same transaction.';
my $reads = q{SELECT current_setting('cluster_name')};
my $mints = q{
SELECT snowflake_node_id(snowflake_nextval()) || ','
       || (SELECT count(*) FROM snowflake_nextval_batch(3)) || ','
       || snowflake_node_id(public.snowflake_nextval()) || ','
       || (SELECT snowflake_node_id(x) FROM snowflake_nextval() x)};

# --- pgpool's defaults ---

my $pool = start_pgpool('');
is(through_value($reads), 'standby', 'defaults: a SELECT is sent to the standby');
is(through_value($mints), '1,3,1,1',
	'defaults: SELECTs calling the generators, in every form, run on the primary');
is( through_value(
		q{INSERT INTO t (src) VALUES ('defaults') RETURNING snowflake_node_id(id)}),
	'1', 'defaults: INSERT ... RETURNING runs on the primary');
is( through_value(
		q{INSERT INTO t (src) VALUES ('defaults lastval')},
		'SELECT snowflake_lastval()'),
	$primary->safe_psql('postgres', q{SELECT id FROM t WHERE src = 'defaults lastval'}),
	'defaults: snowflake_lastval() after the INSERT, its own statement, gives its key');
ok(bench('defaults'), 'defaults: pgbench mints through pgpool without an error');
stop_pgpool($pool);

# --- a write_function_list without the extension's functions ---

$pool = start_pgpool(q{write_function_list = 'nextval,setval,lastval,currval'});
is(through_value($reads), 'standby', 'sequences listed: a SELECT is sent to the standby');
is(through_value('SELECT snowflake_nextval()'),
	$recovery_error, 'sequences listed: SELECT snowflake_nextval() reaches the standby: 25006');
is(through_value('SELECT count(*) FROM snowflake_nextval_batch(3)'),
	$recovery_error, 'sequences listed: so does snowflake_nextval_batch()');
is( through_value(
		q{INSERT INTO t (src) VALUES ('listed') RETURNING snowflake_node_id(id)}),
	'1', 'sequences listed: INSERT ... RETURNING still runs on the primary');
is( through_value(q{INSERT INTO t (src) VALUES ('listed lastval')},
		'SELECT snowflake_lastval()'),
	$lastval_error,
	'sequences listed: snowflake_lastval() after the INSERT reaches the standby: 55000');
stop_pgpool($pool);

# --- the extension's VOLATILE functions listed too ---

# The functions that mint, or write: every VOLATILE function of the
# extension but its trigger function and the two behind the view
# snowflake_stats (snowflake_stats_all, and 1.0's snowflake_stats), which
# report the counters of the server they run on.
# The pattern is the one docs/deployment/poolers.md gives, read from it.
my $poolers = slurp_file(
	File::Spec->rel2abs(dirname(__FILE__) . '/../../docs/deployment/poolers.md'));
my ($ours) = $poolers =~
  /^write_function_list = 'nextval,setval,lastval,currval,(snowflake_\([a-z_|]+\)),public\\\.\1'$/m
  or die 'no write_function_list line of the expected form in docs/deployment/poolers.md';
is( $primary->safe_psql(
		'postgres', qq{
SELECT coalesce(string_agg(p.proname, ', '), 'none')
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'snowflake'
 WHERE p.provolatile = 'v' AND p.prorettype <> 'trigger'::regtype
   AND p.proname NOT IN ('snowflake_stats', 'snowflake_stats_all')
   AND p.proname !~ '^$ours\$'}),
	'none',
	'the listed pattern names every other VOLATILE function of the extension');
$pool = start_pgpool(qq{write_function_list = 'nextval,setval,lastval,currval,$ours'});
is(through_value('SELECT snowflake_nextval() > 0'),
	't', 'ours listed without the schema: the name as listed runs on the primary');
is(through_value('SELECT public.snowflake_nextval()'),
	$recovery_error, 'but the schema-qualified name reaches the standby: 25006');
stop_pgpool($pool);
$pool = start_pgpool(
	qq{write_function_list = 'nextval,setval,lastval,currval,$ours,public\\.$ours'});
is(through_value($reads), 'standby', 'ours listed: a SELECT is sent to the standby');
is(through_value($mints), '1,3,1,1',
	'ours listed: SELECTs calling the generators, in every form, run on the primary');
is( through_value(
		q{INSERT INTO t (src) VALUES ('ours lastval')}, 'SELECT snowflake_lastval()'),
	$primary->safe_psql('postgres', q{SELECT id FROM t WHERE src = 'ours lastval'}),
	'ours listed: snowflake_lastval() after the INSERT gives its key');
ok(bench('ours listed'), 'ours listed: pgbench mints through pgpool without an error');
stop_pgpool($pool);

# --- the keys pgbench minted ---

is( $primary->safe_psql(
		'postgres', q{
SELECT src || ':' || count(*) || ' keys, ' || count(DISTINCT id) || ' distinct, node '
       || string_agg(DISTINCT snowflake_node_id(id)::text, ',')
  FROM seen GROUP BY src ORDER BY src}),
	"defaults:300 keys, 300 distinct, node 1\nours listed:300 keys, 300 distinct, node 1",
	'every key pgbench minted through pgpool is there once, minted by the primary');

$standby->stop;
$primary->stop;
done_testing();
