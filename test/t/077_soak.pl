# Copyright: see LICENSE
#
# 077_soak.pl
#	The soak (test/t/SoakTest.pm): 64 pgbench clients in a mix of single
#	inserts keyed by DEFAULT snowflake_nextval(), batches, decoders, the
#	text forms both ways and snowflake_stats, for SNOWFLAKE_SOAK_SECONDS
#	(default 30; test/soak.sh runs it for minutes and publishes the
#	report), with the preload, and in the no-preload pass without it:
#	 - no ID twice, each session's IDs strictly increasing, no error;
#	 - every process's memory flat between a measurement after the
#	   warm-up and one near the end (SoakTest.pm says what flat is).
#	SNOWFLAKE_SOAK_CLIENTS changes the number of clients,
#	SNOWFLAKE_SOAK_OUT names a file the report is written to, and
#	SNOWFLAKE_SOAK_LEAK=1 (test/soak.sh --plant-leak) runs a build of the
#	tree with a leak planted in snowflake_nextval() instead, and then
#	requires the memory not to be flat: the method sees a leak.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use SoakTest;
use Test::More;
use Cwd qw(getcwd);

my $seconds = $ENV{SNOWFLAKE_SOAK_SECONDS} // 30;
my $clients = $ENV{SNOWFLAKE_SOAK_CLIENTS} // 64;
my $leak = $ENV{SNOWFLAKE_SOAK_LEAK} // 0;

my $node = start_snowflake_node(
	'soak',
	node_id => 1,
	settings => {
		max_connections => $clients + 20,
		# Commits do not wait for the WAL flush: the clients stress the
		# generator, not the disk (fsync stays on).
		synchronous_commit => 'off',
		# Not every statement in the log (the TAP framework's default):
		# millions of them.
		log_statement => 'none',
	},
	$leak ? (install_path => leaky_installation(getcwd())) : ());

my $r = run_soak($node, seconds => $seconds, clients => $clients);
my $mode = no_preload() ? 'without the preload' : 'with the preload';
my $report = soak_report($r,
	sprintf('PostgreSQL %s %s%s', $node->safe_psql('postgres', 'SHOW server_version'),
		$mode, $leak ? ', the leak planted' : ''));
diag($report);
if ($ENV{SNOWFLAKE_SOAK_OUT})
{
	open my $fh, '>', $ENV{SNOWFLAKE_SOAK_OUT} or die "could not write $ENV{SNOWFLAKE_SOAK_OUT}: $!";
	print $fh $report;
	close $fh;
}

ok($r->{pgbench_ok}, 'pgbench ran without error') or diag($r->{pgbench_err});
is($r->{errors}, 0, 'no ERROR in the server log while the load ran')
  or diag($r->{first_error});
cmp_ok($r->{rows}, '>', 0, 'IDs were inserted');
is($r->{sessions}, $clients, 'every client inserted');
cmp_ok($r->{batched}, '>', 0, 'batches were inserted');
is($r->{duplicates}, 0, 'no ID twice');
is($r->{order_violations}, 0, "each session's IDs strictly increase");
is($r->{other_node}, 0, 'every ID has the node id 1');
cmp_ok($r->{measured}, '>=', $clients, 'every backend measured at the start and at the end');
is($r->{shmem_change}, 0, 'the "snowflake" shared allocation did not change');
is($r->{dsm_change}, 0, 'the dynamic shared memory segments did not change');
if ($leak)
{
	cmp_ok($r->{growth_long_min} // 0, '>', FLAT_BYTES,
		'the planted leak: every client backend grew by more than the bound');
}
else
{
	cmp_ok($r->{growth_long_max}, '<=', FLAT_BYTES,
		'no process grew by more than the bound');
}

$node->stop;
done_testing();
