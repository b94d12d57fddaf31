# Copyright: see LICENSE
#
# 015_state_file_faults.pl
#	A state file that is corrupt, unreadable, or cannot be written.
#
# The state file carries the reservation that keeps IDs unique across
# restarts.  When it cannot be trusted or made durable, the server must
# still start and decode, but generation fails with an error that gives the
# operating system's reason, and nothing is issued:
#  - garbage, or a single flipped bit, in the file: "corrupt";
#  - for each of these, the startup log has a WARNING naming the file and
#    what is wrong, before any call;
#  - the file unreadable: "Permission denied";
#  - the reservation cannot be written (its temporary file's path is taken
#    by a directory): "Is a directory"; generation resumes by itself once
#    the obstacle is removed.
# A refused server must not overwrite the file at shutdown.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node('state_file_faults', node_id => 7);
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000);
});

my $state_file = $node->data_dir . '/snowflake.state';
my $tmp_path = $node->data_dir . '/snowflake.state.tmp';

# Check that the refused server issues nothing, for single IDs, batches and
# inserts, and that it decodes.  $what names the fault.
sub refused_cleanly
{
	my ($what, $message_re, $expect_sqlstate) = @_;
	my $count = $node->safe_psql('postgres', 'SELECT count(*) FROM ids');
	my $max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');

	my ($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_nextval()');
	is($sqlstate, $expect_sqlstate, "$what: snowflake_nextval() fails with $expect_sqlstate");
	like($stderr, $message_re, "$what: the error says why");
	($sqlstate) = sql_error($node, 'SELECT count(*) FROM snowflake_nextval_batch(10)');
	is($sqlstate, $expect_sqlstate, "$what: snowflake_nextval_batch() fails too");
	($sqlstate) = sql_error($node,
		'INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 10)');
	is($sqlstate, $expect_sqlstate, "$what: an INSERT fails too");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
		$count, "$what: no row inserted");

	my $st = stats($node);
	is($st->{status}, 'state file unusable', "$what: snowflake_stats status");
	is($st->{ids_issued}, 0, "$what: nothing issued");
	is($st->{refused}, 3, "$what: three refused calls counted");
	is($node->safe_psql('postgres', "SELECT snowflake_node_id($max)"),
		'7', "$what: decoding works");
	return;
}

# Start on a state file that cannot be used: the startup log says so (a
# WARNING naming the file and what is wrong), before any call.  Without the
# preload the shared state is loaded by the first call, which logs it then.
sub start_and_check_warning
{
	my ($what, $message_re) = @_;
	my $offset = -s $node->logfile;
	$node->start;
	$node->safe_psql('postgres', 'SELECT count(*) FROM snowflake_stats') if no_preload();
	ok($node->log_contains(qr/WARNING:\s+(?:\w+: )?$message_re/, $offset),
		"$what: the startup log says why, naming the file");
	return;
}

# Restart with a good state file; generation must resume above every ID
# issued so far.
sub resumes_above
{
	my ($what) = @_;
	my $max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
	is(insert_ids_above($node, 'ids', $max),
		'1000|t',
		"$what: generation resumes above every ID issued before");
	return;
}

$node->stop;
my $good = read_raw($state_file);

# --- garbage in the state file ---

my $garbage = "this is not a snowflake state file\n";
write_raw($state_file, $garbage);
start_and_check_warning('garbage',
	qr/file "snowflake.state" is corrupt \(wrong size\)/);
refused_cleanly('garbage',
	qr/ERROR:\s+XX001: file "snowflake.state" is corrupt \(wrong size\)/, 'XX001');
$node->stop;
is(read_raw($state_file), $garbage,
	'garbage: the refused server left the file as it was');

# --- one bit flipped in the middle of a real state file ---

my $flipped = $good;
my $at = int(length($flipped) / 2);
substr($flipped, $at, 1) = chr(ord(substr($flipped, $at, 1)) ^ 1);
write_raw($state_file, $flipped);
start_and_check_warning('flipped bit',
	qr/file "snowflake.state" is corrupt \(checksum mismatch\)/);
refused_cleanly('flipped bit',
	qr/ERROR:\s+XX001: file "snowflake.state" is corrupt \(checksum mismatch\)/,
	'XX001');
$node->stop;
is(read_raw($state_file), $flipped,
	'flipped bit: the refused server left the file as it was');

