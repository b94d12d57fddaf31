# Copyright: see LICENSE
#
# 021_fleet_clock_skew.pl
#	The fan-in of 020_fleet_fan_in.pl with skewed clocks: source1 runs
#	300 ms ahead, source2 on time, source3 300 ms behind (libfaketime, each
#	source on its own clock); the hub keeps the real time.
#
#  - Uniqueness is unaffected: everything arrives, no apply error.
#  - Ordering error across servers stays within the skew: for rows a, b
#    created in that order on servers with clock offsets oa, ob, ID order
#    may put b first, but then a's ID time exceeds b's by at most oa - ob
#    (600 ms between source1 and source3, 0 when a's clock is the slower).
#    With these offsets such inversions do happen.
#  - Range queries by time: WHERE id >= snowflake_min_id(T) selects by each
#    server's own clock, so it misses rows created after T on a slower
#    clock and includes rows created before T on a faster one; widened by
#    the fleet's skew (600 ms) it misses none.
#
# The numbers measured here are printed (note) for docs/fleets.md.

use strict;
use warnings;

use FleetTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# Clock offset of each source, in milliseconds.
my %offset_ms = (1 => 300, 2 => 0, 3 => -300);

# Each source runs on a clock of its own.
my @sources;
foreach my $i (1 .. 3)
{
	set_clock(sprintf('%+.3f', $offset_ms{$i} / 1000), "source$i");
	push @sources,
	  fleet_node("source$i", $i, with => 'faketime', clock => "source$i");
}
my $hub = fleet_node('hub');

# The sources' clocks really are offset, as the hub (real time) sees them:
# a source's clock_timestamp() read between two of the hub's differs from
# both by the offset, give or take the time between the readings.
foreach my $i (1 .. 3)
{
	my $q = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint";
	my $before = $hub->safe_psql('postgres', $q);
	my $theirs = $sources[ $i - 1 ]->safe_psql('postgres', $q);
	my $after = $hub->safe_psql('postgres', $q);
	ok( $theirs - $after <= $offset_ms{$i} + 1
		  && $theirs - $before >= $offset_ms{$i} - 1,
		"source$i\'s clock runs $offset_ms{$i} ms off the hub's (hub $before..$after, source $theirs)"
	);
}

build_fan_in($hub, @sources);
load_fan_in($hub, @sources);
my $ord = check_fan_in($hub, { map { ("source$_" => $_) } 1 .. 3 },
	{ map { ("source$_" => $offset_ms{$_}) } 1 .. 3 }, @sources);

# --- ordering within the skew ---

my $skew = 0;
foreach my $x (1 .. 3)
{
	foreach my $y (1 .. 3)
	{
		next if $x == $y;
		my $bound = $offset_ms{$x} - $offset_ms{$y};
		$skew = $bound if $bound > $skew;
		my $worst = $ord->{"$x>$y"};
		note(
			"rows of source$x created before rows of source$y: largest inversion "
			  . (defined $worst ? "$worst ms" : 'none')
			  . " (bound $bound ms)");
		next unless defined $worst;
		cmp_ok($worst, '<=', $bound > 0 ? $bound : 0,
			"source$x before source$y: ID order errs by at most the clocks' difference"
		);
	}
}
cmp_ok($ord->{inverted}, '>', 0,
	"the skew does reorder rows created close together ($ord->{inverted} of $ord->{pairs} pairs)"
);
ok(defined $ord->{'1>3'} && $ord->{'1>3'} > 0,
	'rows of the fast clock sort after later rows of the slow clock');
note("largest inversion, fast clock before slow: "
	  . ($ord->{'1>3'} // 'none')
	  . " ms with $skew ms between the clocks");

# --- range queries by time ---

# T is the time inside the ID of the relay's middle row.  Rows created after
# it (higher step) but below snowflake_min_id(T) are missed by
# "id >= snowflake_min_id(T)"; rows created before it but above are
# included.  Both happen; both vanish when the window is widened by the
# skew; every missed row lies within the skew of T.
my $mid = $FleetTest::RELAY_STEPS / 2;
my ($missed, $early, $missed_wide, $early_wide, $worst_missed) = split /\|/,
  $hub->safe_psql(
	'postgres', qq{
WITH t AS (SELECT snowflake_timestamp(id) AS t FROM events WHERE step = $mid)
SELECT count(*) FILTER (WHERE step > $mid AND id < snowflake_min_id(t)),
	count(*) FILTER (WHERE step < $mid AND id >= snowflake_min_id(t)),
	count(*) FILTER (WHERE step > $mid
		AND id < snowflake_min_id(t - interval '$skew ms')),
	count(*) FILTER (WHERE step < $mid
		AND id >= snowflake_min_id(t + interval '$skew ms' + interval '1 ms')),
	coalesce(max(extract(epoch FROM t - snowflake_timestamp(id)) * 1000)
		FILTER (WHERE step > $mid AND id < snowflake_min_id(t)), 0)
FROM events, t WHERE step IS NOT NULL});
note(
	"id >= snowflake_min_id(T) at the relay's middle row: $missed later rows missed (up to $worst_missed ms before T), $early earlier rows included"
);
cmp_ok($missed + $early, '>', 0,
	'a range query by time selects by each server\'s clock');
cmp_ok($worst_missed, '<=', $skew,
	'the rows it misses carry times within the skew before T');
is($missed_wide, 0,
	'widened by the skew, "id >= snowflake_min_id(T - skew)" misses no later row');
is($early_wide, 0,
	'and "id >= snowflake_min_id(T + skew)" takes no earlier row');

$_->stop foreach $hub, @sources;
done_testing();
