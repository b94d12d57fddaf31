# Copyright: see LICENSE
#
# 051_chaos.pl
#	The seeded fault campaign (test/t/ChaosTest.pm): a primary and a
#	streaming standby under load while a seeded scheduler kills backends,
#	the reservation writer and the postmaster, stops processes, steps the
#	clock, fails the state file's writes, changes snowflake.max_drift_ms,
#	promotes the standby and rejoins the old primary, and runs issue 44's
#	and issue 52's sequences (copies restored in place, a raise while the
#	standby lags, a raise lowered and expired, a switchover and back, a
#	clone of a server waiting for its confirmation, copies beside the
#	primary with a span; ChaosTest.pm); then a checker reads everything
#	the clients and the scheduler were given: no ID twice, IDs increasing
#	on one server, none further ahead of the clock than allowed, no error
#	outside the documented ones, no ID from a server that must refuse, no
#	start that must mint refused for longer than the lead in force, the
#	server up at the end.
#
#   SNOWFLAKE_CHAOS_SEED     the seed (default 1): the same seed, the same
#                            schedule of faults
#   SNOWFLAKE_CHAOS_SECONDS  how long faults are injected (default 20, a
#                            smoke run; CI's native stage runs 120 and
#                            test/chaos.sh --minutes M runs M * 60)
#   SNOWFLAKE_CHAOS_OUT      a directory to copy the history and the
#                            summary into (test/chaos.sh sets it)
#   SNOWFLAKE_CHAOS_PORT     the servers take the first free ports from it
#                            on (test/chaos.sh --port)
#   SNOWFLAKE_CHAOS_REPRODUCE  the command the summary gives to reproduce
#                            the campaign (test/chaos.sh sets it: the same
#                            PostgreSQL and build flags); without it,
#                            test/chaos.sh with this seed, length and major,
#                            and PG_CONFIG where it is set
#   SNOWFLAKE_CHAOS_NO_PRELOAD=1  both servers run without the preload
#                            throughout (PostgreSQL 17 and later; test/chaos.sh
#                            --no-preload): the servers are started as in the
#                            no-preload pass (SNOWFLAKE_TEST_NO_PRELOAD), and
#                            one that preloads the library fails the file

use strict;
use warnings;

use File::Copy ();
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use ChaosTest;
use Test::More;

faketime_available() or exit;

$ENV{SNOWFLAKE_TEST_NO_PRELOAD} = 1 if $ENV{SNOWFLAKE_CHAOS_NO_PRELOAD};

my $seed = $ENV{SNOWFLAKE_CHAOS_SEED} // 1;
my $seconds = $ENV{SNOWFLAKE_CHAOS_SECONDS} // 20;
# Whole minutes as such, a smoke's 20 s as 0.33 (test/chaos.sh rounds back to 20 s).
my $minutes = $seconds % 60 ? sprintf('%.2f', $seconds / 60) : $seconds / 60;
my $dir = PostgreSQL::Test::Utils::tempdir('chaos');
# The next port PostgreSQL::Test::Cluster tries is the one after the last
# it assigned.
$PostgreSQL::Test::Cluster::last_port_assigned = $ENV{SNOWFLAKE_CHAOS_PORT} - 1
  if $ENV{SNOWFLAKE_CHAOS_PORT};
my $t0 = time();

my $c = run_campaign($seed, $seconds, $dir);
my $h = check_history($dir);
my @summary = summary($c, $h, $minutes);
push @summary, sprintf('wall clock: %d s from the first server start to the verdict', time() - $t0);
diag($_) foreach @summary;

if (my $out = $ENV{SNOWFLAKE_CHAOS_OUT})
{
	File::Copy::copy($_, $out) foreach glob("$dir/client-* $dir/schedule");
	open my $fh, '>', "$out/summary" or die "$out/summary: $!";
	print $fh map { "$_\n" } @summary;
	close $fh;
}

cmp_ok(scalar(keys %{ $c->{kinds} }), '>=', $seconds >= 60 ? 5 : 2,
	'faults of several kinds were injected');
cmp_ok($h->{ids}, '>', 100, 'the clients were given IDs');
ok($c->{up}, 'the primary is up at the end');
is(scalar @{ $h->{violations} }, 0, 'the checker found no violation');

done_testing();
