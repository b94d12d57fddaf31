# Copyright: see LICENSE
#
# 034_settings_file.pl
#	PostgreSQL 17 and later, without the preload: the file of the server's
#	life, "snowflake.settings", never stands between a query and its
#	decoders, and it has a format of its own.
#
# Without the preload, the first process of a server life that calls a
# snowflake function fixes the node id, span and layout in force and
# records them in snowflake.settings, so that a crash re-initialisation
# keeps them (test/t/029_no_preload.pl).  With the disk full (the fault
# shim, test/faultshim.c, fails that write and the state file's):
#  - every pure decoder works, with the server's layout and with an
#    explicit one, in a query, through an expression index, in a partition
#    key, in partition bounds and in an index built then; the log says why
#    the file was not written;
#  - generation is refused with the write's error (53100, nothing issued),
#    and snowflake_stats says so;
#  - once the disk has room, generation resumes without a restart, and the
#    file records this life.
# The file's format: magic, format version, fixed-width fields one by one
# and a CRC-32C (checked here byte by byte).  A file that cannot be used
# (a flipped bit, truncated, a newer format version, the unversioned
# format of earlier 1.2 builds, another file) is logged with why, and
# replaced by the values of the server configuration at the next crash
# re-initialisation; an intact one keeps the values of the server's start.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node(
	'settings_file',
	preload => 0,
	include => [ 'snowflake_node.conf', 'snowflake.node_id' => 5 ],
	settings => { restart_after_crash => 'on' },
	start => 0);
if ($node->pg_version < 17)
{
	# test/check.sh accepts a skip that says "need PostgreSQL N or later".
	plan skip_all =>
	  'the settings file belongs to the mode without the preload: need PostgreSQL 17 or later';
}
SnowflakeTest::start_with_shim($node);

my $settings_path = $node->data_dir . '/snowflake.settings';

# The fields of the settings file (src/statefile.h), in the machine's byte
# order, no padding: 52 bytes.
my @fields = qw(magic version pid start_time epoch_ms timestamp_bits
  node_bits sequence_bits node_id node_id_span crc);
my $format = 'L L l q q l l l l l L';

# The settings file parsed, with its checksum checked: a hash, or a reason.
sub read_settings
{
	my $data = read_raw($settings_path);
	return 'length ' . length($data) unless length($data) == 52;
	my %f;
	@f{@fields} = unpack($format, $data);
	return 'bad checksum' unless $f{crc} == crc32c(substr($data, 0, 48));
	return \%f;
}

# What the settings file must record for the server's current life.
sub life_of_server
{
	my ($node_id) = @_;
	open my $fh, '<', $node->data_dir . '/postmaster.pid' or die $!;
	my $pid = <$fh>;
	close $fh;
	chomp $pid;
	my $start = $node->safe_psql('postgres',
		q{SELECT ((extract(epoch FROM pg_postmaster_start_time()) - 946684800) * 1000000)::bigint});
	return {
		magic => 0x534E4653,
		version => 1,
		pid => $pid,
		start_time => $start,
		epoch_ms => 1704067200000,
		timestamp_bits => 41,
		node_bits => 10,
		sequence_bits => 12,
		node_id => $node_id,
		node_id_span => 1
	};
}

sub settings_are
{
	my ($node_id, $what) = @_;
	my $f = read_settings();
	my $want = life_of_server($node_id);
	$want->{crc} = $f->{crc} if ref $f;
	is_deeply($f, $want, $what);
	return;
}

# ---------------------------------------------------------------------------
# A first life: the file, tables whose indexes, partition keys and bounds
# decode IDs.
# ---------------------------------------------------------------------------

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int);
CREATE INDEX t_ts ON t (snowflake_timestamp(id));
CREATE TABLE p (id bigint NOT NULL) PARTITION BY LIST (snowflake_node_id(id));
CREATE TABLE p5 PARTITION OF p FOR VALUES IN (5);
CREATE TABLE r (id bigint NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE r_old PARTITION OF r
  FOR VALUES FROM (snowflake_min_id('2024-01-01')) TO (snowflake_min_id('2080-01-01'));
INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g;
INSERT INTO p SELECT id FROM t;
INSERT INTO r SELECT id FROM t;
});
my $max = $node->safe_psql('postgres', 'SELECT max(id) FROM t');
settings_are(5, 'the first life: the settings file, field by field, checksum included');
my $first_life = read_settings();

# ---------------------------------------------------------------------------
# The disk is full at the first use of the next life.
# ---------------------------------------------------------------------------

$node->stop;
set_fault('settings_write ENOSPC', 'write ENOSPC');
SnowflakeTest::start_with_shim($node);
my $log_offset = -s $node->logfile;

