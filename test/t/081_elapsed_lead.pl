# Copyright: see LICENSE
#
# 081_elapsed_lead.pl
#	An elapsed lead brought back by replay (issue 52, finding 3).  A
#	primary raises snowflake.max_drift_ms to 6 s for a bulk job, lowers it
#	back to 1 s, and goes on until the old lead has elapsed: no ID of its
#	history leads the clock by more than 1 s any more.  Then:
#  - its standby, which replayed the raise and the lowering, is promoted
#    (the primary lost);
#  - the primary, stopped by a crash (immediate stop) before its next
#    checkpoint (checkpoint_timeout 1 h, no CHECKPOINT), starts again: its
#    crash recovery replays the raise.
# On each, 30 calls of snowflake_nextval() spread over the old lead's 6 s
# (each with the default snowflake.max_wait_ms) are all served, and the
# first ID leads the clock at the first call by at most the lead in force,
# 1 s.  In 1.3 as issue 52 found it, the replayed raise was taken in force
# again (a standby never lowers it): the first ID of each was placed the
# old lead past the clock, and calls were refused until the clock caught
# up ("16 of 30 calls refused for 19 s" with a 20 s lead).  With the
# preload only (without it nothing is raised past 1 s,
# docs/deployment/no-preload.md).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

my $old_lead = 6000;
my $in_force = 1000;
my $calls = 30;

# Layout 41/10/4: 16 IDs a millisecond.
my $per_ms = 16;

# $calls calls of snowflake_nextval() on $node, started once the floor of
# its start has been applied (its log, from $offset, says so), one every
# $old_lead / $calls ms (the workload's pace), each in a session that
# reads the clock first; then the checks: none refused, and the first ID
# given leads the clock read before the first call by at most $in_force.
sub calls_after_start
{
	my ($label, $node, $offset) = @_;
	log_appears($node, qr/LOG:  snowflake IDs resume at \d+ ms past the clock/, $offset)
	  or die "$label: the floor of the start was not applied";
	my $t0;
	my $pace = $old_lead / $calls / 1000;
	my $start = Time::HiRes::time();
	my ($first, @refused);
	for my $i (0 .. $calls - 1)
	{
		my $due = $start + $i * $pace;
		my $early = $due - Time::HiRes::time();
		Time::HiRes::sleep($early) if $early > 0;
		my $sent = Time::HiRes::time();
		my ($state, $stderr, $out) = sql_error($node,
			"SELECT round(extract(epoch FROM clock_timestamp()) * 1000);\nSELECT snowflake_nextval();");
		my ($clock, $id) = split /\n/, $out;
		$t0 //= $clock;
		if ($state eq 'none')
		{
			$first //= $id;
		}
		else
		{
			push @refused, [ $sent, Time::HiRes::time(), stderr_report($stderr) ];
		}
	}
	my $lead = defined $first
	  ? $node->safe_psql('postgres',
		"SELECT round(extract(epoch FROM snowflake_timestamp($first)) * 1000) - $t0")
	  : undef;
	diag(sprintf('%s: %d of %d calls refused%s; the first ID leads the clock at the first call by %s ms',
			$label, scalar(@refused), $calls,
			@refused
			? sprintf(' for %.1f s (first: %s)',
				$refused[-1][1] - $refused[0][0], (split /\n/, $refused[0][2])[0])
			: '',
			$lead // 'none (no ID)'));
	is(scalar(@refused), 0, "$label: none of $calls calls over the old lead's span is refused");
	ok(defined $lead && $lead <= $in_force,
		"$label: the first ID leads the clock by at most the lead in force ($in_force ms)");
	return;
}

my $primary = start_snowflake_node('primary',
	node_id => 1,
	layout => '41/10/4',
	init => { allows_streaming => 1 },
	settings => { checkpoint_timeout => '1h' });
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
mint_into($primary, 1000);
$primary->backup('b');
my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'b', has_streaming => 1 ]);
my $redo = $primary->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()');

# A bulk job under a raised lead, 2 s ahead of the clock; the lead lowered
# and IDs issued under it (a reservation write records the lowering); the
# old lead elapses, and IDs are issued again.
set_drift($primary, "${old_lead}ms", '6s');
mint_into($primary, 2 * 1000 * $per_ms);
set_drift($primary, undef, '1s');
mint_into($primary, 14000);
my $lowered = $primary->safe_psql('postgres', 'SELECT clock_timestamp()');
$primary->poll_query_until('postgres',
	"SELECT clock_timestamp() > '$lowered'::timestamptz + interval '@{[ $old_lead + 100 ]} ms'")
  or die 'timed out waiting for the old lead to elapse';
mint_into($primary, 1000);
$primary->wait_for_catchup($standby);
is($primary->safe_psql('postgres', 'SELECT redo_lsn FROM pg_control_checkpoint()'),
	$redo, 'no checkpoint since before the raise: a crash recovery replays it');

$primary->stop('immediate');

# The standby, which replayed the raise and the lowering, promoted.
my $offset = -s $standby->logfile;
promote_and_wait($standby);
calls_after_start('the standby promoted after the old lead elapsed', $standby, $offset);
$standby->stop;

# The primary after its crash.
$offset = -s $primary->logfile;
$primary->start;
calls_after_start('the primary after a crash before its next checkpoint', $primary, $offset);
$primary->stop;

done_testing();
