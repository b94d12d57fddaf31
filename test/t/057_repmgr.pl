# Copyright: see LICENSE
#
# 057_repmgr.pl
#	Failover and switchover under repmgr (Debian's postgresql-NN-repmgr:
#	repmgr and repmgrd), with node ids derived from the host name: a
#	primary and a standby, each PostgreSQL and repmgrd in a UTS namespace of
#	its own (pg-1, pg-2: test/hostns.c, through repmgr's service commands).
#
# The standby is a copy of the primary made by repmgr standby clone
# (pg_basebackup), its postgresql.conf included: one configuration, the
# one docs/deployment/repmgr.md shows (its block marked
# <!-- recipe: repmgr/postgresql.conf -->, appended as it is, nothing of
# the test's own but where the server listens): snowflake.node_id_from =
# 'hostname', base 30, count 8, so the members mint with node ids 31 and
# 32, and the wal_keep_size the rejoin after a crash needs.  Two clients
# insert rows keyed by snowflake_nextval() throughout, on whichever member
# accepts writes, recording every ID returned, while
#   1. the primary's node dies (its postmaster and repmgrd killed with
#      SIGKILL), two WAL files after its last checkpoint, so that the
#      crash recovery pg_rewind runs on it removes the WAL back to that
#      checkpoint unless wal_keep_size keeps it: repmgrd on the standby
#      promotes it (automatic failover);
#   2. the page's rejoin (<!-- recipe: repmgr/rejoin.sh -->: CHECKPOINT on
#      the new primary, repmgr node rejoin --force-rewind), with the test's
#      address, port, user and repmgr.conf, brings the old primary back as
#      a standby (pg_rewind), and its repmgrd is started again;
#   3. repmgr standby switchover hands the primary back to it.
# Passes only if no ID was returned twice, every ID is above every ID
# returned before its request was sent, the clients saw the three terms,
# and each member minted with its own node id (31 on pg-1, 32 on pg-2).
#
# repmgr standby switchover runs commands on the primary through ssh; here
# both members are on one machine, and an "ssh" first in PATH runs the
# command locally, as ssh to the primary would (the members' service
# commands start each PostgreSQL under its own host name wherever they run).
# repmgrd checks its upstream every second, two attempts a second apart.
#
# Where repmgr is not installed (this major's archive has no
# postgresql-NN-repmgr), the file skips saying so (HaTest's ha_require;
# test/check.sh accepts that only where test/setup.sh installed no
# package for it).

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
chomp(my $pkglibdir = `$pg_config --pkglibdir`);
chomp(my $sharedir = `$pg_config --sharedir`);
my $repmgr = ha_program('repmgr', $bindir);
my $repmgrd = ha_program('repmgrd', $bindir);
ha_require(
	[ 'command', 'repmgr', defined $repmgr, "not in the server's bin directory $bindir" ],
	[ 'command', 'repmgrd', defined $repmgrd, "not in the server's bin directory $bindir" ],
	[
		'extension', 'repmgr',
		-e "$pkglibdir/repmgr.so" && -e "$sharedir/extension/repmgr.control",
		"no repmgr.so in $pkglibdir or no repmgr.control in $sharedir/extension"
	]);
die 'the no-preload pass does not run this file' if no_preload();

# The page's configuration and rejoin.
my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my %recipes = doc_recipes("$root/docs/deployment/repmgr.md");
is(join(' ', sort keys %recipes), 'repmgr/postgresql.conf repmgr/rejoin.sh',
	'docs/deployment/repmgr.md has the configuration and the rejoin this test runs');

my $dir = PostgreSQL::Test::Utils::tempdir();
my $log = "$dir/repmgr.log";
delete @ENV{qw(PGHOST PGHOSTADDR PGPORT)};
my %port = map { $_ => PostgreSQL::Test::Cluster::get_free_port() } (1, 2);
my ($hostns) = hostns_command('unused');

sub psql_at
{
	my ($n, $sql, $quiet) = @_;
	return ha_psql($bindir, $port{$n}, 'postgres', $sql, $quiet);
}

# Member $n's PostgreSQL under host name pg-$n: the command repmgr starts it
# with, and the test too.
sub pg_ctl_start
{
	my ($n, $action) = @_;
	return qq{$hostns pg-$n $bindir/pg_ctl -D $dir/n$n -o "-p $port{$n}" -l $dir/n$n.pglog -w $action};
}