my $enospc = 'could not write file "snowflake.settings.tmp": No space left on device';
is( $node->safe_psql(
		'postgres', qq{
SELECT snowflake_node_id($max), snowflake_sequence($max) >= 0,
       snowflake_timestamp($max) = (snowflake_decode($max)).ts,
       snowflake_min_id(snowflake_timestamp($max)) <= $max,
       snowflake_max_id(snowflake_timestamp($max)) >= $max,
       snowflake_compose(snowflake_timestamp($max), 5, snowflake_sequence($max)) = $max}),
	'5|t|t|t|t|t',
	'disk full: the decoders, bounds and compose of the server\'s layout work');
ok( log_appears(
		$node,
		qr/LOG:  \Q$enospc\E\n[^\n]*DETAIL:  The snowflake node id and layout in force are recorded there for the life of the server\. Decoding works; generating IDs is refused until the file is written, which each call that generates tries again\./,
		$log_offset),
	'the log says the settings file could not be written, and what that means');
is( $node->safe_psql(
		'postgres', q{
SELECT snowflake_node_id(snowflake_compose('2024-06-01', 3, 1, 'twitter'), 'twitter'),
       (snowflake_decode(snowflake_compose('2024-06-01', 3, 1, 'twitter'), 'twitter')).sequence,
       snowflake_min_id('2024-06-01', 'twitter') < snowflake_max_id('2024-06-01', 'twitter')}),
	'3|1|t',
	'and those of an explicit layout');
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE snowflake_timestamp(id) >= '2024-01-01'}) =~
	  /t_ts/ ? 'index' : 'no index',
	'index',
	'a query on the decoded time is planned on the expression index');
is( $node->safe_psql(
		'postgres', q{
SET enable_seqscan = off;
SELECT count(*) FROM t WHERE snowflake_timestamp(id) >= '2024-01-01'}),
	'1000',
	'and runs');
$node->safe_psql(
	'postgres', q{
INSERT INTO t (id, v) VALUES (snowflake_compose('2024-06-01', 5, 0), 0);
INSERT INTO p VALUES (snowflake_compose('2024-06-01', 5, 0));
INSERT INTO r VALUES (snowflake_compose('2024-06-01', 5, 0));
CREATE TABLE r_new PARTITION OF r
  FOR VALUES FROM (snowflake_min_id('2080-01-01')) TO (snowflake_max_id('2090-01-01'));
CREATE INDEX t_node ON t (snowflake_node_id(id));
});
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM p5), (SELECT count(*) FROM r_old),
       (SELECT count(*) FROM t WHERE snowflake_node_id(id) = 5)}),
	'1001|1001|1001',
	'rows go through the expression indexes, the partition key and the bounds; a partition and an index are created');
is_deeply(read_settings(), $first_life,
	'the settings file is still the first life\'s');

# Generation is refused, with the write's error, and issues nothing.
my $count = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
is( error_report($node, 'SELECT snowflake_nextval()'),
	"53100: $enospc\n"
	  . 'DETAIL:  Without the preload, the node id and layout in force are recorded there for the life of the server before IDs are generated, so no ID was issued. Decoding is not affected.',
	'snowflake_nextval() is refused with the write\'s error (53100)');
my ($sqlstate) =
  sql_error($node, 'SELECT count(*) FROM snowflake_nextval_batch(10)');
is($sqlstate, '53100', 'so is snowflake_nextval_batch()');
($sqlstate) = sql_error($node, 'INSERT INTO t (v) VALUES (1)');
is($sqlstate, '53100', 'and an INSERT that needs a key');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'),
	$count, 'no row was inserted');
my $st = stats($node);
is("$st->{status}|$st->{ids_issued}|$st->{refused}",
	'settings file not written|0|3',
	'snowflake_stats: the status says why, nothing issued, three calls refused');

# Room for the small settings file, not yet for the state file: the next
# call writes the settings, then fails on the reservation (once the clock
# has passed the one on disk, a bounded poll).
ok( $node->poll_query_until('postgres',
		'SELECT clock_timestamp() > reserved_until FROM snowflake_stats'),
	'the clock passed the reservation');
set_fault('write ENOSPC');
($sqlstate, my $stderr) = sql_error($node, 'SELECT snowflake_nextval()');
is($sqlstate, '53100', 'settings writable, state file not: still refused');
like($stderr,
	qr/could not write file "snowflake\.state\.tmp": No space left on device/,
	'now by the reservation\'s write');
settings_are(5, 'but the settings file records this life');
is(stats($node)->{status}, 'ready', 'and the status is ready again');