write_raw($state_file, $good);
$node->start;
is(stats($node)->{status}, 'ready', 'good file restored: generator ready');
resumes_above('good file restored');
$node->stop;

# --- the state file unreadable ---

chmod(0000, $state_file) or die "chmod failed: $!";
start_and_check_warning('unreadable',
	qr/could not open file "snowflake.state": Permission denied/);
refused_cleanly('unreadable',
	qr/ERROR:\s+42501: could not open file "snowflake.state": Permission denied/,
	'42501');
$node->stop;
is((stat($state_file))[2] & 07777, 0, 'unreadable: the file was left alone');
chmod(0600, $state_file) or die "chmod failed: $!";
$node->start;
is(stats($node)->{status}, 'ready', 'permissions restored: generator ready');
resumes_above('permissions restored');

# --- the reservation cannot be written ---

# A directory where the temporary file must be created makes every write of
# the state file fail.  IDs within the reservation already written may still
# be issued, so wait (a bounded poll) until the clock has passed it: the
# next ID needs a new reservation.
mkdir($tmp_path) or die "could not create directory $tmp_path: $!";
ok( $node->poll_query_until('postgres',
		'SELECT clock_timestamp() > reserved_until FROM snowflake_stats'),
	'the clock passed the reservation');
my $st = stats($node);
my $count = $node->safe_psql('postgres', 'SELECT count(*) FROM ids');
my ($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_nextval()');
# errcode_for_file_access() maps EISDIR to 42809 (wrong object type).
is($sqlstate, '42809', 'unwritable: snowflake_nextval() fails');
like(
	$stderr,
	qr/could not create file "snowflake.state.tmp": Is a directory/,
	'unwritable: the error gives the operating system\'s reason');
like(
	$stderr,
	qr/DETAIL:\s+The snowflake reservation could not be made durable, so no ID was issued\./,
	'unwritable: the detail says no ID was issued');
($sqlstate) = sql_error($node, 'SELECT count(*) FROM snowflake_nextval_batch(10)');
is($sqlstate, '42809', 'unwritable: snowflake_nextval_batch() fails too');
($sqlstate) = sql_error($node,
	'INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 10)');
is($sqlstate, '42809', 'unwritable: an INSERT fails too');
is($node->safe_psql('postgres', 'SELECT count(*) FROM ids'),
	$count, 'unwritable: no row inserted');
my $st2 = stats($node);
is($st2->{ids_issued}, $st->{ids_issued}, 'unwritable: nothing issued');
is($st2->{reservation_writes}, $st->{reservation_writes},
	'unwritable: no reservation write counted');
is($st2->{reserved_until}, $st->{reserved_until},
	'unwritable: the reservation did not move');
is($st2->{refused}, $st->{refused} + 3, 'unwritable: three refused calls counted');
is($st2->{status}, 'ready', 'unwritable: the generator itself stays ready');

# The obstacle removed: generation resumes without a restart.
rmdir($tmp_path) or die "could not remove directory $tmp_path: $!";
resumes_above('directory removed');
is( $node->safe_psql(
		'postgres', q{
SELECT bool_and(x > prev) FROM (
	SELECT x, lag(x) OVER (ORDER BY i) AS prev
	FROM (SELECT i, snowflake_nextval() AS x FROM generate_series(1, 1000) i) s) t}),
	't',
	'directory removed: IDs strictly increase');

# A clean shutdown that cannot record the last ID logs why, and the next
# start still resumes above everything, from the reservation on disk.
# Without the preload nothing runs at shutdown: nothing is written, nothing
# logged, and the next start resumes from the reservation all the same.
mkdir($tmp_path) or die "could not create directory $tmp_path: $!";
my $log_offset = -s $node->logfile;
$node->stop;
if (no_preload())
{
	ok(!$node->log_contains(qr/snowflake\.state\.tmp/, $log_offset),
		'without the preload, no write is tried at shutdown');
}
else
{
	ok( $node->log_contains(
			qr/LOG:\s+could not create file "snowflake.state.tmp": Is a directory/,
			$log_offset),
		'a failed write at shutdown is logged');
}
rmdir($tmp_path) or die "could not remove directory $tmp_path: $!";
$node->start;
resumes_above('after a shutdown that could not write');

$node->stop;
done_testing();