# repmgr.conf of member $n.
foreach my $n (1, 2)
{
	append_to_file("$dir/n$n.conf", qq{node_id=$n
node_name='n$n'
conninfo='host=127.0.0.1 port=$port{$n} user=postgres dbname=repmgr connect_timeout=2'
data_directory='$dir/n$n'
pg_bindir='$bindir'
repmgr_bindir='$bindir'
log_file='$dir/repmgrd-n$n.log'
repmgrd_pid_file='$dir/repmgrd-n$n.pid'
failover='automatic'
promote_command='$repmgr standby promote -f $dir/n$n.conf --log-to-file'
follow_command='$repmgr standby follow -f $dir/n$n.conf --log-to-file --upstream-node-id=%n'
monitor_interval_secs=1
reconnect_attempts=2
reconnect_interval=1
service_start_command='@{[ pg_ctl_start($n, 'start') ]}'
service_stop_command='$bindir/pg_ctl -D $dir/n$n -m fast -w stop'
service_restart_command='@{[ pg_ctl_start($n, '-m fast restart') ]}'
service_reload_command='$bindir/pg_ctl -D $dir/n$n reload'
});
}
ha_at_end(
	sub {
		foreach my $n (1, 2)
		{
			system("$bindir/pg_ctl -D $dir/n$n -m immediate stop >/dev/null 2>&1")
			  if -e "$dir/n$n/postmaster.pid";
		}
	});

# The ssh that repmgr standby switchover runs: the command, here.
mkdir "$dir/bin" or die "could not create $dir/bin: $!";
append_to_file("$dir/bin/ssh", q{#!/bin/sh
# ssh [options] host command...: the command, on this machine
while [ $# -gt 0 ]; do
    case "$1" in
        -o|-p|-l|-i|-F) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
shift
exec sh -c "$*"
});
chmod 0755, "$dir/bin/ssh" or die "could not chmod $dir/bin/ssh: $!";

# Start member $n's repmgrd under host name pg-$n.
sub run_repmgrd
{
	my ($n) = @_;
	return ha_start("$dir/repmgrd-n$n.out",
		hostns_command("pg-$n", $repmgrd, '-f', "$dir/n$n.conf", '--daemonize=false'));
}

# Whether member $n is a primary (f) or a standby (t), or '' when down.
sub in_recovery
{
	my ($n) = @_;
	return psql_at($n, 'SELECT pg_is_in_recovery()', 1);
}

# --- the primary: a data directory of ours, with the shared configuration ---

my $initdb_out = '';
IPC::Run::run([ "$bindir/initdb", '-D', "$dir/n1", '-A', 'trust', '-U', 'postgres', '--no-sync' ],
	'>', \$initdb_out, '2>&1')
  or BAIL_OUT("initdb failed: $initdb_out");
append_to_file("$dir/n1/postgresql.conf", $recipes{'repmgr/postgresql.conf'} . qq{
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
});
append_to_file("$dir/n1/pg_hba.conf", "host replication all 127.0.0.1/32 trust\n");
ok(ha_run($log, 60, 'sh', '-c', pg_ctl_start(1, 'start')), 'n1 starts on pg-1');
psql_at(1, 'CREATE DATABASE repmgr');
psql_at(1, 'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY)');
ok(ha_run($log, 60, $repmgr, '-f', "$dir/n1.conf", 'primary', 'register'),
	'repmgr primary register: n1');

# --- the standby: repmgr copies the primary, configuration included ---

ok( ha_run($log, 180, $repmgr, '-h', '127.0.0.1', '-p', $port{1}, '-U', 'postgres',
		'-d', 'repmgr', '-f', "$dir/n2.conf", 'standby', 'clone', '--fast-checkpoint'),
	'repmgr standby clone: n2, a copy of n1');
ok(ha_run($log, 60, 'sh', '-c', pg_ctl_start(2, 'start')), 'n2 starts on pg-2');
ok(ha_run($log, 60, $repmgr, '-f', "$dir/n2.conf", 'standby', 'register'),
	'repmgr standby register: n2');
my $stats = q{SELECT node_id || ' ' || node_id_source || ' ' || status FROM snowflake_stats};
is(psql_at(1, $stats), '31 hostname pg-1 ready',
	'n1 mints with node id 31, from its host name pg-1');
ok(ha_wait(sub { psql_at(2, $stats, 1) eq '32 hostname pg-2 recovery' }),
	'n2, with the same configuration, has node id 32 from pg-2');
my %repmgrd = map { $_ => run_repmgrd($_) } (1, 2);