set_fault();
is(insert_ids_above($node, 't', $max), '1000|t',
	'the disk has room: IDs without a restart, above every earlier one');

# ---------------------------------------------------------------------------
# A file that cannot be used is replaced at the next crash
# re-initialisation, with the configuration's values; the log says why.
# ---------------------------------------------------------------------------

# Crash the server (a backend killed with SIGKILL) and wait for it to come
# back; returns the log offset from before the crash.
sub crash
{
	my $victim = $node->background_psql('postgres');
	my $victim_pid = query_value($victim, 'SELECT pg_backend_pid()');
	my $offset = -s $node->logfile;
	kill('KILL', $victim_pid) or die "could not kill $victim_pid";
	log_appears($node, qr/all server processes terminated; reinitializing/,
		$offset)
	  or die 'the server did not re-initialise';
	eval { $victim->quit };
	$node->poll_query_until('postgres', 'SELECT true')
	  or die 'the server did not come back';
	return $offset;
}

# The node id in force (the stats load the state file, which a crash
# re-initialisation makes write the floor: the disk has room).
sub node_in_force
{
	return $node->safe_psql('postgres', 'SELECT node_id FROM snowflake_stats');
}

my $ignored = qr/LOG:  ignoring snowflake settings file "snowflake\.settings"\n[^\n]*DETAIL:  /;
my $taken =
  ' The node id, span and layout are taken from the server configuration, and the file is written again.';

# An intact file keeps the values of the server's start.
write_conf_file($node, 'snowflake_node.conf', 'snowflake.node_id' => 6);
$node->reload;
$node->poll_query_until('postgres',
	"SELECT current_setting('snowflake.node_id', true) = '6'")
  or die 'timed out waiting for the reload';
$log_offset = crash();
is(node_in_force(), '5', 'intact file: the node id of the server start stays after a crash');
ok(!$node->log_contains(qr/ignoring snowflake settings file/, $log_offset),
	'intact file: nothing is ignored');

my @cases = (
	[
		'a flipped bit',
		sub {
			my $d = shift;
			substr($d, 40, 1) = chr(ord(substr($d, 40, 1)) ^ 1);
			return $d;
		},
		'Its checksum does not match its contents.'
	],
	[
		'a truncated file', sub { return substr(shift, 0, 20) },
		'It is truncated: 20 bytes long instead of 52.'
	],
	[
		'a newer format version',
		sub {
			my $d = shift;
			substr($d, 4, 4) = pack('L', 2);
			substr($d, 48, 4) = pack('L', crc32c(substr($d, 0, 48)));
			return $d;
		},
		'It has format version 2, written by a newer version of snowflake; this one reads format version 1.'
	],
	[
		'the format of earlier 1.2 builds',
		sub {
			my %f;
			@f{@fields} = unpack($format, shift);
			# An image of the old struct: magic "SNFL", no version, the
			# layout padded to 24 bytes, a checksum, padding.
			return pack('L l q q l l l x4 l l L x4', 0x534E464C, $f{pid},
				$f{start_time}, $f{epoch_ms}, $f{timestamp_bits},
				$f{node_bits}, $f{sequence_bits}, $f{node_id},
				$f{node_id_span}, 0);
		},
		'It has the unversioned format of builds of snowflake 1.2 made before its release.'
	],
	[
		'another file', sub { return "node_id = 5\n" },
		'It does not start with the magic number of a snowflake settings file.'
	]);

my $next_id = 7;
foreach my $case (@cases)
{
	my ($what, $mangle, $why) = @$case;
	write_conf_file($node, 'snowflake_node.conf', 'snowflake.node_id' => $next_id);
	$node->reload;
	$node->poll_query_until('postgres',
		"SELECT current_setting('snowflake.node_id', true) = '$next_id'")
	  or die 'timed out waiting for the reload';
	write_raw($settings_path, $mangle->(read_raw($settings_path)));
	$log_offset = crash();
	is(node_in_force(), $next_id,
		"$what: after a crash, the configuration's node id is in force");
	ok( log_appears($node, qr/$ignored\Q$why$taken\E/, $log_offset),
		"$what: the log says the file is ignored, and why");
	settings_are($next_id, "$what: the file is written again for this life");
	$next_id++;
}

is( $node->safe_psql(
		'postgres', qq{
SET snowflake.max_wait_ms = '60s';
WITH n AS (INSERT INTO t (v) SELECT 0 FROM generate_series(1, 1000) RETURNING id)
SELECT count(*), min(id) > $max FROM n}),
	'1000|t',
	'IDs keep coming, above every earlier one');

$node->stop;
done_testing();
