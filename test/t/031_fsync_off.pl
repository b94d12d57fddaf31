# Copyright: see LICENSE
#
# 031_fsync_off.pl
#	The state file is fsynced with fsync = off too.
#
# PostgreSQL's pg_fsync() does nothing with fsync = off; the reservation
# promises that IDs handed out already never come back, whatever happens to
# the server's data, so the state file and the data directory are fsynced
# all the same.  The fault shim (test/faultshim.c) makes those two fsyncs
# fail: if they were skipped, the calls would succeed.  Then, with no fault,
# generation works and the shim's slowed fsync shows it is called.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node(
	'fsync_off',
	node_id => 3,
	settings => {
		fsync => 'off',
		'snowflake.background_writer' => 'off'
	},
	with => 'shim');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is($node->safe_psql('postgres', 'SHOW fsync'), 'off', 'the server runs with fsync = off');

foreach my $case (
	[ 'fsync EIO', 'could not fsync file "snowflake.state.tmp": Input/output error' ],
	[ 'dirfsync EIO', 'could not fsync the data directory: Input/output error' ])
{
	my ($fault, $message) = @$case;

	# The next ID needs a reservation write once the clock has passed the
	# one written (none at the first call).
	ok( $node->poll_query_until('postgres',
			'SELECT reserved_until IS NULL OR clock_timestamp() > reserved_until FROM snowflake_stats'),
		"$fault: the clock passed the reservation");
	my $issued = stats($node)->{ids_issued};
	set_fault($fault);
	my ($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_nextval()');
	is($sqlstate, '58030', "$fault with fsync = off: snowflake_nextval() fails with 58030");
	like($stderr, qr/ERROR:  58030: \Q$message\E$/m,
		"$fault with fsync = off: the fsync was made, and its failure reported");
	is(stats($node)->{ids_issued}, $issued, "$fault: nothing was issued");
	set_fault();
	is($node->safe_psql('postgres', 'SELECT snowflake_nextval() > 0'),
		't', "$fault cleared: generation resumes");
}

done_testing();