# --- clients throughout ---

start_clients(2,
	"host=127.0.0.1,127.0.0.1;port=$port{1},$port{2};user=postgres;dbname=postgres;"
	  . 'target_session_attrs=read-write;connect_timeout=2',
	$dir);
ok(ha_wait(sub { client_lines($dir, $port{1}) >= 50 }), 'the clients get IDs from n1');

# 1. n1's node dies: its postmaster and its repmgrd killed with SIGKILL,
# two WAL files after its last checkpoint (as after some minutes of
# writes): the crash recovery that pg_rewind runs on it then ends with a
# checkpoint that removes the WAL back to the one before, which pg_rewind
# reads, unless wal_keep_size keeps it.
psql_at(1, 'CHECKPOINT');
foreach my $i (1, 2)
{
	my $before = client_lines($dir, $port{1});
	psql_at(1, 'SELECT pg_switch_wal()');
	ha_wait(sub { client_lines($dir, $port{1}) >= $before + 10 })
	  or die 'the clients got no IDs from n1 after a WAL switch';
}
ha_kill_group($repmgrd{1}, 'KILL');
my ($postmaster) = split /\n/, slurp_file("$dir/n1/postmaster.pid");
kill('KILL', $postmaster) or die "could not kill $postmaster";
# The primary as repmgr's metadata records it.
sub registered_primary
{
	my ($n) = @_;
	return ha_psql($bindir, $port{$n}, 'repmgr',
		q{SELECT string_agg(node_name, ',') FROM repmgr.nodes WHERE type = 'primary' AND active}, 1);
}
ok(ha_wait(sub { in_recovery(2) eq 'f' && registered_primary(2) eq 'n2' }),
	'repmgrd promotes n2, and repmgr records it as the primary');
my $before = client_lines($dir, $port{2});
ok(ha_wait(sub { client_lines($dir, $port{2}) >= $before + 50 }),
	'the clients get IDs from n2');

# 2. n1 rejoins as a standby of n2, rewound, by the page's commands run on
# n1's host (under its host name), the new primary's address being n2's.
# pg_rewind reads the new primary's timeline from its control file, which
# the checkpoint after a promotion updates, spread over minutes under
# load: without one first, pg_rewind would find both on timeline 1 and
# rewind nothing.
{
	my $rejoin = doc_config(
		$recipes{'repmgr/rejoin.sh'},
		{
			'new-primary' => '127.0.0.1',
			'-U repmgr' => '-U postgres',
			'user=repmgr' => "user=postgres port=$port{2}",
			'/etc/repmgr.conf' => "$dir/n1.conf"
		},
		1);
	run_tool("the page's rejoin (repmgr node rejoin --force-rewind): n1 follows n2",
		$rejoin, { PGPORT => $port{2}, PATH => "$bindir:$ENV{PATH}" }, 300,
		hostns_command('pg-1'));
}
ok(ha_wait(sub { psql_at(1, 'SELECT status FROM pg_stat_wal_receiver', 1) eq 'streaming' }),
	"n1 streams from n2: pg_rewind took it back to n2's history");
is(in_recovery(1), 't', 'n1 runs as a standby');
$repmgrd{1} = run_repmgrd(1);

# 3. Switchover back to n1.
{
	local $ENV{PATH} = "$dir/bin:$ENV{PATH}";
	ok( ha_run($log, 180, hostns_command('pg-1', $repmgr, '-f', "$dir/n1.conf",
				'standby', 'switchover', '--verbose')),
		'repmgr standby switchover');
}
ok( ha_wait(
		sub {
			in_recovery(1) eq 'f' && in_recovery(2) eq 't' && registered_primary(1) eq 'n1';
		}),
	'n1 is the primary again, n2 its standby');
$before = client_lines($dir, $port{1});
ok(ha_wait(sub { client_lines($dir, $port{1}) >= $before + 50 }),
	'the clients get IDs from n1 again');
stop_clients($dir);

# --- what the clients got ---

ha_verdict($dir, 'repmgr', { $port{1} => 'n1', $port{2} => 'n2' },
	150, 'n1 > n2 > n1', 'n1: node id 31, n2: node id 32');
is(psql_at(1, q{SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ',') FROM ids}),
	'31,32', 'the table holds IDs of node ids 31 and 32, nothing else');
is(psql_at(2, $stats), '32 hostname pg-2 recovery',
	'n2, restarted as a standby by the switchover, still derives node id 32 from pg-2');

done_testing();
