# Copyright: see LICENSE
#
# 020_fleet_fan_in.pl
#	Fan-in: three primaries with node ids 1, 2 and 3 mint keys with
#	snowflake_nextval() into their own tables at the same time; a fourth
#	server subscribes to all three (built-in logical replication) into one
#	table.
#
# Where the rows meet there must be no apply error, no synchronisation
# error and (PostgreSQL 18) no conflict; the row counts add up;
# snowflake_node_id(id) names the server that inserted each row; and
# ORDER BY id agrees with the order in which rows were created across the
# servers, within the clocks' skew.  All four servers share one clock here,
# so the skew is 0: two rows created one after the other on different
# servers may only come out of order when they carry the same millisecond
# (then the node field decides).  021_fleet_clock_skew.pl repeats this with
# skewed clocks.  The checks are in FleetTest.pm.

use strict;
use warnings;

use FleetTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my @sources = map { fleet_node("source$_", $_) } 1 .. 3;
my $hub = fleet_node('hub');

build_fan_in($hub, @sources);
load_fan_in($hub, @sources);
my $ord = check_fan_in($hub, { map { ("source$_" => $_) } 1 .. 3 },
	undef, @sources);

my @wrong = grep { $_ =~ />/ && $ord->{$_} > 0 } keys %$ord;
is(scalar(@wrong), 0,
	"with one clock, ORDER BY id follows creation order across sources, but within one millisecond ($ord->{inverted} pairs share one)"
) or diag(join ', ', map { "$_: $ord->{$_} ms" } @wrong);

$_->stop foreach $hub, @sources;
done_testing();
