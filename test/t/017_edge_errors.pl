# Copyright: see LICENSE
#
# 017_edge_errors.pl
#	The errors at the edges of the timestamp field and of the state file
#	format, each with its SQLSTATE, and nothing issued by a failing call:
#	 - the clock before the epoch (22003);
#	 - the clock past the last millisecond the field holds (22003);
#	 - a batch that would borrow past that millisecond (22003);
#	 - decoding an ID whose time lies past timestamptz's range (22008);
#	 - adopting a layout that cannot hold the current time (22003);
#	 - a state file that is a directory, has a bad magic number or an
#	   unknown version.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

# ISO 8601 UTC text for Unix milliseconds, as snowflake.epoch accepts it.
sub iso_ms
{
	my ($ms) = @_;
	my @t = gmtime(int($ms / 1000));
	return sprintf('%04d-%02d-%02d %02d:%02d:%02d.%03d+00',
		$t[5] + 1900, $t[4] + 1, $t[3], $t[2], $t[1], $t[0], $ms % 1000);
}

my $now_ms = int(time() * 1000);
my ($sqlstate, $err);

# ---------------------------------------------------------------------------
# The clock before the epoch.  The epoch must not be in the future at
# startup; the clock is stepped back past it afterwards.
# ---------------------------------------------------------------------------
SKIP:
{
	skip 'libfaketime missing', 1 unless faketime_available();

	my $node = new_snowflake_node('before_epoch',
		'snowflake.node_id' => 3,
		'snowflake.epoch' => iso_ms($now_ms - 20_000));
	set_clock('+0');
	start_faked($node);
	$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	is($node->safe_psql('postgres', 'SELECT snowflake_nextval() > 0'),
		't', 'after the epoch IDs are issued');

	set_clock('-120');
	($sqlstate, $err) = sql_error($node, 'SELECT snowflake_nextval()');
	is($sqlstate, '22003', 'with the clock before the epoch: 22003');
	like(
		$err,
		qr/current time is before the snowflake epoch\nDETAIL:  The epoch, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00, is \d+ ms in the future\./,
		'the message says so and by how much');
	($sqlstate) = sql_error($node, 'SELECT count(*) FROM snowflake_nextval_batch(10)');
	is($sqlstate, '22003', 'batches too');
	my $st = stats($node);
	is($st->{ids_issued}, 1, 'nothing was issued by the failing calls');
	is($st->{refused}, 2, 'both were counted as refused');

	set_clock('+0');
	is($node->safe_psql('postgres', 'SELECT snowflake_nextval() > 0'),
		't', 'with the clock back, generation resumes');
	$node->stop;
}

# ---------------------------------------------------------------------------
# The clock past the field: 32 timestamp bits hold 49.7 days.
# ---------------------------------------------------------------------------
my $node = new_snowflake_node('field_past',
	'snowflake.node_id' => 3,
	'snowflake.timestamp_bits' => 32,
	'snowflake.epoch' => iso_ms($now_ms - 60 * 86_400_000));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
($sqlstate, $err) = sql_error($node, 'SELECT snowflake_nextval()');
is($sqlstate, '22003', 'past the last millisecond of a 32-bit field: 22003');
like(
	$err,
	qr/current time is past the last millisecond the snowflake timestamp field can hold\nDETAIL:  With snowflake\.timestamp_bits = 32 the last representable time is /,
	'the message names the setting');
is(stats($node)->{ids_issued}, 0, 'nothing issued');
is( $node->safe_psql(
		'postgres', 'SELECT snowflake_max_id(snowflake_timestamp(0) + interval \'1 day\') > 0'),
	't', 'decoding and bounds still work');
$node->stop;

# ---------------------------------------------------------------------------
# Borrowing past the field: the field ends about 30 s after the server
# starts; a batch of a million IDs at 32 per millisecond spans 31.25 s.
# ---------------------------------------------------------------------------
$now_ms = int(time() * 1000);
$node = new_snowflake_node('field_exhausted',
	'snowflake.node_id' => 3,
	'snowflake.timestamp_bits' => 32,
	'snowflake.node_bits' => 5,
	'snowflake.sequence_bits' => 5,
	'snowflake.max_drift_ms' => 60_000,
	'snowflake.epoch' => iso_ms($now_ms - 4_294_967_295 + 30_000));
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
($sqlstate, $err) =
  sql_error($node, 'SELECT count(*) FROM snowflake_nextval_batch(1000000)');
