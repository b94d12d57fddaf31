# Copyright: see LICENSE
#
# 003_invalid_layout.pl
#	Invalid layouts stop a preloaded server from starting.
#
# The epoch and widths decide every ID, so a bad value must not be replaced
# by a default with a WARNING (what PostgreSQL does for an ordinary custom
# setting): the postmaster must refuse to start, with a message that names
# the settings involved.  Each case writes the snowflake settings afresh,
# tries to start, and reads the server log written by that attempt.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The snowflake settings live in a file of their own, written afresh by
# each case before the server is started.
my $node = start_snowflake_node(
	'invalid_layout',
	preload => 1,
	include => ['snowflake_layout.conf'],
	start => 0);

# Replace the snowflake settings (values are quoted as given).
sub write_layout
{
	write_conf_file($node, 'snowflake_layout.conf', @_);
	return;
}

# Try to start with the given settings: the start must fail, and the log
# lines written by this attempt must match every pattern.
sub start_fails
{
	my ($name, $settings, @patterns) = @_;

	write_layout(%$settings);
	my $offset = -s $node->logfile // 0;
	my $started = $node->start(fail_ok => 1);
	ok(!$started, "$name: the server does not start");
	$node->stop if $started;    # keep going if it wrongly did

	my $log = slurp_file($node->logfile, $offset);
	like($log, $_, "$name: log matches $_") foreach @patterns;
	return;
}

# The widths sum to more than 63 bits.
start_fails(
	'45/10/12',
	{
		'snowflake.node_id' => '1',
		'snowflake.timestamp_bits' => '45',
		'snowflake.node_bits' => '10',
		'snowflake.sequence_bits' => '12'
	},
	qr/FATAL:  invalid snowflake layout/,
	qr/DETAIL:  snowflake\.timestamp_bits \(45\) \+ snowflake\.node_bits \(10\) \+ snowflake\.sequence_bits \(12\) = 67, but an ID has only 63 bits\./
);

# A wider node field alone: the default layout uses all 63 bits, so the
# bit must come from the timestamp or sequence field (docs/fleets.md).
start_fails(
	'node_bits = 11 alone',
	{ 'snowflake.node_id' => '1', 'snowflake.node_bits' => '11' },
	qr/FATAL:  invalid snowflake layout/,
	qr/DETAIL:  snowflake\.timestamp_bits \(41\) \+ snowflake\.node_bits \(11\) \+ snowflake\.sequence_bits \(12\) = 64, but an ID has only 63 bits\./
);

# node_id does not fit the node field.
start_fails(
	'node_id 8 with node_bits 3',
	{ 'snowflake.node_id' => '8', 'snowflake.node_bits' => '3' },
	qr/FATAL:  invalid value for parameter "snowflake\.node_id": 8/,
	qr/DETAIL:  snowflake\.node_id is 8, but with snowflake\.node_bits = 3 it must be between 0 and 7\./,
	qr/HINT:  .*"snowflake\.node_bits"/);

# An epoch that does not parse.
start_fails(
	'unparsable epoch',
	{ 'snowflake.node_id' => '1', 'snowflake.epoch' => '2024-13-01' },
	qr/FATAL:  invalid value for parameter "snowflake\.epoch": "2024-13-01"/,
	qr/DETAIL:  date\/time field value out of range: "2024-13-01"\./);

start_fails(
	'epoch that is not a time',
	{ 'snowflake.node_id' => '1', 'snowflake.epoch' => 'next tuesday' },
	qr/FATAL:  invalid value for parameter "snowflake\.epoch": "next tuesday"/,
	qr/DETAIL:  invalid input syntax for type timestamp with time zone: "next tuesday"\./);

start_fails(
	'epoch that is not a date',
	{ 'snowflake.node_id' => '1', 'snowflake.epoch' => 'yesterday' },
	qr/FATAL:  invalid value for parameter "snowflake\.epoch": "yesterday"/,
	qr/DETAIL:  The epoch must be a fixed time, not "yesterday"\./);

start_fails(
	'epoch at infinity',
	{ 'snowflake.node_id' => '1', 'snowflake.epoch' => 'infinity' },
	qr/FATAL:  invalid value for parameter "snowflake\.epoch": "infinity"/,
	qr/DETAIL:  The epoch must be a finite time\./);

start_fails(
	'epoch with microseconds',
	{ 'snowflake.node_id' => '1', 'snowflake.epoch' => '2024-01-01 00:00:00.0005+00' },
	qr/FATAL:  invalid value for parameter "snowflake\.epoch": "2024-01-01 00:00:00\.0005\+00"/,
	qr/DETAIL:  The epoch must be a whole number of milliseconds\./);

# (An epoch ahead of the clock does not stop the server: 019_clock_before_epoch.pl.)

# Width values that are not integers, or out of their own range: PostgreSQL
# would WARN and use the default width; snowflake must refuse instead.  The
# node id too.  PostgreSQL rounds 11.6 to 12 for an ordinary integer
# setting; for a width that decides every ID, a value that is not an integer
# must stop the server like any other invalid one (the decoders of a server
# without the preload already reject it).
foreach my $case (
	[ 'node_bits not an integer', node_bits => 'ten' ],
	[ 'sequence_bits not an integer', sequence_bits => '12 bits' ],
	[ 'timestamp_bits below its minimum', timestamp_bits => '20' ],
	[ 'sequence_bits above its maximum', sequence_bits => '40' ],
	[ 'node_id not an integer', node_id => 'one' ],
	[ 'node_id below -1', node_id => '-2' ],
	[ 'sequence_bits with a fraction', sequence_bits => '11.6' ])
{
	my ($name, $setting, $value) = @$case;
	start_fails(
		$name,
		{ 'snowflake.node_id' => '1', "snowflake.$setting" => $value },
		qr/FATAL:  invalid value for parameter "snowflake\.$setting": "\Q$value\E"/);
}

# The same data directory starts with a valid layout: the failures above
# were the settings', and the edge of each range is accepted.
write_layout(
	'snowflake.node_id' => '7',
	'snowflake.timestamp_bits' => '41',
	'snowflake.node_bits' => '3',
	'snowflake.sequence_bits' => '19',
	'snowflake.epoch' => '2000-01-01');
$node->start;
pass('the server starts with a valid layout (41/3/19, node_id 7 = 2^3 - 1)');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $node->safe_psql(
		'postgres',
		'SELECT snowflake_node_id(snowflake_nextval()), status, timestamp_bits, node_bits, sequence_bits FROM snowflake_stats'
	),
	'7|ready|41|3|19',
	'it generates IDs with the configured layout');
$node->stop;

# The full 63 bits may be used.
write_layout(
	'snowflake.node_id' => '0',
	'snowflake.timestamp_bits' => '42',
	'snowflake.node_bits' => '10',
	'snowflake.sequence_bits' => '11');
my $started = $node->start(fail_ok => 1);
ok($started, 'a layout of exactly 63 bits (42/10/11) starts');
$node->stop if $started;

done_testing();
