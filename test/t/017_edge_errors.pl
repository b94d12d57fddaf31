# Copyright: see LICENSE
#
# 017_edge_errors.pl
#	The errors at the edges of the timestamp field and of the state file
#	format, each with its SQLSTATE, and nothing issued by a failing call:
#	 - the clock before the epoch (22003);
#	 - the clock past the last millisecond the field holds (22003);
#	 - a batch that would borrow past that millisecond (22003);
#	   without the preload (lead capped at 1 s) that batch is refused as
#	   too wide for the lead (22023) instead, with the capped WARNING;
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

my $now_ms;
my ($sqlstate, $err);

# Check the error $sql raises on $node twice: its SQLSTATE (test $state_name)
# and the whole error_report() (test $report_name), equal to $report or, if
# that is a regex, matching it.
sub refuses
{
	my ($node, $sql, $want_state, $state_name, $report, $report_name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($got) = sql_error($node, $sql);
	is($got, $want_state, $state_name);
	if (ref $report eq 'Regexp')
	{
		like(error_report($node, $sql), $report, $report_name);
	}
	else
	{
		is(error_report($node, $sql), $report, $report_name);
	}
	return;
}

# ---------------------------------------------------------------------------
# The clock before the epoch.  The epoch must not be in the future at
# startup; the clock is stepped back past it afterwards.
# ---------------------------------------------------------------------------
SKIP:
{
	skip 'libfaketime missing', 1 unless faketime_available();

	# The epoch is chosen after initdb, however long that took, and the
	# clock is then set a minute before it, relative to the epoch itself.
	my $node = start_snowflake_node('before_epoch', node_id => 3, start => 0);
	my $epoch_ms = int(time() * 1000) - 20_000;
	$node->append_conf('postgresql.conf',
		"snowflake.epoch = '" . iso_ms($epoch_ms) . "'\n");
	start_faked($node);
	$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	is($node->safe_psql('postgres', 'SELECT snowflake_nextval() > 0'),
		't', 'after the epoch IDs are issued');

	set_clock(sprintf('%+.3f', ($epoch_ms - time() * 1000) / 1000 - 60));
	refuses(
		$node, 'SELECT snowflake_nextval()',
		'22003', 'with the clock before the epoch: 22003',
		qr/\A22003: current time is before the snowflake epoch\nDETAIL:  The epoch, \Q@{[iso_ms($epoch_ms)]}\E, is \d+ ms in the future\.\z/,
		'the whole message: before the epoch, and by how much');
	($sqlstate) = sql_error($node, 'SELECT count(*) FROM snowflake_nextval_batch(10)');
	is($sqlstate, '22003', 'batches too');
	my $st = stats($node);
	is($st->{ids_issued}, 1, 'nothing was issued by the failing calls');
	is($st->{refused}, 3, 'the three were counted as refused');

	set_clock('+0');
	is($node->safe_psql('postgres', 'SELECT snowflake_nextval() > 0'),
		't', 'with the clock back, generation resumes');
	$node->stop;
}

# ---------------------------------------------------------------------------
# The clock past the field: 32 timestamp bits hold 49.7 days.
# ---------------------------------------------------------------------------
$now_ms = int(time() * 1000);
my $node = start_snowflake_node(
	'field_past',
	node_id => 3,
	settings => {
		'snowflake.timestamp_bits' => 32,
		'snowflake.epoch' => iso_ms($now_ms - 60 * 86_400_000)
	});
my $field_end_ms = $now_ms - 60 * 86_400_000 + 4_294_967_295;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
refuses(
	$node, 'SELECT snowflake_nextval()',
	'22003', 'past the last millisecond of a 32-bit field: 22003',
	"22003: current time is past the last millisecond the snowflake timestamp field can hold\n"
	  . 'DETAIL:  With snowflake.timestamp_bits = 32 the last representable time is '
	  . iso_ms($field_end_ms) . '.',
	'the whole message, naming the setting and the last time');
is(stats($node)->{ids_issued}, 0, 'nothing issued');
is( $node->safe_psql(
		'postgres', 'SELECT snowflake_max_id(snowflake_timestamp(0) + interval \'1 day\') > 0'),
	't', 'decoding and bounds still work');
$node->stop;

# ---------------------------------------------------------------------------
# Borrowing past the field: the field ends 10 minutes after the epoch is
# chosen (after initdb); a batch of a million IDs at one per millisecond
# (sequence_bits 0) spans 1000 s, past the field's end whenever it starts,
# while single IDs are issued for those 10 minutes, however slow the machine.
# ---------------------------------------------------------------------------
$node = start_snowflake_node(
	'field_exhausted',
	node_id => 3,
	layout => '32/5/0',
	settings => { 'snowflake.max_drift_ms' => 3_600_000 },
	start => 0);
$now_ms = int(time() * 1000);
$node->append_conf('postgresql.conf',
	"snowflake.epoch = '" . iso_ms($now_ms - 4_294_967_295 + 600_000) . "'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
if (no_preload())
{
	# Without the preload the lead is capped at 1 s, so a batch can reach at
	# most 1 s past the clock, never a field end 10 minutes away: the
	# million is refused as too wide (22023) before the field's end matters.
	my ($state, $stderr) = sql_error($node,
		'SELECT count(*) FROM snowflake_nextval_batch(1000000)');
	like(
		$stderr,
		qr/WARNING:  (?:[0-9A-Z]{5}: )?parameter "snowflake\.max_drift_ms" is capped at 1000 ms without the preload\n(?:.*\n)*?DETAIL:  It is set to 3600000 ms\./,
		'no preload: the capped max_drift_ms is reported with a WARNING');
	refuses(
		$node, 'SELECT count(*) FROM snowflake_nextval_batch(1000000)',
		'22023', 'no preload: the batch is wider than the capped lead: 22023',
		batch_too_wide_report(1000000, 0, 1000000, 1000),
		'the whole message, with the capped lead of 1000 ms');
}
else
{
	refuses(
		$node, 'SELECT count(*) FROM snowflake_nextval_batch(1000000)',
		'22003', 'a batch borrowing past the field: 22003',
		"22003: snowflake timestamp field exhausted\n"
		  . 'DETAIL:  With snowflake.timestamp_bits = 32 no millisecond after 4294967295 can be represented.',
		'the whole message: the field is exhausted');
}
is(stats($node)->{ids_issued}, 0, 'the batch was refused whole');
is($node->safe_psql('postgres', 'SELECT snowflake_nextval() > 0'),
	't', 'single IDs are still issued while the field lasts');
$node->stop;

# ---------------------------------------------------------------------------
# Decoding what the bits say, up to timestamptz's range: with 53/0/3 the
# largest ID's time is 2^60 ms after the epoch, far past year 294276.
# ---------------------------------------------------------------------------
$node = start_snowflake_node('wide_field', node_id => 0, layout => '53/0/3');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $node->safe_psql(
		'postgres',
		"SET timezone = 'UTC'; SELECT snowflake_timestamp(8 * 1000)"),
	'2024-01-01 00:00:01+00',
	'53/0/3: 8000 is one second after the epoch');
refuses(
	$node, 'SELECT snowflake_timestamp(9223372036854775807)',
	'22008', 'a time past timestamptz range: 22008',
	"22008: timestamp out of range\n"
	  . "DETAIL:  The ID's timestamp field, 1152921504606846975 ms after the epoch, is past the largest timestamp.",
	'reported whole as "timestamp out of range", with the field\'s value');
is($node->safe_psql('postgres', 'SELECT snowflake_node_id(9223372036854775807)'),
	'0', 'the other fields still decode');
$node->stop;

# ---------------------------------------------------------------------------
# Adopting a layout that cannot hold the current time.
# ---------------------------------------------------------------------------
$node = start_snowflake_node('adopt_narrow', node_id => 3);
$node->safe_psql('postgres',
	'CREATE EXTENSION snowflake; SELECT snowflake_nextval()');
$node->stop;
$node->append_conf('postgresql.conf', "snowflake.timestamp_bits = 32\n");
$node->start;
($sqlstate) = sql_error($node, 'SELECT snowflake_nextval()');
is($sqlstate, '55000', 'a narrower field than recorded is refused');
refuses(
	$node, 'SELECT snowflake_adopt_layout()',
	'22003', 'adopting a field that cannot hold now: 22003',
	qr/\A22003: the configured snowflake layout cannot represent the current time\nDETAIL:  Generation would resume \d+ milliseconds after the configured epoch, outside the timestamp field\.\z/,
	'the whole message says why');
is($node->safe_psql('postgres', 'SELECT status FROM snowflake_stats'),
	'layout changed', 'the refusal stands');
$node->stop;

# ---------------------------------------------------------------------------
# State file format errors.
# ---------------------------------------------------------------------------
$node = start_snowflake_node('state_format', node_id => 3);
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

my $corrupt_hint =
  qr/HINT:  The state file is read at server start\. See the section "Troubleshooting" of the snowflake README before removing it and restarting the server\.\n/;
my $bad = $good;
substr($bad, 0, 4) = 'XXXX';
($sqlstate, $err) = with_state($bad);
is($sqlstate, 'XX001', 'a bad magic number: XX001');
like($err, qr/ERROR:  XX001: file "snowflake\.state" is corrupt \(bad magic number\)\n$corrupt_hint/,
	'reported whole as a bad magic number, with the hint');

$bad = $good;
substr($bad, 4, 4) = pack('L', 99);
($sqlstate, $err) = with_state($bad);
is($sqlstate, 'XX001', 'an unknown version: XX001');
like($err, qr/ERROR:  XX001: file "snowflake\.state" is corrupt \(unknown version\)\n$corrupt_hint/,
	'reported whole as an unknown version, with the hint');

unlink $state or die "could not remove $state: $!";
mkdir $state or die "could not create $state: $!";
$node->start;
($sqlstate, $err) = sql_error($node, 'SELECT snowflake_nextval()');
is( error_report($node, 'SELECT snowflake_nextval()'),
	qq{$sqlstate: could not read file "snowflake.state": Is a directory\n}
	  . 'HINT:  The state file is read at server start. Correct the cause and restart the server.',
	'a directory in its place: "could not read file", with the reason and the hint');
is($sqlstate, '42809', 'EISDIR is reported as 42809 (wrong object type)');
is($node->safe_psql('postgres', 'SELECT status FROM snowflake_stats'),
	'state file unusable', 'status says the state file is unusable');
$node->stop;
ok(-d $state, 'the refused server left the path alone at shutdown');

done_testing();