is($sqlstate, '22003', 'a batch borrowing past the field: 22003');
like(
	$err,
	qr/snowflake timestamp field exhausted\nDETAIL:  With snowflake\.timestamp_bits = 32 no millisecond after 4294967295 can be represented\./,
	'the message says the field is exhausted');
is(stats($node)->{ids_issued}, 0, 'the batch was refused whole');
is($node->safe_psql('postgres', 'SELECT snowflake_nextval() > 0'),
	't', 'single IDs are still issued while the field lasts');
$node->stop;

# ---------------------------------------------------------------------------
# Decoding what the bits say, up to timestamptz's range: with 53/0/3 the
# largest ID's time is 2^60 ms after the epoch, far past year 294276.
# ---------------------------------------------------------------------------
$node = new_snowflake_node('wide_field',
	'snowflake.node_id' => 0,
	'snowflake.timestamp_bits' => 53,
	'snowflake.node_bits' => 0,
	'snowflake.sequence_bits' => 3);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $node->safe_psql(
		'postgres',
		"SET timezone = 'UTC'; SELECT snowflake_timestamp(8 * 1000)"),
	'2024-01-01 00:00:01+00',
	'53/0/3: 8000 is one second after the epoch');
($sqlstate, $err) =
  sql_error($node, 'SELECT snowflake_timestamp(9223372036854775807)');
is($sqlstate, '22008', 'a time past timestamptz range: 22008');
like($err, qr/timestamp out of range/, 'reported as "timestamp out of range"');
is($node->safe_psql('postgres', 'SELECT snowflake_node_id(9223372036854775807)'),
	'0', 'the other fields still decode');
$node->stop;

# ---------------------------------------------------------------------------
# Adopting a layout that cannot hold the current time.
# ---------------------------------------------------------------------------
$node = new_snowflake_node('adopt_narrow', 'snowflake.node_id' => 3);
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION snowflake; SELECT snowflake_nextval()');
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.timestamp_bits = 32\n");
$node->start;
($sqlstate) = sql_error($node, 'SELECT snowflake_nextval()');
is($sqlstate, '55000', 'a narrower field than recorded is refused');
($sqlstate, $err) = sql_error($node, 'SELECT snowflake_adopt_layout()');
is($sqlstate, '22003', 'adopting a field that cannot hold now: 22003');
like(
	$err,
	qr/the configured snowflake layout cannot represent the current time/,
	'the message says why');
is($node->safe_psql('postgres', 'SELECT status FROM snowflake_stats'),
	'layout changed', 'the refusal stands');
$node->stop;

# ---------------------------------------------------------------------------
# State file format errors.
# ---------------------------------------------------------------------------
$node = new_snowflake_node('state_format', 'snowflake.node_id' => 3);
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION snowflake; SELECT snowflake_nextval()');
$node->stop;
my $state = $node->data_dir . '/snowflake.state';
my $good = slurp_file($state);

# Rewrite the state file with $bytes at $offset, start, and return the
# error of a generation attempt.
sub with_state
{
	my ($data) = @_;
	open my $fh, '>:raw', $state or die "could not write $state: $!";
	print $fh $data;
	close $fh or die "could not write $state: $!";
	$node->start;
	my @r = sql_error($node, 'SELECT snowflake_nextval()');
	is(stats($node)->{ids_issued}, 0, 'nothing issued');
	$node->stop;
	return @r;
}

my $bad = $good;
substr($bad, 0, 4) = 'XXXX';
($sqlstate, $err) = with_state($bad);
is($sqlstate, 'XX001', 'a bad magic number: XX001');
like($err, qr/file "snowflake\.state" is corrupt \(bad magic number\)/,
	'reported as a bad magic number');

$bad = $good;
substr($bad, 4, 4) = pack('L', 99);
($sqlstate, $err) = with_state($bad);
is($sqlstate, 'XX001', 'an unknown version: XX001');
like($err, qr/file "snowflake\.state" is corrupt \(unknown version\)/,
	'reported as an unknown version');

unlink $state or die "could not remove $state: $!";
mkdir $state or die "could not create $state: $!";
$node->start;
($sqlstate, $err) = sql_error($node, 'SELECT snowflake_nextval()');
like($err, qr/could not read file "snowflake\.state": Is a directory/,
	'a directory in its place: "could not read file", with the reason');
is($node->safe_psql('postgres', 'SELECT status FROM snowflake_stats'),
	'state file unusable', 'status says the state file is unusable');
$node->stop;
ok(-d $state, 'the refused server left the path alone at shutdown');

done_testing();
