# Copyright: see LICENSE
#
# 034_settings_file.pl
#	PostgreSQL 17 and later, without the preload: the file of the server's
#	life, "snowflake.settings", has a format of its own.
#
# Without the preload, the first process of a server life that calls a
# snowflake function fixes the node id, span and layout in force and
# records them in snowflake.settings, so that a crash re-initialisation
# keeps them (test/t/029_no_preload.pl).
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
$node->start;

my $settings_path = $node->data_dir . '/snowflake.settings';

# CRC-32C (Castagnoli, reflected), as PostgreSQL's pg_crc32c computes it.
my @crc_table = map {
	my $c = $_;
	$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
	$c;
} 0 .. 255;

sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;
	$crc = $crc_table[ ($crc ^ $_) & 0xFF ] ^ ($crc >> 8) foreach unpack('C*', $data);
	return $crc ^ 0xFFFFFFFF;
}

sub slurp_raw
{
	my ($path) = @_;
	open my $fh, '<:raw', $path or die "could not read $path: $!";
	local $/;
	my $data = <$fh>;
	close $fh;
	return $data;
}

sub write_raw
{
	my ($path, $data) = @_;
	open my $fh, '>:raw', "$path.new" or die "could not write $path.new: $!";
	print $fh $data;
	close $fh or die "could not write $path.new: $!";
	rename("$path.new", $path) or die "could not rename to $path: $!";
	return;
}

# The fields of the settings file (src/statefile.h), in the machine's byte
# order, no padding: 52 bytes.
my @fields = qw(magic version pid start_time epoch_ms timestamp_bits
  node_bits sequence_bits node_id node_id_span crc);
my $format = 'L L l q q l l l l l L';

# The settings file parsed, with its checksum checked: a hash, or a reason.
sub read_settings
{
	my $data = slurp_raw($settings_path);
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
# The file, field by field.
# ---------------------------------------------------------------------------

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int);
INSERT INTO t (v) SELECT g FROM generate_series(1, 1000) g;
});
my $max = $node->safe_psql('postgres', 'SELECT max(id) FROM t');
settings_are(5, 'the settings file, field by field, checksum included');
my $log_offset;

# ---------------------------------------------------------------------------
# A file that cannot be used is replaced at the next crash
# re-initialisation, with the configuration's values; the log says why.
# ---------------------------------------------------------------------------

# Crash the server (a backend killed with SIGKILL) and wait for it to come
# back; returns the log offset from before the crash.
sub crash
{
	my $victim = $node->background_psql('postgres');
	my $victim_pid = $victim->query_safe('SELECT pg_backend_pid()');
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
	write_raw($settings_path, $mangle->(slurp_raw($settings_path)));
	$log_offset = crash();
	is(node_in_force(), $next_id,
		"$what: after a crash, the configuration's node id is in force");
	ok( log_appears($node, qr/$ignored\Q$why$taken\E/, $log_offset),
		"$what: the log says the file is ignored, and why");
	settings_are($next_id, "$what: the file is written again for this life");
	$next_id++;
}

is(insert_ids_above($node, 't', $max), '1000|t',
	'IDs keep coming, above every earlier one');

$node->stop;
done_testing();
